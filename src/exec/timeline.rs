//! The timeline of a run: which task ran on which worker, from when to when, as Nextflow's
//! `-with-timeline` records it, and what it says about the run (the workers' busy fraction, the
//! critical path) and about the same run on another number of cores (`runner plan --cores`).
//!
//! `runner run` writes one timeline per run to `.runner/timelines/<UTC time>-<pid>.json` in the
//! Chrome trace event format (JSON object form: `traceEvents`, `otherData`), which
//! `chrome://tracing` and <https://ui.perfetto.dev> open as they are: one track per worker, one
//! bar per task, and one track per spec for its bundle (written while other tasks still run),
//! with the steps of writing it (the Parquet file, with the rows built as it takes them, the
//! report) nested under it: the profile of what follows the tasks. Each
//! task's event carries, under `args`, the task id, its spec, the ids of its inputs, the cost the
//! scheduler estimated and the priority it gave it: enough to replay the run on any number of
//! cores ([`Timeline::predict`]) and for the next run to learn its costs from
//! ([`super::estimate::History`]). The newest [`KEEP`] timelines are kept.

use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many timelines `.runner/timelines/` keeps (the oldest go first).
pub const KEEP: usize = 20;

/// The trace category of the bundle renders (a task's category is its kind's name).
pub const REPORT: &str = "Report";

/// How one recorded task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ending {
    /// It finished and its output is cached.
    Done,
    /// It failed (its error is in the run's results).
    Failed,
    /// It was stopped by an interrupt (its time is still worker time).
    Cancelled,
}

/// One task (or one bundle render) as it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The task id (the cache key); the bundle's path for a render.
    pub id: String,
    /// The task kind's name, or [`REPORT`].
    pub kind: String,
    /// What the bar says: the kind and the scenario's label (and the load).
    pub label: String,
    /// The spec's `name`.
    pub spec: String,
    /// The worker it ran on (0-based); for a bundle, the spec's index (each bundle has its own
    /// track).
    pub worker: u32,
    /// Start, in seconds from the start of the run.
    pub start: f64,
    /// End, in seconds from the start of the run.
    pub end: f64,
    /// The ids of the tasks whose outputs it read (cached ones included).
    pub inputs: Vec<String>,
    /// The cost the scheduler estimated, in seconds.
    pub estimate: f64,
    /// The scheduler's priority: the estimated cost of the longest chain of tasks from this one
    /// to the end of its spec (seconds). The ready task with the highest goes first.
    pub priority: f64,
    /// The threads it ran on (the workers it held; 1 but for a simulation of a large network
    /// given several, `exec::threads`).
    pub threads: u32,
    /// How it ended.
    pub ending: Ending,
}

impl Record {
    /// Its wall time in seconds.
    pub fn seconds(&self) -> f64 {
        (self.end - self.start).max(0.0)
    }

    /// Whether it is a task (not a bundle render).
    pub fn is_task(&self) -> bool {
        self.kind != REPORT
    }
}

/// A run's timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// Worker threads.
    pub workers: u32,
    /// The specs, by name, in the order given.
    pub specs: Vec<String>,
    /// Every task run (and every bundle rendered), in the order they ended.
    pub records: Vec<Record>,
}

/// What a timeline says about its run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Tasks recorded.
    pub tasks: usize,
    /// From the first task's start to the last task's end, in seconds.
    pub wall: f64,
    /// The tasks' wall times summed, each times its threads (the workers it held), in seconds.
    pub task_seconds: f64,
    /// `task_seconds / (workers * wall)`: how busy the workers were.
    pub busy: f64,
    /// The longest chain of recorded tasks, each waiting for its inputs, in seconds: no number of
    /// cores runs these tasks in less.
    pub critical_path: f64,
}

/// A run replayed on a number of cores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// Cores.
    pub cores: u32,
    /// The predicted wall time in seconds.
    pub wall: f64,
    /// The predicted busy fraction of the cores.
    pub busy: f64,
}

/// One event of the Chrome trace event format, as far as the timeline uses it.
#[derive(Debug, Serialize, Deserialize)]
struct TraceEvent {
    name: String,
    #[serde(default)]
    cat: String,
    ph: String,
    #[serde(default)]
    ts: f64,
    #[serde(default)]
    dur: f64,
    pid: u32,
    tid: u32,
    #[serde(default)]
    args: EventArgs,
}

/// A task event's `args` (a metadata event's `name` too).
#[derive(Debug, Default, Serialize, Deserialize)]
struct EventArgs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    spec: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    inputs: Vec<String>,
    #[serde(default)]
    estimate_seconds: f64,
    #[serde(default)]
    priority_seconds: f64,
    #[serde(default = "one", skip_serializing_if = "at_most_one")]
    threads: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ending: Option<Ending>,
}

/// A task's threads when its event does not say (timelines before threads, and renders).
fn one() -> u32 {
    1
}

/// Whether an event leaves `threads` out: a task on one thread, and the tracks' names.
fn at_most_one(threads: &u32) -> bool {
    *threads <= 1
}

/// The whole file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TraceFile {
    trace_events: Vec<TraceEvent>,
    #[serde(default)]
    display_time_unit: String,
    #[serde(default)]
    other_data: OtherData,
}

/// The run's own fields.
#[derive(Debug, Default, Serialize, Deserialize)]
struct OtherData {
    #[serde(default)]
    runner: String,
    #[serde(default)]
    started: String,
    #[serde(default)]
    workers: u32,
    #[serde(default)]
    specs: Vec<String>,
}

/// Microseconds, as the trace format counts.
const MICROS: f64 = 1e6;

impl Timeline {
    /// An empty timeline of a run on `workers` workers that started at `started` (RFC 3339).
    pub fn new(started: String, workers: usize, specs: Vec<String>) -> Timeline {
        Timeline {
            started,
            workers: u32::try_from(workers).unwrap_or(u32::MAX),
            specs,
            records: Vec::new(),
        }
    }

    /// The timeline in the Chrome trace event format.
    pub fn to_json(&self) -> String {
        let mut events = Vec::with_capacity(self.records.len() + self.workers as usize + 1);
        let track = |tid: u32, name: String| TraceEvent {
            name: "thread_name".into(),
            cat: String::new(),
            ph: "M".into(),
            ts: 0.0,
            dur: 0.0,
            pid: 0,
            tid,
            args: EventArgs { name: Some(name), ..EventArgs::default() },
        };
        for worker in 0..self.workers {
            events.push(track(worker, format!("worker {worker}")));
        }
        // One track per bundle (they are written at the same time, each on its own thread).
        let mut bundles: Vec<(u32, &str)> = self
            .records
            .iter()
            .filter(|r| !r.is_task())
            .map(|r| (r.worker, r.spec.as_str()))
            .collect();
        bundles.sort_unstable();
        bundles.dedup();
        for (index, spec) in bundles {
            events.push(track(self.workers.saturating_add(index), format!("bundle {spec}")));
        }
        for record in &self.records {
            events.push(TraceEvent {
                name: record.label.clone(),
                cat: record.kind.clone(),
                ph: "X".into(),
                ts: record.start * MICROS,
                dur: record.seconds() * MICROS,
                pid: 0,
                tid: if record.is_task() {
                    record.worker
                } else {
                    self.workers.saturating_add(record.worker)
                },
                args: EventArgs {
                    name: None,
                    id: record.id.clone(),
                    spec: record.spec.clone(),
                    inputs: record.inputs.clone(),
                    estimate_seconds: record.estimate,
                    priority_seconds: record.priority,
                    threads: record.threads,
                    ending: Some(record.ending),
                },
            });
        }
        let file = TraceFile {
            trace_events: events,
            display_time_unit: "ms".into(),
            other_data: OtherData {
                runner: env!("CARGO_PKG_VERSION").into(),
                started: self.started.clone(),
                workers: self.workers,
                specs: self.specs.clone(),
            },
        };
        // Plain data (strings and finite numbers): serializing cannot fail.
        serde_json::to_string(&file).unwrap_or_default()
    }

    /// Reads a timeline written by [`Timeline::to_json`] (events of other kinds are passed over).
    pub fn from_json(text: &str) -> Result<Timeline, String> {
        let file: TraceFile = serde_json::from_str(text)
            .map_err(|e| format!("not a runner timeline (Chrome trace JSON): {e}"))?;
        let records = file
            .trace_events
            .into_iter()
            .filter(|event| event.ph == "X" && !event.args.id.is_empty())
            .map(|event| Record {
                id: event.args.id,
                worker: if event.cat == REPORT {
                    event.tid.saturating_sub(file.other_data.workers)
                } else {
                    event.tid
                },
                kind: event.cat,
                label: event.name,
                spec: event.args.spec,
                start: event.ts / MICROS,
                end: (event.ts + event.dur) / MICROS,
                inputs: event.args.inputs,
                estimate: event.args.estimate_seconds,
                priority: event.args.priority_seconds,
                threads: event.args.threads.max(1),
                ending: event.args.ending.unwrap_or(Ending::Done),
            })
            .collect();
        Ok(Timeline {
            started: file.other_data.started,
            workers: file.other_data.workers,
            specs: file.other_data.specs,
            records,
        })
    }

    /// The tasks (not the renders).
    fn tasks(&self) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(|r| r.is_task())
    }

    /// The busy fraction and the critical path of the run.
    pub fn summary(&self) -> Summary {
        let (mut first, mut last, mut total, mut tasks) = (f64::INFINITY, 0.0f64, 0.0, 0);
        for record in self.tasks() {
            first = first.min(record.start);
            last = last.max(record.end);
            total += record.seconds() * f64::from(record.threads.max(1));
            tasks += 1;
        }
        let wall = if tasks == 0 { 0.0 } else { (last - first).max(0.0) };
        let capacity = f64::from(self.workers.max(1)) * wall;
        Summary {
            tasks,
            wall,
            task_seconds: total,
            busy: if capacity > 0.0 { (total / capacity).min(1.0) } else { 0.0 },
            critical_path: self.critical_path(),
        }
    }

    /// The longest chain of tasks through their inputs, by their recorded wall times.
    fn critical_path(&self) -> f64 {
        let graph = Replay::new(self);
        // Tasks in an order where every input comes first (Kahn's algorithm).
        let mut finish = vec![0.0f64; graph.seconds.len()];
        let mut waiting = graph.waiting.clone();
        let mut ready: Vec<usize> = (0..waiting.len()).filter(|&t| waiting[t] == 0).collect();
        let mut longest = 0.0f64;
        while let Some(task) = ready.pop() {
            finish[task] += graph.seconds[task];
            longest = longest.max(finish[task]);
            for &next in &graph.dependants[task] {
                finish[next] = finish[next].max(finish[task]);
                waiting[next] -= 1;
                if waiting[next] == 0 {
                    ready.push(next);
                }
            }
        }
        longest
    }

    /// The run replayed on `cores` cores by the scheduler `runner run` uses: whenever a core is
    /// free, the ready task of highest recorded priority starts (ties in recorded order), and
    /// every task takes the wall time it took. Tasks whose inputs were cached are ready at once.
    /// A task that ran on several threads holds as many cores (at most `cores`) and waits for
    /// them, for the time it took on its threads: the replay does not know how it would run on
    /// more or fewer.
    /// What the replay leaves out: the scheduler's own time between tasks, and tasks running
    /// slower or faster with more of them at once (shared caches and memory bandwidth, clock
    /// boost); `runner plan --cores` checks it against the run it replays.
    pub fn predict(&self, cores: u32) -> Prediction {
        let cores = cores.max(1);
        let graph = Replay::new(self);
        let n = graph.seconds.len();
        let mut waiting = graph.waiting.clone();
        // Ready tasks, highest priority first, then the earliest recorded.
        let mut ready: BinaryHeap<(Priority, std::cmp::Reverse<usize>)> = (0..n)
            .filter(|&t| waiting[t] == 0)
            .map(|t| (Priority(graph.priority[t]), std::cmp::Reverse(t)))
            .collect();
        // Running tasks by end time, earliest first.
        let mut running: BinaryHeap<std::cmp::Reverse<(Priority, usize)>> = BinaryHeap::new();
        let (mut now, mut free, mut total) = (0.0f64, cores, 0.0);
        loop {
            while let Some(&(_, std::cmp::Reverse(task))) = ready.peek()
                && free >= graph.threads[task].min(cores)
            {
                ready.pop();
                let held = graph.threads[task].min(cores);
                free -= held;
                total += graph.seconds[task] * f64::from(held);
                running.push(std::cmp::Reverse((Priority(now + graph.seconds[task]), task)));
            }
            let Some(std::cmp::Reverse((Priority(end), task))) = running.pop() else { break };
            now = end;
            free += graph.threads[task].min(cores);
            for &next in &graph.dependants[task] {
                waiting[next] -= 1;
                if waiting[next] == 0 {
                    ready.push((Priority(graph.priority[next]), std::cmp::Reverse(next)));
                }
            }
        }
        let capacity = f64::from(cores) * now;
        Prediction {
            cores,
            wall: now,
            busy: if capacity > 0.0 { (total / capacity).min(1.0) } else { 0.0 },
        }
    }

    /// Writes the timeline to a new file in `dir` (created if missing), named by the time it
    /// is written and this process's id, and removes the oldest beyond [`KEEP`]; returns its
    /// path.
    pub fn save(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        // Nanoseconds since 1970, zero-padded: the names sort as the runs ended. (The run's
        // start, to the second, did not: two short runs can start in the same second, and
        // their process ids then ordered them as text, "1003" before "998".)
        let written = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!("{written:020}-{}.json", std::process::id()));
        crate::files::write_atomic(&path, self.to_json().as_bytes())?;
        let mut saved = saved(dir);
        if saved.len() > KEEP {
            let excess = saved.len() - KEEP;
            for old in saved.drain(..excess) {
                let _ = std::fs::remove_file(old);
            }
        }
        Ok(path)
    }
}

/// The steps of writing a spec's bundle, timed on the run's clock (the Parquet file, with the
/// rows built as it takes them, the report...): they go on the timeline's `reports` track, so
/// the timeline is also the profile of what follows the tasks.
#[derive(Debug)]
pub struct Phases {
    clock: std::time::Instant,
    /// (step, start, end), seconds since the run's start.
    pub spans: Vec<(&'static str, f64, f64)>,
}

impl Phases {
    /// No steps yet; times are counted from `clock`.
    pub fn new(clock: std::time::Instant) -> Phases {
        Phases { clock, spans: Vec::new() }
    }

    /// The run's clock.
    pub fn clock(&self) -> std::time::Instant {
        self.clock
    }

    /// Runs `step` and records how long it took as `name`.
    pub fn time<T>(&mut self, name: &'static str, step: impl FnOnce() -> T) -> T {
        let start = self.clock.elapsed().as_secs_f64();
        let value = step();
        self.spans.push((name, start, self.clock.elapsed().as_secs_f64()));
        value
    }
}

/// The timelines saved in `dir`, oldest first (their names start with the time they were
/// written).
pub fn saved(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|e| e == "json"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
}

/// A priority or a time, ordered totally (NaN as the least).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Priority(pub(crate) f64);

impl Eq for Priority {}

impl PartialOrd for Priority {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Priority {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let key = |x: f64| if x.is_nan() { f64::NEG_INFINITY } else { x };
        key(self.0).total_cmp(&key(other.0))
    }
}

/// The recorded tasks as a graph: each task's wall time and priority, its dependants among the
/// recorded tasks and how many recorded inputs it waits for.
struct Replay {
    seconds: Vec<f64>,
    /// The threads each task held (at least 1).
    threads: Vec<u32>,
    priority: Vec<f64>,
    dependants: Vec<Vec<usize>>,
    waiting: Vec<usize>,
}

impl Replay {
    fn new(timeline: &Timeline) -> Replay {
        let tasks: Vec<&Record> = timeline.tasks().collect();
        let index: HashMap<&str, usize> =
            tasks.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
        let mut dependants = vec![Vec::new(); tasks.len()];
        let mut waiting = vec![0; tasks.len()];
        for (task, record) in tasks.iter().enumerate() {
            for input in &record.inputs {
                if let Some(&from) = index.get(input.as_str())
                    && from != task
                {
                    dependants[from].push(task);
                    waiting[task] += 1;
                }
            }
        }
        Replay {
            seconds: tasks.iter().map(|r| r.seconds()).collect(),
            threads: tasks.iter().map(|r| r.threads.max(1)).collect(),
            priority: tasks.iter().map(|r| r.priority).collect(),
            dependants,
            waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        id: &str,
        start: f64,
        end: f64,
        worker: u32,
        inputs: &[&str],
        priority: f64,
    ) -> Record {
        Record {
            id: id.into(),
            kind: "Simulate".into(),
            label: id.into(),
            spec: "s".into(),
            worker,
            start,
            end,
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            estimate: end - start,
            priority,
            threads: 1,
            ending: Ending::Done,
        }
    }

    /// Two workers: a (3 s) and b (1 s) then c (1 s, after b) then d (2 s, after a and c).
    fn diamond() -> Timeline {
        Timeline {
            started: "2026-11-29T00:00:00Z".into(),
            workers: 2,
            specs: vec!["s".into()],
            records: vec![
                record("b", 0.0, 1.0, 1, &[], 4.0),
                record("c", 1.0, 2.0, 1, &["b"], 3.0),
                record("a", 0.0, 3.0, 0, &[], 5.0),
                record("d", 3.0, 5.0, 0, &["a", "c", "cached"], 2.0),
            ],
        }
    }

    #[test]
    fn the_summary_counts_busy_time_and_the_longest_chain() {
        let summary = diamond().summary();
        assert_eq!(summary.tasks, 4);
        assert_eq!(summary.wall, 5.0);
        assert_eq!(summary.task_seconds, 7.0);
        assert!((summary.busy - 0.7).abs() < 1e-12, "{}", summary.busy);
        // a then d.
        assert_eq!(summary.critical_path, 5.0);
    }

    #[test]
    fn the_replay_reproduces_the_recorded_run_and_others() {
        let timeline = diamond();
        // On the recorded two cores: as recorded.
        assert_eq!(timeline.predict(2).wall, 5.0);
        // On one: every task in turn.
        let one = timeline.predict(1);
        assert_eq!(one.wall, 7.0);
        assert_eq!(one.busy, 1.0);
        // On many: the critical path.
        assert_eq!(timeline.predict(64).wall, 5.0);
    }

    /// Longest first: on two cores, the long task starts at once, not after the short ones.
    #[test]
    fn the_replay_starts_the_highest_priority_first() {
        let timeline = Timeline {
            workers: 2,
            records: vec![
                record("s1", 0.0, 1.0, 0, &[], 1.0),
                record("s2", 0.0, 1.0, 1, &[], 1.0),
                record("long", 1.0, 5.0, 0, &[], 4.0),
            ],
            ..Timeline::default()
        };
        assert_eq!(timeline.predict(2).wall, 4.0);
    }

    #[test]
    fn a_task_on_several_threads_holds_as_many_cores() {
        // A 4-s task on 2 threads, then two 1-s tasks: on 2 cores the two wait for it, then
        // run side by side (5 s); on 4 they run beside it (4 s). Its threads count in the
        // busy time.
        let timeline = Timeline {
            workers: 2,
            records: vec![
                Record { threads: 2, ..record("large", 0.0, 4.0, 0, &[], 5.0) },
                record("s1", 4.0, 5.0, 0, &[], 1.0),
                record("s2", 5.0, 6.0, 0, &[], 1.0),
            ],
            ..Timeline::default()
        };
        assert_eq!(timeline.summary().task_seconds, 10.0);
        assert_eq!(timeline.predict(2).wall, 5.0);
        assert_eq!(timeline.predict(4).wall, 4.0);
        // On one core it holds the one core.
        assert_eq!(timeline.predict(1).wall, 6.0);
        let back = Timeline::from_json(&timeline.to_json()).unwrap();
        assert_eq!(back.records[0].threads, 2);
        assert_eq!(back.records[1].threads, 1);
    }

    #[test]
    fn the_file_is_chrome_trace_json_and_reads_back() {
        let mut timeline = diamond();
        timeline.records.push(Record {
            kind: REPORT.into(),
            worker: 2,
            ..record("reports/s", 5.0, 5.5, 2, &[], 0.0)
        });
        let json = timeline.to_json();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let events = value["traceEvents"].as_array().unwrap();
        // Two worker tracks, the bundle's track, five bars.
        assert_eq!(events.iter().filter(|e| e["ph"] == "M").count(), 3);
        assert_eq!(events.iter().filter(|e| e["ph"] == "X").count(), 5);
        let bar = events.iter().find(|e| e["args"]["id"] == "a").unwrap();
        assert_eq!(bar["dur"], 3e6);
        assert_eq!(bar["cat"], "Simulate");
        let back = Timeline::from_json(&json).unwrap();
        assert_eq!(back, timeline);
        // The render is recorded but is not a task.
        assert_eq!(back.summary().tasks, 4);
        assert!(Timeline::from_json("{}").is_err());
    }

    /// The newest written is kept and listed last, whatever the runs' starts say: here each
    /// run started earlier than the one before (as two runs started in the same second, their
    /// names once sorted by process id as text).
    #[test]
    fn saving_keeps_the_newest() {
        let dir = std::env::temp_dir().join(format!("runner-timelines-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let started = |n: usize| format!("2026-11-29T00:00:{:02}Z", 59 - n);
        for n in 0..KEEP + 3 {
            Timeline { started: started(n), ..diamond() }.save(&dir).unwrap();
        }
        let kept = saved(&dir);
        assert_eq!(kept.len(), KEEP);
        let read = |path: &PathBuf| {
            Timeline::from_json(&std::fs::read_to_string(path).unwrap()).unwrap().started
        };
        assert_eq!(read(kept.last().unwrap()), started(KEEP + 2));
        assert_eq!(read(&kept[0]), started(3));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
