//! Model-vs-simulation agreement: relative latency error per scenario, split by load.
//!
//! Model rows and aggregate simulation rows (`replication = None`) are matched by
//! `scenario_id` and `rate`. For every matched point where both latencies are finite and
//! both statuses are `ok`, the relative error is |model - simulation| / simulation. The
//! papers report agreement separately for light and moderate load and near saturation, so
//! points are split at [`LIGHT_LOAD_LIMIT`] of the saturation rate: the load fraction is
//! `fraction_of_saturation` when the row has it, else `rate / saturation_rate`, else the rate
//! relative to the largest rate at which the model is still `ok` for that scenario.
//!
//! No model has an ejection term; each paper states what happens at the destination
//! ([`model::ModelInfo::ejection`]). Where the simulated scenario's `ejection` is not the
//! model paper's assumption, the table says so, since the error then includes the
//! ejection-port contention the model leaves out.

use std::collections::BTreeMap;

use serde_json::Value;

use super::columns;
use crate::model::{self, ModelName};
use crate::store::row::Row;

/// Loads up to this fraction of saturation count as light and moderate.
pub(crate) const LIGHT_LOAD_LIMIT: f64 = 0.7;

/// Agreement of one scenario (or of all scenarios together).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ScenarioAgreement {
    /// `scenario_id`, or empty for the overall row.
    pub(crate) scenario_id: String,
    /// Human-readable description of the scenario.
    pub(crate) label: String,
    /// Errors at light and moderate load.
    pub(crate) light: ErrorStats,
    /// Errors near saturation.
    pub(crate) near: ErrorStats,
}

/// Relative errors of a set of matched points.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ErrorStats {
    /// Matched points.
    pub(crate) points: usize,
    /// Mean relative error (a fraction, not a percentage).
    pub(crate) mean: Option<f64>,
    /// Largest relative error.
    pub(crate) max: Option<f64>,
    sum: f64,
}

impl ErrorStats {
    fn add(&mut self, error: f64) {
        self.points += 1;
        self.sum += error;
        self.mean = Some(self.sum / self.points as f64);
        self.max = Some(self.max.map_or(error, |max| max.max(error)));
    }

    fn merge(&mut self, other: &ErrorStats) {
        if other.points == 0 {
            return;
        }
        self.points += other.points;
        self.sum += other.sum;
        self.mean = Some(self.sum / self.points as f64);
        self.max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
}

/// The agreement table's content.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Agreement {
    /// One entry per scenario that has both model and simulation rows, in scenario order.
    pub(crate) scenarios: Vec<ScenarioAgreement>,
    /// All scenarios together (present when there are two or more).
    pub(crate) overall: Option<ScenarioAgreement>,
    /// Why the table is empty, when it is.
    pub(crate) empty_reason: Option<String>,
    /// What all compared scenarios share (`torus, k = 8, n = 2, ...`), when there are several.
    pub(crate) common: Option<String>,
    /// One sentence per (model, simulated ejection) pair where the simulation's ejection is not
    /// what the model's paper assumes.
    pub(crate) assumption_notes: Vec<String>,
}

/// Computes the agreement table from all rows.
pub(crate) fn compute(rows: &[Row]) -> Agreement {
    let model: Vec<&Row> = rows.iter().filter(|row| row.method == "model").collect();
    let simulation: Vec<&Row> =
        rows.iter().filter(|row| row.method == "simulation" && row.replication.is_none()).collect();
    if simulation.is_empty() {
        return Agreement {
            empty_reason: Some(
                "No simulation results in this run, so there is nothing to compare the model with."
                    .to_owned(),
            ),
            ..Agreement::default()
        };
    }
    if model.is_empty() {
        return Agreement {
            empty_reason: Some(
                "No model results in this run, so there is nothing to compare the simulation with."
                    .to_owned(),
            ),
            ..Agreement::default()
        };
    }
    let mut by_scenario: BTreeMap<&str, (Vec<&Row>, Vec<&Row>)> = BTreeMap::new();
    for row in &model {
        by_scenario.entry(row.scenario_id.as_str()).or_default().0.push(row);
    }
    for row in &simulation {
        by_scenario.entry(row.scenario_id.as_str()).or_default().1.push(row);
    }
    let compared: Vec<Value> = by_scenario
        .values()
        .filter(|(model_rows, sim_rows)| !model_rows.is_empty() && !sim_rows.is_empty())
        .filter_map(|(model_rows, _)| model_rows.first().map(|row| columns::to_json(row)))
        .collect();
    let (constant, varying) = columns::constant_and_varying(&compared);
    let mut agreement = Agreement::default();
    if compared.len() > 1 {
        agreement.common = compared.first().map(|json| columns::describe(json, &constant));
    }
    // (model, simulated ejection) -> (the model's description, scenarios compared).
    let mut mismatched: BTreeMap<(&'static str, String), (model::ModelInfo, usize)> =
        BTreeMap::new();
    for (scenario_id, (model_rows, sim_rows)) in by_scenario {
        let (Some(first_model), Some(first_sim)) = (model_rows.first(), sim_rows.first()) else {
            continue;
        };
        let model_name = first_model.evaluator.split('@').next().unwrap_or_default();
        if let Some(info) = ModelName::from_name(model_name).map(model::info)
            && first_sim.ejection != info.ejection.as_str()
        {
            let key = (info.name.as_str(), first_sim.ejection.clone());
            mismatched.entry(key).or_insert((info, 0)).1 += 1;
        }
        let max_ok_rate = model_rows
            .iter()
            .filter(|row| row.status == "ok")
            .map(|row| row.rate)
            .filter(|rate| rate.is_finite() && *rate > 0.0)
            .fold(None, |max: Option<f64>, rate| Some(max.map_or(rate, |max| max.max(rate))));
        let mut entry = ScenarioAgreement {
            scenario_id: scenario_id.to_owned(),
            label: if compared.len() > 1 {
                columns::describe(&columns::to_json(first_model), &varying)
            } else {
                columns::describe(&columns::to_json(first_model), columns::DESCRIBE_COLUMNS)
            },
            ..ScenarioAgreement::default()
        };
        for sim in &sim_rows {
            let Some(model_row) = model_rows.iter().find(|row| same_rate(row.rate, sim.rate))
            else {
                continue;
            };
            let (Some(model_latency), Some(sim_latency)) =
                (columns::comparable_model_latency(model_row), sim.latency)
            else {
                continue;
            };
            if model_row.status != "ok"
                || sim.status != "ok"
                || !model_latency.is_finite()
                || !sim_latency.is_finite()
                || sim_latency <= 0.0
            {
                continue;
            }
            let error = (model_latency - sim_latency).abs() / sim_latency;
            let fraction = load_fraction(model_row, sim, max_ok_rate);
            if fraction.is_some_and(|fraction| fraction > LIGHT_LOAD_LIMIT + 1e-12) {
                entry.near.add(error);
            } else {
                entry.light.add(error);
            }
        }
        agreement.scenarios.push(entry);
    }
    agreement.assumption_notes = mismatched
        .into_iter()
        .map(|((model_name, simulated), (info, count))| {
            let scenarios = if count == 1 { "scenario" } else { "scenarios" };
            format!(
                "{model_name} assumes ejection {} (its paper: \"{}\") but the simulation used \
                 ejection {simulated} in {count} {scenarios}, so those errors include the \
                 ejection-port difference the model does not describe (docs/validation.md).",
                info.ejection.as_str(),
                info.ejection_quote
            )
        })
        .collect();
    if agreement.scenarios.is_empty() {
        agreement.empty_reason = Some(
            "No scenario has both model and simulation results, so there is nothing to compare."
                .to_owned(),
        );
    } else if agreement.scenarios.len() > 1 {
        let mut overall =
            ScenarioAgreement { label: "All scenarios".to_owned(), ..ScenarioAgreement::default() };
        for scenario in &agreement.scenarios {
            overall.light.merge(&scenario.light);
            overall.near.merge(&scenario.near);
        }
        agreement.overall = Some(overall);
    }
    agreement
}

fn load_fraction(model: &Row, sim: &Row, max_ok_rate: Option<f64>) -> Option<f64> {
    model
        .fraction_of_saturation
        .or(sim.fraction_of_saturation)
        .filter(|fraction| fraction.is_finite())
        .or_else(|| {
            let saturation = model.saturation_rate.or(sim.saturation_rate)?;
            (saturation.is_finite() && saturation > 0.0).then(|| model.rate / saturation)
        })
        .or_else(|| max_ok_rate.map(|max| model.rate / max))
}

fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}
