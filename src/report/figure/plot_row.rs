//! The rows a figure reads ([`PlotRow`]): of each row, the few fields the figures read by name
//! in the code and the columns they read by column name ([`PlotFields`]), with its scenario's
//! columns and first row, shared by the scenario's rows.
//!
//! A figure of a million load points holds a few hundred bytes of each, not its row (2 KB and
//! more): the report is built as the rows stream past (`report::Collector`), never holding
//! them all.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use crate::report::columns::{self, Lookup};
use crate::report::intervals::{self, Estimate};
use crate::spec::report::FigureSpec;
use crate::store::row::Row;

/// What the figures read of one row: the fields the figure code names, and the values of the
/// non-scenario columns the figures read by name ([`plot_columns`], in that order).
#[derive(Clone, Debug)]
pub(crate) struct PlotFields {
    pub(crate) method: Arc<str>,
    pub(crate) status: Arc<str>,
    pub(crate) scenario_id: Arc<str>,
    pub(crate) measure: Option<Arc<str>>,
    pub(crate) replication: Option<u32>,
    pub(crate) replications: Option<u32>,
    pub(crate) fault_rate: f64,
    pub(crate) message_length: u32,
    pub(crate) broadcast_fraction: f64,
    pub(crate) rate: f64,
    pub(crate) saturation_rate: Option<f64>,
    pub(crate) trace_flit_load: Option<f64>,
    pub(crate) latency: Option<f64>,
    pub(crate) unicast_latency: Option<f64>,
    /// `Row::is_dense`.
    pub(crate) dense: bool,
    /// The values of [`plot_columns`], in order.
    values: Box<[Value]>,
}

/// Shares the text of the fields many rows repeat (a method, a status, a scenario's id).
#[derive(Debug, Default)]
pub(crate) struct Interner(HashSet<Arc<str>>);

impl Interner {
    fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(text) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(text);
        self.0.insert(Arc::clone(&shared));
        shared
    }
}

impl PlotFields {
    /// What the figures read of `row`; `columns` is [`plot_columns`] of the figures.
    pub(crate) fn of(row: &Row, columns: &[String], interner: &mut Interner) -> PlotFields {
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut picked = match columns::pick_json(row, &names) {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        // Every name of `plot_columns` is a field of the row, so each is picked.
        let values =
            columns.iter().map(|name| picked.remove(name).unwrap_or(Value::Null)).collect();
        PlotFields {
            method: interner.get(&row.method),
            status: interner.get(&row.status),
            scenario_id: interner.get(&row.scenario_id),
            measure: row.measure.as_deref().map(|measure| interner.get(measure)),
            replication: row.replication,
            replications: row.replications,
            fault_rate: row.fault_rate,
            message_length: row.message_length,
            broadcast_fraction: row.broadcast_fraction,
            rate: row.rate,
            saturation_rate: row.saturation_rate,
            trace_flit_load: row.trace_flit_load,
            latency: row.latency,
            unicast_latency: row.unicast_latency,
            dense: row.is_dense(),
            values,
        }
    }

    /// The model's latency comparable to a simulation's (`columns::comparable_model_latency`).
    pub(crate) fn comparable_model_latency(&self) -> Option<f64> {
        columns::comparable_latency(self.broadcast_fraction, self.unicast_latency, self.latency)
    }
}

/// One plotted row: what the figures read of it, its scenario's columns as a JSON object and
/// its scenario's first row (for the conditions a caption states), both shared by the
/// scenario's rows.
pub(crate) struct PlotRow<'a> {
    pub(crate) row: &'a PlotFields,
    /// The names of `row`'s values ([`plot_columns`]).
    pub(crate) columns: &'a [String],
    /// The row's scenario columns, as a JSON object shared by the scenario's rows.
    pub(crate) scenario: &'a Value,
    /// The first row of the row's scenario (its scenario columns are the row's).
    pub(crate) scenario_row: &'a Row,
}

/// A plotted row's own columns, by name.
struct Own<'r, 'a>(&'r PlotRow<'a>);

impl Lookup for Own<'_, '_> {
    fn get(&self, name: &str) -> Option<&Value> {
        let index = self.0.columns.iter().position(|column| column == name)?;
        self.0.row.values.get(index)
    }
}

impl PlotRow<'_> {
    pub(crate) fn text(&self, column: &str) -> Option<String> {
        if columns::SCENARIO_COLUMNS.contains(&column) {
            columns::shown_text(self.scenario, column)
        } else {
            columns::shown_text(&Own(self), column)
        }
    }

    pub(crate) fn number(&self, column: &str) -> Option<f64> {
        if columns::SCENARIO_COLUMNS.contains(&column) {
            columns::number(self.scenario, column)
        } else {
            columns::number(&Own(self), column)
        }
    }

    /// The 95% half-width of column `column`'s value, where it has one (`report::intervals`:
    /// read from the half-width column that [`plot_columns`] keeps).
    pub(super) fn half_width(&self, column: &str) -> Option<f64> {
        let estimate = Estimate::of_column(column)?;
        intervals::usable(Own(self).get(estimate.half_width_column())?.as_f64())
    }
}

/// The columns [`PlotFields`] keeps: those the figures of `specs` read (axes, panels, lines,
/// `intermediates` for an intermediate axis, the half-width of a y axis that has one) that do
/// not describe the scenario.
pub(crate) fn plot_columns(specs: &[FigureSpec]) -> Vec<String> {
    let Value::Object(all) = columns::to_json(&Row::default()) else { return Vec::new() };
    let half_width =
        |spec: &FigureSpec| Estimate::of_column(&spec.y).map(Estimate::half_width_column);
    all.into_iter()
        .map(|(key, _)| key)
        .filter(|key| {
            !columns::SCENARIO_COLUMNS.contains(&key.as_str())
                && specs.iter().any(|spec| {
                    spec.x == *key
                        || spec.y == *key
                        || spec.panels.contains(key)
                        || spec.lines.contains(key)
                        || half_width(spec) == Some(key.as_str())
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
