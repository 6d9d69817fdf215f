//! The pipeline end to end: run, cache, determinism across -j, resume after kill -9, DOT.

use std::time::{Duration, Instant};

use crate::common::{
    MODEL_SPEC, SIM_SPEC, Scratch, cache_entries as count, comparable, stderr, stdout,
    wait_for_cache_entries,
};

#[test]
fn run_writes_parquet_and_a_second_run_executes_nothing() {
    let scratch = Scratch::new();
    scratch.spec("m.yaml", MODEL_SPEC);
    let first = scratch.run(&["run", "m.yaml"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let rows = scratch.rows("small_model");
    // The spec's 2 x 2 scenarios x 6 loads first, then each scenario's dense model curve.
    assert_eq!(rows.len(), 2 * 2 * 6 + 4 * 100);
    assert!(rows[..24].iter().all(|r| r.load_grid.as_deref() == Some("spec")));
    assert!(rows[24..].iter().all(|r| r.load_grid.as_deref() == Some("dense")));
    assert!(rows.iter().all(|r| r.method == "model" && r.experiment == "small_model"));
    for curve in rows[24..].chunks(100) {
        let scenario = &curve[0].scenario_id;
        assert!(curve.iter().all(|r| &r.scenario_id == scenario && r.task_id == curve[0].task_id));
        let fractions: Vec<f64> =
            curve.iter().map(|r| r.fraction_of_saturation.expect("fraction")).collect();
        assert!(fractions[0] > 0.0 && fractions[0] < 0.03, "starts near zero: {fractions:?}");
        assert!((fractions[99] - 0.995).abs() < 1e-12, "ends below saturation: {fractions:?}");
        assert!(fractions.windows(2).all(|w| w[0] < w[1]), "increasing loads");
        // Below saturation the model is finite and its latency rises with the load.
        let latencies: Vec<f64> = curve.iter().map(|r| r.latency.expect("finite")).collect();
        assert!(latencies.windows(2).all(|w| w[0] <= w[1]), "{latencies:?}");
        assert!(latencies[99] > 2.0 * latencies[0], "the curve rises towards its asymptote");
    }
    // The tables show the spec's load points only: the curves are drawing aids.
    let csv =
        std::fs::read_to_string(scratch.path().join("reports/small_model/tables/results.csv"))
            .expect("results.csv");
    assert_eq!(csv.lines().count(), 1 + 24, "{csv}");
    // Loads past saturation are reported as saturated, not as numbers.
    assert!(rows.iter().any(|r| r.status == "saturated" && r.latency.is_none()));
    assert!(
        rows.iter().filter(|r| r.status == "ok").all(|r| r.latency.is_some_and(f64::is_finite))
    );
    for row in &rows {
        let fraction = row.fraction_of_saturation.expect("fraction");
        let saturation = row.saturation_rate.expect("saturation rate");
        assert!((row.rate - fraction * saturation).abs() <= 1e-15 * row.rate.max(1.0));
    }
    let started = Instant::now();
    let second = scratch.run(&["run", "m.yaml"]);
    let elapsed = started.elapsed();
    assert_eq!(second.status.code(), Some(0));
    assert!(stderr(&second).contains(" 0 tasks run"), "{}", stderr(&second));
    assert!(elapsed < Duration::from_secs(1), "cached re-run took {elapsed:?}");
    assert_eq!(comparable(scratch.rows("small_model")), comparable(rows));
    let forced = scratch.run(&["run", "m.yaml", "--force", "--quiet"]);
    assert_eq!(forced.status.code(), Some(0));
    assert!(stderr(&forced).is_empty(), "--quiet printed: {}", stderr(&forced));
}

#[test]
fn rows_are_identical_under_j1_and_j2() {
    let one = Scratch::new();
    one.spec("s.yaml", SIM_SPEC);
    let two = Scratch::new();
    two.spec("s.yaml", SIM_SPEC);
    let a = one.run(&["run", "s.yaml", "-j", "1"]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let b = two.run(&["run", "s.yaml", "-j", "2"]);
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    let rows = comparable(one.rows("small_sim"));
    // 2 routings x 2 rates x (2 replications + 1 aggregate).
    assert_eq!(rows.len(), 12);
    assert_eq!(rows, comparable(two.rows("small_sim")));
    let aggregates: Vec<_> = rows.iter().filter(|r| r.replication.is_none()).collect();
    assert_eq!(aggregates.len(), 4);
    assert!(aggregates.iter().all(|r| r.replications == Some(2) && r.latency_ci95.is_some()));
    let seeds: std::collections::HashSet<_> = rows.iter().filter_map(|r| r.seed).collect();
    assert_eq!(seeds.len(), 8, "every replication has its own seed");
}

#[test]
fn kill_9_then_rerun_recomputes_only_what_was_lost() {
    let spec = SIM_SPEC
        .replace("rates: [0.005, 0.02]", "rates: {from: 0.004, to: 0.02, points: 5}")
        .replace("cycles: 4000", "cycles: 300000")
        .replace("replications: 2", "replications: 3");
    let reference = Scratch::new();
    reference.spec("s.yaml", &spec);
    let full = reference.run(&["run", "s.yaml", "-j", "2"]);
    assert_eq!(full.status.code(), Some(0), "{}", stderr(&full));

    let scratch = Scratch::new();
    scratch.spec("s.yaml", &spec);
    let mut child = scratch.command().args(["run", "s.yaml", "-j", "1"]).spawn().expect("spawn");
    let cache = scratch.path().join(".runner").join("cache");
    wait_for_cache_entries(&cache, 3);
    child.kill().expect("kill -9");
    let _ = child.wait();
    let kept = count(&cache);
    assert!(kept >= 3, "the run cached nothing before the kill");
    let total_tasks = 2 * 5 * (3 + 1);
    assert!(kept < total_tasks, "the run finished before the kill; make it longer");

    let rerun = scratch.run(&["run", "s.yaml", "-j", "2"]);
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    let summary = stderr(&rerun);
    let cached: usize = summary
        .split(" cached")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("cached count in the summary");
    assert!(cached >= kept.saturating_sub(1), "{summary}");
    assert_eq!(comparable(scratch.rows("small_sim")), comparable(reference.rows("small_sim")));
}

#[test]
fn plan_counts_and_dot_are_accepted_by_graphviz() {
    let scratch = Scratch::new();
    scratch.spec("s.yaml", SIM_SPEC);
    let plan = scratch.run(&["plan", "s.yaml"]);
    assert_eq!(plan.status.code(), Some(0));
    let text = stdout(&plan);
    assert!(text.contains("Simulate") && text.contains("Aggregate"), "{text}");
    let dot = scratch.run(&["plan", "s.yaml", "--dot"]);
    assert_eq!(dot.status.code(), Some(0));
    let dot_text = stdout(&dot);
    assert!(dot_text.starts_with("digraph"));
    let graphviz = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut graphviz) = graphviz else {
        assert!(
            !std::env::var("RUNNER_REQUIRE_TOOLS").is_ok_and(|v| v == "1"),
            "Graphviz `dot` is missing; `.ci/run` installs it (apt-get install graphviz)"
        );
        let note = "note: Graphviz `dot` not installed; DOT checked for shape only \
                    (RUNNER_REQUIRE_TOOLS=1 makes it mandatory)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), note.as_bytes());
        return;
    };
    use std::io::Write;
    graphviz.stdin.take().expect("stdin").write_all(dot_text.as_bytes()).expect("write dot");
    let out = graphviz.wait_with_output().expect("dot");
    assert!(
        out.status.success(),
        "dot rejected the plan: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
}

#[test]
fn failing_tasks_are_recorded_and_the_run_exits_1() {
    // At a rate this low no message is generated in a 100-cycle window: each replication
    // measured nothing, which is a failure (never `ok`); its Aggregate is skipped. The run must
    // still gather their rows with the error, print a summary and exit 1.
    let spec = SIM_SPEC
        .replace("rates: [0.005, 0.02]", "rates: [0.000000001]")
        .replace("cycles: 4000, warmup_cycles: 500", "cycles: 100, warmup_cycles: 10");
    let scratch = Scratch::new();
    scratch.spec("s.yaml", &spec);
    let output = scratch.run(&["run", "s.yaml"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("failed tasks"), "{}", stderr(&output));
    let rows = scratch.rows("small_sim");
    assert_eq!(rows.len(), 2 * (2 + 1));
    assert!(rows.iter().all(|r| r.status == "failed" || r.status == "skipped"), "{rows:?}");
    assert!(
        rows.iter().any(|r| r.error.as_deref().is_some_and(|e| e.contains("nothing was measured")))
    );
}

#[test]
fn an_unwritable_cache_stops_the_run_with_exit_2_naming_the_path_once() {
    // A cache entry that cannot be written is the environment failing (as a full disk does),
    // not the task: the run stops, exit 2, one message with the path and the cause.
    let scratch = Scratch::new();
    scratch.spec("m.yaml", MODEL_SPEC);
    std::fs::create_dir_all(scratch.path().join(".runner")).expect("mkdir");
    std::fs::write(scratch.path().join(".runner").join("cache"), b"not a directory")
        .expect("write");
    let output = scratch.run(&["run", "m.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains(".runner/cache/"), "{err}");
    assert_eq!(err.matches("Not a directory").count(), 1, "{err}");
}

#[test]
fn solve_prints_json_with_stable_keys() {
    let scratch = Scratch::new();
    let output = scratch.run(&[
        "solve",
        "fat_tree",
        "processors=64",
        "message_length=16",
        "--rate",
        "0.001",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(value["status"], "ok");
    assert!(value["latency"].as_f64().is_some_and(|l| l > 16.0));
    assert!(value.get("latency_p99").is_none(), "a model has no percentiles: {value}");
    let saturation = scratch.run(&["solve", "fat_tree", "processors=64", "--saturation", "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&saturation.stdout).expect("json");
    assert!(value["saturation_rate"].as_f64().is_some_and(|r| r > 0.0));
    let typo = scratch.run(&["solve", "fat_tree", "procesors=64", "--rate", "0.001"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(stderr(&typo).contains("did you mean `processors`?"), "{}", stderr(&typo));
}

#[test]
fn simulate_prints_json() {
    let scratch = Scratch::new();
    let output = scratch.run(&[
        "simulate",
        "topology=torus",
        "radix=4",
        "dimensions=2",
        "routing=duato",
        "virtual_channels=3",
        "message_length=8",
        "--rate",
        "0.01",
        "--cycles",
        "3000",
        "--warmup-cycles",
        "300",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    for key in [
        "latency",
        "latency_ci95",
        "network_latency",
        "source_wait",
        "throughput",
        "status",
        "cycles",
        "flit_hops",
    ] {
        assert!(value.get(key).is_some(), "missing {key}: {value}");
    }
    // The latency percentiles: whole cycles (nearest rank), ordered, around the mean.
    for stem in ["latency", "network_latency", "source_wait"] {
        let get = |q: &str| {
            value[format!("{stem}_{q}")].as_u64().unwrap_or_else(|| panic!("{stem}_{q}: {value}"))
        };
        let (p50, p90, p99, max) = (get("p50"), get("p90"), get("p99"), get("max"));
        assert!(p50 <= p90 && p90 <= p99 && p99 <= max, "{stem}: {value}");
        let mean = value[stem].as_f64().expect("mean");
        assert!(max as f64 >= mean, "{stem}: {value}");
    }
    assert!(value["latency_p50"].as_u64() >= Some(9), "one hop and 8 flits at least: {value}");
}

/// `--max-cycles` caps a precision run (it is then `imprecise`, with what it reached) and
/// needs `--target-precision`.
#[test]
fn simulate_caps_a_precision_run_at_max_cycles() {
    let scratch = Scratch::new();
    let base = ["simulate", "topology=torus", "radix=4", "dimensions=2", "routing=duato"];
    let run = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend(["virtual_channels=3", "--rate", "0.01", "--warmup-cycles", "300", "--json"]);
        args.extend(extra);
        scratch.run(&args)
    };
    let output =
        run(&["--target-precision", "0.000001", "--cycles", "2000", "--max-cycles", "4000"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(value["status"], "imprecise", "{value}");
    let output = run(&["--max-cycles", "4000"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("--target-precision"), "{}", stderr(&output));
    let output = run(&["--target-precision", "0.02", "--max-cycles", "300"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("must exceed the warm-up"), "{}", stderr(&output));
}

#[test]
fn simulate_measures_throughput_past_saturation_and_finds_saturation() {
    let scratch = Scratch::new();
    let small = ["topology=torus", "radix=4", "dimensions=2", "message_length=8"];
    let window = ["--cycles", "3000", "--warmup-cycles", "500", "--json", "-q"];
    let args = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut all = vec!["simulate"];
        all.extend(small);
        all.extend(window);
        all.extend(extra);
        all
    };
    let output = scratch.run(&args(&["--rate", "0.2", "--measure", "throughput"]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(value["status"], "saturated");
    assert_eq!(value["cycles"], 3500, "the whole window is simulated: {value}");
    let accepted = value["throughput"].as_f64().expect("throughput");
    let offered = value["offered_throughput"].as_f64().expect("offered_throughput");
    assert!(accepted > 0.0 && accepted < offered, "{value}");
    assert!(value["source_drops"].as_f64().is_some_and(|d| d > 0.0), "{value}");

    let output = scratch.run(&args(&["--saturation", "--source-queue-capacity", "10"]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let saturation = value["saturation_throughput"].as_f64().expect("saturation_throughput");
    assert!(saturation > 0.0 && saturation < 0.125, "{value}");
    assert_eq!(value["replications"], 3, "three searches by default: {value}");
    let points = &value["searches"][0]["points"];
    assert!(points.as_array().is_some_and(|p| p.len() >= 2), "{value}");

    let refused = scratch.run(&args(&["--rate", "0.01", "--source-queue-capacity", "10"]));
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("--measure throughput"), "{}", stderr(&refused));
}

/// `--saturation --replications 3`: the mean of three independent searches with a finite 95%
/// Student-t half-width over them, within the searches' range, each search with its own seed,
/// result and bracket, and the tolerance stated; one search has no interval.
#[test]
fn simulate_saturation_replications_report_a_mean_and_an_interval() {
    let scratch = Scratch::new();
    let base = [
        "simulate",
        "topology=torus",
        "radix=4",
        "dimensions=2",
        "message_length=8",
        "--cycles",
        "2000",
        "--warmup-cycles",
        "300",
        "--saturation",
        "--json",
        "-q",
    ];
    let run = |replications: &str| -> serde_json::Value {
        let output = scratch.run(&[&base[..], &["--replications", replications]].concat());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        serde_json::from_slice(&output.stdout).expect("json")
    };
    let value = run("3");
    let number = |key: &str| value[key].as_f64().unwrap_or_else(|| panic!("{key}: {value}"));
    let mean = number("saturation_throughput");
    let half = number("saturation_throughput_ci95");
    assert!(mean.is_finite() && mean > 0.0 && half.is_finite() && half >= 0.0, "{value}");
    let flit_half = number("flit_saturation_throughput_ci95");
    assert!(number("flit_saturation_throughput").is_finite() && flit_half.is_finite());
    assert_eq!(value["replications"], 3);
    assert_eq!(value["degrees_of_freedom"], 2);
    assert_eq!(number("tolerance"), 0.01);
    assert!(value["interval"].as_str().is_some_and(|i| i.contains("Student t")), "{value}");
    let searches = value["searches"].as_array().expect("searches");
    assert_eq!(searches.len(), 3);
    let results: Vec<f64> =
        searches.iter().filter_map(|s| s["saturation_throughput"].as_f64()).collect();
    assert_eq!(results.len(), 3, "{value}");
    let (low, high) = results.iter().fold((f64::MAX, f64::MIN), |(l, h), &r| (l.min(r), h.max(r)));
    assert!(low <= mean && mean <= high, "{mean} outside {results:?}");
    let seeds: std::collections::BTreeSet<u64> =
        searches.iter().filter_map(|s| s["seed"].as_u64()).collect();
    assert_eq!(seeds.len(), 3, "each search has its own seed: {value}");
    for search in searches {
        assert!(search["stable_rate"].as_f64().is_some(), "{search}");
        assert!(search["bracket_width"].as_f64().is_some_and(|w| w <= 0.01), "{search}");
    }
    // Reproducible bit for bit; one search is the first of three, without an interval.
    assert_eq!(run("3"), value);
    let one = run("1");
    assert!(one["saturation_throughput_ci95"].is_null(), "{one}");
    assert!(one["interval"].as_str().is_some_and(|i| i.starts_with("none")), "{one}");
    assert_eq!(one["searches"][0], value["searches"][0]);

    let zero = [&base[..], &["--replications", "0"]].concat();
    let one_load: Vec<&str> = base.iter().copied().filter(|a| *a != "--saturation").collect();
    let one_load = [&one_load[..], &["--rate", "0.01", "--replications", "2"]].concat();
    for (args, want) in [
        (zero, "--replications must be 1 to 10000"),
        (one_load, "--replications applies to --saturation only"),
    ] {
        let refused = scratch.run(&args);
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        assert!(stderr(&refused).contains(want), "{}", stderr(&refused));
    }
}

#[test]
fn ctrl_c_stops_scheduling_keeps_finished_tasks_and_a_rerun_resumes() {
    interrupt_keeps_finished_tasks_and_a_rerun_resumes("-INT");
}

#[test]
fn sigterm_is_treated_like_ctrl_c() {
    // What Slurm and most supervisors send.
    interrupt_keeps_finished_tasks_and_a_rerun_resumes("-TERM");
}

fn interrupt_keeps_finished_tasks_and_a_rerun_resumes(signal: &str) {
    let spec = SIM_SPEC
        .replace("rates: [0.005, 0.02]", "rates: [0.004, 0.008]")
        .replace("radix: 4", "radix: 8")
        .replace("cycles: 4000", "cycles: 5000000");
    let scratch = Scratch::new();
    scratch.spec("s.yaml", &spec);
    let child = scratch
        .command()
        .args(["run", "s.yaml", "-j", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn();
    let child = child.expect("spawn");
    let cache = scratch.path().join(".runner").join("cache");
    wait_for_cache_entries(&cache, 2);
    let at_signal = count(&cache);
    let signalled = Instant::now();
    let status =
        std::process::Command::new("kill").args([signal, &child.id().to_string()]).status();
    assert!(status.is_ok_and(|s| s.success()), "could not send {signal}");
    let output = child.wait_with_output().expect("wait");
    let stopped_after = signalled.elapsed();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(stderr(&output).contains("run again to resume"), "{}", stderr(&output));
    let kept = count(&cache);
    let total_tasks = 2 * 2 * (2 + 1);
    assert!(kept >= 2 && kept < total_tasks, "kept {kept} of {total_tasks}");
    // Only the task running at the signal is awaited, not the ones still queued in the pool:
    // with `-j 1` at most one more entry appears (two, if one finished between the count and
    // the signal). Counting entries rather than timing keeps this true on a loaded machine; the
    // time bound only catches a hang.
    eprintln!("{signal} stopped the run after {stopped_after:?}, {kept} tasks kept");
    assert!(kept <= at_signal + 2, "{signal}: {at_signal} entries at the signal, {kept} after");
    assert!(stopped_after < Duration::from_secs(60), "{signal} took {stopped_after:?}");
    let rerun = scratch.run(&["run", "s.yaml", "-j", "2"]);
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    assert!(stderr(&rerun).contains(&format!("{kept} cached")), "{}", stderr(&rerun));
}

/// [`SIM_SPEC`] cut to one simulation task that would run for hours (2 x 10^9 cycles).
fn one_endless_simulation() -> String {
    SIM_SPEC
        .replace("rates: [0.005, 0.02]", "rates: [0.004]")
        .replace("routing: [dimension_order, duato]", "routing: duato")
        .replace("cycles: 4000", "cycles: 2000000000")
        .replace("replications: 2", "replications: 1")
}

/// A single SIGTERM stops a simulation that would run for hours (issue: "a single SIGTERM must
/// stop a task whose remaining cost is unbounded"), instead of waiting for it to finish.
#[test]
fn a_single_sigterm_stops_a_long_simulation() {
    let scratch = Scratch::new();
    scratch.spec("s.yaml", &one_endless_simulation());
    let child = scratch
        .command()
        .args(["run", "s.yaml", "-j", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    scratch.wait_for_lock("small_sim");
    std::thread::sleep(Duration::from_millis(500));
    let signalled = Instant::now();
    let status =
        std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    assert!(status.is_ok_and(|s| s.success()), "could not send SIGTERM");
    let output = child.wait_with_output().expect("wait");
    let stopped_after = signalled.elapsed();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(stderr(&output).contains("run again to resume"), "{}", stderr(&output));
    assert!(
        stopped_after < runner::exec::evaluate::GRACE,
        "the long simulation was not stopped: {stopped_after:?}"
    );
    assert_eq!(count(&scratch.path().join(".runner/cache")), 0, "a stopped task is not cached");
}

#[test]
fn a_second_run_of_the_same_experiment_waits_for_the_first() {
    let spec = SIM_SPEC
        .replace("rates: [0.005, 0.02]", "rates: [0.004]")
        .replace("cycles: 4000", "cycles: 3000000")
        .replace("replications: 2", "replications: 1")
        .replace("radix: 4", "radix: 8");
    let scratch = Scratch::new();
    scratch.spec("s.yaml", &spec);
    let first = scratch.command().args(["run", "s.yaml", "-j", "1"]).spawn().expect("spawn");
    let lock = scratch.path().join(".runner").join("locks").join("small_sim.lock");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("pid"))
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = scratch.run(&["run", "s.yaml", "-j", "1"]);
    let first = first.wait_with_output().expect("wait");
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let err = stderr(&second);
    assert!(err.contains("another run of `small_sim` is in progress"), "{err}");
    // The second run found everything in the cache once it got the lock.
    assert!(err.contains(" 0 tasks run"), "{err}");
}

#[test]
fn bad_command_line_input_exits_2_with_a_message() {
    let scratch = Scratch::new();
    scratch.spec("m.yaml", MODEL_SPEC);
    let cases: [&[&str]; 9] = [
        &["verify", "nowhere"],
        &["run", "m.yaml", "--only", "simulation"],
        &["run", "missing.yaml"],
        &["run", "m.yaml", "-j", "0"],
        &["solve", "fat_tre", "--rate", "0.001"],
        // BookSim side by side: the group needs the executable, and the executable the group.
        &["bench", "--only", "booksim"],
        &["bench", "--booksim", "nowhere"],
        &["bench", "--only", "booksim", "--booksim", "nowhere"],
        &["bench", "--only", "sim", "--booksim-dragonfly", "nowhere"],
    ];
    for args in cases {
        let output = scratch.run(args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("runner: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(
        stderr(&scratch.run(&["solve", "fat_tre", "--rate", "0.001"]))
            .contains("did you mean `fat_tree`?")
    );
    assert!(stderr(&scratch.run(&["bench", "--only", "booksim"])).contains("--booksim PATH"));
    assert!(
        stderr(&scratch.run(&["bench", "--only", "booksim", "--booksim", "nowhere"]))
            .contains("the BookSim executable nowhere")
    );
    assert!(
        stderr(&scratch.run(&["bench", "--booksim-dragonfly", "nowhere"]))
            .contains("`--booksim-dragonfly` goes with `--only booksim --booksim PATH`")
    );
}

#[test]
fn a_corrupt_cache_entry_is_recomputed_with_a_warning_and_plan_does_not_count_it() {
    let scratch = Scratch::new();
    scratch.spec("m.yaml", MODEL_SPEC);
    let first = scratch.run(&["run", "m.yaml"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let rows = scratch.rows("small_model");
    // Edit the latency of one point of a Solve batch's entry, as a hand or a bad disk might.
    let solves = crate::common::entries_of_kind(&scratch.path().join(".runner/cache"), "Solve");
    assert_eq!(solves.len(), 4, "one batch per scenario");
    let path = &solves[0];
    let text = std::fs::read_to_string(path).expect("entry");
    let mut entry: serde_json::Value = serde_json::from_str(&text).expect("json");
    entry["output"]["points"][0]["latency"] = serde_json::json!(1.0);
    std::fs::write(path, entry.to_string()).expect("write");
    let plan = stdout(&scratch.run(&["plan", "m.yaml"]));
    assert!(plan.contains("1 cache entry is corrupt"), "{plan}");
    let solve_line = plan.lines().find(|l| l.trim_start().starts_with("Solve")).expect("Solve");
    assert!(solve_line.split_whitespace().collect::<Vec<_>>()[1..3] == ["4", "3"], "{plan}");
    let second = scratch.run(&["run", "m.yaml"]);
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(0), "{err}");
    assert!(err.contains("warning: small_model: 1 corrupt cache entry"), "{err}");
    assert!(err.contains("1 tasks run (1 corrupt cache entry recomputed)"), "{err}");
    assert_eq!(comparable(scratch.rows("small_model")), comparable(rows));
}

#[test]
fn plan_never_prints_a_negative_zero() {
    let scratch = Scratch::new();
    scratch.spec("m.yaml", MODEL_SPEC);
    assert_eq!(scratch.run(&["run", "m.yaml", "-q"]).status.code(), Some(0));
    let plan = stdout(&scratch.run(&["plan", "m.yaml"]));
    assert!(plan.contains(" 0 us"), "{plan}");
    assert!(!plan.contains("-0"), "{plan}");
}

#[test]
fn a_huge_j_is_clamped_with_a_warning() {
    let scratch = Scratch::new();
    scratch.spec("m.yaml", MODEL_SPEC);
    let output = scratch.run(&["run", "m.yaml", "-j", "10000"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("warning: -j 10000 is more than 4 threads per available core"), "{err}");
}

#[test]
fn a_spec_without_report_gets_the_documented_default_figure_and_its_description_shows() {
    let spec = format!("{MODEL_SPEC}description: Latency of small fat-trees > 1 flit\n");
    let scratch = Scratch::new();
    scratch.spec("m.yaml", &spec);
    let output = scratch.run(&["run", "m.yaml", "-q"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let bundle = scratch.path().join("reports/small_model");
    assert!(bundle.join("figures/fig1_latency_vs_rate.svg").is_file());
    assert!(bundle.join("tables/results.csv").is_file());
    let markdown = std::fs::read_to_string(bundle.join("report.md")).expect("report.md");
    assert!(markdown.contains("Latency of small fat-trees > 1 flit"), "{markdown}");
    assert!(!markdown.contains("&gt;"), "{markdown}");
    let html = std::fs::read_to_string(bundle.join("index.html")).expect("index.html");
    assert!(html.contains("Latency of small fat-trees &gt; 1 flit"), "{html}");
}

#[test]
fn report_keeps_the_manifest_authoritative_and_a_failed_render_leaves_a_consistent_bundle() {
    let scratch = Scratch::new();
    scratch.spec("m.yaml", MODEL_SPEC);
    assert_eq!(scratch.run(&["run", "m.yaml", "-q"]).status.code(), Some(0));
    let bundle = scratch.path().join("reports/small_model");
    // A deleted input is not re-rendered away.
    std::fs::remove_file(bundle.join("spec.yaml")).expect("rm");
    let output = scratch.run(&["report", "reports/small_model"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("missing: spec.yaml"), "{err}");
    assert_eq!(scratch.run(&["verify", "reports/small_model"]).status.code(), Some(1));

    // A template that fails: the manifest still lists what is there and states the failure.
    let spec = format!("{MODEL_SPEC}report: {{template_dir: broken}}\n");
    scratch.spec("m.yaml", &spec);
    std::fs::create_dir_all(scratch.path().join("broken")).expect("mkdir");
    std::fs::write(scratch.path().join("broken/report.md.j2"), "{{ undefined_thing.x }}")
        .expect("template");
    let output = scratch.run(&["run", "m.yaml", "-q"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(bundle.join("manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert!(manifest["failure"].as_str().is_some_and(|f| f.contains("report.md.j2")), "{manifest}");
    assert!(!bundle.join("report.md").exists());
    let verify = scratch.run(&["verify", "reports/small_model"]);
    assert_eq!(verify.status.code(), Some(1), "{}", stderr(&verify));
    assert!(stderr(&verify).contains("the last render failed"), "{}", stderr(&verify));
    assert!(!stderr(&verify).contains("not listed"), "{}", stderr(&verify));
}

/// `runner worker` (what a Slurm array element runs) refuses an offset that would wrap, and its
/// errors name the submission directory.
#[test]
fn worker_refuses_a_wrapping_offset_and_names_its_paths() {
    let scratch = Scratch::new();
    let wrapped = scratch.run(&[
        "worker",
        "nowhere",
        "--round",
        "0",
        "--offset",
        &usize::MAX.to_string(),
        "--index",
        "1",
    ]);
    assert_eq!(wrapped.status.code(), Some(2), "{}", stderr(&wrapped));
    assert!(stderr(&wrapped).contains("out of range"), "{}", stderr(&wrapped));
    let missing = scratch.run(&["worker", "nowhere", "--round", "0", "--index", "0"]);
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    assert!(stderr(&missing).contains("nowhere"), "{}", stderr(&missing));
    assert!(!stderr(&missing).contains("panicked"), "{}", stderr(&missing));
}

/// `--only model` reruns the model but keeps the cached simulation results in the bundle, and
/// the summary line names the page a person opens.
#[test]
fn only_one_method_keeps_the_other_methods_cached_results_in_the_bundle() {
    let spec = "\
name: both
seed: 5
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: nbc
  virtual_channels: 4
  message_length: 8
load: {rates: [0.004]}
methods:
  model: {name: nbc_torus}
  simulation: {cycles: 3000, warmup_cycles: 300, replications: 1}
";
    let scratch = Scratch::new();
    scratch.spec("b.yaml", spec);
    let full = scratch.run(&["run", "b.yaml"]);
    assert_eq!(full.status.code(), Some(0), "{}", stderr(&full));
    assert!(stderr(&full).contains("reports/both/index.html"), "{}", stderr(&full));
    let methods = |rows: Vec<runner::store::row::Row>| {
        let mut methods: Vec<String> = rows.into_iter().map(|row| row.method).collect();
        methods.sort();
        methods.dedup();
        methods
    };
    assert_eq!(methods(scratch.rows("both")), ["model", "simulation"]);
    let only = scratch.run(&["run", "b.yaml", "--only", "model", "--force"]);
    assert_eq!(only.status.code(), Some(0), "{}", stderr(&only));
    assert_eq!(methods(scratch.rows("both")), ["model", "simulation"], "simulation rows kept");
    // Without cached simulations, the bundle holds what there is: the model.
    std::fs::remove_dir_all(scratch.path().join(".runner/cache")).expect("rm cache");
    let alone = scratch.run(&["run", "b.yaml", "--only", "model"]);
    assert_eq!(alone.status.code(), Some(0), "{}", stderr(&alone));
    assert_eq!(methods(scratch.rows("both")), ["model"]);
}

/// Every example that `runner simulate --help` and `runner solve --help` print runs and exits
/// 0, so the help never teaches a command that fails; and no example line of any help is
/// wrapped (a wrapped example cannot be copied and pasted).
#[test]
fn the_help_examples_of_simulate_and_solve_run() {
    let scratch = Scratch::new();
    for command in ["", "run", "plan", "simulate", "solve"] {
        let args: Vec<&str> = [command, "--help"].into_iter().filter(|a| !a.is_empty()).collect();
        let help = stdout(&scratch.run(&args));
        let examples = help.split("Examples:\n").nth(1).unwrap_or_default();
        for line in examples.lines().take_while(|line| !line.trim().is_empty()) {
            assert!(
                line.starts_with("  runner "),
                "a wrapped example in `{command} --help`: {line}"
            );
        }
    }
    for command in ["simulate", "solve"] {
        let help = stdout(&scratch.run(&[command, "--help"]));
        let examples: Vec<&str> = help
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix("runner "))
            .filter(|line| line.starts_with(command))
            .collect();
        assert!(examples.len() >= 2, "{command} --help has examples:\n{help}");
        for example in examples {
            let args: Vec<&str> = example.split_whitespace().collect();
            let output = scratch.run(&args);
            assert_eq!(output.status.code(), Some(0), "runner {example}\n{}", stderr(&output));
        }
    }
}

/// A model sweep of 2 scenarios x 5,000 points: two Solve batches per scenario (4096 + 904).
const BATCHED_SPEC: &str = "\
name: batched
scenario:
  topology: {kind: torus, radix: 8, dimensions: 2}
  routing: nbc
  virtual_channels: [6, 10]
  message_length: 32
load:
  fraction_of_saturation: {from: 0.05, to: 1.05, points: 5000}
methods:
  model: {name: nbc_torus, curve_points: 0}
report:
  figures: [{title: latency, x: rate, y: latency}]
  tables: []
";

/// Solve batches give the same rows under `-j 1` and `-j 2` (wall time aside), in load order,
/// each point with its own task id.
#[test]
fn batched_model_rows_are_identical_under_j1_and_j2() {
    let one = Scratch::new();
    one.spec("b.yaml", BATCHED_SPEC);
    let two = Scratch::new();
    two.spec("b.yaml", BATCHED_SPEC);
    let a = one.run(&["run", "b.yaml", "-j", "1"]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert!(stderr(&a).contains("6 tasks run"), "2 Saturation + 4 Solve: {}", stderr(&a));
    let b = two.run(&["run", "b.yaml", "-j", "2"]);
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    let rows = comparable(one.rows("batched"));
    assert_eq!(rows.len(), 10_000);
    assert_eq!(rows, comparable(two.rows("batched")));
    let ids: std::collections::HashSet<&str> = rows.iter().map(|r| r.task_id.as_str()).collect();
    assert_eq!(ids.len(), rows.len(), "every point has its own id");
    for scenario in rows.chunks(5000) {
        let fractions: Vec<f64> =
            scenario.iter().filter_map(|r| r.fraction_of_saturation).collect();
        assert!(fractions.windows(2).all(|w| w[0] < w[1]), "load order");
    }
}

/// A run stopped inside a batch (its entry never renamed into place: a temporary file is what
/// `kill -9` leaves) resumes by recomputing that batch only, with the same rows.
#[test]
fn an_interrupted_batch_is_recomputed_alone() {
    let scratch = Scratch::new();
    scratch.spec("b.yaml", BATCHED_SPEC);
    let first = scratch.run(&["run", "b.yaml", "-q"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let rows = comparable(scratch.rows("batched"));
    let cache = scratch.path().join(".runner/cache");
    let solves = crate::common::entries_of_kind(&cache, "Solve");
    assert_eq!(solves.len(), 4);
    let lost = &solves[1];
    let torn = std::fs::read(lost).expect("entry");
    std::fs::remove_file(lost).expect("rm");
    let temporary = lost.with_file_name(".runner-tmp-interrupted");
    std::fs::write(&temporary, &torn[..torn.len() / 2]).expect("write");
    let second = scratch.run(&["run", "b.yaml"]);
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(0), "{err}");
    assert!(err.contains("1 tasks run, 5 cached"), "{err}");
    assert!(lost.exists(), "the batch is cached again");
    assert_eq!(comparable(scratch.rows("batched")), rows);
    // Nothing changed since: the bundle stands as it is (its recorded fingerprint is the first
    // run's: the second reproduced every number and left the bundle's bytes alone).
    let third = scratch.run(&["run", "b.yaml"]);
    let said = stderr(&third);
    assert!(said.contains("0 tasks run, 6 cached"), "{said}");
    assert!(said.contains("is up to date") || said.contains("bundle unchanged"), "{said}");
    assert_eq!(comparable(scratch.rows("batched")), rows);
}

/// Every file of a directory tree, by path relative to it, with its bytes.
fn tree(root: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let name = path.strip_prefix(root).expect("below").display().to_string();
                files.insert(name, std::fs::read(&path).expect("read file"));
            }
        }
    }
    files
}

#[test]
fn a_rerun_that_reproduces_every_number_leaves_the_bundle_byte_for_byte() {
    let scratch = Scratch::new();
    scratch.spec("s.yaml", SIM_SPEC);
    let first = scratch.run(&["run", "s.yaml", "--quiet"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let bundle = scratch.path().join("reports/small_sim");
    let before = tree(&bundle);
    // A second, clean run recomputes every task (times, host and command line differ), as
    // in a fresh clone of a repository that commits its bundles.
    std::thread::sleep(Duration::from_millis(1100));
    let again = scratch.run(&["run", "s.yaml", "--force"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let said = stderr(&again);
    assert!(said.contains("rows reproduced bit for bit, bundle unchanged"), "{said}");
    assert!(tree(&bundle) == before, "the bundle's bytes changed though no number moved");
    // A number that moves rewrites it.
    scratch.spec("s.yaml", &SIM_SPEC.replace("seed: 7", "seed: 8"));
    let moved = scratch.run(&["run", "s.yaml", "--quiet"]);
    assert_eq!(moved.status.code(), Some(0), "{}", stderr(&moved));
    assert!(tree(&bundle) != before, "new numbers, new bundle");
}

/// An interrupted `runner diff` (its fresh run of the spec stopped by SIGINT) exits 130, as an
/// interrupted `runner run` does, not 2.
#[test]
fn an_interrupted_diff_exits_130() {
    let scratch = Scratch::new();
    scratch.spec("s.yaml", &one_endless_simulation());
    let bundle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/quickstart");
    let child = scratch
        .command()
        .args([std::ffi::OsStr::new("diff"), bundle.as_os_str(), "s.yaml".as_ref()])
        .args(["-j", "1"])
        // The fresh run's temporary root goes here, so that its lock can be watched.
        .env("TMPDIR", scratch.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Its signal handler is set once the fresh run holds its lock.
    let deadline = Instant::now() + Duration::from_secs(60);
    let locked = || {
        std::fs::read_dir(scratch.path()).into_iter().flatten().flatten().any(|entry| {
            let lock = entry.path().join(".runner/locks/small_sim.lock");
            std::fs::read_to_string(lock).is_ok_and(|t| t.contains("pid"))
        })
    };
    while !locked() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let status =
        std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    assert!(status.is_ok_and(|s| s.success()), "could not send SIGINT");
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(stderr(&output).contains("interrupted; nothing was compared"), "{}", stderr(&output));
}

/// `runner diff SPEC ...` says that A must be a bundle and that a spec was given, instead of a
/// Parquet footer error; a file that is not Parquet says what was expected.
#[test]
fn diff_says_what_it_expected_when_given_a_spec_or_another_file_as_a_bundle() {
    let scratch = Scratch::new();
    scratch.spec("s.yaml", SIM_SPEC);
    let output = scratch.run(&["diff", "s.yaml", "s.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("s.yaml is a spec (YAML), but A must be a bundle"), "{err}");
    assert!(!err.contains("footer"), "{err}");
    std::fs::write(scratch.path().join("notes.txt"), "not parquet").expect("write");
    let output = scratch.run(&["diff", "notes.txt", "s.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("notes.txt is not a results.parquet"), "{err}");
    assert!(err.contains("bundle directories"), "{err}");
}

/// `runner verify --check 0` would check nothing and pass: refused, as are a non-finite or
/// non-positive `--max-task-seconds`; each message names the option.
#[test]
fn verify_refuses_a_check_of_nothing_and_a_meaningless_task_time_limit() {
    let scratch = Scratch::new();
    let bundle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/quickstart");
    let bundle = bundle.to_str().expect("UTF-8 path");
    let cases: [(&[&str], &str); 5] = [
        (&["--check", "0"], "--check 0 would re-evaluate no task"),
        (&["--check", "1", "--max-task-seconds", "nan"], "got NaN"),
        (&["--check", "1", "--max-task-seconds", "inf"], "got inf"),
        (&["--check", "1", "--max-task-seconds", "0"], "got 0"),
        (&["--check", "1", "--max-task-seconds=-1e300"], "got -1e300"),
    ];
    for (options, expected) in cases {
        let mut args = vec!["verify", bundle];
        args.extend_from_slice(options);
        let output = scratch.run(&args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{options:?}: {err}");
        assert!(err.contains(expected), "{options:?}: {err}");
    }
}

/// A rejected command-line number is echoed in its shortest form (`-1e300`), not as 301
/// digits.
#[test]
fn rejected_command_line_numbers_are_echoed_in_their_shortest_form() {
    let scratch = Scratch::new();
    let simulate = ["simulate", "topology=torus", "radix=4", "dimensions=2"];
    let cases: [(Vec<&str>, &str); 3] = [
        ([&simulate[..], &["--rate=-1e300"]].concat(), "found -1e300"),
        (
            [&simulate[..], &["--rate", "0.01", "--target-precision", "1e300"]].concat(),
            "found 1e300",
        ),
        (vec!["diff", "a", "b", "--tolerance=-1e300"], "got -1e300"),
    ];
    for (args, expected) in cases {
        let output = scratch.run(&args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("0000000000"), "{args:?}: {err}");
    }
}

/// `runner verify --check` of a bundle with nothing it can re-run (external methods only)
/// says that nothing was re-checked and fails, rather than passing on an empty sample.
#[test]
fn verify_check_of_a_bundle_with_nothing_to_re_evaluate_fails_saying_so() {
    let scratch = Scratch::new();
    scratch.spec(
        "e.yaml",
        r#"name: only_external
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
load: {rates: [0.001]}
methods:
  external:
    - name: constant
      kind: model
      command: [sh, -c, 'printf %s "{\"status\": \"ok\", \"latency\": 3}"']
      version: '1'
report: {figures: []}
"#,
    );
    let run = scratch.run(&["run", "e.yaml", "-q"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let output = scratch.run(&["verify", "reports/only_external", "--check", "2"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{}{err}", stdout(&output));
    assert!(err.contains("--check re-evaluated no task"), "{err}");
    assert!(stdout(&output).contains("every file matches manifest.json"), "{}", stdout(&output));
}
