//! `runner status`: done / running / pending / failed tasks of a spec, from the cache and from
//! the Slurm submission recorded under `.runner/slurm/`.

use std::path::{Path, PathBuf};

use super::{Outcome, load_specs};
use crate::exec::cache::Cache;
use crate::exec::executor::{ExecError, Job};
use crate::exec::slurm;
use crate::plan::{self, Only};

/// Arguments of `runner status`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Spec files to report on.
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    /// The `--only` the run was given.
    #[arg(long, value_enum)]
    only: Option<Only>,
    #[command(flatten)]
    limits: super::LimitArgs,
    /// Where `.runner/` lives.
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

/// Prints each spec's state.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let root = std::path::absolute(&args.root)?;
    let cache = Cache::new(root.join(".runner").join("cache"));
    let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for (source, experiment) in load_specs(&args.specs, &args.limits)? {
        let plan = plan::build(&experiment, args.only);
        let job = Job {
            source: &source,
            experiment: &experiment,
            plan: &plan,
            only: args.only,
            cache: &cache,
            root: &root,
            interrupt: &interrupt,
        };
        let report = slurm::status(&job).map_err(|e| match e {
            ExecError::Setup(message) => super::InputError(message).into(),
            other => anyhow::Error::from(other),
        })?;
        outln!(
            "{}: {} tasks: {} done, {} running, {} pending, {} failed, {} not submitted, {} to run \
             here (aggregates, after their simulations)",
            experiment.name,
            report.total,
            report.done,
            report.running,
            report.pending,
            report.failed,
            report.not_submitted,
            report.local
        )?;
        for (job_id, counts) in &report.jobs {
            let states: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
            outln!("  Slurm array job {job_id}: {}", states.join(", "))?;
        }
        if let Some((job_id, state)) = &report.gather_job {
            outln!("  gather job {job_id}: {state}")?;
        }
        if report.jobs.is_empty() {
            outln!("  no Slurm submission in progress")?;
        }
        if let Some(note) = &report.note {
            outln!("  (job states from squeue and the cache: {note})")?;
        }
    }
    Ok(Outcome::Success)
}

/// What `runner run --detach` prints: the job ids on stdout, what to do next on stderr.
pub fn print_detached(
    experiment: &str,
    spec: &Path,
    jobs: &[String],
    gather_job: Option<&str>,
    quiet: bool,
) -> anyhow::Result<()> {
    let mut ids: Vec<&str> = jobs.iter().map(String::as_str).collect();
    ids.extend(gather_job);
    outln!("{}", ids.join(" "))?;
    if !quiet {
        super::print_error(&format!(
            "{experiment}: detached; array job{} {}{}. `runner status {}` shows progress; \
             `runner run {}` attaches and waits\n",
            if jobs.len() == 1 { "" } else { "s" },
            jobs.join(", "),
            gather_job.map(|g| format!(", then job {g} gathers and reports")).unwrap_or_default(),
            spec.display(),
            spec.display()
        ));
    }
    Ok(())
}
