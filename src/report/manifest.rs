//! `manifest.json`: provenance plus the SHA-256 of every file in the bundle, and its check.
//!
//! The manifest lists every regular file under the bundle directory except itself, with
//! paths relative to the bundle and `/`-separated, sorted. [`verify`] re-hashes the listed
//! files and reports missing, changed and unlisted files, so a bundle sent with a paper can
//! be checked with `runner verify` years later.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::ReportError;
use crate::store::provenance::Provenance;

/// The manifest's file name inside the bundle.
pub(crate) const MANIFEST: &str = "manifest.json";
/// Identifies the manifest format.
const FORMAT: &str = "runner-report-manifest/1";

/// The manifest document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// Manifest format identifier.
    pub(crate) format: String,
    /// Experiment name.
    pub(crate) experiment: String,
    /// Report title.
    pub(crate) title: String,
    /// Where the results came from.
    #[serde(flatten)]
    pub(crate) provenance: Provenance,
    /// Distinct seeds of the simulation replications, sorted.
    pub(crate) simulation_seeds: Vec<u64>,
    /// Every file of the bundle except the manifest.
    pub(crate) files: Vec<FileEntry>,
    /// Why the last render stopped early, when it did (the bundle then lacks what it did not
    /// write, and `runner verify` reports this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<String>,
}

/// One file of the bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    /// Path relative to the bundle directory, `/`-separated.
    pub(crate) path: String,
    /// SHA-256 of the file's bytes (hex).
    pub(crate) sha256: String,
    /// Size in bytes.
    pub(crate) bytes: u64,
}

/// Only the part of the manifest that [`verify`] needs (older or richer manifests still load).
#[derive(Deserialize)]
struct ManifestFiles {
    files: Vec<FileEntry>,
    #[serde(default)]
    failure: Option<String>,
}

/// Builds the manifest by hashing every file now in `bundle_dir`.
pub(crate) fn build(
    bundle_dir: &Path,
    experiment: &str,
    title: &str,
    provenance: &Provenance,
    simulation_seeds: Vec<u64>,
    failure: Option<String>,
) -> Result<Manifest, ReportError> {
    let mut files = Vec::new();
    for relative in list_files(bundle_dir)? {
        let path = bundle_dir.join(&relative);
        let (sha256, bytes) =
            hash_file(&path).map_err(|source| ReportError::Read { path, source })?;
        files.push(FileEntry { path: relative, sha256, bytes });
    }
    Ok(Manifest {
        format: FORMAT.to_owned(),
        experiment: experiment.to_owned(),
        title: title.to_owned(),
        provenance: provenance.clone(),
        simulation_seeds,
        files,
        failure,
    })
}

/// Checks a bundle against its manifest; returns the problems found (empty when intact).
pub(crate) fn verify(bundle_dir: &Path) -> Result<Vec<String>, ReportError> {
    let manifest = read(bundle_dir)?;
    let mut problems = Vec::new();
    if let Some(failure) = &manifest.failure {
        problems.push(format!("the last render failed, so the bundle is incomplete: {failure}"));
    }
    problems.extend(check_listed(bundle_dir, manifest.files.iter()));
    for relative in list_files(bundle_dir)? {
        if !manifest.files.iter().any(|entry| entry.path == relative) {
            problems.push(format!("not listed in the manifest: {relative}"));
        }
    }
    Ok(problems)
}

/// The listed files a render does not write (its inputs) that are missing or changed; empty
/// when there is no manifest yet.
pub(crate) fn check_inputs(bundle_dir: &Path) -> Result<Vec<String>, ReportError> {
    if !bundle_dir.join(MANIFEST).is_file() {
        return Ok(Vec::new());
    }
    let manifest = read(bundle_dir)?;
    let rendered = |path: &str| {
        path.starts_with("figures/")
            || path.starts_with("tables/")
            || path == "index.html"
            || path == "report.md"
    };
    Ok(check_listed(bundle_dir, manifest.files.iter().filter(|entry| !rendered(&entry.path))))
}

fn read(bundle_dir: &Path) -> Result<ManifestFiles, ReportError> {
    let manifest_path = bundle_dir.join(MANIFEST);
    let text = fs::read_to_string(&manifest_path)
        .map_err(|source| ReportError::Read { path: manifest_path.clone(), source })?;
    serde_json::from_str(&text).map_err(|error| ReportError::Manifest {
        path: manifest_path.clone(),
        message: error.to_string(),
    })
}

/// Missing, changed or unreadable files among `entries`.
fn check_listed<'a>(
    bundle_dir: &Path,
    entries: impl Iterator<Item = &'a FileEntry>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for entry in entries {
        let Some(path) = safe_join(bundle_dir, &entry.path) else {
            problems.push(format!("unsafe path in manifest: {}", entry.path));
            continue;
        };
        match hash_file(&path) {
            Ok((sha256, _)) if sha256 == entry.sha256 => {}
            Ok(_) => problems
                .push(format!("changed: {} (SHA-256 differs from the manifest)", entry.path)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                problems.push(format!("missing: {}", entry.path));
            }
            Err(error) => problems.push(format!("unreadable: {} ({error})", entry.path)),
        }
    }
    problems
}

/// Relative, `/`-separated paths of the regular files under `dir`, except the manifest, sorted.
pub(crate) fn list_files(dir: &Path) -> Result<Vec<String>, ReportError> {
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    out.retain(|path| path != MANIFEST);
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), ReportError> {
    let read_error = |source| ReportError::Read { path: dir.to_path_buf(), source };
    for entry in fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let file_type = entry.file_type().map_err(read_error)?;
        if file_type.is_dir() {
            walk(&entry.path(), &relative, out)?;
        } else if file_type.is_file() {
            out.push(relative);
        }
    }
    Ok(())
}

fn hash_file(path: &Path) -> io::Result<(String, u64)> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let bytes = io::copy(&mut file, &mut hasher)?;
    Ok((hex(&hasher.finalize()), bytes))
}

/// Lower-case hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `dir/relative` when `relative` stays inside `dir` (no `..`, no absolute path).
fn safe_join(dir: &Path, relative: &str) -> Option<PathBuf> {
    let path = Path::new(relative);
    path.components()
        .all(|component| matches!(component, Component::Normal(_)))
        .then(|| dir.join(path))
}
