//! k-ary n-tree tests: the wiring against the definition, subtrees and minimal routes, an
//! acyclic channel-dependency graph, exact zero-load latency for every pair, the random
//! up-port choice, and invariants at and past saturation.

use std::collections::{BTreeSet, HashMap};

use super::super::super::engine::{Engine, RunPlan};
use super::super::super::routing::Router;
use super::super::super::tests::{
    acyclic, bfs, lone_message_with, route_dependencies, run_checking_invariants, verdict_at,
};
use super::super::super::topology::{Family, Geometry};
use super::super::super::{SimOptions, check, simulate};
use super::super::hop::Header;
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Topology, Traffic};

fn tree(k: u32, n: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::KaryNTree { radix: k, dimensions: n, up_links_per_switch: None })
    }
}

fn geometry(k: u32, n: u32) -> Geometry {
    Geometry::new(&Topology::KaryNTree { radix: k, dimensions: n, up_links_per_switch: None })
        .unwrap()
}

/// The level of the nearest common ancestors of terminals `s != d`.
fn nca_level(k: u32, s: u32, d: u32) -> u32 {
    (1..).find(|&h| s / k.pow(h) == d / k.pow(h)).unwrap_or(0)
}

const SIZES: [(u32, u32); 6] = [(2, 1), (2, 3), (3, 2), (4, 2), (2, 4), (4, 3)];

#[test]
fn wiring_follows_the_definition() {
    for (k, n) in SIZES {
        let t = KaryNTree::new(k, n, k).unwrap();
        let nb = t.neighbors();
        let ports = t.ports();
        let at = |router: u32, port: u32| nb[(router * ports + port) as usize];
        let terminals = k.pow(n);
        let per_level = k.pow(n - 1);
        assert_eq!(t.routers(), terminals + n * per_level);
        assert_eq!(nb.len(), (t.routers() * ports) as usize);
        // Terminal t: up_0 to S(1, t / k), which reaches it through down_(t mod k).
        for term in 0..terminals {
            let leaf = t.switch(1, term / k);
            assert_eq!(at(term, 0), leaf, "{k}-ary {n}-tree T({term})");
            assert_eq!(at(leaf, k + term % k), term);
            assert!((1..ports).all(|port| at(term, port) == NO_LINK));
        }
        // Switches of adjacent levels are linked exactly when their words differ at most in
        // digit l - 1, once in each direction.
        let digit = |w: u32, i: u32| (w / k.pow(i)) % k;
        for l in 1..=n {
            for w in 0..per_level {
                let router = t.switch(l, w);
                assert_eq!(t.position(router), (l, w));
                let ups: Vec<u32> = (0..k).map(|j| at(router, j)).collect();
                if l == n {
                    assert!(ups.iter().all(|&u| u == NO_LINK), "top switches have no up links");
                    continue;
                }
                let expected: BTreeSet<u32> = (0..per_level)
                    .filter(|&x| (0..n - 1).all(|i| i == l - 1 || digit(x, i) == digit(w, i)))
                    .map(|x| t.switch(l + 1, x))
                    .collect();
                assert_eq!(ups.iter().copied().collect::<BTreeSet<u32>>(), expected);
                for (j, &up) in ups.iter().enumerate() {
                    assert_eq!(digit(t.position(up).1, l - 1), j as u32, "up_{j} sets digit l-1");
                    let back = (0..ports).filter(|&q| at(up, q) == router).collect::<Vec<_>>();
                    assert_eq!(back, vec![k + digit(w, l - 1)], "one reverse channel");
                }
            }
        }
        let links = nb.iter().filter(|&&to| to != NO_LINK).count() as u32;
        // n - 1 levels of k^n switch-to-switch links each way, plus the terminal links.
        assert_eq!(links, 2 * terminals + 2 * (n - 1) * terminals);
    }
}

#[test]
fn every_switch_reaches_the_terminals_of_its_block() {
    // The full trees, then tapered ones (u links up): switch (l, w) reaches the k^l terminals
    // of block floor(w / u^(l-1)).
    let full = SIZES.map(|(k, n)| (k, n, k));
    for (k, n, u) in full.into_iter().chain([(4, 2, 2), (3, 3, 2), (4, 3, 1), (4, 3, 3)]) {
        let t = KaryNTree::new(k, n, u).unwrap();
        let nb = t.neighbors();
        let terminals = k.pow(n);
        for router in terminals..t.routers() {
            let (l, w) = t.position(router);
            let mut reached = BTreeSet::new();
            let mut stack = vec![router];
            while let Some(r) = stack.pop() {
                if r < terminals {
                    reached.insert(r);
                    continue;
                }
                stack.extend((u..u + k).map(|port| nb[(r * t.ports() + port) as usize]));
            }
            let size = k.pow(l);
            let block = w / u.pow(l - 1);
            let expected: BTreeSet<u32> = (block * size..(block + 1) * size).collect();
            assert_eq!(reached, expected, "{k}-ary {n}-tree u = {u} S({l},{w})");
        }
    }
}

#[test]
fn routes_are_the_minimal_paths_and_turn_at_the_nearest_common_ancestor() {
    // The full trees, then tapered ones (u links up, so u choices per level climbing).
    let full = SIZES.map(|(k, n)| (k, n, k));
    for (k, n, u) in full.into_iter().chain([(4, 2, 2), (3, 3, 2), (4, 3, 1), (6, 2, 2)]) {
        let up_links_per_switch = (u != k).then_some(u);
        let g =
            Geometry::new(&Topology::KaryNTree { radix: k, dimensions: n, up_links_per_switch })
                .unwrap();
        let Family::KaryNTree(t) = &g.family else { panic!("a k-ary n-tree") };
        let terminals = k.pow(n);
        for s in 0..terminals {
            let shortest = bfs(&g, s, t.routers());
            for d in (0..terminals).filter(|&d| d != s) {
                let h = nca_level(k, s, d);
                assert_eq!(g.distance(s, d), 2 * h);
                assert_eq!(shortest[d as usize], 2 * h, "{s}->{d}: 2h links is the minimum");
                // Walk the route, taking up_0, up_1, ... in turn while climbing.
                let (mut cur, mut hops, mut top, mut turn) = (s, 0, 0, 0);
                while cur != d {
                    let left = g.distance(cur, d);
                    let mut steps = Vec::new();
                    g.minimal_steps(cur, d, |step| steps.push(step.port));
                    let (l, _) = t.position(cur);
                    let climbing = top < h;
                    let expected = if l > 0 && climbing { u } else { 1 };
                    assert_eq!(steps.len() as u32, expected, "{s}->{d} at {}", t.describe(cur));
                    for &port in &steps {
                        let next = g.downstream(g.channel(cur, port));
                        assert_eq!(g.distance(next, d) + 1, left, "{s}->{d}");
                        assert_eq!(t.is_up(port), climbing, "up below level h, down from it");
                    }
                    cur = g.downstream(g.channel(cur, steps[turn % steps.len()]));
                    turn += 1;
                    hops += 1;
                    top = top.max(t.position(cur).0);
                }
                assert_eq!((hops, top), (2 * h, h), "{s}->{d}");
            }
        }
    }
}

#[test]
fn channel_dependencies_are_acyclic() {
    // Every channel a route may hold while it requests the next one, over every route of every
    // pair (every up-port choice): the graph must have a topological order.
    for (k, n) in [(2, 3), (3, 2), (4, 2), (2, 4), (3, 3)] {
        let edges = route_dependencies(&geometry(k, n), k.pow(n), true);
        assert!(acyclic(&edges), "{k}-ary {n}-tree: a dependency cycle");
    }
}

/// Zero-load latency of a message from terminal `s` to terminal `d != s`, derived in the
/// engine's conventions exactly as for the butterfly fat-tree (`network/fat_tree/tests.rs`):
/// the route has `2h` links, h the nearest-common-ancestor level; the header is routed onto
/// the terminal's link in its generation cycle `g`, each link takes one cycle and each router
/// after a link adds `router_delay` before routing (the `2h - 1` switches; the destination
/// terminal is no router), so the header is ejected in cycle `g + 2h + (2h - 1)
/// router_delay`, the tail `M - 1` cycles later: latency `2h + M + (2h - 1) router_delay`.
fn zero_load_latency(k: u32, s: u32, d: u32, scenario: &Scenario) -> f64 {
    let hops = 2 * nca_level(k, s, d);
    f64::from(hops + scenario.message_length + scenario.router_delay * (hops - 1))
}

#[test]
fn zero_load_latency_is_exact_for_every_pair() {
    let cases = [
        (2, tree(2, 3, Routing::UpDown, 1, 16)),
        (4, tree(4, 2, Routing::UpDownRandom, 1, 8)),
        (
            3,
            Scenario {
                router_delay: 2,
                buffer_depth: 3,
                ejection: Ejection::Unlimited,
                ..tree(3, 3, Routing::UpDown, 2, 5)
            },
        ),
        (2, Scenario { buffer_depth: 1, ..tree(2, 4, Routing::UpDownRandom, 3, 1) }),
        (4, tree(4, 3, Routing::UpDown, 2, 32)),
        (3, Scenario { router_delay: 1, ..tree(3, 3, Routing::DModK, 2, 6) }),
    ];
    for (k, s) in &cases {
        let terminals = s.topology.nodes() as u32;
        for source in 0..terminals {
            for dest in (0..terminals).filter(|&d| d != source) {
                let (latency, hops) = lone_message_with(s, source, dest, None);
                assert_eq!(hops, f64::from(2 * nca_level(*k, source, dest)), "{source}->{dest}");
                assert_eq!(latency, zero_load_latency(*k, source, dest, s), "{source}->{dest}");
            }
        }
    }
}

#[test]
fn up_down_random_draws_each_up_port_equally_often_and_keeps_a_route() {
    // A 4-ary 3-tree: from terminal 0 to terminal 63 the route climbs to level 3, choosing
    // among 4 up ports at levels 1 and 2 (16 routes). Lone messages one after another: every
    // up port of S(1,0) carries about a quarter of them.
    let (k, m) = (4, 4);
    let s = tree(k, 3, Routing::UpDownRandom, 1, m);
    let mut engine = Engine::new(&s, 0.0, 3, &RunPlan::fixed(0, 1)).unwrap();
    engine.open_window();
    let messages = 800;
    for _ in 0..messages {
        engine.send(0, 63);
        while engine.window.outstanding > 0 {
            engine.step();
        }
    }
    let leaf = engine.geometry.nodes; // S(1,0), the first switch.
    let first = engine.geometry.first_channel(leaf);
    let taken: Vec<u64> =
        (0..k).map(|j| engine.window.vc_flits[(first + j) as usize] / u64::from(m)).collect();
    assert_eq!(taken.iter().sum::<u64>(), messages);
    // Binomial(800, 1/4): mean 200, standard deviation 12.2; allow 4.5 sigma.
    assert!(taken.iter().all(|&c| (145..=255).contains(&c)), "up ports taken {taken:?}");
    // The choice is a function of the message's draw and the router: waiting does not change it.
    let router = Router::new(&s, &Geometry::check(&s.topology).unwrap()).unwrap();
    let header = |ties| Header { source: 0, dest: 63, level: 0, ties };
    let mut out = Vec::new();
    for ties in [1u32, 99, 12345] {
        router.candidates(&engine.geometry, leaf, header(ties), &mut out);
        assert_eq!(out.len(), 1);
        let first = out[0];
        router.candidates(&engine.geometry, leaf, header(ties), &mut out);
        assert_eq!(out, vec![first]);
    }
}

#[test]
fn d_mod_k_climbs_by_the_destination_s_digits() {
    // Every pair of the 3-ary 3-tree and of the 4-ary 3-tree tapered to 2 up links per
    // switch: the route is minimal, its up port at level l is floor(d / u^(l-1)) mod u (the
    // destination's digit l - 1 on the full tree), and so every message to one destination
    // reaches the same switch at each level whatever its source.
    for (k, n, u) in [(3, 3, 3), (4, 3, 2)] {
        let topology = Topology::KaryNTree {
            radix: k,
            dimensions: n,
            up_links_per_switch: (u != k).then_some(u),
        };
        let s = Scenario { topology, ..tree(k, n, Routing::DModK, 1, 4) };
        let g = Geometry::new(&s.topology).unwrap();
        let Family::KaryNTree(t) = &g.family else { panic!("a k-ary n-tree") };
        let router = Router::new(&s, &Geometry::check(&s.topology).unwrap()).unwrap();
        let terminals = k.pow(n);
        let mut out = Vec::new();
        for d in 0..terminals {
            let mut top_of_level: HashMap<u32, BTreeSet<u32>> = HashMap::new();
            for src in (0..terminals).filter(|&src| src != d) {
                let h = nca_level(k, src, d);
                let (mut cur, mut hops) = (src, 0);
                while cur != d {
                    let header = Header { source: src, dest: d, level: 0, ties: 7 };
                    router.candidates(&g, cur, header, &mut out);
                    assert_eq!(out.len(), 1, "{src}->{d}: one port");
                    let port = out[0].port;
                    let (l, _) = t.position(cur);
                    if l > 0 && t.is_up(port) {
                        assert_eq!(port, (d / u.pow(l - 1)) % u, "{src}->{d} at level {l}");
                    }
                    cur = g.downstream(g.channel(cur, port));
                    hops += 1;
                    let (level, _) = t.position(cur);
                    if level == h {
                        top_of_level.entry(h).or_default().insert(cur);
                    }
                }
                assert_eq!(hops, 2 * h, "{src}->{d}: minimal");
            }
            // The nearest common ancestor of every source at a level: one switch per level.
            for (h, tops) in &top_of_level {
                assert_eq!(tops.len(), 1, "messages to {d} turn at {tops:?} on level {h}");
            }
        }
    }
    // d_mod_k is the k-ary n-tree's: the butterfly fat-tree refuses it.
    let butterfly =
        Scenario { routing: Routing::DModK, ..Scenario::new(Topology::FatTree { processors: 64 }) };
    assert!(check(&butterfly).unwrap_err().to_string().contains("kary_ntree"));
}

#[test]
fn invariants_hold_under_load() {
    let cases = [
        (tree(4, 3, Routing::UpDown, 1, 16), 0.02),
        (Scenario { buffer_depth: 4, ..tree(2, 4, Routing::UpDownRandom, 2, 8) }, 0.04),
        (Scenario { buffer_depth: 1, router_delay: 1, ..tree(3, 2, Routing::UpDown, 3, 6) }, 0.06),
        (Scenario { traffic: Traffic::BitComplement, ..tree(4, 3, Routing::UpDown, 2, 8) }, 0.05),
    ];
    for (s, rate) in &cases {
        assert!(check(s).is_ok(), "{s:?}");
        let engine = run_checking_invariants(s, *rate, 11, 3_000);
        assert!(engine.delivered_total > 200, "{s:?}: only {} delivered", engine.delivered_total);
    }
}

#[test]
fn the_adaptive_up_port_choice_sustains_more_load_than_the_random_one() {
    // A 4-ary 3-tree, V = 2, M = 8, uniform traffic. Measured saturation throughputs
    // (`runner simulate --saturation`, docs/kary_ntree.md): 0.0639 messages/node/cycle with
    // up_down, 0.0554 with up_down_random: a worm that follows the free up ports meets less
    // head-of-line blocking than one whose route is fixed. At 0.06, between the two, the
    // adaptive tree carries the offered load and the random one saturates.
    let options = SimOptions { warmup_cycles: 2_000, cycles: 10_000, ..SimOptions::default() };
    let rate = 0.06;
    let adaptive = simulate(&tree(4, 3, Routing::UpDown, 2, 8), rate, &options, 5, None).unwrap();
    assert_eq!(adaptive.status, Status::Ok, "{:?}", adaptive.detail);
    let accepted = adaptive.throughput.unwrap();
    assert!((accepted - rate).abs() < 0.03 * rate, "accepted {accepted} of {rate}");
    let random =
        simulate(&tree(4, 3, Routing::UpDownRandom, 2, 8), rate, &options, 5, None).unwrap();
    assert_eq!(random.status, Status::Saturated, "{:?}", random.detail);
}

#[test]
fn d_mod_k_is_conflict_free_under_neighbor_and_not_under_transpose() {
    // The 4-ary 2-tree, V = 2, 4-flit buffers, M = 8, interleaved ejection. Saturation
    // (`runner simulate --saturation`, three searches, docs/kary_ntree.md), flits per
    // terminal and cycle: under neighbor d_mod_k 0.986 (every switch's terminals leave by
    // distinct up links and every destination's descent is its own: at the injection bound),
    // up_down_random 0.752; under transpose d_mod_k 0.499 (three terminals of each switch
    // share one up link, the fourth sends to itself), up_down 0.941.
    let run = |routing, traffic, flits| verdict_at(&tree(4, 2, routing, 2, 8), traffic, flits);
    assert_eq!(run(Routing::DModK, Traffic::Neighbor, 0.9), Status::Ok);
    assert_eq!(run(Routing::UpDownRandom, Traffic::Neighbor, 0.9), Status::Saturated);
    assert_eq!(run(Routing::DModK, Traffic::Transpose, 0.7), Status::Saturated);
    assert_eq!(run(Routing::UpDown, Traffic::Transpose, 0.7), Status::Ok);
}

#[test]
fn overload_saturates_and_never_deadlocks() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 20_000, ..SimOptions::default() };
    for (routing, v) in [(Routing::UpDown, 1), (Routing::UpDownRandom, 2)] {
        let m = simulate(&tree(4, 3, routing, v, 16), 0.2, &options, 2, None).unwrap();
        assert_eq!(m.status, Status::Saturated, "{routing:?} V = {v}: {:?}", m.detail);
        let detail = m.detail.unwrap_or_default();
        assert!(!detail.contains("deadlock"), "{routing:?}: {detail}");
    }
}

#[test]
fn nonsense_kary_ntree_scenarios_are_refused() {
    let bad = [
        tree(1, 3, Routing::UpDown, 1, 16),
        tree(4, 0, Routing::UpDown, 1, 16),
        tree(4, 3, Routing::Duato, 4, 16),
        tree(4, 3, Routing::Adaptive, 1, 16),
        tree(4, 3, Routing::DimensionOrder, 2, 16),
        Scenario { escape_channels: Some(1), ..tree(4, 3, Routing::UpDown, 2, 16) },
        Scenario { traffic: Traffic::Tornado, ..tree(4, 3, Routing::UpDown, 1, 16) },
        Scenario { fault_rate: 0.05, ..tree(4, 3, Routing::UpDown, 1, 16) },
        tree(4, 3, Routing::UpDown, 65, 16),
        tree(2, 40, Routing::UpDown, 1, 16),
    ];
    for s in &bad {
        let error = check(s).unwrap_err();
        assert!(!error.to_string().is_empty());
        assert!(simulate(s, 0.01, &SimOptions::default(), 1, None).is_err());
    }
    // Up/down routing is refused off the trees, and up_down_random works on both trees.
    let torus = Scenario {
        routing: Routing::UpDownRandom,
        ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
    };
    assert!(check(&torus).unwrap_err().to_string().contains("fat-trees (fat_tree, kary_ntree"));
    let butterfly = Scenario {
        routing: Routing::UpDownRandom,
        ..Scenario::new(Topology::FatTree { processors: 64 })
    };
    assert!(check(&butterfly).is_ok());
    let transpose = Scenario { traffic: Traffic::Transpose, ..tree(4, 2, Routing::UpDown, 1, 16) };
    assert!(check(&transpose).is_ok());
}
