//! Duato-Nbc fully adaptive wormhole routing in 2-D tori: Safaei, Khonsari, Fathy and
//! Ould-Khaoua, "Performance evaluation of fully adaptive routing for the torus interconnect
//! networks", ICCS 2007, LNCS 4490, pp. 606-613.
//!
//! `V = V1 + V2` virtual channels: `V1` fully adaptive, `V2` negative-hop escape classes with
//! bonus cards (E-NBC-1: default `V2 = k/2 + 1`, overridable by `escape_channels`). The model is
//! a fixed point in the channel service time `S_c` (errata "Common"):
//!
//! - `d = k/2`, `kbar = k/4` (eq. 2); `lambda_c = lambda_g d / 4` (eq. 3, E-NBC-6);
//! - a destination at hop vector `H` has `||H|| = h_x + h_y` hops, `h_x = min(o_x, k - o_x)`
//!   (eq. 4, 6); `S_H = M + ||H|| + sum_{h=1}^{||H||} Pblock_h W_c` (eq. 5, 7);
//! - `phi_h = 2 - Pphi_h` with `Pphi_h = 0` for `h < kbar`, `2/(d-h+1)` for `kbar <= h <= d-1`,
//!   1 for `h >= d` (eq. 8-10, E-NBC-2);
//! - at hop `h`, `Delta = ||H|| - h + 1` hops remain (E-NBC-4) and `U = V2 - ceil(Delta/2) + 1`
//!   escape VCs are usable; with `A(a) = sum_{v=a}^{V} P_v C(V-a, v-a)/C(V, v)` (all of a given
//!   set of `a` VCs busy), `Pblock1 = V1/(V1+U) A(V1+U)`,
//!   `Pblock2 = sum_{l=1}^{U-1} A(V1+U-l)/(V1+U)`, `Pblock3 = sum_{l=1}^{U} A(V1+U-l+1)/(V1+U)`
//!   and `Pblock_h = (Pblock1 + (Pblock2 + Pblock3)/2)^{phi_h}` (eq. 11-16, E-NBC-3). Collecting
//!   terms, the base is `((V1 + 1/2) A(V1+U) + sum_{a=V1+1}^{V1+U-1} A(a)) / (V1+U)`;
//! - `W_c` is the M/G/1 wait with the Draper–Ghosh variance, rate `lambda_c` and the
//!   traffic-weighted channel service time `S_c = sum_H ||H|| S_H / sum_H ||H||` (eq. 18,
//!   E-NBC-5), which is also the service time of Dally's chain (eq. 20-21);
//! - `S = mean_H S_H` over the `N - 1` destinations (eq. 17); `W_s` is the M/G/1 wait with rate
//!   `lambda_g/V` and `S` (eq. 19, E-NBC-7); latency `(S + W_s) V-bar` (eq. 1).
//!
//! `S_H` depends on `H` only through `||H||`, so the sum over the `N - 1` destinations is done
//! exactly, grouped by distance. Zero load gives `M + k^3 / (2 (k^2 - 1))`, the exact mean
//! distance (eq. 5 charges `M + ||H||`, not `M + ||H|| - 1`).

use super::fixed_point::{self, Infeasible, Outcome};
use super::queueing::{mg1_wait, vc_distribution};
use super::{
    Evaluator, ModelError, ModelInfo, ModelName, ParamInfo, ok_measurement, routing_error,
    switching_error, torus_radix,
};
use crate::measurement::Measurement;
use crate::scenario::{Ejection, Routing, Scenario, Switching};

/// Largest number of virtual channels accepted (the blocking table is `O(V^2)`).
const MAX_VCS: u32 = 1024;

/// `runner models` entry.
pub(crate) const INFO: ModelInfo = ModelInfo {
    name: ModelName::NbcTorus,
    paper: "F. Safaei, A. Khonsari, M. Fathy, M. Ould-Khaoua, \
            Performance evaluation of fully adaptive routing for the torus interconnect \
            networks, ICCS 2007, LNCS 4490, pp. 606-613",
    scenario: "k x k torus (even k), wormhole switching, Duato-Nbc routing with V1 adaptive and \
               V2 negative-hop escape VCs, fixed-length messages, uniform traffic",
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
            key: "virtual_channels",
            default: "10",
            unit: "",
            doc: "V = V1 + V2 > V2, at most 1024 (paper: 10)",
        },
        ParamInfo {
            key: "escape_channels",
            default: "k/2 + 1",
            unit: "",
            doc: "V2, the negative-hop escape classes, k/2 <= V2 < V (E-NBC-1)",
        },
        ParamInfo {
            key: "message_length",
            default: "32",
            unit: "flits",
            doc: "M, fixed (paper: 32, 64)",
        },
        ParamInfo { key: "routing", default: "nbc", unit: "", doc: "nbc only" },
        ParamInfo { key: "switching", default: "wormhole", unit: "", doc: "wormhole only" },
    ],
};

const NAME: &str = "nbc_torus";

/// `(k, V1, V2)` of a scenario the paper covers.
fn parameters(scenario: &Scenario) -> Result<(u32, u32, u32), ModelError> {
    let k = torus_radix(NAME, scenario)?;
    if scenario.switching != Switching::Wormhole {
        return Err(switching_error(NAME, scenario.switching, "wormhole"));
    }
    if scenario.routing != Routing::Nbc {
        return Err(routing_error(NAME, scenario.routing, "Duato-Nbc (`nbc`)"));
    }
    let v = scenario.virtual_channels;
    if v > MAX_VCS {
        return Err(ModelError(format!(
            "{NAME}: virtual_channels must be at most {MAX_VCS}, got {v}"
        )));
    }
    let (v2, origin) = match scenario.escape_channels {
        Some(v2) => (v2, format!("escape_channels = {v2}")),
        None => (k / 2 + 1, format!("default V2 = k/2 + 1 for k = {k}, E-NBC-1")),
    };
    if v2 < k / 2 {
        return Err(ModelError(format!(
            "{NAME}: needs V2 >= k/2 = {} escape channels, so that V2 - ceil(Delta/2) + 1 >= 1 \
             escape class is usable on a path of Delta = k = {k} remaining hops (E-NBC-1, \
             E-NBC-3): V2 = {v2} ({origin})",
            k / 2
        )));
    }
    if v <= v2 {
        return Err(ModelError(format!(
            "{NAME} needs V > V2 (at least one fully adaptive channel): V = {v}, V2 = {v2} \
             ({origin})"
        )));
    }
    Ok((k, v - v2, v2))
}

/// Applicability and parameter check for `nbc_torus`.
pub(crate) fn check(scenario: &Scenario) -> Result<(), ModelError> {
    parameters(scenario).map(drop)
}

/// The precomputed, load-independent part of the model.
#[derive(Clone, Debug)]
pub(crate) struct Nbc {
    /// `k`.
    k: usize,
    /// `d = k/2`.
    d: usize,
    /// `V`, `V1`, `V2`.
    vcs: usize,
    v1: usize,
    v2: usize,
    /// `M`.
    m: f64,
    /// `phi_h`, index `h = 1..=d` (`phi_h = 1` for `h >= d`).
    phi: Vec<f64>,
    /// Number of destinations at distance `L`, index `L = 0..=k` (`count[0] = 0`).
    count: Vec<f64>,
    /// `r[(a - V1 - 1) * (V + 1) + v] = C(V-a, v-a)/C(V, v)` for `a = V1+1..=V1+V2`.
    ratio: Vec<f64>,
    /// `sum_L count_L L` and `N - 1`.
    weight_total: f64,
    destinations: f64,
}

/// Scratch space for one solve, so that the map does not allocate.
struct Scratch {
    /// `P_v`, `v = 0..=V`.
    p: Vec<f64>,
    /// `A(a)` for `a = V1+1..=V1+V2` (index `a - V1 - 1`).
    all_busy: Vec<f64>,
    /// `Pblock` base for `c = ceil(Delta/2) = 1..=d` (index `c`).
    base: Vec<f64>,
    /// `table[h * (d + 1) + c] = base_c^{phi_h}` for `h = 1..=d`; row 0 is `ln base_c`.
    table: Vec<f64>,
    /// `S_H` by distance `L = 1..=k`.
    s_by_distance: Vec<f64>,
}

/// Everything the model derives from one value of `S_c` at one rate.
#[derive(Clone, Copy, Debug)]
struct State {
    lambda_c: f64,
    w_c: f64,
    blocking: f64,
    multiplexing: f64,
    /// The new traffic-weighted channel service time.
    s_c: f64,
    /// `S`, the plain mean over destinations (eq. 17).
    s_bar: f64,
}

impl Nbc {
    /// Precomputes the load-independent coefficients.
    pub(crate) fn new(scenario: &Scenario) -> Result<Nbc, ModelError> {
        let (k, v1, v2) = parameters(scenario)?;
        let (k, v1, v2) = (k as usize, v1 as usize, v2 as usize);
        let vcs = v1 + v2;
        let d = k / 2;
        let kbar = k as f64 / 4.0;
        let phi = (0..=d)
            .map(|h| {
                let p_phi = if h >= d {
                    1.0
                } else if (h as f64) < kbar {
                    0.0
                } else {
                    2.0 / (d - h + 1) as f64
                };
                2.0 - p_phi
            })
            .collect();
        // Destinations per one-dimensional distance: 1 at 0, 2 at 1..d-1, 1 at d (even k).
        let per_dim = |h: usize| if h == 0 || h == d { 1.0 } else { 2.0 };
        let mut count = vec![0.0; k + 1];
        for hx in 0..=d {
            for hy in 0..=d {
                if hx + hy > 0 {
                    count[hx + hy] += per_dim(hx) * per_dim(hy);
                }
            }
        }
        let mut ratio = vec![0.0; v2 * (vcs + 1)];
        for a in v1 + 1..=vcs {
            let row = &mut ratio[(a - v1 - 1) * (vcs + 1)..(a - v1) * (vcs + 1)];
            for (v, r) in row.iter_mut().enumerate().skip(a) {
                // C(V-a, v-a)/C(V, v) = prod_{i<a} (v - i)/(V - i).
                *r = (0..a).map(|i| (v - i) as f64 / (vcs - i) as f64).product();
            }
        }
        let weight_total = count.iter().enumerate().map(|(l, c)| l as f64 * c).sum();
        Ok(Nbc {
            k,
            d,
            vcs,
            v1,
            v2,
            m: f64::from(scenario.message_length),
            phi,
            count,
            ratio,
            weight_total,
            destinations: (k * k - 1) as f64,
        })
    }

    fn scratch(&self) -> Scratch {
        Scratch {
            p: vec![0.0; self.vcs + 1],
            all_busy: vec![0.0; self.v2],
            base: vec![0.0; self.d + 1],
            table: vec![0.0; (self.d + 1) * (self.d + 1)],
            s_by_distance: vec![0.0; self.k + 1],
        }
    }

    /// The zero-load channel service time `sum_L count_L L (M + L) / sum_L count_L L`.
    fn zero_load_service(&self) -> f64 {
        let num: f64 =
            self.count.iter().enumerate().map(|(l, c)| c * l as f64 * (self.m + l as f64)).sum();
        num / self.weight_total
    }

    /// Evaluates the model at channel service time `s_c`; fills `sc.s_by_distance`.
    fn state(&self, rate: f64, s_c: f64, sc: &mut Scratch) -> Result<State, Infeasible> {
        let (d, v1) = (self.d, self.v1);
        let lambda_c = rate * d as f64 / 4.0;
        let infeasible = Infeasible {
            what: "channel utilisation lambda_c S_c (eq. 18, 20)",
            value: lambda_c * s_c,
        };
        let chain = vc_distribution(lambda_c, s_c, &mut sc.p).ok_or(infeasible)?;
        let w_c = mg1_wait(lambda_c, s_c, self.m).ok_or(infeasible)?;
        // A(a), a = V1+1..=V.
        for (idx, out) in sc.all_busy.iter_mut().enumerate() {
            let a = v1 + 1 + idx;
            let row = &self.ratio[idx * (self.vcs + 1)..(idx + 1) * (self.vcs + 1)];
            *out = (a..=self.vcs).map(|v| sc.p[v] * row[v]).sum();
        }
        // Base of Pblock for c = ceil(Delta/2) (E-NBC-3). U = V2 - c + 1 grows as c falls, so
        // walk c downwards keeping `partial = sum_{a=V1+1}^{V1+U-1} A(a)`.
        let mut partial: f64 = sc.all_busy[..self.v2 - d].iter().sum();
        for c in (1..=d).rev() {
            let u = self.v2 - c + 1;
            sc.base[c] = ((v1 as f64 + 0.5) * sc.all_busy[u - 1] + partial) / (v1 + u) as f64;
            partial += sc.all_busy[u - 1];
        }
        // table[h][c] = base_c^{phi_h}; row 0 holds ln(base_c) for the fractional exponents.
        for c in 1..=d {
            sc.table[c] = sc.base[c].ln();
        }
        for h in 1..=d {
            let phi = self.phi[h];
            for c in 1..=d {
                let b = sc.base[c];
                sc.table[h * (d + 1) + c] = if phi == 2.0 {
                    b * b
                } else if phi == 1.0 {
                    b
                } else if b > 0.0 {
                    (phi * sc.table[c]).exp()
                } else {
                    0.0
                };
            }
        }
        let (mut weighted, mut plain) = (0.0, 0.0);
        for l in 1..=self.k {
            let mut blocking = 0.0;
            for h in 1..=l {
                let delta = l - h + 1;
                blocking += sc.table[h.min(d) * (d + 1) + delta.div_ceil(2)];
            }
            let s_h = self.m + l as f64 + blocking * w_c;
            sc.s_by_distance[l] = s_h;
            weighted += self.count[l] * l as f64 * s_h;
            plain += self.count[l] * s_h;
        }
        Ok(State {
            lambda_c,
            w_c,
            blocking: chain.blocking,
            multiplexing: chain.multiplexing,
            s_c: weighted / self.weight_total,
            s_bar: plain / self.destinations,
        })
    }
}

/// A converged point.
#[derive(Clone, Copy, Debug)]
struct Solved {
    /// The fixed point `S_c`.
    s_c: f64,
    iterations: u32,
    st: State,
    w_s: f64,
}

impl Nbc {
    /// Solves the fixed point in `S_c` from `start` (zero load when `None`).
    fn fixed_point(&self, rate: f64, start: Option<f64>, sc: &mut Scratch) -> Outcome {
        fixed_point::solve(start.unwrap_or_else(|| self.zero_load_service()), |s_c| {
            self.state(rate, s_c, sc).map(|st| st.s_c)
        })
    }

    /// Solves at `rate` from `start`; the saturated measurement when there is no stable point.
    fn evaluate(&self, rate: f64, start: Option<f64>, sc: &mut Scratch) -> Result<Solved, String> {
        let (s_c, iterations) = match self.fixed_point(rate, start, sc) {
            Outcome::Converged { x, evaluations } => (x, evaluations),
            other => return Err(other.saturation_detail(rate, "S_c")),
        };
        let st = self.state(rate, s_c, sc).map_err(|e| {
            format!("{} = {:.6} >= 1 at the fixed point, rate {rate}", e.what, e.value)
        })?;
        let v = self.vcs as f64;
        let Some(w_s) = mg1_wait(rate / v, st.s_bar, self.m) else {
            return Err(format!(
                "source queue utilisation (lambda_g/V) S = {:.6} >= 1 at rate {rate} (eq. 19)",
                rate * st.s_bar / v
            ));
        };
        Ok(Solved { s_c, iterations, st, w_s })
    }

    /// The measurement for the fixed point reached from `start`.
    fn measure_from(&self, rate: f64, start: Option<f64>) -> Measurement {
        let mut sc = self.scratch();
        let Solved { iterations, st, w_s, .. } = match self.evaluate(rate, start, &mut sc) {
            Ok(solved) => solved,
            Err(detail) => return Measurement::saturated(detail),
        };
        let mean_distance = (self.weight_total) / self.destinations;
        let mut m = ok_measurement(rate);
        m.latency = Some((st.s_bar + w_s) * st.multiplexing);
        m.network_latency = Some(st.s_bar);
        m.source_wait = Some(w_s);
        m.multiplexing_degree = Some(st.multiplexing);
        m.channel_rate = Some(st.lambda_c);
        m.blocking_probability = Some(st.blocking);
        m.hops = Some(mean_distance);
        let mut im = vec![
            ("p_v".to_string(), st.blocking),
            ("lambda_c".to_string(), st.lambda_c),
            ("s_c".to_string(), st.s_c),
            ("s_bar".to_string(), st.s_bar),
            ("w_c".to_string(), st.w_c),
            ("w_s".to_string(), w_s),
            ("v_bar".to_string(), st.multiplexing),
            ("v1".to_string(), self.v1 as f64),
            ("v2".to_string(), self.v2 as f64),
            ("iterations".to_string(), f64::from(iterations)),
        ];
        im.extend((1..=self.d).map(|c| (format!("pblock_base_{c}"), sc.base[c])));
        im.extend((1..=self.k).map(|l| (format!("s_h_{l}"), sc.s_by_distance[l])));
        m.intermediates = im;
        m
    }
}

impl Evaluator for Nbc {
    fn stable(&self, rate: f64, start: Option<f64>) -> Option<f64> {
        self.evaluate(rate, start, &mut self.scratch()).ok().map(|solved| solved.s_c)
    }

    fn measure(&self, rate: f64) -> Measurement {
        self.measure_from(rate, None)
    }

    fn saturated_bound(&self) -> f64 {
        // lambda_c = lambda_g d / 4 and S_c >= M, so lambda_c S_c >= 1 here.
        4.0 / (self.d as f64 * self.m)
    }

    /// The curve ends at a saddle-node of the channel-service fixed point `S_c = F(S_c)` (eqs.
    /// 18, 20): as the rate rises, the stable fixed point and an unstable one above it move
    /// together and merge at the saturation rate, where `F'(S_c) = 1`; past it `F(S_c) > S_c`
    /// everywhere and the iteration runs away. Below it every queue is stable (channel and
    /// source utilisations under 1), so the latency ends at a finite value, not at a
    /// divergence of the source queue (eq. 19). Shown from the last stable point, a relative
    /// 1e-6 below the saturation rate.
    fn mechanism(&self, saturation: f64) -> Option<String> {
        let rate = saturation * (1.0 - 1e-6);
        let mut sc = self.scratch();
        let solved = self.evaluate(rate, None, &mut sc).ok()?;
        let x = solved.s_c;
        let h = 1e-6 * x;
        let mut f = |s: f64| self.state(rate, s, &mut sc).ok().map(|st| st.s_c);
        let slope = (f(x + h)? - f(x - h)?) / (2.0 * h);
        let measured = self.measure_from(rate, None);
        let latency = measured.latency?;
        Some(format!(
            "a saddle-node of the channel-service fixed point S_c = F(S_c) (eqs. 18, 20): just \
             below the saturation rate the stable fixed point is S_c = {x:.4} cycles with \
             F'(S_c) = {slope:.4} (it merges with an unstable one where F' = 1; above, F(S_c) > \
             S_c everywhere and the iteration runs away). There the channel utilisation \
             lambda_c S_c = {:.4} and the source-queue utilisation (lambda_g/V) S = {:.4} are \
             both below 1, so the latency curve ends at a finite {latency:.2} cycles rather \
             than diverging",
            solved.st.lambda_c * x,
            rate * solved.st.s_bar / self.vcs as f64,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelOptions, check as model_check, saturation_rate, solve};
    use crate::scenario::Topology;

    fn scenario(k: u32, v: u32, m: u32) -> Scenario {
        let mut s = Scenario::new(Topology::Torus { radix: k, dimensions: 2 });
        s.routing = Routing::Nbc;
        s.virtual_channels = v;
        s.message_length = m;
        s
    }

    fn run(s: &Scenario, rate: f64) -> Measurement {
        solve(ModelName::NbcTorus, s, rate, &ModelOptions::default()).unwrap()
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Section 4: 8x8 and 16x16, V = 10, M = 32, 64 (plus the V2 = k/2 variant of E-NBC-1).
    fn section4() -> Vec<Scenario> {
        let mut out = Vec::new();
        for k in [8, 16] {
            for m in [32, 64] {
                out.push(scenario(k, 10, m));
                let mut s = scenario(k, 10, m);
                s.escape_channels = Some(k / 2);
                out.push(s);
            }
        }
        out
    }

    /// The curve ends at a saddle-node of the S_c fixed point: just below saturation F' is
    /// close to 1 while the channel and source utilisations are both well below 1.
    #[test]
    fn saturation_is_a_saddle_node_of_the_channel_service_fixed_point() {
        for (k, m) in [(8, 32), (16, 64)] {
            let s = scenario(k, 10, m);
            let options = ModelOptions::default();
            let rate = saturation_rate(ModelName::NbcTorus, &s, &options).unwrap();
            let text = crate::model::saturation_mechanism(ModelName::NbcTorus, &s, &options, rate)
                .unwrap()
                .unwrap();
            assert!(text.contains("saddle-node"), "{text}");
            let number_after = |key: &str| -> f64 {
                let rest = &text[text.find(key).unwrap() + key.len()..];
                rest.split_whitespace()
                    .next()
                    .unwrap()
                    .trim_end_matches(['.', ','])
                    .parse()
                    .unwrap()
            };
            let slope = number_after("F'(S_c) = ");
            assert!((0.98..1.0).contains(&slope), "{slope}");
            assert!(number_after("lambda_c S_c = ") < 0.8);
            assert!(number_after("(lambda_g/V) S = ") < 0.1);
        }
    }

    #[test]
    fn zero_load_is_m_plus_exact_mean_distance() {
        // Eq. (5) charges M + ||H||; the mean of ||H|| over the N - 1 destinations of an even-k
        // torus is k^3 / (2 (k^2 - 1)) (8x8: 512/126 = 4.0635, not d = 4).
        for k in [4, 8, 16, 64] {
            let s = scenario(k, k / 2 + 2, 32);
            let l = run(&s, 0.0).latency.unwrap();
            let kf = f64::from(k);
            let expected = 32.0 + kf * kf * kf / (2.0 * (kf * kf - 1.0));
            assert!(rel(l, expected) < 1e-14, "k={k}: {l} vs {expected}");
        }
        assert!(rel(run(&scenario(8, 10, 32), 0.0).latency.unwrap(), 32.0 + 512.0 / 126.0) < 1e-14);
    }

    /// Binomial coefficient as f64.
    fn binom(n: usize, r: usize) -> f64 {
        (0..r).map(|i| (n - i) as f64 / (r - i) as f64).product()
    }

    #[test]
    fn hand_computed_light_load_point() {
        // k = 8 (d = 4, kbar = 2), V = 10, V1 = V2 = 5, M = 32, lambda_g = 0.004, written
        // out independently: every one of the 63 destinations, the class formulas of E-NBC-3
        // with binomials, and a plain iteration on S_c.
        let (k, v, v1, v2, m, rate) = (8usize, 10usize, 5usize, 5usize, 32.0, 0.004);
        let lambda_c = rate * 4.0 / 4.0; // eq. (3): lambda_g d / 4
        let phi = |h: usize| match h {
            1 => 2.0,             // h < kbar
            2 => 2.0 - 2.0 / 3.0, // 2/(d - h + 1)
            3 => 1.0,             // 2/(4 - 3 + 1) = 1
            _ => 1.0,             // h >= d (E-NBC-2)
        };
        let dist = |o: usize| o.min(k - o);
        let mut s_c: f64 = 0.0;
        let mut latency = 0.0;
        for iteration in 0..2000 {
            if iteration == 0 {
                // Zero-load start: traffic-weighted M + ||H||.
                let (mut num, mut den) = (0.0, 0.0);
                for ox in 0..k {
                    for oy in 0..k {
                        let l = (dist(ox) + dist(oy)) as f64;
                        num += l * (m + l);
                        den += l;
                    }
                }
                s_c = num / den;
            }
            // Dally chain (eq. 20).
            let rho = lambda_c * s_c;
            let mut q = vec![1.0];
            for i in 1..v {
                q.push(q[i - 1] * rho);
            }
            q.push(q[v - 1] * lambda_c / (1.0 / s_c - lambda_c));
            let total: f64 = q.iter().sum();
            let p: Vec<f64> = q.iter().map(|x| x / total).collect();
            let all_busy = |a: usize| -> f64 {
                (a..=v).map(|x| p[x] * binom(v - a, x - a) / binom(v, x)).sum()
            };
            let w_c = lambda_c * s_c * s_c * (1.0 + (s_c - m).powi(2) / (s_c * s_c))
                / (2.0 * (1.0 - lambda_c * s_c));
            let (mut num, mut den, mut sum_s) = (0.0, 0.0, 0.0);
            for ox in 0..k {
                for oy in 0..k {
                    let len = dist(ox) + dist(oy);
                    if len == 0 {
                        continue;
                    }
                    let mut s_h = m + len as f64;
                    for h in 1..=len {
                        let delta = len - h + 1;
                        let u = v2 - delta.div_ceil(2) + 1;
                        let pv = 1.0 / (v1 + u) as f64;
                        let b1 = v1 as f64 * pv * all_busy(v1 + u);
                        let b2: f64 = (1..u).map(|l| pv * all_busy(v1 + u - l)).sum();
                        let b3: f64 = (1..=u).map(|l| pv * all_busy(v1 + u - l + 1)).sum();
                        let base: f64 = b1 + (b2 + b3) / 2.0;
                        s_h += base.powf(phi(h)) * w_c;
                    }
                    num += len as f64 * s_h;
                    den += len as f64;
                    sum_s += s_h;
                }
            }
            let s_bar = sum_s / 63.0;
            let w_s = (rate / 10.0) * s_bar * s_bar * (1.0 + (s_bar - m).powi(2) / (s_bar * s_bar))
                / (2.0 * (1.0 - rate / 10.0 * s_bar));
            let v_bar = (1..=v).map(|i| (i * i) as f64 * p[i]).sum::<f64>()
                / (1..=v).map(|i| i as f64 * p[i]).sum::<f64>();
            latency = (s_bar + w_s) * v_bar;
            s_c = num / den;
        }
        let got = run(&scenario(8, 10, 32), rate);
        assert!(rel(got.latency.unwrap(), latency) < 1e-9, "{:?} vs {latency}", got.latency);
        // Regression anchor.
        assert!((latency - 48.852737229).abs() < 1e-8, "{latency}");
    }

    #[test]
    fn latency_increases_with_load_up_to_saturation() {
        super::super::test_support::assert_latency_rises_to_saturation(
            ModelName::NbcTorus,
            &section4(),
        );
    }

    #[test]
    fn restart_from_other_points_gives_the_same_answer() {
        for s in section4() {
            let model = Nbc::new(&s).unwrap();
            let sat = saturation_rate(ModelName::NbcTorus, &s, &ModelOptions::default()).unwrap();
            for frac in [0.3, 0.7, 0.95] {
                let rate = frac * sat;
                let base = model.measure_from(rate, None);
                let x = base.intermediate("s_c").unwrap();
                for start in [0.5 * x, 1.02 * x] {
                    let other = model.measure_from(rate, Some(start));
                    let (a, b) = (base.latency.unwrap(), other.latency.unwrap());
                    assert!(rel(a, b) < 1e-9, "{s:?} rate={rate} start={start}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn large_tori_are_finite_and_saturate() {
        for (k, v) in [(32, 18), (64, 34), (64, 40)] {
            let s = scenario(k, v, 32);
            let sat = saturation_rate(ModelName::NbcTorus, &s, &ModelOptions::default()).unwrap();
            assert!(sat > 0.0 && sat.is_finite());
            assert!(run(&s, 0.9 * sat).latency.unwrap().is_finite());
        }
    }

    #[test]
    fn rejects_what_the_paper_does_not_cover() {
        let bad = |s: &Scenario| model_check(ModelName::NbcTorus, s).unwrap_err().0;
        assert_eq!(
            bad(&scenario(8, 4, 32)),
            "nbc_torus needs V > V2 (at least one fully adaptive channel): V = 4, V2 = 5 \
             (default V2 = k/2 + 1 for k = 8, E-NBC-1)"
        );
        let mut s = scenario(8, 10, 32);
        s.escape_channels = Some(3);
        assert!(bad(&s).contains("V2 >= k/2 = 4"));
        let mut s = scenario(8, 10, 32);
        s.escape_channels = Some(10);
        assert!(bad(&s).contains("V = 10, V2 = 10 (escape_channels = 10)"));
        assert!(bad(&scenario(9, 10, 32)).contains("even radix"));
        let mut s = scenario(8, 10, 32);
        s.routing = Routing::Duato;
        assert!(bad(&s).contains("nbc"));
        let mut s = scenario(8, 10, 32);
        s.switching = Switching::Circuit;
        assert!(bad(&s).contains("wormhole"));
        assert!(model_check(ModelName::NbcTorus, &scenario(16, 10, 64)).is_ok());
    }
}
