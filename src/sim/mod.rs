//! Flit-level simulator of k-ary n-cubes, meshes, hypercubes, butterfly fat-trees,
//! dragonflies and any network read from a file (`graph`) with wormhole, virtual cut-through,
//! scouting and circuit switching, static node faults and hypercube broadcasts.
//!
//! # Brief overview
//!
//! [`simulate`] takes a [`Scenario`], a load (`rate`, messages per node per cycle), a
//! [`SimOptions`] and a seed, and returns the same [`Measurement`] shape as the analytical
//! models; [`check`] is the cheap validation the spec validator calls for every sweep point.
//! The result is a pure function of (scenario, rate, options, seed): same inputs, bit-identical
//! output, on every machine (the random streams are our own, see `rng`).
//!
//! ```text
//! let scenario = Scenario { routing: Routing::Duato, virtual_channels: 4, ..Scenario::new(
//!     Topology::Torus { radix: 8, dimensions: 2 }) };
//! let m = sim::simulate(&scenario, 0.005, &SimOptions::default(), 1, None)?;
//! println!("{:?} {:?}", m.status, m.latency);
//! ```
//!
//! Inside, `engine` runs the cycle loop over struct-of-arrays state (`engine/deadlock`
//! explains a stuck network, `engine/invariants` checks the bookkeeping in tests,
//! `engine/switching/` holds what scouting and circuit switching do differently from wormhole,
//! `engine/broadcast` sends hypercube broadcasts down spanning binomial trees); `topology`
//! numbers nodes, ports and channels (`network/`: one file per network family with its own numbering, the
//! butterfly fat-tree's routers and wiring in `network::fat_tree`, the dragonfly's numbering
//! and routing cases in `network::dragonfly`); `routing` says which output virtual channels a header may
//! request; `traffic` generates messages (Poisson process; uniform, permutation and hotspot
//! patterns; `injection`: Bernoulli and on/off sources; `trace`: a recorded trace replayed from
//! the records [`replay`] is handed, with open-loop timing); `lengths` draws each message's length (fixed, bimodal, geometric or uniform
//! around the mean `message_length`); `stats` keeps batch
//! means and builds the [`Measurement`]; `percentiles` keeps the exact latency distributions
//! (nearest-rank p50, p90, p99 and maximum); `rng` is xoshiro256++ with our own distributions;
//! `faults` draws static node faults and filters routes and destinations around them.
//!
//! # Model and conventions
//!
//! - A flit crosses a physical channel in one cycle. V virtual channels per physical channel,
//!   each with a buffer of `buffer_depth` flits at the downstream router; the channel carries at
//!   most one flit per cycle, round-robin among its VCs that have a flit and downstream room.
//!   Credits take one cycle: depth 2 gives one flit per cycle per VC (depth 1 only half).
//! - A VC is busy (counts for P_v and V-bar) from the cycle a header is granted it until the
//!   tail flit has left its buffer (`vc_reallocation: drained`, the default). With
//!   `vc_reallocation: tail_sent` it is granted again once the tail has been sent into it
//!   (BookSim's default): its buffer then queues the next messages behind the last one's tail,
//!   except the adaptive VCs of escape-based routings, which stay drained
//!   (`engine/reallocation.rs`).
//! - Virtual cut-through (`switching: virtual_cut_through`) is wormhole switching whose
//!   header is granted only a VC with room, by its credits, for the whole packet: with
//!   `drained` reallocation a free VC is empty, so with buffers a packet deep (`check` asks
//!   for them) it is wormhole bit for bit; with `tail_sent` it passes over VCs the last
//!   packet still fills (`engine/route.rs`, `keep_room_for`).
//! - Packets (`packet_size` P): a message longer than P flits is split when generated into
//!   packets of P flits (the last one shorter), each queued, injected, routed and delivered on
//!   its own; the message's latency ends with its last packet, its source wait with its first
//!   packet's injection, and its hop count is its packets' mean (`engine/packets.rs`).
//! - Injection: unbounded source queue per node, V injection VCs (no shared injection link,
//!   as in the models' M/G/1 queue with rate lambda/V; `injection: parallel`). With
//!   `injection: channel` the source is BookSim's (`engine/source.rs`): it sends one message
//!   at a time, flit by flit over a one-flit-per-cycle injection channel, into the router's
//!   local input port, whose VCs are `buffer_depth` deep; the header waits the source
//!   router's `router_delay`, and a one-cycle ejection channel follows the ejection port
//!   (BookSim's terminal channels). Where terminals are not routers the terminal link is the
//!   channel, and the terminal sends one message at a time over it.
//!   Ejection: `single` (one message at a time, one flit per cycle), `interleaved` (one flit
//!   per cycle per node, round-robin over the messages that reached it, as BookSim's port) or
//!   `unlimited` (every message at once); `docs/router.md` measures what the choice does to
//!   saturation.
//! - Latency convention. A message generated during cycle `g` (Poisson arrival time in
//!   `[g, g+1)`) is stamped `g` and may enter the network in that cycle; every flit move
//!   completes at the end of its cycle; the message is delivered at the end of the cycle in
//!   which its tail flit moves from the destination router into the node. With no contention
//!   and `buffer_depth >= 2` the latency is exactly `hops + M + router_delay * hops`: the header
//!   takes `hops` link cycles plus one ejection cycle and the tail follows `M - 1` cycles behind.
//!   With a `message_length_distribution` other than fixed, M is each message's own length
//!   (the row's `latency` then averages hops + length over the messages; `lengths`).
//!   The models' wormhole figure `M + D - 1` (errata E-SS-3) omits that ejection cycle; the
//!   simulator's is one cycle larger. `router_delay` is paid at each router a header enters
//!   over a link (not at the source).
//! - Input speedup: unset, an input port (the VCs of one incoming channel, or a node's
//!   injection VCs) sends up to one flit per VC per cycle, to any outputs. `input_speedup = s`
//!   caps it at `s` flits per cycle, ejected flits included; ejection takes its slots first,
//!   then the output channels in the engine's order of active channels, each passing over
//!   candidate VCs of a full port in its round-robin (see `engine`).
//! - Network latency = latency - source wait; source wait = cycles from generation until the
//!   message holds an injection VC. Besides their means, the run reports the p50, p90, p99
//!   and maximum of all three over the measured messages, exactly (`percentiles`: nearest
//!   rank, the smallest value L such that at least a fraction q of the messages have <= L).
//! - Measurement: warm-up, then a window of `cycles` cycles (or, with `target_precision`, at
//!   least `cycles` and then until the 95% CI half-width of the batch means is below that
//!   fraction of the mean, with at least `batches` complete batches and at most `max_cycles`
//!   cycles in all). The run also reports the MSER truncation point of its latency series from
//!   cycle 0 (`mser_truncation_cycles`, `stats::Transient`): a warm-up shorter than it left
//!   part of the transient in the window. Messages generated in the window are
//!   followed until delivered; traffic keeps flowing meanwhile. Throughput and the channel
//!   statistics cover the window only.
//! - Stops early: `saturated` when the source queues hold more than `saturation_backlog`
//!   messages per node on average, when fewer than 98% of the window's messages were accepted
//!   by its end (and the shortfall exceeds 5 per node), or when the window's messages are not
//!   delivered within max(window, 50000) cycles; `deadlock` when no flit moved for
//!   `deadlock_cycles` cycles while messages are in the network. Before reporting saturation
//!   the engine also looks for an exact deadlock (blocked headers whose every allowed VC is held
//!   by another such header and cannot be vacated by compacting its worm), because a deadlocked
//!   network also fills its source queues, often before the watchdog fires. The detail names a
//!   waiting cycle.
//! - Throughput mode (`SimOptions::measure`, module `throughput`): source queues are capped
//!   (a generated message finding its queue full is dropped and counted), the run never stops
//!   for a backlog and measures the accepted rate over the whole window, past saturation too;
//!   `saturation` searches the highest accepted rate.
//! - Routing decisions (documented in `routing`): Duato uses 2 escape VCs on a torus (the two
//!   dateline classes of dimension-order routing; one would leave each ring's dependency
//!   cycle) and 1 on meshes and hypercubes, and takes an escape VC only when no adaptive VC is
//!   free; Duato-Nbc uses V2 = floor(diameter / 2) + 1 negative-hop levels by default (k/2 + 1
//!   on the 2-D torus, errata E-NBC-1) and picks uniformly among its allowed VCs. The 2-D
//!   mesh also has the turn-model routings `west_first` and `odd_even` (partially adaptive,
//!   deadlock-free with any V, every VC on each port they offer).
//! - Traffic: the N Poisson sources are generated as their superposition (one
//!   stream of rate N * rate with uniformly chosen sources), which is the same process.
//!   Bernoulli and on/off sources (`injection_process`) are per node, on a calendar of each
//!   node's next message (`injection`); they run without faults.
//! - Trace replay (`Traffic::Trace`, [`replay`], module `trace`, `docs/traces.md`): a record
//!   of cycle t is generated at round(t * time_scale), open loop, with its own length; the
//!   window is clipped to the trace when it ends first. The engine tests once per cycle
//!   whether it replays, so generated traffic runs as before.
//! - Static node faults (`fault_rate > 0`, see `faults` and `docs/faults.md`): one fault map
//!   per run, drawn from the fault seed; only healthy nodes send (`rate` per healthy node), and
//!   only to destinations they reach over a fault-free minimal path; routes keep to such paths.
//! - Butterfly fat-tree (Greenberg and Guan, ICPP 1997, Sec. 3.1; `network::fat_tree`): the N = 4^n
//!   processors are the nodes (traffic endpoints, ids `0..N`, with the injection and ejection
//!   of every other topology); the switches are further routers (ids from N on) that neither
//!   send nor receive. Each link is a pair of wormhole channels with V VCs (the paper's network
//!   is V = 1, the spec default). `up_down` routing climbs either parent link (random among the
//!   free ones, waiting for the first to free when both are busy), turns at the lowest common
//!   ancestor level and descends deterministically; contention is first come, first served
//!   (`routing`). With V = 1 a processor receives one message at a time over its one link, so
//!   `single` and `unlimited` ejection coincide (tested); with V > 1 `unlimited` is the
//!   paper's "immediately consumed" (assumption 4). A message from `s` to `d` crosses
//!   `2h` links, h the level of their lowest common ancestors, so its zero-load latency is
//!   exactly `2h + M + router_delay (2h - 1)` (derived and tested per pair in `network/fat_tree/tests.rs`).
//! - Dragonfly (Kim, Dally, Scott and Abts, ISCA 2008; `network::dragonfly`): groups of `a`
//!   routers, `p` terminals and `h` global links per router, `g = a h + 1` groups, absolute
//!   global-link arrangement; terminals are the nodes (ids `0..N`, `N = p a g`), routers the
//!   further ids, as on the fat-tree. Wormhole only. `minimal` (local, global, local),
//!   `valiant` (via a random intermediate group drawn per message), `ugal` (UGAL-L: at the
//!   source router, minimal iff `q_min H_min <= q_val H_val + ugal_threshold`, q the flits in
//!   the output channel's downstream buffers), `ugal_global` (UGAL-G: q the queues on each
//!   route's way out of the source group), `par` (PAR: UGAL-L, then once more at the next
//!   router of the source group), and `ugal_booksim` (BookSim's UGAL: via a random
//!   intermediate router, `q_min <= 2 q_nonmin + 30`, a VC class per phase); VC classes by
//!   global hops taken (V >= 2 minimal, V >= 4 PAR, V >= 3 otherwise). Zero-load latency exactly `hops + M + router_delay (hops - 1)` with
//!   `hops = 2 +` the router-to-router links (derived and tested per pair and intermediate
//!   group in `network/dragonfly/tests.rs`). Traffic `group_shift` is its adversarial pattern.
//! - k-ary n-tree (Petrini and Vanneschi, IPPS 1997; `network::kary_ntree`): the folded-Clos
//!   fat-tree with `N = k^n` terminals and `n` levels of `k^(n-1)` switches, each with `k`
//!   links down and `k` up; terminals are the nodes, switches the further ids. Wormhole only,
//!   no faults. `up_down` climbs by any free up port (adaptive) to the nearest common ancestor
//!   level and descends deterministically; `up_down_random` draws the up port per message and
//!   hop instead (also on the butterfly fat-tree). Zero-load latency exactly
//!   `2h + M + router_delay (2h - 1)`, h the nearest-common-ancestor level (derived and tested per
//!   pair in `network/kary_ntree/tests.rs`).
//! - HyperX (Ahn, Binkert, Davis, McLaren and Schreiber, SC 2009; `network::hyperx`,
//!   `docs/hyperx.md`): `S^L` routers, each linked by `K` links (`trunking`) to every router
//!   that differs from it in one coordinate, `T` terminals each (`L = 2`, `T = S`: the
//!   flattened butterfly); terminals are the nodes, routers the further ids.
//!   `dimension_order` (one hop per differing dimension, lowest first, acyclic with one VC),
//!   `adaptive` (every differing dimension, no deadlock avoidance), `duato` (adaptive with a
//!   dimension-order escape VC), `valiant` (to a random intermediate router and on, a VC class
//!   per phase), `ugal` (minimal or Valiant per message from the source router's occupancies)
//!   and `dal` (per hop minimal or a deroute within a differing dimension, once per dimension,
//!   over a dimension-order escape VC). Zero-load latency exactly `hops + M +
//!   router_delay (hops - 1)` with `hops = 2 +` the router links (derived and tested per pair,
//!   and per intermediate router for Valiant, in `network/hyperx/tests.rs`).
//! - Slim Fly (Besta and Hoefler, SC 2014; `network::slim_fly`, `docs/slim_fly.md`): the MMS
//!   graph of diameter 2 over the field of prime-power order `q`, `2 q^2` routers of network
//!   radix `k' = (3q - δ)/2`, `p` terminals each (`ceil(k'/2)` by default); terminals are the
//!   nodes, routers the further ids. `minimal` (every minimal port, a VC class per hop taken,
//!   V >= 2) and `valiant` (to a random intermediate router and on, V >= 4). Zero-load latency
//!   exactly `hops + M + router_delay (hops - 1)` (tested per pair and intermediate router in
//!   `network/slim_fly/tests.rs`).
//! - Graph (`network::graph`, `docs/graph.md`): routers, their terminals and links from a file;
//!   terminals are the nodes (ids `0..N`, router by router in file order), routers the further
//!   ids. Wormhole only. `up_down` (up*/down* on a BFS spanning tree, shortest legal routes)
//!   and `minimal` (adaptive VCs on every minimal port, VC 0 an up*/down* escape, V >= 2).
//!   Zero-load latency exactly `hops + M + router_delay (hops - 1)` with `hops = 2 +` the
//!   router-to-router links (tested per pair in `network/graph/tests.rs`).
//!
//! - Hypercube broadcast (`broadcast_fraction` beta > 0, Shahrabi, Ould-Khaoua and Mackenzie,
//!   ACM SAC 2001; `engine/broadcast`): a generated message is a broadcast with probability
//!   beta, sent as one-hop wormhole copies down the spanning binomial tree rooted at its source
//!   (base dimension random or round-robin per broadcast); copies join the sending node's
//!   source queue like any message and wait `startup_latency` cycles on their injection VC. A
//!   row's `latency` is then the broadcast latency (first send to last reception; exactly
//!   `n (M + Delta + 1 + router_delay)` at zero load), `unicast_latency` the unicasts'.
//!   beta = 0 draws nothing, so results are bit-identical to a unicast run.
//!
//! # Where the next features go
//!
//! Each seed paper's system is simulated. The extension points, and how the last features came
//! in: a switching technique is a module in `engine/switching/` answering the engine's few questions
//! (scouting and circuit switching); a network is a file in `network/` implementing
//! `network::Network` (numbering, neighbour table, minimal steps, names), a variant of
//! `topology::Family` with its arms in `topology`, plus a `routing` case (the butterfly
//! fat-tree, without an engine change; the dragonfly, one file in `network/` holding numbering
//! and routing cases, whose engine changes are a per-message draw at generation, the
//! intermediate group, and one routing hook, UGAL's read of the output ports' buffer
//! occupancy); a per-node property is a mask consulted by `routing` and `traffic` (static
//! faults);
//! a traffic class that spawns messages is a delivery hook in the engine (`complete` calls
//! `broadcast`, which queues the next copies). None of these changed the cycle loop's data
//! layout.

mod batch_means;
mod divisor;
mod engine;
mod faults;
mod injection;
mod lengths;
pub mod links;
mod network;
mod percentiles;
mod prefetch;
mod rng;
mod routing;
pub mod saturation;
mod sections;
mod stats;
mod throughput;
mod topology;
mod trace;
mod traffic;

pub use throughput::{DEFAULT_SOURCE_QUEUE_CAPACITY, Measure};
pub use trace::{Replay, TraceError, TraceRecord, TraceRecords};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod switching_tests;

#[cfg(test)]
mod replay_tests;

#[cfg(test)]
mod allocator_tests;
#[cfg(test)]
mod packet_tests;
#[cfg(test)]
mod pipeline_tests;
#[cfg(test)]
mod reallocation_tests;
#[cfg(test)]
mod reply_tests;
#[cfg(test)]
mod source_tests;
#[cfg(test)]
mod timing_tests;

use crate::measurement::{Measurement, Status};
use crate::scenario::{Ejection, Injection, Routing, Scenario, Switching, Topology, bounds};

/// Version string of the simulator; part of every cache key. Bump when results change.
pub const VERSION: &str = "sim-1.6.0";

/// Default `circuit_retry_limit`: failed set-up attempts after the first before a circuit-switched
/// message is dropped (the scenario table's, `scenario::fields`).
pub const DEFAULT_CIRCUIT_RETRY_LIMIT: u32 = crate::scenario::fields::DEFAULT_CIRCUIT_RETRY_LIMIT;

/// Largest number of virtual channels (network plus injection) the simulator allocates.
const MAX_VIRTUAL_CHANNELS: u64 = 1 << 27;

/// How long and how precisely to simulate.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SimOptions {
    /// Cycles simulated before measuring.
    pub warmup_cycles: u64,
    /// Length of the measurement window in cycles (with `target_precision`: its minimum, over
    /// which the first `batches` batches are spread).
    pub cycles: u64,
    /// Stop when the 95% CI half-width of mean latency is below this fraction of the mean.
    pub target_precision: Option<f64>,
    /// Hard cap on simulated cycles when `target_precision` is set.
    pub max_cycles: u64,
    /// No flit moved for this many cycles while flits are in the network: deadlock.
    pub deadlock_cycles: u64,
    /// Number of batches for the batch-means confidence interval (>= 2).
    pub batches: u64,
    /// Saturated when source queues hold more than this many messages per node on average.
    pub saturation_backlog: f64,
    /// Seed of the fault map's random stream (`fault_rate > 0`); `None`: derived from the run
    /// seed. The planner sets it per scenario and replication, the same for every load point.
    /// Left out of the serialized form when `None`, so task ids without faults are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault_seed: Option<u64>,

    /// What to measure: latency (the default) or accepted throughput past saturation too
    /// (`throughput`). Left out of the serialized options (the cache keys) when latency.
    #[serde(skip_serializing_if = "Measure::is_latency")]
    pub measure: Measure,

    /// Report the flits each physical link carried in the window (`Measurement::link_loads`;
    /// one count per link, `links::links`). Off by default: a large network's counts would
    /// swell every cache entry. Left out of the serialized options when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub link_loads: bool,
    /// With `link_loads`, also per virtual channel.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub link_loads_per_vc: bool,

    /// Threads that simulate the one network (`engine::split`): the results are those of one
    /// thread, bit for bit, so the setting is never part of a cache key. Only a large network
    /// (one that walks the bitmap) under untimed wormhole switching uses them; any other run
    /// takes one. 0 and 1: one thread.
    #[serde(skip_serializing)]
    pub threads: usize,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            warmup_cycles: 10_000,
            cycles: 100_000,
            target_precision: None,
            max_cycles: 10_000_000,
            deadlock_cycles: 10_000,
            batches: 20,
            saturation_backlog: 50.0,
            fault_seed: None,

            measure: Measure::Latency,
            link_loads: false,
            link_loads_per_vc: false,
            threads: 1,
        }
    }
}

/// Why the simulator cannot run a scenario.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SimError(pub String);

/// The message of the error a run stopped by its [`Progress`] callback returns.
const CANCELLED: &str = "cancelled before the end of the run";

impl SimError {
    /// The error of a run its [`Progress`] callback stopped.
    pub fn cancelled() -> SimError {
        SimError(CANCELLED.into())
    }

    /// Whether this is the error of a run its [`Progress`] callback stopped.
    pub fn is_cancelled(&self) -> bool {
        self.0 == CANCELLED
    }
}

/// Told the progress every 4096 cycles: (cycles done, cycles planned). Returning
/// `ControlFlow::Break` stops the run there, and [`simulate`] returns [`SimError::cancelled`]
/// (the pipeline stops a long task this way after an interrupt). It only reads: a run with a
/// callback that never breaks gives the same results as one without.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) -> std::ops::ControlFlow<()> + Sync);

/// The timing knobs: latencies of at least one cycle, a global latency only on the
/// dragonfly, and wormhole switching (the separate headers of scouting and circuit switching
/// assume one-cycle links); a switch pipeline with unicast traffic; an injection channel with
/// wormhole switching and unicast traffic (on the families whose nodes are routers; the
/// others' terminal links are their injection and ejection channels).
fn check_timing(scenario: &Scenario) -> Result<(), SimError> {
    for (key, value) in [
        ("channel_latency", scenario.channel_latency),
        ("global_channel_latency", scenario.global_channel_latency),
    ] {
        if value == Some(0) {
            return Err(SimError(format!("{key} must be at least 1 cycle")));
        }
    }
    if scenario.global_channel_latency.is_some()
        && !matches!(scenario.topology, Topology::Dragonfly { .. })
    {
        return Err(SimError(format!(
            "global_channel_latency applies to the dragonfly only, but the topology is {}: \
             use channel_latency, or leave it unset",
            scenario.topology.kind()
        )));
    }
    if !scenario.vc_reallocation.is_drained() {
        let why = if !scenario.switching.buffers_flits() {
            Some(format!("{} switching", scenario.switching.kind()))
        } else if scenario.broadcast_fraction > 0.0 {
            Some("broadcasts".to_owned())
        } else {
            None
        };
        if let Some(why) = why {
            return Err(SimError(format!(
                "vc_reallocation: tail_sent is simulated with wormhole or virtual cut-through \
                 switching and unicast traffic only, not with {why}: leave it drained"
            )));
        }
    }
    if engine::timed(scenario) && !scenario.switching.buffers_flits() {
        return Err(SimError(format!(
            "channel_latency, global_channel_latency, credit_delay, switch_delay, \
             vc_allocation_delay and a graph file's link latencies are simulated with wormhole \
             or virtual cut-through switching only, got {}: leave them unset",
            scenario.switching.kind()
        )));
    }
    if scenario.switch_delay.is_some_and(|s| s > 0) && scenario.broadcast_fraction > 0.0 {
        return Err(SimError(
            "switch_delay is simulated with unicast traffic only (broadcast copies are \
             delivered and forwarded without a destination switch): leave it unset"
                .to_owned(),
        ));
    }
    let routers = matches!(
        scenario.topology,
        Topology::Torus { .. } | Topology::Mesh { .. } | Topology::Hypercube { .. }
    );
    // A family whose terminals are not routers has the channels already: its terminal links
    // (the setting changes nothing there, so a router preset applies to every family).
    if scenario.injection == Injection::Channel && routers {
        let why = if !scenario.switching.buffers_flits() {
            format!(
                "{} switching (simulated with wormhole or virtual cut-through switching only)",
                scenario.switching.kind()
            )
        } else if scenario.broadcast_fraction > 0.0 {
            "broadcasts (their copies are sent and timed without one)".to_owned()
        } else {
            return Ok(());
        };
        return Err(SimError(format!(
            "injection: channel does not apply to {why}: leave it parallel"
        )));
    }
    Ok(())
}

/// The switch allocator: the separable one with wormhole switching and interleaved ejection
/// (its ejection port is one output of the router, one flit per cycle), and iterations only
/// for it.
fn check_allocator(scenario: &Scenario) -> Result<(), SimError> {
    if !scenario.vc_allocator.is_sequential() && !scenario.switching.buffers_flits() {
        return Err(SimError(format!(
            "vc_allocator: islip is simulated with wormhole or virtual cut-through switching \
             only, got {}: leave it sequential",
            scenario.switching.kind()
        )));
    }
    if scenario.switch_allocator.is_greedy() {
        if scenario.switch_allocator_iterations.is_some() {
            return Err(SimError(
                "switch_allocator_iterations applies to switch_allocator: islip, but the \
                 allocator is greedy: leave it unset"
                    .to_owned(),
            ));
        }
        return Ok(());
    }
    if scenario.switch_allocator_iterations == Some(0) {
        return Err(SimError("switch_allocator_iterations must be at least 1".to_owned()));
    }
    if !scenario.switching.buffers_flits() {
        return Err(SimError(format!(
            "switch_allocator: islip is simulated with wormhole or virtual cut-through switching \
             only, got {}: leave it greedy",
            scenario.switching.kind()
        )));
    }
    if scenario.ejection != Ejection::Interleaved {
        return Err(SimError(format!(
            "switch_allocator: islip needs ejection: interleaved (its ejection port is one \
             output of the router, one flit per cycle), got {}",
            scenario.ejection.as_str()
        )));
    }
    Ok(())
}

/// Checks that the simulator supports `scenario` (cheap: no tables are built).
pub fn check(scenario: &Scenario) -> Result<(), SimError> {
    let size = topology::Geometry::check(&scenario.topology)?;
    if scenario.switching != Switching::Circuit {
        for (key, set) in [
            ("circuit_backoff", scenario.circuit_backoff.is_some()),
            ("circuit_retry_limit", scenario.circuit_retry_limit.is_some()),
        ] {
            if set {
                return Err(SimError(format!(
                    "{key} applies to circuit switching only, but switching is {}: leave it unset",
                    scenario.switching.kind()
                )));
            }
        }
    }
    check_replies(scenario)?;
    // Request-reply traffic routes each message class over half the VCs.
    routing::Router::new(&engine::routed(scenario), &size)?;
    // Every router's channels, plus the injection VCs of every node.
    let slots = size.channel_slots + scenario.nodes();
    let vcs = slots * u64::from(scenario.virtual_channels);
    if vcs > MAX_VIRTUAL_CHANNELS {
        return Err(SimError(format!(
            "network too large for the simulator: {vcs} virtual channels \
             (at most {MAX_VIRTUAL_CHANNELS}); use fewer nodes or virtual channels"
        )));
    }
    if scenario.buffer_depth == 0 {
        return Err(SimError("buffer_depth must be at least 1 flit".into()));
    }
    if scenario.input_speedup == Some(0) {
        return Err(SimError("input_speedup must be at least 1 flit per cycle".into()));
    }
    if scenario.message_length == 0 {
        return Err(SimError("message_length must be at least 1 flit".into()));
    }
    check_timing(scenario)?;
    check_allocator(scenario)?;
    if scenario.message_length_second_moment.is_some()
        && scenario.message_length_distribution.is_fixed()
    {
        return Err(SimError(
            "message_length_second_moment alone does not say how lengths are drawn: name a \
             message_length_distribution (bimodal, geometric or uniform; it implies the second \
             moment) or leave message_length_second_moment unset for fixed lengths"
                .into(),
        ));
    }
    faults::check(scenario)?;
    // Faults need a switching technique whose header can give up a blocked route (a scouting
    // header backtracks, a circuit probe tears down and retries).
    let fault_tolerant = match scenario.switching {
        Switching::Wormhole | Switching::VirtualCutThrough => false,
        Switching::Scouting { scouting_distance } => scouting_distance >= 1,
        Switching::Circuit => true,
    };
    if scenario.fault_rate != 0.0 && !fault_tolerant {
        return Err(SimError(format!(
            "fault_rate {} needs scouting (scouting_distance >= 1) or circuit switching: the \
             wormhole routings here are not fault-tolerant (dimension order has one path, and \
             Duato's escape path may cross a faulty node), so wormhole runs with fault_rate 0",
            scenario.fault_rate
        )));
    }
    check_broadcasts(scenario)?;
    check_trace(scenario)?;
    check_packets(scenario)?;
    if !scenario.injection_process.is_poisson() && scenario.fault_rate != 0.0 {
        return Err(SimError(format!(
            "injection_process {} is simulated without faulty nodes (its sources are per node; \
             with faults only Poisson sources are): use fault_rate 0 or injection_process \
             poisson",
            scenario.injection_process.as_str()
        )));
    }
    if scenario.topology.nodes() < 2 {
        return Err(SimError("the network needs at least 2 nodes".into()));
    }
    if !scenario.traffic.is_uniform() {
        traffic::Pattern::new(&scenario.traffic, &topology::Geometry::new(&scenario.topology)?)?;
    }
    // The bounds specs and the command line share (the checks above give the simulator's own
    // words where they overlap): huge buffers, delays and back-offs, duplicate hotspot nodes,
    // escape channels a routing would ignore.
    bounds::check(scenario).map_err(SimError)
}

/// Trace replay (`Traffic::Trace`, module `trace`): the trace gives every message's time,
/// endpoints and length, so no injection process, length distribution, faults or broadcasts.
fn check_trace(scenario: &Scenario) -> Result<(), SimError> {
    if scenario.traffic.trace().is_none() {
        return Ok(());
    }
    let conflict = if !scenario.injection_process.is_poisson() {
        Some(format!("injection_process {}", scenario.injection_process.as_str()))
    } else if !scenario.message_length_distribution.is_fixed() {
        Some(format!(
            "message_length_distribution {}",
            scenario.message_length_distribution.as_str()
        ))
    } else if scenario.fault_rate != 0.0 {
        Some(format!("fault_rate {}", scenario.fault_rate))
    } else if scenario.broadcast_fraction != 0.0 {
        Some(format!("broadcast_fraction {}", scenario.broadcast_fraction))
    } else {
        None
    };
    match conflict {
        Some(what) => Err(SimError(format!(
            "trace traffic replays the recorded messages (their times, endpoints and lengths): \
             {what} does not apply; leave it out"
        ))),
        None => Ok(()),
    }
}

/// Request-reply traffic (`engine/replies.rs`): a reply of at least one flit, two message
/// classes of V / 2 VCs each, wormhole or virtual cut-through switching, generated unicast
/// traffic (a trace's records are its messages, a broadcast has no single source to answer);
/// a bound on outstanding requests only with replies.
fn check_replies(scenario: &Scenario) -> Result<(), SimError> {
    let Some(length) = scenario.reply_length else {
        if scenario.outstanding_requests.is_some() {
            return Err(SimError(
                "outstanding_requests bounds the requests waiting for replies: it needs \
                 reply_length (request-reply traffic), or leave it unset"
                    .into(),
            ));
        }
        return Ok(());
    };
    if length == 0 {
        return Err(SimError("reply_length must be at least 1 flit".into()));
    }
    if scenario.outstanding_requests == Some(0) {
        return Err(SimError("outstanding_requests must be at least 1".into()));
    }
    let v = scenario.virtual_channels;
    if v < 2 || !v.is_multiple_of(2) {
        return Err(SimError(format!(
            "request-reply traffic gives requests and replies half the virtual channels each, \
             so that a reply never waits for a request's VC: virtual_channels must be even, \
             got {v}"
        )));
    }
    let conflict = if !scenario.switching.buffers_flits() {
        Some(format!("{} switching", scenario.switching.kind()))
    } else if scenario.broadcast_fraction > 0.0 {
        Some("broadcasts".to_owned())
    } else if scenario.traffic.trace().is_some() {
        Some("trace traffic (the trace's records are the messages)".to_owned())
    } else {
        None
    };
    match conflict {
        Some(what) => Err(SimError(format!(
            "request-reply traffic (reply_length) is simulated with wormhole or virtual \
             cut-through switching and generated unicast traffic, not with {what}: leave \
             reply_length unset"
        ))),
        None => Ok(()),
    }
}

/// Packets and virtual cut-through: a packet of at least one flit, with wormhole or virtual
/// cut-through switching and unicast traffic (a broadcast copy, a circuit or a scouting
/// header's path carries one message); virtual cut-through needs buffers at least one packet
/// deep, so the longest packet must be known.
fn check_packets(scenario: &Scenario) -> Result<(), SimError> {
    if let Some(size) = scenario.packet_size {
        if size == 0 {
            return Err(SimError("packet_size must be at least 1 flit".into()));
        }
        if !scenario.switching.buffers_flits() {
            return Err(SimError(format!(
                "packet_size is simulated with wormhole or virtual cut-through switching, got \
                 {}: leave it unset (a message is then one packet)",
                scenario.switching.kind()
            )));
        }
        if scenario.broadcast_fraction > 0.0 {
            return Err(SimError(
                "packet_size is simulated with unicast traffic (a broadcast copy is one \
                 message): leave it unset"
                    .into(),
            ));
        }
    }
    if scenario.switching != Switching::VirtualCutThrough {
        return Ok(());
    }
    let depth = scenario.buffer_depth;
    let longest_message = if scenario.traffic.trace().is_some() {
        None
    } else {
        match scenario.message_length_distribution.bounds() {
            Some((_, max)) => Some(max),
            None if scenario.message_length_distribution.is_fixed() => {
                Some(scenario.message_length)
            }
            None => None,
        }
    };
    // Replies are messages too.
    let longest_message = longest_message.map(|m| m.max(scenario.reply_length.unwrap_or(0)));
    match (longest_message, scenario.packet_size) {
        (Some(m), p) if p.map_or(m, |p| p.min(m)) <= depth => Ok(()),
        (None, Some(p)) if p <= depth => Ok(()),
        (Some(m), p) => {
            let longest = p.map_or(m, |p| p.min(m));
            Err(SimError(format!(
                "virtual cut-through needs buffers at least one packet deep: the longest packet \
                 has {longest} flits, buffer_depth is {depth}; raise buffer_depth to {longest}, \
                 or set packet_size to at most {depth}"
            )))
        }
        (None, _) => {
            let lengths = if scenario.traffic.trace().is_some() {
                "a trace's message lengths are"
            } else {
                "geometric message lengths are"
            };
            Err(SimError(format!(
                "virtual cut-through needs buffers at least one packet deep, and {lengths} \
                 unbounded: set packet_size to at most buffer_depth ({depth})"
            )))
        }
    }
}

/// Largest start-up latency Delta the simulator accepts, in cycles.
const MAX_STARTUP_LATENCY: f64 = 1e6;

/// Broadcasts (`broadcast_fraction > 0`, module `engine/broadcast`): binomial trees of the
/// binary hypercube, wormhole copies, uniform unicasts, no faults, an integral Delta.
fn check_broadcasts(scenario: &Scenario) -> Result<(), SimError> {
    let beta = scenario.broadcast_fraction;
    if beta == 0.0 {
        return Ok(());
    }
    if !scenario.message_length_distribution.is_fixed() {
        return Err(SimError(format!(
            "broadcasts are simulated with fixed message lengths (the paper's): \
             broadcast_fraction > 0 needs message_length_distribution fixed, got {}",
            scenario.message_length_distribution.as_str()
        )));
    }
    if !(0.0..=1.0).contains(&beta) {
        return Err(SimError(format!(
            "broadcast_fraction is a probability: 0 <= beta <= 1, got {beta}"
        )));
    }
    if !matches!(scenario.topology, Topology::Hypercube { .. }) {
        return Err(SimError(format!(
            "broadcasts follow the hypercube's spanning binomial tree: broadcast_fraction > 0 \
             needs topology hypercube, got {}",
            scenario.topology.kind()
        )));
    }
    if scenario.switching != Switching::Wormhole {
        return Err(SimError(format!(
            "broadcast copies are wormhole messages (the paper's network): broadcast_fraction > 0 \
             needs switching wormhole, got {}",
            scenario.switching.kind()
        )));
    }
    if !scenario.traffic.is_uniform() {
        return Err(SimError(
            "broadcast_fraction > 0 mixes broadcasts with uniform unicasts: leave the traffic \
             pattern uniform (broadcast_mix)"
                .into(),
        ));
    }
    if scenario.fault_rate != 0.0 {
        return Err(SimError(
            "broadcasts with faulty nodes are not simulated: the binomial tree would lose the \
             subtrees behind a faulty node; use fault_rate 0"
                .into(),
        ));
    }
    let delta = scenario.startup_latency;
    if !((0.0..=MAX_STARTUP_LATENCY).contains(&delta) && delta.fract() == 0.0) {
        return Err(SimError(format!(
            "the simulator counts whole cycles: startup_latency must be an integer from 0 to \
             {MAX_STARTUP_LATENCY}, got {delta}"
        )));
    }
    Ok(())
}

/// Whether simulating `scenario` uses more than one thread where [`SimOptions::threads`] gives
/// it several: the untimed wormhole (or virtual cut-through) engine on a network of at least
/// 32,768 VCs on links, walking the bitmap without an input speedup, an injection channel or
/// the separable switch allocator. Any other run takes one thread whatever it is given, so a
/// scheduler handing out cores asks this first. It builds the network's geometry (a few
/// milliseconds for a million nodes, and a read of a graph file's parsed links): ask it of
/// the tasks that would get more than one thread.
pub fn uses_threads(scenario: &Scenario) -> bool {
    engine::uses_threads(scenario)
}

/// Simulates `scenario` at `rate` messages/node/cycle with the given seed.
///
/// Configuration errors are returned before anything runs; saturation and deadlock are
/// results (`Measurement::status`), not errors.
pub fn simulate(
    scenario: &Scenario,
    rate: f64,
    options: &SimOptions,
    seed: u64,
    progress: Option<Progress<'_>>,
) -> Result<Measurement, SimError> {
    check(scenario)?;
    if scenario.traffic.trace().is_some() {
        return Err(SimError(
            "trace traffic is replayed from its records: call `sim::replay` with them".into(),
        ));
    }
    run(scenario, rate, options, seed, progress)
}

/// Replays a trace (`scenario.traffic` is `Traffic::Trace`) on the scenario's network: the
/// records of `replay` are generated with open-loop timing, each at its source in cycle
/// `round(t * time_scale)` (module `trace`). The measurement window is `warmup_cycles` to
/// `warmup_cycles + cycles` in simulated time, closed early when the trace ends; messages of
/// the window are followed until delivered, as with generated traffic. A record the stream
/// or the network refuses ends the run with an error naming it.
pub fn replay(
    scenario: &Scenario,
    replay: Replay,
    options: &SimOptions,
    seed: u64,
    progress: Option<Progress<'_>>,
) -> Result<Measurement, SimError> {
    check(scenario)?;
    if scenario.traffic.trace().is_none() {
        return Err(SimError("sim::replay needs trace traffic".into()));
    }
    let scale = replay.time_scale;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(SimError(format!(
            "the trace time scale must be a positive, finite number, got {}",
            crate::number::compact(scale)
        )));
    }
    if options.target_precision.is_some() {
        return Err(SimError(
            "a replayed trace is measured over a fixed window (it may end before any precision \
             is reached): leave target_precision unset"
                .into(),
        ));
    }
    let plan = plan(scenario, options)?;
    let nodes = u32::try_from(scenario.nodes())
        .map_err(|_| SimError("network too large for the simulator".into()))?;
    let feed = trace::Feed::new(replay, nodes);
    let engine = engine::Engine::new(scenario, 0.0, seed, &plan)?.with_trace(feed);
    finish(engine, &plan, options, progress)
}

/// [`simulate`] without [`check`] (the unit tests also run fault maps under wormhole switching,
/// which `check` refuses).
fn run(
    scenario: &Scenario,
    rate: f64,
    options: &SimOptions,
    seed: u64,
    progress: Option<Progress<'_>>,
) -> Result<Measurement, SimError> {
    if !rate.is_finite() || rate < 0.0 {
        return Err(SimError(format!(
            "rate must be a finite number >= 0, got {}",
            crate::number::compact(rate)
        )));
    }
    faults::check(scenario)?;
    scenario.injection_process.check_rate(rate).map_err(SimError)?;
    let plan = plan(scenario, options)?;
    if plan.source_queue_capacity.is_some() && rate > f64::from(scenario.virtual_channels) {
        // Each node injects at most one flit per injection VC and cycle: the rest would be
        // dropped anyway, and generating it would only cost time.
        return Err(SimError(format!(
            "throughput mode: rate must be at most virtual_channels = {} messages/node/cycle \
             (what the injection channels can take), got {}",
            scenario.virtual_channels,
            crate::number::compact(rate)
        )));
    }
    let engine = engine::Engine::new(scenario, rate, seed, &plan)?;
    finish(engine, &plan, options, progress)
}

/// Runs a built engine to its end and summarizes it.
fn finish(
    mut engine: engine::Engine,
    plan: &engine::RunPlan,
    options: &SimOptions,
    progress: Option<Progress<'_>>,
) -> Result<Measurement, SimError> {
    let outcome = engine.run(plan, progress);
    match outcome {
        engine::Outcome::Cancelled => return Err(SimError::cancelled()),
        engine::Outcome::Failed(error) => return Err(SimError(error)),
        _ => {}
    }
    let mut measurement = stats::summarize(&engine, outcome);
    if options.link_loads || options.link_loads_per_vc {
        measurement.link_loads = stats::link_loads(&engine, options.link_loads_per_vc);
    }
    if let Some(map) = &engine.faults {
        map.annotate(&mut measurement);
    }
    if measurement.status == Status::Ok && measurement.latency.is_none() {
        // `ok` promises a measured latency; a window in which no message was generated and
        // delivered measured nothing.
        return Err(SimError(format!(
            "nothing was measured: no message generated in the {}-cycle window was delivered \
             (messages_measured = {}); raise the rate or lengthen `cycles`",
            options.cycles,
            measurement.messages_measured.unwrap_or(0)
        )));
    }
    Ok(measurement)
}

/// Validates the options and resolves them into a run plan.
fn plan(scenario: &Scenario, options: &SimOptions) -> Result<engine::RunPlan, SimError> {
    if options.cycles == 0 {
        return Err(SimError("cycles (the measurement window) must be at least 1".into()));
    }
    if options.batches < 2 {
        return Err(SimError("batches must be at least 2".into()));
    }
    if options.deadlock_cycles <= u64::from(scenario.router_delay) {
        // A lone header waits router_delay cycles at each router without any flit moving.
        return Err(SimError(format!(
            "deadlock_cycles must exceed router_delay ({}), got {}",
            scenario.router_delay, options.deadlock_cycles
        )));
    }
    if scenario.broadcast_fraction > 0.0
        && options.deadlock_cycles as f64
            <= scenario.startup_latency + f64::from(scenario.router_delay)
    {
        // A lone broadcast copy holds its injection VC for Delta cycles without any flit moving.
        return Err(SimError(format!(
            "deadlock_cycles must exceed startup_latency + router_delay ({}), got {}",
            scenario.startup_latency + f64::from(scenario.router_delay),
            options.deadlock_cycles
        )));
    }
    if let Some(target) = options.target_precision {
        if !(target.is_finite() && target > 0.0) {
            return Err(SimError(format!(
                "target_precision must be > 0, got {}",
                crate::number::compact(target)
            )));
        }
        if options.max_cycles <= options.warmup_cycles {
            return Err(SimError("max_cycles must exceed warmup_cycles".into()));
        }
    }
    if !(options.saturation_backlog.is_finite() && options.saturation_backlog > 0.0) {
        return Err(SimError("saturation_backlog must be a positive number".into()));
    }
    for (field, value) in [
        ("warmup_cycles", options.warmup_cycles),
        ("cycles", options.cycles),
        ("max_cycles", options.max_cycles),
        ("deadlock_cycles", options.deadlock_cycles),
    ] {
        bounds::cycles(field, value).map_err(SimError)?;
    }
    let nodes = scenario.topology.nodes() as f64;
    let source_queue_capacity = options.measure.source_queue_capacity();
    if source_queue_capacity == Some(0) {
        return Err(SimError("source_queue_capacity must be at least 1 message".into()));
    }
    if let Some(capacity) = source_queue_capacity {
        // The queues grow to their cap past saturation: bound what they may hold in all.
        bounds::source_queue_capacity(capacity, scenario.topology.nodes()).map_err(SimError)?;
    }
    if source_queue_capacity.is_some() && options.target_precision.is_some() {
        return Err(SimError(
            "throughput mode measures a fixed window: leave target_precision unset".into(),
        ));
    }
    Ok(engine::RunPlan {
        warmup: options.warmup_cycles,
        cycles: options.cycles,
        precision: options.target_precision,
        max_cycles: options.max_cycles,
        deadlock_cycles: options.deadlock_cycles,
        batches: options.batches,
        fault_seed: options.fault_seed,
        backlog_limit: match source_queue_capacity {
            // Throughput mode never stops for a backlog; the cap bounds the queues.
            Some(_) => u64::MAX,
            None => (options.saturation_backlog * nodes).ceil() as u64,
        },
        source_queue_capacity,
        threads: options.threads.max(1),
    })
}

/// The fixed benchmark configurations used by `runner bench`: (name, scenario, rate, options).
/// Each runs for about 1 to 3 seconds in release on a 2-core machine. The first three are
/// wormhole; then scouting switching (K = 3), circuit switching, the butterfly fat-tree,
/// hypercube broadcasts, the dragonfly, the k-ary n-tree, the HyperX, the Slim Fly and a graph
/// (a 16 x 16 mesh written as a graph file, built here, under minimal routing with the
/// up*/down* escape).
pub fn bench_configurations() -> Vec<(&'static str, Scenario, f64, SimOptions)> {
    let options = |warmup: u64, cycles: u64| SimOptions {
        warmup_cycles: warmup,
        cycles,
        ..SimOptions::default()
    };
    vec![
        (
            "torus8x8_dimension_order_v2",
            Scenario {
                routing: Routing::DimensionOrder,
                virtual_channels: 2,
                buffer_depth: 8,
                message_length: 32,
                ..Scenario::new(Topology::Torus { radix: 8, dimensions: 2 })
            },
            0.005,
            options(10_000, 3_000_000),
        ),
        (
            // The 256 x 256 torus (65,536 nodes) at about half its saturation rate: the 8 x 8
            // torus saturates at 0.0092 messages/node/cycle (`runner simulate --saturation`),
            // and the dimension-order bound scales as 1/k, so 0.0092 * 8/256 = 0.00029. Its
            // state leaves the caches (`sim::engine`, the bitmap walk); a short run.
            "torus256x256_dimension_order_v2",
            Scenario {
                routing: Routing::DimensionOrder,
                virtual_channels: 2,
                buffer_depth: 8,
                message_length: 32,
                ..Scenario::new(Topology::Torus { radix: 256, dimensions: 2 })
            },
            0.000144,
            options(500, 500),
        ),
        (
            "torus16x16_duato_v6",
            Scenario {
                routing: Routing::Duato,
                virtual_channels: 6,
                message_length: 32,
                ..Scenario::new(Topology::Torus { radix: 16, dimensions: 2 })
            },
            0.004,
            options(10_000, 150_000),
        ),
        (
            "hypercube8_duato_v4",
            Scenario {
                routing: Routing::Duato,
                virtual_channels: 4,
                message_length: 32,
                ..Scenario::new(Topology::Hypercube { dimensions: 8 })
            },
            0.01,
            options(10_000, 150_000),
        ),
        (
            "torus8x8_scouting3_duato_v6",
            Scenario {
                switching: Switching::Scouting { scouting_distance: 3 },
                routing: Routing::Duato,
                virtual_channels: 6,
                message_length: 32,
                ..Scenario::new(Topology::Torus { radix: 8, dimensions: 2 })
            },
            0.008,
            options(10_000, 150_000),
        ),
        (
            "torus8x8_circuit_adaptive_v6",
            Scenario {
                switching: Switching::Circuit,
                routing: Routing::Adaptive,
                virtual_channels: 6,
                message_length: 32,
                ejection: crate::scenario::Ejection::Unlimited,
                ..Scenario::new(Topology::Torus { radix: 8, dimensions: 2 })
            },
            0.006,
            options(10_000, 150_000),
        ),
        (
            // Greenberg and Guan's Fig. 3 network at half the model's maximum throughput
            // (0.00122 messages/processor/cycle for M = 32).
            "fat_tree1024_up_down_v1",
            Scenario {
                routing: Routing::UpDown,
                virtual_channels: 1,
                message_length: 32,
                ejection: crate::scenario::Ejection::Unlimited,
                ..Scenario::new(Topology::FatTree { processors: 1024 })
            },
            0.00061,
            options(10_000, 300_000),
        ),
        (
            // Shahrabi et al.'s largest network with 1% broadcasts, at 40% of the model's
            // saturation rate (0.0230 messages/node/cycle).
            "hypercube8_broadcast_duato_v4",
            Scenario {
                routing: Routing::Duato,
                virtual_channels: 4,
                message_length: 32,
                broadcast_fraction: 0.01,
                ejection: crate::scenario::Ejection::Unlimited,
                ..Scenario::new(Topology::Hypercube { dimensions: 8 })
            },
            0.0092,
            options(10_000, 150_000),
        ),
        (
            // The balanced dragonfly with p = 4 (1,056 terminals, 33 groups) under UGAL-L,
            // uniform traffic at 0.2 flits per terminal and cycle.
            "dragonfly_p4_ugal_v3",
            Scenario {
                routing: Routing::Ugal,
                virtual_channels: 3,
                buffer_depth: 8,
                message_length: 8,
                ..Scenario::new(Topology::Dragonfly {
                    terminals_per_router: 4,
                    routers_per_group: 8,
                    global_links_per_router: 4,
                    global_arrangement: crate::scenario::GlobalArrangement::Absolute,
                })
            },
            0.025,
            options(10_000, 100_000),
        ),
        (
            // The 8-ary 3-tree (512 terminals, 192 switches) under up_down with V = 2, uniform
            // traffic at half its saturation (0.0666 messages/terminal/cycle for M = 8,
            // `runner simulate --saturation`).
            "kary_ntree8_3_up_down_v2",
            Scenario {
                routing: Routing::UpDown,
                virtual_channels: 2,
                buffer_depth: 4,
                message_length: 8,
                ..Scenario::new(Topology::KaryNTree {
                    radix: 8,
                    dimensions: 3,
                    up_links_per_switch: None,
                })
            },
            0.0333,
            options(10_000, 100_000),
        ),
        (
            // The HyperX S = 8, L = 2, T = 8 (the flattened butterfly: 512 terminals, 64
            // routers of radix 22) under dimension order with V = 2, uniform traffic at half
            // its saturation (0.064 messages/terminal/cycle for M = 8, `runner simulate
            // --saturation`).
            "hyperx8_2_t8_dimension_order_v2",
            Scenario {
                routing: Routing::DimensionOrder,
                virtual_channels: 2,
                buffer_depth: 4,
                message_length: 8,
                ..Scenario::new(Topology::HyperX {
                    radix: 8,
                    dimensions: 2,
                    terminals_per_router: 8,
                    trunking: None,
                })
            },
            0.032,
            options(10_000, 100_000),
        ),
        (
            // The Slim Fly q = 7 (98 routers of network radix 11, the balanced p = 6: 588
            // terminals) under minimal routing with V = 4, uniform traffic at half its
            // saturation (0.077 messages/terminal/cycle for M = 8, `runner simulate
            // --saturation`).
            "slim_fly7_p6_minimal_v4",
            Scenario {
                routing: Routing::Minimal,
                virtual_channels: 4,
                buffer_depth: 4,
                message_length: 8,
                ..Scenario::new(Topology::SlimFly { prime_power: 7, terminals_per_router: 6 })
            },
            0.0385,
            options(10_000, 100_000),
        ),
        (
            // The 16 x 16 mesh as a graph (256 routers with one terminal each), minimal
            // routing with the up*/down* escape, uniform traffic at 0.08 flits per terminal
            // and cycle (about half its saturation load).
            "graph_mesh16_minimal_v3",
            Scenario {
                routing: Routing::Minimal,
                virtual_channels: 3,
                buffer_depth: 4,
                message_length: 16,
                ..Scenario::new(Topology::Graph { graph: std::sync::Arc::new(mesh_graph(16)) })
            },
            0.005,
            options(10_000, 100_000),
        ),
    ]
}

/// A `k x k` mesh as a graph (router `x_y`, one terminal each, row by row), for the bench.
pub(crate) fn mesh_graph(k: u32) -> crate::scenario::Graph {
    let text = network::graph::mesh_text(k);
    let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
    let name = format!("mesh{k}x{k} (built in)");
    // The text above is a valid graph; should it ever not be, the bench names an empty one.
    crate::scenario::graph::parse(&name, &text, hash.clone()).unwrap_or(crate::scenario::Graph {
        file: name,
        blake3: hash,
        routers: Vec::new(),
        links: Vec::new(),
        latencies: Vec::new(),
        root: 0,
        table: None,
    })
}
