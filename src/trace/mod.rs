//! Trace files: reading a recorded message trace (CSV or Parquet) as a stream of
//! [`crate::sim::TraceRecord`]s, and the loader's scan of a whole file.
//!
//! The format is `docs/traces.md`: one message per row, columns `cycle, source, destination,
//! length`; the length column's name gives its unit (`length` or `length_flits`: flits;
//! `length_bytes`: bytes, turned into flits with the spec's `trace_flit_bytes`, rounding up).
//! A CSV file may start with that header line (else the columns are in that order, lengths in
//! flits), and may hold blank lines and `#` comments; a Parquet file names its columns so
//! (integer columns, or floating-point ones holding whole numbers).
//!
//! Files are opened through [`crate::files::open_regular`] (regular files only) and streamed:
//! a CSV file a line at a time (lines of at most [`MAX_LINE_BYTES`]), a Parquet file a record
//! batch of [`PARQUET_BATCH_ROWS`] rows at a time, so memory stays bounded whatever the
//! trace's length. Every problem names the file, the row (for CSV the line number, header
//! and comments counted; for Parquet the data row, from 1) and the column: a malformed row, a
//! value that is not a whole number, a zero or negative length, a cycle earlier than the
//! previous row's, an unknown column or length unit, a node the network does not have.
//!
//! [`open`] is what a simulation task replays (`exec::evaluate`); [`scan`] is what the spec
//! loader runs once per trace, so that every problem of a file is reported, located, before
//! anything runs, and the offered load is known (`scenario::TraceSummary`).

use std::fs::File;
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};

use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use crate::scenario::{TraceSummary, bounds};
use crate::sim::{TraceError, TraceRecord};

/// The longest CSV line a trace may have, in bytes.
pub const MAX_LINE_BYTES: u64 = 4096;

/// Rows of a Parquet trace decoded at a time.
pub const PARQUET_BATCH_ROWS: usize = 4096;

/// The most problems one scan reports (the rest are counted).
pub const MAX_REPORTED: usize = 20;

/// The column names, in order; the fourth is the length's unit.
const COLUMNS: [&str; 3] = ["cycle", "source", "destination"];

/// What the length column counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Flits,
    Bytes(u32),
}

/// The unit a length column's name declares, or why it declares none.
fn unit(name: &str, flit_bytes: Option<u32>) -> Result<Unit, String> {
    match (name, flit_bytes) {
        ("length" | "length_flits", None) => Ok(Unit::Flits),
        ("length" | "length_flits", Some(_)) => Err(format!(
            "column `{name}` counts flits, so `trace_flit_bytes` does not apply: leave it out, \
             or give the lengths in bytes as `length_bytes`"
        )),
        ("length_bytes", Some(bytes)) if bytes >= 1 => Ok(Unit::Bytes(bytes)),
        ("length_bytes", _) => {
            Err("column `length_bytes` counts bytes: give `traffic.trace_flit_bytes` (bytes per \
             flit, at least 1) so that lengths become flits"
                .into())
        }
        (other, _) => Err(format!(
            "unknown length unit: the fourth column is `{other}`; name it `length` or \
             `length_flits` (flits) or `length_bytes` (bytes, with `traffic.trace_flit_bytes`)"
        )),
    }
}

/// The problem at `row`, `column` (1-based) of the file.
fn located(path: &Path, row: u64, column: usize, message: &str) -> TraceError {
    let name = match column {
        1..=3 => COLUMNS[column - 1],
        4 => "length",
        _ => "beyond the last",
    };
    TraceError(format!(
        "trace {}, row {row}, column {column} (`{name}`): {message}",
        path.display()
    ))
}

/// A problem of the whole file.
fn whole(path: &Path, message: &str) -> TraceError {
    TraceError(format!("trace {}: {message}", path.display()))
}

/// 2^64, the least whole number a `u64` cannot hold (`u64::MAX as f64` rounds up to it).
const TWO_TO_THE_64: f64 = 18_446_744_073_709_551_616.0;

/// A whole number in `0..=most` from a cell, or why not. A number written as a fraction or
/// with an exponent (`3.0`, `1e3`) is compared with `most` exactly: `u64::MAX as f64` is 2^64,
/// so comparing in floating point would take 2^64 for `u64::MAX`.
fn whole_number(text: &str, most: u64) -> Result<u64, String> {
    if let Ok(value) = text.parse::<u64>() {
        return if value <= most {
            Ok(value)
        } else {
            Err(format!("{value} is larger than the {most} allowed"))
        };
    }
    match text.parse::<f64>() {
        Ok(value) if value < 0.0 => Err(format!("{text} is negative")),
        Ok(value) if value.fract() != 0.0 => Err(format!("{text} is not a whole number")),
        // Whole and below 2^64, so `as` is exact.
        Ok(value) if value < TWO_TO_THE_64 && value as u64 <= most => Ok(value as u64),
        Ok(_) => Err(format!("{text} is larger than the {most} allowed")),
        Err(_) if text.is_empty() => Err("the cell is empty".into()),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

/// Checks one row's values (the cells, in column order) against the unit, the network and
/// the previous row's cycle (`previous`, updated when this row's cycle is good, whatever its
/// other cells); `Err` holds the 1-based column and the problem.
fn record(
    cells: [Result<u64, String>; 4],
    unit: Unit,
    nodes: Option<u32>,
    previous: &mut Option<u64>,
) -> Result<TraceRecord, (usize, String)> {
    let [cycle, source, destination, length] = cells;
    let cycle = cycle.map_err(|e| (1, e))?;
    if let Some(previous) = *previous
        && cycle < previous
    {
        return Err((
            1,
            format!(
                "cycle {cycle} is earlier than the previous row's {previous}: times go \
                 backwards (list the messages in order of time)"
            ),
        ));
    }
    *previous = Some(cycle);
    let node = |column: usize, value: Result<u64, String>| -> Result<u32, (usize, String)> {
        let value = value.map_err(|e| (column, e))?;
        match nodes {
            Some(n) if value >= u64::from(n) => Err((
                column,
                format!("node {value} does not exist: the network has nodes 0 to {}", n - 1),
            )),
            _ => u32::try_from(value).map_err(|_| (column, format!("node {value} is too large"))),
        }
    };
    let source = node(2, source)?;
    let destination = node(3, destination)?;
    let length = length.map_err(|e| (4, e))?;
    if length == 0 {
        return Err((4, "a message has at least 1 flit; found length 0".into()));
    }
    let flits = match unit {
        Unit::Flits => length,
        Unit::Bytes(bytes) => length.div_ceil(u64::from(bytes)),
    };
    if flits > u64::from(bounds::MAX_COUNT) {
        return Err((
            4,
            format!("{flits} flits is longer than the {} a message may have", bounds::MAX_COUNT),
        ));
    }
    Ok(TraceRecord { cycle, source, destination, length: flits as u32 })
}

/// One row as read: its four cells, or why it is not a row.
enum Cells {
    Values([Result<u64, String>; 4]),
    /// The column where the row goes wrong, and the problem.
    Malformed(usize, String),
}

/// Where the rows come from.
enum Source {
    Csv { lines: BufReader<File>, line: u64, buffer: Vec<u8> },
    Parquet { batches: ParquetRecordBatchReader, batch: Option<(RecordBatch, usize)>, row: u64 },
}

/// A trace file read as a stream of records. A bad row yields its error and the stream goes
/// on with the next row (so [`scan`] reports them all; a replay stops at the first); an error
/// that leaves nothing readable (an I/O error, a broken Parquet file) ends the stream.
pub struct Reader {
    path: PathBuf,
    source: Source,
    unit: Unit,
    nodes: Option<u32>,
    /// Cycle of the last row whose cycle was good.
    previous: Option<u64>,
    done: bool,
}

/// The format a trace's name declares.
fn is_parquet(path: &Path) -> Result<bool, TraceError> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => Ok(false),
        Some("parquet" | "pq") => Ok(true),
        _ => Err(whole(
            path,
            "unknown trace format: name the file `.csv` (comma-separated text) or `.parquet`",
        )),
    }
}

/// Opens the trace at `path` for streaming: its header is read and checked now. `flit_bytes`
/// is the spec's `trace_flit_bytes`; with `nodes`, a node number must be below it.
pub fn open(
    path: &Path,
    flit_bytes: Option<u32>,
    nodes: Option<u32>,
) -> Result<Reader, TraceError> {
    let parquet = is_parquet(path)?;
    let file = crate::files::open_regular(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_string(),
            _ => format!("cannot be read: {e}"),
        };
        whole(path, &why)
    })?;
    let (source, unit) = if parquet {
        open_parquet(path, file, flit_bytes)?
    } else {
        open_csv(path, file, flit_bytes)?
    };
    Ok(Reader { path: path.to_path_buf(), source, unit, nodes, previous: None, done: false })
}

/// The CSV source, past its header if it has one.
fn open_csv(
    path: &Path,
    file: File,
    flit_bytes: Option<u32>,
) -> Result<(Source, Unit), TraceError> {
    let mut lines = BufReader::new(file);
    let mut buffer = Vec::new();
    let mut line = 0u64;
    // The first line that is neither blank nor a comment: a header, or the first row.
    loop {
        buffer.clear();
        let read = read_line(path, &mut lines, &mut buffer, line + 1)?;
        if read == 0 {
            return Err(whole(path, "the trace holds no messages"));
        }
        line += 1;
        let text = String::from_utf8_lossy(&buffer);
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let first = text.split(',').next().unwrap_or("").trim();
        if first.parse::<f64>().is_ok() {
            // No header: the columns in the documented order, lengths in flits; this line is
            // read again as the first row.
            if flit_bytes.is_some() {
                return Err(located(
                    path,
                    line,
                    4,
                    "a trace without a header gives lengths in flits, so `trace_flit_bytes` \
                     does not apply: add the header `cycle,source,destination,length_bytes` \
                     or leave it out",
                ));
            }
            let pending = buffer.clone();
            return Ok((Source::Csv { lines, line: line - 1, buffer: pending }, Unit::Flits));
        }
        let names: Vec<String> =
            text.split(',').map(|name| name.trim().to_ascii_lowercase()).collect();
        header(&names).map_err(|(column, message)| located(path, line, column, &message))?;
        let unit =
            unit(&names[3], flit_bytes).map_err(|message| located(path, line, 4, &message))?;
        buffer.clear();
        return Ok((Source::Csv { lines, line, buffer }, unit));
    }
}

/// Checks the column names (the fourth, the unit, is checked by [`unit`]).
fn header(names: &[String]) -> Result<(), (usize, String)> {
    for (index, expected) in COLUMNS.iter().enumerate() {
        match names.get(index) {
            Some(name) if name == expected => {}
            Some(name) => {
                return Err((
                    index + 1,
                    format!(
                        "unknown column `{name}`: a trace's columns are `cycle, source, \
                         destination, length` (docs/traces.md)"
                    ),
                ));
            }
            None => return Err((index + 1, format!("the header lacks column `{expected}`"))),
        }
    }
    match names.len() {
        4 => Ok(()),
        3 => Err((
            4,
            "the header lacks the length column (`length`, `length_flits` or `length_bytes`)"
                .into(),
        )),
        n => Err((5, format!("the header has {n} columns; a trace has 4"))),
    }
}

/// Reads one line (at most [`MAX_LINE_BYTES`]) into `buffer`; 0 at the end of the file.
fn read_line(
    path: &Path,
    lines: &mut BufReader<File>,
    buffer: &mut Vec<u8>,
    line: u64,
) -> Result<usize, TraceError> {
    let read = lines
        .by_ref()
        .take(MAX_LINE_BYTES + 1)
        .read_until(b'\n', buffer)
        .map_err(|e| whole(path, &format!("cannot be read at row {line}: {e}")))?;
    if buffer.len() as u64 > MAX_LINE_BYTES {
        return Err(whole(
            path,
            &format!("row {line} is longer than {MAX_LINE_BYTES} bytes: is this a trace?"),
        ));
    }
    Ok(read)
}

/// The Parquet source: its columns checked by name and type.
fn open_parquet(
    path: &Path,
    file: File,
    flit_bytes: Option<u32>,
) -> Result<(Source, Unit), TraceError> {
    let broken = |e: parquet::errors::ParquetError| {
        whole(path, &format!("is not a readable Parquet file: {e}"))
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(broken)?;
    let schema = builder.schema().clone();
    let names: Vec<String> =
        schema.fields().iter().map(|f| f.name().trim().to_ascii_lowercase()).collect();
    header(&names).map_err(|(column, message)| located(path, 1, column, &message))?;
    let unit = unit(&names[3], flit_bytes).map_err(|message| located(path, 1, 4, &message))?;
    for (index, field) in schema.fields().iter().enumerate() {
        let numeric = matches!(
            field.data_type(),
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::UInt8
                | DataType::UInt16
                | DataType::UInt32
                | DataType::UInt64
                | DataType::Float32
                | DataType::Float64
        );
        if !numeric {
            return Err(located(
                path,
                1,
                index + 1,
                &format!(
                    "the column holds {}; a trace's columns hold whole numbers (integers)",
                    field.data_type()
                ),
            ));
        }
    }
    let batches = builder.with_batch_size(PARQUET_BATCH_ROWS).build().map_err(broken)?;
    Ok((Source::Parquet { batches, batch: None, row: 0 }, unit))
}

/// Cell `row` of a numeric Arrow column as a whole number, or why not.
fn cell(array: &dyn Array, row: usize) -> Result<u64, String> {
    use arrow_array::cast::AsArray as _;
    use arrow_array::types::*;
    if array.is_null(row) {
        return Err("the cell is empty (null)".into());
    }
    let signed = |value: i64| u64::try_from(value).map_err(|_| format!("{value} is negative"));
    let real = |value: f64| whole_number(&value.to_string(), u64::MAX);
    match array.data_type() {
        DataType::Int8 => signed(i64::from(array.as_primitive::<Int8Type>().value(row))),
        DataType::Int16 => signed(i64::from(array.as_primitive::<Int16Type>().value(row))),
        DataType::Int32 => signed(i64::from(array.as_primitive::<Int32Type>().value(row))),
        DataType::Int64 => signed(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Ok(u64::from(array.as_primitive::<UInt8Type>().value(row))),
        DataType::UInt16 => Ok(u64::from(array.as_primitive::<UInt16Type>().value(row))),
        DataType::UInt32 => Ok(u64::from(array.as_primitive::<UInt32Type>().value(row))),
        DataType::UInt64 => Ok(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => real(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => real(array.as_primitive::<Float64Type>().value(row)),
        other => Err(format!("the column holds {other}")),
    }
}

impl Reader {
    /// The next row's cells (as whole numbers or problems) and its row number; `None` at the
    /// end. An error that ends the stream is `Err`.
    fn next_cells(&mut self) -> Result<Option<(u64, Cells)>, TraceError> {
        match &mut self.source {
            Source::Csv { lines, line, buffer } => loop {
                if buffer.is_empty() {
                    let read = read_line(&self.path, lines, buffer, *line + 1)?;
                    if read == 0 {
                        return Ok(None);
                    }
                }
                *line += 1;
                let text = String::from_utf8_lossy(buffer).into_owned();
                buffer.clear();
                let text = text.trim();
                if text.is_empty() || text.starts_with('#') {
                    continue;
                }
                let fields: Vec<&str> = text.split(',').map(str::trim).collect();
                if fields.len() != 4 {
                    // Located at the first column the row lacks, or the first one too many.
                    let column = (fields.len() + 1).min(5);
                    let message = format!(
                        "malformed row: {} comma-separated values, a trace row has 4 \
                         (cycle,source,destination,length)",
                        fields.len()
                    );
                    return Ok(Some((*line, Cells::Malformed(column, message))));
                }
                let most = [u64::MAX, u64::from(u32::MAX), u64::from(u32::MAX), u64::MAX];
                let cells = std::array::from_fn(|i| whole_number(fields[i], most[i]));
                return Ok(Some((*line, Cells::Values(cells))));
            },
            Source::Parquet { batches, batch, row } => loop {
                if let Some((current, index)) = batch
                    && *index < current.num_rows()
                {
                    let i = *index;
                    *index += 1;
                    *row += 1;
                    let cells = std::array::from_fn(|c| cell(current.column(c).as_ref(), i));
                    return Ok(Some((*row, Cells::Values(cells))));
                }
                match batches.next() {
                    None => return Ok(None),
                    Some(Ok(next)) => *batch = Some((next, 0)),
                    Some(Err(e)) => {
                        return Err(whole(
                            &self.path,
                            &format!("cannot be read after row {row}: {e}"),
                        ));
                    }
                }
            },
        }
    }
}

impl Iterator for Reader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let (row, cells) = match self.next_cells() {
            Ok(Some(next)) => next,
            Ok(None) => {
                self.done = true;
                return None;
            }
            Err(error) => {
                self.done = true;
                return Some(Err(error));
            }
        };
        let checked = match cells {
            Cells::Values(cells) => record(cells, self.unit, self.nodes, &mut self.previous),
            Cells::Malformed(column, message) => Err((column, message)),
        };
        Some(match checked {
            Ok(record) => Ok(record),
            Err((column, message)) => Err(located(&self.path, row, column, &message)),
        })
    }
}

/// The trace at `path` as a scenario's traffic: hashed (blake3, through
/// [`crate::files::hash_regular`]) and scanned against a network of `nodes` nodes; every
/// problem when it has any (`runner simulate --trace`; specs go through `spec::trace`).
pub fn load(
    path: &Path,
    flit_bytes: Option<u32>,
    nodes: Option<u32>,
) -> Result<crate::scenario::TraceFile, Vec<TraceError>> {
    let blake3 = crate::files::hash_regular(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_string(),
            _ => format!("cannot be read: {e}"),
        };
        vec![whole(path, &why)]
    })?;
    let scanned = scan(path, flit_bytes, nodes);
    if !scanned.problems.is_empty() {
        let mut problems = scanned.problems;
        if scanned.more_problems > 0 {
            problems.push(whole(path, &format!("{} more problems", scanned.more_problems)));
        }
        return Err(problems);
    }
    Ok(crate::scenario::TraceFile {
        path: path.to_path_buf(),
        blake3,
        flit_bytes,
        summary: scanned.summary,
    })
}

/// What [`scan`] found in a whole trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    /// Messages, flits, last cycle and highest node.
    pub summary: TraceSummary,
    /// Where the highest node number is first named: (row, column).
    pub max_node_at: (u64, usize),
    /// The first [`MAX_REPORTED`] problems, located.
    pub problems: Vec<TraceError>,
    /// Problems beyond those.
    pub more_problems: u64,
}

/// Reads the whole trace once (streaming, bounded memory), collecting its summary and every
/// problem (the first [`MAX_REPORTED`] of them located); with `nodes`, a node number must be
/// below it. A file that cannot be opened is one problem.
pub fn scan(path: &Path, flit_bytes: Option<u32>, nodes: Option<u32>) -> Scan {
    let mut out = Scan {
        summary: TraceSummary::default(),
        max_node_at: (0, 0),
        problems: Vec::new(),
        more_problems: 0,
    };
    let mut reader = match open(path, flit_bytes, nodes) {
        Ok(reader) => reader,
        Err(error) => {
            out.problems.push(error);
            return out;
        }
    };
    while let Some(item) = reader.next() {
        match item {
            Ok(record) => {
                let s = &mut out.summary;
                s.messages += 1;
                s.flits = s.flits.saturating_add(u64::from(record.length));
                s.last_cycle = record.cycle;
                // The row just read.
                let row = match &reader.source {
                    Source::Csv { line, .. } => *line,
                    Source::Parquet { row, .. } => *row,
                };
                for (column, node) in [(2, record.source), (3, record.destination)] {
                    if node > s.max_node || out.max_node_at == (0, 0) {
                        out.max_node_at = (row, column);
                        s.max_node = s.max_node.max(node);
                    }
                }
            }
            Err(error) => {
                if out.problems.len() < MAX_REPORTED {
                    out.problems.push(error);
                } else {
                    out.more_problems += 1;
                }
            }
        }
    }
    if out.problems.is_empty() && out.summary.messages == 0 {
        out.problems.push(whole(path, "the trace holds no messages"));
    }
    out
}

#[cfg(test)]
mod tests;
