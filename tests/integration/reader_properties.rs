//! Property tests of three readers of files runner does not write: the external program's reply
//! parser (`exec::external::parse`, `docs/external.md`), the trace reader (`trace::open` and
//! `trace::scan`, CSV and Parquet, `docs/traces.md`) and the graph-file reader
//! (`scenario::graph::parse`, `docs/graph.md`).
//!
//! Each generator writes a valid document and then, most of the time, spoils it once: a value
//! of the wrong type, a number at or past the edge of its domain (negative, huge, `NaN`, a
//! fraction where a count is due), a key or a line given twice, a misspelt word, a truncated
//! line, CRLF line ends, a byte-order mark, non-ASCII text. Every case holds the reader to its
//! contract: no panic; a refusal names its problem, and where the reader gives locations they
//! lie inside the input; what is accepted keeps the format's promises (replies: every number
//! finite and in its domain, percentiles ordered; traces: times never going back, nodes and
//! lengths in range; graphs: every link between two known routers, connected, and the rest of
//! the format's rules). Where the spoiling is known, the refusal must name it at its place, and
//! an unspoilt document must read back exactly as generated.
//!
//! The coverage-guided counterparts are the `cargo fuzz` targets `external_reply`,
//! `trace_reader` and `graph_reader` in `fuzz/` (see `docs/fuzzing.md`).

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use runner::exec::external::{self, MAX_COUNT, MAX_MAGNITUDE, Response, ResponseStatus};
use runner::scenario::graph::{self, Graph, GraphError};
use runner::scenario::{TraceSummary, bounds};
use runner::sim::TraceRecord;
use runner::trace;

use crate::common::no_panic;

fn runner_with(cases: u32) -> TestRunner {
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

/// What a spoilt document must do.
#[derive(Clone, Debug)]
enum Expect {
    /// Be read as generated.
    Accept,
    /// Be refused, with a problem containing these words (at this place, for the located
    /// readers: a line or row, and a column where the reader gives one).
    Refuse { words: String, line: Option<usize>, column: Option<usize> },
    /// Either, as long as the contract holds (a truncation, a stray character).
    Either,
}

fn refuse(words: &str) -> Expect {
    Expect::Refuse { words: words.to_string(), line: None, column: None }
}

fn refuse_at(words: &str, line: usize, column: Option<usize>) -> Expect {
    Expect::Refuse { words: words.to_string(), line: Some(line), column }
}

/// Cuts `text` after its `at`-th character (counting from 0, modulo its length).
fn truncated(text: &str, at: usize) -> String {
    let chars = text.chars().count().max(1);
    text.chars().take(at % chars).collect()
}

/// Inserts `what` before the `at`-th character of `text` (modulo its length plus one).
fn inserted(text: &str, at: usize, what: &str) -> String {
    let at = at % (text.chars().count() + 1);
    let mut out: String = text.chars().take(at).collect();
    out.push_str(what);
    out.extend(text.chars().skip(at));
    out
}

/// Characters that spoil a document where they land, or test its reader's reading of text.
const STRAY: &[&str] =
    &["\u{feff}", "\0", "#", ",", "\r", "\n", " ", "\t", "\u{a0}", "é", "☃", "𝔘", "\"", "{", "-"];

// ---------------------------------------------------------------------------------------------
// External replies.

/// What values a number of the reply protocol may take (`docs/external.md`, "Domains").
#[derive(Clone, Copy, Debug, PartialEq)]
enum Domain {
    NonNegative,
    Probability,
    Count,
}

/// The reply's numbers outside the percentile families and the ordered pairs.
const SINGLE_NUMBERS: &[(&str, Domain)] = &[
    ("latency_ci95", Domain::NonNegative),
    ("network_latency", Domain::NonNegative),
    ("source_wait", Domain::NonNegative),
    ("unicast_latency", Domain::NonNegative),
    ("multiplexing_degree", Domain::NonNegative),
    ("channel_rate", Domain::NonNegative),
    ("blocking_probability", Domain::Probability),
    ("throughput", Domain::NonNegative),
    ("hops", Domain::NonNegative),
    ("offered_throughput", Domain::NonNegative),
    ("flit_throughput", Domain::NonNegative),
    ("cycles", Domain::Count),
    ("flit_hops", Domain::Count),
    ("messages_measured", Domain::Count),
    ("source_drops", Domain::Count),
];

/// The families whose members must not decrease, where given.
const FAMILIES: &[&[&str]] = &[
    &["latency_p50", "latency_p90", "latency_p99", "latency_max"],
    &["network_latency_p50", "network_latency_p90", "network_latency_p99", "network_latency_max"],
    &["source_wait_p50", "source_wait_p90", "source_wait_p99", "source_wait_max"],
    &["throughput_min", "throughput_max"],
    &["flit_throughput_min", "flit_throughput_max"],
];

/// Values outside each domain, as JSON text: each must be refused naming its field.
fn outside(domain: Domain) -> &'static [&'static str] {
    match domain {
        Domain::NonNegative => &[
            "-1",
            "-1e-300",
            "1e101",
            "1e300",
            "1.7976931348623157e308",
            "\"1\"",
            "true",
            "[]",
            "{}",
            "[1]",
        ],
        Domain::Probability => &["1.5", "-0.1", "2", "1e100", "\"0.5\"", "false"],
        Domain::Count => &[
            "-1",
            "3.0",
            "0.5",
            "9007199254740993",
            "18446744073709551615",
            "1e20",
            "\"3\"",
            "[3]",
        ],
    }
}

/// Text that is not a JSON value at all, where a number is due: refused as not JSON.
const NOT_JSON: &[&str] =
    &["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "01", "1.", ".5", "+1"];

/// A value inside a number's domain, as JSON text.
fn inside(domain: Domain) -> BoxedStrategy<String> {
    match domain {
        Domain::NonNegative => prop_oneof![
            Just("0".to_string()),
            Just("-0.0".to_string()),
            Just("1e100".to_string()),
            Just("1E2".to_string()),
            (0.0..1e6f64).prop_map(|x| x.to_string()),
        ]
        .boxed(),
        Domain::Probability => prop_oneof![
            Just("0".to_string()),
            Just("1".to_string()),
            Just("1.0".to_string()),
            (0.0..=1.0f64).prop_map(|x| x.to_string()),
        ]
        .boxed(),
        Domain::Count => prop_oneof![
            Just("0".to_string()),
            Just(MAX_COUNT.to_string()),
            (0..10_000_000u64).prop_map(|n| n.to_string()),
        ]
        .boxed(),
    }
}

/// A valid reply: its members (key, JSON text) in order.
fn valid_reply() -> impl Strategy<Value = Vec<(String, String)>> {
    let statuses = ["ok", "saturated", "deadlock", "imprecise", "unsupported"];
    let singles: Vec<_> = SINGLE_NUMBERS
        .iter()
        .map(|&(name, domain)| {
            proptest::option::weighted(0.3, inside(domain)).prop_map(move |v| (name, v))
        })
        .collect();
    let families: Vec<_> = FAMILIES
        .iter()
        .map(|&family| {
            proptest::collection::vec((any::<bool>(), 0.0..1e4f64), family.len()).prop_map(
                move |mut members| {
                    members.sort_by(|a, b| a.1.total_cmp(&b.1));
                    family
                        .iter()
                        .zip(members)
                        .filter(|(_, (given, _))| *given)
                        .map(|(name, (_, value))| (name.to_string(), value.to_string()))
                        .collect::<Vec<_>>()
                },
            )
        })
        .collect();
    let intermediates = proptest::collection::vec(
        prop_oneof![
            (0..1_000u64).prop_map(|n| ("latency_batches".to_string(), format!("{n}.0"))),
            (0.0..1e3f64).prop_map(|x| ("latency_batch_mean".to_string(), x.to_string())),
            (0.0..1e3f64).prop_map(|x| ("latency_batch_sd".to_string(), x.to_string())),
            (-1e100..1e100f64).prop_map(|x| ("channel_utilisation".to_string(), x.to_string())),
            Just(("λ_ünïcode".to_string(), "-1e100".to_string())),
            Just(("".to_string(), "0".to_string())),
        ],
        0..4,
    );
    (0..statuses.len(), 0.0..1e4f64, any::<bool>(), singles, families, intermediates).prop_map(
        move |(status, latency, with_detail, singles, families, intermediates)| {
            let status = statuses[status];
            let mut members = vec![("status".to_string(), format!("\"{status}\""))];
            if matches!(status, "ok" | "imprecise") || with_detail {
                members.push(("latency".to_string(), latency.to_string()));
            }
            if status == "unsupported" || with_detail {
                members
                    .push(("detail".to_string(), "\"cannot: «ünïcode» \\u00e9\\n\"".to_string()));
            }
            for (name, value) in singles {
                if let Some(value) = value {
                    members.push((name.to_string(), value));
                }
            }
            members.extend(families.into_iter().flatten());
            let mut keys = HashSet::new();
            let inner: Vec<String> = intermediates
                .into_iter()
                .filter(|(key, _)| keys.insert(key.clone()))
                .map(|(key, value)| format!("{}: {value}", json_string(&key)))
                .collect();
            if !inner.is_empty() {
                members.push(("intermediates".to_string(), format!("{{{}}}", inner.join(", "))));
            }
            members
        },
    )
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

/// The reply as one JSON object.
fn reply_text(members: &[(String, String)], pretty: bool) -> String {
    let parts: Vec<String> =
        members.iter().map(|(key, value)| format!("{}: {value}", json_string(key))).collect();
    if pretty {
        format!("{{\r\n\t{}\r\n}}\r\n", parts.join(",\r\n\t"))
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// A reply and what parsing it must do.
fn spoilt_reply() -> impl Strategy<Value = (String, Expect)> {
    let single = (0..SINGLE_NUMBERS.len(), any::<prop::sample::Index>());
    (valid_reply(), 0..16u8, single, any::<usize>(), 0..STRAY.len(), any::<bool>()).prop_map(
        |(mut members, spoil, (field, pick), at, stray, pretty)| {
            let (name, domain) = SINGLE_NUMBERS[field];
            let set = |members: &mut Vec<(String, String)>, name: &str, value: &str| {
                members.retain(|(key, _)| key != name);
                members.push((name.to_string(), value.to_string()));
            };
            let status = members[0].1.trim_matches('"').to_string();
            let expect = match spoil {
                0 | 1 => {
                    let bad = pick.get(outside(domain));
                    set(&mut members, name, bad);
                    refuse(&format!("`{name}`"))
                }
                2 => {
                    set(&mut members, name, pick.get::<&str>(NOT_JSON));
                    refuse("not one JSON object")
                }
                3 => {
                    // A key given twice, anywhere in the object.
                    let (key, value) = pick.get(&members).clone();
                    members.insert(at % (members.len() + 1), (key.clone(), value));
                    refuse(&format!("`{key}` appears twice"))
                }
                4 => {
                    set(&mut members, "intermediates", "{\"a\": 1, \"b\": 2, \"a\": 1}");
                    refuse("`a` appears twice")
                }
                5 => {
                    let key = *pick.get::<&str>(&["latncy", "Latency", "statuss", "p50"]);
                    set(&mut members, key, "1");
                    refuse("unknown field")
                }
                6 => {
                    members.remove(0);
                    refuse("`status`")
                }
                7 if matches!(status.as_str(), "ok" | "imprecise") => {
                    members.retain(|(key, _)| key != "latency");
                    refuse("`latency`")
                }
                7 => {
                    members[0].1 = "\"unsupported\"".into();
                    members.retain(|(key, _)| key != "detail");
                    refuse("`detail`")
                }
                8 => {
                    // A family out of order: its largest member's value given to its least.
                    let family = pick.get(FAMILIES);
                    set(&mut members, family[0], "2e4");
                    set(&mut members, family[family.len() - 1], "1e4");
                    refuse("they must be ordered")
                }
                9 => {
                    members[0].1 = pick.get(&["\"OK\"", "\"failed\"", "1", "null"]).to_string();
                    refuse("wrong type")
                }
                10 => {
                    set(&mut members, "intermediates", "{\"x\": null}");
                    refuse("`intermediates.x` = null")
                }
                11 => {
                    // Deep nesting, past serde_json's recursion limit.
                    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
                    set(&mut members, "intermediates", &format!("{{\"x\": {deep}}}"));
                    refuse("printed")
                }
                12 => {
                    let text = reply_text(&members, false);
                    return (truncated(&text, at), refuse("printed"));
                }
                13 => {
                    let text = reply_text(&members, pretty);
                    return (inserted(&text, at, STRAY[stray]), Expect::Either);
                }
                14 => {
                    // A field given as null counts as left out.
                    set(&mut members, name, "null");
                    Expect::Accept
                }
                _ => Expect::Accept,
            };
            (reply_text(&members, pretty), expect)
        },
    )
}

/// Asserts what an accepted reply promises (`docs/external.md`, "Domains").
fn reply_keeps_its_promises(r: &Response) -> Result<(), TestCaseError> {
    let non_negative = |x: Option<f64>| x.is_none_or(|x| (0.0..=MAX_MAGNITUDE).contains(&x));
    let measurements = [
        r.latency,
        r.latency_ci95,
        r.network_latency,
        r.source_wait,
        r.unicast_latency,
        r.multiplexing_degree,
        r.channel_rate,
        r.throughput,
        r.hops,
        r.offered_throughput,
        r.throughput_min,
        r.throughput_max,
        r.flit_throughput,
        r.flit_throughput_min,
        r.flit_throughput_max,
    ];
    let families = [
        [r.latency_p50, r.latency_p90, r.latency_p99, r.latency_max],
        [
            r.network_latency_p50,
            r.network_latency_p90,
            r.network_latency_p99,
            r.network_latency_max,
        ],
        [r.source_wait_p50, r.source_wait_p90, r.source_wait_p99, r.source_wait_max],
    ];
    for value in measurements.iter().chain(families.iter().flatten()) {
        prop_assert!(non_negative(*value), "accepted {value:?} in {r:?}");
    }
    let p = r.blocking_probability;
    prop_assert!(p.is_none_or(|p| (0.0..=1.0).contains(&p)), "accepted {p:?}");
    for n in [r.cycles, r.flit_hops, r.messages_measured, r.source_drops] {
        prop_assert!(n.is_none_or(|n| n <= MAX_COUNT), "accepted the count {n:?}");
    }
    let pairs =
        [[r.throughput_min, r.throughput_max], [r.flit_throughput_min, r.flit_throughput_max]];
    for family in families.iter().map(|f| &f[..]).chain(pairs.iter().map(|f| &f[..])) {
        let given: Vec<f64> = family.iter().flatten().copied().collect();
        prop_assert!(given.windows(2).all(|w| w[0] <= w[1]), "not ordered: {family:?}");
    }
    for (key, &x) in &r.intermediates {
        let holds = match key.as_str() {
            "latency_batches" => x.fract() == 0.0 && (0.0..=MAX_COUNT as f64).contains(&x),
            "latency_batch_mean" | "latency_batch_sd" => non_negative(Some(x)),
            _ => x.is_finite() && x.abs() <= MAX_MAGNITUDE,
        };
        prop_assert!(holds, "accepted `intermediates.{key}` = {x}");
    }
    match r.status {
        ResponseStatus::Ok | ResponseStatus::Imprecise => prop_assert!(r.latency.is_some()),
        ResponseStatus::Unsupported => {
            prop_assert!(r.detail.as_deref().is_some_and(|d| !d.trim().is_empty()));
        }
        ResponseStatus::Saturated | ResponseStatus::Deadlock => {}
    }
    Ok(())
}

#[test]
fn the_reply_parser_names_every_problem_and_accepts_only_numbers_in_their_domains() {
    let accepted = std::cell::Cell::new(0u32);
    runner_with(768)
        .run(&spoilt_reply(), |(text, expect)| {
            let parsed = no_panic(&text, || external::parse(text.as_bytes()))?;
            match (&parsed, &expect) {
                (Ok(response), Expect::Accept | Expect::Either) => {
                    reply_keeps_its_promises(response)?;
                    accepted.set(accepted.get() + 1);
                }
                (Ok(_), Expect::Refuse { words, .. }) => {
                    return Err(TestCaseError::fail(format!("accepted, not {words:?}: {text}")));
                }
                (Err(problem), Expect::Accept) => {
                    return Err(TestCaseError::fail(format!("refused {text}: {problem}")));
                }
                (Err(problem), Expect::Refuse { words, .. }) => {
                    prop_assert!(
                        problem.contains(words.as_str()),
                        "{text}\n{problem}\nwanted {words}"
                    );
                }
                (Err(_), Expect::Either) => {}
            }
            if let Err(problem) = &parsed {
                prop_assert!(problem.starts_with("printed "), "{problem}");
            }
            Ok(())
        })
        .unwrap();
    // The generator reaches the accepting path too (about one case in six).
    assert!(accepted.get() >= 768 / 12, "only {} replies accepted", accepted.get());
}

// ---------------------------------------------------------------------------------------------
// Traces.

/// A valid trace: its records (lengths in the file's unit), the network's size, and the
/// length column's name and `trace_flit_bytes` (`None`: no header, lengths in flits).
#[derive(Clone, Debug)]
struct TraceDoc {
    rows: Vec<(u64, u32, u32, u64)>,
    nodes: u32,
    unit: Option<(&'static str, Option<u32>)>,
}

impl TraceDoc {
    /// What the reader must give for each row.
    fn records(&self) -> Vec<TraceRecord> {
        let bytes = self.unit.and_then(|(_, bytes)| bytes);
        let flits = |length: u64| bytes.map_or(length, |b| length.div_ceil(u64::from(b)));
        self.rows
            .iter()
            .map(|&(cycle, source, destination, length)| TraceRecord {
                cycle,
                source,
                destination,
                length: u32::try_from(flits(length)).expect("a small length"),
            })
            .collect()
    }

    fn flit_bytes(&self) -> Option<u32> {
        self.unit.and_then(|(_, bytes)| bytes)
    }
}

fn valid_trace() -> impl Strategy<Value = TraceDoc> {
    let unit = prop_oneof![
        Just(None),
        Just(Some(("length", None))),
        Just(Some(("length_flits", None))),
        (1..=64u32).prop_map(|bytes| Some(("length_bytes", Some(bytes)))),
    ];
    (1..=64u32, unit, 0..1_000u64).prop_flat_map(|(nodes, unit, start)| {
        let row = (0..4u64, 0..nodes, 0..nodes, 1..=4096u64);
        proptest::collection::vec(row, 1..24).prop_map(move |steps| {
            let mut cycle = start;
            let rows = steps
                .into_iter()
                .map(|(step, source, destination, length)| {
                    cycle += step;
                    (cycle, source, destination, length)
                })
                .collect();
            TraceDoc { rows, nodes, unit }
        })
    })
}

/// Cell values that are never a trace's number, whatever the column: each is refused at its
/// row and column.
const NEVER_A_NUMBER: &[&str] = &[
    "-1",
    "-0.5",
    "2.5",
    "x",
    "",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e400",
    "18446744073709551616",
    "1.8446744073709552e19",
    "1e30",
    "٣",
    "1_000",
    "0x10",
    "3 4",
    "\u{feff}3",
];

/// Cell values a trace accepts as the number 3 (spaces are trimmed, a whole number may be
/// written as a fraction or with an exponent).
const THREE: &[&str] = &["3", " 3 ", "3.0", "+3", "0.03e2", "\t3"];

/// The trace's lines, and the line of each row (from 1).
fn trace_lines(doc: &TraceDoc, comments: &[bool]) -> (Vec<String>, Vec<usize>) {
    let mut lines = vec!["# a trace written by the property test: ünïcode ☃".to_string()];
    if let Some((length, _)) = doc.unit {
        lines.push(format!("Cycle, source ,DESTINATION,{length}"));
    }
    let mut at = Vec::new();
    for (i, &(cycle, source, destination, length)) in doc.rows.iter().enumerate() {
        if comments.get(i).copied().unwrap_or(false) {
            lines.push(if i % 2 == 0 { String::new() } else { "  # 1,2,3,4".to_string() });
        }
        lines.push(format!("{cycle},{source},{destination},{length}"));
        at.push(lines.len());
    }
    (lines, at)
}

/// A trace, how to read it (`trace_flit_bytes`, nodes), and what reading it must do.
#[derive(Clone, Debug)]
struct TraceCase {
    text: Vec<u8>,
    flit_bytes: Option<u32>,
    nodes: Option<u32>,
    expect: Expect,
    records: Vec<TraceRecord>,
}

fn spoilt_trace() -> impl Strategy<Value = TraceCase> {
    (
        valid_trace(),
        proptest::collection::vec(any::<bool>(), 24),
        0..14u8,
        any::<prop::sample::Index>(),
        1..=4usize,
        any::<usize>(),
        (any::<bool>(), any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(doc, comments, spoil, pick, column, at, (crlf, final_eol, check_nodes))| {
                let (mut lines, rows_at) = trace_lines(&doc, &comments);
                let row = pick.index(doc.rows.len());
                let line = rows_at[row];
                let mut cells: Vec<String> =
                    lines[line - 1].split(',').map(str::to_string).collect();
                let mut flit_bytes = doc.flit_bytes();
                let nodes = check_nodes.then_some(doc.nodes);
                let mut records = doc.records();
                let expect = match spoil {
                    0..=2 => {
                        cells[column - 1] = pick.get(NEVER_A_NUMBER).to_string();
                        refuse_at("", line, Some(column))
                    }
                    3 => {
                        // A node the network does not have.
                        let node = pick.get(&[doc.nodes, doc.nodes + 1, u32::MAX]).to_string();
                        let column = 2 + column % 2;
                        cells[column - 1] = node;
                        if check_nodes {
                            refuse_at("does not exist", line, Some(column))
                        } else {
                            Expect::Either
                        }
                    }
                    4 => {
                        // No node may exceed u32, network or not.
                        cells[1 + column % 2] = "4294967296".into();
                        refuse_at("larger than", line, Some(2 + column % 2))
                    }
                    5 => {
                        let flits = doc.flit_bytes().unwrap_or(1);
                        let longest = u64::from(bounds::MAX_COUNT) * u64::from(flits);
                        cells[3] = pick.get(&["0".to_string(), (longest + 1).to_string()]).clone();
                        refuse_at("", line, Some(4))
                    }
                    6 => {
                        // A cell written otherwise, as 3.
                        cells[column - 1] = pick.get(THREE).to_string();
                        let three = if column == 1 { 3 } else { 3 % doc.nodes };
                        cells[column - 1] = cells[column - 1].replace('3', &three.to_string());
                        let record = &mut records[row];
                        let bytes = doc.flit_bytes();
                        match column {
                            1 => record.cycle = three.into(),
                            2 => record.source = three,
                            3 => record.destination = three,
                            _ => record.length = bytes.map_or(three, |b| three.div_ceil(b)).max(1),
                        }
                        if column == 4 && three == 0 {
                            refuse_at("at least 1 flit", line, Some(4))
                        } else if column == 1 && records.windows(2).any(|w| w[1].cycle < w[0].cycle)
                        {
                            refuse("times go backwards")
                        } else {
                            Expect::Accept
                        }
                    }
                    7 => {
                        // A row with a value too few or too many.
                        if column % 2 == 0 {
                            cells.pop();
                            refuse_at("malformed row: 3", line, Some(4))
                        } else {
                            cells.push("7".into());
                            refuse_at("malformed row: 5", line, Some(5))
                        }
                    }
                    8 => {
                        // The header and `trace_flit_bytes` disagree.
                        flit_bytes = match flit_bytes {
                            Some(_) => None,
                            None => Some(8),
                        };
                        refuse("trace_flit_bytes")
                    }
                    9 => {
                        // A line too long to be a trace's.
                        lines.insert(line - 1, format!("# {}", "x".repeat(5_000)));
                        refuse("longer than 4096 bytes")
                    }
                    10 => {
                        // Times going backwards: the first row at a later cycle than the rest.
                        let last = doc.rows.last().map_or(0, |r| r.0);
                        lines[rows_at[0] - 1] = format!("{},0,0,1", last + 1);
                        if doc.rows.len() > 1 {
                            refuse_at("times go backwards", rows_at[1], Some(1))
                        } else {
                            records[0] = TraceRecord {
                                cycle: last + 1,
                                source: 0,
                                destination: 0,
                                length: 1,
                            };
                            Expect::Accept
                        }
                    }
                    11 => {
                        let text = lines.join("\n");
                        return TraceCase {
                            text: truncated(&text, at).into_bytes(),
                            flit_bytes,
                            nodes,
                            expect: Expect::Either,
                            records,
                        };
                    }
                    12 => {
                        let text = lines.join(if crlf { "\r\n" } else { "\n" });
                        let stray = STRAY[at % STRAY.len()];
                        return TraceCase {
                            text: inserted(&text, at / STRAY.len(), stray).into_bytes(),
                            flit_bytes,
                            nodes,
                            expect: Expect::Either,
                            records,
                        };
                    }
                    _ => Expect::Accept,
                };
                if !matches!(spoil, 9 | 10) {
                    lines[line - 1] = cells.join(",");
                }
                let mut text = lines.join(if crlf { "\r\n" } else { "\n" });
                if final_eol {
                    text.push_str(if crlf { "\r\n" } else { "\n" });
                }
                TraceCase { text: text.into_bytes(), flit_bytes, nodes, expect, records }
            },
        )
}

/// The row and column a trace problem names, if any; fails when it does not name the file.
fn trace_location(problem: &str, path: &Path) -> Result<Option<(usize, usize)>, TestCaseError> {
    let prefix = format!("trace {}", path.display());
    let Some(rest) = problem.strip_prefix(&prefix) else {
        return Err(TestCaseError::fail(format!("a problem not naming the file: {problem}")));
    };
    let Some(rest) = rest.strip_prefix(", row ") else { return Ok(None) };
    let parsed = rest.split_once(", column ").and_then(|(row, rest)| {
        let column = rest.split_once(' ')?.0;
        Some((row.parse().ok()?, column.parse().ok()?))
    });
    match parsed {
        Some(at) => Ok(Some(at)),
        None => Err(TestCaseError::fail(format!("a malformed location: {problem}"))),
    }
}

/// Reads the trace at `path` record by record and scans it, asserting the reader's contract;
/// the records read and the problems found.
fn read_trace(
    path: &Path,
    rows: usize,
    flit_bytes: Option<u32>,
    nodes: Option<u32>,
) -> Result<(Vec<TraceRecord>, Vec<String>), TestCaseError> {
    let mut records: Vec<TraceRecord> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    let located = |problem: &str| -> Result<Option<(usize, usize)>, TestCaseError> {
        let at = trace_location(problem, path)?;
        if let Some((row, column)) = at {
            prop_assert!((1..=rows).contains(&row), "row {row} of {rows}: {problem}");
            prop_assert!((1..=5).contains(&column), "column {column}: {problem}");
        }
        Ok(at)
    };
    match no_panic("trace::open", || trace::open(path, flit_bytes, nodes))? {
        Err(error) => {
            located(&error.0)?;
            problems.push(error.0);
        }
        Ok(mut reader) => {
            let mut last_row = 0;
            while let Some(item) = no_panic("the trace reader", || reader.next())? {
                match item {
                    Ok(record) => {
                        if let Some(previous) = records.last() {
                            prop_assert!(previous.cycle <= record.cycle, "time went back");
                        }
                        for node in [record.source, record.destination] {
                            prop_assert!(nodes.is_none_or(|n| node < n), "node {node}");
                        }
                        prop_assert!((1..=bounds::MAX_COUNT).contains(&record.length));
                        records.push(record);
                    }
                    Err(error) => {
                        match located(&error.0)? {
                            Some((row, _)) => {
                                prop_assert!(row > last_row, "rows out of order: {}", error.0);
                                last_row = row;
                            }
                            None => prop_assert!(reader.next().is_none(), "read past {}", error.0),
                        }
                        problems.push(error.0);
                    }
                }
            }
        }
    }
    let scanned = no_panic("trace::scan", || trace::scan(path, flit_bytes, nodes))?;
    let reported: Vec<&str> = scanned.problems.iter().map(|e| e.0.as_str()).collect();
    if records.is_empty() && problems.is_empty() {
        prop_assert!(
            reported.len() == 1 && reported[0].ends_with("the trace holds no messages"),
            "{reported:?}"
        );
        problems.push(reported[0].to_string());
    } else {
        let first: Vec<&str> =
            problems.iter().take(trace::MAX_REPORTED).map(String::as_str).collect();
        prop_assert_eq!(reported, first);
    }
    let summary = TraceSummary {
        messages: records.len() as u64,
        flits: records.iter().map(|r| u64::from(r.length)).sum(),
        last_cycle: records.last().map_or(0, |r| r.cycle),
        max_node: records.iter().map(|r| r.source.max(r.destination)).max().unwrap_or(0),
    };
    prop_assert_eq!(scanned.summary, summary);
    Ok((records, problems))
}

/// Checks what reading a document gave against what it must do.
fn as_expected<T: std::fmt::Debug + PartialEq>(
    read: &T,
    want: &T,
    problems: &[(String, Option<(usize, usize)>)],
    expect: &Expect,
    document: &str,
) -> Result<(), TestCaseError> {
    match expect {
        Expect::Accept => {
            prop_assert!(problems.is_empty(), "refused {document}:\n{problems:#?}");
            prop_assert_eq!(read, want, "{}", document);
        }
        Expect::Refuse { words, line, column } => {
            let found = problems.iter().any(|(problem, at)| {
                problem.contains(words.as_str())
                    && line.is_none_or(|line| at.is_some_and(|at| at.0 == line))
                    && column.is_none_or(|column| at.is_some_and(|at| at.1 == column))
            });
            prop_assert!(
                found,
                "wanted {words:?} at {line:?}:{column:?} in\n{document}\nfound {problems:#?}"
            );
        }
        Expect::Either => {}
    }
    Ok(())
}

#[test]
fn the_csv_trace_reader_locates_every_problem_and_reads_only_what_the_format_allows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.csv");
    let accepted = std::cell::Cell::new(0u32);
    runner_with(512)
        .run(&spoilt_trace(), |case| {
            // A new file each time: rewriting one costs a flush on some file systems.
            let _ = std::fs::remove_file(&path);
            std::fs::write(&path, &case.text).expect("write the trace");
            let rows = case.text.iter().filter(|&&b| b == b'\n').count() + 1;
            let (records, problems) = read_trace(&path, rows, case.flit_bytes, case.nodes)?;
            if problems.is_empty() {
                accepted.set(accepted.get() + 1);
            }
            let located: Vec<_> = problems
                .into_iter()
                .map(|p| {
                    let at = trace_location(&p, &path).ok().flatten();
                    (p, at)
                })
                .collect();
            let text = String::from_utf8_lossy(&case.text);
            as_expected(&records, &case.records, &located, &case.expect, &text)
        })
        .unwrap();
    assert!(accepted.get() >= 512 / 10, "only {} traces accepted", accepted.get());
}

/// A column of a Parquet trace in one of the types a trace may use (or a string, which it
/// may not), with one cell spoilt (`None`: all cells as given).
fn parquet_column(
    values: &[u64],
    kind: u8,
    spoil: Option<(usize, u8)>,
) -> (Arc<dyn arrow_array::Array>, Option<Expect>) {
    use arrow_array::*;
    let n = values.len();
    let spoilt = |i: usize| spoil.filter(|(row, _)| *row == i).map(|(_, how)| how);
    // A signed or floating cell spoilt: 0 null, 1 negative, 2 a fraction, 3 NaN or infinite.
    let signed = |i: usize| -> Option<i64> {
        match spoilt(i) {
            Some(0) => None,
            Some(_) => Some(-1 - values[i] as i64),
            None => Some(values[i] as i64),
        }
    };
    let real = |i: usize| -> Option<f64> {
        match spoilt(i) {
            Some(0) => None,
            Some(1) => Some(-1.0 - values[i] as f64),
            Some(2) => Some(values[i] as f64 + 0.5),
            Some(_) => Some([f64::NAN, f64::INFINITY, f64::NEG_INFINITY][i % 3]),
            None => Some(values[i] as f64),
        }
    };
    let expect = |what: &str| spoil.map(|(row, _)| refuse_at(what, row + 1, None));
    match kind {
        0 => (
            Arc::new((0..n).map(signed).map(|v| v.map(|v| v as i8)).collect::<Int8Array>()),
            expect(""),
        ),
        1 => (
            Arc::new((0..n).map(signed).map(|v| v.map(|v| v as i16)).collect::<Int16Array>()),
            expect(""),
        ),
        2 => (
            Arc::new((0..n).map(signed).map(|v| v.map(|v| v as i32)).collect::<Int32Array>()),
            expect(""),
        ),
        3 => (Arc::new((0..n).map(signed).collect::<Int64Array>()), expect("")),
        4 => (Arc::new(values.iter().map(|&v| v as u8).collect::<UInt8Array>()), None),
        5 => (Arc::new(values.iter().map(|&v| v as u16).collect::<UInt16Array>()), None),
        6 => (Arc::new(values.iter().map(|&v| v as u32).collect::<UInt32Array>()), None),
        7 => (Arc::new(UInt64Array::from(values.to_vec())), None),
        8 => (
            Arc::new((0..n).map(real).map(|v| v.map(|v| v as f32)).collect::<Float32Array>()),
            expect(""),
        ),
        9 => (Arc::new((0..n).map(real).collect::<Float64Array>()), expect("")),
        _ => {
            let text: StringArray = values.iter().map(|v| Some(v.to_string())).collect();
            (Arc::new(text), Some(refuse_at("a trace's columns hold whole numbers", 1, None)))
        }
    }
}

#[test]
fn the_parquet_trace_reader_refuses_every_spoilt_cell_at_its_row_and_column() {
    use arrow_schema::{Field, Schema};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.parquet");
    let strategy = (
        proptest::collection::vec((0..3u64, 0..16u64, 0..16u64, 1..100u64), 1..12),
        proptest::collection::vec(0..11u8, 4),
        proptest::option::weighted(0.7, (0..4usize, any::<prop::sample::Index>(), 0..4u8)),
        prop_oneof![Just("length"), Just("LENGTH_FLITS"), Just(" length "), Just("size")],
    );
    runner_with(96)
        .run(&strategy, |(steps, kinds, spoil, length_name)| {
            let mut cycle = 0;
            let rows: Vec<[u64; 4]> = steps
                .iter()
                .map(|&(step, s, d, l)| {
                    cycle += step;
                    [cycle, s, d, l]
                })
                .collect();
            let spoil = spoil.map(|(column, row, how)| (column, row.index(rows.len()), how));
            let mut fields = Vec::new();
            let mut columns = Vec::new();
            let mut expects = Vec::new();
            let names = ["cycle", "source", "destination", length_name];
            for (c, name) in names.iter().enumerate() {
                let values: Vec<u64> = rows.iter().map(|r| r[c]).collect();
                let spoilt =
                    spoil.filter(|(column, ..)| *column == c).map(|(_, row, how)| (row, how));
                let (array, expect) = parquet_column(&values, kinds[c], spoilt);
                fields.push(Field::new(*name, array.data_type().clone(), true));
                columns.push(array);
                if let Some(Expect::Refuse { words, line, .. }) = expect {
                    expects.push(Expect::Refuse { words, line, column: Some(c + 1) });
                }
            }
            let schema = Arc::new(Schema::new(fields));
            let batch = arrow_array::RecordBatch::try_new(schema.clone(), columns).expect("batch");
            let file = std::fs::File::create(&path).expect("create");
            let properties = parquet::file::properties::WriterProperties::builder()
                .set_max_row_group_row_count(Some(5))
                .build();
            let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, Some(properties))
                .expect("writer");
            writer.write(&batch).expect("write");
            writer.close().expect("close");

            let (records, problems) = read_trace(&path, rows.len(), None, Some(16))?;
            let located: Vec<_> = problems
                .into_iter()
                .map(|p| {
                    let at = trace_location(&p, &path).ok().flatten();
                    (p, at)
                })
                .collect();
            // A wrong column type is refused before any row; a spoilt cell at its row.
            let header = expects.iter().find(
                |e| matches!(e, Expect::Refuse { line: Some(1), words, .. } if !words.is_empty()),
            );
            let expect = if length_name == "size" {
                refuse_at("unknown length unit", 1, Some(4))
            } else if let Some(header) = header {
                header.clone()
            } else if let Some(cell) = expects.first() {
                cell.clone()
            } else {
                Expect::Accept
            };
            let want: Vec<TraceRecord> = rows
                .iter()
                .map(|r| TraceRecord {
                    cycle: r[0],
                    source: r[1] as u32,
                    destination: r[2] as u32,
                    length: r[3] as u32,
                })
                .collect();
            as_expected(
                &records,
                &want,
                &located,
                &expect,
                &format!("{rows:?} as {kinds:?}, {spoil:?}"),
            )
        })
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Graph files.

/// A valid graph: routers (name, terminals), links (router indices), the root if named, and
/// the order of its statements (`true`: the next router, `false`: the next link).
#[derive(Clone, Debug)]
struct GraphDoc {
    routers: Vec<(String, u32)>,
    links: Vec<(u32, u32)>,
    root: Option<u32>,
    order: Vec<bool>,
}

fn valid_graph() -> impl Strategy<Value = GraphDoc> {
    let prefixes = ["r", "sw-", "core.", "edge:", "R_", "x9"];
    (1..=10usize, 0..prefixes.len()).prop_flat_map(move |(n, prefix)| {
        let parents: Vec<_> = (1..n).map(|i| (0..i as u32, any::<bool>())).collect();
        (
            parents,
            proptest::collection::vec((0..n as u32, 0..n as u32), 0..8),
            proptest::collection::vec(0..4u32, n),
            proptest::option::of(0..n as u32),
            proptest::collection::vec(any::<bool>(), 2 * n + 8),
        )
            .prop_map(move |(parents, extra, mut terminals, root, shuffle)| {
                // A spanning tree (each router linked to an earlier one), then other links.
                let mut links: Vec<(u32, u32)> = parents
                    .iter()
                    .enumerate()
                    .map(|(i, &(p, flip))| if flip { (p, i as u32 + 1) } else { (i as u32 + 1, p) })
                    .collect();
                let mut pairs: HashSet<(u32, u32)> =
                    links.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
                for (a, b) in extra {
                    if a != b && pairs.insert((a.min(b), a.max(b))) {
                        links.push((a, b));
                    }
                }
                let mut degree = vec![0; n];
                for &(a, b) in &links {
                    degree[a as usize] += 1;
                    degree[b as usize] += 1;
                }
                for (t, d) in terminals.iter_mut().zip(&degree) {
                    if *d < 2 && *t == 0 {
                        *t = 1;
                    }
                }
                if terminals.iter().sum::<u32>() < 2 {
                    terminals[0] = 2;
                }
                let routers = terminals
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| (format!("{}{i}", prefixes[prefix]), t))
                    .collect();
                // Interleave the router and link statements (each kind in its own order).
                let (mut r, mut l) = (n, links.len());
                let mut order = Vec::new();
                for &router in shuffle.iter().chain(std::iter::repeat(&true)) {
                    if r == 0 && l == 0 {
                        break;
                    }
                    let router = (router && r > 0) || l == 0;
                    order.push(router);
                    if router { r -= 1 } else { l -= 1 }
                }
                GraphDoc { routers, links, root, order }
            })
    })
}

impl GraphDoc {
    /// The file's lines, and the line (from 1) of each router's statement.
    fn lines(&self, style: usize) -> (Vec<String>, Vec<usize>) {
        let gap = ["", " ", "\t", "  \t "][style % 4];
        let comment = ["", "  # ünïcode ☃", "# link a b", "\t#"][style / 4 % 4];
        let mut lines = vec!["# a graph written by the property test".to_string(), String::new()];
        if let Some(root) = self.root {
            lines.push(format!("root {}", self.routers[root as usize].0));
        }
        let mut at = Vec::new();
        let (mut routers, mut links) = (self.routers.iter(), self.links.iter());
        for &router in &self.order {
            if router {
                let Some((name, terminals)) = routers.next() else { continue };
                lines.push(format!("{gap}router {name}{gap} terminals {terminals}{comment}"));
                at.push(lines.len());
            } else {
                let Some(&(a, b)) = links.next() else { continue };
                let (a, b) = (&self.routers[a as usize].0, &self.routers[b as usize].0);
                lines.push(format!("link\t{a} {gap}{b}{comment}"));
            }
        }
        (lines, at)
    }
}

/// A graph file and what reading it must do.
fn spoilt_graph() -> impl Strategy<Value = (String, Expect, GraphDoc)> {
    (
        valid_graph(),
        0..18u8,
        any::<prop::sample::Index>(),
        0..16usize,
        any::<usize>(),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(|(doc, spoil, pick, style, at, (crlf, final_eol))| {
            let (mut lines, routers_at) = doc.lines(style);
            let r = pick.index(doc.routers.len());
            let name = doc.routers[r].0.clone();
            let next = lines.len() + 1;
            let expect = match spoil {
                0 => {
                    lines.push(format!("router {name} terminals 1"));
                    refuse_at("declared twice", next, Some(8))
                }
                1 => {
                    lines.push(format!("link {name} zz_unknown"));
                    refuse_at("unknown router `zz_unknown`", next, Some(7 + name.len()))
                }
                2 => {
                    lines.push(format!("link {name} {name}"));
                    refuse_at("self-loop", next, None)
                }
                3 if !doc.links.is_empty() => {
                    let (a, b) = doc.links[pick.index(doc.links.len())];
                    let (a, b) = (&doc.routers[a as usize].0, &doc.routers[b as usize].0);
                    lines.push(format!("link {b} {a}"));
                    refuse_at("duplicate link", next, Some(6))
                }
                4 | 5 => {
                    let bad =
                        pick.get(&["1025", "-1", "x", "1.5", "4294967296", "01x", "½", "1e3"]);
                    lines[routers_at[r] - 1] = format!("router {name} terminals {bad}");
                    refuse_at("whole number of terminals", routers_at[r], Some(19 + name.len()))
                }
                6 => {
                    lines[routers_at[r] - 1] = format!("router {name}");
                    refuse_at("`terminals <n>`", routers_at[r], Some(8 + name.len()))
                }
                7 => {
                    let word = pick.get(&["ruoter", "Router", "lnk", "links", "rot", "node"]);
                    lines.push(format!("{word} {name} terminals 1"));
                    refuse_at(
                        "expected `router`, `link`, `root`, `route` or `escape`",
                        next,
                        Some(1),
                    )
                }
                8 => {
                    lines.push("router lonely terminals 1".into());
                    refuse_at("disconnected", next, Some(1))
                }
                9 => {
                    lines.push(format!("root {name}"));
                    if doc.root.is_some() {
                        refuse_at("second `root`", next, Some(1))
                    } else {
                        lines.push(format!("root {name}"));
                        refuse_at("second `root`", next + 1, Some(1))
                    }
                }
                10 => {
                    let bad =
                        pick.get(&["rö", "a/b", "a,b", &"n".repeat(65), "\u{200b}"]).to_string();
                    lines.push(format!("router {bad} terminals 1"));
                    refuse_at("is not a router name", next, Some(8))
                }
                11 => {
                    lines.push(format!("link {name} zz_unknown extra"));
                    refuse_at("unexpected `extra`", next, None)
                }
                12 => {
                    lines.push("router t_0 terminals 0".into());
                    lines.push(format!("link t_0 {name}"));
                    refuse_at("transit router", next, Some(1))
                }
                13 => {
                    lines.push("root zz_unknown".into());
                    if doc.root.is_none() {
                        refuse_at("unknown router", next, Some(6))
                    } else {
                        refuse("root")
                    }
                }
                14 => {
                    let text = lines.join("\n");
                    return (truncated(&text, at), Expect::Either, doc);
                }
                15 => {
                    let text = lines.join(if crlf { "\r\n" } else { "\n" });
                    let stray = STRAY[at % STRAY.len()];
                    return (inserted(&text, at / STRAY.len(), stray), Expect::Either, doc);
                }
                _ => Expect::Accept,
            };
            let mut text = lines.join(if crlf { "\r\n" } else { "\n" });
            if final_eol {
                text.push_str(if crlf { "\r\n" } else { "\n" });
            }
            (text, expect, doc)
        })
}

/// Asserts the rules of `docs/graph.md` on a graph the reader accepted from `text`.
fn graph_keeps_the_rules(graph: &Graph, text: &str) -> Result<(), TestCaseError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let routers = &graph.routers;
    prop_assert!((1..=graph::MAX_ROUTERS).contains(&routers.len()));
    let mut names = HashSet::new();
    for router in routers {
        let name = router.name.as_str();
        prop_assert!(
            !name.is_empty()
                && name.chars().count() <= graph::MAX_NAME_CHARS
                && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c)),
            "the name {name:?}"
        );
        prop_assert!(names.insert(name), "{name} twice");
        prop_assert!(router.terminals <= graph::MAX_TERMINALS_PER_ROUTER);
        let line = lines.get(router.line.wrapping_sub(1)).copied().unwrap_or("");
        let words: Vec<&str> = line.split('#').next().unwrap_or("").split_whitespace().collect();
        prop_assert_eq!(words.get(..2), Some(&["router", name][..]), "line {}", router.line);
    }
    prop_assert!((2..=graph::MAX_TERMINALS).contains(&graph.terminals()));
    let mut pairs = HashSet::new();
    for &(a, b) in &graph.links {
        prop_assert!((a as usize) < routers.len() && (b as usize) < routers.len());
        prop_assert!(a != b, "a self-loop");
        prop_assert!(pairs.insert((a.min(b), a.max(b))), "link {a} {b} twice");
    }
    for (router, &degree) in routers.iter().zip(&graph.degrees()) {
        prop_assert!(degree as usize <= graph::MAX_DEGREE);
        prop_assert!(router.terminals > 0 || degree >= 2, "{} a dead end", router.name);
    }
    prop_assert!((graph.root as usize) < routers.len());
    let mut reached = vec![false; routers.len()];
    reached[0] = true;
    for _ in 0..routers.len() {
        for &(a, b) in &graph.links {
            let reach = reached[a as usize] || reached[b as usize];
            reached[a as usize] = reach;
            reached[b as usize] = reach;
        }
    }
    prop_assert!(reached.iter().all(|&r| r), "accepted a disconnected graph");
    Ok(())
}

/// Asserts a graph refusal's problems: 1 to 20, with words, each inside the file.
fn graph_problems_are_located(errors: &[GraphError], text: &str) -> Result<(), TestCaseError> {
    let lines: Vec<&str> = text.split('\n').collect();
    prop_assert!((1..=20).contains(&errors.len()), "{} problems", errors.len());
    for error in errors {
        prop_assert!(error.message.len() >= 8, "{error:?}");
        let Some(line) = lines.get(error.line.wrapping_sub(1)) else {
            return Err(TestCaseError::fail(format!("{error:?} beyond {} lines", lines.len())));
        };
        let width = line.strip_suffix('\r').unwrap_or(line).chars().count();
        prop_assert!((1..=width.max(1) + 1).contains(&error.column), "{error:?} in {line:?}");
    }
    Ok(())
}

#[test]
fn the_graph_reader_locates_every_problem_and_accepts_only_what_the_format_allows() {
    let accepted = std::cell::Cell::new(0u32);
    runner_with(768)
        .run(&spoilt_graph(), |(text, expect, doc)| {
            let parsed = no_panic(&text, || graph::parse("g.txt", &text, String::new()))?;
            let (read, problems) = match &parsed {
                Ok(graph) => {
                    graph_keeps_the_rules(graph, &text)?;
                    accepted.set(accepted.get() + 1);
                    let routers =
                        graph.routers.iter().map(|r| (r.name.clone(), r.terminals)).collect();
                    ((routers, graph.links.clone(), graph.root), Vec::new())
                }
                Err(errors) => {
                    graph_problems_are_located(errors, &text)?;
                    let problems = errors
                        .iter()
                        .map(|e| (e.message.clone(), Some((e.line, e.column))))
                        .collect();
                    ((Vec::new(), Vec::new(), 0), problems)
                }
            };
            let want = (doc.routers.clone(), doc.links.clone(), doc.root.unwrap_or(0));
            as_expected(&read, &want, &problems, &expect, &text)
        })
        .unwrap();
    assert!(accepted.get() >= 768 / 12, "only {} graphs accepted", accepted.get());
}
