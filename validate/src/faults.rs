//! Real client libraries cut off past their session timeout, beside the
//! model's run of the same scenario.
//!
//! kazoo's `Lock` (`kazoo_pause.py`) and Curator's `InterProcessMutex`
//! (`CuratorPause.java`), each client through a ZooKeeper proxy of its own
//! ([`crate::zkproxy`]), session timeout 4 s:
//!
//! 1. A takes the lock and reports, every 100 ms, what its lock object
//!    believes, and every connection state its library reports.
//! 2. A is cut off: its process is stopped (SIGSTOP, a pause), or its proxy
//!    frozen (a partition: nothing passes either way, sockets stay open).
//! 3. B takes the lock once the server has expired A's session and deleted
//!    its node.
//! 4. The fault ends after at least [`FAULT_S`] seconds and once B holds:
//!    A resumes (SIGCONT) or its proxy thaws. A's library reconnects, is
//!    told its session expired and opens a new one; A keeps reporting.
//!
//! The model's twin is `scenarios/kazoo-oblivious-pause.toml` with the
//! library's variant, the fault and the policy set in code: `oblivious` is
//! what the lock objects themselves do (they never drop their belief),
//! `suspend-aware` what both libraries advise an application to do (give the
//! lock up at SUSPENDED); the real run's second lane is that application,
//! read off the same run (A's lock object's belief, cut at the first
//! SUSPENDED or LOST its library reported).
//!
//! Pass or fail is decided on order facts, with wide margins, never on exact
//! times: did B take the lock while A was cut off; did A believe it held
//! when B took it (both at once); did A still believe a second after the
//! fault ended.

use crate::etcdctl::collect;
use crate::zkproxy::{now_s, Proxy, Wire, WireEvent};
use models::client::{Connection, Policy};
use reports::timeline::{intersect, timeline, Lane, Timeline};
use serde::Serialize;
use sim::scenario::{FaultKind, Scenario};
use sim::trace::{MsgKind, Party, TraceEvent, TraceLine};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Session timeout of every client, seconds.
const TIMEOUT_S: &str = "4";
/// The shortest cut, seconds: past the session timeout with room to spare.
pub const FAULT_S: f64 = 6.0;
/// "A still believed after the fault ended" means this long after, seconds.
pub(crate) const AFTER_S: f64 = 1.0;
/// How long past [`AFTER_S`] after the fault A is watched, seconds, in the
/// real run and (where it is cut to match) the model's alike.
pub(crate) const WATCHED_AFTER_S: f64 = 0.8;

/// The model's twin, as the validator derives the others from it.
const TWIN: &str = include_str!("../../scenarios/kazoo-oblivious-pause.toml");
const TWIN_FILE: &str = "scenarios/kazoo-oblivious-pause.toml";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Library {
    Kazoo,
    Curator,
}

impl Library {
    pub fn name(self) -> &'static str {
        match self {
            Library::Kazoo => "kazoo",
            Library::Curator => "curator",
        }
    }

    /// What the report calls it.
    pub fn title(self) -> &'static str {
        match self {
            Library::Kazoo => "kazoo 2.11's `Lock`",
            Library::Curator => "Curator 5.4's `InterProcessMutex`",
        }
    }

    /// The model's variant of fair-predecessor.
    pub fn variant(self) -> &'static str {
        self.name()
    }

    pub(crate) fn program(self) -> &'static str {
        match self {
            Library::Kazoo => "validate/kazoo_pause.py",
            Library::Curator => "validate/CuratorPause.java",
        }
    }

    /// The state its library reports once it has a new session after LOST.
    pub(crate) fn reconnected(self) -> &'static str {
        match self {
            Library::Kazoo => "CONNECTED",
            Library::Curator => "RECONNECTED",
        }
    }

    /// Starts its program in `role` on `endpoint` (a connect string);
    /// `ordered`, its ZooKeeper handles take the string's servers in order
    /// (Curator's program only).
    fn spawn(
        self,
        endpoint: &str,
        role: &str,
        timeout_s: &str,
        path: &str,
        ordered: bool,
    ) -> Result<Child, String> {
        if ordered && self == Library::Kazoo {
            return Err("kazoo_pause.py takes its servers as kazoo shuffles them".into());
        }
        let mut c = match self {
            Library::Kazoo => {
                let mut c = Command::new("python3");
                c.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/kazoo_pause.py"));
                c
            }
            Library::Curator => {
                let mut c = Command::new("java");
                c.args([
                    "-cp",
                    &crate::curator_classpath(),
                    concat!(env!("CARGO_MANIFEST_DIR"), "/CuratorPause.java"),
                ]);
                c
            }
        };
        c.args([endpoint, role, timeout_s, path])
            .args(ordered.then_some("ordered"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.program()))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// SIGSTOP of A's process.
    Pause,
    /// A's proxy frozen.
    Partition,
    /// A's server, a follower of a real ensemble, cut off from the leader
    /// (`crate::isolation`).
    Isolation(crate::isolation::Setting),
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Fault::Pause => "pause",
            Fault::Partition => "partition",
            Fault::Isolation(_) => "isolation",
        }
    }

    fn kind(self) -> FaultKind {
        match self {
            Fault::Pause => FaultKind::Pause,
            Fault::Partition => FaultKind::Partition,
            Fault::Isolation(_) => FaultKind::Isolate,
        }
    }

    fn end_name(self) -> &'static str {
        match self {
            Fault::Pause => "resume",
            Fault::Partition | Fault::Isolation(_) => "heal",
        }
    }
}

/// Who believed what, when: one run, real or simulated, in seconds since
/// A took the lock.
#[derive(Clone, Debug, Serialize)]
pub struct Story {
    /// A's belief: from, until.
    pub a_believed: (f64, f64),
    /// A still believed when the run (or its observation) ended.
    pub a_believed_to_the_end: bool,
    /// B's hold: from, until (until the end if it had not released).
    pub b_held: Option<(f64, f64)>,
    /// The fault: from, until.
    pub fault: (f64, f64),
    /// When A was first told its session had expired.
    pub a_told_expired: Option<f64>,
    /// When the store expired A's session. Real runs: when B was notified
    /// of A's node's deletion, which the expiry caused.
    pub a_expired: Option<f64>,
    /// A's connection states from when it took the lock on, as its library
    /// reports them (`SUSPENDED`, `LOST`, `RECONNECTED`; kazoo's `CONNECTED`
    /// after LOST is its reconnection and reads `RECONNECTED` here).
    pub a_states: Vec<(f64, String)>,
}

/// The facts a real run and the model's are compared on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// B took the lock while A was cut off.
    pub b_took_it_during_the_fault: bool,
    /// A believed it held when B took the lock: both believed at once.
    pub both_at_once: bool,
    /// A still believed [`AFTER_S`] after the fault ended.
    pub a_believed_after_the_fault: bool,
    /// A's library reported SUSPENDED before B took the lock.
    pub a_suspended_before_b_took_it: bool,
    /// A's connection states in order, up to the first LOST.
    pub a_states_to_lost: Vec<String>,
}

impl Story {
    pub fn facts(&self) -> Facts {
        let b_from = self.b_held.map(|b| b.0);
        Facts {
            b_took_it_during_the_fault: b_from.is_some_and(|b| b < self.fault.1),
            both_at_once: match self.b_held {
                Some(b) => self.a_believed.0 < b.1 && b.0 < self.a_believed.1,
                None => false,
            },
            a_believed_after_the_fault: self.a_believed.1 >= self.fault.1 + AFTER_S,
            a_suspended_before_b_took_it: match (self.first("SUSPENDED"), b_from) {
                (Some(s), Some(b)) => s < b,
                _ => false,
            },
            a_states_to_lost: {
                let mut states: Vec<String> = Vec::new();
                for (_, w) in &self.a_states {
                    states.push(w.clone());
                    if w == "LOST" {
                        break;
                    }
                }
                states.dedup();
                states
            },
        }
    }

    /// When A's library first reported `state`.
    fn first(&self, state: &str) -> Option<f64> {
        self.a_states.iter().find(|s| s.1 == state).map(|s| s.0)
    }

    /// The run's events in time order: "A holds < pause < B holds < …",
    /// the fault's start and end named `fault` and `end`.
    pub fn order(&self, fault: &str, end: &str) -> String {
        // Pushed in causal order, which the stable sort keeps for ties.
        let mut ev: Vec<(f64, &str)> = vec![
            (self.a_believed.0, "A holds"),
            (self.fault.0, fault),
            (self.fault.1, end),
        ];
        if let Some(b) = self.b_held {
            ev.push((b.0, "B holds"));
        }
        if let Some(t) = self.first("SUSPENDED") {
            ev.push((t, "A SUSPENDED"));
        }
        if let Some(t) = self.a_told_expired {
            ev.push((t, "A told expired"));
        }
        if !self.a_believed_to_the_end {
            ev.push((self.a_believed.1, "A gives up"));
        }
        ev.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut out = String::new();
        for (i, (t, what)) in ev.iter().enumerate() {
            if i > 0 {
                // At the same instant (to the millisecond): "=".
                out.push_str(if t - ev[i - 1].0 < 0.001 {
                    " = "
                } else {
                    " < "
                });
            }
            out.push_str(what);
        }
        out
    }
}

/// One real run.
#[derive(Clone, Debug, Serialize)]
pub struct RealRun {
    /// A's lock object's own belief (what the library says).
    pub lock_object: Story,
    /// An application that gives the lock up at the first SUSPENDED or
    /// LOST (the libraries' advice), read off the same run.
    pub gives_up_at_suspended: Story,
    /// Connection states A's library reported, seconds since A took the
    /// lock.
    pub a_states: Vec<(f64, String)>,
    /// What A's proxy saw A's reconnections told: (when, session asked for,
    /// negotiated timeout — 0: expired).
    pub a_reconnects: Vec<(f64, i64, i32)>,
    /// Connections A's library opened while it was cut off (a stopped
    /// process opens none; a partitioned one keeps trying).
    pub a_connections_while_cut_off: usize,
    /// When B was notified that A's node was deleted (B's proxy).
    pub b_notified: Option<f64>,
    /// A's last report, and when.
    pub a_last_report: (f64, String),
}

/// One simulated run.
#[derive(Clone, Debug, Serialize)]
pub struct ModelRun {
    pub policy: String,
    /// The scenario as simulated: the twin file with what was set in code.
    pub scenario: String,
    pub story: Story,
    pub violated: Vec<String>,
}

/// One experiment: a real run beside the model's, per policy.
#[derive(Clone, Debug, Serialize)]
pub struct Experiment {
    pub library: Library,
    pub fault: Fault,
    pub real: Option<RealRun>,
    /// `oblivious` (the lock object), `suspend-aware` (the advice).
    pub model: Vec<ModelRun>,
    pub error: Option<String>,
}

impl Experiment {
    /// The file name stem of its pictures.
    pub fn stem(&self) -> String {
        match self.fault {
            Fault::Isolation(setting) => {
                format!("{}-{}", self.library.name(), setting.scenario())
            }
            Fault::Pause | Fault::Partition => {
                format!("{}-{}", self.library.name(), self.fault.name())
            }
        }
    }

    /// The real story beside the model's run under the policy that matches
    /// it: the lock object with `oblivious`, the advice with `suspend-aware`.
    pub fn pairs(&self) -> Vec<(&'static str, &Story, &ModelRun)> {
        let Some(real) = &self.real else {
            return Vec::new();
        };
        self.model
            .iter()
            .map(|m| {
                if m.policy == Policy::Oblivious.to_string() {
                    ("lock object", &real.lock_object, m)
                } else {
                    ("gives up at SUSPENDED", &real.gives_up_at_suspended, m)
                }
            })
            .collect()
    }

    /// Every real story agrees with its model twin on every fact.
    pub fn agrees(&self) -> bool {
        self.error.is_none()
            && !self.pairs().is_empty()
            && self
                .pairs()
                .iter()
                .all(|(_, r, m)| r.facts() == m.story.facts())
    }
}

/// Runs one experiment: the real libraries against `zk`, and the model.
pub fn experiment(zk: &str, library: Library, fault: Fault) -> Experiment {
    let mut model = Vec::new();
    let mut error = None;
    for policy in [Policy::Oblivious, Policy::SuspendAware] {
        match model_run(library, fault, policy) {
            Ok(m) => model.push(m),
            Err(e) => error = Some(format!("the model's run: {e}")),
        }
    }
    let real = match real_run(zk, library, fault, FAULT_S) {
        Ok(r) => Some(r),
        Err(e) => {
            error = Some(e);
            None
        }
    };
    Experiment {
        library,
        fault,
        real,
        model,
        error,
    }
}

/// A child with what it prints; killed when dropped.
pub(crate) struct Harness {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Harness {
    pub(crate) fn start(
        library: Library,
        endpoint: &str,
        role: &str,
        timeout_s: &str,
        path: &str,
        ordered: bool,
    ) -> Result<Harness, String> {
        let mut child = library.spawn(endpoint, role, timeout_s, path, ordered)?;
        let stdout = collect(child.stdout.take());
        let stderr = collect(child.stderr.take());
        Ok(Harness {
            child,
            stdout,
            stderr,
        })
    }

    /// Its lines: (wall time, what).
    pub(crate) fn lines(&self) -> Vec<(f64, String)> {
        parse_lines(&self.stdout.lock().unwrap())
    }

    /// Waits until `done` holds of its lines or it exits, at most `limit`.
    pub(crate) fn wait(
        &mut self,
        limit: Duration,
        done: impl Fn(&[(f64, String)]) -> bool,
    ) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if done(&self.lines()) {
                return true;
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                // Let the reader threads catch up with its last lines.
                std::thread::sleep(Duration::from_millis(100));
                return done(&self.lines());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// The last lines of what it printed on stderr, for error messages.
    pub(crate) fn stderr_tail(&self) -> String {
        let err = self.stderr.lock().unwrap();
        let lines: Vec<&str> = err.lines().collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    }

    pub(crate) fn signal(&self, sig: &str) -> Result<(), String> {
        signal(self.child.id(), sig)
    }

    /// Writes `line` to its stdin (role `again` releases on one).
    pub(crate) fn tell(&mut self, line: &str) -> Result<(), String> {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().ok_or("its stdin is gone")?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("cannot write to its stdin: {e}"))
    }
}

/// How an experiment went, in words for stderr.
pub(crate) fn verdict(error: Option<&str>, agrees: bool) -> String {
    match error {
        Some(err) => format!("did not run: {err}"),
        None if agrees => "real and model agree".into(),
        None => "real and model DIFFER".into(),
    }
}

/// Polls until `done`, at most `limit`; whether it came.
pub(crate) fn until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Sends `sig` (`-STOP`, `-CONT`) to process `pid`.
pub(crate) fn signal(pid: u32, sig: &str) -> Result<(), String> {
    let status = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .map_err(|e| format!("kill {sig}: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("kill {sig} {pid} failed"))
}

/// ZooKeeper clients, one a server, for blocking code that polls what the
/// servers list: each session opened once, on the runtime the validator
/// runs on (whose other threads keep them alive; dropped, each closes its
/// session there).
pub(crate) struct Readers {
    handle: tokio::runtime::Handle,
    clients: Vec<zookeeper_client::Client>,
}

impl Readers {
    /// Sessions on `servers`, from within the validator's runtime (a
    /// blocking section of it).
    pub(crate) fn open(servers: &[&str]) -> Result<Readers, String> {
        let handle = tokio::runtime::Handle::current();
        let clients = servers
            .iter()
            .map(|s| {
                handle.block_on(async {
                    zookeeper_client::Client::connect(s)
                        .await
                        .map_err(|e| format!("ZooKeeper at {s}: {e}"))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Readers { handle, clients })
    }

    /// The number of children of `path` on server `i` (of those given),
    /// 0 if it has none or no such node.
    pub(crate) fn children(&self, i: usize, path: &str) -> usize {
        self.handle
            .block_on(self.clients[i].list_children(path))
            .map_or(0, |c| c.len())
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // SIGKILL ends a stopped process too.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_lines(text: &str) -> Vec<(f64, String)> {
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(t, rest)| Some((t.parse().ok()?, rest.trim().to_string())))
        .collect()
}

pub(crate) fn has(lines: &[(f64, String)], what: &str) -> bool {
    lines.iter().any(|l| l.1 == what)
}

fn real_run(zk: &str, library: Library, fault: Fault, cut_s: f64) -> Result<RealRun, String> {
    let who = format!("{} {}", library.name(), fault.name());
    // A lock of its own: a killed holder's node outlives it by its session.
    let path = format!("/lockstep-fault-{}-{}", library.name(), fault.name());
    clear(zk, &path)?;
    let proxy_a = Proxy::start(zk)?;
    let proxy_b = Proxy::start(zk)?;
    let mut a = Harness::start(
        library,
        &proxy_a.endpoint(),
        "hold",
        TIMEOUT_S,
        &path,
        false,
    )?;
    if !a.wait(Duration::from_secs(40), |l| has(l, "ACQUIRED")) {
        return Err(format!(
            "{who}: A never took the lock ({}): {}",
            library.program(),
            a.stderr_tail()
        ));
    }
    let fault_from = now_s();
    match fault {
        Fault::Pause => a.signal("-STOP")?,
        Fault::Partition => proxy_a.freeze(),
        Fault::Isolation(_) => return Err(format!("{who}: an isolation runs on the ensemble")),
    }
    let mut b = Harness::start(
        library,
        &proxy_b.endpoint(),
        "take",
        TIMEOUT_S,
        &path,
        false,
    )?;
    let taken = b.wait(Duration::from_secs(40), |l| has(l, "ACQUIRED"));
    // The cut lasts `cut_s` at least, and until B holds.
    let until = (fault_from + cut_s).max(now_s() + 0.2);
    std::thread::sleep(Duration::from_secs_f64((until - now_s()).max(0.0)));
    match fault {
        Fault::Pause => a.signal("-CONT")?,
        Fault::Partition => proxy_a.thaw(),
        Fault::Isolation(_) => {}
    }
    let fault_until = now_s();
    if !taken {
        return Err(format!(
            "{who}: B never took the lock while A was cut off: {}",
            b.stderr_tail()
        ));
    }
    // A's library reconnects, hears LOST and opens a new session.
    let reconnected = library.reconnected();
    let back = a.wait(Duration::from_secs(20), |l| {
        l.iter()
            .skip_while(|x| x.1 != "STATE LOST")
            .any(|x| x.1 == format!("STATE {reconnected}"))
    });
    // Then A goes on reporting for a while.
    std::thread::sleep(Duration::from_secs_f64(AFTER_S + WATCHED_AFTER_S));
    b.wait(Duration::from_secs(10), |l| has(l, "RELEASED"));
    let recorded = Recorded::of(who, path, a, b, vec![proxy_a.events()], proxy_b.events())
        .cut(fault_from, fault_until);
    let run = recorded.stories()?;
    if !back {
        return Err(format!(
            "{}: A's library never reported LOST and then {reconnected} (it reported {:?}): {}",
            recorded.who,
            run.a_states
                .iter()
                .map(|s| s.1.as_str())
                .collect::<Vec<_>>(),
            recorded.a_err
        ));
    }
    Ok(run)
}

/// What a real run's programs and proxies recorded: A's and B's lines,
/// what their proxies saw, when the fault struck and ended (wall time).
pub(crate) struct Recorded {
    pub who: String,
    /// The lock's path.
    pub path: String,
    pub a_lines: Vec<(f64, String)>,
    pub b_lines: Vec<(f64, String)>,
    /// What A's proxies saw, each in time order (one a server).
    pub a_wire: Vec<Vec<WireEvent>>,
    pub b_wire: Vec<WireEvent>,
    pub a_err: String,
    pub fault_from: f64,
    pub fault_until: f64,
}

impl Recorded {
    /// What A and B printed and their proxies saw; the programs are
    /// stopped (dropped). The cut is set by [`Recorded::cut`].
    pub(crate) fn of(
        who: String,
        path: String,
        a: Harness,
        b: Harness,
        a_wire: Vec<Vec<WireEvent>>,
        b_wire: Vec<WireEvent>,
    ) -> Recorded {
        Recorded {
            who,
            path,
            a_lines: a.lines(),
            b_lines: b.lines(),
            a_wire,
            b_wire,
            a_err: a.stderr_tail(),
            fault_from: 0.0,
            fault_until: 0.0,
        }
    }

    /// With the fault from `from` until `until` (wall time).
    pub(crate) fn cut(self, from: f64, until: f64) -> Recorded {
        Recorded {
            fault_from: from,
            fault_until: until,
            ..self
        }
    }

    /// The run's stories: A's lock object's, and an application's that
    /// gives the lock up at A's first SUSPENDED or LOST, read off it.
    pub(crate) fn stories(&self) -> Result<RealRun, String> {
        let Recorded {
            who,
            path,
            a_lines,
            b_lines,
            a_wire,
            b_wire,
            a_err,
            fault_from,
            fault_until,
        } = self;
        let (fault_from, fault_until) = (*fault_from, *fault_until);
        let t0 = a_lines
            .iter()
            .find(|l| l.1 == "ACQUIRED")
            .map(|l| l.0)
            .ok_or("A's ACQUIRED line went missing")?;
        let since = |t: f64| t - t0;
        // The lock object's belief: from ACQUIRED to its first `false`, or on
        // to its last report.
        let reports: Vec<(f64, bool)> = a_lines
            .iter()
            .filter_map(|(t, w)| {
                let v = w.strip_prefix("BELIEF ")?;
                Some((*t, v.eq_ignore_ascii_case("true")))
            })
            .collect();
        let last = a_lines
            .iter()
            .rfind(|l| l.1.starts_with("BELIEF "))
            .cloned()
            .ok_or_else(|| format!("{who}: A never reported its belief: {a_err}"))?;
        if last.0 < fault_until + AFTER_S {
            return Err(format!(
                "{who}: A stopped reporting {:.2} s after the fault ended: {a_err}",
                last.0 - fault_until
            ));
        }
        let first_false = reports.iter().find(|r| !r.1).map(|r| r.0);
        let a_believed = (0.0, since(first_false.unwrap_or(last.0)));
        let states: Vec<(f64, String)> = a_lines
            .iter()
            .filter_map(|(t, w)| Some((since(*t), w.strip_prefix("STATE ")?.to_string())))
            .collect();
        let b_from = b_lines.iter().find(|l| l.1 == "ACQUIRED").map(|l| l.0);
        let b_until = b_lines.iter().find(|l| l.1 == "RELEASED").map(|l| l.0);
        let b_held = b_from.map(|f| (since(f), since(b_until.unwrap_or(last.0))));
        let a_reconnects = reconnects(a_wire, t0);
        let a_told_expired = a_reconnects.iter().find(|r| r.2 == 0).map(|r| r.0);
        let b_notified = b_wire.iter().find_map(|e| match &e.what {
            Wire::Notification { event, path: p }
                if event == "NodeDeleted" && p.starts_with(path.as_str()) =>
            {
                Some(since(e.at))
            }
            _ => None,
        });
        // From when A held on; kazoo's reconnection (CONNECTED after LOST)
        // under Curator's name.
        let a_states = states
            .iter()
            .filter(|s| s.0 >= 0.0)
            .map(|(t, w)| {
                let w = if w == "CONNECTED" { "RECONNECTED" } else { w };
                (*t, w.to_string())
            })
            .collect();
        let lock_object = Story {
            a_believed,
            a_believed_to_the_end: first_false.is_none(),
            b_held,
            fault: (since(fault_from), since(fault_until)),
            a_told_expired,
            a_expired: b_notified,
            a_states,
        };
        // The advice: give the lock up at the first SUSPENDED or LOST.
        let gave_up = states
            .iter()
            .find(|s| s.0 >= 0.0 && (s.1 == "SUSPENDED" || s.1 == "LOST"))
            .map(|s| s.0);
        let gives_up_at_suspended = match gave_up {
            Some(g) if g < lock_object.a_believed.1 => Story {
                a_believed: (0.0, g),
                a_believed_to_the_end: false,
                ..lock_object.clone()
            },
            _ => lock_object.clone(),
        };
        let a_connections_while_cut_off = a_wire
            .iter()
            .flatten()
            .filter(|e| e.what == Wire::Accepted && e.at >= fault_from && e.at <= fault_until)
            .count();
        Ok(RealRun {
            lock_object,
            gives_up_at_suspended,
            a_states: states,
            a_reconnects,
            a_connections_while_cut_off,
            b_notified,
            a_last_report: (since(last.0), last.1),
        })
    }
}

/// A's connections answered after it took the lock at `t0` (its first
/// came before), as its proxies saw them (one a server): (when, the
/// session asked for, the negotiated timeout), in time order.
fn reconnects(wires: &[Vec<WireEvent>], t0: f64) -> Vec<(f64, i64, i32)> {
    let mut out = Vec::new();
    for wire in wires {
        let mut asked = std::collections::HashMap::new();
        for e in wire {
            match e.what {
                Wire::ConnectRequest { session } => {
                    asked.insert(e.conn, session);
                }
                Wire::ConnectResponse { timeout_ms, .. } if e.at >= t0 => {
                    out.push((
                        e.at - t0,
                        asked.get(&e.conn).copied().unwrap_or(0),
                        timeout_ms,
                    ));
                }
                _ => {}
            }
        }
    }
    out.sort_by(|x, y| x.0.total_cmp(&y.0));
    out
}

/// Runs `work` with a client of ZooKeeper at `zk`, from blocking code
/// within the validator's runtime (its session closes there after).
pub(crate) fn with_zk<T, F>(
    zk: &str,
    work: impl FnOnce(zookeeper_client::Client) -> F,
) -> Result<T, String>
where
    F: std::future::Future<Output = T>,
{
    tokio::runtime::Handle::current().block_on(async {
        let c = zookeeper_client::Client::connect(zk)
            .await
            .map_err(|e| format!("ZooKeeper at {zk}: {e}"))?;
        Ok(work(c).await)
    })
}

/// Deletes `path` and its children, if they are there.
pub(crate) fn clear(zk: &str, path: &str) -> Result<(), String> {
    with_zk(zk, |c| async move {
        if let Ok(children) = c.list_children(path).await {
            for ch in children {
                let _ = c.delete(&format!("{path}/{ch}"), None).await;
            }
        }
        let _ = c.delete(path, None).await;
    })
}

/// The twin scenario with the library's variant, the fault and the policy.
fn twin(library: Library, fault: Fault, policy: Policy, client: u32) -> Result<Scenario, String> {
    let base =
        Scenario::parse(TWIN, TWIN_FILE, "kazoo-oblivious-pause").map_err(|e| e.to_string())?;
    let mut raw = base.source.clone();
    raw.variant = Some(library.variant().to_string());
    raw.policy = Some(policy.to_string());
    raw.expect = None;
    let schedule = raw.schedule.get_or_insert_with(Vec::new);
    if schedule.len() != 1 {
        return Err(format!(
            "{TWIN_FILE} must schedule exactly one fault (it has {})",
            schedule.len()
        ));
    }
    schedule[0].kind = fault.kind();
    schedule[0].client = client;
    let name = format!("{}-{}-{policy}", library.name(), fault.name());
    Scenario::resolve(raw, TWIN_FILE, &name).map_err(|e| e.to_string())
}

fn model_run(library: Library, fault: Fault, policy: Policy) -> Result<ModelRun, String> {
    // The fault is for the client that holds when it strikes: the file's,
    // or the other if under this variant the other took the lock first.
    let mut tried = Vec::new();
    for client in [0u32, 1] {
        let scenario = twin(library, fault, policy, client)?;
        let (at, duration) = {
            let s = &scenario.source.schedule.as_ref().expect("set")[0];
            (s.at_ms * 1000, s.duration_ms.unwrap_or(0) * 1000)
        };
        let run = crate::twin::run(&scenario);
        match story_of(&run.outcome.trace, client as u16, at, at + duration, None) {
            Ok(story) => {
                let violated = run.violated;
                let src = scenario.source.schedule.as_ref().expect("set")[0].clone();
                return Ok(ModelRun {
                    policy: policy.to_string(),
                    scenario: format!(
                        "{TWIN_FILE} with variant = \"{}\", policy = \"{policy}\", the scheduled fault a {src}",
                        library.variant(),
                    ),
                    story,
                    violated,
                });
            }
            Err(e) => tried.push(e),
        }
    }
    Err(tried.join("; "))
}

/// The story of a simulated run where client `a` is cut off from `from_us`
/// to `until_us` (the fault's own events say when exactly), as seen until
/// `seen_us` (`None`: the run's end).
pub(crate) fn story_of(
    trace: &[TraceLine],
    a: u16,
    from_us: u64,
    until_us: u64,
    seen_us: Option<u64>,
) -> Result<Story, String> {
    let trace = match seen_us {
        Some(seen) => &trace[..trace.partition_point(|l| l.t <= seen)],
        None => trace,
    };
    let end = seen_us.unwrap_or_else(|| trace.last().map_or(0, |l| l.t));
    let a_from = trace
        .iter()
        .find_map(|l| match l.event {
            TraceEvent::Hold { client, .. } if client == a => Some(l.t),
            _ => None,
        })
        .ok_or(format!("client {a} never held"))?;
    if a_from > from_us {
        return Err(format!("client {a} did not hold when the fault struck"));
    }
    let after = |t0: u64, pick: &dyn Fn(&TraceEvent) -> bool| {
        trace
            .iter()
            .find(|l| l.t >= t0 && pick(&l.event))
            .map(|l| l.t)
    };
    let a_until = after(
        a_from,
        &|e| matches!(e, TraceEvent::Release { client } if *client == a),
    );
    let fault_from = after(
        0,
        &|e| matches!(e, TraceEvent::Fault { client, .. } if *client == a),
    )
    .unwrap_or(from_us);
    let fault_until = after(fault_from, &|e| {
        matches!(e, TraceEvent::Resume { client } | TraceEvent::Heal { client } if *client == a)
    })
    .unwrap_or(until_us);
    let b_from = after(
        0,
        &|e| matches!(e, TraceEvent::Hold { client, .. } if *client != a),
    );
    let b_until = b_from.and_then(|f| {
        after(
            f,
            &|e| matches!(e, TraceEvent::Release { client } if *client != a),
        )
    });
    let told = after(
        0,
        &|e| matches!(e, TraceEvent::Deliver { to: Party::Client(c), kind: MsgKind::Expired, .. } if *c == a),
    );
    let expired = after(
        0,
        &|e| matches!(e, TraceEvent::Expire { client, .. } if *client == a),
    );
    let s = |t: u64| (t as f64 - a_from as f64) / 1e6;
    let a_states: Vec<(f64, String)> = trace
        .iter()
        .filter(|l| l.t >= a_from)
        .filter_map(|l| match l.event {
            TraceEvent::Connection { client, state } if client == a => Some((
                s(l.t),
                match state {
                    Connection::Connected => "RECONNECTED",
                    Connection::Suspended => "SUSPENDED",
                    Connection::Lost => "LOST",
                }
                .to_string(),
            )),
            _ => None,
        })
        .collect();
    // Told: the store's expiry notice, or else the LOST it brought.
    let told = told
        .map(s)
        .or_else(|| a_states.iter().find(|x| x.1 == "LOST").map(|x| x.0));
    Ok(Story {
        a_believed: (0.0, s(a_until.unwrap_or(end))),
        a_believed_to_the_end: a_until.is_none(),
        b_held: b_from.map(|f| (s(f), s(b_until.unwrap_or(end)))),
        fault: (s(fault_from), s(fault_until)),
        a_told_expired: told,
        a_expired: expired.map(s),
        a_states,
    })
}

pub(crate) fn us(s: f64) -> u64 {
    (s.max(0.0) * 1e6) as u64
}

/// A timeline of A's lanes (each a story of the same run: the same B, the
/// same fault) and B's. The fault is shaded on A's lanes; the first lane
/// carries when A was told its session expired, the last the expiry and
/// A's connection states.
pub(crate) fn draw(title: String, x_label: &str, fault: &str, a: &[(&str, &Story)]) -> Timeline {
    let first = a[0].1;
    let b_holds: Vec<(u64, u64)> = first
        .b_held
        .map(|b| (us(b.0), us(b.1)))
        .into_iter()
        .collect();
    let end = a
        .iter()
        .flat_map(|(_, s)| [s.a_believed.1, s.fault.1])
        .chain(first.b_held.map(|b| b.1))
        .fold(0.0, f64::max)
        + 0.5;
    let mut lanes: Vec<Lane> = a
        .iter()
        .enumerate()
        .map(|(i, (name, s))| {
            let holds = vec![(us(s.a_believed.0), us(s.a_believed.1))];
            let last = i + 1 == a.len();
            Lane {
                name: name.to_string(),
                overlaps: intersect(&holds, &b_holds),
                holds,
                spans: vec![(us(s.fault.0), us(s.fault.1), fault.to_string())],
                faults: s
                    .a_told_expired
                    .filter(|_| i == 0)
                    .map(|t| (us(t), "told: expired".to_string()))
                    .into_iter()
                    .collect(),
                expiries: s.a_expired.filter(|_| last).map(us).into_iter().collect(),
                states: if last {
                    s.a_states
                        .iter()
                        .map(|(t, w)| (us(*t), w.clone()))
                        .collect()
                } else {
                    Vec::new()
                },
                ..Lane::default()
            }
        })
        .collect();
    let a_holds = lanes[0].holds.clone();
    lanes.push(Lane {
        name: "B".into(),
        overlaps: intersect(&b_holds, &a_holds),
        holds: b_holds,
        ..Lane::default()
    });
    Timeline {
        title,
        x_label: x_label.to_string(),
        end_us: us(end),
        lanes,
        ..Timeline::default()
    }
}

/// The real run's timeline: A's lock object, the application that gives up
/// at SUSPENDED, and B.
pub fn real_timeline(e: &Experiment, r: &RealRun) -> Timeline {
    let s = &r.lock_object;
    draw(
        {
            let library = match e.library {
                Library::Kazoo => "kazoo 2.11 Lock",
                Library::Curator => "Curator 5.4 InterProcessMutex",
            };
            let cut = s.fault.1 - s.fault.0;
            match e.fault {
                Fault::Pause => format!(
                    "Real {library}: A stopped (SIGSTOP) {cut:.1} s past its 4 s session, B takes the lock"
                ),
                Fault::Partition => format!(
                    "Real {library}: A partitioned (proxy frozen) {cut:.1} s past its 4 s session, B takes the lock"
                ),
                Fault::Isolation(setting) => format!(
                    "Real {library}: A's follower cut off from the leader for {cut:.1} s ({})",
                    setting.scenario()
                ),
            }
        },
        "wall time since A took the lock (s)",
        e.fault.name(),
        &[
            ("A: lock object", s),
            ("A: gives up at SUSPENDED", &r.gives_up_at_suspended),
        ],
    )
}

impl Experiment {
    /// Says on stderr how it went, and draws its pictures into `out`.
    pub fn report(&self, out: &std::path::Path) {
        eprintln!(
            "{:<28} {}",
            self.stem(),
            verdict(self.error.as_deref(), self.agrees())
        );
        if let Some(real) = &self.real {
            timeline(
                &real_timeline(self, real),
                &out.join(format!("{}-real", self.stem())),
            )
            .expect("draw");
        }
        for m in &self.model {
            let picture = out.join(model_picture(self, m));
            timeline(&model_timeline(self, m), &picture.with_extension("")).expect("draw");
        }
    }
}

/// The model's timeline, drawn like the real one.
pub fn model_timeline(e: &Experiment, m: &ModelRun) -> Timeline {
    draw(
        match e.fault {
            Fault::Pause | Fault::Partition => format!(
                "lockstep: fair-predecessor:{}, policy {}, a {} of A (simulated)",
                e.library.variant(),
                m.policy,
                e.fault.name()
            ),
            Fault::Isolation(setting) => format!(
                "lockstep: fair-predecessor:{}, policy {}, {} (simulated)",
                e.library.variant(),
                m.policy,
                setting.scenario()
            ),
        },
        "virtual time since A took the lock (s)",
        e.fault.name(),
        &[("A", &m.story)],
    )
}

pub(crate) fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

pub(crate) fn span(s: &Story, real: bool) -> String {
    format!(
        "{:.2}–{:.2}{}",
        s.a_believed.0,
        s.a_believed.1,
        match (s.a_believed_to_the_end, real) {
            (true, true) => " (still believing when stopped)",
            (true, false) => " (to the end of the run)",
            (false, _) => "",
        }
    )
}

/// A story's row of the report's table, the fault's start and end named
/// `fault`.
pub(crate) fn row(what: &str, s: &Story, real: bool, fault: (&str, &str)) -> String {
    let f = s.facts();
    format!(
        "| {what} | {} | {} | {:.2}–{:.2} | {} | {} | {} | {} | {} | {} |\n",
        span(s, real),
        s.b_held
            .map_or("never".to_string(), |b| format!("{:.2}–{:.2}", b.0, b.1)),
        s.fault.0,
        s.fault.1,
        yes(f.b_took_it_during_the_fault),
        yes(f.both_at_once),
        yes(f.a_believed_after_the_fault),
        yes(f.a_suspended_before_b_took_it),
        f.a_states_to_lost.join(" < "),
        s.order(fault.0, fault.1),
    )
}

/// "yes in both", "no in both", or what each says.
pub(crate) fn both(real: bool, model: bool) -> String {
    if real == model {
        format!("{} in both", yes(real))
    } else {
        format!("**{} for real, {} in the model**", yes(real), yes(model))
    }
}

/// The report's section on the fault experiments.
pub fn section(experiments: &[Experiment]) -> String {
    let mut md = format!(
        "\n## Real holders cut off past their sessions, beside the model\n\n\
kazoo 2.11's own `Lock` (`validate/kazoo_pause.py`) and Curator 5.4's own `InterProcessMutex` (`validate/CuratorPause.java`), session timeout 4 s, each client through a ZooKeeper proxy of its own. A takes the lock and reports every 100 ms what its lock object believes (`is_acquired`, `isAcquiredInThisProcess()`) and every connection state its library reports (kazoo's listener: SUSPENDED, LOST, CONNECTED; Curator's `ConnectionStateListener`: SUSPENDED, LOST, RECONNECTED); the programs only report, they do not act on a state. A is then cut off — a **pause**: its process stopped (SIGSTOP); a **partition**: its proxy frozen, nothing passing either way, every socket left open, its reconnections held too — for at least {FAULT_S:.0} s and until B, started meanwhile, has taken the lock (after the server expired A's session and deleted its node). Then A resumes (SIGCONT) or the proxy thaws; A's library reconnects, is told its session expired, opens a new one, and A goes on reporting.\n\n\
The model's twins: `{TWIN_FILE}` (2 clients, session 4 s, a 6 s fault of the holder at 150 ms, holds of 10 s) with the library's variant, the fault's kind and the policy set in code. Policy `oblivious` is what the lock objects do (they never drop their belief); `suspend-aware` is the libraries' advice to an application (give the lock up at SUSPENDED), the real run's second row: A's lock object's belief cut at the first SUSPENDED or LOST its library reported, read off the same run. Times are seconds since A took the lock; the real runs' A is stopped by the validator, still running, while the model's A ends its hold after 10 s: neither end is compared. In the order column, `=` joins what happened at the same instant (to the millisecond). Compared, with margins: B took the lock while A was cut off; A believed it held when B took it (both at once); A still believed {AFTER_S:.0} s after the fault ended; A's library reported SUSPENDED before B took the lock; A's connection states in order up to the first LOST (the model's traced states beside the library's reports). Not compared: what comes after LOST — both libraries then report the new session (kazoo `CONNECTED`, Curator `RECONNECTED`; drawn as RECONNECTED), which the model traces no state for.\n"
    );
    for e in experiments {
        md.push_str(&experiment_body(e));
    }
    md
}

/// One experiment's part of the report: its table, its facts compared,
/// what the real run and the model's runs did, and their pictures.
pub(crate) fn experiment_body(e: &Experiment) -> String {
    let mut md = format!(
        "\n### {}, {}\n\n",
        e.library.title(),
        match e.fault {
            Fault::Pause => "pause (SIGSTOP)".to_string(),
            Fault::Partition => "partition (the proxy frozen)".to_string(),
            Fault::Isolation(setting) => format!("`{}`", setting.scenario()),
        }
    );
    if let Some(err) = &e.error {
        md.push_str(&format!("**The experiment did not run:** {err}\n"));
    }
    if let Some(real) = &e.real {
        md.push_str("| run | A believed it held | B held | the fault | B took it while A was cut off | both believed at once | A still believed after the fault | A SUSPENDED before B took it | A's connection states, to LOST | order |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (what, r, m) in e.pairs() {
            let real_what = if what == "lock object" {
                format!(
                    "real: A's lock object ({})",
                    match e.library {
                        Library::Kazoo => "`is_acquired`",
                        Library::Curator => "`isAcquiredInThisProcess()`",
                    }
                )
            } else {
                "real: A gives up at SUSPENDED".to_string()
            };
            let names = (e.fault.name(), e.fault.end_name());
            md.push_str(&row(&real_what, r, true, names));
            md.push_str(&row(
                &format!("model: policy `{}`", m.policy),
                &m.story,
                false,
                names,
            ));
        }
        md.push('\n');
        for (what, r, m) in e.pairs() {
            let (rf, mf) = (r.facts(), m.story.facts());
            md.push_str(&format!(
                "- {what} vs `{}`: B took the lock while A was cut off: {}; A believed it held when B took it: {}; A still believed after the fault ended: {}; A's library said SUSPENDED before B took the lock: {}; A's connection states to LOST: {}. {}\n",
                m.policy,
                both(rf.b_took_it_during_the_fault, mf.b_took_it_during_the_fault),
                both(rf.both_at_once, mf.both_at_once),
                both(rf.a_believed_after_the_fault, mf.a_believed_after_the_fault),
                both(rf.a_suspended_before_b_took_it, mf.a_suspended_before_b_took_it),
                if rf.a_states_to_lost == mf.a_states_to_lost {
                    format!("{} in both", rf.a_states_to_lost.join(" < "))
                } else {
                    format!(
                        "**{} for real, {} in the model**",
                        rf.a_states_to_lost.join(" < "),
                        mf.a_states_to_lost.join(" < ")
                    )
                },
                if rf == mf { "**Agree.**" } else { "**DIFFER.**" },
            ));
        }
        let states: Vec<String> = real
            .a_states
            .iter()
            .map(|(t, s)| format!("{s} {t:.2}"))
            .collect();
        let reconnects: Vec<String> = real
            .a_reconnects
            .iter()
            .map(|(t, session, timeout)| {
                format!(
                    "at {t:.2} asking for {} → {}",
                    if *session == 0 {
                        "a new session".to_string()
                    } else {
                        format!("session 0x{session:x}")
                    },
                    if *timeout == 0 {
                        "expired (timeout 0)".to_string()
                    } else {
                        format!("timeout {timeout} ms")
                    }
                )
            })
            .collect();
        md.push_str(&format!(
            "- Real: A's library reported {}. At the wire: A opened {} connection(s) while cut off; its connections after the first were answered {}; B was notified of A's node's deletion (the server expired A's session) at {}.\n",
            states.join(", "),
            real.a_connections_while_cut_off,
            if reconnects.is_empty() { "— none".to_string() } else { reconnects.join("; ") },
            real.b_notified.map_or("—".to_string(), |t| format!("{t:.2}")),
        ));
        for m in &e.model {
            md.push_str(&format!(
                "- Model (`{}`): {}; A's connection: {}; the store expired A's session at {}, A was told at {}; violated: {}.\n",
                m.policy,
                m.scenario,
                m.story
                    .a_states
                    .iter()
                    .map(|(t, w)| format!("{w} {t:.2}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                m.story.a_expired.map_or("—".to_string(), |t| format!("{t:.2}")),
                m.story
                    .a_told_expired
                    .map_or("—".to_string(), |t| format!("{t:.2}")),
                if m.violated.is_empty() {
                    "nothing".to_string()
                } else {
                    m.violated.join(", ")
                },
            ));
        }
        let stem = e.stem();
        md.push_str(&format!("\nThe real run (the fault shaded; `told: expired` where A's proxy passed the server's answer to A's reconnection; the session-expired mark where B's proxy passed B the notification of A's node's deletion; the connection states A's library reported on the lane that acts on them), then the model's under each policy:\n\n![real]({stem}-real.png)\n"));
        for m in &e.model {
            md.push_str(&format!(
                "![model, {}]({})\n",
                m.policy,
                model_picture(e, m)
            ));
        }
    }
    md
}

/// The file name of a model run's picture: `<stem>-sim.png` for the lock
/// object's twin (`oblivious`), `<stem>-sim-<policy>.png` for the others.
pub fn model_picture(e: &Experiment, m: &ModelRun) -> String {
    if m.policy == Policy::Oblivious.to_string() {
        format!("{}-sim.png", e.stem())
    } else {
        format!("{}-sim-{}.png", e.stem(), m.policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_twins_simulate_with_a_holder_cut_off() {
        for library in [Library::Kazoo, Library::Curator] {
            for fault in [Fault::Pause, Fault::Partition] {
                for policy in [Policy::Oblivious, Policy::SuspendAware] {
                    let m = model_run(library, fault, policy).expect("simulates");
                    let f = m.story.facts();
                    eprintln!(
                        "{library:?} {fault:?} {policy}: {:?} {:?} order {}",
                        m.story,
                        f,
                        m.story.order(fault.name(), fault.end_name())
                    );
                    assert!(f.b_took_it_during_the_fault);
                    assert_eq!(f.a_believed_after_the_fault, policy == Policy::Oblivious);
                }
            }
        }
    }
}

/// Against a running ZooKeeper: `LOCKSTEP_ZK=127.0.0.1:PORT cargo test --
/// --ignored --nocapture`.
#[cfg(test)]
mod live {
    use super::*;

    #[test]
    #[ignore]
    fn real_runs() {
        let zk = std::env::var("LOCKSTEP_ZK").expect("LOCKSTEP_ZK=host:port");
        let only = std::env::var("LOCKSTEP_ONLY").unwrap_or_default();
        for library in [Library::Kazoo, Library::Curator] {
            for fault in [Fault::Pause, Fault::Partition] {
                let name = format!("{}-{}", library.name(), fault.name());
                if !only.is_empty() && only != name {
                    continue;
                }
                let started = Instant::now();
                let e = match std::env::var("LOCKSTEP_CUT_S") {
                    // A longer cut than the validator's, real side only.
                    Ok(cut) => {
                        let r = real_run(&zk, library, fault, cut.parse().expect("seconds"));
                        eprintln!("{name}: {r:#?}");
                        continue;
                    }
                    Err(_) => experiment(&zk, library, fault),
                };
                eprintln!(
                    "{name} ({:.1} s): error {:?}\n  real {:#?}\n  agrees {}",
                    started.elapsed().as_secs_f64(),
                    e.error,
                    e.real,
                    e.agrees()
                );
                for (what, r, m) in e.pairs() {
                    eprintln!(
                        "  {what}: real {:?} / model {:?}\n    real order {}\n    model order {}",
                        r.facts(),
                        m.story.facts(),
                        r.order(fault.name(), fault.end_name()),
                        m.story.order(fault.name(), fault.end_name())
                    );
                }
            }
        }
    }
}
