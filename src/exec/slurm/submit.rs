//! Submitting work: packing simulation tasks into batches of about the target duration (by the
//! plan's cost model), writing each batch's task list, and one `sbatch --array` per round, split
//! at the site's `MaxArraySize` and throttled with `%N`.

use std::path::Path;

use super::poll::{QUERY_TIMEOUT, run_command};
use super::profile::Settings;
use super::record::{ArrayJob, RecordDir, Round};
use crate::exec::executor::ExecError;
use crate::files::write_atomic;

/// Packs tasks (id, estimated seconds), in order, into batches of about `target` seconds each.
/// The estimates are floating point and sum without wrapping: a huge or infinite one fills a
/// batch by itself, and a NaN one counts as free.
pub fn pack(tasks: &[(String, f64)], target: f64) -> Vec<Vec<String>> {
    let mut batches = Vec::new();
    let mut current = Vec::new();
    let mut cost = 0.0;
    for (id, seconds) in tasks {
        let seconds = seconds.max(0.0);
        if !current.is_empty() && cost + seconds > target {
            batches.push(std::mem::take(&mut current));
            cost = 0.0;
        }
        current.push(id.clone());
        cost += seconds;
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

/// Quotes `text` for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The `sbatch` options every job of a run gets from the site settings.
fn site_options(settings: &Settings) -> Vec<String> {
    let site = &settings.site;
    let mut args = Vec::new();
    for (flag, value) in [
        ("--partition", &site.partition),
        ("--account", &site.account),
        ("--time", &site.time),
        ("--mem", &site.mem),
    ] {
        if let Some(value) = value {
            args.push(format!("{flag}={value}"));
        }
    }
    args.extend(site.sbatch_args.iter().cloned());
    args
}

/// Runs `sbatch --parsable ARGS` and returns the job id.
fn sbatch(args: Vec<String>) -> Result<String, ExecError> {
    let mut full = vec!["--parsable".to_string()];
    full.extend(args);
    let output = run_command("sbatch", &full, QUERY_TIMEOUT).map_err(ExecError::Slurm)?;
    if !output.ok() {
        return Err(ExecError::Setup(format!(
            "sbatch refused the job: {}\n(sbatch {})",
            output.stderr.trim(),
            full.join(" ")
        )));
    }
    let id = output.stdout.trim().split(';').next().unwrap_or("").trim().to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(ExecError::Slurm(format!("sbatch printed no job id: {:?}", output.stdout)));
    }
    Ok(id)
}

/// What every array of one submission shares.
pub struct Submitter<'a> {
    /// The submission record.
    pub record: &'a RecordDir,
    /// The job name of every array.
    pub job_name: &'a str,
    /// The `runner` binary the elements run (absolute).
    pub binary: &'a Path,
    /// Site settings.
    pub settings: &'a Settings,
    /// The site's `MaxArraySize`.
    pub max_array_size: usize,
}

impl Submitter<'_> {
    /// Writes round `number`'s batches and submits them as array jobs; returns the round.
    pub fn round(
        &self,
        number: u32,
        attempt: u32,
        batches: &[Vec<String>],
    ) -> Result<Round, ExecError> {
        let record = self.record;
        let dir = record.round_dir(number);
        for (index, batch) in batches.iter().enumerate() {
            let mut text = batch.join("\n");
            text.push('\n');
            write_atomic(&record.batch_path(number, index), text.as_bytes())?;
        }
        let script = dir.join("job.sh");
        let text = format!(
            "#!/bin/sh\n# runner: one array element evaluates one batch of tasks (round {number}).\n\
             # $1 is the batch index of element 0 of this array.\n\
             exec {} worker {} --round {number} --offset \"$1\"\n",
            shell_quote(&self.binary.display().to_string()),
            shell_quote(&record.dir.display().to_string()),
        );
        write_atomic(&script, text.as_bytes())?;
        std::fs::create_dir_all(record.logs_dir())?;
        let mut arrays = Vec::new();
        let chunk = self.max_array_size.max(1);
        let throttle =
            self.settings.site.max_concurrent.map(|n| format!("%{n}")).unwrap_or_default();
        let mut offset = 0;
        while offset < batches.len() {
            let count = chunk.min(batches.len() - offset);
            let mut args = vec![
                format!("--job-name={}", self.job_name),
                format!("--array=0-{}{throttle}", count - 1),
                format!("--output={}", record.logs_dir().join("%A_%a.out").display()),
                format!("--chdir={}", record.dir.display()),
            ];
            args.extend(site_options(self.settings));
            args.push(script.display().to_string());
            args.push(offset.to_string());
            let job_id = sbatch(args)?;
            arrays.push(ArrayJob { job_id, offset, count });
            offset += count;
        }
        Ok(Round { number, attempt, batches: batches.len(), arrays })
    }
}

/// Submits the job that gathers and reports once every array has ended (`afterany`).
pub fn submit_gather_job(
    record: &RecordDir,
    job_name: &str,
    after: &[String],
    command: &[String],
    settings: &Settings,
) -> Result<String, ExecError> {
    let wrap = command.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
    let mut args = vec![
        format!("--job-name={job_name}-gather"),
        format!("--dependency=afterany:{}", after.join(":")),
        format!("--output={}", record.logs_dir().join("gather_%j.out").display()),
        format!("--chdir={}", record.dir.display()),
    ];
    args.extend(site_options(settings));
    args.push(format!("--wrap={wrap}"));
    sbatch(args)
}

/// Cancels jobs with `scancel`; returns what failed, if anything.
pub fn scancel(jobs: &[String]) -> Result<(), String> {
    if jobs.is_empty() {
        return Ok(());
    }
    let output = run_command("scancel", jobs, QUERY_TIMEOUT)?;
    if output.ok() { Ok(()) } else { Err(output.stderr.trim().to_string()) }
}

/// Checks that Slurm's commands are here, and warns (returns the text) when the cache or the
/// binary sits on a node-local filesystem the compute nodes cannot see.
pub fn preflight(root: &Path, binary: &Path) -> Result<Vec<String>, ExecError> {
    match run_command("sbatch", &["--version".to_string()], QUERY_TIMEOUT) {
        Ok(output) if output.ok() => {}
        _ => {
            return Err(ExecError::Setup(
                "`sbatch` is not available here: run from a Slurm login node (or use \
                 --executor local)"
                    .into(),
            ));
        }
    }
    let mut warnings = Vec::new();
    for (what, path) in [("the cache (--root)", root), ("the runner binary", binary)] {
        let args =
            vec!["-f".to_string(), "-c".to_string(), "%T".to_string(), path.display().to_string()];
        if let Ok(output) = run_command("stat", &args, QUERY_TIMEOUT)
            && output.ok()
        {
            let kind = output.stdout.trim();
            if matches!(kind, "tmpfs" | "ramfs") {
                warnings.push(format!(
                    "{what} is on a {kind} filesystem ({}), usually local to this node; the \
                     compute nodes need both on a shared filesystem",
                    path.display()
                ));
            }
        }
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_fills_batches_to_the_target_in_order() {
        let tasks: Vec<(String, f64)> = (0..7).map(|i| (format!("t{i}"), 4.0)).collect();
        let batches = pack(&tasks, 10.0);
        assert_eq!(batches, [vec!["t0", "t1"], vec!["t2", "t3"], vec!["t4", "t5"], vec!["t6"]]);
        // A task longer than the target gets a batch of its own.
        let long = vec![("a".to_string(), 1.0), ("b".to_string(), 50.0), ("c".to_string(), 1.0)];
        assert_eq!(pack(&long, 10.0), [vec!["a"], vec!["b"], vec!["c"]]);
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }

    /// Issue 19: estimates of unbounded runs must not wrap a batch's total back to small.
    #[test]
    fn packing_survives_infinite_and_nan_estimates() {
        let tasks = vec![
            ("a".to_string(), 1.0),
            ("b".to_string(), f64::INFINITY),
            ("c".to_string(), f64::MAX),
            ("d".to_string(), f64::NAN),
            ("e".to_string(), 1.0),
        ];
        assert_eq!(pack(&tasks, 10.0), [vec!["a"], vec!["b"], vec!["c"], vec!["d", "e"]]);
    }
}
