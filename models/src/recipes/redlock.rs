//! redlock: the Redlock algorithm as the Redis docs' "Distributed Locks
//! with Redis" states it, on N independent masters (5 by default).
//!
//! 1. Note the time; for each master in turn, `SET lock <token> NX PX
//!    ttl` (a per-instance timeout far shorter than the TTL: a master
//!    that does not answer counts as a failure).
//! 2. Held if a majority (N/2 + 1) said `OK` and the attempt took less
//!    than its validity time: the TTL less the clock drift (0.01 × TTL +
//!    2 ms, as the reference implementations take it), by the client's
//!    own clock ([`Recipe::validity`]).
//! 3. Otherwise release on every master — the compare-and-delete script,
//!    even where the `SET` failed — and retry after a delay.
//! 4. Release: the compare-and-delete script on every master.
//!
//! The token is random: it orders nothing, every holder writes with token
//! 0 and a fenced resource cannot reject a stale holder. Variant
//! `incr-token`: `INCR lock:fence` on the first master after acquiring,
//! the writes' fencing token (Kleppmann's proposal).
//!
//! Where the model simplifies: the masters are asked one at a time (the
//! spec's "sequentially"; pottery asks them at once and stops at a
//! majority); a lost reply is resent once the client's retry timer fires
//! rather than counted a failure at once (a resent `SET NX` that finds
//! the client's own key counts a failure, and step 3 or the release
//! deletes it); the retry delay is fixed (the spec draws it at random, so
//! that contenders that split the votes do not meet again: the untimed
//! checker, which owes no randomness, finds the split repeating forever
//! at three or more clients).

use super::redis::{self, KeyTiming, DEFAULT_TTL_MS};
use super::{Registered, Variant, VariantKind};
use crate::ids::SessionId;
use crate::msg::{RedisReply, Reply, Request, WatchEvent};
use crate::recipe::{Face, PollCost, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};
use std::time::Duration;

pub const REGISTERED: Registered = Registered {
    name: "redlock",
    aliases: &[],
    summary: "Redlock on N independent masters (5): SET NX PX on each in turn, \
              hold on a majority within the validity time, else release everywhere and retry",
    variants: &[Variant {
        name: "incr-token",
        summary: "after acquiring, INCR a counter key on the first master and write with its value: a fencing token (Kleppmann)",
        kind: VariantKind::Departure,
    }],
    build: |variant| {
        RecipeRef::new(Redlock {
            masters: DEFAULT_MASTERS,
            fence: variant == Some("incr-token"),
            timing: KeyTiming {
                ttl_ms: DEFAULT_TTL_MS,
                retry_ms: RETRY_MS,
            },
        })
    },
};

/// The spec's example deployment.
pub const DEFAULT_MASTERS: u8 = 5;
/// The delay before another attempt (pottery draws it from 0–200 ms).
const RETRY_MS: u32 = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Redlock {
    /// How many independent masters: odd, at least 3.
    pub masters: u8,
    /// `INCR lock:fence` after acquiring: the writes' fencing token.
    pub fence: bool,
    /// The keys' TTL and the delay before another attempt.
    pub timing: KeyTiming,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `SET NX PX` on master `at` in flight; `got` masters said `OK`
    /// before it; `late`: the attempt outlasted its validity.
    Trying {
        at: u8,
        got: u8,
        late: bool,
    },
    /// The attempt failed: the compare-and-delete on master `at` in flight.
    Unlocking {
        at: u8,
    },
    /// Waiting out the retry delay.
    Polling,
    /// `INCR lock:fence` in flight: the lock is ours.
    Fencing,
    Holding,
    /// Releasing: the compare-and-delete on master `at` in flight (master
    /// 0's is the release step, sent while `Holding`).
    Releasing {
        at: u8,
    },
}

impl Relabel for State {
    fn relabel(&mut self, _: &Perm) {
        match self {
            State::Trying { .. }
            | State::Unlocking { .. }
            | State::Polling
            | State::Fencing
            | State::Holding
            | State::Releasing { .. } => {} // no names
        }
    }
}

impl Recipe for Redlock {
    type State = State;

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        self.fence.then_some("incr-token")
    }

    fn face(&self) -> Face {
        Face::Redis
    }

    fn setup(&self) -> Setup {
        redis::setup(self.masters)
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        let st = State::Trying {
            at: 0,
            got: 0,
            late: false,
        };
        (st, self.set(session, 0))
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (State::Trying { at, got, late }, Reply::Redis(r)) => {
                let got = got + u8::from(*r == RedisReply::Ok);
                if at + 1 < self.masters {
                    *st = State::Trying {
                        at: at + 1,
                        got,
                        late,
                    };
                    return Step::Send(self.set(session, at + 1));
                }
                if self.quorum(got) && !late {
                    self.held(st)
                } else {
                    *st = State::Unlocking { at: 0 };
                    Step::Send(redis::to(0, redis::del_if_mine(session)))
                }
            }
            (State::Unlocking { at }, Reply::Redis(_)) if at + 1 < self.masters => {
                *st = State::Unlocking { at: at + 1 };
                Step::Send(redis::to(at + 1, redis::del_if_mine(session)))
            }
            (State::Unlocking { .. }, Reply::Redis(_)) => {
                *st = State::Polling;
                Step::Sleep {
                    after: self.timing.retry(),
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
                let (next, req) = self.acquire(session);
                *st = next;
                Step::Send(req)
            }
            State::Trying { .. }
            | State::Unlocking { .. }
            | State::Fencing
            | State::Holding
            | State::Releasing { .. } => Step::Unexpected,
        }
    }

    fn longest_sleep(&self) -> Duration {
        self.timing.retry()
    }

    fn validity(&self) -> Option<Duration> {
        let ttl = self.timing.ttl_ms;
        Some(redis::millis(ttl - drift_ms(ttl)))
    }

    fn on_validity_passed(&self, st: &mut State) -> Step {
        if let State::Trying { late, .. } = st {
            *late = true;
        }
        Step::Wait
    }

    fn release(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding => Some(redis::to(0, redis::del_if_mine(session))),
            State::Trying { .. }
            | State::Unlocking { .. }
            | State::Polling
            | State::Fencing
            | State::Releasing { .. } => None,
        }
    }

    fn on_release_reply(&self, session: SessionId, st: &mut State, _: &Reply) -> Step {
        let next = match *st {
            State::Holding => 1,
            State::Releasing { at } => at + 1,
            State::Trying { .. } | State::Unlocking { .. } | State::Polling | State::Fencing => {
                return Step::Unexpected
            }
        };
        if next < self.masters {
            *st = State::Releasing { at: next };
            Step::Send(redis::to(next, redis::del_if_mine(session)))
        } else {
            Step::Released
        }
    }

    fn for_masters(&self, masters: u8) -> Option<RecipeRef> {
        Some(RecipeRef::new(Redlock { masters, ..*self }))
    }

    fn key_timing(&self) -> Option<KeyTiming> {
        Some(self.timing)
    }

    /// The validity time is the TTL less the drift: it must be left some.
    fn with_key_timing(&self, timing: KeyTiming) -> Result<RecipeRef, String> {
        let drift = drift_ms(timing.ttl_ms);
        if timing.ttl_ms <= drift {
            return Err(format!(
                "the validity time is the TTL less 1% and 2 ms of clock drift ({drift} ms): \
                 the TTL must be longer (got {} ms)",
                timing.ttl_ms
            ));
        }
        Ok(RecipeRef::new(Redlock { timing, ..*self }))
    }

    fn poll_cost(&self) -> Option<PollCost> {
        let masters = u32::from(self.masters);
        Some(PollCost {
            delay: self.timing.retry(),
            // A `SET NX PX` on every master, then the compare-and-delete
            // on every master (step 3).
            failed_try: 2 * masters,
            // A `SET NX PX` on every master, then `INCR lock:fence` if it
            // fences.
            to_hold: masters + u32::from(self.fence),
            // The compare-and-delete on every master.
            release: masters,
        })
    }
}

impl Redlock {
    /// `SET lock <token> NX PX ttl` on master `at`.
    fn set(&self, session: SessionId, at: u8) -> Request {
        redis::to(at, redis::set_nx_px(session, self.timing.ttl_ms))
    }

    /// A majority of the masters.
    fn quorum(&self, got: u8) -> bool {
        got > self.masters / 2
    }

    /// The majority is ours: hold, or take a fencing token first.
    fn held(&self, st: &mut State) -> Step {
        if self.fence {
            *st = State::Fencing;
            Step::Send(redis::to(0, redis::incr_fence()))
        } else {
            *st = State::Holding;
            Step::Acquired { token: 0 }
        }
    }
}

/// The clock drift the reference implementations allow for: 1% of the
/// TTL plus 2 ms.
fn drift_ms(ttl_ms: u32) -> u32 {
    ttl_ms / 100 + 2
}
