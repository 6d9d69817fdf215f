//! VC reallocation once the tail is sent (`vc_reallocation: tail_sent`, BookSim's default
//! `wait_for_tail_credit = 0`): an output VC may be granted to the next message as soon as
//! the last one's tail has been sent into it, so one buffer can hold the end of one message
//! and the beginning of the next ones.
//!
//! By default (`drained`) a VC belongs to one message from the grant until its tail has left
//! the buffer (and, with a credit loop, until the tail's credit is back), and the per-VC
//! arrays describe that message. With `tail_sent` a buffer is a FIFO of messages:
//! - `vc_owner` is the front message, the one whose flits leave the buffer (`vc_out` is its
//!   output); the messages behind it are linked through [`Queues::next`] from the front to
//!   [`Fifo::back`], the last one granted the VC, which is still receiving while its tail
//!   has not been sent (`vc_src` and `vc_received` are the receiving side: the back message's,
//!   or the front's when it is alone);
//! - `vc_count` counts every flit in the buffer (so the room test and the flits on their way
//!   need nothing new); [`Fifo::behind`] counts those of the messages behind the front, so
//!   the front's are `vc_count - behind`. The buffer's oldest flit is the front's whenever the
//!   front has one, and the front has one whenever a message is behind it (its tail has
//!   arrived and not left), so phase A's test of the oldest flit is unchanged;
//! - a message is behind another only in the VC that holds its header (where it waits) and
//!   ahead of another only in the VC that holds its tail, so one link per message
//!   (`next`, indexed by message id) describes every FIFO, from the front to the back (the
//!   back's own link, if any, is in the VC of its tail, upstream; it is cleared when that
//!   tail moves on, before the message can be ahead of another here);
//! - when the tail enters a VC its grant ends (`ch_busy` cleared at once; no credit is
//!   awaited), and when the front's tail leaves the buffer, the next message becomes the
//!   front and its header is routed from the next cycle plus `router_delay` (or from its
//!   arrival if later), as a header that reached an empty buffer would be.
//!
//! The adaptive VCs of a routing whose deadlock freedom rests on an escape class
//! (`Router::atomic_vcs`: `duato`, `nbc`, a graph's `minimal`) keep the `drained` policy: Duato's
//! condition assumes a buffer never holds two messages, and without it those routings
//! deadlock (a header granted a full adaptive VC waits there for the messages ahead of it).
//!
//! It runs on the timed engine (`timing`; `tail_sent` makes a scenario timed), whose `T` paths
//! carry the few tests below, so the default engine has no trace of it.

use super::{EJECT, Engine, NONE, Pending};

/// `Queues::arrival` of a message whose header has not arrived where it waits.
const NOT_ARRIVED: u64 = u64::MAX;

/// One VC's queue beyond its front message (`Queues::fifo`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Fifo {
    /// Flits in the buffer of the messages behind the front one.
    pub(super) behind: u32,
    /// The last message granted the VC while that is not the front one, else `NONE`.
    pub(super) back: u32,
}

/// The messages queued behind the front of each VC's buffer.
pub(super) struct Queues {
    /// Per VC: its queue (side by side, as a flit sent reads both).
    pub(super) fifo: Vec<Fifo>,
    /// Per message id: the message behind it in the buffer of the VC that holds its tail, or
    /// `NONE` (grown with the message slab).
    next: Vec<u32>,
    /// Per message id: for a message waiting behind another, the cycle from which its header
    /// (which has entered the buffer) may leave it, or `NOT_ARRIVED`.
    arrival: Vec<u64>,
    /// Bit v set when VC v of every channel is reallocated once drained all the same (the
    /// routing's `Router::atomic_vcs`).
    atomic: u64,
}

impl Queues {
    pub(super) fn new(total_vcs: usize, atomic: u64) -> Queues {
        Queues {
            atomic,
            fifo: vec![Fifo { behind: 0, back: NONE }; total_vcs],
            next: Vec::new(),
            arrival: Vec::new(),
        }
    }

    /// Whether VC `v` of a channel is reallocated once the tail is sent (else once drained).
    #[inline(always)]
    pub(super) fn queues(&self, v: u32) -> bool {
        self.atomic >> v & 1 == 0
    }

    /// The message whose flits enter `vc`'s buffer: the back one, or the front one (`owner`).
    #[inline(always)]
    pub(super) fn receiving(&self, vc: u32, owner: u32) -> u32 {
        match self.fifo[vc as usize].back {
            NONE => owner,
            back => back,
        }
    }

    /// Test builds: the messages in `vc`'s buffer behind its front message `front`, front to
    /// back (none unless a message is granted it behind the front: `front`'s link is its
    /// tail's VC's).
    #[cfg(test)]
    pub(super) fn behind_of(&self, vc: u32, front: u32) -> Vec<u32> {
        let mut queued = Vec::new();
        if self.fifo[vc as usize].back == NONE {
            return queued;
        }
        // The back message may have a link of its own, in the VC of its tail upstream.
        let mut at = self.next.get(front as usize).copied().unwrap_or(NONE);
        while at != NONE {
            queued.push(at);
            if at == self.fifo[vc as usize].back {
                break;
            }
            at = self.next.get(at as usize).copied().unwrap_or(NONE);
        }
        queued
    }
}

impl Engine {
    /// Whether network VC `vc`'s buffer may queue messages (`tail_sent`, and not one of the
    /// routing's drained VCs).
    #[inline(always)]
    pub(super) fn queues_messages(&self, vc: u32) -> bool {
        self.queues.as_deref().is_some_and(|q| q.queues(self.per_channel.rem(vc)))
    }

    /// The message whose flits enter `vc`'s buffer (`Queues::receiving`; the owner without
    /// queues).
    #[inline(always)]
    pub(super) fn receiving(&self, vc: u32) -> u32 {
        let owner = self.vc_owner[vc as usize];
        self.queues.as_deref().map_or(owner, |q| q.receiving(vc, owner))
    }

    /// Grants network VC `out` to message `id` while another message's flits are still in its
    /// buffer (its tail has been sent): `id` queues behind them. Returns false when the buffer
    /// is empty (the grant is then the default one).
    /// Inlined for its one test: without queues (the default) a grant is never behind.
    #[inline(always)]
    pub(super) fn grant_behind(&mut self, out: u32, id: u32) -> bool {
        self.queues.is_some() && self.queue_behind(out, id)
    }

    /// [`Engine::grant_behind`] with queues.
    fn queue_behind(&mut self, out: u32, id: u32) -> bool {
        let Some(q) = self.queues.as_deref_mut() else { return false };
        let front = self.vc_owner[out as usize];
        if front == NONE {
            return false;
        }
        let last = q.receiving(out, front);
        let needed = self.messages.len();
        if q.next.len() < needed {
            q.next.resize(needed, NONE);
            q.arrival.resize(needed, NOT_ARRIVED);
        }
        q.next[last as usize] = id;
        q.fifo[out as usize].back = id;
        q.arrival[id as usize] = NOT_ARRIVED;
        // The receiving side is the new message's from now on.
        self.vc_received[out as usize] = 0;
        true
    }

    /// The header of message `id` entered `out`'s buffer behind another message, in this
    /// cycle, over a link of `link` cycles: it is routed once it is at the front.
    pub(super) fn header_behind(&mut self, out: u32, id: u32, link: u64) -> bool {
        let now = self.now;
        match self.queues.as_deref_mut() {
            Some(q) if self.vc_owner[out as usize] != id => {
                q.arrival[id as usize] = now + link;
                true
            }
            _ => false,
        }
    }

    /// The tail of the message receiving into `out` has been sent into it: the grant ends, and
    /// the upstream router may give `out` to another message at once.
    pub(super) fn tail_sent(&mut self, out: u32) {
        self.unfeed(out);
        self.end_grant(out);
    }

    /// The front message's tail left network VC `vc`'s buffer: the next message, if any,
    /// becomes the front and its header is routed once it has arrived.
    pub(super) fn leave_buffer(&mut self, vc: u32) {
        let vcu = vc as usize;
        let front = self.vc_owner[vcu];
        // The tail went on into `out`; its grant has ended unless `out` is reallocated once
        // drained (then its upstream is cleared here, as `release` does).
        let out = self.vc_out[vcu];
        if out < EJECT && self.vc_src[out as usize] == vc {
            self.unfeed(out);
        }
        self.vc_out[vcu] = NONE;
        let now = self.now;
        let Some(q) = self.queues.as_deref_mut() else { return };
        let next = q.next.get(front as usize).copied().unwrap_or(NONE);
        if next == NONE {
            self.vc_owner[vcu] = NONE;
            self.vc_received[vcu] = 0;
            return;
        }
        q.next[front as usize] = NONE;
        self.vc_owner[vcu] = next;
        let held = if q.fifo[vcu].back == next {
            q.fifo[vcu].back = NONE;
            self.vc_received[vcu]
        } else {
            self.messages[next as usize].length
        };
        q.fifo[vcu].behind -= held;
        let arrival = q.arrival[next as usize];
        if arrival != NOT_ARRIVED {
            // Routed from the next cycle (or its arrival), after the router's pipeline.
            let ready = arrival.max(now + 1) + self.delay;
            self.pending.push(Pending::new(vc, ready));
        }
    }

    /// The message holding the grant of network VC `vc` (the one receiving into it), `NONE`
    /// when it may be granted (for the deadlock analysis).
    pub(super) fn grant_holder(&self, vc: u32) -> u32 {
        if !self.queues_messages(vc) {
            return self.vc_owner[vc as usize];
        }
        let (channel, index) = self.per_channel.div_rem(vc);
        if self.ch_busy[channel as usize] >> index & 1 == 0 { NONE } else { self.receiving(vc) }
    }
}
