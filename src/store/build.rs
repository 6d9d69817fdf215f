//! Building result rows: a row of a task with its scenario and load columns
//! ([`base_row`]), and the columns a measurement fills ([`fill`]). Every evaluator's row
//! (model, simulator, external program) and every failed or skipped task's row starts here.

use crate::measurement::{Measurement, Percentiles};
use crate::plan::{LoadPoint, Task, TaskKind};
use crate::scenario::Scenario;
use crate::sim;
use crate::store::row::{DENSE_GRID, Row, SPEC_GRID};

/// A row with the scenario and load columns filled in.
pub fn base_row(scenario: &Scenario, task: &Task, rate: f64, method: &str) -> Row {
    base_row_at(scenario, task.load, task.kind, task.id.clone(), rate, method)
}

/// A row of a task of `kind` with id `task_id` at `load`, with the scenario and load columns
/// filled in.
pub(crate) fn base_row_at(
    scenario: &Scenario,
    load: Option<LoadPoint>,
    kind: TaskKind,
    task_id: String,
    rate: f64,
    method: &str,
) -> Row {
    let mut row = Row {
        task_id,
        scenario_id: scenario_id(scenario),
        method: method.to_string(),
        rate,
        status: "ok".into(),
        intermediates: "{}".into(),
        load_grid: Some(if kind == TaskKind::Curve { DENSE_GRID } else { SPEC_GRID }.into()),
        ..Row::of_scenario(scenario)
    };
    set_load_columns(&mut row, scenario, load);
    row
}

/// The columns that follow from the load: `fraction_of_saturation`, `trace_time_scale` and
/// `trace_flit_load`.
pub(crate) fn set_load_columns(row: &mut Row, scenario: &Scenario, load: Option<LoadPoint>) {
    row.fraction_of_saturation = match load {
        Some(LoadPoint::FractionOfSaturation(f)) => Some(f),
        _ => None,
    };
    row.trace_time_scale = match load {
        Some(LoadPoint::TraceTimeScale(s)) => Some(s),
        _ => None,
    };
    row.trace_flit_load = match (load, scenario.traffic.trace()) {
        (Some(LoadPoint::TraceTimeScale(s)), Some(trace)) => {
            Some(trace.offered_flit_load(s, scenario.nodes()))
        }
        _ => None,
    };
}

/// A short content hash of the scenario alone.
pub fn scenario_id(scenario: &Scenario) -> String {
    let bytes = serde_json::to_vec(scenario).unwrap_or_default();
    blake3::hash(&bytes).to_hex()[..12].to_string()
}

/// Copies a measurement into a row.
pub(crate) fn fill(row: &mut Row, m: &Measurement) {
    row.status = m.status.as_str().to_string();
    row.error = m.detail.clone();
    row.latency = finite(m.latency);
    row.latency_ci95 = finite(m.latency_ci95);
    row.network_latency = finite(m.network_latency);
    row.source_wait = finite(m.source_wait);
    row.unicast_latency = finite(m.unicast_latency);
    row.round_trip_latency = finite(m.round_trip_latency);
    row.multiplexing_degree = finite(m.multiplexing_degree);
    row.channel_rate = finite(m.channel_rate);
    row.blocking_probability = finite(m.blocking_probability);
    row.throughput = finite(m.throughput);
    row.throughput_ci95 = finite(m.throughput_ci95);
    row.hops = finite(m.hops);
    row.cycles = m.cycles;
    row.flit_hops = m.flit_hops;
    row.messages_measured = m.messages_measured;
    row.fault_count = m.fault_count;
    row.fault_map = m.fault_map.clone();
    fill_percentiles(row, m);
    let map: serde_json::Map<String, serde_json::Value> = m
        .intermediates
        .iter()
        .map(|(k, v)| {
            let value = serde_json::Number::from_f64(*v)
                .map(serde_json::Value::Number)
                .unwrap_or_else(|| serde_json::Value::String(v.to_string()));
            (k.clone(), value)
        })
        .collect();
    row.intermediates = serde_json::Value::Object(map).to_string();
}

/// The latency percentile columns (null where the evaluator measured no distribution).
fn fill_percentiles(row: &mut Row, m: &Measurement) {
    let cycles = |p: Option<Percentiles>| {
        p.map_or([None; 5], |p| [p.p50, p.p90, p.p95, p.p99, p.max].map(|value| Some(value as f64)))
    };
    [row.latency_p50, row.latency_p90, row.latency_p95, row.latency_p99, row.latency_max] =
        cycles(m.latency_percentiles);
    [row.latency_p50_ci95, row.latency_p90_ci95, row.latency_p95_ci95, row.latency_p99_ci95] =
        m.latency_percentiles_ci95.map(finite);
    [
        row.network_latency_p50,
        row.network_latency_p90,
        row.network_latency_p95,
        row.network_latency_p99,
        row.network_latency_max,
    ] = cycles(m.network_latency_percentiles);
    [
        row.source_wait_p50,
        row.source_wait_p90,
        row.source_wait_p95,
        row.source_wait_p99,
        row.source_wait_max,
    ] = cycles(m.source_wait_percentiles);
    [
        row.unicast_latency_p50,
        row.unicast_latency_p90,
        row.unicast_latency_p95,
        row.unicast_latency_p99,
        row.unicast_latency_max,
    ] = cycles(m.unicast_latency_percentiles);
}

/// The simulation's throughput columns (`sim::Measure`), from its intermediates.
pub(crate) fn fill_throughput(row: &mut Row, m: &Measurement, measure: &sim::Measure) {
    row.measure = Some(measure.as_str().to_string());
    let get = |key: &str| finite(m.intermediate(key));
    row.offered_throughput = get("offered_throughput");
    // Throughput mode's exact per-node counts, else (latency mode) the counts at delivery.
    let spread = m.node_throughput.map(|spread| spread.map(Some)).unwrap_or_default();
    row.throughput_min = get("throughput_min").or(finite(spread[0]));
    row.throughput_max = get("throughput_max").or(finite(spread[1]));
    row.flit_throughput = get("flit_throughput");
    row.flit_throughput_min = get("flit_throughput_min").or(finite(spread[2]));
    row.flit_throughput_max = get("flit_throughput_max").or(finite(spread[3]));
    row.source_drops = get("source_drops").map(|drops| drops as u64);
}

/// A value the rows keep: finite, else none.
pub(crate) fn finite(value: Option<f64>) -> Option<f64> {
    value.filter(|v| v.is_finite())
}

/// `intermediates` (a row's JSON object) with each named number set, in order; a `None` or a
/// value JSON cannot hold leaves its key as it was.
pub(crate) fn with_numbers(intermediates: &str, numbers: &[(&str, Option<f64>)]) -> String {
    let mut map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(intermediates).unwrap_or_default();
    for &(key, value) in numbers {
        if let Some(number) = value.and_then(serde_json::Number::from_f64) {
            map.insert(key.to_owned(), serde_json::Value::Number(number));
        }
    }
    serde_json::Value::Object(map).to_string()
}
