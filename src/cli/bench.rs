//! `runner bench`: the project's benchmark command (use a release build).
//!
//! Three groups, each on fixed configurations so figures compare across commits:
//! the simulator (cycles/s, flit-hops/s, ns per flit-hop, peak memory), the
//! models (median solve time of one point, saturation bisection time) and the
//! scheduler (plan + run + gather of a 10,000-point model-only spec).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::Outcome;
use crate::exec::{self, ExecOptions, cache::Cache};
use crate::model::{self, ModelName, ModelOptions};
use crate::scenario::{Routing, Scenario, Switching, Topology};
use crate::sim;
use crate::spec::SpecSource;

/// Arguments of `runner bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Run only one group.
    #[arg(long, value_enum)]
    only: Option<Group>,
}

/// A benchmark group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Group {
    /// The flit-level simulator.
    Sim,
    /// The analytical models.
    Model,
    /// Planning and scheduling overhead.
    Scheduler,
}

/// Runs the benchmarks and prints the figures.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    if cfg!(debug_assertions) && !args.json {
        super::print_error(
            "warning: this is a debug build; benchmark with `cargo run --release -- bench`\n",
        );
    }
    let mut results = serde_json::Map::new();
    if args.only.is_none_or(|g| g == Group::Sim) {
        results.insert("simulator".into(), bench_sim(args.json)?);
    }
    if args.only.is_none_or(|g| g == Group::Model) {
        results.insert("models".into(), bench_models(args.json)?);
    }
    if args.only.is_none_or(|g| g == Group::Scheduler) {
        results.insert("scheduler".into(), bench_scheduler(args.json)?);
    }
    results.insert("peak_memory_mib".into(), serde_json::json!(peak_memory_mib()));
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&results)?)?;
    } else {
        outln!("peak memory (VmHWM): {:.1} MiB", peak_memory_mib().unwrap_or(f64::NAN))?;
    }
    Ok(Outcome::Success)
}

fn bench_sim(quiet: bool) -> anyhow::Result<serde_json::Value> {
    let mut out = Vec::new();
    for (name, scenario, rate, options) in sim::bench_configurations() {
        let started = Instant::now();
        let result = sim::simulate(&scenario, rate, &options, 1, None);
        let seconds = started.elapsed().as_secs_f64();
        let value = match result {
            Ok(m) => {
                let cycles = m.cycles.unwrap_or(0) as f64;
                let hops = m.flit_hops.unwrap_or(0) as f64;
                if !quiet {
                    outln!(
                        "sim   {name:<40} {:>12.0} cycles/s {:>8.2} M flit-hops/s {:>7.1} ns/flit-hop  latency {:.2} ({})",
                        cycles / seconds,
                        hops / seconds / 1e6,
                        seconds * 1e9 / hops.max(1.0),
                        m.latency.unwrap_or(f64::NAN),
                        m.status.as_str()
                    )?;
                }
                serde_json::json!({
                    "name": name, "seconds": seconds, "cycles": cycles, "flit_hops": hops,
                    "cycles_per_second": cycles / seconds, "flit_hops_per_second": hops / seconds,
                    "ns_per_flit_hop": seconds * 1e9 / hops.max(1.0), "latency": m.latency,
                    "status": m.status.as_str(),
                })
            }
            Err(e) => {
                if !quiet {
                    outln!("sim   {name:<40} error: {e}")?;
                }
                serde_json::json!({"name": name, "error": e.to_string()})
            }
        };
        out.push(value);
    }
    Ok(serde_json::Value::Array(out))
}

fn model_configurations() -> Vec<(&'static str, ModelName, Scenario, f64)> {
    let torus16 = Topology::Torus { radix: 16, dimensions: 2 };
    let mut scouting = Scenario::new(torus16.clone());
    scouting.switching = Switching::Scouting { scouting_distance: 6 };
    scouting.routing = Routing::Adaptive;
    scouting.virtual_channels = 2;
    let mut nbc = Scenario::new(torus16.clone());
    nbc.routing = Routing::Nbc;
    nbc.virtual_channels = 10;
    let mut circuit = Scenario::new(torus16);
    circuit.switching = Switching::Circuit;
    circuit.routing = Routing::Adaptive;
    circuit.virtual_channels = 2;
    circuit.fault_rate = 0.02;
    let mut fat_tree = Scenario::new(Topology::FatTree { processors: 1024 });
    fat_tree.routing = Routing::UpDown;
    let mut hypercube = Scenario::new(Topology::Hypercube { dimensions: 8 });
    hypercube.routing = Routing::Duato;
    hypercube.virtual_channels = 4;
    hypercube.broadcast_fraction = 0.05;
    vec![
        ("scouting_torus k=16 K=6 V=2", ModelName::ScoutingTorus, scouting, 0.3),
        ("nbc_torus k=16 V=10", ModelName::NbcTorus, nbc, 0.3),
        ("circuit_torus_faults k=16 V=2 theta=0.02", ModelName::CircuitTorusFaults, circuit, 0.3),
        ("fat_tree N=1024", ModelName::FatTree, fat_tree, 0.3),
        ("broadcast_hypercube n=8 V=4 beta=0.05", ModelName::BroadcastHypercube, hypercube, 0.3),
    ]
}

fn bench_models(quiet: bool) -> anyhow::Result<serde_json::Value> {
    let options = ModelOptions::default();
    let mut out = Vec::new();
    for (name, model, scenario, fraction) in model_configurations() {
        let saturation = (0..5)
            .map(|_| {
                let started = Instant::now();
                let rate = model::saturation_rate(model, &scenario, &options);
                (started.elapsed().as_secs_f64(), rate)
            })
            .collect::<Vec<_>>();
        let Some((_, Ok(rate))) = saturation.first().cloned() else {
            if !quiet {
                outln!("model {name:<40} error: {:?}", saturation.first().map(|s| &s.1))?;
            }
            out.push(serde_json::json!({"name": name, "error": "saturation failed"}));
            continue;
        };
        let mut sat_times: Vec<f64> = saturation.iter().map(|s| s.0).collect();
        let load = rate * fraction;
        let iterations = 2000;
        let mut times = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let started = Instant::now();
            let result = model::solve(model, &scenario, std::hint::black_box(load), &options);
            times.push(started.elapsed().as_secs_f64());
            std::hint::black_box(result).ok();
        }
        let solve_median = median(&mut times);
        let sat_median = median(&mut sat_times);
        if !quiet {
            outln!(
                "model {name:<40} solve median {:>8.2} us   saturation {:>8.3} ms (rate {rate:.6})",
                solve_median * 1e6,
                sat_median * 1e3
            )?;
        }
        out.push(serde_json::json!({
            "name": name, "solve_median_us": solve_median * 1e6,
            "saturation_median_ms": sat_median * 1e3, "saturation_rate": rate,
        }));
    }
    Ok(serde_json::Value::Array(out))
}

const SCHEDULER_SPEC: &str = "\
name: bench_scheduler
scenario:
  topology: {kind: fat_tree, processors: 256}
  routing: up_down
  message_length: {from: 1, to: 100, step: 1}
load:
  rates: {from: 0.00001, to: 0.0001, points: 100}
methods:
  model: {name: fat_tree}
";

fn bench_scheduler(quiet: bool) -> anyhow::Result<serde_json::Value> {
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let source = SpecSource {
        path: dir.path().join("bench_scheduler.yaml"),
        text: SCHEDULER_SPEC.into(),
        sha256: String::new(),
    };
    let experiment = crate::spec::parse(&source).map_err(|e| anyhow::anyhow!("{e}"))?;
    let plan = crate::plan::build(&experiment, None);
    let planned = started.elapsed().as_secs_f64();
    let cache = Cache::new(dir.path().join("cache"));
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let options = ExecOptions { jobs, force: false, quiet: true };
    let interrupt = Arc::new(AtomicBool::new(false));
    let summary = exec::run(&experiment, &plan, &cache, &options, &interrupt)?;
    let rows = crate::store::gather(&experiment, &plan, &summary.states);
    crate::store::parquet::write(&dir.path().join("results.parquet"), &rows, &[])?;
    let first = started.elapsed().as_secs_f64();
    let again = Instant::now();
    let summary2 = exec::run(&experiment, &plan, &cache, &options, &interrupt)?;
    let rows2 = crate::store::gather(&experiment, &plan, &summary2.states);
    crate::store::parquet::write(&dir.path().join("results.parquet"), &rows2, &[])?;
    let cached = again.elapsed().as_secs_f64();
    if !quiet {
        outln!(
            "sched 10,000-point model-only spec: plan {:.3} s, plan+run+write {:.3} s ({} tasks), cached re-run {:.3} s",
            planned,
            first,
            summary.executed,
            cached
        )?;
    }
    Ok(serde_json::json!({
        "points": rows.len(), "plan_seconds": planned, "run_seconds": first,
        "cached_rerun_seconds": cached, "tasks_executed": summary.executed,
    }))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Peak resident memory of this process (Linux `VmHWM`), in MiB.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
