//! The router preset (`router: booksim` in a spec, `router=booksim` on the command line): it
//! sets BookSim's knobs wherever the key is left out, a key given overrides it, both paths
//! apply the one list (`RouterPreset::knobs`), and it works on every family.

use std::process::Command;

use runner::scenario::{
    Ejection, Injection, RouterPreset, Scenario, SwitchAllocator, VcAllocator, VcReallocation,
};
use runner::spec::{self, SpecSource};

fn scenarios(body: &str) -> Vec<Scenario> {
    let text = format!(
        "name: preset\nseed: 1\nscenario:\n{body}\nload:\n  rates: [0.001]\nmethods:\n  \
         simulation: {{cycles: 1000}}\n"
    );
    let source = SpecSource { path: "preset.yaml".into(), text, sha256: String::new() };
    let experiment = spec::parse(&source).unwrap_or_else(|e| panic!("{e:?}"));
    experiment.scenarios.into_iter().map(|p| p.scenario).collect()
}

/// BookSim's knobs, with `buffer_depth` given by the spec or the command line.
fn assert_booksim(s: &Scenario, depth: u32) {
    assert_eq!(s.buffer_depth, depth);
    assert_eq!(s.router_delay, 1);
    assert_eq!(s.vc_allocation_delay, Some(1));
    assert_eq!(s.switch_delay, Some(2));
    assert_eq!(s.credit_delay, Some(1));
    assert_eq!(s.input_speedup, Some(1));
    assert_eq!(s.switch_allocator, SwitchAllocator::Islip);
    assert_eq!(s.vc_allocator, VcAllocator::Islip);
    assert_eq!(s.vc_reallocation, VcReallocation::TailSent);
    assert_eq!(s.injection, Injection::Channel);
    assert_eq!(s.ejection, Ejection::Interleaved);
}

#[test]
fn a_spec_s_router_preset_sets_what_it_leaves_out() {
    let preset = scenarios(
        "  topology: {kind: torus, radix: 4, dimensions: 2}\n  routing: dimension_order\n  virtual_channels: 2\n  \
         router: booksim\n  buffer_depth: [4, 16]",
    );
    assert_eq!(preset.len(), 2);
    assert_booksim(&preset[0], 4);
    assert_booksim(&preset[1], 16);
    // The knobs it sets are ordinary fields: the same scenario written out is the same task.
    let written = scenarios(
        "  topology: {kind: torus, radix: 4, dimensions: 2}\n  routing: dimension_order\n  virtual_channels: 2\n  \
         buffer_depth: 4\n  router_delay: 1\n  vc_allocation_delay: 1\n  switch_delay: 2\n  \
         credit_delay: 1\n  input_speedup: 1\n  switch_allocator: islip\n  \
         vc_allocator: islip\n  \
         vc_reallocation: tail_sent\n  injection: channel\n  ejection: interleaved",
    );
    assert_eq!(written[0], preset[0]);
    // `ideal` sets nothing; on the dragonfly the preset applies too (its terminal links are
    // the injection channels).
    let ideal = scenarios(
        "  topology: {kind: torus, radix: 4, dimensions: 2}\n  routing: dimension_order\n  virtual_channels: 2\n  \
         router: ideal",
    );
    let plain = scenarios(
        "  topology: {kind: torus, radix: 4, dimensions: 2}\n  routing: dimension_order\n  \
         virtual_channels: 2",
    );
    assert_eq!(ideal, plain);
    let dragonfly = scenarios(
        "  topology: {kind: dragonfly, terminals_per_router: 1, routers_per_group: 2, \
         global_links_per_router: 1}\n  routing: minimal\n  virtual_channels: 2\n  \
         router: booksim",
    );
    assert_booksim(&dragonfly[0], 8);
    runner::sim::check(&dragonfly[0]).unwrap();
    assert_eq!(RouterPreset::Booksim.knobs().len(), 11);
}

#[test]
fn the_command_line_s_router_preset_sets_what_it_leaves_out() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_runner"))
            .args(["simulate", "radix=4", "dimensions=2", "--rate", "0.002", "--cycles", "2000"])
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let preset = run(&["router=booksim", "buffer_depth=4"]);
    let written = run(&[
        "buffer_depth=4",
        "router_delay=1",
        "vc_allocation_delay=1",
        "switch_delay=2",
        "credit_delay=1",
        "input_speedup=1",
        "switch_allocator=islip",
        "vc_allocator=islip",
        "vc_reallocation=tail_sent",
        "injection=channel",
        "ejection=interleaved",
    ]);
    assert_eq!(preset, written);
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(["simulate", "router=bookism", "--rate", "0.002"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("booksim"), "{stderr}");
}
