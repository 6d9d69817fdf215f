//! Graphviz DOT output of a plan (`runner plan --dot`).

use std::fmt::Write;

use super::{LoadPoint, Plan, TaskKind};
use crate::spec::Experiment;

/// The plan as a DOT digraph, one node per task, labelled with its kind and inputs.
pub fn to_dot(plan: &Plan, experiment: &Experiment) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&experiment.name));
    let _ =
        writeln!(out, "  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];");
    for index in plan.graph.node_indices() {
        let task = &plan.graph[index];
        let mut label = task.kind.name().to_string();
        if let Some(method) = task.method.and_then(|m| experiment.external.get(m)) {
            label.push_str(&format!(" {}", escape(&method.name)));
        }
        if let Some(s) = task.scenario {
            label.push_str(&format!("\\n{}", escape(&experiment.scenarios[s].label)));
        }
        match task.load {
            Some(LoadPoint::Rate(r)) => label.push_str(&format!("\\nrate={r}")),
            Some(LoadPoint::FractionOfSaturation(f)) => {
                label.push_str(&format!("\\n{f} x saturation"))
            }
            Some(LoadPoint::TraceTimeScale(s)) => {
                label.push_str(&format!("\\ntrace time scale {s}"))
            }
            None => {}
        }
        if let Some(range) = task.loads {
            let last = range.start.saturating_add(range.len).saturating_sub(1);
            label.push_str(&format!("\\nload points {}..{} ({})", range.start, last, range.len));
        }
        if let Some(r) = task.replication {
            label.push_str(&format!("\\nreplication {r}"));
        }
        let style = match task.kind {
            TaskKind::Saturation => "style=filled, fillcolor=\"#E69F00\"",
            TaskKind::Solve => "style=filled, fillcolor=\"#56B4E9\"",
            TaskKind::Curve => "style=filled, fillcolor=\"#CC79A7\"",
            TaskKind::Simulate => "style=filled, fillcolor=\"#009E73\"",
            TaskKind::External => "style=filled, fillcolor=\"#0072B2\", fontcolor=white",
            TaskKind::Search => "style=filled, fillcolor=\"#D55E00\", fontcolor=white",
            TaskKind::Aggregate => "style=filled, fillcolor=\"#F0E442\"",
            TaskKind::Gather | TaskKind::Report => "style=filled, fillcolor=\"#CCCCCC\"",
        };
        let _ = writeln!(out, "  n{} [label=\"{label}\", {style}];", index.index());
    }
    for edge in plan.graph.raw_edges() {
        let _ = writeln!(out, "  n{} -> n{};", edge.source().index(), edge.target().index());
    }
    out.push_str("}\n");
    out
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}
