//! Messages between clients, the store and the guarded resource, and the
//! actors' timers.

use crate::ids::{Child, Data, Key, Name, SessionId, ZPath};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Everything that crosses a link. Links are FIFO per pair of actors (TCP), so a
/// watch notification never overtakes the reply it follows.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// A client's request to the store, in one of its sessions. `epoch` counts
    /// the client's resends, so a reply to a request it gave up on is ignored.
    Request {
        session: SessionId,
        epoch: u8,
        /// The recipe's release step sent it: the herd metrics count the
        /// notifications it causes as one hand-off.
        release: bool,
        req: Request,
    },
    /// `header` is the store's last transaction id when it answered: the
    /// zxid of ZooKeeper's reply header, the revision of etcd's response
    /// header. It tells when, in the store's order, a decision was made.
    Reply {
        epoch: u8,
        header: u64,
        /// Ghost, invisible to recipes: whether, when the store sent this,
        /// the request's session was alive and owned the lock entry first
        /// in line. `holder_owns_key` reads it off the reply a client
        /// decides to hold on.
        owns_first: bool,
        reply: Reply,
    },
    /// The client is done with this session: ZooKeeper `close()`, etcd lease
    /// revoke plus cancelling the watches its abandoned wait had open (what
    /// `waitDelete`'s deferred cancel does). Sent without waiting for an answer.
    Close {
        session: SessionId,
    },
    /// Session heartbeat (ZooKeeper ping, etcd lease keepalive).
    Ping {
        session: SessionId,
    },
    Pong {
        session: SessionId,
    },
    /// One watch notification: the unit the herd metrics count.
    Notify {
        header: u64,
        /// Ghost, as on [`Msg::Reply`], for the recipient client.
        owns_first: bool,
        event: WatchEvent,
    },
    /// The store tells the owner its session (lease) expired. It arrives when
    /// the link next carries anything to the client, as the ZooKeeper client
    /// learns of expiry on reconnect and etcd's keepalive stream on its next
    /// response.
    Expired {
        session: SessionId,
    },
    /// A write to the guarded resource, tagged with the writer's fencing token.
    /// `hold` is ghost data: which of this client's acquisitions the write
    /// belongs to, so the checker can tell acquisitions apart.
    Write {
        token: u64,
        hold: u32,
    },
    WriteAck {
        hold: u32,
        accepted: bool,
    },
}

/// A store operation. The ZooKeeper face and the etcd face share one store.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Request {
    // --- ZooKeeper ---
    /// Open the session named in the envelope.
    Connect,
    /// Create a node, in any of the four modes. With `sequential`, the
    /// store appends the parent's counter to the path's last name (the
    /// path a sequential create sends carries no sequence number).
    Create {
        path: ZPath,
        ephemeral: bool,
        sequential: bool,
        /// The node's data: a queue element's item; empty for the lock,
        /// election and barrier nodes.
        data: Data,
    },
    /// `delete(path, version)`: with a version, only if the node's data
    /// version is that (ZooKeeper's `-1` is `None`).
    Delete {
        path: ZPath,
        version: Option<u32>,
    },
    Exists {
        path: ZPath,
        watch: bool,
    },
    GetData {
        path: ZPath,
        watch: bool,
    },
    GetChildren {
        path: ZPath,
        watch: bool,
    },
    /// `setData(path, data, version)`: with a version, only if the node's
    /// data version is that; the version goes up by one.
    SetData {
        path: ZPath,
        data: Data,
        version: Option<u32>,
    },
    // --- etcd ---
    /// Grant the lease named in the envelope (etcd lets the client choose the id).
    LeaseGrant,
    /// Boxed: a transaction is far larger than any other request, and every
    /// message in flight would be as large as the largest.
    Txn(Box<Txn>),
    Range(Range),
    /// Watch one key from `start_revision` until its delete (all that
    /// `waitDelete` consumes; the stream ends there).
    Watch {
        key: Key,
        start_revision: u64,
    },
    DeleteKey {
        key: Key,
    },
    // New requests go last: a variant's place is part of its hash, and
    // the fingerprints of states with the requests above must not change.
    // --- ZooKeeper ---
    /// `multi(ops)`: every op applied, in order, as one transaction (one
    /// zxid), or none of them (ZooKeeper's `MultiOperationRecord`).
    Multi(Vec<MultiOp>),
    // --- etcd ---
    /// Watch every key in `keys` from `start_revision` on: each put and
    /// delete, as etcd's watch stream sends them, until the client closes
    /// its session (the stream is its connection's). Unlike `Watch`, the
    /// stream does not end at a delete.
    WatchRange {
        keys: Keys,
        start_revision: u64,
    },
    /// Revoke the lease named in the envelope (etcd's `LeaseRevoke`, what
    /// `Session.Close()` sends): its keys are deleted in one revision and
    /// their watchers told.
    LeaseRevoke,
    /// One keepalive of the lease named in the envelope (etcd's
    /// `KeepAliveOnce`): its time to live starts again.
    LeaseKeepAlive,
    /// `TimeToLive(lease)`: whether the lease is alive, and with `keys`
    /// the keys attached to it. Any lease may be asked about.
    LeaseTimeToLive {
        lease: SessionId,
        keys: bool,
    },
    // --- Redis ---
    /// One command to one master of the deployment (0 for a single
    /// master; Redlock's N independent masters are 0..N).
    Redis {
        master: u8,
        cmd: RedisCmd,
    },
    // --- Consul ---
    /// One call of Consul's HTTP API, in the envelope's session.
    Consul(ConsulCmd),
    // --- ZooKeeper, last so that the kinds before keep their places ---
    /// `sync(path)`: answered once the client's server has applied every
    /// change the leader had committed when the sync reached it (at once
    /// on one server).
    Sync {
        path: ZPath,
    },
}

/// A Consul session's behavior when it is invalidated: its held keys are
/// released (`release`, the default) or deleted (`delete`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Behavior {
    #[default]
    Release,
    Delete,
}

impl std::str::FromStr for Behavior {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "release" => Ok(Behavior::Release),
            "delete" => Ok(Behavior::Delete),
            _ => Err(format!("unknown behavior '{s}' (known: release, delete)")),
        }
    }
}

impl fmt::Display for Behavior {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Behavior::Release => "release",
            Behavior::Delete => "delete",
        })
    }
}

/// What `PUT /v1/session/create` asks for beside the TTL (the store's
/// session timeout): the behavior and the lock-delay. Node checks are
/// Consul's default, `serfHealth`: a node check going critical is a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SessionOpts {
    pub behavior: Behavior,
    /// Milliseconds (Consul's default 15 s; 0 to 60 s).
    pub lock_delay_ms: u32,
}

/// Consul's defaults: behavior `release`, a lock-delay of 15 s.
impl Default for SessionOpts {
    fn default() -> Self {
        SessionOpts {
            behavior: Behavior::Release,
            lock_delay_ms: 15_000,
        }
    }
}

/// One call of Consul's HTTP API, as the Go client (`api`) makes it.
/// Keys are [`Key`]s: text, or a prefix and a session's id (a semaphore's
/// contender key, `<prefix>/<session>`). Values are [`Data`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConsulCmd {
    /// `PUT /v1/session/create`: the envelope's session, with its TTL the
    /// store's session timeout.
    SessionCreate(SessionOpts),
    /// `PUT /v1/session/destroy/<session>`: invalidated at once, its held
    /// keys released (or deleted) under its lock-delay.
    SessionDestroy,
    /// `GET /v1/session/info/<session>`: whether the envelope's session
    /// lives, and what it was created with ([`ConsulReply::SessionInfo`]).
    /// A read: it changes nothing, and renews nothing.
    SessionInfo,
    /// `GET /v1/kv/<key>`: the pair and `X-Consul-Index`. With `index` > 0
    /// a blocking query: answered at once if the index it would return is
    /// past `index`, else held until the key changes (or the wait runs
    /// out: `wait_ms`, 0 for the server's default of 5 minutes, plus up
    /// to a sixteenth), its answer a notification ([`WatchEvent::Consul`]).
    Get { key: Key, index: u64, wait_ms: u32 },
    /// `GET /v1/kv/<prefix>?recurse`: every pair whose key starts with
    /// `prefix` and `X-Consul-Index` (the last write or delete under it).
    /// With `index` > 0 a blocking query as [`ConsulCmd::Get`]'s, held until
    /// a key under the prefix changes; its answer a notification
    /// ([`WatchEvent::ConsulList`]).
    List {
        prefix: Name,
        index: u64,
        wait_ms: u32,
    },
    /// `PUT /v1/kv/<key>?acquire=<session>`: `true` if the session now
    /// holds the key.
    Acquire { key: Key, value: Data },
    /// `PUT /v1/kv/<key>?release=<session>`: `true` if it held it.
    Release { key: Key },
    /// `PUT /v1/kv/<key>?cas=<index>`: written only if the key's
    /// `ModifyIndex` is `index` (0: only if there is no key).
    Cas { key: Key, value: Data, index: u64 },
    /// `DELETE /v1/kv/<key>` (`?cas=<index>`: only at that `ModifyIndex`).
    Delete { key: Key, cas: Option<u64> },
    /// `PUT /v1/kv/<key>`, neither `?cas=` nor `?acquire=`: always `true`.
    /// The value is set; `Session` and `LockIndex` stay as they were (a
    /// plain PUT does not touch the lock), whatever session writes it.
    Put { key: Key, value: Data },
    /// `DELETE /v1/kv/<prefix>?recurse`: every key under `prefix` deleted
    /// in one Raft index; always `true`.
    DeleteTree { prefix: Name },
}

/// A Consul key as `GET /v1/kv/<key>` shows it (Go's `api.KVPair`; flags
/// left out: every key a recipe writes carries its library's flag value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KvPair {
    pub key: Key,
    pub value: Data,
    /// The session holding it (`Session`), if any.
    pub session: Option<SessionId>,
    /// How many times a session acquired it: with the key and the session,
    /// Consul's sequencer (the fencing token).
    pub lock_index: u64,
    pub modify_index: u64,
    pub create_index: u64,
}

/// Consul's answer to one call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConsulReply {
    /// The session is created (its id is the envelope's).
    SessionCreated,
    /// `session/destroy` answers `true`.
    SessionDestroyed,
    /// A `GET`: the pair (`None`: 404) and `X-Consul-Index`.
    Pair { pair: Option<KvPair>, index: u64 },
    /// A `GET ?recurse`: the pairs under the prefix, sorted by key, and
    /// `X-Consul-Index`.
    List { pairs: Arc<[KvPair]>, index: u64 },
    /// A blocking query the store holds: no HTTP answer yet. The model
    /// acknowledges it so that the client's resend clock stops, as an
    /// HTTP client's does while its request is out; the answer comes as a
    /// notification.
    Held,
    /// `true` / `false`: an acquire, release, cas or delete.
    Bool(bool),
    /// HTTP 500 "invalid session": an acquire or release in a session
    /// that is gone (or never was).
    InvalidSession,
    /// `session/info`: the session's options while it lives; `None`,
    /// Consul's `null`, once it is invalidated (or if it never was).
    SessionInfo(Option<SessionOpts>),
}

/// A Redis command, as the lock libraries send it. Keys are text (a
/// recipe's own names); values are the lock's token ([`Data::Session`]:
/// the client's process, which a random token per client stands for) or a
/// number. TTLs are milliseconds of the *server's* clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RedisCmd {
    /// `SET key value [NX] [PX ms]`: `OK`, or nil when `NX` finds the key.
    Set {
        key: Name,
        value: Data,
        nx: bool,
        px: Option<u32>,
    },
    /// `SETNX key value`: 1 if set, 0 if the key exists (no TTL).
    SetNx { key: Name, value: Data },
    /// `PEXPIRE key ms` (`EXPIRE key s` when `seconds`, the TTL given in
    /// whole seconds): 1 if the key exists and now expires then, else 0.
    Expire { key: Name, ms: u32, seconds: bool },
    /// `GET key`: the value, or nil.
    Get { key: Name },
    /// `DEL key`: how many keys it deleted (0 or 1).
    Del { key: Name },
    /// `INCR key`: the new value (a missing key counts from 0).
    Incr { key: Name },
    /// `EVAL` of the compare-and-delete script every token lock releases
    /// with: `if GET(key) == value then return DEL(key) else return 0`.
    /// A script runs atomically.
    DelIfValue { key: Name, value: Data },
    /// `EVAL` of the compare-and-extend script: `if GET(key) == value then
    /// return PEXPIRE(key, ms) else return 0` (redis-py's `extend` with
    /// `replace_ttl`, Redisson's renewal).
    ExpireIfValue { key: Name, value: Data, ms: u32 },
    /// `WAIT numreplicas timeout`: how many replicas have applied every
    /// change the master made before it. The store answers once the
    /// replica has them all (at once without a replica: 0), or `Down` if
    /// a failover or restart breaks the connection first; the timeout is
    /// not modelled (the simulator's replication lag stays below it).
    Wait { replicas: u8, timeout_ms: u32 },
}

/// A Redis reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RedisReply {
    /// `+OK`.
    Ok,
    /// The nil bulk string: `SET NX` found the key, `GET` found none.
    Nil,
    /// An integer reply.
    Int(u64),
    /// A bulk string: `GET`'s value.
    Value(Data),
    /// The master does not answer: it is down (restarting). A client's
    /// per-instance timeout, its connection refused, or a `WAIT` whose
    /// connection a failover broke, ends the same way.
    Down,
}

/// One op of a ZooKeeper `multi` (`Op.check`, `Op.create`, `Op.delete`,
/// `Op.setData`); each does what the request of its name does, and sees
/// what the ops before it in the same multi did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MultiOp {
    /// `check(path, version)`: the node exists (and has that data
    /// version); changes nothing.
    Check {
        path: ZPath,
        version: Option<u32>,
    },
    Create {
        path: ZPath,
        ephemeral: bool,
        sequential: bool,
        data: Data,
    },
    Delete {
        path: ZPath,
        version: Option<u32>,
    },
    SetData {
        path: ZPath,
        data: Data,
        version: Option<u32>,
    },
}

/// One op's result in a multi's reply, as ZooKeeper's `OpResult`. A multi
/// that fails answers an `ErrorResult` for every op (ZooKeeper's
/// `DataTree.processTxn`): `OK` for the ops before the failing one (they
/// would have succeeded, and were rolled back), the failing op's error, and
/// `RUNTIMEINCONSISTENCY` for the ops after it (not tried).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MultiResult {
    Checked,
    Created {
        path: ZPath,
        czxid: u64,
    },
    Deleted,
    /// `setData`'s new stat.
    Set(Stat),
    /// `ErrorResult(OK)`: rolled back with the multi.
    RolledBack,
    /// `ErrorResult(code)`: the op the multi failed at.
    Error(ZkError),
    /// `ErrorResult(RUNTIMEINCONSISTENCY)`: after the failing op.
    RuntimeInconsistency,
}

/// The store's answer to a [`Request`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Reply {
    // --- ZooKeeper ---
    Connected,
    Created {
        path: ZPath,
        czxid: u64,
    },
    Deleted,
    /// `exists` / `get_data`: the node's stat, or `None` if there is no node.
    Stat(Option<Stat>),
    /// In sequence order (see `ZkTree::get_children`).
    Children(std::sync::Arc<[Child]>),
    Error(ZkError),
    // --- etcd ---
    /// The lease, with the id the store gave it.
    LeaseGranted {
        lease: SessionId,
    },
    LeaseNotFound,
    TxnResult {
        succeeded: bool,
        revision: u64,
        responses: Vec<OpResult>,
    },
    RangeResult {
        revision: u64,
        kvs: Vec<Kv>,
    },
    WatchCreated {
        revision: u64,
    },
    DeleteResult {
        revision: u64,
        deleted: u32,
    },
    // New replies go last (see `Request`).
    // --- ZooKeeper ---
    /// A multi's results, one per op, in order; all `ErrorResult`s if it
    /// failed ([`MultiResult`]).
    Multi(Vec<MultiResult>),
    // --- etcd ---
    /// A `count_only` range's answer: how many keys are in its range.
    RangeCount {
        revision: u64,
        count: u64,
    },
    /// A `LeaseRevoke` done (a lease that is gone answers
    /// `LeaseNotFound`).
    LeaseRevoked,
    /// A keepalive's answer for a live lease (a gone one answers
    /// `LeaseNotFound`, as `KeepAliveOnce` turns etcd's TTL of 0 into).
    LeaseKeptAlive,
    /// `TimeToLive`'s answer: whether the lease is alive (etcd's TTL of -1
    /// for a gone one), and the keys attached to it if asked. The time it
    /// has left is not modelled: the checker's time is abstract.
    LeaseTtl {
        alive: bool,
        keys: Vec<Key>,
    },
    // --- Redis ---
    /// A master's answer to one command.
    Redis(RedisReply),
    // --- Consul ---
    Consul(ConsulReply),
    // --- ZooKeeper ---
    /// `sync`'s answer.
    Synced,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ZkError {
    NodeExists,
    NoNode,
    NotEmpty,
    SessionExpired,
    /// A versioned delete or set met another version.
    BadVersion,
}

/// A znode's stat, as ZooKeeper keeps it (less the times and lengths no
/// recipe reads), with its data (`get_data` reads it; `exists` returns it
/// too, and no recipe reads it there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stat {
    pub czxid: u64,
    pub mzxid: u64,
    /// The data's version: how many `setData`s the node has had.
    pub version: u32,
    /// The children's version: how many children were created under it.
    pub cversion: u32,
    pub ephemeral_owner: Option<SessionId>,
    pub data: Data,
}

/// `txn(compares, success, failure)`: the success ops run if every compare
/// holds, the failure ops otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Txn {
    pub compares: Vec<Compare>,
    pub success: Vec<TxnOp>,
    pub failure: Vec<TxnOp>,
}

/// One compare of a txn: `target(key) op value`. A missing key has create
/// revision, mod revision and version 0 and no value (etcd's rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Compare {
    pub key: Key,
    pub target: CompareTarget,
    pub op: CompareOp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CompareTarget {
    CreateRevision(u64),
    ModRevision(u64),
    Version(u64),
    Value(Data),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CompareOp {
    Equal,
    NotEqual,
    Less,
    Greater,
}

impl Compare {
    /// `create_revision(key) == revision`: the compare etcd's mutex and
    /// election make (0: the key does not exist).
    pub fn created_at(key: Key, revision: u64) -> Compare {
        Compare {
            key,
            target: CompareTarget::CreateRevision(revision),
            op: CompareOp::Equal,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TxnOp {
    Put {
        key: Key,
        value: Data,
        lease: Option<SessionId>,
    },
    Delete {
        key: Key,
    },
    Range(Range),
}

/// `range`: one key, every key with a prefix, or every key in
/// `[key, range_end)`, optionally sorted, limited, bounded by
/// `max_create_revision` (0 = none), and answered with keys only or a
/// count only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub keys: Keys,
    pub sort: Sort,
    pub limit: u32,
    pub max_create_revision: u64,
    /// etcd's `keys_only` / `count_only`. Written (and hashed) only when
    /// set, so the ranges the recipes send serialize and hash as before.
    #[serde(default, skip_serializing_if = "RangeOnly::is_kvs")]
    pub only: RangeOnly,
    /// etcd's `WithSerializable()`: answered by the member the client
    /// uses, from what it has applied, with no read index through the
    /// leader — stale on a member that lags, and served by one with no
    /// leader. Written (and hashed) only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub serializable: bool,
}

/// As the derived hash was before `only`: the fields in order, `only`
/// only when set (fingerprints of states with the recipes' ranges must
/// not change).
impl std::hash::Hash for Range {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.keys.hash(h);
        self.sort.hash(h);
        self.limit.hash(h);
        self.max_create_revision.hash(h);
        if !self.only.is_kvs() {
            self.only.hash(h);
        }
        if self.serializable {
            self.serializable.hash(h);
        }
    }
}

impl Range {
    /// Every key in `keys`, in key order, with values.
    pub fn of(keys: Keys) -> Range {
        Range {
            keys,
            sort: Sort::None,
            limit: 0,
            max_create_revision: 0,
            only: RangeOnly::Kvs,
            serializable: false,
        }
    }
}

/// The keys a range reads (or a range watch hears).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Keys {
    One(Key),
    Prefix(Name),
    // New variants go last (a variant's place is part of its hash).
    /// `[from, end)`, etcd's `key` and `range_end`; no end is etcd's
    /// `range_end` of `\0`, every key from `from` on. The bounds are text:
    /// a lease key is ordered against them by `Key::cmp_bound`, which
    /// keeps a bound among the client digits of lease ids from naming a
    /// client.
    Between {
        from: Name,
        end: Option<Name>,
    },
}

/// How a range's keys are sorted: not at all (key order), by create
/// revision (what the recipes ask), or by any target etcd sorts on.
/// Ties keep key order (etcd's `sort.Sort` is not stable: any order of
/// ties is etcd's; the model picks one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Sort {
    None,
    /// By create revision, lowest first.
    Ascend,
    /// By create revision, highest first.
    Descend,
    // New variants go last.
    /// By another target; [`Sort::by`] writes a create-revision sort as
    /// the two above, so each sort has one form.
    By(SortTarget, SortOrder),
}

/// The name `Sort` had while it sorted by create revision only.
pub type SortByCreate = Sort;

/// etcd's `SortTarget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SortTarget {
    Key,
    Version,
    Create,
    Mod,
    Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SortOrder {
    Ascend,
    Descend,
}

impl Sort {
    /// A sort by `target` in `order`, in its one form.
    pub fn by(target: SortTarget, order: SortOrder) -> Sort {
        match (target, order) {
            (SortTarget::Create, SortOrder::Ascend) => Sort::Ascend,
            (SortTarget::Create, SortOrder::Descend) => Sort::Descend,
            (
                SortTarget::Key | SortTarget::Version | SortTarget::Mod | SortTarget::Value,
                SortOrder::Ascend | SortOrder::Descend,
            ) => Sort::By(target, order),
        }
    }

    /// The target and order, `None` for no sort.
    pub fn target(self) -> Option<(SortTarget, SortOrder)> {
        match self {
            Sort::None => None,
            Sort::Ascend => Some((SortTarget::Create, SortOrder::Ascend)),
            Sort::Descend => Some((SortTarget::Create, SortOrder::Descend)),
            Sort::By(target, order) => Some((target, order)),
        }
    }
}

/// What a range answers with: the key-values, the keys (and their
/// revisions, versions and leases) without values (`keys_only`), or how
/// many keys there are (`count_only`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RangeOnly {
    #[default]
    Kvs,
    Keys,
    Count,
}

impl RangeOnly {
    pub fn is_kvs(&self) -> bool {
        *self == RangeOnly::Kvs
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OpResult {
    Put {
        revision: u64,
    },
    Delete {
        deleted: u32,
    },
    Range {
        kvs: Vec<Kv>,
    },
    // New variants go last.
    /// A `count_only` range's answer.
    Count {
        count: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Kv {
    pub key: Key,
    pub create_revision: u64,
    pub mod_revision: u64,
    pub version: u64,
    /// The lease the key is attached to (`None`: it lives until deleted).
    pub lease: Option<SessionId>,
    pub value: Data,
}

/// A watch notification.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WatchEvent {
    Zk {
        kind: ZkEvent,
        path: ZPath,
    },
    Etcd {
        kind: EtcdEvent,
        key: Key,
        revision: u64,
    },
    /// The answer to a held blocking query: the key as it now is and
    /// `X-Consul-Index`.
    Consul {
        pair: Option<KvPair>,
        index: u64,
    },
    /// The answer to a held blocking `GET ?recurse`: the pairs under the
    /// prefix as they now are, and `X-Consul-Index`.
    ConsulList {
        pairs: Arc<[KvPair]>,
        index: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ZkEvent {
    NodeCreated,
    NodeDeleted,
    NodeChildrenChanged,
    NodeDataChanged,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum EtcdEvent {
    Put,
    Delete,
}

/// Timers of all actors. In the model checker a timer carries no time: the
/// model decides when each kind may fire (see `model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Timer {
    /// Client: the think time before an acquire is over.
    Think,
    /// Client: the hold between two writes is over.
    Hold,
    /// Client: no reply to the outstanding request; resend it.
    Retry,
    /// Client: send a heartbeat.
    Ping,
    /// Client (lease-aware policy): the session may have expired by its own clock.
    Deadline,
    /// Store: this session (lease) has not been heard from for its timeout.
    Expiry(SessionId),
    // New timers go last: a timer's place in this enum is part of its hash,
    // and fingerprints (so which representative symmetry keeps) must not
    // change under the timers states already had.
    /// Client: the recipe's sleep is over (a back-off, a poll interval it
    /// asked for with [`crate::recipe::Step::Sleep`]).
    Wake,
    /// Client (a lock acquired with a timeout): the acquisition has taken
    /// its time; it is given up at the recipe's next wait.
    GiveUp,
    /// Store (Redis): `key`'s TTL on `master` has run out by the server's
    /// clock; the key is deleted.
    KeyTtl { master: u8, key: Name },
    /// Client (a recipe that checks its attempt's validity, Redlock): the
    /// attempt has taken longer than its keys' TTL less the clock drift,
    /// by the client's own clock.
    Validity,
    /// Client (a holder whose recipe renews its key, a watchdog): time to
    /// renew.
    Renew,
    /// Store (Consul): `key`'s lock-delay is over; a session may acquire
    /// it again.
    LockDelay { key: Key },
    /// Store (Consul): the wait of `client`'s held blocking query has run
    /// out; it is answered with the key as it is.
    QueryWait { client: crate::ids::ClientIdx },
    /// Client (`consul lock`): the grace after SIGTERM is over; SIGKILL.
    Kill,
}

/// What a timer's firing means, as traces and counterexamples say it.
impl fmt::Display for Timer {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Timer::Think => write!(f, "think time over: start acquiring"),
            Timer::Hold => write!(f, "hold time over: next write or release"),
            Timer::Retry => write!(f, "no reply: resend"),
            Timer::Ping => write!(f, "heartbeat"),
            Timer::Deadline => write!(
                f,
                "no word from the store for its deadline (its own clock; SUSPENDED for a \
                 suspend-aware client)"
            ),
            Timer::Expiry(s) => write!(f, "expiry of {s}"),
            Timer::Wake => write!(f, "sleep over: the recipe goes on"),
            Timer::GiveUp => write!(f, "acquire timeout: give up at the next wait"),
            Timer::KeyTtl { master, key } => write!(f, "TTL of {key} on master {master} over"),
            Timer::Validity => write!(f, "the attempt outlasted its validity time"),
            Timer::Renew => write!(f, "watchdog: renew the key"),
            Timer::LockDelay { key } => write!(f, "lock-delay of {key} over"),
            Timer::QueryWait { client } => {
                write!(f, "wait of c{client}'s blocking query over")
            }
            Timer::Kill => write!(f, "grace after SIGTERM over: SIGKILL"),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Request::Connect => write!(f, "connect"),
            Request::Create {
                path,
                ephemeral,
                sequential,
                data,
            } => {
                let mode = match (ephemeral, sequential) {
                    (true, true) => "ephemeral-sequential",
                    (true, false) => "ephemeral",
                    (false, true) => "sequential",
                    (false, false) => "persistent",
                };
                write!(f, "create({path}, {mode}")?;
                if !data.is_empty() {
                    write!(f, ", data {data}")?;
                }
                write!(f, ")")
            }
            Request::Delete {
                path,
                version: None,
            } => write!(f, "delete({path})"),
            Request::Delete {
                path,
                version: Some(v),
            } => write!(f, "delete({path}, version {v})"),
            Request::SetData {
                path,
                data,
                version,
            } => {
                write!(f, "set_data({path}, {data}")?;
                if let Some(v) = version {
                    write!(f, ", version {v}")?;
                }
                write!(f, ")")
            }
            Request::Exists { path, watch } => write!(f, "exists({path}, watch={watch})"),
            Request::GetData { path, watch } => write!(f, "get_data({path}, watch={watch})"),
            Request::GetChildren { path, watch } => {
                write!(f, "get_children({path}, watch={watch})")
            }
            Request::Sync { path } => write!(f, "sync({path})"),
            Request::LeaseGrant => write!(f, "lease_grant"),
            Request::Txn(t) => {
                write!(f, "txn(if ")?;
                for (i, c) in t.compares.iter().enumerate() {
                    if i > 0 {
                        write!(f, " and ")?;
                    }
                    write!(f, "{c}")?;
                }
                write!(f, " then ")?;
                write_ops(f, &t.success)?;
                write!(f, " else ")?;
                write_ops(f, &t.failure)?;
                write!(f, ")")
            }
            Request::Range(r) => write!(f, "{r}"),
            Request::Watch {
                key,
                start_revision,
            } => write!(f, "watch({key}, from revision {start_revision})"),
            Request::DeleteKey { key } => write!(f, "delete({key})"),
            Request::WatchRange {
                keys,
                start_revision,
            } => write!(f, "watch({keys}, from revision {start_revision})"),
            Request::LeaseRevoke => write!(f, "lease_revoke"),
            Request::LeaseKeepAlive => write!(f, "lease_keep_alive"),
            Request::LeaseTimeToLive { lease, keys } => {
                write!(f, "lease_time_to_live({lease}")?;
                if *keys {
                    write!(f, ", keys")?;
                }
                write!(f, ")")
            }
            Request::Redis { master, cmd } => {
                write!(f, "{cmd}")?;
                if *master > 0 {
                    write!(f, " @master {master}")?;
                }
                Ok(())
            }
            Request::Consul(cmd) => write!(f, "{cmd}"),
            Request::Multi(ops) => {
                write!(f, "multi(")?;
                for (i, op) in ops.iter().enumerate() {
                    if i > 0 {
                        write!(f, "; ")?;
                    }
                    write!(f, "{op}")?;
                }
                write!(f, ")")
            }
        }
    }
}

impl MultiOp {
    /// The op a single write request is: what the store applies for it,
    /// alone or in a multi. `None` for a request that is no multi op.
    pub fn of(req: &Request) -> Option<MultiOp> {
        match *req {
            Request::Create {
                path,
                ephemeral,
                sequential,
                data,
            } => Some(MultiOp::Create {
                path,
                ephemeral,
                sequential,
                data,
            }),
            Request::Delete { path, version } => Some(MultiOp::Delete { path, version }),
            Request::SetData {
                path,
                data,
                version,
            } => Some(MultiOp::SetData {
                path,
                data,
                version,
            }),
            Request::Connect
            | Request::Exists { .. }
            | Request::GetData { .. }
            | Request::GetChildren { .. }
            | Request::Sync { .. }
            | Request::LeaseGrant
            | Request::Txn(_)
            | Request::Range(_)
            | Request::Watch { .. }
            | Request::DeleteKey { .. }
            | Request::Multi(_)
            | Request::WatchRange { .. }
            | Request::LeaseRevoke
            | Request::LeaseKeepAlive
            | Request::LeaseTimeToLive { .. }
            | Request::Redis { .. }
            | Request::Consul(_) => None,
        }
    }

    /// The path the op names.
    pub fn path(&self) -> ZPath {
        match *self {
            MultiOp::Check { path, .. }
            | MultiOp::Create { path, .. }
            | MultiOp::Delete { path, .. }
            | MultiOp::SetData { path, .. } => path,
        }
    }
}

impl MultiResult {
    /// The results of a multi of `ops` ops that failed at op `at` with
    /// `error`: `OK` before it, its error, `RUNTIMEINCONSISTENCY` after
    /// (ZooKeeper's `DataTree.processTxn` for a multi with an error txn).
    pub fn failed_at(ops: usize, at: usize, error: ZkError) -> Vec<MultiResult> {
        (0..ops)
            .map(|i| match i.cmp(&at) {
                std::cmp::Ordering::Less => MultiResult::RolledBack,
                std::cmp::Ordering::Equal => MultiResult::Error(error),
                std::cmp::Ordering::Greater => MultiResult::RuntimeInconsistency,
            })
            .collect()
    }

    /// The reply a write sent alone gets: a `create`, `delete` or
    /// `setData` answers as its op's result reads. A result only a multi
    /// has (no request checks alone) is a multi of one.
    pub fn single_reply(self) -> Reply {
        match self {
            MultiResult::Created { path, czxid } => Reply::Created { path, czxid },
            MultiResult::Deleted => Reply::Deleted,
            MultiResult::Set(stat) => Reply::Stat(Some(stat)),
            MultiResult::Error(e) => Reply::Error(e),
            MultiResult::Checked | MultiResult::RolledBack | MultiResult::RuntimeInconsistency => {
                Reply::Multi(vec![self])
            }
        }
    }
}

/// As the request of its name reads (`check` has none of its own).
impl fmt::Display for MultiOp {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let req = match *self {
            MultiOp::Check {
                path,
                version: None,
            } => return write!(f, "check({path})"),
            MultiOp::Check {
                path,
                version: Some(v),
            } => return write!(f, "check({path}, version {v})"),
            MultiOp::Create {
                path,
                ephemeral,
                sequential,
                data,
            } => Request::Create {
                path,
                ephemeral,
                sequential,
                data,
            },
            MultiOp::Delete { path, version } => Request::Delete { path, version },
            MultiOp::SetData {
                path,
                data,
                version,
            } => Request::SetData {
                path,
                data,
                version,
            },
        };
        req.fmt(f)
    }
}

impl fmt::Display for MultiResult {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            MultiResult::Checked => write!(f, "checked"),
            MultiResult::Created { path, czxid } => write!(f, "created {path} (czxid {czxid})"),
            MultiResult::Deleted => write!(f, "deleted"),
            MultiResult::Set(s) => write!(f, "set (version {}, mzxid {})", s.version, s.mzxid),
            MultiResult::RolledBack => write!(f, "rolled back"),
            MultiResult::Error(e) => write!(f, "error {e:?}"),
            MultiResult::RuntimeInconsistency => write!(f, "not run (RuntimeInconsistency)"),
        }
    }
}

impl fmt::Display for Compare {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let op = match self.op {
            CompareOp::Equal => "==",
            CompareOp::NotEqual => "!=",
            CompareOp::Less => "<",
            CompareOp::Greater => ">",
        };
        let key = self.key;
        match self.target {
            CompareTarget::CreateRevision(r) => write!(f, "create_revision({key}) {op} {r}"),
            CompareTarget::ModRevision(r) => write!(f, "mod_revision({key}) {op} {r}"),
            CompareTarget::Version(v) => write!(f, "version({key}) {op} {v}"),
            CompareTarget::Value(v) => write!(f, "value({key}) {op} \"{v}\""),
        }
    }
}

/// As a watch names them: a key, `prefix/*`, `[from, end)`.
impl fmt::Display for Keys {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Keys::One(k) => write!(f, "{k}"),
            Keys::Prefix(p) => write!(f, "{p}*"),
            Keys::Between {
                from,
                end: Some(end),
            } => write!(f, "[{from}, {end})"),
            Keys::Between { from, end: None } => write!(f, "[{from}, ...)"),
        }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.keys {
            Keys::One(k) => write!(f, "get({k}")?,
            Keys::Prefix(p) => write!(f, "range({p}")?,
            // `[from, end)` as a watch names it.
            between @ Keys::Between { .. } => write!(f, "range({between}")?,
        }
        // A get of one key read as it always has: its sort and bound
        // change nothing.
        if let Keys::Prefix(_) | Keys::Between { .. } = self.keys {
            match self.sort {
                Sort::None => {}
                Sort::Ascend => write!(f, ", first-created")?,
                Sort::Descend => write!(f, ", last-created")?,
                Sort::By(target, order) => write!(f, ", by {target:?} {order:?}")?,
            }
            if self.max_create_revision > 0 {
                write!(f, ", max_create_revision={}", self.max_create_revision)?;
            }
        }
        match self.only {
            RangeOnly::Kvs => {}
            RangeOnly::Keys => write!(f, ", keys only")?,
            RangeOnly::Count => write!(f, ", count only")?,
        }
        if self.serializable {
            write!(f, ", serializable")?;
        }
        write!(f, ")")
    }
}

impl fmt::Display for WatchEvent {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            WatchEvent::Zk { kind, path } => write!(f, "{kind:?}({path})"),
            WatchEvent::Etcd {
                kind,
                key,
                revision,
            } => write!(f, "{kind:?}({key}) at revision {revision}"),
            WatchEvent::Consul { pair, index } => {
                write!(f, "blocking query answered at index {index}: ")?;
                write_pair(f, pair)
            }
            WatchEvent::ConsulList { pairs, index } => {
                write!(f, "blocking query answered at index {index}: ")?;
                write_pairs(f, pairs)
            }
        }
    }
}

/// A Consul listing as the answers show it.
fn write_pairs(f: &mut fmt::Formatter, pairs: &[KvPair]) -> fmt::Result {
    if pairs.is_empty() {
        return write!(f, "no keys");
    }
    for (i, p) in pairs.iter().enumerate() {
        if i > 0 {
            write!(f, "; ")?;
        }
        write_pair(f, &Some(*p))?;
    }
    Ok(())
}

/// A Consul pair as the answers show it.
fn write_pair(f: &mut fmt::Formatter, pair: &Option<KvPair>) -> fmt::Result {
    match pair {
        None => write!(f, "no key"),
        Some(p) => {
            write!(f, "{}", p.key)?;
            if !p.value.is_empty() {
                write!(f, " = {}", p.value)?;
            }
            match p.session {
                Some(s) => write!(f, ", session {s}")?,
                None => write!(f, ", no session")?,
            }
            write!(
                f,
                ", lock index {}, modify index {}",
                p.lock_index, p.modify_index
            )
        }
    }
}

impl fmt::Display for ConsulCmd {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            ConsulCmd::SessionCreate(o) => write!(
                f,
                "session/create(behavior={}, lock-delay={}ms)",
                o.behavior, o.lock_delay_ms
            ),
            ConsulCmd::SessionDestroy => write!(f, "session/destroy"),
            ConsulCmd::SessionInfo => write!(f, "session/info"),
            ConsulCmd::Get { key, index: 0, .. } => write!(f, "GET {key}"),
            ConsulCmd::Get {
                key,
                index,
                wait_ms: 0,
            } => write!(f, "GET {key}?index={index}"),
            ConsulCmd::Get {
                key,
                index,
                wait_ms,
            } => write!(f, "GET {key}?index={index}&wait={wait_ms}ms"),
            ConsulCmd::List {
                prefix, index: 0, ..
            } => write!(f, "GET {prefix}?recurse"),
            ConsulCmd::List {
                prefix,
                index,
                wait_ms: 0,
            } => write!(f, "GET {prefix}?recurse&index={index}"),
            ConsulCmd::List {
                prefix,
                index,
                wait_ms,
            } => write!(f, "GET {prefix}?recurse&index={index}&wait={wait_ms}ms"),
            ConsulCmd::Acquire { key, value } if value.is_empty() => write!(f, "PUT {key}?acquire"),
            ConsulCmd::Acquire { key, value } => write!(f, "PUT {key}?acquire ({value})"),
            ConsulCmd::Release { key } => write!(f, "PUT {key}?release"),
            ConsulCmd::Cas { key, value, index } => write!(f, "PUT {key}?cas={index} ({value})"),
            ConsulCmd::Delete { key, cas: None } => write!(f, "DELETE {key}"),
            ConsulCmd::Delete {
                key,
                cas: Some(index),
            } => write!(f, "DELETE {key}?cas={index}"),
            ConsulCmd::Put { key, value } => write!(f, "PUT {key} ({value})"),
            ConsulCmd::DeleteTree { prefix } => write!(f, "DELETE {prefix}?recurse"),
        }
    }
}

impl fmt::Display for ConsulReply {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ConsulReply::SessionCreated => write!(f, "session created"),
            ConsulReply::SessionDestroyed => write!(f, "session destroyed"),
            ConsulReply::Pair { pair, index } => {
                write!(f, "index {index}: ")?;
                write_pair(f, pair)
            }
            ConsulReply::List { pairs, index } => {
                write!(f, "index {index}: ")?;
                write_pairs(f, pairs)
            }
            ConsulReply::Held => write!(f, "held (blocking query)"),
            ConsulReply::Bool(b) => write!(f, "{b}"),
            ConsulReply::InvalidSession => write!(f, "500 invalid session"),
            ConsulReply::SessionInfo(Some(o)) => write!(
                f,
                "session live (behavior={}, lock-delay={}ms)",
                o.behavior, o.lock_delay_ms
            ),
            ConsulReply::SessionInfo(None) => write!(f, "null (no such session)"),
        }
    }
}

/// As `MONITOR` would show the command (a script by what it does).
impl fmt::Display for RedisCmd {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            RedisCmd::Set { key, value, nx, px } => {
                write!(f, "SET {key} {value}")?;
                if nx {
                    write!(f, " NX")?;
                }
                if let Some(ms) = px {
                    write!(f, " PX {ms}")?;
                }
                Ok(())
            }
            RedisCmd::SetNx { key, value } => write!(f, "SETNX {key} {value}"),
            RedisCmd::Expire {
                key,
                ms,
                seconds: true,
            } => write!(f, "EXPIRE {key} {}", ms / 1000),
            RedisCmd::Expire { key, ms, .. } => write!(f, "PEXPIRE {key} {ms}"),
            RedisCmd::Get { key } => write!(f, "GET {key}"),
            RedisCmd::Del { key } => write!(f, "DEL {key}"),
            RedisCmd::Incr { key } => write!(f, "INCR {key}"),
            RedisCmd::DelIfValue { key, value } => {
                write!(f, "EVAL(if GET {key} == {value} then DEL {key})")
            }
            RedisCmd::ExpireIfValue { key, value, ms } => {
                write!(f, "EVAL(if GET {key} == {value} then PEXPIRE {key} {ms})")
            }
            RedisCmd::Wait {
                replicas,
                timeout_ms,
            } => write!(f, "WAIT {replicas} {timeout_ms}"),
        }
    }
}

impl fmt::Display for RedisReply {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            RedisReply::Ok => write!(f, "OK"),
            RedisReply::Nil => write!(f, "(nil)"),
            RedisReply::Int(n) => write!(f, "(integer) {n}"),
            RedisReply::Value(d) => write!(f, "\"{d}\""),
            RedisReply::Down => write!(f, "error: master down"),
        }
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Msg::Request { session, req, .. } => write!(f, "{req} [session {session}]"),
            Msg::Reply { reply, .. } => write!(f, "{reply}"),
            Msg::Close { session } => write!(f, "close session {session}"),
            Msg::Ping { session } => write!(f, "ping [session {session}]"),
            Msg::Pong { session } => write!(f, "pong [session {session}]"),
            Msg::Notify { event, .. } => write!(f, "watch event {event}"),
            Msg::Expired { session } => write!(f, "session {session} expired"),
            Msg::Write { token, hold } => write!(f, "write (its hold #{hold}) with token {token}"),
            Msg::WriteAck { accepted, .. } => {
                write!(
                    f,
                    "{}",
                    if *accepted {
                        "write accepted"
                    } else {
                        "write rejected (fenced)"
                    }
                )
            }
        }
    }
}

fn write_ops(f: &mut fmt::Formatter, ops: &[TxnOp]) -> fmt::Result {
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            write!(f, "; ")?;
        }
        match op {
            TxnOp::Put { key, value, lease } => {
                write!(f, "put({key}")?;
                if !value.is_empty() {
                    write!(f, ", \"{value}\"")?;
                }
                if let Some(lease) = lease {
                    write!(f, ", lease {lease}")?;
                }
                write!(f, ")")?
            }
            TxnOp::Delete { key } => write!(f, "delete({key})")?,
            TxnOp::Range(r) => write!(f, "{r}")?,
        }
    }
    Ok(())
}

fn write_kvs(f: &mut fmt::Formatter, kvs: &[Kv]) -> fmt::Result {
    write!(f, "[")?;
    for (i, kv) in kvs.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{} created at {}", kv.key, kv.create_revision)?;
    }
    write!(f, "]")
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Reply::Connected => write!(f, "connected"),
            Reply::Created { path, czxid } => write!(f, "created {path} (czxid {czxid})"),
            Reply::Deleted => write!(f, "deleted"),
            Reply::Stat(Some(s)) if !s.data.is_empty() => {
                write!(f, "exists (czxid {}, data {})", s.czxid, s.data)
            }
            Reply::Stat(Some(s)) => write!(f, "exists (czxid {})", s.czxid),
            Reply::Stat(None) => write!(f, "no node"),
            Reply::Children(children) => {
                f.write_str("children [")?;
                for (i, c) in children.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    c.fmt(f)?;
                }
                f.write_str("]")
            }
            Reply::Error(e) => write!(f, "error {e:?}"),
            Reply::LeaseGranted { .. } => write!(f, "lease granted"),
            Reply::LeaseNotFound => write!(f, "error lease not found"),
            Reply::TxnResult {
                succeeded,
                revision,
                responses,
            } => {
                write!(
                    f,
                    "txn {} at revision {revision}",
                    if *succeeded { "succeeded" } else { "failed" }
                )?;
                for r in responses {
                    match r {
                        OpResult::Range { kvs } => {
                            write!(f, ", range ")?;
                            write_kvs(f, kvs)?;
                        }
                        OpResult::Count { count } => write!(f, ", count {count}")?,
                        OpResult::Put { .. } | OpResult::Delete { .. } => {}
                    }
                }
                Ok(())
            }
            Reply::RangeResult { revision, kvs } => {
                write!(f, "range at revision {revision}: ")?;
                write_kvs(f, kvs)
            }
            Reply::WatchCreated { revision } => write!(f, "watch created at revision {revision}"),
            Reply::DeleteResult { revision, deleted } => {
                write!(f, "deleted {deleted} key(s) at revision {revision}")
            }
            Reply::RangeCount { revision, count } => {
                write!(f, "count at revision {revision}: {count}")
            }
            Reply::LeaseRevoked => write!(f, "lease revoked"),
            Reply::LeaseKeptAlive => write!(f, "lease kept alive"),
            Reply::Redis(r) => write!(f, "{r}"),
            Reply::Consul(r) => write!(f, "{r}"),
            Reply::Synced => write!(f, "synced"),
            Reply::LeaseTtl { alive: false, .. } => write!(f, "lease not alive"),
            Reply::LeaseTtl { alive: true, keys } => {
                write!(f, "lease alive")?;
                if !keys.is_empty() {
                    write!(f, ", keys [")?;
                    for (i, k) in keys.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{k}")?;
                    }
                    write!(f, "]")?;
                }
                Ok(())
            }
            Reply::Multi(results) => {
                let ok = results.iter().all(|r| match r {
                    MultiResult::Checked
                    | MultiResult::Created { .. }
                    | MultiResult::Deleted
                    | MultiResult::Set(_) => true,
                    MultiResult::RolledBack
                    | MultiResult::Error(_)
                    | MultiResult::RuntimeInconsistency => false,
                });
                write!(f, "multi {} [", if ok { "succeeded" } else { "failed" })?;
                for (i, r) in results.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{r}")?;
                }
                write!(f, "]")
            }
        }
    }
}

/// What kind of store request a [`Request`] is, as the metrics count them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    Connect,
    Create,
    Delete,
    Exists,
    ExistsWatch,
    GetData,
    GetDataWatch,
    GetChildren,
    GetChildrenWatch,
    LeaseGrant,
    Txn,
    Range,
    Watch,
    DeleteKey,
    SetData,
    // New kinds go last: counters index by kind.
    Multi,
    LeaseRevoke,
    LeaseKeepAlive,
    LeaseTimeToLive,
    // --- Redis: one kind per command, as `MONITOR` names them ---
    RedisSet,
    RedisSetNx,
    RedisExpire,
    RedisGet,
    RedisDel,
    RedisIncr,
    /// A script (`EVAL`): compare-and-delete or compare-and-extend.
    RedisEval,
    RedisWait,
    // --- Consul: one kind per call ---
    ConsulSessionCreate,
    ConsulSessionDestroy,
    /// A `GET` answered at once (no index, or one already passed).
    ConsulGet,
    /// A blocking `GET` (`?index=`): Consul's only watch.
    ConsulBlockingGet,
    ConsulAcquire,
    ConsulRelease,
    ConsulCas,
    ConsulDelete,
    /// A plain `PUT` (no `?cas=`, no `?acquire=`).
    ConsulPut,
    /// `session/info`.
    ConsulSessionInfo,
    /// `DELETE ?recurse`.
    ConsulDeleteTree,
    // --- ZooKeeper, added after the others ---
    Sync,
}

/// The classes of requests the herd metrics add up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestClass {
    /// Change the store: create, delete, set_data, multi, txn, a lease's
    /// revoke.
    Writes,
    /// Read without registering a watch.
    Reads,
    /// Register a watch.
    Watches,
    /// Open a session or lease, or keep a lease alive.
    Session,
}

impl Request {
    pub fn kind(&self) -> RequestKind {
        match self {
            Request::Connect => RequestKind::Connect,
            Request::Sync { .. } => RequestKind::Sync,
            Request::Create { .. } => RequestKind::Create,
            Request::Delete { .. } => RequestKind::Delete,
            Request::Exists { watch: true, .. } => RequestKind::ExistsWatch,
            Request::Exists { watch: false, .. } => RequestKind::Exists,
            Request::GetData { watch: true, .. } => RequestKind::GetDataWatch,
            Request::GetData { watch: false, .. } => RequestKind::GetData,
            Request::GetChildren { watch: true, .. } => RequestKind::GetChildrenWatch,
            Request::GetChildren { watch: false, .. } => RequestKind::GetChildren,
            Request::LeaseGrant => RequestKind::LeaseGrant,
            Request::Txn(_) => RequestKind::Txn,
            Request::Range(_) => RequestKind::Range,
            Request::Watch { .. } => RequestKind::Watch,
            Request::DeleteKey { .. } => RequestKind::DeleteKey,
            Request::SetData { .. } => RequestKind::SetData,
            Request::Multi(_) => RequestKind::Multi,
            // A watch as the herd metrics count them, whatever it hears.
            Request::WatchRange { .. } => RequestKind::Watch,
            Request::LeaseRevoke => RequestKind::LeaseRevoke,
            Request::LeaseKeepAlive => RequestKind::LeaseKeepAlive,
            Request::LeaseTimeToLive { .. } => RequestKind::LeaseTimeToLive,
            Request::Redis { cmd, .. } => match cmd {
                RedisCmd::Set { .. } => RequestKind::RedisSet,
                RedisCmd::SetNx { .. } => RequestKind::RedisSetNx,
                RedisCmd::Expire { .. } => RequestKind::RedisExpire,
                RedisCmd::Get { .. } => RequestKind::RedisGet,
                RedisCmd::Del { .. } => RequestKind::RedisDel,
                RedisCmd::Incr { .. } => RequestKind::RedisIncr,
                RedisCmd::DelIfValue { .. } | RedisCmd::ExpireIfValue { .. } => {
                    RequestKind::RedisEval
                }
                RedisCmd::Wait { .. } => RequestKind::RedisWait,
            },
            Request::Consul(cmd) => match cmd {
                ConsulCmd::SessionCreate(_) => RequestKind::ConsulSessionCreate,
                ConsulCmd::SessionDestroy => RequestKind::ConsulSessionDestroy,
                ConsulCmd::Get { index: 0, .. } | ConsulCmd::List { index: 0, .. } => {
                    RequestKind::ConsulGet
                }
                ConsulCmd::Get { .. } | ConsulCmd::List { .. } => RequestKind::ConsulBlockingGet,
                ConsulCmd::Acquire { .. } => RequestKind::ConsulAcquire,
                ConsulCmd::Release { .. } => RequestKind::ConsulRelease,
                ConsulCmd::Cas { .. } => RequestKind::ConsulCas,
                ConsulCmd::Delete { .. } => RequestKind::ConsulDelete,
                ConsulCmd::Put { .. } => RequestKind::ConsulPut,
                ConsulCmd::SessionInfo => RequestKind::ConsulSessionInfo,
                ConsulCmd::DeleteTree { .. } => RequestKind::ConsulDeleteTree,
            },
        }
    }
}

impl RequestKind {
    /// Every kind, in declaration order: `ALL[k as usize] == k` (counters
    /// index by kind).
    pub const ALL: [RequestKind; 39] = [
        RequestKind::Connect,
        RequestKind::Create,
        RequestKind::Delete,
        RequestKind::Exists,
        RequestKind::ExistsWatch,
        RequestKind::GetData,
        RequestKind::GetDataWatch,
        RequestKind::GetChildren,
        RequestKind::GetChildrenWatch,
        RequestKind::LeaseGrant,
        RequestKind::Txn,
        RequestKind::Range,
        RequestKind::Watch,
        RequestKind::DeleteKey,
        RequestKind::SetData,
        RequestKind::Multi,
        RequestKind::LeaseRevoke,
        RequestKind::LeaseKeepAlive,
        RequestKind::LeaseTimeToLive,
        RequestKind::RedisSet,
        RequestKind::RedisSetNx,
        RequestKind::RedisExpire,
        RequestKind::RedisGet,
        RequestKind::RedisDel,
        RequestKind::RedisIncr,
        RequestKind::RedisEval,
        RequestKind::RedisWait,
        RequestKind::ConsulSessionCreate,
        RequestKind::ConsulSessionDestroy,
        RequestKind::ConsulGet,
        RequestKind::ConsulBlockingGet,
        RequestKind::ConsulAcquire,
        RequestKind::ConsulRelease,
        RequestKind::ConsulCas,
        RequestKind::ConsulDelete,
        RequestKind::ConsulPut,
        RequestKind::ConsulSessionInfo,
        RequestKind::ConsulDeleteTree,
        RequestKind::Sync,
    ];

    /// The name metrics and traces use (`exists_watch`).
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Connect => "connect",
            RequestKind::Create => "create",
            RequestKind::Delete => "delete",
            RequestKind::Exists => "exists",
            RequestKind::ExistsWatch => "exists_watch",
            RequestKind::GetData => "get_data",
            RequestKind::GetDataWatch => "get_data_watch",
            RequestKind::GetChildren => "get_children",
            RequestKind::GetChildrenWatch => "get_children_watch",
            RequestKind::LeaseGrant => "lease_grant",
            RequestKind::Txn => "txn",
            RequestKind::Range => "range",
            RequestKind::Watch => "watch",
            RequestKind::DeleteKey => "delete_key",
            RequestKind::SetData => "set_data",
            RequestKind::Multi => "multi",
            RequestKind::LeaseRevoke => "lease_revoke",
            RequestKind::LeaseKeepAlive => "lease_keep_alive",
            RequestKind::LeaseTimeToLive => "lease_time_to_live",
            RequestKind::RedisSet => "set",
            RequestKind::RedisSetNx => "setnx",
            RequestKind::RedisExpire => "pexpire",
            RequestKind::RedisGet => "get",
            RequestKind::RedisDel => "del",
            RequestKind::RedisIncr => "incr",
            RequestKind::RedisEval => "eval",
            RequestKind::RedisWait => "wait",
            RequestKind::ConsulSessionCreate => "session_create",
            RequestKind::ConsulSessionDestroy => "session_destroy",
            RequestKind::ConsulGet => "kv_get",
            RequestKind::ConsulBlockingGet => "kv_get_blocking",
            RequestKind::ConsulAcquire => "kv_acquire",
            RequestKind::ConsulRelease => "kv_release",
            RequestKind::ConsulCas => "kv_cas",
            RequestKind::ConsulDelete => "kv_delete",
            RequestKind::ConsulPut => "kv_put",
            RequestKind::ConsulSessionInfo => "session_info",
            RequestKind::ConsulDeleteTree => "kv_delete_tree",
            RequestKind::Sync => "sync",
        }
    }

    pub fn class(self) -> RequestClass {
        match self {
            RequestKind::Create
            | RequestKind::Delete
            | RequestKind::Txn
            | RequestKind::DeleteKey
            | RequestKind::SetData
            | RequestKind::Multi
            // It deletes the lease's keys.
            | RequestKind::LeaseRevoke
            | RequestKind::RedisSet
            | RequestKind::RedisSetNx
            | RequestKind::RedisExpire
            | RequestKind::RedisDel
            | RequestKind::RedisIncr
            | RequestKind::RedisEval
            | RequestKind::ConsulAcquire
            | RequestKind::ConsulRelease
            | RequestKind::ConsulCas
            | RequestKind::ConsulDelete
            | RequestKind::ConsulPut
            | RequestKind::ConsulDeleteTree
            // It releases (or deletes) the session's keys.
            | RequestKind::ConsulSessionDestroy => RequestClass::Writes,
            RequestKind::Exists
            | RequestKind::GetData
            | RequestKind::GetChildren
            | RequestKind::Range
            | RequestKind::LeaseTimeToLive
            | RequestKind::RedisGet
            // It changes nothing: it asks how far the replica has got.
            | RequestKind::RedisWait
            | RequestKind::ConsulGet
            // It reads the session table; it renews nothing.
            | RequestKind::ConsulSessionInfo
            // It changes nothing: it waits for the client's server.
            | RequestKind::Sync => RequestClass::Reads,
            RequestKind::ExistsWatch
            | RequestKind::GetDataWatch
            | RequestKind::GetChildrenWatch
            | RequestKind::Watch
            | RequestKind::ConsulBlockingGet => RequestClass::Watches,
            RequestKind::Connect
            | RequestKind::LeaseGrant
            | RequestKind::LeaseKeepAlive
            | RequestKind::ConsulSessionCreate => RequestClass::Session,
        }
    }
}

impl RequestClass {
    pub fn name(self) -> &'static str {
        match self {
            RequestClass::Writes => "writes",
            RequestClass::Reads => "reads",
            RequestClass::Watches => "watches",
            RequestClass::Session => "session",
        }
    }
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_kind_is_listed_at_its_own_index() {
        for (i, &k) in RequestKind::ALL.iter().enumerate() {
            assert_eq!(k as usize, i, "{k:?}");
            // Every kind once; a new kind must be added to ALL.
            match k {
                RequestKind::Connect
                | RequestKind::Create
                | RequestKind::Delete
                | RequestKind::Exists
                | RequestKind::ExistsWatch
                | RequestKind::GetData
                | RequestKind::GetDataWatch
                | RequestKind::GetChildren
                | RequestKind::GetChildrenWatch
                | RequestKind::LeaseGrant
                | RequestKind::Txn
                | RequestKind::Range
                | RequestKind::Watch
                | RequestKind::DeleteKey
                | RequestKind::SetData
                | RequestKind::Multi
                | RequestKind::LeaseRevoke
                | RequestKind::LeaseKeepAlive
                | RequestKind::LeaseTimeToLive
                | RequestKind::RedisSet
                | RequestKind::RedisSetNx
                | RequestKind::RedisExpire
                | RequestKind::RedisGet
                | RequestKind::RedisDel
                | RequestKind::RedisIncr
                | RequestKind::RedisEval
                | RequestKind::RedisWait
                | RequestKind::ConsulSessionCreate
                | RequestKind::ConsulSessionDestroy
                | RequestKind::ConsulGet
                | RequestKind::ConsulBlockingGet
                | RequestKind::ConsulAcquire
                | RequestKind::ConsulRelease
                | RequestKind::ConsulCas
                | RequestKind::ConsulDelete
                | RequestKind::ConsulPut
                | RequestKind::ConsulSessionInfo
                | RequestKind::ConsulDeleteTree
                | RequestKind::Sync => {}
            }
        }
    }
}
