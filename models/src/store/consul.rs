//! The Consul face of the store: the KV store with sessions, as Consul's
//! servers keep it (`state/kvs.go`, `state/session.go`) and its HTTP API
//! serves it (`/v1/kv`, `/v1/session`).
//!
//! - A key has a value, the `Session` holding it, `LockIndex` (how many
//!   times a session acquired it), `ModifyIndex` and `CreateIndex`.
//! - `?acquire=` succeeds only when no other session holds the key and
//!   not within the key's lock-delay; the holding session acquiring again
//!   keeps `LockIndex` and sets the value. `?release=` clears `Session`.
//!   A plain `PUT` (no `?cas=`, no `?acquire=`) sets the value and leaves
//!   `Session` and `LockIndex` as they were.
//! - `DELETE ?recurse` deletes every key under a prefix in one Raft index.
//! - `session/info` reads the session table: a live session's options,
//!   else `null`.
//! - A session is invalidated when its TTL runs out (the store's expiry
//!   timer, which the actor sets anywhere between TTL and twice the TTL
//!   after the last renewal), when its node check goes critical (a fault),
//!   or on `session/destroy`. Its held keys are then released (behavior
//!   `release`) or deleted (`delete`), and each gets the session's
//!   lock-delay: a store timer ([`crate::msg::Timer::LockDelay`]) while
//!   which no session may acquire it.
//! - A blocking query (`GET ?index=`), Consul's only watch, is answered at
//!   once when the index it would return is past the one asked, else held
//!   until the key changes or its wait runs out; the held answer is sent
//!   as a notification (`WatchEvent::Consul`), so the herd counts it as a
//!   watch event.
//! - `GET ?recurse` lists the pairs under a prefix; its `X-Consul-Index`
//!   is the last write or delete under the prefix (the largest
//!   `ModifyIndex` there, or the index of a later delete: Consul's
//!   tombstones). Held as a blocking query, it is answered by a change of
//!   any key under the prefix (`WatchEvent::ConsulList`). The store keeps
//!   the index of the last delete under each prefix listed so far (its
//!   `graveyard`; none for a recipe that lists nothing): a delete before
//!   the first listing changes no answer that listing's index is compared
//!   with.
//! - The lock-delay table is the leader's, in memory: a leader failover to
//!   a server that restored its state from a snapshot forgets it (and
//!   every session's TTL starts again: [`ConsulKv::fail_over`]).

use crate::ids::{ClientIdx, Data, Key, Name, SessionId};
use crate::msg::{Behavior, ConsulCmd, ConsulReply, KvPair, SessionOpts, WatchEvent};
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A blocking query the store holds: whose, on which key (`recurse`: on
/// every key under the key's text, a prefix), past which index it
/// returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Query {
    pub client: ClientIdx,
    pub key: Key,
    pub index: u64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub recurse: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// As the derived hash was before `recurse`: it only when set, so a
/// lock's states fingerprint as they did.
impl Hash for Query {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.client.hash(h);
        self.key.hash(h);
        self.index.hash(h);
        if self.recurse {
            self.recurse.hash(h);
        }
    }
}

/// The Consul store's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsulKv {
    /// The Raft index of the last write (sessions' too): replies' header.
    pub index: u64,
    /// The KV table's index: its last write or delete, which a `GET` of a
    /// missing key returns as `X-Consul-Index`.
    pub kv_index: u64,
    /// Live keys, sorted by key.
    pub pairs: Vec<KvPair>,
    /// Every session created, with what it asked for, sorted by session.
    pub sessions: Vec<(SessionId, SessionOpts)>,
    /// Keys within a lock-delay, sorted, each with the session whose
    /// invalidation started it (the checker's time lets the delay run out
    /// only once that session's client can have heard: `model::time`).
    pub delays: Vec<(Key, SessionId)>,
    /// Blocking queries held, sorted (one per client at most).
    pub queries: Vec<Query>,
    /// Each prefix listed so far (`GET ?recurse`), sorted, with the index
    /// of the last delete under it, if no write there came since (else
    /// 0): Consul's tombstones, as far as a listing's index reads them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graveyard: Vec<(Name, u64)>,
}

/// As the derived hash was before `graveyard`: it only when some prefix
/// was listed, so a lock's states fingerprint as they did.
impl Hash for ConsulKv {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.index.hash(h);
        self.kv_index.hash(h);
        self.pairs.hash(h);
        self.sessions.hash(h);
        self.delays.hash(h);
        self.queries.hash(h);
        if !self.graveyard.is_empty() {
            self.graveyard.hash(h);
        }
    }
}

/// What a call did beside its answer: the held queries it answered, the
/// lock-delays it started, the query whose wait starts now.
#[derive(Debug, Default)]
pub struct Effects {
    pub fired: Vec<(ClientIdx, WatchEvent)>,
    /// Keys whose lock-delay starts now, and for how long (milliseconds).
    pub delays: Vec<(Key, u32)>,
    /// A query held now: its client's wait starts (milliseconds; 0 for the
    /// server's default).
    pub held: Option<(ClientIdx, u32)>,
}

/// The server's wait for a blocking query that names none (5 minutes,
/// `DefaultQueryTime`).
pub const DEFAULT_QUERY_WAIT_MS: u32 = 300_000;

impl ConsulKv {
    /// `key`, if it is there.
    pub fn get(&self, key: Key) -> Option<&KvPair> {
        self.find(key).ok().map(|i| &self.pairs[i])
    }

    fn find(&self, key: Key) -> Result<usize, usize> {
        self.pairs.binary_search_by(|p| p.key.cmp(&key))
    }

    /// What `GET key` answers now: the pair and `X-Consul-Index` (the
    /// key's `ModifyIndex`, else the KV table's index; at least 1, as
    /// Consul forces it).
    pub fn read(&self, key: Key) -> (Option<KvPair>, u64) {
        let pair = self.get(key).copied();
        let index = pair.map_or(self.kv_index, |p| p.modify_index).max(1);
        (pair, index)
    }

    /// What `GET prefix?recurse` answers now: the pairs under `prefix`,
    /// sorted by key, and `X-Consul-Index` (the last write or delete under
    /// it, else the KV table's index; at least 1).
    pub fn list(&self, prefix: Name) -> (Arc<[KvPair]>, u64) {
        let pairs: Arc<[KvPair]> = self
            .pairs
            .iter()
            .filter(|p| p.key.has_prefix(prefix))
            .copied()
            .collect();
        (pairs.clone(), self.list_index(prefix, &pairs))
    }

    /// `X-Consul-Index` of a listing of `prefix` that found `pairs`.
    fn list_index(&self, prefix: Name, pairs: &[KvPair]) -> u64 {
        let written = pairs.iter().map(|p| p.modify_index).max().unwrap_or(0);
        let deleted = self.graveyard_of(prefix).unwrap_or(0);
        match written.max(deleted) {
            0 => self.kv_index.max(1),
            index => index,
        }
    }

    fn graveyard_of(&self, prefix: Name) -> Option<u64> {
        self.graveyard
            .binary_search_by_key(&prefix, |(p, _)| *p)
            .ok()
            .map(|i| self.graveyard[i].1)
    }

    /// The options session `s` was created with.
    pub fn opts(&self, s: SessionId) -> Option<SessionOpts> {
        self.sessions
            .binary_search_by(|(id, _)| (id.client, id.incarnation).cmp(&(s.client, s.incarnation)))
            .ok()
            .map(|i| self.sessions[i].1)
    }

    /// Session `s` is created (a create asked again changes nothing).
    pub fn created(&mut self, s: SessionId, opts: SessionOpts) {
        let at = self.sessions.binary_search_by(|(id, _)| {
            (id.client, id.incarnation).cmp(&(s.client, s.incarnation))
        });
        if let Err(at) = at {
            self.sessions.insert(at, (s, opts));
            self.index += 1;
        }
    }

    /// Whether `key` is within a lock-delay.
    pub fn delayed(&self, key: Key) -> bool {
        self.delay_of(key).is_some()
    }

    /// The session whose invalidation put `key` in its lock-delay, if it
    /// is in one.
    pub fn delay_of(&self, key: Key) -> Option<SessionId> {
        self.delays
            .binary_search_by(|(k, _)| k.cmp(&key))
            .ok()
            .map(|i| self.delays[i].1)
    }

    /// `key`'s lock-delay is over.
    pub fn end_delay(&mut self, key: Key) {
        if let Ok(i) = self.delays.binary_search_by(|(k, _)| k.cmp(&key)) {
            self.delays.remove(i);
        }
    }

    /// Applies one KV call, or `session/info`, of session `s` (`alive`:
    /// whether the store knows it live, from the shared session table).
    /// Session create and destroy are the store's (`StoreState`).
    pub fn apply(
        &mut self,
        s: SessionId,
        alive: bool,
        cmd: ConsulCmd,
        fx: &mut Effects,
    ) -> ConsulReply {
        match cmd {
            ConsulCmd::SessionCreate(_) | ConsulCmd::SessionDestroy => {
                unreachable!("session create and destroy are applied by the store")
            }
            // A read of the session table: the options it was created
            // with, while the store knows it live.
            ConsulCmd::SessionInfo => {
                ConsulReply::SessionInfo(if alive { self.opts(s) } else { None })
            }
            ConsulCmd::Get {
                key,
                index,
                wait_ms,
            } => {
                let (pair, now) = self.read(key);
                if index == 0 || now > index {
                    return ConsulReply::Pair { pair, index: now };
                }
                self.hold(Query {
                    client: s.client,
                    key,
                    index,
                    recurse: false,
                });
                fx.held = Some((s.client, wait_ms));
                ConsulReply::Held
            }
            ConsulCmd::List {
                prefix,
                index,
                wait_ms,
            } => {
                if let Err(at) = self.graveyard.binary_search_by_key(&prefix, |(p, _)| *p) {
                    self.graveyard.insert(at, (prefix, 0));
                }
                let (pairs, now) = self.list(prefix);
                if index == 0 || now > index {
                    return ConsulReply::List { pairs, index: now };
                }
                self.hold(Query {
                    client: s.client,
                    key: Key::fixed(prefix),
                    index,
                    recurse: true,
                });
                fx.held = Some((s.client, wait_ms));
                ConsulReply::Held
            }
            ConsulCmd::Acquire { key, value } => {
                if !alive {
                    return ConsulReply::InvalidSession;
                }
                let held_by = self.get(key).and_then(|p| p.session);
                match held_by {
                    Some(h) if h != s => ConsulReply::Bool(false),
                    // The leader rejects an acquire within the key's
                    // lock-delay before it reaches the log.
                    None if self.delayed(key) => ConsulReply::Bool(false),
                    Some(_) | None => {
                        self.write(key, fx, |index, old| match old {
                            Some(p) if p.session == Some(s) => Some(KvPair {
                                value,
                                modify_index: index,
                                ..p
                            }),
                            Some(p) => Some(KvPair {
                                value,
                                session: Some(s),
                                lock_index: p.lock_index + 1,
                                modify_index: index,
                                ..p
                            }),
                            None => Some(KvPair {
                                key,
                                value,
                                session: Some(s),
                                lock_index: 1,
                                modify_index: index,
                                create_index: index,
                            }),
                        });
                        ConsulReply::Bool(true)
                    }
                }
            }
            ConsulCmd::Release { key } => {
                if !alive {
                    return ConsulReply::InvalidSession;
                }
                if self.get(key).and_then(|p| p.session) != Some(s) {
                    return ConsulReply::Bool(false);
                }
                self.write(key, fx, |index, old| {
                    old.map(|p| KvPair {
                        session: None,
                        modify_index: index,
                        ..p
                    })
                });
                ConsulReply::Bool(true)
            }
            ConsulCmd::Cas { key, value, index } => {
                let at = self.get(key).map_or(0, |p| p.modify_index);
                if at != index {
                    return ConsulReply::Bool(false);
                }
                self.set(key, value, fx);
                ConsulReply::Bool(true)
            }
            ConsulCmd::Delete { key, cas } => {
                let at = self.get(key).map(|p| p.modify_index);
                match (cas, at) {
                    (Some(want), Some(have)) if want != have => ConsulReply::Bool(false),
                    // `?cas=` on a missing key: nothing to delete at that index.
                    (Some(_), None) => ConsulReply::Bool(false),
                    (_, None) => ConsulReply::Bool(true),
                    (_, Some(_)) => {
                        self.write(key, fx, |_, _| None);
                        ConsulReply::Bool(true)
                    }
                }
            }
            // Consul's `KVSSet`: the lock fields are the acquire's and
            // release's alone.
            ConsulCmd::Put { key, value } => {
                self.set(key, value, fx);
                ConsulReply::Bool(true)
            }
            ConsulCmd::DeleteTree { prefix } => {
                self.delete_tree(prefix, fx);
                ConsulReply::Bool(true)
            }
        }
    }

    /// Every key under `prefix` deleted in one new Raft index (none there:
    /// nothing happens, as a delete of a missing key), a tombstone under
    /// each listed prefix that held one; each held query on a deleted key,
    /// or on a prefix of one, answered once, with the store as it is after
    /// them all.
    fn delete_tree(&mut self, prefix: Name, fx: &mut Effects) {
        let gone: Vec<Key> = self
            .pairs
            .iter()
            .map(|p| p.key)
            .filter(|k| k.has_prefix(prefix))
            .collect();
        if gone.is_empty() {
            return;
        }
        self.index += 1;
        self.kv_index = self.index;
        self.pairs.retain(|p| !p.key.has_prefix(prefix));
        for &key in &gone {
            self.bury(key, self.index);
        }
        // A query answered for one key is no longer held for the next.
        for &key in &gone {
            self.answer_queries(key, fx);
        }
    }

    /// `key` set to `value` (`KVSSet`, and a `?cas=` that matched): its
    /// lock fields kept, or a new key that no session holds.
    fn set(&mut self, key: Key, value: Data, fx: &mut Effects) {
        self.write(key, fx, |i, old| {
            Some(match old {
                Some(p) => KvPair {
                    value,
                    modify_index: i,
                    ..p
                },
                None => KvPair {
                    key,
                    value,
                    session: None,
                    lock_index: 0,
                    modify_index: i,
                    create_index: i,
                },
            })
        });
    }

    /// One write of `key` in a new Raft index: `f` makes the key from the
    /// index and what it was (`None`: deleted; a tombstone under every
    /// prefix listed that holds it). The queries held on it, and on a
    /// prefix of it, are answered.
    fn write(
        &mut self,
        key: Key,
        fx: &mut Effects,
        f: impl FnOnce(u64, Option<KvPair>) -> Option<KvPair>,
    ) {
        self.index += 1;
        self.kv_index = self.index;
        let at = self.find(key);
        let old = at.ok().map(|i| self.pairs[i]);
        match (at, f(self.index, old)) {
            (Ok(i), Some(p)) => {
                self.pairs[i] = p;
                self.bury(key, 0);
            }
            (Ok(i), None) => {
                self.pairs.remove(i);
                self.bury(key, self.index);
            }
            (Err(i), Some(p)) => {
                self.pairs.insert(i, p);
                self.bury(key, 0);
            }
            (Err(_), None) => {}
        }
        self.answer_queries(key, fx);
    }

    /// `key` changed at `deleted` (0: written, not deleted): the last
    /// delete under each listed prefix that holds it. A write there makes
    /// an earlier delete's index one no listing reads (the write's is
    /// larger, and a later delete of any key there is later still), so it
    /// is forgotten: states that differ only by it are one.
    fn bury(&mut self, key: Key, deleted: u64) {
        for (prefix, last) in &mut self.graveyard {
            if key.has_prefix(*prefix) {
                *last = deleted;
            }
        }
    }

    /// Answers every held query on `key`, or on a prefix of it, whose
    /// index has passed.
    fn answer_queries(&mut self, key: Key, fx: &mut Effects) {
        let (pair, index) = self.read(key);
        let mut queries = std::mem::take(&mut self.queries);
        queries.retain(|q| {
            let answer = match q.recurse {
                false if q.key == key && index > q.index => {
                    Some(WatchEvent::Consul { pair, index })
                }
                true if key.has_prefix(q.key.prefix) => self.list_answer(*q),
                true | false => None,
            };
            let answered = answer.is_some();
            fx.fired.extend(answer.map(|event| (q.client, event)));
            !answered
        });
        self.queries = queries;
    }

    /// The answer to the prefix query `q`, if its index has passed.
    fn list_answer(&self, q: Query) -> Option<WatchEvent> {
        let (pairs, index) = self.list(q.key.prefix);
        (index > q.index).then_some(WatchEvent::ConsulList { pairs, index })
    }

    /// The answer to held query `q` as the store is now.
    fn answer(&self, q: Query) -> WatchEvent {
        if q.recurse {
            let (pairs, index) = self.list(q.key.prefix);
            WatchEvent::ConsulList { pairs, index }
        } else {
            let (pair, index) = self.read(q.key);
            WatchEvent::Consul { pair, index }
        }
    }

    /// Holds `q`, in place of any query its client had held (a query
    /// asked again after a lost acknowledgement).
    fn hold(&mut self, q: Query) {
        self.queries.retain(|h| h.client != q.client);
        let at = self.queries.binary_search(&q).unwrap_or_else(|at| at);
        self.queries.insert(at, q);
    }

    /// Whether `client` has a blocking query held.
    pub fn holds_query(&self, client: ClientIdx) -> bool {
        self.queries.iter().any(|q| q.client == client)
    }

    /// `client`'s held query, its wait over: answered with the key as it
    /// is (the index it asked for, or the same one).
    pub fn time_out_query(&mut self, client: ClientIdx) -> Option<(ClientIdx, WatchEvent)> {
        let at = self.queries.iter().position(|q| q.client == client)?;
        let q = self.queries.remove(at);
        Some((client, self.answer(q)))
    }

    /// `client`'s connection closed (its process gone): its held query
    /// with it.
    pub fn drop_queries(&mut self, client: ClientIdx) {
        self.queries.retain(|q| q.client != client);
    }

    /// Session `s` is invalidated (its TTL ran out, its node check went
    /// critical, it was destroyed): every key it holds is released, or
    /// deleted with behavior `delete`, and gets its lock-delay.
    pub fn invalidate(&mut self, s: SessionId, fx: &mut Effects) {
        let Some(opts) = self.opts(s) else {
            return;
        };
        let held: Vec<Key> = self
            .pairs
            .iter()
            .filter(|p| p.session == Some(s))
            .map(|p| p.key)
            .collect();
        for key in held {
            self.write(key, fx, |index, old| match opts.behavior {
                Behavior::Release => old.map(|p| KvPair {
                    session: None,
                    modify_index: index,
                    ..p
                }),
                Behavior::Delete => None,
            });
            if opts.lock_delay_ms > 0 {
                match self.delays.binary_search_by(|(k, _)| k.cmp(&key)) {
                    Ok(at) => self.delays[at].1 = s,
                    Err(at) => self.delays.insert(at, (key, s)),
                }
                fx.delays.push((key, opts.lock_delay_ms));
            }
        }
    }

    /// The leader fails over to a server that restored its state from a
    /// snapshot: the lock-delays it kept in memory are gone (returned, so
    /// their timers are cancelled). Session TTLs start again (the store
    /// actor re-arms them).
    pub fn fail_over(&mut self) -> Vec<Key> {
        std::mem::take(&mut self.delays)
            .into_iter()
            .map(|(key, _)| key)
            .collect()
    }

    /// The value a key holds, if any (for views).
    pub fn value(&self, key: Key) -> Option<Data> {
        self.get(key).map(|p| p.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn key() -> Key {
        Key::fixed(crate::name!("lock/.lock"))
    }

    fn s(c: ClientIdx) -> SessionId {
        SessionId::first(c)
    }

    fn kv_with(sessions: &[(ClientIdx, Behavior, u32)]) -> ConsulKv {
        let mut kv = ConsulKv::default();
        for &(c, behavior, lock_delay_ms) in sessions {
            kv.created(
                s(c),
                SessionOpts {
                    behavior,
                    lock_delay_ms,
                },
            );
        }
        kv
    }

    fn acquire(kv: &mut ConsulKv, c: ClientIdx) -> ConsulReply {
        let mut fx = Effects::default();
        kv.apply(
            s(c),
            true,
            ConsulCmd::Acquire {
                key: key(),
                value: Data::Empty,
            },
            &mut fx,
        )
    }

    #[test]
    fn acquire_counts_lock_index_per_new_holder_and_keeps_it_on_reacquire() {
        let mut kv = kv_with(&[(0, Behavior::Release, 0), (1, Behavior::Release, 0)]);
        assert_eq!(acquire(&mut kv, 0), ConsulReply::Bool(true));
        assert_eq!(kv.get(key()).unwrap().lock_index, 1);
        assert_eq!(acquire(&mut kv, 1), ConsulReply::Bool(false));
        assert_eq!(acquire(&mut kv, 0), ConsulReply::Bool(true));
        assert_eq!(kv.get(key()).unwrap().lock_index, 1, "same session: kept");
        let mut fx = Effects::default();
        let r = kv.apply(s(0), true, ConsulCmd::Release { key: key() }, &mut fx);
        assert_eq!(r, ConsulReply::Bool(true));
        assert!(
            kv.delays.is_empty(),
            "an explicit release sets no lock-delay"
        );
        assert_eq!(acquire(&mut kv, 1), ConsulReply::Bool(true));
        assert_eq!(kv.get(key()).unwrap().lock_index, 2);
        // Created at index 3 (after the two sessions), released and
        // acquired since: the key was never deleted.
        assert_eq!(kv.get(key()).unwrap().create_index, 3);
    }

    #[test]
    fn invalidation_releases_or_deletes_under_the_lock_delay() {
        for behavior in [Behavior::Release, Behavior::Delete] {
            let mut kv = kv_with(&[(0, behavior, 15_000), (1, behavior, 15_000)]);
            acquire(&mut kv, 0);
            let mut fx = Effects::default();
            kv.invalidate(s(0), &mut fx);
            assert_eq!(fx.delays, vec![(key(), 15_000)]);
            match behavior {
                Behavior::Release => assert_eq!(kv.get(key()).unwrap().session, None),
                Behavior::Delete => assert!(kv.get(key()).is_none()),
            }
            assert_eq!(
                acquire(&mut kv, 1),
                ConsulReply::Bool(false),
                "within the lock-delay"
            );
            kv.end_delay(key());
            assert_eq!(acquire(&mut kv, 1), ConsulReply::Bool(true));
        }
    }

    #[test]
    fn a_blocking_query_is_held_until_its_index_passes() {
        let mut kv = kv_with(&[(0, Behavior::Release, 0), (1, Behavior::Release, 0)]);
        acquire(&mut kv, 0);
        let (_, index) = kv.read(key());
        let mut fx = Effects::default();
        let get = ConsulCmd::Get {
            key: key(),
            index,
            wait_ms: 15_000,
        };
        assert_eq!(kv.apply(s(1), true, get, &mut fx), ConsulReply::Held);
        assert_eq!(fx.held, Some((1, 15_000)));
        // An acquire again by the holder changes the key: the query is answered.
        let mut fx = Effects::default();
        kv.apply(s(0), true, ConsulCmd::Release { key: key() }, &mut fx);
        assert_eq!(fx.fired.len(), 1);
        assert!(kv.queries.is_empty());
        // An index already passed answers at once.
        let mut fx = Effects::default();
        let r = kv.apply(s(1), true, get, &mut fx);
        assert!(matches!(r, ConsulReply::Pair { pair: Some(p), .. } if p.session.is_none()));
    }

    #[test]
    fn cas_and_delete_compare_the_modify_index() {
        let mut kv = ConsulKv::default();
        let mut fx = Effects::default();
        let put = |index| ConsulCmd::Cas {
            key: key(),
            value: Data::Number(7),
            index,
        };
        assert_eq!(
            kv.apply(s(0), true, put(0), &mut fx),
            ConsulReply::Bool(true)
        );
        assert_eq!(
            kv.apply(s(0), true, put(0), &mut fx),
            ConsulReply::Bool(false)
        );
        let at = kv.get(key()).unwrap().modify_index;
        assert_eq!(
            kv.apply(s(0), true, put(at), &mut fx),
            ConsulReply::Bool(true)
        );
        let del = |cas| ConsulCmd::Delete { key: key(), cas };
        assert_eq!(
            kv.apply(s(0), true, del(Some(at)), &mut fx),
            ConsulReply::Bool(false)
        );
        assert_eq!(
            kv.apply(s(0), true, del(None), &mut fx),
            ConsulReply::Bool(true)
        );
        assert!(kv.get(key()).is_none());
    }

    #[test]
    fn a_listing_is_held_until_a_key_under_its_prefix_changes() {
        let prefix = crate::name!("sem");
        let lock = Key::fixed(crate::name!("sem/.lock"));
        let contender = |c| Key::of_lease(crate::name!("sem/"), s(c));
        let mut kv = kv_with(&[(0, Behavior::Delete, 0), (1, Behavior::Delete, 0)]);
        let mut fx = Effects::default();
        let acquire = |key| ConsulCmd::Acquire {
            key,
            value: Data::Empty,
        };
        kv.apply(s(0), true, acquire(contender(0)), &mut fx);
        kv.apply(s(1), true, acquire(contender(1)), &mut fx);
        let list = |index| ConsulCmd::List {
            prefix,
            index,
            wait_ms: 15_000,
        };
        let ConsulReply::List { pairs, index } = kv.apply(s(0), true, list(0), &mut fx) else {
            panic!("a listing");
        };
        assert_eq!(pairs.len(), 2);
        assert_eq!(index, 4, "the last write under the prefix");
        // Held, then answered by a write under the prefix: .lock's create.
        assert_eq!(
            kv.apply(s(0), true, list(index), &mut fx),
            ConsulReply::Held
        );
        let cas = ConsulCmd::Cas {
            key: lock,
            value: Data::Number(1),
            index: 0,
        };
        let mut fx = Effects::default();
        kv.apply(s(1), true, cas, &mut fx);
        match &fx.fired[..] {
            [(0, WatchEvent::ConsulList { pairs, index: 5 })] => assert_eq!(pairs.len(), 3),
            fired => panic!("{fired:?}"),
        }
        // A delete under the prefix answers it too, at the delete's index,
        // though no key left there has that ModifyIndex (a tombstone).
        kv.apply(s(0), true, list(5), &mut fx);
        let mut fx = Effects::default();
        kv.invalidate(s(0), &mut fx);
        match &fx.fired[..] {
            [(0, WatchEvent::ConsulList { pairs, index: 6 })] => assert_eq!(pairs.len(), 2),
            fired => panic!("{fired:?}"),
        }
        assert_eq!(kv.list(prefix).1, 6, "the tombstone's index");
        // A write outside the prefix answers nothing.
        kv.apply(s(1), true, list(6), &mut fx);
        let mut fx = Effects::default();
        let elsewhere = ConsulCmd::Cas {
            key: key(),
            value: Data::Empty,
            index: 0,
        };
        kv.apply(s(1), true, elsewhere, &mut fx);
        assert!(fx.fired.is_empty());
        assert!(kv.holds_query(1));
        assert_eq!(kv.graveyard, [(prefix, 6)]);
        // A write under the prefix outdates the tombstone: forgotten.
        let cas = ConsulCmd::Cas {
            key: lock,
            value: Data::Number(2),
            index: 5,
        };
        kv.apply(s(1), true, cas, &mut fx);
        assert_eq!(kv.graveyard, [(prefix, 0)]);
        assert_eq!(kv.list(prefix).1, 8);
    }

    #[test]
    fn a_plain_put_keeps_the_lock_fields_and_answers_a_held_get() {
        let mut kv = kv_with(&[(0, Behavior::Release, 0), (1, Behavior::Release, 0)]);
        let put = |value| ConsulCmd::Put { key: key(), value };
        // Absent: created, held by no session, at one new index.
        let mut fx = Effects::default();
        assert_eq!(
            kv.apply(s(1), true, put(Data::Number(1)), &mut fx),
            ConsulReply::Bool(true)
        );
        let created = *kv.get(key()).unwrap();
        assert_eq!((created.session, created.lock_index), (None, 0));
        assert_eq!((created.create_index, created.modify_index), (3, 3));
        assert_eq!(created.value, Data::Number(1));
        acquire(&mut kv, 0);
        let held = *kv.get(key()).unwrap();
        assert_eq!((held.session, held.lock_index), (Some(s(0)), 1));
        // Another session's GET blocks past the key's index.
        let mut fx = Effects::default();
        let get = ConsulCmd::Get {
            key: key(),
            index: held.modify_index,
            wait_ms: 0,
        };
        assert_eq!(kv.apply(s(1), true, get, &mut fx), ConsulReply::Held);
        // A plain PUT by another session, even one the store knows dead:
        // the value changes, the lock does not.
        let mut fx = Effects::default();
        assert_eq!(
            kv.apply(s(1), false, put(Data::Number(2)), &mut fx),
            ConsulReply::Bool(true)
        );
        let now = *kv.get(key()).unwrap();
        assert_eq!(now.value, Data::Number(2));
        assert_eq!((now.session, now.lock_index), (Some(s(0)), 1));
        assert_eq!(now.modify_index, held.modify_index + 1);
        assert_eq!(now.create_index, created.create_index);
        assert_eq!(kv.index, now.modify_index);
        match &fx.fired[..] {
            [(
                1,
                WatchEvent::Consul {
                    pair: Some(p),
                    index,
                },
            )] => {
                assert_eq!((*p, *index), (now, now.modify_index));
            }
            fired => panic!("{fired:?}"),
        }
        assert!(kv.queries.is_empty());
        // Still held: another session's acquire fails.
        assert_eq!(acquire(&mut kv, 1), ConsulReply::Bool(false));
    }

    #[test]
    fn session_info_reads_a_live_session_and_null_for_one_gone() {
        use crate::msg::{Reply, Request};
        use crate::store::{SessionEnd, StoreState};
        let opts = |lock_delay_ms| SessionOpts {
            behavior: Behavior::Delete,
            lock_delay_ms,
        };
        let mut st = StoreState {
            consul: Some(Box::default()),
            ..StoreState::default()
        };
        for c in 0..3 {
            let create = Request::Consul(ConsulCmd::SessionCreate(opts(1_000 * u32::from(c))));
            assert_eq!(
                st.apply(s(c), &create).0,
                Reply::Consul(ConsulReply::SessionCreated)
            );
        }
        let info = |st: &mut StoreState, c| {
            let before = st.clone();
            let (reply, fired) = st.apply(s(c), &Request::Consul(ConsulCmd::SessionInfo));
            assert!(fired.is_empty());
            assert_eq!(*st, before, "a read changes nothing");
            let Reply::Consul(ConsulReply::SessionInfo(i)) = reply else {
                panic!("{reply:?}");
            };
            i
        };
        for c in 0..3 {
            assert_eq!(info(&mut st, c), Some(opts(1_000 * u32::from(c))));
        }
        // Destroyed, expired: Consul's null. The others live on.
        let destroy = Request::Consul(ConsulCmd::SessionDestroy);
        st.apply(s(1), &destroy);
        st.end_session(s(2), SessionEnd::Expired);
        assert_eq!(info(&mut st, 1), None, "destroyed");
        assert_eq!(info(&mut st, 2), None, "expired");
        assert_eq!(info(&mut st, 0), Some(opts(0)));
        // Never created.
        assert_eq!(info(&mut st, 3), None);
    }

    #[test]
    fn a_recursive_delete_takes_every_key_under_the_prefix_at_one_index() {
        let prefix = crate::name!("sem/");
        let lock = Key::fixed(crate::name!("sem/.lock"));
        let contender = Key::of_lease(prefix, s(0));
        let outside = key();
        let mut kv = kv_with(&[(0, Behavior::Release, 0), (1, Behavior::Release, 0)]);
        let mut fx = Effects::default();
        let put = |key| ConsulCmd::Put {
            key,
            value: Data::Number(1),
        };
        for k in [lock, contender, outside] {
            kv.apply(s(0), true, put(k), &mut fx);
        }
        assert_eq!(kv.index, 5);
        // Held: a listing of the prefix, and a GET of a key outside it.
        let list = |index| ConsulCmd::List {
            prefix,
            index,
            wait_ms: 0,
        };
        let ConsulReply::List { pairs, index } = kv.apply(s(0), true, list(0), &mut fx) else {
            panic!("a listing");
        };
        assert_eq!((pairs.len(), index), (2, 4));
        assert_eq!(kv.apply(s(0), true, list(4), &mut fx), ConsulReply::Held);
        let get = ConsulCmd::Get {
            key: outside,
            index: 5,
            wait_ms: 0,
        };
        assert_eq!(kv.apply(s(1), true, get, &mut fx), ConsulReply::Held);
        let mut fx = Effects::default();
        let r = kv.apply(s(1), true, ConsulCmd::DeleteTree { prefix }, &mut fx);
        assert_eq!(r, ConsulReply::Bool(true));
        assert_eq!(kv.index, 6, "both keys at one index");
        assert_eq!(kv.kv_index, 6);
        assert!(kv.get(lock).is_none() && kv.get(contender).is_none());
        assert_eq!(kv.get(outside).unwrap().modify_index, 5, "outside: kept");
        // The listing answered once, with nothing left and the delete's
        // index; the GET outside the prefix still held.
        match &fx.fired[..] {
            [(0, WatchEvent::ConsulList { pairs, index: 6 })] => assert!(pairs.is_empty()),
            fired => panic!("{fired:?}"),
        }
        assert!(kv.holds_query(1) && !kv.holds_query(0));
        // A later listing reads the tombstone's index.
        assert_eq!(kv.graveyard, [(prefix, 6)]);
        let mut fx = Effects::default();
        let ConsulReply::List { pairs, index } = kv.apply(s(0), true, list(0), &mut fx) else {
            panic!("a listing");
        };
        assert_eq!((pairs.len(), index), (0, 6));
        // Nothing left under it: a second one writes nothing.
        kv.apply(s(1), true, ConsulCmd::DeleteTree { prefix }, &mut fx);
        assert_eq!(kv.index, 6);
        assert!(fx.fired.is_empty());
    }

    #[test]
    fn a_dead_session_cannot_acquire() {
        let mut kv = kv_with(&[(0, Behavior::Release, 0)]);
        let mut fx = Effects::default();
        let r = kv.apply(
            s(0),
            false,
            ConsulCmd::Acquire {
                key: key(),
                value: Data::Empty,
            },
            &mut fx,
        );
        assert_eq!(r, ConsulReply::InvalidSession);
    }
}
