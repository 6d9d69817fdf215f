//! Broadcast tests: the exact zero-load broadcast latency from every source, every node
//! receiving each broadcast exactly once under load, and beta = 0 leaving the unicast
//! simulation bit-identical.

use std::collections::HashMap;

use super::super::{Engine, RunPlan};
use crate::measurement::Status;
use crate::scenario::{BroadcastOrder, Ejection, Routing, Scenario, Topology};
use crate::sim::{SimOptions, simulate};

fn plan(warmup: u64, cycles: u64) -> RunPlan {
    RunPlan::fixed(warmup, cycles)
}

fn hypercube(n: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        broadcast_fraction: 1.0,
        ..Scenario::new(Topology::Hypercube { dimensions: n })
    }
}

/// Checks that each broadcast reached every node but its source exactly once; returns the
/// number of complete broadcasts.
fn check_receptions(engine: &Engine) -> usize {
    let state = engine.broadcasts.as_deref().unwrap();
    let nodes = engine.geometry.nodes;
    let mut received: HashMap<u64, Vec<u32>> = HashMap::new();
    for &(serial, node) in &state.receptions {
        received.entry(serial).or_default().push(node);
    }
    for nodes_reached in received.values_mut() {
        let before = nodes_reached.len();
        nodes_reached.sort_unstable();
        nodes_reached.dedup();
        assert_eq!(nodes_reached.len(), before, "a node received a broadcast twice");
    }
    for &(serial, source, _) in &state.completed {
        let reached = &received[&serial];
        let expected: Vec<u32> = (0..nodes).filter(|&x| x != source).collect();
        assert_eq!(reached, &expected, "broadcast {serial} from {source}");
    }
    state.completed.len()
}

/// At zero load a broadcast takes exactly n (M + Delta + 1 + router_delay) cycles from its
/// first send (module docs), from every source, over every base dimension.
#[test]
fn zero_load_broadcast_latency_is_n_one_hop_steps() {
    let cases = [
        hypercube(3, Routing::Duato, 2, 4),
        Scenario { startup_latency: 0.0, ..hypercube(4, Routing::DimensionOrder, 1, 1) },
        Scenario {
            startup_latency: 3.0,
            router_delay: 2,
            buffer_depth: 4,
            ejection: Ejection::Unlimited,
            ..hypercube(4, Routing::Adaptive, 4, 9)
        },
        Scenario { startup_latency: 5.0, ..hypercube(5, Routing::Duato, 3, 32) },
        hypercube(1, Routing::DimensionOrder, 1, 3),
    ];
    for s in cases {
        let s = Scenario { broadcast_order: BroadcastOrder::RoundRobin, ..s };
        let Topology::Hypercube { dimensions: n } = s.topology else { unreachable!() };
        let step = u64::from(s.message_length + s.router_delay + 1) + s.startup_latency as u64;
        let mut engine = Engine::new(&s, 0.0, 3, &plan(0, 1)).unwrap();
        engine.open_window();
        for source in 0..engine.geometry.nodes {
            // Round-robin: n broadcasts from each source cover every base dimension.
            for base in 0..n {
                let before = engine.broadcasts.as_deref().unwrap().completed.len();
                engine.broadcast(source);
                let mut cycles = 0;
                while engine.broadcasts_outstanding() > 0 {
                    engine.step();
                    cycles += 1;
                    assert!(cycles < 100_000, "{s:?}: broadcast from {source} stuck");
                }
                let completed = &engine.broadcasts.as_deref().unwrap().completed;
                assert_eq!(completed.len(), before + 1);
                let (_, from, latency) = completed[before];
                assert_eq!(from, source);
                assert_eq!(latency, u64::from(n) * step, "{s:?} from {source}, base {base}");
                // Nothing else in the network: the last copy arrived as the broadcast ended.
                assert_eq!(cycles, latency, "{s:?} from {source}, base {base}");
                engine.check_invariants();
            }
        }
        let done = check_receptions(&engine);
        assert_eq!(done as u32, engine.geometry.nodes * n);
    }
}

/// Under load, with unicasts mixed in and queues at every node, every node still receives
/// each broadcast exactly once, and the bookkeeping invariants hold throughout.
#[test]
fn every_node_receives_each_broadcast_once_under_load() {
    let cases = [
        (Scenario { broadcast_fraction: 0.2, ..hypercube(5, Routing::Duato, 2, 8) }, 0.01),
        (
            Scenario {
                broadcast_fraction: 0.5,
                broadcast_order: BroadcastOrder::RoundRobin,
                ejection: Ejection::Unlimited,
                startup_latency: 2.0,
                ..hypercube(4, Routing::Adaptive, 3, 5)
            },
            0.02,
        ),
    ];
    for (s, rate) in cases {
        let mut engine = Engine::new(&s, rate, 11, &plan(500, 4_000)).unwrap();
        engine.open_window();
        for cycle in 1..=6_000u64 {
            engine.step();
            if cycle % 250 == 0 {
                engine.check_invariants();
            }
        }
        let done = check_receptions(&engine);
        assert!(done > 50, "{s:?}: only {done} broadcasts completed");
        let unicasts =
            engine.delivered_total - engine.broadcasts.as_deref().unwrap().receptions.len() as u64;
        assert!(unicasts > 50, "{s:?}: only {unicasts} unicasts delivered");
    }
}

/// A whole run: the broadcast columns are filled in, and the measured replications per
/// receiving node and channel rates by class agree with the tree's arithmetic.
#[test]
fn broadcast_runs_report_broadcast_and_unicast_latency() {
    let s = Scenario {
        broadcast_fraction: 0.05,
        ejection: Ejection::Unlimited,
        ..hypercube(5, Routing::Duato, 2, 16)
    };
    let options = SimOptions { warmup_cycles: 2_000, cycles: 40_000, ..SimOptions::default() };
    let rate = 0.004;
    let m = simulate(&s, rate, &options, 5, None).unwrap();
    assert_eq!(m.status, Status::Ok, "{:?}", m.detail);
    let get = |key: &str| {
        m.intermediates.iter().find(|(k, _)| k == key).map(|&(_, v)| v).unwrap_or(f64::NAN)
    };
    let latency = m.latency.unwrap();
    let zero_load = 5.0 * (16.0 + 1.0 + 1.0);
    assert!(latency >= zero_load && latency < 1.5 * zero_load, "latency {latency}");
    assert!(get("broadcast_latency_from_generation") >= latency);
    let unicast = m.unicast_latency.unwrap();
    assert!(unicast > 16.0 && unicast < 40.0, "unicast latency {unicast}");
    assert_eq!(m.messages_measured, Some(get("broadcasts_measured") as u64));
    // Replications per received copy: (N - 1 - n) / (N - 1) per broadcast (eq. 9-10).
    let omega = get("omega_bar");
    assert!((omega - 26.0 / 31.0).abs() < 0.03, "omega_bar {omega}");
    // Channel rates: a source copy crosses one of the N n channels per broadcast node-wide,
    // so lambda_cb is about beta * rate; replicated copies (N - 1 - n) / n times as many.
    let (cb, cr) = (get("lambda_cb"), get("lambda_cr"));
    assert!((cb / (0.05 * rate) - 1.0).abs() < 0.15, "lambda_cb {cb}");
    assert!((cr / cb - 26.0 / 5.0).abs() < 0.3, "lambda_cr / lambda_cb {}", cr / cb);
    let total = get("lambda_cu") + cb + cr;
    assert!((get("lambda_c") - total).abs() < 1e-12);
    assert!((total / m.channel_rate.unwrap() - 1.0).abs() < 0.05);
}

/// beta = 0 draws nothing: the unicast simulation is bit-identical to the one before
/// broadcasts were simulated, whatever Delta and the broadcast order say. The reference
/// figures were produced by the simulator as it was before broadcasts (sim-1.1.0).
#[test]
fn beta_zero_is_bit_identical_to_the_unicast_simulation() {
    let base = Scenario {
        routing: Routing::Duato,
        virtual_channels: 2,
        message_length: 16,
        ejection: Ejection::Unlimited,
        ..Scenario::new(Topology::Hypercube { dimensions: 5 })
    };
    let options = SimOptions { warmup_cycles: 1_000, cycles: 5_000, ..SimOptions::default() };
    let reference = simulate(&base, 0.01, &options, 7, None).unwrap();
    let variant = Scenario {
        startup_latency: 7.0,
        broadcast_order: BroadcastOrder::RoundRobin,
        ..base.clone()
    };
    let m = simulate(&variant, 0.01, &options, 7, None).unwrap();
    assert_eq!(m, reference);
    assert_eq!(m.latency.map(f64::to_bits), Some(REFERENCE_LATENCY.to_bits()));
    assert_eq!(m.flit_hops, Some(REFERENCE_FLIT_HOPS));
}

/// `runner simulate topology=hypercube dimensions=5 routing=duato virtual_channels=2
/// message_length=16 ejection=unlimited --rate 0.01 --warmup-cycles 1000 --cycles 5000
/// --seed 7 --json` before broadcasts were simulated.
const REFERENCE_LATENCY: f64 = 19.886235072281583;
const REFERENCE_FLIT_HOPS: u64 = 77_857;

/// Throughput mode counts broadcast copies as the network's messages: at a low load the
/// accepted rate matches the offered one.
#[test]
fn throughput_mode_counts_copies() {
    let s = Scenario { broadcast_fraction: 0.1, ..hypercube(4, Routing::Duato, 2, 8) };
    let options = SimOptions {
        warmup_cycles: 1_000,
        cycles: 20_000,
        measure: crate::sim::Measure::THROUGHPUT,
        ..SimOptions::default()
    };
    let rate = 0.01;
    let m = simulate(&s, rate, &options, 2, None).unwrap();
    assert_eq!(m.status, Status::Ok, "{:?}", m.detail);
    let offered = m.intermediates.iter().find(|(k, _)| k == "offered_throughput").unwrap().1;
    let expected = rate * (0.9 + 0.1 * 15.0);
    assert!((offered / expected - 1.0).abs() < 0.1, "offered {offered}, expected {expected}");
    assert!((m.throughput.unwrap() / offered - 1.0).abs() < 0.03);
}

#[test]
fn broadcasts_outside_the_hypercube_are_refused() {
    let torus = Scenario {
        broadcast_fraction: 0.1,
        virtual_channels: 2,
        ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
    };
    let err = crate::sim::check(&torus).unwrap_err();
    assert!(err.0.contains("hypercube"), "{err}");
    let slow = Scenario { startup_latency: 20_000.0, ..hypercube(3, Routing::Duato, 2, 4) };
    let err = simulate(&slow, 0.01, &SimOptions::default(), 1, None).unwrap_err();
    assert!(err.0.contains("deadlock_cycles"), "{err}");
    let fractional = Scenario { startup_latency: 0.5, ..hypercube(3, Routing::Duato, 2, 4) };
    let err = crate::sim::check(&fractional).unwrap_err();
    assert!(err.0.contains("startup_latency"), "{err}");
    assert!(crate::sim::check(&hypercube(3, Routing::Duato, 2, 4)).is_ok());
}

/// At zero load every broadcast takes n (M + Delta + 1 + router_delay) cycles and every copy
/// M + Delta + 1 + router_delay in the network (one hop, no contention: each node receives one
/// copy), so the broadcast-latency and copy network-latency percentiles are those values
/// exactly; the copies' source waits (siblings queued behind each other) stay within the
/// broadcast latency.
#[test]
fn zero_load_broadcast_percentiles_are_exact() {
    use crate::measurement::Percentiles;
    use crate::sim::engine::Outcome;
    let cases = [
        hypercube(3, Routing::Duato, 2, 4),
        Scenario {
            startup_latency: 3.0,
            router_delay: 1,
            ..hypercube(4, Routing::DimensionOrder, 1, 2)
        },
    ];
    for s in cases {
        let Topology::Hypercube { dimensions: n } = s.topology else { unreachable!() };
        let step = u64::from(s.message_length + s.router_delay + 1) + s.startup_latency as u64;
        let mut engine = Engine::new(&s, 0.0, 3, &plan(0, 1)).unwrap();
        engine.open_window();
        for source in 0..engine.geometry.nodes {
            engine.broadcast(source);
            while engine.broadcasts_outstanding() > 0 {
                engine.step();
                assert!(engine.now < 1_000_000, "{s:?}: broadcast from {source} stuck");
            }
        }
        let m = crate::sim::stats::summarize(&engine, Outcome::Ok);
        let all = |value: u64| {
            Some(Percentiles { p50: value, p90: value, p95: value, p99: value, max: value })
        };
        assert_eq!(m.latency_percentiles, all(u64::from(n) * step), "{s:?}");
        assert_eq!(m.network_latency_percentiles, all(step), "{s:?}");
        let wait = m.source_wait_percentiles.expect("copies were delivered");
        assert!(wait.p50 <= wait.max && wait.max < u64::from(n) * step, "{wait:?}");
        if s.virtual_channels == 1 {
            // One injection VC: a source's second copy waits for the first to leave it.
            assert!(wait.max > 0, "{wait:?}");
        }
    }
}

/// The unicasts of a broadcast run keep their distribution: percentiles around their mean
/// `unicast_latency`, while the histograms follow the percentile columns (broadcast latency,
/// the copies' network latency and wait).
#[test]
fn broadcast_runs_keep_the_unicast_percentiles_and_histograms_follow_the_columns() {
    let s = Scenario {
        broadcast_fraction: 0.05,
        ejection: Ejection::Unlimited,
        ..hypercube(4, Routing::Duato, 2, 8)
    };
    let options = SimOptions { warmup_cycles: 1_000, cycles: 10_000, ..SimOptions::default() };
    let m = simulate(&s, 0.004, &options, 3, None).unwrap();
    assert_eq!(m.status, Status::Ok, "{:?}", m.detail);
    let unicast = m.unicast_latency_percentiles.expect("unicast percentiles");
    let mean = m.unicast_latency.expect("unicast mean");
    assert!(unicast.p50 <= unicast.p95 && unicast.p95 <= unicast.max, "{unicast:?}");
    assert!((unicast.max as f64) >= mean && (unicast.p50 as f64) < 2.0 * mean, "{unicast:?}");
    let broadcasts = m.latency_percentiles.expect("broadcast percentiles");
    assert!(broadcasts.p50 > unicast.p50, "a broadcast takes longer than a unicast");
    let histograms = m.histograms.expect("histograms");
    let latency = histograms.latency.expect("broadcast latency histogram");
    assert_eq!(Some(latency.total()), m.messages_measured, "one count per measured broadcast");
    let top = latency.bins().filter(|b| b.1 > 0).map(|b| b.0 + latency.width - 1).max();
    assert!(top >= Some(broadcasts.max), "the histogram reaches the broadcast maximum");
    assert!(histograms.network_latency.is_some() && histograms.source_wait.is_some());
}
