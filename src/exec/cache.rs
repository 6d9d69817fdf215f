//! The result cache: one JSON file per finished task under `.runner/cache/`, keyed by task id.
//!
//! **Invariant:** an entry is written to a temporary file in the same directory,
//! then renamed over its final name, so a reader sees either nothing or a
//! complete entry, even after `kill -9`. Entries are not fsynced one by one (that
//! cost 0.2 ms a task, a tenth of a 10,000-point model run): after a power cut a
//! renamed entry may be empty or torn, but every entry names its own task id and
//! must parse, so such an entry is a cache miss and the task is simply recomputed.
//! Failed tasks are never cached: a re-run retries them.
//!
//! **Trust:** an entry records its task's kind and the blake3 checksum of its payload (the
//! output as canonical JSON). The checksum detects *damage* (a torn or truncated write, a
//! flipped bit, a hand edit that leaves the checksum alone), not deliberate tampering: anyone
//! who can write the cache can recompute it. Whoever can write `.runner/cache/` is trusted,
//! as whoever can write the spec is. [`Cache::lookup`] accepts an entry only when its format, id,
//! kind and checksum all match and the payload has the shape that kind produces (a rate for
//! Saturation, rows of the dense grid naming the task for a Curve, one row naming the task for
//! the others); anything else is
//! [`Lookup::Corrupt`]: the caller recomputes the task and counts a warning. [`Cache::get`],
//! [`Cache::contains`] and [`Cache::put`] are the only ways entries are read and written, with
//! [`Cache::whole_checksum`], which checks an entry's checksum without parsing it (for a
//! bundle's fingerprint, before anything runs).
//!
//! An entry is `{"format":F,"id":"I","kind":"K","checksum":"C","output":PAYLOAD}`, and the
//! checksum is over exactly the payload's bytes, so an entry laid out so is read in one pass
//! (its head by hand, the payload hashed, then parsed once); any other layout of the same
//! fields (a JSON tool's, a trailing newline) is read by parsing it whole and re-serialising
//! the payload to check it.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::batch::SolvedPoint;
use crate::plan::TaskKind;
use crate::store::row::Row;

/// What a finished task produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// A Saturation task: the model's saturation rate (messages/node/cycle).
    Saturation(f64),
    /// A Simulate, Aggregate, External or Curve task: its rows.
    Rows(Vec<Row>),
    /// A Solve batch: what the model measured at each of its points, in load order (the rows
    /// are rebuilt from them, `exec::batch::rows`).
    Points(Vec<SolvedPoint>),
    /// A Solve batch whose points were written whole to its cache entry and not kept: `Gather`
    /// reads them back when it reaches the batch (a 1,000,000-point sweep's points take a
    /// gigabyte). Only a run's task state holds it; no entry does (`shape_problem`).
    InCache,
}

impl Output {
    /// Points of a Solve batch whose solve failed (0 for the other outputs).
    pub fn failed_points(&self) -> usize {
        match self {
            Output::Points(points) => points.iter().filter(|p| p.failed()).count(),
            Output::Saturation(_) | Output::Rows(_) | Output::InCache => 0,
        }
    }
}

/// A cache directory.
#[derive(Clone, Debug)]
pub struct Cache {
    root: PathBuf,
}

/// Version of the entry format; entries of an older version are a plain miss (recomputed,
/// no warning). Bump it whenever `Row` gains, loses or renames a field: an entry written with
/// the old shape would otherwise read back with the new columns empty and fail its checksum,
/// and every cached task would be reported corrupt. `ROW_SHAPE` (tests) catches a forgotten
/// bump. 3: the `broadcast_order`, `circuit_backoff` and `circuit_retry_limit` columns;
/// 4: `load_grid` (and Curve entries of many rows); 5: the latency percentile columns
/// (`latency_p50` ... `source_wait_max`); 6: `message_length_distribution`,
/// `message_length_min` and `message_length_max`; 7: `injection_process` and `burst_length`;
/// 8: the dragonfly columns (`terminals_per_router`, `routers_per_group`,
/// `global_links_per_router`); 9: the graph columns (`graph`, `graph_blake3`), the trace
/// columns (`trace_blake3`, `trace_time_scale`, `trace_flit_load`), the p95 and unicast
/// percentile columns and the side-table data (`link_loads`, `histograms`); 10: the
/// interval columns `throughput_ci95` and `latency_p50_ci95` ... `latency_p99_ci95`; 11: the
/// timing columns `channel_latency`, `global_channel_latency` and `credit_delay`; 12:
/// `injection`; 13: `vc_reallocation`; 14: `switch_delay` and `vc_allocation_delay`; 15:
/// `switch_allocator` and `switch_allocator_iterations`; 16: `vc_allocator`; 17: `packet_size`; 18:
/// `reply_length`, `outstanding_requests` and `round_trip_latency`; 19: `vc_classes`; 20: no
/// new field, but the results of `injection: channel` (now BookSim's source) and of
/// `router_delay` on the families whose terminals are not routers moved while `sim::VERSION`
/// did not (no default moved), so their cached entries must not be read; 21:
/// `ugal_threshold` and `prime_power` (the Slim Fly), and the results of the dragonfly's `ugal` moved (its threshold's default
/// and its minimal routes' VC classes) while `sim::VERSION` did not; 22:
/// `up_links_per_switch` (the tapered k-ary n-tree); 23: `global_arrangement` (the dragonfly);
/// 24: `trunking` (the HyperX).
const FORMAT: u32 = 24;

/// The largest entry read, in bytes (entries are 1-10 KB, a simulation's a few KB more with its
/// binned histograms and, with `link_loads`, one count per link; a Curve entry holds up to
/// `spec::MAX_CURVE_POINTS` model rows of a few KB each).
const MAX_ENTRY_BYTES: u64 = 16 << 20;

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    id: String,
    /// The task's kind (`TaskKind::name`).
    kind: String,
    /// blake3 of the payload as canonical JSON (hex).
    checksum: String,
    output: Output,
}

/// What the cache holds for a task.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    /// A valid entry.
    Hit(Output),
    /// No entry, or one written by an earlier version of runner.
    Missing,
    /// An entry that is not what the task produced; the reason says why.
    Corrupt(String),
}

/// The checksum stored with an entry: blake3 of the payload's canonical JSON.
fn checksum(output: &Output) -> String {
    let bytes = serde_json::to_vec(output).unwrap_or_default();
    blake3::hash(&bytes).to_hex().to_string()
}

/// The head of an entry as [`Cache::put`] writes it: `{"format":F,"id":"I","kind":"K",
/// "checksum":"C","output":PAYLOAD}`, without spaces, the strings without escapes.
struct RawHead<'a> {
    format: u64,
    id: &'a str,
    kind: &'a str,
    checksum: &'a str,
}

/// An entry's head and its payload's bytes, when the entry is laid out exactly as
/// [`Cache::put`] writes one; `None` otherwise (a trailing newline, keys in another order, a
/// truncated file: the general reading then judges it).
fn split(bytes: &[u8]) -> Option<(RawHead<'_>, &[u8])> {
    let rest = bytes.strip_prefix(b"{\"format\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let format = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let (id, rest) = plain_string(rest[digits..].strip_prefix(b",\"id\":\"")?)?;
    let (kind, rest) = plain_string(rest.strip_prefix(b",\"kind\":\"")?)?;
    let (checksum, rest) = plain_string(rest.strip_prefix(b",\"checksum\":\"")?)?;
    let payload = rest.strip_prefix(b",\"output\":")?.strip_suffix(b"}")?;
    Some((RawHead { format, id, kind, checksum }, payload))
}

/// The text up to the next `"` and what follows that quote; `None` for text with an escape.
fn plain_string(bytes: &[u8]) -> Option<(&str, &[u8])> {
    let end = bytes.iter().position(|&b| b == b'"' || b == b'\\')?;
    (bytes[end] == b'"').then_some(())?;
    Some((std::str::from_utf8(&bytes[..end]).ok()?, &bytes[end + 1..]))
}

/// Why an entry's head does not belong to task `id` of kind `kind`, if it does not.
fn head_problem(head: &RawHead<'_>, id: &str, kind: TaskKind) -> Option<String> {
    if head.id != id {
        return Some(format!("the entry names task {}", head.id));
    }
    if head.kind != kind.name() {
        return Some(format!("a {} entry for a {} task", head.kind, kind.name()));
    }
    None
}

/// Whether `output` has the shape a task of `kind` with id `id` produces.
fn shape_problem(id: &str, kind: TaskKind, output: &Output) -> Option<String> {
    match (kind, output) {
        (_, Output::InCache) => Some("a mark of a run's own, no output".into()),
        (TaskKind::Saturation, Output::Saturation(_)) => None,
        (TaskKind::Saturation, Output::Rows(_)) => {
            Some("rows where a saturation rate belongs".into())
        }
        (_, Output::Saturation(_)) => Some("a saturation rate where rows belong".into()),
        (TaskKind::Solve, Output::Rows(_)) => Some("rows where a batch of points belongs".into()),
        (_, Output::Points(_)) if kind != TaskKind::Solve => {
            Some("a batch of points where rows belong".into())
        }
        (_, Output::Points(points)) if points.is_empty() => {
            Some("no points where a batch makes some".into())
        }
        (_, Output::Points(points)) if points.iter().any(SolvedPoint::failed) => {
            Some("a failed point (failures are never cached)".into())
        }
        (TaskKind::Curve, Output::Rows(rows)) if rows.is_empty() => {
            Some("no rows where a curve makes some".into())
        }
        (TaskKind::Curve, Output::Rows(rows)) if rows.iter().any(|row| !row.is_dense()) => {
            Some("a row of the spec's load grid in a curve".into())
        }
        (kind, Output::Rows(rows)) if kind != TaskKind::Curve && rows.len() != 1 => {
            Some(format!("{} rows where the task makes one", rows.len()))
        }
        (_, Output::Rows(rows)) if rows.iter().any(|row| row.task_id != id) => {
            Some("a row of another task".into())
        }
        _ => None,
    }
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

    /// Where task `id` keeps its log (an External task's standard error): beside its entry,
    /// `<root>/<first two hex digits>/<id>.log`.
    pub fn log_path(&self, id: &str) -> PathBuf {
        self.path(id).with_extension("log")
    }

    /// Whether a valid entry for task `id` of kind `kind` exists (a corrupt one does not count).
    pub fn contains(&self, id: &str, kind: TaskKind) -> bool {
        matches!(self.lookup(id, kind), Lookup::Hit(_))
    }

    /// The cached output of task `id` of kind `kind`, if present and valid.
    pub fn get(&self, id: &str, kind: TaskKind) -> Option<Output> {
        match self.lookup(id, kind) {
            Lookup::Hit(output) => Some(output),
            Lookup::Missing | Lookup::Corrupt(_) => None,
        }
    }

    /// What the cache holds for task `id` of kind `kind`, telling a corrupt entry from none.
    pub fn lookup(&self, id: &str, kind: TaskKind) -> Lookup {
        let path = self.path(id);
        let corrupt = |why: String| Lookup::Corrupt(format!("{}: {why}", path.display()));
        // Only a regular file of at most MAX_ENTRY_BYTES is an entry: a FIFO or a link to
        // `/dev/zero` in its place is corrupt at once, never read (or waited on).
        let bytes = match crate::files::read_regular(&path, MAX_ENTRY_BYTES) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Missing,
            Err(e) => return corrupt(format!("not a cache entry ({e})")),
        };
        // An entry as `put` writes it is read in one pass: its head by hand, its payload's
        // checksum over the payload's bytes (the canonical JSON it was computed from), then
        // the payload into its type. Anything else goes through the general reading below.
        if let Some((head, payload)) = split(&bytes) {
            if head.format < u64::from(FORMAT) {
                return Lookup::Missing;
            }
            if head.format != u64::from(FORMAT) {
                return corrupt("not a cache entry of this version of runner".into());
            }
            if let Some(problem) = head_problem(&head, id, kind) {
                return corrupt(problem);
            }
            if blake3::hash(payload).to_hex().as_str() != head.checksum {
                return corrupt(
                    "the payload does not match its checksum (damaged, or edited by hand)".into(),
                );
            }
            let output: Output = match serde_json::from_slice(payload) {
                Ok(output) => output,
                Err(e) => return corrupt(format!("not a cache entry ({e})")),
            };
            if let Some(problem) = shape_problem(id, kind, &output) {
                return corrupt(problem);
            }
            return Lookup::Hit(output);
        }
        // The format first (the rest skipped unparsed), then the entry straight into its type.
        #[derive(Deserialize)]
        struct Head {
            format: Option<serde_json::Value>,
        }
        let head: Head = match serde_json::from_slice(&bytes) {
            Ok(head) => head,
            Err(e) => return corrupt(format!("not a cache entry ({e})")),
        };
        match head.format.as_ref().and_then(serde_json::Value::as_u64) {
            Some(format) if format == u64::from(FORMAT) => {}
            // Written by an earlier version of runner: not ours to judge, just recompute.
            Some(format) if format < u64::from(FORMAT) => return Lookup::Missing,
            _ => return corrupt("not a cache entry of this version of runner".into()),
        }
        let entry: Entry = match serde_json::from_slice(&bytes) {
            Ok(entry) => entry,
            Err(e) => return corrupt(format!("not a cache entry ({e})")),
        };
        let head = RawHead {
            format: u64::from(entry.format),
            id: &entry.id,
            kind: &entry.kind,
            checksum: &entry.checksum,
        };
        if let Some(problem) = head_problem(&head, id, kind) {
            return corrupt(problem);
        }
        if entry.checksum != checksum(&entry.output) {
            return corrupt(
                "the payload does not match its checksum (damaged, or edited by hand)".into(),
            );
        }
        if let Some(problem) = shape_problem(id, kind, &entry.output) {
            return corrupt(problem);
        }
        Lookup::Hit(entry.output)
    }

    /// Stores the output of task `id` of kind `kind` atomically; an error names the entry's path.
    pub fn put(&self, id: &str, kind: TaskKind, output: &Output) -> std::io::Result<()> {
        let path = self.path(id);
        let dir = path.parent().unwrap_or(&self.root);
        let entry = Entry {
            format: FORMAT,
            id: id.to_string(),
            kind: kind.name().to_string(),
            checksum: checksum(output),
            output: output.clone(),
        };
        let write = || -> std::io::Result<()> {
            fs::create_dir_all(dir)?;
            let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
            crate::files::write_atomic_unsynced(&path, &bytes)
        };
        write().map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        })
    }

    /// The checksum an entry of task `id` of kind `kind` records, when the entry is whole: as
    /// `put` wrote it for this task, in this format, its payload's bytes hashing to that
    /// checksum. The payload is hashed, not parsed (a tenth of [`Cache::lookup`]'s time), so
    /// this tells damage, not a payload of the wrong shape with a recomputed checksum (which
    /// only a hand edit makes): [`Cache::lookup`] is what accepts an entry for use. `None`
    /// otherwise.
    pub fn whole_checksum(&self, id: &str, kind: TaskKind) -> Option<String> {
        let bytes = crate::files::read_regular(&self.path(id), MAX_ENTRY_BYTES).ok()?;
        let (head, payload) = split(&bytes)?;
        let whole = head.format == u64::from(FORMAT)
            && head_problem(&head, id, kind).is_none()
            && blake3::hash(payload).to_hex().as_str() == head.checksum;
        whole.then(|| head.checksum.to_owned())
    }

    /// Stores the output like [`Cache::put`] unless it holds a failed point: failures are
    /// never cached (a Solve batch with a failed point is evaluated again by the next run).
    pub fn put_unless_failed(
        &self,
        id: &str,
        kind: TaskKind,
        output: &Output,
    ) -> std::io::Result<()> {
        if output.failed_points() > 0 {
            return Ok(());
        }
        self.put(id, kind, output)
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

    /// Removes the entry of `id`, and its log if it has one.
    pub fn remove(&self, id: &str) -> std::io::Result<()> {
        match fs::remove_file(self.log_path(id)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        fs::remove_file(self.path(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, latency: f64) -> Row {
        Row { task_id: id.into(), latency: Some(latency), status: "ok".into(), ..Row::default() }
    }

    fn entry_path(cache: &Cache, id: &str) -> PathBuf {
        cache.path(id)
    }

    const ID: &str = "ab0123456789";

    /// blake3 of `Row`'s field names (sorted), as of the current `FORMAT`.
    const ROW_SHAPE: &str = "6516597d3773aaef";

    #[test]
    fn the_entry_format_follows_the_row_shape() {
        let row = serde_json::to_value(Row::default()).expect("row");
        let names: Vec<&str> =
            row.as_object().expect("object").keys().map(String::as_str).collect();
        let shape = blake3::hash(names.join(",").as_bytes()).to_hex()[..16].to_string();
        assert_eq!(
            shape, ROW_SHAPE,
            "Row's fields changed: bump FORMAT in src/exec/cache.rs (old entries would read as \
             corrupt) and set ROW_SHAPE to {shape}"
        );
    }

    /// An entry as `put` writes it is read by its head and its payload's bytes: a byte of the
    /// payload changed in place (the head intact) makes it corrupt and not whole; an entry
    /// written otherwise (its keys in another order) is judged by the general reading.
    #[test]
    fn an_entry_is_whole_only_with_its_payload_s_bytes_intact() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Cache::new(dir.path());
        let output = Output::Rows(vec![row(ID, 12.5)]);
        cache.put(ID, TaskKind::Simulate, &output).expect("put");
        assert_eq!(cache.whole_checksum(ID, TaskKind::Simulate), Some(checksum(&output)));
        assert_eq!(cache.whole_checksum(ID, TaskKind::Aggregate), None, "another kind");
        let path = entry_path(&cache, ID);
        let text = std::fs::read_to_string(&path).expect("entry");
        assert!(text.starts_with("{\"format\":"), "{text}");
        std::fs::write(&path, text.replace("12.5", "12.6")).expect("write");
        assert_eq!(cache.whole_checksum(ID, TaskKind::Simulate), None);
        let lookup = cache.lookup(ID, TaskKind::Simulate);
        assert!(matches!(&lookup, Lookup::Corrupt(why) if why.contains("checksum")), "{lookup:?}");
        // Cut short: the head is there, the payload's end is not.
        std::fs::write(&path, &text[..text.len() - 1]).expect("write");
        assert!(matches!(cache.lookup(ID, TaskKind::Simulate), Lookup::Corrupt(_)));
        assert_eq!(cache.whole_checksum(ID, TaskKind::Simulate), None);
        // A newline after it (an editor's) is read by the general reading, as before.
        std::fs::write(&path, format!("{text}\n")).expect("write");
        assert_eq!(cache.lookup(ID, TaskKind::Simulate), Lookup::Hit(output.clone()));
        assert_eq!(cache.whole_checksum(ID, TaskKind::Simulate), None);
        // The same entry with its keys sorted (as a JSON tool writes it back) still reads.
        let sorted: serde_json::Value = serde_json::from_str(&text).expect("json");
        std::fs::write(&path, sorted.to_string()).expect("write");
        assert_eq!(cache.lookup(ID, TaskKind::Simulate), Lookup::Hit(output));
    }

    #[test]
    fn a_written_entry_reads_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Cache::new(dir.path());
        let output = Output::Rows(vec![row(ID, 12.5)]);
        cache.put(ID, TaskKind::Simulate, &output).expect("put");
        assert_eq!(cache.lookup(ID, TaskKind::Simulate), Lookup::Hit(output.clone()));
        assert!(cache.contains(ID, TaskKind::Simulate));
        assert_eq!(cache.get(ID, TaskKind::Simulate), Some(output));
        assert_eq!(cache.lookup("cd0000", TaskKind::Simulate), Lookup::Missing);
    }

    /// Rewrites the entry's JSON with `edit` and returns what a lookup as `kind` says.
    fn after_edit(edit: impl Fn(&mut serde_json::Value), kind: TaskKind) -> Lookup {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Cache::new(dir.path());
        cache.put(ID, TaskKind::Simulate, &Output::Rows(vec![row(ID, 12.5)])).expect("put");
        let path = entry_path(&cache, ID);
        let mut value: serde_json::Value =
            serde_json::from_slice(&fs::read(&path).expect("read")).expect("json");
        edit(&mut value);
        fs::write(&path, serde_json::to_vec(&value).expect("json")).expect("write");
        cache.lookup(ID, kind)
    }

    #[test]
    fn an_edited_value_is_corrupt_not_a_hit() {
        let lookup =
            after_edit(|v| v["output"]["rows"][0]["latency"] = 1.0.into(), TaskKind::Simulate);
        assert!(matches!(&lookup, Lookup::Corrupt(why) if why.contains("checksum")), "{lookup:?}");
    }

    #[test]
    fn emptied_rows_are_corrupt_even_with_a_recomputed_checksum() {
        let lookup = after_edit(
            |v| {
                v["output"] = serde_json::json!({"rows": []});
                v["checksum"] = checksum(&Output::Rows(Vec::new())).into();
            },
            TaskKind::Simulate,
        );
        assert!(matches!(&lookup, Lookup::Corrupt(why) if why.contains("0 rows")), "{lookup:?}");
    }

    #[test]
    fn an_entry_of_another_kind_is_corrupt() {
        let lookup = after_edit(|_| {}, TaskKind::Aggregate);
        assert!(
            matches!(&lookup, Lookup::Corrupt(why) if why.contains("Simulate entry")),
            "{lookup:?}"
        );
    }

    /// A Solve batch's entry reads back; rows in its place, no points, a failed point or
    /// points under another kind are corrupt.
    #[test]
    fn a_batch_entry_reads_back_and_misshapen_ones_are_corrupt() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Cache::new(dir.path());
        let point = |status: &str| SolvedPoint {
            status: status.into(),
            latency: Some(40.5),
            intermediates: "{\"v_bar\":1.5}".into(),
            wall_seconds: 1e-5,
            ..SolvedPoint::default()
        };
        let batch = Output::Points(vec![point("ok"), point("saturated")]);
        cache.put(ID, TaskKind::Solve, &batch).expect("put");
        assert_eq!(cache.lookup(ID, TaskKind::Solve), Lookup::Hit(batch.clone()));
        assert_eq!(cache.whole_checksum(ID, TaskKind::Solve), Some(checksum(&batch)));
        assert!(matches!(cache.lookup(ID, TaskKind::Curve), Lookup::Corrupt(_)));
        for (output, why) in [
            (Output::Rows(vec![row(ID, 1.0)]), "rows where a batch"),
            (Output::Points(Vec::new()), "no points"),
            (Output::Points(vec![point("ok"), point("failed")]), "a failed point"),
            (Output::InCache, "a mark of a run's own"),
        ] {
            cache.put(ID, TaskKind::Solve, &output).expect("put");
            let lookup = cache.lookup(ID, TaskKind::Solve);
            assert!(matches!(&lookup, Lookup::Corrupt(w) if w.contains(why)), "{lookup:?}");
        }
        // A batch with a failed point is never written.
        let other = "cd0123456789";
        let failed = Output::Points(vec![point("failed")]);
        cache.put_unless_failed(other, TaskKind::Solve, &failed).expect("put");
        assert_eq!(cache.lookup(other, TaskKind::Solve), Lookup::Missing);
    }

    #[test]
    fn an_entry_of_an_older_format_is_a_plain_miss_and_garbage_is_corrupt() {
        assert_eq!(after_edit(|v| v["format"] = 1.into(), TaskKind::Simulate), Lookup::Missing);
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Cache::new(dir.path());
        cache.put(ID, TaskKind::Simulate, &Output::Rows(vec![row(ID, 1.0)])).expect("put");
        let current = format!("{{\"format\": {FORMAT}, \"rows\": []}}");
        for garbage in [&b"{\"rows\": []}"[..], current.as_bytes(), b"\0\0"] {
            fs::write(entry_path(&cache, ID), garbage).expect("write");
            assert!(matches!(cache.lookup(ID, TaskKind::Simulate), Lookup::Corrupt(_)));
        }
    }
}
