//! Switching techniques: what wormhole, scouting and circuit switching do differently.
//!
//! The engine (`engine.rs`) runs one cycle loop for every technique and asks this module the
//! few questions on which they differ. It dispatches once per cycle on the technique
//! (`Engine::step_with::<S>()`, monomorphised for each `S`), so the wormhole loop contains none
//! of the code below and keeps its speed and its results.
//!
//! | question | wormhole (`wormhole`) | scouting, K >= 1 (`scouting`) | circuit (`circuit`) |
//! |---|---|---|---|
//! | may the header advance? | it is the first data flit: when a VC is free | a separate header: when a VC is free, one hop per cycle (plus `router_delay`) | a separate probe: likewise |
//! | may data enter this channel? | always | when acknowledged and the header is >= K links ahead, or at the destination | when the whole circuit is acknowledged |
//! | what happens on blocking? | wait | backtrack one link (at most K times between advances to a new furthest hop), else wait | tear the partial path down to the source, one hop per cycle, and retry |
//! | when is a channel released? | when the tail leaves it | likewise, or by a backtrack | likewise, or by a teardown |
//!
//! Scouting switching with K = 0 *is* wormhole switching (no acknowledgements, no
//! backtracking): it runs the wormhole code path and gives bit-identical results.
//!
//! # Shared mechanism of the separate header (scouting K >= 1 and circuit)
//!
//! The header (the probe) reserves VCs through the engine's own routing step
//! (`Engine::try_route`, so a routing filter such as the fault filter applies to it too); an
//! empty candidate list is blocking like any other. It then sits at the next router: its
//! pending entry names the VC it reserved, so `Message::head_vc` is the header's VC and the
//! chain `vc_src` from it leads back to the source. The data flits stay in the chain behind it;
//! the first data flit may enter a network VC only from the cycle `gate[vc]` (a per-VC array,
//! `NEVER` until an acknowledgement opens it); later flits follow the first one as in wormhole.
//! Only the first flit needs the gate, so the engine's traversal checks it only for an empty
//! VC (`vc_received == 0`), and only when `S != WORMHOLE`.
//!
//! Acknowledgements are not simulated as flits: an acknowledgement sent back `x` hops at the
//! end of cycle `t` arrives at the end of `t + x`, so the gate of the channel it unlocks is
//! `t + x + 1`, computed when it is sent. Nothing else can change meanwhile except a backtrack,
//! which closes the gates it invalidates (see `scouting`).
//!
//! Timing (no contention, `router_delay` = d): the header is granted its j-th channel in
//! cycle `R_j = g + (j-1)(1+d)` (g = the cycle its message got an injection VC), crosses the
//! link in that cycle and routes again from cycle `R_j + 1 + d`.
//!
//! # Measurements
//!
//! Counted for messages generated in the measurement window (like the latency) and divided by
//! the delivered ones; rates over the window. Keys follow the models where the quantity
//! corresponds (`mean_c00`, `setup_time`, `pb_i`, `p_s`, `p_f`, `p_f_j`, `t_n`, `p_v`,
//! `v_bar`); see `measurements`. `invariants` holds the test-build leak checks.

use crate::scenario::Scenario;

use super::route::Routed;
use super::{EJECT, Engine, NONE, Pending};

mod circuit;
#[cfg(test)]
mod invariants;
mod measurements;
mod scouting;
pub(super) mod wormhole;

use measurements::Counts;

pub(super) use circuit::CIRCUIT;
pub(super) use scouting::SCOUTING;
pub(super) use wormhole::WORMHOLE;

/// Gate value of a VC the data may not enter (not acknowledged).
pub(super) const NEVER: u64 = u64::MAX;

/// Default `circuit_retry_limit`: failed set-up attempts after the first before a drop.
pub(crate) const DEFAULT_RETRY_LIMIT: u32 = crate::sim::DEFAULT_CIRCUIT_RETRY_LIMIT;

/// Per-message state of a separate header.
#[derive(Clone, Copy, Debug, Default)]
struct Probe {
    /// Network channels the header holds (its position along the path).
    reserved: u32,
    /// The most channels it has held at once (scouting: the furthest hop reached).
    furthest: u32,
    /// Scouting: backtracks since the header last reached a new furthest hop.
    since: u32,
    /// Circuit: failed set-up attempts so far.
    failures: u32,
    /// Circuit: the partial path is being torn down.
    teardown: bool,
}

/// The switching technique's configuration and state.
#[derive(Clone, Debug)]
pub(crate) struct State {
    /// `WORMHOLE`, `SCOUTING` or `CIRCUIT` (scouting with K = 0 is `WORMHOLE`).
    pub(super) kind: u8,
    /// K (scouting).
    k: u32,
    /// Circuit: back-off after a failed attempt, and the retry limit.
    backoff: u64,
    retry_limit: u32,
    /// Per network VC: first cycle in which the first data flit may enter it.
    pub(super) gate: Vec<u64>,
    /// Per network VC: the message's routing state (Nbc level) before the hop onto it.
    level_before: Vec<u32>,
    /// Per VC (network and injection): output ports that failed from it (scouting).
    tried: Vec<u64>,
    /// Per message id.
    probes: Vec<Probe>,
    /// Last cycle for which an acknowledgement, a teardown or a back-off is scheduled: until
    /// then the network is not idle even if no flit moves (the watchdog).
    pub(super) busy_until: u64,
    /// A header moved (advanced, backtracked, tore down) this cycle.
    pub(super) moved: bool,
    /// Messages dropped in the whole run.
    pub(crate) dropped: u64,
    pub(crate) counts: Counts,
}

impl State {
    /// The state for `scenario` with `network_vcs` network VCs and `total_vcs` VCs in all.
    pub(super) fn new(
        scenario: &Scenario,
        network_vcs: usize,
        total_vcs: usize,
        diameter: u32,
    ) -> State {
        let kind = wormhole::technique(scenario.switching);
        let separate = kind != WORMHOLE;
        let per_hop = if separate { diameter as usize + 1 } else { 0 };
        State {
            kind,
            k: scenario.switching.scouting_distance().unwrap_or(0),
            backoff: u64::from(scenario.circuit_backoff.unwrap_or(0)),
            retry_limit: scenario.circuit_retry_limit.unwrap_or(DEFAULT_RETRY_LIMIT),
            gate: if separate { vec![NEVER; network_vcs] } else { vec![] },
            level_before: if separate { vec![0; network_vcs] } else { vec![] },
            tried: if separate { vec![0; total_vcs] } else { vec![] },
            probes: vec![],
            busy_until: 0,
            moved: false,
            dropped: 0,
            counts: Counts {
                failures_at: vec![0; per_hop],
                requests_at: vec![0; per_hop],
                blocked_at: vec![0; per_hop],
                ..Counts::default()
            },
        }
    }

    /// A message `id` got injection VC `vc`: its header starts at the source.
    pub(super) fn start(&mut self, id: u32, vc: u32) {
        let id = id as usize;
        if id >= self.probes.len() {
            self.probes.resize(id + 1, Probe::default());
        }
        self.probes[id] = Probe::default();
        self.tried[vc as usize] = 0;
    }

    /// Notes an event scheduled for cycle `at` (the watchdog waits for it).
    fn schedule(&mut self, at: u64) {
        self.busy_until = self.busy_until.max(at);
    }
}

impl Engine {
    /// One routing step of the separate header of the message in `p.vc` (scouting K >= 1 or
    /// circuit): advance, or handle the blocking. Returns the pending entry to keep (the same
    /// one while it waits, the new position after a move), or `None` once the header needs no
    /// more routing (it holds the ejection port, or its message was dropped).
    pub(super) fn route_probe<const S: u8>(&mut self, p: Pending) -> Option<Pending> {
        let id = self.vc_owner[p.vc as usize];
        let probe = self.switching.probes[id as usize];
        if S == CIRCUIT && probe.teardown {
            return self.tear_down_hop(id, p.vc);
        }
        let message = self.messages[id as usize];
        let at_dest = self.node_of(p.vc) == message.dest;
        let first_try = p.ready == self.now && !at_dest;
        let hop = probe.reserved as usize;
        if first_try && message.measured && hop < self.switching.counts.requests_at.len() {
            self.switching.counts.requests_at[hop] += 1;
        }
        if self.try_route::<S>(p) == Routed::Granted {
            let out = self.vc_out[p.vc as usize];
            if out == EJECT {
                if S == CIRCUIT {
                    self.circuit_up(id, p.vc);
                }
                return None;
            }
            return Some(self.probe_advanced::<S>(id, out, message.level));
        }
        if first_try && message.measured && hop < self.switching.counts.blocked_at.len() {
            self.switching.counts.blocked_at[hop] += 1;
        }
        if at_dest {
            // Waiting for the ejection port: neither technique gives up at the destination.
            return Some(p);
        }
        if S == SCOUTING { self.scouting_blocked(id, p) } else { self.circuit_blocked(id, p) }
    }

    /// The header of message `id` was granted network VC `out` (its routing level before the
    /// hop was `level`): it crosses the link in this cycle.
    fn probe_advanced<const S: u8>(&mut self, id: u32, out: u32, level: u32) -> Pending {
        let now = self.now;
        let sw = &mut self.switching;
        let o = out as usize;
        sw.level_before[o] = level;
        sw.tried[o] = 0;
        sw.gate[o] = NEVER;
        sw.moved = true;
        let probe = &mut sw.probes[id as usize];
        probe.reserved += 1;
        if probe.reserved > probe.furthest {
            probe.furthest = probe.reserved;
            probe.since = 0;
        }
        let reserved = probe.reserved;
        let message = &mut self.messages[id as usize];
        message.head_vc = out;
        let (measured, dest, injected) = (message.measured, message.dest, message.injected);
        if self.window.open {
            self.window.header_hops += 1;
        }
        let arrives = self.geometry.downstream(self.per_channel.div(out)) == dest;
        if arrives && measured {
            let c = &mut self.switching.counts;
            c.arrivals += 1;
            c.travel += now + 1 - injected;
        }
        if S == SCOUTING {
            self.acknowledge(id, out, reserved, arrives);
        }
        let ready = now + 1 + self.delay;
        self.switching.schedule(ready);
        Pending::new(out, ready)
    }

    /// The VC `steps` positions behind `vc` along its message's chain (`vc_src`), or `NONE`
    /// past the source. Valid ahead of the first data flit, where the chain is intact.
    fn chain_back(&self, mut vc: u32, steps: u32) -> u32 {
        for _ in 0..steps {
            if vc == NONE {
                break;
            }
            vc = self.vc_src[vc as usize];
        }
        vc
    }

    /// Releases the reserved, still empty network VC `vc` holding a header (backtrack or
    /// teardown), through the engine's own `release`; returns the VC behind it.
    fn unreserve(&mut self, vc: u32) -> u32 {
        let prev = self.vc_src[vc as usize];
        debug_assert_eq!(self.vc_received[vc as usize], 0, "unreserving a VC data entered");
        self.unfeed(vc);
        self.release::<false>(vc);
        self.vc_out[prev as usize] = NONE;
        self.switching.gate[vc as usize] = NEVER;
        self.switching.moved = true;
        prev
    }

    /// Circuit switching: drops message `id`, whose header is back in injection VC `vc`, after
    /// too many failed attempts. Counted, reported, never silent.
    fn drop_message(&mut self, id: u32, vc: u32) {
        let message = self.messages[id as usize];
        self.vc_count[vc as usize] = 0;
        self.release::<false>(vc);
        self.in_network -= 1;
        self.messages[id as usize].head_vc = NONE;
        self.free.push(id);
        self.switching.dropped += 1;
        if message.measured {
            self.window.outstanding -= 1;
            self.batches.dropped(message.generated - self.window.start);
            self.switching.counts.dropped += 1;
        }
    }

    /// Whether the first data flit of the message holding `vc` may enter it (test of the gate
    /// for the deadlock analysis; the traversal inlines it).
    pub(super) fn data_may_enter(&self, vc: u32) -> bool {
        self.switching.kind == WORMHOLE
            || self.vc_received[vc as usize] > 0
            || self.switching.gate[vc as usize] != NEVER
    }

    /// Deadlock analysis: whether the waiting header in `vc` of message `id` can only wait
    /// (it cannot backtrack or tear down by itself).
    pub(super) fn header_only_waits(&self, id: u32, vc: u32) -> bool {
        match self.switching.kind {
            WORMHOLE => true,
            SCOUTING => !self.may_backtrack(id, vc),
            _ => false,
        }
    }
}
