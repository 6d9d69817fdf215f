//! Model vs simulation at light load (20% of the model's saturation rate), one test per
//! model/simulator overlap. The numbers behind every bound, the exact commands and the
//! explanation of the systematic offsets are in `docs/validation.md`.
//!
//! Each configuration is solved with `runner solve MODEL ... --saturation --json`, then with
//! `--rate 0.2 x saturation`, and simulated at the same rate with `runner simulate` for the
//! seeds in [`SEEDS`] (run concurrently). The relative error is
//! `|model - mean(sim)| / mean(sim)`, as in the report's agreement table.
//!
//! runner's light-load requirement is 5% (`docs/validation.md`). Where a configuration reaches it the bound is 5%; where it does not,
//! the bound is the error measured with exactly this budget rounded up plus a margin of about
//! two percentage points (the simulator is deterministic per seed, so the margin only absorbs
//! small legitimate changes of the model or the simulator), and the gap is documented in
//! `docs/validation.md`. Do not raise a bound without updating that table.

use std::process::{Child, Stdio};

use serde_json::Value;

use crate::common::{Scratch, stderr, stdout};

/// Measurement window and warm-up of every simulation here (opt-level-1 debug build: each
/// test stays well under 20 s on two cores).
const CYCLES: &str = "100000";
const WARMUP: &str = "10000";
/// Replications; the results are a pure function of the seed.
const SEEDS: [u64; 3] = [1, 2, 3];
/// Load, as a fraction of the model's saturation rate.
const LOAD: f64 = 0.2;
/// The light-load requirement: simulated mean latency within 5% of the model's.
const TARGET: f64 = 0.05;

/// One overlap configuration.
struct Case {
    label: String,
    model: &'static str,
    model_params: Vec<String>,
    sim_params: Vec<String>,
    /// Field of the model's answer that corresponds to the simulated latency.
    model_field: &'static str,
    /// Largest accepted relative error (a fraction).
    bound: f64,
}

struct Outcome {
    rate: f64,
    model: f64,
    sim: f64,
    error: f64,
}

fn json(scratch: &Scratch, args: &[String]) -> Value {
    let output = scratch.command().args(args).output().expect("run runner");
    assert!(output.status.success(), "runner {}: {}", args.join(" "), stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap_or_else(|e| {
        panic!("runner {}: bad JSON ({e}): {}", args.join(" "), stdout(&output))
    })
}

fn number(value: &Value, key: &str, what: &str) -> f64 {
    value[key].as_f64().unwrap_or_else(|| panic!("{what}: no number `{key}` in {value}"))
}

fn evaluate(scratch: &Scratch, case: &Case) -> Outcome {
    let mut args = vec!["solve".to_string(), case.model.to_string()];
    args.extend(case.model_params.iter().cloned());
    let mut saturation_args = args.clone();
    saturation_args.extend(["--saturation".to_string(), "--json".to_string()]);
    let saturation = number(&json(scratch, &saturation_args), "saturation_rate", &case.label);
    let rate = LOAD * saturation;

    let mut solve_args = args;
    solve_args.extend(["--rate".to_string(), format!("{rate}"), "--json".to_string()]);
    let solved = json(scratch, &solve_args);
    assert_eq!(solved["status"], "ok", "{}: model at {rate}: {solved}", case.label);
    let model = number(&solved, case.model_field, &case.label);

    let children: Vec<(u64, Child)> = SEEDS
        .iter()
        .map(|&seed| {
            let child = scratch
                .command()
                .arg("simulate")
                .args(&case.sim_params)
                .args(["--rate", &format!("{rate}"), "--cycles", CYCLES, "--warmup-cycles", WARMUP])
                .args(["--seed", &seed.to_string(), "--json", "-q"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn runner simulate");
            (seed, child)
        })
        .collect();
    let mut latencies = Vec::new();
    for (seed, child) in children {
        let output = child.wait_with_output().expect("wait for runner simulate");
        assert!(output.status.success(), "{} seed {seed}: {}", case.label, stderr(&output));
        let simulated: Value = serde_json::from_str(&stdout(&output)).expect("simulate JSON");
        assert_eq!(simulated["status"], "ok", "{} seed {seed} at {rate}: {simulated}", case.label);
        latencies.push(number(&simulated, "latency", &case.label));
    }
    let sim = latencies.iter().sum::<f64>() / latencies.len() as f64;
    Outcome { rate, model, sim, error: (model - sim).abs() / sim }
}

fn check(cases: &[Case]) {
    let scratch = Scratch::new();
    let mut failures = Vec::new();
    for case in cases {
        let outcome = evaluate(&scratch, case);
        let line = format!(
            "{}: rate {:.6}, model {:.2}, simulation {:.2}, error {:.2}% (bound {:.0}%)",
            case.label,
            outcome.rate,
            outcome.model,
            outcome.sim,
            100.0 * outcome.error,
            100.0 * case.bound
        );
        eprintln!("{line}");
        if outcome.error.is_nan() || outcome.error > case.bound {
            failures.push(line);
        }
    }
    assert!(failures.is_empty(), "light-load agreement lost:\n{}", failures.join("\n"));
}

/// Duato-Nbc, 8x8 torus, the paper's V = 10, M = 32 and 64. The 5% target is not reached:
/// measured 8.3% and 13.4% (model below simulation); docs/validation.md explains the gap
/// (mostly single-port ejection contention, which the model leaves out).
#[test]
fn nbc_torus_matches_simulation_at_light_load() {
    let cases: Vec<Case> = [(32, 0.10), (64, 0.15)]
        .into_iter()
        .map(|(m, bound)| Case {
            label: format!("nbc 8x8 V=10 M={m}"),
            model: "nbc_torus",
            model_params: vec![
                "radix=8".into(),
                "virtual_channels=10".into(),
                format!("message_length={m}"),
            ],
            sim_params: vec![
                "topology=torus".into(),
                "radix=8".into(),
                "dimensions=2".into(),
                "routing=nbc".into(),
                "virtual_channels=10".into(),
                format!("message_length={m}"),
            ],
            model_field: "latency",
            bound,
        })
        .collect();
    check(&cases);
}

/// Unicast traffic (beta = 0) in the paper's hypercubes, n = 6, 7, 8, V = 2 and 4,
/// M = 32, 64, 128, Duato routing, with the paper's ejection assumption (messages consumed on
/// arrival: `ejection=unlimited`). The model's `latency` is the broadcast latency even at
/// beta = 0, so the comparison uses `unicast_latency`. V = 4 meets 5% except n = 8, M = 128
/// (5.1%); V = 2 does not (7.4% to 9.0%, model *above* simulation: Dally's chain puts about
/// twice as many channels at two busy VCs as the simulator measures, docs/validation.md).
#[test]
fn broadcast_hypercube_unicast_matches_simulation_at_light_load() {
    // (n, V, M, bound): measured errors in docs/validation.md.
    let table: [(u32, u32, u32, f64); 18] = [
        (6, 2, 32, 0.11),
        (6, 2, 64, 0.11),
        (6, 2, 128, 0.10),
        (6, 4, 32, TARGET),
        (6, 4, 64, TARGET),
        (6, 4, 128, TARGET),
        (7, 2, 32, 0.11),
        (7, 2, 64, 0.11),
        (7, 2, 128, 0.10),
        (7, 4, 32, TARGET),
        (7, 4, 64, TARGET),
        (7, 4, 128, TARGET),
        (8, 2, 32, 0.11),
        (8, 2, 64, 0.11),
        (8, 2, 128, 0.10),
        (8, 4, 32, TARGET),
        (8, 4, 64, TARGET),
        (8, 4, 128, 0.08),
    ];
    let cases: Vec<Case> = table
        .into_iter()
        .map(|(n, v, m, bound)| Case {
            label: format!("hypercube n={n} V={v} M={m} beta=0"),
            model: "broadcast_hypercube",
            model_params: vec![
                "topology=hypercube".into(),
                format!("dimensions={n}"),
                format!("virtual_channels={v}"),
                format!("message_length={m}"),
                "broadcast_fraction=0".into(),
            ],
            sim_params: vec![
                "topology=hypercube".into(),
                format!("dimensions={n}"),
                "routing=duato".into(),
                format!("virtual_channels={v}"),
                format!("message_length={m}"),
                "ejection=unlimited".into(),
            ],
            model_field: "unicast_latency",
            bound,
        })
        .collect();
    check(&cases);
}

/// Scouting switching with K = 0 (wormhole) against the simulator's fully adaptive wormhole
/// routing without deadlock avoidance (it did not deadlock at 20% load for any seed here):
/// 8x8 and 16x16, V = 1 and 6, M = 32 and 64. The 5% target is not reached anywhere
/// (6% to 19%, model below simulation): about 1 cycle comes from the model's `M + D - 1`
/// zero-load convention with `D = k/2`, the rest from load effects the K = 0 model does not
/// carry (its service time stays `M + D - 1` at every load, errata E-SS-6).
#[test]
fn scouting_torus_k0_matches_adaptive_wormhole_at_light_load() {
    // (k, V, M, bound)
    let table: [(u32, u32, u32, f64); 8] = [
        (8, 1, 32, 0.12),
        (8, 1, 64, 0.12),
        (8, 6, 32, 0.14),
        (8, 6, 64, 0.15),
        (16, 1, 32, 0.08),
        (16, 1, 64, 0.08),
        (16, 6, 32, 0.15),
        (16, 6, 64, 0.21),
    ];
    let cases: Vec<Case> = table
        .into_iter()
        .map(|(k, v, m, bound)| Case {
            label: format!("scouting K=0 {k}x{k} V={v} M={m}"),
            model: "scouting_torus",
            model_params: vec![
                format!("radix={k}"),
                format!("virtual_channels={v}"),
                format!("message_length={m}"),
                "scouting_distance=0".into(),
            ],
            sim_params: vec![
                "topology=torus".into(),
                format!("radix={k}"),
                "dimensions=2".into(),
                "routing=adaptive".into(),
                format!("virtual_channels={v}"),
                format!("message_length={m}"),
            ],
            model_field: "latency",
            bound,
        })
        .collect();
    check(&cases);
}

/// The butterfly fat-tree of Greenberg and Guan's Fig. 3: N = 1024 processors, M = 16, 32 and
/// 64, one channel per link, up/down routing, destinations consuming on arrival
/// (`ejection=unlimited`, the paper's assumption 4). All three meet the 5% target (measured
/// 4.42%, 2.67% and 1.45%, model below simulation, of which one cycle is the simulator's
/// ejection cycle that the model's `M + D - 1` omits; docs/validation.md, "Butterfly
/// fat-tree"). M = 16 is above 3.5%, so its bound is the measured error plus the margin.
#[test]
fn fat_tree_matches_simulation_at_light_load() {
    let cases: Vec<Case> = [(16, 0.07), (32, TARGET), (64, TARGET)]
        .into_iter()
        .map(|(m, bound)| Case {
            label: format!("fat_tree N=1024 M={m}"),
            model: "fat_tree",
            model_params: vec!["processors=1024".into(), format!("message_length={m}")],
            sim_params: vec![
                "topology=fat_tree".into(),
                "processors=1024".into(),
                "routing=up_down".into(),
                "virtual_channels=1".into(),
                format!("message_length={m}"),
                "ejection=unlimited".into(),
            ],
            model_field: "latency",
            bound,
        })
        .collect();
    check(&cases);
}
