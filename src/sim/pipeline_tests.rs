//! Tests of the router pipeline (`engine::timing`): every flit spends `switch_delay` S cycles
//! in the switch of each router it leaves, after its credit has gone back, and a header leaves
//! `vc_allocation_delay` A cycles after its grant. Zero-load latency is exact for every pair
//! (with and without an injection channel, on networks whose nodes are routers and on the
//! dragonfly, whose terminals are not), a VC behind a shallow buffer streams at depth /
//! (2 L + S + credit_delay) flits per cycle, BookSim's default pipeline gives BookSim's
//! zero-load latency and its back-to-back packet period, and flits are conserved under load.

use super::engine::{Engine, RunPlan};
use super::network::dragonfly::tests::dragonfly;
use super::tests::{fingerprint, lone_message_with, run_checking_invariants};
use super::*;
use crate::scenario::{
    Ejection, Injection, Routing, Scenario, Switching, Topology, VcReallocation,
};

fn torus(k: u32, n: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario {
        routing,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::Torus { radix: k, dimensions: n })
    }
}

fn mesh(k: u32, v: u32, m: u32) -> Scenario {
    Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::Mesh { radix: k, dimensions: 2 })
    }
}

/// On a network whose nodes are routers, a lone message pays, per hop, the link's latency L,
/// the switch S of the router it leaves, and `router_delay` d and the VC allocation A at the
/// router it reaches; the destination router's switch adds S once more before delivery, and
/// the M flits follow the header one per cycle: `hops (L + S + d + A) + S + M`, for every
/// ordered pair. The source router charges S (its switch lies before the first link) but
/// neither d nor A (`injection: parallel`).
#[test]
fn zero_load_latency_adds_the_switch_of_every_router_visited() {
    let hypercube = Scenario {
        routing: Routing::Duato,
        virtual_channels: 2,
        message_length: 3,
        ..Scenario::new(Topology::Hypercube { dimensions: 4 })
    };
    for (s, latency, switch, delay, allocation) in [
        (torus(4, 2, Routing::DimensionOrder, 2, 5), 1, 1, 0, 0),
        (torus(5, 2, Routing::Duato, 3, 4), 2, 3, 1, 1),
        (mesh(4, 1, 6), 1, 2, 2, 0),
        (mesh(4, 2, 3), 1, 0, 1, 2),
        (hypercube, 3, 2, 0, 1),
    ] {
        let s = Scenario {
            channel_latency: Some(latency),
            switch_delay: Some(switch),
            vc_allocation_delay: Some(allocation),
            buffer_depth: 2 * latency + switch,
            router_delay: delay,
            ..s
        };
        let per_hop = f64::from(latency + switch + delay + allocation);
        every_pair(&s, |hops| hops * per_hop + f64::from(switch + s.message_length));
    }
}

/// Asserts that a lone message's latency is `expected(hops)` for every ordered pair of `s`.
fn every_pair(s: &Scenario, expected: impl Fn(f64) -> f64) {
    check(s).unwrap();
    let n = s.nodes() as u32;
    for source in 0..n {
        for dest in (0..n).filter(|&d| d != source) {
            let (measured, hops) = lone_message_with(s, source, dest, None);
            assert_eq!(measured, expected(hops), "{s:?} {source}->{dest}");
        }
    }
}

/// With an injection channel the header also crosses it (one cycle) and waits the source
/// router's `router_delay` and VC allocation, and the tail reaches the node over the one-cycle
/// ejection channel: `hops (L + S + d + A) + (1 + d + A) + S + M + 1`. BookSim's default
/// pipeline (route computation: d = 1; VC allocation: A = 1; switch allocation and
/// traversal: S = 2; one-cycle links) gives its measured zero-load latency, `5 hops + M + 6`.
#[test]
fn zero_load_latency_with_an_injection_channel_and_booksim_s_pipeline() {
    for (s, latency, switch, delay, allocation) in [
        (mesh(4, 2, 1), 1, 2, 1, 1),
        (torus(4, 2, Routing::DimensionOrder, 2, 4), 1, 2, 1, 1),
        (mesh(3, 1, 3), 2, 1, 3, 0),
        (mesh(3, 1, 2), 1, 1, 0, 2),
    ] {
        let s = Scenario {
            injection: Injection::Channel,
            ejection: Ejection::Interleaved,
            channel_latency: Some(latency),
            switch_delay: Some(switch),
            vc_allocation_delay: Some(allocation),
            credit_delay: Some(1),
            buffer_depth: 8,
            router_delay: delay,
            ..s
        };
        let per_hop = f64::from(latency + switch + delay + allocation);
        let source_router = 1 + delay + allocation;
        let booksim = (latency, switch, delay, allocation) == (1, 2, 1, 1);
        every_pair(&s, |hops| {
            let expected =
                hops * per_hop + f64::from(source_router + switch + s.message_length + 1);
            if booksim {
                assert_eq!(expected, 5.0 * hops + f64::from(s.message_length) + 6.0);
            }
            expected
        });
    }
}

/// On the dragonfly the terminals are not routers: the link out of a source terminal has no
/// switch before it, every other link leaves a router (S), and the destination terminal adds
/// none. `router_delay` d and the VC allocation A are charged at every router a header
/// arrives at, not at the destination terminal (no router: the flits arrive over its ejection
/// channel). A minimal route costs `(1 + d + A) + 1 + locals (L + d + A) + globals (G + d +
/// A) + (hops - 1) S + M`, for every ordered pair.
#[test]
fn zero_load_latency_charges_the_switch_of_routers_only_on_a_dragonfly() {
    let (p, a, h) = (2, 4, 2);
    for (local, global, switch, delay, allocation) in
        [(1, 1, 2, 1, 1), (3, 7, 1, 0, 0), (10, 100, 2, 1, 2)]
    {
        let s = Scenario {
            channel_latency: Some(local),
            global_channel_latency: Some(global),
            switch_delay: Some(switch),
            vc_allocation_delay: Some(allocation),
            buffer_depth: 2 * global + switch,
            router_delay: delay,
            ..dragonfly(p, a, h, Routing::Minimal, 2, 4)
        };
        let delay = delay + allocation;
        let n = s.nodes() as u32;
        for source in 0..n {
            for dest in (0..n).filter(|&d| d != source) {
                let (measured, hops) = lone_message_with(&s, source, dest, None);
                let hops = hops as u32;
                let globals = u32::from(source / (p * a) != dest / (p * a));
                let locals = hops - 2 - globals;
                let expected = (1 + delay)
                    + 1
                    + locals * (local + delay)
                    + globals * (global + delay)
                    + (hops - 1) * switch;
                assert_eq!(measured, f64::from(expected + s.message_length), "{source}->{dest}");
            }
        }
    }
}

/// The switch lies on the flit's way out, after its credit has gone back, so it lengthens the
/// credit loop to `2 L + S + credit_delay`: one message streaming over one link sends `depth`
/// flits per loop when its buffer is shallower. BookSim's default loop (L = 1, S = 2, credit
/// delay 1) is 5 cycles, the loop `IQRouter::AddOutputChannel` computes for a body flit.
#[test]
fn a_buffer_shallower_than_the_loop_through_the_switch_streams_depth_flits_per_loop() {
    for (latency, switch, delay, depth) in
        [(1, 2, 1, 2), (1, 2, 1, 4), (1, 2, 1, 5), (2, 1, 0, 3), (3, 4, 2, 6), (1, 1, 0, 1)]
    {
        let s = Scenario {
            channel_latency: Some(latency),
            switch_delay: Some(switch),
            credit_delay: Some(delay),
            buffer_depth: depth,
            ..mesh(4, 1, 1)
        };
        let tail = |q: u32| {
            let s = Scenario { message_length: q * depth + 1, ..s.clone() };
            lone_message_with(&s, 0, 1, None).0
        };
        let period = (2 * latency + switch + delay).max(depth);
        assert_eq!(
            tail(12) - tail(2),
            f64::from(10 * period),
            "L {latency} S {switch} c {delay} B {depth}"
        );
    }
}

/// Under load, with the switch pipeline alone and with BookSim's whole router (pipeline,
/// credit loop, injection channel, input speedup 1, VC reallocation once the tail is sent),
/// flits are conserved and deadlock-free routings deliver; the bitmap walk agrees with the
/// walk in `active` order.
#[test]
fn the_switch_pipeline_under_load_keeps_the_invariants() {
    let booksim = |s: Scenario| Scenario {
        router_delay: 1,
        vc_allocation_delay: Some(1),
        switch_delay: Some(2),
        credit_delay: Some(1),
        buffer_depth: 8,
        injection: Injection::Channel,
        input_speedup: Some(1),
        ejection: Ejection::Interleaved,
        vc_reallocation: VcReallocation::TailSent,
        ..s
    };
    let cases = [
        (
            Scenario {
                switch_delay: Some(3),
                buffer_depth: 6,
                ..torus(4, 2, Routing::Duato, 3, 6)
            },
            0.04,
        ),
        (booksim(torus(4, 2, Routing::DimensionOrder, 2, 8)), 0.04),
        (booksim(mesh(4, 2, 4)), 0.08),
        (
            Scenario {
                channel_latency: Some(10),
                global_channel_latency: Some(100),
                switch_delay: Some(2),
                buffer_depth: 32,
                ejection: Ejection::Interleaved,
                vc_reallocation: VcReallocation::TailSent,
                ..dragonfly(2, 4, 2, Routing::Ugal, 3, 4)
            },
            0.05,
        ),
    ];
    for (s, rate) in &cases {
        check(s).unwrap();
        let engine = run_checking_invariants(s, *rate, 3, 6_000);
        assert!(engine.window.delivered > 100, "{s:?}: {}", engine.window.delivered);
        if s.input_speedup.is_none() {
            let run = |bitmap: bool| {
                let engine = Engine::new(s, *rate, 5, &RunPlan::fixed(0, 3_000)).unwrap();
                fingerprint(engine.with_bitmap_walk(bitmap), 3_000)
            };
            assert_eq!(run(true), run(false), "{s:?}");
        }
    }
}

/// Where the knob applies, and what it reports.
#[test]
fn the_switch_delay_is_checked_and_reported() {
    let s = torus(4, 2, Routing::DimensionOrder, 2, 4);
    let scouting = Scenario {
        switching: Switching::Scouting { scouting_distance: 1 },
        routing: Routing::Duato,
        virtual_channels: 3,
        switch_delay: Some(1),
        ..s.clone()
    };
    assert!(check(&scouting).unwrap_err().0.contains("switch_delay"));
    let broadcast = Scenario {
        broadcast_fraction: 0.1,
        ejection: Ejection::Unlimited,
        switch_delay: Some(2),
        ..Scenario::new(Topology::Hypercube { dimensions: 3 })
    };
    assert!(check(&broadcast).unwrap_err().0.contains("unicast"));
    let allocating =
        Scenario { vc_allocation_delay: Some(1), switch_delay: None, ..scouting.clone() };
    assert!(check(&allocating).unwrap_err().0.contains("vc_allocation_delay"));
    // Written out at their defaults they are accepted everywhere, and the engine is not timed.
    let zero = Scenario { switch_delay: Some(0), vc_allocation_delay: Some(0), ..scouting };
    assert!(check(&zero).is_ok());
    let zero = Scenario { switch_delay: Some(0), vc_allocation_delay: Some(0), ..s.clone() };
    assert!(!engine::timed(&zero));
    // Unset, they are left out of the serialized scenario (no task id moves).
    let json = serde_json::to_string(&s).unwrap();
    assert!(!json.contains("switch_delay") && !json.contains("allocation"), "{json}");
    // The credit loop through the switch is reported: 2 L + S + credit delay.
    let options = SimOptions { warmup_cycles: 200, cycles: 2_000, ..SimOptions::default() };
    let s = Scenario { switch_delay: Some(2), credit_delay: Some(1), buffer_depth: 8, ..s };
    let m = simulate(&s, 0.01, &options, 1, None).unwrap();
    let reported = m.intermediates.iter().find(|(k, _)| k == "credit_loop_cycles").map(|e| e.1);
    assert_eq!(reported, Some(5.0));
}

/// BookSim's whole router on two nodes joined by one link (one VC, 20-flit buffers, an
/// injection channel): messages queued at a source leave back to back, every `M + 2` cycles
/// with `tail_sent` (the next header's route computation and VC allocation once the tail has
/// left) and every `M + 7` cycles with `drained` (the VC comes back when the tail's credit
/// does, after its ejection at the far end). BookSim 2 (commit 28f4329, `mesh` k = 2, n = 1,
/// `neighbor` traffic, injection rate 1) accepts exactly these rates: 1/3, 4/6 and 20/22
/// flits per cycle with `wait_for_tail_credit = 0`, 1/8, 4/11 and 20/27 with 1.
#[test]
fn booksim_s_router_sends_back_to_back_messages_at_booksim_s_period() {
    for (reallocation, gap) in [(VcReallocation::TailSent, 2), (VcReallocation::Drained, 7)] {
        for m in [1, 4, 20] {
            let s = Scenario {
                router_delay: 1,
                vc_allocation_delay: Some(1),
                switch_delay: Some(2),
                credit_delay: Some(1),
                buffer_depth: 20,
                injection: Injection::Channel,
                input_speedup: Some(1),
                ejection: Ejection::Interleaved,
                vc_reallocation: reallocation,
                message_length: m,
                ..Scenario {
                    routing: Routing::DimensionOrder,
                    virtual_channels: 1,
                    ..Scenario::new(Topology::Mesh { radix: 2, dimensions: 1 })
                }
            };
            check(&s).unwrap();
            // The cycle in which the last of `count` messages sent at once is delivered.
            let finish = |count: u32| {
                let mut engine = Engine::new(&s, 0.0, 1, &RunPlan::fixed(0, 1)).unwrap();
                engine.open_window();
                for _ in 0..count {
                    engine.send(0, 1);
                }
                while engine.window.delivered < u64::from(count) {
                    engine.step();
                    assert!(engine.now < 10_000, "{reallocation:?} M {m}: not delivered");
                }
                engine.now
            };
            let period = (finish(12) - finish(2)) / 10;
            assert_eq!(period, u64::from(m + gap), "{reallocation:?} M {m}");
        }
    }
}
