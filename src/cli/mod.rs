//! The command line: clap definitions, dispatch, and the one place that picks exit codes.
//!
//! Exit codes: 0 when everything succeeded, 1 when a run finished but some
//! tasks failed (or `verify` found a problem), 2 for bad input (usage, spec or
//! setup errors), 130 when interrupted. Errors go to stderr as `runner: ...`.

mod bench;
mod clean;
mod cluster_args;
mod models;
mod plan;
mod report;
mod run;
mod scenario_args;
mod schema;
mod simulate;
mod solve;
mod status;
mod validate;
mod worker;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// How a command ended, mapped to an exit code in one place.
#[derive(Debug)]
pub enum Outcome {
    /// Everything succeeded.
    Success,
    /// The command ran, but some tasks failed (or a check found problems).
    SomeFailed,
    /// Stopped by Ctrl-C.
    Interrupted,
}

/// An error that means "bad input": printed, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

const EXAMPLES: &str = "\
Examples:
  runner run experiments/quickstart.yaml          run a spec, write reports/quickstart/
  runner run experiments/*.yaml -j 2 --only model  several specs, models only, 2 threads
  runner run experiments/nbc_torus.yaml --executor slurm  on a Slurm cluster (README)
  runner plan experiments/ss_torus.yaml --dot > plan.dot
  runner validate experiments/*.yaml
  runner models
  runner solve fat_tree processors=256 message_length=32 --rate 0.002 --json
  runner solve fat_tree processors=256 --saturation
  runner simulate topology=torus radix=8 dimensions=2 routing=duato virtual_channels=3 --rate 0.005
  runner report reports/quickstart && runner verify reports/quickstart";

/// Declarative experiment pipelines for interconnection-network performance research.
///
/// A spec (YAML) declares networks, switching, routing, virtual channels, message
/// lengths, faults, traffic and sweeps; `runner run` evaluates every point with the
/// published analytical models and/or the flit-level simulator, in parallel and
/// cached, and writes reports/<name>/results.parquet plus a report bundle.
#[derive(Debug, Parser)]
#[command(name = "runner", version, after_help = EXAMPLES, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run specs: plan, evaluate (cached), write results.parquet and the report bundle.
    Run(run::Args),
    /// Check specs without running anything.
    Validate(validate::Args),
    /// Show the task graph of a spec: counts per kind, cached, estimated cost; or DOT.
    Plan(plan::Args),
    /// Print the JSON Schema of the spec format.
    Schema(schema::Args),
    /// List the analytical models with their parameters and papers.
    Models(models::Args),
    /// Evaluate one model at one load and print every intermediate quantity.
    Solve(solve::Args),
    /// Simulate one scenario at one load.
    Simulate(simulate::Args),
    /// Re-render a report bundle from its results.parquet, without recomputing.
    Report(report::ReportArgs),
    /// Re-check the SHA-256 of every file in a report bundle.
    Verify(report::VerifyArgs),
    /// Remove cache entries that no given spec references.
    Clean(clean::Args),
    /// Measure the simulator, the models and the scheduler (release build).
    Bench(bench::Args),
    /// Show done / running / pending / failed tasks of a spec, from the cache and from Slurm.
    Status(status::Args),
    /// Evaluate one batch of a Slurm submission (what each array element runs).
    #[command(hide = true)]
    Worker(worker::Args),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Models(args) => models::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Report(args) => report::run_report(args),
        Command::Verify(args) => report::run_verify(args),
        Command::Clean(args) => clean::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Status(args) => status::run(args),
        Command::Worker(args) => worker::run(args),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::SomeFailed) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(error) => {
            if let Some(spec_error) = error.downcast_ref::<crate::spec::SpecError>() {
                print_error(&format!("{spec_error}"));
                return ExitCode::from(2);
            }
            print_error(&format!("{error:#}\n"));
            if error.downcast_ref::<InputError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// Exits quietly (code 0) when stdout or stderr is a closed pipe, as in `runner plan --dot | head`,
/// instead of printing a panic; every other panic goes to the default hook.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if payload.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Writes `runner: message` to stderr, ignoring a closed pipe (no panic on `| head`).
fn print_error(message: &str) {
    use std::io::Write;
    let _ = write!(std::io::stderr().lock(), "runner: {message}");
}

/// Loads every spec, printing each one's problems; bad input when any is invalid.
fn load_specs(
    paths: &[PathBuf],
) -> anyhow::Result<Vec<(crate::spec::SpecSource, crate::spec::Experiment)>> {
    let mut loaded = Vec::new();
    let mut failed = 0;
    for path in paths {
        match crate::spec::load(path) {
            Ok(pair) => loaded.push(pair),
            Err(error) => {
                print_error(&format!("{error}"));
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(InputError(format!(
            "{failed} of {} spec{} invalid",
            paths.len(),
            if paths.len() == 1 { " is" } else { "s are" }
        ))
        .into());
    }
    Ok(loaded)
}
