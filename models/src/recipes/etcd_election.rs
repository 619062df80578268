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
//! `Campaign` does not learn who leads: a campaigning candidate names no
//! leader. An observer (`observers`, a client that does not campaign) runs
//! `Observe` (election.go `observe`), and names the last leader it sent on
//! its channel:
//! 1. `Get(pfx, WithFirstCreate())`: the first-created key, linearizable
//!    (the leader's read index).
//! 2. None: watch the prefix from the Get's revision and take the first
//!    PUT, its revision as the header's.
//! 3. Send that key's leader on the channel; watch the key from the
//!    header's revision + 1 until its DELETE (a PUT, `Proclaim`, sends the
//!    same leader again); go to 1.
//!
//! Variant `serializable-observe`: `Observe` through a client whose `KV`
//! adds `WithSerializable()` to its `Get`s (a wrapper installed on
//! `Client.KV`, as the `namespace` and `ordering` packages install theirs;
//! `Observe` has no option of its own): the first-created key is read from
//! the member's own state.

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
        Variant {
            name: "serializable-observe",
            summary: "Observe through a KV wrapper adding WithSerializable(): its Get is \
                      answered from the member's own state",
            kind: VariantKind::Departure,
        },
    ],
    build: |variant| {
        RecipeRef::new(EtcdElection {
            check_own_key: variant == Some("checked"),
            serializable_observe: variant == Some("serializable-observe"),
        })
    },
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EtcdElection {
    /// `checked`: get(our key) after waitDeletes.
    pub check_own_key: bool,
    /// `serializable-observe`: `Observe`'s `Get` is serializable.
    pub serializable_observe: bool,
}

/// A leader `Observe` sent on its channel: the session whose key it is,
/// and the key's create revision (its term).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reported {
    pub leader: SessionId,
    pub term: u64,
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
    /// Observe: the first-created key under the prefix in flight;
    /// `reported` is the last leader sent on the channel.
    ObserveGetting {
        reported: Option<Reported>,
    },
    /// Observe, no key found: the prefix watch from revision `from`
    /// being created.
    ObserveWatchingPrefix {
        reported: Option<Reported>,
        from: u64,
    },
    /// … waiting for its first PUT.
    ObserveWaitingPut {
        reported: Option<Reported>,
        from: u64,
    },
    /// Observe: the watch on the reported leader's key from revision
    /// `from` being created.
    ObserveWatchingKey {
        reported: Reported,
        from: u64,
    },
    /// … waiting for the key's DELETE.
    Observing {
        reported: Reported,
        from: u64,
    },
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Watching { key, .. } | State::Waiting { key, .. } => key.relabel(p),
            State::ObserveGetting { reported }
            | State::ObserveWatchingPrefix { reported, .. }
            | State::ObserveWaitingPut { reported, .. } => {
                if let Some(r) = reported {
                    r.leader.relabel(p);
                }
            }
            State::ObserveWatchingKey { reported, .. } | State::Observing { reported, .. } => {
                reported.leader.relabel(p)
            }
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
        if self.check_own_key {
            Some("checked")
        } else {
            self.serializable_observe.then_some("serializable-observe")
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
            (State::ObserveGetting { reported }, Reply::RangeResult { revision, kvs }) => {
                match kvs.first() {
                    None => {
                        *st = State::ObserveWatchingPrefix {
                            reported,
                            from: *revision,
                        };
                        Step::Send(Request::WatchRange {
                            keys: Keys::Prefix(KEYS),
                            start_revision: *revision,
                        })
                    }
                    Some(kv) => match kv.key.lease {
                        Some(leader) => report(
                            st,
                            Reported {
                                leader,
                                term: kv.create_revision,
                            },
                            *revision,
                        ),
                        None => Step::Unexpected,
                    },
                }
            }
            (State::ObserveWatchingPrefix { reported, from }, Reply::WatchCreated { .. }) => {
                *st = State::ObserveWaitingPut { reported, from };
                Step::Wait
            }
            (State::ObserveWatchingKey { reported, from }, Reply::WatchCreated { .. }) => {
                *st = State::Observing { reported, from };
                Step::Wait
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
            // Only a PUT is taken: a DELETE would make observe() spin.
            // Only this pass's watch's, too: etcd cancels each watch when
            // observe() is done with it, where the model's store keeps
            // them (an earlier pass's event is older than `from`).
            (
                State::ObserveWaitingPut { from, .. },
                WatchEvent::Etcd {
                    kind: EtcdEvent::Put,
                    key,
                    revision,
                },
            ) if *revision >= from => match key.lease {
                Some(leader) => report(
                    st,
                    Reported {
                        leader,
                        term: *revision,
                    },
                    *revision,
                ),
                None => Step::Unexpected,
            },
            (
                State::Observing { reported, from },
                WatchEvent::Etcd {
                    kind: EtcdEvent::Delete,
                    key,
                    revision,
                },
            ) if *key == session_key(reported.leader) && *revision >= from => {
                *st = State::ObserveGetting {
                    reported: Some(reported),
                };
                Step::Send(self.observe_get())
            }
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
            | State::Checking { .. }
            | State::ObserveGetting { .. }
            | State::ObserveWatchingPrefix { .. }
            | State::ObserveWaitingPut { .. }
            | State::ObserveWatchingKey { .. }
            | State::Observing { .. } => None,
        }
    }

    /// Each candidate waits on the key created just before its own.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(u32::from(k < n))
    }
}

/// etcd's `Campaign` names no leader to a candidate that waits; an
/// observer names the last leader `Observe` sent on its channel.
impl ElectionRecipe<State> for EtcdElection {
    fn leader_seen(&self, st: &State) -> Option<SessionId> {
        self.report_seen(st).map(|(leader, _)| leader)
    }

    fn report_seen(&self, st: &State) -> Option<(SessionId, u64)> {
        match *st {
            State::ObserveGetting { reported }
            | State::ObserveWatchingPrefix { reported, .. }
            | State::ObserveWaitingPut { reported, .. } => reported.map(|r| (r.leader, r.term)),
            State::ObserveWatchingKey { reported, .. } | State::Observing { reported, .. } => {
                Some((reported.leader, reported.term))
            }
            State::Putting
            | State::Ranging { .. }
            | State::Watching { .. }
            | State::Waiting { .. }
            | State::Checking { .. }
            | State::Leading { .. } => None,
        }
    }

    fn observe(&self, _: SessionId) -> Option<(State, Request)> {
        Some((State::ObserveGetting { reported: None }, self.observe_get()))
    }
}

impl EtcdElection {
    /// Observe's `Get(pfx, WithFirstCreate())`: linearizable as shipped.
    fn observe_get(&self) -> Request {
        Request::Range(Range {
            sort: Sort::Ascend,
            limit: 1,
            serializable: self.serializable_observe,
            ..Range::of(Keys::Prefix(KEYS))
        })
    }

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

/// Observe sends `reported` on its channel, then watches its key from
/// after `header`.
fn report(st: &mut State, reported: Reported, header: u64) -> Step {
    let from = header + 1;
    *st = State::ObserveWatchingKey { reported, from };
    Step::Send(Request::Watch {
        key: session_key(reported.leader),
        start_revision: from,
    })
}

fn lead(st: &mut State, leader_rev: u64) -> Step {
    *st = State::Leading { leader_rev };
    Step::Acquired { token: leader_rev }
}
