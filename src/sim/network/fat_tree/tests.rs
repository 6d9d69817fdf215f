//! Fat-tree tests: the wiring against the formulas of Sec. 3.1, subtrees and minimal routes,
//! exact zero-load latency for every pair, up-link choice and waiting, invariants under load.

use std::collections::BTreeSet;

use super::super::super::engine::{Engine, RunPlan};
use super::super::super::tests::{bfs, run_checking_invariants};
use super::super::super::topology::Geometry;
use super::super::super::{SimOptions, check, simulate};
use super::*;
use crate::measurement::Status;
use crate::scenario::{Ejection, Routing, Scenario, Topology, Traffic};

fn fat_tree(processors: u32, v: u32, m: u32) -> Scenario {
    Scenario {
        routing: Routing::UpDown,
        virtual_channels: v,
        message_length: m,
        ..Scenario::new(Topology::FatTree { processors })
    }
}

fn plan(warmup: u64, cycles: u64) -> RunPlan {
    RunPlan::fixed(warmup, cycles)
}

/// Sec. 3.1 written out as printed: `parent_p` of `S(l, a)` goes to `child_i` of
/// `S(l + 1, up)`; returns `(up, i)`.
fn paper_parent(l: u32, a: u32, p: u32) -> (u32, u32) {
    let two = |e: u32| 2u32.pow(e);
    let i = (a % two(l + 1)) / two(l - 1);
    let up = match p {
        0 => (a / two(l + 1)) * two(l) + a % two(l),
        _ => (a / two(l + 1)) * two(l) + (a + two(l - 1)) % two(l),
    };
    (up, i)
}

/// The level of the lowest common ancestors of processors `s` and `d`.
fn lca_level(s: u32, d: u32) -> u32 {
    (0..).find(|&h| s / 4u32.pow(h) == d / 4u32.pow(h)).unwrap_or(0)
}

const SIZES: [u32; 5] = [4, 16, 64, 256, 1024];

#[test]
fn wiring_follows_the_formulas_of_section_3_1() {
    for processors in SIZES {
        let n = levels(processors).unwrap();
        let tree = FatTree::new(processors).unwrap();
        let nb = tree.neighbors();
        let at = |router: u32, port: u32| nb[(router * PORTS + port) as usize];
        assert_eq!(tree.levels(), n);
        let switches: Vec<u32> = (1..=n).map(|l| processors / 2u32.pow(l + 1)).collect();
        assert_eq!(nb.len() as u64, routers(processors) * u64::from(PORTS));
        assert_eq!(routers(processors), u64::from(processors + switches.iter().sum::<u32>()));
        for (l, &count) in (1..=n).zip(&switches) {
            for a in 0..count {
                assert_eq!(tree.position(tree.router(l, a)), (l, a));
            }
        }
        // Processors: P(0, a) -- child_{a mod 4} of S(1, floor(a/4)); no other port.
        for a in 0..processors {
            let switch = tree.router(1, a / 4);
            assert_eq!(tree.position(a), (0, a));
            assert_eq!(at(a, 0), switch, "N={processors} P({a})");
            assert_eq!(at(switch, 2 + a % 4), a, "N={processors} P({a})");
            for port in 1..PORTS {
                assert_eq!(at(a, port), NO_LINK);
            }
        }
        // Switches: parent_p of S(l, a) -- child_i of S(l + 1, ...), both directions.
        for l in 1..n {
            for a in 0..switches[l as usize - 1] {
                for p in 0..2 {
                    let (up, i) = paper_parent(l, a, p);
                    assert!(up < switches[l as usize] && i < 4);
                    let (child, parent) = (tree.router(l, a), tree.router(l + 1, up));
                    assert_eq!(at(child, p), parent, "N={processors} S({l},{a}) parent_{p}");
                    assert_eq!(at(parent, 2 + i), child, "N={processors} S({l},{a}) parent_{p}");
                }
            }
        }
        for a in 0..switches[n as usize - 1] {
            let top = tree.router(n, a);
            assert_eq!((at(top, 0), at(top, 1)), (NO_LINK, NO_LINK), "top switches have no parent");
        }
        // Every switch has its four children and (below the top) both parents, and every link
        // is a pair of channels: the formulas wire each child port exactly once.
        let mut links = 0;
        for router in processors..routers(processors) as u32 {
            let (l, _) = tree.position(router);
            for port in 0..PORTS {
                let to = at(router, port);
                if port < 2 && l == n {
                    continue;
                }
                assert_ne!(to, NO_LINK, "N={processors} {} port {port}", tree.describe(router));
                let back = (0..PORTS).filter(|&q| at(to, q) == router).count();
                assert_eq!(back, 1, "the link {router}->{to} has one reverse channel");
                let (lt, _) = tree.position(to);
                assert_eq!(lt, if port < 2 { l + 1 } else { l - 1 });
                links += 1;
            }
        }
        assert_eq!(links + processors, nb.iter().filter(|&&to| to != NO_LINK).count() as u32);
    }
}

#[test]
fn every_switch_reaches_the_processors_of_its_block() {
    for processors in SIZES {
        let tree = FatTree::new(processors).unwrap();
        let nb = tree.neighbors();
        for router in processors..routers(processors) as u32 {
            let (l, a) = tree.position(router);
            let mut reached = BTreeSet::new();
            let mut stack = vec![router];
            while let Some(r) = stack.pop() {
                if r < processors {
                    reached.insert(r);
                    continue;
                }
                stack.extend((2..PORTS).map(|port| nb[(r * PORTS + port) as usize]));
            }
            let size = 4u32.pow(l);
            let block = a / 2u32.pow(l - 1);
            let expected: BTreeSet<u32> = (block * size..(block + 1) * size).collect();
            assert_eq!(reached, expected, "N={processors} S({l},{a})");
            // child_i leads to the processors whose base-4 digit l - 1 is i.
            for i in 0..4 {
                let child = nb[(router * PORTS + 2 + i) as usize];
                let below = if l == 1 { child } else { tree.block[child as usize] };
                assert_eq!(below % 4, i, "N={processors} S({l},{a}) child_{i}");
            }
        }
    }
}

#[test]
fn up_down_routes_are_the_minimal_paths_and_turn_at_the_common_ancestor() {
    for processors in [16, 64, 256] {
        let g = Geometry::new(&Topology::FatTree { processors }).unwrap();
        let tree = FatTree::new(processors).unwrap();
        let routers = routers(processors) as u32;
        for s in 0..processors {
            let shortest = bfs(&g, s, routers);
            for d in (0..processors).filter(|&d| d != s) {
                let h = lca_level(s, d);
                assert_eq!(g.distance(s, d), 2 * h);
                assert_eq!(shortest[d as usize], 2 * h, "{s}->{d}: 2h links is the minimum");
                // Walk the route, taking parent_0, parent_1, ... in turn while climbing.
                let (mut cur, mut hops, mut top, mut turn) = (s, 0, 0, 0);
                while cur != d {
                    let left = g.distance(cur, d);
                    let mut steps = Vec::new();
                    g.minimal_steps(cur, d, |step| steps.push(step.port));
                    let (l, _) = tree.position(cur);
                    let climbing = top < h;
                    let expected = match (l, climbing) {
                        (0, _) => 1,
                        (_, true) => 2,
                        (_, false) => 1,
                    };
                    assert_eq!(steps.len(), expected, "{s}->{d} at {}", tree.describe(cur));
                    for &port in &steps {
                        let next = g.downstream(g.channel(cur, port));
                        assert_eq!(g.distance(next, d) + 1, left, "{s}->{d}");
                        assert_eq!(port < 2, climbing, "up below level h, down from it");
                    }
                    cur = g.downstream(g.channel(cur, steps[turn % steps.len()]));
                    turn += 1;
                    hops += 1;
                    top = top.max(tree.position(cur).0);
                }
                assert_eq!((hops, top), (2 * h, h), "{s}->{d}");
            }
        }
    }
}

/// Sends one message through an otherwise empty network; returns (latency, hops).
fn lone_message(scenario: &Scenario, source: u32, dest: u32) -> (f64, f64) {
    let mut engine = Engine::new(scenario, 0.0, 1, &plan(0, 1)).unwrap();
    engine.open_window();
    engine.send(source, dest);
    for _ in 0..10_000 {
        engine.step();
        if engine.window.outstanding == 0 {
            return (engine.window.latency_sum, engine.window.hops_sum);
        }
    }
    panic!("message {source}->{dest} not delivered");
}

/// Zero-load latency of a message from processor `s` to processor `d != s`, derived in the
/// engine's conventions (`sim` module docs). Let `h` be the level of their lowest common
/// ancestors, the smallest `h` with `floor(s / 4^h) = floor(d / 4^h)`; the route has `2h`
/// links (`h` up, `h` down; every choice of up-link gives a minimal path). Generated in cycle
/// `g`, the message takes an injection VC at once and its header is routed in cycle `g` onto
/// the link `<0,1>`; each link takes one cycle, and a header that entered a router over a link
/// is routed `1 + router_delay` cycles after it moved, so the header reaches the destination
/// processor's buffer at the end of cycle `g + 2h - 1 + (2h - 1) router_delay` (the delay is
/// paid at the `2h - 1` switches; the destination processor is no router) and is ejected in
/// cycle `g + 2h + (2h - 1) router_delay`. With `buffer_depth >= 2` (or one flit) the flits
/// follow one per cycle, so the tail is ejected `M - 1` cycles later and the latency
/// (delivery at the end of that cycle, minus `g`) is `2h + M + (2h - 1) router_delay`: `hops +
/// M + router_delay` per router crossed, as on the tori. Greenberg and Guan's `M + D - 1` (eq. 1, 25) omits the
/// ejection cycle, so with `D = 2h` the simulator is exactly one cycle above it per pair.
fn zero_load_latency(s: u32, d: u32, scenario: &Scenario) -> f64 {
    let hops = 2 * lca_level(s, d);
    f64::from(hops + scenario.message_length + scenario.router_delay * (hops - 1))
}

#[test]
fn zero_load_latency_is_exact_for_every_pair() {
    let cases = [
        fat_tree(16, 1, 16),
        fat_tree(64, 1, 32),
        Scenario {
            router_delay: 2,
            buffer_depth: 3,
            ejection: Ejection::Unlimited,
            ..fat_tree(64, 2, 5)
        },
        Scenario { buffer_depth: 1, ..fat_tree(16, 3, 1) },
        fat_tree(256, 1, 16),
    ];
    for s in &cases {
        let Topology::FatTree { processors } = s.topology else { unreachable!() };
        for source in 0..processors {
            for dest in (0..processors).filter(|&d| d != source) {
                let (latency, hops) = lone_message(s, source, dest);
                assert_eq!(hops, f64::from(2 * lca_level(source, dest)), "{source}->{dest}");
                assert_eq!(latency, zero_load_latency(source, dest, s), "{s:?} {source}->{dest}");
            }
        }
    }
    // N = 1024: every destination of a few sources.
    let s = fat_tree(1024, 1, 64);
    for source in [0, 5, 700, 1023] {
        for dest in (0..1024).filter(|&d| d != source) {
            let (latency, _) = lone_message(&s, source, dest);
            assert_eq!(latency, zero_load_latency(source, dest, &s), "{source}->{dest}");
        }
    }
}

#[test]
fn worms_take_both_up_links_and_the_next_ones_wait_for_the_first_to_free() {
    // P0..P3 share S(1,0); each sends to the far quarter (h = 3) in cycle 0. The first two
    // headers take one up-link each (in the FCFS order of arrival) and, on link-disjoint
    // paths, arrive at zero-load latency; the other two find both up-links busy, wait until
    // the first tails leave the level-2 buffers (cycle M + 1) and take them in cycle M + 2,
    // M + 1 cycles late.
    let m = 8;
    let s = fat_tree(64, 1, m);
    for seed in 1..=5 {
        let mut engine = Engine::new(&s, 0.0, seed, &plan(0, 1)).unwrap();
        engine.open_window();
        for source in 0..4 {
            engine.send(source, 63 - source);
        }
        while engine.window.outstanding > 0 {
            engine.step();
            assert!(engine.now < 1_000);
        }
        let zero = f64::from(6 + m);
        assert_eq!(engine.window.latency_sum, 2.0 * zero + 2.0 * (zero + f64::from(m + 1)));
        let switch = engine.geometry.nodes; // S(1,0), the first switch.
        let first = engine.geometry.first_channel(switch);
        let up = |port: u32| engine.window.vc_flits[(first + port) as usize];
        assert_eq!((up(0), up(1)), (2 * u64::from(m), 2 * u64::from(m)), "seed {seed}");
    }
}

#[test]
fn a_lone_worm_picks_either_up_link_at_random() {
    let m = 4;
    let s = fat_tree(64, 1, m);
    let mut engine = Engine::new(&s, 0.0, 3, &plan(0, 1)).unwrap();
    engine.open_window();
    let messages = 400;
    for _ in 0..messages {
        engine.send(0, 63);
        while engine.window.outstanding > 0 {
            engine.step();
        }
    }
    let switch = engine.geometry.nodes;
    let first = engine.geometry.first_channel(switch) as usize;
    let parent_0 = engine.window.vc_flits[first] / u64::from(m);
    let parent_1 = engine.window.vc_flits[first + 1] / u64::from(m);
    assert_eq!(parent_0 + parent_1, messages);
    // Binomial(400, 1/2): standard deviation 10.
    assert!((160..=240).contains(&parent_0), "parent_0 taken {parent_0} of {messages} times");
}

#[test]
fn invariants_hold_under_load() {
    let cases = [
        (fat_tree(64, 1, 16), 0.02),
        (Scenario { buffer_depth: 4, ..fat_tree(64, 2, 8) }, 0.05),
        (Scenario { buffer_depth: 1, router_delay: 1, ..fat_tree(16, 3, 6) }, 0.06),
        (Scenario { ejection: Ejection::Unlimited, ..fat_tree(256, 4, 12) }, 0.03),
        (Scenario { traffic: Traffic::BitComplement, ..fat_tree(64, 1, 8) }, 0.03),
    ];
    for (s, rate) in &cases {
        assert!(check(s).is_ok(), "{s:?}");
        let engine = run_checking_invariants(s, *rate, 11, 3_000);
        assert!(engine.delivered_total > 200, "{s:?}: only {} delivered", engine.delivered_total);
    }
}

#[test]
fn light_load_is_zero_load_plus_little_waiting() {
    // Mean distance D = sum_h 2h (4^h - 4^(h-1)) / (N - 1) links (errata E-BFT-6).
    let s = fat_tree(64, 1, 16);
    let d: f64 =
        (1..=3).map(|h| f64::from(2 * h * (4u32.pow(h) - 4u32.pow(h - 1)))).sum::<f64>() / 63.0;
    let options = SimOptions { warmup_cycles: 2_000, cycles: 40_000, ..SimOptions::default() };
    // 5% of the model's maximum throughput (0.00998 for N = 64, M = 16).
    let m = simulate(&s, 0.0005, &options, 5, None).unwrap();
    assert_eq!(m.status, Status::Ok);
    let hops = m.hops.unwrap();
    assert!((hops - d).abs() < 0.1, "{hops} vs {d}");
    let extra = m.latency.unwrap() - hops - 16.0;
    assert!(extra > 0.0 && extra < 0.6, "latency - hops - M = {extra}");
    assert!((m.throughput.unwrap() - 0.0005).abs() < 0.00005);
}

#[test]
fn with_one_virtual_channel_single_and_unlimited_ejection_agree() {
    // One incoming link with one VC: a processor never has two messages to eject at once.
    let options = SimOptions { warmup_cycles: 1_000, cycles: 5_000, ..SimOptions::default() };
    let single = simulate(&fat_tree(64, 1, 16), 0.006, &options, 4, None).unwrap();
    let unlimited = Scenario { ejection: Ejection::Unlimited, ..fat_tree(64, 1, 16) };
    assert_eq!(simulate(&unlimited, 0.006, &options, 4, None).unwrap(), single);
    assert_eq!(single.status, Status::Ok);
    assert!(single.messages_measured.unwrap() > 1_000);
}

#[test]
fn overload_saturates_and_never_deadlocks() {
    let options = SimOptions { warmup_cycles: 1_000, cycles: 20_000, ..SimOptions::default() };
    for v in [1, 2] {
        let m = simulate(&fat_tree(64, v, 16), 0.2, &options, 2, None).unwrap();
        assert_eq!(m.status, Status::Saturated, "V = {v}: {:?}", m.detail);
    }
}

#[test]
fn nonsense_fat_tree_scenarios_are_refused() {
    let bad = [
        fat_tree(32, 1, 16),
        fat_tree(1, 1, 16),
        Scenario { routing: Routing::Duato, ..fat_tree(64, 4, 16) },
        Scenario { routing: Routing::Adaptive, ..fat_tree(64, 1, 16) },
        Scenario { routing: Routing::DimensionOrder, ..fat_tree(64, 1, 16) },
        Scenario { escape_channels: Some(1), ..fat_tree(64, 2, 16) },
        Scenario { traffic: Traffic::Tornado, ..fat_tree(64, 1, 16) },
        fat_tree(64, 65, 16),
    ];
    for s in &bad {
        let error = check(s).unwrap_err();
        assert!(!error.to_string().is_empty());
        assert!(simulate(s, 0.01, &SimOptions::default(), 1, None).is_err());
    }
    assert!(check(&fat_tree(4, 1, 16)).is_ok());
    let transpose = Scenario { traffic: Traffic::Transpose, ..fat_tree(256, 1, 16) };
    assert!(check(&transpose).is_ok());
}
