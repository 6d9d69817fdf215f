//! The identity columns every side table of a bundle starts with (`links.parquet`,
//! `histograms.parquet`): which result row, and so which point, a side-table row belongs to.
//! `task_id` joins with `results.parquet`; the others save a join for the usual questions.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema};

use super::parquet::{column, columns, optional_column};
use super::row::Row;

/// The point a side-table row belongs to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointKey {
    /// The task of the result row (join key with `results.parquet`).
    pub task_id: String,
    /// The scenario's short hash.
    pub scenario_id: String,
    /// `simulation` (the built-in simulator).
    pub method: String,
    /// Replication index; null for the aggregate row of a point (all its replications).
    pub replication: Option<u32>,
    /// Offered load (messages/node/cycle).
    pub rate: f64,
    /// The load as a fraction of the model's saturation rate, when known.
    pub fraction_of_saturation: Option<f64>,
}

columns! {
    PointKey;
    task_id: Str,
    scenario_id: Str,
    method: Str,
    replication: OptU32,
    rate: F64,
    fraction_of_saturation: OptF64,
}

impl PointKey {
    /// The key of a result row.
    pub fn of(row: &Row) -> PointKey {
        PointKey {
            task_id: row.task_id.clone(),
            scenario_id: row.scenario_id.clone(),
            method: row.method.clone(),
            replication: row.replication,
            rate: row.rate,
            fraction_of_saturation: row.fraction_of_saturation,
        }
    }
}

/// A side-table row: its key plus its own columns.
pub(crate) trait Keyed: Default {
    fn key(&self) -> &PointKey;
    fn key_mut(&mut self) -> &mut PointKey;
}

/// The schema of a side table: the key's columns, then `own`.
pub(crate) fn schema(own: Vec<Field>) -> Schema {
    Schema::new([schema_fields(), own].concat())
}

/// The columns of a side table: the key's, then `own`.
pub(crate) fn columns_of<T: Keyed>(rows: &[T], own: Vec<ArrayRef>) -> Vec<ArrayRef> {
    let keys: Vec<PointKey> = rows.iter().map(|row| row.key().clone()).collect();
    [arrays(&keys), own].concat()
}

/// Reads a record batch of a side table: its own columns through `read_own`, then the keys.
pub(crate) fn read_keyed<T: Keyed>(
    batch: &RecordBatch,
    rows: &mut Vec<T>,
    read_own: fn(&RecordBatch, &mut Vec<T>) -> Result<(), String>,
) -> Result<(), String> {
    let start = rows.len();
    read_own(batch, rows)?;
    let mut keys = Vec::with_capacity(batch.num_rows());
    read_batch(batch, &mut keys)?;
    for (row, key) in rows[start..].iter_mut().zip(keys) {
        *row.key_mut() = key;
    }
    Ok(())
}
