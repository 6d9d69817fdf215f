//! Message lengths: each message's length in flits, drawn from the scenario's
//! `message_length_distribution` (`crate::scenario::MessageLengths`) with mean M
//! (`message_length`).
//!
//! - `fixed`: M, drawing nothing, so the random streams (and results) of every fixed-length
//!   run are those of the simulator before lengths could vary.
//! - `bimodal`: `max` with probability (M - min) / (max - min), else `min`, from one uniform
//!   integer below `max - min` (exact: no rounding of the probability).
//! - `geometric`: 1, 2, 3, ... with P(L = l) = (1 - 1/M)^(l-1) / M by inversion (one uniform;
//!   `rng::Rng::geometric`), capped at [`GEOMETRIC_CAP`] flits, which moves the moments by
//!   less than 1e-20 for any M the bounds allow (M <= 2^20: P(L > 2^26) < e^-64).
//! - `uniform`: `min + U{0..=max - min}`.
//!
//! A length is drawn once per generated message, from the run's stream, right after the
//! message's tie-break bits; nothing is allocated.

use crate::scenario::{MessageLengths, Scenario};

use super::rng::{Geometric, Rng};

/// The longest geometric length drawn, in flits.
pub(crate) const GEOMETRIC_CAP: u32 = 1 << 26;

/// A sampler of message lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Lengths {
    /// Every message has this length.
    Fixed(u32),
    /// `min + span` with probability `long / span`, else `min`.
    Bimodal { min: u32, span: u32, long: u32 },
    /// Geometric with success probability 1/M.
    Geometric(Geometric),
    /// `min + U{0..span}`, `span = max - min + 1`.
    Uniform { min: u32, span: u32 },
}

impl Lengths {
    /// The sampler of a scenario accepted by `sim::check`.
    pub(crate) fn new(scenario: &Scenario) -> Lengths {
        let mean = scenario.message_length;
        match scenario.message_length_distribution {
            MessageLengths::Fixed => Lengths::Fixed(mean),
            MessageLengths::Bimodal { min, max } => Lengths::Bimodal {
                min,
                span: max.saturating_sub(min).max(1),
                long: mean.saturating_sub(min),
            },
            MessageLengths::Geometric if mean <= 1 => Lengths::Fixed(1),
            MessageLengths::Geometric => Lengths::Geometric(Geometric::new(1.0 / f64::from(mean))),
            MessageLengths::Uniform { min, max } => {
                Lengths::Uniform { min, span: max.saturating_sub(min) + 1 }
            }
        }
    }

    /// The next message's length in flits (>= 1).
    #[inline]
    pub(crate) fn draw(&self, rng: &mut Rng) -> u32 {
        match *self {
            Lengths::Fixed(length) => length,
            Lengths::Bimodal { min, span, long } => {
                if (rng.below(u64::from(span)) as u32) < long {
                    min + span
                } else {
                    min
                }
            }
            Lengths::Geometric(law) => rng.geometric(law, u64::from(GEOMETRIC_CAP)) as u32,
            Lengths::Uniform { min, span } => min + rng.below(u64::from(span)) as u32,
        }
    }

    /// The longest length [`Lengths::draw`] returns (the invariants bound buffers by it).
    #[cfg(test)]
    pub(crate) fn longest(&self) -> u32 {
        match *self {
            Lengths::Fixed(length) => length,
            Lengths::Bimodal { min, span, .. } => min + span,
            Lengths::Geometric(_) => GEOMETRIC_CAP,
            Lengths::Uniform { min, span } => min + span - 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Topology;

    /// Sample mean and second moment of `n` lengths.
    fn moments(lengths: MessageLengths, mean: u32, n: u32) -> (f64, f64, u32, u32) {
        let scenario = Scenario {
            message_length: mean,
            message_length_distribution: lengths,
            ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
        };
        let sampler = Lengths::new(&scenario);
        let mut rng = Rng::new(11);
        let (mut sum, mut sum2, mut low, mut high) = (0.0, 0.0, u32::MAX, 0);
        for _ in 0..n {
            let l = sampler.draw(&mut rng);
            sum += f64::from(l);
            sum2 += f64::from(l) * f64::from(l);
            (low, high) = (low.min(l), high.max(l));
        }
        assert!(high <= sampler.longest());
        (sum / f64::from(n), sum2 / f64::from(n), low, high)
    }

    #[test]
    fn sampled_lengths_have_the_distributions_moments() {
        let cases = [
            (MessageLengths::Bimodal { min: 4, max: 64 }, 16, Some((4, 64))),
            (MessageLengths::Uniform { min: 1, max: 31 }, 16, Some((1, 31))),
            (MessageLengths::Geometric, 16, None),
            (MessageLengths::Geometric, 1, Some((1, 1))),
            (MessageLengths::Fixed, 9, Some((9, 9))),
        ];
        for (lengths, mean, range) in cases {
            let (m, m2, low, high) = moments(lengths, mean, 400_000);
            let want = lengths.second_moment(mean);
            assert!((m - f64::from(mean)).abs() < 0.01 * f64::from(mean), "{lengths:?}: mean {m}");
            assert!((m2 - want).abs() < 0.02 * want, "{lengths:?}: E[M^2] {m2} vs {want}");
            if let Some(range) = range {
                assert_eq!((low, high), range, "{lengths:?}");
            }
        }
        // The closed forms: bimodal 4 or 64 with P(64) = 12/60; uniform 1..=31; geometric.
        let bimodal = MessageLengths::Bimodal { min: 4, max: 64 }.second_moment(16);
        assert!((bimodal - (0.8 * 16.0 + 0.2 * 4096.0)).abs() < 1e-9);
        assert_eq!(MessageLengths::Uniform { min: 1, max: 31 }.second_moment(16), 256.0 + 80.0);
        assert_eq!(MessageLengths::Geometric.second_moment(16), 496.0);
    }

    #[test]
    fn fixed_lengths_draw_nothing() {
        let mut rng = Rng::new(3);
        let mut untouched = rng.clone();
        assert_eq!(Lengths::Fixed(7).draw(&mut rng), 7);
        assert_eq!(rng.next_u64(), untouched.next_u64());
    }
}
