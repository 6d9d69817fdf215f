//! `runner worker` (hidden): what one Slurm array element runs. It evaluates one batch of a
//! recorded submission and writes the results into the shared cache.

use std::path::PathBuf;

use super::{InputError, Outcome};
use crate::exec::executor::ExecError;
use crate::exec::slurm::worker;

/// Arguments of `runner worker`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The submission directory (`.runner/slurm/<experiment>`).
    dir: PathBuf,
    /// The submission round.
    #[arg(long)]
    round: u32,
    /// Batch index of element 0 of this array.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// The array index (default: $SLURM_ARRAY_TASK_ID).
    #[arg(long)]
    index: Option<usize>,
}

/// Runs one element's batch.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let index = match args.index {
        Some(index) => index,
        None => std::env::var("SLURM_ARRAY_TASK_ID")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .ok_or_else(|| {
                InputError(
                    "no --index and no SLURM_ARRAY_TASK_ID: is this a Slurm array job?".into(),
                )
            })?,
    };
    let batch = args.offset.checked_add(index).ok_or_else(|| {
        InputError(format!("--offset {} plus the array index {index} is out of range", args.offset))
    })?;
    // The log goes to the element's Slurm output file; a log line that cannot be written must
    // not fail the batch, whose product is the cache entries.
    let mut log = |line: &str| {
        let _ = outln!("{line}");
    };
    match worker::run_element(&args.dir, args.round, batch, &mut log) {
        Ok(report) => {
            let _ = outln!(
                "batch {batch} of round {}: {} done, {} already cached, {} failed",
                args.round,
                report.done,
                report.already,
                report.failed
            );
            Ok(Outcome::Success)
        }
        Err(ExecError::Setup(message) | ExecError::Refused(message)) => {
            Err(InputError(message).into())
        }
        Err(error) => Err(error.into()),
    }
}
