//! `lockstep report`: one self-contained HTML page and its Markdown twin —
//! the model-checking summary, the herd charts and table, and the holders
//! timelines of the shipped split-brain scenarios. Also the herd charts on
//! their own and `report timeline TRACE`.

use super::{ReportArgs, ReportWhat, UsageError};
use reports::chart::{line_chart, timeline, LineChart, Series};
use sim::herd::HerdRow;
use sim::timeline::timeline_from_trace;
use std::collections::BTreeMap;
use std::path::Path;

fn chart_err(e: reports::chart::ChartError) -> UsageError {
    UsageError(format!("cannot draw a chart: {e}"))
}

/// One line per recipe over the baseline rows.
fn per_recipe(rows: &[HerdRow], y: impl Fn(&HerdRow) -> f64) -> Vec<Series> {
    let mut by: BTreeMap<(usize, String), Series> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.scenario.starts_with("baseline-")) {
        // Registry order, so a recipe keeps its line style whatever the selection.
        let order = models::recipes::REGISTRY
            .iter()
            .position(|x| r.recipe.split(' ').next() == Some(x.name))
            .unwrap_or(usize::MAX);
        by.entry((order, r.recipe.clone()))
            .or_insert_with(|| Series::line(r.recipe.clone(), Vec::new()))
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
