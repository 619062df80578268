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

use super::redis::{self, DEFAULT_TTL_MS};
use super::{Registered, Variant, VariantKind};
use crate::ids::SessionId;
use crate::msg::{RedisReply, Reply, Request, WatchEvent};
use crate::recipe::{Face, KeyLease, PollCost, Recipe, RecipeRef, Setup, Step};
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
    ],
    build: |variant| {
        RecipeRef::new(RedisToken {
            fence: variant == Some("incr-token"),
            watchdog: variant == Some("watchdog"),
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
}

impl Relabel for State {
    fn relabel(&mut self, _: &Perm) {
        match self {
            State::Setting | State::Polling | State::Fencing | State::Holding => {} // no names
        }
    }
}

impl Recipe for RedisToken {
    type State = State;

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match (self.fence, self.watchdog) {
            (true, _) => Some("incr-token"),
            (false, true) => Some("watchdog"),
            (false, false) => None,
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

    fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (State::Setting, Reply::Redis(RedisReply::Ok)) if self.fence => {
                *st = State::Fencing;
                Step::Send(redis::to(0, redis::incr_fence()))
            }
            (State::Setting, Reply::Redis(RedisReply::Ok)) => {
                *st = State::Holding;
                Step::Acquired { token: 0 }
            }
            (State::Setting, Reply::Redis(RedisReply::Nil)) => {
                *st = State::Polling;
                Step::Sleep {
                    after: redis::millis(RETRY_MS),
                }
            }
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
            State::Setting | State::Fencing | State::Holding => Step::Unexpected,
        }
    }

    fn longest_sleep(&self) -> Duration {
        redis::millis(RETRY_MS)
    }

    fn release(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding => Some(redis::to(0, redis::del_if_mine(session))),
            State::Setting | State::Polling | State::Fencing => None,
        }
    }

    fn key_lease(&self) -> Option<KeyLease> {
        let ttl = self.ttl_ms();
        Some(KeyLease {
            ttl: redis::millis(ttl),
            renew_every: self.watchdog.then(|| redis::millis(ttl / 3)),
        })
    }

    fn poll_cost(&self) -> Option<PollCost> {
        Some(PollCost {
            delay: redis::millis(RETRY_MS),
            // `SET NX PX`, answered nil.
            failed_try: 1,
            // `SET NX PX`, then `INCR lock:fence` if it fences.
            to_hold: 1 + u32::from(self.fence),
            // The compare-and-delete script.
            release: 1,
        })
    }

    fn renewal(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding if self.watchdog => {
                Some(redis::to(0, redis::extend_if_mine(session, self.ttl_ms())))
            }
            State::Holding | State::Setting | State::Polling | State::Fencing => None,
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
