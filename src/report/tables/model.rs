//! The display model of a table: a [`Table`] of [`Column`] headers and [`Cell`]s.
//!
//! The table builders (the sibling modules `agreement`, `comparison`, `coverage` and `results`,
//! and `report/saturation.rs`) fill this model with display cells; the renderers (`tex`,
//! `markdown`, and the HTML page's template) read it, each with its own escaping.
//!
//! Between the two, [`Table::finish`] prepares the display: every number column gets one
//! count of decimals for all its rows (`decimals`), and the columns with one value in every
//! row, or none, leave the table for a sentence of its note ("Replications: 4 throughout").
//! [`Table::repeats`] says which key cells repeat the row above, which the Markdown and the
//! LaTeX leave blank (the CSV and the page's sortable table repeat them).

use serde::Serialize;

use super::decimals;
use crate::report::columns::format_number;

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
    /// Where the LaTeX goes in a paper.
    #[serde(skip)]
    pub(crate) float: Float,
}

/// Where a table's LaTeX goes in a two-column paper, which its header comment says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Float {
    /// A `tabular` for a `table` float up to `TEX_LONGTABLE_ROWS` rows, a `longtable` (one
    /// column mode only) beyond.
    #[default]
    Any,
    /// A `tabular` for a `table` float, one column of a two-column page (252 pt in IEEEtran),
    /// however many rows.
    Column,
    /// A `tabular` for a `table*` float across both columns (516 pt), however many rows.
    Page,
}

impl Table {
    pub(in crate::report) fn new(
        columns: Vec<Column>,
        rows: Vec<Vec<Cell>>,
        note: String,
    ) -> Table {
        Table { columns, rows, note: Some(note), ..Table::default() }
    }

    /// How many leading columns name a row (the scenario fields, and the rate and load where
    /// the table repeats them): the columns a repeat blanks and [`Table::finish`] keeps.
    pub(crate) fn key_columns(&self) -> usize {
        self.scenario_columns.max(self.repeat_columns).min(self.columns.len())
    }

    /// Leaves out the columns past the key columns where every row misses its value.
    pub(in crate::report) fn drop_empty_columns(&mut self) {
        let keep: Vec<bool> = (0..self.columns.len()).map(|i| !self.is_empty_column(i)).collect();
        self.retain_columns(&keep);
    }

    /// Whether column `i` is past the key columns and every row (of at least one) misses its
    /// value.
    fn is_empty_column(&self, i: usize) -> bool {
        i >= self.key_columns()
            && !self.rows.is_empty()
            && self.rows.iter().all(|row| row.get(i).is_none_or(|cell| cell.text.is_empty()))
    }

    /// Keeps the columns whose `keep` is true, in every row.
    fn retain_columns(&mut self, keep: &[bool]) {
        let kept_before = |end: usize| keep[..end].iter().filter(|keep| **keep).count();
        self.scenario_columns = kept_before(self.scenario_columns.min(keep.len()));
        self.repeat_columns = kept_before(self.repeat_columns.min(keep.len()));
        let mut index = 0;
        self.columns.retain(|_| {
            index += 1;
            keep[index - 1]
        });
        for row in &mut self.rows {
            let mut index = 0;
            row.retain(|_| {
                index += 1;
                keep.get(index - 1).copied().unwrap_or(true)
            });
        }
    }

    /// Prepares the table for display: one count of decimals per number column (see
    /// `decimals`), and the columns past the key columns with no value, or with one value in
    /// every row of two or more, moved into the note: `Model unstable and not compared: 0
    /// throughout.`, `Empty in every row: throughput.`
    pub(crate) fn finish(&mut self) {
        decimals::fix(self);
        if self.rows.len() < 2 {
            return;
        }
        let mut constant: Vec<(String, Vec<String>)> = Vec::new();
        let mut empty: Vec<String> = Vec::new();
        let mut keep = vec![true; self.columns.len()];
        for (i, column) in self.columns.iter().enumerate().skip(self.key_columns()) {
            if self.is_empty_column(i) {
                empty.push(column.header.clone());
                keep[i] = false;
                continue;
            }
            // One value: the same text and, for numbers, the same value (`1.1` may round
            // 1.06 and 1.09).
            let first = &self.rows[0][i];
            let same = |cell: &Cell| cell.text == first.text && cell.sort == first.sort;
            if first.text.is_empty() || !self.rows.iter().all(|row| same(&row[i])) {
                continue;
            }
            keep[i] = false;
            match constant.iter_mut().find(|(value, _)| *value == first.text) {
                Some((_, headers)) => headers.push(column.header.clone()),
                None => constant.push((first.text.clone(), vec![column.header.clone()])),
            }
        }
        if keep.iter().all(|keep| *keep) {
            return;
        }
        let mut sentences: Vec<String> = constant
            .iter()
            .map(|(value, headers)| format!("{}: {value} throughout.", list(headers)))
            .collect();
        if !empty.is_empty() {
            sentences.push(format!("Empty in every row: {}.", lower_first(&list(&empty))));
        }
        let sentences = sentences.join(" ");
        match &mut self.note {
            Some(note) if !note.is_empty() => {
                note.push(' ');
                note.push_str(&sentences);
            }
            _ => self.note = Some(sentences),
        }
        self.retain_columns(&keep);
    }

    /// For every row, which cells the Markdown and the LaTeX leave blank: a key cell whose value
    /// and whose key cells to the left repeat the row above (`8 | 32 | ...` then ` |  | ...`).
    /// Summary rows repeat nothing and are repeated by nothing; a row after one compares with
    /// the last row before it.
    pub(crate) fn repeats(&self, shown: &[usize]) -> Vec<Vec<bool>> {
        let keys = self.key_columns();
        let mut previous: Option<&Vec<Cell>> = None;
        self.rows
            .iter()
            .enumerate()
            .map(|(index, row)| {
                let summary = self.summary_from.is_some_and(|from| index >= from);
                let mut repeating = !summary;
                let blanks = shown
                    .iter()
                    .map(|&i| {
                        repeating = repeating
                            && i < keys
                            && previous.is_some_and(|above| above[i].text == row[i].text);
                        repeating
                    })
                    .collect();
                if !summary {
                    previous = Some(row);
                }
                blanks
            })
            .collect()
    }
}

/// `A`, `A and b`, `A, b and c`: headers in a sentence, the first as it is, the others in
/// lower case where they start with a word.
fn list(headers: &[String]) -> String {
    let words: Vec<String> = headers
        .iter()
        .enumerate()
        .map(|(index, header)| if index == 0 { header.clone() } else { lower_first(header) })
        .collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => words.join(""),
    }
}

/// The first letter in lower case, unless the second is upper case too (`SD ratio`).
fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
            first.to_lowercase().chain(std::iter::once(second)).chain(chars).collect()
        }
        _ => text.to_owned(),
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
    /// The unit (`cycles`, `msg/node/cycle`; empty for a pure number or text): the number
    /// columns of one unit share their count of decimals, so that a model latency and a
    /// simulated one, or a rate and a throughput, line up.
    #[serde(skip)]
    pub(crate) unit: &'static str,
    /// Whether the column holds a swept or chosen value (a scenario field, the rate, the load)
    /// whose values must stay told apart when rounded.
    #[serde(skip)]
    pub(crate) sweep: bool,
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
    /// How [`Table::finish`] may rewrite the text with the column's decimals.
    #[serde(skip)]
    pub(crate) digits: Digits,
}

/// Whether a cell's text follows its column's count of decimals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) enum Digits {
    /// Text, a count or a number with its own fixed decimals (percentages): kept as it is.
    #[default]
    Kept,
    /// A number (`sort`), shown with the column's decimals.
    Number,
    /// A mean (`sort`) with its 95% half-width, `mean \u{b1} half`, both with the column's
    /// decimals, which show the half-width's leading digit.
    Interval(f64),
}

impl Cell {
    pub(in crate::report) fn text(text: impl Into<String>) -> Self {
        Cell { text: text.into(), sort: None, blank: false, digits: Digits::Kept }
    }

    /// A number with a value of its own (a count or a fixed-decimals figure), kept as `text`.
    fn kept(text: String, value: f64) -> Self {
        Cell { text, sort: Some(value), blank: false, digits: Digits::Kept }
    }

    /// A number, shown with its column's decimals once the table is finished (until then with
    /// four significant digits).
    pub(in crate::report) fn number(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => Cell {
                text: format_number(value),
                sort: Some(value),
                blank: false,
                digits: Digits::Number,
            },
            None => Cell::missing(),
        }
    }

    /// A fraction shown as a percentage without the sign (the header says `(%)`).
    pub(super) fn percent(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => Cell::kept(format!("{:.1}", 100.0 * value), value),
            None => Cell::missing(),
        }
    }

    /// A fraction as a percentage with its sign always shown (`+4.2`, `\u{2212}3.1`).
    pub(super) fn signed_percent(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => {
                let text = format!("{:+.1}", 100.0 * value).replace('-', "\u{2212}");
                Cell::kept(text, value)
            }
            None => Cell::missing(),
        }
    }

    /// A mean with its 95% confidence half-width, `42.1 \u{b1} 4.5`: the half-width to two
    /// significant digits and the mean to the same decimal place until the table is finished,
    /// then both with the column's decimals; the mean alone without a half-width. Sorts by
    /// the mean.
    pub(in crate::report) fn with_interval(mean: Option<f64>, half_width: Option<f64>) -> Self {
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
        Cell { text, sort: Some(mean), blank: false, digits: Digits::Interval(half_width) }
    }

    /// A fraction as a percentage with its interval in brackets, `94.0 [88.7, 98.4]`; sorts
    /// by the fraction. The fraction alone without an interval.
    pub(super) fn percent_with_interval(value: Option<f64>, interval: Option<(f64, f64)>) -> Self {
        let Some(value) = value.filter(|value| value.is_finite()) else { return Cell::missing() };
        let text = match interval {
            Some((low, high)) => {
                format!("{:.1} [{:.1}, {:.1}]", 100.0 * value, 100.0 * low, 100.0 * high)
            }
            None => format!("{:.1}", 100.0 * value),
        };
        Cell::kept(text, value)
    }

    /// A number with a fixed count of decimals (`1.25`).
    pub(super) fn fixed(value: Option<f64>, decimals: usize) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => Cell::kept(format!("{value:.decimals$}"), value),
            None => Cell::missing(),
        }
    }

    pub(in crate::report) fn count(value: usize) -> Self {
        Cell::kept(value.to_string(), value as f64)
    }

    fn missing() -> Self {
        Cell { text: String::new(), sort: None, blank: false, digits: Digits::Kept }
    }

    pub(super) fn blank() -> Self {
        Cell { text: String::new(), sort: None, blank: true, digits: Digits::Kept }
    }
}
