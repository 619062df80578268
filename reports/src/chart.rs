//! Line charts, each written as SVG and PNG (the holders timeline, drawn
//! with the same font and markers, is [`crate::timeline`]).
//!
//! Text is drawn with DejaVu Sans, embedded in the binary (its licence is in
//! `reports/fonts/`), so the PNGs render the same on a machine with no font
//! packages at all.
//!
//! Line charts put their ticks where the data is (on a logarithmic x axis,
//! exactly at the x values present), say "log scale" on a logarithmic axis,
//! give each series one fixed colour, marker shape and stroke ([`style`]),
//! draw series that coincide side by side ([`side_by_side`]), and draw their
//! legend, with the markers, under the plot rather than over it.

use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle};
use std::ops::Range;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

pub(crate) fn font() {
    REGISTER.call_once(|| {
        // The font is embedded and known to parse; failure would be a build error in practice.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Style index (see [`style`]): colour, marker shape and marker size.
    /// By default the series' position in the chart; give it to keep a
    /// series' look whatever else the chart shows.
    pub colour: Option<usize>,
    /// Draw only hollow markers, no line: measurements laid over a model's
    /// line, or runs that are not a sweep of one setting.
    pub markers_only: bool,
}

impl Series {
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            colour: None,
            markers_only: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// Colours that stay apart in print and for the common colour blindnesses
/// (Okabe–Ito, with black and a violet in place of its yellow, which white
/// paper swallows; then three of Paul Tol's muted ones).
const COLOURS: [RGBColor; 11] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 114, 178),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(117, 112, 179),
    RGBColor(136, 34, 85),
    RGBColor(153, 153, 51),
    RGBColor(68, 170, 153),
];

/// A marker's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Circle,
    Triangle,
    Square,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
}

/// Seven shapes against eleven colours: the pair (colour, shape) of style
/// `k` is different for every `k` below 77.
const SHAPES: [Shape; 7] = [
    Shape::Circle,
    Shape::Triangle,
    Shape::Square,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Cross,
    Shape::Plus,
];

/// How a series' line is stroked. Colour alone does not tell lines apart
/// in print, for a colour-blind reader, or where two lines run side by
/// side; the stroke does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dash {
    Solid,
    Long,
    Dotted,
    DashDot,
}

/// Four strokes against eleven colours and seven shapes: the triple of
/// style `k` is different for every `k` below 308.
const DASHES: [Dash; 4] = [Dash::Solid, Dash::Long, Dash::Dotted, Dash::DashDot];

impl Dash {
    /// Alternating drawn and skipped lengths in pixels; empty for a solid
    /// line.
    pub fn pattern(self) -> &'static [f64] {
        match self {
            Dash::Solid => &[],
            Dash::Long => &[14.0, 7.0],
            Dash::Dotted => &[3.0, 5.0],
            Dash::DashDot => &[12.0, 5.0, 3.0, 5.0],
        }
    }
}

/// How a series is drawn: its colour (RGB), marker shape, marker radius
/// in pixels and line stroke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Style {
    pub colour: (u8, u8, u8),
    pub shape: Shape,
    pub radius: u32,
    pub dash: Dash,
}

/// Style number `k`. Styles 0–10 have eleven different colours; markers are
/// drawn largest first, and the radius falls with `k % 8`, so markers of
/// series that coincide nest inside each other instead of hiding.
pub fn style(k: usize) -> Style {
    let c = COLOURS[k % COLOURS.len()];
    Style {
        colour: (c.0, c.1, c.2),
        shape: SHAPES[k % SHAPES.len()],
        radius: 5 + ((7 - k % 8) * 3 / 2) as u32,
        dash: DASHES[k % DASHES.len()],
    }
}

impl Style {
    fn rgb(&self) -> RGBColor {
        RGBColor(self.colour.0, self.colour.1, self.colour.2)
    }
}

pub type ChartError = Box<dyn std::error::Error + Send + Sync>;

/// The axis range for `values`, padded so that nothing at the edge is cut.
fn bounds(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let vals: Vec<f64> = values
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (if log { 0.1 } else { 0.0 }, 1.0);
    }
    if log {
        (lo / 1.4, hi * 1.4)
    } else {
        let pad = ((hi - lo) * 0.06).max(0.5);
        (if lo >= 0.0 { 0.0 } else { lo - pad }, hi + pad)
    }
}

/// The distinct values, ascending.
fn distinct(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// Keeps values (ascending) at least `min_gap` apart in `pos`: the
/// smallest always, and the largest in place of the kept value too close to
/// it.
fn thin(values: &[f64], pos: impl Fn(f64) -> f64, min_gap: f64) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for &v in values {
        if out.last().is_none_or(|&l| pos(v) - pos(l) >= min_gap) {
            out.push(v);
        }
    }
    if let Some(&last) = values.last() {
        if out.last() != Some(&last) && out.len() > 1 {
            out.pop();
            out.push(last);
        }
    }
    out
}

/// Round ticks over `lo..hi`: steps of 1, 2 or 5 times a power of ten,
/// about `target` of them.
pub(crate) fn nice_linear(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if hi.is_nan() || lo.is_nan() || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| clean(i as f64 * step)).collect()
}

/// Round ticks over `lo..hi` on a logarithmic axis: 1, 2 and 5 times the
/// powers of ten, or the powers alone when those would crowd.
fn nice_log(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades = (b - a).max(1);
    let mantissas: &[f64] = if decades > 4 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    for e in a..=b {
        for m in mantissas {
            let v = clean(m * 10f64.powi(e));
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
    }
    out
}

/// `v` without floating-point dust (0.30000000000000004 → 0.3).
fn clean(v: f64) -> f64 {
    format!("{v:.9}").parse().unwrap_or(v)
}

/// An axis with its ticks exactly where it is told (plotters' own
/// `with_key_points` leaves a linear `f64` axis without a label formatter).
pub(crate) struct Ticked<R> {
    inner: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

pub(crate) fn linear(range: Range<f64>, ticks: Vec<f64>) -> Ticked<RangedCoordf64> {
    Ticked {
        inner: range.into(),
        ticks,
    }
}

fn logarithmic(range: Range<f64>, ticks: Vec<f64>) -> Ticked<LogCoord<f64>> {
    Ticked {
        inner: range.log_scale().into(),
        ticks,
    }
}

/// An axis' description as drawn: a logarithmic axis says so on the axis
/// itself, not only in a caption that a copied picture leaves behind.
fn axis_label(text: &str, log: bool) -> String {
    if log {
        format!("{text} — log scale")
    } else {
        text.to_string()
    }
}

impl LineChart {
    /// The x axis' description as drawn.
    pub fn x_axis_label(&self) -> String {
        axis_label(&self.x_label, self.log_x)
    }

    /// The y axis' description as drawn.
    pub fn y_axis_label(&self) -> String {
        axis_label(&self.y_label, self.log_y)
    }

    fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .filter(|x| x.is_finite() && (!self.log_x || *x > 0.0))
    }

    fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|y| y.is_finite() && (!self.log_y || *y > 0.0))
    }

    /// The x axis' ticks: on a logarithmic axis exactly the x values of the
    /// data (thinned only where labels would touch), on a linear one the
    /// data's x values when there are few, round numbers otherwise.
    pub fn x_ticks(&self) -> Vec<f64> {
        let (x0, x1) = bounds(self.xs(), self.log_x);
        let values = distinct(self.xs());
        // About 1,000 pixels of axis; labels 60 pixels apart at least.
        let min_gap = 60.0 / 1000.0;
        if self.log_x {
            let span = (x1 / x0).ln();
            thin(&values, |v| (v / x0).ln() / span, min_gap)
        } else if values.len() <= 12 && !values.is_empty() {
            thin(&values, |v| (v - x0) / (x1 - x0), min_gap)
        } else {
            nice_linear(x0, x1, 10)
        }
    }

    /// The y axis' ticks: round numbers (1, 2, 5, 10, … on a logarithmic
    /// axis); the data's own values when the range holds fewer than three.
    pub fn y_ticks(&self) -> Vec<f64> {
        let (y0, y1) = bounds(self.ys(), self.log_y);
        let ticks = if self.log_y {
            nice_log(y0, y1)
        } else {
            nice_linear(y0, y1, 8)
        };
        if ticks.len() >= 3 {
            return ticks;
        }
        let mut v = distinct(self.ys().chain(ticks));
        let span = if self.log_y { (y1 / y0).ln() } else { y1 - y0 };
        let pos = |v: f64| {
            if self.log_y {
                (v / y0).ln() / span
            } else {
                (v - y0) / span
            }
        };
        v = thin(&v, pos, 30.0 / 650.0);
        v
    }
}

/// Tick labels without needless decimals: 10, 200, 0.5, 4.5.
pub fn tick(v: f64) -> String {
    if v == v.round() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let s = if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(crate) type AreaResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws marker `shape` of radius `r` centred on pixel `at` of `area`:
/// filled with a white rim, or hollow.
pub(crate) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    shape: Shape,
    r: i32,
    colour: RGBColor,
    hollow: bool,
) -> AreaResult<DB> {
    let (x, y) = at;
    let f = r as f64;
    let poly: Vec<(i32, i32)> = match shape {
        Shape::Circle => {
            if hollow {
                area.draw(&Circle::new(at, r, colour.stroke_width(2)))?;
            } else {
                area.draw(&Circle::new(at, r, colour.filled()))?;
                area.draw(&Circle::new(at, r, WHITE.stroke_width(1)))?;
            }
            return Ok(());
        }
        Shape::Cross | Shape::Plus => {
            let d = if shape == Shape::Cross {
                (f * 0.8) as i32
            } else {
                r
            };
            let w = if hollow { 2 } else { 4 };
            let (a, b) = if shape == Shape::Cross {
                (
                    [(x - d, y - d), (x + d, y + d)],
                    [(x - d, y + d), (x + d, y - d)],
                )
            } else {
                ([(x - d, y), (x + d, y)], [(x, y - d), (x, y + d)])
            };
            area.draw(&PathElement::new(a.to_vec(), colour.stroke_width(w)))?;
            area.draw(&PathElement::new(b.to_vec(), colour.stroke_width(w)))?;
            return Ok(());
        }
        Shape::Triangle => vec![
            (x, y - r),
            (x + (f * 0.9) as i32, y + (f * 0.6) as i32),
            (x - (f * 0.9) as i32, y + (f * 0.6) as i32),
        ],
        Shape::TriangleDown => vec![
            (x, y + r),
            (x + (f * 0.9) as i32, y - (f * 0.6) as i32),
            (x - (f * 0.9) as i32, y - (f * 0.6) as i32),
        ],
        Shape::Square => {
            let d = (f * 0.8) as i32;
            vec![
                (x - d, y - d),
                (x + d, y - d),
                (x + d, y + d),
                (x - d, y + d),
            ]
        }
        Shape::Diamond => vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)],
    };
    let mut closed = poly.clone();
    closed.push(poly[0]);
    if hollow {
        area.draw(&PathElement::new(closed, colour.stroke_width(2)))?;
    } else {
        area.draw(&Polygon::new(poly, colour.filled()))?;
        area.draw(&PathElement::new(closed, WHITE.stroke_width(1)))?;
    }
    Ok(())
}

/// Text width in pixels with the embedded font.
pub(crate) fn text_width(text: &str, size: u32) -> u32 {
    font();
    ("sans-serif", size)
        .into_font()
        .box_size(text)
        .map(|b| b.0)
        .unwrap_or(text.chars().count() as u32 * size * 6 / 10)
}

/// The canvas' width. A page shows the chart at its column's width (the
/// report's is 1,200 pixels at most, about 780 on an 800-pixel screen), so
/// every font size below is read at up to 0.78 of its size there: the
/// narrower the canvas, the larger the text reads.
pub const CHART_WIDTH: u32 = 1000;
/// The height of the title and the plot, above the legend.
const PLOT_HEIGHT: u32 = 660;
/// The legend's font size as plotters is given it (it writes 0.8 of it to
/// the SVG): 16 pixels as a 780-pixel column shows it.
pub const LEGEND_FONT: u32 = 26;
const LEGEND_ROW: u32 = 32;
/// A legend entry's sample: the line, with the marker on it.
const LEGEND_SAMPLE: u32 = 60;
const LEGEND_PAD: u32 = 24;
/// Pixels between the lines of series drawn side by side.
const SIDE_BY_SIDE: i32 = 4;
/// Points of two series this near (in pixels, either way) are drawn on top
/// of each other unless they are moved apart.
const COINCIDE_PX: i32 = 3;

/// A legend entry's text: the series' name, and the earlier series whose
/// values it has exactly, since their lines are only drawn side by side.
fn legend_text(chart: &LineChart, i: usize) -> String {
    let s = &chart.series[i];
    match chart.series[..i].iter().find(|o| o.points == s.points) {
        Some(same) if !s.points.is_empty() => format!("{} (= {})", s.name, same.name),
        _ => s.name.clone(),
    }
}

/// The legend's grid under the plot: how many columns, their width, and
/// how many rows.
fn legend_grid(chart: &LineChart) -> (u32, u32, u32) {
    let widest = (0..chart.series.len())
        .map(|i| text_width(&legend_text(chart, i), LEGEND_FONT))
        .max()
        .unwrap_or(0);
    let column = widest + LEGEND_SAMPLE + 2 * LEGEND_PAD;
    let columns = ((CHART_WIDTH - LEGEND_PAD) / column).max(1);
    let rows = (chart.series.len() as u32).div_ceil(columns);
    (columns, column, rows)
}

/// The canvas' size in pixels: the plot, and the legend under it.
pub fn chart_size(chart: &LineChart) -> (u32, u32) {
    let (_, _, rows) = legend_grid(chart);
    (CHART_WIDTH, PLOT_HEIGHT + rows * LEGEND_ROW + LEGEND_PAD)
}

/// Whether two series' points (in pixels) would be drawn over each other.
fn coincide(a: &[(i32, i32)], b: &[(i32, i32)]) -> bool {
    !a.is_empty()
        && a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| (p.0 - q.0).abs() <= COINCIDE_PX && (p.1 - q.1).abs() <= COINCIDE_PX)
}

/// Each series' vertical offset in pixels: series whose points coincide
/// (the herd's 1-notification recipes, or two that differ by one at a
/// thousand clients on a log axis) are drawn side by side, `SIDE_BY_SIDE`
/// apart and centred on where they are, so every one of them shows; a
/// series alone is not moved.
pub fn side_by_side(pixels: &[Vec<(i32, i32)>]) -> Vec<i32> {
    let mut group: Vec<usize> = Vec::with_capacity(pixels.len());
    for (i, p) in pixels.iter().enumerate() {
        let first = (0..i).find(|&j| coincide(&pixels[j], p));
        group.push(first.map_or(i, |j| group[j]));
    }
    (0..pixels.len())
        .map(|i| {
            let size = group.iter().filter(|&&g| g == group[i]).count() as i32;
            let rank = group[..i].iter().filter(|&&g| g == group[i]).count() as i32;
            (2 * rank - (size - 1)) * SIDE_BY_SIDE / 2
        })
        .collect()
}

/// The drawn pieces of the polyline `points` stroked with `pattern` (drawn
/// and skipped lengths in pixels, alternating; empty: one solid piece).
/// The pattern runs on across corners, so a dash is not restarted at every
/// data point.
pub fn dashed(points: &[(i32, i32)], pattern: &[f64]) -> Vec<Vec<(i32, i32)>> {
    if points.len() < 2 {
        return Vec::new();
    }
    if pattern.is_empty() {
        return vec![points.to_vec()];
    }
    let mut pieces = Vec::new();
    let mut current = vec![points[0]];
    let (mut k, mut left, mut drawing) = (0, pattern[0], true);
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
        let length = dx.hypot(dy);
        let mut at = 0.0;
        while length - at > left {
            at += left;
            let p = (
                a.0 + (dx * at / length).round() as i32,
                a.1 + (dy * at / length).round() as i32,
            );
            if drawing {
                current.push(p);
                pieces.push(std::mem::take(&mut current));
            } else {
                current = vec![p];
            }
            drawing = !drawing;
            k = (k + 1) % pattern.len();
            left = pattern[k];
        }
        left -= length - at;
        if drawing {
            current.push(b);
        }
    }
    if drawing && current.len() >= 2 {
        pieces.push(current);
    }
    pieces
}

/// Draws the polyline `points` on `area` in `colour`, stroked as `dash`.
fn draw_stroke<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[(i32, i32)],
    dash: Dash,
    colour: RGBColor,
) -> AreaResult<DB> {
    for piece in dashed(points, dash.pattern()) {
        area.draw(&PathElement::new(piece, colour.stroke_width(3)))?;
    }
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(
    chart: &LineChart,
    root: DrawingArea<DB, Shift>,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let body = root
        .margin(12, 0, 0, 0)
        .titled(&chart.title, ("sans-serif", 30))?;
    let (_, body_height) = body.dim_in_pixel();
    let (columns, column, rows) = legend_grid(chart);
    let legend_height = rows * LEGEND_ROW + LEGEND_PAD;
    let (plot, legend) = body.split_vertically(body_height.saturating_sub(legend_height));
    let (x0, x1) = bounds(chart.xs(), chart.log_x);
    let (y0, y1) = bounds(chart.ys(), chart.log_y);
    let (xt, yt) = (chart.x_ticks(), chart.y_ticks());
    let (x_label, y_label) = (chart.x_axis_label(), chart.y_axis_label());
    let mut builder = ChartBuilder::on(&plot);
    builder
        .margin(20)
        .margin_right(30)
        .x_label_area_size(70)
        .y_label_area_size(100);
    // Each series' points in pixels: lines and markers are drawn over the
    // whole canvas once every series' place is known (none is cut at the
    // plot's edge, and coinciding ones are moved side by side).
    let mut pixels: Vec<Vec<(i32, i32)>> = Vec::new();
    macro_rules! finish {
        ($ctx:expr) => {{
            let ctx = $ctx;
            let mut ctx = ctx;
            ctx.configure_mesh()
                .x_desc(&x_label)
                .y_desc(&y_label)
                .x_label_formatter(&|v| tick(*v))
                .y_label_formatter(&|v| tick(*v))
                .label_style(("sans-serif", 20))
                .axis_desc_style(("sans-serif", 24))
                .bold_line_style(BLACK.mix(0.15))
                .light_line_style(TRANSPARENT)
                .draw()?;
            for s in &chart.series {
                let mut pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|(x, y)| {
                        x.is_finite()
                            && y.is_finite()
                            && (!chart.log_x || *x > 0.0)
                            && (!chart.log_y || *y > 0.0)
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pixels.push(pts.iter().map(|p| ctx.backend_coord(p)).collect());
            }
        }};
    }
    match (chart.log_x, chart.log_y) {
        (true, true) => {
            finish!(builder.build_cartesian_2d(logarithmic(x0..x1, xt), logarithmic(y0..y1, yt))?)
        }
        (true, false) => {
            finish!(builder.build_cartesian_2d(logarithmic(x0..x1, xt), linear(y0..y1, yt))?)
        }
        (false, true) => {
            finish!(builder.build_cartesian_2d(linear(x0..x1, xt), logarithmic(y0..y1, yt))?)
        }
        (false, false) => {
            finish!(builder.build_cartesian_2d(linear(x0..x1, xt), linear(y0..y1, yt))?)
        }
    }
    let offsets = side_by_side(&pixels);
    for (p, dy) in pixels.iter_mut().zip(&offsets) {
        p.iter_mut().for_each(|q| q.1 += dy);
    }
    for (i, s) in chart.series.iter().enumerate() {
        if !s.markers_only {
            let st = style(s.colour.unwrap_or(i));
            draw_stroke(&root, &pixels[i], st.dash, st.rgb())?;
        }
    }
    // Filled markers largest first, then the hollow ones around them.
    let mut order: Vec<usize> = (0..chart.series.len()).collect();
    // Crosses and pluses are thin: drawn over the filled shapes, they hide
    // nothing.
    order.sort_by_key(|&i| {
        let s = &chart.series[i];
        let thin = matches!(
            style(s.colour.unwrap_or(i)).shape,
            Shape::Cross | Shape::Plus
        );
        (s.markers_only, thin, std::cmp::Reverse(marker_radius(s, i)))
    });
    for i in order {
        let s = &chart.series[i];
        let st = style(s.colour.unwrap_or(i));
        for &p in &pixels[i] {
            draw_marker(
                &root,
                p,
                st.shape,
                marker_radius(s, i),
                st.rgb(),
                s.markers_only,
            )?;
        }
    }
    // The legend, under the plot, in columns filled row by row: a line (if
    // the series has one) through its marker, then the name.
    let label = TextStyle::from(("sans-serif", LEGEND_FONT).into_font())
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, s) in chart.series.iter().enumerate() {
        let st = style(s.colour.unwrap_or(i));
        let (col, row) = (i as u32 % columns, i as u32 / columns);
        let x = (LEGEND_PAD + col * column) as i32;
        let y = (LEGEND_PAD / 2 + row * LEGEND_ROW + LEGEND_ROW / 2) as i32;
        let sample = LEGEND_SAMPLE as i32 - 8;
        if !s.markers_only {
            draw_stroke(&legend, &[(x, y), (x + sample, y)], st.dash, st.rgb())?;
        }
        let r = (st.radius as i32).clamp(4, 9);
        draw_marker(
            &legend,
            (x + sample / 2, y),
            st.shape,
            r,
            st.rgb(),
            s.markers_only,
        )?;
        legend.draw(&Text::new(
            legend_text(chart, i),
            (x + LEGEND_SAMPLE as i32, y),
            label.clone(),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// A series' marker radius: hollow markers ring the filled ones.
fn marker_radius(s: &Series, i: usize) -> i32 {
    let r = style(s.colour.unwrap_or(i)).radius as i32;
    if s.markers_only {
        r + 4
    } else {
        r
    }
}

/// Writes `base.svg` and `base.png`.
pub fn line_chart(chart: &LineChart, base: &Path) -> Result<(), ChartError> {
    font();
    let size = chart_size(chart);
    let svg = base.with_extension("svg");
    draw_lines(chart, SVGBackend::new(&svg, size).into_drawing_area())
        .map_err(|e| naming(&svg, e))?;
    let png = base.with_extension("png");
    draw_lines(chart, BitMapBackend::new(&png, size).into_drawing_area())
        .map_err(|e| naming(&png, e))?;
    Ok(())
}

#[cfg(test)]
mod line_chart_tests {
    use super::*;

    fn two_series(log: bool) -> LineChart {
        LineChart {
            title: "notifications per release".into(),
            x_label: "clients".into(),
            y_label: "notifications per release".into(),
            log_x: log,
            log_y: log,
            series: vec![
                Series::line("a", vec![(2.0, 1.0), (10.0, 9.0)]),
                Series::line("b", vec![(2.0, 1.0), (10.0, 9.0)]),
            ],
        }
    }

    #[test]
    fn a_log_axis_says_so_on_the_axis() {
        let log = two_series(true);
        assert_eq!(log.x_axis_label(), "clients — log scale");
        assert_eq!(log.y_axis_label(), "notifications per release — log scale");
        let svg = line_chart_svg(&log).unwrap();
        assert_eq!(
            svg.matches("log scale").count(),
            2,
            "both axes, in the picture"
        );
        let linear = two_series(false);
        assert_eq!(linear.x_axis_label(), "clients");
        assert!(!line_chart_svg(&linear).unwrap().contains("log scale"));
    }

    #[test]
    fn no_two_styles_below_308_look_alike() {
        let mut seen = std::collections::HashSet::new();
        for k in 0..308 {
            let s = style(k);
            assert!(seen.insert((s.colour, s.shape, s.dash)), "style {k}");
        }
        // The first four styles, the commonest charts' lines, are stroked
        // four ways.
        let dashes: std::collections::HashSet<Dash> = (0..4).map(|k| style(k).dash).collect();
        assert_eq!(dashes.len(), 4);
    }

    #[test]
    fn coinciding_series_are_drawn_side_by_side_and_named_so() {
        let line = vec![(10, 100), (50, 80), (90, 20)];
        let near = vec![(10, 101), (50, 82), (90, 20)];
        let apart = vec![(10, 300), (50, 280), (90, 220)];
        let offsets = side_by_side(&[line.clone(), near, apart.clone()]);
        assert_eq!(
            offsets,
            vec![-2, 2, 0],
            "the pair moved apart, the third not"
        );
        assert_eq!(
            side_by_side(&[line.clone(), line.clone(), line]),
            vec![-4, 0, 4]
        );
        assert_eq!(side_by_side(&[apart]), vec![0]);
        // Exactly equal values are said in the legend too.
        let chart = two_series(true);
        assert_eq!(legend_text(&chart, 0), "a");
        assert_eq!(legend_text(&chart, 1), "b (= a)");
    }

    #[test]
    fn dashes_follow_their_pattern_across_corners() {
        assert_eq!(
            dashed(&[(0, 0), (100, 0)], &[]),
            vec![vec![(0, 0), (100, 0)]]
        );
        let pieces = dashed(&[(0, 0), (30, 0)], &[10.0, 5.0]);
        assert_eq!(pieces, vec![vec![(0, 0), (10, 0)], vec![(15, 0), (25, 0)]]);
        // Round a corner the dash goes on: 6 pixels before it, 4 after.
        let pieces = dashed(&[(0, 0), (6, 0), (6, 20)], &[10.0, 5.0]);
        assert_eq!(pieces[0], vec![(0, 0), (6, 0), (6, 4)]);
        assert_eq!(pieces[1][0], (6, 9));
    }

    #[test]
    fn the_legend_reads_at_800_pixels() {
        // Eleven series, the herd's baseline: the legend goes under the plot
        // and the canvas stays CHART_WIDTH wide, whatever the names.
        let chart = LineChart {
            series: (0..11)
                .map(|i| Series::line(format!("recipe-number-{i}"), vec![(2.0, i as f64 + 1.0)]))
                .collect(),
            ..two_series(true)
        };
        let svg = line_chart_svg(&chart).unwrap();
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|w| w.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        assert_eq!(width, CHART_WIDTH as f64);
        // An 800-pixel screen gives the report's figures about 780 pixels.
        let shown = |font: f64| font * 780.0 / width;
        let legend = svg
            .split("<text")
            .find(|t| t.contains("recipe-number-10"))
            .unwrap();
        let size: f64 = legend
            .split("font-size=\"")
            .nth(1)
            .and_then(|f| f.split('"').next())
            .and_then(|f| f.parse().ok())
            .unwrap();
        assert!(
            shown(size) >= 16.0,
            "legend text {size} px shows at {}",
            shown(size)
        );
        let (_, height) = chart_size(&chart);
        assert!(height > PLOT_HEIGHT, "the legend's rows are under the plot");
    }
}

/// A drawing error with the file it was writing, which plotters' own
/// message leaves out.
pub(crate) fn naming(path: &Path, e: ChartError) -> ChartError {
    format!("{}: {e}", path.display()).into()
}

/// The line chart as SVG text, without writing a file.
pub fn line_chart_svg(chart: &LineChart) -> Result<String, ChartError> {
    font();
    let size = chart_size(chart);
    let mut out = String::new();
    draw_lines(
        chart,
        SVGBackend::with_string(&mut out, size).into_drawing_area(),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_both_formats_with_text_in_the_svg() {
        let dir = std::env::temp_dir().join(format!("lockstep-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = LineChart {
            title: "notifications per hand-off".into(),
            x_label: "clients".into(),
            y_label: "notifications".into(),
            log_x: true,
            log_y: true,
            series: vec![
                Series::line("a", vec![(2.0, 1.0), (10.0, 9.0), (100.0, 99.0)]),
                Series {
                    colour: Some(3),
                    markers_only: true,
                    ..Series::line("b", vec![(2.0, 0.5), (10.0, 0.9), (100.0, 0.99)])
                },
            ],
        };
        line_chart(&chart, &dir.join("c")).unwrap();
        let svg = std::fs::read_to_string(dir.join("c.svg")).unwrap();
        assert!(svg.contains("notifications per hand-off"));
        let png = std::fs::read(dir.join("c.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(png.len() > 10_000, "a real picture, not an empty canvas");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tick_labels_have_no_needless_decimals() {
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(4.5), "4.5");
        assert_eq!(tick(0.25), "0.25");
    }

    #[test]
    fn nice_ticks_are_round() {
        assert_eq!(
            nice_linear(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(nice_log(0.7, 60.0), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
    }
}
