//! The command line: clap definitions, dispatch, and the one place that picks exit codes.
//!
//! Exit codes: 0 when everything succeeded, 1 when a run finished but some
//! tasks failed (or `verify` found a problem, or `diff` found something that
//! moved), 2 when the command could not do its job: bad input (usage, spec) or a setup or environment failure (a path
//! that cannot be created or written, a full disk, an unreadable results file),
//! 130 when interrupted (Ctrl-C, SIGTERM or SIGHUP). Errors go to stderr as
//! `runner: ...`, naming the path and the cause once. `docs/inputs.md` lists
//! every input class with its exit code; a test keeps that table true.

/// `println!` for a command's output: writes through
/// [`write_stdout`](crate::console::write_stdout), returning its error.
macro_rules! outln {
    () => {
        $crate::console::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::console::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for a command's output: writes through
/// [`write_stdout`](crate::console::write_stdout), returning its error.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::console::write_stdout(format_args!($($arg)*))
    };
}

mod bench;
mod clean;
mod cluster_args;
mod diff;
#[cfg(target_os = "linux")]
mod guard;
mod models;
mod plan;
mod report;
mod run;
pub mod scenario_args;
mod schema;
mod simulate;
mod solve;
mod status;
mod validate;
mod worker;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::console::{StdoutError, eprint_line, print_error};

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
  runner plan --cores 1,16,64                      the last run replayed on 1, 16 and 64 cores
  runner plan experiments/ss_torus.yaml --cores 16  a run of its uncached tasks on 16 cores
  runner validate experiments/*.yaml
  runner models
  runner solve fat_tree processors=256 message_length=32 --rate 0.002 --json
  runner solve fat_tree processors=256 --saturation
  runner simulate topology=torus radix=8 dimensions=2 routing=duato virtual_channels=3 --rate 0.005
  runner report reports/quickstart && runner verify reports/quickstart
  runner diff reports/quickstart experiments/quickstart.yaml  what moved since the bundle";

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
    /// Show the task graph of a spec: counts per kind, cached, estimated cost; or DOT; or
    /// replay the last run on N cores (`--cores N`).
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
    /// Compare two bundles, or a bundle and a fresh run of its spec, point by point.
    Diff(diff::Args),
    /// Remove cache entries that no given spec references.
    Clean(clean::Args),
    /// Measure the simulator, the models and the scheduler (release build).
    Bench(bench::Args),
    /// Show done / running / pending / failed tasks of a spec, from the cache and from Slurm.
    Status(status::Args),
    /// Evaluate one batch of a Slurm submission (what each array element runs).
    #[command(hide = true)]
    Worker(worker::Args),
    /// Run an external program under a guard that kills what it leaves behind (what `runner`
    /// starts in place of each external program).
    #[cfg(target_os = "linux")]
    #[command(hide = true, name = crate::exec::guard::SUBCOMMAND)]
    Guard(guard::Args),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    plain_error_reports();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if error.use_stderr() => {
            // The error may echo an argument: as text, its control characters shown.
            eprint_line(error.render().to_string().trim_end());
            return ExitCode::from(2);
        }
        Err(error) => {
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
    };
    register_guard(&cli.command);
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
        Command::Diff(args) => diff::run(args),
        Command::Clean(args) => clean::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Status(args) => status::run(args),
        Command::Worker(args) => worker::run(args),
        #[cfg(target_os = "linux")]
        Command::Guard(args) => guard::run(args),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::SomeFailed) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(error) => {
            if let Some(StdoutError(e)) = error.downcast_ref::<StdoutError>()
                && e.kind() == std::io::ErrorKind::BrokenPipe
            {
                // The reader has what it wanted (`runner plan --dot | head`).
                return ExitCode::SUCCESS;
            }
            if let Some(spec_error) = error.downcast_ref::<crate::spec::SpecError>() {
                print_error(&format!("{spec_error}"));
            } else {
                print_error(&format!("{}\n", error_chain(&error)));
            }
            ExitCode::from(2)
        }
    }
}

/// Runs every external program under this binary's guard (`exec::guard`), for every command
/// but the guard itself (`run`, `worker` and `diff`'s fresh run start programs). The
/// binary is named `/proc/self/exe`, which is the running image even when its file was
/// replaced or deleted since `runner` started (a rebuild during a long run): the guard is
/// always this binary's own. Elsewhere than on Linux, programs are started directly.
fn register_guard(command: &Command) {
    #[cfg(target_os = "linux")]
    {
        let exe = std::path::Path::new("/proc/self/exe");
        if !matches!(command, Command::Guard(_)) && exe.exists() {
            crate::exec::external::use_guard(exe.to_path_buf());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Spec error reports (miette) without escape sequences of their own: no colours, no terminal
/// links. Every escape sequence a spec value brings is then shown as text on stderr
/// (`console::escape_text`), and none of the report's own would be shown that way either.
fn plain_error_reports() {
    let _ = miette::set_hook(Box::new(|_| {
        Box::new(miette::MietteHandlerOpts::new().color(false).terminal_links(false).build())
    }));
}

/// An error and its causes as `outer: inner: root`, leaving out a cause whose text the line
/// already holds (an I/O error wrapped with its own message would otherwise print twice).
fn error_chain(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// The most worker threads `-j` may ask for, as a multiple of the available cores: the tasks
/// are CPU-bound, so more threads only add start-up and switching cost.
const JOBS_PER_CORE: usize = 4;

/// The worker-thread count for `-j`: all cores when not given; at least 1 (0 is refused);
/// clamped, with a warning, to [`JOBS_PER_CORE`] times the available cores.
fn worker_threads(jobs: Option<usize>) -> Result<usize, InputError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match jobs {
        None => Ok(cores),
        Some(0) => Err(InputError("-j must be at least 1".into())),
        Some(jobs) if jobs > cores * JOBS_PER_CORE => {
            let max = cores * JOBS_PER_CORE;
            print_error(&format!(
                "warning: -j {jobs} is more than {JOBS_PER_CORE} threads per available core ({cores}); using -j {max}\n"
            ));
            Ok(max)
        }
        Some(jobs) => Ok(jobs),
    }
}

/// `--max-tasks`, shared by the commands that load specs.
#[derive(Debug, clap::Args)]
struct LimitArgs {
    /// Allow specs that plan more than this many tasks (default 1000000); raise it deliberately.
    #[arg(long, value_name = "N")]
    max_tasks: Option<u64>,
}

impl LimitArgs {
    fn limits(&self) -> crate::spec::Limits {
        let defaults = crate::spec::Limits::default();
        crate::spec::Limits { max_tasks: self.max_tasks.unwrap_or(defaults.max_tasks) }
    }
}

/// Loads every spec, printing each one's problems and warnings; bad input when any is invalid.
fn load_specs(
    paths: &[PathBuf],
    limits: &LimitArgs,
) -> anyhow::Result<Vec<(crate::spec::SpecSource, crate::spec::Experiment)>> {
    let mut loaded = Vec::new();
    let mut failed = 0;
    for path in paths {
        match crate::spec::load_with(path, &limits.limits()) {
            Ok(pair) => {
                for warning in &pair.1.warnings {
                    let position = warning
                        .location
                        .map(|l| format!("{}:{}:{}", path.display(), l.line(), l.column()))
                        .unwrap_or_else(|| path.display().to_string());
                    let help = warning.help.as_ref().map(|h| format!(" ({h})")).unwrap_or_default();
                    print_error(&format!("warning: {position}: {}{help}\n", warning.message));
                }
                loaded.push(pair);
            }
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
