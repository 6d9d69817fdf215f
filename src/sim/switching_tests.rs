//! Tests of scouting and circuit switching: exact zero-load latency for every pair, K = 0
//! identical to wormhole, invariants (no VC leak after backtracks and teardowns, conservation
//! with drops), deadlock reporting, measurements.

use super::engine::{Engine, RunPlan};
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Switching, Topology};

fn torus(k: u32, n: u32) -> Topology {
    Topology::Torus { radix: k, dimensions: n }
}

fn scouting(k: u32) -> Switching {
    Switching::Scouting { scouting_distance: k }
}

fn scenario(
    topology: Topology,
    switching: Switching,
    routing: Routing,
    v: u32,
    m: u32,
) -> Scenario {
    Scenario {
        switching,
        routing,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(topology)
    }
}

fn plan(warmup: u64, cycles: u64) -> RunPlan {
    RunPlan::fixed(warmup, cycles)
}

/// Sends one message through an otherwise empty network; returns (latency, hops).
fn lone_message(scenario: &Scenario, source: u32, dest: u32) -> (f64, f64) {
    let mut engine = Engine::new(scenario, 0.0, 1, &plan(0, 1)).unwrap();
    engine.open_window();
    engine.send(source, dest);
    for _ in 0..100_000 {
        engine.step();
        if engine.window.outstanding == 0 {
            engine.check_invariants();
            return (engine.window.latency_sum, engine.window.hops_sum);
        }
    }
    panic!("message {source}->{dest} not delivered");
}

/// Zero-load latency of scouting switching, K >= 1 (derivation in `switching::scouting`).
fn scouting_zero_load(hops: u32, m: u32, k: u32, delay: u32) -> u32 {
    let lead = k.min(hops);
    (hops - 1) * (1 + delay) + (2 * lead + 1).max(1 + delay) + m
}

/// Zero-load latency of circuit switching (derivation in `switching::circuit`).
fn circuit_zero_load(hops: u32, m: u32, delay: u32) -> u32 {
    hops * (3 + delay) + m
}

/// Every source/destination pair of each scenario, against `expected(hops)`.
fn assert_every_pair(s: &Scenario, expected: impl Fn(u32) -> u32) {
    let geometry = topology::Geometry::new(&s.topology).unwrap();
    for source in 0..geometry.nodes {
        for dest in (0..geometry.nodes).filter(|&d| d != source) {
            let hops = geometry.distance(source, dest);
            let (latency, measured_hops) = lone_message(s, source, dest);
            assert_eq!(measured_hops, f64::from(hops), "{s:?} {source}->{dest}");
            assert_eq!(latency, f64::from(expected(hops)), "{s:?} {source}->{dest} ({hops} hops)");
        }
    }
}

/// The shapes, routings and buffer depths the zero-load tests cover, for a switching.
fn zero_load_cases(switching: Switching) -> Vec<Scenario> {
    vec![
        scenario(torus(5, 2), switching, Routing::DimensionOrder, 2, 7),
        scenario(torus(4, 3), switching, Routing::Duato, 3, 16),
        scenario(torus(6, 2), switching, Routing::Nbc, 5, 4),
        scenario(torus(8, 1), switching, Routing::Adaptive, 1, 1),
        scenario(Topology::Mesh { radix: 4, dimensions: 2 }, switching, Routing::Adaptive, 2, 9),
        scenario(Topology::Mesh { radix: 5, dimensions: 2 }, switching, Routing::OddEven, 1, 6),
        Scenario {
            buffer_depth: 5,
            ejection: Ejection::Unlimited,
            ..scenario(Topology::Hypercube { dimensions: 4 }, switching, Routing::Duato, 4, 5)
        },
    ]
}

#[test]
fn scouting_zero_load_latency_is_exact_for_every_pair() {
    for k in [1, 2, 3, 6] {
        for delay in [0, 1, 3] {
            for s in zero_load_cases(scouting(k)) {
                let s = Scenario { router_delay: delay, ..s };
                let m = s.message_length;
                assert_every_pair(&s, |hops| scouting_zero_load(hops, m, k, delay));
            }
        }
    }
}

#[test]
fn circuit_zero_load_latency_is_exact_for_every_pair() {
    for delay in [0, 2] {
        for s in zero_load_cases(Switching::Circuit) {
            let s = Scenario { router_delay: delay, ..s };
            let m = s.message_length;
            assert_every_pair(&s, |hops| circuit_zero_load(hops, m, delay));
        }
    }
}

/// Scouting with K = 0 is wormhole switching: the same code path, bit-identical results.
#[test]
fn scouting_with_k_0_is_bit_identical_to_wormhole() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 8_000, ..SimOptions::default() };
    let cases = [
        (scenario(torus(4, 2), Switching::Wormhole, Routing::Duato, 3, 8), 0.04),
        (scenario(torus(8, 2), Switching::Wormhole, Routing::Adaptive, 6, 32), 0.006),
        (scenario(torus(4, 2), Switching::Wormhole, Routing::DimensionOrder, 2, 16), 0.02),
        (scenario(torus(6, 2), Switching::Wormhole, Routing::Nbc, 5, 8), 0.03),
    ];
    for (wormhole, rate) in &cases {
        let k0 = Scenario { switching: scouting(0), ..wormhole.clone() };
        let a = simulate(wormhole, *rate, &options, 21, None).unwrap();
        let b = simulate(&k0, *rate, &options, 21, None).unwrap();
        assert_eq!(a, b, "{wormhole:?}");
        assert_eq!(a.status, Status::Ok);
    }
    // An adaptive V = 1 network deadlocks under K = 0 exactly as under wormhole, reported.
    let options = SimOptions {
        warmup_cycles: 0,
        cycles: 200_000,
        deadlock_cycles: 500,
        saturation_backlog: 1e9,
        ..SimOptions::default()
    };
    let s = scenario(torus(4, 2), scouting(0), Routing::Adaptive, 1, 16);
    let m = simulate(&s, 0.2, &options, 1, None).unwrap();
    assert_eq!(m.status, Status::Deadlock);
    assert!(m.detail.unwrap().contains("waiting cycle"));
}

/// Runs `s` at `rate` for `cycles` cycles checking every invariant at each batch boundary;
/// returns the engine.
fn run_checked(s: &Scenario, rate: f64, cycles: u64, seed: u64) -> Engine {
    let run = plan(0, cycles);
    let mut engine = Engine::new(s, rate, seed, &run).unwrap();
    engine.open_window();
    let batch = engine.batches.length();
    for cycle in 1..=cycles {
        engine.step();
        if cycle % batch == 0 {
            engine.check_invariants();
        }
    }
    engine.check_invariants();
    engine
}

/// Sends a burst of messages (every node to `per_node` random destinations at once) into an
/// idle network and steps until all are delivered or dropped: contention makes headers block,
/// backtrack and tear down. Afterwards no VC may still be held.
fn drain_burst(s: &Scenario, per_node: u32, seed: u64) -> Engine {
    let mut engine = Engine::new(s, 0.0, seed, &plan(0, 1)).unwrap();
    engine.open_window();
    let nodes = engine.geometry.nodes;
    let mut rng = super::rng::Rng::new(seed);
    for source in 0..nodes {
        for _ in 0..per_node {
            let dest = (source + 1 + rng.below(u64::from(nodes - 1)) as u32) % nodes;
            engine.send(source, dest);
        }
    }
    for cycle in 1..=200_000u64 {
        engine.step();
        if cycle % 50 == 0 {
            engine.check_invariants();
        }
        if engine.window.outstanding == 0 {
            break;
        }
    }
    assert_eq!(engine.window.outstanding, 0, "{s:?}: burst not drained");
    engine.check_invariants();
    assert!(engine.vc_free_everywhere(), "{s:?}: VCs still held after the burst drained");
    engine
}

#[test]
fn no_vc_leaks_after_backtracks_and_teardowns() {
    let cases = [
        scenario(torus(4, 2), scouting(1), Routing::Duato, 3, 8),
        scenario(torus(4, 2), scouting(3), Routing::DimensionOrder, 2, 4),
        scenario(torus(6, 2), scouting(2), Routing::Nbc, 5, 6),
        scenario(torus(4, 2), scouting(6), Routing::Duato, 4, 3),
        scenario(torus(4, 2), Switching::Circuit, Routing::Adaptive, 1, 8),
        scenario(torus(4, 2), Switching::Circuit, Routing::Adaptive, 3, 16),
        Scenario {
            circuit_backoff: Some(3),
            ..scenario(
                Topology::Hypercube { dimensions: 4 },
                Switching::Circuit,
                Routing::Duato,
                2,
                5,
            )
        },
    ];
    for s in &cases {
        let engine = drain_burst(s, 4, 5);
        let c = &engine.switching.counts;
        match s.switching {
            Switching::Circuit => assert!(c.failed() > 0, "{s:?}: no attempt failed"),
            _ => assert!(c.backtracked() > 0, "{s:?}: no header backtracked"),
        }
    }
}

#[test]
fn invariants_hold_under_load() {
    let cases = [
        (scenario(torus(4, 2), scouting(1), Routing::Duato, 3, 8), 0.04),
        (scenario(torus(4, 2), scouting(3), Routing::Nbc, 4, 6), 0.04),
        (
            Scenario {
                buffer_depth: 1,
                router_delay: 1,
                ..scenario(torus(4, 2), scouting(2), Routing::DimensionOrder, 2, 5)
            },
            0.03,
        ),
        (scenario(torus(4, 2), Switching::Circuit, Routing::Adaptive, 2, 8), 0.03),
        (
            Scenario {
                traffic: crate::scenario::Traffic::UniformWithSelf,
                ..scenario(torus(4, 2), Switching::Circuit, Routing::Duato, 3, 8)
            },
            0.03,
        ),
        (
            Scenario {
                traffic: crate::scenario::Traffic::Transpose,
                ..scenario(torus(4, 2), scouting(2), Routing::Duato, 3, 8)
            },
            0.02,
        ),
        (
            Scenario {
                ejection: Ejection::Unlimited,
                ..scenario(torus(6, 2), Switching::Circuit, Routing::Adaptive, 1, 16)
            },
            0.01,
        ),
    ];
    for (s, rate) in &cases {
        let engine = run_checked(s, *rate, 6_000, 9);
        assert!(engine.delivered_total > 100, "{s:?}: only {} delivered", engine.delivered_total);
        assert_eq!(
            engine.window.delivered_flits,
            engine.window.delivered * u64::from(s.message_length) + engine.flits_in_delivery(),
            "{s:?}: every delivered flit belongs to a delivered or ejecting message"
        );
    }
}

#[test]
fn deadlock_free_routings_stay_deadlock_free_with_scouting() {
    // Overload (3 times the wormhole saturation of these networks): no deadlock, work goes on.
    let cases = [
        scenario(torus(4, 2), scouting(1), Routing::DimensionOrder, 2, 8),
        scenario(torus(4, 2), scouting(3), Routing::Duato, 3, 8),
        scenario(torus(4, 2), scouting(2), Routing::Nbc, 3, 8),
        scenario(torus(4, 2), Switching::Circuit, Routing::Adaptive, 1, 8),
        scenario(torus(4, 2), Switching::Circuit, Routing::Adaptive, 4, 8),
        scenario(Topology::Mesh { radix: 4, dimensions: 2 }, scouting(2), Routing::OddEven, 1, 8),
        scenario(Topology::Mesh { radix: 4, dimensions: 2 }, scouting(1), Routing::WestFirst, 2, 8),
    ];
    for s in &cases {
        let options = SimOptions {
            warmup_cycles: 0,
            cycles: 20_000,
            deadlock_cycles: 1_000,
            saturation_backlog: 1e9,
            ..SimOptions::default()
        };
        let m = simulate(s, 0.1, &options, 11, None).unwrap();
        assert_ne!(m.status, Status::Deadlock, "{s:?}: {:?}", m.detail);
        assert!(m.throughput.unwrap() > 0.005, "{s:?}: {:?}", m.throughput);
    }
}

/// Scouting on adaptive routing without virtual channels can deadlock once headers run out of
/// backtracks (K = 1, long messages, heavy load: within about 2,000 cycles on these networks);
/// the run then stops with the waiting cycle named, never hangs. (On a 4x4 torus with K = 1 the
/// same load merely saturates: backtracking often resolves the conflict.)
#[test]
fn adaptive_scouting_deadlock_is_reported() {
    let options = SimOptions {
        warmup_cycles: 0,
        cycles: 100_000,
        deadlock_cycles: 500,
        saturation_backlog: 1e9,
        ..SimOptions::default()
    };
    for (topology, k, m) in [(torus(8, 2), 1, 32), (torus(8, 1), 2, 16)] {
        let s = scenario(topology, scouting(k), Routing::Adaptive, 1, m);
        for seed in 1..=2 {
            let r = simulate(&s, 0.5 / f64::from(m), &options, seed, None).unwrap();
            assert_eq!(r.status, Status::Deadlock, "{s:?} seed {seed}: {:?}", r.detail);
            let detail = r.detail.unwrap();
            assert!(detail.contains("waiting cycle") && detail.contains("held by"), "{detail}");
            assert!(r.cycles.unwrap() < 100_000);
        }
    }
}

#[test]
fn the_circuit_retry_limit_drops_and_reports() {
    let s = Scenario {
        circuit_retry_limit: Some(0),
        ..scenario(torus(4, 2), Switching::Circuit, Routing::Adaptive, 1, 16)
    };
    let engine = run_checked(&s, 0.03, 5_000, 3);
    assert!(engine.switching.dropped > 0);
    let options = SimOptions { warmup_cycles: 500, cycles: 4_000, ..SimOptions::default() };
    let m = simulate(&s, 0.01, &options, 3, None).unwrap();
    let drops = m.intermediate("drops").unwrap();
    assert!(drops > 0.0, "{m:?}");
    assert!(m.detail.unwrap().contains("dropped"));
    // The latency averages the delivered messages only.
    assert!(m.latency.unwrap() >= 16.0);
}

#[test]
fn measurements_follow_the_models_keys() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 10_000, ..SimOptions::default() };
    let s = scenario(torus(8, 2), scouting(3), Routing::Duato, 4, 16);
    let m = simulate(&s, 0.01, &options, 2, None).unwrap();
    assert_eq!(m.status, Status::Ok, "{:?}", m.detail);
    for key in ["p_v", "v_bar", "mean_c00", "setup_time", "pb_0", "backtracks_per_message"] {
        assert!(m.intermediate(key).is_some(), "{key} missing: {:?}", m.intermediates);
    }
    assert!(m.intermediate("backtracks_per_message").unwrap() > 0.0);
    let setup = m.intermediate("setup_time").unwrap();
    assert!((setup - (m.network_latency.unwrap() - 16.0)).abs() < 1e-9);
    // At light load the header needs about its hops to reach the destination.
    let light = simulate(&s, 0.0005, &options, 2, None).unwrap();
    let c00 = light.intermediate("mean_c00").unwrap();
    assert!((c00 - light.hops.unwrap()).abs() < 0.2, "{c00} vs {:?}", light.hops);
    // K = 3: min(3, j) acknowledgement hops for the channel at position j, 3H - 3 for H >= 3
    // hops (1 for H = 1, 3 for H = 2), plus the rare re-reservations after a backtrack.
    let acks = light.intermediate("ack_hops_per_message").unwrap();
    let expected = 3.0 * light.hops.unwrap() - 3.0;
    assert!((acks - expected).abs() < 0.5, "{acks} vs {expected}");

    let s = scenario(torus(8, 2), Switching::Circuit, Routing::Adaptive, 2, 16);
    let m = simulate(&s, 0.006, &options, 2, None).unwrap();
    assert_eq!(m.status, Status::Ok, "{:?}", m.detail);
    let p_s = m.intermediate("p_s").unwrap();
    assert!(p_s > 0.0 && p_s < 1.0, "{p_s}");
    let p_f: f64 = (1..=8).filter_map(|j| m.intermediate(&format!("p_f_{j}"))).sum();
    assert!((p_s + p_f - 1.0).abs() < 1e-9, "{p_s} + {p_f}");
    let retries = m.intermediate("retries_per_message").unwrap();
    assert!(
        (retries - (1.0 - p_s) / p_s).abs() < 0.05 * retries.max(0.01),
        "{retries} vs P_S {p_s}"
    );
    // The source holds its injection VC for the set-up and the M flits at least.
    assert!(m.intermediate("t_n").unwrap() >= 16.0 + 2.0 * 4.0);
    assert_eq!(m.intermediate("drops"), Some(0.0));
}

#[test]
fn same_seed_same_results_for_scouting_and_circuit() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 6_000, ..SimOptions::default() };
    for s in [
        scenario(torus(4, 2), scouting(2), Routing::Duato, 3, 8),
        scenario(torus(4, 2), Switching::Circuit, Routing::Adaptive, 2, 8),
    ] {
        let a = simulate(&s, 0.03, &options, 17, None).unwrap();
        let b = simulate(&s, 0.03, &options, 17, None).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn circuit_parameters_are_checked() {
    let base = scenario(torus(4, 2), scouting(2), Routing::Duato, 3, 8);
    assert!(check(&Scenario { circuit_backoff: Some(2), ..base.clone() }).is_err());
    assert!(check(&Scenario { circuit_retry_limit: Some(2), ..base.clone() }).is_err());
    assert!(check(&base).is_ok());
    let circuit = Scenario { switching: Switching::Circuit, circuit_backoff: Some(4), ..base };
    assert!(check(&circuit).is_ok());
    // Unset, the fields are left out of the serialized scenario: existing ids are unchanged.
    let json = serde_json::to_string(&Scenario::new(torus(4, 2))).unwrap();
    assert!(!json.contains("circuit_"), "{json}");
}

/// Random networks, routings, buffer depths, router delays, ejection, K and back-off: every
/// invariant holds at regular steps (no VC leaks, conservation with drops, consistent chains).
#[test]
fn random_configurations_keep_the_invariants() {
    let mut rng = super::rng::Rng::new(91);
    let mut pick = |n: u64| rng.below(n) as u32;
    let mut checked = 0;
    while checked < 40 {
        let topology = match pick(3) {
            0 => torus(2 + pick(5), 1 + pick(2)),
            1 => Topology::Mesh { radix: 2 + pick(4), dimensions: 1 + pick(2) },
            _ => Topology::Hypercube { dimensions: 1 + pick(5) },
        };
        let routing = [Routing::DimensionOrder, Routing::Adaptive, Routing::Duato, Routing::Nbc]
            [pick(4) as usize];
        let circuit = pick(2) == 0;
        let s = Scenario {
            switching: if circuit { Switching::Circuit } else { scouting(1 + pick(6)) },
            routing,
            virtual_channels: 1 + pick(8),
            buffer_depth: 1 + pick(4),
            router_delay: pick(3),
            message_length: 1 + pick(20),
            ejection: if pick(2) == 0 { Ejection::Single } else { Ejection::Unlimited },
            circuit_backoff: if circuit { Some(pick(4)) } else { None },
            circuit_retry_limit: if circuit { Some(pick(30)) } else { None },
            ..Scenario::new(topology)
        };
        if check(&s).is_err() {
            continue;
        }
        let rate = f64::from(1 + pick(10)) * 0.05 / f64::from(s.message_length);
        let mut engine = Engine::new(&s, rate, u64::from(pick(1000)), &plan(0, 2_000)).unwrap();
        engine.open_window();
        for cycle in 1..=2_000u64 {
            engine.step();
            if cycle % 97 == 0 {
                engine.check_invariants();
            }
        }
        engine.check_invariants();
        checked += 1;
    }
}

/// Worms shorter than the scouting distance (`scouting_distance >= message_length`): at zero
/// load the data stays K links behind the header whatever M, so the exact latency holds
/// (buffers of at least 2 flits, as the derivation assumes).
#[test]
fn short_worms_have_the_exact_zero_load_latency() {
    for (k, m) in [(3, 1), (3, 2), (3, 3), (6, 2), (6, 5), (10, 4)] {
        for depth in [2, 4] {
            for delay in [0, 2] {
                let s = Scenario {
                    buffer_depth: depth,
                    router_delay: delay,
                    ..scenario(torus(6, 2), scouting(k), Routing::Duato, 3, m)
                };
                assert_every_pair(&s, |hops| scouting_zero_load(hops, m, k, delay));
            }
        }
    }
}

/// Under contention a header backtracks to within K links of its data; the gate K - 1 links
/// behind it then lies behind a short worm's tail. Issue 19: this panicked (index out of
/// bounds) for `switching=scouting scouting_distance=3 message_length=2` at a high load.
#[test]
fn short_worms_keep_the_invariants_under_backtracking() {
    let heavy = [
        // The command line (8x8 torus, adaptive, V = 3), at its load of 0.5.
        (scenario(torus(8, 2), scouting(3), Routing::Adaptive, 3, 2), 0.5),
        (scenario(torus(4, 2), scouting(6), Routing::Duato, 3, 1), 0.4),
        (
            Scenario {
                buffer_depth: 1,
                router_delay: 1,
                ..scenario(torus(4, 2), scouting(4), Routing::Nbc, 3, 3)
            },
            0.3,
        ),
        (scenario(Topology::Hypercube { dimensions: 4 }, scouting(5), Routing::Duato, 2, 2), 0.4),
    ];
    for (s, rate) in &heavy {
        let engine = run_checked(s, *rate, 2_000, 4);
        assert!(engine.switching.counts.backtracked() > 0, "{s:?}: no header backtracked");
        assert!(engine.delivered_total > 100, "{s:?}: only {} delivered", engine.delivered_total);
    }
    for s in [
        scenario(torus(4, 2), scouting(3), Routing::Duato, 3, 2),
        scenario(torus(4, 2), scouting(8), Routing::DimensionOrder, 2, 1),
    ] {
        let engine = drain_burst(&s, 6, 7);
        assert!(engine.switching.counts.backtracked() > 0, "{s:?}: no header backtracked");
    }
    // Through the public entry point, with the measurement the command line prints.
    let options = SimOptions { warmup_cycles: 0, cycles: 2_000, ..SimOptions::default() };
    let s = &heavy[0].0;
    let m = simulate(s, 0.5, &options, 1, None).unwrap();
    assert!(m.messages_measured.unwrap_or(0) > 0, "{m:?}");
}
