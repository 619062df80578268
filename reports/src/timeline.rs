//! The holders timeline, written as SVG and PNG: one lane per client, its
//! holds as bars, red exactly where holds overlap, faults shaded for as long
//! as they last, writes to the guarded resource (accepted ✓, rejected ✗)
//! where they happen and violations marked on the lanes of the clients they
//! name, labelled with the property — what the interactive page shows, so
//! two runs that differ only in a refused write or a violation draw
//! differently.

use crate::chart::{
    draw_marker, font, linear, naming, nice_linear, text_width, tick, ChartError, Shape,
};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// One client's lane in a holders timeline. Times are in microseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lane {
    pub name: String,
    /// Hold intervals `(from, to)`, drawn as bars.
    pub holds: Vec<(u64, u64)>,
    /// Where this lane's holds overlap another lane's, `(from, to)`: drawn
    /// red over the hold, exactly there and nowhere else ([`overlaps`]
    /// computes them).
    pub overlaps: Vec<(u64, u64)>,
    /// Faults that last (pause, partition, delay), shaded for their
    /// duration: `(from, to, what)`.
    pub spans: Vec<(u64, u64, String)>,
    /// Point events (a crash, a lost reply, a note): when and what, marked
    /// ▲ with the label.
    pub faults: Vec<(u64, String)>,
    /// When the store expired this client's session, marked ◆.
    pub expiries: Vec<u64>,
    /// Connection-state changes: when, and the state (`SUSPENDED`, `LOST`,
    /// `RECONNECTED`), as small markers.
    pub states: Vec<(u64, String)>,
    /// This client's writes to the guarded resource: when, and whether the
    /// resource took it (✓) or refused it as stale (✗), below its holds.
    pub writes: Vec<(u64, bool)>,
    /// Violations that name this client: when, and the property, as a red
    /// rule across the lane labelled with the property.
    pub violations: Vec<(u64, String)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    pub title: String,
    /// What the time axis measures ("virtual time (s)", "wall time (s)").
    pub x_label: String,
    pub end_us: u64,
    /// One lane per client, drawn top to bottom in this order.
    pub lanes: Vec<Lane>,
    /// What the legend calls a hold bar, in the application's words
    /// ("leads (term N)"); empty: "holds (believes it holds or leads)".
    pub holds_key: String,
}

/// The intersections of two sets of intervals: exactly `[max start, min
/// end)` for every pair that shares time; pairs that only touch are left out.
pub fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for &(a0, a1) in a {
        for &(b0, b1) in b {
            let (from, to) = (a0.max(b0), a1.min(b1));
            if from < to {
                out.push((from, to));
            }
        }
    }
    merge(out)
}

/// Sorted, with overlapping or touching intervals joined.
fn merge(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// For each lane's holds, the stretches during which some other lane holds
/// too: what [`Lane::overlaps`] expects.
pub fn overlaps(holds: &[&[(u64, u64)]]) -> Vec<Vec<(u64, u64)>> {
    (0..holds.len())
        .map(|i| {
            merge(
                (0..holds.len())
                    .filter(|&j| j != i)
                    .flat_map(|j| intersect(holds[i], holds[j]))
                    .collect(),
            )
        })
        .collect()
}

/// Seconds to the millisecond, cut rather than rounded as the trace's own
/// times read: 5531530 µs is `5.531`.
fn millis3(us: u64) -> String {
    format!("{}.{:03}", us / 1_000_000, us % 1_000_000 / 1000)
}

const HOLD: RGBColor = RGBColor(0, 114, 178);
const OVERLAP: RGBColor = RGBColor(213, 20, 20);
const EXPIRY: RGBColor = RGBColor(120, 0, 90);
const ACCEPTED: RGBColor = RGBColor(0, 140, 80);
/// A refused write and a violation: red, as an overlap is.
const REJECTED: RGBColor = OVERLAP;

/// A write's glyph and colour: ✓ taken, ✗ refused.
fn write_glyph(accepted: bool) -> (&'static str, RGBColor) {
    if accepted {
        ("✓", ACCEPTED)
    } else {
        ("✗", REJECTED)
    }
}

/// The shade of a fault that lasts, by its name.
fn span_colour(what: &str) -> RGBAColor {
    match what {
        "pause" => RGBColor(110, 110, 110).mix(0.28),
        "partition" => RGBColor(230, 159, 0).mix(0.35),
        "delay" => RGBColor(117, 112, 179).mix(0.3),
        _ => RGBColor(150, 150, 150).mix(0.25),
    }
}

/// A connection state's marker: shape, colour, hollow.
fn state_marker(state: &str) -> (Shape, RGBColor, bool) {
    match state {
        "SUSPENDED" => (Shape::Circle, RGBColor(200, 110, 0), true),
        "LOST" => (Shape::Square, BLACK, false),
        "RECONNECTED" => (Shape::Circle, RGBColor(0, 140, 80), false),
        _ => (Shape::Circle, RGBColor(90, 90, 90), true),
    }
}

/// One legend entry of a timeline.
enum Key {
    Bar(RGBColor, i32),
    Shade(RGBAColor),
    Marker(Shape, RGBColor, bool),
    Glyph(&'static str, RGBColor),
    Rule(RGBColor),
}

/// What the timeline's legend lists: the holds and overlaps always, the
/// rest when the timeline has them.
fn timeline_keys(t: &Timeline) -> Vec<(Key, String)> {
    let holds = if t.holds_key.is_empty() {
        "holds (believes it holds or leads)"
    } else {
        &t.holds_key
    };
    let mut keys = vec![
        (Key::Bar(HOLD, 7), holds.to_string()),
        (
            Key::Bar(OVERLAP, 11),
            "overlap: another lane holds at the same time".to_string(),
        ),
    ];
    let mut spans: Vec<&str> = Vec::new();
    let mut states: Vec<&str> = Vec::new();
    for l in &t.lanes {
        for s in &l.spans {
            if !spans.contains(&s.2.as_str()) {
                spans.push(&s.2);
            }
        }
        for s in &l.states {
            if !states.contains(&s.1.as_str()) {
                states.push(&s.1);
            }
        }
    }
    for s in spans {
        keys.push((
            Key::Shade(span_colour(s)),
            format!("{s} (for its duration)"),
        ));
    }
    if t.lanes.iter().any(|l| !l.faults.is_empty()) {
        keys.push((Key::Marker(Shape::Triangle, BLACK, false), "fault".into()));
    }
    if t.lanes.iter().any(|l| !l.expiries.is_empty()) {
        keys.push((
            Key::Marker(Shape::Diamond, EXPIRY, false),
            "session expired".into(),
        ));
    }
    for s in states {
        let (shape, c, hollow) = state_marker(s);
        keys.push((Key::Marker(shape, c, hollow), s.to_string()));
    }
    for (accepted, text) in [
        (true, "write accepted"),
        (false, "write refused (stale token)"),
    ] {
        if t.lanes
            .iter()
            .any(|l| l.writes.iter().any(|w| w.1 == accepted))
        {
            let (g, c) = write_glyph(accepted);
            keys.push((Key::Glyph(g, c), text.into()));
        }
    }
    if t.lanes.iter().any(|l| !l.violations.is_empty()) {
        keys.push((
            Key::Rule(REJECTED),
            "violation of the property named, on the clients it names".into(),
        ));
    }
    keys
}

const TIMELINE_WIDTH: u32 = 1400;

/// A marker to draw on a timeline: where, shape, radius, colour, hollow.
type Marker<At> = (At, Shape, i32, RGBColor, bool);

/// Legend rows and the width of each entry.
fn legend_rows(keys: &[(Key, String)]) -> Vec<Vec<(usize, u32)>> {
    let mut rows: Vec<Vec<(usize, u32)>> = vec![Vec::new()];
    let mut x = 0;
    for (i, (_, text)) in keys.iter().enumerate() {
        let w = 40 + text_width(text, 16) + 28;
        if x + w > TIMELINE_WIDTH - 60 && x > 0 {
            rows.push(Vec::new());
            x = 0;
        }
        rows.last_mut().expect("a row").push((i, w));
        x += w;
    }
    rows
}

/// The timeline's lane height and image size.
fn timeline_size(t: &Timeline) -> (u32, u32, u32) {
    let n = t.lanes.len().max(1) as u32;
    let lane = (1100 / n).clamp(26, 96);
    let legend = legend_rows(&timeline_keys(t)).len() as u32 * 26 + 20;
    (lane, TIMELINE_WIDTH, 60 + 20 + n * lane + 70 + legend)
}

fn draw_timeline<DB: DrawingBackend>(
    t: &Timeline,
    root: DrawingArea<DB, Shift>,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let keys = timeline_keys(t);
    let rows = legend_rows(&keys);
    let legend_h = rows.len() as u32 * 26 + 20;
    let (_, h) = root.dim_in_pixel();
    let (top, legend) = root.split_vertically(h - legend_h);
    let n = t.lanes.len().max(1);
    let end = (t.end_us as f64 / 1e6).max(0.001);
    // A little room after the end: the last hold ends inside the frame.
    let x_max = end * 1.02;
    let name_w = t
        .lanes
        .iter()
        .map(|l| text_width(&l.name, 18))
        .max()
        .unwrap_or(0)
        + 30;
    let lanes_y: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut ctx = ChartBuilder::on(&top)
        .caption(&t.title, ("sans-serif", 28))
        .margin(20)
        .margin_right(30)
        .x_label_area_size(60)
        .y_label_area_size(name_w.max(80))
        .build_cartesian_2d(
            linear(0.0..x_max, nice_linear(0.0, x_max, 12)),
            linear(-0.5..n as f64 - 0.5, lanes_y),
        )?;
    // Lane i is drawn at y = n - 1 - i: the first lane on top.
    let lane_y = |i: usize| (n - 1 - i) as f64;
    let names: Vec<String> = t.lanes.iter().map(|l| l.name.clone()).collect();
    ctx.configure_mesh()
        .x_desc(&t.x_label)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                names.get(n - 1 - i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 18))
        .axis_desc_style(("sans-serif", 22))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(TRANSPARENT)
        .disable_y_mesh()
        .draw()?;
    let secs = |us: u64| us as f64 / 1e6;
    // Lane separators.
    for i in 1..n {
        let y = i as f64 - 0.5;
        ctx.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, y), (x_max, y)],
            BLACK.mix(0.25).stroke_width(1),
        )))?;
    }
    let small = ("sans-serif", 14).into_font();
    // Text that would run past the right edge is set to the left of its point.
    let anchored = |x: f64, colour: RGBColor| {
        let pos = if x > 0.72 * x_max {
            Pos::new(HPos::Right, VPos::Top)
        } else {
            Pos::new(HPos::Left, VPos::Top)
        };
        small.clone().color(&colour).pos(pos)
    };
    let nudge = |x: f64| {
        if x > 0.72 * x_max {
            x - x_max / 200.0
        } else {
            x + x_max / 200.0
        }
    };
    let mut points: Vec<Marker<(f64, f64)>> = Vec::new();
    for (i, lane) in t.lanes.iter().enumerate() {
        let y = lane_y(i);
        // Faults that last: shaded over the whole lane, labelled at their start.
        for (a, b, what) in &lane.spans {
            let (a, b) = (secs(*a), secs(*b).max(secs(*a) + x_max / 1000.0));
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(a, y - 0.48), (b, y + 0.48)],
                span_colour(what).filled(),
            )))?;
            ctx.draw_series(std::iter::once(Text::new(
                format!("{what} {:.2} s", b - a),
                (nudge(a), y + 0.46),
                anchored(a, RGBColor(40, 40, 40)),
            )))?;
        }
        for &(a, b) in &lane.holds {
            let (a, b) = (secs(a), secs(b).max(secs(a) + x_max / 800.0));
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(a, y - 0.17), (b, y + 0.17)],
                HOLD.filled(),
            )))?;
        }
        // Labels below the bars — each violation's property, each
        // overlap's bounds — in one row: a label that would run into one
        // already there is left out (the rule or the red bar still shows).
        let mut labels: Vec<(i32, i32)> = Vec::new();
        let right = ctx.backend_coord(&(x_max, y)).0;
        // Whether the label was drawn.
        let mut label = |at: f64, text: String, colour: RGBColor| -> Result<bool, ChartError> {
            let w = text_width(&text, 14) as i32;
            let (px, py) = ctx.backend_coord(&(at, y - 0.37));
            let left = (px + 3).min(right - w);
            if labels
                .iter()
                .all(|&(a, b)| left >= b + 12 || left + w + 12 <= a)
            {
                let style = small
                    .clone()
                    .color(&colour)
                    .pos(Pos::new(HPos::Left, VPos::Top));
                root.draw(&Text::new(text, (left, py), style))?;
                labels.push((left, left + w));
                return Ok(true);
            }
            Ok(false)
        };
        // A property is named once a lane (its later rules need no label),
        // so that another property's name finds room.
        let mut named: Vec<&str> = Vec::new();
        for (at, property) in &lane.violations {
            if !named.contains(&property.as_str())
                && label(secs(*at), format!("✗ {property}"), REJECTED)?
            {
                named.push(property);
            }
        }
        for &(a, b) in &lane.overlaps {
            let text = format!("overlap {}–{} s", millis3(a), millis3(b));
            label(secs(a), text, OVERLAP)?;
        }
        // Overlaps: red, taller than the hold (so they read without
        // colour), exactly over the shared time.
        for &(a, b) in &lane.overlaps {
            let (fa, fb) = (secs(a), secs(b).max(secs(a) + x_max / 800.0));
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(fa, y - 0.24), (fb, y + 0.24)],
                OVERLAP.filled(),
            )))?;
        }
        // Violations: a red rule across the lane.
        for (at, _) in &lane.violations {
            let x = secs(*at);
            ctx.draw_series(std::iter::once(PathElement::new(
                vec![(x, y - 0.48), (x, y + 0.48)],
                REJECTED.stroke_width(3),
            )))?;
        }
        for (at, what) in &lane.faults {
            let x = secs(*at);
            points.push(((x, y + 0.33), Shape::Triangle, 8, BLACK, false));
            ctx.draw_series(std::iter::once(Text::new(
                what.clone(),
                (nudge(x), y + 0.46),
                anchored(x, BLACK),
            )))?;
        }
        for &at in &lane.expiries {
            points.push(((secs(at), y + 0.33), Shape::Diamond, 8, EXPIRY, false));
        }
        for (at, state) in &lane.states {
            let (shape, c, hollow) = state_marker(state);
            points.push(((secs(*at), y + 0.33), shape, 5, c, hollow));
        }
        for &(at, accepted) in &lane.writes {
            let (glyph, colour) = write_glyph(accepted);
            let style = small
                .clone()
                .color(&colour)
                .pos(Pos::new(HPos::Center, VPos::Center));
            ctx.draw_series(std::iter::once(Text::new(
                glyph,
                (secs(at), y - 0.3),
                style,
            )))?;
        }
    }
    // Markers on one rail that would cover each other are set side by side,
    // in time order.
    let mut placed: Vec<Marker<(i32, i32)>> = points
        .into_iter()
        .map(|(p, shape, r, c, hollow)| (ctx.backend_coord(&p), shape, r, c, hollow))
        .collect();
    placed.sort_by_key(|m| (m.0 .1, m.0 .0));
    for i in 1..placed.len() {
        let (prev, cur) = (placed[i - 1], placed[i]);
        let gap = prev.2 + cur.2 + 2;
        if prev.0 .1 == cur.0 .1 && cur.0 .0 - prev.0 .0 < gap {
            placed[i].0 .0 = prev.0 .0 + gap;
        }
    }
    for (p, shape, r, c, hollow) in placed {
        draw_marker(&root, p, shape, r, c, hollow)?;
    }
    // The legend, below the plot.
    let label =
        TextStyle::from(("sans-serif", 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in rows.iter().enumerate() {
        let y = 12 + 13 + r as i32 * 26;
        let mut x = 60;
        for &(i, w) in row {
            let (key, text) = &keys[i];
            match key {
                Key::Bar(c, half) => {
                    legend.draw(&Rectangle::new(
                        [(x, y - half), (x + 30, y + half)],
                        c.filled(),
                    ))?;
                }
                Key::Shade(c) => {
                    legend.draw(&Rectangle::new([(x, y - 11), (x + 30, y + 11)], c.filled()))?;
                }
                Key::Marker(shape, c, hollow) => {
                    draw_marker(&legend, (x + 15, y), *shape, 7, *c, *hollow)?;
                }
                Key::Glyph(g, c) => {
                    let style = TextStyle::from(("sans-serif", 20).into_font())
                        .color(c)
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    legend.draw(&Text::new(*g, (x + 15, y), style))?;
                }
                Key::Rule(c) => {
                    legend.draw(&PathElement::new(
                        vec![(x + 15, y - 11), (x + 15, y + 11)],
                        c.stroke_width(3),
                    ))?;
                }
            }
            legend.draw(&Text::new(text.clone(), (x + 40, y), label.clone()))?;
            x += w as i32;
        }
    }
    root.present()?;
    Ok(())
}

/// Writes `base.svg` and `base.png`.
pub fn timeline(t: &Timeline, base: &Path) -> Result<(), ChartError> {
    font();
    let (_, w, h) = timeline_size(t);
    let (svg, png) = (base.with_extension("svg"), base.with_extension("png"));
    draw_timeline(t, SVGBackend::new(&svg, (w, h)).into_drawing_area())
        .map_err(|e| naming(&svg, e))?;
    draw_timeline(t, BitMapBackend::new(&png, (w, h)).into_drawing_area())
        .map_err(|e| naming(&png, e))?;
    Ok(())
}

/// The timeline as SVG text, without writing a file.
pub fn timeline_svg(t: &Timeline) -> Result<String, ChartError> {
    font();
    let (_, w, h) = timeline_size(t);
    let mut out = String::new();
    draw_timeline(
        t,
        SVGBackend::with_string(&mut out, (w, h)).into_drawing_area(),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_merge_and_intersect() {
        assert_eq!(intersect(&[(0, 10)], &[(5, 20)]), vec![(5, 10)]);
        assert_eq!(intersect(&[(0, 10)], &[(10, 20)]), vec![]);
        assert_eq!(merge(vec![(5, 8), (0, 6), (9, 10)]), vec![(0, 8), (9, 10)]);
    }
}
