//! Graph tests: the wiring, the route tables against the module docs' definitions, exact
//! zero-load latency for every pair on irregular graphs, a mesh and a hypercube read from files
//! against the built-in ones, acyclic channel dependencies of up*/down* and of the escape
//! channels, and runs past saturation without deadlock.

use std::sync::Arc;

use super::super::super::routing::Router;
use super::super::super::tests::{delivered_checking_invariants, lone_message_with};
use super::super::super::topology::Family;
use super::super::super::topology::Geometry;
use super::super::super::{Measure, SimOptions, check, simulate};
use super::super::dragonfly::tests::cyclic;
use super::*;
use crate::measurement::Status;
use crate::scenario::{Routing, Scenario, Topology, Traffic, graph};

/// Parses `text` as a graph file named `name`.
pub(crate) fn parse(name: &str, text: &str) -> Arc<Graph> {
    let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
    Arc::new(graph::parse(name, text, hash).expect("a valid graph"))
}

/// A scenario on `text`'s graph.
pub(super) fn on(text: &str, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::Graph { graph: parse("test.txt", text) })
    }
}

/// Irregular graphs: a kite with a tail (a transit router, uneven terminals), a ring of five
/// with a chord and an unequal root, and a small "campus" with two cycles and a named root.
pub(super) const IRREGULAR: [&str; 3] = [
    "router a terminals 2\nrouter b terminals 1\nrouter c terminals 1\nrouter d terminals 0\n\
     router e terminals 3\nlink a b\nlink a c\nlink b c\nlink b d\nlink c d\nlink d e\n",
    "router r0 terminals 1\nrouter r1 terminals 1\nrouter r2 terminals 2\nrouter r3 terminals 1\n\
     router r4 terminals 1\nlink r0 r1\nlink r1 r2\nlink r2 r3\nlink r3 r4\nlink r4 r0\n\
     link r1 r3\n",
    "root core2\nrouter edge1 terminals 2\nrouter edge2 terminals 2\nrouter edge3 terminals 1\n\
     router core1 terminals 0\nrouter core2 terminals 0\nrouter edge4 terminals 2\n\
     link edge1 core1\nlink edge2 core1\nlink core1 core2\nlink edge3 core2\nlink edge4 core2\n\
     link edge1 edge2\nlink edge3 edge4\nlink edge2 edge3\n",
];

/// The binary n-cube as a graph file, router `h<i>` with one terminal (terminal i = node i).
fn hypercube_file(n: u32) -> String {
    let mut text = String::new();
    for i in 0..1u32 << n {
        text.push_str(&format!("router h{i} terminals 1\n"));
    }
    for i in 0..1u32 << n {
        for d in 0..n {
            let j = i ^ (1 << d);
            if i < j {
                text.push_str(&format!("link h{i} h{j}\n"));
            }
        }
    }
    text
}

fn network(text: &str) -> GraphNetwork {
    GraphNetwork::new(&parse("test.txt", text)).unwrap()
}

#[test]
fn wiring_pairs_every_link_and_attaches_every_terminal() {
    for text in IRREGULAR {
        let g = parse("t.txt", text);
        let net = network(text);
        let (n, p) = (net.terminals, net.ports);
        assert_eq!(u64::from(n), g.terminals());
        assert_eq!(p, g.radix());
        for id in 0..n + net.routers {
            for port in 0..p {
                let to = net.neighbor[(id * p + port) as usize];
                if to == NO_LINK {
                    continue;
                }
                let back = (0..p).filter(|&q| net.neighbor[(to * p + q) as usize] == id).count();
                assert_eq!(back, 1, "{id} -> {to}");
                if id < n {
                    assert_eq!((port, to), (0, n + net.router_of(id)), "terminal {id}");
                }
                if net.is_link(id, port) {
                    // Exactly one direction of every link is up.
                    let q = (0..p).find(|&q| net.neighbor[(to * p + q) as usize] == id).unwrap();
                    assert_ne!(net.is_down(id, port), net.is_down(to, q), "{id} <-> {to}");
                }
            }
        }
        let links = (n..n + net.routers)
            .flat_map(|id| (0..p).map(move |port| (id, port)))
            .filter(|&(id, port)| net.is_link(id, port))
            .count();
        assert_eq!(links, 2 * g.links.len());
    }
}

/// `ud(u, t)` from its definition: a breadth-first search over (router, gone down) states.
fn legal_distance(net: &GraphNetwork, u: u32, t: u32) -> u32 {
    let n = net.terminals;
    let mut seen = std::collections::HashSet::new();
    let mut queue = VecDeque::from([(u, false, 0)]);
    while let Some((r, down, d)) = queue.pop_front() {
        if r == t {
            return d;
        }
        if !seen.insert((r, down)) {
            continue;
        }
        net.links(n + r, |port, v| {
            let is_down = net.is_down(n + r, port);
            if is_down || !down {
                queue.push_back((v, down || is_down, d + 1));
            }
        });
    }
    u32::MAX
}

#[test]
fn route_tables_follow_their_definitions() {
    let mut longer = 0;
    for text in IRREGULAR.iter().copied().chain([mesh_text(4).as_str()]) {
        let net = network(text);
        for u in 0..net.routers {
            for t in 0..net.routers {
                let legal = legal_distance(&net, u, t);
                assert_eq!(net.up_down_distance(u, t), legal, "{u} -> {t}");
                assert!(legal >= net.distance(u, t));
                longer += usize::from(legal > net.distance(u, t));
            }
        }
    }
    assert!(longer > 0, "up*/down* should lengthen some routes on these graphs");
}

/// Zero-load latency of every pair, against `hops + M + router_delay (hops - 1)` with
/// `hops = 2 + H`.
fn assert_zero_load_exact(s: &Scenario) {
    let net = GraphNetwork::new(s.topology.graph().unwrap()).unwrap();
    let n = net.terminals;
    for source in 0..n {
        for dest in (0..n).filter(|&d| d != source) {
            let (rs, rd) = (net.router_of(source), net.router_of(dest));
            let h = match s.routing {
                Routing::UpDown => net.up_down_distance(rs, rd),
                _ => net.distance(rs, rd),
            };
            let hops = 2 + h;
            let (latency, measured) = lone_message_with(s, source, dest, None);
            assert_eq!(measured, f64::from(hops), "{source}->{dest}");
            let zero = hops + s.message_length + s.router_delay * (hops - 1);
            assert_eq!(latency, f64::from(zero), "{:?} {source}->{dest}", s.routing);
        }
    }
}

#[test]
fn zero_load_latency_is_exact_for_every_pair() {
    for text in IRREGULAR {
        assert_zero_load_exact(&on(text, Routing::UpDown, 1, 4));
        assert_zero_load_exact(&on(text, Routing::Minimal, 2, 6));
        assert_zero_load_exact(&Scenario {
            router_delay: 2,
            buffer_depth: 3,
            ..on(text, Routing::UpDown, 2, 3)
        });
        assert_zero_load_exact(&Scenario { router_delay: 1, ..on(text, Routing::Minimal, 3, 1) });
    }
}

/// A 4x4 mesh and a 3-cube read from files against the built-in topologies, pair by pair: with
/// `minimal` routing every route is minimal, as on the built-in networks, and the latency is
/// the built-in one plus the two terminal links (`2 (1 + router_delay)`), which the built-in
/// networks do not have (their nodes inject and eject at the router). With `up_down` the same
/// holds for the pairs whose legal route is minimal; on the mesh some are longer.
#[test]
fn a_mesh_and_a_hypercube_from_files_match_the_built_in_ones() {
    let cases = [
        (mesh_text(4), Topology::Mesh { radix: 4, dimensions: 2 }),
        (hypercube_file(3), Topology::Hypercube { dimensions: 3 }),
    ];
    for (text, built_in) in &cases {
        for router_delay in [0, 1] {
            let reference =
                Scenario { router_delay, message_length: 5, ..Scenario::new(built_in.clone()) };
            let minimal = Scenario { router_delay, ..on(text, Routing::Minimal, 2, 5) };
            let up_down = Scenario { router_delay, ..on(text, Routing::UpDown, 1, 5) };
            let net = GraphNetwork::new(minimal.topology.graph().unwrap()).unwrap();
            let (mut compared, mut coincide) = (0, 0);
            for source in 0..net.terminals {
                for dest in (0..net.terminals).filter(|&d| d != source) {
                    let (expected, _) = lone_message_with(&reference, source, dest, None);
                    // The two terminal links, `router_delay` at the source's router only.
                    let offset = f64::from(2 + router_delay);
                    let (latency, _) = lone_message_with(&minimal, source, dest, None);
                    assert_eq!(latency, expected + offset, "{built_in:?} {source}->{dest}");
                    compared += 1;
                    let (rs, rd) = (net.router_of(source), net.router_of(dest));
                    if net.up_down_distance(rs, rd) == net.distance(rs, rd) {
                        let (latency, _) = lone_message_with(&up_down, source, dest, None);
                        assert_eq!(latency, expected + offset, "up_down {source}->{dest}");
                        coincide += 1;
                    }
                }
            }
            assert_eq!(compared, 56 + 184 * u32::from(net.terminals == 16));
            assert!(coincide > 0);
        }
    }
}

/// Every channel dependency `routes` can create, as (VC held, VC requested) pairs of VC ids
/// `channel * V + v`: over every pair of terminals, following every offered port and VC; for
/// `escape_only`, the routes of messages on the escape channels, entered at any router.
pub(super) fn dependencies(s: &Scenario, escape_only: bool) -> Vec<(u32, u32)> {
    let g = Geometry::new(&s.topology).unwrap();
    let r = Router::new(s, &g.size).unwrap();
    let Family::Graph(net) = &g.family else { panic!("a graph") };
    let v = s.virtual_channels;
    let mut edges = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    let starts: Vec<(u32, u32)> = if escape_only {
        (net.terminals..net.terminals + net.routers).map(|id| (id, ESCAPE)).collect()
    } else {
        (0..net.terminals).map(|t| (t, 0)).collect()
    };
    for &(start, level) in &starts {
        for dest in (0..net.terminals).filter(|&d| d != start) {
            // (current engine router, routing state, VC held on arrival)
            let mut stack = vec![(start, level, None::<u32>)];
            let mut seen = std::collections::HashSet::new();
            while let Some((cur, level, held)) = stack.pop() {
                if cur == dest || !seen.insert((cur, level, held)) {
                    continue;
                }
                let header = Header { source: start, dest, level, ties: 0 };
                r.candidates(&g, cur, header, &mut out);
                assert!(!out.is_empty(), "{start}->{dest} stuck at {cur}");
                for c in out.clone() {
                    let mask = c.mask | c.fallback;
                    let channel = g.channel(cur, c.port);
                    for vc in (0..v).filter(|i| mask >> i & 1 == 1) {
                        let id = channel * v + vc;
                        if let Some(from) = held {
                            edges.insert((from, id));
                        }
                        let next = r.after_hop(&g, cur, c.port, vc, level);
                        stack.push((g.downstream(channel), next, Some(id)));
                    }
                }
            }
        }
    }
    edges.into_iter().collect()
}

/// Deadlock freedom by construction, checked: up*/down*'s channel-dependency graph and that of
/// `minimal`'s escape channels are acyclic on irregular graphs and the mesh, while the
/// adaptive channels' dependencies alone (minimal routes, VC 1 of a 2-VC network) close cycles,
/// so the check can fail.
#[test]
fn up_down_and_the_escape_channels_have_acyclic_dependencies() {
    for text in IRREGULAR.iter().copied().chain([mesh_text(3).as_str()]) {
        let up_down = dependencies(&on(text, Routing::UpDown, 1, 4), false);
        assert!(!up_down.is_empty());
        assert!(!cyclic(&up_down), "up_down has a dependency cycle");
        let escape = dependencies(&on(text, Routing::Minimal, 2, 4), true);
        assert!(!escape.is_empty());
        // Every channel held on the way is an escape VC (VC 0); only the ejection link, which
        // ends the route, offers every VC.
        assert!(escape.iter().all(|(held, _)| held % 2 == 0), "escape leaves VC 0");
        assert!(!cyclic(&escape), "the escape channels have a dependency cycle");
    }
    // The minimal routes' own dependencies (adaptive VCs) on a ring with a chord and on the
    // mesh are cyclic: only the escape channels make `minimal` deadlock-free.
    for text in [IRREGULAR[1], mesh_text(3).as_str()] {
        let all = dependencies(&on(text, Routing::Minimal, 2, 4), false);
        let adaptive: Vec<(u32, u32)> =
            all.into_iter().filter(|(a, b)| a % 2 == 1 && b % 2 == 1).collect();
        assert!(cyclic(&adaptive));
    }
}

#[test]
fn foreign_routings_and_too_few_virtual_channels_are_refused() {
    let text = IRREGULAR[0];
    let refused = [
        (on(text, Routing::Minimal, 1, 4), "virtual_channels >= 2"),
        (on(text, Routing::DimensionOrder, 2, 4), "up_down"),
        (on(text, Routing::Duato, 3, 4), "up_down"),
        (on(text, Routing::Ugal, 3, 4), "up_down"),
        (
            Scenario {
                switching: crate::scenario::Switching::Circuit,
                ..on(text, Routing::UpDown, 2, 4)
            },
            "wormhole",
        ),
        (
            Scenario { traffic: Traffic::Transpose, ..on(text, Routing::UpDown, 1, 4) },
            "coordinates",
        ),
        (Scenario { fault_rate: 0.1, ..on(text, Routing::UpDown, 1, 4) }, "fault"),
        (
            Scenario {
                routing: Routing::Minimal,
                virtual_channels: 2,
                ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
            },
            "or a graph's",
        ),
    ];
    for (s, words) in &refused {
        let error = check(s).expect_err("refused").0;
        assert!(error.contains(words), "{:?}: {error}", s.routing);
    }
    assert!(check(&on(text, Routing::UpDown, 1, 4)).is_ok());
    assert!(check(&on(text, Routing::Minimal, 2, 4)).is_ok());
    let hotspot = Traffic::Hotspot { fraction: 0.3, nodes: vec![0, 6] };
    assert!(check(&Scenario { traffic: hotspot, ..on(text, Routing::Minimal, 2, 4) }).is_ok());
}

/// At and past saturation, in throughput mode, the deadlock watchdog never fires and the
/// engine's invariants hold, with both routings on irregular graphs.
#[test]
fn overload_never_deadlocks() {
    let options = SimOptions {
        warmup_cycles: 500,
        cycles: 4_000,
        deadlock_cycles: 1_000,
        measure: Measure::Throughput { source_queue_capacity: 8 },
        ..SimOptions::default()
    };
    for text in IRREGULAR {
        for (routing, v) in [(Routing::UpDown, 1), (Routing::UpDown, 2), (Routing::Minimal, 2)] {
            let s = on(text, routing, v, 8);
            let m = simulate(&s, 0.5, &options, 7, None).unwrap();
            assert_eq!(m.status, Status::Saturated, "{routing:?}: {:?}", m.detail);
            let delivered = delivered_checking_invariants(&s, 0.3, 2_000, 97);
            assert!(delivered > 200, "{routing:?}");
        }
    }
}

#[test]
fn terminals_and_routers_are_described_by_their_names() {
    let g = Geometry::new(&on(IRREGULAR[2], Routing::UpDown, 1, 4).topology).unwrap();
    assert_eq!(g.describe(0), "T(0)@edge1");
    assert_eq!(g.describe(g.nodes), "edge1");
    assert_eq!(g.describe(g.nodes + 4), "core2");
}
