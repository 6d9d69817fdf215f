//! Solve batches: the model at up to [`SOLVE_BATCH`](crate::plan::SOLVE_BATCH) loads of one
//! scenario, evaluated in one task and cached in one entry.
//!
//! A model point takes some ten microseconds; as a task of its own it cost far more in
//! scheduling, a cache file and a full JSON row. A batch stores per point only what the model
//! measured ([`SolvedPoint`]); [`rows`] rebuilds the rows from the scenario, the load and that
//! measurement, exactly as a single solve fills them, so a point's numbers do not depend on
//! batching. Each row's `task_id` is the point's own content hash
//! ([`SolveIds`](crate::plan::identity::SolveIds)), the id a Solve of that one load has.
//!
//! A point whose solve fails (an error or a panic) is a `failed` point with its error; the
//! others are unaffected. A batch with a failed point is not cached (failed results never
//! are), so a re-run retries it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::TaskState;
use super::cache::Output;
use super::evaluate::{Failure, panic_message, resolve_rate};
use crate::measurement::Measurement;
use crate::model;
use crate::plan::identity::SolveIds;
use crate::plan::{LoadPoint, Task};
use crate::spec::Experiment;
use crate::store::build::{base_row_at, finite, set_load_columns};
use crate::store::row::Row;

/// The status of a point whose solve failed.
const FAILED: &str = "failed";

/// What the model measured at one point of a batch: the row columns a solve fills (the rest
/// come from the scenario and the load).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SolvedPoint {
    /// `ok`, `saturated`, ... or `failed`.
    pub status: String,
    /// Why it is saturated or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Mean latency (cycles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<f64>,
    /// Half-width of the latency's 95% interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ci95: Option<f64>,
    /// Network latency (cycles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_latency: Option<f64>,
    /// Source wait (cycles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_wait: Option<f64>,
    /// Unicast latency (cycles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unicast_latency: Option<f64>,
    /// V-bar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplexing_degree: Option<f64>,
    /// Channel arrival rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_rate: Option<f64>,
    /// P_V.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking_probability: Option<f64>,
    /// Accepted throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<f64>,
    /// Mean hops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<f64>,
    /// The intermediates as the row holds them (a JSON object).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub intermediates: String,
    /// Seconds the point took.
    pub wall_seconds: f64,
}

impl SolvedPoint {
    /// Whether the point's solve failed.
    pub fn failed(&self) -> bool {
        self.status == FAILED
    }

    /// The point as a solve's measurement fills a row (`store::build::fill`), through a row so the
    /// two never differ.
    fn measured(measurement: &Measurement) -> SolvedPoint {
        let mut row = Row::default();
        crate::store::build::fill(&mut row, measurement);
        SolvedPoint {
            status: row.status,
            error: row.error,
            latency: row.latency,
            latency_ci95: row.latency_ci95,
            network_latency: row.network_latency,
            source_wait: row.source_wait,
            unicast_latency: row.unicast_latency,
            multiplexing_degree: row.multiplexing_degree,
            channel_rate: row.channel_rate,
            blocking_probability: row.blocking_probability,
            throughput: row.throughput,
            hops: row.hops,
            intermediates: row.intermediates,
            wall_seconds: 0.0,
        }
    }

    /// Writes the point's columns into `row`.
    fn apply(&self, row: &mut Row) {
        row.status.clone_from(&self.status);
        row.error.clone_from(&self.error);
        row.latency = finite(self.latency);
        row.latency_ci95 = finite(self.latency_ci95);
        row.network_latency = finite(self.network_latency);
        row.source_wait = finite(self.source_wait);
        row.unicast_latency = finite(self.unicast_latency);
        row.multiplexing_degree = finite(self.multiplexing_degree);
        row.channel_rate = finite(self.channel_rate);
        row.blocking_probability = finite(self.blocking_probability);
        row.throughput = finite(self.throughput);
        row.hops = finite(self.hops);
        if !self.intermediates.is_empty() {
            row.intermediates.clone_from(&self.intermediates);
        }
        row.wall_seconds = self.wall_seconds;
    }
}

/// Evaluates a Solve batch: every point in load order, each on its own (a failure or a panic
/// fails that point only).
pub fn solve(
    experiment: &Experiment,
    task: &Task,
    saturation: Option<f64>,
) -> Result<Output, Failure> {
    let model = experiment.model.as_ref().ok_or("no model in the spec")?;
    let scenario_index = task.scenario.ok_or("task has no scenario")?;
    let scenario = &experiment.scenarios[scenario_index].scenario;
    let range = task.loads.ok_or("a Solve task without its loads")?;
    let loads = range.points(&experiment.load);
    if loads.len() != range.len as usize {
        return Err(format!("the batch's loads {range:?} are not in the spec's load list"));
    }
    let points = loads
        .into_iter()
        .map(|load| {
            let started = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| {
                let rate = resolve_rate(scenario, Some(load), saturation)?;
                model::solve(model.name, scenario, rate, &model.options).map_err(|e| e.to_string())
            }))
            .unwrap_or_else(|panic| Err(panic_message(panic.as_ref())));
            let mut point = match result {
                Ok(measurement) => SolvedPoint::measured(&measurement),
                Err(error) => SolvedPoint {
                    status: FAILED.into(),
                    error: Some(error),
                    ..SolvedPoint::default()
                },
            };
            point.wall_seconds = started.elapsed().as_secs_f64();
            point
        })
        .collect();
    Ok(Output::Points(points))
}

/// The rows of a Solve batch in load order, from its state: its points when done; every point
/// `failed` or `skipped` with the task's error when the task failed or was skipped; none when
/// it did not run. `saturation` is the scenario's saturation rate, when known.
pub fn rows(
    experiment: &Experiment,
    task: &Task,
    saturation: Option<f64>,
    state: &TaskState,
) -> Vec<Row> {
    let (Some(model), Some(scenario_index), Some(range)) =
        (&experiment.model, task.scenario, task.loads)
    else {
        return Vec::new();
    };
    let scenario = &experiment.scenarios[scenario_index].scenario;
    let loads = range.points(&experiment.load);
    let ids = SolveIds::new(scenario, model);
    let mut template = base_row_at(scenario, None, task.kind, String::new(), f64::NAN, "model");
    template.evaluator = format!("{}@{}", model.name.as_str(), model::VERSION);
    let row = |load: LoadPoint| {
        let mut row = template.clone();
        row.task_id = ids.id(load);
        row.rate = load.rate(scenario, saturation);
        set_load_columns(&mut row, scenario, Some(load));
        row
    };
    match state {
        TaskState::Done(Output::Points(points)) => loads
            .into_iter()
            .zip(points)
            .map(|(load, point)| {
                let mut row = row(load);
                point.apply(&mut row);
                row
            })
            .collect(),
        TaskState::Failed(error) | TaskState::Skipped(error) => {
            let status = if matches!(state, TaskState::Failed(_)) { FAILED } else { "skipped" };
            loads
                .into_iter()
                .map(|load| {
                    let mut row = row(load);
                    row.status = status.into();
                    row.error = Some(error.clone());
                    row
                })
                .collect()
        }
        TaskState::Done(_) | TaskState::Pending => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::evaluate::evaluate;
    use crate::plan::{self, TaskKind};
    use crate::spec::{self, Load, SpecSource};
    use crate::store::build::{base_row, fill};

    fn experiment(text: &str) -> Experiment {
        let source =
            SpecSource { path: "batch.yaml".into(), text: text.into(), sha256: String::new() };
        spec::parse(&source).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The row a single solve of `load` makes (the path before batches).
    fn single(
        experiment: &Experiment,
        task: &Task,
        load: LoadPoint,
        saturation: Option<f64>,
    ) -> Row {
        let (Some(model), Some(index)) = (&experiment.model, task.scenario) else {
            panic!("no model")
        };
        let scenario = &experiment.scenarios[index].scenario;
        let rate = resolve_rate(scenario, Some(load), saturation).unwrap_or(f64::NAN);
        let id = crate::plan::identity::solve(scenario, model, load);
        let mut row = base_row_at(scenario, Some(load), TaskKind::Solve, id, rate, "model");
        row.evaluator = format!("{}@{}", model.name.as_str(), model::VERSION);
        match model::solve(model.name, scenario, rate, &model.options) {
            Ok(measurement) => fill(&mut row, &measurement),
            Err(error) => {
                row.status = FAILED.into();
                row.error = Some(error.to_string());
            }
        }
        row
    }

    /// Every point of a batch gives the row a solve of that one load gives, bit for bit
    /// (wall time aside), through the cache entry's JSON too; the chunking is by load order.
    #[test]
    fn batched_points_equal_single_solves() {
        for text in [
            "name: b\nscenario:\n  topology: {kind: torus, radix: 8, dimensions: 2}\n  \
             routing: nbc\n  virtual_channels: [6, 10]\n  message_length: 32\n\
             load: {fraction_of_saturation: {from: 0.05, to: 1.05, points: 5000}}\n\
             methods: {model: {name: nbc_torus, curve_points: 0}}\n",
            "name: b\nscenario:\n  topology: {kind: fat_tree, processors: 64}\n  \
             routing: up_down\nload: {rates: {from: 0.0001, to: 0.02, points: 40}}\n\
             methods: {model: {name: fat_tree, curve_points: 0}}\n",
        ] {
            let experiment = experiment(text);
            let plan = plan::build(&experiment, None);
            let batches: Vec<&Task> =
                plan.graph.node_weights().filter(|t| t.kind == TaskKind::Solve).collect();
            let per_scenario = experiment.load.len().div_ceil(plan::SOLVE_BATCH);
            assert_eq!(batches.len(), experiment.scenarios.len() * per_scenario);
            for task in batches {
                let index = task.scenario.unwrap_or_default();
                let saturation = experiment.model.as_ref().and_then(|m| {
                    model::saturation_rate(
                        m.name,
                        &experiment.scenarios[index].scenario,
                        &m.options,
                    )
                    .ok()
                });
                let output = evaluate(&experiment, task, saturation, &[], 1, None, None)
                    .unwrap_or_else(|e| panic!("{e}"));
                let json = serde_json::to_vec(&output).unwrap_or_default();
                let read: Output = serde_json::from_slice(&json).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(read, output, "the entry's JSON round-trips");
                let rows = rows(&experiment, task, saturation, &TaskState::Done(read));
                let range = task.loads.unwrap_or_else(|| panic!("no loads"));
                let loads = range.points(&experiment.load);
                assert_eq!(rows.len(), loads.len());
                for (row, load) in rows.iter().zip(loads) {
                    let expected = single(&experiment, task, load, saturation);
                    let row = Row { wall_seconds: 0.0, ..row.clone() };
                    assert_eq!(row, expected, "{load:?}");
                }
            }
        }
    }

    /// A point whose solve fails is a failed row with its error; the batch's other points
    /// are fine, and a batch with a failed point is not cached.
    #[test]
    fn a_failed_point_fails_alone() {
        let mut experiment = experiment(
            "name: b\nscenario:\n  topology: {kind: fat_tree, processors: 16}\n  \
             routing: up_down\nload: {rates: [0.001, 0.002, 0.003]}\n\
             methods: {model: {name: fat_tree, curve_points: 0}}\n",
        );
        experiment.load = Load::Rates(vec![0.001, -1.0, 0.003]);
        let plan = plan::build(&experiment, None);
        let Some(task) = plan.graph.node_weights().find(|t| t.kind == TaskKind::Solve) else {
            panic!("no Solve task")
        };
        let output =
            evaluate(&experiment, task, None, &[], 1, None, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(output.failed_points(), 1);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cache = super::super::cache::Cache::new(dir.path());
        cache.put_unless_failed(&task.id, task.kind, &output).unwrap_or_else(|e| panic!("{e}"));
        assert!(!cache.contains(&task.id, task.kind), "failures are never cached");
        let rows = rows(&experiment, task, None, &TaskState::Done(output));
        let statuses: Vec<&str> = rows.iter().map(|r| r.status.as_str()).collect();
        assert_eq!(statuses, ["ok", "failed", "ok"]);
        assert!(rows[1].error.as_deref().is_some_and(|e| e.contains("rate")), "{:?}", rows[1]);
        assert!(rows[0].latency.is_some() && rows[1].latency.is_none());
        // A batch that failed as a whole gives every point a failed row with its error.
        let failed = rows_of(&experiment, task, TaskState::Failed("boom".into()));
        assert!(failed.iter().all(|r| r.status == FAILED && r.error.as_deref() == Some("boom")));
        assert_eq!(failed.len(), 3);
        assert_eq!(base_row(&experiment.scenarios[0].scenario, task, 0.0, "model").method, "model");
    }

    /// A batch whose points the run left in its cache entry (`Output::InCache`, what a run
    /// keeps of a batch with no failed point) gives the rows of its points, read back; an entry
    /// removed since gives every point a failed row saying so.
    #[test]
    fn a_batch_left_in_the_cache_is_read_back() {
        let experiment = experiment(
            "name: b\nscenario:\n  topology: {kind: fat_tree, processors: 16}\n  \
             routing: up_down\nload: {rates: [0.001, 0.002, 0.003]}\n\
             methods: {model: {name: fat_tree, curve_points: 0}}\n",
        );
        let plan = plan::build(&experiment, None);
        let Some(node) = plan.graph.node_indices().find(|&n| plan.graph[n].kind == TaskKind::Solve)
        else {
            panic!("no Solve task")
        };
        let task = &plan.graph[node];
        let output =
            evaluate(&experiment, task, None, &[], 1, None, None).unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cache = super::super::cache::Cache::new(dir.path().join("cache"));
        cache.put_unless_failed(&task.id, task.kind, &output).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(super::super::in_cache(output.clone()), Output::InCache);
        let mut states = vec![TaskState::Pending; plan.graph.node_count()];
        states[node.index()] = TaskState::Done(output);
        let gather = |states: &[TaskState]| -> Vec<Row> {
            super::super::Gather::new(&experiment, &plan, states, &cache).collect()
        };
        let kept = gather(&states);
        assert_eq!(kept.len(), 3);
        states[node.index()] = TaskState::Done(Output::InCache);
        assert_eq!(gather(&states), kept);
        std::fs::remove_dir_all(dir.path().join("cache")).unwrap_or_else(|e| panic!("{e}"));
        let lost = gather(&states);
        assert_eq!(lost.len(), 3);
        assert!(
            lost.iter().all(|row| row.status == FAILED
                && row.error.as_deref().is_some_and(|e| e.contains("removed during the run"))),
            "{lost:?}"
        );
        // A batch with a failed point is kept whole: its entry was never written.
        let failed =
            Output::Points(vec![SolvedPoint { status: FAILED.into(), ..SolvedPoint::default() }]);
        assert_eq!(super::super::in_cache(failed.clone()), failed);
    }

    /// The task states a run starts from are the same read on one thread or several: each
    /// task's verdict (done, kept as a run keeps it; corrupt, with why; missing) in plan order.
    #[test]
    fn cached_states_are_the_same_on_any_number_of_threads() {
        let experiment = experiment(
            "name: c\nscenario:\n  topology: {kind: fat_tree, processors: [16, 64]}\n  \
             routing: up_down\n  message_length: [8, 16, 32]\n\
             load: {rates: [0.001, 0.002, 0.003]}\n\
             methods: {model: {name: fat_tree, curve_points: 0}}\n",
        );
        let plan = plan::build(&experiment, None);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cache = super::super::cache::Cache::new(dir.path().join("cache"));
        let solves: Vec<&Task> =
            plan.graph.node_weights().filter(|t| t.kind == TaskKind::Solve).collect();
        assert_eq!(solves.len(), 6, "one batch per scenario");
        for task in &solves {
            let output = evaluate(&experiment, task, None, &[], 1, None, None)
                .unwrap_or_else(|e| panic!("{e}"));
            cache.put_unless_failed(&task.id, task.kind, &output).unwrap_or_else(|e| panic!("{e}"));
        }
        // One entry damaged, one removed.
        let entry = |task: &Task| {
            dir.path().join("cache").join(&task.id[..2]).join(format!("{}.json", task.id))
        };
        std::fs::write(entry(solves[1]), "{").unwrap_or_else(|e| panic!("{e}"));
        std::fs::remove_file(entry(solves[4])).unwrap_or_else(|e| panic!("{e}"));
        let one = super::super::cached_states(&plan, &cache, false, 1);
        assert_eq!((one.1, one.2.len()), (4, 1), "{:?}", one.2);
        assert_eq!(
            one.0[plan
                .graph
                .node_indices()
                .find(|&n| plan.graph[n].id == solves[0].id)
                .unwrap_or_else(|| panic!("no task"))
                .index()],
            TaskState::Done(Output::InCache)
        );
        for readers in [2, 3, 64] {
            assert_eq!(super::super::cached_states(&plan, &cache, false, readers), one);
        }
    }

    fn rows_of(experiment: &Experiment, task: &Task, state: TaskState) -> Vec<Row> {
        rows(experiment, task, None, &state)
    }
}
