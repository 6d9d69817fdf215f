//! Aggregating replications: an Aggregate task's row, the mean of its replications' rows with
//! the 95% intervals of the statistics policy (`docs/statistics.md`): the mean latency, the
//! accepted throughput and the latency percentiles, and whether the replications agree.

use super::evaluate::Failure;
use crate::measurement::{LatencyHistograms, LinkLoads};
use crate::plan::Task;
use crate::store::build::with_numbers;
use crate::store::row::Row;

use crate::statistics::t_quantile_975;

/// Mean and 95% CI over replications (rows in replication order).
pub(crate) fn aggregate(replications: &[Row], task: &Task) -> Result<Row, Failure> {
    let first = replications.first().ok_or("no replications to aggregate")?;
    let mut row = first.clone();
    row.task_id = task.id.clone();
    row.replication = None;
    row.seed = None;
    // Each replication has its own fault map: they stay on the replication rows.
    row.fault_seed = None;
    row.fault_count = None;
    row.fault_map = None;
    row.replications = Some(replications.len() as u32);
    row.wall_seconds = replications.iter().map(|r| r.wall_seconds).sum();
    row.cycles = total(replications, |r| r.cycles, "cycles")?;
    row.flit_hops = total(replications, |r| r.flit_hops, "flit_hops")?;
    row.messages_measured = total(replications, |r| r.messages_measured, "messages_measured")?;
    row.intermediates = mean_intermediates(replications);
    let worst = replications
        .iter()
        .map(|r| r.status.as_str())
        .max_by_key(|s| match *s {
            "ok" => 0,
            "imprecise" => 1,
            "saturated" => 2,
            "deadlock" => 3,
            _ => 4,
        })
        .unwrap_or("ok");
    row.status = worst.to_string();
    row.error = replications.iter().find(|r| r.status == worst).and_then(|r| r.error.clone());
    let consistency = Consistency::of(replications);
    let mean = |get: fn(&Row) -> Option<f64>| -> Option<f64> {
        let values: Option<Vec<f64>> = replications.iter().map(get).collect();
        let values = values?;
        Some(values.iter().sum::<f64>() / values.len() as f64)
    };
    row.latency = mean(|r| r.latency);
    row.network_latency = mean(|r| r.network_latency);
    row.source_wait = mean(|r| r.source_wait);
    row.unicast_latency = mean(|r| r.unicast_latency);
    row.round_trip_latency = mean(|r| r.round_trip_latency);
    row.multiplexing_degree = mean(|r| r.multiplexing_degree);
    row.channel_rate = mean(|r| r.channel_rate);
    row.blocking_probability = mean(|r| r.blocking_probability);
    row.throughput = mean(|r| r.throughput);
    row.hops = mean(|r| r.hops);
    row.offered_throughput = mean(|r| r.offered_throughput);
    row.throughput_min = mean(|r| r.throughput_min);
    row.throughput_max = mean(|r| r.throughput_max);
    row.flit_throughput = mean(|r| r.flit_throughput);
    row.flit_throughput_min = mean(|r| r.flit_throughput_min);
    row.flit_throughput_max = mean(|r| r.flit_throughput_max);
    row.source_drops = total(replications, |r| r.source_drops, "source_drops")?;
    let interval = latency_interval(replications, consistency);
    row.latency_ci95 = interval.half;
    row.intermediates = with_interval_parts(&row.intermediates, interval, consistency);
    row.throughput_ci95 = combined_interval(replications, |r| (r.throughput, r.throughput_ci95));
    aggregate_percentiles(&mut row, replications);
    if first.is_saturation_search() {
        // The searches' mean: the offered rate at their maxima too, and the flits' interval.
        row.rate = replications.iter().map(|r| r.rate).sum::<f64>() / replications.len() as f64;
        let flits = combined_interval(replications, |r| (r.flit_throughput, None));
        row.intermediates = with_numbers(&row.intermediates, &[("flit_throughput_ci95", flits)]);
    }
    if let Some(consistency) = consistency.filter(|c| !c.consistent)
        && row.status == "ok"
    {
        row.status = "imprecise".into();
        row.error = Some(consistency.detail(replications.len()));
    }
    row.link_loads = LinkLoads::sum(replications.iter().map(|r| r.link_loads.as_ref()));
    row.histograms = LatencyHistograms::sum(replications.iter().map(|r| r.histograms.as_ref()));
    Ok(row)
}

/// The sum of a count over the replications, `None` unless every replication has it; a sum
/// past `u64::MAX` (only an external program's counts can get there) is a failure, not a wrap.
fn total(
    replications: &[Row],
    get: fn(&Row) -> Option<u64>,
    name: &str,
) -> Result<Option<u64>, Failure> {
    let mut sum = 0u64;
    for row in replications {
        let Some(count) = get(row) else { return Ok(None) };
        sum = sum.checked_add(count).ok_or_else(|| {
            format!("the replications' `{name}` add up to more than {}", u64::MAX)
        })?;
    }
    Ok(Some(sum))
}

/// An aggregate row's latency percentiles: the mean of the replications' p50, p90, p95 and p99
/// (each replication's percentile estimates the same quantile of the same distribution; the
/// replications' histograms are not kept, so they are not pooled) and the largest of their
/// maxima (the exact maximum over all their messages). Null unless every replication has the
/// value, as for `latency`.
fn aggregate_percentiles(row: &mut Row, replications: &[Row]) {
    let all = |get: fn(&Row) -> Option<f64>| -> Option<Vec<f64>> {
        replications.iter().map(get).collect()
    };
    let mean = |get: fn(&Row) -> Option<f64>| {
        all(get).map(|values| values.iter().sum::<f64>() / values.len() as f64)
    };
    let max = |get: fn(&Row) -> Option<f64>| {
        all(get).and_then(|values| values.into_iter().reduce(f64::max))
    };
    row.latency_p50 = mean(|r| r.latency_p50);
    row.latency_p90 = mean(|r| r.latency_p90);
    row.latency_p95 = mean(|r| r.latency_p95);
    row.latency_p99 = mean(|r| r.latency_p99);
    row.latency_max = max(|r| r.latency_max);
    row.network_latency_p50 = mean(|r| r.network_latency_p50);
    row.network_latency_p90 = mean(|r| r.network_latency_p90);
    row.network_latency_p95 = mean(|r| r.network_latency_p95);
    row.network_latency_p99 = mean(|r| r.network_latency_p99);
    row.network_latency_max = max(|r| r.network_latency_max);
    row.source_wait_p50 = mean(|r| r.source_wait_p50);
    row.source_wait_p90 = mean(|r| r.source_wait_p90);
    row.source_wait_p95 = mean(|r| r.source_wait_p95);
    row.source_wait_p99 = mean(|r| r.source_wait_p99);
    row.source_wait_max = max(|r| r.source_wait_max);
    row.unicast_latency_p50 = mean(|r| r.unicast_latency_p50);
    row.unicast_latency_p90 = mean(|r| r.unicast_latency_p90);
    row.unicast_latency_p95 = mean(|r| r.unicast_latency_p95);
    row.unicast_latency_p99 = mean(|r| r.unicast_latency_p99);
    row.unicast_latency_max = max(|r| r.unicast_latency_max);
    row.latency_p50_ci95 = combined_interval(replications, |r| (r.latency_p50, r.latency_p50_ci95));
    row.latency_p90_ci95 = combined_interval(replications, |r| (r.latency_p90, r.latency_p90_ci95));
    row.latency_p95_ci95 = combined_interval(replications, |r| (r.latency_p95, r.latency_p95_ci95));
    row.latency_p99_ci95 = combined_interval(replications, |r| (r.latency_p99, r.latency_p99_ci95));
}

/// Whether the replications' mean latencies agree within their own intervals: Cochran's Q,
/// `sum w_i (x_i - x_w)^2` with weights `w_i = 1 / se_i^2` (`se_i` a replication's
/// half-width over its t quantile) and `x_w` the weighted mean, against the chi-square
/// distribution's 0.995 quantile with r - 1 degrees of freedom. For two replications this is
/// about "their 95% intervals do not overlap", which right intervals do in 0.6% of pairs.
/// Not applied with faults, where the replications' fault maps differ by design.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Consistency {
    q: f64,
    consistent: bool,
}

impl Consistency {
    /// `None` with fewer than 2 replications, with faults, or unless every replication has a
    /// latency and a positive half-width.
    fn of(replications: &[Row]) -> Option<Consistency> {
        if replications.len() < 2 || replications.iter().any(|r| r.fault_seed.is_some()) {
            return None;
        }
        let parts: Option<Vec<(f64, f64)>> = replications
            .iter()
            .map(|r| {
                let half = r.latency_ci95.filter(|h| *h > 0.0)?;
                let t = t_quantile_975(batch_count(r).map_or(u64::MAX, |b| b.saturating_sub(1)));
                Some((r.latency?, (half / t).powi(-2)))
            })
            .collect();
        Some(Consistency::test(&parts?))
    }

    /// Cochran's Q of estimates `(x_i, w_i)` (w_i the inverse variance) and its test.
    fn test(parts: &[(f64, f64)]) -> Consistency {
        let weight: f64 = parts.iter().map(|(_, w)| w).sum();
        let mean = parts.iter().map(|(x, w)| x * w).sum::<f64>() / weight;
        let q: f64 = parts.iter().map(|(x, w)| w * (x - mean) * (x - mean)).sum();
        let df = (parts.len() as u64).saturating_sub(1);
        Consistency { q, consistent: !crate::statistics::chi_square_exceeds_995(q, df) }
    }

    /// Why an aggregate is marked `imprecise` when its replications disagree.
    fn detail(&self, replications: usize) -> String {
        format!(
            "the {replications} replications' mean latencies disagree beyond their intervals \
             (Cochran's Q = {:.1} on {} degrees of freedom, above its 0.995 quantile): the \
             interval is Student t across the replication means",
            self.q,
            replications - 1
        )
    }
}

/// A replication's number of interval batches (`latency_batches`), when it reports one.
fn batch_count(row: &Row) -> Option<u64> {
    row.intermediate("latency_batches").map(|b| b as u64)
}

/// Whether a replication's batch means passed the independence test (`sim::batch_means`);
/// a row that does not say (an external program's) counts as passed.
fn batches_independent(row: &Row) -> bool {
    row.intermediate("latency_batches_independent") != Some(0.0)
}

/// The 95% half-width of the mean over the replications of an estimate each replication
/// reports with its own half-width (`get` gives both): one replication, its own; replications
/// whose estimates agree (Cochran's Q as in [`Consistency`]) and each with a half-width,
/// `sqrt(sum h_i^2) / r` (the mean of r independent estimates); otherwise, or with faults,
/// Student t across the r estimates (r - 1 degrees of freedom). `None` unless every
/// replication has the estimate.
fn combined_interval(
    replications: &[Row],
    get: impl Fn(&Row) -> (Option<f64>, Option<f64>),
) -> Option<f64> {
    let parts: Vec<(Option<f64>, Option<f64>)> = replications.iter().map(&get).collect();
    if let [(Some(_), half)] = parts.as_slice() {
        return *half;
    }
    let values: Vec<f64> = parts.iter().map(|(x, _)| *x).collect::<Option<_>>()?;
    let r = values.len() as f64;
    let faults = replications.iter().any(|row| row.fault_seed.is_some());
    let halves: Option<Vec<f64>> = parts.iter().map(|(_, h)| h.filter(|h| *h > 0.0)).collect();
    if !faults && let Some(halves) = halves {
        let parts: Vec<(f64, f64)> = values
            .iter()
            .zip(&halves)
            .map(|(x, h)| (*x, (h / crate::statistics::Z_975).powi(-2)))
            .collect();
        if Consistency::test(&parts).consistent {
            return Some(halves.iter().map(|h| h * h).sum::<f64>().sqrt() / r);
        }
    }
    let mean = values.iter().sum::<f64>() / r;
    let var = values.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (r - 1.0);
    Some(t_quantile_975(values.len() as u64 - 1) * (var / r).sqrt())
}

/// The 95% interval of an aggregate row's latency, and what it is made of.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Interval {
    /// The half-width reported as `latency_ci95`.
    half: Option<f64>,
    /// With faults: the half-width of the simulation noise alone, given the fault maps drawn
    /// (the pooled within-replication batch means), the intermediate `latency_ci95_noise`.
    noise: Option<f64>,
    /// With faults: the estimated standard deviation of a point's mean latency from one fault
    /// map to another, noise removed (one-way random effects), the intermediate
    /// `fault_map_sd`.
    fault_map_sd: Option<f64>,
}

/// The 95% half-width of an aggregate row's latency (the statistics policy of
/// `docs/statistics.md`).
///
/// - One replication: its own batch-means interval.
/// - Without faults, when every replication's batch means passed the independence test and
///   the replications agree ([`Consistency`]): the batch means of all replications pooled
///   into one sample of B = b_1 + ... + b_r means, B - 1 degrees of freedom (batch means of
///   independent replications of one scenario are independent and alike). The pooled
///   variance is the within-replication sums of squares plus the between-replication term.
/// - Otherwise (a replication's batch means correlated, replications that disagree, or rows
///   without the batch intermediates `latency_batches`, `latency_batch_mean`,
///   `latency_batch_sd`): Student t across the r replication means, r - 1 degrees of freedom.
/// - With faults (each replication draws its own fault map, the same for every load point):
///   Student t across the r replication means, r - 1 degrees of freedom. That interval is for
///   the mean over random fault maps, what the models predict, and includes the map-to-map
///   variation; the noise alone and the map-to-map standard deviation are reported beside it
///   ([`Interval`]).
fn latency_interval(replications: &[Row], consistency: Option<Consistency>) -> Interval {
    if let [only] = replications {
        return Interval { half: only.latency_ci95, ..Interval::default() };
    }
    let faults = replications.iter().any(|r| r.fault_seed.is_some());
    let poolable =
        consistency.is_none_or(|c| c.consistent) && replications.iter().all(batches_independent);
    if !faults
        && poolable
        && let Some(half) = pooled_batch_interval(replications)
    {
        return Interval { half: Some(half), ..Interval::default() };
    }
    let Some(values) = replications.iter().map(|r| r.latency).collect::<Option<Vec<f64>>>() else {
        return Interval::default();
    };
    let n = values.len() as f64;
    let m = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    let half = Some(t_quantile_975(values.len() as u64 - 1) * (var / n).sqrt());
    if !faults {
        return Interval { half, ..Interval::default() };
    }
    match within_replication_noise(replications) {
        Some((noise, mean_noise_variance)) => Interval {
            half,
            noise: Some(noise),
            fault_map_sd: Some((var - mean_noise_variance).max(0.0).sqrt()),
        },
        None => Interval { half, ..Interval::default() },
    }
}

/// With faults, the simulation noise of the mean over the replications given their fault
/// maps: the 95% half-width from the within-replication batch-means variances pooled
/// (B - r degrees of freedom), and the mean over replications of the variance of one
/// replication's mean (sd_i^2 / b_i), which the variance of the replication means exceeds
/// by the map-to-map variance. `None` unless every replication has its batch statistics.
fn within_replication_noise(replications: &[Row]) -> Option<(f64, f64)> {
    let batches = batch_statistics(replications)?;
    let r = batches.len() as f64;
    let total: f64 = batches.iter().map(|(b, _, _)| b).sum();
    if total <= r {
        return None;
    }
    let within: f64 = batches.iter().map(|(b, _, sd)| (b - 1.0) * sd * sd).sum::<f64>();
    let pooled_variance = within / (total - r);
    // Var(mean over maps | maps) = sum_i (s^2 / b_i) / r^2.
    let noise_variance: f64 = batches.iter().map(|(b, _, _)| pooled_variance / b).sum::<f64>();
    let half = t_quantile_975((total - r) as u64) * (noise_variance / (r * r)).sqrt();
    let mean_noise_variance = batches.iter().map(|(b, _, sd)| sd * sd / b).sum::<f64>() / r;
    Some((half, mean_noise_variance))
}

/// Every replication's (b, batch mean, batch sd), when each has a latency and at least two
/// batches.
fn batch_statistics(replications: &[Row]) -> Option<Vec<(f64, f64, f64)>> {
    let mut batches = Vec::with_capacity(replications.len());
    for row in replications {
        row.latency?;
        let stats: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&row.intermediates).ok()?;
        let get = |key: &str| stats.get(key).and_then(serde_json::Value::as_f64);
        let (b, mean, sd) =
            (get("latency_batches")?, get("latency_batch_mean")?, get("latency_batch_sd")?);
        if !(b >= 2.0 && mean.is_finite() && sd.is_finite()) {
            return None;
        }
        batches.push((b, mean, sd));
    }
    Some(batches)
}

/// The pooled batch-means half-width of [`latency_interval`], when every replication has a
/// latency and its batch statistics.
fn pooled_batch_interval(replications: &[Row]) -> Option<f64> {
    let batches = batch_statistics(replications)?;
    let total: f64 = batches.iter().map(|(b, _, _)| b).sum();
    let grand = batches.iter().map(|(b, mean, _)| b * mean).sum::<f64>() / total;
    let squares: f64 = batches
        .iter()
        .map(|(b, mean, sd)| (b - 1.0) * sd * sd + b * (mean - grand) * (mean - grand))
        .sum();
    let variance = squares / (total - 1.0);
    Some(t_quantile_975(total as u64 - 1) * (variance / total).sqrt())
}

/// An aggregate's intermediates with the parts of its interval ([`Interval`]) and the
/// replications' consistency: `replication_q` (Cochran's Q) and `replications_consistent`
/// (1 or 0).
fn with_interval_parts(
    intermediates: &str,
    interval: Interval,
    consistency: Option<Consistency>,
) -> String {
    with_numbers(
        intermediates,
        &[
            ("latency_ci95_noise", interval.noise),
            ("fault_map_sd", interval.fault_map_sd),
            ("replication_q", consistency.map(|c| c.q)),
            ("replications_consistent", consistency.map(|c| f64::from(u8::from(c.consistent)))),
        ],
    )
}

/// Intermediates an aggregate reports as the largest over the replications that have them,
/// not as a mean: the warm-up must cover the longest transient.
const LARGEST_INTERMEDIATES: [&str; 1] = ["mser_truncation_cycles"];

/// The mean over replications of each intermediate every replication reports as a finite
/// number, as a JSON object (keys in the first replication's order); for the keys of
/// [`LARGEST_INTERMEDIATES`], the largest over the replications that report it.
fn mean_intermediates(replications: &[Row]) -> String {
    let parsed: Vec<serde_json::Map<String, serde_json::Value>> = replications
        .iter()
        .map(|r| serde_json::from_str(&r.intermediates).unwrap_or_default())
        .collect();
    let mut means = serde_json::Map::new();
    let Some(first) = parsed.first() else {
        return "{}".into();
    };
    for key in first.keys().filter(|key| !LARGEST_INTERMEDIATES.contains(&key.as_str())) {
        let values: Option<Vec<f64>> = parsed
            .iter()
            .map(|map| map.get(key).and_then(serde_json::Value::as_f64).filter(|v| v.is_finite()))
            .collect();
        if let Some(values) = values {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            if let Some(number) = serde_json::Number::from_f64(mean) {
                means.insert(key.clone(), serde_json::Value::Number(number));
            }
        }
    }
    for key in LARGEST_INTERMEDIATES {
        let largest = parsed
            .iter()
            .filter_map(|map| map.get(key).and_then(serde_json::Value::as_f64))
            .reduce(f64::max)
            .and_then(serde_json::Number::from_f64);
        if let Some(number) = largest {
            means.insert(key.to_owned(), serde_json::Value::Number(number));
        }
    }
    serde_json::Value::Object(means).to_string()
}

#[cfg(test)]
mod tests {
    use super::{
        Consistency, aggregate_percentiles, combined_interval, latency_interval,
        mean_intermediates, t_quantile_975,
    };
    use crate::store::row::Row;

    /// Without faults, replications pool their batch means (the interval of the concatenated
    /// sample of batch means), instead of a t(r - 1) interval over r means; rows without batch
    /// statistics fall back to t. With faults the interval is t across the replications (one
    /// fault map each), with the noise and the map-to-map spread beside it.
    #[test]
    fn replications_pool_their_batch_means_unless_each_has_its_own_fault_map() {
        let samples = [vec![10.0, 12.0, 11.0, 13.0, 9.0], vec![14.0, 12.5, 13.5, 15.0]];
        let stats = |means: &[f64]| {
            let b = means.len() as f64;
            let mean = means.iter().sum::<f64>() / b;
            let sd = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (b - 1.0)).sqrt();
            (b, mean, sd)
        };
        let row = |means: &[f64]| {
            let (b, mean, sd) = stats(means);
            Row {
                latency: Some(mean),
                intermediates: format!(
                    r#"{{"latency_batches":{b},"latency_batch_mean":{mean},"latency_batch_sd":{sd}}}"#
                ),
                ..Row::default()
            }
        };
        let rows = [row(&samples[0]), row(&samples[1])];
        let all: Vec<f64> = samples.concat();
        let (b, _, sd) = stats(&all);
        let expected = t_quantile_975(b as u64 - 1) * sd / b.sqrt();
        let pooled = latency_interval(&rows, None).half.expect("an interval");
        assert!((pooled - expected).abs() < 1e-12, "{pooled} vs {expected}");
        // Without the batch statistics: t(1) across the two means.
        let bare: Vec<Row> =
            rows.iter().map(|r| Row { intermediates: "{}".into(), ..r.clone() }).collect();
        let (m0, m1) = (stats(&samples[0]).1, stats(&samples[1]).1);
        let t1 = t_quantile_975(1) * (m0 - m1).abs() / 2.0;
        let fallback = latency_interval(&bare, None).half.expect("an interval");
        assert!((fallback - t1).abs() < 1e-9, "{fallback} vs {t1}");
        assert!(pooled < fallback / 3.0, "pooling narrows the bar: {pooled} vs {fallback}");
        // Three replications pool too.
        let three = [rows[0].clone(), rows[1].clone(), rows[0].clone()];
        let all: Vec<f64> = [samples[0].clone(), samples[1].clone(), samples[0].clone()].concat();
        let (b, _, sd) = stats(&all);
        let expected = t_quantile_975(b as u64 - 1) * sd / b.sqrt();
        let pooled = latency_interval(&three, None).half.expect("an interval");
        assert!((pooled - expected).abs() < 1e-12, "{pooled} vs {expected}");
        // With faults: t(2) across the three means, whatever the batches say; the noise
        // from the within-replication variances alone; the map-to-map spread from the rest.
        let faulty: Vec<Row> =
            three.iter().map(|r| Row { fault_seed: Some(1), ..r.clone() }).collect();
        let means = [m0, m1, m0];
        let mean = means.iter().sum::<f64>() / 3.0;
        let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / 2.0;
        let t2 = t_quantile_975(2) * (var / 3.0).sqrt();
        let across = latency_interval(&faulty, None);
        assert!((across.half.expect("an interval") - t2).abs() < 1e-9, "{across:?} vs {t2}");
        let parts = [stats(&samples[0]), stats(&samples[1]), stats(&samples[0])];
        let within: f64 = parts.iter().map(|(b, _, sd)| (b - 1.0) * sd * sd).sum();
        let (big_b, r) = (14.0, 3.0);
        let pooled_var = within / (big_b - r);
        let noise_var: f64 = parts.iter().map(|(b, _, _)| pooled_var / b).sum::<f64>() / (r * r);
        let noise = t_quantile_975(11) * noise_var.sqrt();
        assert!((across.noise.expect("noise") - noise).abs() < 1e-9, "{across:?} vs {noise}");
        let mean_noise: f64 = parts.iter().map(|(b, _, sd)| sd * sd / b).sum::<f64>() / r;
        let map_sd = (var - mean_noise).max(0.0).sqrt();
        assert!((across.fault_map_sd.expect("sd") - map_sd).abs() < 1e-9);
        assert!(map_sd > 0.0, "the means differ by more than their noise");
    }

    #[test]
    fn aggregate_intermediates_are_means_of_keys_every_replication_has() {
        let row = |json: &str| Row { intermediates: json.into(), ..Row::default() };
        let replications =
            [row(r#"{"p_s":0.5,"drops":1,"odd":2}"#), row(r#"{"p_s":0.7,"drops":3}"#)];
        let means: serde_json::Value =
            serde_json::from_str(&mean_intermediates(&replications)).expect("json");
        assert_eq!(means["p_s"].as_f64(), Some(0.6));
        assert_eq!(means["drops"].as_f64(), Some(2.0));
        assert!(means.get("odd").is_none(), "a key one replication lacks has no mean");
        assert_eq!(mean_intermediates(&[]), "{}");
        // The MSER truncation point: the largest over the replications that report it.
        let replications = [
            row(r#"{"p_s":0.5}"#),
            row(r#"{"p_s":0.7,"mser_truncation_cycles":780}"#),
            row(r#"{"p_s":0.6,"mser_truncation_cycles":195}"#),
        ];
        let means: serde_json::Value =
            serde_json::from_str(&mean_intermediates(&replications)).expect("json");
        assert_eq!(means["mser_truncation_cycles"].as_f64(), Some(780.0));
    }

    /// An aggregate row's percentiles are the means of the replications' percentiles and the
    /// largest of their maxima; a replication without them (saturated) leaves them null.
    #[test]
    fn aggregate_percentiles_average_the_replications_and_keep_the_largest_maximum() {
        let replication = |p50: f64, p99: f64, max: f64| Row {
            latency_p50: Some(p50),
            latency_p90: Some(p50 + 1.0),
            latency_p99: Some(p99),
            latency_max: Some(max),
            network_latency_p99: Some(p99 - 2.0),
            network_latency_max: Some(max - 2.0),
            source_wait_p50: Some(0.0),
            source_wait_max: Some(max - 20.0),
            ..Row::default()
        };
        let replications = [replication(20.0, 41.0, 60.0), replication(23.0, 44.0, 75.0)];
        let mut row = Row::default();
        aggregate_percentiles(&mut row, &replications);
        assert_eq!(
            (row.latency_p50, row.latency_p90, row.latency_p99, row.latency_max),
            (Some(21.5), Some(22.5), Some(42.5), Some(75.0))
        );
        assert_eq!((row.network_latency_p99, row.network_latency_max), (Some(40.5), Some(73.0)));
        assert_eq!((row.source_wait_p50, row.source_wait_max), (Some(0.0), Some(55.0)));
        assert_eq!((row.network_latency_p50, row.source_wait_p90), (None, None), "never measured");
        let saturated = Row { status: "saturated".into(), ..Row::default() };
        let mut row = Row::default();
        aggregate_percentiles(&mut row, &[replications[0].clone(), saturated]);
        assert_eq!((row.latency_p50, row.latency_max), (None, None));
    }

    /// Replications whose intervals overlap are consistent and pool; two whose intervals are
    /// far apart are not: the interval becomes t(1) across the two means. A replication whose
    /// batch means failed the independence test is not pooled either.
    #[test]
    fn inconsistent_or_correlated_replications_are_not_pooled() {
        let row = |latency: f64, half: f64, independent: u8| Row {
            latency: Some(latency),
            latency_ci95: Some(half),
            intermediates: format!(
                r#"{{"latency_batches":20,"latency_batch_mean":{latency},"latency_batch_sd":{},
                "latency_batches_independent":{independent}}}"#,
                half * 20f64.sqrt() / t_quantile_975(19)
            ),
            ..Row::default()
        };
        let agree = [row(100.0, 2.0, 1), row(101.0, 2.0, 1)];
        let consistency = Consistency::of(&agree).expect("a test");
        assert!(consistency.consistent, "{consistency:?}");
        let pooled = latency_interval(&agree, Some(consistency)).half.expect("an interval");
        assert!(pooled < 2.0, "40 batches pooled: {pooled}");
        // 983 +- 44 and 1,101 +- 52 (the example of the issue): Q = 11.8 > 7.9.
        let apart = [row(983.0, 44.0, 1), row(1101.0, 52.0, 1)];
        let consistency = Consistency::of(&apart).expect("a test");
        assert!(!consistency.consistent && consistency.q > 10.0, "{consistency:?}");
        let across = latency_interval(&apart, Some(consistency)).half.expect("an interval");
        let t1 = t_quantile_975(1) * (1101.0 - 983.0) / 2.0;
        assert!((across - t1).abs() < 1e-9, "{across} vs {t1}");
        // Consistent, but one replication's batch means are correlated: t(1) too.
        let correlated = [row(100.0, 2.0, 1), row(101.0, 2.0, 0)];
        let consistency = Consistency::of(&correlated);
        let half = latency_interval(&correlated, consistency).half.expect("an interval");
        assert!((half - t_quantile_975(1) * 0.5).abs() < 1e-9, "{half}");
    }

    /// Throughput and percentiles: sqrt(sum h^2) / r when the estimates agree, t(r - 1)
    /// across them when they do not, and one replication's own interval.
    #[test]
    fn estimates_with_their_own_intervals_combine_when_they_agree() {
        let row = |throughput: f64, half: f64| Row {
            throughput: Some(throughput),
            throughput_ci95: Some(half),
            ..Row::default()
        };
        let get = |r: &Row| (r.throughput, r.throughput_ci95);
        let agree = [row(0.010, 0.0003), row(0.0101, 0.0004)];
        let half = combined_interval(&agree, get).expect("an interval");
        assert!((half - 0.0005 / 2.0).abs() < 1e-15, "{half}");
        let apart = [row(0.010, 0.0001), row(0.012, 0.0001)];
        let half = combined_interval(&apart, get).expect("an interval");
        assert!((half - t_quantile_975(1) * 0.001).abs() < 1e-12, "{half}");
        assert_eq!(combined_interval(&agree[..1], get), Some(0.0003));
        let missing = [row(0.010, 0.0003), Row::default()];
        assert_eq!(combined_interval(&missing, get), None);
    }
}
