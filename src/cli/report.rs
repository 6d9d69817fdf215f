//! `runner report` and `runner verify`: re-render a bundle from its Parquet file; check its hashes.
//!
//! `runner report` needs nothing but the bundle: the title, the report section of the spec and
//! the provenance travel in the Parquet file's key-value metadata.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{InputError, Outcome};
use crate::spec::report::ReportSpec;
use crate::store::provenance::Provenance;

/// Arguments of `runner report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The bundle directory, e.g. reports/quickstart.
    bundle: PathBuf,
}

/// Arguments of `runner verify`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  runner verify reports/quickstart                 every file matches manifest.json
  runner verify reports/nbc_torus --check 2        and 2 tasks per kind re-evaluate bit for bit
  runner verify reports/*/ --check 1 --seed 7      every bundle, another sample")]
pub struct VerifyArgs {
    /// The bundle directories, e.g. reports/quickstart.
    #[arg(required = true)]
    bundles: Vec<PathBuf>,
    /// Also re-evaluate this many tasks per kind (1 or more; Simulate, Solve, Curve,
    /// Aggregate), drawn in a seeded order, and compare their rows bit for bit with
    /// results.parquet (every column but wall_seconds). Fails, saying how to regenerate the bundle, when the
    /// evaluator versions or the spec changed since it was produced, or a row differs; and
    /// when the sample holds no task it can re-run (external methods are not re-run).
    #[arg(long, value_name = "N")]
    check: Option<usize>,
    /// Seed of the --check sample.
    #[arg(long, default_value_t = 0, requires = "check")]
    seed: u64,
    /// --check passes over simulations that took longer than this when the bundle was
    /// produced (their wall_seconds), to stay cheap (a positive, finite number).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, requires = "check")]
    max_task_seconds: f64,
    /// The spec to check against (default: the path the bundle was run with, from here).
    #[arg(long, value_name = "FILE", requires = "check")]
    spec: Option<PathBuf>,
}

/// Re-renders the bundle from `results.parquet` and `spec.yaml` without recomputing.
pub fn run_report(args: ReportArgs) -> anyhow::Result<Outcome> {
    let results = args.bundle.join("results.parquet");
    match std::fs::symlink_metadata(&results) {
        Ok(metadata) if metadata.is_file() => {}
        Ok(_) => {
            return Err(InputError(format!(
                "{} is not a regular file (a symbolic link, FIFO, device or directory), so it is not the results file runner wrote; re-run its spec with `runner run`",
                results.display()
            ))
            .into());
        }
        Err(_) => {
            return Err(InputError(format!(
                "{} does not exist; run the spec first (`runner run SPEC`)",
                results.display()
            ))
            .into());
        }
    }
    // A `runner run` of the same experiment under the same root rewrites this bundle: wait
    // for it, as a second run would, instead of rendering into a half-written bundle.
    let _lock = run_lock(&args.bundle)?;
    crate::report::check_bundle(&args.bundle)?;
    let problems = crate::report::check_inputs(&args.bundle)?;
    if !problems.is_empty() {
        return Err(InputError(format!(
            "{}: not re-rendered, because manifest.json lists files that are gone or changed ({}); the bundle is incomplete: re-run its spec with `runner run` to rebuild it",
            args.bundle.display(),
            problems.join("; ")
        ))
        .into());
    }
    let metadata = crate::store::parquet::read_metadata(&results)?;
    let provenance: Provenance = metadata
        .get("provenance")
        .and_then(|p| serde_json::from_str(p).ok())
        .ok_or_else(|| InputError(format!("{} carries no runner provenance", results.display())))?;
    let missing = |key: &str| {
        InputError(format!("{} has no `{key}` metadata; re-run its spec", results.display()))
    };
    let experiment = metadata.get("experiment").ok_or_else(|| missing("experiment"))?;
    let title = metadata.get("title").ok_or_else(|| missing("title"))?;
    let spec: ReportSpec = metadata
        .get("report_spec")
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or_else(|| missing("report_spec"))?;
    let template_dir = template_dir(&args.bundle, &metadata)?;
    // The rows are read a batch at a time into what the report keeps of them, never all.
    let mut collector = crate::report::Collector::new(&spec);
    let rows = crate::store::parquet::read_each(&results, |row| collector.push(&row))?;
    let input = crate::report::ReportInput {
        experiment,
        title,
        description: metadata.get("description").map(String::as_str),
        spec: &spec,
        provenance: &provenance,
        template_dir: template_dir.as_deref(),
    };
    let written = crate::report::render_collected(&args.bundle, &input, &collector.finish())?;
    outln!("{}: re-rendered {} files from {rows} rows", args.bundle.display(), written.len())?;
    Ok(Outcome::Success)
}

/// The run lock of the bundle's experiment, when the bundle sits where `runner run` writes it
/// (`ROOT/reports/NAME`) and `ROOT/.runner/locks/` exists (a bundle copied elsewhere has no
/// run writing it, and none is created). Waits, saying so, while a run holds it.
fn run_lock(bundle: &Path) -> anyhow::Result<Option<crate::exec::lock::RunLock>> {
    let Ok(bundle) = bundle.canonicalize() else { return Ok(None) };
    let (Some(name), Some(reports)) = (bundle.file_name(), bundle.parent()) else {
        return Ok(None);
    };
    let (Some(experiment), Some(root)) = (name.to_str(), reports.parent()) else {
        return Ok(None);
    };
    let locks = root.join(".runner").join("locks");
    if reports.file_name() != Some(std::ffi::OsStr::new("reports")) || !locks.is_dir() {
        return Ok(None);
    }
    // Nothing is in flight while waiting, so Ctrl-C may simply end the process.
    let never = std::sync::atomic::AtomicBool::new(false);
    match crate::exec::lock::acquire(&locks, experiment, false, &never) {
        Ok(lock) => Ok(Some(lock)),
        Err(error) => Err(anyhow::Error::new(error)
            .context(format!("cannot take the run lock in {}", locks.display()))),
    }
}

/// The templates the bundle was rendered with: its own copy in `templates/`, or, for a bundle
/// written before bundles carried one, the directory results.parquet names (resolved from the
/// current directory, as it was written), which must then exist.
fn template_dir(
    bundle: &Path,
    metadata: &HashMap<String, String>,
) -> Result<Option<PathBuf>, InputError> {
    if let Some(name) = metadata.get("bundle_template_dir") {
        if name != crate::report::TEMPLATES {
            return Err(InputError(format!(
                "{}: results.parquet names the template directory `{name}` inside the bundle; only `{}` is allowed; re-run its spec",
                bundle.display(),
                crate::report::TEMPLATES
            )));
        }
        return Ok(Some(bundle.join(name)));
    }
    let Some(dir) = metadata.get("template_dir") else { return Ok(None) };
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        return Err(InputError(format!(
            "{}: rendered with the templates in `{}`, which is not a directory from here; run `runner report` from the directory `runner run` ran in, or re-run the spec (bundles written now carry a copy of their templates)",
            bundle.display(),
            dir.display()
        )));
    }
    Ok(Some(dir))
}

/// Re-hashes every file listed in each bundle's manifest; with `--check`, re-evaluates a
/// sample of its tasks.
pub fn run_verify(args: VerifyArgs) -> anyhow::Result<Outcome> {
    if args.check == Some(0) {
        return Err(InputError(
            "--check 0 would re-evaluate no task; give the number of tasks per kind to \
             re-evaluate (1 or more), or leave --check out to check the hashes only"
                .into(),
        )
        .into());
    }
    if !(args.max_task_seconds.is_finite() && args.max_task_seconds > 0.0) {
        return Err(InputError(format!(
            "--max-task-seconds must be a positive, finite number of seconds, got {}",
            crate::number::compact(args.max_task_seconds)
        ))
        .into());
    }
    let mut outcome = Outcome::Success;
    for bundle in &args.bundles {
        if !verify_one(bundle)? {
            outcome = Outcome::SomeFailed;
            continue;
        }
        if let Some(per_kind) = args.check {
            let options = crate::exec::check::CheckOptions {
                per_kind,
                seed: args.seed,
                max_task_seconds: args.max_task_seconds,
            };
            if !check_one(bundle, args.spec.as_deref(), &options)? {
                outcome = Outcome::SomeFailed;
            }
        }
    }
    Ok(outcome)
}

/// `runner verify` of one bundle: whether every file matches its manifest.
fn verify_one(bundle: &Path) -> anyhow::Result<bool> {
    if !bundle.join("manifest.json").is_file() {
        return Err(InputError(format!(
            "{} has no manifest.json; is it a report bundle (reports/<name>)?",
            bundle.display()
        ))
        .into());
    }
    let problems = crate::report::verify(bundle)?;
    if problems.is_empty() {
        outln!("{}: every file matches manifest.json", bundle.display())?;
        return Ok(true);
    }
    for problem in &problems {
        super::print_error(&format!("{}: {problem}\n", bundle.display()));
    }
    Ok(false)
}

/// `runner verify --check` of one bundle: whether its sample reproduces.
fn check_one(
    bundle: &Path,
    spec: Option<&Path>,
    options: &crate::exec::check::CheckOptions,
) -> anyhow::Result<bool> {
    use crate::exec::check::{check_sample, stale};
    let (rows, metadata) = crate::store::parquet::read(&bundle.join("results.parquet"))?;
    let provenance: Provenance =
        metadata.get("provenance").and_then(|p| serde_json::from_str(p).ok()).ok_or_else(|| {
            InputError(format!("{}: results.parquet carries no provenance", bundle.display()))
        })?;
    let spec = spec.map_or_else(|| PathBuf::from(&provenance.spec_path), Path::to_path_buf);
    let regenerate = format!(
        "Regenerate the bundle: `runner run {spec}` (see what moves first with `runner diff {bundle} {spec}`), then commit {bundle}.",
        spec = spec.display(),
        bundle = bundle.display()
    );
    if !spec.is_file() {
        return Err(InputError(format!(
            "{}: its spec {} is not a file from here; run from the directory the bundle was produced in, or pass --spec",
            bundle.display(),
            spec.display()
        ))
        .into());
    }
    let (source, experiment) = crate::spec::load(&spec)?;
    if let Some(message) = stale(&provenance, &source.sha256, &regenerate) {
        super::print_error(&format!("{}: {message}\n", bundle.display()));
        return Ok(false);
    }
    let plan = crate::plan::build(&experiment, None);
    let report = check_sample(&experiment, &plan, &rows, options)
        .map_err(|error| InputError(format!("{}: {error}", bundle.display())))?;
    let counts: Vec<String> = report
        .checked
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{n} {}", kind.to_lowercase()))
        .collect();
    if counts.is_empty() {
        // A check of nothing proves nothing: say so rather than pass.
        super::print_error(&format!(
            "{}: --check re-evaluated no task: the bundle has no task the check can re-run \
             (external methods are not re-run, and simulations that took longer than \
             --max-task-seconds {} are passed over); its files match manifest.json, but no \
             result was re-checked\n",
            bundle.display(),
            crate::number::compact(options.max_task_seconds)
        ));
        return Ok(false);
    }
    if report.mismatches.is_empty() {
        outln!(
            "{}: re-evaluated {} tasks (seed {}): {} rows match results.parquet bit for bit",
            bundle.display(),
            counts.join(", "),
            options.seed,
            report.rows
        )?;
        return Ok(true);
    }
    for mismatch in &report.mismatches {
        super::print_error(&format!("{}: {mismatch}\n", bundle.display()));
    }
    super::print_error(&format!(
        "{}: {} re-evaluated results differ from results.parquet ({} rows compared). {regenerate}\n",
        bundle.display(),
        report.mismatches.len(),
        report.rows
    ));
    Ok(false)
}
