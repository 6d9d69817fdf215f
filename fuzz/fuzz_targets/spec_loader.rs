//! Fuzz target: the spec loader and validator on arbitrary text.
//!
//! `runner::spec::parse` must never panic, and a refusal must carry at least one problem with a
//! place in the file (or concern the file as a whole). Run it with `cargo fuzz run spec_loader`
//! from the repository root; `docs/fuzzing.md` has the seeds, the dictionary and the record.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use runner::spec::{SpecSource, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let source = SpecSource {
        path: PathBuf::from("fuzz.yaml"),
        text: text.to_string(),
        sha256: String::new(),
    };
    if let Err(error) = parse(&source) {
        assert!(!error.diagnostics.is_empty(), "a refusal without a problem");
        // YAML breaks lines at LF, CRLF and a lone CR alike.
        let lines = text.replace("\r\n", "\n").matches(['\n', '\r']).count() as u64 + 2;
        for diagnostic in &error.diagnostics {
            match diagnostic.location {
                Some(at) => {
                    assert!(at.line() >= 1 && at.line() <= lines, "{at:?} outside the file")
                }
                None => assert!(
                    diagnostic.message.contains("the spec is empty"),
                    "no location for {:?}",
                    diagnostic.message
                ),
            }
        }
        let _ = error.to_string();
    }
});
