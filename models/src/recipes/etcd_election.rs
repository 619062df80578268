//! etcd-election: etcd clientv3 `concurrency.Election` (election.go,
//! key.go).
//!
//! The session is a lease kept alive every TTL/3; the key is
//! `pfx/<lease id hex>`.
//! - `Campaign`: one txn: if `create_revision(key) == 0` then put(key, lease)
//!   else get(key); `leaderRev` is the put's revision or the key's create
//!   revision. Then `waitDeletes(pfx, leaderRev-1)`: loop { range(pfx,
//!   last-created, max_create_revision = leaderRev-1); none: return; else
//!   watch that key from the range's revision until its delete }. Campaign
//!   then returns: we lead, with `leaderRev` as the epoch.
//! - `Resign`: delete(key) if its create revision is `leaderRev` (modelled as
//!   a plain delete: the key is named by our lease, which no one else holds).
//! - `Leader`: the first-created key under pfx.
//!
//! Variant `v3.5` (default, as shipped in 3.4, 3.5 and at head): nothing in
//! `Campaign` watches the session, and nothing checks our own key after
//! `waitDeletes`; a candidate whose lease expired while it waited returns
//! leadership with no key (the phantom leader, etcd #19597, #11007, #12334,
//! #11777). Variant `checked`: after `waitDeletes`, get(key); gone means the
//! session expired (the check proposed upstream, PR #22387).
//!
//! `Campaign` does not learn who leads, and the model has no `Observe`
//! stream: a campaigning candidate names no leader (see ARCHITECTURE.md).

use super::names::{session_key, KEYS};
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::{Key, SessionId};
use crate::msg::{Compare, Keys};
use crate::msg::{EtcdEvent, OpResult, Range, Reply, Request, Sort, Txn, TxnOp, WatchEvent};
use crate::recipe::{Application, ElectionRecipe, Face, LeaseIds, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "etcd-election",
    aliases: &[],
    summary: "etcd clientv3 concurrency.Election: Campaign = put-if-absent of pfx/<lease>, \
              then waitDeletes on every older key",
    variants: &[
        Variant {
            name: "v3.5",
            summary: "as shipped (3.4, 3.5, head): no check of one's own key after waitDeletes \
                      (the phantom leader)",
            kind: VariantKind::Default,
        },
        Variant {
            name: "checked",
            summary:
                "get(own key) after waitDeletes; gone means the session expired (etcd PR #22387)",
            kind: VariantKind::Departure,
        },
    ],
    build: |variant| {
        RecipeRef::new(EtcdElection {
            check_own_key: variant == Some("checked"),
        })
    },
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EtcdElection {
    /// `checked`: get(our key) after waitDeletes.
    pub check_own_key: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Campaign's txn is in flight.
    Putting,
    /// waitDeletes: the last-created range below `leader_rev` is in flight.
    Ranging {
        leader_rev: u64,
    },
    /// waitDelete: the watch on `key` is being created.
    Watching {
        leader_rev: u64,
        key: Key,
    },
    /// waitDelete: waiting for `key`'s delete.
    Waiting {
        leader_rev: u64,
        key: Key,
    },
    /// `checked`: get(our key) in flight.
    Checking {
        leader_rev: u64,
    },
    Leading {
        leader_rev: u64,
    },
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Watching { key, .. } | State::Waiting { key, .. } => key.relabel(p),
            State::Putting
            | State::Ranging { .. }
            | State::Checking { .. }
            | State::Leading { .. } => {}
        }
    }
}

impl Recipe for EtcdElection {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Election(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        self.check_own_key.then_some("checked")
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
        (State::Putting, campaign(session))
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (
                State::Putting,
                Reply::TxnResult {
                    succeeded,
                    revision,
                    responses,
                },
            ) => {
                let leader_rev = if *succeeded {
                    *revision
                } else {
                    match responses.first() {
                        Some(OpResult::Range { kvs }) if !kvs.is_empty() => kvs[0].create_revision,
                        _ => return Step::Unexpected,
                    }
                };
                wait_deletes(st, leader_rev)
            }
            (State::Ranging { leader_rev }, Reply::RangeResult { revision, kvs }) => {
                match kvs.first() {
                    None => self.campaign_returns(session, st, leader_rev),
                    Some(last) => {
                        *st = State::Watching {
                            leader_rev,
                            key: last.key,
                        };
                        Step::Send(Request::Watch {
                            key: last.key,
                            start_revision: *revision,
                        })
                    }
                }
            }
            (State::Watching { leader_rev, key }, Reply::WatchCreated { .. }) => {
                *st = State::Waiting { leader_rev, key };
                Step::Wait
            }
            (State::Checking { leader_rev }, Reply::RangeResult { kvs, .. }) => {
                if kvs.is_empty() {
                    Step::SessionLost
                } else {
                    lead(st, leader_rev)
                }
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, ev: &WatchEvent) -> Step {
        match (*st, ev) {
            (
                State::Waiting { leader_rev, key },
                WatchEvent::Etcd {
                    kind: EtcdEvent::Delete,
                    key: deleted,
                    ..
                },
            ) if *deleted == key => wait_deletes(st, leader_rev),
            _ => Step::Wait,
        }
    }

    /// `Campaign` does not watch the session: it keeps waiting.
    fn on_expired(&self, _: &mut State) -> Step {
        Step::Wait
    }

    fn release(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Leading { .. } => Some(Request::DeleteKey {
                key: session_key(session),
            }),
            State::Putting
            | State::Ranging { .. }
            | State::Watching { .. }
            | State::Waiting { .. }
            | State::Checking { .. } => None,
        }
    }

    /// Each candidate waits on the key created just before its own.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(u32::from(k < n))
    }
}

/// etcd's `Campaign` names no leader to a candidate that waits: its
/// followers have seen none.
impl ElectionRecipe<State> for EtcdElection {
    fn leader_seen(&self, _: &State) -> Option<SessionId> {
        None
    }
}

impl EtcdElection {
    /// waitDeletes found no older key.
    fn campaign_returns(&self, session: SessionId, st: &mut State, leader_rev: u64) -> Step {
        if self.check_own_key {
            *st = State::Checking { leader_rev };
            Step::Send(Request::Range(Range::of(Keys::One(session_key(session)))))
        } else {
            lead(st, leader_rev)
        }
    }
}

/// Campaign's txn: put our key if it does not exist, else read it.
fn campaign(session: SessionId) -> Request {
    let key = session_key(session);
    Request::Txn(Box::new(Txn {
        compares: vec![Compare::created_at(key, 0)],
        success: vec![TxnOp::Put {
            key,
            value: Data::Empty,
            lease: Some(session),
        }],
        failure: vec![TxnOp::Range(Range::of(Keys::One(key)))],
    }))
}

/// One pass of waitDeletes: the last key created before ours.
fn wait_deletes(st: &mut State, leader_rev: u64) -> Step {
    *st = State::Ranging { leader_rev };
    Step::Send(Request::Range(Range {
        sort: Sort::Descend,
        limit: 1,
        max_create_revision: leader_rev - 1,
        ..Range::of(Keys::Prefix(KEYS))
    }))
}

fn lead(st: &mut State, leader_rev: u64) -> Step {
    *st = State::Leading { leader_rev };
    Step::Acquired { token: leader_rev }
}
