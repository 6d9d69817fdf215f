//! Saturation searches in a spec (`saturation_searches`): the simulator's and an external
//! program's, their rows and means, loads at fractions of the simulator's saturation, the
//! saturation table, and a rerun from the cache.

use crate::common::{Scratch, copy_in, stderr};

const SPEC: &str = "\
name: searched
seed: 5
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  virtual_channels: 2
  message_length: 4
load: {fraction_of_saturation: [0.5], saturation: simulation}
methods:
  simulation:
    cycles: 1500
    warmup_cycles: 500
    saturation_searches: 2
  external:
    - name: capacity
      kind: simulation
      command: [python3, prog/capacity.py]
      inputs: [prog/capacity.py]
      version: '1'
      replications: 1
      saturation_searches: 3
      options: {capacity: 0.02}
report:
  figures: []
  tables: [saturation, results]
";

#[test]
fn searches_find_the_saturation_and_the_loads_are_fractions_of_the_simulators() {
    let scratch = Scratch::new();
    copy_in(&scratch, "tests/fixtures/external/capacity.py", "prog/capacity.py");
    scratch.spec("searched.yaml", SPEC);
    let output = scratch.run(&["run", "searched.yaml", "-j", "2"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let rows = scratch.rows("searched");
    let searches = |method: &str| -> Vec<_> {
        rows.iter().filter(|r| r.method == method && r.is_saturation_search()).collect()
    };

    // The program's searches find its capacity exactly: the overload point accepts it, the
    // next point offers it (stable), and the bisection above it only closes the bracket.
    let external = searches("capacity");
    assert_eq!(external.len(), 4, "three searches and their mean");
    for row in external.iter().filter(|r| r.replication.is_some()) {
        let seed = row.seed.expect("a search's seed");
        let capacity = 0.02 * (1.0 + 0.01 * ((seed % 5) as f64 - 2.0));
        assert_eq!(row.throughput, Some(capacity), "{row:?}");
        assert_eq!(row.flit_throughput, Some(capacity * 4.0));
        assert_eq!(row.status, "ok", "{row:?}");
        let width = row.intermediate("bracket_width").expect("bracket");
        assert!(width <= 0.01, "bisected to 1%: {width}");
        let stable = row.intermediate("stable_rate").expect("stable end");
        assert!(stable <= capacity && stable >= 0.99 * capacity, "{stable} {capacity}");
    }
    let mean = external.iter().find(|r| r.replication.is_none()).expect("the mean");
    assert_eq!(mean.replications, Some(3));
    assert!(mean.throughput_ci95.is_some_and(|h| h > 0.0), "{mean:?}");

    // The simulator's two searches and their mean, which sets the load of every method.
    let simulator = searches("simulation");
    assert_eq!(simulator.len(), 3);
    let mean = simulator.iter().find(|r| r.replication.is_none()).expect("the mean");
    let throughput = mean.throughput.expect("a saturation throughput");
    let saturation = mean.intermediate("stable_rate").expect("the knee");
    assert!(saturation > 0.0 && saturation <= 1.01 * throughput, "{saturation} {throughput}");
    let points: Vec<_> = rows.iter().filter(|r| !r.is_saturation_search()).collect();
    assert_eq!(points.len(), 4, "one load: a replication and its mean per method");
    for row in &points {
        assert_eq!(row.rate, 0.5 * saturation, "{row:?}");
        assert_eq!(row.fraction_of_saturation, Some(0.5));
        assert_eq!(row.saturation_rate, None, "no model's rate");
    }

    // The saturation table: a line per method with its searches.
    let table =
        std::fs::read_to_string(scratch.path().join("reports/searched/tables/saturation.csv"))
            .expect("saturation table");
    assert!(table.contains("saturation_searches"), "{table}");
    let lines: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(lines.len(), 2, "{table}");
    assert!(lines[0].contains(",simulation,") && lines[0].ends_with(",2,,"), "{table}");
    assert!(lines[1].contains(",capacity,") && lines[1].ends_with(",3,,"), "{table}");
    let knee = format!(",{saturation},2,,");
    assert!(lines[0].ends_with(&knee), "the knee the loads are fractions of: {table}");
    let results =
        std::fs::read_to_string(scratch.path().join("reports/searched/tables/results.csv"))
            .expect("results table");
    assert!(!results.contains(",saturation,"), "the searches are no load points:\n{results}");

    // Everything comes from the cache the second time, bit for bit.
    let again = scratch.run(&["run", "searched.yaml"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let err = stderr(&again);
    assert!(err.contains("cached") || err.is_empty(), "{err}");
    assert_eq!(
        crate::common::comparable(scratch.rows("searched")),
        crate::common::comparable(rows)
    );
    let check = scratch.run(&["verify", "reports/searched", "--check", "5"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}
