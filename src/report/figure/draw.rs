//! Laying out and drawing one page of a figure: the panel grid, axes, model lines, simulation
//! markers, CI bars, and the figure's one legend in a strip below the panels (a sample of each
//! series' line and marker, then the status markers the figure holds). Dashed lines are drawn
//! as runs of separate segments ([`dash_runs`]), not with `stroke-dasharray`, so the SVG, the
//! HTML page and the PDF step show them alike.
//!
//! Everything here works in SVG units of 1/[`UNITS_PER_PT`] pt and draws on plotters' SVG
//! backend directly (paths, markers, text), so the layout is ours: the y label area is sized
//! from the widest tick label and the axis labels are wrapped to the plotting area, so no
//! label is cut or printed over another. Text widths are estimated for DejaVu Sans
//! ([`text_width`]), the font the PDFs embed. [`Layout`] records where everything went, so
//! tests can hold the page to that (the legend covers no panel and no point, labels stay
//! inside the page and apart).

use std::ops::Range;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::caption::Flags;
use super::data::{FigureData, Panel};
use super::labels::panel_letter;
use super::ranges::Ranges;
use super::style::{Marker, NEUTRAL, PALETTE, SeriesStyle, Shape};
use super::{COLUMN_WIDTH_PT, MAX_PAGE_HEIGHT_PT, PAGE_WIDTH_PT, UNITS_PER_PT, width_of};
use crate::report::columns::{self, format_number};
use crate::spec::report::{FigureSpec, FigureWidth};

const TICK_FONT_PT: f64 = 7.5;
const LABEL_FONT_PT: f64 = 8.0;
const LINE_PT: f64 = 0.75;
/// The thin line that joins a series' simulation markers where it has no model line.
const JOIN_PT: f64 = 0.5;
const AXIS_PT: f64 = 0.5;
const MARKER_PT: f64 = 2.2;
/// Tick marks point outward this far.
const TICK_PT: f64 = 3.0;
/// Between a tick mark and its label.
const TICK_GAP_PT: f64 = 2.0;
/// Between the tick labels and the axis label.
const LABEL_GAP_PT: f64 = 3.0;
/// One line of an axis label or a panel title.
const LABEL_LINE_PT: f64 = 10.0;
/// Around each panel.
const PANEL_PAD_PT: f64 = 4.0;
/// Height of a panel relative to its width.
const PANEL_ASPECT: f64 = 0.62;

/// A rectangle in SVG units: left, top, right, bottom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rect {
    pub(crate) left: i32,
    pub(crate) top: i32,
    pub(crate) right: i32,
    pub(crate) bottom: i32,
}

impl Rect {
    /// Whether the two rectangles share interior points.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn intersects(&self, other: &Rect) -> bool {
        self.left < other.right
            && other.left < self.right
            && self.top < other.bottom
            && other.top < self.bottom
    }

    /// Whether `point` lies in the rectangle (edges included).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn contains(&self, (x, y): (i32, i32)) -> bool {
        x >= self.left && x <= self.right && y >= self.top && y <= self.bottom
    }
}

/// What a text box holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextKind {
    XTick,
    YTick,
    XLabel,
    YLabel,
    Title,
    Legend,
}

/// Where a page put everything, in SVG units (text boxes as estimated for DejaVu Sans).
#[derive(Clone, Debug, Default)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Layout {
    pub(crate) width: i32,
    pub(crate) height: i32,
    /// The plotting area of each panel.
    pub(crate) plots: Vec<Rect>,
    /// Every plotted point, and points every 2 pt along lines and bars, by panel.
    pub(crate) ink: Vec<Vec<(i32, i32)>>,
    /// The legend block, when the page has one.
    pub(crate) legend: Option<Rect>,
    /// Every text, by panel (`None` for the legend's).
    pub(crate) texts: Vec<(Option<usize>, TextKind, Rect, String)>,
}

/// The page geometry shared by the pages of a figure, in points.
pub(super) struct Geometry {
    pub(super) width_pt: f64,
    pub(super) columns: usize,
    panel_width: f64,
    panel_height: f64,
    legend: LegendBlock,
}

impl Geometry {
    /// The geometry of a figure whose panels show `flags` (the legend explains the status
    /// markers they hold).
    pub(super) fn new(spec: &FigureSpec, data: &FigureData, flags: &Flags) -> Geometry {
        let panels = data.panels.len();
        let (width_pt, columns) = match width_of(spec, panels) {
            FigureWidth::Column => (COLUMN_WIDTH_PT, 1),
            FigureWidth::Page => (PAGE_WIDTH_PT, if panels > 1 { 2 } else { 1 }),
        };
        let panel_width = width_pt / columns as f64;
        let panel_height = (panel_width * PANEL_ASPECT).clamp(130.0, 200.0);
        let legend_title = spec.legend_title.as_ref().map(|title| title.value.clone());
        let legend = LegendBlock::new(legend_entries(data, flags), legend_title, width_pt);
        Geometry { width_pt, columns, panel_width, panel_height, legend }
    }

    /// The most rows of panels a page holds within [`MAX_PAGE_HEIGHT_PT`] (at least one).
    pub(super) fn rows_per_page(&self) -> usize {
        let room = MAX_PAGE_HEIGHT_PT - self.legend.height - PANEL_PAD_PT;
        ((room / self.panel_height).floor() as usize).max(1)
    }
}

/// One axis: its range, scale and ticks.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    fn new((lo, hi): (f64, f64), log: bool, room_pt: f64) -> Axis {
        let ticks = if log {
            log_ticks((lo, hi)).into_iter().map(|value| (value, format_number(value))).collect()
        } else {
            // Fewer ticks when their labels would crowd the axis.
            let mut ticks = linear_ticks(lo, hi, 5);
            let crowded = |ticks: &Vec<(f64, String)>| {
                let widest =
                    ticks.iter().map(|t| text_width(&t.1, TICK_FONT_PT)).fold(0.0, f64::max);
                (widest + 6.0) * ticks.len() as f64 > room_pt
            };
            if crowded(&ticks) {
                ticks = linear_ticks(lo, hi, 3);
            }
            ticks
        };
        Axis { lo, hi, log, ticks }
    }

    /// Where `value` falls, from 0 (lo) to 1 (hi); `None` for a non-positive value on a log axis.
    fn fraction(&self, value: f64) -> Option<f64> {
        if self.log {
            (value > 0.0).then(|| (value.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()))
        } else {
            Some((value - self.lo) / (self.hi - self.lo))
        }
    }

    fn widest_tick(&self) -> f64 {
        self.ticks.iter().map(|(_, text)| text_width(text, TICK_FONT_PT)).fold(0.0, f64::max)
    }
}

/// A panel's plotting area and axes, mapping data to SVG units.
struct Frame {
    plot: Rect,
    x: Axis,
    y: Axis,
}

impl Frame {
    fn px(&self, x: f64) -> Option<f64> {
        let t = self.x.fraction(x)?;
        Some(f64::from(self.plot.left) + t * f64::from(self.plot.right - self.plot.left))
    }

    fn py(&self, y: f64) -> Option<f64> {
        let t = self.y.fraction(y)?;
        Some(f64::from(self.plot.bottom) - t * f64::from(self.plot.bottom - self.plot.top))
    }

    fn point(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        Some((self.px(x)?, self.py(y)?))
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws the panels `page` of the figure with their legend; returns the SVG and its layout.
pub(super) fn page(
    geometry: &Geometry,
    data: &FigureData,
    spec: &FigureSpec,
    page: Range<usize>,
    ranges: &[Ranges],
) -> Result<(String, Layout), String> {
    let panels = &data.panels[page.clone()];
    let page_ranges = &ranges[page.clone()];
    let columns = geometry.columns;
    let rows = panels.len().div_ceil(columns).max(1);
    let grid_height = rows as f64 * geometry.panel_height;
    let legend = &geometry.legend;
    let height_pt = grid_height + legend.height + PANEL_PAD_PT;
    let (width, height) = (units(geometry.width_pt), units(height_pt));
    let mut layout = Layout { width, height, ..Layout::default() };

    // The axis areas, the same for every panel of the page so the panels line up.
    let x_label = spec
        .x_label
        .as_ref()
        .map_or_else(|| columns::axis_label(&spec.x), |label| label.value.clone());
    let y_label = spec
        .y_label
        .as_ref()
        .map_or_else(|| columns::axis_label(&spec.y), |label| label.value.clone());
    let titled = panels.iter().any(|panel| !panel.title.is_empty()) || panels.len() > 1;
    let top = PANEL_PAD_PT + if titled { LABEL_LINE_PT + 2.0 } else { 2.0 };
    // The x label gets two lines of room when it needs them; the plot height follows.
    let x_lines_guess = wrap(&x_label, geometry.panel_width * 0.7, LABEL_FONT_PT).len().min(2);
    let bottom_for = |lines: usize| {
        TICK_PT + TICK_GAP_PT + TICK_FONT_PT + LABEL_GAP_PT + lines as f64 * LABEL_LINE_PT + 2.0
    };
    let plot_height = geometry.panel_height - top - bottom_for(x_lines_guess);
    let y_lines = wrap(&y_label, plot_height, LABEL_FONT_PT);
    let y_axes: Vec<Axis> =
        page_ranges.iter().map(|range| Axis::new(range.y, spec.log_y, plot_height * 2.0)).collect();
    let widest_y = y_axes.iter().map(Axis::widest_tick).fold(0.0, f64::max);
    let left = PANEL_PAD_PT
        + y_lines.len() as f64 * LABEL_LINE_PT
        + LABEL_GAP_PT
        + widest_y
        + TICK_GAP_PT
        + TICK_PT;
    let plot_width_guess = geometry.panel_width - left - 10.0;
    let x_axes: Vec<Axis> =
        page_ranges.iter().map(|range| Axis::new(range.x, spec.log_x, plot_width_guess)).collect();
    // The last x tick label is centred on the axis end: leave room for its right half.
    let half_x_tick = x_axes
        .iter()
        .filter_map(|axis| axis.ticks.last().map(|t| text_width(&t.1, TICK_FONT_PT) / 2.0))
        .fold(0.0, f64::max);
    let right = (half_x_tick + 2.0).max(8.0);
    let plot_width = geometry.panel_width - left - right;
    let x_lines = wrap(&x_label, plot_width, LABEL_FONT_PT);
    let x_lines: Vec<String> = x_lines.into_iter().take(2.max(x_lines_guess)).collect();

    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|error| error.to_string())?;
        if panels.is_empty() {
            let style = font(LABEL_FONT_PT).pos(Pos::new(HPos::Center, VPos::Center));
            root.draw(&Text::new("No finite data points to plot", (width / 2, height / 2), style))
                .map_err(|error| error.to_string())?;
        }
        for (offset, ((panel, range), (x_axis, y_axis))) in
            panels.iter().zip(page_ranges).zip(x_axes.into_iter().zip(y_axes)).enumerate()
        {
            let index = page.start + offset;
            let (column, row) = (offset % columns, offset / columns);
            let origin = (column as f64 * geometry.panel_width, row as f64 * geometry.panel_height);
            let plot = Rect {
                left: units(origin.0 + left),
                top: units(origin.1 + top),
                right: units(origin.0 + left + plot_width),
                bottom: units(origin.1 + top + plot_height),
            };
            let frame = Frame { plot, x: x_axis, y: y_axis };
            let title = if data.panels.len() > 1 {
                format!("({}) {}", panel_letter(index), panel.title)
            } else {
                panel.title.clone()
            };
            layout.plots.push(plot);
            let mut ink = Vec::new();
            // Axis titles on the outer axes of the grid only: the x title under the lowest
            // panel of each column, the y title beside the left column (every panel keeps its
            // tick labels).
            let lowest = offset + columns >= panels.len();
            let x_title: &[String] = if lowest { &x_lines } else { &[] };
            let y_title: &[String] = if column == 0 { &y_lines } else { &[] };
            draw_axes(&root, &frame, offset, &title, x_title, y_title, origin, &mut layout)?;
            draw_series(&root, &frame, panel, range, &mut ink)?;
            layout.ink.push(ink);
        }
        if !legend.entries.is_empty() {
            let top = units(grid_height + PANEL_PAD_PT / 2.0);
            let rect = draw_legend(&root, legend, top, width, &mut layout)?;
            layout.legend = Some(rect);
        }
        root.present().map_err(|error| error.to_string())?;
    }
    Ok((svg, layout))
}

/// The axes of one panel: lines, ticks, tick labels, the wrapped axis labels and the title.
#[allow(clippy::too_many_arguments)]
fn draw_axes(
    root: &Area<'_>,
    frame: &Frame,
    panel: usize,
    title: &str,
    x_lines: &[String],
    y_lines: &[String],
    origin: (f64, f64),
    layout: &mut Layout,
) -> Result<(), String> {
    let plot = frame.plot;
    let axis_style = BLACK.stroke_width(width(AXIS_PT));
    let draw_path = |points: Vec<(i32, i32)>| {
        root.draw(&PathElement::new(points, axis_style)).map_err(|error| error.to_string())
    };
    draw_path(vec![(plot.left, plot.top), (plot.left, plot.bottom), (plot.right, plot.bottom)])?;
    let tick = units(TICK_PT);
    let tick_height = units(TICK_FONT_PT);
    let mut text = |kind: TextKind, rect: Rect, content: &str| {
        layout.texts.push((Some(panel), kind, rect, content.to_owned()));
    };
    for (value, label) in &frame.x.ticks {
        let Some(x) = frame.px(*value).map(|x| x.round() as i32) else { continue };
        draw_path(vec![(x, plot.bottom), (x, plot.bottom + tick)])?;
        let top = plot.bottom + tick + units(TICK_GAP_PT);
        let style = font(TICK_FONT_PT).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(label.clone(), (x, top), style)).map_err(|e| e.to_string())?;
        let half = units(text_width(label, TICK_FONT_PT) / 2.0);
        text(
            TextKind::XTick,
            Rect { left: x - half, top, right: x + half, bottom: top + tick_height },
            label,
        );
    }
    for (value, label) in &frame.y.ticks {
        let Some(y) = frame.py(*value).map(|y| y.round() as i32) else { continue };
        draw_path(vec![(plot.left - tick, y), (plot.left, y)])?;
        let right = plot.left - tick - units(TICK_GAP_PT);
        let style = font(TICK_FONT_PT).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(label.clone(), (right, y), style)).map_err(|e| e.to_string())?;
        let label_width = units(text_width(label, TICK_FONT_PT));
        let rect = Rect {
            left: right - label_width,
            top: y - tick_height / 2,
            right,
            bottom: y + tick_height / 2,
        };
        text(TextKind::YTick, rect, label);
    }
    // The x label, centred under the plotting area.
    let centre_x = (plot.left + plot.right) / 2;
    let mut top = plot.bottom + tick + units(TICK_GAP_PT + TICK_FONT_PT + LABEL_GAP_PT);
    for line in x_lines {
        let style = font(LABEL_FONT_PT).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(line.clone(), (centre_x, top), style)).map_err(|e| e.to_string())?;
        let half = units(text_width(line, LABEL_FONT_PT) / 2.0);
        let rect = Rect {
            left: centre_x - half,
            top,
            right: centre_x + half,
            bottom: top + units(LABEL_FONT_PT),
        };
        text(TextKind::XLabel, rect, line);
        top += units(LABEL_LINE_PT);
    }
    // The y label, rotated, centred beside the plotting area, at the panel's left edge.
    let centre_y = (plot.top + plot.bottom) / 2;
    for (index, line) in y_lines.iter().enumerate() {
        let x = units(origin.0 + PANEL_PAD_PT + LABEL_LINE_PT * (index as f64 + 0.5));
        let style = font(LABEL_FONT_PT)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(line.clone(), (x, centre_y), style)).map_err(|e| e.to_string())?;
        let half_length = units(text_width(line, LABEL_FONT_PT) / 2.0);
        let half_height = units(LABEL_FONT_PT / 2.0);
        let rect = Rect {
            left: x - half_height,
            top: centre_y - half_length,
            right: x + half_height,
            bottom: centre_y + half_length,
        };
        text(TextKind::YLabel, rect, line);
    }
    if !title.is_empty() {
        let top = units(origin.1 + PANEL_PAD_PT);
        let style = font(LABEL_FONT_PT).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(title.to_owned(), (centre_x, top), style))
            .map_err(|e| e.to_string())?;
        let half = units(text_width(title, LABEL_FONT_PT) / 2.0);
        let rect = Rect {
            left: centre_x - half,
            top,
            right: centre_x + half,
            bottom: top + units(LABEL_FONT_PT),
        };
        text(TextKind::Title, rect, title);
    }
    Ok(())
}

/// The series of one panel: saturation lines, model lines, CI bars and markers.
fn draw_series<'a>(
    root: &Area<'a>,
    frame: &Frame,
    panel: &Panel,
    range: &Ranges,
    ink: &mut Vec<(i32, i32)>,
) -> Result<(), String> {
    let plot = frame.plot;
    let draw = |element: DynElement<'a, SVGBackend<'a>, (i32, i32)>| {
        root.draw(&element).map_err(|error| error.to_string())
    };
    let cap_px = frame.py(range.cap).unwrap_or(f64::from(plot.top)).max(f64::from(plot.top));
    // The model lines stop at the cap; the rest of the plotting area is for the markers.
    let line_box = (f64::from(plot.left), cap_px, f64::from(plot.right), f64::from(plot.bottom));
    let top_edge = plot.top + units(3.0);
    // Markers on the top edge stack downwards where those of several series meet at one x
    // (two routings saturating at the same loads), so no series hides another's.
    let mut edge_markers: Vec<(i32, i32)> = Vec::new();
    let mut edge_at = |x_px: i32| {
        let clearance = units(2.0 * MARKER_PT);
        let taken = edge_markers.iter().filter(|(x, _)| (x - x_px).abs() < clearance).count();
        let y = top_edge + taken as i32 * units(2.0 * MARKER_PT + 0.8);
        edge_markers.push((x_px, y));
        y
    };
    for series in &panel.series {
        let style = series.style.style();
        let color = style.colour;
        if let Some(x) = series.saturation_x.filter(|x| range.x_contains(*x))
            && let Some(x_px) = frame.px(x)
        {
            // The model's saturation load: a thin vertical line in the series' own dash
            // pattern (so greyscale tells whose it is), dashed even for a solid series.
            let x_px = x_px.round() as i32;
            let dash = if style.dash.is_empty() { SATURATION_DASH } else { style.dash };
            let vertical =
                [(f64::from(x_px), f64::from(plot.bottom)), (f64::from(x_px), f64::from(plot.top))];
            draw_dashed(root, &vertical, &SeriesStyle { dash, ..style }, SATURATION_PT)?;
            sample_segment(ink, (x_px, plot.bottom), (x_px, plot.top));
        }
        // The model line; a series without one has its simulation markers joined by a thin
        // line, both in the series' dash pattern.
        let (line, line_width): (Vec<(f64, f64)>, f64) = if series.model.is_empty() {
            let mut joined: Vec<(f64, f64)> = series
                .simulation
                .iter()
                .map(|point| (point.0, point.1))
                .chain(series.simulation_imprecise.iter().map(|point| (point.0, point.1)))
                .filter(|&(x, y)| range.x_contains(x) && y >= range.y.0)
                .collect();
            joined.sort_by(|a, b| a.0.total_cmp(&b.0));
            (joined, JOIN_PT)
        } else {
            (series.model.clone(), LINE_PT)
        };
        let points: Vec<(f64, f64)> = line.iter().filter_map(|&(x, y)| frame.point(x, y)).collect();
        if points.len() > 1 {
            for piece in clip_polyline(&points, line_box) {
                let pixels: Vec<(i32, i32)> =
                    piece.iter().map(|&(x, y)| (x.round() as i32, y.round() as i32)).collect();
                for pair in pixels.windows(2) {
                    sample_segment(ink, pair[0], pair[1]);
                }
                draw_dashed(root, &piece, &style, line_width)?;
            }
        }
        let on_axis = |&(x, y): &(f64, f64)| {
            range.x_contains(x) && y <= range.cap * (1.0 + 1e-9) && y >= range.y.0
        };
        // Every simulation point on the axis with its interval bar and the series' marker; an
        // imprecise one (short of its target precision) with a ring around its marker.
        let shown = series
            .simulation
            .iter()
            .map(|&(x, y, ci)| (x, y, ci, false))
            .chain(series.simulation_imprecise.iter().map(|&(x, y, ci)| (x, y, ci, true)))
            .filter(|&(x, y, _, _)| on_axis(&(x, y)));
        let shown: Vec<(f64, f64, Option<f64>, bool)> = shown.collect();
        for &(x, y, ci, _) in &shown {
            if let Some(ci) = ci.filter(|ci| *ci > 0.0) {
                draw_bar(root, frame, (x, y, ci), color, ink)?;
            }
        }
        for &(x, y, _, imprecise) in &shown {
            let Some((x_px, y_px)) = frame.point(x, y) else { continue };
            let at = (x_px.round() as i32, y_px.round() as i32);
            ink.push(at);
            draw(marker(at, style.marker, color))?;
            if imprecise {
                draw(imprecise_ring(at, color))?;
            }
        }
        // One open triangle on the top edge where the series leaves the axis (a point beyond
        // the cap or saturated after one on it), not one per load beyond.
        let mut course: Vec<(f64, bool)> = series
            .simulation
            .iter()
            .map(|point| (point.0, point.1))
            .chain(series.simulation_imprecise.iter().map(|point| (point.0, point.1)))
            .filter(|&(x, y)| range.x_contains(x) && y >= range.y.0)
            .map(|(x, y)| (x, y > range.cap * (1.0 + 1e-9)))
            .chain(series.simulation_saturated.iter().map(|x| (*x, true)))
            .filter(|(x, _)| range.x_contains(*x))
            .collect();
        course.sort_by(|a, b| a.0.total_cmp(&b.0));
        let leaves = course
            .iter()
            .enumerate()
            .filter(|&(index, &(_, off))| off && (index == 0 || !course[index - 1].1))
            .map(|(_, &(x, _))| x);
        for x in leaves {
            let Some(x_px) = frame.px(x).map(|x| x.round() as i32) else { continue };
            let at = (x_px, edge_at(x_px));
            ink.push(at);
            draw(beyond_marker(at, color))?;
        }
        // Deadlocked simulations: crosses on the top edge.
        for &x in series.simulation_deadlocked.iter().filter(|x| range.x_contains(**x)) {
            let Some(x_px) = frame.px(x).map(|x| x.round() as i32) else { continue };
            let at = (x_px, edge_at(x_px));
            ink.push(at);
            draw(deadlock_marker(at, color))?;
        }
    }
    Ok(())
}

/// A simulation point's 95% interval `(x, y, half-width)`: a vertical bar with end caps, cut
/// at the axis and then ending in an arrowhead.
fn draw_bar(
    root: &Area<'_>,
    frame: &Frame,
    (x, y, ci): (f64, f64, f64),
    color: RGBColor,
    ink: &mut Vec<(i32, i32)>,
) -> Result<(), String> {
    let plot = frame.plot;
    let Some(x_px) = frame.px(x).map(|x| x.round() as i32) else { return Ok(()) };
    let bar_style = color.stroke_width(width(0.5));
    let high = frame.py(y + ci).map_or(plot.top, |p| p.round() as i32);
    // A low end at or below 0 on a log axis is off the axis too.
    let low = frame.py(y - ci).map_or(plot.bottom + 1, |p| p.round() as i32);
    let (high_clipped, low_clipped) = (high < plot.top, low > plot.bottom);
    let (high, low) = (high.max(plot.top), low.min(plot.bottom));
    sample_segment(ink, (x_px, low), (x_px, high));
    root.draw(&PathElement::new(vec![(x_px, low), (x_px, high)], bar_style))
        .map_err(|error| error.to_string())?;
    let half = units(1.6);
    for (end, clipped, outward) in [(high, high_clipped, -1), (low, low_clipped, 1)] {
        let path = if clipped {
            // An arrowhead pointing out of the axis: the bar runs on.
            vec![
                (x_px - half, end - outward * half),
                (x_px, end),
                (x_px + half, end - outward * half),
            ]
        } else {
            vec![(x_px - half, end), (x_px + half, end)]
        };
        root.draw(&PathElement::new(path, bar_style)).map_err(|error| error.to_string())?;
    }
    Ok(())
}

/// The dash pattern (pt) of a solid series' model-saturation line.
const SATURATION_DASH: &[f64] = &[2.5, 2.0];

/// The width (pt) of a model-saturation line.
const SATURATION_PT: f64 = 0.5;

/// Draws a polyline (SVG units) in the style's colour and dash pattern, `width_pt` wide. The
/// dashes are drawn as separate segments ([`dash_runs`]), so every SVG reader and the PDF step
/// show them alike.
fn draw_dashed(
    root: &Area<'_>,
    points: &[(f64, f64)],
    style: &SeriesStyle,
    width_pt: f64,
) -> Result<(), String> {
    for run in dash_runs(points, style.dash) {
        let pixels: Vec<(i32, i32)> =
            run.iter().map(|&(x, y)| (x.round() as i32, y.round() as i32)).collect();
        if pixels.len() > 1 {
            root.draw(&PathElement::new(pixels, style.colour.stroke_width(width(width_pt))))
                .map_err(|error| error.to_string())?;
        }
    }
    Ok(())
}

/// The dashes of a polyline (SVG units) under `pattern` (on, off, ... lengths in pt; empty:
/// the whole line), each dash a polyline of its own; the pattern runs on across vertices.
pub(super) fn dash_runs(points: &[(f64, f64)], pattern: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let lengths: Vec<f64> = pattern.iter().map(|pt| pt * UNITS_PER_PT).collect();
    if points.len() < 2 || lengths.len() < 2 || lengths.iter().any(|length| *length <= 0.0) {
        return vec![points.to_vec()];
    }
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = vec![points[0]];
    let (mut index, mut left) = (0_usize, lengths[0]);
    for pair in points.windows(2) {
        let (mut from, to) = (pair[0], pair[1]);
        let mut length = (to.0 - from.0).hypot(to.1 - from.1);
        if !length.is_finite() {
            continue;
        }
        while length > left {
            let t = left / length;
            let at = (from.0 + t * (to.0 - from.0), from.1 + t * (to.1 - from.1));
            if index % 2 == 0 {
                current.push(at);
                runs.push(std::mem::take(&mut current));
            } else {
                current = vec![at];
            }
            length -= left;
            from = at;
            index = (index + 1) % lengths.len();
            left = lengths[index];
        }
        left -= length;
        if index % 2 == 0 {
            current.push(to);
        }
    }
    if index % 2 == 0 && current.len() > 1 {
        runs.push(current);
    }
    runs
}

/// The pieces of a polyline inside `(left, top, right, bottom)` (Liang-Barsky per segment).
fn clip_polyline(points: &[(f64, f64)], bounds: (f64, f64, f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let (left, top, right, bottom) = bounds;
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    let inside = |(x, y): (f64, f64)| x >= left && x <= right && y >= top && y <= bottom;
    if points.len() == 1 && inside(points[0]) {
        return vec![points.to_vec()];
    }
    for pair in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        let (dx, dy) = (x1 - x0, y1 - y0);
        let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
        let mut visible = true;
        for (p, q) in [(-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)] {
            if p == 0.0 {
                if q < 0.0 {
                    visible = false;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if !visible || t0 > t1 {
            if !current.is_empty() {
                pieces.push(std::mem::take(&mut current));
            }
            continue;
        }
        let start = (x0 + t0 * dx, y0 + t0 * dy);
        let end = (x0 + t1 * dx, y0 + t1 * dy);
        if current.is_empty() || t0 > 0.0 {
            if !current.is_empty() {
                pieces.push(std::mem::take(&mut current));
            }
            current.push(start);
        }
        current.push(end);
        if t1 < 1.0 {
            pieces.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// One legend entry: a line sample, a marker sample, or both, and a label.
struct LegendEntry {
    label: String,
    /// A line in this colour and dash pattern.
    line: Option<(RGBColor, &'static [f64])>,
    mark: Option<Mark>,
}

/// A legend entry's marker sample: a series' marker or a status marker (in grey).
#[derive(Clone, Copy)]
enum Mark {
    Series(Marker, RGBColor),
    /// △: a point beyond the top of the axis or saturated.
    Beyond,
    /// ×: a deadlocked simulation.
    Deadlock,
    /// A marker with a ring around it: an imprecise simulation (an estimate).
    Imprecise,
}

const LEGEND_SAMPLE_PT: f64 = 16.0;
const LEGEND_GAP_PT: f64 = 3.0;
const LEGEND_SPACING_PT: f64 = 10.0;
const LEGEND_ROW_PT: f64 = 11.0;

/// The legend: one entry per series (its line sample in its dash pattern and its marker),
/// what the lines and markers are, and the status markers the figure holds (`flags`).
fn legend_entries(data: &FigureData, flags: &Flags) -> Vec<LegendEntry> {
    let mut entries = Vec::new();
    let lined = data.has_model || flags.has_joined;
    for (label, key) in &data.legend {
        let style = key.style();
        entries.push(LegendEntry {
            label: label.clone(),
            line: lined.then_some((style.colour, style.dash)),
            mark: data.has_simulation.then_some(Mark::Series(style.marker, style.colour)),
        });
    }
    let neutral = if data.legend.is_empty() { PALETTE[0] } else { NEUTRAL };
    let solid: &'static [f64] = &[];
    if data.has_model {
        entries.push(LegendEntry {
            label: "Model".to_owned(),
            line: Some((neutral, solid)),
            mark: None,
        });
    }
    if data.has_simulation {
        let filled_circle = Marker { shape: Shape::Circle, filled: true };
        entries.push(LegendEntry {
            label: if data.has_ci { "Simulation (95% CI)" } else { "Simulation" }.to_owned(),
            line: (flags.has_joined && data.legend.is_empty()).then_some((neutral, solid)),
            mark: Some(Mark::Series(filled_circle, neutral)),
        });
    }
    let saturated = flags.has_saturated_simulation;
    let beyond = flags.has_beyond_axis;
    if saturated || beyond {
        let label = match (saturated, beyond) {
            (true, true) => "Saturated or beyond axis",
            (true, false) => "Saturated",
            _ => "Beyond axis",
        };
        entries.push(LegendEntry { label: label.to_owned(), line: None, mark: Some(Mark::Beyond) });
    }
    if flags.has_deadlock {
        entries.push(LegendEntry {
            label: "Deadlocked".to_owned(),
            line: None,
            mark: Some(Mark::Deadlock),
        });
    }
    if flags.has_imprecise {
        entries.push(LegendEntry {
            label: "Imprecise (estimate)".to_owned(),
            line: None,
            mark: Some(Mark::Imprecise),
        });
    }
    entries
}

/// The legend strip: entries flowing left to right in centred rows, in points.
struct LegendBlock {
    entries: Vec<LegendEntry>,
    title: Option<String>,
    /// Per row: the entries (indices) and the row's width; the title counts as index `usize::MAX`.
    rows: Vec<(Vec<usize>, f64)>,
    height: f64,
}

impl LegendBlock {
    fn new(entries: Vec<LegendEntry>, title: Option<String>, width: f64) -> LegendBlock {
        let room = width - 2.0 * PANEL_PAD_PT;
        let mut rows: Vec<(Vec<usize>, f64)> = Vec::new();
        let mut items: Vec<(usize, f64)> = Vec::new();
        if let Some(title) = &title {
            items.push((usize::MAX, text_width(title, TICK_FONT_PT)));
        }
        items.extend(entries.iter().enumerate().map(|(index, entry)| (index, entry_width(entry))));
        for (index, item_width) in items {
            match rows.last_mut() {
                Some((members, row_width))
                    if *row_width + LEGEND_SPACING_PT + item_width <= room =>
                {
                    members.push(index);
                    *row_width += LEGEND_SPACING_PT + item_width;
                }
                _ => rows.push((vec![index], item_width)),
            }
        }
        let height = if entries.is_empty() { 0.0 } else { rows.len() as f64 * LEGEND_ROW_PT + 4.0 };
        LegendBlock { entries, title, rows, height }
    }
}

fn entry_width(entry: &LegendEntry) -> f64 {
    LEGEND_SAMPLE_PT + LEGEND_GAP_PT + text_width(&entry.label, TICK_FONT_PT)
}

/// Draws the legend strip with its top at `top`, centred in `width`; returns its box.
fn draw_legend(
    root: &Area<'_>,
    legend: &LegendBlock,
    top: i32,
    width_units: i32,
    layout: &mut Layout,
) -> Result<Rect, String> {
    let text_style = font(TICK_FONT_PT).pos(Pos::new(HPos::Left, VPos::Center));
    let mut bounds = Rect { left: width_units, top, right: 0, bottom: top };
    for (row_index, (members, row_width)) in legend.rows.iter().enumerate() {
        let y = top + units(LEGEND_ROW_PT * (row_index as f64 + 0.5));
        let mut x = (width_units - units(*row_width)) / 2;
        bounds.left = bounds.left.min(x);
        for &index in members {
            let (label, item_width) = match legend.entries.get(index) {
                Some(entry) => {
                    let sample = units(LEGEND_SAMPLE_PT);
                    if let Some((colour, dash)) = entry.line {
                        let style = SeriesStyle {
                            colour,
                            dash,
                            marker: Marker { shape: Shape::Circle, filled: true },
                        };
                        let ends =
                            [(f64::from(x), f64::from(y)), (f64::from(x + sample), f64::from(y))];
                        draw_dashed(root, &ends, &style, LINE_PT)?;
                    }
                    let at = (x + sample / 2, y);
                    let element = match entry.mark {
                        Some(Mark::Series(shape, colour)) => Some(marker(at, shape, colour)),
                        Some(Mark::Beyond) => Some(beyond_marker(at, NEUTRAL)),
                        Some(Mark::Deadlock) => Some(deadlock_marker(at, NEUTRAL)),
                        Some(Mark::Imprecise) => {
                            let filled_circle = Marker { shape: Shape::Circle, filled: true };
                            root.draw(&marker(at, filled_circle, NEUTRAL))
                                .map_err(|error| error.to_string())?;
                            Some(imprecise_ring(at, NEUTRAL))
                        }
                        None => None,
                    };
                    if let Some(element) = element {
                        root.draw(&element).map_err(|error| error.to_string())?;
                    }
                    let text_x = x + sample + units(LEGEND_GAP_PT);
                    root.draw(&Text::new(entry.label.clone(), (text_x, y), text_style.clone()))
                        .map_err(|error| error.to_string())?;
                    (entry.label.clone(), entry_width(entry))
                }
                None => {
                    let title = legend.title.clone().unwrap_or_default();
                    root.draw(&Text::new(title.clone(), (x, y), text_style.clone()))
                        .map_err(|error| error.to_string())?;
                    let item_width = text_width(&title, TICK_FONT_PT);
                    (title, item_width)
                }
            };
            let rect = Rect {
                left: x,
                top: y - units(LEGEND_ROW_PT / 2.0),
                right: x + units(item_width),
                bottom: y + units(LEGEND_ROW_PT / 2.0),
            };
            layout.texts.push((None, TextKind::Legend, rect, label));
            x += units(item_width + LEGEND_SPACING_PT);
            bounds.right = bounds.right.max(rect.right);
        }
        bounds.bottom = y + units(LEGEND_ROW_PT / 2.0);
    }
    Ok(bounds)
}

/// Points along a segment every 2 pt (for the layout's ink).
fn sample_segment(ink: &mut Vec<(i32, i32)>, from: (i32, i32), to: (i32, i32)) {
    let (dx, dy) = (f64::from(to.0 - from.0), f64::from(to.1 - from.1));
    let steps = ((dx.hypot(dy) / f64::from(units(2.0))).ceil() as usize).clamp(1, 10_000);
    for step in 0..=steps {
        let t = step as f64 / steps as f64;
        ink.push((from.0 + (t * dx).round() as i32, from.1 + (t * dy).round() as i32));
    }
}

/// A series' marker, centred on `at` (backend pixels).
fn marker<'a, DB: DrawingBackend + 'a>(
    at: (i32, i32),
    marker: Marker,
    color: RGBColor,
) -> DynElement<'a, DB, (i32, i32)> {
    let r = units(MARKER_PT);
    let style = if marker.filled { color.filled() } else { color.stroke_width(width(0.6)) };
    let element = EmptyElement::at(at);
    // An open polygon is drawn as a closed path (plotters' polygons are filled only).
    let polygon = |points: Vec<(i32, i32)>| -> DynElement<'a, DB, (i32, i32)> {
        if marker.filled {
            (EmptyElement::at(at) + Polygon::new(points, style)).into_dyn()
        } else {
            let mut path = points.clone();
            path.extend(points.first().copied());
            (EmptyElement::at(at) + PathElement::new(path, style)).into_dyn()
        }
    };
    match marker.shape {
        Shape::Circle => (element + Circle::new((0, 0), r, style)).into_dyn(),
        Shape::Square => {
            let s = r * 85 / 100;
            (element + Rectangle::new([(-s, -s), (s, s)], style)).into_dyn()
        }
        Shape::TriangleUp => polygon(vec![(0, -r - r / 5), (r, r * 7 / 10), (-r, r * 7 / 10)]),
        Shape::TriangleDown => polygon(vec![(0, r + r / 5), (r, -r * 7 / 10), (-r, -r * 7 / 10)]),
        Shape::Diamond => polygon(vec![(0, -r - r / 5), (r, 0), (0, r + r / 5), (-r, 0)]),
    }
}

/// A ring around a marker: a simulation short of its target precision (an estimate).
fn imprecise_ring<'a, DB: DrawingBackend + 'a>(
    at: (i32, i32),
    color: RGBColor,
) -> DynElement<'a, DB, (i32, i32)> {
    let r = units(MARKER_PT * 1.9);
    (EmptyElement::at(at) + Circle::new((0, 0), r, color.stroke_width(width(0.5)))).into_dyn()
}

/// An open upward triangle: a point beyond the top of the axis.
fn beyond_marker<'a, DB: DrawingBackend + 'a>(
    at: (i32, i32),
    color: RGBColor,
) -> DynElement<'a, DB, (i32, i32)> {
    let r = units(MARKER_PT);
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
    let r = units(MARKER_PT);
    let style = color.stroke_width(width(0.6));
    (EmptyElement::at(at)
        + PathElement::new(vec![(-r, -r), (r, r)], style)
        + PathElement::new(vec![(-r, r), (r, -r)], style))
    .into_dyn()
}

fn font(size_pt: f64) -> TextStyle<'static> {
    // plotters writes font-size = size / 1.24.
    ("sans-serif", size_pt * UNITS_PER_PT * 1.24).into_font().color(&BLACK)
}

/// Points to SVG units.
fn units(points: f64) -> i32 {
    (points * UNITS_PER_PT).round() as i32
}

fn width(points: f64) -> u32 {
    (points * UNITS_PER_PT).round().max(1.0) as u32
}

/// The width of `text` in DejaVu Sans at `size_pt`, in points: the font's advance widths by
/// class of character, rounded up (digits are 0.636 em, most lowercase letters about 0.6 em).
pub(crate) fn text_width(text: &str, size_pt: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            '0'..='9' => 0.64,
            ' ' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | 'i' | 'j' | 'l' => 0.32,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '/' | '-' | '\u{2013}' => 0.42,
            'm' | 'w' | 'M' | 'W' | '%' => 0.98,
            '=' | '+' | '<' | '>' | '\u{d7}' => 0.84,
            'A'..='Z' => 0.76,
            _ => 0.64,
        })
        .sum();
    em * size_pt
}

/// `text` broken at spaces into lines no wider than `room` points (a longer word stays whole).
pub(super) fn wrap(text: &str, room: f64, size_pt: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|word| !word.is_empty()) {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), size_pt) <= room => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// Round tick values covering `[lo, hi]`: about `target` of them at a step of 1, 2, 2.5 or 5
/// times a power of ten, each with its label; the labels of an axis share one number of
/// decimals ([`tick_labels`]).
pub(super) fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<(f64, String)> {
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) {
        return vec![(lo, format_number(lo))];
    }
    let raw = span / target as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    // The count is checked before anything is allocated: a span without precision (a
    // subnormal one) makes the step 0 and the count unbounded.
    let first = (lo / step - 1e-9).ceil();
    let last = (hi / step + 1e-9).floor();
    let count = last - first + 1.0;
    if !(step > 0.0 && count.is_finite() && (1.0..=MAX_TICKS).contains(&count)) {
        return vec![(lo, format_number(lo)), (hi, format_number(hi))];
    }
    let values: Vec<f64> = (0..count as usize).map(|i| (first + i as f64) * step).collect();
    let labels = tick_labels(&values, step);
    values.into_iter().zip(labels).collect()
}

/// The most ticks an axis gets, whatever its range.
const MAX_TICKS: f64 = 100.0;

/// The decades a logarithmic axis may cover: those of positive finite numbers.
const DECADES: std::ops::RangeInclusive<i32> = -330..=310;

/// Tick values for a log axis: 1-2-5 per decade, or denser/sparser to get 3 to 8 ticks.
fn log_ticks((lo, hi): (f64, f64)) -> Vec<f64> {
    let ticks = |mantissas: &[f64]| -> Vec<f64> {
        // Clamped, so that a zero or infinite end cannot make billions of decades.
        let first = (lo.log10().floor() as i32).clamp(*DECADES.start(), *DECADES.end());
        let last = (hi.log10().ceil() as i32).clamp(*DECADES.start(), *DECADES.end());
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

/// The most decimals a tick label prints; an axis that needs more is labelled in a scaled
/// form (`2.5e-5`).
const MAX_TICK_DECIMALS: usize = 4;

/// The fewest decimals that print every multiple of `step` exactly (at most 12).
fn step_decimals(step: f64) -> usize {
    (0..=12)
        .find(|&decimals| {
            let scaled = step * 10f64.powi(decimals as i32);
            (scaled - scaled.round()).abs() <= 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(12)
}

/// The labels of an axis's ticks at `values` (multiples of `step`), all with the same number
/// of decimals: `0, 0.0025, 0.0050, 0.0075, 0.0100` (zero prints as `0`). An axis whose step
/// needs more than [`MAX_TICK_DECIMALS`] decimals, or whose values reach a million, prints
/// every label as a mantissa with one shared number of decimals and its power of ten
/// (`2.5e-5`, `5.0e-5`).
fn tick_labels(values: &[f64], step: f64) -> Vec<String> {
    let largest = values.iter().fold(0.0_f64, |most, value| most.max(value.abs()));
    if !(step > 0.0 && step.is_finite() && largest.is_finite()) {
        return values.iter().map(|value| format_number(*value)).collect();
    }
    let zero = |value: f64| value.abs() < step * 1e-6;
    let decimals = step_decimals(step);
    if decimals <= MAX_TICK_DECIMALS && largest < 1e6 {
        return values
            .iter()
            .map(|&value| if zero(value) { "0".to_owned() } else { format!("{value:.decimals$}") })
            .collect();
    }
    let exponent = largest.log10().floor() as i32;
    let scale = 10f64.powi(exponent);
    let mantissa_decimals = step_decimals(step / scale).min(MAX_TICK_DECIMALS);
    values
        .iter()
        .map(|&value| {
            if zero(value) {
                "0".to_owned()
            } else {
                format!("{:.mantissa_decimals$}e{exponent}", value / scale)
            }
        })
        .collect()
}
