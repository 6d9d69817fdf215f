//! Bookkeeping invariants checked by the tests (flit conservation, VC chains, counters, and
//! with static faults: nothing in or through a faulty node).

use super::{EJECT, Engine, NONE, packets, timing};

impl Engine {
    /// Flits already handed to the destination node by messages not yet complete.
    pub(crate) fn flits_in_delivery(&self) -> u64 {
        self.ejecting
            .iter()
            .map(|&vc| u64::from(self.messages[self.vc_owner[vc as usize] as usize].delivered))
            .sum()
    }

    /// Whether some node is part-way through ejecting two messages at once (both have handed
    /// it a flit and neither is complete): their flits interleave.
    pub(crate) fn some_node_interleaves(&self) -> bool {
        let mut nodes: Vec<u32> = self
            .ejecting
            .iter()
            .filter(|&&vc| self.messages[self.vc_owner[vc as usize] as usize].delivered > 0)
            .map(|&vc| self.node_of(vc))
            .collect();
        let before = nodes.len();
        nodes.sort_unstable();
        nodes.dedup();
        nodes.len() < before
    }

    /// Checks every bookkeeping invariant; panics with a description on the first violation.
    /// Flit conservation: for each message, delivered + buffered flits = length, and along its
    /// chain of VCs the flits that entered a VC equal the flits that left its predecessor.
    pub(crate) fn check_invariants(&self) {
        let total = self.vc_owner.len();
        let mut buffered = vec![0u64; self.messages.len()];
        let mut owned_injection = 0u64;
        for vc in 0..total {
            if vc < self.network_vcs as usize && !self.ch_feed.is_empty() {
                let (channel, index) = (vc / self.v as usize, vc % self.v as usize);
                assert_eq!(
                    self.ch_feed[channel] >> index & 1 == 1,
                    self.vc_src[vc] != NONE,
                    "VC {vc}: ch_feed out of sync with vc_src"
                );
            }
            let id = self.vc_owner[vc];
            if id == NONE {
                assert_eq!(self.vc_count[vc], 0, "free VC {vc} holds flits");
                assert_eq!(self.vc_src[vc], NONE, "free VC {vc} has an upstream");
                continue;
            }
            // The front message's flits, and (`tail_sent` reallocation) those behind it.
            let (front, received) = self.check_queue(vc, &mut buffered);
            buffered[id as usize] += u64::from(front);
            if vc >= self.network_vcs as usize {
                owned_injection += 1;
                // Flits not fed yet are at the source (`source`; none with the parallel one).
                let receiving = self.receiving(vc as u32) as usize;
                let length = self.messages[receiving].length;
                buffered[receiving] += u64::from(length - self.vc_received[vc]);
            }
            let out = self.vc_out[vc];
            if out < EJECT {
                assert_eq!(self.receiving(out), id, "VC chain of message {id} broken");
                assert_eq!(
                    self.vc_received[out as usize],
                    received - front,
                    "flits lost or duplicated between VC {vc} and VC {out}"
                );
                assert_eq!(self.vc_src[out as usize], vc as u32);
            }
            // An injection VC holds a whole message (or reply).
            let longest =
                self.lengths.longest().max(self.replies.as_deref().map_or(0, |r| r.length));
            assert!(self.vc_count[vc] <= self.depth.max(longest), "buffer overflow");
            // A source that feeds its router's local port fills its buffers as a link does.
            let fed = self.source.as_deref().is_some_and(|s| s.feeds());
            assert!(
                !fed || vc < self.network_vcs as usize || self.vc_count[vc] <= self.depth,
                "injection VC {vc} over its depth"
            );
            if let Some(timing) = self.timing.as_deref() {
                // Flits on their way count in the buffer; credits on their way are no room.
                assert!(
                    timing.transit[vc] & !timing::HELD <= self.vc_count[vc],
                    "VC {vc}: more in transit than sent"
                );
                if vc < self.network_vcs as usize || fed {
                    assert!(
                        self.vc_count[vc] + timing.owed[vc] <= self.depth,
                        "VC {vc} over its credits"
                    );
                }
            }
            if let Some(replies) = self.replies.as_deref()
                && vc < self.network_vcs as usize
            {
                // Requests hold VCs 0..V/2 only, replies V/2..V (`replies`).
                let v = vc as u32 % self.v;
                let base = u32::from(self.messages[id as usize].vc_base);
                assert!(
                    base <= v && v < base + replies.class_vcs,
                    "VC {vc} (class VC {v}) held by message {id} of the class from {base}"
                );
            }
            if vc < self.network_vcs as usize {
                let channel = vc / self.v as usize;
                let busy = self.ch_busy[channel] >> (vc % self.v as usize) & 1 == 1;
                if self.queues_messages(vc as u32) {
                    // Granted until the receiving message's tail has been sent into it.
                    assert_eq!(busy, self.vc_src[vc] != NONE, "VC {vc}: grant out of sync");
                } else {
                    assert!(busy);
                }
            }
        }
        self.check_sources();
        let free: std::collections::HashSet<u32> = self.free.iter().copied().collect();
        let mut in_network = 0u64;
        for (id, message) in self.messages.iter().enumerate() {
            if free.contains(&(id as u32)) || message.head_vc == NONE {
                continue;
            }
            in_network += 1;
            assert_eq!(
                u64::from(message.delivered) + buffered[id],
                u64::from(message.length),
                "flit conservation broken for message {id}"
            );
        }
        assert_eq!(in_network, self.in_network);
        let mut queued = 0;
        for node in 0..self.geometry.nodes as usize {
            let mut id = self.queue_head[node];
            while id != NONE {
                queued += 1;
                id = self.messages[id as usize].next;
            }
        }
        assert_eq!(queued, self.queued);
        assert!(owned_injection <= in_network);
        // Messages split into packets (`packets`) count once, their packets once each.
        let extra = self.packets_in_flight_beyond_one();
        assert_eq!(
            self.generated_total + extra,
            self.delivered_total + self.switching.dropped + self.in_network + self.queued
        );
        // The batches hold the messages' latencies, or with broadcasts the broadcasts'.
        let (measured, outstanding, dropped) = match &self.broadcasts {
            None => (self.window.measured, self.window.outstanding, self.dropped_measured()),
            Some(b) => (b.counts.measured, b.counts.outstanding, 0),
        };
        let (done, batch_outstanding) = self.batches.totals();
        assert_eq!(batch_outstanding, outstanding, "batch outstanding counts");
        assert_eq!(done + outstanding + dropped, measured, "batch message counts");
        self.check_switching_invariants();
        for (ch, &busy) in self.ch_busy.iter().enumerate() {
            let listed = self.ch_pos[ch] != NONE;
            assert_eq!(busy != 0, listed, "active list out of sync at channel {ch}");
            if listed {
                assert_eq!(self.active[self.ch_pos[ch] as usize] as usize, ch);
            }
            let bit = self.active_bits[ch / 64] >> (ch % 64) & 1 == 1;
            assert_eq!(listed, bit, "active bitmap out of sync at channel {ch}");
        }
        self.check_fault_invariants();
    }

    /// Request-reply traffic: the most requests one node has waiting for replies.
    pub(crate) fn most_outstanding_requests(&self) -> u32 {
        self.replies.as_deref().map_or(0, |r| r.outstanding.iter().copied().max().unwrap_or(0))
    }

    /// Packets of split messages in flight beyond one per message (`packets`).
    pub(crate) fn packets_in_flight_beyond_one(&self) -> u64 {
        self.packets.as_deref().map_or(0, packets::Packets::in_flight_beyond_one)
    }

    /// Virtual cut-through's promise: a packet that has been granted a VC has room there, by
    /// its credits, for every flit of it that has not entered yet, so its flits never wait
    /// for a credit and a blocked packet gathers in one buffer. Panics where a packet's rest
    /// does not fit (wormhole switching's normal state); `checked` counts the packets seen.
    pub(crate) fn check_cut_through(&self, checked: &mut u64) {
        for vc in 0..self.vc_owner.len() {
            let out = self.vc_out[vc];
            if out >= EJECT {
                continue;
            }
            let id = self.vc_owner[vc];
            let length = self.messages[id as usize].length;
            let o = out as usize;
            let rest = length - self.vc_received[o];
            let room = self.credits(o);
            assert!(
                rest <= room,
                "cycle {}: message {id} has {rest} flits to send into VC {out}, which has room \
                 for {room}",
                self.now
            );
            *checked += 1;
        }
    }

    /// The front message of `vc`'s buffer: its flits there, and the flits of it that have
    /// entered. With `tail_sent` reallocation, also adds the flits of the messages behind it
    /// to `buffered` and checks the queue (`reallocation`).
    fn check_queue(&self, vc: usize, buffered: &mut [u64]) -> (u32, u32) {
        let Some(q) = self.queues.as_deref() else {
            return (self.vc_count[vc], self.vc_received[vc]);
        };
        let front = self.vc_owner[vc];
        let queued = q.behind_of(vc as u32, front);
        let mut behind = 0;
        for &id in &queued {
            let flits = if id == q.fifo[vc].back {
                self.vc_received[vc]
            } else {
                self.messages[id as usize].length
            };
            buffered[id as usize] += u64::from(flits);
            behind += flits;
        }
        assert_eq!(behind, q.fifo[vc].behind, "VC {vc}: flits behind the front miscounted");
        assert_eq!(
            queued.last().copied().unwrap_or(NONE),
            q.fifo[vc].back,
            "VC {vc}: queue's back"
        );
        let front_flits = self.vc_count[vc] - behind;
        if queued.is_empty() {
            (front_flits, self.vc_received[vc])
        } else {
            // Its tail has entered: the next message's header is behind it.
            assert!(front_flits > 0, "VC {vc}: a message queued behind an empty front");
            (front_flits, self.messages[front as usize].length)
        }
    }

    /// With faults: no allocated VC (flit, header, or reservation) in or leading out of a
    /// faulty node, and every message between healthy nodes with a fault-free minimal path.
    fn check_fault_invariants(&self) {
        let Some(faults) = &self.faults else {
            return;
        };
        for vc in 0..self.vc_owner.len() as u32 {
            if self.vc_owner[vc as usize] == NONE {
                continue;
            }
            let at = self.node_of(vc);
            assert!(!faults.is_faulty(at), "VC {vc} in use at faulty node {at}");
            if vc < self.network_vcs {
                let from = self.geometry.router_of(vc / self.v);
                assert!(!faults.is_faulty(from), "VC {vc} in use from faulty node {from}");
            }
        }
        let free: std::collections::HashSet<u32> = self.free.iter().copied().collect();
        for (id, message) in self.messages.iter().enumerate() {
            if free.contains(&(id as u32)) {
                continue;
            }
            let (s, d) = (message.source, message.dest);
            assert!(faults.reaches(s, d) && s != d, "message {id} {s}->{d} is not a served pair");
        }
    }
}
