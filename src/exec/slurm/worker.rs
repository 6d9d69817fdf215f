//! One array element (`runner worker`, hidden): evaluates its batch's tasks through
//! [`evaluate`](crate::exec::evaluate) and writes each result with [`Cache::put`], the same
//! atomic write as a local run. An evaluator error is recorded as the task's failure (not
//! retried); a cache write error likewise. A worker whose evaluator versions differ from the
//! ones that planned the work refuses to run.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use super::record::RecordDir;
use crate::exec::cache::Cache;
use crate::exec::evaluate;
use crate::exec::executor::ExecError;
use crate::files::write_atomic;
use crate::plan::{self, Only};

/// What one element did.
#[derive(Debug, Default)]
pub struct ElementReport {
    /// Tasks evaluated and cached.
    pub done: usize,
    /// Tasks already cached (an earlier attempt finished them).
    pub already: usize,
    /// Tasks that failed (recorded, not retried).
    pub failed: usize,
}

/// Runs batch `offset + array_index` of round `round` of the submission in `dir`.
pub fn run_element(
    dir: &Path,
    round: u32,
    batch: usize,
    log: &mut dyn FnMut(&str),
) -> Result<ElementReport, ExecError> {
    let record = RecordDir { dir: dir.to_path_buf() };
    let submission = record.load()?.ok_or_else(|| {
        ExecError::Setup(format!(
            "no submission recorded in {} (is it on a filesystem this node shares?)",
            dir.display()
        ))
    })?;
    if let Some(reason) = submission.version_mismatch() {
        let _ = write_atomic(&record.refused_path(), reason.as_bytes());
        return Err(ExecError::Refused(reason));
    }
    // The spec was accepted (with any `--max-tasks`) when it was submitted; the copy is the same.
    let unbounded = crate::spec::Limits { max_tasks: u64::MAX };
    let cannot_load = |e: crate::spec::SpecError| {
        ExecError::Setup(format!("cannot load the submitted spec: {e}"))
    };
    let mut source = crate::spec::read(&record.spec_path()).map_err(cannot_load)?;
    // The copy stands in for the spec where it was submitted from, so external methods run
    // in, and hash their inputs from, the spec's own directory.
    if let Some(original) = &submission.spec_path {
        source.path = original.clone();
    }
    let experiment = crate::spec::parse_with(&source, &unbounded).map_err(cannot_load)?;
    if source.sha256 != submission.spec_sha256 {
        return Err(ExecError::Setup(format!(
            "{} changed after submission; cancel the jobs and submit again",
            record.spec_path().display()
        )));
    }
    let only = match submission.only.as_deref() {
        Some("model") => Some(Only::Model),
        Some("simulation") => Some(Only::Simulation),
        _ => None,
    };
    let plan = plan::build(&experiment, only);
    let by_id: HashMap<&str, petgraph::graph::NodeIndex> =
        plan.graph.node_indices().map(|n| (plan.graph[n].id.as_str(), n)).collect();
    let cache = Cache::new(&submission.cache_dir);
    let ids = record.batch(round, batch)?;
    let mut report = ElementReport::default();
    for id in &ids {
        let Some(&node) = by_id.get(id.as_str()) else {
            return Err(ExecError::Setup(format!("task {id} is not in the submitted plan")));
        };
        if cache.contains(id, plan.graph[node].kind) {
            report.already += 1;
            continue;
        }
        let task = &plan.graph[node];
        let saturation = match (task.needs_saturation(), task.scenario) {
            (true, Some(scenario)) => {
                plan.load_saturation.get(scenario).copied().flatten().and_then(|n| {
                    let output = cache.get(&plan.graph[n].id, plan.graph[n].kind)?;
                    crate::exec::saturation_of_output(&output)
                })
            }
            _ => None,
        };
        let started = Instant::now();
        let task_log = cache.log_path(id);
        // An array element holds the CPUs Slurm gave it (`--cpus-per-task` among the
        // profile's `sbatch_args`), which its affinity shows: a spec's `threads` takes at most
        // those; left to the run, one, as every element has one CPU by default.
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let threads = experiment
            .simulation
            .as_ref()
            .and_then(|simulation| simulation.threads)
            .map_or(1, |count| usize::try_from(count).unwrap_or(1).min(cpus));
        let result =
            evaluate::evaluate(&experiment, task, saturation, &[], threads, Some(&task_log), None)
                .and_then(|output| {
                    cache
                        .put(id, task.kind, &output)
                        .map_err(|e| format!("cannot write the cache entry: {e}"))
                });
        let short = &id[..12.min(id.len())];
        match result {
            Ok(()) => {
                report.done += 1;
                log(&format!("{short} done in {:.2}s", started.elapsed().as_secs_f64()));
            }
            Err(error) => {
                report.failed += 1;
                log(&format!("{short} failed: {}", crate::console::escape(&error)));
                record.record_failure(id, &error)?;
            }
        }
    }
    Ok(report)
}
