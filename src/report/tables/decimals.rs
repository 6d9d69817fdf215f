//! One count of decimals per number column of a display table ([`fix`]), so that `47.6` never
//! sits above `38.47`: chosen from the column's unit and the data's precision, the same for
//! every row. The CSV files keep every digit; this is the Markdown's, the LaTeX's and the
//! page's.
//!
//! - A column (or a unit) with 95% half-widths: enough decimals to show the leading digit of
//!   every row's half-width (`39.7 \u{b1} 0.4` and `141.0 \u{b1} 12.3`, not `141 \u{b1} 12`).
//! - Otherwise three significant digits of each value, fewer where the value is exact with
//!   fewer (`0.05`, `0.1`, `8`), and, in a swept column (a scenario field, the rate, the load),
//!   as many as it takes to tell the values of one scenario apart.
//! - Number columns of one unit share one count (an interval's, else a swept column's, else
//!   the largest), so that a model latency lines up with the simulated one and a throughput
//!   with its rate.

use super::model::{Digits, Table};

/// The most decimals a column gets (a rate of 1e-7 shows as `0.00000010`).
const MOST: usize = 8;

/// The significant digits a value without an interval keeps (at least).
const SIGNIFICANT: i32 = 3;

/// Rewrites every number cell (`Digits::Number`, `Digits::Interval`) of `table` with its
/// column's count of decimals.
pub(super) fn fix(table: &mut Table) {
    let counts: Vec<Option<Count>> =
        (0..table.columns.len()).map(|i| column_count(table, i)).collect();
    // One count per unit: an interval count wins over the others, then a swept column's, then
    // the largest.
    let mut shared: Vec<Option<usize>> =
        counts.iter().map(|count| count.map(Count::decimals)).collect();
    for (i, column) in table.columns.iter().enumerate() {
        if column.unit.is_empty() {
            continue;
        }
        let same_unit = || {
            table
                .columns
                .iter()
                .enumerate()
                .filter(|(_, other)| other.unit == column.unit)
                .filter_map(|(j, _)| counts[j])
        };
        let intervals = same_unit().filter_map(|count| count.interval).max();
        // A rate's decimals serve the throughputs beside it (a near-zero throughput of a
        // deadlocked point would otherwise stretch them all).
        let swept = same_unit().filter(|count| count.sweep).map(Count::decimals).max();
        let largest = || same_unit().map(Count::decimals).max().unwrap_or(0);
        shared[i] = shared[i].map(|_| intervals.or(swept).unwrap_or_else(largest));
    }
    for row in &mut table.rows {
        for (cell, decimals) in row.iter_mut().zip(&shared) {
            let (Some(decimals), Some(value)) = (decimals, cell.sort) else { continue };
            let decimals = *decimals;
            match cell.digits {
                Digits::Kept => {}
                Digits::Number => cell.text = format!("{value:.decimals$}"),
                Digits::Interval(half) => {
                    cell.text = format!("{value:.decimals$} \u{b1} {half:.decimals$}");
                }
            }
        }
    }
}

/// A column's own decimals: from its half-widths where it has some, else from its values.
#[derive(Clone, Copy, Debug)]
struct Count {
    interval: Option<usize>,
    values: usize,
    sweep: bool,
}

impl Count {
    fn decimals(self) -> usize {
        self.interval.unwrap_or(self.values)
    }
}

/// The decimals column `i` needs (`None` for a column without number cells).
fn column_count(table: &Table, i: usize) -> Option<Count> {
    let column = &table.columns[i];
    let cells = || {
        table
            .rows
            .iter()
            .filter_map(|row| row.get(i))
            .filter(|cell| cell.digits != Digits::Kept && cell.sort.is_some())
    };
    cells().next()?;
    let interval = cells()
        .filter_map(|cell| match cell.digits {
            Digits::Interval(half) if half > 0.0 => Some(leading_digit(half)),
            _ => None,
        })
        .max();
    let mut values = cells()
        .filter_map(|cell| cell.sort)
        .map(|value| exact(value).min(significant_decimals(value, SIGNIFICANT)))
        .max()
        .unwrap_or(0);
    if column.sweep {
        values = values.max(apart(table, i));
    }
    Some(Count { interval, values, sweep: column.sweep })
}

/// The decimals that show the leading digit of `half` (`0.38` 1, `12` 0, `0.00006` 5).
fn leading_digit(half: f64) -> usize {
    (-half.log10().floor()).clamp(0.0, MOST as f64) as usize
}

/// The decimals that show `significant` significant digits of `value` (none for zero).
fn significant_decimals(value: f64, significant: i32) -> usize {
    if value == 0.0 {
        return 0;
    }
    (significant - 1 - value.abs().log10().floor() as i32).clamp(0, MOST as i32) as usize
}

/// The fewest decimals that write `value` exactly (up to a relative 1e-9; [`MOST`] if none).
fn exact(value: f64) -> usize {
    (0..MOST)
        .find(|&decimals| {
            let scale = 10f64.powi(decimals as i32);
            ((value * scale).round() / scale - value).abs() <= 1e-9 * value.abs().max(1e-300)
        })
        .unwrap_or(MOST)
}

/// The fewest decimals that keep column `i`'s distinct values apart: among the rows of one
/// scenario (equal key cells to its left), or among all rows for a key column itself.
fn apart(table: &Table, i: usize) -> usize {
    let keys = table.scenario_columns.min(i);
    let scenario = |row: &[super::Cell]| -> Vec<String> {
        row[..keys.min(row.len())].iter().map(|cell| cell.text.clone()).collect()
    };
    let mut groups: std::collections::BTreeMap<Vec<String>, Vec<f64>> =
        std::collections::BTreeMap::new();
    for (index, row) in table.rows.iter().enumerate() {
        if table.summary_from.is_some_and(|from| index >= from) {
            continue;
        }
        if let Some(value) =
            row.get(i).filter(|cell| cell.digits != Digits::Kept).and_then(|cell| cell.sort)
        {
            groups.entry(scenario(row)).or_default().push(value);
        }
    }
    groups
        .values_mut()
        .map(|values| {
            values.sort_by(f64::total_cmp);
            values.dedup();
            (0..=MOST)
                .find(|&decimals| {
                    let mut texts: Vec<String> =
                        values.iter().map(|value| format!("{value:.decimals$}")).collect();
                    texts.dedup();
                    texts.len() == values.len()
                })
                .unwrap_or(MOST)
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::model::{Cell, Column, Table};
    use super::*;

    fn column(unit: &'static str, sweep: bool) -> Column {
        Column {
            header: "x".into(),
            tex: "x".into(),
            tex_second: String::new(),
            numeric: true,
            in_tex: true,
            unit,
            sweep,
        }
    }

    fn texts(table: &Table, i: usize) -> Vec<&str> {
        table.rows.iter().map(|row| row[i].text.as_str()).collect()
    }

    #[test]
    fn a_column_of_latencies_shows_every_half_width_s_leading_digit_in_every_row() {
        let mut table = Table::new(
            vec![column("cycles", false), column("cycles", false)],
            vec![
                vec![Cell::number(Some(38.47)), Cell::with_interval(Some(39.67), Some(0.38))],
                vec![Cell::number(Some(47.6)), Cell::with_interval(Some(141.2), Some(12.3))],
            ],
            String::new(),
        );
        fix(&mut table);
        assert_eq!(texts(&table, 0), ["38.5", "47.6"]);
        assert_eq!(texts(&table, 1), ["39.7 \u{b1} 0.4", "141.2 \u{b1} 12.3"]);
    }

    #[test]
    fn rates_get_the_decimals_that_tell_the_sweep_apart_and_throughputs_share_them() {
        let mut table = Table::new(
            vec![column("msg/node/cycle", true), column("msg/node/cycle", false)],
            [(0.0008572, 0.0008586), (0.00226, 0.002251), (0.003662, 0.003593)]
                .iter()
                .map(|&(rate, throughput)| {
                    vec![Cell::number(Some(rate)), Cell::number(Some(throughput))]
                })
                .collect(),
            String::new(),
        );
        fix(&mut table);
        assert_eq!(texts(&table, 0), ["0.000857", "0.002260", "0.003662"]);
        assert_eq!(texts(&table, 1), ["0.000859", "0.002251", "0.003593"]);
        // Exact values keep their few decimals; close ones get as many as tell them apart.
        let mut table = Table::new(
            vec![column("", true)],
            [0.0, 0.1, 0.2, 0.05].iter().map(|&v| vec![Cell::number(Some(v))]).collect(),
            String::new(),
        );
        fix(&mut table);
        assert_eq!(texts(&table, 0), ["0.00", "0.10", "0.20", "0.05"]);
        // A ratio keeps three significant digits.
        let mut table = Table::new(
            vec![column("", false)],
            [1.06, 1.087, 1.106].iter().map(|&v| vec![Cell::number(Some(v))]).collect(),
            String::new(),
        );
        fix(&mut table);
        assert_eq!(texts(&table, 0), ["1.06", "1.09", "1.11"]);
        let mut table = Table::new(
            vec![column("", true)],
            [0.5001, 0.5002].iter().map(|&v| vec![Cell::number(Some(v))]).collect(),
            String::new(),
        );
        fix(&mut table);
        assert_eq!(texts(&table, 0), ["0.5001", "0.5002"]);
    }

    #[test]
    fn kept_cells_keep_their_text() {
        let mut table = Table::new(
            vec![column("%", false)],
            vec![vec![Cell::signed_percent(Some(0.1234))], vec![Cell::count(3)]],
            String::new(),
        );
        fix(&mut table);
        assert_eq!(texts(&table, 0), ["+12.3", "3"]);
    }
}
