//! The baseline herd sweep against the closed form.

use models::recipe::{App, RecipeRef, HERD_QUEUE_ITEMS};
use sim::herd::{
    baseline, closed_form, polling_closed_form, row, swept_recipes_waiting, Waiting,
    POLLING_MAX_CLIENTS,
};
use sim::scenario::Scenario;

#[test]
fn the_baseline_agrees_with_the_closed_form_exactly() {
    let notified = [Waiting::Watches, Waiting::BlockingQueries]
        .into_iter()
        .flat_map(swept_recipes_waiting);
    for recipe in notified {
        for n in [2u16, 3, 5, 10, 37, 100] {
            let s = baseline(&recipe, n, 1);
            let r = row(&s, 1);
            assert_eq!(r.violations, 0, "{recipe} {n}");
            // A queue's baseline is a few items; the others', one
            // acquisition (pass, leadership) a client.
            let acquisitions = match recipe.app() {
                App::Lock | App::Election | App::Barrier | App::SharedLock | App::Semaphore => {
                    n as u64
                }
                App::Queue => HERD_QUEUE_ITEMS as u64,
            };
            assert_eq!(r.acquisitions, acquisitions, "{recipe} {n}");
            // A semaphore's has none: whether a lease's release finds a
            // waiter depends on how the holds and the mutex's hand-offs
            // interleave.
            let form = closed_form(&recipe, n as u32);
            if recipe.app() == App::Semaphore {
                assert_eq!(form, None, "{recipe}");
                continue;
            }
            assert_eq!(
                r.notifications_per_release,
                form.expect("every shipped recipe but the semaphore has a closed form"),
                "{recipe} with {n} clients"
            );
        }
    }
}

/// The barrier and queue variants that model other sources have theirs
/// too: the tutorial's barrier, `take()` and Curator's lock-safe queue.
#[test]
fn barrier_and_queue_variants_agree_with_their_closed_forms() {
    for (name, variant) in [
        ("zk-double-barrier", "tutorial"),
        ("zk-fifo-queue", "take-safe"),
        ("zk-fifo-queue", "lock-safe"),
    ] {
        let recipe = models::recipes::lookup(name, Some(variant)).unwrap();
        agrees_with_its_closed_form(&recipe, &[2, 5, 37]);
    }
}

/// The baseline of `recipe` at each of `counts` runs clean and wakes as
/// its closed form says.
fn agrees_with_its_closed_form(recipe: &models::recipe::RecipeRef, counts: &[u16]) {
    for &n in counts {
        let r = row(&baseline(recipe, n, 1), 1);
        assert_eq!(r.violations, 0, "{recipe} {n}");
        assert_eq!(
            Some(r.notifications_per_release),
            closed_form(recipe, n as u32),
            "{recipe} with {n} clients"
        );
    }
}

/// A shared lock's readers wait for the writers ahead of them: the
/// recipes page's and kazoo's readers watch the nearest writer and wake
/// once, at the last writer's release; Curator's watch the first writer and
/// wake at every writer's release — the herd the sweep shows.
#[test]
fn shared_lock_readers_wake_as_their_library_watches() {
    for variant in ["zk-docs", "kazoo", "curator"] {
        let recipe = models::recipes::lookup("zk-rwlock", Some(variant)).unwrap();
        agrees_with_its_closed_form(&recipe, &[2, 5, 10, 37]);
    }
    // At 10 clients (5 writers, 5 readers): 9 notifications in all for
    // the page's readers, 29 for Curator's.
    let total = |variant| -> u32 {
        let recipe = models::recipes::lookup("zk-rwlock", Some(variant)).unwrap();
        closed_form(&recipe, 10).unwrap().iter().sum()
    };
    assert_eq!((total("zk-docs"), total("curator")), (9, 29));
}

/// The pollers (Redis: no watches) and their variants.
fn pollers() -> Vec<RecipeRef> {
    let mut all = swept_recipes_waiting(Waiting::Polls);
    for (name, variant) in [
        ("redis-setnx", "atomic"),
        ("redis-token", "incr-token"),
        ("redis-token", "watchdog"),
        ("redlock", "incr-token"),
    ] {
        all.push(models::recipes::lookup(name, Some(variant)).unwrap());
    }
    all
}

/// A poller's run measures what its closed form says: `tries` polls per
/// hold, the polls and store requests per acquisition.
fn polls_as_its_closed_form_says(s: &Scenario, tries: u64) {
    let what = format!("{} with {} clients", s.recipe, s.clients);
    let r = row(s, 1);
    assert_eq!(r.violations, 0, "{what}");
    assert_eq!(r.acquisitions, u64::from(s.clients), "{what}");
    assert!(r.notifications == 0, "{what}: a poller is woken by no one");
    let polling = r.polling.as_ref().expect("a poller's row");
    let form = polling.closed_form.expect("a closed form");
    assert_eq!(form.tries_per_hold, tries, "{what}");
    assert_eq!(
        polling.polls_per_acquisition, form.polls_per_acquisition,
        "{what}"
    );
    let measured = r.requests_per_acquisition("all");
    assert!(
        (measured - form.requests_per_acquisition).abs() < 1e-9,
        "{what}: measured {measured}, closed form {}",
        form.requests_per_acquisition
    );
}

/// In the baseline a hold (20 ms) is shorter than every poller's retry
/// delay, so each waiter tries once per hold: (N − 1)/2 polls an
/// acquisition.
#[test]
fn the_pollers_baseline_agrees_with_its_closed_form_exactly() {
    for recipe in pollers() {
        for n in [2u16, 3, 5, 10, 37, 100] {
            polls_as_its_closed_form_says(&baseline(&recipe, n, 1), 1);
        }
    }
}

/// `s` with every hold `hold_ms` long.
fn holding(mut s: Scenario, hold_ms: u64) -> Scenario {
    s.timing.hold_us = (hold_ms * 1000, hold_ms * 1000);
    s
}

/// A hold longer than the retry delay: each waiter tries several times a
/// hold, as the form's waves say — 250 ms is 3 of `redis-token`'s 102 ms
/// waves (a try's round trip and its 100 ms sleep) and 2 of `redlock`'s
/// 220 ms ones.
#[test]
fn a_long_hold_polls_as_the_closed_form_says() {
    for (name, tries) in [("redis-token", 3), ("redis-setnx", 3), ("redlock", 2)] {
        let recipe = models::recipes::lookup(name, None).unwrap();
        for n in [2u16, 5, 37] {
            polls_as_its_closed_form_says(&holding(baseline(&recipe, n, 1), 250), tries);
        }
    }
}

/// No form where the release reaches the key at the very instant a wave
/// of tries does (the store's order decides), nor for a run unlike the
/// baseline, nor for a recipe that watches.
#[test]
fn no_polling_form_where_none_holds() {
    let token = models::recipes::lookup("redis-token", None).unwrap();
    // A winning try (2 ms), two writes (4 ms) and 96 ms of hold: 102 ms,
    // one wave.
    assert_eq!(
        polling_closed_form(&holding(baseline(&token, 5, 1), 96)),
        None
    );
    assert!(polling_closed_form(&holding(baseline(&token, 5, 1), 97)).is_some());
    let mut rounds = baseline(&token, 5, 1);
    rounds.rounds = 2;
    assert_eq!(polling_closed_form(&rounds), None);
    let fair = models::recipes::lookup("fair-predecessor", None).unwrap();
    assert_eq!(polling_closed_form(&baseline(&fair, 5, 1)), None);
    assert!(row(&baseline(&fair, 5, 1), 1).polling.is_none());
}

/// The pollers' rows of the default sweep, to its cap, against the form:
/// `cargo test --profile test -p lockstep-sim --test herd -- --ignored`
/// (`redlock` at 1,000 clients alone is 5 million requests).
#[test]
#[ignore]
fn the_default_sweeps_polling_rows_agree_with_the_closed_form() {
    for recipe in swept_recipes_waiting(Waiting::Polls) {
        let counts = sim::herd::default_counts(Waiting::Polls, &sim::herd::DEFAULT_CLIENTS);
        assert_eq!(counts.last(), Some(&POLLING_MAX_CLIENTS));
        for n in counts {
            polls_as_its_closed_form_says(&baseline(&recipe, n, 1), 1);
        }
    }
}
