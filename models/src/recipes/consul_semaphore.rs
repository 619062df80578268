//! consul-semaphore: Consul's counting semaphore as the Go client's
//! `api.Semaphore` takes a slot (`api/semaphore.go`), under the prefix
//! `sem`, on a session with behavior `delete` (its contender key goes with
//! it) and the default lock-delay.
//!
//! 1. `PUT sem/<session>?acquire=<session>`: the contender entry.
//! 2. WAIT: `GET sem?recurse` (with `&index=N&wait=15s` once it has one).
//! 3. Decode `sem/.lock`, `{Limit, Holders}` (absent: no holders yet), and
//!    prune the holders whose session holds no key under the prefix
//!    (`pruneDeadHolders`).
//! 4. As many holders as the limit: `waitIndex = X-Consul-Index`, go to 2
//!    (a blocking query on the prefix: answered when any key under it
//!    changes).
//! 5. Else add ours and `PUT sem/.lock?cas=<ModifyIndex>` (0: create
//!    it). `true`: the slot is ours. `false`: go to 2, past the same
//!    index (another contender changed `.lock` first).
//! 6. Release: `GET sem/.lock`; if we are a holder, remove us and `PUT
//!    sem/.lock?cas=<ModifyIndex>`, and on `false` read again; then
//!    `DELETE sem/<session>`.
//!
//! The holder believes once its `cas` is `true`, as `Acquire` returns;
//! `monitorLock` tells it of the loss when its session ends (the store's
//! expiry notice stands for that answer: ARCHITECTURE.md). Its token is 0:
//! a slot has no sequencer (its contender key's `LockIndex` is always 1),
//! and the semaphore's holders write nothing. A holder paused past its
//! session is pruned by the next contender, which takes its slot while it
//! still believes: `permits_bound`. The lock-delay protects no slot: it
//! is on the dead session's own contender key, which nobody acquires.
//! Every waiter's blocking query is on the whole prefix, so any contender
//! entering, any `cas` and any release wakes them all: the herd.
//!
//! A reply lost while acquiring is an error from the Go client, which
//! does not retry: `Acquire` returns it, and destroys the session it made
//! (its deferred clean-up). The model sends `session/destroy` in place of
//! the request and starts over in a new session, as an application that
//! calls `Acquire` again does; resending a `cas` that went through would
//! find `.lock` changed, list itself among the holders and wait for its
//! own slot for ever. (`Release` also destroys the session when it is
//! done; the model's client keeps its session across rounds, as it does
//! for `consul-lock`.)
//!
//! Two more places where the model is not `semaphore.go`: a session that
//! expires while its client is still acquiring ends the attempt (the
//! store's expiry notice; the client starts over in a new session), where
//! the Go client lists on, may claim a slot with its dead session and
//! hears from its monitor's first listing, a round trip later, that it
//! holds nothing — a belief for that round trip the model does not
//! explore; and a reply lost while releasing is resent (the client's
//! resend, a `cas` refused or a delete that finds nothing), where
//! `Release` returns the error and its clean-up destroys the session.
//!
//! `.lock`'s value is a [`Holders`]: at most [`Holders::CAPACITY`] sessions
//! (so at most that many permits).

use super::consul::{self, SEMAPHORE_CONTENDERS, SEMAPHORE_LOCK, SEMAPHORE_PREFIX};
use super::Registered;
use crate::ids::{Data, Holders, Key, SessionId};
use crate::msg::{
    Behavior, ConsulCmd, ConsulReply, KvPair, Reply, Request, SessionOpts, WatchEvent,
};
use crate::recipe::{Application, Face, Recipe, RecipeRef, SemaphoreRecipe, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "consul-semaphore",
    aliases: &["api-semaphore"],
    summary: "Consul's semaphore as the Go client's api.Semaphore takes a slot: a contender key \
              per session, the holders listed in <prefix>/.lock, pruned of dead sessions and \
              updated by check-and-set",
    variants: &[],
    build: |_| {
        RecipeRef::new(ConsulSemaphore {
            permits: 1,
            session: SESSION,
        })
    },
};

/// `api.Semaphore`'s session: behavior `delete`, Consul's lock-delay.
const SESSION: SessionOpts = SessionOpts {
    behavior: Behavior::Delete,
    lock_delay_ms: 15_000,
};

/// `DefaultSemaphoreWaitTime`: a blocking query's wait, 15 s.
const WAIT_MS: u32 = 15_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConsulSemaphore {
    /// `SemaphoreOptions.Limit`.
    pub permits: u16,
    /// What its session asks for.
    pub session: SessionOpts,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The contender entry's acquire in flight.
    Entering,
    /// WAIT: the listing in flight, past `wait_index` (0: answered at once).
    Listing { wait_index: u64 },
    /// The listing is held as a blocking query (`me`: our session, which
    /// its answer may add to the holders).
    Blocked { me: SessionId, wait_index: u64 },
    /// `PUT .lock?cas=` with us among the holders, in flight.
    Claiming { wait_index: u64 },
    /// A reply was lost: `Acquire` failed, and its clean-up destroys the
    /// session.
    Abandoning,
    /// The slot is ours; releasing starts with `GET .lock`.
    Holding,
    /// Releasing: `GET .lock` again after a `cas` that failed.
    Reading,
    /// Releasing: `PUT .lock?cas=` without us, in flight.
    Leaving,
    /// Releasing: the contender entry's delete in flight.
    Deleting,
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Blocked { me, .. } => me.relabel(p),
            State::Entering
            | State::Listing { .. }
            | State::Claiming { .. }
            | State::Abandoning
            | State::Holding
            | State::Reading
            | State::Leaving
            | State::Deleting => {}
        }
    }
}

impl Recipe for ConsulSemaphore {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Semaphore(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn face(&self) -> Face {
        Face::Consul
    }

    fn setup(&self) -> Setup {
        consul::setup(SEMAPHORE_LOCK)
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        (
            State::Entering,
            consul::call(ConsulCmd::Acquire {
                key: contender(session),
                value: Data::Empty,
            }),
        )
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        let Reply::Consul(reply) = reply else {
            return Step::Unexpected;
        };
        match (*st, reply) {
            (State::Entering, ConsulReply::Bool(true)) => wait(st, 0),
            (State::Listing { wait_index }, ConsulReply::Held) => {
                *st = State::Blocked {
                    me: session,
                    wait_index,
                };
                Step::Wait
            }
            (State::Listing { wait_index }, ConsulReply::List { pairs, index }) => {
                self.decide(session, st, pairs, *index, wait_index)
            }
            (State::Claiming { .. }, ConsulReply::Bool(true)) => {
                *st = State::Holding;
                Step::Acquired { token: 0 }
            }
            // Another contender changed `.lock` first.
            (State::Claiming { wait_index }, ConsulReply::Bool(false)) => wait(st, wait_index),
            (State::Abandoning, ConsulReply::SessionDestroyed) => Step::SessionLost,
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            (State::Blocked { me, wait_index }, WatchEvent::ConsulList { pairs, index }) => {
                self.decide(me, st, pairs, *index, wait_index)
            }
            _ => Step::Wait,
        }
    }

    /// The Go client does not retry: `Acquire` fails and destroys its
    /// session.
    fn on_lost_reply(&self, st: &mut State, _: &Request) -> Request {
        *st = State::Abandoning;
        consul::call(ConsulCmd::SessionDestroy)
    }

    /// Release: `GET .lock` first.
    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding => Some(read_lock()),
            State::Entering
            | State::Listing { .. }
            | State::Blocked { .. }
            | State::Claiming { .. }
            | State::Abandoning
            | State::Reading
            | State::Leaving
            | State::Deleting => None,
        }
    }

    fn on_release_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        let Reply::Consul(reply) = reply else {
            return Step::Unexpected;
        };
        match (*st, reply) {
            (State::Holding | State::Reading, &ConsulReply::Pair { pair, .. }) => {
                self.leave(session, st, pair)
            }
            (State::Leaving, ConsulReply::Bool(true)) => delete_contender(session, st),
            (State::Leaving, ConsulReply::Bool(false)) => {
                *st = State::Reading;
                Step::Send(read_lock())
            }
            (State::Deleting, ConsulReply::Bool(_)) => Step::Released,
            _ => Step::Unexpected,
        }
    }

    fn consul_session(&self) -> Option<SessionOpts> {
        Some(self.session)
    }

    fn with_consul_session(&self, opts: SessionOpts) -> Result<RecipeRef, String> {
        consul::with_session(opts, |session| ConsulSemaphore { session, ..*self })
    }

    /// Every write under the prefix (a contender's entry, a `cas`, a
    /// release's delete) answers every waiter's listing: at 3 clients with
    /// 1 crash the check explores 26.9 million states, minutes on its own.
    fn checked_clients(&self) -> u8 {
        2
    }
}

impl SemaphoreRecipe for ConsulSemaphore {
    fn for_permits(&self, k: u16) -> RecipeRef {
        RecipeRef::new(ConsulSemaphore {
            permits: k,
            ..*self
        })
    }

    /// `.lock`'s value keeps at most [`Holders::CAPACITY`] holders.
    fn max_permits(&self) -> u16 {
        Holders::CAPACITY as u16
    }
}

impl ConsulSemaphore {
    fn limit(&self) -> u8 {
        u8::try_from(self.permits).unwrap_or(u8::MAX)
    }

    /// `.lock`'s holders as `decodeLock` reads them: none yet for an
    /// absent or empty value; `None` for a value that is no holder set of
    /// our limit (`ErrSemaphoreConflict`).
    fn holders(&self, lock: Option<KvPair>) -> Option<Holders> {
        match lock.map(|p| p.value) {
            None | Some(Data::Empty) => Some(Holders::new(self.limit())),
            Some(Data::Holders(h)) if h.limit() == self.limit() => Some(h),
            Some(Data::Holders(_) | Data::Number(_) | Data::Session(_)) => None,
        }
    }

    /// Steps 3 to 5, on a listing of the prefix at `index`.
    fn decide(
        &self,
        session: SessionId,
        st: &mut State,
        pairs: &[KvPair],
        index: u64,
        wait_index: u64,
    ) -> Step {
        let lock = pairs.iter().copied().find(|p| p.key == lock_key());
        let Some(holders) = self.holders(lock) else {
            return Step::Unexpected;
        };
        // pruneDeadHolders: a holder lives while its session holds a key.
        let holders = holders.retain(|h| {
            pairs
                .iter()
                .any(|p| p.session.is_some_and(|s| s.same_session(h)))
        });
        if holders.len() >= usize::from(self.limit()) {
            return wait(st, index);
        }
        let Some(claimed) = holders.with(session) else {
            return Step::Unexpected; // more permits than a value keeps
        };
        *st = State::Claiming { wait_index };
        Step::Send(consul::call(ConsulCmd::Cas {
            key: lock_key(),
            value: Data::Holders(claimed),
            index: lock.map_or(0, |p| p.modify_index),
        }))
    }

    /// Release, on `.lock` as read: take us out of the holders, or, not
    /// among them, delete the contender entry.
    fn leave(&self, session: SessionId, st: &mut State, lock: Option<KvPair>) -> Step {
        let Some(holders) = self.holders(lock) else {
            return Step::Unexpected;
        };
        if !holders.contains(session) {
            return delete_contender(session, st);
        }
        *st = State::Leaving;
        Step::Send(consul::call(ConsulCmd::Cas {
            key: lock_key(),
            value: Data::Holders(holders.retain(|h| !h.same_session(session))),
            index: lock.map_or(0, |p| p.modify_index),
        }))
    }
}

/// Our contender entry, `<prefix>/<session>`.
fn contender(session: SessionId) -> Key {
    Key::of_lease(SEMAPHORE_CONTENDERS, session)
}

fn lock_key() -> Key {
    Key::fixed(SEMAPHORE_LOCK)
}

/// WAIT: `GET <prefix>?recurse`, past `index` once it has one.
fn wait(st: &mut State, index: u64) -> Step {
    *st = State::Listing { wait_index: index };
    Step::Send(consul::list(SEMAPHORE_PREFIX, index, WAIT_MS))
}

/// `GET <prefix>/.lock`.
fn read_lock() -> Request {
    consul::get(SEMAPHORE_LOCK, 0, 0)
}

/// `DELETE <prefix>/<session>`.
fn delete_contender(session: SessionId, st: &mut State) -> Step {
    *st = State::Deleting;
    Step::Send(consul::call(ConsulCmd::Delete {
        key: contender(session),
        cas: None,
    }))
}
