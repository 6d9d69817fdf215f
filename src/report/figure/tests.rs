//! Tests of the figure layout against its promises, computed by the figure code itself: the
//! legend covers no panel and no point, labels stay on the page and clear of each other, large
//! grids split into pages no taller than 10 in, legends name only independent columns, the
//! axis fields do what the spec says, the display table covers every plottable quantity, no
//! two series differ by colour alone (legend samples read back from the SVG in greyscale), tick
//! labels share their decimals, a grid titles its outer axes once, and an imprecise point keeps
//! its marker and interval.

use serde_json::Value;

use super::draw::{Layout, TextKind, text_width};
use super::{Figure, PlotRow, build, scenario_json};
use crate::report::columns;
use crate::spec::report::FigureSpec;
use crate::store::row::Row;

/// A model row and a simulation aggregate row per load point for each scenario; latencies
/// rise towards `saturation`, the simulation 5% above the model with a 4% interval.
/// Changes a row into one of a scenario's.
type Adjust = dyn Fn(&mut Row);

fn rows(scenarios: &[(&str, &Adjust)], saturation: f64, points: u32) -> Vec<Row> {
    let mut rows = Vec::new();
    for (id, adjust) in scenarios {
        for step in 1..=points {
            let rate = saturation * f64::from(step) / f64::from(points + 1);
            let latency = 36.0 / (1.0 - rate / saturation);
            let mut model = Row {
                experiment: "t".into(),
                scenario_id: (*id).into(),
                topology: "torus".into(),
                radix: 8,
                dimensions: 2,
                nodes: 64,
                switching: "wormhole".into(),
                routing: "duato".into(),
                virtual_channels: 3,
                message_length: 32,
                ejection: "single".into(),
                rate,
                saturation_rate: Some(saturation),
                method: "model".into(),
                status: "ok".into(),
                latency: Some(latency),
                throughput: Some(rate),
                intermediates: "{}".into(),
                ..Row::default()
            };
            adjust(&mut model);
            let mut simulation = model.clone();
            simulation.method = "simulation".into();
            simulation.latency = Some(latency * 1.05);
            simulation.latency_ci95 = Some(latency * 0.04);
            simulation.replications = Some(3);
            rows.push(model);
            rows.push(simulation);
        }
    }
    rows
}

/// Calls `with` on the plot rows of `spec` over `rows` (what the figures read of each row,
/// with its own scenario's columns).
fn with_plot_rows<T>(spec: &FigureSpec, rows: &[Row], with: impl FnOnce(&[PlotRow<'_>]) -> T) -> T {
    let columns = super::plot_columns(std::slice::from_ref(spec));
    let mut interner = super::Interner::default();
    let fields: Vec<super::PlotFields> =
        rows.iter().map(|row| super::PlotFields::of(row, &columns, &mut interner)).collect();
    let scenarios: Vec<Value> = rows.iter().map(scenario_json).collect();
    let plot_rows: Vec<PlotRow<'_>> = rows
        .iter()
        .zip(&fields)
        .zip(&scenarios)
        .map(|((scenario_row, row), scenario)| PlotRow {
            row,
            columns: &columns,
            scenario,
            scenario_row,
        })
        .collect();
    with(&plot_rows)
}

fn figures(spec: &FigureSpec, rows: &[Row]) -> Vec<Figure> {
    with_plot_rows(spec, rows, |plot_rows| build(1, spec, plot_rows).expect("figure builds"))
}

/// The panels and series of `spec` over `rows`, before layout.
fn prepared(spec: &FigureSpec, rows: &[Row]) -> super::data::FigureData {
    with_plot_rows(spec, rows, |plot_rows| super::prepare(spec, plot_rows))
}

fn spec(yaml: &str) -> FigureSpec {
    serde_saphyr::from_str(yaml).expect("figure spec")
}

/// A grid of `panels` radix values with `lines` scouting distances each.
fn grid(panels: u32, lines: u32) -> Vec<Row> {
    let mut adjusters: Vec<(String, Box<Adjust>)> = Vec::new();
    for panel in 0..panels {
        for line in 0..lines {
            adjusters.push((
                format!("s{panel}-{line}"),
                Box::new(move |row: &mut Row| {
                    row.radix = 4 + 2 * panel;
                    row.nodes = u64::from(row.radix * row.radix);
                    row.scouting_distance = Some(line);
                }),
            ));
        }
    }
    let scenarios: Vec<(&str, &Adjust)> =
        adjusters.iter().map(|(id, adjust)| (id.as_str(), adjust.as_ref())).collect();
    rows(&scenarios, 0.01, 8)
}

fn check_layout(layout: &Layout, context: &str) {
    let page = super::draw::Rect { left: 0, top: 0, right: layout.width, bottom: layout.height };
    assert!(
        f64::from(layout.height) <= super::MAX_PAGE_HEIGHT_PT * super::UNITS_PER_PT,
        "{context}: page {} units tall",
        layout.height
    );
    if let Some(legend) = &layout.legend {
        for (index, plot) in layout.plots.iter().enumerate() {
            assert!(!legend.intersects(plot), "{context}: legend over panel {index}");
        }
        for (index, ink) in layout.ink.iter().enumerate() {
            assert!(!ink.is_empty(), "{context}: panel {index} plots nothing");
            let covered = ink.iter().filter(|point| legend.contains(**point)).count();
            assert_eq!(covered, 0, "{context}: legend over {covered} points of panel {index}");
        }
    }
    for (panel, kind, rect, text) in &layout.texts {
        let inside = rect.left >= page.left
            && rect.right <= page.right
            && rect.top >= page.top
            && rect.bottom <= page.bottom;
        assert!(inside, "{context}: {kind:?} `{text}` of panel {panel:?} is cut: {rect:?}");
        for (index, plot) in layout.plots.iter().enumerate() {
            assert!(
                !rect.intersects(plot),
                "{context}: {kind:?} `{text}` is printed over panel {index}"
            );
        }
    }
    // Texts never overlap each other (tick labels of one axis may touch, never overlap).
    for (i, (panel_a, kind_a, a, text_a)) in layout.texts.iter().enumerate() {
        for (panel_b, kind_b, b, text_b) in &layout.texts[i + 1..] {
            assert!(
                !a.intersects(b),
                "{context}: {kind_a:?} `{text_a}` ({panel_a:?}) over {kind_b:?} `{text_b}` ({panel_b:?})"
            );
        }
    }
}

/// One legend per figure page, below the panels: it covers no plotting area and no plotted
/// point, whatever the data, and no label is cut or printed over another.
#[test]
fn the_legend_covers_no_panel_and_no_point_and_labels_stay_apart() {
    let rows = grid(4, 4);
    for yaml in [
        "{panels: [radix], lines: [scouting_distance]}",
        "{panels: [radix], lines: [scouting_distance], width: column}",
        "{lines: [scouting_distance], panels: [radix], log_y: true, shared_y: true}",
        "{x: fraction_of_saturation, lines: [radix, scouting_distance]}",
    ] {
        let figures = figures(&spec(yaml), &rows);
        for figure in &figures {
            check_layout(&figure.layout, yaml);
            let legends = figure
                .layout
                .texts
                .iter()
                .filter(|(_, kind, _, text)| *kind == TextKind::Legend && text == "Model")
                .count();
            assert_eq!(legends, 1, "{yaml}: one legend per figure page");
        }
    }
}

/// The y label area is sized from the widest tick label, and a long axis label wraps rather
/// than running off the panel (`throughput_torus` Fig. 2, `bft` Fig. 2 before).
#[test]
fn wide_tick_labels_and_long_axis_labels_are_never_cut_or_overprinted() {
    let wide = |row: &mut Row| {
        row.flit_throughput_min = Some(123_456.789 * row.rate);
        row.throughput = Some(row.rate / 1000.0);
    };
    let rows = rows(&[("a", &wide)], 0.0123, 9);
    for yaml in [
        "{y: flit_throughput_min}",
        "{y: throughput}",
        "{y: flit_throughput_min, y_label: 'A label long enough to need three lines in a panel of one column, surely'}",
    ] {
        for figure in figures(&spec(yaml), &rows) {
            check_layout(&figure.layout, yaml);
            let widest_tick = figure
                .layout
                .texts
                .iter()
                .filter(|(_, kind, _, _)| *kind == TextKind::YTick)
                .map(|(_, _, rect, _)| rect.right - rect.left)
                .max()
                .unwrap_or(0);
            assert!(widest_tick > 0, "{yaml}: y tick labels");
            let y_label = figure.layout.texts.iter().filter(|t| t.1 == TextKind::YLabel).count();
            assert!(y_label >= 1, "{yaml}: a y label");
        }
    }
    assert!(text_width("0.0025", 7.5) > text_width("25", 7.5));
}

/// `broadcast_hypercube` Fig. 1 had 18 panels on one 24 in page: now it splits into pages
/// of at most 10 in, `fig1a_...`, `fig1b_...`, with the panels spread evenly and lettered on.
#[test]
fn large_grids_split_into_pages_no_taller_than_a_journal_page() {
    let rows = grid(18, 2);
    let figures = figures(&spec("{panels: [radix], lines: [scouting_distance]}"), &rows);
    assert!(figures.len() >= 2, "{} pages", figures.len());
    let stems: Vec<&str> = figures.iter().map(|figure| figure.stem.as_str()).collect();
    assert_eq!(stems[0], "fig1a_latency_vs_rate");
    assert_eq!(stems[1], "fig1b_latency_vs_rate");
    let counts: Vec<usize> = figures.iter().map(|figure| figure.layout.plots.len()).collect();
    assert_eq!(counts.iter().sum::<usize>(), 18);
    assert!(
        counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0) <= 2,
        "{counts:?}"
    );
    for figure in &figures {
        check_layout(&figure.layout, &figure.stem);
        assert!(figure.title.contains("(part "), "{}", figure.title);
    }
    assert!(figures[1].svg.contains(&format!("({}) k = ", super::panel_letter(counts[0]))));
    // A page limit in the spec splits further; a figure that fits keeps its plain stem.
    let limited =
        figures_of("{panels: [radix], lines: [scouting_distance], max_panels_per_page: 4}", &rows);
    assert!(limited.iter().all(|figure| figure.layout.plots.len() <= 4));
    assert_eq!(limited.len(), 5);
    let one = figures_of("{panels: [radix]}", &grid(2, 1));
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].stem, "fig1_latency_vs_rate");
}

fn figures_of(yaml: &str, rows: &[Row]) -> Vec<Figure> {
    figures(&spec(yaml), rows)
}

fn legend_labels(figure: &Figure) -> Vec<String> {
    figure
        .layout
        .texts
        .iter()
        .filter(|(_, kind, _, _)| *kind == TextKind::Legend)
        .map(|(_, _, _, text)| text.clone())
        .collect()
}

/// Columns that follow from others (the dateline and tie-break from the routing, the node
/// count from the radix) never label series; values read in the field's words.
#[test]
fn legends_name_only_the_columns_that_vary_independently() {
    let duato = |row: &mut Row| {
        row.routing = "duato".into();
        row.dateline = Some("switch".into());
        row.tie_break = Some("positive".into());
    };
    let dor = |row: &mut Row| {
        row.routing = "dimension_order".into();
        row.virtual_channels = 2;
        row.dateline = Some("per_traversal".into());
        row.tie_break = Some("random".into());
    };
    let dor_16 = move |row: &mut Row| {
        dor(row);
        row.radix = 16;
        row.nodes = 256;
    };
    let rows = rows(&[("a", &duato), ("b", &dor), ("c", &dor_16)], 0.01, 5);
    let figure = &figures_of("{}", &rows)[0];
    let labels = legend_labels(figure);
    assert!(labels.contains(&"k = 8, Duato".to_owned()), "{labels:?}");
    assert!(labels.contains(&"k = 16, DOR".to_owned()), "{labels:?}");
    for label in &labels {
        for hidden in ["switch", "positive", "dateline", "tie", "N =", "V ="] {
            assert!(!label.contains(hidden), "`{hidden}` in the legend: {labels:?}");
        }
    }
    let figure = &figures_of("{lines: [routing], legend_title: 'Routing:'}", &rows)[0];
    let labels = legend_labels(figure);
    assert_eq!(labels[0], "Routing:", "{labels:?}");
}

/// A null cell of a field whose default the rows leave null reads as the default's name in
/// legends and table cells where the field applies (a dragonfly's `absolute` arrangement, a
/// router's `drained` reallocation), and stays empty where it does not (a torus has no
/// global arrangement).
#[test]
fn a_default_left_null_is_named_where_it_applies() {
    let dragonfly = |arrangement: Option<&str>| {
        let arrangement = arrangement.map(str::to_owned);
        move |row: &mut Row| {
            row.topology = "dragonfly".into();
            row.terminals_per_router = Some(2);
            row.global_arrangement.clone_from(&arrangement);
        }
    };
    let (absolute, relative) = (dragonfly(None), dragonfly(Some("relative")));
    let rows = rows(&[("a", &absolute), ("b", &relative)], 0.01, 3);
    let labels = legend_labels(&figures_of("{}", &rows)[0]);
    assert!(labels.contains(&"absolute".to_owned()), "{labels:?}");
    assert!(!labels.iter().any(|label| label.contains("none")), "{labels:?}");
    let cells = |row: &Row, name: &str| {
        let json = crate::report::columns::to_json(row);
        crate::report::tables::scenario::field_cells(&json, &[name])[0].text.clone()
    };
    assert_eq!(cells(&rows[0], "global_arrangement"), "absolute");
    assert_eq!(cells(&rows[0], "vc_reallocation"), "drained");
    let tail_sent = Row { vc_reallocation: Some("tail_sent".into()), ..rows[0].clone() };
    assert_eq!(cells(&tail_sent, "vc_reallocation"), "tail sent");
    let torus = Row { topology: "torus".into(), ..rows[0].clone() };
    assert_eq!(cells(&torus, "global_arrangement"), "");
}

fn y_range(yaml: &str, rows: &[Row]) -> (f64, f64) {
    let spec = spec(yaml);
    with_plot_rows(&spec, rows, |plot_rows| {
        let data = super::prepare(&spec, plot_rows);
        super::ranges::ranges(&data.panels[0], &spec).y
    })
}

/// y starts at 0 when the data come near it and a little below the data when 0 is far away;
/// `y_from_zero`, `ylim` and `xlim` override.
#[test]
fn the_y_axis_starts_near_the_data_unless_told_otherwise() {
    let flat = |row: &mut Row| {
        row.throughput = Some(40.0 + 1000.0 * row.rate);
    };
    let rows = rows(&[("a", &flat)], 0.01, 8);
    let (lo, hi) = y_range("{y: throughput}", &rows);
    assert!(lo > 35.0 && lo < 41.0 && hi > 49.0, "({lo}, {hi})");
    let (lo, _) = y_range("{y: throughput, y_from_zero: true}", &rows);
    assert_eq!(lo, 0.0);
    // Latency from 40 to 360 cycles: the low end is under a third of the top.
    let (lo, _) = y_range("{}", &grid(1, 1));
    assert_eq!(lo, 0.0);
    let (lo, _) = y_range("{y_from_zero: false}", &grid(1, 1));
    assert!(lo > 20.0 && lo < 40.5, "{lo}");
    let (lo, hi) = y_range("{ylim: [10, 100]}", &grid(1, 1));
    assert_eq!((lo, hi), (10.0, 100.0));
    let (lo, hi) = y_range("{ylim: [null, 100]}", &grid(1, 1));
    assert_eq!((lo, hi), (0.0, 100.0));
    let figure = &figures_of("{ylim: [null, 100]}", &grid(1, 1))[0];
    assert!(figure.caption.contains("triangle on the top edge marks where a series"));
    assert!(figure.caption.contains("(points above the axis or saturated)"), "{}", figure.caption);
    let figure = &figures_of("{xlim: [0.002, 0.005], log_x: true}", &grid(1, 1))[0];
    assert!(figure.caption.contains("Logarithmic x axis."), "{}", figure.caption);
    let ticks: Vec<&str> = figure
        .layout
        .texts
        .iter()
        .filter(|(_, kind, _, _)| *kind == TextKind::XTick)
        .map(|(_, _, _, text)| text.as_str())
        .collect();
    assert_eq!(ticks.first(), Some(&"0.002"), "{ticks:?}");
    assert_eq!(ticks.last(), Some(&"0.005"), "{ticks:?}");
}

/// `x: flit_rate` is the rate times the message length; a page-wide figure puts two panels
/// in a row and a column figure one.
#[test]
fn flit_rate_axis_and_figure_widths() {
    let long = |row: &mut Row| row.message_length = 64;
    let rows = rows(&[("a", &long)], 0.01, 4);
    let figure = &figures_of("{x: flit_rate, width: page}", &rows)[0];
    let line = figure.csv.lines().nth(1).expect("a data line");
    let fields: Vec<&str> = line.split(',').collect();
    assert_eq!(fields[6].parse::<f64>().ok(), Some(0.002 * 64.0), "{line}");
    assert!(figure.svg.contains("Offered load (flits/node/cycle)"));
    assert_eq!(figure.width_pt, super::PAGE_WIDTH_PT);
    let grid = grid(4, 1);
    let page = &figures_of("{panels: [radix]}", &grid)[0];
    let column = &figures_of("{panels: [radix], width: column}", &grid)[0];
    let lefts = |figure: &Figure| {
        let mut lefts: Vec<i32> = figure.layout.plots.iter().map(|plot| plot.left).collect();
        lefts.sort_unstable();
        lefts.dedup();
        lefts.len()
    };
    assert_eq!((lefts(page), lefts(column)), (2, 1));
    assert_eq!(column.width_pt, super::COLUMN_WIDTH_PT);
}

/// A confidence bar longer than the axis is cut there with an arrowhead, and the caption
/// says so; the caption counts the model's points per scenario.
#[test]
fn clipped_confidence_bars_are_marked_and_captioned() {
    let mut rows = grid(1, 1);
    for row in rows.iter_mut().filter(|row| row.method == "simulation").take(1) {
        row.latency_ci95 = Some(5_000.0);
    }
    let figure = &figures_of("{}", &rows)[0];
    assert!(figure.caption.contains("end in an arrowhead"), "{}", figure.caption);
    assert!(
        figure.caption.starts_with("Lines: model, 8 points per scenario"),
        "{}",
        figure.caption
    );
    let figure = &figures_of("{}", &grid(1, 1))[0];
    assert!(!figure.caption.contains("arrowhead"), "{}", figure.caption);
}

/// The tidy CSV holds exactly the plotted series: one line per model point and simulation
/// marker, the saturation line, with the series label and the scenario columns.
#[test]
fn the_figure_csv_holds_the_plotted_series() {
    let rows = grid(2, 2);
    let figure = &figures_of("{panels: [radix], lines: [scouting_distance]}", &rows)[0];
    let lines: Vec<&str> = figure.csv.lines().collect();
    assert!(
        lines[0]
            .starts_with("figure,panel,panel_title,series,method,kind,rate,latency,ci95,topology")
    );
    let count =
        |kind: &str| lines.iter().filter(|line| line.contains(&format!(",{kind},"))).count();
    assert_eq!(count("line"), 4 * 8);
    assert_eq!(count("marker"), 4 * 8);
    assert_eq!(count("saturation_line"), 4);
    assert!(lines.iter().any(|line| line.starts_with("1,b,k = 6,K = 1,simulation,marker,")));
}

/// Every numeric column, derived axis and every intermediate key the models and the
/// simulator emit has a display name (and a unit where it has one).
#[test]
fn every_plottable_quantity_has_a_display_name() {
    for (name, kind) in columns::COLUMNS {
        if *kind == columns::Kind::Number {
            assert!(columns::display(name).is_some(), "column `{name}` has no display entry");
        }
    }
    for name in crate::spec::columns::DERIVED_COLUMNS {
        assert!(columns::display(name).is_some(), "`{name}` has no display entry");
    }
    let mut keys: Vec<String> = Vec::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let mut specs: Vec<_> = std::fs::read_dir(&root)
        .expect("experiments")
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "yaml"))
        .collect();
    specs.sort_by_key(|entry| entry.file_name());
    for entry in specs {
        if entry.path().extension().is_none_or(|e| e != "yaml") {
            // `experiments/traces/` holds the traces the specs replay.
            continue;
        }
        let (_, experiment) = crate::spec::load(&entry.path()).expect("paper spec loads");
        // The scenario with the most features switched on (faults, broadcasts).
        let point = experiment
            .scenarios
            .iter()
            .max_by(|a, b| {
                let score = |s: &crate::scenario::Scenario| s.fault_rate + s.broadcast_fraction;
                score(&a.scenario).total_cmp(&score(&b.scenario))
            })
            .expect("a scenario");
        let scenario = &point.scenario;
        let mut rate = match &experiment.load {
            crate::spec::Load::Rates(rates) => rates[0],
            // Fractions of the simulator's own saturation: a light load under the bound.
            crate::spec::Load::FractionOfSaturation(_) => {
                0.05 * crate::sim::saturation::injection_bound(scenario)
            }
            crate::spec::Load::TraceTimeScale(_) => 0.0,
        };
        if let Some(model) = &experiment.model {
            let saturation = crate::model::saturation_rate(model.name, scenario, &model.options)
                .expect("saturation rate");
            let solved =
                crate::model::solve(model.name, scenario, 0.5 * saturation, &model.options)
                    .expect("model solves");
            keys.extend(solved.intermediates.iter().map(|(key, _)| key.clone()));
            rate = 0.3 * saturation;
        }
        let Some(simulation) = &experiment.simulation else { continue };
        if scenario.traffic.trace().is_some() {
            // A replay measures the same quantities as the generated traffic it stands for.
            continue;
        }
        let options = crate::sim::SimOptions {
            warmup_cycles: 200,
            cycles: 1_000,
            max_cycles: 2_000,
            batches: 4,
            ..simulation.options.clone()
        };
        let measured =
            crate::sim::simulate(scenario, rate, &options, 7, None).expect("simulator runs");
        keys.extend(measured.intermediates.iter().map(|(key, _)| key.clone()));
    }
    keys.sort();
    keys.dedup();
    assert!(keys.len() > 40, "{keys:?}");
    let missing: Vec<&String> = keys.iter().filter(|key| columns::display(key).is_none()).collect();
    assert!(missing.is_empty(), "intermediates without a display name: {missing:?}");
}

/// The new figure fields are validated where they are written: each problem located at its
/// value, all reported at once.
#[test]
fn figure_fields_are_validated_at_their_location() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("spec.yaml");
    let spec = "\
name: figure_fields
scenario:
  topology: {kind: fat_tree, processors: 16}
  routing: up_down
load: {rates: [0.001]}
methods: {model: {name: fat_tree}}
report:
  figures:
    - ylim: [100, 10]
      log_x: true
      xlim: [0, 0.01]
      max_panels_per_page: 0
      y_label: ''
";
    std::fs::write(&path, spec).expect("write spec");
    let error = crate::spec::load(&path).expect_err("refused");
    let found: Vec<(usize, String)> = error
        .diagnostics
        .iter()
        .map(|d| (d.location.map_or(0, |l| l.line() as usize), d.message.clone()))
        .collect();
    let line_of = |needle: &str| {
        found.iter().find(|(_, message)| message.contains(needle)).map(|(line, _)| *line)
    };
    assert_eq!(line_of("`ylim: [100, 10]` is empty"), Some(9), "{found:?}");
    assert_eq!(line_of("logarithmic axis"), Some(11), "{found:?}");
    assert_eq!(line_of("`max_panels_per_page` must be at least 1"), Some(12), "{found:?}");
    assert_eq!(line_of("`y_label` must be 1 to 200 characters"), Some(13), "{found:?}");
    // A spec using every field validates and renders (the schema lists them all).
    let spec = spec
        .replace("ylim: [100, 10]", "ylim: [null, 100]")
        .replace("xlim: [0, 0.01]", "xlim: [0.0005, null]")
        .replace("max_panels_per_page: 0", "max_panels_per_page: 2")
        .replace("y_label: ''", "y_label: Mean latency (cycles)\n      x_label: Load\n      legend_title: 'Model:'\n      panels: [radix]\n      width: page\n      shared_y: true\n      y_from_zero: false\n      log_y: true\n      x: flit_rate");
    std::fs::write(&path, &spec).expect("write spec");
    let (_, experiment) = crate::spec::load(&path).expect("every field validates");
    let figure = &experiment.report.figures[0];
    assert_eq!(figure.width, Some(crate::spec::report::FigureWidth::Page));
    let pages = figures(figure, &grid(3, 2));
    assert_eq!(pages.len(), 2, "two panels per page");
    for page in &pages {
        check_layout(&page.layout, &page.stem);
        assert!(page.svg.contains("Mean latency (cycles)") && page.svg.contains(">\nLoad\n<"));
        assert!(
            page.caption.contains("Logarithmic axes.") && page.caption.contains("share"),
            "{}",
            page.caption
        );
        assert_eq!(legend_labels(page)[0], "Model:");
    }
    let schema = include_str!("../../../schemas/experiment.schema.json");
    for field in [
        "xlim",
        "ylim",
        "log_x",
        "shared_y",
        "y_from_zero",
        "width",
        "max_panels_per_page",
        "x_label",
        "y_label",
        "legend_title",
        "select",
    ] {
        assert!(schema.contains(&format!("\"{field}\"")), "`{field}` is not in the JSON Schema");
    }
}

/// Saturated points of two series at the same loads stack on the top edge instead of one
/// hiding the other (two routings that saturate together); a series gets one triangle, at
/// its first saturated load.
#[test]
fn saturated_markers_of_several_series_at_one_load_stack() {
    let mut rows = grid(1, 2);
    let last_rates: Vec<f64> = {
        let mut rates: Vec<f64> = rows.iter().map(|row| row.rate).collect();
        rates.sort_by(f64::total_cmp);
        rates.dedup();
        rates[rates.len() - 3..].to_vec()
    };
    for row in rows.iter_mut() {
        if row.method == "simulation" && last_rates.contains(&row.rate) {
            row.status = "saturated".into();
            row.latency = None;
            row.latency_ci95 = None;
        }
    }
    let figure = &figures_of("{lines: [scouting_distance]}", &rows)[0];
    let layout = &figure.layout;
    check_layout(layout, "stacked saturated markers");
    let top_edge = layout.plots[0].top + (3.0 * super::UNITS_PER_PT).round() as i32;
    let at_edge: Vec<(i32, i32)> =
        layout.ink[0].iter().copied().filter(|&(_, y)| y >= top_edge).collect();
    let mut xs: Vec<i32> = at_edge.iter().filter(|p| p.1 == top_edge).map(|p| p.0).collect();
    xs.sort_unstable();
    xs.dedup();
    // One triangle per series where it leaves the axis, not one per saturated load.
    assert_eq!(xs.len(), 1, "one column of markers at the first saturated load: {at_edge:?}");
    for x in xs {
        let mut ys: Vec<i32> =
            at_edge.iter().filter(|p| p.0 == x && p.1 <= top_edge + 100).map(|p| p.1).collect();
        ys.sort_unstable();
        ys.dedup();
        assert!(ys.len() >= 2, "the two series' markers at x = {x} coincide: {ys:?}");
    }
}

/// An external method (`methods.external`) draws its own marker series, named in the legend
/// beside the built-in methods' (`runner`); its replication rows are not drawn.
#[test]
fn each_external_method_is_a_series_of_its_own() {
    let same = |_: &mut Row| {};
    let mut all = rows(&[("a", &same)], 0.01, 4);
    let built_in = all.clone();
    for row in built_in.iter().filter(|r| r.method == "simulation") {
        let mut external = row.clone();
        external.method = "booksim".into();
        external.latency = row.latency.map(|l| l * 1.1);
        all.push(external.clone());
        external.replication = Some(0);
        external.replications = None;
        all.push(external);
    }
    let spec = spec("{}");
    let data = prepared(&spec, &all);
    let legend: Vec<&str> = data.legend.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(legend, ["booksim", "runner"]);
    let series = &data.panels[0].series;
    assert_eq!(series.len(), 2);
    let booksim = series.iter().find(|s| s.label == "booksim").expect("a booksim series");
    let runner = series.iter().find(|s| s.label == "runner").expect("the built-in series");
    assert_ne!(booksim.style.style(), runner.style.style(), "its own marker and dash");
    assert_eq!(booksim.style.style().colour, runner.style.style().colour, "paired colours");
    assert_eq!(booksim.simulation.len(), 4, "one marker per load point, no replications");
    assert!(booksim.model.is_empty());
    assert_eq!(runner.model.len(), 4);
    assert_eq!(runner.simulation.len(), 4);
    // Without external rows the figure is as before: no series is named after a method.
    let labels = legend_labels(&figures_of("{}", &built_in)[0]);
    assert!(!labels.iter().any(|l| l == "runner"), "{labels:?}");
    let labels = legend_labels(&figures_of("{}", &all)[0]);
    assert!(labels.iter().any(|l| l == "booksim"), "{labels:?}");
}

/// An external model (`kind: model`: one evaluation per load point, no replications) is drawn
/// as a line, like the built-in model; an external simulation's aggregates are markers.
#[test]
fn an_external_model_is_a_line() {
    let same = |_: &mut Row| {};
    let mut all = rows(&[("a", &same)], 0.01, 4);
    for row in all.clone().iter().filter(|r| r.method == "model") {
        let mut external = row.clone();
        external.method = "md1_model".into();
        external.saturation_rate = None;
        all.push(external);
    }
    let spec = spec("{}");
    let data = prepared(&spec, &all);
    let series = &data.panels[0].series;
    let md1 = series.iter().find(|s| s.label == "md1_model").expect("the external model");
    assert_eq!(md1.model.len(), 4, "a line through its four load points");
    assert!(md1.simulation.is_empty());
}

/// An axis range without a meaningful span (`ylim: [0, 1e-323]` from an older or edited spec,
/// data of 5e-324 from an external program or an edited results.parquet) is widened to one
/// that can hold ticks, and the renderer never sizes its ticks from an unchecked count.
#[test]
fn subnormal_axis_spans_are_widened_and_ticks_stay_bounded() {
    use crate::spec::report::span_is_meaningful;
    for (lo, hi) in [(0.0, 1e-323), (0.0, 5e-324), (5e-324, 5e-324), (0.0, f64::MIN_POSITIVE)] {
        let ticks = super::draw::linear_ticks(lo, hi, 5);
        assert!(!ticks.is_empty() && ticks.len() <= 100, "[{lo:e}, {hi:e}]: {}", ticks.len());
    }
    let y_ticks = |figure: &Figure| {
        figure.layout.texts.iter().filter(|(_, kind, _, _)| *kind == TextKind::YTick).count()
    };
    // Limits that validation now refuses, as a bundle's older spec.yaml may still hold them.
    let limits = spec("{ylim: [0, 1e-323]}");
    let (lo, hi) = y_range("{ylim: [0, 1e-323]}", &grid(1, 1));
    assert!(span_is_meaningful(lo, hi, false), "({lo:e}, {hi:e})");
    let figure = &figures(&limits, &grid(1, 1))[0];
    assert!((1..=100).contains(&y_ticks(figure)), "{}", y_ticks(figure));
    // Every value at the smallest subnormal.
    let mut tiny = grid(1, 1);
    for row in &mut tiny {
        row.latency = Some(5e-324);
        row.latency_ci95 = None;
    }
    for yaml in ["{}", "{log_y: true}", "{y_from_zero: false}", "{ylim: [null, 1e-323]}"] {
        let (lo, hi) = y_range(yaml, &tiny);
        assert!(span_is_meaningful(lo, hi, yaml.contains("log")), "{yaml}: ({lo:e}, {hi:e})");
        let figure = &figures_of(yaml, &tiny)[0];
        assert!((1..=100).contains(&y_ticks(figure)), "{yaml}: {}", y_ticks(figure));
        check_layout(&figure.layout, yaml);
    }
    // Values near the largest float (an edited results.parquet): the padded range would
    // overflow to infinity; it is brought back into the finite range.
    let mut huge = grid(1, 1);
    for row in &mut huge {
        row.latency = Some(1.7e308);
        row.rate *= 1e306;
    }
    for yaml in ["{}", "{log_y: true, log_x: true}"] {
        let (lo, hi) = y_range(yaml, &huge);
        assert!(span_is_meaningful(lo, hi, yaml.contains("log")), "{yaml}: ({lo:e}, {hi:e})");
        let figure = &figures_of(yaml, &huge)[0];
        assert!((1..=100).contains(&y_ticks(figure)), "{yaml}: {}", y_ticks(figure));
    }
}

/// `validate` refuses an axis limit pair whose span is not meaningful, located at the pair;
/// a single end next to an automatic one stays allowed.
#[test]
fn axis_limits_without_a_meaningful_span_are_refused_at_their_location() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("spec.yaml");
    let spec = "\
name: tiny_span
scenario:
  topology: {kind: fat_tree, processors: 16}
  routing: up_down
load: {rates: [0.001]}
methods: {model: {name: fat_tree}}
report:
  figures:
    - ylim: [0, 1e-323]
    - xlim: [1, 1.0000000000001]
    - {log_y: true, ylim: [1, 1.0000000000001]}
    - {ylim: [-1e308, 1e308]}
    - {ylim: [null, 1e-323], xlim: [0, 0.01]}
";
    std::fs::write(&path, spec).expect("write spec");
    let error = crate::spec::load(&path).expect_err("refused");
    let found: Vec<(usize, String)> = error
        .diagnostics
        .iter()
        .map(|d| (d.location.map_or(0, |l| l.line() as usize), d.message.clone()))
        .collect();
    let refused: Vec<usize> = found
        .iter()
        .filter(|(_, message)| message.contains("spans too little to draw an axis"))
        .map(|(line, _)| *line)
        .collect();
    assert_eq!(refused, [9, 10, 11, 12], "{found:?}");
    assert!(found.iter().any(|(_, m)| m.contains("`ylim: [0.0, 1e-323]`")), "{found:?}");
}

/// One element of an SVG document as drawn: its tag, whether it is filled, its stroke and
/// fill colours and its coordinates (a polyline's or polygon's points; a circle's centre and
/// radius; a rectangle's corner and size).
#[derive(Debug)]
struct Drawn {
    tag: String,
    filled: bool,
    colours: Vec<String>,
    points: Vec<(i32, i32)>,
    radius: Option<i32>,
}

/// The shapes of an SVG document written by plotters' backend, one element per line.
fn drawn(svg: &str) -> Vec<Drawn> {
    let attribute = |line: &str, name: &str| -> Option<String> {
        let start = line.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = line[start..].find('"')? + start;
        Some(line[start..end].to_owned())
    };
    let number = |text: Option<String>| -> i32 {
        text.and_then(|text| text.parse::<f64>().ok()).map_or(0, |value| value.round() as i32)
    };
    let mut shapes = Vec::new();
    for line in svg.lines() {
        let Some(tag) = ["polyline", "polygon", "circle", "rect"]
            .into_iter()
            .find(|tag| line.starts_with(&format!("<{tag} ")))
        else {
            continue;
        };
        let fill = attribute(line, "fill").unwrap_or_else(|| "none".to_owned());
        let colours: Vec<String> = [attribute(line, "stroke"), Some(fill.clone())]
            .into_iter()
            .flatten()
            .filter(|colour| colour.starts_with('#'))
            .collect();
        let points: Vec<(i32, i32)> = match tag {
            "circle" => vec![(number(attribute(line, "cx")), number(attribute(line, "cy")))],
            "rect" => vec![
                (number(attribute(line, "x")), number(attribute(line, "y"))),
                (number(attribute(line, "width")), number(attribute(line, "height"))),
            ],
            _ => attribute(line, "points")
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|pair| {
                    let (x, y) = pair.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect(),
        };
        let radius = (tag == "circle").then(|| number(attribute(line, "r")));
        shapes.push(Drawn { tag: tag.to_owned(), filled: fill != "none", colours, points, radius });
    }
    shapes
}

/// The grey of an SVG colour `#RRGGBB` (relative luminance, 0 black to 1 white).
fn grey(colour: &str) -> f64 {
    let channel = |at: usize| {
        u8::from_str_radix(colour.get(at..at + 2).unwrap_or("00"), 16).map_or(0.0, f64::from)
    };
    super::style::luminance(plotters::style::RGBColor(
        channel(1) as u8,
        channel(3) as u8,
        channel(5) as u8,
    ))
}

/// What each legend entry's sample looks like printed in greyscale: the shapes drawn in its
/// sample box, their fill and their geometry relative to the box, with every colour turned
/// into its grey and then left out. Two entries whose samples are equal here differ by colour
/// alone.
fn greyscale_samples(figure: &Figure) -> Vec<(String, Vec<String>)> {
    let shapes = drawn(&figure.svg);
    let sample = (16.0 * super::UNITS_PER_PT).round() as i32;
    figure
        .layout
        .texts
        .iter()
        .filter(|(_, kind, _, _)| *kind == TextKind::Legend)
        .map(|(_, _, rect, label)| {
            let (left, middle) = (rect.left, (rect.top + rect.bottom) / 2);
            let inside = |&(x, y): &(i32, i32)| {
                x >= left - 8 && x <= left + sample + 8 && y >= rect.top && y <= rect.bottom
            };
            let mut signature: Vec<String> = shapes
                .iter()
                .filter(|shape| match shape.tag.as_str() {
                    "rect" => shape.points.first().is_some_and(inside),
                    _ => !shape.points.is_empty() && shape.points.iter().all(inside),
                })
                .map(|shape| {
                    for colour in &shape.colours {
                        assert!(grey(colour) < 0.7, "`{label}`: {colour} vanishes on white paper");
                    }
                    let relative: Vec<(i32, i32)> = match shape.tag.as_str() {
                        "rect" => vec![
                            (shape.points[0].0 - left, shape.points[0].1 - middle),
                            shape.points[1],
                        ],
                        _ => shape.points.iter().map(|&(x, y)| (x - left, y - middle)).collect(),
                    };
                    format!("{} {} {relative:?} {:?}", shape.tag, shape.filled, shape.radius)
                })
                .collect();
            signature.sort();
            (label.clone(), signature)
        })
        .collect()
}

fn assert_greyscale_safe(figure: &Figure, context: &str) {
    let samples = greyscale_samples(figure);
    assert!(samples.len() >= 2, "{context}: {samples:?}");
    for (i, (label_a, a)) in samples.iter().enumerate() {
        assert!(!a.is_empty(), "{context}: `{label_a}` has no sample");
        for (label_b, b) in &samples[i + 1..] {
            assert_ne!(a, b, "{context}: `{label_a}` and `{label_b}` differ by colour alone");
        }
    }
}

/// Every series of a figure differs from every other in dash pattern or marker, not only in
/// colour: the figure is rendered, each legend sample read back from the SVG, its colours
/// turned to grey and dropped, and the samples compared pairwise. Up to the 24 lines a
/// figure may have, with model lines and markers, markers joined by thin lines
/// (simulation only), and external methods paired with runner's by colour.
#[test]
fn every_pair_of_series_differs_in_greyscale() {
    let mut rows = grid(1, 24);
    for row in rows.iter_mut().filter(|row| row.method == "simulation") {
        if row.scouting_distance == Some(1) && row.rate > 0.008 {
            row.status = "saturated".into();
            row.latency = None;
        }
        if row.scouting_distance == Some(2) && row.rate < 0.002 {
            row.status = "imprecise".into();
        }
        if row.scouting_distance == Some(3) && row.rate > 0.008 {
            row.status = "deadlock".into();
            row.latency = None;
        }
    }
    let figure = &figures_of("{lines: [scouting_distance]}", &rows)[0];
    check_layout(&figure.layout, "24 lines");
    assert_greyscale_safe(figure, "24 lines, model and simulation");
    let labels = legend_labels(figure);
    for status in ["Saturated", "Deadlocked", "Imprecise (estimate)"] {
        assert!(labels.iter().any(|label| label == status), "{status} in {labels:?}");
    }
    // Simulation only: markers joined by lines in the series' dash patterns.
    let simulated: Vec<Row> = grid(1, 8).into_iter().filter(|r| r.method != "model").collect();
    let figure = &figures_of("{lines: [scouting_distance]}", &simulated)[0];
    assert!(
        figure.caption.contains("Thin lines join the simulation markers"),
        "{}",
        figure.caption
    );
    assert_greyscale_safe(figure, "8 lines, simulation only");
    // Four configurations, each by runner and an external simulator.
    let mut paired = Vec::new();
    for row in grid(1, 4).into_iter().filter(|r| r.method == "simulation") {
        let mut external = row.clone();
        external.method = "booksim".into();
        external.latency = row.latency.map(|latency| latency * 1.1);
        paired.push(row);
        paired.push(external);
    }
    let figure = &figures_of("{lines: [scouting_distance]}", &paired)[0];
    assert_greyscale_safe(figure, "4 configurations by 2 simulators");
    let data = prepared(&spec("{lines: [scouting_distance]}"), &paired);
    let colours: Vec<_> = data.legend.iter().map(|(_, key)| key.style().colour).collect();
    assert_eq!(colours.len(), 8);
    for pair in colours.chunks(2) {
        assert_eq!(pair[0], pair[1], "a configuration's two simulators share a colour");
    }
}

/// Tick labels of one axis share their number of decimals, and an axis that would need more
/// than four prints a scaled form.
#[test]
fn tick_labels_share_their_decimals() {
    let labels = |lo: f64, hi: f64, target: usize| -> Vec<String> {
        super::draw::linear_ticks(lo, hi, target).into_iter().map(|(_, label)| label).collect()
    };
    assert_eq!(labels(0.0, 0.0105, 5), ["0", "0.0025", "0.0050", "0.0075", "0.0100"]);
    assert_eq!(labels(0.0, 1.0, 5), ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
    assert_eq!(labels(0.0, 400.0, 5), ["0", "100", "200", "300", "400"]);
    assert_eq!(labels(-0.5, 0.5, 4), ["-0.50", "-0.25", "0", "0.25", "0.50"]);
    assert_eq!(labels(0.0, 0.0001, 4), ["0", "0.25e-4", "0.50e-4", "0.75e-4", "1.00e-4"]);
    assert_eq!(labels(0.0, 4e6, 4), ["0", "1e6", "2e6", "3e6", "4e6"]);
}

/// In a grid the y title is printed beside the left column only and the x title under the
/// lowest panel of each column; every panel keeps its tick labels.
#[test]
fn a_grid_titles_its_outer_axes_once() {
    let figure = &figures_of("{panels: [radix], lines: [scouting_distance]}", &grid(5, 2))[0];
    check_layout(&figure.layout, "5 panels");
    let layout = &figure.layout;
    let count = |panel: usize, wanted: TextKind| {
        layout.texts.iter().filter(|(p, kind, _, _)| *p == Some(panel) && *kind == wanted).count()
    };
    assert_eq!(layout.plots.len(), 5);
    for panel in 0..5 {
        let (column, lowest) = (panel % 2, panel + 2 >= 5);
        assert_eq!(count(panel, TextKind::YLabel) > 0, column == 0, "panel {panel}: y title");
        assert_eq!(count(panel, TextKind::XLabel) > 0, lowest, "panel {panel}: x title");
        assert!(count(panel, TextKind::XTick) > 0 && count(panel, TextKind::YTick) > 0);
    }
}

/// An imprecise point keeps its series' marker and its interval bar, with a ring around it.
#[test]
fn an_imprecise_point_keeps_its_marker_and_interval() {
    let mut rows = grid(1, 2);
    let mut imprecise = None;
    for row in rows.iter_mut().filter(|row| row.method == "simulation") {
        if row.scouting_distance == Some(1) && imprecise.is_none() {
            row.status = "imprecise".into();
            imprecise = Some(row.rate);
        }
    }
    let figure = &figures_of("{lines: [scouting_distance]}", &rows)[0];
    assert!(figure.caption.contains("A ring around a marker"), "{}", figure.caption);
    let shapes = drawn(&figure.svg);
    let ring = (super::UNITS_PER_PT * 2.2 * 1.9).round() as i32;
    let rings: Vec<&Drawn> = shapes
        .iter()
        .filter(|s| s.tag == "circle" && !s.filled && s.radius == Some(ring))
        .filter(|s| s.points[0].1 < figure.layout.plots[0].bottom)
        .collect();
    assert_eq!(rings.len(), 1, "one ring in the panel");
    let at = rings[0].points[0];
    // The series' marker (the second series: a filled square) under the ring ...
    assert!(
        shapes.iter().any(|s| s.tag == "rect" && s.filled && {
            let (x, y) = s.points[0];
            let (w, h) = s.points[1];
            (x + w / 2 - at.0).abs() <= 1 && (y + h / 2 - at.1).abs() <= 1
        }),
        "the imprecise point keeps its square marker"
    );
    // ... and its interval bar through it.
    assert!(
        shapes.iter().any(|s| s.tag == "polyline"
            && s.points.len() == 2
            && s.points[0].0 == at.0
            && s.points[1].0 == at.0
            && s.points[0].1 > at.1
            && s.points[1].1 < at.1),
        "the imprecise point keeps its interval bar"
    );
}

/// `select` keeps the scenarios whose columns hold the given values: the panels, the legend,
/// the CSV and the caption's conditions see only those.
#[test]
fn select_draws_only_the_chosen_scenarios() {
    let rows = grid(3, 2);
    let all = prepared(&spec("{panels: [radix], lines: [scouting_distance]}"), &rows);
    assert_eq!(all.panels.len(), 3);
    let one =
        prepared(&spec("{panels: [radix], lines: [scouting_distance], select: {radix: 6}}"), &rows);
    assert_eq!(one.panels.len(), 1);
    let two = prepared(
        &spec(
            "{panels: [radix], lines: [scouting_distance], select: {radix: [4, 8], scouting_distance: 1}}",
        ),
        &rows,
    );
    assert_eq!(two.panels.len(), 2);
    assert!(two.panels.iter().all(|panel| panel.series.len() == 1), "one line per panel");
    let figure = &figures_of("{panels: [radix], select: {radix: 6}}", &rows)[0];
    assert!(figure.csv.contains("k = 6"), "{}", figure.csv);
    assert!(!figure.csv.contains("k = 4") && !figure.csv.contains("k = 8"), "{}", figure.csv);
    // A name matches the column's text, a number its number; nothing else.
    let none = prepared(&spec("{panels: [radix], select: {routing: valiant}}"), &rows);
    assert!(none.panels.is_empty());
    let text_number = prepared(&spec("{panels: [radix], select: {radix: '6'}}"), &rows);
    assert!(text_number.panels.is_empty());
}
