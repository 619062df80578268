//! The election, barrier and queue recipes, called directly and through
//! the registry, on what a mutation test of them found unpinned: no model
//! check, simulation or other test tells the mutant from the recipe.
//!
//! - A variant that reports itself as the default (`variant()` → `None`)
//!   checks as the variant it is, so every verdict stays right, but its
//!   `RecipeRef` then equals the default's, and reports, the CLI and
//!   scenario files name it as the default: `zk-barrier:article` shown
//!   as `zk-barrier`, a reproducer that replays the wrong recipe.
//! - etcd-election's steps that the model never reaches, as the lock
//!   recipes' in `lock_recipe_steps.rs`: a delete of a key other than the
//!   one waited on, and a failed campaign txn whose read is empty.

use models::recipes;
use models::recipes::names;
use models::recipes::VariantKind;

/// Every variant of every registered recipe — locks, elections, barriers,
/// queues — that departs from its recipe's default reports itself (and so
/// is told apart from the default, also once made for a group); one marked
/// as the default written out (`fair-predecessor:zk-docs`) builds the
/// default. Each recipe has at most one such name.
#[test]
fn every_variant_names_itself_or_is_the_default() {
    let mut departures = 0;
    for reg in recipes::REGISTRY {
        let name = reg.name;
        let default = recipes::lookup(name, None).unwrap();
        assert_eq!(default.variant(), None, "{name}");
        assert_eq!(default.id(), name);
        assert!(
            reg.variants
                .iter()
                .filter(|v| v.kind == VariantKind::Default)
                .count()
                <= 1,
            "{name} names its default twice"
        );
        for v in reg.variants {
            let variant = v.name;
            let r = recipes::lookup(name, Some(variant)).unwrap();
            assert_eq!(r.name(), name);
            if v.kind == VariantKind::Default {
                assert_eq!(r, default, "{name}:{variant} is the default");
                assert_eq!(r.variant(), None, "{name}:{variant}");
                continue;
            }
            departures += 1;
            assert_eq!(r.variant(), Some(variant), "{name}:{variant}");
            assert_eq!(r.id(), format!("{name}:{variant}"));
            assert_ne!(r, default, "{name}:{variant} is not the default");
            assert_eq!(r.in_group(3).variant(), Some(variant), "{name}:{variant}");
            assert_eq!(recipes::parse(&r.id()).unwrap(), r);
        }
    }
    // Every registered departure was looked at (not an empty registry).
    assert!(departures >= 13, "{departures} variants");
}

/// etcd's `waitDeletes` watches one key (the last created before ours) and
/// ranges again only on *its* delete. In the model a waiter's one watch is
/// on that key, so no other delete reaches it and no check tells a recipe
/// that wakes on any delete apart.
#[test]
fn etcd_election_wakes_only_for_the_key_it_waits_on() {
    use models::ids::SessionId;
    use models::msg::{EtcdEvent, Request, WatchEvent};
    use models::recipe::{Recipe, Step};
    use models::recipes::etcd_election::{EtcdElection, State};
    let (key, other) = (
        names::session_key(SessionId::first(0)),
        names::session_key(SessionId::first(1)),
    );
    let delete = |key| WatchEvent::Etcd {
        kind: EtcdEvent::Delete,
        key,
        revision: 9,
    };
    let r = EtcdElection::default();
    let mut st = State::Waiting { leader_rev: 5, key };
    assert_eq!(r.on_event(&mut st, &delete(other)), Step::Wait);
    assert_eq!(st, State::Waiting { leader_rev: 5, key });
    match r.on_event(&mut st, &delete(key)) {
        Step::Send(Request::Range(range)) => assert_eq!(range.max_create_revision, 4),
        s => panic!("{s:?}"),
    }
    assert_eq!(st, State::Ranging { leader_rev: 5 });
}

/// `Campaign`'s txn failed (our key exists: a resent txn after a lost
/// reply) but its read shows no key: the store broke the txn's atomicity.
/// The model's store never does, so only this test reaches the arm; the
/// recipe stops visibly (`Unexpected`) rather than indexing an empty read.
#[test]
fn etcd_election_a_failed_campaign_txn_with_an_empty_read_is_unexpected() {
    use models::ids::SessionId;
    use models::msg::{Kv, OpResult, Reply};
    use models::recipe::{Recipe, Step};
    use models::recipes::etcd_election::{EtcdElection, State};
    let me = SessionId::first(0);
    let r = EtcdElection::default();
    let failed = |kvs| Reply::TxnResult {
        succeeded: false,
        revision: 12,
        responses: vec![OpResult::Range { kvs }],
    };
    let mut st = State::Putting;
    assert_eq!(r.on_reply(me, &mut st, &failed(vec![])), Step::Unexpected);
    // With the key there, its create revision is the campaign's.
    let kv = Kv {
        key: names::session_key(me),
        create_revision: 7,
        mod_revision: 7,
        version: 1,
        lease: Some(me),
        value: models::ids::Data::Empty,
    };
    let mut st = State::Putting;
    assert!(matches!(
        r.on_reply(me, &mut st, &failed(vec![kv])),
        Step::Send(_)
    ));
    assert_eq!(st, State::Ranging { leader_rev: 7 });
}

/// etcd's `Observe`, step by step: the first-created key under the prefix
/// (a linearizable `Get`; `serializable-observe`'s is serializable); none
/// found, a watch on the prefix from the `Get`'s revision, whose first PUT
/// names the leader (a DELETE is passed over); then a watch on that key
/// from the next revision, a PUT on it (`Proclaim`) naming the same leader,
/// its DELETE starting again with the last leader still named.
#[test]
fn etcd_observe_follows_the_first_key_and_starts_again_on_its_delete() {
    use models::ids::SessionId;
    use models::msg::{EtcdEvent, Keys, Kv, Reply, Request, Sort, WatchEvent};
    use models::recipe::{ElectionRecipe, Recipe, Step};
    use models::recipes::etcd_election::{EtcdElection, State};
    let (me, first, next) = (
        SessionId::first(0),
        SessionId::first(1),
        SessionId::first(2),
    );
    let event = |kind, who, revision| WatchEvent::Etcd {
        kind,
        key: names::session_key(who),
        revision,
    };
    let r = EtcdElection::default();
    let (mut st, get) = r.observe(me).expect("etcd's election has Observe");
    let Request::Range(range) = &get else {
        panic!("{get:?}")
    };
    assert_eq!(
        (range.keys, range.sort, range.limit, range.serializable),
        (Keys::Prefix(names::KEYS), Sort::Ascend, 1, false)
    );
    assert_eq!(r.leader_seen(&st), None);
    let empty = Reply::RangeResult {
        revision: 5,
        kvs: vec![],
    };
    assert_eq!(
        r.on_reply(me, &mut st, &empty),
        Step::Send(Request::WatchRange {
            keys: Keys::Prefix(names::KEYS),
            start_revision: 5,
        })
    );
    assert_eq!(
        r.on_reply(me, &mut st, &Reply::WatchCreated { revision: 5 }),
        Step::Wait
    );
    assert_eq!(
        r.on_event(&mut st, &event(EtcdEvent::Delete, next, 6)),
        Step::Wait
    );
    assert_eq!(
        r.on_event(&mut st, &event(EtcdEvent::Put, first, 7)),
        Step::Send(Request::Watch {
            key: names::session_key(first),
            start_revision: 8,
        })
    );
    assert_eq!(r.leader_seen(&st), Some(first));
    r.on_reply(me, &mut st, &Reply::WatchCreated { revision: 7 });
    assert_eq!(
        r.on_event(&mut st, &event(EtcdEvent::Put, first, 8)),
        Step::Wait
    );
    assert_eq!(r.leader_seen(&st), Some(first));
    assert_eq!(r.on_event(&mut st, &event(EtcdEvent::Delete, first, 9)), {
        Step::Send(get.clone())
    });
    assert_eq!(r.leader_seen(&st), Some(first), "until the next report");
    let found = Reply::RangeResult {
        revision: 11,
        kvs: vec![Kv {
            key: names::session_key(next),
            create_revision: 10,
            mod_revision: 10,
            version: 1,
            lease: Some(next),
            value: models::ids::Data::Empty,
        }],
    };
    assert_eq!(
        r.on_reply(me, &mut st, &found),
        Step::Send(Request::Watch {
            key: names::session_key(next),
            start_revision: 12,
        })
    );
    assert_eq!(r.leader_seen(&st), Some(next));
    assert!(matches!(st, State::ObserveWatchingKey { .. }));
    // The KV wrapper's Get is serializable; nothing else changes.
    let wrapped = EtcdElection {
        serializable_observe: true,
        ..EtcdElection::default()
    };
    match wrapped.observe(me) {
        Some((_, Request::Range(range))) => assert!(range.serializable),
        other => panic!("{other:?}"),
    }
    // A candidate names no leader; nor does a recipe without Observe.
    assert_eq!(r.leader_seen(&State::Putting), None);
    let zk = models::recipes::zk_unfair_election::ZkUnfairElection::default();
    assert!(zk.observe(me).is_none());
}
