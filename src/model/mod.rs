//! Analytical latency models: five published queueing models of interconnection networks.
//!
//! # Brief overview
//!
//! A model is named by [`ModelName`]. [`check`] says whether a model covers a
//! [`Scenario`] (and why not), [`solve`] evaluates it at one traffic generation rate and returns a
//! [`Measurement`], and [`saturation_rate`] finds the rate at which the model's latency becomes
//! unbounded. [`info`] describes each model for `runner models`.
//!
//! ```
//! use runner::measurement::Status;
//! use runner::model::{self, ModelName, ModelOptions};
//! use runner::scenario::{Routing, Scenario, Topology};
//!
//! let mut scenario = Scenario::new(Topology::FatTree { processors: 256 });
//! scenario.routing = Routing::UpDown;
//! let options = ModelOptions::default();
//! let m = model::solve(ModelName::FatTree, &scenario, 0.002, &options)?;
//! assert_eq!(m.status, Status::Ok);
//! assert!(m.latency.is_some_and(|l| l > 32.0));
//! let saturation = model::saturation_rate(ModelName::FatTree, &scenario, &options)?;
//! assert!(saturation > 0.002);
//! # Ok::<(), model::ModelError>(())
//! ```
//!
//! The code is laid out as the papers are: one file per paper (`scouting_torus`,
//! `broadcast_hypercube`, `circuit_torus_faults`, `nbc_torus`, `fat_tree`), the textbook queueing
//! pieces in `queueing` (M/G/1 with the Draper–Ghosh variance, Hokstad's M/G/2, Dally's
//! virtual-channel chain and multiplexing degree) and the one fixed-point solver in
//! `fixed_point`. Every equation is implemented as printed, read through `docs/errata.md`; the
//! doc comments cite the equation numbers and the errata tags (E-SS-3, ...), and
//! `docs/models.md` records every decision the errata does not cover.
//!
//! The module is pure: no I/O, no spec types, no progress output. Bad parameters are a
//! [`ModelError`] with a sentence that says why; a load at or beyond saturation is an `Ok`
//! measurement with `status = saturated` and a `detail` sentence, never NaN, a panic or a huge
//! number.

mod broadcast_hypercube;
mod circuit_torus_faults;
mod fat_tree;
mod fixed_point;
mod nbc_torus;
mod queueing;
mod scouting_torus;

use crate::measurement::Measurement;
use crate::scenario::{Ejection, Routing, Scenario, Switching, Topology};

/// Version string of the model code; part of every cache key. Bump it whenever a number, or a
/// message a row carries, changes (`CHANGELOG.md`).
pub const VERSION: &str = "model-1.0.1";

/// The published models (`methods.model.name` in a spec).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ModelName {
    /// Scouting switching in 2-D tori.
    ScoutingTorus,
    /// Unicast-based broadcast in the hypercube.
    BroadcastHypercube,
    /// Fault-tolerant circuit switching in 2-D tori.
    CircuitTorusFaults,
    /// Duato-Nbc in 2-D tori.
    NbcTorus,
    /// Butterfly fat-tree (Greenberg and Guan).
    FatTree,
}

impl ModelName {
    /// Every model, in the order `runner models` lists them.
    pub const ALL: [ModelName; 5] = [
        ModelName::ScoutingTorus,
        ModelName::BroadcastHypercube,
        ModelName::CircuitTorusFaults,
        ModelName::NbcTorus,
        ModelName::FatTree,
    ];

    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            ModelName::ScoutingTorus => "scouting_torus",
            ModelName::BroadcastHypercube => "broadcast_hypercube",
            ModelName::CircuitTorusFaults => "circuit_torus_faults",
            ModelName::NbcTorus => "nbc_torus",
            ModelName::FatTree => "fat_tree",
        }
    }

    /// Parses a name as written in specs.
    pub fn from_name(name: &str) -> Option<ModelName> {
        ModelName::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// Model-specific reading options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ModelOptions {
    /// `fat_tree`: use the literal eq. (22) reading of R instead of E-BFT-3.
    pub literal_eq22: bool,
}

/// Why a model cannot evaluate a scenario.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

/// One scenario parameter a model reads, for `runner models`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The scenario key (as in specs), e.g. `radix`.
    pub key: &'static str,
    /// The value the paper's Section 4 uses (or the default), as text.
    pub default: &'static str,
    /// The unit, e.g. `flits`; empty for dimensionless values.
    pub unit: &'static str,
    /// What the parameter means in the paper and which values the model accepts.
    pub doc: &'static str,
}

/// A description of one model, for `runner models`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// The model.
    pub name: ModelName,
    /// The paper, as a bibliographic reference: authors, title, venue, year.
    pub paper: &'static str,
    /// The scenario the model covers, in one line.
    pub scenario: &'static str,
    /// What the paper assumes at the destination: [`Ejection::Single`] (one message at a time
    /// through the ejection channel) or [`Ejection::Unlimited`] (consumed on arrival). No
    /// model has an ejection term, so this is the simulator setting that reproduces the
    /// paper's stated assumption; `docs/validation.md` shows how much it matters.
    pub ejection: Ejection,
    /// The paper's sentence that states [`ModelInfo::ejection`].
    pub ejection_quote: &'static str,
    /// The parameters the model reads.
    pub params: &'static [ParamInfo],
}

/// The scenario a model's paper starts from (one of its Section 4 configurations, with the
/// paper's ejection assumption): the starting point of `runner solve MODEL key=value...` and
/// of the cross-model tests.
pub fn paper_scenario(model: ModelName) -> Scenario {
    let (topology, switching, routing) = match model {
        ModelName::ScoutingTorus => (
            Topology::Torus { radix: 8, dimensions: 2 },
            Switching::Scouting { scouting_distance: 3 },
            Routing::Adaptive,
        ),
        ModelName::BroadcastHypercube => {
            (Topology::Hypercube { dimensions: 6 }, Switching::Wormhole, Routing::Duato)
        }
        ModelName::CircuitTorusFaults => {
            (Topology::Torus { radix: 8, dimensions: 2 }, Switching::Circuit, Routing::Adaptive)
        }
        ModelName::NbcTorus => {
            (Topology::Torus { radix: 8, dimensions: 2 }, Switching::Wormhole, Routing::Nbc)
        }
        ModelName::FatTree => {
            (Topology::FatTree { processors: 1024 }, Switching::Wormhole, Routing::UpDown)
        }
    };
    let mut s = Scenario::new(topology);
    s.switching = switching;
    s.routing = routing;
    s.ejection = info(model).ejection;
    match model {
        ModelName::ScoutingTorus => s.virtual_channels = 6,
        ModelName::BroadcastHypercube => {
            s.virtual_channels = 2;
            s.broadcast_fraction = 0.01;
        }
        ModelName::CircuitTorusFaults => {
            s.virtual_channels = 10;
            s.fault_rate = 0.1;
        }
        ModelName::NbcTorus => s.virtual_channels = 10,
        ModelName::FatTree => {}
    }
    s
}

/// Describes `model`: its paper, the scenarios it covers and the parameters it reads.
pub fn info(model: ModelName) -> ModelInfo {
    match model {
        ModelName::ScoutingTorus => scouting_torus::INFO,
        ModelName::BroadcastHypercube => broadcast_hypercube::INFO,
        ModelName::CircuitTorusFaults => circuit_torus_faults::INFO,
        ModelName::NbcTorus => nbc_torus::INFO,
        ModelName::FatTree => fat_tree::INFO,
    }
}

/// Checks that `model` covers `scenario` and that every parameter it reads is in range.
///
/// Cheap (no solving); the spec validator calls it for every sweep point.
///
/// # Errors
///
/// A [`ModelError`] saying why, when the topology, switching or routing is not the paper's or a
/// parameter is out of the model's range (see `docs/models.md`).
pub fn check(model: ModelName, scenario: &Scenario) -> Result<(), ModelError> {
    check_common(model, scenario)?;
    match model {
        ModelName::ScoutingTorus => scouting_torus::check(scenario),
        ModelName::BroadcastHypercube => broadcast_hypercube::check(scenario),
        ModelName::CircuitTorusFaults => circuit_torus_faults::check(scenario),
        ModelName::NbcTorus => nbc_torus::check(scenario),
        ModelName::FatTree => fat_tree::check(scenario),
    }
}

/// Evaluates `model` at `rate` messages/node/cycle.
///
/// Returns `Ok` with `status = saturated` (and `latency = None`) at or beyond saturation; a
/// [`ModelError`] only when the model does not cover the scenario or a parameter is invalid.
///
/// # Errors
///
/// Everything [`check`] rejects, and a `rate` that is negative, NaN or infinite.
pub fn solve(
    model: ModelName,
    scenario: &Scenario,
    rate: f64,
    options: &ModelOptions,
) -> Result<Measurement, ModelError> {
    if !(rate.is_finite() && rate >= 0.0) {
        return Err(ModelError(format!(
            "{}: the traffic generation rate must be a finite number >= 0 messages/node/cycle, \
             got {}",
            model.as_str(),
            crate::number::compact(rate)
        )));
    }
    check_common(model, scenario)?;
    with_model(model, scenario, options, |m| m.measure(rate))
}

/// The saturation rate of `model` for `scenario` (messages/node/cycle).
///
/// The smallest rate at which [`solve`] reports `saturated`, found by bisection to 1e-6 relative
/// (the returned value is the midpoint of a bracket narrower than 5e-7 of its upper end).
///
/// # Errors
///
/// Everything [`check`] rejects; also (never for the published models) a scenario that does
/// not saturate at any finite rate or is saturated at every positive rate.
pub fn saturation_rate(
    model: ModelName,
    scenario: &Scenario,
    options: &ModelOptions,
) -> Result<f64, ModelError> {
    check_common(model, scenario)?;
    with_model(model, scenario, options, |m| bisect_saturation(model, m))?
}

/// How the model's latency curve ends at its saturation rate `saturation` (from
/// [`saturation_rate`]), in the model's own terms, when the model can tell; `None` otherwise.
/// `runner solve --saturation` prints it.
///
/// # Errors
///
/// Everything [`check`] rejects.
pub fn saturation_mechanism(
    model: ModelName,
    scenario: &Scenario,
    options: &ModelOptions,
    saturation: f64,
) -> Result<Option<String>, ModelError> {
    check_common(model, scenario)?;
    with_model(model, scenario, options, |m| m.mechanism(saturation))
}

/// Relative width of the final saturation bracket.
const SATURATION_REL_TOL: f64 = 5e-7;

/// What every model offers the generic code in this file.
trait Evaluator {
    /// `Some(x)` when `rate` is below saturation, with `x` the fixed point reached (0 for direct
    /// models); cheaper than [`Evaluator::measure`]. `start` is a warm start known to lie at or
    /// below the fixed point (the fixed point of a lower rate: every map is monotone in the
    /// rate), `None` for the zero-load state.
    fn stable(&self, rate: f64, start: Option<f64>) -> Option<f64>;
    /// The full evaluation at `rate`.
    fn measure(&self, rate: f64) -> Measurement;
    /// A rate at which the model is certainly saturated (brackets the bisection).
    fn saturated_bound(&self) -> f64;
    /// How the curve ends at the saturation rate (see [`saturation_mechanism`]).
    fn mechanism(&self, _saturation: f64) -> Option<String> {
        None
    }
}

/// Builds the precomputed model and runs `f` on it.
fn with_model<T>(
    model: ModelName,
    scenario: &Scenario,
    options: &ModelOptions,
    f: impl FnOnce(&dyn Evaluator) -> T,
) -> Result<T, ModelError> {
    Ok(match model {
        ModelName::ScoutingTorus => f(&scouting_torus::Scouting::new(scenario)?),
        ModelName::BroadcastHypercube => f(&broadcast_hypercube::Broadcast::new(scenario)?),
        ModelName::CircuitTorusFaults => f(&circuit_torus_faults::Circuit::new(scenario)?),
        ModelName::NbcTorus => f(&nbc_torus::Nbc::new(scenario)?),
        ModelName::FatTree => f(&fat_tree::FatTree::new(scenario, options)?),
    })
}

/// Bisection on the status of the model to [`SATURATION_REL_TOL`].
///
/// Each stability check starts the fixed-point iteration from the fixed point of the highest
/// stable rate found so far; it lies below the fixed point at any higher rate, so the iteration
/// reaches the same (smallest) fixed point as from zero load, only faster.
fn bisect_saturation(model: ModelName, m: &dyn Evaluator) -> Result<f64, ModelError> {
    let mut hi = m.saturated_bound();
    let mut grow = 0;
    while m.stable(hi, None).is_some() {
        hi *= 2.0;
        grow += 1;
        if grow > 60 || !hi.is_finite() {
            return Err(ModelError(format!(
                "{}: found no saturation below {hi} messages/node/cycle; the model never \
                 saturates for this scenario",
                model.as_str()
            )));
        }
    }
    // Shrink the bracket geometrically first: the saturation rate is usually well below the
    // analytic bound.
    let (mut lo, mut lo_x);
    loop {
        let mid = 0.5 * hi;
        if let Some(x) = m.stable(mid, None) {
            (lo, lo_x) = (mid, x);
            break;
        }
        hi = mid;
        if hi < 1e-300 {
            return Err(ModelError(format!(
                "{}: the model is saturated at every positive rate",
                model.as_str()
            )));
        }
    }
    while hi - lo > SATURATION_REL_TOL * hi {
        let mid = 0.5 * (lo + hi);
        match m.stable(mid, Some(lo_x)) {
            Some(x) => (lo, lo_x) = (mid, x),
            None => hi = mid,
        }
    }
    Ok(0.5 * (lo + hi))
}

/// Checks shared by every model: message length, the fixed-length assumption and that
/// parameters a model does not model are at their neutral values.
fn check_common(model: ModelName, scenario: &Scenario) -> Result<(), ModelError> {
    let name = model.as_str();
    if let Topology::Dragonfly { .. }
    | Topology::KaryNTree { .. }
    | Topology::HyperX { .. }
    | Topology::SlimFly { .. } = scenario.topology
    {
        return Err(ModelError(format!(
            "{name}: no analytical model here covers the {} (the five papers model tori, \
             hypercubes and the butterfly fat-tree); simulate it instead",
            match scenario.topology {
                Topology::Dragonfly { .. } => "dragonfly",
                Topology::HyperX { .. } => "HyperX",
                Topology::SlimFly { .. } => "Slim Fly",
                _ => "k-ary n-tree",
            }
        )));
    }
    if let Topology::Graph { graph } = &scenario.topology {
        return Err(ModelError(format!(
            "{name}: no analytical model here covers a graph read from a file ({}; the five \
             papers model tori, hypercubes and the butterfly fat-tree); simulate it instead",
            graph.file
        )));
    }
    if scenario.traffic.trace().is_some() {
        return Err(ModelError(format!(
            "{name}: the paper's model takes Poisson arrivals at a rate with uniform \
             destinations, and a replayed trace is neither: trace traffic is simulated only \
             (use `methods.simulation`)"
        )));
    }
    if !scenario.traffic.is_uniform() {
        return Err(ModelError(format!(
            "{name}: the paper assumes uniform traffic (every other node equally likely), so \
             the model cannot evaluate traffic `{}`; simulate it instead",
            scenario.traffic.as_str()
        )));
    }
    if scenario.message_length == 0 {
        return Err(ModelError(format!("{name}: message_length must be at least 1 flit, got 0")));
    }
    if scenario.virtual_channels == 0 {
        return Err(ModelError(format!(
            "{name}: virtual_channels must be at least 1 per physical channel, got 0"
        )));
    }
    if !scenario.injection_process.is_poisson() {
        return Err(ModelError(format!(
            "{name}: the paper assumes Poisson arrivals at each node, so the model cannot \
             evaluate injection_process `{}`; simulate it instead",
            scenario.injection_process.as_str()
        )));
    }
    if model != ModelName::CircuitTorusFaults && !scenario.message_length_distribution.is_fixed() {
        return Err(ModelError(format!(
            "{name}: the paper assumes fixed-length messages, so message_length_distribution \
             must be fixed, got {}; only circuit_torus_faults models random lengths (through \
             the second moment E[M^2] the distribution implies)",
            scenario.message_length_distribution.as_str()
        )));
    }
    if model != ModelName::CircuitTorusFaults
        && let Some(m2) = scenario.length_second_moment()
    {
        let m = f64::from(scenario.message_length);
        if (m2 - m * m).abs() > 1e-9 * m * m {
            return Err(ModelError(format!(
                "{name}: the paper assumes fixed-length messages, so message_length_second_moment \
                 must be unset (or M^2 = {}), got {m2}; only circuit_torus_faults models random \
                 lengths",
                m * m
            )));
        }
    }
    if model != ModelName::CircuitTorusFaults && scenario.fault_rate != 0.0 {
        return Err(ModelError(format!(
            "{name}: the paper has no faulty nodes, so fault_rate must be 0, got {}; \
             circuit_torus_faults models faults",
            scenario.fault_rate
        )));
    }
    if model != ModelName::BroadcastHypercube && scenario.broadcast_fraction != 0.0 {
        return Err(ModelError(format!(
            "{name}: the paper has unicast traffic only, so broadcast_fraction must be 0, got {}; \
             broadcast_hypercube models broadcasts",
            scenario.broadcast_fraction
        )));
    }
    Ok(())
}

/// The most virtual channels per physical channel a model accepts: the per-channel occupancy
/// chain is solved over `0..=V`, so its cost grows with `V`.
pub const MAX_VIRTUAL_CHANNELS: u32 = 1024;

/// `V` of `scenario`, or why it is above [`MAX_VIRTUAL_CHANNELS`].
fn virtual_channels(name: &str, scenario: &Scenario) -> Result<u32, ModelError> {
    let v = scenario.virtual_channels;
    if v > MAX_VIRTUAL_CHANNELS {
        return Err(ModelError(format!(
            "{name}: virtual_channels must be at most {MAX_VIRTUAL_CHANNELS}, got {v}"
        )));
    }
    Ok(v)
}

/// The 2-D torus radix `k` of `scenario`, or why the scenario is not a 2-D torus with even
/// `4 <= k <= 1024` (the torus models need `D = k/2` to be a whole number of hops).
fn torus_radix(name: &str, scenario: &Scenario) -> Result<u32, ModelError> {
    match &scenario.topology {
        &Topology::Torus { radix, dimensions: 2 } => {
            if radix % 2 != 0 || !(4..=1024).contains(&radix) {
                Err(ModelError(format!(
                    "{name}: needs an even radix 4 <= k <= 1024 (the model uses D = k/2 hops), \
                     got k = {radix}"
                )))
            } else {
                Ok(radix)
            }
        }
        Topology::Torus { dimensions, .. } => Err(ModelError(format!(
            "{name}: the paper models 2-D tori (k-ary 2-cubes) only, got {dimensions} dimensions"
        ))),
        other => Err(ModelError(format!(
            "{name}: the paper models 2-D tori only, got topology `{}`",
            other.kind()
        ))),
    }
}

/// Error for a routing the model does not cover.
fn routing_error(name: &str, routing: Routing, accepted: &str) -> ModelError {
    ModelError(format!(
        "{name}: the paper's routing is {accepted}, got routing `{}`",
        routing.as_str()
    ))
}

/// Error for a switching the model does not cover.
fn switching_error(name: &str, switching: Switching, accepted: &str) -> ModelError {
    ModelError(format!(
        "{name}: the paper's switching is {accepted}, got switching `{}`",
        switching.kind()
    ))
}

/// A measurement with the fields every non-saturated model point shares.
fn ok_measurement(rate: f64) -> Measurement {
    Measurement { throughput: Some(rate), ..Measurement::default() }
}

#[cfg(test)]
mod tests;

/// Assertions every iterative model's tests share.
#[cfg(test)]
mod test_support {
    use super::{ModelName, ModelOptions, saturation_rate, solve};
    use crate::measurement::Status;
    use crate::scenario::Scenario;

    /// Latency rises strictly with load (99 steps up to the saturation rate) and the model is
    /// `saturated`, with no latency and a reason, just above it.
    pub(crate) fn assert_latency_rises_to_saturation(model: ModelName, scenarios: &[Scenario]) {
        let options = ModelOptions::default();
        let run = |s: &Scenario, rate: f64| solve(model, s, rate, &options).unwrap();
        for s in scenarios {
            let sat = saturation_rate(model, s, &options).unwrap();
            let mut last = run(s, 0.0).latency.unwrap();
            for i in 1..100 {
                let rate = sat * f64::from(i) / 100.0;
                let got = run(s, rate);
                let Some(l) = got.latency else { panic!("{s:?} rate={rate} sat={sat}: {got:?}") };
                assert!(l > last, "{s:?} rate={rate}: {l} <= {last}");
                last = l;
            }
            let m = run(s, sat * (1.0 + 2e-6));
            assert_eq!(m.status, Status::Saturated, "{s:?}");
            assert!(m.latency.is_none() && m.detail.is_some());
        }
    }
}
