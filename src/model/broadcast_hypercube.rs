//! Unicast-based broadcast in the wormhole-routed hypercube with Duato's adaptive routing:
//! Shahrabi, Ould-Khaoua and Mackenzie, "Unicast-based broadcast: an analysis for the hypercube
//! with adaptive routing", ACM SAC 2001.
//!
//! A generated message is a broadcast with probability `beta` (sent down a spanning binomial
//! tree, one hop per step, `n` steps) and a unicast otherwise. `V` virtual channels: `V - 1`
//! adaptive and one deterministic (Duato). The model is a fixed point in the mean channel
//! service time `S` (eq. 17, errata "Common"):
//!
//! - `p_i = C(n,i)/(2^n - 1)`, `d = sum i p_i = (n/2) N/(N-1)` (eq. 5-6, E-BC-1);
//! - `lambda_sr = (2^{n-1} - 1) beta lambda_g` (eq. 3); `P_ri = 2^{n-i-1}/(2^n - 1)`,
//!   `omega = sum_{i=0}^{n-1} i P_ri` (eq. 9-10, E-BC-1);
//! - `lambda_cu = (1-beta) lambda_g d/n`, `lambda_cb = beta lambda_g`,
//!   `lambda_cr = (omega/n) lambda_sr` (eq. 7, 8, 11, E-BC-5), `lambda_c` their sum (eq. 4);
//! - `P_v` from Dally's chain with `lambda_c` and `S` over all `V` VCs (eq. 29-30, E-BC-8);
//!   `P_a = P_{V-1}/C(V, V-1) + P_V`, `P_d = P_V` (eq. 23-24);
//! - `W_c` the M/G/1 wait with rate `lambda_c`, service `S` and variance `(S - M)^2` (eq. 14-19,
//!   E-BC-9);
//! - `S_b = M + P_V W_c` (eq. 12-13, E-BC-2, E-BC-3); `S_ui = M + i + sum_{j=1}^{i} P_a^{i-j}
//!   P_d W_c` for `1 <= i <= n` (eq. 21-22, 25, E-BC-4, E-BC-6); `S_u = sum p_i S_ui` (eq. 20);
//! - `S = ((lambda_cb + lambda_cr) S_b + lambda_cu S_u) / lambda_c` (eq. 17, weights per unit
//!   `lambda_g`, E-BC-7);
//! - source: `lambda_s = lambda_su/n + lambda_sb + (omega/n) lambda_sr` (eq. 26), `S_s` weighted
//!   by `lambda_sb + lambda_sr` and `lambda_su` (eq. 27, E-BC-7), `W_s` the M/G/1 wait with
//!   variance `(S_s - M)^2` (eq. 28);
//! - `L_b = (S_b + W_s) V-bar` (eq. 2, V-bar eq. 31) and the broadcast latency
//!   `n (L_b + Delta)` (eq. 1, E-BC-10: Delta = 1 in the paper).
//!
//! The unicast latency, which the paper says "can easily be computed", is reported as
//! `(S_u + W_s) V-bar` (our decision, `docs/models.md`). Zero load gives `n (M + Delta)` for
//! broadcasts and `M + d` for unicasts.

use super::fixed_point::{self, Infeasible, Outcome};
use super::queueing::{mg1_wait, vc_distribution};
use super::{
    Evaluator, ModelError, ModelInfo, ModelName, ParamInfo, ok_measurement, routing_error,
    switching_error,
};
use crate::measurement::Measurement;
use crate::scenario::{Ejection, Routing, Scenario, Switching, Topology};

/// Largest hypercube dimension accepted.
const MAX_DIMENSIONS: u32 = 30;

/// Largest number of virtual channels accepted.
const MAX_VCS: u32 = 1024;

/// `runner models` entry.
pub(crate) const INFO: ModelInfo = ModelInfo {
    name: ModelName::BroadcastHypercube,
    paper: "A. Shahrabi, M. Ould-Khaoua, L. M. Mackenzie, \
            Unicast-based broadcast: an analysis for the hypercube with adaptive routing, \
            ACM SAC 2001",
    scenario: "binary n-cube, wormhole switching, Duato routing (V-1 adaptive + 1 deterministic \
               VC), a fraction beta of messages broadcast down a spanning binomial tree",
    ejection: Ejection::Unlimited,
    ejection_quote: "messages are transferred to the local PE as soon as they arrive at their destinations",
    params: &[
        ParamInfo { key: "dimensions", default: "6", unit: "", doc: "n, 1..30 (paper: 6, 7, 8)" },
        ParamInfo {
            key: "virtual_channels",
            default: "2",
            unit: "",
            doc: "V >= 2: V-1 adaptive and one deterministic (paper: 2, 4)",
        },
        ParamInfo {
            key: "message_length",
            default: "32",
            unit: "flits",
            doc: "M, fixed (paper: 32, 64, 128)",
        },
        ParamInfo {
            key: "broadcast_fraction",
            default: "0.01",
            unit: "",
            doc: "beta, 0 <= beta <= 1 (paper: 0.005, 0.01, 0.02)",
        },
        ParamInfo {
            key: "startup_latency",
            default: "1",
            unit: "cycles",
            doc: "Delta >= 0 per broadcast step (paper: 1)",
        },
        ParamInfo {
            key: "escape_channels",
            default: "1",
            unit: "",
            doc: "unset or 1: Duato's single deterministic VC",
        },
        ParamInfo { key: "routing", default: "duato", unit: "", doc: "duato only" },
        ParamInfo { key: "switching", default: "wormhole", unit: "", doc: "wormhole only" },
    ],
};

const NAME: &str = "broadcast_hypercube";

/// `n` of a scenario the paper covers.
fn parameters(scenario: &Scenario) -> Result<u32, ModelError> {
    let Topology::Hypercube { dimensions } = scenario.topology else {
        return Err(ModelError(format!(
            "{NAME}: the paper models the binary hypercube only, got topology `{}`",
            scenario.topology.kind()
        )));
    };
    if !(1..=MAX_DIMENSIONS).contains(&dimensions) {
        return Err(ModelError(format!(
            "{NAME}: dimensions n must be between 1 and {MAX_DIMENSIONS}, got {dimensions}"
        )));
    }
    if scenario.switching != Switching::Wormhole {
        return Err(switching_error(NAME, scenario.switching, "wormhole"));
    }
    if scenario.routing != Routing::Duato {
        return Err(routing_error(NAME, scenario.routing, "Duato's adaptive routing (`duato`)"));
    }
    let v = scenario.virtual_channels;
    if !(2..=MAX_VCS).contains(&v) {
        return Err(ModelError(format!(
            "{NAME}: Duato's routing needs V >= 2 virtual channels (V - 1 adaptive plus one \
             deterministic) and the model accepts at most {MAX_VCS}, got V = {v}"
        )));
    }
    if let Some(e) = scenario.escape_channels
        && e != 1
    {
        return Err(ModelError(format!(
            "{NAME}: the paper's Duato routing has exactly one deterministic (escape) virtual \
             channel, so escape_channels must be unset or 1, got {e}"
        )));
    }
    let beta = scenario.broadcast_fraction;
    if !(0.0..=1.0).contains(&beta) {
        return Err(ModelError(format!(
            "{NAME}: broadcast_fraction beta is a probability and must satisfy 0 <= beta <= 1, \
             got {beta}"
        )));
    }
    let delta = scenario.startup_latency;
    if !(delta.is_finite() && delta >= 0.0) {
        return Err(ModelError(format!(
            "{NAME}: startup_latency Delta must be a finite number of cycles >= 0, got {delta}"
        )));
    }
    Ok(dimensions)
}

/// Applicability and parameter check for `broadcast_hypercube`.
pub(crate) fn check(scenario: &Scenario) -> Result<(), ModelError> {
    parameters(scenario).map(drop)
}

/// The precomputed, load-independent part of the model.
#[derive(Clone, Debug)]
pub(crate) struct Broadcast {
    /// `n`.
    n: usize,
    /// `V`.
    vcs: usize,
    /// `M`, `Delta`.
    m: f64,
    delta: f64,
    /// `p_i`, `i = 0..=n` (`p_0 = 0`), eq. (5).
    p: Vec<f64>,
    /// `d` (eq. 6) and `omega` (eq. 10).
    mean_distance: f64,
    omega: f64,
    /// Channel rates per unit `lambda_g`: unicast, broadcast, replicated (eq. 7, 8, 11).
    cu: f64,
    cb: f64,
    cr: f64,
    /// Source rate per unit `lambda_g` (eq. 26) and the eq. (27) weight of `S_b`.
    source_rate: f64,
    source_weight_b: f64,
}

/// Everything the model derives from one value of `S` at one rate.
#[derive(Clone, Copy, Debug)]
struct State {
    lambda_c: f64,
    w_c: f64,
    p_v: f64,
    p_a: f64,
    multiplexing: f64,
    s_b: f64,
    s_u: f64,
    /// The new `S` (eq. 17).
    s: f64,
}

/// A converged point.
#[derive(Clone, Copy, Debug)]
struct Solved {
    /// The fixed point `S`.
    s: f64,
    iterations: u32,
    st: State,
    s_s: f64,
    w_s: f64,
}

impl Broadcast {
    /// Precomputes the load-independent coefficients.
    pub(crate) fn new(scenario: &Scenario) -> Result<Broadcast, ModelError> {
        let n = parameters(scenario)? as usize;
        let nf = n as f64;
        let total = 2f64.powi(n as i32); // N
        let others = total - 1.0;
        let mut p = vec![0.0; n + 1];
        let mut binom = 1.0; // C(n, i)
        for (i, pi) in p.iter_mut().enumerate().skip(1) {
            binom = binom * (n - i + 1) as f64 / i as f64;
            *pi = binom / others;
        }
        let mean_distance = (nf / 2.0) * total / others;
        let omega = (0..n).map(|i| i as f64 * 2f64.powi((n - i - 1) as i32) / others).sum();
        let beta = scenario.broadcast_fraction;
        let replicated = 2f64.powi(n as i32 - 1) - 1.0; // lambda_sr per unit beta lambda_g
        let cu = (1.0 - beta) * mean_distance / nf;
        let cb = beta;
        let cr = omega / nf * replicated * beta;
        let (su, sb, sr) = (1.0 - beta, beta, replicated * beta);
        Ok(Broadcast {
            n,
            vcs: scenario.virtual_channels as usize,
            m: f64::from(scenario.message_length),
            delta: scenario.startup_latency,
            p,
            mean_distance,
            omega,
            cu,
            cb,
            cr,
            source_rate: su / nf + sb + omega / nf * sr,
            source_weight_b: (sb + sr) / (su + sb + sr),
        })
    }

    /// Weight of `S_b` in eq. (17).
    fn weight_b(&self) -> f64 {
        (self.cb + self.cr) / (self.cu + self.cb + self.cr)
    }

    /// `S` at zero load: `w_b M + w_u (M + d)`.
    fn zero_load_service(&self) -> f64 {
        let wb = self.weight_b();
        wb * self.m + (1.0 - wb) * (self.m + self.mean_distance)
    }

    /// Evaluates the model at channel service time `s`; `p` is scratch of length `V + 1`.
    fn state(&self, rate: f64, s: f64, p: &mut [f64]) -> Result<State, Infeasible> {
        let lambda_c = rate * (self.cu + self.cb + self.cr);
        let infeasible =
            Infeasible { what: "channel utilisation lambda_c S (eq. 15, 29)", value: lambda_c * s };
        let chain = vc_distribution(lambda_c, s, p).ok_or(infeasible)?;
        let w_c = mg1_wait(lambda_c, s, self.m).ok_or(infeasible)?;
        let v = self.vcs;
        let p_v = p[v];
        let p_a = p[v - 1] / v as f64 + p_v;
        let s_b = self.m + p_v * w_c;
        // S_ui = M + i + P_d W_c (1 + P_a + ... + P_a^{i-1}).
        let (mut s_u, mut geometric, mut power) = (0.0, 0.0, 1.0);
        for i in 1..=self.n {
            geometric += power;
            power *= p_a;
            s_u += self.p[i] * (self.m + i as f64 + p_v * w_c * geometric);
        }
        let wb = self.weight_b();
        Ok(State {
            lambda_c,
            w_c,
            p_v,
            p_a,
            multiplexing: chain.multiplexing,
            s_b,
            s_u,
            s: wb * s_b + (1.0 - wb) * s_u,
        })
    }

    /// Solves the fixed point in `S` from `start` (zero load when `None`).
    fn fixed_point(&self, rate: f64, start: Option<f64>, p: &mut [f64]) -> Outcome {
        fixed_point::solve(start.unwrap_or_else(|| self.zero_load_service()), |s| {
            self.state(rate, s, p).map(|st| st.s)
        })
    }

    /// Solves at `rate` from `start`; the saturated measurement when there is no stable point.
    fn evaluate(&self, rate: f64, start: Option<f64>) -> Result<Solved, String> {
        let mut p = vec![0.0; self.vcs + 1];
        let (s, iterations) = match self.fixed_point(rate, start, &mut p) {
            Outcome::Converged { x, evaluations } => (x, evaluations),
            other => return Err(other.saturation_detail(rate, "S")),
        };
        let st = self.state(rate, s, &mut p).map_err(|e| {
            format!("{} = {:.6} >= 1 at the fixed point, rate {rate}", e.what, e.value)
        })?;
        let s_s = self.source_weight_b * st.s_b + (1.0 - self.source_weight_b) * st.s_u;
        let lambda_s = rate * self.source_rate;
        let Some(w_s) = mg1_wait(lambda_s, s_s, self.m) else {
            return Err(format!(
                "source queue utilisation lambda_s S_s = {:.6} >= 1 at rate {rate} (eq. 28)",
                lambda_s * s_s
            ));
        };
        Ok(Solved { s, iterations, st, s_s, w_s })
    }

    /// The measurement for the fixed point reached from `start`.
    fn measure_from(&self, rate: f64, start: Option<f64>) -> Measurement {
        let Solved { iterations, st, s_s, w_s, .. } = match self.evaluate(rate, start) {
            Ok(solved) => solved,
            Err(detail) => return Measurement::saturated(detail),
        };
        let one_step = (st.s_b + w_s) * st.multiplexing;
        let mut m = ok_measurement(rate);
        m.latency = Some(self.n as f64 * (one_step + self.delta));
        m.network_latency = Some(st.s_b);
        m.source_wait = Some(w_s);
        m.unicast_latency = Some((st.s_u + w_s) * st.multiplexing);
        m.multiplexing_degree = Some(st.multiplexing);
        m.channel_rate = Some(st.lambda_c);
        m.blocking_probability = Some(st.p_v);
        m.hops = Some(self.mean_distance);
        m.intermediates = vec![
            ("p_v".to_string(), st.p_v),
            ("p_a".to_string(), st.p_a),
            ("lambda_c".to_string(), st.lambda_c),
            ("lambda_cu".to_string(), rate * self.cu),
            ("lambda_cb".to_string(), rate * self.cb),
            ("lambda_cr".to_string(), rate * self.cr),
            ("lambda_s".to_string(), rate * self.source_rate),
            ("omega_bar".to_string(), self.omega),
            ("service_time".to_string(), st.s),
            ("s_b".to_string(), st.s_b),
            ("s_u".to_string(), st.s_u),
            ("s_s".to_string(), s_s),
            ("w_c".to_string(), st.w_c),
            ("w_s".to_string(), w_s),
            ("v_bar".to_string(), st.multiplexing),
            ("one_step_latency".to_string(), one_step),
            ("iterations".to_string(), f64::from(iterations)),
        ];
        m
    }
}

impl Evaluator for Broadcast {
    fn stable(&self, rate: f64, start: Option<f64>) -> Option<f64> {
        self.evaluate(rate, start).ok().map(|solved| solved.s)
    }

    fn measure(&self, rate: f64) -> Measurement {
        self.measure_from(rate, None)
    }

    fn saturated_bound(&self) -> f64 {
        // S >= M, so lambda_c S >= 1 here.
        1.0 / ((self.cu + self.cb + self.cr) * self.m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelOptions, check as model_check, saturation_rate, solve};

    fn scenario(n: u32, v: u32, m: u32, beta: f64) -> Scenario {
        let mut s = Scenario::new(Topology::Hypercube { dimensions: n });
        s.routing = Routing::Duato;
        s.virtual_channels = v;
        s.message_length = m;
        s.broadcast_fraction = beta;
        s
    }

    fn run(s: &Scenario, rate: f64) -> Measurement {
        solve(ModelName::BroadcastHypercube, s, rate, &ModelOptions::default()).unwrap()
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Section 4: N = 2^6, 2^7, 2^8; V = 2, 4; M = 32, 64, 128; beta = 0.005, 0.01, 0.02.
    fn section4() -> Vec<Scenario> {
        let mut out = Vec::new();
        for n in [6, 7, 8] {
            for v in [2, 4] {
                for m in [32, 64, 128] {
                    for beta in [0.005, 0.01, 0.02] {
                        out.push(scenario(n, v, m, beta));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn zero_load_is_n_times_m_plus_delta() {
        for n in [1, 6, 8, 16] {
            for (m, delta) in [(32, 1.0), (64, 0.0), (128, 2.5)] {
                let mut s = scenario(n, 4, m, 0.01);
                s.startup_latency = delta;
                let got = run(&s, 0.0);
                let expected = f64::from(n) * (f64::from(m) + delta);
                assert!(rel(got.latency.unwrap(), expected) < 1e-14, "n={n}: {got:?}");
                // Unicasts: M + d with d = (n/2) N/(N-1) (eq. 6).
                let big_n = 2f64.powi(n as i32);
                let d = f64::from(n) / 2.0 * big_n / (big_n - 1.0);
                assert!(rel(got.unicast_latency.unwrap(), f64::from(m) + d) < 1e-14);
            }
        }
    }

    #[test]
    fn hand_computed_light_load_point() {
        // n = 6 (N = 64), V = 2, M = 32, beta = 0.01, Delta = 1, lambda_g = 0.01, written out
        // independently with a plain iteration on S.
        let (n, m, beta, rate) = (6usize, 32.0, 0.01, 0.01);
        let binom = [1.0, 6.0, 15.0, 20.0, 15.0, 6.0, 1.0];
        let p: Vec<f64> = binom.iter().map(|b| b / 63.0).collect(); // p_0 unused
        let d = 3.0 * 64.0 / 63.0;
        // omega = sum_{i=0}^{5} i 2^{5-i} / 63 = (16 + 16 + 12 + 8 + 5) / 63 = 57/63.
        let omega = 57.0 / 63.0;
        let lambda_sr = 31.0 * beta * rate;
        let lcu = (1.0 - beta) * rate * d / 6.0;
        let lcb = beta * rate;
        let lcr = omega / 6.0 * lambda_sr;
        let lc = lcu + lcb + lcr;
        let mut s: f64 = ((lcb + lcr) * m + lcu * (m + d)) / lc;
        let mut latency = 0.0;
        let mut unicast = 0.0;
        for _ in 0..5000 {
            // Chain with V = 2: q = (1, rho, rho lc / (1/S - lc)).
            let rho = lc * s;
            let q2 = rho * lc / (1.0 / s - lc);
            let total = 1.0 + rho + q2;
            let (p1, p2) = (rho / total, q2 / total);
            let w_c = lc * s * s * (1.0 + (s - m).powi(2) / (s * s)) / (2.0 * (1.0 - lc * s));
            let p_a = p1 / 2.0 + p2; // eq. (23): P_{V-1}/C(2,1) + P_V
            let s_b = m + p2 * w_c;
            let s_u: f64 = (1..=n)
                .map(|i| {
                    let blocking: f64 = (1..=i).map(|j| p_a.powi((i - j) as i32) * p2 * w_c).sum();
                    p[i] * (m + i as f64 + blocking)
                })
                .sum();
            let v_bar = (p1 + 4.0 * p2) / (p1 + 2.0 * p2);
            let (lsu, lsb) = ((1.0 - beta) * rate, beta * rate);
            let lambda_s = lsu / 6.0 + lsb + omega / 6.0 * lambda_sr;
            let s_s = ((lsb + lambda_sr) * s_b + lsu * s_u) / (lsu + lsb + lambda_sr);
            let w_s = lambda_s * s_s * s_s * (1.0 + (s_s - m).powi(2) / (s_s * s_s))
                / (2.0 * (1.0 - lambda_s * s_s));
            latency = 6.0 * ((s_b + w_s) * v_bar + 1.0);
            unicast = (s_u + w_s) * v_bar;
            s = ((lcb + lcr) * s_b + lcu * s_u) / lc;
        }
        let got = run(&scenario(6, 2, 32, beta), rate);
        assert!(rel(got.latency.unwrap(), latency) < 1e-9, "{:?} vs {latency}", got.latency);
        assert!(rel(got.unicast_latency.unwrap(), unicast) < 1e-9);
        // Regression anchors (P_V = 0.0381831503...).
        assert!((latency - 273.490311360).abs() < 1e-8, "{latency}");
        assert!((unicast - 48.650639044).abs() < 1e-8, "{unicast}");
    }

    #[test]
    fn latency_increases_with_load_up_to_saturation() {
        super::super::test_support::assert_latency_rises_to_saturation(
            ModelName::BroadcastHypercube,
            &section4(),
        );
    }

    #[test]
    fn restart_from_other_points_gives_the_same_answer() {
        for s in section4() {
            let model = Broadcast::new(&s).unwrap();
            let sat = saturation_rate(ModelName::BroadcastHypercube, &s, &ModelOptions::default())
                .unwrap();
            for frac in [0.3, 0.7, 0.95] {
                let rate = frac * sat;
                let base = model.measure_from(rate, None);
                let x = base.intermediate("service_time").unwrap();
                for start in [0.5 * x, 1.02 * x] {
                    let other = model.measure_from(rate, Some(start));
                    let (a, b) = (base.latency.unwrap(), other.latency.unwrap());
                    assert!(rel(a, b) < 1e-9, "{s:?} rate={rate} start={start}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn pure_unicast_and_pure_broadcast_are_defined() {
        for beta in [0.0, 1.0] {
            let s = scenario(8, 4, 32, beta);
            let sat = saturation_rate(ModelName::BroadcastHypercube, &s, &ModelOptions::default())
                .unwrap();
            assert!(sat > 0.0 && sat.is_finite());
            assert!(run(&s, 0.5 * sat).latency.unwrap().is_finite());
        }
    }

    #[test]
    fn large_hypercubes_are_finite_and_saturate() {
        for n in [12, 16, 30] {
            let s = scenario(n, 4, 32, 0.01);
            let sat = saturation_rate(ModelName::BroadcastHypercube, &s, &ModelOptions::default())
                .unwrap();
            assert!(sat > 0.0 && sat.is_finite());
            assert!(run(&s, 0.9 * sat).latency.unwrap().is_finite());
        }
    }

    #[test]
    fn rejects_what_the_paper_does_not_cover() {
        let bad = |s: &Scenario| model_check(ModelName::BroadcastHypercube, s).unwrap_err().0;
        assert!(bad(&scenario(6, 1, 32, 0.01)).contains("V >= 2"));
        assert!(bad(&scenario(6, 2, 32, 1.5)).contains("0 <= beta <= 1"));
        assert!(bad(&scenario(0, 2, 32, 0.01)).contains("dimensions"));
        let mut s = scenario(6, 2, 32, 0.01);
        s.routing = Routing::Adaptive;
        assert!(bad(&s).contains("duato"));
        let mut s = scenario(6, 2, 32, 0.01);
        s.escape_channels = Some(2);
        assert!(bad(&s).contains("escape_channels"));
        let mut s = scenario(6, 2, 32, 0.01);
        s.startup_latency = f64::INFINITY;
        assert!(bad(&s).contains("startup_latency"));
        let mut s = scenario(6, 2, 32, 0.01);
        s.topology = Topology::Torus { radix: 8, dimensions: 2 };
        assert!(bad(&s).contains("hypercube"));
        assert!(model_check(ModelName::BroadcastHypercube, &scenario(8, 4, 128, 0.02)).is_ok());
    }
}
