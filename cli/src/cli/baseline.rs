//! `lockstep bench --save-baseline NAME` / `--baseline NAME`: a bench run's
//! figures kept under `target/lockstep-bench/NAME.json` (as criterion keeps
//! its baselines under `target/criterion/`) and compared, figure by
//! figure, with a later run.

use super::UsageError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn path_of(name: &str) -> Result<PathBuf, UsageError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !ok {
        return Err(UsageError(format!(
            "baseline name '{name}': use letters, digits, '-', '_' and '.' only"
        )));
    }
    Ok(PathBuf::from("target/lockstep-bench").join(format!("{name}.json")))
}

pub fn save(name: &str, report: &Value) -> Result<PathBuf, UsageError> {
    let path = path_of(name)?;
    let dir = path.parent().expect("a baseline path has a directory");
    std::fs::create_dir_all(dir)
        .map_err(|e| UsageError(format!("cannot create {}: {e}", dir.display())))?;
    let text = serde_json::to_string_pretty(report).expect("serialisable");
    std::fs::write(&path, text + "\n")
        .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

pub fn load(name: &str) -> Result<Value, UsageError> {
    let path = path_of(name)?;
    let text = std::fs::read_to_string(&path).map_err(|e| {
        UsageError(format!(
            "baseline '{name}': cannot read {} ({e}); save one with --save-baseline {name}",
            path.display()
        ))
    })?;
    let report: Value = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("baseline '{name}': {}: {e}", path.display())))?;
    if let Some(bad) = first_bad_figure("", &report) {
        return Err(UsageError(format!(
            "baseline '{name}': {}: {bad}; save it anew with --save-baseline {name}",
            path.display()
        )));
    }
    if figures(&report).is_empty() {
        return Err(UsageError(format!(
            "baseline '{name}': {} holds no bench figures; save one with --save-baseline {name}",
            path.display()
        )));
    }
    Ok(report)
}

/// What makes a saved report unfit to compare with (a hand-edited one):
/// a negative figure (every figure is a count, a time, a rate or a ratio
/// of them) or a figure written as text, which would otherwise be left
/// out of the comparison without a word. `None` when every figure is fit.
fn first_bad_figure(at: &str, v: &Value) -> Option<String> {
    let here = |k: &str| joined(at, k);
    match v {
        Value::Number(n) if n.as_f64().is_some_and(|x| x < 0.0) => {
            Some(format!("`{at}` is {n}, and no figure is negative"))
        }
        Value::String(text) if text.trim().parse::<f64>().is_ok() => Some(format!(
            "`{at}` is the text \"{text}\", where a figure is a number"
        )),
        Value::Object(map) => map.iter().find_map(|(k, v)| first_bad_figure(&here(k), v)),
        Value::Array(rows) => rows
            .iter()
            .enumerate()
            .find_map(|(i, v)| first_bad_figure(&here(&i.to_string()), v)),
        Value::Number(_) | Value::String(_) | Value::Null | Value::Bool(_) => None,
    }
}

/// Checks a name for `--save-baseline` before the run it would keep.
pub fn check_name(name: &str) -> Result<(), UsageError> {
    path_of(name).map(|_| ())
}

/// Every number of a report, by a name that says what it is: objects by
/// key, the checker's rows by recipe and clients.
fn figures(report: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    flatten("", report, &mut out);
    out
}

/// Figures a report holds but a baseline does not compare: the throughput
/// comparison's rounds one by one, and its lowest and highest round, are
/// the noise its median round (compared) is there to leave out.
const NOT_COMPARED: [&str; 3] = [
    "per_state.rounds",
    "per_state.lockstep_over_spin.safety_only_rate_lowest",
    "per_state.lockstep_over_spin.safety_only_rate_highest",
];

/// A figure's name below `prefix`: `prefix.key`, or `key` at the top.
fn joined(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, f64>) {
    let join = |k: &str| joined(prefix, k);
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.insert(prefix.to_string(), x);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let name = join(k);
                if !NOT_COMPARED.contains(&name.as_str()) {
                    flatten(&name, v, out);
                }
            }
        }
        Value::Array(rows) => {
            for (i, row) in rows.iter().enumerate() {
                let label = match (row.get("recipe"), row.get("clients")) {
                    (Some(Value::String(r)), Some(c)) => format!("{r}×{c}"),
                    _ => i.to_string(),
                };
                flatten(&join(&label), row, out);
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// One figure in both runs.
pub struct Change {
    pub figure: String,
    pub before: f64,
    pub now: f64,
}

/// The figures both runs have, in name order.
pub fn compare(old: &Value, new: &Value) -> Vec<Change> {
    let (old, new) = (figures(old), figures(new));
    // A row's configuration is in its name already; the machine's threads
    // are a setting too.
    let setting =
        |f: &str| f.ends_with(".clients") || f.ends_with(".crashes") || f.ends_with("_threads");
    new.iter()
        .filter(|(figure, _)| !setting(figure))
        .filter_map(|(figure, &now)| {
            old.get(figure).map(|&before| Change {
                figure: figure.clone(),
                before,
                now,
            })
        })
        .collect()
}

pub fn render(changes: &[Change]) -> String {
    let rows: Vec<Vec<String>> = changes
        .iter()
        .map(|c| {
            let change = if c.before == 0.0 {
                if c.now == 0.0 { "=" } else { "new" }.to_string()
            } else {
                format!("{:+.1}%", (c.now - c.before) / c.before.abs() * 100.0)
            };
            vec![c.figure.clone(), show(c.before), show(c.now), change]
        })
        .collect();
    reports::table::render(&["figure", "baseline", "now", "change"], &rows)
}

fn show(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_named_and_compared() {
        let old = serde_json::json!({
            "simulator": {"events_per_second": 100.0},
            "checker": [{"recipe": "fair-predecessor", "clients": 3, "seconds": 2.0}],
        });
        let new = serde_json::json!({
            "simulator": {"events_per_second": 150.0},
            "checker": [{"recipe": "fair-predecessor", "clients": 3, "seconds": 1.0}],
        });
        let c = compare(&old, &new);
        let names: Vec<&str> = c.iter().map(|c| c.figure.as_str()).collect();
        assert_eq!(
            names,
            [
                "checker.fair-predecessor×3.seconds",
                "simulator.events_per_second"
            ]
        );
        let t = render(&c);
        assert!(t.contains("+50.0%"), "{t}");
        assert!(t.contains("-50.0%"), "{t}");
        assert!(path_of("../x").is_err());
        assert!(path_of("main-2026").is_ok());
    }

    #[test]
    fn hand_edited_figures_are_refused() {
        let fit = serde_json::json!({"simulator": {"events_per_second": 100.0,
            "note": "spin not installed", "ratio": null}, "rows": [{"recipe": "x", "s": 1}]});
        assert_eq!(first_bad_figure("", &fit), None);
        let negative = serde_json::json!({"simulator": {"events_per_second": -1.5}});
        let why = first_bad_figure("", &negative).unwrap();
        assert!(
            why.contains("`simulator.events_per_second` is -1.5"),
            "{why}"
        );
        let text = serde_json::json!({"rows": [{"recipe": "x", "seconds": "2.0"}]});
        let why = first_bad_figure("", &text).unwrap();
        assert!(
            why.contains("`rows.0.seconds` is the text \"2.0\""),
            "{why}"
        );
    }

    #[test]
    fn per_state_figures_are_compared() {
        let row = |rate: f64, bytes: f64| {
            serde_json::json!({"clients": 4, "crashes": 1,
                "unique_states_per_second": rate, "bytes_per_state": bytes})
        };
        let old = serde_json::json!({"per_state": {
            "lockstep_safety_only": row(100.0, 50.0),
            "lockstep_full_check": row(90.0, 80.0),
            "lockstep_threads": 2,
            "spin_twin": row(800.0, 150.0),
            "rounds": [{"lockstep_safety_only": row(100.0, 50.0), "safety_only_rate": 0.9}],
            "lockstep_over_spin": {"safety_only_rate": 0.5,
                "safety_only_rate_lowest": 0.4, "safety_only_rate_highest": 0.6},
        }});
        let new = serde_json::json!({"per_state": {
            "lockstep_safety_only": row(200.0, 50.0),
            "lockstep_full_check": row(90.0, 40.0),
            "lockstep_threads": 8,
            "spin_twin": null,
            "spin_skipped": "`spin` is not installed",
            // Each round's figures are not compared, only the median's.
            "rounds": [{"lockstep_safety_only": row(200.0, 50.0), "safety_only_rate": 1.1}],
            "lockstep_over_spin": {"safety_only_rate": 0.5,
                "safety_only_rate_lowest": 0.3, "safety_only_rate_highest": 0.6},
        }});
        let c = compare(&old, &new);
        let names: Vec<&str> = c.iter().map(|c| c.figure.as_str()).collect();
        assert_eq!(
            names,
            [
                "per_state.lockstep_full_check.bytes_per_state",
                "per_state.lockstep_full_check.unique_states_per_second",
                "per_state.lockstep_over_spin.safety_only_rate",
                "per_state.lockstep_safety_only.bytes_per_state",
                "per_state.lockstep_safety_only.unique_states_per_second",
            ]
        );
        let both = compare(&old, &old);
        assert!(both
            .iter()
            .any(|c| c.figure == "per_state.spin_twin.unique_states_per_second"));
        let t = render(&c);
        assert!(t.contains("+100.0%"), "{t}");
        assert!(t.contains("-50.0%"), "{t}");
    }
}
