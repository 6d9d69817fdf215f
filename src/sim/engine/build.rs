//! Building the engine: the struct-of-arrays state sized for a scenario's network, load and
//! run plan (every per-VC, per-channel and per-node array is allocated here, once).

use crate::scenario::{
    Ejection, Injection, Scenario, SwitchAllocator, Switching, VcAllocator, VcReallocation,
};

use super::super::batch_means::Batches;
use super::super::divisor::Divisor;
use super::super::faults::FaultMap;
use super::super::lengths::Lengths;
use super::super::percentiles::Histogram;
use super::super::routing::Router;
use super::super::sections::{SECTIONS, Sections};
use super::super::stats::{TRANSIENT_BINS, Transient};
use super::super::throughput::Tracker;
use super::super::topology::Geometry;
use super::super::trace::Feed;
use super::super::traffic::{Pattern, Traffic};
use super::super::{SimError, rng::Rng};
use super::{
    ACTIVE, ALLOC, BITMAP, BITMAP_VCS, EJECT, Engine, NONE, PORTS, PREFETCH_VCS, RunPlan, Window,
    allocator, broadcast, packets, reallocation, replies, source, switching, timing, vc_allocator,
};

/// How phase A goes over the channels (`Engine::walk`, which `Engine::step_with` dispatches
/// on): the separable switch allocator where the scenario has one (`allocates`); else the
/// walk of `active` with its input ports counted (`ports`, whose slots go first come, first
/// served in `active` order); else the bitmap walk where the network is large enough for it
/// (`bitmap`, [`walks_bitmap`]); else the walk of `active`.
pub(super) fn walk(bitmap: bool, ports: bool, allocates: bool) -> u8 {
    if allocates {
        ALLOC
    } else if ports {
        PORTS
    } else if bitmap {
        BITMAP
    } else {
        ACTIVE
    }
}

/// Whether phase A is a greedy walk of `active` (`ACTIVE` or `PORTS`). Those test the fed VCs
/// (`Engine::ch_feed`). The others do without: on the bitmap walk's large networks the stores
/// that keep them up to date miss the caches (the 512 x 512 torus was 20% slower with them
/// and the lengths at the VCs), and the allocator, with BookSim's reallocation, ends a VC's
/// grant as its tail passes, so it has no VC to skip (BookSim's router was 2% slower with
/// them and the lengths; the lengths alone cost it no time, `vc_lengths`).
pub(super) fn walks_active(walk: u8) -> bool {
    walk == ACTIVE || walk == PORTS
}

/// `Engine::vc_length` for phase A's `walk` and `network_vcs` VCs on links: a length per VC
/// wherever phase A does not walk the bitmap (phase B reads the length of the message moving
/// into a VC there, one load where its record is two, `traverse`), none on the bitmap walk's
/// large networks, where the stores that keep them up to date miss the caches. Kept on the
/// timed paths and the allocator's too since 2026-12-02: 0.7-1.0% fewer instructions there
/// (callgrind), no change in time measurable on this machine.
fn vc_lengths(walk: u8, network_vcs: usize) -> Vec<u32> {
    if walk != BITMAP { vec![0; network_vcs] } else { vec![] }
}

/// Whether `scenario`'s routers feed their local ports over an injection channel (one flit per
/// cycle from a node's injection VCs), and whether input ports are counted: with an input
/// speedup or such a channel. The families whose terminals are not routers have their
/// channels already: the terminal links.
pub(super) fn input_ports(scenario: &Scenario, geometry: &Geometry) -> (bool, bool) {
    let channel = scenario.injection == Injection::Channel && geometry.nodes_are_routers();
    (channel, scenario.input_speedup.is_some() || channel)
}

/// The VCs on the links that exist: the size that decides phase A's walk
/// ([`walks_bitmap`]) and the hints (`Engine::prefetching`, `Engine::hints_routing`).
fn vcs_on_links(geometry: &Geometry, v: u32) -> usize {
    geometry.links() as usize * v as usize
}

/// Whether the network is large enough for the bitmap walk ([`walk`]): at least
/// [`BITMAP_VCS`] VCs on the links that exist.
pub(super) fn walks_bitmap(geometry: &Geometry, v: u32) -> bool {
    vcs_on_links(geometry, v) >= BITMAP_VCS
}

// A network that hints walks the bitmap, whose walks the hints are made for.
const _: () = assert!(PREFETCH_VCS >= BITMAP_VCS);

impl Engine {
    /// Builds the network for a scenario accepted by `check`.
    pub(crate) fn new(
        scenario: &Scenario,
        rate: f64,
        seed: u64,
        plan: &RunPlan,
    ) -> Result<Engine, SimError> {
        let geometry = Geometry::new(&scenario.topology)?;
        // Request-reply traffic routes each class over half the VCs (`replies`).
        let router = Router::new(&super::routed(scenario), &geometry.size)?;
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
        // The minimum window (or the fixed one) starts with 4 b raw batches and 16 sections.
        let raw = Batches::raw_per_window(plan.batches);
        let fixed_end = match plan.precision {
            None => Some(plan.warmup.saturating_add(plan.cycles)),
            Some(_) => None,
        };
        let batch_length = plan.cycles.div_ceil(raw);
        let section_length = plan.cycles.div_ceil(SECTIONS);
        let (channel, ports) = input_ports(scenario, &geometry);
        let switching =
            switching::State::new(scenario, network_vcs, total_vcs, geometry.size.diameter);
        let has_faults = faults.is_some();
        let cut_through_room = scenario.switching == Switching::VirtualCutThrough
            && scenario.vc_reallocation == VcReallocation::TailSent;
        // Retries that must fail are skipped (`route`; with the separable VC allocator, the
        // headers that can request nothing) where a header's candidates depend on its router
        // and itself only: not while UGAL weighs occupancy (`Router::weighs_occupancy`, per
        // header), and not with virtual cut-through's room test or a probe (scouting,
        // circuits).
        let skip_retries = switching.kind == switching::WORMHOLE && !cut_through_room;
        // With request-reply traffic each class's VCs are atomic where the routing's are.
        let class_atomic = router.atomic_vcs();
        let atomic = match scenario.reply_length {
            Some(_) => class_atomic << (v / 2) | class_atomic,
            None => class_atomic,
        };
        let allocates = scenario.switch_allocator == SwitchAllocator::Islip;
        let walk = walk(walks_bitmap(&geometry, v), ports, allocates);
        let walks_active = walks_active(walk);
        let timing = timing::of(scenario, &geometry, total_vcs);
        let split = match plan.threads {
            threads if threads > 1 && super::split::eligible(scenario, &geometry) => Some(
                Box::new(super::split::Split::new(threads, slots.div_ceil(64)).map_err(SimError)?),
            ),
            _ => None,
        };
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
            injection_channel: channel,
            port_sent: if ports { vec![0; slots + nodes] } else { vec![] },
            port_touched: Vec::with_capacity(if ports { slots + nodes } else { 0 }),
            eject_held: if ports { vec![false; total_vcs] } else { vec![] },
            #[cfg(test)]
            max_port_flits: 0,
            #[cfg(test)]
            max_injection_flits: 0,
            #[cfg(test)]
            port_check: vec![0; slots + nodes],
            #[cfg(test)]
            port_stamp: vec![u64::MAX; slots + nodes],
            network_vcs: network_vcs as u32,
            per_channel: Divisor::new(v),
            full_mask: if v == 64 { u64::MAX } else { (1 << v) - 1 },
            vc_owner: vec![NONE; total_vcs],
            vc_count: vec![0; total_vcs],
            vc_received: vec![0; total_vcs],
            vc_out: vec![NONE; total_vcs],
            vc_src: vec![NONE; total_vcs],
            vc_length: vc_lengths(walk, network_vcs),
            ch_busy: vec![0; slots],
            ch_feed: if walks_active { vec![0; slots] } else { vec![] },
            ch_rr: vec![0; slots],
            ch_since: vec![0; slots],
            ch_pos: vec![NONE; slots],
            active: Vec::with_capacity(slots),
            active_bits: vec![0; slots.div_ceil(64)],
            // Counted over the links that exist, not the slots: a mesh's border ports and a
            // graph's smaller routers have slots without a link (and before the terminals
            // held one slot each, `topology::Geometry`, their padding made the p = 4
            // dragonfly walk the bitmap and sort its events every cycle, 6% slower than
            // walking `active`; same results, either walk).
            walk,
            prefetching: vcs_on_links(&geometry, v) >= PREFETCH_VCS,
            hints_routing: walks_bitmap(&geometry, v),
            split,
            queue_head: vec![NONE; nodes],
            queue_tail: vec![NONE; nodes],
            inj_busy: vec![0; nodes],
            eject_busy: vec![false; nodes],
            ejecting: Vec::with_capacity(nodes),
            pending: Vec::with_capacity(nodes * 4),
            moves: vec![0; slots],
            n_moves: 0,
            events: Vec::new(),
            events_scratch: Vec::new(),
            event_counts: Vec::new(),
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
            planned_window: None,
            batches: Batches::new(batch_length, plan.batches as usize),
            sections: Sections::new(section_length),
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
            timing,
            source: (scenario.injection == Injection::Channel).then(|| {
                let classes = if scenario.reply_length.is_some() { 2 } else { 1 };
                Box::new(source::Source::new(nodes, classes, v, channel))
            }),
            queues: (scenario.vc_reallocation == VcReallocation::TailSent)
                .then(|| Box::new(reallocation::Queues::new(total_vcs, atomic))),
            allocator: (scenario.switch_allocator == SwitchAllocator::Islip).then(|| {
                Box::new(allocator::Allocator::new(
                    slots as u32,
                    nodes as u32,
                    v,
                    scenario.input_speedup,
                    channel,
                    scenario.switch_allocator_iterations.unwrap_or(1),
                ))
            }),
            vc_allocator: (scenario.vc_allocator == VcAllocator::Islip)
                .then(|| Box::new(vc_allocator::Separable::new(network_vcs, total_vcs))),
            packets: scenario.packet_size.map(|size| Box::new(packets::Packets::new(size))),
            cut_through_room,
            releases: match skip_retries {
                true => vec![0; geometry.routers() as usize],
                false => Vec::new(),
            },
            replies: replies::Replies::new(scenario, nodes),
            filter_candidates: cut_through_room || scenario.reply_length.is_some() || has_faults,
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
        let ports = !self.port_sent.is_empty();
        self.walk = walk(on, ports, self.allocator.is_some());
        // The hints run wherever the bitmap is walked here, so that the tests cover them.
        self.prefetching = on;
        self.hints_routing = on;
        self.vc_length = vc_lengths(self.walk, self.network_vcs as usize);
        self.ch_feed = if walks_active(self.walk) { vec![0; self.ch_busy.len()] } else { vec![] };
        self
    }

    /// Test builds: `threads` threads split phase A and phase B's counts of every cycle (or
    /// with `every_other`, of every other one) whatever the network's size (with the bitmap
    /// walk; `split`).
    #[cfg(test)]
    pub(crate) fn with_threads(mut self, threads: usize, every_other: bool) -> Engine {
        self.split = match threads {
            0 | 1 => None,
            _ => {
                let mut split =
                    super::split::Split::splitting_from(threads, self.active_bits.len(), 0)
                        .expect("test builds start their simulator threads");
                split.every_other = every_other;
                Some(Box::new(split))
            }
        };
        self
    }

    /// Test builds: the cycles for which the engine asked whether to split, and those split.
    #[cfg(test)]
    pub(crate) fn split_cycles(&self) -> (u64, u64) {
        self.split.as_deref().map_or((0, 0), |split| (split.asked, split.split))
    }

    /// Test builds: whether the engine started threads to split its cycles (`split`).
    #[cfg(test)]
    pub(crate) fn is_split(&self) -> bool {
        self.split.is_some()
    }

    /// Test builds: every blocked header retries every cycle (`route`'s skipping off), to
    /// compare the two.
    #[cfg(test)]
    pub(crate) fn without_skipped_retries(mut self) -> Engine {
        self.releases = Vec::new();
        self
    }

    /// Test builds: the separable switch allocator's single iteration run through the full
    /// request list (`Allocator::allocate`) rather than with its grant folded into the walk,
    /// to compare the two.
    #[cfg(test)]
    pub(crate) fn with_full_allocation(mut self) -> Engine {
        if let Some(alloc) = self.allocator.as_deref_mut() {
            alloc.all_requests = true;
        }
        self
    }

    /// Test builds: the timed engine (`timing`) even where every link and credit takes one
    /// cycle, to compare it with the default engine.
    #[cfg(test)]
    pub(crate) fn with_timing(mut self, scenario: &Scenario) -> Engine {
        self.timing = Some(timing::build(scenario, &self.geometry, self.vc_owner.len()));
        self
    }

    /// Replays `feed` instead of generating traffic (the engine was built at rate 0).
    pub(crate) fn with_trace(mut self, feed: Feed) -> Engine {
        self.trace = Some(Box::new(feed));
        self
    }
}
