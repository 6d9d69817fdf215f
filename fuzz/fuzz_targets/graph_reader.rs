//! Fuzz target: the graph-file reader on arbitrary text, and the simulator on what it accepts.
//!
//! `runner::scenario::graph::parse` reads the format of `docs/graph.md` (the spec layer refuses
//! a file that is not UTF-8 before it, so other bytes are skipped here). It must never panic; a
//! refusal lists 1 to 20 problems, each with words and a line and column inside the file (the
//! column at most one past the line's last character: "expected `terminals <n>`" points just
//! after the name). What it accepts keeps the format's rules: 1 to 1,024 routers with valid,
//! distinct names and at most 1,024 terminals each, 2 to 65,536 terminals in all, every link
//! between two different known routers and each pair once, at most 256 links a router, a
//! transit router with at least two links, the graph connected, the root a router, each
//! router's line the one declaring it. The accepted graph written back in the format reads the
//! same, and a small one is simulated for a few cycles with both of its routings, which must
//! neither panic nor fail. Run it with `cargo fuzz run graph_reader` from the repository root;
//! `docs/fuzzing.md` has the seeds, the dictionary and the record.
#![no_main]

use std::collections::HashSet;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use runner::scenario::graph::{
    Graph, MAX_DEGREE, MAX_NAME_CHARS, MAX_ROUTERS, MAX_TERMINALS, MAX_TERMINALS_PER_ROUTER, parse,
};
use runner::scenario::{Routing, Scenario, Topology};
use runner::sim::{self, Measure, SimOptions};

/// Asserts the rules of `docs/graph.md` on an accepted graph read from `lines`.
fn check(graph: &Graph, lines: &[&str]) {
    let routers = &graph.routers;
    assert!((1..=MAX_ROUTERS).contains(&routers.len()), "{} routers", routers.len());
    let mut names = HashSet::new();
    for router in routers {
        let name = &router.name;
        assert!(
            !name.is_empty()
                && name.chars().count() <= MAX_NAME_CHARS
                && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c)),
            "accepted the name {name:?}"
        );
        assert!(names.insert(name.as_str()), "router {name} twice");
        assert!(router.terminals <= MAX_TERMINALS_PER_ROUTER, "{name}: {}", router.terminals);
        let line = lines
            .get(router.line.wrapping_sub(1))
            .unwrap_or_else(|| panic!("router {name} on line {} of {}", router.line, lines.len()));
        let words: Vec<&str> = line.split('#').next().unwrap_or("").split_whitespace().collect();
        assert_eq!(words.get(..2), Some(&["router", name.as_str()][..]), "line {}", router.line);
    }
    assert!((2..=MAX_TERMINALS).contains(&graph.terminals()), "{} terminals", graph.terminals());
    let mut pairs = HashSet::new();
    for &(a, b) in &graph.links {
        assert!((a as usize) < routers.len() && (b as usize) < routers.len(), "link {a} {b}");
        assert_ne!(a, b, "a self-loop");
        assert!(pairs.insert((a.min(b), a.max(b))), "link {a} {b} twice");
    }
    let degrees = graph.degrees();
    for (router, &degree) in routers.iter().zip(&degrees) {
        assert!(degree as usize <= MAX_DEGREE, "{}: {degree} links", router.name);
        assert!(router.terminals > 0 || degree >= 2, "{} a dead-end transit router", router.name);
    }
    assert!((graph.root as usize) < routers.len(), "root {}", graph.root);
    // Connected: every router reached from router 0.
    let mut reached = vec![false; routers.len()];
    reached[0] = true;
    let mut grew = true;
    while grew {
        grew = false;
        for &(a, b) in &graph.links {
            let (a, b) = (a as usize, b as usize);
            if reached[a] != reached[b] {
                reached[a] = true;
                reached[b] = true;
                grew = true;
            }
        }
    }
    assert!(reached.iter().all(|&r| r), "accepted a disconnected graph");
}

/// The graph in the file format, as few words as it takes.
fn written(graph: &Graph) -> String {
    let names: Vec<&str> = graph.routers.iter().map(|r| r.name.as_str()).collect();
    let mut text = format!("root {}\n", names[graph.root as usize]);
    for router in &graph.routers {
        text.push_str(&format!("router {} terminals {}\n", router.name, router.terminals));
    }
    for &(a, b) in &graph.links {
        text.push_str(&format!("link {} {}\n", names[a as usize], names[b as usize]));
    }
    text
}

/// A few cycles of the simulator on the graph, with `routing` on `virtual_channels` VCs.
fn simulate(graph: &Arc<Graph>, routing: Routing, virtual_channels: u32) {
    let scenario = Scenario {
        routing,
        virtual_channels,
        message_length: 4,
        ..Scenario::new(Topology::Graph { graph: Arc::clone(graph) })
    };
    let options = SimOptions {
        warmup_cycles: 0,
        cycles: 40,
        max_cycles: 40,
        deadlock_cycles: 1_000,
        measure: Measure::Latency,
        ..SimOptions::default()
    };
    if let Err(e) = sim::simulate(&scenario, 0.05, &options, 1, None) {
        panic!("the simulator refused an accepted graph with {routing:?}: {e}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines: Vec<&str> = text.split('\n').collect();
    match parse("fuzz.txt", text, String::new()) {
        Err(errors) => {
            assert!((1..=20).contains(&errors.len()), "{} problems", errors.len());
            for error in &errors {
                assert!(error.message.len() >= 8, "a problem without words: {error:?}");
                let line = lines
                    .get(error.line.wrapping_sub(1))
                    .unwrap_or_else(|| panic!("line {} of {}: {error:?}", error.line, lines.len()));
                let width = line.strip_suffix('\r').unwrap_or(line).chars().count();
                assert!(
                    (1..=width.max(1) + 1).contains(&error.column),
                    "column {} of {width}: {error:?}",
                    error.column
                );
            }
        }
        Ok(graph) => {
            check(&graph, &lines);
            let again = parse("again.txt", &written(&graph), String::new());
            let again = again.unwrap_or_else(|e| panic!("written back, refused: {e:?}"));
            let shape = |g: &Graph| -> (Vec<(String, u32)>, Vec<(u32, u32)>, u32) {
                let routers = g.routers.iter().map(|r| (r.name.clone(), r.terminals)).collect();
                (routers, g.links.clone(), g.root)
            };
            assert_eq!(shape(&graph), shape(&again), "written back, read otherwise");
            if graph.routers.len() <= 32 && graph.terminals() <= 64 {
                let graph = Arc::new(graph);
                simulate(&graph, Routing::UpDown, 1);
                simulate(&graph, Routing::Minimal, 2);
            }
        }
    }
});
