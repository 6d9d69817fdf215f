//! Scouting switching with scouting distance K >= 1 (Dao, Duato and Yalamanchili; the model of
//! Safaei et al., "Communication prediction of scouting switching in adaptively-routed torus
//! networks", NPC 2007): acknowledgements, the data gate, backtracking.
//!
//! - **Positive acknowledgements.** When the header is granted the channel at position `j` of
//!   its path (cycle `R_j`), the channel returns a positive acknowledgement that travels back
//!   one hop per cycle. Data may enter a channel when it is acknowledged and the header is at
//!   least K links ahead: the first data flit, at the router `h` hops from the source, may enter
//!   the channel at position `h + 1` once the acknowledgement of position `h + K` has reached
//!   router `h`, i.e. from cycle `R_{h+K} + K + 1`. Once the header has reached the destination
//!   (position `H`), the acknowledgement from there opens every remaining channel: position
//!   `p > H - K` from cycle `R_H + (H - p + 1) + 1`. So the first data flit stays K links
//!   behind the header, and the header-to-data gap reaches `2K - 1` while the acknowledgements
//!   travel, as the paper says. `ack_hops_per_message` counts `min(K, j)` hops per granted
//!   channel (the acknowledgement travels back to the data, at most to the source).
//! - **Blocking.** When every candidate VC at the header's router is busy (or the candidate
//!   list is empty, e.g. every minimal output leads to a faulty node), the header backtracks one
//!   link in the same cycle, releasing the channel with a negative acknowledgement, and routes
//!   again from the previous router one cycle (plus `router_delay`) later, as after any hop. It
//!   may backtrack only when
//!   - it holds a channel (not at the source) that no data flit has entered ("never into
//!     channels data already holds"), and
//!   - it has backtracked fewer than K times since it last reached a new furthest hop from the
//!     source. This is our reading of the paper's "t <= K" (at most K consecutive backtracks):
//!     the count restarts only when the header gets further than ever before, so a header
//!     makes at most `K (H + 1)` backtracks in all and cannot livelock.
//!
//!   Otherwise it **waits**, as wormhole does, retrying every cycle. The negative
//!   acknowledgement also withdraws the permission that the released channel's positive
//!   acknowledgement gave (the gate of position `j - K + 1`, if the data has not used it yet);
//!   for simplicity at once rather than when it would arrive, which only ever delays data.
//! - **Short worms.** After backtracks the header may be fewer than K links ahead of the data
//!   (it backtracks into channels no data has entered, down to the data's front). The gate a
//!   later acknowledgement (or a negative one) addresses, K - 1 positions behind the header,
//!   then lies behind the first data flit, where it no longer matters: the gate only holds the
//!   first flit. In a long worm that position still holds data flits, so the gate is set (or
//!   kept) without effect; in a worm shorter than that stretch (M flits in fewer channels than
//!   K, e.g. `scouting_distance >= message_length`) the tail has already released it and the
//!   chain ends before it, so there is nothing to set. At zero load no header backtracks, the
//!   data stays exactly K links behind, and the latency below holds for every M.
//! - **Failed outputs are remembered.** A backtrack marks the output port it came back from at
//!   that router (per position: `tried` on the VC the header returns to). The header does not
//!   request marked ports again while it may still backtrack or an unmarked candidate has a
//!   free VC; otherwise (at the source, or out of backtracks, with every unmarked output busy)
//!   it waits for any candidate, marked ones included, so it never waits for nothing. The
//!   marks of a position are cleared when the header reserves it afresh.
//! - **Routing state.** A backtrack restores the message's routing state (Nbc's escape
//!   level) to its value before the released hop, so every routing keeps its invariants. Every
//!   routing is accepted: a backtrack only releases channels, and a header that waits waits
//!   for exactly the channels wormhole would, so the deadlock freedom of `dimension_order`,
//!   `duato` and `nbc` carries over; `adaptive` (no deadlock avoidance) can deadlock once
//!   headers run out of backtracks, which the watchdog reports.
//!
//! # Exact zero-load latency
//!
//! A lone message, `H` hops, length `M`, no router delay, buffers of at least 2 flits:
//! `R_j = g + j - 1`. With `m = min(K, H)`, the first data flit enters position 1 in cycle
//! `g + 2m` (`R_m + m + 1`; for `K <= H` from the acknowledgement of position K, for `K > H`
//! from the destination's) and is never gated again: position `p <= H - K + 1` opens at
//! `g + p + 2K - 1`, exactly when the flit gets there, and positions beyond open earlier. It
//! reaches the destination at the end of cycle `g + 2m + H - 1`, the ejection port was granted
//! at `g + H`, so the tail is ejected in cycle `g + 2m + H + M - 1`: latency `H + M + 2m`,
//! wormhole's `H + M` plus `2 min(K, H)`. (The paper's zero-load `M + D + 2K - 1` is the same
//! plus the wormhole figure's missing ejection cycle, errata E-SS-3.) With a router delay
//! `d`, `R_j = g + (j - 1)(1 + d)`, the gate of position `p <= H - K + 1` then grows by
//! `1 + d` per hop and holds the flit back each time, and the latency is
//! `(H - 1)(1 + d) + max(2m + 1, 1 + d) + M` (the second term: the flit's last hop plus
//! ejection, or the header's routing delay at the destination if that is longer).

use super::{EJECT, Engine, NEVER, NONE, Pending};

/// `Engine::step_with` parameter of scouting switching with K >= 1.
pub(in crate::sim::engine) const SCOUTING: u8 = 1;

impl Engine {
    /// Sets the gates opened by the positive acknowledgement of the channel `out` just granted
    /// at position `reserved`; `arrives`: it leads to the destination.
    pub(super) fn acknowledge(&mut self, id: u32, out: u32, reserved: u32, arrives: bool) {
        let k = self.switching.k;
        let now = self.now;
        if arrives {
            // Positions max(1, H-K+1) ..= H open from R_H + (H - p + 1) + 1.
            let mut at = out;
            let lowest = reserved.saturating_sub(k) + 1;
            for p in (lowest..=reserved).rev() {
                if at == NONE {
                    // The worm's tail has left this position: the data is past it.
                    break;
                }
                self.switching.gate[at as usize] = now + u64::from(reserved - p) + 2;
                at = self.vc_src[at as usize];
            }
            self.switching.schedule(now + u64::from(reserved) + 1);
        } else if reserved >= k {
            let at = self.chain_back(out, k - 1);
            if at != NONE {
                self.switching.gate[at as usize] = now + u64::from(k) + 1;
            }
            self.switching.schedule(now + u64::from(k) + 1);
        }
        if self.messages[id as usize].measured {
            self.switching.counts.ack_hops += u64::from(k.min(reserved));
        }
    }

    /// Whether the header of message `id`, waiting in `vc`, may backtrack.
    pub(super) fn may_backtrack(&self, id: u32, vc: u32) -> bool {
        let probe = &self.switching.probes[id as usize];
        probe.reserved > 0 && probe.since < self.switching.k && self.vc_received[vc as usize] == 0
    }

    /// Routing filter of scouting switching (called right after the candidates are computed):
    /// the header does not request outputs that failed from here while it may still
    /// backtrack or another output has a free VC; otherwise it waits for any of them.
    pub(in crate::sim::engine) fn skip_failed_outputs(&mut self, id: u32, vc: u32) {
        let tried = self.switching.tried[vc as usize];
        if tried == 0 {
            return;
        }
        let base = self.geometry.first_channel(self.node_of(vc)) as usize;
        let other_free = self.candidates.iter().any(|c| {
            tried >> c.port & 1 == 0
                && (c.mask | c.fallback) & !self.ch_busy[base + c.port as usize] != 0
        });
        if other_free || self.may_backtrack(id, vc) {
            self.candidates.retain(|c| tried >> c.port & 1 == 0);
        }
    }

    /// The header of message `id` in `p.vc` (not at its destination) found no free VC.
    pub(super) fn scouting_blocked(&mut self, id: u32, p: Pending) -> Option<Pending> {
        let vc = p.vc;
        if !self.may_backtrack(id, vc) {
            return Some(p);
        }
        let k = self.switching.k;
        let reserved = self.switching.probes[id as usize].reserved;
        if reserved >= k {
            // The negative acknowledgement withdraws what this channel's positive one allowed.
            let at = self.chain_back(vc, k - 1);
            if at != NONE && self.vc_received[at as usize] == 0 {
                self.switching.gate[at as usize] = NEVER;
            }
        }
        let port = self.geometry.port_of(self.per_channel.div(vc));
        let level = self.switching.level_before[vc as usize];
        let prev = self.unreserve(vc);
        debug_assert!(self.vc_out[prev as usize] != EJECT);
        self.switching.tried[prev as usize] |= 1 << port;
        let probe = &mut self.switching.probes[id as usize];
        probe.reserved -= 1;
        probe.since += 1;
        let message = &mut self.messages[id as usize];
        message.level = level;
        message.head_vc = prev;
        if message.measured {
            self.switching.counts.backtracks += 1;
        }
        let ready = self.now + 1 + self.delay;
        self.switching.schedule(ready);
        Some(Pending::new(prev, ready))
    }
}
