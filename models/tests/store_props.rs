//! Property tests of the store against a plain reference model: a
//! `BTreeMap` of nodes and `BTreeSet`s of watches, written for obviousness,
//! not speed.

use models::ids::{Child, Data, Key, SessionId, ZPath};
use models::msg::{
    Compare, EtcdEvent, Keys, Kv, MultiOp, MultiResult, OpResult, Range, RangeOnly, Reply, Request,
    Sort, SortOrder, SortTarget, Txn, TxnOp, WatchEvent, ZkError, ZkEvent,
};
use models::recipe::Setup;
use models::recipes::names;
use models::store::etcd::EtcdKv;
use models::store::zookeeper::{SessionEnd, ZkTree};
use models::store::StoreState;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const SESSIONS: u16 = 3;

#[derive(Clone, Debug)]
enum ZkOp {
    CreateChild {
        owner: u16,
        ephemeral: bool,
    },
    /// Delete the nth node, at any version or at its own (`Some(true)`)
    /// or another (`Some(false)`).
    Delete {
        nth: usize,
        version: Option<bool>,
    },
    /// Set the nth node's data likewise.
    SetData {
        nth: usize,
        version: Option<bool>,
        data: u64,
    },
    /// Check the nth node likewise (a multi's op).
    Check {
        nth: usize,
        version: Option<bool>,
    },
    Exists {
        nth: usize,
        session: u16,
    },
    ExistsMissing {
        seq: u32,
        session: u16,
    },
    GetChildren {
        session: u16,
    },
    End {
        session: u16,
        closed: bool,
    },
}

fn zk_op() -> impl Strategy<Value = ZkOp> {
    let s = 0..SESSIONS;
    prop_oneof![
        4 => multi_op(),
        1 => (0..8usize, s.clone()).prop_map(|(nth, session)| ZkOp::Exists { nth, session }),
        1 => (0..40u32, s.clone()).prop_map(|(seq, session)| ZkOp::ExistsMissing { seq, session }),
        1 => s.clone().prop_map(|session| ZkOp::GetChildren { session }),
        1 => (s, any::<bool>()).prop_map(|(session, closed)| ZkOp::End { session, closed }),
    ]
}

/// The ops a multi can have too: create, delete, set_data, check.
fn multi_op() -> impl Strategy<Value = ZkOp> {
    let version = prop::option::of(any::<bool>());
    prop_oneof![
        (0..SESSIONS, any::<bool>())
            .prop_map(|(owner, ephemeral)| ZkOp::CreateChild { owner, ephemeral }),
        (0..8usize, version.clone()).prop_map(|(nth, version)| ZkOp::Delete { nth, version }),
        (0..8usize, version.clone(), 0..4u64).prop_map(|(nth, version, data)| ZkOp::SetData {
            nth,
            version,
            data
        }),
        (0..8usize, version).prop_map(|(nth, version)| ZkOp::Check { nth, version }),
    ]
}

fn sid(c: u16) -> SessionId {
    SessionId::first(c)
}

fn member(seq: u32, guid: Option<SessionId>) -> ZPath {
    ZPath::Node {
        dir: names::LOCK_DIR,
        child: Child {
            seq: Some(seq),
            prefix: names::MEMBER,
            guid,
        },
    }
}

/// A node of the reference: its owner, data and data version.
#[derive(Clone, Copy, Debug, PartialEq)]
struct RefNode {
    owner: Option<SessionId>,
    data: Data,
    version: u32,
}

/// The reference: nodes by path, watches as sets.
#[derive(Clone, Default)]
struct RefZk {
    nodes: BTreeMap<ZPath, RefNode>,
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
            out.push((s, ZkEvent::NodeChildrenChanged, names::LOCK));
        }
    }
    fn create(&mut self, owner: Option<SessionId>, guid: SessionId, out: &mut Vec<Event>) -> ZPath {
        let path = member(self.creates, Some(guid));
        self.creates += 1;
        self.nodes.insert(
            path,
            RefNode {
                owner,
                data: Data::Empty,
                version: 0,
            },
        );
        self.fire_data(path, ZkEvent::NodeCreated, out);
        self.fire_children(out);
        path
    }
    fn check(&self, path: ZPath, version: Option<u32>) -> Result<(), ZkError> {
        match self.nodes.get(&path) {
            None => Err(ZkError::NoNode),
            Some(n) if version.is_some_and(|v| v != n.version) => Err(ZkError::BadVersion),
            Some(_) => Ok(()),
        }
    }
    fn delete(
        &mut self,
        path: ZPath,
        version: Option<u32>,
        out: &mut Vec<Event>,
    ) -> Result<(), ZkError> {
        self.check(path, version)?;
        self.nodes.remove(&path);
        self.fire_data(path, ZkEvent::NodeDeleted, out);
        self.fire_children(out);
        Ok(())
    }
    fn set_data(
        &mut self,
        path: ZPath,
        data: Data,
        version: Option<u32>,
        out: &mut Vec<Event>,
    ) -> Result<u32, ZkError> {
        self.check(path, version)?;
        let node = self.nodes.get_mut(&path).expect("checked");
        node.data = data;
        node.version += 1;
        let v = node.version;
        self.fire_data(path, ZkEvent::NodeDataChanged, out);
        Ok(v)
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
            .filter(|(_, n)| n.owner == Some(s))
            .map(|(p, _)| *p)
            .collect();
        for p in owned {
            let _ = self.delete(p, None, out);
        }
        self.data_watches.retain(|(_, w)| *w != s);
        self.child_watches.remove(&s);
    }
    /// The nth node and the version an op asks for: its own, another, or
    /// none; a missing node past the last.
    fn target(&self, nth: usize, version: Option<bool>) -> (ZPath, Option<u32>) {
        match self.nodes.iter().nth(nth) {
            Some((p, n)) => (
                *p,
                version.map(|own| if own { n.version } else { n.version + 1 }),
            ),
            None => (member(999, None), version.map(|_| 0)),
        }
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
        let mut tree = ZkTree::new(&[names::LOCK]);
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
                    let path = names::new_member(Some(s));
                    let (got, _czxid) = tree.create(path, owner, true, Data::Empty, &mut fired).unwrap();
                    let want = reference.create(owner, s, &mut expected);
                    prop_assert_eq!(got, want);
                    let seq = got.node().and_then(|c| c.seq).expect("a sequential create numbers its node");
                    // Sequential names are unique and increasing per parent.
                    prop_assert!(last_seq.is_none_or(|l| seq > l));
                    prop_assert!(created.insert(seq));
                    last_seq = Some(seq);
                }
                ZkOp::Delete { nth, version } => {
                    let (target, version) = reference.target(nth, version);
                    let got = tree.delete(target, version, &mut fired);
                    prop_assert_eq!(got, reference.delete(target, version, &mut expected));
                }
                ZkOp::SetData { nth, version, data } => {
                    let (target, version) = reference.target(nth, version);
                    let data = Data::Number(data);
                    let got = tree.set_data(target, data, version, &mut fired).map(|stat| {
                        assert_eq!(stat.data, data);
                        stat.version
                    });
                    prop_assert_eq!(got, reference.set_data(target, data, version, &mut expected));
                }
                ZkOp::Check { nth, version } => {
                    let (target, version) = reference.target(nth, version);
                    prop_assert_eq!(tree.check(target, version).map(|_| ()), reference.check(target, version));
                }
                ZkOp::Exists { nth, session } => {
                    if let Some((path, node)) = reference.nodes.iter().nth(nth) {
                        let stat = tree.exists(*path, Some(sid(session)));
                        prop_assert_eq!(stat.map(|s| (s.data, s.version)), Some((node.data, node.version)));
                        reference.data_watches.insert((*path, sid(session)));
                    }
                }
                ZkOp::ExistsMissing { seq, session } => {
                    let path = member(seq + 1000, Some(sid(session)));
                    prop_assert!(tree.exists(path, Some(sid(session))).is_none());
                    reference.data_watches.insert((path, sid(session)));
                }
                ZkOp::GetChildren { session } => {
                    let got = tree.get_children(names::LOCK, Some(sid(session))).unwrap().to_vec();
                    let mut want: Vec<Child> = reference.nodes.keys().filter_map(|p| p.child_of(names::LOCK_DIR)).collect();
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
            let nodes: Vec<ZPath> = tree.nodes.iter().map(|(p, _)| *p).filter(|p| *p != names::LOCK).collect();
            let want: Vec<ZPath> = reference.nodes.keys().copied().collect();
            prop_assert_eq!(nodes, want);
            // The directory numbers its children by its creates.
            let dir = tree.node(names::LOCK).expect("the directory stays");
            prop_assert_eq!(dir.creates, reference.creates);
        }
    }
}

#[derive(Clone, Debug)]
enum MultiStep {
    /// A multi of the ops a multi can have (a create's owner is the
    /// multi's session).
    Multi { session: u16, ops: Vec<ZkOp> },
    /// Any other step, through the store's request path (a write as a
    /// single request).
    Single(ZkOp),
}

fn multi_step() -> impl Strategy<Value = MultiStep> {
    prop_oneof![
        (0..SESSIONS, prop::collection::vec(multi_op(), 0..5))
            .prop_map(|(session, ops)| MultiStep::Multi { session, ops }),
        zk_op().prop_map(MultiStep::Single),
    ]
}

/// A multi's result as the reference tells it: the created path, the new
/// data version and data; zxids are checked apart.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RefResult {
    Checked,
    Created(ZPath),
    Deleted,
    Set(u32, Data),
    RolledBack,
    Error(ZkError),
    RuntimeInconsistency,
}

fn ref_result(r: MultiResult) -> RefResult {
    match r {
        MultiResult::Checked => RefResult::Checked,
        MultiResult::Created { path, .. } => RefResult::Created(path),
        MultiResult::Deleted => RefResult::Deleted,
        MultiResult::Set(stat) => RefResult::Set(stat.version, stat.data),
        MultiResult::RolledBack => RefResult::RolledBack,
        MultiResult::Error(e) => RefResult::Error(e),
        MultiResult::RuntimeInconsistency => RefResult::RuntimeInconsistency,
    }
}

impl RefZk {
    /// A multi of session `s`: each op's target chosen on the reference as
    /// the ops before it left it, applied in order to a copy; kept (and
    /// its events told) only if every op succeeded. Returns the concrete
    /// ops sent and the results.
    fn multi(
        &mut self,
        s: SessionId,
        ops: &[ZkOp],
        out: &mut Vec<Event>,
    ) -> (Vec<MultiOp>, Vec<RefResult>) {
        let mut trial = self.clone();
        let mut events = Vec::new();
        let mut sent = Vec::new();
        let mut results = Vec::new();
        let mut failed = None;
        for op in ops {
            let (op, r) = match *op {
                ZkOp::Check { nth, version } => {
                    let (path, version) = trial.target(nth, version);
                    (
                        MultiOp::Check { path, version },
                        trial.check(path, version).map(|()| RefResult::Checked),
                    )
                }
                ZkOp::CreateChild { ephemeral, .. } => {
                    let path = names::new_member(Some(s));
                    let created = trial.create(ephemeral.then_some(s), s, &mut events);
                    (
                        MultiOp::Create {
                            path,
                            ephemeral,
                            sequential: true,
                            data: Data::Empty,
                        },
                        Ok(RefResult::Created(created)),
                    )
                }
                ZkOp::Delete { nth, version } => {
                    let (path, version) = trial.target(nth, version);
                    (
                        MultiOp::Delete { path, version },
                        trial
                            .delete(path, version, &mut events)
                            .map(|()| RefResult::Deleted),
                    )
                }
                ZkOp::SetData { nth, version, data } => {
                    let (path, version) = trial.target(nth, version);
                    let data = Data::Number(data);
                    (
                        MultiOp::SetData {
                            path,
                            data,
                            version,
                        },
                        trial
                            .set_data(path, data, version, &mut events)
                            .map(|v| RefResult::Set(v, data)),
                    )
                }
                ZkOp::Exists { .. }
                | ZkOp::ExistsMissing { .. }
                | ZkOp::GetChildren { .. }
                | ZkOp::End { .. } => unreachable!("not a multi's op: {op:?}"),
            };
            sent.push(op);
            match (failed, r) {
                (None, Ok(r)) => results.push(r),
                (None, Err(e)) => {
                    failed = Some(results.len());
                    results = vec![RefResult::RolledBack; results.len()];
                    results.push(RefResult::Error(e));
                }
                // Ops after the failing one are not tried.
                (Some(_), _) => results.push(RefResult::RuntimeInconsistency),
            }
        }
        if failed.is_none() {
            *self = trial;
            out.extend(events);
        }
        (sent, results)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `multi` through the store: all ops or none, one zxid, each op's
    /// result or ZooKeeper's error results, watches fired only by a multi
    /// that commits, beside single creates, watches and session ends.
    #[test]
    fn zookeeper_multi_matches_reference(steps in prop::collection::vec(multi_step(), 1..40)) {
        let mut store = StoreState::new(&Setup::lock_dir());
        let mut reference = RefZk::default();
        let mut incarnation = [0u16; SESSIONS as usize];
        for c in 0..SESSIONS {
            store.open_session(sid(c));
        }
        let live = |incarnation: &[u16], c: u16| SessionId { client: c, incarnation: incarnation[c as usize], grant: 0 };
        for step in steps {
            let zxid = store.zk.zxid;
            let mut expected = Vec::new();
            let fired: Vec<Event> = match step {
                MultiStep::Multi { session, ops } => {
                    let s = live(&incarnation, session);
                    let (sent, want) = reference.multi(s, &ops, &mut expected);
                    let (reply, fired) = store.apply(s, &Request::Multi(sent.clone()));
                    let Reply::Multi(got) = reply else {
                        panic!("a multi answers with its results: {reply}");
                    };
                    let ok = want.iter().all(|r| !matches!(r, RefResult::RolledBack | RefResult::Error(_) | RefResult::RuntimeInconsistency));
                    prop_assert_eq!(got.iter().copied().map(ref_result).collect::<Vec<_>>(), want);
                    // One transaction: every create's czxid is the multi's
                    // zxid; a failed or empty multi takes none.
                    let took = ok && !sent.is_empty();
                    prop_assert_eq!(store.zk.zxid, zxid + u64::from(took));
                    for r in &got {
                        match r {
                            MultiResult::Created { czxid, .. } => prop_assert_eq!(*czxid, zxid + 1),
                            MultiResult::Set(stat) => prop_assert_eq!(stat.mzxid, zxid + 1),
                            _ => {}
                        }
                    }
                    prop_assert_eq!(got.len(), sent.len());
                    fired_zk(fired)
                }
                MultiStep::Single(ZkOp::CreateChild { owner, ephemeral }) => {
                    let s = live(&incarnation, owner);
                    let want = reference.create(ephemeral.then_some(s), s, &mut expected);
                    let req = Request::Create { path: names::new_member(Some(s)), ephemeral, sequential: true, data: Data::Empty };
                    let (reply, fired) = store.apply(s, &req);
                    prop_assert_eq!(reply, Reply::Created { path: want, czxid: zxid + 1 });
                    fired_zk(fired)
                }
                MultiStep::Single(ZkOp::Delete { nth, version }) => {
                    let (path, version) = reference.target(nth, version);
                    let want = reference.delete(path, version, &mut expected);
                    let (reply, fired) = store.apply(live(&incarnation, 0), &Request::Delete { path, version });
                    prop_assert_eq!(reply, want.map_or_else(Reply::Error, |()| Reply::Deleted));
                    fired_zk(fired)
                }
                MultiStep::Single(ZkOp::SetData { nth, version, data }) => {
                    let (path, version) = reference.target(nth, version);
                    let data = Data::Number(data);
                    let want = reference.set_data(path, data, version, &mut expected);
                    let (reply, fired) = store.apply(live(&incarnation, 0), &Request::SetData { path, data, version });
                    let got = match reply {
                        Reply::Stat(Some(stat)) => Ok(stat.version),
                        Reply::Error(e) => Err(e),
                        other => panic!("set_data answers a stat or an error: {other}"),
                    };
                    prop_assert_eq!(got, want);
                    fired_zk(fired)
                }
                // No request checks alone: a multi of one.
                MultiStep::Single(ZkOp::Check { nth, version }) => {
                    let (path, version) = reference.target(nth, version);
                    let want = reference.check(path, version).map_or_else(MultiResult::Error, |()| MultiResult::Checked);
                    let (reply, fired) = store.apply(live(&incarnation, 0), &Request::Multi(vec![MultiOp::Check { path, version }]));
                    prop_assert_eq!(reply, Reply::Multi(vec![want]));
                    fired_zk(fired)
                }
                MultiStep::Single(ZkOp::Exists { nth, session }) => {
                    let s = live(&incarnation, session);
                    let (path, _) = reference.target(nth, None);
                    let (reply, fired) = store.apply(s, &Request::Exists { path, watch: true });
                    prop_assert_eq!(matches!(reply, Reply::Stat(Some(_))), reference.nodes.contains_key(&path));
                    reference.data_watches.insert((path, s));
                    fired_zk(fired)
                }
                MultiStep::Single(ZkOp::ExistsMissing { seq, session }) => {
                    let s = live(&incarnation, session);
                    let path = member(seq + 1000, Some(s));
                    let (reply, fired) = store.apply(s, &Request::Exists { path, watch: true });
                    prop_assert_eq!(reply, Reply::Stat(None));
                    reference.data_watches.insert((path, s));
                    fired_zk(fired)
                }
                MultiStep::Single(ZkOp::GetChildren { session }) => {
                    let s = live(&incarnation, session);
                    let (reply, fired) = store.apply(s, &Request::GetChildren { path: names::LOCK, watch: true });
                    prop_assert!(matches!(reply, Reply::Children(_)));
                    reference.child_watches.insert(s);
                    fired_zk(fired)
                }
                MultiStep::Single(ZkOp::End { session, closed }) => {
                    let s = live(&incarnation, session);
                    let end = if closed { SessionEnd::Closed } else { SessionEnd::Expired };
                    let fired = store.end_session(s, end);
                    reference.end(s, closed, &mut expected);
                    incarnation[session as usize] += 1;
                    store.open_session(live(&incarnation, session));
                    fired_zk(fired)
                }
            };
            prop_assert_eq!(sorted(fired), sorted(expected));
            let nodes: Vec<ZPath> = store.zk.nodes.iter().map(|(p, _)| *p).filter(|p| *p != names::LOCK).collect();
            let want: Vec<ZPath> = reference.nodes.keys().copied().collect();
            prop_assert_eq!(nodes, want);
            for (path, node) in &reference.nodes {
                let got = store.zk.node(*path).expect("listed");
                prop_assert_eq!((got.ephemeral_owner, got.data, got.version), (node.owner, node.data, node.version));
            }
            let dir = store.zk.node(names::LOCK).expect("the directory stays");
            prop_assert_eq!(dir.creates, reference.creates);
            let watches: BTreeSet<(ZPath, SessionId)> = store.zk.data_watches.iter().copied().collect();
            prop_assert_eq!(&watches, &reference.data_watches);
        }
    }
}

/// A store's notifications as the reference tells them.
fn fired_zk(fired: Vec<(SessionId, WatchEvent)>) -> Vec<Event> {
    fired
        .into_iter()
        .map(|(s, e)| match e {
            WatchEvent::Zk { kind, path } => (s, kind, path),
            WatchEvent::Etcd { .. } | WatchEvent::Consul { .. } | WatchEvent::ConsulList { .. } => {
                panic!("a ZooKeeper write fires no etcd or Consul event")
            }
        })
        .collect()
}

/// A multi's watches, sequence numbers and ephemerals as each op's own
/// would be: a create and a delete of one node in one multi fire the
/// directory's child watch once (it is one-shot), the node's exists watch
/// once (NodeCreated); a sequential create numbers on from the multi's
/// earlier creates; an ephemeral's owner is the multi's session; a failed
/// multi changes nothing, fires nothing and answers ZooKeeper's error
/// results.
/// A watch from revision 0 starts from now, as etcd's does: it replays no
/// past put or delete (it used to replay the whole history), and hears
/// what comes next.
#[test]
fn an_etcd_watch_from_revision_zero_replays_nothing() {
    let mut store = StoreState::default();
    let (a, w) = (sid(0), sid(1));
    store.apply(a, &Request::LeaseGrant);
    store.apply(w, &Request::LeaseGrant);
    let key = Key::fixed(names::KEYS);
    let put = Request::Txn(Box::new(Txn {
        compares: Vec::new(),
        success: vec![TxnOp::Put {
            key,
            lease: None,
            value: Data::Empty,
        }],
        failure: Vec::new(),
    }));
    store.apply(a, &put);
    store.apply(a, &Request::DeleteKey { key });
    for watch in [
        Request::Watch {
            key,
            start_revision: 0,
        },
        Request::WatchRange {
            keys: Keys::Prefix(names::KEYS),
            start_revision: 0,
        },
    ] {
        let (_, fired) = store.apply(w, &watch);
        assert!(fired.is_empty(), "{watch}: replayed {fired:?}");
    }
    let (_, fired) = store.apply(a, &put);
    // Both watches are registered and hear the next put.
    assert_eq!(fired.len(), 2, "{fired:?}");
}

/// A multi that deletes the line's node and creates it again in one step
/// moves the ghost first-in-line mark to the new owner (it used to stay
/// with the old one: the path was still there).
#[test]
fn a_multi_that_remakes_the_first_node_moves_the_mark() {
    let mut store = StoreState::new(&Setup::bare());
    let (a, b) = (sid(0), sid(1));
    store.open_session(a);
    store.open_session(b);
    let lock = names::LOCK;
    let create = |ephemeral| MultiOp::Create {
        path: lock,
        ephemeral,
        sequential: false,
        data: Data::Empty,
    };
    store.apply(a, &Request::Multi(vec![create(true)]));
    assert!(store.owns_first(a) && !store.owns_first(b));
    let remake = vec![
        MultiOp::Delete {
            path: lock,
            version: None,
        },
        create(true),
    ];
    store.apply(b, &Request::Multi(remake));
    assert_eq!(store.zk.node(lock).unwrap().ephemeral_owner, Some(b));
    assert!(store.owns_first(b), "the new owner is first");
    assert!(!store.owns_first(a), "the old owner is not");
}

#[test]
fn a_multi_is_one_transaction() {
    let mut store = StoreState::new(&Setup::lock_dir());
    let (a, b) = (sid(0), sid(1));
    store.open_session(a);
    store.open_session(b);
    let first = member(0, Some(a));
    let second = member(1, Some(a));
    store.apply(
        b,
        &Request::Exists {
            path: first,
            watch: true,
        },
    );
    store.apply(
        b,
        &Request::GetChildren {
            path: names::LOCK,
            watch: true,
        },
    );
    let zxid = store.zk.zxid;
    let create = MultiOp::Create {
        path: names::new_member(Some(a)),
        ephemeral: true,
        sequential: true,
        data: Data::Empty,
    };
    let ops = vec![
        create,
        create,
        MultiOp::Delete {
            path: first,
            version: Some(0),
        },
        MultiOp::Check {
            path: second,
            version: None,
        },
    ];
    let (reply, fired) = store.apply(a, &Request::Multi(ops));
    assert_eq!(
        reply,
        Reply::Multi(vec![
            MultiResult::Created {
                path: first,
                czxid: zxid + 1
            },
            MultiResult::Created {
                path: second,
                czxid: zxid + 1
            },
            MultiResult::Deleted,
            MultiResult::Checked,
        ])
    );
    assert_eq!(store.zk.zxid, zxid + 1);
    assert_eq!(
        fired,
        vec![
            (
                b,
                WatchEvent::Zk {
                    kind: ZkEvent::NodeCreated,
                    path: first
                }
            ),
            (
                b,
                WatchEvent::Zk {
                    kind: ZkEvent::NodeChildrenChanged,
                    path: names::LOCK
                }
            ),
        ]
    );
    assert_eq!(
        store.zk.node(second).and_then(|n| n.ephemeral_owner),
        Some(a)
    );
    // A failed multi: the create before the failing op is rolled back,
    // the op after it not run.
    let before = store.clone();
    store.apply(
        b,
        &Request::GetChildren {
            path: names::LOCK,
            watch: true,
        },
    );
    let watched = store.clone();
    let ops = vec![
        create,
        MultiOp::SetData {
            path: second,
            data: Data::Number(1),
            version: Some(3),
        },
        MultiOp::Delete {
            path: second,
            version: None,
        },
    ];
    let (reply, fired) = store.apply(a, &Request::Multi(ops.clone()));
    assert_eq!(
        reply,
        Reply::Multi(vec![
            MultiResult::RolledBack,
            MultiResult::Error(ZkError::BadVersion),
            MultiResult::RuntimeInconsistency,
        ])
    );
    assert!(fired.is_empty());
    assert_eq!(store, watched, "nothing changed, the child watch kept");
    assert_ne!(store, before);
    assert_eq!(
        Request::Multi(ops).to_string(),
        "multi(create(/lock/_c_00000000-lock-, ephemeral-sequential); \
         set_data(/lock/_c_00000000-lock-0000000001, 1, version 3); \
         delete(/lock/_c_00000000-lock-0000000001))"
    );
    assert_eq!(
        reply.to_string(),
        "multi failed [rolled back, error BadVersion, not run (RuntimeInconsistency)]"
    );
    // A session that has ended sends no multi.
    store.end_session(a, SessionEnd::Closed);
    assert_eq!(
        store.apply(a, &Request::Multi(vec![create])).0,
        Reply::Error(ZkError::SessionExpired)
    );
}

#[derive(Clone, Debug)]
enum EtcdOp {
    /// Put lease `lease`'s own key (on the lease).
    Put {
        lease: u16,
        value: u64,
    },
    /// Put the nth of [`FIXED`] (on no lease).
    PutFixed {
        nth: usize,
        value: u64,
    },
    Delete {
        nth: usize,
    },
    Expire {
        lease: u16,
    },
    Range {
        keys: RangeKeys,
        sort: Sort,
        limit: u32,
        max_create_revision: u64,
        only: RangeOnly,
    },
    /// etcd's Mutex: put our key if it does not exist, and read it back.
    Txn {
        lease: u16,
    },
    /// A range watch of `client` from `back` revisions before the next
    /// but one.
    WatchRange {
        client: u16,
        keys: RangeKeys,
        back: u64,
    },
}

/// The keys a range op reads: the nth live key (or, past the last, one
/// never written), a prefix, or `[from, end)`, the texts from [`BOUNDS`].
#[derive(Clone, Debug)]
enum RangeKeys {
    One(usize),
    Prefix(usize),
    Between(usize, Option<usize>),
}

/// Keys of text only.
const FIXED: [&str; 5] = ["/a", "/lock", "/lock/6", "/lock/zz", "/m/x"];

/// Prefixes and bounds: around the keys, in the lease ids' fixed `694d`,
/// and among their client digits (where a bound must not name a client).
const BOUNDS: [&str; 13] = [
    "",
    "/a",
    "/lock",
    "/lock/",
    "/lock/6",
    "/lock/694d",
    "/lock/694d0",
    "/lock/694d0001",
    "/lock/694e",
    "/lock/7",
    "/lock/zz",
    "/lock0",
    "/m",
];

fn sort() -> impl Strategy<Value = Sort> {
    let target = prop_oneof![
        Just(SortTarget::Key),
        Just(SortTarget::Version),
        Just(SortTarget::Create),
        Just(SortTarget::Mod),
        Just(SortTarget::Value),
    ];
    let order = prop_oneof![Just(SortOrder::Ascend), Just(SortOrder::Descend)];
    prop_oneof![
        Just(Sort::None),
        Just(Sort::Ascend),
        Just(Sort::Descend),
        (target, order).prop_map(|(t, o)| Sort::by(t, o)),
    ]
}

fn etcd_op() -> impl Strategy<Value = EtcdOp> {
    let keys = range_keys();
    let only = prop_oneof![
        3 => Just(RangeOnly::Kvs),
        1 => Just(RangeOnly::Keys),
        1 => Just(RangeOnly::Count),
    ];
    prop_oneof![
        (0..SESSIONS, 0..3u64).prop_map(|(lease, value)| EtcdOp::Put { lease, value }),
        (0..FIXED.len(), 0..3u64).prop_map(|(nth, value)| EtcdOp::PutFixed { nth, value }),
        (0..6usize).prop_map(|nth| EtcdOp::Delete { nth }),
        (0..SESSIONS).prop_map(|lease| EtcdOp::Expire { lease }),
        (keys, sort(), 0..3u32, 0..30u64, only).prop_map(
            |(keys, sort, limit, max_create_revision, only)| EtcdOp::Range {
                keys,
                sort,
                limit,
                max_create_revision,
                only
            }
        ),
        (0..SESSIONS).prop_map(|lease| EtcdOp::Txn { lease }),
        (0..SESSIONS, range_keys(), 0..8u64).prop_map(|(client, keys, back)| EtcdOp::WatchRange {
            client,
            keys,
            back
        }),
    ]
}

fn range_keys() -> impl Strategy<Value = RangeKeys> {
    let bound = 0..BOUNDS.len();
    prop_oneof![
        (0..6usize).prop_map(RangeKeys::One),
        bound.clone().prop_map(RangeKeys::Prefix),
        (bound.clone(), prop::option::of(bound)).prop_map(|(f, e)| RangeKeys::Between(f, e)),
    ]
}

/// A key no op writes (no session is numbered 9).
const NEVER_WRITTEN: Key = Key::of_lease(
    names::KEYS,
    SessionId {
        client: 9,
        incarnation: 0,
        grant: 0,
    },
);

/// Lease `lease` as it is now: its latest incarnation (each expiry
/// starts the next).
fn live_lease(incarnation: &[u16], lease: u16) -> SessionId {
    SessionId {
        client: lease,
        incarnation: incarnation[lease as usize],
        grant: 0,
    }
}

fn name(text: &str) -> models::ids::Name {
    models::ids::Name::intern(text).expect("a name")
}

/// The reference's key-values, in key order.
type RefKvs = BTreeMap<Key, Kv>;

/// How a key's text orders against a bound's, as the reference reads the
/// rule: by the texts, unless the order differs between the lowest and
/// the highest client a lease of this key could be (the bound falls
/// among the client digits), and then the key goes first.
fn reference_cmp(key: Key, bound: &str) -> std::cmp::Ordering {
    let text = |client| {
        let lease = key.lease.map(|l| SessionId { client, ..l });
        Key { lease, ..key }.to_string()
    };
    let (lowest, highest) = (
        text(0).as_str().cmp(bound),
        text(u16::MAX).as_str().cmp(bound),
    );
    if lowest == highest {
        lowest
    } else {
        std::cmp::Ordering::Less
    }
}

fn reference_takes(keys: Keys, key: Key) -> bool {
    let text = |client| {
        let lease = key.lease.map(|l| SessionId { client, ..l });
        Key { lease, ..key }.to_string()
    };
    match keys {
        Keys::One(k) => k == key,
        Keys::Prefix(p) => [0, u16::MAX]
            .iter()
            .all(|c| text(*c).starts_with(p.as_str())),
        // etcd's reading of a range_end: "" is the one key, "\0" no end.
        Keys::Between { from, end } => match end.map(|e| e.as_str()) {
            Some("") => reference_cmp(key, from.as_str()).is_eq(),
            Some("\0") | None => reference_cmp(key, from.as_str()).is_ge(),
            Some(e) => reference_cmp(key, from.as_str()).is_ge() && reference_cmp(key, e).is_lt(),
        },
    }
}

/// `range` on the reference: the keys that match, in key order, sorted as
/// asked (a stable sort: ties stay in key order; descending sorts by the
/// reversed comparison), then the first `limit` (0: all), values dropped
/// for keys only; or, for a count, how many match (before the bound on
/// create revisions and the limit, as etcd counts).
fn reference_range(reference: &RefKvs, r: &Range) -> OpResult {
    let mut matching: Vec<Kv> = reference
        .values()
        .filter(|kv| reference_takes(r.keys, kv.key))
        .copied()
        .collect();
    if r.only == RangeOnly::Count {
        return OpResult::Count {
            count: matching.len() as u64,
        };
    }
    matching.retain(|kv| r.max_create_revision == 0 || kv.create_revision <= r.max_create_revision);
    let (target, order) = match r.sort {
        Sort::None => (None, SortOrder::Ascend),
        Sort::Ascend => (Some(SortTarget::Create), SortOrder::Ascend),
        Sort::Descend => (Some(SortTarget::Create), SortOrder::Descend),
        Sort::By(t, o) => (Some(t), o),
    };
    if let Some(target) = target {
        matching.sort_by(|a, b| {
            let ord = match target {
                SortTarget::Key => a.key.to_string().cmp(&b.key.to_string()),
                SortTarget::Version => a.version.cmp(&b.version),
                SortTarget::Create => a.create_revision.cmp(&b.create_revision),
                SortTarget::Mod => a.mod_revision.cmp(&b.mod_revision),
                SortTarget::Value => a.value.to_string().cmp(&b.value.to_string()),
            };
            if order == SortOrder::Descend {
                ord.reverse()
            } else {
                ord
            }
        });
    }
    if r.limit > 0 {
        matching.truncate(r.limit as usize);
    }
    if r.only == RangeOnly::Keys {
        for kv in &mut matching {
            kv.value = Data::Empty;
        }
    }
    OpResult::Range { kvs: matching }
}

/// The keys a range op names, on the reference as it is.
fn concrete_keys(reference: &RefKvs, keys: RangeKeys) -> Keys {
    match keys {
        // The nth live key, or (past the last) one never written.
        RangeKeys::One(nth) => {
            Keys::One(reference.keys().nth(nth).copied().unwrap_or(NEVER_WRITTEN))
        }
        RangeKeys::Prefix(p) => Keys::Prefix(name(BOUNDS[p])),
        RangeKeys::Between(from, end) => Keys::Between {
            from: name(BOUNDS[from]),
            end: end.map(|e| name(BOUNDS[e])),
        },
    }
}

/// A put on the reference at `rev`: a new key is created there, an old
/// one keeps its create revision and counts a version more.
fn reference_put(
    reference: &mut RefKvs,
    key: Key,
    value: Data,
    lease: Option<SessionId>,
    rev: u64,
) {
    let kv = reference.entry(key).or_insert(Kv {
        key,
        create_revision: rev,
        mod_revision: rev,
        version: 0,
        lease,
        value,
    });
    kv.mod_revision = rev;
    kv.version += 1;
    kv.lease = lease;
    kv.value = value;
}

/// The reference's watches and every event so far, in order.
#[derive(Default)]
struct RefEvents {
    /// (revision, kind, key), as the writes made them.
    log: Vec<(u64, EtcdEvent, Key)>,
    /// Range watches: (client, keys, start revision), in the store's order.
    watches: BTreeSet<(u16, Keys, u64)>,
    /// What each client has heard, in order.
    heard: BTreeMap<u16, Vec<(EtcdEvent, Key, u64)>>,
}

impl RefEvents {
    /// A write's events (in the order it made them): logged, and told to
    /// every range watch that takes them.
    fn written(&mut self, events: &[(u64, EtcdEvent, Key)]) {
        for &(rev, kind, key) in events {
            self.log.push((rev, kind, key));
            for &(client, keys, start) in &self.watches {
                if rev >= start && reference_takes(keys, key) {
                    self.heard.entry(client).or_default().push((kind, key, rev));
                }
            }
        }
    }

    /// A new range watch: what it replays of the log — every delete in its
    /// range since `start`, and a put only if it is its key's last and
    /// the key is live now (the store keeps no history of puts) — in
    /// revision order, deletes first within one; then it listens.
    fn watch(&mut self, client: u16, keys: Keys, start: u64, live: &RefKvs) {
        let mut replay: Vec<(u64, EtcdEvent, Key)> = self
            .log
            .iter()
            .enumerate()
            .filter(|(_, (rev, _, key))| *rev >= start && reference_takes(keys, *key))
            .filter(|(at, (_, kind, key))| {
                *kind == EtcdEvent::Delete
                    || (live.contains_key(key)
                        && !self.log[at + 1..].iter().any(|(_, _, k)| k == key))
            })
            .map(|(_, e)| *e)
            .collect();
        replay.sort_by_key(|(rev, kind, _)| (*rev, *kind == EtcdEvent::Put));
        if !replay.is_empty() {
            self.heard
                .entry(client)
                .or_default()
                .extend(replay.into_iter().map(|(rev, kind, key)| (kind, key, rev)));
        }
        self.watches.insert((client, keys, start));
    }
}

/// The store's notifications, by client, in order.
fn heard(fired: &[models::store::etcd::Fired]) -> BTreeMap<u16, Vec<(EtcdEvent, Key, u64)>> {
    let mut by_client: BTreeMap<u16, Vec<(EtcdEvent, Key, u64)>> = BTreeMap::new();
    for &(client, kind, key, rev) in fired {
        by_client.entry(client).or_default().push((kind, key, rev));
    }
    by_client
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn etcd_face_matches_reference(ops in prop::collection::vec(etcd_op(), 1..60)) {
        let mut kv = EtcdKv::default();
        let mut reference = RefKvs::new();
        let mut events = RefEvents::default();
        let mut incarnation = [0u16; SESSIONS as usize];
        for op in ops {
            let before = kv.revision;
            let mut fired = Vec::new();
            events.heard.clear();
            match op {
                EtcdOp::Put { lease, value } => {
                    let s = live_lease(&incarnation, lease);
                    let key = names::session_key(s);
                    let rev = kv.put(key, Data::Number(value), Some(s), &mut fired);
                    // Revisions strictly increase with every write.
                    prop_assert!(rev > before);
                    reference_put(&mut reference, key, Data::Number(value), Some(s), rev);
                    events.written(&[(rev, EtcdEvent::Put, key)]);
                }
                EtcdOp::PutFixed { nth, value } => {
                    let key = Key::fixed(name(FIXED[nth]));
                    let rev = kv.put(key, Data::Number(value), None, &mut fired);
                    prop_assert_eq!(rev, before + 1);
                    reference_put(&mut reference, key, Data::Number(value), None, rev);
                    events.written(&[(rev, EtcdEvent::Put, key)]);
                }
                EtcdOp::Delete { nth } => {
                    match reference.keys().nth(nth).copied() {
                        Some(key) => {
                            let (rev, n) = kv.delete(key, &mut fired);
                            prop_assert!(rev > before);
                            prop_assert_eq!(n, 1);
                            reference.remove(&key);
                            events.written(&[(rev, EtcdEvent::Delete, key)]);
                        }
                        None => {
                            let (rev, n) = kv.delete(NEVER_WRITTEN, &mut fired);
                            prop_assert_eq!((rev, n), (before, 0));
                        }
                    }
                }
                EtcdOp::Expire { lease } => {
                    let s = live_lease(&incarnation, lease);
                    let had = reference.values().any(|kv| kv.lease == Some(s));
                    kv.expire(s, &mut fired);
                    // One revision, the keys in key order.
                    let gone: Vec<_> = reference.values().filter(|kv| kv.lease == Some(s))
                        .map(|kv| (before + 1, EtcdEvent::Delete, kv.key)).collect();
                    events.written(&gone);
                    reference.retain(|_, kv| kv.lease != Some(s));
                    prop_assert_eq!(kv.revision > before, had);
                    incarnation[lease as usize] += 1;
                }
                EtcdOp::Range { keys, sort, limit, max_create_revision, only } => {
                    let keys = concrete_keys(&reference, keys);
                    let r = Range { keys, sort, limit, max_create_revision, only, serializable: false };
                    prop_assert_eq!(kv.read(&r), reference_range(&reference, &r));
                }
                EtcdOp::Txn { lease } => {
                    let s = live_lease(&incarnation, lease);
                    let key = names::session_key(s);
                    let read = Range::of(Keys::One(key));
                    let txn = Txn {
                        compares: vec![Compare::created_at(key, 0)],
                        success: vec![TxnOp::Put { key, value: Data::Empty, lease: Some(s) }, TxnOp::Range(read.clone())],
                        failure: vec![TxnOp::Range(read)],
                    };
                    let (succeeded, results) = kv.txn(&txn, &mut fired);
                    prop_assert_eq!(succeeded, !reference.contains_key(&key));
                    if succeeded {
                        prop_assert_eq!(kv.revision, before + 1);
                        reference_put(&mut reference, key, Data::Empty, Some(s), kv.revision);
                        events.written(&[(kv.revision, EtcdEvent::Put, key)]);
                    } else {
                        prop_assert_eq!(kv.revision, before);
                    }
                    let put = OpResult::Put { revision: kv.revision };
                    let listed = OpResult::Range { kvs: vec![reference[&key]] };
                    let want = if succeeded { vec![put, listed] } else { vec![listed] };
                    prop_assert_eq!(results, want);
                }
                EtcdOp::WatchRange { client, keys, back } => {
                    let keys = concrete_keys(&reference, keys);
                    // From the past, now, or a revision not yet written.
                    let start = (before + 2).saturating_sub(back).max(1);
                    kv.watch_range(client, keys, start, &mut fired);
                    events.watch(client, keys, start, &reference);
                }
            }
            // Every event, to every range watch that takes it, in order.
            prop_assert_eq!(heard(&fired), std::mem::take(&mut events.heard));
            let got: Vec<Kv> = kv.kvs.clone();
            let want: Vec<Kv> = reference.values().copied().collect();
            prop_assert_eq!(got, want);
        }
    }
}

#[test]
fn a_watch_from_a_past_revision_sees_an_earlier_delete_once() {
    let mut kv = EtcdKv::default();
    let mut fired = Vec::new();
    let a = names::session_key(SessionId::first(0));
    kv.put(a, Data::Empty, Some(SessionId::first(0)), &mut fired);
    let seen_at = kv.revision;
    kv.delete(a, &mut fired);
    assert!(fired.is_empty());
    kv.watch(1, a, seen_at, &mut fired);
    assert_eq!(fired, vec![(1, EtcdEvent::Delete, a, seen_at + 1)]);
    assert!(kv.watchers.is_empty(), "the key watch ended at its delete");
}

#[derive(Clone, Debug)]
enum LeaseOp {
    Grant {
        lease: u16,
    },
    /// Put the lease's own key on it, in a txn (a gone lease: not found).
    Put {
        lease: u16,
    },
    Revoke {
        lease: u16,
    },
    KeepAlive {
        lease: u16,
    },
    TimeToLive {
        asker: u16,
        lease: u16,
        keys: bool,
    },
    Expire {
        lease: u16,
    },
}

fn lease_op() -> impl Strategy<Value = LeaseOp> {
    let l = 0..SESSIONS;
    prop_oneof![
        1 => l.clone().prop_map(|lease| LeaseOp::Grant { lease }),
        2 => l.clone().prop_map(|lease| LeaseOp::Put { lease }),
        1 => l.clone().prop_map(|lease| LeaseOp::Revoke { lease }),
        1 => l.clone().prop_map(|lease| LeaseOp::KeepAlive { lease }),
        1 => (l.clone(), l.clone(), any::<bool>())
            .prop_map(|(asker, lease, keys)| LeaseOp::TimeToLive { asker, lease, keys }),
        1 => l.prop_map(|lease| LeaseOp::Expire { lease }),
    ]
}

/// The id the store gave `lease`, or its own before any grant.
fn id_of(ids: &BTreeMap<u16, SessionId>, lease: u16) -> SessionId {
    ids.get(&lease).copied().unwrap_or(sid(lease))
}

/// Grants client `c`'s lease; the id the store gave it.
fn granted(store: &mut StoreState, c: u16) -> SessionId {
    match store.apply(sid(c), &Request::LeaseGrant).0 {
        Reply::LeaseGranted { lease } => lease,
        other => panic!("a grant answered {other}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A lease a recipe revokes, keeps alive or asks about, through the
    /// store, beside grants, puts on it and expiries: a revoke deletes
    /// the lease's keys in one revision and tells their watchers (here a
    /// watch on the whole prefix), as an expiry does; a gone lease's
    /// revoke and keepalive are not found, its time to live says it is
    /// gone; a revoked id may be granted again.
    #[test]
    fn etcd_leases_match_reference(ops in prop::collection::vec(lease_op(), 1..40)) {
        let mut store = StoreState::default();
        // The ids the store gave the leases it granted.
        let mut ids: BTreeMap<u16, SessionId> = BTreeMap::new();
        let watcher = granted(&mut store, SESSIONS);
        store.apply(watcher, &Request::WatchRange { keys: Keys::Prefix(names::KEYS), start_revision: 1 });
        // etcd's watches live on the client's connection, whatever its
        // lease: events are addressed to the client alone.
        let told_to = sid(SESSIONS);
        let mut alive: BTreeSet<u16> = BTreeSet::new();
        // key -> its lease
        let mut keys: BTreeMap<Key, u16> = BTreeMap::new();
        for op in ops {
            let revision = store.etcd.revision;
            let mut told = Vec::new();
            // Deleting `lease`'s keys: one revision, each key's watch told.
            let gone = |keys: &mut BTreeMap<Key, u16>, lease: u16, told: &mut Vec<_>| {
                let doomed: Vec<Key> = keys.iter().filter(|(_, l)| **l == lease).map(|(k, _)| *k).collect();
                for key in &doomed {
                    keys.remove(key);
                    told.push((told_to, WatchEvent::Etcd { kind: EtcdEvent::Delete, key: *key, revision: revision + 1 }));
                }
                !doomed.is_empty()
            };
            let fired = match op {
                LeaseOp::Grant { lease } => {
                    alive.insert(lease);
                    let (reply, fired) = store.apply(sid(lease), &Request::LeaseGrant);
                    let Reply::LeaseGranted { lease: id } = reply else {
                        return Err(TestCaseError::fail(format!("a grant answered {reply}")));
                    };
                    prop_assert_eq!(*ids.entry(lease).or_insert(id), id, "a grant again is the same lease");
                    fired
                }
                LeaseOp::Put { lease } => {
                    let s = id_of(&ids, lease);
                    let key = names::session_key(s);
                    let txn = Txn {
                        compares: vec![],
                        success: vec![TxnOp::Put { key, value: Data::Empty, lease: Some(s) }],
                        failure: vec![],
                    };
                    let (reply, fired) = store.apply(s, &Request::Txn(Box::new(txn)));
                    if alive.contains(&lease) {
                        keys.insert(key, lease);
                        told.push((told_to, WatchEvent::Etcd { kind: EtcdEvent::Put, key, revision: revision + 1 }));
                        let succeeded = matches!(reply, Reply::TxnResult { succeeded: true, .. });
                        prop_assert!(succeeded, "{}", reply);
                    } else {
                        prop_assert_eq!(reply, Reply::LeaseNotFound);
                    }
                    fired
                }
                LeaseOp::Revoke { lease } => {
                    let (reply, fired) = store.apply(id_of(&ids, lease), &Request::LeaseRevoke);
                    let want = if alive.remove(&lease) {
                        gone(&mut keys, lease, &mut told);
                        Reply::LeaseRevoked
                    } else {
                        Reply::LeaseNotFound
                    };
                    prop_assert_eq!(reply, want);
                    fired
                }
                LeaseOp::Expire { lease } => {
                    if alive.remove(&lease) {
                        gone(&mut keys, lease, &mut told);
                    }
                    store.end_session(id_of(&ids, lease), SessionEnd::Expired)
                }
                LeaseOp::KeepAlive { lease } => {
                    let (reply, fired) = store.apply(id_of(&ids, lease), &Request::LeaseKeepAlive);
                    let want = if alive.contains(&lease) { Reply::LeaseKeptAlive } else { Reply::LeaseNotFound };
                    prop_assert_eq!(reply, want);
                    fired
                }
                LeaseOp::TimeToLive { asker, lease, keys: with_keys } => {
                    let (reply, fired) = store.apply(id_of(&ids, asker), &Request::LeaseTimeToLive { lease: id_of(&ids, lease), keys: with_keys });
                    let is_alive = alive.contains(&lease);
                    let attached: Vec<Key> = keys.iter().filter(|(_, l)| is_alive && with_keys && **l == lease).map(|(k, _)| *k).collect();
                    prop_assert_eq!(reply, Reply::LeaseTtl { alive: is_alive, keys: attached });
                    fired
                }
            };
            prop_assert_eq!(fired, told);
            let wrote = u64::from(store.etcd.revision > revision);
            prop_assert_eq!(store.etcd.revision, revision + wrote);
            let live: Vec<Key> = store.etcd.kvs.iter().map(|kv| kv.key).collect();
            prop_assert_eq!(live, keys.keys().copied().collect::<Vec<_>>());
            for l in 0..SESSIONS {
                prop_assert_eq!(store.is_alive(id_of(&ids, l)), alive.contains(&l));
            }
        }
    }
}
