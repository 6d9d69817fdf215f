//! The `saturation` table: the model's saturation rate beside each simulator's highest accepted
//! throughput, per scenario.
//!
//! The simulated figure is the largest `throughput` of the scenario's aggregate rows measured
//! in throughput mode (`measure = throughput`, status `ok` or `saturated`: past saturation the
//! accepted rate is a valid throughput-mode result), with the offered rate at which it was
//! accepted. Every method that measured throughput gets its own line: the built-in simulator
//! (`methods.simulation.measure`) first, then each external simulation with `measure:
//! throughput`, so runner's simulator and BookSim stand one above the other. It is the
//! saturation throughput only when the sweep went past saturation: the table counts the
//! saturated points, and with none the maximum is a lower bound. Where that row has a 95%
//! half-width (`throughput_ci95`) the table shows it beside the maximum (`0.412 ± 0.006`): the
//! interval of the throughput at that load, not of the saturation point itself, which the
//! load grid brackets. The model's figure is
//! `saturation_rate`, which the run fills in whenever the model ran. Like every table it reads
//! rows only.
//!
//! Where a method ran saturation searches (`saturation_searches`: rows with `measure =
//! saturation`), its line is their mean instead: the saturation throughput each search found
//! by bisecting the offered load to 1% of the knee, with the 95% Student-t half-width over
//! the searches (of the saturation throughput itself this time, not of one load), in messages
//! and in flits, the mean offered rate at the searches' maxima, and the number of searches;
//! the load grid's points are then not counted (a search does not need them).

use std::collections::BTreeMap;

use super::columns;
use super::headers;
use super::intervals::Estimate;
use super::tables::{Cell, Table, csv_field};
use crate::store::row::Row;

/// One scenario's line.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SaturationLine {
    pub(crate) scenario_id: String,
    pub(crate) label: String,
    /// The method whose throughput-mode rows give the simulated figures (`simulation` when
    /// none measured throughput).
    pub(crate) method: String,
    /// The scenario's fields (its first row as JSON), for the table's scenario columns.
    pub(crate) json: serde_json::Value,
    /// The model's saturation rate.
    pub(crate) model: Option<f64>,
    /// The highest accepted throughput (messages and flits/node/cycle) and its offered rate.
    pub(crate) simulated: Option<f64>,
    /// The 95% half-width of `simulated` (`throughput_ci95` of its row), when it has one.
    pub(crate) simulated_ci95: Option<f64>,
    pub(crate) flits: Option<f64>,
    /// The 95% half-width of `flits`, for a line from saturation searches.
    pub(crate) flits_ci95: Option<f64>,
    pub(crate) offered: Option<f64>,
    /// The knee the searches bracketed: the mean of their largest stable offered rates (the
    /// saturation rate that `load.saturation: simulation` takes); `None` for a line from load
    /// points.
    pub(crate) knee: Option<f64>,
    /// The number of saturation searches behind the line; `None` for a line from load points.
    pub(crate) searches: Option<usize>,
    /// Throughput-mode points, and how many of them were saturated (`None` for a line from
    /// saturation searches).
    pub(crate) points: Option<usize>,
    pub(crate) saturated: Option<usize>,
}

/// The lines of the table, in scenario order (first appearance among the rows).
pub(crate) fn compute(rows: &[Row]) -> Vec<SaturationLine> {
    let mut order: Vec<&str> = Vec::new();
    let mut by_scenario: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for row in rows.iter().filter(|row| row.replication.is_none()) {
        let entry = by_scenario.entry(row.scenario_id.as_str()).or_default();
        if entry.is_empty() {
            order.push(row.scenario_id.as_str());
        }
        entry.push(row);
    }
    let relevant = |rows: &[&Row]| {
        rows.iter().any(|row| {
            is_throughput_point(row) || row.is_saturation_search() || row.saturation_rate.is_some()
        })
    };
    let shown: Vec<(&str, &Vec<&Row>)> = order
        .iter()
        .filter_map(|id| by_scenario.get(id).map(|rows| (*id, rows)))
        .filter(|(_, rows)| relevant(rows))
        .collect();
    let json: Vec<serde_json::Value> = shown
        .iter()
        .filter_map(|(_, rows)| rows.first().map(|row| columns::to_json(row)))
        .collect();
    let varying = super::tables::varying_fields(&json);
    let mut lines = Vec::new();
    for ((id, rows), first) in shown.iter().zip(&json) {
        let label = if shown.len() > 1 {
            columns::describe(first, &varying)
        } else {
            columns::describe(first, columns::DESCRIBE_COLUMNS)
        };
        let model = rows.iter().find_map(|row| row.saturation_rate);
        for method in methods(rows) {
            let line = SaturationLine {
                scenario_id: (*id).to_owned(),
                json: first.clone(),
                label: label.clone(),
                method: method.to_owned(),
                model,
                ..SaturationLine::default()
            };
            let searched = rows.iter().find(|row| {
                row.method == method && row.is_saturation_search() && row.throughput.is_some()
            });
            if let Some(row) = searched {
                lines.push(SaturationLine {
                    simulated: row.throughput,
                    simulated_ci95: row.throughput_ci95,
                    flits: row.flit_throughput,
                    flits_ci95: row.intermediate("flit_throughput_ci95"),
                    offered: Some(row.rate),
                    knee: row.intermediate("stable_rate"),
                    searches: Some(row.replications.map_or(1, |n| n as usize)),
                    ..line
                });
                continue;
            }
            let points: Vec<&&Row> = rows
                .iter()
                .filter(|row| row.method == method && is_throughput_point(row))
                .collect();
            let best = points
                .iter()
                .filter_map(|row| row.throughput.map(|t| (t, row)))
                .filter(|(t, _)| t.is_finite())
                .max_by(|a, b| a.0.total_cmp(&b.0));
            lines.push(SaturationLine {
                simulated: best.map(|(t, _)| t),
                simulated_ci95: best.and_then(|(_, row)| Estimate::Throughput.half_width(row)),
                flits: best.and_then(|(_, row)| row.flit_throughput),
                offered: best.map(|(_, row)| row.rate),
                points: Some(points.len()),
                saturated: Some(points.iter().filter(|row| row.status == "saturated").count()),
                ..line
            });
        }
    }
    lines
}

/// The methods with throughput-mode rows or saturation searches in a scenario, the built-in
/// simulator first and then in order of appearance; just `simulation` when there are none (a
/// model-only line).
fn methods<'a>(rows: &[&'a Row]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for row in rows.iter().filter(|row| is_throughput_point(row) || row.is_saturation_search()) {
        if !out.contains(&row.method.as_str()) {
            out.push(row.method.as_str());
        }
    }
    out.sort_by_key(|method| *method != "simulation");
    if out.is_empty() {
        out.push("simulation");
    }
    out
}

/// An aggregate row measured in throughput mode (by the simulator or an external simulation)
/// with a valid throughput.
fn is_throughput_point(row: &Row) -> bool {
    row.measure.as_deref() == Some("throughput")
        && matches!(row.status.as_str(), "ok" | "saturated")
        && row.throughput.is_some()
}

/// The table for display: the scenario named by its fields that vary (no hash ids; the CSV
/// has them), then the model's and the simulator's figures.
pub(crate) fn table(lines: &[SaturationLine]) -> Table {
    let json: Vec<serde_json::Value> = lines.iter().map(|line| line.json.clone()).collect();
    let fields = super::tables::varying_fields(&json);
    // Scenarios told apart only by a field no table shows keep their described label.
    let labelled = fields.is_empty();
    let mut table_columns = super::tables::field_columns(&fields);
    if labelled {
        table_columns.push(headers::column("scenario", false));
    }
    let several_methods = lines.iter().any(|line| line.method != "simulation");
    if several_methods {
        table_columns.push(headers::column("method", false));
    }
    let scenario_columns = table_columns.len();
    for key in [
        "model_saturation_rate",
        "simulated_max_throughput",
        "simulated_over_model",
        "offered_at_max",
        "flit_throughput_at_max",
        "knee_rate",
        "saturation_searches",
        "throughput_points",
        "saturated_points",
    ] {
        table_columns.push(headers::column(key, true));
    }
    let rows = lines
        .iter()
        .map(|line| {
            let mut cells: Vec<Cell> = super::tables::field_cells(&line.json, &fields);
            if labelled {
                cells.push(Cell::text(&line.label));
            }
            if several_methods {
                cells.push(Cell::text(&line.method));
            }
            cells.extend([
                Cell::number(line.model),
                Cell::with_interval(line.simulated, line.simulated_ci95),
                Cell::number(ratio(line)),
                Cell::number(line.offered),
                Cell::with_interval(line.flits, line.flits_ci95),
                Cell::number(line.knee),
                optional_count(line.searches),
                optional_count(line.points),
                optional_count(line.saturated),
            ]);
            cells
        })
        .collect();
    let mut note = if lines.is_empty() {
        "No throughput-mode simulation rows and no model saturation rate in this run: set \
         measure: throughput in methods.simulation and sweep the load past saturation."
            .to_owned()
    } else if lines.iter().any(|line| line.model.is_some()) {
        "The model's saturation rate against the highest throughput each simulator accepted in \
         throughput mode (measure: throughput), with its 95% half-width where the row has one, \
         and the offered rate at that point. A scenario without saturated points was not swept \
         past saturation: its maximum is a lower bound."
            .to_owned()
    } else {
        // Simulators only: no model rate to open with.
        "The highest throughput each simulator accepted in throughput mode (measure: \
         throughput), with its 95% half-width where the row has one, and the offered rate at \
         that point. A scenario without saturated points \
         was not swept past saturation: its maximum is a lower bound."
            .to_owned()
    };
    if lines.iter().any(|line| line.searches.is_some()) {
        note.push_str(&format!(
            " A line with searches is the mean of independent saturation searches \
             (saturation_searches), each bisecting the offered load until the knee is bracketed \
             within {:.0}% and taking the highest accepted rate over its points, with the 95% \
             Student-t half-width over the searches; its knee is the mean of the largest \
             offered rates the searches found stable.",
            100.0 * crate::sim::saturation::TOLERANCE
        ));
    }
    if !labelled && let Some(first) = lines.first() {
        let constant: Vec<&str> = columns::DESCRIBE_COLUMNS
            .iter()
            .copied()
            .filter(|name| !fields.contains(name))
            .collect();
        let shared = columns::describe(&first.json, &constant);
        if !shared.is_empty() {
            note.push_str(&format!(" All scenarios: {shared}."));
        }
    }
    let mut table = Table { scenario_columns, ..Table::new(table_columns, rows, note) };
    // A run without the model (or without throughput-mode simulations) leaves its side's
    // columns empty: they go.
    table.drop_empty_columns();
    table
}

/// A count cell, empty for `None`.
fn optional_count(value: Option<usize>) -> Cell {
    match value {
        Some(count) => Cell::count(count),
        None => Cell::number(None),
    }
}

/// The table as CSV, unrounded.
pub(crate) fn csv(lines: &[SaturationLine]) -> String {
    let mut out = String::from(
        "scenario_id,scenario,method,model_saturation_rate,simulated_max_throughput,\
         simulated_max_throughput_ci95,simulated_over_model,offered_at_max,flit_throughput_at_max,\
         flit_throughput_at_max_ci95,knee_rate,saturation_searches,throughput_points,\
         saturated_points\n",
    );
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    let count = |value: Option<usize>| value.map(|value| value.to_string()).unwrap_or_default();
    for line in lines {
        let fields = [
            csv_field(&line.scenario_id),
            csv_field(&line.label),
            csv_field(&line.method),
            number(line.model),
            number(line.simulated),
            number(line.simulated_ci95),
            number(ratio(line)),
            number(line.offered),
            number(line.flits),
            number(line.flits_ci95),
            number(line.knee),
            count(line.searches),
            count(line.points),
            count(line.saturated),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

fn ratio(line: &SaturationLine) -> Option<f64> {
    match (line.simulated, line.model) {
        (Some(simulated), Some(model)) if model > 0.0 => Some(simulated / model),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scenario: &str, method: &str, rate: f64, throughput: f64, status: &str) -> Row {
        Row {
            scenario_id: scenario.into(),
            method: method.into(),
            topology: "torus".into(),
            routing: if scenario == "a" { "duato" } else { "nbc" }.into(),
            rate,
            throughput: Some(throughput),
            flit_throughput: Some(32.0 * throughput),
            status: status.into(),
            measure: (method == "simulation").then(|| "throughput".to_string()),
            saturation_rate: (scenario == "b").then_some(0.02),
            ..Row::default()
        }
    }

    #[test]
    fn the_maximum_accepted_throughput_is_taken_over_valid_throughput_rows() {
        let mut replication = row("a", "simulation", 0.03, 0.5, "saturated");
        replication.replication = Some(0);
        let mut latency_mode = row("a", "simulation", 0.03, 0.4, "saturated");
        latency_mode.measure = Some("latency".into());
        let rows = vec![
            row("a", "simulation", 0.01, 0.01, "ok"),
            row("a", "simulation", 0.02, 0.016, "saturated"),
            row("a", "simulation", 0.03, 0.015, "saturated"),
            replication,
            latency_mode,
            row("b", "model", 0.01, 0.01, "ok"),
            row("b", "simulation", 0.01, 0.01, "ok"),
            row("c", "model", 0.01, 0.01, "ok"),
        ];
        let lines = compute(&rows);
        assert_eq!(lines.len(), 2, "{lines:?}");
        let a = &lines[0];
        assert_eq!((a.simulated, a.offered, a.model), (Some(0.016), Some(0.02), None));
        assert_eq!((a.points, a.saturated), (Some(3), Some(2)));
        assert_eq!(a.flits, Some(32.0 * 0.016));
        assert_eq!(a.simulated_ci95, None);
        let b = &lines[1];
        assert_eq!((b.simulated, b.model, b.saturated), (Some(0.01), Some(0.02), Some(0)));
        assert_eq!(ratio(b), Some(0.5));
        let text = csv(&lines);
        assert_eq!(text.lines().count(), 3);
        assert_eq!(table(&lines).rows.len(), 2);
        assert!(table(&[]).note.unwrap().contains("measure: throughput"));
    }

    /// A method's saturation searches make its line: their mean and interval, in messages and
    /// flits, and their count; its load points are then not counted, and the other method
    /// keeps its line from throughput points.
    #[test]
    fn searches_make_the_line_of_their_method() {
        let mut searched = row("a", "simulation", 0.018, 0.017, "ok");
        searched.measure = Some(crate::store::row::SATURATION_SEARCH.into());
        searched.replications = Some(3);
        searched.throughput_ci95 = Some(0.0004);
        searched.intermediates = r#"{"flit_throughput_ci95":0.0128,"stable_rate":0.0169}"#.into();
        let mut one_search = searched.clone();
        one_search.replication = Some(0);
        let mut booksim = row("a", "booksim", 0.02, 0.016, "saturated");
        booksim.measure = Some("throughput".into());
        let rows = vec![row("a", "simulation", 0.01, 0.01, "ok"), one_search, searched, booksim];
        let lines = compute(&rows);
        assert_eq!(lines.len(), 2, "{lines:?}");
        let ours = &lines[0];
        assert_eq!(ours.method, "simulation");
        assert_eq!((ours.simulated, ours.simulated_ci95), (Some(0.017), Some(0.0004)));
        assert_eq!((ours.flits, ours.flits_ci95), (Some(32.0 * 0.017), Some(0.0128)));
        assert_eq!((ours.offered, ours.searches), (Some(0.018), Some(3)));
        assert_eq!(ours.knee, Some(0.0169));
        assert_eq!((ours.points, ours.saturated), (None, None));
        let theirs = &lines[1];
        assert_eq!((theirs.method.as_str(), theirs.searches), ("booksim", None));
        assert_eq!((theirs.points, theirs.saturated), (Some(1), Some(1)));
        let shown = table(&lines);
        let headers: Vec<&str> = shown.columns.iter().map(|c| c.header.as_str()).collect();
        assert!(headers.contains(&"Searches"), "{headers:?}");
        assert!(shown.note.as_deref().is_some_and(|n| n.contains("saturation_searches")));
        let text = csv(&lines);
        assert!(text.lines().nth(1).is_some_and(|l| l.ends_with(",0.0128,0.0169,3,,")), "{text}");
    }

    /// The scenario by its fields that vary, never its id; a simulation-only run shows no
    /// empty model columns.
    #[test]
    fn the_table_names_scenarios_by_their_fields_and_drops_empty_columns() {
        let rows: Vec<Row> = [
            row("a", "simulation", 0.01, 0.01, "ok"),
            row("a", "simulation", 0.02, 0.016, "saturated"),
            row("b", "simulation", 0.01, 0.01, "ok"),
        ]
        .into_iter()
        .map(|row| Row { saturation_rate: None, ..row })
        .collect();
        let shown = table(&compute(&rows));
        let headers: Vec<&str> = shown.columns.iter().map(|c| c.header.as_str()).collect();
        assert_eq!(headers[0], "Routing", "{headers:?}");
        assert!(!headers.iter().any(|h| h.starts_with("Model") || *h == "Id"), "{headers:?}");
        assert!(headers.contains(&"Simulated max. accepted (msg/node/cycle)"), "{headers:?}");
        assert_eq!(shown.rows[0][0].text, "Duato");
        assert!(shown.rows.iter().flatten().all(|cell| cell.text != "a" && cell.text != "b"));
        // Nor does its caption open with a model it does not have.
        let note = shown.note.unwrap_or_default();
        assert!(note.starts_with("The highest throughput each simulator accepted"), "{note}");
        assert!(!note.contains("model"), "{note}");
    }

    /// The maximum shows its row's 95% half-width, in the display and in the CSV.
    #[test]
    fn the_maximum_carries_its_throughput_interval() {
        let best =
            Row { throughput_ci95: Some(0.0006), ..row("a", "simulation", 0.02, 0.0412, "ok") };
        let rows = vec![row("a", "simulation", 0.01, 0.01, "ok"), best];
        let lines = compute(&rows);
        assert_eq!(lines[0].simulated_ci95, Some(0.0006));
        let shown = table(&lines);
        assert!(
            shown.rows[0].iter().any(|cell| cell.text == "0.04120 \u{b1} 0.00060"),
            "{:?}",
            shown.rows[0]
        );
        assert!(csv(&lines).contains(",0.0412,0.0006,"), "{}", csv(&lines));
    }

    /// An external simulation measured in throughput mode gets its own line, after the
    /// built-in simulator's, and the table a method column.
    #[test]
    fn each_throughput_method_has_its_own_line() {
        let external = |rate: f64, throughput: f64, status: &str| Row {
            measure: Some("throughput".into()),
            ..row("a", "booksim", rate, throughput, status)
        };
        let rows = vec![
            external(0.01, 0.01, "ok"),
            external(0.02, 0.014, "saturated"),
            row("a", "simulation", 0.01, 0.01, "ok"),
            row("a", "simulation", 0.02, 0.016, "saturated"),
            Row { measure: Some("latency".into()), ..row("a", "other", 0.02, 0.5, "ok") },
        ];
        let lines = compute(&rows);
        let methods: Vec<&str> = lines.iter().map(|line| line.method.as_str()).collect();
        assert_eq!(methods, ["simulation", "booksim"]);
        assert_eq!(
            (lines[1].simulated, lines[1].offered, lines[1].saturated),
            (Some(0.014), Some(0.02), Some(1))
        );
        let shown = table(&lines);
        let headers: Vec<&str> = shown.columns.iter().map(|c| c.header.as_str()).collect();
        assert!(headers.contains(&"Method"), "{headers:?}");
        assert!(csv(&lines).lines().nth(2).is_some_and(|line| line.contains(",booksim,")));
    }
}
