//! `lockstep report`: one self-contained HTML page and its Markdown twin —
//! the model-checking summary, the herd charts and table, and the holders
//! timelines of the shipped split-brain scenarios. Also the herd charts on
//! their own and `report timeline TRACE`.

use super::{ReportArgs, ReportWhat, UsageError};
use models::recipes::Recipe;
use reports::chart::{line_chart, timeline, Lane, LineChart, Series, Timeline};
use sim::herd::HerdRow;
use std::collections::BTreeMap;
use std::path::Path;

fn chart_err(e: reports::chart::ChartError) -> UsageError {
    UsageError(format!("cannot draw a chart: {e}"))
}

/// One line per recipe over the baseline rows.
fn per_recipe(rows: &[HerdRow], y: impl Fn(&HerdRow) -> f64) -> Vec<Series> {
    let mut by: BTreeMap<usize, Series> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.scenario.starts_with("baseline-")) {
        let order = Recipe::ALL
            .iter()
            .position(|x| x.to_string() == r.recipe)
            .unwrap_or(99);
        by.entry(order)
            .or_insert_with(|| Series {
                name: r.recipe.clone(),
                points: Vec::new(),
            })
            .points
            .push((r.clients as f64, y(r)));
    }
    by.into_values().collect()
}

/// The three herd charts, each as SVG and PNG, in `dir`.
pub fn herd_charts(dir: &Path, rows: &[HerdRow]) -> Result<(), UsageError> {
    let notif = LineChart {
        title: "Watch notifications per lock hand-off".into(),
        x_label: "clients waiting for the lock".into(),
        y_label: "notifications per release (mean)".into(),
        log_x: true,
        log_y: true,
        series: per_recipe(rows, HerdRow::notifications_per_release_mean),
    };
    line_chart(&notif, &dir.join("herd-notifications")).map_err(chart_err)?;
    let requests = LineChart {
        title: "Store requests per acquisition".into(),
        x_label: "clients waiting for the lock".into(),
        y_label: "requests per acquisition (writes + reads + watches)".into(),
        log_x: true,
        log_y: true,
        series: per_recipe(rows, |r| r.requests_per_acquisition("all")),
    };
    line_chart(&requests, &dir.join("herd-requests")).map_err(chart_err)?;
    let latency = LineChart {
        title: "Hand-off latency (release to next hold), median".into(),
        x_label: "clients waiting for the lock".into(),
        y_label: "virtual milliseconds".into(),
        log_x: true,
        log_y: true,
        series: per_recipe(rows, |r| r.handoff_us.p50 as f64 / 1000.0),
    };
    line_chart(&latency, &dir.join("herd-handoff")).map_err(chart_err)?;
    Ok(())
}

/// Builds a holders timeline from a `run --trace` file's lines.
pub fn timeline_from_trace(title: &str, lines: &[String]) -> Result<Timeline, String> {
    let mut lanes: BTreeMap<u64, Lane> = BTreeMap::new();
    let mut open: BTreeMap<u64, u64> = BTreeMap::new();
    let mut end = 0u64;
    let mut clients = 0u64;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("line {}: not a trace event: {e}", i + 1))?;
        let t = v["t"]
            .as_u64()
            .ok_or_else(|| format!("line {}: no time", i + 1))?;
        end = end.max(t);
        let c = v["client"].as_u64();
        let lane = |lanes: &mut BTreeMap<u64, Lane>, c: u64| {
            lanes.entry(c).or_insert_with(|| Lane {
                name: format!("client {c}"),
                holds: Vec::new(),
                faults: Vec::new(),
            });
        };
        match (v["event"].as_str(), c) {
            (Some("start"), _) => clients = v["clients"].as_u64().unwrap_or(0),
            (Some("hold"), Some(c)) => {
                lane(&mut lanes, c);
                open.insert(c, t);
            }
            (Some("release"), Some(c)) => {
                lane(&mut lanes, c);
                if let Some(a) = open.remove(&c) {
                    lanes
                        .get_mut(&c)
                        .expect("lane exists")
                        .holds
                        .push((a, t, false));
                }
            }
            (Some("fault"), Some(c)) => {
                lane(&mut lanes, c);
                let what = v["fault"].as_str().unwrap_or("fault").to_string();
                if what == "crash" {
                    if let Some(a) = open.remove(&c) {
                        lanes
                            .get_mut(&c)
                            .expect("lane exists")
                            .holds
                            .push((a, t, false));
                    }
                }
                lanes
                    .get_mut(&c)
                    .expect("lane exists")
                    .faults
                    .push((t, what));
            }
            _ => {}
        }
    }
    for (c, a) in open {
        if let Some(l) = lanes.get_mut(&c) {
            l.holds.push((a, end, false));
        }
    }
    for c in 0..clients.min(64) {
        lanes.entry(c).or_insert_with(|| Lane {
            name: format!("client {c}"),
            holds: Vec::new(),
            faults: Vec::new(),
        });
    }
    // Overlaps: a hold that shares time with another client's hold.
    let all: Vec<(u64, u64, u64)> = lanes
        .iter()
        .flat_map(|(c, l)| l.holds.iter().map(move |h| (*c, h.0, h.1)))
        .collect();
    for (c, lane) in lanes.iter_mut() {
        for h in &mut lane.holds {
            h.2 = all.iter().any(|&(d, a, b)| d != *c && a < h.1 && h.0 < b);
        }
    }
    Ok(Timeline {
        title: title.to_string(),
        end_us: end,
        lanes: lanes.into_values().collect(),
    })
}

pub fn timeline_command(trace: &Path, out: Option<&Path>) -> Result<(), UsageError> {
    let text = std::fs::read_to_string(trace)
        .map_err(|e| UsageError(format!("{}: cannot read: {e}", trace.display())))?;
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let title = format!("Who believes it holds the lock — {}", trace.display());
    let t = timeline_from_trace(&title, &lines)
        .map_err(|e| UsageError(format!("{}: {e}", trace.display())))?;
    let base = out.map(Path::to_path_buf).unwrap_or_else(|| {
        let stem = trace
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        trace.with_file_name(format!("{stem}-timeline"))
    });
    timeline(&t, &base).map_err(chart_err)?;
    println!(
        "written: {} and {}",
        base.with_extension("svg").display(),
        base.with_extension("png").display()
    );
    Ok(())
}

pub fn run(args: &ReportArgs) -> Result<std::process::ExitCode, UsageError> {
    match &args.what {
        Some(ReportWhat::Timeline { trace, out }) => {
            timeline_command(trace, out.as_deref())?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        None => super::tour::run(&args.out, args.max_clients),
    }
}
