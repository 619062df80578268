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

/// Shrinking a queue's run keeps a producer and a consumer, and the
/// reproducer it writes loads and reproduces.
#[test]
fn a_shrunk_queue_keeps_its_roles() {
    let text = "recipe = \"zk-fifo-queue\"\nvariant = \"lock-safe\"\nclients = 3\nproducers = 2\nrounds = 1\nseed = 1\n\
                [timing]\nsession_timeout_ms = 2000\nthink_ms = [50, 150]\nhold_ms = [20, 40]\nlatency_ms = [1.0, 1.0]\n\
                [faults]\ncrash = { rate_per_s = 2.0, duration_ms = [100, 300] }\nuntil_ms = 1000\n";
    let s = Scenario::parse(text, "q.toml", "q").unwrap();
    let mut shrunk = 0;
    for seed in 0..60 {
        let Some(small) = sim::hunt::shrink(&s, seed, None) else {
            continue;
        };
        shrunk += 1;
        assert!(
            small.producers >= 1 && small.producers < small.clients,
            "seed {seed}"
        );
        let repro = s.reproducer(
            seed,
            (
                small.clients,
                small.producers,
                small.writers,
                small.observers,
                small.rounds,
            ),
            small.schedule.clone(),
            &[small.property],
            "test",
        );
        let r = Scenario::parse(&repro, "r.toml", "r").unwrap();
        let o = simulate(&r, r.seed, false);
        assert!(
            o.violations.iter().any(|v| v.property == small.property),
            "seed {seed}"
        );
    }
    assert!(shrunk > 0);
}
