//! One tidy result row: the unit the executor caches, the store writes and the report reads.
//!
//! A row is one method x scenario x load x replication. Model rows have
//! `method = "model"` and no replication. Simulation rows come in two kinds:
//! one row per replication (`replication = Some(r)`), and one aggregate row per
//! load point (`replication = None`) whose `latency` is the mean over the
//! replications and whose `latency_ci95` is the 95% confidence half-width
//! (batch means pooled across fewer than three replications, Student t across
//! the replication means from three on: `exec::evaluate`). Reports plot aggregate rows. The columns are
//! documented in `schemas/results.md`; keep the two in step.

use serde::{Deserialize, Serialize};

use crate::measurement::{LatencyHistograms, LinkLoads};
use crate::scenario::Scenario;
use crate::scenario::fields::{self, Cell};

/// The Rust type of a result column of kind `$kind` (a column kind of `store::parquet`).
macro_rules! column_type {
    (Str) => { String };
    (OptStr) => { Option<String> };
    (U32) => { u32 };
    (OptU32) => { Option<u32> };
    (U64) => { u64 };
    (OptU64) => { Option<u64> };
    (F64) => { f64 };
    (OptF64) => { Option<f64> };
}
pub(crate) use column_type;

/// Defines [`Row`], with the scenario columns of `scenario::fields::each_column` between its
/// identity and its results, and [`Row::of_scenario`].
macro_rules! row {
    ($( $(#[$meta:meta])* $name:ident: $kind:ident; )*) => {
        /// One result row. Field order is column order in `results.parquet`.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct Row {
            /// Experiment name (the spec's `name`).
            pub experiment: String,
            /// Content hash of the task that produced the row (hex); for a model row of the spec's load
            /// grid, the point's own hash (`plan::identity::SolveIds`), not its Solve batch's.
            pub task_id: String,
            /// Short content hash of the scenario alone: rows with equal `scenario_id` describe the same system.
            pub scenario_id: String,
            /// `model`, `simulation`, or the name of an external method (`methods.external`).
            pub method: String,
            /// Model name (`fat_tree`, ...) or `simulator`, with the evaluator version: `fat_tree@model-0.1.0`;
            /// an external method's name and declared version.
            pub evaluator: String,
            $( $(#[$meta])* pub $name: column_type!($kind), )*
            /// Offered load (messages/node/cycle); for trace traffic, what the trace offers at
            /// `trace_time_scale`: messages / nodes / duration.
            pub rate: f64,
            /// `rate / saturation_rate` (the load as written, when given as `fraction_of_saturation`).
            pub fraction_of_saturation: Option<f64>,
            /// Trace traffic: the time scale of the replay (the load as written); null otherwise.
            pub trace_time_scale: Option<f64>,
            /// Trace traffic: the offered load in flits/node/cycle, messages x mean length / nodes /
            /// duration; null otherwise.
            pub trace_flit_load: Option<f64>,
            /// The model's saturation rate for this scenario, when it was computed.
            pub saturation_rate: Option<f64>,
            /// Mean latency (cycles).
            pub latency: Option<f64>,
            /// 95% confidence half-width of `latency` (cycles).
            pub latency_ci95: Option<f64>,
            /// Mean network latency without source wait (cycles).
            pub network_latency: Option<f64>,
            /// Mean source-queue wait (cycles).
            pub source_wait: Option<f64>,
            /// Mean unicast latency, where broadcasts are reported separately (cycles).
            pub unicast_latency: Option<f64>,
            /// Request-reply traffic: mean round trip of a request, its generation to its reply's
            /// delivery (cycles; simulation only).
            #[serde(default)]
            pub round_trip_latency: Option<f64>,
            // Latency percentiles (simulation; null for model rows and where no latency was
            // measured). Nearest rank over the measured messages of a replication (`sim::percentiles`):
            // the smallest value L such that at least q of the messages took <= L cycles. An aggregate
            // row holds the mean of its replications' percentiles and the largest of their maxima.
            /// Median of the message latency, the quantity whose mean is `latency` (cycles).
            #[serde(default)]
            pub latency_p50: Option<f64>,
            /// 90th percentile of the message latency (cycles).
            #[serde(default)]
            pub latency_p90: Option<f64>,
            /// 95th percentile of the message latency (cycles).
            #[serde(default)]
            pub latency_p95: Option<f64>,
            /// 99th percentile of the message latency (cycles).
            #[serde(default)]
            pub latency_p99: Option<f64>,
            /// Largest message latency (cycles).
            #[serde(default)]
            pub latency_max: Option<f64>,
            /// 95% confidence half-width of `latency_p50` (cycles).
            #[serde(default)]
            pub latency_p50_ci95: Option<f64>,
            /// 95% confidence half-width of `latency_p90` (cycles).
            #[serde(default)]
            pub latency_p90_ci95: Option<f64>,
            /// 95% confidence half-width of `latency_p95` (cycles).
            #[serde(default)]
            pub latency_p95_ci95: Option<f64>,
            /// 95% confidence half-width of `latency_p99` (cycles).
            #[serde(default)]
            pub latency_p99_ci95: Option<f64>,
            /// Median of the network latency, the quantity whose mean is `network_latency` (cycles).
            #[serde(default)]
            pub network_latency_p50: Option<f64>,
            /// 90th percentile of the network latency (cycles).
            #[serde(default)]
            pub network_latency_p90: Option<f64>,
            /// 95th percentile of the network latency (cycles).
            #[serde(default)]
            pub network_latency_p95: Option<f64>,
            /// 99th percentile of the network latency (cycles).
            #[serde(default)]
            pub network_latency_p99: Option<f64>,
            /// Largest network latency (cycles).
            #[serde(default)]
            pub network_latency_max: Option<f64>,
            /// Median of the source-queue wait, the quantity whose mean is `source_wait` (cycles).
            #[serde(default)]
            pub source_wait_p50: Option<f64>,
            /// 90th percentile of the source-queue wait (cycles).
            #[serde(default)]
            pub source_wait_p90: Option<f64>,
            /// 95th percentile of the source-queue wait (cycles).
            #[serde(default)]
            pub source_wait_p95: Option<f64>,
            /// 99th percentile of the source-queue wait (cycles).
            #[serde(default)]
            pub source_wait_p99: Option<f64>,
            /// Largest source-queue wait (cycles).
            #[serde(default)]
            pub source_wait_max: Option<f64>,
            /// Median of the unicast latency, the quantity whose mean is `unicast_latency` (cycles;
            /// simulated broadcasts only).
            #[serde(default)]
            pub unicast_latency_p50: Option<f64>,
            /// 90th percentile of the unicast latency (cycles).
            #[serde(default)]
            pub unicast_latency_p90: Option<f64>,
            /// 95th percentile of the unicast latency (cycles).
            #[serde(default)]
            pub unicast_latency_p95: Option<f64>,
            /// 99th percentile of the unicast latency (cycles).
            #[serde(default)]
            pub unicast_latency_p99: Option<f64>,
            /// Largest unicast latency (cycles).
            #[serde(default)]
            pub unicast_latency_max: Option<f64>,
            /// Average multiplexing degree V-bar.
            pub multiplexing_degree: Option<f64>,
            /// Message arrival rate at one channel (messages/cycle).
            pub channel_rate: Option<f64>,
            /// Probability that all V virtual channels of a channel are busy.
            pub blocking_probability: Option<f64>,
            /// Accepted throughput (messages/node/cycle).
            pub throughput: Option<f64>,
            /// 95% confidence half-width of `throughput` (messages/node/cycle; simulation).
            #[serde(default)]
            pub throughput_ci95: Option<f64>,
            /// Mean hops per message.
            pub hops: Option<f64>,
            /// `ok`, `saturated`, `deadlock`, `imprecise` (precision mode stopped at `max_cycles` short of `target_precision`, or measured nothing: the numbers are an estimate), `unsupported` (an external method cannot evaluate the scenario), `failed` or `skipped`.
            pub status: String,
            /// Error message or saturation/deadlock detail.
            pub error: Option<String>,
            /// Replication index; null for model rows and for aggregate simulation rows.
            pub replication: Option<u32>,
            /// Number of replications behind an aggregate row; null otherwise.
            pub replications: Option<u32>,
            /// Random seed of a simulation replication.
            pub seed: Option<u64>,
            /// Cycles simulated in all: warm-up, measurement window and the drain until the window's
            /// messages are delivered (so more than the window).
            pub cycles: Option<u64>,
            /// Simulated flit-link traversals.
            pub flit_hops: Option<u64>,
            /// Messages whose latency entered the mean.
            pub messages_measured: Option<u64>,
            /// Wall-clock seconds the task took (not reproducible; excluded from comparisons).
            pub wall_seconds: f64,
            /// All other named quantities of the evaluator, as a JSON object.
            pub intermediates: String,
            /// Seed of the fault map of a simulation replication with `fault_rate > 0` (the same for
            /// every load point of a scenario); null otherwise.
            pub fault_seed: Option<u64>,
            /// Faulty nodes in that replication's fault map; null without faults.
            pub fault_count: Option<u64>,
            /// Short hash (16 hex digits) of that fault map: equal hashes, same faulty nodes; null
            /// without faults.
            pub fault_map: Option<String>,

            /// What the simulation measured: `latency` or `throughput` (`methods.simulation.measure`,
            /// or an external simulation's `measure`), or `saturation` for a saturation search's
            /// row and the mean of a method's searches (no load point); null for model rows.
            #[serde(default)]
            pub measure: Option<String>,
            /// Offered load the simulation generated in its window, messages dropped at full source
            /// queues included (messages/node/cycle).
            #[serde(default)]
            pub offered_throughput: Option<f64>,
            /// Accepted throughput of the least-served destination node (messages/node/cycle;
            /// throughput mode).
            #[serde(default)]
            pub throughput_min: Option<f64>,
            /// Accepted throughput of the best-served destination node (messages/node/cycle;
            /// throughput mode).
            #[serde(default)]
            pub throughput_max: Option<f64>,
            /// Accepted throughput in flits/node/cycle (simulation).
            #[serde(default)]
            pub flit_throughput: Option<f64>,
            /// Accepted flits/node/cycle of the least-served destination node (throughput mode).
            #[serde(default)]
            pub flit_throughput_min: Option<f64>,
            /// Accepted flits/node/cycle of the best-served destination node (throughput mode).
            #[serde(default)]
            pub flit_throughput_max: Option<f64>,
            /// Messages dropped at full source queues in the window (throughput mode; summed over the
            /// replications in an aggregate row).
            #[serde(default)]
            pub source_drops: Option<u64>,
            /// Which load grid the row belongs to: `spec` for a load point the spec's `load` lists,
            /// `dense` for a point of the model's dense curve (`methods.model.curve_points` per
            /// scenario, from near zero load to just below saturation), which figures draw as the
            /// model line and tables leave out. Null in files written before the column existed (read
            /// as `spec`).
            #[serde(default)]
            pub load_grid: Option<String>,

            // Not columns of results.parquet: the side tables' data, carried through the cache to the
            // bundle (`store::links`, `store::histograms`).
            /// Flits per link in the measurement window (simulation with `link_loads: true`; an
            /// aggregate row: the sum over its replications); written to `links.parquet`. Left out of
            /// the serialized row when absent, so it is not a column anywhere a row is read as one.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub link_loads: Option<LinkLoads>,
            /// The binned latency distributions (simulation; an aggregate row: the replications'
            /// counts added); written to `histograms.parquet`. Left out when absent, as `link_loads`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub histograms: Option<LatencyHistograms>,
        }

        impl Row {
            /// A row with only the scenario columns filled in, each the scenario table's value
            /// (`Field::of`).
            pub fn of_scenario(scenario: &Scenario) -> Row {
                Row {
                    $(
                        $name: FromCell::from_cell(
                            (fields::FIELDS[const { fields::index(stringify!($name)) }].of)(scenario),
                        ),
                    )*
                    ..Row::default()
                }
            }
        }
    };
}
fields::each_column!(row);

/// A scenario column's value as its member of [`Row`] holds it. The scenario table's values
/// have the column's type (a test holds them to it); anything else reads as the type's default.
pub(crate) trait FromCell {
    fn from_cell(cell: Cell) -> Self;
}

impl FromCell for String {
    fn from_cell(cell: Cell) -> String {
        match cell {
            Cell::Text(text) => text,
            _ => String::new(),
        }
    }
}

impl FromCell for u32 {
    fn from_cell(cell: Cell) -> u32 {
        match cell {
            Cell::Count(n) => u32::try_from(n).unwrap_or(u32::MAX),
            _ => 0,
        }
    }
}

impl FromCell for u64 {
    fn from_cell(cell: Cell) -> u64 {
        match cell {
            Cell::Count(n) => n,
            _ => 0,
        }
    }
}

impl FromCell for f64 {
    fn from_cell(cell: Cell) -> f64 {
        match cell {
            Cell::Real(x) => x,
            _ => 0.0,
        }
    }
}

impl<T: FromCell> FromCell for Option<T> {
    fn from_cell(cell: Cell) -> Option<T> {
        match cell {
            Cell::Null => None,
            cell => Some(T::from_cell(cell)),
        }
    }
}

/// [`Row::load_grid`] of a load point the spec lists.
pub const SPEC_GRID: &str = "spec";
/// [`Row::load_grid`] of a point of the model's dense curve.
pub const DENSE_GRID: &str = "dense";

/// The `measure` of a saturation search's rows (`saturation_searches`).
pub const SATURATION_SEARCH: &str = "saturation";

impl Row {
    /// Whether the row is a saturation search's, or the mean of a method's searches
    /// (`measure = saturation`): a scenario's saturation throughput, not a load point.
    pub fn is_saturation_search(&self) -> bool {
        self.measure.as_deref() == Some(SATURATION_SEARCH)
    }

    /// Whether the row is a point of the model's dense curve (not one the spec asked for).
    pub fn is_dense(&self) -> bool {
        self.load_grid.as_deref() == Some(DENSE_GRID)
    }

    /// A number of the row's `intermediates` object by key (`None` when the object or the
    /// key is missing, or the value is not a number).
    pub fn intermediate(&self, key: &str) -> Option<f64> {
        if self.intermediates.is_empty() {
            return None;
        }
        serde_json::from_str::<serde_json::Value>(&self.intermediates).ok()?.get(key)?.as_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::Row;
    use crate::scenario::fields;
    use crate::scenario::{
        InjectionProcess, MessageLengths, Routing, Scenario, Switching, Topology, Traffic,
    };

    /// Every scenario column of a row holds what the scenario table's `of` says, on scenarios
    /// that fill every optional column at least once.
    #[test]
    fn a_row_s_scenario_columns_are_the_scenario_table_s_values() {
        let torus = Topology::Torus { radix: 8, dimensions: 2 };
        let mut scenarios = vec![Scenario::new(torus.clone())];
        let mut circuit = Scenario::new(torus.clone());
        circuit.switching = Switching::Circuit;
        circuit.circuit_backoff = Some(3);
        scenarios.push(circuit);
        let mut scouting = Scenario::new(torus.clone());
        scouting.switching = Switching::Scouting { scouting_distance: 2 };
        scouting.routing = Routing::Duato;
        scouting.escape_channels = Some(1);
        scouting.traffic = Traffic::Hotspot { fraction: 0.25, nodes: vec![1, 5] };
        scouting.injection_process = InjectionProcess::OnOff { burst_length: 4.0 };
        scouting.message_length_distribution = MessageLengths::Bimodal { min: 8, max: 64 };
        scouting.input_speedup = Some(2);
        scenarios.push(scouting.with_conventions_resolved());
        let mut dragonfly = Scenario::new(Topology::Dragonfly {
            terminals_per_router: 2,
            routers_per_group: 4,
            global_links_per_router: 2,
            global_arrangement: crate::scenario::GlobalArrangement::Absolute,
        });
        dragonfly.routing = Routing::Ugal;
        scenarios.push(dragonfly);
        let mut broadcast = Scenario::new(Topology::Hypercube { dimensions: 4 });
        broadcast.broadcast_fraction = 0.1;
        scenarios.push(broadcast);
        scenarios.push(Scenario::new(Topology::FatTree { processors: 64 }));
        for scenario in &scenarios {
            let row = serde_json::to_value(Row::of_scenario(scenario)).expect("json");
            for field in fields::columns() {
                assert_eq!(
                    row[field.name],
                    (field.of)(scenario).to_json(),
                    "{}: {scenario:?}",
                    field.name
                );
            }
        }
    }
}
