//! `routing: table` tests: a table of every minimal hop over the up*/down* escape reproduces
//! `minimal` bit for bit; a ring with a dateline class and the committed NSFNET table
//! (`experiments/graphs/nsfnet14_distance_classes.txt`) route at exact zero-load latency, with
//! acyclic VC-level channel dependencies, and never deadlock past saturation; a table is
//! refused where it cannot run.

use super::super::super::tests::{delivered_checking_invariants, lone_message_with};
use super::super::super::{Measure, SimOptions, check, simulate};
use super::super::dragonfly::tests::cyclic;
use super::tests::{IRREGULAR, dependencies, on, parse};
use super::*;
use crate::measurement::Status;
use crate::scenario::{Routing, Scenario, Topology};

/// `text` with a route for every router and destination router with terminals: every
/// neighbour one hop closer, in the order of the router's links (the order `minimal` offers
/// them), and `escape up_down`.
fn every_minimal_hop(text: &str) -> String {
    let graph = parse("g.txt", text);
    let net = GraphNetwork::new(&graph).unwrap();
    let mut adjacent = vec![Vec::new(); graph.routers.len()];
    for &(a, b) in &graph.links {
        adjacent[a as usize].push(b);
        adjacent[b as usize].push(a);
    }
    let mut out = format!("{text}escape up_down\n");
    for (t, dest) in graph.routers.iter().enumerate() {
        if dest.terminals == 0 {
            continue;
        }
        for (u, at) in graph.routers.iter().enumerate() {
            for &v in adjacent[u].iter().filter(|_| u != t) {
                if net.distance(v, t as u32) + 1 == net.distance(u as u32, t as u32) {
                    let next = &graph.routers[v as usize].name;
                    out.push_str(&format!("route {} {} {next}\n", at.name, dest.name));
                }
            }
        }
    }
    out
}

#[test]
fn every_minimal_hop_over_the_escape_reproduces_minimal_bit_for_bit() {
    let latency = SimOptions { warmup_cycles: 300, cycles: 3_000, ..SimOptions::default() };
    let overload = SimOptions {
        measure: Measure::Throughput { source_queue_capacity: 8 },
        deadlock_cycles: 1_000,
        ..latency.clone()
    };
    for text in IRREGULAR.iter().copied().chain([mesh_text(3).as_str()]) {
        let table_text = every_minimal_hop(text);
        for (v, rate, options) in [(2, 0.02, &latency), (3, 0.03, &latency), (2, 0.4, &overload)] {
            let minimal = on(text, Routing::Minimal, v, 6);
            let table = on(&table_text, Routing::Table, v, 6);
            let expected = simulate(&minimal, rate, options, 11, None).unwrap();
            let measured = simulate(&table, rate, options, 11, None).unwrap();
            assert_eq!(format!("{measured:?}"), format!("{expected:?}"), "V = {v}, {rate}");
        }
    }
}

/// A ring of `k` routers `r0..`, one terminal each, routed the shorter way (ties clockwise),
/// with a dateline in each direction: the hop from `r<k-1>` to `r0` and the one back move to
/// class 1.
fn dateline_ring(k: u32) -> String {
    let mut text = String::new();
    for i in 0..k {
        text.push_str(&format!("router r{i} terminals 1\n"));
    }
    for i in 0..k {
        text.push_str(&format!("link r{i} r{}\n", (i + 1) % k));
    }
    for at in 0..k {
        for dest in (0..k).filter(|&d| d != at) {
            let clockwise = (dest + k - at) % k <= k / 2;
            let next = if clockwise { (at + 1) % k } else { (at + k - 1) % k };
            let crosses = (at == k - 1 && next == 0) || (at == 0 && next == k - 1);
            let class = if crosses { " class 1" } else { "" };
            text.push_str(&format!("route r{at} r{dest} r{next}{class}\n"));
        }
    }
    text
}

/// Zero-load latency of every pair, against `hops + M + router_delay (hops - 1)` with
/// `hops = 2 + distance`: the routes of these tables are shortest paths.
fn assert_zero_load_minimal(s: &Scenario) {
    let net = GraphNetwork::new(s.topology.graph().unwrap()).unwrap();
    for source in 0..net.terminals {
        for dest in (0..net.terminals).filter(|&d| d != source) {
            let hops = 2 + net.distance(net.router_of(source), net.router_of(dest));
            let (latency, measured) = lone_message_with(s, source, dest, None);
            assert_eq!(measured, f64::from(hops), "{source}->{dest}");
            let zero = hops + s.message_length + s.router_delay * (hops - 1);
            assert_eq!(latency, f64::from(zero), "{source}->{dest}");
        }
    }
}

/// Exact zero-load latency, acyclic VC-level dependencies, and overload without deadlock.
fn assert_sound(text: &str, v: u32) {
    let s = on(text, Routing::Table, v, 5);
    assert_zero_load_minimal(&s);
    assert_zero_load_minimal(&Scenario { router_delay: 2, buffer_depth: 3, ..s.clone() });
    let edges = dependencies(&s, false);
    assert!(!edges.is_empty());
    assert!(!cyclic(&edges), "the table's VC dependencies have a cycle");
    let options = SimOptions {
        warmup_cycles: 500,
        cycles: 4_000,
        deadlock_cycles: 1_000,
        measure: Measure::Throughput { source_queue_capacity: 8 },
        ..SimOptions::default()
    };
    let m = simulate(&on(text, Routing::Table, v, 8), 0.5, &options, 7, None).unwrap();
    assert_eq!(m.status, Status::Saturated, "{:?}", m.detail);
    assert!(delivered_checking_invariants(&on(text, Routing::Table, v, 8), 0.3, 2_000, 97) > 100);
}

#[test]
fn a_ring_with_a_dateline_routes_exactly_and_never_deadlocks() {
    let text = dateline_ring(6);
    assert_eq!(parse("ring.txt", &text).table.as_ref().map(|t| t.classes), Some(2));
    assert_sound(&text, 2);
    assert_sound(&text, 4);
    let error = check(&on(&text, Routing::Table, 1, 4)).expect_err("two classes").0;
    assert!(error.contains("uses 2 VC class(es), so it needs virtual_channels >= 2"), "{error}");
}

#[test]
fn the_committed_nsfnet_table_is_minimal_and_deadlock_free() {
    let text = include_str!("../../../../experiments/graphs/nsfnet14_distance_classes.txt");
    let table = parse("nsfnet.txt", text).table.clone().unwrap();
    assert_eq!((table.classes, table.escape), (3, false));
    assert_sound(text, 3);
}

#[test]
fn a_table_is_refused_where_it_cannot_run() {
    let error = check(&on(IRREGULAR[0], Routing::Table, 2, 4)).expect_err("no routes").0;
    assert!(error.contains("has none"), "{error}");
    let torus = Scenario {
        routing: Routing::Table,
        ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
    };
    let error = check(&torus).expect_err("not a graph").0;
    assert!(error.contains("route` lines of a graph file"), "{error}");
    let escaped = format!("{}escape up_down\n", dateline_ring(4));
    let error = check(&on(&escaped, Routing::Table, 2, 4)).expect_err("3 VCs").0;
    assert!(
        error.contains("besides the escape VC 0, so it needs virtual_channels >= 3"),
        "{error}"
    );
    assert!(check(&on(&escaped, Routing::Table, 3, 4)).is_ok());
}
