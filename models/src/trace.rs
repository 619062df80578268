//! Counterexamples as readable steps: who sent what to whom, which fault
//! fired, and who believes it holds the lock afterwards.

use crate::model::describe::describe;
use crate::model::{Action, ModelState, RecipeModel};
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

fn holders(state: &ModelState) -> Vec<String> {
    crate::model::view::believers(state)
        .into_iter()
        .map(|(c, token)| format!("client {c} (token {token})"))
        .collect()
}

/// Replays `path` and describes each step.
pub fn steps(model: &RecipeModel, path: &[Action]) -> Vec<TraceStep> {
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
        write!(f, "{:>3}. {}", self.step, Happened(self))
    }
}

/// What a step did, without its number.
pub struct Happened<'a>(pub &'a TraceStep);

impl fmt::Display for Happened<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let s = self.0;
        match s.kind {
            "deliver" => write!(f, "{} → {}: {}", s.from, s.to, s.what)?,
            "timer" => write!(f, "{}: {}", s.from, s.what)?,
            "expire" => write!(f, "store: {}", s.what)?,
            "fault" => write!(f, "FAULT {}: {}", s.from, s.what)?,
            _ => write!(f, "{}: {}", s.from, s.what)?,
        }
        if !s.holders.is_empty() {
            write!(f, "   [holds: {}]", s.holders.join(", "))?;
        }
        Ok(())
    }
}
