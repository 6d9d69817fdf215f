//! Phase 1 of a cycle, traffic: this cycle's arrivals (generated, or replayed from a trace)
//! become messages, each taking a free injection VC or joining its node's source queue.

use super::switching::WORMHOLE;
use super::{Engine, Message, NONE, Pending, slab_insert};

impl Engine {
    /// This cycle's arrivals: the traffic's (or the trace's) messages, each admitted or, in
    /// throughput mode at a full source queue, dropped and counted.
    pub(super) fn generate(&mut self) {
        if self.trace.is_some() {
            self.replay();
            return;
        }
        // The backlog bound also caps one cycle's arrivals at absurd rates (the run then stops).
        while self.queued <= self.backlog_limit
            && let Some((source, dest)) = self.traffic.next_arrival(self.now + 1, &mut self.rng)
        {
            let in_window = self.window.open;
            let broadcast = self.next_is_broadcast();
            let copies = if broadcast { self.copies_per_broadcast() } else { 1 };
            if let Some(t) = &mut self.throughput
                && t.drops(source, in_window)
            {
                if in_window {
                    // A broadcast would have offered all its copies.
                    t.window_drops += copies - 1;
                }
                continue;
            }
            // Request-reply traffic: a source with its most requests outstanding sends none.
            if let Some(replies) = self.replies.as_deref_mut()
                && !replies.admits(source, in_window)
            {
                continue;
            }
            if broadcast {
                self.broadcast(source);
            } else {
                self.send(source, dest);
            }
        }
    }

    /// This cycle's messages of the replayed trace (`sim::trace`); at the trace's end, the
    /// measurement window closes with the cycle (if still open).
    fn replay(&mut self) {
        let Some(mut feed) = self.trace.take() else { return };
        while self.queued <= self.backlog_limit {
            let (source, dest, length) = match feed.next_before(self.now + 1) {
                Ok(Some(message)) => message,
                Ok(None) => break,
                Err(error) => {
                    self.trace_error = Some(error.0);
                    break;
                }
            };
            let in_window = self.window.open;
            if let Some(t) = &mut self.throughput
                && t.drops(source, in_window)
            {
                continue;
            }
            let ties = self.router.draw(&self.geometry, source, dest, &mut self.rng);
            self.admit(source, dest, ties, length);
        }
        if feed.ended && self.trace_error.is_none() {
            let end = self.now + 1;
            let warmup = self.warmup;
            match self.window.end {
                None if end <= warmup => {
                    self.trace_error = Some(format!(
                        "the trace ends at simulated cycle {} (its last record, time scale \
                         applied), within the warm-up of {warmup} cycles: nothing would be \
                         measured; shorten warmup_cycles or raise the time scale",
                        self.now
                    ));
                }
                window_end => {
                    if window_end.is_none() {
                        self.fixed_end = self.fixed_end.map(|e| e.min(end));
                    }
                    // Ended and handled: the engine runs on without the feed (drain).
                    return;
                }
            }
        }
        self.trace = Some(feed);
    }

    /// A new message from `source` to `dest` generated in the current cycle: it takes a free
    /// injection VC or joins the source queue.
    pub(crate) fn send(&mut self, source: u32, dest: u32) {
        // One random bit per dimension, drawn only where ties are broken at random, or the
        // dragonfly's intermediate group (so the random streams of every other configuration
        // are unchanged).
        let ties = self.router.draw(&self.geometry, source, dest, &mut self.rng);
        self.send_with(source, dest, ties);
    }

    /// [`Engine::send`] with the message's tie-break bits or intermediate group given (the
    /// tests choose a dragonfly message's intermediate group this way).
    #[inline]
    pub(crate) fn send_with(&mut self, source: u32, dest: u32, ties: u32) {
        // Fixed lengths draw nothing (`lengths`).
        let length = self.lengths.draw(&mut self.rng);
        self.admit(source, dest, ties, length);
    }

    /// A message of `length` flits with its tie-break bits given, generated in the current
    /// cycle: counted, stored and queued.
    #[inline]
    fn admit(&mut self, source: u32, dest: u32, ties: u32, length: u32) {
        let now = self.now;
        let measured = self.window.open;
        if measured {
            self.window.generated += 1;
            self.window.outstanding += 1;
            self.window.measured += 1;
            if self.broadcasts.is_none() {
                // With broadcasts the batches hold the broadcast latencies (`broadcast`).
                self.batches.generated(now - self.window.start);
            }
        }
        self.generated_total += 1;
        if let Some(replies) = self.replies.as_deref_mut() {
            // A request: outstanding until its reply is delivered.
            replies.outstanding[source as usize] += 1;
        }
        self.queue_message(Message::new(source, dest, ties, length, now, measured), now);
    }

    /// Stores message `record` (split into packets with `packet_size`) and queues it at its
    /// source, to be injected from cycle `at`.
    #[inline]
    pub(super) fn queue_message(&mut self, record: Message, at: u64) {
        let (source, length) = (record.source, record.length);
        if let Some(packets) = self.packets.as_deref_mut()
            && let Some(lengths) = packets.split(length)
        {
            let split = packets.open(length, length.div_ceil(packets.size));
            for (i, packet) in lengths.enumerate() {
                // Each packet is routed on its own: its own tie-breaks or intermediate group.
                let ties = if i == 0 {
                    record.ties
                } else {
                    self.router.draw(&self.geometry, source, record.dest, &mut self.rng)
                };
                let id = self.allocate(Message { length: packet, ties, split, ..record });
                self.enqueue(source, id, at);
            }
            return;
        }
        let id = self.allocate(record);
        self.enqueue(source, id, at);
    }

    /// Stores a message record in the slab; returns its id.
    pub(super) fn allocate(&mut self, record: Message) -> u32 {
        slab_insert(&mut self.messages, &mut self.free, record)
    }

    /// Message `id`, created at `node` in cycle `at`, takes a free injection VC or joins the
    /// node's source queue.
    pub(super) fn enqueue(&mut self, node: u32, id: u32, at: u64) {
        let n = node as usize;
        let free_vcs = !self.inj_busy[n] & self.full_mask;
        if free_vcs != 0 && self.queue_head[n] == NONE && self.source_idle(node) {
            self.inject(node, free_vcs.trailing_zeros(), id, at);
        } else {
            if self.messages[id as usize].vc_base != 0 {
                // A reply goes ahead of the queued requests (`replies`).
                self.queue_reply(node, id);
            } else {
                match self.queue_tail[n] {
                    NONE => self.queue_head[n] = id,
                    tail => self.messages[tail as usize].next = id,
                }
                self.queue_tail[n] = id;
            }
            self.queued += 1;
            if let Some(t) = &mut self.throughput {
                t.enqueued(node);
            }
            // A source that feeds its router starts the message (`source`).
            let class = u32::from(self.messages[id as usize].vc_base != 0);
            self.source_queued(node, class);
        }
    }

    /// Message `id` entered injection VC `vc` in cycle `at`: its injection time and first VC,
    /// its packet's (`packets`), and one more message in the network.
    pub(super) fn entered(&mut self, id: u32, vc: u32, at: u64) {
        let message = &mut self.messages[id as usize];
        message.injected = at;
        message.head_vc = vc;
        if message.split != NONE
            && let Some(packets) = self.packets.as_deref_mut()
        {
            packets.injected(message.split, at);
        }
        if self.in_network == 0 {
            // The watchdog measures idle time while messages are in the network only.
            self.last_move = self.now;
        }
        self.in_network += 1;
    }

    /// Puts message `id`, whole, into injection VC `v` of `node`; its header may route at `at`
    /// (the parallel source, and a terminal that is no router; a source that feeds its router
    /// over an injection channel starts its messages itself, `source`).
    pub(super) fn inject(&mut self, node: u32, v: u32, id: u32, at: u64) {
        let vc = self.network_vcs + node * self.v + v;
        let length = self.messages[id as usize].length;
        let vcu = vc as usize;
        self.vc_owner[vcu] = id;
        self.vc_count[vcu] = length;
        self.vc_received[vcu] = length;
        self.vc_out[vcu] = NONE;
        self.inj_busy[node as usize] |= 1 << v;
        if self.switching.kind != WORMHOLE {
            self.switching.start(id, vc);
        }
        // A reply generated at its request's delivery, a few cycles ahead, leaves no earlier.
        let at = at.max(self.messages[id as usize].generated);
        self.entered(id, vc, at);
        let broadcast = self.messages[id as usize].broadcast;
        let mut ready = at;
        if broadcast != NONE {
            // A broadcast copy: the send's start-up (Delta) before the header may route.
            ready += self.broadcasts.as_ref().map_or(0, |b| b.startup);
            self.copy_started(broadcast, at);
        }
        self.pending.push(Pending::new(vc, ready));
    }
}
