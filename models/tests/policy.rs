//! What the application does with what the library knows: a `naive` holder
//! drops its belief when told its session expired; an `oblivious` one (kazoo's
//! `is_acquired`, `etcdctl lock`'s command) goes on until it releases.

use models::checker::{check, replay, CheckOptions, Status};
use models::client::Policy;
use models::model::{Action, FaultBudget, Link, ModelCfg};
use models::msg::Msg;
use models::properties::PropertyName;
use models::recipes;
use stateright::Model;

/// After Kleppmann's pause, the stale holder is told its session expired.
fn told_of_expiry(policy: Policy) -> (bool, bool) {
    let cfg = ModelCfg {
        faults: FaultBudget {
            pauses: 1,
            ..Default::default()
        },
        policy,
        ..ModelCfg::new(recipes::parse("unfair-create").unwrap(), 2)
    };
    let model = cfg.into_model().unwrap();
    let r = check(&model, CheckOptions::default()).unwrap();
    assert_eq!(
        r.property(PropertyName::MutualExclusion).unwrap().status,
        Status::Violated
    );
    let path = r.path(PropertyName::MutualExclusion).unwrap().to_vec();
    let mut state = replay(&model, &path).unwrap();
    // The paused holder resumes; its link delivers until the expiry notice.
    let stale = (0..2u16)
        .find(|&c| {
            state.clients[c as usize]
                .from_store
                .iter()
                .any(|m| matches!(m, Msg::Expired { .. }))
        })
        .expect("the store told the stale holder");
    if state.clients[stale as usize].status != models::model::Status::Running {
        state = model.next_state(&state, Action::Resume(stale)).unwrap();
    }
    let holds_before = state.clients[stale as usize].state.is_holding();
    while let Some(m) = state.clients[stale as usize].from_store.first().cloned() {
        state = model
            .next_state(&state, Action::Deliver(stale, Link::StoreToClient))
            .unwrap();
        if matches!(m, Msg::Expired { .. }) {
            break;
        }
    }
    (
        holds_before,
        state.clients[stale as usize].state.is_holding(),
    )
}

#[test]
fn naive_drops_its_belief_when_told_and_oblivious_does_not() {
    assert_eq!(told_of_expiry(Policy::Naive), (true, false));
    assert_eq!(told_of_expiry(Policy::Oblivious), (true, true));
}

/// The library variants of the fair lock keep the recipe's verdicts: a
/// crash breaks only unfenced resource exclusion, and a lost create reply
/// is survived by the guid.
#[test]
fn fair_lock_library_variants_keep_the_verdicts() {
    use models::checker::CheckResult;
    let run = |name: &str, faults: FaultBudget| -> CheckResult {
        let cfg = ModelCfg {
            faults,
            ..ModelCfg::new(recipes::parse(name).unwrap(), 3)
        };
        check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap()
    };
    for name in ["fair-predecessor:curator", "fair-predecessor:kazoo"] {
        let crash = run(
            name,
            FaultBudget {
                crashes: 1,
                ..Default::default()
            },
        );
        for p in &crash.properties {
            let expected = if p.name.name() == "resource_exclusion" {
                Status::Violated
            } else {
                Status::Holds
            };
            assert_eq!(p.status, expected, "{name}: {}", p.name);
        }
        let lost = run(
            name,
            FaultBudget {
                lost_replies: 1,
                ..Default::default()
            },
        );
        assert!(lost.all_hold(), "{name}: {:?}", lost.properties);
    }
}

/// Curator's advice (`suspend-aware`): a holder cut off for 2/3 of its
/// session gives the lock up and keeps the session; a request in flight is
/// lost with the connection and goes again. Under a partition it keeps
/// mutual exclusion as `lease-aware` does, where `naive` loses it; under a
/// pause its clock stops, and it loses it like everyone.
#[test]
fn suspend_aware_gives_the_lock_up_on_suspended() {
    let run = |policy: Policy, faults: FaultBudget| {
        let cfg = ModelCfg {
            faults,
            policy,
            ..ModelCfg::new(recipes::parse("fair-predecessor:curator").unwrap(), 2)
        };
        check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap()
    };
    let partition = FaultBudget {
        partitions: 1,
        ..Default::default()
    };
    let pause = FaultBudget {
        pauses: 1,
        ..Default::default()
    };
    let status = |r: &models::checker::CheckResult, p: &str| {
        let name = PropertyName::parse(p).expect("a property name");
        r.property(name).expect("judged by this check").status
    };
    let suspend = run(Policy::SuspendAware, partition);
    assert_eq!(status(&suspend, "mutual_exclusion"), Status::Holds);
    assert_eq!(status(&suspend, "progress"), Status::Holds);
    assert_eq!(
        status(&run(Policy::Naive, partition), "mutual_exclusion"),
        Status::Violated
    );
    assert_eq!(
        status(&run(Policy::SuspendAware, pause), "mutual_exclusion"),
        Status::Violated
    );
}
