//! Fault-tolerant circuit switching in adaptively routed 2-D tori: Safaei, Khonsari, Fathy,
//! Alzeidi and Ould-Khaoua, "Performance modeling of fault-tolerant circuit-switched
//! communication networks", PARELEC 2006.
//!
//! A probe sets up the whole circuit; a blocked or faulty hop tears the partial path down and the
//! message retries from the source. The model is a fixed point in `y = P_V` (errata "Common"):
//!
//! - `d = k/2`, `kbar = k/4` (eq. 2); hops `j = 1..d`;
//! - `Pphi_j = 0` for `j < kbar`, `2/(d-j+1)` for `kbar <= j <= d-1`, 1 for `j = d`, and
//!   `xi_j = 2 - Pphi_j` (eq. 16-18, E-CS-3);
//! - `q_j = (P_V + theta)^{xi_j}` with the real exponent (eq. 7, E-CS-2; saturated when
//!   `P_V + theta >= 1`); `P_Fj = q_j prod_{i<j} (1 - q_i)`, `P_S = prod_{i=1}^{d} (1 - q_i)`
//!   (eq. 7-10, E-CS-1);
//! - one attempt lasts `T_S = M + 2d` on success and `t_j = 2(j-1)` on a failure at hop `j`
//!   (eq. 3, 5, E-CS-8); with `A_1 = sum P_Fj t_j`, `A_2 = sum P_Fj t_j^2` the service time has
//!   `E[T_n] = E[T_S] + A_1/P_S` (eq. 15) and
//!   `E[T_n^2] = E[T_S^2] + 2 E[T_S] A_1/P_S + A_2/P_S + 2 A_1^2/P_S^2`,
//!   `E[T_S^2] = E[M^2] + 4 d M + 4 d^2` (eq. 12-13, 20 re-derived, E-CS-4);
//! - `T_r = E[T_n] + d` (eq. 14);
//! - `lambda_e = lambda_g / (4 P_S)` (eq. 28), `lambda_c = lambda_e sum_{j=0}^{d-1}
//!   prod_{i=1}^{j} (1 - q_i)` (eq. 29, E-CS-5);
//! - `P_V`, `V-bar` from Dally's chain with `lambda_c` and `T_r` (eq. 21-27, E-CS-6);
//! - `W_s = (lambda_g/V) E[T_n^2] / (2 (1 - (lambda_g/V) E[T_n]))` (eq. 19, E-CS-7);
//! - latency `(T_r + W_s) V-bar` (eq. 1).
//!
//! Zero load without faults gives `M + 3d`.

use super::fixed_point::{self, Infeasible, Outcome};
use super::queueing::{VcChain, pk_wait, vc_chain};
use super::{
    Evaluator, ModelError, ModelInfo, ModelName, ParamInfo, ok_measurement, routing_error,
    switching_error, torus_radix,
};
use crate::measurement::Measurement;
use crate::scenario::{Ejection, Routing, Scenario, Switching};

/// `runner models` entry.
pub(crate) const INFO: ModelInfo = ModelInfo {
    name: ModelName::CircuitTorusFaults,
    paper: "F. Safaei, A. Khonsari, M. Fathy, N. Alzeidi, M. Ould-Khaoua, \
            Performance modeling of fault-tolerant circuit-switched communication networks, \
            PARELEC 2006, pp. 239-244",
    scenario: "k x k torus, circuit switching with retries from the source, fully adaptive \
               routing, V virtual channels, faulty nodes with probability theta, uniform traffic",
    ejection: Ejection::Unlimited,
    ejection_quote: "messages are transferred through the ejection channel to the local node as soon as they arrive",
    params: &[
        ParamInfo {
            key: "radix",
            default: "8",
            unit: "nodes",
            doc: "k, even, 4..1024 (paper: 8, 16); dimensions must be 2",
        },
        ParamInfo {
            key: "virtual_channels",
            default: "1",
            unit: "",
            doc: "V >= 1 per physical channel (paper: 1, 10)",
        },
        ParamInfo {
            key: "message_length",
            default: "32",
            unit: "flits",
            doc: "mean message length M (paper: 32, 64)",
        },
        ParamInfo {
            key: "message_length_second_moment",
            default: "M^2",
            unit: "flits^2",
            doc: "E[M^2] >= M^2 for random lengths; unset means fixed length",
        },
        ParamInfo {
            key: "message_length_distribution",
            default: "fixed",
            unit: "",
            doc: "bimodal, geometric or uniform lengths with mean M: the model uses the E[M^2] \
                  they imply",
        },
        ParamInfo {
            key: "fault_rate",
            default: "0",
            unit: "",
            doc: "theta, probability a node is faulty, 0 <= theta < 1 (paper: 0, 0.1, 0.2)",
        },
        ParamInfo { key: "routing", default: "adaptive", unit: "", doc: "adaptive only" },
        ParamInfo { key: "switching", default: "circuit", unit: "", doc: "circuit only" },
    ],
};

const NAME: &str = "circuit_torus_faults";

/// `(k, E[M^2])` of a scenario the paper covers.
fn parameters(scenario: &Scenario) -> Result<(u32, f64), ModelError> {
    let k = torus_radix(NAME, scenario)?;
    if scenario.switching != Switching::Circuit {
        return Err(switching_error(NAME, scenario.switching, "circuit"));
    }
    if scenario.routing != Routing::Adaptive {
        return Err(routing_error(NAME, scenario.routing, "fully adaptive minimal (`adaptive`)"));
    }
    if let Some(v2) = scenario.escape_channels {
        return Err(ModelError(format!(
            "{NAME}: fully adaptive circuit routing has no escape channels, so escape_channels \
             must be unset, got {v2}"
        )));
    }
    let theta = scenario.fault_rate;
    if !(0.0..1.0).contains(&theta) {
        return Err(ModelError(format!(
            "{NAME}: fault_rate theta is a probability of node failure and must satisfy \
             0 <= theta < 1, got {theta}"
        )));
    }
    let m = f64::from(scenario.message_length);
    // The distribution's E[M^2] when one is named, else the user's (`None`: fixed length).
    let m2 = match scenario.length_second_moment() {
        None => m * m,
        Some(m2) if m2.is_finite() && m2 >= m * m * (1.0 - 1e-12) => m2.max(m * m),
        Some(m2) => {
            return Err(ModelError(format!(
                "{NAME}: message_length_second_moment E[M^2] must be finite and at least \
                 M^2 = {} (a variance cannot be negative), got {m2}",
                m * m
            )));
        }
    };
    super::virtual_channels(NAME, scenario)?;
    Ok((k, m2))
}

/// Applicability and parameter check for `circuit_torus_faults`.
pub(crate) fn check(scenario: &Scenario) -> Result<(), ModelError> {
    parameters(scenario).map(drop)
}

/// The precomputed, load-independent part of the model.
#[derive(Clone, Debug)]
pub(crate) struct Circuit {
    /// `d = k/2`.
    d: usize,
    /// `V`.
    vcs: u32,
    /// Mean message length `M`.
    m: f64,
    /// `theta`.
    theta: f64,
    /// `xi_j`, index `j - 1` (E-CS-3).
    xi: Vec<f64>,
    /// `E[T_S] = M + 2d` and `E[T_S^2] = E[M^2] + 4 d M + 4 d^2`.
    ts1: f64,
    ts2: f64,
}

/// Everything the model derives from one value of `P_V` at one rate.
#[derive(Clone, Copy, Debug)]
struct State {
    p_s: f64,
    a1: f64,
    a2: f64,
    lambda_e: f64,
    lambda_c: f64,
    /// `E[T_n]`.
    t_n: f64,
    /// `T_r = E[T_n] + d`.
    t_r: f64,
}

/// A converged point.
#[derive(Clone, Copy, Debug)]
struct Solved {
    /// The fixed point `P_V`.
    y: f64,
    iterations: u32,
    st: State,
    chain: VcChain,
    t_n2: f64,
    w_s: f64,
}

impl Circuit {
    /// Precomputes the load-independent coefficients.
    pub(crate) fn new(scenario: &Scenario) -> Result<Circuit, ModelError> {
        let (k, m2) = parameters(scenario)?;
        let d = (k / 2) as usize;
        let kbar = f64::from(k) / 4.0;
        let xi = (1..=d)
            .map(|j| {
                let p_phi = if j == d {
                    1.0
                } else if (j as f64) < kbar {
                    0.0
                } else {
                    2.0 / (d - j + 1) as f64
                };
                2.0 - p_phi
            })
            .collect();
        let m = f64::from(scenario.message_length);
        let df = d as f64;
        Ok(Circuit {
            d,
            vcs: scenario.virtual_channels,
            m,
            theta: scenario.fault_rate,
            xi,
            ts1: m + 2.0 * df,
            ts2: m2 + 4.0 * df * m + 4.0 * df * df,
        })
    }

    /// Attempt statistics and rates at `P_V = y`; `Err` when `P_V + theta >= 1` (E-CS-2).
    fn state(&self, rate: f64, y: f64) -> Result<State, Infeasible> {
        let p = y + self.theta;
        if p.is_nan() || p >= 1.0 {
            return Err(Infeasible { what: "P_V + theta (eq. 7)", value: p });
        }
        let ln_p = p.ln();
        let (mut survive, mut sum_survive, mut a1, mut a2) = (1.0, 0.0, 0.0, 0.0);
        for (idx, &xi) in self.xi.iter().enumerate() {
            // Hop j = idx + 1; `survive` is prod_{i<j} (1 - q_i).
            sum_survive += survive;
            let q = if p > 0.0 { (xi * ln_p).exp() } else { 0.0 };
            let p_fail = q * survive;
            let t = 2.0 * idx as f64;
            a1 += p_fail * t;
            a2 += p_fail * t * t;
            survive *= 1.0 - q;
        }
        let p_s = survive;
        let lambda_e = rate / (4.0 * p_s);
        let t_n = self.ts1 + a1 / p_s;
        Ok(State {
            p_s,
            a1,
            a2,
            lambda_e,
            lambda_c: lambda_e * sum_survive,
            t_n,
            t_r: t_n + self.d as f64,
        })
    }

    /// Solves the fixed point in `P_V` from `start` (zero load when `None`).
    fn fixed_point(&self, rate: f64, start: Option<f64>) -> Outcome {
        fixed_point::solve(start.unwrap_or(0.0), |y| {
            let st = self.state(rate, y)?;
            vc_chain(st.lambda_c, st.t_r, self.vcs).map(|c| c.blocking).ok_or(Infeasible {
                what: "channel utilisation lambda_c T_r (eq. 23)",
                value: st.lambda_c * st.t_r,
            })
        })
    }

    /// Solves at `rate` from `start`; the saturated measurement when there is no stable point.
    fn evaluate(&self, rate: f64, start: Option<f64>) -> Result<Solved, String> {
        let (y, iterations) = match self.fixed_point(rate, start) {
            Outcome::Converged { x, evaluations } => (x, evaluations),
            other => return Err(other.saturation_detail(rate, "P_V")),
        };
        let st = self.state(rate, y).map_err(|e| {
            format!("{} = {:.6} >= 1 at the fixed point, rate {rate}", e.what, e.value)
        })?;
        let Some(chain) = vc_chain(st.lambda_c, st.t_r, self.vcs) else {
            return Err(format!(
                "channel utilisation lambda_c T_r = {:.6} >= 1 at the fixed point (eq. 23)",
                st.lambda_c * st.t_r
            ));
        };
        let p_s = st.p_s;
        let t_n2 = self.ts2
            + 2.0 * self.ts1 * st.a1 / p_s
            + st.a2 / p_s
            + 2.0 * st.a1 * st.a1 / (p_s * p_s);
        let v = f64::from(self.vcs);
        let Some(w_s) = pk_wait(rate / v, st.t_n, t_n2) else {
            return Err(format!(
                "source queue utilisation (lambda_g/V) E[T_n] = {:.6} >= 1 at rate {rate} \
                 (eq. 19)",
                rate * st.t_n / v
            ));
        };
        Ok(Solved { y, iterations, st, chain, t_n2, w_s })
    }

    /// The measurement for the fixed point reached from `start`.
    fn measure_from(&self, rate: f64, start: Option<f64>) -> Measurement {
        let Solved { iterations, st, chain, t_n2, w_s, .. } = match self.evaluate(rate, start) {
            Ok(solved) => solved,
            Err(detail) => return Measurement::saturated(detail),
        };
        let mut m = ok_measurement(rate);
        m.latency = Some((st.t_r + w_s) * chain.multiplexing);
        m.network_latency = Some(st.t_r);
        m.source_wait = Some(w_s);
        m.multiplexing_degree = Some(chain.multiplexing);
        m.channel_rate = Some(st.lambda_c);
        m.blocking_probability = Some(chain.blocking);
        m.hops = Some(self.d as f64);
        let mut im = vec![
            ("p_v".to_string(), chain.blocking),
            ("p_s".to_string(), st.p_s),
            ("p_f".to_string(), 1.0 - st.p_s),
            ("lambda_e".to_string(), st.lambda_e),
            ("lambda_c".to_string(), st.lambda_c),
            ("t_n".to_string(), st.t_n),
            ("t_n2".to_string(), t_n2),
            ("t_r".to_string(), st.t_r),
            ("w_s".to_string(), w_s),
            ("v_bar".to_string(), chain.multiplexing),
            ("iterations".to_string(), f64::from(iterations)),
        ];
        im.extend(self.xi.iter().enumerate().map(|(i, &xi)| (format!("xi_{}", i + 1), xi)));
        m.intermediates = im;
        m
    }
}

impl Evaluator for Circuit {
    fn stable(&self, rate: f64, start: Option<f64>) -> Option<f64> {
        self.evaluate(rate, start).ok().map(|solved| solved.y)
    }

    fn measure(&self, rate: f64) -> Measurement {
        self.measure_from(rate, None)
    }

    fn saturated_bound(&self) -> f64 {
        // lambda_c >= lambda_g/4 and T_r >= M + 3d, so lambda_c T_r >= 1 here.
        4.0 / (self.m + 3.0 * self.d as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelOptions, check as model_check, saturation_rate, solve};
    use crate::scenario::Topology;

    fn scenario(k: u32, v: u32, m: u32, theta: f64) -> Scenario {
        let mut s = Scenario::new(Topology::Torus { radix: k, dimensions: 2 });
        s.switching = Switching::Circuit;
        s.routing = Routing::Adaptive;
        s.virtual_channels = v;
        s.message_length = m;
        s.fault_rate = theta;
        s
    }

    fn run(s: &Scenario, rate: f64) -> Measurement {
        solve(ModelName::CircuitTorusFaults, s, rate, &ModelOptions::default()).unwrap()
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Section 4: N = 8^2, 16^2; V = 1, 10; M = 32, 64; theta = 0, 0.1, 0.2.
    fn section4() -> Vec<Scenario> {
        let mut out = Vec::new();
        for k in [8, 16] {
            for v in [1, 10] {
                for m in [32, 64] {
                    for theta in [0.0, 0.1, 0.2] {
                        out.push(scenario(k, v, m, theta));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn zero_load_without_faults_is_m_plus_3d() {
        for k in [4, 8, 16, 64] {
            for v in [1, 10] {
                let l = run(&scenario(k, v, 32, 0.0), 0.0).latency.unwrap();
                assert!(rel(l, f64::from(32 + 3 * k / 2)) < 1e-14, "k={k}: {l}");
            }
        }
    }

    #[test]
    fn hand_computed_zero_load_with_faults() {
        // k = 8 (d = 4), theta = 0.1, M = 32, rate -> 0 (P_V = 0, V-bar = 1, W_s = 0).
        // xi = (2, 4/3, 1, 1) (E-CS-3), q_j = 0.1^xi_j.
        let q = [0.01, 0.1f64.powf(4.0 / 3.0), 0.1, 0.1];
        // P_F1 = q1, P_F2 = q2 (1 - q1), ...; t_j = 2 (j - 1).
        let mut survive = 1.0;
        let mut a1 = 0.0;
        for (j, qj) in q.iter().enumerate() {
            a1 += qj * survive * 2.0 * j as f64;
            survive *= 1.0 - qj;
        }
        // E[T_n] = M + 2d + A_1/P_S (eq. 15), T_r = E[T_n] + d (eq. 14).
        let expected = 32.0 + 8.0 + a1 / survive + 4.0;
        let m = run(&scenario(8, 1, 32, 0.1), 0.0);
        assert!(rel(m.latency.unwrap(), expected) < 1e-14, "{:?} vs {expected}", m.latency);
        assert!(rel(m.intermediate("p_s").unwrap(), survive) < 1e-14);
        // P_S = 0.99 * (1 - 0.046416) * 0.9 * 0.9 = 0.764679; A_1 = 0.091904 + 0.377619 +
        // 0.509786 = 0.979309; A_1/P_S = 1.280680.
        assert!((expected - 45.280679).abs() < 1e-6, "{expected}");
    }

    #[test]
    fn hand_computed_light_load_point() {
        // k = 8 (d = 4), V = 2, M = 32 fixed, theta = 0.1, lambda_g = 0.002, written out
        // independently of the model code with a plain iteration on P_V.
        let (rate, theta) = (0.002, 0.1);
        let xi = [2.0, 4.0 / 3.0, 1.0, 1.0];
        let mut y: f64 = 0.0;
        let mut latency = 0.0;
        for _ in 0..5000 {
            let p: f64 = y + theta;
            let (mut survive, mut sum_survive, mut a1, mut a2) = (1.0, 0.0, 0.0, 0.0);
            for (j, x) in xi.iter().enumerate() {
                sum_survive += survive;
                let q = p.powf(*x);
                let t = 2.0 * j as f64;
                a1 += q * survive * t;
                a2 += q * survive * t * t;
                survive *= 1.0 - q;
            }
            let ps = survive;
            let t_n = 40.0 + a1 / ps;
            let t_n2 = 1024.0
                + 16.0 * 32.0
                + 64.0
                + 2.0 * 40.0 * a1 / ps
                + a2 / ps
                + 2.0 * a1 * a1 / (ps * ps);
            let t_r = t_n + 4.0;
            let lambda_c = rate / (4.0 * ps) * sum_survive;
            let rho = lambda_c * t_r;
            let q2 = rho * lambda_c / (1.0 / t_r - lambda_c);
            y = q2 / (1.0 + rho + q2);
            let v_bar = (rho + 4.0 * q2) / (rho + 2.0 * q2);
            let w_s = (rate / 2.0) * t_n2 / (2.0 * (1.0 - rate / 2.0 * t_n));
            latency = (t_r + w_s) * v_bar;
        }
        let got = run(&scenario(8, 2, 32, theta), rate);
        assert!(rel(got.latency.unwrap(), latency) < 1e-9, "{:?} vs {latency}", got.latency);
        // Regression anchor (P_V = 0.0135173461...).
        assert!((latency - 56.062204582).abs() < 1e-8, "{latency}");
    }

    #[test]
    fn second_moment_enters_only_the_source_wait() {
        let fixed = run(&scenario(8, 2, 32, 0.1), 0.003);
        let mut s = scenario(8, 2, 32, 0.1);
        s.message_length_second_moment = Some(2.0 * 32.0 * 32.0);
        let random = run(&s, 0.003);
        assert_eq!(fixed.network_latency, random.network_latency);
        // E[T_n^2] grows by exactly Var[M] = 1024.
        let diff = random.intermediate("t_n2").unwrap() - fixed.intermediate("t_n2").unwrap();
        assert!((diff - 1024.0).abs() < 1e-9);
        assert!(random.source_wait.unwrap() > fixed.source_wait.unwrap());
        // A geometric distribution with mean 32 implies E[M^2] = 2 M^2 - M: the same point as
        // giving that second moment by hand.
        let mut geometric = scenario(8, 2, 32, 0.1);
        geometric.message_length_distribution = crate::scenario::MessageLengths::Geometric;
        let mut by_hand = scenario(8, 2, 32, 0.1);
        by_hand.message_length_second_moment = Some(2.0 * 32.0 * 32.0 - 32.0);
        assert_eq!(run(&geometric, 0.003), run(&by_hand, 0.003));
    }

    #[test]
    fn latency_increases_with_load_up_to_saturation() {
        super::super::test_support::assert_latency_rises_to_saturation(
            ModelName::CircuitTorusFaults,
            &section4(),
        );
    }

    #[test]
    fn restart_from_other_points_gives_the_same_answer() {
        for s in section4() {
            let model = Circuit::new(&s).unwrap();
            let sat = saturation_rate(ModelName::CircuitTorusFaults, &s, &ModelOptions::default())
                .unwrap();
            for frac in [0.3, 0.7, 0.95] {
                let rate = frac * sat;
                let base = model.measure_from(rate, None);
                let y = base.blocking_probability.unwrap();
                for start in [0.5 * y, 1.02 * y] {
                    let other = model.measure_from(rate, Some(start));
                    let (a, b) = (base.latency.unwrap(), other.latency.unwrap());
                    assert!(rel(a, b) < 1e-9, "{s:?} rate={rate} start={start}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn large_tori_are_finite_and_saturate() {
        for k in [32, 64] {
            let s = scenario(k, 10, 32, 0.1);
            let sat = saturation_rate(ModelName::CircuitTorusFaults, &s, &ModelOptions::default())
                .unwrap();
            assert!(sat > 0.0 && sat.is_finite());
            assert!(run(&s, 0.9 * sat).latency.unwrap().is_finite());
        }
    }

    #[test]
    fn rejects_what_the_paper_does_not_cover() {
        let bad = |s: &Scenario| model_check(ModelName::CircuitTorusFaults, s).unwrap_err().0;
        assert!(bad(&scenario(8, 1, 32, 1.0)).contains("0 <= theta < 1"));
        assert!(bad(&scenario(8, 1, 32, -0.1)).contains("0 <= theta < 1"));
        assert!(bad(&scenario(8, 1, 32, f64::NAN)).contains("0 <= theta < 1"));
        let mut s = scenario(8, 1, 32, 0.0);
        s.message_length_second_moment = Some(100.0);
        assert!(bad(&s).contains("E[M^2]"));
        let mut s = scenario(8, 1, 32, 0.0);
        s.switching = Switching::Wormhole;
        assert!(bad(&s).contains("circuit"));
        let mut s = scenario(8, 1, 32, 0.0);
        s.routing = Routing::Nbc;
        assert!(bad(&s).contains("adaptive"));
        assert!(model_check(ModelName::CircuitTorusFaults, &scenario(16, 10, 64, 0.2)).is_ok());
    }
}
