//! Counterexamples as readable steps: who sent what to whom, which fault
//! fired, and who believes it holds the lock afterwards.

use crate::client::Phase;
use crate::model::{Action, Link, LockModel, LockState, Status};
use crate::msg::Timer;
use serde::Serialize;
use stateright::Model;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    pub step: usize,
    /// `deliver`, `timer`, `expire`, `fault` or `recover`.
    pub kind: &'static str,
    pub from: String,
    pub to: String,
    /// The message delivered, the timer that fired, or the fault.
    pub what: String,
    /// Clients that believe they hold the lock after this step.
    pub holders: Vec<String>,
}

fn client(c: crate::ids::ClientIdx) -> String {
    format!("client {c}")
}

pub(crate) fn describe(
    state: &LockState,
    action: Action,
) -> (&'static str, String, String, String) {
    match action {
        Action::Deliver(c, link) => {
            let slot = &state.clients[c as usize];
            let (from, to, queue) = match link {
                Link::StoreToClient => ("store".to_string(), client(c), &slot.from_store),
                Link::ClientToStore => (client(c), "store".to_string(), &slot.to_store),
                Link::ClientToResource => (client(c), "resource".to_string(), &slot.to_resource),
                Link::ResourceToClient => ("resource".to_string(), client(c), &slot.from_resource),
            };
            let what = queue.first().map(|m| m.to_string()).unwrap_or_default();
            ("deliver", from, to, what)
        }
        Action::Timeout(c, t) => {
            let what = match t {
                Timer::Think => "think time over: start acquiring".to_string(),
                Timer::Hold => "hold time over: next write".to_string(),
                Timer::Retry => "no reply: resend".to_string(),
                Timer::Ping => "heartbeat".to_string(),
                Timer::Deadline => {
                    "session deadline passed by its own clock: give the lock up".to_string()
                }
                Timer::Expiry(s) => format!("expiry of {s}"),
            };
            ("timer", client(c), client(c), what)
        }
        Action::Expire(s) => (
            "expire",
            "store".into(),
            client(s.client),
            format!("session {s} expires (its owner is silent)"),
        ),
        Action::Crash(c) => ("fault", client(c), String::new(), "crashes".into()),
        Action::Pause(c) => (
            "fault",
            client(c),
            String::new(),
            "pauses (process frozen)".into(),
        ),
        Action::Resume(c) => ("recover", client(c), String::new(), "resumes".into()),
        Action::Partition(c) => (
            "fault",
            client(c),
            "store".into(),
            "link to the store is cut".into(),
        ),
        Action::Heal(c) => (
            "recover",
            client(c),
            "store".into(),
            "link to the store heals".into(),
        ),
        Action::LoseReply(c) => {
            let what = state.clients[c as usize]
                .from_store
                .first()
                .map(|m| format!("{m} is lost"))
                .unwrap_or_default();
            ("fault", "store".into(), client(c), what)
        }
    }
}

fn holders(state: &LockState) -> Vec<String> {
    state
        .clients
        .iter()
        .enumerate()
        .filter(|(_, s)| s.status != Status::Crashed)
        .filter_map(|(c, s)| match s.state.phase {
            Phase::Holding { token, .. } => Some(format!("client {c} (token {token})")),
            _ => None,
        })
        .collect()
}

/// Replays `path` and describes each step.
pub fn steps(model: &LockModel, path: &[Action]) -> Vec<TraceStep> {
    let mut state = model.init_states().remove(0);
    let mut out = Vec::with_capacity(path.len());
    for (i, &a) in path.iter().enumerate() {
        let (kind, from, to, what) = describe(&state, a);
        state = model.next_state(&state, a).expect("a checked path replays");
        out.push(TraceStep {
            step: i + 1,
            kind,
            from,
            to,
            what,
            holders: holders(&state),
        });
    }
    out
}

impl fmt::Display for TraceStep {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:>3}. ", self.step)?;
        match self.kind {
            "deliver" => write!(f, "{} → {}: {}", self.from, self.to, self.what)?,
            "timer" => write!(f, "{}: {}", self.from, self.what)?,
            "expire" => write!(f, "store: {}", self.what)?,
            "fault" => write!(f, "FAULT {}: {}", self.from, self.what)?,
            _ => write!(f, "{}: {}", self.from, self.what)?,
        }
        if !self.holders.is_empty() {
            write!(f, "   [holds: {}]", self.holders.join(", "))?;
        }
        Ok(())
    }
}
