//! Committed files stay in step with the code: schema, results doc, example specs.

use std::path::Path;

#[test]
fn committed_json_schema_is_current() {
    let committed = std::fs::read_to_string("schemas/experiment.schema.json").expect("schema file");
    assert!(
        committed == runner::spec::json_schema(),
        "schemas/experiment.schema.json is stale: run `cargo run -- schema > schemas/experiment.schema.json`"
    );
}

#[test]
fn results_doc_lists_every_column_with_its_type() {
    let doc = std::fs::read_to_string("schemas/results.md").expect("schemas/results.md");
    for field in runner::store::parquet::schema_fields() {
        let type_name = match field.data_type() {
            arrow_schema::DataType::Utf8 => "string",
            arrow_schema::DataType::UInt32 => "uint32",
            arrow_schema::DataType::UInt64 => "uint64",
            arrow_schema::DataType::Float64 => "float64",
            other => panic!("undocumented Arrow type {other}"),
        };
        let line = format!("| `{}` | {} |", field.name(), type_name);
        assert!(doc.contains(&line), "schemas/results.md lacks the row starting `{line}`");
    }
}

#[test]
fn every_example_spec_validates_and_names_the_schema() {
    let mut count = 0;
    for entry in std::fs::read_dir("experiments").expect("experiments/") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        count += 1;
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.starts_with("# yaml-language-server: $schema=../schemas/experiment.schema.json"),
            "{} does not start with the $schema comment",
            path.display()
        );
        if let Err(error) = runner::spec::load(Path::new(&path)) {
            panic!("{error}");
        }
    }
    assert!(count >= 1);
}
