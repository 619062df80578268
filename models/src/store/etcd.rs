//! The etcd face of the store: one global revision, keys with a value,
//! `create_revision` / `mod_revision` / `version` / `lease`, `txn` with
//! compares on any of them (a value compare on a missing key fails, as in
//! etcd's `applyCompare`), puts, deletes and ranges in either branch,
//! `range` over a key or a prefix sorted by create revision with
//! `max_create_revision`, and watches that start at a past revision.
//!
//! Revisions start at 1 as in etcd; each put or delete (and each lease expiry,
//! which deletes its keys in one transaction) is one revision.

use crate::ids::{ClientIdx, Data, Key, SessionId};
use crate::msg::{
    Compare, CompareOp, CompareTarget, EtcdEvent, Keys, Kv, OpResult, Range, RangeOnly, Sort,
    SortOrder, SortTarget, Txn, TxnOp,
};
use serde::{Deserialize, Serialize};

/// A key watch: a client waits for `key`'s events from `start_revision` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Watcher {
    pub client: ClientIdx,
    pub key: Key,
    pub start_revision: u64,
}

/// A range watch: a client hears every put and delete in `keys` from
/// `start_revision` on (etcd's watch stream: it does not end at a delete).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RangeWatcher {
    pub client: ClientIdx,
    pub keys: Keys,
    pub start_revision: u64,
}

/// A delivered etcd event: who is told, and what.
pub type Fired = (ClientIdx, EtcdEvent, Key, u64);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EtcdKv {
    pub revision: u64,
    /// Live keys, sorted.
    pub kvs: Vec<Kv>,
    /// Delete history (key, revision), so a watch from a past revision sees a
    /// delete that happened before it was created. Puts keep no history:
    /// a live key's latest put is in `kvs`, and the state stays as small
    /// as the recipes' runs need (see `watch_range`).
    pub deletes: Vec<(Key, u64)>,
    /// Key watches, sorted.
    pub watchers: Vec<Watcher>,
    /// Range watches, sorted. Written (and hashed) only when there are
    /// some, so the recipes' stores fingerprint and serialize as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub range_watchers: Vec<RangeWatcher>,
}

/// As the derived hash was before `range_watchers`: those only when there
/// are some (fingerprints of the recipes' states must not change).
impl std::hash::Hash for EtcdKv {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.revision.hash(h);
        self.kvs.hash(h);
        self.deletes.hash(h);
        self.watchers.hash(h);
        if !self.range_watchers.is_empty() {
            self.range_watchers.hash(h);
        }
    }
}

impl Default for EtcdKv {
    fn default() -> Self {
        EtcdKv {
            revision: 1,
            kvs: Vec::new(),
            deletes: Vec::new(),
            watchers: Vec::new(),
            range_watchers: Vec::new(),
        }
    }
}

impl EtcdKv {
    pub fn get(&self, key: Key) -> Option<&Kv> {
        self.kvs
            .binary_search_by(|kv| kv.key.cmp(&key))
            .ok()
            .map(|i| &self.kvs[i])
    }

    /// Whether a txn's compare holds now.
    pub fn holds(&self, c: &Compare) -> bool {
        let kv = self.get(c.key);
        let ord = match (c.target, kv) {
            // etcd: "always fail if comparing a value on a key that doesn't
            // exist".
            (CompareTarget::Value(_), None) => return false,
            // etcd compares a value's bytes: the text a value is written
            // as (`Data`'s display, what the validator stores).
            (CompareTarget::Value(want), Some(kv)) => kv.value.to_string().cmp(&want.to_string()),
            (CompareTarget::CreateRevision(want), _) => {
                kv.map_or(0, |kv| kv.create_revision).cmp(&want)
            }
            (CompareTarget::ModRevision(want), _) => kv.map_or(0, |kv| kv.mod_revision).cmp(&want),
            (CompareTarget::Version(want), _) => kv.map_or(0, |kv| kv.version).cmp(&want),
        };
        match c.op {
            CompareOp::Equal => ord.is_eq(),
            CompareOp::NotEqual => ord.is_ne(),
            CompareOp::Less => ord.is_lt(),
            CompareOp::Greater => ord.is_gt(),
        }
    }

    /// `txn`: the compares, then each op of the chosen branch. The caller
    /// has checked that every lease a put names is alive.
    pub fn txn(&mut self, txn: &Txn, fired: &mut Vec<Fired>) -> (bool, Vec<OpResult>) {
        let succeeded = txn.compares.iter().all(|c| self.holds(c));
        let ops = if succeeded {
            &txn.success
        } else {
            &txn.failure
        };
        // A txn is one revision however many writes it makes (etcd: every
        // write of a txn shares the txn's revision); a delete of a missing
        // key writes nothing.
        let writes = ops.iter().any(|op| match op {
            TxnOp::Put { .. } => true,
            TxnOp::Delete { key } => self.get(*key).is_some(),
            TxnOp::Range(_) => false,
        });
        if writes {
            self.revision += 1;
        }
        let revision = self.revision;
        let results = ops
            .iter()
            .map(|op| match op {
                TxnOp::Put { key, value, lease } => {
                    self.put_at(*key, *value, *lease, revision, fired);
                    OpResult::Put { revision }
                }
                TxnOp::Delete { key } => OpResult::Delete {
                    deleted: self.delete_at(*key, fired),
                },
                TxnOp::Range(r) => self.read(r),
            })
            .collect();
        (succeeded, results)
    }

    /// `put(key, value, lease)`; returns the new revision.
    pub fn put(
        &mut self,
        key: Key,
        value: Data,
        lease: Option<SessionId>,
        fired: &mut Vec<Fired>,
    ) -> u64 {
        self.revision += 1;
        let revision = self.revision;
        self.put_at(key, value, lease, revision, fired);
        revision
    }

    /// Writes `key` at `revision` (the current one, already taken).
    fn put_at(
        &mut self,
        key: Key,
        value: Data,
        lease: Option<SessionId>,
        revision: u64,
        fired: &mut Vec<Fired>,
    ) {
        match self.kvs.binary_search_by(|kv| kv.key.cmp(&key)) {
            Ok(i) => {
                let kv = &mut self.kvs[i];
                kv.mod_revision = revision;
                kv.version += 1;
                kv.lease = lease;
                kv.value = value;
            }
            Err(i) => self.kvs.insert(
                i,
                Kv {
                    key,
                    create_revision: revision,
                    mod_revision: revision,
                    version: 1,
                    lease,
                    value,
                },
            ),
        }
        self.notify(key, EtcdEvent::Put, revision, fired);
    }

    /// Whether `key` is in `keys`.
    fn takes(keys: Keys, key: Key) -> bool {
        match keys {
            Keys::One(k) => key == k,
            Keys::Prefix(p) => key.has_prefix(p),
            // As etcd reads a range_end: empty, the one key `from`; "\0",
            // every key from `from` on (`WithFromKey`); else `[from, end)`.
            Keys::Between { from, end } => match end.map(|e| (e, e.as_str())) {
                Some((_, "")) => key.cmp_bound(from).is_eq(),
                Some((_, "\0")) | None => key.cmp_bound(from).is_ge(),
                Some((end, _)) => key.cmp_bound(from).is_ge() && key.cmp_bound(end).is_lt(),
            },
        }
    }

    /// A range as a txn's op answers it: its key-values, or (`count_only`)
    /// how many keys are in its range.
    pub fn read(&self, r: &Range) -> OpResult {
        match r.only {
            RangeOnly::Count => OpResult::Count {
                count: self.count(r.keys),
            },
            RangeOnly::Kvs | RangeOnly::Keys => OpResult::Range { kvs: self.range(r) },
        }
    }

    /// A `count_only` range: how many keys are in `keys`. etcd counts the
    /// keys in the range before `max_create_revision` prunes them and
    /// `limit` cuts them (`rr.Count`), so those two count for nothing.
    pub fn count(&self, keys: Keys) -> u64 {
        self.kvs
            .iter()
            .filter(|kv| Self::takes(keys, kv.key))
            .count() as u64
    }

    /// `range`: matching keys, sorted and limited as asked (none for a
    /// count: [`EtcdKv::read`] answers that).
    pub fn range(&self, r: &Range) -> Vec<Kv> {
        let matching = self
            .kvs
            .iter()
            .filter(|kv| r.only != RangeOnly::Count && Self::takes(r.keys, kv.key))
            .filter(|kv| r.max_create_revision == 0 || kv.create_revision <= r.max_create_revision)
            .copied();
        let mut kvs: Vec<Kv> = match (r.sort, r.limit) {
            // The recipes ask for the first or last created key: find it
            // without sorting (or keeping) the rest.
            (Sort::Ascend, 1) => matching
                .min_by_key(|kv| kv.create_revision)
                .into_iter()
                .collect(),
            // (The first of equal revisions, as the stable sort below
            // leaves them: `max_by_key` would take the last.)
            (Sort::Descend, 1) => matching
                .min_by_key(|kv| std::cmp::Reverse(kv.create_revision))
                .into_iter()
                .collect(),
            _ => {
                let mut kvs: Vec<Kv> = matching.collect();
                // A stable sort: ties stay in key order, highest first or
                // not.
                if let Some((target, order)) = r.sort.target() {
                    kvs.sort_by(|a, b| {
                        let ord = match target {
                            SortTarget::Key => a.key.cmp(&b.key),
                            SortTarget::Version => a.version.cmp(&b.version),
                            SortTarget::Create => a.create_revision.cmp(&b.create_revision),
                            SortTarget::Mod => a.mod_revision.cmp(&b.mod_revision),
                            // etcd compares a value's bytes: its text here.
                            SortTarget::Value => a.value.to_string().cmp(&b.value.to_string()),
                        };
                        match order {
                            SortOrder::Ascend => ord,
                            SortOrder::Descend => ord.reverse(),
                        }
                    });
                }
                if r.limit > 0 {
                    kvs.truncate(r.limit as usize);
                    kvs.shrink_to_fit();
                }
                kvs
            }
        };
        // etcd drops the values last (`asembleRangeResponse`): a sort by
        // value saw them.
        if r.only == RangeOnly::Keys {
            kvs.iter_mut().for_each(|kv| kv.value = Data::Empty);
        }
        kvs
    }

    /// `delete(key)`; returns (revision, keys deleted). Deleting a missing key
    /// succeeds and changes nothing, as in etcd.
    pub fn delete(&mut self, key: Key, fired: &mut Vec<Fired>) -> (u64, u32) {
        if self.get(key).is_none() {
            return (self.revision, 0);
        }
        self.revision += 1;
        let deleted = self.delete_at(key, fired);
        (self.revision, deleted)
    }

    /// Deletes `key` at the current revision (already taken); how many
    /// keys went.
    fn delete_at(&mut self, key: Key, fired: &mut Vec<Fired>) -> u32 {
        match self.kvs.binary_search_by(|kv| kv.key.cmp(&key)) {
            Ok(i) => {
                self.kvs.remove(i);
                self.record_delete(key, fired);
                1
            }
            Err(_) => 0,
        }
    }

    /// The keys attached to `lease`, in key order (`TimeToLive`'s keys).
    pub fn leased(&self, lease: SessionId) -> Vec<Key> {
        self.kvs
            .iter()
            .filter(|kv| kv.lease == Some(lease))
            .map(|kv| kv.key)
            .collect()
    }

    /// Lease expiry or revoke: delete the lease's keys in one revision.
    pub fn expire(&mut self, lease: SessionId, fired: &mut Vec<Fired>) {
        let doomed = self.leased(lease);
        if doomed.is_empty() {
            return;
        }
        self.revision += 1;
        self.kvs.retain(|kv| kv.lease != Some(lease));
        for key in doomed {
            self.record_delete(key, fired);
        }
    }

    /// `client`'s watches move here from `from`, the state of a server
    /// that has applied less (a new leader's view before it caught up): as
    /// etcd's client resumes a watch from the revision after the last it
    /// heard, each replays what happened here since `from`'s revision.
    pub fn resume_watches(&mut self, from: &mut EtcdKv, client: ClientIdx, fired: &mut Vec<Fired>) {
        let heard = from.revision + 1;
        let (moving, staying): (Vec<Watcher>, Vec<Watcher>) =
            from.watchers.drain(..).partition(|w| w.client == client);
        from.watchers = staying;
        for w in moving {
            self.watch(client, w.key, w.start_revision.max(heard), fired);
        }
        let (moving, staying): (Vec<RangeWatcher>, Vec<RangeWatcher>) = from
            .range_watchers
            .drain(..)
            .partition(|w| w.client == client);
        from.range_watchers = staying;
        for w in moving {
            self.watch_range(client, w.keys, w.start_revision.max(heard), fired);
        }
    }

    /// `watch(key, start_revision)` for `client`: replays what already
    /// happened at or after `start_revision`, and stays registered unless that
    /// included the delete that ends it.
    pub fn watch(
        &mut self,
        client: ClientIdx,
        key: Key,
        start_revision: u64,
        fired: &mut Vec<Fired>,
    ) {
        let start_revision = from_now_if_zero(start_revision, self.revision);
        let mut past: Vec<(u64, EtcdEvent)> = self
            .deletes
            .iter()
            .filter(|(k, rev)| *k == key && *rev >= start_revision)
            .map(|(_, rev)| (*rev, EtcdEvent::Delete))
            .collect();
        if let Some(kv) = self.get(key) {
            if kv.mod_revision >= start_revision {
                past.push((kv.mod_revision, EtcdEvent::Put));
            }
        }
        past.sort();
        for (rev, kind) in &past {
            fired.push((client, *kind, key, *rev));
            if *kind == EtcdEvent::Delete {
                return;
            }
        }
        insert_once(
            &mut self.watchers,
            Watcher {
                client,
                key,
                start_revision,
            },
        );
    }

    /// `watch(keys, start_revision)` for `client`, a stream: replays what
    /// happened in `keys` at or after `start_revision` that the store
    /// still knows — every delete (the delete history) and each live
    /// key's latest put — in revision order (within one revision, deletes
    /// first), then hears every event from now on. etcd replays every
    /// event since `start_revision`; a key put more than once since then
    /// shows its latest put only, and one put and deleted since then its
    /// delete only: the model keeps no history of puts (it would grow
    /// every etcd state the checker keeps). Events after the watch is made
    /// are all delivered, in the order of their writes.
    pub fn watch_range(
        &mut self,
        client: ClientIdx,
        keys: Keys,
        start_revision: u64,
        fired: &mut Vec<Fired>,
    ) {
        let start_revision = from_now_if_zero(start_revision, self.revision);
        let mut past: Vec<(u64, EtcdEvent, Key)> = self
            .deletes
            .iter()
            .filter(|(k, rev)| *rev >= start_revision && Self::takes(keys, *k))
            .map(|(k, rev)| (*rev, EtcdEvent::Delete, *k))
            .collect();
        past.extend(
            self.kvs
                .iter()
                .filter(|kv| kv.mod_revision >= start_revision && Self::takes(keys, kv.key))
                .map(|kv| (kv.mod_revision, EtcdEvent::Put, kv.key)),
        );
        // Stable: the deletes keep their history's order.
        past.sort_by_key(|(rev, kind, _)| (*rev, *kind == EtcdEvent::Put));
        fired.extend(
            past.into_iter()
                .map(|(rev, kind, key)| (client, kind, key, rev)),
        );
        insert_once(
            &mut self.range_watchers,
            RangeWatcher {
                client,
                keys,
                start_revision,
            },
        );
    }

    fn record_delete(&mut self, key: Key, fired: &mut Vec<Fired>) {
        self.deletes.push((key, self.revision));
        self.notify(key, EtcdEvent::Delete, self.revision, fired);
    }

    fn notify(&mut self, key: Key, kind: EtcdEvent, revision: u64, fired: &mut Vec<Fired>) {
        // A key watch ends at the delete it waited for.
        self.watchers.retain(|w| {
            if w.key != key || revision < w.start_revision {
                return true;
            }
            fired.push((w.client, kind, key, revision));
            kind != EtcdEvent::Delete
        });
        // A range watch hears every event in its range, and goes on.
        fired.extend(
            self.range_watchers
                .iter()
                .filter(|w| revision >= w.start_revision && Self::takes(w.keys, key))
                .map(|w| (w.client, kind, key, revision)),
        );
    }
}

/// Adds `x` to a sorted vector unless it is there (a watch made twice is
/// one watch).
fn insert_once<T: Ord>(sorted: &mut Vec<T>, x: T) {
    if let Err(at) = sorted.binary_search(&x) {
        sorted.insert(at, x);
    }
}

/// A watch's start revision as etcd reads it: 0 is "from now", the next
/// revision (etcd's `watchStream.Watch` with `startRev == 0` watches from
/// the current revision + 1), so it replays nothing.
fn from_now_if_zero(start_revision: u64, current: u64) -> u64 {
    if start_revision == 0 {
        current + 1
    } else {
        start_revision
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name;

    #[allow(non_snake_case)]
    fn Key(s: SessionId) -> super::Key {
        super::Key::of_lease(name!("/lock/"), s)
    }

    fn put(kv: &mut EtcdKv, s: SessionId, fired: &mut Vec<Fired>) -> u64 {
        kv.put(Key(s), Data::Empty, Some(s), fired)
    }

    /// A txn that, if `first`'s key does not exist, puts `first`'s key and
    /// then `second`'s, each on its own lease.
    fn putting_both(first: SessionId, second: SessionId) -> Txn {
        let put = |s: SessionId| TxnOp::Put {
            key: Key(s),
            value: Data::Empty,
            lease: Some(s),
        };
        Txn {
            compares: vec![Compare::created_at(Key(first), 0)],
            success: vec![put(first), put(second)],
            failure: vec![],
        }
    }

    /// Compares on a value, a version and a mod revision; a value compare
    /// on a missing key fails whatever the operator; a txn's delete shares
    /// its revision.
    #[test]
    fn a_txn_compares_values_versions_and_revisions() {
        let a = SessionId::first(0);
        let mut kv = EtcdKv::default();
        let key = super::Key::fixed(name!("/count"));
        let cmp = |target, op| Compare { key, target, op };
        assert!(!kv.holds(&cmp(CompareTarget::Value(Data::Empty), CompareOp::NotEqual)));
        assert!(kv.holds(&cmp(CompareTarget::Version(0), CompareOp::Equal)));
        let rev = kv.put(key, Data::Number(3), None, &mut Vec::new());
        assert!(kv.holds(&cmp(
            CompareTarget::Value(Data::Number(3)),
            CompareOp::Equal
        )));
        assert!(kv.holds(&cmp(
            CompareTarget::Value(Data::Number(2)),
            CompareOp::Greater
        )));
        assert!(kv.holds(&cmp(CompareTarget::ModRevision(rev), CompareOp::Equal)));
        assert!(kv.holds(&cmp(CompareTarget::Version(2), CompareOp::Less)));
        let txn = Txn {
            compares: vec![cmp(CompareTarget::Value(Data::Number(3)), CompareOp::Equal)],
            success: vec![
                TxnOp::Delete { key },
                TxnOp::Put {
                    key: Key(a),
                    value: Data::Session(a),
                    lease: None,
                },
            ],
            failure: vec![],
        };
        let (ok, results) = kv.txn(&txn, &mut Vec::new());
        assert!(ok);
        assert_eq!(kv.revision, rev + 1);
        assert_eq!(
            results,
            vec![
                OpResult::Delete { deleted: 1 },
                OpResult::Put { revision: rev + 1 }
            ]
        );
        assert!(kv.get(key).is_none());
        // The same txn again: its compare fails, nothing is written.
        let (ok, results) = kv.txn(&txn, &mut Vec::new());
        assert!(!ok && results.is_empty());
        assert_eq!(kv.revision, rev + 1);
    }

    #[test]
    fn a_txn_with_two_puts_is_one_revision() {
        let a = SessionId::first(0);
        let b = SessionId::first(1);
        let mut kv = EtcdKv::default();
        let before = kv.revision;
        let (ok, results) = kv.txn(&putting_both(a, b), &mut Vec::new());
        assert!(ok);
        assert_eq!(kv.revision, before + 1);
        assert_eq!(
            results,
            vec![
                OpResult::Put {
                    revision: before + 1
                },
                OpResult::Put {
                    revision: before + 1
                }
            ]
        );
        assert_eq!(kv.get(Key(a)).unwrap().create_revision, before + 1);
        assert_eq!(kv.get(Key(b)).unwrap().create_revision, before + 1);
        // A put outside a txn takes a revision of its own.
        assert_eq!(put(&mut kv, a, &mut Vec::new()), before + 2);
    }

    /// Keys written by one txn share a create revision; a range limited to
    /// the first (or last) created key picks the same one among them as
    /// the whole sorted range lists first: the lowest key.
    #[test]
    fn a_limited_range_breaks_create_revision_ties_as_the_sorted_range_does() {
        let (a, b) = (SessionId::first(0), SessionId::first(1));
        let mut kv = EtcdKv::default();
        kv.txn(&putting_both(b, a), &mut Vec::new());
        for sort in [Sort::Ascend, Sort::Descend] {
            let range = |limit| {
                kv.range(&Range {
                    sort,
                    limit,
                    ..Range::of(Keys::Prefix(name!("/lock/")))
                })
            };
            let all = range(0);
            assert_eq!(all.len(), 2);
            assert_eq!(all[0].key, Key(a), "{sort:?}");
            assert_eq!(range(1), vec![all[0]], "{sort:?}");
        }
    }

    /// A watch replays only its own key's events at or after its start:
    /// not another key's delete, nor its key's put from before it.
    #[test]
    fn a_watch_replays_only_its_keys_events_since_its_start() {
        let (a, b) = (SessionId::first(0), SessionId::first(1));
        let mut kv = EtcdKv::default();
        let mut sink = Vec::new();
        let put_a = put(&mut kv, a, &mut sink);
        put(&mut kv, b, &mut sink);
        kv.delete(Key(b), &mut sink);
        let mut fired = Vec::new();
        kv.watch(7, Key(a), put_a + 1, &mut fired);
        assert_eq!(
            fired,
            vec![],
            "b's delete and a's earlier put are not a's news"
        );
        kv.watch(8, Key(a), put_a, &mut fired);
        assert_eq!(fired, vec![(8, EtcdEvent::Put, Key(a), put_a)]);
        assert_eq!(kv.watchers.len(), 2, "both watches wait on");
        // A put is news that keeps a watch; the delete it waits for ends it.
        fired.clear();
        let again = put(&mut kv, a, &mut fired);
        assert_eq!(
            fired,
            vec![
                (7, EtcdEvent::Put, Key(a), again),
                (8, EtcdEvent::Put, Key(a), again)
            ]
        );
        assert_eq!(kv.watchers.len(), 2);
        fired.clear();
        let (gone, _) = kv.delete(Key(a), &mut fired);
        assert_eq!(
            fired,
            vec![
                (7, EtcdEvent::Delete, Key(a), gone),
                (8, EtcdEvent::Delete, Key(a), gone)
            ]
        );
        assert!(kv.watchers.is_empty());
    }

    /// A prefix watch from a past revision replays the deletes under the
    /// prefix since then and each live key's latest put, in revision
    /// order; then it hears every put and delete under the prefix, and a
    /// delete does not end it (etcd's watch stream). Another prefix's
    /// events are not its news.
    #[test]
    fn a_prefix_watch_replays_then_streams() {
        let (a, b) = (SessionId::first(0), SessionId::first(1));
        let mut kv = EtcdKv::default();
        let mut sink = Vec::new();
        let other = super::Key::fixed(name!("/other"));
        let put_a = put(&mut kv, a, &mut sink);
        put(&mut kv, b, &mut sink);
        kv.put(other, Data::Empty, None, &mut sink);
        let (gone_b, _) = kv.delete(Key(b), &mut sink);
        let again_a = put(&mut kv, a, &mut sink);
        let mut fired = Vec::new();
        kv.watch_range(7, Keys::Prefix(name!("/lock/")), put_a, &mut fired);
        // etcd would also replay a's first put and b's put: the model
        // keeps no history of puts.
        assert_eq!(
            fired,
            vec![
                (7, EtcdEvent::Delete, Key(b), gone_b),
                (7, EtcdEvent::Put, Key(a), again_a)
            ]
        );
        fired.clear();
        let (gone_a, _) = kv.delete(Key(a), &mut fired);
        kv.put(other, Data::Number(1), None, &mut fired);
        let back_b = put(&mut kv, b, &mut fired);
        assert_eq!(
            fired,
            vec![
                (7, EtcdEvent::Delete, Key(a), gone_a),
                (7, EtcdEvent::Put, Key(b), back_b)
            ]
        );
        assert_eq!(kv.range_watchers.len(), 1, "a delete ends no range watch");
        // Lease expiry: one revision, every key of the lease told.
        fired.clear();
        kv.expire(b, &mut fired);
        assert_eq!(fired, vec![(7, EtcdEvent::Delete, Key(b), back_b + 1)]);
    }

    /// A watch from a past revision: etcd replays every event of the key
    /// since then; lockstep replays the deletes and the key's current put,
    /// and ends the watch at the first delete — the one event `waitDelete`
    /// consumes. What the watcher sees up to that delete is the same.
    #[test]
    fn a_past_watch_delivers_the_first_delete_as_etcd_does() {
        let a = SessionId::first(0);
        let mut kv = EtcdKv::default();
        let mut sink = Vec::new();
        put(&mut kv, a, &mut sink);
        let start = kv.revision + 1;
        kv.delete(Key(a), &mut sink);
        let first_delete = kv.revision;
        put(&mut kv, a, &mut sink);
        kv.delete(Key(a), &mut sink);
        let mut fired = Vec::new();
        kv.watch(7, Key(a), start, &mut fired);
        // etcd would send: Delete(first), Put, Delete; waitDelete returns on
        // the first of them.
        assert_eq!(fired, vec![(7, EtcdEvent::Delete, Key(a), first_delete)]);
        assert!(kv.watchers.is_empty(), "the watch ended at the delete");
    }
}
