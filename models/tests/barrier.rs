//! What the model checker shows about the synchronizing barrier (the
//! article's, `zk-barrier`): without faults both properties hold; the
//! article's own code, which throws when a second member finds `/start`
//! already created, wedges the group without any fault; a crash leaves the
//! group forever incomplete; a lost create reply, resent (or lost with the
//! connection across a long pause or partition), makes a member count
//! itself twice and pass early.

use models::checker::{check, replay, CheckOptions, CheckResult, Status};
use models::model::{Action, FaultBudget, ModelCfg};
use models::properties::PropertyName;
use models::recipes;

fn run(name: &str, clients: u8, faults: FaultBudget) -> (ModelCfg, CheckResult) {
    let cfg = ModelCfg {
        faults,
        ..ModelCfg::new(recipes::parse(name).unwrap(), clients)
    };
    let r = check(&cfg.clone().into_model().unwrap(), CheckOptions::default()).unwrap();
    (cfg, r)
}

fn status(r: &CheckResult, p: &str) -> Status {
    let name = PropertyName::parse(p).expect("a property name");
    r.property(name).expect("judged by this check").status
}

#[test]
fn without_faults_three_members_all_pass_and_none_early() {
    let (_, r) = run("zk-barrier", 3, FaultBudget::default());
    assert_eq!(status(&r, "no_early_pass"), Status::Holds);
    assert_eq!(status(&r, "all_pass"), Status::Holds);
    // Pinned: a change to the barrier or the store shows here first.
    assert_eq!(r.unique_states, 12_401);
}

#[test]
fn the_articles_code_throws_when_two_members_both_start_the_group() {
    let (cfg, r) = run("zk-barrier:article", 3, FaultBudget::default());
    assert_eq!(status(&r, "no_early_pass"), Status::Holds);
    assert_eq!(status(&r, "all_pass"), Status::Violated);
    // Without a fault: from the counterexample's last state every way on
    // has two members create /lock/ready, and the second throws.
    let path = r.path(PropertyName::AllPass).unwrap().to_vec();
    assert!(!path.iter().any(|a| a.is_fault()), "{path:?}");
    let model = cfg.into_model().unwrap();
    let last = replay(&model, &path).unwrap();
    assert_eq!(last.store.barrier.as_ref().unwrap().entered.len(), 3);
}

#[test]
fn a_crash_leaves_the_group_incomplete_for_good() {
    let crash = FaultBudget {
        crashes: 1,
        ..Default::default()
    };
    let (_, r) = run("zk-barrier", 3, crash);
    assert_eq!(status(&r, "all_pass"), Status::Violated);
    assert_eq!(status(&r, "no_early_pass"), Status::Holds);
}

#[test]
fn a_resent_create_counts_a_member_twice_and_someone_passes_early() {
    let lost = FaultBudget {
        lost_replies: 1,
        ..Default::default()
    };
    let (_, r) = run("zk-barrier", 3, lost);
    assert_eq!(status(&r, "no_early_pass"), Status::Violated);
    let path = r.path(PropertyName::NoEarlyPass).unwrap().to_vec();
    assert!(path.iter().any(|a| matches!(a, Action::LoseReply(_))));
}

/// A pause or a partition past the read timeout loses a create's reply as a
/// lost reply does (ConnectionLoss): the same early pass. The group still
/// completes: `all_pass` holds (2 members).
#[test]
fn a_long_pause_or_partition_breaks_no_early_pass_but_not_all_pass() {
    for faults in [
        FaultBudget {
            pauses: 1,
            ..Default::default()
        },
        FaultBudget {
            partitions: 1,
            ..Default::default()
        },
    ] {
        let (_, r) = run("zk-barrier", 2, faults);
        assert_eq!(status(&r, "no_early_pass"), Status::Violated, "{faults:?}");
        assert_eq!(status(&r, "all_pass"), Status::Holds, "{faults:?}");
    }
}

/// A barrier is passed once: more rounds are refused, with the reason.
#[test]
fn a_barrier_has_one_round() {
    let cfg = ModelCfg {
        rounds: 2,
        ..ModelCfg::new(recipes::parse("zk-barrier").unwrap(), 3)
    };
    let e = cfg.validate().unwrap_err();
    assert!(e.reason.contains("rounds must be 1"), "{e}");
    assert_eq!(e.setting, models::model::Setting::Rounds);
}

// ---------------------------------------------------------------------------
// The double barrier of the ZooKeeper recipes page (`zk-double-barrier`).

#[test]
fn double_barrier_without_faults_three_members_enter_and_leave_together() {
    let (_, r) = run("zk-double-barrier", 3, FaultBudget::default());
    for p in ["no_early_pass", "no_early_leave", "herd_bound", "all_pass"] {
        assert_eq!(status(&r, p), Status::Holds, "{p}");
    }
    assert!(r.symmetry, "members are interchangeable");
    // Pinned: a change to the recipe, the client's release or the store
    // shows here first.
    assert_eq!(r.unique_states, 210_880);
}

/// A member that crashes before it enters leaves the group incomplete; the
/// page's ephemeral nodes keep a crash on the way out from blocking the
/// others, so nobody leaves early for it.
#[test]
fn double_barrier_a_crash_blocks_entry_but_not_a_safe_leave() {
    let crash = FaultBudget {
        crashes: 1,
        ..Default::default()
    };
    let (_, r) = run("zk-double-barrier", 2, crash);
    assert_eq!(status(&r, "all_pass"), Status::Violated);
    assert_eq!(status(&r, "no_early_pass"), Status::Holds);
    assert_eq!(status(&r, "no_early_leave"), Status::Holds);
}

/// A member paused past its session loses its node; when it runs again it
/// enters anew, finds `b/ready` there and passes at once, while the other
/// member, alone in the barrier, has left: it leaves before every member
/// has.
#[test]
fn double_barrier_a_pause_past_the_session_lets_a_member_leave_early() {
    let pause = FaultBudget {
        pauses: 1,
        ..Default::default()
    };
    let (_, r) = run("zk-double-barrier", 2, pause);
    assert_eq!(status(&r, "no_early_leave"), Status::Violated);
    let path = r.path(PropertyName::NoEarlyLeave).unwrap().to_vec();
    assert!(
        path.iter().any(|a| matches!(a, Action::Pause(_))),
        "{path:?}"
    );
}

/// The page's herd remark, checked: a barrier that woke members the group
/// is not ready for would break `herd_bound`. A resent create makes a
/// member count itself twice and create `b/ready` early, which wakes the
/// others while the group is incomplete: an early pass and a futile
/// wake-up at once.
#[test]
fn double_barrier_a_resent_create_passes_early_and_wakes_in_vain() {
    let lost = FaultBudget {
        lost_replies: 1,
        ..Default::default()
    };
    let (_, r) = run("zk-double-barrier", 2, lost);
    assert_eq!(status(&r, "no_early_pass"), Status::Violated);
    assert_eq!(status(&r, "herd_bound"), Status::Violated);
    assert_eq!(status(&r, "no_early_leave"), Status::Holds);
}

/// The ZooKeeper tutorial's `Barrier` (variant `tutorial`): a member slow to
/// list after entering sees the group already leaving — fewer than `size`
/// children — and waits for good, without any fault.
#[test]
fn the_tutorials_barrier_strands_a_slow_member_without_a_fault() {
    let (_, r) = run("zk-double-barrier:tutorial", 2, FaultBudget::default());
    assert_eq!(status(&r, "all_pass"), Status::Violated);
    assert_eq!(status(&r, "no_early_pass"), Status::Holds);
    let path = r.path(PropertyName::AllPass).unwrap().to_vec();
    assert!(!path.iter().any(|a| a.is_fault()), "{path:?}");
    assert_eq!(r.unique_states, 399);
}

/// The tutorial's barrier wakes every waiter on every child change: from
/// four members on, an entry wakes two that cannot proceed. About a minute
/// (6.6 M states): `cargo test --release -p lockstep-models --test barrier
/// -- --ignored`.
#[test]
#[ignore]
fn the_tutorials_barrier_herds_from_four_members() {
    let (_, r) = run("zk-double-barrier:tutorial", 4, FaultBudget::default());
    assert_eq!(status(&r, "herd_bound"), Status::Violated);
    let (_, page) = run("zk-double-barrier", 3, FaultBudget::default());
    assert_eq!(status(&page, "herd_bound"), Status::Holds);
}
