//! Per-node injection processes other than Poisson: Bernoulli and two-state on/off sources
//! (`crate::scenario::InjectionProcess`), driven by a calendar of each node's next message.
//!
//! The Poisson sources need no per-node state (their superposition is one Poisson stream:
//! `traffic`). A Bernoulli or on/off source does: it is described by the cycle of its next
//! message alone, kept in a binary heap of (cycle, node) with one entry per node, so a cycle
//! visits only the nodes that send in it (no coin per node and cycle), ties go to the lower
//! node number (deterministic), and the heap, sized once, never allocates.
//!
//! - Bernoulli (rate p <= 1): the gap to a node's next message is geometric on 1, 2, ... with
//!   success probability p, the first message at cycle G - 1; so each cycle carries a message
//!   with probability p, independently, as BookSim's Bernoulli injection.
//! - On/off with mean burst length B and rate r (r <= B / (B + 1)): a two-state Markov chain
//!   per node and cycle. On, the node sends one message in the cycle and then turns off with
//!   probability a = 1/B; off, it turns on after the cycle with probability
//!   b = r / (B (1 - r)), which makes the stationary probability of being on, and so the rate,
//!   b / (a + b) = r. A burst (a run of consecutive cycles with a message) thus has a geometric
//!   number of messages with mean B, an off period a geometric number of cycles (>= 1) with
//!   mean 1/b. Each node starts in the stationary state: on with probability r, else after an
//!   off period.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::scenario::InjectionProcess;

use super::rng::{Geometric, Rng};

/// How a source's next message follows its last.
#[derive(Clone, Debug)]
enum Kind {
    /// Geometric gaps of success probability p.
    Bernoulli { gaps: Geometric },
    /// Turn off after a message with probability `leave`; off periods are geometric with
    /// success probability b.
    OnOff { leave: f64, off: Geometric },
}

/// The per-node sources of one run.
#[derive(Clone, Debug)]
pub(crate) struct Sources {
    kind: Kind,
    /// The cycle of each node's next message and the node, as `cycle << 32 | node`
    /// ([`entry`]), earliest first: one comparison of 128-bit integers orders them as the
    /// pairs (cycle, node) would be, where a pair's comparison costs two.
    calendar: BinaryHeap<Reverse<u128>>,
}

impl Sources {
    /// The sources of `nodes` nodes at `rate` messages per node per cycle (checked against the
    /// process's maximum by `sim::check`); `None` for Poisson.
    pub(crate) fn new(
        process: InjectionProcess,
        rate: f64,
        nodes: u32,
        rng: &mut Rng,
    ) -> Option<Sources> {
        let kind = match process {
            InjectionProcess::Poisson => return None,
            InjectionProcess::Bernoulli => Kind::Bernoulli { gaps: Geometric::new(rate) },
            InjectionProcess::OnOff { burst_length } => {
                let off_to_on = rate / (burst_length * (1.0 - rate));
                Kind::OnOff { leave: 1.0 / burst_length, off: Geometric::new(off_to_on) }
            }
        };
        let mut calendar = BinaryHeap::with_capacity(nodes as usize);
        if rate > 0.0 {
            for node in 0..nodes {
                let first = match kind {
                    Kind::Bernoulli { gaps } => rng.geometric(gaps, u64::MAX) - 1,
                    Kind::OnOff { off, .. } => {
                        if rng.open_unit() <= rate {
                            0
                        } else {
                            rng.geometric(off, u64::MAX)
                        }
                    }
                };
                calendar.push(Reverse(entry(first, node)));
            }
        }
        Some(Sources { kind, calendar })
    }

    /// The node of the next message generated before cycle `until`, if any (earliest first,
    /// then by node number); its source's following message is put on the calendar.
    #[inline]
    pub(crate) fn next(&mut self, until: u64, rng: &mut Rng) -> Option<u32> {
        let mut top = self.calendar.peek_mut()?;
        let Reverse(next) = *top;
        let (cycle, node) = ((next >> 32) as u64, next as u32);
        if cycle >= until {
            return None;
        }
        let gap = match self.kind {
            Kind::Bernoulli { gaps } => rng.geometric(gaps, u64::MAX),
            Kind::OnOff { leave, off } => {
                if rng.open_unit() <= leave {
                    1 + rng.geometric(off, u64::MAX)
                } else {
                    1
                }
            }
        };
        *top = Reverse(entry(cycle.saturating_add(gap), node));
        Some(node)
    }
}

/// A calendar entry: node `node`'s next message in cycle `cycle`.
#[inline]
fn entry(cycle: u64, node: u32) -> u128 {
    u128::from(cycle) << 32 | u128::from(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each node's message cycles over `cycles` cycles.
    fn emissions(process: InjectionProcess, rate: f64, nodes: u32, cycles: u64) -> Vec<Vec<u64>> {
        let mut rng = Rng::new(21);
        let mut sources = Sources::new(process, rate, nodes, &mut rng).unwrap();
        let mut at = vec![Vec::new(); nodes as usize];
        for cycle in 0..cycles {
            while let Some(node) = sources.next(cycle + 1, &mut rng) {
                let last = at[node as usize].last().copied();
                assert!(last.is_none_or(|l| l < cycle), "two messages of node {node} in {cycle}");
                at[node as usize].push(cycle);
            }
        }
        at
    }

    #[test]
    fn bernoulli_sources_send_at_their_rate_at_most_once_per_cycle() {
        for rate in [0.05, 0.5, 1.0] {
            let at = emissions(InjectionProcess::Bernoulli, rate, 8, 100_000);
            for node in &at {
                let measured = node.len() as f64 / 100_000.0;
                assert!((measured - rate).abs() < 0.01 * rate + 0.002, "{rate}: {measured}");
            }
        }
        assert!(emissions(InjectionProcess::Bernoulli, 0.0, 4, 1000).iter().all(Vec::is_empty));
    }

    #[test]
    fn on_off_sources_offer_the_rate_in_geometric_bursts() {
        let burst_length = 4.0;
        let rate = 0.1;
        let at = emissions(InjectionProcess::OnOff { burst_length }, rate, 16, 200_000);
        let total: usize = at.iter().map(Vec::len).sum();
        let measured = total as f64 / (16.0 * 200_000.0);
        assert!((measured - rate).abs() < 0.02 * rate, "rate {measured}");
        // Bursts: runs of consecutive cycles; their lengths are geometric with mean B:
        // P(K = k) = (1 - 1/B)^(k-1) / B.
        let mut counts = [0u64; 64];
        let mut bursts = 0u64;
        for node in &at {
            let mut run = 1usize;
            for pair in node.windows(2) {
                if pair[1] == pair[0] + 1 {
                    run += 1;
                } else {
                    counts[run.min(63)] += 1;
                    bursts += 1;
                    run = 1;
                }
            }
        }
        let mean = counts.iter().enumerate().map(|(k, &c)| k as f64 * c as f64).sum::<f64>()
            / bursts as f64;
        assert!((mean - burst_length).abs() < 0.05 * burst_length, "mean burst {mean}");
        for (k, &count) in counts.iter().enumerate().take(5).skip(1) {
            let expected = (1.0 - 1.0 / burst_length).powi(k as i32 - 1) / burst_length;
            let share = count as f64 / bursts as f64;
            assert!((share - expected).abs() < 0.01, "P(K = {k}) = {share} vs {expected}");
        }
    }

    #[test]
    fn sources_are_deterministic_per_seed() {
        let process = InjectionProcess::OnOff { burst_length: 3.0 };
        assert_eq!(emissions(process, 0.2, 8, 5_000), emissions(process, 0.2, 8, 5_000));
    }
}
