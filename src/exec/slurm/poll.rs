//! Asking Slurm how array elements are doing: `sacct` first, `squeue` when `sacct` is missing,
//! disabled or slow, and a time limit on every call so a hung controller cannot hang the run.
//!
//! States are Slurm's words (`PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, ...). An element that
//! neither command lists any more has left `squeue` (after the controller's `MinJobAge`); the
//! caller then judges it by the cache.

use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Time limit of one `squeue`/`sacct`/`scontrol` call.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(30);

/// One array element: (array job id, index).
pub type ElementKey = (String, usize);

/// What a finished external command printed.
#[derive(Debug)]
pub struct CommandOutput {
    /// Exit status (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl CommandOutput {
    /// Whether it exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs `program args`, killing it after `timeout`. Errors name the program.
pub fn run_command(
    program: &str,
    args: &[String],
    timeout: Duration,
) -> Result<CommandOutput, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{program}`: {e}"))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{program}` did not answer within {}s", timeout.as_secs()));
            }
            Err(e) => return Err(format!("cannot wait for `{program}`: {e}")),
        }
    };
    Ok(CommandOutput {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// Whether a Slurm job state is final.
pub fn is_terminal(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED"
            | "FAILED"
            | "TIMEOUT"
            | "NODE_FAIL"
            | "PREEMPTED"
            | "OUT_OF_MEMORY"
            | "CANCELLED"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "REVOKED"
            | "SPECIAL_EXIT"
    )
}

/// Queries element states, preferring `sacct` and falling back to `squeue` for good once
/// `sacct` fails (missing, accounting disabled, or too slow).
#[derive(Debug)]
pub struct Poller {
    sacct: bool,
    /// Set once `sacct` was given up, with the reason (shown once).
    pub fallback_reason: Option<String>,
}

impl Default for Poller {
    fn default() -> Self {
        Poller::new()
    }
}

impl Poller {
    /// A poller that tries `sacct` first.
    pub fn new() -> Poller {
        Poller { sacct: true, fallback_reason: None }
    }

    /// States of the elements of the given array jobs (named `job_name`), by element.
    pub fn states(
        &mut self,
        job_name: &str,
        job_ids: &[String],
    ) -> Result<HashMap<ElementKey, String>, String> {
        if job_ids.is_empty() {
            return Ok(HashMap::new());
        }
        if self.sacct {
            let args = vec![
                "--noheader".into(),
                "--parsable2".into(),
                "--allocations".into(),
                format!("--jobs={}", job_ids.join(",")),
                "--format=JobID,State".into(),
            ];
            match run_command("sacct", &args, QUERY_TIMEOUT) {
                Ok(output) if output.ok() && !output.stderr.contains("disabled") => {
                    return Ok(parse_sacct(&output.stdout));
                }
                Ok(output) => {
                    self.fallback(format!("sacct failed: {}", output.stderr.trim()));
                }
                Err(error) => self.fallback(error),
            }
        }
        let wanted: Vec<&str> = job_ids.iter().map(String::as_str).collect();
        Ok(self
            .squeue(job_name)?
            .into_iter()
            .filter(|((id, _), _)| wanted.contains(&id.as_str()))
            .collect())
    }

    /// Whether states come from `sacct` (which may lag behind a fresh submission).
    pub fn uses_sacct(&self) -> bool {
        self.sacct
    }

    /// States of every array element named `job_name` that `squeue` lists.
    pub fn squeue(&self, job_name: &str) -> Result<HashMap<ElementKey, String>, String> {
        let args = vec![
            "--noheader".into(),
            "--array".into(),
            "--states=all".into(),
            format!("--name={job_name}"),
            "--format=%F|%K|%T".into(),
        ];
        let output = run_command("squeue", &args, QUERY_TIMEOUT)?;
        if !output.ok() {
            return Err(format!("squeue failed: {}", output.stderr.trim()));
        }
        Ok(parse_squeue(&output.stdout))
    }

    /// (job id, state) of every element or plain job named `name` among `ids` (the gather job
    /// of `--detach` is a plain job).
    pub fn job_states(
        &mut self,
        name: &str,
        ids: &[String],
    ) -> Result<Vec<(String, String)>, String> {
        let mut states: Vec<(String, String)> =
            self.states(name, ids)?.into_iter().map(|((job, _), state)| (job, state)).collect();
        let args = vec![
            "--noheader".into(),
            "--states=all".into(),
            format!("--name={name}"),
            "--format=%i|%T".into(),
        ];
        if let Ok(output) = run_command("squeue", &args, QUERY_TIMEOUT)
            && output.ok()
        {
            for line in output.stdout.lines() {
                if let Some((id, state)) = line.trim().split_once('|')
                    && ids.iter().any(|i| i == id)
                {
                    states.push((id.to_string(), state.trim().to_string()));
                }
            }
        }
        Ok(states)
    }

    fn fallback(&mut self, reason: String) {
        self.sacct = false;
        self.fallback_reason = Some(reason);
    }
}

/// Parses `squeue --array --format=%F|%K|%T` lines: base job id, index, state.
pub fn parse_squeue(text: &str) -> HashMap<ElementKey, String> {
    let mut states = HashMap::new();
    for line in text.lines() {
        let mut fields = line.trim().split('|');
        let (Some(job), Some(index), Some(state)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let state = state.split_whitespace().next().unwrap_or("").to_string();
        for index in expand_indices(index) {
            states.insert((job.to_string(), index), state.clone());
        }
    }
    states
}

/// Parses `sacct --parsable2 --format=JobID,State` lines: `123_4|COMPLETED`,
/// `123_[5-9%2]|PENDING`, `CANCELLED by 0` (first word kept).
pub fn parse_sacct(text: &str) -> HashMap<ElementKey, String> {
    let mut states = HashMap::new();
    for line in text.lines() {
        let Some((id, state)) = line.trim().split_once('|') else { continue };
        let Some((job, index)) = id.split_once('_') else { continue };
        let state = state.split_whitespace().next().unwrap_or("").to_string();
        for index in expand_indices(index) {
            states.insert((job.to_string(), index), state.clone());
        }
    }
    states
}

/// `4` -> [4]; `[0-3,7%2]` -> [0, 1, 2, 3, 7]; anything else -> [].
fn expand_indices(text: &str) -> Vec<usize> {
    let text = text.trim().trim_start_matches('[').trim_end_matches(']');
    let text = text.split('%').next().unwrap_or("");
    let mut indices = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    indices.extend(a..=b.min(a.saturating_add(1_000_000)));
                }
            }
            None => indices.extend(part.parse::<usize>().ok()),
        }
    }
    indices
}

/// The site's `MaxArraySize` from `scontrol show config` (Slurm's default, 1001, if unknown).
pub fn max_array_size() -> usize {
    let args = vec!["show".to_string(), "config".to_string()];
    run_command("scontrol", &args, QUERY_TIMEOUT)
        .ok()
        .filter(CommandOutput::ok)
        .and_then(|output| {
            output.stdout.lines().find_map(|line| {
                let (key, value) = line.split_once('=')?;
                (key.trim() == "MaxArraySize").then(|| value.trim().parse::<usize>().ok())?
            })
        })
        .filter(|&n| n > 0)
        .unwrap_or(1001)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_and_sacct_lines_become_element_states() {
        let squeue = parse_squeue("17|0|COMPLETED\n17|1|RUNNING\n17|2|PENDING\n18|N/A|PENDING\n");
        assert_eq!(squeue.get(&("17".into(), 1)).map(String::as_str), Some("RUNNING"));
        assert_eq!(squeue.len(), 3);
        let sacct =
            parse_sacct("17_0|COMPLETED\n17_1|CANCELLED by 0\n17_[2-4%2]|PENDING\n19|RUNNING\n");
        assert_eq!(sacct.get(&("17".into(), 1)).map(String::as_str), Some("CANCELLED"));
        assert_eq!(sacct.get(&("17".into(), 4)).map(String::as_str), Some("PENDING"));
        assert_eq!(sacct.len(), 5);
        assert!(is_terminal("OUT_OF_MEMORY") && !is_terminal("COMPLETING"));
    }
}
