//! The submission record under `.runner/slurm/<experiment>/`: what was submitted, so a later
//! `runner run` attaches to queued work instead of submitting it twice, and `runner status` can
//! report on it.
//!
//! Layout (all on the shared filesystem, read by the workers):
//!
//! ```text
//! submission.json        spec hash, evaluator versions, rounds of array jobs
//! spec.yaml              the spec as submitted (workers plan from this copy)
//! round-<r>/job.sh       the batch script of round r
//! round-<r>/<i>.txt      task ids of batch i (one array element), one a line
//! failed/<task id>.json  a task whose evaluator returned an error (not retried)
//! refused.txt            a worker refused to run (evaluator versions differ)
//! profile.toml           the settings, for the dependent gather job of `--detach`
//! logs/                  Slurm output of each element (kept after the submission is over)
//! ```
//!
//! Failed tasks are recorded here, never in the cache, as locally. The record (all but `logs/`)
//! is removed when a run has gathered everything, so the next run starts afresh (and retries
//! failed tasks).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::files::write_atomic;

/// Version of the record format.
const FORMAT: u32 = 1;

/// One array job of a round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayJob {
    /// Slurm job id of the array.
    pub job_id: String,
    /// Batch index of element 0 (arrays are split at the site's `MaxArraySize`).
    pub offset: usize,
    /// Elements in the array.
    pub count: usize,
}

/// One `sbatch` round: the first submission or a retry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// Round number (0, 1, ...), naming `round-<number>/`.
    pub number: u32,
    /// Attempt of its tasks: 0 for the first submission, k for the k-th retry.
    pub attempt: u32,
    /// Batches (array elements) in the round.
    pub batches: usize,
    /// Its array jobs.
    pub arrays: Vec<ArrayJob>,
}

/// What was submitted for one experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    /// Record format.
    pub format: u32,
    /// The experiment's name.
    pub experiment: String,
    /// SHA-256 of the spec submitted.
    pub spec_sha256: String,
    /// `--only`, if given (`model` or `simulation`).
    pub only: Option<String>,
    /// `runner` version that planned the work.
    pub runner_version: String,
    /// `model::VERSION` that planned the work.
    pub model_version: String,
    /// `sim::VERSION` that planned the work.
    pub sim_version: String,
    /// The cache the workers write (absolute).
    pub cache_dir: PathBuf,
    /// The Slurm job name of every array of this submission.
    pub job_name: String,
    /// Submission rounds.
    pub rounds: Vec<Round>,
    /// The dependent job that gathers and reports after `--detach`.
    pub gather_job: Option<String>,
    /// When it was first submitted (RFC 3339).
    pub submitted_at: String,
    /// The submitted spec's own path (absolute): workers plan from the copy in `spec.yaml`
    /// but read it as if it stood there, so the commands and inputs of external methods
    /// resolve against the spec's directory. Absent in records of earlier versions.
    #[serde(default)]
    pub spec_path: Option<PathBuf>,
}

impl Submission {
    /// A new, empty record.
    pub fn new(
        experiment: &str,
        spec_sha256: &str,
        only: Option<String>,
        cache_dir: PathBuf,
        job_name: String,
        submitted_at: String,
    ) -> Submission {
        Submission {
            format: FORMAT,
            experiment: experiment.to_string(),
            spec_sha256: spec_sha256.to_string(),
            only,
            runner_version: env!("CARGO_PKG_VERSION").into(),
            model_version: crate::model::VERSION.into(),
            sim_version: crate::sim::VERSION.into(),
            cache_dir,
            job_name,
            rounds: Vec::new(),
            gather_job: None,
            submitted_at,
            spec_path: None,
        }
    }

    /// Every array job id, in submission order.
    pub fn job_ids(&self) -> Vec<String> {
        self.rounds.iter().flat_map(|r| r.arrays.iter().map(|a| a.job_id.clone())).collect()
    }

    /// Why this binary must not run the record's tasks, if its evaluator versions differ.
    pub fn version_mismatch(&self) -> Option<String> {
        let here = (env!("CARGO_PKG_VERSION"), crate::model::VERSION, crate::sim::VERSION);
        let there =
            (self.runner_version.as_str(), self.model_version.as_str(), self.sim_version.as_str());
        (here != there).then(|| {
            format!(
                "this runner (runner {}, model {}, simulator {}) differs from the one that planned \
                 the work (runner {}, model {}, simulator {}); results would not match their task \
                 ids. Use the same binary on the cluster, or cancel the jobs and submit again",
                here.0, here.1, here.2, there.0, there.1, there.2
            )
        })
    }
}

/// The record directory of one experiment.
#[derive(Clone, Debug)]
pub struct RecordDir {
    /// `.runner/slurm/<experiment>` (absolute).
    pub dir: PathBuf,
}

impl RecordDir {
    /// The record directory of `experiment` under `root/.runner/slurm`.
    pub fn new(root: &Path, experiment: &str) -> RecordDir {
        RecordDir { dir: root.join(".runner").join("slurm").join(experiment) }
    }

    /// `submission.json`.
    pub fn submission_path(&self) -> PathBuf {
        self.dir.join("submission.json")
    }

    /// The spec copy the workers plan from.
    pub fn spec_path(&self) -> PathBuf {
        self.dir.join("spec.yaml")
    }

    /// `round-<r>/`.
    pub fn round_dir(&self, round: u32) -> PathBuf {
        self.dir.join(format!("round-{round}"))
    }

    /// The task list of batch `index` of round `round`.
    pub fn batch_path(&self, round: u32, index: usize) -> PathBuf {
        self.round_dir(round).join(format!("{index}.txt"))
    }

    /// Where a failed task's error is recorded.
    pub fn failed_path(&self, id: &str) -> PathBuf {
        self.dir.join("failed").join(format!("{id}.json"))
    }

    /// Written by a worker that refuses to run.
    pub fn refused_path(&self) -> PathBuf {
        self.dir.join("refused.txt")
    }

    /// Slurm output files.
    pub fn logs_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// The submission, if one is recorded.
    pub fn load(&self) -> std::io::Result<Option<Submission>> {
        match read_record(&self.submission_path()) {
            Ok(bytes) => serde_json::from_slice::<Submission>(&bytes)
                .map(|s| (s.format == FORMAT).then_some(s))
                .map_err(|e| {
                    std::io::Error::other(format!(
                        "{} is damaged ({e}); remove it (and cancel its jobs) to start afresh",
                        self.submission_path().display()
                    ))
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(named(&self.submission_path(), e)),
        }
    }

    /// Saves the submission atomically.
    pub fn save(&self, submission: &Submission) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(submission).map_err(std::io::Error::other)?;
        write_atomic(&self.submission_path(), &bytes)
    }

    /// Task ids of one batch.
    pub fn batch(&self, round: u32, index: usize) -> std::io::Result<Vec<String>> {
        let path = self.batch_path(round, index);
        let bytes = read_record(&path).map_err(|e| named(&path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| named(&path, std::io::Error::other(e)))?;
        Ok(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect())
    }

    /// Records that task `id` failed with `error`.
    pub fn record_failure(&self, id: &str, error: &str) -> std::io::Result<()> {
        let bytes =
            serde_json::to_vec(&FailedTask { id: id.to_string(), error: error.to_string() })
                .map_err(std::io::Error::other)?;
        write_atomic(&self.failed_path(id), &bytes)
    }

    /// The recorded failure of task `id`, if any.
    pub fn failure(&self, id: &str) -> Option<String> {
        let bytes = read_record(&self.failed_path(id)).ok()?;
        let failed: FailedTask = serde_json::from_slice(&bytes).ok()?;
        (failed.id == id).then_some(failed.error)
    }

    /// Why a worker refused to run, if one did.
    pub fn refusal(&self) -> Option<String> {
        let bytes = read_record(&self.refused_path()).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned()).filter(|t| !t.trim().is_empty())
    }

    /// Removes the record (the submission is over), keeping the Slurm logs of its elements.
    pub fn remove(&self) -> std::io::Result<()> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            if entry.file_name() == "logs" {
                continue;
            }
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(entry.path())?;
            } else {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
struct FailedTask {
    id: String,
    error: String,
}

/// The largest record file read (a submission lists task ids; 64 MiB holds a million).
const MAX_RECORD_BYTES: u64 = 64 << 20;

/// Reads a record file: a regular file of at most [`MAX_RECORD_BYTES`].
fn read_record(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::files::read_regular(path, MAX_RECORD_BYTES)
}

/// `error` with `path` in its message (an `io::Error` alone names no file).
fn named(path: &Path, error: std::io::Error) -> std::io::Error {
    std::io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_its_removal_keeps_the_logs() {
        let root = tempfile::tempdir().expect("temp dir");
        let record = RecordDir::new(root.path(), "e");
        let mut submission = Submission::new(
            "e",
            "abc",
            None,
            root.path().join("cache"),
            "runner-e-1".into(),
            "0".into(),
        );
        submission.rounds.push(Round {
            number: 0,
            attempt: 0,
            batches: 2,
            arrays: vec![ArrayJob { job_id: "7".into(), offset: 0, count: 2 }],
        });
        record.save(&submission).expect("save");
        assert_eq!(record.load().expect("load"), Some(submission.clone()));
        assert_eq!(submission.job_ids(), ["7"]);
        assert_eq!(submission.version_mismatch(), None);
        record.record_failure("t1", "boom").expect("failure");
        assert_eq!(record.failure("t1").as_deref(), Some("boom"));
        assert_eq!(record.failure("t2"), None);
        std::fs::create_dir_all(record.logs_dir()).expect("logs");
        std::fs::write(record.logs_dir().join("7_0.out"), "log").expect("log");
        record.remove().expect("remove");
        assert_eq!(record.load().expect("load"), None);
        assert_eq!(record.failure("t1"), None);
        assert!(record.logs_dir().join("7_0.out").is_file());
    }

    /// What a worker reads names its path when it cannot be read (an `io::Error` alone does
    /// not), and a FIFO in a record's place is refused, not waited on.
    #[test]
    fn record_read_errors_name_the_file() {
        let root = tempfile::tempdir().expect("temp dir");
        let record = RecordDir::new(root.path(), "e");
        let missing = record.batch(0, 5).expect_err("no batch file");
        let path = record.batch_path(0, 5);
        assert!(missing.to_string().contains(&path.display().to_string()), "{missing}");
        std::fs::create_dir_all(&record.dir).expect("dir");
        let fifo = record.submission_path();
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(made.success());
        let error = record.load().expect_err("a FIFO");
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert!(error.to_string().contains(&fifo.display().to_string()), "{error}");
    }
}
