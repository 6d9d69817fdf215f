//! The cycle-driven wormhole engine.
//!
//! State is struct-of-arrays indexed by integer ids: virtual channel `vc` is either a network
//! VC (`channel * V + v`, its buffer sits at the downstream router) or an injection VC
//! (`network_vcs + node * V + v`, holding the whole message at the source; fed flit by flit
//! with `injection: channel`, `source`). A VC belongs to
//! one message from the moment a header is granted it until the message's tail flit leaves its
//! buffer, so a buffer only ever holds flits of one message and is described by counters
//! (`vc_count` flits buffered, `vc_received` flits that entered) instead of flit objects.
//! Messages live in a slab with a free list; source queues are linked lists through the slab.
//! After warm-up nothing is allocated per cycle, per flit or per message.
//!
//! This file holds the state and its layout; the engine's phases are `impl Engine` blocks in
//! `engine/`: `build` sizes the state, `run` runs warm-up, window and drain and one cycle
//! (`step`), `generate`, `route` and `traverse` are the cycle's three phases, `deliver`
//! releases VCs and delivers messages.
//!
//! One cycle (`Engine::step`), in this order:
//! 1. traffic (`generate`): arrivals of this cycle get a free injection VC or join the source
//!    queue;
//! 2. routing (`route`): every header whose routing delay has passed requests an output VC (or
//!    the ejection port at its destination); blocked headers retry every cycle, oldest first
//!    (a retry that must fail, no VC having been released at its router since, is skipped);
//! 3. switch and link traversal (`traverse`), two-phase so that the order of channels does not
//!    matter: every active physical channel picks, round-robin, one of its VCs whose upstream
//!    buffer had a flit and whose own buffer had room at the start of the cycle; ejecting VCs
//!    hand one flit to their node; then all chosen flits move. A flit that arrives in a cycle
//!    leaves at the earliest in the next one, and a freed slot is seen upstream one cycle later
//!    (so a buffer depth of 2 sustains one flit per cycle per VC; depth 1 halves it).
//!
//! With `input_speedup = s` an input port (the VCs of one physical channel, whose buffers sit
//! at its downstream router, or the injection VCs of one node: VC `vc` belongs to port
//! `vc / V` either way) sends at most `s` flits per cycle. Ejection is accounted first (the
//! ejecting VCs in `ejecting` order each take a slot while one is left), then phase A gives
//! the remaining slots to outputs in `active` order: an output whose round-robin candidate's
//! port is full moves on to its next candidate. Unset, nothing is counted. With
//! `injection: channel` the same accounting caps a node's injection port at one flit per
//! cycle (its network ports at `s`, or unlimited), and its source feeds those VCs one flit per
//! cycle, one message at a time (`source`: chosen between 2 and 3, fed after 3).
//!
//! Multi-cycle links, credit loops and the router pipeline (`channel_latency`,
//! `credit_delay`, `switch_delay`, `vc_allocation_delay`) are the `timing` module: flits and
//! credits on their way are counted per VC and arrive through a timing wheel; `traverse` is
//! monomorphised on it (`T`), so one-cycle links schedule nothing.
//!
//! Only channels with an allocated VC (`active`) and VCs holding a routed-to-ejection message
//! (`ejecting`) are visited. `active` lists them in the order they became busy (a removed
//! channel's place taken by the last one); `active_bits` holds the same set as a bitmap by
//! channel id (kept in step by `set_busy`). Small networks walk `active` in phase A. Networks
//! of at least `BITMAP_VCS` VCs on existing links (64x64 tori with V = 2 and up) walk the bitmap
//! instead, in channel order, so that the per-channel and per-VC arrays (a channel's V VCs are
//! adjacent, and a channel's upstream channels are walked in step with it) are read front to
//! back rather than in insertion order, which at 65,536 nodes missed the caches on nearly
//! every access. The walk of `active` tests only the VCs that still have an upstream buffer
//! (`ch_feed`), not those draining after their message's tail (`build::walks_active`).
//! Results do not depend on the walk: walking the bitmap, each move carries its channel's
//! position in `active` (`moves`: `pos << 32 | vc`; walking `active`, its source buffer in
//! the high half instead, as its place in `moves` is its position), phase B updates the
//! flit counts in walk order (sums), and applies the order-dependent effects (a header
//! joining `pending`, whose order is the routing order and so the order of random draws; a
//! release, which reorders `active` and may inject a queued message) in `active` order,
//! directly when walking `active`, through the sorted `events` when walking the bitmap. Invariant (`check_invariants`): a channel is in
//! `active` iff its bit is set iff its `ch_busy` is non-zero. With an input speedup phase A's
//! order matters (port slots go first come, first served): it always walks `active`.
//! `traverse` is monomorphised on the walk (`ACTIVE`, `PORTS`, `BITMAP`, or `ALLOC`, the
//! separable switch allocator of `switch_allocator: islip` in `allocator`), so the unlimited
//! cases carry no port accounting. Nothing in a cycle is proportional to the network size:
//! the bitmap walk reads one word per 64 channels, traffic is drawn per arrival (`traffic`). Scouting and circuit switching change what happens in steps 2 and
//! 3 (a separate header, acknowledgements that gate the data, backtracking, teardown): that is
//! the `switching` module (`src/sim/engine/switching/`), reached through a few hooks marked `S`; each
//! cycle runs `step_with::<S>()`, monomorphised per technique, so the wormhole loop is as
//! before. Hypercube broadcasts (`broadcast`, `broadcast_fraction > 0`) hook into generation
//! (a broadcast's first copies), injection (a copy's start-up latency) and completion (a
//! delivered copy queues the next ones); with no broadcasts the hooks are one `None` test per
//! message.

use crate::scenario::Ejection;

use super::batch_means::Batches;
use super::divisor::Divisor;
use super::faults::FaultMap;
use super::lengths::Lengths;
use super::network::hop::{Candidate, Header};
use super::percentiles::Histogram;
use super::rng::Rng;
use super::routing::Router;
use super::sections::Sections;
use super::stats::Transient;
use super::throughput::Tracker;
use super::topology::Geometry;
use super::trace::Feed;
use super::traffic::Traffic;

mod allocator;
mod broadcast;
mod build;
mod deadlock;
mod deliver;
mod generate;
#[cfg(test)]
mod invariants;
mod packets;
mod radix;
mod reallocation;
mod replies;
mod route;
mod run;
mod source;
mod switching;
mod timing;

pub(crate) use replies::routed;
pub(crate) use timing::timed;
mod split;
mod traverse;
mod vc_allocator;

/// Whether `scenario`'s run uses the threads it is given (`split::eligible`); `false` for a
/// network that cannot be built.
pub(crate) fn uses_threads(scenario: &crate::scenario::Scenario) -> bool {
    Geometry::new(&scenario.topology).is_ok_and(|geometry| split::eligible(scenario, &geometry))
}

/// No message / no VC.
const NONE: u32 = u32::MAX;
/// `vc_out` value of a buffer whose message is being ejected at this node.
const EJECT: u32 = u32::MAX - 1;

/// How phase A of `traverse` walks the channels: `active` in order, the same with the port
/// accounting of an input speedup or an injection channel, or `active_bits` in channel order.
const ACTIVE: u8 = 0;
const PORTS: u8 = 1;
const BITMAP: u8 = 2;
/// Phase A is the separable switch allocator (`allocator`), not a walk.
const ALLOC: u8 = 3;
/// Networks with at least this many VCs on existing links walk the bitmap (`build::walk`).
const BITMAP_VCS: usize = 1 << 15;
/// Networks with at least this many VCs on existing links, which walk the bitmap, hint their
/// misses ahead (`Engine::prefetching`). Below it (the 256 x 256 torus at V = 2 has half as
/// many, about 50 MB of state) the state stays mostly in a 32 MB shared cache and the hints
/// only add instructions: the 64 x 64 torus ran 38% slower with them. Routing's hints run
/// from `BITMAP_VCS` up (`Engine::hints_routing`).
const PREFETCH_VCS: usize = 1 << 20;

/// Stores `item` in a slab (`items` with the free list `free` of reusable ids); returns its id.
fn slab_insert<T>(items: &mut Vec<T>, free: &mut Vec<u32>, item: T) -> u32 {
    match free.pop() {
        Some(id) => {
            items[id as usize] = item;
            id
        }
        None => {
            items.push(item);
            items.len() as u32 - 1
        }
    }
}

/// Whether `a` comes before `b` in round-robin order from `ptr`, all three ids below one
/// bound (or VC ids, wrapping): those from `ptr` up first, then those below it, each in
/// increasing order (what `(x - ptr) mod n` orders, without a division). The arbiters of
/// interleaved ejection and of the separable allocators.
#[inline(always)]
fn before(a: u32, b: u32, ptr: u32) -> bool {
    a.wrapping_sub(ptr) < b.wrapping_sub(ptr)
}

/// `x + 1`, or 0 at `bound`: a round-robin pointer moved past `x`.
#[inline(always)]
fn past(x: u32, bound: u32) -> u32 {
    if x + 1 >= bound { 0 } else { x + 1 }
}

/// How long to run and when to stop (resolved from `SimOptions`).
#[derive(Clone, Debug)]
pub(crate) struct RunPlan {
    pub(crate) warmup: u64,
    /// Measurement window length (fixed mode), or the initial batch budget (precision mode).
    pub(crate) cycles: u64,
    pub(crate) precision: Option<f64>,
    pub(crate) max_cycles: u64,
    pub(crate) deadlock_cycles: u64,
    pub(crate) batches: u64,
    /// Saturated when more messages than this wait in source queues.
    pub(crate) backlog_limit: u64,
    /// Seed of the fault map (`fault_rate > 0`); `None`: derived from the run seed.
    pub(crate) fault_seed: Option<u64>,

    /// Throughput mode: the source-queue capacity (`sim::throughput`); `None`: latency mode.
    pub(crate) source_queue_capacity: Option<u32>,
    /// Threads for phase A and phase B's counts of a large network (`split`); 1: none.
    pub(crate) threads: usize,
}

#[cfg(test)]
impl RunPlan {
    /// Test builds: a fixed window of `cycles` after `warmup`, 20 batches, no backlog limit,
    /// deadlock after 2,000 idle cycles, latency mode, the fault map from the run seed.
    pub(crate) fn fixed(warmup: u64, cycles: u64) -> RunPlan {
        RunPlan {
            warmup,
            cycles,
            precision: None,
            max_cycles: u64::MAX,
            deadlock_cycles: 2_000,
            batches: 20,
            backlog_limit: u64::MAX,
            fault_seed: None,
            source_queue_capacity: None,
            threads: 1,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    Ok,
    Saturated(String),
    Deadlock(String),
    /// Precision mode stopped at `max_cycles` short of its target (or measured nothing).
    Imprecise(String),
    /// The progress callback asked to stop (nothing is measured).
    Cancelled,
    /// A replayed trace could not go on (`sim::trace`): why.
    Failed(String),
}

/// A header waiting for an output VC.
#[derive(Clone, Copy, Debug)]
struct Pending {
    vc: u32,
    /// Where routing attempts are skipped (`Engine::releases`): the count of VC releases at
    /// its router when it last found no free VC there, or `UNBLOCKED`.
    blocked: u32,
    /// First cycle in which it may be routed (arrival + 1 + router delay).
    ready: u64,
}

impl Pending {
    /// A header in `vc` that may be routed from cycle `ready` on.
    fn new(vc: u32, ready: u64) -> Pending {
        Pending { vc, ready, blocked: UNBLOCKED }
    }
}

/// `Pending::blocked` of a header not known to be blocked.
const UNBLOCKED: u32 = u32::MAX;

/// One message in flight or in a source queue (slab record).
#[derive(Clone, Copy, Debug)]
struct Message {
    source: u32,
    dest: u32,
    length: u32,
    generated: u64,
    injected: u64,
    hops: u32,
    /// Routing state (Nbc's escape level).
    level: u32,
    /// Tie-break bits of a torus dimension-order route, or the dragonfly's intermediate group
    /// (see `network::hop::Header`).
    ties: u32,
    delivered: u32,
    /// Next message in the same source queue.
    next: u32,
    /// The VC whose buffer holds the header.
    head_vc: u32,
    /// Broadcast copies: the broadcast (`broadcast::Broadcasts` slab id) and the tree position
    /// the copy is sent over; `NONE` for a unicast.
    broadcast: u32,
    position: u32,
    /// A packet of a message split into several (`packets`): the message's record there;
    /// `NONE` for a message that is one packet.
    split: u32,
    /// Request-reply traffic (`replies`): a reply's first VC, the reply class's VCs being
    /// `vc_base..V` (its routing function's VC v is VC `vc_base + v`); 0 for a request or any
    /// other message.
    vc_base: u8,
    /// A reply: the one-way latency of the request it answers (its round trip is that plus
    /// its own); 0 for any other message.
    request_latency: u32,
    measured: bool,
}

impl Message {
    /// A message from `source` to `dest` generated in cycle `generated`, not yet queued or
    /// injected: the links and ids it does not have yet are `NONE` (not the 0 a default
    /// would give, which is a valid id), its counters 0; a broadcast copy, a packet or a reply
    /// sets its own fields on top.
    fn new(
        source: u32,
        dest: u32,
        ties: u32,
        length: u32,
        generated: u64,
        measured: bool,
    ) -> Message {
        Message {
            source,
            dest,
            length,
            generated,
            injected: 0,
            hops: 0,
            level: 0,
            ties,
            delivered: 0,
            next: NONE,
            head_vc: NONE,
            broadcast: NONE,
            position: 0,
            split: NONE,
            vc_base: 0,
            request_latency: 0,
            measured,
        }
    }

    /// What the routing function needs to know about the message.
    #[inline]
    fn header(&self) -> Header {
        Header { source: self.source, dest: self.dest, level: self.level, ties: self.ties }
    }
}

/// Counters over the measurement window (rates are derived in `stats::summarize`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Window {
    /// First cycle of the window.
    pub(crate) start: u64,
    /// First cycle after the window, once it has closed.
    pub(crate) end: Option<u64>,
    pub(crate) open: bool,
    /// Messages generated / delivered (any generation time) / flits delivered in the window.
    pub(crate) generated: u64,
    pub(crate) delivered: u64,
    pub(crate) delivered_flits: u64,
    /// Flit and header link traversals in the window.
    pub(crate) flit_hops: u64,
    pub(crate) header_hops: u64,
    /// Output VCs granted, of which not at the first attempt, and the cycles waited for them.
    pub(crate) hop_requests: u64,
    pub(crate) hops_blocked: u64,
    pub(crate) blocked_cycles: u64,
    /// Output VCs granted on an escape or deterministic VC.
    pub(crate) escape_hops: u64,
    /// Channel-cycles with v VCs allocated, v = 0..=V.
    pub(crate) busy_time: Vec<u64>,
    /// Flits that entered each network VC's buffer over its link (by VC id, so the hot loop
    /// needs no division; [`Window::channel_flits`] sums them per physical channel).
    pub(crate) vc_flits: Vec<u64>,
    /// Messages generated in the window (measured), and those not delivered yet.
    pub(crate) measured: u64,
    pub(crate) outstanding: u64,
    /// Sums over delivered measured messages.
    pub(crate) latency_sum: f64,
    pub(crate) network_sum: f64,
    pub(crate) wait_sum: f64,
    pub(crate) hops_sum: f64,
    /// Flits of the delivered measured messages (their lengths vary with the distribution).
    pub(crate) length_sum: f64,
    /// Messages and flits delivered to each node in the window (each message's flits counted
    /// at its delivery): the per-node spread of the accepted throughput in latency mode.
    pub(crate) node_messages: Vec<u64>,
    pub(crate) node_flits: Vec<u64>,
    /// Exact distributions over delivered measured messages (whole cycles): latency, network
    /// latency, source wait (`sim::percentiles`).
    pub(crate) latencies: Histogram,
    pub(crate) network_latencies: Histogram,
    pub(crate) source_waits: Histogram,
}

impl Window {
    /// Flits that crossed each physical channel (by channel slot), `v` VCs per channel.
    pub(crate) fn channel_flits(&self, v: u32) -> impl Iterator<Item = u64> + '_ {
        self.vc_flits.chunks(v.max(1) as usize).map(|vcs| vcs.iter().sum())
    }
}

/// The simulator state.
pub(crate) struct Engine {
    pub(crate) geometry: Geometry,
    router: Router,
    /// V, buffer depth, router delay and message length (the mean M) of the scenario.
    pub(crate) v: u32,
    /// `v` as a divisor (`sim::divisor`): a VC's channel or node and its index there.
    per_channel: Divisor,
    depth: u32,
    delay: u64,
    length: u32,
    /// Each unicast message's length (`sim::lengths`; broadcasts have fixed lengths M).
    lengths: Lengths,
    /// The ejection port: `Single` holds it for a whole message, `Interleaved` ejects one flit
    /// per node per cycle from any message routed to it (round-robin), `Unlimited` every
    /// routed message at one flit per cycle.
    ejection: Ejection,
    /// Interleaved ejection, per node: the VC id the round-robin considers first (one past the
    /// VC served last).
    eject_rr: Vec<u32>,
    /// Interleaved ejection, per node: the ejecting VC picked this cycle, or `NONE`.
    eject_pick: Vec<u32>,
    /// Interleaved ejection: nodes with a pick this cycle (reset after the cycle's ejection).
    eject_picked: Vec<u32>,
    /// Test builds: the most flits one node has ejected in a cycle (checked by the tests).
    #[cfg(test)]
    pub(crate) max_node_ejections: u32,
    /// Test builds: flits ejected by each node in the cycle `node_stamp` says.
    #[cfg(test)]
    node_check: Vec<u32>,
    #[cfg(test)]
    node_stamp: Vec<u64>,
    /// Flits one input port may send per cycle; `None`: unlimited (nothing counted).
    speedup: Option<u32>,
    /// `injection: channel`: a node's injection VCs share one flit per cycle (counted like an
    /// input speedup's ports, `PORTS`), the source router charges `router_delay`, and the
    /// ejection channel adds a cycle to every delivery.
    injection_channel: bool,
    /// Flits sent this cycle by each input port (index `vc / V`); used only with `speedup`.
    port_sent: Vec<u32>,
    /// Ports whose `port_sent` is non-zero (reset at the start of each traversal).
    port_touched: Vec<u32>,
    /// Ejecting VCs denied this cycle's flit by the input speedup (used only with `speedup`).
    eject_held: Vec<bool>,
    /// Test builds: the most flits one input port has sent in a cycle (checked by the tests).
    #[cfg(test)]
    pub(crate) max_port_flits: u32,
    /// Test builds: the most flits one node's injection VCs have sent in a cycle.
    #[cfg(test)]
    pub(crate) max_injection_flits: u32,
    /// Test builds: flits sent by each input port in the cycle `port_stamp` says.
    #[cfg(test)]
    port_check: Vec<u32>,
    #[cfg(test)]
    port_stamp: Vec<u64>,
    /// Number of network VCs; injection VCs follow them.
    network_vcs: u32,
    /// Bits 0..V set.
    full_mask: u64,

    // Per virtual channel (network VCs, then injection VCs).
    /// Message holding the VC, or `NONE`.
    vc_owner: Vec<u32>,
    /// Flits in the buffer (for an injection VC: flits not yet sent; with a source that feeds
    /// it, those fed and not yet sent).
    vc_count: Vec<u32>,
    /// Flits that have entered the buffer.
    vc_received: Vec<u32>,
    /// Output VC the buffer's flits go to, `EJECT`, or `NONE` while the header waits.
    vc_out: Vec<u32>,
    /// Buffer feeding this VC, or `NONE` once the tail has left it.
    vc_src: Vec<u32>,
    /// Per network VC, wherever phase A does not walk the bitmap (`build::vc_lengths`; empty
    /// otherwise): the length of the message last granted the VC (`grant_output`), which is
    /// the message every flit moving into it belongs to (with `tail_sent` reallocation too:
    /// the VC is granted again only once the tail has left for it), so that phase B finds
    /// whether a move took a message's tail without going through `vc_owner` and the message
    /// record, two loads on the move's chain.
    vc_length: Vec<u32>,

    // Per physical channel.
    /// Bit v set while VC v is allocated.
    ch_busy: Vec<u64>,
    /// Bit v set while VC v has an upstream buffer feeding it (`vc_src` not `NONE`): the
    /// VCs phase A tests where it is the greedy walk of `active` (`build::walks_active`;
    /// empty otherwise). A VC stays allocated (`ch_busy`) after its message's tail has
    /// entered it, until its buffer drains; visiting it then costs a test that a branch
    /// predictor often gets wrong (the 8 x 8 torus of `runner bench`: 3.4 such visits a
    /// cycle for 41.6 moves).
    ch_feed: Vec<u64>,
    /// Round-robin pointer: the VC to consider first.
    ch_rr: Vec<u32>,
    /// Cycle since which `ch_busy` has held its population count (for P_v).
    ch_since: Vec<u64>,
    /// Position in `active`, or `NONE`.
    ch_pos: Vec<u32>,
    /// Channels with at least one allocated VC, in the order they became busy (a removed
    /// channel's place taken by the last one): the order whose positions (`ch_pos`) rank the
    /// side effects of a cycle's flit moves (see `traverse`).
    active: Vec<u32>,
    /// The same set as a bitmap by channel id (bit `c % 64` of word `c / 64`): phase A walks
    /// it in channel order, so the per-channel and per-VC arrays are read front to back.
    active_bits: Vec<u64>,
    /// How phase A goes over the channels (`ACTIVE`, `PORTS`, `BITMAP` or `ALLOC`;
    /// `build::walk`). `BITMAP` on large networks with no ports counted: their per-channel and
    /// per-VC arrays no longer fit in the caches, and memory order beats `active` order. A
    /// small network's state stays cached, and the walk in `active` order costs fewer
    /// instructions.
    walk: u8,
    /// The passes of a cycle hint the cache lines they will read a few steps ahead (`prefetch`):
    /// a network that walks the bitmap with at least `PREFETCH_VCS` VCs, whose state is far
    /// beyond the caches.
    prefetching: bool,
    /// Routing hints the lines of the headers ahead (`route::hint_headers`): every network
    /// that walks the bitmap (at least `BITMAP_VCS` VCs), a wider set than `prefetching`'s.
    /// Routing's misses (the message record, the router's busy bits) are scattered over the
    /// whole state even where most of it stays in the shared cache, and a network of short
    /// messages routes often (the p = 8 dragonfly, 192 Ki VCs, about 10% faster with them);
    /// on the tori from 64 x 64 up they changed nothing measurable.
    hints_routing: bool,
    /// The threads that walk the bitmap and count the moves' flits by ranges of channels
    /// (`plan.threads > 1` on a network that walks the bitmap; `split`).
    split: Option<Box<split::Split>>,

    // Per node.
    /// Source queue (linked through `Message::next`).
    queue_head: Vec<u32>,
    queue_tail: Vec<u32>,
    /// Bit v set while injection VC v is in use.
    inj_busy: Vec<u64>,
    /// Single ejection: the port is taken.
    eject_busy: Vec<bool>,

    /// VCs whose message is being handed to its destination node.
    ejecting: Vec<u32>,
    /// Headers waiting for an output VC, oldest first.
    pending: Vec<Pending>,
    /// Output VCs receiving a flit this cycle (phase A to phase B): `pos << 32 | vc`, `pos`
    /// the position of the VC's channel in `active` at the start of the cycle where phase A
    /// walked the bitmap. Walked in `active` order the moves are in that order, and the greedy
    /// walk puts the VC's source buffer in the high half instead (the separable allocator, 0).
    /// One slot per channel (a channel moves at most one flit per cycle); this cycle's are
    /// the first `n_moves`.
    moves: Vec<u64>,
    n_moves: usize,
    /// Phase B's order-dependent effects (a header's arrival, a buffer's release) as
    /// `(pos << 1 | kind) << 32 | VC`, applied in `active` order once the flit counts are
    /// updated. Room for two per move; `apply` counts this cycle's, the rest is scratch.
    events: Vec<u64>,
    /// The radix sort's space for the events and its buckets (`radix`), where phase A walks
    /// the bitmap.
    events_scratch: Vec<u64>,
    event_counts: Vec<u32>,
    /// Scratch space for the routing function.
    candidates: Vec<Candidate>,

    /// Message slab and its free list.
    messages: Vec<Message>,
    free: Vec<u32>,

    rng: Rng,
    traffic: Traffic,
    /// Static node faults (`fault_rate > 0`), shared with the traffic pattern.
    pub(crate) faults: Option<std::sync::Arc<FaultMap>>,

    pub(crate) now: u64,
    /// Messages in source queues / holding an injection or network VC.
    queued: u64,
    in_network: u64,
    /// Last cycle in which a flit moved (watchdog).
    last_move: u64,
    pub(crate) flit_hops: u64,
    pub(crate) delivered_total: u64,
    pub(crate) generated_total: u64,
    /// Fixed end of the window (fixed mode).
    fixed_end: Option<u64>,
    /// Saturated when more messages than this wait in source queues.
    backlog_limit: u64,
    /// Precision mode: the window closed at `max_cycles` (second), short of the target (first).
    stopped_short: Option<(f64, u64)>,
    /// Precision mode: the window length of the next look at the interval, planned at the
    /// last (`run::Engine::planned_looks`); `None` before the first look.
    pub(crate) planned_window: Option<u64>,
    pub(crate) batches: Batches,
    /// Latency histograms per section of the window, for the percentiles' intervals.
    pub(crate) sections: Sections,
    /// Every delivered message's latency by generation time from cycle 0, for the MSER
    /// truncation point (`stats::Transient`).
    pub(crate) transient: Transient,
    pub(crate) window: Window,
    /// The switching technique (`switching`): its kind and the separate header's state.
    pub(crate) switching: switching::State,

    /// Multi-cycle links and the credit loop (`timing`); `None` with one-cycle links and
    /// credits, the default, which schedules nothing.
    timing: Option<Box<timing::Timing>>,
    /// `injection: channel`: the sources that send one message at a time, feeding the
    /// router's local port flit by flit where the nodes are routers (`source`); `None` with
    /// the parallel source.
    source: Option<Box<source::Source>>,
    /// `vc_reallocation: tail_sent`: the messages queued behind each buffer's front one
    /// (`reallocation`); `None` by default (a buffer holds one message). Implies `timing`.
    queues: Option<Box<reallocation::Queues>>,
    /// `switch_allocator: islip`: the separable allocator that replaces phase A's walk
    /// (`allocator`); `None` by default.
    allocator: Option<Box<allocator::Allocator>>,
    /// `vc_allocator: islip`: the separable VC allocator that replaces the routing phase's
    /// one-by-one grants (`vc_allocator`); `None` by default.
    vc_allocator: Option<Box<vc_allocator::Separable>>,
    /// `packet_size`: the messages split into packets (`packets`); `None` when unset (a
    /// message is one packet).
    packets: Option<Box<packets::Packets>>,
    /// Virtual cut-through with `tail_sent` reallocation: a header is granted only a VC whose
    /// buffer has room for its whole packet (`Engine::keep_room_for`). With `drained` a free
    /// VC's buffer is empty, and `check` asks for buffers a packet deep, so nothing is tested.
    cut_through_room: bool,
    /// Per router (terminals included): the VCs of its channels released so far, wrapping,
    /// where routing skips the retries that must fail (`route`); empty where it does not.
    /// 32 bits are exact: a header skipped at count `c` retries the cycle after any release,
    /// and no router releases 2^32 VCs in one cycle.
    pub(crate) releases: Vec<u32>,
    /// Request-reply traffic (`reply_length`): the reply class, the outstanding requests and
    /// the round trips (`replies`); `None` for one-way traffic.
    pub(crate) replies: Option<Box<replies::Replies>>,
    /// The candidates of a header are filtered after the routing function (`faults`,
    /// `cut_through_room`, or a reply's VC class): one test per routing attempt for all.
    filter_candidates: bool,
    /// Throughput mode's source-queue cap and per-node counters; `None` in latency mode.
    pub(crate) throughput: Option<Tracker>,
    /// Hypercube broadcasts (`broadcast_fraction > 0`); `None` for unicast traffic.
    pub(crate) broadcasts: Option<Box<broadcast::Broadcasts>>,
    /// Trace replay (`sim::trace`): the records replace the generated traffic; `None` else.
    trace: Option<Box<Feed>>,
    /// Why the replay stopped the run (a bad record, or a trace that ends in the warm-up).
    pub(crate) trace_error: Option<String>,
    /// Cycles of warm-up (the replay refuses a trace that ends within them).
    warmup: u64,
}

impl Engine {
    /// Whether network VC `vc`'s buffer sits at a terminal that is not a router (the last hop
    /// of a dragonfly's, a tree's or a graph's route).
    #[inline]
    fn buffer_at_terminal(&self, vc: u32) -> bool {
        vc < self.network_vcs
            && !self.geometry.nodes_are_routers()
            && self.geometry.downstream(self.per_channel.div(vc)) < self.geometry.nodes
    }

    /// The router a VC's buffer sits at.
    #[inline]
    fn node_of(&self, vc: u32) -> u32 {
        if vc < self.network_vcs {
            self.geometry.downstream(self.per_channel.div(vc))
        } else {
            self.per_channel.div(vc - self.network_vcs)
        }
    }
}
