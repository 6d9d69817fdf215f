//! Phase 2 of a cycle, routing: every header whose routing delay has passed requests an
//! output VC (or the ejection port at its destination); blocked headers retry every cycle,
//! oldest first.
//!
//! A retry that must fail is skipped. Where a header's candidates are a function of its
//! router and its own state (every routing but UGAL's decision on occupancy, and without
//! virtual cut-through's room test), an attempt that found no free VC at router `r` finds
//! none again until a VC of one of `r`'s channels is released: only a release frees a VC
//! (`set_busy`). Each router counts its releases (`releases`), a blocked header keeps the
//! count it failed at (`Pending::blocked`), and its retries are skipped while the count
//! stands. A failed attempt draws no random number and counts nothing, so skipping it
//! changes no result; on the 8 x 8 torus near saturation most attempts fail. The separable
//! VC allocator (`vc_allocator`) skips the same way the headers that could request no VC.

use crate::scenario::Ejection;

use super::super::network::hop::{Candidate, Header};
use super::switching::{SCOUTING, WORMHOLE};
use super::{EJECT, Engine, NONE, Pending, UNBLOCKED};
use crate::sim::prefetch::{FAR, NEAR, prefetch};

/// How a routing attempt ended (`Engine::try_route`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Routed {
    /// The header was granted an output VC or the ejection port.
    Granted,
    /// No candidate VC at router `router` was free.
    Blocked(u32),
    /// The header waits for its destination's ejection port.
    Waiting,
}

impl Engine {
    /// Routes the pending headers whose delay has passed, oldest first, keeping those still
    /// blocked in order (with a separate header, `switching` moves it instead).
    pub(super) fn route<const S: u8>(&mut self) {
        if S == WORMHOLE && self.vc_allocator.is_some() {
            self.route_separable();
            return;
        }
        let mut keep = 0;
        let listed = self.pending.len();
        let ahead = self.hints_routing;
        for i in 0..listed {
            if ahead {
                self.hint_headers(i);
            }
            let mut p = self.pending[i];
            if p.ready <= self.now {
                if S == WORMHOLE {
                    if !self.still_blocked(p) {
                        match self.try_route::<S>(p) {
                            Routed::Granted => continue,
                            Routed::Blocked(router) => {
                                let id = self.vc_owner[p.vc as usize];
                                p.blocked = self.blocked_at(router, id);
                            }
                            Routed::Waiting => {}
                        }
                    }
                } else {
                    // A separate header: its new position, or done (see `switching`).
                    match self.route_probe::<S>(p) {
                        Some(next) => p = next,
                        None => continue,
                    }
                }
            }
            self.pending[keep] = p;
            keep += 1;
        }
        if S == WORMHOLE {
            self.pending.truncate(keep);
        } else {
            // Keeps headers injected meanwhile (a dropped message frees its injection VC).
            self.pending.drain(keep..listed);
        }
    }

    /// On the networks that walk the bitmap (`Engine::hints_routing`), hints the lines of the
    /// pending headers ahead of `pending[i]` (`prefetch`): the far one's owner and its VC's
    /// downstream router, the near one's message, its router's first channel's `ch_busy` and
    /// its release count. Out of line, so that the unhinted loop keeps its registers.
    #[inline(never)]
    fn hint_headers(&self, i: usize) {
        if let Some(q) = self.pending.get(i + FAR) {
            prefetch(&self.vc_owner, q.vc as usize);
            // `node_of` at the near distance reads it.
            if q.vc < self.network_vcs {
                self.geometry.hint_downstream(self.per_channel.div(q.vc));
            }
        }
        if let Some(&q) = self.pending.get(i + NEAR) {
            prefetch(&self.messages, self.vc_owner[q.vc as usize] as usize);
            let node = self.node_of(q.vc);
            prefetch(&self.ch_busy, self.geometry.first_channel(node) as usize);
            prefetch(&self.releases, node as usize);
        }
    }

    /// Whether the header waiting as `p` found no free VC at its router and none has been
    /// released there since: an attempt would fail again.
    #[inline(always)]
    pub(super) fn still_blocked(&self, p: Pending) -> bool {
        p.blocked != UNBLOCKED && self.releases[self.node_of(p.vc) as usize] == p.blocked
    }

    /// `Pending::blocked` of the header of message `id` that found no free VC at router
    /// `router`: the router's release count, or `UNBLOCKED` where retries are not skipped or
    /// the routing weighed occupancy (UGAL's open choice: the next attempt may choose
    /// otherwise with nothing released).
    #[inline(always)]
    pub(super) fn blocked_at(&self, router: u32, id: u32) -> u32 {
        // `decides_at_source` first (`weighs_occupancy` asks it too): the other routings never
        // load the message's header here.
        if self.releases.is_empty()
            || (self.router.decides_at_source
                && self.router.weighs_occupancy(
                    &self.geometry,
                    router,
                    self.messages[id as usize].header(),
                ))
        {
            return UNBLOCKED;
        }
        self.releases[router as usize]
    }

    /// Tries to give the header in `p.vc` an output VC.
    pub(super) fn try_route<const S: u8>(&mut self, p: Pending) -> Routed {
        let vc = p.vc;
        let id = self.vc_owner[vc as usize];
        let header = self.messages[id as usize].header();
        let cur = self.node_of(vc);
        if cur == header.dest {
            return match self.route_to_ejection(vc, cur) {
                true => Routed::Granted,
                false => Routed::Waiting,
            };
        }
        let level = self.prepare_candidates::<S>(vc, id, cur, header);
        let base = self.geometry.first_channel(cur) as usize;
        let Some((channel, v)) = self.select(base, false).or_else(|| self.select(base, true))
        else {
            return Routed::Blocked(cur);
        };
        self.grant_output(p, id, cur, channel, v, level);
        Routed::Granted
    }

    /// The header in `vc` has reached its destination `cur`: it takes the ejection port (with
    /// single ejection, once the port is free); true on success.
    #[inline(always)]
    pub(super) fn route_to_ejection(&mut self, vc: u32, cur: u32) -> bool {
        if self.ejection == Ejection::Single {
            if self.eject_busy[cur as usize] {
                return false;
            }
            self.eject_busy[cur as usize] = true;
        }
        self.vc_out[vc as usize] = EJECT;
        self.ejecting.push(vc);
        // A router allocates its ejection port; a terminal that is not a router has no
        // allocator (the flits arrived over its ejection channel).
        if let Some(timing) = self.timing.as_deref_mut()
            && self.geometry.nodes_are_routers()
        {
            timing.granted(self.now, vc);
        }
        true
    }

    /// Fills `candidates` with the outputs the routing function allows the header of message
    /// `id` (in `vc`, at router `cur`; `header` its routing view); returns its routing state
    /// (UGAL's decision at the source router, taken here).
    #[inline(always)]
    pub(super) fn prepare_candidates<const S: u8>(
        &mut self,
        vc: u32,
        id: u32,
        cur: u32,
        mut header: Header,
    ) -> u32 {
        if self.router.decides_at_source {
            // UGAL at the source router: the occupancy of an output port is the flits held in
            // its channel's downstream VC buffers, and (UGAL-G) the flits waiting at its router
            // in the input buffers its VCs are allocated to.
            let (v, geometry) = (self.v as usize, &self.geometry);
            let occupancy = |router: u32, port: u32| {
                let first = geometry.channel(router, port) as usize * v;
                let held = self.vc_count[first..first + v].iter().sum::<u32>();
                // With multi-cycle credits: the slots the router has no credit for yet.
                let owed =
                    self.timing.as_deref().map_or(0, |t| t.owed[first..first + v].iter().sum());
                let waiting = self.vc_src[first..first + v]
                    .iter()
                    .filter(|&&src| src != NONE)
                    .map(|&src| self.vc_count[src as usize])
                    .sum::<u32>();
                (held + owed, waiting)
            };
            let decided = self.router.decide(&self.geometry, cur, header, occupancy);
            if self.router.decides_once && decided != header.level {
                // BookSim's UGAL: the choice (or reaching the intermediate router) holds.
                self.messages[id as usize].level = decided;
            }
            header.level = decided;
        }
        self.router.candidates(&self.geometry, cur, header, &mut self.candidates);
        if self.filter_candidates {
            self.filter(cur, id, header.dest);
        }
        if S == SCOUTING {
            self.skip_failed_outputs(id, vc);
        }
        header.level
    }

    /// The candidates' rare filters, behind one test: the outputs towards faulty nodes
    /// (`faults`), a reply's VC class (`replies`), virtual cut-through's room for the whole
    /// packet of message `id` (to `dest`, at router `cur`).
    #[inline(never)]
    fn filter(&mut self, cur: u32, id: u32, dest: u32) {
        if let Some(faults) = &self.faults {
            faults.retain(&self.geometry, cur, dest, &mut self.candidates);
        }
        let message = &self.messages[id as usize];
        let (vc_base, length) = (message.vc_base, message.length);
        if vc_base != 0 {
            self.shift_to_reply_class(vc_base);
        }
        if self.cut_through_room {
            self.keep_room_for(cur, length);
        }
    }

    /// Virtual cut-through with `tail_sent` reallocation: takes out of the candidates at
    /// router `cur` every VC whose buffer, as its credits say, cannot take a whole packet of
    /// `length` flits (one the last message's tail has been sent into, whose flits and owed
    /// credits leave less room). A VC granted so takes the packet without waiting for a credit.
    fn keep_room_for(&mut self, cur: u32, length: u32) {
        let (v, base) = (self.v as usize, self.geometry.first_channel(cur) as usize);
        for k in 0..self.candidates.len() {
            let first = (base + self.candidates[k].port as usize) * v;
            let short = (0..v)
                .filter(|&i| self.credits(first + i) < length)
                .fold(0u64, |mask, i| mask | 1 << i);
            let c = &mut self.candidates[k];
            c.mask &= !short;
            c.fallback &= !short;
        }
    }

    /// The flits network VC `vc`'s buffer can still take, as the upstream router's credits
    /// say: its depth less the flits in it or on their way and the credits not back yet.
    pub(super) fn credits(&self, vc: usize) -> u32 {
        let owed = self.timing.as_deref().map_or(0, |t| t.owed[vc]);
        self.depth - self.vc_count[vc] - owed
    }

    /// Grants VC `v` of `channel` (an output of router `cur`) to the header of message `id`
    /// waiting as `p`, whose routing state is `level`.
    #[inline(always)]
    pub(super) fn grant_output(
        &mut self,
        p: Pending,
        id: u32,
        cur: u32,
        channel: u32,
        v: u32,
        level: u32,
    ) {
        let vc = p.vc;
        let out = channel * self.v + v;
        // With `tail_sent` reallocation the buffer may still hold another message's flits.
        if !self.grant_behind(out, id) {
            self.vc_owner[out as usize] = id;
        }
        self.vc_src[out as usize] = vc;
        if let Some(fed) = self.ch_feed.get_mut(channel as usize) {
            *fed |= 1 << v;
        }
        self.vc_out[vc as usize] = out;
        // A source router's VC allocation counts with an injection channel only (`parallel`
        // injection has no pipeline at the source).
        if (vc < self.network_vcs || self.injection_channel)
            && let Some(timing) = self.timing.as_deref_mut()
        {
            timing.granted(self.now, vc);
        }
        let busy = self.ch_busy[channel as usize] | 1 << v;
        self.set_busy(channel, busy);
        let port = channel - self.geometry.first_channel(cur);
        let message = &self.messages[id as usize];
        if let Some(length) = self.vc_length.get_mut(out as usize) {
            *length = message.length;
        }
        // The routing function's own VC number (a reply's class starts at `vc_base`).
        let class_v = v - u32::from(message.vc_base);
        let level = self.router.after_hop(&self.geometry, cur, port, class_v, level);
        self.messages[id as usize].level = level;
        if self.window.open {
            let w = &mut self.window;
            w.hop_requests += 1;
            w.blocked_cycles += self.now - p.ready;
            w.hops_blocked += u64::from(self.now > p.ready);
            w.escape_hops += u64::from(self.router.is_escape(class_v));
        }
    }

    /// Picks uniformly among the free VCs of the current candidates' preferred (or fallback)
    /// masks at the router whose first channel is `base`; returns (channel, VC).
    // `always`: with `try_route` monomorphised per switching technique the compiler stopped
    // inlining it, which cost the wormhole loop 4% more instructions (callgrind, release,
    // 8x8 dimension order) and 10% of wall time in `runner bench`.
    #[inline(always)]
    fn select(&mut self, base: usize, fallback: bool) -> Option<(u32, u32)> {
        let free = |c: &Candidate, busy: &[u64]| {
            (if fallback { c.fallback } else { c.mask }) & !busy[base + c.port as usize]
        };
        let total: u32 = self.candidates.iter().map(|c| free(c, &self.ch_busy).count_ones()).sum();
        if total == 0 {
            return None;
        }
        let mut pick = if total == 1 { 0 } else { self.rng.below(u64::from(total)) as u32 };
        for c in &self.candidates {
            let mut vcs = free(c, &self.ch_busy);
            let n = vcs.count_ones();
            if pick < n {
                for _ in 0..pick {
                    vcs &= vcs - 1;
                }
                return Some((base as u32 + c.port, vcs.trailing_zeros()));
            }
            pick -= n;
        }
        None
    }

    /// Network VC `out` no longer has a buffer feeding it (`vc_src`, and `ch_feed` where
    /// phase A walks `active`).
    #[inline(always)]
    pub(super) fn unfeed(&mut self, out: u32) {
        self.vc_src[out as usize] = NONE;
        if !self.ch_feed.is_empty() {
            let (channel, index) = self.per_channel.div_rem(out);
            self.ch_feed[channel as usize] &= !(1 << index);
        }
    }

    /// Clears network VC `vc`'s bit in its channel's `ch_busy`: it may be granted again.
    pub(super) fn end_grant(&mut self, vc: u32) {
        let (channel, index) = self.per_channel.div_rem(vc);
        let busy = self.ch_busy[channel as usize] & !(1 << index);
        self.set_busy(channel, busy);
    }

    #[inline(always)]
    pub(super) fn set_busy(&mut self, channel: u32, busy: u64) {
        let ch = channel as usize;
        let old = self.ch_busy[ch];
        if self.window.open {
            self.window.busy_time[old.count_ones() as usize] += self.now - self.ch_since[ch];
            self.ch_since[ch] = self.now;
        }
        self.ch_busy[ch] = busy;
        if old & !busy != 0 && !self.releases.is_empty() {
            // A VC released: the headers blocked at the channel's router may try again.
            let router = self.geometry.router_of(channel) as usize;
            self.releases[router] = self.releases[router].wrapping_add(1);
        }
        if old == 0 && busy != 0 {
            self.ch_pos[ch] = self.active.len() as u32;
            self.active.push(channel);
            self.active_bits[ch / 64] |= 1 << (ch % 64);
        } else if busy == 0 && old != 0 {
            self.active_bits[ch / 64] &= !(1 << (ch % 64));
            let pos = self.ch_pos[ch] as usize;
            self.active.swap_remove(pos);
            if let Some(&moved) = self.active.get(pos) {
                self.ch_pos[moved as usize] = pos as u32;
            }
            self.ch_pos[ch] = NONE;
        }
    }
}
