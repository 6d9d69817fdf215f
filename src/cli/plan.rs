//! `runner plan`: the task graph of a spec, as counts or as Graphviz DOT; with `--cores`, a
//! recorded run replayed on other numbers of cores.

use std::path::PathBuf;

use super::{InputError, Outcome, load_specs};
use std::collections::HashMap;

use crate::console::{escape, shell_quote};
use crate::exec::cache::{Cache, Lookup, Output};
use crate::exec::estimate::History;
use crate::exec::timeline::{Timeline, saved};
use crate::exec::{ExecOptions, Pool, PoolSpec};
use crate::plan::{self, Only, Plan, Task, TaskKind};
use crate::spec::Experiment;

/// Arguments of `runner plan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Spec files to plan.
    #[arg(required_unless_present = "cores")]
    specs: Vec<PathBuf>,
    /// Say how long a run would take on this many cores and how busy they would be: without
    /// spec files, the last run replayed (its timeline); with them, a run of their tasks that
    /// are not cached, at the costs learned from earlier runs. Several numbers are allowed
    /// (`--cores 1,2,16`).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    cores: Vec<u32>,
    /// With `--cores`: the timeline to replay (default: the newest in .runner/timelines/).
    #[arg(long, requires = "cores", conflicts_with = "specs", value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Print the graph in Graphviz DOT instead of counts (`| dot -Tsvg > plan.svg`).
    #[arg(long)]
    dot: bool,
    /// Plan only one method.
    #[arg(long, value_enum)]
    only: Option<Only>,
    /// Where `.runner/` lives.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    #[command(flatten)]
    limits: super::LimitArgs,
}

/// Prints each spec's plan, or the replay of a timeline.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    if !args.cores.is_empty() && args.specs.is_empty() {
        return replay(&args);
    }
    let cache = Cache::new(args.root.join(".runner").join("cache"));
    if !args.cores.is_empty() {
        return forecast(&args, &cache);
    }
    for (_, experiment) in load_specs(&args.specs, &args.limits)? {
        let plan = plan::build(&experiment, args.only);
        if args.dot {
            out!("{}", plan::dot::to_dot(&plan, &experiment))?;
        } else {
            print_summary(&experiment, &plan, &cache)?;
        }
    }
    Ok(Outcome::Success)
}

/// What the cache holds for a task, as `runner plan` counts it: a valid entry with the seconds
/// its rows took, a corrupt one, or none.
enum Found {
    Cached(f64),
    Corrupt,
    Missing,
}

/// Counts per task kind, how many are cached, and the estimated cost of the rest (an external
/// method's runs at the mean of its cached runs' wall time, or its declared `cost_seconds`).
pub fn print_summary(experiment: &Experiment, plan: &Plan, cache: &Cache) -> anyhow::Result<()> {
    outln!(
        "{}: {} scenario{} x {} load point{}",
        experiment.name,
        experiment.scenarios.len(),
        if experiment.scenarios.len() == 1 { "" } else { "s" },
        experiment.load.len(),
        if experiment.load.len() == 1 { "" } else { "s" }
    )?;
    outln!("  {:<12} {:>8} {:>8} {:>14}", "task", "count", "cached", "est. cost")?;
    let mut total_cost = 0.0;
    let mut corrupt = 0;
    for kind in TaskKind::ALL {
        let tasks: Vec<_> = plan.graph.node_weights().filter(|t| t.kind == kind).collect();
        if tasks.is_empty() {
            continue;
        }
        // What the cache holds for each task, its output dropped at once (a 1,000,000-point
        // sweep's entries are a gigabyte): of an external run, only the seconds it took.
        let found: Vec<Found> = tasks
            .iter()
            .map(|task| match kind.is_compute().then(|| cache.lookup(&task.id, kind)) {
                Some(Lookup::Hit(Output::Rows(rows))) => {
                    Found::Cached(rows.iter().map(|row| row.wall_seconds).sum())
                }
                Some(Lookup::Hit(_)) => Found::Cached(0.0),
                Some(Lookup::Corrupt(_)) => Found::Corrupt,
                Some(Lookup::Missing) | None => Found::Missing,
            })
            .collect();
        // An external method's runs cost what its cached runs took on average, or else what
        // the spec declares (`cost_seconds`).
        let mut measured: HashMap<Option<usize>, (f64, u32)> = HashMap::new();
        if kind == TaskKind::External {
            for (task, found) in tasks.iter().zip(&found) {
                if let Found::Cached(seconds) = found {
                    let entry = measured.entry(task.method).or_default();
                    entry.0 += seconds;
                    entry.1 += 1;
                }
            }
        }
        let estimate = |task: &Task| match measured.get(&task.method) {
            Some(&(seconds, runs)) if runs > 0 => seconds / f64::from(runs),
            _ => task.cost,
        };
        let mut cached = 0;
        let mut cost = 0.0;
        for (task, found) in tasks.iter().zip(&found) {
            match found {
                Found::Cached(_) => cached += 1,
                Found::Corrupt => {
                    corrupt += 1;
                    cost += estimate(task);
                }
                Found::Missing => cost += estimate(task),
            }
        }
        total_cost += cost;
        outln!(
            "  {:<12} {:>8} {:>8} {:>14}",
            kind.name(),
            tasks.len(),
            cached,
            human_seconds(cost)
        )?;
    }
    if corrupt > 0 {
        outln!(
            "  {corrupt} cache entr{} corrupt (not counted as cached; recomputed by `runner run`)",
            if corrupt == 1 { "y is" } else { "ies are" }
        )?;
    }
    outln!("  estimated cost of what is not cached: {} of CPU time", human_seconds(total_cost))?;
    print_commands(experiment)?;
    Ok(())
}

/// The commands a run of the spec would execute (its external methods), one per line, with
/// the directory they run in: running a spec runs the commands it names, and this is where a
/// user reviews them. Every word and the directory are shell-quoted, and every control
/// character is shown (`console::shell_quote`, `console::escape`), so each line shows exactly
/// what runs and no argument can rewrite the line on the terminal.
pub fn print_commands(experiment: &Experiment) -> anyhow::Result<()> {
    if experiment.external.is_empty() {
        return Ok(());
    }
    outln!("  a run executes these commands (external methods):")?;
    for method in &experiment.external {
        outln!(
            "    {} ({}, {}, in {}): {}",
            method.name,
            method.kind.as_str(),
            escape(&method.evaluator()),
            shell_quote(&method.dir.display().to_string()),
            method.command_line()
        )?;
    }
    Ok(())
}

/// `runner plan --cores N`: the recorded run, then its replay on each number of cores, beside
/// the replay on the recorded number (which checks the replay against what happened).
fn replay(args: &Args) -> anyhow::Result<Outcome> {
    let dir = args.root.join(".runner").join("timelines");
    let path = match &args.timeline {
        Some(path) => path.clone(),
        None => match saved(&dir).pop() {
            Some(path) => path,
            None => {
                return Err(InputError(format!(
                    "no timeline in {}: `runner run` records one per run; or give one with --timeline FILE",
                    dir.display()
                ))
                .into());
            }
        },
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", path.display())))?;
    let timeline =
        Timeline::from_json(&text).map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let summary = timeline.summary();
    if summary.tasks == 0 {
        return Err(InputError(format!("{}: the timeline records no task", path.display())).into());
    }
    outln!("{}", path.display())?;
    outln!(
        "  recorded: {} tasks of {} on {} worker{}: {} ({} of tasks), {:.0}% busy",
        summary.tasks,
        match timeline.specs.as_slice() {
            [one] => one.clone(),
            specs => format!("{} specs", specs.len()),
        },
        timeline.workers,
        if timeline.workers == 1 { "" } else { "s" },
        human_seconds(summary.wall),
        human_seconds(summary.task_seconds),
        summary.busy * 100.0
    )?;
    outln!(
        "  critical path: {} (no number of cores runs these tasks in less)",
        human_seconds(summary.critical_path)
    )?;
    print_predictions(&timeline, &args.cores, Some((timeline.workers, summary.wall)))?;
    Ok(Outcome::Success)
}

/// `runner plan SPEC... --cores N`: the tasks a run would execute (those not cached), at the
/// costs learned from earlier runs' timelines, on each number of cores.
fn forecast(args: &Args, cache: &Cache) -> anyhow::Result<Outcome> {
    let specs = load_specs(&args.specs, &args.limits)?;
    let plans: Vec<Plan> = specs.iter().map(|(_, e)| plan::build(e, args.only)).collect();
    let pool_specs: Vec<PoolSpec<'_>> = specs
        .iter()
        .zip(&plans)
        .map(|((_, experiment), plan)| PoolSpec { experiment, plan })
        .collect();
    let dir = args.root.join(".runner").join("timelines");
    let history = History::load(&dir);
    let learned = history.timelines();
    let options = ExecOptions { jobs: 1, force: false, quiet: true };
    let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pool = Pool { cache, options: &options, interrupt: &interrupt, history: &history };
    let timeline = pool.forecast(&pool_specs);
    let summary = timeline.summary();
    outln!(
        "{}: {} task{} to run (not cached), {} of work at the costs learned from {} timeline{} in {}",
        match specs.as_slice() {
            [(_, one)] => one.name.clone(),
            specs => format!("{} specs", specs.len()),
        },
        summary.tasks,
        if summary.tasks == 1 { "" } else { "s" },
        human_seconds(summary.task_seconds),
        learned,
        if learned == 1 { "" } else { "s" },
        dir.display()
    )?;
    if summary.tasks == 0 {
        return Ok(Outcome::Success);
    }
    outln!(
        "  critical path: {} (no number of cores runs these tasks in less)",
        human_seconds(summary.critical_path)
    )?;
    print_predictions(&timeline, &args.cores, None)?;
    Ok(Outcome::Success)
}

/// The table of predicted wall time and busy fraction per number of cores; with `recorded`
/// (workers, wall time), the replay on the recorded number of cores beside what it took.
fn print_predictions(
    timeline: &Timeline,
    cores: &[u32],
    recorded: Option<(u32, f64)>,
) -> anyhow::Result<()> {
    outln!("  {:>6} {:>12} {:>6}", "cores", "wall time", "busy")?;
    let mut cores = cores.to_vec();
    if let Some((workers, _)) = recorded
        && workers > 0
        && !cores.contains(&workers)
    {
        cores.push(workers);
    }
    cores.sort_unstable();
    cores.dedup();
    for n in cores {
        let prediction = timeline.predict(n);
        let note = match recorded {
            Some((workers, wall)) if n == workers && wall > 0.0 => format!(
                "  (replay of the recorded run: {:+.1}% from its {})",
                (prediction.wall / wall - 1.0) * 100.0,
                human_seconds(wall)
            ),
            _ => String::new(),
        };
        outln!(
            "  {:>6} {:>12} {:>5.0}%{note}",
            n,
            human_seconds(prediction.wall),
            prediction.busy * 100.0
        )?;
    }
    Ok(())
}

fn human_seconds(seconds: f64) -> String {
    // An empty float sum is -0.0; a cost is never negative.
    let seconds = seconds.max(0.0);
    if seconds < 1e-3 {
        format!("{:.0} us", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.0} ms", seconds * 1e3)
    } else if seconds < 120.0 {
        format!("{seconds:.1} s")
    } else if seconds < 7200.0 {
        format!("{:.1} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}
