//! Keeps `docs/inputs.md` true: one example per input class, run, with its exit code and message.
//!
//! The table is parsed; every class in it must have an example here and every example a row
//! there, and each example must exit with the table's code and print the table's text.

use std::process::Output;

use crate::common::{Scratch, stderr, stdout};

/// A model-only spec with one scenario and one load point (Saturation, Solve and Curve, plus
/// Gather and Report).
const SPEC: &str = "\
name: inputs
scenario:
  topology: {kind: fat_tree, processors: 16}
  routing: up_down
load: {rates: [0.001]}
methods: {model: {name: fat_tree}}
";

/// The cache entry of the spec's one Solve batch.
fn solve_entry(scratch: &Scratch) -> std::path::PathBuf {
    let entries = crate::common::entries_of_kind(&scratch.path().join(".runner/cache"), "Solve");
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

/// A simulation spec on a 4x4 torus; `RATE` and `CYCLES` are filled in.
const SIM: &str = "\
name: inputs_sim
seed: 3
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: duato
  virtual_channels: 3
  message_length: 8
load: {rates: [RATE]}
methods: {simulation: {cycles: CYCLES, warmup_cycles: 10, replications: 1}}
";

/// An external method running `sh -c PROGRAM` with a one-second time-out.
const EXTERNAL: &str = "\
name: inputs_external
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
load: {rates: [0.001]}
methods:
  external:
    - name: program
      kind: model
      command: [sh, -c, PROGRAM]
      version: '1'
      timeout_seconds: 1
report: {figures: []}
";

fn run_spec(scratch: &Scratch, text: &str, args: &[&str]) -> Output {
    scratch.spec("spec.yaml", text);
    scratch.run(&[&["run", "spec.yaml", "-q"][..], args].concat())
}

/// Runs SPEC once so the cache and the bundle exist.
fn ran(scratch: &Scratch) {
    let output = run_spec(scratch, SPEC, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// Sends `signal` to a long simulation run once its lock is taken (the handler is set by then).
fn interrupted(scratch: &Scratch) -> Output {
    let text = SIM.replace("RATE", "0.01").replace("CYCLES", "50000000");
    scratch.spec("spec.yaml", &text);
    let child = scratch
        .command()
        .args(["run", "spec.yaml", "-j", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    scratch.wait_for_lock("inputs_sim");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let sent = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    assert!(sent.is_ok_and(|s| s.success()), "could not send SIGTERM");
    child.wait_with_output().expect("wait")
}

/// Holds the run lock of SPEC's experiment in a second `runner run`, started while a first run
/// (a long simulation) holds it, and sends the waiting one SIGTERM: it must exit at once.
fn interrupted_waiting(scratch: &Scratch) -> Output {
    let text = SIM.replace("RATE", "0.01").replace("CYCLES", "50000000");
    scratch.spec("spec.yaml", &text);
    let mut holder = scratch
        .command()
        .args(["run", "spec.yaml", "-j", "1", "-q"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    scratch.wait_for_lock("inputs_sim");
    let waiter = scratch
        .command()
        .args(["run", "spec.yaml", "-j", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent =
        std::process::Command::new("kill").args(["-TERM", &waiter.id().to_string()]).status();
    assert!(sent.is_ok_and(|s| s.success()), "could not send SIGTERM");
    let started = std::time::Instant::now();
    let output = waiter.wait_with_output().expect("wait");
    assert!(
        started.elapsed().as_secs() < 5,
        "the waiting run took {:?} to stop",
        started.elapsed()
    );
    let _ = holder.kill();
    let _ = holder.wait();
    output
}

/// Sets up and runs the example of `class` in `scratch`.
fn example(class: &str, scratch: &Scratch) -> Output {
    let with = |from: &str, to: &str| SPEC.replace(from, to);
    let validate = |text: &[u8]| {
        std::fs::write(scratch.path().join("spec.yaml"), text).expect("write");
        scratch.run(&["validate", "spec.yaml"])
    };
    match class {
        "valid-spec" => scratch.run(&["run", &scratch.spec("spec.yaml", SPEC).to_string_lossy()]),
        "cached-rerun" => {
            ran(scratch);
            scratch.run(&["run", "spec.yaml"])
        }
        "warning-simulator-only-sweep" => {
            validate(with("routing: up_down", "routing: up_down\n  buffer_depth: [2, 4]").as_bytes())
        }
        "warning-many-threads" => run_spec(scratch, SPEC, &["-j", "10000"]),
        "warning-corrupt-cache-entry" => {
            ran(scratch);
            let path = solve_entry(scratch);
            let text = std::fs::read_to_string(&path).expect("entry");
            std::fs::write(&path, text.replace("\"status\":\"ok\"", "\"status\":\"saturated\""))
                .expect("write");
            run_spec(scratch, SPEC, &[])
        }
        "failed-tasks" => {
            run_spec(scratch, &SIM.replace("RATE", "0.000000001").replace("CYCLES", "100"), &[])
        }
        "external-program-fails" => run_spec(scratch, &EXTERNAL.replace("PROGRAM", "exit 3"), &[]),
        "external-program-times-out" => {
            run_spec(scratch, &EXTERNAL.replace("PROGRAM", "sleep 30"), &[])
        }
        "external-program-garbage" => {
            run_spec(scratch, &EXTERNAL.replace("PROGRAM", "echo Latency = 42"), &[])
        }
        "external-reply-out-of-domain" => run_spec(
            scratch,
            &EXTERNAL.replace(
                "PROGRAM",
                r#"'printf %s "{\"status\": \"ok\", \"latency\": 3, \"hops\": -2}"'"#,
            ),
            &[],
        ),
        "external-reply-duplicate-key" => run_spec(
            scratch,
            &EXTERNAL.replace(
                "PROGRAM",
                r#"'printf %s "{\"status\": \"ok\", \"latency\": 3, \"latency\": 4}"'"#,
            ),
            &[],
        ),
        "spec-external-input-missing" => validate(
            EXTERNAL.replace("PROGRAM", "true").replace("version:", "inputs: [gone.cfg]\n      version:")
                .as_bytes(),
        ),
        "spec-trace-bad-row" | "spec-trace-not-a-regular-file" => {
            let trace = scratch.path().join("t.csv");
            if class == "spec-trace-bad-row" {
                std::fs::write(&trace, "cycle,source,destination,length\n0,0,1,4\n1,0,99,4\n")
                    .expect("trace");
            } else {
                let made = std::process::Command::new("mkfifo").arg(&trace).status();
                assert!(made.is_ok_and(|s| s.success()), "mkfifo");
            }
            validate(
                "name: t\nscenario:\n  topology: {kind: torus, radix: 4, dimensions: 2}\n  \
                 routing: duato\n  virtual_channels: 3\n  traffic: {pattern: trace, trace: t.csv}\n\
                 load: {trace_time_scale: [1]}\nmethods: {simulation: {warmup_cycles: 0}}\n"
                    .as_bytes(),
            )
        }
        "verify-changed-file" => {
            ran(scratch);
            let report = scratch.path().join("reports/inputs/report.md");
            std::fs::write(&report, "edited\n").expect("write");
            scratch.run(&["verify", "reports/inputs"])
        }
        "diff-moved" => {
            ran(scratch);
            scratch.spec("other.yaml", &SPEC.replace("0.001", "0.002"));
            let other = scratch.run(&["run", "other.yaml", "-q", "--root", "b"]);
            assert_eq!(other.status.code(), Some(0), "{}", stderr(&other));
            scratch.run(&["diff", "reports/inputs", "b/reports/inputs"])
        }
        "diff-not-a-bundle" => scratch.run(&["diff", "nowhere", "nowhere"]),
        "diff-spec-as-bundle" => {
            scratch.spec("spec.yaml", SPEC);
            scratch.run(&["diff", "spec.yaml", "spec.yaml"])
        }
        "verify-check-zero" => {
            ran(scratch);
            scratch.run(&["verify", "reports/inputs", "--check", "0"])
        }
        "usage" => scratch.run(&["run", "--no-such-option"]),
        "spec-missing" => scratch.run(&["validate", "missing.yaml"]),
        "spec-not-a-regular-file" => scratch.run(&["validate", "/dev/zero"]),
        "spec-too-large" => validate(format!("{SPEC}# {}\n", "x".repeat(1 << 20)).as_bytes()),
        "spec-not-utf8" => {
            let mut bytes = SPEC.as_bytes().to_vec();
            bytes.insert(SPEC.find("routing").expect("routing") + 2, 0xff);
            validate(&bytes)
        }
        "spec-yaml-syntax" => validate(b"name: x\nscenario: [\n  topology: {kind\n"),
        "spec-duplicate-key" => {
            validate(with("routing: up_down", "routing: up_down\n  routing: up_down").as_bytes())
        }
        "spec-unknown-key" => {
            validate(with("routing: up_down", "routing: up_down\n  virtual_channel: 3").as_bytes())
        }
        "spec-bad-value" => validate(
            b"name: x\nscenario:\n  topology: {kind: torus, radix: 1, dimensions: 2}\n  routing: duato\nload: {rates: [0.01]}\nmethods: {simulation: {}}\n",
        ),
        "spec-long-name" => validate(with("name: inputs", &format!("name: {}", "n".repeat(255))).as_bytes()),
        "spec-too-many-tasks" => validate(
            SIM.replace("RATE", "0.01")
                .replace("CYCLES", "1000")
                .replace("radix: 4", "radix: {from: 4, to: 2002, step: 2}")
                .replace("replications: 1", "replications: 10000")
                .as_bytes(),
        ),
        "spec-too-many-panels" => validate(
            with("processors: 16", "processors: [16, 64, 256, 1024, 4096]")
                .replace("rates: [0.001]", "rates: {from: 0.0001, to: 0.001, points: 20}")
                .add_report("    - {panels: [task_id]}\n")
                .as_bytes(),
        ),
        "duplicate-names" => {
            scratch.spec("a.yaml", SPEC);
            scratch.spec("b.yaml", SPEC);
            scratch.run(&["run", "a.yaml", "b.yaml"])
        }
        "root-is-a-file" => {
            std::fs::write(scratch.path().join("afile"), b"").expect("write");
            run_spec(scratch, SPEC, &["--root", "afile"])
        }
        "bundle-path-is-a-file" => {
            std::fs::create_dir_all(scratch.path().join("reports")).expect("mkdir");
            std::fs::write(scratch.path().join("reports/inputs"), b"").expect("write");
            run_spec(scratch, SPEC, &[])
        }
        "cache-unwritable" => {
            std::fs::create_dir_all(scratch.path().join(".runner")).expect("mkdir");
            std::fs::write(scratch.path().join(".runner/cache"), b"").expect("write");
            run_spec(scratch, SPEC, &[])
        }
        "report-changed-results" | "report-corrupt-results" => {
            ran(scratch);
            let bundle = scratch.path().join("reports/inputs");
            std::fs::write(bundle.join("results.parquet"), b"PAR1 damaged").expect("write");
            if class == "report-corrupt-results" {
                std::fs::remove_file(bundle.join("manifest.json")).expect("rm");
            }
            scratch.run(&["report", "reports/inputs"])
        }
        "report-incomplete-bundle" => {
            ran(scratch);
            std::fs::remove_file(scratch.path().join("reports/inputs/spec.yaml")).expect("rm");
            scratch.run(&["report", "reports/inputs"])
        }
        "solve-duplicate-argument" => scratch.run(&[
            "solve",
            "fat_tree",
            "processors=256",
            "processors=64",
            "--rate",
            "0.001",
        ]),
        "simulate-bad-precision" => {
            scratch.run(&["simulate", "--rate", "0.01", "--target-precision", "5"])
        }
        "interrupted" => interrupted(scratch),
        "interrupted-waiting-for-lock" => interrupted_waiting(scratch),
        "stdout-closed" => {
            // `runner run spec.yaml 2>&1 | head -0`: progress and messages on a closed pipe are
            // dropped; the run still finishes, writes its bundle and exits with its own code.
            scratch.spec("spec.yaml", SPEC);
            let mut child = scratch
                .command()
                .args(["run", "spec.yaml"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn");
            drop(child.stdout.take());
            drop(child.stderr.take());
            let status = child.wait().expect("wait");
            let written = scratch.path().join("reports/inputs/manifest.json").is_file();
            let text = format!("bundle written: {written}\n");
            Output { status, stdout: text.into_bytes(), stderr: Vec::new() }
        }
        "stdout-full" => {
            scratch.spec("spec.yaml", SPEC);
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
            let mut output = scratch
                .command()
                .args(["plan", "spec.yaml"])
                .stdout(full)
                .output()
                .expect("run");
            output.stdout.clear();
            output
        }
        "spec-long-line" => validate(
            format!("name: q\nseed: {}x\n{}", " ".repeat(65_539), &SPEC[SPEC.find("scenario").expect("scenario")..])
                .as_bytes(),
        ),
        "spec-cr-line-endings" => validate(format!("# a comment\n{SPEC}").replace('\n', "\r").as_bytes()),
        "cache-entry-not-a-file" => {
            ran(scratch);
            let path = solve_entry(scratch);
            std::fs::remove_file(&path).expect("rm");
            let status = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo");
            assert!(status.success());
            run_spec(scratch, SPEC, &[])
        }
        "profile-not-a-regular-file" => {
            scratch.spec("spec.yaml", SPEC);
            scratch.run(&["run", "spec.yaml", "--executor", "slurm", "--profile", "/dev/zero"])
        }
        "profile-bad-poll-interval" => {
            scratch.spec("spec.yaml", SPEC);
            scratch.run(&["run", "spec.yaml", "--executor", "slurm", "--poll-interval", "1e-300"])
        }
        "simulate-conflicting-keys" => scratch.run(&[
            "simulate",
            "traffic=tornado",
            "hotspot_nodes=1",
            "--rate",
            "0.001",
        ]),
        "simulate-out-of-range" => {
            scratch.run(&["simulate", "scouting_distance=4294967295", "--rate", "0.001"])
        }
        "solve-unused-key" => scratch.run(&["solve", "nbc_torus", "buffer_depth=0", "--rate", "0.001"]),
        "spec-out-of-range" => validate(
            SIM.replace("RATE", "0.01").replace("CYCLES", "18446744073709546616").as_bytes(),
        ),
        "spec-queues-too-large" => validate(
            SIM.replace("RATE", "0.01")
                .replace("CYCLES", "1000")
                .replace(
                    "replications: 1",
                    "replications: 1, measure: throughput, source_queue_capacity: 4294967295",
                )
                .as_bytes(),
        ),
        "spec-escape-channels-unused" => validate(
            SIM.replace("RATE", "0.01")
                .replace("CYCLES", "1000")
                .replace("routing: duato", "routing: dimension_order\n  escape_channels: 2")
                .as_bytes(),
        ),
        "bundle-subdirectory-symlink" => {
            ran(scratch);
            let paper = scratch.path().join("paper");
            std::fs::create_dir(&paper).expect("mkdir");
            std::fs::remove_dir_all(scratch.path().join("reports/inputs/tables")).expect("rm");
            std::os::unix::fs::symlink(&paper, scratch.path().join("reports/inputs/tables"))
                .expect("ln");
            run_spec(scratch, SPEC, &[])
        }
        "report-input-not-a-regular-file" => {
            ran(scratch);
            let spec = scratch.path().join("reports/inputs/spec.yaml");
            std::fs::remove_file(&spec).expect("rm");
            let status = std::process::Command::new("mkfifo").arg(&spec).status().expect("mkfifo");
            assert!(status.success());
            scratch.run(&["report", "reports/inputs"])
        }
        "verify-symlink-in-bundle" => {
            ran(scratch);
            let evil = scratch.path().join("reports/inputs/figures/evil.svg");
            std::os::unix::fs::symlink("/etc/passwd", evil).expect("ln");
            scratch.run(&["verify", "reports/inputs"])
        }
        "spec-missing-template-dir" => {
            validate(format!("{SPEC}report: {{template_dir: missing_dir}}\n").as_bytes())
        }
        "spec-too-many-folded-lines" => validate(
            SIM.replace("RATE", "0.01")
                .replace("CYCLES", "1000")
                .replace("virtual_channels: 3", "virtual_channels: [3, 4, 5, 6, 7, 8, 9]")
                .replace("message_length: 8", "message_length: [8, 16, 32, 64]")
                .add_report("    - {lines: [message_length]}\n")
                .as_bytes(),
        ),
        "spec-too-many-curve-points" => validate(
            with("{name: fat_tree}", "{name: fat_tree, curve_points: 5000}").as_bytes(),
        ),
        "spec-figure-empty-axis-limits" => {
            validate(format!("{SPEC}report:\n  figures:\n    - {{ylim: [100, 10]}}\n").as_bytes())
        }
        "spec-figure-log-axis-limits" => validate(
            format!("{SPEC}report:\n  figures:\n    - {{log_x: true, xlim: [0, 0.01]}}\n")
                .as_bytes(),
        ),
        "spec-figure-zero-panels-per-page" => validate(
            format!("{SPEC}report:\n  figures:\n    - {{max_panels_per_page: 0}}\n").as_bytes(),
        ),
        "spec-figure-unknown-width" => {
            validate(format!("{SPEC}report:\n  figures:\n    - {{width: poster}}\n").as_bytes())
        }
        other => panic!("docs/inputs.md lists `{other}`, which has no example in inputs.rs"),
    }
}

/// Appends a `report:` section with one figure to a spec.
trait AddReport {
    fn add_report(self, figure: &str) -> String;
}

impl AddReport for String {
    fn add_report(self, figure: &str) -> String {
        format!("{self}report:\n  figures:\n{figure}")
    }
}

/// The classes this file has examples for (checked against the table both ways).
const CLASSES: &[&str] = &[
    "valid-spec",
    "cached-rerun",
    "warning-simulator-only-sweep",
    "warning-many-threads",
    "warning-corrupt-cache-entry",
    "failed-tasks",
    "external-program-fails",
    "external-program-times-out",
    "external-program-garbage",
    "external-reply-out-of-domain",
    "external-reply-duplicate-key",
    "spec-external-input-missing",
    "spec-trace-bad-row",
    "spec-trace-not-a-regular-file",
    "verify-changed-file",
    "diff-moved",
    "diff-not-a-bundle",
    "diff-spec-as-bundle",
    "verify-check-zero",
    "usage",
    "spec-missing",
    "spec-not-a-regular-file",
    "spec-too-large",
    "spec-not-utf8",
    "spec-yaml-syntax",
    "spec-duplicate-key",
    "spec-unknown-key",
    "spec-bad-value",
    "spec-long-name",
    "spec-too-many-tasks",
    "spec-too-many-panels",
    "duplicate-names",
    "root-is-a-file",
    "bundle-path-is-a-file",
    "cache-unwritable",
    "report-changed-results",
    "report-corrupt-results",
    "report-incomplete-bundle",
    "solve-duplicate-argument",
    "simulate-bad-precision",
    "interrupted",
    "interrupted-waiting-for-lock",
    "stdout-closed",
    "stdout-full",
    "spec-long-line",
    "spec-cr-line-endings",
    "cache-entry-not-a-file",
    "profile-not-a-regular-file",
    "profile-bad-poll-interval",
    "simulate-conflicting-keys",
    "simulate-out-of-range",
    "solve-unused-key",
    "spec-out-of-range",
    "spec-queues-too-large",
    "spec-escape-channels-unused",
    "bundle-subdirectory-symlink",
    "report-input-not-a-regular-file",
    "verify-symlink-in-bundle",
    "spec-missing-template-dir",
    "spec-too-many-folded-lines",
    "spec-too-many-curve-points",
    "spec-figure-empty-axis-limits",
    "spec-figure-log-axis-limits",
    "spec-figure-zero-panels-per-page",
    "spec-figure-unknown-width",
];

/// (class, exit code, text) for every row of the table in docs/inputs.md.
fn table() -> Vec<(String, i32, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/inputs.md");
    let text = std::fs::read_to_string(path).expect("docs/inputs.md");
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 4, "a table row has four cells: {line}");
        let unquote = |cell: &str| cell.trim_matches('`').to_string();
        let code = cells[2].parse().unwrap_or_else(|_| panic!("exit code in: {line}"));
        rows.push((unquote(cells[0]), code, unquote(cells[3])));
    }
    rows
}

#[test]
fn every_input_class_in_docs_inputs_md_gets_its_exit_code_and_message() {
    let rows = table();
    let listed: Vec<&str> = rows.iter().map(|(class, _, _)| class.as_str()).collect();
    for class in CLASSES {
        assert!(listed.contains(class), "`{class}` has an example but no row in docs/inputs.md");
    }
    for (class, code, text) in &rows {
        assert!(CLASSES.contains(&class.as_str()), "`{class}` has no example in inputs.rs");
        let scratch = Scratch::new();
        let output = example(class, &scratch);
        let all = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(*code), "{class}: exit code\n{all}");
        let flat = all.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(text.as_str()), "{class}: no `{text}` in\n{all}");
        assert!(!all.contains("panicked"), "{class}: panic\n{all}");
        assert!(
            all.matches("(os error").count() <= 1,
            "{class}: an I/O error printed more than once\n{all}"
        );
    }
}
