//! Plans: an [`Experiment`] compiled into a petgraph DAG of content-hashed tasks.
//!
//! Task kinds (design brief section 4): `Saturation` (the model's saturation
//! rate of one scenario), `Solve` (the model at a batch of up to [`SOLVE_BATCH`] loads of one
//! scenario, one row per load), `Curve` (the model's
//! dense curve of one scenario, for the figures), `Simulate` (one replication at
//! one load), `External` (one run of an external method's program at one load, one
//! per replication for `kind: simulation`), `Search` (one saturation search of one scenario by
//! the simulator or an external simulation, one seed), `Aggregate` (replications or searches
//! -> mean and 95% CI), `Gather` (all rows -> results.parquet) and `Report` (the bundle).
//! Edges carry data dependencies only: a `Solve`, `Simulate` or `External` at a fraction of
//! saturation waits for the node that gives its scenario's saturation (the model's
//! `Saturation`, or with `load.saturation: simulation` the Aggregate of the simulator's
//! searches), every `Curve` for its `Saturation`; `Gather` waits for everything.
//!
//! **Invariant:** a task's id is a blake3 hash of its kind, its fully resolved
//! inputs, its seed and its evaluator's version ([`identity`]); a load given as a fraction
//! of a saturation counts the id of the task that gives the saturation among its inputs. A
//! simulation seed derives from the spec seed and the task's inputs only, never from
//! scheduling order. Equal ids mean equal results, so ids key the cache.

pub mod dot;
pub mod identity;

use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;

use crate::scenario::Scenario;
use crate::spec::external::ExternalChoice;
use crate::spec::types::ExternalKind;
use crate::spec::{Experiment, Load, SimulationChoice};

/// What of the simulator's searches a load given as a fraction of its saturation is a fraction
/// of: the knee (`exec::saturation_of_output`). Part of such a load's id, with the searches'
/// Aggregate's id, so that another reading of the same searches gives other ids.
pub const SEARCHED_SATURATION: &str = "knee";

/// What a task does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// The model's saturation rate for one scenario.
    Saturation,
    /// The model at a batch of loads of one scenario ([`Task::loads`]): up to [`SOLVE_BATCH`]
    /// consecutive points of the spec's load list, evaluated and cached together, one row per
    /// point (each row's `task_id` is the point's own content hash, [`identity::SolveIds`]).
    Solve,
    /// The model's dense curve of one scenario: `curve_points` loads from near zero to just
    /// below its saturation rate, evaluated and cached together (figures draw it as the model
    /// line; tables leave it out).
    Curve,
    /// One simulation replication at one load.
    Simulate,
    /// One run of an external method's program (`methods.external`): at one load, and for
    /// `kind: simulation` one replication.
    External,
    /// One saturation search of one scenario by the simulator or an external simulation
    /// (`saturation_searches`): throughput-mode points bisecting the offered load, one seed.
    Search,
    /// Replications -> mean and 95% confidence interval.
    Aggregate,
    /// All rows -> results.parquet.
    Gather,
    /// results.parquet -> report bundle.
    Report,
}

impl TaskKind {
    /// Every kind, in pipeline order.
    pub const ALL: [TaskKind; 9] = [
        TaskKind::Saturation,
        TaskKind::Solve,
        TaskKind::Curve,
        TaskKind::Search,
        TaskKind::Simulate,
        TaskKind::External,
        TaskKind::Aggregate,
        TaskKind::Gather,
        TaskKind::Report,
    ];

    /// The kind's name in tables and DOT output.
    pub fn name(&self) -> &'static str {
        match self {
            TaskKind::Saturation => "Saturation",
            TaskKind::Solve => "Solve",
            TaskKind::Curve => "Curve",
            TaskKind::Simulate => "Simulate",
            TaskKind::External => "External",
            TaskKind::Search => "Search",
            TaskKind::Aggregate => "Aggregate",
            TaskKind::Gather => "Gather",
            TaskKind::Report => "Report",
        }
    }

    /// Whether the task computes rows or a rate (and so is cached).
    pub fn is_compute(&self) -> bool {
        !matches!(self, TaskKind::Gather | TaskKind::Report)
    }

    /// Whether the Slurm executor sends tasks of this kind to the cluster (the costly ones:
    /// simulations and external programs); the rest run where `runner run` runs.
    pub fn is_remote(&self) -> bool {
        matches!(self, TaskKind::Simulate | TaskKind::External | TaskKind::Search)
    }
}

impl Task {
    /// Whether the task reads its scenario's saturation rate: a load given as a fraction of
    /// it, or a Curve (whose loads are fractions of it).
    pub fn needs_saturation(&self) -> bool {
        self.kind == TaskKind::Curve
            || matches!(self.load, Some(LoadPoint::FractionOfSaturation(_)))
            || self.loads.is_some_and(|range| range.of_saturation)
    }
}

pub use crate::spec::SOLVE_BATCH;

/// The load points of a Solve batch: `len` consecutive points of the experiment's load list,
/// from index `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadRange {
    /// Index of the first point in the load list.
    pub start: u32,
    /// Number of points.
    pub len: u32,
    /// Whether the loads are fractions of the saturation rate.
    pub of_saturation: bool,
}

impl LoadRange {
    /// The load points of the range, in load order.
    pub fn points(&self, load: &Load) -> Vec<LoadPoint> {
        let start = self.start as usize;
        let end = start.saturating_add(self.len as usize);
        load_points(load).get(start..end).map(<[LoadPoint]>::to_vec).unwrap_or_default()
    }
}

/// Every load point of the load list, in order.
pub fn load_points(load: &Load) -> Vec<LoadPoint> {
    match load {
        Load::Rates(r) => r.iter().map(|&r| LoadPoint::Rate(r)).collect(),
        Load::FractionOfSaturation(f) => {
            f.iter().map(|&f| LoadPoint::FractionOfSaturation(f)).collect()
        }
        Load::TraceTimeScale(s) => s.iter().map(|&s| LoadPoint::TraceTimeScale(s)).collect(),
    }
}

/// Where a row comes from: all rows of a task's output, or one point of a Solve batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowRef {
    /// The task.
    pub node: NodeIndex,
    /// The point's index within the batch (a Solve task); `None`: every row of the task.
    pub point: Option<u32>,
}

/// A load point of one task.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadPoint {
    /// Messages/node/cycle.
    Rate(f64),
    /// Fraction of the scenario's model saturation rate.
    FractionOfSaturation(f64),
    /// Time scale factor of a replayed trace; the rate is what the trace offers at it.
    TraceTimeScale(f64),
}

impl LoadPoint {
    /// The rate in messages per node per cycle: given, a fraction of `saturation`, or what a
    /// trace scenario's trace offers at the time scale; NaN when it cannot be known.
    pub fn rate(&self, scenario: &crate::scenario::Scenario, saturation: Option<f64>) -> f64 {
        match *self {
            LoadPoint::Rate(rate) => rate,
            LoadPoint::FractionOfSaturation(f) => saturation.map_or(f64::NAN, |s| f * s),
            LoadPoint::TraceTimeScale(scale) => scenario
                .traffic
                .trace()
                .map_or(f64::NAN, |trace| trace.offered_rate(scale, scenario.nodes())),
        }
    }
}

/// One node of the plan.
#[derive(Clone, Debug)]
pub struct Task {
    /// What it does.
    pub kind: TaskKind,
    /// Content hash (64 hex digits): the cache key.
    pub id: String,
    /// Index into `Experiment::scenarios` (`None` for Gather and Report).
    pub scenario: Option<usize>,
    /// The load (Simulate, Aggregate, External).
    pub load: Option<LoadPoint>,
    /// The loads of a Solve batch.
    pub loads: Option<LoadRange>,
    /// Replication index (Simulate).
    pub replication: Option<u32>,
    /// Random seed (Simulate).
    pub seed: Option<u64>,
    /// Seed of the fault map (Simulate with `fault_rate > 0`; the same for every load point).
    pub fault_seed: Option<u64>,
    /// Rough cost estimate in seconds, for `runner plan` and the ETA.
    pub cost: f64,
    /// Index into `Experiment::external` (an External task, and the Aggregate of an external
    /// simulation); `None` for the built-in methods.
    pub method: Option<usize>,
}

/// Which methods to run (`--only`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Only {
    /// Only the analytical model (Saturation and Solve tasks) and the external methods of
    /// `kind: model`.
    Model,
    /// Only the simulator (plus Saturation tasks needed for fractions of saturation) and the
    /// external methods of `kind: simulation`.
    Simulation,
}

/// A compiled experiment.
#[derive(Debug)]
pub struct Plan {
    /// The DAG; edges point from an input to the task that needs it.
    pub graph: DiGraph<Task, ()>,
    /// The Gather node.
    pub gather: NodeIndex,
    /// The Report node.
    pub report: NodeIndex,
    /// Saturation node per scenario, when the model runs.
    pub saturation: Vec<Option<NodeIndex>>,
    /// Per scenario, the node whose output is the saturation that loads given as fractions of
    /// it are fractions of: its `Saturation` node, or with `load.saturation: simulation` the
    /// Aggregate of the simulator's saturation searches
    /// (`exec::saturation_of_output`).
    pub load_saturation: Vec<Option<NodeIndex>>,
    /// Where each row comes from, in row order: per scenario, per load, the Solve batch's point,
    /// then the Simulate replications, then the Aggregate, then each external method's runs
    /// (and their Aggregate); after all scenarios, the Curve
    /// of each (so the rows of the spec's load grid come first, the dense rows last).
    pub row_nodes: Vec<RowRef>,
}

/// Compiles an experiment into a plan. `only` leaves out the other built-in method and the
/// external methods of the other kind.
///
/// Per scenario: its Saturation task, its Curve, its Solve batches, then per load point the
/// Simulate replications and their Aggregate and each external method's runs; after all
/// scenarios, Gather and Report. Nodes are added in that order, which is the plan's order.
pub fn build(experiment: &Experiment, only: Option<Only>) -> Plan {
    let mut builder = Builder::new(experiment, only);
    for (index, point) in experiment.scenarios.iter().enumerate() {
        builder.scenario(index, &point.scenario);
    }
    builder.finish()
}

/// A task of `kind` with its id, scenario and cost, and no load, seed or method.
fn task(kind: TaskKind, id: String, scenario: Option<usize>, cost: f64) -> Task {
    Task {
        kind,
        id,
        scenario,
        load: None,
        loads: None,
        replication: None,
        seed: None,
        fault_seed: None,
        cost,
        method: None,
    }
}

/// A plan being built ([`build`]): the graph so far and where its rows come from.
struct Builder<'a> {
    experiment: &'a Experiment,
    only: Option<Only>,
    graph: DiGraph<Task, ()>,
    /// Whether the model's Solve and Curve tasks are planned (its Saturation tasks may be
    /// planned without them, for loads given as fractions of saturation).
    run_model: bool,
    /// The simulation method, unless `--only model`.
    simulation: Option<&'a SimulationChoice>,
    /// Whether the loads are fractions of the saturation rate.
    fractions: bool,
    /// Whether they are fractions of the simulator's saturation throughput.
    of_simulation: bool,
    saturation: Vec<Option<NodeIndex>>,
    load_saturation: Vec<Option<NodeIndex>>,
    row_nodes: Vec<RowRef>,
    curves: Vec<NodeIndex>,
    /// The tasks Gather waits for.
    tail: Vec<NodeIndex>,
}

impl<'a> Builder<'a> {
    fn new(experiment: &'a Experiment, only: Option<Only>) -> Builder<'a> {
        Builder {
            experiment,
            only,
            graph: DiGraph::new(),
            run_model: experiment.model.is_some() && only != Some(Only::Simulation),
            simulation: experiment.simulation.as_ref().filter(|_| only != Some(Only::Model)),
            fractions: matches!(experiment.load, Load::FractionOfSaturation(_)),
            of_simulation: !experiment.saturation_of.is_model(),
            saturation: Vec::with_capacity(experiment.scenarios.len()),
            load_saturation: Vec::with_capacity(experiment.scenarios.len()),
            row_nodes: Vec::new(),
            curves: Vec::new(),
            tail: Vec::new(),
        }
    }

    /// The tasks of scenario `index`: the model's, then each load point's.
    fn scenario(&mut self, index: usize, scenario: &Scenario) {
        let model_sat = self.saturation_task(index, scenario);
        self.saturation.push(model_sat);
        self.tail.extend(model_sat);
        self.curve(index, scenario, model_sat);
        let searched = self.searches(index, scenario);
        let sat = if self.of_simulation { searched } else { model_sat };
        self.load_saturation.push(sat);
        // A load given as a fraction is a rate only with its saturation: the id of the task
        // that gives it (the model's Saturation, or the simulator's searches read at their
        // knee) is part of the load's id, so another model, model option or search is another
        // load point.
        let saturation_id = sat.filter(|_| self.fractions).map(|n| match self.of_simulation {
            true => format!("{SEARCHED_SATURATION}:{}", self.graph[n].id),
            false => self.graph[n].id.clone(),
        });
        let saturation_id = saturation_id.as_deref();
        let loads = load_points(&self.experiment.load);
        let batches = self.solve_batches(index, scenario, sat, &loads);
        for (point, load) in loads.into_iter().enumerate() {
            if let Some(&solve) = batches.get(point / SOLVE_BATCH) {
                let point = Some((point % SOLVE_BATCH) as u32);
                self.row_nodes.push(RowRef { node: solve, point });
            }
            let sat = (sat, saturation_id);
            if let Some(simulation) = self.simulation {
                self.simulations(index, scenario, sat, load, simulation);
            }
            for (method, external) in self.experiment.external.iter().enumerate() {
                self.external(index, scenario, sat, load, method, external);
            }
        }
    }

    /// The scenario's saturation searches: the simulator's (when it runs, or when the loads
    /// are fractions of its saturation) and each external simulation's, each method's searches
    /// and their Aggregate; returns the simulator's Aggregate.
    fn searches(&mut self, index: usize, scenario: &Scenario) -> Option<NodeIndex> {
        let simulation = match self.of_simulation {
            true => self.experiment.simulation.as_ref(),
            false => self.simulation,
        };
        let simulator = simulation.filter(|s| s.saturation_searches > 0).map(|simulation| {
            let options = &simulation.options;
            let at_saturation = LoadPoint::FractionOfSaturation(1.0);
            let cost = identity::SEARCH_COST_POINTS
                * identity::simulation_cost(scenario, options, at_saturation);
            self.method_searches(index, scenario, simulation.saturation_searches, None, cost, |r| {
                identity::search(scenario, options, r.0, r.1, r.2)
            })
        });
        for (method, external) in self.experiment.external.iter().enumerate() {
            if external.kind != ExternalKind::Simulation
                || external.saturation_searches == 0
                || self.only == Some(Only::Model)
            {
                continue;
            }
            let cost = identity::SEARCH_COST_POINTS * external.cost_seconds;
            let count = external.saturation_searches;
            self.method_searches(index, scenario, count, Some(method), cost, |r| {
                identity::external_search(scenario, external, r.0, r.1, r.2)
            });
        }
        simulator
    }

    /// `count` Search tasks of one method (`method`: an external one's index, `None` the
    /// simulator), each with the id `id_of((index, seed, fault seed))` and the seeds of
    /// `runner simulate --saturation`, and their Aggregate, which is returned.
    fn method_searches(
        &mut self,
        index: usize,
        scenario: &Scenario,
        count: u32,
        method: Option<usize>,
        cost: f64,
        id_of: impl Fn((u32, u64, Option<u64>)) -> String,
    ) -> NodeIndex {
        let spec_seed = self.experiment.seed;
        let mut searches = Vec::with_capacity(count as usize);
        for replication in 0..count {
            let seed = identity::saturation_search_seed(spec_seed, scenario, replication);
            let fault_seed = identity::fault_seed(spec_seed, scenario, replication);
            let id = id_of((replication, seed, fault_seed));
            let node = self.graph.add_node(Task {
                replication: Some(replication),
                seed: Some(seed),
                fault_seed,
                method,
                ..task(TaskKind::Search, id, Some(index), cost)
            });
            self.row_nodes.push(RowRef { node, point: None });
            searches.push(node);
        }
        self.aggregate(index, None, method, &searches)
    }

    /// The scenario's Saturation task, when the model runs or the loads are fractions of it.
    fn saturation_task(&mut self, index: usize, scenario: &Scenario) -> Option<NodeIndex> {
        match &self.experiment.model {
            Some(model) if self.run_model || (self.fractions && !self.of_simulation) => {
                let id = identity::saturation(scenario, model);
                Some(self.graph.add_node(task(TaskKind::Saturation, id, Some(index), 2e-3)))
            }
            _ => None,
        }
    }

    /// The scenario's Curve task (the model's dense curve), after its Saturation task.
    fn curve(&mut self, index: usize, scenario: &Scenario, sat: Option<NodeIndex>) {
        if let (true, Some(model), Some(sat)) = (self.run_model, &self.experiment.model, sat)
            && model.curve_points > 0
        {
            let id = identity::curve(scenario, model);
            let cost = 2e-5 * f64::from(model.curve_points);
            let curve = self.graph.add_node(task(TaskKind::Curve, id, Some(index), cost));
            self.graph.add_edge(sat, curve, ());
            self.curves.push(curve);
            self.tail.push(curve);
        }
    }

    /// The scenario's Solve tasks: its load points cut, in load order, into batches of
    /// [`SOLVE_BATCH`].
    fn solve_batches(
        &mut self,
        index: usize,
        scenario: &Scenario,
        sat: Option<NodeIndex>,
        loads: &[LoadPoint],
    ) -> Vec<NodeIndex> {
        let mut batches = Vec::new();
        let (true, Some(model)) = (self.run_model, &self.experiment.model) else {
            return batches;
        };
        for (number, chunk) in loads.chunks(SOLVE_BATCH).enumerate() {
            let range = LoadRange {
                start: (number * SOLVE_BATCH) as u32,
                len: chunk.len() as u32,
                of_saturation: self.fractions,
            };
            let id = identity::solve_batch(scenario, model, chunk);
            let cost = 2e-5 * chunk.len() as f64;
            let solve = self.graph.add_node(Task {
                loads: Some(range),
                ..task(TaskKind::Solve, id, Some(index), cost)
            });
            if let (true, Some(sat)) = (self.fractions, sat) {
                self.graph.add_edge(sat, solve, ());
            }
            batches.push(solve);
            self.tail.push(solve);
        }
        batches
    }

    /// The Simulate replications at one load point, and their Aggregate.
    fn simulations(
        &mut self,
        index: usize,
        scenario: &Scenario,
        (sat, saturation_id): (Option<NodeIndex>, Option<&str>),
        load: LoadPoint,
        simulation: &SimulationChoice,
    ) {
        let needs_saturation = matches!(load, LoadPoint::FractionOfSaturation(_));
        let spec_seed = self.experiment.seed;
        let mut replicas = Vec::with_capacity(simulation.replications as usize);
        for replication in 0..simulation.replications {
            let seed = identity::seed(spec_seed, scenario, load, replication);
            let fault_seed = identity::fault_seed(spec_seed, scenario, replication);
            let id = identity::simulate(
                scenario,
                simulation,
                (load, saturation_id),
                replication,
                seed,
                fault_seed,
            );
            let cost = identity::simulation_cost(scenario, &simulation.options, load);
            let node = self.graph.add_node(Task {
                load: Some(load),
                replication: Some(replication),
                seed: Some(seed),
                fault_seed,
                ..task(TaskKind::Simulate, id, Some(index), cost)
            });
            if let (true, Some(sat)) = (needs_saturation, sat) {
                self.graph.add_edge(sat, node, ());
            }
            self.row_nodes.push(RowRef { node, point: None });
            replicas.push(node);
        }
        self.aggregate(index, Some(load), None, &replicas);
    }

    /// An external method's runs at one load point: one for `kind: model`, one per replication
    /// and their Aggregate for `kind: simulation`; none when `--only` leaves its kind out.
    fn external(
        &mut self,
        index: usize,
        scenario: &Scenario,
        (sat, saturation_id): (Option<NodeIndex>, Option<&str>),
        load: LoadPoint,
        method: usize,
        external: &ExternalChoice,
    ) {
        let simulated = external.kind == ExternalKind::Simulation;
        if self.only == Some(if simulated { Only::Model } else { Only::Simulation }) {
            return;
        }
        let needs_saturation = matches!(load, LoadPoint::FractionOfSaturation(_));
        let replications: Vec<Option<u32>> =
            if simulated { (0..external.replications).map(Some).collect() } else { vec![None] };
        let spec_seed = self.experiment.seed;
        let mut replicas = Vec::with_capacity(replications.len());
        for replication in replications {
            let seed = replication.map(|r| identity::seed(spec_seed, scenario, load, r));
            let fault_seed = replication.and_then(|r| identity::fault_seed(spec_seed, scenario, r));
            let id = identity::external(
                scenario,
                external,
                (load, saturation_id),
                replication,
                seed,
                fault_seed,
            );
            let node = self.graph.add_node(Task {
                load: Some(load),
                replication,
                seed,
                fault_seed,
                method: Some(method),
                ..task(TaskKind::External, id, Some(index), external.cost_seconds)
            });
            if let (true, Some(sat)) = (needs_saturation, sat) {
                self.graph.add_edge(sat, node, ());
            }
            self.row_nodes.push(RowRef { node, point: None });
            replicas.push(node);
        }
        if simulated {
            self.aggregate(index, Some(load), Some(method), &replicas);
        } else {
            self.tail.extend(replicas);
        }
    }

    /// The Aggregate of `replicas` (of the simulator, or of external method `method`): at a
    /// load, or of saturation searches (no load).
    fn aggregate(
        &mut self,
        index: usize,
        load: Option<LoadPoint>,
        method: Option<usize>,
        replicas: &[NodeIndex],
    ) -> NodeIndex {
        let ids: Vec<&str> = replicas.iter().map(|&n| self.graph[n].id.as_str()).collect();
        let id = identity::aggregate(&ids);
        let aggregate = self.graph.add_node(Task {
            load,
            method,
            ..task(TaskKind::Aggregate, id, Some(index), 1e-5)
        });
        for &replica in replicas {
            self.graph.add_edge(replica, aggregate, ());
        }
        self.row_nodes.push(RowRef { node: aggregate, point: None });
        self.tail.push(aggregate);
        aggregate
    }

    /// The dense curves' rows last, then Gather (after every task) and Report.
    fn finish(self) -> Plan {
        let Builder { mut graph, saturation, load_saturation, mut row_nodes, curves, tail, .. } =
            self;
        row_nodes.extend(curves.into_iter().map(|node| RowRef { node, point: None }));
        let cost = 1e-6 * row_nodes.len() as f64;
        let gather = graph.add_node(task(TaskKind::Gather, String::from("gather"), None, cost));
        for node in tail {
            graph.add_edge(node, gather, ());
        }
        let report = graph.add_node(task(TaskKind::Report, String::from("report"), None, 0.5));
        graph.add_edge(gather, report, ());
        Plan { graph, gather, report, saturation, load_saturation, row_nodes }
    }
}

impl Plan {
    /// Number of tasks of each kind.
    pub fn counts(&self) -> Vec<(TaskKind, usize)> {
        TaskKind::ALL
            .iter()
            .map(|&kind| (kind, self.graph.node_weights().filter(|t| t.kind == kind).count()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::build;
    use crate::spec::{self, SpecSource, validate::planned_tasks};

    /// The task cap counts tasks exactly as `build` makes them, for every mix of methods.
    #[test]
    fn the_validator_counts_the_tasks_the_plan_makes() {
        let base = "\
name: count
scenario:
  topology: {kind: torus, radix: [8, 16], dimensions: 2}
  routing: nbc
  virtual_channels: [10, 12]
load: LOAD
methods: METHODS
";
        for (load, methods) in [
            ("{rates: [0.001, 0.002, 0.003]}", "{model: {name: nbc_torus}}"),
            ("{rates: [0.001, 0.002]}", "{simulation: {replications: 3}}"),
            (
                "{fraction_of_saturation: [0.1, 0.5]}",
                "{model: {name: nbc_torus}, simulation: {replications: 4}}",
            ),
            (
                "{fraction_of_saturation: [0.1, 0.5]}",
                "{model: {name: nbc_torus}, external: [\
                 {name: a, kind: simulation, command: [python3, adapters/md1_channel.py], \
                  inputs: [adapters/md1_channel.py], version: '1', replications: 3}, \
                 {name: b, kind: model, command: [python3, adapters/md1_channel.py], version: '1'}]}",
            ),
            ("{rates: [0.01]}", "{simulation: {saturation_searches: 1}}"),
            (
                "{fraction_of_saturation: [0.1, 0.5], saturation: simulation}",
                "{simulation: {replications: 2, saturation_searches: 3}, external: [\
                 {name: a, kind: simulation, command: [python3, adapters/md1_channel.py], \
                  inputs: [adapters/md1_channel.py], version: '1', replications: 2, \
                  saturation_searches: 2}]}",
            ),
        ] {
            let text = base.replace("LOAD", load).replace("METHODS", methods);
            let source = SpecSource { path: "count.yaml".into(), text, sha256: String::new() };
            let experiment = spec::parse(&source).unwrap_or_else(|e| panic!("{e}"));
            let planned = planned_tasks(
                experiment.scenarios.len(),
                experiment.load.len(),
                experiment.model.as_ref(),
                experiment.simulation.as_ref(),
                &experiment.external,
            );
            let plan = build(&experiment, None);
            assert_eq!(planned, plan.graph.node_count() as u64, "{methods}");
        }
    }

    /// With `load.saturation: simulation` every task at a fraction of saturation waits for the
    /// Aggregate of the simulator's searches, and its id holds that Aggregate's: searching
    /// otherwise (another window) gives the load points other ids, while their seeds stay.
    #[test]
    fn loads_of_the_simulated_saturation_wait_for_the_searches_and_hash_them() {
        let text = "\
name: searched
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  virtual_channels: 2
load: {fraction_of_saturation: [0.3, 0.6], saturation: simulation}
methods:
  simulation: {replications: 2, saturation_searches: 3, cycles: CYCLES}
";
        let plan_of = |cycles: &str| {
            let text = text.replace("CYCLES", cycles);
            let source = SpecSource { path: "s.yaml".into(), text, sha256: String::new() };
            let experiment = spec::parse(&source).unwrap_or_else(|e| panic!("{e}"));
            build(&experiment, None)
        };
        let plan = plan_of("2000");
        let searched = plan.load_saturation[0].expect("the searches' Aggregate");
        assert_eq!(plan.saturation[0], None, "no model");
        let aggregate = &plan.graph[searched];
        assert_eq!((aggregate.kind, aggregate.load), (super::TaskKind::Aggregate, None));
        let searches: Vec<_> =
            plan.graph.neighbors_directed(searched, petgraph::Direction::Incoming).collect();
        assert_eq!(searches.len(), 3);
        assert!(searches.iter().all(|&n| plan.graph[n].kind == super::TaskKind::Search));
        let simulations: Vec<_> = plan
            .graph
            .node_indices()
            .filter(|&n| plan.graph[n].kind == super::TaskKind::Simulate)
            .collect();
        assert_eq!(simulations.len(), 4);
        for &node in &simulations {
            let inputs: Vec<_> =
                plan.graph.neighbors_directed(node, petgraph::Direction::Incoming).collect();
            assert_eq!(inputs, vec![searched], "waits for the searches' mean");
        }
        let other = plan_of("3000");
        let ids = |plan: &super::Plan, kind| -> Vec<(String, Option<u64>)> {
            plan.graph
                .node_weights()
                .filter(|t| t.kind == kind)
                .map(|t| (t.id.clone(), t.seed))
                .collect()
        };
        for (a, b) in ids(&plan, super::TaskKind::Simulate)
            .iter()
            .zip(&ids(&other, super::TaskKind::Simulate))
        {
            assert_ne!(a.0, b.0, "the window changes the searches, so the loads");
            assert_eq!(a.1, b.1, "a load point's seed is its own");
        }
        // The searches' seeds are those of `runner simulate --saturation --seed 1`.
        let scenario = &spec::parse(&SpecSource {
            path: "s.yaml".into(),
            text: text.replace("CYCLES", "2000"),
            sha256: String::new(),
        })
        .unwrap_or_else(|e| panic!("{e}"))
        .scenarios[0]
            .scenario;
        let mut seeds: Vec<u64> = searches.iter().filter_map(|&n| plan.graph[n].seed).collect();
        seeds.sort_unstable();
        let mut expected: Vec<u64> =
            (0..3).map(|r| super::identity::saturation_search_seed(1, scenario, r)).collect();
        expected.sort_unstable();
        assert_eq!(seeds, expected);
    }

    /// A simulation at a fraction of the model's saturation is at another rate when the model
    /// reads its equations otherwise (`literal_eq22`): its id holds the model's Saturation
    /// task's, so a cached run at the other rate is never taken for it; at a rate it has none.
    #[test]
    fn a_fraction_of_the_models_saturation_hashes_the_model() {
        let text = "\
name: bft
scenario:
  topology: {kind: fat_tree, processors: 64}
  routing: up_down
  message_length: 16
load: LOAD
methods:
  model: {name: fat_tree, literal_eq22: LITERAL}
  simulation: {}
";
        let ids = |load: &str, literal: &str| -> Vec<String> {
            let text = text.replace("LOAD", load).replace("LITERAL", literal);
            let source = SpecSource { path: "b.yaml".into(), text, sha256: String::new() };
            let experiment = spec::parse(&source).unwrap_or_else(|e| panic!("{e}"));
            let plan = build(&experiment, None);
            plan.graph
                .node_weights()
                .filter(|t| t.kind == super::TaskKind::Simulate)
                .map(|t| t.id.clone())
                .collect()
        };
        let fractions = "{fraction_of_saturation: [0.5]}";
        assert_ne!(ids(fractions, "false"), ids(fractions, "true"));
        let rates = "{rates: [0.001]}";
        assert_eq!(ids(rates, "false"), ids(rates, "true"), "a rate is a rate");
    }

    /// A graph file is part of the task ids by its content only: two copies under different
    /// names (and directories) give the same ids, an edited copy other ids; the serialized
    /// scenario holds the content hash, never the path.
    #[test]
    fn graph_files_enter_task_ids_by_content_not_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = "router a terminals 1\nrouter b terminals 2\nrouter c terminals 1\n\
                    link a b\nlink b c\nlink c a\n";
        std::fs::create_dir(dir.path().join("sub")).expect("sub");
        let files = [
            ("one.txt", text.to_string()),
            ("sub/two.txt", text.to_string()),
            ("edited.txt", text.replace("router c terminals 1", "router c terminals 2")),
        ];
        let ids: Vec<Vec<String>> = files
            .iter()
            .map(|(name, content)| {
                std::fs::write(dir.path().join(name), content).expect("write");
                let spec = format!(
                    "name: g\nscenario:\n  topology: {{kind: graph, graph: {name}}}\n  \
                     routing: minimal\n  virtual_channels: 2\nload: {{rates: [0.01, 0.02]}}\n\
                     methods: {{simulation: {{}}}}\n"
                );
                let path = dir.path().join("spec.yaml");
                let source = SpecSource { path, text: spec, sha256: String::new() };
                let experiment = spec::parse(&source).unwrap_or_else(|e| panic!("{e}"));
                let json = serde_json::to_string(&experiment.scenarios[0].scenario).expect("json");
                assert!(json.contains("\"blake3\":"), "{json}");
                assert!(!json.contains(".txt"), "the path is not part of the scenario: {json}");
                let plan = build(&experiment, None);
                let mut ids: Vec<String> = plan
                    .graph
                    .node_weights()
                    .filter(|t| t.kind == super::TaskKind::Simulate)
                    .map(|t| t.id.clone())
                    .collect();
                ids.sort_unstable();
                assert_eq!(ids.len(), 2);
                ids
            })
            .collect();
        assert_eq!(ids[0], ids[1], "same content, other name: same task ids");
        assert!(ids[2].iter().all(|id| !ids[0].contains(id)), "edited file: other task ids");
    }

    /// A scenario with faults gets one fault seed per replication, the same at every load
    /// point; a fault-free scenario gets none.
    #[test]
    fn fault_seeds_follow_the_replication_not_the_load() {
        let text = "\
name: faults
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: adaptive
  virtual_channels: [2, 3]
load: {rates: [0.001, 0.002, 0.003]}
methods: {simulation: {replications: 2}}
";
        let source =
            SpecSource { path: "faults.yaml".into(), text: text.into(), sha256: String::new() };
        let mut experiment = spec::parse(&source).unwrap_or_else(|e| panic!("{e}"));
        // The simulator refuses faults under wormhole switching; the planner does not care.
        experiment.scenarios[1].scenario.fault_rate = 0.1;
        let plan = build(&experiment, None);
        let simulate: Vec<&super::Task> =
            plan.graph.node_weights().filter(|t| t.kind == super::TaskKind::Simulate).collect();
        assert_eq!(simulate.len(), 12);
        let mut ids: Vec<&str> = simulate.iter().map(|t| t.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 12, "task ids are distinct");
        for replication in 0..2 {
            let seeds = |scenario: usize| -> Vec<Option<u64>> {
                simulate
                    .iter()
                    .filter(|t| t.scenario == Some(scenario) && t.replication == Some(replication))
                    .map(|t| t.fault_seed)
                    .collect()
            };
            assert_eq!(seeds(0), vec![None; 3]);
            let faulty = seeds(1);
            assert_eq!(faulty.len(), 3);
            assert!(faulty[0].is_some() && faulty.iter().all(|&s| s == faulty[0]), "{faulty:?}");
        }
        let first = |r: u32| {
            simulate
                .iter()
                .find(|t| t.scenario == Some(1) && t.replication == Some(r))
                .map(|t| t.fault_seed)
        };
        assert_ne!(first(0), first(1), "each replication draws its own map");
    }

    /// Issue 24 added message-length distributions (and their columns) with `fixed` as the
    /// default: a spec that names none keeps its task ids and its results. The ids and the
    /// latencies below were written by `runner run` at sim-1.2.0 before the change (the model
    /// ids re-pinned at model-1.0.1, which changed a message, no number; the simulation and
    /// aggregate ids at sim-1.4.0, whose intervals and stopping rule are new, and at sim-1.5.0
    /// and sim-1.6.0, whose intervals widen or become a ratio estimator's; this fixed window
    /// keeps its mean).
    #[test]
    fn a_fixed_length_spec_keeps_its_task_ids_and_results() {
        let text = "name: pin\nseed: 7\nscenario:\n  topology: {kind: torus, radix: 4, \
                    dimensions: 2}\n  routing: nbc\n  virtual_channels: 4\n  message_length: 8\n\
                    load:\n  rates: [0.02]\nmethods:\n  model: {name: nbc_torus, curve_points: \
                    0}\n  simulation: {cycles: 5000, warmup_cycles: 1000}\nreport:\n  figures: []\n"
            .to_string();
        let source = SpecSource { path: "pin.yaml".into(), text, sha256: String::new() };
        let experiment = spec::parse(&source).unwrap_or_else(|e| panic!("{e}"));
        let plan = build(&experiment, None);
        let id = |kind: super::TaskKind| {
            plan.graph.node_weights().find(|t| t.kind == kind).map(|t| t.id.clone())
        };
        let pinned = [
            (
                super::TaskKind::Saturation,
                "821b94afe4ce06865bd57c18eac92e49007539c4e1b2189fb37d22e834f716f2",
            ),
            (
                super::TaskKind::Solve,
                "f1c5363a4eb755fc89503d0ee1bba05c494c643dd165b0c43d4ac37029b9bfec",
            ),
            (
                super::TaskKind::Simulate,
                "30a2186f6f3b0a0ebcb331cf6035ed8293c472a893731ac9aaaa141b797e001a",
            ),
            (
                super::TaskKind::Aggregate,
                "4f03a83a8a5fac07f4bc5498ccef8091caaab905057eebb1ee0252c074be8499",
            ),
        ];
        for (kind, pinned) in pinned {
            if kind == super::TaskKind::Solve {
                // Solve tasks come in batches now; a point's row keeps the id it had.
                let Some(model) = &experiment.model else { panic!("no model") };
                let load = super::LoadPoint::Rate(0.02);
                let point = super::identity::solve(&experiment.scenarios[0].scenario, model, load);
                assert_eq!(point, pinned);
                continue;
            }
            assert_eq!(id(kind).as_deref(), Some(pinned), "{kind:?}");
        }
        let task = plan.graph.node_weights().find(|t| t.kind == super::TaskKind::Simulate);
        let (Some(task), Some(simulation)) = (task, &experiment.simulation) else {
            panic!("no simulation task");
        };
        assert_eq!(task.seed, Some(1_486_654_255_592_439_236));
        let scenario = &experiment.scenarios[0].scenario;
        let m = crate::sim::simulate(
            scenario,
            0.02,
            &simulation.options,
            1_486_654_255_592_439_236,
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.latency, Some(12.099295323510571));
    }
}
