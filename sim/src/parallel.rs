//! Independent jobs on a few threads, results in job order — so what a run
//! reports does not depend on how many threads it had.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `f` on every item on `threads` threads, taking items in the order
/// `schedule` gives (indices into `items`), and returns the results in item
/// order. `done` is told after each item with the number finished.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    schedule: &[usize],
    threads: usize,
    f: &(dyn Fn(&T) -> R + Sync),
    done: &(dyn Fn(usize) + Sync),
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = schedule.get(k) else { break };
                let r = f(&items[i]);
                results.lock().expect("no worker panics")[i] = Some(r);
                done(finished.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|r| r.expect("every scheduled item ran"))
        .collect()
}
