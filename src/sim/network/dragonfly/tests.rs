//! Dragonfly tests: the wiring (absolute arrangement), exact zero-load latency for every pair
//! and intermediate group, acyclic channel dependencies of every routing's VC classes, runs
//! past saturation without deadlock, and the adversarial-traffic throughput of each routing.

use super::super::super::engine::{Engine, RunPlan};
use super::super::super::routing::Router;
use super::super::super::tests::{delivered_checking_invariants, lone_message_with};
use super::super::super::topology::Family;
use super::super::super::topology::Geometry;
use super::super::super::{Measure, SimOptions, check, simulate};
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Topology, Traffic, VcClasses};

/// A dragonfly (p, a, h) with `routing`, V and M.
pub(crate) fn dragonfly(p: u32, a: u32, h: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::Dragonfly {
            terminals_per_router: p,
            routers_per_group: a,
            global_links_per_router: h,
        })
    }
}

/// The sizes and neighbour table of a dragonfly.
fn built(p: u32, a: u32, h: u32) -> (Dragonfly, Geometry) {
    let s = dragonfly(p, a, h, Routing::Minimal, 2, 4);
    let geometry = Geometry::new(&s.topology).unwrap();
    (Dragonfly::new(p, a, h).unwrap(), geometry)
}

#[test]
fn wiring_pairs_every_link_and_joins_every_pair_of_groups_once() {
    for (p, a, h) in [(1, 2, 1), (2, 4, 2), (1, 3, 2), (3, 2, 3)] {
        let (df, g) = built(p, a, h);
        let ports = df.ports();
        let n = df.terminals;
        assert_eq!(g.nodes, p * a * (a * h + 1));
        assert_eq!(g.channel_slots() as u32, (n + df.routers()) * ports);
        let mut global_pairs = std::collections::BTreeSet::new();
        for router in 0..n + df.routers() {
            for port in 0..ports {
                let to = g.downstream(router * ports + port);
                if to == NO_LINK {
                    assert!(router < n && port > 0, "router {router} port {port} has no link");
                    continue;
                }
                // Every channel has its reverse.
                let back = (0..ports).filter(|&q| g.downstream(to * ports + q) == router).count();
                assert_eq!(back, 1, "{router} -> {to}");
                if router >= n && df.is_global(router, port) {
                    let (from_group, to_group) = ((router - n) / a, (to - n) / a);
                    assert_ne!(from_group, to_group);
                    assert!(global_pairs.insert((from_group, to_group)), "two global links");
                } else if router >= n && port >= p {
                    assert_eq!((router - n) / a, (to - n) / a, "local link leaves the group");
                }
            }
        }
        let groups = df.groups();
        assert_eq!(global_pairs.len() as u32, groups * (groups - 1), "one link per pair");
        // The absolute arrangement: link l of group G leads to group l (l < G) or l + 1.
        let router = n + a; // R(1, 0): its global port 0 is link 0 of group 1, to group 0.
        assert_eq!((g.downstream(router * ports + df.first_global()) - n) / a, 0);
    }
}

/// Router-to-router links from terminal `s` to terminal `d`, via group `via` (or minimal),
/// from the formulas of the module docs, written out independently of `Dragonfly`.
fn expected_router_hops(p: u32, a: u32, h: u32, s: u32, d: u32, via: u32) -> u32 {
    let link = |from: u32, to: u32| if to < from { to } else { to - 1 };
    let gateway = |from: u32, to: u32| link(from, to) / h;
    let (rs, rd) = (s / p, d / p);
    let (gs, gd, xs, xd) = (rs / a, rd / a, rs % a, rd % a);
    if via == NO_GROUP {
        return match (gs == gd, rs == rd) {
            (_, true) => 0,
            (true, false) => 1,
            _ => u32::from(xs != gateway(gs, gd)) + 1 + u32::from(gateway(gd, gs) != xd),
        };
    }
    u32::from(xs != gateway(gs, via))
        + 1
        + u32::from(gateway(via, gs) != gateway(via, gd))
        + 1
        + u32::from(gateway(gd, via) != xd)
}

#[test]
fn zero_load_latency_is_exact_for_every_pair_and_intermediate_group() {
    let cases = [
        (1, 2, 1, dragonfly(1, 2, 1, Routing::Minimal, 2, 4)),
        (1, 2, 1, dragonfly(1, 2, 1, Routing::Valiant, 3, 1)),
        (2, 4, 2, dragonfly(2, 4, 2, Routing::Minimal, 2, 8)),
        (
            2,
            4,
            2,
            Scenario {
                router_delay: 2,
                buffer_depth: 3,
                ejection: Ejection::Interleaved,
                ..dragonfly(2, 4, 2, Routing::Valiant, 3, 5)
            },
        ),
        (2, 4, 2, dragonfly(2, 4, 2, Routing::Ugal, 4, 3)),
        (1, 3, 2, dragonfly(1, 3, 2, Routing::Valiant, 3, 2)),
        (2, 4, 2, Scenario { router_delay: 1, ..dragonfly(2, 4, 2, Routing::UgalBooksim, 3, 4) }),
    ];
    for (p, a, h, s) in &cases {
        let n = s.nodes() as u32;
        let groups = a * h + 1;
        for source in 0..n {
            for dest in (0..n).filter(|&d| d != source) {
                let (gs, gd) = (source / (p * a), dest / (p * a));
                let vias: Vec<u32> = match s.routing {
                    Routing::Minimal => vec![NO_GROUP],
                    // At zero load UGAL takes the minimal route (empty queues, T >= 0).
                    Routing::Ugal => vec![(0..groups).find(|&g| g != gs && g != gd).unwrap()],
                    // BookSim's UGAL, via the first terminal of another group (or none).
                    Routing::UgalBooksim if gs == gd => vec![NO_GROUP],
                    Routing::UgalBooksim => vec![if gs == 0 { p * a } else { 0 }],
                    _ => (0..groups).filter(|&g| g != gs && g != gd).collect(),
                };
                for via in vias {
                    let minimal = matches!(s.routing, Routing::Ugal | Routing::UgalBooksim);
                    let route = if minimal { NO_GROUP } else { via };
                    let hops = 2 + expected_router_hops(*p, *a, *h, source, dest, route);
                    let (latency, measured_hops) = lone_message_with(s, source, dest, Some(via));
                    assert_eq!(measured_hops, f64::from(hops), "{source}->{dest} via {via}");
                    let zero = hops + s.message_length + s.router_delay * (hops - 1);
                    assert_eq!(latency, f64::from(zero), "{s:?} {source}->{dest} via {via}");
                }
            }
        }
    }
}

/// Every channel dependency the routing can create, as (VC held, VC requested) pairs of VC ids
/// `channel * V + v`, over every pair of terminals and every intermediate group (and for UGAL
/// both choices); with `classes` false, of physical channels (every VC of a channel as one).
fn dependencies(s: &Scenario, classes: bool) -> Vec<(u32, u32)> {
    let g = Geometry::new(&s.topology).unwrap();
    let r = Router::new(s, &g.size).unwrap();
    let Family::Dragonfly(df) = &g.family else { panic!("a dragonfly") };
    let v = s.virtual_channels;
    let id = |channel: u32, vc: u32| if classes { channel * v + vc } else { channel };
    let mut edges = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for source in 0..g.nodes {
        for dest in (0..g.nodes).filter(|&d| d != source) {
            let (gs, gd) = (df.group_of(source), df.group_of(dest));
            let mut starts = vec![(NO_GROUP, 0)];
            let booksim = s.routing == Routing::UgalBooksim;
            if booksim {
                // Via the first terminal of every router of the other groups (the detour goes
                // to the router), or none within a group.
                starts.clear();
                if gs == gd {
                    starts.push((NO_GROUP, DECIDED | MINIMAL));
                }
                let vias = (0..df.terminals).step_by(df.p as usize);
                for via in vias.filter(|&x| gs != gd && df.group_of(x) != gs) {
                    starts.push((via, DECIDED));
                    starts.push((via, DECIDED | MINIMAL));
                }
            } else if s.routing != Routing::Minimal {
                starts.clear();
                for via in (0..df.groups()).filter(|&x| x != gs && x != gd) {
                    if s.routing == Routing::Ugal {
                        starts.push((via, DECIDED));
                        starts.push((via, DECIDED | MINIMAL));
                    } else {
                        starts.push((via, 0));
                    }
                }
            }
            for (via, decided) in starts {
                // A deterministic route: follow it, holding one channel and its VC mask.
                let (mut cur, mut level, mut held) = (source, 0, None::<(u32, u64)>);
                let mut steps = 0;
                while cur != dest {
                    if cur >= df.terminals {
                        level |= decided;
                        if booksim {
                            // At the intermediate router the detour ends (`decide`).
                            let header = Header { source, dest, level, ties: via };
                            level = r.decide(&g, cur, header, |_| 0);
                        }
                    }
                    r.candidates(&g, cur, Header { source, dest, level, ties: via }, &mut out);
                    assert_eq!(out.len(), 1, "{source}->{dest} via {via} at {cur}");
                    let c = out[0];
                    assert_ne!(c.mask, 0, "{source}->{dest} via {via}: no VC at {cur}");
                    let channel = cur * g.ports + c.port;
                    if let Some((from, mask)) = held {
                        for a in (0..v).filter(|i| mask >> i & 1 == 1) {
                            for b in (0..v).filter(|i| c.mask >> i & 1 == 1) {
                                edges.insert((id(from, a), id(channel, b)));
                            }
                        }
                    }
                    level = r.after_hop(&g, cur, c.port, c.mask.trailing_zeros(), level);
                    held = Some((channel, c.mask));
                    cur = g.downstream(channel);
                    steps += 1;
                    assert!(steps <= 8, "{source}->{dest} via {via}: route too long");
                }
            }
        }
    }
    edges.into_iter().collect()
}

/// Whether a dependency graph given by its edges has a cycle.
pub(crate) fn cyclic(edges: &[(u32, u32)]) -> bool {
    let graph = petgraph::graph::DiGraph::<(), ()>::from_edges(edges);
    petgraph::algo::is_cyclic_directed(&graph)
}

/// Deadlock freedom by construction, checked: with the VC classes the channel-dependency
/// graph of every routing is acyclic; without them (every VC of a channel alike) Valiant's and
/// UGAL's are cyclic, so the check can fail. BookSim's UGAL (`ugal_booksim`) is cyclic even
/// with its classes: its detour keeps VC 0 from the source router to the intermediate router,
/// so a local channel that one message enters after its global hop (towards its intermediate
/// router) another leaves its source group by (towards its gateway), and global, local,
/// global, ... close a cycle across groups. Kept as BookSim has it (it is a cross-check);
/// runner reports a deadlock if one forms.
#[test]
fn vc_classes_leave_no_cycle_of_channel_dependencies() {
    for (p, a, h) in [(1, 2, 1), (2, 4, 2), (1, 3, 2)] {
        for (routing, v) in [
            (Routing::Minimal, 2),
            (Routing::Valiant, 3),
            (Routing::Ugal, 3),
            (Routing::UgalBooksim, 3),
        ] {
            for vc_classes in [VcClasses::Spread, VcClasses::OnePerClass] {
                let s = Scenario { vc_classes, ..dragonfly(p, a, h, routing, v + 1, 4) };
                let edges = dependencies(&s, true);
                assert!(!edges.is_empty());
                let booksim = routing == Routing::UgalBooksim;
                assert_eq!(cyclic(&edges), booksim, "{s:?}: a dependency cycle iff BookSim's UGAL");
                if routing != Routing::Minimal && a > 2 {
                    assert!(cyclic(&dependencies(&s, false)), "{routing:?} ({p}, {a}, {h})");
                }
            }
        }
    }
}

/// `vc_classes: one_per_class` (BookSim's dragonfly): along every route the VC is the number
/// of global hops started, so minimal routing's local hops before the global hop take VC 0
/// and the global hop and the rest VC 1; under load the VCs beyond the classes carry nothing
/// between routers (a terminal's links use every VC), and flits are conserved.
#[test]
fn one_vc_per_class_puts_a_route_on_its_global_hop_count() {
    let s = Scenario {
        vc_classes: VcClasses::OnePerClass,
        ejection: Ejection::Interleaved,
        ..dragonfly(2, 4, 2, Routing::Minimal, 3, 4)
    };
    check(&s).unwrap();
    let g = Geometry::new(&s.topology).unwrap();
    let r = Router::new(&s, &g.size).unwrap();
    let Family::Dragonfly(df) = &g.family else { panic!("a dragonfly") };
    let mut out = Vec::new();
    for (source, dest) in [(0, 71), (0, 3), (5, 40)] {
        let (mut cur, mut level) = (source, 0);
        while cur != dest {
            r.candidates(&g, cur, Header { source, dest, level, ties: NO_GROUP }, &mut out);
            let c = out[0];
            let expected = if cur < df.terminals || c.port < df.p {
                0b111
            } else {
                let global = u32::from(df.is_global(cur, c.port));
                1 << ((level & GLOBALS) + global)
            };
            assert_eq!(c.mask, expected, "{source}->{dest} at {cur} port {}", c.port);
            level = r.after_hop(&g, cur, c.port, c.mask.trailing_zeros(), level);
            cur = g.downstream(cur * g.ports + c.port);
        }
    }
    let mut engine = Engine::new(&s, 0.1, 3, &RunPlan::fixed(0, 4_000)).unwrap();
    engine.open_window();
    for cycle in 1..=4_000 {
        engine.step();
        if cycle % 97 == 0 {
            engine.check_invariants();
        }
    }
    let idle: u64 = (0..g.channel_slots() as u32)
        .filter(|&c| {
            let router = c / g.ports;
            router >= df.terminals && c % g.ports >= df.p && g.downstream(c) != NO_LINK
        })
        .map(|c| engine.window.vc_flits[(c * 3 + 2) as usize])
        .sum();
    assert_eq!(idle, 0, "VC 2 carried flits between routers");
    assert!(engine.window.delivered > 1_000);
    let spread = Scenario { vc_classes: VcClasses::Spread, ..s.clone() };
    let torus = Scenario {
        vc_classes: VcClasses::OnePerClass,
        ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
    };
    assert!(check(&spread).is_ok());
    assert!(check(&torus).unwrap_err().0.contains("vc_classes"));
}

#[test]
fn too_few_virtual_channels_and_foreign_routings_are_refused() {
    let refused = [
        (dragonfly(2, 4, 2, Routing::Minimal, 1, 4), "virtual_channels >= 2"),
        (dragonfly(2, 4, 2, Routing::Valiant, 2, 4), "virtual_channels >= 3"),
        (dragonfly(2, 4, 2, Routing::Ugal, 2, 4), "virtual_channels >= 3"),
        (dragonfly(2, 4, 2, Routing::Duato, 4, 4), "minimal, valiant, ugal or ugal_booksim"),
        (dragonfly(2, 4, 2, Routing::UpDown, 4, 4), "minimal, valiant, ugal or ugal_booksim"),
        (dragonfly(1, 1, 1, Routing::Valiant, 3, 4), "g = a h + 1 >= 3"),
        (dragonfly(2, 4, 2, Routing::Minimal, 2, 0), "message_length"),
        (
            Scenario { traffic: Traffic::Transpose, ..dragonfly(2, 4, 2, Routing::Minimal, 2, 4) },
            "coordinates",
        ),
        (
            Scenario {
                switching: crate::scenario::Switching::Circuit,
                ..dragonfly(2, 4, 2, Routing::Minimal, 2, 4)
            },
            "wormhole",
        ),
        (
            Scenario { escape_channels: Some(1), ..dragonfly(2, 4, 2, Routing::Minimal, 2, 4) },
            "escape",
        ),
        (
            Scenario {
                routing: Routing::Ugal,
                virtual_channels: 3,
                ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
            },
            "dragonfly routing",
        ),
        (
            Scenario {
                traffic: Traffic::GroupShift,
                virtual_channels: 2,
                ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
            },
            "needs topology dragonfly",
        ),
        (dragonfly(0, 4, 2, Routing::Minimal, 2, 4), "p >= 1"),
    ];
    for (s, words) in &refused {
        let error = check(s).expect_err("refused").0;
        assert!(error.contains(words), "{s:?}: {error}");
    }
    assert!(check(&dragonfly(1, 1, 1, Routing::Minimal, 2, 4)).is_ok());
    let bits =
        Scenario { traffic: Traffic::BitComplement, ..dragonfly(1, 2, 1, Routing::Ugal, 3, 4) };
    assert!(check(&bits).is_err(), "6 terminals: not a power of two");
}

#[test]
fn group_shift_sends_to_the_next_group_only() {
    let s = Scenario { traffic: Traffic::GroupShift, ..dragonfly(2, 4, 2, Routing::Minimal, 2, 4) };
    let mut engine = Engine::new(&s, 0.05, 3, &RunPlan::fixed(0, 1)).unwrap();
    let pattern = super::super::super::traffic::Pattern::new(&s.traffic, &engine.geometry);
    assert_eq!(pattern.unwrap(), super::super::super::traffic::Pattern::GroupShift { group: 8 });
    engine.open_window();
    for _ in 0..2_000 {
        engine.step();
    }
    assert!(engine.generated_total > 5_000);
    let options = SimOptions { warmup_cycles: 500, cycles: 3_000, ..SimOptions::default() };
    let m = simulate(&s, 0.002, &options, 2, None).unwrap();
    assert_eq!(m.status, Status::Ok);
}

/// Past saturation, in throughput mode, on uniform and adversarial traffic: the deadlock
/// watchdog never fires and the engine's invariants hold.
#[test]
fn overload_never_deadlocks() {
    let options = SimOptions {
        warmup_cycles: 1_000,
        cycles: 6_000,
        deadlock_cycles: 2_000,
        measure: Measure::Throughput { source_queue_capacity: 8 },
        ..SimOptions::default()
    };
    for (routing, v) in [(Routing::Minimal, 2), (Routing::Valiant, 3), (Routing::Ugal, 3)] {
        for traffic in [Traffic::Uniform, Traffic::GroupShift] {
            let s = Scenario {
                traffic: traffic.clone(),
                buffer_depth: 2,
                ..dragonfly(1, 2, 1, routing, v, 8)
            };
            let m = simulate(&s, 0.5, &options, 7, None).unwrap();
            assert_eq!(m.status, Status::Saturated, "{routing:?} {traffic:?}: {:?}", m.detail);
            let s = Scenario { traffic, ..dragonfly(2, 4, 2, routing, v, 4) };
            let delivered = delivered_checking_invariants(&s, 0.4, 3_000, 101);
            assert!(delivered > 1_000, "{routing:?}");
        }
    }
}

/// Kim et al.'s Fig. 9 shape on the 72-terminal balanced dragonfly: under `group_shift` the 8
/// terminals of a group share one global link with minimal routing (1/8 flit per cycle each),
/// while Valiant and UGAL spread the load over every global link (about half a flit per cycle
/// each: two global hops per message over h = p links per router).
#[test]
fn adversarial_traffic_collapses_minimal_routing_only() {
    let m = 4;
    let options = SimOptions {
        warmup_cycles: 2_000,
        cycles: 6_000,
        measure: Measure::Throughput { source_queue_capacity: 8 },
        ..SimOptions::default()
    };
    let accepted = |routing, v| {
        let s = Scenario { traffic: Traffic::GroupShift, ..dragonfly(2, 4, 2, routing, v, m) };
        let result = simulate(&s, 0.6 / f64::from(m), &options, 3, None).unwrap();
        result.throughput.unwrap() * f64::from(m)
    };
    let minimal = accepted(Routing::Minimal, 4);
    assert!((minimal - 0.125).abs() < 0.01, "minimal accepts {minimal} flits/terminal/cycle");
    for routing in [Routing::Valiant, Routing::Ugal] {
        let flits = accepted(routing, 4);
        assert!(flits > 0.3, "{routing:?} accepts {flits} flits/terminal/cycle");
    }
}

/// BookSim's UGAL (`ugal_booksim`, `ugal_dragonflynew`): at the source router the route is
/// minimal iff `q_min <= 2 q_nonmin + 30`; a detour takes VC 0 up to its intermediate router,
/// then VC 1 up to its global hop and VC 2 from it on; a route within one group takes VC 2;
/// terminal links take any VC.
#[test]
fn ugal_booksim_follows_booksim_s_threshold_and_phases() {
    let s = dragonfly(2, 4, 2, Routing::UgalBooksim, 3, 4);
    check(&s).unwrap();
    let g = Geometry::new(&s.topology).unwrap();
    let r = Router::new(&s, &g.size).unwrap();
    let Family::Dragonfly(df) = &g.family else { panic!("a dragonfly") };
    let (source, dest, via) = (0, 71, 42);
    let first = df.terminals + source / df.p;
    let minimal = df.step(first, df.group_of(dest), dest);
    let detour = Routes::towards_intermediate(df, first, via);
    assert_ne!(minimal, detour);
    let header = Header { source, dest, level: 0, ties: via };
    for (q_min, q_nonmin, takes_minimal) in
        [(0, 0, true), (30, 0, true), (31, 0, false), (50, 10, true), (51, 10, false)]
    {
        let occupancy = |port: u32| match port {
            p if p == minimal => q_min,
            p if p == detour => q_nonmin,
            _ => 0,
        };
        let level = r.decide(&g, first, header, occupancy);
        assert_eq!(level & MINIMAL != 0, takes_minimal, "q_min {q_min}, q_nonmin {q_nonmin}");
        assert_ne!(level & DECIDED, 0);
    }
    // The VCs along a route, decided as `decided`, with no occupancy.
    let route = |dest: u32, via: u32, decided: u32| {
        let mut out = Vec::new();
        let (mut cur, mut level, mut masks) = (source, 0, Vec::new());
        while cur != dest {
            if cur >= df.terminals {
                level |= decided;
                level = r.decide(&g, cur, Header { source, dest, level, ties: via }, |_| 0);
            }
            r.candidates(&g, cur, Header { source, dest, level, ties: via }, &mut out);
            assert_eq!(out.len(), 1);
            masks.push(out[0].mask);
            level = r.after_hop(&g, cur, out[0].port, out[0].mask.trailing_zeros(), level);
            cur = g.downstream(cur * g.ports + out[0].port);
        }
        masks
    };
    // Terminal 0 at router 0 of group 0; terminal 42 at router 21 (group 5, local index 1),
    // terminal 71 at router 35 (group 8, local index 3).
    let masks = route(dest, via, DECIDED);
    assert_eq!(masks.first(), Some(&0b111));
    assert_eq!(masks.last(), Some(&0b111));
    let inner = &masks[1..masks.len() - 1];
    // VC 0 to the intermediate router, then VC 1, then VC 2 from the second global hop.
    let phases: Vec<u32> = inner.iter().map(|m| m.trailing_zeros()).collect();
    assert!(phases.is_sorted(), "{phases:?}");
    assert_eq!(phases.first(), Some(&0), "{phases:?}");
    assert_eq!(phases.last(), Some(&2), "{phases:?}");
    assert!(inner.iter().all(|m| m.count_ones() == 1), "{inner:?}");
    // Minimal: VC 1 before the global hop, VC 2 from it on; within the group: VC 2.
    let phases: Vec<u32> =
        route(dest, via, DECIDED | MINIMAL).iter().map(|m| m.trailing_zeros()).collect();
    assert_eq!(phases, [0, 1, 2, 2, 0], "{phases:?}");
    let phases: Vec<u32> = route(5, NO_GROUP, 0).iter().map(|m| m.trailing_zeros()).collect();
    assert_eq!(phases, [0, 2, 0], "{phases:?}");
}
