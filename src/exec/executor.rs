//! The executor abstraction: where a run's tasks are evaluated, chosen per run.
//!
//! Both executors take the same [`Job`] (an experiment, its plan, the cache) and end with the
//! same [`RunSummary`], so gathering and reporting do not care where tasks ran:
//!
//! - [`Executor::Local`]: the rayon pool of this process ([`crate::exec::run`]);
//! - [`Executor::Slurm`]: cheap tasks here, simulations as Slurm job arrays whose elements run
//!   `runner worker` and write the same cache ([`crate::exec::slurm`]).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::cache::Cache;
use super::slurm::{self, SlurmOptions};
use super::{ExecOptions, RunSummary};
use crate::plan::{Only, Plan};
use crate::spec::{Experiment, SpecSource};

/// One experiment to execute.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    /// The spec as read.
    pub source: &'a SpecSource,
    /// The experiment.
    pub experiment: &'a Experiment,
    /// Its plan.
    pub plan: &'a Plan,
    /// `--only`, as planned.
    pub only: Option<Only>,
    /// The result cache.
    pub cache: &'a Cache,
    /// Where `.runner/` and `reports/` live (absolute for Slurm).
    pub root: &'a Path,
    /// Set by Ctrl-C.
    pub interrupt: &'a Arc<AtomicBool>,
}

/// Where to run.
#[derive(Clone, Debug)]
pub enum Executor {
    /// This machine's rayon pool.
    Local(ExecOptions),
    /// Slurm job arrays.
    Slurm(SlurmOptions),
}

/// How an execution ended.
#[derive(Debug)]
pub enum Completion {
    /// Every task ended (or the run was interrupted): gather and report.
    Finished(RunSummary),
    /// Submitted and left running (`--detach`).
    Detached {
        /// The array job ids.
        jobs: Vec<String>,
        /// The job that gathers and reports when they have ended.
        gather_job: Option<String>,
    },
}

/// Why an execution could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// Bad settings or environment (exit code 2).
    #[error("{0}")]
    Setup(String),
    /// Slurm misbehaved.
    #[error("{0}")]
    Slurm(String),
    /// A worker refused to run the tasks (evaluator versions differ).
    #[error("a worker refused to run: {0}")]
    Refused(String),
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Executor {
    /// Runs every compute task of the job's plan.
    pub fn run(&self, job: &Job<'_>) -> Result<Completion, ExecError> {
        match self {
            Executor::Local(options) => {
                super::run(job.experiment, job.plan, job.cache, options, job.interrupt)
                    .map(Completion::Finished)
                    .map_err(ExecError::Io)
            }
            Executor::Slurm(options) => slurm::run(job, options),
        }
    }
}
