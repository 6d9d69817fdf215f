//! Measurement bookkeeping: batch means for the confidence interval, and the Student t quantile.
//!
//! Messages are assigned to batches by generation time (batch `i` holds the messages generated
//! in `[start + i L, start + (i+1) L)`). A batch is complete once all its messages are
//! delivered. The number of batches is capped: when it reaches the cap, adjacent batches are
//! merged and `L` doubles, so memory does not grow with the run length. Because a message's
//! batch is recomputed from its generation time, merging needs no per-message update.

use crate::measurement::{LatencyHistograms, LinkLoads, Measurement, Status};

use super::network::hop::NO_LINK;

use super::engine::{Engine, Outcome};

/// Merges adjacent bins in place: bin `i` becomes bins `2i` and `2i + 1` (a last odd bin
/// stays alone), so the bins cover twice the time each.
fn merge_pairs<T: Copy + Default + std::ops::Add<Output = T>>(bins: &mut Vec<T>) {
    let half = bins.len().div_ceil(2);
    for i in 0..half {
        bins[i] = bins[2 * i] + bins.get(2 * i + 1).copied().unwrap_or_default();
    }
    bins.truncate(half);
}

/// Batch-means accumulator over message latencies.
#[derive(Clone, Debug)]
pub(crate) struct Batches {
    length: u64,
    cap: usize,
    sum: Vec<f64>,
    count: Vec<u64>,
    outstanding: Vec<u64>,
}

impl Batches {
    /// Batches of `length >= 1` cycles, at most `cap >= 2` of them (merging beyond).
    pub(crate) fn new(length: u64, cap: usize) -> Batches {
        let cap = cap.max(2) & !1;
        Batches {
            length: length.max(1),
            cap,
            sum: Vec::with_capacity(cap),
            count: Vec::with_capacity(cap),
            outstanding: Vec::with_capacity(cap),
        }
    }

    /// Current batch length in cycles.
    pub(crate) fn length(&self) -> u64 {
        self.length
    }

    /// Number of batches so far.
    pub(crate) fn len(&self) -> usize {
        self.sum.len()
    }

    fn merge(&mut self) {
        merge_pairs(&mut self.sum);
        merge_pairs(&mut self.count);
        merge_pairs(&mut self.outstanding);
        self.length *= 2;
    }

    /// A measured message was generated `offset` cycles after the window start.
    pub(crate) fn generated(&mut self, offset: u64) {
        while offset / self.length >= self.cap as u64 {
            self.merge();
        }
        let index = (offset / self.length) as usize;
        while self.sum.len() <= index {
            self.sum.push(0.0);
            self.count.push(0);
            self.outstanding.push(0);
        }
        self.outstanding[index] += 1;
    }

    /// A measured message generated at `offset` was delivered with this latency.
    pub(crate) fn delivered(&mut self, offset: u64, latency: f64) {
        let index = (offset / self.length) as usize;
        if let (Some(sum), Some(count), Some(outstanding)) =
            (self.sum.get_mut(index), self.count.get_mut(index), self.outstanding.get_mut(index))
        {
            *sum += latency;
            *count += 1;
            *outstanding -= 1;
        }
    }

    /// A measured message generated at `offset` was dropped (circuit retry limit): it is no
    /// longer outstanding and has no latency.
    pub(crate) fn dropped(&mut self, offset: u64) {
        let index = (offset / self.length) as usize;
        if let Some(outstanding) = self.outstanding.get_mut(index) {
            *outstanding -= 1;
        }
    }

    /// Number of leading batches that ended before `offset` and have no message in flight.
    pub(crate) fn complete(&self, offset: u64) -> usize {
        let ended = (offset / self.length) as usize;
        self.outstanding.iter().take(ended).take_while(|&&o| o == 0).count()
    }

    /// Messages delivered and still outstanding, over all batches.
    #[cfg(test)]
    pub(crate) fn totals(&self) -> (u64, u64) {
        (self.count.iter().sum(), self.outstanding.iter().sum())
    }

    /// Mean of batch means, 95% half-width and number of batches used, over the first `n`
    /// batches that hold at least one message; `None` with fewer than 2 such batches.
    pub(crate) fn confidence(&self, n: usize) -> Option<(f64, f64, usize)> {
        let means: Vec<f64> = (0..n.min(self.sum.len()))
            .filter(|&i| self.count[i] > 0)
            .map(|i| self.sum[i] / self.count[i] as f64)
            .collect();
        let b = means.len();
        if b < 2 {
            return None;
        }
        let mean = means.iter().sum::<f64>() / b as f64;
        let variance = means.iter().map(|m| (m - mean) * (m - mean)).sum::<f64>() / (b - 1) as f64;
        Some((mean, student_t975(b as u64 - 1) * (variance / b as f64).sqrt(), b))
    }
}

/// Message latencies by generation time from cycle 0 (warm-up included), for the MSER
/// truncation point ([`Transient::mser_truncation`]): how much of the run's start the data
/// themselves say is transient. Bins of `length` cycles, at most `cap` of them (adjacent bins
/// merge and `length` doubles beyond), so memory does not grow with the run.
#[derive(Clone, Debug)]
pub(crate) struct Transient {
    length: u64,
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
            cap: cap.max(2) & !1,
            sum: Vec::new(),
            count: Vec::new(),
        }
    }

    /// A message generated at cycle `generated` was delivered with this latency.
    #[inline]
    pub(crate) fn delivered(&mut self, generated: u64, latency: f64) {
        while generated / self.length >= self.cap as u64 {
            merge_pairs(&mut self.sum);
            merge_pairs(&mut self.count);
            self.length *= 2;
        }
        let index = (generated / self.length) as usize;
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

impl Batches {
    /// The trend of the batch means over the first `n` batches holding a message; `None`
    /// with fewer than 3 such batches.
    pub(crate) fn trend(&self, n: usize) -> Option<Trend> {
        let points: Vec<(f64, f64)> = (0..n.min(self.sum.len()))
            .filter(|&i| self.count[i] > 0)
            .map(|i| ((i as f64 + 0.5) * self.length as f64, self.sum[i] / self.count[i] as f64))
            .collect();
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

/// The 0.975 quantile of Student's t with `dof >= 1` degrees of freedom (table to 30, then a
/// Cornish-Fisher expansion accurate to 1e-5).
pub(crate) fn student_t975(dof: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    if dof == 0 {
        return f64::INFINITY;
    }
    if let Some(&t) = TABLE.get(dof as usize - 1) {
        return t;
    }
    let z: f64 = 1.959_963_984_540_054;
    let n = dof as f64;
    let (z3, z5, z7) = (z * z * z, z * z * z * z * z, z * z * z * z * z * z * z);
    z + (z3 + z) / (4.0 * n)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n * n * n)
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
        m.latency_percentiles = w.latencies.percentiles();
        m.network_latency_percentiles = w.network_latencies.percentiles();
        m.source_wait_percentiles = w.source_waits.percentiles();
        m.histograms = Some(LatencyHistograms {
            latency: w.latencies.binned(),
            network_latency: w.network_latencies.binned(),
            source_wait: w.source_waits.binned(),
        });
        let batches = engine.batches.len();
        set_interval(&mut m, engine.batches.confidence(batches));
    }
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
    add("window_cycles", span);
    add("batches", engine.batches.len() as f64);
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

/// Sets `latency_ci95` from a batch-means interval (mean, half-width, batches) and records the
/// batch statistics as the intermediates `latency_batches` (b), `latency_batch_mean` and
/// `latency_batch_sd` (the batch means' sample standard deviation), replacing any earlier
/// ones; `None` clears them. The pipeline pools these across replications
/// (`exec::evaluate`): with fewer than 3 replications a t interval across them would have
/// 1 degree of freedom.
pub(crate) fn set_interval(m: &mut Measurement, interval: Option<(f64, f64, usize)>) {
    m.intermediates.retain(|(key, _)| !key.starts_with("latency_batch"));
    m.latency_ci95 = interval.map(|(_, half, _)| half);
    if let Some((mean, half, batches)) = interval {
        let sd = half * (batches as f64).sqrt() / student_t975(batches as u64 - 1);
        m.intermediates.push(("latency_batches".into(), batches as f64));
        m.intermediates.push(("latency_batch_mean".into(), mean));
        m.intermediates.push(("latency_batch_sd".into(), sd));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantile_is_continuous_past_the_table() {
        assert!((student_t975(31) - 2.0395).abs() < 1e-3);
        assert!((student_t975(120) - 1.9799).abs() < 1e-3);
        assert!(student_t975(30) > student_t975(31));
    }

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

    #[test]
    fn batches_merge_and_complete() {
        let mut b = Batches::new(10, 4);
        for offset in 0..40 {
            b.generated(offset);
        }
        assert_eq!((b.len(), b.length()), (4, 10));
        b.generated(45); // batch 4 does not fit: merge to 2 batches of 20, then index 2
        assert_eq!((b.len(), b.length()), (3, 20));
        for offset in 0..20 {
            b.delivered(offset, 5.0 + (offset % 2) as f64);
        }
        assert_eq!(b.complete(60), 1);
        for offset in 20..40 {
            b.delivered(offset, 7.0);
        }
        assert_eq!(b.complete(60), 2);
        let (mean, half, n) = b.confidence(2).unwrap();
        assert_eq!(n, 2);
        assert!((mean - 6.25).abs() < 1e-12 && half > 0.0);
    }
}
