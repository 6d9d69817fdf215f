//! The axis ranges of a panel ([`ranges`]): the data's extent with a little room, a latency
//! axis capped at [`ZERO_LOAD_FACTOR`] times the zero-load latency, and the spec's limits
//! applied; one y range for all panels with `shared_y` ([`share_y`]).

use super::ZERO_LOAD_FACTOR;
use super::data::Panel;
use crate::report::columns;
use crate::spec::report::{FigureSpec, MIN_SPAN, span_is_meaningful};

/// Axis ranges of one panel.
#[derive(Clone, Debug)]
pub(super) struct Ranges {
    pub(super) x: (f64, f64),
    pub(super) y: (f64, f64),
    /// Points above this y are drawn on the top edge as beyond the axis.
    pub(super) cap: f64,
    /// Whether the latency cap or `ylim` cut off data, or a simulation saturated or deadlocked.
    pub(super) clipped: bool,
}

impl Ranges {
    pub(super) fn x_contains(&self, x: f64) -> bool {
        x >= self.x.0 * (1.0 - 1e-12) && x <= self.x.1 * (1.0 + 1e-12)
    }
}

/// The automatic ranges of a panel with the spec's limits applied.
pub(super) fn ranges(panel: &Panel, spec: &FigureSpec) -> Ranges {
    let [x_low, x_high] = spec.xlim.as_ref().map_or([None, None], |limits| limits.value);
    let [y_low, y_high] = spec.ylim.as_ref().map_or([None, None], |limits| limits.value);
    let usable_x = |x: &f64| x.is_finite() && (!spec.log_x || *x > 0.0);
    let xs: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|series| {
            series
                .model
                .iter()
                .map(|point| point.0)
                .chain(series.simulation.iter().map(|point| point.0))
                .chain(series.simulation_saturated.iter().copied())
                .chain(series.simulation_deadlocked.iter().copied())
                .chain(series.simulation_imprecise.iter().map(|point| point.0))
        })
        .filter(usable_x)
        .collect();
    let saturations = panel.series.iter().filter_map(|series| series.saturation_x).filter(usable_x);
    // A saturation point far beyond the data would squash the curves; it is then left out.
    let (x_min, x_max) = match min_max(xs.iter().copied()) {
        Some((x_min, x_max)) => {
            let limit = x_max + 0.25 * x_max.abs();
            let reachable = saturations.filter(|x| *x <= limit).fold(x_max, f64::max);
            (x_min, reachable)
        }
        None => min_max(saturations).unwrap_or((if spec.log_x { 0.1 } else { 0.0 }, 1.0)),
    };
    let (mut x_lo, mut x_hi) = if spec.log_x {
        (x_min / 1.15, x_max * 1.15)
    } else {
        let lo = if x_min >= 0.0 { 0.0 } else { x_min };
        (lo, x_max + 0.04 * (x_max - lo))
    };
    if let Some(low) = x_low {
        x_lo = low;
    }
    if let Some(high) = x_high {
        x_hi = high;
    }
    let (x_lo, x_hi) = drawable((x_lo, x_hi), spec.log_x, x_high.is_some() && x_low.is_none());
    let in_x = |x: f64| x >= x_lo * (1.0 - 1e-12) && x <= x_hi * (1.0 + 1e-12);

    let usable_y = |y: &f64| y.is_finite() && (!spec.log_y || *y > 0.0);
    let model_ys: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|series| series.model.iter().filter(|p| in_x(p.0)).map(|point| point.1))
        .filter(usable_y)
        .collect();
    let sim_points: Vec<(f64, Option<f64>)> = panel
        .series
        .iter()
        .flat_map(|series| {
            series.simulation.iter().filter(|p| in_x(p.0)).map(|&(_, y, ci)| (y, ci)).chain(
                series.simulation_imprecise.iter().filter(|p| in_x(p.0)).map(|p| (p.1, None)),
            )
        })
        .filter(|(y, _)| usable_y(y))
        .collect();
    let all_ys: Vec<f64> =
        model_ys.iter().copied().chain(sim_points.iter().map(|point| point.0)).collect();
    let (y_min, y_max) =
        min_max(all_ys.iter().copied()).unwrap_or(if spec.log_y { (0.1, 1.0) } else { (0.0, 1.0) });
    let mut cap = y_max;
    if columns::is_latency(&spec.y) {
        // Zero-load latency: the lowest-load point of each series (model preferred).
        let zero_load = panel
            .series
            .iter()
            .filter_map(|series| {
                series.model.first().map(|point| point.1).or(series.simulation.first().map(|p| p.1))
            })
            .filter(|y| *y > 0.0)
            .fold(f64::INFINITY, f64::min);
        if zero_load.is_finite() {
            let sim_max = sim_points.iter().map(|point| point.0).fold(0.0, f64::max);
            cap = cap.min((ZERO_LOAD_FACTOR * zero_load).max(sim_max));
        }
    }
    // Confidence bars may widen the range a little; longer ones are clipped and marked.
    let bar_top = sim_points
        .iter()
        .filter(|(y, _)| *y <= cap)
        .filter_map(|(y, ci)| ci.map(|ci| y + ci))
        .fold(f64::NEG_INFINITY, f64::max);
    let widened = if spec.log_y { cap * 1.15 } else { cap + 0.15 * (cap - y_min.min(0.0)).abs() };
    if bar_top.is_finite() && bar_top > cap {
        cap = bar_top.min(widened);
    }
    let (mut lo, mut hi) = if spec.log_y {
        let lo = y_min / 1.25;
        let hi = if cap > lo { cap * 1.25 } else { lo * 10.0 };
        (lo, hi)
    } else {
        let below = (y_min - 0.05 * (cap - y_min)).max(if y_min >= 0.0 { 0.0 } else { f64::MIN });
        let from_zero = match spec.y_from_zero {
            Some(from_zero) => from_zero,
            None => y_min <= cap / 3.0,
        };
        let lo = if y_min < 0.0 {
            y_min - 0.05 * (cap - y_min)
        } else if from_zero {
            0.0
        } else {
            below
        };
        let lo = if cap > lo {
            lo
        } else if cap > 0.0 {
            0.0
        } else {
            cap - 1.0
        };
        (lo, cap + 0.05 * (cap - lo))
    };
    if let Some(low) = y_low {
        lo = low;
    }
    if let Some(high) = y_high {
        hi = high;
        cap = high;
    } else if cap > hi {
        cap = hi;
    }
    let (lo, hi) = match drawable((lo, hi), spec.log_y, y_high.is_some() && y_low.is_none()) {
        (new_lo, new_hi) if (new_lo, new_hi) != (lo, hi) => {
            cap = new_hi;
            (new_lo, new_hi)
        }
        unchanged => unchanged,
    };
    let clipped = all_ys.iter().any(|y| *y > cap * (1.0 + 1e-9))
        || panel.series.iter().any(|series| {
            series.simulation_saturated.iter().any(|x| in_x(*x))
                || series.simulation_deadlocked.iter().any(|x| in_x(*x))
        });
    Ranges { x: (x_lo, x_hi), y: (lo, hi), cap, clipped }
}

/// One y range for every panel (`shared_y`): the union of the panels' ranges.
pub(super) fn share_y(ranges: &mut [Ranges], spec: &FigureSpec) {
    let lo = ranges.iter().map(|r| r.y.0).fold(f64::INFINITY, f64::min);
    let hi = ranges.iter().map(|r| r.y.1).fold(f64::NEG_INFINITY, f64::max);
    let cap = ranges.iter().map(|r| r.cap).fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return;
    }
    let cap = if spec.ylim.as_ref().and_then(|l| l.value[1]).is_some() { hi } else { cap };
    for range in ranges {
        range.y = (lo, hi);
        range.cap = cap;
    }
}

/// `(lo, hi)` as an axis can draw it (`span_is_meaningful`): unchanged when it is, else ends
/// brought into range and the span widened to 1 (a decade on a logarithmic axis), or to the
/// ends' magnitude where 1 is too little beside it, from the low end, or down from the high end
/// when only that one is the spec's. An empty or subnormal span (`ylim: [0, 1e-323]`, a single
/// value of 5e-324) would otherwise leave no room between ticks.
fn drawable((lo, hi): (f64, f64), log: bool, keep_high: bool) -> (f64, f64) {
    if span_is_meaningful(lo, hi, log) {
        return (lo, hi);
    }
    // Ends far enough inside the finite range that a widened span stays finite.
    let bound = f64::MAX / 16.0;
    if log {
        let positive = |value: f64, fallback: f64| {
            if value.is_nan() || value <= 0.0 { fallback } else { value.clamp(MIN_SPAN, bound) }
        };
        let (lo, hi) = (positive(lo, 0.1), positive(hi, 1.0));
        if span_is_meaningful(lo, hi, true) {
            (lo, hi)
        } else if keep_high {
            (hi / 10.0, hi)
        } else {
            (lo, lo * 10.0)
        }
    } else {
        let finite = |value: f64| if value.is_nan() { 0.0 } else { value.clamp(-bound, bound) };
        let (lo, hi) = (finite(lo), finite(hi));
        if span_is_meaningful(lo, hi, false) {
            return (lo, hi);
        }
        let width = if keep_high {
            if span_is_meaningful(hi - 1.0, hi, false) { 1.0 } else { hi.abs() }
        } else if span_is_meaningful(lo, lo + 1.0, false) {
            1.0
        } else {
            lo.abs()
        };
        if keep_high { (hi - width, hi) } else { (lo, lo + width) }
    }
}

fn min_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|value| value.is_finite()).fold(None, |acc, value| match acc {
        None => Some((value, value)),
        Some((lo, hi)) => Some((lo.min(value), hi.max(value))),
    })
}
