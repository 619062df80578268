//! The Redis face of the store: one or more independent masters (Redlock's
//! N), each a keyspace of text keys with a value and an optional TTL that
//! the *server's* clock runs out. The commands are the ones the lock
//! libraries send — `SET` with `NX` and `PX`, `SETNX`, `PEXPIRE`/`EXPIRE`,
//! `GET`, `DEL`, `INCR` — and the two scripts they run with `EVAL`
//! (compare-and-delete, compare-and-extend), each applied atomically, as a
//! script is. There are no watches: clients poll.
//!
//! A TTL is a store timer ([`crate::msg::Timer::KeyTtl`]): the simulator
//! fires it after its milliseconds of virtual time; the untimed checker
//! lets it fire when the key's setter cannot be relying on it (see
//! `model::time`), which is why each TTL remembers who set it.

use crate::ids::{Data, Name, SessionId};
use crate::msg::{RedisCmd, RedisReply};
use serde::{Deserialize, Serialize};

/// A key's time to live: how long (milliseconds of the server's clock)
/// and which client process set it last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ttl {
    pub ms: u32,
    pub setter: SessionId,
}

/// One key of a master.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Entry {
    pub key: Name,
    pub value: Data,
    /// `None`: the key lives until deleted (a `SETNX` before its
    /// `EXPIRE`, an `INCR` counter).
    pub ttl: Option<Ttl>,
}

/// One master's keyspace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Keyspace {
    /// Live keys, sorted by key.
    pub keys: Vec<Entry>,
}

/// What a command did to a key's TTL timer: the store actor arms or
/// cancels [`crate::msg::Timer::KeyTtl`] accordingly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtlChange {
    /// The key now expires `ms` from now.
    Armed { key: Name, ms: u32 },
    /// The key no longer expires (deleted, or set again without a TTL).
    Cleared { key: Name },
}

/// Whether a master keeps its keys over a restart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Persistence {
    /// None (`save ""`, `appendonly no`): a restarted master is empty.
    #[default]
    None,
    /// `appendonly yes` with `appendfsync always`: every write is on disk
    /// before it is answered, so a restart loses no key (and a key's TTL
    /// runs on by the clock while the master is down).
    AppendfsyncAlways,
}

impl std::str::FromStr for Persistence {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Persistence::None),
            "appendfsync-always" => Ok(Persistence::AppendfsyncAlways),
            _ => Err(format!(
                "unknown persistence '{s}' (known: none, appendfsync-always)"
            )),
        }
    }
}

impl std::fmt::Display for Persistence {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            Persistence::None => "none",
            Persistence::AppendfsyncAlways => "appendfsync-always",
        })
    }
}

/// How the Redis masters are deployed, beside how many there are (the
/// recipe's `Setup::masters`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Deployment {
    pub persistence: Persistence,
    /// The first master has an asynchronously replicated replica, which a
    /// failover promotes (the Sentinel setup): a write it had not received
    /// is lost.
    pub replica: bool,
}

/// A change of a key on the first master, on its way to the replica:
/// the key as it now is (`None`: deleted).
pub type Replicated = (Name, Option<Entry>);

/// A client's `WAIT` the replica has not caught up with: answered once
/// the `behind` changes the master made before it have reached the
/// replica. The order (how far behind, then whose) is a renaming's too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Waiter {
    pub behind: u32,
    /// The connection it came on, and the client's epoch for the reply.
    pub session: SessionId,
    pub epoch: u8,
}

/// A change as the replication stream carries it: `SET key value [PX
/// ms]`, or `DEL key`.
pub fn change_text((key, now): &Replicated) -> String {
    match now {
        Some(Entry {
            value,
            ttl: Some(t),
            ..
        }) => format!("SET {key} {value} PX {}", t.ms),
        Some(Entry {
            value, ttl: None, ..
        }) => format!("SET {key} {value}"),
        None => format!("DEL {key}"),
    }
}

/// The first master's replica: its keys, the changes the master has made
/// that it has not received yet, in order, and the `WAIT`s held until it
/// has (sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replica {
    pub keys: Keyspace,
    pub backlog: Vec<Replicated>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Waiter>,
}

/// As the derived hash was before `waits`: they are hashed only when
/// there are some, so a deployment whose clients never `WAIT`
/// fingerprints as before.
impl std::hash::Hash for Replica {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.keys.hash(h);
        self.backlog.hash(h);
        if !self.waits.is_empty() {
            self.waits.hash(h);
        }
    }
}

/// Every master of a deployment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RedisKv {
    pub masters: Vec<Keyspace>,
    /// How many `INCR`s the masters have applied: the header of the
    /// store's replies. Redis answers with no revision; the monitors order
    /// the decisions clients make by the header, and an `INCR` is the one
    /// command whose answer a recipe orders by (a fencing token). Counting
    /// every change instead would count forever where a contender polls
    /// by setting and deleting its keys (a Redlock that loses the vote).
    pub incrs: u64,
    /// The first master's replica, in a deployment with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<Replica>,
}

impl RedisKv {
    /// `n` empty masters.
    pub fn new(n: u8) -> Self {
        RedisKv {
            masters: vec![Keyspace::default(); usize::from(n)],
            incrs: 0,
            replica: None,
        }
    }

    /// `n` empty masters deployed as `d` says.
    pub fn deployed(n: u8, d: Deployment) -> Self {
        RedisKv {
            replica: d.replica.then(Replica::default),
            ..RedisKv::new(n)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.masters.is_empty()
    }

    /// `key` on `master`, if it is there.
    pub fn get(&self, master: u8, key: Name) -> Option<&Entry> {
        let space = self.masters.get(usize::from(master))?;
        space
            .keys
            .binary_search_by(|e| e.key.cmp(&key))
            .ok()
            .map(|i| &space.keys[i])
    }

    /// Runs `cmd` of session `s` on `master`: the reply and what it did to
    /// the key's TTL. A master the deployment does not have answers `Down`.
    pub fn apply(
        &mut self,
        s: SessionId,
        master: u8,
        cmd: RedisCmd,
    ) -> (RedisReply, Option<TtlChange>) {
        let Some(key) = cmd_key(cmd) else {
            return (self.acked(master), None);
        };
        let before = self.get(master, key).copied();
        let Some(space) = self.masters.get_mut(usize::from(master)) else {
            return (RedisReply::Down, None);
        };
        let (reply, ttl) = space.apply(s, cmd);
        if matches!(cmd, RedisCmd::Incr { .. }) {
            self.incrs += 1;
        }
        // A change goes on to the replica; a command that changed nothing
        // (a `SET NX` that found the key) sends nothing.
        if master == 0 && self.get(master, key).copied() != before {
            self.replicate_later(key);
        }
        (reply, ttl)
    }

    /// The first master's `key` as it now is goes on the replica's
    /// backlog (a deployment without one keeps none).
    fn replicate_later(&mut self, key: Name) {
        let now = self.get(0, key).copied();
        if let Some(r) = &mut self.replica {
            r.backlog.push((key, now));
        }
    }

    /// `WAIT`'s answer now on `master`: the replicas that have every
    /// change it made (its replica, if it has one and it has caught up).
    /// A master the deployment does not have is down.
    fn acked(&self, master: u8) -> RedisReply {
        if usize::from(master) >= self.masters.len() {
            return RedisReply::Down;
        }
        let synced = master == 0 && self.replica.as_ref().is_some_and(|r| r.backlog.is_empty());
        RedisReply::Int(u64::from(synced))
    }

    /// Whether `cmd` on `master` is a `WAIT` that must wait for the
    /// replica: it asks for one, and the replica lacks changes made
    /// before it. (Asked for more replicas than there are, Redis answers
    /// at the timeout with the count; the model, whose timeout never
    /// runs out, answers when the one replica has caught up.)
    pub fn holds_back(&self, master: u8, cmd: RedisCmd) -> bool {
        let RedisCmd::Wait { replicas, .. } = cmd else {
            return false;
        };
        replicas > 0 && master == 0 && self.replica.as_ref().is_some_and(|r| !r.backlog.is_empty())
    }

    /// Holds a `WAIT` of `session` (its reply to carry `epoch`) until the
    /// replica has every change made so far.
    pub fn hold_wait(&mut self, session: SessionId, epoch: u8) {
        let Some(r) = &mut self.replica else {
            return;
        };
        let behind = u32::try_from(r.backlog.len()).unwrap_or(u32::MAX);
        let w = Waiter {
            behind,
            session,
            epoch,
        };
        let at = r.waits.binary_search(&w).unwrap_or_else(|at| at);
        r.waits.insert(at, w);
    }

    /// Whether a `WAIT` of `client`'s, sent in `epoch`, is held: its
    /// reply is on its way as surely as one in flight.
    pub fn holds_wait(&self, client: crate::ids::ClientIdx, epoch: u8) -> bool {
        self.waits()
            .any(|w| w.session.client == client && w.epoch == epoch)
    }

    /// The `WAIT`s held.
    pub fn waits(&self) -> impl Iterator<Item = &Waiter> + '_ {
        self.replica.iter().flat_map(|r| r.waits.iter())
    }

    /// Every held `WAIT`, taken to be answered now (the replica caught up
    /// with them, or their connections broke).
    pub fn take_waits(&mut self, caught_up_only: bool) -> Vec<Waiter> {
        let Some(r) = &mut self.replica else {
            return Vec::new();
        };
        let (done, kept) = std::mem::take(&mut r.waits)
            .into_iter()
            .partition(|w| !caught_up_only || w.behind == 0);
        r.waits = kept;
        done
    }

    /// `client`'s connection closed: the `WAIT`s it held go with it.
    pub fn drop_waits(&mut self, client: crate::ids::ClientIdx) {
        if let Some(r) = &mut self.replica {
            r.waits.retain(|w| w.session.client != client);
        }
    }

    /// The replica receives the oldest change it has not: that change, if
    /// there was one. Every held `WAIT` is one change nearer its answer.
    pub fn replicate_one(&mut self) -> Option<Replicated> {
        let r = self.replica.as_mut()?;
        if r.backlog.is_empty() {
            return None;
        }
        let (key, now) = r.backlog.remove(0);
        let at = r.keys.find(key);
        match (at, now) {
            (Ok(i), Some(e)) => r.keys.keys[i] = e,
            (Err(i), Some(e)) => r.keys.keys.insert(i, e),
            (Ok(i), None) => {
                r.keys.keys.remove(i);
            }
            (Err(_), None) => {}
        }
        for w in &mut r.waits {
            w.behind = w.behind.saturating_sub(1);
        }
        Some((key, now))
    }

    /// The replica is promoted in the first master's place (Sentinel's
    /// failover; `REPLICAOF NO ONE`): the master's keys are what the
    /// replica had received, and the old master, now its replica, starts
    /// from a copy. What it had not received is lost.
    pub fn fail_over(&mut self) {
        let Some(r) = &mut self.replica else {
            return;
        };
        let promoted = std::mem::take(&mut r.keys);
        r.backlog.clear();
        r.waits.clear();
        r.keys = promoted.clone();
        if let Some(first) = self.masters.first_mut() {
            *first = promoted;
        }
    }

    /// A master restarts without persistence: its keys are gone (the
    /// replica's copy, if any, follows: it resyncs from an empty master).
    pub fn empty_master(&mut self, master: u8) {
        if let Some(space) = self.masters.get_mut(usize::from(master)) {
            space.keys.clear();
        }
        if master == 0 {
            if let Some(r) = &mut self.replica {
                r.keys.keys.clear();
                r.backlog.clear();
            }
        }
    }

    /// Every key of `master` with a TTL, and its TTL in milliseconds (a
    /// clock jump expires them all; a promoted master arms them again).
    pub fn with_ttl(&self, master: u8) -> Vec<(Name, u32)> {
        self.masters
            .get(usize::from(master))
            .into_iter()
            .flat_map(|space| space.keys.iter())
            .filter_map(|e| e.ttl.map(|t| (e.key, t.ms)))
            .collect()
    }

    /// Every entry the deployment keeps — the masters' keys, the
    /// replica's and the changes on their way to it — each with where it
    /// is: `(0, master)`, `(1, 0)` for the replica, `(2, place in the
    /// backlog)`. Symmetry reduction renames and weighs them all.
    pub fn entries(&self) -> impl Iterator<Item = ((u8, usize), &Entry)> + '_ {
        let masters = self
            .masters
            .iter()
            .enumerate()
            .flat_map(|(m, space)| space.keys.iter().map(move |e| ((0u8, m), e)));
        let replica = self.replica.iter().flat_map(|r| {
            let keys = r.keys.keys.iter().map(|e| ((1u8, 0), e));
            let backlog = r
                .backlog
                .iter()
                .enumerate()
                .filter_map(|(at, (_, e))| e.as_ref().map(|e| ((2u8, at), e)));
            keys.chain(backlog)
        });
        masters.chain(replica)
    }

    /// [`RedisKv::entries`], to change them.
    pub fn entries_mut(&mut self) -> impl Iterator<Item = &mut Entry> + '_ {
        let replica = self.replica.iter_mut().flat_map(|r| {
            let backlog = r.backlog.iter_mut().filter_map(|(_, e)| e.as_mut());
            r.keys.keys.iter_mut().chain(backlog)
        });
        self.masters
            .iter_mut()
            .flat_map(|space| space.keys.iter_mut())
            .chain(replica)
    }

    /// `key`'s TTL on `master` ran out: the key is deleted. True if there
    /// was such a key with a TTL.
    pub fn expire(&mut self, master: u8, key: Name) -> bool {
        let Some(space) = self.masters.get_mut(usize::from(master)) else {
            return false;
        };
        let gone = match space.find(key) {
            Ok(i) if space.keys[i].ttl.is_some() => {
                space.keys.remove(i);
                true
            }
            Ok(_) | Err(_) => false,
        };
        // The master propagates an expiry as a `DEL`.
        if gone && master == 0 {
            self.replicate_later(key);
        }
        gone
    }
}

/// The key `cmd` names (`WAIT` names none).
fn cmd_key(cmd: RedisCmd) -> Option<Name> {
    match cmd {
        RedisCmd::Set { key, .. }
        | RedisCmd::SetNx { key, .. }
        | RedisCmd::Expire { key, .. }
        | RedisCmd::Get { key }
        | RedisCmd::Del { key }
        | RedisCmd::Incr { key }
        | RedisCmd::DelIfValue { key, .. }
        | RedisCmd::ExpireIfValue { key, .. } => Some(key),
        RedisCmd::Wait { .. } => None,
    }
}

impl Keyspace {
    fn find(&self, key: Name) -> Result<usize, usize> {
        self.keys.binary_search_by(|e| e.key.cmp(&key))
    }

    fn value(&self, key: Name) -> Option<Data> {
        self.find(key).ok().map(|i| self.keys[i].value)
    }

    /// Writes `key` = `value` with `ttl` (a plain `SET` drops an old TTL).
    fn put(&mut self, key: Name, value: Data, ttl: Option<Ttl>) -> Option<TtlChange> {
        let entry = Entry { key, value, ttl };
        let had_ttl = match self.find(key) {
            Ok(i) => std::mem::replace(&mut self.keys[i], entry).ttl.is_some(),
            Err(i) => {
                self.keys.insert(i, entry);
                false
            }
        };
        match ttl {
            Some(t) => Some(TtlChange::Armed { key, ms: t.ms }),
            None => had_ttl.then_some(TtlChange::Cleared { key }),
        }
    }

    fn delete(&mut self, key: Name) -> (u64, Option<TtlChange>) {
        match self.find(key) {
            Ok(i) => {
                let gone = self.keys.remove(i);
                (1, gone.ttl.map(|_| TtlChange::Cleared { key }))
            }
            Err(_) => (0, None),
        }
    }

    /// `PEXPIRE key ms`: 1 if the key exists (its TTL is now `ms`).
    fn set_ttl(&mut self, s: SessionId, key: Name, ms: u32) -> (u64, Option<TtlChange>) {
        match self.find(key) {
            Ok(i) => {
                self.keys[i].ttl = Some(Ttl { ms, setter: s });
                (1, Some(TtlChange::Armed { key, ms }))
            }
            Err(_) => (0, None),
        }
    }

    fn apply(&mut self, s: SessionId, cmd: RedisCmd) -> (RedisReply, Option<TtlChange>) {
        let int = |n: u64| RedisReply::Int(n);
        match cmd {
            RedisCmd::Set { key, nx: true, .. } if self.find(key).is_ok() => {
                (RedisReply::Nil, None)
            }
            RedisCmd::Set { key, value, px, .. } => {
                let ttl = px.map(|ms| Ttl { ms, setter: s });
                (RedisReply::Ok, self.put(key, value, ttl))
            }
            RedisCmd::SetNx { key, .. } if self.find(key).is_ok() => (int(0), None),
            RedisCmd::SetNx { key, value } => (int(1), self.put(key, value, None)),
            RedisCmd::Expire { key, ms, .. } => {
                let (n, change) = self.set_ttl(s, key, ms);
                (int(n), change)
            }
            RedisCmd::Get { key } => (
                self.value(key).map_or(RedisReply::Nil, RedisReply::Value),
                None,
            ),
            RedisCmd::Del { key } => {
                let (n, change) = self.delete(key);
                (int(n), change)
            }
            RedisCmd::Incr { key } => {
                let next = self
                    .value(key)
                    .and_then(Data::number)
                    .unwrap_or(0)
                    .saturating_add(1);
                // INCR keeps the key's TTL, as Redis does.
                let ttl = self.find(key).ok().and_then(|i| self.keys[i].ttl);
                self.put(key, Data::Number(next), ttl);
                (int(next), None)
            }
            RedisCmd::DelIfValue { key, value } if self.value(key) == Some(value) => {
                let (n, change) = self.delete(key);
                (int(n), change)
            }
            RedisCmd::ExpireIfValue { key, value, ms } if self.value(key) == Some(value) => {
                let (n, change) = self.set_ttl(s, key, ms);
                (int(n), change)
            }
            RedisCmd::DelIfValue { .. } | RedisCmd::ExpireIfValue { .. } => (int(0), None),
            // A keyspace alone has no replica; the deployment answers for
            // its first master's (`RedisKv::apply`, before this).
            RedisCmd::Wait { .. } => (int(0), None),
        }
    }
}
