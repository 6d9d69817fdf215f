//! A run's report bundle, `reports/<name>/`: `results.parquet` with its provenance, the side
//! tables, `spec.yaml`, then the rendered report and its manifest ([`write_bundle`]).
//!
//! A bundle records a fingerprint of what it was made of ([`bundle_fingerprint`]), so a run
//! that executed nothing can leave an intact bundle as it is ([`bundle_is_current`]); a run
//! that executed tasks and reproduced every number of an intact bundle leaves it as it is too
//! ([`bundle_reproduces`]).
//! [`provenance`] says where a run's results came from (versions, spec, git state, host).

use std::path::Path;

use crate::exec::TaskState;
use crate::exec::cache::Cache;
use crate::exec::timeline::Phases;
use crate::plan;
use crate::report::ReportError;
use crate::spec::{Experiment, SpecSource};
use crate::store::parquet::StoreError;
use crate::store::row::Row;
use crate::store::{self, provenance::Provenance};

/// Why a bundle could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// A bundle directory is refused, or the templates cannot be copied.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// `results.parquet` or a side table cannot be written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The report section cannot be serialised into the metadata.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The link loads cannot be named (`store::links::link_rows`).
    #[error("cannot list the link loads: {0}")]
    Links(String),
    /// A previous run's side table cannot be removed.
    #[error("cannot remove {}", path.display())]
    Remove {
        /// The side table.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The resolved spec cannot be serialised for `spec.yaml`.
    #[error("cannot serialise the resolved spec")]
    Serialise(#[source] serde_saphyr::SerializeError),
    /// `spec.yaml` cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The report cannot be rendered.
    #[error("cannot render the report")]
    Render(#[source] ReportError),
}

/// Writes results.parquet and spec.yaml, then renders the report and manifest.
///
/// The rows are taken as they come (`exec::Gather` builds them as it goes): each goes into
/// `results.parquet`, a batch at a time (a second thread writes one batch while this one
/// builds the next, `store::parquet::write_rows`), and into what the report keeps of it
/// (`report::Collector`); the rows with link loads or histograms are kept for their side
/// tables. No more of the rows is held at once, so a 1,000,000-point sweep is written in the
/// memory of its figures, not of its 4 GB of rows.
pub fn write_bundle(
    bundle: &Path,
    source: &SpecSource,
    experiment: &Experiment,
    rows: impl IntoIterator<Item = Row>,
    provenance: &Provenance,
    fingerprint: Option<&str>,
    phases: &mut Phases,
) -> Result<(), BundleError> {
    // Refuse a symbolic-linked figures/ or tables/ before anything is written.
    crate::report::check_bundle(bundle)?;
    let spec_dir = source.path.parent().unwrap_or(Path::new("."));
    let template_source = experiment.report.template_dir.as_ref().map(|d| spec_dir.join(&d.value));
    // The bundle carries a copy of its templates, so it re-renders the same from anywhere.
    let template_dir = crate::report::copy_templates(bundle, template_source.as_deref())?;
    let mut metadata = parquet_metadata(provenance);
    metadata.push(("experiment".into(), experiment.name.clone()));
    metadata.push(("title".into(), experiment.title.clone()));
    if let Some(description) = &experiment.description {
        metadata.push(("description".into(), description.clone()));
    }
    metadata.push(("report_spec".into(), serde_json::to_string(&experiment.report)?));
    if template_dir.is_some() {
        metadata.push(("bundle_template_dir".into(), crate::report::TEMPLATES.into()));
    }
    if let Some(fingerprint) = fingerprint {
        metadata.push((FINGERPRINT.into(), fingerprint.into()));
    }
    let mut collector = crate::report::Collector::new(&experiment.report);
    let mut side_rows = Vec::new();
    let rows = rows.into_iter().inspect(|row| {
        collector.push(row);
        if row.link_loads.is_some() || row.histograms.is_some() {
            side_rows.push(row.clone());
        }
    });
    phases.time("results.parquet", || {
        store::parquet::write_rows(&bundle.join("results.parquet"), rows, &metadata)
    })?;
    let collected = collector.finish();
    phases.time("side tables", || write_side_tables(bundle, experiment, &side_rows))?;
    drop(side_rows);
    phases.time("spec.yaml", || {
        let resolved = serde_saphyr::to_string(experiment).map_err(BundleError::Serialise)?;
        let text = format!(
            "# The spec as run, with every default resolved and every sweep expanded (a load list that\n# is exactly a `{{from, to, points}}` range is written as that range).\n# Source: {} (sha256 {})\n{resolved}",
            source.path.display(),
            source.sha256
        );
        let path = bundle.join("spec.yaml");
        crate::files::write_atomic(&path, text.as_bytes())
            .map_err(|source| BundleError::Write { path, source })
    })?;
    // The report reads the side tables from the bundle, as `runner report` does: it renders
    // the rows as `results.parquet` holds them, without the per-link and histogram data
    // (`report::Collector` leaves them out).
    let input = crate::report::ReportInput {
        experiment: &experiment.name,
        title: &experiment.title,
        description: experiment.description.as_deref(),
        spec: &experiment.report,
        provenance,
        template_dir: template_dir.as_deref(),
    };
    phases
        .time("report", || crate::report::render_collected(bundle, &input, &collected))
        .map_err(BundleError::Render)?;
    Ok(())
}

/// The `results.parquet` metadata key of [`bundle_fingerprint`].
const FINGERPRINT: &str = "runner_bundle_inputs";

/// What a bundle is made of, when every compute task of `plan` is done and has a cache entry
/// ([`cached_fingerprint`]); `None` when a task is not done.
pub fn bundle_fingerprint(
    source: &SpecSource,
    experiment: &Experiment,
    plan: &plan::Plan,
    cache: &Cache,
    states: &[TaskState],
) -> Option<String> {
    let done = plan
        .graph
        .node_indices()
        .filter(|&node| plan.graph[node].kind.is_compute())
        .all(|node| matches!(states[node.index()], TaskState::Done(_)));
    done.then(|| cached_fingerprint(source, experiment, plan, cache)).flatten()
}

/// What a bundle is made of, read from the cache before anything runs: a blake3 over this
/// executable (path, size, modification time) and versions, the spec (path and content hash)
/// and every compute task's id, kind and entry checksum. `None` when an entry is missing or
/// not whole (`Cache::whole_checksum`), or the spec has its own templates (whose files the
/// hash does not cover): such a bundle is always rendered. Hashing the entries, not parsing
/// them, is what lets a re-run of a 1,000,000-point sweep whose bundle is current end in a
/// second.
pub fn cached_fingerprint(
    source: &SpecSource,
    experiment: &Experiment,
    plan: &plan::Plan,
    cache: &Cache,
) -> Option<String> {
    if experiment.report.template_dir.is_some() {
        return None;
    }
    let mut hasher = blake3::Hasher::new();
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    let head = format!(
        "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
        exe.display(),
        meta.len(),
        modified.as_nanos(),
        env!("CARGO_PKG_VERSION"),
        crate::model::VERSION,
        crate::sim::VERSION,
        source.path.display(),
        source.sha256,
        experiment.name
    );
    hasher.update(head.as_bytes());
    for task in plan.graph.node_weights().filter(|task| task.kind.is_compute()) {
        let checksum = cache.whole_checksum(&task.id, task.kind)?;
        hasher.update(format!("{} {} {checksum}\n", task.id, task.kind.name()).as_bytes());
    }
    Some(hasher.finalize().to_hex().to_string())
}

/// Whether the bundle at `bundle` was made with `fingerprint` and is intact (`runner verify`
/// finds nothing wrong).
pub fn bundle_is_current(bundle: &Path, fingerprint: &str) -> bool {
    let recorded = store::parquet::read_metadata(&bundle.join("results.parquet"))
        .ok()
        .and_then(|metadata| metadata.get(FINGERPRINT).cloned());
    recorded.as_deref() == Some(fingerprint)
        && crate::report::verify(bundle).is_ok_and(|problems| problems.is_empty())
}

/// How many rows a bundle already holds, number for number, when it holds exactly `rows`: it
/// is intact (`runner verify` finds nothing wrong), it was made from the same spec (the same
/// SHA-256) by the same model and simulator versions, and its results equal `rows` in every
/// column but `wall_seconds` (how long a task took, which no re-run reproduces). A re-run that
/// moves no number then leaves the bundle's bytes as they are, so re-running a committed spec
/// leaves `git status` clean. `None` when anything differs: the bundle is written anew.
pub fn bundle_reproduces(
    bundle: &Path,
    source: &SpecSource,
    rows: impl IntoIterator<Item = Row>,
) -> Option<usize> {
    let results = bundle.join("results.parquet");
    let metadata = store::parquet::read_metadata(&results).ok()?;
    let same = |key: &str, value: &str| metadata.get(key).map(String::as_str) == Some(value);
    if !(same("spec_sha256", &source.sha256)
        && same("model_version", crate::model::VERSION)
        && same("sim_version", crate::sim::VERSION))
    {
        return None;
    }
    // The side tables' data is not a column of `results.parquet`: it is compared through the
    // rows it comes with (the same simulation, bit for bit, gives the same counts).
    let mut count = 0;
    let counted = rows.into_iter().inspect(|_| count += 1);
    let equal = store::parquet::holds_rows(&results, counted, &["wall_seconds"]).ok()?;
    (equal && crate::report::verify(bundle).is_ok_and(|problems| problems.is_empty()))
        .then_some(count)
}

/// Writes the side tables `links.parquet` and `histograms.parquet` when some row carries their
/// data, and removes a previous run's table that this run has no data for (so the bundle never
/// shows stale links).
fn write_side_tables(
    bundle: &Path,
    experiment: &Experiment,
    rows: &[Row],
) -> Result<(), BundleError> {
    let scenarios: Vec<&crate::scenario::Scenario> =
        experiment.scenarios.iter().map(|point| &point.scenario).collect();
    let links = store::links::link_rows(rows, &scenarios).map_err(BundleError::Links)?;
    let histograms = store::histograms::histogram_rows(rows);
    let path = bundle.join(store::links::FILE);
    if links.is_empty() {
        remove_if_regular(&path)?;
    } else {
        store::links::write(&path, &links)?;
    }
    let path = bundle.join(store::histograms::FILE);
    if histograms.is_empty() {
        remove_if_regular(&path)?;
    } else {
        store::histograms::write(&path, &histograms)?;
    }
    Ok(())
}

/// Removes `path` when it is a regular file (a symbolic link in its place is left alone).
fn remove_if_regular(path: &Path) -> Result<(), BundleError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(path)
            .map_err(|source| BundleError::Remove { path: path.to_path_buf(), source })?;
    }
    Ok(())
}

/// The key-value metadata stamped into results.parquet.
pub fn parquet_metadata(p: &Provenance) -> Vec<(String, String)> {
    vec![
        ("runner_version".into(), p.runner_version.clone()),
        ("model_version".into(), p.model_version.clone()),
        ("sim_version".into(), p.sim_version.clone()),
        ("spec_path".into(), p.spec_path.clone()),
        ("spec_sha256".into(), p.spec_sha256.clone()),
        ("git_commit".into(), p.git_commit.clone().unwrap_or_default()),
        ("git_dirty".into(), p.git_dirty.map(|d| d.to_string()).unwrap_or_default()),
        ("created_at".into(), p.finished_at.clone()),
        ("seed".into(), p.seed.to_string()),
        ("provenance".into(), serde_json::to_string(p).unwrap_or_default()),
    ]
}

/// Where a run's results came from. `reports` is the directory its bundle is written in:
/// changes there (the bundles themselves, committed or not) and in the cache beside it
/// (`.runner/`) are the runs' own output and do not count as uncommitted.
pub fn provenance(
    source: &SpecSource,
    experiment: &Experiment,
    started_at: String,
    reports: Option<&Path>,
) -> Provenance {
    let dir = source.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let git = |args: &[&str]| -> Option<String> {
        let output =
            std::process::Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let git_commit = git(&["rev-parse", "HEAD"]);
    let own_output: Vec<String> = reports
        .into_iter()
        .flat_map(|reports| [reports.to_path_buf(), reports.with_file_name(".runner")])
        .filter_map(|dir| dir.canonicalize().ok())
        .map(|dir| format!(":(exclude){}", dir.display()))
        .collect();
    let status = || {
        let mut args = vec!["status", "--porcelain", "--", ":/"];
        args.extend(own_output.iter().map(String::as_str));
        // A directory outside the repository is not a pathspec git accepts: plain status.
        git(&args).or_else(|| git(&["status", "--porcelain"]))
    };
    let git_dirty = git_commit.as_ref().and_then(|_| status()).map(|s| !s.is_empty());
    Provenance {
        runner_version: env!("CARGO_PKG_VERSION").into(),
        model_version: crate::model::VERSION.into(),
        sim_version: crate::sim::VERSION.into(),
        spec_path: source.path.display().to_string(),
        spec_sha256: source.sha256.clone(),
        git_commit,
        git_dirty,
        command_line: std::env::args().collect(),
        host: std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_string())
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_else(|_| "unknown".into()),
        started_at,
        finished_at: now_rfc3339(),
        seed: experiment.seed,
    }
}

/// The current UTC time as RFC 3339 (`2026-11-23T09:41:07Z`).
pub fn now_rfc3339() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (seconds / 86_400) as i64;
    let rem = seconds % 86_400;
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}
