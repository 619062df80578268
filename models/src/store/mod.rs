//! The coordination store: one linearizable server with a ZooKeeper face and
//! an etcd face, serving requests in the order it receives them.
//!
//! Sessions (ZooKeeper) and leases (etcd) share one table: each has an expiry
//! timer that any request (ZooKeeper) or keepalive (both) resets. When it fires
//! the session expires: its ephemerals / lease keys are deleted, firing
//! watches, and the owner is told on its link.

pub mod consul;
pub mod driver;
pub mod ensemble;
pub mod etcd;
pub mod redis;
pub mod zookeeper;

use crate::ids::{client_id, client_of, Child, Name, SessionId, ZPath, MAX_GRANTS};
use crate::msg::{
    ConsulCmd, ConsulReply, Msg, MultiOp, MultiResult, RangeOnly, RedisReply, Reply, Request,
    Timer, TxnOp, WatchEvent, ZkError,
};
use crate::recipe::{LeaseIds, Line, Setup};
use consul::ConsulKv;
use ensemble::{Ensemble, Entry, Follower, Held, LeaderLink, Owed, Route};
use etcd::EtcdKv;
use redis::{Deployment, Persistence, RedisKv, TtlChange};
use serde::{Deserialize, Serialize};
use stateright::actor::{Actor, Id, Out};
use std::borrow::Cow;
use std::time::Duration;
pub use zookeeper::SessionEnd;
use zookeeper::ZkTree;

/// The store actor's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Store {
    /// How long a silent session (lease) lives: ZooKeeper's negotiated session
    /// timeout, etcd's lease TTL.
    pub session_timeout: Duration,
    /// The recipe's directories, its line and its claims.
    pub layout: Setup,
    /// A barrier of this many members: the store keeps the ghost
    /// [`Members`].
    pub barrier_group: Option<u16>,
    /// A queue: the store keeps the ghost [`QueueLedger`].
    pub queue: bool,
    /// An election's observers (the first clients): see
    /// [`StoreState::observers`].
    pub observers: crate::ids::ClientIdx,
    /// Tell the owner at once when its session expires. ZooKeeper does: the
    /// server closes the connection and the client's reconnect is answered
    /// SESSION_EXPIRED before anything else. etcd does not: a client learns
    /// that its lease expired only from the response to its next keepalive,
    /// on a stream of its own, while its watch stream goes on delivering.
    pub tell_expiry: bool,
    /// Whether sessions (leases) expire when not heard from: ZooKeeper's
    /// and etcd's do. A Redis connection is no session: the server keeps
    /// nothing for it, and only keys expire, each by its own TTL.
    pub sessions_expire: bool,
    /// Redis: persistence and replicas.
    pub deployment: Deployment,
    /// Consul: the store keeps Consul's KV and sessions, and a session's
    /// expiry may come anywhere between its TTL and twice its TTL after
    /// its last renewal (Consul reaps at twice the TTL; its documents
    /// promise only the TTL as a lower bound).
    pub consul: bool,
    /// A replicated store (ZooKeeper, etcd): its servers, and the state's
    /// [`Ensemble`]; `None`: one server.
    pub ensemble: Option<EnsembleCfg>,
}

/// A replicated store's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EnsembleCfg {
    /// Servers, odd, at least 3: the leader and its followers.
    pub servers: u8,
    /// The clients, connected round the servers from the first follower.
    pub clients: u16,
    /// The most entries a follower may be behind (the checker's bound;
    /// the simulator's is none, `u32::MAX`).
    pub max_lag: u32,
    /// ZooKeeper's `localSessionsEnabled`: a follower opens a new session
    /// by itself, from its own view, and upgrades it to a global one (a
    /// committed `createSession`) before its first ephemeral node.
    pub local_sessions: bool,
    /// Whether a client moves to another server on a reconnect:
    /// ZooKeeper's does, to the next of its connection string (refused by
    /// servers behind what it has seen). An etcd client stays on its
    /// member, a simplification ARCHITECTURE.md gives.
    pub clients_move: bool,
    /// etcd's: sessions are leases, kept alive by the leader's lessor
    /// alone, so a member with no leader answers no keepalive; it keeps its
    /// clients' connections (their requests wait for a leader). A
    /// ZooKeeper follower cut off from the leader answers pings from its
    /// own view, and closes its clients' connections when it gives up.
    pub leases: bool,
}

impl EnsembleCfg {
    /// `servers` servers for `clients` clients of a recipe of `face`.
    pub fn new(
        face: crate::recipe::Face,
        servers: u8,
        clients: u16,
        max_lag: u32,
        local_sessions: bool,
    ) -> Self {
        EnsembleCfg {
            servers,
            clients,
            max_lag,
            local_sessions,
            clients_move: face == crate::recipe::Face::ZooKeeper,
            leases: face == crate::recipe::Face::Etcd,
        }
    }
}

impl Store {
    /// The store a recipe of `face` talks to.
    pub fn for_face(face: crate::recipe::Face, session_timeout: Duration, layout: Setup) -> Self {
        Store {
            session_timeout,
            layout,
            // Consul's holder learns of its session's end from its
            // monitor's blocking query on the lock key, answered when the
            // invalidation releases it: the notice stands for that answer.
            tell_expiry: match face {
                crate::recipe::Face::ZooKeeper | crate::recipe::Face::Consul => true,
                crate::recipe::Face::Etcd | crate::recipe::Face::Redis => false,
            },
            deployment: Deployment::default(),
            sessions_expire: match face {
                crate::recipe::Face::ZooKeeper
                | crate::recipe::Face::Etcd
                | crate::recipe::Face::Consul => true,
                crate::recipe::Face::Redis => false,
            },
            consul: face == crate::recipe::Face::Consul,
            barrier_group: None,
            queue: false,
            observers: 0,
            ensemble: None,
        }
    }

    /// The state it starts in.
    pub fn initial_state(&self) -> StoreState {
        let mut st = StoreState::new(&self.layout);
        st.observers = RunConstant(self.observers);
        if !self.sessions_expire {
            st.redis = RedisKv::deployed(self.layout.masters, self.deployment);
        }
        if self.consul {
            st.consul = Some(Box::default());
        }
        st.barrier = self.barrier_group.map(|group| Members {
            group,
            entered: Vec::new(),
            leaving: Vec::new(),
        });
        st.queue = self.queue.then(|| QueueLedger {
            claims: self.layout.claims,
            removed: Vec::new(),
        });
        if let Some(e) = self.ensemble {
            st.ensemble = Some(Box::new(Ensemble::new(&st, e)));
        }
        st
    }

    /// The store for `recipe` run by `clients` clients.
    pub fn for_recipe(
        recipe: &crate::recipe::RecipeRef,
        session_timeout: Duration,
        clients: u16,
    ) -> Self {
        Store {
            barrier_group: (recipe.app() == crate::recipe::App::Barrier).then_some(clients),
            queue: recipe.app() == crate::recipe::App::Queue,
            ..Store::for_face(recipe.face(), session_timeout, recipe.setup())
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreState {
    /// Every session (lease) ever opened, sorted, with whether it is alive.
    pub sessions: Vec<(SessionId, bool)>,
    pub zk: ZkTree,
    pub etcd: EtcdKv,
    /// Where the recipe's line is: the same in every state of a run, so it
    /// is neither hashed nor compared (a [`RunConstant`]).
    pub line: RunConstant<Line>,
    /// An election's observers, the first clients (`observers`): what the
    /// store sends them is marked by whether the leader it names owns the
    /// first key, not by their own session. Not serialized: 0 reads back.
    #[serde(skip)]
    pub observers: RunConstant<crate::ids::ClientIdx>,
    /// How lease ids are made (the recipe's `Setup::leases`): the same in
    /// every state of a run.
    pub leases: RunConstant<LeaseIds>,
    /// Ghost, for `holder_owns_key`: the node or key first in line for the
    /// lock — the lowest-sequence generated child of the line's directory,
    /// else the line's node itself if ephemeral; the first-created key
    /// under the line's prefix — as (its path or key, its owner). Kept up
    /// to date on every change; it only summarises the tree, so it tells
    /// no two states apart.
    pub first_in_line: Option<FirstInLine>,
    /// Ghost, for a barrier (`no_early_pass`): the group's size and the
    /// clients that have entered (created a member node under `/lock`), in
    /// order. The mark on what the store sends is then "every member had
    /// entered". `None` for the other applications.
    pub barrier: Option<Members>,
    /// Ghost, for a queue: who removed which item. `None` for the other
    /// applications.
    pub queue: Option<QueueLedger>,
    /// The Redis face's masters (none for a ZooKeeper or etcd store).
    /// Written and hashed only when there are some, so the other faces'
    /// states serialize and fingerprint as before.
    #[serde(default, skip_serializing_if = "RedisKv::is_empty")]
    pub redis: RedisKv,
    /// The Consul face's KV and sessions (none for the other faces:
    /// written and hashed only when there is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consul: Option<Box<ConsulKv>>,
    /// A replicated store's followers and log (none for one server:
    /// written and hashed only when there is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ensemble: Option<Box<Ensemble>>,
}

/// As the derived hash was before `redis`: the fields in order, `redis`
/// only when the store has masters.
impl std::hash::Hash for StoreState {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.sessions.hash(h);
        self.zk.hash(h);
        self.etcd.hash(h);
        self.line.hash(h);
        self.leases.hash(h);
        self.first_in_line.hash(h);
        self.barrier.hash(h);
        self.queue.hash(h);
        if !self.redis.is_empty() {
            self.redis.hash(h);
        }
        if let Some(c) = &self.consul {
            c.hash(h);
        }
        if let Some(e) = &self.ensemble {
            e.hash(h);
        }
    }
}

/// A queue's items as the store has seen them leave.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QueueLedger {
    /// Where a consumer claims an element before it takes it (the
    /// lock-safe queue's `/taken`), if anywhere.
    pub claims: Option<Name>,
    /// Every element deleted so far, in order: its item and the client
    /// whose request deleted it (`no_lost_item` holds the remover to
    /// processing it).
    pub removed: Vec<(u64, crate::ids::ClientIdx)>,
}

/// A barrier's members as the store has seen them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Members {
    pub group: u16,
    /// Clients that have created a member node, sorted, each once.
    pub entered: Vec<crate::ids::ClientIdx>,
    /// Clients that have deleted their own member node (a double barrier's
    /// leave), sorted, each once.
    pub leaving: Vec<crate::ids::ClientIdx>,
}

impl Members {
    pub fn complete(&self) -> bool {
        self.entered.len() >= self.group as usize
    }

    /// The mark on what the store sends `client`: for a member that has
    /// begun to leave, every member has left (no member node is left);
    /// for anyone else, every member has entered.
    fn mark(&self, client: crate::ids::ClientIdx, tree: &ZkTree, line: Line) -> bool {
        if self.leaving.binary_search(&client).is_ok() {
            members(line, tree).next().is_none()
        } else {
            self.complete()
        }
    }
}

/// The lock entry first in line and the session (lease) that owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FirstInLine {
    Node(ZPath, Option<SessionId>),
    Key(crate::ids::Key, Option<SessionId>),
}

impl crate::relabel::Relabel for FirstInLine {
    fn relabel(&mut self, p: &crate::relabel::Perm) {
        match self {
            FirstInLine::Node(path, owner) => {
                path.relabel(p);
                owner.relabel(p);
            }
            FirstInLine::Key(key, lease) => {
                key.relabel(p);
                lease.relabel(p);
            }
        }
    }
}

impl FirstInLine {
    pub fn owner(self) -> Option<SessionId> {
        match self {
            FirstInLine::Node(_, owner) => owner,
            FirstInLine::Key(_, lease) => lease,
        }
    }
}

/// A setting a run's states all share, carried in each (the store's
/// methods read it) but neither hashed nor compared: two states of one run
/// never differ in it, and hashing it would only cost the checker time.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunConstant<T>(pub T);

impl<T> PartialEq for RunConstant<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for RunConstant<T> {}
impl<T> std::hash::Hash for RunConstant<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// An empty store, its line at `/lock`.
impl Default for StoreState {
    fn default() -> Self {
        StoreState::new(&Setup::bare())
    }
}

impl StoreState {
    pub fn new(layout: &Setup) -> Self {
        StoreState {
            sessions: Vec::new(),
            zk: ZkTree::new(&layout.dirs),
            etcd: EtcdKv::default(),
            line: RunConstant(layout.line),
            observers: RunConstant(0),
            leases: RunConstant(layout.leases),
            first_in_line: None,
            barrier: None,
            queue: None,
            redis: RedisKv::default(),
            consul: None,
            ensemble: None,
        }
    }

    /// Whether `session`, alive, owns the lock entry first in line: the mark
    /// the store puts on what it sends (see [`Msg::Reply`]).
    pub fn owns_first(&self, session: SessionId) -> bool {
        if !self.redis.is_empty() {
            return self.holds_majority(session);
        }
        if let Some(c) = &self.consul {
            return self.is_alive(session) && self.consul_holder(c) == Some(session);
        }
        if let Some(b) = &self.barrier {
            return b.mark(session.client, &self.zk, self.line.0);
        }
        self.first_in_line.and_then(FirstInLine::owner) == Some(session) && self.is_alive(session)
    }

    /// The mark on `reply` to `session` (see [`Msg::Reply`]): for an
    /// election's observer, whether the leader the reply names — the
    /// session whose key is the first a range found — owns that key, live;
    /// for anyone else, [`Self::owns_first`].
    pub fn reply_mark(&self, session: SessionId, reply: &Reply) -> bool {
        if !self.observes(session.client) {
            return self.owns_first(session);
        }
        // Only a range names a leader to an observer (`Observe`'s `Get`).
        let Reply::RangeResult { kvs, .. } = reply else {
            return false;
        };
        kvs.first()
            .and_then(|kv| kv.key.lease)
            .is_some_and(|named| self.owns_first(named))
    }

    /// The mark on `event` to `client`: for an election's observer,
    /// whether the session whose key a PUT names owns that key, live; for
    /// anyone else, [`Self::client_owns_first`].
    pub fn event_mark(&self, client: crate::ids::ClientIdx, event: &WatchEvent) -> bool {
        if !self.observes(client) {
            return self.client_owns_first(client);
        }
        // Only a PUT names a leader to an observer (`Observe`'s watches).
        let WatchEvent::Etcd {
            kind: crate::msg::EtcdEvent::Put,
            key,
            ..
        } = event
        else {
            return false;
        };
        key.lease.is_some_and(|named| self.owns_first(named))
    }

    /// Whether `client` is one of an election's observers.
    pub fn observes(&self, client: crate::ids::ClientIdx) -> bool {
        crate::apps::election::observes(self.observers.0, client)
    }

    /// Redis: whether the line's key holds `session`'s token on a majority
    /// of the masters (the one master, for a single instance).
    pub fn holds_majority(&self, session: SessionId) -> bool {
        let key = self.line.0.keys;
        let masters = self.redis.masters.len();
        let mine = (0..masters)
            .filter(|&m| {
                self.redis
                    .get(m as u8, key)
                    .is_some_and(|e| e.value == crate::ids::Data::Session(session))
            })
            .count();
        mine > masters / 2
    }

    /// Redis: the session whose token the line's key holds on a majority
    /// of the masters — the lock's holder as the store sees it; `None`
    /// on the other stores. A step that takes it away releases the lock,
    /// as one that moves the header does on a store with watches (a
    /// poller's `SET` on a master the holder left does not keep it).
    pub fn majority_holder(&self) -> Option<SessionId> {
        let key = self.line.0.keys;
        let masters = self.redis.masters.len() as u8;
        let value = |m: u8| self.redis.get(m, key).map(|e| e.value);
        (0..masters)
            .filter_map(value)
            .find(|&v| {
                (0..masters).filter(|&m| value(m) == Some(v)).count() > usize::from(masters / 2)
            })
            .and_then(|v| match v {
                crate::ids::Data::Session(s) => Some(s),
                crate::ids::Data::Empty
                | crate::ids::Data::Number(_)
                | crate::ids::Data::Holders(_) => None,
            })
    }

    /// Consul: the session holding the line's key.
    fn consul_holder(&self, c: &ConsulKv) -> Option<SessionId> {
        c.get(crate::ids::Key::fixed(self.line.0.keys))
            .and_then(|p| p.session)
    }

    /// Whether some live session of `client` owns the entry first in line
    /// (watch events name the client's connection, not a session).
    pub fn client_owns_first(&self, client: crate::ids::ClientIdx) -> bool {
        if let Some(c) = &self.consul {
            return self
                .consul_holder(c)
                .is_some_and(|s| s.client == client && self.is_alive(s));
        }
        if let Some(b) = &self.barrier {
            return b.mark(client, &self.zk, self.line.0);
        }
        // A queue's consumers decide on replies, never on events.
        if self.queue.is_some() {
            return true;
        }
        self.first_in_line
            .and_then(FirstInLine::owner)
            .is_some_and(|s| s.client == client && self.is_alive(s))
    }

    /// Re-finds the entry first in line after a change. A new node or key
    /// never goes before the current first (sequences and revisions only
    /// grow), so only a first that is gone — or was deleted and made again
    /// by another owner in one step, as a `multi` can — calls for a scan.
    fn refresh_first_in_line(&mut self) {
        let still_there = match self.first_in_line {
            Some(FirstInLine::Node(path, owner)) => self
                .zk
                .node(path)
                .is_some_and(|n| n.ephemeral_owner == owner),
            Some(FirstInLine::Key(key, lease)) => {
                self.etcd.get(key).is_some_and(|kv| kv.lease == lease)
            }
            None => false,
        };
        if still_there {
            return;
        }
        let line = self.line.0;
        // Members come in sequence order: the first is the lowest.
        let lowest_member = members(line, &self.zk).next();
        self.first_in_line = match (lowest_member, line.path) {
            (Some(child), ZPath::Fixed(dir)) => {
                let path = ZPath::Node { dir, child };
                Some(FirstInLine::Node(
                    path,
                    self.zk.node(path).and_then(|n| n.ephemeral_owner),
                ))
            }
            (Some(_), ZPath::Node { .. }) | (None, _) => match self.zk.node(line.path) {
                Some(n) if n.ephemeral_owner.is_some() => {
                    Some(FirstInLine::Node(line.path, n.ephemeral_owner))
                }
                _ => self
                    .etcd
                    .kvs
                    .iter()
                    .filter(|kv| kv.key.has_prefix(line.keys))
                    .min_by_key(|kv| kv.create_revision)
                    .map(|kv| FirstInLine::Key(kv.key, kv.lease)),
            },
        };
    }

    /// Whether the line has no member left (a queue with no element).
    pub fn line_is_empty(&self) -> bool {
        members(self.line.0, &self.zk).next().is_none()
    }

    /// Gives back spare capacity (the model checker's frontier keeps many
    /// stores).
    pub fn shrink_to_fit(&mut self) {
        self.sessions.shrink_to_fit();
        self.zk.nodes.shrink_to_fit();
        self.zk.data_watches.shrink_to_fit();
        self.zk.child_watches.shrink_to_fit();
        self.etcd.kvs.shrink_to_fit();
        self.etcd.deletes.shrink_to_fit();
        self.etcd.watchers.shrink_to_fit();
        self.etcd.range_watchers.shrink_to_fit();
        if let Some(b) = &mut self.barrier {
            b.entered.shrink_to_fit();
            b.leaving.shrink_to_fit();
        }
        if let Some(q) = &mut self.queue {
            q.removed.shrink_to_fit();
        }
    }

    /// How many queue elements have been deleted so far (0 for the other
    /// applications): the engines feed the monitors what a step adds.
    pub fn items_removed(&self) -> usize {
        self.queue.as_ref().map_or(0, |q| q.removed.len())
    }

    /// One ZooKeeper write of session `s` (a single request's, or a
    /// multi's op) in transaction `zxid`, with the ghost ledgers kept: a
    /// barrier's members entering (a member node created) and leaving
    /// (their own deleted), a queue's elements removed and by whom.
    fn zk_write(
        &mut self,
        s: SessionId,
        op: MultiOp,
        zxid: u64,
        fired: &mut Vec<zookeeper::Fired>,
    ) -> Result<MultiResult, ZkError> {
        let item = match op {
            MultiOp::Delete { path, .. } => {
                self.zk.node(path).map(|n| n.data.number().unwrap_or(0))
            }
            MultiOp::Check { .. } | MultiOp::Create { .. } | MultiOp::SetData { .. } => None,
        };
        let r = self.zk.apply_op(zxid, s, op, fired)?;
        match (r, op) {
            (MultiResult::Created { path, .. }, _) => {
                if let (Some(b), Some(_)) = (&mut self.barrier, self.line.0.member(path)) {
                    if let Err(at) = b.entered.binary_search(&s.client) {
                        b.entered.insert(at, s.client);
                    }
                }
            }
            (MultiResult::Deleted, MultiOp::Delete { path, .. }) => {
                let member = self.line.0.member(path);
                if let (Some(q), Some(item), Some(_)) = (&mut self.queue, item, member) {
                    q.removed.push((item, s.client));
                }
                let own = member.is_some_and(|c| c.guid.is_some_and(|g| g.client == s.client));
                if let (Some(b), true) = (&mut self.barrier, own) {
                    if let Err(at) = b.leaving.binary_search(&s.client) {
                        b.leaving.insert(at, s.client);
                    }
                }
            }
            (
                MultiResult::Checked
                | MultiResult::Deleted
                | MultiResult::Set(_)
                | MultiResult::RolledBack
                | MultiResult::Error(_)
                | MultiResult::RuntimeInconsistency,
                _,
            ) => {}
        }
        Ok(r)
    }

    /// Whether `req` of session `s` names no queue element, or the queue's
    /// head: the lowest element on which no other session holds a claim
    /// (`/taken/<element>`). The mark on a queue's replies (`fifo_order`),
    /// taken before the request changes anything.
    fn names_queue_head(&self, s: SessionId, req: &Request) -> bool {
        let named = |path: ZPath| self.line.0.member(path);
        let elements: smallvec::SmallVec<[Child; 1]> = match req {
            Request::GetData { path, .. } | Request::Delete { path, .. } => {
                named(*path).into_iter().collect()
            }
            // A multi's deletes (no recipe takes items with one).
            Request::Multi(ops) => ops
                .iter()
                .filter_map(|op| match *op {
                    MultiOp::Delete { path, .. } => named(path),
                    MultiOp::Check { .. } | MultiOp::Create { .. } | MultiOp::SetData { .. } => {
                        None
                    }
                })
                .collect(),
            Request::Connect
            | Request::Sync { .. }
            | Request::Create { .. }
            | Request::Exists { .. }
            | Request::GetChildren { .. }
            | Request::SetData { .. }
            | Request::LeaseGrant
            | Request::Txn(_)
            | Request::Range(_)
            | Request::Watch { .. }
            | Request::DeleteKey { .. }
            | Request::WatchRange { .. }
            | Request::LeaseRevoke
            | Request::LeaseKeepAlive
            | Request::LeaseTimeToLive { .. }
            | Request::Redis { .. }
            | Request::Consul(_) => smallvec::SmallVec::new(),
        };
        if elements.is_empty() {
            return true;
        }
        let claims = self.queue.as_ref().and_then(|q| q.claims);
        let taken_by_other = |c: Child| {
            claims.is_some_and(|dir| {
                self.zk
                    .node(ZPath::child(dir, c))
                    .is_some_and(|n| n.ephemeral_owner != Some(s))
            })
        };
        // Members come in sequence order: the first unclaimed is the head.
        let head = members(self.line.0, &self.zk).find(|c| !taken_by_other(*c));
        elements.iter().all(|e| head.is_none_or(|h| h == *e))
    }

    /// The last transaction id, as reply headers carry it. Each store serves
    /// one face at a time, so the sum is that face's zxid or revision (plus
    /// the other face's constant).
    pub fn header(&self) -> u64 {
        self.zk.zxid
            + self.etcd.revision
            + self.redis.incrs
            + self.consul.as_ref().map_or(0, |c| c.index)
    }

    /// Where session `s` is in `sessions` (`Err`: where it would go), as a
    /// binary search answers. Clients are numbered from 0 and most open one
    /// session, so client c's is usually at position c: that place is
    /// looked at first (a herd of thousands asks on every request and every
    /// notification, where a binary search is a dozen dependent loads).
    ///
    /// A session is its client's incarnation: an etcd lease is found by
    /// the id its client asked for before the grant numbered it, as by the
    /// id the store gave it (each incarnation is granted at most once, and
    /// the table sorts by client and incarnation first).
    fn find_session(&self, s: SessionId) -> Result<usize, usize> {
        let guess = usize::from(s.client);
        if self
            .sessions
            .get(guess)
            .is_some_and(|(id, _)| id.same_session(s))
        {
            return Ok(guess);
        }
        self.sessions
            .binary_search_by(|(id, _)| (id.client, id.incarnation).cmp(&(s.client, s.incarnation)))
    }

    /// Session `s` as the store knows it: an etcd lease with the id the
    /// store gave it (a client speaks in the id it asked for until the
    /// grant's reply reaches it), any other session as it is.
    pub fn known(&self, s: SessionId) -> SessionId {
        self.find_session(s).map_or(s, |i| self.sessions[i].0)
    }

    /// Whether session `s` was opened and has ended (expired or closed).
    /// A session not yet opened has not ended: its owner is still
    /// connecting.
    pub fn ended(&self, s: SessionId) -> bool {
        self.find_session(s).is_ok_and(|i| !self.sessions[i].1)
    }

    pub fn is_alive(&self, s: SessionId) -> bool {
        self.find_session(s).is_ok_and(|i| self.sessions[i].1)
    }

    /// `client`'s process is gone and a new one starts in its place (a
    /// crash-restart): the old process's connection closed, and with it
    /// every watch it had set — etcd's, which live on the connection
    /// whatever the lease, and ZooKeeper's, which the old session would
    /// re-register only on a reconnect of its own, which never comes. Its
    /// sessions live on until they expire or are closed; only their
    /// watches end. (The checker's crashes are for good: nothing is
    /// delivered to a crashed client, so it never calls this.)
    pub fn connection_closed(&mut self, client: crate::ids::ClientIdx) {
        self.etcd.watchers.retain(|w| w.client != client);
        self.etcd.range_watchers.retain(|w| w.client != client);
        self.zk.data_watches.retain(|(_, s)| s.client != client);
        self.zk.child_watches.retain(|(_, s)| s.client != client);
        self.redis.drop_waits(client);
        if let Some(c) = &mut self.consul {
            c.drop_queries(client);
        }
        if let Some(e) = &mut self.ensemble {
            e.connection_closed(client);
        }
    }

    /// Whether the store holds a reply for `client`'s request of `epoch`:
    /// a Redis `WAIT` the replica has not caught up with, an ensemble's
    /// write or `sync` its server has not applied yet.
    pub fn holds_reply(&self, client: crate::ids::ClientIdx, epoch: u8) -> bool {
        self.redis.holds_wait(client, epoch)
            || self
                .ensemble
                .as_ref()
                .is_some_and(|e| e.held_for(client).any(|h| h.connected && h.epoch == epoch))
    }

    /// Whether an ensemble's server holds any reply for `client` (a write
    /// or `sync` it has not applied yet).
    fn holds_any_reply(&self, client: crate::ids::ClientIdx) -> bool {
        self.ensemble
            .as_ref()
            .is_some_and(|e| e.held_for(client).any(|h| h.connected))
    }

    /// Whether `session`'s ZooKeeper server answers none of its pings now:
    /// it holds a request of the session on its connection, and a server
    /// answers a session's requests in order, pings too (its commit
    /// processor queues them behind the session's pending write or `sync`;
    /// measured on a real muted follower). An etcd keepalive is a stream of
    /// its own.
    pub fn pings_wait(&self, session: SessionId) -> bool {
        self.ensemble.as_ref().is_some_and(|e| {
            !e.cfg.0.leases
                && e.held_for(session.client)
                    .any(|h| h.connected && h.session.same_session(session))
        })
    }

    /// Whether `session`'s ZooKeeper server is silent to it for as long as
    /// its link to the leader stays as it is: it holds a request of the
    /// session (and so its pings' answers) for a leader it cannot reach —
    /// cut off, muted, or a deposed leader's proposal no quorum takes. The
    /// client's read timeout then runs out, and it gives the connection up
    /// (measured: within its read timeout of the write, on a real follower
    /// the leader stopped hearing). A follower that merely lags is not:
    /// the untimed checker bounds a lag by entries, not by time, and
    /// leaves a lag past the read timeout to the simulator.
    pub fn silent_to(&self, session: SessionId) -> bool {
        let client = session.client;
        self.pings_wait(session)
            && match self.link_of(client) {
                LeaderLink::Cut | LeaderLink::Muted | LeaderLink::Deposed => true,
                LeaderLink::Up | LeaderLink::Down => false,
            }
    }

    /// The follower `client` is connected to (`None`: the leader, or one
    /// server).
    pub fn follower_of(&self, client: crate::ids::ClientIdx) -> Option<usize> {
        self.ensemble.as_ref().and_then(|e| e.follower_of(client))
    }

    /// Whether `client`'s reconnect now lands on another server that
    /// follows the leader (or is the leader): one that would answer it.
    pub fn another_server_answers(&self, client: crate::ids::ClientIdx) -> bool {
        self.ensemble.as_ref().is_some_and(|e| {
            let to = e.next_server(client);
            e.cfg.0.clients_move && to != e.server(client) && e.link(to) == LeaderLink::Up
        })
    }

    /// The link to the leader of `client`'s server (up on one server).
    pub fn link_of(&self, client: crate::ids::ClientIdx) -> LeaderLink {
        self.ensemble
            .as_ref()
            .map_or(LeaderLink::Up, |e| e.link(e.server(client)))
    }

    /// The state of follower `f` (`None`: the leader's, this one).
    pub fn server(&self, f: Option<usize>) -> &StoreState {
        match (f, &self.ensemble) {
            (Some(f), Some(e)) => &e.followers[f].view,
            (None, _) | (_, None) => self,
        }
    }

    fn server_mut(&mut self, f: Option<usize>) -> &mut StoreState {
        match (f, self.ensemble.is_some()) {
            (Some(f), true) => &mut self.ensemble.as_mut().expect("an ensemble").followers[f].view,
            (None, _) | (_, false) => self,
        }
    }

    /// `client` cancels its etcd watches (its close), on the server that
    /// holds them.
    pub fn cancel_etcd_watches(&mut self, client: crate::ids::ClientIdx) {
        let f = self.follower_of(client);
        let server = self.server_mut(f);
        server.etcd.watchers.retain(|w| w.client != client);
        server.etcd.range_watchers.retain(|w| w.client != client);
    }

    /// `client`'s connection dropped and it reconnects: the replies its
    /// server held for the old connection are not sent (the requests still
    /// order the session's later ones; its session and watches stay).
    fn connection_dropped(&mut self, client: crate::ids::ClientIdx) {
        if let Some(e) = &mut self.ensemble {
            for f in &mut e.followers {
                // What was never passed on goes with the connection.
                f.held
                    .retain(|h| !(h.session.client == client && h.owed.is_lost()));
                for h in &mut f.held {
                    if h.session.client == client {
                        h.connected = false;
                    }
                }
            }
        }
    }

    /// Whether the client that opened `s` has opened a newer session since.
    pub fn superseded(&self, s: SessionId) -> bool {
        let next = match self.find_session(s) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        self.sessions
            .get(next)
            .is_some_and(|(later, _)| later.client == s.client)
    }

    /// Opens a session; false if the id was used before (a reconnect to an
    /// existing or expired session is not a new session).
    pub fn open_session(&mut self, s: SessionId) -> bool {
        match self.find_session(s) {
            Ok(_) => false,
            Err(at) => {
                self.sessions.insert(at, (s, true));
                true
            }
        }
    }

    /// `LeaseGrant` for session `s`: the lease granted to this session
    /// before (a grant asked again, after a lost reply or an expiry, is
    /// that lease, alive again), else a new one — numbered in grant order
    /// ([`LeaseIds::InGrantOrder`]), so keys named by leases sort by when
    /// their leases were granted, not by who holds them, or by client
    /// ([`LeaseIds::ByClient`]: the id `s` asked for). `None` once
    /// [`MAX_GRANTS`] are granted.
    fn grant_lease(&mut self, s: SessionId) -> Option<SessionId> {
        let at = match self.find_session(s) {
            Ok(i) => {
                self.sessions[i].1 = true;
                return Some(self.sessions[i].0);
            }
            Err(at) => at,
        };
        let lease = match self.leases.0 {
            LeaseIds::ByClient => s,
            // An etcd store's sessions are all leases, each granted once.
            LeaseIds::InGrantOrder => s.granted(
                u32::try_from(self.sessions.len() + 1)
                    .ok()
                    .filter(|&g| g <= MAX_GRANTS)?,
            ),
        };
        self.sessions.insert(at, (lease, true));
        Some(lease)
    }

    /// Ends a live session (expired, or closed by its owner): deletes its
    /// ephemerals and lease keys and returns the notifications that fire, in
    /// order.
    pub fn end_session(&mut self, s: SessionId, end: SessionEnd) -> Vec<(SessionId, WatchEvent)> {
        self.end_session_full(s, end).0
    }

    /// A follower applies committed `entry` to this view of the store: the
    /// notifications that fire.
    pub fn apply_entry(&mut self, entry: &Entry) -> Vec<(SessionId, WatchEvent)> {
        match entry {
            // The leader checked the session when it committed the write;
            // a follower applies it as it comes (ZooKeeper's followers do
            // not check sessions on a commit), even of a session it does
            // not know: another server's local session, whose persistent
            // creates and deletes the leader lets through.
            Entry::Apply { session, req } => self.apply_as(*session, req, Checked::ByLeader).fired,
            Entry::Refused { .. } => Vec::new(),
            Entry::End { session, expired } => {
                self.end_session_full(*session, ensemble::end_of(*expired))
                    .0
            }
        }
    }

    /// [`StoreState::end_session`], and the Consul lock-delays it starts.
    pub fn end_session_full(
        &mut self,
        s: SessionId,
        end: SessionEnd,
    ) -> (Vec<(SessionId, WatchEvent)>, consul::Effects) {
        let Ok(i) = self.find_session(s) else {
            return Default::default();
        };
        if !self.sessions[i].1 {
            return Default::default();
        }
        self.sessions[i].1 = false;
        // Queue elements that go with the session (only a recipe that
        // enqueues ephemeral elements has any) leave the queue too.
        if let Some(q) = &mut self.queue {
            for (path, node) in &self.zk.nodes {
                if let (Some(_), Some(owner)) = (self.line.0.member(*path), node.ephemeral_owner) {
                    if owner == s {
                        q.removed.push((node.data.number().unwrap_or(0), s.client));
                    }
                }
            }
        }
        let mut out = Vec::new();
        let mut zk_fired = Vec::new();
        self.zk.end_session(s, end, &mut zk_fired);
        zk_notifications(zk_fired, &mut out);
        let mut etcd_fired = Vec::new();
        self.etcd.expire(s, &mut etcd_fired);
        etcd_notifications(etcd_fired, &mut out);
        let mut consul = consul::Effects::default();
        if let Some(c) = &mut self.consul {
            c.invalidate(s, &mut consul);
            consul_notifications(&mut consul, &mut out);
        }
        self.refresh_first_in_line();
        (out, consul)
    }

    /// Applies one request of session `s` and returns the reply and the
    /// notifications it fires, in order.
    pub fn apply(&mut self, s: SessionId, req: &Request) -> (Reply, Vec<(SessionId, WatchEvent)>) {
        let Applied { reply, fired, .. } = self.apply_full(s, req);
        (reply, fired)
    }

    /// [`StoreState::apply`], and what the request did to a Redis key's
    /// TTL (the store actor arms or cancels the key's timer by it).
    pub fn apply_full(&mut self, s: SessionId, req: &Request) -> Applied {
        self.apply_as(s, req, Checked::Here)
    }

    /// [`StoreState::apply_full`], with the session checked here or, for a
    /// committed write a follower applies, already by the leader.
    fn apply_as(&mut self, s: SessionId, req: &Request, checked: Checked) -> Applied {
        let mut out = Vec::new();
        let mut ttl = None;
        let mut consul = consul::Effects::default();
        let reply = match req {
            Request::Consul(ConsulCmd::SessionCreate(opts)) => {
                Reply::Consul(if self.open_session(s) {
                    if let Some(c) = &mut self.consul {
                        c.created(s, *opts);
                    }
                    ConsulReply::SessionCreated
                } else if self.is_alive(s) {
                    ConsulReply::SessionCreated
                } else {
                    ConsulReply::InvalidSession
                })
            }
            Request::Consul(ConsulCmd::SessionDestroy) => {
                // Invalidated as an expiry would: its keys released (or
                // deleted) under its lock-delay. Destroying a session that
                // is gone answers `true` too.
                (out, consul) = self.end_session_full(s, SessionEnd::Closed);
                Reply::Consul(ConsulReply::SessionDestroyed)
            }
            Request::Consul(cmd) => {
                let alive = self.is_alive(s);
                match &mut self.consul {
                    Some(c) => {
                        let reply = c.apply(s, alive, *cmd, &mut consul);
                        consul_notifications(&mut consul, &mut out);
                        Reply::Consul(reply)
                    }
                    None => Reply::Consul(ConsulReply::InvalidSession),
                }
            }
            Request::Redis { master, cmd } => {
                let (reply, change) = self.redis.apply(s, *master, *cmd);
                ttl = change.map(|c| (*master, c));
                Reply::Redis(reply)
            }
            Request::Connect => {
                if self.open_session(s) || self.is_alive(s) {
                    Reply::Connected
                } else {
                    Reply::Error(ZkError::SessionExpired)
                }
            }
            Request::LeaseGrant => match self.grant_lease(s) {
                Some(lease) => Reply::LeaseGranted { lease },
                // etcd's answer when it cannot make a lease.
                None => Reply::LeaseNotFound,
            },
            // etcd's answers for a lease that is gone: revoke and
            // keepalive fail, `TimeToLive` says so (TTL -1).
            Request::LeaseRevoke | Request::LeaseKeepAlive if !self.is_alive(s) => {
                Reply::LeaseNotFound
            }
            Request::LeaseRevoke => {
                // As an expiry: the lease's keys in one revision, their
                // watchers told; the id is free for a grant again.
                out = self.end_session(s, SessionEnd::Closed);
                Reply::LeaseRevoked
            }
            Request::LeaseKeepAlive => Reply::LeaseKeptAlive,
            Request::LeaseTimeToLive { lease, keys } => {
                let alive = self.is_alive(*lease);
                Reply::LeaseTtl {
                    alive,
                    keys: if alive && *keys {
                        self.etcd.leased(*lease)
                    } else {
                        Vec::new()
                    },
                }
            }
            _ if checked == Checked::Here && is_zookeeper(req) && !self.is_alive(s) => {
                Reply::Error(ZkError::SessionExpired)
            }
            Request::Create { .. } | Request::Delete { .. } | Request::SetData { .. } => {
                let op = MultiOp::of(req).expect("a create, delete or set_data is a multi op");
                let mut fired = Vec::new();
                let r = self.zk_write(s, op, self.zk.zxid + 1, &mut fired);
                zk_notifications(fired, &mut out);
                r.map_or_else(Reply::Error, MultiResult::single_reply)
            }
            Request::Multi(ops) => {
                // All or none: the ops run on the store as it is, and on
                // a failure what they changed is put back (watches they
                // fired included: none is told).
                let before = (self.zk.clone(), self.barrier.clone(), self.queue.clone());
                // One transaction: every op's zxid is the multi's.
                let zxid = self.zk.zxid + 1;
                let mut fired = Vec::new();
                let mut results = Vec::with_capacity(ops.len());
                let mut failed = None;
                for (at, op) in ops.iter().enumerate() {
                    match self.zk_write(s, *op, zxid, &mut fired) {
                        Ok(r) => results.push(r),
                        Err(e) => {
                            failed = Some((at, e));
                            break;
                        }
                    }
                }
                match failed {
                    Some((at, e)) => {
                        (self.zk, self.barrier, self.queue) = before;
                        Reply::Multi(MultiResult::failed_at(ops.len(), at, e))
                    }
                    None => {
                        // Checks alone are a transaction too; an empty
                        // multi changes nothing.
                        if !ops.is_empty() {
                            self.zk.zxid = zxid;
                        }
                        zk_notifications(fired, &mut out);
                        Reply::Multi(results)
                    }
                }
            }
            // One server: every change it has is the leader's.
            Request::Sync { .. } => Reply::Synced,
            Request::Exists { path, watch } => {
                Reply::Stat(self.zk.exists(*path, watch.then_some(s)))
            }
            Request::GetData { path, watch } => match self.zk.get_data(*path, watch.then_some(s)) {
                Ok(stat) => Reply::Stat(Some(stat)),
                Err(e) => Reply::Error(e),
            },
            Request::GetChildren { path, watch } => {
                match self.zk.get_children(*path, watch.then_some(s)) {
                    Ok(children) => Reply::Children(children),
                    Err(e) => Reply::Error(e),
                }
            }
            Request::Txn(txn) => {
                let puts_dead_lease = txn.success.iter().chain(&txn.failure).any(
                    |op| matches!(op, TxnOp::Put { lease: Some(l), .. } if !self.is_alive(*l)),
                );
                if puts_dead_lease {
                    Reply::LeaseNotFound
                } else {
                    let mut fired = Vec::new();
                    let (succeeded, responses) = self.etcd.txn(txn, &mut fired);
                    etcd_notifications(fired, &mut out);
                    Reply::TxnResult {
                        succeeded,
                        revision: self.etcd.revision,
                        responses,
                    }
                }
            }
            Request::Range(r) => match r.only {
                RangeOnly::Count => Reply::RangeCount {
                    revision: self.etcd.revision,
                    count: self.etcd.count(r.keys),
                },
                RangeOnly::Kvs | RangeOnly::Keys => Reply::RangeResult {
                    revision: self.etcd.revision,
                    kvs: self.etcd.range(r),
                },
            },
            Request::Watch {
                key,
                start_revision,
            } => {
                let mut fired = Vec::new();
                self.etcd.watch(s.client, *key, *start_revision, &mut fired);
                etcd_notifications(fired, &mut out);
                Reply::WatchCreated {
                    revision: self.etcd.revision,
                }
            }
            Request::WatchRange {
                keys,
                start_revision,
            } => {
                let mut fired = Vec::new();
                self.etcd
                    .watch_range(s.client, *keys, *start_revision, &mut fired);
                etcd_notifications(fired, &mut out);
                Reply::WatchCreated {
                    revision: self.etcd.revision,
                }
            }
            Request::DeleteKey { key } => {
                let mut fired = Vec::new();
                let (revision, deleted) = self.etcd.delete(*key, &mut fired);
                etcd_notifications(fired, &mut out);
                Reply::DeleteResult { revision, deleted }
            }
        };
        let keeps_a_line = self.redis.is_empty() && self.consul.is_none();
        if matches!(req.kind().class(), crate::msg::RequestClass::Writes) && keeps_a_line {
            self.refresh_first_in_line();
        }
        Applied {
            reply,
            fired: out,
            ttl,
            consul,
        }
    }
}

/// What one request did: its reply, the notifications it fired, in
/// order, and what it did to a Redis key's TTL (on which master).
pub struct Applied {
    pub reply: Reply,
    pub fired: Vec<(SessionId, WatchEvent)>,
    pub ttl: Option<(u8, TtlChange)>,
    /// Consul: the lock-delays started and the blocking query held.
    pub consul: consul::Effects,
}

/// Who checks that a request's session lives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checked {
    /// The server that takes the request.
    Here,
    /// The leader, which committed it: a follower applies it as it comes.
    ByLeader,
}

/// Consul: the held queries a call answered, as notifications to their
/// clients' connections.
fn consul_notifications(fx: &mut consul::Effects, out: &mut Vec<(SessionId, WatchEvent)>) {
    out.extend(
        fx.fired
            .drain(..)
            .map(|(client, event)| (SessionId::first(client), event)),
    );
}

/// The line's members in sequence order.
fn members(line: Line, tree: &ZkTree) -> impl Iterator<Item = Child> + '_ {
    let dir = match line.path {
        ZPath::Fixed(dir) => Some(dir),
        ZPath::Node { .. } => None,
    };
    dir.into_iter().flat_map(|d| tree.generated_children(d))
}

fn is_zookeeper(req: &Request) -> bool {
    matches!(
        req,
        Request::Create { .. }
            | Request::Delete { .. }
            | Request::Exists { .. }
            | Request::GetData { .. }
            | Request::GetChildren { .. }
            | Request::SetData { .. }
            | Request::Multi(_)
            | Request::Sync { .. }
    )
}

/// Sets follower `f`'s link to the leader.
fn set_link(state: &mut Cow<StoreState>, f: usize, link: LeaderLink) {
    if let Some(e) = state.to_mut().ensemble.as_mut() {
        if let Some(fo) = e.followers.get_mut(f) {
            fo.link = link;
        }
    }
}

/// Whether the store keeps its clients' last seen positions: an ensemble
/// whose clients move on a reconnect.
fn tracks_positions(state: &StoreState) -> bool {
    state
        .ensemble
        .as_ref()
        .is_some_and(|e| e.cfg.0.clients_move)
}

/// Whether `req` creates an ephemeral node.
fn creates_ephemeral(req: &Request) -> bool {
    match req {
        Request::Create { ephemeral, .. } => *ephemeral,
        Request::Multi(ops) => ops.iter().any(|op| {
            matches!(
                op,
                MultiOp::Create {
                    ephemeral: true,
                    ..
                }
            )
        }),
        Request::Exists { .. }
        | Request::GetData { .. }
        | Request::GetChildren { .. }
        | Request::Sync { .. }
        | Request::Connect
        | Request::Delete { .. }
        | Request::SetData { .. }
        | Request::Watch { .. }
        | Request::WatchRange { .. }
        | Request::Range(_)
        | Request::LeaseTimeToLive { .. }
        | Request::LeaseGrant
        | Request::LeaseRevoke
        | Request::LeaseKeepAlive
        | Request::Txn(_)
        | Request::DeleteKey { .. }
        | Request::Redis { .. }
        | Request::Consul(_) => false,
    }
}

fn zk_notifications(fired: Vec<zookeeper::Fired>, out: &mut Vec<(SessionId, WatchEvent)>) {
    out.extend(
        fired
            .into_iter()
            .map(|(s, kind, path)| (s, WatchEvent::Zk { kind, path })),
    );
}

fn etcd_notifications(fired: Vec<etcd::Fired>, out: &mut Vec<(SessionId, WatchEvent)>) {
    // etcd watches belong to a connection, not a lease; the envelope only
    // needs the client, so the watcher's incarnation is irrelevant here.
    out.extend(fired.into_iter().map(|(client, kind, key, revision)| {
        (
            SessionId::first(client),
            WatchEvent::Etcd {
                kind,
                key,
                revision,
            },
        )
    }));
}

fn send_notifications(o: &mut Out<Store>, state: &StoreState, fired: Vec<(SessionId, WatchEvent)>) {
    send_notifications_at(o, state, state.header(), fired);
}

/// The change each watch moved from server slot `from` to `to` fires
/// for, as its header ([`changes_since`], from where `from` stands). A
/// watch moved off the leader, which has applied everything, is counted
/// with `to`'s latest change.
fn changes_of_moved(
    state: &StoreState,
    from: Option<usize>,
    to: Option<usize>,
    moved: Vec<(zookeeper::Fired, zookeeper::WatchKind)>,
) -> Vec<(u64, zookeeper::Fired)> {
    let latest = state.server(to).header();
    let (Some(f), Some(e)) = (from, state.ensemble.as_ref()) else {
        return moved
            .into_iter()
            .map(|(fired, _)| (latest, fired))
            .collect();
    };
    let position = |slot: Option<usize>| slot.map_or(e.committed(), |f| e.followers[f].applied);
    let was = &e.followers[f].view;
    let entries = e.log_between(position(Some(f)), position(to));
    changes_since(was, entries, latest, moved)
}

/// The change each watch moved off a server whose view was `was` fires
/// for on a server that has applied `entries` more, as its header: the
/// first of them that changes what the watch is on — the change that
/// would have fired it there, had the client stayed (found by replaying
/// them on a copy of `was`). One that none changes is counted with
/// `latest`.
fn changes_since(
    was: &StoreState,
    entries: &[Entry],
    latest: u64,
    moved: Vec<(zookeeper::Fired, zookeeper::WatchKind)>,
) -> Vec<(u64, zookeeper::Fired)> {
    // One replay, entry by entry; a watch is the first entry's whose
    // change it sees.
    let mut found: Vec<Option<u64>> = vec![None; moved.len()];
    if !moved.is_empty() {
        let mut replay = was.clone();
        for entry in entries {
            if found.iter().all(Option::is_some) {
                break;
            }
            replay.apply_entry(entry);
            for ((fired, kind), header) in moved.iter().zip(&mut found) {
                if header.is_none() && kind.fires(&was.zk, &replay.zk, fired.2).is_some() {
                    *header = Some(replay.header());
                }
            }
        }
    }
    moved
        .into_iter()
        .zip(found)
        .map(|((fired, _), header)| (header.unwrap_or(latest), fired))
        .collect()
}

/// The sessions of `client` with a watch in `tree` that have ended at
/// the leader (`state`): on a reconnect they are told so, and their
/// watches are not set again.
fn ended_watching(
    state: &StoreState,
    tree: &ZkTree,
    client: crate::ids::ClientIdx,
) -> Vec<SessionId> {
    let mut sessions = tree.watching_sessions(client);
    sessions.retain(|s| state.ended(*s));
    sessions
}

/// [`send_notifications`] from a server whose last transaction is
/// `header` (a follower's); the marks are the leader's.
fn send_notifications_at(
    o: &mut Out<Store>,
    state: &StoreState,
    header: u64,
    fired: Vec<(SessionId, WatchEvent)>,
) {
    for (s, event) in fired {
        // A ZooKeeper watch belongs to its session's connection; once the
        // client has opened a newer session, the old connection is gone and
        // its watch events reach no one (an abandoned but unexpired session,
        // as Curator leaves behind). etcd watches live on the client's one
        // connection, whatever the lease.
        if matches!(event, WatchEvent::Zk { .. }) && state.superseded(s) {
            continue;
        }
        let owns_first = state.event_mark(s.client, &event);
        o.send(
            client_id(s.client),
            Msg::Notify {
                header,
                owns_first,
                event,
            },
        );
    }
}

impl Actor for Store {
    type Msg = Msg;
    type Timer = Timer;
    type State = StoreState;
    type Storage = ();
    type Random = ();

    fn on_start(&self, _id: Id, _storage: &Option<()>, _o: &mut Out<Self>) -> StoreState {
        self.initial_state()
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<StoreState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        let Some(client) = client_of(src) else {
            return;
        };
        match msg {
            Msg::Request {
                session,
                epoch,
                req,
                release,
            } => {
                if session.client != client {
                    return; // a client speaks only in its own sessions
                }
                let session = state.known(session);
                // A `WAIT` the replica has not caught up with is answered
                // later: by `replicate`, or `Down` when its connection breaks.
                if let Request::Redis { master, cmd } = &req {
                    if state.redis.holds_back(*master, *cmd) {
                        state.to_mut().redis.hold_wait(session, epoch);
                        return;
                    }
                }
                // In an ensemble a read is its server's, a `sync` waits for
                // its server, and a write is committed by the leader and
                // answered by its server once applied there.
                let route = state.ensemble.as_ref().map(|_| Route::of(&req));
                let follower = state.follower_of(client);
                let link = state.link_of(client);
                let opens_locally = matches!(req, Request::Connect)
                    && state
                        .ensemble
                        .as_ref()
                        .is_some_and(|e| e.cfg.0.local_sessions);
                match (link, route) {
                    (LeaderLink::Up, _) => {}
                    // A cut-off follower serves reads from its own view and
                    // opens a local session by itself; what it would pass
                    // to the leader is lost. One that is down takes nothing.
                    // A muted one serves them as one cut off does (its
                    // view is fresh: it still applies the leader's
                    // commits), and renews nothing at the leader.
                    (LeaderLink::Cut | LeaderLink::Muted, Some(Route::Local)) => {
                        let f = follower.expect("a follower");
                        return self.serve_locally(state, f, session, epoch, &req, o);
                    }
                    (LeaderLink::Cut | LeaderLink::Muted, _) if opens_locally => {}
                    // A deposed leader serves reads as a cut-off follower
                    // does, and answers a `sync` at once: it believes it
                    // leads (ZOOKEEPER-1675).
                    (LeaderLink::Deposed, Some(Route::Local)) => {
                        let f = follower.expect("a follower");
                        return self.serve_locally(state, f, session, epoch, &req, o);
                    }
                    (LeaderLink::Deposed, Some(Route::Sync)) => {
                        return self.sync(state, follower, session, epoch, o);
                    }
                    (LeaderLink::Cut | LeaderLink::Deposed | LeaderLink::Muted, _) => {
                        let f = follower.expect("a follower");
                        let held = Held {
                            at: u64::MAX,
                            session,
                            epoch,
                            owed: Owed::Lost { req, release },
                            head: None,
                            connected: true,
                        };
                        let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
                        return e.hold(f, held);
                    }
                    (LeaderLink::Down, _) => return,
                }
                if let (Request::Connect, Some(_)) = (&req, &state.ensemble) {
                    let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
                    // A new handle has seen nothing.
                    e.seen[usize::from(client)] = 0;
                    if let (Some(f), true) = (follower, e.cfg.0.local_sessions) {
                        return self.open_local(state, f, session, epoch, o);
                    }
                }
                if let (Some(f), Some(Route::Local)) = (follower, route) {
                    self.renew_if_heard(state, session, &req, o);
                    return self.serve_locally(state, f, session, epoch, &req, o);
                }
                if let Some(Route::Sync) = route {
                    self.renew_if_heard(state, session, &req, o);
                    return self.sync(state, follower, session, epoch, o);
                }
                // A queue marks a reply by what the request named, as the
                // store was before it.
                let head = state
                    .queue
                    .is_some()
                    .then(|| state.names_queue_head(session, &req));
                let asked = session;
                self.upgrade_if_ephemeral(state, session, &req, o);
                let Applied {
                    reply,
                    fired,
                    ttl,
                    consul,
                } = state.to_mut().apply_full(session, &req);
                if let Some((master, change)) = ttl {
                    key_timer(o, master, change);
                }
                consul_timers(o, &consul, &fired);
                // A lease granted now is known by the id the store gave
                // it: its expiry timer too.
                let session = state.known(session);
                self.renew_if_heard(state, session, &req, o);
                // A revoked lease's (a destroyed session's) expiry has
                // nothing left to end.
                let ends = matches!(
                    req,
                    Request::LeaseRevoke | Request::Consul(ConsulCmd::SessionDestroy)
                );
                if ends && !state.is_alive(session) {
                    o.cancel_timer(Timer::Expiry(session));
                }
                // A ZooKeeper write, or the reconnect of a session, whose
                // session has ended: the leader refuses it, and no server
                // applies it.
                let zookeeper = is_zookeeper(&req) || req == Request::Connect;
                let refused = zookeeper && reply == Reply::Error(ZkError::SessionExpired);
                let entry = match (route == Some(Route::Committed), refused) {
                    (false, _) => None,
                    (true, true) => Some(Entry::Refused {
                        session: asked,
                        req,
                    }),
                    (true, false) => Some(Entry::Apply {
                        session: asked,
                        req,
                    }),
                };
                // A follower answers a committed write once it has
                // applied it.
                let entry = match (follower, entry) {
                    (Some(f), Some(entry)) => {
                        send_notifications(o, state, fired);
                        let at = self.commit(state, entry, o);
                        let held = Held {
                            at,
                            session,
                            epoch,
                            owed: Owed::Reply(reply),
                            head,
                            connected: true,
                        };
                        return self.hold_or_answer(state, f, held, o);
                    }
                    (_, entry) => entry,
                };
                let header = state.header();
                let owns_first = head.unwrap_or_else(|| state.reply_mark(session, &reply));
                o.send(
                    src,
                    Msg::Reply {
                        epoch,
                        header,
                        owns_first,
                        reply,
                    },
                );
                send_notifications(o, state, fired);
                if let Some(entry) = entry {
                    self.commit(state, entry, o);
                }
                // The reply carries the leader's position, its write's
                // included.
                if tracks_positions(state) {
                    let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
                    e.replied(client, e.leader);
                }
            }
            Msg::Close { session }
                if session.client == client && state.link_of(client) != LeaderLink::Up => {}
            Msg::Close { session } if session.client == client => {
                // A lease given up before its grant's reply came: the
                // store's id, whose expiry is the one to cancel.
                let session = state.known(session);
                let st = state.to_mut();
                st.cancel_etcd_watches(client);
                if st.is_alive(session) {
                    let (fired, consul) = st.end_session_full(session, SessionEnd::Closed);
                    o.cancel_timer(Timer::Expiry(session));
                    consul_timers(o, &consul, &fired);
                    send_notifications(o, state, fired);
                    if state.ensemble.is_some() {
                        let end = Entry::End {
                            session,
                            expired: false,
                        };
                        self.commit(state, end, o);
                    }
                }
            }
            Msg::Ping { session } if session.client == client => {
                // A cut-off follower answers from its view and passes
                // nothing on; one that is down answers nothing.
                let link = state.link_of(client);
                let leases = state.ensemble.as_ref().is_some_and(|e| e.cfg.0.leases);
                if link == LeaderLink::Down || (link == LeaderLink::Cut && leases) {
                    return;
                }
                if state.is_alive(session) && self.sessions_expire && link == LeaderLink::Up {
                    o.set_timer(Timer::Expiry(state.known(session)), self.timeout_range());
                }
                // A follower answers from what it has applied: a session
                // the leader has ended lives there until the end's entry;
                // one it has not heard of yet (a client that moved to it)
                // it asked the leader about when the client connected.
                let server = state.server(state.follower_of(client));
                let alive = match server.ended(session) {
                    true => false,
                    false => server.is_alive(session) || state.is_alive(session),
                };
                if alive {
                    // The answer waits behind the session's held request;
                    // it is not sent after it either: that request's reply
                    // is word from the server, and renews what a pong would.
                    if !state.pings_wait(session) {
                        o.send(src, Msg::Pong { session });
                    }
                } else {
                    o.send(src, Msg::Expired { session });
                }
            }
            // A client speaks only in its own sessions.
            Msg::Close { .. } | Msg::Ping { .. } => {}
            // Sent by the store, or to the resource: never to the store.
            Msg::Reply { .. }
            | Msg::Pong { .. }
            | Msg::Notify { .. }
            | Msg::Expired { .. }
            | Msg::Write { .. }
            | Msg::WriteAck { .. } => {}
        }
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<StoreState>, timer: &Timer, o: &mut Out<Self>) {
        if let Timer::KeyTtl { master, key } = *timer {
            state.to_mut().redis.expire(master, key);
        }
        if let Timer::Expiry(session) = *timer {
            self.invalidate(state, session, o);
        }
        if let Timer::LockDelay { key } = *timer {
            if let Some(c) = &mut state.to_mut().consul {
                c.end_delay(key);
            }
        }
        if let Timer::QueryWait { client } = *timer {
            let answer = state
                .to_mut()
                .consul
                .as_mut()
                .and_then(|c| c.time_out_query(client));
            if let Some((client, event)) = answer {
                send_notifications(o, state, vec![(SessionId::first(client), event)]);
            }
        }
    }

    fn name(&self) -> String {
        "store".into()
    }
}

impl Store {
    /// When a silent session expires: its timeout; a Consul session
    /// anywhere from its TTL to twice its TTL.
    fn timeout_range(&self) -> std::ops::Range<Duration> {
        if self.consul {
            self.session_timeout..self.session_timeout * 2
        } else {
            exactly(self.session_timeout)
        }
    }

    /// Session `session` ends as an expiry ends it (its timer ran out;
    /// a Consul node check went critical): what it held goes, watchers
    /// and held queries are told, and — where the store tells — its owner.
    pub fn invalidate(&self, state: &mut Cow<StoreState>, session: SessionId, o: &mut Out<Self>) {
        if !state.is_alive(session) {
            return;
        }
        let (fired, consul) = state
            .to_mut()
            .end_session_full(session, SessionEnd::Expired);
        consul_timers(o, &consul, &fired);
        send_notifications(o, state, fired);
        // A follower's client hears of it when its server applies it.
        let on_follower = state.follower_of(session.client).is_some();
        if state.ensemble.is_some() {
            let end = Entry::End {
                session,
                expired: true,
            };
            self.commit(state, end, o);
        }
        if self.tell_expiry && !on_follower {
            o.send(client_id(session.client), Msg::Expired { session });
        }
    }

    /// Consul: `session`'s node check goes critical: the session is
    /// invalidated at once, whatever its TTL.
    pub fn check_critical(
        &self,
        state: &mut Cow<StoreState>,
        session: SessionId,
        o: &mut Out<Self>,
    ) {
        o.cancel_timer(Timer::Expiry(session));
        self.invalidate(state, session, o);
    }

    /// Redis: `master` restarts. Without persistence it comes back empty
    /// (its keys' TTLs with them); with `appendfsync always` it loses
    /// nothing.
    pub fn restart_master(&self, state: &mut Cow<StoreState>, master: u8, o: &mut Out<Self>) {
        let empty = state
            .redis
            .masters
            .get(usize::from(master))
            .is_none_or(|m| m.keys.is_empty());
        // The restart breaks every connection: a `WAIT` held there fails.
        if master == 0 {
            break_waits(state, o);
        }
        if self.deployment.persistence == Persistence::AppendfsyncAlways || empty {
            return;
        }
        for (key, _) in state.redis.with_ttl(master) {
            key_timer(o, master, TtlChange::Cleared { key });
        }
        state.to_mut().redis.empty_master(master);
    }

    /// Redis: `master`'s clock jumps forward past its keys' TTLs: every
    /// key with one expires at once.
    pub fn jump_clock(&self, state: &mut Cow<StoreState>, master: u8, o: &mut Out<Self>) {
        for (key, _) in state.redis.with_ttl(master) {
            state.to_mut().redis.expire(master, key);
            key_timer(o, master, TtlChange::Cleared { key });
        }
    }

    /// Redis: the replica receives the first master's oldest change it has
    /// not yet (returned, if there was one); a `WAIT` it caught up with is
    /// answered: one replica.
    pub fn replicate(
        &self,
        state: &mut Cow<StoreState>,
        o: &mut Out<Self>,
    ) -> Option<redis::Replicated> {
        let pending = state
            .redis
            .replica
            .as_ref()
            .is_some_and(|r| !r.backlog.is_empty());
        if !pending {
            return None;
        }
        let st = state.to_mut();
        let change = st.redis.replicate_one();
        let caught_up = st.redis.take_waits(true);
        for w in caught_up {
            answer_wait(o, state, w, RedisReply::Int(1));
        }
        change
    }

    /// Redis: the replica is promoted in the first master's place; what it
    /// had not received is lost. The promoted keys' TTLs run from now
    /// (Redis keeps a key's expiry time across a failover; the model
    /// gives it its whole TTL again).
    pub fn fail_over(&self, state: &mut Cow<StoreState>, o: &mut Out<Self>) {
        if state.consul.is_some() {
            return self.consul_fail_over(state, o);
        }
        if state.redis.replica.is_none() {
            return;
        }
        // Sentinel turns the old master into a replica, which unblocks
        // its blocked clients with an error: a held `WAIT` fails.
        break_waits(state, o);
        for (key, _) in state.redis.with_ttl(0) {
            key_timer(o, 0, TtlChange::Cleared { key });
        }
        state.to_mut().redis.fail_over();
        for (key, ms) in state.redis.with_ttl(0) {
            key_timer(o, 0, TtlChange::Armed { key, ms });
        }
    }
}

/// What an election did (`Store::elect`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elected {
    /// The server that leads now.
    pub leader: u8,
    /// The clients whose servers closed their connections (ZooKeeper's).
    pub reconnect: Vec<crate::ids::ClientIdx>,
    /// An etcd member passed on a release it held without a leader.
    pub passed_on_release: bool,
}

/// A replicated store's steps.
impl Store {
    /// Appends `entry` to the leader's log and returns its position; a
    /// follower left more than the bound behind applies its oldest first.
    fn commit(&self, state: &mut Cow<StoreState>, entry: Entry, o: &mut Out<Self>) -> u64 {
        let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
        e.commit(entry);
        let at = e.committed();
        let max = u64::from(e.max_lag.0);
        for f in 0..e.followers.len() {
            while state.ensemble.as_ref().is_some_and(|e| e.lag(f) > max) {
                if self.apply_next(state, f, o).is_none() {
                    break; // cut off from the leader: it hears nothing
                }
            }
        }
        at
    }

    /// Follower `f` applies the next entry of the log: the watches set
    /// there fire, the replies it held for it go out, and a client whose
    /// session it ended hears so. The entry, if it had one to apply.
    pub fn apply_next(
        &self,
        state: &mut Cow<StoreState>,
        f: usize,
        o: &mut Out<Self>,
    ) -> Option<Entry> {
        let entry = state
            .ensemble
            .as_ref()
            .filter(|e| e.followers[f].link.hears_leader())
            .and_then(|e| e.next_entry(f))?;
        let applied = entry.clone();
        let st = state.to_mut();
        let e = st.ensemble.as_mut().expect("an ensemble");
        let view = &mut e.followers[f].view;
        let alive = matches!(entry, Entry::End { session, .. } if view.is_alive(session));
        let fired = view.apply_entry(&entry);
        let ended = match entry {
            Entry::Apply { .. } | Entry::Refused { .. } => None,
            Entry::End { session, expired } => {
                let told = &mut e.followers[f].told;
                let already = match told.binary_search(&session) {
                    Ok(i) => {
                        told.remove(i);
                        true
                    }
                    Err(_) => false,
                };
                (alive && expired && !already).then_some(session)
            }
        };
        let view = &e.followers[f].view;
        let header = view.header();
        let due = e.applied_one(f);
        send_notifications_at(o, state, header, fired);
        if let Some(s) = ended {
            if self.tell_expiry && state.follower_of(s.client) == Some(f) {
                o.send(client_id(s.client), Msg::Expired { session: s });
            }
        }
        for held in due {
            serve_held(o, state, Some(f), held);
        }
        Some(applied)
    }

    /// `session`'s client reconnects on a new connection: the replies its
    /// server held for the old one are not sent. A ZooKeeper client moves
    /// to the next server not behind what it has seen, its watches with it
    /// (`setWatches`); a local session the new server does not know is
    /// gone. A session that has ended is told so in the handshake: by a
    /// server that knows it no more, and by one that has not applied the
    /// end yet too, which asks the leader (ZooKeeper's revalidation) —
    /// once, as its own apply of the end tells no one twice.
    pub fn reconnected(&self, state: &mut Cow<StoreState>, session: SessionId, o: &mut Out<Self>) {
        if state.holds_any_reply(session.client) {
            state.to_mut().connection_dropped(session.client);
        }
        if state
            .ensemble
            .as_ref()
            .is_some_and(|e| e.cfg.0.clients_move)
        {
            self.move_client(state, session, o);
        }
        if !(self.tell_expiry && state.ended(session)) {
            return;
        }
        // A server that has applied the end, or the leader, knows the
        // session no more: the handshake says it expired.
        let f = match state.follower_of(session.client) {
            Some(f) if state.server(Some(f)).is_alive(session) => f,
            Some(_) | None => {
                return o.send(client_id(session.client), Msg::Expired { session });
            }
        };
        let told = &mut state
            .to_mut()
            .ensemble
            .as_mut()
            .expect("an ensemble")
            .followers[f]
            .told;
        if let Err(i) = told.binary_search(&session) {
            told.insert(i, session);
            o.send(client_id(session.client), Msg::Expired { session });
        }
    }

    /// `session`'s client reconnects to the next server not behind its
    /// last seen position; the watches it set move there, and those whose
    /// node has changed fire. A local session is its server's alone: on
    /// another it has expired.
    fn move_client(&self, state: &mut Cow<StoreState>, session: SessionId, o: &mut Out<Self>) {
        let client = session.client;
        let e = state.ensemble.as_ref().expect("an ensemble");
        let (from, to) = (e.server(client), e.next_server(client));
        if from == to {
            return;
        }
        let local = e.is_local(session);
        let (from_slot, to_slot) = (e.slot(from), e.slot(to));
        let mut ended = ended_watching(state, &state.server(from_slot).zk, client);
        // A local session is its old server's alone: the new one answers
        // its handshake with an expiry, as it does an ended session's.
        if local && !ended.contains(&session) {
            ended.push(session);
        }
        let st = state.to_mut();
        let mut old = std::mem::take(&mut st.server_mut(from_slot).zk);
        let new = &mut st.server_mut(to_slot).zk;
        let moved = new.set_watches(&mut old, client, &ended);
        st.server_mut(from_slot).zk = old;
        let e = st.ensemble.as_mut().expect("an ensemble");
        e.server_of[usize::from(client)] = to;
        for (header, fired) in changes_of_moved(state, from_slot, to_slot, moved) {
            let mut events = Vec::new();
            zk_notifications(vec![fired], &mut events);
            send_notifications_at(o, state, header, events);
        }
        if local {
            o.cancel_timer(Timer::Expiry(session));
            self.invalidate(state, session, o);
        }
    }

    /// Follower `f` is cut off from the leader: it hears no commits and
    /// passes nothing on, while it still serves its clients.
    pub fn cut_off(&self, state: &mut Cow<StoreState>, f: usize) {
        set_link(state, f, LeaderLink::Cut);
    }

    /// Follower `f`'s half of its link to the leader is held (a one-way
    /// cut): it still applies the leader's commits, while what it sends
    /// the leader — acknowledgements, its clients' requests, their
    /// sessions' touches — waits (`LeaderLink::Muted`).
    pub fn mute(&self, state: &mut Cow<StoreState>, f: usize) {
        set_link(state, f, LeaderLink::Muted);
    }

    /// Follower `f`, cut off for syncLimit × tickTime, gives the leader up
    /// (`Learner.shutdown`), or, muted as long, is dropped by the leader
    /// (its `LearnerHandler` hears nothing for syncLimit × tickTime and
    /// closes the link, which the follower hears): it closes its clients'
    /// connections and takes none until it rejoins. The clients it had, to
    /// reconnect elsewhere.
    pub fn drop_follower(
        &self,
        state: &mut Cow<StoreState>,
        f: usize,
    ) -> Vec<crate::ids::ClientIdx> {
        set_link(state, f, LeaderLink::Down);
        state
            .ensemble
            .as_ref()
            .map_or(Vec::new(), |e| e.clients_on(f))
    }

    /// Follower `f` hears the leader again and follows it: it applies what
    /// it missed, in order, and takes clients again.
    /// What it could not pass on while cut off goes to the leader now, on
    /// the connections that stayed up; a server that was down closed
    /// them, and their requests with them.
    /// Whether it passed on a release.
    pub fn rejoin(&self, state: &mut Cow<StoreState>, f: usize, o: &mut Out<Self>) -> bool {
        let Some(e) = state.ensemble.as_ref() else {
            return false;
        };
        let was = e.followers[f].link;
        let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
        let fo = &mut e.followers[f];
        fo.link = LeaderLink::Up;
        let lost = fo.take_lost();
        if !was.holds_for_leader() {
            return false;
        }
        self.pass_on(state, lost, o)
    }

    /// What a cut-off server held, passed to the leader now that it hears
    /// one: the requests of connections that stayed up. Whether one was a
    /// release (the step is then a release step, if it changed the store).
    fn pass_on(&self, state: &mut Cow<StoreState>, lost: Vec<Held>, o: &mut Out<Self>) -> bool {
        let mut released = false;
        for h in lost.into_iter().filter(|h| h.connected) {
            let Owed::Lost { req, release } = h.owed else {
                continue;
            };
            released |= release;
            let msg = Msg::Request {
                session: h.session,
                epoch: h.epoch,
                release,
                req,
            };
            self.on_msg(
                crate::ids::store_id(),
                state,
                client_id(h.session.client),
                msg,
                o,
            );
        }
        released
    }

    /// A leader failover begins: the leader is cut off from its followers
    /// (`Ensemble::depose`). Its clients stay with it, and their watches
    /// with its state; the store's own state waits for the next leader.
    /// No session expires while no leader leads: the new one starts every
    /// session's timer again (`elect`).
    pub fn depose_leader(&self, state: &mut Cow<StoreState>, o: &mut Out<Self>) {
        for (s, alive) in &state.sessions {
            if *alive {
                o.cancel_timer(Timer::Expiry(*s));
            }
        }
        let st = state.to_mut();
        let mut e = st.ensemble.take().expect("an ensemble");
        let view = st.clone();
        // The deposed leader's clients' watches are its own now.
        for c in e.clients_at(e.leader) {
            st.connection_closed(c);
        }
        e.depose(view);
        st.ensemble = Some(e);
    }

    /// The followers elect a new leader (`Ensemble::candidate`): it has
    /// received the whole committed log, so the store's state is its
    /// state; the watches its clients set move to it (those whose node
    /// changed since fire), and every live session's timer starts again
    /// (ZooKeeper's new leader's session tracker; etcd's lessor extends
    /// every lease). The new leader and its followers restarted their
    /// client service: the clients to reconnect, every one not on the
    /// deposed leader. `None`: no follower to elect.
    ///
    /// `extend`: what etcd's lessor adds to every lease's time-to-live on
    /// its promotion (the election timeout; nothing on ZooKeeper, or in an
    /// untimed check).
    pub fn elect(
        &self,
        state: &mut Cow<StoreState>,
        o: &mut Out<Self>,
        extend: Duration,
    ) -> Option<Elected> {
        let f = state.ensemble.as_ref()?.candidate()?;
        let st = state.to_mut();
        let e = st.ensemble.as_mut().expect("an ensemble");
        // What it held for its clients it owes them now: it has the whole
        // log (ZooKeeper's clients reconnect, and what was held goes with
        // their connections).
        let mut lost = e.followers[f].take_lost();
        let due = std::mem::take(&mut e.followers[f].held);
        let applied = e.followers[f].applied;
        let mut old = e.promote(f);
        let leader = e.leader;
        let leases = e.cfg.0.leases;
        let mut fired = Vec::new();
        // A ZooKeeper watch that fires as the new leader takes it over is
        // counted with the change that fired it: the first the new leader
        // had not applied as a follower.
        let mut moved = Vec::new();
        for c in e.clients_at(leader) {
            match leases {
                true => {
                    let mut events = Vec::new();
                    st.etcd.resume_watches(&mut old.etcd, c, &mut events);
                    etcd_notifications(events, &mut fired);
                }
                false => {
                    let ended = ended_watching(st, &old.zk, c);
                    moved.extend(st.zk.set_watches(&mut old.zk, c, &ended));
                }
            }
        }
        send_notifications(o, state, fired);
        if !leases {
            // Its view as a follower, the watches taken out: which change
            // fires a watch is a matter of its node alone.
            let e = state.ensemble.as_ref().expect("an ensemble");
            let entries = e.log_between(applied, e.committed());
            for (header, fired) in changes_since(&old, entries, state.header(), moved) {
                let mut events = Vec::new();
                zk_notifications(vec![fired], &mut events);
                send_notifications_at(o, state, header, events);
            }
        }
        self.restart_session_timers(state, o, extend);
        let e = state.ensemble.as_ref().expect("an ensemble");
        if !leases {
            return Some(Elected {
                leader,
                reconnect: e.clients_following(),
                passed_on_release: false,
            });
        }
        // An etcd member keeps its clients through a leader change, and
        // what it could not propose without a leader goes to the new one
        // (the client's retry, as the model has it).
        for h in due {
            serve_held(o, state, None, h);
        }
        let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
        let following = e.followers.iter_mut().filter(|f| f.link == LeaderLink::Up);
        lost.extend(following.flat_map(Follower::take_lost));
        let passed_on_release = self.pass_on(state, lost, o);
        Some(Elected {
            leader,
            reconnect: Vec::new(),
            passed_on_release,
        })
    }

    /// The deposed leader's quorum check fails and it gives leading up: a
    /// ZooKeeper server closes its clients' connections and takes none
    /// until the cut heals, when it follows the new leader (`rejoin`); an
    /// etcd member keeps them, with no leader until then. The clients to
    /// reconnect elsewhere.
    pub fn deposed_gives_up(&self, state: &mut Cow<StoreState>) -> Vec<crate::ids::ClientIdx> {
        let Some(e) = state.ensemble.as_ref() else {
            return Vec::new();
        };
        let Some(f) = e.deposed() else {
            return Vec::new();
        };
        // etcd's old leader (CheckQuorum) is a member with no leader: it
        // keeps its clients, serving what needs no leader.
        if e.cfg.0.leases {
            set_link(state, f, LeaderLink::Cut);
            return Vec::new();
        }
        self.drop_follower(state, f)
    }

    /// ZooKeeper's local session: follower `f` opens it by itself and
    /// answers at once, from its own view, committing nothing; the leader
    /// hears of it when it is upgraded (`upgrade_if_ephemeral`). (The
    /// leader's table keeps it too, as the leader's session tracker lets a
    /// learner's local session's requests through.)
    fn open_local(
        &self,
        state: &mut Cow<StoreState>,
        f: usize,
        session: SessionId,
        epoch: u8,
        o: &mut Out<Self>,
    ) {
        let st = state.to_mut();
        let opened = st.open_session(session);
        st.server_mut(Some(f)).open_session(session);
        let reply = st.apply_full(session, &Request::Connect).reply;
        if opened {
            let local = &mut st.ensemble.as_mut().expect("an ensemble").local;
            if let Err(i) = local.binary_search(&session) {
                local.insert(i, session);
            }
        }
        self.renew_if_heard(state, session, &Request::Connect, o);
        let held = Held {
            at: 0,
            session,
            epoch,
            owed: Owed::Reply(reply),
            head: None,
            connected: true,
        };
        serve_held(o, state, Some(f), held);
    }

    /// A local session's first ephemeral node upgrades it: its server
    /// sends the leader a `createSession` first, committed before the
    /// create (`ZooKeeperServer.checkUpgradeSession`).
    fn upgrade_if_ephemeral(
        &self,
        state: &mut Cow<StoreState>,
        session: SessionId,
        req: &Request,
        o: &mut Out<Self>,
    ) {
        let local = state.ensemble.as_ref().is_some_and(|e| e.is_local(session));
        if local && creates_ephemeral(req) {
            let entry = Entry::Apply {
                session,
                req: Request::Connect,
            };
            self.commit(state, entry, o);
        }
    }

    /// A read of follower `f`'s client, served from its view (a watch it
    /// sets is set there).
    fn serve_locally(
        &self,
        state: &mut Cow<StoreState>,
        f: usize,
        session: SessionId,
        epoch: u8,
        req: &Request,
        o: &mut Out<Self>,
    ) {
        // Behind the session's own writes the server has not applied.
        let at = state
            .ensemble
            .as_ref()
            .expect("an ensemble")
            .read_barrier(f, session)
            .unwrap_or(0);
        let held = Held {
            at,
            session,
            epoch,
            owed: Owed::Read(req.clone()),
            head: None,
            connected: true,
        };
        self.hold_or_answer(state, f, held, o);
    }

    /// ZooKeeper's `sync`: answered once the client's server has applied
    /// the leader's log as of now (at once on the leader, or on one
    /// server).
    fn sync(
        &self,
        state: &mut Cow<StoreState>,
        follower: Option<usize>,
        session: SessionId,
        epoch: u8,
        o: &mut Out<Self>,
    ) {
        let reply = match state.is_alive(session) {
            true => Reply::Synced,
            false => Reply::Error(ZkError::SessionExpired),
        };
        let at = state.ensemble.as_ref().map_or(0, |e| e.committed());
        // A deposed leader has nothing pending as far as it knows: it
        // answers at once, however far the new leader has gone.
        let deposed = state
            .ensemble
            .as_ref()
            .zip(follower)
            .filter(|(e, f)| e.followers[*f].link == LeaderLink::Deposed)
            .map(|(e, f)| e.followers[f].applied);
        if let Some(stood) = deposed {
            let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
            if stood < at && e.stale_sync.is_none() {
                e.stale_sync = Some((session, stood, at));
            }
        }
        let at = deposed.unwrap_or(at);
        let held = Held {
            at,
            session,
            epoch,
            owed: Owed::Reply(reply),
            head: None,
            connected: true,
        };
        match follower {
            Some(f) => self.hold_or_answer(state, f, held, o),
            None => serve_held(o, state, None, held),
        }
    }

    /// Follower `f` answers `held` now if it has applied the log to
    /// `held.at`, else holds it until it has.
    fn hold_or_answer(&self, state: &mut Cow<StoreState>, f: usize, held: Held, o: &mut Out<Self>) {
        let e = state.ensemble.as_ref().expect("an ensemble");
        if e.followers[f].applied >= held.at {
            return serve_held(o, state, Some(f), held);
        }
        state
            .to_mut()
            .ensemble
            .as_mut()
            .expect("an ensemble")
            .hold(f, held);
    }

    /// A request of `session` renews it where the store hears a session
    /// in it: ZooKeeper in every request (a server passes each on to the
    /// leader's session tracker), etcd only in keepalives and the grant.
    fn renew_if_heard(
        &self,
        state: &StoreState,
        session: SessionId,
        req: &Request,
        o: &mut Out<Self>,
    ) {
        let heard = self.sessions_expire
            && state.is_alive(session)
            && (is_zookeeper(req)
                || matches!(
                    req,
                    Request::Connect
                        | Request::LeaseGrant
                        | Request::LeaseKeepAlive
                        | Request::Consul(ConsulCmd::SessionCreate(_))
                ));
        if heard {
            o.set_timer(Timer::Expiry(session), self.timeout_range());
        }
    }
}

/// Sends what follower `f` (`None`: the leader) owes for `held`, from its
/// state; a read is served there now, and a watch it sets fires from
/// there. Nothing is sent on a dropped connection.
fn serve_held(o: &mut Out<Store>, state: &mut Cow<StoreState>, f: Option<usize>, held: Held) {
    if !held.connected {
        return;
    }
    let mut head = held.head;
    let (header, reply, fired) = match held.owed {
        Owed::Reply(reply) => (state.server(f).header(), reply, Vec::new()),
        // Never due (`Held::at` is `u64::MAX`).
        Owed::Lost { .. } => return,
        Owed::Read(req) => {
            // A queue's read is marked by the leader's queue as it sends
            // the answer, as a write's is when the leader takes it.
            if state.queue.is_some() {
                head = Some(state.names_queue_head(held.session, &req));
            }
            let server = state.to_mut().server_mut(f);
            let Applied { reply, fired, .. } = server.apply_full(held.session, &req);
            (server.header(), reply, fired)
        }
    };
    o.send(
        client_id(held.session.client),
        Msg::Reply {
            epoch: held.epoch,
            header,
            owns_first: head.unwrap_or_else(|| state.reply_mark(held.session, &reply)),
            reply,
        },
    );
    send_notifications_at(o, state, header, fired);
    if tracks_positions(state) {
        let e = state.to_mut().ensemble.as_mut().expect("an ensemble");
        let server = f.map_or(e.leader, |f| e.id(f));
        e.replied(held.session.client, server);
    }
}

impl Store {
    /// Consul: the leader fails over to a server that restored its state
    /// from a snapshot. The lock-delays the old leader kept in memory are
    /// gone, and every live session's TTL starts again, as a new leader's
    /// `initializeSessionTimers` does.
    fn consul_fail_over(&self, state: &mut Cow<StoreState>, o: &mut Out<Self>) {
        let forgotten = state
            .to_mut()
            .consul
            .as_mut()
            .map(|c| c.fail_over())
            .unwrap_or_default();
        for key in forgotten {
            o.cancel_timer(Timer::LockDelay { key });
        }
        self.restart_session_timers(state, o, Duration::ZERO);
    }

    /// A new leader starts every live session's timer again, `extend`
    /// longer: Consul's `initializeSessionTimers`, ZooKeeper's new session
    /// tracker, etcd's lessor `Promote`.
    fn restart_session_timers(&self, state: &StoreState, o: &mut Out<Self>, extend: Duration) {
        if !self.sessions_expire {
            return;
        }
        let range = self.timeout_range();
        let range = range.start + extend..range.end + extend;
        for (s, alive) in &state.sessions {
            if *alive {
                o.set_timer(Timer::Expiry(*s), range.clone());
            }
        }
    }
}

/// Consul: arms the lock-delays a call started and the wait of the
/// blocking query it held; a held query answered (`fired`) waits no more.
fn consul_timers(o: &mut Out<Store>, fx: &consul::Effects, fired: &[(SessionId, WatchEvent)]) {
    for &(key, ms) in &fx.delays {
        o.set_timer(
            Timer::LockDelay { key },
            exactly(Duration::from_millis(ms.into())),
        );
    }
    for (s, event) in fired {
        if matches!(event, WatchEvent::Consul { .. }) {
            o.cancel_timer(Timer::QueryWait { client: s.client });
        }
    }
    if let Some((client, ms)) = fx.held {
        let wait = Duration::from_millis(
            match ms {
                0 => consul::DEFAULT_QUERY_WAIT_MS,
                ms => ms,
            }
            .into(),
        );
        // Consul adds up to a sixteenth of the wait (`RandomStagger`).
        o.set_timer(Timer::QueryWait { client }, wait..wait + wait / 16);
    }
}

/// Redis: answers a held `WAIT` on the connection it came on, as any
/// reply is sent (`Store::on_msg`).
fn answer_wait(o: &mut Out<Store>, state: &StoreState, w: redis::Waiter, reply: RedisReply) {
    o.send(
        client_id(w.session.client),
        Msg::Reply {
            epoch: w.epoch,
            header: state.header(),
            owns_first: state.owns_first(w.session),
            reply: Reply::Redis(reply),
        },
    );
}

/// Redis: the first master's connections break (a failover, a restart):
/// every `WAIT` held there is answered with the error a broken
/// connection gives, `Down`.
fn break_waits(state: &mut Cow<StoreState>, o: &mut Out<Store>) {
    if state.redis.waits().next().is_none() {
        return;
    }
    let broken = state.to_mut().redis.take_waits(false);
    for w in broken {
        answer_wait(o, state, w, RedisReply::Down);
    }
}

/// Redis: arms or cancels the store timer of a key's TTL on `master` as
/// `change` says.
fn key_timer(o: &mut Out<Store>, master: u8, change: TtlChange) {
    match change {
        TtlChange::Armed { key, ms } => o.set_timer(
            Timer::KeyTtl { master, key },
            exactly(Duration::from_millis(ms.into())),
        ),
        TtlChange::Cleared { key } => o.cancel_timer(Timer::KeyTtl { master, key }),
    }
}

fn exactly(d: Duration) -> std::ops::Range<Duration> {
    d..d + Duration::from_nanos(1)
}
