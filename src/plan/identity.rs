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
use crate::spec::external::{ExternalChoice, HashedFile};
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

impl ModelKey<'_> {
    /// The key of a model task of `kind` for `scenario` (at `load`, when it has one).
    fn new<'a>(
        kind: TaskKind,
        scenario: &'a Scenario,
        model: &'a ModelChoice,
        load: Option<LoadPoint>,
    ) -> ModelKey<'a> {
        ModelKey {
            kind,
            scenario,
            model: model.name.as_str(),
            options: &model.options,
            version: model::VERSION,
            load,
        }
    }
}

/// Id of the Saturation task of one scenario.
pub fn saturation(scenario: &Scenario, model: &ModelChoice) -> String {
    hash(&ModelKey::new(TaskKind::Saturation, scenario, model, None))
}

/// The content hash of the model at one load of one scenario: a batched point's own identity,
/// the `task_id` of its row (and the id a Solve task of that one load had before Solve tasks
/// came in batches, so a point's rows compare across runs and versions).
pub fn solve(scenario: &Scenario, model: &ModelChoice, load: LoadPoint) -> String {
    hash(&ModelKey::new(TaskKind::Solve, scenario, model, Some(load)))
}

/// Version of the Solve batch's shape; part of its id. Bump when the batching or the batch's
/// entry changes meaning.
const SOLVE_BATCH_VERSION: u32 = 1;

/// Id of a Solve batch: the model key of [`solve`] without a load, then every load of the
/// batch in order (so a batch is its exact list of points, and equal ids mean equal rows).
pub fn solve_batch(scenario: &Scenario, model: &ModelChoice, loads: &[LoadPoint]) -> String {
    hash(&(ModelKey::new(TaskKind::Solve, scenario, model, None), SOLVE_BATCH_VERSION, loads))
}

/// The per-point ids of one scenario's Solve points, [`solve`] without serializing the
/// scenario per point: the key's JSON ends with its `load`, so the hasher of everything before
/// it is kept and cloned per point.
pub struct SolveIds {
    prefix: Option<blake3::Hasher>,
    scenario: Scenario,
    model: ModelChoice,
}

impl SolveIds {
    /// The ids of `scenario`'s points under `model`.
    pub fn new(scenario: &Scenario, model: &ModelChoice) -> SolveIds {
        let key = ModelKey::new(TaskKind::Solve, scenario, model, None);
        let bytes = serde_json::to_vec(&key).unwrap_or_default();
        let prefix = bytes.strip_suffix(b"null}").map(|prefix| {
            let mut hasher = blake3::Hasher::new();
            hasher.update(prefix);
            hasher
        });
        SolveIds { prefix, scenario: scenario.clone(), model: model.clone() }
    }

    /// The id of the point at `load`: equal to `solve(scenario, model, load)`.
    pub fn id(&self, load: LoadPoint) -> String {
        match (&self.prefix, serde_json::to_vec(&load)) {
            (Some(prefix), Ok(json)) => {
                let mut hasher = prefix.clone();
                hasher.update(&json);
                hasher.update(b"}");
                hasher.finalize().to_hex().to_string()
            }
            _ => solve(&self.scenario, &self.model, load),
        }
    }
}

/// Version of the Curve task's load grid; part of its id. Bump when [`curve_fractions`]
/// changes.
const CURVE_VERSION: u32 = 1;

/// Id of the Curve task of one scenario.
pub fn curve(scenario: &Scenario, model: &ModelChoice) -> String {
    hash(&(
        ModelKey::new(TaskKind::Curve, scenario, model, None),
        CURVE_VERSION,
        model.curve_points,
    ))
}

/// The loads of a dense model curve of `points` points, as fractions of the saturation rate:
/// `f_i = F (1 - (1 - i/n)^2)` for i = 1..n with F = [`CURVE_TOP`]. Latency rises steeply
/// near saturation, so the points crowd there (the spacing shrinks linearly to 0 at F) while
/// the first lies near zero load (2F/n).
pub fn curve_fractions(points: u32) -> impl Iterator<Item = f64> {
    let n = f64::from(points);
    (1..=points).map(move |i| {
        let u = f64::from(i) / n;
        CURVE_TOP * (1.0 - (1.0 - u) * (1.0 - u))
    })
}

/// The highest load of a dense curve, as a fraction of the saturation rate.
pub const CURVE_TOP: f64 = 0.995;

/// Id of one simulation replication. `fault_seed` is part of the id only when set (only
/// scenarios with `fault_rate > 0` have one), so the ids of fault-free tasks are unchanged.
/// `load` comes with the id of the task whose saturation it is a fraction of, when it is a
/// fraction: the model's Saturation task, or (`load.saturation: simulation`) the Aggregate of
/// the simulator's searches with what of them is read (`plan::SEARCHED_SATURATION`); ids that
/// hold everything the saturation depends on. A rate has none.
pub fn simulate(
    scenario: &Scenario,
    simulation: &SimulationChoice,
    (load, saturation): (LoadPoint, Option<&str>),
    replication: u32,
    seed: u64,
    fault_seed: Option<u64>,
) -> String {
    #[derive(Serialize)]
    struct Key<'a> {
        kind: TaskKind,
        scenario: &'a Scenario,
        options: &'a sim::SimOptions,
        version: &'static str,
        load: LoadPoint,
        #[serde(skip_serializing_if = "Option::is_none")]
        saturation: Option<&'a str>,
        replication: u32,
        seed: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        fault_seed: Option<u64>,
    }
    hash(&Key {
        kind: TaskKind::Simulate,
        scenario,
        options: &simulation.options,
        version: sim::VERSION,
        load,
        saturation,
        replication,
        seed,
        fault_seed,
    })
}

/// Version of the saturation search (`sim::saturation`'s bisection, its tolerance and point
/// cap, and the search rows); part of a Search task's id.
const SEARCH_VERSION: u32 = 1;

/// The plan's cost estimate of one search, in points simulated at about saturation.
pub const SEARCH_COST_POINTS: f64 = 10.0;

/// Id of one saturation search of the simulator: the scenario, the simulation options (its
/// window), the simulator's version, the search's version, resolution and point cap, the
/// search's index and seeds.
pub fn search(
    scenario: &Scenario,
    options: &sim::SimOptions,
    replication: u32,
    seed: u64,
    fault_seed: Option<u64>,
) -> String {
    #[derive(Serialize)]
    struct Key<'a> {
        kind: TaskKind,
        search: u32,
        tolerance: f64,
        max_points: usize,
        scenario: &'a Scenario,
        options: &'a sim::SimOptions,
        version: &'static str,
        replication: u32,
        seed: u64,
        fault_seed: Option<u64>,
    }
    hash(&Key {
        kind: TaskKind::Search,
        search: SEARCH_VERSION,
        tolerance: sim::saturation::TOLERANCE,
        max_points: sim::saturation::MAX_POINTS,
        scenario,
        options,
        version: sim::VERSION,
        replication,
        seed,
        fault_seed,
    })
}

/// Version of the external protocol (`exec::external`, `docs/external.md`); part of an
/// External task's id, so a change of the protocol reruns every external evaluation.
pub const EXTERNAL_PROTOCOL: u32 = 1;

/// Id of one evaluation of an external method: its name, kind, command, the content hashes
/// of its program file and declared inputs, its declared version and options, the protocol
/// version, the scenario, the load, and (`kind: simulation`) the replication, its seeds and
/// `measure: throughput`.
/// The time-out and cost estimate are left out: they do not change a result.
pub fn external(
    scenario: &Scenario,
    method: &ExternalChoice,
    (load, saturation): (LoadPoint, Option<&str>),
    replication: Option<u32>,
    seed: Option<u64>,
    fault_seed: Option<u64>,
) -> String {
    external_key(
        TaskKind::External,
        scenario,
        method,
        Some(load),
        saturation,
        replication,
        seed,
        fault_seed,
    )
}

/// Id of one saturation search of an external simulation: its External key without a load,
/// with the search's version, resolution and point cap (the window is the method's options).
pub fn external_search(
    scenario: &Scenario,
    method: &ExternalChoice,
    replication: u32,
    seed: u64,
    fault_seed: Option<u64>,
) -> String {
    let key = external_key(
        TaskKind::Search,
        scenario,
        method,
        None,
        None,
        Some(replication),
        Some(seed),
        fault_seed,
    );
    hash(&(key, SEARCH_VERSION, sim::saturation::TOLERANCE, sim::saturation::MAX_POINTS))
}

/// The key of [`external`] and [`external_search`], hashed.
#[allow(clippy::too_many_arguments)]
fn external_key(
    kind: TaskKind,
    scenario: &Scenario,
    method: &ExternalChoice,
    load: Option<LoadPoint>,
    saturation: Option<&str>,
    replication: Option<u32>,
    seed: Option<u64>,
    fault_seed: Option<u64>,
) -> String {
    #[derive(Serialize)]
    struct Key<'a> {
        kind: TaskKind,
        protocol: u32,
        name: &'a str,
        method_kind: &'a str,
        command: &'a [String],
        executable: Option<&'a HashedFile>,
        inputs: &'a [HashedFile],
        version: &'a str,
        options: &'a std::collections::BTreeMap<String, serde_json::Value>,
        /// Only when true, so the ids of latency methods did not change when it came in.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        throughput: bool,
        scenario: &'a Scenario,
        /// Always present for an External task (the JSON of `Some(load)` is that of `load`).
        load: Option<LoadPoint>,
        #[serde(skip_serializing_if = "Option::is_none")]
        saturation: Option<&'a str>,
        replication: Option<u32>,
        seed: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        fault_seed: Option<u64>,
    }
    hash(&Key {
        kind,
        protocol: EXTERNAL_PROTOCOL,
        name: &method.name,
        method_kind: method.kind.as_str(),
        command: &method.command,
        executable: method.executable.as_ref(),
        inputs: &method.inputs,
        version: &method.version,
        options: &method.options,
        throughput: method.throughput,
        scenario,
        load,
        saturation,
        replication,
        seed,
        fault_seed,
    })
}

/// Version of the Aggregate task's output; part of its id. Bump when aggregate rows change
/// (2: the intermediates are the replications' means; 3: fewer than 3 replications pool their
/// batch means for the latency interval).
const AGGREGATE_VERSION: u32 = 3;

/// Id of the Aggregate task over the given replication ids.
pub fn aggregate(replications: &[&str]) -> String {
    hash(&(TaskKind::Aggregate, AGGREGATE_VERSION, replications))
}

/// The seed of one replication: from the spec seed and the task's inputs only.
pub fn seed(spec_seed: u64, scenario: &Scenario, load: LoadPoint, replication: u32) -> u64 {
    let bytes = serde_json::to_vec(&(spec_seed, scenario, load, replication)).unwrap_or_default();
    first_u64(&bytes)
}

/// The seed of search `replication` (from 0) of `runner simulate --saturation
/// --replications N`. The first search uses the base seed (`--seed`) itself, so one search
/// is the search of that seed (as before searches were replicated). Every later one is
/// derived as a replication's [`seed`] is, from the base seed, the scenario and the index
/// only, and tagged, so the searches' streams are independent of each other and of a spec's
/// replications, and two base seeds share no search but their own first ones (`--seed 1` and
/// `--seed 2` do not overlap, as `seed, seed + 1, ...` would).
pub fn saturation_search_seed(base_seed: u64, scenario: &Scenario, replication: u32) -> u64 {
    if replication == 0 {
        return base_seed;
    }
    let bytes = serde_json::to_vec(&("saturation_search", base_seed, scenario, replication))
        .unwrap_or_default();
    first_u64(&bytes)
}

/// The first 8 bytes of the blake3 digest of `bytes`, little-endian.
fn first_u64(bytes: &[u8]) -> u64 {
    let digest = blake3::hash(bytes);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// The seed of one replication's fault map (`fault_rate > 0` only, else `None`): from the spec
/// seed, the scenario and the replication index, but not the load, so every load point of a
/// scenario simulates the same faulty nodes and each replication draws its own.
pub fn fault_seed(spec_seed: u64, scenario: &Scenario, replication: u32) -> Option<u64> {
    if scenario.fault_rate == 0.0 {
        return None;
    }
    let bytes =
        serde_json::to_vec(&("fault_map", spec_seed, scenario, replication)).unwrap_or_default();
    Some(first_u64(&bytes))
}

/// A rough cost of one replication in seconds: flit-hops at ~12.5 ns plus ~0.5 ns per
/// node-cycle, over the cycles the run is expected to take ([`expected_cycles`]). The two
/// constants put the five-paper reproduction's estimated total at what it took (1,254 s of
/// CPU on the development machine, release build); they were 50 ns and 2 ns, written for a
/// slower simulator, which priced it at 2,019 s at `cycles` and 4,983 s at the expected stop.
pub fn simulation_cost(scenario: &Scenario, options: &sim::SimOptions, load: LoadPoint) -> f64 {
    let nodes = scenario.nodes() as f64;
    // In floating point throughout: no cycle count or network size can wrap the estimate
    // (it saturates at infinity instead, and the plan shows the run as endless).
    let cycles = options.warmup_cycles as f64 + expected_cycles(options, load);
    let rate = match load {
        LoadPoint::Rate(r) => r,
        LoadPoint::FractionOfSaturation(f) => f * 0.5 / f64::from(scenario.message_length.max(1)),
        LoadPoint::TraceTimeScale(_) => load.rate(scenario, None),
    };
    let hops = f64::from(scenario.topology.dimensions()) * f64::from(scenario.topology.radix())
        / 4.0
        + 1.0;
    let flit_hops = cycles * nodes * rate * f64::from(scenario.message_length) * hops;
    flit_hops * 12.5e-9 + cycles * nodes * 0.5e-9
}

/// The measured cycles a run is expected to take: `cycles`, or with a precision target (which
/// runs on until the interval is narrow enough, up to `max_cycles`) at a load that is a
/// fraction `f` of saturation, `cycles / (1 - f)` up to `max_cycles`: the closer to
/// saturation, the more the batch means vary and the longer the run. The form is fitted to the
/// five-paper reproduction's 5,253 simulations (their recorded times against this estimate:
/// rank correlation 0.54, against 0.48 at `cycles` alone; `1 / (1 - f)^2` fits no better and
/// overestimates the runs past 0.8 of saturation, which saturate and stop early). At a load
/// given as a rate the fraction is unknown and the estimate stays at `cycles`. The estimate
/// only orders tasks and prices a plan; a run's timeline corrects it for the next
/// (`exec::estimate`).
fn expected_cycles(options: &sim::SimOptions, load: LoadPoint) -> f64 {
    let cycles = options.cycles as f64;
    match (options.target_precision, load) {
        (Some(_), LoadPoint::FractionOfSaturation(f)) if f.is_finite() && f > 0.0 => {
            let busy = f.min(0.95);
            (cycles / (1.0 - busy)).min((options.max_cycles as f64).max(cycles))
        }
        _ => cycles,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Topology;

    /// A precision-mode run is priced at its expected stop: longer towards saturation, never
    /// past `max_cycles`, and at `cycles` without a precision target.
    #[test]
    fn a_precision_run_costs_more_towards_saturation() {
        let options = |target_precision| sim::SimOptions {
            cycles: 20_000,
            max_cycles: 300_000,
            target_precision,
            ..sim::SimOptions::default()
        };
        let fraction = LoadPoint::FractionOfSaturation;
        let precise = options(Some(0.02));
        assert_eq!(expected_cycles(&precise, fraction(0.5)), 40_000.0);
        assert!((expected_cycles(&precise, fraction(0.9)) - 200_000.0).abs() < 1e-6);
        assert_eq!(expected_cycles(&precise, fraction(0.99)), 300_000.0);
        assert_eq!(expected_cycles(&precise, fraction(1.5)), 300_000.0);
        assert_eq!(expected_cycles(&precise, LoadPoint::Rate(0.01)), 20_000.0);
        assert_eq!(expected_cycles(&options(None), fraction(0.9)), 20_000.0);
        let low = expected_cycles(&precise, fraction(0.1));
        assert!(low > 20_000.0 && low < 23_000.0, "{low}");
    }

    /// `saturation_search_seed(1, 8x8 torus, 1)`, as first derived.
    const SEARCH_1_OF_SEED_1: u64 = 11_370_963_441_780_701_602;

    /// Issue 19: `cycles: 18446744073709546616` wrapped the estimate to microseconds.
    #[test]
    fn the_cost_estimate_saturates_instead_of_wrapping() {
        let scenario = Scenario::new(Topology::Torus { radix: 8, dimensions: 2 });
        let options = |warmup_cycles, cycles| sim::SimOptions {
            warmup_cycles,
            cycles,
            ..sim::SimOptions::default()
        };
        let load = LoadPoint::Rate(0.001);
        let normal = simulation_cost(&scenario, &options(10_000, 100_000), load);
        let huge = simulation_cost(&scenario, &options(10_000, 18_446_744_073_709_546_616), load);
        let both = simulation_cost(&scenario, &options(u64::MAX, u64::MAX), load);
        assert!(normal > 0.0 && normal < 1.0, "{normal}");
        assert!(huge > 1e9, "{huge} seconds");
        assert!(both >= huge, "{both} < {huge}");
    }

    #[test]
    fn the_fault_seed_ignores_the_load_and_only_faulty_tasks_have_one() {
        let clean = Scenario::new(Topology::Torus { radix: 8, dimensions: 2 });
        assert_eq!(fault_seed(7, &clean, 0), None);
        let faulty = Scenario { fault_rate: 0.1, ..clean.clone() };
        let first = fault_seed(7, &faulty, 0);
        assert!(first.is_some());
        assert_ne!(first, fault_seed(7, &faulty, 1), "each replication draws its own map");
        assert_ne!(first, fault_seed(8, &faulty, 0), "the spec seed changes the map");
        let other_rate = Scenario { fault_rate: 0.2, ..clean.clone() };
        assert_ne!(first, fault_seed(7, &other_rate, 0));
        // A fault-free task's key serializes exactly as before fault seeds existed.
        let options = serde_json::to_string(&sim::SimOptions::default()).unwrap_or_default();
        assert!(!options.contains("fault_seed"), "{options}");
        let simulation = SimulationChoice {
            options: sim::SimOptions::default(),
            replications: 1,
            saturation_searches: 0,
            threads: None,
        };
        let load = (LoadPoint::Rate(0.01), None);
        let id = simulate(&faulty, &simulation, load, 0, 5, first);
        assert_ne!(id, simulate(&faulty, &simulation, load, 0, 5, fault_seed(7, &faulty, 1)));
        // Threads change how fast, not what: never the key.
        let threaded = SimulationChoice { threads: Some(4), ..simulation.clone() };
        assert_eq!(id, simulate(&faulty, &threaded, load, 0, 5, first));
    }

    /// The searches of `runner simulate --saturation`: the first has the base seed, each
    /// later one a seed of its own per index, base seed and scenario, none a spec
    /// replication's and none another base seed's; and they stay put.
    #[test]
    fn saturation_search_seeds_are_independent_and_stable() {
        let torus = Scenario::new(Topology::Torus { radix: 8, dimensions: 2 });
        let seeds: Vec<u64> = (0..3).map(|r| saturation_search_seed(1, &torus, r)).collect();
        assert_eq!(seeds[0], 1, "one search is the search of --seed");
        assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2]);
        let of_two: Vec<u64> = (0..3).map(|r| saturation_search_seed(2, &torus, r)).collect();
        assert!(seeds.iter().all(|s| !of_two.contains(s)), "{seeds:?} and {of_two:?} overlap");
        let other = Scenario { virtual_channels: 3, ..torus.clone() };
        assert_ne!(seeds[1], saturation_search_seed(1, &other, 1), "the scenario counts");
        assert_ne!(seeds[1], seed(1, &torus, LoadPoint::Rate(0.01), 1));
        assert_eq!(seeds[1], SEARCH_1_OF_SEED_1, "a search's seed changed: results move");
    }

    /// A batched point's id, hashed from the kept prefix, equals the id of its own Solve key.
    #[test]
    fn per_point_ids_equal_the_single_solve_ids() {
        let scenario = Scenario::new(Topology::Torus { radix: 8, dimensions: 2 });
        let source = crate::spec::SpecSource {
            path: "ids.yaml".into(),
            text: "name: ids\nscenario:\n  topology: {kind: torus, radix: 8, dimensions: 2}\n  \
                   routing: nbc\n  virtual_channels: 6\nload: {rates: [0.01]}\n\
                   methods: {model: {name: nbc_torus}}\n"
                .into(),
            sha256: String::new(),
        };
        let experiment = crate::spec::parse(&source).unwrap_or_else(|e| panic!("{e}"));
        let Some(model) = &experiment.model else { panic!("no model") };
        for scenario in [&scenario, &experiment.scenarios[0].scenario] {
            let ids = SolveIds::new(scenario, model);
            assert!(ids.prefix.is_some());
            for load in [
                LoadPoint::Rate(0.001),
                LoadPoint::Rate(1.0 / 3.0),
                LoadPoint::FractionOfSaturation(0.5),
                LoadPoint::TraceTimeScale(2.0),
            ] {
                assert_eq!(ids.id(load), solve(scenario, model, load), "{load:?}");
            }
        }
        let loads = [LoadPoint::Rate(0.001), LoadPoint::Rate(0.002)];
        let batch = solve_batch(&scenario, model, &loads);
        assert_ne!(batch, solve_batch(&scenario, model, &loads[..1]), "the loads are the batch");
    }
}
