//! Issue 47, items 2 and 3: the simulator's run-level check
//! `fault_free_session_loss`, and every violation naming its clients.

use models::properties::PropertyName;
use models::recipes;
use sim::engine::{simulate, Outcome};
use sim::scenario::Scenario;
use std::path::Path;

fn parse(toml: &str) -> Scenario {
    Scenario::parse(toml, "inline.toml", "inline").unwrap()
}

fn session_losses(o: &Outcome) -> Vec<&sim::engine::Violation> {
    o.violations
        .iter()
        .filter(|v| v.property == PropertyName::FaultFreeSessionLoss)
        .collect()
}

/// A shipped scenario with its faults taken out.
fn fault_free(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    let mut s = Scenario::load(&path).unwrap();
    s.profile.clear();
    s.schedule.clear();
    s
}

#[test]
fn a_fault_free_expiry_is_reported_naming_the_client() {
    // Timing the scenario check refuses, set after it: heartbeats twice
    // the session timeout apart, through holds of three timeouts. No fault
    // fires, yet sessions expire.
    let long_holds = "[timing]\nhold_ms = [12000, 12000]\n";
    let mut s = parse(&format!(
        "recipe = \"fair-predecessor\"\nclients = 3\nrounds = 2\n{long_holds}"
    ));
    s.timing.ping_interval_us = 2 * s.timing.session_timeout_us;
    let o = simulate(&s, 1, false);
    assert!(o.faults.iter().all(|f| !f.fired));
    let losses = session_losses(&o);
    assert_eq!(losses.len(), 1, "reported once a run: {:?}", o.violations);
    let v = losses[0];
    assert_eq!(v.clients.len(), 1, "{v:?}");
    assert!(v.clients[0] < 3, "{v:?}");
    // At a session's timeout or later, never before.
    assert!(v.at_us >= s.timing.session_timeout_us, "{v:?}");
    // The same on etcd, whose leases are renewed by keepalives alone.
    let mut s = parse(&format!(
        "recipe = \"etcd-revision\"\nclients = 2\n{long_holds}"
    ));
    s.timing.ping_interval_us = 2 * s.timing.session_timeout_us;
    assert_eq!(session_losses(&simulate(&s, 7, false)).len(), 1);
}

#[test]
fn an_expiry_after_a_fault_is_no_run_level_violation() {
    // partition-past-session.toml cuts a client off past its session:
    // its session expires, as it should after that fault.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/partition-past-session.toml");
    let s = Scenario::load(&path).unwrap();
    let o = simulate(&s, s.seed, true);
    let expired = o
        .trace
        .iter()
        .any(|l| matches!(l.event, sim::trace::TraceEvent::Expire { .. }));
    assert!(expired, "the scenario's session does expire");
    assert!(o.faults.iter().any(|f| f.fired));
    assert!(session_losses(&o).is_empty(), "{:?}", o.violations);
}

#[test]
fn two_thousand_fault_free_seeds_lose_no_session() {
    // Shipped scenarios without their faults, of five applications and
    // both faces, 400 seeds each: think, hold and latency drawn per seed
    // as a hunt draws them.
    let names = [
        "healthy",
        "etcd-lease-pause",
        "election-gc-pause",
        "queue-consumer-crash",
        "semaphore-gc-pause",
    ];
    let mut runs = 0;
    for name in names {
        let s = fault_free(name);
        for seed in 0..400 {
            let o = simulate(&s, seed, false);
            assert!(!o.end.is_cut_off(), "{name} seed {seed}: {}", o.end);
            assert!(
                session_losses(&o).is_empty(),
                "{name} seed {seed}: {:?}",
                o.violations
            );
            runs += 1;
        }
    }
    // And at the edge of what the scenario check accepts: a ping interval
    // plus twice the longest one-way latency just below the timeout.
    let edge = parse(
        "recipe = \"etcd-revision\"\nclients = 3\nrounds = 3\n[timing]\nsession_timeout_ms = 300\n\
         ping_interval_ms = 100\nlatency_ms = [0.0, 99.9]\nretry_ms = 1000\n",
    );
    for seed in 0..200 {
        let o = simulate(&edge, seed, false);
        assert!(
            session_losses(&o).is_empty(),
            "edge seed {seed}: {:?}",
            o.violations
        );
        runs += 1;
    }
    assert_eq!(runs, 2_200);
}

/// Every violation a hunt over the shipped scenarios (and the herd
/// baselines of the recipes that herd) reports names at least one client:
/// `herd_bound` used to be reported "by clients []".
#[test]
fn every_violation_names_its_clients() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut scenarios: Vec<Scenario> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| Scenario::load(&p).unwrap())
        .collect();
    for name in [
        "unfair-create",
        "children-watch",
        "lowest-watch",
        "zk-barrier",
    ] {
        let recipe = recipes::lookup(name, None).unwrap();
        scenarios.push(sim::herd::baseline(&recipe, 5, 0));
    }
    let mut seen = std::collections::BTreeSet::new();
    for s in &scenarios {
        for seed in 0..20 {
            let o = simulate(s, seed, false);
            for v in &o.violations {
                assert!(!v.clients.is_empty(), "{} seed {seed}: {v:?}", s.name);
                seen.insert(v.property);
            }
        }
    }
    // Not vacuous: the hunt saw the herd and the shipped bugs.
    for p in [
        PropertyName::HerdBound,
        PropertyName::MutualExclusion,
        PropertyName::SingleLeader,
    ] {
        assert!(seen.contains(&p), "no {p} among {seen:?}");
    }
}
