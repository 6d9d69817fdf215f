//! Building the agreement table for display: per scenario and load band, how far the model (or
//! a compared method) is from the simulation, how many points are within the tolerance at 95%
//! confidence, outside it, or not decidable at the simulation's precision, and the note that
//! says how to read it. Two forms: the full table for a page-wide `table*`
//! ([`agreement_table`]) and a compact one for one column of a two-column page
//! ([`agreement_compact_table`]: the points, the bias, the mean and largest error and the
//! points within the tolerance).

use serde_json::Value;

use super::model::{Cell, Column, Float, Table};
use super::scenario::{field_cells, field_columns, varying_fields};
use crate::report::agreement::{Agreement, ErrorStats, LIGHT_LOAD_LIMIT, tolerance_text};
use crate::report::{columns, headers};

/// The statistics columns of the full table, by header key.
const FULL: &[&str] = &[
    "points",
    "imprecise_points",
    "bias",
    "mean_abs_error",
    "max_abs_error",
    "within_tolerance",
    "outside_tolerance",
    "undecided",
    "simulation_unstable",
    "model_unstable",
    "not_compared",
];

/// The statistics columns of the compact table.
const COMPACT: &[&str] = &["points", "bias", "mean_abs_error", "max_abs_error", "within_tolerance"];

/// The agreement table for display: one row per scenario and load band with matched points,
/// the scenario named by its fields that vary (no hash ids), then the rows of all scenarios
/// together. The signed bias shows which way the model errs. Its LaTeX is for a page-wide
/// `table*`.
pub(crate) fn agreement_table(agreement: &Agreement) -> Table {
    Table { float: Float::Page, ..build(agreement, FULL) }
}

/// The agreement table's compact form, for one column of a two-column page: the scenario, the
/// load band, the points, the bias, the mean and largest error and the points within the
/// tolerance; its note says where the other counts are.
pub(crate) fn agreement_compact_table(agreement: &Agreement) -> Table {
    let mut table = Table { float: Float::Column, ..build(agreement, COMPACT) };
    // Narrow LaTeX headers: `n`, and the errors' percent said once in the note.
    for column in &mut table.columns {
        let (tex, second) = match column.header.as_str() {
            "Points" => ("$n$", ""),
            "Mean |error| (%)" => ("Mean", "$|e|$"),
            "Max |error| (%)" => ("Max", "$|e|$"),
            _ => continue,
        };
        (column.tex, column.tex_second) = (tex.to_owned(), second.to_owned());
    }
    if let Some(note) = table.note.as_mut().filter(|_| agreement.empty_reason.is_none()) {
        note.insert_str(
            0,
            "The compact form of tables/agreement.tex, whose other columns count the points \
             outside the tolerance or undecided, the imprecise ones and those not compared. n: \
             the points compared; bias, mean |e| and max |e| in percent. ",
        );
    }
    table
}

/// The table with the statistics columns `stats` (header keys of [`FULL`]).
fn build(agreement: &Agreement, stats: &[&str]) -> Table {
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
    table_columns.push(headers::column("load_band", false));
    for key in stats {
        table_columns.push(tolerance_header(headers::column(key, true), key));
    }
    let bands = [(format!("\u{2264} {limit}"), false), (format!("> {limit}"), true)];
    let mut rows = Vec::new();
    let mut summary_from = None;
    let columns = stats;
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
            cells.push(Cell::text(band));
            cells.extend(columns.iter().map(|key| stat_cell(stats, key)));
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
             where lower (optimistic). {} Sim. unstable: the simulation saturated or deadlocked \
             where the model is finite; model unstable: the model saturated where the \
             simulation is stable; not compared: both unstable or a failed task.",
            verdict_sentences("model", "simulation")
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

/// The cell of statistics column `key` (a header key of [`FULL`]).
fn stat_cell(stats: &ErrorStats, key: &str) -> Cell {
    match key {
        "points" => Cell::count(stats.points),
        "imprecise_points" => Cell::count(stats.imprecise),
        "bias" => Cell::signed_percent(stats.bias),
        "mean_abs_error" => Cell::percent(stats.mean),
        "max_abs_error" => Cell::percent(stats.max),
        "within_tolerance" => Cell::count(stats.within),
        "outside_tolerance" => Cell::count(stats.outside),
        "undecided" => Cell::count(stats.undecided),
        "simulation_unstable" => Cell::count(stats.simulation_unstable),
        "model_unstable" => Cell::count(stats.model_unstable),
        _ => Cell::count(stats.not_compared),
    }
}

/// The within and outside columns' headers name the tolerance ([`tolerance_text`]): `Within
/// \u{b1}5% (95% conf.)`, in LaTeX `Within` over `$\pm$5\%`. Other columns stay as they are.
fn tolerance_header(mut column: Column, key: &str) -> Column {
    let word = match key {
        "within_tolerance" => "Within",
        "outside_tolerance" => "Outside",
        _ => return column,
    };
    let tolerance = tolerance_text();
    column.header = format!("{word} \u{b1}{tolerance} (95% conf.)");
    column.tex_second = format!("$\\pm${}", tolerance.replace('%', "\\%"));
    column
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
         saturated where {reference} is stable; not compared: both unstable or a failed task. \
         {} Where {compared} has a 95% interval of its own (a simulation), its relative \
         half-width is added to {reference}'s in quadrature first.",
        verdict_sentences(compared, reference)
    );
    for assumption in &agreement.assumption_notes {
        note.push(' ');
        note.push_str(assumption);
    }
    note
}

/// The sentences on imprecise points and on the error's own interval (`compared` against
/// `reference`, whose interval it is): what the points, imprecise and verdict columns mean.
fn verdict_sentences(compared: &str, reference: &str) -> String {
    let tolerance = tolerance_text();
    format!(
        "Points include the loads short of their target precision (imprecise, counted apart; \
         earlier versions of this table left them out and counted them as not compared), so the \
         points, the bias and the errors cover every load where both are stable. The error has \
         its own 95% interval, from the {reference}'s latency \u{b1} its 95% half-width h: \
         ({compared} \u{2212} ({reference} + h)) / ({reference} + h) to ({compared} \u{2212} \
         ({reference} \u{2212} h)) / ({reference} \u{2212} h). Within and outside \
         \u{b1}{tolerance}: points whose whole interval lies inside, or outside, \
         \u{b1}{tolerance} (at 95% confidence); undecided: the interval straddles \
         \u{b1}{tolerance}, so the {reference} is not precise enough to tell."
    )
}
