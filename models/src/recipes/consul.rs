//! What the Consul recipes share: the keys as the Go client (`api`) and
//! `consul lock` name them, the calls as they make them, and the line the
//! ghost `holder_owns_key` mark reads.

use crate::ids::{Key, Name};
use crate::msg::{ConsulCmd, Request, SessionOpts};
use crate::name;
use crate::recipe::{Line, Recipe, RecipeRef, Setup};
use std::time::Duration;

/// The lock's key: `consul lock`'s `<prefix>/.lock` for the prefix
/// `lock` (an `api.Lock` takes any key it is given).
pub const LOCK_KEY: Name = name!("lock/.lock");
/// The election's key, as the seed article names it:
/// `service/<name>/leader`.
pub const LEADER_KEY: Name = name!("service/lock/leader");
/// The semaphore's prefix (`SemaphoreOptions.Prefix`), what it lists.
pub const SEMAPHORE_PREFIX: Name = name!("sem");
/// The directory of its contender keys, `<prefix>/<session>`.
pub const SEMAPHORE_CONTENDERS: Name = name!("sem/");
/// Its lock key, `<prefix>/.lock` (`DefaultSemaphoreKey`), whose value
/// lists the holders.
pub const SEMAPHORE_LOCK: Name = name!("sem/.lock");

/// `DefaultLockSessionTTL`: 15 s (`api/lock.go`).
pub const SESSION_TTL_MS: u32 = 15_000;
/// `DefaultLockWaitTime`: a blocking query's wait while acquiring, 15 s.
pub const LOCK_WAIT_MS: u32 = 15_000;
/// `DefaultLockRetryTime`: the sleep after an acquire the lock-delay
/// refused, 5 s.
pub const LOCK_RETRY_MS: u32 = 5_000;
/// `consul lock`'s `lockKillGracePeriod`: SIGKILL 5 s after SIGTERM.
pub const KILL_GRACE_MS: u32 = 5_000;

/// Consul's bounds on a session's TTL (10 s to 24 h) and lock-delay (0 to
/// 60 s): what a scenario may set.
pub const TTL_MS_RANGE: std::ops::RangeInclusive<u64> = 10_000..=86_400_000;
pub const LOCK_DELAY_MS_RANGE: std::ops::RangeInclusive<u32> = 0..=60_000;

/// The line the store's ghost mark reads: the session holding `key`.
pub fn setup(key: Name) -> Setup {
    Setup {
        line: Line {
            path: Line::LOCK.path,
            keys: key,
        },
        ..Setup::bare()
    }
}

/// One call to Consul.
pub fn call(cmd: ConsulCmd) -> Request {
    Request::Consul(cmd)
}

/// `GET key` (index 0: answered at once), or a blocking query past
/// `index` waiting `wait_ms` (0: the server's default).
pub fn get(key: Name, index: u64, wait_ms: u32) -> Request {
    call(ConsulCmd::Get {
        key: Key::fixed(key),
        index,
        wait_ms,
    })
}

/// `GET prefix?recurse` (index 0: answered at once), or a blocking query
/// past `index` waiting `wait_ms`.
pub fn list(prefix: Name, index: u64, wait_ms: u32) -> Request {
    call(ConsulCmd::List {
        prefix,
        index,
        wait_ms,
    })
}

/// The session options with a scenario's values checked against
/// Consul's bounds.
pub fn check_session(opts: SessionOpts) -> Result<(), String> {
    if !LOCK_DELAY_MS_RANGE.contains(&opts.lock_delay_ms) {
        return Err(format!(
            "lock-delay must be 0 to 60000 ms, Consul's bounds (got {} ms)",
            opts.lock_delay_ms
        ));
    }
    Ok(())
}

/// Consul's bound on a blocking query's wait: `MaxQueryTime`, 10 minutes.
pub const MAX_WAIT_MS: u32 = 600_000;

/// A blocking query's wait a scenario gives: 1 ms to 10 minutes. 0 is no
/// wait to give: Consul reads it as its default of 5 minutes.
pub fn check_wait(wait_ms: u64) -> Result<u32, String> {
    if wait_ms == 0 || wait_ms > u64::from(MAX_WAIT_MS) {
        return Err(format!(
            "must be 1 to {MAX_WAIT_MS} ms, Consul's bounds on a blocking query's wait \
             (a wait of 0 is the server's default of 5 minutes, not a wait) (got {wait_ms})"
        ));
    }
    Ok(wait_ms as u32)
}

/// A recipe's `with_consul_session`: `build` with `opts`, once they are
/// within Consul's bounds.
pub fn with_session<R: Recipe>(
    opts: SessionOpts,
    build: impl FnOnce(SessionOpts) -> R,
) -> Result<RecipeRef, String> {
    check_session(opts)?;
    Ok(RecipeRef::new(build(opts)))
}

pub fn millis(ms: u32) -> Duration {
    Duration::from_millis(ms.into())
}
