//! The YAML spec as written: serde + schemars types, one per section.
//!
//! These types only describe syntax. Every field that may be swept is a
//! `Spanned<Sweep<T>>` so that validation can point at the offending value;
//! fields left out are `None` here and get their defaults in
//! [`super::validate`] from the constants below, which also feed the JSON Schema.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::report::ReportSpec;
use super::sweep::Sweep;
use crate::model::ModelName;
use crate::scenario::{
    BroadcastOrder, Dateline, Ejection, GlobalArrangement, Injection, InjectionProcessKind,
    LengthDistributionKind, RouterPreset, Routing, SwitchAllocator, SwitchingKind, TieBreak,
    TopologyKind, VcAllocator, VcClasses, VcReallocation,
};

/// A sweepable spec field with its source location.
pub type Field<T> = Spanned<Sweep<T>>;

/// Default `seed`.
pub const DEFAULT_SEED: u64 = 1;
pub use crate::scenario::fields::{
    DEFAULT_BUFFER_DEPTH, DEFAULT_FAULT_RATE, DEFAULT_MESSAGE_LENGTH, DEFAULT_ROUTER_DELAY,
    DEFAULT_VIRTUAL_CHANNELS,
};
/// Default `broadcast_fraction`.
pub const DEFAULT_BROADCAST_FRACTION: f64 = 0.0;
/// Default `startup_latency` (cycles).
pub const DEFAULT_STARTUP_LATENCY: f64 = 1.0;
/// Default simulation `cycles`.
pub const DEFAULT_CYCLES: u64 = 100_000;
/// Default simulation `warmup_cycles`.
pub const DEFAULT_WARMUP_CYCLES: u64 = 10_000;
/// Default simulation `replications`.
pub const DEFAULT_REPLICATIONS: u32 = 1;
/// Default simulation `replications` in throughput mode (`measure: throughput`): its fixed
/// window has no precision target, so its interval on the accepted rate comes from
/// replications (`docs/statistics.md`).
pub const DEFAULT_THROUGHPUT_REPLICATIONS: u32 = 3;
/// Default simulation `deadlock_cycles`.
pub const DEFAULT_DEADLOCK_CYCLES: u64 = 10_000;
/// Default simulation `source_queue_capacity` (messages per node, throughput mode).
pub const DEFAULT_SOURCE_QUEUE_CAPACITY: u32 = crate::sim::DEFAULT_SOURCE_QUEUE_CAPACITY;

/// An experiment spec: one YAML file in `experiments/`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "runner experiment spec")]
pub struct SpecFile {
    /// Experiment name: at most 100 letters, digits, `_` and `-`; names the report directory
    /// `reports/<name>/`.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Human-readable title for the report.
    #[serde(default)]
    pub title: Option<String>,
    /// Free text describing the experiment.
    #[serde(default)]
    pub description: Option<String>,
    /// Root seed: every simulation seed derives from it and the task's inputs.
    #[serde(default)]
    #[schemars(extend("default" = DEFAULT_SEED))]
    pub seed: Option<u64>,
    /// The physical system; any field may be a list (swept as a grid) or a range.
    #[schemars(with = "ScenarioSpec")]
    pub scenario: Spanned<ScenarioSpec>,
    /// Offered load, in messages per node per cycle.
    #[schemars(with = "LoadSpec")]
    pub load: Spanned<LoadSpec>,
    /// How to evaluate each point: an analytical model, the simulator, external programs, or
    /// any mix of them.
    #[schemars(with = "MethodsSpec")]
    pub methods: Spanned<MethodsSpec>,
    /// Figures and tables of the report bundle.
    #[serde(default)]
    #[schemars(with = "Option<ReportSpec>")]
    pub report: Option<Spanned<ReportSpec>>,
}

/// A key written directly under `scenario:` (a row of `scenario::fields::each_scenario_key`):
/// its value or sweep with its location. Its JSON Schema is the sweep's.
#[derive(Debug)]
pub struct Located<T>(pub Field<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Field::<T>::deserialize(deserializer).map(Located)
    }
}

impl<T> std::ops::Deref for Located<T> {
    type Target = Field<T>;

    fn deref(&self) -> &Field<T> {
        &self.0
    }
}

impl<T: JsonSchema> JsonSchema for Located<T> {
    fn inline_schema() -> bool {
        Sweep::<T>::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        Sweep::<T>::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        Sweep::<T>::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Sweep::<T>::json_schema(generator)
    }
}

/// Defines [`ScenarioSpec`] with a member for each key of `each_scenario_key`.
macro_rules! scenario_spec {
    ($( $(#[$meta:meta])* $name:ident: $ty:ty $(= $default:expr)?, $use:ident; )*) => {
        /// The `scenario:` section.
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ScenarioSpec {
            /// The network.
            pub topology: TopologySpec,
            /// The switching technique; wormhole when left out.
            #[serde(default)]
            pub switching: Option<SwitchingSpec>,
            /// The routing algorithm.
            #[schemars(with = "Sweep<Routing>")]
            pub routing: Field<Routing>,
            /// A router's knobs in one word (simulator): `booksim` sets `buffer_depth: 8`,
            /// `router_delay: 1`, `vc_allocation_delay: 1`, `switch_delay: 2`, `credit_delay: 1`,
            /// `input_speedup: 1`, `switch_allocator: islip`, `vc_reallocation: tail_sent`,
            /// `injection: channel` and `ejection: interleaved`, BookSim 2's router, wherever
            /// the spec leaves the key out; `ideal` (the default) sets nothing. One value, not
            /// swept.
            #[serde(default)]
            pub router: Option<RouterPreset>,
            $(
                $(#[$meta])*
                #[serde(default)]
                $(#[schemars(extend("default" = $default))])?
                pub $name: Option<Located<$ty>>,
            )*
            /// Traffic pattern; uniform unicast when left out.
            #[serde(default)]
            pub traffic: Option<TrafficSpec>,
            /// Groups of fields that vary together instead of forming a grid, e.g.
            /// `[[radix, message_length]]`: the lists in a group must have equal lengths.
            #[serde(default)]
            #[schemars(with = "Vec<Vec<String>>")]
            pub zip: Vec<Spanned<Vec<Spanned<String>>>>,
        }
    };
}
crate::scenario::fields::each_scenario_key!(scenario_spec);

/// Defines [`TopologySpec`] with a member for each key of `scenario::each_topology_count`.
macro_rules! topology_spec {
    ($( $(#[$meta:meta])* $name:ident; )*) => {
        /// `scenario.topology`.
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct TopologySpec {
            /// `torus` (k-ary n-cube), `mesh`, `hypercube`, `fat_tree` (butterfly fat-tree),
            /// `dragonfly`, `kary_ntree` (k-ary n-tree) or `graph` (any network read from a file).
            #[schemars(with = "Sweep<TopologyKind>")]
            pub kind: Field<TopologyKind>,
            $(
                $(#[$meta])*
                #[serde(default)]
                #[schemars(with = "Option<Sweep<u32>>")]
                pub $name: Option<Field<u32>>,
            )*
            /// The file describing the network (graph): its routers, the terminals of each and its
            /// links, in the text format of `docs/graph.md`, relative to the spec file's directory. Its
            /// content hash, not its name, is part of the task ids; a list sweeps over files.
            #[serde(default)]
            #[schemars(with = "Option<Sweep<String>>")]
            pub graph: Option<Field<String>>,
            /// How the dragonfly's global links join its groups: `absolute` (the default: group
            /// G's links lead to the other groups in increasing order), `relative` (link l to
            /// group G + l + 1 mod g) or `circulant` (links in pairs, m + 1 groups on and back);
            /// docs/dragonfly.md. A list sweeps.
            #[serde(default)]
            #[schemars(with = "Option<Sweep<GlobalArrangement>>")]
            pub global_arrangement: Option<Field<GlobalArrangement>>,
        }
    };
}
crate::scenario::each_topology_count!(topology_spec);

/// `scenario.switching`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchingSpec {
    /// `wormhole`, `scouting`, `circuit` or `virtual_cut_through`.
    #[schemars(with = "Sweep<SwitchingKind>")]
    pub kind: Field<SwitchingKind>,
    /// Scouting distance K >= 0 (scouting only; K = 0 behaves as wormhole).
    #[serde(default)]
    #[schemars(with = "Option<Sweep<u32>>")]
    pub scouting_distance: Option<Field<u32>>,
    /// Circuit switching (simulator only): cycles a message waits at its source after a failed
    /// set-up attempt before it retries; 0, the paper's, by default.
    #[serde(default)]
    #[schemars(with = "Option<Sweep<u32>>", extend("default" = 0))]
    pub circuit_backoff: Option<Field<u32>>,
    /// Circuit switching (simulator only): failed set-up attempts after the first that a
    /// message may retry before it is dropped (counted and reported); 10,000 by default.
    #[serde(default)]
    #[schemars(with = "Option<Sweep<u32>>", extend("default" = 10_000))]
    pub circuit_retry_limit: Option<Field<u32>>,
}

/// `scenario.traffic`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// Where messages go: `uniform` (every other node; the papers'), `uniform_with_self`,
    /// `transpose`, `bit_complement`, `bit_reverse`, `tornado`, `neighbor`, `hotspot`
    /// (simulator only; the models assume uniform), `broadcast_mix` (uniform unicast plus a
    /// fraction of broadcasts), or `trace` (replay the recorded messages of `trace`, with
    /// their times, endpoints and lengths; simulator only; the load is
    /// `load.trace_time_scale`).
    #[serde(default)]
    #[schemars(with = "Option<Sweep<TrafficPattern>>", extend("default" = "uniform"))]
    pub pattern: Option<Field<TrafficPattern>>,
    /// `hotspot` only: probability that a message goes to one of `hotspot_nodes`.
    #[serde(default)]
    #[schemars(with = "Option<Sweep<f64>>")]
    pub hotspot_fraction: Option<Field<f64>>,
    /// `hotspot` only: the hotspot node numbers (dimension 0 varies fastest); not swept.
    #[serde(default)]
    #[schemars(with = "Option<Vec<u32>>")]
    pub hotspot_nodes: Option<Spanned<Vec<u32>>>,
    /// `trace` only: the trace file, relative to the spec file's directory, `.csv` or
    /// `.parquet` with columns `cycle, source, destination, length` (docs/traces.md). Its
    /// content hash, not its path, is part of the task ids; not swept.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub trace: Option<Spanned<String>>,
    /// `trace` only: bytes per flit, for a trace whose length column is `length_bytes`
    /// (a length of b bytes is ceil(b / trace_flit_bytes) flits); not swept.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub trace_flit_bytes: Option<Spanned<u32>>,
    /// When each node generates its messages, at the mean `rate` whatever the process
    /// (simulator; the models assume Poisson): `poisson` (the default), `bernoulli` (one
    /// message with probability `rate` per node and cycle, as BookSim; `rate <= 1`) or `on_off`
    /// (bursts of one message per cycle, a geometric number of messages with mean
    /// `burst_length`, separated by silent periods; `rate <= B / (B + 1)`).
    #[serde(default)]
    #[schemars(with = "Option<Sweep<InjectionProcessKind>>", extend("default" = "poisson"))]
    pub injection_process: Option<Field<InjectionProcessKind>>,
    /// `on_off` only: the mean number of messages in a burst, B >= 1 (a burst sends one
    /// message per cycle).
    #[serde(default)]
    #[schemars(with = "Option<Sweep<f64>>")]
    pub burst_length: Option<Field<f64>>,
    /// Fraction beta of messages that are broadcasts, 0 <= beta <= 1 (broadcast_mix).
    #[serde(default)]
    #[schemars(with = "Option<Sweep<f64>>", extend("default" = DEFAULT_BROADCAST_FRACTION))]
    pub broadcast_fraction: Option<Field<f64>>,
    /// Message start-up latency Delta in cycles (broadcast_mix).
    #[serde(default)]
    #[schemars(with = "Option<Sweep<f64>>", extend("default" = DEFAULT_STARTUP_LATENCY))]
    pub startup_latency: Option<Field<f64>>,
    /// Base dimension of each broadcast's spanning binomial tree (broadcast_mix with
    /// broadcast_fraction > 0; simulator only): `random` per broadcast or `round_robin` per
    /// source node.
    #[serde(default)]
    #[schemars(with = "Option<Sweep<BroadcastOrder>>", extend("default" = "random"))]
    pub broadcast_order: Option<Field<BroadcastOrder>>,
}

/// `load:` give exactly one of `rates`, `fraction_of_saturation` and `trace_time_scale`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// Offered loads in messages/node/cycle: a list or a range.
    #[serde(default)]
    #[schemars(with = "Option<Sweep<f64>>")]
    pub rates: Option<Field<f64>>,
    /// Loads as fractions of each scenario's saturation rate (0 < f): the model's, or the
    /// simulator's with `saturation: simulation`.
    #[serde(default)]
    #[schemars(with = "Option<Sweep<f64>>")]
    pub fraction_of_saturation: Option<Field<f64>>,
    /// With `fraction_of_saturation`: whose saturation rate the fractions are of, `model` (the
    /// model's, the default) or `simulation` (the simulator's: the knee its
    /// `methods.simulation.saturation_searches` searches bracket, the mean of the largest
    /// offered rate each found stable; every method is then evaluated at the same offered
    /// loads, those fractions of where the simulator saturates).
    #[serde(default)]
    #[schemars(with = "Option<SaturationOf>", extend("default" = "model"))]
    pub saturation: Option<Spanned<SaturationOf>>,
    /// `traffic.pattern: trace` only, and then required: time scale factors s > 0 of the
    /// replay, the load axis of a trace. A message recorded at cycle t is generated at
    /// round(t * s): s < 1 compresses time (a higher load), s > 1 stretches it. The rows'
    /// `rate` is what the trace offers at each s.
    #[serde(default)]
    #[schemars(with = "Option<Sweep<f64>>")]
    pub trace_time_scale: Option<Field<f64>>,
}

/// `load.saturation`: whose saturation `fraction_of_saturation` is a fraction of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SaturationOf {
    /// The model's saturation rate (`methods.model`).
    #[default]
    Model,
    /// The simulator's saturation throughput, found by `methods.simulation.saturation_searches`.
    Simulation,
}

impl SaturationOf {
    /// Whether it is the default, the model's.
    pub fn is_model(&self) -> bool {
        *self == SaturationOf::Model
    }
}

/// `methods:` at least one of `model`, `simulation` and `external`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MethodsSpec {
    /// Evaluate an analytical model (see `runner models`).
    #[serde(default)]
    pub model: Option<ModelMethod>,
    /// Run the flit-level simulator.
    #[serde(default)]
    pub simulation: Option<SimulationMethod>,
    /// External evaluators: programs that read one scenario and load point as JSON on standard
    /// input and print one measurement as JSON (the protocol of `docs/external.md`). Running
    /// the spec runs these commands.
    #[serde(default)]
    #[schemars(with = "Vec<ExternalMethod>")]
    pub external: Vec<Spanned<ExternalMethod>>,
}

/// Default `timeout_seconds` of an external method (one hour).
pub const DEFAULT_EXTERNAL_TIMEOUT_SECONDS: u64 = 3600;
/// Default `cost_seconds` of an external method: the plan's estimate of one evaluation.
pub const DEFAULT_EXTERNAL_COST_SECONDS: f64 = 1.0;

/// One `methods.external` entry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalMethod {
    /// The method's name in the `method` column, figures and tables: a letter, then letters,
    /// digits or `_` (at most 64), neither `model` nor `simulation`, unique in the spec.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// `simulation` (seeded replications, aggregated into a mean and 95% CI) or `model` (one
    /// evaluation per load point, no seed).
    #[schemars(with = "ExternalKind")]
    pub kind: Spanned<ExternalKind>,
    /// The program and its arguments, run in the spec file's directory. A program written with
    /// a `/` is a file relative to that directory, content-hashed into the task id; a bare name
    /// (`python3`) is looked up on `PATH`.
    #[schemars(with = "Vec<String>")]
    pub command: Spanned<Vec<String>>,
    /// Files the results depend on (scripts, configuration files), relative to the spec
    /// file's directory: their content hashes are part of the task id, so editing one reruns
    /// this method's tasks.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub inputs: Vec<Spanned<String>>,
    /// The evaluator's version as the user declares it (a release, a commit); part of the task
    /// id and of the `evaluator` column.
    #[schemars(with = "String")]
    pub version: Spanned<String>,
    /// `kind: simulation` only: independent replications per load point (1 to 10000).
    #[serde(default)]
    #[schemars(with = "Option<u32>", extend("default" = DEFAULT_REPLICATIONS))]
    pub replications: Option<Spanned<u32>>,
    /// Seconds one evaluation may take before it is killed and its row marked failed
    /// (1 to 604800, a week).
    #[serde(default)]
    #[schemars(with = "Option<u64>", extend("default" = DEFAULT_EXTERNAL_TIMEOUT_SECONDS))]
    pub timeout_seconds: Option<Spanned<u64>>,
    /// The plan's estimate of one evaluation's run time in seconds (for `runner plan` and the
    /// Slurm batches).
    #[serde(default)]
    #[schemars(with = "Option<f64>", extend("default" = DEFAULT_EXTERNAL_COST_SECONDS))]
    pub cost_seconds: Option<Spanned<f64>>,
    /// `kind: simulation` only: what the program is asked to measure, `latency` (the default)
    /// or `throughput` (accepted throughput past saturation too), as `methods.simulation`'s
    /// `measure`. Handed to the program as the request's `measure` and written to the rows'
    /// `measure` column, so the saturation table lists the method beside the simulator.
    #[serde(default)]
    #[schemars(with = "Option<MeasureName>", extend("default" = "latency"))]
    pub measure: Option<Spanned<MeasureName>>,
    /// `kind: simulation` only: independent saturation searches per scenario (0 to 100;
    /// default 0), as `methods.simulation.saturation_searches`, with runner bisecting the
    /// offered load and the program evaluating each point (a request with `measure:
    /// throughput`). The seeds are the built-in simulator's searches' seeds.
    #[serde(default)]
    #[schemars(with = "Option<u32>", extend("default" = 0))]
    pub saturation_searches: Option<Spanned<u32>>,
    /// Free-form settings handed to the program in the request's `options`; part of the task id.
    #[serde(default)]
    pub options: std::collections::BTreeMap<String, serde_json::Value>,
}

/// `methods.external[].kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExternalKind {
    /// One evaluation per load point.
    Model,
    /// Seeded replications per load point.
    Simulation,
}

impl ExternalKind {
    /// The kind's name in the spec and the protocol.
    pub fn as_str(&self) -> &'static str {
        match self {
            ExternalKind::Model => "model",
            ExternalKind::Simulation => "simulation",
        }
    }
}

/// `methods.model`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelMethod {
    /// The model's name, as `runner models` lists it.
    #[schemars(with = "ModelName")]
    pub name: Spanned<ModelName>,
    /// `fat_tree` only: read eq. (22) literally instead of erratum E-BFT-3.
    #[serde(default)]
    pub literal_eq22: bool,
    /// Points of the model's dense curve per scenario (default 100; 0: none): extra model
    /// rows (`load_grid = dense`) from near zero load to just below the scenario's saturation
    /// rate, so that figures draw the model as a smooth line up to its asymptote whatever
    /// loads the spec samples. Tables leave them out. At most 1000.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(max = 1000))]
    pub curve_points: Option<Spanned<u32>>,
}

/// `methods.simulation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulationMethod {
    /// Measurement window in cycles (with `target_precision`: the minimum window).
    #[serde(default)]
    #[schemars(with = "Option<u64>", extend("default" = DEFAULT_CYCLES))]
    pub cycles: Option<Spanned<u64>>,
    /// Cycles simulated before measuring.
    #[serde(default)]
    #[schemars(with = "Option<u64>", extend("default" = DEFAULT_WARMUP_CYCLES))]
    pub warmup_cycles: Option<Spanned<u64>>,
    /// Independent replications per load point (>= 1; default 1, and 3 with `measure:
    /// throughput`); reported as mean and 95% CI. 1 with trace traffic: a trace is one
    /// workload, and its replications would replay it again.
    #[serde(default)]
    #[schemars(with = "Option<u32>", extend("default" = DEFAULT_REPLICATIONS))]
    pub replications: Option<Spanned<u32>>,
    /// Run (after at least `cycles`) until the 95% CI half-width of mean latency is below this
    /// fraction of the mean.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub target_precision: Option<Spanned<f64>>,
    /// Cap on simulated cycles when `target_precision` is set.
    #[serde(default)]
    #[schemars(with = "Option<u64>")]
    pub max_cycles: Option<Spanned<u64>>,
    /// Report a deadlock when no flit moved for this many cycles.
    #[serde(default)]
    #[schemars(with = "Option<u64>", extend("default" = DEFAULT_DEADLOCK_CYCLES))]
    pub deadlock_cycles: Option<Spanned<u64>>,
    /// What to measure: `latency` (stop early as saturated past saturation) or `throughput`
    /// (the accepted rate over the whole window at any load, with capped source queues).
    #[serde(default)]
    #[schemars(with = "Option<MeasureName>", extend("default" = "latency"))]
    pub measure: Option<Spanned<MeasureName>>,
    /// Independent saturation searches per scenario (0 to 100; default 0, none). Each search
    /// finds the saturation throughput as `runner simulate --saturation` does: throughput-mode
    /// points from the injection bound down, the offered load bisected until the knee's bracket
    /// is within 1% of its upper end, the highest accepted rate over its points; the searches'
    /// seeds are those of `runner simulate --saturation --seed <spec seed> --replications N`.
    /// Each gives a row (`measure = saturation`) and their mean a row with its 95% Student-t
    /// interval over the searches, which the `saturation` table shows.
    #[serde(default)]
    #[schemars(with = "Option<u32>", extend("default" = 0))]
    pub saturation_searches: Option<Spanned<u32>>,
    /// Throughput mode: messages one node's source queue holds at most (>= 1); a message
    /// generated for a full queue is dropped and counted.
    #[serde(default)]
    #[schemars(with = "Option<u32>", extend("default" = DEFAULT_SOURCE_QUEUE_CAPACITY))]
    pub source_queue_capacity: Option<Spanned<u32>>,
    /// Record the flits each physical link carries in the measurement window: the bundle then
    /// holds `links.parquet` (one row per point and link: source and destination router,
    /// dimension or level, utilisation) and `kind: link_heatmap` figures can draw it. Off by
    /// default: a large network's counts would swell every cache entry.
    #[serde(default)]
    pub link_loads: bool,
    /// With `link_loads`, also the flits per virtual channel (`links.parquet` gains one row per
    /// VC); implies `link_loads`.
    #[serde(default)]
    pub link_loads_per_vc: bool,
    /// Threads each simulation of a large network runs on (1 to 256; at most the run's
    /// workers, `-j`). Left out, the run decides per task: a large network gets the workers
    /// that no other waiting task needs, up to 8, and a task among many gets one. Only the
    /// untimed wormhole and virtual cut-through simulations of networks of at least 32,768
    /// virtual channels on links split; the others take one thread. The results are the same
    /// bit for bit on any number of threads, so this is no part of a task's identity.
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1, max = 256))]
    pub threads: Option<Spanned<u32>>,
}

/// `methods.simulation.measure`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MeasureName {
    /// Latency at stable loads (the default).
    Latency,
    /// Accepted throughput against offered load, past saturation too.
    Throughput,
}

/// `scenario.traffic.pattern`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrafficPattern {
    /// Uniform unicast destinations.
    Uniform,
    /// Uniform unicast mixed with broadcasts (`broadcast_fraction`).
    BroadcastMix,
    /// Uniform over all nodes, the source included.
    UniformWithSelf,
    /// Matrix transpose of the node's digits (even number of dimensions).
    Transpose,
    /// Complemented node number (power-of-two node count).
    BitComplement,
    /// Reversed node number bits (power-of-two node count).
    BitReverse,
    /// Every coordinate ceil(k/2) - 1 places forward.
    Tornado,
    /// Every coordinate one place forward.
    Neighbor,
    /// Dragonfly: every terminal of group i to a random terminal of group i + 1.
    GroupShift,
    /// Slim Fly: every terminal of router (s, a, b) to a random terminal of router
    /// (s, a + 1, b), at distance 2 through one common neighbour (its worst case for minimal
    /// routing).
    WorstCase,
    /// A fraction of messages to a set of hotspot nodes, the rest uniform.
    Hotspot,
    /// The recorded messages of `trace`, replayed (simulator only).
    Trace,
}

macro_rules! named_values {
    ($($ty:ty),*) => {$(
        impl super::sweep::SweepValue for $ty {
            fn from_range_point(_: f64) -> Result<$ty, String> {
                Err("this field takes names; a range {from, to, ...} only applies to numbers".into())
            }
        }
    )*};
}

named_values!(
    TopologyKind,
    GlobalArrangement,
    SwitchingKind,
    Routing,
    Injection,
    VcReallocation,
    SwitchAllocator,
    VcAllocator,
    VcClasses,
    Ejection,
    LengthDistributionKind,
    InjectionProcessKind,
    Dateline,
    TieBreak,
    TrafficPattern,
    BroadcastOrder
);
