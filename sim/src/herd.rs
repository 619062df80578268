//! The herd-effect sweep: for each recipe and client count, the baseline
//! herd scenario — N clients request at once, each holds long enough for
//! every waiter to be registered, one round, no faults — and what each
//! release costs: notifications, store requests, hand-off latency.
//!
//! The baseline uses one fixed link latency so that the N requests of each
//! step arrive together, as "at once" means; its counts then have a closed
//! form (docs/herd.md, "The closed forms"), which the tests check.

use crate::engine::{simulate, Outcome, RunEnd, Summary};
use crate::scenario::Scenario;
use models::msg::RequestClass;
use models::properties::PropertyName;
use models::recipe::{App, RecipeRef, HERD_QUEUE_ITEMS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// The default client counts of a sweep.
pub const DEFAULT_CLIENTS: [u16; 12] = [2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000];

/// The baseline herd scenario for `recipe` with `clients` clients: every
/// client requests at once, one round. A queue's is its own: one producer
/// enqueues [`HERD_QUEUE_ITEMS`] items, each 50 ms after the last, by when
/// every one of the `clients - 1` consumers is idle again.
pub fn baseline(recipe: &RecipeRef, clients: u16, seed: u64) -> Scenario {
    // Sessions outlive the whole queue with few heartbeats: the herd, not the
    // pings, is what is measured.
    let (rounds, roles) = match recipe.app() {
        App::Lock | App::Election | App::Barrier => (1, String::new()),
        App::SharedLock => (
            1,
            format!(
                "writers = {}\n",
                models::recipe::herd_writers(clients.into())
            ),
        ),
        App::Queue => (HERD_QUEUE_ITEMS, "producers = 1\n".to_string()),
        // Two leases (one for two clients): most of the herd waits.
        App::Semaphore => (
            1,
            format!("permits = {}\n", clients.saturating_sub(1).clamp(1, 2)),
        ),
    };
    let produce = match recipe.app() {
        App::Lock | App::Election | App::Barrier | App::SharedLock | App::Semaphore => "",
        App::Queue => "produce_ms = [50, 50]\n",
    };
    // No resend comes in a run without faults; a Redis key's resend must
    // still be set before its TTL.
    let retry_ms = recipe
        .key_lease()
        .map_or(600_000, |l| (l.ttl.as_millis() / 2).max(1));
    let text = format!(
        "clients = {clients}\nrounds = {rounds}\n{roles}seed = \"{seed}\"\n\
         [timing]\nsession_timeout_ms = 600000\nthink_ms = [0, 0]\n{produce}hold_ms = [20, 20]\n\
         latency_ms = [1.0, 1.0]\nretry_ms = {retry_ms}\n"
    );
    Scenario::parse_with_recipe(
        &text,
        "baseline",
        &format!("baseline-{}-{clients}", recipe.id().replace(':', "-")),
        recipe.clone(),
    )
    .expect("the baseline scenario is valid")
}

/// One row of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct HerdRow {
    pub recipe: String,
    pub scenario: String,
    pub clients: u16,
    pub acquisitions: u64,
    pub releases: u64,
    pub notifications: u64,
    /// Per release (a lock, an election); for a barrier or a queue, which
    /// hand nothing off, per store change that woke anyone.
    pub notifications_per_release: Vec<u32>,
    /// Store requests per acquisition: `writes` (create, delete, txn,
    /// delete), `reads` (exists, get_children, get_data, range without a
    /// watch), `watches` (requests that register a watch), and each kind.
    pub store_requests: BTreeMap<String, f64>,
    pub handoff_us: Summary,
    pub events: u64,
    /// Violations of any property but `herd_bound` (which the sweep measures).
    pub violations: usize,
    /// Why the run stopped: a row whose run was cut off (stuck, or at the
    /// event cap) measured only part of the queue.
    pub end: RunEnd,
    pub wall_seconds: f64,
}

impl HerdRow {
    /// Mean notifications per release (per waking change for a barrier or
    /// a queue).
    pub fn notifications_per_release_mean(&self) -> f64 {
        let per = &self.notifications_per_release;
        per.iter().map(|&n| n as f64).sum::<f64>() / per.len().max(1) as f64
    }

    /// Store requests per acquisition of one class (`writes`, `reads`,
    /// `watches`) or kind, or of all three classes with `"all"`.
    pub fn requests_per_acquisition(&self, what: &str) -> f64 {
        match what {
            "all" => ["writes", "reads", "watches"]
                .iter()
                .map(|k| self.requests_per_acquisition(k))
                .sum(),
            k => self.store_requests.get(k).copied().unwrap_or(0.0),
        }
    }
}

/// Measures one run.
pub fn row(scenario: &Scenario, seed: u64) -> HerdRow {
    let started = Instant::now();
    let o: Outcome = simulate(scenario, seed, false);
    let wall = started.elapsed().as_secs_f64();
    let m = &o.metrics;
    let per = |n: u64| n as f64 / m.acquisitions.max(1) as f64;
    let mut requests: BTreeMap<String, f64> = BTreeMap::new();
    let mut classes: BTreeMap<RequestClass, u64> = BTreeMap::new();
    for (kind, n) in &m.store_requests {
        // Session set-up is not what a hand-off costs.
        if kind.class() != RequestClass::Session {
            *classes.entry(kind.class()).or_insert(0) += n;
            requests.insert(kind.name().to_string(), per(*n));
        }
    }
    for c in [
        RequestClass::Writes,
        RequestClass::Reads,
        RequestClass::Watches,
    ] {
        requests.insert(
            c.name().to_string(),
            per(classes.get(&c).copied().unwrap_or(0)),
        );
    }
    HerdRow {
        recipe: scenario.recipe.to_string(),
        scenario: scenario.name.clone(),
        clients: scenario.clients,
        acquisitions: m.acquisitions,
        releases: m.releases,
        notifications: m.notifications,
        notifications_per_release: match scenario.recipe.app() {
            App::Lock | App::Election | App::SharedLock | App::Semaphore => {
                m.notifications_per_release.clone()
            }
            App::Barrier | App::Queue => m.notifications_per_change.clone(),
        },
        store_requests: requests,
        handoff_us: m.handoff_us.clone(),
        events: m.events,
        // herd_bound is what the sweep measures, not a failure of the run.
        violations: o
            .violations
            .iter()
            .filter(|v| v.property != PropertyName::HerdBound)
            .count(),
        end: o.end,
        wall_seconds: wall,
    }
}

/// The shipped recipes the herd sweep measures: every one that watches,
/// at its default. The Redis recipes poll instead, and their rows (polls
/// per acquisition) are not part of the default sweep yet: `herd
/// --recipes` runs them.
pub fn swept_recipes() -> Vec<RecipeRef> {
    models::recipes::defaults()
        .into_iter()
        .filter(|r| r.face() != models::recipe::Face::Redis)
        .collect()
}

/// The closed-form notifications of the baseline: the k-th of N releases
/// (a lock, an election), or of the store changes that woke anyone, as
/// many as the recipe names (a barrier, a queue). `None` if the recipe
/// declares no closed form.
pub fn closed_form(recipe: &RecipeRef, n: u32) -> Option<Vec<u32>> {
    match recipe.app() {
        App::Lock | App::Election | App::SharedLock | App::Semaphore => {
            (1..=n).map(|k| recipe.herd_closed_form(n, k)).collect()
        }
        App::Barrier | App::Queue => {
            // Bounded: a recipe that names changes without end has no form.
            let most = 4 * n + 64;
            let changes: Vec<u32> = (1..=most + 1)
                .map_while(|k| recipe.herd_closed_form(n, k))
                .collect();
            (!changes.is_empty() && changes.len() <= most as usize).then_some(changes)
        }
    }
}
