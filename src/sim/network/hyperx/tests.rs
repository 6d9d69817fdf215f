//! HyperX tests: the wiring against the definition, minimal routes, the channel-dependency
//! graphs of dimension order (acyclic) and of every minimal route (cyclic), exact zero-load
//! latency for every pair, the coordinate patterns, invariants at and past saturation, and
//! what is refused.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::super::super::tests::{
    acyclic, bfs, lone_message_with, route_dependencies, run_checking_invariants, verdict_at,
};
use super::super::super::topology::{Family, Geometry};
use super::super::super::traffic::Pattern;
use super::super::super::{SimOptions, check, simulate};
use super::super::hop::Header;
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Topology, Traffic};

fn hyperx(s: u32, l: u32, t: u32) -> Topology {
    Topology::HyperX { radix: s, dimensions: l, terminals_per_router: t, trunking: None }
}

/// The HyperX with `k` links between neighbouring routers (`None` for one, as a spec reads it).
pub(super) fn trunked(s: u32, l: u32, t: u32, k: u32) -> Topology {
    let trunking = (k != 1).then_some(k);
    Topology::HyperX { radix: s, dimensions: l, terminals_per_router: t, trunking }
}

fn scenario(topology: Topology, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario { routing, virtual_channels: v, message_length: m, ..Scenario::new(topology) }
}

fn geometry(s: u32, l: u32, t: u32) -> Geometry {
    Geometry::new(&hyperx(s, l, t)).unwrap()
}

/// Routers in which `a` and `b` (router indices) differ: the number of coordinates.
fn differing(s: u32, l: u32, a: u32, b: u32) -> u32 {
    (0..l).filter(|&d| (a / s.pow(d)) % s != (b / s.pow(d)) % s).count() as u32
}

const SIZES: [(u32, u32, u32); 6] =
    [(2, 1, 1), (4, 1, 3), (3, 2, 2), (4, 2, 1), (2, 3, 2), (3, 3, 1)];

#[test]
fn wiring_follows_the_definition() {
    for ((s, l, t), k) in SIZES.into_iter().flat_map(|size| [(size, 1), (size, 2), (size, 3)]) {
        let h = HyperX::new(s, l, t, k).unwrap();
        let nb = h.neighbors();
        let ports = h.ports();
        let routers = s.pow(l);
        let terminals = routers * t;
        assert_eq!(ports, t + l * (s - 1) * k);
        assert_eq!(h.routers(), terminals + routers);
        let at = |router: u32, port: u32| nb[(router * ports + port) as usize];
        for term in 0..terminals {
            let router = terminals + term / t;
            assert_eq!(at(term, 0), router, "T({term})");
            assert_eq!(at(router, term % t), term);
            assert!((1..ports).all(|port| at(term, port) == NO_LINK));
        }
        for r in 0..routers {
            let id = terminals + r;
            // Exactly the routers that differ in one coordinate, K times each (on consecutive
            // ports), and back as often.
            let linked: Vec<u32> = (t..ports).map(|port| at(id, port) - terminals).collect();
            let expected: BTreeSet<u32> =
                (0..routers).filter(|&o| differing(s, l, r, o) == 1).collect();
            assert_eq!(linked.iter().copied().collect::<BTreeSet<u32>>(), expected);
            assert_eq!(linked.len(), expected.len() * k as usize, "{}: K links", h.describe(id));
            for (port, &other) in (t..ports).zip(&linked) {
                assert_eq!(linked[((port - t) / k * k) as usize], other, "parallel links adjacent");
                let back: Vec<u32> =
                    (t..ports).filter(|&q| at(terminals + other, q) == id).collect();
                assert_eq!(back.len(), k as usize, "K reverse channels");
                // Port `T + (d (S - 1) + j) K + i` stays in dimension d.
                let d = (port - t) / k / (s - 1);
                assert_eq!(differing(s, 1, r / s.pow(d), other / s.pow(d)), 1);
            }
        }
        let links = nb.iter().filter(|&&to| to != NO_LINK).count() as u32;
        assert_eq!(links, 2 * terminals + routers * l * (s - 1) * k);
    }
}

#[test]
fn routes_are_minimal_and_dimension_order_takes_the_lowest_dimension_first() {
    for (s, l, t) in SIZES {
        let g = geometry(s, l, t);
        let Family::HyperX(h) = &g.family else { panic!("a HyperX") };
        let terminals = s.pow(l) * t;
        for src in 0..terminals {
            let shortest = bfs(&g, src, h.routers());
            for dest in (0..terminals).filter(|&d| d != src) {
                let hops = 2 + differing(s, l, src / t, dest / t);
                assert_eq!(g.distance(src, dest), hops, "{src}->{dest}");
                assert_eq!(shortest[dest as usize], hops, "{src}->{dest}: the minimum");
                // Walk the dimension-order route: each step reduces the distance by one, and
                // its dimensions increase.
                let (mut cur, mut last) = (src, None);
                while cur != dest {
                    let left = g.distance(cur, dest);
                    let (step, _) = g.dimension_order_step(cur, dest, 0).unwrap();
                    let mut steps = Vec::new();
                    g.minimal_steps(cur, dest, |s| steps.push(s.port));
                    assert_eq!(steps[0], step.port, "the first minimal step is DOR's");
                    let next = g.downstream(g.channel(cur, step.port));
                    let after = if next == dest { 0 } else { g.distance(next, dest) };
                    assert_eq!(after + 1, left, "{src}->{dest}");
                    if cur >= terminals && next >= terminals {
                        let d = (step.port - t) / (s - 1);
                        assert!(last.is_none_or(|p| p < d), "dimensions increase");
                        last = Some(d);
                    }
                    cur = next;
                }
            }
        }
    }
}

#[test]
fn dimension_order_is_acyclic_and_every_minimal_route_is_not() {
    for (s, l, t) in [(3, 2, 1), (4, 2, 2), (2, 3, 1), (3, 3, 1)] {
        let g = geometry(s, l, t);
        let terminals = s.pow(l) * t;
        let dor = route_dependencies(&g, terminals, false);
        assert!(acyclic(&dor), "S = {s}, L = {l}: DOR has a cycle");
        // Two dimensions in both orders close cycles: adaptive needs an escape (duato).
        let every = route_dependencies(&g, terminals, true);
        assert!(!acyclic(&every), "S = {s}, L = {l}: minimal adaptive");
    }
    // One dimension: every route is one hop between routers, nothing to close a cycle.
    let line = geometry(4, 1, 2);
    assert!(acyclic(&route_dependencies(&line, 8, true)));
}

/// Zero-load latency of a message from terminal `s` to `d != s` (module docs): the route
/// crosses `hops = 2 + H` links, `H` the coordinates in which their routers differ, and each
/// of the `hops - 1` routers after a link adds `router_delay`.
pub(super) fn zero_load_latency(scenario: &Scenario, s: u32, d: u32) -> (f64, f64) {
    let Topology::HyperX { radix, dimensions, terminals_per_router: t, .. } = scenario.topology
    else {
        panic!("a HyperX")
    };
    let hops = 2 + differing(radix, dimensions, s / t, d / t);
    let latency = hops + scenario.message_length + scenario.router_delay * (hops - 1);
    (f64::from(latency), f64::from(hops))
}

#[test]
fn zero_load_latency_is_exact_for_every_pair() {
    let cases = [
        scenario(hyperx(3, 2, 2), Routing::DimensionOrder, 1, 16),
        scenario(hyperx(4, 1, 3), Routing::Adaptive, 2, 4),
        Scenario {
            router_delay: 2,
            buffer_depth: 3,
            ejection: Ejection::Unlimited,
            ..scenario(hyperx(2, 3, 2), Routing::Duato, 3, 5)
        },
        Scenario { buffer_depth: 1, ..scenario(hyperx(3, 3, 1), Routing::DimensionOrder, 2, 1) },
        scenario(hyperx(4, 2, 1), Routing::Duato, 2, 32),
    ];
    for s in &cases {
        check(s).unwrap();
        let terminals = s.topology.nodes() as u32;
        for source in 0..terminals {
            for dest in (0..terminals).filter(|&d| d != source) {
                assert_eq!(
                    lone_message_with(s, source, dest, None),
                    zero_load_latency(s, source, dest),
                    "{source}->{dest} {s:?}"
                );
            }
        }
    }
}

#[test]
fn valiant_takes_the_detour_through_its_intermediate_router_exactly() {
    // Every pair and every intermediate router of two small networks: the route has
    // 2 + H(a, i) + H(i, b) links and the zero-load latency of that many hops.
    let cases = [
        scenario(hyperx(3, 2, 2), Routing::Valiant, 2, 4),
        Scenario { router_delay: 1, ..scenario(hyperx(2, 3, 1), Routing::Valiant, 4, 3) },
    ];
    for s in &cases {
        check(s).unwrap();
        let Topology::HyperX { radix, dimensions, terminals_per_router: t, .. } = s.topology else {
            panic!("a HyperX")
        };
        let terminals = s.topology.nodes() as u32;
        for source in 0..terminals {
            for dest in (0..terminals).filter(|&d| d != source) {
                for via in 0..radix.pow(dimensions) {
                    let hops = 2
                        + differing(radix, dimensions, source / t, via)
                        + differing(radix, dimensions, via, dest / t);
                    let latency = hops + s.message_length + s.router_delay * (hops - 1);
                    assert_eq!(
                        lone_message_with(s, source, dest, Some(via)),
                        (f64::from(latency), f64::from(hops)),
                        "{source}->{dest} via router {via}"
                    );
                }
            }
        }
    }
}

#[test]
fn valiant_s_two_phases_keep_the_dependencies_acyclic() {
    // The channels a route may hold and request next, over every pair and intermediate, each
    // channel split by phase (its VC class): no cycle. Without the phases (every hop on one
    // class) the detours close cycles.
    for (s, l, t) in [(3, 2, 1), (2, 3, 1), (4, 1, 2)] {
        let g = geometry(s, l, t);
        let Family::HyperX(hx) = &g.family else { panic!("a HyperX") };
        let sc = scenario(hyperx(s, l, t), Routing::Valiant, 2, 4);
        let router =
            super::super::super::routing::Router::new(&sc, &Geometry::check(&sc.topology).unwrap())
                .unwrap();
        let terminals = s.pow(l) * t;
        let mut by_phase: HashMap<u64, HashSet<u64>> = HashMap::new();
        let mut one_class: HashMap<u32, HashSet<u32>> = HashMap::new();
        let mut out = Vec::new();
        for src in 0..terminals {
            for dest in (0..terminals).filter(|&d| d != src) {
                for via in 0..s.pow(l) {
                    let (mut cur, mut level, mut held) = (src, 0, None::<(u32, u32)>);
                    while cur != dest {
                        let header = Header { source: src, dest, level, ties: via };
                        router.candidates(&g, cur, header, &mut out);
                        let (port, mask) = (out[0].port, out[0].mask);
                        let vc = mask.trailing_zeros();
                        let channel = g.channel(cur, port);
                        if let Some((c, v)) = held {
                            by_phase
                                .entry(u64::from(c) << 1 | u64::from(v))
                                .or_default()
                                .insert(u64::from(channel) << 1 | u64::from(vc));
                            one_class.entry(c).or_default().insert(channel);
                        }
                        level = router.after_hop(&g, cur, port, vc, level);
                        held = Some((channel, vc % 2));
                        cur = g.downstream(channel);
                    }
                }
            }
        }
        let phased: HashMap<u32, HashSet<u32>> = by_phase
            .iter()
            .map(|(&from, tos)| (from as u32, tos.iter().map(|&to| to as u32).collect()))
            .collect();
        assert!(acyclic(&phased), "S = {s}, L = {l}: Valiant's phases have a cycle");
        if l > 1 || hx.terminals_per_router() > 1 {
            assert!(!acyclic(&one_class), "S = {s}, L = {l}: detours on one class");
        }
    }
}

#[test]
fn valiant_lifts_neighbor_above_the_minimal_bound_and_costs_uniform_traffic() {
    // The flattened butterfly S = 4, L = 2, T = 4, V = 4, 4-flit buffers, M = 8, interleaved
    // ejection (`runner simulate --saturation`, docs/hyperx.md): neighbor saturates at 0.359
    // flits per terminal and cycle with valiant, above every minimal routing's 1/T = 0.25;
    // uniform traffic at 0.346, against dimension order's 0.742.
    let run = |routing, traffic, flits| {
        verdict_at(&scenario(hyperx(4, 2, 4), routing, 4, 8), traffic, flits)
    };
    assert_eq!(run(Routing::Valiant, Traffic::Neighbor, 0.32), Status::Ok);
    assert_eq!(run(Routing::DimensionOrder, Traffic::Neighbor, 0.32), Status::Saturated);
    assert_eq!(run(Routing::Valiant, Traffic::Uniform, 0.5), Status::Saturated);
    assert_eq!(run(Routing::DimensionOrder, Traffic::Uniform, 0.5), Status::Ok);
}

#[test]
fn coordinate_patterns_move_the_routers_and_keep_the_terminal_index() {
    // S = 3, L = 2, T = 2: terminal 2 r + i of router r = (x, y) = (r mod 3, r / 3).
    let g = geometry(3, 2, 2);
    let Pattern::Permutation(neighbor) = Pattern::new(&Traffic::Neighbor, &g).unwrap() else {
        panic!("a permutation")
    };
    // Terminal 1 of router (0, 0) goes to terminal 1 of router (1, 1) = router 4.
    assert_eq!(neighbor[1], 9);
    // Terminal 0 of router (2, 2) = 8 goes to terminal 0 of router (0, 0).
    assert_eq!(neighbor[16], 0);
    let Pattern::Permutation(transpose) = Pattern::new(&Traffic::Transpose, &g).unwrap() else {
        panic!("a permutation")
    };
    // Router (1, 0) = 1 to router (0, 1) = 3, terminal 1 kept.
    assert_eq!(transpose[3], 7);
    for table in [&neighbor, &transpose] {
        let mut sorted = table.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..18).collect::<Vec<u32>>(), "a permutation");
    }
}

#[test]
fn invariants_hold_under_load() {
    let cases = [
        (scenario(hyperx(4, 2, 2), Routing::DimensionOrder, 1, 16), 0.02),
        (Scenario { buffer_depth: 4, ..scenario(hyperx(3, 3, 1), Routing::Duato, 2, 8) }, 0.05),
        (
            Scenario {
                buffer_depth: 1,
                router_delay: 1,
                ..scenario(hyperx(5, 1, 2), Routing::Duato, 3, 6)
            },
            0.06,
        ),
        (
            Scenario {
                traffic: Traffic::Neighbor,
                ..scenario(hyperx(4, 2, 2), Routing::Duato, 2, 8)
            },
            0.03,
        ),
        // Trunking, UGAL and DAL.
        (scenario(trunked(4, 2, 2, 2), Routing::DimensionOrder, 1, 16), 0.04),
        (scenario(trunked(3, 2, 3, 3), Routing::Duato, 2, 8), 0.08),
        (scenario(trunked(4, 2, 2, 2), Routing::Valiant, 2, 8), 0.03),
        (scenario(hyperx(4, 2, 2), Routing::Ugal, 2, 8), 0.05),
        (
            Scenario {
                traffic: Traffic::Neighbor,
                buffer_depth: 2,
                ..scenario(trunked(4, 2, 2, 2), Routing::Ugal, 4, 8)
            },
            0.04,
        ),
        (scenario(hyperx(4, 2, 2), Routing::Dal, 3, 8), 0.05),
        (
            Scenario {
                traffic: Traffic::Neighbor,
                router_delay: 1,
                ..scenario(trunked(5, 2, 1, 2), Routing::Dal, 2, 6)
            },
            0.05,
        ),
    ];
    for (s, rate) in &cases {
        assert!(check(s).is_ok(), "{s:?}");
        let engine = run_checking_invariants(s, *rate, 11, 3_000);
        assert!(engine.delivered_total > 200, "{s:?}: only {} delivered", engine.delivered_total);
    }
}

#[test]
fn overload_saturates_and_never_deadlocks() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 20_000, ..SimOptions::default() };
    for (routing, v, k, traffic) in [
        (Routing::DimensionOrder, 1, 1, Traffic::Uniform),
        (Routing::Duato, 2, 1, Traffic::Uniform),
        (Routing::Valiant, 2, 1, Traffic::Uniform),
        (Routing::Duato, 2, 2, Traffic::Uniform),
        (Routing::Ugal, 2, 1, Traffic::Uniform),
        (Routing::Ugal, 4, 2, Traffic::Neighbor),
        (Routing::Dal, 2, 1, Traffic::Uniform),
        (Routing::Dal, 3, 1, Traffic::Neighbor),
    ] {
        let s = Scenario { traffic, ..scenario(trunked(4, 2, 4, k), routing, v, 16) };
        let m = simulate(&s, 0.2, &options, 2, None).unwrap();
        assert_eq!(m.status, Status::Saturated, "{routing:?} V = {v}: {:?}", m.detail);
        let detail = m.detail.unwrap_or_default();
        assert!(!detail.contains("deadlock"), "{routing:?}: {detail}");
        // Held at several times saturation for 6,000 cycles, the network keeps delivering.
        let mut engine = run_checking_invariants(&s, 0.2, 3, 5_000);
        let before = engine.delivered_total;
        for _ in 0..1_000 {
            engine.step();
        }
        assert!(engine.delivered_total > before + 100, "{routing:?}: stalled at {before}");
    }
}

#[test]
fn nonsense_hyperx_scenarios_are_refused() {
    let bad = [
        scenario(hyperx(1, 2, 1), Routing::DimensionOrder, 1, 16),
        scenario(hyperx(4, 0, 1), Routing::DimensionOrder, 1, 16),
        scenario(hyperx(4, 2, 0), Routing::DimensionOrder, 1, 16),
        scenario(hyperx(4, 2, 2), Routing::Nbc, 4, 16),
        scenario(hyperx(4, 2, 2), Routing::UpDown, 1, 16),
        scenario(hyperx(4, 2, 2), Routing::Minimal, 2, 16),
        scenario(hyperx(4, 2, 2), Routing::Valiant, 1, 16),
        scenario(hyperx(4, 2, 2), Routing::Ugal, 1, 16),
        scenario(hyperx(4, 2, 2), Routing::Dal, 1, 16),
        Scenario { escape_channels: Some(2), ..scenario(hyperx(4, 2, 2), Routing::Dal, 2, 16) },
        Scenario { escape_channels: Some(1), ..scenario(hyperx(4, 2, 2), Routing::Ugal, 4, 16) },
        Scenario { ugal_threshold: Some(4), ..scenario(hyperx(4, 2, 2), Routing::Valiant, 4, 16) },
        Scenario {
            ugal_threshold: Some(4),
            ..scenario(hyperx(4, 2, 2), Routing::DimensionOrder, 4, 16)
        },
        scenario(Topology::Torus { radix: 4, dimensions: 2 }, Routing::Dal, 3, 16),
        scenario(trunked(4, 2, 2, 0), Routing::DimensionOrder, 1, 16),
        scenario(trunked(64, 4, 1, 64), Routing::DimensionOrder, 1, 16),
        Scenario { escape_channels: Some(1), ..scenario(hyperx(4, 2, 2), Routing::Valiant, 2, 16) },
        scenario(hyperx(4, 2, 2), Routing::WestFirst, 1, 16),
        scenario(hyperx(4, 2, 2), Routing::Duato, 1, 16),
        Scenario { traffic: Traffic::Tornado, ..scenario(hyperx(4, 2, 2), Routing::Duato, 2, 16) },
        Scenario { fault_rate: 0.05, ..scenario(hyperx(4, 2, 2), Routing::Duato, 2, 16) },
        scenario(hyperx(64, 6, 1), Routing::DimensionOrder, 1, 16),
    ];
    for s in &bad {
        let error = check(s).unwrap_err();
        assert!(!error.to_string().is_empty(), "{s:?}");
        assert!(simulate(s, 0.01, &SimOptions::default(), 1, None).is_err());
    }
    let nbc = check(&scenario(hyperx(4, 2, 2), Routing::Nbc, 4, 16)).unwrap_err();
    assert!(nbc.to_string().contains("not one"), "{nbc}");
}
