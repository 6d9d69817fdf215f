//! Phase 3 of a cycle, switch and link traversal: phase A chooses one flit per active
//! channel, ejecting VCs hand a flit to their node, phase B applies the chosen moves (see the
//! engine's module docs for the walks and why their results agree).

use crate::scenario::Ejection;

use super::switching::{CIRCUIT, WORMHOLE};
use super::timing::Timing;
use super::{ACTIVE, ALLOC, BITMAP, Engine, Message, NONE, PORTS, Pending, before};
use super::{radix, split};
use crate::sim::prefetch::{Ahead, FAR, NEAR, prefetch};

impl Engine {
    /// Phase A (choose), ejection and phase B (apply) of switch and link traversal.
    /// `W`: how phase A walks the channels (`ACTIVE`, `PORTS` with an input speedup or an
    /// injection channel, `BITMAP`); monomorphised, so that the unlimited cases have no trace
    /// of the port accounting. `T`: links or credits take more than one cycle (`timing`); likewise, the
    /// default has no trace of it.
    // `always`: `step_with` dispatches to eight of these; left to itself the compiler stopped
    // inlining the default walk into it when the allocator's arms came, which cost the
    // default engine 0.7% more instructions (callgrind, 8x8 torus, dimension order).
    #[inline(always)]
    pub(super) fn traverse<const S: u8, const W: u8, const T: bool>(&mut self) -> bool {
        let interleaved = self.ejection == Ejection::Interleaved;
        if W == ALLOC {
            // The allocator picks the moves and each node's ejection at once.
            self.allocate_switch::<S, T>();
        } else {
            if interleaved {
                self.pick_ejections::<T>();
            }
            if W == PORTS {
                self.account_ejection::<T>(self.speedup.unwrap_or(u32::MAX));
            }
        }
        // Split this cycle (`split`) only where the threads can pay for their hand-over.
        let active = self.active.len();
        let split = split::splits(S, W == BITMAP, T)
            && self.split.as_deref_mut().is_some_and(|split| split.pays(active));
        // The bitmap walk hints its misses ahead on the largest networks (`prefetch`): a
        // monomorphisation of its own, as the cursors' state in the walk's loop cost the
        // unhinted walk 10% more instructions (callgrind, 64 x 64 torus).
        let hint = W == BITMAP && self.prefetching;
        if W != ALLOC {
            if split {
                self.choose_split();
            } else if hint {
                self.choose::<S, W, T, true>();
            } else {
                self.choose::<S, W, T, false>();
            }
        }
        let mut moved = self.n_moves > 0;
        moved |= match interleaved {
            true => self.eject::<W, T, true>(),
            false => self.eject::<W, T, false>(),
        };
        if split {
            self.apply_split::<S>();
        } else if hint {
            self.apply::<S, W, T, true>();
        } else {
            self.apply::<S, W, T, false>();
        }
        moved
    }

    /// Phase A: every active channel picks, round-robin, one of its VCs whose upstream buffer
    /// has a flit and whose own buffer has room (and, with an input speedup, whose input port
    /// has a slot left); the picks go to `moves[..n_moves]`. With `T`, a flit still on its
    /// link is not there yet, and a credit still on its way back is not room yet.
    #[inline(always)]
    fn choose<const S: u8, const W: u8, const T: bool, const H: bool>(&mut self) {
        let v = self.v;
        let depth = self.depth;
        let cap = self.speedup.unwrap_or(u32::MAX);
        // With an injection channel a node's injection VCs (the ports from `injection_ports`
        // on) share one flit per cycle.
        let injection_cap = if self.injection_channel { cap.min(1) } else { cap };
        let injection_ports = self.network_vcs / v;
        let now = self.now;
        let hint = W == BITMAP && H;
        let Engine {
            active,
            active_bits,
            ch_pos,
            ch_busy,
            ch_feed,
            ch_rr,
            vc_src,
            vc_count,
            vc_received,
            moves,
            n_moves,
            port_sent,
            port_touched,
            switching,
            timing,
            ..
        } = self;
        // A header just granted its VC and waiting `vc_allocation_delay` counts `HELD` in
        // `transit`, so the test of the oldest flit covers it.
        let vcs = vc_src.len();
        let (transit, owed): (&[u32], &[u32]) = match timing.as_deref() {
            Some(timing) if T => (&timing.transit[..vcs], &timing.owed[..vcs]),
            _ => (&[], &[]),
        };
        // The slices are taken once: nothing in the loop resizes a vector (the moves go
        // to `moves`, sized for one per channel), so their addresses and lengths stay in
        // registers. `ch_rr` is cut to the length of `ch_vcs`, and the per-VC slices
        // (`transit` and `owed` with `T`) to that of `vc_src`, which they equal, so that one
        // bounds check covers each group.
        // The VCs a channel tests: the walk of `active` the fed ones (`ch_feed`), the bitmap
        // walk the busy ones (`ch_busy`), testing whether each is fed (`build::walks_active`
        // says why).
        let ch_vcs: &[u64] = if W == BITMAP { ch_busy } else { ch_feed };
        let ch_rr: &mut [u32] = &mut ch_rr[..ch_vcs.len()];
        let vc_src: &[u32] = vc_src;
        let vc_count: &[u32] = &vc_count[..vcs];
        let vc_received: &[u32] = &vc_received[..vcs];
        let gate: &[u64] = &switching.gate;
        let moves: &mut [u64] = moves;
        let mut n = 0;
        // The channels to visit: in `active` order, or in memory order through the bitmap
        // (`BITMAP`, never with an input speedup, whose port slots go first come, first
        // served). `next` indexes `active` or `active_bits`, `bits` holds the rest of the
        // current bitmap word; `pos` is the channel's position in `active`.
        let (mut next, mut bits) = (0, 0u64);
        // The bitmap walk's cursors ahead where it hints (`prefetch`): `far` the lines of a channel
        // and its VCs, `near`, whose lines `far` fetched, the upstream buffers' counts. The
        // first channels of a cycle go unhinted.
        let (mut far, mut near) = match hint {
            true => (Ahead::after(active_bits, FAR), Ahead::after(active_bits, NEAR)),
            false => (Ahead::default(), Ahead::default()),
        };
        'walk: loop {
            if hint {
                if let Some(c) = far.advance(active_bits) {
                    let c = c as usize;
                    prefetch(ch_vcs, c);
                    prefetch(ch_rr, c);
                    prefetch(ch_pos, c);
                    hint_vcs(vc_src, vc_count, c * v as usize);
                }
                if let Some(c) = near.advance(active_bits) {
                    let c = c as usize;
                    hint_sources(vc_src, vc_count, c * v as usize, ch_vcs[c]);
                }
            }
            let (channel, pos) = if W != BITMAP {
                match active.get(next) {
                    Some(&channel) => {
                        next += 1;
                        // Phase B applies these moves in walk order: no position needed.
                        (channel, 0)
                    }
                    None => break,
                }
            } else {
                while bits == 0 {
                    match active_bits.get(next) {
                        Some(&word) => bits = word,
                        None => break 'walk,
                    }
                    next += 1;
                }
                let channel = ((next - 1) as u32) << 6 | bits.trailing_zeros();
                bits &= bits - 1;
                (channel, u64::from(ch_pos[channel as usize]))
            };
            // Picks, round-robin, a VC of the channel that can send a flit.
            let ch = channel as usize;
            let vcs = ch_vcs[ch];
            let start = ch_rr[ch];
            // The VCs from `start` up, then those below it (`start < V <= 64`): rotated right
            // by `start`, bit `b` of `vcs` sits at `(b - start) mod 64`, and the bits of `vcs`
            // (all below V) come in that order.
            let mut rest = vcs.rotate_right(start);
            let base = ch * v as usize;
            while rest != 0 {
                let vv = (rest.trailing_zeros() + start) & 63;
                rest &= rest - 1;
                let out = base + vv as usize;
                let src = vc_src[out];
                if (W != BITMAP || src != NONE)
                    && (if T {
                        vc_count[src as usize] > transit[src as usize]
                            && vc_count[out] + owed[out] < depth
                    } else {
                        vc_count[src as usize] > 0 && vc_count[out] < depth
                    })
                    && (S == WORMHOLE || vc_received[out] > 0 || gate[out] <= now)
                {
                    if W == PORTS {
                        let port = (src / v) as usize;
                        let limit = if src / v >= injection_ports { injection_cap } else { cap };
                        if port_sent[port] >= limit {
                            continue;
                        }
                        if port_sent[port] == 0 {
                            port_touched.push(port as u32);
                        }
                        port_sent[port] += 1;
                    }
                    // Walked in `active` order, phase B needs no position: the move
                    // carries its source buffer instead, sparing phase B a load.
                    let high = if W == BITMAP { pos } else { u64::from(src) };
                    moves[n] = high << 32 | out as u64;
                    n += 1;
                    ch_rr[ch] = if vv + 1 == v { 0 } else { vv + 1 };
                    break;
                }
            }
        }
        *n_moves = n;
    }

    /// The `Sendable` of this cycle (for the walks that do not borrow the engine's vectors
    /// themselves).
    #[inline(always)]
    pub(super) fn sendable<const T: bool>(&self) -> Sendable<'_> {
        let gate: &[u64] = &self.switching.gate;
        Sendable::new::<T>(
            &self.vc_src,
            &self.vc_count,
            &self.vc_received,
            gate,
            &self.timing,
            self.depth,
            self.now,
        )
    }

    /// Ejection: every ejecting VC with a flit (with interleaved ejection, `I`, each node's
    /// pick; with an input speedup, unless held) hands one to its node; a message whose tail
    /// is handed over is complete. Returns whether a flit was ejected. Monomorphised on `I`,
    /// so that the other ejection modes carry no trace of the picks.
    #[inline(always)]
    fn eject<const W: u8, const T: bool, const I: bool>(&mut self) -> bool {
        let mut moved = false;
        let mut i = 0;
        while i < self.ejecting.len() {
            let vc = self.ejecting[i];
            // The VC's node, where interleaved ejection needs it (found once).
            let node = if I { self.node_of(vc) as usize } else { 0 };
            if I && self.eject_pick[node] != vc {
                i += 1;
                continue;
            }
            if W == PORTS && self.eject_held[vc as usize] {
                self.eject_held[vc as usize] = false;
                i += 1;
                continue;
            }
            if self.can_eject::<T>(vc) {
                #[cfg(test)]
                self.count_port_flit(vc);
                #[cfg(test)]
                self.count_node_ejection(vc);
                if I {
                    self.eject_rr[node] = vc.wrapping_add(1);
                }
                moved = true;
                self.vc_count[vc as usize] -= 1;
                if T && let Some(timing) = self.timing.as_deref_mut() {
                    timing.departed(self.now, vc, self.network_vcs, self.per_channel);
                }
                let id = self.vc_owner[vc as usize];
                let message = &mut self.messages[id as usize];
                message.delivered += 1;
                let done = message.delivered == message.length;
                if self.window.open {
                    self.window.delivered_flits += 1;
                }
                if done {
                    self.ejecting.swap_remove(i);
                    self.complete::<T>(id, vc);
                    continue;
                }
            }
            i += 1;
        }
        if I {
            for &node in &self.eject_picked {
                self.eject_pick[node as usize] = NONE;
            }
            self.eject_picked.clear();
        }
        moved
    }

    /// Phase B: applies this cycle's moves (`moves[..n_moves]`), in two passes: the flit
    /// counts first, move by move (their sums do not depend on the order; nor does whether a
    /// move carries a header into its output VC or empties its input buffer for good, as a
    /// buffer that still receives flits is not emptied for good, and each VC is the input of
    /// one move and the output of one move at most), then the order-dependent events in
    /// `active` order, as if the moves had been applied one by one in that order: a header
    /// joins `pending` (whose order is the routing order, and so the order of the random
    /// draws), a released channel leaves `active`, a released injection VC takes the next
    /// queued message. Walked in `active` order the moves come in that order; walked in
    /// memory order (`BITMAP`) each carries its channel's position in `active`, and the
    /// events are sorted by it. The first pass touches nothing else, so its vectors are
    /// borrowed once, out of the loop.
    #[inline(always)]
    fn apply<const S: u8, const W: u8, const T: bool, const H: bool>(&mut self) {
        let n_moves = self.n_moves;
        let counting = self.window.open;
        let now = self.now;
        let per_channel = self.per_channel;
        let network_vcs = self.network_vcs;
        let hint = W == BITMAP && H;
        #[cfg(test)]
        self.count_move_ports();
        let Engine {
            moves,
            vc_src,
            vc_count,
            vc_received,
            vc_owner,
            vc_length,
            messages,
            window,
            timing,
            queues,
            events,
            ..
        } = self;
        let vc_length: &[u32] = vc_length;
        // The greedy walks of `active` pack the source buffer into their moves (`choose`),
        // and `grant_output` notes the lengths at the VCs for them (`vc_length`).
        let greedy = W == ACTIVE || W == PORTS;
        let moves: &[u64] = &moves[..n_moves];
        // `vc_received`, `vc_src` and `vc_owner` are cut to the length of `vc_count`, which
        // they equal, so that one bounds check per VC covers them all.
        let vc_count: &mut [u32] = vc_count;
        let vcs = vc_count.len();
        let vc_src: &[u32] = &vc_src[..vcs];
        let vc_received: &mut [u32] = &mut vc_received[..vcs];
        let vc_owner: &[u32] = &vc_owner[..vcs];
        let messages: &[Message] = messages;
        let vc_flits: &mut [u64] = &mut window.vc_flits;
        // Buffers queue messages (`reallocation`) on the timed paths only.
        let mut queues = if T { queues.as_deref_mut() } else { None };
        // Where every link has the same delays, the moves are recorded into the timing's
        // wheels by the loop below (`Sent`), which has their VCs at hand; else all at once here.
        let mut sent = None;
        if T && let Some(timing) = timing.as_deref_mut() {
            if timing.uniform() {
                sent = timing.open_sent(now, moves.len(), network_vcs);
            } else {
                timing.sent(now, moves, vc_src, network_vcs, per_channel);
            }
        }
        // Room for a move's two possible events (`push_event`); `events` is scratch whose
        // length only grows, to twice the most moves a cycle has had.
        if events.len() < 2 * moves.len() {
            events.resize(2 * moves.len(), 0);
        }
        let events: &mut [u64] = events;
        let mut n_events = 0;
        for (k, &packed) in moves.iter().enumerate() {
            if hint {
                // The moves ahead (`prefetch`): the far one's lines at its output VC, the
                // near one's at its input VC and its message.
                if let Some(&far) = moves.get(k + FAR) {
                    let out = (far as u32) as usize;
                    prefetch(vc_src, out);
                    prefetch(vc_count, out);
                    prefetch(vc_received, out);
                    prefetch(vc_owner, out);
                    if counting {
                        prefetch(vc_flits, out);
                    }
                }
                if let Some(&near) = moves.get(k + NEAR) {
                    let out = (near as u32) as usize;
                    let src = vc_src[out] as usize;
                    prefetch(vc_count, src);
                    prefetch(vc_received, src);
                    prefetch(messages, vc_owner[out] as usize);
                }
            }
            let out = (packed as u32) as usize;
            // An event is `key << 32 | VC`, `key` the channel's position in `active` times 2,
            // plus 1 for a tail (positions stay below 2^31: a network of 2^31 channels would
            // need 16 GB for `moves` alone).
            let key = if W == BITMAP { packed >> 32 << 33 } else { (k as u64) << 33 };
            let src = if greedy { (packed >> 32) as usize } else { vc_src[out] as usize };
            vc_count[src] -= 1;
            vc_count[out] += 1;
            if T && let Some(sent) = sent.as_mut() {
                sent.record(k, out, src);
            }
            // Behind the front message (`reallocation`).
            if let Some(q) = queues.as_deref_mut()
                && q.fifo[out].back != NONE
            {
                q.fifo[out].behind += 1;
            }
            if counting {
                vc_flits[out] += 1;
            }
            push_event(events, &mut n_events, key | out as u64, vc_received[out] == 0, W);
            vc_received[out] += 1;
            // The message leaving `src`: its front one, which is `out`'s unless buffers queue
            // messages (`reallocation`, on the timed paths only). It holds `out`'s grant (a VC
            // is granted again only once the tail has left for it), so its length is the one
            // `grant_output` noted at `out`: one load where the record is two, each on the
            // move's chain. The bitmap walk's large networks keep no lengths at the VCs.
            let length = if W != BITMAP {
                vc_length[out]
            } else if T {
                messages[vc_owner[src] as usize].length
            } else {
                messages[vc_owner[out] as usize].length
            };
            // Its tail has just left `src`: none of its flits is left and its tail had entered.
            // Whether the buffer is empty now is a coin toss where flits stream through it, so
            // both tests are made without a branch, except on the large networks that walk the
            // bitmap, where `vc_received[src]` is likely a cache miss (`push_event`).
            let left = match queues.as_deref() {
                Some(q) => {
                    vc_count[src] == q.fifo[src].behind
                        && (q.fifo[src].back != NONE || vc_received[src] == length)
                }
                None if W == BITMAP => vc_count[src] == 0 && vc_received[src] == length,
                None => (vc_count[src] == 0) & (vc_received[src] == length),
            };
            push_event(events, &mut n_events, key | 1 << 32 | out as u64, left, W);
        }
        if let Some(sent) = sent {
            let (slot, end) = (sent.credit_slot, sent.end());
            if let Some(timing) = timing.as_deref_mut() {
                timing.close_sent(slot, end);
            }
        }
        // In `active` order: no two events share a key (a move's position and the event's
        // kind), so the VC in the low bits never decides the order.
        let events = &mut self.events[..n_events];
        if W == BITMAP && !events.is_sorted() {
            radix::sort_events(events, &mut self.events_scratch, &mut self.event_counts);
        }
        self.apply_events::<S, T>(n_events, counting);
    }

    /// Phase B's second pass: applies `events[..n_events]` (in `active` order) and counts the
    /// cycle's moves.
    #[inline(always)]
    pub(super) fn apply_events<const S: u8, const T: bool>(
        &mut self,
        n_events: usize,
        counting: bool,
    ) {
        let ahead = self.prefetching;
        for k in 0..n_events {
            if ahead && k + NEAR < n_events {
                self.hint_event(self.events[k + NEAR]);
            }
            let event = self.events[k];
            let out = event as u32;
            if event >> 32 & 1 == 0 {
                self.header_arrived::<S, T>(out, counting);
            } else {
                self.input_emptied::<S, T>(out);
            }
        }
        let n_moves = self.n_moves as u64;
        self.flit_hops += n_moves;
        if counting {
            self.window.flit_hops += n_moves;
        }
    }

    /// On the large networks, hints the lines that `event`'s release will write if it is a
    /// tail's, at its input VC and that VC's channel (`prefetch`; phase B fetched `vc_src`).
    /// Out of line, so that the unhinted loop keeps its registers.
    #[inline(never)]
    fn hint_event(&self, event: u64) {
        if event >> 32 & 1 == 1 {
            let src = self.vc_src[event as u32 as usize];
            if src < self.network_vcs {
                let ch = self.per_channel.div(src) as usize;
                prefetch(&self.vc_out, src as usize);
                prefetch(&self.vc_owner, src as usize);
                prefetch(&self.ch_busy, ch);
                prefetch(&self.ch_since, ch);
                prefetch(&self.ch_pos, ch);
            }
        }
    }

    /// Phase B: a header entered output VC `out` this cycle (with `T`: was sent towards it;
    /// it arrives, and may be routed, after the link's latency).
    #[inline(always)]
    fn header_arrived<const S: u8, const T: bool>(&mut self, out: u32, counting: bool) {
        let id = if T { self.receiving(out) } else { self.vc_owner[out as usize] };
        if S == WORMHOLE {
            let link = if T {
                let channel = self.per_channel.div(out) as usize;
                self.timing.as_deref().map_or(1, |t| u64::from(t.delays[channel].latency))
            } else {
                1
            };
            // No router at a terminal that is not one (dragonflies, trees, graphs): its header
            // takes the ejection port on arrival.
            let delay = if self.delay > 0 && self.buffer_at_terminal(out) { 0 } else { self.delay };
            // Behind another message, the header waits to be at the front (`reallocation`).
            if !(T && self.header_behind(out, id, link)) {
                self.pending.push(Pending::new(out, self.now + link + delay));
            }
            self.messages[id as usize].head_vc = out;
            if counting {
                self.window.header_hops += 1;
            }
        }
        self.messages[id as usize].hops += 1;
    }

    /// Phase B: the tail flit left the buffer feeding output VC `out` this cycle (with
    /// `tail_sent` reallocation, the grant of `out` ends too).
    #[inline(always)]
    fn input_emptied<const S: u8, const T: bool>(&mut self, out: u32) {
        let src = self.vc_src[out as usize];
        if S == CIRCUIT && src >= self.network_vcs {
            self.source_released(self.vc_owner[out as usize]);
        }
        if T && self.queues_messages(out) {
            // Reallocated once the tail is sent (`reallocation`).
            self.tail_sent(out);
        }
        self.release::<T>(src);
    }

    /// Whether ejecting VC `vc` can hand a flit to its node this cycle: it holds one that has
    /// arrived and, with `vc_allocation_delay`, its header's allocation is over (with `T` or a
    /// timing; without one, any flit it holds).
    #[inline(always)]
    pub(super) fn can_eject<const T: bool>(&self, vc: u32) -> bool {
        let count = self.vc_count[vc as usize];
        match self.timing.as_deref() {
            Some(timing) if T => timing.front_ready(vc, count),
            _ => count > 0,
        }
    }

    /// Interleaved ejection, before phase A: picks at each node the ejecting VC able to eject
    /// (`can_eject`) that comes first in round-robin order from `eject_rr` (VC ids, wrapping), so the
    /// messages arriving at a node share its one flit per cycle in turn. Kept out of line: the
    /// other ejection modes never call it, and inlined it costs the hot loop of `traverse`
    /// registers.
    #[inline(never)]
    fn pick_ejections<const T: bool>(&mut self) {
        for k in 0..self.ejecting.len() {
            let vc = self.ejecting[k];
            if !self.can_eject::<T>(vc) {
                continue;
            }
            let node = self.node_of(vc) as usize;
            let (pick, first) = (self.eject_pick[node], self.eject_rr[node]);
            if pick == NONE {
                self.eject_picked.push(node as u32);
                self.eject_pick[node] = vc;
            } else if before(vc, pick, first) {
                self.eject_pick[node] = vc;
            }
        }
    }

    /// Input speedup, before phase A: resets last cycle's port counters, then gives each
    /// ejecting VC with a flit (with interleaved ejection: each picked one) a slot of its
    /// input port in `ejecting` order, or holds it (`eject_held`) for this cycle when the port
    /// has none left; a held pick leaves its node's port idle for the cycle.
    fn account_ejection<const T: bool>(&mut self, cap: u32) {
        for &port in &self.port_touched {
            self.port_sent[port as usize] = 0;
        }
        self.port_touched.clear();
        let interleaved = self.ejection == Ejection::Interleaved;
        for &vc in &self.ejecting {
            if !self.can_eject::<T>(vc) {
                continue;
            }
            if interleaved && self.eject_pick[self.node_of(vc) as usize] != vc {
                continue;
            }
            let port = (vc / self.v) as usize;
            if self.port_sent[port] >= cap {
                self.eject_held[vc as usize] = true;
                continue;
            }
            if self.port_sent[port] == 0 {
                self.port_touched.push(port as u32);
            }
            self.port_sent[port] += 1;
        }
    }

    /// Test builds: counts a flit leaving `vc`'s input port, independently of the speedup
    /// bookkeeping, and records the largest per-port count of a cycle.
    #[cfg(test)]
    pub(super) fn count_move_ports(&mut self) {
        for k in 0..self.n_moves {
            let src = self.vc_src[self.moves[k] as u32 as usize];
            self.count_port_flit(src);
        }
    }

    /// Test builds: counts a flit leaving `vc`'s input port (see `count_move_ports`).
    #[cfg(test)]
    fn count_port_flit(&mut self, vc: u32) {
        let port = (vc / self.v) as usize;
        if self.port_stamp[port] != self.now {
            self.port_stamp[port] = self.now;
            self.port_check[port] = 0;
        }
        self.port_check[port] += 1;
        self.max_port_flits = self.max_port_flits.max(self.port_check[port]);
        if vc >= self.network_vcs {
            self.max_injection_flits = self.max_injection_flits.max(self.port_check[port]);
        }
    }

    /// Test builds: counts a flit ejected from `vc` at its node and records the largest
    /// per-node count of a cycle.
    #[cfg(test)]
    fn count_node_ejection(&mut self, vc: u32) {
        let node = self.node_of(vc) as usize;
        if self.node_stamp[node] != self.now {
            self.node_stamp[node] = self.now;
            self.node_check[node] = 0;
        }
        self.node_check[node] += 1;
        self.max_node_ejections = self.max_node_ejections.max(self.node_check[node]);
    }
}

/// Appends `event` to phase B's `events[..n]` if `happens` (`Engine::apply`, which has made
/// room). Whether a move carries a header into its output VC, or empties its input buffer,
/// is a coin toss to a branch predictor where flits stream through buffers of a flit or two,
/// so the event is written whatever `happens` is and kept by counting it: on the 8 x 8 torus
/// 8% faster and on the dragonfly 12%. Except when phase A walks the bitmap (`W`): on those
/// large networks the tests read counters that are likely cache misses, and a count that
/// waits for them holds up the stores behind it, where a predicted branch does not (the
/// 1024 x 1024 torus was 5% slower without the branch).
#[inline(always)]
fn push_event(events: &mut [u64], n: &mut usize, event: u64, happens: bool, w: u8) {
    if w == BITMAP {
        if happens {
            events[*n] = event;
            *n += 1;
        }
    } else {
        events[*n] = event;
        *n += usize::from(happens);
    }
}

/// What phase A reads to tell whether a VC may send a flit into the output VC it feeds this
/// cycle, borrowed once for a walk: the separable allocator's two walks (`allocator`) test
/// their VCs with [`Sendable::source`]. The greedy walk (`Engine::choose`) keeps its own copy
/// of the test: through this one the default engine ran 0.6% more instructions (callgrind,
/// 8x8 torus), as it takes its vectors from the engine's at once.
#[derive(Clone, Copy)]
pub(super) struct Sendable<'a> {
    vc_src: &'a [u32],
    vc_count: &'a [u32],
    vc_received: &'a [u32],
    gate: &'a [u64],
    /// With `T` the timing's flits on their way (a header waiting out `vc_allocation_delay`
    /// counts `HELD` there, so the test of the oldest flit covers it) and credits on their
    /// way; empty without.
    transit: &'a [u32],
    owed: &'a [u32],
    depth: u32,
    now: u64,
}

impl<'a> Sendable<'a> {
    /// `vc_count` is cut to the length of `vc_src`, which it equals, so one bounds check
    /// covers both.
    #[inline(always)]
    pub(super) fn new<const T: bool>(
        vc_src: &'a [u32],
        vc_count: &'a [u32],
        vc_received: &'a [u32],
        gate: &'a [u64],
        timing: &'a Option<Box<Timing>>,
        depth: u32,
        now: u64,
    ) -> Sendable<'a> {
        // Every per-VC slice is cut to the length of `vc_src`, which they equal (with `T`),
        // so that one bounds check per VC covers them all.
        let vcs = vc_src.len();
        let (transit, owed): (&[u32], &[u32]) = match timing.as_deref() {
            Some(timing) if T => (&timing.transit[..vcs], &timing.owed[..vcs]),
            _ => (&[], &[]),
        };
        let (vc_count, vc_received) = (&vc_count[..vcs], &vc_received[..vcs]);
        Sendable { vc_src, vc_count, vc_received, gate, transit, owed, depth, now }
    }

    /// The VC feeding output VC `out` if it can send a flit this cycle: its oldest flit has
    /// arrived (with `T`: is off its link and past its header's `vc_allocation_delay`),
    /// `out`'s buffer has room (with `T`: counting the credits on their way), and with a
    /// separate header (`S`) the data may follow.
    #[inline(always)]
    pub(super) fn source<const S: u8, const T: bool>(&self, out: usize) -> Option<u32> {
        let Sendable { vc_src, vc_count, vc_received, gate, transit, owed, depth, now } = *self;
        let src = vc_src[out];
        let sends = src != NONE
            && (if T {
                vc_count[src as usize] > transit[src as usize] && vc_count[out] + owed[out] < depth
            } else {
                vc_count[src as usize] > 0 && vc_count[out] < depth
            })
            && (S == WORMHOLE || vc_received[out] > 0 || gate[out] <= now);
        sends.then_some(src)
    }

    /// Hints the lines [`Sendable::source`] reads at the channel whose first VC is `first`
    /// (`prefetch`).
    #[inline(always)]
    pub(super) fn prefetch_channel(&self, first: usize) {
        hint_vcs(self.vc_src, self.vc_count, first);
    }

    /// Hints the counts [`Sendable::source`] reads at the buffers feeding the VCs `busy` of
    /// the channel whose first VC is `first` ([`hint_sources`]).
    #[inline(always)]
    pub(super) fn prefetch_sources(&self, first: usize, busy: u64) {
        hint_sources(self.vc_src, self.vc_count, first, busy);
    }
}

/// Hints the lines of a channel's VCs that phase A reads first, the channel's first VC being
/// `first` (`prefetch`): its `vc_src` and its own `vc_count`.
#[inline(always)]
pub(super) fn hint_vcs(vc_src: &[u32], vc_count: &[u32], first: usize) {
    prefetch(vc_src, first);
    prefetch(vc_count, first);
}

/// Hints the upstream counts phase A tests for the VCs `busy` (bit v for VC v) of the channel
/// whose first VC is `first` (`prefetch`): `vc_count` at each one's `vc_src`, which is read
/// here, so [`hint_vcs`] should have hinted it a while before.
#[inline(always)]
pub(super) fn hint_sources(vc_src: &[u32], vc_count: &[u32], first: usize, mut busy: u64) {
    while busy != 0 {
        let src = vc_src[first + busy.trailing_zeros() as usize];
        busy &= busy - 1;
        if src != NONE {
            prefetch(vc_count, src as usize);
        }
    }
}
