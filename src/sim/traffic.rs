//! Traffic: when messages are generated (the process) and where they go (the pattern).
//!
//! The process is Poisson at `rate` messages per node per cycle. Independent Poisson sources
//! superpose to one Poisson stream of rate `nodes * rate` whose arrivals pick their source
//! uniformly, which is what [`Traffic::next_arrival`] draws: exact exponential gaps, any number
//! of arrivals in one cycle, and cost proportional to the arrivals only. The pattern is uniform
//! over the other nodes. Later issues add patterns (broadcast trees, fault-aware destinations)
//! as new [`Pattern`] variants; the engine only asks for the next (cycle, source, destination).

use super::rng::Rng;

/// Where a new message goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// Uniform over all nodes except the source.
    Uniform,
}

/// A Poisson message source for the whole network.
#[derive(Clone, Debug)]
pub(crate) struct Traffic {
    nodes: u32,
    pattern: Pattern,
    /// Mean gap between network-wide arrivals in cycles; infinite at rate 0.
    mean_gap: f64,
    /// Time of the next arrival (continuous cycles).
    next_time: f64,
}

impl Traffic {
    /// A source of `rate` messages per node per cycle on `nodes >= 2` nodes.
    pub(crate) fn new(nodes: u32, rate: f64, pattern: Pattern, rng: &mut Rng) -> Traffic {
        let total = rate * f64::from(nodes);
        let mean_gap = if total > 0.0 { 1.0 / total } else { f64::INFINITY };
        let mut traffic = Traffic { nodes, pattern, mean_gap, next_time: 0.0 };
        traffic.next_time = traffic.gap(rng);
        traffic
    }

    fn gap(&self, rng: &mut Rng) -> f64 {
        if self.mean_gap.is_finite() { rng.exponential(self.mean_gap) } else { f64::INFINITY }
    }

    /// The next message generated before time `until`, as (source, destination), if any.
    #[inline]
    pub(crate) fn next_arrival(&mut self, until: u64, rng: &mut Rng) -> Option<(u32, u32)> {
        if self.next_time >= until as f64 {
            return None;
        }
        self.next_time += self.gap(rng);
        let source = rng.below(u64::from(self.nodes)) as u32;
        let dest = match self.pattern {
            Pattern::Uniform => {
                let other = rng.below(u64::from(self.nodes - 1)) as u32;
                if other >= source { other + 1 } else { other }
            }
        };
        Some((source, dest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_destinations_are_right() {
        let mut rng = Rng::new(3);
        let mut traffic = Traffic::new(4, 0.05, Pattern::Uniform, &mut rng);
        let (mut count, mut self_sent) = (0u32, 0u32);
        let mut per_dest = [0u32; 4];
        for cycle in 1..=100_000u64 {
            while let Some((s, d)) = traffic.next_arrival(cycle, &mut rng) {
                count += 1;
                self_sent += u32::from(s == d);
                per_dest[d as usize] += 1;
            }
        }
        assert_eq!(self_sent, 0);
        assert!((19_400..20_600).contains(&count), "{count}");
        assert!(per_dest.iter().all(|&c| c > 4_600), "{per_dest:?}");
        let mut silent = Traffic::new(4, 0.0, Pattern::Uniform, &mut rng);
        assert_eq!(silent.next_arrival(1_000_000, &mut rng), None);
    }
}
