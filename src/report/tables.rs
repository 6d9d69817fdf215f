//! Tables: the agreement and results tables as CSV, LaTeX (booktabs) and Markdown.
//!
//! A [`Table`] holds display cells; each format renders it with its own escaping (LaTeX
//! specials, Markdown pipes and markup, CSV quoting). The HTML page renders the same
//! [`Table`] through its template. CSV files carry raw, unrounded values for further
//! analysis; the results CSV has every column of every row, including per-replication rows.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::agreement::{Agreement, LIGHT_LOAD_LIMIT};
use super::columns::{self, COLUMNS, format_number};
use crate::store::row::Row;

/// A table of display cells.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Table {
    /// Column headers.
    pub(crate) columns: Vec<Column>,
    /// Rows of cells, one per column.
    pub(crate) rows: Vec<Vec<Cell>>,
    /// Column groups for a two-level LaTeX header: (span, LaTeX text); empty for none.
    #[serde(skip)]
    pub(crate) tex_groups: Vec<(usize, String)>,
    /// Shown instead of the rows when there are none, or below them.
    pub(crate) note: Option<String>,
}

/// One column header.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Column {
    /// Plain-text header (HTML, Markdown).
    pub(crate) header: String,
    /// LaTeX header (already LaTeX, not escaped again).
    #[serde(skip)]
    pub(crate) tex: String,
    /// Whether the column is numeric (right-aligned, sorted numerically).
    pub(crate) numeric: bool,
}

/// One display cell.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Cell {
    /// Display text (plain; each format escapes it).
    pub(crate) text: String,
    /// Numeric value for sorting, when the cell is a number.
    pub(crate) sort: Option<f64>,
}

impl Cell {
    pub(super) fn text(text: impl Into<String>) -> Self {
        Cell { text: text.into(), sort: None }
    }

    pub(super) fn number(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => Cell { text: format_number(value), sort: Some(value) },
            None => Cell::missing(),
        }
    }

    fn percent(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => Cell { text: format!("{:.1}%", 100.0 * value), sort: Some(value) },
            None => Cell::missing(),
        }
    }

    /// A percentage with its sign always shown (`+4.2%`, `\u{2212}3.1%`).
    fn signed_percent(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => {
                let text = format!("{:+.1}%", 100.0 * value).replace('-', "\u{2212}");
                Cell { text, sort: Some(value) }
            }
            None => Cell::missing(),
        }
    }

    pub(super) fn count(value: usize) -> Self {
        Cell { text: value.to_string(), sort: Some(value as f64) }
    }

    fn missing() -> Self {
        Cell { text: String::new(), sort: None }
    }
}

/// The agreement table for display: one row per scenario and load band with matched points
/// (and the overall rows), no hash ids. The signed bias shows which way the model errs.
pub(crate) fn agreement_table(agreement: &Agreement) -> Table {
    let limit = format!("{:.0}%", 100.0 * LIGHT_LOAD_LIMIT);
    let columns = vec![
        column("Scenario", "Scenario", false),
        column("Load", "Load", false),
        column("Points", "$n$", true),
        column("Bias", "Bias", true),
        column("Mean |error|", "Mean $|e|$", true),
        column("Max |error|", "Max $|e|$", true),
        column("Sim. unstable", "Sim.\\ unst.", true),
        column("Model unstable", "Model unst.", true),
        column("Not compared", "Not comp.", true),
    ];
    let bands = [(format!("\u{2264} {limit}"), false), (format!("> {limit}"), true)];
    let mut rows = Vec::new();
    for scenario in agreement.scenarios.iter().chain(&agreement.overall) {
        let mut first = true;
        for (band, near) in &bands {
            let stats = if *near { &scenario.near } else { &scenario.light };
            if stats.matched() == 0 {
                continue;
            }
            rows.push(vec![
                Cell::text(if first { scenario.label.as_str() } else { "" }),
                Cell::text(band),
                Cell::count(stats.points),
                Cell::signed_percent(stats.bias),
                Cell::percent(stats.mean),
                Cell::percent(stats.max),
                Cell::count(stats.simulation_unstable),
                Cell::count(stats.model_unstable),
                Cell::count(stats.not_compared),
            ]);
            first = false;
        }
    }
    Table {
        columns,
        rows,
        tex_groups: Vec::new(),
        note: Some(agreement.empty_reason.clone().unwrap_or_else(|| {
            let mut note = format!(
                "Relative latency error (model \u{2212} simulation) / simulation over the loads \
                 where both are finite, at light and moderate load (up to {limit} of the \
                 saturation rate) and near saturation. Bias: the mean signed error; positive where \
                 the model predicts higher latencies than the simulation (pessimistic), negative \
                 where lower (optimistic). Sim. unstable: the simulation saturated or deadlocked \
                 where the model is finite; model unstable: the model saturated where the \
                 simulation is stable; not compared: both unstable, a failed task, or a \
                 simulation short of its target precision. Load is a fraction of the saturation \
                 rate."
            );
            if let Some(common) = agreement.common.as_deref().filter(|common| !common.is_empty()) {
                note.push_str(&format!(" All scenarios: {common}."));
            }
            for assumption in &agreement.assumption_notes {
                note.push(' ');
                note.push_str(assumption);
            }
            note
        })),
    }
}

/// One load point of one scenario: the model row and the aggregate simulation row at that
/// rate (either may be missing), in the order of the rows.
struct LoadPoint<'a> {
    /// The first row of the point (for its scenario columns and rate).
    first: &'a Row,
    model: Option<&'a Row>,
    simulation: Option<&'a Row>,
}

impl LoadPoint<'_> {
    /// The row that stands for the point's scenario and rate.
    fn row(&self) -> &Row {
        self.first
    }
}

/// The model and aggregate simulation rows paired by scenario and rate, in row order.
fn load_points(rows: &[Row]) -> Vec<LoadPoint<'_>> {
    let mut points: Vec<LoadPoint<'_>> = Vec::new();
    for row in rows {
        let model = row.method == "model";
        let aggregate = row.method == "simulation" && row.replication.is_none();
        if !(model || aggregate) {
            continue;
        }
        let existing = points.iter_mut().find(|point| {
            let other = point.row();
            other.scenario_id == row.scenario_id
                && super::agreement::same_rate(other.rate, row.rate)
                && if model { point.model.is_none() } else { point.simulation.is_none() }
        });
        match (existing, model) {
            (Some(point), true) => point.model = Some(row),
            (Some(point), false) => point.simulation = Some(row),
            (None, true) => {
                points.push(LoadPoint { first: row, model: Some(row), simulation: None });
            }
            (None, false) => {
                points.push(LoadPoint { first: row, model: None, simulation: Some(row) });
            }
        }
    }
    points
}

/// What a load point's status column says: `ok`, or which side is not.
fn point_status(point: &LoadPoint<'_>) -> String {
    let mut parts = Vec::new();
    if let Some(model) = point.model.filter(|row| row.status != "ok") {
        parts.push(format!("model {}", model.status));
    }
    if let Some(simulation) = point.simulation.filter(|row| row.status != "ok") {
        parts.push(format!("simulation {}", simulation.status));
    }
    if parts.is_empty() { "ok".to_owned() } else { parts.join(", ") }
}

/// The signed relative latency error of a point, when both sides were compared.
fn point_error(point: &LoadPoint<'_>) -> Option<f64> {
    match super::agreement::compare(point.model?, point.simulation?) {
        super::agreement::Comparison::Error(error) => Some(error),
        _ => None,
    }
}

/// The per-load comparison table: for every scenario and rate, the model latency, the
/// simulated mean with its 95% interval, the signed error and the status, side by side; one
/// row per (model row, aggregate simulation row) pair of `results.parquet`.
pub(crate) fn comparison_table(rows: &[Row]) -> Table {
    let points = load_points(rows);
    let json: Vec<Value> = points.iter().map(|point| columns::to_json(point.row())).collect();
    let (constant, varying) = columns::constant_and_varying(&json);
    let has_load = points.iter().any(|point| point.row().fraction_of_saturation.is_some());
    let mut table_columns = scenario_columns(&varying);
    table_columns.push(column("Rate (msg/node/cycle)", "Rate", true));
    if has_load {
        table_columns.push(column("Load (fraction of sat.)", "Load", true));
    }
    table_columns.push(column("Model (cycles)", "Model", true));
    table_columns.push(column("Simulation (cycles)", "Sim.", true));
    table_columns.push(column("95% CI (\u{b1} cycles)", "CI95 ($\\pm$)", true));
    table_columns.push(column("Error", "Error", true));
    table_columns.push(column("Status", "Status", false));
    let table_rows = points
        .iter()
        .zip(&json)
        .map(|(point, row_json)| {
            let mut cells = Vec::new();
            for name in &varying {
                cells.push(match columns::kind(name) {
                    Some(columns::Kind::Number) => Cell::number(columns::number(row_json, name)),
                    _ => Cell::text(columns::text(row_json, name).unwrap_or_default()),
                });
            }
            let row = point.row();
            cells.push(Cell::number(Some(row.rate)));
            if has_load {
                cells.push(Cell::number(
                    point
                        .model
                        .and_then(|m| m.fraction_of_saturation)
                        .or(row.fraction_of_saturation),
                ));
            }
            cells.push(Cell::number(point.model.and_then(columns::comparable_model_latency)));
            cells.push(Cell::number(point.simulation.and_then(|s| s.latency)));
            cells.push(Cell::number(point.simulation.and_then(|s| s.latency_ci95)));
            cells.push(Cell::signed_percent(point_error(point)));
            cells.push(Cell::text(point_status(point)));
            cells
        })
        .collect();
    let mut note = String::from(
        "Mean latency per load point: the model, and the simulation's mean over replications \
         with its 95% confidence half-width. Error: (model \u{2212} simulation) / simulation, \
         where both are stable; positive where the model is pessimistic.",
    );
    let common = json.first().map(|first| columns::describe(first, &constant)).unwrap_or_default();
    if !common.is_empty() {
        note.push_str(&format!(" All rows: {common}."));
    }
    if points.is_empty() {
        note = "No model or simulation results.".to_owned();
    }
    Table { columns: table_columns, rows: table_rows, tex_groups: Vec::new(), note: Some(note) }
}

/// The per-load comparison as CSV, unrounded, with the scenario id for joins.
pub(crate) fn comparison_csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "scenario_id,scenario,rate,fraction_of_saturation,model_latency,model_status,\
         simulation_latency,simulation_latency_ci95,simulation_replications,simulation_status,\
         signed_relative_error\n",
    );
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    for point in load_points(rows) {
        let row = point.row();
        let json = columns::to_json(row);
        let fields = [
            csv_field(&row.scenario_id),
            csv_field(&columns::describe(&json, columns::DESCRIBE_COLUMNS)),
            row.rate.to_string(),
            number(
                point.model.and_then(|m| m.fraction_of_saturation).or(row.fraction_of_saturation),
            ),
            number(point.model.and_then(columns::comparable_model_latency)),
            point.model.map(|m| m.status.clone()).unwrap_or_default(),
            number(point.simulation.and_then(|s| s.latency)),
            number(point.simulation.and_then(|s| s.latency_ci95)),
            number(point.simulation.and_then(|s| s.replications).map(f64::from)),
            point.simulation.map(|s| s.status.clone()).unwrap_or_default(),
            number(point_error(&point)),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// The results table for display: model rows and aggregate simulation rows.
///
/// Scenario columns appear only when they vary; the values shared by all rows go in the note.
/// Load, throughput and note columns appear only when some row has a value.
pub(crate) fn results_table(rows: &[Row]) -> Table {
    let shown_rows = || rows.iter().filter(|row| row.replication.is_none());
    let (constant, varying, first) = columns::constant_and_varying_rows(shown_rows());
    let total = shown_rows().count();
    // Only the rows the pages show are turned into cells (see `bound`).
    let shown: Vec<&Row> = shown_rows().take(MAX_TABLE_ROWS).collect();
    let json: Vec<Value> = shown.iter().map(|row| columns::to_json(row)).collect();
    let has_load = shown_rows().any(|row| row.fraction_of_saturation.is_some());
    let has_throughput = shown_rows().any(|row| row.throughput.is_some());
    let has_note = shown.iter().any(|row| row.error.is_some());

    let mut table_columns =
        vec![column("Method", "Method", false), column("Scenario", "Scenario", false)];
    table_columns.extend(scenario_columns(&varying));
    table_columns.push(column("Rate (msg/node/cycle)", "Rate", true));
    if has_load {
        table_columns.push(column("Load (fraction of sat.)", "Load", true));
    }
    table_columns.push(column("Latency (cycles)", "Latency", true));
    table_columns.push(column("95% CI (\u{b1} cycles)", "CI95 ($\\pm$)", true));
    if has_throughput {
        table_columns.push(column("Throughput", "Throughput", true));
    }
    table_columns.push(column("Reps", "Reps", true));
    table_columns.push(column("Status", "Status", false));
    if has_note {
        table_columns.push(column("Note", "Note", false));
    }

    let table_rows = shown
        .iter()
        .zip(&json)
        .map(|(row, row_json)| {
            let mut cells = vec![Cell::text(&row.method), Cell::text(&row.scenario_id)];
            for name in &varying {
                cells.push(match columns::kind(name) {
                    Some(columns::Kind::Number) => Cell::number(columns::number(row_json, name)),
                    _ => Cell::text(columns::text(row_json, name).unwrap_or_default()),
                });
            }
            cells.push(Cell::number(Some(row.rate)));
            if has_load {
                cells.push(Cell::number(row.fraction_of_saturation));
            }
            cells.push(Cell::number(row.latency));
            cells.push(Cell::number(row.latency_ci95));
            if has_throughput {
                cells.push(Cell::number(row.throughput));
            }
            cells.push(Cell::number(row.replications.map(f64::from)));
            cells.push(Cell::text(&row.status));
            if has_note {
                cells.push(Cell::text(row.error.as_deref().map(shorten).unwrap_or_default()));
            }
            cells
        })
        .collect();
    let mut note = String::from(
        "Model rows and simulation means over replications; per-replication rows are in \
         tables/results.csv and results.parquet.",
    );
    let common = first.map(|first| columns::describe(&first, &constant)).unwrap_or_default();
    if !common.is_empty() {
        note.push_str(&format!(" All rows: {common}."));
    }
    if total > shown.len() {
        note.push_str(&left_out(shown.len(), total, "results"));
    }
    Table { columns: table_columns, rows: table_rows, tex_groups: Vec::new(), note: Some(note) }
}

/// The most rows a table shows in the HTML page, Markdown and LaTeX; the CSV (and
/// `results.parquet`) hold them all. A page of 1,000 rows is already more than anyone reads,
/// and 100,000 made a 35 MB `index.html`.
pub(crate) const MAX_TABLE_ROWS: usize = 1_000;

/// The sentence saying how many rows a table leaves out and where they are.
fn left_out(shown: usize, total: usize, stem: &str) -> String {
    let all = if stem == "results" {
        "tables/results.csv and results.parquet".to_owned()
    } else {
        format!("tables/{stem}.csv")
    };
    format!(" Showing the first {shown} of {total} rows; all {total} are in {all}.")
}

/// Cuts `table` to [`MAX_TABLE_ROWS`] rows, saying so in its note.
pub(crate) fn bound(table: &mut Table, stem: &str) {
    let total = table.rows.len();
    if total > MAX_TABLE_ROWS {
        table.rows.truncate(MAX_TABLE_ROWS);
        let sentence = left_out(MAX_TABLE_ROWS, total, stem);
        match &mut table.note {
            Some(note) => note.push_str(&sentence),
            None => table.note = Some(sentence.trim_start().to_owned()),
        }
    }
}

/// Every column of every row as CSV, unrounded, written row by row.
pub(crate) fn write_results_csv(rows: &[Row], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let header = COLUMNS.iter().map(|(name, _)| csv_field(name)).collect::<Vec<_>>().join(",");
    writeln!(out, "{header}")?;
    for row in rows {
        let json = columns::to_json(row);
        let fields: Vec<String> = COLUMNS
            .iter()
            .map(|(name, _)| match json.get(*name) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => csv_field(text),
                Some(other) => csv_field(&other.to_string()),
            })
            .collect();
        writeln!(out, "{}", strip_invisible(fields.join(",")))?;
    }
    Ok(())
}

/// The agreement table as CSV with raw fractions, one row per scenario and load band (the
/// overall rows have an empty `scenario_id`).
pub(crate) fn agreement_csv(agreement: &Agreement) -> String {
    let mut out = String::from(
        "scenario_id,scenario,load_band,points,bias,mean_abs_relative_error,\
         max_abs_relative_error,simulation_unstable,model_unstable,not_compared\n",
    );
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    for scenario in agreement.scenarios.iter().chain(&agreement.overall) {
        for (band, stats) in [("light", &scenario.light), ("near_saturation", &scenario.near)] {
            let fields = [
                csv_field(&scenario.scenario_id),
                csv_field(&scenario.label),
                band.to_owned(),
                stats.points.to_string(),
                number(stats.bias),
                number(stats.mean),
                number(stats.max),
                stats.simulation_unstable.to_string(),
                stats.model_unstable.to_string(),
                stats.not_compared.to_string(),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

/// The table as a booktabs `tabular` for `\input`.
pub(crate) fn to_tex(table: &Table, source: &str) -> String {
    let mut out = String::new();
    let spec: String = table.columns.iter().map(|c| if c.numeric { 'r' } else { 'l' }).collect();
    let _ = writeln!(
        out,
        "% {} -- generated by runner; needs \\usepackage{{booktabs}}.",
        tex_comment(source)
    );
    if let Some(note) = table.note.as_deref().filter(|_| !table.rows.is_empty()) {
        // Where the rows a bounded table leaves out are, among the rest.
        let _ = writeln!(out, "% {}", tex_comment(note));
    }
    let _ = writeln!(out, "\\begin{{tabular}}{{{spec}}}");
    out.push_str("\\toprule\n");
    if !table.tex_groups.is_empty() {
        let mut cells = Vec::new();
        let mut rules = Vec::new();
        let mut start = 1;
        for (span, text) in &table.tex_groups {
            if text.is_empty() {
                cells.extend(std::iter::repeat_n(String::new(), *span));
            } else {
                cells.push(format!("\\multicolumn{{{span}}}{{c}}{{{text}}}"));
                rules.push(format!("\\cmidrule(lr){{{start}-{}}}", start + span - 1));
            }
            start += span;
        }
        let _ = writeln!(out, "{} \\\\", cells.join(" & "));
        let _ = writeln!(out, "{}", rules.join(" "));
    }
    let headers: Vec<&str> = table.columns.iter().map(|column| column.tex.as_str()).collect();
    let _ = writeln!(out, "{} \\\\", headers.join(" & "));
    out.push_str("\\midrule\n");
    if table.rows.is_empty() {
        let note = table.note.as_deref().unwrap_or("No rows.");
        let _ = writeln!(
            out,
            "\\multicolumn{{{}}}{{l}}{{{}}} \\\\",
            table.columns.len(),
            tex_escape(note)
        );
    }
    for row in &table.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|cell| if cell.text.is_empty() { "--".to_owned() } else { tex_escape(&cell.text) })
            .collect();
        let _ = writeln!(out, "{} \\\\", cells.join(" & "));
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n");
    out
}

/// The table as GitHub-flavoured Markdown (note as a paragraph below).
pub(crate) fn to_markdown(table: &Table) -> String {
    let mut out = String::new();
    if table.rows.is_empty() {
        if let Some(note) = &table.note {
            let _ = writeln!(out, "{}", md_escape(note));
        }
        return out;
    }
    let headers: Vec<String> =
        table.columns.iter().map(|column| md_escape(&column.header)).collect();
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let rules: Vec<&str> =
        table.columns.iter().map(|column| if column.numeric { "---:" } else { ":---" }).collect();
    let _ = writeln!(out, "| {} |", rules.join(" | "));
    for row in &table.rows {
        let cells: Vec<String> =
            row.iter()
                .map(|cell| {
                    if cell.text.is_empty() { "\u{2013}".to_owned() } else { md_escape(&cell.text) }
                })
                .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if let Some(note) = &table.note {
        let _ = writeln!(out, "\n{}", md_escape(note));
    }
    out
}

/// Escapes LaTeX special characters in text.
pub(crate) fn tex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            '|' => out.push_str("\\textbar{}"),
            '\u{2264}' => out.push_str("$\\le$"),
            '\u{2212}' => out.push_str("$-$"),
            '\u{b1}' => out.push_str("$\\pm$"),
            '\n' | '\r' => out.push(' '),
            _ if is_invisible_format(c) => {}
            _ => out.push(c),
        }
    }
    out
}

/// Escapes text for a Markdown paragraph or table cell (inline markup, pipes, HTML).
pub(crate) fn md_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            // `$` starts inline math in GitHub's and most renderers' Markdown.
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '$' => {
                out.push('\\');
                out.push(c);
            }
            // Backslash escapes, not entities, so the raw file reads as it renders (`(> 10%)`,
            // not `(&gt; 10%)`); `>` matters only where a line starts (a block quote).
            '<' | '&' => {
                out.push('\\');
                out.push(c);
            }
            '>' if out.is_empty() => out.push_str("\\>"),
            '\n' | '\r' => out.push(' '),
            _ if is_invisible_format(c) => {}
            _ => out.push(c),
        }
    }
    out
}

/// Whether `c` is a bidirectional control (U+202A-U+202E, U+2066-U+2069, the marks U+200E,
/// U+200F and U+061C) or another invisible format character (zero-width space, word joiner,
/// invisible operators, byte-order mark, interlinear annotation, tag characters, soft
/// hyphen): text that reorders or hides what a reader sees. The zero-width (non-)joiners
/// U+200C and U+200D stay: scripts and emoji need them and they reorder nothing.
pub(crate) fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// `text` without [`is_invisible_format`] characters: every page, figure and table goes
/// through this before it is written, so user text (titles, labels, captions, cells) cannot
/// reorder or hide what a reader of the HTML, Markdown, LaTeX or SVG sees.
pub(crate) fn strip_invisible(text: String) -> String {
    if text.chars().any(is_invisible_format) {
        text.chars().filter(|&c| !is_invisible_format(c)).collect()
    } else {
        text
    }
}

/// The header columns of the scenario fields that vary (symbols for numbers).
fn scenario_columns(varying: &[&str]) -> Vec<Column> {
    varying
        .iter()
        .map(|name| {
            let numeric = columns::kind(name) == Some(columns::Kind::Number);
            let header = if numeric { columns::symbol(name) } else { capitalize(name) };
            column(&header, &tex_symbol(name, &header), numeric)
        })
        .collect()
}

pub(super) fn column(header: &str, tex: &str, numeric: bool) -> Column {
    Column { header: header.to_owned(), tex: tex.to_owned(), numeric }
}

/// LaTeX header for a scenario column: math for symbols, escaped text otherwise.
fn tex_symbol(name: &str, header: &str) -> String {
    match name {
        "fault_rate" => "$\\theta$".to_owned(),
        "broadcast_fraction" => "$\\beta$".to_owned(),
        "startup_latency" => "$\\Delta$".to_owned(),
        _ if header.len() <= 2 && header.chars().all(|c| c.is_ascii_alphanumeric()) => {
            format!("${header}$")
        }
        _ => tex_escape(header),
    }
}

fn capitalize(name: &str) -> String {
    let text = name.replace('_', " ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(super) fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

fn tex_comment(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn shorten(text: &str) -> String {
    const LIMIT: usize = 80;
    let single_line = text.replace(['\n', '\r'], " ");
    if single_line.chars().count() <= LIMIT {
        single_line
    } else {
        let mut short: String = single_line.chars().take(LIMIT - 1).collect();
        short.push('\u{2026}');
        short
    }
}
