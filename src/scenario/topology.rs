//! The network families of the vocabulary: [`Topology`] (a family and its parameters),
//! [`TopologyKind`] (the family by name) and what every layer asks of a family without knowing
//! which one it is: the topology keys it reads ([`TopologyKind::parameters`]), their values
//! ([`Topology::counts`]), a topology built from them ([`Topology::from_counts`], with the
//! family's defaults), its sizes ([`Topology::nodes`], [`Topology::radix`],
//! [`Topology::dimensions`]) and its label in messages ([`Topology::label`]).
//!
//! The spec's reading, the command line, the bounds checks and the result columns go through
//! these, so a family is known here, in its simulator file (`sim/network/`) and in its arms
//! of `sim/topology.rs`; a family with keys no other family reads also adds their rows to
//! [`super::fields`].

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::graph::{self, Graph};

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
        /// Which global link joins which pair of groups (left out of the serialized form when
        /// `absolute`, the default, so those task ids are unchanged).
        #[serde(skip_serializing_if = "GlobalArrangement::is_absolute")]
        global_arrangement: GlobalArrangement,
    },
    /// k-ary n-tree, the folded-Clos fat-tree (Petrini and Vanneschi, IPPS 1997): `N = k^n`
    /// terminals and `n` levels of switches, each with `k` links down and `k` up; with `u < k`
    /// links up per switch, the tapered (oversubscribed) tree XGFT(n; k, ..., k; 1, u, ..., u)
    /// of Öhring et al. (IPPS 1995), `k^(n-l) u^(l-1)` switches at level `l`, each level's
    /// uplinks `u/k` of its downlinks.
    #[serde(rename = "kary_ntree")]
    KaryNTree {
        /// Links down per switch, k >= 2.
        radix: u32,
        /// Levels of switches, n >= 1.
        dimensions: u32,
        /// Links up per switch below the top level, `1 <= u < k`; `None`: `k`, the full
        /// bisection tree (left out of the serialized form, so its task ids are unchanged).
        #[serde(skip_serializing_if = "Option::is_none")]
        up_links_per_switch: Option<u32>,
    },
    /// HyperX (Ahn, Binkert, Davis, McLaren and Schreiber, SC 2009): `S^L` routers at the
    /// points of an `L`-dimensional array of side `S`, each linked to every router that
    /// differs from it in one coordinate (a complete graph in each dimension), with `T`
    /// terminals each; `N = T S^L` terminals. `L = 1` is a fully connected network, `L = 2`
    /// with `T = S` the flattened butterfly (Kim, Dally and Abts, ISCA 2007).
    #[serde(rename = "hyperx")]
    HyperX {
        /// Routers per dimension S >= 2.
        radix: u32,
        /// Number of dimensions L >= 1.
        dimensions: u32,
        /// Terminals per router T >= 1.
        terminals_per_router: u32,
        /// Links between each pair of neighbouring routers, the paper's trunking `K >= 2`;
        /// `None`: one link, `K = 1` (left out of the serialized form, so its task ids are
        /// unchanged).
        #[serde(skip_serializing_if = "Option::is_none")]
        trunking: Option<u32>,
    },
    /// Slim Fly (Besta and Hoefler, SC 2014): the MMS graph of diameter 2 over the field of
    /// order `q`, `2 q^2` routers of network radix `k' = (3q - δ)/2` (`q = 4w + δ`), with `p`
    /// terminals each; `N = 2 q^2 p` terminals.
    #[serde(rename = "slim_fly")]
    SlimFly {
        /// The prime power q >= 3.
        prime_power: u32,
        /// Terminals per router p >= 1.
        terminals_per_router: u32,
    },
    /// Any network read from a file (`docs/graph.md`): routers, their terminals and
    /// bidirectional links. Serialized (and so identified) by the file's content hash only.
    Graph {
        /// The parsed graph.
        #[serde(serialize_with = "graph::serialize_shared")]
        graph: Arc<Graph>,
    },
}

/// How a dragonfly's global links join its groups (the arrangements compared by M. Hastings,
/// D. Rincón-Cruz, M. Spehlmann et al., "Comparing global link arrangements for Dragonfly
/// networks", Proc. IEEE Cluster 2015). Group `G` numbers its `a h = g - 1` global links
/// `l = x h + j` (router `x`, global port `j`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GlobalArrangement {
    /// Link `l` leads to group `l` if `l < G`, else `l + 1`: the other groups in increasing
    /// order (also called consecutive).
    #[default]
    Absolute,
    /// Link `l` leads to group `(G + l + 1) mod g`: each group's links reach the groups after
    /// it in turn (the palm-tree arrangement of García and of Camarero, Vallejo and Beivide,
    /// up to the direction of the group numbering).
    Relative,
    /// Links in pairs: link `2m` leads to group `(G + m + 1) mod g`, link `2m + 1` to group
    /// `(G - m - 1) mod g` (with `g` even, the last link to the group opposite).
    Circulant,
}

impl GlobalArrangement {
    /// The name used in specs, rows and on the command line.
    pub fn as_str(&self) -> &'static str {
        match self {
            GlobalArrangement::Absolute => "absolute",
            GlobalArrangement::Relative => "relative",
            GlobalArrangement::Circulant => "circulant",
        }
    }

    /// Whether it is the default, `absolute` (left out of the serialized form).
    pub fn is_absolute(&self) -> bool {
        *self == GlobalArrangement::Absolute
    }
}

impl super::fields::Named for GlobalArrangement {
    const ALL: &'static [GlobalArrangement] =
        &[GlobalArrangement::Absolute, GlobalArrangement::Relative, GlobalArrangement::Circulant];

    fn as_str(&self) -> &'static str {
        GlobalArrangement::as_str(self)
    }
}

/// The network families by name: `topology.kind` in a spec, the `topology` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// k-ary n-cube.
    Torus,
    /// k-ary n-mesh.
    Mesh,
    /// Binary n-cube.
    Hypercube,
    /// Butterfly fat-tree.
    FatTree,
    /// Dragonfly (Kim, Dally, Scott and Abts, ISCA 2008), global links in the absolute
    /// arrangement.
    Dragonfly,
    /// k-ary n-tree, the folded-Clos fat-tree (Petrini and Vanneschi, IPPS 1997): `radix` k,
    /// `dimensions` n levels of switches, k^n terminals.
    #[serde(rename = "kary_ntree")]
    KaryNTree,
    /// HyperX (Ahn et al., SC 2009): `radix` S routers per dimension, `dimensions` L,
    /// `terminals_per_router` T (S when left out: the flattened butterfly's balance).
    #[serde(rename = "hyperx")]
    HyperX,
    /// Slim Fly (Besta and Hoefler, SC 2014): `prime_power` q, `terminals_per_router` p
    /// (`ceil(k'/2)` when left out, the paper's balanced choice).
    #[serde(rename = "slim_fly")]
    SlimFly,
    /// Any network read from a file (`topology.graph`, format in docs/graph.md).
    Graph,
}

impl TopologyKind {
    /// The name used in specs, rows and on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            TopologyKind::Torus => "torus",
            TopologyKind::Mesh => "mesh",
            TopologyKind::Hypercube => "hypercube",
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::Dragonfly => "dragonfly",
            TopologyKind::KaryNTree => "kary_ntree",
            TopologyKind::HyperX => "hyperx",
            TopologyKind::SlimFly => "slim_fly",
            TopologyKind::Graph => "graph",
        }
    }
}

impl Topology {
    /// The family.
    pub fn family(&self) -> TopologyKind {
        match self {
            Topology::Torus { .. } => TopologyKind::Torus,
            Topology::Mesh { .. } => TopologyKind::Mesh,
            Topology::Hypercube { .. } => TopologyKind::Hypercube,
            Topology::FatTree { .. } => TopologyKind::FatTree,
            Topology::Dragonfly { .. } => TopologyKind::Dragonfly,
            Topology::KaryNTree { .. } => TopologyKind::KaryNTree,
            Topology::HyperX { .. } => TopologyKind::HyperX,
            Topology::SlimFly { .. } => TopologyKind::SlimFly,
            Topology::Graph { .. } => TopologyKind::Graph,
        }
    }

    /// Short name used in result rows: `torus`, `mesh`, `hypercube`, `fat_tree`.
    pub fn kind(&self) -> &'static str {
        self.family().as_str()
    }

    /// Radix k for tori and meshes, 2 for the hypercube, 4 for the fat-tree; for the dragonfly
    /// the router radix `k = p + a - 1 + h` (terminal, local and global ports); for the HyperX
    /// its routers per dimension S; for the Slim Fly the router radix `p + k'`; for a graph
    /// the largest router radix (terminals plus links).
    pub fn radix(&self) -> u32 {
        match *self {
            Topology::Graph { ref graph } => graph.radix(),
            Topology::Torus { radix, .. }
            | Topology::Mesh { radix, .. }
            | Topology::KaryNTree { radix, .. }
            | Topology::HyperX { radix, .. } => radix,
            Topology::Hypercube { .. } => 2,
            Topology::FatTree { .. } => 4,
            Topology::SlimFly { prime_power, terminals_per_router } => {
                slim_fly_network_radix(prime_power).saturating_add(terminals_per_router)
            }
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
                ..
            } => p.saturating_add(a).saturating_add(h).saturating_sub(1),
        }
    }

    /// Number of dimensions n (for the fat-tree: the number of levels, log4 N; for the
    /// dragonfly 2, its two levels of links: local within a group, global between groups; for
    /// the Slim Fly 2, its diameter; 0 for a graph, which has none).
    pub fn dimensions(&self) -> u32 {
        match *self {
            Topology::Graph { .. } => 0,
            Topology::Torus { dimensions, .. }
            | Topology::Mesh { dimensions, .. }
            | Topology::Hypercube { dimensions }
            | Topology::KaryNTree { dimensions, .. }
            | Topology::HyperX { dimensions, .. } => dimensions,
            Topology::FatTree { processors } => {
                let mut levels = 0;
                let mut n = processors.max(1);
                while n >= 4 {
                    n /= 4;
                    levels += 1;
                }
                levels
            }
            Topology::Dragonfly { .. } | Topology::SlimFly { .. } => 2,
        }
    }

    /// Number of processing nodes, saturating at `u64::MAX` for absurd sizes.
    pub fn nodes(&self) -> u64 {
        match *self {
            Topology::Graph { ref graph } => graph.terminals(),
            Topology::Torus { radix, dimensions }
            | Topology::Mesh { radix, dimensions }
            | Topology::KaryNTree { radix, dimensions, .. } => {
                (radix as u64).checked_pow(dimensions).unwrap_or(u64::MAX)
            }
            Topology::Hypercube { dimensions } => 1u64.checked_shl(dimensions).unwrap_or(u64::MAX),
            Topology::FatTree { processors } => processors as u64,
            Topology::HyperX { radix, dimensions, terminals_per_router, .. } => (radix as u64)
                .checked_pow(dimensions)
                .unwrap_or(u64::MAX)
                .saturating_mul(u64::from(terminals_per_router)),
            Topology::SlimFly { prime_power: q, terminals_per_router: p } => {
                2 * u64::from(q) * u64::from(q) * u64::from(p)
            }
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
                ..
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
                ..
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

/// The Slim Fly's network radix `k' = (3q - δ)/2` for `q = 4w + δ`, `δ ∈ {-1, 0, 1}` (for a
/// `q` that is no prime power the same formula; the simulator refuses it).
pub fn slim_fly_network_radix(q: u32) -> u32 {
    let q = i64::from(q);
    // δ = q - 4w: 1 for q = 1 mod 4, -1 for q = 3 mod 4, 0 for powers of 2.
    let delta = match q % 4 {
        1 => 1,
        3 => -1,
        _ => 0,
    };
    u32::try_from((3 * q - delta) / 2).unwrap_or(u32::MAX)
}

/// Calls the macro `$then` with the count keys of a spec's `topology:` section (every
/// family's parameters but a graph's file), each as `/// doc` `name;`, the doc being the
/// key's documentation in the spec's JSON Schema. The spec's syntax
/// (`spec::types::TopologySpec`) and its reading (`spec::validate::columns`) come from it; a
/// family's [`TopologyKind::parameters`] name some of them.
macro_rules! each_topology_count {
    ($then:ident) => {
        $then! {
            /// Nodes per dimension k >= 2 (torus, mesh); links down and up per switch k >= 2
            /// (kary_ntree); routers per dimension S >= 2 (hyperx).
            radix;
            /// Number of dimensions n >= 1 (torus, mesh, hypercube, hyperx); levels of
            /// switches n >= 1 (kary_ntree).
            dimensions;
            /// Number of processors N, a power of 4 (fat_tree).
            processors;
            /// The prime power q >= 3 of the Slim Fly's MMS graph (slim_fly).
            prime_power;
            /// Terminals per router p >= 1 (dragonfly; hyperx, where it is radix when left
            /// out; slim_fly, where it is ceil(k'/2) when left out).
            terminals_per_router;
            /// Routers per group a >= 1 (dragonfly); 2p, the balanced dragonfly, when left out.
            routers_per_group;
            /// Global links per router h >= 1 (dragonfly); p, the balanced dragonfly, when left out.
            global_links_per_router;
            /// Links up per switch below the top level, 1 <= u <= k (kary_ntree); k, the full
            /// bisection tree, when left out; u < k tapers every level by u/k (k:u
            /// oversubscription).
            up_links_per_switch;
            /// Links between each pair of neighbouring routers K >= 1 (hyperx; the paper's
            /// trunking); 1 when left out.
            trunking;
        }
    };
}
pub(crate) use each_topology_count;

impl TopologyKind {
    /// Every family, in the order of the spec's documentation.
    pub const ALL: [TopologyKind; 9] = [
        TopologyKind::Torus,
        TopologyKind::Mesh,
        TopologyKind::Hypercube,
        TopologyKind::FatTree,
        TopologyKind::Dragonfly,
        TopologyKind::KaryNTree,
        TopologyKind::HyperX,
        TopologyKind::SlimFly,
        TopologyKind::Graph,
    ];

    /// The topology keys the family reads (`topology.<key>` in a spec, `<key>=` on the command
    /// line), in the order of the scenario fields; every one is a count but a graph's file.
    pub const fn parameters(self) -> &'static [&'static str] {
        match self {
            TopologyKind::Torus | TopologyKind::Mesh => &["radix", "dimensions"],
            TopologyKind::KaryNTree => &["radix", "dimensions", "up_links_per_switch"],
            TopologyKind::Hypercube => &["dimensions"],
            TopologyKind::FatTree => &["processors"],
            TopologyKind::Dragonfly => {
                &["terminals_per_router", "routers_per_group", "global_links_per_router"]
            }
            TopologyKind::HyperX => &["radix", "dimensions", "terminals_per_router", "trunking"],
            TopologyKind::SlimFly => &["prime_power", "terminals_per_router"],
            TopologyKind::Graph => &["graph"],
        }
    }

    /// The named (not counted) topology keys the family reads beside [`TopologyKind::parameters`]:
    /// the dragonfly's `global_arrangement`.
    pub const fn named_parameters(self) -> &'static [&'static str] {
        match self {
            TopologyKind::Dragonfly => &["global_arrangement"],
            _ => &[],
        }
    }

    /// The families that read topology key `key`.
    pub fn reading(key: &str) -> impl Iterator<Item = TopologyKind> + '_ {
        TopologyKind::ALL.into_iter().filter(move |kind| kind.parameters().contains(&key))
    }
}

impl Topology {
    /// The family's count parameters and their values, in [`TopologyKind::parameters`] order
    /// (a graph has none: its file is its parameter).
    pub fn counts(&self) -> Vec<(&'static str, u32)> {
        let keys = self.family().parameters();
        let values: &[u32] = match *self {
            Topology::Torus { radix, dimensions } | Topology::Mesh { radix, dimensions } => {
                &[radix, dimensions]
            }
            Topology::KaryNTree { radix, dimensions, up_links_per_switch } => {
                &[radix, dimensions, up_links_per_switch.unwrap_or(radix)]
            }
            Topology::Hypercube { dimensions } => &[dimensions],
            Topology::FatTree { processors } => &[processors],
            Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
                ..
            } => &[p, a, h],
            Topology::HyperX { radix, dimensions, terminals_per_router, trunking } => {
                &[radix, dimensions, terminals_per_router, trunking.unwrap_or(1)]
            }
            Topology::SlimFly { prime_power, terminals_per_router } => {
                &[prime_power, terminals_per_router]
            }
            Topology::Graph { .. } => &[],
        };
        keys.iter().copied().zip(values.iter().copied()).collect()
    }

    /// The value of count parameter `key`, when the family reads it.
    pub fn count(&self, key: &str) -> Option<u32> {
        self.counts().into_iter().find(|&(k, _)| k == key).map(|(_, value)| value)
    }

    /// The topology of family `kind` with the counts `given` returns for its parameters, and
    /// the family's defaults for those it leaves out (the dragonfly is balanced by default:
    /// `a = 2p`, `h = p`, Kim et al.'s). `Err` names a parameter that has no default; a graph,
    /// read from its file, is never built here. The HyperX has `T = S` terminals per router by
    /// default, the flattened butterfly's balance, and the Slim Fly `p = ceil(k'/2)`, Besta and
    /// Hoefler's.
    pub fn from_counts(
        kind: TopologyKind,
        mut given: impl FnMut(&'static str) -> Option<u32>,
    ) -> Result<Topology, &'static str> {
        let mut need = |key: &'static str| given(key).ok_or(key);
        Ok(match kind {
            TopologyKind::Torus => {
                Topology::Torus { radix: need("radix")?, dimensions: need("dimensions")? }
            }
            TopologyKind::Mesh => {
                Topology::Mesh { radix: need("radix")?, dimensions: need("dimensions")? }
            }
            TopologyKind::Hypercube => Topology::Hypercube { dimensions: need("dimensions")? },
            TopologyKind::FatTree => Topology::FatTree { processors: need("processors")? },
            TopologyKind::KaryNTree => {
                let radix = need("radix")?;
                Topology::KaryNTree {
                    radix,
                    dimensions: need("dimensions")?,
                    // k up links is the full tree, the default: one network, one identity.
                    up_links_per_switch: need("up_links_per_switch").ok().filter(|&u| u != radix),
                }
            }
            TopologyKind::Dragonfly => {
                let p = need("terminals_per_router")?;
                Topology::Dragonfly {
                    terminals_per_router: p,
                    routers_per_group: need("routers_per_group").unwrap_or(p.saturating_mul(2)),
                    global_links_per_router: need("global_links_per_router").unwrap_or(p),
                    global_arrangement: crate::scenario::GlobalArrangement::Absolute,
                }
            }
            TopologyKind::HyperX => {
                let radix = need("radix")?;
                Topology::HyperX {
                    radix,
                    dimensions: need("dimensions")?,
                    terminals_per_router: need("terminals_per_router").unwrap_or(radix),
                    // One link per pair is the default: one network, one identity.
                    trunking: need("trunking").ok().filter(|&k| k != 1),
                }
            }
            TopologyKind::SlimFly => {
                let q = need("prime_power")?;
                Topology::SlimFly {
                    prime_power: q,
                    terminals_per_router: need("terminals_per_router")
                        .unwrap_or(slim_fly_network_radix(q).div_ceil(2)),
                }
            }
            TopologyKind::Graph => return Err("graph"),
        })
    }

    /// The network of family `kind` that the command line starts from before its keys
    /// (`runner simulate topology=<kind>`): a torus or a mesh keeps the radix and dimensions of
    /// `from` (at least 2 and 1), a hypercube its dimensions, a fat-tree has 4^n processors for
    /// `from`'s n; the dragonfly is the balanced one with p = 2 (72 terminals), and the k-ary
    /// n-tree the 4-ary 3-tree (64 terminals) unless `from` is one, the HyperX keeps the radix
    /// and dimensions of `from` with as many terminals per router. `None` for a graph, which
    /// its file gives.
    pub fn example(kind: TopologyKind, from: &Topology) -> Option<Topology> {
        let radix = from.radix().max(2);
        let dimensions = from.dimensions().max(1);
        Some(match kind {
            TopologyKind::Torus => Topology::Torus { radix, dimensions },
            TopologyKind::Mesh => Topology::Mesh { radix, dimensions },
            TopologyKind::Hypercube => Topology::Hypercube { dimensions },
            TopologyKind::FatTree => {
                Topology::FatTree { processors: 4u32.pow(from.dimensions().clamp(1, 15)) }
            }
            TopologyKind::Dragonfly => Topology::Dragonfly {
                terminals_per_router: 2,
                routers_per_group: 4,
                global_links_per_router: 2,
                global_arrangement: crate::scenario::GlobalArrangement::Absolute,
            },
            TopologyKind::KaryNTree if from.family() == kind => from.clone(),
            TopologyKind::KaryNTree => {
                Topology::KaryNTree { radix: 4, dimensions: 3, up_links_per_switch: None }
            }
            TopologyKind::HyperX => {
                Topology::HyperX { radix, dimensions, terminals_per_router: radix, trunking: None }
            }
            TopologyKind::SlimFly if from.family() == kind => from.clone(),
            TopologyKind::SlimFly => Topology::SlimFly { prime_power: 5, terminals_per_router: 4 },
            TopologyKind::Graph => return None,
        })
    }

    /// The topology with count parameter `key` set to `value`, and the parameters after it
    /// that have a default set back to it (the dragonfly's p makes it balanced again:
    /// `a = 2p`, `h = p`, unless the keys that follow say otherwise); the others keep their
    /// values. `None` when the family does not read `key`.
    pub fn with_count(&self, key: &str, value: u32) -> Option<Topology> {
        let kind = self.family();
        let parameters = kind.parameters();
        let at = parameters.iter().position(|k| *k == key)?;
        // The parameters after `key` that have no default keep their values.
        let mut kept: Vec<&str> = parameters[..at].to_vec();
        loop {
            let built = Topology::from_counts(kind, |k| {
                if k == key {
                    Some(value)
                } else if kept.contains(&k) {
                    self.count(k)
                } else {
                    None
                }
            });
            match built {
                // A dragonfly keeps its arrangement (no count sets it).
                Ok(topology) => {
                    let arrangement = self.global_arrangement().unwrap_or_default();
                    return Some(topology.with_global_arrangement(arrangement));
                }
                Err(missing) if !kept.contains(&missing) && missing != key => kept.push(missing),
                Err(_) => return None,
            }
        }
    }

    /// The dragonfly with its global links in `arrangement`; any other family as it is.
    pub fn with_global_arrangement(mut self, arrangement: GlobalArrangement) -> Topology {
        if let Topology::Dragonfly { global_arrangement, .. } = &mut self {
            *global_arrangement = arrangement;
        }
        self
    }

    /// The dragonfly's global arrangement; `None` for the other families.
    pub fn global_arrangement(&self) -> Option<GlobalArrangement> {
        match self {
            Topology::Dragonfly { global_arrangement, .. } => Some(*global_arrangement),
            _ => None,
        }
    }

    /// The network in the words of a paper: `8-ary 2-cube torus`, `fat-tree N=64`, `4-ary
    /// 2-tree u=2` (a tapered k-ary n-tree with u links up per switch),
    /// `dragonfly p=2 a=4 h=2` (`... relative` with another global arrangement), `HyperX S=4 L=2 T=4`, `graph ring.txt (8 terminals, 8
    /// routers)`.
    pub fn label(&self) -> String {
        match self {
            Topology::Graph { graph } => format!(
                "graph {} ({} terminals, {} routers)",
                graph.file_name(),
                graph.terminals(),
                graph.routers.len()
            ),
            &Topology::Torus { radix, dimensions } => {
                format!("{radix}-ary {dimensions}-cube torus")
            }
            &Topology::Mesh { radix, dimensions } => format!("{radix}-ary {dimensions}-mesh"),
            &Topology::Hypercube { dimensions } => format!("{dimensions}-cube"),
            &Topology::FatTree { processors } => format!("fat-tree N={processors}"),
            &Topology::Dragonfly {
                terminals_per_router: p,
                routers_per_group: a,
                global_links_per_router: h,
                global_arrangement,
            } => match global_arrangement {
                GlobalArrangement::Absolute => format!("dragonfly p={p} a={a} h={h}"),
                other => format!("dragonfly p={p} a={a} h={h} {}", other.as_str()),
            },
            Topology::KaryNTree { radix, dimensions, up_links_per_switch: None } => {
                format!("{radix}-ary {dimensions}-tree")
            }
            Topology::KaryNTree { radix, dimensions, up_links_per_switch: Some(u) } => {
                format!("{radix}-ary {dimensions}-tree u={u}")
            }
            Topology::HyperX { radix, dimensions, terminals_per_router, trunking: None } => {
                format!("HyperX S={radix} L={dimensions} T={terminals_per_router}")
            }
            Topology::HyperX { radix, dimensions, terminals_per_router, trunking: Some(k) } => {
                format!("HyperX S={radix} L={dimensions} T={terminals_per_router} K={k}")
            }
            Topology::SlimFly { prime_power, terminals_per_router } => {
                format!("Slim Fly q={prime_power} p={terminals_per_router}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Topology, TopologyKind};
    use crate::scenario::fields;

    /// One network of every family that reads counts.
    fn networks() -> Vec<Topology> {
        vec![
            Topology::Torus { radix: 8, dimensions: 2 },
            Topology::Mesh { radix: 4, dimensions: 3 },
            Topology::Hypercube { dimensions: 6 },
            Topology::FatTree { processors: 64 },
            Topology::Dragonfly {
                terminals_per_router: 2,
                routers_per_group: 6,
                global_links_per_router: 3,
                global_arrangement: crate::scenario::GlobalArrangement::Absolute,
            },
            Topology::KaryNTree { radix: 4, dimensions: 3, up_links_per_switch: None },
            Topology::HyperX { radix: 4, dimensions: 2, terminals_per_router: 2, trunking: None },
            Topology::HyperX {
                radix: 3,
                dimensions: 2,
                terminals_per_router: 2,
                trunking: Some(2),
            },
            Topology::SlimFly { prime_power: 5, terminals_per_router: 4 },
        ]
    }

    #[test]
    fn counts_build_the_topology_back() {
        for topology in networks() {
            let counts = topology.counts();
            let names: Vec<&str> = counts.iter().map(|&(key, _)| key).collect();
            assert_eq!(names, topology.family().parameters(), "{topology:?}");
            let built = Topology::from_counts(topology.family(), |key| topology.count(key));
            assert_eq!(built, Ok(topology.clone()));
        }
    }

    #[test]
    fn a_missing_count_is_named_and_the_dragonfly_is_balanced_by_default() {
        let torus = Topology::from_counts(TopologyKind::Torus, |k| (k == "radix").then_some(4));
        assert_eq!(torus, Err("dimensions"));
        let dragonfly = Topology::from_counts(TopologyKind::Dragonfly, |k| {
            (k == "terminals_per_router").then_some(3)
        });
        assert_eq!(
            dragonfly.map(|t| t.counts()),
            Ok(vec![
                ("terminals_per_router", 3),
                ("routers_per_group", 6),
                ("global_links_per_router", 3)
            ])
        );
        assert!(Topology::from_counts(TopologyKind::Graph, |_| Some(1)).is_err());
    }

    #[test]
    fn every_parameter_is_a_scenario_field_in_field_order() {
        for kind in TopologyKind::ALL {
            let positions: Vec<usize> =
                kind.parameters().iter().map(|key| fields::index(key)).collect();
            assert!(positions.windows(2).all(|w| w[0] < w[1]), "{kind:?}: {positions:?}");
            for key in kind.parameters() {
                assert!(TopologyKind::reading(key).any(|k| k == kind));
            }
        }
        let radix: Vec<TopologyKind> = TopologyKind::reading("radix").collect();
        assert_eq!(
            radix,
            [
                TopologyKind::Torus,
                TopologyKind::Mesh,
                TopologyKind::KaryNTree,
                TopologyKind::HyperX
            ]
        );
    }

    #[test]
    fn a_count_resets_only_the_defaulted_counts_after_it() {
        let dragonfly = Topology::Dragonfly {
            terminals_per_router: 2,
            routers_per_group: 7,
            global_links_per_router: 5,
            global_arrangement: crate::scenario::GlobalArrangement::Absolute,
        };
        // p first: balanced again.
        assert_eq!(
            dragonfly.with_count("terminals_per_router", 3).map(|t| t.counts()),
            Some(vec![
                ("terminals_per_router", 3),
                ("routers_per_group", 6),
                ("global_links_per_router", 3)
            ])
        );
        // a: p kept, h back at its default p.
        assert_eq!(
            dragonfly
                .with_count("routers_per_group", 9)
                .and_then(|t| t.count("global_links_per_router")),
            Some(2)
        );
        // A torus keeps its dimensions (no default) when its radix is set.
        let torus = Topology::Torus { radix: 8, dimensions: 3 };
        assert_eq!(torus.with_count("radix", 4), Some(Topology::Torus { radix: 4, dimensions: 3 }));
        assert_eq!(torus.with_count("processors", 64), None);
    }

    #[test]
    fn the_command_lines_starting_networks() {
        let torus = Topology::Torus { radix: 8, dimensions: 2 };
        assert_eq!(
            Topology::example(TopologyKind::FatTree, &torus),
            Some(Topology::FatTree { processors: 16 })
        );
        assert_eq!(
            Topology::example(TopologyKind::KaryNTree, &torus),
            Some(Topology::KaryNTree { radix: 4, dimensions: 3, up_links_per_switch: None })
        );
        let tree = Topology::KaryNTree { radix: 2, dimensions: 5, up_links_per_switch: None };
        assert_eq!(Topology::example(TopologyKind::KaryNTree, &tree), Some(tree));
        assert_eq!(Topology::example(TopologyKind::Graph, &torus), None);
        for kind in TopologyKind::ALL {
            if let Some(example) = Topology::example(kind, &torus) {
                assert_eq!(example.family(), kind);
            }
        }
    }
}
