//! Queueing primitives shared by the five models.
//!
//! Every function here is a closed-form textbook result; each returns `None` when the queue is
//! unstable (utilisation >= 1), so the caller can report saturation instead of a huge number.
//!
//! - [`mg1_wait`]: M/G/1 mean wait (Pollaczek–Khinchine) with the Draper–Ghosh approximation of
//!   the service-time variance, `sigma^2 = (x - x_min)^2` (fat-tree eq. 5-6, SS eq. 11, CS eq. 19,
//!   Nbc eq. 18-19, broadcast eq. 18/28).
//! - [`mg2_wait`]: Hokstad's M/G/2 approximation (fat-tree eq. 7-8).
//! - [`VcChain`]: Dally's virtual-channel occupancy Markov chain, giving the probability `P_v` that
//!   `v` of the `V` virtual channels of a physical channel are busy, the blocking probability
//!   `P_V` and the average multiplexing degree `V-bar` (SS eq. 12-13, broadcast eq. 29-31,
//!   CS eq. 21-27, Nbc eq. 20-21).

/// M/G/1 mean waiting time with the Draper–Ghosh variance approximation.
///
/// `W = lambda * (x^2 + (x - x_min)^2) / (2 (1 - lambda x))`, which is the Pollaczek–Khinchine
/// formula `lambda E[X^2] / (2(1 - rho))` with `E[X^2] = x^2 + sigma^2` and
/// `sigma^2 = (x - x_min)^2`. Equivalently `rho x (1 + C_b^2) / (2 (1 - rho))` (fat-tree eq. 4-6).
/// Returns `None` when `lambda x >= 1` (or the inputs are not finite).
pub(crate) fn mg1_wait(lambda: f64, x: f64, x_min: f64) -> Option<f64> {
    pk_wait(lambda, x, x * x + (x - x_min) * (x - x_min))
}

/// Pollaczek–Khinchine M/G/1 mean wait `lambda E[X^2] / (2 (1 - lambda E[X]))` for a given second
/// moment; `None` when `lambda E[X] >= 1`.
pub(crate) fn pk_wait(lambda: f64, mean: f64, second_moment: f64) -> Option<f64> {
    let rho = lambda * mean;
    if !(0.0..1.0).contains(&rho) || !second_moment.is_finite() {
        return None;
    }
    Some(lambda * second_moment / (2.0 * (1.0 - rho)))
}

/// Hokstad's M/G/2 mean-wait approximation with the Draper–Ghosh variance (fat-tree eq. 7-8).
///
/// `W = Lambda^2 x^3 (1 + C_b^2) / (2 (4 - Lambda^2 x^2))`, `C_b^2 = (x - x_min)^2 / x^2`, where
/// `Lambda` is the total arrival rate of the two-server system (E-BFT-1). This is `(1 + C_b^2)/2`
/// times the exact M/M/2 wait `rho^2 x / (1 - rho^2)` with `rho = Lambda x / 2`. Returns `None`
/// when `Lambda x >= 2` (per-server utilisation >= 1).
pub(crate) fn mg2_wait(total_lambda: f64, x: f64, x_min: f64) -> Option<f64> {
    let lx = total_lambda * x;
    if !(0.0..2.0).contains(&lx) || !x.is_finite() || x <= 0.0 {
        return None;
    }
    let c2 = (x - x_min) * (x - x_min) / (x * x);
    Some(lx * lx * x * (1.0 + c2) / (2.0 * (4.0 - lx * lx)))
}

/// Result of Dally's virtual-channel occupancy chain for one physical channel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct VcChain {
    /// `P_V`: probability that all `V` virtual channels are busy.
    pub(crate) blocking: f64,
    /// `V-bar = sum v^2 P_v / sum v P_v` (1 when the channel is idle).
    pub(crate) multiplexing: f64,
}

/// Dally's chain (SS eq. 12 per E-SS-9; broadcast eq. 29-31; CS eq. 21-26; Nbc eq. 20-21).
///
/// `q_0 = 1`, `q_v = q_{v-1} lambda S` for `0 < v < V`, `q_V = q_{V-1} lambda / (1/S - lambda)`,
/// `P_v = q_v / sum q`. Returns `None` when `lambda S >= 1` (the chain has no stationary
/// distribution) or `V = 0`. Runs in `O(V)` without allocation.
pub(crate) fn vc_chain(lambda: f64, service: f64, vcs: u32) -> Option<VcChain> {
    let rho = lambda * service;
    if vcs == 0 || !(0.0..1.0).contains(&rho) {
        return None;
    }
    // Sums of q_v, v q_v and v^2 q_v.
    let mut q = 1.0;
    let (mut s0, mut s1, mut s2) = (1.0, 0.0, 0.0);
    for v in 1..vcs {
        q *= rho;
        let vf = f64::from(v);
        s0 += q;
        s1 += vf * q;
        s2 += vf * vf * q;
    }
    let q_last = q * rho / (1.0 - rho);
    let vf = f64::from(vcs);
    s0 += q_last;
    s1 += vf * q_last;
    s2 += vf * vf * q_last;
    let multiplexing = if s1 > 0.0 { s2 / s1 } else { 1.0 };
    Some(VcChain { blocking: q_last / s0, multiplexing })
}

/// Dally's chain as [`vc_chain`], also writing the distribution `P_v`, `v = 0..=V`, into `p`
/// (`V = p.len() - 1`). Returns `None` (leaving `p` unspecified) when `lambda S >= 1` or
/// `p.len() < 2`.
pub(crate) fn vc_distribution(lambda: f64, service: f64, p: &mut [f64]) -> Option<VcChain> {
    let rho = lambda * service;
    let vcs = p.len().checked_sub(1).filter(|&v| v >= 1)?;
    if !(0.0..1.0).contains(&rho) {
        return None;
    }
    p[0] = 1.0;
    for v in 1..vcs {
        p[v] = p[v - 1] * rho;
    }
    p[vcs] = p[vcs - 1] * rho / (1.0 - rho);
    let total: f64 = p.iter().sum();
    let (mut s1, mut s2) = (0.0, 0.0);
    for (v, pv) in p.iter_mut().enumerate() {
        *pv /= total;
        s1 += v as f64 * *pv;
        s2 += (v * v) as f64 * *pv;
    }
    let multiplexing = if s1 > 0.0 { s2 / s1 } else { 1.0 };
    Some(VcChain { blocking: p[vcs], multiplexing })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn mg1_matches_md1_and_mm1() {
        // M/D/1 (x_min = x): W = rho x / (2 (1 - rho)); rho = 0.5, x = 1 gives 0.5.
        assert!(close(mg1_wait(0.5, 1.0, 1.0).unwrap(), 0.5));
        // Draper-Ghosh with x_min = 0 gives C^2 = 1, i.e. M/M/1: W = rho x / (1 - rho) = 1.
        assert!(close(mg1_wait(0.5, 1.0, 0.0).unwrap(), 1.0));
        // M/D/1 with x = 32, lambda = 0.02: rho = 0.64, W = 0.64 * 32 / 0.72 = 28.444...
        assert!(close(mg1_wait(0.02, 32.0, 32.0).unwrap(), 0.64 * 32.0 / 0.72));
        assert_eq!(mg1_wait(1.0, 1.0, 1.0), None);
        assert_eq!(mg1_wait(f64::NAN, 1.0, 1.0), None);
    }

    #[test]
    fn mg2_matches_mm2_and_md2_approximation() {
        // M/M/2 (C^2 = 1), Lambda = 1, x = 1, rho = 0.5: Erlang C gives
        // W = rho^2 x / (1 - rho^2) = 1/3.
        assert!(close(mg2_wait(1.0, 1.0, 0.0).unwrap(), 1.0 / 3.0));
        // Deterministic service: half the M/M/2 value (Hokstad's (1 + C^2)/2 scaling).
        assert!(close(mg2_wait(1.0, 1.0, 1.0).unwrap(), 1.0 / 6.0));
        // Lambda = 1.5, x = 1: rho = 0.75, M/M/2 W = 0.5625/0.4375.
        assert!(close(mg2_wait(1.5, 1.0, 0.0).unwrap(), 0.5625 / 0.4375));
        assert_eq!(mg2_wait(2.0, 1.0, 1.0), None);
    }

    #[test]
    fn vc_chain_textbook_values() {
        // V = 1 is M/M/1-like occupancy: P_1 = rho, V-bar = 1.
        let c = vc_chain(0.3, 1.0, 1).unwrap();
        assert!(close(c.blocking, 0.3));
        assert!(close(c.multiplexing, 1.0));
        // V = 2, rho = 0.5: q = (1, 0.5, 0.5), P = (0.5, 0.25, 0.25),
        // V-bar = (1*0.25 + 4*0.25) / (1*0.25 + 2*0.25) = 5/3.
        let c = vc_chain(0.25, 2.0, 2).unwrap();
        assert!(close(c.blocking, 0.25));
        assert!(close(c.multiplexing, 5.0 / 3.0));
        // V = 3, rho = 0.5: q = (1, .5, .25, .25), sum 2; P_3 = 0.125;
        // V-bar = (.5 + 4*.25 + 9*.25)/(.5 + 2*.25 + 3*.25) = 3.75/1.75.
        let c = vc_chain(0.5, 1.0, 3).unwrap();
        assert!(close(c.blocking, 0.125));
        assert!(close(c.multiplexing, 3.75 / 1.75));
        // Idle channel.
        let c = vc_chain(0.0, 1.0, 4).unwrap();
        assert!(close(c.blocking, 0.0));
        assert!(close(c.multiplexing, 1.0));
        assert_eq!(vc_chain(1.0, 1.0, 2), None);
        // The distribution agrees with the summary.
        let mut p = [0.0; 4];
        let c = vc_distribution(0.5, 1.0, &mut p).unwrap();
        assert!(close(p[0], 0.5) && close(p[1], 0.25) && close(p[2], 0.125) && close(p[3], 0.125));
        assert!(close(c.blocking, 0.125) && close(c.multiplexing, 3.75 / 1.75));
        assert_eq!(vc_distribution(0.1, 1.0, &mut [0.0]), None);
        assert_eq!(vc_chain(0.1, 1.0, 0), None);
    }
}
