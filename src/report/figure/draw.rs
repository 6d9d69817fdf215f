//! Drawing one figure with plotters: axes, model lines, simulation markers, CI bars, legend.
//!
//! Everything here works in SVG units of 1/[`UNITS_PER_PT`] pt. The legend goes into the
//! corner of the plotting area that covers the least ink (curves, markers, bars), so it rarely
//! hides data.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{FigureData, Panel, Ranges, UNITS_PER_PT, ranges};
use crate::report::columns::{self, format_number};
use crate::spec::report::FigureSpec;

const TICK_FONT_PT: f64 = 7.5;
pub(super) const LABEL_FONT_PT: f64 = 8.0;
const LINE_PT: f64 = 0.75;
const AXIS_PT: f64 = 0.5;
const MARKER_PT: f64 = 2.2;

/// Okabe-Ito colours, ordered for contrast on white (yellow last).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xF0, 0xE4, 0x42), // yellow
];

/// Draws one panel; returns whether data were clipped at the top.
pub(super) fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    data: &FigureData,
    panel: &Panel,
    title: &str,
    spec: &FigureSpec,
) -> Result<bool, String> {
    let ranges = ranges(panel, spec);
    if spec.log_y {
        let y_spec = (ranges.y.0..ranges.y.1).log_scale().with_key_points(log_ticks(ranges.y));
        draw_chart(area, data, panel, title, spec, &ranges, y_spec)?;
    } else {
        draw_chart(area, data, panel, title, spec, &ranges, ranges.y.0..ranges.y.1)?;
    }
    Ok(ranges.clipped)
}

fn draw_chart<Y>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    data: &FigureData,
    panel: &Panel,
    title: &str,
    spec: &FigureSpec,
    ranges: &Ranges,
    y_spec: Y,
) -> Result<(), String>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut builder = ChartBuilder::on(area);
    builder
        .margin_left(pt(4.0))
        .margin_right(pt(9.0))
        .margin_bottom(pt(3.0))
        .margin_top(pt(if title.is_empty() { 6.0 } else { 3.0 }))
        .x_label_area_size(pt(26.0))
        .y_label_area_size(pt(34.0));
    if !title.is_empty() {
        builder.caption(title, font(LABEL_FONT_PT));
    }
    let mut chart = builder
        .build_cartesian_2d(ranges.x.0..ranges.x.1, y_spec)
        .map_err(|error| error.to_string())?;
    let x_step = (ranges.x.1 - ranges.x.0) / 5.0;
    let x_format = move |value: &f64| tick_label(*value, x_step);
    let y_step = if spec.log_y { 0.0 } else { (ranges.y.1 - ranges.y.0) / 5.0 };
    let y_format = move |value: &f64| tick_label(*value, y_step);
    chart
        .configure_mesh()
        .disable_mesh()
        .axis_style(BLACK.stroke_width(width(AXIS_PT)))
        .set_all_tick_mark_size(pt(3.0))
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .label_style(font(TICK_FONT_PT))
        .axis_desc_style(font(LABEL_FONT_PT))
        .x_desc(columns::axis_label(&spec.x))
        .y_desc(columns::axis_label(&spec.y))
        .draw()
        .map_err(|error| error.to_string())?;

    let base = area.get_base_pixel();
    let to_area = |coord: (i32, i32)| (coord.0 - base.0, coord.1 - base.1);
    let (y_lo, y_hi) = ranges.y;
    let cap = if spec.log_y { y_hi / 1.25 } else { y_hi - (y_hi - y_lo) / 21.0 };
    // Everything drawn in the plotting area, in area pixels, for placing the legend.
    let mut ink: Vec<(i32, i32)> = Vec::new();
    for series in &panel.series {
        let color = PALETTE[series.style_index % PALETTE.len()];
        if let Some(x_sat) = series.saturation_x.filter(|x| *x >= ranges.x.0 && *x <= ranges.x.1) {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x_sat, y_lo), (x_sat, y_hi)],
                    pt(2.5) as u32,
                    pt(2.0) as u32,
                    color.stroke_width(width(0.5)),
                ))
                .map_err(|error| error.to_string())?;
            let bottom = to_area(chart.backend_coord(&(x_sat, y_lo)));
            let top = to_area(chart.backend_coord(&(x_sat, y_hi)));
            sample_segment(&mut ink, bottom, top);
        }
        let line = clip_line(&series.model, cap, spec.log_y);
        let line_pixels: Vec<(i32, i32)> =
            line.iter().map(|point| to_area(chart.backend_coord(point))).collect();
        for pair in line_pixels.windows(2) {
            sample_segment(&mut ink, pair[0], pair[1]);
        }
        if line.len() > 1 {
            chart
                .draw_series(LineSeries::new(line, color.stroke_width(width(LINE_PT))))
                .map_err(|error| error.to_string())?;
        }
        let bar_style = color.stroke_width(width(0.5));
        for &(x, y, ci) in &series.simulation {
            if y > cap * (1.0 + 1e-9) {
                continue;
            }
            if let Some(ci) = ci.filter(|ci| *ci > 0.0) {
                let low = (y - ci).max(y_lo);
                let high = (y + ci).min(y_hi);
                let (x_px, low_px) = to_area(chart.backend_coord(&(x, low)));
                let (_, high_px) = to_area(chart.backend_coord(&(x, high)));
                sample_segment(&mut ink, (x_px, low_px), (x_px, high_px));
                let half = pt(1.6);
                let mut segments = vec![vec![(x_px, low_px), (x_px, high_px)]];
                if high < y_hi {
                    segments.push(vec![(x_px - half, high_px), (x_px + half, high_px)]);
                }
                if low > y_lo {
                    segments.push(vec![(x_px - half, low_px), (x_px + half, low_px)]);
                }
                for segment in segments {
                    area.draw(&PathElement::new(segment, bar_style))
                        .map_err(|error| error.to_string())?;
                }
            }
        }
        let points: Vec<(i32, i32)> = series
            .simulation
            .iter()
            .filter(|point| point.1 <= cap * (1.0 + 1e-9))
            .map(|point| to_area(chart.backend_coord(&(point.0, point.1))))
            .collect();
        for point in points {
            ink.push(point);
            area.draw(&marker(point, series.style_index, color))
                .map_err(|error| error.to_string())?;
        }
        // Points beyond the cap and saturated points: open triangles on the top edge.
        let beyond = series
            .simulation
            .iter()
            .filter(|point| point.1 > cap * (1.0 + 1e-9))
            .map(|point| point.0)
            .chain(series.simulation_saturated.iter().copied());
        for x in beyond {
            let (x_px, y_px) = to_area(chart.backend_coord(&(x, y_hi)));
            ink.push((x_px, y_px + pt(3.0)));
            area.draw(&beyond_marker((x_px, y_px + pt(3.0)), color))
                .map_err(|error| error.to_string())?;
        }
        // Deadlocked simulations: crosses on the top edge.
        for &x in &series.simulation_deadlocked {
            let (x_px, y_px) = to_area(chart.backend_coord(&(x, y_hi)));
            ink.push((x_px, y_px + pt(3.0)));
            area.draw(&deadlock_marker((x_px, y_px + pt(3.0)), color))
                .map_err(|error| error.to_string())?;
        }
        // Imprecise simulations: open circles at their estimate (on the top edge past the cap).
        for &(x, y) in &series.simulation_imprecise {
            let at = to_area(chart.backend_coord(&(x, y.min(y_hi))));
            ink.push(at);
            area.draw(
                &(EmptyElement::at(at)
                    + Circle::new((0, 0), pt(MARKER_PT), color.stroke_width(width(0.6)))),
            )
            .map_err(|error| error.to_string())?;
        }
    }
    let (x_pixels, y_pixels) = chart.plotting_area().get_pixel_range();
    let plot = (to_area((x_pixels.start, y_pixels.start)), to_area((x_pixels.end, y_pixels.end)));
    let entries = legend_entries(data);
    let origin = legend_origin(&entries, plot, &ink);
    draw_legend(area, &entries, origin).map_err(|error| error.to_string())?;
    Ok(())
}

/// One legend row: a line sample, a marker sample, or both, and a label.
struct LegendEntry {
    label: String,
    line: Option<RGBColor>,
    mark: Option<(usize, RGBColor)>,
}

const LEGEND_PAD_PT: f64 = 5.0;
const LEGEND_SAMPLE_PT: f64 = 12.0;
const LEGEND_GAP_PT: f64 = 4.0;

fn legend_entries(data: &FigureData) -> Vec<LegendEntry> {
    let mut entries = Vec::new();
    for (style_index, label) in data.legend.iter().enumerate() {
        let color = PALETTE[style_index % PALETTE.len()];
        entries.push(LegendEntry {
            label: label.clone(),
            line: data.has_model.then_some(color),
            mark: data.has_simulation.then_some((style_index, color)),
        });
    }
    let neutral = if data.legend.is_empty() { PALETTE[0] } else { RGBColor(0x44, 0x44, 0x44) };
    if data.has_model {
        entries.push(LegendEntry { label: "Model".to_owned(), line: Some(neutral), mark: None });
    }
    if data.has_simulation {
        entries.push(LegendEntry {
            label: if data.has_ci { "Simulation (95% CI)" } else { "Simulation" }.to_owned(),
            line: None,
            mark: Some((0, neutral)),
        });
    }
    entries
}

/// Width and height of the legend block, estimating DejaVu Sans at 0.6 em per character.
fn legend_size(entries: &[LegendEntry]) -> (i32, i32) {
    let widest = entries.iter().map(entry_width).max().unwrap_or(0);
    (widest, pt(TICK_FONT_PT * 1.35) * entries.len() as i32)
}

fn entry_width(entry: &LegendEntry) -> i32 {
    let text = entry.label.chars().count() as f64 * 0.6 * TICK_FONT_PT;
    pt(LEGEND_SAMPLE_PT + LEGEND_GAP_PT + text)
}

/// The legend's top-left corner: the corner of the plotting area whose box covers the least
/// ink (preferring top left, then bottom right, top right, bottom left).
fn legend_origin(
    entries: &[LegendEntry],
    ((left, top), (right, bottom)): ((i32, i32), (i32, i32)),
    ink: &[(i32, i32)],
) -> (i32, i32) {
    let (width, height) = legend_size(entries);
    let pad = pt(LEGEND_PAD_PT);
    let candidates = [
        (left + pad, top + pad),
        (right - pad - width, bottom - pad - height - pt(2.0)),
        (right - pad - width, top + pad),
        (left + pad, bottom - pad - height - pt(2.0)),
    ];
    let margin = pt(2.0);
    let covered = |&(x, y): &(i32, i32)| {
        ink.iter()
            .filter(|point| {
                point.0 >= x - margin
                    && point.0 <= x + width + margin
                    && point.1 >= y - margin - pt(TICK_FONT_PT) / 2
                    && point.1 <= y + height + margin
            })
            .count()
    };
    candidates.iter().min_by_key(|candidate| covered(candidate)).copied().unwrap_or(candidates[0])
}

/// Draws the legend with its top-left corner at `origin`.
fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[LegendEntry],
    origin: (i32, i32),
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let row_height = pt(TICK_FONT_PT * 1.35);
    let x = origin.0;
    let mut y = origin.1 - row_height / 2;
    let text_style = font(TICK_FONT_PT).pos(Pos::new(HPos::Left, VPos::Center));
    for entry in entries {
        y += row_height;
        let sample = pt(LEGEND_SAMPLE_PT);
        if let Some(color) = entry.line {
            area.draw(&PathElement::new(
                vec![(x, y), (x + sample, y)],
                color.stroke_width(width(LINE_PT)),
            ))?;
        }
        if let Some((style_index, color)) = entry.mark {
            area.draw(&marker((x + sample / 2, y), style_index, color))?;
        }
        let text_x = x + sample + pt(LEGEND_GAP_PT);
        area.draw(&Text::new(entry.label.clone(), (text_x, y), text_style.clone()))?;
    }
    Ok(())
}

/// Points along a segment every 2 pt (for legend placement).
fn sample_segment(ink: &mut Vec<(i32, i32)>, from: (i32, i32), to: (i32, i32)) {
    let (dx, dy) = (f64::from(to.0 - from.0), f64::from(to.1 - from.1));
    let steps = ((dx.hypot(dy) / f64::from(pt(2.0))).ceil() as usize).clamp(1, 10_000);
    for step in 0..=steps {
        let t = step as f64 / steps as f64;
        ink.push((from.0 + (t * dx).round() as i32, from.1 + (t * dy).round() as i32));
    }
}

/// The model line up to the cap, ending exactly on the cap where it crosses it.
fn clip_line(points: &[(f64, f64)], cap: f64, log_y: bool) -> Vec<(f64, f64)> {
    let mut line = Vec::with_capacity(points.len());
    for (index, &(x, y)) in points.iter().enumerate() {
        if y <= cap {
            line.push((x, y));
            continue;
        }
        if let Some(&(x0, y0)) = index.checked_sub(1).and_then(|previous| points.get(previous)) {
            let (a, b, c) =
                if log_y && y0 > 0.0 { (y0.ln(), y.ln(), cap.ln()) } else { (y0, y, cap) };
            let t = if b > a { ((c - a) / (b - a)).clamp(0.0, 1.0) } else { 0.0 };
            line.push((x0 + t * (x - x0), cap));
        }
        break;
    }
    line
}

/// A filled marker of the series' shape, centred on `at` (backend pixels).
fn marker<'a, DB: DrawingBackend + 'a>(
    at: (i32, i32),
    style_index: usize,
    color: RGBColor,
) -> DynElement<'a, DB, (i32, i32)> {
    let r = pt(MARKER_PT);
    let filled = color.filled();
    let open = color.stroke_width(width(0.6));
    let shape = style_index % 8;
    let style = if shape >= 4 { open } else { filled };
    let element = EmptyElement::at(at);
    match shape % 4 {
        0 => (element + Circle::new((0, 0), r, style)).into_dyn(),
        1 => {
            let s = r * 85 / 100;
            (element + Rectangle::new([(-s, -s), (s, s)], style)).into_dyn()
        }
        2 => (element
            + Polygon::new(vec![(0, -r - r / 5), (r, r * 7 / 10), (-r, r * 7 / 10)], style))
        .into_dyn(),
        _ => (element
            + Polygon::new(vec![(0, -r - r / 5), (r, 0), (0, r + r / 5), (-r, 0)], style))
        .into_dyn(),
    }
}

/// An open upward triangle: a point beyond the top of the axis.
fn beyond_marker<'a, DB: DrawingBackend + 'a>(
    at: (i32, i32),
    color: RGBColor,
) -> DynElement<'a, DB, (i32, i32)> {
    let r = pt(MARKER_PT);
    (EmptyElement::at(at)
        + PathElement::new(
            vec![(0, -r), (r, r * 7 / 10), (-r, r * 7 / 10), (0, -r)],
            color.stroke_width(width(0.6)),
        ))
    .into_dyn()
}

/// An open cross: a simulation that deadlocked (no latency).
fn deadlock_marker<'a, DB: DrawingBackend + 'a>(
    at: (i32, i32),
    color: RGBColor,
) -> DynElement<'a, DB, (i32, i32)> {
    let r = pt(MARKER_PT);
    let style = color.stroke_width(width(0.6));
    (EmptyElement::at(at)
        + PathElement::new(vec![(-r, -r), (r, r)], style)
        + PathElement::new(vec![(-r, r), (r, -r)], style))
    .into_dyn()
}

pub(super) fn font(size_pt: f64) -> TextStyle<'static> {
    // plotters writes font-size = size / 1.24.
    ("sans-serif", size_pt * UNITS_PER_PT * 1.24).into_font().color(&BLACK)
}

fn pt(points: f64) -> i32 {
    (points * UNITS_PER_PT).round() as i32
}

fn width(points: f64) -> u32 {
    (points * UNITS_PER_PT).round().max(1.0) as u32
}

/// Tick values for a log axis: 1-2-5 per decade, or denser/sparser to get 3 to 8 ticks.
fn log_ticks((lo, hi): (f64, f64)) -> Vec<f64> {
    let ticks = |mantissas: &[f64]| -> Vec<f64> {
        let first = lo.log10().floor() as i32;
        let last = hi.log10().ceil() as i32;
        (first..=last)
            .flat_map(|exponent| mantissas.iter().map(move |m| m * 10f64.powi(exponent)))
            .filter(|value| *value >= lo && *value <= hi)
            .collect()
    };
    let candidates: [&[f64]; 4] =
        [&[1.0, 2.0, 5.0], &[1.0, 2.0, 3.0, 5.0, 7.0], &[1.0, 3.0], &[1.0]];
    let preferred = ticks(candidates[0]);
    if (3..=8).contains(&preferred.len()) {
        return preferred;
    }
    if preferred.len() < 3 {
        let denser = ticks(candidates[1]);
        return if denser.len() >= 2 {
            denser
        } else {
            ticks(&[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
        };
    }
    let sparser = ticks(candidates[2]);
    if sparser.len() <= 8 { sparser } else { ticks(candidates[3]) }
}

fn tick_label(value: f64, step: f64) -> String {
    if step > 0.0 {
        let decimals = (-(step.log10().floor()) as i32 + 1).clamp(0, 8) as usize;
        let text = format!("{value:.decimals$}");
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        if text == "-0" { "0".to_owned() } else { text.to_owned() }
    } else {
        format_number(value)
    }
}
