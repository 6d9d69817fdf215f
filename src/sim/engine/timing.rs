//! Channel latency and the credit loop: links that take more than one cycle to cross, and
//! credits that take as long (plus `credit_delay`) to come back.
//!
//! By default a flit sent over a link in cycle t can leave the next buffer in cycle t + 1,
//! and the slot it freed upstream is seen there in cycle t + 1: a one-cycle link and a
//! one-cycle credit return, kept as plain counters (`vc_count`) with nothing scheduled. With
//! `channel_latency`, `global_channel_latency` or `credit_delay` set, or a graph file that
//! gives a link its `latency`, the engine carries a [`Timing`] and runs `traverse` with its
//! `T` flag on:
//! - a flit sent over channel c in cycle t counts in the downstream buffer's `vc_count` at
//!   once (so flits are conserved at every instant), and in `transit` until it arrives: it
//!   can leave that buffer from cycle t + L(c), the header may be routed from cycle
//!   t + L(c) + `router_delay`;
//! - a flit leaving a network VC's buffer in cycle t (to the next link, or ejected) returns
//!   its credit to the upstream router in cycle t + L(c) + `credit_delay`, c the channel the
//!   buffer belongs to (credits travel back over the same link): until then it counts in
//!   `owed`, and the upstream may send into the buffer only while `vc_count + owed` is below
//!   the buffer depth;
//! - the VC is reallocated when the tail's credit is back: its message lets go of it when the
//!   tail leaves (owner and chain cleared at once), but its bit in `ch_busy` stays set until
//!   then, so no header is granted it before the upstream router could know it is empty.
//!
//! So one VC streams at `min(1, depth / (2 L + credit_delay))` flits per cycle: the credit
//! loop is `L` cycles out, `L + credit_delay` back, and a buffer shallower than the loop
//! starves (the default loop, 2 cycles, needs a depth of 2).
//!
//! Events are kept in a timing wheel with one slot per cycle of the longest credit loop, so
//! nothing is allocated once the slots have grown to a cycle's events. An event due in cycle
//! t' is applied at the end of cycle t' - 1 (after `traverse`), which is where the default
//! engine applies the same effects (in phase B), in the order they were scheduled: with every
//! latency 1 and no credit delay the timed engine gives the default engine's results exactly
//! (a test holds it to that).

use crate::scenario::Scenario;

use super::super::topology::{Geometry, LinkKind};
use super::Engine;

/// Event kinds (bits 32 and up of a wheel entry; the VC is the low 32 bits).
const ARRIVAL: u64 = 0;
const CREDIT: u64 = 1;
const RELEASE: u64 = 2;

/// Per-link latencies and the flits and credits on their way.
pub(super) struct Timing {
    /// Per channel slot: cycles a flit takes to cross it (at least 1).
    pub(super) latency: Vec<u32>,
    /// Per channel slot: cycles a credit takes back (its latency plus `credit_delay`).
    credit: Vec<u32>,
    /// Per VC: flits on the link into its buffer that have not arrived yet.
    pub(super) transit: Vec<u32>,
    /// Per VC: credits of flits that left its buffer, not yet back at the upstream router.
    pub(super) owed: Vec<u32>,
    /// Events due in cycle t sit in `wheel[t % wheel.len()]`.
    wheel: Vec<Vec<u64>>,
}

impl Timing {
    /// The timing of a network whose channel `c` takes `latency[c]` cycles, with credits
    /// `credit_delay` cycles slower, for `total_vcs` VCs.
    pub(super) fn new(latency: Vec<u32>, credit_delay: u32, total_vcs: usize) -> Timing {
        let credit: Vec<u32> = latency.iter().map(|&l| l + credit_delay).collect();
        let longest = credit.iter().copied().max().unwrap_or(1) as usize;
        Timing {
            latency,
            credit,
            transit: vec![0; total_vcs],
            owed: vec![0; total_vcs],
            wheel: vec![Vec::new(); longest + 1],
        }
    }

    /// Schedules an event of `kind` for `vc`, due `after` cycles from `now` (`after >= 1`).
    #[inline(always)]
    fn schedule(&mut self, now: u64, after: u32, kind: u64, vc: u32) {
        let slot = ((now + u64::from(after)) % self.wheel.len() as u64) as usize;
        self.wheel[slot].push(kind << 32 | u64::from(vc));
    }

    /// A flit was sent in cycle `now` into network VC `vc` of `channel`.
    #[inline(always)]
    pub(super) fn sent(&mut self, now: u64, vc: u32, channel: u32) {
        self.transit[vc as usize] += 1;
        self.schedule(now, self.latency[channel as usize], ARRIVAL, vc);
    }

    /// A flit left network VC `vc` of `channel` in cycle `now`: its credit goes back.
    #[inline(always)]
    pub(super) fn departed(&mut self, now: u64, vc: u32, channel: u32) {
        self.owed[vc as usize] += 1;
        self.schedule(now, self.credit[channel as usize], CREDIT, vc);
    }

    /// The tail left network VC `vc` of `channel` in cycle `now`: the VC is free for another
    /// message once its credit is back.
    pub(super) fn drained(&mut self, now: u64, vc: u32, channel: u32) {
        self.schedule(now, self.credit[channel as usize], RELEASE, vc);
    }

    /// The longest credit loop over the links: a flit's way out plus its credit's way
    /// back, the buffer depth a VC needs to stream at one flit per cycle.
    fn longest_loop(&self) -> u32 {
        self.latency.iter().zip(&self.credit).map(|(l, c)| l + c).max().unwrap_or(2)
    }
}

/// `scenario`'s timing knobs resolved: (`channel_latency`, `global_channel_latency`,
/// `credit_delay`), each at its default where unset.
fn knobs(scenario: &Scenario) -> (u32, u32, u32) {
    let channel = scenario.channel_latency.unwrap_or(1);
    let global = scenario.global_channel_latency.unwrap_or(channel);
    (channel, global, scenario.credit_delay.unwrap_or(0))
}

/// Whether some link or credit of `scenario`'s network takes more than one cycle (a knob off
/// its default, or a graph file that gives a link its latency), or VCs are reallocated once the
/// tail is sent (`reallocation`, which runs on the timed engine's paths): the engine is then
/// timed.
pub(crate) fn timed(scenario: &Scenario) -> bool {
    let file = scenario.topology.graph().is_some_and(|g| g.latencies.iter().any(Option::is_some));
    file || knobs(scenario) != (1, 1, 0) || !scenario.vc_reallocation.is_drained()
}

/// The timing of `scenario`'s network, `None` when every link and credit takes one cycle.
pub(super) fn of(
    scenario: &Scenario,
    geometry: &Geometry,
    total_vcs: usize,
) -> Option<Box<Timing>> {
    timed(scenario).then(|| build(scenario, geometry, total_vcs))
}

/// The timing of `scenario`'s network, built even where every latency is 1.
pub(super) fn build(scenario: &Scenario, geometry: &Geometry, total_vcs: usize) -> Box<Timing> {
    let (channel, global, credit_delay) = knobs(scenario);
    Box::new(Timing::new(latencies(geometry, channel, global), credit_delay, total_vcs))
}

/// The latency of each channel slot: `channel_latency` for a link between two routers (a
/// graph file's `latency` for its link where it gives one), `global` for a dragonfly's
/// global link, 1 for a link between a terminal and its router (in the families whose
/// terminals are not routers themselves; BookSim's injection and ejection channels) and for
/// a missing link.
fn latencies(geometry: &Geometry, channel_latency: u32, global: u32) -> Vec<u32> {
    (0..geometry.channel_slots() as u32)
        .map(|channel| match geometry.link_kind(channel) {
            LinkKind::Terminal | LinkKind::None => 1,
            LinkKind::Router => geometry.file_latency(channel).unwrap_or(channel_latency),
            LinkKind::Global => global,
        })
        .collect()
}

impl Engine {
    /// The longest credit loop in cycles (`Timing::longest_loop`), `None` without a timing
    /// (every loop is then 2 cycles).
    pub(crate) fn longest_credit_loop(&self) -> Option<u32> {
        self.timing.as_deref().map(Timing::longest_loop)
    }

    /// Applies the events due next cycle (at the end of this one, see the module docs);
    /// returns whether there were any (flits and credits on their way are progress).
    pub(super) fn advance_timing(&mut self) -> bool {
        let Some(timing) = self.timing.as_deref_mut() else {
            return false;
        };
        let slot = ((self.now + 1) % timing.wheel.len() as u64) as usize;
        let mut due = std::mem::take(&mut timing.wheel[slot]);
        let any = !due.is_empty();
        for &event in &due {
            let vc = event as u32;
            match (event >> 32, self.timing.as_deref_mut()) {
                (ARRIVAL, Some(timing)) => timing.transit[vc as usize] -= 1,
                (CREDIT, Some(timing)) => timing.owed[vc as usize] -= 1,
                _ => self.end_grant(vc),
            }
        }
        due.clear();
        if let Some(timing) = self.timing.as_deref_mut() {
            timing.wheel[slot] = due;
        }
        any
    }
}
