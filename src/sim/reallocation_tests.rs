//! Tests of `vc_reallocation: tail_sent` (`engine::reallocation`): a VC granted again once the
//! tail is sent carries back-to-back messages without the drain's gap (exactly, with and
//! without long links), flits are conserved and queues stay consistent under load with short
//! messages queued several to a buffer, both walks agree, deadlock-free routings still
//! deliver past saturation, and the knob is refused where it does not apply.

use super::engine::{Engine, RunPlan};
use super::network::dragonfly::tests::dragonfly;
use super::tests::{fingerprint, run_checking_invariants};
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Switching, Topology, VcReallocation};

const TAIL_SENT: VcReallocation = VcReallocation::TailSent;

fn torus(k: u32, n: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        vc_reallocation: TAIL_SENT,
        ..Scenario::new(Topology::Torus { radix: k, dimensions: n })
    }
}

/// A line of 4 routers (a 1-D mesh), one VC per channel, messages of `m` flits.
fn line(m: u32) -> Scenario {
    Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: 1,
        message_length: m,
        ..Scenario::new(Topology::Mesh { radix: 4, dimensions: 1 })
    }
}

/// The cycle in which the last of `count` messages generated at once from `source` to `dest`
/// is delivered (the network empty before).
fn last_delivery(s: &Scenario, source: u32, dest: u32, count: u32) -> u64 {
    let mut engine = Engine::new(s, 0.0, 1, &RunPlan::fixed(0, 1)).unwrap();
    engine.open_window();
    for _ in 0..count {
        engine.send(source, dest);
    }
    for cycle in 1..100_000 {
        engine.step();
        if cycle % 7 == 0 {
            engine.check_invariants();
        }
        if engine.window.outstanding == 0 {
            return engine.now;
        }
    }
    panic!("{count} messages {source}->{dest} not delivered");
}

/// Back-to-back messages over one VC per channel: with `drained` the next header is granted
/// the VC once the tail's credit is back, a credit loop `2 L + credit_delay` after the tail
/// was sent, so messages follow each other every `M - 1 + 2 L + credit_delay` cycles; with
/// `tail_sent` it is granted as soon as the tail was sent, and a buffer that covers the loop
/// carries a message every `M` cycles: the link never idles. One hop and three.
#[test]
fn a_vc_granted_once_the_tail_is_sent_carries_messages_back_to_back() {
    for (latency, delay, m) in [(1, 0, 4), (1, 0, 9), (2, 1, 6), (3, 0, 5), (4, 2, 16)] {
        for dest in [1, 3] {
            let drained = Scenario {
                channel_latency: Some(latency),
                credit_delay: Some(delay),
                buffer_depth: 2 * latency + delay,
                ..line(m)
            };
            let tail_sent = Scenario { vc_reallocation: TAIL_SENT, ..drained.clone() };
            let period =
                |s: &Scenario| last_delivery(s, 0, dest, 12) - last_delivery(s, 0, dest, 2);
            let loop_cycles = 2 * latency + delay;
            assert_eq!(
                period(&drained),
                10 * u64::from((m - 1 + loop_cycles).max(m)),
                "drained, L {latency} d {delay} M {m} to {dest}"
            );
            assert_eq!(period(&tail_sent), 10 * u64::from(m), "L {latency} d {delay} M {m}");
        }
    }
}

/// A lone message does not see the policy: zero-load latency is unchanged, for every pair.
#[test]
fn zero_load_latency_does_not_depend_on_the_policy() {
    let s =
        Scenario { channel_latency: Some(2), buffer_depth: 4, ..torus(4, 2, Routing::Duato, 3, 5) };
    let drained = Scenario { vc_reallocation: VcReallocation::Drained, ..s.clone() };
    for source in 0..16 {
        for dest in (0..16).filter(|&d| d != source) {
            let one = |s: &Scenario| super::tests::lone_message_with(s, source, dest, Some(0));
            assert_eq!(one(&s), one(&drained), "{source}->{dest}");
        }
    }
}

/// Scenarios under load, with short messages in deep buffers (several messages queued in one
/// buffer), long links, interleaved ejection, an input speedup and the dragonfly's UGAL.
fn loaded() -> Vec<(Scenario, f64)> {
    vec![
        (Scenario { buffer_depth: 8, ..torus(4, 2, Routing::DimensionOrder, 2, 2) }, 0.2),
        (Scenario { buffer_depth: 6, ..torus(4, 2, Routing::Duato, 3, 1) }, 0.3),
        (
            Scenario {
                buffer_depth: 4,
                ejection: Ejection::Interleaved,
                input_speedup: Some(1),
                ..torus(5, 2, Routing::Duato, 3, 6)
            },
            0.08,
        ),
        (
            Scenario {
                channel_latency: Some(3),
                credit_delay: Some(1),
                buffer_depth: 9,
                ejection: Ejection::Interleaved,
                ..torus(4, 2, Routing::DimensionOrder, 2, 3)
            },
            0.15,
        ),
        (
            Scenario {
                vc_reallocation: TAIL_SENT,
                buffer_depth: 8,
                ejection: Ejection::Interleaved,
                ..dragonfly(2, 4, 2, Routing::Ugal, 3, 4)
            },
            0.1,
        ),
        (Scenario { vc_reallocation: TAIL_SENT, ejection: Ejection::Unlimited, ..line(3) }, 0.2),
    ]
}

/// Under load, flits are conserved, every queue's counts match its messages, a VC is granted
/// exactly while its receiving message's tail has not been sent, and messages are delivered.
#[test]
fn queued_messages_keep_the_invariants_under_load() {
    for (s, rate) in loaded() {
        check(&s).unwrap();
        let engine = run_checking_invariants(&s, rate, 7, 6_000);
        assert!(engine.window.delivered > 200, "{s:?}: {}", engine.window.delivered);
    }
}

/// The bitmap walk gives the walk in `active` order's results: a header reaching a buffer and
/// the tail ahead of it leaving in the same cycle make the same queue in either order.
#[test]
fn the_bitmap_walk_agrees_with_queued_messages() {
    for (s, rate) in loaded() {
        let run = |bitmap: bool| {
            let engine = Engine::new(&s, rate, 5, &RunPlan::fixed(0, 3_000)).unwrap();
            fingerprint(engine.with_bitmap_walk(bitmap), 3_000)
        };
        assert_eq!(run(true), run(false), "{s:?}");
    }
}

/// Deadlock-free routings keep delivering past saturation: the escape-based ones (`duato`,
/// `nbc`) with short messages too, which deadlocked on their adaptive VCs before those were
/// kept atomic (`Router::atomic_vcs`); the others' VCs queue messages.
#[test]
fn deadlock_free_routings_deliver_past_saturation() {
    let options = SimOptions {
        warmup_cycles: 0,
        cycles: 10_000,
        deadlock_cycles: 1_000,
        saturation_backlog: 1e9,
        ..SimOptions::default()
    };
    for s in [
        Scenario { buffer_depth: 4, ..torus(4, 2, Routing::DimensionOrder, 2, 8) },
        Scenario { buffer_depth: 4, ..torus(4, 2, Routing::Duato, 3, 2) },
        Scenario { buffer_depth: 4, ..torus(4, 2, Routing::Duato, 3, 1) },
        Scenario { buffer_depth: 4, ..torus(4, 2, Routing::Nbc, 4, 2) },
        Scenario {
            vc_reallocation: TAIL_SENT,
            routing: Routing::Duato,
            virtual_channels: 2,
            message_length: 2,
            buffer_depth: 4,
            ..Scenario::new(Topology::Mesh { radix: 4, dimensions: 2 })
        },
        Scenario {
            vc_reallocation: TAIL_SENT,
            buffer_depth: 8,
            ..dragonfly(2, 4, 2, Routing::Ugal, 3, 4)
        },
    ] {
        // One flit per node and cycle offered: well past saturation.
        let m = simulate(&s, 1.0 / f64::from(s.message_length), &options, 3, None).unwrap();
        assert_ne!(m.status, Status::Deadlock, "{s:?}: {:?}", m.detail);
        assert!(m.throughput.unwrap() > 0.05, "{s:?}");
    }
}

/// Refused with separate headers and broadcasts; left out of the serialized scenario, and so
/// of every task id, at its default.
#[test]
fn the_policy_is_checked_and_defaults_to_drained() {
    let s = torus(4, 2, Routing::Duato, 3, 4);
    assert!(check(&s).is_ok());
    let scouting =
        Scenario { switching: Switching::Scouting { scouting_distance: 1 }, ..s.clone() };
    let error = check(&scouting).unwrap_err();
    assert!(error.0.contains("vc_reallocation") && error.0.contains("scouting"), "{error}");
    let hypercube = Scenario {
        broadcast_fraction: 0.1,
        ..Scenario {
            vc_reallocation: TAIL_SENT,
            ..Scenario::new(Topology::Hypercube { dimensions: 3 })
        }
    };
    assert!(check(&hypercube).unwrap_err().0.contains("broadcasts"));
    let default = Scenario::new(Topology::Torus { radix: 4, dimensions: 2 });
    assert_eq!(default.vc_reallocation, VcReallocation::Drained);
    let json = serde_json::to_string(&default).unwrap();
    assert!(!json.contains("reallocation"), "{json}");
    assert!(serde_json::to_string(&s).unwrap().contains("\"vc_reallocation\":\"tail_sent\""));
}
