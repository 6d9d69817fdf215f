//! Tests of the fault map (draw, reachability table, traffic) and of runs with faults.
//!
//! `check` refuses faults under wormhole switching; most of these tests run the engine directly
//! (and `sim::run`, which skips `check`) with wormhole `adaptive` routing, which the fault
//! filter keeps free of dead ends, to test the fault path independently of the switching
//! technique; one runs scouting and circuit switching, which `check` admits.

use std::collections::VecDeque;

use super::super::engine::{Engine, RunPlan};
use super::super::network::hop::Header;
use super::super::routing::Router;
use super::super::traffic::{Pattern, Traffic};
use super::super::{SimOptions, check, run};
use super::*;
use crate::measurement::{Measurement, Status};
use crate::scenario::{Routing, Scenario, Switching, Topology, Traffic as TrafficSpec};

fn geometry(topology: Topology) -> Geometry {
    Geometry::new(&topology).unwrap()
}

fn torus(k: u32) -> Topology {
    Topology::Torus { radix: k, dimensions: 2 }
}

/// Hop distances from `t` over healthy nodes only (`u32::MAX`: unreachable).
fn healthy_distances(g: &Geometry, map: &FaultMap, t: u32) -> Vec<u32> {
    let mut dist = vec![u32::MAX; g.nodes as usize];
    let mut queue = VecDeque::from([t]);
    dist[t as usize] = 0;
    while let Some(n) = queue.pop_front() {
        for port in 0..g.ports_at(n) {
            let m = g.downstream(g.channel(n, port));
            if m != NO_LINK && !map.is_faulty(m) && dist[m as usize] == u32::MAX {
                dist[m as usize] = dist[n as usize] + 1;
                queue.push_back(m);
            }
        }
    }
    dist
}

#[test]
fn the_table_says_exactly_when_a_fault_free_minimal_path_exists() {
    // A fault-free minimal path from n to t exists iff the distance over healthy nodes equals
    // the distance in the whole network: an independent characterisation of the table.
    for (topology, theta) in [
        (torus(6), 0.2),
        (torus(5), 0.3),
        (Topology::Mesh { radix: 5, dimensions: 2 }, 0.15),
        (Topology::Hypercube { dimensions: 5 }, 0.25),
        (Topology::Torus { radix: 4, dimensions: 3 }, 0.2),
    ] {
        let g = geometry(topology.clone());
        for seed in 0..4 {
            let map = FaultMap::draw(&g, theta, seed).unwrap();
            for t in 0..g.nodes {
                let dist = healthy_distances(&g, &map, t);
                for n in 0..g.nodes {
                    let expected = !map.is_faulty(t)
                        && !map.is_faulty(n)
                        && dist[n as usize] == g.distance(n, t);
                    assert_eq!(map.reaches(n, t), expected, "{topology:?} seed {seed}: {n}->{t}");
                }
            }
        }
    }
}

#[test]
fn draws_are_reproducible_connected_and_bounded() {
    let g = geometry(torus(8));
    let a = FaultMap::draw(&g, 0.2, 11).unwrap();
    assert_eq!(a, FaultMap::draw(&g, 0.2, 11).unwrap(), "same seed, same map");
    assert_ne!(a.hash(), FaultMap::draw(&g, 0.2, 12).unwrap().hash());
    assert_eq!(a.hash().len(), 16);
    assert!((1..=30).contains(&a.fault_count()), "{}", a.fault_count());
    assert_eq!(u64::from(a.healthy_count()) + a.fault_count(), 64);
    for t in 0..g.nodes {
        if !a.is_faulty(t) {
            let dist = healthy_distances(&g, &a, t);
            assert!((0..g.nodes).all(|n| a.is_faulty(n) || dist[n as usize] != u32::MAX));
        }
    }
    // Nearly every node faulty: no connected map in MAX_DRAWS draws, a clear error.
    let error = FaultMap::draw(&g, 0.999, 1).unwrap_err().0;
    assert!(error.contains("lower fault_rate"), "{error}");
    // Across seeds the fault count averages theta * N.
    let total: u64 = (0..200).map(|s| FaultMap::draw(&g, 0.1, s).unwrap().fault_count()).sum();
    let mean = total as f64 / 200.0;
    assert!((5.4..7.4).contains(&mean), "mean fault count {mean}, expected about 6.4");
}

#[test]
fn a_header_of_a_served_pair_never_meets_a_dead_end() {
    // Follow every retained candidate (depth first) from every served pair: each step is
    // minimal, never enters a faulty node, and there is always at least one candidate left.
    for topology in [torus(6), Topology::Mesh { radix: 5, dimensions: 2 }] {
        let g = geometry(topology.clone());
        let s =
            Scenario { routing: Routing::Adaptive, virtual_channels: 2, ..Scenario::new(topology) };
        let router = Router::new(&s, &g.size).unwrap();
        let map = FaultMap::draw(&g, 0.2, 3).unwrap();
        let mut candidates = Vec::new();
        for source in 0..g.nodes {
            for dest in 0..g.nodes {
                if source == dest || !map.reaches(source, dest) {
                    continue;
                }
                let mut seen = vec![false; g.nodes as usize];
                let mut stack = vec![source];
                while let Some(cur) = stack.pop() {
                    if cur == dest || std::mem::replace(&mut seen[cur as usize], true) {
                        continue;
                    }
                    let header = Header { source, dest, level: 0, ties: u32::MAX };
                    router.candidates(&g, cur, header, &mut candidates);
                    map.retain(&g, cur, dest, &mut candidates);
                    assert!(!candidates.is_empty(), "{source}->{dest}: dead end at {cur}");
                    for c in &candidates {
                        let next = g.downstream(g.channel(cur, c.port));
                        assert!(!map.is_faulty(next));
                        assert_eq!(g.distance(next, dest) + 1, g.distance(cur, dest));
                        stack.push(next);
                    }
                }
            }
        }
    }
}

#[test]
fn without_faulty_nodes_the_traffic_draws_what_uniform_traffic_draws() {
    let g = geometry(torus(5));
    let empty = Arc::new(FaultMap::with_faults(&g, &[]));
    let mut rng_a = Rng::new(8);
    let mut rng_b = Rng::new(8);
    let mut uniform = Traffic::new(g.nodes, 0.02, Pattern::Uniform, &mut rng_a);
    let mut served = Traffic::new(g.nodes, 0.02, Pattern::Served(empty), &mut rng_b);
    for cycle in 1..=20_000u64 {
        assert_eq!(uniform.next_arrival(cycle, &mut rng_a), served.next_arrival(cycle, &mut rng_b));
    }
}

#[test]
fn faulty_nodes_neither_send_nor_receive_and_served_destinations_are_uniform() {
    let g = geometry(torus(5));
    // Nodes 6 = (1,1) and 18 = (3,3) faulty. (0,1) -> (2,1) and (1,0) -> (1,2) have one
    // minimal path each, through (1,1): unserved. (0,0) -> (2,2) has others: served.
    let map = Arc::new(FaultMap::with_faults(&g, &[6, 18]));
    assert!(!map.reaches(5, 7) && !map.reaches(1, 11) && map.reaches(0, 12));
    assert!(!map.reaches(6, 7) && !map.reaches(5, 6), "faulty nodes reach nothing");
    let mut rng = Rng::new(2);
    let mut traffic = Traffic::new(g.nodes, 0.05, Pattern::Served(map.clone()), &mut rng);
    let n = g.nodes;
    let mut count = vec![0u32; (n * n) as usize];
    let mut total = 0u32;
    for cycle in 1..=200_000u64 {
        while let Some((s, d)) = traffic.next_arrival(cycle, &mut rng) {
            count[(s * n + d) as usize] += 1;
            total += 1;
        }
    }
    // 23 healthy senders at 0.05 messages per cycle for 200,000 cycles.
    assert!((227_000..233_000).contains(&total), "{total}");
    for s in 0..n {
        for d in 0..n {
            let c = count[(s * n + d) as usize];
            if map.reaches(s, d) && s != d {
                let expected = f64::from(total) / 23.0 / f64::from(map.served[s as usize]);
                assert!((f64::from(c) - expected).abs() < 0.25 * expected, "{s}->{d}: {c}");
            } else {
                assert_eq!(c, 0, "{s}->{d} is not served");
            }
        }
    }
    let (pairs, unserved) = map.unserved_pairs();
    assert_eq!(pairs, 23 * 22);
    assert!(unserved >= 4 && unserved < pairs / 4, "{unserved} of {pairs}");
}

fn adaptive(k: u32, theta: f64) -> Scenario {
    Scenario {
        routing: Routing::Adaptive,
        virtual_channels: 2,
        message_length: 8,
        fault_rate: theta,
        ..Scenario::new(torus(k))
    }
}

fn run_plan(warmup: u64, cycles: u64, fault_seed: Option<u64>) -> RunPlan {
    RunPlan { fault_seed, ..RunPlan::fixed(warmup, cycles) }
}

#[test]
fn every_message_is_delivered_and_nothing_enters_a_faulty_node() {
    for (k, theta, rate) in [(8, 0.1, 0.01), (8, 0.2, 0.01), (6, 0.2, 0.02)] {
        let s = adaptive(k, theta);
        let plan = run_plan(0, 4_000, Some(k.into()));
        let mut engine = Engine::new(&s, rate, 4, &plan).unwrap();
        let faults = engine.faults.clone().unwrap();
        assert!(faults.fault_count() > 0, "k = {k}: the test needs faults");
        engine.open_window();
        for cycle in 1..4_000u64 {
            engine.step();
            if cycle % 50 == 0 {
                engine.check_invariants();
            }
        }
        // The engine closes the window at cycle 4,000 and runs until every message generated
        // in it is delivered (traffic keeps flowing meanwhile).
        let outcome = engine.run(&plan, None);
        engine.check_invariants();
        assert_eq!(outcome, super::super::engine::Outcome::Ok, "k = {k} theta = {theta}");
        assert_eq!(engine.window.outstanding, 0);
        assert!(engine.window.measured > 500, "{}", engine.window.measured);
    }
}

/// Scouting (K >= 1) and circuit switching, the techniques `check` admits with faults: every
/// message of the window is delivered (or, for circuit switching, counted as a drop), nothing
/// enters a faulty node and no VC leaks, with the invariants checked every 50 cycles.
#[test]
fn scouting_and_circuit_switching_deliver_around_faults() {
    let cases = [
        (Switching::Scouting { scouting_distance: 1 }, Routing::Duato, 3, 0.1),
        (Switching::Scouting { scouting_distance: 3 }, Routing::Duato, 3, 0.2),
        (Switching::Circuit, Routing::Adaptive, 1, 0.1),
        (Switching::Circuit, Routing::Adaptive, 2, 0.2),
    ];
    for (switching, routing, v, theta) in cases {
        let s = Scenario {
            switching,
            routing,
            virtual_channels: v,
            message_length: 8,
            fault_rate: theta,
            ..Scenario::new(torus(8))
        };
        assert!(check(&s).is_ok(), "{switching:?}");
        let plan = run_plan(0, 3_000, Some(7));
        let mut engine = Engine::new(&s, 0.005, 2, &plan).unwrap();
        assert!(engine.faults.as_ref().is_some_and(|f| f.fault_count() > 0));
        engine.open_window();
        for cycle in 1..3_000u64 {
            engine.step();
            if cycle % 50 == 0 {
                engine.check_invariants();
            }
        }
        let outcome = engine.run(&plan, None);
        engine.check_invariants();
        assert_eq!(outcome, super::super::engine::Outcome::Ok, "{switching:?} theta = {theta}");
        assert_eq!(engine.window.outstanding, 0);
        assert!(engine.window.measured > 200, "{}", engine.window.measured);
    }
}

/// The measurement without the fault columns and fault intermediates.
fn without_faults(mut m: Measurement) -> Measurement {
    m.fault_count = None;
    m.fault_map = None;
    m.intermediates.retain(|(k, _)| k != "fault_draws" && k != "unserved_pair_fraction");
    m
}

#[test]
fn a_fault_map_without_faulty_nodes_gives_the_fault_free_results_bit_for_bit() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 8_000, ..SimOptions::default() };
    let clean = run(&adaptive(6, 0.0), 0.01, &options, 3, None).unwrap();
    assert_eq!(clean.fault_count, None);
    assert_eq!(clean.fault_map, None);
    // theta = 1e-12: (almost surely) no node is faulty, but the fault path runs.
    let tiny = run(&adaptive(6, 1e-12), 0.01, &options, 3, None).unwrap();
    assert_eq!(tiny.fault_count, Some(0));
    assert_eq!(tiny.intermediate("unserved_pair_fraction"), Some(0.0));
    assert_eq!(without_faults(tiny), clean);
}

#[test]
fn a_fault_seed_fixes_the_map_at_every_load() {
    let s = adaptive(8, 0.1);
    let options = |fault_seed| SimOptions {
        warmup_cycles: 500,
        cycles: 4_000,
        fault_seed: Some(fault_seed),
        ..SimOptions::default()
    };
    let low = run(&s, 0.004, &options(21), 1, None).unwrap();
    let high = run(&s, 0.012, &options(21), 2, None).unwrap();
    let other = run(&s, 0.004, &options(22), 1, None).unwrap();
    assert_eq!(low.status, Status::Ok);
    assert_eq!(low.fault_map, high.fault_map);
    assert_eq!(low.fault_count, high.fault_count);
    assert_ne!(low.fault_map, other.fault_map);
    let healthy = 64 - low.fault_count.unwrap();
    // Rates are per healthy node.
    let offered = low.intermediate("offered_throughput").unwrap();
    assert!((offered - 0.004).abs() < 0.0008, "{offered} with {healthy} healthy nodes");
    // The links at faulty nodes are left out of the channel statistics: p_busy sums to 1.
    let p: f64 = (0..=2).map(|v| low.intermediate(&format!("p_busy_{v}")).unwrap()).sum();
    assert!((p - 1.0).abs() < 1e-9);
}

#[test]
fn check_refuses_faults_where_they_are_not_simulated() {
    let error = check(&adaptive(8, 0.1)).unwrap_err().0;
    assert!(error.contains("scouting") && error.contains("circuit"), "{error}");
    let permutation = Scenario { traffic: TrafficSpec::Transpose, ..adaptive(8, 0.1) };
    assert!(
        run(&permutation, 0.01, &SimOptions::default(), 1, None).unwrap_err().0.contains("uniform")
    );
    let large = adaptive(128, 0.1);
    assert!(
        run(&large, 0.01, &SimOptions::default(), 1, None)
            .unwrap_err()
            .0
            .contains("at most 4096 nodes")
    );
    let scouting =
        Scenario { switching: Switching::Scouting { scouting_distance: 2 }, ..adaptive(8, 0.1) };
    assert!(check(&scouting).is_ok(), "scouting K >= 1 tolerates faults");
    assert!(check(&Scenario { switching: Switching::Circuit, ..adaptive(8, 0.1) }).is_ok());
    let wormhole_like =
        Scenario { switching: Switching::Scouting { scouting_distance: 0 }, ..adaptive(8, 0.1) };
    assert!(check(&wormhole_like).unwrap_err().0.contains("scouting_distance >= 1"));
    let fat_tree = Scenario {
        switching: Switching::Circuit,
        routing: Routing::UpDown,
        virtual_channels: 1,
        fault_rate: 0.1,
        ..Scenario::new(Topology::FatTree { processors: 64 })
    };
    assert!(check(&fat_tree).unwrap_err().0.contains("fat-tree"));
    let single_path = Scenario { routing: Routing::DimensionOrder, ..adaptive(8, 0.1) };
    let error = run(&single_path, 0.01, &SimOptions::default(), 1, None).unwrap_err().0;
    assert!(error.contains("dimension_order has one path"), "{error}");
    assert!(check(&adaptive(8, 0.0)).is_ok());
}

/// The measurement behind `docs/faults.md`: healthy ordered pairs without a fault-free minimal
/// path, averaged over 20 fault maps (seeds 1..=20) per network and fault rate. Run with
/// `cargo test --lib sim::faults::tests::unserved_pairs -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement that prints a table (docs/faults.md)"]
fn unserved_pairs() {
    println!(
        "| network | theta | faulty nodes (mean) | draws per map (mean) | unserved pairs (mean) \
         | min | max | mean distance of served pairs (all pairs) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for k in [8u32, 16] {
        let g = geometry(torus(k));
        for theta in [0.1, 0.2] {
            let maps: Vec<FaultMap> =
                (1..=20).map(|seed| FaultMap::draw(&g, theta, seed).unwrap()).collect();
            let fractions: Vec<f64> = maps
                .iter()
                .map(|m| {
                    let (pairs, unserved) = m.unserved_pairs();
                    unserved as f64 / pairs as f64
                })
                .collect();
            let n = maps.len() as f64;
            let mean = |f: &dyn Fn(&FaultMap) -> f64| maps.iter().map(f).sum::<f64>() / n;
            let min = fractions.iter().copied().fold(f64::INFINITY, f64::min);
            let max = fractions.iter().copied().fold(0.0, f64::max);
            let all_pairs = f64::from(g.nodes) * f64::from(g.nodes - 1);
            let all_distance = (0..g.nodes)
                .flat_map(|a| (0..g.nodes).map(move |b| (a, b)))
                .map(|(a, b)| f64::from(g.distance(a, b)))
                .sum::<f64>()
                / all_pairs;
            let served_distance = mean(&|m| {
                let (mut sum, mut count) = (0.0, 0.0);
                for a in 0..g.nodes {
                    for b in 0..g.nodes {
                        if a != b && m.reaches(a, b) {
                            sum += f64::from(g.distance(a, b));
                            count += 1.0;
                        }
                    }
                }
                sum / count
            });
            println!(
                "| {k}x{k} torus | {theta} | {:.1} | {:.2} | {:.2}% | {:.2}% | {:.2}% | {:.3} ({:.3}) |",
                mean(&|m| m.fault_count() as f64),
                mean(&|m| f64::from(m.draws)),
                100.0 * fractions.iter().sum::<f64>() / n,
                100.0 * min,
                100.0 * max,
                served_distance,
                all_distance,
            );
        }
    }
}
