//! Tests of request-reply traffic (`reply_length`, `outstanding_requests`,
//! `engine::replies`): a lone request's round trip is exactly its latency plus its reply's, for
//! every pair; under load requests and replies hold only their own class's VCs and every round
//! trip completes; the closed loop never lets a node have more requests outstanding than its
//! bound; past saturation no configuration deadlocks; the knobs are refused where they do not
//! apply.

use super::engine::{Engine, RunPlan};
use super::network::dragonfly::tests::dragonfly;
use super::tests::{booksim_router as booksim, lone_run, overload_options, run_and_drain};
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Switching, Topology};

fn network(topology: Topology, routing: Routing, v: u32, m: u32, reply: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        reply_length: Some(reply),
        ..Scenario::new(topology)
    }
}

fn mesh(v: u32, m: u32, reply: u32) -> Scenario {
    network(Topology::Mesh { radix: 4, dimensions: 2 }, Routing::DimensionOrder, v, m, reply)
}

fn torus(routing: Routing, v: u32, m: u32, reply: u32) -> Scenario {
    network(Topology::Torus { radix: 4, dimensions: 2 }, routing, v, m, reply)
}

/// With the default router a lone message takes `hops + M` cycles (`tests`), and a reply is
/// generated in the cycle its request is delivered and leaves at once: the round trip is
/// `(hops + M) + (hops + R)` for every pair, and the two messages' latencies are those two
/// terms. With one VC per class (V = 2) and with two.
#[test]
fn a_round_trip_is_the_request_latency_plus_the_reply_latency() {
    for s in [mesh(2, 6, 3), torus(Routing::DimensionOrder, 4, 4, 9), mesh(2, 1, 1)] {
        check(&s).unwrap();
        let geometry = topology::Geometry::new(&s.topology).unwrap();
        let (m, r) = (s.message_length, s.reply_length.unwrap());
        for source in 0..geometry.nodes {
            for dest in (0..geometry.nodes).filter(|&d| d != source) {
                let hops = geometry.distance(source, dest);
                let engine = lone_run(&s, source, dest, None);
                let w = &engine.window;
                let replies = engine.replies.as_deref().unwrap();
                assert_eq!((w.delivered, replies.round_trips), (2, 1), "{source}->{dest}");
                let request = f64::from(hops + m);
                let reply = f64::from(hops + r);
                assert_eq!(replies.round_trip_sum, request + reply, "{s:?} {source}->{dest}");
                assert_eq!(w.latency_sum, request + reply);
                assert_eq!(w.hops_sum, f64::from(2 * hops));
            }
        }
    }
}

/// Loaded networks with request-reply traffic: dimension order, Duato's escape class, the
/// dragonfly's UGAL, BookSim's router, packets and virtual cut-through.
fn loaded() -> Vec<(Scenario, f64)> {
    vec![
        (torus(Routing::DimensionOrder, 4, 8, 4), 0.03),
        (torus(Routing::Duato, 6, 4, 8), 0.04),
        (booksim(mesh(2, 4, 1), 8), 0.05),
        (
            Scenario {
                ejection: Ejection::Interleaved,
                ..network(
                    Topology::Dragonfly {
                        terminals_per_router: 2,
                        routers_per_group: 4,
                        global_links_per_router: 2,
                        global_arrangement: crate::scenario::GlobalArrangement::Absolute,
                    },
                    Routing::Ugal,
                    6,
                    4,
                    4,
                )
            },
            0.05,
        ),
        (
            Scenario {
                packet_size: Some(4),
                ..booksim(torus(Routing::DimensionOrder, 4, 12, 2), 8)
            },
            0.02,
        ),
        (
            Scenario {
                switching: Switching::VirtualCutThrough,
                ..booksim(torus(Routing::DimensionOrder, 4, 4, 4), 8)
            },
            0.05,
        ),
    ]
}

/// Under load every VC is held by a message of its class (checked with the invariants every
/// 31 cycles), and once the sources stop every measured request's round trip completes.
#[test]
fn requests_and_replies_keep_to_their_classes_and_every_round_trip_ends() {
    for (s, rate) in loaded() {
        let engine = run_and_drain(&s, rate, 13, (5_000, 31), |_| {});
        let w = &engine.window;
        let replies = engine.replies.as_deref().unwrap();
        // Every measured message is a request or a reply, and every measured request was
        // answered.
        assert_eq!(2 * replies.round_trips, w.measured, "{s:?}");
        assert!(replies.round_trips > 100, "{s:?}: {}", replies.round_trips);
        let round_trip = replies.round_trip_latency().unwrap();
        let latency = w.latency_sum / w.delivered as f64;
        // A round trip is two messages' latencies: about twice the mean.
        assert!(round_trip > 1.5 * latency && round_trip < 2.5 * latency, "{round_trip} {latency}");
    }
}

/// The closed loop: a node never has more requests waiting for replies than its bound, past
/// saturation the sources are held back (not queued), and the run ends `ok` with every
/// request answered.
#[test]
fn the_closed_loop_bounds_the_outstanding_requests() {
    for (limit, s) in [
        (1, torus(Routing::DimensionOrder, 4, 8, 4)),
        (3, booksim(torus(Routing::DimensionOrder, 4, 8, 8), 8)),
    ] {
        let s = Scenario { outstanding_requests: Some(limit), ..s };
        check(&s).unwrap();
        let mut engine = Engine::new(&s, 0.5, 3, &RunPlan::fixed(0, 4_000)).unwrap();
        engine.open_window();
        for cycle in 1..=4_000 {
            engine.step();
            assert!(engine.most_outstanding_requests() <= limit, "cycle {cycle}");
            if cycle % 97 == 0 {
                engine.check_invariants();
            }
        }
        assert_eq!(engine.most_outstanding_requests(), limit);
        assert!(engine.replies.as_deref().unwrap().throttled > 1_000);
        let options = SimOptions { warmup_cycles: 2_000, cycles: 10_000, ..SimOptions::default() };
        let m = simulate(&s, 0.5, &options, 1, None).unwrap();
        assert_eq!(m.status, Status::Ok, "{:?}", m.detail);
        assert!(m.round_trip_latency.unwrap() > 0.0);
        // The closed loop reports the arrivals it held back (here most of them).
        let held = m.intermediates.iter().find(|(k, _)| k == "throttled_requests").map(|e| e.1);
        let offered = 0.5 * 16.0 * 10_000.0;
        assert!(held.is_some_and(|h| h > offered / 2.0 && h < offered), "{held:?}");
    }
}

/// Past saturation, open loop, one flit per node and cycle offered: requests and replies keep
/// moving on every deadlock-free routing (each class is deadlock-free by its routing, and a
/// reply never waits for a request's VC).
#[test]
fn request_reply_never_deadlocks_past_saturation() {
    let options = overload_options(8_000);
    let mut scenarios: Vec<Scenario> = loaded().into_iter().map(|(s, _)| s).collect();
    scenarios.push(torus(Routing::Nbc, 8, 2, 2));
    scenarios.push(Scenario { ejection: Ejection::Interleaved, ..mesh(4, 1, 8) });
    for s in scenarios {
        let m = simulate(&s, 1.0 / f64::from(s.message_length), &options, 3, None).unwrap();
        assert_ne!(m.status, Status::Deadlock, "{s:?}: {:?}", m.detail);
        assert!(m.throughput.unwrap() > 0.01, "{s:?}");
        // Reported with the latency (a saturated run reports neither).
        assert_eq!(m.round_trip_latency.is_some(), m.latency.is_some(), "{s:?}");
    }
}

/// Refused: odd V or one VC, empty replies, a bound without replies, separate headers,
/// broadcasts; left out of the serialized scenario at their defaults.
#[test]
fn request_reply_is_checked() {
    let s = torus(Routing::DimensionOrder, 4, 8, 4);
    assert!(check(&s).is_ok());
    for v in [1, 3] {
        let error = check(&Scenario { virtual_channels: v, ..s.clone() }).unwrap_err().0;
        assert!(error.contains("must be even"), "{error}");
    }
    // Each class's routing checks its V / 2: dimension order on a torus needs 2 per class.
    assert!(check(&Scenario { virtual_channels: 2, ..s.clone() }).is_err());
    assert!(check(&Scenario { reply_length: Some(0), ..s.clone() }).is_err());
    assert!(check(&Scenario { outstanding_requests: Some(0), ..s.clone() }).is_err());
    let one_way = Scenario { reply_length: None, outstanding_requests: Some(2), ..s.clone() };
    assert!(check(&one_way).unwrap_err().0.contains("needs reply_length"));
    let scouting = Scenario {
        switching: Switching::Scouting { scouting_distance: 2 },
        routing: Routing::Adaptive,
        ..s.clone()
    };
    assert!(check(&scouting).unwrap_err().0.contains("reply_length"));
    let broadcasts = Scenario {
        broadcast_fraction: 0.1,
        reply_length: Some(4),
        virtual_channels: 2,
        ..Scenario::new(Topology::Hypercube { dimensions: 3 })
    };
    assert!(check(&broadcasts).unwrap_err().0.contains("broadcasts"));
    let cut_through =
        Scenario { switching: Switching::VirtualCutThrough, buffer_depth: 8, ..s.clone() };
    assert!(check(&cut_through).is_ok());
    let long_replies = Scenario { reply_length: Some(9), ..cut_through };
    assert!(check(&long_replies).unwrap_err().0.contains("one packet deep"));
    let json = serde_json::to_string(&Scenario::new(s.topology)).unwrap();
    assert!(!json.contains("reply") && !json.contains("outstanding"), "{json}");
}

#[test]
fn the_dragonfly_needs_its_hop_classes_in_each_message_class() {
    // The dragonfly's hop classes need their VCs in each class: minimal routing on 2 VCs a
    // class, so 4 in all.
    let s = Scenario { reply_length: Some(2), ..dragonfly(2, 4, 2, Routing::Minimal, 4, 4) };
    assert!(check(&s).is_ok());
    assert!(check(&Scenario { virtual_channels: 2, ..s }).is_err());
}
