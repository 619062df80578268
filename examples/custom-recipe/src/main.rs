//! Runs lockstep on a recipe it does not ship (`unfair-getdata`, defined in
//! this crate's `lib.rs`), through the public API only:
//!
//! 1. a model check at 3 clients — without faults, with one crash and
//!    fencing, with one lost reply — beside the shipped `unfair-create`;
//! 2. simulations of 5 clients over a few seeds, healthy and crash-storm;
//! 3. a herd sweep at N = 2, 5, 10, 20 against the recipe's closed form.
//!
//! Exits non-zero if any result differs from what the recipe's design
//! predicts (listed with each section).

use custom_recipe::{herd_baseline, recipe, scenario, CRASH_STORM, HEALTHY, NAME, SHIPPED_TWIN};
use models::checker::{check, CheckOptions, CheckResult, Status};
use models::model::{FaultBudget, ModelCfg};
use models::properties::PropertyName;
use models::recipe::RecipeRef;
use models::trace::steps;
use sim::engine::simulate;
use std::collections::BTreeMap;
use std::process::ExitCode;

const CHECK_CLIENTS: u8 = 3;
const SIM_SEEDS: std::ops::RangeInclusive<u64> = 1..=5;
const HERD_CLIENTS: [u16; 4] = [2, 5, 10, 20];
const HERD_SEED: u64 = 1;

/// One model-checking configuration and what the design predicts for our
/// recipe. Properties left out are printed, not judged.
struct CheckCase {
    label: &'static str,
    faults: FaultBudget,
    fencing: bool,
    expect: &'static [(PropertyName, Status)],
    /// Shortest counterexamples to print: (our recipe's or the shipped
    /// one's, property).
    show: &'static [(Whose, PropertyName)],
}

#[derive(Clone, Copy)]
enum Whose {
    Ours,
    Shipped,
}

fn cases() -> [CheckCase; 3] {
    use PropertyName as P;
    use Status::{Holds, Violated};
    [
        CheckCase {
            label: "no faults",
            faults: FaultBudget::default(),
            fencing: false,
            // Safe and live; every waiter watches /lock, so a release wakes
            // them all (herd_bound allows one notification per release).
            expect: &[
                (P::MutualExclusion, Holds),
                (P::ResourceExclusion, Holds),
                (P::HolderOwnsKey, Holds),
                (P::HandOff, Holds),
                (P::Progress, Holds),
                (P::HerdBound, Violated),
            ],
            show: &[],
        },
        CheckCase {
            label: "1 crash, fencing",
            faults: FaultBudget {
                crashes: 1,
                ..FaultBudget::default()
            },
            fencing: true,
            // A crashed holder's ephemeral node goes with its session, and a
            // crashed client is no longer a live holder.
            expect: &[
                (P::MutualExclusion, Holds),
                (P::ResourceExclusion, Holds),
                (P::Progress, Holds),
            ],
            show: &[],
        },
        CheckCase {
            label: "1 lost reply",
            faults: FaultBudget {
                lost_replies: 1,
                ..FaultBudget::default()
            },
            fencing: false,
            // The owner check recovers a lost create reply (unfair-create
            // waits on its own node for ever). What no recipe step can fix:
            // the client resends a release whose reply was lost, and an
            // unconditional delete(/lock) then removes the next holder's node.
            expect: &[(P::Progress, Holds), (P::MutualExclusion, Violated)],
            show: &[
                (Whose::Shipped, P::Progress),
                (Whose::Ours, P::MutualExclusion),
            ],
        },
    ]
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Holds => "holds",
        Status::Violated => "VIOLATED",
        Status::Unknown => "unknown (state limit)",
    }
}

fn config(recipe: &RecipeRef, case: &CheckCase) -> ModelCfg {
    let mut cfg = ModelCfg::new(recipe.clone(), CHECK_CLIENTS);
    cfg.faults = case.faults;
    cfg.fencing = case.fencing;
    cfg
}

fn run_check(recipe: &RecipeRef, case: &CheckCase) -> Result<CheckResult, String> {
    let cfg = config(recipe, case);
    let model = cfg.into_model().map_err(|e| e.to_string())?;
    check(&model, CheckOptions::default()).map_err(|e| e.to_string())
}

/// Prints the shortest counterexample the checker found for `property`,
/// replayed step by step with who believes it holds after each.
fn print_counterexample(
    recipe: &RecipeRef,
    case: &CheckCase,
    result: &CheckResult,
    property: PropertyName,
) {
    let Some(verdict) = result.property(property) else {
        return;
    };
    let (Some(path), Status::Violated) = (&verdict.path, verdict.status) else {
        return;
    };
    println!("\n   {recipe}: {property} violated, shortest counterexample:");
    for step in steps(&config(recipe, case).into_model().unwrap(), path) {
        println!("   {step}");
    }
}

fn check_section(ours: &RecipeRef, failures: &mut Vec<String>) {
    let shipped = models::recipes::parse(SHIPPED_TWIN).expect("a registered recipe");
    println!(
        "== 1. model check, {CHECK_CLIENTS} clients, 1 round ({NAME} beside the shipped {shipped})"
    );
    for case in cases() {
        let (mine, theirs) = match (run_check(ours, &case), run_check(&shipped, &case)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                failures.push(format!("check ({}): {e}", case.label));
                continue;
            }
        };
        println!(
            "\n-- {}: {} unique states ({} explored), depth {}, {:.2} s{}",
            case.label,
            mine.unique_states,
            mine.states,
            mine.max_depth,
            mine.seconds,
            if mine.complete { "" } else { ", INCOMPLETE" }
        );
        println!(
            "   {:<24} {:<20} {:<20}",
            "property",
            NAME,
            shipped.to_string()
        );
        for p in &mine.properties {
            println!(
                "   {:<24} {:<20} {:<20}",
                p.name.name(),
                status(p.status),
                theirs
                    .property(p.name)
                    .map_or("not judged", |q| status(q.status))
            );
        }
        for &(whose, property) in case.show {
            match whose {
                Whose::Ours => print_counterexample(ours, &case, &mine, property),
                Whose::Shipped => print_counterexample(&shipped, &case, &theirs, property),
            }
        }
        if !mine.complete {
            failures.push(format!(
                "check ({}): stopped at the state limit",
                case.label
            ));
        }
        for &(name, want) in case.expect {
            let got = mine.property(name).map(|p| p.status);
            if got != Some(want) {
                failures.push(format!(
                    "check ({}): {name} {}, expected {}",
                    case.label,
                    got.map_or("not judged", status),
                    status(want)
                ));
            }
        }
    }
}

/// The properties a run violated, each with the virtual time (µs) of its
/// first violation.
fn first_violations(violations: &[sim::engine::Violation]) -> BTreeMap<PropertyName, u64> {
    let mut by: BTreeMap<PropertyName, u64> = BTreeMap::new();
    for v in violations {
        by.entry(v.property).or_insert(v.at_us);
    }
    by
}

fn simulate_section(failures: &mut Vec<String>) {
    println!("\n== 2. simulation (virtual time), seeds {SIM_SEEDS:?}");
    println!("   expected: no violation but herd_bound (every release wakes every waiter); the lock passes hands");
    for (name, body) in [("healthy", HEALTHY), ("crash-storm", CRASH_STORM)] {
        let sc = match scenario(body, name) {
            Ok(sc) => sc,
            Err(e) => {
                failures.push(format!("scenario {name}: {e}"));
                continue;
            }
        };
        println!(
            "\n-- {name}: {} clients, {} rounds, fencing {}",
            sc.clients,
            sc.rounds,
            if sc.fencing { "on" } else { "off" }
        );
        println!(
            "   {:>4} {:>5} {:>5} {:>7} {:>9} {:>16} {:>7}  violations",
            "seed", "acq", "rel", "notif", "max/rel", "hand-off p50/p99", "crashes"
        );
        for seed in SIM_SEEDS {
            let o = simulate(&sc, seed, false);
            let m = &o.metrics;
            let by = first_violations(&o.violations);
            let listed: Vec<String> = by
                .iter()
                .map(|(p, at)| format!("{p} (at {:.1} ms)", *at as f64 / 1000.0))
                .collect();
            println!(
                "   {seed:>4} {:>5} {:>5} {:>7} {:>9} {:>16} {:>7}  {}",
                m.acquisitions,
                m.releases,
                m.notifications,
                m.notifications_per_release
                    .iter()
                    .max()
                    .copied()
                    .unwrap_or(0),
                format!("{}/{} µs", m.handoff_us.p50, m.handoff_us.p99),
                o.faults_fired().get("crash").copied().unwrap_or(0),
                if listed.is_empty() {
                    "none".to_string()
                } else {
                    listed.join(", ")
                }
            );
            for p in by.keys().filter(|p| **p != PropertyName::HerdBound) {
                failures.push(format!("simulation {name}, seed {seed}: {p} violated"));
            }
            if !o.hand_off {
                failures.push(format!(
                    "simulation {name}, seed {seed}: the lock never changed hands"
                ));
            }
            let rounds = sc.clients as u64 * sc.rounds as u64;
            if name == "healthy" && m.acquisitions != rounds {
                failures.push(format!(
                    "simulation {name}, seed {seed}: {} acquisitions, expected {rounds}",
                    m.acquisitions
                ));
            }
        }
    }
}

fn herd_section(ours: &RecipeRef, failures: &mut Vec<String>) {
    println!("\n== 3. herd sweep (baseline: everyone requests at once, one round, no faults), seed {HERD_SEED}");
    println!("   closed form: the k-th of N releases wakes N - k waiters");
    println!(
        "   {:>4} {:>8} {:>7} {:>10} {:>12} {:>6} {:>6} {:>7}  per release",
        "N", "releases", "notif", "per rel.", "closed form", "match", "reads", "watches"
    );
    for n in HERD_CLIENTS {
        let row = sim::herd::row(&herd_baseline(n, HERD_SEED), HERD_SEED);
        let closed = sim::herd::closed_form(ours, n as u32);
        let closed_total: Option<u32> = closed.as_ref().map(|c| c.iter().sum());
        let matches = closed.as_ref() == Some(&row.notifications_per_release);
        println!(
            "   {n:>4} {:>8} {:>7} {:>10.2} {:>12} {:>6} {:>6.2} {:>7.2}  {:?}",
            row.releases,
            row.notifications,
            row.notifications_per_release_mean(),
            closed_total.map_or("none".to_string(), |t| t.to_string()),
            if matches { "yes" } else { "NO" },
            row.requests_per_acquisition("reads"),
            row.requests_per_acquisition("watches"),
            row.notifications_per_release
        );
        if !matches {
            failures.push(format!(
                "herd N={n}: measured {:?}, closed form {closed:?}",
                row.notifications_per_release
            ));
        }
        if row.violations > 0 {
            failures.push(format!(
                "herd N={n}: {} violations besides herd_bound",
                row.violations
            ));
        }
    }
}

fn main() -> ExitCode {
    let ours = recipe();
    println!("lockstep on a recipe defined outside it: {NAME} (see src/lib.rs)\n");
    let mut failures = Vec::new();
    check_section(&ours, &mut failures);
    simulate_section(&mut failures);
    herd_section(&ours, &mut failures);
    if failures.is_empty() {
        println!("\nevery result is the one the recipe's design predicts");
        ExitCode::SUCCESS
    } else {
        eprintln!("\nunexpected results:");
        for f in &failures {
            eprintln!("  - {f}");
        }
        ExitCode::FAILURE
    }
}
