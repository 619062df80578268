//! What the model checker shows about the synchronizing barrier (the
//! article's, `zk-barrier`): without faults both properties hold; the
//! article's own code, which throws when a second member finds `/start`
//! already created, wedges the group without any fault; a crash leaves the
//! group forever incomplete; a lost create reply, resent (or lost with the
//! connection across a long pause or partition), makes a member count
//! itself twice and pass early.

use models::checker::{check, replay, CheckOptions, CheckResult, Status};
use models::model::{Action, FaultBudget, LockModelCfg};
use models::recipes;

fn run(name: &str, clients: u8, faults: FaultBudget) -> (LockModelCfg, CheckResult) {
    let cfg = LockModelCfg {
        faults,
        ..LockModelCfg::new(recipes::parse(name).unwrap(), clients)
    };
    let r = check(&cfg.clone().into_model(), CheckOptions::default()).unwrap();
    (cfg, r)
}

fn status(r: &CheckResult, p: &str) -> Status {
    r.property(p).status
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
    let path = r.property("all_pass").path.clone().unwrap();
    assert!(!path.iter().any(|a| a.is_fault()), "{path:?}");
    let model = cfg.into_model();
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
    let path = r.property("no_early_pass").path.clone().unwrap();
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
    let cfg = LockModelCfg {
        rounds: 2,
        ..LockModelCfg::new(recipes::parse("zk-barrier").unwrap(), 3)
    };
    let e = cfg.validate().unwrap_err();
    assert!(e.contains("rounds must be 1"), "{e}");
}
