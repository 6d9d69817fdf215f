//! The shared vocabulary: what physical system is being evaluated.
//!
//! A [`Scenario`] is plain data. The spec layer builds one per sweep point; the
//! analytical models ([`crate::model`]) and the simulator ([`crate::sim`]) both
//! take one and return a [`crate::measurement::Measurement`]. Nothing here does
//! I/O or knows about YAML.

use std::sync::Arc;

use serde::Serialize;

pub mod graph;

pub use graph::Graph;

/// Number of simulated or modelled clock cycles.
pub type Cycles = u64;

/// The interconnection network.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    /// k-ary n-cube with wrap-around (bidirectional) links.
    Torus {
        /// Nodes per dimension, k >= 2.
        radix: u32,
        /// Number of dimensions, n >= 1.
        dimensions: u32,
    },
    /// k-ary n-mesh: a torus without the wrap-around links.
    Mesh {
        /// Nodes per dimension, k >= 2.
        radix: u32,
        /// Number of dimensions, n >= 1.
        dimensions: u32,
    },
    /// Binary n-cube with 2^n nodes.
    Hypercube {
        /// Number of dimensions, n >= 1.
        dimensions: u32,
    },
    /// Butterfly fat-tree with N = 4^n processors (Greenberg and Guan).
    FatTree {
        /// Number of processors N, a power of 4.
        processors: u32,
    },
    /// Dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): `g = a h + 1` groups of `a` routers,
    /// each router with `p` terminals, `a - 1` local links (the group is fully connected) and
    /// `h` global links (one between every pair of groups); `N = p a g` terminals.
    Dragonfly {
        /// Terminals per router p >= 1.
        terminals_per_router: u32,
        /// Routers per group a >= 1.
        routers_per_group: u32,
        /// Global links per router h >= 1.
        global_links_per_router: u32,
    },
    /// k-ary n-tree, the folded-Clos fat-tree (Petrini and Vanneschi, IPPS 1997): `N = k^n`
    /// terminals and `n` levels of `k^(n-1)` switches, each with `k` links down and `k` up.
    #[serde(rename = "kary_ntree")]
    KaryNTree {
        /// Links down (and up) per switch, k >= 2.
        radix: u32,
        /// Levels of switches, n >= 1.
        dimensions: u32,
    },
    /// Any network read from a file (`docs/graph.md`): routers, their terminals and
    /// bidirectional links. Serialized (and so identified) by the file's content hash only.
    Graph {
        /// The parsed graph.
        #[serde(serialize_with = "graph::serialize_shared")]
        graph: Arc<Graph>,
    },
}

impl Topology {
    /// Short name used in result rows: `torus`, `mesh`, `hypercube`, `fat_tree`.
    pub fn kind(&self) -> &'static str {
        match self {
            Topology::Torus { .. } => "torus",
            Topology::Mesh { .. } => "mesh",
            Topology::Hypercube { .. } => "hypercube",
            Topology::FatTree { .. } => "fat_tree",
            Topology::Dragonfly { .. } => "dragonfly",
            Topology::KaryNTree { .. } => "kary_ntree",
            Topology::Graph { .. } => "graph",
        }
    }

    /// Radix k for tori and meshes, 2 for the hypercube, 4 for the fat-tree; for the dragonfly
    /// the router radix `k = p + a - 1 + h` (terminal, local and global ports); for a graph the
    /// largest router radix (terminals plus links).
    pub fn radix(&self) -> u32 {
        match *self {
            Topology::Graph { ref graph } => graph.radix(),
            Topology::Torus { radix, .. }
            | Topology::Mesh { radix, .. }
            | Topology::KaryNTree { radix, .. } => radix,
            Topology::Hypercube { .. } => 2,
            Topology::FatTree { .. } => 4,
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
            } => p.saturating_add(a).saturating_add(h).saturating_sub(1),
        }
    }

    /// Number of dimensions n (for the fat-tree: the number of levels, log4 N; for the
    /// dragonfly 2, its two levels of links: local within a group, global between groups; 0 for
    /// a graph, which has none).
    pub fn dimensions(&self) -> u32 {
        match *self {
            Topology::Graph { .. } => 0,
            Topology::Torus { dimensions, .. }
            | Topology::Mesh { dimensions, .. }
            | Topology::Hypercube { dimensions }
            | Topology::KaryNTree { dimensions, .. } => dimensions,
            Topology::FatTree { processors } => {
                let mut levels = 0;
                let mut n = processors.max(1);
                while n >= 4 {
                    n /= 4;
                    levels += 1;
                }
                levels
            }
            Topology::Dragonfly { .. } => 2,
        }
    }

    /// Number of processing nodes, saturating at `u64::MAX` for absurd sizes.
    pub fn nodes(&self) -> u64 {
        match *self {
            Topology::Graph { ref graph } => graph.terminals(),
            Topology::Torus { radix, dimensions }
            | Topology::Mesh { radix, dimensions }
            | Topology::KaryNTree { radix, dimensions } => {
                (radix as u64).checked_pow(dimensions).unwrap_or(u64::MAX)
            }
            Topology::Hypercube { dimensions } => 1u64.checked_shl(dimensions).unwrap_or(u64::MAX),
            Topology::FatTree { processors } => processors as u64,
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
            } => {
                let groups = u64::from(a) * u64::from(h) + 1;
                u64::from(p).saturating_mul(u64::from(a)).saturating_mul(groups)
            }
        }
    }

    /// The dragonfly's (p, a, h); `None` for the other families.
    pub fn dragonfly(&self) -> Option<(u32, u32, u32)> {
        match *self {
            Topology::Dragonfly {
                terminals_per_router,
                routers_per_group,
                global_links_per_router,
            } => Some((terminals_per_router, routers_per_group, global_links_per_router)),
            _ => None,
        }
    }

    /// The graph of a `graph` topology; `None` for the other families.
    pub fn graph(&self) -> Option<&Arc<Graph>> {
        match self {
            Topology::Graph { graph } => Some(graph),
            _ => None,
        }
    }
}

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
}

impl Switching {
    /// Short name used in result rows.
    pub fn kind(&self) -> &'static str {
        match self {
            Switching::Wormhole => "wormhole",
            Switching::Scouting { .. } => "scouting",
            Switching::Circuit => "circuit",
        }
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
    /// Up/down routing (fat-trees: up to a nearest common ancestor, then down), the up port
    /// chosen among the free ones.
    UpDown,
    /// Up/down routing on the fat-trees with the up port drawn at random per message and hop.
    UpDownRandom,
    /// West-first turn-model routing (2-D mesh; Glass and Ni, 1992).
    WestFirst,
    /// Odd-even turn-model routing (2-D mesh; Chiu, 2000).
    OddEven,
    /// Dragonfly minimal routing: local, global, local hop (Kim et al., 2008).
    Minimal,
    /// Dragonfly Valiant routing: minimally to a random intermediate group, then minimally on.
    Valiant,
    /// Dragonfly UGAL-L: minimal or Valiant per message, chosen at the source router from the
    /// occupancy of its two candidate output ports.
    Ugal,
}

impl Routing {
    /// Every routing, in the order the CLI lists them.
    pub const ALL: [Routing; 11] = [
        Routing::DimensionOrder,
        Routing::Adaptive,
        Routing::Duato,
        Routing::Nbc,
        Routing::UpDown,
        Routing::UpDownRandom,
        Routing::WestFirst,
        Routing::OddEven,
        Routing::Minimal,
        Routing::Valiant,
        Routing::Ugal,
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
            Routing::WestFirst => "west_first",
            Routing::OddEven => "odd_even",
            Routing::Minimal => "minimal",
            Routing::Valiant => "valiant",
            Routing::Ugal => "ugal",
        }
    }
}

/// How many messages a node's ejection port accepts at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
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

/// How a hypercube broadcast chooses the base dimension of its spanning binomial tree
/// (Abraham and Padmanabhan's balancing: a different base for every new broadcast tree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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

/// How message lengths vary around their mean M (`message_length`). The simulator draws each
/// message's length from it; the models receive the second moment E[M^2] it implies
/// ([`MessageLengths::second_moment`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MessageLengths {
    /// Every message is M flits (the papers'; the default).
    #[default]
    Fixed,
    /// Two lengths: `max` flits with probability (M - min) / (max - min), else `min` flits, so
    /// that the mean is M (min <= M <= max, min < max).
    Bimodal {
        /// The short length in flits, at least 1.
        min: u32,
        /// The long length in flits.
        max: u32,
    },
    /// Geometric on 1, 2, 3, ... flits with mean M: P(L = l) = (1 - 1/M)^(l-1) / M.
    Geometric,
    /// Every length from `min` to `max` flits equally likely; their midpoint is M.
    Uniform {
        /// The shortest length in flits, at least 1.
        min: u32,
        /// The longest length in flits.
        max: u32,
    },
}

impl MessageLengths {
    /// The distribution's name, as in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            MessageLengths::Fixed => "fixed",
            MessageLengths::Bimodal { .. } => "bimodal",
            MessageLengths::Geometric => "geometric",
            MessageLengths::Uniform { .. } => "uniform",
        }
    }

    /// Whether this is the default fixed length, left out of serialized scenarios (cache keys).
    pub fn is_fixed(&self) -> bool {
        *self == MessageLengths::Fixed
    }

    /// The bounds (`message_length_min`, `message_length_max`) of a bimodal or uniform
    /// distribution; `None` for the others.
    pub fn bounds(&self) -> Option<(u32, u32)> {
        match *self {
            MessageLengths::Bimodal { min, max } | MessageLengths::Uniform { min, max } => {
                Some((min, max))
            }
            _ => None,
        }
    }

    /// The distribution named `name` with the bounds given (`None`: left out) around the mean
    /// `mean`: a uniform distribution's missing bound follows from the other (their midpoint is
    /// the mean); a missing bound is 0 otherwise, which [`MessageLengths::check`] refuses.
    /// `None` for an unknown name.
    pub fn from_parts(
        name: &str,
        mean: u32,
        min: Option<u32>,
        max: Option<u32>,
    ) -> Option<MessageLengths> {
        let twice = 2 * i64::from(mean);
        let derived = |other: u32| u32::try_from((twice - i64::from(other)).max(0)).unwrap_or(0);
        Some(match name {
            "fixed" => MessageLengths::Fixed,
            "geometric" => MessageLengths::Geometric,
            "bimodal" => MessageLengths::Bimodal { min: min.unwrap_or(0), max: max.unwrap_or(0) },
            "uniform" => match (min, max) {
                (Some(min), None) => MessageLengths::Uniform { min, max: derived(min) },
                (None, Some(max)) => MessageLengths::Uniform { min: derived(max), max },
                (min, max) => {
                    MessageLengths::Uniform { min: min.unwrap_or(0), max: max.unwrap_or(0) }
                }
            },
            _ => return None,
        })
    }

    /// The names of the distributions, fixed first.
    pub const NAMES: [&str; 4] = ["fixed", "bimodal", "geometric", "uniform"];

    /// Checks the distribution against its mean `mean` (M >= 1); `Err` says what is wrong in
    /// the fields' words.
    pub fn check(&self, mean: u32) -> Result<(), String> {
        let Some((min, max)) = self.bounds() else {
            return Ok(());
        };
        let name = self.as_str();
        if min < 1 || max < 1 {
            return Err(format!(
                "a {name} distribution needs message_length_min and message_length_max, at \
                 least 1 flit each, found {min} and {max}"
            ));
        }
        if max > bounds::MAX_COUNT {
            return Err(format!(
                "message_length_max must be at most {}, found {max}",
                bounds::MAX_COUNT
            ));
        }
        match self {
            MessageLengths::Bimodal { .. } if !(min < max && (min..=max).contains(&mean)) => {
                Err(format!(
                    "a {name} distribution needs message_length_min < message_length_max with the \
                     mean message_length between them, found {min}, {max} and mean {mean}"
                ))
            }
            MessageLengths::Uniform { .. }
                if min > max || u64::from(min) + u64::from(max) != 2 * u64::from(mean) =>
            {
                Err(format!(
                    "a {name} distribution from message_length_min = {min} to \
                     message_length_max = {max} has mean {}, but message_length (the mean) is \
                     {mean}: the bounds' midpoint must be the mean (for these, \
                     message_length_max = {})",
                    (f64::from(min) + f64::from(max)) / 2.0,
                    (2 * i64::from(mean) - i64::from(min)).max(0)
                ))
            }
            _ => Ok(()),
        }
    }

    /// E[M^2] in flits^2 of lengths with this distribution and mean `mean`.
    pub fn second_moment(&self, mean: u32) -> f64 {
        let m = f64::from(mean);
        match *self {
            MessageLengths::Fixed => m * m,
            MessageLengths::Bimodal { min, max } => {
                let (lo, hi) = (f64::from(min), f64::from(max));
                if hi <= lo {
                    return m * m;
                }
                let p = (m - lo) / (hi - lo);
                (1.0 - p) * lo * lo + p * hi * hi
            }
            // Variance (1 - q) / q^2 with q = 1/M: M^2 - M.
            MessageLengths::Geometric => 2.0 * m * m - m,
            MessageLengths::Uniform { min, max } => {
                let n = f64::from(max.saturating_sub(min)) + 1.0;
                m * m + (n * n - 1.0) / 12.0
            }
        }
    }
}

/// Where messages go (the traffic pattern). Permutations address nodes by their digits: the
/// coordinates of a torus or mesh (radix k), the bits of a hypercube (radix 2).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "pattern", rename_all = "snake_case")]
pub enum Traffic {
    /// Uniform over all other nodes (the papers' traffic; the default).
    #[default]
    Uniform,
    /// Uniform over all nodes, the source included (a self-addressed message is ejected at
    /// its source without crossing a link).
    UniformWithSelf,
    /// Digit `i` of the destination is digit `i + n/2` of the source (matrix transpose; needs
    /// an even number of dimensions). Nodes on the diagonal send to themselves.
    Transpose,
    /// Every bit of the node number complemented (needs a power-of-two node count).
    BitComplement,
    /// The bits of the node number reversed (needs a power-of-two node count).
    BitReverse,
    /// Each coordinate moved `ceil(k/2) - 1` places forward (torus or mesh with k >= 3).
    Tornado,
    /// Each coordinate moved one place forward, modulo k.
    Neighbor,
    /// Dragonfly only: every terminal of group i sends to a uniformly random terminal of group
    /// i + 1 (mod g), the adversarial pattern of Kim et al. (2008).
    GroupShift,
    /// With probability `fraction` the destination is one of `nodes` (uniformly, not the
    /// source), otherwise uniform over the other nodes.
    Hotspot {
        /// Probability that a message goes to a hotspot node, 0 <= fraction <= 1.
        fraction: f64,
        /// The hotspot node numbers (dimension 0 varies fastest).
        nodes: Vec<u32>,
    },
    /// A recorded trace replayed with open-loop timing (simulator only; `docs/traces.md`): it
    /// gives every message's cycle, source, destination and length, so it replaces both the
    /// pattern and the injection process.
    Trace(TraceFile),
}

/// The trace file of `Traffic::Trace`: identified by its content, not its path.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceFile {
    /// Where the file is (absolute once the spec is loaded). Not serialized: a renamed copy is
    /// the same trace, so task ids hold the content hash instead.
    #[serde(skip)]
    pub path: std::path::PathBuf,
    /// blake3 of the file's content (hex); part of every task id.
    pub blake3: String,
    /// Bytes per flit, for a trace whose length column is `length_bytes`; `None` otherwise.
    /// Left out of the serialized form when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flit_bytes: Option<u32>,
    /// What the loader's scan of the whole file found (derived from the content, so not
    /// serialized).
    #[serde(skip)]
    pub summary: TraceSummary,
}

/// What a trace holds, from one streaming scan of the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TraceSummary {
    /// Messages (records).
    pub messages: u64,
    /// Flits over all messages.
    pub flits: u64,
    /// Cycle of the last record (recorded time, before any time scale).
    pub last_cycle: u64,
    /// The highest node number a record names (source or destination).
    pub max_node: u32,
}

impl TraceFile {
    /// The simulated cycle of a record made at recorded cycle `cycle` under time scale
    /// `scale`: `round(cycle * scale)`, halves away from zero (`scale < 1` compresses time,
    /// a higher load).
    pub fn scaled_cycle(cycle: u64, scale: f64) -> u64 {
        // `as` saturates: a huge product becomes u64::MAX, never wraps.
        (cycle as f64 * scale).round() as u64
    }

    /// The simulated cycles the trace spans under `scale`: from 0 to its last scaled cycle.
    pub fn duration(&self, scale: f64) -> f64 {
        TraceFile::scaled_cycle(self.summary.last_cycle, scale) as f64 + 1.0
    }

    /// The load the trace offers under `scale` in messages per node per cycle: messages /
    /// nodes / duration.
    pub fn offered_rate(&self, scale: f64, nodes: u64) -> f64 {
        self.summary.messages as f64 / (nodes.max(1) as f64 * self.duration(scale))
    }

    /// The load the trace offers under `scale` in flits per node per cycle: messages x mean
    /// length / nodes / duration.
    pub fn offered_flit_load(&self, scale: f64, nodes: u64) -> f64 {
        self.summary.flits as f64 / (nodes.max(1) as f64 * self.duration(scale))
    }

    /// The mean message length in flits (0 for an empty trace).
    pub fn mean_length(&self) -> f64 {
        if self.summary.messages == 0 {
            0.0
        } else {
            self.summary.flits as f64 / self.summary.messages as f64
        }
    }
}

impl Traffic {
    /// The pattern's name, as in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Traffic::Uniform => "uniform",
            Traffic::UniformWithSelf => "uniform_with_self",
            Traffic::Transpose => "transpose",
            Traffic::BitComplement => "bit_complement",
            Traffic::BitReverse => "bit_reverse",
            Traffic::Tornado => "tornado",
            Traffic::Neighbor => "neighbor",
            Traffic::GroupShift => "group_shift",
            Traffic::Hotspot { .. } => "hotspot",
            Traffic::Trace(_) => "trace",
        }
    }

    /// The trace of trace traffic; `None` for a pattern.
    pub fn trace(&self) -> Option<&TraceFile> {
        match self {
            Traffic::Trace(trace) => Some(trace),
            _ => None,
        }
    }

    /// Every pattern, uniform first; a hotspot one with the given fraction and nodes.
    pub fn every(fraction: f64, nodes: Vec<u32>) -> [Traffic; 9] {
        [
            Traffic::Uniform,
            Traffic::UniformWithSelf,
            Traffic::Transpose,
            Traffic::BitComplement,
            Traffic::BitReverse,
            Traffic::Tornado,
            Traffic::Neighbor,
            Traffic::GroupShift,
            Traffic::Hotspot { fraction, nodes },
        ]
    }

    /// Whether this is the default uniform pattern.
    pub fn is_uniform(&self) -> bool {
        *self == Traffic::Uniform
    }
}

/// When each node generates its messages (the injection process); the offered load is `rate`
/// messages per node per cycle whatever the process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InjectionProcess {
    /// Poisson arrivals at each node (the papers'; the default).
    #[default]
    Poisson,
    /// One message with probability `rate` in each cycle at each node (BookSim's), so at most
    /// one per node and cycle: `rate <= 1`.
    Bernoulli,
    /// Two-state on/off (Markov-modulated) source per node: on, it generates one message per
    /// cycle and turns off after each with probability 1 / `burst_length`; off, it turns on
    /// after each cycle with the probability that makes the mean rate `rate`. Bursts have a
    /// geometric number of messages with mean `burst_length`: `rate <= B / (B + 1)`.
    OnOff {
        /// B, the mean number of messages in a burst (consecutive cycles with a message), >= 1.
        burst_length: f64,
    },
}

impl InjectionProcess {
    /// The process's name, as in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            InjectionProcess::Poisson => "poisson",
            InjectionProcess::Bernoulli => "bernoulli",
            InjectionProcess::OnOff { .. } => "on_off",
        }
    }

    /// Whether this is the default Poisson process, left out of serialized scenarios.
    pub fn is_poisson(&self) -> bool {
        *self == InjectionProcess::Poisson
    }

    /// The mean burst length B of an on/off source.
    pub fn burst_length(&self) -> Option<f64> {
        match *self {
            InjectionProcess::OnOff { burst_length } => Some(burst_length),
            _ => None,
        }
    }

    /// The highest rate (messages per node per cycle) the process can offer: none for
    /// Poisson, 1 for Bernoulli, B / (B + 1) for on/off (each burst is followed by at least
    /// one silent cycle).
    pub fn max_rate(&self) -> Option<f64> {
        match *self {
            InjectionProcess::Poisson => None,
            InjectionProcess::Bernoulli => Some(1.0),
            InjectionProcess::OnOff { burst_length } => Some(burst_length / (burst_length + 1.0)),
        }
    }

    /// Checks `rate` against [`InjectionProcess::max_rate`]; `Err` says why and what to do.
    pub fn check_rate(&self, rate: f64) -> Result<(), String> {
        match self.max_rate() {
            Some(most) if rate > most => Err(match self {
                InjectionProcess::Bernoulli => format!(
                    "injection_process bernoulli generates at most one message per node and \
                     cycle: rate must be at most 1, found {rate}"
                ),
                _ => format!(
                    "an on_off source with burst_length {} offers at most B / (B + 1) = {most} \
                     messages per node and cycle (a burst sends one per cycle and is followed \
                     by at least one silent cycle), found rate {rate}: lower the rate or \
                     lengthen the bursts",
                    self.burst_length().unwrap_or(1.0)
                ),
            }),
            _ => Ok(()),
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
    /// Message length M in flits: the mean of `message_length_distribution`, or of the random
    /// lengths `message_length_second_moment` describes.
    pub message_length: u32,
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
            virtual_channels: 1,
            escape_channels: None,
            buffer_depth: 2,
            router_delay: 0,
            input_speedup: None,
            message_length: 32,
            message_length_second_moment: None,
            message_length_distribution: MessageLengths::Fixed,
            fault_rate: 0.0,
            broadcast_fraction: 0.0,
            startup_latency: 1.0,
            broadcast_order: BroadcastOrder::Random,
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

/// One set of bounds on the numbers a researcher writes, applied by specs
/// (`spec::validate`) and by the command line (`runner solve`, `runner simulate`) alike, so that
/// neither path accepts what the other refuses. The evaluators check what only they know
/// (`sim::check`, `model::check`); these are the bounds every path shares. Each one is far
/// beyond any network a researcher simulates on purpose, and low enough that nothing
/// downstream overflows or allocates without limit. The README's Limits section lists them.
pub mod bounds {
    use super::Routing;

    /// The most flits per buffer, cycles of router delay or circuit back-off, links of
    /// scouting distance, flits per input port and cycle, and flits per message: 2^20.
    pub const MAX_COUNT: u32 = 1 << 20;

    /// The most cycles of a simulation setting (`cycles`, `warmup_cycles`, `max_cycles`,
    /// `deadlock_cycles`): 10^10, days of simulation on the smallest network.
    pub const MAX_CYCLES: u64 = 10_000_000_000;

    /// The most messages one node's source queue may hold in throughput mode.
    pub const MAX_SOURCE_QUEUE_CAPACITY: u32 = 1_000_000;

    /// The most messages all source queues together may hold in throughput mode (nodes x
    /// `source_queue_capacity`): 2^26, a few GB of queued messages at most.
    pub const MAX_QUEUED_MESSAGES: u64 = 1 << 26;

    /// Every bounded integer field of a scenario: (name, least, most).
    pub const INTEGER_FIELDS: [(&str, u32, u32); 17] = [
        ("radix", 2, u32::MAX),
        ("dimensions", 1, u32::MAX),
        ("processors", 4, u32::MAX),
        ("terminals_per_router", 1, MAX_COUNT),
        ("routers_per_group", 1, MAX_COUNT),
        ("global_links_per_router", 1, MAX_COUNT),
        ("scouting_distance", 0, MAX_COUNT),
        ("virtual_channels", 1, u32::MAX),
        ("escape_channels", 1, u32::MAX),
        ("buffer_depth", 1, MAX_COUNT),
        ("router_delay", 0, MAX_COUNT),
        ("input_speedup", 1, MAX_COUNT),
        ("message_length", 1, MAX_COUNT),
        ("message_length_min", 1, MAX_COUNT),
        ("message_length_max", 1, MAX_COUNT),
        ("circuit_backoff", 0, MAX_COUNT),
        ("circuit_retry_limit", 0, u32::MAX),
    ];

    /// Every bounded real field of a scenario: (name, least, most, whether the most is
    /// allowed). NaN and infinities are refused everywhere.
    pub const REAL_FIELDS: [(&str, f64, f64, bool); 6] = [
        ("message_length_second_moment", 1.0, f64::MAX, true),
        ("fault_rate", 0.0, 1.0, false),
        ("broadcast_fraction", 0.0, 1.0, true),
        ("startup_latency", 0.0, 1e9, true),
        ("hotspot_fraction", 0.0, 1.0, true),
        ("burst_length", 1.0, 1e9, true),
    ];

    /// Checks an integer field; `Err` says what is wrong (the caller adds where).
    pub fn integer(field: &str, value: u32) -> Result<(), String> {
        let Some(&(_, least, most)) = INTEGER_FIELDS.iter().find(|f| f.0 == field) else {
            return Ok(());
        };
        if value < least {
            return Err(format!("{field} must be at least {least}, found {value}"));
        }
        if value > most {
            return Err(format!("{field} must be at most {most}, found {value}"));
        }
        if field == "processors"
            && !(value.is_power_of_two() && value.trailing_zeros().is_multiple_of(2))
        {
            return Err(format!("processors must be a power of 4 (4, 16, 64, ...), found {value}"));
        }
        Ok(())
    }

    /// Checks a real field: finite and within its range.
    pub fn real(field: &str, value: f64) -> Result<(), String> {
        let Some(&(_, low, high, inclusive)) = REAL_FIELDS.iter().find(|f| f.0 == field) else {
            return if value.is_finite() {
                Ok(())
            } else {
                Err(format!("{field} must be a finite number, found {value}"))
            };
        };
        let ok = value.is_finite()
            && value >= low
            && if inclusive { value <= high } else { value < high };
        if ok {
            Ok(())
        } else if high == f64::MAX {
            Err(format!("{field} must be a finite number >= {low}, found {value}"))
        } else {
            let bracket = if inclusive { "]" } else { ")" };
            Err(format!("{field} must lie in [{low}, {high}{bracket}, found {value}"))
        }
    }

    /// The message-length distribution against its mean, and the second moment it implies
    /// against `message_length_second_moment` when both are given.
    pub fn message_lengths(s: &super::Scenario) -> Result<(), String> {
        let lengths = s.message_length_distribution;
        lengths.check(s.message_length)?;
        if let (false, Some(given)) = (lengths.is_fixed(), s.message_length_second_moment) {
            let implied = lengths.second_moment(s.message_length);
            if (given - implied).abs() > 1e-9 * implied {
                return Err(format!(
                    "message_length_second_moment = {given} contradicts the {} \
                     message_length_distribution with mean {}, whose E[M^2] is {implied}: leave \
                     message_length_second_moment out (the distribution implies it)",
                    lengths.as_str(),
                    s.message_length
                ));
            }
        }
        Ok(())
    }

    /// Hotspot nodes: each node at most once.
    pub fn hotspot_nodes(nodes: &[u32]) -> Result<(), String> {
        for (i, node) in nodes.iter().enumerate() {
            if nodes[..i].contains(node) {
                return Err(format!("hotspot_nodes lists node {node} twice; list each node once"));
            }
        }
        Ok(())
    }

    /// `escape_channels` applies to the routings with escape channels only.
    pub fn escape_channels(routing: Routing, escape: Option<u32>) -> Result<(), String> {
        match (routing, escape) {
            (Routing::Duato | Routing::Nbc, _) | (_, None) => Ok(()),
            (other, Some(e)) => Err(format!(
                "escape_channels applies to routing duato or nbc only; routing {} has no escape \
                 channels, so escape_channels = {e} would be ignored: leave it unset",
                other.as_str()
            )),
        }
    }

    /// A cycle count of a simulation (`cycles`, `warmup_cycles`, `max_cycles`,
    /// `deadlock_cycles`): at most [`MAX_CYCLES`], and at least 1 except the warm-up.
    pub fn cycles(field: &str, value: u64) -> Result<(), String> {
        let least = u64::from(field != "warmup_cycles");
        if value < least {
            Err(format!("{field} must be at least {least}, found {value}"))
        } else if value > MAX_CYCLES {
            Err(format!("{field} must be at most {MAX_CYCLES} (10^10), found {value}"))
        } else {
            Ok(())
        }
    }

    /// Throughput mode's source-queue capacity on a network of `nodes` nodes.
    pub fn source_queue_capacity(capacity: u32, nodes: u64) -> Result<(), String> {
        if capacity == 0 {
            return Err("source_queue_capacity must be at least 1 message, found 0".into());
        }
        if capacity > MAX_SOURCE_QUEUE_CAPACITY {
            return Err(format!(
                "source_queue_capacity must be at most {MAX_SOURCE_QUEUE_CAPACITY} messages, \
                 found {capacity}"
            ));
        }
        let total = nodes.saturating_mul(u64::from(capacity));
        if total > MAX_QUEUED_MESSAGES {
            return Err(format!(
                "source_queue_capacity {capacity} on {nodes} nodes lets the source queues hold \
                 {total} messages, more than the {MAX_QUEUED_MESSAGES} the simulator allows; \
                 use at most {} per node",
                (MAX_QUEUED_MESSAGES / nodes.max(1)).max(1)
            ));
        }
        Ok(())
    }

    /// Every bound a scenario must satisfy, whatever path built it: its integer and real
    /// fields, its hotspot nodes and its escape channels.
    pub fn check(s: &super::Scenario) -> Result<(), String> {
        use super::{Switching, Topology, Traffic};
        match s.topology {
            Topology::Torus { radix, dimensions }
            | Topology::Mesh { radix, dimensions }
            | Topology::KaryNTree { radix, dimensions } => {
                integer("radix", radix)?;
                integer("dimensions", dimensions)?;
            }
            Topology::Hypercube { dimensions } => integer("dimensions", dimensions)?,
            Topology::FatTree { processors } => integer("processors", processors)?,
            Topology::Dragonfly {
                terminals_per_router,
                routers_per_group,
                global_links_per_router,
            } => {
                integer("terminals_per_router", terminals_per_router)?;
                integer("routers_per_group", routers_per_group)?;
                integer("global_links_per_router", global_links_per_router)?;
            }
            // Checked when the file is parsed (`scenario::graph`).
            Topology::Graph { .. } => {}
        }
        if let Switching::Scouting { scouting_distance } = s.switching {
            integer("scouting_distance", scouting_distance)?;
        }
        integer("virtual_channels", s.virtual_channels)?;
        let optional = [
            ("escape_channels", s.escape_channels),
            ("input_speedup", s.input_speedup),
            ("circuit_backoff", s.circuit_backoff),
            ("circuit_retry_limit", s.circuit_retry_limit),
        ];
        for (field, value) in optional {
            if let Some(value) = value {
                integer(field, value)?;
            }
        }
        integer("buffer_depth", s.buffer_depth)?;
        integer("router_delay", s.router_delay)?;
        integer("message_length", s.message_length)?;
        if let Some(m2) = s.message_length_second_moment {
            real("message_length_second_moment", m2)?;
        }
        message_lengths(s)?;
        real("fault_rate", s.fault_rate)?;
        real("broadcast_fraction", s.broadcast_fraction)?;
        real("startup_latency", s.startup_latency)?;
        if let Traffic::Hotspot { fraction, nodes } = &s.traffic {
            real("hotspot_fraction", *fraction)?;
            hotspot_nodes(nodes)?;
        }
        if let Some(burst_length) = s.injection_process.burst_length() {
            real("burst_length", burst_length)?;
        }
        escape_channels(s.routing, s.escape_channels)
    }
}
