//! The result cache: one JSON file per finished task under `.runner/cache/`, keyed by task id.
//!
//! **Invariant:** an entry is written to a temporary file in the same directory,
//! then renamed over its final name, so a reader sees either nothing or a
//! complete entry, even after `kill -9`. Entries are not fsynced one by one (that
//! cost 0.2 ms a task, a tenth of a 10,000-point model run): after a power cut a
//! renamed entry may be empty or torn, but every entry names its own task id and
//! must parse, so such an entry is a cache miss and the task is simply recomputed.
//! Failed tasks are never cached: a re-run retries them.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::store::row::Row;

/// What a finished task produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// A Saturation task: the model's saturation rate (messages/node/cycle).
    Saturation(f64),
    /// A Solve, Simulate or Aggregate task: its rows.
    Rows(Vec<Row>),
}

/// A cache directory.
#[derive(Clone, Debug)]
pub struct Cache {
    root: PathBuf,
}

/// Version of the entry format; entries of another version are ignored.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    id: String,
    output: Output,
}

impl Cache {
    /// The cache under `root` (usually `.runner/cache`).
    pub fn new(root: impl Into<PathBuf>) -> Cache {
        Cache { root: root.into() }
    }

    /// The directory holding the entries.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, id: &str) -> PathBuf {
        let shard = id.get(..2).unwrap_or("xx");
        self.root.join(shard).join(format!("{id}.json"))
    }

    /// Whether an entry for `id` exists.
    pub fn contains(&self, id: &str) -> bool {
        self.path(id).is_file()
    }

    /// The cached output of task `id`, if present and readable.
    pub fn get(&self, id: &str) -> Option<Output> {
        let bytes = fs::read(self.path(id)).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.format == FORMAT && entry.id == id).then_some(entry.output)
    }

    /// Stores the output of task `id` atomically.
    pub fn put(&self, id: &str, output: &Output) -> std::io::Result<()> {
        let path = self.path(id);
        let dir = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(dir)?;
        let entry = Entry { format: FORMAT, id: id.to_string(), output: output.clone() };
        let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        temp.write_all(&bytes)?;
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Every task id with an entry.
    pub fn ids(&self) -> Vec<String> {
        let mut ids = Vec::new();
        let Ok(shards) = fs::read_dir(&self.root) else { return ids };
        for shard in shards.flatten() {
            let Ok(entries) = fs::read_dir(shard.path()) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if let Some(id) = name.strip_suffix(".json") {
                    ids.push(id.to_string());
                }
            }
        }
        ids
    }

    /// Removes the entry of `id`.
    pub fn remove(&self, id: &str) -> std::io::Result<()> {
        fs::remove_file(self.path(id))
    }
}
