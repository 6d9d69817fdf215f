//! Routing functions: which output virtual channels a header may request.
//!
//! A routing function maps (current node, destination, per-message routing state) to a short
//! list of [`Candidate`]s: an output port plus a bit mask of the virtual channels allowed on it
//! (V <= 64). The engine then picks uniformly at random among the allowed VCs that are free, so
//! the selection policy lives in one place and every algorithm here is a pure function.
//! A candidate also carries a fallback mask, used only when no preferred VC is free: Duato's
//! escape channels are the fallback, as in the papers ("when there is more than one available
//! adaptive virtual channel, a message chooses one at random"; the deterministic one is the
//! last resort). Duato-Nbc offers adaptive and usable escape VCs alike (errata E-NBC-3 weighs
//! them uniformly: P_v0 = V1 / (V1 + U)). `dimension_order` and `adaptive` have no escape
//! channels: `sim::check` refuses `escape_channels` for them (`scenario::bounds`).
//!
//! Virtual-channel layout on every physical channel (VC index = bit in the masks):
//! - `dimension_order`: torus VCs split into two dateline classes by parity (even VCs: class 0,
//!   odd VCs: class 1); meshes and hypercubes (e-cube) use all V VCs. Which class a hop uses
//!   is the scenario's `dateline` convention:
//!   - `per_traversal` (the default): the class is fixed once per ring traversal, class 0 for
//!     the whole traversal if it crosses the wrap-around link, class 1 otherwise. Deadlock-free
//!     for minimal routing: class 1 never uses the wrap link, so its dependencies in a ring
//!     direction form a path; in class 0 a dependency from link `i` to link `i + 1` needs a
//!     traversal holding both and the wrap link, at most k/2 links long, so no dependency joins
//!     the two links k/2 - 1 and k/2 hops after the wrap link and the chain is cut. In each
//!     ring direction only the wrap link (class 0 only) and the links next to it carry one
//!     class; everywhere else both classes share the traffic.
//!   - `switch` (Dally-Seitz): class 0 while the route in the current dimension still has to
//!     cross the wrap-around link, class 1 after it (or throughout when it never wraps). In
//!     each ring direction k/2 + 1 of the k links then carry a single class, so with V = 2
//!     they behave like one-VC links and the network saturates earlier.
//!
//!   At distance exactly k/2 both directions are minimal; the `tie_break` convention picks
//!   `random` (the default: a bit per message and dimension, drawn when the message is
//!   generated and kept across header retries, so each message's route is deterministic and
//!   the + and - links carry equal load under uniform traffic) or `positive` (always +, which
//!   loads the + links of an 8-ring 25% more than the - links).
//! - `adaptive`: all V VCs on every minimal port, no deadlock avoidance.
//! - `up_down` (butterfly fat-tree only, Greenberg and Guan, Sec. 3.1): all V VCs on every
//!   minimal port, which on the fat-tree are both parent links of a switch below the lowest
//!   common ancestor level and the one child link towards the destination above it
//!   (`network::fat_tree`), so a worm climbs to that level, turns there and descends deterministically.
//!   The engine's selection (uniform among the free VCs of both candidates) is, with one VC per
//!   link (V = 1, the paper's network), exactly the paper's "selects an up-link randomly, if
//!   that link is blocked, it tries the other": the random draw happens only when both are
//!   free. With V > 1 it is uniform over the free VCs of both links, so the link with more
//!   free VCs is the likelier. A header blocked at both waits and retries every cycle, and
//!   takes whichever VC frees first. Contention for a link is first come, first served: the
//!   engine retries waiting headers oldest first (in the order they entered the pending list:
//!   by arrival cycle, and within a cycle in the engine's order of moves, i.e. its list of
//!   active channels, then injections in generation order), so the longest-waiting header
//!   gets a freed VC. Up then down never closes a cycle of channel dependencies, so the
//!   routing is deadlock-free with any V and needs no escape channels.
//!   On the k-ary n-tree (`network::kary_ntree`, Petrini and Vanneschi, IPPS 1997) the same
//!   rule offers all `k` up ports of a switch below the nearest-common-ancestor level: the
//!   choice of up port is adaptive (whichever free VC the engine draws), the descent
//!   deterministic.
//! - `up_down_random` (both fat-trees): the same routes, but one up port per hop, drawn at
//!   random per message: a hash of the message's draw (made when it is generated, kept across
//!   header retries) and the current router's id picks one of the minimal up ports, so a
//!   message's route is fixed and independent of the network's state (the oblivious random
//!   choice of the fat-tree literature; a blocked header waits for that port).
//! - `d_mod_k` (the k-ary n-tree only): the same routes with the up port at level `l` the
//!   destination's base-k digit `l - 1`, `floor(d / k^(l-1)) mod k` (D-mod-k, the rule of
//!   InfiniBand's fat-tree routing; Zahavi et al., Concurrency and Computation 2010): every
//!   message to one destination climbs through the same switches, so the route is a function
//!   of the destination alone and the descent towards it is never shared with another
//!   destination's. Messages from one switch to destinations with the same digit share its up
//!   link (`transpose` on a 2-level tree: all of a switch's terminals on one link), where
//!   destinations with distinct low digits spread over all of them (`neighbor`).
//! - `duato`: VCs `0..E` are the escape class (dimension order; on a torus E >= 2 split into
//!   the two dateline classes by parity, default E = 2, because a torus ring with a single
//!   escape VC has a cyclic channel dependency); VCs `E..V` are adaptive on every minimal port.
//!   On the hypercube E = 1: the papers' class b (one e-cube VC) and class a (V - 1 adaptive).
//!   The escape class keeps `dateline: switch` and `tie_break: positive`. A message may enter
//!   the escape network anywhere in a ring, after adaptive hops, so fixing its class per
//!   traversal would need per-message state that Duato's sufficient condition (an escape
//!   routing function of the current node and destination whose extended dependency graph is
//!   acyclic) does not cover; likewise a per-message random tie makes the escape function
//!   depend on more than (node, destination). Both may well be safe, but that is not proved
//!   here, so the simulator refuses them for `duato`.
//! - `nbc` (Duato-Nbc, errata E-NBC-1): VCs `0..V2` are the negative-hop escape levels and
//!   VCs `V2..V` are adaptive (V1 = V - V2). Nodes are coloured like a checkerboard (parity of
//!   the coordinate sum; the network must be bipartite, so a torus needs an even radix); a hop
//!   from colour 1 to colour 0 is negative. A message keeps a level `m` (0 at the source): after
//!   a hop on escape level `c` it becomes `c + [hop was negative]`, after an adaptive hop
//!   `m + [negative]`. On a hop from node `u` with `r` hops left it may use any escape level `c`
//!   with `m <= c <= V2 - 1 - need(u, r)`, where `need` is the number of negative hops among the
//!   next `r - 1` hops (`floor(r/2)` if `u` has colour 1, else `floor((r-1)/2)`: colours
//!   alternate along every minimal path). The unused levels are the bonus cards. Escape levels
//!   are allowed on every minimal port. Within one level a dependency chain has at most two
//!   channels (positive hop then negative hop), and between levels dependencies only go up, so
//!   the escape network is acyclic; `m + need` never grows, so a level always exists. The
//!   minimum V2 is `floor(diameter / 2) + 1` (k/2 + 1 on the 2-D torus), the default.
//! - Turn-model routings on the 2-D mesh, partially adaptive and minimal, all V VCs on every
//!   port they offer (no escape class: the turns they forbid leave no cycle of channel
//!   dependencies, which `tests::turn_models_have_acyclic_channel_dependencies` checks on the
//!   physical channels of small meshes). Dimension 0 is x (east = +, port 0; west = -,
//!   port 1), dimension 1 is y (north = +, port 2; south = -, port 3).
//!   - `west_first` (Glass and Ni, "The turn model for adaptive routing", ISCA 1992): a
//!     message whose destination lies west goes west first, deterministically; then (or when
//!     it never has to go west) it may take any minimal port among east, north and south. The
//!     two turns into the west direction (north to west, south to west) never happen.
//!   - `odd_even` (Chiu, "The odd-even turn model for adaptive routing", IEEE TPDS 2000): no
//!     east-to-north or east-to-south turn at a node in an even column, no north-to-west or
//!     south-to-west turn at a node in an odd column (columns counted from 0). The minimal
//!     route set is the paper's ROUTE function (its Fig. 3): with the destination east
//!     (`e0 > 0`) and in another row, y is offered when the current column is odd or is the
//!     source's, and east when the destination column is odd or more than one column away;
//!     with the destination west, west always and y only in an even column; in the
//!     destination's column, y only. Unlike west-first, the adaptiveness is spread evenly over
//!     eastbound and westbound messages.
//!
//!   Both need a mesh: the turn model alone does not break the cycles that a torus's
//!   wrap-around links close, so `Router::new` refuses them elsewhere.
//! - `minimal`, `valiant`, `ugal`, `ugal_global`, `par` and `ugal_booksim` (dragonfly only,
//!   and the only routings there): one port
//!   per hop, the VCs of the class given by the global hops taken so far; the routing cases,
//!   the classes, UGAL's choice at the source router and the intermediate group drawn per
//!   message (kept in the header's `ties`) are in `network::dragonfly`.
//! - On a graph read from a file (`network::graph`), `up_down` (up*/down* on a BFS spanning
//!   tree: every VC of the ports starting a shortest legal route) and `minimal` (adaptive VCs
//!   `1..V` on every minimal port, VC 0 the up*/down* escape channel, taken only when no
//!   adaptive VC is free and kept to the destination): the cases, the orientation and the
//!   deadlock-freedom argument are in `network::graph`.

use crate::scenario::{Dateline, Routing, Scenario, TieBreak, Topology};

use super::SimError;
use super::network::dragonfly::{self, NO_GROUP};
use super::network::graph;
use super::network::hop::{Candidate, Header};
use super::network::hyperx;
use super::network::slim_fly;
use super::rng::Rng;
use super::topology::{Family, Geometry, Size};

/// A configured routing function (see the module docs for the VC layout).
#[derive(Clone, Debug)]
pub(crate) struct Router {
    /// This module's routing cases, or those of a family that has its own.
    cases: Cases,
    /// UGAL: the engine asks [`Router::decide`] before routing a header.
    pub(crate) decides_at_source: bool,
    /// BookSim's UGAL: the state [`Router::decide`] returns is kept at once (the choice is
    /// made once, at the header's first routing attempt), not only with the VC grant.
    pub(crate) decides_once: bool,
    /// The routing's name, for deadlock reports.
    pub(crate) name: &'static str,
}

/// Whose routing cases a [`Router`] runs.
#[derive(Clone, Debug)]
enum Cases {
    /// The routings of this module, on tori, meshes, hypercubes and the fat-trees.
    Cube(Cube),
    /// This module's routings on a HyperX with `K > 1` links per router pair: the
    /// dimension-order step on every one of its links ([`Cube::spread_over_trunk`]).
    Trunked(Cube),
    /// A dragonfly routing (`network::dragonfly`).
    Dragonfly(dragonfly::Routes),
    /// A graph routing (`network::graph`).
    Graph(graph::Routes),
    /// The HyperX's `valiant` (`network::hyperx`).
    HyperX(hyperx::Routes),
    /// The Slim Fly's `minimal` and `valiant` (`network::slim_fly`).
    SlimFly(slim_fly::Routes),
}

/// The VC masks of a routing of this module (tori, meshes, hypercubes, fat-trees).
#[derive(Clone, Debug)]
struct Cube {
    /// Dimension order on a torus: the class is fixed per ring traversal (else it switches
    /// at the wrap link).
    per_traversal: bool,
    /// Messages draw random tie-break bits (else every tie goes +).
    random_ties: bool,
    /// Virtual channels allowed on every minimal port.
    adaptive: u64,
    /// Dimension-order (or escape) VCs for dateline class 0 and 1; 0 when unused.
    dimension_order: [u64; 2],
    /// Number of Nbc escape levels V2; 0 when not Nbc.
    nbc_levels: u32,
    /// A turn-model routing on the 2-D mesh (its VCs are `adaptive`).
    turn_model: Option<TurnModel>,
    /// `up_down_random` and `d_mod_k`: one minimal up port per hop, picked from the
    /// message's draw or from the destination; `None`: every up port.
    up_port: Option<UpPort>,
}

/// How a fat-tree route picks its one up port per hop (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UpPort {
    /// `up_down_random`: drawn per message and router.
    Random,
    /// `d_mod_k`: the destination's digit of the switch's level (k-ary n-tree).
    DestinationDigit,
}

/// The turn-model routings of the 2-D mesh (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TurnModel {
    WestFirst,
    OddEven,
}

/// Mesh ports: east (+x), west (-x), north (+y), south (-y).
const EAST: u32 = 0;
const WEST: u32 = 1;
const NORTH: u32 = 2;
const SOUTH: u32 = 3;

impl TurnModel {
    /// Calls `visit` with each port this turn model offers from `(c0, c1)` towards
    /// `(d0, d1) != (c0, c1)` for a message from column `s0`.
    fn ports(
        self,
        s0: u32,
        (c0, c1): (u32, u32),
        (d0, d1): (u32, u32),
        mut visit: impl FnMut(u32),
    ) {
        let y_port = match d1.cmp(&c1) {
            std::cmp::Ordering::Greater => Some(NORTH),
            std::cmp::Ordering::Less => Some(SOUTH),
            std::cmp::Ordering::Equal => None,
        };
        match self {
            TurnModel::WestFirst => {
                if d0 < c0 {
                    visit(WEST);
                    return;
                }
                if d0 > c0 {
                    visit(EAST);
                }
                if let Some(port) = y_port {
                    visit(port);
                }
            }
            TurnModel::OddEven => {
                if d0 == c0 {
                    if let Some(port) = y_port {
                        visit(port);
                    }
                } else if d0 > c0 {
                    match y_port {
                        None => visit(EAST),
                        Some(port) => {
                            if c0 % 2 == 1 || c0 == s0 {
                                visit(port);
                            }
                            if d0 % 2 == 1 || d0 - c0 != 1 {
                                visit(EAST);
                            }
                        }
                    }
                } else {
                    visit(WEST);
                    if c0.is_multiple_of(2)
                        && let Some(port) = y_port
                    {
                        visit(port);
                    }
                }
            }
        }
    }
}

/// An index in `0..count` from a message's draw and a router id: a 64-bit mix (SplitMix64's
/// finaliser) scaled by a multiply-high, so every (message, router) pair makes an independent,
/// uniform choice that is the same each time the header is routed there.
#[inline]
fn pick(draw: u32, router: u32, count: usize) -> usize {
    let mut x = (u64::from(draw) << 32 | u64::from(router)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    ((u128::from(x) * count as u128) >> 64) as usize
}

/// Adds `candidate`'s VCs to the candidate of its port in `out`, or appends it.
#[inline(always)]
fn merge_candidate(out: &mut Vec<Candidate>, candidate: Candidate) {
    match out.iter_mut().find(|c| c.port == candidate.port) {
        Some(c) => {
            c.mask |= candidate.mask;
            c.fallback |= candidate.fallback;
        }
        None => out.push(candidate),
    }
}

/// Bits `lo..hi` set.
fn bits(lo: u32, hi: u32) -> u64 {
    let upto = |n: u32| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    upto(hi) & !upto(lo)
}

/// Bits of `0..v` with the given parity.
fn parity_bits(v: u32, parity: u32) -> u64 {
    (0..v).filter(|i| i % 2 == parity).fold(0, |mask, i| mask | 1 << i)
}

impl Router {
    /// Validates the routing against the topology (of sizes `size`) and builds the VC masks.
    pub(crate) fn new(scenario: &Scenario, size: &Size) -> Result<Router, SimError> {
        let v = scenario.virtual_channels;
        if !(1..=64).contains(&v) {
            return Err(SimError(format!(
                "the simulator supports 1 to 64 virtual channels per physical channel, got {v}"
            )));
        }
        let name = scenario.routing.as_str();
        // A network family with its own routing cases (`network/`).
        if let Some(routes) = graph::Routes::new(scenario)? {
            return Ok(Router {
                cases: Cases::Graph(routes),
                decides_at_source: false,
                decides_once: false,
                name,
            });
        }
        if let Some(routes) = slim_fly::Routes::new(scenario)? {
            return Ok(Router {
                cases: Cases::SlimFly(routes),
                decides_at_source: false,
                decides_once: false,
                name,
            });
        }
        if let Some(routes) = hyperx::Routes::new(scenario)? {
            return Ok(Router {
                decides_at_source: routes.decides(),
                cases: Cases::HyperX(routes),
                decides_once: false,
                name,
            });
        }
        if let Some(routes) = dragonfly::Routes::new(scenario)? {
            let (decides_at_source, decides_once) =
                (routes.decides_at_source(), routes.decides_once());
            return Ok(Router {
                cases: Cases::Dragonfly(routes),
                decides_at_source,
                decides_once,
                name,
            });
        }
        refuse_unsupported(scenario, size)?;
        let cube = Cube::new(scenario, size)?;
        let trunked =
            matches!(scenario.topology, Topology::HyperX { trunking: Some(k), .. } if k > 1);
        let cases = if trunked { Cases::Trunked(cube) } else { Cases::Cube(cube) };
        Ok(Router { cases, decides_at_source: false, decides_once: false, name })
    }

    /// Whether messages draw random tie-break bits (the torus's `tie_break: random`).
    pub(crate) fn random_ties(&self) -> bool {
        matches!(&self.cases, Cases::Cube(cube) if cube.random_ties)
    }

    /// Fills `out` with the allowed output VCs from `cur` towards `header.dest != cur`.
    #[inline]
    pub(crate) fn candidates(
        &self,
        geometry: &Geometry,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        out.clear();
        // This module's routings first, on one test of the case: a match over every family's
        // cases cost them 2.5 instructions per call more once the HyperX's came (callgrind).
        // The dragonfly's second: behind the out-of-line match its 4-flit messages paid
        // about 30 instructions per routing for the call and the match (callgrind, p = 2,
        // minimal: 2.2% of its instructions).
        match (&self.cases, &geometry.family) {
            (Cases::Cube(cube), _) => cube.candidates(geometry, cur, header, out),
            (Cases::Dragonfly(routes), Family::Dragonfly(df)) => {
                routes.candidates(df, cur, header, out)
            }
            _ => self.family_candidates(geometry, cur, header, out),
        }
    }

    /// [`Router::candidates`] of a family's own routing cases (`network/`), but the
    /// dragonfly's, taken there.
    fn family_candidates(
        &self,
        geometry: &Geometry,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        match (&self.cases, &geometry.family) {
            (Cases::Graph(routes), Family::Graph(net)) => routes.candidates(net, cur, header, out),
            (Cases::HyperX(routes), Family::HyperX(hx)) => routes.candidates(hx, cur, header, out),
            (Cases::Trunked(cube), _) => {
                cube.candidates(geometry, cur, header, out);
                cube.spread_over_trunk(geometry, cur, header, out);
            }
            (Cases::SlimFly(routes), Family::SlimFly(sf)) => {
                routes.candidates(sf, cur, header, out)
            }
            // A family's routing on another family's network: never built together.
            _ => {}
        }
    }

    /// The per-message draw of a new message from `source` to `dest`: the tie-break bits
    /// where ties are broken at random, the draw of `up_down_random`, the dragonfly's
    /// intermediate group for `valiant` and the UGAL routings, else all ones (nothing drawn, so the random
    /// streams of the other configurations are unchanged).
    #[inline]
    pub(crate) fn draw(&self, geometry: &Geometry, source: u32, dest: u32, rng: &mut Rng) -> u32 {
        match (&self.cases, &geometry.family) {
            (Cases::Cube(cube), _) if cube.random_ties || cube.up_port == Some(UpPort::Random) => {
                rng.next_u64() as u32
            }
            (Cases::HyperX(routes), Family::HyperX(hx)) => routes.draw(hx, rng).unwrap_or(NO_GROUP),
            (Cases::SlimFly(routes), Family::SlimFly(sf)) if routes.draws_intermediate() => {
                routes.draw(sf, rng)
            }
            (Cases::Dragonfly(routes), Family::Dragonfly(df)) if routes.draws_intermediate() => {
                routes.draw(df, source, dest, rng)
            }
            _ => NO_GROUP,
        }
    }

    /// Whether routing `header` at `cur` weighs the network's occupancy (`decide`), so that a
    /// failed attempt may succeed without a VC released at `cur`: the dragonfly's UGAL and PAR
    /// while their choice is open, a HyperX's UGAL and DAL at every hop. `false` for every
    /// routing that does not decide.
    #[inline]
    pub(crate) fn weighs_occupancy(&self, geometry: &Geometry, cur: u32, header: Header) -> bool {
        if !self.decides_at_source {
            return false;
        }
        match (&self.cases, &geometry.family) {
            (Cases::Dragonfly(routes), Family::Dragonfly(df)) => {
                routes.weighs_occupancy(df, cur, header)
            }
            _ => true,
        }
    }

    /// UGAL (`decides_at_source`): the header's routing state at `cur` with the choice between
    /// the minimal and the Valiant route made from `occupancy` (flits in the downstream buffers
    /// of output `port` of router `router`, and the flits waiting at `router` in the input
    /// buffers that port's VCs are allocated to, as `occupancy(router, port)`); otherwise the state unchanged.
    #[inline]
    pub(crate) fn decide(
        &self,
        geometry: &Geometry,
        cur: u32,
        header: Header,
        occupancy: impl Fn(u32, u32) -> (u32, u32),
    ) -> u32 {
        match (&self.cases, &geometry.family) {
            (Cases::Dragonfly(routes), Family::Dragonfly(df)) => {
                routes.decide(df, cur, header, occupancy)
            }
            (Cases::HyperX(routes), Family::HyperX(hx)) => {
                routes.decide(hx, cur, header, occupancy)
            }
            _ => header.level,
        }
    }

    /// The routing state after a hop from `cur` through `port` on virtual channel `vc` (Nbc's
    /// level; the dragonfly's global hops; a graph's escape and down bits).
    #[inline]
    pub(crate) fn after_hop(
        &self,
        geometry: &Geometry,
        cur: u32,
        port: u32,
        vc: u32,
        level: u32,
    ) -> u32 {
        match (&self.cases, &geometry.family) {
            (Cases::Cube(cube), _) if cube.nbc_levels != 0 => {
                let negative = geometry.parity(cur);
                if vc < cube.nbc_levels { vc + negative } else { level + negative }
            }
            (Cases::Dragonfly(routes), Family::Dragonfly(df)) => {
                routes.after_hop(df, cur, port, vc, level)
            }
            (Cases::Graph(routes), Family::Graph(net)) => {
                routes.after_hop(net, cur, port, vc, level)
            }
            (Cases::HyperX(routes), Family::HyperX(hx)) => {
                routes.after_hop(hx, cur, port, vc, level)
            }
            (Cases::SlimFly(routes), Family::SlimFly(sf)) => routes.after_hop(sf, cur, port, level),
            _ => level,
        }
    }

    /// The VCs that must be granted only with an empty buffer, bit v for VC v: the adaptive
    /// VCs of a routing whose deadlock freedom rests on an escape class (`duato`, `nbc`, a
    /// graph's `minimal`). Duato's condition assumes a buffer never holds flits of two
    /// messages; with `vc_reallocation: tail_sent` a header granted a busy adaptive VC would
    /// wait there, committed, for the messages ahead of it, and those waits close cycles
    /// among the adaptive VCs that the escape class cannot break (seen on a 4x4 mesh with
    /// 2-flit messages). Escape and deterministic VCs, turn models, up*/down* and the
    /// dragonfly's classes are acyclic by themselves, so their VCs may queue messages.
    pub(crate) fn atomic_vcs(&self) -> u64 {
        match &self.cases {
            Cases::Cube(cube) => cube.atomic_vcs(),
            Cases::Trunked(cube) => cube.atomic_vcs(),
            Cases::Dragonfly(_) | Cases::SlimFly(_) => 0,
            Cases::HyperX(routes) => routes.atomic_vcs(),
            Cases::Graph(routes) => routes.atomic_vcs(),
        }
    }

    /// Whether `vc` belongs to the deadlock-free (escape or deterministic) part.
    pub(crate) fn is_escape(&self, vc: u32) -> bool {
        match &self.cases {
            Cases::Cube(cube) => {
                vc < cube.nbc_levels
                    || (cube.dimension_order[0] | cube.dimension_order[1]) >> vc & 1 == 1
            }
            Cases::Trunked(cube) => cube.is_escape(vc),
            Cases::Dragonfly(_) | Cases::SlimFly(_) => false,
            Cases::HyperX(routes) => routes.is_escape(vc),
            Cases::Graph(routes) => routes.is_escape(vc),
        }
    }
}

/// Refuses what this module's routings cannot run on the topology: Duato's escape class with
/// the per-traversal dateline or random ties, a routing other than `up_down` on the fat-trees
/// (and `up_down` elsewhere), a turn model off the 2-D mesh or with escape channels.
fn refuse_unsupported(scenario: &Scenario, size: &Size) -> Result<(), SimError> {
    let dateline = scenario.dateline_convention();
    let tie_break = scenario.tie_break_convention();
    if scenario.routing == Routing::Duato
        && (dateline == Some(Dateline::PerTraversal) || tie_break == Some(TieBreak::Random))
    {
        return Err(SimError(
            "duato's escape class supports only dateline: switch and tie_break: positive \
             (a message enters the escape network mid-ring; see docs/router.md)"
                .into(),
        ));
    }
    let tree = matches!(scenario.topology, Topology::FatTree { .. } | Topology::KaryNTree { .. });
    let up_down =
        matches!(scenario.routing, Routing::UpDown | Routing::UpDownRandom | Routing::DModK);
    if scenario.routing == Routing::DModK
        && !matches!(scenario.topology, Topology::KaryNTree { .. })
    {
        return Err(SimError(format!(
            "d_mod_k picks the up port from the destination's base-k digits, which the k-ary \
             n-tree's switches have (topology kary_ntree), not the {}: use up_down or \
             up_down_random",
            scenario.topology.kind()
        )));
    }
    match (tree, up_down) {
        (true, false) => {
            return Err(SimError(format!(
                "the {} routes up_down or up_down_random only (up to a nearest common \
                 ancestor, then down), got routing {}",
                if matches!(scenario.topology, Topology::FatTree { .. }) {
                    "butterfly fat-tree"
                } else {
                    "k-ary n-tree"
                },
                scenario.routing.as_str()
            )));
        }
        (false, true) => {
            return Err(SimError(format!(
                "{} routing is for the fat-trees (fat_tree, kary_ntree; up_down also for \
                 graph): a torus, mesh or hypercube has no up and down",
                scenario.routing.as_str()
            )));
        }
        _ => {}
    }
    if scenario.routing == Routing::Nbc && matches!(scenario.topology, Topology::HyperX { .. }) {
        return Err(SimError(
            "nbc needs a bipartite network (its negative hops go between the two colours of a \
             checkerboard labelling), and a HyperX is not one (three routers of a dimension \
             form a triangle): use dimension_order, adaptive or duato"
                .into(),
        ));
    }
    if matches!(scenario.routing, Routing::WestFirst | Routing::OddEven) {
        let dims = size.dims;
        let mesh = matches!(scenario.topology, Topology::Mesh { .. });
        if !mesh || dims != 2 {
            return Err(SimError(format!(
                "{} is a turn-model routing for the 2-D mesh (the turns it forbids leave \
                 no cycle there; a torus's wrap-around links and other networks need \
                 more), got a {}{}",
                scenario.routing.as_str(),
                scenario.topology.kind(),
                if matches!(scenario.topology, Topology::Mesh { .. } | Topology::Torus { .. }) {
                    format!(" with {dims} dimensions")
                } else {
                    String::new()
                }
            )));
        }
        if let Some(e) = scenario.escape_channels {
            return Err(SimError(format!(
                "{} has no escape channels (its forbidden turns make it deadlock-free with \
                 any V): leave escape_channels unset, got {e}",
                scenario.routing.as_str()
            )));
        }
    }
    Ok(())
}

impl Cube {
    /// The VC layout of `scenario`'s routing (see the module docs), or why its VCs do not
    /// suffice on this topology.
    fn new(scenario: &Scenario, size: &Size) -> Result<Cube, SimError> {
        let v = scenario.virtual_channels;
        let all = bits(0, v);
        let torus = matches!(scenario.topology, Topology::Torus { .. });
        let (radix, diameter) = (size.radix, size.diameter);
        let none = Cube {
            per_traversal: scenario.dateline_convention() == Some(Dateline::PerTraversal),
            random_ties: scenario.tie_break_convention() == Some(TieBreak::Random),
            adaptive: 0,
            dimension_order: [0, 0],
            nbc_levels: 0,
            turn_model: None,
            up_port: None,
        };
        let cube = match scenario.routing {
            Routing::DimensionOrder => {
                if torus && v < 2 {
                    return Err(SimError(
                        "dimension_order on a torus needs virtual_channels >= 2 \
                         (two dateline classes avoid the wrap-around deadlock)"
                            .into(),
                    ));
                }
                let classes =
                    if torus { [parity_bits(v, 0), parity_bits(v, 1)] } else { [all, all] };
                Cube { dimension_order: classes, ..none }
            }
            Routing::Adaptive => Cube { adaptive: all, ..none },
            Routing::WestFirst => {
                Cube { adaptive: all, turn_model: Some(TurnModel::WestFirst), ..none }
            }
            Routing::OddEven => {
                Cube { adaptive: all, turn_model: Some(TurnModel::OddEven), ..none }
            }
            Routing::Duato => {
                let default_escape = if torus { 2 } else { 1 };
                let escape = scenario.escape_channels.unwrap_or(default_escape);
                if escape < default_escape {
                    return Err(SimError(format!(
                        "duato on a {} needs escape_channels >= {default_escape}, got {escape}{}",
                        if torus { "torus" } else { "mesh or hypercube" },
                        if torus { " (one per dateline class)" } else { "" }
                    )));
                }
                if v <= escape {
                    return Err(SimError(format!(
                        "duato with {escape} escape virtual channels needs virtual_channels >= {} \
                         (at least one adaptive channel), got {v}",
                        u64::from(escape) + 1
                    )));
                }
                let escape_bits = bits(0, escape);
                let classes = if torus {
                    [parity_bits(v, 0) & escape_bits, parity_bits(v, 1) & escape_bits]
                } else {
                    [escape_bits, escape_bits]
                };
                Cube { adaptive: all & !escape_bits, dimension_order: classes, ..none }
            }
            Routing::Nbc => {
                if torus && radix % 2 == 1 {
                    return Err(SimError(format!(
                        "nbc needs a bipartite network (checkerboard labelling): \
                         the torus radix must be even, got k = {radix}"
                    )));
                }
                let minimum = diameter / 2 + 1;
                let levels = scenario.escape_channels.unwrap_or(minimum);
                if levels < minimum {
                    return Err(SimError(format!(
                        "nbc on this network needs escape_channels (V2) >= {minimum} negative-hop \
                         levels (diameter {diameter}), got {levels}"
                    )));
                }
                if v < levels {
                    return Err(SimError(format!(
                        "nbc with V2 = {levels} escape levels needs virtual_channels >= {levels}, \
                         got {v} (errata E-NBC-1: V2 = k/2 + 1 on the 2-D torus)"
                    )));
                }
                Cube { adaptive: all & !bits(0, levels), nbc_levels: levels, ..none }
            }
            // `dragonfly::Routes::new` took these (or refused them off the dragonfly).
            Routing::Minimal
            | Routing::Valiant
            | Routing::Ugal
            | Routing::UgalGlobal
            | Routing::Par
            | Routing::UgalBooksim => {
                return Err(SimError(format!(
                    "routing {} is for the dragonfly",
                    scenario.routing.as_str()
                )));
            }
            // `hyperx::Routes::new` took it on the HyperX.
            Routing::Dal => {
                return Err(SimError(format!(
                    "routing dal (dimensionally adaptive, load-balanced) is the HyperX's, not \
                     the {}'s",
                    scenario.topology.kind()
                )));
            }
            // `graph::Routes::new` took it on a graph.
            Routing::Table => {
                return Err(SimError(format!(
                    "routing table follows the `route` lines of a graph file (topology graph), \
                     not the {}",
                    scenario.topology.kind()
                )));
            }
            Routing::UpDown | Routing::UpDownRandom | Routing::DModK => {
                if let Some(e) = scenario.escape_channels {
                    return Err(SimError(format!(
                        "{} routing has no escape channels (routes up then down never form a \
                         cycle): leave escape_channels unset, got {e}",
                        scenario.routing.as_str()
                    )));
                }
                let up_port = match scenario.routing {
                    Routing::UpDownRandom => Some(UpPort::Random),
                    Routing::DModK => Some(UpPort::DestinationDigit),
                    _ => None,
                };
                Cube { adaptive: all, up_port, ..none }
            }
        };
        Ok(cube)
    }

    /// [`Router::atomic_vcs`] of this module's routings: the adaptive VCs beside an escape
    /// class (Duato, Nbc).
    fn atomic_vcs(&self) -> u64 {
        if self.nbc_levels > 0 || self.dimension_order != [0, 0] { self.adaptive } else { 0 }
    }

    /// [`Router::is_escape`] of this module's routings: an Nbc level or a dimension-order VC
    /// (written out again in its `Cases::Cube` arm, where the call cost the 8x8 torus 0.2%
    /// more instructions, cachegrind).
    #[inline(never)]
    fn is_escape(&self, vc: u32) -> bool {
        vc < self.nbc_levels || (self.dimension_order[0] | self.dimension_order[1]) >> vc & 1 == 1
    }

    /// Fills `out` (cleared by the caller) with the allowed output VCs from `cur` towards
    /// `header.dest != cur`.
    #[inline(always)]
    fn candidates(&self, geometry: &Geometry, cur: u32, header: Header, out: &mut Vec<Candidate>) {
        let Header { source, dest, level, ties } = header;
        if let Some(turn_model) = self.turn_model {
            let at = |node| (geometry.coord(node, 0), geometry.coord(node, 1));
            let mask = self.adaptive;
            turn_model.ports(geometry.coord(source, 0), at(cur), at(dest), |port| {
                out.push(Candidate { port, mask, fallback: 0 })
            });
            return;
        }
        if self.adaptive != 0 || self.nbc_levels != 0 {
            let distance = geometry.minimal_steps(cur, dest, |step| {
                out.push(Candidate { port: step.port, mask: self.adaptive, fallback: 0 })
            });
            if let Some(up_port) = self.up_port
                && out.len() > 1
            {
                // Climbing a fat-tree: keep the one up port this message draws here, or the
                // one its destination's digit names (the k-ary n-tree lists its up ports in
                // order, so the port is the index).
                let chosen = match (up_port, &geometry.family) {
                    (UpPort::DestinationDigit, Family::KaryNTree(tree)) => {
                        tree.d_mod_k(cur, dest) as usize
                    }
                    _ => pick(ties, cur, out.len()),
                };
                out.swap(0, chosen);
                out.truncate(1);
            }
            if self.nbc_levels != 0 {
                let need =
                    if geometry.parity(cur) == 1 { distance / 2 } else { (distance - 1) / 2 };
                let top = self.nbc_levels.saturating_sub(need);
                let escape = bits(level, top);
                debug_assert!(escape != 0, "nbc invariant m + need < V2 broken");
                for candidate in out.iter_mut() {
                    candidate.mask |= escape;
                }
            }
        }
        if self.dimension_order != [0, 0]
            && let Some((step, d)) = geometry.dimension_order_step(cur, dest, ties)
        {
            let wraps = if self.per_traversal {
                // Dimension order: this dimension's traversal started at the source's
                // coordinate; it crosses the wrap link iff it runs past coordinate 0.
                let (s, t) = (geometry.coord(source, d), geometry.coord(dest, d));
                if step.port.is_multiple_of(2) { t < s } else { t > s }
            } else {
                step.wraps
            };
            let vcs = self.dimension_order[usize::from(!wraps)];
            // Duato (adaptive VCs present): the escape class is the fallback.
            let (mask, fallback) = if self.adaptive != 0 { (0, vcs) } else { (vcs, 0) };
            merge_candidate(out, Candidate { port: step.port, mask, fallback });
        }
    }

    /// After [`Cube::candidates`] on a HyperX with `K > 1` links per router pair: the
    /// adaptive candidates already list every link of a hop (`minimal_steps` visits them all);
    /// the dimension-order (or escape) VCs go on the step's other `K - 1` links too, so that a
    /// deterministic route may take any of them (its dimensions still strictly increase).
    #[inline(never)]
    fn spread_over_trunk(
        &self,
        geometry: &Geometry,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        if self.dimension_order == [0, 0] {
            return;
        }
        let Some((step, _)) = geometry.dimension_order_step(cur, header.dest, header.ties) else {
            return;
        };
        // The HyperX's links never wrap: the class of a step that does not.
        let vcs = self.dimension_order[1];
        let (mask, fallback) = if self.adaptive != 0 { (0, vcs) } else { (vcs, 0) };
        let first = step.port;
        for port in first + 1..first + geometry.parallel_at(cur, first) {
            merge_candidate(out, Candidate { port, mask, fallback });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Topology;

    fn scenario(topology: Topology, routing: Routing, v: u32) -> Scenario {
        Scenario { routing, virtual_channels: v, ..Scenario::new(topology) }
    }

    fn router(s: &Scenario) -> Result<Router, SimError> {
        let size = Geometry::check(&s.topology)?;
        Router::new(s, &size)
    }

    const T8: Topology = Topology::Torus { radix: 8, dimensions: 2 };

    /// A message from `source` to `dest` at level 0 whose ties all go +.
    fn header(source: u32, dest: u32) -> Header {
        Header { source, dest, level: 0, ties: u32::MAX }
    }

    #[test]
    fn invalid_combinations_are_rejected() {
        assert!(router(&scenario(T8, Routing::DimensionOrder, 1)).is_err());
        assert!(router(&scenario(T8, Routing::Duato, 2)).is_err());
        assert!(router(&scenario(T8, Routing::Duato, 3)).is_ok());
        let cube = Topology::Hypercube { dimensions: 4 };
        assert!(router(&scenario(cube, Routing::Duato, 2)).is_ok());
        assert!(router(&scenario(T8, Routing::Nbc, 4)).is_err());
        assert!(router(&scenario(T8, Routing::Nbc, 5)).is_ok());
        let odd = Topology::Torus { radix: 5, dimensions: 2 };
        assert!(router(&scenario(odd, Routing::Nbc, 10)).is_err());
        assert!(router(&scenario(T8, Routing::UpDown, 4)).is_err());
        let tree = Topology::FatTree { processors: 64 };
        assert!(router(&scenario(tree.clone(), Routing::UpDown, 1)).is_ok());
        for routing in [Routing::DimensionOrder, Routing::Adaptive, Routing::Duato, Routing::Nbc] {
            assert!(router(&scenario(tree.clone(), routing, 4)).is_err(), "{routing:?}");
        }
        let escape = Scenario { escape_channels: Some(1), ..scenario(tree, Routing::UpDown, 2) };
        assert!(router(&escape).is_err());
        assert!(router(&scenario(T8, Routing::Adaptive, 65)).is_err());
    }

    #[test]
    fn duato_torus_escape_uses_the_dateline_class() {
        let s = scenario(T8, Routing::Duato, 4);
        let r = router(&s).unwrap();
        let g = Geometry::new(&T8).unwrap();
        let mut out = Vec::new();
        // From x = 6 to x = 1: + direction, crosses the wrap link: escape class 0 (VC 0).
        r.candidates(&g, 6, header(6, 1), &mut out);
        assert_eq!(out, vec![Candidate { port: 0, mask: 0b1100, fallback: 0b0001 }]);
        // From x = 1 to x = 3: no wrap: escape class 1 (VC 1).
        r.candidates(&g, 1, header(1, 3), &mut out);
        assert_eq!(out, vec![Candidate { port: 0, mask: 0b1100, fallback: 0b0010 }]);
    }

    #[test]
    fn dimension_order_classes_follow_the_dateline_convention() {
        let g = Geometry::new(&T8).unwrap();
        let mut out = Vec::new();
        let mut class_at = |dateline, cur| {
            let s =
                Scenario { dateline: Some(dateline), ..scenario(T8, Routing::DimensionOrder, 2) };
            router(&s).unwrap().candidates(&g, cur, header(6, 1), &mut out);
            out[0].mask
        };
        // 6 -> 1 in the + direction crosses the wrap link 7 -> 0.
        for cur in [6, 7, 0] {
            assert_eq!(class_at(Dateline::PerTraversal, cur), 0b01, "at {cur}");
        }
        assert_eq!(class_at(Dateline::Switch, 7), 0b01);
        assert_eq!(class_at(Dateline::Switch, 0), 0b10);
        // A route that never wraps uses class 1 either way; a tie follows the message's bit.
        let s = scenario(T8, Routing::DimensionOrder, 2);
        let r = router(&s).unwrap();
        r.candidates(&g, 1, header(1, 3), &mut out);
        assert_eq!(out, vec![Candidate { port: 0, mask: 0b10, fallback: 0 }]);
        r.candidates(&g, 1, Header { ties: 0, ..header(1, 5) }, &mut out);
        assert_eq!(out[0].port, 1, "distance 4 with a 0 tie bit goes -");
        r.candidates(&g, 1, header(1, 5), &mut out);
        assert_eq!(out[0].port, 0, "distance 4 with a 1 tie bit goes +");
        let duato =
            Scenario { dateline: Some(Dateline::PerTraversal), ..scenario(T8, Routing::Duato, 4) };
        assert!(router(&duato).is_err());
        let duato =
            Scenario { tie_break: Some(TieBreak::Random), ..scenario(T8, Routing::Duato, 4) };
        assert!(router(&duato).is_err());
    }

    #[test]
    fn nbc_levels_never_run_out() {
        let s = scenario(T8, Routing::Nbc, 6);
        let r = router(&s).unwrap();
        let g = Geometry::new(&T8).unwrap();
        let mut out = Vec::new();
        // Walk every pair along the highest and the lowest allowed escape level.
        for src in 0..g.nodes {
            for dst in 0..g.nodes {
                for pick_high in [false, true] {
                    let (mut cur, mut level) = (src, 0);
                    while cur != dst {
                        r.candidates(&g, cur, Header { level, ..header(src, dst) }, &mut out);
                        let c = out[0];
                        let escape = c.mask & 0b11111;
                        assert_ne!(escape, 0, "{src}->{dst} at {cur} level {level}");
                        let vc = if pick_high {
                            63 - escape.leading_zeros()
                        } else {
                            escape.trailing_zeros()
                        };
                        level = r.after_hop(&g, cur, c.port, vc, level);
                        cur = g.downstream(g.channel(cur, c.port));
                    }
                }
            }
        }
    }

    /// Walks every route `routing` allows on `topology`, for each source and destination,
    /// through each (node, channel held on arrival) state once, checking that every state
    /// offers a port and every offered port is minimal; `visit` gets (source, destination,
    /// current node, the channel the message arrived on, the candidates there).
    fn walk_routes(
        topology: Topology,
        routing: Routing,
        v: u32,
        mut visit: impl FnMut(u32, u32, u32, Option<u32>, &[Candidate]),
    ) {
        let r = router(&scenario(topology.clone(), routing, v)).unwrap();
        let g = Geometry::new(&topology).unwrap();
        let mut out = Vec::new();
        for src in 0..g.nodes {
            for dst in (0..g.nodes).filter(|d| *d != src) {
                let mut seen = std::collections::HashSet::new();
                let mut stack = vec![(src, None::<u32>)];
                while let Some((cur, held)) = stack.pop() {
                    if cur == dst || !seen.insert((cur, held)) {
                        continue;
                    }
                    r.candidates(&g, cur, header(src, dst), &mut out);
                    assert!(!out.is_empty(), "{routing:?}: {src}->{dst} stuck at {cur}");
                    visit(src, dst, cur, held, &out);
                    for candidate in &out {
                        let channel = g.channel(cur, candidate.port);
                        let next = g.downstream(channel);
                        assert_eq!(
                            g.distance(next, dst) + 1,
                            g.distance(cur, dst),
                            "{routing:?}: {src}->{dst} at {cur} offers a non-minimal port"
                        );
                        stack.push((next, Some(channel)));
                    }
                }
            }
        }
    }

    /// Every channel dependency a routing can create on `topology`, as (channel held, channel
    /// requested) pairs of physical channels. All VCs of a port are offered together by the
    /// routings checked here, so an acyclic physical graph means an acyclic VC graph.
    fn dependencies(topology: Topology, routing: Routing, v: u32) -> Vec<(u32, u32)> {
        let mut edges = std::collections::BTreeSet::new();
        let geometry = Geometry::new(&topology).unwrap();
        walk_routes(topology, routing, v, |_, _, cur, held, candidates| {
            if let Some(held) = held {
                for candidate in candidates {
                    edges.insert((held, geometry.channel(cur, candidate.port)));
                }
            }
        });
        edges.into_iter().collect()
    }

    fn cyclic(edges: &[(u32, u32)]) -> bool {
        let graph = petgraph::graph::DiGraph::<(), ()>::from_edges(edges);
        petgraph::algo::is_cyclic_directed(&graph)
    }

    const MESHES: [Topology; 3] = [
        Topology::Mesh { radix: 4, dimensions: 2 },
        Topology::Mesh { radix: 5, dimensions: 2 },
        Topology::Mesh { radix: 6, dimensions: 2 },
    ];

    /// Deadlock freedom by construction, checked: the channel-dependency graphs of the
    /// turn models (and of dimension order) on small meshes are acyclic, while fully
    /// adaptive routing's is not, so the check can fail.
    #[test]
    fn turn_models_have_acyclic_channel_dependencies() {
        for mesh in MESHES {
            for routing in [Routing::WestFirst, Routing::OddEven, Routing::DimensionOrder] {
                let edges = dependencies(mesh.clone(), routing, 2);
                assert!(!edges.is_empty());
                assert!(!cyclic(&edges), "{routing:?} on {mesh:?} has a dependency cycle");
            }
            assert!(cyclic(&dependencies(mesh.clone(), Routing::Adaptive, 2)), "{mesh:?}");
        }
    }

    /// The turns each turn model forbids never happen, on every route it allows; and the
    /// models are adaptive where they should be (odd-even offers two ports somewhere for
    /// westbound and eastbound messages alike, west-first only for messages not going west).
    #[test]
    fn turn_models_never_take_a_forbidden_turn() {
        let mesh = Topology::Mesh { radix: 6, dimensions: 2 };
        for routing in [Routing::WestFirst, Routing::OddEven] {
            let mut adaptive_westbound = false;
            let mut adaptive_eastbound = false;
            let g = Geometry::new(&mesh).unwrap();
            walk_routes(mesh.clone(), routing, 1, |src, dst, cur, held, candidates| {
                let west = g.coord(dst, 0) < g.coord(src, 0);
                if candidates.len() > 1 {
                    adaptive_westbound |= west;
                    adaptive_eastbound |= !west;
                }
                let column = g.coord(cur, 0);
                let arrived = held.map(|channel| g.port_of(channel));
                for candidate in candidates {
                    let turn = arrived.map(|a| (a, candidate.port));
                    let forbidden = match routing {
                        Routing::WestFirst => matches!(turn, Some((NORTH | SOUTH, WEST))),
                        _ if column.is_multiple_of(2) => {
                            matches!(turn, Some((EAST, NORTH | SOUTH)))
                        }
                        _ => matches!(turn, Some((NORTH | SOUTH, WEST))),
                    };
                    assert!(!forbidden, "{routing:?} {src}->{dst}: turn {turn:?} at {cur}");
                }
            });
            assert!(adaptive_eastbound, "{routing:?}");
            assert_eq!(adaptive_westbound, routing == Routing::OddEven, "{routing:?}");
        }
    }

    #[test]
    fn turn_models_need_a_two_dimensional_mesh() {
        for topology in [
            T8,
            Topology::Mesh { radix: 4, dimensions: 3 },
            Topology::Hypercube { dimensions: 4 },
            Topology::FatTree { processors: 64 },
            Topology::KaryNTree { radix: 4, dimensions: 2, up_links_per_switch: None },
        ] {
            for routing in [Routing::WestFirst, Routing::OddEven] {
                let error = router(&scenario(topology.clone(), routing, 2)).expect_err("refused");
                let tree =
                    matches!(topology, Topology::FatTree { .. } | Topology::KaryNTree { .. });
                assert!(
                    error.0.contains(if tree {
                        "up_down or up_down_random only"
                    } else {
                        "2-D mesh"
                    }),
                    "{error:?}"
                );
            }
        }
        let mesh = Topology::Mesh { radix: 4, dimensions: 2 };
        let escape =
            Scenario { escape_channels: Some(1), ..scenario(mesh.clone(), Routing::OddEven, 2) };
        assert!(router(&escape).is_err());
        let faults = Scenario {
            switching: crate::scenario::Switching::Scouting { scouting_distance: 2 },
            fault_rate: 0.1,
            ..scenario(mesh.clone(), Routing::WestFirst, 2)
        };
        let error = crate::sim::check(&faults).expect_err("refused");
        assert!(error.0.contains("forbids some turns"), "{error:?}");
        assert!(router(&scenario(mesh, Routing::WestFirst, 1)).is_ok());
    }
}
