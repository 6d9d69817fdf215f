//! Channel latency, the switch pipeline and the credit loop: links that take more than one
//! cycle to cross, flits that spend cycles in a router's switch stages after leaving its
//! buffer, and credits that take as long as the link (plus `credit_delay`) to come back.
//!
//! By default a flit sent over a link in cycle t can leave the next buffer in cycle t + 1,
//! and the slot it freed upstream is seen there in cycle t + 1: a one-cycle link and a
//! one-cycle credit return, kept as plain counters (`vc_count`) with nothing scheduled. With
//! `channel_latency`, `global_channel_latency`, `credit_delay` or `switch_delay` set, or a
//! graph file that gives a link its `latency`, the engine carries a [`Timing`] and runs
//! `traverse` with its `T` flag on:
//! - a flit sent over channel c in cycle t counts in the downstream buffer's `vc_count` at
//!   once (so flits are conserved at every instant), and in `transit` until it arrives: it
//!   can leave that buffer from cycle t + A(c), the header may be routed from cycle
//!   t + A(c) + `router_delay`. A(c) = L(c) + S(c), the link's latency plus the switch
//!   pipeline of the router it leaves (`switch_delay`: BookSim's switch allocation and
//!   traversal stages, which every flit crosses after leaving its input buffer, so they add
//!   to the way out but not to the credit's way back); S(c) = 0 on a link that leaves a
//!   terminal which is not a router. Every flit on one link pays the same A(c), the source
//!   router's included whatever `injection` says, so flits arrive in the order they were
//!   sent. A node that is its own router (tori, meshes, hypercubes) charges `switch_delay`
//!   once more when it ejects a message (the destination router's switch);
//! - a header granted its output VC (or the ejection port) in cycle t may leave its buffer
//!   from cycle t + `vc_allocation_delay` (its buffer's `transit` holds `HELD` until then, so the
//!   test of the oldest flit covers it): with 1, the switch is allocated the
//!   cycle after the VC, as in a router that does not speculate, so a VC freed in cycle t
//!   carries its next header from t + 1;
//! - a flit leaving a network VC's buffer in cycle t (to the next link, or ejected) returns
//!   its credit to the upstream router in cycle t + L(c) + `credit_delay`, c the channel the
//!   buffer belongs to (credits travel back over the same link): until then it counts in
//!   `owed`, and the upstream may send into the buffer only while `vc_count + owed` is below
//!   the buffer depth;
//! - the VC is reallocated when the tail's credit is back: its message lets go of it when the
//!   tail leaves (owner and chain cleared at once), but its bit in `ch_busy` stays set until
//!   then, so no header is granted it before the upstream router could know it is empty.
//!
//! So one VC streams at `min(1, depth / (2 L + S + credit_delay))` flits per cycle: the
//! credit loop is `L + S` cycles out, `L + credit_delay` back, and a buffer shallower than
//! the loop starves (the default loop, 2 cycles, needs a depth of 2).
//!
//! Events are kept in timing wheels with a slot per cycle of the longest credit loop (rounded
//! up to a power of two, so a slot is a mask, not a division), so nothing is allocated once
//! the slots have grown to a cycle's events: one wheel of flit arrivals and one of credits,
//! each a list of VCs whose counter drops (in any order, as counters do), and one of the
//! events whose order matters (a VC's release, the end of a header's `vc_allocation_delay`),
//! applied in the order they were scheduled. Where every link has the same delays, a cycle's
//! moves go to one slot of each of the first two, recorded by phase B as it applies them
//! (`Timing::open_sent`). An event due in cycle t' is applied at the end of cycle t' - 1
//! (after `traverse`), which is where the default engine applies the same effects (in
//! phase B): with every latency 1 and no credit delay the timed engine gives the default
//! engine's results exactly (a test holds it to that).

use crate::scenario::{Injection, Scenario};

use super::super::divisor::Divisor;
use super::super::topology::{Geometry, LinkKind};
use super::Engine;

/// The kinds of `Timing::events` (bits 32 and up of an entry; the VC is the low 32 bits).
const RELEASE: u64 = 2;
const RESUME: u64 = 3;

/// Added to a VC's `transit` while the header just granted an output from its buffer waits
/// out `vc_allocation_delay`: no flit of the buffer has arrived as far as the tests of the
/// oldest flit can tell (a buffer holds far fewer flits than this).
pub(super) const HELD: u32 = 1 << 31;

/// The delays of one channel (`Timing::delays`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Delays {
    pub(super) latency: u32,
    credit: u32,
}

/// Per-link latencies and the flits and credits on their way.
pub(super) struct Timing {
    /// Per channel slot: cycles from a flit leaving the upstream buffer to its arrival in the
    /// downstream one (at least 1: the link's latency plus the upstream router's switch
    /// pipeline), and cycles a credit takes back (the link's latency plus `credit_delay`);
    /// side by side, as every flit sent needs both.
    pub(super) delays: Vec<Delays>,
    /// The delays every link shares, where all links that exist have the same and a fed
    /// injection VC's credit takes the links' credit delay too (tori, meshes and hypercubes,
    /// whose nodes are their routers, unless a graph file gives its links latencies or the
    /// sources feed over links longer than a cycle): a cycle's moves then fill one slot of
    /// each wheel.
    uniform: Option<Delays>,
    /// Per VC: flits on the link into its buffer that have not arrived yet, plus `HELD`
    /// while a header just granted its output waits out `vc_allocation_delay`.
    pub(super) transit: Vec<u32>,
    /// Per VC: credits of flits that left its buffer, not yet back at the upstream router (or,
    /// for an injection VC fed over an injection channel, at the source: `source`).
    pub(super) owed: Vec<u32>,
    /// Cycles an injection VC's credit takes back to a source that feeds it over its
    /// injection channel (`1 + credit_delay`), or 0 when the sources do not feed (`source`).
    source_credit: u32,
    /// The wheels: what is due in cycle t sits in slot `t & wheel_mask` of each, a power of
    /// two of slots, at least one more than the longest delay (a mask, not a division, per
    /// event). `arrivals` and `credits` hold VCs (a flit arrives in its buffer, a credit
    /// comes back): counters, applied in any order. `events` holds the other kinds
    /// (`kind << 32 | vc`), applied in the order they were scheduled.
    arrivals: Vec<Vec<u32>>,
    credits: Vec<Vec<u32>>,
    events: Vec<Vec<u64>>,
    wheel_mask: u64,
    /// Cycles a message's delivery waits beyond its tail's ejection: the destination router's
    /// switch pipeline where the node is its own router, else 0.
    pub(super) eject: u32,
    /// `vc_allocation_delay`: cycles from a header's grant to its first move.
    pub(super) allocation_delay: u32,
}

impl Timing {
    /// The timing of a network whose channel `c` takes `link[c]` cycles to cross after
    /// `switch[c]` cycles in the upstream router's switch, with credits `credit_delay` cycles
    /// slower than the link, for `total_vcs` VCs; deliveries wait `eject` cycles more.
    pub(super) fn new(
        link: &[u32],
        switch: &[u32],
        credit_delay: u32,
        eject: u32,
        allocation_delay: u32,
        total_vcs: usize,
    ) -> Timing {
        let delays: Vec<Delays> = link
            .iter()
            .zip(switch)
            .map(|(&l, &s)| Delays { latency: l + s, credit: l + credit_delay })
            .collect();
        let longest = delays.iter().map(|d| d.latency.max(d.credit)).max().unwrap_or(1);
        // A fed injection VC's credit crosses a one-cycle channel.
        let longest = longest.max(1 + credit_delay).max(allocation_delay) as usize;
        let slots = (longest + 1).next_power_of_two();
        Timing {
            delays,
            transit: vec![0; total_vcs],
            owed: vec![0; total_vcs],
            uniform: None,
            source_credit: 0,
            arrivals: vec![Vec::new(); slots],
            credits: vec![Vec::new(); slots],
            events: vec![Vec::new(); slots],
            wheel_mask: slots as u64 - 1,
            eject,
            allocation_delay,
        }
    }

    /// The wheel slot of the cycle `after` cycles from `now`.
    #[inline(always)]
    fn slot(&self, now: u64, after: u32) -> usize {
        ((now + u64::from(after)) & self.wheel_mask) as usize
    }

    /// Schedules an event of `kind` for `vc` in `events`, due `after` cycles from `now`
    /// (`after >= 1`).
    fn schedule(&mut self, now: u64, after: u32, kind: u64, vc: u32) {
        let slot = self.slot(now, after);
        self.events[slot].push(kind << 32 | u64::from(vc));
    }

    /// The header in `vc`'s buffer was granted its output in cycle `now`: it may leave from
    /// `now + allocation_delay` (until then its buffer's `transit` holds `HELD`; earlier
    /// flits have left the buffer by the time its header is granted).
    #[inline(always)]
    pub(super) fn granted(&mut self, now: u64, vc: u32) {
        if self.allocation_delay > 0 {
            self.transit[vc as usize] += HELD;
            self.schedule(now, self.allocation_delay, RESUME, vc);
        }
    }

    /// Whether the oldest flit of `vc`'s buffer (`count` flits) has arrived and, if it is a
    /// header just granted, its VC allocation is over.
    #[inline(always)]
    pub(super) fn front_ready(&self, vc: u32, count: u32) -> bool {
        count > self.transit[vc as usize]
    }

    /// The flits of this cycle's moves were sent in cycle `now`, where the links' delays
    /// differ (else phase B records them itself, [`Timing::open_sent`]): each is on its way
    /// into its output VC (`moves[k]`'s low 32 bits) and its credit on its way back from the
    /// buffer it left (`vc_src` of the output VC; an injection VC's credit only where the
    /// source feeds it).
    pub(super) fn sent(
        &mut self,
        now: u64,
        moves: &[u64],
        vc_src: &[u32],
        network_vcs: u32,
        per_channel: Divisor,
    ) {
        for &packed in moves {
            let out = packed as u32;
            let src = vc_src[out as usize];
            let latency = self.delays[per_channel.div(out) as usize].latency;
            let slot = self.slot(now, latency);
            self.arrivals[slot].push(out);
            self.transit[out as usize] += 1;
            self.departed(now, src, network_vcs, per_channel);
        }
    }

    /// Whether every link has the same delays (`uniform`).
    #[inline(always)]
    pub(super) fn uniform(&self) -> bool {
        self.uniform.is_some()
    }

    /// Where every link has the same delays: room for `moves` moves sent in cycle `now` in one
    /// slot of each wheel, to be filled by phase B's own loop over the moves
    /// ([`Sent::record`]) and closed by [`Timing::close_sent`]; `None` where the delays differ
    /// (phase B then calls [`Timing::sent`]). The slots are filled through slices of room for
    /// every move, their lengths counted in registers: pushed one by one, each `Vec`'s
    /// length went through memory per move, a chain of stores and loads across the loop.
    #[inline(always)]
    pub(super) fn open_sent(
        &mut self,
        now: u64,
        moves: usize,
        network_vcs: u32,
    ) -> Option<Sent<'_>> {
        let delays = self.uniform?;
        let (arrival_slot, credit_slot) =
            (self.slot(now, delays.latency), self.slot(now, delays.credit));
        let Timing { transit, owed, arrivals, credits, source_credit, .. } = self;
        let arrived = &mut arrivals[arrival_slot];
        let start = arrived.len();
        arrived.resize(start + moves, 0);
        let credited = &mut credits[credit_slot];
        let credit_start = credited.len();
        credited.resize(credit_start + moves, 0);
        Some(Sent {
            transit,
            owed,
            arrived: &mut arrived[start..],
            credited: &mut credited[credit_start..],
            n_credited: 0,
            credit_slot,
            credit_start,
            network_vcs,
            feeds: *source_credit > 0,
        })
    }

    /// Ends what [`Timing::open_sent`] opened: the credit slot keeps the credits recorded
    /// (`Sent::end`).
    #[inline(always)]
    pub(super) fn close_sent(&mut self, credit_slot: usize, end: usize) {
        self.credits[credit_slot].truncate(end);
    }

    /// A flit left VC `vc` in cycle `now`: a network VC's credit goes back to the upstream
    /// router over its channel; an injection VC's to its source where the source feeds it
    /// (`source`), else nothing is owed.
    #[inline(always)]
    pub(super) fn departed(&mut self, now: u64, vc: u32, network_vcs: u32, per_channel: Divisor) {
        let after = match vc < network_vcs {
            true => self.delays[per_channel.div(vc) as usize].credit,
            false if self.source_credit > 0 => self.source_credit,
            false => return,
        };
        self.owed[vc as usize] += 1;
        let slot = self.slot(now, after);
        self.credits[slot].push(vc);
    }

    /// The tail left network VC `vc` of `channel` in cycle `now`: the VC is free for another
    /// message once its credit is back.
    pub(super) fn drained(&mut self, now: u64, vc: u32, channel: u32) {
        self.schedule(now, self.delays[channel as usize].credit, RELEASE, vc);
    }

    /// The longest credit loop over the links: a flit's way out plus its credit's way
    /// back, the buffer depth a VC needs to stream at one flit per cycle.
    fn longest_loop(&self) -> u32 {
        self.delays.iter().map(|d| d.latency + d.credit).max().unwrap_or(2)
    }
}

/// A cycle's moves recorded into one slot of each wheel as phase B walks them, where every
/// link has the same delays ([`Timing::open_sent`]): [`Timing::sent`]'s work done in phase B's
/// own loop, which has each move's VCs in registers already.
pub(super) struct Sent<'a> {
    transit: &'a mut [u32],
    owed: &'a mut [u32],
    /// Room for every move's arrival, and for its credit.
    arrived: &'a mut [u32],
    credited: &'a mut [u32],
    n_credited: usize,
    /// Where the credits go: the wheel's slot and the first entry of this cycle's.
    pub(super) credit_slot: usize,
    pub(super) credit_start: usize,
    network_vcs: u32,
    /// Whether the sources feed their injection VCs (which then owe credits too).
    feeds: bool,
}

impl Sent<'_> {
    /// Move `k` of the cycle sent a flit from VC `src` into VC `out`: the flit is on its way
    /// into `out`'s buffer and its credit on its way back from `src`'s (an injection VC's
    /// only where the source feeds it: without a branch, as whether a move left an injection
    /// VC is a coin toss to a branch predictor).
    #[inline(always)]
    pub(super) fn record(&mut self, k: usize, out: usize, src: usize) {
        self.transit[out] += 1;
        self.arrived[k] = out as u32;
        let owes = (src as u32) < self.network_vcs || self.feeds;
        self.owed[src] += u32::from(owes);
        self.credited[self.n_credited] = src as u32;
        self.n_credited += usize::from(owes);
    }

    /// The end of this cycle's credits in their slot.
    pub(super) fn end(&self) -> usize {
        self.credit_start + self.n_credited
    }
}

/// `scenario`'s timing knobs resolved: (`channel_latency`, `global_channel_latency`,
/// `credit_delay`, `switch_delay`, `vc_allocation_delay`), each at its default where unset.
fn knobs(scenario: &Scenario) -> (u32, u32, u32, u32, u32) {
    let channel = scenario.channel_latency.unwrap_or(1);
    let global = scenario.global_channel_latency.unwrap_or(channel);
    let credit = scenario.credit_delay.unwrap_or(0);
    let allocation = scenario.vc_allocation_delay.unwrap_or(0);
    (channel, global, credit, scenario.switch_delay.unwrap_or(0), allocation)
}

/// Whether some link or credit of `scenario`'s network takes more than one cycle (a knob off
/// its default, or a graph file that gives a link its latency), a switch pipeline delays every
/// flit (`switch_delay`) or a granted header (`vc_allocation_delay`), or VCs are reallocated
/// once the tail is sent (`reallocation`, which runs on the timed engine's paths): the engine
/// is then timed.
pub(crate) fn timed(scenario: &Scenario) -> bool {
    let file = scenario.topology.graph().is_some_and(|g| g.latencies.iter().any(Option::is_some));
    file || knobs(scenario) != (1, 1, 0, 0, 0) || !scenario.vc_reallocation.is_drained()
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
    let (channel, global, credit_delay, switch_delay, allocation_delay) = knobs(scenario);
    let link = latencies(geometry, channel, global);
    let switch: Vec<u32> = (0..link.len() as u32)
        .map(|c| if geometry.leaves_terminal(c) { 0 } else { switch_delay })
        .collect();
    let eject = if geometry.nodes_are_routers() { switch_delay } else { 0 };
    let mut timing = Timing::new(&link, &switch, credit_delay, eject, allocation_delay, total_vcs);
    if scenario.injection == Injection::Channel && geometry.nodes_are_routers() {
        // The sources feed their injection VCs over the channel (`source`).
        timing.source_credit = 1 + credit_delay;
    }
    // The delays of the links that exist (a missing one carries no flit), if all the same
    // and a fed injection VC's credit comes back as fast.
    let mut present = (0..link.len()).filter(|&c| geometry.link_kind(c as u32) != LinkKind::None);
    let first = present.next().map(|c| timing.delays[c]);
    timing.uniform = first.filter(|d| {
        (timing.source_credit == 0 || timing.source_credit == d.credit)
            && present.all(|c| timing.delays[c] == *d)
    });
    Box::new(timing)
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
        // Taken out for the loop (`end_grant` reads no timing), so each event borrows nothing.
        let Some(mut timing) = self.timing.take() else {
            return false;
        };
        let slot = timing.slot(self.now, 1);
        let Timing { transit, owed, arrivals, credits, events, .. } = &mut *timing;
        let transit: &mut [u32] = transit;
        let owed: &mut [u32] = owed;
        for &vc in &arrivals[slot] {
            transit[vc as usize] -= 1;
        }
        for &vc in &credits[slot] {
            owed[vc as usize] -= 1;
        }
        // Flits, credits and releases on their way are progress; the end of a header's
        // `vc_allocation_delay` is not (it was no event before it was scheduled, and the
        // deadlock watchdog counts cycles without progress the same way as then).
        let mut any = !arrivals[slot].is_empty() || !credits[slot].is_empty();
        arrivals[slot].clear();
        credits[slot].clear();
        let mut due = std::mem::take(&mut events[slot]);
        for &event in &due {
            let vc = event as u32;
            if event >> 32 == RESUME {
                transit[vc as usize] -= HELD;
            } else {
                any = true;
                self.end_grant(vc);
            }
        }
        due.clear();
        timing.events[slot] = due;
        self.timing = Some(timing);
        any
    }
}
