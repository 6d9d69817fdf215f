//! Exact latency distributions: an integer histogram per measured quantity, and its
//! nearest-rank percentiles.
//!
//! Latencies, network latencies and source waits are whole cycles, so the distribution of a
//! run's measured messages is kept exactly, without a streaming approximation: a dense count
//! per value below [`DENSE_LIMIT`] cycles (grown by doubling from [`INITIAL_DENSE`] entries, so
//! it is allocated a handful of times per run, never per message), and the rare values at or
//! above that limit in an overflow list, sorted only when the percentiles are read. Memory is
//! at most 8 bytes per dense entry (512 KiB) plus 8 bytes per message slower than the limit.
//! Recording is one bounds check and one increment per delivered message (nothing per flit or
//! per cycle). Measured with `runner bench --only sim` against the simulator without it (six
//! alternating runs each, best of six): every benchmark within 0.5% per flit-hop (8x8 torus,
//! dimension order: 21.1 against 21.0 ns), i.e. within the noise.
//!
//! **Percentile definition (nearest rank).** For a quantile q in (0, 1] and n >= 1 recorded
//! values, the q-percentile is the smallest recorded value L such that at least q n of the
//! values are <= L: the value of rank ceil(q n) in ascending order (ranks from 1). It is always
//! one of the recorded values (no interpolation), so integer latencies give integer
//! percentiles; p50 of {1, 2} is 1, p99 of 100 values is the 99th smallest, and with one value
//! every percentile is that value. The ranks are computed in integer arithmetic (q = 50/100,
//! 90/100, 99/100), so no rounding error moves a percentile. With no value there is no
//! percentile (`None`).

use crate::measurement::{Binned, Percentiles};

/// Values below this many cycles are counted densely; larger ones go to the overflow list.
pub(crate) const DENSE_LIMIT: usize = 1 << 16;

/// Dense entries allocated when a histogram is created (8 KiB).
pub(crate) const INITIAL_DENSE: usize = 1 << 10;

/// The exact distribution of one integer quantity over the measured messages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Histogram {
    /// `dense[v]`: values equal to v, for v < `dense.len()` (<= [`DENSE_LIMIT`]).
    dense: Vec<u64>,
    /// Values >= [`DENSE_LIMIT`], in arrival order.
    overflow: Vec<u64>,
}

impl Histogram {
    /// An empty histogram with [`INITIAL_DENSE`] dense entries.
    pub(crate) fn new() -> Histogram {
        Histogram { dense: vec![0; INITIAL_DENSE], overflow: Vec::new() }
    }

    /// Counts one value.
    #[inline]
    pub(crate) fn record(&mut self, value: u64) {
        match usize::try_from(value).ok().and_then(|v| self.dense.get_mut(v)) {
            Some(count) => *count += 1,
            None => self.record_beyond(value),
        }
    }

    /// A value beyond the dense entries allocated so far: grow them (doubling, up to
    /// [`DENSE_LIMIT`]) or keep it in the overflow list.
    #[cold]
    #[inline(never)]
    fn record_beyond(&mut self, value: u64) {
        if value < DENSE_LIMIT as u64 {
            let value = value as usize;
            let length = (value + 1).next_power_of_two().max(2 * self.dense.len()).min(DENSE_LIMIT);
            self.dense.resize(length, 0);
            self.dense[value] += 1;
        } else {
            self.overflow.push(value);
        }
    }

    /// Adds another histogram's values to this one.
    pub(crate) fn add(&mut self, other: &Histogram) {
        if self.dense.len() < other.dense.len() {
            self.dense.resize(other.dense.len(), 0);
        }
        for (mine, theirs) in self.dense.iter_mut().zip(&other.dense) {
            *mine += theirs;
        }
        self.overflow.extend_from_slice(&other.overflow);
    }

    /// Number of values recorded.
    pub(crate) fn count(&self) -> u64 {
        self.dense.iter().sum::<u64>() + self.overflow.len() as u64
    }

    /// p50, p90, p99 and the maximum (see the module doc); `None` when nothing was recorded.
    pub(crate) fn percentiles(&self) -> Option<Percentiles> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let mut overflow = self.overflow.clone();
        overflow.sort_unstable();
        let at = |percent: u64| self.value_of_rank(nearest_rank(percent, n), &overflow);
        Some(Percentiles { p50: at(50), p90: at(90), p95: at(95), p99: at(99), max: at(100) })
    }

    /// The distribution binned for the report's histograms ([`Binned::of`]: per cycle when
    /// the values span at most `MAX_HISTOGRAM_BINS` cycles, else the smallest power-of-two
    /// width that fits); `None` when nothing was recorded.
    pub(crate) fn binned(&self) -> Option<Binned> {
        let mut values: Vec<(u64, u64)> = self
            .dense
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
            .map(|(value, &count)| (value as u64, count))
            .collect();
        values.extend(self.overflow.iter().map(|&value| (value, 1)));
        Binned::of(&values, 1)
    }

    /// The value of rank `rank` (1-based, 1 <= rank <= count) in ascending order, given the
    /// overflow list sorted.
    fn value_of_rank(&self, rank: u64, sorted_overflow: &[u64]) -> u64 {
        let mut below = 0;
        for (value, &count) in self.dense.iter().enumerate() {
            below += count;
            if below >= rank {
                return value as u64;
            }
        }
        let index = (rank - below).saturating_sub(1) as usize;
        sorted_overflow.get(index).or(sorted_overflow.last()).copied().unwrap_or(0)
    }
}

/// The nearest rank of the `percent`-th percentile of `n >= 1` values: ceil(percent n / 100),
/// at least 1.
pub(crate) fn nearest_rank(percent: u64, n: u64) -> u64 {
    let rank = (u128::from(percent) * u128::from(n)).div_ceil(100);
    u64::try_from(rank).unwrap_or(n).clamp(1, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_histograms_adds_their_values() {
        let (mut a, mut b) = (Histogram::new(), Histogram::new());
        a.record(3);
        b.record(5_000);
        b.record(1 << 20);
        a.add(&b);
        assert_eq!(a.count(), 3);
        assert_eq!(a.percentiles().map(|p| (p.p50, p.max)), Some((5_000, 1 << 20)));
    }

    fn of(values: &[u64]) -> Option<Percentiles> {
        let mut h = Histogram::new();
        for &v in values {
            h.record(v);
        }
        without_p95(h.percentiles())
    }

    fn p(p50: u64, p90: u64, p99: u64, max: u64) -> Option<Percentiles> {
        Some(Percentiles { p50, p90, p95: 0, p99, max })
    }

    /// The percentiles without p95 (the cases below predate it; `p95_is_the_nearest_rank`
    /// checks it).
    fn without_p95(percentiles: Option<Percentiles>) -> Option<Percentiles> {
        percentiles.map(|p| Percentiles { p95: 0, ..p })
    }

    /// Nearest rank by sorting: the value of rank ceil(q n).
    fn by_sorting(values: &[u64], percent: u64) -> u64 {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let rank = (percent * values.len() as u64).div_ceil(100).max(1);
        sorted[rank as usize - 1]
    }

    #[test]
    fn nearest_rank_edge_cases() {
        assert_eq!(of(&[]), None, "no value, no percentile");
        assert_eq!(Histogram::default().percentiles(), None);
        assert_eq!(of(&[7]), p(7, 7, 7, 7), "one value is every percentile");
        assert_eq!(of(&[1, 2]), p(1, 2, 2, 2), "p50 of two values is the smaller");
        assert_eq!(of(&[5, 5, 5, 9]), p(5, 9, 9, 9), "ties: rank 2 of 4 is a 5, rank 4 the 9");
        assert_eq!(of(&[3, 3, 3, 3]), p(3, 3, 3, 3));
        assert_eq!(of(&[0, 0, 1]), p(0, 1, 1, 1), "zero is a value (a source wait)");
        // 1..=100: the q-percentile of 100 values is the value q exactly.
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(of(&hundred), p(50, 90, 99, 100));
        // 1..=101: ranks ceil(50.5) = 51, ceil(90.9) = 91, ceil(99.99) = 100.
        let hundred_one: Vec<u64> = (1..=101).rev().collect();
        assert_eq!(of(&hundred_one), p(51, 91, 100, 101));
        assert_eq!(nearest_rank(99, 1), 1);
        assert_eq!(nearest_rank(50, 3), 2);
        assert_eq!(nearest_rank(100, u64::MAX), u64::MAX, "no overflow in the rank");
    }

    /// Values beyond the first dense entries grow them; values beyond the dense limit go to
    /// the overflow list; percentiles equal those found by sorting the values.
    #[test]
    fn dense_growth_and_overflow_are_exact() {
        let limit = DENSE_LIMIT as u64;
        let values: Vec<u64> = (0..5_000u64)
            .map(|i| match i % 7 {
                0 => limit + (i * 7919) % 100_000,
                1 => limit - 1,
                2 => u64::MAX - i,
                _ => (i * 104_729) % 3_000,
            })
            .collect();
        let mut h = Histogram::new();
        for &v in &values {
            h.record(v);
        }
        assert_eq!(h.count(), values.len() as u64);
        assert!(h.dense.len() <= DENSE_LIMIT && h.dense.len().is_power_of_two());
        let expected = Percentiles {
            p50: by_sorting(&values, 50),
            p90: by_sorting(&values, 90),
            p95: by_sorting(&values, 95),
            p99: by_sorting(&values, 99),
            max: by_sorting(&values, 100),
        };
        assert_eq!(h.percentiles(), Some(expected));
        assert_eq!(expected.max, u64::MAX - 2);
        // Only dense values: the same.
        let small: Vec<u64> = (0..999u64).map(|i| (i * 37) % 1_500).collect();
        let expected = p(
            by_sorting(&small, 50),
            by_sorting(&small, 90),
            by_sorting(&small, 99),
            by_sorting(&small, 100),
        );
        assert_eq!(of(&small), expected);
    }

    /// p95 is the value of rank ceil(0.95 n), as found by sorting.
    #[test]
    fn p95_is_the_nearest_rank() {
        let hundred: Vec<u64> = (1..=100).collect();
        let mut h = Histogram::new();
        hundred.iter().for_each(|&v| h.record(v));
        assert_eq!(h.percentiles().map(|p| p.p95), Some(95));
        let values: Vec<u64> = (0..777u64).map(|i| (i * 7919) % 2_000).collect();
        let mut h = Histogram::new();
        values.iter().for_each(|&v| h.record(v));
        assert_eq!(h.percentiles().map(|p| p.p95), Some(by_sorting(&values, 95)));
        assert_eq!(h.percentiles().map(|p| p.p95), Some(by_sorting(&values, 95)));
    }

    /// The binned histogram counts every value once: per cycle when the values span at most
    /// `MAX_HISTOGRAM_BINS` cycles, else in power-of-two bins with aligned edges; the sum of
    /// two histograms of different widths is the histogram of all their values.
    #[test]
    fn binned_histograms_count_every_value_and_add() {
        use crate::measurement::MAX_HISTOGRAM_BINS;
        let mut narrow = Histogram::new();
        for v in [30u64, 31, 31, 45] {
            narrow.record(v);
        }
        let binned = narrow.binned().expect("values");
        assert_eq!((binned.lower, binned.width, binned.total()), (30, 1, 4));
        assert_eq!(binned.counts, [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        let mut wide = Histogram::new();
        let values: Vec<u64> = (0..5_000u64)
            .map(|i| 20 + (i * 104_729) % 5_000)
            .chain([DENSE_LIMIT as u64 + 9])
            .collect();
        values.iter().for_each(|&v| wide.record(v));
        let binned = wide.binned().expect("values");
        assert!(binned.width.is_power_of_two() && binned.width > 1);
        assert!(binned.counts.len() as u64 <= MAX_HISTOGRAM_BINS);
        assert_eq!(binned.lower % binned.width, 0);
        assert_eq!(binned.total(), values.len() as u64);
        for (lower, count) in binned.bins() {
            let inside = values.iter().filter(|&&v| v >= lower && v < lower + binned.width);
            assert_eq!(inside.count() as u64, count, "bin at {lower}");
        }
        let narrow = narrow.binned().expect("values");
        let sum = Binned::sum([&narrow, &binned].into_iter()).expect("a sum");
        assert_eq!(sum.width, binned.width);
        assert_eq!(sum.total(), binned.total() + 4);
        let first = sum.bins().find(|&(lower, _)| lower <= 30 && 30 < lower + sum.width);
        let all = values.iter().chain(&[30, 31, 31, 45]);
        let expected = all.filter(|&&v| v / sum.width == 30 / sum.width).count() as u64;
        assert_eq!(first.map(|b| b.1), Some(expected));
        assert_eq!(Histogram::new().binned(), None);
    }
}
