//! Gathering: a run's rows in plan order, from the task states, with the columns that come
//! from the whole run (`experiment`, `saturation_rate`, `fraction_of_saturation`) filled in.

use std::collections::HashMap;

use petgraph::graph::NodeIndex;

use super::TaskState;
use super::cache::{Cache, Lookup, Output};
use crate::plan::{Plan, RowRef, TaskKind};
use crate::spec::Experiment;
use crate::store::build::base_row;
use crate::store::row::Row;

/// All rows of a run in plan order, with `experiment`, `saturation_rate` and
/// `fraction_of_saturation` filled in. Failed and skipped tasks give rows with
/// that status and the error; tasks not run (interrupted) give no row.
pub fn gather(experiment: &Experiment, plan: &Plan, states: &[TaskState]) -> Vec<Row> {
    // Exactly the rows there will be: a row is about 4 KB, and a vector that outgrows its
    // capacity copies them all (a 1,000,000-point sweep's 4 GB twice over).
    let capacity = plan
        .row_nodes
        .iter()
        .map(|r| match (r.point, &states[r.node.index()]) {
            (None, TaskState::Done(Output::Rows(done))) => done.len(),
            _ => 1,
        })
        .sum();
    let mut rows = Vec::with_capacity(capacity);
    // States of the run's own hold no batch left in the cache (`Output::InCache`): this is
    // `runner verify --check`'s gather, over the tasks it evaluated itself.
    rows.extend(Gather::with(experiment, plan, States::Borrowed(states), None));
    rows
}

/// [`gather`]'s rows one at a time, built as they are reached: what compares a run with its
/// bundle holds no more than a Solve batch's rows at once (`bundle::bundle_reproduces`), and
/// what writes the bundle no more than a batch of them (`bundle::write_bundle`).
pub struct Gather<'a> {
    experiment: &'a Experiment,
    plan: &'a Plan,
    states: States<'a>,
    /// Where the points of a batch the run did not keep are read back (`Output::InCache`).
    cache: Option<&'a Cache>,
    /// The next entry of `plan.row_nodes`.
    next: usize,
    /// The rows of the entry being taken.
    produced: std::vec::IntoIter<Row>,
    /// The rows of each Solve batch, built when its first point is reached and taken in order;
    /// a batch whose rows are all taken is dropped (its buffer would otherwise stay to the end).
    batches: HashMap<NodeIndex, std::vec::IntoIter<Row>>,
}

/// The task states a [`Gather`] reads: borrowed, or its own, when it may free each Solve
/// batch's points once their rows are built ([`Gather::taking`]).
enum States<'a> {
    Borrowed(&'a [TaskState]),
    Owned(Vec<TaskState>),
}

impl States<'_> {
    fn get(&self) -> &[TaskState] {
        match self {
            States::Borrowed(states) => states,
            States::Owned(states) => states,
        }
    }
}

impl<'a> Gather<'a> {
    /// The rows of `plan` run to `states`, in plan order.
    pub fn new(
        experiment: &'a Experiment,
        plan: &'a Plan,
        states: &'a [TaskState],
        cache: &'a Cache,
    ) -> Self {
        Gather::with(experiment, plan, States::Borrowed(states), Some(cache))
    }

    /// [`Gather::new`] over its own `states`, freeing each Solve batch's points as soon as its
    /// rows are built (a 1,000,000-point sweep's points take a gigabyte); the states are read
    /// no more after.
    pub fn taking(
        experiment: &'a Experiment,
        plan: &'a Plan,
        states: Vec<TaskState>,
        cache: &'a Cache,
    ) -> Self {
        Gather::with(experiment, plan, States::Owned(states), Some(cache))
    }

    fn with(
        experiment: &'a Experiment,
        plan: &'a Plan,
        states: States<'a>,
        cache: Option<&'a Cache>,
    ) -> Self {
        Gather {
            experiment,
            plan,
            states,
            cache,
            next: 0,
            produced: Vec::new().into_iter(),
            batches: HashMap::new(),
        }
    }

    /// The rows of one entry of `plan.row_nodes` that is not a Solve batch's point, with the
    /// run's columns filled in.
    fn entry(&mut self, node: NodeIndex) -> Vec<Row> {
        let (experiment, plan) = (self.experiment, self.plan);
        let Some(scenario_index) = plan.graph[node].scenario else { return Vec::new() };
        let states = self.states.get();
        let state = &states[node.index()];
        let mut produced: Vec<Row> = match state {
            TaskState::Done(Output::Rows(done)) => done.clone(),
            TaskState::Done(Output::Saturation(_) | Output::Points(_) | Output::InCache)
            | TaskState::Pending => {
                return Vec::new();
            }
            TaskState::Failed(error) | TaskState::Skipped(error) => {
                vec![failed_row(experiment, plan, states, node, scenario_index, error)]
            }
        };
        let saturation = super::saturation_rate(plan, states, scenario_index);
        self.fill_run_columns(&mut produced, scenario_index, saturation);
        produced
    }

    /// The next row of Solve batch `node`, its rows built (and the run's columns filled in)
    /// when its first point is reached.
    fn point(&mut self, node: NodeIndex) -> Option<Row> {
        if !self.batches.contains_key(&node) {
            let (experiment, plan) = (self.experiment, self.plan);
            let task = &plan.graph[node];
            let scenario_index = task.scenario?;
            let states = self.states.get();
            let saturation = super::saturation_rate(plan, states, scenario_index);
            let mut rows = match &states[node.index()] {
                TaskState::Done(Output::InCache) => {
                    let state = read_back(self.cache, &task.id);
                    super::batch::rows(experiment, task, saturation, &state)
                }
                state => super::batch::rows(experiment, task, saturation, state),
            };
            if let States::Owned(states) = &mut self.states
                && let TaskState::Done(Output::Points(points)) = &mut states[node.index()]
            {
                // Its rows hold all it said; nothing reads the batch again.
                *points = Vec::new();
            }
            self.fill_run_columns(&mut rows, scenario_index, saturation);
            self.batches.insert(node, rows.into_iter());
        }
        let batch = self.batches.get_mut(&node)?;
        let row = batch.next();
        if batch.len() == 0 {
            self.batches.remove(&node);
        }
        row
    }

    /// Fills in the columns that come from the whole run: the experiment's name, the graph
    /// file's name, the scenario's `saturation` rate and the load as a fraction of it.
    fn fill_run_columns(&self, rows: &mut [Row], scenario_index: usize, saturation: Option<f64>) {
        let experiment = self.experiment;
        // A graph's file name is display only (its content hash is the identity): a cached row
        // may come from a run that named the same content otherwise, so this spec's name wins.
        let graph_file = experiment.scenarios[scenario_index].scenario.topology.graph();
        let graph_file = graph_file.map(|g| g.file.clone());
        for row in rows {
            row.experiment.clone_from(&experiment.name);
            if graph_file.is_some() {
                row.graph.clone_from(&graph_file);
            }
            row.saturation_rate = saturation;
            if row.fraction_of_saturation.is_none() && !row.is_saturation_search() {
                row.fraction_of_saturation = saturation.filter(|s| *s > 0.0).map(|s| row.rate / s);
            }
        }
    }
}

impl Iterator for Gather<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        loop {
            if let Some(row) = self.produced.next() {
                return Some(row);
            }
            let &RowRef { node, point } = self.plan.row_nodes.get(self.next)?;
            self.next += 1;
            match point {
                // One point of a Solve batch: its row, without a vector of one.
                Some(_) => match self.point(node) {
                    Some(row) => return Some(row),
                    None => continue,
                },
                None => self.produced = self.entry(node).into_iter(),
            }
        }
    }
}

/// The state of Solve batch `id` whose points the run left in its cache entry: its points read
/// back, or a failure saying why they cannot be (the entry was removed or damaged since it was
/// written, this run; its rows are then `failed`, and the next run computes it again).
fn read_back(cache: Option<&Cache>, id: &str) -> TaskState {
    let Some(cache) = cache else {
        return TaskState::Failed(format!("Solve batch {id}: its points were not kept"));
    };
    match cache.lookup(id, crate::plan::TaskKind::Solve) {
        Lookup::Hit(output) => TaskState::Done(output),
        Lookup::Missing => TaskState::Failed(format!(
            "the cache entry of Solve batch {id} was removed during the run; run again"
        )),
        Lookup::Corrupt(why) => TaskState::Failed(format!(
            "the cache entry of Solve batch {id} was damaged during the run ({why}); run again"
        )),
    }
}

/// The row of a failed or skipped task: its scenario, load and identity, the status and the
/// error.
fn failed_row(
    experiment: &Experiment,
    plan: &Plan,
    states: &[TaskState],
    node: NodeIndex,
    scenario_index: usize,
    error: &str,
) -> Row {
    let task = &plan.graph[node];
    let scenario = &experiment.scenarios[scenario_index].scenario;
    let of = super::load_saturation(plan, states, scenario_index);
    let rate = task.load.map_or(f64::NAN, |load| load.rate(scenario, of));
    let model = matches!(task.kind, TaskKind::Solve | TaskKind::Curve);
    let external = task.method.and_then(|m| experiment.external.get(m));
    let method = match external {
        Some(external) => external.name.as_str(),
        None if model => "model",
        None => "simulation",
    };
    let mut row = base_row(scenario, task, rate, method);
    row.status =
        if matches!(states[node.index()], TaskState::Failed(_)) { "failed" } else { "skipped" }
            .into();
    row.error = Some(error.to_owned());
    row.replication = task.replication;
    row.seed = task.seed;
    row.fault_seed = task.fault_seed;
    if task.kind == TaskKind::Search || (task.kind == TaskKind::Aggregate && task.load.is_none()) {
        row.measure = Some(crate::store::row::SATURATION_SEARCH.into());
    }
    row.evaluator = match (task.kind, &experiment.model, external) {
        (_, _, Some(external)) => external.evaluator(),
        (TaskKind::Solve | TaskKind::Curve, Some(m), None) => {
            format!("{}@{}", m.name.as_str(), crate::model::VERSION)
        }
        _ => format!("simulator@{}", crate::sim::VERSION),
    };
    row
}
