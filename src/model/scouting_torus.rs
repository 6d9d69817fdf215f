//! Scouting switching in adaptively routed 2-D tori: Safaei, Khonsari, Fathy, Talebanfard and
//! Ould-Khaoua, "Communication prediction of scouting switching in adaptively-routed torus
//! networks", Proc. IFIP NPC 2007, LNCS 4672, pp. 466-475.
//!
//! The header runs up to `K` links ahead of the data and backtracks when blocked (`K = 0` is
//! wormhole switching). The model is a fixed point in `y = P_V` (errata "Common"):
//!
//! - `D = k/2`, `kbar = k/4` (eq. 2);
//! - `Pj_i = 0` for `i < kbar`, `2/(D - i + 1)` for `kbar <= i <= D-1` (eq. 8, E-SS-2);
//! - `Pb_i = (1 - Pj_i) P_V^2 + Pj_i P_V` (eq. 9-10, E-SS-8);
//! - `lambda_c = lambda_g (D + sum_{i=0}^{D-1} i Pb_i) / 4` (eq. 3, kept for every K, E-SS-7);
//! - `P_j^t = (t-j)/(t-j+D-1)` for `j < t`, 0 for `j = t` (eq. 6, E-SS-5);
//! - `C_{i,j}^t` solved exactly (eq. 5, E-SS-6): `C_{i,t} = D - i`; for `j = t-1 .. 0`:
//!   `C_{D,j} = 0`, `C_{i,j} = (1 - P_j^t Pb_i) C_{i+1,j} + P_j^t Pb_i C_{i-1,j+1} + 1` for
//!   `i = D-1 .. 1`, `C_{0,j} = C_{1,j} + 1`. The recursion depends on `t` and `j` only through
//!   `s = t - j`, so one pass over `s = 0..K` gives every `C_{0,0}^t = C^{(s=t)}_0`;
//! - `S = mean_t C_{0,0}^t + (2K - 1) + M` (eq. 4 and 7 read per E-SS-3, with `2K - 1` kept for
//!   `K = 0`, E-SS-4);
//! - `P_V`, `V-bar` from Dally's chain with `lambda_c` and `S` (eq. 12-13, E-SS-9, `V` virtual
//!   channels per E-SS-1);
//! - `W_s = lambda_g (S^2 + (S - S_min)^2) / (2 (V - lambda_g S))`, `S_min = M + 2K - 1 + D`
//!   (eq. 11, E-SS-10);
//! - latency `(S + W_s) V-bar` (eq. 1).
//!
//! Zero load gives `M + D + 2K - 1` (`M + D - 1` for wormhole, `K = 0`).

use super::fixed_point::{self, Infeasible, Outcome};
use super::queueing::{VcChain, mg1_wait, vc_chain};
use super::{
    Evaluator, ModelError, ModelInfo, ModelName, ParamInfo, ok_measurement, routing_error,
    switching_error, torus_radix,
};
use crate::measurement::Measurement;
use crate::scenario::{Ejection, Routing, Scenario, Switching};

/// Largest scouting distance accepted (the set-up recursion costs `O(K D)` per iteration).
const MAX_SCOUTING_DISTANCE: u32 = 1024;

/// `runner models` entry.
pub(crate) const INFO: ModelInfo = ModelInfo {
    name: ModelName::ScoutingTorus,
    paper: "F. Safaei, A. Khonsari, M. Fathy, N. Talebanfard, \
            M. Ould-Khaoua, Communication prediction of scouting switching in adaptively-routed \
            torus networks, Proc. IFIP NPC 2007, LNCS 4672, pp. 466-475",
    scenario: "k x k torus, scouting switching (K >= 0; wormhole = K 0), fully adaptive minimal \
               routing, V virtual channels, fixed-length messages, uniform traffic",
    ejection: Ejection::Single,
    ejection_quote: "Messages at the destination node are transferred to the local PE one at a time through the ejection channel",
    params: &[
        ParamInfo {
            key: "radix",
            default: "8",
            unit: "nodes",
            doc: "k, even, 4..1024 (paper: 8, 16); dimensions must be 2",
        },
        ParamInfo {
            key: "scouting_distance",
            default: "0",
            unit: "links",
            doc: "K, 0..1024 (paper: 0, 1, 3, 6); switching wormhole is K = 0",
        },
        ParamInfo {
            key: "virtual_channels",
            default: "1",
            unit: "",
            doc: "V >= 1 per physical channel (paper: 1, 6; E-SS-1)",
        },
        ParamInfo {
            key: "message_length",
            default: "32",
            unit: "flits",
            doc: "M, fixed (paper: 32, 64)",
        },
        ParamInfo { key: "routing", default: "adaptive", unit: "", doc: "adaptive only" },
    ],
};

const NAME: &str = "scouting_torus";

/// `(k, K)` of a scenario the paper covers.
fn parameters(scenario: &Scenario) -> Result<(u32, u32), ModelError> {
    let k = torus_radix(NAME, scenario)?;
    let big_k = match scenario.switching {
        Switching::Scouting { scouting_distance } => scouting_distance,
        Switching::Wormhole => 0,
        other => return Err(switching_error(NAME, other, "scouting (or wormhole = scouting K 0)")),
    };
    if big_k > MAX_SCOUTING_DISTANCE {
        return Err(ModelError(format!(
            "{NAME}: scouting_distance K must be at most {MAX_SCOUTING_DISTANCE} links, got \
             {big_k}"
        )));
    }
    if scenario.routing != Routing::Adaptive {
        return Err(routing_error(NAME, scenario.routing, "fully adaptive minimal (`adaptive`)"));
    }
    if let Some(v2) = scenario.escape_channels {
        return Err(ModelError(format!(
            "{NAME}: fully adaptive scouting routing has no escape channels, so escape_channels \
             must be unset, got {v2}"
        )));
    }
    super::virtual_channels(NAME, scenario)?;
    Ok((k, big_k))
}

/// Applicability and parameter check for `scouting_torus`.
pub(crate) fn check(scenario: &Scenario) -> Result<(), ModelError> {
    parameters(scenario).map(drop)
}

/// The precomputed, load-independent part of the model.
#[derive(Clone, Debug)]
pub(crate) struct Scouting {
    /// `D = k/2`.
    d: usize,
    /// `K`.
    big_k: usize,
    /// `V`.
    vcs: u32,
    /// `M`.
    m: f64,
    /// `Pj_i`, `i = 0..D-1` (eq. 8, E-SS-2).
    pj: Vec<f64>,
    /// `sum_i i (1 - Pj_i)` and `sum_i i Pj_i`: eq. (3) is `D + y^2 a2 + y a1`.
    a2: f64,
    a1: f64,
    /// `P^t_j` as a function of `s = t - j`, `s = 0..K` (eq. 6, E-SS-5).
    backtrack: Vec<f64>,
}

/// Everything the model derives from one value of `P_V` at one rate.
#[derive(Clone, Copy, Debug)]
struct State {
    lambda_c: f64,
    /// Mean of `C_{0,0}^t` over `t = 0..K`.
    mean_c00: f64,
    /// `S` (E-SS-3).
    service: f64,
}

impl Scouting {
    /// Precomputes the load-independent coefficients.
    pub(crate) fn new(scenario: &Scenario) -> Result<Scouting, ModelError> {
        let (k, big_k) = parameters(scenario)?;
        let d = (k / 2) as usize;
        let kbar = f64::from(k) / 4.0;
        let pj: Vec<f64> = (0..d)
            .map(|i| if (i as f64) < kbar { 0.0 } else { 2.0 / (d - i + 1) as f64 })
            .collect();
        let a2 = pj.iter().enumerate().map(|(i, p)| i as f64 * (1.0 - p)).sum();
        let a1 = pj.iter().enumerate().map(|(i, p)| i as f64 * p).sum();
        let big_k = big_k as usize;
        let backtrack =
            (0..=big_k).map(|s| if s == 0 { 0.0 } else { s as f64 / (s + d - 1) as f64 }).collect();
        Ok(Scouting {
            d,
            big_k,
            vcs: scenario.virtual_channels,
            m: f64::from(scenario.message_length),
            pj,
            a2,
            a1,
            backtrack,
        })
    }

    /// `2K - 1` (E-SS-4: also -1 for K = 0).
    fn lead(&self) -> f64 {
        2.0 * self.big_k as f64 - 1.0
    }

    /// `Pb_i` at `P_V = y` (eq. 9).
    fn pb(&self, i: usize, y: f64) -> f64 {
        (1.0 - self.pj[i]) * y * y + self.pj[i] * y
    }

    /// `lambda_c`, the set-up time and `S` at `P_V = y`; `prev`/`cur` are scratch rows of
    /// length `D + 1`.
    fn state(&self, rate: f64, y: f64, prev: &mut [f64], cur: &mut [f64]) -> State {
        let d = self.d;
        let (mut prev, mut cur) = (prev, cur);
        let lambda_c = rate * (d as f64 + y * y * self.a2 + y * self.a1) / 4.0;
        // Level s = 0 (j = t): C_i = D - i.
        for (i, c) in prev.iter_mut().enumerate() {
            *c = (d - i) as f64;
        }
        let mut sum_c00 = d as f64;
        for s in 1..=self.big_k {
            let p = self.backtrack[s];
            cur[d] = 0.0;
            for i in (1..d).rev() {
                let b = p * self.pb(i, y);
                cur[i] = (1.0 - b) * cur[i + 1] + b * prev[i - 1] + 1.0;
            }
            cur[0] = cur[1] + 1.0;
            sum_c00 += cur[0];
            std::mem::swap(&mut prev, &mut cur);
        }
        let mean_c00 = sum_c00 / (self.big_k + 1) as f64;
        State { lambda_c, mean_c00, service: mean_c00 + self.lead() + self.m }
    }

    /// Solves the fixed point in `P_V` from `start` (zero load when `None`).
    fn fixed_point(&self, rate: f64, start: Option<f64>) -> Outcome {
        let mut prev = vec![0.0; self.d + 1];
        let mut cur = vec![0.0; self.d + 1];
        fixed_point::solve(start.unwrap_or(0.0), |y| {
            let st = self.state(rate, y, &mut prev, &mut cur);
            vc_chain(st.lambda_c, st.service, self.vcs).map(|c| c.blocking).ok_or(Infeasible {
                what: "channel utilisation lambda_c S (eq. 12)",
                value: st.lambda_c * st.service,
            })
        })
    }

    /// Solves at `rate` from `start`; the saturated measurement when there is no stable point.
    fn evaluate(&self, rate: f64, start: Option<f64>) -> Result<Solved, String> {
        let (y, iterations) = match self.fixed_point(rate, start) {
            Outcome::Converged { x, evaluations } => (x, evaluations),
            other => return Err(other.saturation_detail(rate, "P_V")),
        };
        let mut prev = vec![0.0; self.d + 1];
        let mut cur = vec![0.0; self.d + 1];
        let st = self.state(rate, y, &mut prev, &mut cur);
        let Some(chain) = vc_chain(st.lambda_c, st.service, self.vcs) else {
            return Err(format!(
                "channel utilisation lambda_c S = {:.6} >= 1 at the fixed point (eq. 12)",
                st.lambda_c * st.service
            ));
        };
        let s_min = self.m + self.lead() + self.d as f64;
        let v = f64::from(self.vcs);
        let Some(w_s) = mg1_wait(rate / v, st.service, s_min) else {
            return Err(format!(
                "source queue utilisation lambda_g S / V = {:.6} >= 1 at rate {rate} (eq. 11)",
                rate * st.service / v
            ));
        };
        Ok(Solved { y, iterations, st, chain, s_min, w_s })
    }

    /// The measurement for the fixed point reached from `start`.
    fn measure_from(&self, rate: f64, start: Option<f64>) -> Measurement {
        let Solved { iterations, st, chain, s_min, w_s, .. } = match self.evaluate(rate, start) {
            Ok(solved) => solved,
            Err(detail) => return Measurement::saturated(detail),
        };
        let mut m = ok_measurement(rate);
        m.latency = Some((st.service + w_s) * chain.multiplexing);
        m.network_latency = Some(st.service);
        m.source_wait = Some(w_s);
        m.multiplexing_degree = Some(chain.multiplexing);
        m.channel_rate = Some(st.lambda_c);
        m.blocking_probability = Some(chain.blocking);
        m.hops = Some(self.d as f64);
        let mut im = vec![
            ("p_v".to_string(), chain.blocking),
            ("lambda_c".to_string(), st.lambda_c),
            ("service_time".to_string(), st.service),
            ("setup_time".to_string(), st.mean_c00 + self.lead()),
            ("mean_c00".to_string(), st.mean_c00),
            ("s_min".to_string(), s_min),
            ("w_s".to_string(), w_s),
            ("v_bar".to_string(), chain.multiplexing),
            ("iterations".to_string(), f64::from(iterations)),
        ];
        im.extend((0..self.d).map(|i| (format!("pb_{i}"), self.pb(i, chain.blocking))));
        m.intermediates = im;
        m
    }
}

/// A converged point.
#[derive(Clone, Copy, Debug)]
struct Solved {
    /// The fixed point `P_V`.
    y: f64,
    iterations: u32,
    st: State,
    chain: VcChain,
    s_min: f64,
    w_s: f64,
}

impl Evaluator for Scouting {
    fn stable(&self, rate: f64, start: Option<f64>) -> Option<f64> {
        self.evaluate(rate, start).ok().map(|solved| solved.y)
    }

    fn measure(&self, rate: f64) -> Measurement {
        self.measure_from(rate, None)
    }

    fn saturated_bound(&self) -> f64 {
        // lambda_c >= lambda_g D / 4 and S >= M + D - 1 >= M, so lambda_c S >= 1 here.
        4.0 / (self.d as f64 * self.m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelOptions, check as model_check, saturation_rate, solve};
    use crate::scenario::Topology;

    fn scenario(k: u32, big_k: u32, v: u32, m: u32) -> Scenario {
        let mut s = Scenario::new(Topology::Torus { radix: k, dimensions: 2 });
        s.switching = Switching::Scouting { scouting_distance: big_k };
        s.routing = Routing::Adaptive;
        s.virtual_channels = v;
        s.message_length = m;
        s
    }

    fn run(s: &Scenario, rate: f64) -> Measurement {
        solve(ModelName::ScoutingTorus, s, rate, &ModelOptions::default()).unwrap()
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Section 4: N = 64, 256; V = 1, 6; M = 32, 64; K = 0, 1, 3, 6.
    fn section4() -> Vec<Scenario> {
        let mut out = Vec::new();
        for k in [8, 16] {
            for v in [1, 6] {
                for m in [32, 64] {
                    for big_k in [0, 1, 3, 6] {
                        out.push(scenario(k, big_k, v, m));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn zero_load_is_m_plus_d_plus_2k_minus_1() {
        for k in [4, 8, 16, 64] {
            for big_k in [0, 1, 3, 6] {
                let s = scenario(k, big_k, 2, 32);
                let l = run(&s, 0.0).latency.unwrap();
                let expected = f64::from(32 + k / 2 + 2 * big_k) - 1.0;
                assert!(rel(l, expected) < 1e-14, "k={k} K={big_k}: {l}");
            }
        }
        // Wormhole switching is K = 0: M + D - 1.
        let mut s = scenario(8, 0, 1, 32);
        s.switching = Switching::Wormhole;
        assert!(rel(run(&s, 0.0).latency.unwrap(), 35.0) < 1e-14);
    }

    #[test]
    fn hand_computed_point_wormhole_v1() {
        // k = 8 (D = 4, kbar = 2), K = 0, V = 1, M = 32, lambda_g = 0.002.
        // K = 0: no backtracking, S = M + D - 1 = 35 at every load (E-SS-6).
        // Pj = (0, 0, 2/3, 1) for i = 0..3 (E-SS-2), so sum_i i Pb_i =
        // 1*y^2 + 2*(y^2/3 + 2y/3) + 3*y = (5/3) y^2 + (13/3) y  (eq. 9).
        // V = 1: P_V = lambda_c S with lambda_c = lambda_g (4 + (5/3) y^2 + (13/3) y)/4 (eq. 3),
        // so y = a (4 + 13/3 y + 5/3 y^2), a = lambda_g S / 4 = 0.0175: the smaller root of
        // (5/3) a y^2 + ((13/3) a - 1) y + 4 a = 0.
        let a: f64 = 0.002 * 35.0 / 4.0;
        let (qa, qb, qc) = (5.0 / 3.0 * a, 13.0 / 3.0 * a - 1.0, 4.0 * a);
        let y = (-qb - (qb * qb - 4.0 * qa * qc).sqrt()) / (2.0 * qa);
        // W_s = lambda_g (S^2 + (S - S_min)^2) / (2 (V - lambda_g S)) with S_min = S (eq. 11).
        let w_s = 0.002 * 35.0 * 35.0 / (2.0 * (1.0 - 0.002 * 35.0));
        // V-bar = 1 for V = 1 (eq. 13).
        let expected = 35.0 + w_s;
        let m = run(&scenario(8, 0, 1, 32), 0.002);
        assert!(rel(m.latency.unwrap(), expected) < 1e-12, "{:?} vs {expected}", m.latency);
        assert!(rel(m.blocking_probability.unwrap(), y) < 1e-9, "{:?} vs {y}", m);
        assert!((expected - 36.3172043).abs() < 1e-6, "{expected}");
    }

    #[test]
    fn hand_computed_point_scouting_k1_v2() {
        // k = 8 (D = 4), K = 1, V = 2, M = 32, lambda_g = 0.004, written out independently:
        // t = 0: C00 = D = 4. t = 1: level j = 1 is C_i = 4 - i; level j = 0 has
        // P = 1/(1 + 3) = 1/4 (E-SS-5) and C_3 = (1 - Pb_3/4)*0 + (Pb_3/4)*C_{2,1} + 1, ...
        let (rate, m, d) = (0.004, 32.0, 4usize);
        let pj = [0.0, 0.0, 2.0 / 3.0, 1.0];
        let mut y: f64 = 0.0;
        let mut latency = 0.0;
        for _ in 0..10_000 {
            let pb: Vec<f64> = pj.iter().map(|p| (1.0 - p) * y * y + p * y).collect();
            let lambda_c =
                rate * (4.0 + pb.iter().enumerate().map(|(i, b)| i as f64 * b).sum::<f64>()) / 4.0;
            let upper: Vec<f64> = (0..=d).map(|i| (d - i) as f64).collect();
            let mut c = vec![0.0; d + 1];
            for i in (1..d).rev() {
                let b = 0.25 * pb[i];
                c[i] = (1.0 - b) * c[i + 1] + b * upper[i - 1] + 1.0;
            }
            c[0] = c[1] + 1.0;
            let service = (4.0 + c[0]) / 2.0 + 1.0 + m; // mean_t C00 + (2K - 1) + M
            // Dally chain, V = 2: q = (1, rho, rho * lambda_c / (1/S - lambda_c)).
            let rho = lambda_c * service;
            let q2 = rho * lambda_c / (1.0 / service - lambda_c);
            let total = 1.0 + rho + q2;
            y = q2 / total;
            let v_bar = (rho + 4.0 * q2) / (rho + 2.0 * q2);
            let s_min = m + 1.0 + 4.0;
            let w_s = rate * (service * service + (service - s_min).powi(2))
                / (2.0 * (2.0 - rate * service));
            latency = (service + w_s) * v_bar;
        }
        let got = run(&scenario(8, 1, 2, 32), rate);
        assert!(rel(got.latency.unwrap(), latency) < 1e-9, "{:?} vs {latency}", got.latency);
        // Regression anchor (P_V = 0.0230328045...).
        assert!((latency - 48.632174367).abs() < 1e-8, "{latency}");
    }

    #[test]
    fn latency_increases_with_load_up_to_saturation() {
        super::super::test_support::assert_latency_rises_to_saturation(
            ModelName::ScoutingTorus,
            &section4(),
        );
    }

    #[test]
    fn restart_from_other_points_gives_the_same_answer() {
        for s in section4() {
            let model = Scouting::new(&s).unwrap();
            let sat =
                saturation_rate(ModelName::ScoutingTorus, &s, &ModelOptions::default()).unwrap();
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
        for (k, big_k) in [(32, 6), (64, 6), (64, 32)] {
            let s = scenario(k, big_k, 6, 32);
            let sat =
                saturation_rate(ModelName::ScoutingTorus, &s, &ModelOptions::default()).unwrap();
            assert!(sat > 0.0 && sat.is_finite());
            let m = run(&s, 0.9 * sat);
            assert!(m.latency.unwrap().is_finite());
        }
    }

    #[test]
    fn rejects_what_the_paper_does_not_cover() {
        let bad = |s: &Scenario| model_check(ModelName::ScoutingTorus, s).unwrap_err().0;
        assert!(bad(&scenario(7, 1, 1, 32)).contains("even radix"));
        let mut s = scenario(8, 1, 1, 32);
        s.routing = Routing::DimensionOrder;
        assert!(bad(&s).contains("adaptive"));
        let mut s = scenario(8, 1, 1, 32);
        s.switching = Switching::Circuit;
        assert!(bad(&s).contains("scouting"));
        let mut s = scenario(8, 1, 1, 32);
        s.topology = Topology::Torus { radix: 8, dimensions: 3 };
        assert!(bad(&s).contains("2-D"));
        let mut s = scenario(8, 1, 1, 32);
        s.fault_rate = 0.1;
        assert!(bad(&s).contains("fault_rate"));
        assert!(model_check(ModelName::ScoutingTorus, &scenario(8, 6, 6, 64)).is_ok());
    }
}
