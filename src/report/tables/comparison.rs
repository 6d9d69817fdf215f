//! Building the per-load comparison table: the model rows and the aggregate simulation rows
//! paired by scenario and rate ([`load_points`]), side by side with the signed error and the
//! status of each point.

use super::model::{Cell, Table};
use super::scenario::{
    field_cells, field_columns, scenario_firsts, shared_description, varying_fields,
};
use super::{MAX_TABLE_ROWS, left_out};
use crate::report::agreement::{self, PointError};
use crate::report::{columns, headers};
use crate::store::row::Row;

/// One load point of one scenario: the model row and the aggregate simulation row at that
/// rate (either may be missing), in the order of the rows.
pub(super) struct LoadPoint<'a> {
    /// The first row of the point (for its scenario columns and rate).
    pub(super) first: &'a Row,
    pub(super) model: Option<&'a Row>,
    pub(super) simulation: Option<&'a Row>,
}

impl LoadPoint<'_> {
    /// The row that stands for the point's scenario and rate.
    pub(super) fn row(&self) -> &Row {
        self.first
    }
}

/// The model and aggregate simulation rows paired by scenario and rate, in row order.
///
/// An index by (scenario, rate) finds a row's point among its neighbours in rate, so a run of
/// many load points pairs in n log n steps, not n squared.
pub(super) fn load_points(rows: &[Row]) -> Vec<LoadPoint<'_>> {
    let mut points: Vec<LoadPoint<'_>> = Vec::new();
    let mut index: std::collections::BTreeMap<(&str, i64), Vec<usize>> =
        std::collections::BTreeMap::new();
    for row in rows {
        let model = row.method == "model";
        let aggregate = row.method == "simulation" && row.replication.is_none();
        if !(model || aggregate) {
            continue;
        }
        let scenario = row.scenario_id.as_str();
        // `same_rate` allows a relative 1e-9; look a little wider and let it decide.
        let (low, high) = if row.rate.is_finite() {
            let margin = 2e-9 * row.rate.abs();
            (rate_key(row.rate - margin), rate_key(row.rate + margin))
        } else {
            (rate_key(row.rate), rate_key(row.rate))
        };
        let existing = index
            .range((scenario, low)..=(scenario, high))
            .flat_map(|(_, at)| at.iter().copied())
            .find(|&at| {
                let point = &points[at];
                crate::report::agreement::same_rate(point.row().rate, row.rate)
                    && if model { point.model.is_none() } else { point.simulation.is_none() }
            });
        match existing {
            Some(at) if model => points[at].model = Some(row),
            Some(at) => points[at].simulation = Some(row),
            None => {
                index.entry((scenario, rate_key(row.rate))).or_default().push(points.len());
                points.push(LoadPoint {
                    first: row,
                    model: model.then_some(row),
                    simulation: (!model).then_some(row),
                });
            }
        }
    }
    points
}

/// A key that orders rates as numbers (the IEEE bits, negative values flipped).
fn rate_key(rate: f64) -> i64 {
    let bits = rate.to_bits() as i64;
    if bits < 0 { bits ^ i64::MAX } else { bits }
}

/// What a load point's status column says: `ok`, which side is not, or `both saturated`.
fn point_status(point: &LoadPoint<'_>) -> String {
    if let (Some(model), Some(simulation)) = (point.model, point.simulation)
        && model.status != "ok"
        && model.status == simulation.status
    {
        return format!("both {}", model.status);
    }
    let mut parts = Vec::new();
    if let Some(model) = point.model.filter(|row| row.status != "ok") {
        parts.push(format!("model {}", model.status));
    }
    if let Some(simulation) = point.simulation.filter(|row| row.status != "ok") {
        parts.push(format!("simulation {}", simulation.status));
    }
    if parts.is_empty() { "ok".to_owned() } else { parts.join(", ") }
}

/// The signed relative latency error of a point with its interval, when both sides were
/// compared.
pub(super) fn point_comparison(point: &LoadPoint<'_>) -> Option<PointError> {
    match agreement::compare(point.model?, point.simulation?) {
        agreement::Comparison::Error(error) => Some(error),
        _ => None,
    }
}

/// The signed relative latency error of a point, when both sides were compared.
fn point_error(point: &LoadPoint<'_>) -> Option<f64> {
    point_comparison(point).map(|point| point.error)
}

/// The per-load comparison table: for every scenario and rate, the model latency, the
/// simulated mean with its 95% interval, the signed error and the status, side by side; one
/// row per (model row, aggregate simulation row) pair of `results.parquet`, the scenario named
/// by its fields that vary.
pub(crate) fn comparison_table(rows: &[Row]) -> Table {
    let points = load_points(rows);
    let firsts = scenario_firsts(points.iter().map(LoadPoint::row));
    let fields =
        varying_fields(&firsts.iter().map(|row| columns::to_json(row)).collect::<Vec<_>>());
    let has_load = points.iter().any(|point| point.row().fraction_of_saturation.is_some());
    let mut table_columns = field_columns(&fields);
    table_columns.push(headers::column("rate", true));
    if has_load {
        table_columns.push(headers::column("fraction_of_saturation", true));
    }
    table_columns.push(headers::column("model_latency", true));
    table_columns.push(headers::column("simulation_latency_ci", true));
    table_columns.push(headers::column("signed_error", true));
    table_columns.push(headers::column("status", false));
    // Only the rows the pages show are turned into cells (see `bound`).
    let table_rows = points
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|point| {
            let row = point.row();
            let mut cells = field_cells(&columns::to_json(row), &fields);
            cells.push(Cell::number(Some(row.rate)));
            if has_load {
                cells.push(Cell::number(
                    point
                        .model
                        .and_then(|m| m.fraction_of_saturation)
                        .or(row.fraction_of_saturation),
                ));
            }
            cells.push(Cell::number(point.model.and_then(columns::comparable_model_latency)));
            cells.push(Cell::with_interval(
                point.simulation.and_then(|s| s.latency),
                point.simulation.and_then(|s| s.latency_ci95),
            ));
            cells.push(Cell::signed_percent(point_error(point)));
            cells.push(Cell::text(point_status(point)));
            cells
        })
        .collect();
    let mut note = String::from(
        "Mean latency per load point: the model, and the simulation's mean over replications \
         \u{b1} its 95% confidence half-width. Error: (model \u{2212} simulation) / simulation \
         in percent, where both are stable (an imprecise simulation, one short of its target \
         precision, included: its status says so); positive where the model is pessimistic. \
         tables/comparison.csv adds the error's 95% interval and whether it is within the \
         agreement tolerance.",
    );
    if points.iter().filter_map(|point| point.model).any(|m| model_latency_column(m) != "latency") {
        note.push_str(
            " Without broadcasts in the traffic the simulation measures unicasts, so the model \
             column is the model's unicast latency (unicast_latency in results.parquet).",
        );
    }
    let shared = shared_description(firsts.first().copied(), &fields);
    if !shared.is_empty() {
        note.push_str(&format!(" All rows: {shared}."));
    }
    if points.is_empty() {
        note = "No model or simulation results.".to_owned();
    } else if points.len() > MAX_TABLE_ROWS {
        note.push_str(&left_out(MAX_TABLE_ROWS, points.len(), "comparison"));
    }
    Table { scenario_columns: fields.len(), ..Table::new(table_columns, table_rows, note) }
}

/// Which column of the model row the comparison reads its latency from: `unicast_latency`
/// where the traffic has no broadcasts and the model reports unicasts apart (see
/// [`columns::comparable_model_latency`]), else `latency`.
pub(super) fn model_latency_column(model: &Row) -> &'static str {
    let unicast = columns::comparable_model_latency(model) == model.unicast_latency
        && model.unicast_latency.is_some()
        && model.unicast_latency != model.latency;
    if unicast { "unicast_latency" } else { "latency" }
}
