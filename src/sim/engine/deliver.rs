//! The end of a worm: a VC whose buffer the tail flit has left is released (a freed injection
//! VC takes the next queued message), and a message whose tail is ejected is delivered and
//! measured.

use crate::scenario::Ejection;

use super::{EJECT, Engine, NONE};

impl Engine {
    /// Frees a VC whose buffer the tail flit has left (with `T`, a network VC once the tail's
    /// credit is back, see `timing`; with `tail_sent` reallocation its grant has ended already,
    /// and the next message in the buffer takes the front, see `reallocation`).
    pub(super) fn release<const T: bool>(&mut self, vc: u32) {
        if T && self.queues_messages(vc) {
            if vc < self.network_vcs {
                // The next message in the buffer, if any, takes the front (`reallocation`).
                self.leave_buffer(vc);
                return;
            }
            if self.source.as_deref().is_some_and(|s| s.feeds()) {
                // An injection VC fed by its source queues messages too (`source`).
                self.leave_buffer(vc);
                if self.vc_owner[vc as usize] == NONE {
                    let (node, v) = self.per_channel.div_rem(vc - self.network_vcs);
                    self.inj_busy[node as usize] &= !(1 << v);
                }
                return;
            }
        }
        let vcu = vc as usize;
        let out = self.vc_out[vcu];
        if out < EJECT {
            self.unfeed(out);
        }
        self.vc_owner[vcu] = NONE;
        self.vc_out[vcu] = NONE;
        self.vc_received[vcu] = 0;
        if vc < self.network_vcs {
            if T && let Some(timing) = self.timing.as_deref_mut() {
                timing.drained(self.now, vc, self.per_channel.div(vc));
                return;
            }
            self.end_grant(vc);
        } else {
            let (node, v) = self.per_channel.div_rem(vc - self.network_vcs);
            self.inj_busy[node as usize] &= !(1 << v);
            if self.source_idle(node)
                && let Some(head) = self.dequeue(node)
            {
                self.inject(node, v, head, self.now + 1);
            }
        }
    }

    /// Takes the message at the head of `node`'s source queue out of it, if there is one.
    pub(super) fn dequeue(&mut self, node: u32) -> Option<u32> {
        self.unlink(node, NONE)
    }

    /// Takes the message after `before` (`NONE`: the head) out of `node`'s source queue, if
    /// there is one.
    pub(super) fn unlink(&mut self, node: u32, before: u32) -> Option<u32> {
        let n = node as usize;
        let id = match before {
            NONE => self.queue_head[n],
            before => self.messages[before as usize].next,
        };
        if id == NONE {
            return None;
        }
        let next = self.messages[id as usize].next;
        match before {
            NONE => self.queue_head[n] = next,
            before => self.messages[before as usize].next = next,
        }
        if next == NONE {
            self.queue_tail[n] = before;
        }
        self.queued -= 1;
        if let Some(t) = &mut self.throughput {
            t.dequeued(node);
        }
        if let Some(replies) = self.replies.as_deref_mut()
            && replies.last_reply[n] == id
        {
            replies.last_reply[n] = before;
        }
        Some(id)
    }

    /// The tail of message `id` has been ejected from `vc`.
    pub(super) fn complete<const T: bool>(&mut self, id: u32, vc: u32) {
        let mut message = self.messages[id as usize];
        let node = message.dest as usize;
        self.release::<T>(vc);
        if self.ejection == Ejection::Single {
            self.eject_busy[node] = false;
        }
        self.in_network -= 1;
        // Flits count where each packet is delivered (a message's own, unless it was split).
        self.count_delivered_flits(&message);
        let mut hops = f64::from(message.hops);
        if message.split != NONE
            && let Some(packets) = self.packets.as_deref_mut()
        {
            // A packet of a split message: the message is delivered with its last packet.
            let Some(whole) = packets.delivered(message.split, message.hops) else {
                self.free.push(id);
                return;
            };
            (message.length, message.injected, hops) = (whole.length, whole.injected, whole.hops);
        }
        self.delivered_total += 1;
        // Delivered at the end of this cycle, plus the ejection channel's cycle if any and the
        // destination router's switch pipeline (`timing`).
        let switch = if T { self.timing.as_deref().map_or(0, |t| t.eject) } else { 0 };
        let delivered = self.now + 1 + u64::from(self.injection_channel) + u64::from(switch);
        if self.broadcasts.is_none() && self.window.end.is_none_or(|end| message.generated < end) {
            let latency = (delivered - message.generated) as f64;
            self.transient.delivered(message.generated, latency);
        }
        let w = &mut self.window;
        if w.open {
            w.delivered += 1;
            self.batches.accepted(self.now - w.start);
            w.node_messages[node] += 1;
            if let Some(t) = &mut self.throughput {
                t.delivered(message.dest);
            }
        }
        if message.measured {
            let (cycles, waited) =
                (delivered - message.generated, message.injected - message.generated);
            w.latencies.record(cycles);
            w.network_latencies.record(cycles - waited);
            w.source_waits.record(waited);
            let latency = cycles as f64;
            let wait = waited as f64;
            w.latency_sum += latency;
            w.wait_sum += wait;
            w.network_sum += latency - wait;
            w.hops_sum += hops;
            w.length_sum += f64::from(message.length);
            w.outstanding -= 1;
            if self.broadcasts.is_none() {
                // A reply counts in its request's batch (`replies`).
                let origin = message.generated - u64::from(message.request_latency);
                self.batches.delivered(origin - w.start, latency);
                self.sections.delivered(origin - w.start, cycles);
            }
        }
        if self.replies.is_some() {
            self.request_or_reply_done(&message, delivered);
        }
        self.free.push(id);
        if self.broadcasts.is_some() {
            self.delivered_with_broadcasts(&message);
        }
    }

    /// The flits of a delivered packet (a whole message unless it was split), counted per node
    /// in the window; the message itself is counted with its last packet.
    fn count_delivered_flits(&mut self, packet: &super::Message) {
        let w = &mut self.window;
        if w.open {
            w.node_flits[packet.dest as usize] += u64::from(packet.length);
            if let Some(t) = &mut self.throughput {
                t.delivered_flits(packet.dest, packet.length);
            }
        }
    }
}
