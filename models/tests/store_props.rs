//! Property tests of the store against a plain reference model: a
//! `BTreeMap` of nodes and `BTreeSet`s of watches, written for obviousness,
//! not speed.

use models::ids::{Child, Key, SessionId, ZPath};
use models::msg::{EtcdEvent, OpResult, Range, SortByCreate, Txn, TxnOp, ZkEvent};
use models::store::etcd::EtcdKv;
use models::store::zookeeper::{SessionEnd, ZkTree};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const SESSIONS: u16 = 3;

#[derive(Clone, Debug)]
enum ZkOp {
    CreateChild { owner: u16, ephemeral: bool },
    Delete { nth: usize },
    Exists { nth: usize, session: u16 },
    ExistsMissing { seq: u32, session: u16 },
    GetChildren { session: u16 },
    End { session: u16, closed: bool },
}

fn zk_op() -> impl Strategy<Value = ZkOp> {
    let s = 0..SESSIONS;
    prop_oneof![
        (s.clone(), any::<bool>())
            .prop_map(|(owner, ephemeral)| ZkOp::CreateChild { owner, ephemeral }),
        (0..8usize).prop_map(|nth| ZkOp::Delete { nth }),
        (0..8usize, s.clone()).prop_map(|(nth, session)| ZkOp::Exists { nth, session }),
        (0..40u32, s.clone()).prop_map(|(seq, session)| ZkOp::ExistsMissing { seq, session }),
        s.clone().prop_map(|session| ZkOp::GetChildren { session }),
        (s, any::<bool>()).prop_map(|(session, closed)| ZkOp::End { session, closed }),
    ]
}

fn sid(c: u16) -> SessionId {
    SessionId::first(c)
}

/// The reference: nodes by path with their owner, watches as sets.
#[derive(Default)]
struct RefZk {
    nodes: BTreeMap<ZPath, Option<SessionId>>,
    /// Sequential creates so far: the next suffix (deletes do not count, as
    /// on ZooKeeper 3.8).
    creates: u32,
    data_watches: BTreeSet<(ZPath, SessionId)>,
    child_watches: BTreeSet<SessionId>,
}

type Event = (SessionId, ZkEvent, ZPath);

impl RefZk {
    fn fire_data(&mut self, path: ZPath, kind: ZkEvent, out: &mut Vec<Event>) {
        let hit: Vec<_> = self
            .data_watches
            .iter()
            .filter(|(p, _)| *p == path)
            .copied()
            .collect();
        for w in hit {
            self.data_watches.remove(&w);
            out.push((w.1, kind, path));
        }
    }
    fn fire_children(&mut self, out: &mut Vec<Event>) {
        for s in std::mem::take(&mut self.child_watches) {
            out.push((s, ZkEvent::NodeChildrenChanged, ZPath::Lock));
        }
    }
    fn create(&mut self, owner: Option<SessionId>, guid: SessionId, out: &mut Vec<Event>) -> ZPath {
        let path = ZPath::Child(Child {
            guid: Some(guid),
            seq: self.creates,
        });
        self.creates += 1;
        self.nodes.insert(path, owner);
        self.fire_data(path, ZkEvent::NodeCreated, out);
        self.fire_children(out);
        path
    }
    fn delete(&mut self, path: ZPath, out: &mut Vec<Event>) -> bool {
        if self.nodes.remove(&path).is_none() {
            return false;
        }
        self.fire_data(path, ZkEvent::NodeDeleted, out);
        self.fire_children(out);
        true
    }
    /// On a close the session's own watches fire on the deletes of its
    /// ephemerals (its connection closes after them), then go; on an
    /// expiry they go first.
    fn end(&mut self, s: SessionId, closed: bool, out: &mut Vec<Event>) {
        if !closed {
            self.data_watches.retain(|(_, w)| *w != s);
            self.child_watches.remove(&s);
        }
        let owned: Vec<ZPath> = self
            .nodes
            .iter()
            .filter(|(_, o)| **o == Some(s))
            .map(|(p, _)| *p)
            .collect();
        for p in owned {
            self.delete(p, out);
        }
        self.data_watches.retain(|(_, w)| *w != s);
        self.child_watches.remove(&s);
    }
}

fn sorted(mut v: Vec<Event>) -> Vec<Event> {
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn zookeeper_face_matches_reference(ops in prop::collection::vec(zk_op(), 1..60)) {
        let mut tree = ZkTree::new(true);
        let mut reference = RefZk::default();
        let mut last_seq: Option<u32> = None;
        let mut created: BTreeSet<u32> = BTreeSet::new();
        for op in ops {
            let mut fired = Vec::new();
            let mut expected = Vec::new();
            match op {
                ZkOp::CreateChild { owner, ephemeral } => {
                    let s = sid(owner);
                    let owner = ephemeral.then_some(s);
                    let path = ZPath::Child(Child { guid: Some(s), seq: 0 });
                    let (got, _czxid) = tree.create(path, owner, true, 0, &mut fired).unwrap();
                    let want = reference.create(owner, s, &mut expected);
                    prop_assert_eq!(got, want);
                    let ZPath::Child(c) = got else { unreachable!() };
                    // Sequential names are unique and increasing per parent.
                    prop_assert!(last_seq.is_none_or(|l| c.seq > l));
                    prop_assert!(created.insert(c.seq));
                    last_seq = Some(c.seq);
                }
                ZkOp::Delete { nth } => {
                    let target = reference.nodes.keys().nth(nth).copied()
                        .unwrap_or(ZPath::Child(Child { guid: None, seq: 999 }));
                    let ok = tree.delete(target, &mut fired).is_ok();
                    prop_assert_eq!(ok, reference.delete(target, &mut expected));
                }
                ZkOp::Exists { nth, session } => {
                    if let Some(path) = reference.nodes.keys().nth(nth).copied() {
                        prop_assert!(tree.exists(path, Some(sid(session))).is_some());
                        reference.data_watches.insert((path, sid(session)));
                    }
                }
                ZkOp::ExistsMissing { seq, session } => {
                    let path = ZPath::Child(Child { guid: Some(sid(session)), seq: seq + 1000 });
                    prop_assert!(tree.exists(path, Some(sid(session))).is_none());
                    reference.data_watches.insert((path, sid(session)));
                }
                ZkOp::GetChildren { session } => {
                    let got = tree.get_children(ZPath::Lock, Some(sid(session))).unwrap().to_vec();
                    let mut want: Vec<Child> = reference.nodes.keys().filter_map(|p| match p {
                        ZPath::Child(c) => Some(*c),
                        ZPath::Lock | ZPath::Ready | ZPath::Taken(_) => None,
                    }).collect();
                    want.sort_by_key(|c| c.seq);
                    prop_assert_eq!(got, want);
                    reference.child_watches.insert(sid(session));
                }
                ZkOp::End { session, closed } => {
                    let s = sid(session);
                    let end = if closed { SessionEnd::Closed } else { SessionEnd::Expired };
                    tree.end_session(s, end, &mut fired);
                    reference.end(s, closed, &mut expected);
                    // Expiry deletes exactly the session's ephemerals.
                    prop_assert!(tree.nodes.iter().all(|(_, n)| n.ephemeral_owner != Some(s)));
                }
            }
            // The same notifications, each registered watch at most once.
            let fired_sorted = sorted(fired.clone());
            let mut dedup = fired_sorted.clone();
            dedup.dedup();
            prop_assert_eq!(&dedup, &fired_sorted, "a watch fired twice in one step");
            prop_assert_eq!(fired_sorted, sorted(expected));
            // Watches are one-shot: nothing fired is still registered.
            for (s, kind, path) in &fired {
                match kind {
                    ZkEvent::NodeChildrenChanged => prop_assert!(!tree.child_watches.contains(&(*path, *s))),
                    _ => prop_assert!(!tree.data_watches.contains(&(*path, *s))),
                }
            }
            let nodes: Vec<ZPath> = tree.nodes.iter().map(|(p, _)| *p).filter(|p| *p != ZPath::Lock).collect();
            let want: Vec<ZPath> = reference.nodes.keys().copied().collect();
            prop_assert_eq!(nodes, want);
        }
    }
}

#[derive(Clone, Debug)]
enum EtcdOp {
    Put {
        lease: u16,
    },
    Delete {
        nth: usize,
    },
    Expire {
        lease: u16,
    },
    /// `key`: none (the prefix), the nth live key, or a missing one.
    Range {
        key: Option<usize>,
        sort: SortByCreate,
        limit: u32,
        max_create_revision: u64,
    },
    /// etcd's Mutex: put our key if it does not exist, and read it back.
    Txn {
        lease: u16,
    },
}

fn etcd_op() -> impl Strategy<Value = EtcdOp> {
    prop_oneof![
        (0..SESSIONS).prop_map(|lease| EtcdOp::Put { lease }),
        (0..6usize).prop_map(|nth| EtcdOp::Delete { nth }),
        (0..SESSIONS).prop_map(|lease| EtcdOp::Expire { lease }),
        (
            prop::option::of(0..6usize),
            prop_oneof![
                Just(SortByCreate::None),
                Just(SortByCreate::Ascend),
                Just(SortByCreate::Descend)
            ],
            0..3u32,
            0..30u64
        )
            .prop_map(|(key, sort, limit, max_create_revision)| EtcdOp::Range {
                key,
                sort,
                limit,
                max_create_revision
            }),
        (0..SESSIONS).prop_map(|lease| EtcdOp::Txn { lease }),
    ]
}

/// A key no op writes (no session is numbered 9).
const NEVER_WRITTEN: Key = Key(SessionId {
    client: 9,
    incarnation: 0,
});

/// Lease `lease` as it is now: its latest incarnation (each expiry
/// starts the next).
fn live_lease(incarnation: &[u16], lease: u16) -> SessionId {
    SessionId {
        client: lease,
        incarnation: incarnation[lease as usize],
    }
}

/// `range` on the reference: the keys that match, in key order, sorted by
/// create revision as asked (a stable sort: ties stay in key order), then
/// the first `limit` (0: all).
fn reference_range(reference: &BTreeMap<Key, (u64, SessionId)>, r: &Range) -> Vec<Key> {
    let mut matching: Vec<(u64, Key)> = reference
        .iter()
        .filter(|(k, _)| r.key.is_none_or(|key| key == **k))
        .filter(|(_, (c, _))| r.max_create_revision == 0 || *c <= r.max_create_revision)
        .map(|(k, (c, _))| (*c, *k))
        .collect();
    match r.sort {
        SortByCreate::None => {}
        SortByCreate::Ascend => matching.sort_by_key(|(c, _)| *c),
        SortByCreate::Descend => matching.sort_by_key(|(c, _)| std::cmp::Reverse(*c)),
    }
    if r.limit > 0 {
        matching.truncate(r.limit as usize);
    }
    matching.into_iter().map(|(_, k)| k).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn etcd_face_matches_reference(ops in prop::collection::vec(etcd_op(), 1..60)) {
        let mut kv = EtcdKv::default();
        // key -> (create_revision, lease)
        let mut reference: BTreeMap<Key, (u64, SessionId)> = BTreeMap::new();
        let mut incarnation = [0u16; SESSIONS as usize];
        for op in ops {
            let before = kv.revision;
            let mut fired = Vec::new();
            match op {
                EtcdOp::Put { lease } => {
                    let s = live_lease(&incarnation, lease);
                    let key = Key(s);
                    let rev = kv.put(key, s, &mut fired);
                    // Revisions strictly increase with every write.
                    prop_assert!(rev > before);
                    reference.entry(key).or_insert((rev, s));
                    prop_assert_eq!(kv.get(key).unwrap().create_revision, reference[&key].0);
                }
                EtcdOp::Delete { nth } => {
                    match reference.keys().nth(nth).copied() {
                        Some(key) => {
                            let (rev, n) = kv.delete(key, &mut fired);
                            prop_assert!(rev > before);
                            prop_assert_eq!(n, 1);
                            reference.remove(&key);
                        }
                        None => {
                            let (rev, n) = kv.delete(NEVER_WRITTEN, &mut fired);
                            prop_assert_eq!((rev, n), (before, 0));
                        }
                    }
                }
                EtcdOp::Expire { lease } => {
                    let s = live_lease(&incarnation, lease);
                    let had = reference.values().any(|(_, l)| *l == s);
                    kv.expire(s, &mut fired);
                    reference.retain(|_, (_, l)| *l != s);
                    prop_assert_eq!(kv.revision > before, had);
                    incarnation[lease as usize] += 1;
                }
                EtcdOp::Range { key, sort, limit, max_create_revision } => {
                    // The nth live key, or (past the last) one never written.
                    let key = key.map(|nth| {
                        reference.keys().nth(nth).copied()
                            .unwrap_or(NEVER_WRITTEN)
                    });
                    let r = Range { key, sort, limit, max_create_revision };
                    let got: Vec<Key> = kv.range(&r).iter().map(|kv| kv.key).collect();
                    prop_assert_eq!(got, reference_range(&reference, &r));
                }
                EtcdOp::Txn { lease } => {
                    let s = live_lease(&incarnation, lease);
                    let key = Key(s);
                    let read = Range { key: Some(key), sort: SortByCreate::None, limit: 0, max_create_revision: 0 };
                    let txn = Txn {
                        compare_create_revision: (key, 0),
                        success: vec![TxnOp::Put { key, lease: s }, TxnOp::Range(read.clone())],
                        failure: vec![TxnOp::Range(read)],
                    };
                    let (succeeded, results) = kv.txn(&txn, &mut fired);
                    prop_assert_eq!(succeeded, !reference.contains_key(&key));
                    if succeeded {
                        prop_assert_eq!(kv.revision, before + 1);
                        reference.insert(key, (kv.revision, s));
                    } else {
                        prop_assert_eq!(kv.revision, before);
                    }
                    let created = reference[&key].0;
                    let put = OpResult::Put { revision: kv.revision };
                    let listed = OpResult::Range { kvs: vec![*kv.get(key).unwrap()] };
                    prop_assert_eq!(kv.get(key).unwrap().create_revision, created);
                    let want = if succeeded { vec![put, listed] } else { vec![listed] };
                    prop_assert_eq!(results, want);
                }
            }
            prop_assert!(fired.iter().all(|(_, kind, _, _)| *kind == EtcdEvent::Put || *kind == EtcdEvent::Delete));
            let keys: Vec<Key> = kv.kvs.iter().map(|kv| kv.key).collect();
            let want: Vec<Key> = reference.keys().copied().collect();
            prop_assert_eq!(keys, want);
        }
    }
}

#[test]
fn a_watch_from_a_past_revision_sees_an_earlier_delete_once() {
    let mut kv = EtcdKv::default();
    let mut fired = Vec::new();
    let a = Key(SessionId::first(0));
    kv.put(a, SessionId::first(0), &mut fired);
    let seen_at = kv.revision;
    kv.delete(a, &mut fired);
    assert!(fired.is_empty());
    kv.watch(1, a, seen_at, &mut fired);
    assert_eq!(fired, vec![(1, EtcdEvent::Delete, a, seen_at + 1)]);
    assert!(kv.watchers.is_empty(), "the key watch ended at its delete");
}
