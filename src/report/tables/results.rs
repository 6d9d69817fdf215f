//! Building the results table for display: the model rows and the aggregate simulation rows,
//! the scenario named by its fields that vary, the values all rows share in the note.

use super::model::{Cell, Column, Table};
use super::scenario::{
    field_cells, field_columns, scenario_firsts, shared_description, varying_fields,
};
use super::{MAX_TABLE_ROWS, left_out};
use crate::report::{columns, headers};
use crate::store::row::Row;

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
