//! Request-reply traffic (`reply_length`, `outstanding_requests`): every generated message is
//! a request, and the delivery of a request's tail generates its reply, `reply_length` flits
//! from the request's destination back to its source.
//!
//! - **Two message classes.** Requests use VCs `0..V/2` of every channel, replies `V/2..V`:
//!   the routing function is built for V/2 VCs (`routed`), and a reply's candidates are its
//!   masks shifted up by V/2 (`Message::vc_base`). A reply never waits for a VC a request
//!   holds, so requests blocked behind undelivered replies (protocol deadlock) cannot form;
//!   each class is deadlock-free by its routing, as one-way traffic is.
//! - **Replies first.** A reply joins its node's source queue ahead of the queued requests,
//!   behind the queued replies (`Replies::last_reply`), as BookSim's pending replies go before
//!   new requests; a node's injection VCs carry both classes.
//! - **Closed loop.** A node with `outstanding_requests` requests not yet answered generates no
//!   request: the arrival is skipped and counted (`throttled`); the offered load falls to what
//!   the round trips allow (BookSim's `max_outstanding_requests`).
//! - **Measured.** Requests and replies are messages: latency, hops and throughput count both.
//!   A reply is measured when its request is (so a window's round trips are all followed to
//!   their end), in its request's batch; the round trip of a measured request, generation to
//!   its reply's delivery, is the request's latency plus its reply's (`round_trip_latency`).
//!
//! One-way traffic (`replies` `None`) has none of this: the message fields are 0, and the
//! engine's only test is the one of `filter_candidates` it shares with virtual cut-through.

use std::borrow::Cow;

use crate::scenario::Scenario;

use super::{Engine, Message, NONE};

/// The scenario whose routing function routes each class: `virtual_channels` halved with
/// request-reply traffic, else the scenario itself.
pub(crate) fn routed(scenario: &Scenario) -> Cow<'_, Scenario> {
    if scenario.reply_length.is_none() {
        return Cow::Borrowed(scenario);
    }
    let class_vcs = scenario.virtual_channels / 2;
    Cow::Owned(Scenario { virtual_channels: class_vcs, ..scenario.clone() })
}

/// The reply class and the state of the closed loop.
pub(crate) struct Replies {
    /// Flits of every reply.
    pub(super) length: u32,
    /// VCs per class, V / 2: a reply's first VC.
    pub(super) class_vcs: u32,
    /// The most requests a node may have outstanding (`u32::MAX`: no bound).
    limit: u32,
    /// Per node: requests generated and not answered yet.
    pub(super) outstanding: Vec<u32>,
    /// Per node: the last reply in its source queue, or `NONE`.
    pub(super) last_reply: Vec<u32>,
    /// Requests not generated in the window because their source had `limit` outstanding.
    pub(crate) throttled: u64,
    /// Round trips of measured requests whose reply has been delivered: their sum (cycles)
    /// and number.
    pub(crate) round_trip_sum: f64,
    pub(crate) round_trips: u64,
}

impl Replies {
    /// The reply class of `scenario`, with `nodes` sources; `None` for one-way traffic.
    pub(super) fn new(scenario: &Scenario, nodes: usize) -> Option<Box<Replies>> {
        let length = scenario.reply_length?;
        Some(Box::new(Replies {
            length,
            class_vcs: scenario.virtual_channels / 2,
            limit: scenario.outstanding_requests.unwrap_or(u32::MAX),
            outstanding: vec![0; nodes],
            last_reply: vec![NONE; nodes],
            throttled: 0,
            round_trip_sum: 0.0,
            round_trips: 0,
        }))
    }

    /// Whether `source` may generate a request now (else the arrival is counted throttled).
    #[inline]
    pub(super) fn admits(&mut self, source: u32, in_window: bool) -> bool {
        if self.outstanding[source as usize] >= self.limit {
            self.throttled += u64::from(in_window);
            return false;
        }
        true
    }

    /// Whether the loop is closed (`outstanding_requests` bounds the requests in flight).
    pub(crate) fn closed_loop(&self) -> bool {
        self.limit != u32::MAX
    }

    /// The mean round trip of the measured requests, if any was answered.
    pub(crate) fn round_trip_latency(&self) -> Option<f64> {
        (self.round_trips > 0).then(|| self.round_trip_sum / self.round_trips as f64)
    }
}

impl Engine {
    /// The whole of `message` was delivered in cycle `delivered`: a request generates its
    /// reply, a reply ends its request's round trip.
    pub(super) fn request_or_reply_done(&mut self, message: &Message, delivered: u64) {
        if message.vc_base == 0 {
            self.reply_to(message, delivered);
            return;
        }
        let Some(replies) = self.replies.as_deref_mut() else { return };
        replies.outstanding[message.dest as usize] -= 1;
        if message.measured {
            let own = delivered - message.generated;
            replies.round_trip_sum += (u64::from(message.request_latency) + own) as f64;
            replies.round_trips += 1;
        }
    }

    /// Generates the reply to `request`, delivered in cycle `delivered`: from its destination
    /// back to its source, in the reply class, generated (and injected at the earliest) then.
    fn reply_to(&mut self, request: &Message, delivered: u64) {
        let Some(replies) = self.replies.as_deref() else { return };
        let (length, vc_base) = (replies.length, replies.class_vcs as u8);
        let (source, dest) = (request.dest, request.source);
        let measured = request.measured;
        let w = &mut self.window;
        if w.open {
            w.generated += 1;
        }
        if measured {
            // Followed to its end, in its request's batch.
            w.measured += 1;
            w.outstanding += 1;
            self.batches.generated(request.generated - w.start);
        }
        self.generated_total += 1;
        let ties = self.router.draw(&self.geometry, source, dest, &mut self.rng);
        let latency = u32::try_from(delivered - request.generated).unwrap_or(u32::MAX);
        let record = Message {
            vc_base,
            request_latency: latency,
            ..Message::new(source, dest, ties, length, delivered, measured)
        };
        self.queue_message(record, delivered);
    }

    /// Puts reply `id` into `node`'s source queue, behind the queued replies and ahead of the
    /// queued requests.
    pub(super) fn queue_reply(&mut self, node: u32, id: u32) {
        let n = node as usize;
        let Some(replies) = self.replies.as_deref_mut() else { return };
        let after = replies.last_reply[n];
        replies.last_reply[n] = id;
        if after == NONE {
            self.messages[id as usize].next = self.queue_head[n];
            self.queue_head[n] = id;
        } else {
            self.messages[id as usize].next = self.messages[after as usize].next;
            self.messages[after as usize].next = id;
        }
        if self.queue_tail[n] == after {
            self.queue_tail[n] = id;
        }
    }

    /// A reply's candidates, computed for the class's V / 2 VCs, moved to the reply class's
    /// VCs.
    pub(super) fn shift_to_reply_class(&mut self, vc_base: u8) {
        for c in &mut self.candidates {
            c.mask <<= vc_base;
            c.fallback <<= vc_base;
        }
    }
}
