//! `runner run`: plan, execute (cached, parallel), gather the rows, write the bundle
//! ([`crate::bundle`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;

use super::{InputError, Outcome, load_specs, print_error};
use crate::bundle::{
    bundle_fingerprint, bundle_is_current, bundle_reproduces, cached_fingerprint, now_rfc3339,
    provenance, write_bundle,
};
use crate::exec::cache::{Cache, Output};
use crate::exec::estimate::History;
use crate::exec::executor::{Completion, ExecError, Executor, Job};
use crate::exec::timeline::{self, Ending, Phases, Record, Timeline};
use crate::exec::{self, ExecOptions, RunSummary, TaskState};
use crate::plan::{self, Only};
use crate::spec::types::ExternalKind;
use crate::spec::{Experiment, SpecSource};

/// Arguments of `runner run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Spec files to run.
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Recompute every task, ignoring the cache.
    #[arg(long)]
    force: bool,
    /// Run only one method; the bundle still shows the other method's cached results.
    #[arg(long, value_enum)]
    only: Option<Only>,
    /// Show what would run (counts per task kind, cached) and stop.
    #[arg(long)]
    dry_run: bool,
    /// No progress output.
    #[arg(short, long)]
    quiet: bool,
    /// Where `reports/` and `.runner/` live.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    #[command(flatten)]
    limits: super::LimitArgs,
    #[command(flatten)]
    cluster: super::cluster_args::ClusterArgs,
}

impl Args {
    /// A local run of `spec` under `root`, as `runner run SPEC --root ROOT` would do it (what
    /// `runner diff` compares a bundle with).
    pub(super) fn fresh(
        spec: &Path,
        root: &Path,
        jobs: Option<usize>,
        quiet: bool,
    ) -> anyhow::Result<Args> {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            args: Args,
        }
        let mut argv: Vec<std::ffi::OsString> = vec![
            "runner-run".into(),
            spec.into(),
            "--root".into(),
            root.into(),
            "--executor".into(),
            "local".into(),
        ];
        if let Some(jobs) = jobs {
            argv.extend(["-j".into(), jobs.to_string().into()]);
        }
        if quiet {
            argv.push("--quiet".into());
        }
        Ok(<Line as clap::Parser>::try_parse_from(argv)?.args)
    }
}

/// Runs the specs: every spec is loaded and checked before anything runs, the executor and the
/// interrupt handler are set up once; then on this machine every spec's tasks share one pool
/// ([`Run::pooled`]), and on Slurm each spec goes through [`Run::spec`] in turn.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let specs = load_specs(&args.specs, &args.limits)?;
    let jobs = super::worker_threads(args.jobs)?;
    check_specs(&specs, args.only)?;
    let local = ExecOptions { jobs, force: args.force, quiet: args.quiet };
    let executor = args.cluster.executor(&args.root, local)?;
    let root = match executor {
        Executor::Slurm(_) => std::path::absolute(&args.root)
            .with_context(|| format!("cannot resolve {}", args.root.display()))?,
        Executor::Local(_) => args.root.clone(),
    };
    let interrupt = catch_interrupts();
    let cache = Cache::new(root.join(".runner").join("cache"));
    let run = Run { args: &args, executor: &executor, root: &root, cache: &cache, interrupt };
    if let Executor::Local(options) = &executor
        && !args.dry_run
    {
        return run.pooled(&specs, options);
    }
    let mut outcome = Outcome::Success;
    for (source, experiment) in &specs {
        match run.spec(source, experiment)? {
            Outcome::Success => {}
            Outcome::SomeFailed => outcome = Outcome::SomeFailed,
            Outcome::Interrupted => return Ok(Outcome::Interrupted),
        }
    }
    Ok(outcome)
}

/// Refuses, before anything runs, two specs with one name (the second would overwrite the
/// first's bundle) and an `--only` that leaves a spec nothing to run.
fn check_specs(specs: &[(SpecSource, Experiment)], only: Option<Only>) -> Result<(), InputError> {
    for (index, (source, experiment)) in specs.iter().enumerate() {
        if let Some((first, _)) = specs[..index].iter().find(|(_, e)| e.name == experiment.name) {
            return Err(InputError(format!(
                "{} and {} both have `name: {}`, so the second would overwrite the first's reports/{}/; give each spec its own name",
                first.path.display(),
                source.path.display(),
                experiment.name,
                experiment.name
            )));
        }
        // `--only` also keeps the external methods of that kind.
        let external = |kind| experiment.external.iter().any(|e| e.kind == kind);
        let missing = match only {
            Some(Only::Model) if experiment.model.is_none() && !external(ExternalKind::Model) => {
                Some("methods.model")
            }
            Some(Only::Simulation)
                if experiment.simulation.is_none() && !external(ExternalKind::Simulation) =>
            {
                Some("methods.simulation")
            }
            _ => None,
        };
        if let Some(section) = missing {
            return Err(InputError(format!(
                "{}: --only {} but the spec has no `{section}`; nothing would run",
                source.path.display(),
                if section == "methods.model" { "model" } else { "simulation" },
            )));
        }
    }
    Ok(())
}

/// The flag Ctrl-C (or SIGTERM, SIGHUP) sets: the first signal lets the tasks in flight that
/// end within the grace time finish, a second one abandons them and exits 130.
fn catch_interrupts() -> Arc<AtomicBool> {
    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let interrupt = Arc::clone(&interrupt);
        let _ = ctrlc::set_handler(move || {
            if interrupt.swap(true, Ordering::SeqCst) {
                super::eprint_line("\nrunner: interrupted again; abandoning the tasks in flight");
                crate::exec::external::kill_running();
                std::process::exit(130);
            }
            super::eprint_line(&format!(
                "\nrunner: interrupted; finishing the tasks in flight that end within {} s (their \
                 results are kept), stopping the rest. Ctrl-C again to abandon them all",
                crate::exec::evaluate::GRACE.as_secs()
            ));
        });
    }
    interrupt
}

/// What every spec of one `runner run` shares.
struct Run<'a> {
    args: &'a Args,
    executor: &'a Executor,
    /// Where `.runner/` is (absolute for Slurm).
    root: &'a Path,
    cache: &'a Cache,
    interrupt: Arc<AtomicBool>,
}

impl Run<'_> {
    /// One spec: plan it, take its run lock, execute the plan, then gather the rows and write
    /// the bundle (unless nothing ran and the bundle is current), and say how it went.
    fn spec(&self, source: &SpecSource, experiment: &Experiment) -> anyhow::Result<Outcome> {
        let args = self.args;
        let started = now_rfc3339();
        let plan = plan::build(experiment, args.only);
        if args.dry_run {
            super::plan::print_summary(experiment, &plan, self.cache)?;
            return Ok(Outcome::Success);
        }
        let Some(_lock) = self.lock(experiment)? else { return Ok(Outcome::Interrupted) };
        let clock = Instant::now();
        let Some(summary) = self.execute(source, experiment, &plan)? else {
            return Ok(Outcome::Success);
        };
        self.report(source, experiment, &plan, summary, started, &mut Phases::new(clock))
    }

    /// Every spec on one pool of this machine's workers ([`exec::Pool`]): each spec's run lock
    /// is taken, then the tasks of all run together, the costliest chains first, and each
    /// spec's bundle is written on a thread of its own as soon as its last task has ended,
    /// while the others' tasks run on. The run's timeline goes to `.runner/timelines/`, and a
    /// line says how busy the workers were.
    fn pooled(
        &self,
        specs: &[(SpecSource, Experiment)],
        options: &ExecOptions,
    ) -> anyhow::Result<Outcome> {
        let args = self.args;
        let plans: Vec<plan::Plan> =
            specs.iter().map(|(_, experiment)| plan::build(experiment, args.only)).collect();
        // Every lock before any task, taken in the order of the specs' names: two runs that
        // share specs, given in different orders, cannot each hold one the other waits for.
        let mut by_name: Vec<&Experiment> =
            specs.iter().map(|(_, experiment)| experiment).collect();
        by_name.sort_by(|a, b| a.name.cmp(&b.name));
        let mut locks = Vec::with_capacity(specs.len());
        for experiment in by_name {
            match self.lock(experiment)? {
                Some(lock) => locks.push(lock),
                None => return Ok(Outcome::Interrupted),
            }
        }
        let started = now_rfc3339();
        let clock = Instant::now();
        // A spec whose bundle was made from exactly the entries the cache holds, by this
        // runner from this spec, is up to date before any entry is read: it stays out of the
        // pool (a cached 1,000,000-point sweep: its entries hashed, never parsed).
        let mut kept = Vec::with_capacity(specs.len());
        for (spec, plan) in specs.iter().zip(&plans) {
            let (source, experiment) = spec;
            let bundle = args.root.join("reports").join(&experiment.name);
            let current = !options.force
                && args.only.is_none()
                && cached_fingerprint(source, experiment, plan, self.cache)
                    .is_some_and(|fingerprint| bundle_is_current(&bundle, &fingerprint));
            if !current {
                kept.push((spec, plan));
            } else if !args.quiet {
                let cached = plan.graph.node_weights().filter(|t| t.kind.is_compute()).count();
                say_up_to_date(experiment, cached, &bundle, clock);
            }
        }
        if kept.is_empty() {
            return Ok(Outcome::Success);
        }
        let (specs, plans): (Vec<_>, Vec<_>) = kept.into_iter().unzip();
        let timelines = self.root.join(".runner").join("timelines");
        let history = History::load(&timelines);
        let names = specs.iter().map(|(_, experiment)| experiment.name.clone()).collect();
        let mut timeline = Timeline::new(started.clone(), options.jobs, names);
        let pool = exec::Pool {
            cache: self.cache,
            options,
            interrupt: &self.interrupt,
            history: &history,
        };
        let pool_specs: Vec<exec::PoolSpec<'_>> = specs
            .iter()
            .zip(&plans)
            .map(|((_, experiment), plan)| exec::PoolSpec { experiment, plan })
            .collect();
        let (ran, reports) = std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(specs.len());
            let ran = pool.run(&pool_specs, &mut timeline, clock, |index, summary| {
                let (source, experiment) = &specs[index];
                let plan = plans[index];
                let started = started.clone();
                handles.push(scope.spawn(move || {
                    let mut phases = Phases::new(clock);
                    let from = clock.elapsed().as_secs_f64();
                    let outcome =
                        self.report(source, experiment, plan, summary, started, &mut phases);
                    (index, from, clock.elapsed().as_secs_f64(), phases, outcome)
                }));
            });
            let reports: Vec<_> =
                handles.into_iter().map(std::thread::ScopedJoinHandle::join).collect();
            (ran, reports)
        });
        drop(locks);
        let mut outcome = Outcome::Success;
        let mut error = None;
        for report in reports {
            let Ok((index, from, to, phases, result)) = report else {
                error.get_or_insert_with(|| {
                    anyhow::anyhow!("a bundle could not be written (its thread panicked)")
                });
                continue;
            };
            let experiment = &specs[index].1;
            let ending = if result.is_ok() { Ending::Done } else { Ending::Failed };
            let bundle = self.root.join("reports").join(&experiment.name).display().to_string();
            let track = u32::try_from(index).unwrap_or(u32::MAX);
            let record = render_record(&bundle, experiment, track, "", (from, to), ending);
            timeline.records.push(record);
            for (step, from, to) in phases.spans {
                let id = format!("{bundle} {step}");
                let record = render_record(&id, experiment, track, step, (from, to), Ending::Done);
                timeline.records.push(record);
            }
            match result {
                Ok(Outcome::Success) => {}
                Ok(Outcome::SomeFailed) => {
                    if matches!(outcome, Outcome::Success) {
                        outcome = Outcome::SomeFailed;
                    }
                }
                Ok(Outcome::Interrupted) => outcome = Outcome::Interrupted,
                Err(e) => {
                    error.get_or_insert(e);
                }
            }
        }
        self.save_timeline(&timeline, &timelines);
        if let Err(e) = ran {
            return Err(anyhow::Error::new(e).context(match specs[..] {
                [(_, one)] => one.name.clone(),
                _ => format!("{} specs", specs.len()),
            }));
        }
        if let Some(error) = error {
            return Err(error);
        }
        Ok(outcome)
    }

    /// Writes the run's timeline (when a task ran) and says how busy the workers were.
    fn save_timeline(&self, timeline: &Timeline, dir: &Path) {
        let summary = timeline.summary();
        if summary.tasks == 0 {
            return;
        }
        match timeline.save(dir) {
            Ok(path) if !self.args.quiet => super::eprint_line(&format!(
                "timeline: {} tasks on {} worker{}, {:.0}% busy over {:.2}s ({:.2}s of tasks); \
                 critical path {:.2}s -> {} (`runner plan --cores N` replays it on N cores)",
                summary.tasks,
                timeline.workers,
                if timeline.workers == 1 { "" } else { "s" },
                summary.busy * 100.0,
                summary.wall,
                summary.task_seconds,
                summary.critical_path,
                path.display()
            )),
            Ok(_) => {}
            Err(e) => super::eprint_line(&format!(
                "runner: warning: the run's timeline could not be written to {}: {e}",
                dir.display()
            )),
        }
    }

    /// After a spec's tasks ran: gathers the rows and writes the bundle (unless nothing ran and
    /// the bundle is current, or every number reproduced), and says how it went.
    fn report(
        &self,
        source: &SpecSource,
        experiment: &Experiment,
        plan: &plan::Plan,
        mut summary: RunSummary,
        started: String,
        phases: &mut Phases,
    ) -> anyhow::Result<Outcome> {
        let args = self.args;
        let clock = phases.clock();
        warn_corrupt(experiment, &summary);
        // Nothing ran and every result came from the cache: when the bundle was made from
        // exactly these entries by this binary from this spec, and is intact, it stands as is.
        let fingerprint = (args.only.is_none() && summary.failed == 0 && !summary.interrupted)
            .then(|| {
                phases.time("fingerprint", || {
                    bundle_fingerprint(source, experiment, plan, self.cache, &summary.states)
                })
            })
            .flatten();
        let bundle = args.root.join("reports").join(&experiment.name);
        if let Some(fingerprint) = &fingerprint
            && summary.executed == 0
            && summary.corrupt.is_empty()
            && bundle_is_current(&bundle, fingerprint)
        {
            if !args.quiet {
                say_up_to_date(experiment, summary.cached, &bundle, clock);
            }
            return Ok(Outcome::Success);
        }
        if summary.interrupted {
            super::eprint_line(&format!(
                "runner: {}: interrupted after {} tasks ({} cached); run again to resume",
                experiment.name, summary.executed, summary.cached
            ));
            return Ok(Outcome::Interrupted);
        }
        // Every number reproduced: the bundle stands as it is, times and host included, so a
        // re-run of a committed spec changes no committed byte. The rows are gathered as the
        // comparison takes them, a batch at a time, never all at once (a 1,000,000-point
        // sweep's are 4 GB); they are gathered whole only to write the bundle anew.
        if args.only.is_none()
            && summary.failed == 0
            && let Some(reproduced) = phases.time("compare", || {
                let rows = exec::Gather::new(experiment, plan, &summary.states, self.cache);
                bundle_reproduces(&bundle, source, rows)
            })
        {
            if !args.quiet {
                say_reproduced(experiment, &summary, reproduced, &bundle, clock);
            }
            return Ok(Outcome::Success);
        }
        let provenance = provenance(source, experiment, started, bundle.parent());
        // The rows are built as the bundle takes them (`write_bundle`), never all at once;
        // the task outputs they are built from are freed as they go, unless a failure report
        // reads them after (a 1,000,000-point sweep holds a gigabyte of them).
        let (full_plan, full_states) = self.full_plan(experiment, plan, &summary.states).unzip();
        let rows = match (&full_plan, full_states) {
            (Some(full_plan), Some(states)) => {
                exec::Gather::taking(experiment, full_plan, states, self.cache)
            }
            _ if summary.failed == 0 => exec::Gather::taking(
                experiment,
                plan,
                std::mem::take(&mut summary.states),
                self.cache,
            ),
            _ => exec::Gather::new(experiment, plan, &summary.states, self.cache),
        };
        write_bundle(
            &bundle,
            source,
            experiment,
            rows,
            &provenance,
            fingerprint.as_deref(),
            phases,
        )?;
        if !args.quiet {
            say_done(experiment, &summary, &bundle, clock);
        }
        if summary.failed > 0 {
            print_failures(experiment, plan, &summary.states);
            return Ok(Outcome::SomeFailed);
        }
        Ok(Outcome::Success)
    }

    /// Takes the experiment's run lock, waiting for another run that holds it; `None` when
    /// interrupted while waiting (nothing was run).
    fn lock(&self, experiment: &Experiment) -> anyhow::Result<Option<exec::lock::RunLock>> {
        let locks = self.args.root.join(".runner").join("locks");
        match exec::lock::acquire(&locks, &experiment.name, self.args.quiet, &self.interrupt) {
            Ok(lock) => Ok(Some(lock)),
            Err(exec::lock::LockError::Interrupted) => {
                print_error(&format!(
                    "{}: interrupted while waiting for another run; nothing was run\n",
                    experiment.name
                ));
                Ok(None)
            }
            Err(exec::lock::LockError::Io(e)) => Err(anyhow::Error::new(e)
                .context(format!("cannot take the run lock in {}", locks.display()))),
        }
    }

    /// Runs the plan's tasks on the executor; `None` when they were submitted detached (the
    /// job ids are printed, a Slurm job gathers later).
    fn execute(
        &self,
        source: &SpecSource,
        experiment: &Experiment,
        plan: &plan::Plan,
    ) -> anyhow::Result<Option<RunSummary>> {
        let job = Job {
            source,
            experiment,
            plan,
            only: self.args.only,
            cache: self.cache,
            root: self.root,
            interrupt: &self.interrupt,
        };
        match self.executor.run(&job) {
            Ok(Completion::Finished(summary)) => Ok(Some(summary)),
            Ok(Completion::Detached { jobs, gather_job }) => {
                super::status::print_detached(
                    &experiment.name,
                    &source.path,
                    &jobs,
                    gather_job.as_deref(),
                    self.args.quiet,
                )?;
                Ok(None)
            }
            Err(ExecError::Setup(message)) => Err(InputError(message).into()),
            Err(error) => Err(anyhow::Error::new(error).context(experiment.name.clone())),
        }
    }

    /// With `--only`, the plan and states the bundle's rows come from: the bundle still shows
    /// every method, this run's results and the other method's cached ones (a later
    /// `--only simulation` does not drop the model from the report). `None` without `--only`:
    /// the rows are the run's own.
    fn full_plan(
        &self,
        experiment: &Experiment,
        plan: &plan::Plan,
        states: &[TaskState],
    ) -> Option<(plan::Plan, Vec<TaskState>)> {
        self.args.only.map(|_| {
            let full = plan::build(experiment, None);
            let states = exec::with_cached_rest(&full, plan, states, self.cache);
            (full, states)
        })
    }
}

/// The timeline's record of spec `experiment`'s bundle (`id`, its path; on the spec's own
/// `track`), or of one `step` of writing it, over `(from, to)` seconds.
fn render_record(
    id: &str,
    experiment: &Experiment,
    track: u32,
    step: &str,
    (from, to): (f64, f64),
    ending: Ending,
) -> Record {
    let mut label = format!("{} | {}", timeline::REPORT, experiment.name);
    if !step.is_empty() {
        label = format!("{label} | {step}");
    }
    Record {
        id: id.to_string(),
        kind: timeline::REPORT.into(),
        label,
        spec: experiment.name.clone(),
        worker: track,
        start: from,
        end: to,
        inputs: Vec::new(),
        estimate: 0.0,
        priority: 0.0,
        threads: 1,
        ending,
    }
}

/// Warns of the corrupt cache entries a run found (and recomputed).
fn warn_corrupt(experiment: &Experiment, summary: &RunSummary) {
    if !summary.corrupt.is_empty() {
        super::eprint_line(&format!(
            "runner: warning: {}: {} corrupt cache entr{} ignored and recomputed; the first: {}",
            experiment.name,
            summary.corrupt.len(),
            if summary.corrupt.len() == 1 { "y" } else { "ies" },
            summary.corrupt[0]
        ));
    }
}

/// Says that nothing ran and the bundle was left as it is.
fn say_up_to_date(experiment: &Experiment, cached: usize, bundle: &Path, clock: Instant) {
    super::eprint_line(&format!(
        "{}: 0 tasks run, {} cached; {} is up to date (made from these cache \
         entries by this runner), left as it is, in {:.2}s",
        experiment.name,
        cached,
        bundle.display(),
        clock.elapsed().as_secs_f64()
    ));
}

/// ` (N corrupt cache entries recomputed)`, or nothing.
fn corrupt_note(summary: &RunSummary) -> String {
    match summary.corrupt.len() {
        0 => String::new(),
        n => format!(" ({n} corrupt cache entr{} recomputed)", if n == 1 { "y" } else { "ies" }),
    }
}

/// Says that the run reproduced every number of the bundle, which was left as it is.
fn say_reproduced(
    experiment: &Experiment,
    summary: &RunSummary,
    rows: usize,
    bundle: &Path,
    clock: Instant,
) {
    super::eprint_line(&format!(
        "{}: {} tasks run{}, {} cached in {:.2}s; {}: {rows} of {rows} rows reproduced bit for \
         bit, bundle unchanged (`runner report {}` renders it again)",
        experiment.name,
        summary.executed,
        corrupt_note(summary),
        summary.cached,
        clock.elapsed().as_secs_f64(),
        bundle.display(),
        bundle.display()
    ));
}

/// Says what a run did and where its bundle is.
fn say_done(experiment: &Experiment, summary: &RunSummary, bundle: &Path, clock: Instant) {
    let corrupt = corrupt_note(summary);
    super::eprint_line(&format!(
        "{}: {} tasks run{corrupt}, {} cached, {} failed, {} skipped in {:.2}s -> {}",
        experiment.name,
        summary.executed,
        summary.cached,
        summary.failed,
        summary.skipped,
        clock.elapsed().as_secs_f64(),
        bundle.join("index.html").display()
    ));
}

/// Lists the failed tasks (and failed points of Solve batches), at most 20, one line each: an
/// error (an external program's text among them) is shown with its control characters and
/// line breaks escaped (`console::escape`).
fn print_failures(experiment: &Experiment, plan: &plan::Plan, states: &[TaskState]) {
    super::eprint_line(&format!("\n{}: failed tasks", experiment.name));
    super::eprint_line(&format!("  {:<10} {:<14} {:<50} error", "kind", "task", "scenario"));
    let mut shown = 0;
    for node in plan.graph.node_indices() {
        if let TaskState::Failed(error) = &states[node.index()] {
            let task = &plan.graph[node];
            let label = task.scenario.map(|s| experiment.scenarios[s].label.as_str()).unwrap_or("");
            super::eprint_line(&format!(
                "  {:<10} {:<14} {:<50} {}",
                task.kind.name(),
                &task.id[..12],
                label,
                crate::console::escape(error)
            ));
            shown += 1;
            if shown == 20 {
                super::eprint_line("  ... (the error column of results.parquet lists them all)");
                return;
            }
        }
    }
    // The failed points of Solve batches that ran (the batch itself is done).
    for node in plan.graph.node_indices() {
        let TaskState::Done(Output::Points(points)) = &states[node.index()] else { continue };
        let task = &plan.graph[node];
        let label = task.scenario.map(|s| experiment.scenarios[s].label.as_str()).unwrap_or("");
        for point in points.iter().filter(|point| point.failed()) {
            super::eprint_line(&format!(
                "  {:<10} {:<14} {:<50} {}",
                "Solve point",
                &task.id[..12],
                label,
                crate::console::escape(point.error.as_deref().unwrap_or(""))
            ));
            shown += 1;
            if shown == 20 {
                super::eprint_line("  ... (the error column of results.parquet lists them all)");
                return;
            }
        }
    }
}
