//! Leader failovers on the real ZooKeeper ensemble and etcd cluster,
//! beside the model store's: the leader's process is stopped (SIGSTOP, as
//! a long pause would), so that it takes no part in the election either,
//! then resumed. They run last of all: afterwards another server leads,
//! which nothing after them assumes. etcd's (`etcd-failover`): another
//! member is elected; its lessor extends every lease, so a lease nobody
//! renews outlives its TTL from the stop, and ends no earlier than its TTL
//! after the election; the old leader, resumed, follows with the write
//! made meanwhile. ZooKeeper's (`zk-failover`):
//! 1. the followers elect server 2 (as much log as server 1, the higher
//!    id);
//! 2. a session that says nothing after the stop outlives its timeout
//!    counted from the stop, and then ends: the new leader started every
//!    session's timer again;
//! 3. a client on server 1, whose connection server 1 closed as it left
//!    the old leader, reconnects with its session alive;
//! 4. the old leader, resumed, gives leading up, follows server 2, and
//!    serves the write made through server 2 meanwhile.

use crate::ensemble::{
    etcd_connect, etcd_ready, ms, persistent, srvr, within, zk_client, EtcdCluster, Fact, FactRow,
    ZkEnsemble, ETCD, KEEPALIVE_TTL, PROMPT, ZK,
};
use crate::ensemble_model as model;
use crate::faults::signal;
use crate::zkwire;
use std::time::{Duration, Instant};
use zookeeper_client as zk;

const FAILOVER: Fact = Fact {
    id: "zk-failover",
    store: ZK,
    fact: "the leader stopped (SIGSTOP) past syncLimit × tickTime: the followers elect a new leader from those with the most log, the highest id; every session's timer starts again there; a follower's client keeps its session; the old leader, resumed, follows the new one",
    steps: &[
        "server 2 elected",
        "a silent session outlives its timeout from the stop, then ends",
        "the follower's client keeps its session",
        "the old leader follows server 2 and has the write made meanwhile",
    ],
};

const ETCD_FAILOVER: Fact = Fact {
    id: "etcd-failover",
    store: ETCD,
    fact: "the leader stopped (SIGSTOP) past the election timeout: the other members elect one of them; the new leader's lessor extends every lease (its time-to-live again from the election, and more), so a lease nobody renews outlives its TTL from the stop, then ends; the old leader, resumed, follows the new one",
    steps: &[
        "another member elected",
        "a lease nobody renews outlives its TTL from the stop, then ends",
        "the old leader follows and has the write made meanwhile",
    ],
};

/// The silent session's timeout, ms.
const SILENT_MS: i32 = 4000;

/// Sends SIGCONT to the stopped process when dropped, on every path the
/// validator lives through (`run.sh`'s cleanup sends one too).
struct Stopped(u32);

impl Stopped {
    fn stop(pid: u32) -> Result<Stopped, String> {
        signal(pid, "-STOP")?;
        Ok(Stopped(pid))
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = signal(self.0, "-CONT");
    }
}

/// Process `pid`'s state as /proc says it (`T`: stopped), for a refusal's
/// words: an intermittent "still answers" was seen once and not since.
fn process_state(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(") ")?.1;
            after.split_whitespace().next().map(str::to_string)
        })
        .unwrap_or_else(|| "no such process".into())
}

/// The leader of servers 1 and 2 (`run.sh`'s numbers), once one leads.
async fn new_leader(ens: &ZkEnsemble, limit: Duration) -> Option<usize> {
    let start = Instant::now();
    while start.elapsed() < limit {
        for i in 0..2 {
            if let Ok((mode, _)) = srvr(&ens.servers[i]).await {
                if mode == "leader" {
                    return Some(i + 1);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// Whether `path` exists, asked of `c`.
async fn exists(c: &zk::Client, path: &str) -> Result<bool, String> {
    Ok(within(PROMPT, "exists", c.check_stat(path))
        .await?
        .is_some())
}

/// Runs the failovers of the ensembles given their processes: ZooKeeper's
/// leader's (server 3's), etcd's members' (in `run.sh`'s order). Said on
/// stderr.
pub async fn run_all(
    e: &crate::ensemble::Ensembles,
    zk_pid: Option<u32>,
    etcd_pids: Option<&[u32]>,
) -> Vec<FactRow> {
    let mut rows = Vec::new();
    if let (Some(zk), Some(pid)) = (&e.zk, zk_pid) {
        rows.push(zk_failover(zk, pid).await);
    }
    if let (Some(c), Some(pids)) = (&e.etcd, etcd_pids) {
        rows.push(etcd_failover(c, pids).await);
    }
    for row in &rows {
        eprintln!("ensemble: {:<24} {}", row.id, row.verdict());
    }
    rows
}

/// Runs the failover; `pid` is the leader's (server 3's) process.
pub async fn zk_failover(ens: &ZkEnsemble, pid: u32) -> FactRow {
    let (elected, timers, lives, has) = model::zk_failover();
    FAILOVER.row(
        real(ens, pid).await,
        Some(vec![elected, timers, lives, has]),
    )
}

async fn real(ens: &ZkEnsemble, pid: u32) -> Result<(Vec<bool>, String), String> {
    let [one, _, leader] = [0, 1, 2].map(|i| ens.servers[i].as_str());
    crate::ensemble::zk_servers(ens).await?;
    let l = zk_client(leader).await?;
    let base = "/failover";
    crate::delete_tree(&l, base).await;
    within(
        PROMPT,
        "create the directory",
        l.create(base, b"", &persistent()),
    )
    .await?;
    // A client on server 1 with an ephemeral node, and a silent session
    // there with one, which says nothing more.
    let f = zk_client(one).await?;
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all());
    within(
        PROMPT,
        "create f",
        f.create(&format!("{base}/f"), b"", &ephemeral),
    )
    .await?;
    let f_session = f.session_id();
    // Whether server 1 closed f's connection (it does as it leaves the old
    // leader).
    let dropped = crate::ensemble::on_disconnect(&f);
    let mut silent = zkwire::Conn::start(one, 0, None, SILENT_MS)
        .await
        .map_err(|e| format!("connect to server 1: {e}"))?;
    let zkwire::Handshake::Opened(_) = silent.handshake(PROMPT).await else {
        return Err("server 1 did not open the silent session".into());
    };
    let made = silent.create(1, &format!("{base}/s"), true).await?;
    if made.err != 0 {
        return Err(format!("the silent session's create: error {}", made.err));
    }
    crate::ensemble::zk_in_step(&ens.servers).await?;

    let stopped_at = Instant::now();
    let stopped = Stopped::stop(pid)?;
    // The process stopped must be the leader's: it answers no more.
    if let Ok(Ok((mode, zxid))) =
        tokio::time::timeout(Duration::from_millis(1500), srvr(leader)).await
    {
        return Err(format!(
            "process {pid} stopped (its state now: {}), but server 3 still answers ({mode}, zxid {zxid:#x}): not its process",
            process_state(pid)
        ));
    }
    let elected = new_leader(ens, Duration::from_secs(20)).await;
    let elected_in = stopped_at.elapsed();
    let Some(new) = elected else {
        return Err(format!(
            "no follower led within 20 s of the stop ({} ms)",
            ms(elected_in)
        ));
    };
    let n = zk_client(ens.servers[new - 1].as_str()).await?;
    within(
        PROMPT,
        "write n",
        n.create(&format!("{base}/n"), b"", &persistent()),
    )
    .await?;
    // The silent session, past its timeout from the stop.
    let past = Duration::from_millis(SILENT_MS as u64 + 600);
    tokio::time::sleep(past.saturating_sub(stopped_at.elapsed())).await;
    let outlived = exists(&n, &format!("{base}/s")).await?;
    let outlived_at = stopped_at.elapsed();
    // ... and then ends (its new timer, plus the expiry's tick, plus room).
    let ends = Instant::now();
    let mut ended = None;
    while ends.elapsed() < Duration::from_millis(SILENT_MS as u64 + 3000) {
        if !exists(&n, &format!("{base}/s")).await? {
            ended = Some(stopped_at.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The follower's client, back on server 1.
    let listed = within(
        Duration::from_secs(10),
        "getChildren through server 1's client",
        f.list_children(base),
    )
    .await;
    let closed = dropped.is_finished();
    dropped.abort();
    let kept = closed
        && listed.as_ref().is_ok_and(|c| c.iter().any(|c| c == "f"))
        && f.session_id() == f_session;
    drop(stopped);
    let resumed_at = stopped_at.elapsed();
    // The old leader follows server 2, and has the write.
    let start = Instant::now();
    let mut following = false;
    while start.elapsed() < Duration::from_secs(30) {
        if matches!(srvr(leader).await, Ok((mode, _)) if mode == "follower") {
            following = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let follows_in = start.elapsed();
    let has = following
        && within(
            PROMPT,
            "getChildren on the old leader",
            zk_client(leader).await?.list_children(base),
        )
        .await?
        .iter()
        .any(|c| c == "n");
    Ok((
        // Ended on the new leader's timer: its timeout from the election
        // at the earliest (less a tick, the expiry's granularity).
        vec![
            new == 2,
            outlived
                && ended.is_some_and(|e| {
                    e + Duration::from_millis(ens.tick_ms)
                        >= elected_in + Duration::from_millis(SILENT_MS as u64)
                }),
            kept,
            has,
        ],
        format!(
            "server {new} led {} ms after the stop; the silent session's node was {} at {} ms and gone at {}; server 1's client, its connection {}, {} (listed {:?}); the old leader, resumed at {} ms, {} {} ms later",
            ms(elected_in),
            if outlived { "still there" } else { "GONE" },
            ms(outlived_at),
            ended.map_or("— (never, while watched)".to_string(), |t| format!("{} ms", ms(t))),
            if closed { "closed" } else { "NEVER closed" },
            if f.session_id() == f_session { "kept its session" } else { "has a NEW session" },
            listed.unwrap_or_default(),
            ms(resumed_at),
            if following { "followed" } else { "did NOT follow" },
            ms(follows_in),
        ),
    ))
}

/// Runs etcd's failover; `pids` are the members' processes.
pub async fn etcd_failover(c: &EtcdCluster, pids: &[u32]) -> FactRow {
    let (elected, extended, has) = model::etcd_failover();
    ETCD_FAILOVER.row(etcd_real(c, pids).await, Some(vec![elected, extended, has]))
}

/// The leader member `c.members[i]` names, if it answers.
async fn etcd_leader_seen(c: &EtcdCluster, i: usize) -> Option<u64> {
    let mut cl = etcd_connect(&c.members[i]).await.ok()?;
    let status = tokio::time::timeout(Duration::from_millis(800), cl.status()).await;
    status.ok()?.ok().map(|s| s.leader())
}

async fn etcd_real(c: &EtcdCluster, pids: &[u32]) -> Result<(Vec<bool>, String), String> {
    let (leader, ids) = etcd_ready(c, Duration::from_secs(90)).await?;
    let pid = *pids
        .get(leader)
        .ok_or_else(|| format!("no process given for member {}", leader + 1))?;
    let other = (0..3).find(|&i| i != leader).expect("three members");
    let mut m = etcd_connect(&c.members[other]).await?;
    let base = format!("/failover-{}", crate::zkproxy::now_s() as u64);
    let key = format!("{base}/leased");
    let grant = within(PROMPT, "lease grant", m.lease_grant(KEEPALIVE_TTL, None)).await?;
    let ttl = Duration::from_secs(grant.ttl().max(0) as u64);
    let leased = etcd_client::PutOptions::new().with_lease(grant.id());
    within(
        PROMPT,
        "put with the lease",
        m.put(key.as_str(), "x", Some(leased)),
    )
    .await?;

    let stopped_at = Instant::now();
    let stopped = Stopped::stop(pid)?;
    if etcd_leader_seen(c, leader).await.is_some() {
        return Err(format!(
            "process {pid} stopped, but member {} still answers: not its process",
            leader + 1
        ));
    }
    // Another member leads.
    let mut new = None;
    while new.is_none() && stopped_at.elapsed() < Duration::from_secs(30) {
        for i in (0..3).filter(|&i| i != leader) {
            let seen = etcd_leader_seen(c, i).await;
            if let Some(j) = seen.and_then(|l| ids.iter().position(|&id| id == l)) {
                if j != leader {
                    new = Some(j);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elected_in = stopped_at.elapsed();
    let Some(new) = new else {
        return Err(format!(
            "no other member led within 30 s of the stop ({} ms)",
            ms(elected_in)
        ));
    };
    let mut n = etcd_connect(&c.members[new]).await?;
    let written = format!("{base}/n");
    within(
        PROMPT,
        "put through the new leader",
        n.put(written.as_str(), "1", None),
    )
    .await?;
    // The lease, past its TTL from the stop ...
    tokio::time::sleep((ttl + Duration::from_secs(1)).saturating_sub(stopped_at.elapsed())).await;
    let there = |kvs: usize| kvs > 0;
    let outlived = there(
        within(PROMPT, "get", n.get(key.as_str(), None))
            .await?
            .kvs()
            .len(),
    );
    let outlived_at = stopped_at.elapsed();
    // ... and then ends (etcd's lessor looks for expired leases every 500 ms
    // and revokes them by a proposal).
    let mut ended = None;
    while stopped_at.elapsed() < elected_in + ttl * 3 + Duration::from_secs(5) {
        if !there(
            within(PROMPT, "get", n.get(key.as_str(), None))
                .await?
                .kvs()
                .len(),
        ) {
            ended = Some(stopped_at.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(stopped);
    let resumed_at = stopped_at.elapsed();
    // The old leader follows the new one, and has the write.
    let start = Instant::now();
    let mut follows = false;
    while start.elapsed() < Duration::from_secs(30) {
        if etcd_leader_seen(c, leader).await == Some(ids[new]) {
            follows = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let follows_in = start.elapsed();
    let has = follows && {
        let mut o = etcd_connect(&c.members[leader]).await?;
        there(
            within(
                PROMPT,
                "get on the old leader",
                o.get(written.as_str(), None),
            )
            .await?
            .kvs()
            .len(),
        )
    };
    Ok((
        vec![
            new != leader,
            // Ended on the new leader's lessor: its TTL from the election
            // at the earliest.
            outlived && ended.is_some_and(|e| e >= elected_in + ttl),
            has,
        ],
        format!(
            "member {} led {} ms after member {}'s stop; the lease (TTL {} s) was {} at {} ms and gone at {}; the old leader, resumed at {} ms, {} {} ms later",
            new + 1,
            ms(elected_in),
            leader + 1,
            ttl.as_secs(),
            if outlived { "still there" } else { "GONE" },
            ms(outlived_at),
            ended.map_or("— (never, while watched)".to_string(), |t| format!("{} ms", ms(t))),
            ms(resumed_at),
            if follows { "followed the new leader" } else { "did NOT follow" },
            ms(follows_in),
        ),
    ))
}

/// The report's section.
pub fn section(rows: &[FactRow]) -> String {
    format!(
        "\n## Leader failovers on the real ensembles\n\nLast of all, each ensemble's leader is stopped (SIGSTOP) until another server leads and a silent session (ZooKeeper: timeout {SILENT_MS} ms, nothing sent after its node; etcd: a lease of TTL {KEEPALIVE_TTL} s, never renewed) has been seen past its timeout from the stop and then gone; then it is resumed. The session must end no earlier than its timeout after the election (ZooKeeper: less a tick). The model column is the model store's failover (`StoreDriver::depose_leader`, `elect_leader`, `deposed_gives_up`, `rejoin`, `catch_up`).\n\n{}",
        crate::ensemble::facts_table(rows)
    )
}
