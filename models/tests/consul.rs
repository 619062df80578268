//! The Consul recipes under the checker: what each holds without faults,
//! what a pause or a partition past the session breaks, what `LockIndex`
//! fences, and the semaphore's slot given away. Unique state counts are
//! pinned: a change to a recipe or the model that moves them should be a
//! change someone meant.

mod common;

use common::violated;
use models::checker::{check, replay, CheckOptions, CheckResult, Status};
use models::client::Phase;
use models::model::{Action, FaultBudget, ModelCfg};
use models::properties::PropertyName::{self, *};
use models::recipes;

fn cfg(recipe: &str, clients: u8, faults: FaultBudget) -> ModelCfg {
    ModelCfg {
        faults,
        ..ModelCfg::new(recipes::parse(recipe).unwrap(), clients)
    }
}

fn run(cfg: ModelCfg) -> CheckResult {
    cfg.validate().unwrap();
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete);
    r
}

fn status(r: &CheckResult, p: PropertyName) -> Status {
    r.property(p).expect("judged by this check").status
}

fn one(f: fn(&mut FaultBudget)) -> FaultBudget {
    let mut b = FaultBudget::default();
    f(&mut b);
    b
}

/// The tokens of the clients believing they hold (or lead) at the end of
/// `path`.
fn tokens_at_end(cfg: ModelCfg, path: &[Action]) -> Vec<u64> {
    let model = cfg.into_model().unwrap();
    let end = replay(&model, path).unwrap();
    let mut tokens: Vec<u64> = end
        .holders()
        .map(|c| match end.clients[c as usize].state.phase {
            Phase::Holding { token, .. } => token,
            _ => unreachable!("a holder holds"),
        })
        .collect();
    tokens.sort_unstable();
    tokens
}

// --- consul-election -------------------------------------------------------

/// Three candidates, no faults: one leader at a time, elected with the key,
/// a leader elected and every follower naming it; the followers' blocking
/// queries on the key all answer each resignation (the herd).
#[test]
fn consul_election_elects_one_leader_without_faults() {
    let r = run(cfg("consul-election", 3, FaultBudget::default()));
    assert_eq!(violated(&r), ["herd_bound"]);
    for p in [
        SingleLeader,
        ElectedWithKey,
        LeaderExclusion,
        LeaderElected,
        FollowersAgree,
    ] {
        assert_eq!(status(&r, p), Status::Holds, "{p}");
    }
    // A hand-off is witnessed: a resignation wakes a follower that leads.
    assert_eq!(status(&r, HandOff), Status::Holds);
    assert!(r.path(HandOff).is_some(), "a witness path");
    assert_eq!(r.unique_states, 18_413);
    // Two candidates: one follower, no herd.
    let r = run(cfg("consul-election", 2, FaultBudget::default()));
    assert_eq!(violated(&r), Vec::<&str>::new());
    assert_eq!(r.unique_states, 486);
}

/// A leader paused or cut off past its session: the store invalidates it,
/// the lock-delay runs out while the old leader is still silent, and a
/// follower acquires the key: two believe they lead, and the deposed
/// one's write lands after the new leader's. The new leader holds the key
/// (`elected_with_key` holds). With fencing, `LockIndex` is the term and
/// the stale write is refused.
#[test]
fn a_pause_or_a_partition_past_the_session_elects_a_second_leader() {
    for (faults, states) in [
        (one(|b| b.pauses = 1), 75_856),
        (one(|b| b.partitions = 1), 70_278),
    ] {
        let r = run(cfg("consul-election", 2, faults));
        assert_eq!(
            violated(&r),
            ["leader_exclusion", "single_leader"],
            "{faults:?}"
        );
        assert_eq!(status(&r, ElectedWithKey), Status::Holds);
        assert_eq!(r.unique_states, states, "{faults:?}");
        let path = r.path(SingleLeader).unwrap().to_vec();
        assert!(
            path.iter().any(|a| matches!(a, Action::Expire(_))),
            "the leader's session ran out"
        );
        assert!(
            path.iter().any(|a| matches!(a, Action::EndLockDelay(_))),
            "and the lock-delay with it"
        );
        assert_eq!(
            tokens_at_end(cfg("consul-election", 2, faults), &path),
            [1, 2],
            "each leader's term is its LockIndex"
        );
        let fenced = run(ModelCfg {
            fencing: true,
            ..cfg("consul-election", 2, faults)
        });
        assert_eq!(violated(&fenced), ["single_leader"], "{faults:?}");
    }
}

/// A crash is only a crash: the next leader waits out the session and its
/// lock-delay, which also outlasts the crashed leader's last write. A lost
/// reply is sent again (an acquire answered twice is the same session's):
/// nothing breaks.
#[test]
fn consul_election_survives_a_crash_and_a_lost_reply() {
    // The crashed leader's last write, in flight, lands long before the
    // lock-delay is over: unfenced, the resource sees the leaders in turn.
    let r = run(cfg("consul-election", 2, one(|b| b.crashes = 1)));
    assert_eq!(violated(&r), Vec::<&str>::new());
    // Without the lock-delay the next leader may be in first.
    let r = run(cfg(
        "consul-election:lock-delay-0",
        2,
        one(|b| b.crashes = 1),
    ));
    assert_eq!(violated(&r), ["leader_exclusion"]);
    let r = run(cfg("consul-election", 2, one(|b| b.lost_replies = 1)));
    assert_eq!(violated(&r), Vec::<&str>::new());
}

// --- consul-lock -----------------------------------------------------------

/// Three clients, no faults: every safety property holds but
/// `herd_bound` — a release answers every waiter's blocking query on the
/// key, the herd — and every client gets the lock.
#[test]
fn consul_lock_holds_without_faults_but_for_its_herd() {
    let r = run(cfg("consul-lock", 3, FaultBudget::default()));
    assert_eq!(violated(&r), ["herd_bound"]);
    assert_eq!(status(&r, Progress), Status::Holds);
    assert_eq!(status(&r, HandOff), Status::Holds);
    assert_eq!(r.unique_states, 19_948);
    let path = r.path(HerdBound).unwrap();
    assert!(
        matches!(path.last(), Some(Action::Deliver(..))),
        "the release's delivery wakes both waiters"
    );
}

/// `consul lock` with its holder cut off past the session: the session is
/// invalidated, the lock-delay passes while the holder hears nothing, and
/// another client takes the lock while the cut-off child runs on. The key
/// is the new holder's all along (`holder_owns_key` holds).
#[test]
fn a_partition_lets_consul_lock_cli_hold_twice() {
    let r = run(cfg("consul-lock-cli", 2, one(|b| b.partitions = 1)));
    assert_eq!(status(&r, MutualExclusion), Status::Violated);
    assert_eq!(status(&r, HolderOwnsKey), Status::Holds);
    assert_eq!(status(&r, Progress), Status::Holds);
    assert_eq!(r.unique_states, 83_208);
    let path = r.path(MutualExclusion).unwrap();
    assert!(path.iter().any(|a| matches!(a, Action::Partition(_))));
    assert!(path.iter().any(|a| matches!(a, Action::Expire(_))));
}

/// `LockIndex` is a fencing token while the key lives: with behavior
/// `release` a new holder's is one more, and the paused holder's late
/// write is refused. With behavior `delete` the invalidation deletes the
/// key, the next acquire creates it again at `LockIndex` 1, and the
/// paused holder's write with the same token is accepted.
#[test]
fn lock_index_fences_unless_the_session_deletes_the_key() {
    let fenced = |recipe: &str| ModelCfg {
        fencing: true,
        ..cfg(recipe, 2, one(|b| b.pauses = 1))
    };
    let r = run(fenced("consul-lock"));
    assert_eq!(violated(&r), ["mutual_exclusion"]);
    assert_eq!(status(&r, ResourceExclusion), Status::Holds);
    assert_eq!(r.unique_states, 65_394);
    let path = r.path(MutualExclusion).unwrap().to_vec();
    assert_eq!(tokens_at_end(fenced("consul-lock"), &path), [1, 2]);

    let r = run(fenced("consul-lock:behavior-delete"));
    assert_eq!(violated(&r), ["mutual_exclusion", "resource_exclusion"]);
    assert_eq!(r.unique_states, 62_053);
    let path = r.path(ResourceExclusion).unwrap().to_vec();
    assert_eq!(
        tokens_at_end(fenced("consul-lock:behavior-delete"), &path),
        [1, 1],
        "LockIndex started again at 1"
    );
}

// --- consul-semaphore ------------------------------------------------------

fn asking(cfg: ModelCfg, p: PropertyName) -> CheckResult {
    cfg.validate().unwrap();
    check(
        &cfg.into_model().unwrap(),
        CheckOptions::default().asking(&[p]),
    )
    .unwrap()
}

/// Without faults a slot is never taken twice, every contender gets one,
/// and a hand-off is witnessed; with a crash or a lost reply too (a lost
/// reply fails `Acquire`, which destroys its session and starts over).
#[test]
fn consul_semaphore_keeps_its_bound_without_pauses() {
    for (faults, states) in [
        (FaultBudget::default(), 1_869),
        (one(|b| b.crashes = 1), 12_490),
        (one(|b| b.lost_replies = 1), 72_623),
    ] {
        let r = run(cfg("consul-semaphore", 2, faults));
        assert_eq!(violated(&r), Vec::<&str>::new(), "{faults:?}");
        assert_eq!(status(&r, HandOff), Status::Holds);
        assert!(r.path(HandOff).is_some(), "a witness path");
        assert_eq!(r.unique_states, states, "{faults:?}");
    }
}

/// Every contender waits on a blocking query over the whole prefix: with
/// one permit for three clients, a release's `cas` on `.lock` answers
/// both waiters' queries.
#[test]
fn consul_semaphore_waiters_are_a_herd() {
    let r = asking(
        ModelCfg {
            permits: 1,
            ..cfg("consul-semaphore", 3, FaultBudget::default())
        },
        HerdBound,
    );
    assert_eq!(status(&r, HerdBound), Status::Violated);
}

/// A holder paused past its session: behavior `delete` removes its
/// contender key, the next contender's listing prunes it from `.lock`'s
/// holders and takes its slot while it still believes. The lock-delay
/// does not protect a slot — it is on the dead session's own contender
/// key, which nobody acquires — so the slot is taken before it ends.
#[test]
fn a_pause_past_the_session_gives_its_slot_away() {
    let r = run(cfg("consul-semaphore", 2, one(|b| b.pauses = 1)));
    assert_eq!(violated(&r), ["permits_bound"]);
    assert_eq!(status(&r, Progress), Status::Holds);
    assert_eq!(r.unique_states, 167_738);
    let path = r.path(PermitsBound).unwrap().to_vec();
    assert!(path.iter().any(|a| matches!(a, Action::Pause(_))));
    assert!(path.iter().any(|a| matches!(a, Action::Expire(_))));
    assert!(
        !path.iter().any(|a| matches!(a, Action::EndLockDelay(_))),
        "no lock-delay stood in the way"
    );
    let two = cfg("consul-semaphore", 2, one(|b| b.pauses = 1));
    assert_eq!(
        tokens_at_end(two, &path).len(),
        2,
        "two believers, one permit"
    );
}

/// `.lock`'s value keeps at most three holders: so many permits at most,
/// and the default (one fewer than the clients) no more.
#[test]
fn consul_semaphore_keeps_at_most_three_holders() {
    let five = ModelCfg::new(recipes::parse("consul-semaphore").unwrap(), 5);
    assert_eq!(five.permits, 3);
    let four = ModelCfg {
        permits: 4,
        ..five.clone()
    };
    let err = four.validate().unwrap_err().to_string();
    assert!(err.contains("at most 3"), "{err}");
}
