//! Saturation searches in the pipeline: a Search task's run and its row.
//!
//! A Search task is one search of `sim::saturation` for one scenario and seed: by runner's
//! simulator ([`simulator`]) or with an external simulation's program evaluating each point
//! (`super::external::search`). Its row has `measure = saturation`: `throughput` is the
//! search's saturation throughput (the highest accepted rate over its points, messages per node
//! and cycle) and `flit_throughput` the same in flits, `rate` the offered rate at which it was
//! accepted, and the intermediates hold the knee's bracket (`stable_rate`, `saturated_rate`),
//! its relative width (`bracket_width`), the search's resolution (`tolerance`) and the points it
//! simulated (`search_points`). A search that stopped at its point cap before its bracket was
//! within the tolerance is `imprecise`. The Aggregate of a method's searches is their mean with
//! a 95% Student-t interval over them (`throughput_ci95`), like any aggregate of replications.

use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::cache::Output;
use super::evaluate::{CANCELLED, Failure, keep_going};
use crate::plan::Task;
use crate::scenario::Scenario;
use crate::sim;
use crate::sim::saturation::{MAX_POINTS, Saturation, TOLERANCE};
use crate::spec::Experiment;
use crate::store::build::base_row;
use crate::store::row::{Row, SATURATION_SEARCH};

/// Runs the simulator's Search `task` with the simulation method's window; once `interrupt` is
/// set, a search that would not end within the grace period stops and returns [`CANCELLED`].
pub(crate) fn simulator(
    experiment: &Experiment,
    task: &Task,
    scenario: &Scenario,
    interrupt: Option<&AtomicBool>,
) -> Result<Output, Failure> {
    let simulation = experiment.simulation.as_ref().ok_or("no simulation in the spec")?;
    let seed = task.seed.ok_or("search task without a seed")?;
    let started = Instant::now();
    let options = sim::SimOptions { fault_seed: task.fault_seed, ..simulation.options.clone() };
    let interrupted_at = OnceLock::new();
    // A search's progress counts its points at most: the time left is estimated from that.
    let watch = |done: u64, planned: u64| {
        keep_going(interrupt, &interrupted_at, started, done, planned.max(1))
    };
    let found = sim::saturation::saturation_throughput(scenario, &options, seed, Some(&watch))
        .map_err(|e| if e.is_cancelled() { CANCELLED.to_string() } else { e.to_string() })?;
    let evaluator = format!("simulator@{}", sim::VERSION);
    let mut row = row(scenario, task, "simulation", evaluator, &found);
    row.wall_seconds = started.elapsed().as_secs_f64();
    Ok(Output::Rows(vec![row]))
}

/// The row of one search that found `found`.
pub(crate) fn row(
    scenario: &Scenario,
    task: &Task,
    method: &str,
    evaluator: String,
    found: &Saturation,
) -> Row {
    let mut row = base_row(scenario, task, found.offered_at_maximum, method);
    row.evaluator = evaluator;
    row.replication = task.replication;
    row.seed = task.seed;
    row.fault_seed = task.fault_seed;
    row.measure = Some(SATURATION_SEARCH.into());
    row.throughput = Some(found.saturation_throughput);
    row.flit_throughput = found.flit_saturation_throughput;
    let mut intermediates = serde_json::Map::new();
    let mut put = |key: &str, value: Option<f64>| {
        if let Some(number) = value.and_then(serde_json::Number::from_f64) {
            intermediates.insert(key.into(), serde_json::Value::Number(number));
        }
    };
    put("stable_rate", Some(found.stable_rate));
    put("saturated_rate", found.saturated_rate);
    put("bracket_width", found.bracket_width);
    put("tolerance", Some(TOLERANCE));
    put("search_points", Some(found.points.len() as f64));
    row.intermediates = serde_json::Value::Object(intermediates).to_string();
    if let Some(width) = found.bracket_width.filter(|w| *w > TOLERANCE) {
        row.status = "imprecise".into();
        row.error = Some(format!(
            "the search stopped at its {MAX_POINTS} points with the knee bracketed to {:.1}% of \
             its upper end, not {:.0}%",
            100.0 * width,
            100.0 * TOLERANCE
        ));
    }
    row
}
