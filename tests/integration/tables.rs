//! The report's tables against `results.parquet`: the per-load comparison table holds, row for
//! row, what the Parquet file holds (issue 20), in the CSV and in the paper-facing Markdown and
//! LaTeX, and no paper-facing table shows a hash id.

use std::collections::BTreeSet;

use runner::store::row::Row;

use crate::common::{Scratch, stderr};

/// Model and a short simulation of two scenarios, from light load to past the model's
/// saturation: ok points, simulations that saturate while the model is finite, and loads
/// where both saturate.
const COMPARISON_SPEC: &str = "\
name: small_comparison
seed: 11
scenario:
  topology: {kind: torus, radix: 8, dimensions: 2}
  switching: {kind: wormhole}
  routing: nbc
  virtual_channels: 10
  message_length: [16, 32]
load:
  fraction_of_saturation: {from: 0.1, to: 1.1, points: 6}
methods:
  model: {name: nbc_torus}
  simulation: {cycles: 3000, warmup_cycles: 500, replications: 3}
report:
  figures: []
  tables: [model_vs_simulation, comparison, results]
";

/// Hypercubes without broadcasts under the broadcast model: the comparison reads the model's
/// unicast latency, and says so.
const UNICAST_SPEC: &str = "\
name: small_unicast
seed: 12
scenario:
  topology: {kind: hypercube, dimensions: 5}
  switching: {kind: wormhole}
  routing: duato
  virtual_channels: [2, 4]
  message_length: 16
  ejection: unlimited
  traffic: {pattern: broadcast_mix, broadcast_fraction: 0, startup_latency: 1}
load:
  fraction_of_saturation: {from: 0.2, to: 0.8, points: 3}
methods:
  model: {name: broadcast_hypercube}
  simulation: {cycles: 3000, warmup_cycles: 500, replications: 2}
report:
  figures: []
  tables: [comparison]
";

/// The fields of one CSV line (quoted fields may hold commas and doubled quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let (mut quoted, mut chars) = (false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().expect("field").push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().expect("field").push(c),
        }
    }
    fields
}

/// An optional number as the CSV writes it (empty for none; shortest round-trip text).
fn number(value: Option<f64>) -> String {
    value.map(|value| value.to_string()).unwrap_or_default()
}

/// A model row's latency column by name.
fn model_column(model: &Row, name: &str) -> Option<f64> {
    match name {
        "latency" => model.latency,
        "unicast_latency" => model.unicast_latency,
        other => panic!("model_latency_column `{other}`"),
    }
}

/// Whether `text` is `value` rounded to the decimals it shows, and how many it shows (the
/// tables give each number column one count of decimals).
fn rounds(text: &str, value: f64) -> Option<usize> {
    let shown: f64 = text.replace('\u{2212}', "-").parse().ok()?;
    let decimals = text.split_once('.').map_or(0, |(_, fraction)| fraction.len());
    let step = 10f64.powi(-(decimals as i32));
    ((shown - value).abs() <= 0.5 * step * (1.0 + 1e-9)).then_some(decimals)
}

#[test]
fn the_comparison_table_matches_results_parquet_row_for_row() {
    let (rows, csv) = check_comparison(COMPARISON_SPEC, "small_comparison");
    let statuses: BTreeSet<(&str, &str)> = rows
        .iter()
        .filter(|row| row.method == "model")
        .filter_map(|model| Some((model.status.as_str(), aggregate(&rows, model)?.status.as_str())))
        .collect();
    for expected in [("ok", "ok"), ("ok", "saturated"), ("saturated", "saturated")] {
        assert!(statuses.contains(&expected), "the spec covers {expected:?}: {statuses:?}");
    }
    assert!(csv.lines().skip(1).all(|line| line.contains(",latency,")), "{csv}");
}

/// Where the model's unicast latency is compared, the CSV names that column and the note
/// says so.
#[test]
fn a_unicast_comparison_names_the_model_column_it_reads() {
    let (rows, csv) = check_comparison(UNICAST_SPEC, "small_unicast");
    assert!(csv.lines().skip(1).all(|line| line.contains(",unicast_latency,")), "{csv}");
    assert!(rows.iter().any(|row| row.method == "model" && row.latency != row.unicast_latency));
}

/// The aggregate simulation row at the model row's point.
fn aggregate<'a>(rows: &'a [Row], model: &Row) -> Option<&'a Row> {
    rows.iter().find(|row| {
        row.method == "simulation"
            && row.replication.is_none()
            && row.scenario_id == model.scenario_id
            && row.rate == model.rate
    })
}

/// Runs `spec` and checks its comparison table against its `results.parquet` row for row:
/// the CSV exactly, the Markdown as displayed; no paper-facing table shows a hash id. Returns
/// the rows and the CSV.
fn check_comparison(spec: &str, name: &str) -> (Vec<Row>, String) {
    let scratch = Scratch::new();
    scratch.spec("c.yaml", spec);
    let output = scratch.run(&["run", "c.yaml", "-q"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let rows = scratch.rows(name);
    let bundle = scratch.path().join("reports").join(name);
    let read = |relative: &str| {
        std::fs::read_to_string(bundle.join(relative))
            .unwrap_or_else(|error| panic!("read {relative}: {error}"))
    };
    // The tables show the spec's load points; the dense model curves are for the figures.
    let models: Vec<&Row> =
        rows.iter().filter(|row| row.method == "model" && !row.is_dense()).collect();
    assert!(rows.iter().any(Row::is_dense), "the run has dense model curves too");
    let aggregate = |model: &Row| aggregate(&rows, model);
    // Every simulated point has its model point in these specs, so the pairs are the model rows.
    let simulated =
        rows.iter().filter(|row| row.method == "simulation" && row.replication.is_none());
    assert_eq!(simulated.clone().count(), models.len(), "one aggregate per model point");
    assert!(simulated.clone().all(|sim| {
        models.iter().any(|model| model.scenario_id == sim.scenario_id && model.rate == sim.rate)
    }));

    let csv = read("tables/comparison.csv");
    let mut lines = csv.lines();
    let header = csv_fields(lines.next().expect("header"));
    let column = |name: &str| {
        header.iter().position(|field| field == name).unwrap_or_else(|| panic!("no {name}"))
    };
    let lines: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert_eq!(lines.len(), models.len(), "one CSV line per (scenario, rate):\n{csv}");
    for (fields, model) in lines.iter().zip(&models) {
        let sim = aggregate(model).expect("aggregate row");
        let field = |name: &str| fields[column(name)].as_str();
        let context = format!("{fields:?} against {model:?} and {sim:?}");
        assert_eq!(field("scenario_id"), model.scenario_id, "{context}");
        assert_eq!(field("rate"), model.rate.to_string(), "{context}");
        assert_eq!(field("fraction_of_saturation"), number(model.fraction_of_saturation));
        let comparable = model_column(model, field("model_latency_column"));
        assert_eq!(field("model_latency"), number(comparable), "{context}");
        assert_eq!(field("model_status"), model.status, "{context}");
        assert_eq!(field("simulation_latency"), number(sim.latency), "{context}");
        assert_eq!(field("simulation_latency_ci95"), number(sim.latency_ci95), "{context}");
        assert_eq!(
            field("simulation_replications"),
            number(sim.replications.map(f64::from)),
            "{context}"
        );
        assert_eq!(field("simulation_status"), sim.status, "{context}");
        // An imprecise simulation (short of its target precision) is compared too.
        let stable = |status: &str| matches!(status, "ok" | "imprecise");
        let both_ok = stable(&model.status) && stable(&sim.status);
        match (comparable, sim.latency) {
            (Some(m), Some(s)) if both_ok => {
                let error: f64 = field("signed_relative_error").parse().expect("error");
                assert!((error - (m - s) / s).abs() <= 1e-12 * error.abs().max(1.0), "{context}");
            }
            _ => assert_eq!(field("signed_relative_error"), "", "{context}"),
        }
    }

    // The paper-facing Markdown, row for row: the model latency to four digits, the status.
    let markdown = read("tables/comparison.md");
    let columns: Vec<Vec<String>> = markdown
        .lines()
        .take(1)
        .map(|line| {
            line.trim_matches('|').split(" | ").map(|cell| cell.trim().to_owned()).collect()
        })
        .collect();
    let at = |header: &str| {
        columns[0].iter().position(|cell| cell == header).unwrap_or_else(|| panic!("no {header}"))
    };
    let table: Vec<Vec<String>> = markdown
        .lines()
        .filter(|line| line.starts_with("| "))
        .skip(2)
        .map(|line| {
            line.trim_matches('|').split(" | ").map(|cell| cell.trim().to_owned()).collect()
        })
        .collect();
    assert_eq!(table.len(), models.len(), "{markdown}");
    // The paper-facing numbers: each the value rounded, one count of decimals per column.
    let (mut rate_decimals, mut model_decimals) = (BTreeSet::new(), BTreeSet::new());
    for ((cells, model), fields) in table.iter().zip(&models).zip(&lines) {
        let sim = aggregate(model).expect("aggregate row");
        let comparable = model_column(model, &fields[column("model_latency_column")]);
        let rate = &cells[at("Rate \u{3bb} (msg/node/cycle)")];
        rate_decimals.insert(rounds(rate, model.rate).unwrap_or_else(|| panic!("{cells:?}")));
        let shown = &cells[at("Model latency (cycles)")];
        match comparable {
            Some(latency) => {
                model_decimals
                    .insert(rounds(shown, latency).unwrap_or_else(|| panic!("{cells:?}")));
            }
            None => assert_eq!(shown, "\u{2013}", "{cells:?}"),
        }
        let mut status = Vec::new();
        if model.status != "ok" && model.status == sim.status {
            status.push(format!("both {}", model.status));
        } else if model.status != "ok" {
            status.push(format!("model {}", model.status));
        }
        if sim.status != "ok" && sim.status != model.status {
            status.push(format!("simulation {}", sim.status));
        }
        let status = if status.is_empty() { "ok".to_owned() } else { status.join(", ") };
        // A status that is the same in every row is said once, in the note.
        match columns[0].iter().position(|cell| cell == "Status") {
            Some(index) => assert_eq!(cells[index], status, "{cells:?}"),
            None => {
                assert!(markdown.contains(&format!("Status: {status} throughout.")), "{markdown}")
            }
        }
        if let (Some(mean), Some(_)) = (sim.latency, sim.latency_ci95) {
            let shown = &cells[at("Simulation \u{b1} 95% CI (cycles)")];
            let shown: f64 = shown.split(" \u{b1} ").next().expect("mean").parse().expect("f64");
            assert!((shown - mean).abs() <= 0.05 * mean, "{cells:?} against {mean}");
        }
    }
    assert_eq!(rate_decimals.len(), 1, "{markdown}");
    assert!(model_decimals.len() <= 1, "{markdown}");

    // No paper-facing table shows a scenario's hash id; the CSVs keep them for joins.
    let ids: BTreeSet<&str> = rows.iter().map(|row| row.scenario_id.as_str()).collect();
    for stem in ["agreement", "comparison", "results"] {
        for extension in ["tex", "md"] {
            let path = bundle.join(format!("tables/{stem}.{extension}"));
            let Ok(text) = std::fs::read_to_string(path) else { continue };
            for id in &ids {
                assert!(!text.contains(id), "tables/{stem}.{extension} shows the id {id}");
            }
        }
    }
    assert!(ids.iter().all(|id| csv.contains(id)));
    (rows, csv)
}

/// Every committed bundle with an agreement table, re-rendered from its Parquet files, sets
/// both forms of the table on a two-column page (a 516 pt text width of two 252 pt columns,
/// as IEEEtran's) with pdflatex: the compact one in a `table` float one column wide, the full
/// one in a page-wide `table*`, and neither overfills its box. Needs `pdflatex`: skipped with
/// a note without it, mandatory when `RUNNER_REQUIRE_TOOLS=1`.
#[test]
fn every_bundle_s_agreement_tables_fit_a_two_column_page() {
    let Some(pdflatex) = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("pdflatex"))
        .find(|candidate| candidate.is_file())
    else {
        assert!(
            !std::env::var("RUNNER_REQUIRE_TOOLS").is_ok_and(|value| value == "1"),
            "pdflatex is missing; `.ci/run` installs it (texlive-latex-extra)"
        );
        let note = "note: skipped: no pdflatex on PATH (RUNNER_REQUIRE_TOOLS=1 makes it \
                    mandatory)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), note.as_bytes());
        return;
    };
    let reports = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    let mut bundles: Vec<_> = std::fs::read_dir(&reports)
        .expect("read reports/")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("results.parquet").is_file())
        .collect();
    bundles.sort();
    let scratch = Scratch::new();
    let mut compiled = Vec::new();
    for bundle in &bundles {
        let name = bundle.file_name().expect("bundle name").to_string_lossy().into_owned();
        let copy = scratch.path().join(&name);
        std::fs::create_dir_all(&copy).expect("mkdir");
        for entry in std::fs::read_dir(bundle).expect("read bundle").filter_map(Result::ok) {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.ends_with(".parquet") || file == "spec.yaml" {
                std::fs::copy(entry.path(), copy.join(&file)).expect("copy bundle file");
            }
        }
        let report = scratch.run(&["report", &name]);
        assert_eq!(report.status.code(), Some(0), "{name}: {}", stderr(&report));
        if !copy.join("tables/agreement.tex").is_file() {
            continue;
        }
        let document = "\\documentclass[twocolumn]{article}\n\
             \\usepackage[textwidth=516pt,columnsep=12pt]{geometry}\n\
             \\usepackage{booktabs}\n\\begin{document}\n\
             \\typeout{COLUMN=\\the\\columnwidth, TEXT=\\the\\textwidth}\n\
             \\begin{table}\\centering\\input{tables/agreement_compact.tex}\\end{table}\n\
             \\begin{table*}\\centering\\input{tables/agreement.tex}\\end{table*}\n\
             \\end{document}\n";
        std::fs::write(copy.join("page.tex"), document).expect("write page.tex");
        let output = std::process::Command::new(&pdflatex)
            .args(["-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "page.tex"])
            .current_dir(&copy)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run pdflatex");
        let log = std::fs::read_to_string(copy.join("page.log")).unwrap_or_default();
        assert!(output.status.success(), "{name}: pdflatex failed:\n{log}");
        assert!(log.contains("COLUMN=252.0pt, TEXT=516.0pt"), "{name}: not the page asked for");
        let overfull: Vec<&str> =
            log.lines().filter(|line| line.starts_with("Overfull \\hbox")).collect();
        assert!(overfull.is_empty(), "{name}: a table overfills its box: {overfull:?}");
        compiled.push(name);
    }
    // The five papers' bundles and the cross-check at least.
    for name in ["nbc_torus", "cs_torus_faults", "ss_torus", "broadcast_hypercube", "bft"] {
        assert!(compiled.iter().any(|done| done == name), "{name} not compiled: {compiled:?}");
    }
    assert!(compiled.iter().any(|done| done == "crosscheck_booksim"), "{compiled:?}");
}
