//! The `report:` section of a spec: which figures and tables the bundle holds.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::{Location, Spanned};

use super::error::Diagnostic;

/// The most panels one figure may have (a 64-panel figure is already a poster).
pub const MAX_PANELS: usize = 64;
/// The most lines (combinations of the `lines` columns) one panel may have.
pub const MAX_LINES: usize = 24;

/// The narrowest span an axis may have relative to the larger magnitude of its ends (on a
/// logarithmic axis, the narrowest `ln(high / low)`): below it, round tick values are no
/// longer distinct numbers.
pub const MIN_RELATIVE_SPAN: f64 = 1e-9;
/// The narrowest span a linear axis may have, and the lowest low end of a logarithmic one: a
/// span below it (a subnormal one, such as that of `[0, 1e-323]`) has no precision left to
/// place ticks in, and the powers of ten below it that a logarithmic axis would tick at are
/// not normal numbers.
pub const MIN_SPAN: f64 = 1e-300;

/// Whether `[low, high]` is an axis range a figure can draw: finite ends, `high` above `low`
/// by at least [`MIN_SPAN`] and [`MIN_RELATIVE_SPAN`] of the larger magnitude, with a finite
/// span; on a logarithmic axis, a low end of at least [`MIN_SPAN`] and `ln(high / low)` at
/// least [`MIN_RELATIVE_SPAN`].
pub fn span_is_meaningful(low: f64, high: f64, log: bool) -> bool {
    if !(low.is_finite() && high.is_finite() && high > low) {
        return false;
    }
    if log {
        low >= MIN_SPAN && high.ln() - low.ln() >= MIN_RELATIVE_SPAN
    } else {
        let span = high - low;
        span.is_finite()
            && span >= MIN_SPAN
            && span >= MIN_RELATIVE_SPAN * low.abs().max(high.abs())
    }
}

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
///
/// The axes, the width and the page split have defaults that suit a journal figure; the
/// fields below override them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// What the figure draws: `lines` (the default: `y` against `x`, model lines and
    /// simulation markers), `histogram` (the distribution of `y`, one of `latency`,
    /// `network_latency` or `source_wait`, at the points `point` selects, from the bundle's
    /// `histograms.parquet`; one panel per point) or `link_heatmap` (the utilisation of every
    /// link at the points `point` selects, from `links.parquet`, which
    /// `methods.simulation.link_loads: true` records: a heat map of the router grid for 2-D
    /// tori and meshes, mean and max utilisation per dimension, level or link kind for other
    /// topologies). `x`, `lines` and the axis options apply to `lines` figures only.
    #[serde(default, skip_serializing_if = "FigureKind::is_lines")]
    pub kind: FigureKind,
    /// `histogram` and `link_heatmap` figures: which simulated points to draw, one panel
    /// each. `highest_stable` (the default): per scenario, the highest load whose simulation
    /// is `ok`; `all`: every simulated point; a number: per scenario, the simulated point
    /// whose `rate` is nearest it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<PointSelector>,
    /// Column on the x axis, or `intermediates.<key>` for one of the evaluators' intermediates.
    /// Two derived loads are also accepted: `flit_rate` (the offered load in
    /// flits/node/cycle, `rate` times `message_length`, so that message lengths compare) and
    /// `fraction_of_saturation` (`rate` over the scenario's model saturation rate, also for
    /// simulation rows and for loads given as rates).
    #[serde(default = "default_x")]
    pub x: String,
    /// Column on the y axis, or `intermediates.<key>` for one of the evaluators' intermediates
    /// (for example `intermediates.p_s`: model lines and simulation markers where both report
    /// the key).
    #[serde(default = "default_y")]
    pub y: String,
    /// Only the scenarios whose scenario columns hold these values: a map from a scenario
    /// column to one value or a list of values (`select: {radix: 8}`, `select: {routing:
    /// [duato]}`), so that one sweep gives several figures, each with axes of its own (the
    /// papers' figures of one network size each). Every value must match some scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<BTreeMap<String, Selection>>")]
    pub select: Option<Spanned<BTreeMap<String, Selection>>>,
    /// Columns whose value combinations each get their own panel.
    #[serde(default)]
    pub panels: Vec<String>,
    /// Columns whose value combinations each get their own line within a panel.
    #[serde(default)]
    pub lines: Vec<String>,
    /// Logarithmic x axis.
    #[serde(default)]
    pub log_x: bool,
    /// Logarithmic y axis.
    #[serde(default)]
    pub log_y: bool,
    /// x axis limits `[low, high]`; either may be `null` for the automatic limit.
    /// Points outside are not drawn (lines are cut at the limit).
    #[serde(default)]
    #[schemars(with = "Option<[Option<f64>; 2]>")]
    pub xlim: Option<Spanned<[Option<f64>; 2]>>,
    /// y axis limits `[low, high]`; either may be `null` for the automatic limit. Points above
    /// are drawn on the top edge as beyond the axis, points below are left out, and confidence
    /// bars that run past either end are cut there and end in an arrowhead.
    #[serde(default)]
    #[schemars(with = "Option<[Option<f64>; 2]>")]
    pub ylim: Option<Spanned<[Option<f64>; 2]>>,
    /// The same y range in every panel (default: each panel its own, as the papers' panels of
    /// different sizes need).
    #[serde(default)]
    pub shared_y: bool,
    /// Whether the y axis starts at 0. Default (`null`): automatic, at 0 when the data's low end
    /// is under a third of its top, else a little below the data.
    #[serde(default)]
    pub y_from_zero: Option<bool>,
    /// Figure width: `column` (3.5 in, one panel per row) or `page` (7.16 in, two panels per
    /// row). Default: `column` for a single panel, `page` for more.
    #[serde(default)]
    pub width: Option<FigureWidth>,
    /// The most panels on one page. A figure whose panels do not fit is split into pages
    /// `fig<N>a_...`, `fig<N>b_...`, each with the figure's legend; a page is never taller
    /// than 10 in, whatever this says. Default: as many as fit in 10 in.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_panels_per_page: Option<Spanned<u32>>,
    /// x axis label instead of the column's name and unit.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub x_label: Option<Spanned<String>>,
    /// y axis label instead of the column's name and unit.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub y_label: Option<Spanned<String>>,
    /// Text in front of the legend's series entries (for example `Scouting distance`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub legend_title: Option<Spanned<String>>,
    /// Figure caption; a default is derived from the axes.
    #[serde(default)]
    pub title: Option<String>,
}

/// The values `select` accepts for one scenario column (`FigureSpec::select`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Selection {
    /// One value.
    One(SelectedValue),
    /// Any of these values.
    Any(Vec<SelectedValue>),
}

impl Selection {
    /// The accepted values.
    pub fn values(&self) -> &[SelectedValue] {
        match self {
            Selection::One(value) => std::slice::from_ref(value),
            Selection::Any(values) => values,
        }
    }
}

/// A value of a scenario column as a spec writes it: a number or a name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SelectedValue {
    /// A number (`radix: 8`, `fault_rate: 0.1`).
    Number(f64),
    /// A name (`routing: duato`, `traffic: uniform`).
    Text(String),
}

impl SelectedValue {
    /// Whether the value (as JSON) of scenario column `column` is this value; a null cell of
    /// a field whose default rows leave null is its default's name (`fields::Field::null_is`).
    pub fn matches(&self, column: &str, value: &serde_json::Value) -> bool {
        match self {
            SelectedValue::Number(number) => value.as_f64() == Some(*number),
            SelectedValue::Text(text) if value.is_null() => {
                crate::scenario::fields::null_is(column).is_some_and(|name| name == text)
            }
            SelectedValue::Text(text) => value.as_str() == Some(text.as_str()),
        }
    }
}

impl std::fmt::Display for SelectedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectedValue::Number(number) => write!(f, "{number}"),
            SelectedValue::Text(text) => f.write_str(text),
        }
    }
}

/// What a figure draws (`FigureSpec::kind`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// `y` against `x`: model lines, simulation markers.
    #[default]
    Lines,
    /// The distribution of a latency at selected points (`histograms.parquet`).
    Histogram,
    /// Per-link utilisation at selected points (`links.parquet`).
    LinkHeatmap,
}

impl FigureKind {
    /// Whether this is the default kind (left out when a spec is written back).
    pub fn is_lines(&self) -> bool {
        *self == FigureKind::Lines
    }
}

/// Which simulated points a `histogram` or `link_heatmap` figure draws.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PointSelector {
    /// `highest_stable` or `all`.
    Named(PointName),
    /// Per scenario, the simulated point whose rate is nearest this (messages/node/cycle).
    Rate(f64),
}

/// The named point selections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PointName {
    /// Per scenario, the highest load whose simulation is `ok`.
    HighestStable,
    /// Every simulated point.
    All,
}

/// The width of a figure, as journals set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FigureWidth {
    /// One column of a two-column page: 3.5 in, one panel per row.
    Column,
    /// The whole text width of a two-column page: 7.16 in, two panels per row.
    Page,
}

/// The longest axis label, legend title or figure title a spec may give, in characters.
pub const MAX_LABEL_CHARS: usize = 200;

impl Default for FigureSpec {
    fn default() -> FigureSpec {
        FigureSpec {
            kind: FigureKind::Lines,
            point: None,
            select: None,
            x: default_x(),
            y: default_y(),
            panels: Vec::new(),
            lines: Vec::new(),
            log_x: false,
            log_y: false,
            xlim: None,
            ylim: None,
            shared_y: false,
            y_from_zero: None,
            width: None,
            max_panels_per_page: None,
            x_label: None,
            y_label: None,
            legend_title: None,
            title: None,
        }
    }
}

impl FigureSpec {
    /// Whether the figure draws a scenario, given its scenario columns as a JSON object (by
    /// `select`; every scenario when there is none).
    pub fn selects(&self, scenario: &serde_json::Value) -> bool {
        self.select.as_ref().is_none_or(|select| {
            select.value.iter().all(|(column, selection)| {
                selection
                    .values()
                    .iter()
                    .any(|value| value.matches(column, &scenario[column.as_str()]))
            })
        })
    }

    /// The problems with the axis limits, the page limit and the labels of figure `number`,
    /// each located at the offending value.
    pub fn check_fields(&self, number: usize) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        let mut problem = |location: Location, message: String, help: &str| {
            problems.push(Diagnostic {
                message: format!("report figure {number}: {message}"),
                location: Some(location),
                help: Some(help.to_owned()),
            });
        };
        for (name, limits, log) in
            [("xlim", &self.xlim, self.log_x), ("ylim", &self.ylim, self.log_y)]
        {
            let Some(limits) = limits else { continue };
            let [low, high] = limits.value;
            let help = "write `[low, high]` with finite numbers, low below high; `null` for an automatic end";
            if [low, high].iter().flatten().any(|value| !value.is_finite()) {
                problem(
                    limits.referenced,
                    format!("`{name}` must be finite numbers or null"),
                    help,
                );
            } else if let (Some(low), Some(high)) = (low, high)
                && low >= high
            {
                problem(
                    limits.referenced,
                    format!(
                        "`{name}: [{low}, {high}]` is empty; the low end must be below the high end"
                    ),
                    help,
                );
            } else if log && [low, high].iter().flatten().any(|value| *value <= 0.0) {
                let axis = &name[..1];
                problem(
                    limits.referenced,
                    format!("`{name}` of a logarithmic axis (`log_{axis}: true`) must be positive"),
                    "give positive limits, null for automatic, or drop the logarithmic axis",
                );
            } else if let (Some(low), Some(high)) = (low, high)
                && !span_is_meaningful(low, high, log)
            {
                // `{:?}` writes 1e-323 as such, not as 323 decimal places.
                let needs = if log {
                    format!(
                        "the low end must be at least {MIN_SPAN:e} and the high end above it by a factor of at least 1 + {MIN_RELATIVE_SPAN:e}"
                    )
                } else {
                    format!(
                        "the span must be at least {MIN_SPAN:e} and {MIN_RELATIVE_SPAN:e} of the larger end, and finite"
                    )
                };
                problem(
                    limits.referenced,
                    format!(
                        "`{name}: [{low:?}, {high:?}]` spans too little to draw an axis: {needs}"
                    ),
                    "widen the limits, or give `null` for an automatic end",
                );
            }
        }
        if let Some(select) = &self.select {
            let names: Vec<&str> = crate::scenario::fields::columns().map(|f| f.name).collect();
            for column in select.value.keys() {
                if !names.contains(&column.as_str()) {
                    let help = match crate::suggest::did_you_mean(column, names.iter().copied()) {
                        Some(name) => format!("did you mean `{name}`?"),
                        None => format!("select by a scenario column: {}", names.join(", ")),
                    };
                    problem(
                        select.referenced,
                        format!("`select` names `{column}`, which is not a scenario column"),
                        &help,
                    );
                }
            }
            if select.value.values().any(|selection| selection.values().is_empty()) {
                problem(
                    select.referenced,
                    "`select` gives a column an empty list of values".to_owned(),
                    "give at least one value per column, or leave the column out",
                );
            }
        }
        if let Some(limit) = &self.max_panels_per_page
            && limit.value == 0
        {
            problem(
                limit.referenced,
                "`max_panels_per_page` must be at least 1".to_owned(),
                "give the most panels a page may hold, or leave it out for as many as fit in 10 in",
            );
        }
        for (name, label) in [
            ("x_label", &self.x_label),
            ("y_label", &self.y_label),
            ("legend_title", &self.legend_title),
        ] {
            let Some(label) = label else { continue };
            let chars = label.value.chars().count();
            if label.value.trim().is_empty() || chars > MAX_LABEL_CHARS {
                problem(
                    label.referenced,
                    format!(
                        "`{name}` must be 1 to {MAX_LABEL_CHARS} characters of text (found {chars})"
                    ),
                    "write a short label, or leave the field out for the default",
                );
            }
        }
        problems
    }
}

/// The tables a report can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    /// Model-vs-simulation agreement per scenario and load band: bias, mean and max |error|,
    /// one-sided instability. With external methods, every method against each simulation
    /// after it (model, external models, simulation, external simulations).
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
    /// Whether the simulation's 95% intervals cover: from the replication rows, per scenario
    /// (and load point, with more than two replications) and estimate (latency, throughput,
    /// latency p99), the leave-one-out coverage with its exact binomial interval, the observed
    /// over the implied standard deviation, and the pairs of replications whose intervals do
    /// not overlap.
    Coverage,
}

fn default_x() -> String {
    "rate".into()
}

fn default_y() -> String {
    "latency".into()
}

fn default_figures() -> Vec<FigureSpec> {
    vec![FigureSpec::default()]
}

fn default_tables() -> Vec<TableKind> {
    vec![TableKind::ModelVsSimulation, TableKind::Results]
}
