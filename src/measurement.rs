//! What an evaluator returns: the same shape for the models and the simulator.
//!
//! Model rows and simulation rows line up column for column in the results file
//! because both evaluators fill in a [`Measurement`]. Quantities an evaluator
//! does not produce stay `None`; every other named quantity goes into
//! `intermediates` under a stable key.

use serde::{Deserialize, Serialize};

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
    /// 95th percentile (cycles).
    pub p95: u64,
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
    /// Request-reply traffic: mean round trip of a request, its generation to its reply's
    /// delivery (cycles; simulation only).
    pub round_trip_latency: Option<f64>,
    /// Percentiles of the latency whose mean is `latency` (simulation only; with broadcasts,
    /// of the broadcast latencies).
    pub latency_percentiles: Option<Percentiles>,
    /// Half-widths of the 95% confidence intervals of `latency_percentiles`' p50, p90, p95
    /// and p99, in that order (simulation only; `None` where a section held too few messages).
    pub latency_percentiles_ci95: [Option<f64>; 4],
    /// Percentiles of the network latency whose mean is `network_latency` (simulation only).
    pub network_latency_percentiles: Option<Percentiles>,
    /// Percentiles of the source wait whose mean is `source_wait` (simulation only).
    pub source_wait_percentiles: Option<Percentiles>,
    /// Percentiles of the unicast latency whose mean is `unicast_latency` (simulated
    /// broadcasts only).
    pub unicast_latency_percentiles: Option<Percentiles>,
    /// Average multiplexing degree V-bar of a physical channel.
    pub multiplexing_degree: Option<f64>,
    /// Message (or header) arrival rate at one channel (messages/cycle).
    pub channel_rate: Option<f64>,
    /// Probability that all virtual channels of a physical channel are busy (P_V).
    pub blocking_probability: Option<f64>,
    /// Accepted throughput (messages/node/cycle).
    pub throughput: Option<f64>,
    /// Half-width of the 95% confidence interval of `throughput` (simulation only).
    pub throughput_ci95: Option<f64>,
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
    /// The least- and best-served destination node's accepted throughput, in messages and in
    /// flits per node per cycle of the window (simulation): (min, max, flit min, flit max).
    /// Flits count at each message's delivery; throughput mode's intermediates count them
    /// exactly at the window's edges and take precedence in the rows.
    pub node_throughput: Option<[f64; 4]>,
    /// Flits per physical link in the measurement window (simulation with
    /// `SimOptions::link_loads` only).
    pub link_loads: Option<LinkLoads>,
    /// The distributions of latency, network latency and source wait, binned (simulation
    /// only, where a latency was measured).
    pub histograms: Option<LatencyHistograms>,
}

/// What each physical link carried in the measurement window: flits that crossed it, one
/// count per link in the order of `sim::links` (the links that exist, by channel id), and
/// optionally per virtual channel. Compact on purpose: a row of a 16x16 torus holds 1,024
/// numbers, not 1,024 objects. Replications combine by adding counts and window lengths, so
/// utilisation = flits / window_cycles stays exact.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkLoads {
    /// Cycles of the measurement window (summed over replications in an aggregate).
    pub window_cycles: u64,
    /// Flits that crossed each link in the window.
    pub flits: Vec<u64>,
    /// Flits per virtual channel: `V` counts per link, link after link (`link * V + vc`); empty
    /// unless asked for (`link_loads_per_vc`).
    #[serde(default)]
    pub vc_flits: Vec<u64>,
}

impl LinkLoads {
    /// The sum of `parts` (replications of one point): counts and windows add. `None` unless
    /// every part has loads of the same shape.
    pub fn sum<'a>(mut parts: impl Iterator<Item = Option<&'a LinkLoads>>) -> Option<LinkLoads> {
        let mut total = parts.next()??.clone();
        for part in parts {
            let part = part?;
            if part.flits.len() != total.flits.len() || part.vc_flits.len() != total.vc_flits.len()
            {
                return None;
            }
            total.window_cycles += part.window_cycles;
            total.flits.iter_mut().zip(&part.flits).for_each(|(a, b)| *a += b);
            total.vc_flits.iter_mut().zip(&part.vc_flits).for_each(|(a, b)| *a += b);
        }
        Some(total)
    }
}

/// A histogram of whole cycles: `counts[i]` values in `[lower + i width, lower + (i+1) width)`.
/// `width` is a power of two and `lower` a multiple of it, so histograms of different widths
/// nest and add exactly (`Binned::sum`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binned {
    /// Lower edge of the first bin (cycles).
    pub lower: u64,
    /// Bin width (cycles; a power of two, 1 for exact per-cycle counts).
    pub width: u64,
    /// Values per bin.
    pub counts: Vec<u64>,
}

/// Most bins a stored histogram has: values spanning at most this many cycles are counted
/// per cycle (width 1); wider spans get the smallest power-of-two width that fits.
pub const MAX_HISTOGRAM_BINS: u64 = 1024;

impl Binned {
    /// Bins `(value, count)` pairs (ascending or not) into at most [`MAX_HISTOGRAM_BINS`] bins
    /// of the smallest power-of-two width that fits, at least `min_width`; `None` without a
    /// value.
    pub fn of(values: &[(u64, u64)], min_width: u64) -> Option<Binned> {
        let present = values.iter().filter(|(_, count)| *count > 0);
        let lo = present.clone().map(|&(v, _)| v).min()?;
        let hi = present.map(|&(v, _)| v).max()?;
        let mut width = min_width.max(1).next_power_of_two();
        while hi / width - lo / width + 1 > MAX_HISTOGRAM_BINS {
            width *= 2;
        }
        let lower = lo / width * width;
        let mut counts = vec![0; (hi / width - lo / width + 1) as usize];
        for &(value, count) in values {
            if let Some(bin) = counts.get_mut(((value - lower) / width) as usize) {
                *bin += count;
            }
        }
        Some(Binned { lower, width, counts })
    }

    /// The (bin lower edge, count) pairs.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().map(|(i, &c)| (self.lower + i as u64 * self.width, c))
    }

    /// The values counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The sum of histograms of the same quantity (replications): each is re-binned to the
    /// widest width (power-of-two widths with aligned edges nest, so no count is split) and
    /// the counts add. `None` without a histogram.
    pub fn sum<'a>(parts: impl Iterator<Item = &'a Binned> + Clone) -> Option<Binned> {
        let width = parts.clone().map(|b| b.width.max(1)).max()?;
        let pairs: Vec<(u64, u64)> = parts.flat_map(Binned::bins).collect();
        Binned::of(&pairs, width)
    }
}

/// The binned distributions behind the percentile columns (`Binned`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyHistograms {
    /// Message latency (generation to the tail's arrival; with broadcasts, broadcast latency).
    pub latency: Option<Binned>,
    /// Network latency (latency less the source wait).
    pub network_latency: Option<Binned>,
    /// Source-queue wait.
    pub source_wait: Option<Binned>,
}

impl LatencyHistograms {
    /// The quantity names, in column order, with their histograms.
    pub fn quantities(&self) -> [(&'static str, Option<&Binned>); 3] {
        [
            ("latency", self.latency.as_ref()),
            ("network_latency", self.network_latency.as_ref()),
            ("source_wait", self.source_wait.as_ref()),
        ]
    }

    /// The sum over replications (counts add, `Binned::sum`); `None` unless every part has
    /// histograms.
    pub fn sum<'a>(parts: impl Iterator<Item = Option<&'a LatencyHistograms>>) -> Option<Self> {
        let parts: Vec<&LatencyHistograms> = parts.collect::<Option<_>>()?;
        let each = |get: fn(&LatencyHistograms) -> Option<&Binned>| {
            let all: Vec<&Binned> = parts.iter().map(|h| get(h)).collect::<Option<_>>()?;
            Binned::sum(all.into_iter())
        };
        Some(LatencyHistograms {
            latency: each(|h| h.latency.as_ref()),
            network_latency: each(|h| h.network_latency.as_ref()),
            source_wait: each(|h| h.source_wait.as_ref()),
        })
    }
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
