//! The baseline herd sweep against the closed form.

use models::recipe::{App, HERD_QUEUE_ITEMS};
use sim::herd::{baseline, closed_form, row};

#[test]
fn the_baseline_agrees_with_the_closed_form_exactly() {
    for recipe in sim::herd::swept_recipes() {
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
