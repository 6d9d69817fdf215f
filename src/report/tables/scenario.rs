//! Naming scenarios in a table: the scenario fields that vary between the rows become columns
//! ([`varying_fields`]), their text values in the field's words ([`field_cells`]), and what all
//! rows share goes into the note in words.

use serde_json::Value;

use super::model::{Cell, Column};
use crate::report::{columns, headers};
use crate::store::row::Row;

/// The scenario fields that tell the given scenarios apart (one JSON object per scenario, in
/// order), in display order: every scenario column whose value is not the same in all of them,
/// less those another shown field implies (the node count N where k or n varies, the second
/// moment of M where M varies, the dateline and tie break where they follow the topology and
/// the routing).
pub(crate) fn varying_fields(scenarios: &[Value]) -> Vec<&'static str> {
    let varies = |name: &str| {
        let mut values = scenarios.iter().map(|json| columns::text(json, name));
        let first = values.next().flatten();
        values.any(|value| value != first)
    };
    // A topology key no scenario's family reads (a dragonfly's router radix) is no column.
    let read = |name: &str| scenarios.iter().any(|json| columns::is_parameter(json, name));
    let varying: Vec<&'static str> = columns::SCENARIO_COLUMNS
        .iter()
        .copied()
        .filter(|name| varies(name) && read(name))
        .collect();
    let shown = |name: &str| varying.contains(&name);
    // Whether each topology and routing has one value of `name` (its default for them: a
    // torus's dateline under dimension order, none on a mesh).
    let follows_routing = |name: &str| {
        let mut seen: Vec<(Vec<Option<String>>, Option<String>)> = Vec::new();
        scenarios.iter().all(|json| {
            let routing = vec![columns::text(json, "topology"), columns::text(json, "routing")];
            let value = columns::text(json, name);
            match seen.iter().find(|(known, _)| *known == routing) {
                Some((_, known)) => *known == value,
                None => {
                    seen.push((routing, value));
                    true
                }
            }
        })
    };
    varying
        .iter()
        .copied()
        .filter(|name| match *name {
            "nodes" => !(shown("radix") || shown("dimensions")),
            "message_length_second_moment" => !shown("message_length"),
            "dateline" | "tie_break" => !(shown("routing") && follows_routing(name)),
            _ => true,
        })
        .collect()
}

/// The first row of every scenario, in the order the scenarios first appear.
pub(super) fn scenario_firsts<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<&'a Row> {
    let mut seen = std::collections::HashSet::new();
    rows.into_iter().filter(|row| seen.insert(row.scenario_id.as_str())).collect()
}

/// The header columns of the scenario fields `fields`.
pub(crate) fn field_columns(fields: &[&str]) -> Vec<Column> {
    fields
        .iter()
        .map(|name| headers::column(name, columns::kind(name) == Some(columns::Kind::Number)))
        .collect()
}

/// The cells of the scenario fields `fields` of a row: numbers, and text values in the
/// field's words ([`value_cell`]); a dash for a topology key the row's family does not read
/// (a dragonfly's radix k in a table with tori).
pub(crate) fn field_cells(row_json: &Value, fields: &[&str]) -> Vec<Cell> {
    fields
        .iter()
        .map(|name| match columns::kind(name) {
            _ if !columns::is_parameter(row_json, name) => Cell::text(""),
            Some(columns::Kind::Number) => Cell::number(columns::number(row_json, name)),
            _ => Cell::text(
                columns::text(row_json, name)
                    .map(|value| value_cell(name, &value))
                    .unwrap_or_default(),
            ),
        })
        .collect()
}

/// A text value of column `name` as a table cell: its label in the field's words
/// ([`columns::value_label`]: `dimension order`, `UGAL-L`), less the words the column's header
/// already says (`uniform`, not `uniform traffic`, under `Traffic`).
fn value_cell(name: &str, value: &str) -> String {
    let label = columns::value_label(name, value);
    let (prefix, suffix) = match name {
        "traffic" => ("", " traffic"),
        "ejection" => ("", " ejection"),
        "tie_break" => ("", " tie-break"),
        "broadcast_order" => ("", " broadcast order"),
        "dateline" => ("dateline ", ""),
        "hotspot_nodes" => ("hot spots ", ""),
        _ => ("", ""),
    };
    let trimmed = label.strip_prefix(prefix).and_then(|rest| rest.strip_suffix(suffix));
    match trimmed {
        Some(words) if !words.is_empty() => words.to_owned(),
        _ => label,
    }
}

/// What the rows share, in words (`torus, k = 8, n = 2, wormhole`), from the first row:
/// the described fields less those shown as columns.
pub(super) fn shared_description(first: Option<&Row>, shown: &[&str]) -> String {
    let constant: Vec<&str> =
        columns::DESCRIBE_COLUMNS.iter().copied().filter(|name| !shown.contains(name)).collect();
    first.map(|first| columns::describe(&columns::to_json(first), &constant)).unwrap_or_default()
}
