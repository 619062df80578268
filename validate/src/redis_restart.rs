//! A Redlock master restarted for real, beside the shipped scenarios that
//! simulate it: `scenarios/redlock-restart-without-fsync.toml` and
//! `scenarios/redlock-restart-fsync-always.toml` (three `redlock` clients
//! split the five masters; one holds on a bare majority, master 2 among
//! it, when master 2 restarts).
//!
//! The simulated run is replayed on the five real masters: every store
//! request of its trace, in the order the model's store took them, goes to
//! its real master on the client's own connection, and each real reply is
//! compared with the model's. Where the file schedules the restart, master
//! 2 is stopped and started again on its port and directory: without
//! persistence (as `validate/run.sh` starts it; stopped by `SHUTDOWN
//! NOSAVE`) it comes back empty; with `appendonly yes` and `appendfsync
//! always` (set on it before the replay; stopped by `SIGKILL`, so only what
//! was fsynced survives) it comes back with its keys.
//! Equal replies throughout mean the real masters granted and refused the
//! same tries as the model's: without persistence, a second client's
//! majority while the first still held — the two holders the simulated
//! run reports — and with `appendfsync always`, nobody else's.
//!
//! Stopping a server is only done when asked (`--redis-restart`, which
//! `validate/run.sh` passes for the masters it started); the restarted
//! server is the validator's own child, stopped when the experiments end,
//! so master 2 is down after them (they run last).

use crate::redis::{flush_all, Conns};
use crate::resp::{Conn, Value};
use models::ids::{ClientIdx, SessionId};
use models::msg::{Reply, Request};
use models::recipes::redis::{del_if_mine, set_nx_px, to, DEFAULT_TTL_MS};
use serde::Serialize;
use sim::scenario::FaultKind;
use sim::trace::{MsgKind, Party, TraceEvent};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The shipped twins: without persistence, and with `appendfsync always`.
const TWINS: [(&str, &str); 2] = [
    (
        "scenarios/redlock-restart-without-fsync.toml",
        include_str!("../../scenarios/redlock-restart-without-fsync.toml"),
    ),
    (
        "scenarios/redlock-restart-fsync-always.toml",
        include_str!("../../scenarios/redlock-restart-fsync-always.toml"),
    ),
];

/// One replay of a shipped scenario on the real masters.
#[derive(Clone, Debug, Serialize)]
pub struct Experiment {
    pub scenario: String,
    pub seed: u64,
    /// `none` or `appendfsync-always`.
    pub persistence: String,
    /// The master restarted.
    pub master: u8,
    /// Replies compared with the simulated run's.
    pub compared: u64,
    pub mismatches: Vec<String>,
    /// Keys on the restarted master just before it stopped and just after it
    /// came back.
    pub keys_before: u64,
    pub keys_after: u64,
    /// Seconds from the stop until the restarted master answered.
    pub restart_seconds: f64,
    /// The simulated run's violations, and what its file expects.
    pub violated: Vec<String>,
    pub expected: Vec<String>,
    pub wall_seconds: f64,
    pub error: Option<String>,
}

impl Experiment {
    /// Every reply equal, the simulated run as its file expects, and the
    /// restart as the persistence says (empty, or keeping the key).
    pub fn agrees(&self) -> bool {
        let kept = self.persistence != "none";
        self.error.is_none()
            && self.compared > 0
            && self.mismatches.is_empty()
            && self.violated == self.expected
            && self.keys_before > 0
            && (self.keys_after == self.keys_before) == kept
            && (self.keys_after == 0) != kept
    }
}

/// The validator's own restarted servers, killed when dropped.
#[derive(Default)]
pub struct Restarted(Vec<Child>);

impl Drop for Restarted {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

async fn info_field(c: &mut Conn, section: &str, field: &str) -> io::Result<String> {
    match c.call(&[b"INFO", section.as_bytes()]).await? {
        Value::Bulk(Some(text)) => Ok(String::from_utf8_lossy(&text)
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
            .unwrap_or_default()),
        other => Err(io::Error::other(format!("INFO {section}: {other:?}"))),
    }
}

async fn dbsize(endpoint: &str) -> io::Result<u64> {
    let mut c = Conn::connect(endpoint).await?;
    match c.call(&[b"DBSIZE"]).await? {
        Value::Int(n) if n >= 0 => Ok(n as u64),
        other => Err(io::Error::other(format!("DBSIZE: {other:?}"))),
    }
}

async fn ok(c: &mut Conn, args: &[&[u8]]) -> io::Result<()> {
    match c.call(args).await? {
        Value::Simple(s) if s == "OK" => Ok(()),
        other => Err(io::Error::other(format!(
            "{}: {other:?}",
            String::from_utf8_lossy(args[0])
        ))),
    }
}

/// Turns on `appendonly yes`, `appendfsync always` and waits for the
/// first rewrite of the append-only file to finish.
async fn persist_always(endpoint: &str) -> io::Result<()> {
    let mut c = Conn::connect(endpoint).await?;
    ok(&mut c, &[b"CONFIG", b"SET", b"appendfsync", b"always"]).await?;
    ok(&mut c, &[b"CONFIG", b"SET", b"appendonly", b"yes"]).await?;
    let started = Instant::now();
    loop {
        let on = info_field(&mut c, "persistence", "aof_enabled").await? == "1";
        let rewriting = info_field(&mut c, "persistence", "aof_rewrite_in_progress").await? != "0"
            || info_field(&mut c, "persistence", "aof_rewrite_scheduled").await? != "0";
        if on && !rewriting {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(10) {
            return Err(io::Error::other("the append-only file was never written"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Stops the server at `endpoint` — `SIGKILL` (its `INFO server` process
/// id) with `fsync`, else `SHUTDOWN NOSAVE` (it persists nothing) — and
/// starts it again on its port and directory, with `appendonly yes` and
/// `appendfsync always` or with no persistence; returns the seconds until
/// it answered `PING`.
async fn restart(endpoint: &str, fsync: bool, own: &mut Restarted) -> io::Result<f64> {
    let port = endpoint
        .rsplit_once(':')
        .map(|(_, p)| p.to_string())
        .ok_or_else(|| io::Error::other(format!("{endpoint}: no port")))?;
    let (pid, dir) = {
        let mut c = Conn::connect(endpoint).await?;
        let pid = info_field(&mut c, "server", "process_id").await?;
        let dir = match c.call(&[b"CONFIG", b"GET", b"dir"]).await? {
            Value::Array(Some(v)) => match v.get(1) {
                Some(Value::Bulk(Some(d))) => String::from_utf8_lossy(d).into_owned(),
                _ => return Err(io::Error::other("CONFIG GET dir: no value")),
            },
            other => return Err(io::Error::other(format!("CONFIG GET dir: {other:?}"))),
        };
        (pid, dir)
    };
    let killed = Instant::now();
    if fsync {
        // Only what was written and fsynced survives a SIGKILL.
        let status = Command::new("kill").args(["-KILL", &pid]).status()?;
        if !status.success() {
            return Err(io::Error::other(format!("kill -KILL {pid} failed")));
        }
    } else {
        // Nothing persists either way; a clean exit keeps the shell that
        // started the server from reporting a killed job.
        let mut c = Conn::connect(endpoint).await?;
        let _ = c.call(&[b"SHUTDOWN", b"NOSAVE"]).await;
    }
    // Until the port is closed.
    while Conn::connect(endpoint).await.is_ok() {
        if killed.elapsed() > Duration::from_secs(5) {
            return Err(io::Error::other("the stopped master still answers"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut cmd = Command::new("redis-server");
    cmd.args(["--port", &port, "--bind", "127.0.0.1", "--save", ""])
        .args(["--dir", &dir, "--daemonize", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if fsync {
        cmd.args(["--appendonly", "yes", "--appendfsync", "always"]);
    } else {
        cmd.args(["--appendonly", "no"]);
    }
    own.0.push(cmd.spawn()?);
    loop {
        if let Ok(mut c) = Conn::connect(endpoint).await {
            if let Ok(Value::Simple(s)) = c.call(&[b"PING"]).await {
                if s == "PONG" {
                    return Ok(killed.elapsed().as_secs_f64());
                }
            }
        }
        if killed.elapsed() > Duration::from_secs(10) {
            return Err(io::Error::other("the restarted master never answered"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The request a client's trace line names: rebuilt from the recipe's own
/// commands and checked against the line's text.
fn rebuild(client: ClientIdx, msg: &str, masters: u8) -> Option<(SessionId, Request)> {
    let session = SessionId::first(client);
    (0..masters)
        .flat_map(|m| {
            [
                to(m, set_nx_px(session, DEFAULT_TTL_MS)),
                to(m, del_if_mine(session)),
            ]
        })
        .find(|req| format!("{req} [session {session}]") == msg)
        .map(|req| (session, req))
}

/// Replays the shipped scenario (`fsync`: the `appendfsync always` twin)
/// on `masters`.
async fn replay(
    masters: &[String],
    fsync: bool,
    own: &mut Restarted,
    e: &mut Experiment,
) -> Result<(), String> {
    let (file, text) = TWINS[usize::from(fsync)];
    let scenario = crate::twin::parse(file, text)?;
    let n = scenario.recipe.setup().masters;
    if masters.len() < usize::from(n) {
        return Err(format!("{file} needs {n} masters"));
    }
    let crate::twin::Run {
        outcome: o,
        violated,
        expected,
    } = crate::twin::run(&scenario);
    e.seed = scenario.seed;
    e.violated = violated;
    e.expected = expected;
    // The model's replies, client by client, in order.
    let mut replies: HashMap<ClientIdx, VecDeque<&str>> = HashMap::new();
    for l in &o.trace {
        if let TraceEvent::Deliver {
            from: Party::Store,
            to: Party::Client(c),
            kind: MsgKind::Reply,
            msg,
        } = &l.event
        {
            if msg != "connected" {
                replies.entry(*c).or_default().push_back(msg);
            }
        }
    }
    // The restart as the file schedules it: the trace shows it only where
    // it changed the model's store (`TraceEvent::StoreFault`), not where
    // the master kept everything (appendfsync always).
    let (at_us, master) = scenario
        .schedule
        .iter()
        .find(|f| f.kind == FaultKind::MasterRestart)
        .and_then(|f| Some((f.at_ms * 1000, u8::try_from(f.master?).ok()?)))
        .ok_or_else(|| format!("{file} schedules no master restart"))?;
    let servers = &masters[..usize::from(n)];
    let endpoint = servers
        .get(usize::from(master))
        .ok_or_else(|| format!("{file} restarts master {master}, of {n}"))?;
    e.master = master;
    if fsync {
        persist_always(endpoint)
            .await
            .map_err(|e| format!("appendfsync always on master {master}: {e}"))?;
    }
    flush_all(servers).await.map_err(|e| e.to_string())?;
    let mut conns = Conns::new(servers.to_vec());
    let mut restarted = false;
    for l in &o.trace {
        let due = matches!(
            l.event,
            TraceEvent::StoreFault {
                fault: FaultKind::MasterRestart,
                ..
            }
        ) || l.t > at_us;
        if due && !restarted {
            restarted = true;
            e.keys_before = dbsize(endpoint).await.map_err(|e| e.to_string())?;
            e.restart_seconds = restart(endpoint, fsync, own)
                .await
                .map_err(|e| format!("restarting master {master}: {e}"))?;
            conns.forget_master(master);
            e.keys_after = dbsize(endpoint).await.map_err(|e| e.to_string())?;
        }
        let TraceEvent::Deliver {
            from: Party::Client(c),
            to: Party::Store,
            kind: MsgKind::Request,
            msg,
        } = &l.event
        else {
            continue;
        };
        if msg.starts_with("connect ") {
            continue;
        }
        let (session, req) = rebuild(*c, msg, n)
            .ok_or_else(|| format!("a request the replay cannot rebuild: {msg}"))?;
        let real = conns.call(session, &req).await;
        let model = replies.get_mut(c).and_then(VecDeque::pop_front);
        e.compared += 1;
        let real_text = real.to_string();
        if model != Some(real_text.as_str()) {
            e.mismatches.push(format!(
                "`{msg}` (client {c}): the server answered {real_text}, the model {}",
                model.unwrap_or("nothing")
            ));
        }
        if let Reply::Redis(models::msg::RedisReply::Down) = real {
            e.mismatches.push(format!("`{msg}`: no connection"));
        }
    }
    if !restarted {
        return Err(format!(
            "the run ended before the restart at {} ms",
            at_us / 1000
        ));
    }
    Ok(())
}

/// Both replays on `masters` (the `appendfsync always` one persisting on
/// the restarted master only); the restarted servers are stopped after.
pub async fn experiments(masters: &[String]) -> Vec<Experiment> {
    let mut own = Restarted::default();
    let mut out = Vec::new();
    for fsync in [false, true] {
        let started = Instant::now();
        let mut e = Experiment {
            scenario: TWINS[usize::from(fsync)].0.to_string(),
            seed: 0,
            persistence: if fsync { "appendfsync-always" } else { "none" }.into(),
            master: 0,
            compared: 0,
            mismatches: Vec::new(),
            keys_before: 0,
            keys_after: 0,
            restart_seconds: 0.0,
            violated: Vec::new(),
            expected: Vec::new(),
            wall_seconds: 0.0,
            error: None,
        };
        let result = replay(masters, fsync, &mut own, &mut e).await;
        if let Err(err) = result {
            e.error = Some(err);
        }
        e.wall_seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "{:<28} {}",
            format!("redlock restart, {}", e.persistence),
            match &e.error {
                Some(err) => format!("did not run: {err}"),
                None => format!(
                    "{}/{} replies equal the simulated run's, master {} had {} key(s), {} after ({:.1} s)",
                    e.compared - e.mismatches.len() as u64,
                    e.compared,
                    e.master,
                    e.keys_before,
                    e.keys_after,
                    e.wall_seconds
                ),
            }
        );
        out.push(e);
    }
    out
}

/// The report's part on the restarts.
pub fn section(experiments: &[Experiment]) -> String {
    if experiments.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n### A Redlock master restarted, real and simulated\n\nThe shipped scenarios `scenarios/redlock-restart-without-fsync.toml` and `scenarios/redlock-restart-fsync-always.toml` (three `redlock` clients split the five masters; one holds on a bare majority, master 2 among it, when master 2 restarts 30 ms in), simulated at their own seeds, then replayed on the five real masters: each store request of the trace, in the order the model's store took it, sent to its real master on the client's own connection, and each real reply compared with the simulated one. Where the file schedules the restart, the real master 2 is stopped and started again on its port and directory: for the first twin as `validate/run.sh` started it, without persistence (stopped by `SHUTDOWN NOSAVE`); for the second with `appendonly yes` and `appendfsync always`, turned on before the replay (stopped by `SIGKILL`, so only what was fsynced survives). Equal replies mean the real masters granted and refused the same tries as the model's: the same holders, so the same violations.\n\n| scenario | persistence | replies equal the simulated run's | master 2's keys before / after the restart | restart (s) | simulated run violated | its file expects | agree |\n|---|---|---|---|---|---|---|---|\n");
    let list = |v: &[String]| {
        if v.is_empty() {
            "nothing".to_string()
        } else {
            v.join(", ")
        }
    };
    for e in experiments {
        match &e.error {
            Some(err) => md.push_str(&format!(
                "| `{}` | {} | did not run: {err} | | | | | NO |\n",
                e.scenario, e.persistence
            )),
            None => md.push_str(&format!(
                "| `{}` (seed {}) | {} | {}/{} | {} / {} | {:.2} | {} | {} | {} |\n",
                e.scenario,
                e.seed,
                e.persistence,
                e.compared - e.mismatches.len() as u64,
                e.compared,
                e.keys_before,
                e.keys_after,
                e.restart_seconds,
                list(&e.violated),
                list(&e.expected),
                if e.agrees() { "yes" } else { "NO" },
            )),
        }
        for m in e.mismatches.iter().take(10) {
            md.push_str(&format!("\n- {m}\n"));
        }
    }
    md.push_str("\n- The replay is sequential, in the model store's order, so it checks the store's answers, not the clients' timing: the clients are the simulated ones, their requests sent for them. The real master 2 is the validator's own process after the first restart and is stopped when the experiments end (they run last).\n");
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every store request of both twins' traces is one the replay can
    /// rebuild, and the restart is scheduled.
    #[test]
    fn the_twins_requests_rebuild() {
        for (file, text) in TWINS {
            let scenario = sim::scenario::Scenario::parse(text, file, "twin").unwrap();
            assert!(scenario
                .schedule
                .iter()
                .any(|f| f.kind == FaultKind::MasterRestart && f.master == Some(2)));
            let o = sim::engine::simulate(&scenario, scenario.seed, true);
            let mut n = 0;
            for l in &o.trace {
                if let TraceEvent::Deliver {
                    from: Party::Client(c),
                    to: Party::Store,
                    kind: MsgKind::Request,
                    msg,
                } = &l.event
                {
                    if !msg.starts_with("connect ") {
                        assert!(rebuild(*c, msg, 5).is_some(), "{msg}");
                        n += 1;
                    }
                }
            }
            assert!(n > 100, "{file}: {n} requests");
        }
    }
}
