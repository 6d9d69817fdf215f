//! The tables as CSV: raw, unrounded values for further analysis, written from the rows and
//! the agreement (not from the rounded display [`Table`](super::Table)); the results CSV has
//! every column of every row, per-replication rows included. Also CSV quoting
//! ([`csv_field`]), which the figures' and the saturation table's CSVs use too.

use serde_json::Value;

use super::comparison::{load_points, model_latency_column, point_comparison};
use super::invisible::sanitize;
use crate::report::agreement::Agreement;
use crate::report::columns::{self, COLUMNS};
use crate::store::row::Row;

/// The per-load comparison as CSV, unrounded, with the scenario id for joins, the model row's
/// column the model latency comes from (`latency` or `unicast_latency`) and, last, the error's
/// 95% interval and where it lies against the agreement tolerance (`within`, `outside`,
/// `undecided`; see `report::agreement`).
pub(crate) fn comparison_csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "scenario_id,scenario,rate,fraction_of_saturation,model_latency,model_status,\
         simulation_latency,simulation_latency_ci95,simulation_replications,simulation_status,\
         signed_relative_error,model_latency_column,signed_relative_error_low,\
         signed_relative_error_high,tolerance_verdict\n",
    );
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    for point in load_points(rows) {
        let row = point.row();
        let compared = point_comparison(&point);
        let json = columns::to_json(row);
        let fields = [
            csv_field(&row.scenario_id),
            csv_field(&columns::describe(&json, columns::DESCRIBE_COLUMNS)),
            row.rate.to_string(),
            number(
                point.model.and_then(|m| m.fraction_of_saturation).or(row.fraction_of_saturation),
            ),
            number(point.model.and_then(columns::comparable_model_latency)),
            point.model.map(|m| m.status.clone()).unwrap_or_default(),
            number(point.simulation.and_then(|s| s.latency)),
            number(point.simulation.and_then(|s| s.latency_ci95)),
            number(point.simulation.and_then(|s| s.replications).map(f64::from)),
            point.simulation.map(|s| s.status.clone()).unwrap_or_default(),
            number(compared.map(|point| point.error)),
            point.model.map(model_latency_column).unwrap_or_default().to_owned(),
            number(compared.and_then(|point| point.interval).map(|(low, _)| low)),
            number(compared.and_then(|point| point.interval).map(|(_, high)| high)),
            compared.map(|point| point.verdict().as_str()).unwrap_or_default().to_owned(),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// Every column of every row as CSV, unrounded, written row by row.
pub(crate) fn write_results_csv(rows: &[Row], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let header = COLUMNS.iter().map(|(name, _)| csv_field(name)).collect::<Vec<_>>().join(",");
    writeln!(out, "{header}")?;
    for row in rows {
        let json = columns::to_json(row);
        let fields: Vec<String> = COLUMNS
            .iter()
            .map(|(name, _)| match json.get(*name) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => csv_field(text),
                Some(other) => csv_field(&other.to_string()),
            })
            .collect();
        writeln!(out, "{}", sanitize(fields.join(",")))?;
    }
    Ok(())
}

/// The agreement table as CSV with raw fractions, one row per scenario and load band (the
/// overall rows have an empty `scenario_id`).
pub(crate) fn agreement_csv(agreement: &Agreement) -> String {
    let paired = agreement.paired();
    let mut out = String::from(if paired { "compared," } else { "" });
    out.push_str(
        "scenario_id,scenario,load_band,points,bias,mean_abs_relative_error,\
         max_abs_relative_error,simulation_unstable,model_unstable,not_compared,imprecise,\
         within_tolerance,outside_tolerance,undecided\n",
    );
    let number = |value: Option<f64>| value.map(|value| value.to_string()).unwrap_or_default();
    for scenario in agreement.scenarios.iter().chain(&agreement.overall) {
        for (band, stats) in [("light", &scenario.light), ("near_saturation", &scenario.near)] {
            if paired {
                out.push_str(&csv_field(scenario.pair.as_deref().unwrap_or_default()));
                out.push(',');
            }
            let fields = [
                csv_field(&scenario.scenario_id),
                csv_field(&scenario.label),
                band.to_owned(),
                stats.points.to_string(),
                number(stats.bias),
                number(stats.mean),
                number(stats.max),
                stats.simulation_unstable.to_string(),
                stats.model_unstable.to_string(),
                stats.not_compared.to_string(),
                stats.imprecise.to_string(),
                stats.within.to_string(),
                stats.outside.to_string(),
                stats.undecided.to_string(),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

pub(in crate::report) fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}
