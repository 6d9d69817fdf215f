//! The scenario vocabulary in one table: every field of a [`Scenario`](super::Scenario) that a
//! spec, the command line, a result row or a report names, defined once.
//!
//! [`FIELDS`] lists each field with its name (the spec key, the `key=value` key and the
//! `results.parquet` column are one word), what it takes and its bounds, its display name,
//! symbol and unit, its table header, which evaluators read it and what role it plays. Every
//! other list of fields is derived from it:
//! - the spec's sweep axes and their expansion order ([`SWEPT`], `spec::validate::FIELDS`),
//!   which are also the command line's keys (`cli::scenario_args`, plus [`Field::key_only`]);
//! - the bounds every path applies (`scenario::bounds::integer`, `scenario::bounds::real`);
//! - the report's scenario columns ([`SHOWN`]), the ones a prose description names
//!   ([`DESCRIBED`]), their display names and units (`report::columns::display`) and table
//!   headers (`report::headers`);
//! - the keys `runner solve` refuses because only the simulator reads them
//!   ([`Evaluators::Simulator`]).
//!
//! Tests check that the result row (`store::row::Row`), its Parquet schema and the external
//! request's scenario object list the [`Field::column`] fields in this order.
//!
//! To add a scenario field: add its row here, its member to `Scenario` and its meaning to the
//! evaluator that reads it (ARCHITECTURE.md, "Where to add a scenario field", has the recipe).

use super::{Scenario, Switching, Traffic};

/// What a field takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A name from a fixed vocabulary (`topology: torus`, `routing: duato`).
    Name,
    /// Free text (a graph file, a list of hotspot nodes, a content hash).
    Text,
    /// A count from `least` to `most`, both included.
    Count {
        /// The smallest value allowed.
        least: u32,
        /// The largest value allowed.
        most: u32,
    },
    /// A finite real from `least` to `most` (included when `most_included`).
    Real {
        /// The smallest value allowed (included).
        least: f64,
        /// The largest value allowed.
        most: f64,
        /// Whether `most` itself is allowed.
        most_included: bool,
    },
}

impl Value {
    /// Whether the field's column holds numbers (counts and reals) rather than text.
    pub const fn is_number(&self) -> bool {
        matches!(self, Value::Count { .. } | Value::Real { .. })
    }
}

/// One field's value in a scenario, as its result column holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// The field does not apply (a null column).
    Null,
    /// A count.
    Count(u64),
    /// A real.
    Real(f64),
    /// A name or text.
    Text(String),
}

impl Cell {
    /// The value as JSON, as a result row serializes it.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Cell::Null => serde_json::Value::Null,
            Cell::Count(n) => serde_json::Value::from(*n),
            Cell::Real(x) => serde_json::Value::from(*x),
            Cell::Text(text) => serde_json::Value::from(text.as_str()),
        }
    }
}

/// Which built-in evaluators read a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluators {
    /// The models and the simulator (a model refuses a value it cannot evaluate).
    Both,
    /// Only the simulator (and external programs): the models ignore it, so `runner solve`
    /// refuses the key rather than silently dropping it.
    Simulator,
}

/// A numeric field's display: the papers' symbol (`""` when they have none), what it is in
/// words, and its unit (`""` for a pure number). Axis labels and legends are built from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Display {
    /// The papers' symbol (`V`, `θ`), or `""`.
    pub symbol: &'static str,
    /// What it is, in words (`virtual channels per physical channel`).
    pub meaning: &'static str,
    /// The unit, or `""`.
    pub unit: &'static str,
}

/// How a table names a field's column: a plain form for HTML and Markdown, and two LaTeX
/// lines (a name, with math for the papers' symbols, and usually the unit) so that a paper's
/// table stays narrow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The plain name in words, with the symbol where the papers use one.
    pub text: &'static str,
    /// The unit, or `""`.
    pub unit: &'static str,
    /// The LaTeX name.
    pub tex: &'static str,
    /// The LaTeX second line (the unit in parentheses, or the rest of a long name).
    pub tex_second: &'static str,
}

/// One scenario field.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// The name: spec key, `key=value` key and result column alike.
    pub name: &'static str,
    /// What it takes, with its bounds.
    pub value: Value,
    /// A sweep axis of the spec (and a command-line key), in expansion order.
    pub swept: bool,
    /// A command-line key that is not a sweep axis of its own (`hotspot_nodes`, swept with
    /// `traffic`).
    pub key_only: bool,
    /// A column of `results.parquet` (and of the external request's `scenario` object).
    pub column: bool,
    /// Shown by the report among a result's scenario columns (legends, panels, tables).
    pub shown: bool,
    /// Named when the report describes a system in prose (`torus, k = 8, n = 2, V = 2`).
    pub described: bool,
    /// Which evaluators read it.
    pub evaluators: Evaluators,
    /// Display name and unit (numeric fields).
    pub display: Option<Display>,
    /// Table header (every column).
    pub header: Option<Header>,
    /// The name a null cell stands for, for a field whose default is left null in the rows
    /// (so that results from before the field existed stay bit for bit): `drained` for
    /// `vc_reallocation`. A figure's `select` names the default by it.
    pub null_is: Option<&'static str>,
    /// The field's value in a scenario, as its result column holds it (`Cell::Null` where it
    /// does not apply; also for `processors`, which the `nodes` column reports).
    pub of: fn(&Scenario) -> Cell,
}

/// Default `virtual_channels`.
pub const DEFAULT_VIRTUAL_CHANNELS: u32 = 1;
/// Default `buffer_depth` (flits per virtual channel).
pub const DEFAULT_BUFFER_DEPTH: u32 = 2;
/// Default `router_delay` (cycles per hop).
pub const DEFAULT_ROUTER_DELAY: u32 = 0;
/// Default `message_length` (flits).
pub const DEFAULT_MESSAGE_LENGTH: u32 = 32;
/// Default `fault_rate`.
pub const DEFAULT_FAULT_RATE: f64 = 0.0;

/// A value named by one word of a fixed vocabulary (`ejection: single`), as specs, the command
/// line and result rows write it.
pub trait Named: Copy + 'static {
    /// Every value, in the order messages list them.
    const ALL: &'static [Self];
    /// The value's word.
    fn as_str(&self) -> &'static str;
}

/// A value read from a word of a preset's table (`RouterPreset::knobs`): a count, a real or a
/// [`Named`] value.
pub trait FromWord: Sized {
    /// The value `word` spells, if it spells one.
    fn from_word(word: &str) -> Option<Self>;
}

impl FromWord for u32 {
    fn from_word(word: &str) -> Option<u32> {
        word.parse().ok()
    }
}

impl FromWord for f64 {
    fn from_word(word: &str) -> Option<f64> {
        word.parse().ok()
    }
}

impl<T: Named> FromWord for T {
    fn from_word(word: &str) -> Option<T> {
        T::ALL.iter().copied().find(|v| v.as_str() == word)
    }
}

/// Calls the macro `$then` with the keys a spec writes directly under `scenario:` (the ones
/// outside its `topology`, `switching` and `traffic` sections), each as
/// `/// doc` `name: Type = default, copy;` where:
/// - `name` is the key, and a row of [`FIELDS`];
/// - `Type` is what a spec or a `key=value` argument gives: a count (`u32`), a real (`f64`)
///   or a [`Named`] vocabulary;
/// - `= default` is the value when the key is left out (the `Scenario` member is then a
///   `Type`); without it the member is an `Option<Type>`, `None` when left out;
/// - `copy`: the value is the `Scenario` member of that name, as it is: the spec's syntax and
///   JSON Schema (`spec::types`), its reading and sweeping (`spec::validate`), the command
///   line's key (`cli::scenario_args`) and the bounds check (`bounds::check`) are generated
///   from this row; `own`: the same, except that `spec::validate::build` and
///   `cli::scenario_args` combine the value with other fields by hand.
///
/// The doc comment is the key's description in the spec's JSON Schema. A new simulator knob
/// is a `copy` row here, its row in [`FIELDS`], its `Scenario` member and its meaning in the
/// simulator.
macro_rules! each_scenario_key {
    ($then:ident) => {
        $then! {
            /// Virtual channels per physical channel (V >= 1).
            virtual_channels: u32 = $crate::scenario::fields::DEFAULT_VIRTUAL_CHANNELS, copy;
            /// Escape virtual channels (Duato-Nbc's V2); the routing's default split when left out.
            escape_channels: u32, own;
            /// Flit buffers per virtual channel (simulator).
            buffer_depth: u32 = $crate::scenario::fields::DEFAULT_BUFFER_DEPTH, copy;
            /// Extra router pipeline cycles per hop (simulator).
            router_delay: u32 = $crate::scenario::fields::DEFAULT_ROUTER_DELAY, copy;
            /// Flits one router input port (the VCs of one incoming channel, or a node's injection
            /// VCs) may send per cycle, ejection included, at least 1 (simulator); unlimited when left
            /// out.
            input_speedup: u32, copy;
            /// Cycles a flit takes to cross a link between two routers, at least 1 (simulator; 1 when
            /// left out). Credits come back over the same link. Links between a terminal and its
            /// router (dragonfly, trees, graphs) take one cycle.
            channel_latency: u32, copy;
            /// Cycles a flit takes to cross a dragonfly's global link, at least 1 (simulator;
            /// `channel_latency` when left out).
            global_channel_latency: u32, copy;
            /// Cycles a credit takes to come back beyond its link's latency (simulator; 0 when left
            /// out): the credit loop of a link of latency L is 2 L + credit_delay cycles, and a VC
            /// whose buffer is shallower streams at depth / loop flits per cycle.
            credit_delay: u32, copy;
            /// Cycles every flit spends in each router's switch stages (switch allocation and switch
            /// traversal), between leaving its input buffer (when its credit goes back) and entering
            /// the next link (simulator; 0 when left out): a hop takes L + switch_delay cycles for
            /// every flit, a header router_delay + vc_allocation_delay more, and the credit loop is
            /// 2 L + switch_delay + credit_delay cycles. BookSim's default pipeline is router_delay 1,
            /// vc_allocation_delay 1, switch_delay 2, credit_delay 1.
            switch_delay: u32, copy;
            /// Cycles from a header's grant of an output VC (or of the ejection port) to the first
            /// cycle it may leave its buffer (simulator; 0 when left out: VC and switch allocation in
            /// one cycle, as a speculative router does them). BookSim's router allocates the switch
            /// the cycle after the VC: 1, with router_delay 1 for its route computation.
            vc_allocation_delay: u32, copy;
            /// When an output VC may be granted to the next message (simulator): `drained` (once the
            /// downstream buffer has drained the tail, or with a credit loop once the tail's credit is
            /// back: a buffer holds one message; the models' router, BookSim's
            /// `wait_for_tail_credit = 1`) or `tail_sent` (as soon as the tail has been sent into it:
            /// messages queue in the buffer, BookSim's default). Wormhole switching, unicast traffic.
            vc_reallocation: $crate::scenario::VcReallocation =
                $crate::scenario::VcReallocation::Drained, copy;
            /// How a router matches its input ports to its outputs each cycle (simulator): `greedy`
            /// (each output serves its VCs round-robin, passing over a VC whose input port is full: a
            /// maximal matching, the idealised router) or `islip` (a separable iSLIP allocator,
            /// BookSim's default: outputs grant, inputs accept, round-robin; it loses matches under
            /// load). Wormhole switching, interleaved ejection.
            switch_allocator: $crate::scenario::SwitchAllocator =
                $crate::scenario::SwitchAllocator::Greedy, copy;
            /// Rounds of the separable switch allocator, at least 1 (simulator; 1 when left out,
            /// BookSim's `alloc_iters`).
            switch_allocator_iterations: u32, copy;
            /// How a router gives output VCs to its waiting headers each cycle (simulator):
            /// `sequential` (oldest first, each taking a free allowed VC at random: the idealised
            /// router) or `islip` (a separable iSLIP allocator over all waiting headers at once,
            /// BookSim's default: a header may lose a VC to a conflict). Wormhole switching.
            vc_allocator: $crate::scenario::VcAllocator =
                $crate::scenario::VcAllocator::Sequential, copy;
            /// How the dragonfly's routings put their VC classes on the virtual channels (simulator):
            /// `spread` (each class over several VCs: local hops of class c on VCs v mod 2 = c for
            /// minimal, v mod 3 = c for valiant and ugal; global hops on every VC for minimal) or
            /// `one_per_class` (a route's VC is the number of global hops it has started, BookSim's
            /// dragonfly: minimal's local hops before its global hop on VC 0, the global hop and the
            /// rest on VC 1; VCs beyond the classes idle). Dragonfly only.
            vc_classes: $crate::scenario::VcClasses = $crate::scenario::VcClasses::Spread, copy;
            /// UGAL's threshold T in flits (simulator; dragonfly `ugal`, `ugal_global` and `par`):
            /// the route is minimal iff q_min H_min <= q_nonmin H_nonmin + T, q the flits queued on
            /// each route's output and H its router-to-router hops. When left out, one message's
            /// flits on a hop (`message_length`, at most `buffer_depth`), so that at low load one
            /// passing message does not tip a message onto the long route.
            ugal_threshold: u32, copy;
            /// Message length M in flits (the mean, with `message_length_second_moment`).
            message_length: u32 = $crate::scenario::fields::DEFAULT_MESSAGE_LENGTH, own;
            /// E[M^2] in flits^2 for random message lengths (circuit model); fixed length when left out.
            message_length_second_moment: f64, own;
            /// How message lengths vary around their mean `message_length`: `fixed` (every message M
            /// flits), `bimodal` (`message_length_min` or `message_length_max` flits, mixed so that the
            /// mean is M), `geometric` (1, 2, 3, ... flits with mean M) or `uniform` (every length from
            /// `message_length_min` to `message_length_max`, whose midpoint is M; give one, the other
            /// follows). The simulator draws each message's length from it; it implies
            /// `message_length_second_moment` (giving both, they must agree), which
            /// `circuit_torus_faults` uses; the other models assume fixed lengths.
            message_length_distribution: $crate::scenario::LengthDistributionKind =
                $crate::scenario::LengthDistributionKind::Fixed, own;
            /// The short length of a `bimodal` distribution, the shortest of a `uniform` one (flits).
            message_length_min: u32, own;
            /// The long length of a `bimodal` distribution, the longest of a `uniform` one (flits).
            message_length_max: u32, own;
            /// The most flits of one packet, at least 1 (simulator; a message is one packet when
            /// left out): a longer message is split into packets of this many flits (the last one
            /// shorter), each routed on its own, and its latency is its last packet's. Virtual
            /// cut-through needs buffers at least one packet deep.
            packet_size: u32, copy;
            /// Request-reply traffic (simulator; one-way traffic when left out): every generated
            /// message is a request, and its delivery sends a reply of this many flits back to its
            /// source. Requests and replies are two message classes, each with half the virtual
            /// channels (V must be even), so a reply never waits behind a request: no protocol
            /// deadlock. Replies leave a source before its queued requests.
            reply_length: u32, copy;
            /// Request-reply traffic: the most requests one node may have waiting for their replies,
            /// at least 1 (simulator; no bound when left out). A source with that many generates no
            /// request (closed loop, BookSim's max_outstanding_requests).
            outstanding_requests: u32, copy;
            /// Probability that a node is faulty, 0 <= theta < 1.
            fault_rate: f64 = $crate::scenario::fields::DEFAULT_FAULT_RATE, copy;
            /// How a node's messages enter its router (simulator): `parallel` (its V injection VCs each
            /// send a flit per cycle straight onto the router's output links, no pipeline at the
            /// source; the models' source) or `channel` (one flit per cycle over a one-cycle injection
            /// channel into the router's local port, `router_delay` charged at the source router too,
            /// and a one-cycle ejection channel to the destination: BookSim's terminal channels). Tori,
            /// meshes and hypercubes; the other families' terminal links are such channels already.
            injection: $crate::scenario::Injection = $crate::scenario::Injection::Parallel, copy;
            /// Ejection port: `single` (one message at a time, the SS and Nbc papers'), `interleaved`
            /// (one flit per cycle from any message that reached the node, as BookSim and real routers)
            /// or `unlimited` (every message at once, consumed on arrival).
            ejection: $crate::scenario::Ejection = $crate::scenario::Ejection::Single, copy;
            /// Dateline convention of dimension-order routes on a torus (simulator): `per_traversal`
            /// (class fixed per ring traversal; the default for `dimension_order`) or `switch`
            /// (Dally-Seitz; the only one Duato's escape class supports, and its default).
            dateline: $crate::scenario::Dateline, own;
            /// Direction of dimension-order routes on a torus at distance exactly k/2 (simulator):
            /// `random` (per message and dimension; the default for `dimension_order`) or `positive`
            /// (always +; the only one Duato's escape class supports, and its default).
            tie_break: $crate::scenario::TieBreak, own;
        }
    };
}
pub(crate) use each_scenario_key;

/// Calls the macro `$then` with the result columns of a scenario (the [`FIELDS`] that are
/// columns, in their order), each as `/// doc` `name: Kind;`, where `Kind` is the column's
/// type in `store::parquet` (`Str`, `OptStr`, `U32`, `OptU32`, `U64`, `F64`, `OptF64`; `Opt`:
/// nullable). `store::row::Row`'s scenario members and their values, the columns of
/// `results.parquet` and the external request's `scenario` object are generated from it;
/// the doc comment documents the column. A test holds it to [`FIELDS`].
macro_rules! each_column {
    ($then:ident) => {
        $then! {
            /// `torus`, `mesh`, `hypercube`, `fat_tree`, `dragonfly`, `kary_ntree`, `hyperx`,
            /// `slim_fly` or `graph`.
            topology: Str;
            /// Radix k (2 for the hypercube, 4 for the fat-tree, the router radix p + a - 1 + h for the
            /// dragonfly, the routers per dimension S for the HyperX, the router radix p + k' for the
            /// Slim Fly).
            radix: U32;
            /// Dimensions n (fat-tree: levels; dragonfly: 2, its local and global links).
            dimensions: U32;
            /// Number of processing nodes (the dragonfly's terminals).
            nodes: U64;
            /// Slim Fly: the prime power q of its MMS graph; null for other topologies.
            prime_power: OptU32;
            /// Dragonfly, HyperX and Slim Fly: terminals per router (p, T, p); null for other
            /// topologies.
            terminals_per_router: OptU32;
            /// Dragonfly: routers per group a; null for other topologies.
            routers_per_group: OptU32;
            /// Dragonfly: global links per router h; null for other topologies.
            global_links_per_router: OptU32;
            /// Dragonfly: how its global links join the groups, `relative` or `circulant`; null
            /// for `absolute` (the default) and for other topologies.
            global_arrangement: OptStr;
            /// k-ary n-tree: links up per switch below the top level u (k for the full tree,
            /// fewer for a tapered one); null for other topologies.
            up_links_per_switch: OptU32;
            /// HyperX: links between each pair of neighbouring routers K (1 unless trunked);
            /// null for other topologies.
            trunking: OptU32;
            /// Graph: the file as the spec names it, relative to the spec's directory; null for other
            /// topologies.
            graph: OptStr;
            /// Graph: blake3 of the file's content (hex), the graph's identity; null for other
            /// topologies.
            graph_blake3: OptStr;
            /// `wormhole`, `scouting`, `circuit` or `virtual_cut_through`.
            switching: Str;
            /// Scouting distance K; null unless switching is scouting.
            scouting_distance: OptU32;
            /// `dimension_order`, `adaptive`, `duato`, `nbc`, `up_down`, `up_down_random`, `d_mod_k`,
            /// `west_first`, `odd_even`, or on the dragonfly `minimal`, `valiant`, `ugal`,
            /// `ugal_global`, `par` or `ugal_booksim`, or on a graph `up_down`, `minimal` or
            /// `table` (the graph file's routing table).
            routing: Str;
            /// Virtual channels per physical channel V.
            virtual_channels: U32;
            /// Escape channels (Duato's and Nbc's V2) when set explicitly.
            escape_channels: OptU32;
            /// Flit buffers per virtual channel.
            buffer_depth: U32;
            /// Extra router pipeline cycles per hop.
            router_delay: U32;
            /// Flits one router input port may send per cycle (simulator); null: unlimited.
            input_speedup: OptU32;
            /// Cycles a flit takes over a link between two routers (simulator); null: 1.
            channel_latency: OptU32;
            /// Cycles a flit takes over a dragonfly's global link (simulator); null:
            /// `channel_latency`.
            global_channel_latency: OptU32;
            /// Cycles a credit takes back beyond its link's latency (simulator); null: 0.
            credit_delay: OptU32;
            /// Cycles every flit spends in each router's switch stages (simulator); null: 0.
            switch_delay: OptU32;
            /// Cycles from a header's grant of an output VC to the first cycle it may leave its
            /// buffer (simulator); null: 0.
            vc_allocation_delay: OptU32;
            /// `tail_sent` when an output VC is reallocated once the tail is sent (simulator); null:
            /// `drained`, the default.
            vc_reallocation: OptStr;
            /// `islip` with a separable switch allocator (simulator); null: `greedy`, the default.
            switch_allocator: OptStr;
            /// Rounds of the separable switch allocator (simulator); null: 1.
            switch_allocator_iterations: OptU32;
            /// `islip` with a separable VC allocator (simulator); null: `sequential`, the default.
            vc_allocator: OptStr;
            /// `one_per_class` when the dragonfly's VC classes take one VC each (simulator); null:
            /// `spread`, the default.
            vc_classes: OptStr;
            /// UGAL's threshold in flits (simulator); null: one message's flits on a hop
            /// (`message_length`, at most `buffer_depth`).
            ugal_threshold: OptU32;
            /// Message length M (flits).
            message_length: U32;
            /// E[M^2] for random message lengths; null for fixed length.
            message_length_second_moment: OptF64;
            /// How message lengths vary around their mean `message_length`: `fixed`, `bimodal`,
            /// `geometric` or `uniform` (null in bundles written before the column existed).
            message_length_distribution: OptStr;
            /// The short length of a bimodal distribution, the shortest of a uniform one (flits); null
            /// for the others.
            message_length_min: OptU32;
            /// The long length of a bimodal distribution, the longest of a uniform one (flits); null
            /// for the others.
            message_length_max: OptU32;
            /// The most flits of one packet (simulator); null: a message is one packet.
            packet_size: OptU32;
            /// Flits of the reply to each request (simulator); null: one-way traffic.
            reply_length: OptU32;
            /// The most requests a node may have waiting for replies (simulator); null: no bound.
            outstanding_requests: OptU32;
            /// Node-failure probability theta.
            fault_rate: F64;
            /// Broadcast fraction beta.
            broadcast_fraction: F64;
            /// Start-up latency Delta (cycles).
            startup_latency: F64;
            /// `channel` when a node injects over an injection channel (simulator); null: `parallel`,
            /// the default.
            injection: OptStr;
            /// `single`, `interleaved` or `unlimited`.
            ejection: Str;
            /// Dateline convention of torus dimension-order routes (`per_traversal` or `switch`); null
            /// where routes have no dateline (meshes, hypercubes, adaptive and Nbc routing).
            dateline: OptStr;
            /// Direction at distance k/2 of torus dimension-order routes (`random` or `positive`);
            /// null where no route has such a tie.
            tie_break: OptStr;
            /// Traffic pattern: `uniform`, `uniform_with_self`, `transpose`, `bit_complement`,
            /// `bit_reverse`, `tornado`, `neighbor`, `group_shift` (dragonfly) or `hotspot`.
            traffic: Str;
            /// Probability that a message goes to a hotspot node; null unless traffic is `hotspot`.
            hotspot_fraction: OptF64;
            /// The hotspot node numbers, comma-separated; null unless traffic is `hotspot`.
            hotspot_nodes: OptStr;
            /// When messages are generated: `poisson`, `bernoulli` or `on_off` (null in bundles written
            /// before the column existed).
            injection_process: OptStr;
            /// Mean number of messages in a burst of an `on_off` source; null for the others.
            burst_length: OptF64;
            /// Base dimension of each broadcast tree, `random` or `round_robin`; null without
            /// broadcasts (`broadcast_fraction = 0`).
            broadcast_order: OptStr;
            /// Circuit switching: cycles a message waits at its source before retrying a failed set-up
            /// (0: none, the paper's); null for other switching.
            circuit_backoff: OptU32;
            /// Circuit switching: retries after which a message is dropped; null for other switching.
            circuit_retry_limit: OptU32;
            /// Trace traffic: blake3 of the replayed trace file's content (hex); null for generated
            /// traffic.
            trace_blake3: OptStr;
        }
    };
}
pub(crate) use each_column;

/// The most flits per buffer, cycles of router delay or circuit back-off, links of scouting
/// distance, flits per input port and cycle, and flits per message: 2^20.
pub const MAX_COUNT: u32 = 1 << 20;

/// The most cycles of channel latency or credit delay: 2^16 (the timing wheel has a slot per
/// cycle of the longest credit loop).
pub const MAX_LATENCY: u32 = 1 << 16;

/// Default `circuit_retry_limit`: failed set-up attempts after the first before a
/// circuit-switched message is dropped.
pub const DEFAULT_CIRCUIT_RETRY_LIMIT: u32 = 10_000;

const fn count(least: u32, most: u32) -> Value {
    Value::Count { least, most }
}

const fn real(least: f64, most: f64, most_included: bool) -> Value {
    Value::Real { least, most, most_included }
}

const fn display(
    symbol: &'static str,
    meaning: &'static str,
    unit: &'static str,
) -> Option<Display> {
    Some(Display { symbol, meaning, unit })
}

const fn header(
    text: &'static str,
    unit: &'static str,
    tex: &'static str,
    tex_second: &'static str,
) -> Option<Header> {
    Some(Header { text, unit, tex, tex_second })
}

/// A sweep axis that is a shown result column, read by both evaluators.
const fn field(name: &'static str, value: Value, of: fn(&Scenario) -> Cell) -> Field {
    Field {
        name,
        value,
        swept: true,
        key_only: false,
        column: true,
        shown: true,
        described: false,
        evaluators: Evaluators::Both,
        display: None,
        header: None,
        null_is: None,
        of,
    }
}

impl Field {
    const fn described(self) -> Field {
        Field { described: true, ..self }
    }

    const fn simulator(self) -> Field {
        Field { evaluators: Evaluators::Simulator, ..self }
    }

    const fn display(self, display: Option<Display>) -> Field {
        Field { display, ..self }
    }

    const fn header(self, header: Option<Header>) -> Field {
        Field { header, ..self }
    }

    /// A null cell stands for the default `name`.
    const fn null_is(self, name: &'static str) -> Field {
        Field { null_is: Some(name), ..self }
    }

    /// A result column derived from the scenario, not written in a spec.
    const fn derived(self) -> Field {
        Field { swept: false, ..self }
    }

    /// Not shown among a result's scenario columns (an identity hash).
    const fn hidden(self) -> Field {
        Field { shown: false, ..self }
    }

    /// Written in specs and on the command line, but no column of its own.
    const fn no_column(self) -> Field {
        Field { column: false, shown: false, ..self }
    }
}

/// Every scenario field. The order is the column order of `results.parquet` and the
/// expansion order of a spec's sweep (the first swept field varies slowest).
pub const FIELDS: &[Field] = &[
    field("topology", Value::Name, |s| text(s.topology.kind()))
        .described()
        .header(header("Topology", "", "Topology", "")),
    field("radix", count(2, u32::MAX), |s| whole(s.topology.radix()))
        .described()
        .display(display("k", "radix", ""))
        .header(header("Radix k", "", "$k$", "")),
    field("dimensions", count(1, u32::MAX), |s| whole(s.topology.dimensions()))
        .described()
        .display(display("n", "dimensions", ""))
        .header(header("Dimensions n", "", "$n$", "")),
    field("processors", count(4, u32::MAX), |_| Cell::Null).no_column(),
    field("nodes", count(1, u32::MAX), |s| Cell::Count(s.nodes()))
        .derived()
        .display(display("N", "nodes", ""))
        .header(header("Nodes N", "", "$N$", "")),
    field("prime_power", count(3, MAX_COUNT), |s| maybe_count(s.topology.count("prime_power")))
        .described()
        .display(display("q", "prime power", ""))
        .header(header("Prime power q", "", "$q$", "")),
    field("terminals_per_router", count(1, MAX_COUNT), |s| {
        maybe_count(s.topology.count("terminals_per_router"))
    })
    .described()
    .display(display("p", "terminals per router", ""))
    .header(header("Terminals per router p", "", "$p$", "")),
    field("routers_per_group", count(1, MAX_COUNT), |s| {
        maybe_count(s.topology.count("routers_per_group"))
    })
    .described()
    .display(display("a", "routers per group", ""))
    .header(header("Routers per group a", "", "$a$", "")),
    field("global_links_per_router", count(1, MAX_COUNT), |s| {
        maybe_count(s.topology.count("global_links_per_router"))
    })
    .described()
    .display(display("h", "global links per router", ""))
    .header(header("Global links per router h", "", "$h$", "")),
    field("global_arrangement", Value::Name, |s| {
        let arrangement = s.topology.global_arrangement().filter(|a| !a.is_absolute());
        maybe_text(arrangement.map(|a| a.as_str().to_owned()))
    })
    .null_is("absolute")
    .described()
    .header(header("Global arrangement", "", "Global arrangement", "")),
    field("up_links_per_switch", count(1, MAX_COUNT), |s| {
        maybe_count(s.topology.count("up_links_per_switch"))
    })
    .described()
    .display(display("u", "up links per switch", ""))
    .header(header("Up links per switch u", "", "$u$", "")),
    field("trunking", count(1, MAX_COUNT), |s| maybe_count(s.topology.count("trunking")))
        .described()
        .display(display("K", "links per router pair", ""))
        .header(header("Trunking K", "", "$K$", "")),
    field("graph", Value::Text, |s| maybe_text(s.topology.graph().map(|g| g.file.clone())))
        .described()
        .header(header("Graph", "", "Graph", "")),
    field("graph_blake3", Value::Text, |s| {
        maybe_text(s.topology.graph().map(|g| g.blake3.clone()))
    })
    .derived()
    .hidden()
    .header(header("Graph blake3", "", "Graph blake3", "")),
    field("switching", Value::Name, |s| text(s.switching.kind())).described().header(header(
        "Switching",
        "",
        "Switching",
        "",
    )),
    field("scouting_distance", count(0, MAX_COUNT), |s| {
        maybe_count(s.switching.scouting_distance())
    })
    .described()
    .display(display("K", "scouting distance", "hops"))
    .header(header("Scouting distance K", "", "$K$", "")),
    field("routing", Value::Name, |s| text(s.routing.as_str()))
        .described()
        .header(header("Routing", "", "Routing", "")),
    field("virtual_channels", count(1, u32::MAX), |s| whole(s.virtual_channels))
        .described()
        .display(display("V", "virtual channels per physical channel", ""))
        .header(header("Virtual channels V", "", "$V$", "")),
    field("escape_channels", count(1, u32::MAX), |s| maybe_count(s.escape_channels))
        .described()
        .display(display("V2", "escape virtual channels", ""))
        .header(header("Escape channels V\u{2082}", "", "$V_2$", "")),
    field("buffer_depth", count(1, MAX_COUNT), |s| whole(s.buffer_depth))
        .simulator()
        .display(display("B", "buffer depth", "flits"))
        .header(header("Buffer depth B", "flits", "$B$", "(flits)")),
    field("router_delay", count(0, MAX_COUNT), |s| whole(s.router_delay))
        .simulator()
        .display(display("", "router delay", "cycles"))
        .header(header("Router delay", "cycles", "Router delay", "(cycles)")),
    field("input_speedup", count(1, MAX_COUNT), |s| maybe_count(s.input_speedup))
        .simulator()
        .display(display("", "input speed-up", ""))
        .header(header("Input speed-up", "", "Speed-up", "")),
    field("channel_latency", count(1, MAX_LATENCY), |s| maybe_count(s.channel_latency))
        .simulator()
        .display(display("L", "channel latency", "cycles"))
        .header(header("Channel latency L", "cycles", "$L$", "(cycles)")),
    field("global_channel_latency", count(1, MAX_LATENCY), |s| {
        maybe_count(s.global_channel_latency)
    })
    .simulator()
    .display(display("", "global channel latency", "cycles"))
    .header(header("Global channel latency", "cycles", "Global latency", "(cycles)")),
    field("credit_delay", count(0, MAX_LATENCY), |s| maybe_count(s.credit_delay))
        .simulator()
        .display(display("", "credit delay", "cycles"))
        .header(header("Credit delay", "cycles", "Credit delay", "(cycles)")),
    field("switch_delay", count(0, MAX_LATENCY), |s| maybe_count(s.switch_delay))
        .simulator()
        .display(display("", "switch delay", "cycles"))
        .header(header("Switch delay", "cycles", "Switch delay", "(cycles)")),
    field("vc_allocation_delay", count(0, MAX_LATENCY), |s| maybe_count(s.vc_allocation_delay))
        .simulator()
        .display(display("", "VC allocation delay", "cycles"))
        .header(header("VC allocation delay", "cycles", "VA delay", "(cycles)")),
    field("vc_reallocation", Value::Name, |s| {
        maybe_text((!s.vc_reallocation.is_drained()).then(|| s.vc_reallocation.as_str().to_owned()))
    })
    .null_is("drained")
    .simulator()
    .header(header("VC reallocation", "", "VC reallocation", "")),
    field("switch_allocator", Value::Name, |s| {
        maybe_text(
            (!s.switch_allocator.is_greedy()).then(|| s.switch_allocator.as_str().to_owned()),
        )
    })
    .null_is("greedy")
    .simulator()
    .header(header("Switch allocator", "", "Switch allocator", "")),
    field("switch_allocator_iterations", count(1, 64), |s| {
        maybe_count(s.switch_allocator_iterations)
    })
    .simulator()
    .display(display("", "switch allocator iterations", ""))
    .header(header("Allocator iterations", "", "Iterations", "")),
    field("vc_allocator", Value::Name, |s| {
        maybe_text((!s.vc_allocator.is_sequential()).then(|| s.vc_allocator.as_str().to_owned()))
    })
    .null_is("sequential")
    .simulator()
    .header(header("VC allocator", "", "VC allocator", "")),
    field("vc_classes", Value::Name, |s| {
        maybe_text((!s.vc_classes.is_spread()).then(|| s.vc_classes.as_str().to_owned()))
    })
    .null_is("spread")
    .simulator()
    .header(header("VC classes", "", "VC classes", "")),
    field("ugal_threshold", count(0, MAX_COUNT), |s| maybe_count(s.ugal_threshold))
        .simulator()
        .display(display("", "UGAL threshold", "flits"))
        .header(header("UGAL threshold", "flits", "UGAL threshold", "(flits)")),
    field("message_length", count(1, MAX_COUNT), |s| whole(s.message_length))
        .described()
        .display(display("M", "message length", "flits"))
        .header(header("Message length M", "flits", "$M$", "(flits)")),
    field("message_length_second_moment", real(1.0, f64::MAX, true), |s| {
        maybe_real(s.message_length_second_moment)
    })
    .display(display("", "second moment of the message length", "flits\u{b2}"))
    .header(header("Second moment of M", "flits\u{b2}", "$\\overline{M^2}$", "(flits$^2$)")),
    field("message_length_distribution", Value::Name, |s| {
        text(s.message_length_distribution.as_str())
    })
    .header(header("Message lengths", "", "Lengths", "")),
    field("message_length_min", count(1, MAX_COUNT), |s| {
        maybe_count(s.message_length_distribution.bounds().map(|b| b.0))
    })
    .display(display("", "shortest message length", "flits"))
    .header(header("Shortest message", "flits", "$M_{\\min}$", "(flits)")),
    field("message_length_max", count(1, MAX_COUNT), |s| {
        maybe_count(s.message_length_distribution.bounds().map(|b| b.1))
    })
    .display(display("", "longest message length", "flits"))
    .header(header("Longest message", "flits", "$M_{\\max}$", "(flits)")),
    field("packet_size", count(1, MAX_COUNT), |s| maybe_count(s.packet_size))
        .simulator()
        .display(display("P", "packet size", "flits"))
        .header(header("Packet size P", "flits", "$P$", "(flits)")),
    field("reply_length", count(1, MAX_COUNT), |s| maybe_count(s.reply_length))
        .simulator()
        .display(display("", "reply length", "flits"))
        .header(header("Reply length", "flits", "Reply length", "(flits)")),
    field("outstanding_requests", count(1, MAX_COUNT), |s| maybe_count(s.outstanding_requests))
        .simulator()
        .display(display("", "outstanding requests", ""))
        .header(header("Outstanding requests", "", "Outstanding", "")),
    field("fault_rate", real(0.0, 1.0, false), |s| Cell::Real(s.fault_rate))
        .described()
        .display(display("\u{3b8}", "node-failure probability", ""))
        .header(header("Node-failure probability \u{3b8}", "", "$\\theta$", "")),
    field("broadcast_fraction", real(0.0, 1.0, true), |s| Cell::Real(s.broadcast_fraction))
        .described()
        .display(display("\u{3b2}", "broadcast fraction", ""))
        .header(header("Broadcast fraction \u{3b2}", "", "$\\beta$", "")),
    field("startup_latency", real(0.0, 1e9, true), |s| Cell::Real(s.startup_latency))
        .described()
        .display(display("\u{394}", "start-up latency", "cycles"))
        .header(header("Start-up latency \u{394}", "cycles", "$\\Delta$", "(cycles)")),
    field("injection", Value::Name, |s| {
        maybe_text((!s.injection.is_parallel()).then(|| s.injection.as_str().to_owned()))
    })
    .null_is("parallel")
    .simulator()
    .header(header("Injection", "", "Injection", "")),
    field("ejection", Value::Name, |s| text(s.ejection.as_str()))
        .simulator()
        .header(header("Ejection", "", "Ejection", "")),
    field("dateline", Value::Name, |s| {
        maybe_text(s.dateline_convention().map(|d| d.as_str().to_owned()))
    })
    .simulator()
    .header(header("Dateline", "", "Dateline", "")),
    field("tie_break", Value::Name, |s| {
        maybe_text(s.tie_break_convention().map(|t| t.as_str().to_owned()))
    })
    .simulator()
    .header(header("Tie break", "", "Tie break", "")),
    field("traffic", Value::Name, |s| text(s.traffic.as_str()))
        .described()
        .header(header("Traffic", "", "Traffic", "")),
    field("hotspot_fraction", real(0.0, 1.0, true), |s| match &s.traffic {
        Traffic::Hotspot { fraction, .. } => Cell::Real(*fraction),
        _ => Cell::Null,
    })
    .described()
    .display(display("", "hot-spot fraction", ""))
    .header(header("Hotspot fraction h", "", "$h$", "")),
    Field {
        key_only: true,
        ..field("hotspot_nodes", Value::Text, |s| match &s.traffic {
            Traffic::Hotspot { nodes, .. } => {
                Cell::Text(nodes.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
            }
            _ => Cell::Null,
        })
        .derived()
    }
    .header(header("Hotspot nodes", "", "Hotspot", "nodes")),
    field("injection_process", Value::Name, |s| text(s.injection_process.as_str())).header(header(
        "Injection process",
        "",
        "Injection",
        "",
    )),
    field("burst_length", real(1.0, 1e9, true), |s| maybe_real(s.injection_process.burst_length()))
        .display(display("B", "mean burst length", "messages"))
        .header(header("Mean burst length B", "messages", "$B$", "(messages)")),
    field("broadcast_order", Value::Name, |s| {
        maybe_text((s.broadcast_fraction > 0.0).then(|| s.broadcast_order.as_str().to_owned()))
    })
    .simulator()
    .header(header("Broadcast order", "", "Broadcast", "order")),
    field("circuit_backoff", count(0, MAX_COUNT), |s| {
        maybe_count((s.switching == Switching::Circuit).then(|| s.circuit_backoff.unwrap_or(0)))
    })
    .simulator()
    .display(display("", "circuit retry back-off", "cycles"))
    .header(header("Retry back-off", "cycles", "Back-off", "(cycles)")),
    field("circuit_retry_limit", count(0, u32::MAX), |s| {
        maybe_count(
            (s.switching == Switching::Circuit)
                .then(|| s.circuit_retry_limit.unwrap_or(DEFAULT_CIRCUIT_RETRY_LIMIT)),
        )
    })
    .simulator()
    .display(display("", "circuit retry limit", "attempts"))
    .header(header("Retry limit", "", "Retry", "limit")),
    field("trace_blake3", Value::Text, |s| maybe_text(s.traffic.trace().map(|t| t.blake3.clone())))
        .derived()
        .hidden()
        .header(header("Trace (blake3)", "", "Trace", "(blake3)")),
];

fn whole(n: u32) -> Cell {
    Cell::Count(u64::from(n))
}

fn maybe_count(n: Option<u32>) -> Cell {
    n.map_or(Cell::Null, whole)
}

fn maybe_real(x: Option<f64>) -> Cell {
    x.map_or(Cell::Null, Cell::Real)
}

fn text(name: &str) -> Cell {
    Cell::Text(name.to_owned())
}

fn maybe_text(text: Option<String>) -> Cell {
    text.map_or(Cell::Null, Cell::Text)
}

/// The field named `name`.
pub fn get(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|field| field.name == name)
}

/// The name a null cell of column `name` stands for ([`Field::null_is`]), if it has one.
pub fn null_is(name: &str) -> Option<&'static str> {
    get(name).and_then(|field| field.null_is)
}

/// Whether two names are equal (`==` on `str` is not `const`).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Which fields a derived list takes.
#[derive(Clone, Copy)]
enum Pick {
    Swept,
    Column,
    Shown,
    Described,
}

const fn picks(field: &Field, pick: Pick) -> bool {
    match pick {
        Pick::Swept => field.swept,
        Pick::Column => field.column,
        Pick::Shown => field.shown,
        Pick::Described => field.described,
    }
}

const fn count_of(pick: Pick) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < FIELDS.len() {
        if picks(&FIELDS[i], pick) {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn names<const N: usize>(pick: Pick) -> [&'static str; N] {
    assert!(count_of(pick) == N, "the length of a derived field list is off");
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < FIELDS.len() {
        if picks(&FIELDS[i], pick) {
            out[n] = FIELDS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// Position of `name` in [`FIELDS`]; a compile-time error when no field has that name.
pub const fn index(name: &str) -> usize {
    let mut i = 0;
    while i < FIELDS.len() {
        if same(FIELDS[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("not a scenario field")
}

/// Position of `name` among the sweep axes ([`SWEPT`]); a compile-time error when it is
/// not one.
pub const fn swept_index(name: &str) -> usize {
    let mut i = 0;
    while i < SWEPT.len() {
        if same(SWEPT[i], name) {
            return i;
        }
        i += 1;
    }
    panic!("not a swept scenario field")
}

/// The spec's sweep axes in expansion order: the first varies slowest. Each is also a
/// command-line key.
pub const SWEPT: [&str; count_of(Pick::Swept)] = names(Pick::Swept);

/// The result columns of a scenario, in `results.parquet` order ([`columns`] as names).
pub const COLUMNS: [&str; count_of(Pick::Column)] = names(Pick::Column);

/// The result columns that describe a scenario, in display order.
pub const SHOWN: [&str; count_of(Pick::Shown)] = names(Pick::Shown);

/// The scenario columns a prose description of a system names, in order.
pub const DESCRIBED: [&str; count_of(Pick::Described)] = names(Pick::Described);

/// The names [`each_column`] lists, in its order.
macro_rules! column_names {
    ($( $(#[$meta:meta])* $name:ident: $kind:ident; )*) => {
        const EACH_COLUMN: &[&str] = &[$(stringify!($name)),*];
    };
}
each_column!(column_names);

// `each_column` lists the column fields of `FIELDS`, in their order: a field added to one and
// not the other does not compile.
const _: () = {
    assert!(EACH_COLUMN.len() == COLUMNS.len(), "each_column and FIELDS list different columns");
    let mut i = 0;
    while i < COLUMNS.len() {
        assert!(same(EACH_COLUMN[i], COLUMNS[i]), "each_column and FIELDS list different columns");
        i += 1;
    }
};

/// The result columns of a scenario, in `results.parquet` order.
pub fn columns() -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(|field| field.column)
}

/// The keys `runner solve` refuses because only the simulator reads them.
pub fn simulator_only() -> impl Iterator<Item = &'static str> {
    FIELDS.iter().filter(|f| f.evaluators == Evaluators::Simulator).map(|f| f.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_in_the_fields_words() {
        for (index, field) in FIELDS.iter().enumerate() {
            assert!(
                FIELDS[index + 1..].iter().all(|other| other.name != field.name),
                "`{}` is listed twice",
                field.name
            );
            assert!(
                field
                    .name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            );
        }
    }

    #[test]
    fn every_column_has_a_header_and_every_numeric_column_a_display() {
        for field in columns() {
            assert!(field.header.is_some(), "column `{}` has no table header", field.name);
            assert_eq!(
                field.display.is_some(),
                field.value.is_number(),
                "`{}`: numeric columns and only they have a display entry",
                field.name
            );
        }
    }

    #[test]
    fn shown_and_described_fields_are_columns_and_swept_ones_are_keys() {
        for field in FIELDS {
            assert!(!field.shown || field.column, "`{}` is shown but no column", field.name);
            assert!(!field.described || field.shown, "`{}` is described but not shown", field.name);
            assert!(!(field.swept && field.key_only), "`{}`", field.name);
        }
        assert_eq!(SWEPT[swept_index("circuit_retry_limit")], "circuit_retry_limit");
        assert_eq!(swept_index("topology"), 0);
    }
}
