//! Network geometry: node ids, links and minimal directions, for every family, dispatched to
//! the family's own data ([`Family`], one variant per file in `network/`: `torus` for tori and
//! meshes, `hypercube`, `fat_tree`, `dragonfly`, `kary_ntree`, `hyperx`, `slim_fly`, `graph`).
//!
//! Every router has `ports` network output ports; physical channel `router * ports + port`
//! leaves `router` through `port` (where the nodes are terminals attached to routers, a
//! terminal has one, its link, and the routers' channels follow the terminals': see
//! [`Geometry`]). Routers `0..nodes` are the traffic endpoints. Tori, meshes
//! and hypercubes have no other routers: nodes are numbered in mixed radix (dimension 0 varies
//! fastest, `network::digits`), so coordinates are computed with a division, never stored per
//! message; tori and meshes use `port = 2 d` for the + direction and `2 d + 1` for the -
//! direction of dimension `d`, the hypercube `port = d`, and mesh ports at the border have no
//! link. The butterfly fat-tree ([`Family::FatTree`], numbering and wiring in
//! `network::fat_tree`) has more routers than endpoints: `nodes` counts its processors (ids
//! `0..N`, the traffic endpoints), and its switches are routers with the ids after them, each
//! with six ports; everything above this module only sees ports, router ids and channel ids.
//! The dragonfly ([`Family::Dragonfly`], numbering, wiring and routing cases in
//! `network::dragonfly`) is built the same way: terminals `0..N` are the nodes, its routers
//! follow them; so are the k-ary n-tree ([`Family::KaryNTree`], numbering, wiring and minimal
//! steps in `network::kary_ntree`), the HyperX ([`Family::HyperX`], `network::hyperx`), the
//! Slim Fly ([`Family::SlimFly`], `network::slim_fly`) and a
//! graph read from a file ([`Family::Graph`], numbering,
//! route tables and routing cases in `network::graph`).
//!
//! A new family is a file in `network/` implementing `network::Network`, a variant of
//! [`Family`], and one arm in each of [`Geometry::check`] (its sizes, without building
//! anything), [`Family::new`] (its construction) and `each_family!` (the dispatch).

use crate::scenario::Topology;

use super::SimError;
use super::divisor::Divisor;
use super::network::Network;
use super::network::digits::Digits;
use super::network::dragonfly::Dragonfly;
use super::network::fat_tree::{self, FatTree};
use super::network::graph::GraphNetwork;
use super::network::hop::{NO_LINK, Step};
use super::network::hypercube::Hypercube;
use super::network::hyperx::HyperX;
use super::network::kary_ntree::KaryNTree;
use super::network::slim_fly::SlimFly;
use super::network::torus::{Mesh, Torus};

/// Largest supported network, in nodes (memory and 32-bit ids).
const MAX_NODES: u64 = 1 << 22;

/// What a channel slot joins ([`Geometry::link_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkKind {
    /// No link.
    None,
    /// A terminal and its router (in families whose terminals are not routers).
    Terminal,
    /// Two routers.
    Router,
    /// Two dragonfly groups.
    Global,
}

/// A network family and its own data (sizes, numbering, route tables).
#[derive(Clone, Debug)]
pub(crate) enum Family {
    /// k-ary n-cube (`radix` k, `dims` n).
    Torus(Torus),
    /// k-ary n-mesh (`radix` k, `dims` n).
    Mesh(Mesh),
    /// Binary n-cube (`radix` 2, `dims` n).
    Hypercube(Hypercube),
    /// Butterfly fat-tree (`radix` 4, `dims` = its number of switch levels n).
    FatTree(FatTree),
    /// Dragonfly (`radix` the router radix p + a - 1 + h, `dims` 2).
    Dragonfly(Dragonfly),
    /// k-ary n-tree (`radix` k, `dims` its number of switch levels n).
    KaryNTree(KaryNTree),
    /// HyperX (`radix` S routers per dimension, `dims` L).
    HyperX(HyperX),
    /// Slim Fly (`radix` its router radix, `dims` 2).
    SlimFly(SlimFly),
    /// A graph read from a file (`radix` its largest router radix, `dims` its router count).
    Graph(GraphNetwork),
}

/// `each_family!(family, net => expression)`: the expression with `net` bound to the family's
/// [`Network`], whichever family it is; the geometry's one dispatch to the families.
macro_rules! each_family {
    ($family:expr, $net:ident => $body:expr) => {
        match $family {
            Family::Torus($net) => $body,
            Family::Mesh($net) => $body,
            Family::Hypercube($net) => $body,
            Family::FatTree($net) => $body,
            Family::Dragonfly($net) => $body,
            Family::KaryNTree($net) => $body,
            Family::HyperX($net) => $body,
            Family::SlimFly($net) => $body,
            Family::Graph($net) => $body,
        }
    };
}

impl Family {
    /// Whether every node is a router (tori, meshes, hypercubes), rather than a terminal
    /// attached to one (the trees, the dragonfly and graphs number their terminals first).
    fn nodes_are_routers(&self) -> bool {
        matches!(self, Family::Torus(_) | Family::Mesh(_) | Family::Hypercube(_))
    }

    /// Builds the family of a topology accepted by [`Geometry::check`].
    fn new(topology: &Topology, size: &Size) -> Result<Family, SimError> {
        Ok(match *topology {
            Topology::Torus { .. } => Family::Torus(Torus(Digits::new(size.radix, size.dims))),
            Topology::Mesh { .. } => Family::Mesh(Mesh(Digits::new(size.radix, size.dims))),
            Topology::Hypercube { dimensions } => Family::Hypercube(Hypercube { dims: dimensions }),
            Topology::FatTree { processors } => Family::FatTree(FatTree::new(processors)?),
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
                global_arrangement,
            } => Family::Dragonfly(Dragonfly::new(p, a, h)?.arranged(global_arrangement)),
            Topology::KaryNTree { radix, dimensions, up_links_per_switch } => Family::KaryNTree(
                KaryNTree::new(radix, dimensions, up_links_per_switch.unwrap_or(radix))?,
            ),
            Topology::HyperX { radix, dimensions, terminals_per_router, trunking } => {
                Family::HyperX(HyperX::new(
                    radix,
                    dimensions,
                    terminals_per_router,
                    trunking.unwrap_or(1),
                )?)
            }
            Topology::SlimFly { prime_power, terminals_per_router } => {
                Family::SlimFly(SlimFly::new(prime_power, terminals_per_router)?)
            }
            Topology::Graph { ref graph } => Family::Graph(GraphNetwork::new(graph)?),
        })
    }
}

/// What [`Geometry::check`] learns of a topology without building any table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Size {
    /// k: the radix of the node ids' digits (2 for the hypercube, 4 for the fat-tree; the
    /// dragonfly's router radix, a graph's largest router radix, at least 2).
    pub(crate) radix: u32,
    /// n: the number of digits (the trees' switch levels; 2 for the dragonfly, a graph's
    /// router count).
    pub(crate) dims: u32,
    /// Largest minimal distance (the dragonfly's: its longest route, Valiant's; a graph's: a
    /// bound), so that sizes derived from it cover every route.
    pub(crate) diameter: u32,
    /// Physical channel slots (missing links included): `routers * ports`, where a terminal
    /// that is not a router holds one slot, its link (see [`Geometry`]).
    pub(crate) channel_slots: u64,
}

/// The channel slots of `terminals` terminals with one link each and `routers` routers with
/// `ports` ports each.
fn compact_slots(terminals: u64, routers: u64, ports: u32) -> u64 {
    terminals.saturating_add(routers.saturating_mul(u64::from(ports)))
}

/// A built network: sizes, the family's own data, and the neighbour table.
///
/// Channel ids: router `r`'s port `p` is channel `first_channel(r) + p`, its channels
/// consecutive and the routers' in id order. Where every node is a router (tori, meshes,
/// hypercubes) that is `r * ports + p`. Where the nodes are terminals attached to routers
/// (the trees, the dragonfly, the HyperX, the Slim Fly, graphs: terminals `0..nodes`), a
/// terminal has its one link only (port 0, channel `r`), and the routers' channels follow:
/// `nodes + (r - nodes) * ports + p`. A family's tables give every router `ports` slots
/// (`Network::neighbors`); the terminals' unused ones are dropped here, as they held most
/// of the engine's per-channel state (a dragonfly terminal carried `p + a - 1 + h` ports'
/// worth of it). The mapping keeps the channels' order, so nothing that depends on it
/// (round-robin orders, walks) changes. [`Geometry::slot`] gives the family's own id,
/// `r * ports + p`, the one outputs name links by.
#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    pub(crate) family: Family,
    /// Sizes (see [`Size`]).
    pub(crate) size: Size,
    /// The digits of node ids in radix `size.radix` (the coordinates of the cubes; the
    /// digits the coordinate traffic patterns move).
    digits: Digits,
    pub(crate) nodes: u32,
    /// Network output ports per router (a terminal that is not a router has one).
    pub(crate) ports: u32,
    /// `ports` (at least 1) as a [`Divisor`]: a channel's router and port.
    ports_divisor: Divisor,
    /// Channels before the first router's: `nodes` where the terminals are not routers and
    /// hold one channel each, else 0.
    terminal_slots: u32,
    /// Downstream router of each physical channel, `NO_LINK` where there is no link.
    neighbor: Vec<u32>,
}

impl Geometry {
    /// Validates `topology` and returns its sizes, without building any table.
    pub(crate) fn check(topology: &Topology) -> Result<Size, SimError> {
        if let Some(graph) = topology.graph() {
            let (terminals, routers, ports) = GraphNetwork::sizes(graph);
            if u64::from(terminals) + u64::from(routers) > MAX_NODES || routers == 0 {
                return Err(SimError(format!(
                    "graph {} is too large for the simulator ({terminals} terminals, {routers} \
                     routers)",
                    graph.file
                )));
            }
            return Ok(Size {
                radix: ports.max(2),
                dims: routers,
                // A bound: a shortest legal up*/down* route visits each of the routers at
                // most once, plus the two terminal links.
                diameter: routers + 1,
                channel_slots: compact_slots(u64::from(terminals), u64::from(routers), ports),
            });
        }
        // Each family's sizes; the products saturate, as a topology too large for them is
        // refused below.
        let nodes = topology.nodes();
        let size = match *topology {
            Topology::Torus { radix, dimensions } => Size {
                radix,
                dims: dimensions,
                diameter: dimensions.saturating_mul(radix / 2),
                channel_slots: nodes.saturating_mul(2 * u64::from(dimensions)),
            },
            Topology::Mesh { radix, dimensions } => Size {
                radix,
                dims: dimensions,
                diameter: dimensions.saturating_mul(radix.saturating_sub(1)),
                channel_slots: nodes.saturating_mul(2 * u64::from(dimensions)),
            },
            Topology::Hypercube { dimensions } => Size {
                radix: 2,
                dims: dimensions,
                diameter: dimensions,
                channel_slots: nodes.saturating_mul(u64::from(dimensions)),
            },
            Topology::FatTree { processors } => {
                let levels = fat_tree::levels(processors)?;
                Size {
                    radix: 4,
                    dims: levels,
                    diameter: 2 * levels,
                    channel_slots: compact_slots(
                        nodes,
                        fat_tree::routers(processors) - nodes,
                        fat_tree::PORTS,
                    ),
                }
            }
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
                ..
            } => {
                let dragonfly = Dragonfly::new(p, a, h)?;
                Size {
                    radix: topology.radix().max(2),
                    dims: 2,
                    // The longest route any dragonfly routing takes (Valiant: terminal link,
                    // local, global, local, global, local, ejection link).
                    diameter: 7,
                    channel_slots: compact_slots(
                        nodes,
                        u64::from(dragonfly.routers()),
                        dragonfly.ports(),
                    ),
                }
            }
            Topology::KaryNTree { radix, dimensions, up_links_per_switch } => {
                let tree = KaryNTree::new(radix, dimensions, up_links_per_switch.unwrap_or(radix))?;
                Size {
                    radix,
                    dims: dimensions,
                    diameter: 2 * dimensions,
                    channel_slots: compact_slots(
                        nodes,
                        u64::from(tree.routers()) - nodes,
                        tree.ports(),
                    ),
                }
            }
            Topology::HyperX { radix, dimensions, terminals_per_router, trunking } => {
                let hyperx =
                    HyperX::new(radix, dimensions, terminals_per_router, trunking.unwrap_or(1))?;
                Size {
                    radix,
                    dims: dimensions,
                    // The longest route any HyperX routing takes (Valiant's: terminal link,
                    // one hop per dimension to the intermediate router and again from it,
                    // ejection link).
                    diameter: 2 * dimensions + 2,
                    channel_slots: compact_slots(
                        nodes,
                        u64::from(hyperx.routers()) - nodes,
                        hyperx.ports(),
                    ),
                }
            }
            Topology::SlimFly { prime_power, terminals_per_router } => {
                let (_, routers, ports) = SlimFly::sizes(prime_power, terminals_per_router)?;
                Size {
                    radix: topology.radix().max(2),
                    dims: 2,
                    // The longest route any Slim Fly routing takes (Valiant's: terminal link,
                    // two hops to the intermediate router and two from it, ejection link).
                    diameter: 6,
                    channel_slots: compact_slots(nodes, u64::from(routers), ports),
                }
            }
            Topology::Graph { .. } => return Err(SimError("a graph is checked above".into())),
        };
        if size.dims == 0 {
            return Err(SimError(format!("{} needs at least 1 dimension", topology.kind())));
        }
        if size.radix < 2 {
            return Err(SimError(format!(
                "{} needs radix k >= 2, got {}",
                topology.kind(),
                size.radix
            )));
        }
        if nodes > MAX_NODES {
            return Err(SimError(format!(
                "network too large for the simulator: {nodes} nodes (at most {MAX_NODES})"
            )));
        }
        Ok(size)
    }

    /// Links into a node's router, the flits unlimited ejection can take in one cycle: 2n for
    /// a torus or mesh router, n for a hypercube's; 1 where the node is a terminal, whose one
    /// link leads to its switch or router. (Not a member of [`Size`], which the engine reads
    /// on its hot path.)
    pub(crate) fn node_links(topology: &Topology) -> u32 {
        match *topology {
            Topology::Torus { dimensions, .. } | Topology::Mesh { dimensions, .. } => {
                dimensions.saturating_mul(2)
            }
            Topology::Hypercube { dimensions } => dimensions,
            Topology::FatTree { .. }
            | Topology::Dragonfly { .. }
            | Topology::KaryNTree { .. }
            | Topology::HyperX { .. }
            | Topology::SlimFly { .. }
            | Topology::Graph { .. } => 1,
        }
    }

    /// Builds the geometry of a topology accepted by [`Geometry::check`].
    pub(crate) fn new(topology: &Topology) -> Result<Geometry, SimError> {
        let size = Geometry::check(topology)?;
        let family = Family::new(topology, &size)?;
        let (ports, mut neighbor) = each_family!(&family, net => (net.ports(), net.neighbors()));
        let nodes = topology.nodes() as u32;
        let terminal_slots =
            match !family.nodes_are_routers() && drop_terminal_slots(&mut neighbor, nodes, ports) {
                true => nodes,
                false => 0,
            };
        Ok(Geometry {
            family,
            size,
            digits: Digits::new(size.radix, size.dims),
            nodes,
            ports,
            ports_divisor: Divisor::new(ports),
            terminal_slots,
            neighbor,
        })
    }

    /// The first channel of router `router`: its port `p` is channel `first_channel + p`.
    #[inline(always)]
    pub(crate) fn first_channel(&self, router: u32) -> u32 {
        // `(router - t) ports + t`, which cannot overflow where the channels fit in `u32`
        // (`router * ports`, the family's id, may not).
        let t = self.terminal_slots;
        if router < t { router } else { (router - t) * self.ports + t }
    }

    /// The channel leaving `router` through `port`.
    #[inline(always)]
    pub(crate) fn channel(&self, router: u32, port: u32) -> u32 {
        self.first_channel(router) + port
    }

    /// The router that channel `channel` leaves.
    #[inline]
    pub(crate) fn router_of(&self, channel: u32) -> u32 {
        self.router_port(channel).0
    }

    /// The port of its router that channel `channel` leaves through.
    #[inline]
    pub(crate) fn port_of(&self, channel: u32) -> u32 {
        self.router_port(channel).1
    }

    /// The router and port that channel `channel` leaves through.
    #[inline]
    pub(crate) fn router_port(&self, channel: u32) -> (u32, u32) {
        let t = self.terminal_slots;
        if channel < t {
            (channel, 0)
        } else {
            let (router, port) = self.ports_divisor.div_rem(channel - t);
            (t + router, port)
        }
    }

    /// The routers, terminals included (the ids `router_of` gives).
    pub(crate) fn routers(&self) -> u32 {
        match self.neighbor.len() as u32 {
            0 => 0,
            slots => self.router_of(slots - 1) + 1,
        }
    }

    /// The ports router `router` has channel slots for: `ports`, or 1 for a terminal that is
    /// not a router.
    #[inline]
    pub(crate) fn ports_at(&self, router: u32) -> u32 {
        if router < self.terminal_slots { 1 } else { self.ports }
    }

    /// The family's own id of channel `channel`, `router * ports + port` (the id outputs name
    /// links by, whatever the layout of the engine's channels). It fits in `u32` wherever the
    /// family's own table of `routers * ports` slots could be built.
    pub(crate) fn slot(&self, channel: u32) -> u32 {
        let (router, port) = self.router_port(channel);
        router * self.ports + port
    }

    /// The links in parallel from router `router` through `port` onwards, on consecutive
    /// ports: the HyperX's trunking `K` on a link between two routers, else 1.
    pub(crate) fn parallel_at(&self, router: u32, port: u32) -> u32 {
        match &self.family {
            Family::HyperX(hyperx) => hyperx.parallel_at(router, port),
            _ => 1,
        }
    }

    /// Number of physical channel slots (including missing links; see [`Geometry`]).
    pub(crate) fn channel_slots(&self) -> usize {
        self.neighbor.len()
    }

    /// Number of physical channels that exist.
    pub(crate) fn links(&self) -> u64 {
        self.neighbor.iter().filter(|&&n| n != NO_LINK).count() as u64
    }

    /// The router a channel leads to (`NO_LINK` if the channel does not exist).
    #[inline]
    pub(crate) fn downstream(&self, channel: u32) -> u32 {
        self.neighbor[channel as usize]
    }

    /// Hints the line that [`Geometry::downstream`] of `channel` reads (`sim::prefetch`), for a
    /// call a while later.
    #[inline(always)]
    pub(crate) fn hint_downstream(&self, channel: u32) {
        super::prefetch::prefetch(&self.neighbor, channel as usize);
    }

    /// Coordinate of `node` in dimension `d` (its digit `d` in radix `size.radix`).
    #[inline]
    pub(crate) fn coord(&self, node: u32, d: u32) -> u32 {
        self.digits.coord(node, d)
    }

    /// Calls `visit` with every minimal step from `cur` towards `dest` (both directions of a
    /// torus dimension at distance exactly k/2; both parent links of a fat-tree switch below
    /// the lowest common ancestors) and returns the distance in hops.
    #[inline]
    pub(crate) fn minimal_steps(&self, cur: u32, dest: u32, visit: impl FnMut(Step)) -> u32 {
        each_family!(&self.family, net => net.minimal_steps(cur, dest, visit))
    }

    /// The dimension-order (e-cube) step: lowest differing dimension first; on a torus, when
    /// both directions are minimal (distance k/2) in dimension `d`, the + direction if bit `d`
    /// of `ties` is set and the - direction otherwise. Also returns the dimension. `None` when
    /// `cur == dest`. No routing uses it on the trees, the dragonfly or a graph: there it is
    /// the first minimal step.
    #[inline]
    pub(crate) fn dimension_order_step(
        &self,
        cur: u32,
        dest: u32,
        ties: u32,
    ) -> Option<(Step, u32)> {
        each_family!(&self.family, net => net.dimension_order_step(cur, dest, ties))
    }

    /// Minimal distance in hops.
    #[cfg(test)]
    pub(crate) fn distance(&self, a: u32, b: u32) -> u32 {
        self.minimal_steps(a, b, |_| {})
    }

    /// Checkerboard colour: parity of the coordinate sum (meaningful when bipartite).
    #[inline]
    pub(crate) fn parity(&self, node: u32) -> u32 {
        each_family!(&self.family, net => net.parity(node))
    }

    /// Human-readable coordinates, e.g. `(3,0)`.
    pub(crate) fn describe(&self, node: u32) -> String {
        each_family!(&self.family, net => net.describe(node))
    }

    /// The class of the link `channel`, for per-class load summaries: the dimension of a
    /// torus, mesh or hypercube link (`x0`, `x1`, ...), the levels a fat-tree link joins and
    /// its direction (`up 0-1`, `down 2-1`; the k-ary n-tree's likewise, level 0 its
    /// terminals), a dragonfly link's kind (`terminal-router`, `router-terminal`, `local`,
    /// `global`), a graph link's (`terminal-router`, `router-terminal`, `router-router`). A
    /// new family answers with its own levels or kinds (`Network::link_class`).
    pub(crate) fn link_class(&self, channel: u32) -> String {
        let (router, port) = self.router_port(channel);
        let downstream = self.downstream(channel);
        each_family!(&self.family, net => net.link_class(router, port, downstream))
    }

    /// What channel slot `channel` joins, for its latency: two routers, two dragonfly groups,
    /// or a terminal and its router (in the families whose terminals are not routers: the
    /// trees, the dragonfly and graphs), if anything.
    pub(crate) fn link_kind(&self, channel: u32) -> LinkKind {
        let downstream = self.downstream(channel);
        if downstream == NO_LINK {
            return LinkKind::None;
        }
        let (router, port) = self.router_port(channel);
        if !self.nodes_are_routers() && (router < self.nodes || downstream < self.nodes) {
            return LinkKind::Terminal;
        }
        match &self.family {
            Family::Dragonfly(dragonfly) if dragonfly.is_global(router, port) => LinkKind::Global,
            _ => LinkKind::Router,
        }
    }

    /// Whether every node is a router (tori, meshes, hypercubes), rather than a terminal
    /// attached to one (the trees, the dragonfly and graphs number their terminals first).
    pub(crate) fn nodes_are_routers(&self) -> bool {
        self.family.nodes_are_routers()
    }

    /// Whether channel slot `channel` leaves a terminal that is not a router (so no switch
    /// lies before it).
    pub(crate) fn leaves_terminal(&self, channel: u32) -> bool {
        !self.nodes_are_routers() && self.router_of(channel) < self.nodes
    }

    /// The latency a graph file gives the link of `channel` (`latency <cycles>`), if any.
    pub(crate) fn file_latency(&self, channel: u32) -> Option<u32> {
        match &self.family {
            Family::Graph(graph) => graph.link_latency(self.slot(channel)),
            _ => None,
        }
    }

    /// Human-readable direction of a port, e.g. `+x0` or `-x1` (`x3` on the hypercube).
    pub(crate) fn describe_port(&self, port: u32) -> String {
        each_family!(&self.family, net => net.describe_port(port))
    }
}

/// Drops the channel slots of the terminals' unused ports from a family's neighbour table
/// (`routers * ports` slots, terminals `0..terminals` first), keeping each terminal's port 0
/// and every router's slots in order; returns false, leaving the table as it is, where a
/// terminal has a link on another port or there is nothing to drop.
fn drop_terminal_slots(neighbor: &mut Vec<u32>, terminals: u32, ports: u32) -> bool {
    let (t, p) = (terminals as usize, ports as usize);
    if p <= 1 || t == 0 || neighbor.len() < t * p {
        return false;
    }
    if (0..t).any(|i| neighbor[i * p + 1..(i + 1) * p].iter().any(|&n| n != NO_LINK)) {
        return false;
    }
    // In place: slot `i` is written after slot `i p >= i` is read, and no later read
    // (`j p` with `j > i`) is below it.
    for i in 0..t {
        neighbor[i] = neighbor[i * p];
    }
    neighbor.drain(t..t * p);
    neighbor.shrink_to_fit();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn torus(k: u32, n: u32) -> Geometry {
        Geometry::new(&Topology::Torus { radix: k, dimensions: n }).unwrap()
    }

    #[test]
    fn torus_neighbours_wrap_and_distances_are_minimal() {
        let g = torus(4, 2);
        // Node 0: +x0 -> (1,0), -x0 -> (3,0), -x1 -> (0,3).
        assert_eq!(g.downstream(0), 1);
        assert_eq!(g.downstream(1), 3);
        assert_eq!(g.downstream(3), 12);
        assert_eq!(g.distance(0, 10), 4);
        let mut steps = Vec::new();
        assert_eq!(g.minimal_steps(0, 2, |s| steps.push(s)), 2);
        assert_eq!(steps.len(), 2, "k/2 away: both directions are minimal");
        assert_eq!(g.links(), 64);
        assert_eq!(g.size.diameter, 4);
    }

    #[test]
    fn mesh_has_no_border_links_and_hypercube_flips_bits() {
        let m = Geometry::new(&Topology::Mesh { radix: 3, dimensions: 2 }).unwrap();
        assert_eq!(m.downstream(2 * 4), NO_LINK);
        assert_eq!(m.links(), 24);
        assert_eq!(m.distance(0, 8), 4);
        let h = Geometry::new(&Topology::Hypercube { dimensions: 3 }).unwrap();
        assert_eq!(h.downstream(5 * 3 + 1), 7);
        assert_eq!(h.dimension_order_step(5, 2, 0).map(|s| s.0.port), Some(0));
        assert_eq!(h.distance(5, 2), 3);
    }

    /// Where the nodes are terminals attached to routers, each terminal holds one channel,
    /// its link, and the routers' follow in the family's order: the engine's ids and the
    /// family's (`slot`) are one increasing mapping, inverse to `router_port`, and `check`
    /// counts the slots the geometry has (the simulator's size cap reads it).
    #[test]
    fn terminals_hold_one_channel_and_the_channels_keep_the_familys_order() {
        use crate::scenario::GlobalArrangement;
        let topologies = [
            Topology::Dragonfly {
                terminals_per_router: 2,
                routers_per_group: 4,
                global_links_per_router: 2,
                global_arrangement: GlobalArrangement::default(),
            },
            Topology::KaryNTree { radix: 4, dimensions: 3, up_links_per_switch: Some(2) },
            Topology::FatTree { processors: 64 },
            Topology::HyperX {
                radix: 3,
                dimensions: 2,
                terminals_per_router: 2,
                trunking: Some(2),
            },
            Topology::SlimFly { prime_power: 5, terminals_per_router: 3 },
            Topology::Mesh { radix: 4, dimensions: 2 },
        ];
        for topology in topologies {
            let g = Geometry::new(&topology).unwrap();
            let apart = !g.nodes_are_routers();
            let uniform = each_family!(&g.family, net => net.neighbors());
            let routers = (uniform.len() / g.ports as usize) as u32;
            let mut expected = 0;
            let mut last_slot = None;
            for router in 0..routers {
                assert_eq!(g.first_channel(router), expected, "{topology:?} router {router}");
                let ports = g.ports_at(router);
                assert_eq!(ports, if apart && router < g.nodes { 1 } else { g.ports });
                for port in 0..g.ports {
                    let slot = router * g.ports + port;
                    if port >= ports {
                        assert_eq!(uniform[slot as usize], NO_LINK, "a dropped slot had a link");
                        continue;
                    }
                    let channel = g.channel(router, port);
                    assert_eq!(g.router_port(channel), (router, port));
                    assert_eq!(g.slot(channel), slot);
                    assert_eq!(g.downstream(channel), uniform[slot as usize]);
                    assert!(last_slot < Some(slot), "the mapping keeps the order");
                    last_slot = Some(slot);
                }
                expected += ports;
            }
            assert_eq!(g.channel_slots() as u32, expected);
            assert_eq!(Geometry::check(&topology).unwrap().channel_slots, u64::from(expected));
            let links = uniform.iter().filter(|&&n| n != NO_LINK).count() as u64;
            assert_eq!(g.links(), links, "no link is dropped");
        }
    }

    #[test]
    fn every_step_reduces_the_distance() {
        for g in [torus(5, 2), torus(4, 3), torus(2, 3)] {
            for a in 0..g.nodes {
                for b in 0..g.nodes {
                    let d = g.distance(a, b);
                    g.minimal_steps(a, b, |s| {
                        assert_eq!(g.distance(g.downstream(g.channel(a, s.port)), b) + 1, d)
                    });
                    for ties in [0, u32::MAX] {
                        if let Some((s, _)) = g.dimension_order_step(a, b, ties) {
                            assert_eq!(g.distance(g.downstream(g.channel(a, s.port)), b) + 1, d);
                        }
                    }
                }
            }
        }
    }
}
