//! Task identity: content hashes of fully resolved inputs, and seeds derived from them.
//!
//! Each id is `blake3(json(kind, inputs, evaluator version))` in hex. The JSON
//! of a `Scenario` is canonical (fixed field order, shortest round-trip floats),
//! so the same inputs always hash the same, on any machine and thread count.

use serde::Serialize;

use super::{LoadPoint, TaskKind};
use crate::model;
use crate::scenario::Scenario;
use crate::sim;
use crate::spec::{ModelChoice, SimulationChoice};

fn hash(value: &impl Serialize) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    blake3::hash(&bytes).to_hex().to_string()
}

#[derive(Serialize)]
struct ModelKey<'a> {
    kind: TaskKind,
    scenario: &'a Scenario,
    model: &'a str,
    options: &'a model::ModelOptions,
    version: &'static str,
    load: Option<LoadPoint>,
}

/// Id of the Saturation task of one scenario.
pub fn saturation(scenario: &Scenario, model: &ModelChoice) -> String {
    hash(&ModelKey {
        kind: TaskKind::Saturation,
        scenario,
        model: model.name.as_str(),
        options: &model.options,
        version: model::VERSION,
        load: None,
    })
}

/// Id of the Solve task of one scenario at one load.
pub fn solve(scenario: &Scenario, model: &ModelChoice, load: LoadPoint) -> String {
    hash(&ModelKey {
        kind: TaskKind::Solve,
        scenario,
        model: model.name.as_str(),
        options: &model.options,
        version: model::VERSION,
        load: Some(load),
    })
}

/// Id of one simulation replication.
pub fn simulate(
    scenario: &Scenario,
    simulation: &SimulationChoice,
    load: LoadPoint,
    replication: u32,
    seed: u64,
) -> String {
    #[derive(Serialize)]
    struct Key<'a> {
        kind: TaskKind,
        scenario: &'a Scenario,
        options: &'a sim::SimOptions,
        version: &'static str,
        load: LoadPoint,
        replication: u32,
        seed: u64,
    }
    hash(&Key {
        kind: TaskKind::Simulate,
        scenario,
        options: &simulation.options,
        version: sim::VERSION,
        load,
        replication,
        seed,
    })
}

/// Id of the Aggregate task over the given replication ids.
pub fn aggregate(replications: &[&str]) -> String {
    hash(&(TaskKind::Aggregate, replications))
}

/// The seed of one replication: from the spec seed and the task's inputs only.
pub fn seed(spec_seed: u64, scenario: &Scenario, load: LoadPoint, replication: u32) -> u64 {
    let bytes = serde_json::to_vec(&(spec_seed, scenario, load, replication)).unwrap_or_default();
    let digest = blake3::hash(&bytes);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// A rough cost of one replication in seconds: flit-hops at ~50 ns plus ~2 ns per node-cycle.
pub fn simulation_cost(scenario: &Scenario, options: &sim::SimOptions, load: LoadPoint) -> f64 {
    let nodes = scenario.nodes() as f64;
    let cycles = (options.warmup_cycles + options.cycles) as f64;
    let rate = match load {
        LoadPoint::Rate(r) => r,
        LoadPoint::FractionOfSaturation(f) => f * 0.5 / f64::from(scenario.message_length.max(1)),
    };
    let hops = f64::from(scenario.topology.dimensions() * scenario.topology.radix()) / 4.0 + 1.0;
    let flit_hops = cycles * nodes * rate * f64::from(scenario.message_length) * hops;
    flit_hops * 50e-9 + cycles * nodes * 2e-9
}
