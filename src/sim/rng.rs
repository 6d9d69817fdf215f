//! Value-stable pseudo-random streams for the simulator.
//!
//! The generator is xoshiro256++ seeded through SplitMix64, and the distributions the
//! simulator needs (unbiased uniform integers, exponential inter-arrival times, geometric
//! message lengths and gaps) are derived
//! from [`Rng::next_u64`] here, with a logarithm built from IEEE 754 basic operations only.
//! Nothing depends on `rand`, libm or the platform, so a seed gives the same stream on every
//! machine and every Rust version. Changing any function in this file changes results: bump
//! [`super::VERSION`].

/// xoshiro256++ (Blackman and Vigna), 256 bits of state, period 2^256 - 1.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    state: [u64; 4],
}

impl Rng {
    /// Seeds the state with four consecutive SplitMix64 outputs (never all zero).
    pub(crate) fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng { state: [next(), next(), next(), next()] }
    }

    /// The next 64 random bits.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `0..n` (`n > 0`), unbiased: Lemire's multiply-shift with rejection.
    #[inline]
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut product = u128::from(self.next_u64()) * u128::from(n);
        let mut low = product as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                product = u128::from(self.next_u64()) * u128::from(n);
                low = product as u64;
            }
        }
        (product >> 64) as u64
    }

    /// Uniform in (0, 1], a multiple of 2^-53.
    #[inline]
    pub(crate) fn open_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// Exponentially distributed with the given mean (inversion: -mean ln U).
    #[inline]
    pub(crate) fn exponential(&mut self, mean: f64) -> f64 {
        -ln(self.open_unit()) * mean
    }

    /// Geometric on 1, 2, 3, ... (`law`): the trial of the first success. Inversion,
    /// `1 + floor(ln U / ln(1 - p))`, one uniform per draw whatever p; capped at `cap`.
    #[inline]
    pub(crate) fn geometric(&mut self, law: Geometric, cap: u64) -> u64 {
        let u = self.open_unit();
        if law.log_fail == f64::NEG_INFINITY || u == 1.0 {
            return 1;
        }
        (1 + failures(u, law)).min(cap)
    }
}

/// A geometric law on 1, 2, 3, ...: each trial succeeds with probability `p`
/// ([`Rng::geometric`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Geometric {
    /// `ln(1 - p)`: negative, `-inf` at p = 1.
    log_fail: f64,
    /// `1 / ln(1 - p)`, for [`failures`]' quick quotient.
    per_log_fail: f64,
}

impl Geometric {
    /// The law of success probability `p` (in (0, 1]; 1 and above: every draw is 1).
    pub(crate) fn new(p: f64) -> Geometric {
        let log_fail = if p >= 1.0 { f64::NEG_INFINITY } else { ln(1.0 - p) };
        Geometric { log_fail, per_log_fail: 1.0 / log_fail }
    }
}

/// `(ln(u) / law.log_fail) as u64` for `u` in (0, 1): the failures before the first success
/// of a geometric draw by inversion, exactly as [`ln`] and a division give them (`as`
/// saturates: a huge quotient, p tiny, becomes `u64::MAX`).
///
/// The quotient is found from [`ln_short`] and the reciprocal first. [`ln_short`]'s value is
/// within `1.6e-12 |ln u|` of [`ln`]'s (the proof is at [`ln_short`]) and the reciprocal and
/// product round twice more, so the two quotients differ by less than `2e-12` of theirs. Where
/// the quick one is more than [`SHORT_SLACK`] times itself plus one away from an integer, both
/// therefore floor to the same integer. Elsewhere (about one draw in 5 * 10^9 per unit of the
/// quotient), and for a huge quotient or a `log_fail` that is not a normal number, the exact
/// logarithm and the division decide. The result is the exact one every time; the quick
/// quotient costs one division (the reduction's), where the exact one costs 14.
#[inline]
fn failures(u: f64, law: Geometric) -> u64 {
    if law.log_fail < -f64::MIN_POSITIVE {
        let quotient = ln_short(u) * law.per_log_fail;
        // Below 2^40 the slack exceeds the quotient's rounding by far.
        if quotient < 1_099_511_627_776.0 {
            let slack = (quotient + 1.0) * SHORT_SLACK;
            let (low, high) = (quotient - slack, quotient + slack);
            if low >= 0.0 && low as u64 == high as u64 {
                return high as u64;
            }
        }
    }
    (ln(u) / law.log_fail) as u64
}

/// The relative slack around a quotient from [`ln_short`] within which [`failures`] asks the
/// exact [`ln`]: 50 times the bound of the quotient's error.
const SHORT_SLACK: f64 = 1e-10;

/// `x` (positive, normal) as `(s, k)` with `ln x = 2 atanh(s) + k ln 2`, `|s| <= 0.1716`:
/// `x = m 2^k` with `m` in `[sqrt(2) / 2, sqrt(2)]` and `s = (m - 1) / (m + 1)`.
#[inline(always)]
fn reduce(x: f64) -> (f64, i64) {
    let bits = x.to_bits();
    let mut exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut mantissa = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if mantissa > std::f64::consts::SQRT_2 {
        mantissa *= 0.5;
        exponent += 1;
    }
    ((mantissa - 1.0) / (mantissa + 1.0), exponent)
}

/// Natural logarithm of a positive normal `x` from +, -, *, / only, so that the value is the
/// same everywhere (std's `ln` calls the platform libm). Relative error about 1e-16.
pub(crate) fn ln(x: f64) -> f64 {
    debug_assert!(x.is_normal() && x > 0.0);
    // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), |s| <= 0.1716, so 13 terms reach 1e-19.
    let (s, exponent) = reduce(x);
    let s2 = s * s;
    let mut power = s;
    let mut sum = s;
    for k in 1..13u32 {
        power *= s2;
        sum += power / f64::from(2 * k + 1);
    }
    2.0 * sum + exponent as f64 * std::f64::consts::LN_2
}

/// [`ln`] from seven terms of its series and no division but the reduction's, for
/// [`failures`], which needs only to know which integer a quotient of it floors to.
///
/// Its distance from [`ln`]'s value, for `x` positive and normal: both take the same `s`
/// and `k` ([`reduce`]). The first term left out bounds the series' remainder,
/// `|s|^15 / 15 / (1 - s^2) <= 1.4e-12 |s|` at `s^2 <= 0.02945`; rounding in either sum adds
/// a few units in the last place of `s` (`2.2e-16 |s|` each). So the two sums differ by at
/// most `1.5e-12 |s|`, and the logarithms `2 sum + k ln 2` by `3e-12 |s|` and their two
/// roundings. Against the logarithm: with `k = 0`, `|ln x| = 2 atanh |s| >= 2 |s|`; otherwise
/// `|ln x| >= ln 2 - 2 atanh(0.1716) > 0.346 >= 2 |s|`. Hence `|ln_short(x) - ln(x)| <=
/// 1.5e-12 |ln x|` plus two roundings (`4.5e-16 |ln x|`): within `1.6e-12 |ln x|`, which a
/// test samples.
#[inline(always)]
fn ln_short(x: f64) -> f64 {
    const C: [f64; 7] = [1.0, 1.0 / 3.0, 1.0 / 5.0, 1.0 / 7.0, 1.0 / 9.0, 1.0 / 11.0, 1.0 / 13.0];
    let (s, exponent) = reduce(x);
    let s2 = s * s;
    let s4 = s2 * s2;
    // Estrin's scheme: three independent pairs, then two products.
    let low = (C[0] + C[1] * s2) + s4 * (C[2] + C[3] * s2);
    let high = (C[4] + C[5] * s2) + s4 * C[6];
    let sum = s * (low + s4 * s4 * high);
    2.0 * sum + exponent as f64 * std::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_value_stable() {
        // Pinned values: if this fails, results changed and VERSION must be bumped.
        let mut rng = Rng::new(42);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        let mut again = Rng::new(42);
        assert_eq!(first, (0..3).map(|_| again.next_u64()).collect::<Vec<_>>());
        assert_ne!(Rng::new(43).next_u64(), first[0]);
    }

    #[test]
    fn ln_matches_std_closely() {
        for &x in &[
            1e-300,
            1e-16,
            0.001,
            0.3,
            0.5,
            std::f64::consts::FRAC_1_SQRT_2,
            1.0,
            1.5,
            2.0,
            1e10,
            1e300,
        ] {
            let (ours, reference) = (ln(x), f64::ln(x));
            assert!((ours - reference).abs() <= 4e-16 * reference.abs().max(1.0), "ln({x})");
        }
    }

    #[test]
    fn ln_short_is_within_its_bound_of_ln() {
        let mut rng = Rng::new(3);
        let mut worst: f64 = 0.0;
        let edges = [
            f64::MIN_POSITIVE,
            1.0 / 9_007_199_254_740_992.0,
            std::f64::consts::FRAC_1_SQRT_2,
            std::f64::consts::FRAC_1_SQRT_2.next_up(),
            std::f64::consts::SQRT_2,
            std::f64::consts::SQRT_2.next_up(),
            0.5,
            1.0f64.next_down(),
            1.0f64.next_up(),
            3.0,
            1e300,
        ];
        let mut sampled: Vec<f64> = (0..400_000).map(|_| rng.open_unit()).collect();
        // Across exponents too: the reduction's k from -1022 to 1023.
        sampled.extend((1..2047u64).map(|e| f64::from_bits(e << 52 | (rng.next_u64() >> 12))));
        for x in edges.into_iter().chain(sampled).filter(|&x| x != 1.0) {
            let exact = ln(x);
            worst = worst.max((ln_short(x) - exact).abs() / exact.abs());
        }
        assert!(worst <= 1.6e-12, "{worst:e}");
        assert!(worst > 1e-14, "the samples reach the series' remainder: {worst:e}");
    }

    #[test]
    fn failures_are_the_exact_quotients_floor() {
        let mut rng = Rng::new(11);
        let exact = |u: f64, law: Geometric| (ln(u) / law.log_fail) as u64;
        for p in [1e-12, 1e-9, 1e-6, 0.001, 0.0122, 0.0625, 0.1, 0.25, 0.5, 0.9, 0.999_999] {
            let law = Geometric::new(p);
            for _ in 0..50_000 {
                let u = rng.open_unit();
                if u < 1.0 {
                    assert_eq!(failures(u, law), exact(u, law), "u {u}, p {p}");
                }
            }
            // Quotients on or next to integers, where the exact logarithm decides: u =
            // (1 - p)^n and its neighbours.
            let mut u = 1.0 - p;
            for _ in 0..60 {
                for near in [u.next_down(), u, u.next_up()] {
                    if near > 0.0 && near < 1.0 && near.is_normal() {
                        assert_eq!(failures(near, law), exact(near, law), "{near}, {p}");
                    }
                }
                u *= 1.0 - p;
            }
        }
        // A `log_fail` that is not a normal negative number (p below the rounding of 1 - p).
        for log_fail in [0.0, -0.0, -f64::MIN_POSITIVE / 2.0, ln(1.0 - 1e-17)] {
            let law = Geometric { log_fail, per_log_fail: 1.0 / log_fail };
            assert_eq!(failures(0.3, law), exact(0.3, law), "{log_fail}");
        }
        // A huge quotient saturates as `as` does.
        let tiny = Geometric { log_fail: -1e-300, per_log_fail: -1e300 };
        assert_eq!(failures(1e-300, tiny), u64::MAX);
    }

    #[test]
    fn below_is_uniform_and_in_range() {
        let mut rng = Rng::new(7);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[rng.below(7) as usize] += 1;
        }
        for &c in &counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        assert_eq!(rng.below(1), 0);
    }

    #[test]
    fn geometric_has_the_right_moments_and_tail() {
        let mut rng = Rng::new(5);
        let p: f64 = 0.1;
        let law = Geometric::new(p);
        let n = 400_000;
        let (mut sum, mut sum2, mut ones) = (0.0, 0.0, 0u32);
        for _ in 0..n {
            let x = rng.geometric(law, u64::MAX);
            assert!(x >= 1);
            sum += x as f64;
            sum2 += (x * x) as f64;
            ones += u32::from(x == 1);
        }
        let (mean, second) = (sum / f64::from(n), sum2 / f64::from(n));
        // Mean 1/p = 10, E[X^2] = (2 - p) / p^2 = 190, P(X = 1) = p.
        assert!((mean - 10.0).abs() < 0.05, "{mean}");
        assert!((second - 190.0).abs() < 2.0, "{second}");
        assert!((f64::from(ones) / f64::from(n) - p).abs() < 0.002, "{ones}");
        assert_eq!(rng.geometric(Geometric::new(1.0), 9), 1);
        assert!((0..1000).all(|_| rng.geometric(Geometric::new(1e-9), 7) <= 7));
    }

    #[test]
    fn exponential_has_the_right_mean() {
        let mut rng = Rng::new(1);
        let n = 200_000;
        let mean = (0..n).map(|_| rng.exponential(3.0)).sum::<f64>() / f64::from(n);
        assert!((mean - 3.0).abs() < 0.03, "{mean}");
    }
}
