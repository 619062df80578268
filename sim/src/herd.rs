//! The herd-effect sweep: for each recipe and client count, the baseline
//! herd scenario — N clients request at once, each holds long enough for
//! every waiter to be registered, one round, no faults — and what each
//! release costs: notifications, store requests, hand-off latency.
//!
//! The baseline uses one fixed link latency so that the N requests of each
//! step arrive together, as "at once" means; its counts then have a closed
//! form (docs/herd.md, "The closed forms"), which the tests check.
//!
//! A recipe that polls (Redis has no watches) is woken by nobody: its rows
//! measure its polls and store requests per acquisition instead, against
//! the recipe's own retry delay, and stop at [`POLLING_MAX_CLIENTS`] in the
//! default sweep.

use crate::engine::{simulate, Outcome, RunEnd, Summary};
use crate::scenario::Scenario;
use models::client::WRITES_PER_HOLD;
use models::msg::RequestClass;
use models::properties::PropertyName;
use models::recipe::{App, Face, RecipeRef, HERD_QUEUE_ITEMS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// The default client counts of a sweep.
pub const DEFAULT_CLIENTS: [u16; 12] = [2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000];

/// The largest client count the default sweep runs a polling recipe at. A
/// poller's baseline sends about N²/2 tries (Redlock ten requests a try):
/// at 1,000 clients `redlock` is 5 million requests, a few seconds; at
/// 10,000 it would be a hundred times that, longer than the rest of the
/// sweep together. `herd --clients` runs any count.
pub const POLLING_MAX_CLIENTS: u16 = 1000;

/// How a recipe's waiters learn that the lock is free, which says what
/// its herd rows measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiting {
    /// The store notifies them (ZooKeeper's and etcd's watches): the rows
    /// count notifications per release.
    Watches,
    /// They sleep and try again (Redis has no watches): the rows count
    /// polls and store requests per acquisition.
    Polls,
    /// Each holds a blocking query on the key (Consul's only watch): the
    /// rows count notifications per release, as for watches; every
    /// waiter an answer wakes asks again (three requests), so the default
    /// sweep stops them where it stops pollers, at
    /// [`POLLING_MAX_CLIENTS`].
    BlockingQueries,
}

impl Waiting {
    pub fn of(recipe: &RecipeRef) -> Waiting {
        match recipe.face() {
            Face::ZooKeeper | Face::Etcd => Waiting::Watches,
            Face::Redis => Waiting::Polls,
            Face::Consul => Waiting::BlockingQueries,
        }
    }

    /// Whether the store wakes the waiters (a watch, a blocking query):
    /// the rows count notifications per release.
    pub fn is_notified(self) -> bool {
        match self {
            Waiting::Watches | Waiting::BlockingQueries => true,
            Waiting::Polls => false,
        }
    }
}

/// Of `clients`, the counts the default sweep runs a recipe that waits
/// so at: a poller's, and a blocking query's, stop at
/// [`POLLING_MAX_CLIENTS`] (a baseline of N clients costs about N²/2
/// requests either way: at 10,000 clients minutes a row).
pub fn default_counts(waiting: Waiting, clients: &[u16]) -> Vec<u16> {
    clients
        .iter()
        .copied()
        .filter(|&n| match waiting {
            Waiting::Watches => true,
            Waiting::Polls | Waiting::BlockingQueries => n <= POLLING_MAX_CLIENTS,
        })
        .collect()
}

/// The baseline herd scenario for `recipe` with `clients` clients: every
/// client requests at once, one round. A queue's is its own: one producer
/// enqueues [`HERD_QUEUE_ITEMS`] items, each 50 ms after the last, by when
/// every one of the `clients - 1` consumers is idle again.
pub fn baseline(recipe: &RecipeRef, clients: u16, seed: u64) -> Scenario {
    baseline_over(recipe, clients, seed, 1)
}

/// [`baseline`] over `servers` servers (a ZooKeeper ensemble or an etcd
/// cluster from 3 on: client i on server (i + 1) mod `servers`).
pub fn baseline_over(recipe: &RecipeRef, clients: u16, seed: u64, servers: u8) -> Scenario {
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
    let servers = match servers {
        1 => String::new(),
        n => format!("servers = {n}\n"),
    };
    let text = format!(
        "clients = {clients}\nrounds = {rounds}\n{roles}{servers}seed = \"{seed}\"\n\
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
    /// A poller's row: what its waiters' polls cost (none for a recipe
    /// that watches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub polling: Option<PollingRow>,
    pub events: u64,
    /// Violations of any property but `herd_bound` (which the sweep measures).
    pub violations: usize,
    /// Why the run stopped: a row whose run was cut off (stuck, or at the
    /// event cap) measured only part of the queue.
    pub end: RunEnd,
    pub wall_seconds: f64,
}

/// A poller's measures beside the row's store requests.
#[derive(Clone, Debug, Serialize)]
pub struct PollingRow {
    /// The recipe's own retry delay (`Recipe::poll_cost`), if it declares it.
    pub delay_ms: Option<f64>,
    /// Tries after a failed one (the sleeps that ran out), per acquisition.
    pub polls_per_acquisition: f64,
    /// What [`polling_closed_form`] says of this run, where it says.
    pub closed_form: Option<PollingForm>,
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
        polling: match Waiting::of(&scenario.recipe) {
            Waiting::Watches | Waiting::BlockingQueries => None,
            Waiting::Polls => Some(PollingRow {
                delay_ms: scenario
                    .recipe
                    .poll_cost()
                    .map(|c| c.delay.as_secs_f64() * 1000.0),
                polls_per_acquisition: per(m.wakes),
                closed_form: polling_closed_form(scenario),
            }),
        },
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

/// The shipped recipes the herd sweep measures: every one at its
/// default, those that watch and those that poll.
pub fn swept_recipes() -> Vec<RecipeRef> {
    models::recipes::defaults()
}

/// The swept recipes whose waiters wait so: `lockstep bench` times the
/// watchers' sweep alone, as it did before the pollers joined.
pub fn swept_recipes_waiting(waiting: Waiting) -> Vec<RecipeRef> {
    swept_recipes()
        .into_iter()
        .filter(|r| Waiting::of(r) == waiting)
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

/// A poller's closed form in a run like the baseline (docs/herd.md, "The
/// closed forms"). With one fixed latency L, no faults and every client
/// starting at once, the waiters take the same steps at the same instants:
/// they try together, in *waves* one failed try's round trips and the
/// retry delay R apart. A holder's release reaches the key the round trips
/// of its winning try, its writes and its hold H after its wave began; the
/// first wave after that takes the lock. So every waiter tries `m` times
/// per hold, and with N clients acquiring once each, the failed tries come
/// to m·N(N−1)/2: m(N−1)/2 polls per acquisition, and as many failed
/// tries' requests beside a winning try's and its release's.
///
/// `None` where the run is not like that (several rounds, faults, a time
/// drawn from a range, renewals during the hold), where the recipe
/// declares no [`models::recipe::PollCost`], or where a wave meets the
/// release at the very instant it arrives: the store's order of two
/// arrivals at one instant decides, which no form says.
pub fn polling_closed_form(s: &Scenario) -> Option<PollingForm> {
    let cost = s.recipe.poll_cost()?;
    let like_baseline = s.recipe.app() == App::Lock
        && s.rounds == 1
        && s.reentries == 0
        && s.profile.is_empty()
        && s.schedule.is_empty();
    // Times drawn from a range put the waiters out of step.
    let fixed = |(lo, hi): (u64, u64)| (lo == hi).then_some(lo);
    let (Some(latency), Some(hold), Some(_), true) = (
        fixed(s.timing.latency_us),
        fixed(s.timing.hold_us),
        fixed(s.timing.think_us),
        like_baseline,
    ) else {
        return None;
    };
    let writes = u64::from(WRITES_PER_HOLD);
    // A writer's hold: a round trip to the resource per write, the hold
    // time between two writes.
    let holding = 2 * latency * writes + hold * (writes - 1);
    let renews_while_holding = s
        .recipe
        .key_lease()
        .and_then(|l| l.renew_every)
        .is_some_and(|every| every.as_micros() as u64 <= holding);
    if renews_while_holding {
        return None;
    }
    // From a wave's start: the winner's release reaches the key at `busy`
    // plus one latency; the next wave's first try at `period` plus one.
    let busy = 2 * latency * u64::from(cost.to_hold) + holding;
    let period = 2 * latency * u64::from(cost.failed_try) + cost.delay.as_micros() as u64;
    if busy % period == 0 {
        return None;
    }
    let tries_per_hold = busy / period + 1;
    let polls = tries_per_hold as f64 * (f64::from(s.clients) - 1.0) / 2.0;
    Some(PollingForm {
        tries_per_hold,
        polls_per_acquisition: polls,
        requests_per_acquisition: f64::from(cost.to_hold + cost.release)
            + f64::from(cost.failed_try) * polls,
    })
}

/// [`polling_closed_form`]'s figures for one run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PollingForm {
    /// Tries each waiter makes while one holder holds (`m`).
    pub tries_per_hold: u64,
    /// m(N−1)/2.
    pub polls_per_acquisition: f64,
    /// A winning try's requests and its release's, and m(N−1)/2 failed
    /// tries' requests.
    pub requests_per_acquisition: f64,
}
