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
use super::headers;
use crate::store::row::Row;

/// A table of display cells.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Table {
    /// Column headers.
    pub(crate) columns: Vec<Column>,
    /// Rows of cells, one per column.
    pub(crate) rows: Vec<Vec<Cell>>,
    /// Shown instead of the rows when there are none, or below them.
    pub(crate) note: Option<String>,
    /// How many leading columns name the scenario (its fields that vary). The LaTeX leaves a
    /// value that repeats the row above blank and puts a little space between scenarios.
    #[serde(skip)]
    pub(crate) scenario_columns: usize,
    /// How many leading columns the LaTeX leaves blank where they repeat the row above (at
    /// least the scenario columns; the results table adds the rate and load).
    #[serde(skip)]
    pub(crate) repeat_columns: usize,
    /// The rows from this index on are summary rows (`All scenarios`): the page puts them in
    /// the table's foot, out of the sorting, and the LaTeX sets them off with a rule.
    pub(crate) summary_from: Option<usize>,
}

impl Table {
    pub(super) fn new(columns: Vec<Column>, rows: Vec<Vec<Cell>>, note: String) -> Table {
        Table { columns, rows, note: Some(note), ..Table::default() }
    }

    /// Leaves out the columns past the scenario columns where every row misses its value.
    pub(super) fn drop_empty_columns(&mut self) {
        if self.rows.is_empty() {
            return;
        }
        let keep: Vec<bool> = (0..self.columns.len())
            .map(|i| {
                i < self.scenario_columns.max(self.repeat_columns)
                    || self.rows.iter().any(|row| row.get(i).is_some_and(|c| !c.text.is_empty()))
            })
            .collect();
        let mut index = 0;
        self.columns.retain(|_| {
            index += 1;
            keep[index - 1]
        });
        for row in &mut self.rows {
            let mut index = 0;
            row.retain(|_| {
                index += 1;
                keep[index - 1]
            });
        }
    }
}

/// One column header (see `headers.rs`, the one place that names them).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Column {
    /// Plain-text header with the unit (HTML, Markdown).
    pub(crate) header: String,
    /// LaTeX header, first line (already LaTeX, not escaped again).
    #[serde(skip)]
    pub(crate) tex: String,
    /// LaTeX header, second line (the unit), or empty.
    #[serde(skip)]
    pub(crate) tex_second: String,
    /// Whether the column is numeric (right-aligned, sorted numerically).
    pub(crate) numeric: bool,
    /// Whether the LaTeX table shows the column: the paper-facing LaTeX keeps the columns a
    /// paper shows; the page, the Markdown and the CSV keep the rest.
    #[serde(skip)]
    pub(crate) in_tex: bool,
}

/// One display cell.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Cell {
    /// Display text (plain; each format escapes it).
    pub(crate) text: String,
    /// Numeric value for sorting, when the cell is a number.
    pub(crate) sort: Option<f64>,
    /// Left empty on purpose (a summary row's scenario fields), as opposed to a missing value,
    /// which shows as a dash.
    pub(crate) blank: bool,
}

impl Cell {
    pub(super) fn text(text: impl Into<String>) -> Self {
        Cell { text: text.into(), sort: None, blank: false }
    }

    pub(super) fn number(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => Cell { text: format_number(value), sort: Some(value), blank: false },
            None => Cell::missing(),
        }
    }

    /// A fraction shown as a percentage without the sign (the header says `(%)`).
    fn percent(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => {
                Cell { text: format!("{:.1}", 100.0 * value), sort: Some(value), blank: false }
            }
            None => Cell::missing(),
        }
    }

    /// A fraction as a percentage with its sign always shown (`+4.2`, `\u{2212}3.1`).
    fn signed_percent(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => {
                let text = format!("{:+.1}", 100.0 * value).replace('-', "\u{2212}");
                Cell { text, sort: Some(value), blank: false }
            }
            None => Cell::missing(),
        }
    }

    /// A mean with its 95% confidence half-width, `42.1 \u{b1} 4.5`: the half-width to two
    /// significant digits and the mean to the same decimal place; the mean alone without a
    /// half-width. Sorts by the mean.
    fn with_interval(mean: Option<f64>, half_width: Option<f64>) -> Self {
        let Some(mean) = mean.filter(|mean| mean.is_finite()) else { return Cell::missing() };
        let Some(half_width) = half_width.filter(|half| half.is_finite() && *half >= 0.0) else {
            return Cell::number(Some(mean));
        };
        let decimals = if half_width > 0.0 {
            (1 - half_width.log10().floor() as i32).clamp(0, 6) as usize
        } else {
            0
        };
        let text = if half_width > 0.0 {
            format!("{mean:.decimals$} \u{b1} {half_width:.decimals$}")
        } else {
            format!("{} \u{b1} 0", format_number(mean))
        };
        Cell { text, sort: Some(mean), blank: false }
    }

    pub(super) fn count(value: usize) -> Self {
        Cell { text: value.to_string(), sort: Some(value as f64), blank: false }
    }

    fn missing() -> Self {
        Cell { text: String::new(), sort: None, blank: false }
    }

    fn blank() -> Self {
        Cell { text: String::new(), sort: None, blank: true }
    }
}

/// The scenario fields that tell the given scenarios apart (one JSON object per scenario, in
/// order), in display order: every scenario column whose value is not the same in all of them,
/// less those another shown field implies (the node count N where k or n varies, the second
/// moment of M where M varies, the dateline and tie break where they follow the routing).
pub(crate) fn varying_fields(scenarios: &[Value]) -> Vec<&'static str> {
    let varies = |name: &str| {
        let mut values = scenarios.iter().map(|json| columns::text(json, name));
        let first = values.next().flatten();
        values.any(|value| value != first)
    };
    let varying: Vec<&'static str> =
        columns::SCENARIO_COLUMNS.iter().copied().filter(|name| varies(name)).collect();
    let shown = |name: &str| varying.contains(&name);
    // Whether each routing has one value of `name` (its default for that routing).
    let follows_routing = |name: &str| {
        let mut seen: Vec<(Option<String>, Option<String>)> = Vec::new();
        scenarios.iter().all(|json| {
            let (routing, value) = (columns::text(json, "routing"), columns::text(json, name));
            match seen.iter().find(|(known, _)| *known == routing) {
                Some((_, known)) => *known == value,
                None => {
                    seen.push((routing, value));
                    true
                }
            }
        })
    };
    varying
        .iter()
        .copied()
        .filter(|name| match *name {
            "nodes" => !(shown("radix") || shown("dimensions")),
            "message_length_second_moment" => !shown("message_length"),
            "dateline" | "tie_break" => !(shown("routing") && follows_routing(name)),
            _ => true,
        })
        .collect()
}

/// The first row of every scenario, in the order the scenarios first appear.
fn scenario_firsts<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<&'a Row> {
    let mut seen = std::collections::HashSet::new();
    rows.into_iter().filter(|row| seen.insert(row.scenario_id.as_str())).collect()
}

/// The header columns of the scenario fields `fields`.
fn field_columns(fields: &[&str]) -> Vec<Column> {
    fields
        .iter()
        .map(|name| headers::column(name, columns::kind(name) == Some(columns::Kind::Number)))
        .collect()
}

/// The cells of the scenario fields `fields` of a row.
fn field_cells(row_json: &Value, fields: &[&str]) -> Vec<Cell> {
    fields
        .iter()
        .map(|name| match columns::kind(name) {
            Some(columns::Kind::Number) => Cell::number(columns::number(row_json, name)),
            _ => Cell::text(columns::text(row_json, name).unwrap_or_default()),
        })
        .collect()
}

/// What the rows share, in words (`torus, k = 8, n = 2, wormhole`), from the first row:
/// the described fields less those shown as columns.
fn shared_description(first: Option<&Row>, shown: &[&str]) -> String {
    let constant: Vec<&str> =
        columns::DESCRIBE_COLUMNS.iter().copied().filter(|name| !shown.contains(name)).collect();
    first.map(|first| columns::describe(&columns::to_json(first), &constant)).unwrap_or_default()
}

/// The agreement table for display: one row per scenario and load band with matched points,
/// the scenario named by its fields that vary (no hash ids), then the rows of all scenarios
/// together. The signed bias shows which way the model errs.
pub(crate) fn agreement_table(agreement: &Agreement) -> Table {
    let limit = format!("{:.0}%", 100.0 * LIGHT_LOAD_LIMIT);
    let scenario_json: Vec<Value> =
        agreement.scenarios.iter().map(|scenario| scenario.json.clone()).collect();
    let fields = varying_fields(&scenario_json);
    let paired = agreement.paired();
    // The scenarios of one pair (each pair compares the same scenarios).
    let first_pair = agreement.scenarios.first().map(|first| &first.pair);
    let scenarios =
        agreement.scenarios.iter().filter(|scenario| Some(&scenario.pair) == first_pair).count();
    // Scenarios told apart only by a field no table shows keep their described label.
    let labelled = fields.is_empty() && scenarios > 1;
    let mut table_columns = Vec::new();
    if paired {
        table_columns.push(headers::column("compared", false));
    }
    table_columns.extend(field_columns(&fields));
    if labelled {
        table_columns.push(headers::column("scenario", false));
    }
    let scenario_columns = table_columns.len();
    for (key, numeric) in [
        ("load_band", false),
        ("points", true),
        ("bias", true),
        ("mean_abs_error", true),
        ("max_abs_error", true),
        ("simulation_unstable", true),
        ("model_unstable", true),
        ("not_compared", true),
    ] {
        table_columns.push(headers::column(key, numeric));
    }
    let bands = [(format!("\u{2264} {limit}"), false), (format!("> {limit}"), true)];
    let mut rows = Vec::new();
    let mut summary_from = None;
    for (index, scenario) in agreement.scenarios.iter().chain(&agreement.overall).enumerate() {
        let overall = index >= agreement.scenarios.len();
        if overall && summary_from.is_none() {
            summary_from = Some(rows.len());
        }
        let mut first_band = true;
        for (band, near) in &bands {
            let stats = if *near { &scenario.near } else { &scenario.light };
            if stats.matched() == 0 {
                continue;
            }
            let mut cells = Vec::new();
            if paired {
                cells.push(Cell::text(scenario.pair.as_deref().unwrap_or_default()));
            }
            if overall {
                let mut blank = vec![Cell::blank(); scenario_columns - cells.len()];
                if let Some(label) = blank.first_mut().filter(|_| first_band) {
                    // One scenario column is as narrow as its values: `All` fits it.
                    *label = Cell::text(if scenario_columns > 1 { "All scenarios" } else { "All" });
                }
                cells.extend(blank);
            } else {
                cells.extend(field_cells(&scenario.json, &fields));
                if labelled {
                    cells.push(Cell::text(&scenario.label));
                }
            }
            first_band = false;
            cells.extend([
                Cell::text(band),
                Cell::count(stats.points),
                Cell::signed_percent(stats.bias),
                Cell::percent(stats.mean),
                Cell::percent(stats.max),
                Cell::count(stats.simulation_unstable),
                Cell::count(stats.model_unstable),
                Cell::count(stats.not_compared),
            ]);
            rows.push(cells);
        }
    }
    let note = agreement.empty_reason.clone().unwrap_or_else(|| {
        if paired || agreement.methods.is_some() {
            return methods_note(agreement, &limit, paired);
        }
        let mut note = format!(
            "Relative latency error (model \u{2212} simulation) / simulation in percent, over \
             the loads where both are finite, at light and moderate load (up to {limit} of the \
             saturation rate) and near saturation. Bias: the mean signed error; positive where \
             the model predicts higher latencies than the simulation (pessimistic), negative \
             where lower (optimistic). Sim. unstable: the simulation saturated or deadlocked \
             where the model is finite; model unstable: the model saturated where the \
             simulation is stable; not compared: both unstable, a failed task, or a \
             simulation short of its target precision."
        );
        let first = agreement.scenarios.first().map(|scenario| &scenario.json);
        let shared = first
            .map(|json| {
                let constant: Vec<&str> = columns::DESCRIBE_COLUMNS
                    .iter()
                    .copied()
                    .filter(|name| !fields.contains(name))
                    .collect();
                columns::describe(json, &constant)
            })
            .unwrap_or_default();
        if !shared.is_empty() {
            let whose = if agreement.scenarios.len() > 1 { "All scenarios" } else { "Scenario" };
            note.push_str(&format!(" {whose}: {shared}."));
        }
        for assumption in &agreement.assumption_notes {
            note.push(' ');
            note.push_str(assumption);
        }
        note
    });
    Table {
        summary_from: summary_from.filter(|from| *from < rows.len()),
        scenario_columns,
        ..Table::new(table_columns, rows, note)
    }
}

/// The agreement table's note when it compares methods other than (or besides) the built-in
/// model and simulation.
fn methods_note(agreement: &Agreement, limit: &str, paired: bool) -> String {
    let (what, compared, reference) = match (&agreement.methods, paired) {
        (Some((compared, reference)), false) => {
            (format!("{compared} against {reference}"), compared.as_str(), reference.as_str())
        }
        _ => (
            "each pair `A vs. B` of the run's methods: every method against each simulation \
             after it (model, external models, simulation, external simulations), B the \
             reference"
                .to_owned(),
            "A",
            "B",
        ),
    };
    let mut note = format!(
        "Agreement of {what}. Relative latency error ({compared} \u{2212} {reference}) / \
         {reference} in percent, over the loads where both are finite, at light and moderate \
         load (up to {limit} of the saturation rate) and near saturation. Bias: the mean signed \
         error; positive where {compared} gives higher latencies. Sim. unstable: {reference} \
         saturated or deadlocked where {compared} is finite; model unstable: {compared} \
         saturated where {reference} is stable; not compared: both unstable, a failed task, or \
         a simulation short of its target precision."
    );
    for assumption in &agreement.assumption_notes {
        note.push(' ');
        note.push_str(assumption);
    }
    note
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
///
/// An index by (scenario, rate) finds a row's point among its neighbours in rate, so a run of
/// many load points pairs in n log n steps, not n squared.
fn load_points(rows: &[Row]) -> Vec<LoadPoint<'_>> {
    let mut points: Vec<LoadPoint<'_>> = Vec::new();
    let mut index: std::collections::BTreeMap<(&str, i64), Vec<usize>> =
        std::collections::BTreeMap::new();
    for row in rows {
        let model = row.method == "model";
        let aggregate = row.method == "simulation" && row.replication.is_none();
        if !(model || aggregate) {
            continue;
        }
        let scenario = row.scenario_id.as_str();
        // `same_rate` allows a relative 1e-9; look a little wider and let it decide.
        let (low, high) = if row.rate.is_finite() {
            let margin = 2e-9 * row.rate.abs();
            (rate_key(row.rate - margin), rate_key(row.rate + margin))
        } else {
            (rate_key(row.rate), rate_key(row.rate))
        };
        let existing = index
            .range((scenario, low)..=(scenario, high))
            .flat_map(|(_, at)| at.iter().copied())
            .find(|&at| {
                let point = &points[at];
                super::agreement::same_rate(point.row().rate, row.rate)
                    && if model { point.model.is_none() } else { point.simulation.is_none() }
            });
        match existing {
            Some(at) if model => points[at].model = Some(row),
            Some(at) => points[at].simulation = Some(row),
            None => {
                index.entry((scenario, rate_key(row.rate))).or_default().push(points.len());
                points.push(LoadPoint {
                    first: row,
                    model: model.then_some(row),
                    simulation: (!model).then_some(row),
                });
            }
        }
    }
    points
}

/// A key that orders rates as numbers (the IEEE bits, negative values flipped).
fn rate_key(rate: f64) -> i64 {
    let bits = rate.to_bits() as i64;
    if bits < 0 { bits ^ i64::MAX } else { bits }
}

/// What a load point's status column says: `ok`, which side is not, or `both saturated`.
fn point_status(point: &LoadPoint<'_>) -> String {
    if let (Some(model), Some(simulation)) = (point.model, point.simulation)
        && model.status != "ok"
        && model.status == simulation.status
    {
        return format!("both {}", model.status);
    }
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
/// row per (model row, aggregate simulation row) pair of `results.parquet`, the scenario named
/// by its fields that vary.
pub(crate) fn comparison_table(rows: &[Row]) -> Table {
    let points = load_points(rows);
    let firsts = scenario_firsts(points.iter().map(LoadPoint::row));
    let fields =
        varying_fields(&firsts.iter().map(|row| columns::to_json(row)).collect::<Vec<_>>());
    let has_load = points.iter().any(|point| point.row().fraction_of_saturation.is_some());
    let mut table_columns = field_columns(&fields);
    table_columns.push(headers::column("rate", true));
    if has_load {
        table_columns.push(headers::column("fraction_of_saturation", true));
    }
    table_columns.push(headers::column("model_latency", true));
    table_columns.push(headers::column("simulation_latency_ci", true));
    table_columns.push(headers::column("signed_error", true));
    table_columns.push(headers::column("status", false));
    // Only the rows the pages show are turned into cells (see `bound`).
    let table_rows = points
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|point| {
            let row = point.row();
            let mut cells = field_cells(&columns::to_json(row), &fields);
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
            cells.push(Cell::with_interval(
                point.simulation.and_then(|s| s.latency),
                point.simulation.and_then(|s| s.latency_ci95),
            ));
            cells.push(Cell::signed_percent(point_error(point)));
            cells.push(Cell::text(point_status(point)));
            cells
        })
        .collect();
    let mut note = String::from(
        "Mean latency per load point: the model, and the simulation's mean over replications \
         \u{b1} its 95% confidence half-width. Error: (model \u{2212} simulation) / simulation \
         in percent, where both are stable; positive where the model is pessimistic.",
    );
    if points.iter().filter_map(|point| point.model).any(|m| model_latency_column(m) != "latency") {
        note.push_str(
            " Without broadcasts in the traffic the simulation measures unicasts, so the model \
             column is the model's unicast latency (unicast_latency in results.parquet).",
        );
    }
    let shared = shared_description(firsts.first().copied(), &fields);
    if !shared.is_empty() {
        note.push_str(&format!(" All rows: {shared}."));
    }
    if points.is_empty() {
        note = "No model or simulation results.".to_owned();
    } else if points.len() > MAX_TABLE_ROWS {
        note.push_str(&left_out(MAX_TABLE_ROWS, points.len(), "comparison"));
    }
    Table { scenario_columns: fields.len(), ..Table::new(table_columns, table_rows, note) }
}

/// Which column of the model row the comparison reads its latency from: `unicast_latency`
/// where the traffic has no broadcasts and the model reports unicasts apart (see
/// [`columns::comparable_model_latency`]), else `latency`.
fn model_latency_column(model: &Row) -> &'static str {
    let unicast = columns::comparable_model_latency(model) == model.unicast_latency
        && model.unicast_latency.is_some()
        && model.unicast_latency != model.latency;
    if unicast { "unicast_latency" } else { "latency" }
}

/// The per-load comparison as CSV, unrounded, with the scenario id for joins and, last, the
/// model row's column the model latency comes from (`latency` or `unicast_latency`).
pub(crate) fn comparison_csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "scenario_id,scenario,rate,fraction_of_saturation,model_latency,model_status,\
         simulation_latency,simulation_latency_ci95,simulation_replications,simulation_status,\
         signed_relative_error,model_latency_column\n",
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
            point.model.map(model_latency_column).unwrap_or_default().to_owned(),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// The results table for display: model rows and aggregate simulation rows.
///
/// The scenario is named by its fields that vary (no hash ids: they stay in the CSV); the
/// values shared by all rows go in the note. Load, throughput and note columns appear only
/// when some row has a value. The LaTeX keeps the columns a paper shows (scenario fields,
/// rate, load, method, latency \u{b1} CI, throughput, status) and leaves the replication
/// count and the note to the page, the Markdown and the CSV.
pub(crate) fn results_table(rows: &[Row]) -> Table {
    let shown_rows = || rows.iter().filter(|row| row.replication.is_none());
    let firsts = scenario_firsts(shown_rows());
    let fields =
        varying_fields(&firsts.iter().map(|row| columns::to_json(row)).collect::<Vec<_>>());
    let total = shown_rows().count();
    // Only the rows the pages show are turned into cells (see `bound`).
    let shown: Vec<&Row> = shown_rows().take(MAX_TABLE_ROWS).collect();
    let has_load = shown_rows().any(|row| row.fraction_of_saturation.is_some());
    let has_throughput = shown_rows().any(|row| row.throughput.is_some());
    let has_note = shown.iter().any(|row| row.error.is_some());

    let mut table_columns = field_columns(&fields);
    table_columns.push(headers::column("rate", true));
    if has_load {
        table_columns.push(headers::column("fraction_of_saturation", true));
    }
    table_columns.push(headers::column("method", false));
    table_columns.push(headers::column("latency_ci", true));
    if has_throughput {
        table_columns.push(headers::column("throughput", true));
    }
    table_columns.push(Column { in_tex: false, ..headers::column("replications", true) });
    table_columns.push(headers::column("status", false));
    if has_note {
        table_columns.push(Column { in_tex: false, ..headers::column("note", false) });
    }

    let table_rows = shown
        .iter()
        .map(|row| {
            let mut cells = field_cells(&columns::to_json(row), &fields);
            cells.push(Cell::number(Some(row.rate)));
            if has_load {
                cells.push(Cell::number(row.fraction_of_saturation));
            }
            cells.push(Cell::text(&row.method));
            cells.push(Cell::with_interval(row.latency, row.latency_ci95));
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
        "Model rows and simulation means over replications \u{b1} the 95% confidence \
         half-width; per-replication rows are in tables/results.csv and results.parquet.",
    );
    let shared = shared_description(firsts.first().copied(), &fields);
    if !shared.is_empty() {
        note.push_str(&format!(" All rows: {shared}."));
    }
    if total > shown.len() {
        note.push_str(&left_out(shown.len(), total, "results"));
    }
    Table {
        scenario_columns: fields.len(),
        repeat_columns: fields.len() + 1 + usize::from(has_load),
        ..Table::new(table_columns, table_rows, note)
    }
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
    let paired = agreement.paired();
    let mut out = String::from(if paired { "compared," } else { "" });
    out.push_str(
        "scenario_id,scenario,load_band,points,bias,mean_abs_relative_error,\
         max_abs_relative_error,simulation_unstable,model_unstable,not_compared\n",
    );
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    for scenario in agreement.scenarios.iter().chain(&agreement.overall) {
        for (band, stats) in [("light", &scenario.light), ("near_saturation", &scenario.near)] {
            if paired {
                out.push_str(&csv_field(scenario.pair.as_deref().unwrap_or_default()));
                out.push(',');
            }
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

/// Tables with more rows than this are a `longtable` in LaTeX (they break across pages);
/// shorter ones a `tabular` to put in a `table` float. A page of 10 pt text holds about 45
/// rows.
pub(crate) const TEX_LONGTABLE_ROWS: usize = 40;

/// The line of a LaTeX table's header comment that names the packages it needs, as the
/// preamble lines to copy (the pdflatex test reads it).
pub(crate) const TEX_NEEDS: &str = "% Needs: ";

/// The table as LaTeX for `\input`: booktabs rules, a two-line header (name and unit), only
/// the columns marked `in_tex`, a little space between scenarios and, in a `tabular`, a
/// scenario field that repeats the row above left blank; a `tabular` up to [`TEX_LONGTABLE_ROWS`] rows, a `longtable` (its
/// header repeated on every page) beyond. The header comment says which packages it needs
/// and how to include it; every cell is escaped ([`tex_escape`]), so it compiles as is.
pub(crate) fn to_tex(table: &Table, source: &str) -> String {
    let mut out = String::new();
    let shown: Vec<usize> = (0..table.columns.len()).filter(|&i| table.columns[i].in_tex).collect();
    let scenario_columns = shown.iter().filter(|&&i| i < table.scenario_columns).count();
    let width = shown.len().max(1);
    let long = table.rows.len() > TEX_LONGTABLE_ROWS;
    let spec: String =
        shown.iter().map(|&i| if table.columns[i].numeric { 'r' } else { 'l' }).collect();
    let spec = format!("@{{}}{spec}@{{}}");
    let _ = writeln!(out, "% {} -- generated by runner.", tex_comment(source));
    if long {
        let _ = writeln!(out, "{TEX_NEEDS}\\usepackage{{booktabs}} \\usepackage{{longtable}}");
        let _ = writeln!(
            out,
            "% A longtable of {} rows: it breaks across pages and repeats its header; \\input it \
             outside any float (a \\caption{{...}}\\\\ line may go first in it).",
            table.rows.len()
        );
    } else {
        let _ = writeln!(out, "{TEX_NEEDS}\\usepackage{{booktabs}}");
        let _ = writeln!(
            out,
            "% A tabular: \\input it in a float, e.g. \\begin{{table}} \\centering \
             \\caption{{...}} \\input{{<this file>}} \\end{{table}}."
        );
    }
    if let Some(note) = table.note.as_deref().filter(|_| !table.rows.is_empty()) {
        // The caption's material, and where the rows a bounded table leaves out are.
        let _ = writeln!(out, "% {}", tex_comment(note));
    }
    let mut head = String::from("\\toprule\n");
    let names: Vec<&str> = shown.iter().map(|&i| table.columns[i].tex.as_str()).collect();
    let _ = writeln!(head, "{} \\\\", names.join(" & "));
    if shown.iter().any(|&i| !table.columns[i].tex_second.is_empty()) {
        let seconds: Vec<&str> =
            shown.iter().map(|&i| table.columns[i].tex_second.as_str()).collect();
        let _ = writeln!(head, "{} \\\\", seconds.join(" & "));
    }
    head.push_str("\\midrule\n");
    // Smaller type and narrower column gaps, so that a table of ten columns fits a page;
    // the group keeps both to the table.
    let size = if long { "\\footnotesize" } else { "\\small" };
    let _ = writeln!(out, "\\begingroup\n{size}\n\\setlength{{\\tabcolsep}}{{4pt}}");
    if long {
        let _ = writeln!(out, "\\begin{{longtable}}{{{spec}}}");
        out.push_str(&head);
        out.push_str("\\endfirsthead\n");
        out.push_str(&head);
        out.push_str("\\endhead\n");
        let _ = writeln!(
            out,
            "\\midrule\n\\multicolumn{{{width}}}{{@{{}}r@{{}}}}{{\\emph{{continued on the next \
             page}}}} \\\\\n\\endfoot\n\\bottomrule\n\\endlastfoot"
        );
    } else {
        let _ = writeln!(out, "\\begin{{tabular}}{{{spec}}}");
        out.push_str(&head);
    }
    if table.rows.is_empty() {
        let note = table.note.as_deref().unwrap_or("No rows.");
        let _ = writeln!(
            out,
            "\\multicolumn{{{width}}}{{@{{}}p{{0.8\\linewidth}}@{{}}}}{{{}}} \\\\",
            tex_escape(note)
        );
    }
    let repeat_columns =
        shown.iter().filter(|&&i| i < table.repeat_columns.max(table.scenario_columns)).count();
    let scenario_of = |row: &[Cell]| -> Vec<String> {
        shown[..repeat_columns].iter().map(|&i| row[i].text.clone()).collect()
    };
    let mut previous: Option<Vec<String>> = None;
    for (index, row) in table.rows.iter().enumerate() {
        let summary = table.summary_from.is_some_and(|from| index >= from);
        if table.summary_from == Some(index) {
            out.push_str("\\midrule\n");
        }
        let scenario = scenario_of(row);
        let same_scenario = previous
            .as_ref()
            .is_some_and(|previous| previous[..scenario_columns] == scenario[..scenario_columns]);
        if !summary && !same_scenario && previous.is_some() && scenario_columns > 0 {
            out.push_str("\\addlinespace\n");
        }
        let mut cells: Vec<String> = Vec::new();
        let mut skip = 0;
        // While the scenario fields to the left repeat the row above, a repeated one is blank;
        // not in a longtable, whose rows at the top of a page would lose their scenario.
        let mut repeating = !summary && !long;
        for (position, &i) in shown.iter().enumerate() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let cell = &row[i];
            if summary && position == 0 && scenario_columns > 1 {
                // `All scenarios` spans the scenario columns.
                cells.push(format!(
                    "\\multicolumn{{{scenario_columns}}}{{@{{}}l}}{{{}}}",
                    tex_cell(&cell.text)
                ));
                skip = scenario_columns - 1;
                continue;
            }
            let in_scenario = position < repeat_columns;
            repeating = repeating
                && in_scenario
                && previous.as_ref().is_some_and(|previous| previous[position] == cell.text);
            cells.push(if repeating || cell.blank {
                String::new()
            } else if cell.text.is_empty() {
                "--".to_owned()
            } else {
                tex_cell(&cell.text)
            });
        }
        let _ = writeln!(out, "{} \\\\", cells.join(" & "));
        if !summary {
            previous = Some(scenario);
        }
    }
    if long {
        out.push_str("\\end{longtable}\n");
    } else {
        out.push_str("\\bottomrule\n\\end{tabular}\n");
    }
    out.push_str("\\endgroup\n");
    out
}

/// A cell's text escaped for LaTeX, guarded so that a leading `[` or `*` is not read as an
/// argument of the `\\` that ends the row above.
fn tex_cell(text: &str) -> String {
    let escaped = tex_escape(text);
    if escaped.starts_with(['[', '*']) { format!("{{}}{escaped}") } else { escaped }
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
        let cells: Vec<String> = row
            .iter()
            .map(|cell| match (cell.text.is_empty(), cell.blank) {
                (true, true) => String::new(),
                (true, false) => "\u{2013}".to_owned(),
                (false, _) => md_escape(&cell.text),
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if let Some(note) = &table.note {
        let _ = writeln!(out, "\n{}", md_escape(note));
    }
    out
}

/// Escapes text for LaTeX so that it compiles with a plain `pdflatex` (its default UTF-8 input
/// and OT1 fonts): the ten specials (`\ & % $ # _ { } ~ ^`) and `< > |` as commands, Greek
/// letters and the math signs the report writes (`≤ ≥ − ± × ∞ ≈ ≠`, a combining macron as
/// in `V̄`, subscript digits) as math, control characters as spaces; Latin letters with
/// accents and typographic punctuation pass through as they are, and any other character,
/// which pdflatex cannot typeset without further packages, becomes `?` (the CSV keeps it).
pub(crate) fn tex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if chars.peek() == Some(&'\u{304}') {
            // A combining macron over the character: `V̄` is $\bar{V}$.
            chars.next();
            let base = match tex_math(c) {
                Some(math) => math.to_owned(),
                None if c.is_ascii_alphanumeric() => c.to_string(),
                None => String::new(),
            };
            if !base.is_empty() {
                out.push_str(&format!("$\\bar{{{base}}}$"));
                continue;
            }
        }
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
            '\u{a0}' => out.push('~'),
            _ if is_invisible_format(c) || c == '\u{304}' => {}
            _ if c.is_control() => out.push(' '),
            _ if c.is_ascii() || tex_passes(c) => out.push(c),
            _ => match tex_math(c) {
                Some(math) => {
                    out.push('$');
                    out.push_str(math);
                    out.push('$');
                }
                None => out.push('?'),
            },
        }
    }
    out
}

/// The math-mode form of a Greek letter or one of the signs the report writes.
fn tex_math(c: char) -> Option<&'static str> {
    const GREEK_LOWER: [&str; 25] = [
        "\\alpha",
        "\\beta",
        "\\gamma",
        "\\delta",
        "\\varepsilon",
        "\\zeta",
        "\\eta",
        "\\theta",
        "\\iota",
        "\\kappa",
        "\\lambda",
        "\\mu",
        "\\nu",
        "\\xi",
        "o",
        "\\pi",
        "\\rho",
        "\\varsigma",
        "\\sigma",
        "\\tau",
        "\\upsilon",
        "\\varphi",
        "\\chi",
        "\\psi",
        "\\omega",
    ];
    const GREEK_UPPER: [&str; 25] = [
        "A",
        "B",
        "\\Gamma",
        "\\Delta",
        "E",
        "Z",
        "H",
        "\\Theta",
        "I",
        "K",
        "\\Lambda",
        "M",
        "N",
        "\\Xi",
        "O",
        "\\Pi",
        "P",
        "",
        "\\Sigma",
        "T",
        "\\Upsilon",
        "\\Phi",
        "X",
        "\\Psi",
        "\\Omega",
    ];
    const SUBSCRIPTS: [&str; 10] = ["_0", "_1", "_2", "_3", "_4", "_5", "_6", "_7", "_8", "_9"];
    let math = match c {
        '\u{3b1}'..='\u{3c9}' => GREEK_LOWER[(c as u32 - 0x3b1) as usize],
        '\u{391}'..='\u{3a9}' => GREEK_UPPER[(c as u32 - 0x391) as usize],
        '\u{2080}'..='\u{2089}' => SUBSCRIPTS[(c as u32 - 0x2080) as usize],
        '\u{3d5}' => "\\phi",
        '\u{3f5}' => "\\epsilon",
        '\u{2264}' => "\\le",
        '\u{2265}' => "\\ge",
        '\u{2212}' => "-",
        '\u{b1}' => "\\pm",
        '\u{d7}' => "\\times",
        '\u{221e}' => "\\infty",
        '\u{2248}' => "\\approx",
        '\u{2260}' => "\\ne",
        '\u{2032}' => "'",
        '\u{2033}' => "''",
        _ => "",
    };
    (!math.is_empty()).then_some(math)
}

/// Whether pdflatex's default UTF-8 input typesets `c` as it is (checked against TeX Live
/// 2022): Latin-1 and Latin Extended-A letters and signs, less a few, and typographic
/// punctuation. `±` and `×` are set as math instead, to match the math around them.
fn tex_passes(c: char) -> bool {
    match c {
        '\u{b1}' | '\u{d7}' => false,
        '\u{a1}'..='\u{ff}' => true,
        '\u{100}'..='\u{17e}' => !matches!(
            c,
            '\u{126}'
                | '\u{127}'
                | '\u{138}'
                | '\u{13f}'
                | '\u{140}'
                | '\u{149}'
                | '\u{166}'
                | '\u{167}'
        ),
        '\u{2010}'..='\u{2016}' | '\u{2018}'..='\u{201a}' | '\u{201c}'..='\u{201e}' => true,
        '\u{2020}' | '\u{2021}' | '\u{2022}' | '\u{2026}' | '\u{2030}' | '\u{2039}'
        | '\u{203a}' | '\u{20ac}' | '\u{2122}' | '\u{2190}' | '\u{2192}' => true,
        _ => false,
    }
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
