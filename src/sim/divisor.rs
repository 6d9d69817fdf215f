//! Division by a number fixed when the network is built (the VCs per channel, the ports per
//! router, a dragonfly's routers per group), by a multiplication instead of a `div`.
//!
//! The simulator divides on its hot path: the channel of a VC (`vc / V`), the router of a
//! channel, a dragonfly router's group, a torus node's coordinates. The divisors are known only
//! at run time, so the compiler emits the hardware division, tens of cycles each on the
//! machines measured (docs/performance.md, "Divisions"). [`Divisor`] precomputes
//! `c = ceil(2^64 / d)` once; then `n / d` is the high half of the 128-bit product `c * n`,
//! and `n % d` the high half of `(c * n mod 2^64) * d`. Both are exact for every 32-bit `n`
//! and `d >= 2` (D. Lemire, O. Kaser and N. Kurz, "Faster remainder by direct computation:
//! applications to compilers and software libraries", Software: Practice and Experience 49(6),
//! 2019, Theorem 1 with N = 32 and F = 64). `d = 1` stores `c = 0` and is handled apart (its
//! `c` would be 2^64).
//!
//! The statistics divide too: a delivered message's generation or delivery time by a bin
//! length that doubles as the run grows (64-bit, so no [`Divisor`]). Those times come in
//! nearly time order, and [`LastBin`] spares the division whenever the time falls in the bin
//! found last.

/// A divisor `d >= 1` with its multiplier `ceil(2^64 / d)` (0 for `d = 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Divisor {
    d: u32,
    c: u64,
}

impl Divisor {
    /// The divisor `d`; `d = 0` is taken as 1 (no caller divides by zero: its sizes are at
    /// least one).
    pub(crate) fn new(d: u32) -> Divisor {
        let d = d.max(1);
        let c = if d == 1 { 0 } else { u64::MAX / u64::from(d) + 1 };
        Divisor { d, c }
    }

    /// `n / d`.
    #[inline(always)]
    pub(crate) fn div(self, n: u32) -> u32 {
        if self.c == 0 {
            return n;
        }
        ((u128::from(self.c) * u128::from(n)) >> 64) as u32
    }

    /// `n % d` (0 for `d = 1`, whose `c` is 0).
    #[inline(always)]
    pub(crate) fn rem(self, n: u32) -> u32 {
        let low = self.c.wrapping_mul(u64::from(n));
        ((u128::from(low) * u128::from(self.d)) >> 64) as u32
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    pub(crate) fn div_rem(self, n: u32) -> (u32, u32) {
        let q = self.div(n);
        (q, n - q * self.d)
    }
}

/// The bin `offset / length` of an offset in a run's time, remembering the last bin found.
/// The statistics bin each delivered message by its generation or delivery time (the batch
/// means three times, the sections and the transient series once each), and those times come
/// in nearly time order: most offsets fall in the bin of the call before, and then cost two
/// comparisons instead of a 64-bit division. The owner calls [`LastBin::forget`] whenever its
/// bin length changes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LastBin {
    /// The bin found last, `[start, start + length)`, and its index; bin 0 at first, which
    /// is right for every length.
    start: u64,
    index: u64,
}

impl LastBin {
    /// `offset / length` (`length >= 1`, the one the bin was found with).
    #[inline(always)]
    pub(crate) fn index(&mut self, offset: u64, length: u64) -> u64 {
        if offset >= self.start && offset - self.start < length {
            return self.index;
        }
        let index = offset / length;
        *self = LastBin { start: index * length, index };
        index
    }

    /// Back to bin 0 (after the bin length changed).
    pub(crate) fn forget(&mut self) {
        *self = LastBin::default();
    }
}

#[cfg(test)]
mod tests {
    use super::{Divisor, LastBin};

    /// Offsets in and out of order, across bin boundaries and lengths that double: always the
    /// quotient.
    #[test]
    fn the_last_bin_gives_the_quotient() {
        let mut bin = LastBin::default();
        let mut length = 7;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for step in 0u64..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Mostly near the last offset (time order), sometimes anywhere.
            let offset =
                if state.is_multiple_of(10) { state % 1_000_000 } else { step * 3 + state % 50 };
            assert_eq!(bin.index(offset, length), offset / length, "{offset} / {length}");
            if step % 5_000 == 4_999 {
                length *= 2;
                bin.forget();
            }
        }
        assert_eq!(bin.index(u64::MAX, 3), u64::MAX / 3);
        assert_eq!(bin.index(0, 3), 0);
    }

    fn check(d: u32, n: u32) {
        let divisor = Divisor::new(d);
        assert_eq!(divisor.div(n), n / d, "{n} / {d}");
        assert_eq!(divisor.rem(n), n % d, "{n} % {d}");
        assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} divmod {d}");
    }

    /// Every divisor up to 2,000 and a spread of large ones, against every dividend up to
    /// 4,096, the dividends next to each multiple of the divisor, the largest dividends, and
    /// pseudo-random ones: the same quotient and remainder as the hardware's.
    #[test]
    fn quotient_and_remainder_are_exact() {
        let mut divisors: Vec<u32> = (1..=2_000).collect();
        for shift in 11..32 {
            let p = 1u32 << shift;
            divisors.extend([p - 1, p, p + 1]);
        }
        divisors.extend([u32::MAX, u32::MAX - 1, 4_294_967_291, 65_521, 1_000_003, 3 * 7 * 11]);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        };
        for &d in &divisors {
            for n in 0..4_096 {
                check(d, n);
            }
            for n in [u32::MAX, u32::MAX - 1, u32::MAX / 2, u32::MAX / 2 + 1] {
                check(d, n);
            }
            let last = u32::MAX / d;
            for q in [1, 2, 3, last / 2, last.saturating_sub(1), last] {
                let Some(multiple) = q.checked_mul(d) else { continue };
                for n in [multiple.wrapping_sub(1), multiple, multiple.saturating_add(1)] {
                    check(d, n);
                }
            }
            for _ in 0..2_000 {
                check(d, random());
            }
        }
    }

    #[test]
    fn zero_is_taken_as_one() {
        assert_eq!(Divisor::new(0), Divisor::new(1));
        assert_eq!(Divisor::new(0).div(7), 7);
        assert_eq!(Divisor::new(0).rem(7), 0);
    }
}
