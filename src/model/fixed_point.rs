//! The one scalar fixed-point solver used by every iterative model (errata, "Common" section).
//!
//! The models reduce to `x = F(x)` for a scalar `x` (`P_V` for scouting and circuit switching,
//! the channel service time for Nbc and broadcast) with `F` monotone non-decreasing. From the
//! zero-load state the plain iteration `x_{n+1} = F(x_n)` rises to the smallest (stable) fixed
//! point, so no damping is used. When the iteration is slow (contraction ratio `r > 0.5`) an
//! Aitken step `x_A = x_n + d_n / (1 - r)` is tried; it is kept only if `F(x_A) - x_A` has the
//! sign of the current step (for a rising iteration: `F(x_A) >= x_A`, so `x_A` is still below
//! the fixed point). Otherwise the bracket `[x_n, x_A]` is bisected: to tolerance once a feasible
//! point on the far side of the fixed point is found, else only until the first midpoint that
//! keeps the sign, from which the iteration resumes. Convergence needs both the relative step
//! and the estimated remaining error `|d| r / (1 - r)` to be at most [`REL_TOL`] (a step that
//! changes sign, which a monotone map does only at the rounding-noise floor, also ends the
//! iteration); the solver gives up after [`MAX_EVALUATIONS`] map evaluations.
//!
//! Beyond saturation the stable fixed point has vanished in a saddle-node and the iterates crawl
//! through its "ghost" with steps that first shrink and then grow slowly (`r >= 1`). While the
//! steps grow, the solver tries a jump of `g` steps (`g = 4, 8, 16, ...`, doubled after every
//! kept jump) under the same keep-if-the-sign-holds rule as the Aitken step. This only shortens
//! the way to the infeasible region (a decision beyond the errata, see `docs/models.md`): just
//! above the saturation rate it cuts a saturated solve from thousands of evaluations to tens.
//!
//! The map reports points where the model is undefined (utilisation >= 1, `P_V + theta >= 1`)
//! as [`Infeasible`]. If the rising iteration reaches such a point, no fixed point lies below it
//! (the stable fixed point has disappeared in a saddle-node, or utilisation reached 1): the
//! caller reports saturation.

/// Relative tolerance of the fixed point (errata "Common": 1e-10).
///
/// Aitken steps stay enabled down to steps of `10 NOISE_FLOOR` relative (above rounding noise),
/// so the estimated-error test `|d| r / (1 - r) <= REL_TOL` is reachable quickly even when `r`
/// is close to 1 just below saturation.
pub(crate) const REL_TOL: f64 = 1e-10;

/// Relative step size treated as rounding noise of the map.
const NOISE_FLOOR: f64 = 1e-14;

/// Cap on map evaluations (errata "Common": 200000).
pub(crate) const MAX_EVALUATIONS: u32 = 200_000;

/// Why the map is undefined at a point: a short description and the offending value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Infeasible {
    /// What went out of range, e.g. "channel utilisation lambda_c S".
    pub(crate) what: &'static str,
    /// The value that is out of range.
    pub(crate) value: f64,
}

/// How a fixed-point solve ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Converged to `x` after `evaluations` map evaluations.
    Converged { x: f64, evaluations: u32 },
    /// The iteration reached a point where the map is undefined.
    Infeasible { at: f64, reason: Infeasible, evaluations: u32 },
    /// No convergence within [`MAX_EVALUATIONS`].
    NoConvergence { x: f64, evaluations: u32 },
}

impl Outcome {
    /// Why an outcome other than convergence means saturation, as a sentence; `variable` names
    /// `x` (e.g. `P_V`).
    pub(crate) fn saturation_detail(self, rate: f64, variable: &str) -> String {
        match self {
            Outcome::Infeasible { at, reason, evaluations } => format!(
                "no stable fixed point of {variable} at rate {rate} (above the model's \
                 saturation rate); the iteration ran away, to {variable} = {at:.6} after \
                 {evaluations} evaluations, where {} would be {:.6}",
                reason.what, reason.value
            ),
            Outcome::NoConvergence { x, evaluations } => format!(
                "the fixed-point iteration did not converge at rate {rate} after {evaluations} \
                 evaluations (last {variable} = {x:.6})"
            ),
            Outcome::Converged { x, .. } => format!(
                "the fixed point {variable} = {x} is not a stable operating point at rate {rate}"
            ),
        }
    }
}

/// Counts map evaluations and turns non-finite values into [`Infeasible`].
struct Counted<F> {
    f: F,
    evaluations: u32,
}

impl<F: FnMut(f64) -> Result<f64, Infeasible>> Counted<F> {
    fn eval(&mut self, x: f64) -> Result<f64, Infeasible> {
        self.evaluations += 1;
        let y = (self.f)(x)?;
        if y.is_finite() { Ok(y) } else { Err(Infeasible { what: "map value", value: y }) }
    }
}

/// Does `F(x) - x` point the same way as `direction` (the sign of the current step)?
fn same_side(x: f64, fx: f64, direction: f64) -> bool {
    let d = fx - x;
    d == 0.0 || (d > 0.0) == (direction > 0.0)
}

/// Solves `x = f(x)` from `x0` (see the module documentation).
pub(crate) fn solve(x0: f64, f: impl FnMut(f64) -> Result<f64, Infeasible>) -> Outcome {
    let mut map = Counted { f, evaluations: 0 };
    let mut x = x0;
    let mut fx = match map.eval(x) {
        Ok(v) => v,
        Err(reason) => return Outcome::Infeasible { at: x, reason, evaluations: map.evaluations },
    };
    let mut prev_step: Option<f64> = None;
    let mut growth = 2.0;
    loop {
        let d = fx - x;
        let scale = fx.abs().max(f64::MIN_POSITIVE);
        if d == 0.0 {
            return Outcome::Converged { x: fx, evaluations: map.evaluations };
        }
        let ratio = prev_step.map(|pd| d / pd);
        if let Some(r) = ratio
            && d.abs() <= REL_TOL * scale
        {
            // (a) Contracting: the remaining error is about |d| r / (1 - r).
            // (b) A sign change of the step: the map is monotone, so this happens only at the
            //     rounding-noise floor, with the fixed point between the last two iterates.
            // (c) A step at the rounding floor that no longer shrinks.
            let contracting = (0.0..1.0).contains(&r) && d.abs() * r / (1.0 - r) <= REL_TOL * scale;
            let noise = r < 0.0 || (r >= 1.0 && d.abs() <= NOISE_FLOOR * scale);
            if contracting || noise {
                return Outcome::Converged { x: fx, evaluations: map.evaluations };
            }
        }
        if map.evaluations >= MAX_EVALUATIONS {
            return Outcome::NoConvergence { x: fx, evaluations: map.evaluations };
        }
        // Extrapolation when the iteration is slow and not yet at noise level: Aitken while the
        // steps shrink slowly (0.5 < r < 1); while they grow (r >= 1: past the bottleneck
        // left by a vanished fixed point) a jump of `growth` steps, doubled after each kept
        // jump. Either is kept only if F(x_e) - x_e keeps the sign of the step.
        let extrapolated = match ratio {
            Some(r) if d.abs() > 10.0 * NOISE_FLOOR * scale && r > 0.5 && r < 1.0 => {
                growth = 2.0;
                Some(x + d / (1.0 - r))
            }
            Some(r) if d.abs() > 10.0 * NOISE_FLOOR * scale && r >= 1.0 => {
                growth *= 2.0;
                Some(x + growth * d)
            }
            _ => None,
        };
        if let Some(x_a) = extrapolated {
            match map.eval(x_a) {
                Ok(f_a) if same_side(x_a, f_a, d) => {
                    x = x_a;
                    fx = f_a;
                    prev_step = None;
                    continue;
                }
                rejected => {
                    // Bisect [x, x_A]; `lo` keeps F(lo) - lo on the side of `d`. While x_A side
                    // is only known to be infeasible, stop at the first same-side midpoint and
                    // resume iterating from it; once a feasible point on the other side is
                    // found, the fixed point is bracketed and the bisection runs to tolerance.
                    let (mut lo, mut f_lo, mut hi) = (x, fx, x_a);
                    let mut crossed = rejected.is_ok();
                    for _ in 0..200 {
                        if (hi - lo).abs() <= REL_TOL * hi.abs().max(f64::MIN_POSITIVE)
                            || map.evaluations >= MAX_EVALUATIONS
                        {
                            break;
                        }
                        let mid = 0.5 * (lo + hi);
                        match map.eval(mid) {
                            Ok(f_mid) if same_side(mid, f_mid, d) => {
                                lo = mid;
                                f_lo = f_mid;
                                if !crossed {
                                    break;
                                }
                            }
                            Ok(_) => {
                                crossed = true;
                                hi = mid;
                            }
                            Err(_) => hi = mid,
                        }
                    }
                    if crossed && (hi - lo).abs() <= REL_TOL * hi.abs().max(f64::MIN_POSITIVE) {
                        return Outcome::Converged { x: f_lo, evaluations: map.evaluations };
                    }
                    x = lo;
                    fx = f_lo;
                    prev_step = None;
                    growth = 2.0;
                    continue;
                }
            }
        }
        // Plain step.
        x = fx;
        fx = match map.eval(x) {
            Ok(v) => v,
            Err(reason) => {
                return Outcome::Infeasible { at: x, reason, evaluations: map.evaluations };
            }
        };
        prev_step = Some(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converged(outcome: Outcome) -> f64 {
        match outcome {
            Outcome::Converged { x, .. } => x,
            other => panic!("expected convergence, got {other:?}"),
        }
    }

    #[test]
    fn linear_map_converges_to_exact_root() {
        // F(x) = 0.9 x + 1 has x* = 10; the ratio is 0.9, so Aitken lands on it at once.
        let x = converged(solve(0.0, |x| Ok(0.9 * x + 1.0)));
        assert!((x - 10.0).abs() <= 1e-9);
    }

    #[test]
    fn slow_nonlinear_map_converges_from_both_sides() {
        // F(x) = 0.25 + x^2 - 0.01 has stable fixed point x* = 0.5 - sqrt(0.01) = 0.4
        // (x^2 - x + 0.24 = 0 -> x = 0.4 or 0.6).
        let map = |x: f64| Ok(0.24 + x * x);
        for x0 in [0.0, 0.2, 0.408, 0.55] {
            let x = converged(solve(x0, map));
            assert!((x - 0.4).abs() <= 1e-9, "from {x0}: {x}");
        }
    }

    #[test]
    fn rounding_noise_two_cycle_ends_the_iteration() {
        // A strong contraction towards 0.16 whose evaluations carry alternating rounding noise:
        // the steps soon change sign at the noise floor, which must end the iteration.
        let mut flip = 1.0;
        let outcome = solve(0.0, move |x: f64| {
            flip = -flip;
            Ok(0.16 + 1e-3 * (x - 0.16) + flip * 6e-17)
        });
        match outcome {
            Outcome::Converged { x, evaluations } => {
                assert!((x - 0.16).abs() < 1e-15);
                assert!(evaluations < 100, "{evaluations}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn saddle_node_beyond_bifurcation_is_infeasible() {
        // F(x) = 0.26 + x^2 has no fixed point; the map is undefined above 1.
        let outcome = solve(0.0, |x: f64| {
            if x >= 1.0 { Err(Infeasible { what: "x", value: x }) } else { Ok(0.26 + x * x) }
        });
        assert!(matches!(outcome, Outcome::Infeasible { .. }), "{outcome:?}");
    }

    #[test]
    fn near_bifurcation_still_converges_fast() {
        // F(x) = 0.25 - 1e-8 + x^2: x* = 0.5 - 1e-4, contraction ratio 1 - 2e-4.
        let outcome = solve(0.0, |x: f64| Ok(0.25 - 1e-8 + x * x));
        match outcome {
            Outcome::Converged { x, evaluations } => {
                assert!((x - (0.5 - 1e-4)).abs() <= 1e-9, "{x}");
                assert!(evaluations < 2000, "{evaluations}");
            }
            other => panic!("{other:?}"),
        }
    }
}
