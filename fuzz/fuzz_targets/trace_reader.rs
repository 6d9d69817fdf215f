//! Fuzz target: the CSV trace reader on arbitrary bytes.
//!
//! The first byte picks the reader's settings: bit 0 a `trace_flit_bytes` (bits 4 to 7, so 0
//! to 15, 0 being refused), bit 1 a network size (bits 2 to 7, plus 1: 1 to 64 nodes). The
//! rest is written to a `.csv` file, which `runner::trace::open` streams and
//! `runner::trace::scan` scans (`docs/traces.md`). Neither may panic; every problem names the
//! file, and a located one a row inside the file (the rows are its lines, LF-separated) and a
//! column from 1 to 5; a problem of the whole file ends the stream. What is read keeps the
//! format's promises: cycles never go backwards, nodes lie below the network's size, lengths
//! are 1 to 2^20 flits; and the scan agrees with the stream (its summary, its problems, a trace
//! without messages refused). Run it with `cargo fuzz run trace_reader` from the repository
//! root; `docs/fuzzing.md` has the seeds, the dictionary and the record.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use runner::scenario::{TraceSummary, bounds};
use runner::trace::{self, MAX_REPORTED};

/// The file each input is written to: one per fuzzing process, in the temporary directory,
/// removed after each input (a file truncated and rewritten costs a flush to disk on some
/// file systems, milliseconds an input; a new one does not).
fn file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        std::env::temp_dir().join(format!("runner-fuzz-trace-{}.csv", std::process::id()))
    })
}

/// The row and column a problem names, if it names one; asserts it names the file.
fn location(problem: &str, prefix: &str) -> Option<(u64, u64)> {
    let rest = problem.strip_prefix(prefix);
    let rest = rest.unwrap_or_else(|| panic!("a problem not naming the file: {problem:?}"));
    let rest = rest.strip_prefix(", row ")?;
    let (row, rest) = rest.split_once(", column ")?;
    let (column, _) = rest.split_once(' ')?;
    let row = row.parse().unwrap_or_else(|_| panic!("a malformed row in {problem:?}"));
    let column = column.parse().unwrap_or_else(|_| panic!("a malformed column in {problem:?}"));
    Some((row, column))
}

fuzz_target!(|data: &[u8]| {
    let Some((&settings, text)) = data.split_first() else { return };
    let flit_bytes = (settings & 1 == 1).then_some(u32::from(settings >> 4));
    let nodes = (settings & 2 == 2).then_some(u32::from(settings >> 2 & 0x3f) + 1);
    let path = file();
    if std::fs::write(path, text).is_err() {
        let _ = std::fs::remove_file(path);
        return;
    }
    trace_contract(path, text, flit_bytes, nodes);
    let _ = std::fs::remove_file(path);
});

/// Reads the trace at `path` (holding `text`) both ways, asserting the reader's contract.
fn trace_contract(path: &Path, text: &[u8], flit_bytes: Option<u32>, nodes: Option<u32>) {
    let prefix = format!("trace {}", path.display());
    // Rows are lines, split at LF only; a final line without LF is a row too.
    let rows = text.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let check = |problem: &str| {
        assert!(problem.len() > prefix.len() + 8, "a problem without its words: {problem:?}");
        if let Some((row, column)) = location(problem, &prefix) {
            assert!((1..=rows).contains(&row), "row {row} of {rows}: {problem}");
            assert!((1..=5).contains(&column), "column {column}: {problem}");
        }
    };

    // The stream, record by record.
    let mut summary = TraceSummary::default();
    let mut problems = Vec::new();
    match trace::open(path, flit_bytes, nodes) {
        Err(error) => {
            check(&error.0);
            problems.push(error.0);
        }
        Ok(mut reader) => {
            let mut previous: Option<u64> = None;
            let mut last_row = 0;
            while let Some(item) = reader.next() {
                match item {
                    Ok(record) => {
                        assert!(previous.is_none_or(|p| p <= record.cycle), "time went back");
                        previous = Some(record.cycle);
                        for node in [record.source, record.destination] {
                            assert!(nodes.is_none_or(|n| node < n), "node {node} of {nodes:?}");
                        }
                        let length = record.length;
                        assert!((1..=bounds::MAX_COUNT).contains(&length), "length {length}");
                        summary.messages += 1;
                        summary.flits = summary.flits.saturating_add(u64::from(length));
                        summary.last_cycle = record.cycle;
                        summary.max_node =
                            summary.max_node.max(record.source).max(record.destination);
                    }
                    Err(error) => {
                        check(&error.0);
                        match location(&error.0, &prefix) {
                            Some((row, _)) => {
                                assert!(row > last_row, "rows out of order: {}", error.0);
                                last_row = row;
                            }
                            // A problem of the whole file ends the stream.
                            None => assert!(reader.next().is_none(), "read on after {}", error.0),
                        }
                        problems.push(error.0);
                    }
                }
            }
        }
    }

    // The loader's scan: the same records and problems.
    let scanned = trace::scan(path, flit_bytes, nodes);
    let reported: Vec<&str> = scanned.problems.iter().map(|e| e.0.as_str()).collect();
    if summary.messages == 0 && problems.is_empty() {
        assert_eq!(reported.len(), 1, "{reported:?}");
        assert!(reported[0].ends_with("the trace holds no messages"), "{reported:?}");
    } else {
        let first: Vec<&str> = problems.iter().take(MAX_REPORTED).map(String::as_str).collect();
        assert_eq!(reported, first);
        let more = problems.len().saturating_sub(MAX_REPORTED) as u64;
        assert_eq!(scanned.more_problems, more);
    }
    assert_eq!(scanned.summary, summary);
    if summary.messages > 0 {
        let (row, column) = scanned.max_node_at;
        assert!((1..=rows).contains(&row) && (2..=3).contains(&column), "{scanned:?}");
    }
}
