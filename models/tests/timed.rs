//! The timed checker (`--time ticks`): deadlines and expiry go by the
//! clock, so a deadline policy is checked exhaustively. A lease-aware
//! holder cut off past its session gives the lock up in time; the
//! known-wrong `lease-aware-from-send`, whose deadline restarts when it
//! sends a heartbeat, does not — and the untimed checker cannot tell the
//! two apart, since its heartbeats carry no time.

use models::checker::{check, replay, CheckOptions, CheckResult, Status};
use models::client::Policy;
use models::model::{Action, Due, FaultBudget, ModelCfg, Setting, TickTiming, Time};
use models::properties::PropertyName;
use models::recipes;

fn cfg(recipe: &str, clients: u8, faults: FaultBudget, policy: Policy, time: Time) -> ModelCfg {
    ModelCfg {
        faults,
        policy,
        time,
        ..ModelCfg::new(recipes::parse(recipe).unwrap(), clients)
    }
}

fn run(cfg: ModelCfg, ask: &[PropertyName]) -> CheckResult {
    let opts = CheckOptions::default().asking(ask);
    check(&cfg.into_model().unwrap(), opts).unwrap()
}

fn status(r: &CheckResult, p: PropertyName) -> Status {
    r.property(p).expect("judged").status
}

fn ticks() -> Time {
    Time::Ticks(TickTiming::default())
}

const PARTITION: FaultBudget = FaultBudget {
    crashes: 0,
    pauses: 0,
    partitions: 1,
    lost_replies: 0,
    restarts: 0,
    master_restarts: 0,
    clock_jumps: 0,
    failovers: 0,
    interrupts: 0,
    critical_checks: 0,
    isolations: 0,
    mutes: 0,
};

/// One partition, 2 clients: naive loses mutual exclusion (CURATOR-206),
/// lease-aware keeps it, and the deadline that restarts on a send loses it
/// — seen only with time.
#[test]
fn a_deadline_restarted_by_sends_is_found_only_with_time() {
    use PropertyName::MutualExclusion as ME;
    let timed = |policy| {
        run(
            cfg("fair-predecessor", 2, PARTITION, policy, ticks()),
            &[ME],
        )
    };
    let aware = timed(Policy::LeaseAware);
    assert_eq!(status(&aware, ME), Status::Holds);
    assert!(aware.complete);
    assert_eq!(status(&timed(Policy::Naive), ME), Status::Violated);
    let wrong = timed(Policy::LeaseAwareFromSend);
    assert_eq!(status(&wrong, ME), Status::Violated);
    // The counterexample: the cut-off holder sends heartbeats that never
    // arrive, the store expires its session by the clock, the next client
    // takes the lock while the first still believes.
    let model = cfg(
        "fair-predecessor",
        2,
        PARTITION,
        Policy::LeaseAwareFromSend,
        ticks(),
    )
    .into_model()
    .unwrap();
    let path = wrong.path(ME).unwrap();
    assert!(path.iter().any(|a| matches!(a, Action::Partition(_))));
    assert!(path.iter().any(|a| matches!(a, Action::Tick)));
    assert!(path.iter().any(|a| matches!(a, Action::Expire(_))));
    replay(&model, path).expect("the counterexample replays");
    // Untimed, heartbeats never fire and the two policies look alike.
    let untimed = run(
        cfg(
            "fair-predecessor",
            2,
            PARTITION,
            Policy::LeaseAwareFromSend,
            Time::Untimed,
        ),
        &[ME],
    );
    assert_eq!(status(&untimed, ME), Status::Holds);
}

/// Without faults a timed run keeps every property, progress too: no
/// session expires between heartbeats, no request is resent while its
/// reply is on its way. The state counts are pinned: the same every run.
#[test]
fn fault_free_timed_runs_hold_everything() {
    for (recipe, unique) in [("fair-predecessor", 5_843u64), ("etcd-revision", 3_827)] {
        let r = run(
            cfg(
                recipe,
                2,
                FaultBudget::default(),
                Policy::LeaseAware,
                ticks(),
            ),
            &[],
        );
        assert!(r.complete, "{recipe}");
        for p in &r.properties {
            assert_ne!(p.status, Status::Violated, "{recipe}: {}", p.name);
        }
        assert_eq!(r.unique_states, unique, "{recipe}");
    }
}

/// A pause stops the process's clock as well as its heartbeats: a
/// lease-aware holder paused past its session loses mutual exclusion as
/// every policy does (Kleppmann's point), with the store expiring the
/// session by its timeout.
#[test]
fn a_pause_past_the_session_defeats_every_policy() {
    use PropertyName::MutualExclusion as ME;
    let pause = FaultBudget {
        pauses: 1,
        ..Default::default()
    };
    let r = run(
        cfg("etcd-revision", 2, pause, Policy::LeaseAware, ticks()),
        &[ME],
    );
    assert_eq!(status(&r, ME), Status::Violated);
    let path = r.path(ME).unwrap();
    assert!(path.iter().any(|a| matches!(a, Action::Pause(_))));
    assert!(path.iter().any(|a| matches!(a, Action::Expire(_))));
}

/// A pause shorter than what a session has left never costs it: with
/// pauses of at most 3 ticks (the session is 7, heartbeats every 2 with a
/// 1-tick latency), the naive holder keeps mutual exclusion.
#[test]
fn a_short_pause_loses_nothing() {
    use PropertyName::MutualExclusion as ME;
    let t = TickTiming {
        pause: Due { lo: 1, hi: 3 },
        ..TickTiming::default()
    };
    let pause = FaultBudget {
        pauses: 1,
        ..Default::default()
    };
    let r = run(
        cfg("fair-predecessor", 2, pause, Policy::Naive, Time::Ticks(t)),
        &[ME],
    );
    assert_eq!(status(&r, ME), Status::Holds);
    assert!(r.complete);
}

/// Timing that misbehaves without any fault is refused, naming the key.
#[test]
fn timing_that_cannot_hold_is_refused() {
    let refuse = |spec: &str, policy: Policy| {
        let t = TickTiming::parse(spec).unwrap();
        let e = cfg(
            "etcd-election",
            2,
            FaultBudget::default(),
            policy,
            Time::Ticks(t),
        )
        .into_model()
        .err()
        .unwrap_or_else(|| panic!("{spec} accepted"));
        match e.setting {
            Setting::Ticks(key) => (key, e.reason),
            other => panic!("{spec}: {other:?}"),
        }
    };
    // The first heartbeat arrives ping + 2 × latency after the grant.
    let (key, why) = refuse("session=4,ping=2", Policy::Naive);
    assert_eq!(key, "ping");
    assert!(why.contains("first heartbeat"), "{why}");
    let (key, _) = refuse("retry=2", Policy::Naive);
    assert_eq!(key, "retry");
    let (key, why) = refuse("deadline=6", Policy::LeaseAware);
    assert_eq!(key, "deadline");
    assert!(why.contains("before the store expires"), "{why}");
    let (key, _) = refuse("deadline=4", Policy::LeaseAware);
    assert_eq!(key, "deadline");
    // A deadline means nothing to a naive client: given, it is refused,
    // as is an acquire timeout without --acquire-timeout.
    let (key, why) = refuse("deadline=6", Policy::Naive);
    assert_eq!(key, "deadline");
    assert!(why.contains("keeps no clock of its own"), "{why}");
    let (key, _) = refuse("acquire_timeout=3", Policy::Naive);
    assert_eq!(key, "acquire_timeout");
    let (key, _) = refuse("pause=0-3", Policy::Naive);
    assert_eq!(key, "pause");
    for bad in [
        "latency=3-1",
        "bogus=1",
        "session",
        "hold=300",
        "tick_ms=0",
        "ping=2,ping=3",
    ] {
        assert!(TickTiming::parse(bad).is_err(), "{bad} parsed");
    }
}

/// A timed state shows its countdowns (the counterexample viewer, ITF and
/// the Explorer read the view); an untimed one has none to show.
#[test]
fn a_timed_state_shows_its_countdowns() {
    use stateright::Model;
    let shown = |time| {
        let model = cfg(
            "etcd-revision",
            2,
            FaultBudget::default(),
            Policy::Naive,
            time,
        )
        .into_model()
        .unwrap();
        let init = model.init_states().remove(0);
        models::model::view::view(&model, &init).to_string()
    };
    let timed = shown(ticks());
    // The lease grant is on its way (one tick), its resend due in three.
    assert!(
        timed.contains("ticks left: timers: no reply: resend: 3"),
        "{timed}"
    );
    assert!(timed.contains("client_to_store: 1,"), "{timed}");
    assert!(!shown(Time::Untimed).contains("ticks left"));
}
