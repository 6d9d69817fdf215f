//! The `coverage` table's statistics: do the simulation's 95% intervals mean what they say?
//!
//! Read from the replication rows (`replication` set) of every simulated method, grouped by
//! method, scenario and load point, for each estimate of [`ESTIMATES`] (a value and its 95%
//! half-width, [`Estimate`]). Per load point, over the n replications that have both a finite
//! value x_i and a finite half-width h_i:
//!
//! - **covered**: replications whose interval x_i ± h_i contains the mean of the other n - 1
//!   replications (leave-one-out: the reference is independent of the interval it tests; its
//!   own error is about 1/√(n - 1) of one replication's, so even right intervals cover it a
//!   little less than 95% of the time, [`expected_coverage`]). With its exact Clopper-Pearson
//!   95% interval ([`binomial::clopper_pearson`]).
//! - **sd ratio**: the observed standard deviation of the x_i over the mean standard deviation
//!   their intervals imply, h_i / t_{0.975}(df_i) with df_i the row's batch count less one
//!   ([`Estimate::degrees_of_freedom`]): about 1 when the intervals are right, above 1 when
//!   they are too narrow.
//! - **pairs apart**: of the pairs of consecutive replications (0-1, 2-3, ...), those whose
//!   intervals do not overlap. Two independent right 95% intervals miss each other with
//!   probability P(|Z| > 1.96·√2) ≈ 0.56%.
//!
//! A point with two replications (the paper specs') has a leave-one-out reference of one
//! replication, so its coverage is mostly noise, but its one pair counts. The table therefore
//! pools: one line per scenario over all its load points, and one over all scenarios, each
//! with the pooled counts and their binomial intervals; the per-point lines come only when some
//! point has more than two replications. The pooled sd ratio is the square root of the
//! points' squared ratios averaged with weights n - 1 (a pooled variance ratio).

use std::collections::HashMap;

use serde_json::Value;

use super::binomial;
use super::columns;
use super::intervals::Estimate;
use crate::statistics::t_quantile_975;
use crate::store::row::Row;

/// The estimates the table checks, in its order.
pub(crate) const ESTIMATES: [Estimate; 3] =
    [Estimate::Latency, Estimate::Throughput, Estimate::LatencyP99];

/// Per-point lines appear when some point has more than this many replications.
const PAIR_ONLY_REPLICATIONS: usize = 2;

/// The statistics of one line: a load point, or the points pooled.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct CoverageStats {
    /// Replications with a finite value and half-width.
    pub(crate) n: usize,
    /// Of those at points with at least two, how many entered the leave-one-out count.
    pub(crate) tested: usize,
    /// Of those tested, how many intervals contain the leave-one-out mean.
    pub(crate) covered: usize,
    /// Pairs of consecutive replications (0-1, 2-3, ...) that both have an interval.
    pub(crate) pairs: usize,
    /// Of those pairs, how many intervals do not overlap.
    pub(crate) apart: usize,
    /// Sum over points of (n - 1) times the squared sd ratio, and of (n - 1).
    ratio_squares: f64,
    ratio_weight: f64,
    /// The replications at the line's points (the most at one point).
    pub(crate) most_per_point: usize,
}

impl CoverageStats {
    /// Coverage: covered / tested.
    pub(crate) fn coverage(&self) -> Option<f64> {
        (self.tested > 0).then(|| self.covered as f64 / self.tested as f64)
    }

    /// The coverage's Clopper-Pearson 95% interval.
    pub(crate) fn coverage_interval(&self) -> Option<(f64, f64)> {
        binomial::clopper_pearson(self.covered, self.tested)
    }

    /// The fraction of pairs whose intervals do not overlap.
    pub(crate) fn apart_fraction(&self) -> Option<f64> {
        (self.pairs > 0).then(|| self.apart as f64 / self.pairs as f64)
    }

    /// That fraction's Clopper-Pearson 95% interval.
    pub(crate) fn apart_interval(&self) -> Option<(f64, f64)> {
        binomial::clopper_pearson(self.apart, self.pairs)
    }

    /// Observed over implied standard deviation (pooled over points, see the module doc).
    pub(crate) fn sd_ratio(&self) -> Option<f64> {
        (self.ratio_weight > 0.0).then(|| (self.ratio_squares / self.ratio_weight).sqrt())
    }

    fn merge(&mut self, other: &CoverageStats) {
        self.n += other.n;
        self.tested += other.tested;
        self.covered += other.covered;
        self.pairs += other.pairs;
        self.apart += other.apart;
        self.ratio_squares += other.ratio_squares;
        self.ratio_weight += other.ratio_weight;
        self.most_per_point = self.most_per_point.max(other.most_per_point);
    }
}

/// One replication's estimate.
#[derive(Clone, Copy, Debug)]
struct Sample {
    replication: u32,
    value: f64,
    half_width: f64,
    degrees_of_freedom: u32,
}

/// The statistics of one load point's replications (any order).
fn point_stats(estimate: Estimate, replications: &[&Row]) -> CoverageStats {
    let mut samples: Vec<Sample> = replications
        .iter()
        .filter_map(|row| {
            Some(Sample {
                replication: row.replication?,
                value: estimate.value(row)?,
                half_width: estimate.half_width(row)?,
                degrees_of_freedom: estimate.degrees_of_freedom(row),
            })
        })
        .collect();
    samples.sort_by_key(|sample| sample.replication);
    let n = samples.len();
    let mut stats = CoverageStats { n, most_per_point: n, ..CoverageStats::default() };
    if n >= 2 {
        let sum: f64 = samples.iter().map(|sample| sample.value).sum();
        stats.tested = n;
        stats.covered = samples
            .iter()
            .filter(|sample| {
                let others = (sum - sample.value) / (n - 1) as f64;
                (sample.value - others).abs() <= sample.half_width
            })
            .count();
        if let Some(ratio) = sd_ratio(&samples, sum / n as f64) {
            let weight = (n - 1) as f64;
            stats.ratio_squares = weight * ratio * ratio;
            stats.ratio_weight = weight;
        }
    }
    for pair in samples.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if a.replication % 2 == 0 && b.replication == a.replication + 1 {
            stats.pairs += 1;
            stats.apart += usize::from((a.value - b.value).abs() > a.half_width + b.half_width);
        }
    }
    stats
}

/// Observed sample standard deviation over the mean standard deviation the intervals imply.
fn sd_ratio(samples: &[Sample], mean: f64) -> Option<f64> {
    let n = samples.len() as f64;
    let observed = (samples.iter().map(|sample| (sample.value - mean).powi(2)).sum::<f64>()
        / (n - 1.0))
        .sqrt();
    let implied = samples
        .iter()
        .map(|sample| sample.half_width / t_quantile_975(u64::from(sample.degrees_of_freedom)))
        .sum::<f64>()
        / n;
    (implied > 0.0 && implied.is_finite()).then(|| observed / implied)
}

/// How often a right 95% interval of one replication contains the mean of the n - 1 others:
/// P(|Z| < 1.96 / √(1 + 1/(n - 1))), normal approximation (94.6% at n = 31, 83% at n = 2).
pub(crate) fn expected_coverage(n: usize) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let z = 1.959_963_984_540_054 / (1.0 + 1.0 / (n - 1) as f64).sqrt();
    Some(2.0 * binomial::normal_cdf(z) - 1.0)
}

/// What a line covers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scope {
    /// One load point: its rate and load.
    Point { rate: f64, fraction: Option<f64> },
    /// All load points of the line's scenario.
    Scenario,
    /// All scenarios of the line's method.
    All,
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CoverageLine {
    /// The simulated method (`simulation`, or an external simulation's name).
    pub(crate) method: String,
    /// `scenario_id`, empty for an [`Scope::All`] line.
    pub(crate) scenario_id: String,
    /// The scenario in words (`All scenarios` for an [`Scope::All`] line).
    pub(crate) label: String,
    /// The scenario's fields (its first row as JSON; null for an [`Scope::All`] line).
    pub(crate) json: Value,
    pub(crate) scope: Scope,
    pub(crate) estimate: Estimate,
    pub(crate) stats: CoverageStats,
}

/// The table's content.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Coverage {
    /// Point lines (when [`per_point`](Self::per_point)) and scenario lines, in row order;
    /// then the [`Scope::All`] lines.
    pub(crate) lines: Vec<CoverageLine>,
    /// Whether some point has more than two replications (the per-point lines are shown).
    pub(crate) per_point: bool,
    /// The estimates no replication row has a half-width for (their cells stay empty).
    pub(crate) missing: Vec<Estimate>,
    /// The most replications of one point, over all estimates.
    pub(crate) most_per_point: usize,
}

/// One load point's replication rows.
struct PointRows<'a> {
    method: &'a str,
    scenario_id: &'a str,
    rate: f64,
    rows: Vec<&'a Row>,
}

/// The replication rows grouped by method, scenario and rate, in the order they come.
fn points(rows: &[Row]) -> Vec<PointRows<'_>> {
    let mut points: Vec<PointRows<'_>> = Vec::new();
    let mut index: HashMap<(&str, &str, u64), usize> = HashMap::new();
    for row in rows.iter().filter(|row| row.replication.is_some()) {
        let key = (row.method.as_str(), row.scenario_id.as_str(), row.rate.to_bits());
        let at = *index.entry(key).or_insert_with(|| {
            points.push(PointRows {
                method: &row.method,
                scenario_id: &row.scenario_id,
                rate: row.rate,
                rows: Vec::new(),
            });
            points.len() - 1
        });
        points[at].rows.push(row);
    }
    points
}

/// Computes the table's lines from the rows (see the module doc).
pub(crate) fn compute(rows: &[Row]) -> Coverage {
    let points = points(rows);
    let mut methods: Vec<&str> = Vec::new();
    let mut scenarios: Vec<(&str, &str)> = Vec::new();
    for point in &points {
        if !methods.contains(&point.method) {
            methods.push(point.method);
        }
        if !scenarios.contains(&(point.method, point.scenario_id)) {
            scenarios.push((point.method, point.scenario_id));
        }
    }
    let most_per_point = points.iter().map(|point| point.rows.len()).max().unwrap_or(0);
    let per_point = most_per_point > PAIR_ONLY_REPLICATIONS;
    let firsts: Vec<Value> = scenarios
        .iter()
        .filter_map(|(method, id)| {
            let point = points.iter().find(|p| p.method == *method && p.scenario_id == *id)?;
            point.rows.first().map(|row| columns::to_json(row))
        })
        .collect();
    let varying = super::tables::varying_fields(&firsts);
    let mut coverage = Coverage { per_point, most_per_point, ..Coverage::default() };
    for method in &methods {
        let mut all: Vec<CoverageStats> = vec![CoverageStats::default(); ESTIMATES.len()];
        let mut scenario_count = 0;
        for ((_, id), json) in scenarios.iter().zip(&firsts).filter(|((m, _), _)| m == method) {
            scenario_count += 1;
            let label = if firsts.len() > 1 {
                columns::describe(json, &varying)
            } else {
                columns::describe(json, columns::DESCRIBE_COLUMNS)
            };
            let line = |scope: Scope, estimate: Estimate, stats: CoverageStats| CoverageLine {
                method: (*method).to_owned(),
                scenario_id: (*id).to_owned(),
                label: label.clone(),
                json: json.clone(),
                scope,
                estimate,
                stats,
            };
            let mut pooled: Vec<CoverageStats> = vec![CoverageStats::default(); ESTIMATES.len()];
            for point in points.iter().filter(|p| p.method == *method && p.scenario_id == *id) {
                let fraction = point.rows.iter().find_map(|row| row.fraction_of_saturation);
                for (slot, estimate) in ESTIMATES.into_iter().enumerate() {
                    let stats = point_stats(estimate, &point.rows);
                    pooled[slot].merge(&stats);
                    if per_point {
                        let scope = Scope::Point { rate: point.rate, fraction };
                        coverage.lines.push(line(scope, estimate, stats));
                    }
                }
            }
            for (slot, estimate) in ESTIMATES.into_iter().enumerate() {
                all[slot].merge(&pooled[slot]);
                coverage.lines.push(line(Scope::Scenario, estimate, pooled[slot].clone()));
            }
        }
        if scenario_count > 1 {
            for (estimate, stats) in ESTIMATES.into_iter().zip(all) {
                coverage.lines.push(CoverageLine {
                    method: (*method).to_owned(),
                    scenario_id: String::new(),
                    label: "All scenarios".to_owned(),
                    json: Value::Null,
                    scope: Scope::All,
                    estimate,
                    stats,
                });
            }
        }
    }
    // The All lines last (the table's foot), keeping their method order.
    coverage.lines.sort_by_key(|line| line.scope == Scope::All);
    coverage.missing = ESTIMATES
        .into_iter()
        .filter(|estimate| {
            !coverage.lines.iter().any(|line| line.estimate == *estimate && line.stats.n > 0)
        })
        .collect();
    coverage
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replication(scenario: &str, rate: f64, index: u32, latency: f64, half: f64) -> Row {
        Row {
            scenario_id: scenario.into(),
            method: "simulation".into(),
            topology: "torus".into(),
            routing: if scenario == "a" { "duato" } else { "nbc" }.into(),
            rate,
            replication: Some(index),
            latency: Some(latency),
            latency_ci95: Some(half),
            status: "ok".into(),
            intermediates: r#"{"latency_batches": 20}"#.into(),
            ..Row::default()
        }
    }

    /// Four replications at 10, 11, 12 and 20 with half-widths 1.5, 2.5, 3.5 and 4.5, worked
    /// by hand.
    #[test]
    fn a_point_counts_leave_one_out_coverage_pairs_and_the_sd_ratio() {
        let values = [10.0, 11.0, 12.0, 20.0];
        let rows: Vec<Row> = values
            .iter()
            .enumerate()
            .map(|(i, value)| replication("a", 0.01, i as u32, *value, 1.5 + i as f64))
            .collect();
        let refs: Vec<&Row> = rows.iter().collect();
        let stats = point_stats(Estimate::Latency, &refs);
        // Others' means: 43/3 = 14.33, 14, 13.67, 11; half-widths 1.5, 2.5, 3.5, 4.5:
        // |10 - 14.33| = 4.33 > 1.5, |11 - 14| = 3 > 2.5, |12 - 13.67| = 1.67 <= 3.5,
        // |20 - 11| = 9 > 4.5.
        assert_eq!((stats.n, stats.tested, stats.covered), (4, 4, 1));
        // Pairs 0-1 (|10 - 11| = 1 <= 4) and 2-3 (|12 - 20| = 8 <= 8): both overlap.
        assert_eq!((stats.pairs, stats.apart), (2, 0));
        let mean = 53.0 / 4.0;
        let sd = (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 3.0).sqrt();
        let implied = (1.5 + 2.5 + 3.5 + 4.5) / 4.0 / t_quantile_975(19);
        let ratio = stats.sd_ratio().unwrap_or_default();
        assert!((ratio - sd / implied).abs() < 1e-12, "{ratio}");
        assert_eq!(stats.coverage(), Some(0.25));
        // No throughput half-width in these rows: nothing counted, no ratio.
        let throughput = point_stats(Estimate::Throughput, &refs);
        assert_eq!((throughput.n, throughput.sd_ratio()), (0, None));
    }

    /// Two replications per point (the paper specs): no per-point lines, one line per scenario
    /// and estimate with the pairs pooled, then the All lines; a missing half-width column is
    /// named, not an error.
    #[test]
    fn two_replications_per_point_pool_per_scenario() {
        let mut rows = Vec::new();
        for (scenario, apart) in [("a", 12.5), ("b", 10.5)] {
            for step in 1..=3 {
                let rate = 0.001 * f64::from(step);
                rows.push(replication(scenario, rate, 0, 10.0, 1.0));
                rows.push(replication(
                    scenario,
                    rate,
                    1,
                    if step == 1 { apart } else { 10.2 },
                    1.0,
                ));
                // The aggregate row is not a replication.
                rows.push(Row { replication: None, ..replication(scenario, rate, 0, 10.1, 0.7) });
            }
        }
        let coverage = compute(&rows);
        assert!(!coverage.per_point);
        assert_eq!(coverage.most_per_point, 2);
        assert_eq!(coverage.missing, [Estimate::Throughput, Estimate::LatencyP99]);
        let latency: Vec<&CoverageLine> =
            coverage.lines.iter().filter(|line| line.estimate == Estimate::Latency).collect();
        let scopes: Vec<&Scope> = latency.iter().map(|line| &line.scope).collect();
        assert_eq!(scopes, [&Scope::Scenario, &Scope::Scenario, &Scope::All]);
        // a: 12.5 vs 10 with +-1 are apart; b: 10.5 vs 10 overlap.
        assert_eq!((latency[0].stats.pairs, latency[0].stats.apart), (3, 1));
        assert_eq!((latency[1].stats.pairs, latency[1].stats.apart), (3, 0));
        assert_eq!((latency[2].stats.pairs, latency[2].stats.apart), (6, 1));
        assert_eq!(latency[2].stats.n, 12);
        assert!(latency[0].label.contains("Duato"), "{}", latency[0].label);
    }

    #[test]
    fn more_replications_give_per_point_lines_and_the_expected_coverage_is_below_95() {
        let rows: Vec<Row> = (0..5).map(|i| replication("a", 0.01, i, 10.0, 1.0)).collect();
        let coverage = compute(&rows);
        assert!(coverage.per_point);
        let first = &coverage.lines[0];
        assert_eq!(first.scope, Scope::Point { rate: 0.01, fraction: None });
        assert_eq!((first.stats.covered, first.stats.tested), (5, 5));
        // No scatter at all: the ratio is 0, the coverage 100%.
        assert_eq!(first.stats.sd_ratio(), Some(0.0));
        let expected = expected_coverage(31).unwrap_or_default();
        assert!((expected - 0.946).abs() < 1e-3, "{expected}");
        let pair = expected_coverage(2).unwrap_or_default();
        assert!((pair - 0.834).abs() < 1e-3, "{pair}");
        assert_eq!(expected_coverage(1), None);
    }
}
