//! Tests of the router's timing knobs: channel latency and the credit loop (`engine::timing`)
//! and the injection channel. The timed engine with one-cycle links is the default engine,
//! zero-load latency is exact for every pair with multi-cycle links and with an injection
//! channel, a VC behind a buffer shallower than its credit loop streams at depth / loop flits
//! per cycle, a node injects one flit per cycle over its channel, and flits are conserved
//! under load.

use super::engine::{Engine, RunPlan};
use super::network::dragonfly::tests::dragonfly;
use super::tests::{fingerprint, lone_message_with, run_checking_invariants};
use super::*;
use crate::scenario::{Ejection, Injection, Routing, Scenario, Switching, Topology};

fn torus(k: u32, n: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::Torus { radix: k, dimensions: n })
    }
}

/// A 4x4 mesh with one VC per channel (dimension order).
fn mesh_one_vc() -> Scenario {
    Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: 1,
        ..Scenario::new(Topology::Mesh { radix: 4, dimensions: 2 })
    }
}

/// With every link and credit one cycle, the timed engine (events on the wheel, credits and
/// flits in transit counted) gives the default engine's results bit for bit, whatever the
/// walk, the ejection, the input speedup and the routing.
#[test]
fn the_timed_engine_with_one_cycle_links_is_the_default_engine() {
    let cases = [
        torus(6, 2, Routing::DimensionOrder, 2, 8),
        torus(4, 3, Routing::Duato, 3, 5),
        Scenario { ejection: Ejection::Interleaved, ..torus(5, 2, Routing::Duato, 3, 4) },
        Scenario { input_speedup: Some(1), ..torus(4, 2, Routing::Adaptive, 4, 6) },
        Scenario { ejection: Ejection::Unlimited, ..torus(6, 2, Routing::Nbc, 4, 6) },
        Scenario { buffer_depth: 1, router_delay: 2, ..torus(4, 2, Routing::DimensionOrder, 2, 3) },
        dragonfly(2, 4, 2, Routing::Ugal, 3, 4),
        Scenario {
            broadcast_fraction: 0.05,
            ejection: Ejection::Unlimited,
            ..Scenario {
                routing: Routing::Duato,
                virtual_channels: 4,
                message_length: 8,
                ..Scenario::new(Topology::Hypercube { dimensions: 4 })
            }
        },
    ];
    for s in &cases {
        for bitmap in [false, true] {
            let run = |timed: bool| {
                let engine = Engine::new(s, 0.03, 11, &RunPlan::fixed(0, 3_000)).unwrap();
                let engine = engine.with_bitmap_walk(bitmap);
                fingerprint(if timed { engine.with_timing(s) } else { engine }, 3_000)
            };
            assert_eq!(run(true), run(false), "{s:?}, bitmap walk {bitmap}");
        }
    }
}

/// With multi-cycle links the bitmap walk still gives the results of the walk in `active`
/// order: arrivals and credits are counters (their order does not matter), releases are
/// scheduled in `active` order by both.
#[test]
fn the_bitmap_walk_agrees_with_long_links() {
    let cases = [
        Scenario {
            channel_latency: Some(3),
            credit_delay: Some(1),
            buffer_depth: 4,
            ..torus(6, 2, Routing::Duato, 3, 6)
        },
        Scenario {
            channel_latency: Some(2),
            global_channel_latency: Some(9),
            buffer_depth: 8,
            ..dragonfly(2, 4, 2, Routing::Ugal, 3, 4)
        },
    ];
    for s in &cases {
        let run = |bitmap: bool| {
            let engine = Engine::new(s, 0.03, 5, &RunPlan::fixed(0, 3_000)).unwrap();
            fingerprint(engine.with_bitmap_walk(bitmap), 3_000)
        };
        assert_eq!(run(true), run(false), "{s:?}");
    }
}

/// A lone message's latency with multi-cycle links, on a torus: every hop costs its link's
/// latency L plus `router_delay` before the header moves on, then the M flits leave one per
/// cycle, so `hops (L + router_delay) + M`, for every ordered pair (buffers at least as deep
/// as the credit loop, so that nothing starves).
#[test]
fn zero_load_latency_adds_every_link_s_latency_on_a_torus_and_a_mesh() {
    let mesh = Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: 1,
        message_length: 6,
        ..Scenario::new(Topology::Mesh { radix: 4, dimensions: 2 })
    };
    for (s, latency, delay) in [
        (torus(4, 2, Routing::DimensionOrder, 2, 5), 3, 0),
        (torus(5, 2, Routing::Duato, 3, 4), 2, 1),
        (mesh, 4, 2),
    ] {
        let s = Scenario {
            channel_latency: Some(latency),
            credit_delay: Some(delay),
            buffer_depth: 2 * latency + delay,
            router_delay: delay,
            ..s
        };
        let n = s.nodes() as u32;
        for source in 0..n {
            for dest in (0..n).filter(|&d| d != source) {
                let (measured, hops) = lone_message_with(&s, source, dest, None);
                let expected = hops * f64::from(latency + delay) + f64::from(s.message_length);
                assert_eq!(measured, expected, "{s:?} {source}->{dest}");
            }
        }
    }
}

/// On a dragonfly with local links of latency L and global links of latency G, the terminal
/// links take one cycle: a minimal route costs `2 (1 + d)` at its terminal links, `L + d` per
/// local hop and `G + d` for its global hop, plus M; for every ordered pair.
#[test]
fn zero_load_latency_adds_local_global_and_terminal_latencies_on_a_dragonfly() {
    let (p, a, h) = (2, 4, 2);
    for (local, global, delay) in [(3, 7, 0), (10, 100, 1)] {
        let s = Scenario {
            channel_latency: Some(local),
            global_channel_latency: Some(global),
            buffer_depth: 2 * global + delay,
            router_delay: delay,
            ..dragonfly(p, a, h, Routing::Minimal, 2, 4)
        };
        let n = s.nodes() as u32;
        for source in 0..n {
            for dest in (0..n).filter(|&d| d != source) {
                let (measured, hops) = lone_message_with(&s, source, dest, None);
                let globals = u32::from(source / (p * a) != dest / (p * a));
                let locals = hops as u32 - 2 - globals;
                // The destination terminal is no router: no `router_delay` there.
                let expected =
                    (1 + delay) + 1 + locals * (local + delay) + globals * (global + delay);
                assert_eq!(measured, f64::from(expected + s.message_length), "{source}->{dest}");
            }
        }
    }
}

/// A VC whose buffer is shallower than its credit loop `2 L + credit_delay` starves: one
/// message streaming over one link sends `depth` flits per loop. Between messages of
/// `q depth + 1` flits, the tail's delivery moves by exactly a loop per `depth` flits.
#[test]
fn a_buffer_shallower_than_the_credit_loop_streams_depth_flits_per_loop() {
    for (latency, delay, depth) in [(1, 1, 2), (2, 0, 2), (3, 2, 4), (4, 1, 3), (1, 0, 1)] {
        let s = Scenario {
            channel_latency: Some(latency),
            credit_delay: Some(delay),
            buffer_depth: depth,
            ..mesh_one_vc()
        };
        let tail = |q: u32| {
            let s = Scenario { message_length: q * depth + 1, ..s.clone() };
            lone_message_with(&s, 0, 1, None).0
        };
        let period = (2 * latency + delay).max(depth);
        assert_eq!(tail(12) - tail(2), f64::from(10 * period), "L {latency} d {delay} B {depth}");
    }
    // The default loop is 2 cycles: depth 1 halves the rate, depth 2 streams.
    let s = mesh_one_vc();
    for (depth, period) in [(1, 2.0), (2, 2.0)] {
        let s = Scenario { buffer_depth: depth, ..s.clone() };
        let tail = |q: u32| {
            let s = Scenario { message_length: q * depth + 1, ..s.clone() };
            lone_message_with(&s, 0, 1, None).0
        };
        assert_eq!(tail(12) - tail(2), 10.0 * period, "default loop, depth {depth}");
    }
}

/// Under load with long links and slow credits, flits are conserved, no buffer holds more
/// than its depth less its owed credits, and deadlock-free routings deliver.
#[test]
fn long_links_under_load_keep_the_invariants() {
    let cases = [
        (
            Scenario {
                channel_latency: Some(3),
                credit_delay: Some(2),
                buffer_depth: 4,
                ..torus(4, 2, Routing::Duato, 3, 6)
            },
            0.04,
        ),
        (
            Scenario {
                channel_latency: Some(2),
                buffer_depth: 8,
                ejection: Ejection::Interleaved,
                ..torus(4, 2, Routing::DimensionOrder, 2, 8)
            },
            0.05,
        ),
        (
            Scenario {
                channel_latency: Some(10),
                global_channel_latency: Some(100),
                buffer_depth: 16,
                ejection: Ejection::Interleaved,
                ..dragonfly(2, 4, 2, Routing::Ugal, 3, 4)
            },
            0.05,
        ),
    ];
    for (s, rate) in &cases {
        check(s).unwrap();
        let engine = run_checking_invariants(s, *rate, 3, 6_000);
        assert!(engine.window.delivered > 100, "{s:?}: {}", engine.window.delivered);
    }
}

/// The knobs' bounds and where they apply.
#[test]
fn timing_knobs_are_checked() {
    let s = torus(4, 2, Routing::DimensionOrder, 2, 4);
    assert!(check(&Scenario { channel_latency: Some(0), ..s.clone() }).is_err());
    let error = check(&Scenario { global_channel_latency: Some(5), ..s.clone() }).unwrap_err();
    assert!(error.0.contains("dragonfly only"), "{error}");
    let scouting = Scenario {
        switching: Switching::Scouting { scouting_distance: 1 },
        routing: Routing::Duato,
        virtual_channels: 3,
        ..s.clone()
    };
    let error = check(&Scenario { credit_delay: Some(1), ..scouting.clone() }).unwrap_err();
    assert!(error.0.contains("virtual cut-through switching only"), "{error}");
    // The defaults, written out, are accepted everywhere.
    assert!(
        check(&Scenario { channel_latency: Some(1), credit_delay: Some(0), ..scouting }).is_ok()
    );
    // Unset, they are left out of the serialized scenario (no task id moves).
    let json = serde_json::to_string(&s).unwrap();
    assert!(!json.contains("channel_latency") && !json.contains("credit"), "{json}");
}

/// The longest credit loop is reported where links or credits are slow.
#[test]
fn the_credit_loop_is_reported() {
    let options = SimOptions { warmup_cycles: 200, cycles: 2_000, ..SimOptions::default() };
    let s = Scenario {
        channel_latency: Some(10),
        global_channel_latency: Some(100),
        credit_delay: Some(1),
        buffer_depth: 16,
        ..dragonfly(1, 2, 1, Routing::Minimal, 2, 4)
    };
    let m = simulate(&s, 0.01, &options, 1, None).unwrap();
    let reported = m.intermediates.iter().find(|(k, _)| k == "credit_loop_cycles").map(|e| e.1);
    assert_eq!(reported, Some(201.0));
    let default = simulate(&torus(4, 2, Routing::DimensionOrder, 2, 4), 0.01, &options, 1, None);
    assert!(!default.unwrap().intermediates.iter().any(|(k, _)| k == "credit_loop_cycles"));
}

/// With an injection channel the header crosses it (one cycle) and waits the source router's
/// `router_delay` like at every router, and the tail reaches the node one cycle later over
/// the ejection channel: `hops (L + d) + (1 + d) + M + 1` for every ordered pair, BookSim's
/// zero-load latency (5 hops + M + 6 with `router_delay` 4).
#[test]
fn zero_load_latency_with_an_injection_channel_charges_the_source_router_and_both_channels() {
    let mesh = Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: 1,
        message_length: 3,
        ..Scenario::new(Topology::Mesh { radix: 4, dimensions: 2 })
    };
    let hypercube = Scenario {
        routing: Routing::Duato,
        virtual_channels: 2,
        message_length: 1,
        ..Scenario::new(Topology::Hypercube { dimensions: 4 })
    };
    for (s, latency, delay) in [
        (torus(4, 2, Routing::DimensionOrder, 2, 5), 1, 0),
        (torus(4, 2, Routing::DimensionOrder, 2, 1), 1, 4),
        (mesh, 2, 1),
        (hypercube, 1, 3),
    ] {
        let s = Scenario {
            injection: Injection::Channel,
            channel_latency: Some(latency),
            buffer_depth: 2 * latency,
            router_delay: delay,
            ejection: Ejection::Interleaved,
            ..s
        };
        check(&s).unwrap();
        let n = s.nodes() as u32;
        for source in 0..n {
            for dest in (0..n).filter(|&d| d != source) {
                let (measured, hops) = lone_message_with(&s, source, dest, None);
                let expected =
                    hops * f64::from(latency + delay) + f64::from(1 + delay + s.message_length + 1);
                assert_eq!(measured, expected, "{s:?} {source}->{dest}");
            }
        }
    }
}

/// Over an injection channel a node sends at most one flit per cycle, whatever its VCs and the
/// input speedup; without one, its V injection VCs send several at once under load.
#[test]
fn an_injection_channel_carries_one_flit_per_cycle() {
    let s = Scenario { ejection: Ejection::Interleaved, ..torus(4, 2, Routing::Duato, 4, 8) };
    let parallel = run_checking_invariants(&s, 0.08, 2, 4_000);
    assert!(parallel.max_injection_flits > 1, "{}", parallel.max_injection_flits);
    for speedup in [None, Some(2)] {
        let s = Scenario { injection: Injection::Channel, input_speedup: speedup, ..s.clone() };
        let channel = run_checking_invariants(&s, 0.08, 2, 4_000);
        assert_eq!(channel.max_injection_flits, 1, "{speedup:?}");
        assert!(channel.max_port_flits <= speedup.unwrap_or(4), "{speedup:?}");
        assert!(channel.window.delivered > 500, "{speedup:?}: {}", channel.window.delivered);
    }
}

/// Where an injection channel applies.
#[test]
fn an_injection_channel_is_refused_where_it_does_not_apply() {
    let channel = |s: Scenario| Scenario { injection: Injection::Channel, ..s };
    // The dragonfly's terminal links are its injection and ejection channels: the setting is
    // accepted and makes a terminal send one message at a time (the invariants hold it to
    // that), the next once the last one's tail has left it.
    let parallel = dragonfly(1, 2, 1, Routing::Minimal, 2, 4);
    check(&channel(parallel.clone())).unwrap();
    let run = |s: &Scenario| {
        fingerprint(Engine::new(s, 0.05, 3, &RunPlan::fixed(0, 2_000)).unwrap(), 2_000)
    };
    assert_ne!(run(&channel(parallel.clone())), run(&parallel));
    let serial = run_checking_invariants(&channel(parallel.clone()), 0.05, 3, 2_000);
    assert!(serial.window.delivered > 100, "{}", serial.window.delivered);
    let scouting = Scenario {
        switching: Switching::Scouting { scouting_distance: 1 },
        ..torus(4, 2, Routing::Duato, 3, 4)
    };
    assert!(check(&channel(scouting)).unwrap_err().0.contains("wormhole"));
    let broadcast = Scenario {
        broadcast_fraction: 0.1,
        ejection: Ejection::Unlimited,
        ..Scenario::new(Topology::Hypercube { dimensions: 3 })
    };
    assert!(check(&channel(broadcast)).unwrap_err().0.contains("broadcasts"));
    let json = serde_json::to_string(&torus(4, 2, Routing::Duato, 3, 4)).unwrap();
    assert!(!json.contains("injection\""), "{json}");
}

/// A graph file may give each link its latency; the others take `channel_latency`, terminal
/// links one cycle. On a tree (one route per pair) every pair's zero-load latency is
/// `2 (1 + d) + sum over its router links of (latency + d) + M`.
#[test]
fn a_graph_file_gives_each_link_its_latency() {
    // a - b - c - d - e, d a transit router; a-b 3 cycles, b-c `channel_latency` (4), c-d 5,
    // d-e 2. Terminals 0..4 sit at a, b, c, e.
    let text = "router a terminals 1\nrouter b terminals 1\nrouter c terminals 1\n\
                router d terminals 0\nrouter e terminals 1\nlink a b latency 3\nlink b c\n\
                link c d latency 5\nlink d e latency 2\n";
    let along = [0u32, 3, 7, 12, 14];
    let position = [0usize, 1, 2, 4];
    let graph = super::network::graph::tests::parse("tree.txt", text);
    for delay in [0, 2] {
        let s = Scenario {
            routing: Routing::UpDown,
            virtual_channels: 1,
            message_length: 3,
            channel_latency: Some(4),
            buffer_depth: 11,
            router_delay: delay,
            ..Scenario::new(Topology::Graph { graph: graph.clone() })
        };
        check(&s).unwrap();
        for source in 0..4u32 {
            for dest in (0..4u32).filter(|&d| d != source) {
                let (a, b) = (position[source as usize], position[dest as usize]);
                let links = a.abs_diff(b) as u32;
                let cycles = along[a].abs_diff(along[b]);
                let expected = (1 + delay) + 1 + cycles + links * delay + s.message_length;
                let (measured, hops) = lone_message_with(&s, source, dest, None);
                assert_eq!(hops, f64::from(links + 2), "{source}->{dest}");
                assert_eq!(measured, f64::from(expected), "d {delay}: {source}->{dest}");
            }
        }
    }
}
