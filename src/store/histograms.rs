//! `histograms.parquet`: the latency histogram side table of a bundle, one row per simulated
//! point, quantity and bin.
//!
//! Bins come from the simulator's exact histograms (`sim::percentiles`, carried per task as
//! `Row::histograms`): per-cycle counts (width 1) when a quantity's values span at most
//! `MAX_HISTOGRAM_BINS` cycles, otherwise the smallest power-of-two width that fits, lower
//! edges multiples of the width. An aggregate row's histogram is its replications' counts
//! added (re-binned to the widest width first; aligned power-of-two bins nest, so nothing is
//! split). Empty bins inside the range are rows too (count 0). Columns: `schemas/results.md`,
//! "histograms.parquet".

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field};

use super::parquet::{StoreError, column, columns, read_table, write_table};
use super::point_key::{self, Keyed, PointKey};
use super::row::Row;

/// The side table's file name in the bundle.
pub const FILE: &str = "histograms.parquet";

/// One row of `histograms.parquet`: one bin.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistogramRow {
    /// The point (the identity columns).
    pub key: PointKey,
    /// `latency`, `network_latency` or `source_wait`.
    pub quantity: String,
    /// Lower edge of the bin (cycles; the bin holds values from it up to, not including,
    /// `bin_lower + bin_width`).
    pub bin_lower: u64,
    /// Width of the bin (cycles).
    pub bin_width: u64,
    /// Messages in the bin.
    pub count: u64,
}

impl Keyed for HistogramRow {
    fn key(&self) -> &PointKey {
        &self.key
    }
    fn key_mut(&mut self) -> &mut PointKey {
        &mut self.key
    }
}

columns! {
    HistogramRow;
    quantity: Str,
    bin_lower: U64,
    bin_width: U64,
    count: U64,
}

/// The side table of `rows` (those with histograms).
pub fn histogram_rows(rows: &[Row]) -> Vec<HistogramRow> {
    let mut out = Vec::new();
    for row in rows {
        let Some(histograms) = &row.histograms else { continue };
        for (quantity, binned) in histograms.quantities() {
            let Some(binned) = binned else { continue };
            let key = PointKey::of(row);
            out.extend(binned.bins().map(|(bin_lower, count)| HistogramRow {
                key: key.clone(),
                quantity: quantity.to_owned(),
                bin_lower,
                bin_width: binned.width,
                count,
            }));
        }
    }
    out
}

/// Writes `rows` to `path` atomically.
pub fn write(path: &Path, rows: &[HistogramRow]) -> Result<(), StoreError> {
    let columns = point_key::columns_of(rows, arrays(rows));
    write_table(path, point_key::schema(schema_fields()), columns, &[])
}

/// Reads a `histograms.parquet`.
pub fn read(path: &Path) -> Result<Vec<HistogramRow>, StoreError> {
    let read = |batch: &RecordBatch, rows: &mut Vec<HistogramRow>| {
        point_key::read_keyed(batch, rows, read_batch)
    };
    read_table(path, read).map(|(rows, _)| rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::{Binned, LatencyHistograms};

    #[test]
    fn histogram_rows_list_every_bin_and_round_trip() {
        let row = Row {
            task_id: "t".into(),
            method: "simulation".into(),
            histograms: Some(LatencyHistograms {
                latency: Some(Binned { lower: 10, width: 2, counts: vec![3, 0, 1] }),
                network_latency: None,
                source_wait: Some(Binned { lower: 0, width: 1, counts: vec![4] }),
            }),
            ..Row::default()
        };
        let rows = histogram_rows(&[row, Row::default()]);
        let bins: Vec<(&str, u64, u64, u64)> =
            rows.iter().map(|r| (r.quantity.as_str(), r.bin_lower, r.bin_width, r.count)).collect();
        assert_eq!(
            bins,
            [
                ("latency", 10, 2, 3),
                ("latency", 12, 2, 0),
                ("latency", 14, 2, 1),
                ("source_wait", 0, 1, 4)
            ]
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(FILE);
        write(&path, &rows).expect("write");
        assert_eq!(read(&path).expect("read"), rows);
    }
}
