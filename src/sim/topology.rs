//! Network geometry: node ids, coordinates, links and minimal directions, for every family;
//! each family's own numbering and steps are in `network/` (`torus` for tori and meshes,
//! `hypercube`, `fat_tree`, `dragonfly`, `kary_ntree`, `graph`).
//!
//! Nodes are numbered `0..nodes` in mixed radix (dimension 0 varies fastest), so coordinates
//! are computed with a division, never stored per message. Every router has `ports` network
//! output ports; physical channel `node * ports + port` leaves `node` through `port`:
//! tori and meshes use `port = 2 d` for the + direction and `2 d + 1` for the - direction of
//! dimension `d`; the hypercube uses `port = d`. Mesh ports at the border have no link.
//! The butterfly fat-tree ([`Shape::FatTree`], numbering and wiring in `network::fat_tree`) has more
//! routers than endpoints: `nodes` counts its processors (ids `0..N`, the traffic endpoints),
//! and its switches are routers with the ids after them, each with six ports; everything above
//! this module only sees ports, router ids and channel ids. The dragonfly
//! ([`Shape::Dragonfly`], numbering, wiring and routing cases in `network::dragonfly`) is built
//! the same way: terminals `0..N` are the nodes, its routers follow them; so are the k-ary
//! n-tree ([`Shape::KaryNTree`], numbering, wiring and minimal steps in `network::kary_ntree`)
//! and a graph read from a file ([`Shape::Graph`], numbering, route tables and routing cases in
//! `network::graph`).

use crate::scenario::Topology;

use super::SimError;
use super::network::dragonfly::Dragonfly;
use super::network::fat_tree::{self, FatTree};
use super::network::graph::GraphNetwork;
use super::network::kary_ntree::KaryNTree;
use super::network::{hypercube, torus};

/// Marks a missing link (mesh border).
pub(crate) const NO_LINK: u32 = u32::MAX;

/// Largest supported network, in nodes (memory and 32-bit ids).
const MAX_NODES: u64 = 1 << 22;

/// The supported topology families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Torus,
    Mesh,
    Hypercube,
    /// Butterfly fat-tree (`radix` 4, `dims` = its number of switch levels n).
    FatTree,
    /// Dragonfly (`radix` the router radix p + a - 1 + h, `dims` 2).
    Dragonfly,
    /// A graph read from a file (`radix` its largest router radix, `dims` its router count).
    Graph,
    /// k-ary n-tree (`radix` k, `dims` its number of switch levels n).
    KaryNTree,
}

/// Largest minimal distance of a network of this shape.
pub(crate) fn diameter(shape: Shape, radix: u32, dims: u32) -> u32 {
    match shape {
        Shape::Hypercube => dims,
        Shape::Torus => dims * (radix / 2),
        Shape::Mesh => dims * (radix - 1),
        Shape::FatTree | Shape::KaryNTree => 2 * dims,
        // The longest route any dragonfly routing takes (Valiant: terminal link, local,
        // global, local, global, local, ejection link), so that sizes derived from it cover it.
        Shape::Dragonfly => 7,
        // A bound: a shortest legal up*/down* route visits each of the `dims` routers at most
        // once, plus the two terminal links.
        Shape::Graph => dims + 1,
    }
}

/// One direction out of a node: a port plus what the routing functions need to know about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) port: u32,
    /// Torus only: the rest of the route in this dimension crosses the wrap-around link
    /// (including this hop). Used for the dateline virtual-channel classes.
    pub(crate) wraps: bool,
}

/// A built network: sizes plus the neighbour table.
#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    pub(crate) shape: Shape,
    /// k (2 for the hypercube).
    pub(crate) radix: u32,
    /// n.
    pub(crate) dims: u32,
    pub(crate) nodes: u32,
    /// Network output ports per router.
    pub(crate) ports: u32,
    /// k^d for each dimension d.
    strides: Vec<u32>,
    /// Downstream router of each physical channel, `NO_LINK` where there is no link.
    neighbor: Vec<u32>,
    /// The fat-tree's levels and blocks (`Shape::FatTree` only).
    tree: Option<FatTree>,
    /// The dragonfly's sizes (`Shape::Dragonfly` only).
    pub(crate) dragonfly: Option<Dragonfly>,
    /// A graph's numbering and route tables (`Shape::Graph` only).
    pub(crate) graph: Option<GraphNetwork>,
    /// The k-ary n-tree's sizes (`Shape::KaryNTree` only).
    pub(crate) kary_ntree: Option<KaryNTree>,
}

impl Geometry {
    /// Validates `topology` and builds its tables.
    pub(crate) fn check(topology: &Topology) -> Result<(Shape, u32, u32), SimError> {
        if let Some(graph) = topology.graph() {
            let (terminals, routers, ports) = GraphNetwork::sizes(graph);
            if u64::from(terminals) + u64::from(routers) > MAX_NODES || routers == 0 {
                return Err(SimError(format!(
                    "graph {} is too large for the simulator ({terminals} terminals, {routers}                      routers)",
                    graph.file
                )));
            }
            return Ok((Shape::Graph, ports.max(2), routers));
        }
        let (shape, radix, dims) = match *topology {
            Topology::Torus { radix, dimensions } => (Shape::Torus, radix, dimensions),
            Topology::Mesh { radix, dimensions } => (Shape::Mesh, radix, dimensions),
            Topology::Hypercube { dimensions } => (Shape::Hypercube, 2, dimensions),
            Topology::FatTree { processors } => (Shape::FatTree, 4, fat_tree::levels(processors)?),
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
            } => {
                Dragonfly::new(p, a, h)?;
                (Shape::Dragonfly, topology.radix().max(2), 2)
            }
            Topology::KaryNTree { radix, dimensions } => {
                KaryNTree::new(radix, dimensions)?;
                (Shape::KaryNTree, radix, dimensions)
            }
            Topology::Graph { .. } => return Err(SimError("a graph is checked above".into())),
        };
        if dims == 0 {
            return Err(SimError(format!("{} needs at least 1 dimension", topology.kind())));
        }
        if radix < 2 {
            return Err(SimError(format!("{} needs radix k >= 2, got {radix}", topology.kind())));
        }
        if topology.nodes() > MAX_NODES {
            return Err(SimError(format!(
                "network too large for the simulator: {} nodes (at most {MAX_NODES})",
                topology.nodes()
            )));
        }
        Ok((shape, radix, dims))
    }

    /// Builds the geometry of a topology accepted by [`Geometry::check`].
    pub(crate) fn new(topology: &Topology) -> Result<Geometry, SimError> {
        let (shape, radix, dims) = Geometry::check(topology)?;
        let nodes = topology.nodes() as u32;
        let ports = match shape {
            Shape::Hypercube => dims,
            Shape::FatTree => fat_tree::PORTS,
            Shape::Dragonfly | Shape::KaryNTree | Shape::Graph => 0,
            _ => 2 * dims,
        };
        let mut strides = Vec::with_capacity(dims as usize);
        let mut stride = 1u32;
        for _ in 0..dims {
            strides.push(stride);
            stride = stride.saturating_mul(radix);
        }
        let mut geometry = Geometry {
            shape,
            radix,
            dims,
            nodes,
            ports,
            strides,
            neighbor: Vec::new(),
            tree: None,
            dragonfly: None,
            graph: None,
            kary_ntree: None,
        };
        if shape == Shape::FatTree {
            let (tree, neighbor) = FatTree::new(nodes)?;
            geometry.tree = Some(tree);
            geometry.neighbor = neighbor;
            return Ok(geometry);
        }
        if let Some(graph) = topology.graph() {
            let network = GraphNetwork::new(graph)?;
            geometry.ports = network.ports();
            geometry.neighbor = network.neighbors();
            geometry.graph = Some(network);
            return Ok(geometry);
        }
        if shape == Shape::KaryNTree {
            let tree = KaryNTree::new(radix, dims)?;
            geometry.ports = tree.ports();
            geometry.neighbor = tree.neighbors();
            geometry.kary_ntree = Some(tree);
            return Ok(geometry);
        }
        if let Some((p, a, h)) = topology.dragonfly() {
            let dragonfly = Dragonfly::new(p, a, h)?;
            geometry.ports = dragonfly.ports();
            geometry.neighbor = dragonfly.neighbors();
            geometry.dragonfly = Some(dragonfly);
            return Ok(geometry);
        }
        let mut neighbor = Vec::with_capacity(nodes as usize * ports as usize);
        for node in 0..nodes {
            for port in 0..ports {
                neighbor.push(geometry.compute_neighbor(node, port));
            }
        }
        geometry.neighbor = neighbor;
        Ok(geometry)
    }

    /// Number of physical channel slots (`routers * ports`, including missing links).
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

    /// Coordinate of `node` in dimension `d`.
    #[inline]
    pub(crate) fn coord(&self, node: u32, d: u32) -> u32 {
        (node / self.strides[d as usize]) % self.radix
    }

    /// `k^d`, the id distance between neighbours in dimension `d`.
    #[inline]
    pub(crate) fn stride(&self, d: u32) -> u32 {
        self.strides[d as usize]
    }

    fn compute_neighbor(&self, node: u32, port: u32) -> u32 {
        match self.shape {
            Shape::Hypercube => hypercube::neighbor(node, port),
            // Built by `FatTree::new`, `Dragonfly::neighbors`, `KaryNTree::neighbors` and
            // `GraphNetwork::new`, never here.
            Shape::FatTree | Shape::Dragonfly | Shape::KaryNTree | Shape::Graph => NO_LINK,
            Shape::Torus | Shape::Mesh => torus::neighbor(self, node, port),
        }
    }

    /// Calls `visit` with every minimal step from `cur` towards `dest` (both directions of a
    /// torus dimension at distance exactly k/2; both parent links of a fat-tree switch below
    /// the lowest common ancestors) and returns the distance in hops.
    #[inline]
    pub(crate) fn minimal_steps(&self, cur: u32, dest: u32, visit: impl FnMut(Step)) -> u32 {
        match self.shape {
            Shape::FatTree => self.tree.as_ref().map_or(0, |t| t.minimal_steps(cur, dest, visit)),
            Shape::Dragonfly => {
                self.dragonfly.as_ref().map_or(0, |d| d.minimal_steps(cur, dest, visit))
            }
            Shape::Graph => self.graph.as_ref().map_or(0, |g| g.minimal_steps(cur, dest, visit)),
            Shape::KaryNTree => {
                self.kary_ntree.as_ref().map_or(0, |t| t.minimal_steps(cur, dest, visit))
            }
            Shape::Hypercube => hypercube::minimal_steps(cur, dest, visit),
            Shape::Torus => torus::torus_minimal_steps(self, cur, dest, visit),
            Shape::Mesh => torus::mesh_minimal_steps(self, cur, dest, visit),
        }
    }

    /// The dimension-order (e-cube) step: lowest differing dimension first; on a torus, when
    /// both directions are minimal (distance k/2) in dimension `d`, the + direction if bit `d`
    /// of `ties` is set and the - direction otherwise. Also returns the dimension. `None` when
    /// `cur == dest`.
    #[inline]
    pub(crate) fn dimension_order_step(
        &self,
        cur: u32,
        dest: u32,
        ties: u32,
    ) -> Option<(Step, u32)> {
        match self.shape {
            Shape::FatTree | Shape::Dragonfly | Shape::KaryNTree | Shape::Graph => {
                // No routing uses it on the trees, the dragonfly or a graph: the first
                // minimal step.
                let mut first = None;
                self.minimal_steps(cur, dest, |step| {
                    first.get_or_insert((step, 0));
                });
                first
            }
            Shape::Hypercube => hypercube::dimension_order_step(cur, dest),
            Shape::Torus | Shape::Mesh => torus::dimension_order_step(self, cur, dest, ties),
        }
    }

    /// Minimal distance in hops.
    #[cfg(test)]
    pub(crate) fn distance(&self, a: u32, b: u32) -> u32 {
        self.minimal_steps(a, b, |_| {})
    }

    /// Checkerboard colour: parity of the coordinate sum (meaningful when bipartite).
    #[inline]
    pub(crate) fn parity(&self, node: u32) -> u32 {
        match (self.shape, &self.tree) {
            (Shape::Hypercube, _) => hypercube::parity(node),
            (Shape::FatTree, Some(tree)) => tree.parity(node),
            (Shape::KaryNTree, _) => self.kary_ntree.as_ref().map_or(0, |t| t.parity(node)),
            // Not bipartite (a group is a complete graph); no routing asks. Nor on a graph.
            (Shape::Dragonfly | Shape::Graph, _) => 0,
            _ => torus::parity(self, node),
        }
    }

    /// Human-readable coordinates, e.g. `(3,0)`.
    pub(crate) fn describe(&self, node: u32) -> String {
        if let Some(tree) = &self.tree {
            return tree.describe(node);
        }
        if let Some(dragonfly) = &self.dragonfly {
            return dragonfly.describe(node);
        }
        if let Some(graph) = &self.graph {
            return graph.describe(node);
        }
        if let Some(tree) = &self.kary_ntree {
            return tree.describe(node);
        }
        torus::describe(self, node)
    }

    /// The class of the link `channel`, for per-class load summaries: the dimension of a
    /// torus, mesh or hypercube link (`x0`, `x1`, ...), the levels a fat-tree link joins and
    /// its direction (`up 0-1`, `down 2-1`; the k-ary n-tree's likewise, level 0 its
    /// terminals), a dragonfly link's kind (`terminal-router`, `router-terminal`, `local`,
    /// `global`), a graph link's (`terminal-router`, `router-terminal`, `router-router`). A new topology answers with its own levels or
    /// kinds; links of one class should carry comparable loads under uniform traffic.
    pub(crate) fn link_class(&self, channel: u32) -> String {
        let ports = self.ports.max(1);
        let (router, port) = (channel / ports, channel % ports);
        match self.shape {
            Shape::Hypercube => format!("x{port}"),
            Shape::Torus | Shape::Mesh => format!("x{}", port / 2),
            Shape::FatTree => {
                let level = self.tree.as_ref().map_or(0, |tree| tree.position(router).0);
                if port < 2 {
                    format!("up {level}-{}", level + 1)
                } else {
                    format!("down {level}-{}", level.saturating_sub(1))
                }
            }
            Shape::KaryNTree => {
                let Some(tree) = &self.kary_ntree else { return String::new() };
                let level = tree.position(router).0;
                if tree.is_up(port) {
                    format!("up {level}-{}", level + 1)
                } else {
                    format!("down {level}-{}", level.saturating_sub(1))
                }
            }
            Shape::Graph => {
                if router < self.nodes {
                    "terminal-router".to_owned()
                } else if self.downstream(channel) < self.nodes {
                    "router-terminal".to_owned()
                } else {
                    "router-router".to_owned()
                }
            }
            Shape::Dragonfly => {
                let kind = self.describe_port(port);
                let kind = kind.split('_').next().unwrap_or_default();
                match kind {
                    "terminal" if router < self.nodes => "terminal-router".to_owned(),
                    "terminal" => "router-terminal".to_owned(),
                    other => other.to_owned(),
                }
            }
        }
    }

    /// Human-readable direction of a port, e.g. `+x0` or `-x1` (`x3` on the hypercube).
    pub(crate) fn describe_port(&self, port: u32) -> String {
        match self.shape {
            Shape::Hypercube => hypercube::describe_port(port),
            Shape::FatTree => FatTree::describe_port(port),
            Shape::Dragonfly => {
                self.dragonfly.as_ref().map_or_else(String::new, |d| d.describe_port(port))
            }
            Shape::Graph => format!("port_{port}"),
            Shape::KaryNTree => {
                self.kary_ntree.as_ref().map_or_else(String::new, |t| t.describe_port(port))
            }
            _ => torus::describe_port(port),
        }
    }
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
        assert_eq!(diameter(g.shape, g.radix, g.dims), 4);
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

    #[test]
    fn every_step_reduces_the_distance() {
        for g in [torus(5, 2), torus(4, 3), torus(2, 3)] {
            for a in 0..g.nodes {
                for b in 0..g.nodes {
                    let d = g.distance(a, b);
                    g.minimal_steps(a, b, |s| {
                        assert_eq!(g.distance(g.downstream(a * g.ports + s.port), b) + 1, d)
                    });
                    for ties in [0, u32::MAX] {
                        if let Some((s, _)) = g.dimension_order_step(a, b, ties) {
                            assert_eq!(g.distance(g.downstream(a * g.ports + s.port), b) + 1, d);
                        }
                    }
                }
            }
        }
    }
}
