//! TCP proxies on a replicated store's own links — a ZooKeeper follower's
//! connection to its leader's quorum port, an etcd member's peer
//! connections — that can hold a server's traffic, both ways or the
//! dialler's way only, with every socket kept open, and let it go again.
//!
//! Each proxy listens on a port the servers' configuration names in place
//! of the real one and passes bytes on as they come; it does not parse
//! them. A connection carries tags: the proxy's own label (the link, or
//! the server it stands in front of) and, for an etcd member's peer port
//! (`sniff_http`), the `X-Server-From` member id of the peer that dialled
//! it, read from the first request's headers (etcd's rafthttp streams and
//! pipeline send it on every request), and [`LEASE_FORWARDING`] for a
//! follower's lease requests forwarded to the leader, which name no
//! member. [`Links::hold`] names tags; every
//! connection with one of them stops passing anything — bytes, and the
//! news that a socket closed — until [`Links::release`]. [`Links::mute`]
//! holds the dialler's way alone (a ZooKeeper follower's packets to its
//! leader), while the upstream's bytes, and its closing its socket, still
//! reach the dialler. A connection opened while held or muted reaches its
//! upstream only after. What was sent meanwhile waits (in the proxy and in
//! the kernel's buffers) and flows on release.
//!
//! Each proxy notes when it last passed bytes each way ([`Way`]): to the
//! dialler (a ZooKeeper leader's packets to its follower), so that a
//! timeout the dialler counts from its last read can be measured, and to
//! the upstream (the follower's packets to its leader), for one the
//! upstream counts.
//!
//! All the proxies run on one thread with its own tokio runtime, so that
//! the validator's blocking work never stalls a link; they are started
//! before the servers can form their ensemble, and live as long as the
//! validator.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

type Delivered = Arc<Mutex<HashMap<(String, Way), Instant>>>;

/// A way bytes go through a proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Way {
    /// From the upstream server to the dialler (a ZooKeeper leader's
    /// packets to its follower).
    ToDialler,
    /// From the dialler to the upstream server (the follower's packets to
    /// its leader).
    ToUpstream,
}

/// What the proxies hold, by tag.
#[derive(Clone, Debug, Default)]
struct Holds {
    /// Both ways ([`Links::hold`]).
    both: BTreeSet<String>,
    /// The dialler's way only ([`Links::mute`]).
    muted: BTreeSet<String>,
    /// A ZooKeeper leader's packets that apply a change ([`Links::lag`]).
    lagged: BTreeSet<String>,
}

impl Holds {
    /// Whether a connection tagged `tags` passes nothing `way`.
    fn holds(&self, way: Way, tags: &BTreeSet<String>) -> bool {
        !self.both.is_disjoint(tags) || (way == Way::ToUpstream && !self.muted.is_disjoint(tags))
    }

    /// Whether a quorum link tagged `tags` keeps its leader's commits back.
    fn lags(&self, tags: &BTreeSet<String>) -> bool {
        !self.lagged.is_disjoint(tags)
    }
}

/// One proxy: where it listens, where it forwards, its label.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub listen: u16,
    pub upstream: SocketAddr,
    pub label: String,
    /// Tag each connection with its first request's `X-Server-From`.
    pub sniff_http: bool,
    /// A ZooKeeper follower's link to its leader's quorum port: the
    /// leader's packets can be lagged ([`Links::lag`]).
    pub quorum: bool,
}

impl LinkSpec {
    /// `LISTEN:UPSTREAM` (ports on 127.0.0.1), labelled `label`.
    pub fn parse(text: &str, label: &str, sniff_http: bool) -> Result<LinkSpec, String> {
        let (listen, upstream) = text
            .split_once(':')
            .ok_or_else(|| format!("link {text:?}: expected LISTENPORT:UPSTREAMPORT"))?;
        let port = |p: &str| -> Result<u16, String> {
            p.trim()
                .parse()
                .map_err(|_| format!("link {text:?}: {p:?} is not a port"))
        };
        Ok(LinkSpec {
            listen: port(listen)?,
            upstream: SocketAddr::from(([127, 0, 0, 1], port(upstream)?)),
            label: label.to_string(),
            sniff_http,
            quorum: false,
        })
    }
}

/// The running proxies. Dropping it stops them and closes every
/// connection.
pub struct Links {
    holds: watch::Sender<Holds>,
    /// By label and way: when bytes last went that way.
    delivered: Delivered,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Links {
    /// Binds every proxy's port now (an error names the one that could
    /// not), then serves them on a thread of their own.
    pub fn start(specs: &[LinkSpec]) -> Result<Links, String> {
        let mut listeners = Vec::new();
        for s in specs {
            let l = std::net::TcpListener::bind(("127.0.0.1", s.listen)).map_err(|e| {
                format!("link proxy {}: cannot listen on {}: {e}", s.label, s.listen)
            })?;
            l.set_nonblocking(true)
                .map_err(|e| format!("link proxy {}: {e}", s.label))?;
            listeners.push((l, s.clone()));
        }
        let (holds, _) = watch::channel(Holds::default());
        let tx = holds.clone();
        let delivered = Delivered::default();
        let noted = delivered.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("link proxies: cannot start their runtime: {e}"))?;
        let thread = std::thread::Builder::new()
            .name("linkproxy".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let mut tasks = Vec::new();
                    for (l, spec) in listeners {
                        let Ok(listener) = TcpListener::from_std(l) else {
                            continue;
                        };
                        tasks.push(tokio::spawn(accept_loop(
                            listener,
                            Arc::new(spec),
                            tx.clone(),
                            noted.clone(),
                        )));
                    }
                    let _ = stopped.await;
                    for t in tasks {
                        t.abort();
                    }
                });
            })
            .map_err(|e| format!("link proxies: cannot start their thread: {e}"))?;
        Ok(Links {
            holds,
            delivered,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Holds every connection tagged with one of `tags`.
    pub fn hold(&self, tags: &[String]) {
        self.holds
            .send_modify(|h| h.both = tags.iter().cloned().collect());
    }

    /// Mutes every connection tagged with one of `tags`: what its dialler
    /// sends waits, while what its upstream sends passes, and so does the
    /// upstream's closing its socket (a ZooKeeper leader that stops
    /// hearing its follower, drops it after syncLimit × tickTime, and the
    /// follower hears it go).
    pub fn mute(&self, tags: &[String]) {
        self.holds
            .send_modify(|h| h.muted = tags.iter().cloned().collect());
    }

    /// Lags every ZooKeeper quorum link tagged with one of `tags`: the
    /// leader's heartbeats (`PING`) and proposals (`PROPOSAL`) pass, so the
    /// follower acknowledges every write and neither side times out, and
    /// so do its answers to the follower's session revalidations
    /// (`REVALIDATE`, which the follower's learner thread handles as it
    /// reads them), while every other packet — the `COMMIT`s that make it
    /// apply, and what must come after them (a `SYNC`'s answer, which the
    /// follower queues behind its commits) — waits, in order, for
    /// [`Links::release`]: a follower whose commits lag, as a slow commit
    /// processor makes one.
    pub fn lag(&self, tags: &[String]) {
        self.holds
            .send_modify(|h| h.lagged = tags.iter().cloned().collect());
    }

    /// Lets everything flow again.
    pub fn release(&self) {
        self.holds.send_replace(Holds::default());
    }

    /// When proxy `label` last passed bytes `way`.
    pub fn last_delivered(&self, label: &str, way: Way) -> Option<Instant> {
        self.delivered
            .lock()
            .unwrap()
            .get(&(label.to_string(), way))
            .copied()
    }
}

impl Drop for Links {
    fn drop(&mut self) {
        self.release();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    spec: Arc<LinkSpec>,
    holds: watch::Sender<Holds>,
    delivered: Delivered,
) {
    loop {
        let Ok((conn, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        tokio::spawn(serve(
            conn,
            spec.clone(),
            holds.subscribe(),
            delivered.clone(),
        ));
    }
}

/// Waits until a connection tagged `tags` passes bytes `way`.
async fn released(rx: &mut watch::Receiver<Holds>, way: Way, tags: &BTreeSet<String>) {
    // The sender outlives every connection's task.
    let _ = rx.wait_for(|h| !h.holds(way, tags)).await;
}

/// The value of the first `X-Server-From` header in `head`, lower-cased.
fn server_from(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("x-server-from")
            .then(|| value.trim().to_ascii_lowercase())
    })
}

/// The tag of a connection that carries a follower's lease requests to
/// the leader (etcd's `leasehttp`: `POST /leases`, `/leases/internal`).
/// Those requests carry no `X-Server-From`, so the member that sent them
/// is not known: holding this tag holds every member's, which in the
/// validator's runs only the held member sends (its client's keepalives).
pub const LEASE_FORWARDING: &str = "lease-forwarding";

/// Whether the request that opens `head` is one of etcd's forwarded lease
/// requests.
fn forwards_leases(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let line = text.split("\r\n").next().unwrap_or("");
    let mut words = line.split(' ');
    matches!((words.next(), words.next()), (Some("POST"), Some(path)) if path.starts_with("/leases"))
}

/// Reads the dialler's first bytes, up to the end of an HTTP request's
/// headers (or 16 KiB, or two seconds of silence).
async fn sniff(conn: &mut TcpStream) -> Vec<u8> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
        match tokio::time::timeout(Duration::from_secs(2), conn.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => head.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    head
}

async fn serve(
    mut conn: TcpStream,
    spec: Arc<LinkSpec>,
    mut rx: watch::Receiver<Holds>,
    delivered: Delivered,
) {
    let head = if spec.sniff_http {
        sniff(&mut conn).await
    } else {
        Vec::new()
    };
    let mut tags = BTreeSet::from([spec.label.clone()]);
    tags.extend(server_from(&head));
    if forwards_leases(&head) {
        tags.insert(LEASE_FORWARDING.to_string());
    }
    // A connection opened while held or muted reaches its upstream only
    // after (the dialler's way is held whenever the other is).
    released(&mut rx, Way::ToUpstream, &tags).await;
    let Some(mut up) = reach(spec.upstream).await else {
        return;
    };
    let _ = conn.set_nodelay(true);
    let _ = up.set_nodelay(true);
    if up.write_all(&head).await.is_err() {
        return;
    }
    let (cr, cw) = conn.into_split();
    let (ur, uw) = up.into_split();
    let tags = Arc::new(tags);
    // Either way ends on an error; a clean end of one way lets the other
    // go on (a half-close), as TCP does.
    let up = Pump {
        rx: rx.clone(),
        tags: tags.clone(),
        way: Way::ToUpstream,
        noted: (delivered.clone(), spec.label.clone()),
        lags: false,
    };
    let down = Pump {
        rx,
        tags,
        way: Way::ToDialler,
        noted: (delivered, spec.label.clone()),
        lags: spec.quorum,
    };
    let _ = tokio::try_join!(up.run(cr, uw), down.run(ur, cw));
}

/// Connects to `upstream`, retrying a refusal for a while. The dialler
/// has already connected (to the proxy), so a refusal it would have seen
/// and retried must not reach it as a connection that drops: a ZooKeeper
/// follower that dials its new leader before the leader has bound its
/// quorum port retries a refused connect, but takes a dropped one for a
/// failed leader and goes back to the election, where the two followers
/// can elect one of themselves.
async fn reach(upstream: SocketAddr) -> Option<TcpStream> {
    let start = Instant::now();
    loop {
        match TcpStream::connect(upstream).await {
            Ok(up) => return Some(up),
            Err(_) if start.elapsed() < UPSTREAM_PATIENCE => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(_) => return None,
        }
    }
}

/// How long a connection waits for its upstream to accept.
const UPSTREAM_PATIENCE: Duration = Duration::from_secs(10);

/// One way of a connection.
struct Pump {
    rx: watch::Receiver<Holds>,
    tags: Arc<BTreeSet<String>>,
    way: Way,
    /// Where, and under which label, it notes when it last passed bytes.
    noted: (Delivered, String),
    /// A leader's packets to its follower: they can be lagged.
    lags: bool,
}

impl Pump {
    /// Passes bytes from `r` to `w` while the connection's tags are not
    /// held this way; at the end of `r` (once released) shuts `w` down.
    /// Notes when it last passed bytes on. A pump that lags reads its
    /// bytes packet by packet ([`QuorumFrames`]), and while the
    /// connection's tags are lagged keeps back every packet but a
    /// heartbeat, a proposal or a revalidation's answer, in order, until
    /// they are not.
    async fn run(
        mut self,
        mut r: impl AsyncRead + Unpin,
        mut w: impl AsyncWrite + Unpin,
    ) -> std::io::Result<()> {
        let mut buf = vec![0u8; 64 << 10];
        let mut frames = QuorumFrames::default();
        let mut kept: Vec<Vec<u8>> = Vec::new();
        let tags = self.tags.clone();
        let lagged = |rx: &watch::Receiver<Holds>| self.lags && rx.borrow().lags(&tags);
        loop {
            released(&mut self.rx, self.way, &tags).await;
            // What was kept back goes first once the lag ends.
            if !kept.is_empty() && !lagged(&self.rx) {
                for packet in kept.drain(..) {
                    w.write_all(&packet).await?;
                }
            }
            let n = tokio::select! {
                n = r.read(&mut buf) => n?,
                // A lag's end must flush what was kept back even while the
                // leader sends nothing.
                _ = self.rx.changed(), if !kept.is_empty() => continue,
            };
            // Held, nothing passes — not even the news that a socket
            // closed.
            released(&mut self.rx, self.way, &tags).await;
            if n == 0 {
                for packet in kept.drain(..) {
                    w.write_all(&packet).await?;
                }
                w.write_all(&frames.rest()).await?;
                w.shutdown().await?;
                return Ok(());
            }
            let mut wrote = false;
            if !self.lags {
                w.write_all(&buf[..n]).await?;
                wrote = true;
            } else {
                for packet in frames.push(&buf[..n]) {
                    let passes = kept.is_empty() && !lagged(&self.rx);
                    match packet.kind {
                        _ if passes => w.write_all(&packet.bytes).await?,
                        Some(PING | PROPOSAL | REVALIDATE) if lagged(&self.rx) => {
                            w.write_all(&packet.bytes).await?
                        }
                        _ => {
                            kept.push(packet.bytes);
                            continue;
                        }
                    }
                    wrote = true;
                }
            }
            if wrote {
                let (delivered, label) = &self.noted;
                delivered
                    .lock()
                    .unwrap()
                    .insert((label.clone(), self.way), Instant::now());
            }
        }
    }
}

/// ZooKeeper's quorum packet types the lag lets through (`Leader.PING`,
/// `Leader.PROPOSAL`, `Leader.REVALIDATE`), and the one a serialized
/// database follows (`Leader.SNAP`).
const PING: u32 = 5;
const PROPOSAL: u32 = 2;
const REVALIDATE: u32 = 6;
const SNAP: u32 = 15;

/// One packet of a quorum stream, or (`kind: None`) bytes that are not
/// framed as packets, passed on as they come.
pub struct Frame {
    pub kind: Option<u32>,
    pub bytes: Vec<u8>,
}

/// Splits a ZooKeeper quorum stream into its packets (`QuorumPacket`, as
/// jute writes it: int type, long zxid, buffer data, vector of `Id`
/// authinfo). After a `SNAP` the leader writes a serialized database and
/// then the string `BenWasHere` (`LearnerHandler`'s signature), which are
/// not packets: they pass unframed (a lag keeps them back whole), and
/// packets start again after the signature.
#[derive(Default)]
pub struct QuorumFrames {
    pending: Vec<u8>,
    /// Within a snapshot.
    snapshot: bool,
}

/// The snapshot's end: jute's string `BenWasHere` (its length, then it).
const SIGNATURE: &[u8] = b"\0\0\0\x0aBenWasHere";

impl QuorumFrames {
    /// The packets `bytes` completes, in order; within a snapshot, its
    /// bytes as they come (`kind: None`).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        loop {
            if self.snapshot {
                // Everything up to the signature's end is the snapshot's;
                // the last bytes wait while they could be its start.
                let end = self
                    .pending
                    .windows(SIGNATURE.len())
                    .position(|w| w == SIGNATURE)
                    .map(|at| at + SIGNATURE.len());
                let upto = end.unwrap_or(self.pending.len().saturating_sub(SIGNATURE.len() - 1));
                if upto > 0 {
                    let rest = self.pending.split_off(upto);
                    out.push(Frame {
                        kind: None,
                        bytes: std::mem::replace(&mut self.pending, rest),
                    });
                }
                match end {
                    Some(_) => self.snapshot = false,
                    None => return out,
                }
            }
            let Some(len) = packet_len(&self.pending) else {
                return out;
            };
            let rest = self.pending.split_off(len);
            let bytes = std::mem::replace(&mut self.pending, rest);
            let kind = u32::from_be_bytes(bytes[..4].try_into().expect("four bytes"));
            out.push(Frame {
                kind: Some(kind),
                bytes,
            });
            if kind == SNAP {
                self.snapshot = true;
            }
        }
    }

    /// What is left of a packet not yet whole (at the stream's end).
    pub fn rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

/// The length of the first whole quorum packet in `b`, if it is all
/// there.
fn packet_len(b: &[u8]) -> Option<usize> {
    let int = |at: usize| -> Option<i32> {
        Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    // A buffer or a string: its length, then its bytes (-1: null).
    let sized = |at: usize| -> Option<usize> {
        let n = int(at)?;
        Some(at + 4 + usize::try_from(n.max(0)).ok()?)
    };
    let mut at = sized(12)?; // type, zxid, then the data buffer
    let ids = int(at)?;
    at += 4;
    for _ in 0..ids.max(0) {
        at = sized(at)?; // scheme
        at = sized(at)?; // id
    }
    (b.len() >= at).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One proxy, labelled `label`, on a free port in front of `upstream`.
    fn one_link(upstream: SocketAddr, label: &str, quorum: bool) -> (Links, u16) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let links = Links::start(&[LinkSpec {
            listen: port,
            upstream,
            label: label.into(),
            sniff_http: false,
            quorum,
        }])
        .unwrap();
        (links, port)
    }

    /// A quorum packet as jute writes it.
    fn packet(kind: u32, data: Option<&[u8]>, auth: &[(&str, &str)]) -> Vec<u8> {
        let mut b = kind.to_be_bytes().to_vec();
        b.extend(7u64.to_be_bytes());
        match data {
            Some(d) => {
                b.extend((d.len() as i32).to_be_bytes());
                b.extend(d);
            }
            None => b.extend((-1i32).to_be_bytes()),
        }
        b.extend((auth.len() as i32).to_be_bytes());
        for (scheme, id) in auth {
            for s in [scheme, id] {
                b.extend((s.len() as i32).to_be_bytes());
                b.extend(s.as_bytes());
            }
        }
        b
    }

    /// Packets split anywhere come out whole, in order; after a SNAP the
    /// rest is passed on unframed.
    #[test]
    fn frames_quorum_packets() {
        let a = packet(PROPOSAL, Some(b"txn"), &[("digest", "u:p")]);
        let b = packet(4, None, &[]);
        let c = packet(PING, Some(b""), &[]);
        let stream: Vec<u8> = [a.clone(), b.clone(), c.clone()].concat();
        for cut in 0..stream.len() {
            let mut f = QuorumFrames::default();
            let mut got = f.push(&stream[..cut]);
            got.extend(f.push(&stream[cut..]));
            let kinds: Vec<_> = got.iter().map(|p| p.kind).collect();
            assert_eq!(kinds, [Some(PROPOSAL), Some(4), Some(PING)], "cut at {cut}");
            assert_eq!(got.concat_bytes(), stream);
        }
        // A snapshot passes unframed up to its signature, however split;
        // packets follow it.
        let snap = packet(SNAP, None, &[]);
        let stream: Vec<u8> = [
            snap.clone(),
            b"database bytes".to_vec(),
            SIGNATURE.to_vec(),
            c.clone(),
        ]
        .concat();
        for cut in 0..stream.len() {
            let mut f = QuorumFrames::default();
            let mut got = f.push(&stream[..cut]);
            got.extend(f.push(&stream[cut..]));
            assert_eq!(got.concat_bytes(), stream, "cut at {cut}");
            let framed: Vec<_> = got.iter().filter_map(|p| p.kind).collect();
            assert_eq!(framed, [SNAP, PING], "cut at {cut}");
            assert_eq!(got.last().map(|p| p.bytes.clone()), Some(c.clone()));
        }
    }

    trait Concat {
        fn concat_bytes(&self) -> Vec<u8>;
    }

    impl Concat for Vec<Frame> {
        fn concat_bytes(&self) -> Vec<u8> {
            self.iter().flat_map(|p| p.bytes.clone()).collect()
        }
    }

    /// Lagged, a heartbeat, a proposal and a revalidation's answer pass
    /// and a commit waits, and what follows a waiting packet (but those)
    /// waits behind it; released, the rest arrives in order.
    #[test]
    fn lags_a_leaders_commits() {
        use std::io::{Read, Write};
        let leader = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream = leader.local_addr().unwrap();
        let (links, port) = one_link(upstream, "zk1", true);
        let mut follower = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (mut l, _) = leader.accept().unwrap();
        let (ping, proposal, revalidate, commit, sync) = (
            packet(PING, None, &[]),
            packet(PROPOSAL, Some(b"p"), &[]),
            packet(REVALIDATE, Some(b"session, valid"), &[]),
            packet(4, None, &[]),
            packet(7, None, &[]),
        );
        let read = |s: &mut std::net::TcpStream, n: usize| {
            let mut b = vec![0u8; n];
            s.read_exact(&mut b).map(|_| b)
        };
        l.write_all(&ping).unwrap();
        assert_eq!(read(&mut follower, ping.len()).unwrap(), ping);
        links.lag(&["zk1".to_string()]);
        std::thread::sleep(Duration::from_millis(50));
        let sent = [
            commit.clone(),
            sync.clone(),
            ping.clone(),
            proposal.clone(),
            revalidate.clone(),
        ];
        l.write_all(&sent.concat()).unwrap();
        let passed = read(
            &mut follower,
            ping.len() + proposal.len() + revalidate.len(),
        )
        .unwrap();
        assert_eq!(
            passed,
            [ping.clone(), proposal.clone(), revalidate].concat()
        );
        follower
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        assert!(read(&mut follower, 1).is_err(), "the commit waits");
        links.release();
        follower
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let rest = read(&mut follower, commit.len() + sync.len()).unwrap();
        assert_eq!(rest, [commit, sync].concat(), "in order, on release");
    }

    /// Muted, the dialler's bytes wait while the upstream's pass, and
    /// released they arrive; muted again, the upstream closing its socket
    /// reaches the dialler (a ZooKeeper leader dropping a follower it does
    /// not hear), and what the dialler sent meanwhile never reached it.
    #[test]
    fn mutes_the_diallers_way() {
        use std::io::{Read, Write};
        let leader = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let (links, port) = one_link(leader.local_addr().unwrap(), "zk1", false);
        let mut follower = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (mut l, _) = leader.accept().unwrap();
        for s in [&follower, &l] {
            s.set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
        }
        let mut b = [0u8; 1];
        follower.write_all(b"a").unwrap();
        l.read_exact(&mut b).unwrap();
        // The proxy notes the time once its write is done.
        std::thread::sleep(Duration::from_millis(20));
        let heard = links.last_delivered("zk1", Way::ToUpstream).unwrap();
        links.mute(&["zk1".to_string()]);
        std::thread::sleep(Duration::from_millis(50));
        follower.write_all(b"b").unwrap();
        assert!(l.read_exact(&mut b).is_err(), "the follower's byte waits");
        l.write_all(b"c").unwrap();
        follower.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"c", "the leader's passes");
        std::thread::sleep(Duration::from_millis(20));
        assert!(links.last_delivered("zk1", Way::ToDialler).unwrap() > heard);
        assert_eq!(links.last_delivered("zk1", Way::ToUpstream), Some(heard));
        links.release();
        l.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        l.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"b", "on release");
        std::thread::sleep(Duration::from_millis(20));
        let heard = links.last_delivered("zk1", Way::ToUpstream);

        links.mute(&["zk1".to_string()]);
        std::thread::sleep(Duration::from_millis(50));
        follower.write_all(b"d").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        drop(l);
        follower
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        assert_eq!(
            follower.read(&mut b).unwrap(),
            0,
            "the leader's close reaches the muted follower"
        );
        assert_eq!(links.last_delivered("zk1", Way::ToUpstream), heard);
    }

    #[test]
    fn knows_a_forwarded_lease_request() {
        let renew =
            b"POST /leases HTTP/1.1\r\nHost: x\r\nContent-Type: application/protobuf\r\n\r\n";
        let ttl = b"POST /leases/internal HTTP/1.1\r\nHost: x\r\n\r\n";
        let raft = b"POST /raft HTTP/1.1\r\nX-Server-From: 8e9e05c52164694d\r\n\r\n";
        assert!(forwards_leases(renew));
        assert!(forwards_leases(ttl));
        assert!(!forwards_leases(raft));
        assert!(!forwards_leases(b""));
    }

    #[test]
    fn reads_the_dialler_from_the_headers() {
        let head = b"GET /raft/stream/message/7a16 HTTP/1.1\r\nHost: x\r\nX-Server-From: 7A16444889fc9677\r\n\r\n";
        assert_eq!(server_from(head).as_deref(), Some("7a16444889fc9677"));
        assert_eq!(server_from(b"GET /version HTTP/1.1\r\n\r\n"), None);
    }

    /// Held, a byte written is not passed on and the socket stays open;
    /// released, it arrives.
    #[test]
    fn holds_and_releases() {
        use std::io::{Read, Write};
        let echo = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream = echo.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = echo.accept().unwrap();
            let mut b = [0u8; 1];
            while s.read_exact(&mut b).is_ok() {
                s.write_all(&b).unwrap();
            }
        });
        let (links, port) = one_link(upstream, "l", false);
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut b = [0u8; 1];
        c.write_all(b"a").unwrap();
        c.read_exact(&mut b).unwrap();
        links.hold(&["l".to_string()]);
        c.write_all(b"b").unwrap();
        assert!(c.read_exact(&mut b).is_err(), "held");
        links.release();
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        c.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"b");
    }
}
