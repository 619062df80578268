//! The queue scenarios in the simulator: each reproduces what it says, a
//! healthy queue drains with every item processed once, and a run is
//! deterministic.

use sim::engine::simulate;
use sim::scenario::Scenario;
use std::path::Path;

fn shipped(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    Scenario::load(&path).unwrap()
}

fn violated(s: &Scenario, seed: u64) -> Vec<&'static str> {
    let mut v: Vec<&str> = simulate(s, seed, false)
        .violations
        .iter()
        .map(|v| v.property.name())
        .collect();
    v.dedup();
    v
}

#[test]
fn a_lost_delete_reply_loses_the_item() {
    let s = shipped("queue-lost-delete-reply");
    assert_eq!(violated(&s, s.seed), ["no_lost_item"]);
}

#[test]
fn a_lock_safe_consumer_that_crashes_while_processing_makes_a_duplicate() {
    let s = shipped("queue-consumer-crash");
    assert_eq!(violated(&s, s.seed), ["no_duplicate_item"]);
}

/// The same scenarios without their fault: every variant drains the queue
/// (each of the 4 items taken once) at every seed tried.
#[test]
fn without_faults_every_variant_drains_with_each_item_taken_once() {
    for variant in [None, Some("take-safe"), Some("lock-safe")] {
        let mut s = shipped("queue-lost-delete-reply");
        s.schedule.clear();
        s.recipe = models::recipes::lookup("zk-fifo-queue", variant).unwrap();
        for seed in 0..40 {
            let o = simulate(&s, seed, false);
            assert!(
                o.violations.is_empty(),
                "{variant:?} seed {seed}: {:?}",
                o.violations
            );
            assert_eq!(o.metrics.acquisitions, 4, "{variant:?} seed {seed}");
        }
    }
}

#[test]
fn same_seed_same_trace() {
    let s = shipped("queue-consumer-crash");
    let a = simulate(&s, 7, true);
    let b = simulate(&s, 7, true);
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.trace, b.trace);
}
