//! The simulator's saturation throughput: the highest accepted rate, found in throughput mode.
//!
//! The counterpart of `model::saturation_rate`. Below saturation the accepted rate follows the
//! offered one; past it the network accepts what it can and the throughput-mode status is
//! `saturated`. The search:
//!
//! 1. simulates at the injection bound, `min(V, e) / M` messages/node/cycle (`e` flits a node
//!    can eject per cycle: 1 with `single` ejection, its number of input links with
//!    `unlimited`; no more than a Bernoulli or on/off source can offer), where every source
//!    queue stays full: the accepted rate there is the network's throughput under overload;
//! 2. bisects the offered load between the largest rate found stable (`ok`) and the smallest
//!    found saturated, starting with the overload throughput itself, until the bracket is
//!    narrower than [`TOLERANCE`] of its upper end.
//!
//! The saturation throughput is the highest accepted rate over every point simulated (a
//! network whose throughput drops past saturation has its peak near the knee, not under full
//! overload; one that takes more when every source always has a message waiting has it under
//! full overload); the bracket says where the knee lies, the first load whose accepted
//! rate falls short of the offered one. A curve that peaked strictly between the knee and the
//! injection bound would be sampled only at the bisection's points there. Every point uses the same seed (common
//! random numbers), so the search is reproducible bit for bit, and each point is an ordinary
//! throughput-mode simulation with the caller's window.

use super::topology::Geometry;
use super::{Measure, Progress, SimError, SimOptions, simulate};
use crate::measurement::Status;
use crate::scenario::{Ejection, Scenario};

/// Relative width of the final bracket around the knee.
pub const TOLERANCE: f64 = 0.01;

/// At most this many points are simulated (the bracket then is at most 2^-14 of the bound).
const MAX_POINTS: usize = 16;

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
    let mut points: Vec<Point> = Vec::new();
    let planned = PROGRESS_PER_POINT * MAX_POINTS as u64;
    let run = |rate: f64, points: &mut Vec<Point>| -> Result<Status, SimError> {
        let before = PROGRESS_PER_POINT * points.len() as u64;
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
        points.push(Point {
            rate,
            status: m.status,
            throughput: m.throughput,
            flit_throughput: m.intermediate("flit_throughput"),
            source_drops: m.intermediate("source_drops"),
        });
        Ok(m.status)
    };
    let (mut lo, mut hi) = (0.0_f64, None::<f64>);
    let status = run(bound, &mut points)?;
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
        let status = run(rate, &mut points)?;
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
        points,
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
