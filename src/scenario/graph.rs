//! The `graph` topology's network: routers, the terminals attached to each, and bidirectional
//! links, parsed from the text format of `docs/graph.md`. Plain data and a pure parser: the
//! spec layer reads the file (through `crate::files`) and hands its bytes here; the simulator
//! receives the parsed [`Graph`], never a path.
//!
//! ```text
//! # comments run from `#` to the end of the line
//! root r0                      # optional: the up*/down* root (default: the first router)
//! router r0 terminals 1        # a router and how many terminals (traffic endpoints) it has
//! router r1 terminals 0        # a transit router: no terminals
//! link r0 r1                   # a bidirectional link between two routers
//! ```
//!
//! A graph is identified by the blake3 hash of its file's bytes: equality, hashing and the
//! serialized form (which feeds the task ids) use the hash only, never the file's name, so two
//! copies of one file under different names are the same network and an edited file is another.

use std::collections::HashMap;
use std::sync::Arc;

pub mod routes;

pub use routes::{ClassChange, Route, RouteTable};

use serde::{Serialize, Serializer};

/// The most routers a graph may have (the simulator keeps router-by-router route tables).
pub const MAX_ROUTERS: usize = 1024;
/// The most terminals one router may have.
pub const MAX_TERMINALS_PER_ROUTER: u32 = 1024;
/// The most links one router may have.
pub const MAX_DEGREE: usize = 256;
/// The most terminals a graph may have in all.
pub const MAX_TERMINALS: u64 = 1 << 16;
/// The longest router name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The largest graph file read, in bytes (64 MiB: a routing table has a line per router,
/// destination and next hop, about 30 MB for 1,024 routers).
pub const MAX_FILE_BYTES: u64 = 1 << 26;

/// One router of a graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphRouter {
    /// The name the file gives it.
    pub name: String,
    /// Terminals (traffic endpoints) attached to it; 0 for a transit router.
    pub terminals: u32,
    /// The file line that declares it.
    pub line: usize,
}

/// A parsed network graph (see the module docs).
#[derive(Clone, Debug)]
pub struct Graph {
    /// The file as the spec names it: for display only (rows, labels, messages); not part of
    /// equality, hashing or the serialized form.
    pub file: String,
    /// blake3 of the file's bytes (hex): the graph's identity.
    pub blake3: String,
    /// The routers in the order the file declares them.
    pub routers: Vec<GraphRouter>,
    /// The links as pairs of router indices, in file order (each link once).
    pub links: Vec<(u32, u32)>,
    /// Each link's latency in cycles as the file gives it (`latency <cycles>`), in the order
    /// of `links`; `None`: the scenario's `channel_latency`.
    pub latencies: Vec<Option<u32>>,
    /// The up*/down* root (a router index): the file's `root`, else router 0.
    pub root: u32,
    /// The file's routing table (`route` and `escape` lines, checked), for `routing: table`.
    pub table: Option<RouteTable>,
}

impl PartialEq for Graph {
    fn eq(&self, other: &Graph) -> bool {
        self.blake3 == other.blake3
    }
}

impl Eq for Graph {}

impl std::hash::Hash for Graph {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.blake3.hash(state);
    }
}

impl Serialize for Graph {
    /// `{"blake3": "<hex>"}`: the content hash only, so task ids follow the file's content and
    /// not its name or place.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut s = serializer.serialize_struct("Graph", 1)?;
        s.serialize_field("blake3", &self.blake3)?;
        s.end()
    }
}

/// Serializes a shared graph as the graph itself (its content hash).
pub fn serialize_shared<S: Serializer>(
    graph: &Arc<Graph>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    graph.as_ref().serialize(serializer)
}

impl Graph {
    /// Terminals in all (the network's nodes).
    pub fn terminals(&self) -> u64 {
        self.routers.iter().map(|r| u64::from(r.terminals)).sum()
    }

    /// Links of each router (its degree).
    pub fn degrees(&self) -> Vec<u32> {
        let mut degree = vec![0u32; self.routers.len()];
        for &(a, b) in &self.links {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        degree
    }

    /// The largest router radix: terminals plus links.
    pub fn radix(&self) -> u32 {
        let degree = self.degrees();
        self.routers.iter().zip(&degree).map(|(r, d)| r.terminals + d).max().unwrap_or(0)
    }

    /// The file's name without its directories, for labels.
    pub fn file_name(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }
}

/// A problem in a graph file, at a 1-based line and column (characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphError {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

/// The statements a line may start with.
const STATEMENTS: [&str; 5] = ["router", "link", "root", "route", "escape"];

/// The most problems reported for one file.
const MAX_ERRORS: usize = 20;

/// A whitespace-separated word of a line, with its 1-based column.
struct Word<'a> {
    text: &'a str,
    column: usize,
}

/// The words of a line before its comment.
fn words(line: &str) -> Vec<Word<'_>> {
    let code = line.split('#').next().unwrap_or("");
    let mut out = Vec::new();
    let mut start = None;
    for (column, (index, c)) in code.char_indices().enumerate() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some((index, column + 1)),
            (true, Some((from, col))) => {
                out.push(Word { text: &code[from..index], column: col });
                start = None;
            }
            _ => {}
        }
    }
    if let Some((from, col)) = start {
        out.push(Word { text: &code[from..], column: col });
    }
    out
}

/// Whether `name` may name a router: letters, digits, `_`, `-`, `.` and `:`.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c))
}

/// What the lines of a graph file declare, before links and the root are resolved.
struct Statements<'t> {
    routers: Vec<GraphRouter>,
    index: HashMap<&'t str, u32>,
    /// (line, words, latency) of each link, resolved once every router is known.
    link_lines: Vec<(usize, Word<'t>, Word<'t>, Option<u32>)>,
    root: Option<(usize, Word<'t>)>,
    /// The `route` and `escape` lines, resolved once the graph is checked.
    routes: routes::Lines<'t>,
}

/// Reads the statements of a graph file line by line: routers (declared once, within the
/// limits), links and the root as written; every problem goes to `error`.
fn statements<'t>(text: &'t str, error: &mut dyn FnMut(usize, usize, String)) -> Statements<'t> {
    let mut routers: Vec<GraphRouter> = Vec::new();
    let mut index: HashMap<&'t str, u32> = HashMap::new();
    // (line, words) of each link and of the root, resolved once every router is known.
    let mut link_lines: Vec<(usize, Word<'t>, Word<'t>, Option<u32>)> = Vec::new();
    let mut root: Option<(usize, Word<'t>)> = None;
    let mut route_lines = routes::Lines::default();
    for (number, line) in text.split('\n').enumerate() {
        let number = number + 1;
        let words = words(line.strip_suffix('\r').unwrap_or(line));
        let Some(first) = words.first() else { continue };
        let extra = |at: usize, error: &mut dyn FnMut(usize, usize, String), what: &str| {
            if let Some(word) = words.get(at) {
                error(
                    number,
                    word.column,
                    format!("unexpected `{}` after {what}: a line holds one statement", word.text),
                );
            }
        };
        match first.text {
            "router" => {
                let Some(name) = words.get(1) else {
                    error(number, first.column, "expected a router name after `router`".into());
                    continue;
                };
                if !is_name(name.text) {
                    error(
                        number,
                        name.column,
                        format!(
                            "`{}` is not a router name: use letters, digits, `_`, `-`, `.` or `:` \
                             (at most {MAX_NAME_CHARS})",
                            name.text
                        ),
                    );
                    continue;
                }
                let terminals = match (words.get(2), words.get(3)) {
                    (Some(keyword), Some(count)) if keyword.text == "terminals" => {
                        match count.text.parse::<u32>() {
                            Ok(n) if n <= MAX_TERMINALS_PER_ROUTER => n,
                            _ => {
                                error(
                                    number,
                                    count.column,
                                    format!(
                                        "expected a whole number of terminals from 0 to \
                                         {MAX_TERMINALS_PER_ROUTER}, found `{}`",
                                        count.text
                                    ),
                                );
                                continue;
                            }
                        }
                    }
                    (Some(keyword), _) if keyword.text != "terminals" => {
                        error(
                            number,
                            keyword.column,
                            format!(
                                "expected `terminals <n>` after the router's name, found `{}`",
                                keyword.text
                            ),
                        );
                        continue;
                    }
                    (keyword, _) => {
                        let column = keyword.map_or(name.column + name.text.len(), |k| k.column);
                        error(
                            number,
                            column,
                            format!(
                                "expected `terminals <n>` after `router {}` (0 for a transit \
                                 router)",
                                name.text
                            ),
                        );
                        continue;
                    }
                };
                extra(4, &mut *error, "the terminal count");
                if let Some(&first) = index.get(name.text) {
                    let line = routers[first as usize].line;
                    error(
                        number,
                        name.column,
                        format!("router `{}` is declared twice (first on line {line})", name.text),
                    );
                    continue;
                }
                if routers.len() == MAX_ROUTERS {
                    error(
                        number,
                        first.column,
                        format!("more than {MAX_ROUTERS} routers: the simulator's limit"),
                    );
                    continue;
                }
                index.insert(name.text, routers.len() as u32);
                routers.push(GraphRouter { name: name.text.to_string(), terminals, line: number });
            }
            "link" => match (words.get(1), words.get(2)) {
                (Some(_), Some(_)) => {
                    let Ok(latency) = link_latency(&words, &mut *error, number) else {
                        continue;
                    };
                    extra(if latency.is_some() { 5 } else { 3 }, &mut *error, "the link");
                    let mut words = words.into_iter().skip(1);
                    if let (Some(a), Some(b)) = (words.next(), words.next()) {
                        link_lines.push((number, a, b, latency));
                    }
                }
                _ => error(
                    number,
                    first.column,
                    "expected two router names after `link` (`link <a> <b>`, optionally \
                     `latency <cycles>`)"
                        .into(),
                ),
            },
            "root" => {
                let Some(name) = words.get(1) else {
                    error(number, first.column, "expected a router name after `root`".into());
                    continue;
                };
                extra(2, &mut *error, "the root's name");
                if let Some((line, _)) = &root {
                    error(
                        number,
                        first.column,
                        format!("a second `root` (the first is on line {line}): name one root"),
                    );
                    continue;
                }
                root = Some((number, Word { text: name.text, column: name.column }));
            }
            "route" => route_lines.routes.push((number, words)),
            "escape" => routes::escape_line(&mut route_lines, number, &words, &mut *error),
            other => {
                let help = crate::suggest::did_you_mean(other, STATEMENTS)
                    .map(|word| format!(" (did you mean `{word}`?)"))
                    .unwrap_or_default();
                error(
                    number,
                    first.column,
                    format!(
                        "expected `router`, `link`, `root`, `route` or `escape`, found \
                         `{other}`{help}"
                    ),
                );
            }
        }
    }
    Statements { routers, index, link_lines, root, routes: route_lines }
}

/// The index of the router `word` (on `line`) names, or `None` with the problem reported to
/// `error`, suggesting the closest of `names` and `keywords` (words that may stand there too).
fn router_index(
    index: &HashMap<&str, u32>,
    names: &[&str],
    keywords: &[&str],
    line: usize,
    word: &Word<'_>,
    error: &mut dyn FnMut(usize, usize, String),
) -> Option<u32> {
    let found = index.get(word.text).copied();
    if found.is_none() {
        let candidates = names.iter().chain(keywords).copied();
        let help = crate::suggest::did_you_mean(word.text, candidates)
            .map(|name| format!(" (did you mean `{name}`?)"))
            .unwrap_or_default();
        error(
            line,
            word.column,
            format!(
                "unknown router `{}`: expected a router declared by a `router` line{help}",
                word.text
            ),
        );
    }
    found
}

/// The optional `latency <cycles>` after a link's two routers (`words` the line's words):
/// `Ok(None)` without one, `Err` (reported to `error`) for a malformed one.
fn link_latency(
    words: &[Word<'_>],
    error: &mut dyn FnMut(usize, usize, String),
    line: usize,
) -> Result<Option<u32>, ()> {
    let Some(keyword) = words.get(3) else { return Ok(None) };
    if keyword.text != "latency" {
        let help = crate::suggest::did_you_mean(keyword.text, ["latency"])
            .map(|word| format!(" (did you mean `{word}`?)"))
            .unwrap_or_default();
        error(
            line,
            keyword.column,
            format!(
                "unexpected `{}` after the link's routers: expected `latency <cycles>` or the \
                 end of the line{help}",
                keyword.text
            ),
        );
        return Err(());
    }
    let max = crate::scenario::fields::MAX_LATENCY;
    match words.get(4).map(|w| (w, w.text.parse::<u32>())) {
        Some((_, Ok(cycles))) if (1..=max).contains(&cycles) => Ok(Some(cycles)),
        found => {
            let (column, what) = match found {
                Some((word, _)) => (word.column, format!("found `{}`", word.text)),
                None => (keyword.column + keyword.text.len(), "found nothing".to_owned()),
            };
            error(
                line,
                column,
                format!(
                    "expected the link's latency in cycles, 1 to {max}, after `latency`: {what}"
                ),
            );
            Err(())
        }
    }
}

/// Parses a graph file's text (`file` is its name for display, `blake3` its content hash).
/// Every problem is returned with its line and column (at most twenty).
pub fn parse(file: &str, text: &str, blake3: String) -> Result<Graph, Vec<GraphError>> {
    let mut errors = Vec::new();
    let mut error = |line: usize, column: usize, message: String| {
        if errors.len() < MAX_ERRORS {
            errors.push(GraphError { line, column, message });
        }
    };
    let Statements { routers, index, link_lines, root, routes: route_lines } =
        statements(text, &mut error);
    let names: Vec<&str> = routers.iter().map(|r| r.name.as_str()).collect();
    let resolve = |line: usize, word: &Word<'_>, error: &mut dyn FnMut(usize, usize, String)| {
        router_index(&index, &names, &[], line, word, error)
    };
    let mut links = Vec::with_capacity(link_lines.len());
    let mut latencies = Vec::with_capacity(link_lines.len());
    let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
    let mut degree = vec![0usize; routers.len()];
    for (line, a, b, latency) in &link_lines {
        let (Some(x), Some(y)) = (resolve(*line, a, &mut error), resolve(*line, b, &mut error))
        else {
            continue;
        };
        if x == y {
            error(
                *line,
                b.column,
                format!(
                    "`link {} {}` is a self-loop: a link joins two different routers",
                    a.text, b.text
                ),
            );
            continue;
        }
        if let Some(first) = seen.get(&(x.min(y), x.max(y))) {
            error(
                *line,
                a.column,
                format!(
                    "duplicate link between `{}` and `{}` (first on line {first}): links are \
                     bidirectional, so list each pair once",
                    a.text, b.text
                ),
            );
            continue;
        }
        for end in [x, y] {
            degree[end as usize] += 1;
            if degree[end as usize] == MAX_DEGREE + 1 {
                error(
                    *line,
                    a.column,
                    format!(
                        "router `{}` has more than {MAX_DEGREE} links",
                        routers[end as usize].name
                    ),
                );
            }
        }
        seen.insert((x.min(y), x.max(y)), *line);
        links.push((x, y));
        latencies.push(*latency);
    }
    let root = match &root {
        Some((line, word)) => resolve(*line, word, &mut error).unwrap_or(0),
        None => 0,
    };
    if routers.is_empty() {
        error(
            1,
            1,
            "the graph declares no router: expected lines `router <name> terminals <n>`".into(),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut graph =
        Graph { file: file.to_string(), blake3, routers, links, latencies, root, table: None };
    let mut errors = Vec::new();
    check_structure(&graph, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    graph.table = routes::resolve(&graph, &index, route_lines)?;
    Ok(graph)
}

/// The whole-graph rules: at least two terminals, connected, no transit router at a dead end.
fn check_structure(graph: &Graph, errors: &mut Vec<GraphError>) {
    let routers = &graph.routers;
    let terminals = graph.terminals();
    if terminals < 2 {
        errors.push(GraphError {
            line: routers[0].line,
            column: 1,
            message: format!(
                "the graph has {terminals} terminal(s): traffic needs at least 2 (give routers \
                 `terminals <n>` with n >= 1)"
            ),
        });
    }
    if terminals > MAX_TERMINALS {
        errors.push(GraphError {
            line: routers[0].line,
            column: 1,
            message: format!("the graph has {terminals} terminals, more than {MAX_TERMINALS}"),
        });
    }
    let degree = graph.degrees();
    for (router, d) in routers.iter().zip(&degree) {
        if router.terminals == 0 && *d <= 1 && errors.len() < MAX_ERRORS {
            errors.push(GraphError {
                line: router.line,
                column: 1,
                message: format!(
                    "router `{}` has no terminals and {d} link(s): a transit router needs at \
                     least two links to carry traffic (give it terminals, or link it further)",
                    router.name
                ),
            });
        }
    }
    // Connected: a breadth-first search from router 0 reaches every router.
    let mut adjacent = vec![Vec::new(); routers.len()];
    for &(a, b) in &graph.links {
        adjacent[a as usize].push(b);
        adjacent[b as usize].push(a);
    }
    let mut reached = vec![false; routers.len()];
    let mut queue = std::collections::VecDeque::from([0u32]);
    reached[0] = true;
    while let Some(r) = queue.pop_front() {
        for &next in &adjacent[r as usize] {
            if !reached[next as usize] {
                reached[next as usize] = true;
                queue.push_back(next);
            }
        }
    }
    if let Some(lost) = reached.iter().position(|r| !r) {
        let missing = reached.iter().filter(|r| !**r).count();
        errors.push(GraphError {
            line: routers[lost].line,
            column: 1,
            message: format!(
                "the graph is disconnected: router `{}` (and {} other router(s)) cannot be \
                 reached from `{}`; every terminal must reach every other",
                routers[lost].name,
                missing - 1,
                routers[0].name
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Graph, Vec<GraphError>> {
        parse("g.txt", text, "00".into())
    }

    /// The first error's (line, column) and whether its message contains `words`.
    fn first_error(text: &str, words: &str) -> (usize, usize) {
        let errors = parsed(text).expect_err("refused");
        assert!(errors[0].message.contains(words), "{errors:?}");
        (errors[0].line, errors[0].column)
    }

    #[test]
    fn a_small_graph_parses_with_comments_and_a_root() {
        let g = parsed(
            "# a triangle with a tail\nroot b\nrouter a terminals 2  # two hosts\n\
             router b terminals 0\r\nrouter c terminals 1\nlink a b\nlink b c # last\nlink c a\n",
        )
        .unwrap();
        assert_eq!(g.routers.len(), 3);
        assert_eq!(g.terminals(), 3);
        assert_eq!(g.links, vec![(0, 1), (1, 2), (2, 0)]);
        assert_eq!(g.root, 1);
        assert_eq!(g.radix(), 4);
        assert_eq!(g.degrees(), vec![2, 2, 2]);
    }

    #[test]
    fn every_problem_is_located() {
        let base = "router a terminals 1\nrouter b terminals 1\n";
        assert_eq!(first_error(&format!("{base}link a x\n"), "unknown router `x`"), (3, 8));
        assert_eq!(first_error(&format!("{base}link a bb\n"), "did you mean `b`?"), (3, 8));
        assert_eq!(first_error(&format!("{base}link a a\n"), "self-loop"), (3, 8));
        assert_eq!(first_error(&format!("{base}link a b\nlink b a\n"), "duplicate link"), (4, 6));
        assert_eq!(first_error(&format!("{base}link a\n"), "two router names"), (3, 1));
        assert_eq!(first_error(&format!("{base}lnk a b\n"), "did you mean `link`?"), (3, 1));
        assert_eq!(first_error("router a terminals x\n", "whole number"), (1, 20));
        assert_eq!(first_error("router a hosts 1\n", "`terminals <n>`"), (1, 10));
        assert_eq!(first_error("router a\n", "`terminals <n>`"), (1, 9));
        assert_eq!(first_error("router a terminals 1 2\n", "unexpected `2`"), (1, 22));
        assert_eq!(first_error("router a terminals 1\nrouter a terminals 1\n", "twice"), (2, 8));
        assert_eq!(first_error("router a! terminals 1\n", "not a router name"), (1, 8));
        assert_eq!(first_error("# nothing\n", "no router"), (1, 1));
        assert_eq!(first_error("router a terminals 1\n", "at least 2"), (1, 1));
        assert_eq!(
            first_error(&format!("{base}router c terminals 1\nlink a b\n"), "disconnected"),
            (3, 1)
        );
        assert_eq!(
            first_error(&format!("{base}router s terminals 0\nlink a b\nlink b s\n"), "transit"),
            (3, 1)
        );
        assert_eq!(first_error(&format!("{base}link a b\nroot z\n"), "unknown router"), (4, 6));
        let two_roots = format!("root a\nroot b\n{base}link a b\n");
        assert_eq!(first_error(&two_roots, "second `root`"), (2, 1));
        // Several problems at once.
        let errors = parsed(&format!("{base}link a x\nlink y b\nfoo\n")).expect_err("refused");
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    #[test]
    fn a_link_may_give_its_latency() {
        let base = "router a terminals 1\nrouter b terminals 1\nrouter c terminals 0\n";
        let g =
            parsed(&format!("{base}link a b latency 7\nlink b c\nlink c a latency 1\n")).unwrap();
        assert_eq!(g.latencies, vec![Some(7), None, Some(1)]);
        let at = |line: &str, words: &str| first_error(&format!("{base}{line}\n"), words);
        assert_eq!(at("link a b latncy 2", "did you mean `latency`?"), (4, 10));
        assert_eq!(at("link a b latency 0", "1 to 65536"), (4, 18));
        assert_eq!(at("link a b latency x", "found `x`"), (4, 18));
        assert_eq!(at("link a b latency", "found nothing"), (4, 17));
        assert_eq!(at("link a b latency 2 3", "unexpected `3`"), (4, 20));
    }

    #[test]
    fn identity_is_the_content_hash() {
        let text = "router a terminals 1\nrouter b terminals 1\nlink a b\n";
        let one = parse("one.txt", text, "abc".into()).unwrap();
        let two = parse("dir/two.txt", text, "abc".into()).unwrap();
        assert_eq!(one, two);
        assert_eq!(serde_json::to_string(&one).unwrap(), serde_json::to_string(&two).unwrap());
        assert_eq!(serde_json::to_string(&one).unwrap(), r#"{"blake3":"abc"}"#);
        assert_eq!(two.file_name(), "two.txt");
        let other = parse("one.txt", text, "abd".into()).unwrap();
        assert_ne!(one, other);
    }
}
