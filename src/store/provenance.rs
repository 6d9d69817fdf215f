//! Where a result came from: the facts stamped into Parquet metadata and the report manifest.

use serde::{Deserialize, Serialize};

/// Provenance of one run of one spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// `runner` version (Cargo package version).
    pub runner_version: String,
    /// Model code version (part of every model task's cache key).
    pub model_version: String,
    /// Simulator version (part of every simulation task's cache key).
    pub sim_version: String,
    /// Path of the spec file as given on the command line.
    pub spec_path: String,
    /// SHA-256 of the spec file's bytes (hex).
    pub spec_sha256: String,
    /// Git commit of the repository holding the spec, if it is in one.
    pub git_commit: Option<String>,
    /// Whether that repository had uncommitted changes, outside the `reports/` directory the
    /// run wrote its bundle in and the `.runner/` cache beside it (so committing bundles does
    /// not make their re-run dirty).
    pub git_dirty: Option<bool>,
    /// The command line that produced the results.
    pub command_line: Vec<String>,
    /// Host name of the machine that ran the command.
    pub host: String,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// End of the run, RFC 3339 UTC.
    pub finished_at: String,
    /// The spec's seed; every task seed derives from it.
    pub seed: u64,
}
