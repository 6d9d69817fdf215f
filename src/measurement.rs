//! What an evaluator returns: the same shape for the models and the simulator.
//!
//! Model rows and simulation rows line up column for column in the results file
//! because both evaluators fill in a [`Measurement`]. Quantities an evaluator
//! does not produce stay `None`; every other named quantity goes into
//! `intermediates` under a stable key.

use serde::Serialize;

/// How an evaluation ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A finite, stable result.
    #[default]
    Ok,
    /// The load is at or beyond the saturation point; latency is unbounded.
    Saturated,
    /// The simulator found a deadlock.
    Deadlock,
    /// The simulator ran in precision mode (`target_precision`) and stopped at `max_cycles`
    /// short of the target, or measured no message: the numbers are an estimate only.
    Imprecise,
}

impl Status {
    /// The name used in result rows.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Saturated => "saturated",
            Status::Deadlock => "deadlock",
            Status::Imprecise => "imprecise",
        }
    }
}

/// Nearest-rank percentiles of a distribution of whole cycles over the measured messages: the
/// q-percentile is the smallest value L such that at least a fraction q of the messages have a
/// value <= L (the value of rank ceil(q n) in ascending order; `sim::percentiles`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    /// Median (cycles).
    pub p50: u64,
    /// 90th percentile (cycles).
    pub p90: u64,
    /// 99th percentile (cycles).
    pub p99: u64,
    /// Largest value (cycles).
    pub max: u64,
}

/// One evaluation of one scenario at one load. Latencies and times are in cycles,
/// rates in messages (or flits, where named so) per node per cycle.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Measurement {
    /// How the evaluation ended.
    pub status: Status,
    /// Why it is saturated, deadlocked or imprecise, in a sentence; `None` when `status` is
    /// `Ok`.
    pub detail: Option<String>,
    /// Mean message latency: generation to the tail flit's arrival (cycles).
    /// For `broadcast_hypercube`, the mean broadcast latency.
    pub latency: Option<f64>,
    /// Half-width of the 95% confidence interval of `latency` (simulation only).
    pub latency_ci95: Option<f64>,
    /// Mean latency in the network, without the source wait (cycles).
    pub network_latency: Option<f64>,
    /// Mean waiting time in the source queue (cycles).
    pub source_wait: Option<f64>,
    /// Mean unicast latency where the evaluator also reports broadcasts (cycles).
    pub unicast_latency: Option<f64>,
    /// Percentiles of the latency whose mean is `latency` (simulation only; with broadcasts,
    /// of the broadcast latencies).
    pub latency_percentiles: Option<Percentiles>,
    /// Percentiles of the network latency whose mean is `network_latency` (simulation only).
    pub network_latency_percentiles: Option<Percentiles>,
    /// Percentiles of the source wait whose mean is `source_wait` (simulation only).
    pub source_wait_percentiles: Option<Percentiles>,
    /// Average multiplexing degree V-bar of a physical channel.
    pub multiplexing_degree: Option<f64>,
    /// Message (or header) arrival rate at one channel (messages/cycle).
    pub channel_rate: Option<f64>,
    /// Probability that all virtual channels of a physical channel are busy (P_V).
    pub blocking_probability: Option<f64>,
    /// Accepted throughput (messages/node/cycle).
    pub throughput: Option<f64>,
    /// Mean number of hops per message.
    pub hops: Option<f64>,
    /// Cycles simulated (simulation only).
    pub cycles: Option<u64>,
    /// Flit-link traversals simulated (simulation only).
    pub flit_hops: Option<u64>,
    /// Messages whose latency entered the mean (simulation only).
    pub messages_measured: Option<u64>,
    /// Every other named quantity, in a stable order under stable snake_case keys.
    pub intermediates: Vec<(String, f64)>,
    /// Faulty nodes of the run's fault map (simulation with `fault_rate > 0` only).
    pub fault_count: Option<u64>,
    /// Short hash of the run's fault map: equal hashes, same faulty nodes (simulation with
    /// `fault_rate > 0` only).
    pub fault_map: Option<String>,
}

impl Measurement {
    /// A measurement with `status = saturated` and the reason.
    pub fn saturated(detail: impl Into<String>) -> Measurement {
        Measurement {
            status: Status::Saturated,
            detail: Some(detail.into()),
            ..Measurement::default()
        }
    }

    /// The value of an intermediate quantity by key.
    pub fn intermediate(&self, key: &str) -> Option<f64> {
        self.intermediates.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }
}
