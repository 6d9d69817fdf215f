//! Text from a user or a program reaches a terminal or a page with its control characters
//! shown, never sent: the command listing of `validate` and `plan`, error messages that echo
//! spec values, and an external program's `detail` in `report.md` and `index.html`.

use crate::common::{Scratch, stderr, stdout};

/// A model program that answers every request `unsupported`, with a `detail` that would clear
/// the line and ring the bell on a terminal.
const PROGRAM: &str = r#"import json, sys
json.load(sys.stdin)
print(json.dumps({"status": "unsupported", "detail": "\u001b[2K\rspoofed detail\u0007"}))
"#;

/// The spec: its command's last argument returns the cursor and erases the line, so a raw
/// listing would show only `python3 harmless.py`.
const SPEC: &str = r#"name: spoof
scenario:
  topology: {kind: torus, radix: 4, dimensions: 2}
  routing: dimension_order
  message_length: 8
load: {rates: [0.002]}
methods:
  external:
    - name: spoof
      kind: model
      command: [python3, spoof.py, "\r\e[2Kpython3 harmless.py"]
      inputs: [spoof.py]
      version: '1'
report: {figures: [], tables: [results]}
"#;

fn raw_controls(text: &str) -> Vec<char> {
    text.chars().filter(|c| c.is_control() && !matches!(c, '\n' | '\t')).collect()
}

/// `validate` and `plan` list the command with its argument shell-quoted and its control
/// characters shown: what a user reviews is exactly what runs, and nothing rewrites the line.
#[test]
fn the_command_listing_shows_control_characters_and_quotes_each_argument() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("spoof.py"), PROGRAM).expect("program");
    scratch.spec("spoof.yaml", SPEC);
    for command in ["validate", "plan"] {
        let output = scratch.run(&[command, "spoof.yaml"]);
        let out = stdout(&output);
        assert!(output.status.success(), "{command}: {}", stderr(&output));
        assert_eq!(raw_controls(&out), Vec::<char>::new(), "{command}: {out:?}");
        assert!(
            out.contains(": python3 spoof.py $'\\r\\e[2Kpython3 harmless.py'\n"),
            "{command}: the argument as a shell reads it: {out}"
        );
    }
}

/// A spec value echoed raw in an error message (here a field name in `zip`) is shown with its
/// control characters; before, the message erased its own line on a terminal.
#[test]
fn error_messages_show_the_control_characters_of_spec_values() {
    let scratch = Scratch::new();
    scratch.spec(
        "bad.yaml",
        &SPEC.replace(
            "  message_length: 8\n",
            "  message_length: [8, 16]\n  virtual_channels: [2, 4]\n  zip: [[\"\\r\\e[2Kvirtual_channels\", message_length]]\n",
        ),
    );
    let output = scratch.run(&["validate", "bad.yaml"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(raw_controls(&err), Vec::<char>::new(), "{err:?}");
    assert!(err.contains("`\\r\\e[2Kvirtual_channels`"), "the value, visibly: {err}");
}

/// An external program's `detail` (the row's `error`) reaches the pages and tables of the
/// report, and the run's messages, with its escape and bell characters shown.
#[test]
fn an_external_detail_reaches_the_report_pages_escaped() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("spoof.py"), PROGRAM).expect("program");
    scratch.spec("spoof.yaml", SPEC);
    let output = scratch.run(&["run", "spoof.yaml"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(raw_controls(&stderr(&output)), Vec::<char>::new(), "{}", stderr(&output));
    let bundle = scratch.path().join("reports/spoof");
    for page in ["report.md", "index.html", "tables/results.md", "tables/results.csv"] {
        let text = std::fs::read_to_string(bundle.join(page)).expect(page);
        assert_eq!(raw_controls(&text), Vec::<char>::new(), "{page}");
        assert!(text.contains("spoofed detail\\x07"), "{page}: the detail, visibly");
        assert!(text.contains("\\e"), "{page}: the escape, visibly");
    }
    let verify = scratch.run(&["verify", "reports/spoof"]);
    assert!(verify.status.success(), "{}", stderr(&verify));
}
