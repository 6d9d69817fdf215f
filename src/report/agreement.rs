//! Model-vs-simulation agreement: signed and absolute relative latency error per scenario,
//! split by load, with the points where only one side is stable counted, not dropped.
//!
//! With external methods (`methods.external`) a run has more than two methods; [`pairs`]
//! compares every method with each simulation that comes after it in the order model,
//! external models, simulation, external simulations (the later one is the reference): the
//! model against the simulator and against BookSim, the simulator against BookSim. Below,
//! "model" is the compared method and "simulation" the reference.
//!
//! Model rows and aggregate simulation rows (`replication = None`) are matched by
//! `scenario_id` and `rate`. For every matched point where both latencies are finite and
//! both statuses are `ok` or `imprecise`, the signed relative error is (model - simulation) /
//! simulation: positive where the model is pessimistic (predicts a higher latency), negative
//! where it is optimistic. The table gives its mean (the bias), the mean of its absolute value
//! and the largest absolute value. A point short of its target precision (`imprecise`) stays
//! in these statistics and is counted apart (of which imprecise): its interval says how far
//! it got, and leaving it out would leave out the loads near saturation, where the models
//! differ most. A matched point where the simulation saturated or deadlocked while the model
//! is finite, or the model saturated while the simulation is stable, is counted as one-sided
//! instability; any other matched point that cannot be compared (both unstable, a failure, a
//! missing latency) is counted as not compared. Nothing is dropped silently.
//!
//! The error has an uncertainty of its own: the simulation's mean is `sim ± h` (95%), so the
//! error lies in [(model - (sim + h)) / (sim + h), (model - (sim - h)) / (sim - h)]
//! ([`error_interval`]; unbounded above when `h >= sim`). When the compared method is a
//! simulation too, its relative half-width is added to the reference's in quadrature first.
//! Each compared point is then within [`TOLERANCE`] at 95% confidence (its whole error
//! interval inside ±tolerance), outside it (the whole interval outside) or not decidable at
//! this precision (the interval straddles a bound, or the simulation has no interval).
//!
//! The papers report agreement separately for light and moderate load and near saturation, so
//! points are split at [`LIGHT_LOAD_LIMIT`] of the saturation rate: the load fraction is
//! `fraction_of_saturation` when the row has it, else `rate / saturation_rate`, else the rate
//! relative to the largest rate at which the model is still `ok` for that scenario.
//! Scenarios come in the order their rows do: the spec's expansion order, so by scenario fields.
//!
//! No model has an ejection term; each paper states what happens at the destination
//! ([`model::ModelInfo::ejection`]). Where the simulated scenario's `ejection` is not the
//! model paper's assumption, the table says so, since the error then includes the
//! ejection-port contention the model leaves out.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::columns;
use crate::model::{self, ModelName};
use crate::store::row::Row;

/// Loads up to this fraction of saturation count as light and moderate.
pub(crate) const LIGHT_LOAD_LIMIT: f64 = 0.7;

/// The agreement yardstick: a relative latency error within ±5% (`docs/validation.md`, "The
/// 5% yardstick"). The one place that names it: the tables' columns and captions read it here.
pub(crate) const TOLERANCE: f64 = 0.05;

/// The tolerance as the captions write it (`5%`).
pub(crate) fn tolerance_text() -> String {
    format!("{}%", columns::format_number(100.0 * TOLERANCE))
}

/// Agreement of one scenario (or of all scenarios together).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ScenarioAgreement {
    /// `scenario_id`, or empty for the overall row.
    pub(crate) scenario_id: String,
    /// Human-readable description of the scenario.
    pub(crate) label: String,
    /// The scenario's fields (its first model row as JSON; null for the overall row), from
    /// which the table takes the columns that tell scenarios apart.
    pub(crate) json: Value,
    /// Errors at light and moderate load.
    pub(crate) light: ErrorStats,
    /// Errors near saturation.
    pub(crate) near: ErrorStats,
    /// `A vs. B` when the table compares several pairs of methods.
    pub(crate) pair: Option<String>,
}

/// Relative errors of a set of matched points, and the points that could not be compared.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ErrorStats {
    /// Points compared (both sides `ok` or `imprecise`, and finite).
    pub(crate) points: usize,
    /// Of [`points`](Self::points), those where a side stopped short of its target precision.
    pub(crate) imprecise: usize,
    /// Compared points whose whole 95% error interval is within ±[`TOLERANCE`].
    pub(crate) within: usize,
    /// Compared points whose whole 95% error interval is outside ±[`TOLERANCE`].
    pub(crate) outside: usize,
    /// Compared points whose error interval straddles ±[`TOLERANCE`] (or that have none): not
    /// decidable at this precision.
    pub(crate) undecided: usize,
    /// Mean signed relative error (model - simulation) / simulation: the bias.
    pub(crate) bias: Option<f64>,
    /// Mean absolute relative error (a fraction, not a percentage).
    pub(crate) mean: Option<f64>,
    /// Largest absolute relative error.
    pub(crate) max: Option<f64>,
    /// Points where the simulation saturated or deadlocked while the model is finite.
    pub(crate) simulation_unstable: usize,
    /// Points where the model saturated while the simulation is stable.
    pub(crate) model_unstable: usize,
    /// Other matched points that could not be compared (both unstable, a failure, a missing
    /// latency).
    pub(crate) not_compared: usize,
    sum: f64,
    sum_abs: f64,
}

impl ErrorStats {
    fn add(&mut self, point: PointError) {
        let error = point.error;
        self.points += 1;
        self.imprecise += usize::from(point.imprecise);
        match point.verdict() {
            Verdict::Within => self.within += 1,
            Verdict::Outside => self.outside += 1,
            Verdict::Undecided => self.undecided += 1,
        }
        self.sum += error;
        self.sum_abs += error.abs();
        self.bias = Some(self.sum / self.points as f64);
        self.mean = Some(self.sum_abs / self.points as f64);
        self.max = Some(self.max.map_or(error.abs(), |max| max.max(error.abs())));
    }

    fn merge(&mut self, other: &ErrorStats) {
        self.simulation_unstable += other.simulation_unstable;
        self.model_unstable += other.model_unstable;
        self.not_compared += other.not_compared;
        self.imprecise += other.imprecise;
        self.within += other.within;
        self.outside += other.outside;
        self.undecided += other.undecided;
        if other.points == 0 {
            return;
        }
        self.points += other.points;
        self.sum += other.sum;
        self.sum_abs += other.sum_abs;
        self.bias = Some(self.sum / self.points as f64);
        self.mean = Some(self.sum_abs / self.points as f64);
        self.max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Matched points of any kind.
    pub(crate) fn matched(&self) -> usize {
        self.points + self.simulation_unstable + self.model_unstable + self.not_compared
    }
}

/// How one matched (model, simulation) point enters the statistics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Comparison {
    /// Both sides stable (`ok` or `imprecise`) and finite: the signed relative error.
    Error(PointError),
    /// The simulation saturated or deadlocked; the model is finite.
    SimulationUnstable,
    /// The model saturated; the simulation is stable.
    ModelUnstable,
    /// Anything else (both unstable, a failure, a missing latency).
    NotCompared,
}

/// One compared point's signed relative error with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PointError {
    /// (model - simulation) / simulation.
    pub(crate) error: f64,
    /// The error's 95% interval ([`error_interval`]); `None` when the simulation has no
    /// half-width.
    pub(crate) interval: Option<(f64, f64)>,
    /// Whether a side stopped short of its target precision (`imprecise`).
    pub(crate) imprecise: bool,
}

/// Where a point's error interval lies against ±[`TOLERANCE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The whole interval inside ±tolerance: within at 95% confidence.
    Within,
    /// The whole interval outside ±tolerance: outside at 95% confidence.
    Outside,
    /// The interval straddles a bound, or there is none: not decidable at this precision.
    Undecided,
}

impl Verdict {
    /// The word the per-load CSV writes.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Within => "within",
            Verdict::Outside => "outside",
            Verdict::Undecided => "undecided",
        }
    }
}

impl PointError {
    /// Where the error interval lies against ±[`TOLERANCE`].
    pub(crate) fn verdict(&self) -> Verdict {
        let Some((low, high)) = self.interval else { return Verdict::Undecided };
        if low >= -TOLERANCE && high <= TOLERANCE {
            Verdict::Within
        } else if high < -TOLERANCE || low > TOLERANCE {
            Verdict::Outside
        } else {
            Verdict::Undecided
        }
    }
}

/// The 95% interval of the relative error (model - sim) / sim when the simulated mean is
/// `sim ± half_width`: [(model - (sim + h)) / (sim + h), (model - (sim - h)) / (sim - h)],
/// the upper end infinite when `h >= sim`. `None` without a finite, non-negative half-width.
pub(crate) fn error_interval(model: f64, sim: f64, half_width: Option<f64>) -> Option<(f64, f64)> {
    let h = half_width.filter(|h| h.is_finite() && *h >= 0.0)?;
    let low = (model - (sim + h)) / (sim + h);
    let high = if sim - h > 0.0 { (model - (sim - h)) / (sim - h) } else { f64::INFINITY };
    Some((low, high))
}

/// The reference's half-width with the compared side's relative half-width added in
/// quadrature (a simulation compared with a simulation); the reference's alone when the
/// compared side has none (a model).
fn combined_half_width(compared: &Row, model: f64, sim: &Row, simulated: f64) -> Option<f64> {
    let reference = sim.latency_ci95.filter(|h| h.is_finite() && *h >= 0.0)?;
    let own = compared.latency_ci95.filter(|h| h.is_finite() && *h >= 0.0 && model > 0.0);
    Some(match own {
        Some(own) => simulated * ((reference / simulated).powi(2) + (own / model).powi(2)).sqrt(),
        None => reference,
    })
}

/// Whether a status counts as a stable, comparable measurement (`imprecise` included).
fn stable(status: &str) -> bool {
    matches!(status, "ok" | "imprecise")
}

/// Classifies one matched point (the model row at the simulation row's rate; the compared
/// method's row and the reference's, see the module doc).
pub(crate) fn compare(model_row: &Row, sim: &Row) -> Comparison {
    let model_latency = if model_row.method == "model" {
        columns::comparable_model_latency(model_row)
    } else {
        model_row.latency
    };
    let model_latency = model_latency.filter(|latency| latency.is_finite());
    let sim_latency = sim.latency.filter(|latency| latency.is_finite() && *latency > 0.0);
    let model_ok = stable(&model_row.status) && model_latency.is_some();
    let sim_ok = stable(&sim.status) && sim_latency.is_some();
    let sim_unstable = matches!(sim.status.as_str(), "saturated" | "deadlock");
    match (model_latency, sim_latency) {
        (Some(model), Some(simulated)) if model_ok && sim_ok => {
            let half_width = combined_half_width(model_row, model, sim, simulated);
            Comparison::Error(PointError {
                error: (model - simulated) / simulated,
                interval: error_interval(model, simulated, half_width),
                imprecise: model_row.status == "imprecise" || sim.status == "imprecise",
            })
        }
        _ if model_ok && sim_unstable => Comparison::SimulationUnstable,
        _ if model_row.status == "saturated" && sim_ok => Comparison::ModelUnstable,
        _ => Comparison::NotCompared,
    }
}

/// The agreement table's content.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Agreement {
    /// One entry per scenario that has both model and simulation rows, in scenario order.
    pub(crate) scenarios: Vec<ScenarioAgreement>,
    /// All scenarios together (one per compared pair that has two or more scenarios).
    pub(crate) overall: Vec<ScenarioAgreement>,
    /// The compared method and the reference, when they are not the built-in model and
    /// simulator: `(md1_model, simulation)`.
    pub(crate) methods: Option<(String, String)>,
    /// Why the table is empty, when it is.
    pub(crate) empty_reason: Option<String>,
    /// What all compared scenarios share (`torus, k = 8, n = 2, ...`), when there are several.
    pub(crate) common: Option<String>,
    /// One sentence per (model, simulated ejection) pair where the simulation's ejection is not
    /// what the model's paper assumes.
    pub(crate) assumption_notes: Vec<String>,
}

impl Agreement {
    /// Whether the table compares several pairs of methods (each entry names its pair).
    pub(crate) fn paired(&self) -> bool {
        self.scenarios.iter().any(|scenario| scenario.pair.is_some())
    }
}

/// One scenario's model rows and aggregate simulation rows.
type SidePair<'a> = (Vec<&'a Row>, Vec<&'a Row>);

/// Computes the agreement of the built-in model with the built-in simulation.
pub(crate) fn compute(rows: &[Row]) -> Agreement {
    compute_pair(rows, "model", "simulation")
}

/// The pairs of methods a run's agreement table compares (see the module doc): `(compared,
/// reference)`, the reference always a simulation (a method with replications).
pub(crate) fn pairs(rows: &[Row]) -> Vec<(String, String)> {
    // Methods in the order of the module doc: built-in before external, models before
    // simulations, externals in the order their rows first come.
    let mut methods: Vec<(u8, &str)> = Vec::new();
    for row in rows {
        let simulated = row.replication.is_some() || row.replications.is_some();
        let rank = match (row.method.as_str(), simulated) {
            ("model", _) => 0,
            ("simulation", _) => 2,
            (_, false) => 1,
            (_, true) => 3,
        };
        match methods.iter_mut().find(|(_, method)| *method == row.method) {
            // An external simulation's rows include its replications: it is a simulation.
            Some(entry) => entry.0 = entry.0.max(rank),
            None => methods.push((rank, row.method.as_str())),
        }
    }
    methods.sort_by_key(|(rank, _)| *rank);
    let mut pairs = Vec::new();
    for (index, (rank, reference)) in methods.iter().enumerate() {
        if *rank >= 2 {
            for (_, compared) in &methods[..index] {
                pairs.push(((*compared).to_owned(), (*reference).to_owned()));
            }
        }
    }
    pairs
}

/// Computes the agreement of method `compared` with method `reference` (their aggregate rows,
/// matched by scenario and rate).
pub(crate) fn compute_pair(rows: &[Row], compared: &str, reference: &str) -> Agreement {
    let model: Vec<&Row> =
        rows.iter().filter(|row| row.method == compared && row.replication.is_none()).collect();
    let simulation: Vec<&Row> =
        rows.iter().filter(|row| row.method == reference && row.replication.is_none()).collect();
    let methods = ((compared, reference) != ("model", "simulation"))
        .then(|| (compared.to_owned(), reference.to_owned()));
    if simulation.is_empty() {
        return Agreement {
            empty_reason: Some(
                "No simulation results in this run, so there is nothing to compare the model with."
                    .to_owned(),
            ),
            methods,
            ..Agreement::default()
        };
    }
    if model.is_empty() {
        return Agreement {
            empty_reason: Some(
                "No model results in this run, so there is nothing to compare the simulation with."
                    .to_owned(),
            ),
            methods,
            ..Agreement::default()
        };
    }
    // Scenarios in the order their rows come (the spec's expansion order), not by hash id.
    let mut order: Vec<&str> = Vec::new();
    let mut by_scenario: HashMap<&str, SidePair<'_>> = HashMap::new();
    for row in rows {
        if !by_scenario.contains_key(row.scenario_id.as_str()) {
            order.push(row.scenario_id.as_str());
            by_scenario.insert(row.scenario_id.as_str(), (Vec::new(), Vec::new()));
        }
    }
    for row in &model {
        by_scenario.entry(row.scenario_id.as_str()).or_default().0.push(row);
    }
    for row in &simulation {
        by_scenario.entry(row.scenario_id.as_str()).or_default().1.push(row);
    }
    let by_scenario: Vec<(&str, SidePair<'_>)> =
        order.into_iter().filter_map(|id| by_scenario.remove(id).map(|rows| (id, rows))).collect();
    let compared: Vec<Value> = by_scenario
        .iter()
        .map(|(_, rows)| rows)
        .filter(|(model_rows, sim_rows)| !model_rows.is_empty() && !sim_rows.is_empty())
        .filter_map(|(model_rows, _)| model_rows.first().map(|row| columns::to_json(row)))
        .collect();
    let (constant, _) = columns::constant_and_varying(&compared);
    // The fields that tell the compared scenarios apart, any scenario column (not only the
    // described ones), so that two labels never read the same.
    let varying = super::tables::varying_fields(&compared);
    let mut agreement = Agreement { methods, ..Agreement::default() };
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
        if first_model.method == "model"
            && let Some(info) = ModelName::from_name(model_name).map(model::info)
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
            json: columns::to_json(first_model),
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
            let fraction = load_fraction(model_row, sim, max_ok_rate);
            let band = if fraction.is_some_and(|fraction| fraction > LIGHT_LOAD_LIMIT + 1e-12) {
                &mut entry.near
            } else {
                &mut entry.light
            };
            match compare(model_row, sim) {
                Comparison::Error(point) => band.add(point),
                Comparison::SimulationUnstable => band.simulation_unstable += 1,
                Comparison::ModelUnstable => band.model_unstable += 1,
                Comparison::NotCompared => band.not_compared += 1,
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
        agreement.overall = vec![overall];
    }
    agreement
}

/// The agreement of every pair of methods (see [`pairs`]) in one table: each scenario and
/// overall entry names its pair. `None` when the run compares at most one pair.
pub(crate) fn compute_all(rows: &[Row]) -> Option<Agreement> {
    let pairs = pairs(rows);
    if pairs.len() < 2 {
        return None;
    }
    let mut all = Agreement::default();
    for (compared, reference) in &pairs {
        let agreement = compute_pair(rows, compared, reference);
        let pair = Some(format!("{compared} vs. {reference}"));
        let named = |mut entry: ScenarioAgreement| {
            entry.pair = pair.clone();
            entry
        };
        all.scenarios.extend(agreement.scenarios.into_iter().map(named));
        all.overall.extend(agreement.overall.into_iter().map(named));
        all.assumption_notes.extend(agreement.assumption_notes);
    }
    if all.scenarios.is_empty() {
        all.empty_reason =
            Some("No scenario has results of two methods at the same load, so there is nothing to compare.".to_owned());
    }
    Some(all)
}

/// The load as a fraction of saturation (see the module doc).
pub(crate) fn load_fraction(model: &Row, sim: &Row, max_ok_rate: Option<f64>) -> Option<f64> {
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

/// Whether two rates are the same load point (equal up to rounding).
pub(crate) fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}
