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
}

impl RedisKv {
    /// `n` empty masters.
    pub fn new(n: u8) -> Self {
        RedisKv {
            masters: vec![Keyspace::default(); usize::from(n)],
            incrs: 0,
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
        let Some(space) = self.masters.get_mut(usize::from(master)) else {
            return (RedisReply::Down, None);
        };
        let (reply, ttl) = space.apply(s, cmd);
        if matches!(cmd, RedisCmd::Incr { .. }) {
            self.incrs += 1;
        }
        (reply, ttl)
    }

    /// `key`'s TTL on `master` ran out: the key is deleted. True if there
    /// was such a key with a TTL.
    pub fn expire(&mut self, master: u8, key: Name) -> bool {
        let Some(space) = self.masters.get_mut(usize::from(master)) else {
            return false;
        };
        match space.find(key) {
            Ok(i) if space.keys[i].ttl.is_some() => {
                space.keys.remove(i);
                true
            }
            Ok(_) | Err(_) => false,
        }
    }

    /// Every key with a TTL on `master`, as (key, setter).
    pub fn expiring(&self, master: u8) -> impl Iterator<Item = (Name, SessionId)> + '_ {
        self.masters
            .get(usize::from(master))
            .into_iter()
            .flat_map(|space| space.keys.iter())
            .filter_map(|e| e.ttl.map(|t| (e.key, t.setter)))
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
        }
    }
}
