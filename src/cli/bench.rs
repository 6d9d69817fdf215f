//! `runner bench`: the project's benchmark command (use a release build).
//!
//! Three groups, each on fixed configurations so figures compare across commits:
//! the simulator (cycles/s, flit-hops/s, ns per flit-hop, peak memory), the
//! models (median solve time of one point, saturation bisection time) and the
//! scheduler (`runner run` of a 100,000-point model sweep, cold and cached, and the peak
//! memory of `runner plan` on 1,000,000 tasks, each in a child process). A fourth, run only
//! when asked (`--only threads`), times large tori on one thread and on several, alternated,
//! and checks that their results are the same: it needs a machine whose cores are free. A
//! fifth (`--only booksim --booksim PATH`) runs BookSim 2 and runner side by side on the same
//! workloads and gives the ratio of their CPU time per flit-hop (the dragonfly's row too with
//! `--booksim-dragonfly PATH`, a BookSim whose dragonfly channels take one cycle).

use std::time::Instant;

use super::Outcome;
use crate::model::{self, ModelName, ModelOptions};
use crate::scenario::{Routing, Scenario, Switching, Topology};
use crate::sim;

/// Arguments of `runner bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Run only one group.
    #[arg(long, value_enum)]
    only: Option<Group>,
    /// With `--only threads`: the threads to compare with one (at least 2; default: the
    /// available cores, at least 2).
    #[arg(long, value_name = "N")]
    threads: Option<u16>,
    /// With `--only booksim`: the BookSim 2 executable to run beside runner (built from its
    /// sources, `make` in `src/`).
    #[arg(long, value_name = "PATH")]
    booksim: Option<std::path::PathBuf>,
    /// With `--only booksim`: also the dragonfly row, run on this BookSim 2 executable, built
    /// with its `dragonflynew` channels taking one cycle as runner's do (stock BookSim gives
    /// local channels 10 cycles and global ones 100: set both `SetLatency` calls in
    /// `src/networks/dragonfly.cpp` to 1).
    #[arg(long, value_name = "PATH")]
    booksim_dragonfly: Option<std::path::PathBuf>,
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
    /// One large network on one thread and on several (`--threads`), alternated; not in the
    /// default run.
    Threads,
    /// BookSim 2 (`--booksim PATH`) and runner side by side on the same workloads, alternated:
    /// CPU time per flit-hop and the ratio; not in the default run.
    Booksim,
}

/// Runs the benchmarks and prints the figures.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    if cfg!(debug_assertions) && !args.json {
        super::print_error(
            "warning: this is a debug build; benchmark with `cargo run --release -- bench`\n",
        );
    }
    let booksim = match (args.only, &args.booksim) {
        (Some(Group::Booksim), Some(path)) => Some(path.clone()),
        (Some(Group::Booksim), None) => anyhow::bail!(
            "`--only booksim` needs the BookSim 2 executable: `--booksim PATH` (build it from \
             its sources with `make` in `src/`; docs/performance.md, \"Side by side\")"
        ),
        (_, Some(_)) => anyhow::bail!("`--booksim` goes with `--only booksim`"),
        (_, None) => None,
    };
    if args.booksim_dragonfly.is_some() && booksim.is_none() {
        anyhow::bail!(
            "`--booksim-dragonfly` goes with `--only booksim --booksim PATH` (it adds the \
             dragonfly's row to the torus rows)"
        );
    }
    let mut results = serde_json::Map::new();
    if let Some(path) = booksim {
        let dragonfly = args.booksim_dragonfly.as_deref();
        results.insert("booksim".into(), bench_booksim(&path, dragonfly, args.json)?);
    }
    if args.only.is_none_or(|g| g == Group::Sim) {
        results.insert("simulator".into(), bench_sim(args.json)?);
    }
    if args.only.is_none_or(|g| g == Group::Model) {
        results.insert("models".into(), bench_models(args.json)?);
    }
    if args.only.is_none_or(|g| g == Group::Scheduler) {
        results.insert("scheduler".into(), bench_scheduler(args.json)?);
    }
    if args.only == Some(Group::Threads) {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        let threads = args.threads.map_or(cores, usize::from).max(2);
        results.insert("threads".into(), bench_threads(threads, args.json)?);
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

/// The scheduler group's sweep: 100,000 model points of one scenario (`runner run`, `-j 2`).
const SCHEDULER_SPEC: &str = "\
name: bench_scheduler
seed: 1
scenario:
  topology: {kind: torus, radix: 8, dimensions: 2}
  switching: {kind: wormhole}
  routing: nbc
  virtual_channels: 10
  message_length: 32
load:
  fraction_of_saturation: {from: 0.01, to: 0.95, points: 100000}
methods:
  model: {name: nbc_torus}
report:
  figures:
    - {title: latency, x: rate, y: latency}
  tables: []
";

/// The scheduler group's plan of 1,000,000 tasks (the `MAX_TASKS` limit): 499,999 simulations
/// and their Aggregates, planned only (`runner plan`).
const MILLION_TASKS_SPEC: &str = "\
name: bench_plan
seed: 1
scenario:
  topology: {kind: torus, radix: 8, dimensions: 2}
  routing: dimension_order
  virtual_channels: 2
  message_length: 16
load:
  rates: {from: 0.0001, to: 0.01, points: 499999}
methods:
  simulation: {replications: 1}
";

/// Runs this executable as `runner <args>` in `dir`; returns the wall time and the child's
/// peak resident memory in MiB (its `VmHWM`, sampled until it exits: each process has its own
/// peak, so the figure is not the bench's).
fn child_runner(dir: &std::path::Path, args: &[&str]) -> anyhow::Result<(f64, Option<f64>)> {
    let exe = std::env::current_exe()?;
    let started = Instant::now();
    let mut child = std::process::Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = None;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if let Some(mib) = std::fs::read_to_string(&status_path).ok().and_then(|s| vm_hwm_mib(&s)) {
            peak = Some(mib);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let seconds = started.elapsed().as_secs_f64();
    anyhow::ensure!(status.success(), "`runner {}` failed ({status})", args.join(" "));
    Ok((seconds, peak))
}

fn bench_scheduler(quiet: bool) -> anyhow::Result<serde_json::Value> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("sweep.yaml"), SCHEDULER_SPEC)?;
    std::fs::write(dir.path().join("million.yaml"), MILLION_TASKS_SPEC)?;
    let run = ["run", "sweep.yaml", "-j", "2", "-q"];
    let (cold, cold_mib) = child_runner(dir.path(), &run)?;
    let (cached, cached_mib) = child_runner(dir.path(), &run)?;
    let (plan_seconds, plan_mib) = child_runner(dir.path(), &["plan", "million.yaml"])?;
    let mib = |m: Option<f64>| m.map_or_else(|| "?".into(), |m| format!("{m:.0}"));
    if !quiet {
        outln!(
            "sched 100,000-point model sweep (runner run -j 2, report included): cold {cold:.2} s \
             (peak {} MiB), cached {cached:.2} s (peak {} MiB)",
            mib(cold_mib),
            mib(cached_mib)
        )?;
        outln!(
            "sched 1,000,000-task plan (runner plan): {plan_seconds:.2} s, peak {} MiB",
            mib(plan_mib)
        )?;
    }
    Ok(serde_json::json!({
        "sweep_points": 100_000, "cold_seconds": cold, "cold_peak_mib": cold_mib,
        "cached_seconds": cached, "cached_peak_mib": cached_mib,
        "plan_million_tasks_seconds": plan_seconds, "plan_million_tasks_peak_mib": plan_mib,
    }))
}

/// The large tori of `--only threads`: the simulator group's 256 x 256 torus and a 512 x 512
/// one at about half its saturation rate (the docs' "One network on several threads" rows).
fn threads_configurations() -> Vec<(&'static str, Scenario, f64, sim::SimOptions)> {
    let mut configurations: Vec<_> = sim::bench_configurations()
        .into_iter()
        .filter(|(name, ..)| *name == "torus256x256_dimension_order_v2")
        .collect();
    let torus512 = Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: 2,
        buffer_depth: 8,
        message_length: 32,
        ..Scenario::new(Topology::Torus { radix: 512, dimensions: 2 })
    };
    let options = sim::SimOptions { warmup_cycles: 700, cycles: 300, ..Default::default() };
    configurations.push(("torus512x512_dimension_order_v2", torus512, 0.00007, options));
    configurations
}

/// Rounds of one thread then `threads` per configuration in `--only threads`.
const THREADS_ROUNDS: usize = 3;

/// Each of [`threads_configurations`] on one thread and on `threads`, alternated
/// [`THREADS_ROUNDS`] times: the median wall seconds of each, the speed-up of the medians and
/// each round's. Fails if the results of any run differ from the first's in any field.
fn bench_threads(threads: usize, quiet: bool) -> anyhow::Result<serde_json::Value> {
    let mut out = Vec::new();
    for (name, scenario, rate, options) in threads_configurations() {
        let (mut one, mut many, mut first) = (Vec::new(), Vec::new(), None);
        for _ in 0..THREADS_ROUNDS {
            for count in [1, threads] {
                let options = sim::SimOptions { threads: count, ..options.clone() };
                let started = Instant::now();
                let measured = sim::simulate(&scenario, rate, &options, 1, None)?;
                let seconds = started.elapsed().as_secs_f64();
                let fields = serde_json::to_string(&measured)?;
                match &first {
                    None => first = Some(fields),
                    Some(first) if *first != fields => anyhow::bail!(
                        "{name}: the results on {count} threads differ from one thread's"
                    ),
                    Some(_) => {}
                }
                if count == 1 { one.push(seconds) } else { many.push(seconds) }
            }
        }
        // Each round's own ratio too: on a machine whose speed drifts from run to run, the two
        // runs of a round, back to back, share more of the drift than the medians do.
        let per_round: Vec<f64> = one.iter().zip(&many).map(|(one, many)| one / many).collect();
        let (low, high) =
            per_round.iter().fold((f64::MAX, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
        let (one, many) = (median(&mut one), median(&mut many));
        if !quiet {
            outln!(
                "threads {name:<38} 1 thread {one:>6.2} s  {threads} threads {many:>6.2} s  {:.2}x (medians of {THREADS_ROUNDS}; per round {low:.2}-{high:.2}x; results identical)",
                one / many
            )?;
        }
        out.push(serde_json::json!({
            "name": name, "threads": threads, "rounds": THREADS_ROUNDS,
            "one_thread_seconds": one, "threads_seconds": many, "speed_up": one / many,
            "speed_up_per_round": per_round, "results_identical": true,
        }));
    }
    Ok(serde_json::Value::Array(out))
}

/// A workload of `--only booksim`: BookSim 2's configuration and runner's `simulate`
/// arguments for the same network, pattern, injection process and load. Runner runs ten times
/// as many cycles as BookSim (its runs are too short to time otherwise); both are charged per
/// flit-hop of runner's count, scaled to BookSim's cycles.
struct SideBySide {
    name: &'static str,
    /// BookSim's configuration of the network, the router and the load; [`BOOKSIM_COMMON`],
    /// the cycles and the seed are added.
    booksim: &'static str,
    booksim_cycles: u64,
    /// `runner simulate` arguments of the network, the router and the load;
    /// [`RUNNER_COMMON`], the cycles and `--json` are added.
    runner: &'static str,
    runner_cycles: u64,
    /// Whether the row needs a BookSim whose dragonfly channels take one cycle
    /// (`--booksim-dragonfly`).
    one_cycle_dragonfly: bool,
}

/// What BookSim's side of every workload shares: one-cycle channels (on the torus; the
/// dragonfly's take the cycles its source gives them), uniform traffic (the source included)
/// from Bernoulli sources at `injection_rate` messages per node and cycle, one sample period
/// with no warm-up.
const BOOKSIM_COMMON: &str = "use_noc_latency = 0; traffic = uniform;
injection_process = bernoulli; injection_rate_uses_flits = 0; sim_type = latency;
warmup_periods = 0; max_samples = 1; latency_thres = 500.0;
";

/// The same on runner's side.
const RUNNER_COMMON: &str =
    "traffic=uniform_with_self injection_process=bernoulli --warmup-cycles 0";

/// The rows of docs/performance.md's "Side by side": the 8 x 8 torus with runner's router and
/// with BookSim's, and the dragonfly p = 2 (72 terminals) under minimal routing.
const SIDE_BY_SIDE: [SideBySide; 3] = [
    SideBySide {
        name: "torus8x8_dimension_order_v2_m32",
        booksim: "topology = torus; k = 8; n = 2; routing_function = dim_order;
num_vcs = 2; vc_buf_size = 8; wait_for_tail_credit = 1; input_speedup = 2;
packet_size = 32; injection_rate = 0.005;
",
        booksim_cycles: 100_000,
        runner: "topology=torus radix=8 dimensions=2 routing=dimension_order virtual_channels=2 \
                 buffer_depth=8 message_length=32 --rate 0.005",
        runner_cycles: 1_000_000,
        one_cycle_dragonfly: false,
    },
    SideBySide {
        name: "torus8x8_booksim_router_m16",
        booksim: "topology = torus; k = 8; n = 2; routing_function = dim_order;
num_vcs = 2; vc_buf_size = 8; wait_for_tail_credit = 0; input_speedup = 1;
sw_allocator = islip; alloc_iters = 1; vc_allocator = islip;
packet_size = 16; injection_rate = 0.0122;
",
        booksim_cycles: 80_000,
        runner: "router=booksim topology=torus radix=8 dimensions=2 routing=dimension_order \
                 virtual_channels=2 message_length=16 --rate 0.0122",
        runner_cycles: 800_000,
        one_cycle_dragonfly: false,
    },
    SideBySide {
        name: "dragonfly_p2_minimal_v3_m4",
        booksim: "topology = dragonflynew; k = 2; n = 1; routing_function = min;
num_vcs = 3; vc_buf_size = 8; wait_for_tail_credit = 1; input_speedup = 3;
packet_size = 4; injection_rate = 0.0625;
",
        booksim_cycles: 100_000,
        runner: "topology=dragonfly terminals_per_router=2 routing=minimal virtual_channels=3 \
                 buffer_depth=8 message_length=4 --rate 0.0625",
        runner_cycles: 1_000_000,
        one_cycle_dragonfly: true,
    },
];

impl SideBySide {
    /// BookSim's whole configuration.
    fn booksim_config(&self) -> String {
        format!(
            "{BOOKSIM_COMMON}{}sample_period = {};\nseed = 1;\n",
            self.booksim, self.booksim_cycles
        )
    }

    /// Runner's whole argument list.
    fn runner_args(&self) -> Vec<String> {
        let cycles = ["--cycles".to_string(), self.runner_cycles.to_string(), "--json".into()];
        std::iter::once("simulate")
            .chain(RUNNER_COMMON.split_whitespace())
            .chain(self.runner.split_whitespace())
            .map(String::from)
            .chain(cycles)
            .collect()
    }
}

/// Alternations of BookSim and runner per workload in `--only booksim`.
const BOOKSIM_ROUNDS: usize = 3;

/// Each of [`SIDE_BY_SIDE`] with BookSim (`booksim`, or `dragonfly` for the row that needs
/// one-cycle dragonfly channels, which is left out without it; run in a scratch directory)
/// and with this executable, alternated [`BOOKSIM_ROUNDS`] times: the median CPU time per
/// flit-hop of each and their ratio.
fn bench_booksim(
    booksim: &std::path::Path,
    dragonfly: Option<&std::path::Path>,
    quiet: bool,
) -> anyhow::Result<serde_json::Value> {
    let executable = |path: &std::path::Path| {
        std::fs::canonicalize(path)
            .map_err(|e| anyhow::anyhow!("the BookSim executable {}: {e}", path.display()))
    };
    let booksim = executable(booksim)?;
    let dragonfly = dragonfly.map(executable).transpose()?;
    let dir = tempfile::tempdir()?;
    let exe = std::env::current_exe()?;
    let mut out = Vec::new();
    for row in &SIDE_BY_SIDE {
        let booksim = match (row.one_cycle_dragonfly, &dragonfly) {
            (false, _) => &booksim,
            (true, Some(dragonfly)) => dragonfly,
            (true, None) => continue,
        };
        std::fs::write(dir.path().join("workload.cfg"), row.booksim_config())?;
        let runner_args = row.runner_args();
        let runner_args: Vec<&str> = runner_args.iter().map(String::as_str).collect();
        let (mut theirs, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..BOOKSIM_ROUNDS {
            let (booksim_cpu, _) = child_cpu_seconds(booksim, &["workload.cfg"], dir.path())?;
            let (runner_cpu, json) = child_cpu_seconds(&exe, &runner_args, dir.path())?;
            let measured: serde_json::Value = serde_json::from_str(&json)?;
            let hops = measured["flit_hops"].as_f64().filter(|&h| h > 0.0).ok_or_else(|| {
                anyhow::anyhow!("{}: runner's run reported no flit-hops", row.name)
            })?;
            // BookSim's run is charged runner's flit-hops over BookSim's cycles.
            let booksim_hops = hops * row.booksim_cycles as f64 / row.runner_cycles as f64;
            theirs.push(booksim_cpu * 1e9 / booksim_hops);
            ours.push(runner_cpu * 1e9 / hops);
        }
        let (theirs, ours) = (median(&mut theirs), median(&mut ours));
        if !quiet {
            outln!(
                "booksim {:<38} BookSim {theirs:>7.1} ns/flit-hop  runner {ours:>6.2} ns/flit-hop  {:.1}x (CPU time, medians of {BOOKSIM_ROUNDS}; {} and {} cycles)",
                row.name,
                theirs / ours,
                row.booksim_cycles,
                row.runner_cycles
            )?;
        }
        out.push(serde_json::json!({
            "name": row.name, "rounds": BOOKSIM_ROUNDS,
            "booksim_cycles": row.booksim_cycles, "runner_cycles": row.runner_cycles,
            "booksim_ns_per_flit_hop": theirs, "runner_ns_per_flit_hop": ours,
            "ratio": theirs / ours,
        }));
    }
    Ok(serde_json::Value::Array(out))
}

/// Runs `program args` in `dir` to its end; returns the CPU seconds (user and system) it used
/// and its standard output. Fails, with the end of its standard error, if it fails.
fn child_cpu_seconds(
    program: &std::path::Path,
    args: &[&str],
    dir: &std::path::Path,
) -> anyhow::Result<(f64, String)> {
    let before = children_cpu_seconds()?;
    let output = std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| anyhow::anyhow!("{}: {e}", program.display()))?;
    let seconds = children_cpu_seconds()? - before;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
        anyhow::bail!(
            "`{} {}` failed ({}): {tail}",
            program.display(),
            args.join(" "),
            output.status
        );
    }
    Ok((seconds, String::from_utf8_lossy(&output.stdout).into_owned()))
}

/// The CPU seconds of this process's children that have ended and been waited for (Linux
/// `/proc/self/stat`: `cutime` and `cstime`).
fn children_cpu_seconds() -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    children_cpu_of(&stat).ok_or_else(|| anyhow::anyhow!("no CPU times in /proc/self/stat"))
}

/// `cutime + cstime` of a `/proc/<pid>/stat` text, in seconds. The fields are counted after
/// the command name's closing parenthesis (the name may hold spaces and parentheses); the
/// times are in the kernel's user clock ticks, 100 per second on Linux (`USER_HZ`, fixed for
/// this file's ABI).
fn children_cpu_of(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (the state) is the first after the name: cutime is field 16, cstime field 17.
    let ticks = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some((ticks(16)? + ticks(17)?) as f64 / 100.0)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Peak resident memory of this process (Linux `VmHWM`), in MiB.
fn peak_memory_mib() -> Option<f64> {
    vm_hwm_mib(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// The `VmHWM` of a `/proc/<pid>/status` text, in MiB.
fn vm_hwm_mib(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_cpu_times_are_read_after_the_command_name() {
        // A name with a space and a parenthesis; utime 7, stime 8, cutime 250, cstime 30.
        let stat = "4242 (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 8 250 30 20 0 1 0 \
                    12345 1000000 200 18446744073709551615";
        assert_eq!(children_cpu_of(stat), Some(2.8));
        assert_eq!(children_cpu_of("4242 (cut) S 1 2"), None);
        assert!(children_cpu_seconds().is_ok_and(|s| s >= 0.0));
    }

    #[test]
    fn side_by_side_workloads_are_the_same_on_both_sides() {
        for row in &SIDE_BY_SIDE {
            let config = row.booksim_config();
            let value = |key: &str| {
                config.split(';').map(str::trim).find_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    (k.trim() == key).then(|| v.trim().to_string())
                })
            };
            let args = row.runner_args();
            let arg = |key: &str| args.iter().find_map(|a| a.strip_prefix(key)).map(String::from);
            let rate = args.iter().skip_while(|a| *a != "--rate").nth(1).cloned();
            assert_eq!(value("injection_rate"), rate, "{}", row.name);
            // BookSim's `k` is the torus's radix, the dragonfly's terminals per router.
            let k = if row.one_cycle_dragonfly { "terminals_per_router=" } else { "radix=" };
            assert_eq!(value("k"), arg(k), "{}", row.name);
            let network = (value("topology"), value("routing_function"));
            let ours = (arg("topology="), arg("routing="));
            let same = match (network.0.as_deref(), network.1.as_deref()) {
                (Some("torus"), Some("dim_order")) => ("torus", "dimension_order"),
                (Some("dragonflynew"), Some("min")) => ("dragonfly", "minimal"),
                other => panic!("{}: no runner network for BookSim's {other:?}", row.name),
            };
            assert_eq!((ours.0.as_deref(), ours.1.as_deref()), (Some(same.0), Some(same.1)));
            assert_eq!(same.0 == "dragonfly", row.one_cycle_dragonfly, "{}", row.name);
            let preset = crate::scenario::RouterPreset::Booksim;
            let depth = arg("buffer_depth=").or_else(|| {
                (arg("router=").as_deref() == Some("booksim"))
                    .then(|| preset.value::<u32>("buffer_depth").map(|d| d.to_string()))
                    .flatten()
            });
            assert_eq!(value("vc_buf_size"), depth, "{}", row.name);
            assert_eq!(value("num_vcs"), arg("virtual_channels="), "{}", row.name);
            assert_eq!(value("packet_size"), arg("message_length="), "{}", row.name);
            assert_eq!(value("sample_period"), Some(row.booksim_cycles.to_string()));
            assert_eq!(row.runner_cycles, 10 * row.booksim_cycles, "{}", row.name);
            assert_eq!(arg("injection_process=").as_deref(), Some("bernoulli"));
            assert_eq!(arg("traffic=").as_deref(), Some("uniform_with_self"));
            assert_eq!(value("seed").as_deref(), Some("1"));
        }
    }
}
