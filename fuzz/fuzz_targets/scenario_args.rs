//! Fuzz target: the command line's `key=value` scenario arguments and `sim::check`.
//!
//! The input is split into arguments at whitespace (as a shell would, without quoting) and
//! applied to `runner simulate`'s default scenario by `runner::cli::scenario_args::apply`.
//! Neither the parser nor `sim::check` (nor any model's `check`) may panic, and whatever the
//! parser accepts must lie within `scenario::bounds`, the bounds specs apply. Run it with
//! `cargo fuzz run scenario_args` from the repository root; `docs/fuzzing.md` has the seeds
//! and the record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runner::cli::scenario_args;
use runner::model::{self, ModelName};
use runner::scenario::{Routing, Scenario, Topology, bounds};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let pairs: Vec<String> = text.split_whitespace().take(32).map(String::from).collect();
    let mut scenario = Scenario {
        routing: Routing::DimensionOrder,
        virtual_channels: 2,
        ..Scenario::new(Topology::Torus { radix: 8, dimensions: 2 })
    };
    match scenario_args::apply(&mut scenario, &pairs) {
        Ok(()) => {
            assert!(bounds::check(&scenario).is_ok(), "accepted out of bounds: {scenario:?}");
            let _ = runner::sim::check(&scenario);
            for model in ModelName::ALL {
                let _ = model::check(model, &scenario);
            }
        }
        Err(error) => assert!(!error.0.is_empty(), "a refusal without a message"),
    }
});
