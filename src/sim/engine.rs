//! The cycle-driven wormhole engine.
//!
//! State is struct-of-arrays indexed by integer ids: virtual channel `vc` is either a network
//! VC (`channel * V + v`, its buffer sits at the downstream router) or an injection VC
//! (`network_vcs + node * V + v`, holding the whole message at the source). A VC belongs to
//! one message from the moment a header is granted it until the message's tail flit leaves its
//! buffer, so a buffer only ever holds flits of one message and is described by counters
//! (`vc_count` flits buffered, `vc_received` flits that entered) instead of flit objects.
//! Messages live in a slab with a free list; source queues are linked lists through the slab.
//! After warm-up nothing is allocated per cycle, per flit or per message.
//!
//! One cycle (`Engine::step`), in this order:
//! 1. traffic: arrivals of this cycle get a free injection VC or join the source queue;
//! 2. routing: every header whose routing delay has passed requests an output VC (or the
//!    ejection port at its destination); blocked headers retry every cycle, oldest first;
//! 3. switch and link traversal, two-phase so that the order of channels does not matter:
//!    every active physical channel picks, round-robin, one of its VCs whose upstream buffer
//!    had a flit and whose own buffer had room at the start of the cycle; ejecting VCs hand one
//!    flit to their node; then all chosen flits move. A flit that arrives in a cycle leaves at
//!    the earliest in the next one, and a freed slot is seen upstream one cycle later (so a
//!    buffer depth of 2 sustains one flit per cycle per VC; depth 1 halves it).
//!
//! With `input_speedup = s` an input port (the VCs of one physical channel, whose buffers sit
//! at its downstream router, or the injection VCs of one node: VC `vc` belongs to port
//! `vc / V` either way) sends at most `s` flits per cycle. Ejection is accounted first (the
//! ejecting VCs in `ejecting` order each take a slot while one is left), then phase A gives
//! the remaining slots to outputs in `active` order: an output whose round-robin candidate's
//! port is full moves on to its next candidate. Unset, nothing is counted.
//!
//! Only channels with an allocated VC (`active`) and VCs holding a routed-to-ejection message
//! (`ejecting`) are visited. `active` lists them in the order they became busy (a removed
//! channel's place taken by the last one); `active_bits` holds the same set as a bitmap by
//! channel id (kept in step by `set_busy`). Small networks walk `active` in phase A. Networks
//! of at least `BITMAP_VCS` network VCs (64x64 tori with V = 2 and up) walk the bitmap
//! instead, in channel order, so that the per-channel and per-VC arrays (a channel's V VCs are
//! adjacent, and a channel's upstream channels are walked in step with it) are read front to
//! back rather than in insertion order, which at 65,536 nodes missed the caches on nearly
//! every access. Results do not depend on the walk: each move carries its channel's position
//! in `active` (`moves`: `pos << 32 | vc`), phase B updates the flit counts in walk order
//! (sums), and applies the order-dependent effects (a header joining `pending`, whose order is
//! the routing order and so the order of random draws; a release, which reorders `active` and
//! may inject a queued message) in `active` order, directly when walking `active`, through the
//! sorted `events` when walking the bitmap. Invariant (`check_invariants`): a channel is in
//! `active` iff its bit is set iff its `ch_busy` is non-zero. With an input speedup phase A's
//! order matters (port slots go first come, first served): it always walks `active`.
//! `traverse` is monomorphised on the walk (`ACTIVE`, `PORTS`, `BITMAP`), so the unlimited
//! cases carry no port accounting. Nothing in a cycle is proportional to the network size:
//! the bitmap walk reads one word per 64 channels, traffic is drawn per arrival (`traffic`). Scouting and circuit switching change what happens in steps 2 and
//! 3 (a separate header, acknowledgements that gate the data, backtracking, teardown): that is
//! the `switching` module (`src/sim/engine/switching/`), reached through a few hooks marked `S`; each
//! cycle runs `step_with::<S>()`, monomorphised per technique, so the wormhole loop is as
//! before. Hypercube broadcasts (`broadcast`, `broadcast_fraction > 0`) hook into generation
//! (a broadcast's first copies), injection (a copy's start-up latency) and completion (a
//! delivered copy queues the next ones); with no broadcasts the hooks are one `None` test per
//! message.

use crate::scenario::{Ejection, Scenario};

use super::faults::FaultMap;
use super::lengths::Lengths;
use super::network::hop::{Candidate, Header, NO_LINK};
use super::percentiles::Histogram;
use super::routing::Router;
use super::stats::{Batches, TRANSIENT_BINS, Transient};
use super::throughput::Tracker;
use super::topology::Geometry;
use super::trace::Feed;
use super::traffic::{Pattern, Traffic};
use super::{SimError, rng::Rng};

mod broadcast;
mod deadlock;
#[cfg(test)]
mod invariants;
mod switching;

use switching::{CIRCUIT, SCOUTING, WORMHOLE};

/// No message / no VC.
const NONE: u32 = u32::MAX;
/// `vc_out` value of a buffer whose message is being ejected at this node.
const EJECT: u32 = u32::MAX - 1;

/// How phase A of `traverse` walks the channels: `active` in order, the same with an input
/// speedup's port accounting, or `active_bits` in channel order.
const ACTIVE: u8 = 0;
const PORTS: u8 = 1;
const BITMAP: u8 = 2;
/// Networks with at least this many network VCs walk the bitmap (`Engine::walk_bitmap`).
const BITMAP_VCS: usize = 1 << 15;

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
    /// First cycle in which it may be routed (arrival + 1 + router delay).
    ready: u64,
}

/// One message in flight or in a source queue (slab record).
#[derive(Clone, Copy, Debug, Default)]
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
    measured: bool,
}

impl Message {
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
    /// Flits sent this cycle by each input port (index `vc / V`); used only with `speedup`.
    port_sent: Vec<u32>,
    /// Ports whose `port_sent` is non-zero (reset at the start of each traversal).
    port_touched: Vec<u32>,
    /// Ejecting VCs denied this cycle's flit by the input speedup (used only with `speedup`).
    eject_held: Vec<bool>,
    /// Test builds: the most flits one input port has sent in a cycle (checked by the tests).
    #[cfg(test)]
    pub(crate) max_port_flits: u32,
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
    /// Flits in the buffer (for an injection VC: flits not yet sent).
    vc_count: Vec<u32>,
    /// Flits that have entered the buffer.
    vc_received: Vec<u32>,
    /// Output VC the buffer's flits go to, `EJECT`, or `NONE` while the header waits.
    vc_out: Vec<u32>,
    /// Buffer feeding this VC, or `NONE` once the tail has left it.
    vc_src: Vec<u32>,

    // Per physical channel.
    /// Bit v set while VC v is allocated.
    ch_busy: Vec<u64>,
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
    /// Phase A walks `active_bits` (large networks, no input speedup): the per-channel and
    /// per-VC arrays no longer fit in the caches, and memory order beats `active` order. A
    /// small network's state stays cached, and the walk in `active` order costs fewer
    /// instructions.
    walk_bitmap: bool,

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
    /// the position of the VC's channel in `active` at the start of the cycle (0 unless phase
    /// A walked the bitmap: walked in `active` order, the moves are in that order). One slot
    /// per channel (a channel moves at most one flit per cycle); this cycle's are the first
    /// `n_moves`.
    moves: Vec<u64>,
    n_moves: usize,
    /// Phase B's order-dependent effects (a header's arrival, a buffer's release) as
    /// (`pos << 1 | kind`, VC), applied in `active` order once the flit counts are updated.
    events: Vec<(u64, u32)>,
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
    pub(crate) batches: Batches,
    /// Every delivered message's latency by generation time from cycle 0, for the MSER
    /// truncation point (`stats::Transient`).
    pub(crate) transient: Transient,
    pub(crate) window: Window,
    /// The switching technique (`switching`): its kind and the separate header's state.
    pub(crate) switching: switching::State,

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
    /// Builds the network for a scenario accepted by `check`.
    pub(crate) fn new(
        scenario: &Scenario,
        rate: f64,
        seed: u64,
        plan: &RunPlan,
    ) -> Result<Engine, SimError> {
        let geometry = Geometry::new(&scenario.topology)?;
        let router = Router::new(scenario, &geometry.size)?;
        let v = scenario.virtual_channels;
        let slots = geometry.channel_slots();
        let nodes = geometry.nodes as usize;
        let network_vcs = slots * v as usize;
        let total_vcs = network_vcs + nodes * v as usize;
        if total_vcs >= (EJECT - 1) as usize {
            return Err(SimError(format!(
                "network too large for the simulator: {total_vcs} virtual channels"
            )));
        }
        let mut rng = Rng::new(seed);
        let faults = FaultMap::for_run(&geometry, scenario.fault_rate, plan.fault_seed, seed)?;
        let pattern = match &faults {
            Some(map) => Pattern::Served(map.clone()),
            None => Pattern::new(&scenario.traffic, &geometry)?,
        };
        let traffic = Traffic::new(geometry.nodes, rate, pattern, &mut rng).with_process(
            scenario.injection_process,
            rate,
            &mut rng,
        );
        let (fixed_end, batch_length) = match plan.precision {
            None => {
                (Some(plan.warmup.saturating_add(plan.cycles)), plan.cycles.div_ceil(plan.batches))
            }
            Some(_) => (None, (plan.cycles / plan.batches).max(1)),
        };
        let batch_cap = match plan.precision {
            None => plan.batches as usize,
            Some(_) => 2 * plan.batches.max(16) as usize,
        };
        let switching =
            switching::State::new(scenario, network_vcs, total_vcs, geometry.size.diameter);
        Ok(Engine {
            router,
            v,
            depth: scenario.buffer_depth,
            delay: u64::from(scenario.router_delay),
            length: scenario.message_length,
            lengths: Lengths::new(scenario),
            ejection: scenario.ejection,
            eject_rr: if scenario.ejection == Ejection::Interleaved {
                vec![0; nodes]
            } else {
                vec![]
            },
            eject_pick: if scenario.ejection == Ejection::Interleaved {
                vec![NONE; nodes]
            } else {
                vec![]
            },
            eject_picked: Vec::with_capacity(if scenario.ejection == Ejection::Interleaved {
                nodes
            } else {
                0
            }),
            #[cfg(test)]
            max_node_ejections: 0,
            #[cfg(test)]
            node_check: vec![0; nodes],
            #[cfg(test)]
            node_stamp: vec![u64::MAX; nodes],
            speedup: scenario.input_speedup,
            port_sent: if scenario.input_speedup.is_some() {
                vec![0; slots + nodes]
            } else {
                vec![]
            },
            port_touched: Vec::with_capacity(if scenario.input_speedup.is_some() {
                slots + nodes
            } else {
                0
            }),
            eject_held: if scenario.input_speedup.is_some() {
                vec![false; total_vcs]
            } else {
                vec![]
            },
            #[cfg(test)]
            max_port_flits: 0,
            #[cfg(test)]
            port_check: vec![0; slots + nodes],
            #[cfg(test)]
            port_stamp: vec![u64::MAX; slots + nodes],
            network_vcs: network_vcs as u32,
            full_mask: if v == 64 { u64::MAX } else { (1 << v) - 1 },
            vc_owner: vec![NONE; total_vcs],
            vc_count: vec![0; total_vcs],
            vc_received: vec![0; total_vcs],
            vc_out: vec![NONE; total_vcs],
            vc_src: vec![NONE; total_vcs],
            ch_busy: vec![0; slots],
            ch_rr: vec![0; slots],
            ch_since: vec![0; slots],
            ch_pos: vec![NONE; slots],
            active: Vec::with_capacity(slots),
            active_bits: vec![0; slots.div_ceil(64)],
            walk_bitmap: network_vcs >= BITMAP_VCS,
            queue_head: vec![NONE; nodes],
            queue_tail: vec![NONE; nodes],
            inj_busy: vec![0; nodes],
            eject_busy: vec![false; nodes],
            ejecting: Vec::with_capacity(nodes),
            pending: Vec::with_capacity(nodes * 4),
            moves: vec![0; slots],
            n_moves: 0,
            events: Vec::with_capacity(slots),
            candidates: Vec::with_capacity(2 * geometry.ports as usize),
            messages: Vec::with_capacity(nodes * 8),
            free: Vec::with_capacity(nodes * 8),
            rng,
            traffic,
            faults,
            now: 0,
            queued: 0,
            in_network: 0,
            last_move: 0,
            flit_hops: 0,
            delivered_total: 0,
            generated_total: 0,
            fixed_end,
            backlog_limit: plan.backlog_limit,
            stopped_short: None,
            batches: Batches::new(batch_length, batch_cap),
            transient: Transient::new(
                plan.warmup.saturating_add(plan.cycles) / TRANSIENT_BINS,
                2 * TRANSIENT_BINS as usize,
            ),
            window: Window {
                busy_time: vec![0; v as usize + 1],
                vc_flits: vec![0; slots * v as usize],
                node_messages: vec![0; nodes],
                node_flits: vec![0; nodes],
                latencies: Histogram::new(),
                network_latencies: Histogram::new(),
                source_waits: Histogram::new(),
                ..Window::default()
            },
            throughput: plan.source_queue_capacity.map(|c| Tracker::new(nodes, c)),
            broadcasts: broadcast::Broadcasts::new(scenario, geometry.size.dims, geometry.nodes),
            trace: None,
            trace_error: None,
            warmup: plan.warmup,
            geometry,
            switching,
        })
    }

    /// Test builds: phase A walks the bitmap (or `active`) whatever the network's size.
    #[cfg(test)]
    pub(crate) fn with_bitmap_walk(mut self, on: bool) -> Engine {
        self.walk_bitmap = on;
        self
    }

    /// Replays `feed` instead of generating traffic (the engine was built at rate 0).
    pub(crate) fn with_trace(mut self, feed: Feed) -> Engine {
        self.trace = Some(Box::new(feed));
        self
    }

    /// Runs warm-up, window and drain; `progress` is called every 4096 cycles.
    pub(crate) fn run(&mut self, plan: &RunPlan, progress: Option<super::Progress<'_>>) -> Outcome {
        let outcome = self.run_until_stop(plan, progress);
        if self.window.open {
            // Stopped early: account the channel occupancy up to now.
            self.close_window();
        }
        outcome
    }

    fn run_until_stop(&mut self, plan: &RunPlan, progress: Option<super::Progress<'_>>) -> Outcome {
        let planned = match plan.precision {
            None => plan.warmup.saturating_add(plan.cycles),
            Some(_) => plan.max_cycles.max(plan.warmup.saturating_add(1)),
        };
        loop {
            let now = self.now;
            if now == plan.warmup && !self.window.open && self.window.end.is_none() {
                self.open_window();
            }
            if self.window.open {
                let elapsed = now - self.window.start;
                let close = match (self.fixed_end, plan.precision) {
                    (Some(end), _) => now >= end,
                    (None, Some(target)) => {
                        let precise = elapsed > 0
                            && elapsed.is_multiple_of(self.batches.length())
                            && self.precise_enough(elapsed, target, plan);
                        if now >= planned && !precise {
                            self.stopped_short = Some((target, planned));
                        }
                        precise || now >= planned
                    }
                    (None, None) => now >= planned,
                };
                if close {
                    self.close_window();
                    let w = &self.window;
                    // Throughput mode: the messages dropped at full source queues were offered.
                    let dropped = self.throughput.as_ref().map_or(0, |t| t.window_drops);
                    let offered = w.generated + dropped;
                    let deficit = offered.saturating_sub(w.delivered);
                    if deficit as f64 > 0.02 * offered as f64
                        && deficit > 5 * u64::from(self.geometry.nodes)
                    {
                        let detail = match &self.throughput {
                            None => format!(
                                "the network accepted {} of the {} messages generated in the \
                                 measurement window",
                                w.delivered, w.generated
                            ),
                            Some(t) => t.shortfall_detail(w.generated, w.delivered, elapsed),
                        };
                        return self.saturated_unless_deadlocked(detail);
                    }
                }
            }
            if let Some(end) = self.window.end {
                if self.window.outstanding == 0 && self.broadcasts_outstanding() == 0 {
                    return self.verdict();
                }
                let drain_limit = (end - self.window.start).max(50_000);
                if now - end >= drain_limit {
                    let detail = format!(
                        "{} messages generated in the measurement window were still undelivered \
                         {drain_limit} cycles after it ended",
                        self.window.outstanding + self.broadcasts_outstanding()
                    );
                    return self.saturated_unless_deadlocked(detail);
                }
            }
            let moved = self.step();
            if let Some(error) = &self.trace_error {
                return Outcome::Failed(error.clone());
            }
            if moved {
                self.last_move = now;
            } else if self.in_network > 0 && now - self.last_move >= plan.deadlock_cycles {
                let idle = now - self.last_move;
                let detail = match self.describe_deadlock() {
                    Some(cycle) => format!("no flit moved for {idle} cycles: {cycle}"),
                    None => format!(
                        "no flit moved for {idle} cycles with {} messages in the network",
                        self.in_network
                    ),
                };
                return Outcome::Deadlock(detail);
            }
            if self.queued > self.backlog_limit {
                let detail = format!(
                    "source queues grew to {} messages ({:.1} per node) by cycle {}: the offered \
                     load exceeds what the network accepts",
                    self.queued,
                    self.queued as f64 / f64::from(self.geometry.nodes),
                    self.now
                );
                return self.saturated_unless_deadlocked(detail);
            }
            if let Some(report) = progress
                && self.now.is_multiple_of(4096)
                && report(self.now.min(planned), planned).is_break()
            {
                return Outcome::Cancelled;
            }
        }
    }

    /// The verdict once every message of the window is delivered: `Ok` unless the latency
    /// batch means grow steadily with generation time (the source backlog grows: the run
    /// is unstable, whatever its absolute backlog).
    fn verdict(&self) -> Outcome {
        match self.batches.trend(self.batches.len()) {
            Some(trend) if trend.unstable() => Outcome::Saturated(format!(
                "the latency grew steadily over the measurement window, from {:.0} to {:.0} \
                 cycles ({:.3} cycles per cycle, t = {:.1}): the source queues keep growing, \
                 the offered load exceeds what the network accepts",
                trend.first, trend.last, trend.slope, trend.t
            )),
            _ => match self.stopped_short {
                Some((target, max_cycles)) => {
                    let reached = match self.batches.confidence(self.batches.len()) {
                        Some((mean, half, _)) if mean > 0.0 => format!(
                            "the 95% half-width was {:.2}% of the mean latency",
                            100.0 * half / mean
                        ),
                        _ => "fewer than 2 batches held a delivered message".to_string(),
                    };
                    Outcome::Imprecise(format!(
                        "stopped at max_cycles = {max_cycles} short of target_precision \
                         {target}: {reached}"
                    ))
                }
                None => Outcome::Ok,
            },
        }
    }

    /// Precision mode's stopping rule: at least `plan.cycles` measured, at least
    /// `plan.batches` complete batches holding a message, and a 95% half-width of at most
    /// `target` times the mean. The minimum window keeps a lucky early run of small batch
    /// means from stopping a heavily loaded point after a few correlated batches.
    fn precise_enough(&self, elapsed: u64, target: f64, plan: &RunPlan) -> bool {
        if elapsed < plan.cycles {
            return false;
        }
        let complete = self.batches.complete(elapsed);
        match self.batches.confidence(complete) {
            Some((mean, half, used)) => used as u64 >= plan.batches && half <= target * mean,
            None => false,
        }
    }

    /// Starts the measurement window at the current cycle.
    pub(crate) fn open_window(&mut self) {
        self.window.open = true;
        self.window.start = self.now;
        self.ch_since.fill(self.now);
        self.count_ejections_in_progress(true);
    }

    /// Throughput mode: tells the tracker how far the ejections in progress are when the window
    /// opens or closes (per-node flit counts without per-flit work).
    fn count_ejections_in_progress(&mut self, opening: bool) {
        if let Some(t) = &mut self.throughput {
            for &vc in &self.ejecting {
                let message = &self.messages[self.vc_owner[vc as usize] as usize];
                t.ejection_in_progress(message.dest, message.delivered, opening);
            }
        }
    }

    fn close_window(&mut self) {
        let now = self.now;
        for ch in 0..self.ch_busy.len() {
            if self.geometry.downstream(ch as u32) != NO_LINK {
                let busy = self.ch_busy[ch].count_ones() as usize;
                self.window.busy_time[busy] += now - self.ch_since[ch];
            }
        }
        self.count_ejections_in_progress(false);
        self.window.open = false;
        self.window.end = Some(now);
    }

    /// Simulates one cycle; returns whether any flit moved (or, with a separate header, the
    /// header moved or an acknowledgement, teardown or back-off is under way).
    pub(crate) fn step(&mut self) -> bool {
        match self.switching.kind {
            WORMHOLE => self.step_with::<WORMHOLE>(),
            SCOUTING => self.step_with::<SCOUTING>(),
            _ => self.step_with::<CIRCUIT>(),
        }
    }

    /// One cycle of switching technique `S` (monomorphised: the wormhole loop has no trace of
    /// the others).
    fn step_with<const S: u8>(&mut self) -> bool {
        self.generate();
        self.route::<S>();
        let mut moved = match (self.speedup.is_some(), self.walk_bitmap) {
            (true, _) => self.traverse::<S, PORTS>(),
            (false, true) => self.traverse::<S, BITMAP>(),
            (false, false) => self.traverse::<S, ACTIVE>(),
        };
        if S != WORMHOLE {
            moved |=
                std::mem::take(&mut self.switching.moved) || self.switching.busy_until > self.now;
        }
        self.now += 1;
        moved
    }

    fn generate(&mut self) {
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
        let id = self.allocate(Message {
            source,
            dest,
            ties,
            length,
            generated: now,
            next: NONE,
            head_vc: NONE,
            broadcast: NONE,
            measured,
            ..Message::default()
        });
        self.enqueue(source, id, now);
    }

    /// Stores a message record in the slab; returns its id.
    fn allocate(&mut self, record: Message) -> u32 {
        slab_insert(&mut self.messages, &mut self.free, record)
    }

    /// Message `id`, created at `node` in cycle `at`, takes a free injection VC or joins the
    /// node's source queue.
    fn enqueue(&mut self, node: u32, id: u32, at: u64) {
        let n = node as usize;
        let free_vcs = !self.inj_busy[n] & self.full_mask;
        if free_vcs != 0 && self.queue_head[n] == NONE {
            self.inject(node, free_vcs.trailing_zeros(), id, at);
        } else {
            match self.queue_tail[n] {
                NONE => self.queue_head[n] = id,
                tail => self.messages[tail as usize].next = id,
            }
            self.queue_tail[n] = id;
            self.queued += 1;
            if let Some(t) = &mut self.throughput {
                t.enqueued(node);
            }
        }
    }

    /// Puts message `id` into injection VC `v` of `node`; its header may route at `at`.
    fn inject(&mut self, node: u32, v: u32, id: u32, at: u64) {
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
        let message = &mut self.messages[id as usize];
        message.injected = at;
        message.head_vc = vc;
        let broadcast = message.broadcast;
        let mut ready = at;
        if broadcast != NONE {
            // A broadcast copy: the send's start-up (Delta) before the header may route.
            ready += self.broadcasts.as_ref().map_or(0, |b| b.startup);
            self.copy_started(broadcast, at);
        }
        self.pending.push(Pending { vc, ready });
        if self.in_network == 0 {
            // The watchdog measures idle time while messages are in the network only.
            self.last_move = self.now;
        }
        self.in_network += 1;
    }

    /// The router a VC's buffer sits at.
    #[inline]
    fn node_of(&self, vc: u32) -> u32 {
        if vc < self.network_vcs {
            self.geometry.downstream(vc / self.v)
        } else {
            (vc - self.network_vcs) / self.v
        }
    }

    fn route<const S: u8>(&mut self) {
        let mut keep = 0;
        let listed = self.pending.len();
        for i in 0..listed {
            let mut p = self.pending[i];
            if p.ready <= self.now {
                if S == WORMHOLE {
                    if self.try_route::<S>(p) {
                        continue;
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

    /// Tries to give the header in `p.vc` an output VC; true on success.
    fn try_route<const S: u8>(&mut self, p: Pending) -> bool {
        let vc = p.vc;
        let id = self.vc_owner[vc as usize];
        let message = self.messages[id as usize];
        let cur = self.node_of(vc);
        if cur == message.dest {
            if self.ejection == Ejection::Single {
                if self.eject_busy[cur as usize] {
                    return false;
                }
                self.eject_busy[cur as usize] = true;
            }
            self.vc_out[vc as usize] = EJECT;
            self.ejecting.push(vc);
            return true;
        }
        let mut header = message.header();
        if self.router.decides_at_source {
            // UGAL at the source router: the occupancy of an output port is the flits held in
            // its channel's downstream VC buffers.
            let (v, base) = (self.v as usize, (cur * self.geometry.ports) as usize);
            let occupancy = |port: u32| {
                let first = (base + port as usize) * v;
                self.vc_count[first..first + v].iter().sum::<u32>()
            };
            header.level = self.router.decide(&self.geometry, cur, header, occupancy);
        }
        self.router.candidates(&self.geometry, cur, header, &mut self.candidates);
        if let Some(faults) = &self.faults {
            faults.retain(&self.geometry, cur, message.dest, &mut self.candidates);
        }
        if S == SCOUTING {
            self.skip_failed_outputs(id, vc);
        }
        let base = (cur * self.geometry.ports) as usize;
        let Some((channel, v)) = self.select(base, false).or_else(|| self.select(base, true))
        else {
            return false;
        };
        let out = channel * self.v + v;
        self.vc_owner[out as usize] = id;
        self.vc_src[out as usize] = vc;
        self.vc_out[vc as usize] = out;
        let busy = self.ch_busy[channel as usize] | 1 << v;
        self.set_busy(channel, busy);
        let port = channel - base as u32;
        let level = self.router.after_hop(&self.geometry, cur, port, v, header.level);
        self.messages[id as usize].level = level;
        if self.window.open {
            let w = &mut self.window;
            w.hop_requests += 1;
            w.blocked_cycles += self.now - p.ready;
            w.hops_blocked += u64::from(self.now > p.ready);
            w.escape_hops += u64::from(self.router.is_escape(v));
        }
        true
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

    fn set_busy(&mut self, channel: u32, busy: u64) {
        let ch = channel as usize;
        let old = self.ch_busy[ch];
        if self.window.open {
            self.window.busy_time[old.count_ones() as usize] += self.now - self.ch_since[ch];
            self.ch_since[ch] = self.now;
        }
        self.ch_busy[ch] = busy;
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

    /// Phase A (choose) and phase B (apply) of switch and link traversal, plus ejection.
    /// `W`: how phase A walks the channels (`ACTIVE`, `PORTS` with an input speedup,
    /// `BITMAP`); monomorphised, so that the unlimited cases have no trace of the port
    /// accounting.
    fn traverse<const S: u8, const W: u8>(&mut self) -> bool {
        let v = self.v;
        let depth = self.depth;
        let cap = self.speedup.unwrap_or(u32::MAX);
        let interleaved = self.ejection == Ejection::Interleaved;
        if interleaved {
            self.pick_ejections();
        }
        if W == PORTS {
            self.account_ejection(cap);
        }
        {
            let now = self.now;
            let Engine {
                active,
                active_bits,
                ch_pos,
                ch_busy,
                ch_rr,
                vc_src,
                vc_count,
                vc_received,
                moves,
                n_moves,
                port_sent,
                port_touched,
                switching,
                ..
            } = self;
            // The slices are taken once: nothing in the loop resizes a vector (the moves go
            // to `moves`, sized for one per channel), so their addresses and lengths stay in
            // registers. `ch_rr` and `vc_count` are cut to the lengths of `ch_busy` and
            // `vc_src`, which they equal, so one bounds check covers both.
            let ch_busy: &[u64] = ch_busy;
            let ch_rr: &mut [u32] = &mut ch_rr[..ch_busy.len()];
            let vc_src: &[u32] = vc_src;
            let vc_count: &[u32] = &vc_count[..vc_src.len()];
            let vc_received: &[u32] = vc_received;
            let gate: &[u64] = &switching.gate;
            let moves: &mut [u64] = moves;
            let mut n = 0;
            // The channels to visit: in `active` order, or in memory order through the bitmap
            // (`BITMAP`, never with an input speedup, whose port slots go first come, first
            // served). `next` indexes `active` or `active_bits`, `bits` holds the rest of the
            // current bitmap word; `pos` is the channel's position in `active`.
            let (mut next, mut bits) = (0, 0u64);
            'walk: loop {
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
                let busy = ch_busy[ch];
                let start = ch_rr[ch];
                // The busy VCs from `start` up, then those below it (`start < V <= 64`): rotated
                // right by `start`, bit `b` of `busy` sits at `(b - start) mod 64`, and the bits
                // of `busy` (all below V) come in that order.
                let mut rest = busy.rotate_right(start);
                let base = ch * v as usize;
                while rest != 0 {
                    let vv = (rest.trailing_zeros() + start) & 63;
                    rest &= rest - 1;
                    let out = base + vv as usize;
                    let src = vc_src[out];
                    if src != NONE
                        && vc_count[src as usize] > 0
                        && vc_count[out] < depth
                        && (S == WORMHOLE || vc_received[out] > 0 || gate[out] <= now)
                    {
                        if W == PORTS {
                            let port = (src / v) as usize;
                            if port_sent[port] >= cap {
                                continue;
                            }
                            if port_sent[port] == 0 {
                                port_touched.push(port as u32);
                            }
                            port_sent[port] += 1;
                        }
                        moves[n] = pos << 32 | out as u64;
                        n += 1;
                        ch_rr[ch] = if vv + 1 == v { 0 } else { vv + 1 };
                        break;
                    }
                }
            }
            *n_moves = n;
        }
        let n_moves = self.n_moves;
        let mut moved = n_moves > 0;
        let mut i = 0;
        while i < self.ejecting.len() {
            let vc = self.ejecting[i];
            if interleaved && self.eject_pick[self.node_of(vc) as usize] != vc {
                i += 1;
                continue;
            }
            if W == PORTS && self.eject_held[vc as usize] {
                self.eject_held[vc as usize] = false;
                i += 1;
                continue;
            }
            if self.vc_count[vc as usize] > 0 {
                #[cfg(test)]
                self.count_port_flit(vc);
                #[cfg(test)]
                self.count_node_ejection(vc);
                if interleaved {
                    let node = self.node_of(vc) as usize;
                    self.eject_rr[node] = vc.wrapping_add(1);
                }
                moved = true;
                self.vc_count[vc as usize] -= 1;
                let id = self.vc_owner[vc as usize];
                let message = &mut self.messages[id as usize];
                message.delivered += 1;
                let done = message.delivered == message.length;
                if self.window.open {
                    self.window.delivered_flits += 1;
                }
                if done {
                    self.ejecting.swap_remove(i);
                    self.complete(id, vc);
                    continue;
                }
            }
            i += 1;
        }
        if interleaved {
            for &node in &self.eject_picked {
                self.eject_pick[node as usize] = NONE;
            }
            self.eject_picked.clear();
        }
        let counting = self.window.open;
        // Phase B. Walked in `active` order, the moves are applied one by one. Walked in
        // memory order (`BITMAP`), in two passes: the flit counts first, in that order (their
        // sums do not depend on it; nor does whether a move carries a header into its output VC
        // or empties its input buffer for good, as a buffer that still receives flits is not
        // emptied for good), then these events in `active` order, as if the moves had been
        // applied one by one in that order: a header joins `pending` (whose order is the
        // routing order, and so the order of the random draws), a released channel leaves
        // `active`, a released injection VC takes the next queued message.
        self.events.clear();
        for k in 0..n_moves {
            let packed = self.moves[k];
            let (out, pos) = ((packed as u32) as usize, packed >> 32);
            let src = self.vc_src[out] as usize;
            #[cfg(test)]
            self.count_port_flit(src as u32);
            self.vc_count[src] -= 1;
            self.vc_count[out] += 1;
            if counting {
                self.window.vc_flits[out] += 1;
            }
            if self.vc_received[out] == 0 {
                if W == BITMAP {
                    self.events.push((pos << 1, out as u32));
                } else {
                    self.header_arrived::<S>(out as u32, counting);
                }
            }
            self.vc_received[out] += 1;
            let id = self.vc_owner[out] as usize;
            if self.vc_count[src] == 0 && self.vc_received[src] == self.messages[id].length {
                if W == BITMAP {
                    self.events.push((pos << 1 | 1, out as u32));
                } else {
                    self.input_emptied::<S>(out as u32);
                }
            }
        }
        if W == BITMAP {
            if !self.events.is_sorted_by_key(|e| e.0) {
                self.events.sort_unstable_by_key(|e| e.0);
            }
            for k in 0..self.events.len() {
                let (key, out) = self.events[k];
                if key & 1 == 0 {
                    self.header_arrived::<S>(out, counting);
                } else {
                    self.input_emptied::<S>(out);
                }
            }
        }
        self.flit_hops += n_moves as u64;
        if counting {
            self.window.flit_hops += n_moves as u64;
        }
        moved
    }

    /// Phase B: a header entered output VC `out` this cycle.
    #[inline(always)]
    fn header_arrived<const S: u8>(&mut self, out: u32, counting: bool) {
        let id = self.vc_owner[out as usize] as usize;
        if S == WORMHOLE {
            self.pending.push(Pending { vc: out, ready: self.now + 1 + self.delay });
            self.messages[id].head_vc = out;
            if counting {
                self.window.header_hops += 1;
            }
        }
        self.messages[id].hops += 1;
    }

    /// Phase B: the tail flit left the buffer feeding output VC `out` this cycle.
    #[inline(always)]
    fn input_emptied<const S: u8>(&mut self, out: u32) {
        let src = self.vc_src[out as usize];
        if S == CIRCUIT && src >= self.network_vcs {
            self.source_released(self.vc_owner[out as usize]);
        }
        self.release(src);
    }

    /// Interleaved ejection, before phase A: picks at each node the ejecting VC with a flit
    /// that comes first in round-robin order from `eject_rr` (VC ids, wrapping), so the
    /// messages arriving at a node share its one flit per cycle in turn. Kept out of line: the
    /// other ejection modes never call it, and inlined it costs the hot loop of `traverse`
    /// registers.
    #[inline(never)]
    fn pick_ejections(&mut self) {
        for k in 0..self.ejecting.len() {
            let vc = self.ejecting[k];
            if self.vc_count[vc as usize] == 0 {
                continue;
            }
            let node = self.node_of(vc) as usize;
            let (pick, first) = (self.eject_pick[node], self.eject_rr[node]);
            if pick == NONE {
                self.eject_picked.push(node as u32);
                self.eject_pick[node] = vc;
            } else if vc.wrapping_sub(first) < pick.wrapping_sub(first) {
                self.eject_pick[node] = vc;
            }
        }
    }

    /// Input speedup, before phase A: resets last cycle's port counters, then gives each
    /// ejecting VC with a flit (with interleaved ejection: each picked one) a slot of its
    /// input port in `ejecting` order, or holds it (`eject_held`) for this cycle when the port
    /// has none left; a held pick leaves its node's port idle for the cycle.
    fn account_ejection(&mut self, cap: u32) {
        for &port in &self.port_touched {
            self.port_sent[port as usize] = 0;
        }
        self.port_touched.clear();
        let interleaved = self.ejection == Ejection::Interleaved;
        for &vc in &self.ejecting {
            if self.vc_count[vc as usize] == 0 {
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
    fn count_port_flit(&mut self, vc: u32) {
        let port = (vc / self.v) as usize;
        if self.port_stamp[port] != self.now {
            self.port_stamp[port] = self.now;
            self.port_check[port] = 0;
        }
        self.port_check[port] += 1;
        self.max_port_flits = self.max_port_flits.max(self.port_check[port]);
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

    /// Frees a VC whose buffer the tail flit has left.
    fn release(&mut self, vc: u32) {
        let vcu = vc as usize;
        let out = self.vc_out[vcu];
        if out < EJECT {
            self.vc_src[out as usize] = NONE;
        }
        self.vc_owner[vcu] = NONE;
        self.vc_out[vcu] = NONE;
        self.vc_received[vcu] = 0;
        if vc < self.network_vcs {
            let channel = vc / self.v;
            let busy = self.ch_busy[channel as usize] & !(1 << (vc % self.v));
            self.set_busy(channel, busy);
        } else {
            let node = (vc - self.network_vcs) / self.v;
            let v = (vc - self.network_vcs) % self.v;
            self.inj_busy[node as usize] &= !(1 << v);
            let head = self.queue_head[node as usize];
            if head != NONE {
                let next = self.messages[head as usize].next;
                self.queue_head[node as usize] = next;
                if next == NONE {
                    self.queue_tail[node as usize] = NONE;
                }
                self.queued -= 1;
                if let Some(t) = &mut self.throughput {
                    t.dequeued(node);
                }
                self.inject(node, v, head, self.now + 1);
            }
        }
    }

    /// The tail of message `id` has been ejected from `vc`.
    fn complete(&mut self, id: u32, vc: u32) {
        let message = self.messages[id as usize];
        let node = message.dest as usize;
        self.release(vc);
        if self.ejection == Ejection::Single {
            self.eject_busy[node] = false;
        }
        self.in_network -= 1;
        self.delivered_total += 1;
        if self.broadcasts.is_none() && self.window.end.is_none_or(|end| message.generated < end) {
            let latency = (self.now + 1 - message.generated) as f64;
            self.transient.delivered(message.generated, latency);
        }
        let w = &mut self.window;
        if w.open {
            w.delivered += 1;
            w.node_messages[node] += 1;
            w.node_flits[node] += u64::from(message.length);
            if let Some(t) = &mut self.throughput {
                t.delivered(message.dest, message.length);
            }
        }
        if message.measured {
            let (cycles, waited) =
                (self.now + 1 - message.generated, message.injected - message.generated);
            w.latencies.record(cycles);
            w.network_latencies.record(cycles - waited);
            w.source_waits.record(waited);
            let latency = cycles as f64;
            let wait = waited as f64;
            w.latency_sum += latency;
            w.wait_sum += wait;
            w.network_sum += latency - wait;
            w.hops_sum += f64::from(message.hops);
            w.length_sum += f64::from(message.length);
            w.outstanding -= 1;
            if self.broadcasts.is_none() {
                self.batches.delivered(message.generated - w.start, latency);
            }
        }
        self.free.push(id);
        if self.broadcasts.is_some() {
            self.delivered_with_broadcasts(&message);
        }
    }

    /// Mean number of messages per node waiting in source queues.
    pub(crate) fn backlog_per_node(&self) -> f64 {
        self.queued as f64 / f64::from(self.geometry.nodes)
    }
}
