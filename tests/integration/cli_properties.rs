//! Property tests of the command line's scenario arguments and of the simulator on plausible
//! random scenarios: never a panic, and one set of bounds for specs and the command line.
//!
//! - The `key=value` parser (`runner::cli::scenario_args::apply`) gets random pairs drawn from
//!   every key and from values at the edges (0, 2^32 - 1, NaN, infinities, negative numbers,
//!   lists, garbage); it never panics, and whatever it accepts lies within
//!   `scenario::bounds` and goes through `sim::check` without a panic.
//! - `sim::check` and `sim::simulate` (a few hundred cycles) run on generated scenarios that a
//!   researcher could plausibly write: small tori, meshes and hypercubes, every switching
//!   technique (scouting with worms shorter than its scouting distance included), throughput
//!   mode, faults, hotspot traffic; no panic, `Ok` or a refusal.
//! - A handful of `runner simulate` processes on generated arguments exit 0 or 2 and never
//!   print a panic.
//! - Every bounded field: the spec and the command line refuse the same out-of-range value
//!   with the same words.
//!
//! The coverage-guided counterpart is the `scenario_args` target in `fuzz/` (see
//! `docs/fuzzing.md`).

use std::path::PathBuf;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use runner::cli::scenario_args;
use runner::scenario::{Ejection, Routing, Scenario, Switching, Topology, Traffic, bounds};
use runner::sim::{self, Measure, SimOptions};
use runner::spec::{SpecSource, parse};

use crate::common::{Scratch, no_panic, stderr};

fn runner_with(cases: u32) -> TestRunner {
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

/// Values at the edges of every type a key takes, plus names of every choice.
const EDGE_VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "16",
    "-1",
    "4294967295",
    "4294967296",
    "1048577",
    "0.5",
    "1.5",
    "1e309",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "",
    "x",
    "1,1",
    "0,3,5",
    "torus",
    "mesh",
    "hypercube",
    "fat_tree",
    "dragonfly",
    "kary_ntree",
    "wormhole",
    "scouting",
    "circuit",
    "dimension_order",
    "adaptive",
    "duato",
    "nbc",
    "up_down",
    "up_down_random",
    "minimal",
    "valiant",
    "ugal",
    "uniform",
    "group_shift",
    "tornado",
    "hotspot",
    "transpose",
    "single",
    "unlimited",
    "switch",
    "positive",
    "round_robin",
];

/// The keys the parser knows, and a misspelt one.
fn keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = scenario_args::KEYS.to_vec();
    keys.extend(["hotspot_nodes", "radx"]);
    keys
}

/// One `key=value` argument, occasionally without `=`.
fn pair() -> impl Strategy<Value = String> {
    let keys = keys();
    (0..keys.len(), 0..EDGE_VALUES.len(), 0..20u8).prop_map(move |(k, v, shape)| match shape {
        0 => keys[k].to_string(),
        _ => format!("{}={}", keys[k], EDGE_VALUES[v]),
    })
}

/// Whether a network is small enough to simulate a few hundred cycles in a test.
fn small(s: &Scenario) -> bool {
    s.nodes() <= 256 && s.virtual_channels <= 16
}

fn short_run(measure: Measure) -> SimOptions {
    SimOptions {
        warmup_cycles: 50,
        cycles: 300,
        max_cycles: 300,
        deadlock_cycles: 200,
        measure,
        ..SimOptions::default()
    }
}

#[test]
fn the_key_value_parser_never_panics_and_keeps_to_the_bounds() {
    let strategy = proptest::collection::vec(pair(), 0..6);
    runner_with(600)
        .run(&strategy, |pairs| {
            let mut scenario = Scenario {
                routing: Routing::DimensionOrder,
                virtual_channels: 2,
                ..Scenario::new(Topology::Torus { radix: 8, dimensions: 2 })
            };
            let applied =
                no_panic(&format!("{pairs:?}"), || scenario_args::apply(&mut scenario, &pairs))?;
            if applied.is_ok() {
                prop_assert!(
                    bounds::check(&scenario).is_ok(),
                    "{pairs:?} accepted out of bounds: {scenario:?}"
                );
                let checked =
                    no_panic(&format!("sim::check {scenario:?}"), || sim::check(&scenario))?;
                if checked.is_ok() && small(&scenario) {
                    no_panic(&format!("simulate {scenario:?}"), || {
                        sim::simulate(&scenario, 0.01, &short_run(Measure::Latency), 1, None)
                    })?
                    .ok();
                }
            }
            Ok(())
        })
        .unwrap();
}

/// A scenario a researcher could plausibly write, on a small network.
fn plausible_scenario() -> impl Strategy<Value = Scenario> {
    let topology = prop_oneof![
        4 => (2u32..7, 1u32..3)
            .prop_map(|(radix, dimensions)| Topology::Torus { radix, dimensions }),
        4 => (2u32..6, 1u32..3).prop_map(|(radix, dimensions)| Topology::Mesh { radix, dimensions }),
        4 => (1u32..6).prop_map(|dimensions| Topology::Hypercube { dimensions }),
        4 => Just(Topology::FatTree { processors: 16 }),
        2 => (2u32..5, 1u32..3)
            .prop_map(|(radix, dimensions)| Topology::KaryNTree { radix, dimensions, up_links_per_switch: None }),
        // Its routings and its adversarial traffic replace the others' below.
        1 => (1u32..3, 1u32..4, 1u32..3).prop_map(|(p, a, h)| Topology::Dragonfly {
            terminals_per_router: p,
            routers_per_group: a,
            global_links_per_router: h, global_arrangement: runner::scenario::GlobalArrangement::Absolute }),
    ];
    let switching = prop_oneof![
        Just(Switching::Wormhole),
        // Scouting distances beyond the message length: short worms.
        (0u32..12).prop_map(|scouting_distance| Switching::Scouting { scouting_distance }),
        Just(Switching::Circuit),
    ];
    let routing = prop_oneof![
        Just(Routing::DimensionOrder),
        Just(Routing::Adaptive),
        Just(Routing::Duato),
        Just(Routing::Nbc),
        Just(Routing::UpDown),
        Just(Routing::UpDownRandom),
    ];
    let traffic = prop_oneof![
        4 => Just(Traffic::Uniform),
        1 => Just(Traffic::Tornado),
        1 => Just(Traffic::UniformWithSelf),
        1 => (0.0f64..1.0, proptest::collection::vec(0u32..8, 1..3))
            .prop_map(|(fraction, nodes)| Traffic::Hotspot { fraction, nodes }),
    ];
    (
        (topology, switching, routing, 1u32..6, proptest::option::of(1u32..4)),
        (1u32..5, 0u32..3, 1u32..20, prop_oneof![3 => Just(0.0), 1 => 0.0f64..0.3]),
        (traffic, any::<bool>(), proptest::option::of(0u32..4)),
    )
        .prop_map(
            |(
                (topology, switching, routing, virtual_channels, escape_channels),
                (buffer_depth, router_delay, message_length, fault_rate),
                (traffic, unlimited, circuit_backoff),
            )| {
                let circuit = switching == Switching::Circuit;
                let dragonfly = matches!(topology, Topology::Dragonfly { .. });
                let (routing, traffic) = match (dragonfly, routing, traffic) {
                    (false, routing, traffic) => (routing, traffic),
                    (true, routing, traffic) => (
                        match routing {
                            Routing::DimensionOrder | Routing::Nbc => Routing::Minimal,
                            Routing::Adaptive | Routing::UpDown => Routing::Valiant,
                            _ => Routing::Ugal,
                        },
                        if traffic == Traffic::Tornado { Traffic::GroupShift } else { traffic },
                    ),
                };
                Scenario {
                    switching,
                    routing,
                    virtual_channels,
                    escape_channels,
                    buffer_depth,
                    router_delay,
                    message_length,
                    fault_rate,
                    traffic,
                    ejection: if unlimited { Ejection::Unlimited } else { Ejection::Single },
                    circuit_backoff: circuit_backoff.filter(|_| circuit),
                    ..Scenario::new(topology)
                }
            },
        )
}

#[test]
fn the_simulator_never_panics_on_plausible_scenarios() {
    let measure = prop_oneof![
        Just(Measure::Latency),
        (1u32..20).prop_map(|source_queue_capacity| Measure::Throughput { source_queue_capacity }),
    ];
    let strategy = (plausible_scenario(), measure, 1u32..40, any::<u64>());
    let simulated = std::cell::Cell::new(0);
    runner_with(300)
        .run(&strategy, |(scenario, measure, load, seed)| {
            let checked = no_panic(&format!("sim::check {scenario:?}"), || sim::check(&scenario))?;
            if checked.is_err() {
                return Ok(());
            }
            // Light to heavy: up to twice the injection of one flit per node and cycle.
            let rate = f64::from(load) * 0.05 / f64::from(scenario.message_length);
            let options = short_run(measure);
            no_panic(
                &format!("simulate {scenario:?} at {rate} ({measure:?}, seed {seed})"),
                || sim::simulate(&scenario, rate, &options, seed, None),
            )?
            .ok();
            simulated.set(simulated.get() + 1);
            Ok(())
        })
        .unwrap();
    let simulated = simulated.get();
    // About one in five generated scenarios passes `sim::check` (60 of 300 on average, with a
    // standard deviation near 7; the seed is new every run): 30 guards the generator without
    // failing by chance.
    assert!(simulated >= 30, "only {simulated} of 300 generated scenarios were simulated");
}

#[test]
fn runner_simulate_exits_0_or_2_without_a_panic() {
    let scratch = Scratch::new();
    // The case first (a short worm under a long scouting distance), then throughput
    // mode, faults and conflicts, then generated arguments.
    let mut cases: Vec<Vec<String>> = [
        "switching=scouting routing=adaptive virtual_channels=3 scouting_distance=3 message_length=2 --rate 0.5 --cycles 2000 --warmup-cycles 0",
        "radix=4 --rate 0.5 --measure throughput --source-queue-capacity 4294967295 --cycles 500",
        "radix=4 switching=scouting scouting_distance=8 message_length=3 routing=duato virtual_channels=3 fault_rate=0.1 --rate 0.05 --cycles 500 --warmup-cycles 100",
        "radix=4 traffic=tornado hotspot_nodes=1 --rate 0.01",
        "radix=4 --rate 0.01 --cycles 18446744073709546616",
    ]
    .iter()
    .map(|line| line.split(' ').map(String::from).collect())
    .collect();
    let mut generator = runner_with(1);
    let strategy = proptest::collection::vec(pair(), 0..4);
    for _ in 0..10 {
        let mut args = strategy.new_tree(&mut generator).expect("generate").current();
        // Keep the network small and the run short.
        args.retain(|a| {
            !["radix=", "dimensions=", "processors=", "topology="].iter().any(|k| a.starts_with(k))
        });
        args.extend(
            ["radix=4", "--rate", "0.02", "--cycles", "300", "--warmup-cycles", "50"]
                .map(String::from),
        );
        cases.push(args);
    }
    for args in cases {
        let mut command = vec!["simulate".to_string(), "-q".to_string()];
        command.extend(args);
        let refs: Vec<&str> = command.iter().map(String::as_str).collect();
        let output = scratch.run(&refs);
        let code = output.status.code();
        let err = stderr(&output);
        assert!(code == Some(0) || code == Some(2), "exit {code:?} for {command:?}: {err}");
        assert!(!err.contains("panicked"), "panic for {command:?}: {err}");
    }
}

/// A spec with the scenario field `field` set to `value` where the spec format puts it.
fn spec_with(field: &str, value: &str) -> String {
    let (topology, switching, traffic, scenario_line) = match field {
        "radix" => (
            format!("{{kind: torus, radix: {value}, dimensions: 2}}"),
            String::new(),
            String::new(),
            String::new(),
        ),
        "dimensions" => (
            format!("{{kind: torus, radix: 4, dimensions: {value}}}"),
            String::new(),
            String::new(),
            String::new(),
        ),
        "processors" => (
            format!("{{kind: fat_tree, processors: {value}}}"),
            String::new(),
            String::new(),
            String::new(),
        ),
        "terminals_per_router" | "routers_per_group" | "global_links_per_router" => (
            format!("{{kind: dragonfly, {field}: {value}}}"),
            String::new(),
            String::new(),
            String::new(),
        ),
        "up_links_per_switch" => (
            format!("{{kind: kary_ntree, radix: 4, dimensions: 2, up_links_per_switch: {value}}}"),
            String::new(),
            String::new(),
            String::new(),
        ),
        "trunking" => (
            format!("{{kind: hyperx, radix: 4, dimensions: 2, trunking: {value}}}"),
            String::new(),
            String::new(),
            String::new(),
        ),
        "prime_power" => (
            format!("{{kind: slim_fly, prime_power: {value}}}"),
            String::new(),
            String::new(),
            String::new(),
        ),
        "scouting_distance" => (
            "{kind: torus, radix: 4, dimensions: 2}".into(),
            format!("  switching: {{kind: scouting, scouting_distance: {value}}}\n"),
            String::new(),
            String::new(),
        ),
        "circuit_backoff" | "circuit_retry_limit" => (
            "{kind: torus, radix: 4, dimensions: 2}".into(),
            format!("  switching: {{kind: circuit, {field}: {value}}}\n"),
            String::new(),
            String::new(),
        ),
        "broadcast_fraction" => (
            "{kind: hypercube, dimensions: 4}".into(),
            String::new(),
            format!("  traffic: {{pattern: broadcast_mix, broadcast_fraction: {value}}}\n"),
            String::new(),
        ),
        "startup_latency" => (
            "{kind: torus, radix: 4, dimensions: 2}".into(),
            String::new(),
            format!("  traffic: {{startup_latency: {value}}}\n"),
            String::new(),
        ),
        "burst_length" => (
            "{kind: torus, radix: 4, dimensions: 2}".into(),
            String::new(),
            format!("  traffic: {{injection_process: on_off, burst_length: {value}}}\n"),
            String::new(),
        ),
        "hotspot_fraction" => (
            "{kind: torus, radix: 4, dimensions: 2}".into(),
            String::new(),
            format!(
                "  traffic: {{pattern: hotspot, hotspot_fraction: {value}, hotspot_nodes: [1]}}\n"
            ),
            String::new(),
        ),
        _ => (
            "{kind: torus, radix: 4, dimensions: 2}".into(),
            String::new(),
            String::new(),
            format!("  {field}: {value}\n"),
        ),
    };
    let routing = match field {
        "processors" => "up_down",
        "terminals_per_router"
        | "routers_per_group"
        | "global_links_per_router"
        | "prime_power" => "minimal",
        _ => "duato",
    };
    let channels = if field == "virtual_channels" { "" } else { "  virtual_channels: 3\n" };
    format!(
        "name: bounds\nscenario:\n  topology: {topology}\n  routing: {routing}\n{channels}{switching}{traffic}{scenario_line}load: {{rates: [0.01]}}\nmethods: {{simulation: {{}}}}\n"
    )
}

/// The spec's refusal of `text`, all its problems in one string (empty if it is accepted).
fn spec_refusal(text: &str) -> String {
    let source = SpecSource {
        path: PathBuf::from("bounds.yaml"),
        text: text.to_string(),
        sha256: String::new(),
    };
    match parse(&source) {
        Ok(_) => String::new(),
        Err(error) => {
            error.diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("\n")
        }
    }
}

/// The command line's refusal of `key=value` (empty if it is accepted).
fn cli_refusal(key: &str, value: &str) -> String {
    let mut scenario = Scenario::new(Topology::Torus { radix: 4, dimensions: 2 });
    let mut pairs = vec![format!("{key}={value}")];
    if key == "circuit_backoff" || key == "circuit_retry_limit" {
        pairs.push("switching=circuit".into());
    }
    if key == "hotspot_fraction" {
        pairs.push("hotspot_nodes=1".into());
    }
    scenario_args::apply(&mut scenario, &pairs).err().map(|e| e.0).unwrap_or_default()
}

/// Issue 19: `scouting_distance=4294967295` ran on the command line while specs capped it;
/// `buffer_depth` and `input_speedup` had no upper bound anywhere.
#[test]
fn every_bounded_field_is_refused_alike_by_specs_and_the_command_line() {
    let mut checked = 0;
    for (field, least, most) in bounds::integer_fields() {
        let mut out_of_range = Vec::new();
        if least > 0 {
            out_of_range.push(least - 1);
        }
        if most < u32::MAX {
            out_of_range.extend([most + 1, u32::MAX]);
        }
        for value in out_of_range {
            let expected = bounds::integer(field, value).expect_err("out of range");
            let spec = spec_refusal(&spec_with(field, &value.to_string()));
            let cli = cli_refusal(field, &value.to_string());
            assert!(
                spec.contains(&expected),
                "spec, {field} = {value}: {spec:?}, expected {expected:?}"
            );
            assert!(
                cli.contains(&expected),
                "command line, {field}={value}: {cli:?}, expected {expected:?}"
            );
            checked += 1;
        }
    }
    for (field, low, high, inclusive) in bounds::real_fields() {
        let mut out_of_range = vec![(f64::NAN, ".nan", "nan"), (f64::INFINITY, ".inf", "inf")];
        let below = format!("{}", low - 0.5);
        out_of_range.push((low - 0.5, below.as_str(), below.as_str()));
        let above = format!("{}", high * 2.0);
        if high < f64::MAX {
            out_of_range.push((high * 2.0, above.as_str(), above.as_str()));
        }
        if !inclusive {
            out_of_range.push((high, "1", "1"));
        }
        for (value, in_yaml, on_line) in out_of_range {
            let expected = bounds::real(field, value).expect_err("out of range");
            let spec = spec_refusal(&spec_with(field, in_yaml));
            let cli = cli_refusal(field, on_line);
            // The YAML parser itself refuses `.nan` and `.inf` (located) before the bounds.
            let words = if value.is_finite() { expected.as_str() } else { "non-finite float" };
            assert!(
                spec.contains(words),
                "spec, {field} = {in_yaml}: {spec:?}, expected {words:?}"
            );
            assert!(
                cli.contains(&expected),
                "command line, {field}={on_line}: {cli:?}, expected {expected:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} values checked");
    // Duplicate hotspot nodes and escape channels a routing would ignore, both ways.
    let duplicate = "  traffic: {pattern: hotspot, hotspot_fraction: 0.5, hotspot_nodes: [1, 1]}\n";
    let spec = spec_refusal(
        &spec_with("buffer_depth", "2").replace("load:", &format!("{duplicate}load:")),
    );
    assert!(spec.contains("lists node 1 twice"), "{spec}");
    assert!(cli_refusal("hotspot_nodes", "1,1").contains("lists node 1 twice"));
    let spec = spec_refusal(&spec_with("escape_channels", "2").replace("duato", "dimension_order"));
    assert!(spec.contains("`escape_channels` applies only to `routing: duato` or `nbc`"), "{spec}");
    assert!(
        cli_refusal("escape_channels", "2")
            .contains("escape_channels applies to routing duato or nbc only")
    );
}

/// The cycle counts: the spec and `runner simulate` refuse the same count.
#[test]
fn cycle_counts_are_bounded_on_both_paths() {
    let scratch = Scratch::new();
    let too_many = (bounds::MAX_CYCLES + 1).to_string();
    let expected = bounds::cycles("cycles", bounds::MAX_CYCLES + 1).expect_err("too many");
    let spec = spec_refusal(
        &spec_with("buffer_depth", "2")
            .replace("simulation: {}", &format!("simulation: {{cycles: {too_many}}}")),
    );
    assert!(spec.contains(&expected), "{spec}");
    let output = scratch.run(&["simulate", "radix=4", "--rate", "0.01", "--cycles", &too_many]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains(&expected), "{}", stderr(&output));
    for field in ["warmup_cycles", "max_cycles", "deadlock_cycles"] {
        let spec =
            spec_refusal(&spec_with("buffer_depth", "2").replace(
                "simulation: {}",
                &format!("simulation: {{{field}: 18446744073709546616}}"),
            ));
        assert!(spec.contains(&format!("{field} must be at most")), "{field}: {spec}");
    }
}

/// Issue 19: throughput mode with a huge `source_queue_capacity` exhausted memory. The spec
/// bounds nodes x capacity (located), and so does the simulator itself.
#[test]
fn throughput_queues_are_bounded_by_nodes_times_capacity() {
    let spec = spec_with("buffer_depth", "2")
        .replace("radix: 4", "radix: 1024")
        .replace("simulation: {}", "simulation: {measure: throughput}");
    let refusal = spec_refusal(&spec);
    assert!(refusal.contains("lets the source queues hold 104857600 messages"), "{refusal}");
    let scenario = Scenario {
        routing: Routing::Duato,
        virtual_channels: 3,
        ..Scenario::new(Topology::Torus { radix: 1024, dimensions: 2 })
    };
    let options = short_run(Measure::Throughput { source_queue_capacity: 100 });
    let error = sim::simulate(&scenario, 0.01, &options, 1, None).expect_err("too many queued");
    assert!(error.0.contains("more than the 67108864"), "{error}");
    let small = Scenario {
        virtual_channels: 2,
        ..Scenario::new(Topology::Torus { radix: 4, dimensions: 2 })
    };
    let options = short_run(Measure::Throughput { source_queue_capacity: u32::MAX });
    let error = sim::simulate(&small, 0.01, &options, 1, None).expect_err("capacity too large");
    assert!(error.0.contains("at most 1000000 messages"), "{error}");
}
