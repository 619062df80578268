//! etcd's `TryLock` (`etcd-revision:trylock`, also `etcd-mutex:trylock`):
//! when someone else's key is first it deletes its own and returns
//! `ErrLocked`, and the round ends without a hold.

use models::checker::{check, CheckOptions, Status};
use models::model::{FaultBudget, ModelCfg};
use models::properties::PropertyName;
use models::recipes;

fn verdicts(clients: u8, faults: FaultBudget) -> (u64, Vec<(PropertyName, Status)>) {
    let recipe = recipes::parse("etcd-mutex:trylock").unwrap();
    assert_eq!(recipe.id(), "etcd-revision:trylock");
    let cfg = ModelCfg {
        faults,
        ..ModelCfg::new(recipe, clients)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete);
    let v = r.properties.iter().map(|p| (p.name, p.status)).collect();
    (r.unique_states, v)
}

/// Without faults it is safe, and every client finishes — holding or
/// having given up; the lock still passes from one client to another.
#[test]
fn a_try_that_fails_ends_the_round_safely() {
    for (clients, states) in [(2, 115), (3, 1_047)] {
        let (unique, v) = verdicts(clients, FaultBudget::default());
        assert_eq!(unique, states, "{clients} clients");
        for (p, status) in v {
            assert_eq!(status, Status::Holds, "{p}, {clients} clients");
        }
    }
}

/// A pause past the lease still splits the brain: trying instead of
/// waiting changes nothing for a holder that stalls.
#[test]
fn a_paused_holder_still_splits_the_brain() {
    let (_, v) = verdicts(
        2,
        FaultBudget {
            pauses: 1,
            ..FaultBudget::default()
        },
    );
    assert!(v.contains(&(PropertyName::MutualExclusion, Status::Violated)));
    assert!(v.contains(&(PropertyName::Progress, Status::Holds)));
}
