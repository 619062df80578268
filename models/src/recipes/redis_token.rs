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
//! Redisson's `lockInterruptibly` returns at once when its thread is
//! interrupted, its acquire still on its way, and the caller unlocks
//! (`--interrupts`). The acquire's callback (`tryAcquireAsync`'s
//! `thenApply`) arms the watchdog when the acquire's answer comes, and the
//! unlock's callback cancels it; nothing orders the two (#7272). Variant
//! `watchdog-after-unlock` is Redisson 3.51–4.4 as released: an acquire
//! granted after the interrupt arms a watchdog that renews the key for
//! ever, for a caller that believes it never held. Variant `watchdog`
//! gives such a grant back, as the fix proposed for #7272 does (PR #7277:
//! an interrupted acquire that succeeded drops its watchdog and unlocks).
//!
//! Variant `wait` is the usual fix for a lock lost in an asynchronous
//! failover: after `SET` answers `OK`, `WAIT 1 200` (at least one replica
//! has every change made before it). 1: held. 0 or an error (the
//! connection broke in a failover): not held — the compare-and-delete
//! script, then sleep `sleep` and go to 1. Without a replica `WAIT` answers
//! 0 and the lock is never held.

use super::redis::{self, KeyTiming, DEFAULT_TTL_MS};
use super::{Registered, Variant, VariantKind};
use crate::ids::SessionId;
use crate::msg::{RedisReply, Reply, Request, WatchEvent};
use crate::recipe::{
    Application, Face, KeyLease, LateAnswer, LockRecipe, PollCost, Recipe, RecipeRef, Setup, Step,
};
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
            summary: "Redisson RLock: a 30 s TTL renewed every 10 s by compare-and-extend while held; \
                      an interrupted acquire's late grant is given back (the #7272 fix)",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "watchdog-after-unlock",
            summary: "Redisson 3.51-4.4 (#7272): an acquire granted after its caller was \
                      interrupted and unlocked arms a watchdog that renews the key for ever",
            kind: VariantKind::Departure,
        },
        WAIT_VARIANT,
    ],
    build: |variant| {
        let watchdog = match variant {
            Some("watchdog") => Some(Watchdog::GivesBack),
            Some("watchdog-after-unlock") => Some(Watchdog::ArmsLate),
            _ => None,
        };
        RecipeRef::new(RedisToken {
            fence: variant == Some("incr-token"),
            watchdog,
            wait: variant == Some(WAIT_VARIANT.name),
            timing: KeyTiming {
                ttl_ms: match watchdog {
                    Some(_) => WATCHDOG_TTL_MS,
                    None => DEFAULT_TTL_MS,
                },
                retry_ms: RETRY_MS,
            },
        })
    },
};

/// redis-py's `sleep` between two tries.
const RETRY_MS: u32 = 100;
/// Redisson's `lockWatchdogTimeout`.
const WATCHDOG_TTL_MS: u32 = 30_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RedisToken {
    /// `INCR lock:fence` after acquiring: the writes' fencing token.
    pub fence: bool,
    /// Redisson's watchdog: renew every TTL/3 while held.
    pub watchdog: Option<Watchdog>,
    /// `WAIT 1` after the `SET`: held only once a replica has the key.
    pub wait: bool,
    /// The key's TTL (Redisson's `lockWatchdogTimeout`) and the retry
    /// delay.
    pub timing: KeyTiming,
}

/// What Redisson's watchdog does with an acquire granted after its caller
/// was interrupted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Watchdog {
    /// Gives the grant back: drops the watchdog and unlocks (PR #7277).
    GivesBack,
    /// Arms the watchdog, which renews the key for ever (#7272).
    ArmsLate,
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
            (false, Some(Watchdog::GivesBack), _) => Some("watchdog"),
            (false, Some(Watchdog::ArmsLate), _) => Some("watchdog-after-unlock"),
            (false, None, true) => Some(WAIT_VARIANT.name),
            (false, None, false) => None,
        }
    }

    fn face(&self) -> Face {
        Face::Redis
    }

    fn application(&self) -> Application<'_, State> {
        Application::Lock(self)
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
            (State::Unlocking, Reply::Redis(_)) => poll(st, self.timing.retry()),
            (State::Setting, Reply::Redis(RedisReply::Ok)) if self.fence => {
                *st = State::Fencing;
                Step::Send(redis::to(0, redis::incr_fence()))
            }
            (State::Setting, Reply::Redis(RedisReply::Ok)) => {
                *st = State::Holding;
                Step::Acquired { token: 0 }
            }
            (State::Setting, Reply::Redis(RedisReply::Nil)) => poll(st, self.timing.retry()),
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
        self.timing.retry()
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
        let ttl = self.timing.ttl_ms;
        Some(KeyLease {
            ttl: redis::millis(ttl),
            renew_every: self.watchdog.map(|_| redis::millis(ttl / 3)),
        })
    }

    fn key_timing(&self) -> Option<KeyTiming> {
        Some(self.timing)
    }

    /// The watchdog renews every TTL/3 milliseconds.
    fn with_key_timing(&self, timing: KeyTiming) -> Result<RecipeRef, String> {
        if self.watchdog.is_some() && timing.ttl_ms < 3 {
            return Err(format!(
                "the watchdog renews every TTL/3: the TTL must be at least 3 ms (got {} ms)",
                timing.ttl_ms
            ));
        }
        Ok(RecipeRef::new(RedisToken { timing, ..*self }))
    }

    /// None for `wait`: the herd's store has no replica, and its `WAIT`
    /// answers 0 for ever.
    fn poll_cost(&self) -> Option<PollCost> {
        if self.wait {
            return None;
        }
        Some(PollCost {
            delay: self.timing.retry(),
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
            State::Holding if self.watchdog.is_some() => self.extend(session),
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
    fn set(&self, session: SessionId) -> Request {
        redis::to(0, redis::set_nx_px(session, self.timing.ttl_ms))
    }

    /// The watchdog's renewal: `renewExpiration`'s compare-and-extend.
    fn extend(&self, session: SessionId) -> Option<Request> {
        Some(redis::to(
            0,
            redis::extend_if_mine(session, self.timing.ttl_ms),
        ))
    }
}

/// Redisson's callbacks after an interrupt (the caller's unlock went
/// first and found no key of its own: see ARCHITECTURE.md).
impl LockRecipe<State> for RedisToken {
    fn interruptible(&self) -> bool {
        self.watchdog.is_some()
    }

    /// The acquire's `thenApply` sees the grant and arms the watchdog; a
    /// renewal's answer schedules the next (`renewExpiration`), unless it
    /// found the key gone (0: `LockTask`'s chunk cancels it).
    fn on_late_answer(&self, session: SessionId, reply: &Reply) -> LateAnswer {
        match (self.watchdog, reply) {
            (Some(Watchdog::ArmsLate), Reply::Redis(RedisReply::Ok | RedisReply::Int(1))) => {
                LateAnswer::ArmWatchdog
            }
            // 0, or an error: `LockTask` cancels the renewal.
            (Some(Watchdog::ArmsLate), Reply::Redis(RedisReply::Int(_) | RedisReply::Down)) => {
                LateAnswer::StopWatchdog
            }
            (Some(Watchdog::GivesBack), Reply::Redis(RedisReply::Ok)) => {
                LateAnswer::Release(redis::to(0, redis::del_if_mine(session)))
            }
            _ => LateAnswer::Ignore,
        }
    }

    fn orphan_renewal(&self, session: SessionId) -> Option<Request> {
        self.extend(session)
    }
}

/// Sleep the retry delay (redis-py's `sleep`), then try again.
fn poll(st: &mut State, delay: Duration) -> Step {
    *st = State::Polling;
    Step::Sleep { after: delay }
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
