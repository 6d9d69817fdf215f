//! `kind: histogram` figures: the distribution of a latency (`y`: `latency`,
//! `network_latency` or `source_wait`) at a chosen point, from `histograms.parquet`. Bars give
//! the fraction of the measured messages per bin; the stored bins (per cycle, or power-of-two
//! widths, `store::histograms`) are merged in pairs until at most [`MAX_BARS`] remain, so a
//! long tail stays readable. Dashed lines mark the mean and, where the row has it, the 99th
//! percentile. One page (SVG, PDF, CSV) per chosen point.

use std::fmt::Write as _;

use super::svg::{Anchor, LABEL_FONT_PT, Svg, TICK_FONT_PT};
use super::{COLUMN_WIDTH_PT, Figure};
use crate::report::columns;
use crate::store::histograms::HistogramRow;
use crate::store::row::Row;

/// The most bars a histogram draws.
pub(crate) const MAX_BARS: usize = 60;

/// The header line of a histogram page's CSV.
pub(super) const CSV_HEADER: &str = "figure,task_id,rate,quantity,bin_lower,bin_width,count\n";

/// The figure of one point's histogram of `quantity` (`bins` in ascending order).
pub(super) fn point_figure(
    stem: String,
    title: String,
    point: &Row,
    quantity: &str,
    bins: &[&HistogramRow],
) -> Figure {
    let bars = merge(bins);
    let total: u64 = bars.iter().map(|b| b.2).sum();
    let json = columns::to_json(point);
    let mean = columns::number(&json, quantity);
    let p99 = columns::number(&json, &format!("{quantity}_p99"));
    let svg = draw(&title, quantity, &bars, total, mean, p99);
    let mut caption = format!(
        "Distribution of the {} over the {total} messages measured at this point (bars: \
         fraction of messages per bin of {} cycle{}).",
        columns::axis_label(quantity).split(" (").next().unwrap_or(quantity).to_lowercase(),
        bars.first().map_or(1, |b| b.1),
        if bars.first().map_or(1, |b| b.1) == 1 { "" } else { "s" }
    );
    match (mean.is_some(), p99.is_some()) {
        (true, true) => caption.push_str(" Dashed lines: the mean and the 99th percentile."),
        (true, false) => caption.push_str(" Dashed line: the mean."),
        _ => {}
    }
    let csv = csv(&stem, point, quantity, &bars);
    super::side::page(stem, title, caption, svg, csv)
}

/// `(lower, width, count)` bars: the bins merged in aligned pairs until at most [`MAX_BARS`].
fn merge(bins: &[&HistogramRow]) -> Vec<(u64, u64, u64)> {
    let mut bars: Vec<(u64, u64, u64)> =
        bins.iter().map(|b| (b.bin_lower, b.bin_width.max(1), b.count)).collect();
    while bars.len() > MAX_BARS {
        // Widths come from a file a user can edit: a doubling past u64 ends the merging.
        let Some(width) = bars[0].1.checked_mul(2) else { break };
        let mut merged: Vec<(u64, u64, u64)> = Vec::with_capacity(bars.len() / 2 + 1);
        for (lower, _, count) in bars {
            let lower = lower / width * width;
            match merged.last_mut() {
                Some(last) if last.0 == lower => last.2 += count,
                _ => merged.push((lower, width, count)),
            }
        }
        bars = merged;
    }
    bars
}

fn draw(
    title: &str,
    quantity: &str,
    bars: &[(u64, u64, u64)],
    total: u64,
    mean: Option<f64>,
    p99: Option<f64>,
) -> String {
    let width = COLUMN_WIDTH_PT;
    let (left, right, top) = (44.0, width - 10.0, 22.0);
    let plot_height = width * 0.55;
    let bottom = top + plot_height;
    let height = bottom + 30.0;
    let mut svg = Svg::new(width, height);
    svg.text(width / 2.0, 11.0, LABEL_FONT_PT, Anchor::Middle, title);
    let lo = bars.first().map_or(0.0, |b| b.0 as f64);
    let hi = bars.last().map_or(1.0, |b| b.0.saturating_add(b.1) as f64);
    let hi = if hi > lo {
        hi
    } else if lo + 1.0 > lo {
        lo + 1.0
    } else {
        lo * 2.0
    };
    let fraction = |count: u64| if total > 0 { count as f64 / total as f64 } else { 0.0 };
    let top_fraction = bars.iter().map(|b| fraction(b.2)).fold(0.0, f64::max);
    // Headroom above the tallest bar, for the line labels.
    let y_hi = if top_fraction > 0.0 { top_fraction * 1.12 } else { 1.0 };
    let y_ticks = super::draw::linear_ticks(0.0, y_hi, 4);
    let x = |value: f64| left + (right - left) * (value - lo) / (hi - lo);
    let y = |value: f64| bottom - plot_height * value / y_hi;
    for &(lower, bin, count) in bars {
        let (x0, x1) = (x(lower as f64), x(lower.saturating_add(bin) as f64));
        svg.rect(
            x0,
            y(fraction(count)),
            (x1 - x0 - 0.3).max(0.2),
            bottom - y(fraction(count)),
            "#0072b2",
            None,
        );
    }
    for (value, label) in [(mean, "mean"), (p99, "p99")] {
        let Some(value) = value.filter(|v| (lo..=hi).contains(v)) else { continue };
        let px = x(value);
        svg.dashed_vertical(px, (top, bottom), "#d55e00");
        svg.text(
            px + 2.0,
            top + 8.0 + if label == "p99" { 9.0 } else { 0.0 },
            TICK_FONT_PT,
            Anchor::Start,
            label,
        );
    }
    svg.line((left, bottom), (right, bottom), "black", 0.5);
    svg.line((left, top), (left, bottom), "black", 0.5);
    for (value, text) in super::draw::linear_ticks(lo, hi, 5) {
        svg.line((x(value), bottom), (x(value), bottom + 3.0), "black", 0.5);
        svg.text(x(value), bottom + 11.0, TICK_FONT_PT, Anchor::Middle, &text);
    }
    for (value, text) in y_ticks {
        svg.line((left - 3.0, y(value)), (left, y(value)), "black", 0.5);
        svg.text(left - 5.0, y(value) + 2.5, TICK_FONT_PT, Anchor::End, &text);
    }
    svg.text(
        (left + right) / 2.0,
        bottom + 24.0,
        LABEL_FONT_PT,
        Anchor::Middle,
        &columns::axis_label(quantity),
    );
    svg.vertical_text(10.0, (top + bottom) / 2.0, LABEL_FONT_PT, "fraction of messages");
    svg.finish()
}

/// The tidy CSV of a page: one line per bar.
fn csv(stem: &str, point: &Row, quantity: &str, bars: &[(u64, u64, u64)]) -> String {
    let mut out = String::from(CSV_HEADER);
    for (lower, width, count) in bars {
        let _ = writeln!(
            out,
            "{stem},{},{},{quantity},{lower},{width},{count}",
            point.task_id, point.rate
        );
    }
    out
}
