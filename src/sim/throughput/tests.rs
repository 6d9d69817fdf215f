//! Throughput mode: agreement with latency mode at light load, bounded queues and counted drops
//! past saturation, exact per-node counts, reproducibility, and the saturation search.

use super::super::engine::{Engine, Outcome};
use super::super::saturation::{injection_bound, saturation_throughput};
use super::super::*;
use crate::measurement::{Measurement, Status};
use crate::scenario::{Routing, Scenario, Topology};

/// A 4x4 torus, dimension order, V = 2, M = 8 flits.
fn small_torus() -> Scenario {
    Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: 2,
        message_length: 8,
        ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
    }
}

fn throughput_options(capacity: u32) -> SimOptions {
    SimOptions {
        warmup_cycles: 2_000,
        cycles: 10_000,
        measure: Measure::Throughput { source_queue_capacity: capacity },
        ..SimOptions::default()
    }
}

fn get(m: &Measurement, key: &str) -> f64 {
    m.intermediate(key).unwrap_or_else(|| panic!("no intermediate `{key}` in {m:?}"))
}

#[test]
fn light_load_is_latency_mode_plus_the_throughput_columns() {
    let s = small_torus();
    let latency_options = SimOptions { measure: Measure::Latency, ..throughput_options(100) };
    for (rate, seed) in [(0.01, 1), (0.03, 7)] {
        let latency = simulate(&s, rate, &latency_options, seed, None).unwrap();
        let throughput = simulate(&s, rate, &throughput_options(100), seed, None).unwrap();
        assert_eq!(throughput.status, Status::Ok, "{:?}", throughput.detail);
        assert_eq!(get(&throughput, "source_drops"), 0.0);
        // Nothing dropped, no extra random draw: the same run, with more columns.
        let n = latency.intermediates.len();
        assert_eq!(throughput.intermediates[..n], latency.intermediates[..]);
        let strip = |m: &Measurement| Measurement { intermediates: Vec::new(), ..m.clone() };
        assert_eq!(strip(&throughput), strip(&latency));
        let accepted = throughput.throughput.unwrap();
        assert!((accepted / rate - 1.0).abs() < 0.05, "{rate}: accepted {accepted}");
        let (lo, hi) = (get(&throughput, "throughput_min"), get(&throughput, "throughput_max"));
        assert!(lo <= accepted && accepted <= hi && lo > 0.0, "{lo} {accepted} {hi}");
    }
}

#[test]
fn past_saturation_the_whole_window_is_measured_with_bounded_queues() {
    let s = small_torus();
    let capacity = 20;
    let options = throughput_options(capacity);
    let bound = injection_bound(&s);
    let mut accepted = Vec::new();
    for overload in [1.0, 2.0] {
        let rate = overload * bound;
        let plan = plan(&s, &options).unwrap();
        let mut engine = Engine::new(&s, rate, 5, &plan).unwrap();
        let outcome = engine.run(&plan, None);
        assert!(matches!(outcome, Outcome::Saturated(_)), "{outcome:?}");
        // The run ends when the window closes: no early stop, no drain.
        assert_eq!(engine.now, options.warmup_cycles + options.cycles);
        let tracker = engine.throughput.as_ref().unwrap();
        assert!(tracker.longest_queue <= capacity, "{}", tracker.longest_queue);
        assert!(tracker.drops >= tracker.window_drops && tracker.window_drops > 0);
        // Per-node counts are exact: they add up to the window's totals.
        let w = &engine.window;
        assert_eq!(tracker.node_messages.iter().sum::<u64>(), w.delivered);
        assert_eq!(tracker.node_flits.iter().sum::<i64>(), w.delivered_flits as i64);
        assert!(tracker.node_flits.iter().all(|&f| f >= 0));

        let m = simulate(&s, rate, &options, 5, None).unwrap();
        assert_eq!(m.status, Status::Saturated);
        assert!(m.latency.is_none());
        let detail = m.detail.clone().unwrap();
        assert!(detail.contains("throughput mode") && detail.contains("dropped"), "{detail}");
        let offered = get(&m, "offered_throughput");
        let throughput = m.throughput.unwrap();
        assert!((offered / rate - 1.0).abs() < 0.05, "offered {offered} at rate {rate}");
        assert!(throughput < 0.8 * offered, "accepted {throughput} of {offered}");
        let drops = get(&m, "source_drops");
        let span = get(&m, "window_cycles") * 16.0;
        // Offered = accepted + dropped + the growth of what is queued or in flight.
        assert!(drops / span > 0.5 * (offered - throughput), "{drops}");
        let flits = get(&m, "flit_throughput");
        assert!((flits / (8.0 * throughput) - 1.0).abs() < 0.01, "{flits} vs {throughput}");
        assert!(get(&m, "flit_throughput_min") <= flits && flits <= get(&m, "flit_throughput_max"));
        accepted.push(throughput);
    }
    // Doubling the overload leaves the accepted rate where it was.
    assert!((accepted[1] / accepted[0] - 1.0).abs() < 0.05, "{accepted:?}");
}

#[test]
fn throughput_mode_is_reproducible() {
    let s = Scenario { routing: Routing::Duato, virtual_channels: 3, ..small_torus() };
    let options = throughput_options(10);
    let a = simulate(&s, 0.1, &options, 3, None).unwrap();
    let b = simulate(&s, 0.1, &options, 3, None).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.status, Status::Saturated);
}

#[test]
fn bad_throughput_options_are_errors() {
    let s = small_torus();
    let zero = throughput_options(0);
    assert!(simulate(&s, 0.01, &zero, 1, None).unwrap_err().0.contains("at least 1"));
    let precise = SimOptions { target_precision: Some(0.05), ..throughput_options(10) };
    let error = simulate(&s, 0.01, &precise, 1, None).unwrap_err().0;
    assert!(error.contains("target_precision"), "{error}");
    let error = simulate(&s, 2.5, &throughput_options(10), 1, None).unwrap_err().0;
    assert!(error.contains("at most virtual_channels"), "{error}");
}

#[test]
fn the_saturation_search_brackets_the_knee() {
    let s = small_torus();
    let options = SimOptions { warmup_cycles: 1_000, cycles: 5_000, ..SimOptions::default() };
    let found = saturation_throughput(&s, &options, 1, None).unwrap();
    let saturated = found.saturated_rate.unwrap();
    assert!(found.stable_rate < saturated, "{found:?}");
    assert!(saturated - found.stable_rate <= 0.01 * saturated, "{found:?}");
    assert_eq!(found.bracket_width, Some((saturated - found.stable_rate) / saturated));
    // The stable end is a simulated point, not a grid's: the maximum is at least its rate.
    assert!(found.points.iter().any(|p| p.rate == found.stable_rate && p.status == Status::Ok));
    // The highest accepted rate is at least the largest stable load (give or take its noise)
    // and below the injection bound.
    assert!(found.saturation_throughput > 0.97 * found.stable_rate, "{found:?}");
    assert!(found.saturation_throughput < injection_bound(&s));
    assert_eq!(found.points[0].rate, injection_bound(&s));
    assert!(found.points.len() <= 16);
    assert_eq!(found, saturation_throughput(&s, &options, 1, None).unwrap());
}

/// A saturation search is told its progress within each point, not only between points (a
/// search whose points each take minutes showed nothing moving), and the progress changes
/// nothing it finds.
#[test]
fn the_saturation_search_reports_progress_within_each_point() {
    let s = small_torus();
    let options = SimOptions { warmup_cycles: 1_000, cycles: 20_000, ..SimOptions::default() };
    let told = std::sync::Mutex::new(Vec::new());
    let report = |done: u64, planned: u64| {
        if let Ok(mut told) = told.lock() {
            told.push((done, planned));
        }
        std::ops::ControlFlow::Continue(())
    };
    let found = saturation_throughput(&s, &options, 1, Some(&report)).unwrap();
    let told = told.into_inner().unwrap();
    let per_point = crate::sim::saturation::PROGRESS_PER_POINT;
    let within = told.iter().filter(|(done, _)| done % per_point != 0).count();
    assert!(within >= found.points.len(), "progress inside the points: {told:?}");
    assert!(told.windows(2).all(|w| w[0].0 <= w[1].0), "never moves back: {told:?}");
    assert!(told.iter().all(|(done, planned)| done <= planned), "{told:?}");
    assert_eq!(found, saturation_throughput(&s, &options, 1, None).unwrap());
}

/// Issue 24: the saturation search never offers more than the injection process can (an
/// on/off source with B = 1 sends at most every other cycle, a Bernoulli one once a cycle).
#[test]
fn the_saturation_search_stays_within_what_the_process_offers() {
    let s = Scenario {
        message_length: 1,
        injection_process: crate::scenario::InjectionProcess::OnOff { burst_length: 1.0 },
        ..small_torus()
    };
    assert_eq!(injection_bound(&s), 0.5);
    let options = SimOptions { warmup_cycles: 500, cycles: 2_000, ..SimOptions::default() };
    let found = saturation_throughput(&s, &options, 1, None).unwrap();
    assert!(found.points.iter().all(|p| p.rate <= 0.5), "{found:?}");
    let bernoulli =
        Scenario { injection_process: crate::scenario::InjectionProcess::Bernoulli, ..s };
    assert_eq!(injection_bound(&bernoulli), 1.0);
}

/// Latency mode reports the per-node spread of the accepted throughput too (min <= mean <=
/// max, messages and flits), from per-node delivery counts; throughput mode's rows keep their
/// exact intermediates, and both modes' measurements agree on it.
#[test]
fn latency_mode_reports_the_per_node_throughput_spread() {
    let s = small_torus();
    let latency_options = SimOptions { measure: Measure::Latency, ..throughput_options(100) };
    let m = simulate(&s, 0.03, &latency_options, 5, None).unwrap();
    let [min, max, flit_min, flit_max] = m.node_throughput.expect("a per-node spread");
    let mean = m.throughput.unwrap();
    assert!(0.0 < min && min <= mean && mean <= max, "{min} {mean} {max}");
    let flits = f64::from(s.message_length);
    assert!((flit_min - min * flits).abs() < 1e-12 && (flit_max - max * flits).abs() < 1e-12);
    assert!(m.intermediate("throughput_min").is_none(), "no new intermediate in latency mode");
    let throughput = simulate(&s, 0.03, &throughput_options(100), 5, None).unwrap();
    assert_eq!(throughput.node_throughput, m.node_throughput);
}
