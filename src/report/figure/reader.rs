//! Reading a figure axis from a row ([`Reader`]): a column, an intermediate, or a derived load,
//! and where the model's saturation point falls on a load axis.

use std::collections::HashMap;

use super::plot_row::PlotFields;
use super::plot_row::PlotRow;

/// Reads a figure axis from a row: a column, an intermediate, or a derived load
/// ([`DERIVED_COLUMNS`](crate::spec::columns::DERIVED_COLUMNS), and
/// `fraction_of_saturation` where the row lacks it).
pub(super) struct Reader {
    /// The model saturation rate of each scenario, from its rows.
    saturation: HashMap<String, f64>,
}

impl Reader {
    pub(super) fn new(rows: &[PlotRow<'_>]) -> Reader {
        let mut saturation = HashMap::new();
        for plot_row in rows {
            let row = plot_row.row;
            if let Some(rate) = row.saturation_rate.filter(|rate| rate.is_finite() && *rate > 0.0)
                && (&*row.method == "model" || !saturation.contains_key(&*row.scenario_id))
            {
                saturation.insert(row.scenario_id.to_string(), rate);
            }
        }
        Reader { saturation }
    }

    fn saturation_rate(&self, row: &PlotFields) -> Option<f64> {
        self.saturation.get(&*row.scenario_id).copied()
    }

    pub(super) fn value(&self, plot_row: &PlotRow<'_>, name: &str) -> Option<f64> {
        let row = plot_row.row;
        let value = match name {
            // A trace's exact flit load (its lengths vary; `message_length` is their rounded mean).
            "flit_rate" => {
                Some(row.trace_flit_load.unwrap_or(row.rate * f64::from(row.message_length)))
            }
            "fraction_of_saturation" => plot_row
                .number(name)
                .or_else(|| self.saturation_rate(row).map(|saturation| row.rate / saturation)),
            _ => plot_row.number(name),
        };
        value.filter(|value| value.is_finite())
    }

    /// The model's saturation point on an x axis of `name`, when it is a load.
    pub(super) fn saturation_x(&self, row: &PlotFields, name: &str) -> Option<f64> {
        let saturation = row.saturation_rate.filter(|rate| rate.is_finite() && *rate > 0.0);
        match name {
            "rate" => saturation,
            "flit_rate" => saturation.map(|rate| rate * f64::from(row.message_length)),
            "fraction_of_saturation" => saturation.map(|_| 1.0),
            _ => None,
        }
    }
}
