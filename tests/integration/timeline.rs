//! One pool for every spec of a run, its timeline, and `runner plan --cores` replaying it.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Scratch, comparable, stderr, stdout};

/// A small spec: model and simulation, two scenarios, three loads, two replications.
fn spec(name: &str, radix: u32) -> String {
    format!(
        "\
name: {name}
seed: 7
scenario:
  topology: {{kind: torus, radix: {radix}, dimensions: 2}}
  routing: nbc
  virtual_channels: 10
  message_length: [8, 16]
load:
  fraction_of_saturation: [0.1, 0.3, 0.5]
methods:
  model: {{name: nbc_torus}}
  simulation: {{cycles: 3000, warmup_cycles: 500, replications: 2}}
"
    )
}

/// The timelines in `.runner/timelines/`, oldest first.
fn timelines(scratch: &Scratch) -> Vec<PathBuf> {
    let dir = scratch.path().join(".runner/timelines");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    paths
}

/// The task events (`ph: X`, not the bundle renders) of a timeline file.
fn tasks(path: &PathBuf) -> Vec<Value> {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    value["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] != "Report")
        .cloned()
        .collect()
}

/// Two specs in one run share the workers; each bundle holds exactly the rows a run of its spec
/// alone makes; the timeline records every task once, each after its inputs, on a worker of the
/// pool; a second, forced run estimates each task at what it took the first time; and
/// `runner plan --cores` replays the run on any number of cores.
#[test]
fn specs_share_one_pool_and_the_run_leaves_a_timeline_to_replay() {
    let scratch = Scratch::new();
    let a = scratch.spec("a.yaml", &spec("pool_a", 4));
    let b = scratch.spec("b.yaml", &spec("pool_b", 6));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let output = scratch.run(&["run", a, b, "-j", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("timeline: ") && said.contains("busy over"), "{said}");

    // Each spec alone, in a scratch of its own: the same rows.
    for (name, path) in [("pool_a", a), ("pool_b", b)] {
        let alone = Scratch::new();
        let copy = alone.spec("spec.yaml", &std::fs::read_to_string(path).unwrap());
        let output = alone.run(&["run", copy.to_str().unwrap(), "-j", "1", "-q"]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(comparable(scratch.rows(name)), comparable(alone.rows(name)), "{name}");
    }

    let saved = timelines(&scratch);
    assert_eq!(saved.len(), 1, "{saved:?}");
    let first = tasks(&saved[0]);
    // Each bundle on a track of its own, with the steps of writing it nested inside.
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
    for name in ["pool_a", "pool_b"] {
        let bundle: Vec<&Value> = value["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "Report" && e["args"]["spec"] == name)
            .collect();
        let whole = bundle.iter().find(|e| e["name"] == format!("Report | {name}")).unwrap();
        let (from, to) = (
            whole["ts"].as_f64().unwrap(),
            whole["ts"].as_f64().unwrap() + whole["dur"].as_f64().unwrap(),
        );
        for step in ["results.parquet", "report"] {
            let event =
                bundle.iter().find(|e| e["name"] == format!("Report | {name} | {step}")).unwrap();
            assert_eq!(event["tid"], whole["tid"]);
            let start = event["ts"].as_f64().unwrap();
            assert!(start >= from && start + event["dur"].as_f64().unwrap() <= to + 1.0, "{event}");
        }
    }
    let plan = scratch.run(&["plan", a, b]);
    let planned: usize = stdout(&plan)
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_uppercase()))
        .filter(|l| !l.contains("Gather") && !l.contains("Report"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
        .sum();
    assert_eq!(first.len(), planned, "one event per compute task\n{}", stdout(&plan));
    let mut end: HashMap<String, f64> = HashMap::new();
    for event in &first {
        let id = event["args"]["id"].as_str().unwrap().to_string();
        assert!(event["tid"].as_u64().unwrap() < 2, "{event}");
        assert!(event["args"]["spec"] == "pool_a" || event["args"]["spec"] == "pool_b");
        assert!(
            end.insert(id, event["ts"].as_f64().unwrap() + event["dur"].as_f64().unwrap())
                .is_none()
        );
    }
    for event in &first {
        let start = event["ts"].as_f64().unwrap();
        for input in event["args"]["inputs"].as_array().into_iter().flatten() {
            let done = end[input.as_str().unwrap()];
            assert!(done <= start, "{event} started before its input ended ({done})");
        }
    }

    // A forced re-run estimates every task at what it took the first time.
    let output = scratch.run(&["run", a, b, "-j", "2", "--force", "-q"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let saved = timelines(&scratch);
    assert_eq!(saved.len(), 2, "{saved:?}");
    let took: HashMap<&str, f64> = first
        .iter()
        .map(|e| (e["args"]["id"].as_str().unwrap(), e["dur"].as_f64().unwrap() / 1e6))
        .collect();
    for event in tasks(&saved[1]) {
        let estimate = event["args"]["estimate_seconds"].as_f64().unwrap();
        let before = took[event["args"]["id"].as_str().unwrap()];
        assert!((estimate - before).abs() <= 1e-9 * before.max(1.0), "{estimate} vs {before}");
    }

    // The replay: the recorded run, then 1, 2 and 64 cores.
    let output = scratch.run(&["plan", "--cores", "1,64"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("recorded: ") && text.contains("critical path: "), "{text}");
    let rows: Vec<&str> =
        text.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[0].trim_start().starts_with("1 ") && rows[0].contains("100%"), "{text}");
    assert!(rows[1].contains("replay of the recorded run"), "{text}");

    // An explicit timeline, and the errors.
    let older = saved[0].to_str().unwrap();
    let output = scratch.run(&["plan", "--cores", "3", "--timeline", older]);
    assert!(output.status.success(), "{}", stderr(&output));
    let output = scratch.run(&["plan", "--cores", "2", "--timeline", older, a]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));

    // A forecast: the specs run, nothing left to run; a new spec, its tasks at learned costs.
    let output = scratch.run(&["plan", "--cores", "2", a, b]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("2 specs: 0 tasks to run"), "{}", stdout(&output));
    let c = scratch.spec("c.yaml", &spec("pool_c", 8));
    let output = scratch.run(&["plan", "--cores", "1,4", c.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("pool_c: ") && text.contains("tasks to run (not cached)"), "{text}");
    assert!(text.contains("learned from 2 timelines"), "{text}");
    let rows: Vec<&str> =
        text.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].contains("100%"), "{text}");
    let empty = Scratch::new();
    let output = empty.run(&["plan", "--cores", "2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no timeline in"), "{}", stderr(&output));
    let bad = empty.spec("bad.json", "{\"traceEvents\": 3}");
    let output = empty.run(&["plan", "--cores", "2", "--timeline", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a runner timeline"), "{}", stderr(&output));
}

/// A spec of one large network (64 x 64 with V = 2, the smallest torus that splits) at one
/// load.
fn large(name: &str, simulation: &str) -> String {
    format!(
        "\
name: {name}
seed: 7
scenario:
  topology: {{kind: torus, radix: 64, dimensions: 2}}
  routing: dimension_order
  virtual_channels: 2
  message_length: 8
load:
  rates: [0.002]
methods:
  simulation: {{cycles: 200, warmup_cycles: 100{simulation}}}
"
    )
}

/// The threads each simulation event of the newest timeline records (1 where it says none).
fn simulation_threads(scratch: &Scratch) -> Vec<u64> {
    let saved = timelines(scratch);
    tasks(saved.last().unwrap())
        .iter()
        .filter(|e| e["cat"] == "Simulate")
        .map(|e| e["args"]["threads"].as_u64().unwrap_or(1))
        .collect()
}

/// The run hands a large network alone the idle workers, and its rows are those of one
/// thread; two such simulations side by side take one worker each; `threads: 1` in the spec
/// keeps one thread, and a count is held to the workers.
#[test]
fn a_large_network_alone_runs_on_the_idle_workers_with_the_results_of_one_thread() {
    let scratch = Scratch::new();
    let spec = scratch.spec("large.yaml", &large("large", ""));
    let output = scratch.run(&["run", spec.to_str().unwrap(), "-j", "2", "-q"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(simulation_threads(&scratch), [2]);

    let one = Scratch::new();
    let spec = one.spec("large.yaml", &large("large", ", threads: 1"));
    let output = one.run(&["run", spec.to_str().unwrap(), "-j", "2", "-q"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(simulation_threads(&one), [1]);
    assert_eq!(comparable(scratch.rows("large")), comparable(one.rows("large")));

    let pair = Scratch::new();
    let spec = pair.spec("large.yaml", &large("large", ", replications: 2"));
    let output = pair.run(&["run", spec.to_str().unwrap(), "-j", "2", "-q"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(simulation_threads(&pair), [1, 1]);

    let held = Scratch::new();
    let spec = held.spec("large.yaml", &large("large", ", threads: 8"));
    let output = held.run(&["run", spec.to_str().unwrap(), "-j", "2", "-q"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(simulation_threads(&held), [2]);
}
