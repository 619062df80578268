//! Scenario files: what to simulate. TOML; an unknown key, a wrong type or an
//! impossible value is an error naming the file, the key and the reason.
//!
//! Validation also refuses timing under which a run without faults would
//! misbehave — sessions that expire between heartbeats, requests resent
//! before their reply can arrive, a lease-aware client that gives up a
//! healthy session — so a fault-free run that validates reports only what
//! the recipe really does. Every time is at most [`MAX_TIME_MS`], so sums of
//! times cannot wrap; a run has at most [`MAX_FAULTS`] faults.
//!
//! ```toml
//! recipe = "fair-predecessor"   # any registered recipe (`lockstep recipes` lists them)
//! variant = "no-guid"           # optional: one of the recipe's variants
//! clients = 5
//! rounds = 3
//! seed = 42                     # above 2^63 - 1, write it as a string: "18446744073709551615"
//! fencing = false
//! policy = "naive"              # or "oblivious", "suspend-aware", "lease-aware"
//! guid = true                   # fair-predecessor only: false is variant "no-guid"
//! restart = true                # a crash with a duration restarts after it; false: every crash is for good
//!
//! [timing]                      # milliseconds; ranges are [low, high]
//! session_timeout_ms = 4000     # ZooKeeper session timeout / etcd lease TTL / Consul session TTL
//!                               # (default 4000; Consul: 15000, within 10000..=86400000)
//! ping_interval_ms = 1333       # default: a third of the timeout (Consul: half the TTL)
//! think_ms = [5, 50]
//! hold_ms = [10, 40]
//! latency_ms = [0.2, 2.0]       # one way, per message
//! retry_ms = 1000               # longer than a round trip (2 x latency high)
//! deadline_ms = 2600            # lease-aware and suspend-aware only: default two thirds of the timeout
//!
//! [faults]                      # randomized: each kind a rate and a duration
//! until_ms = 20000              # no new faults after this
//! pause = { rate_per_s = 0.2, duration_ms = [3000, 6000] }
//! crash = { rate_per_s = 0.1, duration_ms = [500, 2000] }   # down time; then it restarts
//! partition = { rate_per_s = 0.1, duration_ms = [1000, 8000] }
//! lost_reply = { rate_per_s = 0.5 }                        # no duration
//! delay = { rate_per_s = 0.2, duration_ms = [100, 1000], extra_ms = [50, 500] }
//! check_critical = { rate_per_s = 0.1 }                    # Consul: a node check goes critical
//!
//! [consul]                      # Consul: the session's, each default the recipe's
//! lock_delay_ms = 15000         # 0 to 60000
//! behavior = "release"          # or "delete"
//! wait_ms = 15000               # a blocking query's wait: 1 to 600000 (api.Lock's)
//!
//! [[schedule]]                  # or explicit faults
//! at_ms = 300
//! kind = "pause"
//! client = 0
//! duration_ms = 5000
//! ```

use models::apps::{Role, Roles};
use models::client::{Client, ClientTiming, Policy};
use models::model::Setting;
use models::properties::PropertyName;
use models::recipe::{App, Face, RecipeRef};
use models::recipes;
use models::recipes::redis::{KeyClock, KeyTiming};
use models::store::Store;
use models::timing;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// An error in a scenario: which file, which key, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub key: String,
    pub reason: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file, self.reason)
        } else {
            write!(f, "{}: `{}`: {}", self.file, self.key, self.reason)
        }
    }
}

/// The file as written.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub recipe: String,
    pub variant: Option<String>,
    pub clients: u32,
    pub rounds: Option<u32>,
    /// A queue: how many of the clients produce (the first ones; by
    /// default half, at least one); the others consume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producers: Option<u32>,
    /// A shared lock: how many of the clients write (the first ones; by
    /// default one); the others read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writers: Option<u32>,
    /// A semaphore: how many leases it has (by default one fewer than the
    /// clients).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permits: Option<u32>,
    /// An election whose library has an observer: how many of the clients
    /// observe (the first ones; by default none); the others campaign.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observers: Option<u32>,
    pub seed: Option<Seed>,
    pub fencing: Option<bool>,
    pub policy: Option<String>,
    pub guid: Option<bool>,
    /// A lock: how often a holder acquires again in each hold (nested), as
    /// its library answers a second acquire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reentries: Option<u32>,
    /// Redis: how many masters a lock over several (Redlock) talks to
    /// (odd, at least 3; default the recipe's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub masters: Option<u32>,
    /// Redis: what a master keeps over a restart, `"none"` (default) or
    /// `"appendfsync-always"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistence: Option<String>,
    /// Redis: the first master has an asynchronously replicated replica.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replica: Option<bool>,
    /// ZooKeeper and etcd: the servers of the ensemble (odd; default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<u8>,
    /// ZooKeeper with `servers`: local sessions (`localSessionsEnabled`):
    /// a follower opens a new session by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_sessions: Option<bool>,
    /// The properties this file is expected to violate (reproducers record
    /// what they reproduce; `run` and `replay` say "did not reproduce"
    /// otherwise). `[]` expects no violation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<Vec<String>>,
    /// Whether a crashed client comes back after its crash's duration, as
    /// a new process (default true); false: every crash is for good, its
    /// duration kept only so that a seed draws the same faults either way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart: Option<bool>,
    /// Virtual time limit; by default long enough for every round.
    pub duration_ms: Option<u64>,
    /// Consul: what the recipe's session asks for (default the recipe's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consul: Option<ConsulFile>,
    pub timing: Option<TimingFile>,
    pub faults: Option<FaultProfileFile>,
    pub schedule: Option<Vec<ScheduledFault>>,
}

/// A `[low, high]` range as a file writes it: exactly two numbers. (toml
/// does not check the length of a fixed-size array: `[5, 50, 99]` would
/// lose its third number without a word.)
fn pair<'de, D, T>(d: D) -> Result<Option<[T; 2]>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let items = Vec::<T>::deserialize(d)?;
    let n = items.len();
    <[T; 2]>::try_from(items)
        .map(Some)
        .map_err(|_| serde::de::Error::invalid_length(n, &"two numbers, [low, high]"))
}

/// A seed as a scenario file writes it: an integer, or a string of digits
/// for a seed above 2^63 − 1, which a TOML integer cannot hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed(pub u64);

impl Serialize for Seed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(self.0) {
            Ok(small) => s.serialize_i64(small),
            Err(_) => s.serialize_str(&self.0.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Seed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Seed;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a seed: an integer from 0 to 18446744073709551615 (above 9223372036854775807, as a string)")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Seed, E> {
                u64::try_from(v)
                    .map(Seed)
                    .map_err(|_| E::custom(format!("a seed cannot be negative (got {v})")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Seed, E> {
                Ok(Seed(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Seed, E> {
                v.parse().map(Seed).map_err(|_| {
                    E::custom(format!("'{v}' is not a seed (0 to 18446744073709551615)"))
                })
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TimingFile {
    pub session_timeout_ms: Option<u64>,
    pub ping_interval_ms: Option<u64>,
    #[serde(default, deserialize_with = "pair")]
    pub think_ms: Option<[u64; 2]>,
    /// A queue's producers: think time between items (default `think_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default, deserialize_with = "pair")]
    pub produce_ms: Option<[u64; 2]>,
    #[serde(default, deserialize_with = "pair")]
    pub hold_ms: Option<[u64; 2]>,
    #[serde(default, deserialize_with = "pair")]
    pub latency_ms: Option<[f64; 2]>,
    pub retry_ms: Option<u64>,
    pub deadline_ms: Option<u64>,
    /// A lock acquired with a timeout: a client gives an acquisition up
    /// after this long, at its recipe's next wait (none: waits for ever).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acquire_timeout_ms: Option<u64>,
    /// Redis: the lock key's TTL (default: the library's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_ttl_ms: Option<u64>,
    /// Redis: the delay between two tries (default: the library's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_delay_ms: Option<u64>,
    /// Redis with a replica: how long a change on the first master takes
    /// to reach its replica (default [`DEFAULT_REPLICATION_MS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default, deserialize_with = "pair")]
    pub replication_ms: Option<[u64; 2]>,
    /// An ensemble: how long after the leader commits a change each
    /// follower applies it (default: the clients' `latency_ms`, one hop).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default, deserialize_with = "pair")]
    pub apply_ms: Option<[u64; 2]>,
    /// A ZooKeeper ensemble: syncLimit × tickTime, how long a follower cut
    /// off from the leader goes on serving its clients before it gives
    /// the leader up (default 10000: ZooKeeper's sample tickTime 2000 and
    /// syncLimit 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_limit_ms: Option<u64>,
    /// A ZooKeeper ensemble: tickTime (default 2000). A leader cut off
    /// from its followers checks its quorum once a tick: it gives leading
    /// up `sync_limit_ms` and a tick after the cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick_ms: Option<u64>,
    /// An etcd cluster: the election timeout (etcd's
    /// `--election-timeout`, default 1000). Followers that hear no leader
    /// for it elect another, and a leader that hears no quorum for it
    /// steps down (CheckQuorum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub election_timeout_ms: Option<u64>,
}

/// The `[consul]` table: what a Consul recipe's session asks for at
/// `session/create`, each the recipe's own unless given.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConsulFile {
    /// The session's lock-delay (0 to 60,000 ms; Consul's default 15 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_delay_ms: Option<u64>,
    /// What its invalidation does to the keys it holds: `"release"` or
    /// `"delete"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behavior: Option<String>,
    /// The wait its blocking queries ask for (`?wait=`; `api.Lock`'s
    /// `LockWaitTime`, 15 s): 1 to 600,000 ms, for a recipe that names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}

/// A fault kind's rate and how long each lasts.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultRate {
    pub rate_per_s: f64,
    #[serde(default, deserialize_with = "pair")]
    pub duration_ms: Option<[u64; 2]>,
    /// Delay spikes only: extra one-way latency.
    #[serde(default, deserialize_with = "pair")]
    pub extra_ms: Option<[u64; 2]>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultProfileFile {
    pub until_ms: Option<u64>,
    pub crash: Option<FaultRate>,
    pub pause: Option<FaultRate>,
    pub partition: Option<FaultRate>,
    pub lost_reply: Option<FaultRate>,
    pub delay: Option<FaultRate>,
    /// Consul: a client's node check goes critical (no duration).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_critical: Option<FaultRate>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The client process stops; with a duration it restarts afterwards
    /// (a new process, a new session), without one — or in a scenario with
    /// `restart = false` — it stays down.
    Crash,
    Pause,
    Partition,
    LostReply,
    Delay,
    /// Redis: a master restarts (without persistence: empty). A store
    /// fault: it strikes a `master`, not a client, and has no duration.
    MasterRestart,
    /// Redis: a master's clock jumps forward past every TTL it keeps.
    ClockJump,
    /// Redis: the first master's replica is promoted in its place.
    /// Consul: the leader fails over to a server restored from a snapshot
    /// (lock-delays forgotten, every session's TTL started again).
    Failover,
    /// The application interrupts the client's acquisition, its request
    /// still on its way (Redisson's `lockInterruptibly`). Instantaneous;
    /// scheduled only.
    Interrupt,
    /// Consul: the client's node check (`serfHealth`) goes critical, and
    /// the store invalidates the client's session at once, whatever its
    /// TTL. Instantaneous; scheduled or drawn.
    #[serde(alias = "check-critical")]
    CheckCritical,
    /// ZooKeeper and etcd over an ensemble: a follower (`server`, 1 up)
    /// stops applying the leader's commits for `duration_ms`, then
    /// applies what it missed in order. Its clients stay connected and
    /// are served its view. Scheduled only.
    Lag,
    /// A ZooKeeper ensemble: a follower (`server`) is cut off from the
    /// leader for `duration_ms`. It serves its clients' reads and pings
    /// from its own view, passes nothing on, and after
    /// `timing.sync_limit_ms` gives the leader up and closes its clients'
    /// connections; it follows the leader again when the cut heals.
    /// Scheduled only.
    Isolate,
    /// A ZooKeeper ensemble: the leader stops hearing a follower
    /// (`server`) for `duration_ms` — its half of the link is held — while
    /// the follower still hears the leader and applies its commits. It
    /// serves its clients' reads fresh and tells them of their sessions'
    /// ends when it applies them, but what it passes the leader waits:
    /// their writes, `sync`s and sessions' touches. After
    /// `timing.sync_limit_ms` the leader drops it (no word from it for
    /// syncLimit × tickTime) and it closes its clients' connections; it
    /// follows the leader again when the link heals. Scheduled only.
    Mute,
}

/// The faults that strike one follower of an ensemble: what it stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FollowerFault {
    /// Applying the leader's commits.
    Lag,
    /// Hearing the leader and being heard by it.
    Isolate,
    /// Being heard by the leader.
    Mute,
}

impl FaultKind {
    /// Whether the fault strikes the store (a Redis master) rather than a
    /// client.
    pub fn strikes_the_store(self) -> bool {
        match self {
            FaultKind::MasterRestart
            | FaultKind::ClockJump
            | FaultKind::Failover
            | FaultKind::Lag
            | FaultKind::Isolate
            | FaultKind::Mute => true,
            FaultKind::Crash
            | FaultKind::Pause
            | FaultKind::Partition
            | FaultKind::LostReply
            | FaultKind::Delay
            | FaultKind::Interrupt
            | FaultKind::CheckCritical => false,
        }
    }

    /// Whether the fault strikes a follower of an ensemble (`server`).
    pub fn strikes_a_follower(self) -> bool {
        self.follower_fault().is_some()
    }

    /// The fault as one that strikes a follower, if it is one.
    pub fn follower_fault(self) -> Option<FollowerFault> {
        match self {
            FaultKind::Lag => Some(FollowerFault::Lag),
            FaultKind::Isolate => Some(FollowerFault::Isolate),
            FaultKind::Mute => Some(FollowerFault::Mute),
            FaultKind::Crash
            | FaultKind::Pause
            | FaultKind::Partition
            | FaultKind::LostReply
            | FaultKind::Delay
            | FaultKind::MasterRestart
            | FaultKind::ClockJump
            | FaultKind::Failover
            | FaultKind::Interrupt
            | FaultKind::CheckCritical => None,
        }
    }

    pub const ALL: [FaultKind; 5] = [
        FaultKind::Crash,
        FaultKind::Pause,
        FaultKind::Partition,
        FaultKind::LostReply,
        FaultKind::Delay,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Crash => "crash",
            FaultKind::Pause => "pause",
            FaultKind::Partition => "partition",
            FaultKind::LostReply => "lost_reply",
            FaultKind::Delay => "delay",
            FaultKind::MasterRestart => "master_restart",
            FaultKind::ClockJump => "clock_jump",
            FaultKind::Failover => "failover",
            FaultKind::Interrupt => "interrupt",
            FaultKind::CheckCritical => "check_critical",
            FaultKind::Lag => "lag",
            FaultKind::Isolate => "isolate",
            FaultKind::Mute => "mute",
        }
    }
}

/// One fault at a given time, for a given client.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(deny_unknown_fields)]
pub struct ScheduledFault {
    pub at_ms: u64,
    pub kind: FaultKind,
    /// The client a client fault strikes (required for one; a store
    /// fault names a `master` instead).
    #[serde(default = "no_client", skip_serializing_if = "is_no_client")]
    pub client: u32,
    /// The master a store fault strikes (a failover: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master: Option<u32>,
    /// The follower a lag strikes (1 up: server 0 is the leader).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<u32>,
    pub duration_ms: Option<u64>,
    pub extra_ms: Option<u64>,
}

/// A fault file entry with no `client`: a store fault's.
pub const NO_CLIENT: u32 = u32::MAX;

fn no_client() -> u32 {
    NO_CLIENT
}

fn is_no_client(c: &u32) -> bool {
    *c == NO_CLIENT
}

/// In words: `pause of client 0 at 150 ms for 6000 ms`, `master_restart
/// of master 2 at 900 ms`, `failover of the store at 300 ms` (Consul's
/// leader, which names no master).
impl std::fmt::Display for ScheduledFault {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match (self.master, self.server) {
            (_, Some(s)) => write!(f, "{} of server {s} at {} ms", self.kind.name(), self.at_ms)?,
            (Some(m), None) => {
                write!(f, "{} of master {m} at {} ms", self.kind.name(), self.at_ms)?
            }
            (None, None) if self.client == NO_CLIENT => {
                write!(f, "{} of the store at {} ms", self.kind.name(), self.at_ms)?
            }
            (None, None) => write!(
                f,
                "{} of client {} at {} ms",
                self.kind.name(),
                self.client,
                self.at_ms
            )?,
        }
        if let Some(d) = self.duration_ms {
            write!(f, " for {d} ms")?;
        }
        Ok(())
    }
}

/// Resolved timing, in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timing {
    pub session_timeout_us: u64,
    pub ping_interval_us: u64,
    pub think_us: (u64, u64),
    /// A queue's producers' think time (the others' `think_us` otherwise).
    pub produce_us: (u64, u64),
    pub hold_us: (u64, u64),
    pub latency_us: (u64, u64),
    pub retry_us: u64,
    pub deadline_us: u64,
    /// A lock's acquire timeout, if its clients have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acquire_timeout_us: Option<u64>,
    /// Redis with a replica: its replication lag's range (none without
    /// one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replication_us: Option<(u64, u64)>,
    /// An ensemble: how long after a commit a follower applies it (none
    /// on one server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apply_us: Option<(u64, u64)>,
    /// A ZooKeeper ensemble: syncLimit × tickTime (none on one server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_limit_us: Option<u64>,
    /// A ZooKeeper ensemble: tickTime (none on one server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick_us: Option<u64>,
    /// An etcd cluster: the election timeout (none on one server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub election_timeout_us: Option<u64>,
}

/// A fault kind's resolved rate and durations (microseconds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rate {
    pub per_second: f64,
    pub duration_us: (u64, u64),
    pub extra_us: (u64, u64),
}

/// A validated scenario, every setting resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    pub name: String,
    pub recipe: RecipeRef,
    pub clients: u16,
    pub rounds: u8,
    /// A queue's producers (the first clients); 0 for other applications.
    pub producers: u16,
    /// A shared lock's writers (the first clients); 0 for other
    /// applications.
    pub writers: u16,
    /// A semaphore's permits; 0 for other applications.
    pub permits: u16,
    /// An election's observers (the first clients); 0 by default.
    pub observers: u16,
    pub seed: u64,
    pub fencing: bool,
    pub policy: Policy,
    /// Redis: persistence and replica.
    pub deployment: models::store::redis::Deployment,
    /// ZooKeeper and etcd: the ensemble's servers (1: one server).
    #[serde(skip_serializing_if = "is_one")]
    pub servers: u8,
    /// ZooKeeper's local sessions (with `servers`).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub local_sessions: bool,
    /// A lock holder's re-entries per hold (0: none).
    pub reentries: u8,
    /// A crash with a duration restarts the client after it (a new
    /// process: its saved storage, a new session); false: every crash is
    /// for good.
    pub restart: bool,
    pub timing: Timing,
    /// Randomized faults (none if empty); drawn until `faults_until_us`.
    pub profile: Vec<(FaultKind, Rate)>,
    pub faults_until_us: u64,
    pub schedule: Vec<ScheduledFault>,
    /// The time limit the file gives (`duration_ms`): a run cut short by it
    /// reports "time limit reached", not a `progress` violation.
    pub duration_us: Option<u64>,
    /// A run stops (reported as cut off, no verdict) after this many events:
    /// [`MAX_EVENTS`] unless a caller lowers it.
    #[serde(skip)]
    pub max_events: u64,
    /// What the file expects to be violated, if it says.
    pub expect: Option<Vec<PropertyName>>,
    /// The file as written, to write reproducers from.
    #[serde(skip)]
    pub source: ScenarioFile,
}

/// The largest client count the simulator accepts.
pub const MAX_SIM_CLIENTS: u32 = 10_000;

/// The most rounds a simulated client runs.
pub const MAX_ROUNDS: u8 = 200;

/// The longest time any setting may name (about 11.6 days of virtual time):
/// every sum the simulator forms from settings then fits in 64-bit
/// microseconds.
pub const MAX_TIME_MS: u64 = 1_000_000_000;

/// The longest scenario file read: a schedule of [`MAX_FAULTS`] faults
/// fits many times over.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// At most this many faults in a run, drawn (expected) or scheduled.
pub const MAX_FAULTS: u64 = 100_000;

/// Events at one virtual instant before a run is called stuck (time not
/// advancing), plus this many per client: a herd of 10,000 clients with a
/// fixed latency wakes, asks and is answered at one instant, legitimately.
pub const MAX_EVENTS_AT_ONE_INSTANT: u64 = 1_000_000;
pub const EVENTS_AT_ONE_INSTANT_PER_CLIENT: u64 = 1_000;

/// Events in one run before it is stopped (minutes of work).
pub const MAX_EVENTS: u64 = 2_000_000_000;

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = crate::read_capped(path, MAX_FILE_BYTES).map_err(|reason| ScenarioError {
            file: file.clone(),
            key: String::new(),
            reason,
        })?;
        // The name goes into traces and results; a name that is not UTF-8
        // would be changed on the way, so it is refused instead.
        let name = match path.file_stem().map(|s| s.to_str()) {
            Some(Some(stem)) => stem.to_string(),
            Some(None) => {
                return Err(ScenarioError {
                    file,
                    key: String::new(),
                    reason: "the file name is not valid UTF-8; rename the file".into(),
                })
            }
            None => file.clone(),
        };
        Scenario::parse(&text, &file, &name)
    }

    pub fn parse(text: &str, file: &str, name: &str) -> Result<Scenario, ScenarioError> {
        Scenario::resolve(read_toml(text, file)?, file, name)
    }

    /// A scenario for `recipe`, which need not be registered (a user's own
    /// recipe): `text` is a scenario file without `recipe`, `variant` or `guid`.
    pub fn parse_with_recipe(
        text: &str,
        file: &str,
        name: &str,
        recipe: RecipeRef,
    ) -> Result<Scenario, ScenarioError> {
        Scenario::resolve_with(read_toml(text, file)?, file, name, Some(recipe))
    }

    pub fn resolve(raw: ScenarioFile, file: &str, name: &str) -> Result<Scenario, ScenarioError> {
        Scenario::resolve_with(raw, file, name, None)
    }

    fn resolve_with(
        mut raw: ScenarioFile,
        file: &str,
        name: &str,
        given: Option<RecipeRef>,
    ) -> Result<Scenario, ScenarioError> {
        let err = |key: &str, reason: String| ScenarioError {
            file: file.to_string(),
            key: key.to_string(),
            reason,
        };
        let recipe = match given {
            Some(recipe) => {
                if !raw.recipe.is_empty() || raw.variant.is_some() || raw.guid.is_some() {
                    return Err(err(
                        "recipe",
                        format!("the recipe is given by the caller ({recipe}); leave `recipe`, `variant` and `guid` out"),
                    ));
                }
                recipe
            }
            None => registered_recipe(&raw, &err)?,
        };
        let recipe = match raw.masters {
            None => recipe,
            Some(n) => u8::try_from(n)
                .ok()
                .and_then(|n| recipe.on_masters(n))
                .ok_or_else(|| {
                    err(
                        "masters",
                        match recipe.on_masters(3) {
                            Some(_) => format!("must be odd, at least 3 and at most 255 (got {n})"),
                            None => format!(
                                "{recipe} talks to one store; masters are for a lock over several \
                                 Redis masters (redlock)"
                            ),
                        },
                    )
                })?,
        };
        models::model::check_masters(&recipe).map_err(|e| err("masters", e))?;
        let recipe = resolve_key_timing(raw.timing.as_ref(), recipe, &err)?;
        let recipe = resolve_consul(raw.consul.as_ref(), recipe, &err)?;
        let deployment = resolve_deployment(&raw, &recipe, &err)?;
        // Reproducers name the recipe when the registry can find it again;
        // a user's own recipe stays unnamed, so replaying one is an error
        // ("missing recipe") rather than a run of some other recipe.
        if raw.recipe.is_empty()
            && recipes::lookup(recipe.name(), recipe.variant()).is_ok_and(|r| r == recipe)
        {
            raw.recipe = recipe.name().to_string();
            raw.variant = recipe.variant().map(str::to_string);
        }
        if !(1..=MAX_SIM_CLIENTS).contains(&raw.clients) {
            return Err(err(
                "clients",
                format!(
                    "must be between 1 and {MAX_SIM_CLIENTS} (got {})",
                    raw.clients
                ),
            ));
        }
        let rounds = raw.rounds.unwrap_or(1);
        if !(1..=u32::from(MAX_ROUNDS)).contains(&rounds) {
            return Err(err(
                "rounds",
                format!("must be between 1 and {MAX_ROUNDS} (got {rounds})"),
            ));
        }
        if recipe.app() == models::recipe::App::Barrier && rounds != 1 {
            return Err(err(
                "rounds",
                format!(
                    "{recipe} is a barrier, which its group passes once: must be 1 (got {rounds})"
                ),
            ));
        }
        // A role's count given for a recipe of another application.
        for (key, setting, given) in [
            ("producers", Setting::Producers, raw.producers.is_some()),
            ("writers", Setting::Writers, raw.writers.is_some()),
            ("permits", Setting::Permits, raw.permits.is_some()),
            ("observers", Setting::Observers, raw.observers.is_some()),
        ] {
            models::model::check_given(&recipe, setting, given).map_err(|e| err(key, e))?;
        }
        let producers = raw.producers.unwrap_or_else(|| {
            models::model::default_producers(&recipe, raw.clients as u16).into()
        });
        // Too few clients for a queue is the clients' fault, not the
        // producers' (which may not even be given).
        let blame = match recipe.app() == App::Queue && raw.clients < 2 {
            true => "clients",
            false => "producers",
        };
        models::model::check_producers(&recipe, raw.clients as u16, producers)
            .map_err(|e| err(blame, e))?;
        // Fewer than the clients, which are at most MAX_SIM_CLIENTS.
        let producers = producers as u16;
        let produce_given = raw.timing.as_ref().is_some_and(|t| t.produce_ms.is_some());
        if produce_given && recipe.app() != App::Queue {
            return Err(err(
                "timing.produce_ms",
                format!("is a queue's producers' pace; {recipe} is no queue"),
            ));
        }
        let writers = raw
            .writers
            .unwrap_or_else(|| models::model::default_writers(&recipe).into());
        models::model::check_writers(&recipe, raw.clients as u16, writers)
            .map_err(|e| err("writers", e))?;
        let permits = raw
            .permits
            .unwrap_or_else(|| models::model::default_permits(&recipe, raw.clients as u16).into());
        models::model::check_permits(&recipe, raw.clients as u16, permits)
            .map_err(|e| err("permits", e))?;
        let observers = raw.observers.unwrap_or(0);
        models::model::check_observers(&recipe, raw.clients as u16, observers)
            .map_err(|e| err("observers", e))?;
        // All fewer than the clients, which are at most MAX_SIM_CLIENTS.
        let (writers, permits, observers) = (writers as u16, permits as u16, observers as u16);
        models::model::check_fencing(&recipe, raw.fencing.unwrap_or(false))
            .map_err(|e| err("fencing", e))?;
        let reentries = raw.reentries.unwrap_or(0);
        models::model::check_reentries(&recipe, reentries).map_err(|e| err("reentries", e))?;
        // At most MAX_REENTRIES: it fits.
        let reentries = reentries as u8;
        if raw
            .timing
            .as_ref()
            .is_some_and(|t| t.acquire_timeout_ms.is_some())
        {
            models::model::check_acquire_timeout(&recipe)
                .map_err(|e| err("timing.acquire_timeout_ms", e))?;
        }
        let policy: Policy = match &raw.policy {
            Some(p) => p.parse().map_err(|e| err("policy", e))?,
            None => Policy::Naive,
        };
        models::model::check_redis_policy(&recipe, policy).map_err(|e| err("policy", e))?;
        let timing_file = raw.timing.clone().unwrap_or_default();
        let mut timing = resolve_timing(&timing_file, policy, recipe.face(), &err)?;
        timing.replication_us = resolve_replication(&timing_file, deployment, &err)?;
        let servers = raw.servers.unwrap_or(1);
        models::model::check_servers(&recipe, servers).map_err(|e| err("servers", e))?;
        let local_sessions = raw.local_sessions.unwrap_or(false);
        models::model::check_local_sessions(&recipe, servers, local_sessions)
            .map_err(|e| err("local_sessions", e))?;
        timing.apply_us = match (servers, timing_file.apply_ms) {
            (1, Some(_)) => return Err(err(
                "timing.apply_ms",
                "is how long a follower takes to apply a change: it needs `servers = 3` or more"
                    .into(),
            )),
            (1, None) => None,
            (_, Some(ms)) => {
                let apply = range_us("timing.apply_ms", ms, &err)?;
                // A new session is answered once its server applied it, and
                // pings start then: a follower slower than the client's
                // read timeout would lose a session with no fault.
                let read_timeout = models::timing::read_timeout(timing.session_timeout_us);
                if apply.1 >= read_timeout / 2 {
                    return Err(err(
                        "timing.apply_ms",
                        format!(
                            "must stay below half the read timeout ({} ms, 2/3 of the session \
                             timeout), or a session would be lost with no fault (got a high of {} ms)",
                            read_timeout / 2000,
                            apply.1 / 1000
                        ),
                    ));
                }
                Some(apply)
            }
            (_, None) => Some(timing.latency_us),
        };
        timing.sync_limit_us = match (servers, recipe.face(), timing_file.sync_limit_ms) {
            (1, _, Some(_)) | (_, Face::Etcd, Some(_)) => {
                return Err(err(
                    "timing.sync_limit_ms",
                    "is how long a cut-off ZooKeeper follower serves on: it needs a ZooKeeper \
                     recipe with `servers = 3` or more"
                        .into(),
                ))
            }
            (1, _, None) | (_, Face::Etcd | Face::Redis | Face::Consul, None) => None,
            (_, _, Some(0)) => {
                return Err(err(
                    "timing.sync_limit_ms",
                    "0: a follower gives the leader up after some time (more than 0)".into(),
                ))
            }
            (_, _, ms) => Some(time_us(
                "timing.sync_limit_ms",
                ms.unwrap_or(DEFAULT_SYNC_LIMIT_MS),
                &err,
            )?),
        };
        timing.tick_us = match (timing.sync_limit_us, timing_file.tick_ms) {
            (None, Some(_)) => {
                return Err(err(
                    "timing.tick_ms",
                    "is a ZooKeeper ensemble's tickTime: it needs a ZooKeeper recipe with \
                     `servers = 3` or more"
                        .into(),
                ))
            }
            (None, None) => None,
            (Some(_), Some(0)) => {
                return Err(err(
                    "timing.tick_ms",
                    "0: ZooKeeper's tickTime is more than 0".into(),
                ))
            }
            (Some(_), ms) => Some(time_us(
                "timing.tick_ms",
                ms.unwrap_or(DEFAULT_TICK_MS),
                &err,
            )?),
        };
        timing.election_timeout_us = match (servers, recipe.face(), timing_file.election_timeout_ms)
        {
            (1, _, Some(_)) | (_, Face::ZooKeeper | Face::Redis | Face::Consul, Some(_)) => {
                return Err(err(
                    "timing.election_timeout_ms",
                    "is an etcd cluster's election timeout: it needs an etcd recipe with \
                     `servers = 3` or more"
                        .into(),
                ))
            }
            (1, _, None) | (_, Face::ZooKeeper | Face::Redis | Face::Consul, None) => None,
            (_, Face::Etcd, Some(0)) => {
                return Err(err(
                    "timing.election_timeout_ms",
                    "0: etcd's election timeout is more than 0".into(),
                ))
            }
            (_, Face::Etcd, ms) => Some(time_us(
                "timing.election_timeout_ms",
                ms.unwrap_or(DEFAULT_ELECTION_TIMEOUT_MS),
                &err,
            )?),
        };
        check_key_ttl(&recipe, &timing, &err)?;
        let f = raw.faults.clone().unwrap_or_default();
        let faults_until_us = time_us("faults.until_ms", f.until_ms.unwrap_or(20_000), &err)?;
        let profile = resolve_profile(&f, faults_until_us, &err)?;
        let schedule = raw.schedule.clone().unwrap_or_default();
        let store_of = (recipe.face(), u32::from(recipe.setup().masters));
        // How long a leader failover's cut must outlast: ZooKeeper's
        // syncLimit × tickTime, etcd's election timeout.
        let ensemble = (servers, timing.sync_limit_us.or(timing.election_timeout_us));
        check_schedule(&schedule, raw.clients, store_of, ensemble, &err)?;
        if let Some(i) = schedule.iter().position(|f| f.kind == FaultKind::Interrupt) {
            models::model::check_interrupts(&recipe)
                .map_err(|e| err(&format!("schedule[{i}].kind"), e))?;
        }
        check_critical_is_consul(&recipe, &f, &schedule, &err)?;
        let redis = recipe.face() == Face::Redis;
        if redis && !deployment.replica && schedule.iter().any(|f| f.kind == FaultKind::Failover) {
            return Err(err(
                "replica",
                "a failover promotes the first master's replica: set `replica = true`".into(),
            ));
        }
        let duration_us = match raw.duration_ms {
            Some(0) => return Err(err("duration_ms", "must be positive".into())),
            Some(d) => Some(time_us("duration_ms", d, &err)?),
            None => None,
        };
        let expect = match &raw.expect {
            None => None,
            Some(names) => Some(
                names
                    .iter()
                    .map(|n| expected_property(n, &recipe, (reentries, observers), &err))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        if let Some(ps) = &expect {
            if let Some((i, p)) = ps.iter().enumerate().find(|(i, p)| ps[..*i].contains(p)) {
                return Err(err(
                    &format!("expect[{i}]"),
                    format!("'{}' is listed twice", p.name()),
                ));
            }
        }
        let sleep_us = whole_us(recipe.longest_sleep());
        liveness_bound_us(
            &timing,
            (sleep_us, reentries, consul_margin_us(&recipe, &timing)),
            raw.clients as u64,
            rounds as u64,
        )
        .ok_or_else(|| {
            err(
                "timing",
                format!(
                    "with these times, {} clients and {rounds} rounds the run's time limit \
                         does not fit in 64-bit microseconds: use shorter times",
                    raw.clients
                ),
            )
        })?;
        // Only without faults is the bound a bound: a crash for good or a
        // lost session may end a client's rounds early.
        if profile.is_empty() && schedule.is_empty() {
            let roles = Roles {
                producers,
                writers,
                observers,
            };
            check_heartbeats(
                &timing,
                recipe.app(),
                (raw.clients as u16, roles),
                rounds as u64,
                duration_us,
            )
            .map_err(|reason| err(ping_setting(&timing_file), reason))?;
        }
        Ok(Scenario {
            name: name.to_string(),
            recipe,
            clients: raw.clients as u16,
            rounds: rounds as u8,
            producers,
            writers,
            permits,
            observers,
            seed: raw.seed.map_or(0, |s| s.0),
            fencing: raw.fencing.unwrap_or(false),
            policy,
            deployment,
            servers,
            local_sessions,
            reentries,
            restart: raw.restart.unwrap_or(true),
            timing,
            profile,
            faults_until_us,
            schedule,
            duration_us,
            max_events: MAX_EVENTS,
            expect,
            source: raw,
        })
    }

    /// How long after the last fault every live client must have finished
    /// (the `progress` bound): a session timeout, resends, and every
    /// client's rounds one after another. Computed from the settings as
    /// they are now (a herd sweep changes `clients`); validation made sure
    /// it fits for the file's own settings.
    pub fn liveness_bound_us(&self) -> u64 {
        let sleep_us = whole_us(self.recipe.longest_sleep());
        liveness_bound_us(
            &self.timing,
            (
                sleep_us,
                self.reentries,
                consul_margin_us(&self.recipe, &self.timing),
            ),
            self.clients as u64,
            self.rounds as u64,
        )
        .unwrap_or(u64::MAX)
    }

    /// The client actor every client of a run runs (a barrier recipe made
    /// for its group's size, a semaphore's for its permits).
    pub fn client(&self) -> Client {
        Client {
            recipe: self
                .recipe
                .in_group(self.clients)
                .with_permits(self.permits),
            rounds: self.rounds,
            policy: self.policy,
            timing: self.client_timing(),
            producers: self.producers,
            reentries: self.reentries,
            writers: self.writers,
            observers: self.observers,
        }
    }

    /// The store actor of a run.
    pub fn store(&self) -> Store {
        Store {
            deployment: self.deployment,
            observers: self.observers,
            // The simulator bounds no lag: a follower applies when its
            // drawn delay is over.
            ensemble: (self.servers > 1).then(|| {
                models::store::EnsembleCfg::new(
                    self.recipe.face(),
                    self.servers,
                    self.clients,
                    u32::MAX,
                    self.local_sessions,
                )
            }),
            ..Store::for_recipe(
                &self.recipe,
                Duration::from_micros(self.timing.session_timeout_us),
                self.clients,
            )
        }
    }

    /// The client actors' timing.
    pub fn client_timing(&self) -> ClientTiming {
        let us = Duration::from_micros;
        let t = &self.timing;
        ClientTiming {
            think: us(t.think_us.0)..us(t.think_us.1 + 1),
            produce: us(t.produce_us.0)..us(t.produce_us.1 + 1),
            hold: us(t.hold_us.0)..us(t.hold_us.1 + 1),
            retry: us(t.retry_us),
            ping: us(t.ping_interval_us),
            deadline: us(t.deadline_us),
            acquire_timeout: t.acquire_timeout_us.map(us),
        }
    }

    /// This scenario as a file with an explicit schedule, no randomized
    /// faults, the given seed, clients (and a queue's producers, a shared
    /// lock's writers, an election's observers among them) and rounds, and
    /// what it is expected to violate: a reproducer.
    pub fn reproducer(
        &self,
        seed: u64,
        (clients, producers, writers, observers, rounds): (u16, u16, u16, u16, u8),
        schedule: Vec<ScheduledFault>,
        expect: &[PropertyName],
        note: &str,
    ) -> String {
        let mut file = self.source.clone();
        file.expect = Some(expect.iter().map(|p| p.name().to_string()).collect());
        file.seed = Some(Seed(seed));
        file.clients = u32::from(clients);
        file.producers = (self.recipe.app() == App::Queue).then_some(u32::from(producers));
        file.writers = (self.recipe.app() == App::SharedLock).then_some(u32::from(writers));
        file.permits = (self.recipe.app() == App::Semaphore).then_some(u32::from(self.permits));
        file.observers = (observers > 0).then_some(u32::from(observers));
        file.rounds = Some(rounds as u32);
        file.faults = None;
        file.schedule = Some(schedule);
        let body = toml::to_string(&file).expect("scenario files serialise");
        let mut out = String::new();
        for line in note.lines() {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&body);
        out
    }
}

/// A scenario file's TOML, or what is wrong with it, on one line.
fn read_toml(text: &str, file: &str) -> Result<ScenarioFile, ScenarioError> {
    toml::from_str(text).map_err(|e| {
        let mut reason = e.to_string().trim().replace('\n', " ");
        // TOML's integers stop at 2^63 - 1; lockstep's seeds go on to 2^64 - 1.
        if reason.contains("number too large to fit in target type") {
            reason.push_str(
                " (TOML integers stop at 9223372036854775807: write a larger seed as a string, \
                 seed = \"18446744073709551615\")",
            );
        }
        ScenarioError {
            file: file.to_string(),
            key: String::new(),
            reason,
        }
    })
}

/// The registered recipe a scenario file names (`recipe`, `variant`, or the
/// older `guid = false`).
fn registered_recipe(
    raw: &ScenarioFile,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<RecipeRef, ScenarioError> {
    if raw.recipe.is_empty() {
        return Err(err(
            "recipe",
            "missing: name a recipe (`lockstep recipes` lists them)".into(),
        ));
    }
    if let Some((name, variant)) = raw.recipe.split_once(':') {
        return Err(err(
            "recipe",
            format!(
                "'{}': in a scenario file the variant is its own key: \
                 recipe = \"{name}\" and variant = \"{variant}\"",
                raw.recipe
            ),
        ));
    }
    let registered = recipes::find(&raw.recipe).map_err(|e| err("recipe", e))?;
    // `guid = false` is the older spelling of fair-predecessor's variant.
    let fair = registered.name == "fair-predecessor";
    let variant = match (raw.variant.as_deref(), raw.guid) {
        (v, None) => v,
        (Some("no-guid"), Some(true)) if fair => {
            return Err(err(
                "guid",
                "`guid = true` contradicts `variant = \"no-guid\"` (the variant without the guid): give one".into(),
            ))
        }
        (v, Some(true)) if fair => v,
        (None | Some("no-guid"), Some(false)) if fair => Some("no-guid"),
        (Some(v), Some(false)) if fair => {
            return Err(err(
                "guid",
                format!("`guid = false` is variant no-guid, which contradicts `variant = \"{v}\"`: give one"),
            ))
        }
        (_, Some(_)) => {
            return Err(err(
                "guid",
                format!("applies only to fair-predecessor, not {}", registered.name),
            ))
        }
    };
    recipes::lookup(registered.name, variant).map_err(|e| err("variant", e))
}

/// A setting in milliseconds, as microseconds, if it is at most
/// [`MAX_TIME_MS`]: every sum the simulator forms from settings then fits.
fn time_us(
    key: &str,
    ms: u64,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<u64, ScenarioError> {
    if ms > MAX_TIME_MS {
        return Err(err(
            key,
            format!("{ms} ms is more than the longest time lockstep simulates ({MAX_TIME_MS} ms, about 11 days)"),
        ));
    }
    Ok(ms * 1000)
}

/// A `[low, high]` range in milliseconds, as microseconds.
fn range_us(
    key: &str,
    [lo, hi]: [u64; 2],
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(u64, u64), ScenarioError> {
    if lo > hi {
        return Err(err(key, format!("low {lo} is above high {hi}")));
    }
    Ok((time_us(key, lo, err)?, time_us(key, hi, err)?))
}

/// Refuses a run without faults that must reach the simulator's event cap
/// before it can end, rather than grind for minutes to say so. Every
/// client's session heartbeats every ping interval in every phase until
/// the client is done (a timer, the ping and its answer: three events),
/// so the run's events are at least the sum, over its clients, of three
/// per ping interval of the least time each is busy without faults
/// ([`least_busy_us`]), unless `duration_ms` ends the run first. Every
/// client counts, whatever its role: a queue's consumers, which client 0
/// (a producer) says nothing about, are busy for as long as the items take.
fn check_heartbeats(
    timing: &Timing,
    app: App,
    (clients, roles): (u16, Roles),
    rounds: u64,
    duration_us: Option<u64>,
) -> Result<(), String> {
    let role_of = app.spec().role;
    let ping_us = timing.ping_interval_us;
    let mut events: u64 = 0;
    // The role whose clients make the most of them, to name in the message.
    let mut busiest: Option<(Role, u64, u64, u64)> = None; // role, clients, busy, events
    for role in [
        Role::Writer,
        Role::Reader,
        Role::Worker,
        Role::Producer,
        Role::Consumer,
        Role::Observer,
    ] {
        let count = (0..clients).filter(|&c| role_of(&roles, c) == role).count() as u64;
        if count == 0 {
            continue;
        }
        let busy_us = least_busy_us(timing, role, (clients, roles.producers), rounds)
            .min(duration_us.unwrap_or(u64::MAX));
        let role_events = count.saturating_mul(3 * (busy_us / ping_us));
        events = events.saturating_add(role_events);
        if busiest.is_none_or(|(_, _, _, e)| role_events > e) {
            busiest = Some((role, count, busy_us, role_events));
        }
    }
    let cap = MAX_EVENTS;
    match busiest {
        Some((role, count, busy_us, _)) if events > cap => Err(format!(
            "heartbeats every {} ms make {events} events or more before the run can end, past the \
             simulator's cap of {cap}: {}, the most, {} busy at least {} ms each ({}); lengthen the ping \
             interval (or the session timeout), or shorten the times",
            ms_text(ping_us),
            plural(count, &format!("{} {}", app.name(), role.name())),
            if count == 1 { "is" } else { "are" },
            ms_text(busy_us),
            busy_because(role),
        )),
        Some(_) | None => Ok(()),
    }
}

/// The least time a client of `role` is busy, heartbeating, in a run
/// without faults: its rounds' least think and hold time (a producer's
/// least pace), or, for a queue's consumer, which never finishes while
/// the run goes on, at least as long as the producers take to enqueue and
/// the items take to process: the busiest of the consumers takes at least
/// its share, rounded up, of every producer's items, one hold each.
/// Times are at most MAX_TIME_MS and rounds at most MAX_ROUNDS: no wrap.
fn least_busy_us(
    timing: &Timing,
    role: Role,
    (clients, producers): (u16, u16),
    rounds: u64,
) -> u64 {
    let producing_us = rounds * timing.produce_us.0;
    match role {
        // An observer follows for as long as the candidates campaign.
        Role::Writer | Role::Reader | Role::Worker | Role::Observer => {
            rounds * (timing.think_us.0 + timing.hold_us.0)
        }
        Role::Producer => producing_us,
        Role::Consumer => {
            let items = u64::from(producers) * rounds;
            let consumers = u64::from(clients - producers).max(1);
            let processing_us = items.div_ceil(consumers) * timing.hold_us.0;
            processing_us.max(producing_us)
        }
    }
}

/// Which settings make a role's clients busy as long as they are.
fn busy_because(role: Role) -> &'static str {
    match role {
        Role::Writer | Role::Reader | Role::Worker => {
            "their rounds' least timing.think_ms and timing.hold_ms"
        }
        Role::Observer => "they follow for as long as the candidates' rounds take",
        Role::Producer => "their rounds' least timing.produce_ms",
        Role::Consumer => {
            "they wait for the producers' items, timing.produce_ms apart, and take their share, \
             timing.hold_ms each"
        }
    }
}

/// `n thing` or `n things`.
fn plural(n: u64, thing: &str) -> String {
    match n {
        1 => format!("1 {thing}"),
        _ => format!("{n} {thing}s"),
    }
}

/// The setting that makes the ping interval what it is, to blame for a
/// heartbeat that comes too late or too often: the interval if the file
/// gives one, else the session timeout (a third of which it defaults to;
/// half, for a Consul session's TTL).
fn ping_setting(t: &TimingFile) -> &'static str {
    match t.ping_interval_ms {
        Some(_) => "timing.ping_interval_ms",
        None => "timing.session_timeout_ms",
    }
}

/// The `[timing]` table, resolved and checked so that a run without faults
/// never sees a session expire, a client give up or a request resent.
///
/// A Consul session's TTL defaults to `api.Lock`'s 15 s and must be within
/// Consul's bounds (10 s to 24 h); its renewals default to every half TTL
/// (`RenewPeriodic`). The store may invalidate a silent session as soon as
/// its TTL has run, so the heartbeat rules below hold with the TTL as the
/// timeout: the first renewal, half a TTL after the grant and a one-way
/// latency either side, reaches the store before the TTL.
fn resolve_timing(
    t: &TimingFile,
    policy: Policy,
    face: Face,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<Timing, ScenarioError> {
    let consul = face == Face::Consul;
    let session_timeout_ms = t.session_timeout_ms.unwrap_or(match consul {
        true => u64::from(recipes::consul::SESSION_TTL_MS),
        false => 4000,
    });
    let ttl_range = recipes::consul::TTL_MS_RANGE;
    if consul && !ttl_range.contains(&session_timeout_ms) {
        return Err(err(
            "timing.session_timeout_ms",
            format!(
                "a Consul session's TTL must be {} to {} ms (10 s to 24 h), Consul's bounds \
                 (got {session_timeout_ms})",
                ttl_range.start(),
                ttl_range.end()
            ),
        ));
    }
    let session_timeout_us = time_us("timing.session_timeout_ms", session_timeout_ms, err)?;
    // Pings default to a third of the timeout, the deadline to two thirds:
    // below 3 ms one of them would round to nothing.
    if session_timeout_ms < 3 {
        return Err(err(
            "timing.session_timeout_ms",
            format!(
                "must be at least 3 ms (got {session_timeout_ms}): heartbeats go every third of it"
            ),
        ));
    }
    let ping_ms = t.ping_interval_ms.unwrap_or(match consul {
        // `RenewPeriodic`: every half TTL.
        true => session_timeout_ms / 2,
        false => session_timeout_ms / 3,
    });
    if ping_ms == 0 {
        return Err(err("timing.ping_interval_ms", "must be positive".into()));
    }
    let ping_interval_us = time_us("timing.ping_interval_ms", ping_ms, err)?;
    let latency_us = latency_us(t.latency_ms.unwrap_or([0.2, 2.0]), err)?;
    let one_way_ms = ms_text(latency_us.1);
    // The rules are the models' (`models::timing`), worded here in the
    // file's keys.
    if !timing::first_heartbeat_in_time(session_timeout_us, ping_interval_us, latency_us.1) {
        return Err(err(
            ping_setting(t),
            format!(
                "the first heartbeat reaches the store a one-way latency, the ping interval and a one-way \
                 latency after the session is granted: the ping interval ({ping_ms} ms) plus twice the longest \
                 one-way latency ({} ms) must be below the session timeout ({session_timeout_ms} ms), or \
                 sessions and leases expire without any fault",
                ms_text(2 * latency_us.1)
            ),
        ));
    }
    let retry_ms = t.retry_ms.unwrap_or(1000);
    let retry_us = time_us("timing.retry_ms", retry_ms, err)?;
    if !timing::retry_after_round_trip(retry_us, latency_us.1) {
        return Err(err(
            "timing.retry_ms",
            format!(
                "must be longer than the longest round trip (twice the one-way latency of {one_way_ms} ms), \
                 or clients resend requests whose replies are on their way (got {retry_ms} ms)"
            ),
        ));
    }
    let deadline_us = resolve_deadline(
        t,
        policy,
        session_timeout_us,
        ping_interval_us,
        latency_us.1,
        err,
    )?;
    let think_us = range_us("timing.think_ms", t.think_ms.unwrap_or([5, 50]), err)?;
    Ok(Timing {
        session_timeout_us,
        ping_interval_us,
        think_us,
        produce_us: match t.produce_ms {
            Some(p) => range_us("timing.produce_ms", p, err)?,
            None => think_us,
        },
        hold_us: range_us("timing.hold_ms", t.hold_ms.unwrap_or([10, 40]), err)?,
        latency_us,
        retry_us,
        deadline_us,
        acquire_timeout_us: match t.acquire_timeout_ms {
            Some(0) => {
                return Err(err(
                    "timing.acquire_timeout_ms",
                    "must be positive: a timeout of 0 gives up every acquisition that waits".into(),
                ))
            }
            Some(ms) => Some(time_us("timing.acquire_timeout_ms", ms, err)?),
            None => None,
        },
        replication_us: None,
        apply_us: None,
        sync_limit_us: None,
        tick_us: None,
        election_timeout_us: None,
    })
}

/// Redis: the lock's clocks, `timing.key_ttl_ms` and
/// `timing.retry_delay_ms`, each its library's default unless given, for
/// a Redis lock only.
fn resolve_key_timing(
    t: Option<&TimingFile>,
    recipe: RecipeRef,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<RecipeRef, ScenarioError> {
    const TTL: &str = "timing.key_ttl_ms";
    const RETRY: &str = "timing.retry_delay_ms";
    let ttl = t.and_then(|t| t.key_ttl_ms);
    let retry = t.and_then(|t| t.retry_delay_ms);
    let given = match (ttl, retry) {
        (None, None) => return Ok(recipe),
        (Some(_), _) => TTL,
        (None, Some(_)) => RETRY,
    };
    let Some(defaults) = recipe.key_timing() else {
        return Err(err(
            given,
            format!("{recipe} keeps no key TTL: this key is for the Redis locks"),
        ));
    };
    let ms = |key: &str, v: Option<u64>, default: u32| match v {
        None => Ok(default),
        Some(v) => u32::try_from(v)
            .map_err(|_| err(key, format!("must be at most {} ms (got {v})", u32::MAX))),
    };
    let timing = KeyTiming {
        ttl_ms: ms(TTL, ttl, defaults.ttl_ms)?,
        retry_ms: ms(RETRY, retry, defaults.retry_ms)?,
    };
    timing.check().map_err(|(clock, why)| {
        err(
            match clock {
                KeyClock::Ttl => TTL,
                KeyClock::Retry => RETRY,
            },
            why,
        )
    })?;
    recipe.with_key_timing(timing).map_err(|e| err(TTL, e))
}

/// Consul: the `[consul]` table — the session's `lock_delay_ms` and
/// `behavior`, each the recipe's own unless given — for a Consul recipe
/// only.
fn resolve_consul(
    c: Option<&ConsulFile>,
    recipe: RecipeRef,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<RecipeRef, ScenarioError> {
    let Some(c) = c else {
        return Ok(recipe);
    };
    let Some(defaults) = recipe.consul_session() else {
        return Err(err(
            "consul",
            format!(
                "is for the Consul recipes, whose sessions it sets; {recipe} talks to {:?}",
                recipe.face()
            ),
        ));
    };
    let range = recipes::consul::LOCK_DELAY_MS_RANGE;
    let lock_delay_ms = match c.lock_delay_ms {
        None => defaults.lock_delay_ms,
        Some(ms) => u32::try_from(ms)
            .ok()
            .filter(|ms| range.contains(ms))
            .ok_or_else(|| {
                err(
                    "consul.lock_delay_ms",
                    format!(
                        "must be {} to {} ms, Consul's bounds on a session's lock-delay (got {ms})",
                        range.start(),
                        range.end()
                    ),
                )
            })?,
    };
    let behavior = match &c.behavior {
        None => defaults.behavior,
        Some(b) => b.parse().map_err(|e| err("consul.behavior", e))?,
    };
    let opts = models::msg::SessionOpts {
        behavior,
        lock_delay_ms,
    };
    let recipe = recipe
        .with_consul_session(opts)
        .map_err(|e| err("consul", e))?;
    match c.wait_ms {
        None => Ok(recipe),
        Some(ms) => {
            let ms = recipes::consul::check_wait(ms).map_err(|e| err("consul.wait_ms", e))?;
            recipe
                .with_consul_wait(ms)
                .map_err(|e| err("consul.wait_ms", e))
        }
    }
}

/// Redis: `persistence` and `replica`, for a Redis recipe only.
fn resolve_deployment(
    raw: &ScenarioFile,
    recipe: &RecipeRef,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<models::store::redis::Deployment, ScenarioError> {
    let redis = recipe.face() == models::recipe::Face::Redis;
    for (key, given) in [
        ("persistence", raw.persistence.is_some()),
        ("replica", raw.replica.is_some()),
    ] {
        if given && !redis {
            return Err(err(
                key,
                format!(
                    "is for Redis recipes; {recipe} talks to {:?}",
                    recipe.face()
                ),
            ));
        }
    }
    let persistence = match &raw.persistence {
        Some(p) => p.parse().map_err(|e| err("persistence", e))?,
        None => Default::default(),
    };
    Ok(models::store::redis::Deployment {
        persistence,
        replica: raw.replica.unwrap_or(false),
    })
}

/// A replica's lag unless the file gives one: a few milliseconds, a
/// replication link under load on one network.
pub const DEFAULT_REPLICATION_MS: [u64; 2] = [1, 10];

/// Redis: `timing.replication_ms`, a replica's lag, for a deployment with
/// one; below the timeout of the `WAIT` a recipe sends, which the model
/// does not run out (so a run without faults never sees one time out).
fn resolve_replication(
    t: &TimingFile,
    deployment: models::store::redis::Deployment,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<Option<(u64, u64)>, ScenarioError> {
    let key = "timing.replication_ms";
    if !deployment.replica {
        return match t.replication_ms {
            Some(_) => Err(err(
                key,
                "is the lag of the first master's replica: set `replica = true`".into(),
            )),
            None => Ok(None),
        };
    }
    let lag = range_us(key, t.replication_ms.unwrap_or(DEFAULT_REPLICATION_MS), err)?;
    let timeout_ms = u64::from(models::recipes::redis::WAIT_TIMEOUT_MS);
    if lag.1 >= timeout_ms * 1000 {
        return Err(err(
            key,
            format!(
                "must stay below the {timeout_ms} ms timeout of the recipes' WAIT, which the \
                 model never runs out (got a high of {} ms)",
                ms_text(lag.1)
            ),
        ));
    }
    Ok(Some(lag))
}

/// Redis: the lock key's TTL must outlive a holder that keeps to its
/// timing (unless a watchdog renews it), and the resend timer must come
/// before it (`models::timing`).
fn check_key_ttl(
    recipe: &RecipeRef,
    t: &Timing,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let Some(lease) = recipe.key_lease() else {
        return Ok(());
    };
    let ttl_us = whole_us(lease.ttl);
    let ttl_ms = ms_text(ttl_us);
    if !timing::resend_before_ttl(t.retry_us, ttl_us) {
        return Err(err(
            "timing.retry_ms",
            format!(
                "must be shorter than the lock key's TTL ({ttl_ms} ms): a request resent after its \
                 key expired finds the lock someone else's (got {} ms)",
                ms_text(t.retry_us)
            ),
        ));
    }
    let masters = u64::from(recipe.setup().masters);
    let writes = u64::from(models::client::WRITES_PER_HOLD);
    let renews = lease.renew_every;
    // A watchdog's renewal must land before the key runs out: its period
    // and a round trip inside the TTL.
    if let Some(every) = renews {
        let every_us = whole_us(every);
        if !timing::renewal_lands_in_time(ttl_us, every_us, t.latency_us.1) {
            return Err(err(
                "timing.key_ttl_ms",
                format!(
                    "the watchdog renews every {} ms: that and a round trip of up to {} ms \
                     must fit in the key's TTL ({ttl_ms} ms), or keys expire under healthy holders",
                    ms_text(every_us),
                    ms_text(2 * t.latency_us.1),
                ),
            ));
        }
    }
    if renews.is_none()
        && !timing::key_outlives_hold(ttl_us, masters, writes, t.hold_us.1, t.latency_us.1)
    {
        return Err(err(
            "timing.hold_ms",
            format!(
                "a holder needs its key from the first SET to its release: {} of up to {} ms \
                 and {} of up to {} ms must fit in the key's TTL ({ttl_ms} ms), \
                 or keys expire under healthy holders",
                plural(writes - 1, "hold"),
                ms_text(t.hold_us.1),
                plural(4 * masters + 2 * writes - 2, "message flight"),
                ms_text(t.latency_us.1),
            ),
        ));
    }
    Ok(())
}

/// A number as a file gave it, short whatever its magnitude: 1e300 and
/// 1e-300 are not printed digit by digit.
pub fn short_number(x: f64) -> String {
    if x == 0.0 || (1e-6..1e9).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// One-way latency, `[low, high]` in (fractional) milliseconds.
fn latency_us(
    [lo, hi]: [f64; 2],
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(u64, u64), ScenarioError> {
    let key = "timing.latency_ms";
    let show = short_number;
    if !(lo >= 0.0 && hi >= lo && hi.is_finite()) {
        return Err(err(
            key,
            format!("needs 0 <= low <= high (got [{}, {}])", show(lo), show(hi)),
        ));
    }
    if hi > MAX_TIME_MS as f64 {
        return Err(err(
            key,
            format!(
                "{} ms is more than the longest time lockstep simulates ({MAX_TIME_MS} ms)",
                show(hi)
            ),
        ));
    }
    let us = |x: f64| (x * 1000.0).round() as u64;
    if let Some(x) = [lo, hi].into_iter().find(|&x| x > 0.0 && us(x) == 0) {
        return Err(err(
            key,
            format!(
                "{} ms is below the simulator's resolution of 1 µs (0.001 ms) and would be 0: give 0 or at least 0.001",
                show(x)
            ),
        ));
    }
    Ok((us(lo), us(hi)))
}

/// The lease-aware client's deadline; naive clients have none.
fn resolve_deadline(
    t: &TimingFile,
    policy: Policy,
    session_timeout_us: u64,
    ping_interval_us: u64,
    one_way_us: u64,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<u64, ScenarioError> {
    let key = "timing.deadline_ms";
    let deadline_us = match (policy, t.deadline_ms) {
        (Policy::Naive | Policy::Oblivious, Some(_)) => {
            return Err(err(
                key,
                format!("applies only to `policy = \"lease-aware\"` or `\"suspend-aware\"` (a {policy} client keeps no clock of its own)"),
            ))
        }
        // Unused; kept as the lease-aware default for the record.
        (Policy::Naive | Policy::Oblivious, None) => return Ok(session_timeout_us / 3 * 2),
        (Policy::LeaseAware | Policy::LeaseAwareFromSend | Policy::SuspendAware, Some(d)) => time_us(key, d, err)?,
        (Policy::LeaseAware | Policy::LeaseAwareFromSend | Policy::SuspendAware, None) => session_timeout_us / 3 * 2,
    };
    let ms = ms_text;
    if !timing::deadline_after_heartbeat(deadline_us, ping_interval_us, one_way_us) {
        return Err(err(
            key,
            format!(
                "deadline ({} ms) must be longer than the ping interval ({} ms) plus the longest round trip \
                 ({} ms), or a lease-aware client gives up a healthy session",
                ms(deadline_us),
                ms(ping_interval_us),
                ms(2 * one_way_us)
            ),
        ));
    }
    if !timing::deadline_before_expiry(deadline_us, one_way_us, session_timeout_us) {
        return Err(err(
            key,
            format!(
                "deadline ({} ms) plus the longest one-way latency ({} ms) must be below the \
                 session timeout ({} ms): a lease-aware client must give up before the store expires it",
                ms(deadline_us),
                ms(one_way_us),
                ms(session_timeout_us)
            ),
        ));
    }
    Ok(deadline_us)
}

/// Microseconds as milliseconds for a message (`1.5`, `2`).
fn ms_text(us: u64) -> String {
    if us.is_multiple_of(1000) {
        (us / 1000).to_string()
    } else {
        format!("{}", us as f64 / 1000.0)
    }
}

/// The `[faults]` table's randomized kinds.
fn resolve_profile(
    f: &FaultProfileFile,
    until_us: u64,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<Vec<(FaultKind, Rate)>, ScenarioError> {
    let mut profile = Vec::new();
    let mut expected = 0.0;
    for (kind, rate) in [
        (FaultKind::Crash, &f.crash),
        (FaultKind::Pause, &f.pause),
        (FaultKind::Partition, &f.partition),
        (FaultKind::LostReply, &f.lost_reply),
        (FaultKind::Delay, &f.delay),
        (FaultKind::CheckCritical, &f.check_critical),
    ] {
        let Some(rate) = rate else { continue };
        let key = format!("faults.{}", kind.name());
        if !(rate.rate_per_s >= 0.0 && rate.rate_per_s.is_finite()) {
            return Err(err(
                &format!("{key}.rate_per_s"),
                "must be a non-negative number".into(),
            ));
        }
        let duration_us = match (kind, rate.duration_ms) {
            (FaultKind::LostReply, Some(_)) => {
                return Err(err(
                    &format!("{key}.duration_ms"),
                    "a lost reply has no duration".into(),
                ))
            }
            (FaultKind::CheckCritical, Some(_)) => {
                return Err(err(
                    &format!("{key}.duration_ms"),
                    "a node check going critical is instantaneous: it has no duration".into(),
                ))
            }
            (FaultKind::Pause | FaultKind::Partition | FaultKind::Delay, Some([_, 0])) => {
                return Err(err(
                    &format!("{key}.duration_ms"),
                    format!("[0, 0]: a {} that lasts no time does nothing", kind.name()),
                ))
            }
            (_, Some(d)) => range_us(&format!("{key}.duration_ms"), d, err)?,
            (FaultKind::Pause | FaultKind::Partition | FaultKind::Delay, None) => {
                return Err(err(
                    &format!("{key}.duration_ms"),
                    "is required: [low, high]".into(),
                ))
            }
            // A crash without a duration stays down.
            (FaultKind::Crash | FaultKind::LostReply | FaultKind::CheckCritical, None) => (0, 0),
            // No profile names a store fault or an interrupt (the table
            // has no key for one): they are scheduled.
            (
                FaultKind::MasterRestart
                | FaultKind::ClockJump
                | FaultKind::Failover
                | FaultKind::Interrupt
                | FaultKind::Lag
                | FaultKind::Isolate
                | FaultKind::Mute,
                None,
            ) => (0, 0),
        };
        let extra_us = match (kind, rate.extra_ms) {
            (FaultKind::Delay, Some(d)) => range_us(&format!("{key}.extra_ms"), d, err)?,
            (FaultKind::Delay, None) => {
                return Err(err(
                    &format!("{key}.extra_ms"),
                    "is required: [low, high]".into(),
                ))
            }
            (_, Some(_)) => {
                return Err(err(
                    &format!("{key}.extra_ms"),
                    "applies only to delay".into(),
                ))
            }
            (_, None) => (0, 0),
        };
        if rate.rate_per_s == 0.0 {
            continue; // switched off
        }
        if until_us == 0 {
            return Err(err(
                "faults.until_ms",
                format!(
                    "is 0, so no {} could ever be drawn: give a positive time or remove the rate",
                    kind.name()
                ),
            ));
        }
        expected += rate.rate_per_s * until_us as f64 / 1e6;
        if expected > MAX_FAULTS as f64 {
            return Err(err(
                &format!("{key}.rate_per_s"),
                format!(
                    "the rates draw about {} faults before until_ms; at most {MAX_FAULTS} are allowed in a run",
                    short_number(expected.round())
                ),
            ));
        }
        profile.push((
            kind,
            Rate {
                per_second: rate.rate_per_s,
                duration_us,
                extra_us,
            },
        ));
    }
    Ok(profile)
}

/// The `[[schedule]]` entries: each names a client that exists, a time in
/// range, and exactly the fields its kind takes.
/// A name in `expect`: a property a run of `recipe` can violate.
fn expected_property(
    name: &str,
    recipe: &RecipeRef,
    (reentries, observers): (u8, u16),
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<PropertyName, ScenarioError> {
    let app = recipe.app();
    let violable = || {
        PropertyName::judging_recipe(recipe, reentries > 0, observers > 0)
            .filter(|p| p.violable_in_a_run())
            .chain(PropertyName::RUN_CHECKS)
    };
    let known = || violable().map(|p| p.name()).collect::<Vec<_>>().join(", ");
    match PropertyName::parse(name) {
        Some(p) if violable().any(|q| q == p) => Ok(p),
        Some(p) if p.app().is_some_and(|a| a != app) => Err(err(
            "expect",
            format!(
                "'{name}' judges the {} application, but {recipe} is {} recipe (a run of it can violate: {})",
                p.app().map_or("", |a| a.name()),
                app.a_name(),
                known()
            ),
        )),
        Some(_) | None => Err(err(
            "expect",
            format!("'{name}' is no property a run can violate (known: {})", known()),
        )),
    }
}

/// Consul: a node check going critical (`check_critical`, drawn or
/// scheduled) invalidates a Consul session; refused for the other faces,
/// naming the key.
fn check_critical_is_consul(
    recipe: &RecipeRef,
    f: &FaultProfileFile,
    schedule: &[ScheduledFault],
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if recipe.face() == Face::Consul {
        return Ok(());
    }
    let key = match schedule
        .iter()
        .position(|s| s.kind == FaultKind::CheckCritical)
    {
        _ if f.check_critical.is_some() => "faults.check_critical".to_string(),
        Some(i) => format!("schedule[{i}].kind"),
        None => return Ok(()),
    };
    Err(err(
        &key,
        format!(
            "a node check going critical invalidates a Consul session; {recipe} talks to {:?}, \
             which has no node checks",
            recipe.face()
        ),
    ))
}

/// A store fault for a store of `face` with `masters` masters: which the
/// model carries out (a Redis master's restart, clock jump or failover; a
/// Consul leader's failover), or the key to blame and why not.
fn store_fault_refused(
    s: &ScheduledFault,
    (face, masters): (Face, u32),
) -> Option<(&'static str, String)> {
    let kind = s.kind.name();
    match (face, s.kind, s.master) {
        (Face::Redis, _, None) => Some((
            "master",
            format!("a {kind} needs the master it strikes (0 for a failover)"),
        )),
        (Face::Redis, FaultKind::Failover, Some(m)) if m != 0 => Some((
            "master",
            format!("a failover promotes the first master's replica: master must be 0 (got {m})"),
        )),
        (Face::Redis, _, Some(m)) if m >= masters => Some((
            "master",
            format!("no master {m} (masters are 0..{masters})"),
        )),
        (Face::Redis, _, Some(_)) => None,
        (Face::Consul, FaultKind::Failover, None) => None,
        (Face::Consul, FaultKind::Failover, Some(_)) => Some((
            "master",
            "a Consul failover strikes the leader, not a master: leave `master` out".into(),
        )),
        (Face::Consul, _, _) => Some((
            "kind",
            format!(
                "a {kind} strikes a Redis master; this recipe's store is Consul, whose one store \
                 fault is `failover` (the leader's)"
            ),
        )),
        (Face::ZooKeeper | Face::Etcd, _, _) => Some((
            "kind",
            format!(
                "a {kind} strikes the store, which the model restarts or fails over only for Redis \
                 (master_restart, clock_jump, failover) and Consul (failover); this recipe's store \
                 is {face:?}"
            ),
        )),
    }
}

/// ZooKeeper's sample configuration: tickTime 2000 ms, syncLimit 5.
pub const DEFAULT_SYNC_LIMIT_MS: u64 = 10_000;

/// ZooKeeper's sample tickTime.
pub const DEFAULT_TICK_MS: u64 = 2_000;

/// etcd's default `--election-timeout`.
pub const DEFAULT_ELECTION_TIMEOUT_MS: u64 = 1_000;

/// A follower's lag or isolation: a server of an ensemble other than the
/// leader, for a while (a ZooKeeper follower or an etcd member).
fn check_follower_fault(
    s: &ScheduledFault,
    key: &str,
    (servers, face): (u8, Face),
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let kind = s.kind.name();
    if servers == 1 {
        return Err(err(
            &format!("{key}.kind"),
            format!(
                "a {kind} strikes a follower, and one server has none: it needs `servers = 3` or \
                 more"
            ),
        ));
    }
    if s.kind == FaultKind::Isolate && !matches!(face, Face::ZooKeeper | Face::Etcd) {
        return Err(err(
            &format!("{key}.kind"),
            format!(
                "an isolate cuts a ZooKeeper follower or an etcd member off from the leader \
                 (this recipe's store is {face:?})"
            ),
        ));
    }
    if s.kind == FaultKind::Mute && face != Face::ZooKeeper {
        return Err(err(
            &format!("{key}.kind"),
            format!(
                "a mute is a ZooKeeper follower's, which the leader drops after syncLimit × \
                 tickTime (this recipe's store is {face:?})"
            ),
        ));
    }
    if s.client != NO_CLIENT || s.master.is_some() {
        return Err(err(
            &format!("{key}.server"),
            format!("a {kind} strikes a follower: name its `server`, not a client or a master"),
        ));
    }
    match s.server {
        None => {
            return Err(err(
                &format!("{key}.server"),
                format!("a {kind} needs the follower it strikes (1 up: 0 is the leader)"),
            ))
        }
        Some(f) if f == 0 || f >= u32::from(servers) => {
            return Err(err(
                &format!("{key}.server"),
                format!(
                    "{f} is no follower: followers are 1..{} (0 is the leader)",
                    servers - 1
                ),
            ))
        }
        Some(_) => {}
    }
    match s.duration_ms {
        None | Some(0) => Err(err(
            &format!("{key}.duration_ms"),
            format!("a {kind} needs how long it lasts (more than 0)"),
        )),
        Some(d) => {
            time_us(&format!("{key}.at_ms"), s.at_ms, err)?;
            time_us(&format!("{key}.duration_ms"), d, err).map(|_| ())
        }
    }
}

/// A leader failover in an ensemble: a leader cut off from its followers
/// for longer than they wait before they elect another (a ZooKeeper
/// ensemble's syncLimit × tickTime, an etcd cluster's election timeout),
/// naming nothing it strikes.
fn check_leader_failover(
    s: &ScheduledFault,
    key: &str,
    (face, limit_us): (Face, Option<u64>),
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let limit_key = match face {
        Face::ZooKeeper => "timing.sync_limit_ms",
        Face::Etcd => "timing.election_timeout_ms",
        Face::Redis | Face::Consul => "",
    };
    let Some(limit_us) = limit_us.filter(|_| !limit_key.is_empty()) else {
        return Err(err(
            &format!("{key}.kind"),
            format!(
                "a leader failover over an ensemble is modelled for ZooKeeper and etcd (this \
                 recipe's store is {face:?})"
            ),
        ));
    };
    if s.client != NO_CLIENT || s.master.is_some() || s.server.is_some() {
        return Err(err(
            &format!("{key}.server"),
            "a failover strikes the leader, whichever server leads: name no client, master \
             or server"
                .into(),
        ));
    }
    time_us(&format!("{key}.at_ms"), s.at_ms, err)?;
    let duration_us = match s.duration_ms {
        None | Some(0) => {
            return Err(err(
                &format!("{key}.duration_ms"),
                format!(
                    "a failover over an ensemble needs how long the leader stays cut off (more \
                     than {limit_key}, when the followers elect another)"
                ),
            ))
        }
        Some(d) => time_us(&format!("{key}.duration_ms"), d, err)?,
    };
    if duration_us <= limit_us {
        return Err(err(
            &format!("{key}.duration_ms"),
            format!(
                "{} ms: the cut must outlast {limit_key} ({} ms), or no follower gives the \
                 leader up and nobody is elected",
                duration_us / 1000,
                limit_us / 1000
            ),
        ));
    }
    Ok(())
}

fn check_schedule(
    schedule: &[ScheduledFault],
    clients: u32,
    store_of: (Face, u32),
    (servers, sync_limit_us): (u8, Option<u64>),
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if schedule.len() as u64 > MAX_FAULTS {
        return Err(err(
            "schedule",
            format!(
                "{} faults; at most {MAX_FAULTS} are allowed in a run",
                schedule.len()
            ),
        ));
    }
    for (i, s) in schedule.iter().enumerate() {
        let key = format!("schedule[{i}]");
        let kind = s.kind.name();
        if s.kind.strikes_a_follower() {
            check_follower_fault(s, &key, (servers, store_of.0), err)?;
            // One at a time on a follower: the end of one is the end of
            // its lag, which another under way would not share.
            let ends = |f: &ScheduledFault| f.at_ms.saturating_add(f.duration_ms.unwrap_or(0));
            let overlaps = schedule[..i].iter().any(|o| {
                o.kind.strikes_a_follower()
                    && o.server == s.server
                    && o.at_ms < ends(s)
                    && s.at_ms < ends(o)
            });
            if overlaps {
                return Err(err(
                    &format!("{key}.at_ms"),
                    format!(
                        "overlaps an earlier lag, isolate or mute of server {}: one at a time on \
                         a follower",
                        s.server.unwrap_or(0)
                    ),
                ));
            }
            // The leader keeps a quorum: the model's leader commits
            // whatever it takes, as a leader with a quorum does.
            let cuts = |f: &ScheduledFault| {
                matches!(
                    f.kind,
                    FaultKind::Isolate | FaultKind::Mute | FaultKind::Failover
                )
            };
            let cut_at_once = schedule
                .iter()
                .filter(|o| cuts(o) && o.at_ms < ends(s) && s.at_ms < ends(o))
                .count();
            if matches!(s.kind, FaultKind::Isolate | FaultKind::Mute)
                && cut_at_once > usize::from(servers.saturating_sub(1) / 2)
            {
                return Err(err(
                    &format!("{key}.at_ms"),
                    format!(
                        "overlaps another isolate, mute or a failover: with {servers} servers at \
                         most {} can be cut off at once, or the leader has no quorum",
                        servers.saturating_sub(1) / 2
                    ),
                ));
            }
            continue;
        }
        if s.kind == FaultKind::Failover && servers > 1 {
            check_leader_failover(s, &key, (store_of.0, sync_limit_us), err)?;
            let earlier = schedule[..i].iter().any(|o| o.kind == FaultKind::Failover);
            if earlier {
                return Err(err(
                    &format!("{key}.kind"),
                    "a second failover: the model cuts the leader off once a run".into(),
                ));
            }
            continue;
        }
        if let Some(server) = s.server {
            return Err(err(
                &format!("{key}.server"),
                format!(
                    "a {kind} strikes no server (got {server}): only a lag, an isolate or a mute \
                     names one"
                ),
            ));
        }
        match (s.kind.strikes_the_store(), s.client == NO_CLIENT, s.master) {
            (true, false, _) => {
                return Err(err(
                    &format!("{key}.client"),
                    format!(
                        "a {kind} strikes the store, not a client (on Redis, name its `master`)"
                    ),
                ))
            }
            (true, true, _) => {
                if let Some((field, why)) = store_fault_refused(s, store_of) {
                    return Err(err(&format!("{key}.{field}"), why));
                }
                if s.duration_ms.is_some() || s.extra_ms.is_some() {
                    return Err(err(
                        &format!("{key}.duration_ms"),
                        format!("a {kind} is instantaneous: it takes no duration_ms or extra_ms"),
                    ));
                }
                time_us(&format!("{key}.at_ms"), s.at_ms, err)?;
                continue;
            }
            (false, true, _) => {
                return Err(err(
                    &format!("{key}.client"),
                    format!("a {kind} needs the client it strikes"),
                ))
            }
            (false, false, Some(_)) => {
                return Err(err(
                    &format!("{key}.master"),
                    format!("a {kind} strikes a client, not a master"),
                ))
            }
            (false, false, None) => {}
        }
        if s.client >= clients {
            return Err(err(
                &format!("{key}.client"),
                format!("no client {} (clients are 0..{clients})", s.client),
            ));
        }
        time_us(&format!("{key}.at_ms"), s.at_ms, err)?;
        if let Some(d) = s.duration_ms {
            time_us(&format!("{key}.duration_ms"), d, err)?;
        }
        if let Some(x) = s.extra_ms {
            time_us(&format!("{key}.extra_ms"), x, err)?;
        }
        let missing = |field: &str, what: &str| err(&format!("{key}.{field}"), what.to_string());
        match (s.kind, s.duration_ms, s.extra_ms) {
            (FaultKind::Pause | FaultKind::Partition | FaultKind::Delay, None, _) => {
                return Err(missing(
                    "duration_ms",
                    &format!("a {} needs a duration", s.kind.name()),
                ))
            }
            (FaultKind::Pause | FaultKind::Partition | FaultKind::Delay, Some(0), _) => {
                return Err(missing(
                    "duration_ms",
                    &format!("0: a {} that lasts no time does nothing", s.kind.name()),
                ))
            }
            (FaultKind::Delay, Some(_), None) => {
                return Err(missing("extra_ms", "a delay needs extra_ms"))
            }
            (FaultKind::LostReply, Some(_), _) => {
                return Err(missing("duration_ms", "a lost reply has no duration"))
            }
            (FaultKind::Interrupt, Some(_), _) => {
                return Err(missing("duration_ms", "an interrupt is instantaneous"))
            }
            (FaultKind::CheckCritical, Some(_), _) => return Err(missing(
                "duration_ms",
                "a node check going critical is instantaneous: the session is invalidated at once",
            )),
            (
                FaultKind::Crash
                | FaultKind::Pause
                | FaultKind::Partition
                | FaultKind::LostReply
                | FaultKind::Interrupt
                | FaultKind::CheckCritical,
                _,
                Some(_),
            ) => return Err(missing("extra_ms", "applies only to delay")),
            // Checked above, before the client's checks.
            (
                FaultKind::MasterRestart
                | FaultKind::ClockJump
                | FaultKind::Failover
                | FaultKind::Lag
                | FaultKind::Isolate
                | FaultKind::Mute,
                _,
                _,
            )
            | (FaultKind::Crash, _, None)
            | (FaultKind::Pause | FaultKind::Partition, Some(_), None)
            | (
                FaultKind::LostReply | FaultKind::Interrupt | FaultKind::CheckCritical,
                None,
                None,
            )
            | (FaultKind::Delay, Some(_), Some(_)) => {}
        }
    }
    Ok(())
}

/// A duration in whole microseconds, saturating.
fn whole_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// What a Consul session adds to the liveness bound: its expiry may come
/// as late as twice its TTL (one TTL more than the bound's margin), and
/// the key it held stays out of reach for its lock-delay after that.
/// Nothing for the other faces.
fn consul_margin_us(recipe: &RecipeRef, t: &Timing) -> u64 {
    match recipe.consul_session() {
        Some(opts) => t.session_timeout_us + u64::from(opts.lock_delay_ms) * 1000,
        None => 0,
    }
}

/// How long after the last fault every live client must have finished: a
/// session timeout (for a silent holder's session to expire), resends, and
/// every client's remaining rounds one after another, each with the
/// recipe's longest sleep (`sleep_us`: a waiter's back-off after the hold
/// before it) and two more hold times per re-entry (a nested hold and the
/// outer hold's write after it), and what a Consul session adds
/// (`margin_us`, [`consul_margin_us`]). `None` if it does not fit in 64
/// bits.
fn liveness_bound_us(
    t: &Timing,
    (sleep_us, reentries, margin_us): (u64, u8, u64),
    clients: u64,
    rounds: u64,
) -> Option<u64> {
    let holds = 3 + 2 * u64::from(reentries);
    let round = t
        .think_us
        .1
        .max(t.produce_us.1)
        .checked_add(t.hold_us.1.checked_mul(holds)?)?
        .checked_add(sleep_us)?
        // A round's messages; in an ensemble each write's answer waits
        // for the client's server to apply it too.
        .checked_add((t.latency_us.1 + t.apply_us.map_or(0, |a| a.1) + 1).checked_mul(40)?)?
        .checked_add(t.retry_us)?;
    (2 * t.session_timeout_us)
        .checked_add(margin_us)?
        .checked_add(2 * t.retry_us)?
        .checked_add(clients.checked_mul(rounds)?.checked_mul(round)?)
}

/// Whether a count is 1 (the default not written out).
fn is_one(n: &u8) -> bool {
    *n == 1
}
