//! The verdicts against the bundles: every number that `reports/README.md`'s verdict tables and
//! the paper specs' figure captions quote is derived here from the committed bundle's own
//! `results.parquet`, formatted as the text prints it, and looked for in the text.
//!
//! Each checked piece of text carries an anchor naming its claim: a verdict row (or a
//! paragraph of a paper's section) of the README ends its first cell (or its last line) with
//! `<!-- verdict: KEY -->`; a caption is found by the start of its `title:` line in
//! `experiments/<spec>.yaml`. [`CLAIMS`] maps each key to the query that computes the numbers
//! from the bundle. The test fails when:
//!
//! - a number the query derives is not in the text as printed (a hand edit, or a regenerated
//!   bundle that moved it);
//! - the text holds a number that no query derived: every digit left after the derived strings
//!   are taken out must be a configuration value (`K = 1`, `V = 10`, `M = 32`, `8x8`,
//!   `theta = 0.1`, an erratum `E-BC-5`, `Fig. 1`, `eq. 9`) or a literal the claim lists as
//!   uncovered (its `uncovered` field);
//! - a row of a paper's verdict table has no anchor, or an anchor names no claim, or a claim is
//!   anchored nowhere.
//!
//! `docs/validation.md` quotes some of the same numbers (the fat-tree at high load, the BookSim
//! cross-check) beside measurements of its own: its anchored rows must hold the derived
//! strings, and their other numbers are not checked.
//!
//! The README's first column (the paper's claim, quoted) and the "holds?" wording are not
//! checked; the "model low" / "model high" words are, because the queries print them from the
//! signs of the errors. The uncovered literals, all configuration or method, not measurement:
//! the scouting model's lead `2K - 1` against `2 min(K, H)`; CS's service time `M + 2d`, its
//! `4 fault maps` per point and the column name `latency_ci95_noise`; the broadcast policy
//! (`5% target`, `100,000-cycle cap`); the fat-tree's cut at `0.85` of the model's maximum and
//! its `M/G/1` and `M/G/2` waits; BookSim's `2 VCs` and `wait_for_tail_credit = 0`.
//!
//! How the numbers are read (as `reports/README.md` says): the error is (model - simulation) /
//! simulation of the aggregate rows (`replication` empty) matched by scenario and rate; a point
//! is compared when the model is `ok` and the simulation `ok` or `imprecise`, and an imprecise
//! point is counted in and said so, as the bundle's agreement table does; "within 5%" is the
//! point estimate's |error| <= 5%; errors print in percent with one decimal and a sign; loads
//! are fractions of the model's saturation rate (light 0.214, moderate 0.541, near saturation
//! 0.786).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use runner::store::row::Row;

/// The load points of the verdict tables (fractions of the model's saturation rate).
const LIGHT: f64 = 0.214;
const MODERATE: f64 = 0.541;
const NEAR: f64 = 0.786;
/// The agreement table's split: loads up to this fraction are light and moderate.
const LIGHT_LOAD_LIMIT: f64 = 0.7;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The rows of `reports/<name>/results.parquet`, read once per test binary.
fn rows(name: &'static str) -> &'static [Row] {
    static BUNDLES: OnceLock<Mutex<HashMap<&'static str, &'static [Row]>>> = OnceLock::new();
    let bundles = BUNDLES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut bundles = bundles.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    bundles.entry(name).or_insert_with(|| {
        let path = repository().join("reports").join(name).join("results.parquet");
        let rows = runner::store::parquet::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .0;
        Box::leak(rows.into_boxed_slice())
    })
}

/// A model row and the aggregate simulation row of the same scenario and rate.
#[derive(Clone, Copy)]
struct Point<'a> {
    model: &'a Row,
    simulation: &'a Row,
}

impl Point<'_> {
    fn load(&self) -> f64 {
        self.simulation.fraction_of_saturation.unwrap_or(f64::NAN)
    }

    fn at(&self, load: f64) -> bool {
        (self.load() - load).abs() < 5e-4
    }

    /// (model - simulation) / simulation, when both sides have a latency to compare.
    fn error(&self) -> Option<f64> {
        let compared = self.model.status == "ok"
            && matches!(self.simulation.status.as_str(), "ok" | "imprecise");
        let (model, simulation) = (self.model.latency?, self.simulation.latency?);
        (compared && model.is_finite() && simulation.is_finite() && simulation > 0.0)
            .then(|| (model - simulation) / simulation)
    }

    fn scouting_distance(&self) -> u32 {
        self.simulation.scouting_distance.unwrap_or(0)
    }
}

/// The matched points of a bundle, in row order.
fn points(name: &'static str) -> Vec<Point<'static>> {
    let rows = rows(name);
    let mut models: HashMap<(&str, u64), &Row> = HashMap::new();
    for row in rows.iter().filter(|row| row.method == "model" && !row.is_dense()) {
        models.insert((row.scenario_id.as_str(), row.rate.to_bits()), row);
    }
    rows.iter()
        .filter(|row| row.method == "simulation" && row.replication.is_none())
        .filter_map(|simulation| {
            let model =
                models.get(&(simulation.scenario_id.as_str(), simulation.rate.to_bits()))?;
            Some(Point { model, simulation })
        })
        .collect()
}

/// What a set of points measured.
struct Tally {
    errors: Vec<f64>,
    /// The imprecise compared points' 95% half-widths, as fractions of their mean.
    imprecise: Vec<f64>,
    deadlocked: usize,
    saturated: usize,
}

fn tally<'a>(points: impl IntoIterator<Item = &'a Point<'a>>) -> Tally {
    let mut tally =
        Tally { errors: Vec::new(), imprecise: Vec::new(), deadlocked: 0, saturated: 0 };
    for point in points {
        match (point.error(), point.simulation.status.as_str()) {
            (Some(error), status) => {
                tally.errors.push(error);
                if status == "imprecise" {
                    let sim = point.simulation;
                    tally
                        .imprecise
                        .push(sim.latency_ci95.zip(sim.latency).map_or(f64::NAN, |(h, l)| h / l));
                }
            }
            (None, "deadlock") => tally.deadlocked += 1,
            (None, "saturated") => tally.saturated += 1,
            (None, _) => {}
        }
    }
    tally
}

impl Tally {
    fn within(&self, tolerance: f64) -> usize {
        self.errors.iter().filter(|e| e.abs() <= tolerance).count()
    }

    /// `3 of 24 within 5%`, with `(8 imprecise)` when some of them are.
    fn count(&self, tolerance: f64) -> String {
        let mut text = format!(
            "{} of {} within {}%",
            self.within(tolerance),
            self.errors.len(),
            (100.0 * tolerance).round()
        );
        if !self.imprecise.is_empty() {
            text += &format!(" ({} imprecise)", self.imprecise.len());
        }
        text
    }

    /// `4 deadlocked, 2 saturated`, or nothing.
    fn unstable(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.deadlocked > 0 {
            parts.push(format!("{} deadlocked", self.deadlocked));
        }
        if self.saturated > 0 {
            parts.push(format!("{} saturated", self.saturated));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    fn lowest(&self) -> f64 {
        self.errors.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn highest(&self) -> f64 {
        self.errors.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    /// `-17.8% to +11.2%`, after `model low, ` or `model high, ` when every error has that
    /// sign.
    fn range(&self) -> String {
        let range = format!("{} to {}", percent(self.lowest()), percent(self.highest()));
        if self.lowest() > 0.0 {
            format!("model high, {range}")
        } else if self.highest() < 0.0 {
            format!("model low, {range}")
        } else {
            range
        }
    }

    /// The sizes of the errors, `6.3% to 19.7%`, for a caption that gives their side in words
    /// (`below`, `above`): signed when the errors have both signs.
    fn magnitudes(&self) -> String {
        let (low, high) = (self.lowest(), self.highest());
        if low > 0.0 {
            format!("{:.1}% to {:.1}%", 100.0 * low, 100.0 * high)
        } else if high < 0.0 {
            format!("{:.1}% to {:.1}%", -100.0 * high, -100.0 * low)
        } else {
            format!("{} to {}", percent(low), percent(high))
        }
    }

    /// [`count`](Self::count) with the imprecise points' median 95% half-width:
    /// `4 of 35 within 5% (34 imprecise, median half-width ±20.5%)`.
    fn count_with_spread(&self, tolerance: f64) -> String {
        let count = self.count(tolerance);
        match self.imprecise.is_empty() {
            true => count,
            false => format!(
                "{}, median half-width ±{:.1}%)",
                count.trim_end_matches(')'),
                100.0 * median(self.imprecise.clone())
            ),
        }
    }
}

/// A signed percentage with one decimal: `+3.6%`, `-17.8%`.
fn percent(fraction: f64) -> String {
    format!("{:+.1}%", 100.0 * fraction)
}

/// A load fraction with up to three decimals: `0.786`, `0.95`.
fn load_text(load: f64) -> String {
    let text = format!("{load:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A count with thousands separators: `1,296`.
fn thousands(count: usize) -> String {
    let digits = count.to_string();
    let mut text = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// The median (the mean of the middle two for an even count); NaN for none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if !n.is_multiple_of(2) => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The points of `bundle` for which `keep` holds.
fn select(bundle: &'static str, keep: impl Fn(&Point) -> bool) -> Vec<Point<'static>> {
    points(bundle).into_iter().filter(|point| keep(point)).collect()
}

/// A checked claim: the anchor that names it and the strings its query derives.
struct Claim {
    key: &'static str,
    /// The bundle the numbers come from (named in failure messages).
    bundle: &'static str,
    expected: fn() -> Vec<String>,
    /// Literals of the text with digits that are configuration, not measurement.
    uncovered: &'static [&'static str],
}

const CLAIMS: &[Claim] = &[
    Claim { key: "ss light K=0", bundle: "ss_torus", expected: ss_light_k0, uncovered: &[] },
    Claim {
        key: "ss light K>=1",
        bundle: "ss_torus",
        expected: ss_light_scouting,
        uncovered: &["`2K - 1`", "`2 min(K, H)`"],
    },
    Claim {
        key: "ss moderate K>=1",
        bundle: "ss_torus",
        expected: || ss_scouting(MODERATE, 0.05),
        uncovered: &[],
    },
    Claim { key: "ss near K>=1", bundle: "ss_torus", expected: ss_near, uncovered: &[] },
    Claim { key: "ss deadlock", bundle: "ss_torus", expected: ss_deadlock, uncovered: &[] },
    Claim { key: "ss caption", bundle: "ss_torus", expected: ss_caption, uncovered: &[] },
    Claim { key: "nbc light", bundle: "nbc_torus", expected: nbc_light, uncovered: &[] },
    Claim { key: "nbc moderate", bundle: "nbc_torus", expected: nbc_moderate, uncovered: &[] },
    Claim { key: "nbc mean error", bundle: "nbc_torus", expected: nbc_mean, uncovered: &[] },
    Claim { key: "nbc saturation", bundle: "nbc_torus", expected: nbc_saturation, uncovered: &[] },
    Claim { key: "nbc caption", bundle: "nbc_torus", expected: nbc_caption, uncovered: &[] },
    Claim {
        key: "cs fault maps",
        bundle: "cs_torus_faults",
        expected: cs_fault_maps,
        uncovered: &["4 fault maps", "`latency_ci95_noise`"],
    },
    Claim {
        key: "cs V=1 no faults",
        bundle: "cs_torus_faults",
        expected: cs_v1_no_faults,
        uncovered: &[],
    },
    Claim {
        key: "cs V=10 no faults",
        bundle: "cs_torus_faults",
        expected: cs_v10_no_faults,
        uncovered: &["`M + 2d`"],
    },
    Claim {
        key: "cs V=1 faults",
        bundle: "cs_torus_faults",
        expected: cs_v1_faults,
        uncovered: &[],
    },
    Claim {
        key: "cs V=10 faults",
        bundle: "cs_torus_faults",
        expected: cs_v10_faults,
        uncovered: &[],
    },
    Claim {
        key: "cs near faults",
        bundle: "cs_torus_faults",
        expected: cs_near_faults,
        uncovered: &[],
    },
    Claim {
        key: "bc precision",
        bundle: "broadcast_hypercube",
        expected: bc_precision,
        uncovered: &["5% target", "100,000-cycle cap"],
    },
    Claim { key: "bc light", bundle: "broadcast_hypercube", expected: bc_light, uncovered: &[] },
    Claim {
        key: "bc moderate",
        bundle: "broadcast_hypercube",
        expected: bc_moderate,
        uncovered: &[],
    },
    Claim { key: "bc near", bundle: "broadcast_hypercube", expected: bc_near, uncovered: &[] },
    Claim {
        key: "bc caption",
        bundle: "broadcast_hypercube",
        expected: bc_caption,
        uncovered: &[],
    },
    Claim { key: "bft latency", bundle: "bft", expected: bft_latency, uncovered: &["0.85"] },
    Claim { key: "bft high load", bundle: "bft", expected: bft_high_load, uncovered: &[] },
    Claim {
        key: "bft throughput",
        bundle: "bft",
        expected: bft_throughput,
        uncovered: &["M/G/1", "M/G/2"],
    },
    Claim {
        key: "bft caption latency",
        bundle: "bft",
        expected: bft_caption_latency,
        uncovered: &["0.85"],
    },
    Claim {
        key: "bft caption throughput",
        bundle: "bft",
        expected: bft_caption_throughput,
        uncovered: &[],
    },
    Claim {
        key: "booksim saturation",
        bundle: "crosscheck_booksim",
        expected: booksim_saturation,
        uncovered: &["3%"],
    },
    Claim {
        key: "booksim latency",
        bundle: "crosscheck_booksim",
        expected: booksim_latency,
        uncovered: &["3%", "0.3, 0.6 and 0.8"],
    },
    Claim {
        key: "booksim dragonfly",
        bundle: "crosscheck_booksim_dragonfly",
        expected: booksim_dragonfly,
        uncovered: &["5%"],
    },
];

/// The captions that quote numbers: (spec, the start of the caption, the claim's key). Every
/// other caption of these specs must hold no number but configuration.
const CAPTIONS: &[(&str, &str, &str)] = &[
    ("ss_torus", "SS latency vs traffic rate", "ss caption"),
    ("nbc_torus", "Duato-Nbc latency vs traffic rate", "nbc caption"),
    ("broadcast_hypercube", "Mean broadcast latency vs generation rate", "bc caption"),
    ("bft", "BFT latency vs offered load", "bft caption latency"),
    ("bft", "Accepted vs offered throughput", "bft caption throughput"),
];

/// The specs whose captions are checked.
const SPECS: &[&str] = &["ss_torus", "nbc_torus", "cs_torus_faults", "broadcast_hypercube", "bft"];

// --- Scouting switching (ss_torus) ------------------------------------------------------

fn ss_light_k0() -> Vec<String> {
    let t = tally(&select("ss_torus", |p| p.at(LIGHT) && p.scouting_distance() == 0));
    vec![t.count(0.05), t.range()]
}

fn ss_scouting(load: f64, tolerance: f64) -> Vec<String> {
    let t = tally(&select("ss_torus", |p| p.at(load) && p.scouting_distance() >= 1));
    let mut expected = vec![t.count(tolerance), t.range()];
    expected.extend(t.unstable());
    expected
}

fn ss_light_scouting() -> Vec<String> {
    let mut expected = ss_scouting(LIGHT, 0.05);
    for radix in [8, 16] {
        let t = tally(&select("ss_torus", |p| {
            p.at(LIGHT) && p.scouting_distance() >= 1 && p.simulation.radix == radix
        }));
        expected.push(format!("{radix}x{radix}: {} of {}", t.within(0.05), t.errors.len()));
    }
    expected
}

fn ss_near() -> Vec<String> {
    let t = tally(&select("ss_torus", |p| p.at(NEAR) && p.scouting_distance() >= 1));
    let mut expected = vec![t.count_with_spread(0.15), t.range()];
    expected.extend(t.unstable());
    expected
}

/// The points with K >= 1.
fn scouting(points: &[Point<'static>]) -> Vec<Point<'static>> {
    points.iter().filter(|p| p.scouting_distance() >= 1).copied().collect()
}

/// How many points have K = 0 (plain wormhole).
fn wormhole(points: &[Point]) -> usize {
    points.iter().filter(|p| p.scouting_distance() == 0).count()
}

fn ss_deadlock() -> Vec<String> {
    let all = points("ss_torus");
    let deadlocked: Vec<Point> =
        all.iter().filter(|p| p.simulation.status == "deadlock").copied().collect();
    let mut by_distance: Vec<(u32, usize)> = Vec::new();
    for point in scouting(&deadlocked) {
        match by_distance.iter_mut().find(|(k, _)| *k == point.scouting_distance()) {
            Some(entry) => entry.1 += 1,
            None => by_distance.push((point.scouting_distance(), 1)),
        }
    }
    by_distance.sort_unstable();
    let list: Vec<String> = by_distance.iter().map(|(k, n)| format!("{k} ({n})")).collect();
    let lowest = scouting(&deadlocked).iter().map(Point::load).fold(f64::INFINITY, f64::min);
    let other_channels = deadlocked.iter().filter(|p| p.simulation.virtual_channels != 1).count();
    vec![
        format!(
            "{} of the {} points with K >= 1 deadlock",
            scouting(&deadlocked).len(),
            scouting(&all).len()
        ),
        format!("K = {}", list.join(", ")),
        format!("from {} of the model's saturation rate up", load_text(lowest)),
        match other_channels {
            0 => "none with V = 6".to_owned(),
            n => format!("{n} with V = 6"),
        },
        format!("{} of {}", wormhole(&deadlocked), wormhole(&all)),
    ]
}

fn ss_caption() -> Vec<String> {
    let t = tally(&select("ss_torus", |p| p.at(LIGHT) && p.scouting_distance() == 0));
    vec![format!("by {} at {} of the model's saturation rate", t.magnitudes(), load_text(LIGHT))]
}

// --- Duato-Nbc (nbc_torus) --------------------------------------------------------------

/// The errors of one load, per radix in M order: `8x8 -8.2%, -14.6%`.
fn nbc_per_radix(load: f64) -> Vec<String> {
    [8, 16]
        .iter()
        .map(|&radix| {
            let mut points = select("nbc_torus", |p| p.at(load) && p.simulation.radix == radix);
            points.sort_by_key(|p| p.simulation.message_length);
            let errors: Vec<String> =
                points.iter().map(|p| p.error().map_or("-".to_owned(), percent)).collect();
            format!("{radix}x{radix} {}", errors.join(", "))
        })
        .collect()
}

fn nbc_light() -> Vec<String> {
    let t = tally(&select("nbc_torus", |p| p.at(LIGHT)));
    let mut expected = vec![t.count(0.05)];
    expected.extend(nbc_per_radix(LIGHT));
    expected
}

fn nbc_moderate() -> Vec<String> {
    let t = tally(&select("nbc_torus", |p| p.at(MODERATE)));
    vec![t.count(0.05), t.range()]
}

/// The scenarios of a bundle in row order: (radix, M, their points).
fn scenarios(bundle: &'static str) -> Vec<Vec<Point<'static>>> {
    let mut out: Vec<Vec<Point>> = Vec::new();
    for point in points(bundle) {
        match out.iter_mut().find(|s| s[0].simulation.scenario_id == point.simulation.scenario_id) {
            Some(scenario) => scenario.push(point),
            None => out.push(vec![point]),
        }
    }
    out
}

fn nbc_mean() -> Vec<String> {
    let mut expected = Vec::new();
    let mut imprecise = Vec::new();
    let mut sizes = Vec::new();
    for radix in [8, 16] {
        let mut means = Vec::new();
        let mut chosen: Vec<Vec<Point>> =
            scenarios("nbc_torus").into_iter().filter(|s| s[0].simulation.radix == radix).collect();
        chosen.sort_by_key(|s| s[0].simulation.message_length);
        for scenario in chosen {
            let t = tally(scenario.iter().filter(|p| p.load() <= LIGHT_LOAD_LIMIT));
            let mean = t.errors.iter().map(|e| e.abs()).sum::<f64>() / t.errors.len() as f64;
            means.push(format!("{:.1}%", 100.0 * mean));
            imprecise.push(t.imprecise.len().to_string());
            sizes.push(t.errors.len());
        }
        expected.push(format!("{} ({radix}x{radix}", means.join(", ")));
    }
    sizes.dedup();
    expected.push(match sizes.as_slice() {
        [size] => format!("over {size} points each"),
        _ => format!("over {sizes:?} points"),
    });
    let last = imprecise.pop().unwrap_or_default();
    expected.push(format!("{} and {last} imprecise", imprecise.join(", ")));
    expected
}

/// Per scenario (radix, M), the lowest load at which the simulation saturated.
fn nbc_first_saturated() -> Vec<(u32, u32, Option<f64>)> {
    scenarios("nbc_torus")
        .iter()
        .map(|s| {
            let first = s
                .iter()
                .filter(|p| p.simulation.status == "saturated")
                .map(|p| p.load())
                .fold(None, |low: Option<f64>, load| Some(low.map_or(load, |l| l.min(load))));
            (s[0].simulation.radix, s[0].simulation.message_length, first)
        })
        .collect()
}

fn nbc_saturation() -> Vec<String> {
    let highest = points("nbc_torus").iter().map(|p| p.load()).fold(0.0, f64::max);
    nbc_first_saturated()
        .into_iter()
        .map(|(radix, length, first)| match first {
            Some(load) => format!("{} ({radix}x{radix}, M = {length})", load_text(load)),
            None => format!(
                "{radix}x{radix}, M = {length} does not saturate up to {}",
                load_text(highest)
            ),
        })
        .collect()
}

fn nbc_caption() -> Vec<String> {
    let loads: Vec<f64> = nbc_first_saturated()
        .into_iter()
        .filter(|(radix, _, _)| *radix == 8)
        .filter_map(|(_, _, first)| first)
        .collect();
    let low = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let high = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    vec![format!("8x8: at {} to {} of the model's rate", load_text(low), load_text(high))]
}

// --- Circuit switching with faults (cs_torus_faults) -----------------------------------

fn cs(keep: impl Fn(&Point) -> bool) -> Tally {
    tally(&select("cs_torus_faults", keep))
}

fn cs_fault_maps() -> Vec<String> {
    let rows: Vec<&Row> = rows("cs_torus_faults")
        .iter()
        .filter(|r| r.method == "simulation" && r.replication.is_none() && r.fault_rate > 0.0)
        .filter(|r| r.latency.is_some_and(f64::is_finite))
        .collect();
    let relative = |value: Option<f64>, row: &Row| value.zip(row.latency).map(|(h, l)| h / l);
    let spread: Vec<f64> = rows.iter().filter_map(|r| relative(r.latency_ci95, r)).collect();
    let noise: Vec<f64> =
        rows.iter().filter_map(|r| relative(r.intermediate("latency_ci95_noise"), r)).collect();
    vec![
        format!("median ±{:.1}% of the mean", 100.0 * median(spread)),
        format!("simulation noise alone is ±{:.1}%", 100.0 * median(noise)),
    ]
}

fn at_verdict_loads(point: &Point) -> bool {
    point.at(LIGHT) || point.at(MODERATE) || point.at(NEAR)
}

fn cs_v1_no_faults() -> Vec<String> {
    let t = cs(|p| {
        at_verdict_loads(p) && p.simulation.virtual_channels == 1 && p.simulation.fault_rate == 0.0
    });
    vec![t.count(0.05), t.range()]
}

fn cs_v10_no_faults() -> Vec<String> {
    let mut expected = Vec::new();
    for (name, load, tolerance) in
        [("light", LIGHT, 0.05), ("moderate", MODERATE, 0.05), ("near saturation", NEAR, 0.15)]
    {
        let t = cs(|p| {
            p.at(load) && p.simulation.virtual_channels == 10 && p.simulation.fault_rate == 0.0
        });
        expected.push(format!("{name}: {}", t.count(tolerance)));
        expected.push(format!("{name}: {}", t.range()));
    }
    expected
}

fn cs_v1_faults() -> Vec<String> {
    let mut expected = Vec::new();
    for theta in [0.1, 0.2] {
        let t = cs(|p| {
            (p.at(LIGHT) || p.at(MODERATE))
                && p.simulation.virtual_channels == 1
                && (p.simulation.fault_rate - theta).abs() < 1e-9
        });
        expected.push(format!("theta = {theta}: {}", t.count(0.05)));
        expected.push(format!("{} (theta = {theta})", t.range()));
    }
    expected
}

fn cs_v10_faults() -> Vec<String> {
    let t = cs(|p| {
        (p.at(LIGHT) || p.at(MODERATE))
            && p.simulation.virtual_channels == 10
            && p.simulation.fault_rate > 0.0
    });
    vec![t.count(0.05), t.range()]
}

fn cs_near_faults() -> Vec<String> {
    let mut expected = Vec::new();
    for channels in [1, 10] {
        let t = cs(|p| {
            p.at(NEAR) && p.simulation.virtual_channels == channels && p.simulation.fault_rate > 0.0
        });
        expected.push(format!("V = {channels}: {}", t.count(0.15)));
        expected.push(format!("{} (V = {channels})", t.range()));
    }
    expected
}

// --- Broadcast in hypercubes (broadcast_hypercube) -------------------------------------

fn bc(keep: impl Fn(&Point) -> bool) -> Tally {
    tally(&select("broadcast_hypercube", keep))
}

fn bc_precision() -> Vec<String> {
    let simulation: Vec<&Row> =
        rows("broadcast_hypercube").iter().filter(|r| r.method == "simulation").collect();
    let replications: Vec<&&Row> = simulation.iter().filter(|r| r.replication.is_some()).collect();
    let imprecise = replications.iter().filter(|r| r.status == "imprecise").count();
    let spread: Vec<f64> = simulation
        .iter()
        .filter(|r| r.replication.is_none())
        .filter_map(|r| r.latency_ci95.zip(r.latency).map(|(h, l)| h / l))
        .filter(|x| x.is_finite())
        .collect();
    vec![
        format!("{} of the {} replications", thousands(imprecise), thousands(replications.len())),
        format!("median half-width is ±{:.1}%", 100.0 * median(spread)),
    ]
}

fn bc_light() -> Vec<String> {
    let all = bc(|p| p.at(LIGHT));
    let mut expected =
        vec![all.count(0.05), format!("{} of {} within 15%", all.within(0.15), all.errors.len())];
    for channels in [2, 4] {
        let t = bc(|p| p.at(LIGHT) && p.simulation.virtual_channels == channels);
        expected.push(format!("V = {channels}: {} of {}", t.within(0.05), t.errors.len()));
        expected.push(format!("V = {channels}: {}", t.range()));
    }
    expected
}

fn bc_beyond_light(load: f64) -> Vec<String> {
    let t = bc(|p| p.at(load));
    let mut expected =
        vec![t.count_with_spread(0.05), format!("{} within 15%", t.within(0.15)), t.range()];
    expected.extend(t.unstable());
    expected
}

fn bc_moderate() -> Vec<String> {
    bc_beyond_light(MODERATE)
}

fn bc_near() -> Vec<String> {
    let mut expected = bc_beyond_light(NEAR);
    for channels in [2, 4] {
        let t = bc(|p| p.at(NEAR) && p.simulation.virtual_channels == channels);
        expected.push(format!("V = {channels}: {}", t.range()));
    }
    expected
}

fn bc_caption() -> Vec<String> {
    let t = bc(|p| p.at(LIGHT) && p.simulation.virtual_channels == 4);
    let side = if t.lowest() > 0.0 { "above" } else { "around" };
    vec![format!("with V = 4 it starts {} {side} at light load", t.magnitudes())]
}

// --- Butterfly fat-tree (bft) -----------------------------------------------------------

/// The fat-tree's cut: up to this fraction of the model's maximum the latency is compared.
const BFT_CUT: f64 = 0.85;
/// The load above the cut the row quotes.
const BFT_HIGH: f64 = 0.93;

fn bft_lengths() -> Vec<u32> {
    let mut lengths: Vec<u32> = points("bft").iter().map(|p| p.simulation.message_length).collect();
    lengths.sort_unstable();
    lengths.dedup();
    lengths
}

fn bft_within_cut(length: Option<u32>) -> Tally {
    tally(&select("bft", |p| {
        p.load() <= BFT_CUT + 1e-6 && length.is_none_or(|m| p.simulation.message_length == m)
    }))
}

fn bft_largest_below_cut() -> String {
    let t = bft_within_cut(None);
    format!("within {:.1}%", 100.0 * t.errors.iter().map(|e| e.abs()).fold(0.0, f64::max))
}

fn bft_latency() -> Vec<String> {
    let mut expected = vec![bft_largest_below_cut()];
    for length in bft_lengths() {
        let t = bft_within_cut(Some(length));
        let mut text = format!("M = {length}: {}", t.range());
        if !t.imprecise.is_empty() {
            text += &format!(" ({} imprecise)", t.imprecise.len());
        }
        expected.push(text);
    }
    expected
}

fn bft_high_load() -> Vec<String> {
    let errors: Vec<String> = bft_lengths()
        .into_iter()
        .map(|length| {
            let t = tally(&select("bft", |p| {
                (p.load() - BFT_HIGH).abs() < 1e-3 && p.simulation.message_length == length
            }));
            t.errors.first().map_or("-".to_owned(), |e| percent(*e))
        })
        .collect();
    vec![format!("at {BFT_HIGH}: {}", errors.join(", "))]
}

/// Per message length, the model's saturation rate over the simulator's highest accepted
/// throughput (throughput mode, `ok` or `saturated`: the bundle's saturation table).
fn bft_ratios() -> Vec<f64> {
    let rows = rows("bft");
    bft_lengths()
        .into_iter()
        .map(|length| {
            let of_length =
                rows.iter().filter(|r| r.message_length == length && r.replication.is_none());
            let model = of_length.clone().find_map(|r| r.saturation_rate).unwrap_or(f64::NAN);
            let simulated = of_length
                .filter(|r| r.method == "simulation" && r.measure.as_deref() == Some("throughput"))
                .filter(|r| matches!(r.status.as_str(), "ok" | "saturated"))
                .filter_map(|r| r.throughput)
                .fold(f64::NAN, f64::max);
            model / simulated
        })
        .collect()
}

/// `6% to 10%`: how far the model's maximum is below the simulator's.
fn bft_shortfall() -> String {
    let shortfalls: Vec<f64> = bft_ratios().iter().map(|r| 100.0 * (1.0 - r)).collect();
    let low = shortfalls.iter().copied().fold(f64::INFINITY, f64::min);
    let high = shortfalls.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{low:.0}% to {high:.0}%")
}

fn bft_throughput() -> Vec<String> {
    let ratios: Vec<String> = bft_ratios().iter().map(|r| format!("{r:.2}")).collect();
    vec![
        format!("maximum accepted: {}", ratios.join(", ")),
        format!("model low by {}", bft_shortfall()),
    ]
}

fn bft_caption_latency() -> Vec<String> {
    vec![bft_largest_below_cut(), format!("which is {} below the simulator's", bft_shortfall())]
}

fn bft_caption_throughput() -> Vec<String> {
    vec![format!("the model's maximum, {} lower", bft_shortfall())]
}

// --- BookSim 2 cross-checks (crosscheck_booksim, crosscheck_booksim_dragonfly) -----------

/// A mean with its 95% half-width.
type Estimate = (f64, Option<f64>);

/// runner's estimate and BookSim's of the same quantity.
type SideBySide = (Estimate, Estimate);

/// A value of runner and BookSim with their 95% half-widths: whether they agree within
/// `tolerance` (relative to BookSim's) or their intervals overlap, and the relative
/// difference (runner - BookSim) / BookSim.
fn side_by_side(runner: Estimate, booksim: Estimate, tolerance: f64) -> (bool, f64) {
    let difference = (runner.0 - booksim.0) / booksim.0;
    let overlap =
        (runner.0 - booksim.0).abs() <= runner.1.unwrap_or(0.0) + booksim.1.unwrap_or(0.0);
    (difference.abs() <= tolerance || overlap, difference)
}

/// Per scenario, the two simulators' mean saturation throughputs in flits (the Aggregates of
/// their searches, as the saturation table gives them) with their half-widths: (runner,
/// BookSim).
fn searched_saturations(bundle: &'static str) -> Vec<SideBySide> {
    let searched = |method: &str| -> HashMap<&str, Estimate> {
        rows(bundle)
            .iter()
            .filter(|r| r.method == method && r.replication.is_none() && r.is_saturation_search())
            .filter_map(|r| {
                let half = r.intermediate("flit_throughput_ci95");
                Some((r.scenario_id.as_str(), (r.flit_throughput?, half)))
            })
            .collect()
    };
    let (runner, booksim) = (searched("simulation"), searched("booksim"));
    let mut ids: Vec<&&str> = runner.keys().collect();
    ids.sort_unstable();
    ids.into_iter().filter_map(|id| Some((runner[*id], *booksim.get(*id)?))).collect()
}

/// Per scenario and load, the two simulators' mean latencies with their half-widths.
fn latencies(bundle: &'static str) -> Vec<SideBySide> {
    let aggregates = |method: &str| -> HashMap<(&str, u64), Estimate> {
        rows(bundle)
            .iter()
            .filter(|r| r.method == method && r.replication.is_none() && !r.is_saturation_search())
            .filter(|r| matches!(r.status.as_str(), "ok" | "imprecise"))
            .filter_map(|r| {
                Some(((r.scenario_id.as_str(), r.rate.to_bits()), (r.latency?, r.latency_ci95)))
            })
            .collect()
    };
    let (runner, booksim) = (aggregates("simulation"), aggregates("booksim"));
    let mut keys: Vec<&(&str, u64)> = runner.keys().collect();
    keys.sort_unstable();
    keys.into_iter().filter_map(|key| Some((runner[key], *booksim.get(key)?))).collect()
}

/// "N of M agree" (within T% or with overlapping intervals), and the farthest difference.
fn agreement(pairs: &[SideBySide], tolerance: f64) -> Vec<String> {
    let verdicts: Vec<(bool, f64)> =
        pairs.iter().map(|&(a, b)| side_by_side(a, b, tolerance)).collect();
    let agreeing = verdicts.iter().filter(|(agrees, _)| *agrees).count();
    let farthest = verdicts.iter().map(|(_, d)| *d).max_by(|a, b| a.abs().total_cmp(&b.abs()));
    vec![
        format!("{agreeing} of {} agree", verdicts.len()),
        format!("the farthest {:+.1}%", 100.0 * farthest.unwrap_or(f64::NAN)),
    ]
}

fn booksim_saturation() -> Vec<String> {
    let pairs = searched_saturations("crosscheck_booksim");
    let ratios: Vec<f64> = pairs.iter().map(|(a, b)| a.0 / b.0).collect();
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut expected = vec![format!(
        "runner / BookSim median {:.3} over {} configurations ({low:.3} to {high:.3})",
        median(ratios.clone()),
        ratios.len()
    )];
    expected.extend(agreement(&pairs, 0.03));
    expected
}

fn booksim_latency() -> Vec<String> {
    agreement(&latencies("crosscheck_booksim"), 0.03)
}

fn booksim_dragonfly() -> Vec<String> {
    let saturation = agreement(&searched_saturations("crosscheck_booksim_dragonfly"), 0.05);
    let latency = agreement(&latencies("crosscheck_booksim_dragonfly"), 0.05);
    vec![
        format!("saturation {}, {}", saturation[0], saturation[1]),
        format!("latency {}, {}", latency[0], latency[1]),
    ]
}

// --- Checking text ----------------------------------------------------------------------

/// Configuration prefixes: a number right after one of these names a configuration.
const CONFIGURATION: &[&str] = &[
    "K = ", "K >= ", "V = ", "M = ", "N = ", "n = ", "k = ", "theta = ", "beta = ", "E-BC-",
    "E-BFT-", "E-SS-", "E-CS-", "Fig. ", "Figure ", "eq. ", "Section ",
];

/// Lists of configuration values: the numbers after the first are configuration too.
const CONFIGURATION_LISTS: &[&str] = &["M = 32, 64", "M = 16, 32, 64", "M = 32 and 64"];

/// The numbers of `text` that are neither derived nor configuration.
fn underived_numbers(text: &str, expected: &[String], uncovered: &[&str]) -> Vec<String> {
    let mut rest = without_link_targets(text);
    let mut literals: Vec<&str> = expected.iter().map(String::as_str).collect();
    literals.extend(uncovered);
    literals.extend(CONFIGURATION_LISTS);
    literals.sort_by_key(|literal| std::cmp::Reverse(literal.len()));
    for literal in literals {
        rest = rest.replace(literal, " ");
    }
    let chars: Vec<char> = rest.chars().collect();
    let mut found = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        if !chars[index].is_ascii_digit() {
            index += 1;
            continue;
        }
        let start = index;
        while index < chars.len()
            && (chars[index].is_ascii_digit()
                || (matches!(chars[index], '.' | ',')
                    && chars.get(index + 1).is_some_and(char::is_ascii_digit)))
        {
            index += 1;
        }
        let before: String = chars[..start].iter().collect();
        let dimension = chars.get(index) == Some(&'x')
            && chars.get(index + 1).is_some_and(char::is_ascii_digit)
            || (start >= 2 && chars[start - 1] == 'x' && chars[start - 2].is_ascii_digit());
        let configured = CONFIGURATION.iter().any(|prefix| before.ends_with(prefix));
        if !dimension && !configured {
            found.push(chars[start..index].iter().collect());
        }
    }
    found
}

/// `text` with the targets of its Markdown links (`](...)`) taken out.
fn without_link_targets(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("](") {
        out.push_str(&rest[..start + 1]);
        rest = rest[start + 2..].find(')').map_or("", |end| &rest[start + 2 + end + 1..]);
    }
    out.push_str(rest);
    out
}

/// Checks one anchored text against its claim; failures are pushed to `failures`.
fn check(place: &str, text: &str, claim: &Claim, failures: &mut Vec<String>) {
    let expected = (claim.expected)();
    for string in &expected {
        if !text.contains(string.as_str()) {
            failures.push(format!(
                "{place} (`{}`): reports/{}/results.parquet gives `{string}`, which the text does \
                 not say:\n    {text}",
                claim.key, claim.bundle
            ));
        }
    }
    let underived = underived_numbers(text, &expected, claim.uncovered);
    if !underived.is_empty() {
        failures.push(format!(
            "{place} (`{}`): numbers not derived from reports/{}/results.parquet: {}\n    the \
             derived strings: {expected:?}\n    {text}",
            claim.key,
            claim.bundle,
            underived.join(", ")
        ));
    }
}

fn claim(key: &str) -> Option<&'static Claim> {
    CLAIMS.iter().find(|claim| claim.key == key)
}

const ANCHOR: &str = "<!-- verdict: ";

/// The anchored texts of a Markdown page: (key, text to check, line number). A table row's text is
/// its cells after the first; a paragraph's, its lines.
fn anchored_texts(readme: &str) -> Vec<(String, String, usize)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut anchors = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(start) = line.find(ANCHOR) else { continue };
        let key = line[start + ANCHOR.len()..].split(" -->").next().unwrap_or("").trim();
        let text = if line.starts_with('|') {
            line.split('|').skip(2).collect::<Vec<_>>().join("|")
        } else {
            let first =
                lines[..index].iter().rposition(|l| l.trim().is_empty()).map_or(0, |i| i + 1);
            lines[first..=index].join(" ")
        };
        let text = text.replace(&format!("{ANCHOR}{key} -->"), " ");
        anchors.push((key.to_owned(), text, index + 1));
    }
    anchors
}

/// The rows of the README's verdict tables (the sections from the first paper's to the
/// statistics), with their line numbers.
fn verdict_rows(readme: &str) -> Vec<(usize, &str)> {
    let mut inside = false;
    let mut rows = Vec::new();
    for (index, line) in readme.lines().enumerate() {
        if line.starts_with("## ") {
            inside = !line.starts_with("## How") && !line.starts_with("## The statistics");
        }
        let header = line.starts_with("| the paper claims") || line.starts_with("| expectation");
        if inside && line.starts_with('|') && !header && !line.starts_with("|---") {
            rows.push((index + 1, line));
        }
    }
    rows
}

/// The `title:` strings of a spec's figures.
fn captions(spec: &str) -> Vec<String> {
    let path = repository().join("experiments").join(format!("{spec}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- title: "))
        .map(|title| title.trim().trim_matches('"').to_owned())
        .collect()
}

fn readme() -> String {
    let path = repository().join("reports/README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_readme_verdicts_are_the_bundles_numbers() {
    let readme = readme();
    let mut failures = Vec::new();
    let anchors = anchored_texts(&readme);
    for (key, text, line) in &anchors {
        match claim(key) {
            Some(claim) => check(&format!("reports/README.md:{line}"), text, claim, &mut failures),
            None => failures.push(format!("reports/README.md:{line}: no claim `{key}` here")),
        }
    }
    for (line, row) in verdict_rows(&readme) {
        if !row.contains(ANCHOR) {
            failures.push(format!(
                "reports/README.md:{line}: a verdict row with no anchor:\n    {row}"
            ));
        }
    }
    let caption_keys: Vec<&str> = CAPTIONS.iter().map(|(_, _, key)| *key).collect();
    for claim in CLAIMS.iter().filter(|c| !caption_keys.contains(&c.key)) {
        let count = anchors.iter().filter(|(key, _, _)| key == claim.key).count();
        if count != 1 {
            failures.push(format!(
                "reports/README.md: `{}` is anchored {count} times, not once",
                claim.key
            ));
        }
    }
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

/// `docs/validation.md` quotes some of the same numbers beside its own measurements: each of
/// its anchored rows must say what the claim derives (its other numbers are its own).
#[test]
fn docs_validation_quotes_the_bundles_numbers() {
    let path = repository().join("docs/validation.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut failures = Vec::new();
    let anchors = anchored_texts(&text);
    assert!(!anchors.is_empty(), "docs/validation.md has no verdict anchors");
    for (key, row, line) in anchors {
        let Some(claim) = claim(&key) else {
            failures.push(format!("docs/validation.md:{line}: no claim `{key}` here"));
            continue;
        };
        for string in (claim.expected)() {
            if !row.contains(string.as_str()) {
                failures.push(format!(
                    "docs/validation.md:{line} (`{key}`): reports/{}/results.parquet gives \
                     `{string}`, which the text does not say:\n    {row}",
                    claim.bundle
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_paper_specs_captions_are_the_bundles_numbers() {
    let mut failures = Vec::new();
    for spec in SPECS {
        for caption in captions(spec) {
            let place = format!("experiments/{spec}.yaml");
            match CAPTIONS.iter().find(|(s, start, _)| s == spec && caption.starts_with(start)) {
                Some((_, _, key)) => match claim(key) {
                    Some(claim) => check(&place, &caption, claim, &mut failures),
                    None => failures.push(format!("{place}: no claim `{key}`")),
                },
                None => {
                    let underived = underived_numbers(&caption, &[], &[]);
                    if !underived.is_empty() {
                        failures.push(format!(
                            "{place}: a caption quotes {} but no claim checks it:\n    {caption}",
                            underived.join(", ")
                        ));
                    }
                }
            }
        }
    }
    for (spec, start, _) in CAPTIONS {
        if !captions(spec).iter().any(|caption| caption.starts_with(start)) {
            failures.push(format!("experiments/{spec}.yaml: no caption starts `{start}`"));
        }
    }
    assert!(failures.is_empty(), "{} disagreement(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn numbers_are_found_and_configuration_is_not() {
    assert_eq!(
        underived_numbers(
            "0 of 8 within 5% on 8x8, K = 0, V = 1, 6 [x](../a.md#b-1) at 0.786",
            &["0 of 8 within 5%".to_owned()],
            &[]
        ),
        vec!["6", "0.786"]
    );
    assert_eq!(underived_numbers("1,296 runs, E-BC-5", &[], &[]), vec!["1,296"]);
    assert_eq!(thousands(1296), "1,296");
    assert_eq!(thousands(54), "54");
    assert_eq!(load_text(0.95), "0.95");
    assert_eq!(load_text(0.786_363), "0.786");
    assert_eq!(percent(-0.197), "-19.7%");
    assert_eq!(median(vec![3.0, 1.0, 2.0, 4.0]), 2.5);
}
