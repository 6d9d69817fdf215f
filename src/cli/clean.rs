//! `runner clean`: remove cache entries that no given spec references.

use std::collections::HashSet;
use std::path::PathBuf;

use super::{Outcome, load_specs};
use crate::exec::cache::Cache;
use crate::plan;

/// Arguments of `runner clean`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The specs whose results to keep (default: every experiments/*.yaml).
    specs: Vec<PathBuf>,
    /// Only list what would be removed.
    #[arg(long)]
    dry_run: bool,
    /// Where `.runner/` lives.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    #[command(flatten)]
    limits: super::LimitArgs,
}

/// Removes unreferenced entries.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut specs = args.specs.clone();
    if specs.is_empty() {
        let dir = args.root.join("experiments");
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            super::InputError(format!("cannot list {}: {e}; name the specs to keep", dir.display()))
        })?;
        specs = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        specs.sort();
    }
    let mut keep = HashSet::new();
    for (_, experiment) in load_specs(&specs, &args.limits)? {
        let plan = plan::build(&experiment, None);
        keep.extend(plan.graph.node_weights().map(|t| t.id.clone()));
    }
    let cache = Cache::new(args.root.join(".runner").join("cache"));
    let mut removed = 0;
    let mut kept = 0;
    for id in cache.ids() {
        if keep.contains(&id) {
            kept += 1;
        } else {
            if !args.dry_run {
                cache.remove(&id)?;
            }
            removed += 1;
        }
    }
    let verb = if args.dry_run { "would remove" } else { "removed" };
    outln!("{verb} {removed} cache entries; kept {kept} referenced by {} spec(s)", specs.len())?;
    Ok(Outcome::Success)
}
