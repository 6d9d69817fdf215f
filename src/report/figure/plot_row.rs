//! The rows a figure reads ([`PlotRow`]): each row with a JSON view of the columns the figures
//! read (by column name), its scenario's columns shared by the scenario's rows.

use serde_json::Value;

use crate::report::columns;
use crate::spec::report::FigureSpec;
use crate::store::row::Row;

/// One plotted row: the row and a JSON view of the columns the figures read (for access by
/// column name). The scenario columns, the same for every row of a scenario, are shared per
/// scenario, so a run of many load points does not hold a JSON copy of every row.
pub(crate) struct PlotRow<'a> {
    /// The row.
    pub(crate) row: &'a Row,
    /// The row's columns the figures read that do not describe the scenario, as a JSON object.
    pub(crate) json: Value,
    /// The row's scenario columns, as a JSON object shared by the scenario's rows.
    pub(crate) scenario: &'a Value,
}

impl PlotRow<'_> {
    /// The JSON object holding `column`.
    fn source(&self, column: &str) -> &Value {
        if columns::SCENARIO_COLUMNS.contains(&column) { self.scenario } else { &self.json }
    }

    pub(super) fn text(&self, column: &str) -> Option<String> {
        columns::shown_text(self.source(column), column)
    }

    pub(super) fn number(&self, column: &str) -> Option<f64> {
        columns::number(self.source(column), column)
    }
}

/// The columns of `row` the figures of `specs` read that do not describe the scenario, as a
/// JSON object (see [`PlotRow`]).
/// `columns` is [`plot_columns`] of the specs.
pub(crate) fn plot_json(row: &Row, columns: &[&str]) -> Value {
    columns::pick_json(row, columns)
}

/// The columns [`plot_json`] keeps: those the figures of `specs` read (axes, panels, lines,
/// and `intermediates` for an intermediate axis) that do not describe the scenario.
pub(crate) fn plot_columns(specs: &[FigureSpec]) -> Vec<String> {
    let Value::Object(all) = columns::to_json(&Row::default()) else { return Vec::new() };
    all.into_iter()
        .map(|(key, _)| key)
        .filter(|key| {
            !columns::SCENARIO_COLUMNS.contains(&key.as_str())
                && specs.iter().any(|spec| {
                    spec.x == *key
                        || spec.y == *key
                        || spec.panels.contains(key)
                        || spec.lines.contains(key)
                        || (key == "intermediates"
                            && [&spec.x, &spec.y]
                                .iter()
                                .any(|axis| axis.starts_with(columns::INTERMEDIATE_PREFIX)))
                })
        })
        .collect()
}

/// The scenario columns of `row` as a JSON object (see [`PlotRow`]).
pub(crate) fn scenario_json(row: &Row) -> Value {
    let mut json = columns::to_json(row);
    if let Value::Object(map) = &mut json {
        map.retain(|key, _| columns::SCENARIO_COLUMNS.contains(&key.as_str()));
    }
    json
}
