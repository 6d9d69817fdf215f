//! Tests of the external evaluator: replies, domains, processes and logs.

use super::process::*;
use super::reply::*;
use super::*;

/// The bytes a reader took before the end of its output are kept when the pipe stays open
/// (a process the program left behind holds it): the reply is there, not "printed nothing".
#[test]
fn what_was_read_is_kept_when_a_pipe_stays_open() {
    let (source, mut writer) = std::io::pipe().expect("pipe");
    writer.write_all(br#"{"status": "ok", "latency": 40}"#).expect("write");
    let reader = drain(source, 8);
    let deadline = Instant::now() + Duration::from_secs(30);
    while reader.read.lock().expect("lock").kept.len() < 8 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (kept, dropped, open) = collect(reader, Instant::now());
    assert_eq!((kept.as_slice(), dropped, open), (&br#"{"status"#[..], 23, true));
    // Read on after it was taken, so the writer never blocks; nothing more is kept.
    writer.write_all(&[b'x'; 200_000]).expect("the reader drains on");
    drop(writer);

    let (source, mut writer) = std::io::pipe().expect("pipe");
    let reader = drain(source, 1 << 10);
    writer.write_all(b"all of it").expect("write");
    drop(writer);
    let (kept, dropped, open) = collect(reader, Instant::now() + Duration::from_secs(30));
    assert_eq!((kept.as_slice(), dropped, open), (&b"all of it"[..], 0, false));
}

#[test]
fn only_the_guard_saying_so_is_a_program_that_did_not_start() {
    use std::os::unix::process::ExitStatusExt as _;
    let failed = ExitStatus::from_raw(super::super::guard::START_FAILED << 8);
    let line =
        format!("{}Permission denied (os error 13)\n", super::super::guard::START_FAILED_MARK);
    assert_eq!(
        start_failure(Some(failed), line.as_bytes()).as_deref(),
        Some("Permission denied (os error 13)")
    );
    assert_eq!(start_failure(Some(failed), b"command not found\n"), None);
    assert_eq!(start_failure(Some(ExitStatus::from_raw(0)), line.as_bytes()), None);
    assert_eq!(start_failure(None, line.as_bytes()), None);
}

#[test]
fn a_complete_response_parses_and_fills_a_row() {
    let response = parse(
        br#"{"status": "ok", "latency": 41.5, "throughput": 0.01, "cycles": 1000,
             "latency_p99": 97.0, "source_wait_max": 12.0,
             "intermediates": {"utilisation": 0.25}}"#,
    )
    .expect("valid");
    let mut row = Row::default();
    fill_row(&mut row, &response);
    assert_eq!(row.status, "ok");
    assert_eq!(row.latency, Some(41.5));
    assert_eq!(row.throughput, Some(0.01));
    assert_eq!(row.cycles, Some(1000));
    assert_eq!(
        (row.latency_p99, row.source_wait_max, row.latency_p50),
        (Some(97.0), Some(12.0), None)
    );
    assert_eq!(row.intermediates, r#"{"utilisation":0.25}"#);
}

#[test]
fn unsupported_is_a_status_with_its_reason() {
    let response = parse(br#"{"status": "unsupported", "reason": "no fat-trees"}"#).expect("valid");
    let mut row = Row::default();
    fill_row(&mut row, &response);
    assert_eq!(row.status, "unsupported");
    assert_eq!(row.error.as_deref(), Some("no fat-trees"));
    assert_eq!(row.latency, None);
    let bare = parse(br#"{"status": "unsupported"}"#).expect_err("no reason");
    assert!(bare.contains("detail"), "{bare}");
}

#[test]
fn every_malformed_response_names_its_problem() {
    let cases: [(&[u8], &str); 8] = [
        (b"", "printed nothing"),
        (b"hello", "not one JSON object"),
        (b"[1, 2]", "not an object"),
        (br#"{"latency": 3}"#, "`status`"),
        (br#"{"status": "ok"}"#, "`latency`"),
        (br#"{"status": "ok", "latency": "fast"}"#, "wrong type"),
        (br#"{"status": "ok", "latency": 3, "latncy": 4}"#, "unknown field `latncy`"),
        (br#"{"status": "fine", "latency": 3}"#, "wrong type"),
    ];
    for (output, expected) in cases {
        let problem = parse(output).expect_err("malformed");
        assert!(problem.contains(expected), "{problem:?} lacks {expected:?}");
    }
    let two = parse(b"{\"status\": \"saturated\"}\n{\"status\": \"ok\"}").expect_err("two");
    assert!(two.contains("not one JSON object"), "{two}");
}

#[test]
fn every_number_of_a_response_is_checked_against_its_domain() {
    let ok = |fields: &str| format!(r#"{{"status": "ok", "latency": 40, {fields}}}"#);
    let cases = [
        (ok(r#""latency_ci95": -0.5"#), "`latency_ci95` = -0.5"),
        (ok(r#""hops": -2"#), "`hops` = -2"),
        (ok(r#""throughput": -0.01"#), "`throughput` = -0.01"),
        (ok(r#""latency_p99": -1"#), "`latency_p99` = -1"),
        (ok(r#""source_wait_max": -3"#), "`source_wait_max` = -3"),
        (ok(r#""blocking_probability": 1.5"#), "`blocking_probability` = 1.5"),
        (ok(r#""cycles": 3.5"#), "`cycles` = 3.5"),
        (ok(r#""cycles": 3.0"#), "`cycles` = 3.0"),
        (ok(r#""flit_hops": -1"#), "`flit_hops` = -1"),
        (ok(r#""messages_measured": 9007199254740993"#), "`messages_measured`"),
        (ok(r#""source_drops": "many""#), "`source_drops` = a string"),
        (ok(r#""network_latency": 1e308"#), "`network_latency` = 1e308"),
        (ok(r#""intermediates": {"u": -1e300}"#), "`intermediates.u` = -1e300"),
        (ok(r#""intermediates": {"latency_batches": 2.5}"#), "`intermediates.latency_batches`"),
        (ok(r#""intermediates": {"latency_batch_sd": -1}"#), "`intermediates.latency_batch_sd`"),
        (
            ok(r#""latency_p50": 30, "latency_p90": 20"#),
            "`latency_p90` = 20 below `latency_p50` = 30",
        ),
        (ok(r#""network_latency_p99": 50, "network_latency_max": 49"#), "`network_latency_max`"),
        (ok(r#""throughput_min": 0.2, "throughput_max": 0.1"#), "`throughput_max`"),
        (r#"{"status": "ok", "latency": -1}"#.to_string(), "`latency` = -1"),
        (r#"{"status": "ok", "latency": 1e300}"#.to_string(), "`latency` = 1e300"),
        (r#"{"status": "saturated", "throughput": -1}"#.to_string(), "`throughput` = -1"),
    ];
    for (reply, expected) in cases {
        let problem = parse(reply.as_bytes()).expect_err(&reply);
        assert!(problem.contains(expected), "{problem:?} lacks {expected:?}");
        assert!(problem.len() < 300, "{problem}");
    }
    // The ends of each domain are in it.
    let edges = ok(r#""blocking_probability": 1, "hops": 0, "cycles": 9007199254740992,
                      "latency_p50": 5, "latency_p90": 5, "latency_max": 1e100,
                      "intermediates": {"x": -1e100, "latency_batches": 2.0}"#);
    parse(edges.as_bytes()).expect("edges");
}

#[test]
fn every_number_of_the_response_has_a_domain() {
    let schema: serde_json::Value = serde_json::from_str(&response_schema()).expect("json");
    let properties = schema["properties"].as_object().expect("properties");
    let mut numbers: Vec<&str> = properties
        .iter()
        .filter(|(_, p)| {
            let kind = p["type"].to_string();
            kind.contains("number") || kind.contains("integer")
        })
        .map(|(name, _)| name.as_str())
        .collect();
    numbers.sort_unstable();
    let mut domains: Vec<&str> = DOMAINS.iter().map(|(name, _)| *name).collect();
    domains.sort_unstable();
    assert_eq!(numbers, domains);
    for (name, domain) in DOMAINS {
        let property = &properties[*name];
        let integer = property["type"].to_string().contains("integer");
        assert_eq!(integer, *domain == Domain::Count, "{name}");
        // The schema states the domain's bounds.
        let bounds = (property["minimum"].as_f64(), property["maximum"].as_f64());
        let expected = match domain {
            Domain::NonNegative => (Some(0.0), Some(MAX_MAGNITUDE)),
            Domain::Probability => (Some(0.0), Some(1.0)),
            Domain::Count => (Some(0.0), Some(MAX_COUNT as f64)),
            Domain::Whole | Domain::Real => (None, None),
        };
        assert_eq!(bounds, expected, "{name}");
    }
}

#[test]
fn a_key_given_twice_in_a_response_is_refused() {
    let cases: [(&[u8], &str); 3] = [
        (br#"{"status": "ok", "latency": 3, "latency": 4}"#, "`latency` appears twice"),
        (br#"{"status": "ok", "status": "saturated", "latency": 3}"#, "`status` appears twice"),
        (
            br#"{"status": "ok", "latency": 3, "intermediates": {"u": 1, "u": 2}}"#,
            "`u` appears twice",
        ),
    ];
    for (output, expected) in cases {
        let problem = parse(output).expect_err("a key twice");
        assert!(problem.contains(expected), "{problem:?} lacks {expected:?}");
    }
}

/// The largest replies the domains accept average to finite values over the most
/// replications a spec may ask for: no `inf` or NaN with status `ok`.
#[test]
fn aggregating_the_largest_accepted_replies_stays_finite() {
    let reply = br#"{"status": "ok", "latency": 1e100, "latency_ci95": 1e100,
        "throughput": 1e100, "hops": 1e100, "latency_p99": 1e100, "latency_max": 1e100,
        "cycles": 9007199254740992, "messages_measured": 9007199254740992,
        "intermediates": {"latency_batches": 9007199254740992, "latency_batch_mean": 1e100,
                          "latency_batch_sd": 1e100, "x": -1e100}}"#;
    let response = parse(reply).expect("in the domains");
    let mut small = Row::default();
    let zeros = br#"{"status": "ok", "latency": 0, "latency_ci95": 0, "throughput": 0,
        "hops": 0, "latency_p99": 0, "latency_max": 0, "cycles": 0, "messages_measured": 0,
        "intermediates": {"latency_batches": 2, "latency_batch_mean": 0,
                          "latency_batch_sd": 0, "x": 1e100}}"#;
    fill_row(&mut small, &parse(zeros).expect("valid"));
    let mut large = Row::default();
    fill_row(&mut large, &response);
    let task = Task {
        kind: crate::plan::TaskKind::Aggregate,
        id: "a".into(),
        scenario: None,
        load: None,
        loads: None,
        replication: None,
        seed: None,
        fault_seed: None,
        cost: 0.0,
        method: None,
    };
    let mut replications = vec![large.clone(), small.clone()];
    let faulty = Row { fault_seed: Some(1), ..large.clone() };
    let mut with_faults = vec![faulty.clone(), Row { fault_seed: Some(2), ..small.clone() }];
    let max = crate::spec::external::MAX_REPLICATIONS as usize;
    let mut many: Vec<Row> =
        (0..max).map(|i| if i % 2 == 0 { large.clone() } else { small.clone() }).collect();
    for rows in [&mut replications, &mut with_faults, &mut many] {
        // Counts of many replications may pass u64::MAX: a failure, never a wrap or a panic.
        for row in rows.iter_mut() {
            row.cycles = Some(1);
            row.messages_measured = Some(1);
        }
        let row = super::super::aggregate::aggregate(rows, &task).expect("aggregates");
        for value in [
            row.latency,
            row.latency_ci95,
            row.throughput,
            row.hops,
            row.latency_p99,
            row.latency_max,
        ] {
            assert!(value.is_some_and(f64::is_finite), "{value:?}");
        }
        assert!(!row.intermediates.contains("null"), "{}", row.intermediates);
    }
    let overflow: Vec<Row> = (0..max).map(|_| large.clone()).collect();
    let problem = super::super::aggregate::aggregate(&overflow, &task).expect_err("overflow");
    assert!(problem.contains("`cycles`"), "{problem}");
}

#[test]
fn the_request_names_every_scenario_column() {
    let scenario = Scenario::new(crate::scenario::Topology::Torus { radix: 4, dimensions: 2 });
    let columns = serde_json::to_value(ScenarioColumns::of(&scenario)).expect("json");
    let names: Vec<&str> =
        columns.as_object().expect("object").keys().map(String::as_str).collect();
    // Every scenario column, the trace's too (always null here: a spec that replays a
    // trace refuses external methods), in the order of `results.parquet`.
    let columns: Vec<&str> = crate::scenario::fields::columns().map(|f| f.name).collect();
    for column in &columns {
        assert!(names.contains(column), "the request lacks the scenario column {column}");
    }
    assert_eq!(names.len(), columns.len(), "{names:?}");
    let row = serde_json::to_value(Row::of_scenario(&scenario)).expect("json");
    for name in &names {
        assert!(row.get(*name).is_some(), "{name} is not a result column");
    }
}

/// The committed schemas are the generated ones (regenerate with
/// `runner schema --external request|response`).
#[test]
fn the_committed_protocol_schemas_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    for (file, schema, which) in [
        ("external-request.schema.json", request_schema(), "request"),
        ("external-response.schema.json", response_schema(), "response"),
    ] {
        let committed = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        assert!(
            committed == schema,
            "schemas/{file} is stale: run `runner schema --external {which} > schemas/{file}`"
        );
    }
}
