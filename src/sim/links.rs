//! The physical links of a network, named for the report's per-link load table: what
//! `links.parquet` lists beside the flit counts a run with `link_loads` measures.
//!
//! A run's `LinkLoads::flits` has one count per link in the order of [`links`]: the channels
//! that exist, in channel order, each named by its family's id `router * ports + port`
//! (`topology::Geometry::slot`), so the names are computed once per scenario from its
//! topology alone and never stored per row.

use crate::scenario::Topology;

use super::SimError;
use super::network::hop::NO_LINK;
use super::topology::Geometry;

/// One physical link (a unidirectional channel between two routers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Channel id, its family's (`router * ports + port`, `Geometry::slot`).
    pub channel: u32,
    /// Router the link leaves (node ids first, then the further routers of a fat-tree or a
    /// dragonfly).
    pub source: u32,
    /// Router the link enters.
    pub destination: u32,
    /// The source router in the topology's notation, e.g. `(3,0)`, `S(1,2)`, `R(0,1)`.
    pub source_name: String,
    /// The destination router in the same notation.
    pub destination_name: String,
    /// The output port's direction, e.g. `+x0`, `parent_1`, `global_0`.
    pub direction: String,
    /// The link's class: its dimension (`x0`), fat-tree levels (`up 0-1`) or dragonfly kind
    /// (`local`); see `Geometry::link_class`.
    pub class: String,
}

/// The links of `topology`, in channel order (the order of `LinkLoads::flits`).
pub fn links(topology: &Topology) -> Result<Vec<Link>, SimError> {
    let geometry = Geometry::new(topology)?;
    let mut links = Vec::with_capacity(geometry.links() as usize);
    for channel in 0..geometry.channel_slots() as u32 {
        let destination = geometry.downstream(channel);
        if destination == NO_LINK {
            continue;
        }
        let (source, port) = geometry.router_port(channel);
        links.push(Link {
            channel: geometry.slot(channel),
            source,
            destination,
            source_name: geometry.describe(source),
            destination_name: geometry.describe(destination),
            direction: geometry.describe_port(port),
            class: geometry.link_class(channel),
        });
    }
    Ok(links)
}

/// Whether the report draws `topology` as a grid heat map (a 2-D torus or mesh).
pub fn is_grid(topology: &Topology) -> bool {
    matches!(topology, Topology::Torus { dimensions: 2, .. } | Topology::Mesh { dimensions: 2, .. })
        && Geometry::check(topology).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_link_is_named_with_its_class() {
        let torus = links(&Topology::Torus { radix: 4, dimensions: 2 }).expect("torus");
        assert_eq!(torus.len(), 64);
        assert_eq!(
            torus[0],
            Link {
                channel: 0,
                source: 0,
                destination: 1,
                source_name: "(0,0)".into(),
                destination_name: "(1,0)".into(),
                direction: "+x0".into(),
                class: "x0".into(),
            }
        );
        assert_eq!(torus[3].class, "x1");
        let mesh = links(&Topology::Mesh { radix: 3, dimensions: 2 }).expect("mesh");
        assert_eq!(mesh.len(), 24, "no border links");
        let tree = links(&Topology::FatTree { processors: 16 }).expect("fat-tree");
        let classes: std::collections::BTreeSet<&str> =
            tree.iter().map(|l| l.class.as_str()).collect();
        assert_eq!(classes, ["down 1-0", "down 2-1", "up 0-1", "up 1-2"].into_iter().collect());
        let dragonfly = links(&Topology::Dragonfly {
            terminals_per_router: 1,
            routers_per_group: 2,
            global_links_per_router: 1,
            global_arrangement: crate::scenario::GlobalArrangement::Absolute,
        })
        .expect("dragonfly");
        let classes: std::collections::BTreeSet<&str> =
            dragonfly.iter().map(|l| l.class.as_str()).collect();
        assert_eq!(
            classes,
            ["global", "local", "router-terminal", "terminal-router"].into_iter().collect()
        );
        let kary =
            links(&Topology::KaryNTree { radix: 2, dimensions: 2, up_links_per_switch: None })
                .expect("k-ary n-tree");
        let classes: std::collections::BTreeSet<&str> =
            kary.iter().map(|l| l.class.as_str()).collect();
        assert_eq!(classes, ["down 1-0", "down 2-1", "up 0-1", "up 1-2"].into_iter().collect());
        let graph = Topology::Graph { graph: std::sync::Arc::new(crate::sim::mesh_graph(2)) };
        let classes: std::collections::BTreeSet<String> =
            links(&graph).expect("graph").into_iter().map(|l| l.class).collect();
        let expected = ["router-router", "router-terminal", "terminal-router"];
        assert_eq!(classes, expected.into_iter().map(String::from).collect());
        assert!(is_grid(&Topology::Torus { radix: 4, dimensions: 2 }));
        assert!(!is_grid(&Topology::Torus { radix: 4, dimensions: 3 }));
        assert!(!is_grid(&Topology::Hypercube { dimensions: 2 }));
    }

    /// Issue 24's check: the per-link counts of a run sum exactly to the flit hops of its
    /// measurement window, the per-VC counts to each link's, on every topology family; and
    /// asking for them changes no other result.
    #[test]
    fn link_flits_sum_to_the_window_flit_hops() {
        use crate::scenario::{Ejection, Routing, Scenario};
        use crate::sim::engine::{Engine, RunPlan};
        use crate::sim::{SimOptions, simulate, stats};
        let cases = [
            Scenario {
                routing: Routing::Duato,
                virtual_channels: 3,
                ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
            },
            Scenario {
                routing: Routing::DimensionOrder,
                ..Scenario::new(Topology::Mesh { radix: 3, dimensions: 2 })
            },
            Scenario {
                routing: Routing::UpDown,
                virtual_channels: 1,
                ejection: Ejection::Unlimited,
                ..Scenario::new(Topology::FatTree { processors: 16 })
            },
            Scenario {
                routing: Routing::Minimal,
                virtual_channels: 2,
                ..Scenario::new(Topology::Dragonfly {
                    terminals_per_router: 1,
                    routers_per_group: 2,
                    global_links_per_router: 1,
                    global_arrangement: crate::scenario::GlobalArrangement::Absolute,
                })
            },
            Scenario {
                routing: Routing::UpDownRandom,
                virtual_channels: 2,
                ..Scenario::new(Topology::KaryNTree {
                    radix: 2,
                    dimensions: 3,
                    up_links_per_switch: None,
                })
            },
            Scenario {
                routing: Routing::Minimal,
                virtual_channels: 2,
                ..Scenario::new(Topology::Graph {
                    graph: std::sync::Arc::new(crate::sim::mesh_graph(3)),
                })
            },
        ];
        for scenario in &cases {
            let mut engine =
                Engine::new(scenario, 0.02, 7, &RunPlan::fixed(500, 3_000)).expect("engine");
            engine.run(&RunPlan::fixed(500, 3_000), None);
            let loads = stats::link_loads(&engine, true).expect("a window");
            let total: u64 = loads.flits.iter().sum();
            assert!(total > 0, "{:?}", scenario.topology);
            assert_eq!(total, engine.window.flit_hops, "{:?}", scenario.topology);
            assert!(total < engine.flit_hops, "the window is part of the run");
            let v = scenario.virtual_channels as usize;
            assert_eq!(loads.vc_flits.len(), loads.flits.len() * v);
            for (link, vcs) in loads.flits.iter().zip(loads.vc_flits.chunks(v)) {
                assert_eq!(*link, vcs.iter().sum::<u64>());
            }
            assert_eq!(loads.flits.len(), links(&scenario.topology).expect("links").len());
            let options = SimOptions { warmup_cycles: 500, cycles: 3_000, ..SimOptions::default() };
            let plain = simulate(scenario, 0.02, &options, 11, None).expect("plain");
            let with = SimOptions { link_loads: true, ..options };
            let counted = simulate(scenario, 0.02, &with, 11, None).expect("with link loads");
            let loads = counted.link_loads.clone().expect("link loads");
            assert!(loads.vc_flits.is_empty(), "per VC only when asked");
            assert_eq!(crate::measurement::Measurement { link_loads: None, ..counted }, plain);
            let utilization = counted_utilization(&plain);
            let links = loads.flits.len() as f64;
            let mean =
                loads.flits.iter().sum::<u64>() as f64 / (links * loads.window_cycles as f64);
            assert!(
                (mean - utilization).abs() <= 1e-12 * utilization.max(1.0),
                "{mean} {utilization}"
            );
        }
    }

    fn counted_utilization(m: &crate::measurement::Measurement) -> f64 {
        m.intermediate("channel_utilization").expect("channel_utilization")
    }
}
