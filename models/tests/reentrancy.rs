//! A holder that acquires again (`reentries`), as each library answers a
//! second acquire: Curator counts it (reentrant), kazoo's `Lock` retries
//! for ever on itself, etcd's `Mutex.Lock` acquires again at once and one
//! `Unlock` frees both callers. The verdicts, state counts and shortest
//! counterexamples are pinned.

use models::checker::{check, CheckOptions, CheckResult, Status};
use models::model::{ModelCfg, Setting};
use models::properties::PropertyName;
use models::recipe::Reentry;
use models::recipes;

fn check_with(recipe: &str, clients: u8, reentries: u8) -> CheckResult {
    let cfg = ModelCfg {
        reentries,
        ..ModelCfg::new(recipes::parse(recipe).unwrap(), clients)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete, "{recipe}: the check stopped at its state limit");
    r
}

fn verdict(r: &CheckResult, p: PropertyName) -> (Status, Option<usize>) {
    let v = r.property(p).expect("judged where holders re-enter");
    (v.status, v.path.as_ref().map(Vec::len))
}

const HOLDS: (Status, Option<usize>) = (Status::Holds, None);

/// Curator's `InterProcessMutex` counts a re-entry with no store request:
/// it is immediate and nothing else changes.
#[test]
fn curator_reenters_at_once() {
    for (clients, reentries, states) in [(2, 1, 397), (3, 1, 8_751), (3, 2, 11_187)] {
        let r = check_with("fair-predecessor:curator", clients, reentries);
        assert_eq!(r.unique_states, states, "{clients} clients, {reentries}");
        for p in [
            PropertyName::ReentryImmediate,
            PropertyName::MutualExclusion,
            PropertyName::ResourceExclusion,
            PropertyName::HolderOwnsKey,
            PropertyName::Progress,
        ] {
            let (status, _) = verdict(&r, p);
            assert_eq!(status, Status::Holds, "{p}, {clients} clients");
        }
    }
}

/// kazoo's `Lock`: a second blocking acquire by the holder retries for
/// ever without a request, so the holder never releases and nobody else
/// ever holds: the re-entry is not immediate, and progress fails.
#[test]
fn kazoo_deadlocks_on_itself() {
    let r = check_with("fair-predecessor:kazoo", 2, 1);
    assert_eq!(r.unique_states, 117);
    let (status, steps) = verdict(&r, PropertyName::ReentryImmediate);
    assert_eq!((status, steps), (Status::Violated, Some(10)));
    assert_eq!(verdict(&r, PropertyName::Progress).0, Status::Violated);
    // Nobody but the first holder ever holds.
    assert_eq!(verdict(&r, PropertyName::HandOff).0, Status::Violated);
    assert_eq!(verdict(&r, PropertyName::MutualExclusion), HOLDS);
}

/// etcd's `Mutex.Lock` again: the txn finds the session's own key first in
/// line and returns at once — through the store, so not immediate — and
/// the inner `Unlock` deletes the key while the outer caller still holds:
/// the next client acquires beside it.
#[test]
fn etcd_releases_both_callers_at_once() {
    for recipe in ["etcd-revision", "etcd-revision:v3.4"] {
        let r = check_with(recipe, 2, 1);
        assert_eq!(
            verdict(&r, PropertyName::ReentryImmediate),
            (Status::Violated, Some(8)),
            "{recipe}"
        );
        assert_eq!(
            verdict(&r, PropertyName::MutualExclusion),
            (Status::Violated, Some(19)),
            "{recipe}"
        );
        assert_eq!(
            verdict(&r, PropertyName::ResourceExclusion).0,
            Status::Violated
        );
        assert_eq!(verdict(&r, PropertyName::HolderOwnsKey), HOLDS, "{recipe}");
        assert_eq!(
            verdict(&r, PropertyName::Progress).0,
            Status::Holds,
            "{recipe}"
        );
    }
    assert_eq!(check_with("etcd-revision", 2, 1).unique_states, 1_032);
}

/// Without re-entries nothing changes: `reentry_immediate` is not judged,
/// and the state count is the one pinned elsewhere.
#[test]
fn without_reentries_the_property_is_not_judged() {
    let r = check_with("fair-predecessor:curator", 2, 0);
    assert!(r.property(PropertyName::ReentryImmediate).is_none());
}

/// Re-entries are refused where the recipe's source has no second acquire
/// to model, and beyond the bound; the error names the recipes that do.
#[test]
fn reentries_are_refused_where_nothing_models_them() {
    for recipe in ["fair-predecessor", "unfair-create", "zk-fair-election"] {
        let cfg = ModelCfg {
            reentries: 1,
            ..ModelCfg::new(recipes::parse(recipe).unwrap(), 2)
        };
        let e = cfg.validate().unwrap_err();
        assert_eq!(e.setting, Setting::Reentries, "{recipe}");
        assert!(
            e.reason.contains(
                "recipes that do: fair-predecessor:curator, fair-predecessor:kazoo, \
                 fair-predecessor:sync, etcd-revision, etcd-revision:v3.4, etcd-revision:trylock"
            ),
            "{e}"
        );
    }
    let cfg = ModelCfg {
        reentries: 3,
        ..ModelCfg::new(recipes::parse("fair-predecessor:curator").unwrap(), 2)
    };
    assert!(cfg.validate().unwrap_err().reason.contains("at most 2"));
    let answers: Vec<Reentry> = [
        "fair-predecessor:curator",
        "fair-predecessor:kazoo",
        "etcd-revision",
    ]
    .iter()
    .map(|r| recipes::parse(r).unwrap().reentry())
    .collect();
    assert_eq!(answers, [Reentry::Counted, Reentry::Blocks, Reentry::Again]);
}
