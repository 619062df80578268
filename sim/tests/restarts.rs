//! A restarted client is a new process: the watches its predecessor set
//! died with the old connection, on either face.

use models::checker::{check, CheckOptions, Status};
use models::model::{FaultBudget, ModelCfg};
use sim::engine::simulate;
use sim::scenario::Scenario;
use sim::trace::TraceEvent;
use std::collections::BTreeSet;

/// The crash-storm scenario (clients crash and come back as new processes,
/// with fencing) on `recipe`.
fn storm(recipe: &str) -> Scenario {
    let toml = format!(
        "recipe = \"{recipe}\"\nclients = 5\nrounds = 8\nfencing = true\n\
         [timing]\nsession_timeout_ms = 1500\nthink_ms = [10, 100]\nhold_ms = [100, 400]\n\
         latency_ms = [0.2, 2.0]\n\
         [faults]\nuntil_ms = 10000\ncrash = {{ rate_per_s = 1.0, duration_ms = [200, 1500] }}\n"
    );
    Scenario::parse(&toml, "storm.toml", "storm").unwrap()
}

#[test]
fn a_restarted_etcd_client_hears_nothing_its_predecessor_watched() {
    // The predecessor's watch used to outlive its process: a release woke
    // the dead process's watch and the new one's at once, and herd_bound
    // fell on 716 of seeds 0..1000, reported by no client.
    let s = storm("etcd-revision");
    for seed in 0..150 {
        let o = simulate(&s, seed, false);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        assert!(
            o.faults.iter().any(|f| f.fired),
            "seed {seed}: no crash fired"
        );
    }
}

#[test]
fn a_restarted_zookeeper_client_hears_nothing_its_predecessor_watched() {
    let s = storm("fair-predecessor");
    for seed in 0..150 {
        let o = simulate(&s, seed, false);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
    }
}

/// A 2-client scenario of `recipe` (one round) whose clients crash in
/// the first 400 ms; `restart` says whether a crashed one comes back.
fn crashing_pair(recipe: &str, restart: bool) -> Scenario {
    let (name, variant) = recipe.split_once(':').unwrap_or((recipe, ""));
    let variant = match variant {
        "" => String::new(),
        v => format!("variant = \"{v}\"\n"),
    };
    let toml = format!(
        "recipe = \"{name}\"\n{variant}clients = 2\nrestart = {restart}\n\
         [timing]\nsession_timeout_ms = 2000\nthink_ms = [10, 100]\nhold_ms = [100, 600]\n\
         latency_ms = [0.5, 2.0]\n\
         [faults]\nuntil_ms = 400\ncrash = {{ rate_per_s = 3.0, duration_ms = [20, 600] }}\n"
    );
    Scenario::parse(&toml, "pair.toml", "pair").unwrap()
}

/// What the simulator finds violated over `seeds` in runs where exactly
/// one crash struck (the checker's budget), and how many such runs there
/// were.
fn found_with_one_crash(s: &Scenario, seeds: std::ops::Range<u64>) -> (BTreeSet<String>, usize) {
    let mut found = BTreeSet::new();
    let mut runs = 0;
    for seed in seeds {
        let o = simulate(s, seed, false);
        if o.faults.iter().filter(|f| f.fired).count() != 1 {
            continue;
        }
        runs += 1;
        found.extend(o.violations.iter().map(|v| v.property.name().to_string()));
    }
    (found, runs)
}

/// What the checker finds violated with 2 clients, one crash and
/// `restarts` restarts.
fn checked(recipe: &str, restarts: u8) -> BTreeSet<String> {
    let cfg = ModelCfg {
        faults: FaultBudget {
            crashes: 1,
            restarts,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), 2)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    r.properties
        .iter()
        .filter(|p| p.status == Status::Violated)
        .map(|p| p.name.name().to_string())
        .collect()
}

/// Crash semantics are the engines' shared: with restarts the checker
/// (one crash, one restart) and the simulator (runs where one crash
/// struck, then restarted) find the same queue violations, and without
/// them the same again — for every queue variant.
#[test]
fn the_checker_and_the_simulator_agree_on_queue_crashes() {
    for recipe in [
        "zk-fifo-queue",
        "zk-fifo-queue:take-safe",
        "zk-fifo-queue:lock-safe",
    ] {
        for restart in [true, false] {
            let (sim, runs) = found_with_one_crash(&crashing_pair(recipe, restart), 0..3000);
            assert!(runs > 1000, "{recipe}: {runs} runs with one crash");
            assert_eq!(
                checked(recipe, u8::from(restart)),
                sim,
                "{recipe} restart = {restart}"
            );
        }
    }
    // A restarted producer enqueues its item again: every variant
    // duplicates it.
    assert!(checked("zk-fifo-queue", 1).contains("no_duplicate_item"));
}

/// `lockstep check --recipe zk-double-barrier --clients 2 --crashes 1
/// --restarts 1` against the simulator's runs with one crash that
/// restarts: both find a member passing and leaving early, which neither
/// finds when the crash is for good (then both find only `all_pass`).
/// The checker also finds `herd_bound`, which the simulator reaches
/// only with more crashes (not in 30,000 seeds with one).
#[test]
fn the_checker_and_the_simulator_agree_on_double_barrier_crashes() {
    let barrier = "zk-double-barrier";
    let (sim, runs) = found_with_one_crash(&crashing_pair(barrier, false), 0..3000);
    assert!(runs > 1000, "{runs} runs with one crash");
    assert_eq!(checked(barrier, 0), sim);
    assert_eq!(sim, BTreeSet::from(["all_pass".to_string()]));

    let (sim, runs) = found_with_one_crash(&crashing_pair(barrier, true), 0..30_000);
    assert!(runs > 10_000, "{runs} runs with one crash");
    let checker = checked(barrier, 1);
    let early = BTreeSet::from(["no_early_leave".to_string(), "no_early_pass".to_string()]);
    assert_eq!(sim, early);
    assert!(
        sim.is_subset(&checker),
        "checker {checker:?}, simulator {sim:?}"
    );
    assert!(!checker.contains("all_pass"), "{checker:?}");
}

/// With `restart = false` no crash ever restarts, though the scenario's
/// crashes have durations: the same seed draws the same crashes, for good.
#[test]
fn with_restart_false_no_crash_restarts() {
    let again = crashing_pair("zk-double-barrier", true);
    let never = crashing_pair("zk-double-barrier", false);
    let mut fired = 0;
    for seed in 0..300 {
        let a = simulate(&again, seed, true);
        let b = simulate(&never, seed, true);
        let when = |o: &sim::engine::Outcome| -> Vec<(u64, u32)> {
            o.faults
                .iter()
                .map(|f| (f.fault.at_ms, f.fault.client))
                .collect()
        };
        assert_eq!(when(&a), when(&b), "seed {seed}: the same crashes");
        assert!(b.faults.iter().all(|f| f.fault.duration_ms.is_none()));
        assert!(
            !b.trace
                .iter()
                .any(|l| matches!(l.event, TraceEvent::Restart { .. })),
            "seed {seed}"
        );
        fired += b.faults.iter().filter(|f| f.fired).count();
    }
    assert!(fired > 100, "{fired} crashes fired");
    // … and by default they do.
    let restarted = (0..300).any(|seed| {
        simulate(&again, seed, true)
            .trace
            .iter()
            .any(|l| matches!(l.event, TraceEvent::Restart { .. }))
    });
    assert!(restarted);
}

#[test]
fn restart_must_be_true_or_false() {
    let e = Scenario::parse(
        "recipe = \"zk-double-barrier\"\nclients = 2\nrestart = \"yes\"\n",
        "bad.toml",
        "bad",
    )
    .unwrap_err();
    assert!(e.reason.contains("restart"), "{e}");
    assert!(e.to_string().starts_with("bad.toml: "), "{e}");
}
