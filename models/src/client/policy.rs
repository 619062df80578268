//! What the application does when it stops hearing from the store (its
//! [`Policy`]), and the client library's view of its connection
//! ([`Connection`]).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a holder does when it stops hearing from the store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Policy {
    /// Keeps believing it holds until told otherwise: drops the belief when
    /// told its session expired.
    #[default]
    Naive,
    /// Never drops the belief until it releases, even when told its session
    /// expired: kazoo's `Lock.is_acquired` after a lost session, a command
    /// run by `etcdctl lock NAME -- cmd` that outlives its lease.
    Oblivious,
    /// Gives up the lock it holds — stops writing and releases it — once it
    /// has not heard from the store for the deadline (Curator's SUSPENDED,
    /// about 2/3 of the session timeout: Curator's advice for a lock holder),
    /// but keeps its session and goes on when the store answers again.
    SuspendAware,
    /// Treats its session, and any lock it holds or is acquiring, as lost once
    /// the session may have expired by its own clock (no word from the store
    /// for the deadline), and starts over with a new session. Its clock runs
    /// while it is cut off, so it gives up before the store expires the
    /// session; it cannot run while the process is paused.
    LeaseAware,
    /// A known-wrong `LeaseAware`, for comparison (as a recipe's bug
    /// variant is): its deadline restarts when it *sends* a heartbeat or a
    /// request, not when the store answers one, so a client whose
    /// heartbeats stop arriving keeps trusting a session the store has
    /// expired (the bug class of Kleppmann's "How to do distributed
    /// locking" and CURATOR-206). Only a checker that keeps time
    /// (`--time ticks`) or the simulator can tell it from `LeaseAware`.
    LeaseAwareFromSend,
}

impl FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "naive" => Ok(Policy::Naive),
            "oblivious" => Ok(Policy::Oblivious),
            "suspend-aware" => Ok(Policy::SuspendAware),
            "lease-aware" => Ok(Policy::LeaseAware),
            "lease-aware-from-send" => Ok(Policy::LeaseAwareFromSend),
            _ => Err(format!(
                "unknown policy '{s}' (known: naive, oblivious, suspend-aware, lease-aware, \
                 lease-aware-from-send)"
            )),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Policy::Naive => "naive",
            Policy::Oblivious => "oblivious",
            Policy::SuspendAware => "suspend-aware",
            Policy::LeaseAware => "lease-aware",
            Policy::LeaseAwareFromSend => "lease-aware-from-send",
        })
    }
}

impl Policy {
    /// Whether the client keeps a clock of its own on the store's silence
    /// (the deadline timer).
    pub fn keeps_a_deadline(self) -> bool {
        match self {
            Policy::Naive | Policy::Oblivious => false,
            Policy::SuspendAware | Policy::LeaseAware | Policy::LeaseAwareFromSend => true,
        }
    }

    /// Whether the deadline restarts when the client sends to the store
    /// (the known-wrong [`Policy::LeaseAwareFromSend`]) rather than on
    /// evidence that the store renewed the session.
    pub fn trusts_its_sends(self) -> bool {
        match self {
            Policy::LeaseAwareFromSend => true,
            Policy::Naive | Policy::Oblivious | Policy::SuspendAware | Policy::LeaseAware => false,
        }
    }
}

/// The client library's view of its connection: ZooKeeper's connection
/// states as Curator and kazoo report them (etcd's Go client has no such
/// events; an etcd client passes through the same states, unreported).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Connection {
    /// Hearing from the store.
    #[default]
    Connected,
    /// SUSPENDED: nothing from the store for the read timeout (2/3 of the
    /// session timeout), and the connection dropped; the library is trying
    /// to reconnect. The session may still be alive. Left for `Connected`
    /// (RECONNECTED: the same session, watches re-registered) when the store
    /// answers again.
    Suspended,
    /// LOST: told the session expired (or given up on it); the library
    /// opens a new session.
    Lost,
}

impl Connection {
    /// The word a library's listener would print for entering this state:
    /// SUSPENDED, LOST, RECONNECTED.
    pub fn word(self) -> &'static str {
        match self {
            Connection::Connected => "RECONNECTED",
            Connection::Suspended => "SUSPENDED",
            Connection::Lost => "LOST",
        }
    }
}

impl fmt::Display for Connection {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Connection::Connected => "connected",
            Connection::Suspended => "suspended",
            Connection::Lost => "lost",
        })
    }
}
