//! Network families, one file each, behind the small interface the geometry asks
//! ([`Network`]: ports, neighbour table, minimal steps, names), plus the routing cases of the
//! families that have their own (`routing::Router` asks those).
//!
//! `torus` numbers and steps tori and meshes, `hypercube` the binary n-cube (both routed in
//! `routing`); the butterfly fat-tree's numbering and wiring are `fat_tree`, the k-ary
//! n-tree's `kary_ntree` (their `up_down` cases are in `routing`), the HyperX's `hyperx`
//! (routed by `routing`'s dimension-order, adaptive and Duato cases; its `valiant` case is its
//! own), the Slim Fly's `slim_fly` (its MMS graph over a finite field, and its `minimal` and
//! `valiant` cases with their VC classes). `dragonfly` (Kim, Dally, Scott and Abts, ISCA 2008)
//! holds its numbering of terminals and routers, its global-link arrangement, and its minimal,
//! Valiant and UGAL routing cases (UGAL-L, UGAL-G, PAR) with their virtual-channel classes. `graph` is any network read from a file: its numbering, up*/down* route tables and
//! the `up_down` and `minimal` (with an up*/down* escape) routing cases. `hop` is the
//! vocabulary they share (steps, candidates, headers), `digits` the mixed-radix numbering of
//! node ids.
//!
//! A new family is a file here implementing [`Network`], plus one variant of
//! `topology::Family` and its arms in `topology` (sizes, construction, dispatch).

use crate::scenario::Scenario;

use super::SimError;
use hop::Step;

pub(crate) mod digits;
pub(crate) mod dragonfly;
pub(crate) mod fat_tree;
pub(crate) mod graph;
pub(crate) mod hop;
pub(crate) mod hypercube;
pub(crate) mod hyperx;
pub(crate) mod kary_ntree;
pub(crate) mod slim_fly;
pub(crate) mod torus;

/// What the geometry (`topology::Geometry`) asks a network family. Routers are numbered
/// `0..routers` with the traffic endpoints (nodes) first; in the family's tables channel
/// `router * ports + port` leaves `router` through `port` (the geometry drops the slots of
/// terminals' unused ports from the engine's channel ids, `Geometry::first_channel`).
pub(crate) trait Network {
    /// Output ports per router (the same for every router; unused ones have no link).
    fn ports(&self) -> u32;

    /// The neighbour table: the downstream router of each channel `router * ports + port`,
    /// `NO_LINK` where there is no link.
    fn neighbors(&self) -> Vec<u32>;

    /// Calls `visit` with every minimal step from router `cur` towards node `dest` and returns
    /// the distance in hops.
    fn minimal_steps(&self, cur: u32, dest: u32, visit: impl FnMut(Step)) -> u32;

    /// The dimension-order step from `cur` towards `dest` and its dimension (`ties`: the
    /// message's tie-break bits), `None` when `cur == dest`. A family without dimensions: its
    /// first minimal step, in dimension 0 (no routing asks it there).
    #[inline]
    fn dimension_order_step(&self, cur: u32, dest: u32, _ties: u32) -> Option<(Step, u32)> {
        let mut first = None;
        self.minimal_steps(cur, dest, |step| {
            first.get_or_insert((step, 0));
        });
        first
    }

    /// Colour of a bipartite labelling (links join routers of different colours; Nbc's
    /// negative hops). A family that is not bipartite answers 0 (no routing asks it there).
    fn parity(&self, router: u32) -> u32;

    /// A router's human-readable name, e.g. `(3,0)` or `S(1,2)`.
    fn describe(&self, router: u32) -> String;

    /// A port's human-readable name, e.g. `+x0` or `parent_1`.
    fn describe_port(&self, port: u32) -> String;

    /// The class of the link leaving `router` through `port` towards `downstream`, for
    /// per-class load summaries: links of one class should carry comparable loads under
    /// uniform traffic (a dimension, the levels a tree link joins, a dragonfly link's kind).
    fn link_class(&self, router: u32, port: u32, downstream: u32) -> String;
}

/// The threshold of the UGAL-like routings (the dragonfly's `ugal`, `ugal_global` and `par`, the
/// HyperX's `ugal` and `dal`), in flits: `ugal_threshold`, by default one message's (packet's)
/// flits on a hop, as one buffer holds them (`message_length`, or `packet_size` when shorter,
/// at most `buffer_depth`).
pub(crate) fn ugal_threshold(scenario: &Scenario) -> u32 {
    let message = scenario.packet_size.unwrap_or(u32::MAX).min(scenario.message_length);
    scenario.ugal_threshold.unwrap_or(message.min(scenario.buffer_depth))
}

/// The checks a family with its own routing cases shares: wormhole or virtual cut-through
/// switching only, and no
/// `escape_channels` (its routings fix their own VC use). `network` names it in messages
/// (`the dragonfly`), `no_escape` says why the routing has no such setting.
pub(crate) fn flit_buffered_without_escape_channels(
    scenario: &Scenario,
    network: &str,
    no_escape: &str,
) -> Result<(), SimError> {
    if !scenario.switching.buffers_flits() {
        return Err(SimError(format!(
            "{network} is simulated with wormhole or virtual cut-through switching, got {}",
            scenario.switching.kind()
        )));
    }
    if let Some(e) = scenario.escape_channels {
        return Err(SimError(format!(
            "{} routing {no_escape}: leave escape_channels unset, got {e}",
            scenario.routing.as_str()
        )));
    }
    Ok(())
}
