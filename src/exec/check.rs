//! Determinism as a contract: re-evaluate a seeded sample of a bundle's tasks and compare
//! their rows bit for bit with the bundle's `results.parquet` (`runner verify --check`).
//!
//! A bundle committed to git claims that its spec, at its evaluator versions, gives exactly
//! its rows. The check tests that claim on a sample, so it costs seconds, not the run:
//!
//! 1. the versions the bundle was produced with equal this binary's (`sim::VERSION`,
//!    `model::VERSION`), and the spec file's SHA-256 equals the one the bundle recorded;
//! 2. every Saturation task is re-evaluated (the fractions of saturation need them); where the
//!    loads are fractions of the simulator's saturation, its committed mean is taken;
//! 3. up to `per_kind` Simulate, Search, Solve, Curve and Aggregate tasks are drawn in a
//!    seeded order (the order of `blake3(seed, task id)`), skipping Simulate and Search tasks
//!    whose recorded wall time exceeds a limit; an Aggregate is recomputed from the committed
//!    rows of its replications or searches, so the statistics code is checked without
//!    re-simulating them;
//! 4. their rows, gathered as `runner run` gathers them and passed through Parquet, must equal
//!    the committed rows of the same tasks in every column except `wall_seconds`.
//!
//! External methods' tasks are not sampled: they run programs outside `runner`.

use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use super::TaskState;
use super::evaluate;
use crate::plan::{Plan, TaskKind};
use crate::spec::Experiment;
use crate::store::provenance::Provenance;
use crate::store::row::Row;

/// What to sample.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Tasks drawn per kind (Simulate, Search, Solve, Curve, Aggregate).
    pub per_kind: usize,
    /// Seed of the draw.
    pub seed: u64,
    /// Simulate and Search tasks that took longer than this when the bundle was produced (its
    /// `wall_seconds`) are passed over, so the check stays cheap.
    pub max_task_seconds: f64,
}

/// The outcome of a check.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Tasks re-evaluated and compared, per kind name.
    pub checked: Vec<(&'static str, usize)>,
    /// Rows compared.
    pub rows: usize,
    /// What does not match; empty when the bundle reproduces.
    pub mismatches: Vec<String>,
}

/// Why the bundle is stale before any task runs, if it is: it was produced by other evaluator
/// versions, or from another spec text. The message ends with `regenerate`.
pub fn stale(provenance: &Provenance, spec_sha256: &str, regenerate: &str) -> Option<String> {
    let versions = [
        ("simulator", &provenance.sim_version, crate::sim::VERSION),
        ("model", &provenance.model_version, crate::model::VERSION),
    ];
    for (what, bundle, now) in versions {
        if bundle != now {
            return Some(format!(
                "produced with {what} version {bundle}, but this runner is {now}: its results \
                 may have moved. {regenerate}"
            ));
        }
    }
    (provenance.spec_sha256 != spec_sha256).then(|| {
        format!(
            "its spec {} changed since the bundle was produced (SHA-256 {} then, {} now). \
             {regenerate}",
            provenance.spec_path,
            short(&provenance.spec_sha256),
            short(spec_sha256)
        )
    })
}

/// Re-evaluates a seeded sample of `plan`'s tasks and compares their rows with `committed`.
pub fn check_sample(
    experiment: &Experiment,
    plan: &Plan,
    committed: &[Row],
    options: &CheckOptions,
) -> Result<CheckReport, String> {
    let mut by_id: HashMap<&str, Vec<&Row>> = HashMap::new();
    for row in committed {
        by_id.entry(row.task_id.as_str()).or_default().push(row);
    }
    let mut states = vec![TaskState::Pending; plan.graph.node_count()];
    for node in plan.saturation.iter().flatten() {
        states[node.index()] = run(experiment, plan, *node, None, &[]);
    }
    // The simulator's saturation, where loads are fractions of it, is the committed mean of
    // its searches (re-running them all would cost the run; a sample of them is checked below).
    for &node in plan.load_saturation.iter().flatten() {
        if plan.graph[node].kind == TaskKind::Aggregate
            && let Some(rows) = by_id.get(plan.graph[node].id.as_str())
        {
            let rows = rows.iter().map(|row| (*row).clone()).collect();
            states[node.index()] = TaskState::Done(super::cache::Output::Rows(rows));
        }
    }
    let saturation = |plan: &Plan, states: &[TaskState], node: NodeIndex| {
        let task = &plan.graph[node];
        task.scenario
            .filter(|_| task.needs_saturation())
            .and_then(|s| super::load_saturation(plan, states, s))
    };
    let mut report = CheckReport::default();
    for kind in [
        TaskKind::Simulate,
        TaskKind::Search,
        TaskKind::Solve,
        TaskKind::Curve,
        TaskKind::Aggregate,
    ] {
        let mut candidates: Vec<(blake3::Hash, NodeIndex)> = plan
            .graph
            .node_indices()
            .filter(|&n| plan.graph[n].kind == kind && plan.graph[n].method.is_none())
            .map(|n| (draw(options.seed, &plan.graph[n].id), n))
            .collect();
        candidates.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut taken = 0;
        for (_, node) in candidates {
            if taken == options.per_kind {
                break;
            }
            let task = &plan.graph[node];
            if matches!(kind, TaskKind::Simulate | TaskKind::Search) {
                let seconds = by_id.get(task.id.as_str()).and_then(|rows| rows.first());
                if seconds.is_none_or(|row| row.wall_seconds > options.max_task_seconds) {
                    continue;
                }
            }
            let inputs = match kind {
                TaskKind::Aggregate => match replication_rows(plan, node, &by_id) {
                    Some(rows) => rows,
                    None => continue,
                },
                _ => Vec::new(),
            };
            let rate = saturation(plan, &states, node);
            states[node.index()] = run(experiment, plan, node, rate, &inputs);
            taken += 1;
        }
        report.checked.push((kind.name(), taken));
    }
    let fresh = through_parquet(&super::gather(experiment, plan, &states))?;
    // Group the fresh rows by task id, in their order (a Solve batch gives one row per
    // point, each with its point's id; the other tasks one or more rows under their own id).
    let mut order: Vec<&str> = Vec::new();
    let mut fresh_by_id: HashMap<&str, Vec<&Row>> = HashMap::new();
    for row in &fresh {
        let group = fresh_by_id.entry(row.task_id.as_str()).or_default();
        if group.is_empty() {
            order.push(row.task_id.as_str());
        }
        group.push(row);
    }
    for id in order {
        let now = fresh_by_id.get(id).cloned().unwrap_or_default();
        let then = by_id.get(id).cloned().unwrap_or_default();
        report.rows += now.len();
        if let Some(difference) = compare(&then, &now) {
            let what = now.first().map(|row| describe(row)).unwrap_or_default();
            report.mismatches.push(format!("row {} ({what}): {difference}", short(id)));
        }
    }
    Ok(report)
}

/// Evaluates one task into its state, as the executor would (no cache).
fn run(
    experiment: &Experiment,
    plan: &Plan,
    node: NodeIndex,
    saturation: Option<f64>,
    inputs: &[Row],
) -> TaskState {
    match evaluate::evaluate(experiment, &plan.graph[node], saturation, inputs, 1, None, None) {
        Ok(output) => TaskState::Done(output),
        Err(error) => TaskState::Failed(error),
    }
}

/// The committed rows of an Aggregate's replications, in plan order; `None` if one is missing.
fn replication_rows(
    plan: &Plan,
    node: NodeIndex,
    by_id: &HashMap<&str, Vec<&Row>>,
) -> Option<Vec<Row>> {
    let mut replicas: Vec<NodeIndex> =
        plan.graph.neighbors_directed(node, Direction::Incoming).collect();
    replicas.sort();
    let mut rows = Vec::new();
    for replica in replicas {
        let task = &plan.graph[replica];
        if !matches!(task.kind, TaskKind::Simulate | TaskKind::Search) {
            continue;
        }
        let committed = by_id.get(task.id.as_str())?;
        rows.extend(committed.iter().map(|row| (*row).clone()));
    }
    (!rows.is_empty()).then_some(rows)
}

/// Fresh rows as `results.parquet` stores them (what it leaves out, left out); the error
/// says which step failed.
fn through_parquet(rows: &[Row]) -> Result<Vec<Row>, String> {
    let dir =
        tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let path = dir.path().join("check.parquet");
    crate::store::parquet::write(&path, rows, &[])
        .map_err(|e| format!("cannot write the re-evaluated rows: {e}"))?;
    let (rows, _) = crate::store::parquet::read(&path)
        .map_err(|e| format!("cannot read the re-evaluated rows: {e}"))?;
    Ok(rows)
}

/// The first difference between committed and fresh rows of one task, if any.
fn compare(then: &[&Row], now: &[&Row]) -> Option<String> {
    if then.len() != now.len() {
        return Some(format!("{} rows now, {} in results.parquet", now.len(), then.len()));
    }
    for (a, b) in then.iter().zip(now) {
        let (a, b) = (comparable(a), comparable(b));
        if a == b {
            continue;
        }
        let mut differences = Vec::new();
        if let (serde_json::Value::Object(a), serde_json::Value::Object(b)) = (&a, &b) {
            for (key, value) in a {
                let other = b.get(key).unwrap_or(&serde_json::Value::Null);
                if value == other {
                    continue;
                }
                if key == "intermediates" {
                    differences.extend(intermediate_differences(value, other));
                } else {
                    differences.push(format!("{key} {value} then, {other} now"));
                }
            }
        }
        differences.truncate(3);
        let differences = differences.join("; ");
        return Some(differences);
    }
    None
}

/// The named quantities of `intermediates` (a JSON object in a string) that differ.
fn intermediate_differences(then: &serde_json::Value, now: &serde_json::Value) -> Vec<String> {
    let parse = |value: &serde_json::Value| -> serde_json::Map<String, serde_json::Value> {
        value.as_str().and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default()
    };
    let (then, now) = (parse(then), parse(now));
    let mut keys: Vec<&String> = then.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|key| then.get(*key) != now.get(*key))
        .map(|key| {
            let show = |map: &serde_json::Map<String, serde_json::Value>| {
                map.get(key).map_or_else(|| "absent".to_owned(), ToString::to_string)
            };
            format!("intermediates.{key} {} then, {} now", show(&then), show(&now))
        })
        .collect()
}

/// A row as JSON without its timing, for an exact comparison (`float_roundtrip` keeps every
/// bit of a finite number; a non-finite one becomes null on both sides).
fn comparable(row: &Row) -> serde_json::Value {
    let mut row = row.clone();
    row.wall_seconds = 0.0;
    serde_json::to_value(&row).unwrap_or(serde_json::Value::Null)
}

/// The position of a task in the seeded draw.
fn draw(seed: u64, id: &str) -> blake3::Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&seed.to_le_bytes());
    hasher.update(id.as_bytes());
    hasher.finalize()
}

/// A row's method, scenario, load and replication, for a reader.
fn describe(row: &Row) -> String {
    let mut parts = vec![row.method.clone(), format!("scenario {}", row.scenario_id)];
    parts.push(format!("rate {}", row.rate));
    if let Some(replication) = row.replication {
        parts.push(format!("replication {replication}"));
    }
    parts.join(", ")
}

/// The first 12 hex digits of a hash.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
