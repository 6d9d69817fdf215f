//! Any network read from a file (`topology: {kind: graph, graph: <file>}`, format in
//! `docs/graph.md`): numbering, wiring, route tables and the `up_down` and `minimal` routing
//! cases with their virtual-channel use.
//!
//! # Terminals, routers and ports
//!
//! As on the fat-tree and the dragonfly, every terminal and every router is a router of the
//! engine. Ids `0..N` are the terminals, the traffic endpoints (`Geometry::nodes` is `N`),
//! numbered router by router in the order the file declares the routers: router `r` (its
//! index in the file, from 0) serves terminals `first(r) ..= first(r) + t_r - 1`, and has
//! engine id `N + r`. Every engine router has `P = max_r (t_r + d_r)` output ports (`d_r` its
//! links), at least 1:
//!
//! - a terminal's port 0 is its link to its router (its other ports have no link);
//! - a router's port `i < t_r` leads to its terminal `first(r) + i` (the ejection link);
//! - port `t_r + j` is its `j`-th link, in the order the file lists the links it is in;
//! - the remaining ports have no link (`NO_LINK`).
//!
//! Every link is a pair of channels, one per direction, each with V virtual channels.
//!
//! # Up*/down* orientation
//!
//! A breadth-first search from the root (the file's `root`, else its first router) gives each
//! router a level, its distance to the root. Routers are ordered by (level, index); the link
//! from `u` to `v` is **up** when `v` comes before `u` in that order (it leads towards the root,
//! ties between routers of one level broken by the lower index), **down** otherwise. Every
//! link is up in one direction and down in the other. A legal up*/down* route takes zero or
//! more up links, then zero or more down links, never an up link after a down link. One
//! always exists: up along BFS parents to the root, then down the BFS tree.
//!
//! Route tables, built once per run by breadth-first searches (graphs are small): for every
//! router `u` and destination router `t`, `dist(u, t)` the minimal distance in links,
//! `down(u, t)` the shortest path over down links only (unreachable: none), and
//! `ud(u, t) = min(down(u, t), 1 + min over up links u -> v of ud(v, t))`, the shortest legal
//! up*/down* route (computed in increasing (level, index) order, since up links lead to
//! earlier routers).
//!
//! # Routing cases
//!
//! The header's routing state `level` holds two bits: [`ESCAPE`] (the message is on the
//! up*/down* channels for good) and [`DOWN`] (its up*/down* route has taken a down link).
//!
//! - `up_down`: every VC of every port that starts a shortest legal route: before any down
//!   link, the up links to `v` with `1 + ud(v, t) = ud(u, t)` and the down links to `v` with
//!   `1 + down(v, t) = ud(u, t)`; after one, the down links with `1 + down(v, t) = down(u, t)`.
//!   Deterministic up to these ties, which the engine breaks by taking a free VC at random.
//! - `minimal` (Duato's protocol with an up*/down* escape, V >= 2): VC 0 of every
//!   router-to-router channel is the escape channel, VCs `1..V` are adaptive. A message not yet
//!   on the escape channels may request an adaptive VC on every minimal port (`1 + dist(v, t)
//!   = dist(u, t)`), and only when none is free, VC 0 on the ports `up_down` offers from `u`
//!   (a fresh up*/down* route from here). Once it holds an escape VC it stays on escape VCs,
//!   following `up_down` to its destination. Terminal links carry every VC.
//! - `table` (the file's `route` lines, `scenario::graph::routes`): every VC of the message's
//!   next class on every port the table gives for (current router, destination router). The
//!   routing state's bits above [`DOWN`] hold the class of the VC the message holds (class 0
//!   from the source router); the class of a table VC is fixed (the table's VCs split into
//!   contiguous groups), so [`Routes::after_hop`] reads it off the VC granted. With
//!   `escape up_down`, VC 0 is `minimal`'s escape channel, requested as there; the table's
//!   classes split VCs `1..V`.
//!
//! # Deadlock freedom
//!
//! `up_down`: order the channels of up links by the (level, index) of the router they lead
//! to, decreasing, and then the channels of down links by the same key, increasing. Along a
//! legal route every router-to-router channel comes later in this order than the one before
//! it (up links lead to ever earlier routers, down links to ever later ones, and no up link
//! follows a down link); a terminal's link only starts a route and an ejection link only ends
//! one, and an ejection link always drains. So the channel-dependency graph is acyclic and
//! the routing deadlock-free with any V (Dally and Seitz's condition). `minimal`: the escape
//! VCs form the same acyclic dependency graph, and a message on them never leaves them, so
//! every message holding escape VCs reaches its destination; a message holding adaptive VCs
//! can always request the escape VC of an `up_down` port, which such messages release, so it
//! never waits forever on a cycle (Duato's condition for a connected, acyclic escape
//! subnetwork that messages do not leave). `table`: the parser refuses a table whose
//! (link, class) dependency graph has a cycle unless it declares the escape, which then
//! works as for `minimal`. The tests build the channel-dependency graph of
//! `up_down` and of the escape channels on small irregular graphs and find it acyclic, and
//! find cycles in the minimal routes' dependencies where there should be some.
//!
//! # Zero-load latency
//!
//! A route from terminal `s` at router `r_s` to terminal `d != s` at router `r_d` crosses
//! `hops = 2 + H` links: the terminal's link, `H` router-to-router links and the ejection
//! link, with `H = ud(r_s, r_d)` for `up_down` and `H = dist(r_s, r_d)` for `minimal` (at zero
//! load every adaptive VC is free, so the message never takes the escape channels). In the
//! engine's conventions (module `sim`: one cycle per link, `router_delay` at every router
//! entered over a link, not at the destination terminal, one ejection cycle, the tail `M - 1`
//! cycles behind, `buffer_depth >= 2`) the zero-load latency is exactly
//! `hops + M + router_delay (hops - 1)` (tested for every pair on several irregular graphs).

use std::collections::VecDeque;

use crate::scenario::graph::{ClassChange, Graph};
use crate::scenario::{Routing, Scenario};

use super::super::SimError;
use super::Network;
use super::hop::{Candidate, Header, NO_LINK, Step};

/// Routing state bit: the message holds escape (up*/down*) VCs and keeps to them.
pub(crate) const ESCAPE: u32 = 1;
/// Routing state bit: the message's up*/down* route has taken a down link.
pub(crate) const DOWN: u32 = 2;
/// No path (a down-only distance where no down-only path exists).
const NONE: u16 = u16::MAX;

/// A built graph network: numbering, wiring and route tables (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct GraphNetwork {
    /// Terminals N (the first router id).
    pub(crate) terminals: u32,
    /// Routers R.
    routers: u32,
    /// Output ports per engine router.
    ports: u32,
    /// First terminal of each router.
    first: Vec<u32>,
    /// Terminals of each router.
    attached: Vec<u32>,
    /// Router index of each terminal.
    router_of: Vec<u32>,
    /// The neighbour table: downstream engine router of each channel, `NO_LINK` where none.
    neighbor: Vec<u32>,
    /// Per router and port: whether that link is up (towards the root).
    up: Vec<bool>,
    /// Minimal distances `dist(u, t)`, at `t * R + u`.
    dist: Vec<u16>,
    /// Down-only distances `down(u, t)`, at `t * R + u` (`NONE`: no such path).
    down: Vec<u16>,
    /// Shortest legal up*/down* distances `ud(u, t)`, at `t * R + u`.
    up_down: Vec<u16>,
    /// Router names, for messages.
    names: Vec<String>,
    /// Per channel: the latency the file gives its link (`latency <cycles>`), if any.
    latency: Vec<Option<u32>>,
    /// The file's routing table by (destination, router), if it gives one (boxed: most graphs
    /// have none, and `Family` holds a network by value).
    table: Option<Box<Table>>,
}

/// A graph file's routing table in ports: the routes at router `u` towards router `t` are
/// `hops[start[t * R + u] .. start[t * R + u + 1]]`, in file order.
#[derive(Clone, Debug)]
struct Table {
    start: Vec<u32>,
    hops: Vec<(u32, ClassChange)>,
}

impl GraphNetwork {
    /// The latency the file gives the link of `channel`, if any.
    pub(crate) fn link_latency(&self, channel: u32) -> Option<u32> {
        self.latency.get(channel as usize).copied().flatten()
    }

    /// Output ports per engine router, `max_r (t_r + d_r)` (at least 1), and the network's
    /// terminal and router counts, without building anything.
    pub(crate) fn sizes(graph: &Graph) -> (u32, u32, u32) {
        let terminals = graph.terminals() as u32;
        (terminals, graph.routers.len() as u32, graph.radix().max(1))
    }

    /// Numbers, wires and tabulates `graph` (checked by its parser: connected, no self-loop or
    /// duplicate link, at least one router).
    pub(crate) fn new(graph: &Graph) -> Result<GraphNetwork, SimError> {
        let (terminals, routers, ports) = GraphNetwork::sizes(graph);
        let r_count = routers as usize;
        if r_count == 0 || r_count > usize::from(NONE) / 2 {
            return Err(SimError(format!(
                "the graph needs 1 to {} routers, got {r_count}",
                NONE / 2
            )));
        }
        let mut first = Vec::with_capacity(r_count);
        let mut attached = Vec::with_capacity(r_count);
        let mut router_of = Vec::with_capacity(terminals as usize);
        for (index, router) in graph.routers.iter().enumerate() {
            first.push(router_of.len() as u32);
            attached.push(router.terminals);
            router_of.extend(std::iter::repeat_n(index as u32, router.terminals as usize));
        }
        // Adjacency in file order: (neighbour router, port).
        let mut adjacent: Vec<Vec<(u32, u32)>> = vec![Vec::new(); r_count];
        let total = (terminals + routers) as usize;
        let mut latency = vec![None; total * ports as usize];
        for (link, &(a, b)) in graph.links.iter().enumerate() {
            for (from, to) in [(a, b), (b, a)] {
                let port = attached[from as usize] + adjacent[from as usize].len() as u32;
                adjacent[from as usize].push((to, port));
                let channel = (terminals + from) * ports + port;
                latency[channel as usize] = graph.latencies.get(link).copied().flatten();
            }
        }
        let mut neighbor = vec![NO_LINK; total * ports as usize];
        for t in 0..terminals {
            let r = router_of[t as usize];
            neighbor[(t * ports) as usize] = terminals + r;
            neighbor[((terminals + r) * ports + t - first[r as usize]) as usize] = t;
        }
        for (r, links) in adjacent.iter().enumerate() {
            for &(to, port) in links {
                neighbor[(terminals as usize + r) * ports as usize + port as usize] =
                    terminals + to;
            }
        }
        // Levels from the root, and the up orientation of every link.
        let bfs = |start: u32, allowed: &dyn Fn(u32, u32) -> bool| -> Vec<u16> {
            let mut distance = vec![NONE; r_count];
            distance[start as usize] = 0;
            let mut queue = VecDeque::from([start]);
            while let Some(x) = queue.pop_front() {
                for &(y, _) in &adjacent[x as usize] {
                    if distance[y as usize] == NONE && allowed(x, y) {
                        distance[y as usize] = distance[x as usize] + 1;
                        queue.push_back(y);
                    }
                }
            }
            distance
        };
        let level = bfs(graph.root, &|_, _| true);
        if level.contains(&NONE) {
            return Err(SimError("the graph is disconnected".into()));
        }
        let key = |r: u32| (level[r as usize], r);
        let mut up = vec![false; total * ports as usize];
        for (r, links) in adjacent.iter().enumerate() {
            for &(to, port) in links {
                up[(terminals as usize + r) * ports as usize + port as usize] =
                    key(to) < key(r as u32);
            }
        }
        let mut dist = vec![0u16; r_count * r_count];
        let mut down = vec![0u16; r_count * r_count];
        let mut up_down = vec![0u16; r_count * r_count];
        let mut order: Vec<u32> = (0..routers).collect();
        order.sort_by_key(|&r| key(r));
        for t in 0..routers {
            let row = t as usize * r_count;
            dist[row..row + r_count].copy_from_slice(&bfs(t, &|_, _| true));
            // Backwards from t over down links: x reaches t going down through y when the link
            // x -> y is down, i.e. x comes before y.
            down[row..row + r_count].copy_from_slice(&bfs(t, &|y, x| key(x) < key(y)));
            for &u in &order {
                let mut best = down[row + u as usize];
                for &(v, _) in &adjacent[u as usize] {
                    if key(v) < key(u) {
                        best = best.min(up_down[row + v as usize].saturating_add(1));
                    }
                }
                up_down[row + u as usize] = best;
            }
        }
        // The parser's grouping by (destination, router), in ports.
        let table = graph.table.as_ref().map(|table| {
            let hops = table
                .routes
                .iter()
                .map(|route| {
                    // The parser checked that `next` is a neighbour.
                    let port = adjacent[route.at as usize]
                        .iter()
                        .find(|&&(to, _)| to == route.next)
                        .map_or(0, |&(_, port)| port);
                    (port, route.class)
                })
                .collect();
            Box::new(Table { start: table.start.clone(), hops })
        });
        Ok(GraphNetwork {
            terminals,
            routers,
            ports,
            first,
            attached,
            router_of,
            neighbor,
            up,
            dist,
            down,
            up_down,
            names: graph.routers.iter().map(|r| r.name.clone()).collect(),
            latency,
            table,
        })
    }

    /// The table's hops (port, class change) at router index `u` towards router index `t`.
    #[inline]
    fn table_hops(&self, u: u32, t: u32) -> &[(u32, ClassChange)] {
        match &self.table {
            Some(table) => {
                let key = (t * self.routers + u) as usize;
                &table.hops[table.start[key] as usize..table.start[key + 1] as usize]
            }
            None => &[],
        }
    }

    /// The router index of a terminal.
    #[inline]
    pub(crate) fn router_of(&self, terminal: u32) -> u32 {
        self.router_of[terminal as usize]
    }

    #[inline]
    fn at(&self, table: &[u16], u: u32, t: u32) -> u16 {
        table[(t * self.routers + u) as usize]
    }

    /// Minimal router-to-router distance `dist(u, t)` (router indices).
    pub(crate) fn distance(&self, u: u32, t: u32) -> u32 {
        u32::from(self.at(&self.dist, u, t))
    }

    /// Shortest legal up*/down* distance `ud(u, t)` (router indices).
    #[cfg(test)]
    pub(crate) fn up_down_distance(&self, u: u32, t: u32) -> u32 {
        u32::from(self.at(&self.up_down, u, t))
    }

    /// Whether `port` of engine router `cur` is a router-to-router link.
    #[inline]
    fn is_link(&self, cur: u32, port: u32) -> bool {
        cur >= self.terminals
            && port >= self.attached[(cur - self.terminals) as usize]
            && self.neighbor[(cur * self.ports + port) as usize] != NO_LINK
    }

    /// Whether `port` of engine router `cur` is a down link.
    #[inline]
    pub(crate) fn is_down(&self, cur: u32, port: u32) -> bool {
        self.is_link(cur, port) && !self.up[(cur * self.ports + port) as usize]
    }

    /// The ejection port of `dest`'s router, if `cur` is it.
    #[inline]
    fn ejection(&self, cur: u32, dest: u32) -> Option<u32> {
        let r = self.router_of(dest);
        (cur == self.terminals + r).then(|| dest - self.first[r as usize])
    }

    /// Calls `visit` with every link port of router `cur` (an engine id >= N) and the router
    /// index it leads to.
    #[inline]
    fn links(&self, cur: u32, mut visit: impl FnMut(u32, u32)) {
        let r = (cur - self.terminals) as usize;
        let base = (cur * self.ports) as usize;
        for port in self.attached[r]..self.ports {
            let to = self.neighbor[base + port as usize];
            if to != NO_LINK {
                visit(port, to - self.terminals);
            }
        }
    }

    /// Calls `visit` with the ports starting a shortest legal up*/down* route from router `cur`
    /// (engine id) to router index `t != cur`, after a down link when `gone_down`.
    #[inline]
    fn up_down_ports(&self, cur: u32, t: u32, gone_down: bool, mut visit: impl FnMut(u32)) {
        let u = cur - self.terminals;
        let target =
            if gone_down { self.at(&self.down, u, t) } else { self.at(&self.up_down, u, t) };
        self.links(cur, |port, v| {
            let rest = if self.up[(cur * self.ports + port) as usize] {
                if gone_down { NONE } else { self.at(&self.up_down, v, t) }
            } else {
                self.at(&self.down, v, t)
            };
            if rest != NONE && rest + 1 == target {
                visit(port);
            }
        });
    }
}

impl Network for GraphNetwork {
    /// Output ports per engine router.
    fn ports(&self) -> u32 {
        self.ports
    }

    /// The neighbour table (see the module docs).
    fn neighbors(&self) -> Vec<u32> {
        self.neighbor.clone()
    }

    /// Calls `visit` with every minimal step from `cur` to terminal `dest != cur` and returns
    /// the remaining distance in links (terminal links included).
    fn minimal_steps(&self, cur: u32, dest: u32, mut visit: impl FnMut(Step)) -> u32 {
        let t = self.router_of(dest);
        if cur < self.terminals {
            visit(Step { port: 0, wraps: false });
            return 2 + self.distance(self.router_of(cur), t);
        }
        if let Some(port) = self.ejection(cur, dest) {
            visit(Step { port, wraps: false });
            return 1;
        }
        let u = cur - self.terminals;
        let here = self.at(&self.dist, u, t);
        self.links(cur, |port, v| {
            if self.at(&self.dist, v, t) + 1 == here {
                visit(Step { port, wraps: false });
            }
        });
        1 + u32::from(here)
    }

    /// Not bipartite in general: 0; no routing asks.
    fn parity(&self, _router: u32) -> u32 {
        0
    }

    /// `T(i)` for a terminal, the file's name for a router.
    fn describe(&self, id: u32) -> String {
        if id < self.terminals {
            format!("T({id})@{}", self.names[self.router_of(id) as usize])
        } else {
            self.names.get((id - self.terminals) as usize).cloned().unwrap_or_default()
        }
    }

    /// `port_i`.
    fn describe_port(&self, port: u32) -> String {
        format!("port_{port}")
    }

    /// The link's kind: `terminal-router`, `router-terminal` or `router-router`.
    fn link_class(&self, router: u32, _port: u32, downstream: u32) -> String {
        if router < self.terminals {
            "terminal-router".to_owned()
        } else if downstream < self.terminals {
            "router-terminal".to_owned()
        } else {
            "router-router".to_owned()
        }
    }
}

/// The text of a `k x k` mesh as a graph file: router `m<x>_<y>` at column x, row y, one
/// terminal each, declared row by row so that terminal i is node i of the built-in mesh (x
/// varies fastest), and its links; for `runner bench` and the tests.
pub(crate) fn mesh_text(k: u32) -> String {
    let mut text = format!("# {k} x {k} mesh\n");
    for y in 0..k {
        for x in 0..k {
            text.push_str(&format!("router m{x}_{y} terminals 1\n"));
        }
    }
    for y in 0..k {
        for x in 0..k {
            if x + 1 < k {
                text.push_str(&format!("link m{x}_{y} m{}_{y}\n", x + 1));
            }
            if y + 1 < k {
                text.push_str(&format!("link m{x}_{y} m{x}_{}\n", y + 1));
            }
        }
    }
    text
}

/// Which graph routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    UpDown,
    Minimal,
    Table,
}

/// Where a `table` routing keeps the message's VC class in the routing state: above the
/// [`ESCAPE`] and [`DOWN`] bits.
const CLASS_SHIFT: u32 = 2;

/// A configured graph routing: its mode and VC masks (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Routes {
    mode: Mode,
    /// Every VC.
    all: u64,
    /// The escape VCs (`minimal` and `table` with `escape up_down`: VC 0; `up_down`: every
    /// VC; `table` without an escape: none).
    escape: u64,
    /// The adaptive VCs (`minimal`: VCs 1..V; `table`: every VC but the escape's; `up_down`:
    /// none).
    adaptive: u64,
    /// `table`: the VCs of each class, the table's VCs split into contiguous groups.
    class_vcs: Vec<u64>,
    /// `table`: the class of each VC (0 for the escape VC).
    class_of: [u8; 64],
}

impl Routes {
    /// The routing of `scenario` if its topology is a graph (`None` for the other
    /// topologies), or why it cannot run.
    pub(crate) fn new(scenario: &Scenario) -> Result<Option<Routes>, SimError> {
        let Some(graph) = scenario.topology.graph() else {
            return Ok(None);
        };
        let name = scenario.routing.as_str();
        let mode = match scenario.routing {
            Routing::UpDown => Mode::UpDown,
            Routing::Minimal => Mode::Minimal,
            Routing::Table => Mode::Table,
            _ => {
                return Err(SimError(format!(
                    "a graph routes up_down (up*/down* on a spanning tree), minimal (shortest \
                     paths with an up*/down* escape) or table (the file's `route` lines), got \
                     routing {name}"
                )));
            }
        };
        super::flit_buffered_without_escape_channels(
            scenario,
            "a graph",
            "on a graph has no escape_channels setting (minimal's escape is VC 0)",
        )?;
        let v = scenario.virtual_channels;
        let all = if v >= 64 { u64::MAX } else { (1u64 << v) - 1 };
        let plain =
            Routes { mode, all, escape: 0, adaptive: 0, class_vcs: Vec::new(), class_of: [0; 64] };
        match mode {
            Mode::UpDown => Ok(Some(Routes { escape: all, ..plain })),
            Mode::Minimal => {
                if v < 2 {
                    return Err(SimError(format!(
                        "minimal routing on a graph needs virtual_channels >= 2 (VC 0 is the \
                         up*/down* escape channel, the others are adaptive), got {v}"
                    )));
                }
                Ok(Some(Routes { escape: 1, adaptive: all & !1, ..plain }))
            }
            Mode::Table => {
                let Some(table) = &graph.table else {
                    return Err(SimError(format!(
                        "routing table follows the graph file's `route` lines, and {} has none \
                         (docs/graph.md: Routing from a table)",
                        graph.file
                    )));
                };
                let escape = u32::from(table.escape);
                let classes = table.classes;
                if v < classes + escape {
                    return Err(SimError(format!(
                        "the routing table of {} uses {classes} VC class(es){}, so it needs \
                         virtual_channels >= {}, got {v}",
                        graph.file,
                        if table.escape { " besides the escape VC 0" } else { "" },
                        classes + escape
                    )));
                }
                let width = v - escape;
                let mut class_vcs = Vec::with_capacity(classes as usize);
                let mut class_of = [0u8; 64];
                for k in 0..classes {
                    let (lo, hi) = (k * width / classes, (k + 1) * width / classes);
                    let mut mask = 0u64;
                    for vc in escape + lo..escape + hi {
                        mask |= 1 << vc;
                        class_of[vc as usize] = k as u8;
                    }
                    class_vcs.push(mask);
                }
                let escape = if table.escape { 1 } else { 0 };
                Ok(Some(Routes { escape, adaptive: all & !escape, class_vcs, class_of, ..plain }))
            }
        }
    }

    /// Whether `vc` is an escape (up*/down*) VC of `minimal` routing or of a table with
    /// `escape up_down`.
    pub(crate) fn is_escape(&self, vc: u32) -> bool {
        self.mode != Mode::UpDown && vc == 0 && self.escape == 1
    }

    /// The adaptive VCs whose deadlock freedom rests on the escape VC 0 (granted only with an
    /// empty buffer, `Router::atomic_vcs`): VCs 1..V of `minimal` and of a table with an
    /// escape; none for `up_down` and a table without one.
    pub(crate) fn atomic_vcs(&self) -> u64 {
        if self.mode != Mode::UpDown && self.escape == 1 { !1 } else { 0 }
    }

    /// Fills `out` (cleared by the caller) with the allowed ports and VCs from `cur` towards
    /// `header.dest != cur`.
    #[inline]
    pub(crate) fn candidates(
        &self,
        net: &GraphNetwork,
        cur: u32,
        header: Header,
        out: &mut Vec<Candidate>,
    ) {
        let Header { dest, level, .. } = header;
        if cur < net.terminals {
            out.push(Candidate { port: 0, mask: self.all, fallback: 0 });
            return;
        }
        if let Some(port) = net.ejection(cur, dest) {
            out.push(Candidate { port, mask: self.all, fallback: 0 });
            return;
        }
        let t = net.router_of(dest);
        let gone_down = level & DOWN != 0;
        if self.mode == Mode::UpDown || level & ESCAPE != 0 {
            let mask = self.escape;
            net.up_down_ports(cur, t, gone_down, |port| {
                out.push(Candidate { port, mask, fallback: 0 })
            });
            return;
        }
        if self.mode == Mode::Table {
            let class = level >> CLASS_SHIFT;
            for &(port, change) in net.table_hops(cur - net.terminals, t) {
                let mask = self.class_vcs.get(change.apply(class) as usize).copied().unwrap_or(0);
                match out.iter_mut().find(|c| c.port == port) {
                    Some(candidate) => candidate.mask |= mask,
                    None => out.push(Candidate { port, mask, fallback: 0 }),
                }
            }
            if self.escape == 0 {
                return;
            }
        } else {
            net.minimal_steps(cur, dest, |step| {
                out.push(Candidate { port: step.port, mask: self.adaptive, fallback: 0 })
            });
        }
        let escape = self.escape;
        net.up_down_ports(cur, t, false, |port| match out.iter_mut().find(|c| c.port == port) {
            Some(candidate) => candidate.fallback |= escape,
            None => out.push(Candidate { port, mask: 0, fallback: escape }),
        });
    }

    /// The routing state after a hop from `cur` through `port` on VC `vc`: on the escape
    /// channels for good after an escape VC of a router-to-router link, and gone down after a
    /// down link taken there; a table's class after one of its VCs.
    #[inline]
    pub(crate) fn after_hop(
        &self,
        net: &GraphNetwork,
        cur: u32,
        port: u32,
        vc: u32,
        level: u32,
    ) -> u32 {
        if !net.is_link(cur, port) {
            return level;
        }
        if self.escape >> vc & 1 == 0 {
            return if self.mode == Mode::Table {
                level & (ESCAPE | DOWN) | u32::from(self.class_of[vc as usize]) << CLASS_SHIFT
            } else {
                level
            };
        }
        let level = if self.mode == Mode::UpDown { level } else { level | ESCAPE };
        if net.is_down(cur, port) { level | DOWN } else { level }
    }
}

#[cfg(test)]
mod table_tests;
#[cfg(test)]
pub(crate) mod tests;
