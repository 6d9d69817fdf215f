//! Confidence intervals on latency percentiles by sectioning.
//!
//! A percentile of one run is a nonlinear function of its whole sample, so batch means do not
//! apply directly. Sectioning does (S. Asmussen and P. W. Glynn, *Stochastic Simulation*,
//! Springer 2007, section III.5; M. K. Nakayama, "Confidence intervals for quantiles using
//! sectioning when applying variance-reduction techniques", ACM TOMACS 24(4), 2014): the
//! window's messages are split into `s` sections by generation time, the percentile is
//! estimated in each section, and the interval is the whole run's percentile plus or minus
//! `t_{s-1}` times the sections' standard deviation over `sqrt(s)`. Sections are long (the
//! minimum window starts with [`SECTIONS`] of them, and they merge in pairs at twice that),
//! so they are about as independent as the interval batches of the mean
//! (`sim::batch_means`).
//!
//! A section's percentile is biased when the section holds few messages beyond the
//! percentile's rank, so for the q-th percentile each section must hold at least
//! `10 / (1 - q)` messages (1,000 for p99): sections merge in pairs until they do, and with
//! fewer than [`MIN_SECTIONS`] sections left there is no interval (a p99 from a few hundred
//! messages is not worth one). When the run's latency batch means failed their test of
//! independence (`sim::batch_means`), the sections are correlated too, and the variance gets
//! the same AR(1) correlation adjustment from the section percentiles' lag-1 autocorrelation
//! ([`super::batch_means::correlation_adjustment`]). Each section keeps an exact histogram
//! (`sim::percentiles`), a few KiB while latencies stay below a thousand cycles; recording is
//! one more increment per delivered measured message.

use super::batch_means::correlation_adjustment;
use super::divisor::LastBin;
use super::percentiles::Histogram;
use super::stats::student_t975;
use crate::measurement::Percentiles;

/// Sections in the minimum window (they merge in pairs at twice as many).
pub(crate) const SECTIONS: u64 = 16;

/// Fewest sections an interval is made from.
const MIN_SECTIONS: usize = 8;

/// The percentiles with intervals, in percent, in the order of `Measurement::latency_percentiles_ci95`.
const PERCENTS: [u64; 4] = [50, 90, 95, 99];

/// Latency histograms per section of generation time.
#[derive(Clone, Debug)]
pub(crate) struct Sections {
    length: u64,
    /// The section of the last offset binned.
    last: LastBin,
    histograms: Vec<Histogram>,
}

impl Sections {
    /// Sections of `length >= 1` cycles.
    pub(crate) fn new(length: u64) -> Sections {
        Sections { length: length.max(1), last: LastBin::default(), histograms: Vec::new() }
    }

    /// A measured message generated `offset` cycles into the window took `latency` cycles.
    #[inline]
    pub(crate) fn delivered(&mut self, offset: u64, latency: u64) {
        let mut index = self.last.index(offset, self.length);
        while index >= 2 * SECTIONS {
            let histograms = std::mem::take(&mut self.histograms);
            let mut merged: Vec<Histogram> = Vec::with_capacity(histograms.len().div_ceil(2));
            let mut pairs = histograms.into_iter();
            while let Some(mut first) = pairs.next() {
                if let Some(second) = pairs.next() {
                    first.add(&second);
                }
                merged.push(first);
            }
            self.histograms = merged;
            self.length *= 2;
            self.last.forget();
            index = self.last.index(offset, self.length);
        }
        let index = index as usize;
        if self.histograms.len() <= index {
            self.histograms.resize_with(index + 1, Histogram::default);
        }
        self.histograms[index].record(latency);
    }

    /// The 95% half-widths of p50, p90, p95 and p99 about the run's own `overall`
    /// percentiles, over the sections that ended by `span` cycles into the window; `None` for
    /// a percentile without enough messages per section. With `correlated` (the latency batch
    /// means failed their test) each variance has the correlation adjustment.
    pub(crate) fn intervals(
        &self,
        overall: Percentiles,
        span: u64,
        correlated: bool,
    ) -> [Option<f64>; 4] {
        let ended = ((span / self.length) as usize).min(self.histograms.len());
        let counts: Vec<u64> = self.histograms[..ended].iter().map(Histogram::count).collect();
        let centre = [overall.p50, overall.p90, overall.p95, overall.p99];
        // Per percentile, how many sections to merge into one (None: no interval).
        let groups: [Option<usize>; 4] = PERCENTS.map(|percent| {
            let needed = 1000 / (100 - percent);
            let enough = |group: usize| {
                counts.chunks_exact(group).all(|c| c.iter().sum::<u64>() >= needed)
                    && counts.len() / group >= MIN_SECTIONS
            };
            let mut group = 1usize;
            while !enough(group) && counts.len() / (2 * group) >= MIN_SECTIONS {
                group *= 2;
            }
            enough(group).then_some(group)
        });
        // The merged sections' percentiles, once per distinct group size.
        let mut merged: Vec<(usize, Vec<Percentiles>)> = Vec::new();
        let mut halves = [None; 4];
        for (k, group) in groups.iter().enumerate() {
            let Some(group) = *group else { continue };
            if !merged.iter().any(|(g, _)| *g == group) {
                let sections = self.histograms[..ended]
                    .chunks_exact(group)
                    .filter_map(|chunk| {
                        let mut merged = Histogram::default();
                        for h in chunk {
                            merged.add(h);
                        }
                        merged.percentiles()
                    })
                    .collect();
                merged.push((group, sections));
            }
            let Some((_, sections)) = merged.iter().find(|(g, _)| *g == group) else { continue };
            let estimates: Vec<f64> =
                sections.iter().map(|p| [p.p50, p.p90, p.p95, p.p99][k] as f64).collect();
            let s = estimates.len() as f64;
            let variance =
                estimates.iter().map(|q| (q - centre[k] as f64).powi(2)).sum::<f64>() / (s - 1.0);
            let adjustment = match correlated {
                true => correlation_adjustment(&estimates).0,
                false => 1.0,
            };
            halves[k] =
                Some(student_t975(estimates.len() as u64 - 1) * (adjustment * variance / s).sqrt());
        }
        halves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_merge_and_give_intervals_only_with_enough_messages() {
        let mut s = Sections::new(10);
        // 330 cycles, 50 messages per cycle with latencies 0..50 (uniform): the 33rd section
        // merges the 32 to 16 of 20 cycles, 1,000 messages each, and a 17th begins.
        for offset in 0..330 {
            for latency in 0..50 {
                s.delivered(offset, latency);
            }
        }
        assert_eq!((s.length, s.histograms.len()), (20, 17));
        let overall = Percentiles { p50: 24, p90: 44, p95: 47, p99: 49, max: 49 };
        let halves = s.intervals(overall, 320, false);
        // Every section has the same distribution: zero width around the overall value.
        assert_eq!(halves, [Some(0.0); 4]);
        // 100 messages per section: p50 (needs 20) and p90 (100) have intervals, p95 (200)
        // needs sections merged to 8 of 200 messages, p99 (1,000) has none.
        let mut few = Sections::new(10);
        for offset in 0..160 {
            for latency in 0..10 {
                few.delivered(offset, latency);
            }
        }
        let halves = few.intervals(overall, 160, false);
        assert!(halves[0].is_some() && halves[1].is_some() && halves[2].is_some());
        assert!(halves[3].is_none());
    }
}
