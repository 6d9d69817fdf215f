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

use std::path::Path;
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
use crate::store::build::{base_row, with_numbers};
use crate::store::row::{Row, SATURATION_SEARCH};

/// Runs the simulator's Search `task` with the simulation method's window; once `interrupt` is
/// set, a search that would not end within the grace period stops and returns [`CANCELLED`].
pub(crate) fn simulator(
    experiment: &Experiment,
    task: &Task,
    scenario: &Scenario,
    threads: usize,
    interrupt: Option<&AtomicBool>,
) -> Result<Output, Failure> {
    let simulation = experiment.simulation.as_ref().ok_or("no simulation in the spec")?;
    let seed = task.seed.ok_or("search task without a seed")?;
    let started = Instant::now();
    let options =
        sim::SimOptions { fault_seed: task.fault_seed, threads, ..simulation.options.clone() };
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

/// Runs the Search `task` of external method `method` (an index into the spec's external
/// methods): runner bisects, the program evaluates each point (`super::external::search`).
pub(crate) fn external(
    experiment: &Experiment,
    task: &Task,
    scenario: &Scenario,
    method: usize,
    log: Option<&Path>,
    interrupt: Option<&AtomicBool>,
) -> Result<Output, Failure> {
    let method = experiment.external.get(method).ok_or("search without its method")?;
    let started = Instant::now();
    let found = super::external::search(method, task, scenario, log, interrupt)?;
    let mut row = row(scenario, task, &method.name, method.evaluator(), &found);
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
    row.intermediates = with_numbers(
        "{}",
        &[
            ("stable_rate", Some(found.stable_rate)),
            ("saturated_rate", found.saturated_rate),
            ("bracket_width", found.bracket_width),
            ("tolerance", Some(TOLERANCE)),
            ("search_points", Some(found.points.len() as f64)),
        ],
    );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::Status;
    use crate::plan::TaskKind;
    use crate::scenario::Topology;
    use crate::sim::saturation::Point;

    fn task() -> Task {
        Task {
            kind: TaskKind::Search,
            id: "search".into(),
            scenario: Some(0),
            load: None,
            loads: None,
            replication: Some(1),
            seed: Some(42),
            fault_seed: None,
            cost: 0.0,
            method: None,
        }
    }

    fn found(bracket_width: Option<f64>) -> Saturation {
        let point = Point {
            rate: 0.02,
            status: Status::Saturated,
            throughput: Some(0.018),
            flit_throughput: Some(0.576),
            source_drops: None,
        };
        Saturation {
            saturation_throughput: 0.018,
            flit_saturation_throughput: Some(0.576),
            offered_at_maximum: 0.02,
            stable_rate: 0.0175,
            saturated_rate: Some(0.0177),
            bracket_width,
            points: vec![point; 9],
        }
    }

    /// A search's row: its saturation throughput, the offered rate at it, the bracket in the
    /// intermediates, `measure = saturation`; `imprecise`, saying why, when the search stopped
    /// with its bracket wider than the tolerance; a search with no knee below the bound is ok.
    #[test]
    fn a_search_row_holds_its_bracket_and_says_when_it_stopped_short() {
        let scenario = Scenario::new(Topology::Torus { radix: 4, dimensions: 2 });
        let evaluator = String::from("simulator@test");
        let searched = row(&scenario, &task(), "simulation", evaluator.clone(), &found(Some(0.01)));
        assert!(searched.is_saturation_search());
        assert_eq!(
            (searched.throughput, searched.flit_throughput, searched.rate),
            (Some(0.018), Some(0.576), 0.02)
        );
        assert_eq!(
            (searched.replication, searched.seed, searched.status.as_str()),
            (Some(1), Some(42), "ok")
        );
        assert_eq!(searched.intermediate("stable_rate"), Some(0.0175));
        assert_eq!(searched.intermediate("saturated_rate"), Some(0.0177));
        assert_eq!(searched.intermediate("search_points"), Some(9.0));
        assert_eq!(searched.intermediate("tolerance"), Some(TOLERANCE));
        let short = row(&scenario, &task(), "simulation", evaluator.clone(), &found(Some(0.03)));
        assert_eq!(short.status, "imprecise");
        assert!(short.error.as_deref().is_some_and(|e| e.contains("3.0%")), "{:?}", short.error);
        let no_knee = Saturation { saturated_rate: None, ..found(None) };
        let open = row(&scenario, &task(), "simulation", evaluator, &no_knee);
        assert_eq!((open.status.as_str(), open.intermediate("saturated_rate")), ("ok", None));
        // The knee is what loads given as fractions of the simulator's saturation take.
        let output = Output::Rows(vec![row(&scenario, &task(), "x", "x@1".into(), &found(None))]);
        assert_eq!(super::super::saturation_of_output(&output), Some(0.0175));
    }
}
