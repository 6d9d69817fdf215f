//! The Slurm executor: simulations as job arrays through `sbatch`, `squeue`/`sacct` and `scancel`.
//!
//! A run goes like this:
//!
//! 1. The cheap tasks (saturation rates, model solves) run here, at submit time: microseconds.
//! 2. The simulation tasks and the external methods' evaluations ([`TaskKind::is_remote`](crate::plan::TaskKind::is_remote))
//!    not cached are packed into batches of about `batch_minutes` by the
//!    plan's cost model ([`submit::pack`]); each batch is one element of a job array, split at the
//!    site's `MaxArraySize` and throttled with `%N`. Every element runs `runner worker`
//!    ([`worker`]), which writes each result into the shared cache with the usual atomic write.
//! 3. The submission is recorded under `.runner/slurm/<experiment>/` ([`record`]): a later
//!    `runner run` attaches to it instead of submitting the same work again, and `runner status`
//!    reads it. `--detach` stops here, leaving a dependent job (`afterany`) to gather and report.
//! 4. In the foreground, Slurm is polled no more often than `poll_interval` ([`poll`]). An
//!    element that ended without finishing its tasks (FAILED, TIMEOUT, NODE_FAIL, PREEMPTED,
//!    OUT_OF_MEMORY, CANCELLED, or gone) has its unfinished tasks resubmitted, up to `retries`
//!    times; a task whose evaluator returned an error is a failed row and is not retried.
//! 5. Aggregates run here, then the caller gathers and reports exactly as after a local run.
//!
//! Ctrl-C cancels the submitted jobs (`scancel`) and says so; finished tasks stay cached.
//! This module prints progress lines on stderr (like `exec::progress`), nothing else.

pub mod poll;
pub mod profile;
pub mod record;
pub mod submit;
pub mod worker;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use super::cache::Output;
use super::executor::{Completion, ExecError, Job};
use super::{RunSummary, TaskState, evaluate};
use crate::console::Progress;
use crate::plan::Only;
use poll::Poller;
use profile::Settings;
use record::{RecordDir, Submission};

/// How to run on Slurm.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    /// Site settings, resolved.
    pub settings: Settings,
    /// Recompute every task, ignoring the cache.
    pub force: bool,
    /// No progress output.
    pub quiet: bool,
    /// Submit, print the job ids and return.
    pub detach: bool,
}

/// Counts kept while a run goes.
#[derive(Debug, Default)]
struct Tally {
    executed: usize,
    failed: usize,
    skipped: usize,
}

/// One array element being watched.
#[derive(Debug)]
struct Element {
    job_id: String,
    index: usize,
    attempt: u32,
    tasks: Vec<NodeIndex>,
    settled: bool,
    /// When this process started watching it.
    since: Instant,
    /// When it was first seen COMPLETED with results missing.
    completed_at: Option<Instant>,
}

/// How long the results of a COMPLETED element may take to show on a network filesystem.
const COMPLETED_GRACE: Duration = Duration::from_secs(30);

/// How long an element Slurm does not list yet is still taken as queued.
const UNLISTED_GRACE: Duration = Duration::from_secs(60);

/// The `--only` value as recorded.
fn only_name(only: Option<Only>) -> Option<String> {
    only.map(|o| match o {
        Only::Model => "model".to_string(),
        Only::Simulation => "simulation".to_string(),
    })
}

fn say(quiet: bool, text: &str) {
    if !quiet {
        crate::console::eprint_line(&format!("runner: {text}"));
    }
}

/// Runs `job` on Slurm, in the phases of the module documentation.
pub fn run(job: &Job<'_>, options: &SlurmOptions) -> Result<Completion, ExecError> {
    let record = RecordDir::new(job.root, &job.experiment.name);
    let mut poller = Poller::new();
    let only = only_name(job.only);
    let mut submission = earlier_submission(job, options, &record, &mut poller, &only)?;
    let attached = submission.is_some();

    // The cached tasks, the failures an attached submission recorded, then the cheap tasks.
    // Read on one thread: this runs on a shared login node.
    let (states, cached, corrupt) = super::cached_states(job.plan, job.cache, options.force, 1);
    let mut run = Run { job, options, record: &record, states, tally: Tally::default() };
    if attached {
        let graph = &job.plan.graph;
        for node in graph.node_indices().filter(|&i| graph[i].kind.is_remote()) {
            if run.states[node.index()] == TaskState::Pending
                && let Some(error) = record.failure(&graph[node].id)
            {
                fail(job, node, error, &mut run.states, &mut run.tally);
            }
        }
    }
    evaluate_local(job, &mut run.states, &mut run.tally);

    let binary = std::env::current_exe()?;
    let mut site = Site {
        record: &record,
        binary: &binary,
        settings: &options.settings,
        plan: job.plan,
        max_array_size: None,
    };
    run.submit_ready(&mut site, &mut submission, &only)?;

    if options.detach
        && let Some(s) = submission.as_mut()
    {
        return run.detach(&mut poller, s, &binary, &only);
    }

    // In the foreground this process gathers: the detached gather job is not needed any more
    // (unless this process is that job).
    if let Some(s) = submission.as_mut()
        && let Some(gather) = s.gather_job.clone()
        && std::env::var("SLURM_JOB_ID").ok().as_deref() != Some(gather.as_str())
    {
        let _ = submit::scancel(std::slice::from_ref(&gather));
        s.gather_job = None;
        record.save(s)?;
    }

    let interrupted = match submission.as_mut() {
        Some(s) => run.watch(&mut site, &mut poller, s)?,
        None => false,
    };
    if !interrupted && submission.is_some() {
        record.remove()?;
    }
    let Run { mut states, mut tally, .. } = run;
    if !interrupted {
        evaluate_local(job, &mut states, &mut tally);
    }
    Ok(Completion::Finished(RunSummary {
        states,
        executed: tally.executed,
        cached,
        failed: tally.failed,
        skipped: tally.skipped,
        corrupt,
        interrupted,
    }))
}

/// The recorded submission this run attaches to: one of the same spec, `--only` and runner
/// (and no `--force`). Any other recorded submission is removed, unless its jobs are still in
/// Slurm (then the run is refused).
fn earlier_submission(
    job: &Job<'_>,
    options: &SlurmOptions,
    record: &RecordDir,
    poller: &mut Poller,
    only: &Option<String>,
) -> Result<Option<Submission>, ExecError> {
    match record.load()? {
        Some(s)
            if !options.force
                && s.spec_sha256 == job.source.sha256
                && s.only == *only
                && s.version_mismatch().is_none() =>
        {
            Ok(Some(s))
        }
        Some(s) => {
            let active = active_jobs(poller, &s)?;
            if !active.is_empty() {
                return Err(ExecError::Setup(format!(
                    "jobs {} of an earlier submission of `{}` (another version of the spec, \
                     --only or runner, or --force) are still in Slurm; wait for them or \
                     `scancel {}`, then run again",
                    active.join(", "),
                    job.experiment.name,
                    active.join(" ")
                )));
            }
            record.remove()?;
            Ok(None)
        }
        None => Ok(None),
    }
}

/// What the phases of one Slurm run share: the job, its record, and the task states and
/// counts as the run learns them.
struct Run<'r, 'j> {
    job: &'r Job<'j>,
    options: &'r SlurmOptions,
    record: &'r RecordDir,
    states: Vec<TaskState>,
    tally: Tally,
}

impl Run<'_, '_> {
    /// Submits the simulations whose inputs are ready and that no recorded round covers, as
    /// the next round of `submission` (a new one when there is none); or says which jobs an
    /// attached submission runs.
    fn submit_ready(
        &mut self,
        site: &mut Site<'_>,
        submission: &mut Option<Submission>,
        only: &Option<String>,
    ) -> Result<(), ExecError> {
        let (job, record, quiet) = (self.job, self.record, self.options.quiet);
        let graph = &job.plan.graph;
        let mut covered = HashSet::new();
        if let Some(s) = submission.as_ref() {
            for round in &s.rounds {
                for index in 0..round.batches {
                    covered.extend(record.batch(round.number, index).unwrap_or_default());
                }
            }
        }
        let ready: Vec<NodeIndex> = graph
            .node_indices()
            .filter(|&i| {
                graph[i].kind.is_remote()
                    && self.states[i.index()] == TaskState::Pending
                    && !covered.contains(&graph[i].id)
                    && inputs_done(job, &self.states, i)
            })
            .collect();
        if ready.is_empty() {
            if let Some(s) = submission.as_ref() {
                let ids = s.job_ids();
                say(
                    quiet,
                    &format!(
                        "{}: attached to the submission of jobs {}",
                        job.experiment.name,
                        ids.join(", ")
                    ),
                );
            }
            return Ok(());
        }
        for warning in submit::preflight(job.root, site.binary)? {
            say(quiet, &format!("warning: {warning}"));
        }
        if self.options.force {
            for &node in &ready {
                match job.cache.remove(&graph[node].id) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                    _ => {}
                }
            }
        }
        let mut s = match submission.take() {
            Some(s) => s,
            None => self.new_submission(only)?,
        };
        let started = Instant::now();
        let (batches, ids) = match site.submit(&mut s, &ready, 0) {
            Ok(submitted) => submitted,
            Err(error) => {
                // Nothing of this round runs: keep the record only if earlier rounds exist.
                if s.rounds.is_empty() {
                    let _ = record.remove();
                }
                return Err(error);
            }
        };
        say(
            quiet,
            &format!(
                "{}: submitted {} simulation task{} in {} array element{} as job{} {} ({:.1}s)",
                job.experiment.name,
                ready.len(),
                if ready.len() == 1 { "" } else { "s" },
                batches,
                if batches == 1 { "" } else { "s" },
                if ids.len() == 1 { "" } else { "s" },
                ids.join(", "),
                started.elapsed().as_secs_f64()
            ),
        );
        *submission = Some(s);
        Ok(())
    }

    /// A new submission, recorded (with the spec copy the workers plan from) before any
    /// `sbatch`: an element may start before `sbatch` returns.
    fn new_submission(&self, only: &Option<String>) -> Result<Submission, ExecError> {
        let (job, record) = (self.job, self.record);
        std::fs::create_dir_all(&record.dir)?;
        crate::files::write_atomic(&record.spec_path(), job.source.text.as_bytes())?;
        let submitted_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
            .to_string();
        let token = blake3::hash(format!("{}{submitted_at}", record.dir.display()).as_bytes())
            .to_hex()[..8]
            .to_string();
        let mut new = Submission::new(
            &job.experiment.name,
            &job.source.sha256,
            only.clone(),
            job.cache.root().to_path_buf(),
            format!("runner-{}-{token}", job.experiment.name),
            submitted_at,
        );
        new.spec_path = std::path::absolute(&job.source.path).ok();
        record.save(&new)?;
        Ok(new)
    }

    /// `--detach`: leaves a dependent job (`afterany`) to gather and report, unless one is
    /// still in Slurm, and returns the job ids.
    fn detach(
        &self,
        poller: &mut Poller,
        s: &mut Submission,
        binary: &std::path::Path,
        only: &Option<String>,
    ) -> Result<Completion, ExecError> {
        let (job, record, settings) = (self.job, self.record, &self.options.settings);
        let jobs = s.job_ids();
        let gather_active = match &s.gather_job {
            Some(id) => {
                !active_ids(poller, &format!("{}-gather", s.job_name), std::slice::from_ref(id))?
                    .is_empty()
            }
            None => false,
        };
        if !gather_active {
            let profile_path = record.dir.join("profile.toml");
            let text = profile::to_text(&settings.site).map_err(ExecError::Setup)?;
            crate::files::write_atomic(&profile_path, text.as_bytes())?;
            let spec = std::fs::canonicalize(&job.source.path)?;
            let mut command: Vec<String> = vec![
                binary.display().to_string(),
                "run".into(),
                spec.display().to_string(),
                "--root".into(),
                job.root.display().to_string(),
                "--executor".into(),
                "slurm".into(),
                "--profile".into(),
                profile_path.display().to_string(),
                "--quiet".into(),
            ];
            if let Some(only) = only {
                command.extend(["--only".to_string(), only.clone()]);
            }
            let id = submit::submit_gather_job(record, &s.job_name, &jobs, &command, settings)?;
            s.gather_job = Some(id);
            record.save(s)?;
        }
        Ok(Completion::Detached { jobs, gather_job: s.gather_job.clone() })
    }

    /// Polls Slurm until every element of the submission has settled, taking each finished
    /// task's result from the cache and resubmitting the unfinished tasks of an element that
    /// ended badly. Returns whether an interrupt stopped it (the jobs are then cancelled).
    fn watch(
        &mut self,
        site: &mut Site<'_>,
        poller: &mut Poller,
        s: &mut Submission,
    ) -> Result<bool, ExecError> {
        let (job, record, options) = (self.job, self.record, self.options);
        let (settings, quiet) = (&options.settings, options.quiet);
        let graph = &job.plan.graph;
        let by_id: HashMap<&str, NodeIndex> =
            graph.node_indices().map(|i| (graph[i].id.as_str(), i)).collect();
        let mut elements = Vec::new();
        for round in &s.rounds {
            add_elements(record, round, &by_id, &mut elements);
        }
        let outstanding: usize = elements
            .iter()
            .flat_map(|e| e.tasks.iter())
            .filter(|t| self.states[t.index()] == TaskState::Pending)
            .count();
        let mut progress = Progress::new(outstanding as u64, &job.experiment.name, quiet);
        let mut interrupted = false;
        let mut last_query_error: Option<String> = None;
        loop {
            if job.interrupt.load(Ordering::SeqCst) {
                interrupted = true;
                progress.finish();
                cancel_after_interrupt(s);
                record.remove()?;
                break;
            }
            if let Some(reason) = record.refusal() {
                progress.finish();
                let mut jobs = s.job_ids();
                jobs.extend(s.gather_job.clone());
                let _ = submit::scancel(&jobs);
                record.remove()?;
                return Err(ExecError::Refused(format!(
                    "{}\n(cancelled jobs {})",
                    reason.trim(),
                    jobs.join(", ")
                )));
            }
            let open: Vec<String> = {
                let mut ids: Vec<String> =
                    elements.iter().filter(|e| !e.settled).map(|e| e.job_id.clone()).collect();
                ids.dedup();
                ids
            };
            if open.is_empty() {
                break;
            }
            let Some(element_states) =
                query(poller, s, &open, &elements, &progress, quiet, &mut last_query_error)
            else {
                sleep(settings.poll_interval, job);
                continue;
            };
            let (retry, ended_badly) = self.settle(&mut elements, &element_states, &mut progress);
            for (attempt, nodes) in retry {
                let (_, ids) = site.submit(s, &nodes, attempt)?;
                if let Some(round) = s.rounds.last() {
                    add_elements(record, round, &by_id, &mut elements);
                }
                progress.println(
                    quiet,
                    &format!(
                        "{}; resubmitted their {} unfinished tasks as job {} (attempt {} of {})",
                        ended_badly.join(", "),
                        nodes.len(),
                        ids.join(", "),
                        attempt + 1,
                        settings.retries + 1
                    ),
                );
            }
            if elements.iter().all(|e| e.settled) {
                break;
            }
            sleep(settings.poll_interval, job);
        }
        progress.finish();
        Ok(interrupted)
    }

    /// Takes what the elements not settled yet have finished (results from the cache, failures
    /// from the record) and settles the elements that ended. Returns the unfinished tasks to
    /// resubmit, by attempt, and what each element that ended badly did.
    fn settle(
        &mut self,
        elements: &mut [Element],
        element_states: &HashMap<poll::ElementKey, String>,
        progress: &mut Progress,
    ) -> (BTreeMap<u32, Vec<NodeIndex>>, Vec<String>) {
        let (job, record, settings) = (self.job, self.record, &self.options.settings);
        let graph = &job.plan.graph;
        let mut retry: BTreeMap<u32, Vec<NodeIndex>> = BTreeMap::new();
        let mut ended_badly = Vec::new();
        for element in elements.iter_mut().filter(|e| !e.settled) {
            let state = element_states.get(&(element.job_id.clone(), element.index));
            // Unlisted right after submission: the controller or its database has not caught up.
            let young = state.is_none() && element.since.elapsed() < UNLISTED_GRACE;
            let active = young || state.is_some_and(|s| !poll::is_terminal(s));
            let mut unfinished = Vec::new();
            for &node in &element.tasks {
                if self.states[node.index()] != TaskState::Pending {
                    continue;
                }
                if active && state.map(String::as_str) != Some("RUNNING") {
                    continue;
                }
                if let Some(output) = job.cache.get(&graph[node].id, graph[node].kind) {
                    self.states[node.index()] = TaskState::Done(output);
                    self.tally.executed += 1;
                    progress.tick(self.tally.failed as u64);
                } else if let Some(error) = record.failure(&graph[node].id) {
                    self.tally.executed += 1;
                    fail(job, node, error, &mut self.states, &mut self.tally);
                    progress.tick(self.tally.failed as u64);
                } else {
                    unfinished.push(node);
                }
            }
            if active {
                continue;
            }
            // A network filesystem may show a worker's last entries a little after its element
            // completed: give a COMPLETED element's missing results time to appear.
            if !unfinished.is_empty() && state.map(String::as_str) == Some("COMPLETED") {
                let ended = *element.completed_at.get_or_insert_with(Instant::now);
                if ended.elapsed() < COMPLETED_GRACE {
                    continue;
                }
            }
            element.settled = true;
            if unfinished.is_empty() {
                continue;
            }
            let why = match state.map(String::as_str) {
                Some("COMPLETED") => "ended COMPLETED without writing all its results (are the \
                                      cache and the binary on a filesystem the compute nodes \
                                      share? see its log)"
                    .to_string(),
                Some(other) => format!("ended {other}"),
                None => "left the queue unfinished".to_string(),
            };
            let name = format!("{}_{}", element.job_id, element.index);
            if element.attempt < settings.retries {
                ended_badly.push(format!("{name} {why}"));
                retry.entry(element.attempt + 1).or_default().extend(unfinished);
            } else {
                for node in unfinished {
                    let error = format!(
                        "Slurm element {name} {why}; gave up after {} attempts (--retries {}); \
                         its log: {}",
                        element.attempt + 1,
                        settings.retries,
                        record.logs_dir().join(format!("{name}.out")).display()
                    );
                    fail(job, node, error, &mut self.states, &mut self.tally);
                    progress.tick(self.tally.failed as u64);
                }
            }
        }
        (retry, ended_badly)
    }
}

/// After Ctrl-C: cancels the submission's jobs (`scancel`) and says so.
fn cancel_after_interrupt(s: &Submission) {
    let mut jobs = s.job_ids();
    jobs.extend(s.gather_job.clone());
    match submit::scancel(&jobs) {
        Ok(()) => say(
            false,
            &format!(
                "interrupted: cancelled Slurm jobs {} (scancel); finished tasks are kept, \
                 run again to resume",
                jobs.join(", ")
            ),
        ),
        Err(error) => {
            say(false, &format!("interrupted, but scancel {} failed: {error}", jobs.join(" ")))
        }
    }
}

/// The states of the `open` jobs' elements, from `sacct` (with `squeue` for the elements it
/// does not list yet) or `squeue`; `None` when Slurm cannot be asked (said once per new error).
fn query(
    poller: &mut Poller,
    s: &Submission,
    open: &[String],
    elements: &[Element],
    progress: &Progress,
    quiet: bool,
    last_error: &mut Option<String>,
) -> Option<HashMap<poll::ElementKey, String>> {
    let queried = poller.states(&s.job_name, open);
    if let Some(reason) = poller.fallback_reason.take() {
        progress
            .println(quiet, &format!("note: using squeue and the cache for job states ({reason})"));
    }
    match queried {
        Ok(mut map) => {
            *last_error = None;
            // sacct may not know a fresh submission yet: ask squeue about the missing ones.
            let missing = |map: &HashMap<poll::ElementKey, String>, e: &Element| {
                !e.settled && !map.contains_key(&(e.job_id.clone(), e.index))
            };
            if poller.uses_sacct()
                && elements.iter().any(|e| missing(&map, e))
                && let Ok(listed) = poller.squeue(&s.job_name)
            {
                for (key, state) in listed {
                    map.entry(key).or_insert(state);
                }
            }
            Some(map)
        }
        Err(error) => {
            if last_error.as_ref() != Some(&error) {
                progress.println(
                    quiet,
                    &format!("warning: cannot query Slurm ({error}); trying again"),
                );
            }
            *last_error = Some(error);
            None
        }
    }
}

/// Submits rounds of one run.
struct Site<'a> {
    record: &'a RecordDir,
    binary: &'a std::path::Path,
    settings: &'a Settings,
    plan: &'a crate::plan::Plan,
    /// The site's `MaxArraySize`, asked once.
    max_array_size: Option<usize>,
}

impl Site<'_> {
    /// Packs `nodes` into batches and submits them as the next round of `submission` (saved);
    /// returns the number of batches and the array job ids.
    fn submit(
        &mut self,
        submission: &mut Submission,
        nodes: &[NodeIndex],
        attempt: u32,
    ) -> Result<(usize, Vec<String>), ExecError> {
        let graph = &self.plan.graph;
        let tasks: Vec<(String, f64)> =
            nodes.iter().map(|&i| (graph[i].id.clone(), graph[i].cost)).collect();
        let batches = submit::pack(&tasks, self.settings.batch_seconds);
        let submitter = submit::Submitter {
            record: self.record,
            job_name: &submission.job_name,
            binary: self.binary,
            settings: self.settings,
            max_array_size: *self.max_array_size.get_or_insert_with(poll::max_array_size),
        };
        let round = submitter.round(submission.rounds.len() as u32, attempt, &batches)?;
        let ids = round.arrays.iter().map(|a| a.job_id.clone()).collect();
        submission.rounds.push(round);
        self.record.save(submission)?;
        Ok((batches.len(), ids))
    }
}

/// Adds the elements of `round` with their tasks.
fn add_elements(
    record: &RecordDir,
    round: &record::Round,
    by_id: &HashMap<&str, NodeIndex>,
    elements: &mut Vec<Element>,
) {
    for array in &round.arrays {
        for index in 0..array.count {
            let ids = record.batch(round.number, array.offset + index).unwrap_or_default();
            let tasks = ids.iter().filter_map(|id| by_id.get(id.as_str()).copied()).collect();
            elements.push(Element {
                job_id: array.job_id.clone(),
                index,
                attempt: round.attempt,
                tasks,
                settled: false,
                since: Instant::now(),
                completed_at: None,
            });
        }
    }
}

/// Sleeps `interval`, waking early on Ctrl-C.
fn sleep(interval: Duration, job: &Job<'_>) {
    let until = Instant::now() + interval;
    while Instant::now() < until && !job.interrupt.load(Ordering::SeqCst) {
        std::thread::sleep(
            Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())),
        );
    }
}

/// The array job ids of `submission` that Slurm still lists as pending or running.
fn active_jobs(poller: &mut Poller, submission: &Submission) -> Result<Vec<String>, ExecError> {
    let mut active = active_ids(poller, &submission.job_name, &submission.job_ids())?;
    if let Some(gather) = &submission.gather_job {
        active.extend(active_ids(
            poller,
            &format!("{}-gather", submission.job_name),
            std::slice::from_ref(gather),
        )?);
    }
    Ok(active)
}

/// Which of `ids` (named `name`) still have an element or job not ended.
fn active_ids(poller: &mut Poller, name: &str, ids: &[String]) -> Result<Vec<String>, ExecError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let jobs = poller.job_states(name, ids).map_err(ExecError::Slurm)?;
    Ok(ids
        .iter()
        .filter(|id| jobs.iter().any(|(j, state)| j == *id && !poll::is_terminal(state)))
        .cloned()
        .collect())
}

/// Whether every input of `node` is done.
fn inputs_done(job: &Job<'_>, states: &[TaskState], node: NodeIndex) -> bool {
    job.plan
        .graph
        .neighbors_directed(node, Direction::Incoming)
        .all(|p| matches!(states[p.index()], TaskState::Done(_)))
}

/// Marks `node` failed and its dependants skipped.
fn fail(
    job: &Job<'_>,
    node: NodeIndex,
    error: String,
    states: &mut [TaskState],
    tally: &mut Tally,
) {
    let id = &job.plan.graph[node].id;
    let reason = format!("skipped: input task {} failed", &id[..12.min(id.len())]);
    states[node.index()] = TaskState::Failed(error);
    tally.failed += 1;
    tally.skipped += super::skip_dependants(job.plan, node, &reason, states);
}

/// Evaluates here, in dependency order, every pending compute task other than a simulation
/// whose inputs are all done: the saturation rates and model solves before submission, the
/// aggregates after. They take microseconds each.
fn evaluate_local(job: &Job<'_>, states: &mut [TaskState], tally: &mut Tally) {
    let graph = &job.plan.graph;
    let order =
        petgraph::algo::toposort(graph, None).unwrap_or_else(|_| graph.node_indices().collect());
    for node in order {
        let task = &graph[node];
        if !task.kind.is_compute()
            || task.kind.is_remote()
            || states[node.index()] != TaskState::Pending
            || !inputs_done(job, states, node)
        {
            continue;
        }
        let saturation = task
            .scenario
            .and_then(|scenario| super::load_saturation(job.plan, states, scenario))
            .filter(|_| task.needs_saturation());
        let inputs = super::aggregate_inputs(job.plan, states, node);
        let log = job.cache.log_path(&task.id);
        let result = evaluate::evaluate(
            job.experiment,
            task,
            saturation,
            &inputs,
            1,
            Some(&log),
            Some(job.interrupt),
        )
        .and_then(|output: Output| {
            match job.cache.put_unless_failed(&task.id, task.kind, &output) {
                Ok(()) => Ok(output),
                Err(e) => Err(format!("cannot write the cache entry: {e}")),
            }
        });
        match result {
            Ok(output) => {
                tally.failed += output.failed_points();
                states[node.index()] = TaskState::Done(super::in_cache(output));
                tally.executed += 1;
            }
            Err(error) => fail(job, node, error, states, tally),
        }
    }
}

/// The submission's state for `runner status`.
#[derive(Debug, Default)]
pub struct StatusReport {
    /// Compute tasks in the plan.
    pub total: usize,
    /// In the cache.
    pub done: usize,
    /// In an element Slurm says is running.
    pub running: usize,
    /// In an element waiting in the queue.
    pub pending: usize,
    /// Recorded as failed.
    pub failed: usize,
    /// Simulations neither done, failed nor in a live element.
    pub not_submitted: usize,
    /// Other tasks not done yet: they run here (aggregates after their simulations).
    pub local: usize,
    /// Element counts per Slurm state, per array job.
    pub jobs: Vec<(String, BTreeMap<String, usize>)>,
    /// The dependent gather job and its state.
    pub gather_job: Option<(String, String)>,
    /// Where the states came from, when `sacct` was not usable.
    pub note: Option<String>,
}

/// Done / running / pending / failed tasks of `job`, from the cache and from Slurm.
pub fn status(job: &Job<'_>) -> Result<StatusReport, ExecError> {
    let graph = &job.plan.graph;
    let record = RecordDir::new(job.root, &job.experiment.name);
    let mut report = StatusReport::default();
    let compute: Vec<NodeIndex> =
        graph.node_indices().filter(|&i| graph[i].kind.is_compute()).collect();
    report.total = compute.len();
    let mut element_of: HashMap<String, (String, usize)> = HashMap::new();
    let mut element_states = HashMap::new();
    let submission = record.load()?.filter(|s| s.spec_sha256 == job.source.sha256);
    if let Some(s) = &submission {
        let mut poller = Poller::new();
        element_states = poller.states(&s.job_name, &s.job_ids()).map_err(ExecError::Slurm)?;
        report.note = poller.fallback_reason.take();
        for round in &s.rounds {
            for array in &round.arrays {
                let mut counts = BTreeMap::new();
                for index in 0..array.count {
                    let state = element_states
                        .get(&(array.job_id.clone(), index))
                        .cloned()
                        .unwrap_or_else(|| "ENDED".to_string());
                    *counts.entry(state).or_insert(0) += 1;
                    for id in record.batch(round.number, array.offset + index).unwrap_or_default() {
                        element_of.insert(id, (array.job_id.clone(), index));
                    }
                }
                report.jobs.push((array.job_id.clone(), counts));
            }
        }
        if let Some(gather) = &s.gather_job {
            let states = poller
                .job_states(&format!("{}-gather", s.job_name), std::slice::from_ref(gather))
                .map_err(ExecError::Slurm)?;
            let state = states.into_iter().next().map_or_else(|| "ENDED".to_string(), |(_, st)| st);
            report.gather_job = Some((gather.clone(), state));
        }
    }
    for node in compute {
        let id = &graph[node].id;
        if job.cache.contains(id, graph[node].kind) {
            report.done += 1;
        } else if submission.is_some() && record.failure(id).is_some() {
            report.failed += 1;
        } else if !graph[node].kind.is_remote() {
            report.local += 1;
        } else {
            match element_of.get(id).and_then(|key| element_states.get(key)).map(String::as_str) {
                Some("RUNNING") | Some("COMPLETING") | Some("CONFIGURING") => report.running += 1,
                Some(state) if !poll::is_terminal(state) => report.pending += 1,
                _ => report.not_submitted += 1,
            }
        }
    }
    Ok(report)
}
