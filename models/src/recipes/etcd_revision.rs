//! etcd-revision: etcd clientv3 `concurrency.Mutex` (mutex.go, key.go), as
//! etcd 3.5 ships it (variant `v3.5`, the default) and as 3.4 did (`v3.4`).
//!
//! The session is a lease kept alive every TTL/3; the key is
//! `pfx/<lease id hex>`.
//! 1. tryAcquire, one txn: if `create_revision(key) == 0` then put(key, lease)
//!    and get the first-created key under pfx, else get(key) and the
//!    first-created key. `myRev` is the put's revision or the existing key's
//!    create revision. Hold iff there is no first-created key or it has `myRev`.
//! 2. waitDeletes(pfx, myRev-1): loop { range(pfx, last-created,
//!    max_create_revision = myRev-1); none: done; else watch that key from the
//!    range's revision until its delete }.
//! 3. get(key): gone means the session expired (`ErrSessionExpired`), not a hold.
//!    3.5 added this step (etcd #11456); no 3.4.x release has it, so a 3.4
//!    waiter whose lease expired while it waited takes the lock with no key.
//! 4. Release: delete(key). The token is `myRev`.
//!
//! Variant `trylock` is 3.5's `TryLock`: step 1, and if someone else's key
//! is first, delete our key and return `ErrLocked` (the round ends without
//! a hold) instead of waiting.

use super::names::{session_key, KEYS};
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::{Key, SessionId};
use crate::msg::{Compare, Keys};
use crate::msg::{EtcdEvent, OpResult, Range, Reply, Request, Sort, Txn, TxnOp, WatchEvent};
use crate::recipe::{
    Application, Face, LeaseIds, LockRecipe, Recipe, RecipeRef, Reentry, Setup, Step,
};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "etcd-revision",
    aliases: &["etcd-mutex"],
    summary: "etcd clientv3 concurrency.Mutex: lease-bound keys ordered by create revision, \
              waitDeletes on the last key created before one's own, then (3.5) get(myKey)",
    variants: &[
        Variant {
            name: "v3.5",
            summary: "as etcd 3.5 ships it: get(myKey) after waitDeletes, the fix of etcd #11456",
            kind: VariantKind::Default,
        },
        Variant {
            name: "v3.4",
            summary: "as every etcd 3.4.x ships it (etcdctl lock): no get(myKey) after waitDeletes, so etcd #11456",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "trylock",
            summary: "3.5's TryLock: if the lock is held, delete one's key and return ErrLocked instead of waiting",
            kind: VariantKind::Departure,
        },
    ],
    build: |variant| {
        RecipeRef::new(EtcdRevision {
            verify_after_wait: variant != Some("v3.4"),
            try_only: variant == Some("trylock"),
        })
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EtcdRevision {
    /// Step 3: `get(myKey)` after waitDeletes, so a waiter whose lease
    /// expired while it waited does not take the lock.
    pub verify_after_wait: bool,
    /// `TryLock`: give up at once, key deleted, when the lock is held.
    pub try_only: bool,
}

impl Default for EtcdRevision {
    fn default() -> Self {
        EtcdRevision {
            verify_after_wait: true,
            try_only: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The tryAcquire txn is in flight.
    Trying,
    /// waitDeletes: the last-created range below `my_rev` is in flight.
    Ranging {
        my_rev: u64,
    },
    /// waitDelete: the watch on `key` is being created.
    Watching {
        my_rev: u64,
        key: Key,
    },
    /// waitDelete: waiting for `key`'s delete.
    Waiting {
        my_rev: u64,
        key: Key,
    },
    /// `get(myKey)`: is our key still there?
    Verifying {
        my_rev: u64,
    },
    Holding {
        my_rev: u64,
    },
    /// `TryLock` lost: the delete of our key is in flight.
    Abandoning,
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Watching { key, .. } | State::Waiting { key, .. } => key.relabel(p),
            State::Trying
            | State::Ranging { .. }
            | State::Verifying { .. }
            | State::Holding { .. }
            | State::Abandoning => {}
        }
    }
}

impl Recipe for EtcdRevision {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Lock(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match (self.try_only, self.verify_after_wait) {
            (true, _) => Some("trylock"),
            (false, false) => Some("v3.4"),
            (false, true) => None,
        }
    }

    fn face(&self) -> Face {
        Face::Etcd
    }

    /// Leases numbered by client (`LeaseIds::ByClient`): the recipe
    /// ranges over `/lock/` sorted by create revision one key at a time,
    /// or reads its own key, so the order lease keys sort in never shows
    /// and no state need carry the order the leases were granted in.
    fn setup(&self) -> Setup {
        Setup {
            leases: LeaseIds::ByClient,
            ..Setup::bare()
        }
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        acquire(session)
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        on_reply(*self, session, st, reply)
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        on_event(st, event)
    }

    /// `Lock` does not watch the session: its waitDeletes runs on the
    /// caller's context, so a lease that expires while it waits goes unseen
    /// until it returns (3.5's get(myKey) then sees the key gone).
    fn on_expired(&self, _: &mut State) -> Step {
        Step::Wait
    }

    fn release(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding { .. } => Some(release(session)),
            State::Trying
            | State::Ranging { .. }
            | State::Watching { .. }
            | State::Waiting { .. }
            | State::Verifying { .. }
            | State::Abandoning => None,
        }
    }

    /// Each waiter watches the key created just before its own. `TryLock`
    /// has no herd baseline to match: everyone asks at once, one holds and
    /// the rest give up, so there is one release, not `n`.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        (!self.try_only).then_some(u32::from(k < n))
    }
}

impl LockRecipe<State> for EtcdRevision {
    /// `Lock` again by the holder: the txn finds the session's key, which is
    /// first in line, and returns at once; one `Unlock` deletes it.
    fn reentry(&self) -> Reentry {
        Reentry::Again
    }
}

fn first_created() -> Range {
    Range {
        sort: Sort::Ascend,
        limit: 1,
        max_create_revision: 0,
        ..Range::of(Keys::Prefix(KEYS))
    }
}

fn get(key: Key) -> Range {
    Range::of(Keys::One(key))
}

fn last_created_below(my_rev: u64) -> Request {
    Request::Range(Range {
        sort: Sort::Descend,
        limit: 1,
        max_create_revision: my_rev - 1,
        ..Range::of(Keys::Prefix(KEYS))
    })
}

fn acquire(session: SessionId) -> (State, Request) {
    let key = session_key(session);
    let txn = Txn {
        compares: vec![Compare::created_at(key, 0)],
        success: vec![
            TxnOp::Put {
                key,
                value: Data::Empty,
                lease: Some(session),
            },
            TxnOp::Range(first_created()),
        ],
        failure: vec![TxnOp::Range(get(key)), TxnOp::Range(first_created())],
    };
    (State::Trying, Request::Txn(Box::new(txn)))
}

fn range_kvs(op: Option<&OpResult>) -> &[crate::msg::Kv] {
    match op {
        Some(OpResult::Range { kvs }) => kvs,
        _ => &[],
    }
}

fn on_reply(recipe: EtcdRevision, session: SessionId, st: &mut State, reply: &Reply) -> Step {
    match (*st, reply) {
        (
            State::Trying,
            Reply::TxnResult {
                succeeded,
                revision,
                responses,
            },
        ) => {
            let my_rev = if *succeeded {
                *revision
            } else {
                match range_kvs(responses.first()).first() {
                    Some(kv) => kv.create_revision,
                    None => return Step::Unexpected,
                }
            };
            let owner = range_kvs(responses.get(1)).first();
            if owner.is_none_or(|kv| kv.create_revision == my_rev) {
                *st = State::Holding { my_rev };
                Step::Acquired { token: my_rev }
            } else if recipe.try_only {
                // "Cannot lock, so delete the key", then ErrLocked.
                *st = State::Abandoning;
                Step::Send(release(session))
            } else {
                *st = State::Ranging { my_rev };
                Step::Send(last_created_below(my_rev))
            }
        }
        (State::Abandoning, Reply::DeleteResult { .. }) => Step::GaveUp,
        (State::Ranging { my_rev }, Reply::RangeResult { revision, kvs }) => match kvs.first() {
            None if recipe.verify_after_wait => {
                *st = State::Verifying { my_rev };
                Step::Send(Request::Range(get(session_key(session))))
            }
            None => {
                *st = State::Holding { my_rev };
                Step::Acquired { token: my_rev }
            }
            Some(last) => {
                *st = State::Watching {
                    my_rev,
                    key: last.key,
                };
                Step::Send(Request::Watch {
                    key: last.key,
                    start_revision: *revision,
                })
            }
        },
        (State::Watching { my_rev, key }, Reply::WatchCreated { .. }) => {
            *st = State::Waiting { my_rev, key };
            Step::Wait
        }
        (State::Verifying { my_rev }, Reply::RangeResult { kvs, .. }) => {
            if kvs.is_empty() {
                Step::SessionLost
            } else {
                *st = State::Holding { my_rev };
                Step::Acquired { token: my_rev }
            }
        }
        _ => Step::Unexpected,
    }
}

fn on_event(st: &mut State, ev: &WatchEvent) -> Step {
    match (*st, ev) {
        (
            State::Waiting { my_rev, key },
            WatchEvent::Etcd {
                kind: EtcdEvent::Delete,
                key: deleted,
                ..
            },
        ) if *deleted == key => {
            *st = State::Ranging { my_rev };
            Step::Send(last_created_below(my_rev))
        }
        _ => Step::Wait,
    }
}

fn release(session: SessionId) -> Request {
    Request::DeleteKey {
        key: session_key(session),
    }
}
