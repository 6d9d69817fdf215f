//! Tests of packets (`packet_size`, `engine::packets`) and virtual cut-through switching.
//!
//! Packets: a split message's zero-load latency is exact for every pair (its packets follow
//! each other out of the one injection VC, a packet's length plus one cycle apart, and the
//! last one crosses the network as a lone message would); under load flits and messages are
//! conserved and every message is delivered whole; a message that fits in one packet is the
//! run without packets, bit for bit.
//!
//! Virtual cut-through: with `drained` reallocation a free VC's buffer is empty, so with
//! buffers a packet deep it is wormhole switching bit for bit; with `tail_sent` a header is
//! granted only a VC with room for its whole packet, so no packet ever waits for a credit
//! between two routers (checked every cycle past saturation, where wormhole switching breaks
//! the same check), and deadlock-free routings still deliver past saturation.
//!
//! Random combinations of both with request-reply traffic and the router knobs keep the
//! engine's invariants every cycle.

use super::engine::{Engine, RunPlan};
use super::network::dragonfly::tests::dragonfly;
use super::tests::{booksim_router as booksim, fingerprint, overload_options, run_and_drain};
use super::*;
use crate::measurement::Status;
use crate::scenario::{
    Ejection, MessageLengths, Routing, Scenario, Switching, Topology, VcReallocation,
};

fn network(topology: Topology, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario { routing, virtual_channels: v, message_length: m, ..Scenario::new(topology) }
}

fn torus(k: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    network(Topology::Torus { radix: k, dimensions: 2 }, routing, v, m)
}

/// The latency and mean hop count of one message sent through an empty network.
fn lone(s: &Scenario, source: u32, dest: u32) -> (f64, f64) {
    super::tests::lone_message_with(s, source, dest, None)
}

/// One VC per channel, the default router: a message of M flits split into k packets leaves
/// its injection VC as k packets one after the other, packet i + 1's header injected the
/// cycle after packet i's tail has left (P + 1 cycles apart), and the network (buffers of 2,
/// one-cycle links, so a drained VC is free again as soon as the next header needs it) never
/// holds them back: the message's latency is (k - 1)(P + 1) plus the last packet's lone
/// latency `hops + r` (r its flits), and its hop count the route's. For every pair.
#[test]
fn a_split_message_arrives_with_its_last_packet_exactly() {
    for (topology, m, p) in [
        (Topology::Mesh { radix: 4, dimensions: 2 }, 10, 4),
        (Topology::Mesh { radix: 4, dimensions: 2 }, 10, 5),
        (Topology::Mesh { radix: 5, dimensions: 1 }, 7, 1),
        (Topology::Hypercube { dimensions: 4 }, 9, 2),
        (Topology::Hypercube { dimensions: 3 }, 6, 6),
    ] {
        let s =
            Scenario { packet_size: Some(p), ..network(topology, Routing::DimensionOrder, 1, m) };
        check(&s).unwrap();
        let geometry = topology::Geometry::new(&s.topology).unwrap();
        let k = m.div_ceil(p);
        let last = m - (k - 1) * p;
        for source in 0..geometry.nodes {
            for dest in (0..geometry.nodes).filter(|&d| d != source) {
                let hops = geometry.distance(source, dest);
                let expected = f64::from((k - 1) * (p + 1) + hops + last);
                assert_eq!(lone(&s, source, dest), (expected, f64::from(hops)), "{s:?}");
            }
        }
    }
}

/// A packet size at least every message's length splits nothing: the run is the run without
/// packets, bit for bit (lengths drawn from a distribution too).
#[test]
fn messages_that_fit_in_a_packet_are_not_split() {
    for (s, p) in [
        (torus(4, Routing::Duato, 3, 6), 6),
        (
            Scenario {
                message_length_distribution: MessageLengths::Uniform { min: 2, max: 8 },
                ..torus(4, Routing::DimensionOrder, 2, 5)
            },
            8,
        ),
        (booksim(torus(4, Routing::DimensionOrder, 2, 4), 8), 100),
    ] {
        let run = |s: &Scenario| {
            fingerprint(Engine::new(s, 0.05, 3, &RunPlan::fixed(0, 4_000)).unwrap(), 4_000)
        };
        let split = Scenario { packet_size: Some(p), ..s.clone() };
        check(&split).unwrap();
        assert_eq!(run(&s), run(&split), "{s:?}");
    }
}

/// Loaded networks with messages split into several packets, on the default router, BookSim's,
/// the dragonfly's UGAL (each packet its own intermediate group) and random lengths.
fn split_loads() -> Vec<(Scenario, f64)> {
    vec![
        (Scenario { packet_size: Some(4), ..torus(4, Routing::Duato, 3, 16) }, 0.012),
        (
            Scenario {
                packet_size: Some(3),
                ejection: Ejection::Interleaved,
                ..torus(5, Routing::DimensionOrder, 2, 10)
            },
            0.02,
        ),
        (Scenario { packet_size: Some(4), ..booksim(torus(4, Routing::Duato, 3, 12), 8) }, 0.02),
        (
            Scenario {
                packet_size: Some(4),
                ejection: Ejection::Interleaved,
                ..dragonfly(2, 4, 2, Routing::Ugal, 3, 10)
            },
            0.02,
        ),
        (
            Scenario {
                packet_size: Some(5),
                message_length_distribution: MessageLengths::Bimodal { min: 2, max: 20 },
                ..torus(4, Routing::DimensionOrder, 2, 8)
            },
            0.02,
        ),
    ]
}

/// Under load every split message is delivered whole: the engine's invariants hold with
/// packets in flight (flits per packet, messages once), the delivered messages' flits are
/// their lengths, packets of one message are in flight at once, and the run drains.
#[test]
fn split_messages_are_delivered_whole_under_load() {
    for (s, rate) in split_loads() {
        let mut split_in_flight = 0;
        let engine = run_and_drain(&s, rate, 11, (6_000, 53), |engine| {
            split_in_flight = split_in_flight.max(engine.packets_in_flight_beyond_one());
        });
        let w = &engine.window;
        assert!(w.delivered > 100, "{s:?}: {}", w.delivered);
        assert!(split_in_flight > 0, "{s:?}: never two packets of a message in flight");
        let mean_length = w.length_sum / w.delivered as f64;
        assert!((mean_length - f64::from(s.message_length)).abs() < 2.5, "{s:?}: {mean_length}");
    }
}

/// Virtual cut-through with `drained` reallocation and buffers a packet deep is wormhole
/// switching: a free VC's buffer is empty, so it can always take the whole packet.
#[test]
fn cut_through_with_drained_vcs_is_wormhole_bit_for_bit() {
    for (s, rate) in [
        (Scenario { buffer_depth: 8, ..torus(4, Routing::DimensionOrder, 2, 8) }, 0.05),
        (
            Scenario { buffer_depth: 5, packet_size: Some(5), ..torus(4, Routing::Duato, 3, 12) },
            0.02,
        ),
        (
            Scenario {
                vc_reallocation: VcReallocation::Drained,
                ..booksim(torus(4, Routing::DimensionOrder, 2, 8), 8)
            },
            0.06,
        ),
    ] {
        let run = |s: &Scenario| {
            fingerprint(Engine::new(s, rate, 9, &RunPlan::fixed(0, 5_000)).unwrap(), 5_000)
        };
        let vct = Scenario { switching: Switching::VirtualCutThrough, ..s.clone() };
        check(&vct).unwrap();
        assert_eq!(run(&s), run(&vct), "{s:?}");
    }
}

/// Runs `s` at `rate` for `cycles` cycles checking, every cycle, that every packet granted a
/// VC has room there for its rest (`Engine::check_cut_through`), and the invariants every 89;
/// returns the packets checked, or the violation's message.
fn cut_through_holds(s: &Scenario, rate: f64, cycles: u64) -> Result<u64, String> {
    let mut engine = Engine::new(s, rate, 4, &RunPlan::fixed(0, cycles)).unwrap();
    engine.open_window();
    let mut checked = 0;
    for cycle in 1..=cycles {
        engine.step();
        let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            engine.check_cut_through(&mut checked);
        }));
        if let Err(panic) = step {
            return Err(panic
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "check_cut_through panicked".to_owned()));
        }
        if cycle % 89 == 0 {
            engine.check_invariants();
        }
    }
    assert!(engine.window.delivered > 100, "{s:?}: {}", engine.window.delivered);
    Ok(checked)
}

/// With `tail_sent` reallocation (BookSim's router) a VC is granted while it still holds the
/// last message's flits: virtual cut-through grants it only when the whole packet fits, so
/// past saturation no packet ever waits for a credit with its flits in two routers. Wormhole
/// switching, on the same networks, grants VCs that cannot take the packet (the check fails).
#[test]
fn cut_through_never_leaves_a_packet_waiting_for_credits() {
    let loads = [
        (booksim(torus(4, Routing::DimensionOrder, 2, 4), 8), 0.3),
        (booksim(torus(4, Routing::Duato, 3, 6), 8), 0.2),
        (
            Scenario {
                packet_size: Some(4),
                ..booksim(torus(4, Routing::DimensionOrder, 2, 12), 6)
            },
            0.1,
        ),
        (booksim(dragonfly(2, 4, 2, Routing::Ugal, 3, 4), 8), 0.3),
        (
            Scenario {
                vc_reallocation: VcReallocation::TailSent,
                ejection: Ejection::Interleaved,
                buffer_depth: 6,
                ..network(Topology::Mesh { radix: 4, dimensions: 2 }, Routing::DimensionOrder, 1, 3)
            },
            0.3,
        ),
    ];
    for (s, rate) in loads {
        let vct = Scenario { switching: Switching::VirtualCutThrough, ..s.clone() };
        check(&vct).unwrap();
        let checked = cut_through_holds(&vct, rate, 4_000).unwrap_or_else(|e| panic!("{e}"));
        assert!(checked > 10_000, "{vct:?}: {checked}");
        let wormhole = cut_through_holds(&s, rate, 4_000);
        assert!(wormhole.is_err(), "{s:?}: wormhole kept cut-through's promise");
    }
}

/// Past saturation, virtual cut-through keeps delivering on the deadlock-free routings, with
/// either reallocation policy and with packets.
#[test]
fn cut_through_delivers_past_saturation() {
    let options = overload_options(8_000);
    for s in [
        Scenario { buffer_depth: 8, ..torus(4, Routing::DimensionOrder, 2, 8) },
        booksim(torus(4, Routing::Duato, 3, 4), 4),
        Scenario { packet_size: Some(4), ..booksim(torus(4, Routing::DimensionOrder, 2, 16), 8) },
        booksim(dragonfly(2, 4, 2, Routing::Ugal, 3, 4), 8),
    ] {
        let s = Scenario { switching: Switching::VirtualCutThrough, ..s };
        let m = simulate(&s, 1.0 / f64::from(s.message_length), &options, 3, None).unwrap();
        assert_ne!(m.status, Status::Deadlock, "{s:?}: {:?}", m.detail);
        assert!(m.throughput.unwrap() > 0.02, "{s:?}");
    }
}

/// Refused: buffers shallower than the longest packet, unbounded lengths without a packet
/// size, packets with broadcasts or a separate header; the models have no cut-through; both
/// are left out of the serialized scenario, and so of every task id, at their defaults.
#[test]
fn packets_and_cut_through_are_checked() {
    let vct = Scenario {
        switching: Switching::VirtualCutThrough,
        buffer_depth: 4,
        ..torus(4, Routing::DimensionOrder, 2, 8)
    };
    let error = check(&vct).unwrap_err().0;
    assert!(error.contains("one packet deep") && error.contains("packet_size"), "{error}");
    assert!(check(&Scenario { packet_size: Some(4), ..vct.clone() }).is_ok());
    assert!(check(&Scenario { packet_size: Some(5), ..vct.clone() }).is_err());
    let geometric = Scenario {
        message_length_distribution: MessageLengths::Geometric,
        buffer_depth: 64,
        ..vct.clone()
    };
    assert!(check(&geometric).unwrap_err().0.contains("unbounded"));
    assert!(check(&Scenario { packet_size: Some(8), ..geometric }).is_ok());
    let zero = Scenario { packet_size: Some(0), ..torus(4, Routing::DimensionOrder, 2, 8) };
    assert!(check(&zero).unwrap_err().0.contains("at least 1"));
    let scouting = Scenario {
        switching: Switching::Scouting { scouting_distance: 2 },
        packet_size: Some(4),
        ..torus(4, Routing::Adaptive, 2, 8)
    };
    assert!(check(&scouting).unwrap_err().0.contains("packet_size"));
    let broadcasts = Scenario {
        broadcast_fraction: 0.1,
        packet_size: Some(4),
        ..Scenario::new(Topology::Hypercube { dimensions: 3 })
    };
    assert!(check(&broadcasts).unwrap_err().0.contains("packet_size"));
    let vct = Scenario { packet_size: Some(4), ..vct };
    for model in crate::model::ModelName::ALL {
        let options = crate::model::ModelOptions::default();
        assert!(crate::model::solve(model, &vct, 0.01, &options).is_err(), "{model:?}");
    }
    let default = Scenario::new(Topology::Torus { radix: 4, dimensions: 2 });
    let json = serde_json::to_string(&default).unwrap();
    assert!(!json.contains("packet"), "{json}");
}

/// Random combinations of the router knobs (BookSim's router, long links) with packets,
/// virtual cut-through and request-reply traffic keep the engine's invariants, and virtual
/// cut-through its promise, every cycle under load.
#[test]
fn random_configurations_with_packets_cut_through_and_replies_keep_the_invariants() {
    let mut rng = super::rng::Rng::new(2026);
    let mut pick = |n: u64| rng.below(n) as u32;
    let (mut checked, mut tries) = (0, 0);
    // Configurations run with virtual cut-through, packets, replies, BookSim's router.
    let mut covered = [0; 4];
    while checked < 30 && tries < 5_000 {
        tries += 1;
        let topology = match pick(3) {
            0 => Topology::Torus { radix: 4, dimensions: 2 },
            1 => Topology::Mesh { radix: 4, dimensions: 2 },
            _ => Topology::Hypercube { dimensions: 4 },
        };
        let routing = [Routing::DimensionOrder, Routing::Duato][pick(2) as usize];
        let mut s = network(topology, routing, 2 + pick(5), 1 + pick(12));
        s.buffer_depth = 2 + pick(10);
        if pick(2) == 0 {
            s = booksim(s, 4 + pick(8));
        }
        if pick(2) == 0 {
            s.packet_size = Some(1 + pick(6));
        }
        if pick(2) == 0 {
            s.switching = Switching::VirtualCutThrough;
        }
        if pick(2) == 0 {
            s.reply_length = Some(1 + pick(8));
            if pick(2) == 0 {
                s.outstanding_requests = Some(1 + pick(4));
            }
        }
        if pick(3) == 0 {
            s.channel_latency = Some(1 + pick(3));
        }
        if check(&s).is_err() {
            continue;
        }
        let rate = f64::from(1 + pick(10)) * 0.04 / f64::from(s.message_length);
        let mut engine =
            Engine::new(&s, rate, u64::from(pick(1000)), &RunPlan::fixed(0, 2_000)).unwrap();
        engine.open_window();
        let mut seen = 0;
        for cycle in 1..=2_000 {
            engine.step();
            if s.switching == Switching::VirtualCutThrough {
                engine.check_cut_through(&mut seen);
            }
            if cycle % 97 == 0 {
                engine.check_invariants();
            }
        }
        assert!(engine.window.flit_hops > 0, "{s:?}: nothing moved");
        checked += 1;
        for (count, on) in covered.iter_mut().zip([
            s.switching == Switching::VirtualCutThrough,
            s.packet_size.is_some_and(|p| p < s.message_length),
            s.reply_length.is_some(),
            s.switch_delay.is_some(),
        ]) {
            *count += u32::from(on);
        }
    }
    assert_eq!(checked, 30, "too few configurations passed the check");
    assert!(covered.iter().all(|&c| c >= 3), "a feature was hardly drawn: {covered:?}");
}
