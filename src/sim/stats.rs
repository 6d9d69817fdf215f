//! Measurement bookkeeping: a finished run turned into a [`Measurement`] (`summarize`), the
//! MSER warm-up check, the trend that marks an unstable run, and the Student t quantile. The
//! batch means themselves are `sim::batch_means`.

use crate::measurement::{LatencyHistograms, LinkLoads, Measurement, Status};

use super::batch_means::{Batches, Estimate, merge_pairs};
use super::divisor::LastBin;

use super::network::hop::NO_LINK;

use super::engine::{Engine, Outcome};

/// Message latencies by generation time from cycle 0 (warm-up included), for the MSER
/// truncation point ([`Transient::mser_truncation`]): how much of the run's start the data
/// themselves say is transient. Bins of `length` cycles, at most `cap` of them (adjacent bins
/// merge and `length` doubles beyond), so memory does not grow with the run.
#[derive(Clone, Debug)]
pub(crate) struct Transient {
    length: u64,
    /// The bin of the last generation time binned.
    last: LastBin,
    cap: usize,
    sum: Vec<f64>,
    count: Vec<u64>,
}

/// Bins the transient series starts with over the planned run, and the cap it merges at.
pub(crate) const TRANSIENT_BINS: u64 = 128;

impl Transient {
    /// Bins of `length >= 1` cycles, at most `cap >= 2` of them.
    pub(crate) fn new(length: u64, cap: usize) -> Transient {
        Transient {
            length: length.max(1),
            last: LastBin::default(),
            cap: cap.max(2) & !1,
            sum: Vec::new(),
            count: Vec::new(),
        }
    }

    /// A message generated at cycle `generated` was delivered with this latency.
    #[inline]
    pub(crate) fn delivered(&mut self, generated: u64, latency: f64) {
        let mut index = self.last.index(generated, self.length);
        while index >= self.cap as u64 {
            merge_pairs(&mut self.sum);
            merge_pairs(&mut self.count);
            self.length *= 2;
            self.last.forget();
            index = self.last.index(generated, self.length);
        }
        let index = index as usize;
        if self.sum.len() <= index {
            self.sum.resize(index + 1, 0.0);
            self.count.resize(index + 1, 0);
        }
        self.sum[index] += latency;
        self.count[index] += 1;
    }

    /// The MSER truncation point (White, "An effective truncation heuristic for bias reduction
    /// in simulation output", Simulation 69(6), 1997), in cycles from the start of the run:
    /// over the means `Y_1..Y_n` of the bins that end by cycle `end` and hold a message, the
    /// `d` in `0..=n/2` minimising `sum_{i>d} (Y_i - mean_{i>d} Y)^2 / (n - d)^2`, times the
    /// bin length. MSER-5 applies the same rule to batches of 5 observations; here the
    /// batches are bins of generation time, as for the batch-means interval. `None` with fewer
    /// than 4 such bins.
    pub(crate) fn mser_truncation(&self, end: u64) -> Option<u64> {
        let complete = ((end / self.length) as usize).min(self.sum.len());
        let bins: Vec<(usize, f64)> = (0..complete)
            .filter(|&i| self.count[i] > 0)
            .map(|i| (i, self.sum[i] / self.count[i] as f64))
            .collect();
        let n = bins.len();
        if n < 4 {
            return None;
        }
        // Suffix sums of Y and Y^2, from the last bin back to bin d.
        let (mut s1, mut s2) = (0.0, 0.0);
        let mut best = (f64::INFINITY, 0);
        for d in (0..n).rev() {
            let y = bins[d].1;
            s1 += y;
            s2 += y * y;
            let k = (n - d) as f64;
            if d <= n / 2 {
                let statistic = (s2 - s1 * s1 / k).max(0.0) / (k * k);
                // Ties go to the earliest d (the least truncation).
                if statistic <= best.0 {
                    best = (statistic, d);
                }
            }
        }
        Some(bins[best.1].0 as u64 * self.length)
    }
}

/// A run is unstable when the latency of its messages grows with their generation time by at
/// least this many cycles per cycle (the fitted slope of the batch means): the sources'
/// backlog then grows steadily, the offered load exceeding what the network accepts by about
/// this fraction. The slope of a stable point tends to 0 as the window grows and that of an
/// unstable one to its excess load, so the verdict does not depend on the window length.
pub(crate) const UNSTABLE_SLOPE: f64 = 0.01;

/// ... and the slope is significant: its t statistic exceeds this.
pub(crate) const UNSTABLE_T: f64 = 3.0;

/// Least-squares line through the batch means against batch mid-time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trend {
    /// Cycles of latency per cycle of generation time.
    pub(crate) slope: f64,
    /// Slope over its standard error (infinite for a perfect fit).
    pub(crate) t: f64,
    /// Fitted latency at the first and the last batch used.
    pub(crate) first: f64,
    pub(crate) last: f64,
}

impl Trend {
    /// Whether the latency grows steadily (see [`UNSTABLE_SLOPE`]).
    pub(crate) fn unstable(&self) -> bool {
        self.slope >= UNSTABLE_SLOPE && self.t >= UNSTABLE_T
    }
}

impl Trend {
    /// The trend of the interval batches' means over the first `n` raw batches
    /// ([`Batches::interval_batches`]); `None` with fewer than 3 batches holding a message.
    pub(crate) fn of(batches: &Batches, n: usize) -> Option<Trend> {
        let points: Vec<(f64, f64)> = batches.interval_batches(n);
        let b = points.len() as f64;
        if points.len() < 3 {
            return None;
        }
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / b;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / b;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
        let slope = sxy / sxx;
        let residual: f64 =
            points.iter().map(|p| (p.1 - mean_y - slope * (p.0 - mean_x)).powi(2)).sum();
        let standard_error = (residual / (b - 2.0) / sxx).sqrt();
        let t = if standard_error > 0.0 { slope / standard_error } else { f64::INFINITY };
        let at = |x: f64| mean_y + slope * (x - mean_x);
        Some(Trend {
            slope,
            t: if slope == 0.0 { 0.0 } else { t },
            first: at(points[0].0),
            last: at(points[points.len() - 1].0),
        })
    }
}

/// The 0.975 quantile of Student's t with `dof` degrees of freedom (`statistics`).
pub(crate) fn student_t975(dof: u64) -> f64 {
    crate::statistics::t_quantile_975(dof)
}

/// Turns a finished run into a [`Measurement`] (keys of `intermediates` are stable).
pub(crate) fn summarize(engine: &Engine, outcome: Outcome) -> Measurement {
    // With faults, rates are per healthy node and channel statistics cover the links between
    // healthy nodes (a link with a faulty end is never used: it would only add idle time).
    let (nodes, dead_links) = match &engine.faults {
        Some(map) => (map.healthy_count(), map.dead_links),
        None => (engine.geometry.nodes, 0),
    };
    let nodes = f64::from(nodes);
    let w = &engine.window;
    let mut m = Measurement {
        cycles: Some(engine.now),
        flit_hops: Some(engine.flit_hops),
        ..Measurement::default()
    };
    match outcome {
        Outcome::Ok => {}
        Outcome::Saturated(detail) => {
            m.status = Status::Saturated;
            m.detail = Some(detail);
        }
        Outcome::Imprecise(detail) => {
            m.status = Status::Imprecise;
            m.detail = Some(detail);
        }
        Outcome::Deadlock(detail) => {
            m.status = Status::Deadlock;
            m.detail = Some(detail);
            return m;
        }
        // `sim::run` returns an error for a cancelled run before summarizing it; were one
        // summarized, it would measure nothing and say why.
        Outcome::Cancelled => {
            m.status = Status::Imprecise;
            m.detail = Some("cancelled before the end of the run".into());
            return m;
        }
        // Likewise for a replay stopped by its trace (`sim::replay` returns the error).
        Outcome::Failed(detail) => {
            m.status = Status::Imprecise;
            m.detail = Some(detail);
            return m;
        }
    }
    let window_end = w.end.unwrap_or(engine.now);
    let span = window_end.saturating_sub(w.start);
    if w.end.is_none() && !w.open || span == 0 {
        // Stopped during warm-up: only the throughput over the whole run is meaningful.
        if engine.now > 0 {
            m.throughput = Some(engine.delivered_total as f64 / (nodes * engine.now as f64));
        }
        return m;
    }
    let dead_time = dead_links * span;
    let span_cycles = span;
    let span = span as f64;
    let links = (engine.geometry.links() - dead_links) as f64;
    m.throughput = Some(w.delivered as f64 / (nodes * span));
    m.node_throughput = node_spread(engine, span);
    m.channel_rate = Some(w.header_hops as f64 / (links * span));
    let busy_time: Vec<u64> = w
        .busy_time
        .iter()
        .enumerate()
        .map(|(v, &t)| if v == 0 { t.saturating_sub(dead_time) } else { t })
        .collect();
    let total_busy: u64 = busy_time.iter().sum();
    let weighted: f64 = busy_time.iter().enumerate().map(|(v, &t)| v as f64 * t as f64).sum();
    let squared: f64 = busy_time.iter().enumerate().map(|(v, &t)| (v * v) as f64 * t as f64).sum();
    if weighted > 0.0 {
        m.multiplexing_degree = Some(squared / weighted);
    }
    if total_busy > 0 {
        let all_busy = busy_time.last().copied().unwrap_or(0);
        m.blocking_probability = Some(all_busy as f64 / total_busy as f64);
    }
    let done = w.measured - w.outstanding - engine.dropped_measured();
    m.messages_measured = Some(done);
    if matches!(m.status, Status::Ok | Status::Imprecise) && done > 0 {
        let done = done as f64;
        m.latency = Some(w.latency_sum / done);
        m.network_latency = Some(w.network_sum / done);
        m.source_wait = Some(w.wait_sum / done);
        m.hops = Some(w.hops_sum / done);
        m.round_trip_latency = engine.replies.as_deref().and_then(|r| r.round_trip_latency());
        m.latency_percentiles = w.latencies.percentiles();
        m.network_latency_percentiles = w.network_latencies.percentiles();
        m.source_wait_percentiles = w.source_waits.percentiles();
        m.histograms = Some(LatencyHistograms {
            latency: w.latencies.binned(),
            network_latency: w.network_latencies.binned(),
            source_wait: w.source_waits.binned(),
        });
        set_latency_intervals(&mut m, engine, window_end);
    }
    let throughput = engine.batches.throughput(span_cycles, nodes);
    m.throughput_ci95 = throughput.map(|e| e.half);
    let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    let mut add = |key: &str, value: f64| m.intermediates.push((key.to_string(), value));
    // Throughput mode: the messages dropped at full source queues were offered too.
    let dropped = engine.throughput.as_ref().map_or(0, |t| t.window_drops);
    add("offered_throughput", (w.generated + dropped) as f64 / (nodes * span));
    add("flit_throughput", w.delivered_flits as f64 / (nodes * span));
    add("channel_utilization", w.flit_hops as f64 / (links * span));
    let busiest = w.channel_flits(engine.v).max().unwrap_or(0);
    add("max_channel_utilization", busiest as f64 / span);
    add("blocking_per_hop", ratio(w.hops_blocked, w.hop_requests));
    add("blocked_cycles_per_hop", ratio(w.blocked_cycles, w.hop_requests));
    add("escape_hop_fraction", ratio(w.escape_hops, w.hop_requests));
    add("mean_busy_vcs", if total_busy > 0 { weighted / total_busy as f64 } else { 0.0 });
    for (v, &t) in busy_time.iter().enumerate() {
        add(&format!("p_busy_{v}"), ratio(t, total_busy));
    }
    add("source_backlog", engine.backlog_per_node());
    if let Some(replies) = engine.replies.as_deref().filter(|r| r.closed_loop()) {
        // Closed-loop sources: the arrivals of the window that were not requests.
        add("throttled_requests", replies.throttled as f64);
    }
    if let Some(cycles) = engine.longest_credit_loop() {
        // The buffer depth a VC needs to stream at one flit per cycle on the slowest link.
        add("credit_loop_cycles", f64::from(cycles));
    }
    add("window_cycles", span);
    if let Some(planned) = engine.planned_window {
        add("planned_window_cycles", planned as f64);
    }
    add("batches", engine.batches.len() as f64);
    if let Some(e) = throughput {
        add("throughput_batch_adjustment", e.adjustment);
    }
    if let Some(cycles) = engine.transient.mser_truncation(window_end) {
        add("mser_truncation_cycles", cycles as f64);
    }
    if let Some(t) = &engine.throughput {
        t.add_intermediates(&mut add, span);
    }
    engine.add_switching_measurements(&mut m, done);
    engine.add_broadcast_measurements(&mut m, done, span, links);
    m
}

/// Per destination node, the least and the largest accepted messages and flits per cycle of
/// the window, over the healthy nodes; `None` without one.
fn node_spread(engine: &Engine, span: f64) -> Option<[f64; 4]> {
    let w = &engine.window;
    let healthy =
        |node: &usize| engine.faults.as_ref().is_none_or(|map| !map.is_faulty(*node as u32));
    let range = |counts: &[u64]| {
        (0..counts.len()).filter(healthy).map(|node| counts[node] as f64 / span).fold(
            None,
            |range: Option<(f64, f64)>, value| {
                Some(range.map_or((value, value), |(lo, hi)| (lo.min(value), hi.max(value))))
            },
        )
    };
    let ((min, max), (flit_min, flit_max)) = (range(&w.node_messages)?, range(&w.node_flits)?);
    Some([min, max, flit_min, flit_max])
}

/// The flits each link carried in the measurement window (`LinkLoads`: the links that
/// exist, in channel order, as `sim::links` lists them; per VC too with `per_vc`). `None`
/// when no window was measured. The counts are the engine's own per-VC window counters, so
/// they sum to the window's flit hops exactly.
pub(crate) fn link_loads(engine: &Engine, per_vc: bool) -> Option<LinkLoads> {
    let w = &engine.window;
    let span = w.end.unwrap_or(engine.now).checked_sub(w.start).filter(|&s| s > 0)?;
    if w.end.is_none() && !w.open {
        return None;
    }
    let v = engine.v.max(1) as usize;
    let geometry = &engine.geometry;
    let exists = |channel: usize| geometry.downstream(channel as u32) != NO_LINK;
    let flits = w.channel_flits(engine.v).enumerate().filter(|&(c, _)| exists(c)).map(|(_, f)| f);
    let vc_flits = match per_vc {
        true => w
            .vc_flits
            .chunks(v)
            .enumerate()
            .filter(|&(c, _)| exists(c))
            .flat_map(|(_, vcs)| vcs.iter().copied())
            .collect(),
        false => Vec::new(),
    };
    Some(LinkLoads { window_cycles: span, flits: flits.collect(), vc_flits })
}

/// Sets the latency's interval from the batches that ended by window end `end`
/// ([`set_interval`]) and the intervals of `m.latency_percentiles` from the sections, which
/// get the correlation adjustment when the batches failed their test (`sim::sections`).
pub(crate) fn set_latency_intervals(m: &mut Measurement, engine: &Engine, end: u64) {
    let interval = engine.batches.latency(engine.ended_batches(end));
    set_interval(m, interval);
    if let Some(p) = m.latency_percentiles {
        let correlated = interval.is_some_and(|e| !e.independent);
        let span = end.saturating_sub(engine.window.start);
        m.latency_percentiles_ci95 = engine.sections.intervals(p, span, correlated);
    }
}

/// Sets `latency_ci95` from a batch-means interval and records how it was made as the
/// intermediates `latency_batches` (b), `latency_batch_mean`, `latency_batch_sd` (the batch
/// means' sample standard deviation), `latency_batch_cycles`, `latency_batch_test` (the von
/// Neumann statistic of the batches a quarter as long, `sim::batch_means`),
/// `latency_batches_independent` (1 when the test accepted independence),
/// `latency_batch_adjustment` (the variance's correlation adjustment A, 1 when the test
/// passed) and `latency_batch_autocorrelation` (the lag-1 autocorrelation A was made from, 0
/// when the test passed), replacing any
/// earlier ones; `None` clears them. The pipeline pools the batch statistics across
/// replications (`exec::aggregate`) when every replication passed the test and their means
/// agree.
pub(crate) fn set_interval(m: &mut Measurement, interval: Option<Estimate>) {
    m.intermediates.retain(|(key, _)| !key.starts_with("latency_batch"));
    m.latency_ci95 = interval.map(|e| e.half);
    if let Some(e) = interval {
        m.intermediates.push(("latency_batches".into(), e.batches as f64));
        m.intermediates.push(("latency_batch_mean".into(), e.mean));
        m.intermediates.push(("latency_batch_sd".into(), e.sd));
        m.intermediates.push(("latency_batch_cycles".into(), e.batch_cycles as f64));
        if e.statistic.is_finite() {
            m.intermediates.push(("latency_batch_test".into(), e.statistic));
        }
        m.intermediates
            .push(("latency_batches_independent".into(), f64::from(u8::from(e.independent))));
        m.intermediates.push(("latency_batch_adjustment".into(), e.adjustment));
        m.intermediates.push(("latency_batch_autocorrelation".into(), e.autocorrelation));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mser_truncates_the_transient_and_nothing_of_a_stationary_series() {
        // Bins of 10 cycles: latencies 100 for the first 50 cycles, then alternating 10, 12.
        let mut t = Transient::new(10, 1024);
        for cycle in 0..1_000u64 {
            let latency = if cycle < 50 {
                100.0
            } else if (cycle / 10) % 2 == 0 {
                10.0
            } else {
                12.0
            };
            t.delivered(cycle, latency);
        }
        assert_eq!(t.mser_truncation(1_000), Some(50));
        let mut flat = Transient::new(10, 1024);
        for cycle in 0..1_000u64 {
            flat.delivered(cycle, if (cycle / 10) % 2 == 0 { 10.0 } else { 12.0 });
        }
        assert_eq!(flat.mser_truncation(1_000), Some(0));
        // Bins past `end` are left out; too few bins, no answer.
        assert_eq!(flat.mser_truncation(30), None);
        // Merging keeps the answer in cycles, at the merged bins' resolution: 8 bins of 128
        // cycles, the transient ends in the second.
        let mut merged = Transient::new(1, 8);
        for cycle in 0..1_000u64 {
            merged.delivered(cycle, if cycle < 250 { 100.0 } else { 10.0 });
        }
        assert_eq!(merged.mser_truncation(1_000), Some(256));
    }
}
