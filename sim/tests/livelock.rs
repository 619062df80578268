//! Livelock in the simulator: a client that keeps sending requests while
//! the run does no work spends its request budget and breaks the progress
//! goal, named. The injected consumer (`retry-taken`, test-only: it reads
//! an element another consumer took, again and again) is caught within a
//! small cap on events; fault-free runs of the shipped scenarios never
//! spend a budget.

#[path = "../../models/tests/livelock/retry_taken.rs"]
mod retry_taken;

use sim::engine::simulate;
use sim::scenario::Scenario;
use std::path::Path;

fn shipped(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    Scenario::load(&path).unwrap()
}

#[test]
fn a_consumer_rereading_a_taken_element_is_reported_livelocked() {
    let mut s = shipped("queue-lost-delete-reply");
    s.schedule.clear();
    s.recipe = retry_taken::retry_taken();
    s.max_events = 20_000;
    let mut caught = 0;
    for seed in 0..40 {
        let o = simulate(&s, seed, false);
        for &c in &o.livelocked {
            caught += 1;
            assert!(c >= s.producers, "seed {seed}: a consumer loops, not {c}");
            let v = o
                .violations
                .iter()
                .find(|v| v.clients == [c])
                .expect("the livelock is a violation naming its client");
            assert_eq!(v.property.name(), "queue_drains", "seed {seed}");
        }
    }
    assert!(caught > 0, "no seed raced two consumers for one element");
}

#[test]
fn fault_free_runs_of_every_shipped_scenario_spend_no_request_budget() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let seeds_each = 2_000u64.div_ceil(names.len() as u64);
    for name in &names {
        let mut s = shipped(name);
        s.schedule.clear();
        for seed in 0..seeds_each {
            let o = simulate(&s, seed, false);
            assert!(
                o.livelocked.is_empty(),
                "{name} seed {seed}: {:?}",
                o.livelocked
            );
        }
    }
}
