//! External methods end to end: the Python M/D/1 adapter beside programs that fail, hang and
//! print garbage; failures are rows, never the end of the run; the cache reruns only what
//! failed or what an edited input touches.

use std::path::Path;

use crate::common::{Scratch, copy_in, stderr, stdout};

/// A scratch directory with the adapter under `adapters/` and the bad programs under `bad/`.
fn scratch_with_programs() -> Scratch {
    let scratch = Scratch::new();
    copy_in(&scratch, "adapters/md1_channel.py", "adapters/md1_channel.py");
    for bad in ["exit3.py", "hang.py", "garbage.py"] {
        copy_in(&scratch, &format!("tests/fixtures/external/{bad}"), &format!("bad/{bad}"));
    }
    scratch
}

/// The Python model and simulation, and the three bad programs, at two loads.
const MIXED: &str = "\
name: mixed
seed: 3
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  message_length: 8
load: {rates: [0.002, 0.01]}
methods:
  external:
    - name: md1
      kind: model
      command: [python3, adapters/md1_channel.py]
      inputs: [adapters/md1_channel.py]
      version: '0.1'
    - name: md1_sim
      kind: simulation
      command: [python3, adapters/md1_channel.py]
      inputs: [adapters/md1_channel.py]
      version: '0.1'
      replications: 2
      options: {messages: 2000}
    - name: failing
      kind: model
      command: [python3, bad/exit3.py]
      inputs: [bad/exit3.py]
      version: '1'
    - name: hanging
      kind: model
      command: [python3, bad/hang.py]
      inputs: [bad/hang.py]
      version: '1'
      timeout_seconds: 1
    - name: garbage
      kind: model
      command: [python3, bad/garbage.py]
      inputs: [bad/garbage.py]
      version: '1'
report: {figures: []}
";

#[test]
fn bad_programs_give_failed_rows_and_a_rerun_retries_only_them() {
    let scratch = scratch_with_programs();
    scratch.spec("mixed.yaml", MIXED);
    let validate = scratch.run(&["validate", "mixed.yaml"]);
    assert_eq!(validate.status.code(), Some(0), "{}", stderr(&validate));
    let listed = stdout(&validate);
    for command in ["python3 adapters/md1_channel.py", "python3 bad/hang.py"] {
        assert!(listed.contains(command), "validate lists {command}:\n{listed}");
    }
    let plan = stdout(&scratch.run(&["plan", "mixed.yaml"]));
    // Per load: md1 1, md1_sim 2, failing 1, hanging 1, garbage 1 = 6 External; 1 Aggregate.
    assert!(plan.contains("External           12"), "{plan}");
    assert!(plan.contains("Aggregate           2"), "{plan}");
    assert!(plan.contains("python3 bad/garbage.py"), "{plan}");

    let started = std::time::Instant::now();
    let output = scratch.run(&["run", "mixed.yaml", "-j", "2"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "some tasks failed:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(started.elapsed().as_secs() < 60, "the hanging program was not stopped");
    assert!(err.contains("14 tasks run, 0 cached, 6 failed"), "{err}");

    let rows = scratch.rows("mixed");
    let of = |method: &str| rows.iter().filter(|r| r.method == method).collect::<Vec<_>>();
    let md1 = of("md1");
    assert_eq!(md1.len(), 2);
    for row in &md1 {
        assert_eq!(row.status, "ok", "{row:?}");
        assert_eq!(row.evaluator, "md1@0.1");
        assert!(row.latency.is_some_and(|l| l > 8.0), "{row:?}");
        assert_eq!(row.replication, None);
    }
    let sim = of("md1_sim");
    assert_eq!(sim.len(), 6, "two replications and an aggregate per load");
    let aggregates: Vec<_> = sim.iter().filter(|r| r.replication.is_none()).collect();
    assert_eq!(aggregates.len(), 2);
    for aggregate in aggregates {
        assert_eq!(aggregate.replications, Some(2));
        assert!(aggregate.latency_ci95.is_some_and(|ci| ci > 0.0), "{aggregate:?}");
        let reps: Vec<f64> = sim
            .iter()
            .filter(|r| r.rate == aggregate.rate && r.replication.is_some())
            .filter_map(|r| r.latency)
            .collect();
        let mean = reps.iter().sum::<f64>() / reps.len() as f64;
        assert!((aggregate.latency.unwrap_or(f64::NAN) - mean).abs() < 1e-9, "{aggregate:?}");
    }
    let seeds: std::collections::BTreeSet<u64> = sim.iter().filter_map(|r| r.seed).collect();
    assert_eq!(seeds.len(), 4, "each replication has its own seed");

    for (method, reason) in [
        ("failing", "exited with status 3"),
        ("hanging", "timed out after 1 s and was killed"),
        ("garbage", "printed output that is not one JSON object"),
    ] {
        let failed = of(method);
        assert_eq!(failed.len(), 2, "{method}");
        for row in failed {
            assert_eq!(row.status, "failed", "{row:?}");
            let error = row.error.as_deref().unwrap_or_default();
            assert!(error.contains(reason), "{method}: {error}");
            let log = error.split("log: ").nth(1).unwrap_or_default();
            assert!(log.ends_with(".log") && Path::new(log).is_file(), "{method}: {error}");
        }
    }
    let failing = of("failing");
    let error = failing[0].error.as_deref().unwrap_or_default();
    assert!(error.contains("this evaluator always fails"), "the last line of stderr: {error}");
    let log = std::fs::read_to_string(error.split("log: ").nth(1).unwrap_or_default())
        .unwrap_or_default();
    assert!(log.contains("exit3.py: this evaluator always fails"), "{log}");
    let garbage = of("garbage");
    let log = std::fs::read_to_string(
        garbage[0].error.as_deref().unwrap_or_default().split("log: ").nth(1).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert!(log.contains("Latency = 42 cycles (not JSON)"), "stdout kept in the log: {log}");

    // Failed tasks are not cached: a re-run runs exactly those six again.
    let again = scratch.run(&["run", "mixed.yaml", "-j", "2"]);
    let err = stderr(&again);
    assert_eq!(again.status.code(), Some(1), "{err}");
    assert!(err.contains("6 tasks run, 8 cached, 6 failed"), "{err}");
}

/// A spec of the built-in simulation beside two external methods, each with its own adapter.
const TWO_ADAPTERS: &str = "\
name: two
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  virtual_channels: 2
  message_length: 8
load: {rates: [0.002, 0.01]}
methods:
  simulation: {cycles: 2000, warmup_cycles: 200}
  external:
    - name: md1
      kind: model
      command: [python3, adapters/md1_channel.py]
      inputs: [adapters/md1_channel.py]
      version: '0.1'
    - name: md1_sim
      kind: simulation
      command: [python3, adapters/copy.py]
      inputs: [adapters/copy.py]
      version: '0.1'
      replications: 2
      options: {messages: 2000}
report: {figures: []}
";

#[test]
fn editing_an_adapter_reruns_its_tasks_only() {
    let scratch = Scratch::new();
    copy_in(&scratch, "adapters/md1_channel.py", "adapters/md1_channel.py");
    copy_in(&scratch, "adapters/md1_channel.py", "adapters/copy.py");
    scratch.spec("two.yaml", TWO_ADAPTERS);
    let first = scratch.run(&["run", "two.yaml", "-j", "2", "--quiet"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let rows = scratch.rows("two");
    assert!(rows.iter().any(|r| r.method == "simulation"), "the built-in method's rows");
    assert!(rows.iter().all(|r| r.status == "ok"), "{rows:?}");

    let again = scratch.run(&["run", "two.yaml"]);
    assert!(stderr(&again).contains("0 tasks run, 12 cached"), "{}", stderr(&again));

    let adapter = scratch.path().join("adapters/md1_channel.py");
    let mut text = std::fs::read_to_string(&adapter).expect("read adapter");
    text.push_str("\n# an edit\n");
    std::fs::write(&adapter, text).expect("edit adapter");
    let plan = stdout(&scratch.run(&["plan", "two.yaml"]));
    assert!(plan.contains("External            6        4"), "{plan}");
    let edited = scratch.run(&["run", "two.yaml"]);
    let err = stderr(&edited);
    assert_eq!(edited.status.code(), Some(0), "{err}");
    assert!(err.contains("2 tasks run, 10 cached"), "only md1's two tasks rerun: {err}");
    let after = scratch.rows("two");
    let md1_ids = |rows: &[runner::store::row::Row]| -> Vec<String> {
        rows.iter().filter(|r| r.method == "md1").map(|r| r.task_id.clone()).collect()
    };
    assert_ne!(md1_ids(&rows), md1_ids(&after), "md1's task ids changed with its input");
    let others = |rows: &[runner::store::row::Row]| -> Vec<String> {
        rows.iter().filter(|r| r.method != "md1").map(|r| r.task_id.clone()).collect()
    };
    assert_eq!(others(&rows), others(&after));
}

#[test]
fn a_scenario_the_program_cannot_evaluate_is_unsupported_not_failed() {
    let scratch = Scratch::new();
    copy_in(&scratch, "adapters/md1_channel.py", "adapters/md1_channel.py");
    let spec = "\
name: unsupported
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  traffic: {pattern: [uniform, transpose]}
load: {rates: [0.002]}
methods:
  external:
    - {name: md1, kind: model, command: [python3, adapters/md1_channel.py], version: '0.1'}
report: {figures: []}
";
    scratch.spec("u.yaml", spec);
    // `--only model` keeps the external methods of kind model: this spec has one.
    let output = scratch.run(&["run", "u.yaml", "--quiet", "--only", "model"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let rows = scratch.rows("unsupported");
    assert_eq!(rows.len(), 2);
    let transpose = rows.iter().find(|r| r.traffic == "transpose").expect("a transpose row");
    assert_eq!(transpose.status, "unsupported");
    assert!(
        transpose.error.as_deref().is_some_and(|e| e.contains("transpose traffic")),
        "{transpose:?}"
    );
    assert!(rows.iter().any(|r| r.traffic == "uniform" && r.status == "ok"));
}

/// Validates `text` in a scratch directory holding `adapters/md1_channel.py`; returns stderr,
/// asserting exit code 2.
fn refused(text: &str) -> String {
    let scratch = Scratch::new();
    copy_in(&scratch, "adapters/md1_channel.py", "adapters/md1_channel.py");
    std::fs::create_dir_all(scratch.path().join("adapters/dir")).expect("mkdir");
    scratch.spec("bad.yaml", text);
    let output = scratch.run(&["validate", "bad.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

const BASE: &str = "\
name: bad
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
load: {rates: [0.002]}
methods:
  external:
";

#[test]
fn every_problem_of_an_external_method_is_located() {
    let err = refused(&format!(
        "{BASE}    - {{name: simulation, kind: model, command: [python3], version: '1'}}
    - {{name: 2fast, kind: model, command: [python3], version: '1'}}
    - {{name: twice, kind: model, command: [], version: '1'}}
    - {{name: twice, kind: model, command: [python3], version: '1', replications: 2}}
    - {{name: slow, kind: simulation, command: [python3], version: '', timeout_seconds: 0,
       replications: 0}}
    - {{name: rated, kind: model, command: [python3], version: '1', measure: throughput}}
"
    ));
    for (position, message) in [
        ("bad.yaml:8:", "`simulation` names a built-in method"),
        ("bad.yaml:9:", "\"2fast\" is not a name"),
        ("bad.yaml:10:", "`command` is empty"),
        ("bad.yaml:11:", "two external methods are named `twice`"),
        ("bad.yaml:11:", "`replications` applies to `kind: simulation` only"),
        ("bad.yaml:12:", "`version` is empty"),
        ("bad.yaml:12:", "`timeout_seconds` must be 1 to 604800"),
        ("bad.yaml:13:", "`replications` must be 1 to 10000"),
        ("bad.yaml:14:", "`measure` applies to `kind: simulation` only"),
    ] {
        assert!(err.contains(position), "{position} in {err}");
        assert!(err.contains(message), "{message} in {err}");
    }
    let err = refused(&format!(
        "{BASE}    - name: md1
      kind: model
      command: [./adapters/missing.py]
      inputs: [adapters/md1_channel.py, adapters/gone.cfg, adapters/dir]
      version: '1'
"
    ));
    assert!(err.contains("bad.yaml:10:"), "{err}");
    assert!(err.contains("program") && err.contains("missing.py does not exist"), "{err}");
    assert!(err.contains("bad.yaml:11:"), "{err}");
    assert!(err.contains("gone.cfg does not exist"), "{err}");
    assert!(err.contains("not a regular file (a directory)"), "{err}");
    assert!(!err.contains("md1_channel.py does not exist"), "{err}");
}

/// A time-out kills the program's whole process group: what it started in the background goes
/// too, and the run does not wait for it.
#[test]
fn a_time_out_kills_what_the_program_started() {
    let scratch = Scratch::new();
    let spec = "\
name: group
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
load: {rates: [0.002]}
methods:
  external:
    - name: spawner
      kind: model
      command: [sh, -c, 'sleep 613 & exec sleep 614']
      version: '1'
      timeout_seconds: 1
report: {figures: []}
";
    scratch.spec("g.yaml", spec);
    let started = std::time::Instant::now();
    let output = scratch.run(&["run", "g.yaml", "--quiet"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(started.elapsed().as_secs() < 5, "runner waited for the background child");
    let rows = scratch.rows("group");
    assert_eq!(rows[0].status, "failed");
    assert!(rows[0].error.as_deref().is_some_and(|e| e.contains("timed out after 1 s")));
    let left =
        std::process::Command::new("pgrep").args(["-f", "sleep 61[34]"]).output().expect("pgrep");
    assert!(left.stdout.is_empty(), "left running: {}", String::from_utf8_lossy(&left.stdout));
}

/// A model whose program edits its declared input while it runs, then answers well.
const SELF_EDITING: &str = "\
name: self_editing
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
load: {rates: [0.002]}
methods:
  external:
    - name: editing
      kind: model
      command: [python3, edit.py]
      inputs: [data.txt]
      version: '1'
report: {figures: []}
";

#[test]
fn an_input_edited_while_a_program_runs_is_refused_not_cached() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("data.txt"), "as hashed\n").expect("input");
    let program = "import sys\nsys.stdin.read()\nopen('data.txt', 'a').write('edited\\n')\n\
                   print('{\"status\": \"ok\", \"latency\": 40.0}')\n";
    std::fs::write(scratch.path().join("edit.py"), program).expect("program");
    scratch.spec("editing.yaml", SELF_EDITING);
    let run = scratch.run(&["run", "editing.yaml", "--quiet"]);
    let rows = scratch.rows("self_editing");
    let row = rows.iter().find(|r| r.method == "editing").expect("the method's row");
    assert_eq!(row.status, "failed", "{}", stderr(&run));
    let error = row.error.clone().unwrap_or_default();
    assert!(error.contains("changed since the spec was loaded"), "{error}");
    assert!(error.contains("while it ran"), "{error}");
    // Nothing was cached under the old content's id: the same id runs again.
    std::fs::write(scratch.path().join("data.txt"), "as hashed\n").expect("restore");
    let again = scratch.run(&["run", "editing.yaml"]);
    assert!(stderr(&again).contains(" 0 cached"), "{}", stderr(&again));
}

/// The processes alive (zombies aside) whose working directory is `dir`: what a program run
/// there, and everything it started, left running. Each as `pid: command line`.
fn alive_in(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().expect("scratch directory");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
        if matches!(state, None | Some("Z" | "X")) {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir) {
            let line = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let line = String::from_utf8_lossy(&line).replace('\0', " ");
            found.push(format!("{pid}: {}", line.trim_end()));
        }
    }
    found
}

/// Waits up to `seconds` for every process in `dir` to end; then kills what is left (a failing
/// test leaves nothing behind) and returns it.
fn left_running(dir: &Path, seconds: u64) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let mut left = alive_in(dir);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        left = alive_in(dir);
    }
    for process in &left {
        if let Some((pid, _)) = process.split_once(':') {
            let _ = std::process::Command::new("kill").args(["-9", pid]).status();
        }
    }
    left
}

/// A spec of one external model `escaper` running `command` (a shell line), with `timeout`.
fn escaper_spec(command: &str, timeout: u64) -> String {
    format!(
        "\
name: escaper
scenario:
  topology: {{kind: torus, radix: 4, dimensions: 2}}
  routing: dimension_order
load: {{rates: [0.002]}}
methods:
  external:
    - name: escaper
      kind: model
      command: [sh, -c, '{command}']
      version: '1'
      timeout_seconds: {timeout}
report: {{figures: []}}
"
    )
}

/// A program whose children leave its session (`setsid`, and `setsid -f`, which forks and
/// leaves its child an orphan), one of them holding its standard output open, and which then
/// answers and exits: its reply is used (it was "printed nothing" once the pipe had stayed open
/// for the 5 s grace), the run does not wait for the grace, and the children do not outlive
/// the program.
#[test]
fn a_child_that_calls_setsid_neither_outlives_its_program_nor_costs_its_reply() {
    let scratch = Scratch::new();
    let program = "cat >/dev/null; setsid sleep 120.25 & setsid -f sleep 120.5; \
                   echo \"{\\\"status\\\": \\\"ok\\\", \\\"latency\\\": 40}\"";
    scratch.spec("e.yaml", &escaper_spec(program, 60));
    let started = std::time::Instant::now();
    let output = scratch.run(&["run", "e.yaml", "--quiet"]);
    let took = started.elapsed();
    let left = left_running(scratch.path(), 2);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let rows = scratch.rows("escaper");
    assert_eq!(rows[0].status, "ok", "{:?}", rows[0].error);
    assert_eq!(rows[0].latency, Some(40.0));
    assert!(took.as_secs_f64() < 4.0, "runner waited {took:?} for the pipe a child held");
    assert!(left.is_empty(), "left running after the program ended: {left:?}");
}

/// `kill -9` of `runner` ends its external program and what the program started, in its
/// process group or in a session of its own, within a moment (they ran on to their time-out).
#[test]
fn killing_runner_with_sigkill_ends_its_programs_and_their_children() {
    let scratch = Scratch::new();
    let program = "setsid sleep 120.25 & sleep 120.5 & touch started; wait";
    scratch.spec("k.yaml", &escaper_spec(program, 600));
    let mut runner = scratch.command().args(["run", "k.yaml", "--quiet"]).spawn().expect("runner");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !scratch.path().join("started").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let running = alive_in(scratch.path());
    runner.kill().expect("kill -9 runner");
    let _ = runner.wait();
    let killed = std::time::Instant::now();
    let left = left_running(scratch.path(), 3);
    assert!(running.iter().any(|p| p.contains("sleep 120.25")), "never started: {running:?}");
    assert!(left.is_empty(), "left running after kill -9 of runner: {left:?}");
    eprintln!("gone {:?} after kill -9", killed.elapsed());
}

/// A time-out kills what the program started outside its process group too (`setsid`).
#[test]
fn a_time_out_kills_a_child_that_left_the_process_group() {
    let scratch = Scratch::new();
    let program = "setsid sleep 120.25 & setsid -f sleep 120.5; exec sleep 120.75";
    scratch.spec("t.yaml", &escaper_spec(program, 1));
    let started = std::time::Instant::now();
    let output = scratch.run(&["run", "t.yaml", "--quiet"]);
    let took = started.elapsed();
    let left = left_running(scratch.path(), 2);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let rows = scratch.rows("escaper");
    assert!(rows[0].error.as_deref().is_some_and(|e| e.contains("timed out after 1 s")));
    assert!(took.as_secs_f64() < 4.0, "runner waited {took:?} for the children");
    assert!(left.is_empty(), "left running after the time-out: {left:?}");
}
