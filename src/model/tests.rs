//! Cross-model tests: the public interface, the shared validation and properties every model
//! must have (finite numbers, stable keys, a clean saturation boundary).

use super::*;
use crate::measurement::Status;

fn options() -> ModelOptions {
    ModelOptions::default()
}

#[test]
fn names_round_trip_and_every_model_is_described() {
    for model in ModelName::ALL {
        assert_eq!(ModelName::from_name(model.as_str()), Some(model));
        let info = info(model);
        assert_eq!(info.name, model);
        // A bibliographic reference (authors, title, venue, year), not a file name.
        assert!(!info.paper.contains(".txt"), "{}", info.paper);
        assert!(info.paper.contains(" 19") || info.paper.contains(" 20"), "{}", info.paper);
        assert!(!info.scenario.is_empty() && !info.params.is_empty());
        for p in info.params {
            assert!(!p.key.is_empty() && !p.doc.is_empty());
        }
    }
    assert_eq!(ModelName::from_name("fat-tree"), None);
    assert!(VERSION.starts_with("model-"));
}

#[test]
fn overview_example_runs() {
    let mut scenario = Scenario::new(Topology::FatTree { processors: 256 });
    scenario.routing = Routing::UpDown;
    let m = solve(ModelName::FatTree, &scenario, 0.002, &options()).unwrap();
    assert_eq!(m.status, Status::Ok);
    assert!(m.latency.is_some() && m.intermediate("w_up_1").is_some());
    let sat = saturation_rate(ModelName::FatTree, &scenario, &options()).unwrap();
    assert!(sat > 0.002);
}

#[test]
fn paper_scenarios_pass_check() {
    for model in ModelName::ALL {
        assert_eq!(check(model, &paper_scenario(model)), Ok(()), "{}", model.as_str());
    }
}

#[test]
fn each_model_rejects_the_other_papers_scenarios() {
    for model in ModelName::ALL {
        for other in ModelName::ALL {
            let result = check(model, &paper_scenario(other));
            assert_eq!(result.is_ok(), model == other, "{} on {}", model.as_str(), other.as_str());
            if let Err(e) = result {
                assert!(e.0.starts_with(model.as_str()), "{e}");
            }
        }
    }
}

#[test]
fn shared_parameter_checks() {
    for model in ModelName::ALL {
        let mut s = paper_scenario(model);
        s.message_length = 0;
        assert!(check(model, &s).unwrap_err().0.contains("message_length"));
        let mut s = paper_scenario(model);
        s.virtual_channels = 0;
        assert!(check(model, &s).is_err());
        if model != ModelName::CircuitTorusFaults {
            let mut s = paper_scenario(model);
            s.fault_rate = 0.1;
            assert!(check(model, &s).unwrap_err().0.contains("fault_rate"));
            let mut s = paper_scenario(model);
            s.message_length_second_moment = Some(2000.0);
            assert!(check(model, &s).unwrap_err().0.contains("fixed-length"));
            // E[M^2] = M^2 is a fixed length and accepted.
            s.message_length_second_moment = Some(1024.0);
            assert_eq!(check(model, &s), Ok(()));
            s.message_length_second_moment = None;
            s.message_length_distribution = crate::scenario::MessageLengths::Geometric;
            assert!(check(model, &s).unwrap_err().0.contains("message_length_distribution"));
        }
        if model != ModelName::BroadcastHypercube {
            let mut s = paper_scenario(model);
            s.broadcast_fraction = 0.5;
            assert!(check(model, &s).unwrap_err().0.contains("broadcast_fraction"));
        }
    }
}

#[test]
fn invalid_rates_are_errors_not_panics() {
    for model in ModelName::ALL {
        let s = paper_scenario(model);
        for rate in [f64::NAN, -1e-9, f64::INFINITY, f64::NEG_INFINITY] {
            let err = solve(model, &s, rate, &options()).unwrap_err();
            assert!(err.0.contains("rate"), "{err}");
        }
    }
}

fn assert_finite(m: &Measurement, context: &str) {
    let fields = [
        m.latency,
        m.network_latency,
        m.source_wait,
        m.unicast_latency,
        m.multiplexing_degree,
        m.channel_rate,
        m.blocking_probability,
        m.throughput,
        m.hops,
    ];
    for v in fields.into_iter().flatten() {
        assert!(v.is_finite(), "{context}: {m:?}");
    }
    for (key, v) in &m.intermediates {
        assert!(v.is_finite(), "{context}: {key} = {v}");
    }
    let mut keys: Vec<&str> = m.intermediates.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), m.intermediates.len(), "{context}: duplicate keys");
}

#[test]
fn every_point_is_finite_or_cleanly_saturated() {
    for model in ModelName::ALL {
        let s = paper_scenario(model);
        let sat = saturation_rate(model, &s, &options()).unwrap();
        let reference = solve(model, &s, 0.5 * sat, &options()).unwrap();
        let keys: Vec<&String> = reference.intermediates.iter().map(|(k, _)| k).collect();
        for i in 0..=300 {
            let rate = sat * f64::from(i) / 100.0;
            let m = solve(model, &s, rate, &options()).unwrap();
            let context = format!("{} at {rate}", model.as_str());
            assert_finite(&m, &context);
            match m.status {
                Status::Ok => {
                    assert!(rate < sat * (1.0 + 1e-6), "{context}");
                    assert_eq!(m.throughput, Some(rate));
                    assert!(m.detail.is_none());
                    // Stable keys: the same keys in the same order at every load.
                    let got: Vec<&String> = m.intermediates.iter().map(|(k, _)| k).collect();
                    assert_eq!(got, keys, "{context}");
                }
                Status::Saturated => {
                    assert!(rate > sat * (1.0 - 1e-6), "{context}");
                    assert!(m.latency.is_none() && m.detail.is_some(), "{context}");
                }
                Status::Deadlock | Status::Imprecise => {
                    panic!("{context}: a model never deadlocks and is never imprecise")
                }
            }
        }
    }
}

#[test]
fn saturation_rate_is_where_the_status_flips() {
    for model in ModelName::ALL {
        let s = paper_scenario(model);
        let sat = saturation_rate(model, &s, &options()).unwrap();
        let below = solve(model, &s, sat * (1.0 - 1e-6), &options()).unwrap();
        let above = solve(model, &s, sat * (1.0 + 1e-6), &options()).unwrap();
        assert_eq!(below.status, Status::Ok, "{}", model.as_str());
        assert_eq!(above.status, Status::Saturated, "{}", model.as_str());
    }
}

#[test]
fn zero_load_latencies_of_the_paper_scenarios() {
    // scouting K = 3, k = 8: M + D + 2K - 1 = 32 + 4 + 5 = 41 (E-SS-3).
    // broadcast n = 6: n (M + Delta) = 6 * 33 = 198 (E-BC-3).
    // nbc k = 8: M + 512/126 (exact mean distance).
    // fat_tree N = 1024: M + D - 1 with D = sum_h 2h (4^h - 4^(h-1)) / 1023 (E-BFT-6).
    let d_bft: f64 =
        (1..=5).map(|h| 2.0 * f64::from(h) * (4f64.powi(h) - 4f64.powi(h - 1)) / 1023.0).sum();
    let expected = [
        (ModelName::ScoutingTorus, 41.0),
        (ModelName::BroadcastHypercube, 198.0),
        (ModelName::NbcTorus, 32.0 + 512.0 / 126.0),
        (ModelName::FatTree, 31.0 + d_bft),
    ];
    for (model, latency) in expected {
        let got = solve(model, &paper_scenario(model), 0.0, &options()).unwrap();
        let l = got.latency.unwrap();
        assert!((l - latency).abs() <= 1e-12 * latency, "{}: {l} vs {latency}", model.as_str());
    }
    // circuit, theta = 0: M + 3d = 32 + 12 (E-CS-8).
    let mut s = paper_scenario(ModelName::CircuitTorusFaults);
    s.fault_rate = 0.0;
    let got = solve(ModelName::CircuitTorusFaults, &s, 0.0, &options()).unwrap();
    assert_eq!(got.latency, Some(44.0));
}
