//! The report bundle touches nothing outside itself, never hangs on a special file, carries
//! what it needs to re-render from anywhere, and is readable by collaborators (issue 19).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{MODEL_SPEC, Scratch, stderr, stdout};

/// Runs `command`, killing it and failing the test after 60 s (a hang is the defect).
fn within_a_minute(mut command: Command) -> Output {
    let mut child =
        command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn runner");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("runner hung: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The reproduction: a bundle's `tables/` (or `figures/`) linked into a paper's
/// directory; neither `runner run` nor `runner report` may delete the paper's files.
#[test]
fn a_linked_tables_or_figures_directory_never_costs_a_file_outside_the_bundle() {
    for name in ["tables", "figures"] {
        let scratch = Scratch::new();
        scratch.spec("q.yaml", MODEL_SPEC);
        assert_eq!(scratch.run(&["run", "q.yaml", "-q"]).status.code(), Some(0));
        let paper = scratch.path().join("paper");
        std::fs::create_dir(&paper).expect("mkdir paper");
        std::fs::write(paper.join("chapter3.tex"), "mine\n").expect("write");
        let linked = scratch.path().join("reports/small_model").join(name);
        std::fs::remove_dir_all(&linked).expect("rm");
        std::os::unix::fs::symlink(&paper, &linked).expect("ln -s");
        for args in [&["run", "q.yaml", "-q"][..], &["report", "reports/small_model"]] {
            let output = scratch.run(args);
            let err = stderr(&output);
            assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(&format!("reports/small_model/{name}` is a symbolic link to `")),
                "{err}"
            );
            assert!(err.contains("nothing was written"), "{err}");
            assert_eq!(names_in(&paper), ["chapter3.tex"], "{args:?} touched the paper");
            assert_eq!(
                std::fs::read_to_string(paper.join("chapter3.tex")).expect("read"),
                "mine\n"
            );
        }
        let verify = scratch.run(&["verify", "reports/small_model"]);
        assert_eq!(verify.status.code(), Some(1));
        assert!(stderr(&verify).contains(&format!("not a regular file: {name} (a symbolic link")));
    }
}

/// A FIFO or a link to `/dev/zero` in place of a listed file: `verify` and `report` answer at
/// once instead of blocking or reading forever.
#[test]
fn verify_and_report_refuse_special_files_without_hanging() {
    let scratch = Scratch::new();
    scratch.spec("q.yaml", MODEL_SPEC);
    assert_eq!(scratch.run(&["run", "q.yaml", "-q"]).status.code(), Some(0));
    let bundle = scratch.path().join("reports/small_model");
    let report = |verb: &str| {
        let mut command = scratch.command();
        command.args([verb, "reports/small_model"]);
        within_a_minute(command)
    };
    std::fs::remove_file(bundle.join("spec.yaml")).expect("rm");
    let status = Command::new("mkfifo").arg(bundle.join("spec.yaml")).status().expect("mkfifo");
    assert!(status.success());
    let output = report("verify");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a regular file: spec.yaml (a FIFO)"),
        "{}",
        stderr(&output)
    );
    let output = report("report");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not a regular file: spec.yaml (a FIFO)"),
        "{}",
        stderr(&output)
    );

    std::fs::remove_file(bundle.join("spec.yaml")).expect("rm");
    std::fs::remove_file(bundle.join("results.parquet")).expect("rm");
    std::os::unix::fs::symlink("/dev/zero", bundle.join("results.parquet")).expect("ln");
    let output = report("verify");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("not a regular file: results.parquet (a symbolic link to `/dev/zero`)"),
        "{}",
        stderr(&output)
    );
    std::fs::remove_file(bundle.join("manifest.json")).expect("rm");
    let output = report("report");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("results.parquet is not a regular file"),
        "{}",
        stderr(&output)
    );
}

/// `template_dir` is resolved against the spec's directory, copied into the bundle, and used
/// by `runner report` from anywhere, even after the original directory is gone; `verify`
/// covers the copies.
#[test]
fn template_dir_travels_with_the_bundle() {
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.path().join("exp/tpl")).expect("mkdir");
    std::fs::write(scratch.path().join("exp/tpl/report.md.j2"), "custom {{ title | md }}\n")
        .expect("template");
    scratch.spec("exp/q.yaml", &format!("{MODEL_SPEC}report: {{template_dir: tpl}}\n"));
    let output = scratch.run(&["run", "exp/q.yaml", "-q"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let bundle = scratch.path().join("reports/small_model");
    assert_eq!(
        std::fs::read_to_string(bundle.join("report.md")).expect("read"),
        "custom small\\_model\n"
    );
    assert!(bundle.join("templates/report.md.j2").is_file(), "the bundle carries its template");

    std::fs::remove_dir_all(scratch.path().join("exp/tpl")).expect("rm");
    let elsewhere = tempfile::tempdir().expect("another directory");
    let output = Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(elsewhere.path())
        .arg("report")
        .arg(&bundle)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(bundle.join("report.md")).expect("read"),
        "custom small\\_model\n"
    );
    let verify = scratch.run(&["verify", "reports/small_model"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    assert!(stdout(&verify).contains("every file matches"));

    std::fs::write(bundle.join("templates/report.md.j2"), "edited\n").expect("edit");
    let verify = scratch.run(&["verify", "reports/small_model"]);
    assert_eq!(verify.status.code(), Some(1));
    assert!(stderr(&verify).contains("changed: templates/report.md.j2"), "{}", stderr(&verify));
    let output = scratch.run(&["report", "reports/small_model"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));

    // Without `template_dir` the copy goes, and the built-in templates are back.
    std::fs::write(scratch.path().join("exp/q.yaml"), MODEL_SPEC).expect("spec");
    let output = scratch.run(&["run", "exp/q.yaml", "-q"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!bundle.join("templates").exists());
    assert!(std::fs::read_to_string(bundle.join("report.md")).expect("read").starts_with("# "));
    assert_eq!(scratch.run(&["verify", "reports/small_model"]).status.code(), Some(0));
}

/// A `template_dir` that does not exist is refused at validation, located.
#[test]
fn a_missing_template_dir_is_refused_at_validation() {
    let scratch = Scratch::new();
    scratch.spec("q.yaml", &format!("{MODEL_SPEC}report: {{template_dir: missing_dir}}\n"));
    let output = scratch.run(&["validate", "q.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("q.yaml:10:24"), "{err}");
    assert!(err.contains("`template_dir: missing_dir` does not exist"), "{err}");
}

/// Every file of a fresh bundle, the data included, is readable by group and others under
/// umask 022 (collaborators on shared project space read the data as they read the HTML).
#[test]
fn every_bundle_file_is_group_and_other_readable_under_umask_022() {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.path().join("tpl")).expect("mkdir");
    std::fs::write(scratch.path().join("tpl/report.md.j2"), "custom\n").expect("template");
    scratch.spec("q.yaml", &format!("{MODEL_SPEC}report: {{template_dir: tpl}}\n"));
    let output = Command::new("sh")
        .current_dir(scratch.path())
        .args(["-c", "umask 022 && exec \"$0\" run q.yaml -q", env!("CARGO_BIN_EXE_runner")])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let bundle = scratch.path().join("reports/small_model");
    let mut files = Vec::new();
    let mut dirs = vec![bundle.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("list") {
            let path = entry.expect("entry").path();
            if path.is_dir() { dirs.push(path) } else { files.push(path) }
        }
    }
    for name in
        ["results.parquet", "spec.yaml", "manifest.json", "index.html", "templates/report.md.j2"]
    {
        assert!(files.contains(&bundle.join(name)), "{name} in {files:?}");
    }
    for file in &files {
        let mode = std::fs::metadata(file).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode & 0o044, 0o044, "{} is {mode:o}", file.display());
    }
}

/// Seven `virtual_channels` x four `message_length` with `lines: [message_length]`: every
/// scenario is its own line, so the figure has 28 lines in one panel. Refused at validation,
/// located, naming the folded field, instead of after computing every task.
#[test]
fn lines_folded_from_unnamed_fields_are_counted_at_validation() {
    let spec = "\
name: folded
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: duato
  virtual_channels: [3, 4, 5, 6, 7, 8, 9]
  message_length: [8, 16, 32, 64]
load: {rates: [0.001]}
methods:
  simulation: {cycles: 1000, warmup_cycles: 100}
report:
  figures:
    - {lines: [message_length]}
";
    let scratch = Scratch::new();
    scratch.spec("f.yaml", spec);
    let output = scratch.run(&["validate", "f.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("f.yaml:11:3"), "{err}");
    let flat = err.split_whitespace().collect::<Vec<_>>().join(" ").replace("│ ", "");
    assert!(flat.contains("makes up to 28 lines in one panel"), "{flat}");
    assert!(flat.contains("`virtual_channels` (7 values) varies within a panel"), "{flat}");
    let fine = spec.replace("lines: [message_length]", "panels: [message_length]");
    scratch.spec("f.yaml", &fine);
    assert_eq!(scratch.run(&["validate", "f.yaml"]).status.code(), Some(0));
}

/// `runner report` waits for a `runner run` of the same experiment under the same root (which
/// rewrites the bundle) instead of rendering into a half-written bundle; a copy of the bundle
/// elsewhere renders at once.
#[test]
fn report_waits_for_a_run_of_the_same_experiment() {
    let scratch = Scratch::new();
    scratch.spec("q.yaml", MODEL_SPEC);
    let ran = scratch.run(&["run", "q.yaml", "-q"]);
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    // Hold the run lock as a run would.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(scratch.path().join(".runner/locks/small_model.lock"))
        .expect("lock file");
    lock.lock().expect("take the lock");
    let mut report = scratch.command();
    report.args(["report", "reports/small_model"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = report.spawn().expect("spawn runner");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(child.try_wait().expect("wait").is_none(), "report did not wait for the run");
    lock.unlock().expect("release the lock");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "report did not go on");
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("waiting for it to finish"), "{}", stderr(&output));
    assert!(stdout(&output).contains("re-rendered"), "{}", stdout(&output));

    // A copy elsewhere has no run writing it: no wait, no lock directory made.
    let copy = tempfile::tempdir().expect("temp dir");
    let target = copy.path().join("small_model");
    let copied = Command::new("cp")
        .args(["-a", "reports/small_model"])
        .arg(&target)
        .current_dir(scratch.path())
        .status()
        .expect("cp");
    assert!(copied.success());
    lock.lock().expect("take the lock again");
    let mut elsewhere = scratch.command();
    elsewhere.arg("report").arg(&target);
    let output = within_a_minute(elsewhere);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!copy.path().join(".runner").exists());
}

/// `runner diff`: a bundle against a fresh run of its spec reports nothing (the run is
/// reproducible bit for bit), and a bundle of another system has all its points added and
/// removed in the JSON form, with exit code 1.
#[test]
fn diff_of_a_bundle_and_a_fresh_run_of_its_spec_reports_nothing() {
    const SPEC: &str = "\
name: diffed
seed: 11
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: duato
  virtual_channels: 3
  message_length: 8
load: {rates: [0.01, 0.05]}
methods: {simulation: {cycles: 4000, warmup_cycles: 500, replications: 2}}
report: {figures: []}
";
    let scratch = Scratch::new();
    scratch.spec("spec.yaml", SPEC);
    let run = scratch.run(&["run", "spec.yaml", "-q", "-j", "2"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let same = scratch.run(&["diff", "reports/diffed", "spec.yaml", "-j", "1"]);
    assert_eq!(same.status.code(), Some(0), "{}{}", stdout(&same), stderr(&same));
    assert!(
        stdout(&same).contains("6 matched (6 unchanged), 0 added, 0 removed"),
        "{}",
        stdout(&same)
    );
    assert!(stdout(&same).contains("nothing moved beyond its interval"));

    // Another buffer depth is another scenario: no point matches.
    scratch.spec(
        "deeper.yaml",
        &SPEC.replace("message_length: 8", "message_length: 8\n  buffer_depth: 1"),
    );
    let deeper = scratch.run(&["run", "deeper.yaml", "-q", "--root", "deeper"]);
    assert_eq!(deeper.status.code(), Some(0), "{}", stderr(&deeper));
    let moved = scratch.run(&["diff", "reports/diffed", "deeper/reports/diffed", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&moved)).expect("JSON");
    assert_eq!(json["matched"], 0);
    assert_eq!(json["added"].as_array().map(Vec::len), Some(6));
    assert_eq!(json["removed"].as_array().map(Vec::len), Some(6));
    assert_eq!(moved.status.code(), Some(1));
}
