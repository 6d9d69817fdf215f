//! Execution: running the tasks of one or more plans on one rayon pool, as soon as their
//! inputs are ready, the costliest chains first.
//!
//! The scheduler keeps the graphs on the calling thread and a queue of ready tasks ordered by
//! priority (a task's estimated cost plus that of the costliest chain of dependants after it,
//! learned from earlier runs: [`estimate`]). Whenever a worker is free, the first task of the
//! queue goes to it, whatever its spec: the specs of one `runner run` share the workers and
//! none waits for another to end. Each worker evaluates its task, writes the cache entry
//! (atomically, see [`cache`]) and sends the output back over a channel; the task's dependants
//! whose inputs are now all done join the queue: there are no levels or barriers. A spec whose
//! last task ended is handed back at once, to be gathered and reported while the others run.
//! Every task that ran is recorded on the run's [`timeline`]. A failed task marks its
//! dependants skipped and the rest go on. An interrupt stops scheduling and abandons the tasks still
//! queued in the pool; the running ones finish and are cached, so a re-run loses
//! nothing that was computed.

pub mod aggregate;
pub mod batch;
pub mod cache;
pub mod check;
pub mod estimate;
pub mod evaluate;
pub mod executor;
pub mod external;
mod gather;
pub mod guard;
pub mod lock;
mod search;
pub mod slurm;
mod threads;
pub mod timeline;

pub use gather::{Gather, gather};

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use cache::{Cache, Lookup, Output};

use crate::console::Progress;
use crate::plan::{self, LoadPoint, Plan, TaskKind};
use crate::spec::Experiment;
use crate::store::row::Row;
use estimate::History;
use timeline::{Ending, Priority, Timeline};

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

/// What a run keeps of a task's output once its cache entry is written, or read and checked
/// whole ([`cached_states`]): all of it, but for a Solve batch with no failed point, whose
/// points its entry holds ([`Output::InCache`]: `Gather` reads them back a batch at a time, so
/// a run never holds every batch's points).
fn in_cache(output: Output) -> Output {
    // What `Cache::put_unless_failed` writes; an empty batch is kept, as there is nothing to
    // read back.
    let written = output.failed_points() == 0;
    match output {
        Output::Points(points) if written && !points.is_empty() => Output::InCache,
        output => output,
    }
}

/// The task states a run starts from: every compute task with a valid cache entry `Done` (none
/// with `force`), the rest `Pending`; also how many were cached and why each corrupt entry was
/// rejected. Both executors start here. The entries are read and checked on `readers` threads
/// (each parsed whole: for a 1,000,000-point sweep, 918 MB of JSON), their verdicts taken in
/// plan order.
pub(crate) fn cached_states(
    plan: &Plan,
    cache: &Cache,
    force: bool,
    readers: usize,
) -> (Vec<TaskState>, usize, Vec<String>) {
    let graph = &plan.graph;
    let mut states = vec![TaskState::Pending; graph.node_count()];
    let (mut cached, mut corrupt) = (0, Vec::new());
    if !force {
        let nodes: Vec<NodeIndex> =
            graph.node_indices().filter(|&i| graph[i].kind.is_compute()).collect();
        for (node, lookup) in nodes.iter().zip(lookup_all(plan, cache, &nodes, readers)) {
            match lookup {
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

/// The cache's verdict on each of `nodes`, in their order, read on a pool of up to `readers`
/// threads (one reads them in turn). A hit keeps what a run keeps ([`in_cache`]): checked
/// whole, a batch's points are read again when its rows are built.
fn lookup_all(plan: &Plan, cache: &Cache, nodes: &[NodeIndex], readers: usize) -> Vec<Lookup> {
    use rayon::iter::{IntoParallelRefIterator, ParallelIterator};
    let graph = &plan.graph;
    let look = |&node: &NodeIndex| match cache.lookup(&graph[node].id, graph[node].kind) {
        Lookup::Hit(output) => Lookup::Hit(in_cache(output)),
        other => other,
    };
    let threads = readers.clamp(1, nodes.len().max(1));
    // Where no pool can be had, one thread reads them all: the verdicts are the same.
    if threads > 1
        && let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build()
    {
        return pool.install(|| nodes.par_iter().map(look).collect());
    }
    nodes.iter().map(look).collect()
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
    let (mut merged, _, _) = cached_states(full, cache, false, 1);
    for node in full.graph.node_indices() {
        if let Some(state) = from_run.get(full.graph[node].id.as_str()) {
            merged[node.index()] = (*state).clone();
        }
    }
    merged
}

/// Runs every compute task of `plan`, using and filling `cache` (one spec's [`Pool::run`],
/// with no history and no timeline kept).
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
    let mut timeline = Timeline::new(String::new(), options.jobs, vec![experiment.name.clone()]);
    let mut summary = None;
    let pool = Pool { cache, options, interrupt, history: &History::default() };
    pool.run(&[PoolSpec { experiment, plan }], &mut timeline, Instant::now(), |_, done| {
        summary = Some(done);
    })?;
    summary.ok_or_else(|| std::io::Error::other("the run ended without its summary"))
}

/// One spec of a pooled run.
#[derive(Clone, Copy)]
pub struct PoolSpec<'a> {
    /// The experiment.
    pub experiment: &'a Experiment,
    /// Its plan.
    pub plan: &'a Plan,
}

/// What every spec of a pooled run shares: the cache, the options, the interrupt flag and the
/// history the costs are learned from.
pub struct Pool<'a> {
    /// The result cache.
    pub cache: &'a Cache,
    /// Workers, `--force`, `--quiet`.
    pub options: &'a ExecOptions,
    /// Set by Ctrl-C.
    pub interrupt: &'a Arc<AtomicBool>,
    /// Earlier runs' wall times ([`estimate::History`]).
    pub history: &'a History,
}

/// A spec's progress through a pooled run.
struct SpecRun {
    states: Vec<TaskState>,
    /// Per node, its inputs not yet done.
    waiting: Vec<usize>,
    /// Tasks to run that have not ended yet (ready, waiting for inputs or running).
    remaining: usize,
    executed: usize,
    cached: usize,
    failed: usize,
    skipped: usize,
    corrupt: Vec<String>,
    /// Per node, its estimated cost and its priority (seconds).
    estimate: Vec<f64>,
    priority: Vec<f64>,
    /// Per node, the threads it was given when it started (1 until then; [`threads`]).
    threads: Vec<u32>,
    /// Whether its summary was handed out.
    finished: bool,
}

/// What a worker sends back: the spec, the node, the result (`None`: abandoned unstarted or
/// stopped by an interrupt), and when and where it ran (`None`: never started).
type Report = (usize, NodeIndex, Option<Result<Output, String>>, Option<(f64, f64, u32)>);

impl Pool<'_> {
    /// Runs every compute task of every spec on one pool of `options.jobs` workers, and hands
    /// each spec's [`RunSummary`] to `finished` as soon as its last task has ended (so its
    /// bundle can be written while the other specs' tasks still run), in the order the specs
    /// end; a spec with nothing to run ends first. The ready task of highest priority starts
    /// whenever a worker is free ([`estimate::priorities`]): the specs share the workers and
    /// none waits for another to end. Every task that runs is recorded in `timeline`, its
    /// times in seconds since `clock`.
    ///
    /// Fails (after the tasks in flight finish) when a cache entry cannot be written: that is
    /// the environment failing (a full disk, say), and going on would only compute results to
    /// lose.
    pub fn run(
        &self,
        specs: &[PoolSpec<'_>],
        timeline: &mut Timeline,
        clock: Instant,
        mut finished: impl FnMut(usize, RunSummary),
    ) -> std::io::Result<()> {
        let options = self.options;
        let jobs = options.jobs.max(1);
        let mut runs: Vec<SpecRun> = specs.iter().map(|spec| self.start(spec)).collect();
        // Ready tasks: highest priority first, then the earlier spec, then plan order.
        let mut ready: BinaryHeap<(Priority, Reverse<usize>, Reverse<usize>)> = BinaryHeap::new();
        for (index, run) in runs.iter().enumerate() {
            for node in 0..run.states.len() {
                if run.states[node] == TaskState::Pending
                    && specs[index].plan.graph[NodeIndex::new(node)].kind.is_compute()
                    && run.waiting[node] == 0
                {
                    ready.push((Priority(run.priority[node]), Reverse(index), Reverse(node)));
                }
            }
        }
        let to_run = runs.iter().map(|run| run.remaining as u64).sum();
        let label = match specs {
            [one] => one.experiment.name.clone(),
            _ => format!("{} specs", specs.len()),
        };
        let work: f64 = runs
            .iter()
            .flat_map(|run| run.estimate.iter())
            .filter(|seconds| seconds.is_finite())
            .sum();
        let mut progress = Progress::new(to_run, &label, options.quiet).with_work(work);
        for (index, run) in runs.iter_mut().enumerate() {
            if run.remaining == 0 {
                finished(index, run.finish(self.interrupt));
            }
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("runner-worker-{i}"))
            .build()
            .map_err(std::io::Error::other)?;
        let (sender, receiver) = mpsc::channel::<Report>();
        let shared: Vec<Arc<Experiment>> =
            specs.iter().map(|spec| Arc::new(spec.experiment.clone())).collect();
        // Tasks running, and the workers they hold (a task on several threads holds several).
        let (mut in_flight, mut busy, mut failed_total) = (0usize, 0usize, 0u64);
        let mut cache_error = None;
        loop {
            let stopped = self.interrupt.load(Ordering::SeqCst);
            while !stopped && cache_error.is_none() && busy < jobs {
                let Some((_, Reverse(index), Reverse(node))) = ready.pop() else { break };
                // A task can be skipped (an input failed) after it became ready.
                if runs[index].states[node] != TaskState::Pending {
                    continue;
                }
                let threads = task_threads(specs, &runs, &ready, (index, node), jobs - busy);
                runs[index].threads[node] = threads as u32;
                busy += threads;
                self.spawn(
                    &pool,
                    &specs[index],
                    &runs[index],
                    &shared[index],
                    index,
                    node,
                    threads,
                    clock,
                    &sender,
                );
                in_flight += 1;
            }
            if in_flight == 0 {
                break;
            }
            let Ok((index, node, result, ran)) = receiver.recv() else { break };
            in_flight -= 1;
            let (spec, run) = (&specs[index], &mut runs[index]);
            busy = busy.saturating_sub(run.threads[node.index()] as usize);
            run.remaining = run.remaining.saturating_sub(1);
            if let Some(ran) = ran {
                let ending = match &result {
                    Some(Ok(_)) => Ending::Done,
                    Some(Err(_)) => Ending::Failed,
                    None => Ending::Cancelled,
                };
                timeline.records.push(record(spec, run, node, ran, ending, |_| true));
            }
            if let Some(result) = result {
                run.executed += 1;
                match result {
                    Ok(output) => {
                        // A Solve batch's failed points are failures of their own (rows `failed`).
                        let points = output.failed_points();
                        run.failed += points;
                        failed_total += points as u64;
                        run.states[node.index()] = TaskState::Done(in_cache(output));
                        let graph = &spec.plan.graph;
                        for next in graph.neighbors_directed(node, Direction::Outgoing) {
                            let i = next.index();
                            if !graph[next].kind.is_compute() || run.states[i] != TaskState::Pending
                            {
                                continue;
                            }
                            run.waiting[i] = run.waiting[i].saturating_sub(1);
                            if run.waiting[i] == 0 {
                                ready.push((Priority(run.priority[i]), Reverse(index), Reverse(i)));
                            }
                        }
                    }
                    Err(error) => {
                        if let Some(cause) = error.strip_prefix(CACHE_WRITE) {
                            // The environment, not the task, failed (a full disk, a read-only
                            // or missing cache directory): stop scheduling and report it.
                            cache_error.get_or_insert_with(|| cause.to_string());
                        }
                        run.failed += 1;
                        failed_total += 1;
                        let id = &spec.plan.graph[node].id;
                        let reason =
                            format!("skipped: input task {} failed", &id[..12.min(id.len())]);
                        run.states[node.index()] = TaskState::Failed(error);
                        let skipped = skip_dependants(spec.plan, node, &reason, &mut run.states);
                        run.skipped += skipped;
                        run.remaining = run.remaining.saturating_sub(skipped);
                    }
                }
                let work = run.estimate[node.index()];
                progress.tick_work(failed_total, if work.is_finite() { work } else { 0.0 });
            }
            if run.remaining == 0 && !run.finished && cache_error.is_none() {
                finished(index, run.finish(self.interrupt));
            }
        }
        progress.finish();
        if let Some(cause) = cache_error {
            return Err(std::io::Error::other(format!("the cache cannot be written: {cause}")));
        }
        for (index, run) in runs.iter_mut().enumerate() {
            if !run.finished {
                finished(index, run.finish(self.interrupt));
            }
        }
        Ok(())
    }

    /// What a run of `specs` would do, as a timeline to replay ([`Timeline::predict`]): every
    /// task that is not cached (every task with `force`), lasting its estimated cost, with its
    /// priority and its inputs that would run too; nothing runs.
    pub fn forecast(&self, specs: &[PoolSpec<'_>]) -> Timeline {
        let mut timeline = Timeline::new(
            String::new(),
            self.options.jobs,
            specs.iter().map(|spec| spec.experiment.name.clone()).collect(),
        );
        for spec in specs {
            let run = self.start(spec);
            let graph = &spec.plan.graph;
            for node in graph.node_indices() {
                if graph[node].kind.is_compute() && run.states[node.index()] == TaskState::Pending {
                    // Lasting its estimate; its inputs that would run too (the cached are done).
                    let ran = (0.0, run.estimate[node.index()], 0);
                    let pending =
                        |input: NodeIndex| run.states[input.index()] == TaskState::Pending;
                    timeline.records.push(record(spec, &run, node, ran, Ending::Done, pending));
                }
            }
        }
        timeline
    }

    /// A spec's starting state: its cached tasks done, the count of inputs each other task
    /// waits for, and every task's estimated cost and priority.
    fn start(&self, spec: &PoolSpec<'_>) -> SpecRun {
        let graph = &spec.plan.graph;
        let (states, cached, corrupt) =
            cached_states(spec.plan, self.cache, self.options.force, self.options.jobs);
        let mut waiting = vec![0; graph.node_count()];
        let mut remaining = 0;
        for node in graph.node_indices().filter(|&i| graph[i].kind.is_compute()) {
            if states[node.index()] != TaskState::Pending {
                continue;
            }
            remaining += 1;
            waiting[node.index()] = graph
                .neighbors_directed(node, Direction::Incoming)
                .filter(|p| !matches!(states[p.index()], TaskState::Done(_)))
                .count();
        }
        let name = &spec.experiment.name;
        let estimate: Vec<f64> = graph
            .node_indices()
            .map(|node| {
                let task = &graph[node];
                match states[node.index()] {
                    TaskState::Pending if task.kind.is_compute() => {
                        self.history.seconds(name, task, &task_label(spec.experiment, task))
                    }
                    _ => 0.0,
                }
            })
            .collect();
        let priority = estimate::priorities(spec.plan, &estimate);
        SpecRun {
            states,
            waiting,
            remaining,
            executed: 0,
            cached,
            failed: 0,
            skipped: 0,
            corrupt,
            estimate,
            priority,
            threads: vec![1; graph.node_count()],
            finished: false,
        }
    }

    /// Hands task `node` of spec `index` to a worker.
    #[allow(clippy::too_many_arguments)]
    fn spawn(
        &self,
        pool: &rayon::ThreadPool,
        spec: &PoolSpec<'_>,
        run: &SpecRun,
        experiment: &Arc<Experiment>,
        index: usize,
        node: usize,
        threads: usize,
        clock: Instant,
        sender: &mpsc::Sender<Report>,
    ) {
        let node = NodeIndex::new(node);
        let task = spec.plan.graph[node].clone();
        let saturation = task
            .scenario
            .and_then(|scenario| load_saturation(spec.plan, &run.states, scenario))
            .filter(|_| task.needs_saturation());
        let inputs = aggregate_inputs(spec.plan, &run.states, node);
        let sender = sender.clone();
        let cache = self.cache.clone();
        let experiment = Arc::clone(experiment);
        let interrupt = Arc::clone(self.interrupt);
        pool.spawn(move || {
            // Tasks still queued in the pool when Ctrl-C arrives are abandoned unstarted, so
            // an interrupt waits only for the tasks actually running.
            if interrupt.load(Ordering::SeqCst) {
                let _ = sender.send((index, node, None, None));
                return;
            }
            let start = clock.elapsed().as_secs_f64();
            let worker = rayon::current_thread_index().map_or(0, |w| u32::try_from(w).unwrap_or(0));
            let log = cache.log_path(&task.id);
            let result = evaluate::evaluate(
                &experiment,
                &task,
                saturation,
                &inputs,
                threads,
                Some(&log),
                Some(&interrupt),
            );
            if result.as_ref().is_err_and(|e| e == evaluate::CANCELLED) {
                // Stopped after the interrupt: abandoned like a task never started.
                let ran = (start, clock.elapsed().as_secs_f64(), worker);
                let _ = sender.send((index, node, None, Some(ran)));
                return;
            }
            let result = match result {
                Ok(output) => match cache.put_unless_failed(&task.id, task.kind, &output) {
                    Ok(()) => Ok(output),
                    Err(e) => Err(format!("{CACHE_WRITE}{e}")),
                },
                Err(e) => Err(e),
            };
            let ran = (start, clock.elapsed().as_secs_f64(), worker);
            let _ = sender.send((index, node, Some(result), Some(ran)));
        });
    }
}

impl SpecRun {
    /// The spec's summary (its states handed over): interrupted when a task was left unrun or
    /// the interrupt came before its end.
    fn finish(&mut self, interrupt: &AtomicBool) -> RunSummary {
        self.finished = true;
        RunSummary {
            states: std::mem::take(&mut self.states),
            executed: self.executed,
            cached: self.cached,
            failed: self.failed,
            corrupt: std::mem::take(&mut self.corrupt),
            skipped: self.skipped,
            interrupted: self.remaining > 0 || interrupt.load(Ordering::SeqCst),
        }
    }
}

/// The timeline's record of task `node`, which ran on `worker` from `start` to `end`; its
/// inputs are the compute tasks before it that `keep_input` keeps.
fn record(
    spec: &PoolSpec<'_>,
    run: &SpecRun,
    node: NodeIndex,
    (start, end, worker): (f64, f64, u32),
    ending: Ending,
    keep_input: impl Fn(NodeIndex) -> bool,
) -> timeline::Record {
    let graph = &spec.plan.graph;
    let task = &graph[node];
    timeline::Record {
        id: task.id.clone(),
        kind: task.kind.name().to_string(),
        label: task_label(spec.experiment, task),
        spec: spec.experiment.name.clone(),
        worker,
        start,
        end,
        inputs: graph
            .neighbors_directed(node, Direction::Incoming)
            .filter(|&input| graph[input].kind.is_compute() && keep_input(input))
            .map(|input| graph[input].id.clone())
            .collect(),
        estimate: run.estimate[node.index()],
        priority: run.priority[node.index()],
        threads: run.threads[node.index()],
        ending,
    }
}

/// The threads for ready task `node` of spec `index` with `idle` workers ([`threads`]): a
/// simulation (or a simulator's saturation search) gets what the spec asks or its share of
/// the idle workers by estimated cost against the other `ready` tasks; any other task one.
fn task_threads(
    specs: &[PoolSpec<'_>],
    runs: &[SpecRun],
    ready: &BinaryHeap<(Priority, Reverse<usize>, Reverse<usize>)>,
    (index, node): (usize, usize),
    idle: usize,
) -> usize {
    let experiment = specs[index].experiment;
    let task = &specs[index].plan.graph[NodeIndex::new(node)];
    let simulator = match task.kind {
        TaskKind::Simulate => true,
        TaskKind::Search => task.method.is_none(),
        _ => false,
    };
    let (Some(simulation), Some(scenario), true) = (
        experiment.simulation.as_ref(),
        task.scenario.and_then(|s| experiment.scenarios.get(s)),
        simulator && idle > 1,
    ) else {
        return 1;
    };
    let other = || {
        ready
            .iter()
            .filter(|(_, Reverse(i), Reverse(n))| runs[*i].states[*n] == TaskState::Pending)
            .map(|(_, Reverse(i), Reverse(n))| runs[*i].estimate[*n])
            .sum::<f64>()
    };
    threads::threads(
        simulation.threads,
        idle,
        runs[index].estimate[node],
        if simulation.threads.is_some() { 0.0 } else { other() },
        || crate::sim::uses_threads(&scenario.scenario),
    )
}

/// A task's label on the timeline: its kind, its scenario's label, and its load (and
/// replication).
pub fn task_label(experiment: &Experiment, task: &plan::Task) -> String {
    let scenario =
        task.scenario.and_then(|s| experiment.scenarios.get(s)).map_or("", |s| s.label.as_str());
    let mut load = match task.load {
        Some(LoadPoint::Rate(rate)) => format!("rate {rate}"),
        Some(LoadPoint::FractionOfSaturation(f)) => format!("{f} of saturation"),
        Some(LoadPoint::TraceTimeScale(scale)) => format!("time scale {scale}"),
        None => match task.loads {
            Some(range) => format!("loads {}..{}", range.start, range.start + range.len),
            None => String::new(),
        },
    };
    if let Some(replication) = task.replication {
        load.push_str(&format!(", replication {replication}"));
    }
    estimate::label(task.kind.name(), scenario, &load)
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
        Output::Points(_) | Output::InCache => None,
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
