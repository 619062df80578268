//! Charts that tell the truth: ticks where the data is, a series' look
//! fixed by its style index, red exactly where holds overlap, lanes only
//! for the lanes given.

use reports::chart::{line_chart_svg, style, LineChart, Series};
use reports::timeline::{intersect, overlaps, timeline_svg, Lane, Timeline};

fn chart(series: Vec<Series>) -> LineChart {
    LineChart {
        title: "t".into(),
        x_label: "clients".into(),
        y_label: "notifications".into(),
        log_x: true,
        log_y: true,
        series,
    }
}

/// The text of every `<text>` element of an SVG.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(body.trim().to_string())
        })
        .collect()
}

/// `attr="value"` of an SVG element, as a number.
fn attr(element: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let at = element.find(&key).unwrap() + key.len();
    let end = element[at..].find('"').unwrap();
    element[at..at + end].parse().unwrap()
}

/// The `<rect>` elements filled with `fill` (an upper-case hex colour).
fn rects(svg: &str, fill: &str) -> Vec<(f64, f64, f64, f64)> {
    svg.split("<rect")
        .skip(1)
        .map(|r| &r[..r.find("/>").unwrap()])
        .filter(|r| r.contains(&format!("fill=\"{fill}\"")))
        .map(|r| {
            (
                attr(r, "x"),
                attr(r, "y"),
                attr(r, "width"),
                attr(r, "height"),
            )
        })
        .collect()
}

#[test]
fn a_log_axis_has_its_ticks_at_the_data() {
    let c = chart(vec![Series::line(
        "a",
        vec![(2.0, 0.5), (5.0, 1.0), (20.0, 3.0)],
    )]);
    assert_eq!(c.x_ticks(), vec![2.0, 5.0, 20.0]);
    let labels = texts(&line_chart_svg(&c).unwrap());
    for want in ["2", "5", "20"] {
        assert!(labels.iter().any(|l| l == want), "{want} in {labels:?}");
    }
    // Not the round numbers a log axis would pick by itself.
    assert!(!labels.iter().any(|l| l == "10" || l == "30"), "{labels:?}");
    // The default sweep: every client count is a tick.
    let sweep = [2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0];
    let c = chart(vec![Series::line(
        "a",
        sweep.iter().map(|&x| (x, x / 2.0)).collect(),
    )]);
    assert_eq!(c.x_ticks(), sweep.to_vec());
    // The axes are labelled, each as the log axis it is.
    let labels = texts(&line_chart_svg(&c).unwrap());
    assert!(
        labels.iter().any(|l| l == "clients — log scale")
            && labels.iter().any(|l| l == "notifications — log scale")
    );
}

#[test]
fn a_series_looks_the_same_whatever_else_the_chart_shows() {
    let fixed = |name: &str| Series {
        colour: Some(1),
        ..Series::line(name, vec![(2.0, 1.0), (5.0, 2.0)])
    };
    let alone = line_chart_svg(&chart(vec![fixed("b")])).unwrap();
    let beside = line_chart_svg(&chart(vec![
        Series {
            colour: Some(0),
            ..Series::line("a", vec![(2.0, 3.0), (5.0, 4.0)])
        },
        fixed("b"),
    ]))
    .unwrap();
    let (r, g, b) = style(1).colour;
    let blue = format!("#{r:02X}{g:02X}{b:02X}");
    let (r, g, b) = style(0).colour;
    let orange = format!("#{r:02X}{g:02X}{b:02X}");
    assert!(alone.contains(&blue) && !alone.contains(&orange));
    assert!(beside.contains(&blue) && beside.contains(&orange));
    // Style k is a pair (colour, shape) no other k below 56 has.
    let mut seen = std::collections::HashSet::new();
    for k in 0..56 {
        let s = style(k);
        assert!(seen.insert((s.colour, s.shape)), "style {k}");
        assert_eq!(style(k), s, "a style is a function of its index");
    }
}

#[test]
fn overlaps_are_exactly_the_shared_time() {
    let a = [(1_000_000, 4_000_000)];
    let b = [(3_000_000, 6_000_000)];
    let c = [(7_000_000, 8_000_000)];
    assert_eq!(intersect(&a, &b), vec![(3_000_000, 4_000_000)]);
    let o = overlaps(&[&a, &b, &c]);
    assert_eq!(o[0], vec![(3_000_000, 4_000_000)], "[max start, min end]");
    assert_eq!(o[1], vec![(3_000_000, 4_000_000)]);
    assert!(o[2].is_empty(), "a hold nobody shares is not marked");
    // Holds that only touch do not overlap.
    assert!(intersect(&[(0, 5)], &[(5, 9)]).is_empty());
}

#[test]
fn the_timeline_is_red_only_over_the_overlap() {
    let lane = |name: &str, hold: (u64, u64), overlap: Vec<(u64, u64)>| Lane {
        name: name.into(),
        holds: vec![hold],
        overlaps: overlap,
        ..Lane::default()
    };
    let t = Timeline {
        title: "two holders".into(),
        x_label: "virtual time (s)".into(),
        end_us: 10_000_000,
        lanes: vec![
            Lane {
                spans: vec![(500_000, 2_000_000, "pause".into())],
                expiries: vec![2_500_000],
                states: vec![(1_500_000, "SUSPENDED".into())],
                ..lane(
                    "client 0",
                    (1_000_000, 4_000_000),
                    vec![(3_000_000, 4_000_000)],
                )
            },
            lane(
                "client 1",
                (3_000_000, 6_000_000),
                vec![(3_000_000, 4_000_000)],
            ),
        ],
        holds_key: String::new(),
    };
    let svg = timeline_svg(&t).unwrap();
    let blue = rects(&svg, "#0072B2");
    let red = rects(&svg, "#D51414");
    // One hold bar per lane, one overlap bar per lane, and a swatch of each
    // in the legend (the lowest on the canvas).
    assert_eq!(blue.len(), 3, "{blue:?}");
    assert_eq!(red.len(), 3, "{red:?}");
    let legend_y = red.iter().map(|r| r.1).fold(0.0, f64::max);
    let red: Vec<_> = red.into_iter().filter(|r| r.1 < legend_y).collect();
    let hold0 = blue.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    // The first lane's hold is 3 s long; red covers its last second only.
    let per_second = hold0.2 / 3.0;
    for r in &red {
        assert!(
            (r.0 - (hold0.0 + 2.0 * per_second)).abs() <= 2.0,
            "red starts at 3 s: {r:?} vs {hold0:?}"
        );
        assert!((r.2 - per_second).abs() <= 2.0, "red lasts 1 s: {r:?}");
    }
    let labels = texts(&svg);
    assert!(
        labels.iter().any(|l| l == "overlap 3.000–4.000 s"),
        "{labels:?}"
    );
    assert!(
        labels.iter().any(|l| l.starts_with("pause 1.50 s")),
        "{labels:?}"
    );
    assert!(labels.iter().any(|l| l == "session expired"));
    assert!(labels.iter().any(|l| l == "SUSPENDED"));
    // Two lanes, two names, and no third.
    assert!(labels.iter().any(|l| l == "client 0") && labels.iter().any(|l| l == "client 1"));
    assert!(!labels.iter().any(|l| l == "client 2"));
}
