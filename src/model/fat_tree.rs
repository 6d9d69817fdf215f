//! Butterfly fat-tree with wormhole switching: Greenberg and Guan, "An improved analytical model
//! for wormhole routed networks with application to butterfly fat-trees", Proc. ICPP 1997,
//! pp. 44-48.
//!
//! `N = 4^n` processors at level 0, switches at levels 1..n, two parent links per switch. A
//! message climbs to the lowest common ancestor level (choosing either up link: a two-server
//! queue) and descends (one down link per level: a single-server queue). Channels are labelled
//! `<i,j>` (from level i to level j); here `up[l]` is `<l-1,l>` and `down[l]` is `<l,l-1>`.
//!
//! Equations, in evaluation order (direct, no iteration, E-BFT-5):
//! - rates, eq. (14)-(15): `lambda_{l-1,l} = lambda_{l,l-1} = lambda_0 2^{l-1} (4^n - 4^{l-1}) /
//!   (4^n - 1)`;
//! - down channels from the leaves upward, eq. (16)-(19): `x_{1,0} = M` (E-BFT-8: `s/f = M`),
//!   `x_{l+1,l} = x_{l,l-1} + (1 - lambda_{l+1,l} / (4 lambda_{l,l-1})) W_{l,l-1}`, every `W` of a
//!   down channel the M/G/1 wait of eq. (6) (Draper–Ghosh variance, eq. 5);
//! - the top up channel, eq. (20): `x_{n-1,n} = x_{n,n-1} + (2/3) W_{n,n-1}` (E-BFT-4: the rate
//!   ratio is 1);
//! - the other up channels from the root down, eq. (22) for `1 <= l <= n-1` (E-BFT-2), with
//!   `R = (4^n - 4^l) / (4^n - 4^{l-1})` (E-BFT-3; the literal
//!   `P_l^up = (4^n - 4^l)/(4^n - 1)` with [`ModelOptions::literal_eq22`]):
//!   `x_{l-1,l} = R [x_{l,l+1} + (1 - R lambda_{l-1,l}/lambda_{l,l+1}) W_{l,l+1}]
//!   + (1-R) [x_{l,l-1} + (1 - (1-R)/3) W_{l,l-1}]`;
//! - waits of up channels `<l-1,l>`, `l >= 2`: Hokstad's M/G/2, eq. (8), in the total rate
//!   `2 lambda_{l-1,l}` of the two links (E-BFT-1, the "Correction Insert: 2" of eq. 21/23);
//!   the injection channel `<0,1>` is M/G/1, eq. (24) (also when `n = 1`, where it is the top
//!   channel of eq. 20);
//! - latency, eq. (25): `L = W_{0,1} + x_{0,1} + D - 1`, with the mean distance
//!   `D = sum_{h=1}^n 2h (4^h - 4^{h-1}) / (4^n - 1)` links (E-BFT-6);
//! - maximum throughput, Sec. 3.5 / eq. (26): the `lambda_0` with `lambda_0 x_{0,1}(lambda_0) = 1`,
//!   bracketed by scanning in steps of `0.01/M`, then bisected (E-BFT-7).
//!
//! The point is saturated as soon as any channel's utilisation reaches 1 (for the two-server
//! up channels: `lambda_{l-1,l} x_{l-1,l} >= 1`); the injection channel is always the first.

use super::queueing::{mg1_wait, mg2_wait};
use super::{
    Evaluator, ModelError, ModelInfo, ModelName, ModelOptions, ParamInfo, ok_measurement,
    routing_error, switching_error,
};
use crate::measurement::Measurement;
use crate::scenario::{Ejection, Routing, Scenario, Switching, Topology};

/// Largest number of levels: `N = 4^15` is the largest power of 4 in a `u32`.
const MAX_LEVELS: usize = 15;

/// `runner models` entry.
pub(crate) const INFO: ModelInfo = ModelInfo {
    name: ModelName::FatTree,
    paper: "R. I. Greenberg and L. Guan, An improved analytical \
            model for wormhole routed networks with application to butterfly fat-trees, \
            Proc. ICPP 1997, pp. 44-48",
    scenario: "butterfly fat-tree, N = 4^n processors, wormhole switching, up/down routing, \
               fixed-length messages, uniform traffic",
    ejection: Ejection::Unlimited,
    ejection_quote: "Messages arriving at destinations are immediately consumed",
    params: &[
        ParamInfo {
            key: "processors",
            default: "1024",
            unit: "processors",
            doc: "N, a power of 4 (4 .. 4^15); the paper validates up to 1024",
        },
        ParamInfo {
            key: "message_length",
            default: "32",
            unit: "flits",
            doc: "M = s/f, the worm length (paper: 16, 32, 64)",
        },
        ParamInfo {
            key: "routing",
            default: "up_down",
            unit: "",
            doc: "up_down only (up either parent link, then down)",
        },
        ParamInfo { key: "switching", default: "wormhole", unit: "", doc: "wormhole only" },
        ParamInfo {
            key: "virtual_channels",
            default: "1",
            unit: "",
            doc: "must be 1: the paper has no virtual channels",
        },
    ],
};

/// Checks that the scenario is a butterfly fat-tree the paper covers; returns the number of
/// levels `n = log4 N`.
fn levels(scenario: &Scenario) -> Result<usize, ModelError> {
    const NAME: &str = "fat_tree";
    let Topology::FatTree { processors } = scenario.topology else {
        return Err(ModelError(format!(
            "{NAME}: the paper models the butterfly fat-tree only, got topology `{}`",
            scenario.topology.kind()
        )));
    };
    let is_power_of_4 = processors.is_power_of_two() && processors.trailing_zeros() % 2 == 0;
    if processors < 4 || !is_power_of_4 {
        return Err(ModelError(format!(
            "{NAME}: processors must be a power of 4 and at least 4 (N = 4^n with n levels of \
             switches), got {processors}"
        )));
    }
    if scenario.switching != Switching::Wormhole {
        return Err(switching_error(NAME, scenario.switching, "wormhole"));
    }
    if scenario.routing != Routing::UpDown {
        return Err(routing_error(NAME, scenario.routing, "up_down (up to a common ancestor)"));
    }
    if scenario.virtual_channels != 1 {
        return Err(ModelError(format!(
            "{NAME}: the paper has one channel per link (no virtual channels), so \
             virtual_channels must be 1, got {}",
            scenario.virtual_channels
        )));
    }
    if let Some(v2) = scenario.escape_channels {
        return Err(ModelError(format!(
            "{NAME}: up/down routing has no escape channels, so escape_channels must be unset, \
             got {v2}"
        )));
    }
    Ok(processors.trailing_zeros() as usize / 2)
}

/// Applicability and parameter check for `fat_tree`.
pub(crate) fn check(scenario: &Scenario) -> Result<(), ModelError> {
    levels(scenario).map(drop)
}

/// The precomputed, load-independent part of the model.
#[derive(Clone, Debug)]
pub(crate) struct FatTree {
    /// Number of switch levels `n`.
    n: usize,
    /// Message length `M` in flits.
    m: f64,
    /// `rate[l] = lambda_{l-1,l} / lambda_0` (eq. 14), `l = 1..=n`.
    rate: [f64; MAX_LEVELS + 1],
    /// `R` of eq. (22) for the up channel `<l-1,l>`, `l = 1..n-1` (E-BFT-3 or literal).
    r_up: [f64; MAX_LEVELS + 1],
    /// Mean distance `D` in links (E-BFT-6).
    mean_distance: f64,
}

/// Mean service times and waits of every channel at one load (index = level `l`).
#[derive(Clone, Copy, Debug)]
struct Channels {
    x_up: [f64; MAX_LEVELS + 1],
    w_up: [f64; MAX_LEVELS + 1],
    x_down: [f64; MAX_LEVELS + 1],
    w_down: [f64; MAX_LEVELS + 1],
}

/// A channel whose utilisation reached 1.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Overloaded {
    /// `true` for `<l-1,l>`, `false` for `<l,l-1>`.
    up: bool,
    /// The level `l`.
    level: usize,
    /// Per-link utilisation `lambda x`.
    utilisation: f64,
}

impl FatTree {
    /// Precomputes rates, branching probabilities and the mean distance.
    pub(crate) fn new(scenario: &Scenario, options: &ModelOptions) -> Result<FatTree, ModelError> {
        let n = levels(scenario)?;
        let p4 = |e: usize| 4f64.powi(e as i32);
        let total = p4(n);
        let mut rate = [0.0; MAX_LEVELS + 1];
        let mut r_up = [0.0; MAX_LEVELS + 1];
        for l in 1..=n {
            rate[l] = 2f64.powi(l as i32 - 1) * (total - p4(l - 1)) / (total - 1.0);
            if l < n {
                r_up[l] = if options.literal_eq22 {
                    (total - p4(l)) / (total - 1.0)
                } else {
                    (total - p4(l)) / (total - p4(l - 1))
                };
            }
        }
        let mean_distance =
            (1..=n).map(|h| 2.0 * h as f64 * (p4(h) - p4(h - 1)) / (total - 1.0)).sum::<f64>();
        Ok(FatTree { n, m: f64::from(scenario.message_length), rate, r_up, mean_distance })
    }

    /// Every channel except the injection channel's own wait `W_{0,1}`, at `lambda0`.
    fn channels(&self, lambda0: f64) -> Result<Channels, Overloaded> {
        let (n, m) = (self.n, self.m);
        let zero = [0.0; MAX_LEVELS + 1];
        let mut c = Channels { x_up: zero, w_up: zero, x_down: zero, w_down: zero };
        // Down channels, eq. (16)-(19).
        c.x_down[1] = m;
        for l in 1..=n {
            let lambda = lambda0 * self.rate[l];
            c.w_down[l] = mg1_wait(lambda, c.x_down[l], m).ok_or(Overloaded {
                up: false,
                level: l,
                utilisation: lambda * c.x_down[l],
            })?;
            if l < n {
                let ratio = self.rate[l + 1] / self.rate[l];
                c.x_down[l + 1] = c.x_down[l] + (1.0 - 0.25 * ratio) * c.w_down[l];
            }
        }
        // Top up channel, eq. (20); its wait (l >= 2) by eq. (21) with E-BFT-1.
        c.x_up[n] = c.x_down[n] + (2.0 / 3.0) * c.w_down[n];
        for l in (1..=n).rev() {
            if l < n {
                // Eq. (22), E-BFT-3/E-BFT-4.
                let r = self.r_up[l];
                let ratio = self.rate[l] / self.rate[l + 1];
                c.x_up[l] = r * (c.x_up[l + 1] + (1.0 - ratio * r) * c.w_up[l + 1])
                    + (1.0 - r) * (c.x_down[l] + (1.0 - (1.0 - r) / 3.0) * c.w_down[l]);
            }
            if l >= 2 {
                // Eq. (23) with E-BFT-1: total rate of the two-server channel.
                let lambda = lambda0 * self.rate[l];
                c.w_up[l] = mg2_wait(2.0 * lambda, c.x_up[l], m).ok_or(Overloaded {
                    up: true,
                    level: l,
                    utilisation: lambda * c.x_up[l],
                })?;
            }
        }
        Ok(c)
    }

    /// Maximum throughput of Sec. 3.5 (eq. 26, E-BFT-7): the root of `lambda_0 x_{0,1} = 1`.
    pub(crate) fn max_throughput(&self) -> f64 {
        // `lambda x_{0,1}(lambda) - 1` is increasing; an overloaded inner channel counts as above.
        let above = |lambda: f64| match self.channels(lambda) {
            Ok(c) => lambda * c.x_up[1] >= 1.0,
            Err(_) => true,
        };
        let step = 0.01 / self.m;
        let mut lo = 0.0;
        let mut hi = step;
        // x_{0,1} >= M, so lambda = 1/M is always at or above the root: at most 100 steps.
        while !above(hi) {
            lo = hi;
            hi += step;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if above(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// The injection wait `W_{0,1}` (eq. 24) and the channels, or the first overloaded channel.
    fn evaluate(&self, lambda0: f64) -> Result<(f64, Channels), Overloaded> {
        let c = self.channels(lambda0)?;
        let w01 = mg1_wait(lambda0, c.x_up[1], self.m).ok_or(Overloaded {
            up: true,
            level: 1,
            utilisation: lambda0 * c.x_up[1],
        })?;
        Ok((w01, c))
    }
}

impl Evaluator for FatTree {
    fn stable(&self, rate: f64, _start: Option<f64>) -> Option<f64> {
        self.evaluate(rate).ok().map(|_| 0.0)
    }

    fn measure(&self, rate: f64) -> Measurement {
        let max_throughput = self.max_throughput();
        let (w01, c) = match self.evaluate(rate) {
            Ok(v) => v,
            Err(o) => {
                let what = if o.level == 1 && o.up {
                    "the injection channel <0,1> (M/G/1, eq. 24)".to_string()
                } else if o.up {
                    format!(
                        "the up channel <{},{}> (two links, M/G/2, eq. 23)",
                        o.level - 1,
                        o.level
                    )
                } else {
                    format!("the down channel <{},{}> (M/G/1, eq. 19)", o.level, o.level - 1)
                };
                let mut m = Measurement::saturated(format!(
                    "utilisation of {what} is {:.6} >= 1 at rate {rate}; the Sec. 3.5 maximum \
                     throughput is {max_throughput:.9}",
                    o.utilisation
                ));
                m.hops = Some(self.mean_distance);
                m.intermediates.push(("max_throughput".into(), max_throughput));
                return m;
            }
        };
        let x01 = c.x_up[1];
        let network = x01 + self.mean_distance - 1.0;
        let mut m = ok_measurement(rate);
        m.latency = Some(w01 + network);
        m.network_latency = Some(network);
        m.source_wait = Some(w01);
        m.hops = Some(self.mean_distance);
        m.channel_rate = Some(rate);
        let mut im = Vec::with_capacity(2 + 7 * self.n);
        im.push(("max_throughput".to_string(), max_throughput));
        im.push(("levels".to_string(), self.n as f64));
        for l in 1..=self.n {
            let lambda = rate * self.rate[l];
            im.push((format!("lambda_up_{l}"), lambda));
            im.push((format!("x_up_{l}"), c.x_up[l]));
            im.push((format!("w_up_{l}"), if l == 1 { w01 } else { c.w_up[l] }));
            if l < self.n {
                im.push((format!("r_up_{l}"), self.r_up[l]));
            }
            im.push((format!("lambda_down_{l}"), lambda));
            im.push((format!("x_down_{l}"), c.x_down[l]));
            im.push((format!("w_down_{l}"), c.w_down[l]));
        }
        m.intermediates = im;
        m
    }

    fn saturated_bound(&self) -> f64 {
        // x_{0,1} >= M, so the injection channel is saturated at 1/M.
        1.0 / self.m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::Status;
    use crate::model::{self, saturation_rate, solve};

    fn scenario(processors: u32, m: u32) -> Scenario {
        let mut s = Scenario::new(Topology::FatTree { processors });
        s.routing = Routing::UpDown;
        s.message_length = m;
        s
    }

    fn latency(processors: u32, m: u32, rate: f64) -> Option<f64> {
        solve(ModelName::FatTree, &scenario(processors, m), rate, &ModelOptions::default())
            .unwrap()
            .latency
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn zero_load_is_m_plus_mean_distance_minus_one() {
        // N = 4: D = 2*1*3/3 = 2; N = 16: D = (2*3 + 4*12)/15 = 3.6;
        // N = 64: D = (2*3 + 4*12 + 6*48)/63 = 342/63.
        for (n, d) in [(4, 2.0), (16, 3.6), (64, 342.0 / 63.0)] {
            for m in [16, 32, 64] {
                let l = latency(n, m, 0.0).unwrap();
                assert!(rel(l, f64::from(m) + d - 1.0) < 1e-14, "N={n} M={m}: {l}");
            }
        }
        for levels in 1..=8u32 {
            let n = 4u32.pow(levels);
            let p4 = |e: u32| 4f64.powi(e as i32);
            let d: f64 = (1..=levels)
                .map(|h| 2.0 * f64::from(h) * (p4(h) - p4(h - 1)) / (p4(levels) - 1.0))
                .sum();
            assert!(rel(latency(n, 32, 0.0).unwrap(), 31.0 + d) < 1e-14);
        }
    }

    #[test]
    fn hand_computed_point_n4() {
        // N = 4 (n = 1), M = 32, lambda_0 = 0.01; the only channels are <0,1> and <1,0>.
        // x_{1,0} = 32, W_{1,0} = 0.01 * 32^2 / (2 (1 - 0.32)) = 10.24 / 1.36 (eq. 6, C^2 = 0).
        let w10 = 10.24 / 1.36;
        // Eq. (20): x_{0,1} = x_{1,0} + (2/3) W_{1,0}.
        let x01 = 32.0 + 2.0 / 3.0 * w10;
        // Eq. (24): M/G/1 with the Draper-Ghosh variance (x_{0,1} - 32)^2.
        let w01 = 0.01 * (x01 * x01 + (x01 - 32.0) * (x01 - 32.0)) / (2.0 * (1.0 - 0.01 * x01));
        // Eq. (25) with D = 2.
        let expected = w01 + x01 + 1.0;
        assert!(rel(latency(4, 32, 0.01).unwrap(), expected) < 1e-14);
        // Numerically: x01 = 37.0196078..., W01 = 11.0800...; latency 49.09962640... .
        assert!((expected - 49.0996264).abs() < 1e-6, "{expected}");
    }

    #[test]
    fn hand_computed_point_n16() {
        // N = 16 (n = 2), M = 16, lambda_0 = 0.01.
        let (m, l0) = (16.0_f64, 0.01_f64);
        // Eq. (14): lambda_{0,1} = 0.01, lambda_{1,2} = 0.01 * 2 * (16 - 4)/15 = 0.016.
        let (l01, l12) = (l0, l0 * 2.0 * 12.0 / 15.0);
        // Down: x_{1,0} = 16, W_{1,0} = M/G/1(0.01, 16) = 0.01*256/(2*0.84).
        let w10 = 0.01 * 256.0 / (2.0 * (1.0 - 0.16));
        // Eq. (18): x_{2,1} = x_{1,0} + (1 - lambda_{2,1}/(4 lambda_{1,0})) W_{1,0}.
        let x21 = m + (1.0 - l12 / (4.0 * l01)) * w10;
        let w21 = l12 * (x21 * x21 + (x21 - m).powi(2)) / (2.0 * (1.0 - l12 * x21));
        // Eq. (20): x_{1,2} = x_{2,1} + (2/3) W_{2,1}.
        let x12 = x21 + 2.0 / 3.0 * w21;
        // Eq. (21) with E-BFT-1: Lambda = 2 lambda_{1,2}.
        let big = 2.0 * l12;
        let c2 = (x12 - m).powi(2) / (x12 * x12);
        let w12 = big * big * x12.powi(3) * (1.0 + c2) / (2.0 * (4.0 - big * big * x12 * x12));
        // Eq. (22), l = 1, E-BFT-3: R = (16 - 4)/(16 - 1) = 0.8 (same as literal for l = 1).
        let r = 0.8;
        let x01 = r * (x12 + (1.0 - l01 / l12 * r) * w12) + (1.0 - r) * (x_10_plus(m, w10, r));
        fn x_10_plus(m: f64, w10: f64, r: f64) -> f64 {
            m + (1.0 - (1.0 - r) / 3.0) * w10
        }
        let w01 = l01 * (x01 * x01 + (x01 - m).powi(2)) / (2.0 * (1.0 - l01 * x01));
        let expected = w01 + x01 + 3.6 - 1.0;
        let got =
            solve(ModelName::FatTree, &scenario(16, 16), l0, &ModelOptions::default()).unwrap();
        assert!(rel(got.latency.unwrap(), expected) < 1e-14);
        // Half the saturation rate 0.020263.
        assert!((expected - 24.003445089).abs() < 1e-8, "{expected}");
        assert!(rel(got.intermediate("w_up_2").unwrap(), w12) < 1e-14);
        assert!(rel(got.intermediate("x_down_2").unwrap(), x21) < 1e-14);
    }

    #[test]
    fn latency_increases_with_load_up_to_saturation() {
        // Sec. 3.6: up to 1024 processors, M = 16, 32, 64.
        for n in [16, 64, 256, 1024] {
            for m in [16, 32, 64] {
                let s = scenario(n, m);
                let sat =
                    saturation_rate(ModelName::FatTree, &s, &ModelOptions::default()).unwrap();
                let mut last = latency(n, m, 0.0).unwrap();
                for i in 1..200 {
                    let rate = sat * f64::from(i) / 200.0;
                    let l = latency(n, m, rate).unwrap();
                    assert!(l > last, "N={n} M={m} rate={rate}: {l} <= {last}");
                    last = l;
                }
                let beyond =
                    solve(ModelName::FatTree, &s, sat * 1.000001, &ModelOptions::default())
                        .unwrap();
                assert_eq!(beyond.status, Status::Saturated);
                assert!(beyond.latency.is_none());
            }
        }
    }

    #[test]
    fn section_3_5_throughput_equals_saturation_rate() {
        for literal_eq22 in [false, true] {
            let options = ModelOptions { literal_eq22 };
            for levels in 1..=8u32 {
                for m in [16, 32, 64] {
                    let s = scenario(4u32.pow(levels), m);
                    let sat = saturation_rate(ModelName::FatTree, &s, &options).unwrap();
                    let tree = FatTree::new(&s, &options).unwrap();
                    let thr = tree.max_throughput();
                    assert!(rel(sat, thr) < 1e-6, "n={levels} M={m}: {sat} vs {thr}");
                    let at = solve(ModelName::FatTree, &s, 0.5 * thr, &options).unwrap();
                    assert_eq!(at.intermediate("max_throughput"), Some(thr));
                }
            }
        }
    }

    #[test]
    fn literal_eq22_changes_throughput_by_about_a_tenth_of_a_percent() {
        // E-BFT-3 says "< 0.1%"; measured: 0.078% (n = 3) rising to 0.123% (n = 8) at M = 32.
        let literal = ModelOptions { literal_eq22: true };
        for (levels, m) in (1..=8u32).flat_map(|l| [(l, 16), (l, 32), (l, 64)]) {
            let s = scenario(4u32.pow(levels), m);
            let a = FatTree::new(&s, &ModelOptions::default()).unwrap().max_throughput();
            let b = FatTree::new(&s, &literal).unwrap().max_throughput();
            if levels <= 2 {
                // R differs only for l >= 2, which needs n >= 3.
                assert_eq!(a, b);
            } else {
                assert!(rel(a, b) < 2e-3 && b > a, "n={levels} M={m}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn rejects_what_the_paper_does_not_cover() {
        let bad = |s: &Scenario| model::check(ModelName::FatTree, s).unwrap_err().0;
        assert!(bad(&scenario(8, 32)).contains("power of 4"));
        assert!(bad(&scenario(1, 32)).contains("power of 4"));
        let mut s = scenario(64, 32);
        s.routing = Routing::Adaptive;
        assert!(bad(&s).contains("up_down"));
        let mut s = scenario(64, 32);
        s.virtual_channels = 2;
        assert!(bad(&s).contains("virtual_channels must be 1"));
        let mut s = scenario(64, 32);
        s.switching = Switching::Circuit;
        assert!(bad(&s).contains("wormhole"));
        let s = Scenario::new(Topology::Hypercube { dimensions: 4 });
        assert!(bad(&s).contains("fat-tree"));
        assert!(model::check(ModelName::FatTree, &scenario(1 << 30, 32)).is_ok());
        let err = solve(ModelName::FatTree, &scenario(64, 32), -1.0, &ModelOptions::default());
        assert!(err.unwrap_err().0.contains("rate"));
    }

    #[test]
    fn largest_trees_stay_finite() {
        let s = scenario(1 << 30, 32);
        let sat = saturation_rate(ModelName::FatTree, &s, &ModelOptions::default()).unwrap();
        assert!(sat > 0.0 && sat < 1.0 / 32.0);
        let m = solve(ModelName::FatTree, &s, 0.9 * sat, &ModelOptions::default()).unwrap();
        assert!(m.latency.unwrap().is_finite());
    }
}
