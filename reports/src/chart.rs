//! Line charts and the holders timeline, each written as SVG and PNG.
//!
//! Text is drawn with DejaVu Sans, embedded in the binary (its licence is in
//! `reports/fonts/`), so the PNGs render the same on a machine with no font
//! packages at all.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

fn font() {
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
    /// Palette index; by default the series' position.
    pub colour: Option<usize>,
    /// Draw only hollow markers, no line: measurements laid over a model's line.
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
/// paper swallows).
const COLOURS: [RGBColor; 8] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 114, 178),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(117, 112, 179),
];

pub type ChartError = Box<dyn std::error::Error + Send + Sync>;

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
        (lo / 1.5, hi * 1.5)
    } else {
        let pad = ((hi - lo) * 0.05).max(0.5);
        (
            (lo - pad)
                .min(0.0)
                .max(if lo >= 0.0 { 0.0 } else { lo - pad }),
            hi + pad,
        )
    }
}

fn draw_lines<DB: DrawingBackend>(
    chart: &LineChart,
    root: DrawingArea<DB, Shift>,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let xs = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = bounds(xs, chart.log_x);
    let (y0, y1) = bounds(ys, chart.log_y);
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(&chart.title, ("sans-serif", 30))
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(90);
    macro_rules! finish {
        ($ctx:expr) => {{
            let mut ctx = $ctx;
            ctx.configure_mesh()
                .x_desc(&chart.x_label)
                .y_desc(&chart.y_label)
                .x_label_formatter(&|v| tick(*v))
                .y_label_formatter(&|v| tick(*v))
                .label_style(("sans-serif", 18))
                .axis_desc_style(("sans-serif", 22))
                .draw()?;
            let n = chart.series.len();
            for (i, s) in chart.series.iter().enumerate() {
                let colour = COLOURS[s.colour.unwrap_or(i) % COLOURS.len()];
                if s.markers_only {
                    // Concentric rings, one size per colour: measurements that
                    // coincide stay visible.
                    let pts: Vec<(f64, f64)> = s.points.clone();
                    let size = 8 + 4 * s.colour.unwrap_or(i) as i32;
                    ctx.draw_series(
                        pts.iter()
                            .map(|&p| Circle::new(p, size, colour.stroke_width(3))),
                    )?
                    .label(s.name.clone())
                    .legend(move |(x, y)| Circle::new((x + 5, y), 6, colour.stroke_width(2)));
                    continue;
                }
                // Earlier lines are wider and each has its own marker, so a
                // line that coincides with another still shows.
                // Series with a colour of their own are told apart by it.
                let automatic = s.colour.is_none();
                let width = if automatic { 3 + (n - 1 - i) as u32 } else { 3 };
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|(x, y)| (!chart.log_x || *x > 0.0) && (!chart.log_y || *y > 0.0))
                    .collect();
                // The second half of the lines is dashed: drawn over an
                // earlier line they coincide with, both stay visible.
                let dashed = automatic && i >= n.div_ceil(2);
                let anno = if dashed {
                    ctx.draw_series(DashedLineSeries::new(
                        pts.clone(),
                        14,
                        10,
                        colour.stroke_width(width),
                    ))?
                } else {
                    ctx.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(width)))?
                };
                anno.label(s.name.clone()).legend(move |(x, y)| {
                    PathElement::new(
                        vec![(x - 4, y), (x + 14, y)],
                        colour.stroke_width(width.min(5)),
                    )
                });
                if !automatic {
                    ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
                    continue;
                }
                let size = 5 + (n - 1 - i) as i32 * 2;
                match i % 4 {
                    0 => {
                        ctx.draw_series(pts.iter().map(|&p| Circle::new(p, size, colour.filled())))?
                    }
                    1 => ctx.draw_series(
                        pts.iter()
                            .map(|&p| TriangleMarker::new(p, size + 2, colour.filled())),
                    )?,
                    2 => ctx.draw_series(
                        pts.iter()
                            .map(|&p| Cross::new(p, size, colour.stroke_width(3))),
                    )?,
                    _ => ctx.draw_series(
                        pts.iter()
                            .map(|&p| Circle::new(p, size, colour.stroke_width(2))),
                    )?,
                };
            }
            ctx.configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .label_font(("sans-serif", 20))
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .draw()?;
        }};
    }
    match (chart.log_x, chart.log_y) {
        (true, true) => {
            finish!(builder.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?)
        }
        (true, false) => finish!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1)?),
        (false, true) => finish!(builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?),
        (false, false) => finish!(builder.build_cartesian_2d(x0..x1, y0..y1)?),
    }
    root.present()?;
    Ok(())
}

const SIZE: (u32, u32) = (1200, 800);

/// Tick labels without needless decimals: 10, 200, 0.5.
fn tick(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Writes `base.svg` and `base.png`.
pub fn line_chart(chart: &LineChart, base: &Path) -> Result<(), ChartError> {
    font();
    let svg = base.with_extension("svg");
    draw_lines(chart, SVGBackend::new(&svg, SIZE).into_drawing_area())
        .map_err(|e| naming(&svg, e))?;
    let png = base.with_extension("png");
    draw_lines(chart, BitMapBackend::new(&png, SIZE).into_drawing_area())
        .map_err(|e| naming(&png, e))?;
    Ok(())
}

/// A drawing error with the file it was writing, which plotters' own
/// message leaves out.
fn naming(path: &Path, e: ChartError) -> ChartError {
    format!("{}: {e}", path.display()).into()
}

/// One client's lane in a holders timeline.
#[derive(Clone, Debug)]
pub struct Lane {
    pub name: String,
    /// Hold intervals (µs) and whether another client held at the same time.
    pub holds: Vec<(u64, u64, bool)>,
    /// Faults: when (µs) and what.
    pub faults: Vec<(u64, String)>,
}

#[derive(Clone, Debug)]
pub struct Timeline {
    pub title: String,
    /// What the time axis measures ("virtual time (s)", "wall time (s)").
    pub x_label: String,
    pub end_us: u64,
    pub lanes: Vec<Lane>,
}

fn draw_timeline<DB: DrawingBackend>(
    t: &Timeline,
    root: DrawingArea<DB, Shift>,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    // Lane i is centred on y = i; the space above the last lane holds the legend.
    let n = t.lanes.len().max(1) as f64;
    let end = (t.end_us as f64 / 1e6).max(0.001);
    let mut ctx = ChartBuilder::on(&root)
        .caption(&t.title, ("sans-serif", 28))
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(110)
        .build_cartesian_2d(0.0..end, -0.5..n + 0.4)?;
    let names: Vec<String> = t.lanes.iter().map(|l| l.name.clone()).collect();
    ctx.configure_mesh()
        .x_desc(&t.x_label)
        .y_labels(names.len() + 2)
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 18))
        .axis_desc_style(("sans-serif", 22))
        .disable_y_mesh()
        .draw()?;
    let ok = RGBColor(0, 114, 178);
    let bad = RGBColor(213, 20, 20);
    for (i, lane) in t.lanes.iter().enumerate() {
        let y = i as f64;
        for &(a, b, overlap) in &lane.holds {
            let colour = if overlap { bad } else { ok };
            let (a, b) = (
                a as f64 / 1e6,
                (b as f64 / 1e6).max(a as f64 / 1e6 + end / 800.0),
            );
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(a, y - 0.25), (b, y + 0.25)],
                colour.filled(),
            )))?;
        }
        for (at, what) in &lane.faults {
            let x = *at as f64 / 1e6;
            ctx.draw_series(std::iter::once(TriangleMarker::new(
                (x, y + 0.33),
                9,
                BLACK.filled(),
            )))?;
            ctx.draw_series(std::iter::once(Text::new(
                what.clone(),
                (x + end / 150.0, y + 0.45),
                ("sans-serif", 16),
            )))?;
        }
    }
    ctx.draw_series(std::iter::once(Rectangle::new(
        [(0.0, -1.0), (0.0, -1.0)],
        ok.filled(),
    )))?
    .label("holds the lock")
    .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 24, y + 6)], ok.filled()));
    ctx.draw_series(std::iter::once(Rectangle::new(
        [(0.0, -1.0), (0.0, -1.0)],
        bad.filled(),
    )))?
    .label("holds while another holds")
    .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 24, y + 6)], bad.filled()));
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 18))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Writes `base.svg` and `base.png`.
pub fn timeline(t: &Timeline, base: &Path) -> Result<(), ChartError> {
    font();
    let height = (160 + 70 * t.lanes.len() as u32).clamp(360, 2000);
    let (svg, png) = (base.with_extension("svg"), base.with_extension("png"));
    draw_timeline(t, SVGBackend::new(&svg, (1400, height)).into_drawing_area())
        .map_err(|e| naming(&svg, e))?;
    draw_timeline(
        t,
        BitMapBackend::new(&png, (1400, height)).into_drawing_area(),
    )
    .map_err(|e| naming(&png, e))?;
    Ok(())
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
    }
}
