//! Fuzz target: the external program's reply parser on arbitrary bytes.
//!
//! `runner::exec::external::parse` turns a program's standard output into a `Response` or the
//! problem a failed row will name (`docs/external.md`, "Response" and "Failures"). It must never
//! panic; a refusal is a sentence about what the program printed (every one begins "printed");
//! and what it accepts keeps the protocol's promises: every number finite and in its domain
//! (0 to 1e100, probabilities 0 to 1, counts at most 2^53, intermediates of magnitude at most
//! 1e100, `latency_batches` whole), each percentile family and the least- and best-served
//! throughputs ordered, `latency` given with `ok` and `imprecise`, a reason given with
//! `unsupported`. Run it with `cargo fuzz run external_reply` from the repository root;
//! `docs/fuzzing.md` has the seeds, the dictionary and the record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runner::exec::external::{MAX_COUNT, MAX_MAGNITUDE, Response, ResponseStatus, parse};

/// Whether `value` is a number the protocol accepts for a non-negative measurement.
fn non_negative(value: Option<f64>) -> bool {
    value.is_none_or(|x| (0.0..=MAX_MAGNITUDE).contains(&x))
}

/// Asserts that the given members of one ordered family do not decrease.
fn ordered(name: &str, family: &[Option<f64>]) {
    let given: Vec<f64> = family.iter().flatten().copied().collect();
    assert!(given.windows(2).all(|pair| pair[0] <= pair[1]), "{name} not ordered: {family:?}");
}

/// Asserts every promise an accepted reply makes.
fn check(r: &Response) {
    let measurements = [
        ("latency", r.latency),
        ("latency_ci95", r.latency_ci95),
        ("network_latency", r.network_latency),
        ("source_wait", r.source_wait),
        ("unicast_latency", r.unicast_latency),
        ("multiplexing_degree", r.multiplexing_degree),
        ("channel_rate", r.channel_rate),
        ("throughput", r.throughput),
        ("hops", r.hops),
        ("offered_throughput", r.offered_throughput),
        ("throughput_min", r.throughput_min),
        ("throughput_max", r.throughput_max),
        ("flit_throughput", r.flit_throughput),
        ("flit_throughput_min", r.flit_throughput_min),
        ("flit_throughput_max", r.flit_throughput_max),
        ("latency_p50", r.latency_p50),
        ("latency_p90", r.latency_p90),
        ("latency_p99", r.latency_p99),
        ("latency_max", r.latency_max),
        ("network_latency_p50", r.network_latency_p50),
        ("network_latency_p90", r.network_latency_p90),
        ("network_latency_p99", r.network_latency_p99),
        ("network_latency_max", r.network_latency_max),
        ("source_wait_p50", r.source_wait_p50),
        ("source_wait_p90", r.source_wait_p90),
        ("source_wait_p99", r.source_wait_p99),
        ("source_wait_max", r.source_wait_max),
    ];
    for (name, value) in measurements {
        assert!(non_negative(value), "accepted `{name}` = {value:?}");
    }
    let probability = r.blocking_probability;
    assert!(probability.is_none_or(|p| (0.0..=1.0).contains(&p)), "accepted {probability:?}");
    for (name, count) in [
        ("cycles", r.cycles),
        ("flit_hops", r.flit_hops),
        ("messages_measured", r.messages_measured),
        ("source_drops", r.source_drops),
    ] {
        assert!(count.is_none_or(|n| n <= MAX_COUNT), "accepted `{name}` = {count:?}");
    }
    for (key, &value) in &r.intermediates {
        match key.as_str() {
            "latency_batches" => assert!(
                value.fract() == 0.0 && (0.0..=MAX_COUNT as f64).contains(&value),
                "accepted `intermediates.latency_batches` = {value}"
            ),
            "latency_batch_mean" | "latency_batch_sd" => {
                assert!(non_negative(Some(value)), "accepted `intermediates.{key}` = {value}");
            }
            _ => assert!(
                value.is_finite() && value.abs() <= MAX_MAGNITUDE,
                "accepted `intermediates.{key}` = {value}"
            ),
        }
    }
    ordered("latency", &[r.latency_p50, r.latency_p90, r.latency_p99, r.latency_max]);
    ordered(
        "network_latency",
        &[
            r.network_latency_p50,
            r.network_latency_p90,
            r.network_latency_p99,
            r.network_latency_max,
        ],
    );
    ordered(
        "source_wait",
        &[r.source_wait_p50, r.source_wait_p90, r.source_wait_p99, r.source_wait_max],
    );
    ordered("throughput", &[r.throughput_min, r.throughput_max]);
    ordered("flit_throughput", &[r.flit_throughput_min, r.flit_throughput_max]);
    match r.status {
        ResponseStatus::Ok | ResponseStatus::Imprecise => {
            assert!(r.latency.is_some(), "accepted {:?} without `latency`", r.status);
        }
        ResponseStatus::Unsupported => assert!(
            r.detail.as_deref().is_some_and(|d| !d.trim().is_empty()),
            "accepted `unsupported` without a reason"
        ),
        ResponseStatus::Saturated | ResponseStatus::Deadlock => {}
    }
}

fuzz_target!(|data: &[u8]| {
    match parse(data) {
        Ok(response) => check(&response),
        Err(problem) => {
            assert!(
                problem.starts_with("printed "),
                "a refusal that names no problem: {problem:?}"
            );
            assert!(
                problem.len() > "printed ".len() + 8,
                "a refusal without its problem: {problem:?}"
            );
        }
    }
});
