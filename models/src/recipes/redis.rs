//! What the Redis lock recipes share: the lock's key and the fencing
//! counter's, the token a client writes, the commands as the libraries
//! send them, and the line the ghost `holder_owns_key` mark reads.

use crate::ids::{Data, Name, SessionId};
use crate::msg::{RedisCmd, Request};
use crate::name;
use crate::recipe::{Line, Setup};
use std::time::Duration;

/// The lock's key.
pub const LOCK_KEY: Name = name!("lock");
/// The fencing counter Kleppmann proposes: `INCR` on it after acquiring.
pub const FENCE_KEY: Name = name!("lock:fence");

/// The lock's TTL unless a recipe says otherwise: 10 s, pottery's
/// `auto_release_time` and the Redlock page's example.
pub const DEFAULT_TTL_MS: u32 = 10_000;

/// A Redis lock's two clocks, in milliseconds: its key's TTL and the
/// delay between two tries — its library's defaults, or a scenario's
/// (`timing.key_ttl_ms`, `timing.retry_delay_ms`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyTiming {
    pub ttl_ms: u32,
    pub retry_ms: u32,
}

impl KeyTiming {
    pub fn ttl(&self) -> Duration {
        millis(self.ttl_ms)
    }

    pub fn retry(&self) -> Duration {
        millis(self.retry_ms)
    }

    /// What every Redis lock needs of its clocks, or the clock at fault
    /// and why.
    pub fn check(&self) -> Result<(), (KeyClock, String)> {
        if self.ttl_ms == 0 {
            return Err((
                KeyClock::Ttl,
                "must be positive: a key with a TTL of 0 expires as it is set".into(),
            ));
        }
        if self.retry_ms == 0 {
            return Err((
                KeyClock::Retry,
                "must be positive: a waiter that never sleeps spins".into(),
            ));
        }
        if self.retry_ms >= self.ttl_ms {
            return Err((
                KeyClock::Retry,
                format!(
                    "must be shorter than the key's TTL ({} ms): the libraries poll several times \
                     a TTL (redis-py 0.1 s of 10 s, Redlock 200 ms of 10 s) (got {} ms)",
                    self.ttl_ms, self.retry_ms
                ),
            ));
        }
        Ok(())
    }
}

/// One of a Redis lock's two clocks, as an error names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyClock {
    Ttl,
    Retry,
}

/// The line the store's ghost mark reads: the lock's key holding the
/// client's token (on a majority of `masters`).
pub fn setup(masters: u8) -> Setup {
    Setup {
        line: Line {
            path: Line::LOCK.path,
            keys: LOCK_KEY,
        },
        masters,
        ..Setup::bare()
    }
}

/// The value a client writes into the lock's key: a token no other
/// process has. The libraries draw a random one per acquisition (redis-py
/// a uuid, Redlock 20 random bytes); the client's process stands for it,
/// since a process acquires one lock at a time and its release goes
/// before its next acquire on its one connection.
pub fn token(s: SessionId) -> Data {
    Data::Session(s)
}

/// A command to `master`.
pub fn to(master: u8, cmd: RedisCmd) -> Request {
    Request::Redis { master, cmd }
}

/// `SET lock <token> NX PX ttl`.
pub fn set_nx_px(s: SessionId, ttl_ms: u32) -> RedisCmd {
    RedisCmd::Set {
        key: LOCK_KEY,
        value: token(s),
        nx: true,
        px: Some(ttl_ms),
    }
}

/// The compare-and-delete script on our token.
pub fn del_if_mine(s: SessionId) -> RedisCmd {
    RedisCmd::DelIfValue {
        key: LOCK_KEY,
        value: token(s),
    }
}

/// The compare-and-extend script on our token: the TTL set anew.
pub fn extend_if_mine(s: SessionId, ttl_ms: u32) -> RedisCmd {
    RedisCmd::ExpireIfValue {
        key: LOCK_KEY,
        value: token(s),
        ms: ttl_ms,
    }
}

/// `INCR lock:fence`: the fencing token.
pub fn incr_fence() -> RedisCmd {
    RedisCmd::Incr { key: FENCE_KEY }
}

/// The timeout of the `WAIT` a recipe sends (the validator's, on a real
/// server): the simulator keeps a replica's lag below it, so a `WAIT`
/// never times out in a run without a fault (the model has no timeout).
pub const WAIT_TIMEOUT_MS: u32 = 200;

/// `WAIT 1 200`: how many replicas have every change made so far.
pub fn wait_one() -> RedisCmd {
    RedisCmd::Wait {
        replicas: 1,
        timeout_ms: WAIT_TIMEOUT_MS,
    }
}

/// A retry delay in milliseconds as the recipe's sleep.
pub fn millis(ms: u32) -> Duration {
    Duration::from_millis(ms.into())
}
