//! `runner simulate`: one scenario at one load through the flit-level simulator.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use super::{InputError, Outcome, scenario_args, solve::print_measurement};
use crate::scenario::{Routing, Scenario, Topology, Traffic, bounds};
use crate::sim::{self, SimOptions};

/// Arguments of `runner simulate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  runner simulate radix=8 dimensions=2 routing=dimension_order virtual_channels=2 --rate 0.005
  runner simulate topology=hypercube dimensions=8 routing=duato virtual_channels=4 --rate 0.01
  runner simulate routing=dimension_order buffer_depth=8 --rate 0.026 --measure throughput
  runner simulate routing=duato virtual_channels=3 --saturation --cycles 20000 --json
  runner simulate radix=4 message_length=8 --saturation --replications 5 --cycles 5000
  runner simulate topology=hypercube dimensions=6 routing=duato broadcast_fraction=0.01 --rate 0.002
  runner simulate channel_latency=2 credit_delay=1 buffer_depth=8 injection=channel --rate 0.005
  runner simulate vc_reallocation=tail_sent buffer_depth=8 --rate 0.01
  runner simulate router_delay=1 vc_allocation_delay=1 switch_delay=2 credit_delay=1 --rate 0.005
  runner simulate router=booksim message_length=16 --rate 0.005
  runner simulate router=booksim switching=virtual_cut_through message_length=8 --rate 0.01
  runner simulate message_length=32 packet_size=8 --rate 0.002
  runner simulate virtual_channels=4 reply_length=8 outstanding_requests=4 --rate 0.05
  runner simulate radix=1024 --rate 0.000036 --cycles 200 --warmup-cycles 1000 --threads 2")]
pub struct Args {
    /// Scenario parameters as key=value (topology, radix, dimensions, routing, virtual_channels,
    /// escape_channels, buffer_depth, router_delay, input_speedup, channel_latency,
    /// credit_delay, switch_delay, vc_allocation_delay, vc_reallocation, switch_allocator,
    /// injection, message_length, packet_size, reply_length, outstanding_requests, ejection,
    /// ...); router=booksim sets BookSim's router knobs that no other pair gives.
    /// Default: an 8x8 torus, dimension_order routing, V = 2, M = 32. Circuit switching also
    /// takes circuit_backoff (cycles, default 0) and circuit_retry_limit (default 10000), and
    /// hypercube broadcasts (broadcast_fraction > 0) broadcast_order (random, the default, or
    /// round_robin).
    params: Vec<String>,
    /// Offered load in messages/node/cycle.
    #[arg(long, required_unless_present_any = ["saturation", "trace"])]
    rate: Option<f64>,
    /// Replay this trace (CSV or Parquet, columns cycle, source, destination, length;
    /// docs/traces.md) instead of generating traffic; its load is --trace-time-scale.
    #[arg(long, conflicts_with_all = ["rate", "saturation"])]
    trace: Option<std::path::PathBuf>,
    /// With --trace: the time scale s; a record of cycle t is generated at round(t * s), so
    /// s < 1 is a higher load [default: 1].
    #[arg(long, requires = "trace")]
    trace_time_scale: Option<f64>,
    /// With --trace: bytes per flit, for a trace whose length column is `length_bytes`.
    #[arg(long, requires = "trace")]
    trace_flit_bytes: Option<u32>,
    /// Find the simulator's saturation throughput (the highest accepted rate, in throughput
    /// mode) instead of simulating one load; the counterpart of `runner solve --saturation`.
    #[arg(long, conflicts_with = "rate")]
    saturation: bool,
    /// With --saturation: run this many independent searches (one after the other) and report
    /// their mean saturation throughput with a 95% Student-t interval over them, N - 1 degrees
    /// of freedom (one search has no interval) [default: 3]. The first search uses --seed;
    /// each later one a seed derived from --seed, the scenario and its index as a spec's
    /// replications' seeds are (`plan::identity::saturation_search_seed`), printed beside its
    /// result.
    #[arg(long)]
    replications: Option<u32>,
    /// What to measure: `latency` (the run stops early as saturated past saturation) or
    /// `throughput` (the accepted rate over the whole window at any load, source queues capped).
    #[arg(long, value_enum, default_value_t = MeasureArg::Latency)]
    measure: MeasureArg,
    /// Throughput mode: messages one node's source queue holds at most; a message generated
    /// for a full queue is dropped and counted [default: 100].
    #[arg(long)]
    source_queue_capacity: Option<u32>,
    /// Measurement window in cycles (`window_cycles` in the output). The run goes on until the
    /// window's messages are delivered, so `cycles` in the output (all cycles simulated) is larger.
    #[arg(long)]
    cycles: Option<u64>,
    /// Cycles simulated before measuring.
    #[arg(long)]
    warmup_cycles: Option<u64>,
    /// Run (after at least --cycles) until the 95% CI half-width is below this fraction of
    /// the mean latency.
    #[arg(long)]
    target_precision: Option<f64>,
    /// With --target-precision: stop after this many simulated cycles in all, warm-up
    /// included, even short of the target (the run is then `imprecise`) [default: 10000000].
    #[arg(long, requires = "target_precision")]
    max_cycles: Option<u64>,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seed of the fault map (with fault_rate > 0); default: derived from --seed. Runs with the
    /// same fault seed simulate the same faulty nodes, whatever their rate and --seed.
    #[arg(long)]
    fault_seed: Option<u64>,
    /// Threads for one large network (one that walks its channels' bitmap: about 32,768 VCs
    /// and up) under untimed wormhole switching: phase A and phase B's flit counts are split
    /// by ranges of channels, in the cycles where the run's clock finds that faster. The
    /// results are those of one thread, bit for bit; other runs use one thread [default: 1].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

/// `--measure`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum MeasureArg {
    /// Latency at a stable load.
    Latency,
    /// Accepted throughput against offered load.
    Throughput,
}

/// Simulates and prints.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut scenario = Scenario::new(Topology::Torus { radix: 8, dimensions: 2 });
    scenario.routing = Routing::DimensionOrder;
    scenario.virtual_channels = 2;
    scenario_args::apply(&mut scenario, &args.params)?;
    if let Some(path) = &args.trace {
        let nodes = u32::try_from(scenario.nodes()).ok();
        let trace = crate::trace::load(path, args.trace_flit_bytes, nodes).map_err(|problems| {
            let lines: Vec<String> = problems.into_iter().map(|p| p.0).collect();
            InputError(lines.join("\n"))
        })?;
        let mean = trace.mean_length().round().clamp(1.0, f64::from(bounds::MAX_COUNT));
        scenario.message_length = mean as u32;
        scenario.traffic = Traffic::Trace(trace);
    }
    if let Some(rate) = args.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(InputError(format!(
            "--rate must be a positive number, found {}",
            crate::number::compact(rate)
        ))
        .into());
    }
    sim::check(&scenario).map_err(|e| InputError(e.to_string()))?;
    let mut options = SimOptions::default();
    if let Some(c) = args.cycles {
        options.cycles = c;
        options.max_cycles = options.max_cycles.max(c);
    }
    if let Some(w) = args.warmup_cycles {
        options.warmup_cycles = w;
    }
    if let Some(precision) = args.target_precision {
        crate::spec::validate::check_target_precision(precision).map_err(|message| {
            InputError(format!(
                "--target-precision {message} (for example 0.02: stop when the 95% CI is within 2% of the mean)"
            ))
        })?;
    }
    if args.cycles == Some(0) {
        return Err(InputError("--cycles must be at least 1".into()).into());
    }
    options.target_precision = args.target_precision;
    if let Some(max_cycles) = args.max_cycles {
        if max_cycles <= options.warmup_cycles {
            return Err(InputError(format!(
                "--max-cycles {max_cycles} must exceed the warm-up ({} cycles)",
                options.warmup_cycles
            ))
            .into());
        }
        options.max_cycles = max_cycles;
    }
    options.fault_seed = args.fault_seed;
    options.threads = usize::from(args.threads.unwrap_or(1));

    options.measure = match (args.measure, args.saturation, args.source_queue_capacity) {
        (MeasureArg::Latency, false, Some(_)) => {
            return Err(InputError(
                "--source-queue-capacity applies to --measure throughput (or --saturation)".into(),
            )
            .into());
        }
        (MeasureArg::Latency, false, None) => sim::Measure::Latency,
        (_, _, capacity) => sim::Measure::Throughput {
            source_queue_capacity: capacity.unwrap_or(sim::DEFAULT_SOURCE_QUEUE_CAPACITY),
        },
    };
    if args.saturation {
        return saturation(&scenario, &options, &args);
    }
    if args.replications.is_some() {
        return Err(InputError(
            "--replications applies to --saturation only: one load is one run (run it again \
             with other --seed values for more)"
                .into(),
        )
        .into());
    }
    let (rate, replay) = match scenario.traffic.trace() {
        None => (args.rate.ok_or_else(|| InputError("--rate is required".into()))?, None),
        Some(trace) => {
            let time_scale = args.trace_time_scale.unwrap_or(1.0);
            if !(time_scale.is_finite() && time_scale > 0.0) {
                return Err(InputError(format!(
                    "--trace-time-scale must be a positive number, found {}",
                    crate::number::compact(time_scale)
                ))
                .into());
            }
            let nodes = u32::try_from(scenario.nodes()).ok();
            let reader = crate::trace::open(&trace.path, trace.flit_bytes, nodes)
                .map_err(|e| InputError(e.0))?;
            let rate = trace.offered_rate(time_scale, scenario.nodes());
            (rate, Some(sim::Replay { records: Box::new(reader), time_scale }))
        }
    };
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(options.warmup_cycles + options.cycles);
        if let Ok(style) =
            ProgressStyle::with_template("simulating [{bar:30}] {pos}/{len} cycles (eta {eta})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    });
    let report = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
        std::ops::ControlFlow::Continue(())
    };
    let measurement = match replay {
        None => sim::simulate(&scenario, rate, &options, args.seed, Some(&report)),
        Some(replay) => sim::replay(&scenario, replay, &options, args.seed, Some(&report)),
    }
    .map_err(|e| InputError(e.to_string()))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    print_measurement(&format!("simulator@{}", sim::VERSION), rate, &measurement, args.json)?;
    Ok(Outcome::Success)
}

/// Saturation searches `--saturation` runs unless `--replications` says otherwise.
const DEFAULT_SEARCHES: u32 = 3;

/// `--replications`: 1 to the spec's most replications.
fn searches(args: &Args) -> Result<u32, InputError> {
    let most = crate::spec::external::MAX_REPLICATIONS;
    match args.replications.unwrap_or(DEFAULT_SEARCHES) {
        n @ 1.. if n <= most => Ok(n),
        n => Err(InputError(format!("--replications must be 1 to {most}, found {n}"))),
    }
}

/// `--saturation`: the searches of `sim::saturation`, combined and printed.
fn saturation(scenario: &Scenario, options: &SimOptions, args: &Args) -> anyhow::Result<Outcome> {
    let count = searches(args)?;
    let seeds: Vec<u64> = (0..count)
        .map(|r| crate::plan::identity::saturation_search_seed(args.seed, scenario, r))
        .collect();
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(0);
        if let Ok(style) = ProgressStyle::with_template("searching saturation: {msg}") {
            bar.set_style(style);
        }
        bar
    });
    let per_point = sim::saturation::PROGRESS_PER_POINT;
    let per_search = per_point * sim::saturation::MAX_POINTS as u64;
    let report = |done: u64, _: u64| {
        if let Some(bar) = &bar
            && bar.position() != done
        {
            bar.set_position(done);
            let within = done % per_search;
            bar.set_message(format!(
                "search {} of {count}, {} points done, the next {}% simulated",
                done / per_search + 1,
                within / per_point,
                within % per_point / (per_point / 100)
            ));
        }
        std::ops::ControlFlow::Continue(())
    };
    let found = sim::saturation::replicate(scenario, options, &seeds, Some(&report))
        .map_err(|e| InputError(e.to_string()))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let evaluator = format!("simulator@{}", sim::VERSION);
    if args.json {
        print_saturation_json(&found, &evaluator, args.seed)?;
    } else {
        print_saturation(&found, &evaluator)?;
    }
    Ok(Outcome::Success)
}

/// What the interval of `--saturation` is, in words.
fn interval_note(found: &sim::saturation::Replicated) -> String {
    match found.degrees_of_freedom {
        Some(dof) => format!(
            "95% Student t over the {} searches' results, {dof} degrees of freedom",
            found.replications
        ),
        None => "none: one search (--replications 2 or more gives an interval)".into(),
    }
}

/// What `sim::saturation::TOLERANCE` means, in words.
fn tolerance_note(tolerance: f64) -> String {
    format!(
        "each search bisects the offered load until its knee bracket (stable .. saturated) is \
         at most {}% of its upper end wide",
        crate::number::compact(100.0 * tolerance)
    )
}

/// `mean ± half` with the half-width to two significant digits and the mean to the same
/// decimals (the JSON has every digit); the mean alone without an interval.
fn with_interval(mean: f64, half: Option<f64>) -> String {
    match half {
        Some(h) if h.is_finite() && h > 0.0 => {
            let decimals = (1 - h.log10().floor() as i64).clamp(0, 17) as usize;
            format!("{mean:.decimals$} ± {h:.decimals$}")
        }
        Some(h) => format!("{mean} ± {h}"),
        None => mean.to_string(),
    }
}

/// `--saturation --json`: the combination, then each search with its seed, bracket and points.
fn print_saturation_json(
    found: &sim::saturation::Replicated,
    evaluator: &str,
    seed: u64,
) -> anyhow::Result<()> {
    let mut value = serde_json::to_value(found)?;
    if let Some(map) = value.as_object_mut() {
        map.insert("evaluator".into(), evaluator.into());
        map.insert("seed".into(), seed.into());
        map.insert("interval".into(), interval_note(found).into());
        map.insert("tolerance_meaning".into(), tolerance_note(found.tolerance).into());
    }
    outln!("{}", serde_json::to_string_pretty(&value)?)?;
    Ok(())
}

/// `--saturation`: the combination, its interval and resolution in words, then each search.
fn print_saturation(found: &sim::saturation::Replicated, evaluator: &str) -> anyhow::Result<()> {
    outln!("{:<28} {evaluator}", "evaluator")?;
    outln!(
        "{:<28} {} messages/node/cycle",
        "saturation_throughput",
        with_interval(found.saturation_throughput, found.saturation_throughput_ci95)
    )?;
    if let Some(flits) = found.flit_saturation_throughput {
        let text = with_interval(flits, found.flit_saturation_throughput_ci95);
        outln!("{:<28} {text} flits/node/cycle", "flit_saturation_throughput")?;
    }
    outln!("{:<28} {}", "interval", interval_note(found))?;
    outln!("{:<28} {}: {}", "tolerance", found.tolerance, tolerance_note(found.tolerance))?;
    for (index, search) in found.searches.iter().enumerate() {
        print_search(index, search)?;
    }
    Ok(())
}

/// One search of `--saturation`: its seed, result, bracket and points.
fn print_search(index: usize, search: &sim::saturation::Search) -> anyhow::Result<()> {
    let found = &search.found;
    outln!("search {} (seed {})", index + 1, search.seed)?;
    outln!(
        "  {:<26} {} messages/node/cycle (offered {})",
        "saturation_throughput",
        found.saturation_throughput,
        found.offered_at_maximum
    )?;
    if let Some(flits) = found.flit_saturation_throughput {
        outln!("  {:<26} {flits} flits/node/cycle", "flit_saturation_throughput")?;
    }
    let saturated = found.saturated_rate.map_or("none".to_string(), |r| r.to_string());
    let width = match found.bracket_width {
        Some(w) if w <= sim::saturation::TOLERANCE => format!(" ({:.2}% wide)", 100.0 * w),
        Some(w) => format!(
            " ({:.2}% wide: wider than the tolerance, the search stopped at {} points)",
            100.0 * w,
            sim::saturation::MAX_POINTS
        ),
        None => " (no point saturated: the network accepts the injection bound)".into(),
    };
    outln!("  {:<26} {} .. {saturated}{width}", "knee (stable .. saturated)", found.stable_rate)?;
    for point in &found.points {
        let accepted = point.throughput.map_or("-".to_string(), |t| format!("{t:.6}"));
        outln!("    rate {:<12.6} accepted {accepted:<10} {}", point.rate, point.status.as_str())?;
    }
    Ok(())
}
