//! Tests of the report bundle: files, manifest, escaping, well-formedness, PDFs and a browser.
//!
//! The fixture has two scenarios (V = 1 and V = 2 on an 8-ary 2-cube), model and simulation
//! rows (per-replication and aggregate), and one saturated point per method. The browser test
//! needs headless Chromium (Debian package `chromium`): skipped with a note when it is missing,
//! mandatory when `RUNNER_REQUIRE_TOOLS=1` (as `.ci/run` sets).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{ReportError, ReportInput, render, verify};
use crate::spec::columns::check_figure;
use crate::spec::report::{FigureSpec, ReportSpec, TableKind};
use crate::store::provenance::Provenance;
use crate::store::row::Row;

const EXPECTED_FILES: &[&str] = &[
    "index.html",
    "report.md",
    "figures/fig1_latency_vs_rate.svg",
    "figures/fig1_latency_vs_rate.pdf",
    "figures/fig2_latency_vs_rate.svg",
    "figures/fig2_latency_vs_rate.pdf",
    "figures/fig1_latency_vs_rate.csv",
    "figures/fig2_latency_vs_rate.csv",
    "tables/agreement.csv",
    "tables/agreement.tex",
    "tables/agreement_compact.tex",
    "tables/agreement.md",
    "tables/results.csv",
    "tables/results.tex",
    "tables/results.md",
    "manifest.json",
    "results.parquet",
    "spec.yaml",
];

// ---------------------------------------------------------------- fixture

fn base_row(scenario_id: &str, virtual_channels: u32, rate: f64) -> Row {
    Row {
        experiment: "fixture".into(),
        task_id: format!("{scenario_id}-{rate}"),
        scenario_id: scenario_id.into(),
        topology: "torus".into(),
        radix: 8,
        dimensions: 2,
        nodes: 64,
        switching: "wormhole".into(),
        routing: "dimension_order".into(),
        virtual_channels,
        buffer_depth: 2,
        message_length: 32,
        ejection: "single".into(),
        rate,
        intermediates: "{}".into(),
        ..Row::default()
    }
}

/// Model latency of the fixture: zero-load 36 cycles, saturating at `saturation`.
fn model_latency(rate: f64, saturation: f64) -> f64 {
    36.0 / (1.0 - rate / saturation)
}

fn fixture_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for (scenario_id, virtual_channels, saturation) in
        [("s1a2b3", 1, 0.0105), ("s4c5d6", 2, 0.0135)]
    {
        for step in 1..=7 {
            let rate = 0.002 * f64::from(step);
            let fraction = rate / saturation;
            let mut model = base_row(scenario_id, virtual_channels, rate);
            model.method = "model".into();
            model.evaluator = "torus_wormhole@model-0.1.0".into();
            model.saturation_rate = Some(saturation);
            if fraction < 1.0 {
                model.status = "ok".into();
                model.latency = Some(model_latency(rate, saturation));
                model.throughput = Some(rate);
            } else {
                model.status = "saturated".into();
                model.error = Some("channel utilisation >= 1".into());
            }
            rows.push(model);

            let mut aggregate = base_row(scenario_id, virtual_channels, rate);
            aggregate.method = "simulation".into();
            aggregate.evaluator = "simulator@sim-0.1.0".into();
            aggregate.replications = Some(2);
            if fraction < 0.95 {
                // 5% off at light load, 20% off near saturation.
                let deviation = if fraction <= 0.7 { 1.05 } else { 1.2 };
                let latency = model_latency(rate, saturation) * deviation;
                aggregate.status = "ok".into();
                aggregate.latency = Some(latency);
                aggregate.latency_ci95 = Some(0.02 * latency * (1.0 + 5.0 * fraction));
                aggregate.throughput = Some(rate);
            } else {
                aggregate.status = "saturated".into();
                aggregate.error = Some("source queues grew without bound".into());
            }
            for replication in 0..2 {
                let mut single = aggregate.clone();
                single.replication = Some(replication);
                single.replications = None;
                single.latency_ci95 = None;
                single.seed = Some(1000 + u64::from(replication) + (rate * 1e4) as u64);
                rows.push(single);
            }
            rows.push(aggregate);
        }
    }
    rows
}

fn fixture_spec() -> ReportSpec {
    let figure = |panels: Vec<&str>, lines: Vec<&str>, log_y: bool| FigureSpec {
        x: "rate".into(),
        y: "latency".into(),
        panels: panels.into_iter().map(String::from).collect(),
        lines: lines.into_iter().map(String::from).collect(),
        log_y,
        title: None,
        ..FigureSpec::default()
    };
    ReportSpec {
        template_dir: None,
        figures: vec![
            figure(vec![], vec!["virtual_channels"], false),
            figure(vec!["virtual_channels"], vec![], true),
        ],
        tables: vec![TableKind::ModelVsSimulation, TableKind::Results],
    }
}

fn fixture_provenance() -> Provenance {
    Provenance {
        runner_version: "0.1.0".into(),
        model_version: "model-0.1.0".into(),
        sim_version: "sim-0.1.0".into(),
        spec_path: "experiments/fixture.yaml".into(),
        spec_sha256: "ab".repeat(32),
        git_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        git_dirty: Some(false),
        command_line: vec!["runner".into(), "run".into(), "experiments/fixture.yaml".into()],
        host: "testhost".into(),
        started_at: "2026-11-23T10:00:00Z".into(),
        finished_at: "2026-11-23T10:05:00Z".into(),
        seed: 42,
    }
}

/// A bundle directory as the pipeline leaves it before calling `render`.
fn bundle_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    fs::write(dir.path().join("results.parquet"), b"PAR1 fixture PAR1").expect("write parquet");
    fs::write(dir.path().join("spec.yaml"), b"name: fixture\n").expect("write spec");
    dir
}

/// Renders the fixture (with optional changes) and returns the bundle directory.
fn render_fixture(
    title: &str,
    rows: &[Row],
    spec: &ReportSpec,
    template_dir: Option<&Path>,
) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = bundle_dir();
    let provenance = fixture_provenance();
    let input = ReportInput {
        experiment: "fixture",
        title,
        description: None,
        spec,
        provenance: &provenance,
        template_dir,
    };
    let written = render(dir.path(), &input, rows).expect("render the fixture");
    (dir, written)
}

fn standard_bundle() -> (tempfile::TempDir, Vec<PathBuf>) {
    render_fixture("Fixture <report>", &fixture_rows(), &fixture_spec(), None)
}

fn read(dir: &Path, relative: &str) -> String {
    fs::read_to_string(dir.join(relative))
        .unwrap_or_else(|error| panic!("read {relative}: {error}"))
}

// ---------------------------------------------------------------- files and manifest

#[test]
fn render_writes_every_expected_file() {
    let (dir, written) = standard_bundle();
    for relative in EXPECTED_FILES {
        let path = dir.path().join(relative);
        assert!(path.is_file(), "missing {relative}");
        assert!(fs::metadata(&path).map(|m| m.len()).unwrap_or(0) > 0, "empty {relative}");
    }
    assert_eq!(written.last(), Some(&dir.path().join("manifest.json")));
    let manifest: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "manifest.json")).expect("manifest is JSON");
    let files: Vec<&str> = manifest["files"]
        .as_array()
        .expect("files array")
        .iter()
        .filter_map(|entry| entry["path"].as_str())
        .collect();
    let mut expected: Vec<&str> =
        EXPECTED_FILES.iter().copied().filter(|path| *path != "manifest.json").collect();
    expected.sort();
    assert_eq!(files, expected);
    assert_eq!(manifest["spec_sha256"], "ab".repeat(32));
    assert_eq!(manifest["git_commit"], "0123456789abcdef0123456789abcdef01234567");
    assert_eq!(manifest["git_dirty"], false);
    assert_eq!(manifest["host"], "testhost");
    assert_eq!(manifest["seed"], 42);
    assert!(!manifest["simulation_seeds"].as_array().expect("seeds").is_empty());
    // No temporary files are left behind.
    assert_eq!(
        super::manifest::list_entries(dir.path()).expect("list").len(),
        EXPECTED_FILES.len() - 1
    );
}

#[test]
fn verify_accepts_an_intact_bundle_and_reports_tampering() {
    let (dir, _) = standard_bundle();
    assert_eq!(verify(dir.path()).expect("verify"), Vec::<String>::new());

    fs::write(dir.path().join("tables/results.csv"), "tampered\n").expect("tamper");
    fs::remove_file(dir.path().join("report.md")).expect("delete");
    fs::write(dir.path().join("figures/extra.svg"), "<svg/>").expect("add");
    let problems = verify(dir.path()).expect("verify");
    assert!(problems.iter().any(|p| p.starts_with("changed: tables/results.csv")), "{problems:?}");
    assert!(problems.iter().any(|p| p == "missing: report.md"), "{problems:?}");
    assert!(problems.iter().any(|p| p.ends_with("figures/extra.svg")), "{problems:?}");
    assert_eq!(problems.len(), 3, "{problems:?}");
}

#[test]
fn verify_without_manifest_is_an_error() {
    let dir = bundle_dir();
    assert!(matches!(verify(dir.path()), Err(ReportError::Read { .. })));
    fs::write(dir.path().join("manifest.json"), "{not json").expect("write");
    assert!(matches!(verify(dir.path()), Err(ReportError::Manifest { .. })));
}

#[test]
fn rendering_is_deterministic_and_removes_stale_files() {
    let (first, _) = standard_bundle();
    let (second, _) = standard_bundle();
    for relative in EXPECTED_FILES {
        let a = fs::read(first.path().join(relative)).expect("read first");
        let b = fs::read(second.path().join(relative)).expect("read second");
        assert!(a == b, "{relative} differs between two renders of the same input");
    }
    // Re-render with one figure into the same directory: the second figure's files go.
    let mut spec = fixture_spec();
    spec.figures.truncate(1);
    let rows = fixture_rows();
    let provenance = fixture_provenance();
    let input = ReportInput {
        experiment: "fixture",
        title: "t",
        description: None,
        spec: &spec,
        provenance: &provenance,
        template_dir: None,
    };
    render(first.path(), &input, &rows).expect("re-render");
    assert!(!first.path().join("figures/fig2_latency_vs_rate.svg").exists());
    assert_eq!(verify(first.path()).expect("verify"), Vec::<String>::new());
}

/// With `RUNNER_REPORT_SAMPLE_DIR=/some/dir`, renders the fixture there to look at it by eye
/// (screenshots, `pdftoppm`); otherwise does nothing.
#[test]
fn sample_bundle_for_inspection() {
    let Some(target) = std::env::var_os("RUNNER_REPORT_SAMPLE_DIR") else { return };
    let target = PathBuf::from(target);
    fs::create_dir_all(&target).expect("create sample directory");
    fs::write(target.join("results.parquet"), b"PAR1 fixture PAR1").expect("write parquet");
    fs::write(target.join("spec.yaml"), b"name: fixture\n").expect("write spec");
    let rows = fixture_rows();
    let spec = fixture_spec();
    let provenance = fixture_provenance();
    let input = ReportInput {
        experiment: "fixture",
        title: "Fixture: wormhole torus, V = 1 and V = 2",
        description: None,
        spec: &spec,
        provenance: &provenance,
        template_dir: None,
    };
    render(&target, &input, &rows).expect("render the sample");

    // A larger grid: panels by message length, lines by V, simulation only near the model.
    let mut rows = Vec::new();
    for message_length in [16_u32, 64] {
        for virtual_channels in [1_u32, 2, 4] {
            let scenario_id = format!("m{message_length}v{virtual_channels}");
            let zero_load = f64::from(message_length) + 8.0;
            let saturation = 0.5 / zero_load * (1.0 + 0.4 * f64::from(virtual_channels));
            for step in 1..=12 {
                let rate = saturation * f64::from(step) / 11.0;
                let mut model = base_row(&scenario_id, virtual_channels, rate);
                model.message_length = message_length;
                model.method = "model".into();
                model.saturation_rate = Some(saturation);
                if rate < saturation {
                    model.status = "ok".into();
                    model.latency = Some(zero_load / (1.0 - rate / saturation));
                } else {
                    model.status = "saturated".into();
                }
                let mut simulation = model.clone();
                simulation.method = "simulation".into();
                simulation.replications = Some(5);
                if let Some(latency) = model.latency.filter(|_| step % 2 == 0) {
                    simulation.latency = Some(latency * 1.07);
                    simulation.latency_ci95 = Some(latency * 0.04);
                    rows.push(simulation);
                }
                rows.push(model);
            }
        }
    }
    let spec = ReportSpec {
        template_dir: None,
        figures: vec![FigureSpec {
            x: "rate".into(),
            y: "latency".into(),
            panels: vec!["message_length".into()],
            lines: vec!["virtual_channels".into()],
            log_y: false,
            title: None,
            ..FigureSpec::default()
        }],
        tables: vec![TableKind::ModelVsSimulation],
    };
    let input = ReportInput { spec: &spec, ..input };
    render(&target.join("grid"), &input, &rows).expect("render the grid sample");
}

// ---------------------------------------------------------------- content

#[test]
fn html_escapes_the_title_and_is_self_contained() {
    let (dir, _) =
        render_fixture("<script>alert('x')</script> & co", &fixture_rows(), &fixture_spec(), None);
    let html = read(dir.path(), "index.html");
    assert!(html.contains("&lt;script&gt;alert("), "title not escaped");
    assert!(!html.contains("<script>alert"), "raw script from the title");
    assert_eq!(html.matches("<figure class=\"plot\"").count(), 2);
    for section in [
        "id=\"summary\"",
        "id=\"figures\"",
        "id=\"agreement\"",
        "id=\"results\"",
        "id=\"provenance\"",
    ] {
        assert!(html.contains(section), "missing section {section}");
    }
    // No external resources: nothing is fetched over the network or from disk.
    for pattern in ["src=\"http", "href=\"http", "url(", "@import", "<link", "src=\"//", "<img"] {
        assert!(!html.contains(pattern), "external resource `{pattern}` in index.html");
    }
    assert!(html.contains("0123456789abcdef0123456789abcdef01234567"));
    assert!(html.contains("fixture.yaml"));

    let markdown = read(dir.path(), "report.md");
    assert!(markdown.starts_with("# \\<script>alert('x')\\</script> \\& co\n"), "{markdown}");
}

#[test]
fn markdown_is_well_formed() {
    let (dir, _) = standard_bundle();
    let markdown = read(dir.path(), "report.md");
    for heading in [
        "## Summary",
        "## Figures",
        "## Model vs. simulation",
        "## Results",
        "## Appendix: provenance",
    ] {
        assert!(markdown.lines().any(|line| line == heading), "missing {heading}");
    }
    assert!(markdown.contains("](figures/fig1_latency_vs_rate.svg)"));
    assert!(!markdown.contains("\n\n\n\n"), "runs of blank lines");
    for relative in ["report.md", "tables/agreement.md", "tables/results.md"] {
        check_markdown_tables(&read(dir.path(), relative), relative);
    }
}

/// Every table row has as many cells as its header, and the delimiter row is valid.
fn check_markdown_tables(text: &str, name: &str) {
    let lines: Vec<&str> = text.lines().collect();
    let mut index = 0;
    let mut tables = 0;
    while index < lines.len() {
        if lines[index].starts_with('|') {
            tables += 1;
            let columns = count_cells(lines[index]);
            let delimiter = lines.get(index + 1).copied().unwrap_or_default();
            assert_eq!(count_cells(delimiter), columns, "{name}: delimiter row of table {tables}");
            assert!(
                delimiter.split('|').all(|cell| cell
                    .trim()
                    .trim_matches(':')
                    .chars()
                    .all(|c| c == '-')),
                "{name}: bad delimiter {delimiter}"
            );
            index += 2;
            while index < lines.len() && lines[index].starts_with('|') {
                assert_eq!(count_cells(lines[index]), columns, "{name}: row `{}`", lines[index]);
                index += 1;
            }
        } else {
            index += 1;
        }
    }
    assert!(tables > 0, "{name}: no table");
}

fn count_cells(line: &str) -> usize {
    let mut cells = 0_usize;
    let mut escaped = false;
    for c in line.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => cells += 1,
            _ => escaped = false,
        }
    }
    cells.saturating_sub(1)
}

/// Text that LaTeX would choke on, in a scenario field the LaTeX shows (a column that varies).
const NASTY: &str = "50% of {runs} & $cost #1 _x ~y ^z \\path [a] *b <c> |d| \u{3bb} \u{4e2d}";

/// The fixture with `NASTY` as the hotspot nodes of the V = 1 scenario and in an error note.
fn nasty_rows() -> Vec<Row> {
    let mut rows = fixture_rows();
    for row in rows.iter_mut().filter(|row| row.virtual_channels == 1) {
        row.hotspot_nodes = Some(NASTY.into());
    }
    rows[0].error = Some(NASTY.into());
    rows[0].status = "failed".into();
    // Replications with intervals of their own, for the coverage table.
    for row in rows.iter_mut().filter(|row| row.replication.is_some()) {
        if let Some(latency) = row.latency {
            let sign = if row.replication == Some(0) { -1.0 } else { 1.0 };
            row.latency = Some(latency * (1.0 + 0.01 * sign));
            row.latency_ci95 = Some(0.015 * latency);
        }
    }
    rows
}

fn every_table_spec() -> ReportSpec {
    ReportSpec {
        tables: vec![
            TableKind::ModelVsSimulation,
            TableKind::Comparison,
            TableKind::Results,
            TableKind::Saturation,
            TableKind::Coverage,
        ],
        ..fixture_spec()
    }
}

#[test]
fn latex_tables_are_well_formed_and_escaped() {
    let (dir, _) = render_fixture("t", &nasty_rows(), &every_table_spec(), None);
    for stem in ["agreement", "comparison", "results", "saturation", "coverage"] {
        let relative = format!("tables/{stem}.tex");
        let tex = read(dir.path(), &relative);
        check_latex(&tex, &relative);
        assert!(
            tex.contains("\\toprule") && tex.contains("\\midrule") && tex.contains("\\bottomrule")
        );
        assert!(tex.contains("\n% Needs: \\usepackage{booktabs}"), "{relative}: {tex}");
        assert!(!tex.contains("s1a2b3") && !tex.contains("s4c5d6"), "{relative} has hash ids");
    }
    let escaped = "50\\% of \\{runs\\} \\& \\$cost \\#1 \\_x \\textasciitilde{}y \
                   \\textasciicircum{}z \\textbackslash{}path [a] *b \\textless{}c\\textgreater{} \
                   \\textbar{}d\\textbar{} $\\lambda$ ?";
    let results = read(dir.path(), "tables/results.tex");
    assert!(results.contains(escaped), "{results}");
    // The paper-facing LaTeX leaves the note and the replication count to the other formats.
    assert!(!results.contains("Note") && !results.contains("Reps"), "{results}");
    assert!(read(dir.path(), "tables/results.md").contains("Replications"));
    let agreement = read(dir.path(), "tables/agreement.tex");
    assert!(agreement.contains(" & $\\le$ 70\\% & "), "{agreement}");
    assert!(agreement.contains(" & \\textgreater{} 70\\% & "), "{agreement}");
    // The text scenario field (hot spots) heads its group of rows, a dash where it has none;
    // `All scenarios` is in the one scenario column left.
    assert!(agreement.contains("\\multicolumn{10}{@{}l}{\\emph{50\\% of"), "{agreement}");
    assert!(agreement.contains("\\multicolumn{10}{@{}l}{\\emph{\u{2013}}}"), "{agreement}");
    assert!(agreement.contains("\nAll scenarios & $\\le$ 70\\% & "), "{agreement}");
    // Units in the two-line header.
    assert!(results.contains("$\\lambda$ & ") && results.contains("(msg/node/cycle)"), "{results}");
    assert!(results.contains("(cycles)"), "{results}");
}

/// Every special character, the Unicode the report writes and any other; a leading `[` or `*`
/// in a cell cannot become an argument of the `\\` before it.
#[test]
fn tex_escape_covers_every_special_and_maps_unicode() {
    use super::tables::tex_escape;
    for (text, expected) in [
        ("%", "\\%"),
        ("&", "\\&"),
        ("_", "\\_"),
        ("#", "\\#"),
        ("$", "\\$"),
        ("{}", "\\{\\}"),
        ("~", "\\textasciitilde{}"),
        ("^", "\\textasciicircum{}"),
        ("\\", "\\textbackslash{}"),
        ("\u{2264} 70%", "$\\le$ 70\\%"),
        ("\u{2212}3.1", "$-$3.1"),
        ("22.9 \u{b1} 0.6", "22.9 $\\pm$ 0.6"),
        ("\u{3b8} = 0.1, \u{3b2}, \u{394}", "$\\theta$ = 0.1, $\\beta$, $\\Delta$"),
        ("V\u{304}", "$\\bar{V}$"),
        ("V\u{2082}", "V$_2$"),
        ("caf\u{e9} \u{2013} \u{201c}x\u{201d}", "caf\u{e9} \u{2013} \u{201c}x\u{201d}"),
        ("a\tb\u{7}c\nd", "a b c d"),
        ("\u{4e2d}\u{1f600}", "??"),
        ("x\u{202e}y", "xy"),
    ] {
        assert_eq!(tex_escape(text), expected, "{text:?}");
    }
}

/// Runs a real `pdflatex` on every `.tex` table of a rendered bundle (a tabular and a
/// longtable, all four kinds, special characters in the cells), each wrapped in
/// `\documentclass{article}` with the packages its `% Needs:` line names; fails on any LaTeX
/// error. Needs `pdflatex` (Debian `texlive-latex-extra`): skipped with a note without it,
/// mandatory when `RUNNER_REQUIRE_TOOLS=1`.
#[test]
fn every_latex_table_compiles_with_pdflatex() {
    let Some(pdflatex) = find_program("pdflatex") else {
        assert!(
            !tools_required(),
            "pdflatex is needed for this test but was not found on PATH; install Debian's \
             texlive-latex-extra (`.ci/run` does)"
        );
        let note = "note: skipped `every_latex_table_compiles_with_pdflatex`: no pdflatex on \
                    PATH (`apt-get install texlive-latex-extra`; `.ci/run` installs it and sets \
                    RUNNER_REQUIRE_TOOLS=1, which makes this test mandatory)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), note.as_bytes());
        return;
    };
    // The fixture (short tables: tabular) and many load points (long tables: longtable).
    let mut long_rows = nasty_rows();
    for step in 8..=30 {
        for mut row in fixture_rows().into_iter().filter(|row| row.rate == 0.002) {
            row.rate = 0.0004 * f64::from(step);
            row.hotspot_nodes = Some(NASTY.into());
            long_rows.push(row);
        }
    }
    let mut compiled = 0;
    for rows in [nasty_rows(), long_rows] {
        let (dir, _) = render_fixture("t", &rows, &every_table_spec(), None);
        for stem in
            ["agreement", "agreement_compact", "comparison", "results", "saturation", "coverage"]
        {
            let tex = read(dir.path(), &format!("tables/{stem}.tex"));
            let needs = tex
                .lines()
                .find_map(|line| line.strip_prefix(super::tables::TEX_NEEDS))
                .unwrap_or_else(|| panic!("{stem}.tex names no packages:\n{tex}"));
            let document = format!(
                "\\documentclass{{article}}\n{needs}\n\\begin{{document}}\n\\input{{tables/{stem}.tex}}\n\\end{{document}}\n"
            );
            let main = format!("main-{stem}");
            fs::write(dir.path().join(format!("{main}.tex")), document).expect("write main");
            let output = Command::new(&pdflatex)
                .args(["-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape"])
                .arg(format!("{main}.tex"))
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .output()
                .expect("run pdflatex");
            let log =
                fs::read_to_string(dir.path().join(format!("{main}.log"))).unwrap_or_default();
            assert!(
                output.status.success(),
                "pdflatex failed on tables/{stem}.tex:\n{}\n--- the table:\n{tex}",
                log.lines()
                    .skip_while(|line| !line.starts_with('!'))
                    .take(12)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            assert!(dir.path().join(format!("{main}.pdf")).is_file(), "no PDF for {stem}");
            compiled += 1;
        }
        let results = read(dir.path(), "tables/results.tex");
        let long = rows.iter().filter(|row| row.replication.is_none()).count()
            > super::tables::TEX_LONGTABLE_ROWS;
        assert_eq!(results.contains("\\begin{longtable}"), long, "{results}");
    }
    assert_eq!(compiled, 12);
}

/// `name` on PATH.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

/// Balanced `\begin`/`\end` environments and braces; no unescaped `%`, `&` outside columns.
fn check_latex(tex: &str, name: &str) {
    let mut environments: Vec<String> = Vec::new();
    let mut depth = 0_i64;
    for line in tex.lines().filter(|line| !line.trim_start().starts_with('%')) {
        let mut rest = line;
        while let Some(position) = rest.find("\\begin{").or_else(|| rest.find("\\end{")) {
            let begin = rest[position..].starts_with("\\begin{");
            let start = position + if begin { 7 } else { 5 };
            let end = rest[start..].find('}').map(|offset| start + offset).unwrap_or(rest.len());
            let environment = rest[start..end].to_owned();
            if begin {
                environments.push(environment);
            } else {
                assert_eq!(
                    environments.pop().as_deref(),
                    Some(environment.as_str()),
                    "{name}: \\end mismatch"
                );
            }
            rest = &rest[end..];
        }
        let mut escaped = false;
        for c in line.chars() {
            match c {
                '\\' if !escaped => escaped = true,
                '{' if !escaped => depth += 1,
                '}' if !escaped => depth -= 1,
                '%' if !escaped => panic!("{name}: unescaped % in `{line}`"),
                _ => escaped = false,
            }
            assert!(depth >= 0, "{name}: unbalanced braces in `{line}`");
        }
    }
    assert!(environments.is_empty(), "{name}: unclosed {environments:?}");
    assert_eq!(depth, 0, "{name}: unbalanced braces");
}

#[test]
fn agreement_splits_light_and_near_saturation_load() {
    let agreement = super::agreement::compute(&fixture_rows());
    assert_eq!(agreement.scenarios.len(), 2);
    let light_error = 0.05 / 1.05;
    let near_error = 0.2 / 1.2;
    for scenario in &agreement.scenarios {
        assert!(scenario.light.points > 0 && scenario.near.points > 0, "{scenario:?}");
        let light_mean = scenario.light.mean.expect("light mean");
        let near_max = scenario.near.max.expect("near max");
        assert!((light_mean - light_error).abs() < 1e-12, "{scenario:?}");
        assert!((near_max - near_error).abs() < 1e-12, "{scenario:?}");
    }
    // V = 1 saturates at 0.0105: rates 0.002..0.006 are light (<= 70%), 0.008 near, 0.010 near
    // but simulated as saturated (95%+), 0.012 and 0.014 model-saturated.
    let first = &agreement.scenarios[0];
    assert_eq!((first.light.points, first.near.points), (3, 1));
    assert_eq!(agreement.overall.first().map(|overall| overall.light.points), Some(3 + 4));
    // The model is low by 1/1.05 at light load: a negative (optimistic) bias, not hidden by
    // the absolute error; the simulation saturating at 0.010 while the model is finite is
    // counted, and so are the two loads where both saturate.
    let bias = first.light.bias.expect("bias");
    assert!((bias + light_error).abs() < 1e-12, "{first:?}");
    assert_eq!(first.near.simulation_unstable, 1, "{first:?}");
    assert_eq!(first.near.not_compared, 2, "{first:?}");
    assert_eq!(first.near.model_unstable, 0, "{first:?}");
    let overall = agreement.overall.first().expect("overall");
    // V = 2 saturates at 0.0135: only 0.014, where both saturate.
    assert_eq!(overall.near.simulation_unstable + overall.near.not_compared, 1 + 2 + 1);
}

/// A simulation short of its target precision stays in the agreement statistics, counted as
/// imprecise; each compared point is within, outside or undecided against the tolerance by its
/// error's 95% interval.
#[test]
fn agreement_keeps_imprecise_points_and_decides_each_against_the_tolerance() {
    use super::agreement::{Comparison, TOLERANCE, Verdict, compare, error_interval};
    // (simulated latency, half-width, status) against a model at 100 cycles.
    let points = [
        (101.0, 1.0, "ok"),         // error -1%, interval [-2.0%, 0.0%]: within
        (120.0, 2.0, "imprecise"),  // -16.7%, [-18.0%, -15.3%]: outside
        (104.0, 2.0, "ok"),         // -3.8%, [-5.7%, -2.0%]: undecided
        (95.0, 200.0, "imprecise"), // h > sim: unbounded above, undecided
        (97.0, 1.0, "saturated"),   // simulation unstable, not compared
    ];
    let mut rows = Vec::new();
    for (step, (latency, half, status)) in points.into_iter().enumerate() {
        let rate = 0.001 * (step + 1) as f64;
        let mut model = base_row("s", 1, rate);
        model.method = "model".into();
        model.status = "ok".into();
        model.latency = Some(100.0);
        model.fraction_of_saturation = Some(0.1);
        let mut simulation = base_row("s", 1, rate);
        simulation.method = "simulation".into();
        simulation.status = status.into();
        simulation.latency = (status != "saturated").then_some(latency);
        simulation.latency_ci95 = Some(half);
        simulation.replications = Some(2);
        rows.push(model);
        rows.push(simulation);
    }
    let agreement = super::agreement::compute(&rows);
    let light = &agreement.scenarios[0].light;
    assert_eq!((light.points, light.imprecise), (4, 2), "{light:?}");
    assert_eq!((light.within, light.outside, light.undecided), (1, 1, 2), "{light:?}");
    assert_eq!((light.simulation_unstable, light.not_compared), (1, 0), "{light:?}");
    // The interval of the error, by hand: model 100 against 120 +- 2.
    let (low, high) = error_interval(100.0, 120.0, Some(2.0)).unwrap_or_default();
    assert!(
        (low - (100.0 - 122.0) / 122.0).abs() < 1e-12 && (high - (-18.0 / 118.0)).abs() < 1e-12
    );
    assert_eq!(error_interval(100.0, 120.0, None), None);
    assert_eq!(error_interval(100.0, 50.0, Some(60.0)).map(|(_, high)| high), Some(f64::INFINITY));
    assert_eq!(TOLERANCE, 0.05);
    let Comparison::Error(point) = compare(&rows[2], &rows[3]) else { panic!("compared") };
    assert_eq!((point.imprecise, point.verdict()), (true, Verdict::Outside));
    // The table, its CSV and the per-load CSV say the same.
    let table = super::tables::agreement_table(&agreement);
    let headers: Vec<&str> = table.columns.iter().map(|c| c.header.as_str()).collect();
    assert!(headers.contains(&"Of which imprecise"), "{headers:?}");
    assert!(headers.contains(&"Within \u{b1}5% (95% conf.)"), "{headers:?}");
    let note = table.note.unwrap_or_default();
    assert!(note.contains("imprecise") && note.contains("\u{b1}5%"), "{note}");
    assert!(!note.contains("short of its target precision."), "{note}");
    let csv = super::tables::agreement_csv(&agreement);
    assert!(csv.lines().nth(1).is_some_and(|line| line.ends_with(",2,1,1,2")), "{csv}");
    let comparison = super::tables::comparison_csv(&rows);
    let verdicts: Vec<&str> =
        comparison.lines().skip(1).filter_map(|line| line.rsplit(',').next()).collect();
    assert_eq!(verdicts, ["within", "outside", "undecided", "undecided", ""], "{comparison}");
}

/// The coverage table renders in every format from replication rows with intervals; with two
/// replications per point it pools per scenario and says the pairs are the statistic to read.
#[test]
fn the_coverage_table_pools_two_replications_per_scenario() {
    let spec = ReportSpec { tables: vec![TableKind::Coverage], ..fixture_spec() };
    let (dir, _) = render_fixture("t", &nasty_rows(), &spec, None);
    let markdown = read(dir.path(), "tables/coverage.md");
    // V = 1: 4 stable points, V = 2: 6, two replications each; intervals of 1.5% around
    // values 2% apart: none covers the other replication, every pair overlaps.
    // One estimate shown and none covered: both columns leave the table for the note.
    for n in ["8", "12", "20"] {
        assert!(markdown.contains(&format!(" | {n} | 0.0 \\[")), "{markdown}");
    }
    assert!(markdown.contains("Estimate: latency throughout."), "{markdown}");
    assert!(markdown.contains("Covered and pairs apart: 0 throughout."), "{markdown}");
    assert!(markdown.contains("Pairs apart") && markdown.contains("83"), "{markdown}");
    assert!(markdown.contains("throughput (throughput\\_ci95)"), "missing named: {markdown}");
    let csv = read(dir.path(), "tables/coverage.csv");
    assert!(csv.starts_with("method,scenario_id,scenario,rate,"), "{csv}");
    // Two scenarios and All, three estimates each.
    assert_eq!(csv.lines().count(), 1 + 3 * 3, "{csv}");
    let page = read(dir.path(), "report.md");
    assert!(page.contains("## Coverage of the simulation's 95% intervals"), "{page}");
    assert!(read(dir.path(), "index.html").contains("id=\"coverage\""));
}

/// The per-load table has one row per (scenario, rate) of the model and aggregate simulation
/// rows, with their values as they are in the rows.
#[test]
fn the_comparison_table_matches_the_rows_point_for_point() {
    let rows = fixture_rows();
    let spec = ReportSpec { tables: vec![TableKind::Comparison], ..fixture_spec() };
    let (dir, _) = render_fixture("t", &rows, &spec, None);
    let csv = read(dir.path(), "tables/comparison.csv");
    let lines: Vec<&str> = csv.lines().skip(1).collect();
    let models: Vec<&Row> = rows.iter().filter(|row| row.method == "model").collect();
    assert_eq!(lines.len(), models.len(), "one line per load point:\n{csv}");
    for (line, model) in lines.iter().zip(&models) {
        let simulation = rows
            .iter()
            .find(|row| {
                row.method == "simulation"
                    && row.replication.is_none()
                    && row.scenario_id == model.scenario_id
                    && row.rate == model.rate
            })
            .expect("aggregate");
        let fields = csv_fields(line);
        assert_eq!(fields[0], model.scenario_id);
        assert_eq!(fields[2].parse::<f64>().ok(), Some(model.rate), "{line}");
        assert_eq!(fields[4].parse::<f64>().ok(), model.latency, "{line}");
        assert_eq!(fields[5], model.status, "{line}");
        assert_eq!(fields[6].parse::<f64>().ok(), simulation.latency, "{line}");
        assert_eq!(fields[7].parse::<f64>().ok(), simulation.latency_ci95, "{line}");
        assert_eq!(fields[9], simulation.status, "{line}");
        match (model.latency, simulation.latency) {
            (Some(m), Some(s)) => {
                let error: f64 = fields[10].parse().expect("error");
                assert!((error - (m - s) / s).abs() < 1e-12, "{line}");
            }
            _ => assert_eq!(fields[10], "", "{line}"),
        }
    }
    let markdown = read(dir.path(), "tables/comparison.md");
    assert!(markdown.contains("simulation saturated"), "{markdown}");
    assert!(markdown.contains("| both saturated |"), "{markdown}");
    check_latex(&read(dir.path(), "tables/comparison.tex"), "comparison.tex");
    assert!(read(dir.path(), "index.html").contains("id=\"comparison\""));
    assert!(read(dir.path(), "report.md").contains("## Model vs. simulation at every load"));
}

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

#[test]
fn agreement_rows_follow_the_scenario_order_and_show_no_hash_ids() {
    // The fixture's scenarios come V = 1 then V = 2; reversed ids must not reorder them.
    let rows: Vec<Row> = fixture_rows()
        .into_iter()
        .map(|mut row| {
            row.scenario_id = if row.virtual_channels == 1 { "zz".into() } else { "aa".into() };
            row
        })
        .collect();
    let agreement = super::agreement::compute(&rows);
    let ids: Vec<&str> = agreement.scenarios.iter().map(|s| s.scenario_id.as_str()).collect();
    assert_eq!(ids, ["zz", "aa"]);
    let (dir, _) = render_fixture("t", &rows, &fixture_spec(), None);
    let markdown = read(dir.path(), "tables/agreement.md");
    assert!(!markdown.contains("| zz |") && !markdown.contains("| aa |"), "{markdown}");
    assert!(markdown.contains("| \u{2212}4.8 |"), "signed bias shown: {markdown}");
    assert!(markdown.contains("| Bias (%) |"), "unit in the header: {markdown}");
    // The scenario by its field that varies, in the field's words, in scenario order; the
    // rows of all scenarios together last.
    assert!(markdown.starts_with("| Virtual channels V | Load (of saturation) | Points |"));
    let first = markdown.lines().nth(2).expect("first row");
    assert!(first.starts_with("| 1 | \u{2264} 70% | 3 |"), "{markdown}");
    assert!(markdown.contains("\n| All | \u{2264} 70% | 7 |"), "{markdown}");
    let csv = read(dir.path(), "tables/agreement.csv");
    assert!(csv.starts_with("scenario_id,scenario,load_band,points,bias,"), "{csv}");
    assert!(csv.contains("zz,"), "the CSV keeps the ids for joins: {csv}");
}

#[test]
fn agreement_compares_unicast_simulations_with_the_model_unicast_latency() {
    // broadcast_hypercube reports its broadcast latency as `latency` and its unicast latency
    // as `unicast_latency`; with no broadcasts the simulator measures unicasts only.
    let rows: Vec<Row> = fixture_rows()
        .into_iter()
        .map(|mut row| {
            if row.method == "model" {
                row.unicast_latency = row.latency;
                row.latency = row.latency.map(|l| 5.0 * l);
            }
            row
        })
        .collect();
    let light_error = 0.05 / 1.05;
    for scenario in &super::agreement::compute(&rows).scenarios {
        let light_mean = scenario.light.mean.expect("light mean");
        assert!((light_mean - light_error).abs() < 1e-12, "{scenario:?}");
    }
}

#[test]
fn agreement_names_a_simulated_ejection_the_model_paper_does_not_assume() {
    // broadcast_hypercube's paper consumes messages on arrival; nbc_torus's ejects one at a time.
    let with = |model_name: &str, ejection: &str| -> Vec<Row> {
        fixture_rows()
            .into_iter()
            .map(|mut row| {
                if row.method == "model" {
                    row.evaluator = format!("{model_name}@model-1.0.0");
                }
                row.ejection = ejection.into();
                row
            })
            .collect()
    };
    let agreement = super::agreement::compute(&with("broadcast_hypercube", "single"));
    assert_eq!(agreement.assumption_notes.len(), 1, "{:?}", agreement.assumption_notes);
    let note = &agreement.assumption_notes[0];
    assert!(note.starts_with("broadcast_hypercube assumes ejection unlimited"), "{note}");
    assert!(note.contains("used ejection single in 2 scenarios"), "{note}");
    assert!(note.contains("as soon as they arrive"), "{note}");
    let (dir, _) =
        render_fixture("t", &with("broadcast_hypercube", "single"), &fixture_spec(), None);
    assert!(read(dir.path(), "tables/agreement.md").contains("assumes ejection unlimited"));
    for (model_name, ejection) in
        [("broadcast_hypercube", "unlimited"), ("nbc_torus", "single"), ("torus_wormhole", "x")]
    {
        let notes = super::agreement::compute(&with(model_name, ejection)).assumption_notes;
        assert!(notes.is_empty(), "{model_name} {ejection}: {notes:?}");
    }
}

#[test]
fn agreement_without_simulation_says_so() {
    let rows: Vec<Row> = fixture_rows().into_iter().filter(|row| row.method == "model").collect();
    let (dir, _) = render_fixture("t", &rows, &fixture_spec(), None);
    let markdown = read(dir.path(), "tables/agreement.md");
    assert!(markdown.contains("No simulation results"), "{markdown}");
    assert!(read(dir.path(), "index.html").contains("No simulation results"));
    check_latex(&read(dir.path(), "tables/agreement.tex"), "agreement.tex");
}

#[test]
fn simulation_only_runs_render() {
    let rows: Vec<Row> =
        fixture_rows().into_iter().filter(|row| row.method == "simulation").collect();
    let (dir, _) = render_fixture("t", &rows, &fixture_spec(), None);
    let html = read(dir.path(), "index.html");
    assert!(html.contains("Markers: simulation (no model results)."), "caption");
    assert!(read(dir.path(), "tables/agreement.md").contains("No model results"));
    let svg = read(dir.path(), "figures/fig1_latency_vs_rate.svg");
    assert!(svg.contains("Simulation (95% CI)") && !svg.contains(">Model<"), "legend");
    assert_eq!(verify(dir.path()).expect("verify"), Vec::<String>::new());
}

#[test]
fn empty_results_still_render() {
    let (dir, _) = render_fixture("t", &[], &fixture_spec(), None);
    assert!(read(dir.path(), "figures/fig1_latency_vs_rate.svg").contains("No finite data points"));
    assert_eq!(verify(dir.path()).expect("verify"), Vec::<String>::new());
}

#[test]
fn template_dir_overrides_by_file_name() {
    let templates = tempfile::tempdir().expect("temporary directory");
    fs::write(
        templates.path().join("report.md.j2"),
        "custom {{ title | md }} {{ figures | length }}\n",
    )
    .expect("write template");
    let (dir, _) = render_fixture("A_b", &fixture_rows(), &fixture_spec(), Some(templates.path()));
    assert_eq!(read(dir.path(), "report.md"), "custom A\\_b 2\n");
    // The HTML page still comes from the built-in template.
    assert!(read(dir.path(), "index.html").contains("<figure class=\"plot\""));

    fs::write(templates.path().join("report.md.j2"), "{{ no_such_field }}\n")
        .expect("write template");
    let dir = bundle_dir();
    let provenance = fixture_provenance();
    let spec = fixture_spec();
    let input = ReportInput {
        experiment: "fixture",
        title: "t",
        description: None,
        spec: &spec,
        provenance: &provenance,
        template_dir: Some(templates.path()),
    };
    let error = render(dir.path(), &input, &[]).expect_err("undefined variable");
    assert!(matches!(error, ReportError::Template { .. }), "{error}");
}

#[test]
fn figure_svg_has_labels_markers_and_caption() {
    let (dir, _) = standard_bundle();
    let svg = read(dir.path(), "figures/fig1_latency_vs_rate.svg");
    assert!(svg.contains("Latency (cycles)"));
    assert!(svg.contains("Traffic generation rate (messages/node/cycle)"));
    assert!(svg.contains("V = 1") && svg.contains("V = 2"), "legend entries");
    assert!(svg.contains("#0072B2") || svg.contains("#0072b2"), "Okabe-Ito blue");
    let html = read(dir.path(), "index.html");
    assert!(html.contains("Dashed vertical lines: model saturation point."));
    let svg2 = read(dir.path(), "figures/fig2_latency_vs_rate.svg");
    assert!(svg2.contains("(a) V = 1") && svg2.contains("(b) V = 2"), "panel titles");
}

#[test]
fn default_figure_separates_scenarios_and_other_columns_render() {
    let default_figure: FigureSpec = serde_json::from_str("{}").expect("default figure");
    let mut spec = fixture_spec();
    spec.figures = vec![
        default_figure,
        FigureSpec {
            x: "fraction_of_saturation".into(),
            y: "throughput".into(),
            panels: Vec::new(),
            lines: Vec::new(),
            log_y: false,
            title: Some("Throughput & <load>".into()),
            ..FigureSpec::default()
        },
        FigureSpec {
            x: "rate".into(),
            y: "throughput".into(),
            panels: vec!["switching".into()],
            lines: vec!["virtual_channels".into()],
            log_y: true,
            title: None,
            ..FigureSpec::default()
        },
    ];
    let (dir, _) = render_fixture("t", &fixture_rows(), &spec, None);
    // Without `lines`, the two scenarios still get separate, labelled series.
    let svg = read(dir.path(), "figures/fig1_latency_vs_rate.svg");
    assert!(svg.contains("V = 1") && svg.contains("V = 2"), "scenarios not separated");
    // No row stores a load fraction: it comes from the scenario's model saturation rate, for
    // the simulation rows too.
    let svg = read(dir.path(), "figures/fig2_throughput_vs_fraction_of_saturation.svg");
    assert!(!svg.contains("No finite data points"));
    let csv = read(dir.path(), "figures/fig2_throughput_vs_fraction_of_saturation.csv");
    let simulated: Vec<Vec<String>> = csv
        .lines()
        .map(csv_fields)
        .filter(|fields| fields[4] == "simulation" && fields[5] == "marker")
        .collect();
    assert_eq!(simulated.len(), 10, "{csv}");
    let fraction: f64 = simulated[0][6].parse().expect("x");
    assert!((fraction - 0.002 / 0.0105).abs() < 1e-12, "{csv}");
    let svg = read(dir.path(), "figures/fig3_throughput_vs_rate.svg");
    assert!(svg.contains("Accepted throughput (messages/node/cycle)"));
    let html = read(dir.path(), "index.html");
    assert!(html.contains("Throughput &amp; &lt;load&gt;"), "figure title not escaped");
    let svg = read(dir.path(), "figures/fig2_throughput_vs_fraction_of_saturation.svg");
    assert!(svg.contains("<title>Throughput &amp; &lt;load&gt;</title>"), "SVG title not escaped");
    assert_eq!(verify(dir.path()).expect("verify"), Vec::<String>::new());
}

// ---------------------------------------------------------------- figure specs

#[test]
fn check_figure_suggests_close_column_names() {
    let figure = |x: &str, y: &str, lines: &[&str]| FigureSpec {
        x: x.into(),
        y: y.into(),
        panels: Vec::new(),
        lines: lines.iter().map(|line| line.to_string()).collect(),
        log_y: false,
        title: None,
        ..FigureSpec::default()
    };
    assert_eq!(check_figure(&figure("rate", "latency", &["virtual_channels"])), Ok(()));
    let error = check_figure(&figure("ratee", "latency", &[])).expect_err("typo");
    assert!(
        error.contains("unknown column `ratee`") && error.contains("did you mean `rate`?"),
        "{error}"
    );
    assert!(
        error.contains("Valid numeric columns:") && error.contains("fraction_of_saturation"),
        "{error}"
    );
    let error = check_figure(&figure("rate", "latency", &["virtual_channel"])).expect_err("typo");
    assert!(error.contains("did you mean `virtual_channels`?"), "{error}");
    let error = check_figure(&figure("rate", "topology", &[])).expect_err("text y");
    assert!(error.contains("not numeric"), "{error}");
    let error = check_figure(&figure("rate", "latency", &["zzzzzz"])).expect_err("unknown");
    assert!(!error.contains("did you mean"), "{error}");
    assert!(check_figure(&figure("rate", "latency", &["rate"])).is_err(), "column used twice");
}

/// The fixture spec with one figure: `y` against the rate, a line per `virtual_channels`.
fn spec_with_one_figure(y: &str) -> ReportSpec {
    let mut spec = fixture_spec();
    spec.figures = vec![FigureSpec {
        x: "rate".into(),
        y: y.into(),
        panels: Vec::new(),
        lines: vec!["virtual_channels".into()],
        log_y: false,
        title: None,
        ..FigureSpec::default()
    }];
    spec
}

#[test]
fn figures_plot_intermediates_of_model_and_simulation_rows() {
    let mut rows = fixture_rows();
    for row in &mut rows {
        if row.status == "ok" {
            row.intermediates = format!("{{\"p_s\":{},\"only_here\":1.0}}", 1.0 - 10.0 * row.rate);
        }
    }
    let spec = spec_with_one_figure("intermediates.p_s");
    assert_eq!(check_figure(&spec.figures[0]), Ok(()));
    let (dir, _) = render_fixture("t", &rows, &spec, None);
    let svg = read(dir.path(), "figures/fig1_intermediates_p_s_vs_rate.svg");
    assert!(!svg.contains("No finite data points"), "nothing plotted");
    // The y label, wrapped to the height of the plotting area.
    assert!(svg.contains(">\nP_S, set-up success\n</text>"), "axis label");
    assert!(svg.contains(">\nprobability\n</text>"), "axis label");
    assert!(svg.contains("V = 1") && svg.contains("V = 2"), "legend entries");
    assert!(!svg.contains("95% CI"), "no confidence intervals to show");
    let json = super::columns::to_json(&rows[0]);
    assert_eq!(super::columns::number(&json, "intermediates.p_s"), Some(1.0 - 10.0 * 0.002));
    assert_eq!(super::columns::number(&json, "intermediates.missing"), None);
    let bad = FigureSpec { y: "intermediates.P-s".into(), ..spec.figures[0].clone() };
    let error = check_figure(&bad).expect_err("bad key");
    assert!(error.contains("intermediates.<key>"), "{error}");
    let unknown = FigureSpec { y: "p_s".into(), ..spec.figures[0].clone() };
    let error = check_figure(&unknown).expect_err("not a column");
    assert!(error.contains("`intermediates.<key>`"), "{error}");
}

/// `y: latency_p99` draws the simulation's percentile (model rows have none) with its display
/// name and unit, without the mean's confidence bars; the CSV holds exactly the plotted values.
#[test]
fn figures_plot_latency_percentiles() {
    let mut rows = fixture_rows();
    for row in &mut rows {
        if row.method == "simulation" && row.status == "ok" {
            row.latency_p99 = row.latency.map(|latency| (2.0 * latency).round());
        }
    }
    let spec = spec_with_one_figure("latency_p99");
    assert_eq!(check_figure(&spec.figures[0]), Ok(()));
    assert!(
        super::columns::is_latency("latency_p99") && super::columns::is_latency("source_wait_max")
    );
    assert_eq!(super::columns::axis_label("latency_p99"), "Latency, 99th percentile (cycles)");
    let (dir, _) = render_fixture("t", &rows, &spec, None);
    let svg = read(dir.path(), "figures/fig1_latency_p99_vs_rate.svg");
    assert!(!svg.contains("No finite data points"), "nothing plotted");
    assert!(svg.contains("99th percentile"), "axis label");
    assert!(!svg.contains("95% CI"), "the interval belongs to the mean");
    let csv = read(dir.path(), "figures/fig1_latency_p99_vs_rate.csv");
    let mut plotted: Vec<f64> = csv
        .lines()
        .map(csv_fields)
        .filter(|fields| fields[4] == "simulation" && fields[5] == "marker")
        .map(|fields| fields[7].parse().expect("y"))
        .collect();
    let mut expected: Vec<f64> = rows
        .iter()
        .filter(|row| row.replication.is_none())
        .filter_map(|row| row.latency_p99)
        .collect();
    plotted.sort_by(f64::total_cmp);
    expected.sort_by(f64::total_cmp);
    assert!(!expected.is_empty());
    assert_eq!(plotted, expected, "{csv}");
    let model_points = csv.lines().map(csv_fields).filter(|f| f[4] == "model" && f[5] == "line");
    assert_eq!(model_points.count(), 0, "the models have no percentiles: {csv}");
}

#[test]
fn unknown_column_fails_render_with_a_figure_error() {
    let mut spec = fixture_spec();
    spec.figures[0].y = "latncy".into();
    let dir = bundle_dir();
    let provenance = fixture_provenance();
    let rows = fixture_rows();
    let input = ReportInput {
        experiment: "fixture",
        title: "t",
        description: None,
        spec: &spec,
        provenance: &provenance,
        template_dir: None,
    };
    let error = render(dir.path(), &input, &rows).expect_err("unknown column");
    assert!(matches!(error, ReportError::Figure { number: 1, .. }), "{error}");
    assert!(error.to_string().contains("did you mean `latency`?"), "{error}");
}

#[test]
fn column_table_matches_row_fields() {
    let json = serde_json::to_value(Row::default()).expect("row to JSON");
    let mut fields: Vec<&str> =
        json.as_object().expect("object").keys().map(String::as_str).collect();
    let mut columns: Vec<&str> = super::columns::COLUMNS.iter().map(|(name, _)| *name).collect();
    fields.sort_unstable();
    columns.sort_unstable();
    assert_eq!(columns, fields, "report/columns.rs COLUMNS is out of step with store::row::Row");
    assert_eq!(super::columns::format_number(0.0125), "0.0125");
    assert_eq!(super::columns::format_number(123.456), "123.5");
    assert_eq!(super::columns::format_number(64.0), "64");
}

// ---------------------------------------------------------------- PDF

#[test]
fn every_pdf_embeds_the_font_and_keeps_axis_labels_as_text() {
    let (dir, _) = standard_bundle();
    for stem in ["fig1_latency_vs_rate", "fig2_latency_vs_rate"] {
        let pdf = fs::read(dir.path().join(format!("figures/{stem}.pdf"))).expect("read pdf");
        assert!(pdf.starts_with(b"%PDF-"), "{stem}: not a PDF");
        assert!(
            contains(&pdf, b"/FontFile2") || contains(&pdf, b"/FontFile3"),
            "{stem}: no embedded font"
        );
        assert!(contains(&pdf, b"DejaVuSans"), "{stem}: font is not DejaVu Sans");
        assert!(contains(&pdf, b"/ToUnicode"), "{stem}: no ToUnicode map");
        let text: String = pdf_text(&pdf).split_whitespace().collect();
        for label in ["Latency (cycles)", "Traffic generation rate (messages/node/cycle)", "Model"]
        {
            let label: String = label.split_whitespace().collect();
            assert!(
                text.contains(&label),
                "{stem}: `{label}` is not text in the PDF; got {text:?}"
            );
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// The text shown by a PDF, decoded through its ToUnicode CMaps (two-byte CIDs).
fn pdf_text(pdf: &[u8]) -> String {
    let streams = pdf_streams(pdf);
    let mut map = std::collections::HashMap::new();
    for stream in &streams {
        let text = String::from_utf8_lossy(stream);
        for block in text.split("beginbfchar").skip(1) {
            let block = block.split("endbfchar").next().unwrap_or_default();
            let hexes: Vec<&str> =
                block.split(['<', '>']).map(str::trim).filter(|part| !part.is_empty()).collect();
            for pair in hexes.chunks(2) {
                if let [cid, unicode] = pair
                    && let (Ok(cid), Some(text)) =
                        (u16::from_str_radix(cid, 16), utf16_hex(unicode))
                {
                    map.insert(cid, text);
                }
            }
        }
    }
    let mut out = String::new();
    for stream in &streams {
        if !contains(stream, b"Tj") && !contains(stream, b"TJ") {
            continue;
        }
        for string in pdf_strings(stream) {
            for pair in string.chunks_exact(2) {
                let cid = u16::from_be_bytes([pair[0], pair[1]]);
                out.push_str(map.get(&cid).map(String::as_str).unwrap_or("?"));
            }
        }
    }
    out
}

/// The byte strings of a content stream: literal `(...)` (with escapes) and hex `<...>`.
fn pdf_strings(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut strings = Vec::new();
    let mut index = 0;
    while index < stream.len() {
        match stream[index] {
            b'(' => {
                let mut bytes = Vec::new();
                let mut depth = 1;
                index += 1;
                while index < stream.len() && depth > 0 {
                    let byte = stream[index];
                    match byte {
                        b'\\' => {
                            let digits: Vec<u8> = stream[index + 1..]
                                .iter()
                                .take(3)
                                .take_while(|digit| (b'0'..=b'7').contains(digit))
                                .copied()
                                .collect();
                            if digits.is_empty() {
                                bytes.push(match stream.get(index + 1).copied().unwrap_or(b'\\') {
                                    b'n' => b'\n',
                                    b'r' => b'\r',
                                    b't' => b'\t',
                                    b'b' => 0x08,
                                    b'f' => 0x0C,
                                    other => other,
                                });
                                index += 2;
                            } else {
                                let value = digits
                                    .iter()
                                    .fold(0_u32, |acc, digit| acc * 8 + u32::from(digit - b'0'));
                                bytes.push(value as u8);
                                index += 1 + digits.len();
                            }
                            continue;
                        }
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    if depth > 0 {
                        bytes.push(byte);
                    }
                    index += 1;
                }
                strings.push(bytes);
            }
            b'<' if stream.get(index + 1) != Some(&b'<') => {
                let end = stream[index..]
                    .iter()
                    .position(|byte| *byte == b'>')
                    .map_or(stream.len(), |offset| index + offset);
                let hex: Vec<u8> =
                    stream[index + 1..end].iter().copied().filter(u8::is_ascii_hexdigit).collect();
                let bytes = hex
                    .chunks_exact(2)
                    .filter_map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
                    .collect();
                strings.push(bytes);
                index = end + 1;
            }
            b'<' => index += 2,
            _ => index += 1,
        }
    }
    strings
}

fn utf16_hex(hex: &str) -> Option<String> {
    let units: Option<Vec<u16>> = (0..hex.len())
        .step_by(4)
        .map(|index| hex.get(index..index + 4).and_then(|unit| u16::from_str_radix(unit, 16).ok()))
        .collect();
    String::from_utf16(&units?).ok()
}

/// Every stream of the PDF, inflated when it is Flate-compressed.
fn pdf_streams(pdf: &[u8]) -> Vec<Vec<u8>> {
    let mut streams = Vec::new();
    let mut offset = 0;
    while let Some(position) = find(&pdf[offset..], b"stream") {
        let mut start = offset + position + b"stream".len();
        if pdf.get(start) == Some(&b'\r') {
            start += 1;
        }
        if pdf.get(start) != Some(&b'\n') {
            offset = start;
            continue;
        }
        start += 1;
        let Some(length) = find(&pdf[start..], b"endstream") else { break };
        let data = &pdf[start..start + length];
        streams.push(
            miniz_oxide::inflate::decompress_to_vec_zlib(data).unwrap_or_else(|_| data.to_vec()),
        );
        offset = start + length + b"endstream".len();
    }
    streams
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

// ---------------------------------------------------------------- browser

/// Loads index.html in headless Chromium with the network off: no console errors, the DOM has
/// one figure per figure spec, and the screenshot is not blank.
#[test]
fn index_html_renders_in_headless_chromium() {
    let Some(chromium) = find_chromium() else {
        assert!(
            !tools_required(),
            "headless Chromium is needed for this test but was not found (looked for $CHROMIUM, \
             chromium, chromium-browser, google-chrome on PATH and /usr/bin/chromium); install \
             the Debian package with `apt-get install -y chromium` (`.ci/run` does)"
        );
        // One write, past the harness's capture, so the note shows on a passing run.
        let note = "note: skipped `index_html_renders_in_headless_chromium`: no Chromium found \
                    (`apt-get install chromium`; `.ci/run` installs it and sets \
                    RUNNER_REQUIRE_TOOLS=1, which makes this test mandatory)\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), note.as_bytes());
        return;
    };
    let (dir, _) = standard_bundle();
    let url = format!("file://{}", dir.path().join("index.html").display());

    let (dom, log) = run_chromium(&chromium, &["--dump-dom", &url]);
    assert_eq!(
        dom.matches("<figure class=\"plot\"").count(),
        fixture_spec().figures.len(),
        "figures in the DOM"
    );
    assert_eq!(dom.matches("<svg").count(), fixture_spec().figures.len(), "inline SVGs in the DOM");
    // The sort script ran: it sets a title on every header of the sortable tables.
    assert!(dom.contains("title=\"Sort by this column\""), "inline script did not run");
    let console: Vec<&str> =
        log.lines().filter(|line| line.contains(":CONSOLE") || line.contains("Uncaught")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let network: Vec<&str> = log.lines().filter(|line| line.contains("net::ERR_")).collect();
    assert!(network.is_empty(), "the page tried to load something: {network:#?}");

    let screenshot = dir.path().join("screenshot.png");
    let argument = format!("--screenshot={}", screenshot.display());
    run_chromium(&chromium, &[&argument, "--window-size=1200,1600", &url]);
    let (width, height, dark_fraction, colours) = png_stats(&screenshot);
    assert_eq!((width, height), (1200, 1600));
    assert!(dark_fraction > 0.01, "screenshot is nearly blank ({dark_fraction:.4} dark pixels)");
    assert!(colours > 16, "screenshot has only {colours} colours");
}

/// Whether tests that need a program the Rust toolchain does not bring (Chromium, Graphviz)
/// must run: `.ci/run` installs them and sets `RUNNER_REQUIRE_TOOLS=1`; elsewhere such a test
/// says it is skipped and passes.
fn tools_required() -> bool {
    std::env::var("RUNNER_REQUIRE_TOOLS").is_ok_and(|value| value == "1")
}

fn find_chromium() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("CHROMIUM").map(PathBuf::from).into_iter().collect();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            candidates.push(dir.join(name));
        }
    }
    candidates.push(PathBuf::from("/usr/bin/chromium"));
    candidates.into_iter().find(|candidate| candidate.is_file())
}

/// Runs headless Chromium with the network disabled; returns (stdout, stderr).
fn run_chromium(chromium: &Path, arguments: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().expect("profile directory");
    let output_dir = tempfile::tempdir().expect("output directory");
    let stdout_path = output_dir.path().join("stdout");
    let stderr_path = output_dir.path().join("stderr");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-extensions",
            "--disable-default-apps",
            "--hide-scrollbars",
            "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout_path).expect("stdout file"))
        .stderr(fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", chromium.display()));
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(status.success(), "chromium failed ({status}): {stderr}");
    (stdout, stderr)
}

/// (width, height, fraction of dark pixels, distinct colours) of an RGB(A) PNG.
fn png_stats(path: &Path) -> (u32, u32, f64, usize) {
    let file = fs::File::open(path)
        .unwrap_or_else(|error| panic!("no screenshot at {}: {error}", path.display()));
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).expect("PNG frame");
    let channels = info.color_type.samples();
    assert!(channels >= 3, "unexpected PNG colour type {:?}", info.color_type);
    let pixels = &buffer[..info.buffer_size()];
    let mut dark = 0_usize;
    let mut colours = std::collections::HashSet::new();
    let count = pixels.len() / channels;
    for pixel in pixels.chunks_exact(channels) {
        let (r, g, b) = (pixel[0], pixel[1], pixel[2]);
        if u32::from(r) + u32::from(g) + u32::from(b) < 3 * 160 {
            dark += 1;
        }
        if colours.len() < 10_000 {
            colours.insert((r, g, b));
        }
    }
    (info.width, info.height, dark as f64 / count.max(1) as f64, colours.len())
}

// ---------------------------------------------------------------- what a render touches

/// `figures/` or `tables/` linked to a directory outside the bundle: refused before anything
/// is written, and nothing in the link's target is touched (issue 19, item 1).
#[cfg(unix)]
#[test]
fn a_symlinked_subdirectory_is_refused_and_its_target_untouched() {
    for name in ["figures", "tables"] {
        let (dir, _) = standard_bundle();
        let paper = tempfile::tempdir().expect("paper directory");
        fs::write(paper.path().join("chapter3.tex"), "mine\n").expect("write");
        fs::remove_dir_all(dir.path().join(name)).expect("rm");
        std::os::unix::fs::symlink(paper.path(), dir.path().join(name)).expect("symlink");
        let before = read(dir.path(), "manifest.json");
        let rows = fixture_rows();
        let provenance = fixture_provenance();
        let spec = fixture_spec();
        let input = ReportInput {
            experiment: "fixture",
            title: "t",
            description: None,
            spec: &spec,
            provenance: &provenance,
            template_dir: None,
        };
        let error = render(dir.path(), &input, &rows).expect_err("a symlinked subdirectory");
        let message = error.to_string();
        assert!(matches!(error, ReportError::NotADirectory { .. }), "{message}");
        assert!(message.contains(&format!("{name}` is a symbolic link to")), "{message}");
        assert!(message.contains("link the other way round"), "{message}");
        let left: Vec<String> = fs::read_dir(paper.path())
            .expect("list")
            .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["chapter3.tex"], "the link's target is untouched");
        assert_eq!(read(dir.path(), "manifest.json"), before, "nothing was written");
        let problems = verify(dir.path()).expect("verify");
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(&format!("not a regular file: {name} (a symbolic link"))),
            "{problems:?}"
        );
    }
}

/// A re-render removes only what the previous manifest listed (and runner's temporaries);
/// a file someone else put in the bundle stays, unlisted, and `verify` reports it.
#[test]
fn a_render_removes_only_listed_files_and_temporaries() {
    let (dir, _) = standard_bundle();
    fs::write(dir.path().join("figures/notes.txt"), "mine\n").expect("write");
    for temporary in [".tmpAb12Cd", "figures/.runner-tmp-x1", "tables/.runner-tmp-y2"] {
        fs::write(dir.path().join(temporary), "half a file").expect("write");
    }
    let problems = verify(dir.path()).expect("verify");
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("not listed in the manifest: .tmpAb12Cd (a temporary file")),
        "{problems:?}"
    );
    let mut spec = fixture_spec();
    spec.figures.truncate(1);
    let rows = fixture_rows();
    let provenance = fixture_provenance();
    let input = ReportInput {
        experiment: "fixture",
        title: "t",
        description: None,
        spec: &spec,
        provenance: &provenance,
        template_dir: None,
    };
    render(dir.path(), &input, &rows).expect("re-render");
    assert!(!dir.path().join("figures/fig2_latency_vs_rate.svg").exists(), "listed, stale: gone");
    assert_eq!(read(dir.path(), "figures/notes.txt"), "mine\n", "unlisted: kept");
    for temporary in [".tmpAb12Cd", "figures/.runner-tmp-x1", "tables/.runner-tmp-y2"] {
        assert!(!dir.path().join(temporary).exists(), "{temporary} removed");
    }
    let manifest = read(dir.path(), "manifest.json");
    assert!(!manifest.contains("notes.txt") && !manifest.contains("tmp"), "{manifest}");
    assert_eq!(
        verify(dir.path()).expect("verify"),
        ["not listed in the manifest: figures/notes.txt"]
    );
}

/// `verify` reports a symbolic link in the bundle instead of following it (item 19), and a
/// FIFO or a link to `/dev/zero` in place of a listed file without blocking (item 9).
#[cfg(unix)]
#[test]
fn verify_reports_links_and_special_files_without_following_or_blocking() {
    let (dir, _) = standard_bundle();
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("figures/evil.svg")).expect("ln");
    fs::remove_file(dir.path().join("report.md")).expect("rm");
    let status = Command::new("mkfifo").arg(dir.path().join("report.md")).status().expect("mkfifo");
    assert!(status.success());
    fs::remove_file(dir.path().join("spec.yaml")).expect("rm");
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("spec.yaml")).expect("ln");
    let started = Instant::now();
    let problems = verify(dir.path()).expect("verify");
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    assert!(
        problems.contains(
            &"not a regular file: figures/evil.svg (a symbolic link to `/etc/passwd`); a bundle holds only the files runner wrote".to_owned()
        ),
        "{problems:?}"
    );
    assert!(
        problems.contains(&"not a regular file: report.md (a FIFO)".to_owned()),
        "{problems:?}"
    );
    assert!(
        problems
            .contains(&"not a regular file: spec.yaml (a symbolic link to `/dev/zero`)".to_owned()),
        "{problems:?}"
    );
    assert_eq!(problems.len(), 3, "{problems:?}");
    let inputs = super::check_inputs(dir.path()).expect("check inputs");
    assert_eq!(inputs, ["not a regular file: spec.yaml (a symbolic link to `/dev/zero`)"]);
}

/// `$` is escaped wherever user text reaches Markdown, and bidirectional controls and other
/// invisible format characters never reach a page, figure or table (issue 19, item 27).
#[test]
fn dollars_are_escaped_and_bidi_controls_never_reach_the_bundle() {
    let mut rows = fixture_rows();
    rows[0].error = Some("costs $5 \u{202E}gnp.exe\u{202C} and $6".into());
    let mut spec = fixture_spec();
    spec.figures[0].title = Some("Latency \u{2066}in $ cycles\u{2069}".into());
    let title = "Costs $5 and $6 \u{202E}txt.exe\u{200B}";
    let (dir, _) = render_fixture(title, &rows, &spec, None);
    let markdown = read(dir.path(), "report.md");
    assert!(markdown.starts_with("# Costs \\$5 and \\$6 txt.exe\n"), "{markdown}");
    assert!(markdown.contains("Latency in \\$ cycles"), "{markdown}");
    assert!(read(dir.path(), "tables/results.md").contains("costs \\$5 gnp.exe and \\$6"));
    for relative in EXPECTED_FILES.iter().filter(|path| !path.ends_with(".pdf")) {
        let text = String::from_utf8_lossy(&fs::read(dir.path().join(relative)).expect("read"))
            .into_owned();
        let invisible: Vec<char> =
            text.chars().filter(|&c| super::tables::is_invisible_format(c)).collect();
        assert!(invisible.is_empty(), "{relative} holds {invisible:?}");
    }
    assert!(read(dir.path(), "index.html").contains("Costs $5 and $6 txt.exe"));
}

/// A run of many load points: the pages and the LaTeX and Markdown tables show at most
/// `MAX_TABLE_ROWS` rows and say where the rest are, the CSV has them all, and each figure
/// series is thinned to what fits in `MAX_FIGURE_POINTS` (issue 19, item 7).
#[test]
fn many_load_points_give_bounded_pages_tables_and_figures() {
    let points = super::figure::MAX_FIGURE_POINTS + 1_000;
    let rows: Vec<Row> = (0..points)
        .map(|index| {
            let rate = 1e-6 * (index + 1) as f64;
            let mut row = base_row("s1a2b3", 1, rate);
            row.method = "model".into();
            row.status = "ok".into();
            row.latency = Some(36.0 + rate);
            row
        })
        .collect();
    let spec = ReportSpec {
        template_dir: None,
        figures: fixture_spec().figures[..1].to_vec(),
        tables: vec![TableKind::Results, TableKind::Comparison],
    };
    let (dir, _) = render_fixture("many", &rows, &spec, None);
    let comparison = read(dir.path(), "tables/comparison.csv");
    assert_eq!(comparison.lines().count(), points + 1, "one comparison line per point");
    assert!(read(dir.path(), "tables/comparison.md").contains(&format!(
        "Showing the first {} of {points} rows; all {points} are in tables/comparison.csv.",
        super::tables::MAX_TABLE_ROWS
    )));
    let shown = super::tables::MAX_TABLE_ROWS;
    let sentence = format!("Showing the first {shown} of {points} rows; all {points} are in");
    for page in ["index.html", "report.md", "tables/results.md", "tables/results.tex"] {
        let text = read(dir.path(), page);
        assert!(text.contains(&sentence), "{page} says what it left out");
        assert!(!text.contains("| 0.02"), "{page} shows no row past the first {shown}");
    }
    let csv = read(dir.path(), "tables/results.csv");
    assert_eq!(csv.lines().count(), points + 1, "the CSV has every row");
    let svg = read(dir.path(), "figures/fig1_latency_vs_rate.svg");
    assert!(svg.len() < 3_000_000, "{} bytes of SVG", svg.len());
    let html = read(dir.path(), "index.html");
    assert!(html.contains("evenly spaced ones; every point is in results.parquet"));
    assert!(html.len() < 5_000_000, "{} bytes of HTML", html.len());
}

/// Saturated, deadlocked and imprecise simulation points get distinct markers, each explained
/// in the caption; an imprecise point is drawn at its estimate, not dropped.
#[test]
fn deadlocked_and_imprecise_points_have_their_own_markers() {
    let rows: Vec<Row> = fixture_rows()
        .into_iter()
        .map(|mut row| {
            let aggregate = row.method == "simulation" && row.virtual_channels == 1;
            if aggregate && (row.rate - 0.010).abs() < 1e-12 {
                row.status = "deadlock".into();
            }
            if aggregate && (row.rate - 0.002).abs() < 1e-12 {
                row.status = "imprecise".into();
            }
            row
        })
        .collect();
    let (dir, _) = render_fixture("t", &rows, &fixture_spec(), None);
    let html = read(dir.path(), "index.html");
    assert!(html.contains("Crosses on the top edge mark simulations that deadlocked."), "caption");
    assert!(html.contains("A ring around a marker flags a simulation point"), "caption");
    assert!(html.contains("triangle on the top edge marks"), "saturated V = 2 points");
    let svg = read(dir.path(), "figures/fig1_latency_vs_rate.svg");
    assert!(svg.contains("<circle"), "an imprecise point is drawn");
    // The legend explains every status marker the figure holds.
    for entry in ["\nDeadlocked\n", "\nImprecise (estimate)\n", "\nSaturated"] {
        assert!(svg.contains(entry), "legend entry {entry}");
    }
}

/// Intermediates the table knows get the papers' symbol, meaning and unit on the axis (an
/// indexed family its index); others keep their key.
#[test]
fn intermediate_axis_labels_name_the_quantity() {
    let label = super::columns::axis_label("intermediates.p_s");
    assert!(label.starts_with("P_S, set-up success"), "{label}");
    let label = super::columns::axis_label("intermediates.lambda_cr");
    assert!(label.starts_with("\u{3bb}_cr") && label.contains("copies/channel/cycle"), "{label}");
    assert_eq!(super::columns::axis_label("intermediates.xi_1"), "\u{3be}_1, exponent of hop 1");
    assert_eq!(
        super::columns::axis_label("intermediates.lambda_up_2"),
        "\u{3bb}_up,2, up-channel rate at level 2 (messages/channel/cycle)"
    );
    assert_eq!(super::columns::axis_label("intermediates.unknown_key"), "unknown key");
}

/// Each figure page's tidy CSV is in the manifest and linked from the HTML page and report.md.
#[test]
fn the_figure_csv_is_listed_and_linked() {
    let (dir, written) = standard_bundle();
    let csv = dir.path().join("figures/fig1_latency_vs_rate.csv");
    assert!(written.contains(&csv), "render wrote the CSV");
    let manifest = read(dir.path(), "manifest.json");
    assert!(manifest.contains("\"figures/fig1_latency_vs_rate.csv\""), "manifest lists it");
    let html = read(dir.path(), "index.html");
    assert!(html.contains("href=\"figures/fig1_latency_vs_rate.csv\""), "page links it");
    let markdown = read(dir.path(), "report.md");
    assert!(markdown.contains("[CSV](figures/fig1_latency_vs_rate.csv)"), "report.md links it");
    let text = read(dir.path(), "figures/fig1_latency_vs_rate.csv");
    assert!(text.starts_with("figure,panel,panel_title,series,method,kind,rate,latency,ci95,"));
}

/// Rows of `points` load points per scenario of the fixture (model, two replications and the
/// aggregate each), for tables longer than a page.
fn long_rows(points: u32) -> Vec<Row> {
    let mut rows = Vec::new();
    for step in 1..=points {
        for mut row in fixture_rows().into_iter().filter(|row| row.rate == 0.002) {
            row.rate = 1e-5 * f64::from(step);
            rows.push(row);
        }
    }
    rows
}

/// A table longer than a page is paged in `index.html`: its first page as HTML rows, every
/// row as compact JSON for the script, a no-script sentence in the pager; a short table is
/// plain HTML. The page of a long results table is a fraction of what all rows as HTML took.
#[test]
fn long_tables_are_paged_in_the_page_and_short_ones_are_not() {
    let spec = ReportSpec { figures: Vec::new(), ..every_table_spec() };
    let points = 600;
    let (dir, _) = render_fixture("t", &long_rows(points), &spec, None);
    let html = read(dir.path(), "index.html");
    let page_size = super::pages::PAGE_SIZE;
    let body_rows = |id: &str| {
        let start = html.find(&format!("id=\"table-{id}\"")).expect("table");
        let end = start + html[start..].find("</tbody>").expect("tbody");
        html[start..end].matches("<tr>").count() - 1
    };
    // 600 points x 2 scenarios: results 2,400 rows (1,000 shown), comparison 1,200 (1,000).
    assert_eq!(body_rows("results"), page_size, "the first page only");
    assert_eq!(body_rows("comparison"), page_size);
    for id in ["results", "comparison"] {
        let start = html
            .find(&format!("<script type=\"application/json\" id=\"table-{id}-data\">"))
            .unwrap_or_else(|| panic!("no data for {id}"));
        let json = &html[start..start + html[start..].find("</script>").expect("end")];
        let json = &json[json.find('>').expect(">") + 1..];
        let data: Vec<Vec<String>> = serde_json::from_str(json).expect("data is JSON");
        assert_eq!(data.len(), super::tables::MAX_TABLE_ROWS, "{id}: every shown row");
        assert!(html.contains(&format!("id=\"table-{id}-pager\">The first {page_size} of 1000")));
    }
    // The agreement (2 scenarios) and saturation tables fit a page: plain rows, no pager.
    assert!(!html.contains("table-agreement-data") && !html.contains("table-saturation-pager"));
    assert!(html.contains("<tfoot>"), "the agreement's overall rows in the foot");
    // Bytes per shown row of the two long tables: the rows as HTML took about 700.
    let per_row = html.len() / (2 * super::tables::MAX_TABLE_ROWS);
    assert!(per_row < 250, "{per_row} bytes of index.html per table row ({} in all)", html.len());
}

/// The paging script in a real browser: it builds the pager (filter, buttons, row count) and
/// keeps one page of rows; no console errors.
#[test]
fn a_paged_table_works_in_headless_chromium() {
    let Some(chromium) = find_chromium() else {
        assert!(!tools_required(), "headless Chromium is needed for this test but was not found");
        let note = "note: skipped `a_paged_table_works_in_headless_chromium`: no Chromium found\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), note.as_bytes());
        return;
    };
    let spec =
        ReportSpec { figures: Vec::new(), tables: vec![TableKind::Results], ..fixture_spec() };
    let (dir, _) = render_fixture("t", &long_rows(100), &spec, None);
    let url = format!("file://{}", dir.path().join("index.html").display());
    let (dom, log) = run_chromium(&chromium, &["--dump-dom", &url]);
    let page_size = super::pages::PAGE_SIZE;
    assert!(dom.contains(&format!("Rows 1\u{2013}{page_size} of 400")), "pager status: {dom}");
    assert!(dom.contains("placeholder=\"Filter rows (all words)\""), "filter box");
    assert!(dom.contains("title=\"Sort by this column\""), "sorting set up");
    let start = dom.find("<tbody>").expect("tbody");
    let end = start + dom[start..].find("</tbody>").expect("end");
    assert_eq!(dom[start..end].matches("<tr>").count(), page_size, "one page of rows");
    let console: Vec<&str> =
        log.lines().filter(|line| line.contains(":CONSOLE") || line.contains("Uncaught")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
}

/// A model and a simulation row whose rates differ by rounding are one load point; rates
/// further apart are two, whatever the row order.
#[test]
fn load_points_pair_rates_equal_up_to_rounding() {
    let row = |method: &str, rate: f64| {
        let mut row = base_row("s1a2b3", 1, rate);
        row.method = method.into();
        row.status = "ok".into();
        row.latency = Some(40.0);
        row
    };
    let rows = vec![
        row("simulation", 0.01 * (1.0 + 1e-12)),
        row("model", 0.02),
        row("model", 0.01),
        row("simulation", 0.02 * (1.0 + 1e-6)),
    ];
    let csv = super::tables::comparison_csv(&rows);
    let lines: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].contains(",40,ok,40,,,ok,"), "paired: {csv}");
}

/// The columns that name a scenario: any scenario field that varies (buffer depth too, which
/// no description names), less those another shown field implies.
#[test]
fn tables_name_scenarios_by_the_fields_that_tell_them_apart() {
    let scenario = |radix: u32, routing: &str, dateline: &str, buffer_depth: u32| {
        let mut row = base_row("s", 1, 0.01);
        row.radix = radix;
        row.nodes = u64::from(radix * radix);
        row.routing = routing.into();
        row.dateline = Some(dateline.into());
        row.buffer_depth = buffer_depth;
        super::columns::to_json(&row)
    };
    let fields = super::tables::varying_fields(&[
        scenario(8, "dimension_order", "per_traversal", 2),
        scenario(8, "duato", "switch", 4),
        scenario(16, "dimension_order", "per_traversal", 2),
    ]);
    assert_eq!(fields, ["radix", "routing", "buffer_depth"]);
    // A dateline that does not follow the routing is shown.
    let fields = super::tables::varying_fields(&[
        scenario(8, "dimension_order", "per_traversal", 2),
        scenario(8, "dimension_order", "switch", 2),
    ]);
    assert_eq!(fields, ["dateline"]);
}

/// With an external simulation (BookSim, say) the agreement table compares every pair: the
/// model against both simulations and the built-in simulation against the external one, each
/// row naming its pair; the errors are those of the rows.
#[test]
fn agreement_compares_every_pair_of_methods() {
    let mut rows = fixture_rows();
    let external: Vec<Row> = rows
        .iter()
        .filter(|row| row.method == "simulation")
        .map(|row| {
            let mut row = row.clone();
            row.method = "booksim".into();
            row.evaluator = "booksim@2".into();
            row.latency = row.latency.map(|latency| latency * 1.1);
            row
        })
        .collect();
    rows.extend(external);
    assert_eq!(
        super::agreement::pairs(&rows),
        [("model", "simulation"), ("model", "booksim"), ("simulation", "booksim")]
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    let all = super::agreement::compute_all(&rows).expect("three pairs");
    assert_eq!(all.scenarios.len(), 2 * 3);
    assert_eq!(all.overall.len(), 3);
    let of = |pair: &str| -> Vec<&super::agreement::ScenarioAgreement> {
        all.scenarios.iter().filter(|s| s.pair.as_deref() == Some(pair)).collect()
    };
    // The simulator against BookSim: 1/1.1 - 1 at every load both are stable.
    let expected = 1.0 / 1.1 - 1.0;
    for scenario in of("simulation vs. booksim") {
        let bias = scenario.light.bias.expect("bias");
        assert!((bias - expected).abs() < 1e-12, "{scenario:?}");
    }
    // The model against the built-in simulation is the table a run without BookSim gives.
    let plain = super::agreement::compute(&fixture_rows());
    let model_vs_sim = of("model vs. simulation");
    assert_eq!(model_vs_sim.len(), plain.scenarios.len());
    for (paired, alone) in model_vs_sim.iter().zip(&plain.scenarios) {
        assert_eq!((&paired.light, &paired.near), (&alone.light, &alone.near));
    }
    let table = super::tables::agreement_table(&all);
    assert_eq!(table.columns[0].header, "Compared");
    assert!(table.rows.iter().any(|row| row[0].text == "model vs. booksim"));
    assert!(table.note.as_deref().unwrap_or_default().contains("A vs. B"));
    let csv = super::tables::agreement_csv(&all);
    assert!(csv.starts_with("compared,scenario_id,"), "{csv}");
    // A run with one pair keeps the table (and CSV) it had.
    assert!(super::agreement::compute_all(&fixture_rows()).is_none());
    assert!(super::tables::agreement_csv(&plain).starts_with("scenario_id,"));
}
