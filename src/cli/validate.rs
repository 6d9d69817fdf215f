//! `runner validate`: check specs without running anything.

use std::path::PathBuf;

use super::{Outcome, load_specs};

/// Arguments of `runner validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Spec files to check.
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    #[command(flatten)]
    limits: super::LimitArgs,
}

/// Checks each spec and prints a one-line summary per valid spec.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    for (source, experiment) in load_specs(&args.specs, &args.limits)? {
        outln!(
            "{}: ok: {} scenario{} x {} load point{}",
            crate::console::escape(&source.path.display().to_string()),
            experiment.scenarios.len(),
            if experiment.scenarios.len() == 1 { "" } else { "s" },
            experiment.load.len(),
            if experiment.load.len() == 1 { "" } else { "s" },
        )?;
        super::plan::print_commands(&experiment)?;
    }
    Ok(Outcome::Success)
}
