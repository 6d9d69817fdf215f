//! Tests of the source of `injection: channel` (`engine::source`): a node sends one message at
//! a time, flit by flit into its router's local port, so the second of two messages generated
//! together starts when the first's tail has been fed, and a message whose header waits at its
//! source router holds the source once its buffer is full; the parallel source does neither.

use super::engine::{Engine, RunPlan};
use super::*;
use crate::scenario::{Injection, Routing, Scenario, Topology};

/// Two nodes joined by one link, `V` VCs of `depth` flits, messages of `m` flits.
fn pair(injection: Injection, v: u32, depth: u32, m: u32, router_delay: u32) -> Scenario {
    Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: v,
        buffer_depth: depth,
        message_length: m,
        router_delay,
        injection,
        ..Scenario::new(Topology::Mesh { radix: 2, dimensions: 1 })
    }
}

/// An engine of `s` with the window open and `count` messages from node 0 to node 1
/// generated in its first cycle.
fn two_at_once(s: &Scenario, count: u32) -> Engine {
    check(s).unwrap();
    let mut engine = Engine::new(s, 0.0, 1, &RunPlan::fixed(0, 1)).unwrap();
    engine.open_window();
    for _ in 0..count {
        engine.send(0, 1);
    }
    engine
}

/// With two VCs free, the parallel source starts both messages at once (no source wait);
/// the channel's source feeds the first whole, one flit per cycle, and the second's header
/// the cycle after the first's tail: it waits exactly M cycles at the source.
#[test]
fn a_source_sends_one_message_at_a_time() {
    for m in [1, 5, 16] {
        for (injection, wait) in [(Injection::Parallel, 0), (Injection::Channel, m)] {
            let mut engine = two_at_once(&pair(injection, 2, 32, m, 1), 2);
            while engine.window.delivered < 2 {
                engine.step();
                engine.check_invariants();
                assert!(engine.now < 1_000, "{injection:?} M {m}: not delivered");
            }
            assert_eq!(engine.window.wait_sum, f64::from(wait), "{injection:?} M {m}");
        }
    }
}

/// A header that waits for its route (a long `router_delay`) at the source router: the
/// channel's source feeds its message until the VC's buffer is full and the next message
/// stays in the source queue. The parallel source has both messages in its VCs, whole (their
/// headers leave at once, without a source router's pipeline, and wait at the next router).
#[test]
fn a_waiting_header_holds_its_source_once_its_buffer_is_full() {
    for depth in [2, 4, 6] {
        for injection in [Injection::Parallel, Injection::Channel] {
            let mut engine = two_at_once(&pair(injection, 2, depth, 16, 30), 2);
            for _ in 0..20 {
                engine.step();
            }
            engine.check_invariants();
            let what = format!("{injection:?}, depth {depth}");
            let buffered = engine.injection_buffered(0);
            if injection == Injection::Channel {
                assert_eq!(buffered, depth, "{what}");
                assert_eq!(engine.backlog_per_node(), 0.5, "{what}: one message queued");
            } else {
                // At most two buffers' worth has left the 32 flits.
                assert!(buffered >= 32 - 2 * depth, "{what}: {buffered}");
                assert_eq!(engine.backlog_per_node(), 0.0, "{what}");
            }
            assert_eq!(engine.window.delivered, 0, "{what}");
        }
    }
}
