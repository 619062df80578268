//! The second example recipe, which keeps time (a polling lock with
//! exponential back-off), through the public API: the model checker, the
//! simulator and the herd sweep, and an acquisition with a timeout.

use custom_recipe::backoff::{recipe, sleep_after, PollingBackoff, State, MAX_DOUBLINGS, NAME};
use models::checker::{check, CheckOptions, CheckResult, Status};
use models::ids::SessionId;
use models::model::{FaultBudget, ModelCfg};
use models::msg::Timer;
use models::msg::{Reply, Request, WatchEvent};
use models::properties::PropertyName;
use models::recipe::{Application, Face, LockRecipe, Recipe, RecipeRef, Setup, Step};
use sim::engine::simulate;
use sim::scenario::Scenario;

fn check_3(faults: FaultBudget, acquire_timeout: bool) -> CheckResult {
    let cfg = ModelCfg {
        faults,
        acquire_timeout,
        ..ModelCfg::new(recipe(), 3)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete, "the check stopped at its state limit");
    r
}

fn status(r: &CheckResult, p: PropertyName) -> Status {
    r.property(p).expect("judged by a lock's check").status
}

fn scenario(body: &str) -> Scenario {
    Scenario::parse_with_recipe(body, "backoff (built in)", NAME, recipe()).unwrap()
}

const HEALTHY: &str = "\
clients = 4
rounds = 2
[timing]
session_timeout_ms = 4000
think_ms = [5, 50]
hold_ms = [10, 40]
latency_ms = [0.2, 2.0]
";

/// Safe, live, and herd-free: a release notifies nobody, since nobody
/// watches. The state count pins what the sleeps add to the model (each
/// waiter's doubling count is state).
#[test]
fn safe_live_and_without_a_herd() {
    let r = check_3(FaultBudget::default(), false);
    for p in [
        PropertyName::MutualExclusion,
        PropertyName::ResourceExclusion,
        PropertyName::HolderOwnsKey,
        PropertyName::HerdBound,
        PropertyName::HandOff,
        PropertyName::Progress,
    ] {
        assert_eq!(status(&r, p), Status::Holds, "{p}");
    }
    assert_eq!(r.unique_states, 11_911);
}

/// A crash and a lost reply are survived: the crashed holder's node goes
/// with its session, and a lost create reply is found by its guid.
#[test]
fn a_crash_and_a_lost_create_reply_are_survived() {
    for faults in [
        FaultBudget {
            crashes: 1,
            ..FaultBudget::default()
        },
        FaultBudget {
            lost_replies: 1,
            ..FaultBudget::default()
        },
    ] {
        let r = check_3(faults, false);
        assert_eq!(
            status(&r, PropertyName::MutualExclusion),
            Status::Holds,
            "{faults:?}"
        );
        assert_eq!(
            status(&r, PropertyName::Progress),
            Status::Holds,
            "{faults:?}"
        );
    }
}

/// With an acquire timeout a waiter may give up at any moment it sleeps:
/// it deletes its node, so nobody is left behind it, and it finishes
/// without holding.
#[test]
fn an_acquisition_given_up_leaves_no_one_waiting() {
    let plain = check_3(FaultBudget::default(), false);
    let r = check_3(FaultBudget::default(), true);
    assert_eq!(status(&r, PropertyName::MutualExclusion), Status::Holds);
    assert_eq!(status(&r, PropertyName::Progress), Status::Holds);
    assert_eq!((plain.unique_states, r.unique_states), (11_911, 70_010));
}

/// The same recipe with a broken clean-up: a waiter that gives up leaves
/// its node behind (its session lives on), and whoever polls behind it
/// can only give up in turn. The simulator shows the lock starving: fewer
/// acquisitions than the recipe that deletes its node. The checker's
/// `progress` cannot: giving up counts as finishing, and every waiter may
/// give up at any moment, so a state where everyone finished stays
/// reachable (ARCHITECTURE.md says so).
#[test]
fn giving_up_without_deleting_the_node_starves_the_lock() {
    #[derive(Debug)]
    struct Forgetful;
    impl Recipe for Forgetful {
        type State = State;
        fn name(&self) -> &'static str {
            "forgetful-backoff"
        }
        fn face(&self) -> Face {
            PollingBackoff.face()
        }
        fn setup(&self) -> Setup {
            PollingBackoff.setup()
        }
        fn acquire(&self, s: SessionId) -> (State, Request) {
            PollingBackoff.acquire(s)
        }
        fn on_reply(&self, s: SessionId, st: &mut State, r: &Reply) -> Step {
            PollingBackoff.on_reply(s, st, r)
        }
        fn on_event(&self, st: &mut State, e: &WatchEvent) -> Step {
            PollingBackoff.on_event(st, e)
        }
        fn on_wake(&self, s: SessionId, st: &mut State) -> Step {
            PollingBackoff.on_wake(s, st)
        }
        fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
            PollingBackoff.on_lost_reply(st, lost)
        }
        fn application(&self) -> Application<'_, State> {
            Application::Lock(self)
        }
        fn release(&self, s: SessionId, st: &State) -> Option<Request> {
            PollingBackoff.release(s, st)
        }
    }
    impl LockRecipe<State> for Forgetful {
        fn withdraws(&self) -> bool {
            true
        }
        // The bug: nothing taken out of line.
        fn withdraw(&self, _: SessionId, _: &State) -> Option<Request> {
            None
        }
    }
    let cfg = ModelCfg {
        acquire_timeout: true,
        ..ModelCfg::new(RecipeRef::new(Forgetful), 3)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert_eq!(status(&r, PropertyName::MutualExclusion), Status::Holds);
    assert_eq!(status(&r, PropertyName::Progress), Status::Holds);

    let body = format!("{HEALTHY}acquire_timeout_ms = 100\n");
    let acquisitions = |recipe: RecipeRef| -> u64 {
        let sc = Scenario::parse_with_recipe(&body, "timeout", NAME, recipe).unwrap();
        (1..=20)
            .map(|seed| {
                let o = simulate(&sc, seed, false);
                assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
                o.metrics.acquisitions
            })
            .sum()
    };
    let (kept, forgot) = (
        acquisitions(recipe()),
        acquisitions(RecipeRef::new(Forgetful)),
    );
    // 68 against 120 when written.
    assert!(forgot < kept, "{forgot} acquisitions against {kept}");
}

/// The simulator sleeps the back-off in virtual time: no violation, every
/// round held, and the wake-ups are in the trace.
#[test]
fn healthy_simulations_back_off_and_violate_nothing() {
    let sc = scenario(HEALTHY);
    let rounds = sc.clients as u64 * sc.rounds as u64;
    for seed in 1..=30 {
        let o = simulate(&sc, seed, false);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        assert_eq!(o.metrics.acquisitions, rounds, "seed {seed}");
        assert_eq!(o.metrics.notifications, 0, "seed {seed}");
    }
    let o = simulate(&sc, 1, true);
    let wakes = o.timers_fired(Timer::Wake);
    assert!(wakes > 0, "waiters slept and woke");
    assert_eq!(sleep_after(MAX_DOUBLINGS + 5), sleep_after(MAX_DOUBLINGS));
}

/// An acquire timeout in a scenario: with a timeout shorter than a hold,
/// some waiters give up, no one holds twice, and every client finishes.
#[test]
fn simulated_waiters_give_up_after_their_timeout() {
    let sc = scenario(&format!("{HEALTHY}acquire_timeout_ms = 15\n"));
    let mut gave_up = 0;
    for seed in 1..=30 {
        let o = simulate(&sc, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        gave_up += o.timers_fired(Timer::GiveUp);
    }
    assert!(gave_up > 0, "some acquisition outlasted 15 ms");
}

/// The herd sweep: no notifications at any size, as the closed form says;
/// the cost is the polls.
#[test]
fn the_herd_sweep_finds_no_herd() {
    let r = recipe();
    for n in [2u16, 5, 10] {
        let row = sim::herd::row(&sim::herd::baseline(&r, n, 1), 1);
        let closed = sim::herd::closed_form(&r, n as u32).expect("declared");
        assert_eq!(row.notifications_per_release, closed, "N = {n}");
        assert_eq!(row.notifications, 0, "N = {n}");
        assert_eq!(row.violations, 0, "N = {n}");
        assert_eq!(row.acquisitions, n as u64);
        assert!(
            row.requests_per_acquisition("reads") > 0.0,
            "N = {n}: waiters poll"
        );
    }
}
