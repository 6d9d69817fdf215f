//! `results.parquet`: rows <-> Arrow record batches <-> a zstd-compressed Parquet file.
//!
//! The column list below is the one place that maps [`Row`] fields to typed
//! Arrow columns; `schemas/results.md` documents the same list (a test keeps
//! them in step). Files are written to a temporary file and renamed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use super::row::Row;

/// Errors reading or writing results files.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// File system trouble.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Arrow or Parquet trouble.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// Maps the fields of a row type to typed Arrow columns: `columns! { Type; field: Kind, ... }`
/// defines `schema_fields`, `arrays` and `read_batch` in the calling module (the side tables,
/// `store::links` and `store::histograms`, use it too).
macro_rules! columns {
    ($row:ty; $($field:ident: $kind:ident),* $(,)?) => {
        /// Column names and Arrow types, in file order.
        pub fn schema_fields() -> Vec<Field> {
            vec![$(columns!(@field $field, $kind)),*]
        }

        fn arrays(rows: &[$row]) -> Vec<ArrayRef> {
            vec![$(columns!(@write rows, $field, $kind)),*]
        }

        fn read_batch(batch: &RecordBatch, rows: &mut Vec<$row>) -> Result<(), String> {
            let start = rows.len();
            rows.resize(start + batch.num_rows(), <$row>::default());
            let rows = &mut rows[start..];
            $(columns!(@read batch, rows, $field, $kind);)*
            Ok(())
        }
    };
    (@field $field:ident, Str) => { Field::new(stringify!($field), DataType::Utf8, false) };
    (@field $field:ident, OptStr) => { Field::new(stringify!($field), DataType::Utf8, true) };
    (@field $field:ident, U32) => { Field::new(stringify!($field), DataType::UInt32, false) };
    (@field $field:ident, OptU32) => { Field::new(stringify!($field), DataType::UInt32, true) };
    (@field $field:ident, U64) => { Field::new(stringify!($field), DataType::UInt64, false) };
    (@field $field:ident, OptU64) => { Field::new(stringify!($field), DataType::UInt64, true) };
    (@field $field:ident, F64) => { Field::new(stringify!($field), DataType::Float64, false) };
    (@field $field:ident, OptF64) => { Field::new(stringify!($field), DataType::Float64, true) };
    (@write $rows:ident, $field:ident, Str) => {
        Arc::new($rows.iter().map(|r| Some(r.$field.as_str())).collect::<StringArray>()) as ArrayRef
    };
    (@write $rows:ident, $field:ident, OptStr) => {
        Arc::new($rows.iter().map(|r| r.$field.as_deref()).collect::<StringArray>()) as ArrayRef
    };
    (@write $rows:ident, $field:ident, U32) => {
        Arc::new($rows.iter().map(|r| r.$field).collect::<UInt32Array>()) as ArrayRef
    };
    (@write $rows:ident, $field:ident, OptU32) => {
        Arc::new($rows.iter().map(|r| r.$field).collect::<UInt32Array>()) as ArrayRef
    };
    (@write $rows:ident, $field:ident, U64) => {
        Arc::new($rows.iter().map(|r| r.$field).collect::<UInt64Array>()) as ArrayRef
    };
    (@write $rows:ident, $field:ident, OptU64) => {
        Arc::new($rows.iter().map(|r| r.$field).collect::<UInt64Array>()) as ArrayRef
    };
    (@write $rows:ident, $field:ident, F64) => {
        Arc::new($rows.iter().map(|r| r.$field).collect::<Float64Array>()) as ArrayRef
    };
    (@write $rows:ident, $field:ident, OptF64) => {
        Arc::new($rows.iter().map(|r| r.$field).collect::<Float64Array>()) as ArrayRef
    };
    (@read $batch:ident, $rows:ident, $field:ident, Str) => {{
        let a = column::<StringArray>($batch, stringify!($field))?;
        for (i, r) in $rows.iter_mut().enumerate() { r.$field = a.value(i).to_string(); }
    }};
    (@read $batch:ident, $rows:ident, $field:ident, OptStr) => {{
        if let Some(a) = optional_column::<StringArray>($batch, stringify!($field))? {
            for (i, r) in $rows.iter_mut().enumerate() {
                r.$field = a.is_valid(i).then(|| a.value(i).to_string());
            }
        }
    }};
    (@read $batch:ident, $rows:ident, $field:ident, $kind:ident) => {{
        columns!(@readnum $batch, $rows, $field, $kind)
    }};
    (@readnum $batch:ident, $rows:ident, $field:ident, U32) => {{
        let a = column::<UInt32Array>($batch, stringify!($field))?;
        for (i, r) in $rows.iter_mut().enumerate() { r.$field = a.value(i); }
    }};
    (@readnum $batch:ident, $rows:ident, $field:ident, OptU32) => {{
        if let Some(a) = optional_column::<UInt32Array>($batch, stringify!($field))? {
            for (i, r) in $rows.iter_mut().enumerate() { r.$field = a.is_valid(i).then(|| a.value(i)); }
        }
    }};
    (@readnum $batch:ident, $rows:ident, $field:ident, U64) => {{
        let a = column::<UInt64Array>($batch, stringify!($field))?;
        for (i, r) in $rows.iter_mut().enumerate() { r.$field = a.value(i); }
    }};
    (@readnum $batch:ident, $rows:ident, $field:ident, OptU64) => {{
        if let Some(a) = optional_column::<UInt64Array>($batch, stringify!($field))? {
            for (i, r) in $rows.iter_mut().enumerate() { r.$field = a.is_valid(i).then(|| a.value(i)); }
        }
    }};
    (@readnum $batch:ident, $rows:ident, $field:ident, F64) => {{
        let a = column::<Float64Array>($batch, stringify!($field))?;
        for (i, r) in $rows.iter_mut().enumerate() { r.$field = a.value(i); }
    }};
    (@readnum $batch:ident, $rows:ident, $field:ident, OptF64) => {{
        if let Some(a) = optional_column::<Float64Array>($batch, stringify!($field))? {
            for (i, r) in $rows.iter_mut().enumerate() { r.$field = a.is_valid(i).then(|| a.value(i)); }
        }
    }};
}

pub(crate) use columns;

/// Invokes [`columns!`] for [`Row`], with the scenario columns of
/// `scenario::fields::each_column` between the row's identity and its results.
macro_rules! results_columns {
    ($( $(#[$meta:meta])* $name:ident: $kind:ident; )*) => {
        columns! {
            Row;
            experiment: Str,
            task_id: Str,
            scenario_id: Str,
            method: Str,
            evaluator: Str,
            $( $name: $kind, )*
            rate: F64,
            fraction_of_saturation: OptF64,
            trace_time_scale: OptF64,
            trace_flit_load: OptF64,
            saturation_rate: OptF64,
            latency: OptF64,
            latency_ci95: OptF64,
            network_latency: OptF64,
            source_wait: OptF64,
            unicast_latency: OptF64,
            round_trip_latency: OptF64,
            latency_p50: OptF64,
            latency_p90: OptF64,
            latency_p95: OptF64,
            latency_p99: OptF64,
            latency_max: OptF64,
            latency_p50_ci95: OptF64,
            latency_p90_ci95: OptF64,
            latency_p95_ci95: OptF64,
            latency_p99_ci95: OptF64,
            network_latency_p50: OptF64,
            network_latency_p90: OptF64,
            network_latency_p95: OptF64,
            network_latency_p99: OptF64,
            network_latency_max: OptF64,
            source_wait_p50: OptF64,
            source_wait_p90: OptF64,
            source_wait_p95: OptF64,
            source_wait_p99: OptF64,
            source_wait_max: OptF64,
            unicast_latency_p50: OptF64,
            unicast_latency_p90: OptF64,
            unicast_latency_p95: OptF64,
            unicast_latency_p99: OptF64,
            unicast_latency_max: OptF64,
            multiplexing_degree: OptF64,
            channel_rate: OptF64,
            blocking_probability: OptF64,
            throughput: OptF64,
            throughput_ci95: OptF64,
            hops: OptF64,
            status: Str,
            error: OptStr,
            replication: OptU32,
            replications: OptU32,
            seed: OptU64,
            cycles: OptU64,
            flit_hops: OptU64,
            messages_measured: OptU64,
            wall_seconds: F64,
            intermediates: Str,
            fault_seed: OptU64,
            fault_count: OptU64,
            fault_map: OptStr,

            measure: OptStr,
            offered_throughput: OptF64,
            throughput_min: OptF64,
            throughput_max: OptF64,
            flit_throughput: OptF64,
            flit_throughput_min: OptF64,
            flit_throughput_max: OptF64,
            source_drops: OptU64,
            load_grid: OptStr,
        }
    };
}
crate::scenario::fields::each_column!(results_columns);

pub(crate) fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T, String> {
    batch
        .column_by_name(name)
        .ok_or_else(|| format!("column `{name}` is missing"))?
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| format!("column `{name}` has an unexpected type"))
}

/// A nullable column, or `None` when the file has no such column: a file written before the
/// column existed reads with the column null, so `runner report` re-renders older bundles.
pub(crate) fn optional_column<'a, T: 'static>(
    batch: &'a RecordBatch,
    name: &str,
) -> Result<Option<&'a T>, String> {
    match batch.column_by_name(name) {
        None => Ok(None),
        Some(_) => column(batch, name).map(Some),
    }
}

/// The Arrow schema of `results.parquet`.
pub fn schema() -> Schema {
    Schema::new(schema_fields())
}

/// Writes `rows` to `path` atomically, with `metadata` as Parquet key-value metadata.
pub fn write(path: &Path, rows: &[Row], metadata: &[(String, String)]) -> Result<(), StoreError> {
    // The batches of `write_rows`, borrowed: the same arrays, so the same file.
    if rows.is_empty() {
        let batch = std::iter::once(arrays(rows));
        return write_batches(path, schema(), batch, metadata, ROW_GROUP, UNIQUE_COLUMNS);
    }
    let batches = rows.chunks(STREAM_BATCH).map(arrays);
    write_batches(path, schema(), batches, metadata, ROW_GROUP, UNIQUE_COLUMNS)
}

/// [`write`] from an iterator, taking [`STREAM_BATCH`] rows at a time: a results file of any
/// size is written holding no more of its rows than two such batches (`bundle::write_bundle`
/// takes them from `exec::Gather` as they are built). The file is the one [`write`] makes of
/// the same rows: each batch becomes arrays in turn, and the writer cuts row groups of
/// [`ROW_GROUP`] rows whatever the batches.
///
/// Two threads share the work: this one takes the rows from `rows` (for a bundle: reading
/// Solve batches back from the cache, building their rows, collecting the report's fields),
/// a second turns each batch into arrays, frees it, and encodes and compresses the file. The
/// batches pass one at a time (a rendezvous channel), so while the second thread writes one
/// batch, this one builds the next: a 1,000,000-point sweep's `results.parquet` took 11.3 s on
/// one thread (see docs/performance.md).
pub fn write_rows(
    path: &Path,
    rows: impl IntoIterator<Item = Row>,
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    std::thread::scope(|scope| {
        let (send, batches) = std::sync::mpsc::sync_channel::<Vec<Row>>(0);
        let writer = scope.spawn(move || {
            let batches = batches.into_iter().map(|batch| arrays(&batch));
            write_batches(path, schema(), batches, metadata, ROW_GROUP, UNIQUE_COLUMNS)
        });
        // A file of no rows still has one (empty) batch, so that it has its schema's columns.
        // Rows the writer did not take mean it stopped: its error comes from `joined`.
        send_batches(rows.into_iter(), send, true);
        joined(writer)
    })
}

/// Sends `rows` to `send` in batches of [`STREAM_BATCH`] (one empty batch for no rows with
/// `empty_first`) until they run out or the receiver stops taking them, then drops `send`;
/// returns whether the receiver took every row.
fn send_batches(
    mut rows: impl Iterator<Item = Row>,
    send: std::sync::mpsc::SyncSender<Vec<Row>>,
    empty_first: bool,
) -> bool {
    let mut first = true;
    loop {
        let batch: Vec<Row> = rows.by_ref().take(STREAM_BATCH).collect();
        if batch.is_empty() && !(first && empty_first) {
            return true;
        }
        first = false;
        let full = batch.len() == STREAM_BATCH;
        if send.send(batch).is_err() {
            return false;
        }
        if !full {
            return true;
        }
    }
}

/// The value of a scoped thread of this module, its panic resumed on the caller's thread.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The rows [`write_rows`] turns into arrays at once (16,384 rows of about 4 KB: 64 MB).
const STREAM_BATCH: usize = ROW_GROUP / 4;

/// The columns of `results.parquet` whose values hardly ever repeat (a task's hash, a model
/// point's intermediates): written without a dictionary, which for them only costs the time
/// of building one before the writer falls back to plain values (measured on a 1,000,000-row
/// file: about 1% of its writing time; zstd level 1 instead of 3 saved the rest of the 5.7 s
/// to 4.1 s).
const UNIQUE_COLUMNS: &[&str] = &["task_id", "intermediates"];

/// The most rows of one row group of `results.parquet`.
const ROW_GROUP: usize = 65_536;

/// Writes one table of `columns` (in `schema`'s order) to `path` atomically, zstd-compressed,
/// with `metadata` as Parquet key-value metadata.
pub(crate) fn write_table(
    path: &Path,
    schema: Schema,
    columns: Vec<ArrayRef>,
    metadata: &[(String, String)],
) -> Result<(), StoreError> {
    // The Parquet writer's default row group, as these tables have always been written.
    write_batches(path, schema, std::iter::once(columns), metadata, 1 << 20, &[])
}

/// Writes a table given as record batches (each a set of columns in `schema`'s order) to
/// `path` atomically, zstd-compressed, in row groups of at most `row_group` rows, with
/// `metadata` as Parquet key-value metadata; the columns named in `plain` without a dictionary.
fn write_batches(
    path: &Path,
    schema: Schema,
    batches: impl Iterator<Item = Vec<ArrayRef>>,
    metadata: &[(String, String)],
    row_group: usize,
    plain: &[&str],
) -> Result<(), StoreError> {
    let name = path.display().to_string();
    let io = |source| StoreError::Io { path: name.clone(), source };
    let format = |message: String| StoreError::Format { path: name.clone(), message };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let schema = Arc::new(schema);
    let mut properties = WriterProperties::builder();
    for column in plain {
        properties = properties.set_column_dictionary_enabled(ColumnPath::from(*column), false);
    }
    let properties = properties
        .set_max_row_group_row_count(Some(row_group.max(1)))
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).map_err(|e| format(e.to_string()))?,
        ))
        .set_key_value_metadata(Some(
            metadata.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect(),
        ))
        .set_created_by(format!("runner {}", env!("CARGO_PKG_VERSION")))
        .build();
    // A Parquet error while writing is kept as such (a format error naming the path); the
    // temporary file is then dropped and nothing replaces the previous results.
    let mut failure = None;
    crate::files::persist_atomic(path, |file| {
        let written = (|| -> Result<(), parquet::errors::ParquetError> {
            let mut writer =
                ArrowWriter::try_new(file.try_clone()?, schema.clone(), Some(properties))?;
            for columns in batches {
                writer.write(&RecordBatch::try_new(schema.clone(), columns)?)?;
            }
            writer.close()?;
            Ok(())
        })();
        written.map_err(|error| {
            let message = error.to_string();
            failure = Some(message.clone());
            std::io::Error::other(message)
        })
    })
    .map_err(|e| match failure.take() {
        Some(message) => format(message),
        None => io(e),
    })?;
    Ok(())
}

/// The compression codecs `read` understands: ours (zstd) and the ones pandas, pyarrow, polars
/// and DuckDB write by default or on request, except Brotli and LZO.
pub const READABLE_CODECS: &str = "zstd, snappy, gzip, lz4 or uncompressed";

/// Says which codec a "disabled feature" error is about, and what to do, in our words.
fn codec_hint(message: String) -> String {
    match message.split("Disabled feature at compile time: ").nth(1) {
        Some(codec) => format!(
            "compressed with {}, which runner does not read (it reads {READABLE_CODECS}); \
             write it again with one of those, e.g. pandas `to_parquet(..., \
             compression=\"zstd\")`",
            codec.trim()
        ),
        None => message,
    }
}

/// Reads the rows and key-value metadata of a results file.
pub fn read(path: &Path) -> Result<(Vec<Row>, HashMap<String, String>), StoreError> {
    read_table(path, read_batch)
}

/// Calls `each` on every row of a results file in order, a record batch at a time (the file's
/// rows are never all in memory: `runner report` re-renders a bundle of a million rows this
/// way); returns how many there were. A second thread decodes the file into rows, a batch at
/// a time, while `each` takes the batch before on this one (as [`write_rows`] splits the
/// writing).
pub fn read_each(path: &Path, mut each: impl FnMut(Row)) -> Result<usize, StoreError> {
    std::thread::scope(|scope| {
        let (send, batches) = std::sync::mpsc::sync_channel::<Vec<Row>>(0);
        let reader = scope.spawn(move || {
            read_batches(path, Some(STREAM_BATCH), |batch| {
                let mut rows = Vec::new();
                read_batch(batch, &mut rows)?;
                // The caller's thread takes every batch: this fails only if `each` panicked.
                send.send(rows).map_err(|_| "the reading was abandoned".to_string())
            })
        });
        let mut count = 0;
        for rows in batches {
            count += rows.len();
            rows.into_iter().for_each(&mut each);
        }
        joined(reader)?;
        Ok(count)
    })
}

/// The key-value metadata of a results file, from its footer alone (no row is read).
pub fn read_metadata(path: &Path) -> Result<HashMap<String, String>, StoreError> {
    let name = path.display().to_string();
    let file = crate::files::open_regular(path)
        .map_err(|source| StoreError::Io { path: name.clone(), source })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| StoreError::Format { path: name, message: e.to_string() })?;
    Ok(builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kvs| {
            kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default())).collect()
        })
        .unwrap_or_default())
}

/// Whether the results file at `path` holds exactly `rows`, value for value and bit for bit,
/// in every column but those named in `ignore`: compared one record batch at a time as Arrow
/// arrays, the rows taken from their iterator a batch at a time, so neither the file nor the
/// rows are ever whole in memory (a 1,000,000-row file is compared in a few seconds, where
/// reading it into rows took 4 GB). A column the file lacks
/// (written before it existed) matches rows that leave it null, as [`read`] reads it null.
/// `Ok(false)` for anything that differs, the row count included.
///
/// Two threads share the work, as in [`write_rows`]: this one takes the rows from `rows`
/// ([`STREAM_BATCH`] at a time), a second reads the file and compares each of its record
/// batches with the arrays of the rows, while this one builds the next batch.
pub fn holds_rows(
    path: &Path,
    rows: impl IntoIterator<Item = Row>,
    ignore: &[&str],
) -> Result<bool, StoreError> {
    std::thread::scope(|scope| {
        let (send, batches) = std::sync::mpsc::sync_channel::<Vec<Row>>(0);
        let reader = scope.spawn(move || file_holds(path, batches, ignore));
        // Rows the reader did not take: more rows than the file holds, or it stopped early.
        let taken = send_batches(rows.into_iter(), send, false);
        Ok(joined(reader)? && taken)
    })
}

/// [`holds_rows`]'s second thread: whether the file at `path` holds the rows that come in
/// `batches` (of any sizes), and no fewer. Returns as soon as anything differs, dropping
/// `batches`, so the rows not taken show.
fn file_holds(
    path: &Path,
    batches: std::sync::mpsc::Receiver<Vec<Row>>,
    ignore: &[&str],
) -> Result<bool, StoreError> {
    let name = path.display().to_string();
    let format = |message: String| StoreError::Format { path: name.clone(), message };
    let file = crate::files::open_regular(path)
        .map_err(|source| StoreError::Io { path: name.clone(), source })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| format(codec_hint(e.to_string())))?;
    // Batches as `send_batches` sends them: the new rows of two batches are held at once
    // (about 4 KB each), never all of them.
    let reader =
        builder.with_batch_size(STREAM_BATCH).build().map_err(|e| format(e.to_string()))?;
    let fields = schema_fields();
    // The rows received and not compared yet (a batch of the file's may span two of ours).
    let mut ours: Vec<Row> = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| format(e.to_string()))?;
        while ours.len() < batch.num_rows() {
            match batches.recv().ok() {
                Some(more) if ours.is_empty() => ours = more,
                Some(more) => ours.extend(more),
                None => return Ok(false),
            }
        }
        let rest = ours.split_off(batch.num_rows());
        for (field, new) in fields.iter().zip(arrays(&ours)) {
            if ignore.contains(&field.name().as_str()) {
                continue;
            }
            let same = match batch.column_by_name(field.name()) {
                Some(old) => old.to_data() == new.to_data(),
                None => new.null_count() == new.len(),
            };
            if !same {
                return Ok(false);
            }
        }
        ours = rest;
    }
    Ok(ours.is_empty())
}

/// Reads a table's rows, each record batch through `read_batch`, and its key-value metadata.
pub(crate) fn read_table<T>(
    path: &Path,
    read_batch: fn(&RecordBatch, &mut Vec<T>) -> Result<(), String>,
) -> Result<(Vec<T>, HashMap<String, String>), StoreError> {
    let mut rows = Vec::new();
    let metadata = read_batches(path, None, |batch| read_batch(batch, &mut rows))?;
    Ok((rows, metadata))
}

/// Reads the table at `path` a record batch at a time (of `batch_size` rows, or the reader's
/// default), calling `each` on each batch; returns the file's key-value metadata.
fn read_batches(
    path: &Path,
    batch_size: Option<usize>,
    mut each: impl FnMut(&RecordBatch) -> Result<(), String>,
) -> Result<HashMap<String, String>, StoreError> {
    let name = path.display().to_string();
    let format = |message: String| StoreError::Format { path: name.clone(), message };
    // A regular file only: a FIFO or a link to a device in its place is refused, not read.
    let file = crate::files::open_regular(path)
        .map_err(|source| StoreError::Io { path: name.clone(), source })?;
    let format = |message: String| format(codec_hint(message));
    let mut builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| format(e.to_string()))?;
    let metadata: HashMap<String, String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kvs| {
            kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default())).collect()
        })
        .unwrap_or_default();
    if let Some(batch_size) = batch_size {
        builder = builder.with_batch_size(batch_size);
    }
    let reader = builder.build().map_err(|e| format(e.to_string()))?;
    for batch in reader {
        let batch = batch.map_err(|e| format(e.to_string()))?;
        each(&batch).map_err(format)?;
    }
    Ok(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Row> {
        vec![Row {
            experiment: "e".into(),
            status: "ok".into(),
            latency: Some(41.5),
            broadcast_order: Some("random".into()),
            circuit_backoff: Some(3),
            intermediates: "{}".into(),
            ..Row::default()
        }]
    }

    /// `write_rows` takes its rows from an iterator a batch at a time and makes the file
    /// `write` makes of them, byte for byte, over several batches and row groups, and
    /// `read_each` gives them back a batch at a time; no rows make a file of no rows.
    #[test]
    fn rows_streamed_make_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let rows: Vec<Row> = (0..ROW_GROUP + STREAM_BATCH + 5)
            .map(|i| Row {
                rate: i as f64,
                status: if i % 5 == 0 { "saturated" } else { "ok" }.into(),
                latency: (i % 3 != 0).then_some(i as f64 / 7.0),
                intermediates: format!("{{\"k\":{i}}}"),
                ..Row::default()
            })
            .collect();
        let metadata = [("key".to_string(), "value".to_string())];
        let (whole, streamed) =
            (dir.path().join("whole.parquet"), dir.path().join("streamed.parquet"));
        write(&whole, &rows, &metadata).unwrap();
        write_rows(&streamed, rows.iter().cloned(), &metadata).unwrap();
        assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&streamed).unwrap());
        // Read back a batch at a time: the rows `read` gives, in order.
        let mut back = Vec::new();
        assert_eq!(read_each(&streamed, |row| back.push(row)).unwrap(), rows.len());
        assert_eq!(back, read(&streamed).unwrap().0);
        write(&whole, &[], &metadata).unwrap();
        write_rows(&streamed, std::iter::empty(), &metadata).unwrap();
        assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&streamed).unwrap());
        assert!(read(&streamed).unwrap().0.is_empty());
    }

    /// `holds_rows` compares batch by batch, bit for bit, every column but the ignored ones,
    /// and the row count; a column the file lacks holds only nulls.
    #[test]
    fn a_file_holds_exactly_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.parquet");
        let rows: Vec<Row> = (0..ROW_GROUP + 3)
            .map(|i| Row {
                rate: i as f64,
                status: "ok".into(),
                latency: (i % 3 != 0).then_some(i as f64 / 7.0),
                wall_seconds: 0.5,
                ..Row::default()
            })
            .collect();
        write(&path, &rows, &[]).unwrap();
        let holds = |rows: &[Row]| holds_rows(&path, rows.to_vec(), &["wall_seconds"]).unwrap();
        assert!(holds(&rows));
        let mut timed = rows.clone();
        timed[ROW_GROUP + 1].wall_seconds = 9.0;
        assert!(holds(&timed), "wall_seconds is ignored");
        assert!(!holds_rows(&path, timed.clone(), &[]).unwrap());
        let mut moved = rows.clone();
        moved[ROW_GROUP + 1].latency = moved[ROW_GROUP + 1].latency.map(|l| l + 1e-12);
        assert!(!holds(&moved), "a value in the last batch");
        let mut nulled = rows.clone();
        nulled[1].latency = None;
        assert!(!holds(&nulled), "a null where a value was");
        let mut signed = rows.clone();
        signed[0].rate = -0.0;
        assert!(!holds(&signed), "-0 is not 0, bit for bit");
        assert!(!holds(&rows[..rows.len() - 1]), "a row fewer");
        let mut more = rows.clone();
        more.push(rows[0].clone());
        assert!(!holds(&more), "a row more");
        // Rows that fill the file's batches exactly and then one more: the reader has taken
        // every batch it needs when the extra one comes.
        let whole = dir.path().join("whole.parquet");
        write(&whole, &rows[..2 * STREAM_BATCH], &[]).unwrap();
        assert!(holds_rows(&whole, rows[..2 * STREAM_BATCH].to_vec(), &[]).unwrap());
        assert!(!holds_rows(&whole, rows[..2 * STREAM_BATCH + 1].to_vec(), &[]).unwrap());
        assert!(!holds_rows(&whole, rows[..2 * STREAM_BATCH - 1].to_vec(), &[]).unwrap());
        // A file without the `circuit_backoff` column holds rows that leave it null only.
        let short = dir.path().join("short.parquet");
        let mut fields = schema_fields();
        let mut columns = arrays(&rows[..2]);
        let at = fields.iter().position(|f| f.name() == "circuit_backoff").unwrap();
        fields.remove(at);
        columns.remove(at);
        write_table(&short, Schema::new(fields), columns, &[]).unwrap();
        assert!(holds_rows(&short, rows[..2].to_vec(), &[]).unwrap());
        let mut backoff = rows[..2].to_vec();
        backoff[0].circuit_backoff = Some(3);
        assert!(!holds_rows(&short, backoff.clone(), &[]).unwrap());
    }

    /// More rows than one row group holds: written group by group, read back whole and in
    /// order; an empty table is still a readable file.
    #[test]
    fn a_large_table_is_written_in_row_groups_and_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.parquet");
        let rows: Vec<Row> = (0..ROW_GROUP + 3)
            .map(|i| Row { rate: i as f64, status: "ok".into(), ..Row::default() })
            .collect();
        write(&path, &rows, &[("k".into(), "v".into())]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        assert_eq!(builder.metadata().num_row_groups(), 2);
        let (back, metadata) = read(&path).unwrap();
        assert_eq!(back.len(), rows.len());
        assert!(back.iter().enumerate().all(|(i, row)| row.rate == i as f64));
        assert_eq!(metadata["k"], "v");
        write(&path, &[], &[]).unwrap();
        assert!(read(&path).unwrap().0.is_empty());
    }

    /// The scenario columns of `results.parquet` are the scenario table's, in its order, each
    /// numeric or text as the table says.
    #[test]
    fn the_scenario_columns_are_the_scenario_table_s() {
        use crate::scenario::fields;
        let schema = schema();
        let in_file: Vec<&str> = schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .filter(|name| fields::get(name).is_some())
            .collect();
        let in_table: Vec<&str> = fields::columns().map(|f| f.name).collect();
        assert_eq!(in_file, in_table);
        for field in fields::columns() {
            let data_type = schema.field_with_name(field.name).expect("column").data_type();
            let text = matches!(data_type, arrow_schema::DataType::Utf8);
            assert_eq!(!text, field.value.is_number(), "{}: {data_type}", field.name);
        }
    }

    #[test]
    fn rows_round_trip() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("results.parquet");
        write(&path, &sample(), &[("k".into(), "v".into())]).expect("write");
        let (rows, metadata) = read(&path).expect("read");
        assert_eq!(rows, sample());
        assert_eq!(metadata.get("k").map(String::as_str), Some("v"));
    }

    /// A results file re-written by pandas or pyarrow (snappy by default) or another tool
    /// with a common codec reads back the same rows.
    #[test]
    fn common_codecs_are_read() {
        use parquet::basic::GzipLevel;
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, compression) in [
            ("snappy", Compression::SNAPPY),
            ("gzip", Compression::GZIP(GzipLevel::default())),
            ("lz4_raw", Compression::LZ4_RAW),
            ("lz4", Compression::LZ4),
            ("none", Compression::UNCOMPRESSED),
        ] {
            let path = dir.path().join(format!("{name}.parquet"));
            let schema = Arc::new(schema());
            let batch = RecordBatch::try_new(schema.clone(), arrays(&sample())).expect("batch");
            let properties = WriterProperties::builder().set_compression(compression).build();
            let file = std::fs::File::create(&path).expect("create");
            let mut writer = ArrowWriter::try_new(file, schema, Some(properties)).expect("writer");
            writer.write(&batch).expect("write");
            writer.close().expect("close");
            let (rows, _) = read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(rows, sample(), "{name}");
        }
    }

    #[test]
    fn an_unsupported_codec_is_named() {
        let hint = codec_hint("Disabled feature at compile time: brotli".into());
        assert!(hint.contains("compressed with brotli") && hint.contains("zstd"), "{hint}");
        assert_eq!(codec_hint("other".into()), "other");
    }

    #[test]
    fn a_fifo_is_refused_not_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("results.parquet");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(status.success());
        let error = read(&fifo).expect_err("a FIFO");
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }

    /// A file written before a nullable column existed reads with that column null; a
    /// missing non-nullable column is still an error.
    #[test]
    fn an_older_file_without_a_nullable_column_reads_it_as_null() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write_without = |dropped: &str| {
            let path = dir.path().join(format!("without_{dropped}.parquet"));
            let (fields, columns): (Vec<Field>, Vec<ArrayRef>) = schema_fields()
                .into_iter()
                .zip(arrays(&sample()))
                .filter(|(field, _)| field.name() != dropped)
                .unzip();
            let schema = Arc::new(Schema::new(fields));
            let batch = RecordBatch::try_new(schema.clone(), columns).expect("batch");
            let file = std::fs::File::create(&path).expect("create");
            let mut writer = ArrowWriter::try_new(file, schema, None).expect("writer");
            writer.write(&batch).expect("write");
            writer.close().expect("close");
            path
        };
        let (rows, _) = read(&write_without("circuit_backoff")).expect("read");
        let expected = Row { circuit_backoff: None, ..sample()[0].clone() };
        assert_eq!(rows, vec![expected]);
        let error = read(&write_without("status")).expect_err("required column");
        assert!(error.to_string().contains("column `status` is missing"), "{error}");
    }
}
