//! Tests of the figures drawn from the side tables (`kind: link_heatmap`, `kind: histogram`):
//! a bundle with `links.parquet` and `histograms.parquet` renders one valid SVG, PDF and CSV
//! per chosen point, the manifest lists the side tables as inputs, and `verify` passes.

use std::fs;

use super::{ReportInput, render, verify};
use crate::measurement::{Binned, LatencyHistograms, LinkLoads};
use crate::scenario::{Scenario, Topology};
use crate::spec::report::{FigureKind, FigureSpec, PointName, PointSelector, ReportSpec};
use crate::store::provenance::Provenance;
use crate::store::row::Row;
use crate::store::{histograms, links};

/// An aggregate simulation row of `scenario` at `rate` with link loads (every link carrying
/// `flits(link)` flits over 1,000 cycles) and a latency histogram.
fn point(scenario: &Scenario, rate: f64, status: &str, flits: impl Fn(usize) -> u64) -> Row {
    let count = crate::sim::links::links(&scenario.topology).expect("links").len();
    let mut row = Row::of_scenario(scenario);
    row.task_id = format!("task-{}-{rate}", scenario.topology.kind());
    row.scenario_id = crate::store::build::scenario_id(scenario);
    row.method = "simulation".into();
    row.rate = rate;
    row.status = status.into();
    row.latency = Some(40.0);
    row.latency_p99 = Some(70.0);
    row.intermediates = "{}".into();
    row.replications = Some(1);
    row.link_loads = Some(LinkLoads {
        window_cycles: 1_000,
        flits: (0..count).map(flits).collect(),
        vc_flits: Vec::new(),
    });
    row.histograms = Some(LatencyHistograms {
        latency: Some(Binned { lower: 20, width: 1, counts: (0..200).map(|i| 200 - i).collect() }),
        network_latency: None,
        source_wait: None,
    });
    row
}

fn provenance() -> Provenance {
    Provenance {
        runner_version: "0.1.0".into(),
        model_version: "m".into(),
        sim_version: "s".into(),
        spec_path: "x.yaml".into(),
        spec_sha256: "ab".repeat(32),
        git_commit: None,
        git_dirty: None,
        command_line: vec!["runner".into()],
        host: "h".into(),
        started_at: "2026-11-26T00:00:00Z".into(),
        finished_at: "2026-11-26T00:00:01Z".into(),
        seed: 1,
    }
}

/// Renders `rows` into `bundle` with `spec`.
fn render_side(
    bundle: &std::path::Path,
    spec: &ReportSpec,
    rows: &[Row],
) -> Result<Vec<std::path::PathBuf>, super::ReportError> {
    let provenance = provenance();
    let input = ReportInput {
        experiment: "side",
        title: "Side tables",
        description: None,
        spec,
        provenance: &provenance,
        template_dir: None,
    };
    render(bundle, &input, rows)
}

#[test]
fn link_heatmaps_and_histograms_render_from_the_side_tables() {
    let torus = Scenario::new(Topology::Torus { radix: 4, dimensions: 2 });
    let tree = Scenario::new(Topology::FatTree { processors: 16 });
    let rows = vec![
        point(&torus, 0.01, "ok", |link| link as u64 * 10),
        point(&torus, 0.02, "ok", |link| link as u64 * 20),
        point(&torus, 0.03, "saturated", |_| 0),
        point(&tree, 0.01, "ok", |link| 100 + link as u64),
    ];
    let dir = tempfile::tempdir().expect("temporary directory");
    let bundle = dir.path();
    fs::write(bundle.join("results.parquet"), b"PAR1 fixture PAR1").expect("results");
    fs::write(bundle.join("spec.yaml"), b"name: side\n").expect("spec");
    let link_rows = links::link_rows(&rows, &[&torus, &tree]).expect("link rows");
    links::write(&bundle.join(links::FILE), &link_rows).expect("links.parquet");
    histograms::write(&bundle.join(histograms::FILE), &histograms::histogram_rows(&rows))
        .expect("histograms.parquet");
    // The report sees the rows as results.parquet holds them: without the side data.
    let plain: Vec<Row> =
        rows.iter().map(|r| Row { link_loads: None, histograms: None, ..r.clone() }).collect();
    let spec = ReportSpec {
        template_dir: None,
        figures: vec![
            FigureSpec { kind: FigureKind::LinkHeatmap, ..FigureSpec::default() },
            FigureSpec {
                kind: FigureKind::Histogram,
                point: Some(PointSelector::Named(PointName::All)),
                ..FigureSpec::default()
            },
            FigureSpec {
                kind: FigureKind::Histogram,
                point: Some(PointSelector::Rate(0.011)),
                ..FigureSpec::default()
            },
        ],
        tables: Vec::new(),
    };
    render_side(bundle, &spec, &plain).expect("render");
    // Highest stable point of each scenario: the torus at 0.02 (0.03 saturated), the tree.
    let heatmap = fs::read_to_string(bundle.join("figures/fig1a_link_utilization.svg"))
        .expect("the torus heat map");
    assert!(heatmap.contains("link utilisation (flits/cycle)"), "a colour-scale legend");
    assert!(heatmap.matches("<polygon").count() >= 64, "an arrowhead per link");
    let csv = fs::read_to_string(bundle.join("figures/fig1a_link_utilization.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 1 + 64, "{csv}");
    assert!(csv.contains("task-torus-0.02") && !csv.contains("task-torus-0.01"), "{csv}");
    let tree_page = fs::read_to_string(bundle.join("figures/fig1b_link_utilization.svg"))
        .expect("the tree's class summary");
    for class in ["up 0-1", "down 1-0", "up 1-2", "down 2-1"] {
        assert!(tree_page.contains(class), "{class} in the per-level summary");
    }
    // Every point (four), then the point nearest 0.011 of each scenario (two).
    for letter in ["a", "b", "c", "d"] {
        let stem = format!("figures/fig2{letter}_latency_histogram");
        for extension in ["svg", "pdf", "csv"] {
            assert!(bundle.join(format!("{stem}.{extension}")).is_file(), "{stem}.{extension}");
        }
    }
    let histogram = fs::read_to_string(bundle.join("figures/fig3a_latency_histogram.csv"))
        .expect("histogram csv");
    let counts: u64 =
        histogram.lines().skip(1).filter_map(|l| l.rsplit(',').next()?.parse::<u64>().ok()).sum();
    assert_eq!(counts, (1..=200).sum::<u64>(), "every message in some bar");
    assert!(histogram.lines().count() <= 1 + super::figure::MAX_HISTOGRAM_BARS);
    let page = fs::read_to_string(bundle.join("index.html")).expect("page");
    assert!(page.contains("fig1a_link_utilization"), "the page shows the heat map");
    let manifest = fs::read_to_string(bundle.join("manifest.json")).expect("manifest");
    assert!(manifest.contains("\"links.parquet\"") && manifest.contains("\"histograms.parquet\""));
    assert_eq!(verify(bundle).expect("verify"), Vec::<String>::new());
}

/// A heat map of an `ok` point whose bundle lacks links.parquet renders a page whose note says
/// how to get the table.
#[test]
fn a_link_heatmap_without_links_parquet_says_how_to_get_it() {
    let torus = Scenario::new(Topology::Torus { radix: 4, dimensions: 2 });
    let dir = tempfile::tempdir().expect("temporary directory");
    fs::write(dir.path().join("results.parquet"), b"PAR1").expect("results");
    let row = Row { link_loads: None, histograms: None, ..point(&torus, 0.01, "ok", |_| 1) };
    let spec = ReportSpec {
        template_dir: None,
        figures: vec![FigureSpec { kind: FigureKind::LinkHeatmap, ..FigureSpec::default() }],
        tables: Vec::new(),
    };
    render_side(dir.path(), &spec, std::slice::from_ref(&row)).expect("a page with a note");
    let page = fs::read_to_string(dir.path().join("index.html")).expect("page");
    assert!(page.contains("no links.parquet") && page.contains("link_loads: true"), "{page}");
}

/// Every figure kind with nothing to draw renders a page with a note, never a failed bundle:
/// here every simulated point saturated, so the run wrote neither histograms.parquet nor
/// links.parquet.
#[test]
fn figures_without_drawable_data_render_a_page_with_a_note() {
    let torus = Scenario::new(Topology::Torus { radix: 4, dimensions: 2 });
    let rows: Vec<Row> = [0.5, 0.6]
        .into_iter()
        .map(|rate| Row {
            link_loads: None,
            histograms: None,
            latency: None,
            latency_p99: None,
            ..point(&torus, rate, "saturated", |_| 0)
        })
        .collect();
    let dir = tempfile::tempdir().expect("temporary directory");
    let bundle = dir.path();
    fs::write(bundle.join("results.parquet"), b"PAR1 fixture PAR1").expect("results");
    fs::write(bundle.join("spec.yaml"), b"name: side\n").expect("spec");
    let figure = |kind, point| FigureSpec { kind, point, ..FigureSpec::default() };
    let spec = ReportSpec {
        template_dir: None,
        figures: vec![
            figure(FigureKind::Histogram, None),
            figure(FigureKind::LinkHeatmap, None),
            figure(FigureKind::Histogram, Some(PointSelector::Named(PointName::All))),
            figure(FigureKind::LinkHeatmap, Some(PointSelector::Rate(0.5))),
            figure(FigureKind::Lines, None),
            FigureSpec { y: "throughput".into(), ..FigureSpec::default() },
        ],
        tables: Vec::new(),
    };
    render_side(bundle, &spec, &rows).expect("the bundle renders");
    let read = |name: &str| {
        fs::read_to_string(bundle.join("figures").join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    for svg in ["fig1_latency_histogram.svg", "fig2_link_utilization.svg"] {
        let text = read(svg);
        assert!(text.contains("Nothing to draw") && text.contains("2 saturated"), "{svg}: {text}");
    }
    assert!(read("fig1_latency_histogram.csv").lines().count() == 1, "a header, no rows");
    for svg in
        ["fig3a_latency_histogram.svg", "fig3b_latency_histogram.svg", "fig4_link_utilization.svg"]
    {
        assert!(read(svg).contains("saturated."), "{svg}");
    }
    for stem in ["fig5_latency_vs_rate", "fig6_throughput_vs_rate"] {
        assert!(bundle.join(format!("figures/{stem}.svg")).is_file(), "{stem}");
    }
    let page = fs::read_to_string(bundle.join("index.html")).expect("index.html");
    assert!(
        page.contains("Nothing to draw: no simulated point finished ok"),
        "the note is the caption"
    );
    assert!(bundle.join("report.md").is_file());
    assert_eq!(verify(bundle).expect("verify"), Vec::<String>::new());
}
