//! Simulator tests: zero-load latency, exact queueing results under load, conservation, deadlock
//! freedom, reproducibility.
//!
//! Networks are small so that the whole suite runs in well under a minute at opt-level 2.

use super::engine::{Engine, RunPlan};
use super::network::hop::NO_LINK;
use super::topology::Geometry;
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Topology};

fn scenario(topology: Topology, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario { routing, virtual_channels: v, message_length: m, ..Scenario::new(topology) }
}

fn torus(k: u32, n: u32) -> Topology {
    Topology::Torus { radix: k, dimensions: n }
}

fn plan(warmup: u64, cycles: u64) -> RunPlan {
    RunPlan::fixed(warmup, cycles)
}

/// Runs `scenario` at `rate` for `cycles` cycles with the window open, checking the engine's
/// invariants every `every` cycles; returns the messages delivered meanwhile.
pub(crate) fn delivered_checking_invariants(
    scenario: &Scenario,
    rate: f64,
    cycles: u64,
    every: u64,
) -> u64 {
    let mut engine = Engine::new(scenario, rate, 5, &plan(0, cycles)).unwrap();
    engine.open_window();
    let before = engine.delivered_total;
    for cycle in 1..=cycles {
        engine.step();
        if cycle % every == 0 {
            engine.check_invariants();
        }
    }
    engine.delivered_total - before
}

/// `s` with BookSim's router and `depth`-flit buffers, as `runner simulate router=booksim
/// buffer_depth=D` sets them (the one list, `RouterPreset::knobs`).
pub(crate) fn booksim_router(mut s: Scenario, depth: u32) -> Scenario {
    let pairs = ["router=booksim".to_owned(), format!("buffer_depth={depth}")];
    crate::cli::scenario_args::apply(&mut s, &pairs).unwrap();
    s
}

/// Runs `s` at `rate` for `cycles` cycles with the window open, checking the engine's
/// invariants and calling `look` every `every` cycles; then closes the window and runs until
/// every measured message is delivered (asserted). Returns the engine.
pub(crate) fn run_and_drain(
    s: &Scenario,
    rate: f64,
    seed: u64,
    (cycles, every): (u64, u64),
    mut look: impl FnMut(&Engine),
) -> Engine {
    check(s).unwrap();
    let mut engine = Engine::new(s, rate, seed, &plan(0, cycles)).unwrap();
    engine.open_window();
    for cycle in 1..=cycles {
        engine.step();
        if cycle % every == 0 {
            engine.check_invariants();
            look(&engine);
        }
    }
    engine.close_window();
    for _ in 0..50_000 {
        if engine.window.outstanding == 0 {
            break;
        }
        engine.step();
    }
    engine.check_invariants();
    assert_eq!(engine.window.outstanding, 0, "{s:?}: not drained");
    engine
}

/// Sends one message through an otherwise empty network; returns (latency, hops).
fn lone_message(scenario: &Scenario, source: u32, dest: u32) -> (f64, f64) {
    lone_message_with(scenario, source, dest, None)
}

/// [`lone_message`] with the message's tie-break bits or dragonfly intermediate group given
/// (`None`: drawn as usual).
pub(crate) fn lone_message_with(
    scenario: &Scenario,
    source: u32,
    dest: u32,
    ties: Option<u32>,
) -> (f64, f64) {
    let engine = lone_run(scenario, source, dest, ties);
    (engine.window.latency_sum, engine.window.hops_sum)
}

/// Sends one message (`ties` as in [`lone_message_with`]) through an otherwise empty network
/// and runs until every measured message it caused is delivered; returns the engine.
pub(crate) fn lone_run(scenario: &Scenario, source: u32, dest: u32, ties: Option<u32>) -> Engine {
    let mut engine = Engine::new(scenario, 0.0, 1, &plan(0, 1)).unwrap();
    engine.open_window();
    match ties {
        Some(ties) => engine.send_with(source, dest, ties),
        None => engine.send(source, dest),
    }
    for _ in 0..100_000 {
        engine.step();
        if engine.window.outstanding == 0 {
            engine.check_invariants();
            return engine;
        }
    }
    panic!("message {source}->{dest} not delivered");
}

/// Options for a run far past saturation: no warm-up, `cycles` cycles, no backlog limit (the
/// run goes on), deadlock after 1,000 idle cycles.
pub(crate) fn overload_options(cycles: u64) -> SimOptions {
    SimOptions {
        warmup_cycles: 0,
        cycles,
        deadlock_cycles: 1_000,
        saturation_backlog: 1e9,
        ..SimOptions::default()
    }
}

/// Runs `engine` for `cycles` cycles with the window open, checking its invariants every 101
/// cycles; returns what two runs that should agree bit for bit are compared on: the flit
/// hops, the messages delivered and the window's counters.
pub(crate) fn fingerprint(mut engine: Engine, cycles: u64) -> (u64, u64, String) {
    engine.open_window();
    for cycle in 1..=cycles {
        engine.step();
        if cycle % 101 == 0 {
            engine.check_invariants();
        }
    }
    assert!(engine.window.flit_hops > 0, "nothing moved");
    (engine.flit_hops, engine.delivered_total, format!("{:?}", engine.window))
}

/// The channel-dependency graph of the minimal routes between every pair of nodes
/// `0..terminals`: an edge from each channel a route may hold to each channel it may request
/// next, over every minimal step (`all`) or over the first one only (dimension order).
pub(crate) fn route_dependencies(
    g: &Geometry,
    terminals: u32,
    all: bool,
) -> std::collections::HashMap<u32, std::collections::HashSet<u32>> {
    let mut edges: std::collections::HashMap<u32, std::collections::HashSet<u32>> =
        std::collections::HashMap::new();
    for s in 0..terminals {
        for d in (0..terminals).filter(|&d| d != s) {
            // (router, channel the header arrived on) pairs still to expand.
            let mut stack = vec![(s, u32::MAX)];
            let mut seen = std::collections::HashSet::new();
            while let Some((cur, held)) = stack.pop() {
                if cur == d || !seen.insert((cur, held)) {
                    continue;
                }
                let mut first = true;
                g.minimal_steps(cur, d, |step| {
                    if !(all || first) {
                        return;
                    }
                    first = false;
                    let channel = g.channel(cur, step.port);
                    if held != u32::MAX {
                        edges.entry(held).or_default().insert(channel);
                    }
                    stack.push((g.downstream(channel), channel));
                });
            }
        }
    }
    edges
}

/// Whether a dependency graph (edges from each channel) has a topological order (Kahn's
/// algorithm). Asserts that it has edges, so that a test of nothing fails.
pub(crate) fn acyclic(
    edges: &std::collections::HashMap<u32, std::collections::HashSet<u32>>,
) -> bool {
    let mut indegree: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (&from, tos) in edges {
        indegree.entry(from).or_default();
        for &to in tos {
            *indegree.entry(to).or_default() += 1;
        }
    }
    assert!(!indegree.is_empty(), "no dependencies");
    let mut ready: Vec<u32> = indegree.iter().filter(|e| *e.1 == 0).map(|e| *e.0).collect();
    let mut ordered = 0;
    while let Some(c) = ready.pop() {
        ordered += 1;
        for &to in edges.get(&c).into_iter().flatten() {
            if let Some(left) = indegree.get_mut(&to) {
                *left -= 1;
                if *left == 0 {
                    ready.push(to);
                }
            }
        }
    }
    ordered == indegree.len()
}

/// The verdict of `scenario` with `traffic`, 4-flit buffers and interleaved ejection, offered
/// `flits` per node and cycle: 10,000 cycles after 2,000 of warm-up, seed 5 (the saturation
/// comparisons of the family tests).
pub(crate) fn verdict_at(
    scenario: &Scenario,
    traffic: crate::scenario::Traffic,
    flits: f64,
) -> Status {
    let options = SimOptions { warmup_cycles: 2_000, cycles: 10_000, ..SimOptions::default() };
    let s =
        Scenario { traffic, buffer_depth: 4, ejection: Ejection::Interleaved, ..scenario.clone() };
    let rate = flits / f64::from(s.message_length);
    simulate(&s, rate, &options, 5, None).unwrap().status
}

/// Breadth-first distances from `source` over all links.
pub(crate) fn bfs(geometry: &Geometry, source: u32, routers: u32) -> Vec<u32> {
    let mut distance = vec![u32::MAX; routers as usize];
    distance[source as usize] = 0;
    let mut queue = std::collections::VecDeque::from([source]);
    while let Some(r) = queue.pop_front() {
        for port in 0..geometry.ports_at(r) {
            let to = geometry.downstream(geometry.channel(r, port));
            if to != NO_LINK && distance[to as usize] == u32::MAX {
                distance[to as usize] = distance[r as usize] + 1;
                queue.push_back(to);
            }
        }
    }
    distance
}

/// Runs `scenario` at `rate` for `cycles` cycles from an empty network, checking the engine's
/// bookkeeping every 97 cycles and, at the end, that every delivered flit belongs to a
/// delivered message or to one being delivered; returns the engine for further checks.
pub(crate) fn run_checking_invariants(
    scenario: &Scenario,
    rate: f64,
    seed: u64,
    cycles: u64,
) -> Engine {
    let mut engine = Engine::new(scenario, rate, seed, &plan(0, cycles)).unwrap();
    engine.open_window();
    for cycle in 1..=cycles {
        engine.step();
        if cycle % 97 == 0 {
            engine.check_invariants();
        }
    }
    assert_eq!(
        engine.window.delivered_flits,
        engine.window.delivered * u64::from(scenario.message_length) + engine.flits_in_delivery(),
        "{scenario:?}"
    );
    engine
}

#[test]
fn one_message_latency_is_hops_plus_length() {
    let cases = [
        scenario(torus(5, 2), Routing::DimensionOrder, 2, 7),
        scenario(torus(4, 3), Routing::Duato, 3, 16),
        scenario(torus(6, 2), Routing::Nbc, 5, 4),
        scenario(torus(6, 1), Routing::Adaptive, 1, 1),
        scenario(Topology::Mesh { radix: 4, dimensions: 2 }, Routing::Duato, 2, 9),
        scenario(Topology::Hypercube { dimensions: 4 }, Routing::DimensionOrder, 1, 32),
        Scenario {
            router_delay: 3,
            buffer_depth: 5,
            ejection: Ejection::Unlimited,
            ..scenario(Topology::Hypercube { dimensions: 3 }, Routing::Duato, 4, 5)
        },
        Scenario { ejection: Ejection::Interleaved, ..scenario(torus(4, 2), Routing::Duato, 3, 6) },
        scenario(Topology::Mesh { radix: 5, dimensions: 2 }, Routing::WestFirst, 1, 8),
        Scenario {
            router_delay: 2,
            ..scenario(Topology::Mesh { radix: 6, dimensions: 2 }, Routing::OddEven, 2, 3)
        },
    ];
    for s in &cases {
        let geometry = Geometry::new(&s.topology).unwrap();
        for source in 0..geometry.nodes {
            for dest in (0..geometry.nodes).filter(|&d| d != source) {
                let hops = f64::from(geometry.distance(source, dest));
                let (latency, measured_hops) = lone_message(s, source, dest);
                assert_eq!(measured_hops, hops, "{s:?} {source}->{dest}");
                let expected = hops + f64::from(s.message_length + s.router_delay * hops as u32);
                assert_eq!(latency, expected, "{:?} {source}->{dest}", s.topology);
            }
        }
    }
}

#[test]
fn flits_are_conserved_at_every_batch_boundary() {
    let cases = [
        (scenario(torus(4, 2), Routing::DimensionOrder, 2, 8), 0.03),
        (scenario(torus(4, 2), Routing::Duato, 4, 5), 0.06),
        (scenario(torus(4, 2), Routing::Nbc, 4, 6), 0.05),
        (Scenario { buffer_depth: 1, ..scenario(torus(3, 2), Routing::Adaptive, 3, 4) }, 0.05),
        (
            Scenario {
                ejection: Ejection::Unlimited,
                router_delay: 1,
                ..scenario(Topology::Hypercube { dimensions: 4 }, Routing::Duato, 2, 12)
            },
            0.04,
        ),
    ];
    for (s, rate) in &cases {
        let run = plan(500, 4_000);
        let mut engine = Engine::new(s, *rate, 9, &run).unwrap();
        engine.open_window();
        let batch = engine.batches.length();
        assert_eq!(batch, 50, "4,000 cycles start with 80 raw batches");
        for cycle in 1..=6_000u64 {
            engine.step();
            if cycle % batch == 0 {
                engine.check_invariants();
            }
        }
        assert!(engine.delivered_total > 100, "{s:?}: only {} delivered", engine.delivered_total);
        assert_eq!(
            engine.window.delivered_flits,
            engine.window.delivered * u64::from(s.message_length) + engine.flits_in_delivery(),
            "{s:?}: every delivered flit belongs to a delivered or ejecting message"
        );
    }
}

#[test]
fn low_load_behaves_like_the_zero_load_network() {
    let s = scenario(torus(8, 2), Routing::Duato, 4, 16);
    let options = SimOptions { warmup_cycles: 2_000, cycles: 40_000, ..SimOptions::default() };
    let m = simulate(&s, 0.001, &options, 5, None).unwrap();
    assert_eq!(m.status, Status::Ok);
    let hops = m.hops.unwrap();
    // Mean distance of the 8x8 torus to the 63 other nodes: 4 * 64 / 63.
    assert!((hops - 256.0 / 63.0).abs() < 0.1, "{hops}");
    let latency = m.latency.unwrap();
    assert!(latency > hops + 16.0 && latency < hops + 16.0 + 1.0, "{latency}");
    let throughput = m.throughput.unwrap();
    assert!((throughput - 0.001).abs() < 0.0001, "{throughput}");
    // Little's law on the channels: utilisation = rate * M * hops / (2n).
    let utilization = m.intermediate("channel_utilization").unwrap();
    assert!((utilization - 0.001 * 16.0 * hops / 4.0).abs() < 0.001, "{utilization}");
    let p: f64 = (0..=4).map(|v| m.intermediate(&format!("p_busy_{v}")).unwrap()).sum();
    assert!((p - 1.0).abs() < 1e-9);
    assert!(m.latency_ci95.unwrap() < 0.5);
    assert!(m.multiplexing_degree.unwrap() >= 1.0);
}

#[test]
fn same_seed_gives_identical_results() {
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions { warmup_cycles: 1_000, cycles: 10_000, ..SimOptions::default() };
    let a = simulate(&s, 0.04, &options, 17, None).unwrap();
    let b = simulate(&s, 0.04, &options, 17, None).unwrap();
    let c = simulate(&s, 0.04, &options, 18, None).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.latency, c.latency);
}

/// Accepted throughput far beyond saturation: an estimate of the saturation rate.
fn saturation_rate(s: &Scenario) -> f64 {
    let options = SimOptions {
        warmup_cycles: 3_000,
        cycles: 10_000,
        saturation_backlog: 1e9,
        ..SimOptions::default()
    };
    let m = simulate(s, 1.0 / f64::from(s.message_length), &options, 3, None).unwrap();
    m.throughput.unwrap()
}

#[test]
fn deadlock_free_routings_survive_one_and_a_half_times_saturation() {
    let cases = [
        scenario(torus(4, 2), Routing::DimensionOrder, 2, 8),
        scenario(torus(5, 2), Routing::DimensionOrder, 3, 4),
        scenario(torus(4, 2), Routing::Duato, 3, 8),
        scenario(torus(3, 3), Routing::Duato, 3, 6),
        scenario(torus(4, 2), Routing::Nbc, 3, 8),
        scenario(torus(6, 2), Routing::Nbc, 5, 8),
        scenario(Topology::Mesh { radix: 4, dimensions: 2 }, Routing::DimensionOrder, 1, 8),
        scenario(Topology::Mesh { radix: 4, dimensions: 2 }, Routing::Duato, 2, 8),
        scenario(Topology::Hypercube { dimensions: 4 }, Routing::DimensionOrder, 1, 8),
        scenario(Topology::Hypercube { dimensions: 4 }, Routing::Duato, 2, 8),
        scenario(Topology::Mesh { radix: 4, dimensions: 2 }, Routing::WestFirst, 1, 8),
        scenario(Topology::Mesh { radix: 5, dimensions: 2 }, Routing::OddEven, 1, 8),
        scenario(Topology::Mesh { radix: 6, dimensions: 2 }, Routing::OddEven, 2, 8),
    ];
    for s in &cases {
        let saturation = saturation_rate(s);
        assert!(saturation > 0.0, "{s:?}");
        let options = SimOptions {
            warmup_cycles: 0,
            cycles: 100_000,
            deadlock_cycles: 1_000,
            saturation_backlog: 1e9,
            ..SimOptions::default()
        };
        let m = simulate(s, 1.5 * saturation, &options, 11, None).unwrap();
        assert_ne!(m.status, Status::Deadlock, "{s:?}: {:?}", m.detail);
        let accepted = m.throughput.unwrap();
        assert!(accepted > 0.8 * saturation, "{s:?}: {accepted} vs {saturation}");
    }
}

#[test]
fn adaptive_without_virtual_channels_deadlocks_and_is_reported() {
    let s = scenario(torus(4, 2), Routing::Adaptive, 1, 16);
    let options = SimOptions {
        warmup_cycles: 0,
        cycles: 200_000,
        deadlock_cycles: 500,
        saturation_backlog: 1e9,
        ..SimOptions::default()
    };
    let m = simulate(&s, 0.2, &options, 1, None).unwrap();
    assert_eq!(m.status, Status::Deadlock);
    let detail = m.detail.unwrap();
    assert!(detail.contains("waiting cycle") && detail.contains("held by message"), "{detail}");
    assert!(m.cycles.unwrap() < 200_000);
    // With the default options the source queues overflow before the watchdog fires: the
    // saturation check recognises the deadlock.
    let s = scenario(torus(8, 2), Routing::Adaptive, 1, 32);
    let m = simulate(&s, 0.02, &SimOptions::default(), 1, None).unwrap();
    assert_eq!(m.status, Status::Deadlock, "{:?}", m.detail);
    assert!(m.detail.unwrap().contains("waiting cycle"));
}

#[test]
fn overload_stops_early_as_saturated() {
    // Short messages in deep buffers compact behind a blocked header: not a deadlock.
    let cases = [
        scenario(torus(4, 2), Routing::DimensionOrder, 2, 16),
        Scenario { buffer_depth: 8, ..scenario(torus(4, 2), Routing::Duato, 3, 4) },
        Scenario { buffer_depth: 8, ..scenario(torus(4, 2), Routing::Nbc, 4, 4) },
        scenario(Topology::Hypercube { dimensions: 5 }, Routing::Duato, 2, 16),
    ];
    for s in &cases {
        let options =
            SimOptions { warmup_cycles: 1_000, cycles: 1_000_000, ..SimOptions::default() };
        let m = simulate(s, 1.5 / f64::from(s.message_length), &options, 1, None).unwrap();
        assert_eq!(m.status, Status::Saturated, "{s:?}: {:?}", m.detail);
        assert!(m.detail.is_some() && m.latency.is_none());
        assert!(m.throughput.unwrap() > 0.0 && m.cycles.unwrap() < 100_000);
    }
}

#[test]
fn target_precision_stops_when_the_interval_is_narrow() {
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions {
        warmup_cycles: 1_000,
        cycles: 2_000,
        target_precision: Some(0.01),
        max_cycles: 2_000_000,
        ..SimOptions::default()
    };
    let m = simulate(&s, 0.03, &options, 2, None).unwrap();
    assert_eq!(m.status, Status::Ok, "{:?}", m.detail);
    let (latency, half) = (m.latency.unwrap(), m.latency_ci95.unwrap());
    assert!(half <= 0.011 * latency, "{half} vs {latency}");
    assert!(m.intermediate("batches").unwrap() >= 20.0);
    assert!(m.cycles.unwrap() < 2_000_000);
    // A light load is precise at once, but runs the minimum window `cycles`.
    let options = SimOptions { cycles: 50_000, target_precision: Some(0.05), ..options };
    let m = simulate(&s, 0.01, &options, 2, None).unwrap();
    assert_eq!(m.status, Status::Ok);
    assert!(m.intermediate("window_cycles").unwrap() >= 50_000.0, "{m:?}");
}

#[test]
fn the_mser_truncation_point_is_reported_and_short_at_light_load() {
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions { warmup_cycles: 1_000, cycles: 20_000, ..SimOptions::default() };
    let m = simulate(&s, 0.02, &options, 3, None).unwrap();
    let truncation = m.intermediate("mser_truncation_cycles").expect("reported");
    assert!(truncation < 1_000.0, "an empty 4x4 torus warms up within the warm-up: {truncation}");
}

#[test]
fn progress_is_reported() {
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions { warmup_cycles: 0, cycles: 10_000, ..SimOptions::default() };
    let calls = std::sync::atomic::AtomicU64::new(0);
    let report = |done: u64, planned: u64| {
        assert!(done <= planned);
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::ops::ControlFlow::Continue(())
    };
    let watched = simulate(&s, 0.01, &options, 2, Some(&report)).unwrap();
    assert!(calls.into_inner() >= 2);
    let plain = simulate(&s, 0.01, &options, 2, None).unwrap();
    assert_eq!(watched, plain, "a callback that never breaks changes nothing");
}

#[test]
fn a_progress_callback_can_stop_a_run() {
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    // Planned for far longer than the test may take: the callback stops it at its first call.
    let options = SimOptions { warmup_cycles: 0, cycles: 1_000_000_000, ..SimOptions::default() };
    let stop = |_: u64, _: u64| std::ops::ControlFlow::Break(());
    let error = simulate(&s, 0.01, &options, 2, Some(&stop)).expect_err("stopped");
    assert!(error.is_cancelled(), "{error}");
}

#[test]
fn unsupported_scenarios_are_errors() {
    let base = scenario(torus(8, 2), Routing::Duato, 4, 32);
    let bad = [
        Scenario { topology: Topology::FatTree { processors: 64 }, ..base.clone() },
        Scenario { routing: Routing::UpDown, ..base.clone() },
        Scenario { fault_rate: 0.1, ..base.clone() },
        Scenario { broadcast_fraction: 0.5, ..base.clone() },
        Scenario { message_length_second_moment: Some(2000.0), ..base.clone() },
        Scenario { buffer_depth: 0, ..base.clone() },
        Scenario { virtual_channels: 2, ..base.clone() },
        Scenario { routing: Routing::Nbc, ..scenario(torus(5, 2), Routing::Nbc, 8, 8) },
        Scenario { topology: torus(1, 2), ..base.clone() },
    ];
    for s in &bad {
        assert!(check(s).is_err(), "{s:?}");
        assert!(simulate(s, 0.01, &SimOptions::default(), 1, None).is_err());
    }
    assert!(check(&base).is_ok());
    assert!(simulate(&base, -1.0, &SimOptions::default(), 1, None).is_err());
    let absurd = simulate(&base, 1e6, &SimOptions::default(), 1, None).unwrap();
    assert_eq!(absurd.status, Status::Saturated);
    let no_window = SimOptions { cycles: 0, ..SimOptions::default() };
    assert!(simulate(&base, 0.01, &no_window, 1, None).is_err());
    for (_, s, _, _) in bench_configurations() {
        assert!(check(&s).is_ok());
    }
}

#[test]
fn the_bitmap_walk_gives_the_results_of_the_active_order_walk() {
    // Phase A in channel order (large networks) and in `active` order (small ones) must agree
    // bit for bit: same moves, same routing order, same random draws.
    use crate::scenario::Switching;
    let cases = [
        scenario(torus(6, 2), Routing::DimensionOrder, 2, 8),
        scenario(torus(4, 3), Routing::Duato, 3, 5),
        scenario(Topology::Hypercube { dimensions: 5 }, Routing::Duato, 4, 6),
        scenario(Topology::Mesh { radix: 5, dimensions: 2 }, Routing::Adaptive, 2, 1),
        Scenario { ejection: Ejection::Interleaved, ..scenario(torus(5, 2), Routing::Duato, 3, 4) },
        Scenario { ejection: Ejection::Unlimited, ..scenario(torus(6, 2), Routing::Nbc, 4, 6) },
        Scenario {
            switching: Switching::Scouting { scouting_distance: 2 },
            ..scenario(torus(4, 2), Routing::Duato, 4, 8)
        },
        Scenario {
            switching: Switching::Circuit,
            ..scenario(torus(4, 2), Routing::Adaptive, 4, 8)
        },
        Scenario {
            broadcast_fraction: 0.05,
            ejection: Ejection::Unlimited,
            ..scenario(Topology::Hypercube { dimensions: 4 }, Routing::Duato, 4, 8)
        },
    ];
    for s in &cases {
        let run = |bitmap: bool| {
            let engine = Engine::new(s, 0.03, 11, &plan(0, 3_000)).unwrap();
            fingerprint(engine.with_bitmap_walk(bitmap), 3_000)
        };
        assert_eq!(run(true), run(false), "{s:?}");
    }
}

#[test]
fn one_network_on_several_threads_gives_the_results_of_one() {
    // Phase A and phase B's flit counts split by ranges of channels (`engine::split`) must
    // agree bit for bit with one thread, at any number of threads, on every family of the
    // benchmark (the bitmap walk forced, so that small networks split too) and on the
    // features phase B's events drive: broadcasts, packets, replies, faults, every ejection.
    // Scouting and circuit switching, and the timed engine, do not split: the same runs.
    use crate::scenario::Switching;
    let mut cases: Vec<(Scenario, f64)> =
        bench_configurations().into_iter().map(|(_, s, rate, _)| (s, rate)).collect();
    cases.extend([
        (scenario(torus(6, 2), Routing::DimensionOrder, 2, 8), 0.03),
        (
            Scenario {
                ejection: Ejection::Interleaved,
                ..scenario(torus(5, 2), Routing::Duato, 3, 4)
            },
            0.05,
        ),
        (
            Scenario { ejection: Ejection::Unlimited, ..scenario(torus(6, 2), Routing::Nbc, 4, 6) },
            0.03,
        ),
        (Scenario { packet_size: Some(4), ..scenario(torus(4, 2), Routing::Duato, 3, 16) }, 0.01),
        (Scenario { reply_length: Some(4), ..scenario(torus(4, 2), Routing::Duato, 6, 4) }, 0.03),
        (Scenario { fault_rate: 0.05, ..scenario(torus(6, 2), Routing::Duato, 4, 8) }, 0.01),
        (
            Scenario {
                switching: Switching::Circuit,
                ..scenario(torus(4, 2), Routing::Adaptive, 4, 8)
            },
            0.01,
        ),
        (Scenario { router_delay: 1, ..scenario(torus(4, 3), Routing::Duato, 3, 5) }, 0.02),
        (
            Scenario {
                switching: Switching::VirtualCutThrough,
                buffer_depth: 6,
                ..scenario(torus(5, 2), Routing::Duato, 3, 6)
            },
            0.03,
        ),
    ]);
    for (s, rate) in &cases {
        let run = |threads: usize, every_other: bool| {
            let engine = Engine::new(s, *rate, 11, &plan(0, 600)).unwrap();
            fingerprint(engine.with_bitmap_walk(true).with_threads(threads, every_other), 600)
        };
        let one = run(1, false);
        for threads in [2, 3, 4] {
            assert_eq!(run(threads, false), one, "{threads} threads: {s:?}");
        }
        // Cycles split and cycles not, mixed (`Split::pays`), give the same results too.
        assert_eq!(run(2, true), one, "every other cycle split: {s:?}");
    }
}

#[test]
fn a_large_network_simulated_on_several_threads_measures_what_one_thread_measures() {
    // The whole run on the split's pool (`Engine::run`), measured end to end: every output
    // field at 2, 3 and 4 threads is one thread's, below saturation, past it (the run stops
    // early as saturated) and under virtual cut-through.
    use crate::scenario::Switching;
    let dimension_order = scenario(torus(64, 2), Routing::DimensionOrder, 2, 8);
    let cases = [
        (dimension_order.clone(), 0.002),
        (scenario(torus(64, 2), Routing::Duato, 3, 8), 0.012),
        (
            Scenario {
                switching: Switching::VirtualCutThrough,
                buffer_depth: 8,
                ..dimension_order
            },
            0.003,
        ),
    ];
    let mut statuses = Vec::new();
    for (s, rate) in &cases {
        assert!(uses_threads(s), "{s:?}");
        let run = |threads: usize| {
            let options = SimOptions {
                warmup_cycles: 100,
                cycles: 300,
                saturation_backlog: 1.0,
                threads,
                ..SimOptions::default()
            };
            let measured = simulate(s, *rate, &options, 5, None).unwrap();
            (measured.status, serde_json::to_string(&measured).unwrap())
        };
        let one = run(1);
        statuses.push(one.0);
        for threads in [2, 3, 4] {
            assert_eq!(run(threads), one, "{threads} threads: {s:?}");
        }
    }
    assert_eq!(statuses, [Status::Ok, Status::Saturated, Status::Ok]);
}

#[test]
fn uses_threads_names_the_runs_that_split() {
    // `sim::uses_threads`, which the pipeline asks before it hands a task more than one core,
    // must name exactly the runs whose engine starts its threads: a large network (64 x 64
    // with V = 2 is the smallest torus that walks the bitmap) under untimed wormhole or
    // virtual cut-through switching, without an input speedup, an injection channel or the
    // separable switch allocator.
    use crate::scenario::{Injection, SwitchAllocator, Switching};
    let large = scenario(torus(64, 2), Routing::DimensionOrder, 2, 8);
    let cases = [
        (large.clone(), true),
        (scenario(torus(32, 2), Routing::DimensionOrder, 2, 8), false),
        (scenario(torus(32, 2), Routing::Duato, 4, 8), false),
        (scenario(torus(64, 2), Routing::Duato, 3, 8), true),
        (
            Scenario { switching: Switching::VirtualCutThrough, buffer_depth: 8, ..large.clone() },
            true,
        ),
        (Scenario { switching: Switching::Circuit, ..large.clone() }, false),
        (Scenario { channel_latency: Some(2), ..large.clone() }, false),
        (Scenario { input_speedup: Some(2), ..large.clone() }, false),
        (Scenario { injection: Injection::Channel, ..large.clone() }, false),
        (Scenario { switch_allocator: SwitchAllocator::Islip, ..large.clone() }, false),
    ];
    for (s, splits) in &cases {
        assert_eq!(crate::sim::uses_threads(s), *splits, "{s:?}");
        let engine = Engine::new(s, 0.001, 3, &RunPlan { threads: 2, ..plan(0, 10) }).unwrap();
        assert_eq!(engine.is_split(), *splits, "{s:?}");
    }
    // A cycle splits only with enough active channels (`Split::pays`; test builds: 64 per
    // thread): a network filling from empty runs its first cycles on one thread.
    let mut engine = Engine::new(&large, 0.002, 3, &RunPlan { threads: 2, ..plan(0, 300) })
        .unwrap()
        .with_bitmap_walk(true);
    for _ in 0..300 {
        engine.step();
    }
    let (asked, split) = engine.split_cycles();
    assert!(asked == 300 && split > 0 && split < asked, "{split} of {asked} cycles split");
}

#[test]
fn skipped_retries_give_the_results_of_retrying_every_cycle() {
    // A blocked header's retries are skipped until a VC is released at its router
    // (`engine::route`; with the separable VC allocator, BookSim's router, its request):
    // the runs must agree bit for bit with every retry made, past saturation too, where most
    // attempts fail.
    use crate::scenario::{GlobalArrangement, Switching, VcAllocator};
    let dragonfly = |routing, v| {
        let topology = Topology::Dragonfly {
            terminals_per_router: 2,
            routers_per_group: 4,
            global_links_per_router: 2,
            global_arrangement: GlobalArrangement::default(),
        };
        scenario(topology, routing, v, 4)
    };
    let tree = Topology::KaryNTree { radix: 4, dimensions: 2, up_links_per_switch: None };
    let hyperx =
        Topology::HyperX { radix: 4, dimensions: 2, terminals_per_router: 2, trunking: None };
    let cases = [
        (scenario(torus(6, 2), Routing::DimensionOrder, 2, 8), 0.05),
        (scenario(torus(4, 3), Routing::Duato, 3, 5), 0.06),
        (scenario(Topology::Hypercube { dimensions: 5 }, Routing::Duato, 4, 6), 0.05),
        (scenario(Topology::Mesh { radix: 5, dimensions: 2 }, Routing::Adaptive, 2, 4), 0.05),
        (
            Scenario {
                ejection: Ejection::Interleaved,
                ..scenario(torus(5, 2), Routing::Duato, 3, 4)
            },
            0.08,
        ),
        (
            Scenario { ejection: Ejection::Unlimited, ..scenario(torus(6, 2), Routing::Nbc, 4, 6) },
            0.05,
        ),
        (
            Scenario {
                vc_allocator: VcAllocator::Sequential,
                ..booksim_router(scenario(torus(4, 2), Routing::DimensionOrder, 2, 8), 4)
            },
            0.04,
        ),
        (
            Scenario {
                channel_latency: Some(3),
                credit_delay: Some(2),
                ..scenario(torus(4, 2), Routing::DimensionOrder, 2, 8)
            },
            0.04,
        ),
        (
            Scenario {
                switching: Switching::VirtualCutThrough,
                buffer_depth: 8,
                ..scenario(torus(4, 2), Routing::Duato, 3, 8)
            },
            0.05,
        ),
        (
            Scenario {
                reply_length: Some(4),
                outstanding_requests: Some(2),
                ..scenario(torus(4, 2), Routing::DimensionOrder, 4, 4)
            },
            0.08,
        ),
        (booksim_router(scenario(torus(4, 2), Routing::DimensionOrder, 2, 8), 8), 0.06),
        (booksim_router(dragonfly(Routing::Minimal, 3), 8), 0.2),
        (dragonfly(Routing::Minimal, 2), 0.2),
        (dragonfly(Routing::Valiant, 3), 0.15),
        (scenario(tree, Routing::UpDownRandom, 2, 4), 0.2),
        // UGAL and PAR weigh occupancy while their choice is open (those retries are made),
        // and route like any other routing once it is made; the HyperX's UGAL and DAL weigh
        // it at every hop.
        (dragonfly(Routing::Ugal, 3), 0.15),
        (dragonfly(Routing::Ugal, 3), 0.4),
        (dragonfly(Routing::UgalGlobal, 3), 0.3),
        (dragonfly(Routing::Par, 4), 0.3),
        (booksim_router(dragonfly(Routing::UgalBooksim, 3), 8), 0.3),
        (Scenario { vc_allocator: VcAllocator::Sequential, ..dragonfly(Routing::Ugal, 3) }, 0.3),
        (scenario(hyperx.clone(), Routing::Ugal, 4, 4), 0.2),
        (scenario(hyperx, Routing::Dal, 4, 4), 0.2),
    ];
    for (s, rate) in &cases {
        let engine = || Engine::new(s, *rate, 5, &plan(0, 3_000)).unwrap();
        assert!(!engine().releases.is_empty(), "retries are skipped: {s:?}");
        let skipped = fingerprint(engine(), 3_000);
        assert_eq!(skipped, fingerprint(engine().without_skipped_retries(), 3_000), "{s:?}");
    }
}

#[test]
fn a_window_that_measured_nothing_is_an_error_never_ok() {
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions { warmup_cycles: 10, cycles: 100, ..SimOptions::default() };
    let error = simulate(&s, 0.0, &options, 1, None).unwrap_err();
    assert!(error.to_string().contains("nothing was measured"), "{error}");
    assert!(error.to_string().contains("messages_measured = 0"), "{error}");
}

#[test]
fn results_are_pinned() {
    // If this fails, simulation results changed: bump VERSION, then update the numbers.
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions { warmup_cycles: 1_000, cycles: 5_000, ..SimOptions::default() };
    let m = simulate(&s, 0.03, &options, 2024, None).unwrap();
    assert_eq!(VERSION, "sim-1.6.0");
    assert_eq!((m.messages_measured, m.flit_hops, m.cycles), (Some(2368), Some(48117), Some(6011)));
    assert_eq!(m.latency, Some(12.407516891891891));
}

#[test]
fn random_configurations_keep_the_invariants() {
    let mut rng = super::rng::Rng::new(77);
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
        let s = Scenario {
            routing,
            virtual_channels: 1 + pick(8),
            buffer_depth: 1 + pick(4),
            router_delay: pick(3),
            message_length: 1 + pick(20),
            ejection: [Ejection::Single, Ejection::Unlimited, Ejection::Interleaved]
                [pick(3) as usize],
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
        checked += 1;
    }
}

#[test]
fn the_tightest_watchdog_raises_no_false_alarm() {
    // Unless deadlocked, some flit moves in every cycle in which no header sits in a router's
    // pipeline, so deadlock_cycles = router_delay + 1 is safe.
    let cases = [
        (scenario(torus(4, 2), Routing::DimensionOrder, 2, 8), 0.01),
        (scenario(torus(4, 2), Routing::Duato, 3, 8), 0.2),
        (Scenario { buffer_depth: 1, ..scenario(torus(4, 2), Routing::Nbc, 4, 3) }, 0.2),
        (
            Scenario {
                router_delay: 2,
                ..scenario(Topology::Hypercube { dimensions: 4 }, Routing::Duato, 2, 8)
            },
            0.01,
        ),
    ];
    for (s, rate) in &cases {
        let options = SimOptions {
            warmup_cycles: 0,
            cycles: 20_000,
            deadlock_cycles: u64::from(s.router_delay) + 1,
            saturation_backlog: 1e9,
            ..SimOptions::default()
        };
        let m = simulate(s, *rate, &options, 4, None).unwrap();
        assert_ne!(m.status, Status::Deadlock, "{s:?}: {:?}", m.detail);
    }
    let too_tight = SimOptions { deadlock_cycles: 2, ..SimOptions::default() };
    let slow = Scenario { router_delay: 2, ..scenario(torus(4, 2), Routing::Duato, 3, 8) };
    assert!(simulate(&slow, 0.01, &too_tight, 1, None).is_err());
}

/// Independent replications (seeds 1..=n) of one load point.
fn replications(s: &Scenario, rate: f64, options: &SimOptions, n: u64) -> Vec<Measurement> {
    (1..=n).map(|seed| simulate(s, rate, options, seed, None).unwrap()).collect()
}

/// Mean over replications of a quantity every one of them reports.
fn mean_of(runs: &[Measurement], quantity: impl Fn(&Measurement) -> Option<f64>) -> f64 {
    runs.iter().map(|r| quantity(r).unwrap()).sum::<f64>() / runs.len() as f64
}

/// Asserts that eight replications' mean latency is the exact `expected`: within the Student-t
/// (7 degrees of freedom) 99.9% half-width, and not only within a wide interval: within 1%.
fn assert_exact_mean_latency(runs: &[Measurement], expected: f64, what: &str) {
    assert_eq!(runs.len(), 8);
    let latencies: Vec<f64> = runs.iter().map(|r| r.latency.unwrap()).collect();
    let mean = mean_of(runs, |r| r.latency);
    let variance = latencies.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 7.0;
    let half_width = 5.408 * (variance / 8.0).sqrt();
    assert!(
        (mean - expected).abs() <= half_width.max(0.002 * expected),
        "{what}: simulated {mean:.3} (replications {latencies:?}), exact {expected:.3}"
    );
    assert!((mean - expected).abs() < 0.01 * expected, "{what}: {mean} vs {expected}");
}

/// The simulator under load against an exact queueing result. In a 1-cube (two nodes, one
/// channel each way) with V = 1 every message of a node uses the same injection VC, the same
/// network VC and the same ejection port, so the network is a single FIFO server: a header is
/// granted the channel `M + 1` cycles after the previous one at the earliest (M flits, then
/// the tail's ejection frees the VC, then the next header is routed), and a message granted
/// at cycle `t` is delivered at the end of cycle `t + M`. With Poisson arrivals this is an
/// M/D/1 queue with service `T = M + 1`: mean latency `T + lambda T^2 / (2 (1 - lambda T))`.
/// (Arrivals are counted per cycle, Poisson(lambda) per cycle; the slotted Lindley recursion
/// with such batches has the same mean wait as the continuous-time Pollaczek-Khinchine
/// formula, so the expectation is exact, not an approximation.) This checks Poisson
/// generation, source queueing, VC release timing and the latency bookkeeping at loads the
/// zero-load tests never reach.
#[test]
fn a_single_channel_network_is_an_exact_md1_queue() {
    let m = 8u32;
    let service = f64::from(m + 1);
    let s = scenario(Topology::Hypercube { dimensions: 1 }, Routing::DimensionOrder, 1, m);
    let options = SimOptions { warmup_cycles: 20_000, cycles: 1_000_000, ..SimOptions::default() };
    for utilization in [0.3, 0.6, 0.85] {
        let rate = utilization / service;
        let expected = service + rate * service * service / (2.0 * (1.0 - utilization));
        let runs = replications(&s, rate, &options, 8);
        assert_exact_mean_latency(&runs, expected, &format!("rho {utilization}, M/D/1"));
        let throughput = mean_of(&runs, |r| r.throughput);
        assert!((throughput - rate).abs() < 0.02 * rate, "rho {utilization}: {throughput}");
    }
}

/// Virtual-channel multiplexing under load against processor sharing. In the 1-cube with
/// many virtual channels (V = 16, so the VC limit is practically never reached), unlimited
/// ejection and M = 32, every message present shares the one channel flit by flit,
/// round-robin: an M/D/1 processor-sharing queue, whose mean sojourn is `M / (1 - rho)`
/// (insensitive to the service distribution), plus the tail's ejection cycle. The number of
/// messages on the channel is geometric, so the multiplexing degree V-bar = E[N^2] / E[N] is
/// `(1 + rho) / (1 - rho)`. Round-robin with a one-flit quantum is processor sharing up to
/// the quantum, and a VC stays busy one cycle after the tail crossed the channel, so the
/// agreement is close but not exact: 1.5% is asked of the latency and 3% of V-bar (a ratio
/// of second moments, noisier; measured within 0.2% and 0.4% over 5 million cycles with
/// `runner simulate topology=hypercube dimensions=1 routing=dimension_order
/// virtual_channels=16 message_length=32 ejection=unlimited --rate 0.009375 --cycles 5000000`).
#[test]
fn a_multiplexed_channel_is_processor_sharing() {
    let m = 32u32;
    let s = Scenario {
        ejection: Ejection::Unlimited,
        ..scenario(Topology::Hypercube { dimensions: 1 }, Routing::DimensionOrder, 16, m)
    };
    let options = SimOptions { warmup_cycles: 20_000, cycles: 1_000_000, ..SimOptions::default() };
    for utilization in [0.3, 0.6] {
        let rate = utilization / f64::from(m);
        let runs = replications(&s, rate, &options, 4);
        let latency = mean_of(&runs, |r| r.latency);
        let expected = f64::from(m) / (1.0 - utilization) + 1.0;
        assert!(
            (latency - expected).abs() < 0.015 * expected,
            "rho {utilization}: simulated {latency:.3}, processor sharing {expected:.3}"
        );
        let v_bar = mean_of(&runs, |r| r.multiplexing_degree);
        let expected = (1.0 + utilization) / (1.0 - utilization);
        assert!(
            (v_bar - expected).abs() < 0.03 * expected,
            "rho {utilization}: simulated V-bar {v_bar:.4}, processor sharing {expected:.4}"
        );
    }
}

/// Flits per cycle on each link of an 8-ring (both directions) under uniform traffic with
/// dimension-order routing, V = 2.
fn ring_link_loads(tie_break: crate::scenario::TieBreak) -> Vec<f64> {
    let s = Scenario {
        tie_break: Some(tie_break),
        ..scenario(torus(8, 1), Routing::DimensionOrder, 2, 8)
    };
    let run = plan(2_000, 200_000);
    let mut engine = Engine::new(&s, 0.03, 5, &run).unwrap();
    let outcome = engine.run(&run, None);
    assert_eq!(outcome, engine::Outcome::Ok);
    let span = (engine.window.end.unwrap() - engine.window.start) as f64;
    engine.window.channel_flits(engine.v).map(|f| f as f64 / span).collect()
}

/// With the random tie-break every link of the ring carries the same load (the ring is
/// vertex-transitive and the k/2 traffic splits evenly between the directions). With ties
/// always going + (`tie_break: positive`, the convention before sim-1.1.0) the + links carry
/// 1 + 2 + 3 + 4 = 10 units of distance per source against 6 for the - links.
#[test]
fn every_link_of_a_ring_carries_the_same_load() {
    let loads = ring_link_loads(crate::scenario::TieBreak::Random);
    assert_eq!(loads.len(), 16);
    // Expected: rate * M * (mean distance 16/7) * nodes / links = 0.03 * 8 * 16/7 / 2.
    let expected = 0.03 * 8.0 * 16.0 / 7.0 / 2.0;
    for (channel, load) in loads.iter().enumerate() {
        assert!((load - expected).abs() < 0.03 * expected, "link {channel}: {load} vs {expected}");
    }
    let loads = ring_link_loads(crate::scenario::TieBreak::Positive);
    let plus: f64 = loads.iter().step_by(2).sum::<f64>() / 8.0;
    let minus: f64 = loads.iter().skip(1).step_by(2).sum::<f64>() / 8.0;
    assert!((plus / minus - 10.0 / 6.0).abs() < 0.05, "+ {plus} vs - {minus}");
}

/// Precision mode never reports `ok` for a point it did not measure to its target: stopping
/// at `max_cycles` short of the target, or with no message at all, is `imprecise`, with the
/// estimate kept and the reason in the detail.
#[test]
fn precision_mode_short_of_its_target_is_imprecise() {
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions {
        warmup_cycles: 1_000,
        cycles: 2_000,
        target_precision: Some(1e-6),
        max_cycles: 20_000,
        ..SimOptions::default()
    };
    let m = simulate(&s, 0.03, &options, 2, None).unwrap();
    assert_eq!(m.status, Status::Imprecise, "{:?}", m.detail);
    let detail = m.detail.unwrap();
    assert!(detail.contains("max_cycles = 20000") && detail.contains("half-width"), "{detail}");
    assert!(m.latency.is_some() && m.latency_ci95.is_some());
    let nothing = simulate(&s, 0.0, &options, 2, None).unwrap();
    assert_eq!(nothing.status, Status::Imprecise);
    assert!(nothing.detail.unwrap().contains("fewer than 2 batches"));
    assert_eq!(nothing.latency, None);
}

/// Every traffic pattern runs through the engine without losing a message or breaking the
/// bookkeeping, self-addressed messages included; the models refuse all but uniform.
#[test]
fn every_traffic_pattern_is_delivered() {
    use crate::scenario::Traffic;
    // Every pattern but uniform (tested everywhere else), the dragonfly's group_shift and the
    // Slim Fly's worst_case (tested in `network::dragonfly` and `network::slim_fly`).
    let patterns = Traffic::every(0.2, vec![0, 5])
        .into_iter()
        .skip(1)
        .filter(|pattern| !matches!(pattern, Traffic::GroupShift | Traffic::WorstCase));
    for traffic in patterns {
        let s = Scenario {
            traffic: traffic.clone(),
            ..scenario(torus(4, 2), Routing::DimensionOrder, 2, 8)
        };
        let mut engine = Engine::new(&s, 0.02, 3, &plan(0, 4_000)).unwrap();
        engine.open_window();
        for cycle in 1..=4_000u64 {
            engine.step();
            if cycle % 101 == 0 {
                engine.check_invariants();
            }
        }
        assert!(engine.delivered_total > 200, "{traffic:?}: {}", engine.delivered_total);
        let options = SimOptions { warmup_cycles: 1_000, cycles: 10_000, ..SimOptions::default() };
        let m = simulate(&s, 0.02, &options, 3, None).unwrap();
        assert_eq!(m.status, Status::Ok, "{traffic:?}: {:?}", m.detail);
        let model = crate::model::check(crate::model::ModelName::NbcTorus, &s);
        assert!(model.unwrap_err().to_string().contains("assumes uniform traffic"));
    }
    let odd = Scenario {
        traffic: Traffic::BitComplement,
        ..scenario(torus(3, 2), Routing::DimensionOrder, 2, 8)
    };
    assert!(check(&odd).unwrap_err().0.contains("power-of-two"));
}

/// The verdict at 0.9 and 1.05 times a network's saturation throughput, for five seeds with
/// the default options (10,000 warm-up, 100,000-cycle window). The saturation throughputs were
/// measured by bisection with 1,000,000-cycle windows (docs/validation.md, "Saturation
/// verdict"): the largest load that stayed `ok` and the smallest that did not, midpoint here.
fn verdict_holds_around_saturation(s: &Scenario, saturation: f64) {
    let options = SimOptions::default();
    for seed in 1..=5 {
        let below = simulate(s, 0.9 * saturation, &options, seed, None).unwrap();
        assert_eq!(below.status, Status::Ok, "seed {seed} at 0.9x: {:?}", below.detail);
        let above = simulate(s, 1.05 * saturation, &options, seed, None).unwrap();
        assert_eq!(above.status, Status::Saturated, "seed {seed} at 1.05x: {:?}", above.latency);
    }
}

/// Whether a point is stable does not depend on the window length: a quarter and four times
/// the default window give the same verdicts at 0.9 and 1.05 times saturation.
#[test]
fn the_verdict_does_not_depend_on_the_window_length() {
    let s = torus8_dimension_order(2);
    for cycles in [25_000, 400_000] {
        let options = SimOptions { cycles, ..SimOptions::default() };
        for seed in [11, 12] {
            let below = simulate(&s, 0.9 * SATURATION_DOR_V2, &options, seed, None).unwrap();
            assert_eq!(
                below.status,
                Status::Ok,
                "{cycles} cycles, seed {seed}: {:?}",
                below.detail
            );
            let above = simulate(&s, 1.05 * SATURATION_DOR_V2, &options, seed, None).unwrap();
            assert_eq!(above.status, Status::Saturated, "{cycles} cycles, seed {seed}");
        }
    }
}

fn torus8_dimension_order(v: u32) -> Scenario {
    Scenario { buffer_depth: 8, ..scenario(torus(8, 2), Routing::DimensionOrder, v, 32) }
}

#[test]
fn verdict_around_saturation_dimension_order_v2() {
    verdict_holds_around_saturation(&torus8_dimension_order(2), SATURATION_DOR_V2);
}

#[test]
fn verdict_around_saturation_dimension_order_v6() {
    verdict_holds_around_saturation(&torus8_dimension_order(6), SATURATION_DOR_V6);
}

#[test]
fn verdict_around_saturation_nbc() {
    verdict_holds_around_saturation(&scenario(torus(8, 2), Routing::Nbc, 10, 32), SATURATION_NBC);
}

/// Saturation throughputs (messages/node/cycle) of the three configurations above.
const SATURATION_DOR_V2: f64 = 0.01035;
const SATURATION_DOR_V6: f64 = 0.01568;
const SATURATION_NBC: f64 = 0.01338;

/// The 8x8 torus of the input-speedup tests: dimension order, V = 4, depth 8, M = 16.
fn torus8_speedup(input_speedup: Option<u32>) -> Scenario {
    Scenario {
        buffer_depth: 8,
        input_speedup,
        ..scenario(torus(8, 2), Routing::DimensionOrder, 4, 16)
    }
}

#[test]
fn an_unreachable_input_speedup_changes_nothing() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 8_000, ..SimOptions::default() };
    let cases = [
        (torus8_speedup(None), 0.02),
        (
            Scenario {
                ejection: Ejection::Unlimited,
                traffic: crate::scenario::Traffic::UniformWithSelf,
                ..scenario(torus(4, 2), Routing::Duato, 3, 8)
            },
            0.05,
        ),
    ];
    for (s, rate) in &cases {
        let unlimited = simulate(s, *rate, &options, 5, None).unwrap();
        let huge = Scenario { input_speedup: Some(1_000), ..s.clone() };
        assert_eq!(unlimited, simulate(&huge, *rate, &options, 5, None).unwrap(), "{s:?}");
        assert_eq!(unlimited.status, Status::Ok);
    }
    // Unset, the field is left out of the serialized scenario: scenario ids and cache keys of
    // existing scenarios are unchanged.
    let json = serde_json::to_string(&torus8_speedup(None)).unwrap();
    assert!(!json.contains("input_speedup"), "{json}");
}

#[test]
fn input_speedup_caps_every_port_and_loses_no_flit() {
    for (speedup, rate) in [(Some(1), 0.025), (Some(2), 0.03), (None, 0.03)] {
        let s = torus8_speedup(speedup);
        let mut engine = Engine::new(&s, rate, 11, &plan(500, 4_000)).unwrap();
        engine.open_window();
        for cycle in 1..=6_000u64 {
            engine.step();
            if cycle % 200 == 0 {
                engine.check_invariants();
            }
        }
        assert!(engine.delivered_total > 500, "{speedup:?}: {} delivered", engine.delivered_total);
        assert_eq!(
            engine.window.delivered_flits,
            engine.window.delivered * u64::from(s.message_length) + engine.flits_in_delivery(),
        );
        match speedup {
            Some(cap) => assert!(engine.max_port_flits <= cap, "{}", engine.max_port_flits),
            // The check bites: unlimited ports do send several flits in one cycle.
            None => assert!(engine.max_port_flits > 2, "{}", engine.max_port_flits),
        }
    }
}

/// Issue 23: interleaved ejection hands each node at most one flit per cycle, loses no flit,
/// and does interleave (a node ejects flits of two messages between their completions); the
/// check bites, since unlimited ejection does hand a node several flits in one cycle. Its
/// saturation lies between single ejection's and unlimited ejection's.
#[test]
fn interleaved_ejection_is_one_flit_per_node_per_cycle() {
    let base = Scenario { buffer_depth: 4, ..scenario(torus(8, 2), Routing::Nbc, 6, 16) };
    let run = |ejection: Ejection, rate: f64| {
        let s = Scenario { ejection, ..base.clone() };
        let mut engine = Engine::new(&s, rate, 13, &plan(500, 4_000)).unwrap();
        engine.open_window();
        let mut interleaved_seen = false;
        for cycle in 1..=6_000u64 {
            engine.step();
            if cycle % 200 == 0 {
                engine.check_invariants();
            }
            interleaved_seen |= engine.some_node_interleaves();
        }
        assert_eq!(
            engine.window.delivered_flits,
            engine.window.delivered * u64::from(s.message_length) + engine.flits_in_delivery(),
        );
        (engine.max_node_ejections, interleaved_seen, engine.delivered_total)
    };
    let (most, interleaved, delivered) = run(Ejection::Interleaved, 0.02);
    assert_eq!(most, 1, "one flit per node per cycle");
    assert!(interleaved, "flits of two messages interleave at a node");
    assert!(delivered > 1_000, "{delivered} delivered");
    let (most, _, _) = run(Ejection::Unlimited, 0.02);
    assert!(most > 1, "unlimited ejection hands a node several flits at once: {most}");
    let (most, interleaved, _) = run(Ejection::Single, 0.02);
    assert_eq!((most, interleaved), (1, false), "single ejection never interleaves");

    // Saturation (flits/node/cycle accepted at an offered load past every saturation point):
    // single <= interleaved <= unlimited.
    let options = SimOptions {
        warmup_cycles: 2_000,
        cycles: 10_000,
        measure: Measure::THROUGHPUT,
        ..SimOptions::default()
    };
    let accepted = |ejection: Ejection| {
        let s = Scenario { ejection, ..base.clone() };
        let m = simulate(&s, 0.06, &options, 3, None).unwrap();
        m.intermediate("flit_throughput").unwrap()
    };
    let (single, interleaved, unlimited) = (
        accepted(Ejection::Single),
        accepted(Ejection::Interleaved),
        accepted(Ejection::Unlimited),
    );
    assert!(
        single < interleaved && interleaved <= unlimited * 1.02,
        "{single} {interleaved} {unlimited}"
    );
}

#[test]
fn a_speedup_of_one_slows_the_network_down() {
    let options = SimOptions { warmup_cycles: 2_000, cycles: 20_000, ..SimOptions::default() };
    let rate = 0.012;
    let unlimited = simulate(&torus8_speedup(None), rate, &options, 7, None).unwrap();
    let one = simulate(&torus8_speedup(Some(1)), rate, &options, 7, None).unwrap();
    assert_eq!(unlimited.status, Status::Ok);
    let (fast, slow) = (unlimited.latency.unwrap(), one.latency.unwrap());
    assert!(slow >= fast, "speedup 1: {slow}, unlimited: {fast}");
    assert!(check(&Scenario { input_speedup: Some(0), ..torus8_speedup(None) }).is_err());
}

/// Sends a lone message between every ordered pair of nodes, one after the other through the
/// empty network, all measured; returns the run's measurement.
fn every_pair_alone(s: &Scenario) -> Measurement {
    let mut engine = Engine::new(s, 0.0, 1, &plan(0, 1)).unwrap();
    engine.open_window();
    let nodes = engine.geometry.nodes;
    for source in 0..nodes {
        for dest in (0..nodes).filter(|&d| d != source) {
            engine.send(source, dest);
            while engine.window.outstanding > 0 {
                engine.step();
                assert!(engine.now < 10_000_000, "{s:?}: {source}->{dest} not delivered");
            }
        }
    }
    assert_eq!(engine.window.latencies.count(), u64::from(nodes * (nodes - 1)));
    stats::summarize(&engine, engine::Outcome::Ok)
}

/// At zero load every message of a given distance has the same latency, hops + M +
/// router_delay hops, no source wait, so the percentiles follow from the distance
/// distribution exactly. The 4x4 torus: each node has 4 nodes at distance 1, 6 at 2, 4 at 3
/// and 1 at 4, so of the 240 ordered pairs 64 are 1 hop apart, 96 two, 64 three and 16 four:
/// rank 120 (p50) is at 2 hops, rank 216 (p90) at 3, rank ceil(237.6) = 238 (p99) at 4.
#[test]
fn zero_load_percentiles_follow_the_distance_distribution() {
    use crate::measurement::Percentiles;
    let m = every_pair_alone(&scenario(torus(4, 2), Routing::DimensionOrder, 2, 5));
    let latency = |hops: u64| hops + 5;
    let expected = Percentiles {
        p50: latency(2),
        p90: latency(3),
        p95: latency(4),
        p99: latency(4),
        max: latency(4),
    };
    assert_eq!(m.latency_percentiles, Some(expected));
    assert_eq!(m.network_latency_percentiles, Some(expected), "nothing waits at the source");
    assert_eq!(m.source_wait_percentiles, Some(Percentiles::default()));
    assert_eq!(m.latency, Some((64.0 * 6.0 + 96.0 * 7.0 + 64.0 * 8.0 + 16.0 * 9.0) / 240.0));

    // Other shapes and a router delay: the nearest rank of the sorted zero-load latencies.
    let cases = [
        Scenario {
            router_delay: 2,
            ..scenario(Topology::Mesh { radix: 3, dimensions: 2 }, Routing::DimensionOrder, 1, 4)
        },
        scenario(Topology::Hypercube { dimensions: 4 }, Routing::DimensionOrder, 2, 3),
        scenario(torus(5, 1), Routing::DimensionOrder, 2, 1),
    ];
    for s in &cases {
        let geometry = Geometry::new(&s.topology).unwrap();
        let mut latencies: Vec<u64> = (0..geometry.nodes)
            .flat_map(|a| (0..geometry.nodes).filter(move |&b| b != a).map(move |b| (a, b)))
            .map(|(a, b)| {
                let hops = u64::from(geometry.distance(a, b));
                hops + u64::from(s.message_length) + u64::from(s.router_delay) * hops
            })
            .collect();
        latencies.sort_unstable();
        let n = latencies.len() as u64;
        let at = |percent: u64| latencies[((percent * n).div_ceil(100) - 1) as usize];
        let expected =
            Percentiles { p50: at(50), p90: at(90), p95: at(95), p99: at(99), max: at(100) };
        let m = every_pair_alone(s);
        assert_eq!(m.latency_percentiles, Some(expected), "{:?}", s.topology);
        assert_eq!(m.network_latency_percentiles, Some(expected), "{:?}", s.topology);
        assert_eq!(m.source_wait_percentiles, Some(Percentiles::default()));
    }
}

/// Under load the percentiles are reproducible bit for bit, ordered, consistent with the
/// means, and recording them left the pinned mean latency unchanged (`results_are_pinned`'s
/// configuration); they are pinned here too.
#[test]
fn percentiles_are_deterministic_and_leave_the_mean_unchanged() {
    use crate::measurement::Percentiles;
    let s = scenario(torus(4, 2), Routing::Duato, 3, 8);
    let options = SimOptions { warmup_cycles: 1_000, cycles: 5_000, ..SimOptions::default() };
    let a = simulate(&s, 0.03, &options, 2024, None).unwrap();
    let b = simulate(&s, 0.03, &options, 2024, None).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.latency.map(f64::to_bits), Some(12.407516891891891f64.to_bits()));
    let (latency, network, wait) = (
        a.latency_percentiles.unwrap(),
        a.network_latency_percentiles.unwrap(),
        a.source_wait_percentiles.unwrap(),
    );
    for p in [latency, network, wait] {
        assert!(p.p50 <= p.p90 && p.p90 <= p.p95 && p.p95 <= p.p99 && p.p99 <= p.max, "{p:?}");
    }
    // A message 1 hop away takes at least 1 + M + ... cycles; the mean lies below the maximum.
    assert!(latency.p50 >= 9 && (latency.max as f64) >= a.latency.unwrap());
    assert!(network.max <= latency.max && wait.max <= latency.max);
    assert!((wait.max as f64) >= a.source_wait.unwrap());
    assert_eq!(
        (latency, network, wait),
        (
            Percentiles {
                p50: PINNED[0],
                p90: PINNED[1],
                p95: latency.p95,
                p99: PINNED[2],
                max: PINNED[3]
            },
            Percentiles {
                p50: PINNED[4],
                p90: PINNED[5],
                p95: network.p95,
                p99: PINNED[6],
                max: PINNED[7]
            },
            Percentiles {
                p50: PINNED[8],
                p90: PINNED[9],
                p95: wait.p95,
                p99: PINNED[10],
                max: PINNED[11]
            },
        )
    );
    // A different seed gives a different run.
    let c = simulate(&s, 0.03, &options, 2025, None).unwrap();
    assert_ne!(c.latency, a.latency);
}

/// Latency, network latency and source-wait p50, p90, p99 and max of
/// `percentiles_are_deterministic_and_leave_the_mean_unchanged` (sim-1.2.0).
const PINNED: [u64; 12] = [11, 18, 26, 39, 11, 18, 26, 39, 0, 0, 0, 6];

/// Issue 24: with variable lengths a lone message's latency is still its hops plus its own
/// length (plus the router delay per hop). Messages are sent one at a time over one hop of a
/// 1-cube and the sums are compared exactly; the sampled lengths' mean is the bimodal mean.
#[test]
fn a_lone_message_of_any_length_takes_hops_plus_its_length() {
    use crate::scenario::MessageLengths;
    for lengths in [
        MessageLengths::Bimodal { min: 2, max: 30 },
        MessageLengths::Uniform { min: 1, max: 15 },
        MessageLengths::Geometric,
    ] {
        let s = Scenario {
            message_length: 8,
            message_length_distribution: lengths,
            router_delay: 1,
            ..scenario(Topology::Hypercube { dimensions: 1 }, Routing::DimensionOrder, 1, 8)
        };
        check(&s).unwrap();
        let mut engine = Engine::new(&s, 0.0, 3, &plan(0, 1)).unwrap();
        engine.open_window();
        let n = 4_000u32;
        for i in 0..n {
            engine.send(i % 2, 1 - i % 2);
            while engine.window.outstanding > 0 {
                engine.step();
            }
        }
        let w = &engine.window;
        // Each message: 1 hop + 1 cycle of router delay + its length.
        assert_eq!(w.latency_sum, 2.0 * f64::from(n) + w.length_sum, "{lengths:?}");
        assert_eq!(w.hops_sum, f64::from(n));
        let mean = w.length_sum / f64::from(n);
        assert!((mean - 8.0).abs() < 0.3, "{lengths:?}: mean length {mean}");
    }
}

/// Issue 24: the single-channel network of `a_single_channel_network_is_an_exact_md1_queue`
/// with variable lengths is an M/G/1 queue with service `S = L + 1`, whose mean latency is
/// `E[S] + lambda E[S^2] / (2 (1 - lambda E[S]))` (Pollaczek-Khinchine; the slotted argument
/// there holds for any integer service time). Same tolerance as the M/D/1 test.
#[test]
fn a_single_channel_network_with_variable_lengths_is_an_exact_mg1_queue() {
    use crate::scenario::MessageLengths;
    let m = 8u32;
    let options = SimOptions { warmup_cycles: 20_000, cycles: 1_000_000, ..SimOptions::default() };
    for lengths in
        [MessageLengths::Bimodal { min: 2, max: 14 }, MessageLengths::Uniform { min: 1, max: 15 }]
    {
        let s = Scenario {
            message_length_distribution: lengths,
            ..scenario(Topology::Hypercube { dimensions: 1 }, Routing::DimensionOrder, 1, m)
        };
        let service = f64::from(m + 1);
        let second = lengths.second_moment(m) + 2.0 * f64::from(m) + 1.0;
        for utilization in [0.3, 0.7] {
            let rate = utilization / service;
            let expected = service + rate * second / (2.0 * (1.0 - utilization));
            let runs = replications(&s, rate, &options, 8);
            let what = format!("{lengths:?} rho {utilization}, M/G/1");
            assert_exact_mean_latency(&runs, expected, &what);
        }
    }
}

/// Issue 24: variable lengths are deterministic per seed, and broadcasts keep fixed lengths.
#[test]
fn variable_lengths_are_reproducible_and_refused_where_they_make_no_sense() {
    use crate::scenario::MessageLengths;
    let s = Scenario {
        message_length_distribution: MessageLengths::Geometric,
        ..scenario(torus(4, 2), Routing::Duato, 3, 8)
    };
    let options = SimOptions { warmup_cycles: 1_000, cycles: 10_000, ..SimOptions::default() };
    let a = simulate(&s, 0.03, &options, 17, None).unwrap();
    assert_eq!(a, simulate(&s, 0.03, &options, 17, None).unwrap());
    let fixed = simulate(&scenario(torus(4, 2), Routing::Duato, 3, 8), 0.03, &options, 17, None);
    assert_ne!(a.latency, fixed.unwrap().latency);
    let broadcast = Scenario {
        broadcast_fraction: 0.1,
        ..scenario(Topology::Hypercube { dimensions: 3 }, Routing::Duato, 2, 8)
    };
    assert!(check(&broadcast).is_ok());
    let error =
        check(&Scenario { message_length_distribution: MessageLengths::Geometric, ..broadcast })
            .unwrap_err();
    assert!(error.0.contains("message_length_distribution fixed"), "{error}");
    let alone = Scenario {
        message_length_second_moment: Some(100.0),
        ..scenario(torus(4, 2), Routing::Duato, 3, 8)
    };
    assert!(check(&alone).unwrap_err().0.contains("name a message_length_distribution"));
}

/// Issue 24: Bernoulli sources at a low rate offer their rate and see the zero-load network
/// (latency just above hops + M, as for Poisson arrivals), and every process is reproducible
/// per seed; on/off sources offer their rate too, in bursts that queue at the source.
#[test]
fn bernoulli_and_on_off_sources_offer_their_rate() {
    use crate::scenario::InjectionProcess;
    let base = scenario(torus(8, 2), Routing::Duato, 4, 16);
    let options = SimOptions { warmup_cycles: 2_000, cycles: 40_000, ..SimOptions::default() };
    let bernoulli = Scenario { injection_process: InjectionProcess::Bernoulli, ..base.clone() };
    let m = simulate(&bernoulli, 0.001, &options, 5, None).unwrap();
    assert_eq!(m.status, Status::Ok);
    let (hops, latency) = (m.hops.unwrap(), m.latency.unwrap());
    assert!((hops - 256.0 / 63.0).abs() < 0.1, "{hops}");
    assert!(latency > hops + 16.0 && latency < hops + 16.0 + 1.0, "{latency}");
    assert!((m.throughput.unwrap() - 0.001).abs() < 0.0001, "{:?}", m.throughput);
    assert_eq!(m, simulate(&bernoulli, 0.001, &options, 5, None).unwrap());
    let poisson = simulate(&base, 0.001, &options, 5, None).unwrap();
    assert_ne!(m.latency, poisson.latency);
    let bursty = Scenario {
        injection_process: InjectionProcess::OnOff { burst_length: 8.0 },
        ..base.clone()
    };
    let b = simulate(&bursty, 0.004, &options, 5, None).unwrap();
    assert_eq!(b.status, Status::Ok);
    assert!((b.throughput.unwrap() - 0.004).abs() < 0.0004, "{:?}", b.throughput);
    // A burst of 8 messages generated in 8 cycles waits behind itself at the source.
    let smooth = simulate(&base, 0.004, &options, 5, None).unwrap();
    assert!(b.source_wait.unwrap() > 5.0 * smooth.source_wait.unwrap(), "{b:?}");
    assert_eq!(b, simulate(&bursty, 0.004, &options, 5, None).unwrap());
    // Rates a process cannot offer are refused before anything runs.
    let error = simulate(&bernoulli, 1.5, &options, 5, None).unwrap_err();
    assert!(error.0.contains("rate must be at most 1"), "{error}");
    let error = simulate(&bursty, 0.95, &options, 5, None).unwrap_err();
    assert!(error.0.contains("B / (B + 1)"), "{error}");
}
