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
pub struct VerifyArgs {
    /// The bundle directory, e.g. reports/quickstart.
    bundle: PathBuf,
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
    let (rows, metadata) = crate::store::parquet::read(&results)?;
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
    let input = crate::report::ReportInput {
        experiment,
        title,
        description: metadata.get("description").map(String::as_str),
        spec: &spec,
        rows: &rows,
        provenance: &provenance,
        template_dir: template_dir.as_deref(),
    };
    let written = crate::report::render(&args.bundle, &input)?;
    outln!(
        "{}: re-rendered {} files from {} rows",
        args.bundle.display(),
        written.len(),
        rows.len()
    )?;
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

/// Re-hashes every file listed in the bundle's manifest.
pub fn run_verify(args: VerifyArgs) -> anyhow::Result<Outcome> {
    if !args.bundle.join("manifest.json").is_file() {
        return Err(InputError(format!(
            "{} has no manifest.json; is it a report bundle (reports/<name>)?",
            args.bundle.display()
        ))
        .into());
    }
    let problems = crate::report::verify(&args.bundle)?;
    if problems.is_empty() {
        outln!("{}: every file matches manifest.json", args.bundle.display())?;
        return Ok(Outcome::Success);
    }
    for problem in &problems {
        super::print_error(&format!("{}: {problem}\n", args.bundle.display()));
    }
    Ok(Outcome::SomeFailed)
}
