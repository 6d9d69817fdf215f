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
use crate::scenario::{Scenario, Switching, Traffic};

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
    /// `torus`, `mesh`, `hypercube`, `fat_tree` or `dragonfly`.
    pub topology: String,
    /// Radix k (2 for the hypercube, 4 for the fat-tree, the router radix p + a - 1 + h for the
    /// dragonfly).
    pub radix: u32,
    /// Dimensions n (fat-tree: levels; dragonfly: 2, its local and global links).
    pub dimensions: u32,
    /// Number of processing nodes (the dragonfly's terminals).
    pub nodes: u64,
    /// Dragonfly: terminals per router p; null for other topologies.
    #[serde(default)]
    pub terminals_per_router: Option<u32>,
    /// Dragonfly: routers per group a; null for other topologies.
    #[serde(default)]
    pub routers_per_group: Option<u32>,
    /// Dragonfly: global links per router h; null for other topologies.
    #[serde(default)]
    pub global_links_per_router: Option<u32>,
    /// Graph: the file as the spec names it (display); null for other topologies.
    #[serde(default)]
    pub graph: Option<String>,
    /// Graph: blake3 of the file's content (hex), the graph's identity; null for other
    /// topologies.
    #[serde(default)]
    pub graph_blake3: Option<String>,
    /// `wormhole`, `scouting` or `circuit`.
    pub switching: String,
    /// Scouting distance K; null unless switching is scouting.
    pub scouting_distance: Option<u32>,
    /// Routing algorithm name.
    pub routing: String,
    /// Virtual channels per physical channel V.
    pub virtual_channels: u32,
    /// Escape channels (Nbc V2) when set explicitly.
    pub escape_channels: Option<u32>,
    /// Flit buffers per virtual channel.
    pub buffer_depth: u32,
    /// Extra router pipeline cycles per hop.
    pub router_delay: u32,
    /// Flits one router input port may send per cycle (simulator); null: unlimited.
    pub input_speedup: Option<u32>,
    /// Message length M (flits).
    pub message_length: u32,
    /// E[M^2] for random message lengths; null for fixed length.
    pub message_length_second_moment: Option<f64>,
    /// How message lengths vary around their mean `message_length`: `fixed`, `bimodal`,
    /// `geometric` or `uniform` (null in bundles written before the column existed).
    pub message_length_distribution: Option<String>,
    /// The short length of a bimodal distribution, the shortest of a uniform one (flits); null
    /// for the others.
    pub message_length_min: Option<u32>,
    /// The long length of a bimodal distribution, the longest of a uniform one (flits); null
    /// for the others.
    pub message_length_max: Option<u32>,
    /// Node-failure probability theta.
    pub fault_rate: f64,
    /// Broadcast fraction beta.
    pub broadcast_fraction: f64,
    /// Start-up latency Delta (cycles).
    pub startup_latency: f64,
    /// `single`, `interleaved` or `unlimited`.
    pub ejection: String,
    /// Dateline convention of torus dimension-order routes (`per_traversal` or `switch`); null
    /// where routes have no dateline (meshes, hypercubes, adaptive and Nbc routing).
    pub dateline: Option<String>,
    /// Direction at distance k/2 of torus dimension-order routes (`random` or `positive`);
    /// null where no route has such a tie.
    pub tie_break: Option<String>,
    /// Traffic pattern: `uniform`, `uniform_with_self`, `transpose`, `bit_complement`,
    /// `bit_reverse`, `tornado`, `neighbor`, `group_shift` (dragonfly) or `hotspot`.
    pub traffic: String,
    /// Probability that a message goes to a hotspot node; null unless traffic is `hotspot`.
    pub hotspot_fraction: Option<f64>,
    /// The hotspot node numbers, comma-separated; null unless traffic is `hotspot`.
    pub hotspot_nodes: Option<String>,
    /// When messages are generated: `poisson`, `bernoulli` or `on_off` (null in bundles written
    /// before the column existed).
    pub injection_process: Option<String>,
    /// Mean number of messages in a burst of an `on_off` source; null for the others.
    pub burst_length: Option<f64>,
    /// Base dimension of each broadcast tree, `random` or `round_robin`; null without
    /// broadcasts (`broadcast_fraction = 0`).
    pub broadcast_order: Option<String>,
    /// Circuit switching: cycles a message waits at its source before retrying a failed set-up
    /// (0: none, the paper's); null for other switching.
    pub circuit_backoff: Option<u32>,
    /// Circuit switching: retries after which a message is dropped; null for other switching.
    pub circuit_retry_limit: Option<u32>,
    /// Trace traffic: blake3 of the replayed trace file's content (hex); null for generated
    /// traffic.
    pub trace_blake3: Option<String>,
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
    /// or an external simulation's `measure`); null for model rows.
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

/// [`Row::load_grid`] of a load point the spec lists.
pub const SPEC_GRID: &str = "spec";
/// [`Row::load_grid`] of a point of the model's dense curve.
pub const DENSE_GRID: &str = "dense";

impl Row {
    /// Whether the row is a point of the model's dense curve (not one the spec asked for).
    pub fn is_dense(&self) -> bool {
        self.load_grid.as_deref() == Some(DENSE_GRID)
    }
}

impl Row {
    /// A row with only the scenario columns filled in (topology to ejection).
    pub fn of_scenario(scenario: &Scenario) -> Row {
        Row {
            topology: scenario.topology.kind().to_string(),
            radix: scenario.topology.radix(),
            dimensions: scenario.topology.dimensions(),
            nodes: scenario.nodes(),
            terminals_per_router: scenario.topology.dragonfly().map(|(p, _, _)| p),
            routers_per_group: scenario.topology.dragonfly().map(|(_, a, _)| a),
            global_links_per_router: scenario.topology.dragonfly().map(|(_, _, h)| h),
            graph: scenario.topology.graph().map(|g| g.file.clone()),
            graph_blake3: scenario.topology.graph().map(|g| g.blake3.clone()),
            switching: scenario.switching.kind().to_string(),
            scouting_distance: scenario.switching.scouting_distance(),
            routing: scenario.routing.as_str().to_string(),
            virtual_channels: scenario.virtual_channels,
            escape_channels: scenario.escape_channels,
            buffer_depth: scenario.buffer_depth,
            router_delay: scenario.router_delay,
            input_speedup: scenario.input_speedup,
            message_length: scenario.message_length,
            message_length_second_moment: scenario.message_length_second_moment,
            message_length_distribution: Some(
                scenario.message_length_distribution.as_str().to_string(),
            ),
            message_length_min: scenario.message_length_distribution.bounds().map(|b| b.0),
            message_length_max: scenario.message_length_distribution.bounds().map(|b| b.1),
            fault_rate: scenario.fault_rate,
            broadcast_fraction: scenario.broadcast_fraction,
            startup_latency: scenario.startup_latency,
            ejection: scenario.ejection.as_str().to_string(),
            dateline: scenario.dateline_convention().map(|d| d.as_str().to_string()),
            tie_break: scenario.tie_break_convention().map(|t| t.as_str().to_string()),
            traffic: scenario.traffic.as_str().to_string(),
            hotspot_fraction: match &scenario.traffic {
                Traffic::Hotspot { fraction, .. } => Some(*fraction),
                _ => None,
            },
            hotspot_nodes: match &scenario.traffic {
                Traffic::Hotspot { nodes, .. } => {
                    Some(nodes.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
                }
                _ => None,
            },
            injection_process: Some(scenario.injection_process.as_str().to_string()),
            burst_length: scenario.injection_process.burst_length(),
            broadcast_order: (scenario.broadcast_fraction > 0.0)
                .then(|| scenario.broadcast_order.as_str().to_string()),
            circuit_backoff: (scenario.switching == Switching::Circuit)
                .then(|| scenario.circuit_backoff.unwrap_or(0)),
            circuit_retry_limit: (scenario.switching == Switching::Circuit).then(|| {
                scenario
                    .circuit_retry_limit
                    .unwrap_or(crate::scenario::fields::DEFAULT_CIRCUIT_RETRY_LIMIT)
            }),
            trace_blake3: scenario.traffic.trace().map(|t| t.blake3.clone()),
            ..Row::default()
        }
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
