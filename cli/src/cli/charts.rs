//! The herd charts (notifications per hand-off, requests per acquisition,
//! hand-off latency), drawn once per sweep for `herd` and the tour alike.

use super::UsageError;
use reports::chart::{line_chart, LineChart, Series};
use sim::herd::HerdRow;
use std::collections::BTreeMap;
use std::path::Path;

pub(super) fn chart_err(e: reports::chart::ChartError) -> UsageError {
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
        title: "Watch notifications per hand-off (release or resignation)".into(),
        x_label: "clients waiting (for the lock, or to lead)".into(),
        y_label: "notifications per release (mean)".into(),
        log_x: true,
        log_y: true,
        series: per_recipe(rows, HerdRow::notifications_per_release_mean),
    };
    line_chart(&notif, &dir.join("herd-notifications")).map_err(chart_err)?;
    let requests = LineChart {
        title: "Store requests per acquisition".into(),
        x_label: "clients waiting (for the lock, or to lead)".into(),
        y_label: "requests per acquisition (writes + reads + watches)".into(),
        log_x: true,
        log_y: true,
        series: per_recipe(rows, |r| r.requests_per_acquisition("all")),
    };
    line_chart(&requests, &dir.join("herd-requests")).map_err(chart_err)?;
    let latency = LineChart {
        title: "Hand-off latency (release to next hold or leader), median".into(),
        x_label: "clients waiting (for the lock, or to lead)".into(),
        y_label: "virtual milliseconds".into(),
        log_x: true,
        log_y: true,
        series: per_recipe(rows, |r| r.handoff_us.p50 as f64 / 1000.0),
    };
    line_chart(&latency, &dir.join("herd-handoff")).map_err(chart_err)?;
    Ok(())
}
