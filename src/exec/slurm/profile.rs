//! Site settings for the Slurm executor: the profile file (`runner.toml` at the root, or
//! `--profile FILE`) merged with command-line overrides, in the spirit of Snakemake profiles.
//!
//! Site settings (partition, account, limits, polling) are not science, so they never enter the
//! experiment spec or a task id. A profile looks like this:
//!
//! ```toml
//! executor = "slurm"          # optional: make Slurm the default for runs under this root
//! [slurm]
//! partition = "compute"
//! account = "proj42"
//! time = "00:30:00"           # per array element
//! mem = "2G"                  # per array element
//! max_concurrent = 50         # array throttle (%N)
//! sbatch_args = ["--qos=normal"]
//! poll_interval = 10          # seconds between squeue/sacct calls
//! batch_minutes = 10          # target length of one array element's batch
//! retries = 2                 # resubmissions of a failed element's unfinished tasks
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The profile file looked for at the root when `--profile` is not given.
pub const DEFAULT_PROFILE: &str = "runner.toml";
/// Default seconds between two status queries.
pub const DEFAULT_POLL_SECONDS: f64 = 10.0;
/// Default target duration of one array element's batch, in minutes.
pub const DEFAULT_BATCH_MINUTES: f64 = 10.0;
/// The shortest poll interval, in seconds: each poll is an `sacct` (or `squeue`) call that
/// costs the controller, so a site setting cannot turn polling into a busy loop.
pub const MIN_POLL_SECONDS: f64 = 0.5;
/// The shortest batch target, in minutes (below it every batch holds one task anyway; the
/// floor only refuses values that mean nothing, such as 1e-300).
pub const MIN_BATCH_MINUTES: f64 = 1e-5;
/// The longest batch target, in minutes (a week: longer than any site's time limit).
pub const MAX_BATCH_MINUTES: f64 = 10_080.0;
/// Default resubmissions of a failed element's unfinished tasks.
pub const DEFAULT_RETRIES: u32 = 2;

/// Where tasks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorKind {
    /// A rayon pool on this machine.
    Local,
    /// Slurm job arrays, through sbatch, squeue, sacct and scancel.
    Slurm,
}

/// A profile file as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    /// The executor used when `--executor` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<ExecutorKind>,
    /// Slurm settings.
    #[serde(default)]
    pub slurm: SiteSettings,
}

/// Slurm site settings; every field is optional, a later source overrides an earlier one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteSettings {
    /// `sbatch --partition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// `sbatch --account`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// `sbatch --time`, per array element (Slurm syntax, e.g. `00:30:00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// `sbatch --mem`, per array element (e.g. `2G`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<String>,
    /// Array elements running at once (`--array=...%N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u32>,
    /// Extra `sbatch` arguments, passed as given (profile ones first, then command-line ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sbatch_args: Vec<String>,
    /// Seconds between two status queries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<f64>,
    /// Target duration of one array element's batch, in minutes (by the plan's cost model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_minutes: Option<f64>,
    /// Resubmissions of a failed element's unfinished tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
}

impl SiteSettings {
    /// These settings with every field `over` sets replacing ours (`sbatch_args` are appended).
    pub fn overridden_by(mut self, over: SiteSettings) -> SiteSettings {
        fn take<T>(mine: &mut Option<T>, theirs: Option<T>) {
            if theirs.is_some() {
                *mine = theirs;
            }
        }
        take(&mut self.partition, over.partition);
        take(&mut self.account, over.account);
        take(&mut self.time, over.time);
        take(&mut self.mem, over.mem);
        take(&mut self.max_concurrent, over.max_concurrent);
        take(&mut self.poll_interval, over.poll_interval);
        take(&mut self.batch_minutes, over.batch_minutes);
        take(&mut self.retries, over.retries);
        self.sbatch_args.extend(over.sbatch_args);
        self
    }

    /// Checks the values and fills in the defaults.
    pub fn resolve(self) -> Result<Settings, String> {
        let poll = self.poll_interval.unwrap_or(DEFAULT_POLL_SECONDS);
        if !(MIN_POLL_SECONDS..=86_400.0).contains(&poll) {
            return Err(format!(
                "poll_interval must be a number of seconds from {MIN_POLL_SECONDS} to 86400, \
                 got {}",
                crate::number::compact(poll)
            ));
        }
        let minutes = self.batch_minutes.unwrap_or(DEFAULT_BATCH_MINUTES);
        if !(MIN_BATCH_MINUTES..=MAX_BATCH_MINUTES).contains(&minutes) {
            return Err(format!(
                "batch_minutes must be a number of minutes from {MIN_BATCH_MINUTES} to \
                 {MAX_BATCH_MINUTES}, got {}",
                crate::number::compact(minutes)
            ));
        }
        if self.max_concurrent == Some(0) {
            return Err("max_concurrent must be at least 1".into());
        }
        for (name, value) in [
            ("partition", &self.partition),
            ("account", &self.account),
            ("time", &self.time),
            ("mem", &self.mem),
        ] {
            if value
                .as_deref()
                .is_some_and(|v| v.trim().is_empty() || v.contains(char::is_whitespace))
            {
                return Err(format!(
                    "{name} must be one word, got {:?}",
                    value.as_deref().unwrap_or("")
                ));
            }
        }
        Ok(Settings {
            poll_interval: Duration::from_secs_f64(poll),
            batch_seconds: minutes * 60.0,
            retries: self.retries.unwrap_or(DEFAULT_RETRIES),
            site: self,
        })
    }
}

/// Resolved settings of one Slurm run.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The settings as given (for `sbatch` and for the gather job's profile).
    pub site: SiteSettings,
    /// Time between two status queries.
    pub poll_interval: Duration,
    /// Target duration of one batch, in seconds of estimated cost.
    pub batch_seconds: f64,
    /// Resubmissions of a failed element's unfinished tasks.
    pub retries: u32,
}

/// Reads the profile: `explicit` when given (it must exist), else `root/runner.toml` when present.
pub fn load(
    root: &Path,
    explicit: Option<&Path>,
) -> Result<(Option<PathBuf>, ProfileFile), String> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => {
            let default = root.join(DEFAULT_PROFILE);
            if !default.exists() {
                return Ok((None, ProfileFile::default()));
            }
            default
        }
    };
    // The spec loader's rules: a regular file (a FIFO or a device is refused, not waited on or
    // read without end) of at most 1 MiB of UTF-8.
    let bytes = crate::files::read_regular(&path, crate::spec::MAX_SPEC_BYTES)
        .map_err(|e| format!("cannot read the profile {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| format!("cannot read the profile {}: not UTF-8 text ({e})", path.display()))?;
    let profile = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((Some(path), profile))
}

/// Parses profile text; errors name the line and column.
pub fn parse(text: &str) -> Result<ProfileFile, String> {
    toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())
}

/// The profile text that reproduces `settings` (for the dependent gather job).
pub fn to_text(settings: &SiteSettings) -> Result<String, String> {
    let file = ProfileFile { executor: Some(ExecutorKind::Slurm), slurm: settings.clone() };
    toml::to_string(&file).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_overrides_the_profile_and_defaults_fill_the_rest() {
        let file = parse(
            "executor = \"slurm\"\n[slurm]\npartition = \"p1\"\nretries = 5\nsbatch_args = [\"--qos=a\"]\n",
        )
        .expect("profile");
        assert_eq!(file.executor, Some(ExecutorKind::Slurm));
        let cli = SiteSettings {
            partition: Some("p2".into()),
            sbatch_args: vec!["--comment=x".into()],
            ..SiteSettings::default()
        };
        let settings = file.slurm.overridden_by(cli).resolve().expect("valid");
        assert_eq!(settings.site.partition.as_deref(), Some("p2"));
        assert_eq!(settings.retries, 5);
        assert_eq!(settings.site.sbatch_args, ["--qos=a", "--comment=x"]);
        assert_eq!(settings.poll_interval, Duration::from_secs(10));
        assert_eq!(settings.batch_seconds, 600.0);
        let text = to_text(&settings.site).expect("text");
        assert_eq!(parse(&text).expect("round trip").slurm, settings.site);
    }

    #[test]
    fn bad_profiles_name_the_problem() {
        let unknown = parse("[slurm]\npartiton = \"p\"\n").expect_err("unknown key");
        assert!(unknown.contains("partiton") && unknown.contains("line 2"), "{unknown}");
        let bad = SiteSettings { poll_interval: Some(0.0), ..SiteSettings::default() };
        assert!(bad.resolve().expect_err("zero poll").contains("poll_interval"));
        for poll in [1e-300, 0.49, f64::NAN, f64::INFINITY, 86_401.0] {
            let bad = SiteSettings { poll_interval: Some(poll), ..SiteSettings::default() };
            assert!(bad.resolve().is_err(), "poll_interval {poll} is refused");
        }
        for minutes in [1e-300, 0.0, f64::NAN, 1e9] {
            let bad = SiteSettings { batch_minutes: Some(minutes), ..SiteSettings::default() };
            assert!(bad.resolve().is_err(), "batch_minutes {minutes} is refused");
        }
        let floor = SiteSettings {
            poll_interval: Some(MIN_POLL_SECONDS),
            batch_minutes: Some(MIN_BATCH_MINUTES),
            ..SiteSettings::default()
        };
        assert!(floor.resolve().is_ok());
        let spaced = SiteSettings { mem: Some("2 G".into()), ..SiteSettings::default() };
        assert!(spaced.resolve().expect_err("space").contains("mem"));
    }
}
