//! Helpers: run the binary in a scratch directory and read what it wrote.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use proptest::test_runner::TestCaseError;
use runner::store::row::Row;

/// A scratch directory with the `runner` binary pointed at it.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a spec file and returns its path.
    pub fn spec(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, text).expect("write spec");
        path
    }

    /// A `runner` command running in this directory.
    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
        command.current_dir(self.path());
        command
    }

    /// Runs `runner ARGS` here.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run runner")
    }

    /// Waits (up to a minute) until a run of `experiment` holds its lock and has written its
    /// pid there: by then its signal handler is set.
    pub fn wait_for_lock(&self, experiment: &str) {
        let lock = self.path().join(".runner/locks").join(format!("{experiment}.lock"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("pid"))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The rows of reports/<name>/results.parquet.
    pub fn rows(&self, name: &str) -> Vec<Row> {
        let path = self.path().join("reports").join(name).join("results.parquet");
        runner::store::parquet::read(&path).expect("read results").0
    }
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Rows with the non-reproducible column (wall-clock time) blanked.
pub fn comparable(mut rows: Vec<Row>) -> Vec<Row> {
    for row in &mut rows {
        row.wall_seconds = 0.0;
    }
    rows
}

/// A small spec with both methods: a 4x4 torus, model-free simulation plus the fat-tree model
/// would not share scenarios, so this one is simulation-only with replications.
pub const SIM_SPEC: &str = "\
name: small_sim
seed: 7
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: [dimension_order, duato]
  virtual_channels: 3
  message_length: 8
load:
  rates: [0.005, 0.02]
methods:
  simulation: {cycles: 4000, warmup_cycles: 500, replications: 2}
";

/// A model-only fat-tree spec with a fraction-of-saturation sweep.
pub const MODEL_SPEC: &str = "\
name: small_model
scenario:
  topology: {kind: fat_tree, processors: [16, 64]}
  routing: up_down
  message_length: [8, 32]
load:
  fraction_of_saturation: {from: 0.1, to: 1.1, points: 6}
methods:
  model: {name: fat_tree}
";

/// Number of entries in a cache directory.
pub fn cache_entries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|shards| {
            shards.flatten().map(|s| std::fs::read_dir(s.path()).map_or(0, |e| e.count())).sum()
        })
        .unwrap_or(0)
}

/// The paths of the cache entries of task kind `kind` (`Solve`, `Saturation`, ...), sorted.
pub fn entries_of_kind(dir: &Path, kind: &str) -> Vec<std::path::PathBuf> {
    let needle = format!("\"kind\":\"{kind}\"");
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|shard| std::fs::read_dir(shard.path()).into_iter().flatten().flatten())
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .filter(|path| std::fs::read_to_string(path).is_ok_and(|text| text.contains(&needle)))
        .collect();
    found.sort();
    found
}

/// Waits (up to two minutes) until the cache directory holds at least `entries` entries.
pub fn wait_for_cache_entries(dir: &Path, entries: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while cache_entries(dir) < entries && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Copies the repository's `relative` file into the scratch directory at `to`.
pub fn copy_in(scratch: &Scratch, relative: &str, to: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let target = scratch.path().join(to);
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    std::fs::copy(&from, &target).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
}

/// Runs `f`, turning a panic into a property-test failure with `what` in it.
pub fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        TestCaseError::fail(format!("panic on {what}: {message}"))
    })
}
