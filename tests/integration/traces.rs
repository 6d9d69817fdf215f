//! Trace replay end to end (`docs/traces.md`): task ids follow the trace's content, not its
//! path; bad traces (and replications of one trace) are refused at spec load with file, row
//! and column; a trace edited after load fails its task with the same location; rows are
//! identical under `-j 1` and `-j 2`.

use std::path::Path;

use crate::common::{Scratch, comparable, stderr};

/// A small trace spec: a 4x4 torus replaying `t.csv` at two time scales.
const SPEC: &str = "\
name: small_trace
seed: 5
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: duato
  virtual_channels: 3
  traffic: {pattern: trace, trace: t.csv}
load:
  trace_time_scale: [2, 1]
methods:
  simulation: {cycles: 3000, warmup_cycles: 200, replications: 1}
";

/// A deterministic trace on `nodes` nodes: one message every other cycle from a rotating
/// source, 6 flits, over `cycles` cycles.
fn trace(nodes: u32, cycles: u64) -> String {
    let mut text = String::from("cycle,source,destination,length\n");
    for cycle in (0..cycles).step_by(2) {
        let source = (cycle / 2) as u32 % nodes;
        let destination = (source * 7 + 3) % nodes;
        text.push_str(&format!("{cycle},{source},{destination},6\n"));
    }
    text
}

/// The task ids of the spec at `path`, in plan order.
fn task_ids(path: &Path) -> Vec<String> {
    let (_, experiment) = runner::spec::load(path).expect("the spec loads");
    let plan = runner::plan::build(&experiment, None);
    // Gather and Report have fixed ids.
    plan.graph
        .node_weights()
        .filter(|task| task.scenario.is_some())
        .map(|task| task.id.clone())
        .collect()
}

#[test]
fn task_ids_follow_the_traces_content_not_its_path() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("t.csv"), trace(16, 8_000)).expect("trace");
    let spec = scratch.spec("s.yaml", SPEC);
    let original = task_ids(&spec);
    // A renamed copy in another directory: the same tasks.
    std::fs::create_dir(scratch.path().join("elsewhere")).expect("mkdir");
    std::fs::rename(scratch.path().join("t.csv"), scratch.path().join("elsewhere/renamed.csv"))
        .expect("rename");
    let moved =
        scratch.spec("moved.yaml", &SPEC.replace("trace: t.csv", "trace: elsewhere/renamed.csv"));
    assert_eq!(task_ids(&moved), original);
    // One message's length edited: every task changes.
    let edited = trace(16, 8_000).replacen(",6\n", ",7\n", 1);
    std::fs::write(scratch.path().join("elsewhere/renamed.csv"), edited).expect("edit");
    let changed = task_ids(&moved);
    assert_eq!(changed.len(), original.len());
    assert!(changed.iter().all(|id| !original.contains(id)), "{changed:?}");
}

#[test]
fn replays_are_identical_under_j1_and_j2_and_report_the_offered_load() {
    let one = Scratch::new();
    let two = Scratch::new();
    for scratch in [&one, &two] {
        std::fs::write(scratch.path().join("t.csv"), trace(16, 8_000)).expect("trace");
        scratch.spec("s.yaml", SPEC);
    }
    let a = one.run(&["run", "s.yaml", "-j", "1"]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let b = two.run(&["run", "s.yaml", "-j", "2"]);
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    let rows = comparable(one.rows("small_trace"));
    assert_eq!(rows, comparable(two.rows("small_trace")));
    // 2 time scales x (1 replication + 1 aggregate), all measured.
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.status == "ok" && r.latency.is_some()), "{rows:#?}");
    let blake3 = runner::files::hash_regular(&one.path().join("t.csv")).expect("hash");
    for row in &rows {
        let scale = row.trace_time_scale.expect("a time scale");
        // 4,000 messages on 16 nodes over round(7998 s) + 1 cycles, 6 flits each.
        let duration = (7998.0 * scale).round() + 1.0;
        assert_eq!(row.rate, 4000.0 / (16.0 * duration));
        assert_eq!(row.trace_flit_load, Some(6.0 * 4000.0 / (16.0 * duration)));
        assert_eq!(row.trace_blake3.as_deref(), Some(blake3.as_str()));
        assert_eq!(row.traffic, "trace");
        assert_eq!(row.message_length, 6, "the trace's mean length");
    }
    // A rerun from an empty cache gives the same rows, bit for bit.
    let again = Scratch::new();
    std::fs::write(again.path().join("t.csv"), trace(16, 8_000)).expect("trace");
    again.spec("s.yaml", SPEC);
    let c = again.run(&["run", "s.yaml", "-j", "2"]);
    assert_eq!(c.status.code(), Some(0), "{}", stderr(&c));
    assert_eq!(comparable(again.rows("small_trace")), rows);
}

/// `runner validate` on the spec with `t.csv` holding `text`: exit 2 and stderr.
fn refused(spec: &str, text: &str) -> String {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("t.csv"), text).expect("trace");
    scratch.spec("s.yaml", spec);
    let output = scratch.run(&["validate", "s.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn bad_traces_are_refused_at_load_with_file_row_and_column() {
    // A trace recorded on 64 nodes, on the 16-node torus.
    let err = refused(SPEC, &trace(64, 8_000));
    assert!(err.contains("s.yaml:7:"), "the spec's `trace` line: {err}");
    assert!(
        err.contains("t.csv, row 4, column 3 (`destination`): node 17 does not exist: the network has nodes 0 to 15"),
        "{err}"
    );
    assert!(err.contains("more problems after these"), "{err}");
    // Every problem of the file, each located.
    let mut text = trace(16, 8_000);
    text.push_str("7999,1,2,0\n7998,1,2,4\n8000,1,2,1.5\n8001,1,2\n");
    let err = refused(SPEC, &text);
    for want in [
        "row 4002, column 4 (`length`): a message has at least 1 flit",
        "row 4003, column 1 (`cycle`): cycle 7998 is earlier than the previous row's",
        "row 4004, column 4 (`length`): 1.5 is not a whole number",
        "row 4005, column 4 (`length`): malformed row",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    let err = refused(SPEC, &trace(16, 8_000).replace("length", "length_words"));
    assert!(err.contains("row 1, column 4 (`length`): unknown length unit"), "{err}");
    let err = refused(&SPEC.replace("t.csv", "missing.csv"), "");
    assert!(err.contains("missing.csv does not exist"), "{err}");
    // A trace that ends within the warm-up at time scale 1.
    let err =
        refused(&SPEC.replace("warmup_cycles: 200", "warmup_cycles: 9000"), &trace(16, 8_000));
    assert!(err.contains("within the warm-up of 9000 cycles"), "{err}");
}

#[test]
fn spec_fields_that_conflict_with_a_trace_are_located() {
    let text = trace(16, 8_000);
    let cases = [
        (
            SPEC.replace("trace_time_scale: [2, 1]", "rates: [0.01]"),
            "s.yaml:9:",
            "trace traffic offers its own load",
        ),
        (
            SPEC.replace("virtual_channels: 3", "virtual_channels: 3\n  message_length: 8"),
            "s.yaml:7:",
            "`message_length` does not apply to trace traffic",
        ),
        (
            SPEC.replace("trace: t.csv}", "trace: t.csv, injection_process: bernoulli}"),
            "s.yaml:7:",
            "`injection_process` does not apply",
        ),
        (
            SPEC.replace("pattern: trace, trace: t.csv", "pattern: uniform, trace: t.csv"),
            "s.yaml:7:",
            "`trace` needs `pattern: trace`",
        ),
        (
            SPEC.replace("pattern: trace,", "pattern: [trace, uniform],"),
            "s.yaml:7:",
            "cannot be swept beside other patterns",
        ),
        (
            SPEC.replace("methods:\n", "methods:\n  model: {name: nbc_torus}\n"),
            "s.yaml:11:",
            "trace traffic is simulated only",
        ),
        (
            SPEC.replace("replications: 1", "target_precision: 0.05"),
            "s.yaml:11:68",
            "`target_precision` does not apply to trace traffic",
        ),
        (
            SPEC.replace("replications: 1", "replications: 2"),
            "s.yaml:11:64",
            "`replications: 2` with trace traffic: every replication replays the same messages",
        ),
        (
            SPEC.replace("replications: 1", "replications: 2"),
            "s.yaml:11:64",
            "a trace replay is one workload: use replications: 1; its interval is the \
             batch-means interval of the one replay",
        ),
    ];
    for (spec, at, want) in cases {
        let err = refused(&spec, &text);
        assert!(err.contains(at), "{want}: not at {at}: {err}");
        assert!(err.contains(want), "{want}: {err}");
    }
    // `trace_time_scale` without a trace.
    let scratch = Scratch::new();
    scratch.spec("u.yaml", &SPEC.replace("  traffic: {pattern: trace, trace: t.csv}\n", ""));
    let output = scratch.run(&["validate", "u.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("`trace_time_scale` applies to `traffic.pattern: trace` only")
    );
}

/// A trace edited after the spec was loaded (here, so that it holds a bad row): the task fails
/// before replaying it, saying that the file changed (never a panic, and never a replay of
/// content other than the hashed one, which the task id holds).
#[test]
fn a_trace_edited_after_the_spec_was_loaded_fails_its_task_unreplayed() {
    let scratch = Scratch::new();
    let path = scratch.path().join("t.csv");
    std::fs::write(&path, trace(16, 8_000)).expect("trace");
    let spec = scratch.spec("s.yaml", SPEC);
    let (_, experiment) = runner::spec::load(&spec).expect("the spec loads");
    let plan = runner::plan::build(&experiment, None);
    let edited = trace(16, 8_000).replacen("2,1,10,6\n", "2,1,99,6\n", 1);
    std::fs::write(&path, edited).expect("edit");
    let task = plan
        .graph
        .node_weights()
        .find(|t| t.kind == runner::plan::TaskKind::Simulate)
        .expect("a simulation task");
    let error = runner::exec::evaluate::evaluate(&experiment, task, None, &[], 1, None, None)
        .expect_err("the task fails");
    assert!(error.contains("t.csv changed since the spec was loaded"), "{error}");
}

/// Issue 24's small item: a Bernoulli or on/off load given as a fraction of the model's
/// saturation rate, which no model can give, is refused at the process with the way out.
#[test]
fn a_bursty_process_cannot_take_a_fraction_of_saturation() {
    let scratch = Scratch::new();
    scratch.spec(
        "b.yaml",
        "\
name: bursty
scenario:
  topology: {kind: torus, radix: 8, dimensions: 2}
  routing: nbc
  virtual_channels: 4
  traffic: {injection_process: [poisson, on_off], burst_length: 4}
load: {fraction_of_saturation: [0.5]}
methods: {model: {name: nbc_torus}, simulation: {}}
",
    );
    let output = scratch.run(&["validate", "b.yaml"]);
    let err = stderr(&output).replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("b.yaml:6:"), "{err}");
    assert!(
        err.contains("injection_process `on_off` cannot take its load as `fraction_of_saturation`"),
        "{err}"
    );
    assert!(err.contains("give the load as `load.rates`"), "{err}");
}

/// `runner simulate --trace`: one replay from the command line, its problems located.
#[test]
fn runner_simulate_replays_a_trace() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("t.csv"), trace(16, 8_000)).expect("trace");
    let args = ["simulate", "radix=4", "routing=duato", "virtual_channels=3", "--trace", "t.csv"];
    let output = scratch.run(
        &[
            &args[..],
            &["--trace-time-scale", "0.5", "--warmup-cycles", "200", "--cycles", "2000", "--json"],
        ]
        .concat(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the measurement as JSON");
    // 4,000 messages on 16 nodes over round(7998 x 0.5) + 1 = 4000 cycles.
    assert_eq!(json["rate"], 4000.0 / (16.0 * 4000.0), "{json}");
    assert!(json["latency"].as_f64().is_some(), "{json}");
    let small = scratch.run(&["simulate", "radix=3", "routing=duato", "--trace", "t.csv"]);
    assert_eq!(small.status.code(), Some(2));
    assert!(
        stderr(&small).contains("t.csv, row 3, column 3 (`destination`): node 10 does not exist")
    );
}

/// A cycle of 2^64 or more, written as digits or as a fraction or exponent (which the reader
/// reads as a double, in which `u64::MAX` is 2^64), is refused at its row and column, not read
/// as `u64::MAX`; `u64::MAX` itself is a cycle. Found by the property tests of
/// `reader_properties.rs`.
#[test]
fn a_trace_cycle_past_the_largest_whole_number_is_refused_not_rounded_down() {
    let scratch = Scratch::new();
    let path = scratch.path().join("t.csv");
    for cycle in ["18446744073709551616", "1.8446744073709552e19", "18446744073709551616.0"] {
        std::fs::write(&path, format!("cycle,source,destination,length\n0,0,1,4\n{cycle},1,0,4\n"))
            .expect("trace");
        let scanned = runner::trace::scan(&path, None, Some(2));
        let problems: Vec<&str> = scanned.problems.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(problems.len(), 1, "{cycle}: {problems:?}");
        assert!(
            problems[0].contains(&format!(
                "row 3, column 1 (`cycle`): {cycle} is larger than the 18446744073709551615 allowed"
            )),
            "{problems:?}"
        );
        assert_eq!(scanned.summary.messages, 1);
    }
    std::fs::write(&path, "0,0,1,4\n18446744073709551615,1,0,4\n").expect("trace");
    let scanned = runner::trace::scan(&path, None, Some(2));
    assert!(scanned.problems.is_empty(), "{:?}", scanned.problems);
    assert_eq!(scanned.summary.last_cycle, u64::MAX);
}
