//! The ZooKeeper face of the store: znodes, sequential names, ephemeral
//! owners and one-shot watches.
//!
//! Semantics follow the ZooKeeper programmer's guide: a sequential name takes
//! the parent's count of child creates as its ten-digit suffix (measured on
//! ZooKeeper 3.8: create, create, delete, create gives 0, 1, 2 while the
//! parent's `cversion`, which a delete bumps too, reaches 4); a versioned
//! delete or set fails with `BadVersion` unless the data version matches;
//! `setData` fires the path's data watches; `exists` and `get_data` share one watch
//! table per path (as the server's `dataWatches` does), so a session watching a
//! path twice is told once; a create fires the path's exists watches and the
//! parent's child watches; a delete fires the path's watches and the parent's
//! child watches. Every fired watch is removed (watches are one-shot).

use crate::ids::{Child, ClientIdx, Data, Name, SessionId, ZPath};
use crate::msg::{MultiOp, MultiResult, Stat, ZkError, ZkEvent};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Znode {
    pub czxid: u64,
    pub mzxid: u64,
    pub ephemeral_owner: Option<SessionId>,
    pub data: Data,
    /// The data's version (`setData`s so far).
    pub version: u32,
    /// Child creates and deletes so far (ZooKeeper's `cversion`).
    pub cversion: u32,
    /// Child creates so far: the next sequential suffix.
    pub creates: u32,
}

impl Znode {
    fn at(zxid: u64, ephemeral_owner: Option<SessionId>, data: Data) -> Znode {
        Znode {
            czxid: zxid,
            mzxid: zxid,
            ephemeral_owner,
            data,
            version: 0,
            cversion: 0,
            creates: 0,
        }
    }
}

/// The znode tree under the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ZkTree {
    /// The last transaction id handed out.
    pub zxid: u64,
    /// Nodes, sorted by path.
    pub nodes: Vec<(ZPath, Znode)>,
    /// Exists and get_data watches, one per (path, session).
    pub data_watches: WatchSet,
    /// Child watches, one per (parent, session).
    pub child_watches: WatchSet,
    /// The last listed directory's children in sequence order, shared by
    /// every listing until the next change (a herd of thousands re-lists
    /// the same children).
    #[serde(skip)]
    pub children_cache: ChildrenCache,
}

/// One watch table: (path, session) pairs, sorted, each once.
///
/// A sorted vector rather than a `BTreeSet`: the model checker keeps
/// thousands of stores per level, and a set's first node takes some 200
/// bytes where a watch or two take 16 each; in the herd, watches on one
/// path are set in session order, so each goes at the end of its path's
/// run. It hashes, compares, serializes and prints as the set did (the
/// length, then the pairs in order), so state fingerprints are unchanged.
#[derive(Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct WatchSet(Vec<(ZPath, SessionId)>);

/// Read back sorted and without repeats, whatever the input's order, as
/// the set was.
impl<'de> Deserialize<'de> for WatchSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut watches = Vec::<(ZPath, SessionId)>::deserialize(d)?;
        watches.sort_unstable();
        watches.dedup();
        Ok(WatchSet(watches))
    }
}

impl fmt::Debug for WatchSet {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_set().entries(&self.0).finish()
    }
}

impl WatchSet {
    /// Adds a watch; false if it was there.
    pub fn insert(&mut self, watch: (ZPath, SessionId)) -> bool {
        // A herd's waiters register in session order, one after another:
        // most watches go at the end.
        if self.0.last().is_none_or(|last| *last < watch) {
            self.0.push(watch);
            return true;
        }
        match self.0.binary_search(&watch) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, watch);
                true
            }
        }
    }

    pub fn contains(&self, watch: &(ZPath, SessionId)) -> bool {
        self.0.binary_search(watch).is_ok()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, (ZPath, SessionId)> {
        self.0.iter()
    }

    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }

    /// Watches it has room for without growing (what a trimmed store holds).
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    pub fn retain(&mut self, keep: impl FnMut(&(ZPath, SessionId)) -> bool) {
        self.0.retain(keep);
    }

    /// Removes every watch on `path` and returns their sessions, in
    /// session order.
    fn take(&mut self, path: ZPath) -> impl Iterator<Item = SessionId> + '_ {
        let from = self.0.partition_point(|(p, _)| *p < path);
        let to = from + self.0[from..].partition_point(|(p, _)| *p == path);
        self.0.drain(from..to).map(|(_, s)| s)
    }

    /// Renames every watch's path and session by `rename`, then sorts
    /// again (for symmetry's relabelling).
    pub fn rename(&mut self, rename: impl FnMut(&mut (ZPath, SessionId))) {
        self.0.iter_mut().for_each(rename);
        self.0.sort_unstable();
    }
}

impl<'a> IntoIterator for &'a WatchSet {
    type Item = &'a (ZPath, SessionId);
    type IntoIter = std::slice::Iter<'a, (ZPath, SessionId)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A cache, not state: two trees are equal (and hash alike) whatever their
/// caches hold.
#[derive(Clone, Debug, Default)]
pub struct ChildrenCache(pub Option<(Name, Arc<[Child]>)>);

impl PartialEq for ChildrenCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for ChildrenCache {}
impl Hash for ChildrenCache {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

/// A fired watch: who is told, and what.
pub type Fired = (SessionId, ZkEvent, ZPath);

/// A ZooKeeper watch's kind: on a node (`getData`, `exists`) or on its
/// children (`getChildren`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchKind {
    Data,
    Child,
}

impl WatchKind {
    /// What a watch of this kind on `path`, set when the tree was `was`,
    /// tells now that it is `now` (`DataTree.setWatches`): a data watch
    /// NodeDeleted or NodeDataChanged, an exists watch on a missing node
    /// NodeCreated, a child watch NodeDeleted or NodeChildrenChanged;
    /// nothing while what it watches is as it was.
    pub fn fires(self, was: &ZkTree, now: &ZkTree, path: ZPath) -> Option<ZkEvent> {
        match (self, was.node(path), now.node(path)) {
            (WatchKind::Data, Some(_), None) => Some(ZkEvent::NodeDeleted),
            (WatchKind::Data, Some(a), Some(b)) if (a.czxid, a.mzxid) != (b.czxid, b.mzxid) => {
                Some(ZkEvent::NodeDataChanged)
            }
            (WatchKind::Data, None, Some(_)) => Some(ZkEvent::NodeCreated),
            (WatchKind::Data, Some(_), Some(_)) | (WatchKind::Data, None, None) => None,
            (WatchKind::Child, _, None) => Some(ZkEvent::NodeDeleted),
            (WatchKind::Child, Some(a), Some(b))
                if (a.czxid, a.cversion) != (b.czxid, b.cversion) =>
            {
                Some(ZkEvent::NodeChildrenChanged)
            }
            (WatchKind::Child, Some(_) | None, Some(_)) => None,
        }
    }
}

impl ZkTree {
    /// A tree with the persistent directories a recipe's layout names, made
    /// in one transaction before the run (zxid 1), their parents too.
    pub fn new(dirs: &[ZPath]) -> Self {
        let mut paths: Vec<ZPath> = Vec::new();
        for &dir in dirs {
            let mut at = Some(dir);
            while let Some(p) = at {
                paths.push(p);
                at = p.parent().map(ZPath::Fixed);
            }
        }
        paths.sort();
        paths.dedup();
        let nodes = paths
            .iter()
            .map(|&p| {
                let n = paths
                    .iter()
                    .filter(|c| c.parent().map(ZPath::Fixed) == Some(p))
                    .count() as u32;
                let mut node = Znode::at(1, None, Data::Empty);
                node.cversion = n;
                node.creates = n;
                (p, node)
            })
            .collect();
        ZkTree {
            zxid: u64::from(!paths.is_empty()),
            nodes,
            ..ZkTree::default()
        }
    }

    fn find(&self, path: ZPath) -> Result<usize, usize> {
        self.nodes.binary_search_by(|(p, _)| p.cmp(&path))
    }

    pub fn node(&self, path: ZPath) -> Option<&Znode> {
        self.find(path).ok().map(|i| &self.nodes[i].1)
    }

    /// The nodes of `dir` named with a guid or sequence number, in
    /// sequence order (the members of a lock's, a barrier's or a queue's
    /// line; a listing adds the fixed names).
    pub fn generated_children(&self, dir: Name) -> impl Iterator<Item = Child> + '_ {
        let from = self.nodes.partition_point(|(p, _)| match p {
            ZPath::Fixed(_) => true,
            ZPath::Node { dir: d, .. } => *d < dir,
        });
        self.nodes[from..].iter().map_while(move |(p, _)| match p {
            ZPath::Node { dir: d, child } if *d == dir => Some(*child),
            ZPath::Node { .. } | ZPath::Fixed(_) => None,
        })
    }

    /// Every child of `dir`, in sequence order (fixed names first).
    fn all_children(&self, dir: Name) -> Vec<Child> {
        let mut children: Vec<Child> = self
            .nodes
            .iter()
            .take_while(|(p, _)| matches!(p, ZPath::Fixed(_)))
            .filter_map(|(p, _)| p.child_of(dir))
            .collect();
        children.extend(self.generated_children(dir));
        children.sort();
        children
    }

    fn has_children(&self, path: ZPath) -> bool {
        match path {
            ZPath::Fixed(dir) => {
                self.generated_children(dir).next().is_some()
                    || self
                        .nodes
                        .iter()
                        .any(|(p, _)| matches!(p, ZPath::Fixed(_)) && p.parent() == Some(dir))
            }
            // A generated name is nobody's directory.
            ZPath::Node { .. } => false,
        }
    }

    fn stat(&self, path: ZPath) -> Option<Stat> {
        self.node(path).map(|n| Stat {
            czxid: n.czxid,
            mzxid: n.mzxid,
            version: n.version,
            cversion: n.cversion,
            ephemeral_owner: n.ephemeral_owner,
            data: n.data,
        })
    }

    /// The parent's node, `Ok(None)` for the root.
    fn parent_mut(&mut self, path: ZPath) -> Result<Option<&mut Znode>, ZkError> {
        match path.parent() {
            None => Ok(None),
            Some(dir) => match self.find(ZPath::Fixed(dir)) {
                Ok(i) => Ok(Some(&mut self.nodes[i].1)),
                Err(_) => Err(ZkError::NoNode),
            },
        }
    }

    /// `create(path, mode)`. Returns the created path (with its sequence
    /// suffix) and czxid.
    pub fn create(
        &mut self,
        path: ZPath,
        ephemeral_owner: Option<SessionId>,
        sequential: bool,
        data: Data,
        fired: &mut Vec<Fired>,
    ) -> Result<(ZPath, u64), ZkError> {
        self.create_in(
            self.zxid + 1,
            path,
            ephemeral_owner,
            sequential,
            data,
            fired,
        )
    }

    /// `create` as part of transaction `zxid` (a multi's ops share one);
    /// on success the tree's zxid is `zxid`.
    pub fn create_in(
        &mut self,
        zxid: u64,
        path: ZPath,
        ephemeral_owner: Option<SessionId>,
        sequential: bool,
        data: Data,
        fired: &mut Vec<Fired>,
    ) -> Result<(ZPath, u64), ZkError> {
        let seq = self.parent_mut(path)?.map_or(0, |parent| parent.creates);
        let path = match (sequential, path.split()) {
            (true, Some((dir, child))) => ZPath::Node {
                dir,
                child: Child {
                    seq: Some(seq),
                    ..child
                },
            },
            // The model keeps no counter for the root: a sequential node
            // goes in a directory.
            (true, None) => return Err(ZkError::NoNode),
            (false, _) => path,
        };
        let at = match self.find(path) {
            Ok(_) => return Err(ZkError::NodeExists),
            Err(at) => at,
        };
        self.zxid = zxid;
        self.nodes
            .insert(at, (path, Znode::at(zxid, ephemeral_owner, data)));
        if let Ok(Some(parent)) = self.parent_mut(path) {
            parent.creates += 1;
            parent.cversion += 1;
        }
        self.children_cache.0 = None;
        take_watches(&mut self.data_watches, path, ZkEvent::NodeCreated, fired);
        if let Some(parent) = path.parent() {
            take_watches(
                &mut self.child_watches,
                ZPath::Fixed(parent),
                ZkEvent::NodeChildrenChanged,
                fired,
            );
        }
        Ok((path, zxid))
    }

    /// `delete(path, version)`.
    pub fn delete(
        &mut self,
        path: ZPath,
        version: Option<u32>,
        fired: &mut Vec<Fired>,
    ) -> Result<(), ZkError> {
        self.delete_in(self.zxid + 1, path, version, fired)
    }

    /// `check(path, version)`, a multi's op: the node exists, at that data
    /// version if one is given (ZooKeeper's `-1` is `None`). Where the
    /// node is, if it is.
    pub fn check(&self, path: ZPath, version: Option<u32>) -> Result<usize, ZkError> {
        let at = self.find(path).map_err(|_| ZkError::NoNode)?;
        if version.is_some_and(|v| v != self.nodes[at].1.version) {
            return Err(ZkError::BadVersion);
        }
        Ok(at)
    }

    /// `delete` as part of transaction `zxid`.
    pub fn delete_in(
        &mut self,
        zxid: u64,
        path: ZPath,
        version: Option<u32>,
        fired: &mut Vec<Fired>,
    ) -> Result<(), ZkError> {
        let at = self.check(path, version)?;
        if self.has_children(path) {
            return Err(ZkError::NotEmpty);
        }
        self.nodes.remove(at);
        self.zxid = zxid;
        if let Ok(Some(parent)) = self.parent_mut(path) {
            parent.cversion += 1;
        }
        self.children_cache.0 = None;
        // The node's data watches and child watches both hear NodeDeleted
        // (ZooKeeper's `DataTree.deleteNode`), a session watching it both
        // ways once.
        let from = fired.len();
        take_watches(&mut self.data_watches, path, ZkEvent::NodeDeleted, fired);
        let told: Vec<SessionId> = fired[from..].iter().map(|(s, _, _)| *s).collect();
        let children_watchers: Vec<SessionId> = self.child_watches.take(path).collect();
        fired.extend(
            children_watchers
                .into_iter()
                .filter(|s| !told.contains(s))
                .map(|s| (s, ZkEvent::NodeDeleted, path)),
        );
        if let Some(parent) = path.parent() {
            take_watches(
                &mut self.child_watches,
                ZPath::Fixed(parent),
                ZkEvent::NodeChildrenChanged,
                fired,
            );
        }
        Ok(())
    }

    /// `setData(path, data, version)`: returns the node's new stat.
    pub fn set_data(
        &mut self,
        path: ZPath,
        data: Data,
        version: Option<u32>,
        fired: &mut Vec<Fired>,
    ) -> Result<Stat, ZkError> {
        self.set_data_in(self.zxid + 1, path, data, version, fired)
    }

    /// `setData` as part of transaction `zxid`.
    pub fn set_data_in(
        &mut self,
        zxid: u64,
        path: ZPath,
        data: Data,
        version: Option<u32>,
        fired: &mut Vec<Fired>,
    ) -> Result<Stat, ZkError> {
        let at = self.check(path, version)?;
        self.zxid = zxid;
        let node = &mut self.nodes[at].1;
        node.data = data;
        node.mzxid = zxid;
        // ZooKeeper's version is an int that wraps (CURATOR-688 reads it
        // as a counter's version and overflows).
        node.version = node.version.wrapping_add(1);
        take_watches(
            &mut self.data_watches,
            path,
            ZkEvent::NodeDataChanged,
            fired,
        );
        Ok(self.stat(path).expect("just set"))
    }

    /// One write of `session` (a single request's, or a multi's op) as
    /// part of transaction `zxid`: what it did, or why it could not.
    pub fn apply_op(
        &mut self,
        zxid: u64,
        session: SessionId,
        op: MultiOp,
        fired: &mut Vec<Fired>,
    ) -> Result<MultiResult, ZkError> {
        match op {
            MultiOp::Check { path, version } => {
                self.check(path, version).map(|_| MultiResult::Checked)
            }
            MultiOp::Create {
                path,
                ephemeral,
                sequential,
                data,
            } => self
                .create_in(
                    zxid,
                    path,
                    ephemeral.then_some(session),
                    sequential,
                    data,
                    fired,
                )
                .map(|(path, czxid)| MultiResult::Created { path, czxid }),
            MultiOp::Delete { path, version } => self
                .delete_in(zxid, path, version, fired)
                .map(|()| MultiResult::Deleted),
            MultiOp::SetData {
                path,
                data,
                version,
            } => self
                .set_data_in(zxid, path, data, version, fired)
                .map(MultiResult::Set),
        }
    }

    /// `exists(path, watch)`: the watch is set whether or not the node exists.
    pub fn exists(&mut self, path: ZPath, watch: Option<SessionId>) -> Option<Stat> {
        if let Some(s) = watch {
            add_watch(&mut self.data_watches, path, s);
        }
        self.stat(path)
    }

    /// `get_data(path, watch)`: the watch is set only on an existing node.
    pub fn get_data(&mut self, path: ZPath, watch: Option<SessionId>) -> Result<Stat, ZkError> {
        let stat = self.stat(path).ok_or(ZkError::NoNode)?;
        if let Some(s) = watch {
            add_watch(&mut self.data_watches, path, s);
        }
        Ok(stat)
    }

    /// `get_children(path, watch)`, in sequence order. ZooKeeper returns
    /// children unordered and every client sorts them; sorting once per change
    /// here is the same answer at a fraction of the cost, and the recipes
    /// rely on nothing else.
    pub fn get_children(
        &mut self,
        path: ZPath,
        watch: Option<SessionId>,
    ) -> Result<Arc<[Child]>, ZkError> {
        if self.node(path).is_none() {
            return Err(ZkError::NoNode);
        }
        if let Some(s) = watch {
            add_watch(&mut self.child_watches, path, s);
        }
        let ZPath::Fixed(dir) = path else {
            // A generated name is nobody's directory.
            return Ok(Arc::from(Vec::new()));
        };
        match &self.children_cache.0 {
            Some((listed, children)) if *listed == dir => Ok(children.clone()),
            Some(_) | None => {
                let children: Arc<[Child]> = self.all_children(dir).into();
                self.children_cache.0 = Some((dir, children.clone()));
                Ok(children)
            }
        }
    }

    /// ZooKeeper's `setWatches` on a reconnect to another server: the
    /// watches `client`'s sessions set on a server whose tree is `old`
    /// move to this one (and leave `old`). Each whose node has changed
    /// since it was set — the old server's node is as it was then, since a
    /// change there would have fired it — fires here instead: a data watch
    /// with NodeDeleted or NodeDataChanged, an exists watch on a missing
    /// node with NodeCreated, a child watch with NodeDeleted or
    /// NodeChildrenChanged (`DataTree.setWatches`).
    ///
    /// The watches of a session in `ended` go with the old connection and
    /// no further: the new server answers that session's handshake with
    /// its expiry and closes the connection before the `setWatches` that
    /// follows it is read.
    pub fn set_watches(
        &mut self,
        old: &mut ZkTree,
        client: ClientIdx,
        ended: &[SessionId],
    ) -> Vec<(Fired, WatchKind)> {
        let mine = |w: &(ZPath, SessionId)| w.1.client == client;
        let moves = |w: &&(ZPath, SessionId)| !ended.contains(&w.1);
        let data = (old.data_watches.iter().filter(moves).copied().filter(mine))
            .map(|(path, s)| (path, s, WatchKind::Data));
        let child = (old.child_watches.iter().filter(moves).copied().filter(mine))
            .map(|(path, s)| (path, s, WatchKind::Child));
        let watches: Vec<_> = data.chain(child).collect();
        old.data_watches.retain(|w| !mine(w));
        old.child_watches.retain(|w| !mine(w));
        let mut fired = Vec::new();
        for (path, s, kind) in watches {
            match kind.fires(old, self, path) {
                Some(event) => fired.push(((s, event, path), kind)),
                None => add_watch(
                    match kind {
                        WatchKind::Data => &mut self.data_watches,
                        WatchKind::Child => &mut self.child_watches,
                    },
                    path,
                    s,
                ),
            }
        }
        fired
    }

    /// The sessions of `client` that have a watch set here.
    pub fn watching_sessions(&self, client: ClientIdx) -> Vec<SessionId> {
        let mut sessions: Vec<SessionId> = (self.data_watches.iter())
            .chain(&self.child_watches)
            .map(|w| w.1)
            .filter(|s| s.client == client)
            .collect();
        sessions.sort_unstable();
        sessions.dedup();
        sessions
    }

    /// Session expiry or close: delete the session's ephemerals (firing
    /// their watches, in path order) and drop the session's own watches.
    ///
    /// On a close the session's connection is open while its ephemerals go,
    /// so its own watches on them fire first (measured on ZooKeeper 3.8: a
    /// client that closes gets NodeDeleted for its own node and
    /// NodeChildrenChanged for its parent). An expired session's owner has
    /// been silent past its read timeout: its connection is gone, and it
    /// hears only Disconnected, then Expired (measured with a SIGSTOPped
    /// Java client) — so its watches are dropped first.
    pub fn end_session(&mut self, session: SessionId, end: SessionEnd, fired: &mut Vec<Fired>) {
        if end == SessionEnd::Expired {
            self.drop_watches(session);
        }
        let owned: Vec<ZPath> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.ephemeral_owner == Some(session))
            .map(|(p, _)| *p)
            .collect();
        for path in owned {
            // An ephemeral has no children, so the delete cannot fail.
            let _ = self.delete(path, None, fired);
        }
        self.drop_watches(session);
    }

    fn drop_watches(&mut self, session: SessionId) {
        self.data_watches.retain(|(_, s)| *s != session);
        self.child_watches.retain(|(_, s)| *s != session);
    }
}

/// How a session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// The server expired it: its owner was silent.
    Expired,
    /// Its owner closed it.
    Closed,
}

fn add_watch(table: &mut WatchSet, path: ZPath, session: SessionId) {
    table.insert((path, session));
}

/// Fires and removes every watch on `path`, in session order.
fn take_watches(table: &mut WatchSet, path: ZPath, kind: ZkEvent, fired: &mut Vec<Fired>) {
    fired.extend(table.take(path).map(|s| (s, kind, path)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Inserts (in order and out of it, with repeats) and takes: the
        /// sorted vector answers and iterates as the `BTreeSet` it stands for.
        #[test]
        fn a_watch_set_is_the_set_it_stands_for(
            steps in proptest::collection::vec((0u8..3, 0u16..6, 0u8..4), 0..80)
        ) {
            let mut set = WatchSet::default();
            let mut reference = BTreeSet::new();
            for (path, client, what) in steps {
                let path = [
                    ZPath::fixed(name!("/lock")),
                    ZPath::fixed(name!("/lock/ready")),
                    ZPath::Node {
                        dir: name!("/lock"),
                        child: Child { seq: Some(1), prefix: name!("lock-"), guid: None },
                    },
                ][usize::from(path)];
                let w = (path, SessionId { client, incarnation: 0, grant: 0 });
                if what == 0 {
                    let taken: Vec<SessionId> = set.take(path).collect();
                    let want: Vec<SessionId> =
                        reference.iter().filter(|(p, _)| *p == path).map(|(_, s)| *s).collect();
                    reference.retain(|(p, _)| *p != path);
                    prop_assert_eq!(taken, want);
                } else {
                    prop_assert_eq!(set.insert(w), reference.insert(w));
                }
                prop_assert!(set.iter().eq(reference.iter()));
            }
        }
    }

    #[test]
    fn a_watch_set_reads_back_sorted_without_repeats() {
        let s = |client| SessionId {
            client,
            incarnation: 0,
            grant: 0,
        };
        let mut set = WatchSet::default();
        let lock = ZPath::fixed(name!("/lock"));
        for w in [
            (ZPath::fixed(name!("/lock/ready")), s(1)),
            (lock, s(2)),
            (lock, s(0)),
        ] {
            assert!(set.insert(w));
        }
        assert!(!set.insert((lock, s(2))));
        let json = serde_json::to_string(&set).expect("serializes");
        assert_eq!(
            serde_json::from_str::<WatchSet>(&json).ok(),
            Some(set.clone())
        );
        // Written in another order, with a repeat: the same set.
        let mut shuffled: Vec<(ZPath, SessionId)> = set.iter().rev().copied().collect();
        shuffled.push(shuffled[0]);
        let json = serde_json::to_string(&shuffled).expect("serializes");
        assert_eq!(serde_json::from_str::<WatchSet>(&json).ok(), Some(set));
    }

    /// A deleted node's child watches hear NodeDeleted too, as ZooKeeper's
    /// `DataTree.deleteNode` tells them; a session watching both ways is
    /// told once.
    #[test]
    fn a_deleted_directory_tells_its_child_watchers() {
        let dir = ZPath::fixed(name!("/sem"));
        let mut tree = ZkTree::new(&[dir]);
        let (a, b) = (SessionId::first(0), SessionId::first(1));
        tree.get_children(dir, Some(a)).unwrap();
        tree.get_children(dir, Some(b)).unwrap();
        tree.exists(dir, Some(b));
        let mut fired = Vec::new();
        tree.delete(dir, None, &mut fired).unwrap();
        fired.sort();
        assert_eq!(
            fired,
            vec![
                (a, ZkEvent::NodeDeleted, dir),
                (b, ZkEvent::NodeDeleted, dir)
            ]
        );
        assert!(!tree.child_watches.contains(&(dir, a)));
    }
}
