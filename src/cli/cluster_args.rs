//! The executor options of `runner run`: `--executor`, `--profile`, the Slurm site settings that
//! override the profile, and `--detach`.

use std::path::{Path, PathBuf};

use super::InputError;
use crate::exec::ExecOptions;
use crate::exec::executor::Executor;
use crate::exec::slurm::SlurmOptions;
use crate::exec::slurm::profile::{self, ExecutorKind, SiteSettings};

/// Where tasks run, and the Slurm site settings.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Executor (see README, \"On a cluster\")")]
pub struct ClusterArgs {
    /// Where tasks run: `local` (this machine's cores) or `slurm` (job arrays; simulations
    /// run on the cluster, everything else here). Default: the profile's `executor`, else local.
    #[arg(long, value_enum)]
    executor: Option<ExecutorKind>,
    /// Site settings file (TOML; keys of its `[slurm]` table are the flags below, with `_` for
    /// `-`). Default: `runner.toml` under --root, when present. Flags override it.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Slurm partition (`sbatch --partition`).
    #[arg(long, value_name = "NAME")]
    partition: Option<String>,
    /// Slurm account to charge (`sbatch --account`).
    #[arg(long, value_name = "NAME")]
    account: Option<String>,
    /// Time limit of one array element (`sbatch --time`, e.g. 00:30:00).
    #[arg(long, value_name = "LIMIT")]
    time: Option<String>,
    /// Memory of one array element (`sbatch --mem`, e.g. 2G).
    #[arg(long, value_name = "SIZE")]
    mem: Option<String>,
    /// Array elements running at once (the `%N` of `--array`). Default: no limit.
    #[arg(long, value_name = "N")]
    max_concurrent: Option<u32>,
    /// An extra `sbatch` argument, as given (repeatable), e.g. --sbatch-arg=--qos=long.
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    sbatch_args: Vec<String>,
    /// Seconds between two queries of Slurm's job states [default: 10].
    #[arg(long, value_name = "SECONDS")]
    poll_interval: Option<f64>,
    /// Target length of one array element's batch of simulations, in minutes, by the plan's
    /// cost estimate [default: 10].
    #[arg(long, value_name = "MINUTES")]
    batch_minutes: Option<f64>,
    /// Resubmissions of the unfinished tasks of an element that ended FAILED, TIMEOUT,
    /// NODE_FAIL, PREEMPTED, OUT_OF_MEMORY or CANCELLED [default: 2]. A task whose evaluator
    /// returns an error is a failed row and is never retried.
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Submit, print the job ids and exit 0; a dependent job gathers and reports when every
    /// element has ended. `runner status SPEC` shows progress; `runner run SPEC` again attaches
    /// to the queued jobs and waits, without submitting anything twice.
    #[arg(long)]
    detach: bool,
}

impl ClusterArgs {
    /// The site settings given on the command line.
    fn overrides(&self) -> SiteSettings {
        SiteSettings {
            partition: self.partition.clone(),
            account: self.account.clone(),
            time: self.time.clone(),
            mem: self.mem.clone(),
            max_concurrent: self.max_concurrent,
            sbatch_args: self.sbatch_args.clone(),
            poll_interval: self.poll_interval,
            batch_minutes: self.batch_minutes,
            retries: self.retries,
        }
    }

    /// The executor of this run: `local` runs on `local`'s options.
    pub fn executor(&self, root: &Path, local: ExecOptions) -> anyhow::Result<Executor> {
        let (_, file) = match (self.executor, &self.profile) {
            // A local run named on the command line needs no profile.
            (Some(ExecutorKind::Local), None) => (None, profile::ProfileFile::default()),
            _ => profile::load(root, self.profile.as_deref()).map_err(InputError)?,
        };
        let kind = self.executor.or(file.executor).unwrap_or(ExecutorKind::Local);
        let overrides = self.overrides();
        if kind == ExecutorKind::Local {
            if self.detach || overrides != SiteSettings::default() {
                return Err(InputError(
                    "--detach and the Slurm settings (--partition, --account, --time, ...) need \
                     --executor slurm"
                        .into(),
                )
                .into());
            }
            return Ok(Executor::Local(local));
        }
        let settings = file.slurm.overridden_by(overrides).resolve().map_err(InputError)?;
        Ok(Executor::Slurm(SlurmOptions {
            settings,
            force: local.force,
            quiet: local.quiet,
            detach: self.detach,
        }))
    }
}
