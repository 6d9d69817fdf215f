//! Execution: running a plan's tasks on a rayon pool, as soon as their inputs are ready.
//!
//! The scheduler keeps the graph on the calling thread. Ready tasks go to the
//! pool; each worker evaluates its task, writes the cache entry (atomically,
//! see [`cache`]) and sends the output back over a channel. When a task
//! finishes, its dependants whose inputs are now all ready are spawned at once:
//! there are no levels or barriers. A failed task marks its dependants skipped
//! and the rest go on. An interrupt stops scheduling and abandons the tasks still
//! queued in the pool; the running ones finish and are cached, so a re-run loses
//! nothing that was computed.

pub mod aggregate;
pub mod batch;
pub mod cache;
pub mod check;
pub mod evaluate;
pub mod executor;
pub mod external;
mod gather;
pub mod guard;
pub mod lock;
mod search;
pub mod slurm;

pub use gather::gather;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use cache::{Cache, Lookup, Output};

use crate::console::Progress;
use crate::plan::{Plan, TaskKind};
use crate::spec::Experiment;
use crate::store::row::Row;

/// How a worker's failure to write a cache entry starts (the rest is the I/O error).
const CACHE_WRITE: &str = "cache: ";

/// How to run.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// Worker threads.
    pub jobs: usize,
    /// Ignore cached results and recompute everything.
    pub force: bool,
    /// No progress output.
    pub quiet: bool,
}

/// The state of one task after a run.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskState {
    /// Not run (interrupted before it started).
    Pending,
    /// Finished now or earlier (cached).
    Done(Output),
    /// Failed with this error.
    Failed(String),
    /// Not run because an input failed.
    Skipped(String),
}

/// What a run did.
#[derive(Debug)]
pub struct RunSummary {
    /// Final state per node index.
    pub states: Vec<TaskState>,
    /// Tasks executed in this run.
    pub executed: usize,
    /// Tasks taken from the cache.
    pub cached: usize,
    /// Tasks that failed, and points of Solve batches that failed (the batch itself is done).
    pub failed: usize,
    /// Cache entries found corrupt (wrong kind, checksum or shape) and so recomputed, with why.
    pub corrupt: Vec<String>,
    /// Tasks skipped because an input failed.
    pub skipped: usize,
    /// Whether the run was interrupted.
    pub interrupted: bool,
}

/// The task states a run starts from: every compute task with a valid cache entry `Done` (none
/// with `force`), the rest `Pending`; also how many were cached and why each corrupt entry was
/// rejected. Both executors start here.
pub(crate) fn cached_states(
    plan: &Plan,
    cache: &Cache,
    force: bool,
) -> (Vec<TaskState>, usize, Vec<String>) {
    let graph = &plan.graph;
    let mut states = vec![TaskState::Pending; graph.node_count()];
    let (mut cached, mut corrupt) = (0, Vec::new());
    if !force {
        for node in graph.node_indices().filter(|&i| graph[i].kind.is_compute()) {
            match cache.lookup(&graph[node].id, graph[node].kind) {
                Lookup::Hit(output) => {
                    states[node.index()] = TaskState::Done(output);
                    cached += 1;
                }
                Lookup::Corrupt(why) => corrupt.push(why),
                Lookup::Missing => {}
            }
        }
    }
    (states, cached, corrupt)
}

/// The states of `full` (the plan of every method) after a run of `plan` (a part of it, as
/// `--only` builds): a task `plan` holds keeps its state from `states`, any other takes its
/// cached output, or stays `Pending` (no row). `runner run --only model` thus reports the
/// cached simulation results beside the fresh model results, instead of replacing a complete
/// bundle with a partial one.
pub fn with_cached_rest(
    full: &Plan,
    plan: &Plan,
    states: &[TaskState],
    cache: &Cache,
) -> Vec<TaskState> {
    let from_run: std::collections::HashMap<&str, &TaskState> = plan
        .graph
        .node_indices()
        .map(|node| (plan.graph[node].id.as_str(), &states[node.index()]))
        .collect();
    let (mut merged, _, _) = cached_states(full, cache, false);
    for node in full.graph.node_indices() {
        if let Some(state) = from_run.get(full.graph[node].id.as_str()) {
            merged[node.index()] = (*state).clone();
        }
    }
    merged
}

/// Runs every compute task of `plan`, using and filling `cache`.
///
/// Fails (after the tasks in flight finish) when a cache entry cannot be written: that is the
/// environment failing (a full disk, say), and going on would only compute results to lose.
pub fn run(
    experiment: &Experiment,
    plan: &Plan,
    cache: &Cache,
    options: &ExecOptions,
    interrupt: &Arc<AtomicBool>,
) -> std::io::Result<RunSummary> {
    let graph = &plan.graph;
    let n = graph.node_count();
    let compute: Vec<NodeIndex> =
        graph.node_indices().filter(|&i| graph[i].kind.is_compute()).collect();
    let (mut states, cached, corrupt) = cached_states(plan, cache, options.force);
    let mut waiting: Vec<usize> = vec![0; n];
    let mut ready = Vec::new();
    let mut to_run = 0u64;
    for &node in &compute {
        if states[node.index()] != TaskState::Pending {
            continue;
        }
        to_run += 1;
        let pending_inputs = graph
            .neighbors_directed(node, Direction::Incoming)
            .filter(|p| !matches!(states[p.index()], TaskState::Done(_)))
            .count();
        waiting[node.index()] = pending_inputs;
        if pending_inputs == 0 {
            ready.push(node);
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs.max(1))
        .thread_name(|i| format!("runner-worker-{i}"))
        .build()
        .map_err(std::io::Error::other)?;
    let mut progress = Progress::new(to_run, &experiment.name, options.quiet);
    // `None`: the task was abandoned unstarted after an interrupt.
    let (sender, receiver) = mpsc::channel::<(NodeIndex, Option<Result<Output, String>>)>();
    let mut in_flight = 0usize;
    let (mut executed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let mut interrupted = false;
    let shared = Arc::new(experiment.clone());
    let mut cache_error = None;
    loop {
        if interrupt.load(Ordering::SeqCst) {
            interrupted = true;
        }
        while !interrupted
            && cache_error.is_none()
            && let Some(node) = ready.pop()
        {
            let task = graph[node].clone();
            let saturation = task
                .scenario
                .and_then(|scenario| load_saturation(plan, &states, scenario))
                .filter(|_| task.needs_saturation());
            let inputs = aggregate_inputs(plan, &states, node);
            let sender = sender.clone();
            let cache = cache.clone();
            let experiment = Arc::clone(&shared);
            in_flight += 1;
            let interrupt = Arc::clone(interrupt);
            pool.spawn(move || {
                // Tasks still queued in the pool when Ctrl-C arrives are abandoned unstarted, so
                // an interrupt waits only for the tasks actually running.
                if interrupt.load(Ordering::SeqCst) {
                    let _ = sender.send((node, None));
                    return;
                }
                let log = cache.log_path(&task.id);
                let result = evaluate::evaluate(
                    &experiment,
                    &task,
                    saturation,
                    &inputs,
                    Some(&log),
                    Some(&interrupt),
                );
                if result.as_ref().is_err_and(|e| e == evaluate::CANCELLED) {
                    // Stopped after the interrupt: abandoned like a task never started.
                    let _ = sender.send((node, None));
                    return;
                }
                let result = match result {
                    Ok(output) => match cache.put_unless_failed(&task.id, task.kind, &output) {
                        Ok(()) => Ok(output),
                        Err(e) => Err(format!("{CACHE_WRITE}{e}")),
                    },
                    Err(e) => Err(e),
                };
                let _ = sender.send((node, Some(result)));
            });
        }
        if in_flight == 0 {
            break;
        }
        let Ok((node, result)) = receiver.recv() else { break };
        in_flight -= 1;
        let Some(result) = result else { continue };
        executed += 1;
        match result {
            Ok(output) => {
                // A Solve batch's failed points are failures of their own (rows `failed`).
                failed += output.failed_points();
                states[node.index()] = TaskState::Done(output);
                for next in graph.neighbors_directed(node, Direction::Outgoing) {
                    if !graph[next].kind.is_compute() || states[next.index()] != TaskState::Pending
                    {
                        continue;
                    }
                    waiting[next.index()] = waiting[next.index()].saturating_sub(1);
                    if waiting[next.index()] == 0 {
                        ready.push(next);
                    }
                }
            }
            Err(error) => {
                if let Some(cause) = error.strip_prefix(CACHE_WRITE) {
                    // The environment, not the task, failed (a full disk, a read-only or
                    // missing cache directory): stop scheduling and report it.
                    cache_error.get_or_insert_with(|| cause.to_string());
                }
                failed += 1;
                let reason = format!(
                    "skipped: input task {} failed",
                    &graph[node].id[..12.min(graph[node].id.len())]
                );
                states[node.index()] = TaskState::Failed(error);
                skipped += skip_dependants(plan, node, &reason, &mut states);
            }
        }
        progress.tick(failed as u64);
        // Tasks popped from `ready` later in the loop may have been skipped meanwhile.
        ready.retain(|r| states[r.index()] == TaskState::Pending);
    }
    progress.finish();
    if let Some(cause) = cache_error {
        return Err(std::io::Error::other(format!("the cache cannot be written: {cause}")));
    }
    if interrupt.load(Ordering::SeqCst) {
        interrupted = true;
    }
    Ok(RunSummary { states, executed, cached, failed, skipped, corrupt, interrupted })
}

/// The model saturation rate of scenario `scenario`, once its Saturation task is done.
pub fn saturation_rate(plan: &Plan, states: &[TaskState], scenario: usize) -> Option<f64> {
    let node = plan.saturation.get(scenario).copied().flatten()?;
    match &states[node.index()] {
        TaskState::Done(Output::Saturation(rate)) => Some(*rate),
        _ => None,
    }
}

/// The saturation that scenario `scenario`'s loads given as fractions are fractions of, once
/// the node giving it is done ([`Plan::load_saturation`]).
pub fn load_saturation(plan: &Plan, states: &[TaskState], scenario: usize) -> Option<f64> {
    let node = plan.load_saturation.get(scenario).copied().flatten()?;
    match &states[node.index()] {
        TaskState::Done(output) => saturation_of_output(output),
        _ => None,
    }
}

/// The saturation rate a finished node gives the loads that are fractions of it: a `Saturation`
/// task's rate, or for an Aggregate of saturation searches the knee they bracketed, the mean
/// over the searches of the largest offered rate each found stable (`stable_rate`,
/// messages/node/cycle). The knee, not the saturation throughput: under some traffic (the
/// torus under transpose) the network accepts more under overload than at the knee, and a
/// fraction of that would lie past saturation.
pub fn saturation_of_output(output: &Output) -> Option<f64> {
    match output {
        Output::Saturation(rate) => Some(*rate),
        Output::Rows(rows) => match rows.as_slice() {
            [row] if row.is_saturation_search() => {
                row.intermediate("stable_rate").filter(|rate| *rate > 0.0)
            }
            _ => None,
        },
        Output::Points(_) => None,
    }
}

/// The replication rows an Aggregate task `node` reads (empty for other kinds), in plan order.
pub(crate) fn aggregate_inputs(plan: &Plan, states: &[TaskState], node: NodeIndex) -> Vec<Row> {
    if plan.graph[node].kind != TaskKind::Aggregate {
        return Vec::new();
    }
    let mut replicas: Vec<NodeIndex> =
        plan.graph.neighbors_directed(node, Direction::Incoming).collect();
    replicas.sort();
    replicas
        .iter()
        .filter_map(|r| match &states[r.index()] {
            TaskState::Done(Output::Rows(rows)) => Some(rows.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Marks every compute task downstream of `node` as skipped; returns how many.
pub(crate) fn skip_dependants(
    plan: &Plan,
    node: NodeIndex,
    reason: &str,
    states: &mut [TaskState],
) -> usize {
    let mut stack = vec![node];
    let mut count = 0;
    while let Some(current) = stack.pop() {
        for next in plan.graph.neighbors_directed(current, Direction::Outgoing) {
            if plan.graph[next].kind.is_compute() && states[next.index()] == TaskState::Pending {
                states[next.index()] = TaskState::Skipped(reason.to_string());
                count += 1;
                stack.push(next);
            }
        }
    }
    count
}
