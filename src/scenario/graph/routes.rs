//! A graph file's own routing table (`routing: table`, `docs/graph.md`): the `route` and
//! `escape` statements, resolved against the graph's routers and links, and the checks that
//! make a table safe to simulate: every message from a router with terminals reaches every
//! other such router, no route can loop, and, unless an up*/down* escape channel is declared,
//! the table's channel-dependency graph is acyclic (Dally and Seitz's condition), with the
//! cycle printed when it is not.
//!
//! ```text
//! route a c b                  # at router a, towards router c: go to b (the class kept)
//! route a c b d                # two allowed next hops: the engine takes any free VC of both
//! route d a a class 1          # ... and move to VC class 1 (a dateline)
//! route b d c class +1         # ... and move up one class (hop-indexed VCs)
//! escape up_down               # VC 0 is an up*/down* escape channel (Duato's protocol)
//! ```
//!
//! # The routing state: a VC class
//!
//! A message enters its source router in class 0. Each `route <at> <dest> <next>` offers the
//! link from `at` to `next` to messages at `at` bound for a terminal of `dest`, in the class
//! the message holds (no `class`), in class `k` (`class k`) or `n` classes up (`class +n`).
//! The classes a message can reach, `0..C`, split the table's VCs (every VC, or VCs `1..V`
//! under `escape up_down`) into `C` contiguous groups as evenly as possible, class `k` taking
//! VCs `floor(k W / C) .. floor((k + 1) W / C)` of the `W` table VCs; the simulator refuses
//! fewer table VCs than classes. Classes make a table deadlock-free where its routes alone
//! close a cycle: the dateline on a ring, hop-indexed VCs on a low-diameter network.
//!
//! # The checks
//!
//! For every destination router `t` with terminals, the *states* `(router, class)` a message
//! bound for `t` can hold are followed from every other router with terminals in class 0:
//!
//! - every state at a router other than `t` has at least one route (else the table has a
//!   dead end, reported with the route that leads there);
//! - the states form no cycle (else a message could circle forever; the loop is printed);
//! - the classes stay below 64.
//!
//! The channel-dependency graph has a node per (directed link, class) and an edge from
//! `(u -> v, k)` to `(v -> w, k')` wherever a message bound for some `t` can hold the first
//! and request the second. Without `escape up_down` it must be acyclic: then no set of
//! messages can wait on each other in a cycle, with any number of VCs per class (the VCs of
//! one class and link share its node). With `escape up_down` the table's channels may form
//! cycles: VC 0 of every link is the up*/down* escape channel of `routing: minimal`
//! (`sim::network::graph`), requested when no table VC is free, and messages on it keep to
//! it, which is Duato's condition.

use std::collections::{HashMap, HashSet};

use super::{Graph, GraphError, MAX_ERRORS, Word};

/// The most VC classes a table may use.
pub const MAX_CLASSES: u32 = 64;

/// How a route changes the message's VC class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClassChange {
    /// The class the message holds.
    Keep,
    /// Class `k`.
    Set(u32),
    /// `n` classes up.
    Add(u32),
}

impl ClassChange {
    /// The class after the hop, from the class `k` held before it.
    #[inline]
    pub fn apply(self, k: u32) -> u32 {
        match self {
            ClassChange::Keep => k,
            ClassChange::Set(j) => j,
            ClassChange::Add(n) => k + n,
        }
    }
}

/// One allowed next hop: at router `at`, towards router `dest`, the link to `next`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The router the message is at (index).
    pub at: u32,
    /// The destination router (index).
    pub dest: u32,
    /// The neighbour of `at` the route leads to (index).
    pub next: u32,
    /// The class after the hop.
    pub class: ClassChange,
    /// The file line that gives it.
    pub line: usize,
}

/// A graph file's routing table, checked (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteTable {
    /// The routes grouped by (destination, router), in file order within a group: the routes
    /// at router `u` towards router `t` are `routes[start[t R + u] .. start[t R + u + 1]]`.
    pub routes: Vec<Route>,
    /// Where each (destination, router) group starts in `routes`, `R^2 + 1` entries.
    pub start: Vec<u32>,
    /// `escape up_down`: VC 0 is an up*/down* escape channel.
    pub escape: bool,
    /// The VC classes messages can hold, `C` (at least 1).
    pub classes: u32,
}

impl RouteTable {
    /// The routes at router `at` towards router `dest`, in file order.
    pub fn at(&self, at: u32, dest: u32) -> &[Route] {
        // `start` has R^2 + 1 entries for R routers.
        let routers = (self.start.len() - 1).isqrt();
        let key = dest as usize * routers + at as usize;
        &self.routes[self.start[key] as usize..self.start[key + 1] as usize]
    }
}

/// The `route` and `escape` lines of a file, as written.
#[derive(Default)]
pub(super) struct Lines<'t> {
    /// (line, the line's words, `route` first).
    pub(super) routes: Vec<(usize, Vec<Word<'t>>)>,
    /// (line, the word after `escape`).
    pub(super) escape: Option<(usize, Word<'t>)>,
}

/// A problem reporter: line, column, message.
type Report<'e> = &'e mut dyn FnMut(usize, usize, String);

/// Reads an `escape` line's words (`words[0]` is `escape`) into `lines`.
pub(super) fn escape_line<'t>(
    lines: &mut Lines<'t>,
    number: usize,
    words: &[Word<'t>],
    error: Report<'_>,
) {
    let keyword = &words[0];
    match words.get(1) {
        Some(word) if word.text == "up_down" => {
            if let Some(extra) = words.get(2) {
                error(
                    number,
                    extra.column,
                    format!("unexpected `{}` after `escape up_down`", extra.text),
                );
            } else if let Some((first, _)) = &lines.escape {
                error(
                    number,
                    keyword.column,
                    format!("a second `escape` (the first is on line {first})"),
                );
            } else {
                lines.escape = Some((number, Word { text: word.text, column: word.column }));
            }
        }
        found => {
            let (column, what) = match found {
                Some(word) => (word.column, format!("found `{}`", word.text)),
                None => (keyword.column + keyword.text.len(), "found nothing".to_owned()),
            };
            error(
                number,
                column,
                format!(
                    "expected `up_down` after `escape` (the escape channel a table may declare): \
                     {what}"
                ),
            );
        }
    }
}

/// A route line's class, from the words after `class`: `k` or `+n`.
fn class_change(
    word: Option<&Word<'_>>,
    keyword: &Word<'_>,
) -> Result<ClassChange, (usize, String)> {
    let Some(word) = word else {
        return Err((
            keyword.column + keyword.text.len(),
            "expected a class after `class`: `k` (0 to 63) or `+n` (n classes up)".into(),
        ));
    };
    let parsed = match word.text.strip_prefix('+') {
        Some(n) => {
            n.parse::<u32>().ok().filter(|n| (1..MAX_CLASSES).contains(n)).map(ClassChange::Add)
        }
        None => word.text.parse::<u32>().ok().filter(|k| *k < MAX_CLASSES).map(ClassChange::Set),
    };
    parsed.ok_or((
        word.column,
        format!(
            "expected a class after `class`: `k` (0 to 63) or `+n` (1 to 63 classes up), found \
             `{}`",
            word.text
        ),
    ))
}

/// Resolves and checks the table of `graph` (already checked itself) from its lines; `index`
/// maps router names to indices. `Ok(None)` when the file gives no routes.
pub(super) fn resolve(
    graph: &Graph,
    index: &HashMap<&str, u32>,
    lines: Lines<'_>,
) -> Result<Option<RouteTable>, Vec<GraphError>> {
    let mut errors = Vec::new();
    let mut error = |line: usize, column: usize, message: String| {
        if errors.len() < MAX_ERRORS {
            errors.push(GraphError { line, column, message });
        }
    };
    if lines.routes.is_empty() {
        if let Some((line, word)) = &lines.escape {
            error(
                *line,
                word.column,
                "`escape up_down` without routes: the escape channel backs a table of `route` \
                 lines (routing: minimal already has an up*/down* escape)"
                    .into(),
            );
            return Err(errors);
        }
        return Ok(None);
    }
    let names: Vec<&str> = graph.routers.iter().map(|r| r.name.as_str()).collect();
    let r_count = graph.routers.len();
    let mut linked: HashSet<(u32, u32)> = HashSet::new();
    for &(a, b) in &graph.links {
        linked.insert((a, b));
        linked.insert((b, a));
    }
    let lookup = |word: &Word<'_>, error: Report<'_>, line: usize| -> Option<u32> {
        super::router_index(index, &names, &["class"], line, word, error)
    };
    let mut routes = Vec::new();
    let mut seen: HashMap<(u32, u32, u32, ClassChange), usize> = HashMap::new();
    for (line, all) in &lines.routes {
        let line = *line;
        let (keyword, words) = (&all[0], &all[1..]);
        let class_at = words.iter().position(|w| w.text == "class");
        let targets = &words[..class_at.unwrap_or(words.len())];
        if targets.len() < 3 {
            error(
                line,
                keyword.column,
                "expected `route <router> <destination> <next>...` (the routers a message at \
                 <router> bound for <destination> may go to next), optionally `class <k>` or \
                 `class +<n>`"
                    .into(),
            );
            continue;
        }
        let class = match class_at {
            None => ClassChange::Keep,
            Some(at) => {
                if let Some(extra) = words.get(at + 2) {
                    error(
                        line,
                        extra.column,
                        format!("unexpected `{}` after the class", extra.text),
                    );
                    continue;
                }
                match class_change(words.get(at + 1), &words[at]) {
                    Ok(class) => class,
                    Err((column, message)) => {
                        error(line, column, message);
                        continue;
                    }
                }
            }
        };
        let (Some(at), Some(dest)) =
            (lookup(&targets[0], &mut error, line), lookup(&targets[1], &mut error, line))
        else {
            continue;
        };
        if at == dest {
            error(
                line,
                targets[1].column,
                format!(
                    "a route from `{}` to itself: a message at its destination router leaves by \
                     the ejection link, which needs no route",
                    names[at as usize]
                ),
            );
            continue;
        }
        for word in &targets[2..] {
            let Some(next) = lookup(word, &mut error, line) else { continue };
            if !linked.contains(&(at, next)) {
                error(
                    line,
                    word.column,
                    format!(
                        "`{}` is not linked to `{}`: a route's next router is a neighbour (a \
                         `link` joins them)",
                        word.text, names[at as usize]
                    ),
                );
                continue;
            }
            if let Some(first) = seen.insert((at, dest, next, class), line) {
                error(line, word.column, format!("duplicate route (first on line {first})"));
                continue;
            }
            routes.push(Route { at, dest, next, class, line });
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // Grouped by (dest, at); the sort is stable, so file order within a group.
    routes.sort_by_key(|route| (route.dest, route.at));
    let mut start = vec![0u32; r_count * r_count + 1];
    for route in &routes {
        start[(route.dest as usize) * r_count + route.at as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut table = RouteTable { routes, start, escape: lines.escape.is_some(), classes: 1 };
    table.classes = follow(graph, &table, &names).map_err(|error| vec![error])?;
    Ok(Some(table))
}

/// DFS colours of a state.
const WHITE: u8 = 0;
const GREY: u8 = 1;
const BLACK: u8 = 2;

/// Follows every message through the table (see the module docs): dead ends, loops and the
/// class count, then the channel dependencies' cycle unless `escape`. Returns `C`.
fn follow(graph: &Graph, table: &RouteTable, names: &[&str]) -> Result<u32, GraphError> {
    let escape = table.escape;
    let r_count = graph.routers.len();
    let states = r_count * MAX_CLASSES as usize;
    let state = |router: u32, class: u32| router as usize * MAX_CLASSES as usize + class as usize;
    let mut colour = vec![WHITE; states];
    // Channel-dependency graph: node per (at, next, class), edges with the line of the
    // second route.
    let mut node_of: HashMap<(u32, u32, u32), u32> = HashMap::new();
    let mut nodes: Vec<(u32, u32, u32)> = Vec::new();
    let mut edges: HashMap<u32, Vec<(u32, usize)>> = HashMap::new();
    let mut edge_seen: HashSet<(u32, u32)> = HashSet::new();
    let mut node = |key: (u32, u32, u32), nodes: &mut Vec<(u32, u32, u32)>| -> u32 {
        *node_of.entry(key).or_insert_with(|| {
            nodes.push(key);
            nodes.len() as u32 - 1
        })
    };
    let mut classes = 1;
    let mut reached: Vec<(u32, u32)> = Vec::new();
    for dest in 0..r_count as u32 {
        if graph.routers[dest as usize].terminals == 0 {
            continue;
        }
        colour.fill(WHITE);
        reached.clear();
        for source in 0..r_count as u32 {
            if source == dest || graph.routers[source as usize].terminals == 0 {
                continue;
            }
            if colour[state(source, 0)] != WHITE {
                continue;
            }
            // Iterative DFS: (router, class, the route that led here, next route to try).
            let mut stack: Vec<(u32, u32, Option<usize>, usize)> = vec![(source, 0, None, 0)];
            colour[state(source, 0)] = GREY;
            reached.push((source, 0));
            while let Some(&mut (at, class, by, ref mut tried)) = stack.last_mut() {
                let options = table.at(at, dest);
                if options.is_empty() {
                    let (from, to) = (names[at as usize], names[dest as usize]);
                    return Err(match by {
                        Some(line) => GraphError {
                            line,
                            column: 1,
                            message: format!(
                                "no route from `{from}` towards `{to}` (class {class}), where this \
                                 line takes a message from `{}` to `{to}`: the table needs a \
                                 `route {from} {to} <next>` line",
                                names[source as usize]
                            ),
                        },
                        None => GraphError {
                            line: graph.routers[at as usize].line,
                            column: 1,
                            message: format!(
                                "no route from `{from}` towards `{to}`: both have terminals, so \
                                 the table needs a `route {from} {to} <next>` line"
                            ),
                        },
                    });
                }
                if *tried == options.len() {
                    colour[state(at, class)] = BLACK;
                    stack.pop();
                    continue;
                }
                let route = &options[*tried];
                *tried += 1;
                let next_class = route.class.apply(class);
                if next_class >= MAX_CLASSES {
                    return Err(GraphError {
                        line: route.line,
                        column: 1,
                        message: format!(
                            "a message from `{}` to `{}` reaches class {next_class} here: \
                             classes run from 0 to {}",
                            names[source as usize],
                            names[dest as usize],
                            MAX_CLASSES - 1
                        ),
                    });
                }
                classes = classes.max(next_class + 1);
                if route.next == dest {
                    continue;
                }
                match colour[state(route.next, next_class)] {
                    WHITE => {
                        colour[state(route.next, next_class)] = GREY;
                        reached.push((route.next, next_class));
                        stack.push((route.next, next_class, Some(route.line), 0));
                    }
                    GREY => {
                        let from =
                            stack.iter().position(|s| (s.0, s.1) == (route.next, next_class));
                        let path: Vec<String> = stack[from.unwrap_or(0)..]
                            .iter()
                            .map(|s| format!("`{}` (class {})", names[s.0 as usize], s.1))
                            .collect();
                        return Err(GraphError {
                            line: route.line,
                            column: 1,
                            message: format!(
                                "the routes towards `{}` loop: {} -> `{}` (class {next_class}) \
                                 again, so a message could circle forever",
                                names[dest as usize],
                                path.join(" -> "),
                                names[route.next as usize]
                            ),
                        });
                    }
                    _ => {}
                }
            }
        }
        if escape {
            continue;
        }
        // The dependencies of the states reached towards `dest`.
        for &(at, class) in &reached {
            for first in table.at(at, dest) {
                let k = first.class.apply(class);
                if first.next == dest {
                    continue;
                }
                let a = node((at, first.next, k), &mut nodes);
                for second in table.at(first.next, dest) {
                    let b = node((first.next, second.next, second.class.apply(k)), &mut nodes);
                    if edge_seen.insert((a, b)) {
                        edges.entry(a).or_default().push((b, second.line));
                    }
                }
            }
        }
    }
    if !escape && let Some(cycle) = find_cycle(nodes.len(), &edges) {
        let channel = |n: u32| {
            let (a, b, k) = nodes[n as usize];
            format!("{}->{} in class {k}", names[a as usize], names[b as usize])
        };
        let hops: Vec<String> =
            cycle.iter().map(|&(n, line)| format!("{} (line {line})", channel(n))).collect();
        return Err(GraphError {
            line: cycle[0].1,
            column: 1,
            message: format!(
                "the table's channel dependencies form a cycle, so messages can deadlock: {}, \
                 and back to {}; break it with VC classes (`class <k>` on a route, e.g. a \
                 dateline) or declare `escape up_down` (an up*/down* escape channel on VC 0)",
                hops.join(", "),
                channel(cycle[0].0)
            ),
        });
    }
    Ok(classes)
}

/// A cycle of the directed graph of `count` nodes, as (node, line of the edge into it), if
/// any (iterative DFS).
fn find_cycle(count: usize, edges: &HashMap<u32, Vec<(u32, usize)>>) -> Option<Vec<(u32, usize)>> {
    let mut colour = vec![WHITE; count];
    let none: Vec<(u32, usize)> = Vec::new();
    for root in 0..count as u32 {
        if colour[root as usize] != WHITE {
            continue;
        }
        // (node, line of the edge into it, next edge to try).
        let mut stack: Vec<(u32, usize, usize)> = vec![(root, 0, 0)];
        colour[root as usize] = GREY;
        while let Some(&mut (at, _, ref mut tried)) = stack.last_mut() {
            let out = edges.get(&at).unwrap_or(&none);
            if *tried == out.len() {
                colour[at as usize] = BLACK;
                stack.pop();
                continue;
            }
            let (next, line) = out[*tried];
            *tried += 1;
            match colour[next as usize] {
                WHITE => {
                    colour[next as usize] = GREY;
                    stack.push((next, line, 0));
                }
                GREY => {
                    let from = stack.iter().position(|s| s.0 == next).unwrap_or(0);
                    let mut cycle: Vec<(u32, usize)> =
                        stack[from..].iter().map(|s| (s.0, s.1)).collect();
                    // The edge closing the cycle leads into its first node.
                    cycle[0].1 = line;
                    return Some(cycle);
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    /// A ring of four routers, one terminal each.
    const RING: &str = "router a terminals 1\nrouter b terminals 1\nrouter c terminals 1\n\
                        router d terminals 1\nlink a b\nlink b c\nlink c d\nlink d a\n";

    /// Clockwise routes a -> b -> c -> d -> a, the hop from d to a in class `dateline`.
    fn clockwise(dateline: &str) -> String {
        let order = ["a", "b", "c", "d"];
        let mut text = RING.to_owned();
        for (i, at) in order.iter().enumerate() {
            for (j, dest) in order.iter().enumerate() {
                if i != j {
                    let next = order[(i + 1) % 4];
                    let class = if *at == "d" { dateline } else { "" };
                    text.push_str(&format!("route {at} {dest} {next}{class}\n"));
                }
            }
        }
        text
    }

    fn table(text: &str) -> Result<Option<RouteTable>, Vec<GraphError>> {
        parse("t.txt", text, "00".into()).map(|g| g.table)
    }

    /// The first error's (line, column), checking that its message contains `words`.
    fn refused(text: &str, words: &str) -> (usize, usize) {
        let errors = table(text).expect_err("refused");
        assert!(errors[0].message.contains(words), "{errors:?}");
        (errors[0].line, errors[0].column)
    }

    #[test]
    fn a_ring_with_a_dateline_class_is_accepted_and_without_one_refused() {
        let accepted = table(&clockwise(" class 1")).unwrap().unwrap();
        assert_eq!((accepted.routes.len(), accepted.classes, accepted.escape), (12, 2, false));
        // d's routes (router 3) cross the dateline: towards a (router 0) in class 1.
        assert_eq!(accepted.at(3, 0)[0].class, ClassChange::Set(1));
        // Without the dateline the four clockwise channels wait on each other.
        let (line, _) = refused(&clockwise(""), "channel dependencies form a cycle");
        assert!(line > 8);
        let errors = table(&clockwise("")).unwrap_err();
        for hop in ["a->b in class 0 (line ", "b->c in class 0", "c->d", "d->a"] {
            assert!(errors[0].message.contains(hop), "{}", errors[0].message);
        }
        // ... unless an up*/down* escape channel backs the table.
        let escaped = table(&format!("{}escape up_down\n", clockwise(""))).unwrap().unwrap();
        assert_eq!((escaped.classes, escaped.escape), (1, true));
        // A file without routes has no table.
        assert_eq!(table(RING).unwrap(), None);
    }

    #[test]
    fn classes_count_what_messages_can_reach() {
        // A path a - b - c: every hop one class up.
        let text = "router a terminals 1\nrouter b terminals 0\nrouter c terminals 1\nlink a b\n\
                    link b c\nroute a c b class +1\nroute b c c class +1\nroute c a b class +1\n\
                    route b a a class +1\n";
        assert_eq!(table(text).unwrap().unwrap().classes, 3);
        let far = text.replace("route b a a class +1", "route b a a class +63");
        assert_eq!(refused(&far, "reaches class 64"), (9, 1));
    }

    #[test]
    fn every_problem_is_located() {
        let base = clockwise(" class 1");
        let with = |line: &str| format!("{base}{line}\n");
        // Line 21 is the first after the 8 graph lines and 12 routes.
        assert_eq!(refused(&with("route a c x"), "unknown router `x`"), (21, 11));
        assert_eq!(refused(&with("route a c bb"), "did you mean `b`?"), (21, 11));
        assert_eq!(refused(&with("route a c d clas 1"), "did you mean `class`?"), (21, 13));
        assert_eq!(refused(&with("route a c c"), "not linked to `a`"), (21, 11));
        assert_eq!(refused(&with("route a a b"), "to itself"), (21, 9));
        assert_eq!(refused(&with("route a c b"), "duplicate route (first on line 10)"), (21, 11));
        assert_eq!(refused(&with("route a c"), "expected `route <router>"), (21, 1));
        assert_eq!(refused(&with("route a c d class"), "expected a class"), (21, 18));
        assert_eq!(refused(&with("route a c d class x"), "found `x`"), (21, 19));
        assert_eq!(refused(&with("route a c d class 64"), "found `64`"), (21, 19));
        assert_eq!(refused(&with("route a c d class +0"), "found `+0`"), (21, 19));
        assert_eq!(refused(&with("route a c d class 1 2"), "unexpected `2`"), (21, 21));
        assert_eq!(refused(&with("escape"), "expected `up_down`"), (21, 7));
        assert_eq!(refused(&with("escape duato"), "found `duato`"), (21, 8));
        assert_eq!(refused(&with("escape up_down\nescape up_down"), "a second `escape`"), (22, 1));
        assert_eq!(refused(&format!("{RING}escape up_down\n"), "without routes"), (9, 8));
        assert_eq!(refused(&with("rute a b c"), "did you mean `route`?"), (21, 1));
        // A destination the table forgets: at its source router, or where a route leads.
        let forgotten: String = base
            .lines()
            .filter(|l| !l.starts_with("route b d"))
            .map(|l| format!("{l}\n"))
            .collect();
        let errors = table(&forgotten).unwrap_err();
        assert!(errors[0].message.contains("no route from `b` towards `d`"), "{errors:?}");
        // Reported at the route that takes a message from `a` there (line 11).
        assert_eq!(errors[0].line, 11, "{errors:?}");
        // A pair the table does not route at all: reported at the source router's line.
        let unrouted: String =
            base.lines().filter(|l| !l.starts_with("route a ")).map(|l| format!("{l}\n")).collect();
        let (line, _) = refused(&unrouted, "no route from `a` towards `b`: both have terminals");
        assert_eq!(line, 1);
        // A loop: b sends messages for d back to a, which sends them to b.
        let looping = base.replace("route b d c", "route b d a");
        assert_eq!(refused(&looping, "loop"), (14, 1));
    }
}
