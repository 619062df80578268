//! Independent jobs on a few threads, results in job order — so what a run
//! reports does not depend on how many threads it had.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The most worker threads lockstep starts for one command.
pub const MAX_THREADS: usize = 1024;

/// One worker a core, within `MAX_THREADS` (one if the count is unknown).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
}

/// Why the workers could not run.
#[derive(Debug)]
pub struct ThreadError {
    pub asked: usize,
    pub reason: String,
}

impl std::fmt::Display for ThreadError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "could not start {} worker threads ({}); ask for fewer with --jobs",
            self.asked, self.reason
        )
    }
}

/// Runs `work` on `threads` scoped threads; an error if the system refuses
/// any of them (the ones started finish first, so nothing is left running).
fn on_threads(threads: usize, work: &(dyn Fn() + Sync)) -> Result<(), ThreadError> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(ThreadError {
            asked: threads,
            reason: format!("between 1 and {MAX_THREADS} are allowed"),
        });
    }
    std::thread::scope(|scope| {
        for k in 0..threads {
            std::thread::Builder::new()
                .name(format!("worker-{k}"))
                .spawn_scoped(scope, work)
                .map_err(|e| ThreadError {
                    asked: threads,
                    reason: e.to_string(),
                })?;
        }
        Ok(())
    })
}

/// Runs `f` on every item on `threads` threads, taking items in the order
/// `schedule` gives (indices into `items`), and returns the results in item
/// order. `done` is told after each item with the number finished.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    schedule: &[usize],
    threads: usize,
    f: &(dyn Fn(&T) -> R + Sync),
    done: &(dyn Fn(usize) + Sync),
) -> Result<Vec<R>, ThreadError> {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    on_threads(threads, &|| loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(&i) = schedule.get(k) else { break };
        let r = f(&items[i]);
        results.lock().expect("no worker panics")[i] = Some(r);
        done(finished.fetch_add(1, Ordering::Relaxed) + 1);
    })?;
    Ok(results
        .into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|r| r.expect("every scheduled item ran"))
        .collect())
}

/// Runs `f` on every index `0..n` on `threads` threads and keeps, in index
/// order, the results that are `Some`: memory follows what is kept, not
/// `n`. `done` is told after each index with the number finished.
pub fn filter_map_indices<R: Send>(
    n: u64,
    threads: usize,
    f: &(dyn Fn(u64) -> Option<R> + Sync),
    done: &(dyn Fn(u64) + Sync),
) -> Result<Vec<(u64, R)>, ThreadError> {
    let next = AtomicU64::new(0);
    let finished = AtomicU64::new(0);
    let kept: Mutex<Vec<(u64, R)>> = Mutex::new(Vec::new());
    // Never past `n`, so the counter cannot wrap whatever `n` is.
    let claim = || {
        next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |i| {
            (i < n).then_some(i + 1)
        })
    };
    on_threads(threads, &|| {
        while let Ok(i) = claim() {
            if let Some(r) = f(i) {
                kept.lock().expect("no worker panics").push((i, r));
            }
            done(finished.fetch_add(1, Ordering::Relaxed) + 1);
        }
    })?;
    let mut kept = kept.into_inner().expect("no worker panics");
    kept.sort_unstable_by_key(|(i, _)| *i);
    Ok(kept)
}
