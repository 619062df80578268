//! Redis: lockstep's own client and recipe actors against real Redis 7.0
//! masters, and the real lock libraries (redis-py's `Lock`, pottery's
//! `Redlock`) at the wire.
//!
//! - [`Conns`] carries out the recipes' commands ([`models::msg::RedisCmd`])
//!   on one connection per (client session, master), speaking RESP itself
//!   ([`crate::resp`]), and journals each command with its reply.
//! - Every herd run is watched by `MONITOR` on each master ([`Monitor`]),
//!   which gives the order the server carried the commands out in. The
//!   conformance replay ([`conform`]) applies the run's commands in that
//!   order to the model's store (`StoreState::apply`) and compares every
//!   reply the real server gave with the model's, one by one.
//! - Polling makes the counts depend on timing, so requests are compared
//!   through what the model says each acquisition and each poll cost
//!   ([`Costs`]: two simulated herds, with short and long holds, give both),
//!   applied to the polls the real run made.

use crate::backend::{bytes_of, data_of};
use crate::resp::{Conn, MonitorLine, Value};
use models::ids::SessionId;
use models::msg::{RedisCmd, RedisReply, Reply, Request, Timer};
use models::recipe::RecipeRef;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The compare-and-delete script every token lock releases with.
pub const DEL_SCRIPT: &str =
    "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end";
/// The compare-and-extend script.
pub const EXTEND_SCRIPT: &str = "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('pexpire',KEYS[1],ARGV[2]) else return 0 end";

/// The Redis servers the validator was given.
#[derive(Clone, Debug, Default)]
pub struct Endpoints {
    /// One master.
    pub single: Option<String>,
    /// Independent masters (Redlock's).
    pub masters: Vec<String>,
    /// A master and its replica.
    pub replica: Option<(String, String)>,
}

/// `PORT` on loopback, or `HOST:PORT` as given.
fn endpoint(s: &str) -> String {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        format!("127.0.0.1:{s}")
    } else {
        s.to_string()
    }
}

impl Endpoints {
    pub fn parse(single: Option<&str>, masters: Option<&str>, replica: Option<&str>) -> Endpoints {
        Endpoints {
            single: single.map(endpoint),
            masters: masters
                .map(|m| {
                    m.split(',')
                        .filter(|p| !p.trim().is_empty())
                        .map(endpoint)
                        .collect()
                })
                .unwrap_or_default(),
            replica: replica
                .and_then(|r| r.split_once(':'))
                .map(|(m, r)| (endpoint(m), endpoint(r))),
        }
    }

    /// The servers for a recipe of `n` masters: the single master for
    /// one, the first `n` of the independent masters for more.
    pub fn for_masters(&self, n: u8) -> Option<Vec<String>> {
        match n {
            0 => None,
            1 => self.single.clone().map(|s| vec![s]),
            n => (self.masters.len() >= usize::from(n))
                .then(|| self.masters[..usize::from(n)].to_vec()),
        }
    }
}

/// Each server emptied of keys and scripts: a fresh master, as the model's
/// store starts.
pub async fn flush_all(endpoints: &[String]) -> io::Result<()> {
    for e in endpoints {
        let mut c = Conn::connect(e).await?;
        for cmd in [&[&b"FLUSHALL"[..]][..], &[b"SCRIPT", b"FLUSH"]] {
            match c.call(cmd).await? {
                Value::Simple(_) => {}
                other => return Err(io::Error::other(format!("{e}: {other:?}"))),
            }
        }
    }
    Ok(())
}

/// `INFO stats`' `expired_keys` of a server: keys its clock expired.
pub async fn expired_keys(endpoint: &str) -> io::Result<u64> {
    let mut c = Conn::connect(endpoint).await?;
    match c.call(&[b"INFO", b"stats"]).await? {
        Value::Bulk(Some(text)) => String::from_utf8_lossy(&text)
            .lines()
            .find_map(|l| l.strip_prefix("expired_keys:"))
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| io::Error::other("INFO has no expired_keys")),
        other => Err(io::Error::other(format!("INFO: {other:?}"))),
    }
}

/// One command a client sent, and what the server answered.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub session: SessionId,
    pub master: u8,
    /// The connection's own address (`None`: no connection, the master
    /// was down).
    pub local: Option<SocketAddr>,
    pub cmd: RedisCmd,
    pub reply: RedisReply,
    /// An error reply (which the model has no word for), or an I/O error.
    pub error: Option<String>,
}

/// A client's connections, one per (session, master), and the journal of
/// what went over them.
pub struct Conns {
    endpoints: Vec<String>,
    conns: HashMap<(SessionId, u8), Conn>,
    pub journal: Vec<Exchange>,
}

/// The command on the wire.
pub fn wire(cmd: RedisCmd) -> Vec<Vec<u8>> {
    let text = |s: &str| s.as_bytes().to_vec();
    let name = |n: models::ids::Name| n.to_string().into_bytes();
    match cmd {
        RedisCmd::Set { key, value, nx, px } => {
            let mut a = vec![text("SET"), name(key), bytes_of(value)];
            if let Some(ms) = px {
                a.extend([text("PX"), ms.to_string().into_bytes()]);
            }
            if nx {
                a.push(text("NX"));
            }
            a
        }
        RedisCmd::SetNx { key, value } => vec![text("SETNX"), name(key), bytes_of(value)],
        RedisCmd::Expire {
            key,
            ms,
            seconds: true,
        } => vec![
            text("EXPIRE"),
            name(key),
            (ms / 1000).to_string().into_bytes(),
        ],
        RedisCmd::Expire { key, ms, .. } => {
            vec![text("PEXPIRE"), name(key), ms.to_string().into_bytes()]
        }
        RedisCmd::Get { key } => vec![text("GET"), name(key)],
        RedisCmd::Del { key } => vec![text("DEL"), name(key)],
        RedisCmd::Incr { key } => vec![text("INCR"), name(key)],
        RedisCmd::DelIfValue { key, value } => vec![
            text("EVAL"),
            text(DEL_SCRIPT),
            text("1"),
            name(key),
            bytes_of(value),
        ],
        RedisCmd::ExpireIfValue { key, value, ms } => vec![
            text("EVAL"),
            text(EXTEND_SCRIPT),
            text("1"),
            name(key),
            bytes_of(value),
            ms.to_string().into_bytes(),
        ],
        RedisCmd::Wait {
            replicas,
            timeout_ms,
        } => vec![
            text("WAIT"),
            replicas.to_string().into_bytes(),
            timeout_ms.to_string().into_bytes(),
        ],
    }
}

/// A command `MONITOR` showed, by lockstep's name for its kind (`EVALSHA`
/// is a script as `EVAL` is); `None` for what no recipe sends.
pub fn kind_of_command(command: &str) -> Option<&'static str> {
    Some(match command {
        "SET" => "set",
        "SETNX" => "setnx",
        "EXPIRE" | "PEXPIRE" => "pexpire",
        "GET" => "get",
        "DEL" => "del",
        "INCR" => "incr",
        "EVAL" | "EVALSHA" => "eval",
        "WAIT" => "wait",
        _ => return None,
    })
}

/// lockstep's name for a command's kind.
pub fn kind(cmd: RedisCmd) -> &'static str {
    Request::Redis { master: 0, cmd }.kind().name()
}

/// A real reply in the model's terms.
fn reply_of(v: Value) -> Result<RedisReply, String> {
    match v {
        Value::Simple(s) if s == "OK" => Ok(RedisReply::Ok),
        Value::Bulk(None) | Value::Array(None) => Ok(RedisReply::Nil),
        Value::Int(n) if n >= 0 => Ok(RedisReply::Int(n as u64)),
        Value::Bulk(Some(b)) => Ok(RedisReply::Value(data_of(&b))),
        other => Err(format!("a reply the model has no word for: {other:?}")),
    }
}

impl Conns {
    pub fn new(endpoints: Vec<String>) -> Conns {
        Conns {
            endpoints,
            conns: HashMap::new(),
            journal: Vec::new(),
        }
    }

    /// Carries out one request: a `Connect` opens the session's
    /// connections (a master that refuses stays unconnected: its commands
    /// are answered `Down` until it accepts one); a command goes to its
    /// master.
    pub async fn call(&mut self, session: SessionId, req: &Request) -> Reply {
        match req {
            Request::Connect => {
                for m in 0..self.endpoints.len() {
                    self.open(session, m as u8).await;
                }
                Reply::Connected
            }
            Request::Redis { master, cmd } => {
                Reply::Redis(self.command(session, *master, *cmd).await)
            }
            other => panic!("not a Redis request: {other}"),
        }
    }

    async fn open(&mut self, session: SessionId, master: u8) -> bool {
        if self.conns.contains_key(&(session, master)) {
            return true;
        }
        let Some(e) = self.endpoints.get(usize::from(master)) else {
            return false;
        };
        match Conn::connect(e).await {
            Ok(c) => {
                self.conns.insert((session, master), c);
                true
            }
            Err(_) => false,
        }
    }

    async fn command(&mut self, session: SessionId, master: u8, cmd: RedisCmd) -> RedisReply {
        let mut ex = Exchange {
            session,
            master,
            local: None,
            cmd,
            reply: RedisReply::Down,
            error: None,
        };
        if self.open(session, master).await {
            let conn = self.conns.get_mut(&(session, master)).expect("opened");
            ex.local = Some(conn.local());
            let args = wire(cmd);
            let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            match conn.call(&args).await {
                Ok(v) => match reply_of(v) {
                    Ok(r) => ex.reply = r,
                    Err(e) => ex.error = Some(e),
                },
                Err(e) => {
                    // A closed master: Down, and a new connection next time.
                    ex.error = Some(format!("connection: {e}"));
                    self.conns.remove(&(session, master));
                }
            }
        }
        let reply = ex.reply;
        self.journal.push(ex);
        reply
    }

    /// Closes the session's connections.
    pub fn close(&mut self, session: SessionId) {
        self.conns.retain(|(s, _), _| *s != session);
    }

    /// Drops every connection to `master` (it restarted): the next
    /// command on each opens a new one.
    pub fn forget_master(&mut self, master: u8) {
        self.conns.retain(|(_, m), _| *m != master);
    }
}

/// `MONITOR` on one server: every command it carries out, in order.
pub struct Monitor {
    endpoint: String,
    lines: Arc<Mutex<Vec<MonitorLine>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Monitor {
    pub async fn start(endpoint: &str) -> io::Result<Monitor> {
        let mut c = Conn::connect(endpoint).await?;
        match c.call(&[b"MONITOR"]).await? {
            Value::Simple(s) if s == "OK" => {}
            other => return Err(io::Error::other(format!("MONITOR: {other:?}"))),
        }
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let task = tokio::spawn(async move {
            while let Ok(Value::Simple(line)) = c.read().await {
                if let Some(l) = MonitorLine::parse(&line) {
                    sink.lock().unwrap().push(l);
                }
            }
        });
        Ok(Monitor {
            endpoint: endpoint.to_string(),
            lines,
            task,
        })
    }

    /// Everything it saw up to now: a marker command (`ECHO`) is sent on
    /// a connection of its own, and the lines before it are returned.
    pub async fn stop(self) -> io::Result<Vec<MonitorLine>> {
        let marker = format!(
            "lockstep-monitor-end-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let mut c = Conn::connect(&self.endpoint).await?;
        c.call(&[b"ECHO", marker.as_bytes()]).await?;
        let started = Instant::now();
        let result = loop {
            {
                let lines = self.lines.lock().unwrap();
                if let Some(end) = lines
                    .iter()
                    .position(|l| l.command() == "ECHO" && l.args.get(1) == Some(&marker))
                {
                    break Ok(lines[..end].to_vec());
                }
            }
            if started.elapsed() > Duration::from_secs(10) {
                break Err(io::Error::other("MONITOR never showed its end marker"));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        self.task.abort();
        result
    }
}

/// What the conformance replay found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Conformance {
    /// Replies compared with the model's.
    pub compared: u64,
    /// Replies that differed, and commands the server showed in another
    /// shape than sent: each said in full.
    pub mismatches: Vec<String>,
    /// Commands the clients sent that `MONITOR` never showed.
    pub unseen: u64,
    /// Commands `MONITOR` showed from the clients' connections that they
    /// did not send.
    pub unexpected: u64,
    /// Commands answered `Down` (no connection): none in a herd.
    pub down: u64,
    /// The clients' commands at the wire, by kind (`MONITOR`).
    pub wire: BTreeMap<String, u64>,
    /// The scripts' own calls at the wire (`[0 lua]` lines), by command.
    pub lua: BTreeMap<String, u64>,
}

impl Conformance {
    pub fn agrees(&self) -> bool {
        self.mismatches.is_empty()
            && self.unseen == 0
            && self.unexpected == 0
            && self.down == 0
            && self.compared > 0
    }
}

/// Replays a real run on the model's store: each master's commands in the
/// order its `MONITOR` showed them (`monitors[m]`), each applied to one
/// model `StoreState` as that session's, each real reply compared with the
/// model's. Masters are independent keyspaces, so one master's order at a
/// time is the whole order that matters.
pub fn conform(
    recipe: &RecipeRef,
    clients: u16,
    journal: &[Exchange],
    monitors: &[Vec<MonitorLine>],
) -> Conformance {
    let store = models::store::Store::for_recipe(recipe, Duration::from_secs(600), clients);
    let mut state = store.initial_state();
    let mut out = Conformance::default();
    for ex in journal {
        if ex.local.is_none() {
            out.down += 1;
        }
    }
    for (m, lines) in monitors.iter().enumerate() {
        let mut queues: HashMap<SocketAddr, VecDeque<&Exchange>> = HashMap::new();
        for ex in journal.iter().filter(|e| usize::from(e.master) == m) {
            if let Some(addr) = ex.local {
                queues.entry(addr).or_default().push_back(ex);
            }
        }
        for line in lines {
            let Some(addr) = line.client else {
                *out.lua.entry(line.command().to_lowercase()).or_insert(0) += 1;
                continue;
            };
            // Another connection's (the validator's own housekeeping).
            let Some(queue) = queues.get_mut(&addr) else {
                continue;
            };
            *out.wire
                .entry(
                    kind_of_command(&line.command())
                        .map_or_else(|| line.command().to_lowercase(), |k| k.to_string()),
                )
                .or_insert(0) += 1;
            let Some(ex) = queue.pop_front() else {
                out.unexpected += 1;
                continue;
            };
            let sent: Vec<String> = wire(ex.cmd)
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            if !line
                .args
                .iter()
                .zip(&sent)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
                || line.args.len() != sent.len()
            {
                out.mismatches.push(format!(
                    "master {m}: sent {:?}, the server shows {:?}",
                    sent, line.args
                ));
            }
            let req = Request::Redis {
                master: m as u8,
                cmd: ex.cmd,
            };
            let model = state.apply(ex.session, &req).0;
            out.compared += 1;
            let real = Reply::Redis(ex.reply);
            if let Some(e) = &ex.error {
                out.mismatches.push(format!(
                    "master {m}: `{}` of {}: the server answered {e}; the model {model}",
                    ex.cmd, ex.session
                ));
            } else if real != model {
                out.mismatches.push(format!(
                    "master {m}: `{}` of {}: the server answered {real}, the model {model}",
                    ex.cmd, ex.session
                ));
            }
        }
        out.unseen += queues.values().map(|q| q.len() as u64).sum::<u64>();
    }
    out
}

/// A herd as the model's simulator ran it.
#[derive(Clone, Debug, Serialize)]
pub struct ModelHerd {
    pub hold_ms: u64,
    pub acquisitions: u64,
    /// Holders that stopped holding (`TraceEvent::Release`): one release
    /// per acquisition, however many masters it is sent to.
    pub releases: u64,
    /// The recipe's sleeps that ran out (`Timer::Wake`): its polls.
    pub polls: u64,
    /// Store requests by kind (the connection's opening left out).
    pub requests: BTreeMap<String, u64>,
    /// The same, master by master (read off the trace's deliveries).
    pub per_master: Vec<BTreeMap<String, u64>>,
    /// Properties violated (none in a herd).
    pub violated: Vec<String>,
}

/// The baseline herd of `clients` clients of `recipe`, as the simulator
/// runs it with holds of `hold_ms`: all request at once, one round, one
/// fixed latency (loopback's order of magnitude). Nothing is resent (no
/// reply is late), but the resend timer must still come before the lock
/// key's TTL (10 s for every Redis recipe), as a scenario requires.
pub fn model_herd(recipe: &RecipeRef, clients: u16, hold_ms: u64) -> ModelHerd {
    let text = format!(
        "clients = {clients}\nrounds = 1\nseed = \"1\"\n\
         [timing]\nsession_timeout_ms = 600000\nthink_ms = [0, 0]\nhold_ms = [{hold_ms}, {hold_ms}]\n\
         latency_ms = [0.1, 0.1]\nretry_ms = 5000\n"
    );
    let scenario = sim::scenario::Scenario::parse_with_recipe(
        &text,
        "redis-herd",
        &format!("redis-herd-{}-{clients}", recipe.id().replace(':', "-")),
        recipe.clone(),
    )
    .expect("the herd scenario is valid");
    let o = sim::engine::simulate(&scenario, 1, true);
    let polls = o
        .trace
        .iter()
        .filter(|l| {
            matches!(
                l.event,
                sim::trace::TraceEvent::Timer {
                    timer: Timer::Wake,
                    ..
                }
            )
        })
        .count() as u64;
    let requests = o
        .metrics
        .store_requests
        .iter()
        .filter(|(k, _)| k.class() != models::msg::RequestClass::Session)
        .map(|(k, n)| (k.name().to_string(), *n))
        .collect();
    let mut violated: Vec<String> = o
        .violations
        .iter()
        .map(|v| v.property.name().to_string())
        .filter(|p| p != "herd_bound")
        .collect();
    violated.dedup();
    let releases = o
        .trace
        .iter()
        .filter(|l| matches!(l.event, sim::trace::TraceEvent::Release { .. }))
        .count() as u64;
    ModelHerd {
        hold_ms,
        acquisitions: o.metrics.acquisitions,
        releases,
        polls,
        requests,
        per_master: requests_per_master(&o.trace, recipe.setup().masters),
        violated,
    }
}

/// A simulated run's Redis requests, by master and kind, read off the
/// trace's deliveries to the store (`SET lock ... @master 2 [session ...]`:
/// no `@master` is master 0; the connection's opening is left out).
pub fn requests_per_master(
    trace: &[sim::trace::TraceLine],
    masters: u8,
) -> Vec<BTreeMap<String, u64>> {
    let mut out = vec![BTreeMap::new(); usize::from(masters.max(1))];
    for l in trace {
        let sim::trace::TraceEvent::Deliver {
            to: sim::trace::Party::Store,
            kind: sim::trace::MsgKind::Request,
            msg,
            ..
        } = &l.event
        else {
            continue;
        };
        let word = msg.split([' ', '(']).next().unwrap_or("");
        let Some(kind) = kind_of_command(word) else {
            continue;
        };
        let master = msg
            .split_once(" @master ")
            .and_then(|(_, rest)| rest.split(' ').next()?.parse::<usize>().ok())
            .unwrap_or(0);
        if let Some(m) = out.get_mut(master) {
            *m.entry(kind.to_string()).or_insert(0) += 1;
        }
    }
    out
}

/// What the model says a herd's requests cost: of each kind, so many per
/// acquisition and so many per poll (a retry after a sleep), read off two
/// simulated herds whose holds, so polls, differ. `None` where the two
/// cannot tell (as many polls in both) or the counts are no whole
/// multiples (a recipe whose requests are not a fixed cost per
/// acquisition and per poll).
#[derive(Clone, Debug, Serialize)]
pub struct Costs {
    pub per_acquisition: BTreeMap<String, f64>,
    pub per_poll: BTreeMap<String, f64>,
    /// The same, master by master.
    pub per_master: Vec<MasterCosts>,
    pub runs: [ModelHerd; 2],
}

/// What each acquisition and each poll costs on one master.
#[derive(Clone, Debug, Serialize)]
pub struct MasterCosts {
    pub per_acquisition: BTreeMap<String, f64>,
    pub per_poll: BTreeMap<String, f64>,
}

type Cost = BTreeMap<String, f64>;

/// Solves `requests = a × acquisitions + b × polls`, kind by kind, from
/// two herds' counts: whole `a` and `b`, or an error naming the kind.
fn solve(
    short: (&BTreeMap<String, u64>, u64, u64),
    long: (&BTreeMap<String, u64>, u64),
) -> Result<(Cost, Cost), String> {
    let (short_requests, acquisitions, p1) = short;
    let (long_requests, p2) = long;
    let mut per_acquisition = BTreeMap::new();
    let mut per_poll = BTreeMap::new();
    let kinds: std::collections::BTreeSet<&String> =
        short_requests.keys().chain(long_requests.keys()).collect();
    for k in kinds {
        let c1 = short_requests.get(k).copied().unwrap_or(0) as f64;
        let c2 = long_requests.get(k).copied().unwrap_or(0) as f64;
        let (p1, p2) = (p1 as f64, p2 as f64);
        let b = if p1 == p2 {
            if c1 != c2 {
                return Err(format!("{k}: {c1} and {c2} requests with {p1} polls each"));
            }
            0.0
        } else {
            (c2 - c1) / (p2 - p1)
        };
        let a = (c1 - b * p1) / acquisitions.max(1) as f64;
        let whole = |x: f64| (x - x.round()).abs() < 1e-9;
        if !whole(a) || !whole(b) {
            return Err(format!(
                "{k}: not a whole cost per acquisition and per poll ({a:.3}, {b:.3})"
            ));
        }
        per_acquisition.insert(k.clone(), a.round());
        per_poll.insert(k.clone(), b.round());
    }
    Ok((per_acquisition, per_poll))
}

/// `a × acquisitions + b × polls`, kind by kind, the zeros left out.
fn predict(
    per_acquisition: &Cost,
    per_poll: &Cost,
    acquisitions: u64,
    polls: u64,
) -> BTreeMap<String, u64> {
    per_acquisition
        .iter()
        .map(|(k, a)| {
            let b = per_poll.get(k).copied().unwrap_or(0.0);
            (
                k.clone(),
                (a * acquisitions as f64 + b * polls as f64).round() as u64,
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

impl Costs {
    pub fn of(recipe: &RecipeRef, clients: u16, hold_ms: u64) -> Result<Costs, String> {
        let short = model_herd(recipe, clients, hold_ms);
        let long = model_herd(recipe, clients, hold_ms * 3);
        let (per_acquisition, per_poll) = solve(
            (&short.requests, short.acquisitions, short.polls),
            (&long.requests, long.polls),
        )?;
        let per_master = short
            .per_master
            .iter()
            .zip(&long.per_master)
            .enumerate()
            .map(|(m, (s, l))| {
                solve((s, short.acquisitions, short.polls), (l, long.polls))
                    .map(|(per_acquisition, per_poll)| MasterCosts {
                        per_acquisition,
                        per_poll,
                    })
                    .map_err(|e| format!("master {m}: {e}"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Costs {
            per_acquisition,
            per_poll,
            per_master,
            runs: [short, long],
        })
    }

    /// The requests the model predicts for `acquisitions` and `polls`.
    pub fn predict(&self, acquisitions: u64, polls: u64) -> BTreeMap<String, u64> {
        predict(&self.per_acquisition, &self.per_poll, acquisitions, polls)
    }

    /// The same, master by master.
    pub fn predict_per_master(&self, acquisitions: u64, polls: u64) -> Vec<BTreeMap<String, u64>> {
        self.per_master
            .iter()
            .map(|m| predict(&m.per_acquisition, &m.per_poll, acquisitions, polls))
            .collect()
    }
}

/// One herd of lockstep's own actors on real Redis, beside the model.
#[derive(Clone, Debug, Serialize)]
pub struct HerdRow {
    pub recipe: String,
    pub clients: u16,
    pub masters: u8,
    pub hold_ms: u64,
    pub acquisitions: u64,
    /// Holders that stopped holding: one per acquisition.
    pub releases: u64,
    /// Requests the recipe sent as its release step: one per master per
    /// release.
    pub release_requests: u64,
    /// The recipe's sleeps that ran out: its polls (retries).
    pub polls: u64,
    /// Requests the clients sent, by kind (their journal).
    pub requests: BTreeMap<String, u64>,
    /// The same, master by master.
    pub per_master: Vec<BTreeMap<String, u64>>,
    /// What the model predicts for as many acquisitions and polls.
    pub predicted: BTreeMap<String, u64>,
    /// The same, master by master.
    pub predicted_per_master: Vec<BTreeMap<String, u64>>,
    /// The model's cost per acquisition and per poll, and its two herds.
    pub costs: Option<Costs>,
    /// Why the model's costs could not be read off its herds.
    pub costs_error: Option<String>,
    /// The model's herd with the same hold: its polls per acquisition
    /// beside the real run's (timing, not compared).
    pub model_polls: u64,
    pub model_acquisitions: u64,
    /// Every reply, against the model store's.
    pub conformance: Conformance,
    /// Keys the servers' clocks expired during the run (none: the TTLs
    /// outlast the herd).
    pub expired_keys: u64,
    /// Properties the monitors found violated, fed by the real run.
    pub violated: Vec<String>,
    pub wall_seconds: f64,
    pub requests_match: bool,
    /// Master by master too.
    pub per_master_match: bool,
    pub agrees: bool,
}

impl HerdRow {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        recipe: &RecipeRef,
        clients: u16,
        hold_ms: u64,
        (acquisitions, releases, release_requests, polls): (u64, u64, u64, u64),
        journal: &[Exchange],
        conformance: Conformance,
        expired_keys: u64,
        violated: Vec<String>,
        wall_seconds: f64,
    ) -> HerdRow {
        let masters = recipe.setup().masters;
        let mut requests: BTreeMap<String, u64> = BTreeMap::new();
        let mut per_master = vec![BTreeMap::new(); usize::from(masters.max(1))];
        for ex in journal {
            *requests.entry(kind(ex.cmd).to_string()).or_insert(0) += 1;
            if let Some(m) = per_master.get_mut(usize::from(ex.master)) {
                *m.entry(kind(ex.cmd).to_string()).or_insert(0) += 1;
            }
        }
        let (costs, costs_error) = match Costs::of(recipe, clients, hold_ms) {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(e)),
        };
        let predicted = costs
            .as_ref()
            .map(|c| c.predict(acquisitions, polls))
            .unwrap_or_default();
        let requests_match = costs.is_some() && predicted == requests;
        let predicted_per_master = costs
            .as_ref()
            .map(|c| c.predict_per_master(acquisitions, polls))
            .unwrap_or_default();
        let per_master_match = costs.is_some() && predicted_per_master == per_master;
        let (model_polls, model_acquisitions) = costs
            .as_ref()
            .map_or((0, 0), |c| (c.runs[0].polls, c.runs[0].acquisitions));
        let model_clean = costs.as_ref().is_some_and(|c| {
            c.runs.iter().all(|r| {
                r.acquisitions == u64::from(clients)
                    && r.releases == u64::from(clients)
                    && r.violated.is_empty()
            })
        });
        let agrees = requests_match
            && per_master_match
            && model_clean
            && acquisitions == u64::from(clients)
            && releases == u64::from(clients)
            && release_requests == u64::from(clients) * u64::from(masters)
            && conformance.agrees()
            && conformance.wire == requests
            && expired_keys == 0
            && violated.is_empty();
        HerdRow {
            recipe: recipe.id(),
            clients,
            masters,
            hold_ms,
            acquisitions,
            releases,
            release_requests,
            polls,
            requests,
            per_master,
            predicted,
            predicted_per_master,
            costs,
            costs_error,
            model_polls,
            model_acquisitions,
            conformance,
            expired_keys,
            violated,
            wall_seconds,
            requests_match,
            per_master_match,
            agrees,
        }
    }

    pub fn print(&self) {
        let word = |ok: bool, yes: &'static str, no: &'static str| if ok { yes } else { no };
        eprintln!(
            "{:<28} {:>3} clients: requests {} the model's costs ({} polls), {} replies {} the model store's ({:.1} s)",
            self.recipe,
            self.clients,
            word(self.requests_match, "match", "DIFFER from"),
            self.polls,
            self.conformance.compared,
            word(self.conformance.agrees(), "all equal", "NOT all equal"),
            self.wall_seconds
        );
    }
}

/// A count and its share per acquisition: `214 (10.70/acq.)`.
fn per_acquisition(n: u64, acquisitions: u64) -> String {
    format!("{n} ({:.2}/acq.)", n as f64 / acquisitions.max(1) as f64)
}

/// Counts as the report prints them: `set 7, eval 2`.
pub fn fmt_counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "—".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cost as the report prints it: `set 1 + 1/poll, eval 1`.
pub fn fmt_costs(c: &Costs) -> String {
    fmt_costs_of(&c.per_acquisition, &c.per_poll)
}

fn fmt_costs_of(per_acquisition: &Cost, per_poll: &Cost) -> String {
    per_acquisition
        .iter()
        .map(|(k, a)| match per_poll.get(k).copied().unwrap_or(0.0) {
            0.0 => format!("{k} {a}"),
            b => format!("{k} {a} + {b}/poll"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Redis recipes whose herds run on real masters: `redlock` too once
/// the registry has it (a note says so where it does not).
fn herd_recipes() -> (Vec<RecipeRef>, Vec<String>) {
    let mut notes = Vec::new();
    let mut recipes: Vec<RecipeRef> = [
        "redis-setnx",
        "redis-setnx:atomic",
        "redis-token",
        "redis-token:incr-token",
    ]
    .iter()
    .map(|id| models::recipes::parse(id).expect("registered"))
    .collect();
    match models::recipes::parse("redlock") {
        Ok(r) => recipes.push(r),
        Err(_) => notes.push(
            "`redlock` is not in this build's recipe registry (`models::recipes::parse(\"redlock\")` fails): its herd on five masters is not run, and pottery's `Redlock` has no model to be compared with".into(),
        ),
    }
    (recipes, notes)
}

/// Sums `expired_keys` over `servers`.
async fn expired_on(servers: &[String]) -> io::Result<u64> {
    let mut n = 0;
    for s in servers {
        n += expired_keys(s).await?;
    }
    Ok(n)
}

/// Runs one herd of lockstep's actors on real masters, watched.
async fn herd(
    args: &crate::Args,
    recipe: &RecipeRef,
    servers: &[String],
    n: u16,
) -> io::Result<HerdRow> {
    let client = models::client::Client {
        recipe: recipe.clone(),
        rounds: 1,
        policy: models::client::Policy::Naive,
        timing: crate::timing(300, args.redis_hold_ms, 3000),
        producers: 0,
        reentries: 0,
        writers: 0,
        observers: 0,
    };
    flush_all(servers).await?;
    let expired_before = expired_on(servers).await?;
    let mut monitors = Vec::new();
    for s in servers {
        monitors.push(Monitor::start(s).await?);
    }
    let run = crate::run_real(
        recipe,
        n,
        args,
        crate::Servers::Single,
        client,
        false,
        60,
        crate::RealStart::Baseline,
    )
    .await;
    let mut lines = Vec::new();
    for m in monitors {
        lines.push(m.stop().await?);
    }
    let expired = expired_on(servers).await? - expired_before;
    let (counts, violated) = {
        let log = run.shared.log.lock().unwrap();
        let mut violated: Vec<String> = log
            .violations
            .iter()
            .map(|(_, b)| b.property.name().to_string())
            .collect();
        violated.sort();
        violated.dedup();
        let released = log
            .lines
            .iter()
            .filter(|l| matches!(l.event, sim::trace::TraceEvent::Release { .. }))
            .count() as u64;
        (
            (
                log.acquisitions.len() as u64,
                released,
                log.releases.len() as u64,
                log.wakes.len() as u64,
            ),
            violated,
        )
    };
    let conformance = conform(recipe, n, &run.journal, &lines);
    Ok(HerdRow::new(
        recipe,
        n,
        args.redis_hold_ms,
        counts,
        &run.journal,
        conformance,
        expired,
        violated,
        run.wall_seconds,
    ))
}

/// Everything the Redis validation found.
#[derive(Serialize)]
pub struct Section {
    pub herds: Vec<HerdRow>,
    /// What was not run, and why.
    pub notes: Vec<String>,
    /// Errors that stopped a part from running.
    pub errors: Vec<String>,
    /// The real libraries' locks at the wire.
    pub libraries: Vec<LibraryRow>,
    /// Kleppmann's pause, real and simulated: unfenced, then fenced.
    pub pauses: Vec<crate::redis_pause::Experiment>,
    /// The master and replica pair (`--redis-replica`): the replica's
    /// `INFO replication` facts once its link is up.
    pub replica: Option<ReplicaStatus>,
    /// The failover race on that pair.
    pub failover: Option<crate::redis_failover::Experiment>,
    /// A Redlock master killed and restarted (`--redis-restart`).
    pub restarts: Vec<crate::redis_restart::Experiment>,
    /// The Redis validation's wall time, model runs included.
    pub wall_seconds: f64,
}

/// A replica as `INFO replication` describes it.
#[derive(Clone, Debug, Serialize)]
pub struct ReplicaStatus {
    pub master: String,
    pub replica: String,
    pub role: String,
    pub master_link_status: String,
    /// Seconds waited for the link to come up.
    pub waited_seconds: f64,
}

/// `INFO replication`'s `field` of a server.
async fn info_replication(endpoint: &str, field: &str) -> io::Result<String> {
    let mut c = Conn::connect(endpoint).await?;
    match c.call(&[b"INFO", b"replication"]).await? {
        Value::Bulk(Some(text)) => Ok(String::from_utf8_lossy(&text)
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
            .unwrap_or_default()),
        other => Err(io::Error::other(format!("INFO: {other:?}"))),
    }
}

/// Waits (up to 10 s) for the replica's link to its master to be up.
async fn replica_status(master: &str, replica: &str) -> io::Result<ReplicaStatus> {
    let started = Instant::now();
    loop {
        let link = info_replication(replica, "master_link_status").await?;
        if link == "up" || started.elapsed() > Duration::from_secs(10) {
            return Ok(ReplicaStatus {
                master: master.to_string(),
                replica: replica.to_string(),
                role: info_replication(replica, "role").await?,
                master_link_status: link,
                waited_seconds: started.elapsed().as_secs_f64(),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Section {
    pub fn agrees(&self) -> bool {
        self.errors.is_empty()
            && !self.herds.is_empty()
            && self.herds.iter().all(|h| h.agrees)
            && self.libraries.iter().all(|l| l.agrees)
            && !self.pauses.is_empty()
            && self
                .pauses
                .iter()
                .all(crate::redis_pause::Experiment::agrees)
            && self
                .restarts
                .iter()
                .all(crate::redis_restart::Experiment::agrees)
            && self
                .failover
                .iter()
                .all(|f| f.shows_the_race() && f.model_agrees())
    }
}

/// The Redis validation: `None` when the run was given no Redis.
pub async fn validate(args: &crate::Args, counts: &[u16]) -> Option<Section> {
    let endpoints = args.redis_endpoints();
    endpoints.single.as_ref()?;
    let started = Instant::now();
    let (recipes, mut notes) = herd_recipes();
    let mut herds = Vec::new();
    let mut errors = Vec::new();
    for recipe in &recipes {
        let masters = recipe.setup().masters;
        let Some(servers) = endpoints.for_masters(masters) else {
            notes.push(format!(
                "`{}` talks to {masters} masters; the run was given fewer (`--redis-masters`): not run",
                recipe.id()
            ));
            continue;
        };
        for &n in counts {
            match herd(args, recipe, &servers, n).await {
                Ok(row) => {
                    row.print();
                    herds.push(row);
                }
                Err(e) => errors.push(format!("{} herd, {n} clients: {e}", recipe.id())),
            }
        }
    }
    let libraries = tokio::task::block_in_place(|| {
        libraries(
            &endpoints,
            counts,
            args.redis_hold_ms,
            &mut notes,
            &mut errors,
        )
    });
    let mut pauses = Vec::new();
    if let Some(single) = endpoints.single.clone() {
        for fenced in [false, true] {
            if let Err(e) = flush_all(std::slice::from_ref(&single)).await {
                errors.push(format!("the pause experiment: {e}"));
                break;
            }
            let s = single.clone();
            let e = tokio::task::spawn_blocking(move || crate::redis_pause::experiment(&s, fenced))
                .await
                .expect("the experiment's thread finishes");
            eprintln!(
                "{:<28} {}",
                format!(
                    "redis-py pause, {}",
                    if fenced { "fenced" } else { "unfenced" }
                ),
                match &e.error {
                    Some(err) => format!("did not run: {err}"),
                    None if e.agrees() => "real and model agree".into(),
                    None => "real and model DIFFER".into(),
                }
            );
            pauses.push(e);
        }
    }
    let replica = match &endpoints.replica {
        Some((m, r)) => match replica_status(m, r).await {
            Ok(s) => Some(s),
            Err(e) => {
                errors.push(format!("the replica {r}: {e}"));
                None
            }
        },
        None => None,
    };
    let failover = match (&endpoints.replica, &replica) {
        (Some((m, r)), Some(status)) if status.master_link_status == "up" => {
            let e = crate::redis_failover::experiment(m, r).await;
            eprintln!(
                "{:<28} {}",
                "redis failover",
                match &e.error {
                    Some(err) => format!("did not run: {err}"),
                    None if e.shows_the_race() && e.model_agrees() => {
                        "two holders with the link frozen, one with WAIT 1; the twins agree".into()
                    }
                    None if e.shows_the_race() => {
                        "two holders with the link frozen, one with WAIT 1; the twins do NOT agree"
                            .into()
                    }
                    None => "the race did NOT show as expected".into(),
                }
            );
            Some(e)
        }
        _ => None,
    };
    // Last: it stops a master and leaves it stopped.
    let restarts = match (args.redis_restart, endpoints.for_masters(5)) {
        (true, Some(masters)) => crate::redis_restart::experiments(&masters).await,
        (true, None) => {
            notes.push(
                "the Redlock restart was not run: it needs five masters (`--redis-masters`)".into(),
            );
            Vec::new()
        }
        (false, _) => {
            notes.push("the Redlock restart was not run: the validator was not allowed to stop a master (`--redis-restart`)".into());
            Vec::new()
        }
    };
    Some(Section {
        herds,
        notes,
        errors,
        libraries,
        pauses,
        replica,
        failover,
        restarts,
        wall_seconds: {
            let s = started.elapsed().as_secs_f64();
            eprintln!("{:<28} {s:.1} s in all", "Redis");
            s
        },
    })
}

impl Section {
    /// The report's Redis section.
    pub fn markdown(&self) -> String {
        let mut md = String::from("\n## Redis\n\n### lockstep's own actors on real Redis 7.0\n\nThe baseline herd (N clients request at once, hold, release; one round, no faults) of each Redis recipe, the very client and recipe actors the checker runs, their commands carried out on real masters (one connection per client and master, RESP spoken by `validate/src/resp.rs`), each master watched by `MONITOR`. Polling makes the number of tries depend on timing, so requests are compared through the model's own costs: two simulated herds of the same recipe and size (holds of H and 3H) give what each acquisition and each poll (a retry after the recipe's sleep) costs, by kind; the prediction for the real run's acquisitions and polls must equal its requests exactly. The conformance replay applies the real commands, in the order each master's `MONITOR` showed them, to the model's store (`StoreState::apply`) and compares every real reply with the model's. Keys expired by the servers' clocks during a herd: must be none (the TTLs outlast it).\n\n| recipe | clients | hold (ms) | acquisitions / releases (release requests) | polls (real) | polls (model, same hold) | requests (real) | model's costs | predicted | replies equal the model store's | at the wire (MONITOR) | match |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for h in &self.herds {
            md.push_str(&format!(
                "| {} | {} | {} | {} / {} ({}) | {} | {} | {} | {} | {} | {}/{}{} | {} | {} |\n",
                h.recipe,
                h.clients,
                h.hold_ms,
                h.acquisitions,
                h.releases,
                h.release_requests,
                per_acquisition(h.polls, h.acquisitions),
                per_acquisition(h.model_polls, h.model_acquisitions),
                fmt_counts(&h.requests),
                h.costs.as_ref().map_or_else(
                    || format!("— ({})", h.costs_error.clone().unwrap_or_default()),
                    fmt_costs
                ),
                fmt_counts(&h.predicted),
                h.conformance.compared - h.conformance.mismatches.len() as u64,
                h.conformance.compared,
                if h.conformance.unseen + h.conformance.unexpected > 0 {
                    format!(
                        " ({} unseen, {} unexpected)",
                        h.conformance.unseen, h.conformance.unexpected
                    )
                } else {
                    String::new()
                },
                fmt_counts(&h.conformance.wire),
                if h.agrees { "yes" } else { "NO" },
            ));
        }
        let mismatches: Vec<&String> = self
            .herds
            .iter()
            .flat_map(|h| &h.conformance.mismatches)
            .collect();
        if !mismatches.is_empty() {
            md.push_str("\nReplies that differ from the model store's:\n");
            for m in mismatches.iter().take(20) {
                md.push_str(&format!("- {m}\n"));
            }
        }
        md.push_str("\n- Polls are timing, not compared: the model's herd starts every waiter at one instant and holds and sleeps exactly 100 ms, so its waiters poll in lock-step and each release just misses their polls (a whole period per hand-off); real waiters' polls drift apart, and a release meets the next poll sooner.\n");
        let mut lua: BTreeMap<String, u64> = BTreeMap::new();
        for h in &self.herds {
            for (k, v) in &h.conformance.lua {
                *lua.entry(k.clone()).or_insert(0) += v;
            }
        }
        md.push_str(&format!(
            "\n- The scripts' own calls, as `MONITOR` shows them (`[0 lua]` lines, not requests), over all herds: {}.\n",
            fmt_counts(&lua)
        ));
        for n in self.notes.iter().chain(&self.errors) {
            md.push_str(&format!("- {n}\n"));
        }
        md.push_str(&library_table(&self.libraries));
        md.push_str(&per_master_table(&self.herds, &self.libraries));
        md.push_str(&crate::redis_pause::section(&self.pauses));
        if let Some(r) = &self.replica {
            md.push_str(&format!(
                "- The master and replica pair ({} replicated by {}): the replica's role `{}`, its link `{}` (after {:.1} s).\n",
                r.master, r.replica, r.role, r.master_link_status, r.waited_seconds
            ));
        }
        if let Some(f) = &self.failover {
            md.push_str(&crate::redis_failover::section(f));
        }
        md.push_str(&crate::redis_restart::section(&self.restarts));
        md.push_str(&format!(
            "\n- The Redis validation took {:.1} s (wall time, the model's runs included).\n",
            self.wall_seconds
        ));
        md
    }
}

/// A real library's lock in the herd, counted at the wire, beside the
/// model of it.
#[derive(Clone, Debug, Serialize)]
pub struct LibraryRow {
    pub library: String,
    /// The recipe that models it; `None` where the registry has none yet.
    pub model: Option<String>,
    pub clients: u16,
    pub masters: u8,
    pub hold_ms: u64,
    pub acquisitions: u64,
    /// The library's own tries (`do_acquire`, `_acquire_masters` calls).
    pub attempts: u64,
    /// Tries past the first of each acquisition: its polls.
    pub polls: u64,
    pub release_errors: Vec<String>,
    /// Every command at the wire, by name, over all masters.
    pub wire: BTreeMap<String, u64>,
    pub per_master: Vec<BTreeMap<String, u64>>,
    /// The scripts' own calls (`[0 lua]`), by name.
    pub lua: BTreeMap<String, u64>,
    pub lua_per_master: Vec<BTreeMap<String, u64>>,
    /// The wire in the model's kinds: `EVALSHA` (and `EVAL`) is `eval`,
    /// less one for each `SCRIPT LOAD` (each follows an `EVALSHA` the
    /// server answered NOSCRIPT, and the same `EVALSHA` goes again).
    pub requests: BTreeMap<String, u64>,
    /// The same, master by master.
    pub requests_per_master: Vec<BTreeMap<String, u64>>,
    /// `SCRIPT LOAD`s: the script cache was empty (flushed before the
    /// herd, as on a fresh server).
    pub noscript_reloads: u64,
    /// Connection set-up the recipes do not have (`PING`).
    pub setup: BTreeMap<String, u64>,
    /// On every master, one `SET` per try, and one script per try: every
    /// try, won or lost, went to every master and was released on every
    /// master.
    pub every_try_on_every_master: bool,
    pub costs: Option<Costs>,
    pub costs_error: Option<String>,
    pub predicted: BTreeMap<String, u64>,
    /// The model's per-master costs applied likewise.
    pub predicted_per_master: Vec<BTreeMap<String, u64>>,
    /// `None`: no model to compare with.
    pub requests_match: Option<bool>,
    /// Master by master.
    pub per_master_match: Option<bool>,
    pub wall_seconds: f64,
    pub agrees: bool,
}

fn counts_of(v: &serde_json::Value) -> BTreeMap<String, u64> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}

impl LibraryRow {
    fn new(
        v: &serde_json::Value,
        model: Option<&RecipeRef>,
        clients: u16,
        hold_ms: u64,
    ) -> LibraryRow {
        let acquisitions = v["acquisitions"].as_u64().unwrap_or(0);
        let attempts = v["attempts"].as_u64().unwrap_or(0);
        let polls = attempts.saturating_sub(acquisitions);
        let wire = counts_of(&v["commands"]);
        let list = |key: &str| -> Vec<BTreeMap<String, u64>> {
            v[key]
                .as_array()
                .map(|a| a.iter().map(counts_of).collect())
                .unwrap_or_default()
        };
        let per_master = list("per_master");
        // The wire in the model's kinds, per master.
        let as_requests = |wire: &BTreeMap<String, u64>| {
            let mut requests: BTreeMap<String, u64> = BTreeMap::new();
            let mut setup: BTreeMap<String, u64> = BTreeMap::new();
            let reloads = wire.get("SCRIPT LOAD").copied().unwrap_or(0);
            for (name, n) in wire {
                match (name.as_str(), kind_of_command(name)) {
                    ("SCRIPT LOAD", _) => {}
                    (_, Some(k)) => *requests.entry(k.to_string()).or_insert(0) += n,
                    ("PING", None) => *setup.entry(name.clone()).or_insert(0) += n,
                    (_, None) => *requests.entry(name.to_lowercase()).or_insert(0) += n,
                }
            }
            if let Some(e) = requests.get_mut("eval") {
                *e = e.saturating_sub(reloads);
            }
            (requests, setup, reloads)
        };
        let (requests, setup, noscript_reloads) = as_requests(&wire);
        let requests_per_master: Vec<BTreeMap<String, u64>> =
            per_master.iter().map(|m| as_requests(m).0).collect();
        let masters = per_master.len().max(1) as u8;
        let every_try_on_every_master = !per_master.is_empty()
            && per_master.iter().all(|m| {
                let (r, _, _) = as_requests(m);
                r.get("set") == Some(&attempts)
                    && r.get("eval").copied().unwrap_or(0)
                        == if masters == 1 { acquisitions } else { attempts }
            });
        let (costs, costs_error) = match model.map(|r| Costs::of(r, clients, hold_ms)) {
            Some(Ok(c)) => (Some(c), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        let predicted = costs
            .as_ref()
            .map(|c| c.predict(acquisitions, polls))
            .unwrap_or_default();
        let requests_match = model.map(|_| costs.is_some() && predicted == requests);
        let predicted_per_master = costs
            .as_ref()
            .map(|c| c.predict_per_master(acquisitions, polls))
            .unwrap_or_default();
        let per_master_match =
            model.map(|_| costs.is_some() && predicted_per_master == requests_per_master);
        let release_errors: Vec<String> = v["release_errors"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let agrees = acquisitions == u64::from(clients)
            && release_errors.is_empty()
            && every_try_on_every_master
            && requests_match != Some(false)
            && per_master_match != Some(false);
        LibraryRow {
            library: v["library"].as_str().unwrap_or("?").to_string(),
            model: model.map(RecipeRef::id),
            clients,
            masters,
            hold_ms,
            acquisitions,
            attempts,
            polls,
            release_errors,
            wire,
            per_master,
            lua: counts_of(&v["lua"]),
            lua_per_master: list("lua_per_master"),
            requests,
            requests_per_master,
            noscript_reloads,
            setup,
            every_try_on_every_master,
            costs,
            costs_error,
            predicted,
            predicted_per_master,
            requests_match,
            per_master_match,
            wall_seconds: v["wall_seconds"].as_f64().unwrap_or(0.0),
            agrees,
        }
    }

    pub fn print(&self) {
        eprintln!(
            "{:<28} {:>3} clients: {} tries on {} master(s), requests {} ({:.1} s)",
            self.library,
            self.clients,
            self.attempts,
            self.masters,
            match self.requests_match {
                Some(true) => "match the model's costs".to_string(),
                Some(false) => "DIFFER from the model's costs".to_string(),
                None => "not compared (no model)".to_string(),
            },
            self.wall_seconds
        );
    }
}

/// Runs `redis_locks.py` for `library` on `servers`.
fn library_herd(
    library: &str,
    servers: &[String],
    n: u16,
    hold_ms: u64,
) -> Result<serde_json::Value, String> {
    crate::run_harness(
        "python3",
        &[
            concat!(env!("CARGO_MANIFEST_DIR"), "/redis_locks.py"),
            library,
            &servers.join(","),
            &n.to_string(),
            &hold_ms.to_string(),
        ],
        "redis_locks.py",
    )
}

/// redis-py's `Lock` on the single master against `redis-token`, and
/// pottery's `Redlock` on the independent masters against `redlock` (when
/// the registry has it).
fn libraries(
    endpoints: &Endpoints,
    counts: &[u16],
    hold_ms: u64,
    notes: &mut Vec<String>,
    errors: &mut Vec<String>,
) -> Vec<LibraryRow> {
    let mut rows = Vec::new();
    let redis_token = models::recipes::parse("redis-token").expect("registered");
    let redlock = models::recipes::parse("redlock").ok();
    let pottery_servers = match &redlock {
        Some(r) => endpoints.for_masters(r.setup().masters),
        None => (endpoints.masters.len() >= 2).then(|| endpoints.masters.clone()),
    };
    if pottery_servers.is_none() {
        notes.push("pottery's `Redlock` was not run: the run was given no independent masters (`--redis-masters`)".into());
    }
    let runs = [
        ("redis-py", endpoints.for_masters(1), Some(redis_token)),
        ("pottery", pottery_servers, redlock),
    ];
    for (library, servers, model) in runs {
        let Some(servers) = servers else { continue };
        for &n in counts {
            match library_herd(library, &servers, n, hold_ms) {
                Ok(v) => {
                    let row = LibraryRow::new(&v, model.as_ref(), n, hold_ms);
                    row.print();
                    rows.push(row);
                }
                Err(e) => errors.push(format!("{library}, {n} clients: {e}")),
            }
        }
    }
    rows
}

/// The report's table of the real libraries' herds.
fn library_table(rows: &[LibraryRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n### The real libraries' locks, at the wire\n\nredis-py 5.3.1's own `Lock(timeout=10, sleep=0.1)` on one master against `redis-token`, and pottery 3.0.1's own `Redlock(key=..., masters=..., auto_release_time=10)` on the independent masters against `redlock` (`validate/redis_locks.py`): the baseline herd, N threads each with its own clients (own connections) take the lock at once, hold it, release it, each once. Every master is emptied of keys and scripts first and watched by `MONITOR` on a connection of its own; the libraries' own tries are counted by wrapping the method that makes one (`Lock.do_acquire`, `Redlock._acquire_masters`). In the model's kinds, `EVALSHA` is `eval`, less one per `SCRIPT LOAD` (the library's answer to NOSCRIPT, after which the same `EVALSHA` goes again); `PING` opens each connection before the herd and is counted apart. The model's costs (per acquisition and per poll, read off two simulated herds as above) applied to the library's own polls (tries past the first) give the prediction.\n\n| library | model | clients | masters | acquisitions | tries | at the wire, all masters | the scripts' own calls | in the model's kinds | model's costs | predicted | every try on every master | match |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.library,
            r.model
                .as_deref()
                .map_or("— (none yet)".to_string(), |m| format!("`{m}`")),
            r.clients,
            r.masters,
            r.acquisitions,
            r.attempts,
            fmt_counts(&r.wire),
            fmt_counts(&r.lua),
            fmt_counts(&r.requests),
            match (&r.costs, &r.costs_error) {
                (Some(c), _) => fmt_costs(c),
                (None, Some(e)) => format!("— ({e})"),
                (None, None) => "—".into(),
            },
            fmt_counts(&r.predicted),
            if r.every_try_on_every_master {
                "yes"
            } else {
                "NO"
            },
            match (r.requests_match, r.agrees) {
                (_, false) => "NO",
                (Some(true), true) => "yes",
                (None, true) => "not compared",
                (Some(false), true) => unreachable!("a mismatch does not agree"),
            },
        ));
    }
    md.push_str("\n- redis-py: one `SET lock <uuid1 hex> PX 10000 NX` per try, sleeping 0.1 s between tries (no jitter, no pub/sub); the release is the compare-and-delete script sent as `EVALSHA`, the first one on a fresh server answered NOSCRIPT and followed by `SCRIPT LOAD` and the `EVALSHA` again. Each release's script reads the key and deletes it (`[0 lua]` `get`, `del`).\n");
    if rows.iter().any(|r| r.masters > 1) {
        md.push_str("- pottery: each try sends `SET redlock:lock <uuid4> PX 10000 NX` to **every master concurrently** (a thread pool) and **returns as soon as a majority has answered OK** (`as_completed`, `BailOutExecutor`: the other calls keep running in background threads, so every master still receives every try); a try that gets no majority releases on every master (the same script as `EVALSHA`), then sleeps `uniform(0, 0.2)` s. So per master: one `SET` and one script per try, won or lost (the column \"every try on every master\"), and its release likewise stops waiting at a majority. It is compared with the model's `redlock` on the requests each master receives (the next table), not on which answers the library waited for.\n");
        for r in rows.iter().filter(|r| r.masters > 1) {
            let dels: Vec<String> = r
                .lua_per_master
                .iter()
                .map(|m| m.get("DEL").copied().unwrap_or(0).to_string())
                .collect();
            md.push_str(&format!(
                "- pottery, {} clients: the release script deleted a key {} times on the {} masters in turn ({} acquisitions, each holding a majority of them): a master's deletes are the holds taken there, the winners' and the failed tries' partial holds (split votes).\n",
                r.clients,
                dels.join(", "),
                r.masters,
                r.acquisitions
            ));
        }
    }
    md
}

/// The report's table of Redlock master by master: lockstep's own
/// `redlock` actors and pottery's `Redlock`, each against the model's
/// per-master costs.
fn per_master_table(herds: &[HerdRow], libraries: &[LibraryRow]) -> String {
    let mut rows = Vec::new();
    for h in herds.iter().filter(|h| h.masters > 1) {
        rows.push((
            format!("lockstep `{}`", h.recipe),
            h.clients,
            h.acquisitions,
            h.polls,
            &h.per_master,
            h.costs.as_ref(),
            &h.predicted_per_master,
        ));
    }
    for l in libraries.iter().filter(|l| l.masters > 1) {
        rows.push((
            format!(
                "{} (model `{}`)",
                l.library,
                l.model.as_deref().unwrap_or("none")
            ),
            l.clients,
            l.acquisitions,
            l.polls,
            &l.requests_per_master,
            l.costs.as_ref(),
            &l.predicted_per_master,
        ));
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n### Redlock, master by master\n\nlockstep's own `redlock` actors (the herd above) and pottery's `Redlock` (the libraries' herd above), each master's requests against the model's `redlock`: the model's costs on each master (per acquisition and per poll, read off its two simulated herds as above, the trace's deliveries counted by master) applied to the run's acquisitions and polls (pottery's: its tries past the first). pottery's requests are those `MONITOR` showed on that master, in the model's kinds (`EVALSHA` less `SCRIPT LOAD` is `eval`). Per master, in master order, `set`/`eval`.\n\n| who | clients | acquisitions | polls | requests per master (real) | per acquisition per master (real) | model's costs on each master | predicted per master | match |\n|---|---|---|---|---|---|---|---|---|\n");
    let pair = |m: &BTreeMap<String, u64>| {
        let n = |k: &str| m.get(k).copied().unwrap_or(0);
        format!("{}/{}", n("set"), n("eval"))
    };
    let join = |v: Vec<String>| v.join(", ");
    for (who, clients, acquisitions, polls, real, costs, predicted) in rows {
        let per_acq = |m: &BTreeMap<String, u64>| {
            let n = |k: &str| m.get(k).copied().unwrap_or(0) as f64 / acquisitions.max(1) as f64;
            format!("{:.2}/{:.2}", n("set"), n("eval"))
        };
        let model_costs: Vec<String> = costs.map_or(Vec::new(), |c| {
            c.per_master
                .iter()
                .map(|m| fmt_costs_of(&m.per_acquisition, &m.per_poll))
                .collect()
        });
        let model_costs = match model_costs.first() {
            None => "—".to_string(),
            Some(first) if model_costs.iter().all(|c| c == first) => {
                format!("{first} (each of {})", model_costs.len())
            }
            Some(_) => model_costs.join("; "),
        };
        md.push_str(&format!(
            "| {who} | {clients} | {acquisitions} | {polls} | {} | {} | {model_costs} | {} | {} |\n",
            join(real.iter().map(pair).collect()),
            join(real.iter().map(per_acq).collect()),
            if predicted.is_empty() {
                "—".to_string()
            } else {
                join(predicted.iter().map(pair).collect())
            },
            if predicted == real { "yes" } else { "NO" },
        ));
    }
    md.push_str("\n- Compared: on each master, how many `SET NX PX` and how many release scripts (compare-and-delete) arrived, for the acquisitions and polls the run made: both send one `SET` per master per try, won or lost, release a failed try on every master, and release a held lock on every master.\n- Not compared: the order and overlap of the requests (the model asks the masters one at a time, 0 to 4, and waits for each answer; pottery sends to all five at once from a thread pool and stops waiting at a majority, its other calls landing anyway), the number of polls (timing: the model retries after a fixed 200 ms, pottery after `uniform(0, 0.2)` s), the replies pottery got (its commands are counted, not replayed against the model's store; lockstep's own actors' are, above), the keys, tokens and TTL arithmetic (`redlock:lock` and a uuid4 against `lock` and the session; pottery's validity check against the model's TTL less 1% + 2 ms), and the scripts' own `GET`/`DEL` inside Redis.\n");
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::recipes::redis::{del_if_mine, set_nx_px};

    /// A journal of two clients and the MONITOR lines of it, in `order`.
    fn run(order: &[usize], replies: [RedisReply; 3]) -> (Vec<Exchange>, Vec<Vec<MonitorLine>>) {
        let (a, b) = (SessionId::first(0), SessionId::first(1));
        let addr = |p: u16| -> SocketAddr { format!("127.0.0.1:{p}").parse().unwrap() };
        let sent = [
            (a, addr(1000), set_nx_px(a, 10_000)),
            (b, addr(1001), set_nx_px(b, 10_000)),
            (a, addr(1000), del_if_mine(a)),
        ];
        let journal: Vec<Exchange> = sent
            .iter()
            .zip(replies)
            .map(|(&(session, local, cmd), reply)| Exchange {
                session,
                master: 0,
                local: Some(local),
                cmd,
                reply,
                error: None,
            })
            .collect();
        let lines = order
            .iter()
            .map(|&i| MonitorLine {
                time: i as f64,
                client: journal[i].local,
                args: wire(journal[i].cmd)
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect(),
            })
            .collect();
        (journal, vec![lines])
    }

    #[test]
    fn the_replay_compares_every_reply_in_the_servers_order() {
        let recipe = models::recipes::parse("redis-token").unwrap();
        let replies = [RedisReply::Ok, RedisReply::Nil, RedisReply::Int(1)];
        let (journal, lines) = run(&[0, 1, 2], replies);
        let c = conform(&recipe, 2, &journal, &lines);
        assert!(c.agrees(), "{c:?}");
        assert_eq!(c.compared, 3);
        assert_eq!(c.wire.get("set"), Some(&2));
        // A reply the model would not give.
        let (journal, lines) = run(
            &[0, 1, 2],
            [RedisReply::Ok, RedisReply::Ok, RedisReply::Int(1)],
        );
        assert_eq!(conform(&recipe, 2, &journal, &lines).mismatches.len(), 1);
        // The same replies in another server order: b's SET came first.
        let (journal, lines) = run(&[1, 0, 2], replies);
        assert!(!conform(&recipe, 2, &journal, &lines).agrees());
        // A command the server never showed.
        let (journal, lines) = run(&[0, 1], replies);
        assert_eq!(conform(&recipe, 2, &journal, &lines).unseen, 1);
    }

    #[test]
    fn the_models_redlock_costs_are_the_same_on_every_master() {
        let redlock = models::recipes::parse("redlock").unwrap();
        let herd = model_herd(&redlock, 3, 100);
        assert_eq!(herd.per_master.len(), 5);
        assert_eq!((herd.acquisitions, herd.releases), (3, 3));
        // The masters' requests add up to the herd's.
        let mut sum: BTreeMap<String, u64> = BTreeMap::new();
        for m in &herd.per_master {
            for (k, n) in m {
                *sum.entry(k.clone()).or_insert(0) += n;
            }
        }
        assert_eq!(sum, herd.requests);
        let costs = Costs::of(&redlock, 3, 100).unwrap();
        for m in &costs.per_master {
            assert_eq!(
                fmt_costs_of(&m.per_acquisition, &m.per_poll),
                "eval 1 + 1/poll, set 1 + 1/poll"
            );
        }
        assert_eq!(fmt_costs(&costs), "eval 5 + 5/poll, set 5 + 5/poll");
        // One master: all of it on master 0.
        let token = models::recipes::parse("redis-token").unwrap();
        let herd = model_herd(&token, 3, 100);
        assert_eq!(herd.per_master, vec![herd.requests.clone()]);
    }

    #[test]
    fn endpoints_take_ports_or_addresses() {
        let e = Endpoints::parse(Some("6379"), Some("1,2, 3"), Some("7000:7001"));
        assert_eq!(e.for_masters(1).unwrap(), ["127.0.0.1:6379"]);
        assert_eq!(e.for_masters(3).unwrap().len(), 3);
        assert!(e.for_masters(5).is_none());
        assert_eq!(
            e.replica,
            Some(("127.0.0.1:7000".into(), "127.0.0.1:7001".into()))
        );
        assert_eq!(endpoint("localhost:1"), "localhost:1");
    }
}
