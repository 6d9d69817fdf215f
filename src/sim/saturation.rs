//! The simulator's saturation throughput: the highest accepted rate, found in throughput mode.
//!
//! The counterpart of `model::saturation_rate`. Below saturation the accepted rate follows the
//! offered one; past it the network accepts what it can and the throughput-mode status is
//! `saturated`. One search ([`saturation_throughput`]):
//!
//! 1. simulates at the injection bound, `min(V, e) / M` messages/node/cycle (`e` flits a node
//!    can eject per cycle: 1 with `single` ejection, its number of input links with
//!    `unlimited`; no more than a Bernoulli or on/off source can offer), where every source
//!    queue stays full: the accepted rate there is the network's throughput under overload;
//! 2. bisects the offered load between the largest rate found stable (`ok`) and the smallest
//!    found saturated, starting with the overload throughput itself, until the bracket is
//!    narrower than [`TOLERANCE`] of its upper end.
//!
//! **Resolution.** [`TOLERANCE`] is the search's stated resolution: the knee bracket
//! (`stable_rate .. saturated_rate`) is at most 1% of its upper end wide when the search
//! stops, unless it stopped at [`MAX_POINTS`] points first; each search reports its bracket's
//! relative width (`bracket_width`), so a search that stopped short says so.
//!
//! The saturation throughput is the highest accepted rate over every point simulated (a
//! network whose throughput drops past saturation has its peak near the knee, not under full
//! overload; one that takes more when every source always has a message waiting has it under
//! full overload); the bracket says where the knee lies, the first load whose accepted
//! rate falls short of the offered one. The points are not a grid: past the first two (the
//! bound and the overload throughput) each halves the bracket, so they close in on the knee,
//! and once the bracket is within [`TOLERANCE`], its stable end is one of them (its accepted
//! rate is its offered rate, give or take the noise of one window). The
//! maximum is therefore never that of a coarse grid below the knee; a curve that peaked
//! strictly between the knee and the injection bound would be sampled only at the
//! bisection's points there. Every point uses the same seed (common random numbers), so the
//! search is reproducible bit for bit, and each point is an ordinary throughput-mode
//! simulation with the caller's window.
//!
//! **Replications.** One search's result is one sample: its points share a seed, so its
//! noise is not averaged out. [`replicate`] runs independent searches, one per seed, one
//! after the other (so the result is reproducible bit for bit), and reports the mean of their
//! saturation throughputs with a 95% Student-t half-width over them (N - 1 degrees of
//! freedom; none for a single search) beside each search's own result and bracket. The
//! caller picks the seeds (`runner simulate` uses `--seed` for the first and derives the
//! others as the planner derives replications' seeds, `plan::identity::saturation_search_seed`).

use super::stats::student_t975;
use super::topology::Geometry;
use super::{Measure, Progress, SimError, SimOptions, simulate};
use crate::measurement::Status;
use crate::scenario::{Ejection, Scenario};

/// The search's resolution: it stops once the knee bracket's width (`saturated_rate -
/// stable_rate`) is at most this fraction of its upper end (`saturated_rate`).
pub const TOLERANCE: f64 = 0.01;

/// At most this many points are simulated per search (the bracket then is at most 2^-14 of
/// the bound, which is within [`TOLERANCE`] of its upper end unless the knee lies below
/// 2^-14 / TOLERANCE, about 0.6%, of the bound).
pub const MAX_POINTS: usize = 16;

/// Progress units per point of the search (thousandths of a point).
pub const PROGRESS_PER_POINT: u64 = 1000;

/// One simulated point of the search.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Point {
    /// Offered rate (messages/node/cycle).
    pub rate: f64,
    /// `ok`, `saturated` or `deadlock`.
    pub status: Status,
    /// Accepted rate (messages/node/cycle); `None` for a deadlock.
    pub throughput: Option<f64>,
    /// Accepted flits/node/cycle.
    pub flit_throughput: Option<f64>,
    /// Messages dropped at full source queues in the window.
    pub source_drops: Option<f64>,
}

/// The outcome of [`saturation_throughput`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Saturation {
    /// The highest accepted rate over all points (messages/node/cycle).
    pub saturation_throughput: f64,
    /// The same point's accepted flits/node/cycle.
    pub flit_saturation_throughput: Option<f64>,
    /// The offered rate at which it was accepted.
    pub offered_at_maximum: f64,
    /// The largest offered rate found stable (`ok`); 0 when none was.
    pub stable_rate: f64,
    /// The smallest offered rate found saturated (or deadlocked); `None` when none was.
    pub saturated_rate: Option<f64>,
    /// The bracket's relative width, `(saturated_rate - stable_rate) / saturated_rate`: at
    /// most [`TOLERANCE`] unless the search stopped at [`MAX_POINTS`]; `None` when no point
    /// saturated (the network accepts the injection bound, so there is no knee below it).
    pub bracket_width: Option<f64>,
    /// Every point simulated, in order.
    pub points: Vec<Point>,
}

/// Finds the saturation throughput of `scenario` by simulating in throughput mode with
/// `options` (latency mode is switched to throughput mode with the default source-queue
/// capacity) and `seed`. `progress` is told (thousandths of points done, thousandths of the
/// points planned at most) every 4096 cycles of each point's simulation, so a search whose
/// points each take minutes shows it moving.
pub fn saturation_throughput(
    scenario: &Scenario,
    options: &SimOptions,
    seed: u64,
    progress: Option<Progress<'_>>,
) -> Result<Saturation, SimError> {
    let mut options = options.clone();
    if options.measure.is_latency() {
        options.measure = Measure::THROUGHPUT;
    }
    let bound = injection_bound(scenario);
    let planned = PROGRESS_PER_POINT * MAX_POINTS as u64;
    let mut done = 0u64;
    search(bound, |rate| {
        let before = PROGRESS_PER_POINT * done;
        done += 1;
        if let Some(report) = progress
            && report(before, planned).is_break()
        {
            return Err(SimError::cancelled());
        }
        // The point's own progress, as a part of the search's.
        let within = |done: u64, total: u64| match progress {
            Some(report) => {
                report(before + PROGRESS_PER_POINT * done.min(total) / total.max(1), planned)
            }
            None => std::ops::ControlFlow::Continue(()),
        };
        let m =
            simulate(scenario, rate, &options, seed, progress.map(|_| &within as Progress<'_>))?;
        Ok(Point {
            rate,
            status: m.status,
            throughput: m.throughput,
            flit_throughput: m.intermediate("flit_throughput"),
            source_drops: m.intermediate("source_drops"),
        })
    })
}

/// The search itself, over any simulator: `run` simulates one offered rate in throughput mode
/// and gives its [`Point`] (runner's simulator for [`saturation_throughput`], an external
/// program's for the pipeline's searches of an external method). Starts at `bound`, the most a
/// node can offer, then bisects as the module says; an error of `run` ends the search.
pub fn search(
    bound: f64,
    mut run: impl FnMut(f64) -> Result<Point, SimError>,
) -> Result<Saturation, SimError> {
    let mut points: Vec<Point> = Vec::new();
    let mut step = |rate: f64, points: &mut Vec<Point>| -> Result<Status, SimError> {
        let point = run(rate)?;
        let status = point.status;
        points.push(point);
        Ok(status)
    };
    let (mut lo, mut hi) = (0.0_f64, None::<f64>);
    let status = step(bound, &mut points)?;
    classify(bound, status, &mut lo, &mut hi);
    let overload = points[0].throughput.filter(|t| *t > 0.0 && *t < bound);
    let mut next = overload;
    while let Some(upper) = hi {
        if upper - lo <= TOLERANCE * upper || points.len() >= MAX_POINTS {
            break;
        }
        let rate = match next.take() {
            Some(rate) if rate > lo && rate < upper => rate,
            _ => 0.5 * (lo + upper),
        };
        let status = step(rate, &mut points)?;
        classify(rate, status, &mut lo, &mut hi);
    }
    let best = points
        .iter()
        .filter_map(|p| p.throughput.map(|t| (t, p)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| p)
        .ok_or_else(|| {
            SimError(format!(
                "no throughput measured: every point deadlocked ({})",
                points.iter().map(|p| p.rate.to_string()).collect::<Vec<_>>().join(", ")
            ))
        })?;
    Ok(Saturation {
        saturation_throughput: best.throughput.unwrap_or(0.0),
        flit_saturation_throughput: best.flit_throughput,
        offered_at_maximum: best.rate,
        stable_rate: lo,
        saturated_rate: hi,
        bracket_width: hi.map(|upper| (upper - lo) / upper),
        points,
    })
}

/// One of [`replicate`]'s searches: its seed and what it found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Search {
    /// The seed of every point of this search.
    pub seed: u64,
    /// Its result, bracket and points.
    #[serde(flatten)]
    pub found: Saturation,
}

/// The outcome of [`replicate`]: independent searches and their combination.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Replicated {
    /// The mean of the searches' saturation throughputs (messages/node/cycle).
    pub saturation_throughput: f64,
    /// Its 95% Student-t half-width over the searches; `None` for one search.
    pub saturation_throughput_ci95: Option<f64>,
    /// The mean of the searches' flit saturation throughputs (flits/node/cycle), when every
    /// search has one.
    pub flit_saturation_throughput: Option<f64>,
    /// Its 95% Student-t half-width; `None` for one search.
    pub flit_saturation_throughput_ci95: Option<f64>,
    /// The number of searches, N.
    pub replications: usize,
    /// N - 1, the interval's degrees of freedom; `None` for one search (no interval).
    pub degrees_of_freedom: Option<usize>,
    /// Each search's resolution, [`TOLERANCE`]: the relative width its knee bracket is
    /// bisected to.
    pub tolerance: f64,
    /// Each search, in seed order.
    pub searches: Vec<Search>,
}

/// The mean of some values and its 95% Student-t half-width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The sample mean.
    pub mean: f64,
    /// `t(0.975, n - 1) * s / sqrt(n)`; `None` for fewer than 2 values.
    pub ci95: Option<f64>,
}

/// The mean of `values` with its 95% Student-t half-width over them (n - 1 degrees of
/// freedom, `s` the sample standard deviation); `None` for no values.
pub fn interval(values: &[f64]) -> Option<Interval> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let count = n as f64;
    let mean = values.iter().sum::<f64>() / count;
    let ci95 = (n >= 2).then(|| {
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (count - 1.0);
        student_t975(n as u64 - 1) * (variance / count).sqrt()
    });
    Some(Interval { mean, ci95 })
}

/// Runs one [`saturation_throughput`] search per seed, one after the other, and combines
/// them: the mean saturation throughput with its 95% Student-t half-width over the searches.
/// `progress` is told the searches' progress together (search `i` covers
/// `i * PROGRESS_PER_POINT * MAX_POINTS` onwards). A search's error names the search and its
/// seed; a cancellation is passed on as it is.
pub fn replicate(
    scenario: &Scenario,
    options: &SimOptions,
    seeds: &[u64],
    progress: Option<Progress<'_>>,
) -> Result<Replicated, SimError> {
    let per_search = PROGRESS_PER_POINT * MAX_POINTS as u64;
    let planned = per_search * seeds.len() as u64;
    let mut searches = Vec::with_capacity(seeds.len());
    for (index, &seed) in seeds.iter().enumerate() {
        let before = per_search * index as u64;
        let within = |done: u64, _: u64| match progress {
            Some(report) => report(before + done.min(per_search), planned),
            None => std::ops::ControlFlow::Continue(()),
        };
        let found = saturation_throughput(
            scenario,
            options,
            seed,
            progress.map(|_| &within as Progress<'_>),
        )
        .map_err(|e| search_error(e, index, seeds.len(), seed))?;
        searches.push(Search { seed, found });
    }
    combine(searches)
}

/// A search's error, naming the search when there are several.
fn search_error(error: SimError, index: usize, count: usize, seed: u64) -> SimError {
    if error.is_cancelled() || count == 1 {
        return error;
    }
    SimError(format!("search {} of {count} (seed {seed}): {}", index + 1, error.0))
}

/// The mean and interval of the searches' results.
pub fn combine(searches: Vec<Search>) -> Result<Replicated, SimError> {
    let messages: Vec<f64> = searches.iter().map(|s| s.found.saturation_throughput).collect();
    let flits: Option<Vec<f64>> =
        searches.iter().map(|s| s.found.flit_saturation_throughput).collect();
    let messages =
        interval(&messages).ok_or_else(|| SimError("no saturation search was run".into()))?;
    let flits = flits.as_deref().and_then(interval);
    let n = searches.len();
    Ok(Replicated {
        saturation_throughput: messages.mean,
        saturation_throughput_ci95: messages.ci95,
        flit_saturation_throughput: flits.map(|f| f.mean),
        flit_saturation_throughput_ci95: flits.and_then(|f| f.ci95),
        replications: n,
        degrees_of_freedom: (n >= 2).then(|| n - 1),
        tolerance: TOLERANCE,
        searches,
    })
}

/// Moves the bracket: an `ok` rate raises its lower end, any other lowers its upper end.
fn classify(rate: f64, status: Status, lo: &mut f64, hi: &mut Option<f64>) {
    if status == Status::Ok {
        *lo = lo.max(rate);
    } else {
        *hi = Some(hi.map_or(rate, |h| h.min(rate)));
    }
}

/// The most messages/node/cycle a node can inject and eject: `min(V, e) / M`, and no more than
/// its injection process offers (1 for Bernoulli sources, B / (B + 1) for on/off ones).
pub fn injection_bound(scenario: &Scenario) -> f64 {
    let offered = scenario.injection_process.max_rate().unwrap_or(f64::INFINITY);
    network_bound(scenario).min(offered)
}

/// `min(V, e) / M`.
fn network_bound(scenario: &Scenario) -> f64 {
    let eject = match scenario.ejection {
        // One flit per cycle: a message's M flits take M cycles either way.
        Ejection::Single | Ejection::Interleaved => 1,
        // Every input link of the router (a torus, mesh or hypercube router's degree).
        // Every input link of the node's router (a terminal has one, to its switch or router).
        Ejection::Unlimited => Geometry::node_links(&scenario.topology),
    };
    f64::from(scenario.virtual_channels.min(eject)) / f64::from(scenario.message_length.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Routing, Topology};

    /// A search result with these throughputs (messages and flits).
    fn found(messages: f64, flits: Option<f64>) -> Saturation {
        Saturation {
            saturation_throughput: messages,
            flit_saturation_throughput: flits,
            offered_at_maximum: messages,
            stable_rate: messages,
            saturated_rate: Some(messages * 1.005),
            bracket_width: Some(0.005 / 1.005),
            points: Vec::new(),
        }
    }

    fn searches(values: &[(f64, Option<f64>)]) -> Vec<Search> {
        values
            .iter()
            .enumerate()
            .map(|(i, &(m, f))| Search { seed: i as u64, found: found(m, f) })
            .collect()
    }

    #[test]
    fn three_searches_give_their_mean_and_a_t2_interval() {
        let combined =
            combine(searches(&[(0.010, Some(0.32)), (0.011, Some(0.352)), (0.012, Some(0.384))]))
                .unwrap();
        assert!((combined.saturation_throughput - 0.011).abs() < 1e-15);
        // s = 0.001, t(0.975, 2) = 4.302652730.
        let half = combined.saturation_throughput_ci95.unwrap();
        assert!((half - 4.302652730 * 0.001 / 3f64.sqrt()).abs() < 1e-12, "{half}");
        let flits = combined.flit_saturation_throughput.unwrap();
        assert!((flits - 0.352).abs() < 1e-12);
        let flit_half = combined.flit_saturation_throughput_ci95.unwrap();
        assert!((flit_half - 4.302652730 * 0.032 / 3f64.sqrt()).abs() < 1e-12, "{flit_half}");
        assert_eq!((combined.replications, combined.degrees_of_freedom), (3, Some(2)));
        assert_eq!(combined.tolerance, TOLERANCE);
        assert_eq!(combined.searches.len(), 3);
    }

    #[test]
    fn one_search_has_no_interval_and_none_is_an_error() {
        let combined = combine(searches(&[(0.02, Some(0.64))])).unwrap();
        assert_eq!(combined.saturation_throughput, 0.02);
        assert_eq!(combined.saturation_throughput_ci95, None);
        assert_eq!(combined.flit_saturation_throughput_ci95, None);
        assert_eq!(combined.degrees_of_freedom, None);
        assert!(combine(Vec::new()).is_err());
        // Equal results: a zero-width interval, not NaN.
        let same = combine(searches(&[(0.02, None), (0.02, None)])).unwrap();
        assert_eq!(same.saturation_throughput_ci95, Some(0.0));
        assert_eq!(same.flit_saturation_throughput, None, "a search without flits");
    }

    /// Each replicated search is the single search of its seed, and the mean lies within
    /// them; the whole is reproducible bit for bit.
    #[test]
    fn replicated_searches_are_the_single_searches_of_their_seeds() {
        let scenario = Scenario {
            routing: Routing::DimensionOrder,
            virtual_channels: 2,
            message_length: 8,
            ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
        };
        let options = SimOptions { warmup_cycles: 500, cycles: 2_000, ..SimOptions::default() };
        let seeds = [11, 12];
        let combined = replicate(&scenario, &options, &seeds, None).unwrap();
        for (search, seed) in combined.searches.iter().zip(seeds) {
            assert_eq!(search.seed, seed);
            assert_eq!(
                search.found,
                saturation_throughput(&scenario, &options, seed, None).unwrap()
            );
        }
        let values: Vec<f64> =
            combined.searches.iter().map(|s| s.found.saturation_throughput).collect();
        let (low, high) = (values[0].min(values[1]), values[0].max(values[1]));
        assert!((low..=high).contains(&combined.saturation_throughput), "{combined:?}");
        assert!(combined.saturation_throughput_ci95.is_some_and(f64::is_finite));
        assert_eq!(combined, replicate(&scenario, &options, &seeds, None).unwrap());
    }
}
