//! Exact binomial confidence intervals (Clopper-Pearson) and the normal distribution function,
//! for the coverage table's proportions.
//!
//! The Clopper-Pearson 95% interval of k successes in n trials is [p_L, p_U] with
//! P(X >= k | p_L) = 2.5% (p_L = 0 when k = 0) and P(X <= k | p_U) = 2.5% (p_U = 1 when
//! k = n), X binomial(n, p). Each end is found by bisection on p over the binomial
//! distribution function, summed term by term in logarithms ([`binomial_cdf`]); the tail is
//! monotone in p, so 100 halvings reach the bracket's floating-point limit. This is the beta
//! quantile of the textbook form (p_L = B(0.025; k, n - k + 1)) without an incomplete beta
//! function.

/// Two-sided level of the intervals: 95%.
const ALPHA: f64 = 0.05;

/// Halvings of the bisection: 2^-100 of [0, 1] is below any f64 spacing there.
const BISECTIONS: usize = 100;

/// The Clopper-Pearson 95% interval of the proportion `k / n`; `None` when `n` is 0 or `k`
/// exceeds `n`.
pub(crate) fn clopper_pearson(k: usize, n: usize) -> Option<(f64, f64)> {
    if n == 0 || k > n {
        return None;
    }
    let lower = if k == 0 {
        0.0
    } else {
        // P(X >= k | p) = 1 - F(k - 1 | p) rises with p.
        bisect(|p| 1.0 - binomial_cdf(k - 1, n, p) < ALPHA / 2.0)
    };
    let upper = if k == n {
        1.0
    } else {
        // F(k | p) falls with p.
        bisect(|p| binomial_cdf(k, n, p) > ALPHA / 2.0)
    };
    Some((lower, upper))
}

/// The p in [0, 1] where `below(p)` turns from true to false (`below` true at small p).
fn bisect(below: impl Fn(f64) -> bool) -> f64 {
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    for _ in 0..BISECTIONS {
        let middle = 0.5 * (low + high);
        if below(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    0.5 * (low + high)
}

/// P(X <= k) for X binomial(n, p), summed in logarithms (no overflow for large n).
pub(crate) fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    if k >= n || p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return 0.0;
    }
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    // ln C(n, i), built up term by term.
    let mut ln_choose = 0.0_f64;
    let mut sum = 0.0_f64;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        sum += (ln_choose + i as f64 * ln_p + (n - i) as f64 * ln_q).exp();
    }
    sum.min(1.0)
}

/// The standard normal distribution function Φ(x), through the complementary error function
/// of Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7, ample for a caption's
/// percentage).
pub(crate) fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-z * z).exp();
    if x >= 0.0 { 1.0 - 0.5 * erfc } else { 0.5 * erfc }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual - expected).abs() <= tolerance
    }

    /// Known values: 95 of 100 gives [0.8872, 0.9836] (the tables' and R's
    /// `binom.test(95, 100)`); the ends have closed forms at k = 0 and k = n.
    #[test]
    fn clopper_pearson_matches_known_intervals() {
        let (low, high) = clopper_pearson(95, 100).unwrap_or_default();
        assert!(close(low, 0.8872, 5e-4) && close(high, 0.9836, 5e-4), "{low} {high}");
        // k = 0: upper 1 - 0.025^(1/n); k = n: lower 0.025^(1/n).
        let (low, high) = clopper_pearson(0, 10).unwrap_or_default();
        assert!(low == 0.0 && close(high, 1.0 - 0.025_f64.powf(0.1), 1e-9), "{high}");
        let (low, high) = clopper_pearson(10, 10).unwrap_or_default();
        assert!(high == 1.0 && close(low, 0.025_f64.powf(0.1), 1e-9), "{low}");
        // 29 of 31 (docs/statistics.md's trial): [0.786, 0.992].
        let (low, high) = clopper_pearson(29, 31).unwrap_or_default();
        assert!(close(low, 0.7858, 5e-4) && close(high, 0.9921, 5e-4), "{low} {high}");
        assert_eq!(clopper_pearson(1, 0), None);
        assert_eq!(clopper_pearson(3, 2), None);
        // Symmetry: k of n mirrors n - k of n.
        let (a, b) = clopper_pearson(7, 40).unwrap_or_default();
        let (c, d) = clopper_pearson(33, 40).unwrap_or_default();
        assert!(close(a, 1.0 - d, 1e-12) && close(b, 1.0 - c, 1e-12));
    }

    #[test]
    fn the_binomial_distribution_function_sums_to_one_and_survives_large_n() {
        assert!(close(binomial_cdf(2, 4, 0.5), 11.0 / 16.0, 1e-12));
        assert_eq!(binomial_cdf(4, 4, 0.3), 1.0);
        assert!(close(binomial_cdf(50_000, 100_000, 0.5), 0.5, 2e-3));
        let (low, high) = clopper_pearson(600, 100_000).unwrap_or_default();
        assert!(low < 0.006 && high > 0.006 && high - low < 0.001, "{low} {high}");
    }

    #[test]
    fn the_normal_distribution_function_has_its_landmarks() {
        assert!(close(normal_cdf(0.0), 0.5, 1e-7));
        assert!(close(normal_cdf(1.959_963_984_540_054), 0.975, 2e-7));
        assert!(close(normal_cdf(-1.959_963_984_540_054), 0.025, 2e-7));
    }
}
