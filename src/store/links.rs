//! `links.parquet`: the per-link load side table of a bundle, one row per simulated point and
//! physical link (and per virtual channel where the spec asks for it).
//!
//! The rows of `results.parquet` carry each point's flit counts as one compact array per task
//! (`Row::link_loads`, through the cache); this module names the links (`sim::links`, from the
//! scenario's topology) and writes the tidy table. Identity columns (`task_id`, `scenario_id`,
//! `method`, `replication`, `rate`, `fraction_of_saturation`) join it with `results.parquet`
//! (`task_id` alone is unique there). Columns: `schemas/results.md`, "links.parquet".

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field};

use super::parquet::{StoreError, column, columns, optional_column, read_table, write_table};
use super::point_key::{self, Keyed, PointKey};
use super::row::Row;
use crate::scenario::Scenario;

/// The side table's file name in the bundle.
pub const FILE: &str = "links.parquet";

/// One row of `links.parquet`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkRow {
    /// The point (the identity columns).
    pub key: PointKey,
    /// The topology (`torus`, `mesh`, ...).
    pub topology: String,
    /// Column `channel` (`sim::links::Link::channel`).
    pub channel: u32,
    /// Column `source`: the router id the link leaves.
    pub source: u32,
    /// Column `destination`: the router id it enters.
    pub destination: u32,
    /// Column `source_name` (`Link::source_name`).
    pub source_name: String,
    /// Column `destination_name` (`Link::destination_name`).
    pub destination_name: String,
    /// Column `direction` (`Link::direction`).
    pub direction: String,
    /// Column `class` (`Link::class`).
    pub class: String,
    /// The virtual channel of a per-VC row; null for the physical link's row.
    pub virtual_channel: Option<u32>,
    /// Flits that crossed the link (or VC) in the measurement window(s).
    pub flits: u64,
    /// Cycles of the measurement window (summed over replications in an aggregate row).
    pub window_cycles: u64,
    /// `flits / window_cycles`: flits per cycle, 1 for a link that never idled.
    pub utilization: f64,
}

impl Keyed for LinkRow {
    fn key(&self) -> &PointKey {
        &self.key
    }
    fn key_mut(&mut self) -> &mut PointKey {
        &mut self.key
    }
}

columns! {
    LinkRow;
    topology: Str,
    channel: U32,
    source: U32,
    destination: U32,
    source_name: Str,
    destination_name: Str,
    direction: Str,
    class: Str,
    virtual_channel: OptU32,
    flits: U64,
    window_cycles: U64,
    utilization: F64,
}

/// The side table of `rows` (those with link loads), naming links from `scenarios` (matched
/// by `scenario_id`). A row whose counts do not match its topology's links is an error.
pub fn link_rows(rows: &[Row], scenarios: &[&Scenario]) -> Result<Vec<LinkRow>, String> {
    let by_id: HashMap<String, &Scenario> =
        scenarios.iter().map(|scenario| (super::build::scenario_id(scenario), *scenario)).collect();
    let mut names: HashMap<&str, Vec<crate::sim::links::Link>> = HashMap::new();
    let mut out = Vec::new();
    for row in rows {
        let Some(loads) = &row.link_loads else { continue };
        if !names.contains_key(row.scenario_id.as_str()) {
            let scenario = by_id.get(&row.scenario_id).ok_or_else(|| {
                format!("task {}: no scenario of the spec has id {}", row.task_id, row.scenario_id)
            })?;
            let links = crate::sim::links::links(&scenario.topology)
                .map_err(|e| format!("task {}: {e}", row.task_id))?;
            names.insert(&row.scenario_id, links);
        }
        let links = &names[row.scenario_id.as_str()];
        if links.len() != loads.flits.len() {
            return Err(format!(
                "task {}: {} link counts for a network of {} links",
                row.task_id,
                loads.flits.len(),
                links.len()
            ));
        }
        let per_vc = loads.vc_flits.len() / links.len().max(1);
        let cycles = loads.window_cycles;
        let utilization = |flits: u64| if cycles > 0 { flits as f64 / cycles as f64 } else { 0.0 };
        for (index, (link, &flits)) in links.iter().zip(&loads.flits).enumerate() {
            let base = LinkRow {
                key: PointKey::of(row),
                topology: row.topology.clone(),
                channel: link.channel,
                source: link.source,
                destination: link.destination,
                source_name: link.source_name.clone(),
                destination_name: link.destination_name.clone(),
                direction: link.direction.clone(),
                class: link.class.clone(),
                virtual_channel: None,
                flits,
                window_cycles: cycles,
                utilization: utilization(flits),
            };
            for vc in 0..per_vc {
                let flits = loads.vc_flits[index * per_vc + vc];
                out.push(LinkRow {
                    virtual_channel: Some(vc as u32),
                    flits,
                    utilization: utilization(flits),
                    ..base.clone()
                });
            }
            out.push(base);
        }
    }
    Ok(out)
}

/// Writes `rows` to `path` atomically.
pub fn write(path: &Path, rows: &[LinkRow]) -> Result<(), StoreError> {
    let columns = point_key::columns_of(rows, arrays(rows));
    write_table(path, point_key::schema(schema_fields()), columns, &[])
}

/// Reads a `links.parquet`.
pub fn read(path: &Path) -> Result<Vec<LinkRow>, StoreError> {
    let read = |batch: &RecordBatch, rows: &mut Vec<LinkRow>| {
        point_key::read_keyed(batch, rows, read_batch)
    };
    read_table(path, read).map(|(rows, _)| rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurement::LinkLoads;
    use crate::scenario::Topology;

    #[test]
    fn link_rows_name_every_link_and_round_trip() {
        let scenario = Scenario::new(Topology::Mesh { radix: 2, dimensions: 2 });
        let row = Row {
            task_id: "t".into(),
            scenario_id: crate::store::build::scenario_id(&scenario),
            method: "simulation".into(),
            topology: "mesh".into(),
            rate: 0.1,
            link_loads: Some(LinkLoads {
                window_cycles: 10,
                flits: (0..8).collect(),
                vc_flits: (0..8).flat_map(|f| [f, 0]).collect(),
            }),
            ..Row::default()
        };
        let rows = link_rows(std::slice::from_ref(&row), &[&scenario]).expect("rows");
        assert_eq!(rows.len(), 8 * 3, "a link row and two VC rows per link");
        let links: Vec<&LinkRow> = rows.iter().filter(|r| r.virtual_channel.is_none()).collect();
        assert_eq!(links.iter().map(|r| r.flits).sum::<u64>(), 28);
        assert_eq!((links[1].flits, links[1].utilization), (1, 0.1));
        assert_eq!((links[0].source_name.as_str(), links[0].direction.as_str()), ("(0,0)", "+x0"));
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(FILE);
        write(&path, &rows).expect("write");
        assert_eq!(read(&path).expect("read"), rows);
        let wrong = Row { link_loads: Some(LinkLoads::default()), ..row };
        assert!(link_rows(&[wrong], &[&scenario]).is_err(), "no counts for 8 links");
    }
}
