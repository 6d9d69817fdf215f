//! The display model of a table: a [`Table`] of [`Column`] headers and [`Cell`]s.
//!
//! The table builders (the sibling modules `agreement`, `comparison`, `coverage` and `results`,
//! and `report/saturation.rs`) fill this model with display cells; the renderers (`tex`,
//! `markdown`, and the HTML page's template) read it, each with its own escaping.

use serde::Serialize;

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
}

impl Table {
    pub(in crate::report) fn new(
        columns: Vec<Column>,
        rows: Vec<Vec<Cell>>,
        note: String,
    ) -> Table {
        Table { columns, rows, note: Some(note), ..Table::default() }
    }

    /// Leaves out the columns past the scenario columns where every row misses its value.
    pub(in crate::report) fn drop_empty_columns(&mut self) {
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
    pub(in crate::report) fn text(text: impl Into<String>) -> Self {
        Cell { text: text.into(), sort: None, blank: false }
    }

    pub(in crate::report) fn number(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => Cell { text: format_number(value), sort: Some(value), blank: false },
            None => Cell::missing(),
        }
    }

    /// A fraction shown as a percentage without the sign (the header says `(%)`).
    pub(super) fn percent(value: Option<f64>) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => {
                Cell { text: format!("{:.1}", 100.0 * value), sort: Some(value), blank: false }
            }
            None => Cell::missing(),
        }
    }

    /// A fraction as a percentage with its sign always shown (`+4.2`, `\u{2212}3.1`).
    pub(super) fn signed_percent(value: Option<f64>) -> Self {
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
        Cell { text, sort: Some(mean), blank: false }
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
        Cell { text, sort: Some(value), blank: false }
    }

    /// A number with a fixed count of decimals (`1.25`).
    pub(super) fn fixed(value: Option<f64>, decimals: usize) -> Self {
        match value.filter(|value| value.is_finite()) {
            Some(value) => {
                Cell { text: format!("{value:.decimals$}"), sort: Some(value), blank: false }
            }
            None => Cell::missing(),
        }
    }

    pub(in crate::report) fn count(value: usize) -> Self {
        Cell { text: value.to_string(), sort: Some(value as f64), blank: false }
    }

    fn missing() -> Self {
        Cell { text: String::new(), sort: None, blank: false }
    }

    pub(super) fn blank() -> Self {
        Cell { text: String::new(), sort: None, blank: true }
    }
}
