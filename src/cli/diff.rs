//! `runner diff A B`: what moved between two bundles, or between a bundle and a fresh run of
//! its spec, point by point (`store::diff` does the comparison; this file reads, runs and
//! prints).
//!
//! Exit codes follow diff(1): 0 when nothing moved beyond its 95% interval (and no point was
//! added, removed or changed status), 1 when something did, 2 when a side cannot be read (or
//! A is a spec), 130 when the fresh run of a spec was interrupted.

use std::path::{Path, PathBuf};

use super::{InputError, Outcome};
use crate::store::diff::{Change, Diff};
use crate::store::row::Row;

/// Arguments of `runner diff`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  runner diff reports/nbc_torus /tmp/old/reports/nbc_torus   two bundles
  runner diff reports/nbc_torus experiments/nbc_torus.yaml   the bundle against a fresh run
  runner diff A B --json | jq '.changes[] | select(.moved)'  machine-readable

Points are matched by method, scenario, load and replication (not by task id, which changes
with the evaluator version). Exit code 0: nothing moved beyond its 95% interval; 1: something
did (or points were added, removed, or changed status); 2: a side could not be read (A must
be a bundle; only B may be a spec); 130: the fresh run was interrupted.")]
pub struct Args {
    /// A bundle directory (or its results.parquet).
    a: PathBuf,
    /// A bundle directory (or its results.parquet), or a spec file (.yaml): its fresh run, in
    /// a temporary directory with an empty cache, is compared with A.
    b: PathBuf,
    /// Relative change under which a quantity without an interval (a model value) does not
    /// count as moved.
    #[arg(long, default_value_t = 0.0)]
    tolerance: f64,
    /// Print the whole diff as JSON.
    #[arg(long)]
    json: bool,
    /// List every change, not only the first 20 of each kind.
    #[arg(long)]
    all: bool,
    /// Worker threads for a fresh run of a spec (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
}

/// How many lines of each kind are listed without `--all`.
const LISTED: usize = 20;

/// Compares the two sides and prints the diff.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        return Err(InputError(format!(
            "--tolerance must be a finite number >= 0, got {}",
            crate::number::compact(args.tolerance)
        ))
        .into());
    }
    if is_spec(&args.a) {
        return Err(InputError(format!(
            "{} is a spec (YAML), but A must be a bundle: a bundle directory with a \
             results.parquet, or the results.parquet itself; a spec may be B, to compare A \
             with a fresh run of it (`runner diff reports/<name> {}`)",
            args.a.display(),
            args.a.display()
        ))
        .into());
    }
    let a = read_bundle(&args.a)?;
    let (b, _fresh) = if is_spec(&args.b) {
        let fresh = tempfile::Builder::new().prefix("runner-diff-").tempdir()?;
        let Some(rows) = fresh_run(&args.b, fresh.path(), args.jobs)? else {
            super::print_error(&format!(
                "the fresh run of {} was interrupted; nothing was compared\n",
                args.b.display()
            ));
            return Ok(Outcome::Interrupted);
        };
        (rows, Some(fresh))
    } else {
        (read_bundle(&args.b)?, None)
    };
    let diff = crate::store::diff::diff(&a, &b, args.tolerance);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&diff)?)?;
    } else {
        print(&diff, &args)?;
    }
    Ok(if diff.any_moved() { Outcome::SomeFailed } else { Outcome::Success })
}

/// Whether `path` names a spec rather than a bundle.
fn is_spec(path: &Path) -> bool {
    path.is_file() && matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// The rows of a bundle directory or a results.parquet file.
fn read_bundle(path: &Path) -> anyhow::Result<Vec<Row>> {
    let results = if path.is_dir() { path.join("results.parquet") } else { path.to_path_buf() };
    if !results.is_file() {
        return Err(InputError(format!(
            "{} is neither a bundle directory with a results.parquet, a results.parquet file, nor a spec (.yaml)",
            path.display()
        ))
        .into());
    }
    match crate::store::parquet::read(&results) {
        Ok((rows, _)) => Ok(rows),
        // Not Parquet (a text file, a truncated copy): say what was expected.
        Err(crate::store::parquet::StoreError::Format { message, .. }) => Err(InputError(format!(
            "{} is not a results.parquet that runner can read ({message}); `runner diff` \
             compares bundle directories (or their results.parquet), and B may be a spec (.yaml)",
            results.display()
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

/// Runs `spec` with an empty cache under `root` and returns its rows; `None` when the run was
/// interrupted (Ctrl-C, SIGTERM), which `runner diff` reports with exit code 130.
fn fresh_run(spec: &Path, root: &Path, jobs: Option<usize>) -> anyhow::Result<Option<Vec<Row>>> {
    super::print_error(&format!(
        "running {} afresh under {} (empty cache)\n",
        spec.display(),
        root.display()
    ));
    let quiet = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let outcome = super::run::run(super::run::Args::fresh(spec, root, jobs, quiet)?)?;
    if matches!(outcome, Outcome::Interrupted) {
        return Ok(None);
    }
    // The run wrote exactly one bundle under the fresh root.
    let reports = root.join("reports");
    let bundle = std::fs::read_dir(&reports)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.is_dir())
        .ok_or_else(|| InputError(format!("{}: the fresh run wrote no bundle", spec.display())))?;
    read_bundle(&bundle).map(Some)
}

/// The diff for people.
fn print(diff: &Diff, args: &Args) -> anyhow::Result<()> {
    let b_name = if is_spec(&args.b) {
        format!("a fresh run of {}", args.b.display())
    } else {
        args.b.display().to_string()
    };
    outln!("A: {}\nB: {b_name}", args.a.display())?;
    outln!(
        "points: {} in A, {} in B, {} matched ({} unchanged), {} added, {} removed",
        diff.points_a,
        diff.points_b,
        diff.matched,
        diff.unchanged,
        diff.added.len(),
        diff.removed.len()
    )?;
    for change in &diff.evaluators {
        outln!(
            "evaluator of {}: {} -> {}",
            change.method,
            change.a.join(", "),
            change.b.join(", ")
        )?;
    }
    let limit = if args.all { usize::MAX } else { LISTED };
    let section = |title: &str, lines: Vec<String>| -> anyhow::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        outln!("{title} ({}):", lines.len())?;
        for line in lines.iter().take(limit) {
            outln!("  {line}")?;
        }
        if lines.len() > limit {
            outln!("  ... and {} more (--all lists them)", lines.len() - limit)?;
        }
        Ok(())
    };
    section("added", diff.added.iter().map(|p| p.label()).collect())?;
    section("removed", diff.removed.iter().map(|p| p.label()).collect())?;
    section(
        "status changed",
        diff.status_changed
            .iter()
            .map(|s| format!("{}: {} -> {}", s.point.label(), s.a, s.b))
            .collect(),
    )?;
    section("moved beyond the 95% interval", diff.moved().map(change_line).collect())?;
    section(
        "changed within the interval (or the tolerance)",
        diff.changes.iter().filter(|c| !c.moved).map(change_line).collect(),
    )?;
    if !diff.other_columns.is_empty() {
        let columns: Vec<String> =
            diff.other_columns.iter().map(|(name, n)| format!("{name} ({n})")).collect();
        outln!("other columns that differ (points): {}", columns.join(", "))?;
    }
    outln!(
        "{}",
        if diff.any_moved() {
            "verdict: moved"
        } else {
            "verdict: nothing moved beyond its interval"
        }
    )?;
    Ok(())
}

/// One changed quantity: values with their intervals, delta, relative delta.
fn change_line(change: &Change) -> String {
    let value = |v: f64, ci: Option<f64>| match ci {
        Some(ci) => format!("{} ± {}", significant(v), significant(ci)),
        None => significant(v),
    };
    let relative = if change.relative.is_finite() {
        format!(" ({:+.2}%)", 100.0 * change.relative)
    } else {
        String::new()
    };
    format!(
        "{}: {} {} -> {}, delta {}{}{relative}",
        change.point.label(),
        change.quantity,
        value(change.a, change.a_ci95),
        value(change.b, change.b_ci95),
        if change.delta >= 0.0 { "+" } else { "" },
        significant(change.delta)
    )
}

/// `v` to five significant digits (all of a model value's change shows when it is small).
fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (4 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.decimals$}")
}
