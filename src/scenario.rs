//! The shared vocabulary: what physical system is being evaluated.
//!
//! A [`Scenario`] is plain data. The spec layer builds one per sweep point; the
//! analytical models ([`crate::model`]) and the simulator ([`crate::sim`]) both
//! take one and return a [`crate::measurement::Measurement`]. Nothing here does
//! I/O or knows about YAML.
//!
//! This file holds the switching and routing vocabulary and [`Scenario`] itself;
//! `topology` the network families ([`Topology`], [`TopologyKind`]) and what every layer asks
//! of one, [`fields`] the table of every scenario field (names, bounds, display names, roles),
//! [`bounds`] the checks every path applies, `lengths` the message-length distributions,
//! `traffic` the patterns, traces and injection processes, and [`graph`] a graph file's
//! parser.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod bounds;
pub mod fields;
pub mod graph;
mod lengths;
mod topology;
mod traffic;

pub use graph::Graph;
pub use lengths::{LengthDistributionKind, MessageLengths};
pub use traffic::{InjectionProcess, InjectionProcessKind, TraceFile, TraceSummary, Traffic};

/// Number of simulated or modelled clock cycles.
pub type Cycles = u64;

pub(crate) use topology::each_topology_count;
pub use topology::{GlobalArrangement, Topology, TopologyKind, slim_fly_network_radix};

/// How a message reserves resources on its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Switching {
    /// Wormhole switching: the header advances as soon as a channel is free.
    Wormhole,
    /// Scouting switching: the header runs up to K links ahead of the data (K = 0 is wormhole).
    Scouting {
        /// K, the distance the header may run ahead of the first data flit.
        scouting_distance: u32,
    },
    /// Circuit switching: a probe sets the whole path up before data moves.
    Circuit,
    /// Virtual cut-through switching: as wormhole, but a header is granted an output VC only
    /// when its buffer can hold the whole packet, so a blocked packet ends up in one buffer.
    VirtualCutThrough,
}

/// The switching techniques by name: `switching.kind` in a spec, the `switching` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwitchingKind {
    /// Wormhole switching.
    Wormhole,
    /// Scouting switching.
    Scouting,
    /// Circuit switching.
    Circuit,
    /// Virtual cut-through switching.
    VirtualCutThrough,
}

impl SwitchingKind {
    /// The name used in specs, rows and on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            SwitchingKind::Wormhole => "wormhole",
            SwitchingKind::Scouting => "scouting",
            SwitchingKind::Circuit => "circuit",
            SwitchingKind::VirtualCutThrough => "virtual_cut_through",
        }
    }
}

impl Switching {
    /// The technique, without its parameters.
    pub fn technique(&self) -> SwitchingKind {
        match self {
            Switching::Wormhole => SwitchingKind::Wormhole,
            Switching::Scouting { .. } => SwitchingKind::Scouting,
            Switching::Circuit => SwitchingKind::Circuit,
            Switching::VirtualCutThrough => SwitchingKind::VirtualCutThrough,
        }
    }

    /// Wormhole or virtual cut-through: the header is the first data flit and advances hop by
    /// hop with the packet's flits behind it in VC buffers (no separate header, no path set
    /// up first).
    pub fn buffers_flits(&self) -> bool {
        matches!(self, Switching::Wormhole | Switching::VirtualCutThrough)
    }

    /// Short name used in result rows.
    pub fn kind(&self) -> &'static str {
        self.technique().as_str()
    }

    /// K for scouting switching, `None` otherwise.
    pub fn scouting_distance(&self) -> Option<u32> {
        match *self {
            Switching::Scouting { scouting_distance } => Some(scouting_distance),
            _ => None,
        }
    }
}

/// The routing algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// Deterministic dimension-order (e-cube) routing.
    DimensionOrder,
    /// Fully adaptive minimal routing with no deadlock avoidance.
    Adaptive,
    /// Duato's protocol: adaptive virtual channels plus a deterministic escape class.
    Duato,
    /// Duato-Nbc: adaptive channels plus negative-hop escape levels with bonus cards.
    Nbc,
    /// Up/down routing: on the fat-trees up to a nearest common ancestor by any free up port,
    /// then down; on a graph up*/down* on a spanning tree.
    UpDown,
    /// Up/down routing on the fat-trees with the up port drawn at random per message and hop.
    UpDownRandom,
    /// D-mod-k on the k-ary n-tree: up/down with the up port at level `l` the destination's
    /// base-k digit `l - 1`, `floor(d / k^(l-1)) mod k` (deterministic, by destination).
    #[serde(rename = "d_mod_k")]
    DModK,
    /// West-first turn-model routing (2-D mesh; Glass and Ni, 1992).
    WestFirst,
    /// Odd-even turn-model routing (2-D mesh; Chiu, 2000).
    OddEven,
    /// Dragonfly minimal routing: local, global, local hop (Kim et al., 2008); on a graph,
    /// shortest paths with an up*/down* escape channel.
    Minimal,
    /// Dragonfly Valiant routing: minimally to a random intermediate group, then minimally on;
    /// on the HyperX, in dimension order to a random intermediate router, then on.
    Valiant,
    /// UGAL-L: minimal or Valiant per message, chosen at the source router from the occupancy
    /// of its two candidate output ports (the dragonfly; the HyperX).
    Ugal,
    /// Dragonfly UGAL-G: as UGAL-L, but the choice weighs the queues of each route's global
    /// channel (and of the local channel to it) in the source group, wherever they are.
    UgalGlobal,
    /// Dragonfly PAR (progressive adaptive routing): UGAL-L at the source router, and a message
    /// sent minimally may still turn to its Valiant route at the next router of its group.
    Par,
    /// BookSim 2's dragonfly UGAL (`ugal_dragonflynew`): via a random intermediate router
    /// instead of a group, minimal iff the minimal port's occupancy is at most twice the other
    /// port's plus 30 flits, decided once at the source router, a VC class per phase.
    UgalBooksim,
    /// The HyperX's DAL (dimensionally adaptive, load-balanced; Ahn et al., SC 2009): minimal
    /// adaptive hops in any unaligned dimension, or a deroute to another coordinate of one
    /// (at most one per dimension) when the minimal links are the more loaded, over a
    /// dimension-order escape channel.
    Dal,
    /// A graph file's own routing table: its `route` lines give the allowed next hops and VC
    /// classes per router and destination (checked deadlock-free when loaded), optionally
    /// over an up*/down* escape channel.
    Table,
}

impl Routing {
    /// Every routing, in the order the CLI lists them.
    pub const ALL: [Routing; 17] = [
        Routing::DimensionOrder,
        Routing::Adaptive,
        Routing::Duato,
        Routing::Nbc,
        Routing::UpDown,
        Routing::UpDownRandom,
        Routing::DModK,
        Routing::WestFirst,
        Routing::OddEven,
        Routing::Minimal,
        Routing::Valiant,
        Routing::Ugal,
        Routing::UgalGlobal,
        Routing::Par,
        Routing::UgalBooksim,
        Routing::Dal,
        Routing::Table,
    ];

    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Routing::DimensionOrder => "dimension_order",
            Routing::Adaptive => "adaptive",
            Routing::Duato => "duato",
            Routing::Nbc => "nbc",
            Routing::UpDown => "up_down",
            Routing::UpDownRandom => "up_down_random",
            Routing::DModK => "d_mod_k",
            Routing::WestFirst => "west_first",
            Routing::OddEven => "odd_even",
            Routing::Minimal => "minimal",
            Routing::Valiant => "valiant",
            Routing::Ugal => "ugal",
            Routing::UgalGlobal => "ugal_global",
            Routing::Par => "par",
            Routing::UgalBooksim => "ugal_booksim",
            Routing::Dal => "dal",
            Routing::Table => "table",
        }
    }
}

/// How many messages a node's ejection port accepts at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ejection {
    /// One message at a time (what the SS and Nbc papers state; the default).
    #[default]
    Single,
    /// Any number of messages at once, each at one flit per cycle (consumed on arrival, as
    /// the hypercube, circuit-switching and fat-tree papers assume).
    Unlimited,
    /// One flit per cycle per node, taken round-robin from every message that has reached it,
    /// so the flits of several messages interleave (BookSim's and real routers' ejection port).
    Interleaved,
}

impl Ejection {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Ejection::Single => "single",
            Ejection::Unlimited => "unlimited",
            Ejection::Interleaved => "interleaved",
        }
    }
}

impl fields::Named for Ejection {
    const ALL: &'static [Ejection] =
        &[Ejection::Single, Ejection::Interleaved, Ejection::Unlimited];

    fn as_str(&self) -> &'static str {
        Ejection::as_str(self)
    }
}

/// How a node's messages enter its router.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Injection {
    /// The node's V injection VCs each send a flit per cycle straight onto the router's output
    /// links, with no router pipeline at the source (the models' source; the default).
    #[default]
    Parallel,
    /// One injection channel of one flit per cycle into the router's local input port, whose
    /// VCs are `buffer_depth` flits deep, fed by a source that sends one message at a time
    /// (BookSim's network interface): the header crosses it in a cycle and waits the source
    /// router's `router_delay`, as at every router; the tail reaches the node over a one-cycle
    /// ejection channel (BookSim's terminal channels). Where terminals are not routers, their
    /// link is the channel: a terminal sends one message at a time over it.
    Channel,
}

impl Injection {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Injection::Parallel => "parallel",
            Injection::Channel => "channel",
        }
    }

    /// Whether it is the default, `parallel` (left out of the serialized form).
    pub fn is_parallel(&self) -> bool {
        *self == Injection::Parallel
    }
}

impl fields::Named for Injection {
    const ALL: &'static [Injection] = &[Injection::Parallel, Injection::Channel];

    fn as_str(&self) -> &'static str {
        Injection::as_str(self)
    }
}

/// When an output VC may be granted to the next message (the VC reallocation policy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VcReallocation {
    /// Once the downstream buffer has drained the tail (with a credit loop: once the tail's
    /// credit is back), so a buffer holds one message at a time (the models' router and
    /// BookSim's `wait_for_tail_credit = 1`; the default).
    #[default]
    Drained,
    /// As soon as the tail has been sent into it: the next message's flits queue in the buffer
    /// behind the last one's, and its header is routed when that tail has left (BookSim's
    /// default, `wait_for_tail_credit = 0`).
    TailSent,
}

impl VcReallocation {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            VcReallocation::Drained => "drained",
            VcReallocation::TailSent => "tail_sent",
        }
    }

    /// Whether it is the default, `drained` (left out of the serialized form).
    pub fn is_drained(&self) -> bool {
        *self == VcReallocation::Drained
    }
}

impl fields::Named for VcReallocation {
    const ALL: &'static [VcReallocation] = &[VcReallocation::Drained, VcReallocation::TailSent];

    fn as_str(&self) -> &'static str {
        VcReallocation::as_str(self)
    }
}

/// How a router matches its input ports to its outputs each cycle (the switch allocator).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwitchAllocator {
    /// Each output serves its VCs round-robin, passing over a VC whose input port has no slot
    /// left to its next one: a maximal matching, the idealised router's (the default).
    #[default]
    Greedy,
    /// A separable iSLIP allocator (McKeown, IEEE/ACM ToN 1999), BookSim's default: each input
    /// requests, per output, its VC first in round-robin order; each output grants one input
    /// and each input accepts one grant, round-robin, the pointers moving on an acceptance in
    /// the first iteration; `switch_allocator_iterations` rounds.
    Islip,
}

impl SwitchAllocator {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            SwitchAllocator::Greedy => "greedy",
            SwitchAllocator::Islip => "islip",
        }
    }

    /// Whether it is the default, `greedy` (left out of the serialized form).
    pub fn is_greedy(&self) -> bool {
        *self == SwitchAllocator::Greedy
    }
}

impl fields::Named for SwitchAllocator {
    const ALL: &'static [SwitchAllocator] = &[SwitchAllocator::Greedy, SwitchAllocator::Islip];

    fn as_str(&self) -> &'static str {
        SwitchAllocator::as_str(self)
    }
}

/// How a router gives output VCs to its waiting headers each cycle (the VC allocator).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VcAllocator {
    /// One header after another, oldest first, each taking a free allowed VC drawn at random:
    /// no header loses a VC it could have had (the idealised router's; the default).
    #[default]
    Sequential,
    /// A separable iSLIP allocator over all waiting headers at once, BookSim's default: each
    /// output VC grants one requesting header and each header accepts one grant, round-robin.
    Islip,
}

impl VcAllocator {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            VcAllocator::Sequential => "sequential",
            VcAllocator::Islip => "islip",
        }
    }

    /// Whether it is the default, `sequential` (left out of the serialized form).
    pub fn is_sequential(&self) -> bool {
        *self == VcAllocator::Sequential
    }
}

impl fields::Named for VcAllocator {
    const ALL: &'static [VcAllocator] = &[VcAllocator::Sequential, VcAllocator::Islip];

    fn as_str(&self) -> &'static str {
        VcAllocator::as_str(self)
    }
}

/// How the dragonfly's routings put their VC classes (a message's class rises with the global
/// hops it takes) on the virtual channels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VcClasses {
    /// Each class spread over the VCs: local hops of class c on the VCs v with v mod 2 = c
    /// (minimal) or v mod 3 = c (valiant, ugal), global hops on every VC (minimal) or v mod 2 =
    /// c (the default).
    #[default]
    Spread,
    /// One VC per class, the rest idle: a route's VC is the number of global hops it has
    /// started, so its local hops before the first global hop take VC 0 and the global hop
    /// and everything after it VC 1 (valiant, ugal: the second global hop and after, VC 2).
    /// BookSim's dragonfly (`dragonflynew`).
    OnePerClass,
}

impl VcClasses {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            VcClasses::Spread => "spread",
            VcClasses::OnePerClass => "one_per_class",
        }
    }

    /// Whether it is the default, `spread` (left out of the serialized form).
    pub fn is_spread(&self) -> bool {
        *self == VcClasses::Spread
    }
}

impl fields::Named for VcClasses {
    const ALL: &'static [VcClasses] = &[VcClasses::Spread, VcClasses::OnePerClass];

    fn as_str(&self) -> &'static str {
        VcClasses::as_str(self)
    }
}

/// A router whose knobs a spec (`router: booksim`) or the command line (`router=booksim`) sets
/// in one word. Each knob it names applies where the key is left out; a key given overrides
/// it. It is no scenario field: the scenario holds the knobs it set, and so do the results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouterPreset {
    /// Every knob at its default: the idealised router of the analytical papers.
    #[default]
    Ideal,
    /// BookSim 2's input-queued router with its defaults (`iq_router`): a 8-flit buffer per
    /// VC, route computation, VC allocation, then switch allocation and traversal (router_delay
    /// 1, vc_allocation_delay 1, switch_delay 2, credit_delay 1), input speedup 1, a separable
    /// iSLIP switch allocator, VCs reallocated once the tail is sent, injection and ejection
    /// channels, interleaved ejection, an iSLIP VC allocator.
    Booksim,
}

impl RouterPreset {
    /// The name used in specs and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            RouterPreset::Ideal => "ideal",
            RouterPreset::Booksim => "booksim",
        }
    }

    /// The knobs it sets, as (key, value) in a spec's words; the one list both the spec and
    /// the command line apply.
    pub fn knobs(&self) -> &'static [(&'static str, &'static str)] {
        match self {
            RouterPreset::Ideal => &[],
            RouterPreset::Booksim => &[
                ("buffer_depth", "8"),
                ("router_delay", "1"),
                ("vc_allocation_delay", "1"),
                ("switch_delay", "2"),
                ("credit_delay", "1"),
                ("input_speedup", "1"),
                ("switch_allocator", "islip"),
                ("vc_allocator", "islip"),
                ("vc_reallocation", "tail_sent"),
                ("injection", "channel"),
                ("ejection", "interleaved"),
            ],
        }
    }

    /// The value it gives `key`, read as a `T`; `None` where it sets no such key.
    pub fn value<T: fields::FromWord>(&self, key: &str) -> Option<T> {
        let word = self.knobs().iter().find(|(k, _)| *k == key)?.1;
        T::from_word(word)
    }
}

impl fields::Named for RouterPreset {
    const ALL: &'static [RouterPreset] = &[RouterPreset::Ideal, RouterPreset::Booksim];

    fn as_str(&self) -> &'static str {
        RouterPreset::as_str(self)
    }
}

/// How a hypercube broadcast chooses the base dimension of its spanning binomial tree
/// (Abraham and Padmanabhan's balancing: a different base for every new broadcast tree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BroadcastOrder {
    /// Uniformly at random per broadcast (the default).
    #[default]
    Random,
    /// Round-robin per source node: its first broadcast starts at dimension 0, the next at 1.
    RoundRobin,
}

impl BroadcastOrder {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            BroadcastOrder::Random => "random",
            BroadcastOrder::RoundRobin => "round_robin",
        }
    }

    /// Whether this is the default (`random`), left out of serialized scenarios (cache keys).
    pub fn is_random(&self) -> bool {
        *self == BroadcastOrder::Random
    }
}

/// Which dateline virtual-channel class a torus dimension-order route uses on each hop.
///
/// Both are deadlock-free for minimal routing; they differ in how evenly the two classes share
/// the links (docs in `sim::routing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dateline {
    /// The class is fixed once per ring traversal: class 0 for the whole traversal if it will
    /// cross the wrap-around link, class 1 otherwise (the default for `dimension_order`).
    PerTraversal,
    /// Dally-Seitz: class 0 until the wrap-around link, class 1 after it (or class 1
    /// throughout when the route never wraps). Duato's escape class always uses it.
    Switch,
}

impl Dateline {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Dateline::PerTraversal => "per_traversal",
            Dateline::Switch => "switch",
        }
    }
}

/// Which way a torus dimension-order route goes when both directions are minimal (distance
/// exactly k/2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// At random, drawn once per message and dimension (the default for `dimension_order`).
    Random,
    /// Always the + direction (Duato's escape class always uses it).
    Positive,
}

impl TieBreak {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            TieBreak::Random => "random",
            TieBreak::Positive => "positive",
        }
    }
}

/// One fully resolved physical system: every field has a value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    /// The network.
    pub topology: Topology,
    /// The switching technique.
    pub switching: Switching,
    /// The routing algorithm.
    pub routing: Routing,
    /// Virtual channels per physical channel, V >= 1.
    pub virtual_channels: u32,
    /// Escape virtual channels (Duato-Nbc's V2; Duato's escape class), `None` for the default split.
    pub escape_channels: Option<u32>,
    /// Flit buffers per virtual channel (simulator only).
    pub buffer_depth: u32,
    /// Extra pipeline cycles per hop in the router (simulator only; the papers assume 0).
    pub router_delay: u32,
    /// Flits one input port (the VCs behind one incoming channel, or a node's injection VCs)
    /// may send per cycle, ejection included (simulator only); `None`: unlimited. Left out of
    /// the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_speedup: Option<u32>,
    /// Cycles a flit takes over a link between two routers (simulator only); `None`: 1. Left
    /// out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_latency: Option<u32>,
    /// Cycles a flit takes over a dragonfly's global link (simulator only); `None`:
    /// `channel_latency`. Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_channel_latency: Option<u32>,
    /// Cycles a credit takes back beyond its link's latency (simulator only); `None`: 0. Left
    /// out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_delay: Option<u32>,
    /// Cycles every flit spends in each router's switch stages (switch allocation and
    /// traversal) between leaving its input buffer and entering the next link (simulator
    /// only); `None`: 0. Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_delay: Option<u32>,
    /// Cycles from a header's grant of an output VC (or of the ejection port) to the first
    /// cycle it may leave its buffer (simulator only); `None`: 0, VC and switch allocation in
    /// one cycle. Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vc_allocation_delay: Option<u32>,
    /// Message length M in flits: the mean of `message_length_distribution`, or of the random
    /// lengths `message_length_second_moment` describes.
    pub message_length: u32,
    /// The most flits of one packet (simulator only): a longer message is split into packets
    /// of this many flits (the last one shorter), each routed on its own; `None`: a message is
    /// one packet. Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<u32>,
    /// Request-reply traffic (simulator only): every generated message is a request, and its
    /// delivery sends a reply of this many flits back to its source, on a message class of
    /// its own (the upper half of the VCs); `None`: one-way traffic. Left out of the
    /// serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_length: Option<u32>,
    /// Request-reply traffic (simulator only): the most requests one node may have waiting for
    /// their replies; a source with that many generates none (closed loop); `None`: no bound.
    /// Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outstanding_requests: Option<u32>,
    /// E[M^2] in flits^2 for random message lengths; `None` means fixed length M. With a
    /// `message_length_distribution` other than fixed, the spec and the command line set it to
    /// the distribution's (`bounds::check` refuses another value).
    pub message_length_second_moment: Option<f64>,
    /// How lengths vary around M (the simulator draws each message's length from it). Left out
    /// of the serialized form when `fixed` (the default).
    #[serde(skip_serializing_if = "MessageLengths::is_fixed")]
    pub message_length_distribution: MessageLengths,
    /// Probability theta that a node is faulty, 0 <= theta < 1.
    pub fault_rate: f64,
    /// Fraction beta of generated messages that are broadcasts, 0 <= beta <= 1.
    pub broadcast_fraction: f64,
    /// Message start-up latency Delta in cycles (hypercube broadcast model).
    pub startup_latency: f64,
    /// Base dimension of each broadcast's spanning binomial tree (simulator only). Left out of
    /// the serialized form when `random` (the default).
    #[serde(skip_serializing_if = "BroadcastOrder::is_random")]
    pub broadcast_order: BroadcastOrder,
    /// How a node's messages enter its router (simulator only). Left out of the serialized
    /// form when `parallel` (the default).
    #[serde(skip_serializing_if = "Injection::is_parallel")]
    pub injection: Injection,
    /// When an output VC may be granted to the next message (simulator only). Left out of the
    /// serialized form when `drained` (the default).
    #[serde(skip_serializing_if = "VcReallocation::is_drained")]
    pub vc_reallocation: VcReallocation,
    /// How a router matches its input ports to its outputs (simulator only). Left out of the
    /// serialized form when `greedy` (the default).
    #[serde(skip_serializing_if = "SwitchAllocator::is_greedy")]
    pub switch_allocator: SwitchAllocator,
    /// Rounds of the separable switch allocator (simulator only); `None`: 1. Left out of the
    /// serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_allocator_iterations: Option<u32>,
    /// How a router gives output VCs to its waiting headers (simulator only). Left out of the
    /// serialized form when `sequential` (the default).
    #[serde(skip_serializing_if = "VcAllocator::is_sequential")]
    pub vc_allocator: VcAllocator,
    /// How the dragonfly's VC classes use the virtual channels (simulator only). Left out of
    /// the serialized form when `spread` (the default).
    #[serde(skip_serializing_if = "VcClasses::is_spread")]
    pub vc_classes: VcClasses,
    /// UGAL's threshold in flits (simulator only, the dragonfly's `ugal`, `ugal_global` and
    /// `par`); `None`: one message's flits on a hop, `message_length` at most `buffer_depth`.
    /// Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ugal_threshold: Option<u32>,
    /// Ejection port capacity.
    pub ejection: Ejection,
    /// Dateline convention of torus dimension-order routes; `None`: the routing's own (see
    /// [`Scenario::dateline_convention`]). Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dateline: Option<Dateline>,
    /// Tie-break of torus dimension-order routes at distance k/2; `None`: the routing's own
    /// (see [`Scenario::tie_break_convention`]). Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tie_break: Option<TieBreak>,
    /// Where messages go. Left out of the serialized form when uniform.
    #[serde(skip_serializing_if = "Traffic::is_uniform")]
    pub traffic: Traffic,
    /// When messages are generated (simulator; the models assume Poisson). Left out of the
    /// serialized form when `poisson` (the default).
    #[serde(skip_serializing_if = "InjectionProcess::is_poisson")]
    pub injection_process: InjectionProcess,
    /// Circuit switching (simulator only): cycles a message waits at its source after a failed
    /// set-up attempt before it retries; `None`: 0, as in the paper. Left out of the
    /// serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub circuit_backoff: Option<u32>,
    /// Circuit switching (simulator only): failed set-up attempts after the first that a
    /// message may retry before it is dropped (counted and reported); `None`: the simulator's
    /// default. Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub circuit_retry_limit: Option<u32>,
}

impl Scenario {
    /// A wormhole scenario on `topology` with the papers' defaults everywhere else:
    /// dimension-order routing, V = 1, buffer depth 2, no router delay, M = 32 fixed,
    /// no faults, no broadcasts, Delta = 1, single ejection.
    pub fn new(topology: Topology) -> Scenario {
        Scenario {
            topology,
            switching: Switching::Wormhole,
            routing: Routing::DimensionOrder,
            virtual_channels: fields::DEFAULT_VIRTUAL_CHANNELS,
            escape_channels: None,
            buffer_depth: fields::DEFAULT_BUFFER_DEPTH,
            router_delay: fields::DEFAULT_ROUTER_DELAY,
            input_speedup: None,
            channel_latency: None,
            global_channel_latency: None,
            credit_delay: None,
            switch_delay: None,
            vc_allocation_delay: None,
            message_length: fields::DEFAULT_MESSAGE_LENGTH,
            packet_size: None,
            reply_length: None,
            outstanding_requests: None,
            message_length_second_moment: None,
            message_length_distribution: MessageLengths::Fixed,
            fault_rate: fields::DEFAULT_FAULT_RATE,
            broadcast_fraction: 0.0,
            startup_latency: 1.0,
            broadcast_order: BroadcastOrder::Random,
            injection: Injection::Parallel,
            vc_reallocation: VcReallocation::Drained,
            switch_allocator: SwitchAllocator::Greedy,
            switch_allocator_iterations: None,
            vc_allocator: VcAllocator::Sequential,
            vc_classes: VcClasses::Spread,
            ugal_threshold: None,
            ejection: Ejection::Single,
            dateline: None,
            tie_break: None,
            traffic: Traffic::Uniform,
            injection_process: InjectionProcess::Poisson,
            circuit_backoff: None,
            circuit_retry_limit: None,
        }
    }

    /// Whether routes are dimension order on a torus: `dimension_order`, or Duato's escape.
    fn torus_dimension_order(&self) -> bool {
        matches!(self.topology, Topology::Torus { .. })
            && matches!(self.routing, Routing::DimensionOrder | Routing::Duato)
    }

    /// The dateline convention in force: `per_traversal` by default for `dimension_order` on
    /// a torus, `switch` by default for Duato's escape class on a torus (the only one it
    /// supports), `None` where there is no dateline (meshes, hypercubes, other routings).
    pub fn dateline_convention(&self) -> Option<Dateline> {
        let default = match self.routing {
            Routing::Duato => Dateline::Switch,
            _ => Dateline::PerTraversal,
        };
        self.torus_dimension_order().then(|| self.dateline.unwrap_or(default))
    }

    /// The tie-break in force: `random` by default for `dimension_order` on a torus of even
    /// radix, `positive` by default for Duato's escape class there (the only one it supports),
    /// `None` where no route has a tie (odd radix, meshes, hypercubes, other routings).
    pub fn tie_break_convention(&self) -> Option<TieBreak> {
        let default = match self.routing {
            Routing::Duato => TieBreak::Positive,
            _ => TieBreak::Random,
        };
        (self.torus_dimension_order() && self.topology.radix().is_multiple_of(2))
            .then(|| self.tie_break.unwrap_or(default))
    }

    /// The same system with the routing conventions resolved (set where they apply, `None`
    /// where they do not) and the second moment a length distribution implies filled in, so
    /// that equal systems compare (and hash) equal.
    pub fn with_conventions_resolved(self) -> Scenario {
        Scenario {
            dateline: self.dateline_convention(),
            tie_break: self.tie_break_convention(),
            message_length_second_moment: self.length_second_moment(),
            ..self
        }
    }

    /// Number of processing nodes.
    pub fn nodes(&self) -> u64 {
        self.topology.nodes()
    }

    /// E[M^2] of the message lengths: the distribution's when it is not fixed, else
    /// `message_length_second_moment` (`None`: fixed length M).
    pub fn length_second_moment(&self) -> Option<f64> {
        match self.message_length_distribution {
            MessageLengths::Fixed => self.message_length_second_moment,
            lengths => Some(lengths.second_moment(self.message_length)),
        }
    }
}
