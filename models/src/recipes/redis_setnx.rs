//! redis-setnx: the seed article's Redis lock, "SETNX success means you
//! hold the lock".
//!
//! 1. `SETNX lock <token>`: 1 means ours; then `EXPIRE lock <ttl s>`, a
//!    second command, so that a crashed holder's lock goes away.
//! 2. 0 means someone holds it: sleep the retry delay, go to 1.
//! 3. Release: `DEL lock`, whoever's key it is.
//!
//! Variant `atomic`: step 1 as one command, `SET lock <token> NX PX ttl`
//! (Redis 2.6.12 on); the release is still a plain `DEL`.
//!
//! A crash between `SETNX` and `EXPIRE` leaves a key that never expires
//! (`progress` lost); a holder paused past its TTL finds the next holder's
//! key and its `DEL` removes it. There is no fencing token: every holder
//! writes with token 0.

use super::redis::{self, KeyTiming, LOCK_KEY};
use super::{Registered, Variant, VariantKind};
use crate::ids::SessionId;
use crate::msg::{RedisCmd, RedisReply, Reply, Request, WatchEvent};
use crate::recipe::{Face, PollCost, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};
use std::time::Duration;

pub const REGISTERED: Registered = Registered {
    name: "redis-setnx",
    aliases: &["setnx"],
    summary: "Redis SETNX then EXPIRE, release by DEL (the seed article's lock): \
              no token, no atomic TTL",
    variants: &[Variant {
        name: "atomic",
        summary:
            "SET NX PX in one command (no key left without a TTL); still released by a plain DEL",
        kind: VariantKind::Departure,
    }],
    build: |variant| {
        RecipeRef::new(RedisSetnx {
            atomic: variant == Some("atomic"),
            timing: KeyTiming {
                ttl_ms: redis::DEFAULT_TTL_MS,
                retry_ms: RETRY_MS,
            },
        })
    },
};

/// The retry delay between two tries (the article's loop; redis-py's
/// `sleep` default).
const RETRY_MS: u32 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RedisSetnx {
    /// `SET NX PX` in one command instead of `SETNX` + `EXPIRE`.
    pub atomic: bool,
    /// The key's TTL and the retry delay.
    pub timing: KeyTiming,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `SETNX` (or `SET NX PX`) in flight.
    Setting,
    /// `EXPIRE` in flight: the key is ours, without a TTL yet.
    Expiring,
    /// Sleeping the retry delay.
    Polling,
    Holding,
}

impl Relabel for State {
    fn relabel(&mut self, _: &Perm) {
        match self {
            State::Setting | State::Expiring | State::Polling | State::Holding => {} // no names
        }
    }
}

impl Recipe for RedisSetnx {
    type State = State;

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        self.atomic.then_some("atomic")
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
            (State::Setting, Reply::Redis(RedisReply::Int(1))) => {
                *st = State::Expiring;
                Step::Send(redis::to(0, expire(self.timing.ttl_ms)))
            }
            (State::Setting, Reply::Redis(RedisReply::Ok)) | (State::Expiring, Reply::Redis(_)) => {
                *st = State::Holding;
                Step::Acquired { token: 0 }
            }
            (State::Setting, Reply::Redis(RedisReply::Int(0) | RedisReply::Nil)) => {
                *st = State::Polling;
                Step::Sleep {
                    after: self.timing.retry(),
                }
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
            State::Setting | State::Expiring | State::Holding => Step::Unexpected,
        }
    }

    fn longest_sleep(&self) -> Duration {
        self.timing.retry()
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding => Some(redis::to(0, RedisCmd::Del { key: LOCK_KEY })),
            State::Setting | State::Expiring | State::Polling => None,
        }
    }

    fn key_timing(&self) -> Option<KeyTiming> {
        Some(self.timing)
    }

    /// The article's `EXPIRE` counts whole seconds.
    fn with_key_timing(&self, timing: KeyTiming) -> Result<RecipeRef, String> {
        if !self.atomic && !timing.ttl_ms.is_multiple_of(1000) {
            return Err(format!(
                "the article's EXPIRE takes whole seconds: the TTL must be a multiple of 1000 ms \
                 (got {} ms; variant atomic's SET PX takes any)",
                timing.ttl_ms
            ));
        }
        Ok(RecipeRef::new(RedisSetnx { timing, ..*self }))
    }

    fn poll_cost(&self) -> Option<PollCost> {
        Some(PollCost {
            delay: self.timing.retry(),
            // `SETNX` answered 0 (`SET NX PX` answered nil).
            failed_try: 1,
            // `SETNX` then `EXPIRE`; `SET NX PX` alone.
            to_hold: 1 + u32::from(!self.atomic),
            // `DEL`.
            release: 1,
        })
    }
}

impl RedisSetnx {
    fn set(&self, session: SessionId) -> Request {
        let value = redis::token(session);
        redis::to(
            0,
            if self.atomic {
                redis::set_nx_px(session, self.timing.ttl_ms)
            } else {
                RedisCmd::SetNx {
                    key: LOCK_KEY,
                    value,
                }
            },
        )
    }
}

/// `EXPIRE lock <ttl in seconds>`.
fn expire(ttl_ms: u32) -> RedisCmd {
    RedisCmd::Expire {
        key: LOCK_KEY,
        ms: ttl_ms,
        seconds: true,
    }
}
