//! The `report:` section of a spec: which figures and tables the bundle holds.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use super::error::Diagnostic;

/// The most panels one figure may have (a 64-panel figure is already a poster).
pub const MAX_PANELS: usize = 64;
/// The most lines (combinations of the `lines` columns) one panel may have.
pub const MAX_LINES: usize = 24;

/// What the report bundle shows. A spec without `report:` gets the same defaults as
/// `report: {}` (one latency-against-rate figure, both tables).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    /// Directory of minijinja templates to use instead of the built-in ones
    /// (relative to the spec file; it must exist). The bundle keeps a copy of its files.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub template_dir: Option<Spanned<String>>,
    /// One entry per figure.
    #[serde(default = "default_figures")]
    pub figures: Vec<FigureSpec>,
    /// Tables to include.
    #[serde(default = "default_tables")]
    pub tables: Vec<TableKind>,
}

impl ReportSpec {
    /// The problem with `template_dir`, when it names no directory: it is resolved against
    /// `spec_dir`, the directory of the spec file, as `runner run` resolves it.
    pub fn check_template_dir(&self, spec_dir: &Path) -> Option<Diagnostic> {
        let dir = self.template_dir.as_ref()?;
        let resolved = spec_dir.join(&dir.value);
        if resolved.is_dir() {
            return None;
        }
        let what = if resolved.exists() { "is not a directory" } else { "does not exist" };
        Some(Diagnostic {
            message: format!(
                "`template_dir: {}` {what} (looked for `{}`, relative to the spec file)",
                dir.value,
                resolved.display()
            ),
            location: Some(dir.referenced),
            help: Some(
                "create the directory with the templates to override (see templates/README.md), or remove `template_dir` to use the built-in templates".into(),
            ),
        })
    }
}

impl Default for ReportSpec {
    fn default() -> ReportSpec {
        ReportSpec { template_dir: None, figures: default_figures(), tables: default_tables() }
    }
}

/// One figure: `y` against `x`, one panel per combination of the `panels`
/// columns, one line (model) and marker series (simulation) per combination of
/// the `lines` columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// Column on the x axis, or `intermediates.<key>` for one of the evaluators' intermediates.
    #[serde(default = "default_x")]
    pub x: String,
    /// Column on the y axis, or `intermediates.<key>` for one of the evaluators' intermediates
    /// (for example `intermediates.p_s`: model lines and simulation markers where both report
    /// the key).
    #[serde(default = "default_y")]
    pub y: String,
    /// Columns whose value combinations each get their own panel.
    #[serde(default)]
    pub panels: Vec<String>,
    /// Columns whose value combinations each get their own line within a panel.
    #[serde(default)]
    pub lines: Vec<String>,
    /// Logarithmic y axis.
    #[serde(default)]
    pub log_y: bool,
    /// Figure caption; a default is derived from the axes.
    #[serde(default)]
    pub title: Option<String>,
}

/// The tables a report can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    /// Model-vs-simulation agreement per scenario and load band: bias, mean and max |error|,
    /// one-sided instability.
    ModelVsSimulation,
    /// Model and simulation side by side at every load point: latencies, the simulation's
    /// 95% interval, the signed error and the status.
    Comparison,
    /// Every result row (the CSV every column, per-replication rows too; the LaTeX the columns
    /// a paper shows: scenario fields that vary, rate, load, method, latency ± 95% CI,
    /// throughput, status).
    Results,
    /// Model saturation rate vs the simulator's highest accepted throughput, per scenario
    /// (throughput mode, `measure: throughput`).
    Saturation,
}

fn default_x() -> String {
    "rate".into()
}

fn default_y() -> String {
    "latency".into()
}

fn default_figures() -> Vec<FigureSpec> {
    vec![FigureSpec {
        x: default_x(),
        y: default_y(),
        panels: Vec::new(),
        lines: Vec::new(),
        log_y: false,
        title: None,
    }]
}

fn default_tables() -> Vec<TableKind> {
    vec![TableKind::ModelVsSimulation, TableKind::Results]
}
