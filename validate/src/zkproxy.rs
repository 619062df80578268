//! A ZooKeeper wire-protocol proxy on loopback: what real client libraries
//! send and receive, counted at the wire, and a switch that cuts a client
//! off (a partition) without closing its sockets.
//!
//! Each [`Proxy`] listens on a free port of 127.0.0.1 and forwards every
//! connection accepted there to the real server, reading whole frames (a
//! 4-byte big-endian length, then the body) both ways and logging what each
//! one is, in the order the proxy passed them on:
//!
//! - client → server: the first frame of a connection is the
//!   `ConnectRequest` (no request header; it carries the session id the
//!   client wants back, 0 for a new one); the later ones open with a
//!   `RequestHeader` (xid, op code) and, for the ops that name one, a path
//!   (and for `exists`, `getData`, `getChildren` and `getChildren2`, whether
//!   it sets a watch);
//! - server → client: the first frame is the `ConnectResponse` (a negotiated
//!   timeout of 0 means the session the client asked for has expired); the
//!   later ones open with a `ReplyHeader` (xid, zxid, err): xid −1 is a watch
//!   notification (a `WatcherEvent`: type, state, path follow), xid −2 a
//!   ping's reply, anything else the reply to the request with that xid.
//!
//! Frozen, a proxy stops forwarding both ways on every connection it has,
//! and connections opened while it is frozen are accepted but reach the
//! server only once it thaws: the client is partitioned from the server,
//! while the proxy keeps every socket open. What was sent meanwhile waits in
//! the proxy and flows when it thaws. One proxy per client makes the freeze
//! per client, reconnections included.

use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The largest frame the proxy passes on (ZooKeeper's own limit,
/// `jute.maxbuffer`, is 1 MiB by default).
const MAX_FRAME: usize = 64 << 20;

/// `ZooDefs.OpCode` of ZooKeeper 3.8, by number.
pub fn op_name(code: i32) -> String {
    match code {
        0 => "notification",
        1 => "create",
        2 => "delete",
        3 => "exists",
        4 => "getData",
        5 => "setData",
        6 => "getACL",
        7 => "setACL",
        8 => "getChildren",
        9 => "sync",
        11 => "ping",
        12 => "getChildren2",
        13 => "check",
        14 => "multi",
        15 => "create2",
        16 => "reconfig",
        17 => "checkWatches",
        18 => "removeWatches",
        19 => "createContainer",
        20 => "deleteContainer",
        21 => "createTTL",
        22 => "multiRead",
        100 => "auth",
        101 => "setWatches",
        102 => "sasl",
        103 => "getEphemerals",
        104 => "getAllChildrenNumber",
        105 => "setWatches2",
        106 => "addWatch",
        107 => "whoAmI",
        -10 => "createSession",
        -11 => "closeSession",
        -1 => "error",
        other => return format!("op{other}"),
    }
    .to_string()
}

/// `Watcher.Event.EventType`, by number.
pub fn event_name(code: i32) -> String {
    match code {
        -1 => "None",
        1 => "NodeCreated",
        2 => "NodeDeleted",
        3 => "NodeDataChanged",
        4 => "NodeChildrenChanged",
        5 => "DataWatchRemoved",
        6 => "ChildWatchRemoved",
        7 => "PersistentWatchRemoved",
        other => return format!("event{other}"),
    }
    .to_string()
}

/// Ops whose request body opens with a path.
fn has_path(op: i32) -> bool {
    matches!(
        op,
        1..=9 | 12 | 13 | 15 | 17..=21 | 104 | 106 | 103
    )
}

/// Ops whose request is `(path, watch: bool)`.
fn has_watch_flag(op: i32) -> bool {
    matches!(op, 3 | 4 | 8 | 12)
}

/// Which way a frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Client,
    Server,
}

/// One thing the proxy passed on (or saw happen).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Wire {
    /// The client opened a connection to the proxy.
    Accepted,
    /// The proxy could not reach the server for it.
    UpstreamFailed { error: String },
    /// The client's `ConnectRequest`: the session it wants back (0: new).
    ConnectRequest { session: i64 },
    /// The server's `ConnectResponse`: the session and its negotiated
    /// timeout — 0 when the session asked for has expired.
    ConnectResponse { session: i64, timeout_ms: i32 },
    /// A request: its op, the path it names (if its op names one) and
    /// whether it sets a watch.
    Request {
        op: String,
        path: Option<String>,
        watch: bool,
    },
    /// A reply with an error code (replies without one are not logged).
    ErrorReply { op: String, err: i32 },
    /// A ping's reply.
    Pong,
    /// A watch notification.
    Notification { event: String, path: String },
    /// The connection ended; `by` is the side whose end the proxy saw first.
    Closed { by: Side },
    /// A frame the proxy could not read as ZooKeeper's.
    Unparsed { from: Side, len: usize },
}

/// A [`Wire`] event with when and on which connection.
#[derive(Clone, Debug, Serialize)]
pub struct WireEvent {
    /// Wall time, seconds since the Unix epoch: the harnesses print the same
    /// clock, so their lines and the wire share one time axis.
    pub at: f64,
    /// The connection, numbered by the order the proxy accepted them.
    pub conn: usize,
    #[serde(flatten)]
    pub what: Wire,
}

struct Shared {
    upstream: String,
    frozen: watch::Sender<bool>,
    log: Mutex<Vec<WireEvent>>,
    connections: AtomicUsize,
}

impl Shared {
    fn record(&self, conn: usize, what: Wire) {
        self.log.lock().unwrap().push(WireEvent {
            at: now_s(),
            conn,
            what,
        });
    }
}

/// When the connections on `wire` opened a session (their connect
/// answered with a timeout: neither refused nor expired).
pub fn sessions_opened(wire: &[WireEvent]) -> impl Iterator<Item = f64> + '_ {
    wire.iter().filter_map(|e| match e.what {
        Wire::ConnectResponse { timeout_ms, .. } if timeout_ms > 0 => Some(e.at),
        _ => None,
    })
}

/// Wall time, seconds since the Unix epoch.
pub fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A running proxy. It runs on a thread of its own (with its own tokio
/// runtime), so blocking callers — harness processes waited on, signals,
/// sleeps — never starve it. Dropping it closes every connection.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    /// Starts a proxy on a free loopback port in front of `upstream`
    /// (`host:port`).
    pub fn start(upstream: &str) -> Result<Proxy, String> {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("proxy: cannot listen on loopback: {e}"))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| format!("proxy: {e}"))?;
        let addr = std_listener
            .local_addr()
            .map_err(|e| format!("proxy: {e}"))?;
        let (frozen, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            upstream: upstream.to_string(),
            frozen,
            log: Mutex::new(Vec::new()),
            connections: AtomicUsize::new(0),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("proxy: cannot start its runtime: {e}"))?;
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("zkproxy-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match TcpListener::from_std(std_listener) {
                        Ok(l) => l,
                        Err(e) => {
                            s.record(
                                0,
                                Wire::UpstreamFailed {
                                    error: format!("listener: {e}"),
                                },
                            );
                            return;
                        }
                    };
                    tokio::select! {
                        _ = stopped => {}
                        _ = accept_loop(listener, s) => {}
                    }
                });
                // Dropping the runtime here ends every connection's task and
                // closes its sockets.
            })
            .map_err(|e| format!("proxy: cannot start its thread: {e}"))?;
        Ok(Proxy {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Where clients connect: `127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        self.addr.to_string()
    }

    /// Stops forwarding, both ways, on every connection, and holds new ones
    /// back from the server: a partition.
    pub fn freeze(&self) {
        self.shared.frozen.send_replace(true);
    }

    /// Forwards again: what waited flows on.
    pub fn thaw(&self) {
        self.shared.frozen.send_replace(false);
    }

    /// What the proxy has passed on so far, in order.
    pub fn events(&self) -> Vec<WireEvent> {
        self.shared.log.lock().unwrap().clone()
    }

    /// Forgets what it has logged (the connection numbers go on).
    pub fn reset(&self) {
        self.shared.log.lock().unwrap().clear();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            // Out of file descriptors, say: try again shortly.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let conn = shared.connections.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(serve(shared.clone(), client, conn));
    }
}

/// Waits until the proxy is not frozen.
async fn thawed(rx: &mut watch::Receiver<bool>) {
    // The sender lives as long as the proxy's tasks, so this cannot fail
    // while they run.
    let _ = rx.wait_for(|frozen| !*frozen).await;
}

async fn serve(shared: Arc<Shared>, client: TcpStream, conn: usize) {
    shared.record(conn, Wire::Accepted);
    let mut thaw = shared.frozen.subscribe();
    // A connection opened during a partition reaches the server only after.
    thawed(&mut thaw).await;
    let server = match TcpStream::connect(&shared.upstream).await {
        Ok(s) => s,
        Err(e) => {
            shared.record(
                conn,
                Wire::UpstreamFailed {
                    error: e.to_string(),
                },
            );
            return;
        }
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    // xid → op of the requests awaiting their replies.
    let pending = Arc::new(Mutex::new(HashMap::new()));
    let up = forward(
        shared.clone(),
        conn,
        Side::Client,
        client_read,
        server_write,
        pending.clone(),
    );
    let down = forward(
        shared.clone(),
        conn,
        Side::Server,
        server_read,
        client_write,
        pending,
    );
    let by = tokio::select! {
        by = up => by,
        by = down => by,
    };
    shared.record(conn, Wire::Closed { by });
}

/// Passes frames from `from`'s socket on to the other side until one end
/// closes; returns the side whose end closed first.
async fn forward(
    shared: Arc<Shared>,
    conn: usize,
    from: Side,
    mut r: impl AsyncRead + Unpin,
    mut w: impl AsyncWrite + Unpin,
    pending: Arc<Mutex<HashMap<i32, i32>>>,
) -> Side {
    let mut thaw = shared.frozen.subscribe();
    let to = match from {
        Side::Client => Side::Server,
        Side::Server => Side::Client,
    };
    let mut first = true;
    loop {
        let frame = read_frame(&mut r).await;
        // Frozen, nothing passes — not even the news that a socket closed.
        thawed(&mut thaw).await;
        let Some(frame) = frame else {
            return from;
        };
        let what = match from {
            Side::Client => decode_request(&frame[4..], first, &pending),
            Side::Server => decode_reply(&frame[4..], first, &pending),
        };
        first = false;
        if let Some(what) = what {
            shared.record(conn, what);
        }
        if w.write_all(&frame).await.is_err() {
            return to;
        }
    }
}

/// One whole frame, its length prefix included; None at the end of the
/// stream (or on an error, or a length past [`MAX_FRAME`]).
async fn read_frame(r: &mut (impl AsyncRead + Unpin)) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await.ok()?;
    let n = u32::from_be_bytes(len) as usize;
    if n > MAX_FRAME {
        return None;
    }
    let mut frame = vec![0u8; 4 + n];
    frame[..4].copy_from_slice(&len);
    r.read_exact(&mut frame[4..]).await.ok()?;
    Some(frame)
}

/// Jute's encoding: big-endian integers, strings and buffers as a 4-byte
/// length (−1: null) and their bytes.
struct Jute<'a>(&'a [u8]);

impl Jute<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bool(&mut self) -> Option<bool> {
        Some(self.take(1)?[0] != 0)
    }
    fn string(&mut self) -> Option<String> {
        let n = self.i32()?;
        if n < 0 {
            return Some(String::new());
        }
        Some(String::from_utf8_lossy(self.take(n as usize)?).into_owned())
    }
}

fn decode_request(body: &[u8], first: bool, pending: &Mutex<HashMap<i32, i32>>) -> Option<Wire> {
    let mut j = Jute(body);
    let unparsed = Wire::Unparsed {
        from: Side::Client,
        len: body.len(),
    };
    if first {
        // ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd.
        let session = (|| {
            j.i32()?;
            j.i64()?;
            j.i32()?;
            j.i64()
        })();
        return Some(match session {
            Some(session) => Wire::ConnectRequest { session },
            None => unparsed,
        });
    }
    let (Some(xid), Some(op)) = (j.i32(), j.i32()) else {
        return Some(unparsed);
    };
    if op != 11 {
        pending.lock().unwrap().insert(xid, op);
    }
    let path = if has_path(op) { j.string() } else { None };
    let watch = has_watch_flag(op) && j.bool().unwrap_or(false);
    Some(Wire::Request {
        op: op_name(op),
        path,
        watch,
    })
}

fn decode_reply(body: &[u8], first: bool, pending: &Mutex<HashMap<i32, i32>>) -> Option<Wire> {
    let mut j = Jute(body);
    let unparsed = Wire::Unparsed {
        from: Side::Server,
        len: body.len(),
    };
    if first {
        // ConnectResponse: protocolVersion, timeOut, sessionId, passwd.
        let r = (|| {
            j.i32()?;
            let timeout_ms = j.i32()?;
            Some((j.i64()?, timeout_ms))
        })();
        return Some(match r {
            Some((session, timeout_ms)) => Wire::ConnectResponse {
                session,
                timeout_ms,
            },
            None => unparsed,
        });
    }
    let (Some(xid), Some(_zxid), Some(err)) = (j.i32(), j.i64(), j.i32()) else {
        return Some(unparsed);
    };
    match xid {
        -1 => {
            let event = (|| {
                let kind = j.i32()?;
                let _state = j.i32()?;
                Some((kind, j.string()?))
            })();
            Some(match event {
                Some((kind, path)) => Wire::Notification {
                    event: event_name(kind),
                    path,
                },
                None => unparsed,
            })
        }
        -2 => Some(Wire::Pong),
        _ => {
            let op = pending.lock().unwrap().remove(&xid);
            (err != 0).then(|| Wire::ErrorReply {
                op: op.map_or_else(|| format!("xid{xid}"), op_name),
                err,
            })
        }
    }
}

/// The kinds of session upkeep, counted apart from the recipe's requests.
fn is_session_op(op: &str) -> bool {
    matches!(
        op,
        "ping" | "closeSession" | "setWatches" | "setWatches2" | "auth" | "sasl" | "createSession"
    )
}

/// A request as lockstep's request kinds name it (`create`, `get_data_watch`,
/// …): `create` and `create2` are both a create; `getChildren` and
/// `getChildren2` both a listing. Other ops keep their wire names.
pub fn lockstep_kind(op: &str, watch: bool) -> String {
    let base = match op {
        "create" | "create2" => "create",
        "delete" => "delete",
        "exists" => "exists",
        "getData" => "get_data",
        "getChildren" | "getChildren2" => "get_children",
        other => return other.to_string(),
    };
    if watch {
        format!("{base}_watch")
    } else {
        base.to_string()
    }
}

/// A herd run as the wire saw it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WireCounts {
    /// The recipe's requests by lockstep's kinds.
    pub requests: BTreeMap<String, u64>,
    /// The same by the wire's op names (`create2`, `getChildren2`, …).
    pub ops: BTreeMap<String, u64>,
    /// Session upkeep: connects, pings, closeSession, setWatches.
    pub session: BTreeMap<String, u64>,
    /// Watch notifications by event type.
    pub notifications: BTreeMap<String, u64>,
    /// The nodes deleted under the lock, in the order the deletes passed:
    /// the releases.
    pub releases: Vec<String>,
    /// Notifications of each release: those it fired ([`fired_by`]).
    pub notifications_per_release: Vec<u32>,
    /// Notifications no release fired.
    pub other_notifications: u32,
    /// Error replies by `op error-code`.
    pub errors: BTreeMap<String, u64>,
    /// Connections the clients opened.
    pub connections: usize,
}

/// A request that changes the tree, as [`fired_by`] matches it to the
/// notifications it fires: its op and the path it names.
struct Change<'a> {
    op: &'a str,
    path: &'a str,
}

/// The change that fired a notification of `event` on `path`: the last
/// of `changes` (in the order they passed the proxy, which is before the
/// server carried them out) that fires it — a create or delete of a child
/// of `path` for `NodeChildrenChanged`, a delete of `path` for
/// `NodeDeleted`, a create of it for `NodeCreated`, a setData of it for
/// `NodeDataChanged`.
fn fired_by(changes: &[Change], event: &str, path: &str) -> Option<usize> {
    let parent = |p: &str| match p.rsplit_once('/') {
        Some(("", _)) => "/".to_string(),
        Some((dir, _)) => dir.to_string(),
        None => String::new(),
    };
    changes.iter().rposition(|c| match event {
        "NodeChildrenChanged" => {
            matches!(c.op, "create" | "create2" | "delete") && parent(c.path) == path
        }
        "NodeDeleted" => c.op == "delete" && c.path == path,
        "NodeCreated" => matches!(c.op, "create" | "create2") && c.path == path,
        "NodeDataChanged" => c.op == "setData" && c.path == path,
        _ => false,
    })
}

/// Counts a herd run: `lock` is the lock's directory (`/lock`; a
/// semaphore's leases', `/sem`); a release is a delete of a node under it.
pub fn count(events: &[WireEvent], lock: &str) -> WireCounts {
    let mut c = WireCounts::default();
    let under = format!("{lock}/");
    let mut changes: Vec<Change> = Vec::new();
    // The changes that released, by their place in `changes`.
    let mut releases: Vec<usize> = Vec::new();
    // Each notification's change, if any fired it.
    let mut fired: Vec<Option<usize>> = Vec::new();
    let mut conns = std::collections::BTreeSet::new();
    for e in events {
        conns.insert(e.conn);
        match &e.what {
            Wire::ConnectRequest { .. } => *c.session.entry("connect".into()).or_insert(0) += 1,
            Wire::Request { op, path, watch } => {
                if is_session_op(op) {
                    *c.session.entry(op.clone()).or_insert(0) += 1;
                    continue;
                }
                *c.requests.entry(lockstep_kind(op, *watch)).or_insert(0) += 1;
                let wire = if *watch {
                    format!("{op}+watch")
                } else {
                    op.clone()
                };
                *c.ops.entry(wire).or_insert(0) += 1;
                if let Some(p) = path
                    .as_ref()
                    .filter(|_| matches!(op.as_str(), "create" | "create2" | "delete" | "setData"))
                {
                    if op == "delete" && p.starts_with(&under) {
                        c.releases.push(p.clone());
                        releases.push(changes.len());
                    }
                    changes.push(Change { op, path: p });
                }
            }
            Wire::Notification { event, path } => {
                *c.notifications.entry(event.clone()).or_insert(0) += 1;
                fired.push(fired_by(&changes, event, path));
            }
            Wire::ErrorReply { op, err } => {
                *c.errors.entry(format!("{op} {err}")).or_insert(0) += 1
            }
            _ => {}
        }
    }
    c.connections = conns.len();
    c.notifications_per_release = releases
        .iter()
        .map(|r| fired.iter().filter(|f| **f == Some(*r)).count() as u32)
        .collect();
    let attributed: u32 = c.notifications_per_release.iter().sum();
    c.other_notifications = fired.len() as u32 - attributed;
    c
}

/// The sequence number a sequential node's name ends with.
pub fn sequence(path: &str) -> Option<u64> {
    let digits = path.len().checked_sub(10)?;
    path.get(digits..)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    fn string(s: &str) -> Vec<u8> {
        let mut v = (s.len() as i32).to_be_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v
    }

    #[test]
    fn decodes_requests_and_replies() {
        let pending = Mutex::new(HashMap::new());
        let connect = frame(&[
            &0i32.to_be_bytes(),
            &0i64.to_be_bytes(),
            &4000i32.to_be_bytes(),
            &0x1234i64.to_be_bytes(),
            &string("pw"),
        ]);
        assert_eq!(
            decode_request(&connect, true, &pending),
            Some(Wire::ConnectRequest { session: 0x1234 })
        );
        let get = frame(&[
            &7i32.to_be_bytes(),
            &4i32.to_be_bytes(),
            &string("/lock/x-0000000001"),
            &[1],
        ]);
        assert_eq!(
            decode_request(&get, false, &pending),
            Some(Wire::Request {
                op: "getData".into(),
                path: Some("/lock/x-0000000001".into()),
                watch: true
            })
        );
        let no_node = frame(&[
            &7i32.to_be_bytes(),
            &9i64.to_be_bytes(),
            &(-101i32).to_be_bytes(),
        ]);
        assert_eq!(
            decode_reply(&no_node, false, &pending),
            Some(Wire::ErrorReply {
                op: "getData".into(),
                err: -101
            })
        );
        let event = frame(&[
            &(-1i32).to_be_bytes(),
            &(-1i64).to_be_bytes(),
            &0i32.to_be_bytes(),
            &2i32.to_be_bytes(),
            &3i32.to_be_bytes(),
            &string("/lock/x-0000000001"),
        ]);
        assert_eq!(
            decode_reply(&event, false, &pending),
            Some(Wire::Notification {
                event: "NodeDeleted".into(),
                path: "/lock/x-0000000001".into()
            })
        );
        let response = frame(&[
            &0i32.to_be_bytes(),
            &0i32.to_be_bytes(),
            &0x1234i64.to_be_bytes(),
            &string("pw"),
        ]);
        assert_eq!(
            decode_reply(&response, true, &pending),
            Some(Wire::ConnectResponse {
                session: 0x1234,
                timeout_ms: 0
            })
        );
        assert_eq!(sequence("/lock/x-lock-0000000042"), Some(42));
    }

    fn ev(conn: usize, what: Wire) -> WireEvent {
        WireEvent {
            at: 0.0,
            conn,
            what,
        }
    }

    fn req(op: &str, path: &str, watch: bool) -> Wire {
        Wire::Request {
            op: op.into(),
            path: Some(path.into()),
            watch,
        }
    }

    fn notification(event: &str, path: &str) -> Wire {
        Wire::Notification {
            event: event.into(),
            path: path.into(),
        }
    }

    #[test]
    fn counts_releases_and_their_notifications() {
        let events = vec![
            ev(0, Wire::ConnectRequest { session: 0 }),
            ev(0, req("create2", "/lock/a-", false)),
            ev(1, req("getData", "/lock/a-0000000000", true)),
            ev(0, req("delete", "/lock/a-0000000000", false)),
            ev(1, notification("NodeDeleted", "/lock/a-0000000000")),
            ev(1, req("delete", "/lock/b-0000000001", false)),
        ];
        let c = count(&events, "/lock");
        assert_eq!(c.requests["create"], 1);
        assert_eq!(c.requests["get_data_watch"], 1);
        assert_eq!(c.requests["delete"], 2);
        assert_eq!(c.notifications_per_release, vec![1, 0]);
        assert_eq!(c.other_notifications, 0);
        assert_eq!(c.session["connect"], 1);
        assert_eq!(c.connections, 2);
    }

    #[test]
    fn charges_a_child_watch_to_the_change_that_fired_it() {
        let changed = || notification("NodeChildrenChanged", "/sem");
        let events = vec![
            ev(1, req("getChildren2", "/sem", true)),
            // A release: the waiter hears it.
            ev(0, req("delete", "/sem/a", false)),
            ev(1, changed()),
            // The waiter's own create fires its own watch, set again.
            ev(1, req("getChildren2", "/sem", true)),
            ev(1, req("create2", "/sem/b", false)),
            ev(1, changed()),
            // The mutex goes to its next waiter: not under `/sem/`.
            ev(1, req("delete", "/sem-__lock__/x__lock__0000000001", false)),
            ev(
                2,
                notification("NodeDeleted", "/sem-__lock__/x__lock__0000000001"),
            ),
            ev(1, req("delete", "/sem/b", false)),
        ];
        let c = count(&events, "/sem");
        assert_eq!(c.releases, vec!["/sem/a", "/sem/b"]);
        assert_eq!(c.notifications_per_release, vec![1, 0]);
        assert_eq!(c.other_notifications, 2);
    }
}
