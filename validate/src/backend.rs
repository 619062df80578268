//! The store's requests carried out against a real server: each `Request`
//! the recipes send becomes the matching ZooKeeper, etcd or Redis call
//! (Redis: [`crate::redis::Conns`]), and the answer comes back as the
//! model's `Reply`. Watches become tasks that
//! forward each event as the model's `WatchEvent`.

use etcd_client as etcd;
use models::ids::{Child, Data, Key, SessionId, ZPath};
use models::msg::{
    CompareOp, CompareTarget, EtcdEvent, Keys, Kv, MultiOp, MultiResult, OpResult, Range,
    RangeOnly, Reply, Request, SortOrder, SortTarget, Stat, TxnOp, WatchEvent, ZkError, ZkEvent,
};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use zookeeper_client as zk;

/// A watch to keep alive after the reply: it yields the events it has
/// seen, and the rest of the watch if it goes on (an etcd range watch is a
/// stream: each response's events, then the next response).
pub type Watch = Pin<Box<dyn Future<Output = Fired> + Send>>;

/// What a watch has yielded.
pub struct Fired {
    pub events: Vec<WatchEvent>,
    /// The watch goes on: its next events.
    pub then: Option<Watch>,
}

impl Fired {
    /// A watch's last events.
    fn last(events: Vec<WatchEvent>) -> Fired {
        Fired { events, then: None }
    }
}

pub enum Backend {
    ZooKeeper {
        endpoint: String,
        session_timeout: Duration,
        sessions: HashMap<SessionId, zk::Client>,
    },
    Etcd {
        client: Box<etcd::Client>,
        ttl_seconds: i64,
    },
    /// One connection per (session, master), each command journaled.
    Redis(crate::redis::Conns),
}

fn zk_error(e: zk::Error) -> Reply {
    match e {
        zk::Error::NodeExists => Reply::Error(ZkError::NodeExists),
        zk::Error::NoNode => Reply::Error(ZkError::NoNode),
        zk::Error::NotEmpty => Reply::Error(ZkError::NotEmpty),
        zk::Error::SessionExpired => Reply::Error(ZkError::SessionExpired),
        zk::Error::BadVersion => Reply::Error(ZkError::BadVersion),
        other => panic!("ZooKeeper: unexpected error {other:?}"),
    }
}

/// A real stat in the model's terms. The owner is named when it is one of
/// this client's own sessions (what the recipes compare with); another
/// client's session id means nothing here and is left out.
fn stat(s: &zk::Stat, sessions: &HashMap<SessionId, zk::Client>, data: &[u8]) -> Stat {
    let owner = sessions
        .iter()
        .find(|(_, c)| s.ephemeral_owner != 0 && c.session_id().0 == s.ephemeral_owner)
        .map(|(id, _)| *id);
    Stat {
        czxid: s.czxid as u64,
        mzxid: s.mzxid as u64,
        version: s.version as u32,
        cversion: s.cversion as u32,
        ephemeral_owner: owner,
        data: data_of(data),
    }
}

/// Data in the model's terms, from the bytes it is stored as (the text
/// [`bytes_of`] writes): empty, a number in decimal, a session's id in hex;
/// anything else is empty.
pub fn data_of(bytes: &[u8]) -> Data {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Data::Empty;
    };
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16)
            .ok()
            .and_then(SessionId::from_lease_id)
            .map_or(Data::Empty, Data::Session);
    }
    text.parse().map_or(Data::Empty, Data::Number)
}

/// The bytes data is stored as: its text (`Data`'s display).
pub fn bytes_of(data: Data) -> Vec<u8> {
    data.to_string().into_bytes()
}

fn create_mode(ephemeral: bool, sequential: bool) -> zk::CreateMode {
    match (ephemeral, sequential) {
        (true, true) => zk::CreateMode::EphemeralSequential,
        (true, false) => zk::CreateMode::Ephemeral,
        (false, true) => zk::CreateMode::PersistentSequential,
        (false, false) => zk::CreateMode::Persistent,
    }
}

/// A committed multi's result for `op`, in the model's terms.
fn multi_result(
    op: &MultiOp,
    r: zk::MultiWriteResult,
    sessions: &HashMap<SessionId, zk::Client>,
) -> MultiResult {
    match r {
        zk::MultiWriteResult::Check => MultiResult::Checked,
        zk::MultiWriteResult::Delete => MultiResult::Deleted,
        zk::MultiWriteResult::Create { path, stat } => MultiResult::Created {
            path: ZPath::parse(&path).expect("a name the store gave back parses"),
            czxid: stat.czxid as u64,
        },
        zk::MultiWriteResult::SetData { stat: st } => {
            let data = match *op {
                MultiOp::SetData { data, .. } => data,
                MultiOp::Check { .. } | MultiOp::Create { .. } | MultiOp::Delete { .. } => {
                    Data::Empty
                }
            };
            MultiResult::Set(stat(&st, sessions, &bytes_of(data)))
        }
        // The enum is open upstream; 0.9 has the four above.
        other => panic!("ZooKeeper: a multi result this client version has no name for: {other:?}"),
    }
}

fn zk_watch(w: zk::OneshotWatcher) -> Watch {
    Box::pin(async move {
        let e = w.changed().await;
        let kind = match e.event_type {
            zk::EventType::NodeCreated => ZkEvent::NodeCreated,
            zk::EventType::NodeDeleted => ZkEvent::NodeDeleted,
            zk::EventType::NodeChildrenChanged => ZkEvent::NodeChildrenChanged,
            zk::EventType::NodeDataChanged => ZkEvent::NodeDataChanged,
            _ => return Fired::last(Vec::new()), // session events are not notifications
        };
        Fired::last(match ZPath::parse(&e.path) {
            Some(path) => vec![WatchEvent::Zk { kind, path }],
            None => Vec::new(),
        })
    })
}

/// An etcd watch response's events, in the model's terms (a key this
/// model cannot name is left out).
fn etcd_events(resp: &etcd::WatchResponse) -> Vec<WatchEvent> {
    resp.events()
        .iter()
        .filter_map(|ev| {
            let kind = match ev.event_type() {
                etcd::EventType::Put => EtcdEvent::Put,
                etcd::EventType::Delete => EtcdEvent::Delete,
            };
            let kv = ev.kv()?;
            Some(WatchEvent::Etcd {
                kind,
                key: Key::parse(kv.key_str().ok()?)?,
                revision: kv.mod_revision() as u64,
            })
        })
        .collect()
}

/// An etcd range watch from its next response on: a stream, to the end of
/// the connection (the model's client never cancels one). The watcher
/// goes with it: dropped, it would end the stream.
fn etcd_range_watch(mut watcher: etcd::Watcher, mut stream: etcd::WatchStream) -> Watch {
    Box::pin(async move {
        match stream.message().await {
            Ok(Some(resp)) => Fired {
                events: etcd_events(&resp),
                then: Some(etcd_range_watch(watcher, stream)),
            },
            Ok(None) | Err(_) => {
                let _ = watcher.cancel().await;
                Fired::last(Vec::new())
            }
        }
    })
}

fn kv(k: &etcd::KeyValue) -> Option<Kv> {
    Some(Kv {
        key: Key::parse(k.key_str().ok()?)?,
        create_revision: k.create_revision() as u64,
        mod_revision: k.mod_revision() as u64,
        version: k.version() as u64,
        lease: match k.lease() {
            0 => None,
            id => Some(SessionId::from_lease_id(id)?),
        },
        value: data_of(k.value()),
    })
}

/// etcd's ways of giving a range its end, on a get's or a watch's
/// options.
trait RangeEnd: Sized {
    fn with_prefix(self) -> Self;
    fn with_range(self, end: String) -> Self;
    fn with_from_key(self) -> Self;
}

/// Both option types have the three, under these names.
macro_rules! range_end {
    ($($options:ty),*) => {$(
        impl RangeEnd for $options {
            fn with_prefix(self) -> Self {
                self.with_prefix()
            }
            fn with_range(self, end: String) -> Self {
                self.with_range(end)
            }
            fn with_from_key(self) -> Self {
                self.with_from_key()
            }
        }
    )*};
}
range_end!(etcd::GetOptions, etcd::WatchOptions);

/// The key etcd is sent for `keys`, and the options with the range's end.
fn keyed<O: RangeEnd>(keys: Keys, o: O) -> (String, O) {
    match keys {
        Keys::One(k) => (k.to_string(), o),
        Keys::Prefix(p) => (p.to_string(), RangeEnd::with_prefix(o)),
        Keys::Between { from, end } => {
            let o = match end {
                Some(end) => RangeEnd::with_range(o, end.to_string()),
                None => RangeEnd::with_from_key(o),
            };
            (etcd_key_text(from), o)
        }
    }
}

fn get_options(r: &Range) -> (String, etcd::GetOptions) {
    let (key, mut o) = keyed(r.keys, etcd::GetOptions::new());
    if let Some((target, order)) = r.sort.target() {
        let target = match target {
            SortTarget::Key => etcd::SortTarget::Key,
            SortTarget::Version => etcd::SortTarget::Version,
            SortTarget::Create => etcd::SortTarget::Create,
            SortTarget::Mod => etcd::SortTarget::Mod,
            SortTarget::Value => etcd::SortTarget::Value,
        };
        let order = match order {
            SortOrder::Ascend => etcd::SortOrder::Ascend,
            SortOrder::Descend => etcd::SortOrder::Descend,
        };
        o = o.with_sort(target, order);
    }
    if r.limit > 0 {
        o = o.with_limit(r.limit as i64);
    }
    if r.max_create_revision > 0 {
        o = o.with_max_create_revision(r.max_create_revision as i64);
    }
    match r.only {
        RangeOnly::Kvs => {}
        RangeOnly::Keys => o = o.with_keys_only(),
        RangeOnly::Count => o = o.with_count_only(),
    }
    if r.serializable {
        o = o.with_serializable();
    }
    (key, o)
}

/// A range's first key as etcd takes it: no empty key (`\0` is the first
/// there is).
fn etcd_key_text(from: models::ids::Name) -> String {
    match from.as_str() {
        "" => "\0".to_string(),
        from => from.to_string(),
    }
}

/// A range's answer as a txn op's: its key-values, or its count.
fn read_result(r: &Range, kvs: &[etcd::KeyValue], count: i64) -> OpResult {
    match r.only {
        RangeOnly::Count => OpResult::Count {
            count: count as u64,
        },
        RangeOnly::Kvs | RangeOnly::Keys => OpResult::Range {
            kvs: kvs.iter().filter_map(kv).collect(),
        },
    }
}

/// One keepalive of `session`'s lease: whether it is alive (etcd answers
/// a TTL of 0 for a lease that is gone).
async fn keep_alive_once(client: &mut etcd::Client, session: SessionId) -> bool {
    match client.lease_keep_alive(session.lease_id()).await {
        Ok((mut keeper, mut stream)) => {
            let _ = keeper.keep_alive().await;
            matches!(stream.message().await, Ok(Some(r)) if r.ttl() > 0)
        }
        Err(_) => false,
    }
}

/// Whether etcd answered that the lease is gone.
pub fn lease_not_found(e: &etcd::Error) -> bool {
    e.to_string().contains("lease not found")
}

impl Backend {
    /// Carries out one request of `session`; returns the reply, the store's
    /// header for it (zxid or revision, 0 where the client API hides it), and
    /// the watch it left, if any.
    pub async fn call(&mut self, session: SessionId, req: &Request) -> (Reply, u64, Option<Watch>) {
        match self {
            Backend::Redis(conns) => (conns.call(session, req).await, 0, None),
            Backend::ZooKeeper {
                endpoint,
                session_timeout,
                sessions,
            } => {
                if let Request::Connect = req {
                    let client = zk::Client::connector()
                        .session_timeout(*session_timeout)
                        .connect(endpoint)
                        .await
                        .expect("ZooKeeper accepts a session");
                    sessions.insert(session, client);
                    return (Reply::Connected, 0, None);
                }
                let Some(c) = sessions.get(&session) else {
                    return (Reply::Error(ZkError::SessionExpired), 0, None);
                };
                let acl = zk::Acls::anyone_all();
                match req {
                    Request::Create {
                        path,
                        ephemeral,
                        sequential,
                        data,
                    } => {
                        let mode = create_mode(*ephemeral, *sequential);
                        // A sequential create's path is the name before the
                        // number the server appends.
                        let name = path.to_string();
                        match c
                            .create(&name, &bytes_of(*data), &mode.with_acls(acl))
                            .await
                        {
                            Ok((st, seq)) => {
                                let full = if *sequential {
                                    format!("{name}{seq}")
                                } else {
                                    name
                                };
                                let created =
                                    ZPath::parse(&full).expect("a name the store gave back parses");
                                (
                                    Reply::Created {
                                        path: created,
                                        czxid: st.czxid as u64,
                                    },
                                    st.czxid as u64,
                                    None,
                                )
                            }
                            Err(e) => (zk_error(e), 0, None),
                        }
                    }
                    Request::Delete { path, version } => {
                        match c.delete(&path.to_string(), version.map(|v| v as i32)).await {
                            Ok(()) => (Reply::Deleted, 0, None),
                            Err(e) => (zk_error(e), 0, None),
                        }
                    }
                    Request::SetData {
                        path,
                        data,
                        version,
                    } => {
                        let bytes = bytes_of(*data);
                        match c
                            .set_data(&path.to_string(), &bytes, version.map(|v| v as i32))
                            .await
                        {
                            Ok(st) => (
                                Reply::Stat(Some(stat(&st, sessions, &bytes))),
                                st.mzxid as u64,
                                None,
                            ),
                            Err(e) => (zk_error(e), 0, None),
                        }
                    }
                    Request::Exists { path, watch: true } => {
                        match c.check_and_watch_stat(&path.to_string()).await {
                            Ok((st, w)) => (
                                Reply::Stat(st.map(|s| stat(&s, sessions, b""))),
                                0,
                                Some(zk_watch(w)),
                            ),
                            Err(e) => (zk_error(e), 0, None),
                        }
                    }
                    Request::Exists { path, watch: false } => {
                        match c.check_stat(&path.to_string()).await {
                            Ok(st) => (Reply::Stat(st.map(|s| stat(&s, sessions, b""))), 0, None),
                            Err(e) => (zk_error(e), 0, None),
                        }
                    }
                    Request::GetData { path, watch: true } => {
                        match c.get_and_watch_data(&path.to_string()).await {
                            Ok((data, st, w)) => (
                                Reply::Stat(Some(stat(&st, sessions, &data))),
                                0,
                                Some(zk_watch(w)),
                            ),
                            Err(e) => (zk_error(e), 0, None),
                        }
                    }
                    Request::GetData { path, watch: false } => {
                        match c.get_data(&path.to_string()).await {
                            Ok((data, st)) => {
                                (Reply::Stat(Some(stat(&st, sessions, &data))), 0, None)
                            }
                            Err(e) => (zk_error(e), 0, None),
                        }
                    }
                    Request::GetChildren { path, watch } => {
                        let p = path.to_string();
                        let (names, w) = if *watch {
                            match c.get_and_watch_children(&p).await {
                                Ok((names, _, w)) => (names, Some(zk_watch(w))),
                                Err(e) => return (zk_error(e), 0, None),
                            }
                        } else {
                            match c.list_children(&p).await {
                                Ok(names) => (names, None),
                                Err(e) => return (zk_error(e), 0, None),
                            }
                        };
                        // The store's contract: children in sequence order,
                        // then by name.
                        let mut children: Vec<Child> =
                            names.iter().filter_map(|n| Child::parse(n)).collect();
                        children.sort();
                        (Reply::Children(children.into()), 0, w)
                    }
                    Request::Sync { path } => match c.sync(&path.to_string()).await {
                        Ok(()) => (Reply::Synced, 0, None),
                        Err(e) => (zk_error(e), 0, None),
                    },
                    Request::Multi(ops) => {
                        let mut writer = c.new_multi_writer();
                        for op in ops {
                            let added = match *op {
                                // ZooKeeper's version -1 checks existence only.
                                MultiOp::Check { path, version } => writer.add_check_version(
                                    &path.to_string(),
                                    version.map_or(-1, |v| v as i32),
                                ),
                                MultiOp::Create {
                                    path,
                                    ephemeral,
                                    sequential,
                                    data,
                                } => writer.add_create(
                                    &path.to_string(),
                                    &bytes_of(data),
                                    &create_mode(ephemeral, sequential).with_acls(acl),
                                ),
                                MultiOp::Delete { path, version } => {
                                    writer.add_delete(&path.to_string(), version.map(|v| v as i32))
                                }
                                MultiOp::SetData {
                                    path,
                                    data,
                                    version,
                                } => writer.add_set_data(
                                    &path.to_string(),
                                    &bytes_of(data),
                                    version.map(|v| v as i32),
                                ),
                            };
                            added.expect("the client takes the model's paths");
                        }
                        match writer.commit().await {
                            Ok(done) => {
                                let results: Vec<MultiResult> = ops
                                    .iter()
                                    .zip(done)
                                    .map(|(op, r)| multi_result(op, r, sessions))
                                    .collect();
                                let zxid = results
                                    .iter()
                                    .find_map(|r| match r {
                                        MultiResult::Created { czxid, .. } => Some(*czxid),
                                        MultiResult::Set(s) => Some(s.mzxid),
                                        MultiResult::Checked
                                        | MultiResult::Deleted
                                        | MultiResult::RolledBack
                                        | MultiResult::Error(_)
                                        | MultiResult::RuntimeInconsistency => None,
                                    })
                                    .unwrap_or(0);
                                (Reply::Multi(results), zxid, None)
                            }
                            // The client reports the first op whose error is
                            // not OK; the server's results around it are OK
                            // before and RUNTIMEINCONSISTENCY after.
                            Err(zk::MultiWriteError::OperationFailed { index, source }) => {
                                let Reply::Error(e) = zk_error(source) else {
                                    unreachable!("zk_error answers an error")
                                };
                                let results = MultiResult::failed_at(ops.len(), index, e);
                                (Reply::Multi(results), 0, None)
                            }
                            Err(zk::MultiWriteError::RequestFailed { source }) => {
                                (zk_error(source), 0, None)
                            }
                        }
                    }
                    other => panic!("not a ZooKeeper request: {other}"),
                }
            }
            Backend::Etcd {
                client,
                ttl_seconds,
            } => match req {
                Request::LeaseGrant => {
                    let opts = etcd::LeaseGrantOptions::new().with_id(session.lease_id());
                    client
                        .lease_grant(*ttl_seconds, Some(opts))
                        .await
                        .expect("etcd grants the lease");
                    // The lease is the id the client asked for (etcd
                    // grants a chosen id), not one the model's store would
                    // number in grant order.
                    (Reply::LeaseGranted { lease: session }, 0, None)
                }
                Request::Txn(t) => {
                    let ops = |ops: &[TxnOp]| -> Vec<etcd::TxnOp> {
                        ops.iter()
                            .map(|op| match op {
                                TxnOp::Put { key, value, lease } => etcd::TxnOp::put(
                                    key.to_string(),
                                    bytes_of(*value),
                                    lease.map(|l| etcd::PutOptions::new().with_lease(l.lease_id())),
                                ),
                                TxnOp::Delete { key } => etcd::TxnOp::delete(key.to_string(), None),
                                TxnOp::Range(r) => {
                                    let (k, o) = get_options(r);
                                    etcd::TxnOp::get(k, Some(o))
                                }
                            })
                            .collect()
                    };
                    let compares: Vec<etcd::Compare> = t
                        .compares
                        .iter()
                        .map(|c| {
                            let op = match c.op {
                                CompareOp::Equal => etcd::CompareOp::Equal,
                                CompareOp::NotEqual => etcd::CompareOp::NotEqual,
                                CompareOp::Less => etcd::CompareOp::Less,
                                CompareOp::Greater => etcd::CompareOp::Greater,
                            };
                            let key = c.key.to_string();
                            match c.target {
                                CompareTarget::CreateRevision(r) => {
                                    etcd::Compare::create_revision(key, op, r as i64)
                                }
                                CompareTarget::ModRevision(r) => {
                                    etcd::Compare::mod_revision(key, op, r as i64)
                                }
                                CompareTarget::Version(v) => {
                                    etcd::Compare::version(key, op, v as i64)
                                }
                                CompareTarget::Value(v) => {
                                    etcd::Compare::value(key, op, bytes_of(v))
                                }
                            }
                        })
                        .collect();
                    let txn = etcd::Txn::new()
                        .when(compares)
                        .and_then(ops(&t.success))
                        .or_else(ops(&t.failure));
                    match client.txn(txn).await {
                        Ok(resp) => {
                            let revision = resp.header().map_or(0, |h| h.revision()) as u64;
                            let branch = if resp.succeeded() {
                                &t.success
                            } else {
                                &t.failure
                            };
                            let responses = resp
                                .op_responses()
                                .iter()
                                .zip(branch)
                                .map(|(r, op)| match (r, op) {
                                    (etcd::TxnOpResponse::Put(_), _) => OpResult::Put { revision },
                                    (etcd::TxnOpResponse::Delete(d), _) => OpResult::Delete {
                                        deleted: d.deleted() as u32,
                                    },
                                    (etcd::TxnOpResponse::Get(g), TxnOp::Range(r)) => {
                                        read_result(r, g.kvs(), g.count())
                                    }
                                    _ => OpResult::Range { kvs: Vec::new() },
                                })
                                .collect();
                            (
                                Reply::TxnResult {
                                    succeeded: resp.succeeded(),
                                    revision,
                                    responses,
                                },
                                revision,
                                None,
                            )
                        }
                        Err(e) if lease_not_found(&e) => (Reply::LeaseNotFound, 0, None),
                        Err(e) => panic!("etcd txn: {e}"),
                    }
                }
                Request::Range(r) => {
                    let (k, o) = get_options(r);
                    let resp = client.get(k, Some(o)).await.expect("etcd range");
                    let revision = resp.header().map_or(0, |h| h.revision()) as u64;
                    let reply = match r.only {
                        RangeOnly::Count => Reply::RangeCount {
                            revision,
                            count: resp.count() as u64,
                        },
                        RangeOnly::Kvs | RangeOnly::Keys => Reply::RangeResult {
                            revision,
                            kvs: resp.kvs().iter().filter_map(kv).collect(),
                        },
                    };
                    (reply, revision, None)
                }
                Request::Watch {
                    key,
                    start_revision,
                } => {
                    let opts =
                        etcd::WatchOptions::new().with_start_revision(*start_revision as i64);
                    let (mut watcher, mut stream) = client
                        .watch(key.to_string(), Some(opts))
                        .await
                        .expect("etcd watch");
                    let watch: Watch = Box::pin(async move {
                        // The stream until the delete waitDelete waits for.
                        let mut seen = Vec::new();
                        while let Ok(Some(resp)) = stream.message().await {
                            for event in etcd_events(&resp) {
                                let deleted = matches!(
                                    event,
                                    WatchEvent::Etcd {
                                        kind: EtcdEvent::Delete,
                                        ..
                                    }
                                );
                                seen.push(event);
                                if deleted {
                                    let _ = watcher.cancel().await;
                                    return Fired::last(seen);
                                }
                            }
                        }
                        Fired::last(seen)
                    });
                    (
                        Reply::WatchCreated {
                            revision: *start_revision,
                        },
                        0,
                        Some(watch),
                    )
                }
                Request::WatchRange {
                    keys,
                    start_revision,
                } => {
                    let (key, opts) = keyed(
                        *keys,
                        etcd::WatchOptions::new().with_start_revision(*start_revision as i64),
                    );
                    let (watcher, stream) =
                        client.watch(key, Some(opts)).await.expect("etcd watch");
                    (
                        Reply::WatchCreated {
                            revision: *start_revision,
                        },
                        0,
                        Some(etcd_range_watch(watcher, stream)),
                    )
                }
                Request::LeaseRevoke => match client.lease_revoke(session.lease_id()).await {
                    Ok(resp) => {
                        let revision = resp.header().map_or(0, |h| h.revision()) as u64;
                        (Reply::LeaseRevoked, revision, None)
                    }
                    Err(e) if lease_not_found(&e) => (Reply::LeaseNotFound, 0, None),
                    Err(e) => panic!("etcd lease revoke: {e}"),
                },
                // `KeepAliveOnce`: a TTL of 0 back is a lease not found.
                Request::LeaseKeepAlive => {
                    if keep_alive_once(client, session).await {
                        (Reply::LeaseKeptAlive, 0, None)
                    } else {
                        (Reply::LeaseNotFound, 0, None)
                    }
                }
                Request::LeaseTimeToLive { lease, keys } => {
                    let opts = keys.then(|| etcd::LeaseTimeToLiveOptions::new().with_keys());
                    let resp = client
                        .lease_time_to_live(lease.lease_id(), opts)
                        .await
                        .expect("etcd answers a lease's time to live");
                    // etcd answers TTL -1 for a lease that is gone.
                    let alive = resp.ttl() >= 0;
                    let mut keys: Vec<Key> = resp
                        .keys()
                        .iter()
                        .filter_map(|k| Key::parse(std::str::from_utf8(k).ok()?))
                        .collect();
                    keys.sort();
                    (Reply::LeaseTtl { alive, keys }, 0, None)
                }
                Request::DeleteKey { key } => {
                    let resp = client
                        .delete(key.to_string(), None)
                        .await
                        .expect("etcd delete");
                    let revision = resp.header().map_or(0, |h| h.revision()) as u64;
                    (
                        Reply::DeleteResult {
                            revision,
                            deleted: resp.deleted() as u32,
                        },
                        revision,
                        None,
                    )
                }
                other => panic!("not an etcd request: {other}"),
            },
        }
    }

    /// A heartbeat: ZooKeeper's client library pings by itself; an etcd
    /// lease needs a keepalive. False if the session is gone.
    pub async fn ping(&mut self, session: SessionId) -> bool {
        match self {
            Backend::ZooKeeper { sessions, .. } => sessions.contains_key(&session),
            Backend::Etcd { client, .. } => keep_alive_once(client, session).await,
            // A Redis connection is no session.
            Backend::Redis(_) => true,
        }
    }

    /// Closes a session (ZooKeeper close, etcd lease revoke).
    pub async fn close(&mut self, session: SessionId) {
        match self {
            Backend::ZooKeeper { sessions, .. } => {
                sessions.remove(&session);
            }
            Backend::Etcd { client, .. } => {
                let _ = client.lease_revoke(session.lease_id()).await;
            }
            Backend::Redis(conns) => conns.close(session),
        }
    }

    /// The Redis commands carried out so far, with their replies, taken
    /// out (none for the other stores).
    pub fn take_journal(&mut self) -> Vec<crate::redis::Exchange> {
        match self {
            Backend::Redis(conns) => std::mem::take(&mut conns.journal),
            Backend::ZooKeeper { .. } | Backend::Etcd { .. } => Vec::new(),
        }
    }
}
