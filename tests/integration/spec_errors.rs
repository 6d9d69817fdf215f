//! Broken specs exit 2 with file:line:column, a useful message, and never a panic.

use crate::common::{Scratch, stderr};

/// `text` with miette's line wrapping undone: one line, single spaces.
fn flat(text: &str) -> String {
    text.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Validates `text` and returns stderr, asserting exit code 2 and no panic.
fn rejected(text: &[u8]) -> String {
    let scratch = Scratch::new();
    let path = scratch.path().join("bad.yaml");
    std::fs::write(&path, text).expect("write");
    let output = scratch.run(&["validate", "bad.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "exit code for:\n{err}");
    assert!(!err.contains("panicked"), "panic:\n{err}");
    assert!(!err.contains("RUST_BACKTRACE"), "backtrace hint:\n{err}");
    assert!(err.contains("bad.yaml:"), "no file position:\n{err}");
    err
}

/// Validates `text` and asserts that it is accepted (exit code 0).
fn accepted(text: &str) {
    let scratch = Scratch::new();
    scratch.spec("ok.yaml", text);
    let output = scratch.run(&["validate", "ok.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

const VALID: &str = "\
name: ok
scenario:
  topology: {kind: torus, radix: 8, dimensions: 2}
  routing: duato
  virtual_channels: 3
load: {rates: [0.01]}
methods: {simulation: {}}
";

#[test]
fn the_valid_base_spec_is_valid() {
    accepted(VALID);
}

#[test]
fn unknown_key_names_line_column_and_suggests() {
    let err = rejected(VALID.replace("virtual_channels: 3", "virtual_channel: 3").as_bytes());
    assert!(err.contains("bad.yaml:5:3"), "{err}");
    assert!(err.contains("did you mean `virtual_channels`?"), "{err}");
}

#[test]
fn wrong_type_is_located() {
    let err = rejected(VALID.replace("radix: 8", "radix: eight").as_bytes());
    assert!(err.contains("bad.yaml:3:"), "{err}");
    assert!(err.contains("eight"), "{err}");
}

#[test]
fn bad_values_are_all_reported_at_their_place() {
    let text = VALID
        .replace("radix: 8", "radix: [8, 1]")
        .replace("virtual_channels: 3", "virtual_channels: 3\n  fault_rate: 1.5")
        .replace("rates: [0.01]", "rates: [0.01, -1]");
    let err = rejected(text.as_bytes());
    assert!(err.contains("3 problems"), "{err}");
    assert!(err.contains("radix must be at least 2, found 1 (at bad.yaml:3:"), "{err}");
    assert!(err.contains("fault_rate must lie in [0, 1), found 1.5 (at bad.yaml:6:"), "{err}");
    assert!(
        err.contains("a rate must be a positive, finite number, found -1 (at bad.yaml:7:"),
        "{err}"
    );
}

#[test]
fn range_needs_from_below_to() {
    let err = rejected(
        VALID.replace("rates: [0.01]", "rates: {from: 0.1, to: 0.01, points: 3}").as_bytes(),
    );
    assert!(err.contains("from < to"), "{err}");
}

#[test]
fn scouting_distance_on_wormhole_is_explained() {
    let text = VALID.replace(
        "  routing: duato",
        "  switching: {kind: wormhole, scouting_distance: 2}\n  routing: duato",
    );
    let err = rejected(text.as_bytes());
    assert!(
        err.contains("`scouting_distance` applies only to `switching.kind: scouting`"),
        "{err}"
    );
    assert!(err.contains("bad.yaml:4:"), "{err}");
}

#[test]
fn duato_with_too_few_virtual_channels_is_explained() {
    let err = rejected(VALID.replace("virtual_channels: 3", "virtual_channels: 1").as_bytes());
    assert!(err.contains("virtual_channels >= 3"), "{err}");
}

#[test]
fn turn_model_routing_needs_a_two_dimensional_mesh() {
    let on_mesh = VALID
        .replace("kind: torus", "kind: mesh")
        .replace("routing: duato", "routing: [west_first, odd_even]");
    accepted(&on_mesh);
    let err = rejected(VALID.replace("routing: duato", "routing: odd_even").as_bytes());
    assert!(flat(&err).contains("odd_even is a turn-model routing for the 2-D mesh"), "{err}");
    assert!(err.contains("bad.yaml:"), "{err}");
    let err = rejected(
        on_mesh
            .replace("methods: {simulation: {}}", "methods: {model: {name: nbc_torus}}")
            .as_bytes(),
    );
    assert!(err.contains("model `nbc_torus` cannot evaluate"), "{err}");
}

#[test]
fn model_on_a_topology_it_does_not_cover_is_explained() {
    let err = rejected(
        VALID.replace("methods: {simulation: {}}", "methods: {model: {name: fat_tree}}").as_bytes(),
    );
    assert!(err.contains("model `fat_tree` cannot evaluate"), "{err}");
    assert!(err.contains("bad.yaml:7:"), "{err}");
}

#[test]
fn yaml_syntax_error_is_located() {
    let err = rejected(b"name: x\nscenario: [\n  topology: {kind\n");
    assert!(err.contains("bad.yaml:2:"), "{err}");
}

#[test]
fn alias_bomb_is_refused() {
    let mut text = String::from(
        "name: x\ntitle: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let mut previous = String::from("a");
    for name in ["b", "c", "d", "e", "f", "g", "h", "i"] {
        let refs = vec![format!("*{previous}"); 9].join(",");
        text.push_str(&format!("x{name}: &{name} [{refs}]\n"));
        previous = name.to_string();
    }
    text.push_str(&format!("description: [{}]\n", ["*i"; 9].join(",")));
    rejected(text.as_bytes());
}

#[test]
fn ten_thousand_deep_nesting_is_refused() {
    let text = format!("name: x\ntitle: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    rejected(text.as_bytes());
    let text = format!("name: x\ntitle: {}1{}\n", "{a: ".repeat(10_000), "}".repeat(10_000));
    rejected(text.as_bytes());
}

#[test]
fn empty_file_is_refused() {
    let err = rejected(b"");
    assert!(err.contains("empty"), "{err}");
    rejected(b"# only a comment\n");
}

#[test]
fn binary_garbage_is_refused() {
    let garbage: Vec<u8> =
        (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let err = rejected(&garbage);
    assert!(err.contains("not UTF-8"), "{err}");
    // Valid UTF-8 that is not YAML either.
    rejected("\u{1}\u{2}: [}{".as_bytes());
}

#[test]
fn replications_count_toward_the_task_cap_and_max_tasks_raises_it() {
    // 1,000 scenarios x 10 load points x (10,000 replications + 1 aggregate): 100 million tasks.
    let text = VALID
        .replace("radix: 8", "radix: {from: 4, to: 2002, step: 2}")
        .replace("rates: [0.01]", "rates: {from: 0.001, to: 0.01, points: 10}")
        .replace("simulation: {}", "simulation: {replications: 10000}")
        + "report: {figures: [], tables: [results]}\n";
    let err = flat(&rejected(text.as_bytes()));
    assert!(err.contains("the spec plans 100010002 tasks"), "{err}");
    assert!(err.contains("x 10000 replications); the limit is 1000000"), "{err}");
    assert!(err.contains("--max-tasks"), "{err}");
    let scratch = Scratch::new();
    scratch.spec("big.yaml", &text);
    let output = scratch.run(&["validate", "big.yaml", "--max-tasks", "200000000"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn an_absurd_virtual_channel_count_is_refused_by_the_torus_models() {
    for (model, switching) in [
        ("scouting_torus", "{kind: scouting, scouting_distance: 1}"),
        ("circuit_torus_faults", "{kind: circuit}"),
    ] {
        let text = VALID
            .replace("virtual_channels: 3", "virtual_channels: 4294967295")
            .replace("routing: duato", &format!("routing: adaptive\n  switching: {switching}"))
            .replace(
                "methods: {simulation: {}}",
                &format!("methods: {{model: {{name: {model}}}}}"),
            );
        let err = flat(&rejected(text.as_bytes()));
        assert!(err.contains("virtual_channels must be at most 1024"), "{model}: {err}");
    }
}

#[test]
fn figures_with_too_many_panels_or_lines_are_refused_before_running() {
    let grid = VALID
        .replace("radix: 8", "radix: {from: 4, to: 24, step: 2}")
        .replace("virtual_channels: 3", "virtual_channels: {from: 3, to: 9, step: 1}")
        .replace("methods: {simulation: {}}", "methods: {simulation: {}}\nreport:\n  figures:\n");
    let panels = format!("{grid}    - {{panels: [radix, virtual_channels]}}\n");
    let err = flat(&rejected(panels.as_bytes()));
    assert!(err.contains("makes up to 77 panels; at most 64 are allowed"), "{err}");
    let lines = format!("{grid}    - {{panels: [radix], lines: [task_id]}}\n");
    let err = flat(&rejected(lines.as_bytes()));
    assert!(err.contains("in one panel; at most 24 are allowed"), "{err}");
    let fine = format!("{grid}    - {{panels: [radix], lines: [virtual_channels]}}\n");
    let scratch = Scratch::new();
    scratch.spec("fine.yaml", &fine);
    assert_eq!(scratch.run(&["validate", "fine.yaml"]).status.code(), Some(0));
    // `select` counts only the scenarios it keeps.
    let selected =
        format!("{grid}    - {{panels: [radix, virtual_channels], select: {{radix: [4, 6]}}}}\n");
    scratch.spec("selected.yaml", &selected);
    assert_eq!(scratch.run(&["validate", "selected.yaml"]).status.code(), Some(0));
}

/// A figure's `select` names scenario columns and values that some scenario holds; a
/// misspelt column gets a suggestion, a value no scenario holds the values there are.
#[test]
fn a_figure_select_that_matches_nothing_is_refused_with_the_values_there_are() {
    let with = |select: &str| {
        VALID
            .replace("radix: 8", "radix: [8, 16]")
            .replace(
                "methods: {simulation: {}}",
                &format!("methods: {{simulation: {{}}}}\nreport:\n  figures:\n    - {{panels: [radix], select: {select}}}\n"),
            )
    };
    let err = flat(&rejected(with("{radx: 8}").as_bytes()));
    assert!(err.contains("`select` names `radx`, which is not a scenario column"), "{err}");
    assert!(err.contains("did you mean `radix`?"), "{err}");
    let err = flat(&rejected(with("{radix: [8, 12]}").as_bytes()));
    assert!(
        err.contains("`select: {radix: 12}` matches no scenario; the scenarios' `radix` is 8, 16"),
        "{err}"
    );
    let err = flat(&rejected(with("{routing: []}").as_bytes()));
    assert!(err.contains("`select` gives a column an empty list of values"), "{err}");
    let scratch = Scratch::new();
    scratch.spec("fine.yaml", &with("{radix: 16, routing: duato}"));
    let output = scratch.run(&["validate", "fine.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn devices_directories_and_huge_files_are_refused_before_reading() {
    let scratch = Scratch::new();
    let started = std::time::Instant::now();
    for (path, expected) in [("/dev/zero", "not a regular file"), (".", "a directory")] {
        let output = scratch.run(&["validate", path]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert!(err.contains(expected), "{err}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let huge = format!("{VALID}# {}\n", "x".repeat(1 << 20));
    let err = flat(&rejected(huge.as_bytes()));
    assert!(err.contains("specs are limited to 1048576 bytes"), "{err}");
}

/// A very long line anywhere in a spec turns snippets off; every error still names the spec
/// file, and no second location (serde-saphyr's `<input>`) appears.
#[test]
fn errors_in_a_spec_with_a_very_long_line_point_at_the_spec_file_only() {
    let long = VALID.replace("name: ok", &format!("name: ok\ntitle: {}", "t".repeat(5_000)));
    for (broken, position) in [
        (long.replace("virtual_channels: 3", "virtual_chanels: 3"), "bad.yaml:6:3"),
        (long.replace("radix: 8", "radix: eight"), "bad.yaml:4:"),
        (long.replace("virtual_channels: 3", "virtual_channels: [3"), "bad.yaml:"),
        (long.replace("virtual_channels: 3", "virtual_channels: 0"), "bad.yaml:6:"),
    ] {
        let err = rejected(broken.as_bytes());
        assert!(err.contains(position), "{err}");
        assert!(!err.contains("<input>"), "{err}");
        assert!(!err.contains("-->") && !err.contains("at line"), "a second location:\n{err}");
    }
    // Without the long line, the snippet names the spec file too.
    let err = rejected(VALID.replace("virtual_channels: 3", "virtual_chanels: 3").as_bytes());
    assert!(!err.contains("<input>"), "{err}");
}

#[test]
fn a_long_name_is_refused_by_validate() {
    let err = flat(&rejected(
        VALID.replace("name: ok", &format!("name: {}", "a".repeat(255))).as_bytes(),
    ));
    assert!(err.contains("`name` is 255 characters long; at most 100"), "{err}");
    assert!(err.contains("bad.yaml:1:"), "{err}");
}

#[test]
fn a_non_utf8_byte_is_located_where_it_is() {
    let mut text = VALID.as_bytes().to_vec();
    let at = VALID.find("routing").expect("routing line");
    text.insert(at + 3, 0xff);
    let err = flat(&rejected(&text));
    assert!(err.contains("not UTF-8"), "{err}");
    assert!(err.contains("bad.yaml:4:6"), "{err}");
    assert!(!err.contains("bad.yaml:1:1"), "{err}");
}

#[test]
fn a_duplicate_key_is_explained_in_our_words() {
    let err = flat(&rejected(
        VALID.replace("routing: duato", "routing: duato\n  routing: nbc").as_bytes(),
    ));
    assert!(err.contains("the key `routing` appears twice in the same mapping"), "{err}");
    assert!(err.contains("bad.yaml:5:"), "{err}");
    assert!(!err.contains("DuplicateKeyPolicy"), "{err}");
    assert!(!err.contains("Options"), "{err}");
}

#[test]
fn a_model_only_sweep_over_simulator_fields_warns() {
    let text = "\
name: m
scenario:
  topology: {kind: fat_tree, processors: 16}
  routing: up_down
  buffer_depth: [2, 4]
  router_delay: [0, 1]
  input_speedup: [1, 2]
load: {rates: [0.001]}
methods: {model: {name: fat_tree}}
";
    let scratch = Scratch::new();
    scratch.spec("m.yaml", text);
    let output = scratch.run(&["validate", "m.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("warning: m.yaml:5:"), "{err}");
    assert!(err.contains("`buffer_depth` is swept over 2 values, but only the simulator"), "{err}");
    assert!(err.contains("`router_delay` is swept"), "{err}");
    assert!(err.contains("`input_speedup` is swept"), "{err}");
}

#[test]
fn an_input_speedup_of_zero_is_rejected_where_written() {
    let err = rejected(
        VALID
            .replace("virtual_channels: 3", "virtual_channels: 3\n  input_speedup: [1, 0]")
            .as_bytes(),
    );
    assert!(err.contains("input_speedup must be at least 1, found 0"), "{err}");
    assert!(err.contains("bad.yaml:6:"), "{err}");
}

#[test]
fn routing_conventions_and_traffic_patterns_are_checked() {
    let err = rejected(
        VALID
            .replace("virtual_channels: 3", "virtual_channels: 3\n  dateline: per_traversal")
            .as_bytes(),
    );
    assert!(err.contains("duato's escape class supports only dateline: switch"), "{err}");
    let err = rejected(
        VALID
            .replace("routing: duato", "routing: adaptive")
            .replace("virtual_channels: 3", "virtual_channels: 3\n  tie_break: [random, positive]")
            .as_bytes(),
    );
    assert!(err.contains("`tie_break` applies only to"), "{err}");
    let err = rejected(
        VALID
            .replace("radix: 8", "radix: 3")
            .replace(
                "virtual_channels: 3",
                "virtual_channels: 3\n  traffic: {pattern: bit_complement}",
            )
            .as_bytes(),
    );
    assert!(err.contains("power-of-two") && err.contains("this network has 9"), "{err}");
    let err = rejected(
        VALID
            .replace("virtual_channels: 3", "virtual_channels: 3\n  traffic: {pattern: hotspot}")
            .as_bytes(),
    );
    assert!(err.contains("needs `traffic.hotspot_fraction`"), "{err}");
    let swept = VALID
        .replace("routing: duato", "routing: dimension_order")
        .replace(
            "virtual_channels: 3",
            "virtual_channels: 2\n  dateline: [per_traversal, switch]\n  tie_break: [random, positive]\n  \
             traffic: {pattern: [uniform, transpose, hotspot], hotspot_fraction: 0.1, hotspot_nodes: [0, 9]}",
        );
    accepted(&swept);
}

#[test]
fn throughput_options_are_checked_where_they_stand() {
    let throughput = VALID.replace(
        "methods: {simulation: {}}",
        "methods: {simulation: {measure: throughput, source_queue_capacity: 20}}",
    );
    accepted(&throughput);

    let err = flat(&rejected(
        VALID.replace("simulation: {}", "simulation: {source_queue_capacity: 20}").as_bytes(),
    ));
    assert!(err.contains("applies to `measure: throughput` only"), "{err}");
    assert!(err.contains("bad.yaml:7:"), "{err}");
    let err = flat(&rejected(
        VALID
            .replace(
                "simulation: {}",
                "simulation: {measure: throughput, source_queue_capacity: 0}",
            )
            .as_bytes(),
    ));
    assert!(err.contains("must be at least 1 message"), "{err}");
    let err = flat(&rejected(
        VALID
            .replace("simulation: {}", "simulation: {measure: throughput, target_precision: 0.05}")
            .as_bytes(),
    ));
    assert!(err.contains("`target_precision` applies to `measure: latency` only"), "{err}");
    let err =
        flat(&rejected(VALID.replace("simulation: {}", "simulation: {measure: both}").as_bytes()));
    assert!(err.contains("both"), "{err}");
}

#[test]
fn loads_of_the_simulated_saturation_need_its_searches() {
    let searched = VALID
        .replace(
            "load: {rates: [0.01]}",
            "load: {fraction_of_saturation: [0.3, 0.6], saturation: simulation}",
        )
        .replace("simulation: {}", "simulation: {saturation_searches: 3}");
    accepted(&searched);
    // No search to take the saturation from.
    let err = flat(&rejected(searched.replace("{saturation_searches: 3}", "{}").as_bytes()));
    assert!(err.contains("no search is planned"), "{err}");
    assert!(err.contains("add `saturation_searches: 3`"), "{err}");
    assert!(err.contains("bad.yaml:6:"), "{err}");
    // Fractions of nothing: no model and no searched saturation.
    let err = flat(&rejected(searched.replace(", saturation: simulation", "").as_bytes()));
    assert!(err.contains("`fraction_of_saturation` needs a model"), "{err}");
    assert!(err.contains("saturation: simulation"), "{err}");
    // `saturation` without fractions, and too many searches.
    let err = flat(&rejected(
        VALID
            .replace("load: {rates: [0.01]}", "load: {rates: [0.01], saturation: simulation}")
            .replace("simulation: {}", "simulation: {saturation_searches: 101}")
            .as_bytes(),
    ));
    assert!(err.contains("the load gives no fractions"), "{err}");
    assert!(err.contains("must be 0 to 100, found 101"), "{err}");
    // A misspelt value is named with the ones there are.
    let err = flat(&rejected(
        searched.replace("saturation: simulation", "saturation: simulator").as_bytes(),
    ));
    assert!(err.contains("simulator"), "{err}");
}

/// A field whose default rows leave null (`vc_reallocation: drained`) is selected by its
/// default's name, and a refused `select` names that default, not `null`.
#[test]
fn a_figure_selects_a_default_left_null_by_its_name() {
    let spec = VALID.replace("routing: duato", "routing: dimension_order").replace(
        "virtual_channels: 3",
        "virtual_channels: 2\n  vc_reallocation: [tail_sent, drained]",
    ) + "report:\n  figures:\n    - {x: rate, y: latency, select: {vc_reallocation: drained}}\n";
    accepted(&spec);
    let err = flat(&rejected(
        spec.replace("select: {vc_reallocation: drained}", "select: {vc_reallocation: tail_send}")
            .as_bytes(),
    ));
    assert!(err.contains("`vc_reallocation` is tail_sent, drained"), "{err}");
    assert!(!err.contains("null"), "{err}");
}

#[test]
fn broadcast_order_needs_broadcasts() {
    let hypercube = "\
name: ok
scenario:
  topology: {kind: hypercube, dimensions: 4}
  routing: duato
  virtual_channels: 2
  traffic: {pattern: broadcast_mix, broadcast_fraction: 0.1, broadcast_order: [random, round_robin]}
load: {rates: [0.01]}
methods: {simulation: {}}
";
    accepted(hypercube);
    let err =
        rejected(hypercube.replace("broadcast_fraction: 0.1", "broadcast_fraction: 0").as_bytes());
    assert!(
        err.contains("`broadcast_order` applies only to `traffic.broadcast_fraction` > 0"),
        "{err}"
    );
    let err = rejected(hypercube.replace("round_robin]", "round_robbin]").as_bytes());
    assert!(flat(&err).contains("round_robin"), "{err}");
}

#[test]
fn circuit_parameters_need_circuit_switching() {
    let circuit = "\
name: ok
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  switching: {kind: circuit, circuit_backoff: [0, 3], circuit_retry_limit: 50}
  routing: adaptive
  virtual_channels: 2
load: {rates: [0.01]}
methods: {simulation: {}}
";
    accepted(circuit);
    let err = rejected(circuit.replace("kind: circuit", "kind: wormhole").as_bytes());
    assert!(err.contains("`circuit_backoff` applies only to `switching.kind: circuit`"), "{err}");
    let err =
        rejected(circuit.replace("circuit_retry_limit: 50", "circuit_retry_limit: -1").as_bytes());
    assert!(err.contains("bad.yaml:4:"), "{err}");
}

/// Issue 24: message-length distributions are checked point by point, at the value written.
#[test]
fn message_length_distributions_are_checked_where_written() {
    let with = |fields: &str| {
        VALID.replace("virtual_channels: 3", &format!("virtual_channels: 3\n{fields}"))
    };
    accepted(&with(
        "  message_length: 16\n  message_length_distribution: [fixed, geometric, uniform, bimodal]\n  message_length_min: 4\n  message_length_max: 28",
    ));
    // Uniform from one bound: 8..24 around 16.
    accepted(&with(
        "  message_length: 16\n  message_length_distribution: uniform\n  message_length_min: 8",
    ));
    let err = flat(&rejected(with("  message_length: 16\n  message_length_distribution: uniform\n  message_length_min: 4\n  message_length_max: 20").as_bytes()));
    assert!(err.contains("has mean 12, but message_length (the mean) is 16"), "{err}");
    assert!(err.contains("message_length_max = 28"), "{err}");
    assert!(err.contains("bad.yaml:8:"), "{err}");
    let err = flat(&rejected(
        with("  message_length_distribution: bimodal\n  message_length_min: 4").as_bytes(),
    ));
    assert!(err.contains("`bimodal` needs `message_length_min` and `message_length_max`"), "{err}");
    let err = flat(&rejected(with("  message_length: 16\n  message_length_distribution: bimodal\n  message_length_min: 20\n  message_length_max: 40").as_bytes()));
    assert!(err.contains("the mean message_length between them"), "{err}");
    let err = flat(&rejected(with("  message_length_min: 4").as_bytes()));
    assert!(err.contains("`message_length_min` applies only to `message_length_distribution: bimodal` or `uniform`"), "{err}");
    let err = flat(&rejected(with("  message_length: 16\n  message_length_distribution: geometric\n  message_length_second_moment: 300").as_bytes()));
    assert!(err.contains("contradicts the geometric message_length_distribution with mean 16, whose E[M^2] is 496"), "{err}");
    assert!(err.contains("bad.yaml:8:"), "{err}");
    let err = flat(&rejected(with("  message_length_distribution: geometirc").as_bytes()));
    assert!(err.contains("geometric"), "{err}");
}

/// Issue 24: injection processes: a rate a Bernoulli source cannot offer is refused at the
/// rate written; `on_off` needs its burst length, and a burst length needs `on_off`.
#[test]
fn injection_processes_are_checked_where_written() {
    let with = |traffic: &str| {
        VALID.replace("virtual_channels: 3", &format!("virtual_channels: 3\n  traffic: {traffic}"))
    };
    accepted(&with("{injection_process: [poisson, bernoulli, on_off], burst_length: [4, 16]}"));
    let text = with("{injection_process: bernoulli}").replace("rates: [0.01]", "rates: [0.5, 1.5]");
    let err = flat(&rejected(text.as_bytes()));
    assert!(err.contains("rate must be at most 1, found 1.5"), "{err}");
    assert!(err.contains("bad.yaml:7:"), "{err}");
    let err = flat(&rejected(with("{injection_process: on_off}").as_bytes()));
    assert!(err.contains("`on_off` needs `traffic.burst_length`"), "{err}");
    let err = flat(&rejected(with("{burst_length: 4}").as_bytes()));
    assert!(
        err.contains("`burst_length` applies only to `traffic.injection_process: on_off`"),
        "{err}"
    );
    let err = flat(&rejected(with("{injection_process: on_off, burst_length: 0.5}").as_bytes()));
    assert!(err.contains("burst_length must lie in [1, 1000000000]"), "{err}");
}

/// Issue 23: the dragonfly's routings, fields and traffic are refused where they do not fit,
/// each at its place; the balanced dragonfly needs only `terminals_per_router`.
#[test]
fn dragonfly_routings_fields_and_traffic_are_located() {
    let dragonfly = "\
name: ok
scenario:
  topology: {kind: dragonfly, terminals_per_router: 1}
  routing: [minimal, valiant, ugal, ugal_booksim]
  virtual_channels: 3
  traffic: {pattern: [uniform, group_shift]}
load: {rates: [0.01]}
methods: {simulation: {}}
";
    accepted(dragonfly);
    let err = flat(&rejected(VALID.replace("routing: duato", "routing: ugal").as_bytes()));
    assert!(err.contains("routing `ugal` does not fit topology `torus`"), "{err}");
    assert!(err.contains("bad.yaml:4:"), "{err}");
    let err = flat(&rejected(
        dragonfly.replace("[minimal, valiant, ugal, ugal_booksim]", "duato").as_bytes(),
    ));
    assert!(
        err.contains(
            "use `routing: minimal`, `valiant`, `ugal`, `ugal_global`, `par` or `ugal_booksim` on the dragonfly"
        ),
        "{err}"
    );
    let err =
        flat(&rejected(dragonfly.replace("virtual_channels: 3", "virtual_channels: 2").as_bytes()));
    assert!(err.contains("needs virtual_channels >= 3"), "{err}");
    let err = flat(&rejected(
        VALID.replace("dimensions: 2}", "dimensions: 2, routers_per_group: 4}").as_bytes(),
    ));
    assert!(err.contains("applies only to `topology.kind: dragonfly`"), "{err}");
    let err = flat(&rejected(
        VALID
            .replace(
                "virtual_channels: 3",
                "virtual_channels: 3\n  traffic: {pattern: group_shift}",
            )
            .as_bytes(),
    ));
    assert!(err.contains("it needs topology dragonfly"), "{err}");
    let model = dragonfly.replace("{simulation: {}}", "{model: {name: nbc_torus}}");
    let err = flat(&rejected(model.as_bytes()));
    assert!(err.contains("no analytical model here covers the dragonfly"), "{err}");
}

/// Issue 23: the k-ary n-tree takes `radix` and `dimensions`, routes `up_down` or
/// `up_down_random` only, and no model covers it; each refusal is located.
#[test]
fn kary_ntree_routings_and_models_are_located() {
    let tree = "\
name: ok
scenario:
  topology: {kind: kary_ntree, radix: 4, dimensions: 3}
  routing: [up_down, up_down_random]
  virtual_channels: [1, 2]
load: {rates: [0.01]}
methods: {simulation: {}}
";
    accepted(tree);
    let err = flat(&rejected(tree.replace("[up_down, up_down_random]", "duato").as_bytes()));
    assert!(err.contains("routing `duato` does not fit topology `kary_ntree`"), "{err}");
    assert!(err.contains("bad.yaml:4:"), "{err}");
    let err =
        flat(&rejected(VALID.replace("routing: duato", "routing: up_down_random").as_bytes()));
    assert!(
        err.contains("are for the fat-trees (fat_tree, kary_ntree; up_down also for graph)"),
        "{err}"
    );
    let err = flat(&rejected(tree.replace(", dimensions: 3}", "}").as_bytes()));
    assert!(err.contains("dimensions"), "{err}");
    let model = tree.replace("{simulation: {}}", "{model: {name: fat_tree}}");
    let err = flat(&rejected(model.as_bytes()));
    assert!(err.contains("no analytical model here covers the k-ary n-tree"), "{err}");
}

/// Issue 23's graph from a file: problems in the file are reported with the file's line and
/// column at the spec's `graph` value, every one of them; a missing file, a routing that does
/// not fit and too few VCs for `minimal` are located too; the models refuse a graph.
#[test]
fn graph_file_problems_are_located_in_the_file_and_the_spec() {
    let scratch = Scratch::new();
    let write = |name: &str, text: &str| {
        std::fs::write(scratch.path().join(name), text).expect("write");
    };
    write(
        "good.txt",
        "# a ring of three\nrouter a terminals 1\nrouter b terminals 1\nrouter c terminals 1\n\
         link a b\nlink b c\nlink c a\n",
    );
    write(
        "bad.txt",
        "router a terminals 1\nrouter b terminals 1\nrouter c terminals 1\nlink a b\nlink b a\n\
         link a a\nlink a zz\nlnk b c\n",
    );
    write("island.txt", "router a terminals 1\nrouter b terminals 1\n");
    let spec = |graph: &str, routing: &str, v: u32, methods: &str| {
        format!(
            "name: g\nscenario:\n  topology: {{kind: graph, graph: {graph}}}\n  routing: {routing}\n  \
             virtual_channels: {v}\nload: {{rates: [0.01]}}\nmethods: {methods}\n"
        )
    };
    let validate = |text: &str| {
        scratch.spec("g.yaml", text);
        let output = scratch.run(&["validate", "g.yaml"]);
        let err = flat(&stderr(&output));
        assert!(!err.contains("panicked"), "{err}");
        (output.status.code(), err)
    };
    let sim = "{simulation: {}}";
    let (code, err) = validate(&spec("[good.txt]", "[up_down, minimal]", 2, sim));
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = validate(&spec("bad.txt", "up_down", 1, sim));
    assert_eq!(code, Some(2), "{err}");
    for expected in [
        "bad.txt:5:6: duplicate link between `b` and `a` (first on line 4)",
        "bad.txt:6:8: `link a a` is a self-loop",
        "bad.txt:7:8: unknown router `zz`",
        "bad.txt:8:1: expected `router`, `link`, `root`, `route` or `escape`, found `lnk` (did you mean `link`?)",
        "g.yaml:3:",
        "docs/graph.md",
    ] {
        assert!(err.contains(expected), "{expected}: {err}");
    }
    let (_, err) = validate(&spec("island.txt", "up_down", 1, sim));
    assert!(err.contains("island.txt:2:1: the graph is disconnected: router `b`"), "{err}");
    let (_, err) = validate(&spec("missing.txt", "up_down", 1, sim));
    assert!(err.contains("missing.txt does not exist") && err.contains("g.yaml:3:"), "{err}");
    let (_, err) = validate(&spec("good.txt", "duato", 3, sim));
    assert!(err.contains("routing `duato` does not fit topology `graph`"), "{err}");
    assert!(err.contains("g.yaml:4:"), "{err}");
    let (_, err) = validate(&spec("good.txt", "minimal", 1, sim));
    assert!(err.contains("needs virtual_channels >= 2"), "{err}");
    let (_, err) = validate(&spec("good.txt", "up_down", 1, "{model: {name: nbc_torus}}"));
    assert!(err.contains("no analytical model here covers a graph"), "{err}");
    let torus = VALID.replace("dimensions: 2}", "dimensions: 2, graph: good.txt}");
    let (_, err) = validate(&torus);
    assert!(err.contains("applies only to `topology.kind: graph`"), "{err}");
}

/// A link heat map needs the per-link loads, which the simulation records only when asked;
/// with `link_loads: true` the same figures are accepted, histograms always.
#[test]
fn a_link_heatmap_without_link_loads_is_explained() {
    let figures = "report:\n  figures:\n    - {kind: link_heatmap, point: 0.01}\n    - {kind: histogram, y: source_wait, point: all}\n";
    let err = rejected(format!("{VALID}{figures}").as_bytes());
    assert!(flat(&err).contains("methods.simulation.link_loads: true"), "{err}");
    let with_loads =
        VALID.replace("methods: {simulation: {}}", "methods: {simulation: {link_loads: true}}");
    accepted(&format!("{with_loads}{figures}"));
    let wrong_y = "report:\n  figures:\n    - {kind: histogram, y: throughput}\n";
    let err = rejected(format!("{VALID}{wrong_y}").as_bytes());
    assert!(flat(&err).contains("a histogram draws `y: latency`"), "{err}");
}

/// A rejected number is echoed in its shortest form (`1e300`), not as the 301 digits of
/// Rust's `Display`.
#[test]
fn rejected_spec_numbers_are_echoed_in_their_shortest_form() {
    let cases = [
        (VALID.replace("rates: [0.01]", "rates: [-1e300]"), "found -1e300"),
        (
            VALID.replace("rates: [0.01]", "rates: {from: 1e300, to: 1e-300, points: 3}"),
            "found from = 1e300 and to = 1e-300",
        ),
        (
            VALID.replace("rates: [0.01]", "rates: {from: 0.01, to: 0.02, step: -1e300}"),
            "found -1e300",
        ),
        (VALID.replace("simulation: {}", "simulation: {target_precision: 1e300}"), "found 1e300"),
    ];
    for (spec, expected) in cases {
        let err = flat(&rejected(spec.as_bytes()));
        assert!(err.contains(expected), "{err}");
        assert!(!err.contains("0000000000"), "{err}");
    }
}

#[test]
fn simulation_threads_are_checked_where_written() {
    accepted(&VALID.replace("simulation: {}", "simulation: {threads: 4}"));
    for bad in ["0", "257"] {
        let err = flat(&rejected(
            VALID.replace("simulation: {}", &format!("simulation: {{threads: {bad}}}")).as_bytes(),
        ));
        assert!(err.contains(&format!("`threads` must be 1 to 256, found {bad}")), "{err}");
        assert!(err.contains("bad.yaml:7:"), "{err}");
    }
}
