//! `lockstep bench`: the model checker's speed and the symmetry reduction,
//! measured in one run so the figures compare.

use super::check::grouped;
use super::{BenchArgs, UsageError};
use models::checker::{check, CheckOptions, CheckResult};
use models::model::{FaultBudget, LockModelCfg, MAX_CLIENTS, MIN_CLIENTS};
use models::recipes::Recipe;
use serde::Serialize;
use std::process::ExitCode;

#[derive(Serialize)]
struct Row {
    recipe: &'static str,
    clients: u8,
    crashes: u8,
    states: u64,
    unique_states: u64,
    seconds: f64,
    states_per_second: f64,
    /// Unique states without symmetry reduction (when measured).
    unique_states_without_symmetry: Option<u64>,
    seconds_without_symmetry: Option<f64>,
    /// unique_states_without_symmetry / unique_states.
    symmetry_reduction: Option<f64>,
}

fn rate(r: &CheckResult) -> f64 {
    r.states as f64 / r.seconds.max(1e-9)
}

pub fn run(args: &BenchArgs) -> Result<ExitCode, UsageError> {
    let clients: Vec<u8> = args
        .clients
        .split(',')
        .map(|c| {
            c.trim()
                .parse::<u8>()
                .ok()
                .filter(|n| (MIN_CLIENTS..=MAX_CLIENTS).contains(n))
                .ok_or_else(|| {
                    UsageError(format!(
                        "--clients takes a comma-separated list of counts between {MIN_CLIENTS} and {MAX_CLIENTS}, got '{c}'"
                    ))
                })
        })
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    for &n in &clients {
        for recipe in Recipe::ALL {
            let cfg = LockModelCfg {
                faults: FaultBudget {
                    crashes: args.crashes,
                    ..FaultBudget::default()
                },
                ..LockModelCfg::new(recipe, n)
            };
            cfg.validate().map_err(UsageError)?;
            let model = cfg.into_model();
            let with = check(&model, CheckOptions::default());
            let without = (n <= args.compare_up_to).then(|| {
                check(
                    &model,
                    CheckOptions {
                        symmetry: false,
                        ..CheckOptions::default()
                    },
                )
            });
            if !args.json {
                eprintln!("measured {} with {n} clients", recipe.name());
            }
            rows.push(Row {
                recipe: recipe.name(),
                clients: n,
                crashes: args.crashes,
                states: with.states,
                unique_states: with.unique_states,
                seconds: with.seconds,
                states_per_second: rate(&with),
                unique_states_without_symmetry: without.as_ref().map(|w| w.unique_states),
                seconds_without_symmetry: without.as_ref().map(|w| w.seconds),
                symmetry_reduction: without
                    .as_ref()
                    .map(|w| w.unique_states as f64 / with.unique_states as f64),
            });
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("serialisable")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.recipe.to_string(),
                r.clients.to_string(),
                grouped(r.states),
                grouped(r.unique_states),
                format!("{:.2}", r.seconds),
                grouped(r.states_per_second as u64),
                r.unique_states_without_symmetry.map_or("-".into(), grouped),
                r.symmetry_reduction
                    .map_or("-".into(), |x| format!("{x:.2}x")),
            ]
        })
        .collect();
    print!(
        "{}",
        reports::table::render(
            &[
                "recipe",
                "clients",
                "states",
                "unique",
                "seconds",
                "states/s",
                "unique w/o symmetry",
                "reduction"
            ],
            &table
        )
    );
    Ok(ExitCode::SUCCESS)
}
