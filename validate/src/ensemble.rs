//! Replicated stores on real ensembles: a three-server ZooKeeper 3.8
//! ensemble and a three-member etcd 3.4 cluster on loopback, one server's
//! link to its leader held by a proxy ([`crate::linkproxy`]), and the
//! behaviours issue #50 measured — each a fact of order, observed on the
//! real servers, with the model's run of the same behaviour beside it
//! ([`crate::ensemble_model`]) where the model has it.
//!
//! `validate/run.sh` lays the ensemble out so that the experiments know
//! who is who: ZooKeeper server 3 starts first and leads (a fresh ensemble
//! elects the highest id); server 1 (global sessions, ZooKeeper's
//! default) reaches server 3's quorum port through link `zk1`, server 2
//! (`localSessionsEnabled`, `localSessionsUpgradingEnabled`) through link
//! `zk2`. Each etcd member's advertised peer URL is a proxy in front of it
//! (`e1`..`e3`), which tags every connection with the member that dialled
//! it; holding a member holds every connection it dialled or that was
//! dialled to it. Muting server 1 ([`Links::mute`]) holds its packets to
//! the leader alone: the leader's still reach it. etcd runs with `--pre-vote`, so a cut-off member does not
//! unseat the leader when it comes back, and an election timeout longer
//! than any hold here.
//!
//! Each fact's words are a fixed list of steps (orders and booleans, no
//! raw timings); a step that did not happen reads `NOT …`. Timings go to
//! the row's detail. The whole set runs three times.

use crate::ensemble_model as model;
use crate::linkproxy::{LinkSpec, Links, Way};
use crate::zkwire;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use zookeeper_client as zk;

/// The ZooKeeper ensemble as `run.sh` started it.
pub struct ZkEnsemble {
    /// Client endpoints of servers 1, 2 and 3 (3 leads).
    pub servers: Vec<String>,
    pub tick_ms: u64,
    pub sync_limit: u64,
    /// Server 1's log, where it writes the refusal of a client that has
    /// seen a newer zxid.
    pub log: Option<PathBuf>,
}

impl ZkEnsemble {
    /// syncLimit × tickTime, ms: how long a follower cut off from the
    /// leader serves on before it gives the leader up.
    pub fn sync_ms(&self) -> u64 {
        self.tick_ms * self.sync_limit
    }
}

/// The etcd cluster as `run.sh` started it: client endpoints of e1..e3,
/// and the port each one's peer proxy listens on.
pub struct EtcdCluster {
    pub members: Vec<String>,
    pub peer_proxies: Vec<u16>,
}

/// The ensembles and the proxies on their links.
pub struct Ensembles {
    pub links: Links,
    pub zk: Option<ZkEnsemble>,
    pub etcd: Option<EtcdCluster>,
}

/// The ensembles' flags, parsed; `None` if none was given.
pub struct Flags<'a> {
    pub zk: Option<&'a str>,
    pub zk_links: Option<&'a str>,
    pub zk_timing: &'a str,
    pub zk_log: Option<&'a PathBuf>,
    pub etcd: Option<&'a str>,
    pub etcd_peers: Option<&'a str>,
}

fn three(text: &str, what: &str) -> Result<Vec<String>, String> {
    let v: Vec<String> = text.split(',').map(|s| s.trim().to_string()).collect();
    if v.len() != 3 || v.iter().any(String::is_empty) {
        return Err(format!(
            "{what} takes three comma-separated items, got {text:?}"
        ));
    }
    Ok(v)
}

impl Ensembles {
    /// Starts the proxies on the ensembles' links (at once: the servers
    /// cannot form their ensembles before).
    pub fn start(f: &Flags) -> Result<Option<Ensembles>, String> {
        let mut specs = Vec::new();
        let zk = match (f.zk, f.zk_links) {
            (None, None) => None,
            (Some(servers), Some(links)) => {
                let servers = three(servers, "--zk-ensemble")?;
                let links: Vec<&str> = links.split(',').collect();
                if links.len() != 2 {
                    return Err(
                        "--zk-ensemble-links takes server 1's and server 2's links to server 3, LISTEN:UPSTREAM,LISTEN:UPSTREAM".into(),
                    );
                }
                for (i, l) in links.iter().enumerate() {
                    let mut spec = LinkSpec::parse(l, &format!("zk{}", i + 1), false)?;
                    spec.quorum = true;
                    specs.push(spec);
                }
                let (tick, limit) = f
                    .zk_timing
                    .split_once(':')
                    .and_then(|(t, s)| Some((t.parse().ok()?, s.parse().ok()?)))
                    .ok_or("--zk-ensemble-timing takes TICKMS:SYNCLIMIT")?;
                Some(ZkEnsemble {
                    servers,
                    tick_ms: tick,
                    sync_limit: limit,
                    log: f.zk_log.cloned(),
                })
            }
            _ => return Err("--zk-ensemble and --zk-ensemble-links go together".into()),
        };
        let etcd = match (f.etcd, f.etcd_peers) {
            (None, None) => None,
            (Some(members), Some(peers)) => {
                let members = three(members, "--etcd-cluster")?;
                let mut ports = Vec::new();
                for (i, p) in three(peers, "--etcd-cluster-peers")?.iter().enumerate() {
                    let spec = LinkSpec::parse(p, &format!("e{}", i + 1), true)?;
                    ports.push(spec.listen);
                    specs.push(spec);
                }
                Some(EtcdCluster {
                    members,
                    peer_proxies: ports,
                })
            }
            _ => return Err("--etcd-cluster and --etcd-cluster-peers go together".into()),
        };
        if specs.is_empty() {
            return Ok(None);
        }
        Ok(Some(Ensembles {
            links: Links::start(&specs)?,
            zk,
            etcd,
        }))
    }
}

/// One fact, as one run found it.
#[derive(Clone, Debug, Serialize)]
pub struct FactRow {
    pub id: &'static str,
    pub store: &'static str,
    pub fact: &'static str,
    /// What the real ensemble showed, in the fact's steps.
    pub real: String,
    /// What the model's run showed, in the same steps; `None`: the model
    /// does not have this behaviour yet.
    pub model: Option<String>,
    /// The real steps all happened (the fact as issue #50 measured it).
    pub real_shows: bool,
    /// Real and model equal (`None` while the model is pending).
    pub agree: Option<bool>,
    /// Why it could not be measured.
    pub error: Option<String>,
    /// Timings and zxids: not compared.
    pub detail: String,
}

impl FactRow {
    /// Real and model agree, or the model is pending; and it ran.
    pub fn ok(&self) -> bool {
        self.error.is_none() && self.agree != Some(false)
    }

    /// How it went, in a line for stderr.
    pub fn verdict(&self) -> String {
        match (&self.error, self.agree) {
            (Some(e), _) => format!("did not run: {e}"),
            (None, Some(true)) => "real and model agree".into(),
            (None, Some(false)) => format!(
                "real and model DIFFER: real {}; model {}",
                self.real,
                self.model.as_deref().unwrap_or("")
            ),
            (None, None) => format!("real {} (model pending)", self.real),
        }
    }

    /// The report's "agree" cell.
    pub fn agree_cell(&self) -> &'static str {
        match (self.agree, &self.error) {
            (_, Some(_)) => "DID NOT RUN",
            (Some(true), _) => "yes",
            (Some(false), _) => "NO",
            (None, _) if self.real_shows => "— (as measured in #50)",
            (None, _) => "— (NOT as measured in #50)",
        }
    }
}

/// A fact: its steps, in order.
pub(crate) struct Fact {
    pub(crate) id: &'static str,
    pub(crate) store: &'static str,
    pub(crate) fact: &'static str,
    pub(crate) steps: &'static [&'static str],
}

/// The steps as words: each that happened, or `NOT` it.
fn words(steps: &[&str], seen: &[bool]) -> String {
    steps
        .iter()
        .zip(seen)
        .map(|(s, &ok)| {
            if ok {
                s.to_string()
            } else {
                format!("NOT {s}")
            }
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

impl Fact {
    pub(crate) fn row(
        &self,
        real: Result<(Vec<bool>, String), String>,
        model: Option<Vec<bool>>,
    ) -> FactRow {
        let model = model.map(|m| words(self.steps, &m));
        let (real, real_shows, error, detail) = match real {
            Ok((seen, detail)) => (
                words(self.steps, &seen),
                seen.iter().all(|&s| s),
                None,
                detail,
            ),
            Err(e) => ("did not run".to_string(), false, Some(e), String::new()),
        };
        let agree = match (&model, &error) {
            (Some(m), None) => Some(*m == real),
            (Some(_), Some(_)) => Some(false),
            (None, _) => None,
        };
        FactRow {
            id: self.id,
            store: self.store,
            fact: self.fact,
            real,
            model,
            real_shows,
            agree,
            error,
            detail,
        }
    }
}

pub(crate) const ZK: &str = "ZooKeeper 3.8";
pub(crate) const ETCD: &str = "etcd 3.4";

const STALE_READ: Fact = Fact {
    id: "zk-stale-read",
    store: ZK,
    fact: "a session on the lagging follower reads the old data after the leader committed a new value (getData, getChildren)",
    steps: &["old data on the follower", "new data on the leader", "new data on the follower once caught up"],
};
const SYNC_WAITS: Fact = Fact {
    id: "zk-sync-waits",
    store: ZK,
    fact: "`sync(path)` on the lagging follower does not return until the follower has caught up; the read after it sees the new value",
    steps: &["no answer while behind", "answered once caught up", "the read after it new"],
};
const WATCH_ON_APPLY: Fact = Fact {
    id: "zk-watch-on-apply",
    store: ZK,
    fact: "a watch set on the lagging follower fires when the follower applies the change, not when the leader commits it",
    steps: &["the leader's watcher told at commit", "the follower's not told while behind", "the follower's told once applied"],
};
const RECONNECT_REFUSED: Fact = Fact {
    id: "zk-reconnect-refused",
    store: ZK,
    fact: "a client that has seen a newer zxid (from the leader) is refused by the lagging follower on reconnect",
    steps: &["refused while behind the client's zxid", "accepted once caught up"],
};
const NEW_SESSION_WAITS: Fact = Fact {
    id: "zk-new-session-waits",
    store: ZK,
    fact: "a new (global) session on the cut-off follower does not open while its link is held, and opens after",
    steps: &["no answer while cut off", "opened once caught up"],
};
const LOCAL_SESSION: Fact = Fact {
    id: "zk-local-session-stale",
    store: ZK,
    fact: "with `localSessionsEnabled`, a new session on the lagging follower opens at once and lists the node of a session the leader has already closed (CURATOR-604's window)",
    steps: &["opened while cut off", "lists the closed session's node", "the node gone once caught up"],
};
const EXPIRED_TOLD_BEHIND: Fact = Fact {
    id: "zk-expired-told-behind",
    store: ZK,
    fact: "with `localSessionsEnabled`, a follower whose commits lag (the leader's heartbeats, proposals and answers to session revalidations pass: a slow commit processor) tells a client reconnecting with a session the leader has closed that it has expired, and a new session there then lists that session's node (CURATOR-604's whole window)",
    steps: &["told expired while behind", "a new session then lists the closed session's node", "the node gone once caught up"],
};
const FOLLOWER_DROPPED: Fact = Fact {
    id: "zk-follower-dropped",
    store: ZK,
    fact: "a follower that hears nothing from the leader leaves it syncLimit × tickTime after the last packet it read and closes its clients' connections; until then its client is connected and answered",
    steps: &["connected and answered until syncLimit × tickTime after the leader's last packet", "disconnected by syncLimit × tickTime + 1 s after it"],
};
const MUTED_DROPPED: Fact = Fact {
    id: "zk-muted-follower-dropped",
    store: ZK,
    fact: "a follower the leader does not hear (its packets to the leader held; the leader's reach it) applies the leader's commits, holds its clients' writes (and, behind a held write, the answers to that session's pings, so its client gives the connection up at its read timeout), and closes the connection of a client whose session the leader expired, when it applies the expiry; the leader drops it syncLimit × tickTime after it last heard it, and its clients' connections close; the write it held is lost",
    steps: &[
        "server 1's client reads the leader's new write while muted",
        "its own write not answered while muted",
        "a silent session's client told of its expiry before syncLimit × tickTime",
        "a live client disconnected syncLimit × tickTime after the leader last heard server 1, within 1 s",
        "the held write nowhere once server 1 follows again and has caught up",
        "its writer gives server 1 up within its read timeout of the write, before the drop",
    ],
};
const LAG_PAST_SYNC_LIMIT: Fact = Fact {
    id: "zk-lag-past-sync-limit",
    store: ZK,
    fact: "a follower whose commits lag (its link passes the leader's heartbeats and proposals, which it acknowledges, and its revalidation answers, and holds the commits) is not dropped, for twice syncLimit × tickTime: its client reads the old data and stays connected; it reads the new once the commits flow",
    steps: &["old data on the follower past syncLimit × tickTime", "its client connected throughout", "new data once the commits flow"],
};
const SERIALIZABLE: Fact = Fact {
    id: "etcd-serializable-stale",
    store: ETCD,
    fact: "a serializable Range on the cut-off member returns the old value after the leader committed a new one",
    steps: &["old value on the member", "new value once caught up"],
};
const LINEARIZABLE: Fact = Fact {
    id: "etcd-linearizable-new",
    store: ETCD,
    fact: "a linearizable Range (the default) on the cut-off member never returns the old value (its read index is the leader's)",
    steps: &["never the old value", "the new value"],
};
const ETCD_WATCH: Fact = Fact {
    id: "etcd-watch-on-apply",
    store: ETCD,
    fact: "a watch made through the cut-off member fires when that member applies the change, not when the leader commits it",
    steps: &["the leader's watcher told at commit", "the member's not told while cut off", "the member's told once applied"],
};

const KEEPALIVE_CUT: Fact = Fact {
    id: "etcd-keepalive-cut",
    store: ETCD,
    fact: "keepalives through the cut-off member renew nothing (the lessor is the leader's): the lease ends at the leader a TTL after its last renewal, while the cut lasts",
    steps: &["no keepalive answered through the cut-off member", "the lease gone at the leader a TTL after its last renewal", "a keepalive once the cut heals finds it gone"],
};

/// The lease's time-to-live in `etcd-keepalive-cut`, in seconds: above
/// etcd's minimum for the cluster's election timeout (1.5 × 2.5 s).
pub(crate) const KEEPALIVE_TTL: i64 = 5;

/// How long a real step may take when nothing holds it.
pub(crate) const PROMPT: Duration = Duration::from_secs(5);
/// How long the experiments watch for something that must not happen
/// while a link is held.
const QUIET: Duration = Duration::from_millis(600);

pub(crate) async fn within<T, E: std::fmt::Display>(
    d: Duration,
    what: &str,
    f: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(d, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(_) => Err(format!("{what}: no answer within {d:?}")),
    }
}

pub(crate) fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// A value read, for the details: `"1"`, or `no value`.
fn shown(v: Option<&[u8]>) -> String {
    v.map_or("no value".into(), |v| {
        format!("{:?}", String::from_utf8_lossy(v))
    })
}

// --- ZooKeeper ---

/// A four-letter word's answer.
async fn four(addr: &str, word: &str) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let go = async {
        let mut s = tokio::net::TcpStream::connect(addr).await?;
        s.write_all(word.as_bytes()).await?;
        let mut out = String::new();
        s.read_to_string(&mut out).await?;
        Ok::<_, std::io::Error>(out)
    };
    within(Duration::from_secs(2), word, go).await
}

/// A server's mode and last applied zxid (`srvr`).
pub(crate) async fn srvr(addr: &str) -> Result<(String, i64), String> {
    let out = four(addr, "srvr").await?;
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    let mode = field("Mode:").ok_or_else(|| format!("{addr}: not serving ({})", out.trim()))?;
    let zxid = field("Zxid:")
        .and_then(|z| i64::from_str_radix(z.trim_start_matches("0x"), 16).ok())
        .ok_or_else(|| format!("{addr}: srvr gave no zxid"))?;
    Ok((mode, zxid))
}

/// Watches `c`'s session: finishes, with the state and when, at its first
/// state other than connected (its connection dropped, or its session
/// ended).
pub(crate) fn on_disconnect(
    c: &zk::Client,
) -> tokio::task::JoinHandle<(zk::SessionState, Instant)> {
    let mut states = c.state_watcher();
    tokio::spawn(async move {
        loop {
            let s = states.changed().await;
            if s != zk::SessionState::SyncConnected {
                return (s, Instant::now());
            }
        }
    })
}

/// A client session on one server.
pub(crate) async fn zk_client(addr: &str) -> Result<zk::Client, String> {
    zk_session(addr, Duration::from_secs(4)).await
}

/// A client session of `timeout` on one server.
async fn zk_session(addr: &str, timeout: Duration) -> Result<zk::Client, String> {
    let mut c = zk::Client::connector();
    c.session_timeout(timeout);
    within(PROMPT, &format!("connect to {addr}"), c.connect(addr)).await
}

pub(crate) fn persistent() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

struct ZkRun<'a> {
    ens: &'a ZkEnsemble,
    links: &'a Links,
    base: String,
    /// On the leader.
    l: zk::Client,
}

impl ZkRun<'_> {
    fn leader(&self) -> &str {
        &self.ens.servers[2]
    }

    fn bound(&self) -> Duration {
        Duration::from_millis(self.ens.sync_ms())
    }

    fn hold(&self, server: usize) {
        self.links.hold(&[format!("zk{server}")]);
    }

    /// The leader stops hearing server `server`, which still hears it.
    fn mute(&self, server: usize) {
        self.links.mute(&[format!("zk{server}")]);
    }

    fn release(&self) {
        self.links.release();
    }

    fn x(&self) -> String {
        format!("{}/x", self.base)
    }

    /// Waits until server `s` (1 or 2) is a follower and has applied all
    /// the leader has.
    async fn caught_up(&self, s: usize, within: Duration) -> Result<Duration, String> {
        let start = Instant::now();
        let addr = &self.ens.servers[s - 1];
        loop {
            let (lmode, lz) = srvr(self.leader()).await?;
            if lmode != "leader" {
                return Err(format!("server 3 is {lmode}, not the leader"));
            }
            let got = srvr(addr).await;
            if let Ok((mode, z)) = &got {
                if mode == "follower" && *z >= lz {
                    return Ok(start.elapsed());
                }
            }
            if start.elapsed() > within {
                return Err(format!(
                    "server {s} did not catch up within {within:?}: {got:?}, the leader at {lz:#x}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn set(&self, value: &str) -> Result<zk::Stat, String> {
        within(
            PROMPT,
            "setData on the leader",
            self.l.set_data(&self.x(), value.as_bytes(), None),
        )
        .await
    }
}

/// Waits (up to `limit`) until server 3 leads, servers 1 and 2 follow, and
/// all three have applied the same zxid.
async fn zk_ready(ens: &ZkEnsemble, limit: Duration) -> Result<Duration, String> {
    let start = Instant::now();
    loop {
        let mut modes = Vec::new();
        for s in &ens.servers {
            modes.push(srvr(s).await);
        }
        let ready = matches!(
            &modes[..],
            [Ok((a, _)), Ok((b, _)), Ok((c, _))] if a == "follower" && b == "follower" && c == "leader"
        );
        if ready {
            return Ok(start.elapsed());
        }
        if start.elapsed() > limit {
            return Err(format!(
                "the ZooKeeper ensemble is not server 3 leading servers 1 and 2 after {limit:?}: {modes:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn zk_stale_read(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let a = zk_client(&r.ens.servers[0]).await?;
    r.caught_up(1, PROMPT).await?;
    let x = r.x();
    r.hold(1);
    let go = async {
        r.set("2").await?;
        within(
            PROMPT,
            "create on the leader",
            r.l.create(&format!("{}/y", r.base), b"", &persistent()),
        )
        .await?;
        let (held, _) = within(PROMPT, "getData on server 1", a.get_data(&x)).await?;
        let held_list = within(PROMPT, "getChildren on server 1", a.list_children(&r.base)).await?;
        let (leader, _) = within(PROMPT, "getData on the leader", r.l.get_data(&x)).await?;
        let leader_list = within(
            PROMPT,
            "getChildren on the leader",
            r.l.list_children(&r.base),
        )
        .await?;
        let (_, z1) = srvr(&r.ens.servers[0]).await?;
        let (_, z3) = srvr(r.leader()).await?;
        Ok::<_, String>((held, held_list, leader, leader_list, z1, z3))
    };
    let got = go.await;
    r.release();
    let (held, held_list, leader, leader_list, z1, z3) = got?;
    let caught = r.caught_up(1, PROMPT).await?;
    let (after, _) = within(PROMPT, "getData on server 1", a.get_data(&x)).await?;
    let after_list = within(PROMPT, "getChildren on server 1", a.list_children(&r.base)).await?;
    let has_y = |l: &[String]| l.iter().any(|c| c == "y");
    Ok((
        vec![
            held == b"1" && !has_y(&held_list),
            leader == b"2" && has_y(&leader_list),
            after == b"2" && has_y(&after_list),
        ],
        format!(
            "server 1 at zxid {z1:#x} while the leader was at {z3:#x}; read {:?} and {held_list:?} there, {:?} and {leader_list:?} on the leader; caught up {} ms after release",
            String::from_utf8_lossy(&held),
            String::from_utf8_lossy(&leader),
            ms(caught)
        ),
    ))
}

async fn zk_sync_waits(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let a = zk_client(&r.ens.servers[0]).await?;
    r.caught_up(1, PROMPT).await?;
    let x = r.x();
    r.hold(1);
    let written = r.set("3").await;
    let (a2, path) = (a.clone(), x.clone());
    let sync = tokio::spawn(async move {
        let res = a2.sync(&path).await;
        (res, Instant::now())
    });
    tokio::time::sleep(QUIET).await;
    let quiet = !sync.is_finished();
    let released = Instant::now();
    r.release();
    written?;
    let (res, at) = within(PROMPT, "sync on server 1", async {
        sync.await.map_err(|e| e.to_string())
    })
    .await?;
    res.map_err(|e| format!("sync: {e}"))?;
    let (after, _) = within(PROMPT, "getData on server 1", a.get_data(&x)).await?;
    Ok((
        vec![quiet, at >= released, after == b"3"],
        format!(
            "sync answered {} ms after release; read {:?} after it",
            ms(at.saturating_duration_since(released)),
            String::from_utf8_lossy(&after)
        ),
    ))
}

async fn zk_watch_on_apply(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let a = zk_client(&r.ens.servers[0]).await?;
    r.caught_up(1, PROMPT).await?;
    let x = r.x();
    let (_, _, on_follower) = within(
        PROMPT,
        "getData+watch on server 1",
        a.get_and_watch_data(&x),
    )
    .await?;
    let (_, _, on_leader) = within(
        PROMPT,
        "getData+watch on the leader",
        r.l.get_and_watch_data(&x),
    )
    .await?;
    r.hold(1);
    let committed = Instant::now();
    let written = r.set("4").await;
    let leader_told = tokio::time::timeout(PROMPT, on_leader.changed())
        .await
        .is_ok();
    let leader_at = committed.elapsed();
    let follower = tokio::spawn(async move {
        on_follower.changed().await;
        Instant::now()
    });
    tokio::time::sleep(QUIET).await;
    let quiet = !follower.is_finished();
    let released = Instant::now();
    r.release();
    written?;
    let told = tokio::time::timeout(PROMPT, follower).await;
    let (told_once_applied, detail) = match told {
        Ok(Ok(at)) => (
            at >= released,
            format!(
                "the leader's watcher told {} ms after the write, the follower's {} ms after release",
                ms(leader_at),
                ms(at.saturating_duration_since(released))
            ),
        ),
        _ => (false, "the follower's watcher was never told".to_string()),
    };
    Ok((vec![leader_told, quiet, told_once_applied], detail))
}

/// What server 1's log says of a client that has seen `zxid`: `None` if
/// there is no log to read (none given, or the server logs nothing: no
/// slf4j binding), else its refusal line, if it has one (3.8.0's names
/// the client's address and the zxids, not the session).
fn refusal_logged(log: Option<&PathBuf>, zxid: i64) -> Option<Option<String>> {
    let text = std::fs::read_to_string(log?).ok()?;
    if !text.contains(" INFO ") {
        return None;
    }
    let z = format!("as it has seen zxid {zxid:#x} ");
    Some(
        text.lines()
            .rfind(|l| l.contains("client must try another server") && l.contains(&z))
            .map(|l| l[l.find("Refusing").unwrap_or(0)..].to_string()),
    )
}

async fn zk_reconnect_refused(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    r.caught_up(1, PROMPT).await?;
    let mut conn = zkwire::Conn::start(r.leader(), 0, None, 4000)
        .await
        .map_err(|e| format!("connect to the leader: {e}"))?;
    let zkwire::Handshake::Opened(session) = conn.handshake(PROMPT).await else {
        return Err("the leader did not open a session".into());
    };
    r.hold(1);
    let seen = async {
        let stat = r.set("5").await?;
        let reply = conn.exists(1, &r.x()).await?;
        Ok::<_, String>((stat.mzxid, reply.zxid))
    }
    .await;
    // The client loses its connection to the leader and tries server 1.
    drop(conn);
    let refused = match &seen {
        Ok((_, zxid)) => {
            match zkwire::Conn::start(&r.ens.servers[0], *zxid, Some(&session), 4000).await {
                Ok(mut c) => Some(c.handshake(Duration::from_millis(1500)).await),
                Err(_) => None,
            }
        }
        Err(_) => None,
    };
    r.release();
    let (written, zxid) = seen?;
    let refused = refused.ok_or("could not reach server 1")?;
    r.caught_up(1, PROMPT).await?;
    let mut again = zkwire::Conn::start(&r.ens.servers[0], zxid, Some(&session), 4000)
        .await
        .map_err(|e| format!("reconnect to server 1: {e}"))?;
    let accepted = again.handshake(PROMPT).await;
    let accepted_same =
        matches!(&accepted, zkwire::Handshake::Opened(s) if s.id == session.id && s.timeout_ms > 0);
    if accepted_same {
        let _ = again.close_session(2).await;
    }
    // The server writes its log line as it closes the connection.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let logged = refusal_logged(r.ens.log.as_ref(), zxid);
    // Refused: the connection closed with no answer, and (where the server
    // logs) for being behind the client.
    let closed = matches!(refused, zkwire::Handshake::Closed);
    let for_zxid = logged.as_ref().is_none_or(Option::is_some);
    Ok((
        vec![closed && for_zxid, accepted_same],
        format!(
            "session {:#x} wrote zxid {written:#x} and read at {zxid:#x} on the leader; server 1 {} it; once caught up: {}; server 1's log: {}",
            session.id,
            match refused {
                zkwire::Handshake::Closed => "closed the connection with no answer to",
                zkwire::Handshake::Waiting => "did not answer (nor close) within 1.5 s",
                zkwire::Handshake::Opened(_) => "ACCEPTED",
            },
            if accepted_same { "the same session reconnected" } else { "NOT accepted" },
            match logged {
                Some(Some(line)) => line,
                Some(None) => "NO refusal line".into(),
                None => "not read (none given, or it logs nothing)".into(),
            }
        ),
    ))
}

async fn zk_new_session_waits(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    r.caught_up(1, PROMPT).await?;
    r.hold(1);
    let attempt = zkwire::Conn::start(&r.ens.servers[0], 0, None, 4000).await;
    let first = match attempt {
        Ok(mut c) => Ok((c.handshake(QUIET).await, c)),
        Err(e) => Err(format!("connect to server 1: {e}")),
    };
    let released = Instant::now();
    r.release();
    let (first, mut c) = first?;
    let quiet = matches!(first, zkwire::Handshake::Waiting);
    let then = if quiet {
        c.handshake(PROMPT).await
    } else {
        first
    };
    let opened_at = released.elapsed();
    let opened = matches!(&then, zkwire::Handshake::Opened(s) if s.timeout_ms > 0);
    if opened {
        let _ = c.close_session(1).await;
    }
    Ok((
        vec![quiet, opened],
        format!(
            "the handshake {} while held; {} {} ms after release",
            if quiet { "waited" } else { "did NOT wait" },
            if opened { "opened" } else { "NOT opened" },
            ms(opened_at)
        ),
    ))
}

/// A holder's session on the leader and its ephemeral node `h` under a
/// new directory `dir`, once server 2 has applied it: the holder's
/// connection, its session, and the create's reply.
async fn zk_holder_on_leader(
    r: &ZkRun<'_>,
    dir: &str,
) -> Result<(zkwire::Conn, zkwire::Session, zkwire::Reply), String> {
    within(
        PROMPT,
        "create the directory",
        r.l.create(dir, b"", &persistent()),
    )
    .await?;
    let mut holder = zkwire::Conn::start(r.leader(), 0, None, 4000)
        .await
        .map_err(|e| format!("connect to the leader: {e}"))?;
    let zkwire::Handshake::Opened(session) = holder.handshake(PROMPT).await else {
        return Err("the leader did not open the holder's session".into());
    };
    let made = holder.create(1, &format!("{dir}/h"), true).await?;
    if made.err != 0 {
        return Err(format!("the holder's create: error {}", made.err));
    }
    r.caught_up(2, PROMPT).await?;
    Ok((holder, session, made))
}

/// Closes the holder's session (as an expiry would end it: the same
/// committed end) and lists `dir` on the leader.
async fn zk_close_holder(
    r: &ZkRun<'_>,
    holder: &mut zkwire::Conn,
    dir: &str,
) -> Result<Vec<String>, String> {
    let closed = holder.close_session(2).await?;
    if closed.err != 0 {
        return Err(format!("closeSession: error {}", closed.err));
    }
    within(PROMPT, "getChildren on the leader", r.l.list_children(dir)).await
}

/// Once the leader no longer lists the closed session's node `h`: what
/// the new session `n` lists under `dir` after server 2 has caught up.
async fn zk_listing_caught_up(
    r: &ZkRun<'_>,
    at_leader: &[String],
    n: Option<&zk::Client>,
    dir: &str,
) -> Result<Option<Vec<String>>, String> {
    if at_leader.iter().any(|c| c == "h") {
        return Err("the leader still lists the closed session's node".into());
    }
    r.caught_up(2, PROMPT).await?;
    match n {
        Some(c) => Ok(Some(
            within(PROMPT, "getChildren on server 2", c.list_children(dir)).await?,
        )),
        None => Ok(None),
    }
}

/// Whether a listing names the closed session's node `h`.
fn lists_h(l: &Option<Vec<String>>) -> bool {
    l.as_ref().is_some_and(|l| l.iter().any(|c| c == "h"))
}

/// A new session on server 2 (opened within 1.2 s, or not) and what it
/// lists under `dir`: the session, how long it took, the listing.
async fn zk_new_session_lists(
    r: &ZkRun<'_>,
    dir: &str,
) -> Result<(Option<zk::Client>, Duration, Option<Vec<String>>), String> {
    let start = Instant::now();
    let n = tokio::time::timeout(Duration::from_millis(1200), zk_client(&r.ens.servers[1])).await;
    let opened_in = start.elapsed();
    let n = n.ok().and_then(Result::ok);
    let listing = match &n {
        Some(c) => Some(
            within(
                Duration::from_millis(500),
                "getChildren on server 2",
                c.list_children(dir),
            )
            .await?,
        ),
        None => None,
    };
    Ok((n, opened_in, listing))
}

async fn zk_local_session(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let dir = format!("{}/lock", r.base);
    let (mut holder, _, _) = zk_holder_on_leader(r, &dir).await?;
    r.hold(2);
    let go = async {
        let at_leader = zk_close_holder(r, &mut holder, &dir).await?;
        let (n, opened_in, listing) = zk_new_session_lists(r, &dir).await?;
        Ok::<_, String>((at_leader, n, opened_in, listing))
    };
    let got = go.await;
    r.release();
    let (at_leader, n, opened_in, listing) = got?;
    let after = zk_listing_caught_up(r, &at_leader, n.as_ref(), &dir).await?;
    Ok((
        vec![n.is_some(), lists_h(&listing), after.is_some() && !lists_h(&after)],
        format!(
            "the leader listed {at_leader:?} after the holder's closeSession; the new session on server 2 {} {} ms into the hold and listed {}; after catching up {}",
            if n.is_some() { "opened" } else { "did NOT open" },
            ms(opened_in),
            listing.map_or("nothing".into(), |l| format!("{l:?}")),
            after.map_or("nothing".into(), |l| format!("{l:?}"))
        ),
    ))
}

/// CURATOR-604's window on the real server: the holder's session (on the
/// leader) ends while server 2's commits lag; its client, reconnecting to
/// server 2, is told so at once (server 2 asks the leader), and a new
/// session there — a local one, as Curator opens after LOST — lists the
/// node the end deleted at the leader.
async fn zk_expired_told_behind(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let dir = format!("{}/told", r.base);
    let (mut holder, session, made) = zk_holder_on_leader(r, &dir).await?;
    r.links.lag(&["zk2".to_string()]);
    let go = async {
        let at_leader = zk_close_holder(r, &mut holder, &dir).await?;
        // The holder's client, its connection gone, tries server 2.
        let start = Instant::now();
        let mut again = zkwire::Conn::start(&r.ens.servers[1], made.zxid, Some(&session), 4000)
            .await
            .map_err(|e| format!("reconnect to server 2: {e}"))?;
        let answer = again.handshake(Duration::from_millis(1500)).await;
        let told_in = start.elapsed();
        let (n, _, listing) = zk_new_session_lists(r, &dir).await?;
        Ok::<_, String>((at_leader, answer, told_in, n, listing))
    };
    let got = go.await;
    r.release();
    let (at_leader, answer, told_in, n, listing) = got?;
    let after = zk_listing_caught_up(r, &at_leader, n.as_ref(), &dir).await?;
    let told = matches!(&answer, zkwire::Handshake::Opened(s) if s.timeout_ms == 0);
    Ok((
        vec![told, lists_h(&listing), after.is_some() && !lists_h(&after)],
        format!(
            "session {:#x} closed at the leader, which then listed {at_leader:?}; server 2, lagging, answered its reconnect {} ms later: {}; a new session there listed {}; after catching up {}",
            session.id,
            ms(told_in),
            match answer {
                zkwire::Handshake::Opened(s) if s.timeout_ms == 0 => "expired (timeout 0)".to_string(),
                zkwire::Handshake::Opened(s) => format!("OPENED (timeout {} ms)", s.timeout_ms),
                zkwire::Handshake::Closed => "closed the connection with no answer".to_string(),
                zkwire::Handshake::Waiting => "no answer within 1.5 s".to_string(),
            },
            listing.map_or("nothing (no session)".into(), |l| format!("{l:?}")),
            after.map_or("nothing".into(), |l| format!("{l:?}"))
        ),
    ))
}

async fn zk_follower_dropped(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let a = zk_client(&r.ens.servers[0]).await?;
    r.caught_up(1, PROMPT).await?;
    let (before, _) = within(PROMPT, "getData on server 1", a.get_data(&r.x())).await?;
    let watch = on_disconnect(&a);
    let bound = r.bound();
    let held = Instant::now();
    r.hold(1);
    let go = async {
        // A write the follower cannot acknowledge.
        r.set("6").await?;
        tokio::time::sleep(bound / 2).await;
        let (read, _) = within(
            Duration::from_millis(500),
            "getData on server 1",
            a.get_data(&r.x()),
        )
        .await?;
        Ok::<_, String>(read)
    };
    let read = go.await;
    let dropped = tokio::time::timeout(bound + Duration::from_secs(3), watch).await;
    // Held, nothing has passed since the hold (a read in flight waits).
    let last = r.links.last_delivered("zk1", Way::ToDialler);
    r.release();
    let read = read?;
    let (state, at) = match dropped {
        Ok(Ok(d)) => d,
        _ => {
            return Err(format!(
                "server 1's client was not disconnected within {:?}",
                bound + Duration::from_secs(3)
            ))
        }
    };
    // The follower counts syncLimit × tickTime from the last packet it
    // read from the leader: the last the proxy passed on before the hold.
    let last = last.ok_or("no packet from the leader went through link zk1")?;
    let after_last = at.saturating_duration_since(last);
    drop(a);
    let rejoined = r.caught_up(1, Duration::from_secs(30)).await?;
    Ok((
        vec![
            read == before && after_last >= bound,
            after_last <= bound + Duration::from_secs(1),
        ],
        format!(
            "read {:?} on server 1 at {} ms into the hold; the leader's last packet passed {} ms before the hold; the client {state} {} ms after it, {} ms into the hold (syncLimit × tickTime = {} ms); server 1 followed again and caught up {} ms after release",
            String::from_utf8_lossy(&read),
            ms(bound / 2),
            ms(held.saturating_duration_since(last)),
            ms(after_last),
            ms(at.saturating_duration_since(held)),
            ms(bound),
            ms(rejoined)
        ),
    ))
}

/// The silent session's timeout in `zk-muted-follower-dropped`: under
/// syncLimit × tickTime (2 s), over the servers' least (2 × tickTime).
const SILENT_SESSION_MS: i32 = 1000;

/// The writer's session timeout in `zk-muted-follower-dropped`: its read
/// timeout (zookeeper-client 0.9's connection timeout, 2/5 of it: 960 ms;
/// the model's, the Java client's, is 2/3: 1.6 s) runs out before
/// syncLimit × tickTime (2 s).
const WRITER_SESSION_MS: u64 = 2400;

/// The real writer's read timeout: zookeeper-client 0.9 gives a
/// connection up after 8 ticks of a twentieth of the session timeout with
/// nothing read.
const WRITER_READ_TIMEOUT: Duration = Duration::from_millis(WRITER_SESSION_MS * 2 / 5);

/// `zk-muted-follower-dropped`: server 1 muted (its packets to the leader
/// held, the leader's flowing) with three sessions on it: one reads, one
/// writes, and one, of [`SILENT_SESSION_MS`] on the bare wire, pings
/// server 1 — silent at the leader, which no longer hears server 1.
async fn zk_muted_follower_dropped(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let server_1 = &r.ens.servers[0];
    let a = zk_client(server_1).await?;
    let w = zk_session(server_1, Duration::from_millis(WRITER_SESSION_MS)).await?;
    let mut s = zkwire::Conn::start(server_1, 0, None, SILENT_SESSION_MS)
        .await
        .map_err(|e| format!("connect to server 1: {e}"))?;
    let zkwire::Handshake::Opened(session) = s.handshake(PROMPT).await else {
        return Err("server 1 did not open the silent session".into());
    };
    r.caught_up(1, PROMPT).await?;
    let live = on_disconnect(&a);
    let mut silent = tokio::spawn(async move {
        let every = Duration::from_millis(SILENT_SESSION_MS as u64 / 6);
        s.ping_until_closed(every, Duration::from_millis(500)).await
    });
    let held_path = format!("{}/muted-write", r.base);
    let bound = r.bound();
    let muted = Instant::now();
    r.mute(1);
    let go = async {
        r.set("muted").await?;
        // Server 1 applies the commit as it comes: its client reads it.
        let committed = Instant::now();
        let read = loop {
            let (v, _) = within(PROMPT, "getData on server 1", a.get_data(&r.x())).await?;
            if v == b"muted" || committed.elapsed() > QUIET {
                break v;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let read_in = committed.elapsed();
        let (w2, path) = (w.clone(), held_path.clone());
        let sent = Instant::now();
        let write = tokio::spawn(async move {
            let res = w2.create(&path, b"", &persistent()).await;
            (res.map(|_| ()).map_err(|e| e.to_string()), Instant::now())
        });
        let deadline = tokio::time::Instant::from_std(muted + bound + Duration::from_secs(3));
        let told = match tokio::time::timeout_at(deadline, &mut silent).await {
            Ok(Ok(closed)) => closed,
            Ok(Err(e)) => Err(format!("the silent session's pings: {e}")),
            Err(_) => Err("the silent session's connection was not closed".into()),
        };
        // The silent session, presented to the leader as its client would
        // on a reconnect: expired (a timeout of 0), or not.
        let expired = match zkwire::Conn::start(r.leader(), 0, Some(&session), SILENT_SESSION_MS)
            .await
        {
            Ok(mut c) => {
                matches!(c.handshake(PROMPT).await, zkwire::Handshake::Opened(s) if s.timeout_ms == 0)
            }
            Err(_) => false,
        };
        let dropped = tokio::time::timeout_at(deadline, live).await.ok();
        let answer = match write.is_finished() {
            true => write.await.ok(),
            false => {
                write.abort();
                None
            }
        };
        Ok::<_, String>((read, read_in, told, expired, dropped, answer, sent))
    };
    let got = go.await;
    silent.abort();
    // Muted, nothing has reached the leader since the mute; the
    // leader's packets reached server 1 until it dropped it.
    let last = r.links.last_delivered("zk1", Way::ToUpstream);
    let heard = r.links.last_delivered("zk1", Way::ToDialler);
    r.release();
    let (read, read_in, told, expired, dropped, answer, sent) = got?;
    let last = last.ok_or("no packet from server 1 went through link zk1")?;
    let Some(Ok((state, at))) = dropped else {
        return Err(format!(
            "server 1's live client was not disconnected within {:?} of the mute",
            bound + Duration::from_secs(3)
        ));
    };
    let after_last = at.saturating_duration_since(last);
    let told_in_time = told
        .as_ref()
        .is_ok_and(|&(t, _)| t < at && t < muted + bound);
    let unanswered = !matches!(answer, Some((Ok(()), _)));
    // The writer's connection given up at its read timeout, before the
    // drop: its create fails (connection loss).
    let gave_up = matches!(answer, Some((Err(_), t))
        if t < at && t.saturating_duration_since(sent) <= WRITER_READ_TIMEOUT + Duration::from_millis(300));
    drop((a, w));
    // Once server 1 follows again and has caught up: where the held
    // create is.
    let after = match r.caught_up(1, Duration::from_secs(30)).await {
        Ok(d) => {
            let on_1 = zk_client(server_1).await?;
            let mut found = Vec::new();
            for (c, at) in [(&r.l, "the leader"), (&on_1, "server 1")] {
                if within(PROMPT, "exists", c.check_stat(&held_path))
                    .await?
                    .is_some()
                {
                    found.push(at);
                }
            }
            Ok((d, found))
        }
        Err(e) => Err(e),
    };
    let into = |t: Instant| ms(t.saturating_duration_since(muted));
    Ok((
        vec![
            read == b"muted",
            unanswered,
            told_in_time && expired,
            after_last >= bound && after_last <= bound + Duration::from_secs(1),
            after.as_ref().is_ok_and(|(_, found)| found.is_empty()),
            gave_up,
        ],
        format!(
            "read {:?} on server 1 {} ms after the leader's commit; the held create (its client's read timeout {} ms) {}; the silent {} ms session's connection {}, and the session, presented to the leader then, {}; the live client {state} {} ms after the leader last heard server 1 (its last packet through the link {} ms before the mute), {} ms into the mute (syncLimit × tickTime = {} ms), the leader's last packet to server 1 having passed {} before; {}",
            String::from_utf8_lossy(&read),
            ms(read_in),
            ms(WRITER_READ_TIMEOUT),
            match &answer {
                None => "still had no answer at the drop".to_string(),
                Some((Ok(()), t)) => format!("was ANSWERED {} ms into the mute", into(*t)),
                Some((Err(e), t)) => format!(
                    "failed ({e}) {} ms into the mute, {} ms after it was sent",
                    into(*t),
                    ms(t.saturating_duration_since(sent))
                ),
            },
            SILENT_SESSION_MS,
            match &told {
                Ok((t, pings)) => format!(
                    "was closed by server 1 {} ms into the mute, its {pings} pings all answered until then",
                    into(*t)
                ),
                Err(e) => format!("was NOT closed by server 1: {e}"),
            },
            if expired { "had expired" } else { "had NOT expired" },
            ms(after_last),
            ms(muted.saturating_duration_since(last)),
            into(at),
            ms(bound),
            heard.map_or("never".into(), |h| format!(
                "{} ms",
                ms(at.saturating_duration_since(h))
            )),
            match after {
                Ok((d, found)) if found.is_empty() => format!(
                    "server 1 followed again and caught up {} ms after release; the held create is on neither the leader nor server 1",
                    ms(d)
                ),
                Ok((d, found)) => format!(
                    "server 1 caught up {} ms after release; the held create is ON {}",
                    ms(d),
                    found.join(" and ")
                ),
                Err(e) => format!("after release: {e}"),
            }
        ),
    ))
}

/// `zk-lag-past-sync-limit`: server 1's link lagged (heartbeats,
/// proposals and revalidation answers pass, commits wait) for twice syncLimit × tickTime while the
/// leader commits a new value.
async fn zk_lag_past_sync_limit(r: &ZkRun<'_>) -> Result<(Vec<bool>, String), String> {
    let a = zk_client(&r.ens.servers[0]).await?;
    r.caught_up(1, PROMPT).await?;
    let (before, _) = within(PROMPT, "getData on server 1", a.get_data(&r.x())).await?;
    let watch = on_disconnect(&a);
    let lag = 2 * r.bound();
    let start = Instant::now();
    r.links.lag(&["zk1".to_string()]);
    let go = async {
        r.set("lagged").await?;
        tokio::time::sleep(lag).await;
        let (read, _) = within(PROMPT, "getData on server 1", a.get_data(&r.x())).await?;
        Ok::<_, String>((read, start.elapsed()))
    };
    let got = go.await;
    let disconnected = watch.is_finished();
    r.release();
    let (read, read_at) = got?;
    let caught = r.caught_up(1, PROMPT).await?;
    let (after, _) = within(PROMPT, "getData on server 1", a.get_data(&r.x())).await?;
    watch.abort();
    Ok((
        vec![
            read == before && read_at >= lag,
            !disconnected,
            after == b"lagged",
        ],
        format!(
            "read {:?} on server 1 {} ms into the lag (syncLimit × tickTime = {} ms); the client {}; caught up {} ms after release",
            String::from_utf8_lossy(&read),
            ms(read_at),
            ms(r.bound()),
            if disconnected { "was disconnected" } else { "stayed connected" },
            ms(caught)
        ),
    ))
}

/// One run of the ZooKeeper facts.
async fn zk_run(ens: &ZkEnsemble, links: &Links, run: usize) -> Vec<FactRow> {
    let facts = [
        &STALE_READ,
        &SYNC_WAITS,
        &WATCH_ON_APPLY,
        &RECONNECT_REFUSED,
        &NEW_SESSION_WAITS,
        &LOCAL_SESSION,
        &EXPIRED_TOLD_BEHIND,
        &LAG_PAST_SYNC_LIMIT,
        &FOLLOWER_DROPPED,
        &MUTED_DROPPED,
    ];
    let set_up = async {
        zk_ready(ens, Duration::from_secs(90)).await?;
        let l = zk_client(&ens.servers[2]).await?;
        let base = format!("/ensemble-{run}");
        crate::delete_tree(&l, &base).await;
        within(
            PROMPT,
            "create the run's directory",
            l.create(&base, b"", &persistent()),
        )
        .await?;
        within(
            PROMPT,
            "create x",
            l.create(&format!("{base}/x"), b"1", &persistent()),
        )
        .await?;
        Ok::<_, String>(ZkRun {
            ens,
            links,
            base,
            l,
        })
    };
    let r = match set_up.await {
        Ok(r) => r,
        Err(e) => return facts.iter().map(|f| f.row(Err(e.clone()), None)).collect(),
    };
    let (stale, leader_new, after) = model::zk_stale_read();
    let (held, answered, read_new) = model::zk_sync_waits();
    let (leader_told, not_told, told) = model::zk_watch_on_apply();
    let (waiting, connected) = model::zk_new_session_waits();
    let (refused, accepted) = model::zk_reconnect_refused();
    let (opened, lists, gone) = model::zk_local_session_stale();
    let mut rows = vec![
        STALE_READ.row(
            zk_stale_read(&r).await,
            Some(vec![stale, leader_new, after]),
        ),
        SYNC_WAITS.row(
            zk_sync_waits(&r).await,
            Some(vec![held, answered, read_new]),
        ),
        WATCH_ON_APPLY.row(
            zk_watch_on_apply(&r).await,
            Some(vec![leader_told, not_told, told]),
        ),
        RECONNECT_REFUSED.row(
            zk_reconnect_refused(&r).await,
            Some(vec![refused, accepted]),
        ),
        NEW_SESSION_WAITS.row(
            zk_new_session_waits(&r).await,
            Some(vec![waiting, connected]),
        ),
        LOCAL_SESSION.row(zk_local_session(&r).await, Some(vec![opened, lists, gone])),
    ];
    let (told, lists, gone) = model::zk_expired_told_behind();
    rows.push(EXPIRED_TOLD_BEHIND.row(
        zk_expired_told_behind(&r).await,
        Some(vec![told, lists, gone]),
    ));
    let (lag_stale, lag_connected, lag_new, lag_twin) = model::zk_lag_past_sync_limit();
    let mut row = LAG_PAST_SYNC_LIMIT.row(
        zk_lag_past_sync_limit(&r).await,
        Some(vec![lag_stale, lag_connected, lag_new]),
    );
    row.detail.push_str(&format!("; model: {lag_twin}"));
    rows.push(row);
    let (answered, dropped, twin) = model::zk_follower_dropped();
    let mut row =
        FOLLOWER_DROPPED.row(zk_follower_dropped(&r).await, Some(vec![answered, dropped]));
    row.detail.push_str(&format!("; model: {twin}"));
    rows.push(row);
    let (steps, simulated) = model::zk_muted_follower_dropped(
        ens.sync_ms(),
        SILENT_SESSION_MS as u64,
        WRITER_SESSION_MS,
    );
    let mut row = MUTED_DROPPED.row(zk_muted_follower_dropped(&r).await, Some(steps.to_vec()));
    row.detail.push_str(&format!("; model: {simulated}"));
    rows.push(row);
    r.release();
    rows
}

// --- etcd ---

struct EtcdRun<'a> {
    links: &'a Links,
    /// The member held, and the tags that hold it.
    member: String,
    tags: Vec<String>,
    /// Clients on the held member and on the leader.
    m: etcd_client::Client,
    l: etcd_client::Client,
    key: String,
}

pub(crate) async fn etcd_connect(endpoint: &str) -> Result<etcd_client::Client, String> {
    within(
        PROMPT,
        &format!("connect to {endpoint}"),
        etcd_client::Client::connect([endpoint], None),
    )
    .await
}

/// The cluster's leader and members once every member knows the same
/// leader: (leader's index, each member's id).
pub(crate) async fn etcd_ready(
    c: &EtcdCluster,
    limit: Duration,
) -> Result<(usize, Vec<u64>), String> {
    let start = Instant::now();
    loop {
        let attempt = async {
            let mut first = etcd_connect(&c.members[0]).await?;
            let members = within(PROMPT, "member list", first.member_list()).await?;
            let mut ids = Vec::new();
            for &port in &c.peer_proxies {
                let url = format!("http://127.0.0.1:{port}");
                let m = members
                    .members()
                    .iter()
                    .find(|m| m.peer_urls().iter().any(|u| u == &url))
                    .ok_or_else(|| format!("no member advertises {url}"))?;
                ids.push(m.id());
            }
            let mut leaders = Vec::new();
            for e in &c.members {
                let mut cl = etcd_connect(e).await?;
                leaders.push(within(PROMPT, "status", cl.status()).await?.leader());
            }
            let leader = leaders[0];
            let at = ids.iter().position(|&id| id == leader);
            match at {
                Some(i) if leaders.iter().all(|&l| l == leader) => Ok((i, ids)),
                _ => Err(format!("no leader all members agree on: {leaders:x?}")),
            }
        };
        match attempt.await {
            Ok(v) => return Ok(v),
            Err(e) if start.elapsed() > limit => {
                return Err(format!(
                    "the etcd cluster is not ready after {limit:?}: {e}"
                ))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

impl EtcdRun<'_> {
    fn hold(&self) {
        self.links.hold(&self.tags);
    }

    fn release(&self) {
        self.links.release();
    }

    async fn put(&mut self, v: &str) -> Result<i64, String> {
        let r = within(
            PROMPT,
            "put on the leader",
            self.l.put(self.key.as_str(), v, None),
        )
        .await?;
        Ok(r.header().map_or(0, |h| h.revision()))
    }

    async fn serializable(&mut self) -> Result<Option<Vec<u8>>, String> {
        let r = within(
            PROMPT,
            "serializable get on the member",
            self.m.get(
                self.key.as_str(),
                Some(etcd_client::GetOptions::new().with_serializable()),
            ),
        )
        .await?;
        Ok(r.kvs().first().map(|kv| kv.value().to_vec()))
    }

    /// Waits until the member's own (serializable) read gives `v`.
    async fn caught_up(&mut self, v: &str) -> Result<Duration, String> {
        let start = Instant::now();
        loop {
            if self.serializable().await?.as_deref() == Some(v.as_bytes()) {
                return Ok(start.elapsed());
            }
            if start.elapsed() > PROMPT {
                return Err(format!("{} did not catch up to {v:?}", self.member));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn etcd_serializable(r: &mut EtcdRun<'_>) -> Result<(Vec<bool>, String), String> {
    r.caught_up("1").await?;
    r.hold();
    let got = async {
        let rev = r.put("2").await?;
        let read = r.serializable().await?;
        Ok::<_, String>((rev, read))
    }
    .await;
    r.release();
    let (rev, read) = got?;
    let caught = r.caught_up("2").await?;
    Ok((
        vec![read.as_deref() == Some(b"1"), true],
        format!(
            "the leader wrote \"2\" at revision {rev}; {} served {} while cut off; caught up {} ms after release",
            r.member,
            shown(read.as_deref()),
            ms(caught)
        ),
    ))
}

async fn etcd_linearizable(r: &mut EtcdRun<'_>) -> Result<(Vec<bool>, String), String> {
    r.caught_up("2").await?;
    r.hold();
    let written = r.put("3").await;
    let (mut m, key) = (r.m.clone(), r.key.clone());
    let read = tokio::spawn(async move {
        let res = m.get(key, None).await;
        (res, Instant::now())
    });
    tokio::time::sleep(QUIET).await;
    let waited = !read.is_finished();
    let released = Instant::now();
    r.release();
    written?;
    let (res, at) = within(PROMPT, "linearizable get on the member", async {
        read.await.map_err(|e| e.to_string())
    })
    .await?;
    let value = res
        .map_err(|e| format!("linearizable get: {e}"))?
        .kvs()
        .first()
        .map(|kv| kv.value().to_vec());
    Ok((
        vec![value.as_deref() != Some(b"2"), value.as_deref() == Some(b"3")],
        format!(
            "{} {} while cut off (its read index is the leader's) and answered {} {} ms after release",
            r.member,
            if waited { "did not answer" } else { "ANSWERED" },
            shown(value.as_deref()),
            ms(at.saturating_duration_since(released))
        ),
    ))
}

async fn etcd_watch(r: &mut EtcdRun<'_>) -> Result<(Vec<bool>, String), String> {
    r.caught_up("3").await?;
    let key = r.key.clone();
    let (_wm, mut on_member) =
        within(PROMPT, "watch on the member", r.m.watch(key.as_str(), None)).await?;
    let (_wl, mut on_leader) =
        within(PROMPT, "watch on the leader", r.l.watch(key.as_str(), None)).await?;
    r.hold();
    let committed = Instant::now();
    let written = r.put("4").await;
    // The first message on a stream with events (a created response has none).
    async fn event(s: &mut etcd_client::WatchStream) -> Result<(), String> {
        loop {
            match s.message().await {
                Ok(Some(m)) if !m.events().is_empty() => return Ok(()),
                Ok(Some(_)) => continue,
                Ok(None) => return Err("the watch stream ended".into()),
                Err(e) => return Err(e.to_string()),
            }
        }
    }
    let leader_told = matches!(
        tokio::time::timeout(PROMPT, event(&mut on_leader)).await,
        Ok(Ok(()))
    );
    let leader_at = committed.elapsed();
    let member = tokio::spawn(async move {
        let r = event(&mut on_member).await;
        (r, Instant::now())
    });
    tokio::time::sleep(QUIET).await;
    let quiet = !member.is_finished();
    let released = Instant::now();
    r.release();
    written?;
    let told = tokio::time::timeout(PROMPT, member).await;
    let (told_after, detail) = match told {
        Ok(Ok((Ok(()), at))) => (
            at >= released,
            format!(
                "the leader's watcher told {} ms after the put, {}'s {} ms after release",
                ms(leader_at),
                r.member,
                ms(at.saturating_duration_since(released))
            ),
        ),
        Ok(Ok((Err(e), _))) => (false, format!("{}'s watch: {e}", r.member)),
        _ => (false, format!("{}'s watcher was never told", r.member)),
    };
    Ok((vec![leader_told, quiet, told_after], detail))
}

/// What one keepalive of a lease came to.
#[derive(Debug, PartialEq)]
enum KeepAlive {
    /// Renewed, with this TTL left.
    Renewed(i64),
    /// The lease is gone (a TTL of 0 or less, or "lease not found").
    Gone,
    /// Another error: it renewed nothing and says nothing of the lease.
    Failed(String),
    /// No answer in time.
    Silent,
}

/// One keepalive of lease `id` through `c`, waiting up to `wait`.
async fn keep_alive(c: &mut etcd_client::Client, id: i64, wait: Duration) -> KeepAlive {
    let once = async {
        let failed = |e: etcd_client::Error| match crate::backend::lease_not_found(&e) {
            true => KeepAlive::Gone,
            false => KeepAlive::Failed(e.to_string()),
        };
        let (mut keeper, mut stream) = match c.lease_keep_alive(id).await {
            Ok(k) => k,
            Err(e) => return failed(e),
        };
        if let Err(e) = keeper.keep_alive().await {
            return failed(e);
        }
        match stream.message().await {
            Ok(Some(r)) if r.ttl() > 0 => KeepAlive::Renewed(r.ttl()),
            Ok(Some(_)) => KeepAlive::Gone,
            Ok(None) => KeepAlive::Failed("the keepalive stream ended".into()),
            Err(e) => failed(e),
        }
    };
    tokio::time::timeout(wait, once)
        .await
        .unwrap_or(KeepAlive::Silent)
}

async fn etcd_keepalive_cut(r: &mut EtcdRun<'_>) -> Result<(Vec<bool>, String), String> {
    let grant = within(
        PROMPT,
        "lease grant on the member",
        r.m.lease_grant(KEEPALIVE_TTL, None),
    )
    .await?;
    let (id, ttl) = (grant.id(), grant.ttl());
    let key = format!("{}-leased", r.key);
    within(
        PROMPT,
        "put with the lease on the leader",
        r.l.put(
            key.as_str(),
            "x",
            Some(etcd_client::PutOptions::new().with_lease(id)),
        ),
    )
    .await?;
    let first = keep_alive(&mut r.m, id, PROMPT).await;
    if !matches!(first, KeepAlive::Renewed(_)) {
        return Err(format!(
            "{}: the lease's keepalive before the cut: {first:?}",
            r.member
        ));
    }
    let renewed = Instant::now();
    r.hold();
    let cut = async {
        let (mut answered, mut gone) = (0, None);
        let limit = Duration::from_secs(ttl.max(1) as u64 + 5);
        while renewed.elapsed() < limit {
            let k = keep_alive(&mut r.m, id, Duration::from_millis(400)).await;
            if matches!(k, KeepAlive::Renewed(_)) {
                answered += 1;
            }
            let got = within(PROMPT, "get on the leader", r.l.get(key.as_str(), None)).await?;
            if got.kvs().is_empty() {
                gone = Some(renewed.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok::<_, String>((answered, gone))
    }
    .await;
    r.release();
    let (answered, gone) = cut?;
    // Once the cut heals the member forwards keepalives again: the lease
    // is gone (the member may take a moment to hear the leader).
    let start = Instant::now();
    let after = loop {
        match keep_alive(&mut r.m, id, PROMPT).await {
            KeepAlive::Gone => break Some(()),
            _ if start.elapsed() > PROMPT => break None,
            KeepAlive::Renewed(_) | KeepAlive::Failed(_) | KeepAlive::Silent => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
        }
    };
    let ttl_d = Duration::from_secs(ttl.max(0) as u64);
    let on_time = gone.is_some_and(|g| {
        g + Duration::from_millis(500) >= ttl_d && g <= ttl_d + Duration::from_secs(2)
    });
    Ok((
        vec![answered == 0, on_time, after.is_some()],
        format!(
            "a lease of TTL {ttl} s through {}: {answered} keepalive(s) answered while cut off; the leader dropped its key {} after the last renewal; after the heal a keepalive {}",
            r.member,
            gone.map_or("never (within TTL + 5 s)".into(), |g| format!("{} ms", ms(g))),
            if after.is_some() { "found it gone" } else { "was not answered as gone" }
        ),
    ))
}

/// One run of the etcd facts.
async fn etcd_run(c: &EtcdCluster, links: &Links, run: usize) -> Vec<FactRow> {
    let facts = [&SERIALIZABLE, &LINEARIZABLE, &ETCD_WATCH, &KEEPALIVE_CUT];
    let set_up = async {
        let (leader, ids) = etcd_ready(c, Duration::from_secs(90)).await?;
        // The first member that does not lead.
        let held = (0..3).find(|&i| i != leader).expect("three members");
        let mut l = etcd_connect(&c.members[leader]).await?;
        let m = etcd_connect(&c.members[held]).await?;
        let key = format!("/ensemble-{run}/k");
        within(PROMPT, "put", l.put(key.as_str(), "1", None)).await?;
        Ok::<_, String>(EtcdRun {
            links,
            member: format!("e{}", held + 1),
            // Its peer connections, both ways, and the lease requests it
            // forwards to the leader (which name no member).
            tags: vec![
                format!("e{}", held + 1),
                format!("{:x}", ids[held]),
                crate::linkproxy::LEASE_FORWARDING.to_string(),
            ],
            m,
            l,
            key,
        })
    };
    let mut r = match set_up.await {
        Ok(r) => r,
        Err(e) => return facts.iter().map(|f| f.row(Err(e.clone()), None)).collect(),
    };
    let lin = model::etcd_linearizable_new();
    let (stale, fresh) = model::etcd_serializable_stale();
    let (unanswered, ended, gone) = model::etcd_keepalive_cut();
    let (leader_told, not_told, told) = model::etcd_watch_on_apply();
    let rows = vec![
        SERIALIZABLE.row(etcd_serializable(&mut r).await, Some(vec![stale, fresh])),
        LINEARIZABLE.row(etcd_linearizable(&mut r).await, Some(vec![lin, lin])),
        ETCD_WATCH.row(
            etcd_watch(&mut r).await,
            Some(vec![leader_told, not_told, told]),
        ),
        KEEPALIVE_CUT.row(
            etcd_keepalive_cut(&mut r).await,
            Some(vec![unanswered, ended, gone]),
        ),
    ];
    r.release();
    rows
}

/// What the runs found.
#[derive(Serialize)]
pub struct Section {
    pub runs: Vec<Vec<FactRow>>,
    /// Every run's (fact, real, model) rows are the same.
    pub runs_identical: bool,
    pub wall_seconds: f64,
    pub zk_timing: Option<(u64, u64)>,
}

impl Section {
    /// Every row of every run ran, and agrees with the model where the
    /// model has it.
    pub fn agrees(&self) -> bool {
        self.runs.iter().flatten().all(FactRow::ok)
    }

    pub fn markdown(&self) -> String {
        let mut md = String::from("\n## Replicated stores: facts of order on real ensembles\n\n");
        md.push_str(&format!(
            "A three-server ZooKeeper 3.8 ensemble{} and a three-member etcd 3.4 cluster on loopback, one server's link to its leader held by a proxy that keeps the sockets open (ZooKeeper: server 1's connection to the leader's quorum port, or server 2's, which has `localSessionsEnabled`; etcd: every peer connection a non-leader member dialled or was dialled on); for `zk-muted-follower-dropped` the proxy holds only server 1's packets to the leader, while the leader's, and its closing the connection, reach server 1. Each fact is a list of steps, in order; `NOT` marks a step that did not happen. The model column is the model store's run of the same behaviour (three servers, the held follower being a follower that has not applied the leader's last commits); *pending*: the model does not have it yet. {} runs, {:.1} s in all.\n",
            match self.zk_timing {
                Some((t, s)) => format!(" (tickTime {t} ms, syncLimit {s}: syncLimit × tickTime = {} ms)", t * s),
                None => String::new(),
            },
            self.runs.len(),
            self.wall_seconds
        ));
        for (i, run) in self.runs.iter().enumerate() {
            md.push_str(&format!("\nRun {}:\n\n{}", i + 1, facts_table(run)));
        }
        let agreeing = self
            .runs
            .iter()
            .filter(|r| r.iter().all(FactRow::ok))
            .count();
        md.push_str(&format!(
            "\nEvery row with a model agrees with it in {agreeing} of {} runs; the rows are {} across the runs.\n",
            self.runs.len(),
            if self.runs_identical { "identical" } else { "NOT identical" }
        ));
        let pending: Vec<&str> = self
            .runs
            .first()
            .into_iter()
            .flatten()
            .filter(|r| r.model.is_none())
            .map(|r| r.id)
            .collect();
        if !pending.is_empty() {
            md.push_str(&format!(
                "\nModel pending for {}: the real facts are recorded; the rows are compared once the model has them.\n",
                pending.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        md
    }
}

/// Fact rows as the report's table (fact, store, real, model, agree), then
/// each row's details.
pub(crate) fn facts_table(rows: &[FactRow]) -> String {
    let mut md = String::from("| fact | store | real | model | agree |\n|---|---|---|---|---|\n");
    for r in rows {
        md.push_str(&format!(
            "| `{}`: {} | {} | {} | {} | {} |\n",
            r.id,
            r.fact,
            r.store,
            r.real,
            r.model.as_deref().unwrap_or("pending"),
            r.agree_cell()
        ));
    }
    md.push_str("\nDetails (timings are not compared):\n\n");
    for r in rows {
        match &r.error {
            Some(e) => md.push_str(&format!("- `{}`: did not run: {e}\n", r.id)),
            None => md.push_str(&format!("- `{}`: {}\n", r.id, r.detail)),
        }
    }
    md
}

/// The ZooKeeper ensemble's client endpoints in the model's order, its
/// leader (server 3) first, then servers 1 and 2, once it has formed.
pub async fn zk_servers(z: &ZkEnsemble) -> Result<[String; 3], String> {
    zk_ready(z, Duration::from_secs(90)).await?;
    Ok([0, 1, 2].map(|model| z.servers[(model + 2) % 3].clone()))
}

/// The etcd cluster's client endpoints in the model's order: the member
/// that leads first, then the others as `run.sh` numbered them.
pub async fn etcd_servers(c: &EtcdCluster) -> Result<[String; 3], String> {
    let (leader, _) = etcd_ready(c, Duration::from_secs(90)).await?;
    let mut order = vec![c.members[leader].clone()];
    order.extend(
        (0..3)
            .filter(|&i| i != leader)
            .map(|i| c.members[i].clone()),
    );
    Ok(order.try_into().expect("three members"))
}

/// Waits until the ZooKeeper ensemble's servers (client endpoints
/// `servers`, any order) have all applied the same zxid: a new local
/// session, which a follower opens from its own view, then sees what was
/// written before.
pub async fn zk_in_step(servers: &[String]) -> Result<(), String> {
    let start = Instant::now();
    loop {
        let mut zxids = Vec::new();
        for s in servers {
            zxids.push(srvr(s).await?.1);
        }
        if zxids.windows(2).all(|w| w[0] == w[1]) {
            return Ok(());
        }
        if start.elapsed() > PROMPT {
            return Err(format!(
                "the servers did not reach one zxid within {PROMPT:?}: {zxids:x?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs every fact `runs` times on the ensembles given.
pub async fn validate(e: &Ensembles, runs: usize) -> Section {
    let start = Instant::now();
    let mut all = Vec::new();
    for run in 1..=runs {
        let mut rows = Vec::new();
        if let Some(zk) = &e.zk {
            rows.extend(zk_run(zk, &e.links, run).await);
        }
        if let Some(etcd) = &e.etcd {
            rows.extend(etcd_run(etcd, &e.links, run).await);
        }
        for r in &rows {
            eprintln!("ensemble run {run}: {:<24} {}", r.id, r.verdict());
        }
        all.push(rows);
    }
    let key = |run: &Vec<FactRow>| -> Vec<(String, String, Option<String>)> {
        run.iter()
            .map(|r| (r.id.to_string(), r.real.clone(), r.model.clone()))
            .collect()
    };
    let runs_identical = all.windows(2).all(|w| key(&w[0]) == key(&w[1]));
    Section {
        runs: all,
        runs_identical,
        wall_seconds: start.elapsed().as_secs_f64(),
        zk_timing: e.zk.as_ref().map(|z| (z.tick_ms, z.sync_limit)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row agrees when real and model take the same steps; one that
    /// differs, or could not run, fails the run; a pending model fails
    /// nothing but says whether the real fact is #50's.
    #[test]
    fn rows_compare_the_steps() {
        let ok = || Ok((vec![true, true], String::new()));
        let same = RECONNECT_REFUSED.row(ok(), Some(vec![true, true]));
        assert_eq!(same.agree, Some(true));
        assert!(same.ok());
        let differs = RECONNECT_REFUSED.row(ok(), Some(vec![true, false]));
        assert_eq!(
            differs.model.as_deref(),
            Some("refused while behind the client's zxid → NOT accepted once caught up")
        );
        assert!(!differs.ok());
        assert!(!RECONNECT_REFUSED
            .row(Err("down".into()), Some(vec![true, true]))
            .ok());
        let pending = SERIALIZABLE.row(Ok((vec![false, true], String::new())), None);
        assert!(pending.ok() && !pending.real_shows && pending.agree.is_none());
        assert!(!SERIALIZABLE.row(Err("down".into()), None).ok());
    }
}
