//! Running one task: where the pipeline calls `model` and `sim` (a Solve batch's points
//! through [`super::batch`], a saturation search through [`super::search`]), and external
//! programs (through [`super::external`]); an Aggregate is [`super::aggregate`]'s. Rows are built by `store::build`.
//!
//! Evaluator errors become rows with `status = failed`; a panic inside an
//! evaluator is caught and reported the same way (as a bug), so one bad point
//! never takes the run down.

use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::cache::Output;
use crate::measurement::Measurement;
use crate::model;
use crate::plan::{LoadPoint, Task, TaskKind, identity};
use crate::scenario::Scenario;
use crate::sim;
use crate::spec::Experiment;
use crate::store::build::{base_row, fill, fill_throughput};
use crate::store::row::Row;

/// Why a task failed.
pub type Failure = String;

/// The failure of a simulation stopped after an interrupt: not a result, not cached; the
/// executor counts the task as abandoned.
pub const CANCELLED: &str = "cancelled after an interrupt";

/// After an interrupt, a running simulation goes on only if it ends within this time (by its
/// own estimate, and at the latest this long after the interrupt was seen): a single Ctrl-C or
/// SIGTERM keeps the results of short tasks and stops long ones.
pub const GRACE: Duration = Duration::from_secs(10);

/// Runs a compute task. `saturation` is the scenario's saturation rate when the
/// task's load is a fraction of it; `inputs` are the replication rows of an Aggregate;
/// `log` is where an External task's program writes its standard error
/// ([`Cache::log_path`](super::cache::Cache::log_path)).
/// Once `interrupt` is set, a simulation that would not end within [`GRACE`] stops and
/// returns [`CANCELLED`] (an external program still running [`GRACE`] later is killed).
pub fn evaluate(
    experiment: &Experiment,
    task: &Task,
    saturation: Option<f64>,
    inputs: &[Row],
    threads: usize,
    log: Option<&Path>,
    interrupt: Option<&AtomicBool>,
) -> Result<Output, Failure> {
    let caught = catch_unwind(AssertUnwindSafe(|| {
        evaluate_inner(experiment, task, saturation, inputs, threads, log, interrupt)
    }));
    match caught {
        Ok(result) => result,
        Err(panic) => Err(panic_message(panic.as_ref())),
    }
}

/// The failure a caught panic becomes: a bug in runner, with the panic's message.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> Failure {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal error (a bug in runner, please report it): {text}")
}

fn evaluate_inner(
    experiment: &Experiment,
    task: &Task,
    saturation: Option<f64>,
    inputs: &[Row],
    threads: usize,
    log: Option<&Path>,
    interrupt: Option<&AtomicBool>,
) -> Result<Output, Failure> {
    let scenario_index = task.scenario.ok_or("task has no scenario")?;
    let scenario = &experiment.scenarios[scenario_index].scenario;
    let started = Instant::now();
    match task.kind {
        TaskKind::Saturation => {
            let model = experiment.model.as_ref().ok_or("no model in the spec")?;
            model::saturation_rate(model.name, scenario, &model.options)
                .map(Output::Saturation)
                .map_err(|e| e.to_string())
        }
        TaskKind::Solve => super::batch::solve(experiment, task, saturation),
        TaskKind::Curve => {
            let model = experiment.model.as_ref().ok_or("no model in the spec")?;
            let saturation = saturation
                .filter(|rate| rate.is_finite() && *rate > 0.0)
                .ok_or("the saturation rate of this scenario is not available")?;
            let mut rows = Vec::with_capacity(model.curve_points as usize);
            for fraction in identity::curve_fractions(model.curve_points) {
                let point = Instant::now();
                let rate = fraction * saturation;
                let mut row = base_row(scenario, task, rate, "model");
                row.evaluator = format!("{}@{}", model.name.as_str(), model::VERSION);
                row.fraction_of_saturation = Some(fraction);
                match model::solve(model.name, scenario, rate, &model.options) {
                    Ok(measurement) => fill(&mut row, &measurement),
                    Err(error) => {
                        row.status = "failed".into();
                        row.error = Some(error.to_string());
                    }
                }
                row.wall_seconds = point.elapsed().as_secs_f64();
                rows.push(row);
            }
            Ok(Output::Rows(rows))
        }
        TaskKind::Simulate => {
            let simulation = experiment.simulation.as_ref().ok_or("no simulation in the spec")?;
            let rate = resolve_rate(scenario, task.load, saturation)?;
            let seed = task.seed.ok_or("simulation task without a seed")?;
            let options = sim::SimOptions {
                fault_seed: task.fault_seed,
                threads,
                ..simulation.options.clone()
            };
            let interrupted_at = OnceLock::new();
            let watch = |done: u64, planned: u64| {
                keep_going(interrupt, &interrupted_at, started, done, planned)
            };
            let measurement = match scenario.traffic.trace() {
                None => sim::simulate(scenario, rate, &options, seed, Some(&watch)),
                Some(_) => replay(scenario, task.load, &options, seed, Some(&watch)),
            }
            .map_err(|e| if e.is_cancelled() { CANCELLED.to_string() } else { e.to_string() })?;
            let mut row = base_row(scenario, task, rate, "simulation");
            row.evaluator = format!("simulator@{}", sim::VERSION);
            row.replication = task.replication;
            row.seed = Some(seed);
            row.fault_seed = task.fault_seed;
            fill(&mut row, &measurement);
            fill_throughput(&mut row, &measurement, &simulation.options.measure);
            row.link_loads = measurement.link_loads;
            row.histograms = measurement.histograms;
            row.wall_seconds = started.elapsed().as_secs_f64();
            Ok(Output::Rows(vec![row]))
        }
        TaskKind::External => {
            let method = task
                .method
                .and_then(|m| experiment.external.get(m))
                .ok_or("external task without its method")?;
            let rate = resolve_rate(scenario, task.load, saturation)?;
            super::external::evaluate(method, task, scenario, rate, saturation, log, interrupt)
        }
        TaskKind::Search => match task.method {
            None => super::search::simulator(experiment, task, scenario, threads, interrupt),
            Some(method) => {
                super::search::external(experiment, task, scenario, method, log, interrupt)
            }
        },
        TaskKind::Aggregate => Ok(Output::Rows(vec![super::aggregate::aggregate(inputs, task)?])),
        TaskKind::Gather | TaskKind::Report => Err("not a compute task".into()),
    }
}

/// Whether a simulation started at `started`, `done` of `planned` cycles in, goes on: always
/// until `interrupt` is set; after that only while it would end within [`GRACE`] of the moment
/// the interrupt was first seen (`interrupted_at`).
pub(crate) fn keep_going(
    interrupt: Option<&AtomicBool>,
    interrupted_at: &OnceLock<Instant>,
    started: Instant,
    done: u64,
    planned: u64,
) -> ControlFlow<()> {
    if !interrupt.is_some_and(|flag| flag.load(Ordering::SeqCst)) {
        return ControlFlow::Continue(());
    }
    let since = interrupted_at.get_or_init(Instant::now).elapsed();
    let remaining = match done {
        0 => Duration::MAX,
        _ => started.elapsed().mul_f64(planned.saturating_sub(done) as f64 / done as f64),
    };
    if since.saturating_add(remaining) > GRACE {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

pub(crate) fn resolve_rate(
    scenario: &Scenario,
    load: Option<LoadPoint>,
    saturation: Option<f64>,
) -> Result<f64, Failure> {
    match load {
        Some(LoadPoint::Rate(rate)) => Ok(rate),
        Some(LoadPoint::FractionOfSaturation(fraction)) => saturation
            .map(|s| fraction * s)
            .ok_or_else(|| "the saturation rate of this scenario is not available".into()),
        Some(point @ LoadPoint::TraceTimeScale(_)) => {
            Ok(point.rate(scenario, None)).and_then(|rate| {
                rate.is_finite().then_some(rate).ok_or_else(|| "no trace in this scenario".into())
            })
        }
        None => Err("task has no load".into()),
    }
}

/// Replays the trace of `scenario` at the load point's time scale: the file is opened and
/// streamed through `crate::trace` (problems come back as errors naming file, row and column).
fn replay(
    scenario: &Scenario,
    load: Option<LoadPoint>,
    options: &sim::SimOptions,
    seed: u64,
    progress: Option<sim::Progress<'_>>,
) -> Result<Measurement, sim::SimError> {
    let trace = scenario.traffic.trace().ok_or_else(|| sim::SimError("no trace".into()))?;
    let Some(LoadPoint::TraceTimeScale(time_scale)) = load else {
        return Err(sim::SimError("a trace is replayed at a time scale, not a rate".into()));
    };
    let nodes = u32::try_from(scenario.nodes()).ok();
    // The task id holds the content hash taken when the spec was loaded: what is replayed must
    // be that content, so the file is hashed again before and after it is streamed.
    unchanged(trace, "before the replay")?;
    let reader =
        crate::trace::open(&trace.path, trace.flit_bytes, nodes).map_err(|e| sim::SimError(e.0))?;
    let replay = sim::Replay { records: Box::new(reader), time_scale };
    let measurement = sim::replay(scenario, replay, options, seed, progress)?;
    unchanged(trace, "during the replay")?;
    Ok(measurement)
}

/// Refuses a trace file whose content is no longer the content its task id holds.
fn unchanged(trace: &crate::scenario::TraceFile, when: &str) -> Result<(), sim::SimError> {
    let changed = crate::files::changed_hash(&trace.path, &trace.blake3).map_err(|e| {
        sim::SimError(format!("trace {}: cannot be read again: {e}", trace.path.display()))
    })?;
    let Some(now) = changed else { return Ok(()) };
    Err(sim::SimError(format!(
        "trace {} changed since the spec was loaded ({when}): its blake3 was {} and is now {}; \
         nothing is cached, so run again to replay the new content",
        trace.path.display(),
        crate::files::short_hash(&trace.blake3),
        crate::files::short_hash(&now)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{TraceFile, TraceSummary, Traffic};

    /// A scenario on the 4x4 mesh replaying `path`, whose content hash is taken to be `blake3`.
    fn replaying(path: &std::path::Path, blake3: String) -> Scenario {
        let mut scenario =
            Scenario::new(crate::scenario::Topology::Mesh { radix: 4, dimensions: 2 });
        scenario.traffic = Traffic::Trace(TraceFile {
            path: path.to_path_buf(),
            blake3,
            flit_bytes: None,
            summary: TraceSummary::default(),
        });
        scenario
    }

    #[test]
    fn a_trace_edited_after_the_spec_was_loaded_is_refused_not_replayed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "cycle,source,destination,length\n1,0,5,4\n9,3,12,4\n").expect("w");
        let hashed = crate::files::hash_regular(&path).expect("hash");
        let options = sim::SimOptions { warmup_cycles: 0, cycles: 200, ..Default::default() };
        let load = Some(LoadPoint::TraceTimeScale(1.0));
        let scenario = replaying(&path, hashed.clone());
        if let Err(e) = replay(&scenario, load, &options, 1, None) {
            panic!("the content as hashed is replayed: {}", e.0);
        }
        // The file as the task id describes it no longer exists: edited after loading.
        std::fs::write(&path, "cycle,source,destination,length\n1,0,5,4\n9,3,13,4\n").expect("w");
        let refused = replay(&scenario, load, &options, 1, None).expect_err("edited trace");
        assert!(refused.0.contains("changed since the spec was loaded"), "{}", refused.0);
        assert!(refused.0.contains(&hashed[..16]), "{}", refused.0);
    }
}
