//! Trace replay: the messages of a recorded trace, fed to the engine with open-loop timing
//! (`crate::scenario::Traffic::Trace`, `docs/traces.md`).
//!
//! The simulator knows nothing of files: it takes a stream of [`TraceRecord`]s (any iterator of
//! `Result<TraceRecord, TraceError>`, which `crate::trace` builds from a CSV or Parquet file) and
//! pulls one record ahead of the cycle being simulated, so a trace of any length costs the
//! memory of one record here. A record made at recorded cycle `t` is generated at its source
//! in simulated cycle `round(t * time_scale)` ([`crate::scenario::TraceFile::scaled_cycle`]),
//! whatever the network does (open loop: a message waits in its source queue when the network
//! is slow, the trace does not slow down).
//!
//! The stream's errors, and what the feed itself refuses (a node the network does not have,
//! a cycle earlier than the previous record's, a length of 0 or beyond the bounds), end the run
//! with an error naming the record: the reader's errors already name the file, row and column.
//! When the stream ends, the engine closes the measurement window at the end of the last
//! record's cycle (if it is still open) and drains.

use crate::scenario::{TraceFile, bounds};

/// One message of a trace: generated at recorded cycle `cycle` at node `source`, for node
/// `destination`, `length` flits long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Recorded cycle (before the time scale).
    pub cycle: u64,
    /// Sending node.
    pub source: u32,
    /// Receiving node.
    pub destination: u32,
    /// Length in flits, at least 1.
    pub length: u32,
}

/// Why a trace cannot be replayed: a message naming the file, row and column when the reader
/// knows them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TraceError(pub String);

/// The records of a trace, in order of nondecreasing cycle.
pub type TraceRecords = Box<dyn Iterator<Item = Result<TraceRecord, TraceError>> + Send>;

/// A trace to replay: its records and the time scale.
pub struct Replay {
    /// The records, streamed.
    pub records: TraceRecords,
    /// Time scale: a record of cycle `t` is generated at `round(t * time_scale)` (> 0; below 1
    /// compresses time, a higher load).
    pub time_scale: f64,
}

/// The engine's side of a replay: the records and one record of look-ahead.
pub(crate) struct Feed {
    records: TraceRecords,
    scale: f64,
    nodes: u32,
    /// The next record, with its simulated cycle, not generated yet.
    next: Option<(u64, TraceRecord)>,
    /// Records taken from the stream so far (for messages).
    taken: u64,
    /// Recorded cycle of the last record taken.
    last: u64,
    /// The stream has ended.
    pub(crate) ended: bool,
}

impl Feed {
    /// The feed of `replay` on a network of `nodes` nodes.
    pub(crate) fn new(replay: Replay, nodes: u32) -> Feed {
        Feed {
            records: replay.records,
            scale: replay.time_scale,
            nodes,
            next: None,
            taken: 0,
            last: 0,
            ended: false,
        }
    }

    /// The next record generated before simulated cycle `until`, as (source, destination,
    /// length); `Ok(None)` when the next one is later or the trace has ended.
    #[inline]
    pub(crate) fn next_before(
        &mut self,
        until: u64,
    ) -> Result<Option<(u32, u32, u32)>, TraceError> {
        if self.next.is_none() && !self.ended {
            self.pull()?;
        }
        match self.next {
            Some((at, record)) if at < until => {
                self.next = None;
                Ok(Some((record.source, record.destination, record.length)))
            }
            _ => Ok(None),
        }
    }

    /// Takes the next record from the stream and checks it against the network and the
    /// previous record.
    fn pull(&mut self) -> Result<(), TraceError> {
        let Some(item) = self.records.next() else {
            self.ended = true;
            return Ok(());
        };
        let record = item?;
        self.taken += 1;
        let n = self.taken;
        if record.source >= self.nodes || record.destination >= self.nodes {
            return Err(TraceError(format!(
                "trace record {n}: node {} does not exist: the network has nodes 0 to {}",
                record.source.max(record.destination),
                self.nodes - 1
            )));
        }
        if n > 1 && record.cycle < self.last {
            return Err(TraceError(format!(
                "trace record {n}: cycle {} is earlier than the previous record's {}: a trace \
                 lists its messages in order of time",
                record.cycle, self.last
            )));
        }
        if record.length == 0 || record.length > bounds::MAX_COUNT {
            return Err(TraceError(format!(
                "trace record {n}: length {} flits is outside 1 to {}",
                record.length,
                bounds::MAX_COUNT
            )));
        }
        self.last = record.cycle;
        self.next = Some((TraceFile::scaled_cycle(record.cycle, self.scale), record));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(records: Vec<TraceRecord>, scale: f64) -> Feed {
        let records: TraceRecords = Box::new(records.into_iter().map(Ok));
        Feed::new(Replay { records, time_scale: scale }, 4)
    }

    fn record(cycle: u64, source: u32, destination: u32) -> TraceRecord {
        TraceRecord { cycle, source, destination, length: 2 }
    }

    #[test]
    fn records_come_at_their_scaled_cycles() {
        let mut f =
            feed(vec![record(0, 0, 1), record(3, 1, 2), record(3, 2, 3), record(5, 3, 0)], 0.5);
        // Scaled cycles: 0, round(1.5) = 2, 2, round(2.5) = 3.
        let mut at = Vec::new();
        for cycle in 0..6 {
            while let Some((source, _, _)) = f.next_before(cycle + 1).unwrap() {
                at.push((cycle, source));
            }
        }
        assert_eq!(at, [(0, 0), (2, 1), (2, 2), (3, 3)]);
        assert!(f.ended);
    }

    #[test]
    fn bad_records_are_refused_with_their_number() {
        let mut f = feed(vec![record(4, 0, 1), record(2, 1, 2)], 1.0);
        assert!(f.next_before(10).unwrap().is_some());
        let error = f.next_before(10).unwrap_err().0;
        assert!(
            error.contains("record 2: cycle 2 is earlier than the previous record's 4"),
            "{error}"
        );
        let mut f = feed(vec![record(0, 0, 4)], 1.0);
        let error = f.next_before(10).unwrap_err().0;
        assert!(error.contains("node 4 does not exist: the network has nodes 0 to 3"), "{error}");
        let mut f = feed(vec![TraceRecord { length: 0, ..record(0, 0, 1) }], 1.0);
        assert!(f.next_before(10).unwrap_err().0.contains("length 0 flits"));
    }
}
