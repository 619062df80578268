//! Fault-free runs with randomized timing: every recipe and variant, every
//! policy, timing drawn anywhere the scenario check accepts. Nothing may
//! break that the checker does not break without faults too (the herd
//! recipes' `herd_bound`, the documented recipe bugs), and no session may
//! be lost (`fault_free_session_loss`). The CI test runs a few seeds of
//! each; the soak (`#[ignore]`d) runs 20,000:
//!
//! LOCKSTEP_FAULT_FREE_SEEDS=20000 cargo test --release -p lockstep-sim --test fault_free -- --ignored --nocapture

use models::checker::{check, CheckOptions, Status};
use models::client::Policy;
use models::model::ModelCfg;
use models::properties::PropertyName;
use models::recipe::{App, Face, RecipeRef};
use sim::engine::simulate;
use sim::rng::{between, stream};
use sim::scenario::Scenario;
use std::collections::{BTreeMap, BTreeSet};

mod common;
use common::{clients_needed, every_recipe_and_variant};

const POLICIES: [Policy; 5] = [
    Policy::Naive,
    Policy::Oblivious,
    Policy::SuspendAware,
    Policy::LeaseAware,
    Policy::LeaseAwareFromSend,
];

/// A scenario of `recipe` with timing drawn from `seed` anywhere the
/// scenario check accepts, and its clients and rounds.
fn drawn(recipe: &RecipeRef, seed: u64) -> (Scenario, u8, u8) {
    let mut rng = stream(seed, "fault-free/timing");
    let mut draw = |lo: u64, hi: u64| between(&mut rng, lo, hi.max(lo));
    // A Consul session's TTL is at least 10 s (Consul's bound).
    let session = match recipe.face() {
        Face::Consul => draw(10_000, 30_000),
        Face::ZooKeeper | Face::Etcd | Face::Redis => draw(300, 6_000),
    };
    let latency_hi_tenths = draw(0, (session / 8).min(50) * 10);
    let latency_lo_tenths = draw(0, latency_hi_tenths);
    let one_way = latency_hi_tenths.div_ceil(10);
    let ping = draw((session / 10).max(1), session - 2 * one_way - 1);
    let retry = draw(2 * one_way + 1, 3_000);
    let mut policy = POLICIES[draw(0, POLICIES.len() as u64 - 1) as usize];
    // A deadline must pass a heartbeat's round and come before expiry:
    // where the ping leaves no room for one, the client keeps none; nor
    // does a Redis client, which has no session to time.
    if ping + 2 * one_way + 1 > session - one_way - 1
        || models::model::check_redis_policy(recipe, policy).is_err()
    {
        policy = Policy::Naive;
    }
    let deadline = match policy.keeps_a_deadline() {
        true => format!(
            "deadline_ms = {}\n",
            draw(ping + 2 * one_way + 1, session - one_way - 1)
        ),
        false => String::new(),
    };
    let think_lo = draw(0, 500);
    let think_hi = draw(think_lo, think_lo + 1_000);
    let hold_lo = draw(1, 1_000);
    let hold_hi = draw(hold_lo, hold_lo + 2_000);
    // Sizes the checker decides without faults in a second or so: two or
    // three clients, one round.
    let clients = (clients_needed(recipe) + draw(0, 1) as u8).min(recipe.checked_clients().min(3));
    let rounds = 1;
    let variant = recipe
        .variant()
        .map_or(String::new(), |v| format!("variant = \"{v}\"\n"));
    let producers = match recipe.app() {
        App::Queue => "producers = 1\n",
        _ => "",
    };
    let masters = common::masters_line(recipe);
    let text = format!(
        "recipe = \"{name}\"\n{variant}{producers}{masters}clients = {clients}\nrounds = {rounds}\n\
         policy = \"{policy}\"\n\
         [timing]\nsession_timeout_ms = {session}\nping_interval_ms = {ping}\nretry_ms = {retry}\n\
         {deadline}think_ms = [{think_lo}, {think_hi}]\nhold_ms = [{hold_lo}, {hold_hi}]\n\
         latency_ms = [{}, {}]\n",
        latency_lo_tenths as f64 / 10.0,
        latency_hi_tenths as f64 / 10.0,
        name = recipe.name(),
    );
    let scenario = Scenario::parse(&text, "fault_free", "fault-free")
        .unwrap_or_else(|e| panic!("seed {seed}: a draw the check refuses: {e:?}\n{text}"));
    (scenario, clients, rounds)
}

/// What the checker violates without faults, for a recipe at a size.
fn checked(recipe: &RecipeRef, clients: u8, rounds: u8) -> BTreeSet<PropertyName> {
    let cfg = ModelCfg {
        rounds,
        producers: match recipe.app() {
            App::Queue => 1,
            _ => models::model::default_producers(recipe, clients.into()) as u8,
        },
        ..ModelCfg::new(recipe.clone(), clients)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete, "{recipe}: the fault-free check is complete");
    r.properties
        .iter()
        .filter(|p| p.status == Status::Violated)
        .map(|p| p.name)
        .collect()
}

/// Runs `seeds` seeds of every recipe and variant; returns runs made.
fn sweep(seeds: u64) -> u64 {
    let mut verdicts: BTreeMap<(String, u8, u8), BTreeSet<PropertyName>> = BTreeMap::new();
    let mut runs = 0;
    let mut beyond = Vec::new();
    for recipe in every_recipe_and_variant() {
        for seed in 0..seeds {
            let (scenario, clients, rounds) = drawn(&recipe, seed);
            let o = simulate(&scenario, seed, false);
            runs += 1;
            let key = (recipe.to_string(), clients, rounds);
            for v in &o.violations {
                let allowed = verdicts
                    .entry(key.clone())
                    .or_insert_with(|| checked(&recipe, clients, rounds));
                if !allowed.contains(&v.property) {
                    beyond.push(format!(
                        "{recipe}, {clients} clients, {rounds} rounds, {} policy, seed {seed}: {}",
                        scenario.policy,
                        v.property.name()
                    ));
                }
            }
        }
    }
    assert!(
        beyond.is_empty(),
        "{} beyond the checker's:\n{}",
        beyond.len(),
        beyond.join("\n")
    );
    runs
}

#[test]
fn fault_free_runs_break_only_what_the_checker_breaks_without_faults() {
    let runs = sweep(200);
    assert!(runs >= 200 * 20, "{runs}");
}

#[test]
#[ignore = "the soak: 20,000 seeds of every recipe and variant"]
fn fault_free_soak() {
    let seeds = std::env::var("LOCKSTEP_FAULT_FREE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let started = std::time::Instant::now();
    let runs = sweep(seeds);
    println!(
        "fault-free soak: {runs} runs ({seeds} seeds of each recipe and variant), none beyond the checker's, {:.0} s",
        started.elapsed().as_secs_f64()
    );
}
