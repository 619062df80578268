//! consul-lock: Consul's lock as the Go client's `api.Lock` takes it
//! (`api/lock.go`), on a session with TTL 15 s renewed every TTL/2
//! (`RenewPeriodic`), behavior `release`, lock-delay 15 s.
//!
//! 1. WAIT: `GET key?wait=15s` (with `&index=N` once it has one).
//! 2. The key's session is ours: HELD.
//! 3. Another session holds it: `WaitIndex = X-Consul-Index`, go to 1 (a
//!    blocking query, Consul's only watch: answered when the key changes).
//! 4. No session holds it: `PUT key?acquire=<session>`. `true`: HELD.
//! 5. `false`: `GET key` again, without an index. A session holds it: go
//!    to 1 with its index. None does: a lock-delay refused us; sleep
//!    `DefaultLockRetryTime` (5 s) and go to 1 without an index.
//! 6. HELD: `monitorLock` reads the key (`?consistent`) and blocks on it;
//!    the lock is lost when the key's session is no longer ours, and the
//!    application hears it on the channel `Lock` returned.
//! 7. Unlock: `PUT key?release=<session>`.
//!
//! The model's holder believes once the monitor's first read has answered
//! with our session: that read brings `LockIndex`, the token a fencing
//! application writes with (the key, the session and `LockIndex` are
//! Consul's sequencer). The monitor's later blocking queries are the
//! store's expiry notice: the invalidation that ends the session releases
//! the key, which answers them (ARCHITECTURE.md).
//!
//! Variants: `lock-delay-0` (a session made with no lock-delay: what the
//! delay protects), `behavior-delete` (the session's keys deleted when it
//! ends: `LockIndex` starts again at 1, so it is no sequencer across an
//! invalidation). `consul-lock-cli` is `consul lock`: the same lock, on
//! `<prefix>/.lock`, whose child gets SIGTERM when the lock is lost and
//! SIGKILL 5 s later (`lockKillGracePeriod`): a child that does not stop
//! on SIGTERM goes on writing for up to 5 s (hashicorp/consul #1843).

use super::consul::{self, LOCK_KEY, LOCK_RETRY_MS, LOCK_WAIT_MS};
use super::{Registered, Variant, VariantKind};
use crate::ids::{Data, Key, SessionId};
use crate::msg::{
    Behavior, ConsulCmd, ConsulReply, KvPair, Reply, Request, SessionOpts, WatchEvent,
};
use crate::recipe::{Application, Face, LockRecipe, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};
use std::time::Duration;

pub const REGISTERED: Registered = Registered {
    name: "consul-lock",
    aliases: &["api-lock"],
    summary: "Consul's lock as the Go client's api.Lock takes it: a session (TTL 15 s, lock-delay \
              15 s), acquire on a key, waiters on blocking queries; LockIndex as the token",
    variants: &[
        Variant {
            name: "lock-delay-0",
            summary: "a session with no lock-delay: the next holder may acquire the moment the \
                      old session is invalidated",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "behavior-delete",
            summary: "a session with behavior delete: its keys deleted when it ends, so LockIndex \
                      starts again at 1",
            kind: VariantKind::Departure,
        },
    ],
    build: |variant| {
        let session = match variant {
            Some("lock-delay-0") => SessionOpts {
                lock_delay_ms: 0,
                ..SessionOpts::default()
            },
            Some("behavior-delete") => SessionOpts {
                behavior: Behavior::Delete,
                ..SessionOpts::default()
            },
            _ => SessionOpts::default(),
        };
        RecipeRef::new(ConsulLock {
            cli: false,
            session,
            wait_ms: LOCK_WAIT_MS,
        })
    },
};

/// `consul lock <prefix> <child>`: `api.Lock` on `<prefix>/.lock`, the
/// child killed by signals when the lock is lost.
pub const REGISTERED_CLI: Registered = Registered {
    name: "consul-lock-cli",
    aliases: &["consul-lock-command"],
    summary: "consul lock: api.Lock, and on a lost lock SIGTERM to the child, SIGKILL 5 s later \
              (the window of hashicorp/consul #1843)",
    variants: &[],
    build: |_| {
        RecipeRef::new(ConsulLock {
            cli: true,
            session: SessionOpts::default(),
            wait_ms: LOCK_WAIT_MS,
        })
    },
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConsulLock {
    /// `consul lock`: the child gets SIGTERM, then SIGKILL after 5 s.
    pub cli: bool,
    /// What its session asks for.
    pub session: SessionOpts,
    /// WAIT's blocking queries' `?wait=` (`LockWaitTime`, 15 s).
    pub wait_ms: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// WAIT's `GET` in flight, past `index` (0: answered at once).
    Reading {
        index: u64,
    },
    /// The blocking query is held: waiting for the key to change.
    Blocked,
    /// `PUT ?acquire` in flight.
    Acquiring,
    /// The acquire failed: the `GET` that tells why in flight.
    Checking,
    /// A lock-delay refused the acquire: sleeping 5 s.
    Delayed,
    /// Acquired: the monitor's first read in flight.
    Confirming,
    Holding {
        lock_index: u64,
    },
}

impl Relabel for State {
    fn relabel(&mut self, _: &Perm) {
        match self {
            State::Reading { .. }
            | State::Blocked
            | State::Acquiring
            | State::Checking
            | State::Delayed
            | State::Confirming
            | State::Holding { .. } => {} // no names
        }
    }
}

impl Recipe for ConsulLock {
    type State = State;

    fn name(&self) -> &'static str {
        if self.cli {
            REGISTERED_CLI.name
        } else {
            REGISTERED.name
        }
    }

    fn variant(&self) -> Option<&'static str> {
        if self.cli || self.session == SessionOpts::default() {
            None
        } else if self.session.behavior == Behavior::Delete {
            Some("behavior-delete")
        } else if self.session.lock_delay_ms == 0 {
            Some("lock-delay-0")
        } else {
            None
        }
    }

    fn face(&self) -> Face {
        Face::Consul
    }

    fn setup(&self) -> Setup {
        consul::setup(LOCK_KEY)
    }

    fn acquire(&self, _: SessionId) -> (State, Request) {
        self.wait(0)
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        let Reply::Consul(reply) = reply else {
            return Step::Unexpected;
        };
        match (*st, reply) {
            (State::Reading { .. }, &ConsulReply::Pair { pair, index }) => {
                self.decide(session, st, pair, index)
            }
            (State::Reading { .. }, ConsulReply::Held) => {
                *st = State::Blocked;
                Step::Wait
            }
            (State::Acquiring, ConsulReply::Bool(true)) => {
                *st = State::Confirming;
                Step::Send(consul::get(LOCK_KEY, 0, 0))
            }
            (State::Acquiring, ConsulReply::Bool(false)) => {
                *st = State::Checking;
                Step::Send(consul::get(LOCK_KEY, 0, 0))
            }
            (State::Checking, &ConsulReply::Pair { pair, index }) => match pair {
                Some(KvPair {
                    session: Some(_), ..
                }) => self.wait_again(st, index),
                // No session holds it and ours was refused: a lock-delay.
                Some(_) | None => {
                    *st = State::Delayed;
                    Step::Sleep {
                        after: consul::millis(LOCK_RETRY_MS),
                    }
                }
            },
            (State::Confirming, &ConsulReply::Pair { pair, .. }) => match pair {
                Some(p) if p.session == Some(session) => {
                    *st = State::Holding {
                        lock_index: p.lock_index,
                    };
                    Step::Acquired {
                        token: p.lock_index,
                    }
                }
                // Lost before the monitor's first read: the channel
                // closes at once, and the application asks again.
                Some(_) | None => {
                    let (next, req) = self.wait(0);
                    *st = next;
                    Step::Send(req)
                }
            },
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            // Blocked means the last read showed another session holding
            // the key, and only we put ours there: a session that holds
            // it now is not ours.
            (State::Blocked, WatchEvent::Consul { pair, index }) => {
                match pair.and_then(|p| p.session) {
                    Some(_) => self.wait_again(st, *index),
                    None => self.try_acquire(st),
                }
            }
            _ => Step::Wait,
        }
    }

    fn on_wake(&self, _: SessionId, st: &mut State) -> Step {
        match *st {
            State::Delayed => {
                let (next, req) = self.wait(0);
                *st = next;
                Step::Send(req)
            }
            State::Reading { .. }
            | State::Blocked
            | State::Acquiring
            | State::Checking
            | State::Confirming
            | State::Holding { .. } => Step::Unexpected,
        }
    }

    fn longest_sleep(&self) -> Duration {
        consul::millis(LOCK_RETRY_MS)
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding { .. } => Some(consul::call(ConsulCmd::Release {
                key: Key::fixed(LOCK_KEY),
            })),
            State::Reading { .. }
            | State::Blocked
            | State::Acquiring
            | State::Checking
            | State::Delayed
            | State::Confirming => None,
        }
    }

    /// Every waiter's blocking query is on the key: the `k`-th release
    /// answers the `n - k` still waiting.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(n - k)
    }

    fn application(&self) -> Application<'_, State> {
        Application::Lock(self)
    }

    fn consul_session(&self) -> Option<SessionOpts> {
        Some(self.session)
    }

    fn with_consul_session(&self, opts: SessionOpts) -> Result<RecipeRef, String> {
        consul::with_session(opts, |session| ConsulLock { session, ..*self })
    }

    fn consul_wait(&self) -> Option<u32> {
        Some(self.wait_ms)
    }

    fn with_consul_wait(&self, wait_ms: u32) -> Result<RecipeRef, String> {
        let wait_ms = consul::check_wait(wait_ms.into())?;
        Ok(RecipeRef::new(ConsulLock { wait_ms, ..*self }))
    }
}

impl LockRecipe<State> for ConsulLock {
    fn kill_grace(&self) -> Option<Duration> {
        self.cli.then(|| consul::millis(consul::KILL_GRACE_MS))
    }
}

impl ConsulLock {
    /// WAIT: `GET key?wait=15s`, past `index` once it has one.
    fn wait(&self, index: u64) -> (State, Request) {
        (
            State::Reading { index },
            consul::get(LOCK_KEY, index, self.wait_ms),
        )
    }

    /// What WAIT does with the key as it read it: HELD if our session
    /// holds it, block past its index if another does, else acquire.
    fn decide(&self, session: SessionId, st: &mut State, pair: Option<KvPair>, index: u64) -> Step {
        match pair.and_then(|p| p.session) {
            Some(s) if s == session => {
                *st = State::Confirming;
                Step::Send(consul::get(LOCK_KEY, 0, 0))
            }
            Some(_) => self.wait_again(st, index),
            None => self.try_acquire(st),
        }
    }

    /// No session holds the key: `PUT key?acquire=<session>`.
    fn try_acquire(&self, st: &mut State) -> Step {
        *st = State::Acquiring;
        Step::Send(consul::call(ConsulCmd::Acquire {
            key: Key::fixed(LOCK_KEY),
            value: Data::Empty,
        }))
    }

    /// Another session holds the key: a blocking query past `index`.
    fn wait_again(&self, st: &mut State, index: u64) -> Step {
        let (next, req) = self.wait(index);
        *st = next;
        Step::Send(req)
    }
}
