//! kazoo's own `Lock` after a pause past the session timeout
//! (`kazoo_pause.py`): does the lock object drop its belief?
//!
//! 1. A takes the lock and reports what it believes every 100 ms.
//! 2. A's process is stopped (SIGSTOP); its session expires on the server.
//! 3. B takes the lock (A's node went with A's session).
//! 4. A resumes (SIGCONT): kazoo reconnects, is told the session expired
//!    (LOST) and opens a new one; the question is what `is_acquired` says.

use crate::etcdctl::{collect_stdout, finish, signal};
use reports::chart::{Lane, Timeline};
use serde::Serialize;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Session timeout of both clients, seconds.
const TIMEOUT_S: &str = "4";

#[derive(Clone, Debug, Serialize)]
pub struct PauseOutcome {
    /// After LOST, A's lock object still said `is_acquired = True` while B
    /// held the lock.
    pub oblivious: bool,
    /// B took the lock while A was stopped.
    pub taken_while_stopped: bool,
    /// What A said last.
    pub last_report: String,
    /// Who believed it held, when (seconds since A took the lock): A from
    /// its ACQUIRED to its last `is_acquired=True`, B from ACQUIRED to
    /// RELEASED; and when A was stopped and resumed.
    pub a_believed: Option<(f64, f64)>,
    pub b_held: Option<(f64, f64)>,
    pub stopped_at: f64,
    pub resumed_at: f64,
    pub error: Option<String>,
}

impl PauseOutcome {
    /// The belief timeline of the real run, as the simulator draws its own.
    pub fn timeline(&self) -> Timeline {
        let us = |s: f64| (s.max(0.0) * 1e6) as u64;
        let overlap = match (self.a_believed, self.b_held) {
            (Some(a), Some(b)) => a.0 < b.1 && b.0 < a.1,
            _ => false,
        };
        let lane = |name: &str, held: Option<(f64, f64)>, faults| Lane {
            name: name.into(),
            holds: held
                .map(|(s, e)| (us(s), us(e), overlap))
                .into_iter()
                .collect(),
            faults,
        };
        let end = [self.a_believed, self.b_held]
            .iter()
            .flatten()
            .map(|h| h.1)
            .fold(self.resumed_at, f64::max);
        Timeline {
            title: "Real kazoo 2.11 Lock: A stopped past its 4 s session, B takes the lock".into(),
            x_label: "wall time (s)".into(),
            end_us: us(end + 0.5),
            lanes: vec![
                lane(
                    "client A",
                    self.a_believed,
                    vec![(us(self.stopped_at), "pause".into())],
                ),
                lane("client B", self.b_held, Vec::new()),
            ],
        }
    }
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The wall times of the lines that say `what`.
fn times(said: &str, what: &str) -> Vec<f64> {
    said.lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, rest)| rest.starts_with(what))
        .filter_map(|(t, _)| t.parse().ok())
        .collect()
}

fn spawn(zk: &str, role: &str) -> Result<std::process::Child, String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/kazoo_pause.py");
    Command::new("python3")
        .args([script, zk, role, TIMEOUT_S])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run python3: {e}"))
}

fn wait_for(printed: &std::sync::Mutex<String>, what: &str, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if printed.lock().unwrap().contains(what) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

pub fn oblivious_after_pause(zk: &str) -> PauseOutcome {
    match run(zk) {
        Ok(o) => o,
        Err(e) => PauseOutcome {
            oblivious: false,
            taken_while_stopped: false,
            last_report: String::new(),
            a_believed: None,
            b_held: None,
            stopped_at: 0.0,
            resumed_at: 0.0,
            error: Some(e),
        },
    }
}

fn run(zk: &str) -> Result<PauseOutcome, String> {
    let mut a = spawn(zk, "hold")?;
    let a_said = collect_stdout(&mut a);
    if !wait_for(&a_said, "ACQUIRED", Duration::from_secs(10)) {
        let _ = finish(a, Duration::ZERO, || true);
        return Err("A never took the lock".into());
    }
    signal(&a, "-STOP")?;
    let stopped = now_s();
    let mut b = spawn(zk, "take")?;
    let b_said = collect_stdout(&mut b);
    let taken_while_stopped = wait_for(&b_said, "ACQUIRED", Duration::from_secs(20));
    signal(&a, "-CONT")?;
    let resumed = now_s();
    // kazoo reconnects, hears LOST and opens a new session meanwhile.
    std::thread::sleep(Duration::from_secs(3));
    let _ = finish(a, Duration::ZERO, || true);
    let _ = finish(b, Duration::from_secs(5), || false);
    let said = a_said.lock().unwrap().clone();
    let b_said = b_said.lock().unwrap().clone();
    let last_report = said
        .lines()
        .rev()
        .filter_map(|l| l.split_once(' '))
        .map(|(_, rest)| rest)
        .find(|r| r.starts_with("is_acquired="))
        .unwrap_or("")
        .to_string();
    let t0 = times(&said, "ACQUIRED").first().copied().unwrap_or(stopped);
    let a_until = times(&said, "is_acquired=True").last().copied();
    let since = |t: f64| t - t0;
    let b_from = times(&b_said, "ACQUIRED").first().copied();
    let b_until = times(&b_said, "RELEASED").first().copied();
    Ok(PauseOutcome {
        oblivious: taken_while_stopped && last_report == "is_acquired=True lost=True",
        taken_while_stopped,
        last_report,
        a_believed: a_until.map(|u| (0.0, since(u))),
        b_held: b_from.zip(b_until).map(|(f, u)| (since(f), since(u))),
        stopped_at: since(stopped),
        resumed_at: since(resumed),
        error: None,
    })
}
