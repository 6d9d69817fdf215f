//! `manifest.json`: provenance plus the SHA-256 of every file in the bundle, and its check.
//!
//! The manifest lists the bundle's inputs (`results.parquet`, `spec.yaml`, the copied
//! templates) and every file the last render wrote, with paths relative to the bundle and
//! `/`-separated, sorted; never `runner`'s temporary files nor a file someone else put there.
//! [`verify`] re-hashes the listed files and reports missing, changed and unlisted files, and
//! anything that is not a regular file (a symbolic link is reported, never followed), so a
//! bundle sent with a paper can be checked with `runner verify` years later. Every listed file
//! is opened as a regular file only ([`crate::files::open_regular`]): a FIFO or a link to
//! `/dev/zero` in its place is reported at once instead of hanging the check.

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

/// The bundle's inputs: what a render reads and does not write (the two side tables only when
/// the run measured what they hold).
pub(crate) const INPUTS: [&str; 4] =
    ["results.parquet", "spec.yaml", "links.parquet", "histograms.parquet"];

/// The largest `manifest.json` read (a manifest of a few hundred files is a few tens of KB).
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// Whether the listed `path` is one a render writes (a page, a figure or a table), as opposed
/// to an input.
pub(crate) fn is_rendered(path: &str) -> bool {
    path.starts_with("figures/")
        || path.starts_with("tables/")
        || path == "index.html"
        || path == "report.md"
}

/// The files the bundle's current manifest lists; empty when there is none or it cannot be
/// read (nothing is then taken for a file of the previous render).
pub(crate) fn previous_files(bundle_dir: &Path) -> Vec<String> {
    read(bundle_dir)
        .map(|manifest| manifest.files.into_iter().map(|entry| entry.path).collect())
        .unwrap_or_default()
}

/// The inputs present as regular files (not symbolic links): `results.parquet`, `spec.yaml`
/// and, when the render reads its templates from the bundle's `templates/`, those.
pub(crate) fn inputs(bundle_dir: &Path, template_dir: Option<&Path>) -> Vec<String> {
    let regular = |relative: &str| {
        fs::symlink_metadata(bundle_dir.join(relative)).is_ok_and(|metadata| metadata.is_file())
    };
    let mut files: Vec<String> =
        INPUTS.iter().filter(|name| regular(name)).map(|name| (*name).to_owned()).collect();
    let templates = bundle_dir.join(super::TEMPLATES);
    if template_dir == Some(templates.as_path())
        && let Ok(entries) = fs::read_dir(&templates)
    {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{}/{name}", super::TEMPLATES);
            if !crate::files::is_temporary(&name) && regular(&relative) {
                files.push(relative);
            }
        }
    }
    files
}

/// `path` relative to `bundle_dir`, `/`-separated, when it is inside it.
pub(crate) fn relative(bundle_dir: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(bundle_dir).ok()?;
    let parts: Vec<String> = relative
        .components()
        .map(|component| match component {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Builds the manifest of `files` (relative paths), hashing each.
pub(crate) fn build(
    bundle_dir: &Path,
    files: &[String],
    experiment: &str,
    title: &str,
    provenance: &Provenance,
    simulation_seeds: Vec<u64>,
    failure: Option<String>,
) -> Result<Manifest, ReportError> {
    let mut entries = Vec::new();
    for relative in files {
        let path = bundle_dir.join(relative);
        let (sha256, bytes) =
            hash_file(&path).map_err(|source| ReportError::Read { path, source })?;
        entries.push(FileEntry { path: relative.clone(), sha256, bytes });
    }
    Ok(Manifest {
        format: FORMAT.to_owned(),
        experiment: experiment.to_owned(),
        title: super::tables::sanitize(title.to_owned()),
        provenance: provenance.clone(),
        simulation_seeds,
        files: entries,
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
    let listed = |relative: &str| manifest.files.iter().any(|entry| entry.path == relative);
    for (relative, kind) in list_entries(bundle_dir)? {
        if listed(&relative) {
            continue;
        }
        let name = relative.rsplit('/').next().unwrap_or(&relative);
        match kind {
            EntryKind::Regular if crate::files::is_temporary(name) => problems.push(format!(
                "not listed in the manifest: {relative} (a temporary file left by an interrupted write; the next `runner report` removes it)"
            )),
            EntryKind::Regular => problems.push(format!("not listed in the manifest: {relative}")),
            EntryKind::Other(what) => problems.push(format!(
                "not a regular file: {relative} ({what}); a bundle holds only the files runner wrote"
            )),
        }
    }
    Ok(problems)
}

/// The listed files a render does not write (its inputs) that are missing or changed; empty
/// when there is no manifest yet.
pub(crate) fn check_inputs(bundle_dir: &Path) -> Result<Vec<String>, ReportError> {
    if fs::symlink_metadata(bundle_dir.join(MANIFEST)).is_err() {
        return Ok(Vec::new());
    }
    let manifest = read(bundle_dir)?;
    Ok(check_listed(bundle_dir, manifest.files.iter().filter(|entry| !is_rendered(&entry.path))))
}

fn read(bundle_dir: &Path) -> Result<ManifestFiles, ReportError> {
    let manifest_path = bundle_dir.join(MANIFEST);
    let bytes = crate::files::read_regular(&manifest_path, MAX_MANIFEST_BYTES)
        .map_err(|source| ReportError::Read { path: manifest_path.clone(), source })?;
    serde_json::from_slice(&bytes).map_err(|error| ReportError::Manifest {
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
            Err(error) if error.kind() == io::ErrorKind::InvalidInput => {
                problems.push(format!("not a regular file: {} ({error})", entry.path));
            }
            Err(error) => problems.push(format!("unreadable: {} ({error})", entry.path)),
        }
    }
    problems
}

/// What an entry of the bundle directory is.
pub(crate) enum EntryKind {
    /// A regular file.
    Regular,
    /// A symbolic link, FIFO, device or socket, described in words.
    Other(String),
}

/// Relative, `/`-separated paths of everything under `dir` but directories and the manifest,
/// sorted, with what each is. Symbolic links are listed, never followed.
pub(crate) fn list_entries(dir: &Path) -> Result<Vec<(String, EntryKind)>, ReportError> {
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    out.retain(|(path, _)| path != MANIFEST);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, EntryKind)>) -> Result<(), ReportError> {
    let read_error = |source| ReportError::Read { path: dir.to_path_buf(), source };
    for entry in fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let file_type = entry.file_type().map_err(read_error)?;
        if file_type.is_dir() {
            walk(&entry.path(), &relative, out)?;
        } else if file_type.is_file() {
            out.push((relative, EntryKind::Regular));
        } else {
            let what = fs::symlink_metadata(entry.path())
                .map(|metadata| describe(&entry.path(), &metadata))
                .unwrap_or_else(|_| "a special file".to_owned());
            out.push((relative, EntryKind::Other(what)));
        }
    }
    Ok(())
}

/// A non-regular file in words: "a symbolic link to `/etc/passwd`", "a FIFO".
fn describe(path: &Path, metadata: &fs::Metadata) -> String {
    if metadata.file_type().is_symlink() {
        return match fs::read_link(path) {
            Ok(target) => format!("a symbolic link to `{}`", target.display()),
            Err(_) => "a symbolic link".to_owned(),
        };
    }
    crate::files::kind_in_words(metadata).to_owned()
}

/// SHA-256 and size of the regular file `path`: a symbolic link, FIFO or device in its place
/// is refused (as `InvalidInput`) without following or blocking.
fn hash_file(path: &Path) -> io::Result<(String, u64)> {
    let metadata = fs::symlink_metadata(path)?;
    if !metadata.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, describe(path, &metadata)));
    }
    let mut file = crate::files::open_regular(path)?;
    let mut hasher = Sha256::new();
    let bytes = io::copy(&mut file, &mut hasher)?;
    Ok((hex(&hasher.finalize()), bytes))
}

/// Lower-case hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `dir/relative` when `relative` stays inside `dir` (no `..`, no absolute path).
pub(crate) fn safe_join(dir: &Path, relative: &str) -> Option<PathBuf> {
    let path = Path::new(relative);
    path.components()
        .all(|component| matches!(component, Component::Normal(_)))
        .then(|| dir.join(path))
}
