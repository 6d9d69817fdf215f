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
                columns::shown_text(row_json, name)
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{field_cells, value_cell, varying_fields};
    use crate::report::columns::{self, DESCRIBE_COLUMNS, to_json};
    use crate::scenario::{Scenario, Topology};
    use crate::store::row::Row;

    fn scenario(topology: Topology) -> Value {
        to_json(&Row::of_scenario(&Scenario::new(topology)))
    }

    fn dragonfly(terminals_per_router: u32) -> Value {
        scenario(Topology::Dragonfly {
            terminals_per_router,
            routers_per_group: 4,
            global_links_per_router: 2,
            global_arrangement: crate::scenario::GlobalArrangement::Absolute,
        })
    }

    /// A graph's row: no dimensions (0 in the column) and a radix of its own.
    fn graph() -> Value {
        let mut graph = scenario(Topology::Torus { radix: 8, dimensions: 2 });
        graph["topology"] = json!("graph");
        graph["dimensions"] = json!(0);
        graph["radix"] = json!(5);
        graph
    }

    #[test]
    fn a_dragonfly_or_a_graph_shows_no_radix_or_dimensions_it_does_not_read() {
        // Dragonflies alone: their router radix (p + a - 1 + h) varies with p but is no
        // column, and neither are their two levels.
        let fields = varying_fields(&[dragonfly(2), dragonfly(3)]);
        assert!(!fields.contains(&"radix") && !fields.contains(&"dimensions"), "{fields:?}");
        // Beside a torus: the torus's k and n, a dash (an empty cell) for the others.
        let torus = scenario(Topology::Torus { radix: 8, dimensions: 2 });
        let rows = [torus.clone(), dragonfly(2), graph()];
        let fields = varying_fields(&rows);
        let at = |name: &str| fields.iter().position(|field| *field == name);
        let (Some(k), Some(n)) = (at("radix"), at("dimensions")) else {
            panic!("no k or n column: {fields:?}")
        };
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|row| field_cells(row, &fields).into_iter().map(|cell| cell.text).collect())
            .collect();
        assert_eq!((cells[0][k].as_str(), cells[0][n].as_str()), ("8", "2"), "{cells:?}");
        assert_eq!((cells[1][k].as_str(), cells[1][n].as_str()), ("", ""), "{cells:?}");
        assert_eq!((cells[2][k].as_str(), cells[2][n].as_str()), ("", ""), "{cells:?}");
        // And their descriptions (captions, headings) name neither.
        for row in &rows[1..] {
            let described = columns::describe(row, DESCRIBE_COLUMNS);
            assert!(!described.contains("k = ") && !described.contains("n = "), "{described}");
        }
    }

    #[test]
    fn categorical_cells_read_in_the_field_s_words_without_the_header_s() {
        for (column, value) in
            [("routing", "dimension_order"), ("routing", "ugal"), ("topology", "fat_tree")]
        {
            assert_eq!(value_cell(column, value), columns::value_label(column, value));
        }
        assert_eq!(value_cell("traffic", "bit_complement"), "bit-complement");
        assert_eq!(value_cell("dateline", "per_traversal"), "per traversal");
        assert_eq!(value_cell("tie_break", "random"), "random");
    }
}
