//! The committed bundles in `reports/` are a contract: each verifies, and a seeded sample of
//! its tasks re-evaluates bit for bit (`runner verify --check`). A bundle whose rows, spec or
//! evaluator versions moved fails with what to regenerate.

use std::path::Path;

use crate::common::{SIM_SPEC, Scratch, stderr, stdout};

/// The bundles committed to git (`reports/README.md` gives their verdicts).
const COMMITTED: [&str; 11] = [
    "nbc_torus",
    "ss_torus",
    "cs_torus_faults",
    "broadcast_hypercube",
    "bft",
    "quickstart",
    "crosscheck_booksim",
    "crosscheck_booksim_dragonfly",
    "coverage",
    "coverage_broadcast",
    "dragonfly",
];

/// Tasks re-evaluated per kind and bundle: a minute or so of a debug build in all.
const PER_KIND: &str = "2";

#[test]
fn committed_bundles_verify_and_a_seeded_sample_reproduces_bit_for_bit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bundles: Vec<String> = COMMITTED.iter().map(|name| format!("reports/{name}")).collect();
    for bundle in &bundles {
        assert!(root.join(bundle).join("manifest.json").is_file(), "{bundle} is not committed");
    }
    let mut args = vec!["verify", "--check", PER_KIND];
    args.extend(bundles.iter().map(String::as_str));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(root)
        .args(&args)
        .output()
        .expect("run runner");
    let (out, err) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    for bundle in &bundles {
        assert!(out.contains(&format!("{bundle}: re-evaluated ")), "{bundle}: {out}");
    }
}

#[test]
fn a_bundle_whose_rows_or_spec_moved_fails_the_check_saying_how_to_regenerate_it() {
    let scratch = Scratch::new();
    scratch.spec("s.yaml", SIM_SPEC);
    assert_eq!(scratch.run(&["run", "s.yaml", "-q"]).status.code(), Some(0));
    let check = || scratch.run(&["verify", "reports/small_sim", "--check", "8"]);
    let output = check();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("match results.parquet bit for bit"), "{}", stdout(&output));

    // One simulated latency moves in its last bit, and the manifest is updated to match, so
    // the hashes hold and only the re-evaluation can tell.
    let path = scratch.path().join("reports/small_sim/results.parquet");
    let (mut rows, metadata) = runner::store::parquet::read(&path).expect("read");
    let row = rows
        .iter_mut()
        .find(|r| r.method == "simulation" && r.replication == Some(0) && r.latency.is_some())
        .expect("a replication row");
    let latency = row.latency.expect("latency");
    row.latency = Some(f64::from_bits(latency.to_bits() + 1));
    let metadata: Vec<(String, String)> = metadata.into_iter().collect();
    runner::store::parquet::write(&path, &rows, &metadata).expect("write");
    let bytes = std::fs::read(&path).expect("read results");
    let manifest_path = scratch.path().join("reports/small_sim/manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).expect("read manifest"))
            .expect("json");
    let files = manifest["files"].as_array_mut().expect("files");
    let entry = files.iter_mut().find(|f| f["path"] == "results.parquet").expect("listed");
    entry["sha256"] = runner::spec::hex(&sha2::Digest::finalize(
        <sha2::Sha256 as sha2::Digest>::new_with_prefix(&bytes),
    ))
    .into();
    entry["bytes"] = bytes.len().into();
    std::fs::write(&manifest_path, manifest.to_string()).expect("write manifest");
    assert_eq!(scratch.run(&["verify", "reports/small_sim"]).status.code(), Some(0));
    let output = check();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("latency"), "{err}");
    assert!(err.contains("differ from results.parquet"), "{err}");
    assert!(err.contains("`runner run s.yaml`"), "{err}");

    // The spec changed after the bundle was produced.
    scratch.spec("s.yaml", &format!("{SIM_SPEC}# edited\n"));
    let output = check();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("its spec s.yaml changed since the bundle was produced"), "{err}");
    assert!(err.contains("then commit reports/small_sim"), "{err}");
}

/// A bundle committed beside its spec does not make the next run "dirty": only changes outside
/// the `reports/` directory the run writes to count as uncommitted.
#[test]
fn a_runs_own_bundles_do_not_count_as_uncommitted_changes() {
    let scratch = Scratch::new();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .current_dir(scratch.path())
            .args(["-c", "user.name=runner", "-c", "user.email=runner@example.org"])
            .args(args)
            .output();
        match output {
            Ok(output) => output.status.success(),
            Err(_) => false,
        }
    };
    if !git(&["init", "-q"]) {
        eprintln!("note: skipped: git is not available");
        return;
    }
    scratch.spec("s.yaml", SIM_SPEC);
    assert!(git(&["add", "s.yaml"]) && git(&["commit", "-qm", "spec"]));
    let dirty = || {
        // A bundle written anew: one whose numbers a run reproduces is otherwise left as it
        // is, provenance included.
        let bundle = scratch.path().join("reports/small_sim");
        if bundle.exists() {
            std::fs::remove_dir_all(&bundle).expect("remove the bundle");
        }
        assert_eq!(scratch.run(&["run", "s.yaml", "-q"]).status.code(), Some(0));
        let manifest = scratch.path().join("reports/small_sim/manifest.json");
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(manifest).expect("manifest"))
                .expect("json");
        manifest["git_dirty"].as_bool()
    };
    assert_eq!(dirty(), Some(false), "the new, untracked bundle is the run's own output");
    assert!(git(&["add", "reports"]) && git(&["commit", "-qm", "bundle"]));
    assert_eq!(dirty(), Some(false));
    std::fs::write(scratch.path().join("notes.txt"), "an uncommitted file\n").expect("write");
    assert_eq!(dirty(), Some(true), "a change outside reports/ counts");
}
