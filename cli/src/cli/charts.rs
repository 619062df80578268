//! The herd charts (notifications per release, requests per acquisition),
//! drawn once per sweep for `herd` and the tour alike. Hand-off latency is
//! a table column, not a chart: in the baseline it is a few link latencies
//! at every N and a chart of it says nothing.

use super::UsageError;
use reports::chart::{line_chart, LineChart, Series};
use sim::herd::HerdRow;
use std::collections::BTreeMap;
use std::path::Path;

pub(super) fn chart_err(e: reports::chart::ChartError) -> UsageError {
    UsageError(format!("cannot draw a chart: {e}"))
}

/// The charts `herd_charts` writes (each as `.svg` and `.png`).
pub const HERD_CHARTS: [&str; 2] = ["herd-notifications", "herd-requests"];

/// A recipe's style index (colour and marker, [`reports::chart::style`]),
/// fixed by the registry whatever the selection: the registry position for
/// a recipe at its default variant, and for a variant, the registry's
/// length plus its place among every registered variant. A recipe
/// the registry does not know gets a style after all of those, from its
/// name. `recipe` is as a herd row names it, `name (variant)`, or as the
/// CLI does, `name:variant`.
pub fn recipe_style(recipe: &str) -> usize {
    let (name, variant) = match recipe.split_once(':') {
        Some((n, v)) => (n, Some(v)),
        None => match recipe.split_once(" (") {
            Some((n, v)) => (n, Some(v.trim_end_matches(')'))),
            None => (recipe, None),
        },
    };
    let registry = models::recipes::REGISTRY;
    let mut variants = registry.len();
    for (i, r) in registry.iter().enumerate() {
        if r.name == name || r.aliases.contains(&name) {
            return match variant {
                None => i,
                Some(v) => match r.variants.iter().position(|x| x.name == v) {
                    Some(j) => variants + j,
                    None => i,
                },
            };
        }
        variants += r.variants.len();
    }
    // Not registered (a recipe of your own): a stable pick from its name.
    let h = recipe
        .bytes()
        .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
    variants + h % 16
}

/// What a `herd --scenario` row ran, without the recipe and client count
/// `herd` appends to the scenario's name; `None` for a baseline row.
fn scenario_of(r: &HerdRow) -> Option<String> {
    if r.scenario.starts_with("baseline-") {
        return None;
    }
    let name = r.recipe.split(' ').next().unwrap_or_default();
    let suffix = format!("-{name}-{}", r.clients);
    Some(
        r.scenario
            .strip_suffix(&suffix)
            .unwrap_or(&r.scenario)
            .to_string(),
    )
}

/// One line per recipe over the baseline rows, in registry order, and one
/// series of hollow markers per recipe and `--scenario` run, in the
/// recipe's colour and shape.
pub fn per_recipe(rows: &[HerdRow], y: impl Fn(&HerdRow) -> f64) -> Vec<Series> {
    let mut by: BTreeMap<(Option<String>, usize, String), Series> = BTreeMap::new();
    for r in rows {
        let scenario = scenario_of(r);
        let style = recipe_style(&r.recipe);
        // A poller's line says how often it asks: its cost follows.
        let recipe = match r.polling.as_ref().and_then(|p| p.delay_ms) {
            Some(ms) => format!("{}, polling every {ms} ms", r.recipe),
            None => r.recipe.clone(),
        };
        let name = match &scenario {
            None => recipe,
            Some(s) => format!("{recipe} — {s}"),
        };
        by.entry((scenario.clone(), style, r.recipe.clone()))
            .or_insert_with(|| Series {
                colour: Some(style),
                markers_only: scenario.is_some(),
                ..Series::line(name, Vec::new())
            })
            .points
            .push((r.clients as f64, y(r)));
    }
    by.into_values().collect()
}

/// What the herd charts' clients are doing, for the x axis.
const HERD_CLIENTS: &str = "clients (waiting for the lock, to lead, at the barrier, on the queue)";

/// The herd charts, in `HERD_CHARTS`' order. Each says one term for what it
/// divides by, in its title and on its y axis alike: a *release* (a
/// barrier's or a queue's waking change counts as one, as in the table's
/// column), an *acquisition*.
/// Notifications are charted for the recipes that watch (a poller is
/// notified of nothing); requests for every recipe, so that the pollers'
/// lines stand beside the watchers'.
pub fn herd_chart_specs(rows: &[HerdRow]) -> [LineChart; 2] {
    let watching: Vec<HerdRow> = rows
        .iter()
        .filter(|r| r.polling.is_none())
        .cloned()
        .collect();
    [
        LineChart {
            title: "Watch notifications per release (a barrier, a queue: per waking change)".into(),
            x_label: HERD_CLIENTS.into(),
            y_label: "notifications per release (mean)".into(),
            log_x: true,
            log_y: true,
            series: per_recipe(&watching, HerdRow::notifications_per_release_mean),
        },
        LineChart {
            title: "Store requests per acquisition: polling (Redis) against watching".into(),
            x_label: HERD_CLIENTS.into(),
            y_label: "requests per acquisition".into(),
            log_x: true,
            log_y: true,
            series: per_recipe(rows, |r| r.requests_per_acquisition("all")),
        },
    ]
}

/// The herd charts, each as SVG and PNG, in `dir`.
pub fn herd_charts(dir: &Path, rows: &[HerdRow]) -> Result<(), UsageError> {
    for (chart, base) in herd_chart_specs(rows).iter().zip(HERD_CHARTS) {
        line_chart(chart, &dir.join(base)).map_err(chart_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{herd_chart_specs, per_recipe, recipe_style};
    use sim::herd::HerdRow;

    /// The baseline herd rows of every swept recipe at `clients`.
    fn baseline(clients: &[u16]) -> Vec<HerdRow> {
        let mut rows = Vec::new();
        for recipe in sim::herd::swept_recipes() {
            for &n in clients {
                rows.push(sim::herd::row(&sim::herd::baseline(&recipe, n, 1), 1));
            }
        }
        rows
    }

    #[test]
    fn each_herd_chart_says_one_term_and_log_scale_on_its_axes() {
        let [notifications, requests] = herd_chart_specs(&baseline(&[2, 5]));
        for (chart, term) in [
            (&notifications, "per release"),
            (&requests, "per acquisition"),
        ] {
            assert!(chart.title.contains(term), "{}", chart.title);
            assert!(chart.y_label.contains(term), "{}", chart.y_label);
            for other in ["hand-off", "per release", "per acquisition"] {
                if other != term {
                    assert!(!chart.title.contains(other), "{}", chart.title);
                    assert!(!chart.y_label.contains(other), "{}", chart.y_label);
                }
            }
            assert!(chart.x_axis_label().ends_with("log scale"));
            assert!(chart.y_axis_label().ends_with("log scale"));
        }
    }

    #[test]
    fn the_pollers_are_charted_beside_the_watchers_by_requests_alone() {
        use sim::herd::{swept_recipes_waiting, Waiting};
        let [notifications, requests] = herd_chart_specs(&baseline(&[2, 5]));
        let watching = swept_recipes_waiting(Waiting::Watches).len()
            + swept_recipes_waiting(Waiting::BlockingQueries).len();
        let polling = swept_recipes_waiting(Waiting::Polls);
        assert!(!polling.is_empty());
        assert_eq!(notifications.series.len(), watching);
        assert_eq!(requests.series.len(), watching + polling.len());
        // Each poller's line names it and how often it polls.
        for r in polling {
            let named: Vec<&str> = requests
                .series
                .iter()
                .map(|s| s.name.as_str())
                .filter(|n| n.starts_with(&format!("{r}, polling every ")))
                .collect();
            assert_eq!(named.len(), 1, "{r}: {named:?}");
            assert!(named[0].ends_with("00 ms"), "{}", named[0]);
        }
        assert!(requests.title.contains("watching") && requests.title.contains("polling"));
    }

    #[test]
    fn every_herd_series_is_told_apart() {
        // Colour, marker and stroke differ for every swept recipe (the
        // chart draws coinciding ones side by side: reports' own tests).
        let rows = baseline(&[2, 5]);
        let series = per_recipe(&rows, |r| r.requests_per_acquisition("all"));
        assert_eq!(series.len(), sim::herd::swept_recipes().len());
        let looks: std::collections::HashSet<_> = series
            .iter()
            .map(|s| {
                let st = reports::chart::style(s.colour.expect("a recipe's own style"));
                (st.colour, st.shape, st.dash)
            })
            .collect();
        assert_eq!(looks.len(), series.len(), "no two series look alike");
        let strokes: std::collections::HashSet<_> = series
            .iter()
            .map(|s| reports::chart::style(s.colour.unwrap()).dash)
            .collect();
        assert!(
            strokes.len() >= 3,
            "lines differ by stroke too: {strokes:?}"
        );
    }

    #[test]
    fn a_recipe_keeps_its_style_whatever_is_selected() {
        // Registry order for the defaults: one style each.
        let defaults: Vec<usize> = models::recipes::REGISTRY
            .iter()
            .map(|r| recipe_style(r.name))
            .collect();
        assert_eq!(
            defaults,
            (0..models::recipes::REGISTRY.len()).collect::<Vec<_>>()
        );
        // Both spellings of a variant agree, and every variant has its own.
        assert_eq!(
            recipe_style("fair-predecessor (curator)"),
            recipe_style("fair-predecessor:curator")
        );
        let mut all: Vec<usize> = Vec::new();
        for r in models::recipes::REGISTRY {
            all.push(recipe_style(r.name));
            for v in r.variants {
                all.push(recipe_style(&format!("{}:{}", r.name, v.name)));
            }
        }
        let styles: std::collections::HashSet<_> = all
            .iter()
            .map(|&k| {
                let s = reports::chart::style(k);
                (s.colour, s.shape)
            })
            .collect();
        assert_eq!(styles.len(), all.len(), "no two recipes look alike");
    }
}
