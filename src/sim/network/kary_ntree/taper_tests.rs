//! Tapered k-ary n-tree tests (`up_links_per_switch` u < k): the wiring against the extended
//! generalised fat-tree's definition, subtrees, minimal routes and exact zero-load latency for
//! every pair, acyclic channel dependencies, and the throughput the uplinks allow (d-mod-k's
//! destination-only routes on a tapered tree are in `tests.rs`, beside the full tree's).

use std::collections::BTreeSet;

use super::super::super::check;
use super::super::super::tests::{
    acyclic, lone_message_with, route_dependencies, run_checking_invariants, verdict_at,
};
use super::super::super::topology::Geometry;
use super::*;
use crate::measurement::Status;
use crate::scenario::{Routing, Scenario, Topology, Traffic};

/// Tapered sizes (k, n, u), and a full one for comparison.
const TAPERED: [(u32, u32, u32); 6] =
    [(4, 2, 2), (3, 3, 2), (4, 3, 1), (6, 2, 2), (4, 3, 3), (2, 3, 2)];

fn topology(k: u32, n: u32, u: u32) -> Topology {
    Topology::KaryNTree { radix: k, dimensions: n, up_links_per_switch: (u != k).then_some(u) }
}

fn tree(k: u32, n: u32, u: u32, routing: Routing, v: u32, m: u32) -> Scenario {
    Scenario { routing, virtual_channels: v, message_length: m, ..Scenario::new(topology(k, n, u)) }
}

/// The level of the nearest common ancestors of terminals `s != d`.
fn nca_level(k: u32, s: u32, d: u32) -> u32 {
    (1..).find(|&h| s / k.pow(h) == d / k.pow(h)).unwrap_or(0)
}

/// XGFT(n; k, ..., k; 1, u, ..., u) (Öhring et al.): a level-l switch is labelled by the
/// terminal digits `a_(l+1) .. a_n` of the block below it and the parent choices
/// `b_2 .. b_l`; a level-l and a level-(l+1) switch are linked exactly when their labels agree
/// but for digit `l + 1` (`a_(l+1)` below, `b_(l+1)` above). Checked here on the labels
/// decoded from the words (`w = b + u^(l-1) a`), with every count (the blocks below each
/// switch are checked in `tests.rs`, beside the full tree's).
#[test]
fn tapered_wiring_follows_the_xgft_definition() {
    for (k, n, u) in TAPERED {
        let t = KaryNTree::new(k, n, u).unwrap();
        let nb = t.neighbors();
        let ports = t.ports();
        assert_eq!(ports, k + u);
        let at = |router: u32, port: u32| nb[(router * ports + port) as usize];
        let terminals = k.pow(n);
        let count = |l: u32| k.pow(n - l) * u.pow(l - 1);
        assert_eq!(t.routers(), terminals + (1..=n).map(count).sum::<u32>());
        // (a digits from a_(l+1) up, b digits from b_2 up) of switch (l, w).
        let label = |l: u32, w: u32| {
            let lower = u.pow(l - 1);
            let (b, a) = (w % lower, w / lower);
            let a_digits: Vec<u32> = (0..n - l).map(|i| (a / k.pow(i)) % k).collect();
            let b_digits: Vec<u32> = (0..l - 1).map(|i| (b / u.pow(i)) % u).collect();
            (a_digits, b_digits)
        };
        for l in 1..=n {
            for w in 0..count(l) {
                let router = t.switch(l, w);
                assert_eq!(t.position(router), (l, w));
                let (a, b) = label(l, w);
                // Down: k distinct children through down_0 .. down_(k-1).
                let children: BTreeSet<u32> = (u..u + k).map(|p| at(router, p)).collect();
                assert_eq!(children.len(), k as usize);
                assert!(!children.contains(&NO_LINK));
                let ups: Vec<u32> = (0..u).map(|j| at(router, j)).collect();
                if l == n {
                    assert!(ups.iter().all(|&x| x == NO_LINK), "top switches have no up links");
                    continue;
                }
                for (j, &up) in ups.iter().enumerate() {
                    let (pl, pw) = t.position(up);
                    assert_eq!(pl, l + 1);
                    let (pa, pb) = label(pl, pw);
                    // Equal but for digit l + 1: a_(l+1) below, b_(l+1) = j above.
                    assert_eq!(pa[..], a[1..], "{k},{n},{u}: S({l},{w}) up_{j}");
                    assert_eq!(pb[..l as usize - 1], b[..], "{k},{n},{u}: S({l},{w}) up_{j}");
                    assert_eq!(pb[l as usize - 1], j as u32);
                    // The parent reaches it back through down_(a_(l+1)).
                    let back: Vec<u32> = (0..ports).filter(|&q| at(up, q) == router).collect();
                    assert_eq!(back, vec![u + a[0]]);
                }
            }
        }
    }
}

#[test]
fn tapered_zero_load_latency_is_exact_and_dependencies_acyclic() {
    for (k, n, u) in TAPERED {
        // Minimal routes on these sizes: `tests.rs`, beside the full tree's.
        let g = Geometry::new(&topology(k, n, u)).unwrap();
        let terminals = k.pow(n);
        for (routing, router_delay) in [(Routing::UpDown, 0), (Routing::DModK, 1)] {
            let s = Scenario { router_delay, ..tree(k, n, u, routing, 2, 5) };
            for source in 0..terminals {
                for dest in (0..terminals).filter(|&d| d != source) {
                    let hops = 2 * nca_level(k, source, dest);
                    let (latency, measured) = lone_message_with(&s, source, dest, None);
                    assert_eq!(measured, f64::from(hops), "{k},{n},{u} {source}->{dest}");
                    let zero = hops + s.message_length + router_delay * (hops - 1);
                    assert_eq!(latency, f64::from(zero), "{k},{n},{u} {source}->{dest}");
                }
            }
        }
        let edges = route_dependencies(&g, terminals, true);
        assert!(acyclic(&edges), "{k}-ary {n}-tree u = {u}: a dependency cycle");
    }
}

/// Uniform traffic on the 4-ary 2-tree: a leaf's k terminals send a fraction
/// `(N - k) / (N - 1)` of their flits up its u links, so the tree carries at most
/// `u (N - 1) / (k (N - k))` flits per terminal and cycle: 0.625 with u = 2, 0.3125 with u = 1
/// (the full tree's bound, 1.25, is above the injection limit). Measured saturation with V = 4
/// (docs/kary_ntree.md): 0.855, 0.548 and 0.274 flits per terminal and cycle for u = 4, 2, 1,
/// 88% of each tapered tree's bound.
#[test]
fn a_tapered_tree_carries_what_its_up_links_allow() {
    let run = |u, flits| verdict_at(&tree(4, 2, u, Routing::UpDown, 4, 8), Traffic::Uniform, flits);
    assert_eq!(run(4, 0.75), Status::Ok);
    assert_eq!(run(2, 0.48), Status::Ok);
    assert_eq!(run(2, 0.65), Status::Saturated);
    assert_eq!(run(1, 0.24), Status::Ok);
    assert_eq!(run(1, 0.33), Status::Saturated);
    // Past saturation the invariants hold and nothing deadlocks.
    for routing in [Routing::UpDown, Routing::UpDownRandom, Routing::DModK] {
        let engine = run_checking_invariants(&tree(4, 3, 2, routing, 1, 8), 0.1, 5, 3_000);
        assert!(engine.delivered_total > 200, "{routing:?}");
    }
}

#[test]
fn up_links_beyond_the_radix_are_refused_and_k_is_the_full_tree() {
    for u in [0, 5] {
        let error = check(&tree(4, 2, u, Routing::UpDown, 1, 4)).expect_err("refused").0;
        assert!(error.contains("1 <= up_links_per_switch <= radix"), "{error}");
    }
    // u = k is the full tree, one network with one identity.
    let full = Topology::from_counts(crate::scenario::TopologyKind::KaryNTree, |key| match key {
        "radix" => Some(4),
        "dimensions" => Some(2),
        "up_links_per_switch" => Some(4),
        _ => None,
    });
    assert_eq!(full, Ok(topology(4, 2, 4)));
    assert_eq!(topology(4, 2, 4).count("up_links_per_switch"), Some(4));
    assert_eq!(topology(4, 2, 2).label(), "4-ary 2-tree u=2");
    assert_eq!(
        serde_json::to_string(&topology(4, 2, 4)).unwrap(),
        r#"{"kind":"kary_ntree","radix":4,"dimensions":2}"#
    );
}
