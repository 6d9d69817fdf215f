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
    // Its `evaluator` example names the evaluator versions of this build, not old ones.
    for version in [runner::model::VERSION, runner::sim::VERSION] {
        assert!(
            doc.contains(version),
            "schemas/results.md names no `{version}`: update the example"
        );
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

/// Every file the repository ships, as (path, text), below the folders a clone holds (build
/// output and VCS metadata excluded). Binary files are skipped.
fn repository_text_files() -> Vec<(std::path::PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if matches!(name.to_str(), Some("target" | ".git" | "reports" | ".runner" | "fuzz")) {
                // `fuzz/` is scanned on its own below, without its build output.
                if name.to_str() == Some("fuzz") {
                    walk_fuzz(&path, out);
                }
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path, text));
            }
        }
    }
    fn walk_fuzz(dir: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if matches!(entry.file_name().to_str(), Some("target" | "corpus" | "artifacts")) {
                continue;
            }
            if path.is_dir() {
                walk_fuzz(&path, out);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new("."), &mut out);
    out
}

#[test]
fn nothing_points_outside_the_repository() {
    // Built from pieces so that this file does not match itself.
    let outside = [
        ["..", "/shared"].concat(),
        ["shared", "/papers"].concat(),
        ["shared", "/errata"].concat(),
        ["/work", "/shared"].concat(),
    ];
    let paper_files = [
        "ss-torus-scouting-switching",
        "hypercube-unicast-broadcast",
        "cs-torus-faults",
        "nbc-torus-adaptive",
        "bft-wormhole-greenberg",
    ]
    .map(|stem| [stem, ".txt"].concat());
    let files = repository_text_files();
    assert!(files.len() > 50, "only {} files found: run from the repository root", files.len());
    let mut problems = Vec::new();
    for (path, text) in &files {
        for (number, line) in text.lines().enumerate() {
            for needle in outside.iter().chain(&paper_files) {
                if line.contains(needle.as_str()) {
                    problems.push(format!("{}:{}: {}", path.display(), number + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the repository must stand alone; cite papers by reference and reading decisions by their \
         docs/errata.md tag:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_errata_tag_cited_in_the_code_is_in_docs_errata() {
    let errata = std::fs::read_to_string("docs/errata.md").expect("docs/errata.md");
    let mut missing = Vec::new();
    let mut cited = 0;
    for (path, text) in repository_text_files() {
        if path.extension().is_none_or(|e| e != "rs" && e != "yaml" && e != "md") {
            continue;
        }
        for tag in errata_tags(&text) {
            cited += 1;
            if !errata.contains(&format!("| {tag} |")) {
                missing.push(format!("{}: {tag}", path.display()));
            }
        }
    }
    assert!(cited > 20, "only {cited} errata tags found in the code");
    assert!(missing.is_empty(), "tags with no row in docs/errata.md:\n{}", missing.join("\n"));
}

/// The reading-decision tags in a text: `E-` then capitals, `-`, digits (`E-SS-3`, `E-NBC-1`).
fn errata_tags(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while i + 2 < bytes.len() {
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if boundary && bytes[i] == b'E' && bytes[i + 1] == b'-' {
            let mut j = i + 2;
            while j < bytes.len() && bytes[j].is_ascii_uppercase() {
                j += 1;
            }
            if j > i + 2 && j + 1 < bytes.len() && bytes[j] == b'-' && bytes[j + 1].is_ascii_digit()
            {
                let mut k = j + 1;
                while k < bytes.len() && bytes[k].is_ascii_digit() {
                    k += 1;
                }
                tags.push(text[i..k].to_string());
                i = k;
                continue;
            }
        }
        i += 1;
    }
    tags
}
