//! consul-election: the client-side leader election of Consul's guide
//! ("Application leader election with sessions"), on the key
//! `service/<name>/leader`.
//!
//! 1. Every candidate has a session (the client's, made at connect:
//!    behavior `release`, lock-delay 15 s).
//! 2. `PUT key?acquire=<session>` with its session as the value, so that
//!    the others can read who leads. `true`: it leads.
//! 3. `false`: `GET key` — the leader is the key's `Session` — then watch
//!    the key with blocking queries (`GET key?index=N`), each past the
//!    index the last answer carried.
//! 4. When an answer shows no `Session` (the leader stepped down, or its
//!    session was invalidated), go to 2. An acquire refused while no
//!    session holds the key is a lock-delay: the guide separates the tries
//!    "by a timed wait"; the model sleeps `DefaultLockRetryTime` (5 s), as
//!    `api.Lock` does, then goes to 2.
//! 5. Step down: `PUT key?release=<session>`.
//!
//! The winner also reads the key (step 3 for everyone): the read brings
//! `LockIndex`, its term, the token a fencing application writes with.
//! The leader learns that its session ended from the store's expiry
//! notice, which stands for the answer to a blocking query it would keep
//! on the key (ARCHITECTURE.md). Every follower's blocking query is
//! answered by each change of the key: the herd.

use super::consul::{self, LEADER_KEY, LOCK_RETRY_MS};
use super::{Registered, Variant, VariantKind};
use crate::ids::{Data, Key, SessionId};
use crate::msg::{ConsulCmd, ConsulReply, KvPair, Reply, Request, SessionOpts, WatchEvent};
use crate::recipe::{Application, ElectionRecipe, Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};
use std::time::Duration;

pub const REGISTERED: Registered = Registered {
    name: "consul-election",
    aliases: &["consul-leader-election"],
    summary: "Consul's leader election guide: acquire service/<name>/leader with the session, \
              followers read the key and watch it with blocking queries, try again when it has \
              no session; LockIndex as the term",
    variants: &[Variant {
        name: "lock-delay-0",
        summary: "sessions with no lock-delay: a follower may take over the moment the leader's \
                  session is invalidated",
        kind: VariantKind::Departure,
    }],
    build: |variant| {
        RecipeRef::new(ConsulElection {
            session: match variant {
                Some("lock-delay-0") => no_lock_delay(),
                _ => SessionOpts::default(),
            },
        })
    },
};

/// `lock-delay-0`'s sessions: Consul's defaults but the lock-delay.
fn no_lock_delay() -> SessionOpts {
    SessionOpts {
        lock_delay_ms: 0,
        ..SessionOpts::default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConsulElection {
    /// What each candidate's session asks for.
    pub session: SessionOpts,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `PUT key?acquire` in flight.
    Acquiring,
    /// The acquire has answered: `GET key` in flight.
    Reading,
    /// A blocking query in flight; the last answer named `leader`.
    Watching {
        leader: Option<SessionId>,
    },
    /// The blocking query is held: following `leader` until the key
    /// changes (`me`: our session, the value of our next acquire).
    Following {
        leader: Option<SessionId>,
        me: SessionId,
    },
    /// Refused while no session held the key (a lock-delay): sleeping 5 s.
    Delayed,
    Leading {
        lock_index: u64,
    },
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Watching { leader } => leader.relabel(p),
            State::Following { leader, me } => {
                leader.relabel(p);
                me.relabel(p);
            }
            State::Acquiring | State::Reading | State::Delayed | State::Leading { .. } => {}
        }
    }
}

impl Recipe for ConsulElection {
    type State = State;

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        (self.session == no_lock_delay()).then_some("lock-delay-0")
    }

    fn face(&self) -> Face {
        Face::Consul
    }

    fn setup(&self) -> Setup {
        consul::setup(LEADER_KEY)
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        (State::Acquiring, acquire(session))
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        let Reply::Consul(reply) = reply else {
            return Step::Unexpected;
        };
        match (*st, reply) {
            // Won or not, read the key: who leads, and our term if we do.
            (State::Acquiring, ConsulReply::Bool(_)) => read(st),
            (State::Reading, ConsulReply::Pair { pair, index }) => {
                decide(session, st, *pair, *index)
            }
            (State::Watching { leader }, ConsulReply::Held) => {
                *st = State::Following {
                    leader,
                    me: session,
                };
                Step::Wait
            }
            // The key changed before the query reached the store.
            (State::Watching { .. }, ConsulReply::Pair { pair, index }) => {
                changed(session, st, *pair, *index)
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            // Following means the last read showed another session
            // leading, and only we put ours there.
            (State::Following { me, .. }, WatchEvent::Consul { pair, index }) => {
                match pair.and_then(|p| p.session) {
                    Some(leader) => watch(st, Some(leader), *index),
                    None => try_again(me, st),
                }
            }
            _ => Step::Wait,
        }
    }

    fn on_wake(&self, session: SessionId, st: &mut State) -> Step {
        match *st {
            State::Delayed => try_again(session, st),
            State::Acquiring
            | State::Reading
            | State::Watching { .. }
            | State::Following { .. }
            | State::Leading { .. } => Step::Unexpected,
        }
    }

    fn longest_sleep(&self) -> Duration {
        consul::millis(LOCK_RETRY_MS)
    }

    /// Step down: `PUT key?release=<session>`.
    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Leading { .. } => Some(consul::call(ConsulCmd::Release {
                key: Key::fixed(LEADER_KEY),
            })),
            State::Acquiring
            | State::Reading
            | State::Watching { .. }
            | State::Following { .. }
            | State::Delayed => None,
        }
    }

    /// Every follower's blocking query is on the key: the `k`-th
    /// resignation wakes the `n - k` candidates still following.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(n - k)
    }

    fn application(&self) -> Application<'_, State> {
        Application::Election(self)
    }

    fn consul_session(&self) -> Option<SessionOpts> {
        Some(self.session)
    }

    fn with_consul_session(&self, opts: SessionOpts) -> Result<RecipeRef, String> {
        consul::with_session(opts, |session| ConsulElection { session })
    }
}

/// A follower has seen the leader its last answer named.
impl ElectionRecipe<State> for ConsulElection {
    fn leader_seen(&self, st: &State) -> Option<SessionId> {
        match st {
            State::Watching { leader } | State::Following { leader, .. } => *leader,
            State::Acquiring | State::Reading | State::Delayed | State::Leading { .. } => None,
        }
    }
}

/// `PUT key?acquire=<session>`, the session as the value.
fn acquire(session: SessionId) -> Request {
    consul::call(ConsulCmd::Acquire {
        key: Key::fixed(LEADER_KEY),
        value: Data::Session(session),
    })
}

/// `GET key`: who leads now.
fn read(st: &mut State) -> Step {
    *st = State::Reading;
    Step::Send(consul::get(LEADER_KEY, 0, 0))
}

/// What the read after an acquire shows: our session leads (with its
/// `LockIndex` as the term), another does (follow it), or none does — the
/// acquire was refused within a lock-delay: wait, then try again.
fn decide(session: SessionId, st: &mut State, pair: Option<KvPair>, index: u64) -> Step {
    match pair {
        Some(p) if p.session == Some(session) => {
            *st = State::Leading {
                lock_index: p.lock_index,
            };
            Step::Acquired {
                token: p.lock_index,
            }
        }
        Some(KvPair {
            session: Some(leader),
            ..
        }) => watch(st, Some(leader), index),
        Some(_) | None => {
            *st = State::Delayed;
            Step::Sleep {
                after: consul::millis(LOCK_RETRY_MS),
            }
        }
    }
}

/// A blocking query's answer: someone leads (watch on), or nobody does
/// (try again).
fn changed(session: SessionId, st: &mut State, pair: Option<KvPair>, index: u64) -> Step {
    match pair.and_then(|p| p.session) {
        Some(leader) if leader != session => watch(st, Some(leader), index),
        Some(_) | None => try_again(session, st),
    }
}

/// Watch the key: a blocking query past `index`, following `leader`.
fn watch(st: &mut State, leader: Option<SessionId>, index: u64) -> Step {
    *st = State::Watching { leader };
    Step::Send(consul::get(LEADER_KEY, index, 0))
}

/// The key has no session: acquire it.
fn try_again(session: SessionId, st: &mut State) -> Step {
    *st = State::Acquiring;
    Step::Send(acquire(session))
}
