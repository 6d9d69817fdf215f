//! Tables: the agreement, comparison and results tables as CSV, LaTeX (booktabs) and Markdown.
//!
//! Building apart from rendering. A [`Table`] holds display cells (`model`); the builders fill
//! it from the results, naming each scenario by its fields that vary (`scenario`): the
//! agreement table (`agreement`), the per-load comparison (`comparison`), the coverage of the
//! simulation's intervals (`coverage`, from `report/coverage.rs`) and the results table
//! (`results`); `report/saturation.rs` builds one more. Each format renders it with its
//! own escaping: LaTeX (`tex`, with `tex_escape`), Markdown (`markdown`), and the HTML page
//! through its template. The CSV files (`csv`) carry raw, unrounded values for further
//! analysis, written from the rows rather than the display cells, every key on every row; the
//! results CSV has every column of every row, including per-replication rows. Everything
//! written is stripped of invisible format characters first (`invisible`). The page, the
//! Markdown and the LaTeX show at most [`MAX_TABLE_ROWS`] rows of a table, each number column
//! with one count of decimals (`decimals`) and without the columns that are empty or hold one
//! value throughout, which the note names instead ([`finish`]); the Markdown and the LaTeX
//! leave a key cell that repeats the row above blank. The agreement table also comes compact
//! ([`agreement_compact_table`]), for one column of a two-column page.

mod agreement;
mod comparison;
mod coverage;
mod csv;
mod decimals;
mod invisible;
mod markdown;
mod model;
mod results;
pub(super) mod scenario;
mod tex;
mod tex_escape;

pub(crate) use agreement::{agreement_compact_table, agreement_table};
pub(crate) use comparison::comparison_table;
pub(crate) use coverage::{coverage_csv, coverage_table};
pub(super) use csv::csv_field;
pub(crate) use csv::{agreement_csv, comparison_csv, write_results_csv};
#[cfg(test)]
pub(crate) use invisible::is_invisible_format;
pub(crate) use invisible::sanitize;
pub(crate) use markdown::{md_escape, to_markdown};
pub(crate) use model::{Cell, Column, Table};
pub(crate) use results::results_table;
pub(crate) use scenario::{field_cells, field_columns, varying_fields};
pub(crate) use tex::to_tex;
#[cfg(test)]
pub(crate) use tex::{TEX_LONGTABLE_ROWS, TEX_NEEDS};
pub(crate) use tex_escape::tex_escape;

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

/// Prepares `table` for the page, the Markdown and the LaTeX: at most [`MAX_TABLE_ROWS`] rows
/// ([`bound`]), then [`Table::finish`] (one count of decimals per number column; the empty
/// and constant columns into the note).
pub(crate) fn finish(table: &mut Table, stem: &str) {
    bound(table, stem);
    table.finish();
}

/// Cuts `table` to [`MAX_TABLE_ROWS`] rows, saying so in its note.
fn bound(table: &mut Table, stem: &str) {
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
