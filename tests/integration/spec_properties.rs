//! Property tests of the spec loader and validator on generated specs: never a panic, and every
//! refusal points at a place in the file.
//!
//! Two generators feed them. One builds specs from the spec's own vocabulary (every key, near
//! misses, and values of every shape: scalars at the edges of their types, lists, ranges, nested
//! mappings). The other mutates the committed example specs character by character and line by
//! line, which reaches the YAML parser's corners. The library-level properties run hundreds of
//! cases in a fraction of a second; the command-line property runs fewer, since each case starts
//! the binary, and checks the exit code (0 or 2) and the `file:line:column` on stderr.
//!
//! The coverage-guided counterpart is the `cargo fuzz` target in `fuzz/` (see `docs/fuzzing.md`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use runner::spec::{self, SpecError, SpecSource};

use crate::common::Scratch;

/// The keys of the spec format that are not scenario fields, plus near misses that must get a
/// "did you mean"; [`keys`] adds the scenario fields from the validator's own list.
const OTHER_KEYS: &[&str] = &[
    "did you mean",
    "name",
    "title",
    "description",
    "seed",
    "scenario",
    "load",
    "methods",
    "report",
    "kind",
    "traffic",
    "pattern",
    "zip",
    "rates",
    "fraction_of_saturation",
    "model",
    "simulation",
    "cycles",
    "warmup_cycles",
    "replications",
    "target_precision",
    "max_cycles",
    "deadlock_cycles",
    "figures",
    "tables",
    "x",
    "y",
    "panels",
    "lines",
    "log_y",
    "log_x",
    "xlim",
    "ylim",
    "shared_y",
    "y_from_zero",
    "width",
    "max_panels_per_page",
    "x_label",
    "y_label",
    "legend_title",
    "select",
    "template_dir",
    "from",
    "to",
    "points",
    "step",
    "virtual_chanels",
    "radixx",
    "Seed",
    "",
    "<<",
];

/// Every key the spec format knows, and the near misses.
fn keys() -> Vec<&'static str> {
    runner::spec::validate::FIELDS.iter().chain(OTHER_KEYS).copied().collect()
}

/// Scalars at the edges of what each field accepts, and the words the fields take.
const SCALARS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "4",
    "6",
    "8",
    "16",
    "32",
    "64",
    "255",
    "256",
    "1024",
    "0.5",
    "0.01",
    "0.9",
    "1.5",
    "1e308",
    "-0.0",
    ".nan",
    ".inf",
    "-.inf",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999",
    "0x10",
    "1_000",
    "abc",
    "torus",
    "mesh",
    "hypercube",
    "fat_tree",
    "wormhole",
    "scouting",
    "circuit",
    "duato",
    "nbc",
    "adaptive",
    "dimension_order",
    "up_down",
    "single",
    "unlimited",
    "uniform",
    "broadcast_mix",
    "fat-tree",
    "nbc_torus",
    "scouting_torus",
    "circuit_torus_faults",
    "broadcast_hypercube",
    "rate",
    "latency",
    "message_length",
    "radix",
    "model_vs_simulation",
    "results",
    "column",
    "page",
    "flit_rate",
    "[null, 1]",
    "[2, 1]",
    "null",
    "~",
    "true",
    "false",
    "''",
    "\"x y\"",
    "[]",
    "{}",
    "ü",
    "a\u{0}b",
    "'../../etc'",
];

/// Pieces inserted by the mutating generator: YAML syntax, anchors, tags, numbers, keys.
const TOKENS: &[&str] = &[
    ":",
    ": ",
    "- ",
    "-",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\t",
    "  ",
    "\n",
    "\n  ",
    "\n- ",
    "#",
    "'",
    "\"",
    "&a ",
    "*a",
    "<<: *a",
    "!!str ",
    "!!int ",
    "!!float ",
    "? ",
    "|",
    ">",
    "%YAML 1.2\n",
    "---\n",
    "...\n",
    "0",
    "-1",
    "1e999",
    "4294967296",
    ".nan",
    "~",
    "é",
    "\u{feff}",
    "\r\n",
    "\r",
];

/// A YAML value in flow style, `depth` levels of nesting at most.
fn value(depth: u32) -> BoxedStrategy<String> {
    let scalar = prop::sample::select(SCALARS).prop_map(str::to_string);
    if depth == 0 {
        return scalar.boxed();
    }
    let range = (
        prop::sample::select(SCALARS),
        prop::sample::select(SCALARS),
        prop::sample::select(&["points", "step", "count"][..]),
        prop::sample::select(SCALARS),
    )
        .prop_map(|(from, to, how, n)| format!("{{from: {from}, to: {to}, {how}: {n}}}"));
    let list = prop::collection::vec(value(depth - 1), 0..4)
        .prop_map(|items| format!("[{}]", items.join(", ")));
    let mapping = prop::collection::vec((prop::sample::select(keys()), value(depth - 1)), 0..4)
        .prop_map(|pairs| {
            let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("{{{}}}", body.join(", "))
        });
    prop_oneof![4 => scalar, 2 => list, 2 => range, 1 => mapping].boxed()
}

/// A coherent system: topology, switching, routing, virtual channels, faults and methods that
/// go together, so that generated specs also reach the accepting path of the validator.
struct Family {
    topology: &'static str,
    switching: &'static str,
    routing: &'static str,
    virtual_channels: &'static str,
    fault_rate: &'static str,
    methods: &'static str,
}

const FAMILIES: &[Family] = &[
    Family {
        topology: "{kind: torus, radix: [8, 16], dimensions: 2}",
        switching: "{kind: wormhole}",
        routing: "nbc",
        virtual_channels: "10",
        fault_rate: "0",
        methods: "{model: {name: nbc_torus}, simulation: {cycles: 2000, warmup_cycles: 100}}",
    },
    Family {
        topology: "{kind: fat_tree, processors: [64, 256]}",
        switching: "{kind: wormhole}",
        routing: "up_down",
        virtual_channels: "1",
        fault_rate: "0",
        methods: "{model: {name: fat_tree}}",
    },
    Family {
        topology: "{kind: hypercube, dimensions: [6, 7]}",
        switching: "{kind: wormhole}",
        routing: "duato",
        virtual_channels: "[2, 4]",
        fault_rate: "0",
        methods: "{model: {name: broadcast_hypercube}, simulation: {cycles: 1000, replications: 2}}",
    },
    Family {
        topology: "{kind: torus, radix: 8, dimensions: 2}",
        switching: "{kind: scouting, scouting_distance: [0, 3]}",
        routing: "adaptive",
        virtual_channels: "{from: 1, to: 6, step: 5}",
        fault_rate: "0",
        methods: "{model: {name: scouting_torus}}",
    },
    Family {
        topology: "{kind: torus, radix: 8, dimensions: 2}",
        switching: "{kind: circuit}",
        routing: "adaptive",
        virtual_channels: "[1, 10]",
        fault_rate: "[0, 0.1, 0.2]",
        methods: "{model: {name: circuit_torus_faults}}",
    },
    Family {
        topology: "{kind: mesh, radix: 4, dimensions: 2}",
        switching: "{kind: wormhole}",
        routing: "dimension_order",
        virtual_channels: "2",
        fault_rate: "0",
        methods: "{simulation: {cycles: 2000, warmup_cycles: 100, replications: 2}}",
    },
];

/// `key: plausible` most of the time, `key: anything` or nothing now and then.
fn field(key: &'static str, plausible: String) -> BoxedStrategy<Option<String>> {
    prop_oneof![
        14 => Just(Some(format!("{key}: {plausible}"))),
        1 => value(2).prop_map(move |v| Some(format!("{key}: {v}"))),
        1 => Just(None),
    ]
    .boxed()
}

/// A spec built from the format's vocabulary: block style at the top and in `scenario:`, flow
/// style below, so that problems land on different lines and columns.
fn vocabulary_spec() -> impl Strategy<Value = String> {
    (0..FAMILIES.len())
        .prop_flat_map(|i| {
            let family = &FAMILIES[i];
            let scenario = (
                field("topology", family.topology.into()),
                field("switching", family.switching.into()),
                field("routing", family.routing.into()),
                field("virtual_channels", family.virtual_channels.into()),
                field("message_length", "[32, 64]".into()),
                field("fault_rate", family.fault_rate.into()),
                field("buffer_depth", "4".into()),
                prop::option::weighted(0.15, (prop::sample::select(keys()), value(1))),
            );
            let top = (
                field("name", "demo".into()),
                field("seed", "2026".into()),
                field("load", "{fraction_of_saturation: {from: 0.1, to: 0.9, points: 3}}".into()),
                field("methods", family.methods.into()),
                field(
                    "report",
                    "{figures: [{x: rate, y: latency, lines: [message_length]}]}".into(),
                ),
                prop::option::weighted(0.15, (prop::sample::select(keys()), value(1))),
            );
            (scenario, top)
        })
        .prop_map(|(s, (name, seed, load, methods, report, extra))| {
            let mut text = String::new();
            for line in [name, seed].into_iter().flatten() {
                text.push_str(&line);
                text.push('\n');
            }
            text.push_str("scenario:\n");
            let (topology, switching, routing, vcs, length, faults, depth, inner) = s;
            let inner = inner.map(|(key, value)| format!("{key}: {value}"));
            for line in [topology, switching, routing, vcs, length, faults, depth, inner]
                .into_iter()
                .flatten()
            {
                text.push_str("  ");
                text.push_str(&line);
                text.push('\n');
            }
            let extra = extra.map(|(key, value)| format!("{key}: {value}"));
            for line in [load, methods, report, extra].into_iter().flatten() {
                text.push_str(&line);
                text.push('\n');
            }
            text
        })
}

/// One edit of a spec's text.
#[derive(Clone, Debug)]
enum Mutation {
    Insert(usize, &'static str),
    DeleteChars(usize, usize),
    DuplicateLine(usize),
    DeleteLine(usize),
    SwapLines(usize, usize),
    Indent(usize, usize),
    ReplaceWord(usize, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        3 => (at, prop::sample::select(TOKENS)).prop_map(|(i, t)| Mutation::Insert(i, t)),
        2 => (at, 1usize..12).prop_map(|(i, n)| Mutation::DeleteChars(i, n)),
        1 => at.prop_map(Mutation::DuplicateLine),
        1 => at.prop_map(Mutation::DeleteLine),
        1 => (at, at).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        1 => (at, 0usize..6).prop_map(|(i, n)| Mutation::Indent(i, n)),
        3 => (at, prop::sample::select(SCALARS).prop_union(prop::sample::select(keys())))
            .prop_map(|(i, w)| Mutation::ReplaceWord(i, w)),
    ]
}

fn apply(text: &str, mutation: &Mutation) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let line = |i: usize| i % lines.len().max(1);
    match *mutation {
        Mutation::Insert(i, token) => {
            let at = i % (chars.len() + 1);
            let mut out: String = chars[..at].iter().collect();
            out.push_str(token);
            out.extend(&chars[at..]);
            return out;
        }
        Mutation::DeleteChars(i, n) => {
            let at = i % (chars.len() + 1);
            let end = (at + n).min(chars.len());
            return chars[..at].iter().chain(&chars[end..]).collect();
        }
        _ if lines.is_empty() => return text.to_string(),
        Mutation::DuplicateLine(i) => {
            let i = line(i);
            let copy = lines[i].clone();
            lines.insert(i, copy);
        }
        Mutation::DeleteLine(i) => {
            let i = line(i);
            lines.remove(i);
        }
        Mutation::SwapLines(a, b) => {
            let (a, b) = (line(a), line(b));
            lines.swap(a, b);
        }
        Mutation::Indent(i, n) => {
            let i = line(i);
            let trimmed = lines[i].trim_start().to_string();
            lines[i] = format!("{}{trimmed}", " ".repeat(n));
        }
        Mutation::ReplaceWord(i, word) => {
            let i = line(i);
            let current = lines[i].clone();
            let words: Vec<&str> = current.split([' ', ':', ',', '[', ']', '{', '}']).collect();
            let candidates: Vec<&&str> = words.iter().filter(|w| !w.is_empty()).collect();
            if let Some(target) = candidates.get(i % candidates.len().max(1)) {
                lines[i] = current.replacen(**target, word, 1);
            }
        }
    }
    lines.join("\n")
}

/// The committed example specs, the seeds of the mutating generator.
fn example_specs() -> Vec<String> {
    let mut specs: Vec<(PathBuf, String)> = std::fs::read_dir("experiments")
        .expect("experiments/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read example spec");
            (p, text)
        })
        .collect();
    specs.sort();
    assert!(!specs.is_empty());
    specs.into_iter().map(|(_, text)| text).collect()
}

fn mutated_spec() -> impl Strategy<Value = String> {
    let examples = example_specs();
    (0..examples.len(), prop::collection::vec(mutation(), 1..5)).prop_map(move |(i, edits)| {
        edits.iter().fold(examples[i].clone(), |text, edit| apply(&text, edit))
    })
}

/// Parses and validates `text` as the spec `path`, turning a panic into a test failure.
fn parse(text: &str) -> Result<Result<spec::Experiment, SpecError>, TestCaseError> {
    let source = SpecSource {
        path: PathBuf::from("generated.yaml"),
        text: text.to_string(),
        sha256: String::new(),
    };
    catch_unwind(AssertUnwindSafe(|| spec::parse(&source)))
        .map_err(|_| TestCaseError::fail(format!("the loader panicked on:\n{text}")))
}

/// The loader's contract on any text: no panic; a refusal carries at least one problem, and
/// every problem that is about a place has a line and column inside the file.
fn loader_contract(text: &str) -> Result<(), TestCaseError> {
    let Err(error) = parse(text)? else { return Ok(()) };
    prop_assert!(!error.diagnostics.is_empty(), "a refusal without a problem for:\n{text}");
    // YAML breaks lines at LF, CRLF and a lone CR alike.
    let lines = text.replace("\r\n", "\n").matches(['\n', '\r']).count() + 2;
    for diagnostic in &error.diagnostics {
        match diagnostic.location {
            Some(location) => prop_assert!(
                location.line() >= 1 && location.line() <= lines as u64 && location.column() >= 1,
                "{}:{} is outside the file ({lines} lines) for {:?} in:\n{text}",
                location.line(),
                location.column(),
                diagnostic.message
            ),
            None => prop_assert!(
                whole_file_problem(&diagnostic.message),
                "no location for {:?} in:\n{text}",
                diagnostic.message
            ),
        }
    }
    let rendered = error.to_string();
    // Our words, not the YAML library's internals.
    prop_assert!(
        !rendered.contains("DuplicateKeyPolicy") && !rendered.contains("Options"),
        "a library hint leaked into the message:\n{rendered}"
    );
    prop_assert!(
        rendered.starts_with("generated.yaml:"),
        "the message does not start with file:line:column:\n{rendered}"
    );
    Ok(())
}

/// Problems that concern the file as a whole and so have no single place.
fn whole_file_problem(message: &str) -> bool {
    message.contains("the spec is empty")
}

fn runner_with(cases: u32) -> TestRunner {
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

#[test]
fn the_loader_never_panics_and_locates_every_problem_in_vocabulary_specs() {
    runner_with(768).run(&vocabulary_spec(), |text| loader_contract(&text)).unwrap();
}

#[test]
fn the_loader_never_panics_and_locates_every_problem_in_mutated_examples() {
    runner_with(768).run(&mutated_spec(), |text| loader_contract(&text)).unwrap();
}

#[test]
fn vocabulary_specs_are_sometimes_valid() {
    // Guards the generator itself: a generator that only ever produces refusals would leave the
    // accepting path of the validator untested.
    let mut runner = runner_with(1);
    let mut valid = 0;
    for _ in 0..400 {
        let text = vocabulary_spec().new_tree(&mut runner).expect("generate").current();
        if matches!(parse(&text), Ok(Ok(_))) {
            valid += 1;
        }
    }
    assert!(valid >= 20, "only {valid} of 400 generated specs were valid");
}

#[test]
fn validate_exits_0_or_2_with_a_location_on_generated_specs() {
    let scratch = Scratch::new();
    let strategy = prop_oneof![vocabulary_spec(), mutated_spec()];
    runner_with(40)
        .run(&strategy, |text| {
            let path = scratch.spec("generated.yaml", &text);
            let output = scratch.run(&["validate", path_str(&path)?]);
            let code = output.status.code();
            let stderr = String::from_utf8_lossy(&output.stderr);
            prop_assert!(
                code == Some(0) || code == Some(2),
                "exit {code:?} for:\n{text}\nstderr:\n{stderr}"
            );
            if code == Some(2) {
                prop_assert!(
                    has_position(&stderr, "generated.yaml"),
                    "no generated.yaml:line:column on stderr:\n{stderr}\nfor:\n{text}"
                );
            }
            Ok(())
        })
        .unwrap();
}

fn path_str(path: &Path) -> Result<&str, TestCaseError> {
    path.to_str().ok_or_else(|| TestCaseError::fail("temporary path is not UTF-8"))
}

/// Whether `text` contains `NAME:LINE:COLUMN` with both numbers present.
fn has_position(text: &str, name: &str) -> bool {
    text.match_indices(&format!("{name}:")).any(|(at, m)| {
        let rest = &text[at + m.len()..];
        let mut parts = rest.splitn(3, ':');
        let line = parts.next().unwrap_or_default();
        let column: String =
            parts.next().unwrap_or_default().chars().take_while(char::is_ascii_digit).collect();
        !line.is_empty() && line.chars().all(|c| c.is_ascii_digit()) && !column.is_empty()
    })
}
