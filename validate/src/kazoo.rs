//! kazoo's own `Lock` after a pause past the session timeout
//! (`kazoo_pause.py`): does the lock object drop its belief?
//!
//! 1. A takes the lock and reports what it believes every 100 ms.
//! 2. A's process is stopped (SIGSTOP); its session expires on the server.
//! 3. B takes the lock (A's node went with A's session).
//! 4. A resumes (SIGCONT): kazoo reconnects, is told the session expired
//!    (LOST) and opens a new one; the question is what `is_acquired` says.

use crate::etcdctl::{collect_stdout, finish, signal};
use serde::Serialize;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    pub error: Option<String>,
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
    let mut b = spawn(zk, "take")?;
    let b_said = collect_stdout(&mut b);
    let taken_while_stopped = wait_for(&b_said, "ACQUIRED", Duration::from_secs(20));
    signal(&a, "-CONT")?;
    // kazoo reconnects, hears LOST and opens a new session meanwhile.
    std::thread::sleep(Duration::from_secs(3));
    let _ = finish(a, Duration::ZERO, || true);
    let _ = finish(b, Duration::from_secs(5), || false);
    let said = a_said.lock().unwrap().clone();
    let last_report = said
        .lines()
        .rev()
        .find(|l| l.starts_with("is_acquired="))
        .unwrap_or("")
        .to_string();
    Ok(PauseOutcome {
        oblivious: taken_while_stopped && last_report == "is_acquired=True lost=True",
        taken_while_stopped,
        last_report,
        error: None,
    })
}
