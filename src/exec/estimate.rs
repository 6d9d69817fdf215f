//! What a task will cost, learned from the timelines of earlier runs, and the priority the
//! scheduler gives it.
//!
//! The plan's own estimate ([`crate::plan::Task::cost`]) is a formula in the network's size, the
//! cycles and the load: right in its proportions within a spec, off by a constant factor, and
//! blind to a precision-mode simulation's stop (it counts the minimum window, `cycles`, where a
//! run near saturation goes on to `max_cycles`). [`History`] corrects it from what was measured:
//!
//! 1. a task that ran before (a `--force` run, a cache emptied) costs what it took, the last
//!    time it ran;
//! 2. any other costs its plan estimate times the ratio of measured to estimated time of the
//!    tasks of the same spec, kind and scenario that ran before, or else of the same spec and
//!    kind, or else of the same kind in any spec;
//! 3. and with no history at all, the plan estimate.
//!
//! A task's cost is counted in worker-seconds: one that ran on several threads (a large
//! network, `exec::threads`) took its wall time times its threads, as the timeline's summary
//! counts it. That is what one thread would take at most (it is more where the threads did
//! not pay for themselves), so such a task is not estimated cheaper, and given fewer workers,
//! for having had several the last time.
//!
//! The scheduler starts the ready task with the highest [`priorities`]: its cost plus the
//! costliest chain of dependants after it (the "bottom level" of list scheduling), so the long
//! simulations and the chains that end in them start first and the short tasks fill the gaps.

use std::collections::HashMap;
use std::path::Path;

use petgraph::Direction;

use super::timeline::{Ending, Timeline, saved};
use crate::plan::{Plan, Task};

/// Measured and estimated seconds summed over a group of tasks.
#[derive(Clone, Copy, Debug, Default)]
struct Ratio {
    measured: f64,
    estimated: f64,
}

impl Ratio {
    fn add(&mut self, measured: f64, estimated: f64) {
        self.measured += measured;
        self.estimated += estimated;
    }

    /// Measured over estimated, when both are positive and finite.
    fn factor(&self) -> Option<f64> {
        let factor = self.measured / self.estimated;
        (self.estimated > 0.0 && factor.is_finite() && factor > 0.0).then_some(factor)
    }
}

/// The wall times of earlier runs' tasks.
#[derive(Debug, Default)]
pub struct History {
    /// Task id -> its last measured wall time times its threads.
    measured: HashMap<String, f64>,
    /// (spec, kind, scenario label) -> measured and estimated time.
    by_scenario: HashMap<(String, String, String), Ratio>,
    /// (spec, kind) -> measured and estimated time.
    by_spec: HashMap<(String, String), Ratio>,
    /// Kind -> measured and estimated time.
    by_kind: HashMap<String, Ratio>,
    /// How many timelines it learned from.
    timelines: usize,
}

impl History {
    /// The history in the timelines saved in `dir` (none when there are none; a file that
    /// cannot be read or parsed is passed over: a history only steers the order of tasks).
    pub fn load(dir: &Path) -> History {
        let mut history = History::default();
        for path in saved(dir) {
            if let Some(timeline) =
                std::fs::read_to_string(&path).ok().and_then(|text| Timeline::from_json(&text).ok())
            {
                history.learn(&timeline);
            }
        }
        history
    }

    /// Learns from one run's finished tasks (later runs override earlier ones per task).
    pub fn learn(&mut self, timeline: &Timeline) {
        self.timelines += 1;
        for record in timeline.records.iter().filter(|r| r.is_task() && r.ending == Ending::Done) {
            let seconds = record.seconds() * f64::from(record.threads.max(1));
            self.measured.insert(record.id.clone(), seconds);
            if !(record.estimate > 0.0 && record.estimate.is_finite()) {
                continue;
            }
            let scenario = scenario_of(&record.label).to_string();
            self.by_scenario
                .entry((record.spec.clone(), record.kind.clone(), scenario))
                .or_default()
                .add(seconds, record.estimate);
            self.by_spec
                .entry((record.spec.clone(), record.kind.clone()))
                .or_default()
                .add(seconds, record.estimate);
            self.by_kind.entry(record.kind.clone()).or_default().add(seconds, record.estimate);
        }
    }

    /// How many timelines it learned from.
    pub fn timelines(&self) -> usize {
        self.timelines
    }

    /// The seconds `task` of spec `spec`, labelled `label` ([`label`]), is expected to take.
    pub fn seconds(&self, spec: &str, task: &Task, label: &str) -> f64 {
        if let Some(&seconds) = self.measured.get(&task.id) {
            return seconds;
        }
        let kind = task.kind.name();
        let factor = self
            .by_scenario
            .get(&(spec.to_string(), kind.to_string(), scenario_of(label).to_string()))
            .and_then(Ratio::factor)
            .or_else(|| self.by_spec.get(&(spec.to_string(), kind.to_string()))?.factor())
            .or_else(|| self.by_kind.get(kind)?.factor())
            .unwrap_or(1.0);
        task.cost * factor
    }
}

/// A task's label on the timeline: its kind, its scenario's label and its load, separated by
/// ` | `.
pub fn label(kind: &str, scenario: &str, load: &str) -> String {
    match (scenario.is_empty(), load.is_empty()) {
        (true, _) => kind.to_string(),
        (false, true) => format!("{kind} | {scenario}"),
        (false, false) => format!("{kind} | {scenario} | {load}"),
    }
}

/// The scenario part of a [`label`].
fn scenario_of(label: &str) -> &str {
    label.split(" | ").nth(1).unwrap_or("")
}

/// Each node's priority: its own cost (`cost`, per node index; nothing for the nodes that are
/// not computed) plus the largest priority among its dependants, so a task heading a long chain
/// goes before a short one of the same cost.
pub fn priorities(plan: &Plan, cost: &[f64]) -> Vec<f64> {
    let graph = &plan.graph;
    let mut priority = vec![0.0f64; graph.node_count()];
    // The plan is acyclic (its builder adds edges from earlier nodes to later ones); a cycle
    // would leave the order empty and every priority at the task's own cost.
    let order = petgraph::algo::toposort(graph, None).unwrap_or_default();
    for &node in order.iter().rev() {
        let own = if graph[node].kind.is_compute() { cost[node.index()] } else { 0.0 };
        let own = if own.is_finite() && own > 0.0 { own } else { 0.0 };
        let after = graph
            .neighbors_directed(node, Direction::Outgoing)
            .map(|next| priority[next.index()])
            .fold(0.0f64, f64::max);
        priority[node.index()] = own + after;
    }
    if order.is_empty() {
        for node in graph.node_indices() {
            priority[node.index()] = cost[node.index()].max(0.0);
        }
    }
    priority
}

#[cfg(test)]
mod tests {
    use super::super::timeline::Record;
    use super::*;
    use crate::plan::TaskKind;

    /// A small spec with both methods, two scenarios and replications.
    fn experiment() -> crate::spec::Experiment {
        let text = "\
name: s
scenario:
  topology: {kind: torus, radix: [4, 8], dimensions: 2}
  routing: nbc
  virtual_channels: 10
load: {rates: [0.001, 0.002]}
methods: {model: {name: nbc_torus}, simulation: {replications: 3}}
";
        let source = crate::spec::SpecSource {
            path: "s.yaml".into(),
            text: text.into(),
            sha256: String::new(),
        };
        crate::spec::parse(&source).unwrap_or_else(|e| panic!("{e}"))
    }

    fn task(id: &str, cost: f64) -> Task {
        let plan = crate::plan::build(&experiment(), None);
        let mut task = plan.graph[plan.gather].clone();
        task.kind = TaskKind::Simulate;
        task.id = id.into();
        task.cost = cost;
        task
    }

    fn record(id: &str, label: &str, seconds: f64, estimate: f64) -> Record {
        on_threads(id, label, seconds, estimate, 1)
    }

    fn on_threads(id: &str, label: &str, seconds: f64, estimate: f64, threads: u32) -> Record {
        Record {
            id: id.into(),
            kind: "Simulate".into(),
            label: label.into(),
            spec: "s".into(),
            worker: 0,
            start: 0.0,
            end: seconds,
            inputs: Vec::new(),
            estimate,
            priority: 0.0,
            threads,
            ending: Ending::Done,
        }
    }

    #[test]
    fn a_task_costs_what_it_took_else_its_estimate_scaled_by_its_neighbours() {
        let mut history = History::default();
        let a = label("Simulate", "torus A", "0.1");
        let b = label("Simulate", "torus B", "0.1");
        history.learn(&Timeline {
            records: vec![
                record("one", &a, 10.0, 1.0),
                record("two", &a, 30.0, 1.0),
                record("three", &b, 2.0, 1.0),
            ],
            ..Timeline::default()
        });
        // Measured before: what it took.
        assert_eq!(history.seconds("s", &task("one", 5.0), &a), 10.0);
        // Same scenario: 40 s measured for 2 s estimated.
        assert_eq!(history.seconds("s", &task("new", 0.5), &a), 10.0);
        // Another scenario of the spec: 42 s for 3 s.
        let c = label("Simulate", "torus C", "0.1");
        assert_eq!(history.seconds("s", &task("new", 0.5), &c), 7.0);
        // Another spec: the kind's ratio; no history: the estimate.
        assert_eq!(history.seconds("t", &task("new", 0.5), &c), 7.0);
        assert_eq!(History::default().seconds("s", &task("new", 0.5), &c), 0.5);
    }

    #[test]
    fn a_task_on_several_threads_costs_its_wall_time_times_its_threads() {
        let mut history = History::default();
        let large = label("Simulate", "torus 512", "0.1");
        history.learn(&Timeline {
            records: vec![on_threads("large", &large, 6.0, 1.0, 2)],
            ..Timeline::default()
        });
        // 6 s on 2 threads: 12 worker-seconds, measured and as its scenario's ratio.
        assert_eq!(history.seconds("s", &task("large", 1.0), &large), 12.0);
        assert_eq!(history.seconds("s", &task("other", 0.5), &large), 6.0);
    }

    #[test]
    fn a_chain_heads_priority_over_a_lone_task_of_the_same_cost() {
        let plan = crate::plan::build(&experiment(), None);
        let cost: Vec<f64> = plan.graph.node_weights().map(|task| task.cost).collect();
        let priority = priorities(&plan, &cost);
        // The Aggregate heads nothing but Gather: its priority is its cost; a replication's is
        // its own cost plus its Aggregate's.
        assert!(priority.iter().all(|p| p.is_finite() && *p >= 0.0));
        for node in plan.graph.node_indices() {
            let own = if plan.graph[node].kind.is_compute() { plan.graph[node].cost } else { 0.0 };
            for next in plan.graph.neighbors_directed(node, Direction::Outgoing) {
                assert!(priority[node.index()] >= own + priority[next.index()] - 1e-12);
            }
        }
    }
}
