//! redis-token: the single-instance lock of the Redis docs, as redis-py
//! 5.x's `redis.lock.Lock(name, timeout=10)` runs it (`acquire`,
//! `do_acquire`, `do_release`).
//!
//! 1. `SET lock <token> NX PX 10000`, the token new for the acquisition.
//!    `OK`: held.
//! 2. nil: someone holds it; sleep `sleep` (0.1 s), go to 1.
//! 3. Release: the compare-and-delete script on the token
//!    (`LUA_RELEASE_SCRIPT`, sent as `EVALSHA`); 0 — the key expired or
//!    is someone else's — raises `LockNotOwnedError` and deletes nothing.
//!
//! The token is random, so it orders nothing: every holder writes with
//! token 0, and a fenced resource cannot tell a stale holder from the
//! current one. Variant `incr-token` takes a fencing token after
//! acquiring, as Kleppmann proposes: `INCR lock:fence`, whose answer the
//! holder's writes carry.
//!
//! Variant `watchdog` is Redisson's `RLock` without a lease time: the
//! holder renews its key every TTL/3 (`renewExpiration`, the
//! compare-and-extend script) until it unlocks, so a hold may outlast the
//! TTL; the TTL is `lockWatchdogTimeout`, 30 s.
//!
//! Variant `wait` is the usual fix for a lock lost in an asynchronous
//! failover: after `SET` answers `OK`, `WAIT 1 200` (at least one replica
//! has every change made before it). 1: held. 0 or an error (the
//! connection broke in a failover): not held — the compare-and-delete
//! script, then sleep `sleep` and go to 1. Without a replica `WAIT` answers
//! 0 and the lock is never held.

use super::redis::{self, DEFAULT_TTL_MS};
use super::{Registered, Variant, VariantKind};
use crate::ids::SessionId;
use crate::msg::{RedisReply, Reply, Request, WatchEvent};
use crate::recipe::{Face, KeyLease, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};
use std::time::Duration;

pub const REGISTERED: Registered = Registered {
    name: "redis-token",
    aliases: &["redis-py-lock"],
    summary: "redis-py Lock: SET NX PX with a random token, poll every 0.1 s, \
              release by compare-and-delete script",
    variants: &[
        Variant {
            name: "incr-token",
            summary: "after acquiring, INCR a counter key and write with its value: a fencing token (Kleppmann)",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "watchdog",
            summary: "Redisson RLock: a 30 s TTL renewed every 10 s by compare-and-extend while held",
            kind: VariantKind::Departure,
        },
        WAIT_VARIANT,
    ],
    build: |variant| {
        RecipeRef::new(RedisToken {
            fence: variant == Some("incr-token"),
            watchdog: variant == Some("watchdog"),
            wait: variant == Some(WAIT_VARIANT.name),
        })
    },
};

/// redis-py's `sleep` between two tries.
const RETRY_MS: u32 = 100;
/// Redisson's `lockWatchdogTimeout`.
const WATCHDOG_TTL_MS: u32 = 30_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RedisToken {
    /// `INCR lock:fence` after acquiring: the writes' fencing token.
    pub fence: bool,
    /// Redisson's watchdog: renew every TTL/3 while held.
    pub watchdog: bool,
    /// `WAIT 1` after the `SET`: held only once a replica has the key.
    pub wait: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `SET NX PX` in flight.
    Setting,
    /// Sleeping between two tries.
    Polling,
    /// `INCR lock:fence` in flight: the lock is ours.
    Fencing,
    Holding,
    /// `WAIT 1` in flight: the key is ours on the master.
    Waiting,
    /// No replica confirmed the key: the compare-and-delete in flight.
    Unlocking,
}

impl Relabel for State {
    fn relabel(&mut self, _: &Perm) {
        match self {
            State::Setting
            | State::Polling
            | State::Fencing
            | State::Holding
            | State::Waiting
            | State::Unlocking => {} // no names
        }
    }
}

impl Recipe for RedisToken {
    type State = State;

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match (self.fence, self.watchdog, self.wait) {
            (true, _, _) => Some("incr-token"),
            (false, true, _) => Some("watchdog"),
            (false, false, true) => Some(WAIT_VARIANT.name),
            (false, false, false) => None,
        }
    }

    fn face(&self) -> Face {
        Face::Redis
    }

    fn setup(&self) -> Setup {
        redis::setup(1)
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        (State::Setting, self.set(session))
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (State::Setting, Reply::Redis(RedisReply::Ok)) if self.wait => wait_for_replica(st),
            (State::Waiting, Reply::Redis(r)) => replicated_or_unlock(session, st, *r),
            (State::Unlocking, Reply::Redis(_)) => poll(st),
            (State::Setting, Reply::Redis(RedisReply::Ok)) if self.fence => {
                *st = State::Fencing;
                Step::Send(redis::to(0, redis::incr_fence()))
            }
            (State::Setting, Reply::Redis(RedisReply::Ok)) => {
                *st = State::Holding;
                Step::Acquired { token: 0 }
            }
            (State::Setting, Reply::Redis(RedisReply::Nil)) => poll(st),
            (State::Fencing, Reply::Redis(RedisReply::Int(n))) => {
                *st = State::Holding;
                Step::Acquired { token: *n }
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, _: &mut State, _: &WatchEvent) -> Step {
        Step::Wait
    }

    fn on_wake(&self, session: SessionId, st: &mut State) -> Step {
        match *st {
            State::Polling => {
                *st = State::Setting;
                Step::Send(self.set(session))
            }
            State::Setting
            | State::Fencing
            | State::Holding
            | State::Waiting
            | State::Unlocking => Step::Unexpected,
        }
    }

    fn longest_sleep(&self) -> Duration {
        redis::millis(RETRY_MS)
    }

    fn release(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding => Some(redis::to(0, redis::del_if_mine(session))),
            State::Setting
            | State::Polling
            | State::Fencing
            | State::Waiting
            | State::Unlocking => None,
        }
    }

    fn key_lease(&self) -> Option<KeyLease> {
        let ttl = self.ttl_ms();
        Some(KeyLease {
            ttl: redis::millis(ttl),
            renew_every: self.watchdog.then(|| redis::millis(ttl / 3)),
        })
    }

    fn renewal(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding if self.watchdog => {
                Some(redis::to(0, redis::extend_if_mine(session, self.ttl_ms())))
            }
            State::Holding
            | State::Setting
            | State::Polling
            | State::Fencing
            | State::Waiting
            | State::Unlocking => None,
        }
    }
}

impl RedisToken {
    fn ttl_ms(&self) -> u32 {
        match self.watchdog {
            true => WATCHDOG_TTL_MS,
            false => DEFAULT_TTL_MS,
        }
    }

    fn set(&self, session: SessionId) -> Request {
        redis::to(0, redis::set_nx_px(session, self.ttl_ms()))
    }
}

/// Sleep `sleep`, then try again.
fn poll(st: &mut State) -> Step {
    *st = State::Polling;
    Step::Sleep {
        after: redis::millis(RETRY_MS),
    }
}

/// Variant `wait`: `WAIT 1` after a `SET` that answered `OK`.
const WAIT_VARIANT: Variant = Variant {
    name: "wait",
    summary: "WAIT 1 after SET NX PX: held only once a replica has the key, else unlock and retry",
    kind: VariantKind::Departure,
};

/// The key is ours on the master: wait until a replica has it too.
fn wait_for_replica(st: &mut State) -> Step {
    *st = State::Waiting;
    Step::Send(redis::to(0, redis::wait_one()))
}

/// `WAIT`'s answer: a replica has the key (held), or none does — 0, or
/// the error of a connection a failover broke — and the key is given up
/// (the compare-and-delete: it may survive on the master) before the
/// next try.
fn replicated_or_unlock(session: SessionId, st: &mut State, r: RedisReply) -> Step {
    match r {
        RedisReply::Int(n) if n >= 1 => {
            *st = State::Holding;
            Step::Acquired { token: 0 }
        }
        RedisReply::Int(_) | RedisReply::Down => {
            *st = State::Unlocking;
            Step::Send(redis::to(0, redis::del_if_mine(session)))
        }
        RedisReply::Ok | RedisReply::Nil | RedisReply::Value(_) => Step::Unexpected,
    }
}
