//! Slim Fly tests: the finite fields, the MMS graphs (router count, regularity, symmetry,
//! diameter 2), the wiring, exact zero-load latency for every pair and intermediate router,
//! acyclic VC-level channel dependencies, overload without deadlock, and what is refused.

use std::collections::BTreeSet;

use super::super::super::routing::Router;
use super::super::super::tests::{delivered_checking_invariants, lone_message_with, verdict_at};
use super::super::super::topology::{Family, Geometry};
use super::super::super::{Measure, SimOptions, check, simulate};
use super::*;
use crate::measurement::Status;
use crate::scenario::{Routing, Scenario, Topology, TopologyKind, Traffic};

fn slim_fly(q: u32, p: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::SlimFly { prime_power: q, terminals_per_router: p })
    }
}

const PRIME_POWERS: [u32; 9] = [3, 4, 5, 7, 8, 9, 11, 13, 16];

#[test]
fn fields_of_prime_power_order_have_a_primitive_element() {
    for q in PRIME_POWERS.into_iter().chain([2, 25, 27, 32]) {
        let f = Field::new(q).unwrap();
        assert!(f.generates(f.primitive), "q = {q}");
        for a in 0..q {
            assert_eq!(f.plus(a, 0), a);
            assert_eq!(f.times(a, 1), a);
            assert_eq!(f.plus(a, f.negative(a)), 0);
            for b in 0..q {
                assert_eq!(f.plus(a, b), f.plus(b, a));
                assert_eq!(f.times(a, b), f.times(b, a));
                if a != 0 && b != 0 {
                    assert_ne!(f.times(a, b), 0, "q = {q}: zero divisors {a} {b}");
                }
            }
        }
    }
    for q in [0, 1, 6, 10, 12, 15] {
        assert!(Field::new(q).is_none(), "q = {q}");
    }
}

/// Besta and Hoefler's Table: q = 5 is 50 routers of network radix 7, q = 7 98 of radix 11;
/// every MMS graph is k'-regular, undirected, loop-free and of diameter 2.
#[test]
fn mms_graphs_are_regular_symmetric_and_of_diameter_two() {
    assert_eq!(SlimFly::sizes(5, 4).unwrap(), (7, 50, 11));
    assert_eq!(SlimFly::sizes(7, 6).unwrap(), (11, 98, 17));
    for q in PRIME_POWERS {
        let sf = SlimFly::new(q, 1).unwrap();
        let routers = 2 * q * q;
        let degree = crate::scenario::slim_fly_network_radix(q);
        assert_eq!((sf.router_count(), sf.degree()), (routers, degree), "q = {q}");
        for r in 0..routers {
            let near = sf.neighbours(r);
            assert!(near.windows(2).all(|w| w[0] < w[1]) && !near.contains(&r), "q = {q}");
            for &n in near {
                assert!(sf.neighbours(n).contains(&r), "q = {q}: {r} -> {n} one way");
            }
            let mut reached: BTreeSet<u32> = near.iter().copied().collect();
            for &n in near {
                reached.extend(sf.neighbours(n).iter().copied());
            }
            reached.insert(r);
            assert_eq!(reached.len() as u32, routers, "q = {q}: diameter above 2 at {r}");
            for other in 0..routers {
                let expected = if other == r {
                    0
                } else if near.contains(&other) {
                    1
                } else {
                    2
                };
                assert_eq!(sf.distance(r, other), expected);
            }
        }
    }
}

#[test]
fn wiring_links_terminals_and_every_router_pair_both_ways() {
    let (q, p) = (5, 3);
    let sf = SlimFly::new(q, p).unwrap();
    let nb = sf.neighbors();
    let ports = sf.ports();
    let terminals = p * 2 * q * q;
    let at = |id: u32, port: u32| nb[(id * ports + port) as usize];
    for t in 0..terminals {
        let router = terminals + t / p;
        assert_eq!(at(t, 0), router);
        assert_eq!(at(router, t % p), t);
        assert!((1..ports).all(|port| at(t, port) == NO_LINK));
    }
    for r in 0..2 * q * q {
        let id = terminals + r;
        for port in p..ports {
            let to = at(id, port);
            assert!(to >= terminals);
            assert!((p..ports).any(|back| at(to, back) == id), "R{r} port {port}");
        }
    }
    let geometry = Geometry::new(&Topology::SlimFly { prime_power: q, terminals_per_router: p });
    assert_eq!(geometry.unwrap().nodes, terminals);
}

#[test]
fn terminals_per_router_defaults_to_the_balanced_half_of_the_network_radix() {
    for (q, p) in [(5, 4), (7, 6), (4, 3), (9, 7)] {
        let topology =
            Topology::from_counts(TopologyKind::SlimFly, |key| (key == "prime_power").then_some(q));
        assert_eq!(
            topology,
            Ok(Topology::SlimFly { prime_power: q, terminals_per_router: p }),
            "q = {q}"
        );
    }
}

/// The engine's latency of a lone message equals `hops + M + router_delay (hops - 1)` with
/// `hops = 2 + H`, `H` the router distance (or, via an intermediate router, the sum of the
/// two), for every pair and every intermediate router.
#[test]
fn zero_load_latency_is_exact_for_every_pair_and_intermediate_router() {
    for (s, vias) in [
        (slim_fly(3, 2, Routing::Minimal, 2, 4), false),
        (Scenario { router_delay: 2, ..slim_fly(4, 1, Routing::Minimal, 3, 5) }, false),
        (Scenario { router_delay: 1, ..slim_fly(3, 1, Routing::Valiant, 4, 3) }, true),
    ] {
        let Topology::SlimFly { prime_power: q, terminals_per_router: p } = s.topology else {
            panic!("a Slim Fly")
        };
        let sf = SlimFly::new(q, p).unwrap();
        let n = 2 * q * q * p;
        for source in 0..n {
            for dest in (0..n).filter(|&d| d != source) {
                let (a, b) = (source / p, dest / p);
                let intermediates: Vec<Option<u32>> =
                    if vias { (0..2 * q * q).map(Some).collect() } else { vec![None] };
                for via in intermediates {
                    let h = match via {
                        Some(i) => sf.distance(a, i) + sf.distance(i, b),
                        None => sf.distance(a, b),
                    };
                    let hops = 2 + h;
                    let (latency, measured) = lone_message_with(&s, source, dest, via);
                    assert_eq!(measured, f64::from(hops), "{source}->{dest} via {via:?}");
                    let zero = hops + s.message_length + s.router_delay * (hops - 1);
                    assert_eq!(latency, f64::from(zero), "{source}->{dest} via {via:?}");
                }
            }
        }
    }
}

/// Every VC-level channel dependency a routing can create, over every pair of terminals,
/// every intermediate router and every minimal port; with `classes` false, of physical
/// channels.
fn dependencies(s: &Scenario, classes: bool) -> Vec<(u32, u32)> {
    let g = Geometry::new(&s.topology).unwrap();
    let r = Router::new(s, &g.size).unwrap();
    let Family::SlimFly(sf) = &g.family else { panic!("a Slim Fly") };
    let v = s.virtual_channels;
    let id = |channel: u32, vc: u32| if classes { channel * v + vc } else { channel };
    let valiant = s.routing == Routing::Valiant;
    let mut edges = BTreeSet::new();
    let mut out = Vec::new();
    for source in 0..g.nodes {
        for dest in (0..g.nodes).filter(|&d| d != source) {
            let vias: Vec<u32> = if valiant { (0..sf.router_count()).collect() } else { vec![0] };
            for via in vias {
                let mut stack = vec![(source, 0u32, None::<(u32, u64)>, 0u32)];
                while let Some((cur, level, held, steps)) = stack.pop() {
                    if cur == dest {
                        continue;
                    }
                    assert!(steps < 6, "{source}->{dest} via {via}: route too long");
                    r.candidates(&g, cur, Header { source, dest, level, ties: via }, &mut out);
                    assert!(!out.is_empty());
                    for c in out.clone() {
                        assert_ne!(c.mask, 0);
                        let channel = g.channel(cur, c.port);
                        if let Some((from, mask)) = held {
                            for a in (0..v).filter(|i| mask >> i & 1 == 1) {
                                for b in (0..v).filter(|i| c.mask >> i & 1 == 1) {
                                    edges.insert((id(from, a), id(channel, b)));
                                }
                            }
                        }
                        let next = r.after_hop(&g, cur, c.port, c.mask.trailing_zeros(), level);
                        stack.push((
                            g.downstream(channel),
                            next,
                            Some((channel, c.mask)),
                            steps + 1,
                        ));
                    }
                }
            }
        }
    }
    edges.into_iter().collect()
}

/// Deadlock freedom by construction: with a VC class per hop taken, the channel-dependency
/// graphs of minimal and Valiant routing are acyclic; the physical channels' are cyclic (so
/// the check can fail).
#[test]
fn hop_classes_leave_no_cycle_of_channel_dependencies() {
    for (q, routing, v) in
        [(3, Routing::Minimal, 2), (4, Routing::Minimal, 2), (3, Routing::Valiant, 4)]
    {
        let s = slim_fly(q, 1, routing, v, 4);
        let cyclic = |edges: &[(u32, u32)]| {
            let graph = petgraph::graph::DiGraph::<(), ()>::from_edges(edges);
            petgraph::algo::is_cyclic_directed(&graph)
        };
        let edges = dependencies(&s, true);
        assert!(!edges.is_empty());
        assert!(!cyclic(&edges), "{routing:?} q = {q}: a cycle with the hop classes");
        assert!(cyclic(&dependencies(&s, false)), "{routing:?} q = {q}: no physical cycle");
    }
}

/// Past saturation, in throughput mode, the watchdog never fires, and below it the engine's
/// invariants hold (every flit delivered once).
#[test]
fn overload_never_deadlocks() {
    let options = SimOptions {
        warmup_cycles: 1_000,
        cycles: 5_000,
        deadlock_cycles: 2_000,
        measure: Measure::Throughput { source_queue_capacity: 8 },
        ..SimOptions::default()
    };
    for (routing, v) in [(Routing::Minimal, 2), (Routing::Valiant, 4)] {
        let s = Scenario { buffer_depth: 2, ..slim_fly(3, 3, routing, v, 8) };
        let m = simulate(&s, 0.5, &options, 7, None).unwrap();
        assert_eq!(m.status, Status::Saturated, "{routing:?}: {:?}", m.detail);
        let s = slim_fly(5, 4, routing, v, 4);
        let delivered = delivered_checking_invariants(&s, 0.1, 3_000, 101);
        assert!(delivered > 1_000, "{routing:?}");
    }
}

/// Under uniform traffic minimal routing accepts close to the balanced network's bound and
/// Valiant, which sends every message over up to four router hops, about half of it (on q = 5
/// with the balanced p = 4, V = 8, 8-flit buffers: 0.83 against 0.40 flits per terminal and
/// cycle). The bound: a terminal's flits cross 1.86 router links on average (7 routers at
/// distance 1, 42 at 2), `p = 4` terminals share `k' = 7` links, so at most 7 / (4 x 1.86) =
/// 0.94.
#[test]
fn minimal_nears_the_uniform_bound_and_valiant_costs_half() {
    let options = SimOptions {
        warmup_cycles: 1_500,
        cycles: 4_000,
        measure: Measure::Throughput { source_queue_capacity: 8 },
        ..SimOptions::default()
    };
    let accepted = |routing| {
        let s = Scenario {
            buffer_depth: 8,
            ejection: crate::scenario::Ejection::Interleaved,
            ..slim_fly(5, 4, routing, 8, 4)
        };
        simulate(&s, 0.25, &options, 3, None).unwrap().throughput.unwrap() * 4.0
    };
    let (minimal, valiant) = (accepted(Routing::Minimal), accepted(Routing::Valiant));
    assert!(minimal > 0.75 && minimal < 0.94, "MIN {minimal}");
    assert!(valiant > 0.3 && valiant < 0.6 * minimal, "MIN {minimal}, VAL {valiant}");
}

/// `worst_case`: router (s, a, b) sends to (s, a + 1, b), a permutation of the routers at
/// distance 2 with exactly one common neighbour each; over those unique minimal paths the
/// busiest link carries two routers' traffic (and none more), the `1/(2p)` bound.
#[test]
fn worst_case_pairs_routers_at_distance_two_with_two_on_the_busiest_link() {
    for q in [3, 4, 5, 7, 8, 9] {
        let sf = SlimFly::new(q, 1).unwrap();
        let next = sf.column_shift();
        let distinct: BTreeSet<u32> = next.iter().copied().collect();
        assert_eq!(distinct.len() as u32, 2 * q * q, "q = {q}: not a permutation");
        let mut load = std::collections::HashMap::<(u32, u32), u32>::new();
        for (r, &d) in next.iter().enumerate() {
            let r = r as u32;
            assert_eq!(sf.distance(r, d), 2, "q = {q}: {r} -> {d}");
            let mut middle = Vec::new();
            sf.minimal_ports(r, d, |port| middle.push(sf.neighbours(r)[(port - 1) as usize]));
            assert_eq!(middle.len(), 1, "q = {q}: {r} -> {d} through {middle:?}");
            *load.entry((r, middle[0])).or_default() += 1;
            *load.entry((middle[0], d)).or_default() += 1;
        }
        assert_eq!(load.values().max(), Some(&2), "q = {q}");
    }
}

/// Router flows on each directed link under minimal routing, for the router map `next`
/// (every terminal of `r` sends to router `next[r]`), each flow split evenly over its minimal
/// paths; and the routers whose flow crosses a link carrying two flows or more.
fn minimal_link_loads(sf: &SlimFly, next: &[u32]) -> (f64, usize) {
    let mut load = std::collections::HashMap::<(u32, u32), f64>::new();
    let mut paths: Vec<Vec<(u32, u32)>> = Vec::new();
    for (r, &d) in next.iter().enumerate() {
        let r = r as u32;
        let mut middle = Vec::new();
        sf.minimal_ports(r, d, |port| middle.push(sf.neighbours(r)[(port - sf.p) as usize]));
        let share = 1.0 / middle.len() as f64;
        let mut links = Vec::new();
        for &m in &middle {
            if m == d {
                links.push((r, d));
            } else {
                links.extend([(r, m), (m, d)]);
            }
        }
        for &link in &links {
            *load.entry(link).or_default() += share;
        }
        paths.push(links);
    }
    let busiest = load.values().copied().fold(0.0, f64::max);
    let held = paths.iter().filter(|links| links.iter().any(|l| load[l] >= 2.0 - 1e-9)).count();
    (busiest, held)
}

/// The worst case of the ROSS/CODES Slim Fly model (Wolfe et al., built on Besta and Hoefler's
/// networks), in this module's MMS coordinates: columns `a = 2m` and `2m + 1` of each subgraph
/// swap routers `(s, a, b)`, and with `q` odd the last column pairs across the subgraphs,
/// `(0, q - 1, b)` with `(1, q - 1, b)`. No router permutation can load a link with more than
/// two flows under minimal routing (a link `u -> v` carries `u`'s own flow and the one flow
/// that ends at `v`), so theirs and `worst_case` both reach the bound `1/(2p)`; theirs holds
/// `4q` routers to it (q = 5: 20 of 50), `worst_case` `2q`.
#[test]
fn the_codes_worst_case_reaches_the_same_bound_as_worst_case() {
    for q in [5, 7, 11, 13] {
        let sf = SlimFly::new(q, 1).unwrap();
        let qq = q * q;
        let codes: Vec<u32> = (0..2 * qq)
            .map(|r| {
                let (side, a, b) = (r / qq, (r % qq) / q, r % q);
                match a {
                    _ if a == q - 1 && q % 2 == 1 => (1 - side) * qq + a * q + b,
                    _ if a % 2 == 0 => side * qq + (a + 1) * q + b,
                    _ => side * qq + (a - 1) * q + b,
                }
            })
            .collect();
        let distinct: BTreeSet<u32> = codes.iter().copied().collect();
        assert_eq!(distinct.len() as u32, 2 * qq, "q = {q}: a permutation");
        let (theirs, theirs_held) = minimal_link_loads(&sf, &codes);
        let (ours, ours_held) = minimal_link_loads(&sf, &sf.column_shift());
        assert!((theirs - 2.0).abs() < 1e-9 && (ours - 2.0).abs() < 1e-9, "q = {q}");
        assert_eq!((ours_held as u32, theirs_held as u32), (4 * q, 4 * q), "q = {q}");
    }
}

/// Under `worst_case` minimal routing saturates at `1/(2p)` = 0.125 flits per terminal and
/// cycle (q = 5, p = 4: the run is stable at 0.10 and saturated at 0.15, the links shared by
/// two routers' traffic full), while Valiant, which spreads every router's traffic over
/// random intermediates, is still stable at 0.25.
#[test]
fn worst_case_saturates_minimal_routing_at_one_over_2p_and_valiant_later() {
    let minimal = slim_fly(5, 4, Routing::Minimal, 8, 4);
    assert_eq!(verdict_at(&minimal, Traffic::WorstCase, 0.10), Status::Ok);
    assert_eq!(verdict_at(&minimal, Traffic::WorstCase, 0.15), Status::Saturated);
    let valiant = slim_fly(5, 4, Routing::Valiant, 8, 4);
    assert_eq!(verdict_at(&valiant, Traffic::WorstCase, 0.25), Status::Ok);
}

#[test]
fn what_the_slim_fly_cannot_do_is_refused() {
    let refused = [
        (slim_fly(6, 2, Routing::Minimal, 2, 4), "a prime power from 3"),
        (slim_fly(2, 2, Routing::Minimal, 2, 4), "a prime power from 3"),
        (slim_fly(5, 0, Routing::Minimal, 2, 4), "terminals_per_router"),
        (slim_fly(5, 4, Routing::Minimal, 1, 4), "virtual_channels >= 2"),
        (slim_fly(5, 4, Routing::Valiant, 3, 4), "virtual_channels >= 4"),
        (slim_fly(5, 4, Routing::Duato, 4, 4), "minimal or valiant"),
        (slim_fly(5, 4, Routing::Ugal, 4, 4), "minimal or valiant"),
        (
            Scenario { traffic: Traffic::Transpose, ..slim_fly(5, 4, Routing::Minimal, 2, 4) },
            "coordinates",
        ),
        (
            Scenario { traffic: Traffic::GroupShift, ..slim_fly(5, 4, Routing::Minimal, 2, 4) },
            "dragonfly",
        ),
        (
            Scenario {
                traffic: Traffic::WorstCase,
                virtual_channels: 2,
                ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
            },
            "needs topology slim_fly",
        ),
    ];
    for (s, words) in &refused {
        let error = check(s).expect_err("refused").0;
        assert!(error.contains(words), "{s:?}: {error}");
    }
    assert!(check(&slim_fly(5, 4, Routing::Valiant, 4, 4)).is_ok());
}
