//! Routing tables from graph files (`routing: table`, docs/graph.md), by property: random
//! tables on random small graphs, some with stray lines, are either refused with every problem
//! located inside the file, or accepted, and then they run past saturation without the
//! deadlock watchdog firing and deliver what they accept. The parser's checks (every pair
//! routed, no loop, an acyclic (link, class) dependency graph unless an escape is declared)
//! are what makes that promise; this test holds the simulator to it.

use std::cell::Cell;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use runner::measurement::Status;
use runner::scenario::{Routing, Scenario, Topology, graph};
use runner::sim::{Measure, SimOptions, check, simulate};

use crate::common::no_panic;

/// How a route changes the class, as written.
fn class_word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just(String::new()),
        2 => (0u32..3).prop_map(|k| format!(" class {k}")),
        2 => Just(" class +1".to_owned()),
    ]
}

/// A ring of `n` routers `r0..` with chords, terminals per router, and for every ordered pair
/// a random set of neighbours (any neighbour, so loops and dead ends happen), each with a
/// random class; sometimes `escape up_down`, sometimes a stray line: a graph file's text.
fn case() -> impl Strategy<Value = String> {
    (3usize..7)
        .prop_flat_map(|n| {
            let chords = prop::collection::vec((0..n, 0..n), 0..n);
            let terminals = prop::collection::vec(0u32..3, n);
            // Per (at, dest): a bit mask of the neighbours offered (by neighbour order) and a class.
            let choices = prop::collection::vec((any::<u8>(), class_word()), n * n);
            let stray = prop::option::weighted(
                0.2,
                prop::sample::select(vec![
                    "route r0 zz r1",
                    "route r0 r1",
                    "route r0 r0 r1",
                    "escape duato",
                    "rout r0 r1 r1",
                ]),
            );
            (Just(n), chords, terminals, choices, any::<bool>(), stray)
        })
        .prop_map(|(n, chords, mut terminals, choices, escape, stray)| {
            if terminals.iter().sum::<u32>() < 2 {
                terminals[0] = 2;
            }
            let mut links: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
            for (a, b) in chords {
                let (a, b) = (a.min(b), a.max(b));
                if a != b && !links.iter().any(|&(x, y)| (x.min(y), x.max(y)) == (a, b)) {
                    links.push((a, b));
                }
            }
            let mut text = String::new();
            for (i, t) in terminals.iter().enumerate() {
                text.push_str(&format!("router r{i} terminals {t}\n"));
            }
            for &(a, b) in &links {
                text.push_str(&format!("link r{a} r{b}\n"));
            }
            let neighbours = |u: usize| -> Vec<usize> {
                links
                    .iter()
                    .filter_map(|&(a, b)| {
                        if a == u {
                            Some(b)
                        } else if b == u {
                            Some(a)
                        } else {
                            None
                        }
                    })
                    .collect()
            };
            for at in 0..n {
                for dest in (0..n).filter(|&d| d != at) {
                    let (mask, class) = &choices[at * n + dest];
                    let offered: Vec<usize> = neighbours(at)
                        .into_iter()
                        .enumerate()
                        .filter(|(i, next)| mask >> (i % 8) & 1 == 1 || *next == dest)
                        .map(|(_, next)| next)
                        .collect();
                    for next in offered {
                        text.push_str(&format!("route r{at} r{dest} r{next}{class}\n"));
                    }
                }
            }
            if escape {
                text.push_str("escape up_down\n");
            }
            if let Some(line) = stray {
                text.push_str(line);
                text.push('\n');
            }
            text
        })
}

fn parse(text: &str) -> Result<graph::Graph, Vec<graph::GraphError>> {
    let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
    graph::parse("table.txt", text, hash)
}

#[test]
fn random_tables_are_refused_where_located_or_run_without_deadlock() {
    let mut runner =
        TestRunner::new(Config { cases: 256, failure_persistence: None, ..Config::default() });
    let options = SimOptions {
        warmup_cycles: 300,
        cycles: 2_000,
        deadlock_cycles: 800,
        measure: Measure::Throughput { source_queue_capacity: 8 },
        ..SimOptions::default()
    };
    let (accepted, refused) = (Cell::new(0), Cell::new(0));
    runner
        .run(&case(), |text| {
            let lines = text.lines().count();
            match no_panic("parsing a table", || parse(&text))? {
                Err(errors) => {
                    refused.set(refused.get() + 1);
                    for e in &errors {
                        prop_assert!(
                            (1..=lines).contains(&e.line) && e.column >= 1,
                            "{e:?} outside the file of {lines} lines"
                        );
                    }
                }
                Ok(g) => {
                    let Some(table) = g.table.clone() else {
                        return Err(TestCaseError::fail("a file with routes and no table"));
                    };
                    accepted.set(accepted.get() + 1);
                    let v = table.classes + u32::from(table.escape);
                    let s = Scenario {
                        routing: Routing::Table,
                        virtual_channels: v.max(1),
                        message_length: 4,
                        ..Scenario::new(Topology::Graph { graph: Arc::new(g) })
                    };
                    prop_assert!(check(&s).is_ok(), "{:?}", check(&s));
                    let m =
                        no_panic("simulating a table", || simulate(&s, 0.6, &options, 3, None))?;
                    let m = m.map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let detail = m.detail.clone().unwrap_or_default();
                    prop_assert!(!detail.contains("deadlock"), "{detail}\n{}", text);
                    prop_assert!(
                        matches!(m.status, Status::Ok | Status::Saturated),
                        "{:?}: {detail}",
                        m.status
                    );
                    prop_assert!(m.throughput.unwrap_or(0.0) > 0.0, "nothing delivered");
                }
            }
            Ok(())
        })
        .unwrap();
    // Both sides were exercised.
    let (accepted, refused) = (accepted.get(), refused.get());
    assert!(accepted >= 5 && refused >= 5, "accepted {accepted}, refused {refused}");
}
