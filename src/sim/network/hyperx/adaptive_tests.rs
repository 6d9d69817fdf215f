//! Tests of the HyperX's trunking (`K` links per router pair) and of its adaptive non-minimal
//! routings, `ugal` and `dal`: exact zero-load latency for every pair, the channel
//! dependencies (UGAL's phases acyclic over every route and VC choice; DAL's escape channels
//! acyclic in Duato's extended sense, its routes bounded) and the throughput they recover
//! under the adversarial `neighbor` pattern (invariants under load and overload past
//! saturation: `tests.rs`, with the other routings).

use std::collections::{HashMap, HashSet};

use super::super::super::check;
use super::super::super::routing::Router;
use super::super::super::tests::{acyclic, lone_message_with, verdict_at};
use super::super::super::topology::Geometry;
use super::super::hop::Header;
use super::tests::{trunked as hyperx, zero_load_latency};
use super::{DECIDED, DEROUTING, MINIMAL};
use crate::measurement::Status;
use crate::scenario::{Routing, Scenario, Topology, Traffic};

fn scenario(topology: Topology, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario { routing, virtual_channels: v, message_length: m, ..Scenario::new(topology) }
}

fn router(s: &Scenario) -> Router {
    Router::new(s, &Geometry::check(&s.topology).unwrap()).unwrap()
}

#[test]
fn zero_load_latency_is_exact_with_trunking_and_the_adaptive_routings() {
    // An empty network: UGAL's occupancies are all 0, so it routes minimally whatever its
    // intermediate router; DAL never deroutes. Both take `2 + H` links, as do the minimal
    // routings over any of the K links.
    let cases = [
        scenario(hyperx(3, 2, 2, 2), Routing::DimensionOrder, 1, 6),
        scenario(hyperx(4, 1, 2, 3), Routing::Adaptive, 2, 4),
        Scenario { router_delay: 2, ..scenario(hyperx(2, 3, 1, 2), Routing::Duato, 3, 5) },
        scenario(hyperx(3, 2, 2, 1), Routing::Ugal, 2, 8),
        Scenario { router_delay: 1, ..scenario(hyperx(2, 3, 2, 2), Routing::Ugal, 4, 3) },
        scenario(hyperx(3, 2, 2, 1), Routing::Dal, 2, 8),
        Scenario { buffer_depth: 2, ..scenario(hyperx(4, 2, 1, 2), Routing::Dal, 3, 16) },
    ];
    for s in &cases {
        check(s).unwrap();
        let Topology::HyperX { radix, dimensions, .. } = s.topology else { panic!("a HyperX") };
        let terminals = s.topology.nodes() as u32;
        // UGAL draws its intermediate router: every one gives the minimal route.
        let vias: Vec<Option<u32>> = if s.routing == Routing::Ugal {
            (0..radix.pow(dimensions)).map(Some).collect()
        } else {
            vec![None]
        };
        for source in 0..terminals {
            for dest in (0..terminals).filter(|&d| d != source) {
                for &via in &vias {
                    assert_eq!(
                        lone_message_with(s, source, dest, via),
                        zero_load_latency(s, source, dest),
                        "{source}->{dest} via {via:?} {s:?}"
                    );
                }
            }
        }
    }
}

/// Every channel a UGAL route may hold and request next, over every pair, intermediate
/// router, choice (minimal or Valiant) and VC parity a hop may take, each channel split by
/// the parity of its VC: `(channel << 1 | parity)`.
fn ugal_dependencies(s: &Scenario) -> HashMap<u32, HashSet<u32>> {
    let g = Geometry::new(&s.topology).unwrap();
    let router = router(s);
    let Topology::HyperX { radix, dimensions, terminals_per_router: t, .. } = s.topology else {
        panic!("a HyperX")
    };
    let (routers, terminals) = (radix.pow(dimensions), radix.pow(dimensions) * t);
    let mut edges: HashMap<u32, HashSet<u32>> = HashMap::new();
    let mut out = Vec::new();
    for src in 0..terminals {
        for dest in (0..terminals).filter(|&d| d != src) {
            for via in 0..routers {
                // (router, routing state, held channel class) still to expand.
                let mut stack = vec![(src, 0u32, u32::MAX)];
                let mut seen = HashSet::new();
                while let Some((cur, level, held)) = stack.pop() {
                    if cur == dest || !seen.insert((cur, level, held)) {
                        continue;
                    }
                    // The source router decides: both choices.
                    let choices: Vec<u32> = if cur >= terminals && level & DECIDED == 0 {
                        vec![level | DECIDED | MINIMAL, level | DECIDED]
                    } else {
                        vec![level]
                    };
                    for level in choices {
                        let header = Header { source: src, dest, level, ties: via };
                        router.candidates(&g, cur, header, &mut out);
                        for c in out.clone() {
                            for parity in 0..2 {
                                let vcs = c.mask & 0x5555_5555_5555_5555 << parity;
                                if vcs == 0 {
                                    continue;
                                }
                                let vc = vcs.trailing_zeros();
                                let channel = g.channel(cur, c.port) << 1 | parity;
                                if held != u32::MAX {
                                    edges.entry(held).or_default().insert(channel);
                                }
                                let next = router.after_hop(&g, cur, c.port, vc, level);
                                stack.push((g.downstream(channel >> 1), next, channel));
                            }
                        }
                    }
                }
            }
        }
    }
    edges
}

#[test]
fn ugal_s_phases_keep_the_dependencies_acyclic() {
    // A minimal route may take any VC until it takes an odd one; a Valiant route the even
    // VCs to its intermediate router, the odd ones after it: even channels only ever wait
    // for even channels of higher dimensions or for odd channels, odd channels for odd
    // channels of higher dimensions.
    for (s, l, t, k) in [(3, 2, 1, 1), (2, 3, 1, 1), (3, 2, 1, 2), (4, 1, 2, 1)] {
        let sc = scenario(hyperx(s, l, t, k), Routing::Ugal, 2, 4);
        let edges = ugal_dependencies(&sc);
        assert!(acyclic(&edges), "S = {s}, L = {l}, K = {k}: UGAL's phases have a cycle");
    }
}

#[test]
fn dal_s_escape_channels_are_acyclic_in_duato_s_sense_and_its_routes_bounded() {
    // Duato's condition: the escape channels' extended dependency graph (an escape channel
    // held, then any adaptive hops, direct or deroutes, then the next escape channel
    // requested) is acyclic. And every route, whatever it chooses, reaches its destination
    // within 2 L router hops (each dimension derouted at most once): no livelock.
    for (s, l, t, k) in [(3, 2, 1, 1), (4, 2, 1, 1), (3, 3, 1, 1), (4, 2, 1, 2), (5, 1, 2, 1)] {
        let sc = scenario(hyperx(s, l, t, k), Routing::Dal, 2, 4);
        let g = Geometry::new(&sc.topology).unwrap();
        let router = router(&sc);
        let terminals = s.pow(l) * t;
        let mut escape: HashMap<u32, HashSet<u32>> = HashMap::new();
        let mut adaptive: HashMap<u32, HashSet<u32>> = HashMap::new();
        let mut out = Vec::new();
        let mut deroutes = 0;
        for src in 0..terminals {
            for dest in (0..terminals).filter(|&d| d != src) {
                // (router, routing state, last escape channel held, last channel held, hops).
                let mut stack = vec![(src, 0u32, u32::MAX, u32::MAX, 0u32)];
                let mut seen = HashSet::new();
                while let Some((cur, level, last_escape, held, hops)) = stack.pop() {
                    if cur == dest || !seen.insert((cur, level, last_escape, held)) {
                        continue;
                    }
                    assert!(hops <= 2 * l + 2, "{src}->{dest}: {hops} links and counting");
                    for level in [level & !DEROUTING, level | DEROUTING] {
                        let header = Header { source: src, dest, level, ties: u32::MAX };
                        router.candidates(&g, cur, header, &mut out);
                        for c in out.clone() {
                            let channel = g.channel(cur, c.port);
                            let next = g.downstream(channel);
                            if c.fallback != 0 {
                                // The escape VC (VC 0), dimension order.
                                if last_escape != u32::MAX {
                                    escape.entry(last_escape).or_default().insert(channel);
                                }
                                let after = router.after_hop(&g, cur, c.port, 0, level);
                                stack.push((next, after, channel, channel, hops + 1));
                            }
                            if c.mask != 0 {
                                if held != u32::MAX {
                                    adaptive.entry(held).or_default().insert(channel);
                                }
                                let after = router.after_hop(&g, cur, c.port, 1, level);
                                deroutes += u32::from(after & !level & ((1 << l) - 1) != 0);
                                stack.push((next, after, last_escape, channel, hops + 1));
                            }
                        }
                    }
                }
            }
        }
        if l == 1 {
            // One router hop per route: no escape channel waits for another.
            assert!(escape.is_empty(), "S = {s}: one dimension");
        } else {
            assert!(acyclic(&escape), "S = {s}, L = {l}, K = {k}: DAL's escape channels");
        }
        if s >= 3 && l >= 2 {
            assert!(deroutes > 0, "S = {s}, L = {l}: routes deroute");
            // The adaptive channels alone close cycles: the escape is needed.
            assert!(!acyclic(&adaptive), "S = {s}, L = {l}: adaptive channels");
        }
    }
}

#[test]
fn the_adaptive_routings_recover_neighbor_and_keep_uniform_traffic() {
    // The flattened butterfly S = 4, L = 2, T = 4, V = 4, 4-flit buffers, M = 8, interleaved
    // ejection (`runner simulate --saturation`, docs/hyperx.md): under neighbor every minimal
    // routing saturates at 1/T = 0.25 flits per terminal and cycle; UGAL reaches 0.33 and
    // DAL 0.35, near Valiant's 0.36. Under uniform traffic they keep 0.69 and 0.72 of
    // dimension order's 0.74, where Valiant has 0.34.
    let run = |routing, traffic, flits| {
        verdict_at(&scenario(hyperx(4, 2, 4, 1), routing, 4, 8), traffic, flits)
    };
    for routing in [Routing::Ugal, Routing::Dal] {
        assert_eq!(run(routing, Traffic::Neighbor, 0.30), Status::Ok, "{routing:?}");
        assert_eq!(run(routing, Traffic::Uniform, 0.62), Status::Ok, "{routing:?}");
    }
    assert_eq!(run(Routing::DimensionOrder, Traffic::Neighbor, 0.30), Status::Saturated);
    assert_eq!(run(Routing::Valiant, Traffic::Uniform, 0.62), Status::Saturated);
}

#[test]
fn trunking_multiplies_the_router_links() {
    // S = 4, L = 2, T = 8: with one link per pair the router links limit uniform traffic to
    // 0.5 flits per terminal and cycle (each router sends 3/4 of its 8 terminals' load over
    // each dimension's 3 links); two links per pair double that, and the terminals' links
    // limit it instead (0.42 against 0.77 measured with dimension order).
    let run = |k, flits| {
        verdict_at(
            &scenario(hyperx(4, 2, 8, k), Routing::DimensionOrder, 4, 8),
            Traffic::Uniform,
            flits,
        )
    };
    assert_eq!(run(1, 0.55), Status::Saturated);
    assert_eq!(run(2, 0.55), Status::Ok);
}
