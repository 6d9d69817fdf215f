//! Packets (`packet_size` P): a message longer than P flits is split, when it is generated,
//! into ceil(M / P) packets of P flits (the last one shorter), each a record of the message
//! slab of its own: it queues at the source, takes an injection VC, is routed (with its own
//! random choices: a tie-break, a dragonfly's intermediate group, an adaptive output) and
//! delivered like a message. What the message is measured by is its packets' together:
//! - generated once, at the cycle the message was (every packet carries that cycle);
//! - its source wait ends when its first packet is injected (packets leave the source queue
//!   in order, so the first injected is packet 0);
//! - it is delivered, and its latency counted, when its last packet's tail is ejected (in any
//!   order: packets routed on their own may overtake each other);
//! - its hop count is its packets' mean; its flits are counted where each packet is delivered.
//!
//! A message of at most P flits is one packet with no record here (`Message::split` is `NONE`),
//! so a run whose messages all fit, or with `packet_size` unset (`Engine::packets` is `None`),
//! is the run without packets, bit for bit. Source queues, injection VCs, the backlog limit and
//! the throughput mode's queue capacity count packets.

use super::NONE;

/// A split message's state, while some of its packets are not delivered.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Split {
    /// Packets not delivered yet.
    remaining: u32,
    /// Packets in all (for the mean hop count).
    packets: u32,
    /// The message's length in flits.
    length: u32,
    /// Hops of its delivered packets, summed.
    hops: u32,
    /// The cycle its first packet was injected, or `u64::MAX` before.
    injected: u64,
}

/// What a split message is measured by, once its last packet is delivered.
pub(super) struct Whole {
    pub(super) length: u32,
    /// The packets' mean hop count.
    pub(super) hops: f64,
    pub(super) injected: u64,
}

/// The split messages in flight (a slab with a free list, allocated as the first ones are
/// split and reused after: nothing per packet after warm-up).
pub(super) struct Packets {
    /// P: the most flits of one packet.
    pub(super) size: u32,
    splits: Vec<Split>,
    free: Vec<u32>,
}

impl Packets {
    pub(super) fn new(size: u32) -> Packets {
        Packets { size, splits: Vec::new(), free: Vec::new() }
    }

    /// The lengths of the packets of a message of `length` flits, in order; `None` when it is
    /// one packet.
    pub(super) fn split(&self, length: u32) -> Option<impl Iterator<Item = u32> + use<>> {
        let size = self.size;
        (length > size).then(|| {
            let packets = length.div_ceil(size);
            (0..packets).map(move |i| if i + 1 < packets { size } else { length - i * size })
        })
    }

    /// Opens the record of a message of `length` flits split into `packets`; returns its id.
    pub(super) fn open(&mut self, length: u32, packets: u32) -> u32 {
        let split = Split { remaining: packets, packets, length, hops: 0, injected: u64::MAX };
        super::slab_insert(&mut self.splits, &mut self.free, split)
    }

    /// A packet of split message `id` was injected in cycle `at`.
    #[inline]
    pub(super) fn injected(&mut self, id: u32, at: u64) {
        let split = &mut self.splits[id as usize];
        split.injected = split.injected.min(at);
    }

    /// A packet of split message `id`, which took `hops` hops, was delivered: the message as a
    /// whole when it was the last one (the record is freed), else `None`.
    pub(super) fn delivered(&mut self, id: u32, hops: u32) -> Option<Whole> {
        debug_assert_ne!(id, NONE);
        let split = &mut self.splits[id as usize];
        split.hops += hops;
        split.remaining -= 1;
        if split.remaining > 0 {
            return None;
        }
        self.free.push(id);
        Some(Whole {
            length: split.length,
            hops: f64::from(split.hops) / f64::from(split.packets),
            injected: split.injected,
        })
    }

    /// Test builds: packets of split messages in flight beyond one per message, so that the
    /// engine's packet counts (`in_network`, `queued`) minus this are messages (the
    /// invariants' message balance).
    #[cfg(test)]
    pub(super) fn in_flight_beyond_one(&self) -> u64 {
        let free: std::collections::HashSet<u32> = self.free.iter().copied().collect();
        (0..self.splits.len() as u32)
            .filter(|id| !free.contains(id))
            .map(|id| u64::from(self.splits[id as usize].remaining - 1))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_splits_into_full_packets_and_a_shorter_last_one() {
        let packets = Packets::new(4);
        assert!(packets.split(4).is_none());
        assert!(packets.split(1).is_none());
        assert_eq!(packets.split(5).map(Iterator::collect::<Vec<_>>), Some(vec![4, 1]));
        assert_eq!(packets.split(12).map(Iterator::collect::<Vec<_>>), Some(vec![4, 4, 4]));
        assert_eq!(Packets::new(1).split(3).map(Iterator::collect::<Vec<_>>), Some(vec![1, 1, 1]));
    }

    #[test]
    fn the_whole_message_is_its_last_packet_first_injection_and_mean_hops() {
        let mut packets = Packets::new(4);
        let id = packets.open(10, 3);
        assert_eq!(packets.in_flight_beyond_one(), 2);
        packets.injected(id, 7);
        packets.injected(id, 9);
        assert!(packets.delivered(id, 3).is_none());
        assert!(packets.delivered(id, 5).is_none());
        assert_eq!(packets.in_flight_beyond_one(), 0);
        let whole = packets.delivered(id, 4).expect("the last packet");
        assert_eq!((whole.length, whole.hops, whole.injected), (10, 4.0, 7));
        // The record is reused.
        assert_eq!(packets.open(8, 2), id);
    }
}
