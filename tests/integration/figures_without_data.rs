//! A figure with nothing to draw is a page with a note, never a failed bundle: a run whose
//! simulated points all saturated still writes its histogram and heat map pages and
//! `index.html`, exits 0, and re-renders and verifies.

use crate::common::{Scratch, stderr};

const SATURATED: &str = "\
name: saturated
seed: 1
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  virtual_channels: 2
  message_length: 8
load: {rates: [0.5, 0.6]}
methods:
  simulation: {cycles: 2000, warmup_cycles: 500, link_loads: true}
report:
  figures:
    - {kind: histogram}
    - {kind: link_heatmap}
    - {x: rate, y: latency}
  tables: []
";

#[test]
fn a_run_whose_points_all_saturated_writes_every_figure_with_a_note() {
    let scratch = Scratch::new();
    scratch.spec("saturated.yaml", SATURATED);
    let output = scratch.run(&["run", "saturated.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let bundle = scratch.path().join("reports/saturated");
    let page = std::fs::read_to_string(bundle.join("index.html")).expect("index.html");
    for stem in ["fig1_latency_histogram", "fig2_link_utilization", "fig3_latency_vs_rate"] {
        assert!(bundle.join(format!("figures/{stem}.svg")).is_file(), "{stem}");
    }
    assert!(page.contains("Nothing to draw: no simulated point finished ok"), "the note");
    for command in ["report", "verify"] {
        let again = scratch.run(&[command, "reports/saturated"]);
        assert!(again.status.success(), "{command}: {}", stderr(&again));
    }
}
