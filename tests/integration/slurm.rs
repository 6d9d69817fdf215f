//! The Slurm executor against a real Slurm cluster (`.ci/run` starts a single-node one and sets
//! `RUNNER_SLURM_TESTS=1`, which makes these tests mandatory). Without that variable each test
//! says it is skipped and passes. Specs are tiny and the poll interval short (0.5 s).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{SIM_SPEC, Scratch, comparable, stderr, stdout};

/// The profile the tests use: Slurm by default, fast polling, about one task per array element.
const PROFILE: &str =
    "executor = \"slurm\"\n[slurm]\npoll_interval = 0.5\nbatch_minutes = 0.00002\n";

/// Whether the Slurm tests run; says so (past the test harness's capture) when they do not.
fn slurm_tests(test: &str) -> bool {
    if std::env::var("RUNNER_SLURM_TESTS").is_ok_and(|v| v == "1") {
        return true;
    }
    // One write, past the harness's capture of `eprintln!`, so the note shows on a passing run.
    let line = format!(
        "note: skipped Slurm test `{test}`: set RUNNER_SLURM_TESTS=1 with a Slurm cluster \
         running (`.ci/run` starts a local one)\n"
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    false
}

/// A scratch directory with `runner.toml` and one spec.
fn cluster_scratch(spec: &str) -> Scratch {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("runner.toml"), PROFILE).expect("write profile");
    scratch.spec("s.yaml", spec);
    scratch
}

/// The recorded submission of `experiment` (waits up to a minute for it to appear).
fn submission(scratch: &Scratch, experiment: &str) -> serde_json::Value {
    let path = scratch.path().join(".runner/slurm").join(experiment).join("submission.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(bytes) = std::fs::read(&path)
            && let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes)
            && value["rounds"].as_array().is_some_and(|r| !r.is_empty())
        {
            return value;
        }
        assert!(Instant::now() < deadline, "no submission recorded at {}", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Array job ids of the first round of a submission.
fn first_round_jobs(record: &serde_json::Value) -> Vec<String> {
    record["rounds"][0]["arrays"]
        .as_array()
        .expect("arrays")
        .iter()
        .map(|a| a["job_id"].as_str().expect("job id").to_string())
        .collect()
}

/// `squeue` lines (all states, one per array element) of the jobs named `name`.
fn squeue_by_name(name: &str, format: &str) -> Vec<String> {
    let output = Command::new("squeue")
        .args(["--noheader", "--array", "--states=all", &format!("--name={name}")])
        .arg(format!("--format={format}"))
        .output()
        .expect("squeue");
    String::from_utf8_lossy(&output.stdout).lines().map(|l| l.trim().to_string()).collect()
}

#[test]
fn slurm_gives_the_same_results_as_a_local_run() {
    if !slurm_tests("slurm_gives_the_same_results_as_a_local_run") {
        return;
    }
    let local = Scratch::new();
    local.spec("s.yaml", SIM_SPEC);
    let reference = local.run(&["run", "s.yaml", "-j", "1", "--quiet"]);
    assert_eq!(reference.status.code(), Some(0), "{}", stderr(&reference));
    let cluster = cluster_scratch(SIM_SPEC);
    let output = cluster.run(&["run", "s.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("submitted 8 simulation tasks in"), "{}", stderr(&output));
    assert_eq!(comparable(cluster.rows("small_sim")), comparable(local.rows("small_sim")));
    // Everything gathered: the submission record is gone and a re-run submits nothing.
    assert!(!cluster.path().join(".runner/slurm/small_sim/submission.json").exists());
    let again = cluster.run(&["run", "s.yaml"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(!stderr(&again).contains("submitted"), "{}", stderr(&again));
    assert!(stderr(&again).contains(" 0 tasks run, 12 cached"), "{}", stderr(&again));
}

/// Runs two few-second simulations, one array element each and one at a time, kills element 0
/// with `scancel` while it runs, and returns the job id and what `runner run ARGS` printed.
fn run_and_scancel_element_0(scratch: &Scratch, args: &[&str]) -> (String, std::process::Output) {
    let child = scratch
        .command()
        .args(["run", "s.yaml", "--max-concurrent", "1"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn runner");
    let record = submission(scratch, "small_sim");
    let job = first_round_jobs(&record).remove(0);
    let name = record["job_name"].as_str().expect("job name").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !squeue_by_name(&name, "%F_%K %T").contains(&format!("{job}_0 RUNNING")) {
        assert!(Instant::now() < deadline, "element {job}_0 never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    let scancel = Command::new("scancel").arg(format!("{job}_0")).status().expect("scancel");
    assert!(scancel.success());
    (job, child.wait_with_output().expect("runner"))
}

/// Two simulations of about fifteen seconds each (8x8 torus), one replication: long enough
/// that the test's `scancel` lands while element 0 still runs, even when the other tests load
/// both cores and `squeue` answers slowly (at 1.5 million cycles, about 3 s, the element once
/// finished first and the test saw no cancellation; at 5 million, 5 s once the simulator got
/// faster, it did again; at 10 million an element once ended in 5 s and it did once more).
fn two_slow_simulations() -> String {
    SIM_SPEC
        .replace("radix: 4", "radix: 8")
        .replace("routing: [dimension_order, duato]", "routing: duato")
        .replace("cycles: 4000", "cycles: 30000000")
        .replace("replications: 2", "replications: 1")
}

#[test]
fn an_element_killed_with_scancel_is_retried_and_the_run_completes() {
    if !slurm_tests("an_element_killed_with_scancel_is_retried_and_the_run_completes") {
        return;
    }
    let scratch = cluster_scratch(&two_slow_simulations());
    let (job, output) = run_and_scancel_element_0(&scratch, &[]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!("{job}_0 ended CANCELLED")), "{text}");
    assert!(text.contains("resubmitted their 1 unfinished tasks"), "{text}");
    let rows = scratch.rows("small_sim");
    assert_eq!(rows.len(), 2 * 2, "two simulations and their aggregates");
    assert!(rows.iter().all(|r| r.status == "ok" && r.latency.is_some()), "{rows:?}");
}

#[test]
fn with_no_retries_left_a_killed_element_gives_failed_rows() {
    if !slurm_tests("with_no_retries_left_a_killed_element_gives_failed_rows") {
        return;
    }
    let scratch = cluster_scratch(&two_slow_simulations());
    let (job, output) = run_and_scancel_element_0(&scratch, &["--retries", "0"]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(!text.contains("resubmitted"), "{text}");
    let rows = scratch.rows("small_sim");
    let failed: Vec<_> = rows.iter().filter(|r| r.status == "failed").collect();
    assert_eq!(failed.len(), 1, "{rows:?}");
    let error = failed[0].error.as_deref().unwrap_or("");
    assert!(
        error.contains(&format!("{job}_0 ended CANCELLED; gave up after 1 attempts")),
        "{error}"
    );
    assert_eq!(rows.iter().filter(|r| r.status == "ok").count(), 2, "{rows:?}");
}

#[test]
fn a_detached_run_is_gathered_and_reported_by_its_dependent_job() {
    if !slurm_tests("a_detached_run_is_gathered_and_reported_by_its_dependent_job") {
        return;
    }
    let scratch = cluster_scratch(SIM_SPEC);
    let detached = scratch.run(&["run", "s.yaml", "--detach"]);
    assert_eq!(detached.status.code(), Some(0), "{}", stderr(&detached));
    let name = submission(&scratch, "small_sim")["job_name"].as_str().expect("name").to_string();
    let gather = format!("{name}-gather");
    let deadline = Instant::now() + Duration::from_secs(120);
    while squeue_by_name(&gather, "%T") != ["COMPLETED"] {
        assert!(Instant::now() < deadline, "gather job: {:?}", squeue_by_name(&gather, "%T"));
        std::thread::sleep(Duration::from_millis(200));
    }
    let rows = scratch.rows("small_sim");
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| r.status == "ok"), "{rows:?}");
    assert!(scratch.path().join("reports/small_sim/index.html").is_file());
    assert!(!scratch.path().join(".runner/slurm/small_sim/submission.json").exists());
}

#[test]
fn detach_then_status_then_run_again_collects_without_resubmitting() {
    if !slurm_tests("detach_then_status_then_run_again_collects_without_resubmitting") {
        return;
    }
    let scratch = cluster_scratch(SIM_SPEC);
    let detached = scratch.run(&["run", "s.yaml", "--detach"]);
    assert_eq!(detached.status.code(), Some(0), "{}", stderr(&detached));
    let ids: Vec<String> = stdout(&detached).split_whitespace().map(String::from).collect();
    assert!(ids.len() >= 2, "array job(s) and the gather job: {ids:?}");
    assert!(ids.iter().all(|id| id.chars().all(|c| c.is_ascii_digit())), "{ids:?}");
    let record = submission(&scratch, "small_sim");
    let name = record["job_name"].as_str().expect("job name").to_string();
    assert_eq!(first_round_jobs(&record), ids[..ids.len() - 1]);

    let status = scratch.run(&["status", "s.yaml"]);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    let text = stdout(&status);
    assert!(text.starts_with("small_sim: 12 tasks: "), "{text}");
    assert!(text.contains("done") && text.contains("pending") && text.contains("failed"));
    assert!(
        text.contains(&format!("Slurm array job {}", ids[0])) || text.contains("0 not submitted"),
        "{text}"
    );

    let collected = scratch.run(&["run", "s.yaml"]);
    assert_eq!(collected.status.code(), Some(0), "{}", stderr(&collected));
    assert!(!stderr(&collected).contains("submitted"), "{}", stderr(&collected));
    let rows = scratch.rows("small_sim");
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| r.status == "ok"), "{rows:?}");
    // Slurm saw one array for this submission, never a second one.
    let arrays: std::collections::BTreeSet<String> =
        squeue_by_name(&name, "%F").into_iter().collect();
    assert_eq!(arrays.into_iter().collect::<Vec<_>>(), ids[..ids.len() - 1]);
    let done = scratch.run(&["status", "s.yaml"]);
    assert!(stdout(&done).contains("12 done"), "{}", stdout(&done));
}

#[test]
fn a_task_that_fails_deterministically_is_a_failed_row_and_not_retried() {
    if !slurm_tests("a_task_that_fails_deterministically_is_a_failed_row_and_not_retried") {
        return;
    }
    // With router_delay 2, deadlock_cycles 2 is rejected by the simulator at run time.
    let spec = SIM_SPEC
        .replace("routing: [dimension_order, duato]", "routing: duato\n  router_delay: [0, 2]")
        .replace("rates: [0.005, 0.02]", "rates: [0.005]")
        .replace("replications: 2", "replications: 1, deadlock_cycles: 2");
    let local = Scratch::new();
    local.spec("s.yaml", &spec);
    let reference = local.run(&["run", "s.yaml", "--quiet"]);
    assert_eq!(reference.status.code(), Some(1), "{}", stderr(&reference));
    let scratch = cluster_scratch(&spec);
    let output = scratch.run(&["run", "s.yaml"]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("submitted 2 simulation tasks"), "{text}");
    assert!(!text.contains("resubmitted"), "{text}");
    assert!(text.contains("deadlock_cycles must exceed router_delay"), "{text}");
    let rows = scratch.rows("small_sim");
    assert_eq!(comparable(rows.clone()), comparable(local.rows("small_sim")));
    assert_eq!(rows.iter().filter(|r| r.status == "failed").count(), 1, "{rows:?}");
}

#[test]
fn site_settings_reach_sbatch() {
    if !slurm_tests("site_settings_reach_sbatch") {
        return;
    }
    let scratch = Scratch::new();
    // The profile names a partition the command line overrides; the rest comes from the profile.
    std::fs::write(
        scratch.path().join("site.toml"),
        "[slurm]\npartition = \"no-such-partition\"\ntime = \"00:07:00\"\n\
         sbatch_args = [\"--comment=from-the-profile\"]\npoll_interval = 0.5\n",
    )
    .expect("profile");
    scratch.spec("s.yaml", SIM_SPEC);
    let output = scratch.run(&[
        "run",
        "s.yaml",
        "--executor",
        "slurm",
        "--profile",
        "site.toml",
        "--partition",
        "debug",
        "--mem",
        "64M",
        "--max-concurrent",
        "1",
        "--detach",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let ids: Vec<String> = stdout(&output).split_whitespace().map(String::from).collect();
    let shown = Command::new("scontrol").args(["show", "job", &ids[0]]).output().expect("scontrol");
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    let _ = Command::new("scancel").args(&ids).status();
    for expected in [
        "Partition=debug",
        "TimeLimit=00:07:00",
        "Comment=from-the-profile",
        "MinMemoryNode=64M",
        "ArrayTaskThrottle=1",
    ] {
        assert!(text.contains(expected), "`{expected}` missing from scontrol show job:\n{text}");
    }
}

#[test]
fn a_worker_with_other_evaluator_versions_refuses_to_run() {
    // No Slurm needed: a worker is a plain process reading the submission record.
    use runner::exec::slurm::record::{RecordDir, Submission};
    let scratch = Scratch::new();
    let spec = scratch.spec("s.yaml", SIM_SPEC);
    let source = runner::spec::read(&spec).expect("spec");
    let record = RecordDir::new(scratch.path(), "small_sim");
    let cache = scratch.path().join(".runner").join("cache");
    let mut submission = Submission::new(
        "small_sim",
        &source.sha256,
        None,
        cache.clone(),
        "runner-t".into(),
        "0".into(),
    );
    submission.sim_version = format!("{}-other", submission.sim_version);
    record.save(&submission).expect("record");
    std::fs::copy(&spec, record.spec_path()).expect("spec copy");
    std::fs::create_dir_all(record.round_dir(0)).expect("round dir");
    std::fs::write(record.batch_path(0, 0), "0123\n").expect("batch");
    let dir = record.dir.display().to_string();
    let output = scratch.run(&["worker", &dir, "--round", "0", "--index", "0"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("differs from the one that planned the work"),
        "{}",
        stderr(&output)
    );
    let refusal = record.refusal().expect("refused.txt for the foreground process");
    assert!(refusal.contains("-other"), "{refusal}");
    assert!(!cache.exists(), "a refusing worker wrote the cache");
}

#[test]
fn bad_settings_and_a_missing_slurm_are_setup_errors() {
    let scratch = Scratch::new();
    scratch.spec("s.yaml", SIM_SPEC);
    // No `sbatch` on the PATH: exit 2 before anything is recorded.
    let output = scratch
        .command()
        .args(["run", "s.yaml", "--executor", "slurm"])
        .env("PATH", scratch.path())
        .output()
        .expect("runner");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("`sbatch` is not available"), "{}", stderr(&output));
    assert!(!scratch.path().join(".runner/slurm/small_sim").exists());
    // A misspelt profile key is named with its line.
    std::fs::write(scratch.path().join("runner.toml"), "[slurm]\npartiton = \"x\"\n")
        .expect("toml");
    let output = scratch.run(&["run", "s.yaml", "--executor", "slurm"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("runner.toml") && stderr(&output).contains("line 2"));
    // Slurm settings without the Slurm executor are refused, not ignored.
    let output = scratch.run(&["run", "s.yaml", "--executor", "local", "--partition", "p"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn ctrl_c_cancels_the_submitted_jobs_and_says_so() {
    if !slurm_tests("ctrl_c_cancels_the_submitted_jobs_and_says_so") {
        return;
    }
    let spec = SIM_SPEC
        .replace("radix: 4", "radix: 8")
        .replace("routing: [dimension_order, duato]", "routing: duato")
        .replace("cycles: 4000", "cycles: 20000000")
        .replace("replications: 2", "replications: 1");
    let scratch = cluster_scratch(&spec);
    let child = scratch
        .command()
        .args(["run", "s.yaml", "--max-concurrent", "1"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn runner");
    let record = submission(&scratch, "small_sim");
    let name = record["job_name"].as_str().expect("job name").to_string();
    let job = first_round_jobs(&record).remove(0);
    let signal = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    assert!(signal.is_ok_and(|s| s.success()), "could not send SIGINT");
    let output = child.wait_with_output().expect("runner");
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(130), "{text}");
    assert!(text.contains(&format!("cancelled Slurm jobs {job} (scancel)")), "{text}");
    // Every element ends CANCELLED; none runs on.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let states = squeue_by_name(&name, "%T");
        if !states.is_empty() && states.iter().all(|s| s == "CANCELLED") {
            break;
        }
        assert!(Instant::now() < deadline, "elements still alive: {states:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!scratch.path().join(".runner/slurm/small_sim/submission.json").exists());
}

/// External methods in array elements: the Python M/D/1 model and its seeded simulation give
/// the same results.parquet through Slurm as locally (the workers run the commands in the
/// spec's directory, not beside the record's copy of the spec).
#[test]
fn external_methods_give_the_same_results_through_slurm() {
    if !slurm_tests("external_methods_give_the_same_results_through_slurm") {
        return;
    }
    let spec = "\
name: external_slurm
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  message_length: 8
load: {rates: [0.002, 0.01]}
methods:
  external:
    - {name: md1, kind: model, command: [python3, adapters/md1_channel.py],
       inputs: [adapters/md1_channel.py], version: '0.1'}
    - {name: md1_sim, kind: simulation, command: [python3, adapters/md1_channel.py],
       inputs: [adapters/md1_channel.py], version: '0.1', replications: 2,
       options: {messages: 2000}}
report: {figures: []}
";
    let adapter = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters/md1_channel.py");
    let local = Scratch::new();
    let cluster = cluster_scratch(spec);
    for scratch in [&local, &cluster] {
        std::fs::create_dir_all(scratch.path().join("adapters")).expect("mkdir");
        std::fs::copy(&adapter, scratch.path().join("adapters/md1_channel.py")).expect("copy");
    }
    local.spec("s.yaml", spec);
    let reference = local.run(&["run", "s.yaml", "-j", "1", "--quiet"]);
    assert_eq!(reference.status.code(), Some(0), "{}", stderr(&reference));
    let output = cluster.run(&["run", "s.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("submitted 6 simulation tasks in"), "{err}");
    let rows = cluster.rows("external_slurm");
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert_eq!(comparable(rows), comparable(local.rows("external_slurm")));
}
