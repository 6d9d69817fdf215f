//! `runner run`: plan, execute (cached, parallel), gather into Parquet, render the report.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;

use super::{InputError, Outcome, load_specs, print_error};
use crate::exec::cache::{Cache, Output};
use crate::exec::executor::{Completion, ExecError, Executor, Job};
use crate::exec::{self, ExecOptions, TaskState};
use crate::plan::{self, Only};
use crate::spec::types::ExternalKind;
use crate::spec::{Experiment, SpecSource};
use crate::store::{self, provenance::Provenance};

/// Arguments of `runner run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Spec files to run.
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Recompute every task, ignoring the cache.
    #[arg(long)]
    force: bool,
    /// Run only one method; the bundle still shows the other method's cached results.
    #[arg(long, value_enum)]
    only: Option<Only>,
    /// Show what would run (counts per task kind, cached) and stop.
    #[arg(long)]
    dry_run: bool,
    /// No progress output.
    #[arg(short, long)]
    quiet: bool,
    /// Where `reports/` and `.runner/` live.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    #[command(flatten)]
    limits: super::LimitArgs,
    #[command(flatten)]
    cluster: super::cluster_args::ClusterArgs,
}

impl Args {
    /// A local run of `spec` under `root`, as `runner run SPEC --root ROOT` would do it (what
    /// `runner diff` compares a bundle with).
    pub(super) fn fresh(
        spec: &Path,
        root: &Path,
        jobs: Option<usize>,
        quiet: bool,
    ) -> anyhow::Result<Args> {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            args: Args,
        }
        let mut argv: Vec<std::ffi::OsString> = vec![
            "runner-run".into(),
            spec.into(),
            "--root".into(),
            root.into(),
            "--executor".into(),
            "local".into(),
        ];
        if let Some(jobs) = jobs {
            argv.extend(["-j".into(), jobs.to_string().into()]);
        }
        if quiet {
            argv.push("--quiet".into());
        }
        Ok(<Line as clap::Parser>::try_parse_from(argv)?.args)
    }
}

/// Runs each spec in turn.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let specs = load_specs(&args.specs, &args.limits)?;
    let jobs = super::worker_threads(args.jobs)?;
    for (index, (source, experiment)) in specs.iter().enumerate() {
        if let Some((first, _)) = specs[..index].iter().find(|(_, e)| e.name == experiment.name) {
            return Err(InputError(format!(
                "{} and {} both have `name: {}`, so the second would overwrite the first's reports/{}/; give each spec its own name",
                first.path.display(),
                source.path.display(),
                experiment.name,
                experiment.name
            ))
            .into());
        }
        // `--only` also keeps the external methods of that kind.
        let external = |kind| experiment.external.iter().any(|e| e.kind == kind);
        let missing = match args.only {
            Some(Only::Model) if experiment.model.is_none() && !external(ExternalKind::Model) => {
                Some("methods.model")
            }
            Some(Only::Simulation)
                if experiment.simulation.is_none() && !external(ExternalKind::Simulation) =>
            {
                Some("methods.simulation")
            }
            _ => None,
        };
        if let Some(section) = missing {
            return Err(InputError(format!(
                "{}: --only {} but the spec has no `{section}`; nothing would run",
                source.path.display(),
                if section == "methods.model" { "model" } else { "simulation" },
            ))
            .into());
        }
    }
    let local = ExecOptions { jobs, force: args.force, quiet: args.quiet };
    let executor = args.cluster.executor(&args.root, local)?;
    let root = match executor {
        Executor::Slurm(_) => std::path::absolute(&args.root)
            .with_context(|| format!("cannot resolve {}", args.root.display()))?,
        Executor::Local(_) => args.root.clone(),
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let interrupt = Arc::clone(&interrupt);
        let _ = ctrlc::set_handler(move || {
            if interrupt.swap(true, Ordering::SeqCst) {
                super::eprint_line("\nrunner: interrupted again; abandoning the tasks in flight");
                crate::exec::external::kill_running();
                std::process::exit(130);
            }
            super::eprint_line(&format!(
                "\nrunner: interrupted; finishing the tasks in flight that end within {} s (their \
                 results are kept), stopping the rest. Ctrl-C again to abandon them all",
                crate::exec::evaluate::GRACE.as_secs()
            ));
        });
    }
    let cache = Cache::new(root.join(".runner").join("cache"));
    let mut outcome = Outcome::Success;
    for (source, experiment) in &specs {
        let started = now_rfc3339();
        let plan = plan::build(experiment, args.only);
        if args.dry_run {
            super::plan::print_summary(experiment, &plan, &cache)?;
            continue;
        }
        let locks = args.root.join(".runner").join("locks");
        let _lock = match exec::lock::acquire(&locks, &experiment.name, args.quiet, &interrupt) {
            Ok(lock) => lock,
            Err(exec::lock::LockError::Interrupted) => {
                print_error(&format!(
                    "{}: interrupted while waiting for another run; nothing was run\n",
                    experiment.name
                ));
                return Ok(Outcome::Interrupted);
            }
            Err(exec::lock::LockError::Io(e)) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("cannot take the run lock in {}", locks.display())));
            }
        };
        let clock = Instant::now();
        let job = Job {
            source,
            experiment,
            plan: &plan,
            only: args.only,
            cache: &cache,
            root: &root,
            interrupt: &interrupt,
        };
        let mut summary = match executor.run(&job) {
            Ok(Completion::Finished(summary)) => summary,
            Ok(Completion::Detached { jobs, gather_job }) => {
                super::status::print_detached(
                    &experiment.name,
                    &source.path,
                    &jobs,
                    gather_job.as_deref(),
                    args.quiet,
                )?;
                continue;
            }
            Err(ExecError::Setup(message)) => return Err(InputError(message).into()),
            Err(error) => return Err(anyhow::Error::new(error).context(experiment.name.clone())),
        };
        if !summary.corrupt.is_empty() {
            super::eprint_line(&format!(
                "runner: warning: {}: {} corrupt cache entr{} ignored and recomputed; the first: {}",
                experiment.name,
                summary.corrupt.len(),
                if summary.corrupt.len() == 1 { "y" } else { "ies" },
                summary.corrupt[0]
            ));
        }
        // Nothing ran and every result came from the cache: when the bundle was made from
        // exactly these entries by this binary from this spec, and is intact, it stands as is.
        let fingerprint = (args.only.is_none() && summary.failed == 0 && !summary.interrupted)
            .then(|| bundle_fingerprint(source, experiment, &plan, &cache, &summary.states))
            .flatten();
        let bundle = args.root.join("reports").join(&experiment.name);
        if let Some(fingerprint) = &fingerprint
            && summary.executed == 0
            && summary.corrupt.is_empty()
            && bundle_is_current(&bundle, fingerprint)
        {
            if !args.quiet {
                super::eprint_line(&format!(
                    "{}: 0 tasks run, {} cached; {} is up to date (made from these cache \
                     entries by this runner), left as it is, in {:.2}s",
                    experiment.name,
                    summary.cached,
                    bundle.display(),
                    clock.elapsed().as_secs_f64()
                ));
            }
            continue;
        }
        let rows = match args.only {
            // The bundle shows every method: this run's results and the other method's cached
            // ones (a later `--only simulation` does not drop the model from the report).
            Some(_) => {
                let full = plan::build(experiment, None);
                let states = exec::with_cached_rest(&full, &plan, &summary.states, &cache);
                exec::gather(experiment, &full, &states)
            }
            None => exec::gather(experiment, &plan, &summary.states),
        };
        // The tasks' outputs are in the rows now; only a failure report reads them again (a
        // 1,000,000-point sweep holds a gigabyte of them).
        if summary.failed == 0 {
            summary.states = Vec::new();
        }
        if summary.interrupted {
            super::eprint_line(&format!(
                "runner: {}: interrupted after {} tasks ({} cached); run again to resume",
                experiment.name, summary.executed, summary.cached
            ));
            return Ok(Outcome::Interrupted);
        }
        let provenance = provenance(source, experiment, started, bundle.parent());
        write_bundle(&bundle, source, experiment, &rows, &provenance, fingerprint.as_deref())?;
        if !args.quiet {
            let corrupt = match summary.corrupt.len() {
                0 => String::new(),
                n => format!(
                    " ({n} corrupt cache entr{} recomputed)",
                    if n == 1 { "y" } else { "ies" }
                ),
            };
            super::eprint_line(&format!(
                "{}: {} tasks run{corrupt}, {} cached, {} failed, {} skipped in {:.2}s -> {}",
                experiment.name,
                summary.executed,
                summary.cached,
                summary.failed,
                summary.skipped,
                clock.elapsed().as_secs_f64(),
                bundle.join("index.html").display()
            ));
        }
        if summary.failed > 0 {
            print_failures(experiment, &plan, &summary.states);
            outcome = Outcome::SomeFailed;
        }
    }
    Ok(outcome)
}

/// Writes results.parquet and spec.yaml, then renders the report and manifest.
pub fn write_bundle(
    bundle: &Path,
    source: &SpecSource,
    experiment: &Experiment,
    rows: &[crate::store::row::Row],
    provenance: &Provenance,
    fingerprint: Option<&str>,
) -> anyhow::Result<()> {
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
    store::parquet::write(&bundle.join("results.parquet"), rows, &metadata)?;
    write_side_tables(bundle, experiment, rows)?;
    let resolved =
        serde_saphyr::to_string(experiment).context("cannot serialise the resolved spec")?;
    let text = format!(
        "# The spec as run, with every default resolved and every sweep expanded (a load list that\n# is exactly a `{{from, to, points}}` range is written as that range).\n# Source: {} (sha256 {})\n{resolved}",
        source.path.display(),
        source.sha256
    );
    write_atomic(&bundle.join("spec.yaml"), text.as_bytes())?;
    // The report reads the side tables from the bundle, as `runner report` does: it renders
    // the rows as `results.parquet` holds them, without the per-link and histogram data.
    let plain: std::borrow::Cow<'_, [crate::store::row::Row]> =
        if rows.iter().any(|r| r.link_loads.is_some() || r.histograms.is_some()) {
            rows.iter()
                .map(|r| crate::store::row::Row { link_loads: None, histograms: None, ..r.clone() })
                .collect()
        } else {
            std::borrow::Cow::Borrowed(rows)
        };
    let rows: &[crate::store::row::Row] = &plain;
    let input = crate::report::ReportInput {
        experiment: &experiment.name,
        title: &experiment.title,
        description: experiment.description.as_deref(),
        spec: &experiment.report,
        rows,
        provenance,
        template_dir: template_dir.as_deref(),
    };
    crate::report::render(bundle, &input).context("cannot render the report")?;
    Ok(())
}

/// The `results.parquet` metadata key of [`bundle_fingerprint`].
const FINGERPRINT: &str = "runner_bundle_inputs";

/// What a bundle is made of, when every compute task of `plan` is done from a cache entry: a
/// blake3 over this executable (path, size, modification time) and versions, the spec (path
/// and content hash) and every compute task's id, kind and recorded entry checksum. `None` when
/// a task is not done, an entry is missing, or the spec has its own templates (whose files
/// the hash does not cover): such a bundle is always rendered.
fn bundle_fingerprint(
    source: &SpecSource,
    experiment: &Experiment,
    plan: &plan::Plan,
    cache: &Cache,
    states: &[TaskState],
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
    for node in plan.graph.node_indices() {
        let task = &plan.graph[node];
        if !task.kind.is_compute() {
            continue;
        }
        if !matches!(states[node.index()], TaskState::Done(_)) {
            return None;
        }
        let checksum = cache.recorded_checksum(&task.id)?;
        hasher.update(format!("{} {} {checksum}\n", task.id, task.kind.name()).as_bytes());
    }
    Some(hasher.finalize().to_hex().to_string())
}

/// Whether the bundle at `bundle` was made with `fingerprint` and is intact (`runner verify`
/// finds nothing wrong).
fn bundle_is_current(bundle: &Path, fingerprint: &str) -> bool {
    let recorded = store::parquet::read_metadata(&bundle.join("results.parquet"))
        .ok()
        .and_then(|metadata| metadata.get(FINGERPRINT).cloned());
    recorded.as_deref() == Some(fingerprint)
        && crate::report::verify(bundle).is_ok_and(|problems| problems.is_empty())
}

/// Writes the side tables `links.parquet` and `histograms.parquet` when some row carries their
/// data, and removes a previous run's table that this run has no data for (so the bundle never
/// shows stale links).
fn write_side_tables(
    bundle: &Path,
    experiment: &Experiment,
    rows: &[crate::store::row::Row],
) -> anyhow::Result<()> {
    let scenarios: Vec<&crate::scenario::Scenario> =
        experiment.scenarios.iter().map(|point| &point.scenario).collect();
    let links = store::links::link_rows(rows, &scenarios)
        .map_err(|e| anyhow::anyhow!("cannot list the link loads: {e}"))?;
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
fn remove_if_regular(path: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
    }
    Ok(())
}

/// Writes a file atomically (see [`crate::files::write_atomic`]), creating its directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::files::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
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
fn provenance(
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

fn print_failures(experiment: &Experiment, plan: &plan::Plan, states: &[TaskState]) {
    super::eprint_line(&format!("\n{}: failed tasks", experiment.name));
    super::eprint_line(&format!("  {:<10} {:<14} {:<50} error", "kind", "task", "scenario"));
    let mut shown = 0;
    for node in plan.graph.node_indices() {
        if let TaskState::Failed(error) = &states[node.index()] {
            let task = &plan.graph[node];
            let label = task.scenario.map(|s| experiment.scenarios[s].label.as_str()).unwrap_or("");
            super::eprint_line(&format!(
                "  {:<10} {:<14} {:<50} {}",
                task.kind.name(),
                &task.id[..12],
                label,
                error
            ));
            shown += 1;
            if shown == 20 {
                super::eprint_line("  ... (the error column of results.parquet lists them all)");
                return;
            }
        }
    }
    // The failed points of Solve batches that ran (the batch itself is done).
    for node in plan.graph.node_indices() {
        let TaskState::Done(Output::Points(points)) = &states[node.index()] else { continue };
        let task = &plan.graph[node];
        let label = task.scenario.map(|s| experiment.scenarios[s].label.as_str()).unwrap_or("");
        for point in points.iter().filter(|point| point.failed()) {
            super::eprint_line(&format!(
                "  {:<10} {:<14} {:<50} {}",
                "Solve point",
                &task.id[..12],
                label,
                point.error.as_deref().unwrap_or("")
            ));
            shown += 1;
            if shown == 20 {
                super::eprint_line("  ... (the error column of results.parquet lists them all)");
                return;
            }
        }
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
