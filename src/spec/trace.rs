//! `traffic.trace`: a spec's trace file, anchored, hashed and scanned at load.
//!
//! [`resolve`] runs after validation, as `external::resolve` does: the path is relative to the
//! spec file's directory; the file's blake3 content hash is taken through
//! [`crate::files::hash_regular`] (so task ids are pure functions of the [`Experiment`] and a
//! renamed copy is the same trace), and the whole file is scanned once, streaming
//! ([`crate::trace::scan`]), so that every problem in it is reported with its row and column
//! before anything runs, and the load it offers is known. The scan's summary also gives each
//! scenario its `message_length`: the trace's mean length in flits, rounded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_saphyr::Location;

use super::Experiment;
use super::error::Diagnostic;
use crate::scenario::{Traffic, bounds};

/// A trace file's content hash and what its scan found (`None` in the map: it has problems).
type Scanned = (String, crate::trace::Scan);

/// Anchors, hashes and scans the trace of every trace scenario of `experiment` (`location`:
/// where the spec names the file); returns the problems.
pub fn resolve(
    experiment: &mut Experiment,
    spec_dir: &Path,
    location: Option<Location>,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let dir = std::path::absolute(spec_dir).unwrap_or_else(|_| spec_dir.to_path_buf());
    let help = |text: &str| Some(text.to_string());
    let mut scans: BTreeMap<(PathBuf, Option<u32>), Option<Scanned>> = BTreeMap::new();
    let warmup = experiment.simulation.as_ref().map(|s| s.options.warmup_cycles);
    let scales = match &experiment.load {
        super::Load::TraceTimeScale(scales) => scales.clone(),
        _ => Vec::new(),
    };
    // Scanned against the smallest network that replays a trace, so that a node it lacks is
    // reported at every row naming one.
    let smallest = experiment
        .scenarios
        .iter()
        .filter(|p| p.scenario.traffic.trace().is_some())
        .map(|p| p.scenario.nodes())
        .min()
        .and_then(|n| u32::try_from(n).ok());
    for point in &mut experiment.scenarios {
        let nodes = point.scenario.nodes();
        let Traffic::Trace(trace) = &mut point.scenario.traffic else { continue };
        let full = dir.join(&trace.path);
        let key = (full.clone(), trace.flit_bytes);
        let scanned = scans.entry(key).or_insert_with(|| match crate::files::hash_regular(&full) {
            Err(e) => {
                let why = match e.kind() {
                    std::io::ErrorKind::NotFound => "does not exist".to_string(),
                    _ => e.to_string(),
                };
                diags.push(Diagnostic {
                    message: format!("trace {} {why}", full.display()),
                    location,
                    help: help("paths are relative to the spec file's directory"),
                });
                None
            }
            Ok(blake3) => {
                let scan = crate::trace::scan(&full, trace.flit_bytes, smallest);
                let more = scan.more_problems;
                for problem in &scan.problems {
                    diags.push(Diagnostic {
                        message: problem.0.clone(),
                        location,
                        help: help("the trace format is in docs/traces.md"),
                    });
                }
                if more > 0 {
                    diags.push(Diagnostic {
                        message: format!(
                            "trace {}: {more} more problems after these",
                            full.display()
                        ),
                        location,
                        help: None,
                    });
                }
                scan.problems.is_empty().then_some((blake3, scan))
            }
        });
        let Some((blake3, scan)) = scanned else { continue };
        let summary = scan.summary;
        if u64::from(summary.max_node) >= nodes {
            let (row, column) = scan.max_node_at;
            diags.push(Diagnostic {
                message: format!(
                    "trace {}, row {row}, column {column} (`{}`): node {} does not exist on {}, \
                     which has nodes 0 to {}",
                    full.display(),
                    if column == 2 { "source" } else { "destination" },
                    summary.max_node,
                    point.label,
                    nodes.saturating_sub(1)
                ),
                location,
                help: help("a trace is recorded on one network: simulate it on a topology with at least as many nodes"),
            });
            continue;
        }
        trace.path = full.clone();
        trace.blake3 = blake3.clone();
        trace.summary = summary;
        if let Some(warmup) = warmup
            && let Some(&scale) = scales.iter().find(|&&s| {
                crate::scenario::TraceFile::scaled_cycle(summary.last_cycle, s) < warmup
            })
        {
            diags.push(Diagnostic {
                message: format!(
                    "trace {} ends at cycle {}, which time scale {scale} makes cycle {}: within \
                     the warm-up of {warmup} cycles, so nothing would be measured",
                    full.display(),
                    summary.last_cycle,
                    crate::scenario::TraceFile::scaled_cycle(summary.last_cycle, scale)
                ),
                location,
                help: help("shorten `warmup_cycles`, or use larger `load.trace_time_scale` values"),
            });
        }
        let mean = trace.mean_length().round().clamp(1.0, f64::from(bounds::MAX_COUNT));
        point.scenario.message_length = mean as u32;
        point.label = super::validate::label(&point.scenario);
    }
    diags
}
