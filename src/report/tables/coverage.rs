//! Building the coverage table for display and as CSV: per scenario (and load point, with more
//! than two replications) and estimate, how often the replications' 95% intervals cover the
//! leave-one-out mean, the spread against the intervals, and the pairs of replications whose
//! intervals miss each other (`report::coverage` computes them).

use serde_json::Value;

use super::csv::csv_field;
use super::model::{Cell, Table};
use super::scenario::{field_cells, field_columns, varying_fields};
use crate::report::coverage::{Coverage, CoverageLine, CoverageStats, Scope, expected_coverage};
use crate::report::{columns, headers};

/// The coverage table for display. The estimates no row has a half-width for are left out
/// (the caption names them; the CSV keeps their lines with empty cells).
pub(crate) fn coverage_table(coverage: &Coverage) -> Table {
    let shown: Vec<&CoverageLine> =
        coverage.lines.iter().filter(|line| !coverage.missing.contains(&line.estimate)).collect();
    let scenario_json: Vec<Value> = shown
        .iter()
        .filter(|line| line.scope != Scope::All)
        .map(|line| line.json.clone())
        .collect();
    let fields = varying_fields(&scenario_json);
    let several_methods = shown.iter().any(|line| line.method != shown[0].method);
    let mut scenarios: Vec<&str> = shown.iter().map(|line| line.scenario_id.as_str()).collect();
    scenarios.sort_unstable();
    scenarios.dedup();
    let scenarios = scenarios.iter().filter(|id| !id.is_empty()).count();
    // Scenarios told apart only by a field no table shows keep their described label.
    let labelled = fields.is_empty() && scenarios > 1;
    let has_load =
        shown.iter().any(|line| matches!(line.scope, Scope::Point { fraction: Some(_), .. }));
    let mut table_columns = Vec::new();
    if several_methods {
        table_columns.push(headers::column("method", false));
    }
    table_columns.extend(field_columns(&fields));
    if labelled {
        table_columns.push(headers::column("scenario", false));
    }
    let scenario_columns = table_columns.len();
    // Without per-point lines every line pools its scenario's loads: no rate column.
    if coverage.per_point {
        table_columns.push(headers::column("rate", true));
        if has_load {
            table_columns.push(headers::column("fraction_of_saturation", true));
        }
    }
    let repeat_columns = table_columns.len();
    for (key, numeric) in [
        ("estimate", false),
        ("replications_with_interval", true),
        ("covered", true),
        ("coverage", true),
        ("sd_ratio", true),
        ("pairs", true),
        ("pairs_apart", true),
        ("pairs_apart_fraction", true),
    ] {
        table_columns.push(headers::column(key, numeric));
    }
    let mut rows = Vec::new();
    let mut summary_from = None;
    for line in &shown {
        if line.scope == Scope::All && summary_from.is_none() {
            summary_from = Some(rows.len());
        }
        let mut cells = Vec::new();
        if several_methods {
            cells.push(Cell::text(&line.method));
        }
        if line.scope == Scope::All {
            let mut blank = vec![Cell::blank(); scenario_columns - cells.len()];
            if let Some(first) = blank.first_mut() {
                *first = Cell::text(if scenario_columns > 1 { "All scenarios" } else { "All" });
            }
            cells.extend(blank);
        } else {
            cells.extend(field_cells(&line.json, &fields));
            if labelled {
                cells.push(Cell::text(&line.label));
            }
        }
        match line.scope {
            Scope::Point { rate, fraction } => {
                cells.push(Cell::number(Some(rate)));
                if has_load {
                    cells.push(Cell::number(fraction));
                }
            }
            Scope::Scenario | Scope::All if coverage.per_point => {
                cells.push(Cell::text("all"));
                if has_load {
                    cells.push(Cell::blank());
                }
            }
            Scope::Scenario | Scope::All => {}
        }
        cells.extend(stat_cells(line));
        rows.push(cells);
    }
    let note = note(coverage, &shown, &fields, scenario_json.first());
    Table {
        summary_from: summary_from.filter(|from| *from < rows.len()),
        scenario_columns,
        repeat_columns,
        ..Table::new(table_columns, rows, note)
    }
}

/// A line's statistics as display cells.
fn stat_cells(line: &CoverageLine) -> Vec<Cell> {
    let stats: &CoverageStats = &line.stats;
    vec![
        Cell::text(line.estimate.column()),
        Cell::count(stats.n),
        Cell::count(stats.covered),
        Cell::percent_with_interval(stats.coverage(), stats.coverage_interval()),
        Cell::fixed(stats.sd_ratio(), 2),
        Cell::count(stats.pairs),
        Cell::count(stats.apart),
        Cell::percent_with_interval(stats.apart_fraction(), stats.apart_interval()),
    ]
}

/// The caption: the target, how each column is computed and how to read it.
fn note(
    coverage: &Coverage,
    shown: &[&CoverageLine],
    fields: &[&str],
    first: Option<&Value>,
) -> String {
    if shown.is_empty() {
        return "No replication rows with a 95% half-width in this run: the coverage table \
                reads the simulations' replication rows (replication set) and their \
                latency_ci95, throughput_ci95 and latency_p99_ci95."
            .to_owned();
    }
    let most = coverage.most_per_point;
    let expected = expected_coverage(most)
        .map(|expected| format!("{:.1}%", 100.0 * expected))
        .unwrap_or_else(|| "-".to_owned());
    let mut note = format!(
        "Whether the simulation's 95% confidence intervals mean what they say, from the \
         replication rows (up to {most} per load point). Covered: replications whose interval \
         x \u{b1} h contains the mean of the other n \u{2212} 1 replications of the same point; \
         that reference is independent of the interval it tests, and its own error is about \
         1/\u{221a}(n \u{2212} 1) of one replication's, so right intervals cover it slightly \
         less than 95% of the time ({expected} at n = {most}). Target: a coverage of 93\u{2013}97% \
         (lower with few replications, as just said) whose 95% interval (exact, \
         Clopper\u{2013}Pearson, in brackets) contains 95%; well below means the intervals are \
         too narrow. SD ratio: the observed standard deviation of the replications' values over \
         the mean standard deviation their intervals imply (h / t, t the 97.5% Student \
         quantile with the row's batch count less one degrees of freedom, 19 where the row \
         does not say); about 1 when right, above 1 when too narrow. Pairs apart: of the pairs \
         of replications 0\u{2013}1, 2\u{2013}3, ..., those whose intervals do not overlap; \
         about 0.6% when the intervals are right."
    );
    if coverage.per_point {
        note.push_str(
            " Rate `all`: the scenario's load points pooled (counts added, the sd ratio a \
             pooled variance ratio).",
        );
    } else {
        note.push_str(
            " With two replications per point the leave-one-out reference is the other \
             replication, so the coverage reads about 83% when right and the pairs apart are \
             the statistic to read. Each line pools a scenario's load points (counts added, the \
             sd ratio a pooled variance ratio).",
        );
    }
    if !coverage.missing.is_empty() {
        let names: Vec<String> = coverage
            .missing
            .iter()
            .map(|estimate| format!("{} ({})", estimate.column(), estimate.half_width_column()))
            .collect();
        note.push_str(&format!(
            " Not shown, as no replication row has its half-width: {}.",
            names.join(", ")
        ));
    }
    let constant: Vec<&str> =
        columns::DESCRIBE_COLUMNS.iter().copied().filter(|name| !fields.contains(name)).collect();
    let shared = first.map(|json| columns::describe(json, &constant)).unwrap_or_default();
    if !shared.is_empty() {
        note.push_str(&format!(" All scenarios: {shared}."));
    }
    note
}

/// The coverage table as CSV, unrounded, every line (the estimates without half-widths
/// included, their cells empty); the All lines have an empty `scenario_id` and `rate`.
pub(crate) fn coverage_csv(coverage: &Coverage) -> String {
    let mut out = String::from(
        "method,scenario_id,scenario,rate,fraction_of_saturation,estimate,half_width_column,\
         replications,tested,covered,coverage,coverage_low,coverage_high,sd_ratio,pairs,\
         pairs_apart,pairs_apart_fraction,pairs_apart_low,pairs_apart_high\n",
    );
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    for line in &coverage.lines {
        let stats = &line.stats;
        let (rate, fraction) = match line.scope {
            Scope::Point { rate, fraction } => (Some(rate), fraction),
            Scope::Scenario | Scope::All => (None, None),
        };
        let fields = [
            csv_field(&line.method),
            csv_field(&line.scenario_id),
            csv_field(&line.label),
            number(rate),
            number(fraction),
            line.estimate.column().to_owned(),
            line.estimate.half_width_column().to_owned(),
            stats.n.to_string(),
            stats.tested.to_string(),
            stats.covered.to_string(),
            number(stats.coverage()),
            number(stats.coverage_interval().map(|(low, _)| low)),
            number(stats.coverage_interval().map(|(_, high)| high)),
            number(stats.sd_ratio()),
            stats.pairs.to_string(),
            stats.apart.to_string(),
            number(stats.apart_fraction()),
            number(stats.apart_interval().map(|(low, _)| low)),
            number(stats.apart_interval().map(|(_, high)| high)),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}
