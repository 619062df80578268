//! What a run reports: violations, faults, metrics.

use crate::scenario::ScheduledFault;
use crate::trace::{TraceEvent, TraceLine};
use models::ids::ClientIdx;
use models::msg::{RequestKind, Timer};
use models::properties::PropertyName;
use serde::Serialize;
use std::collections::BTreeMap;

/// One violation of a property, when and by whom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub property: PropertyName,
    pub at_us: u64,
    pub clients: Vec<ClientIdx>,
}

/// A fault that was to be injected, and whether it fired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    pub fault: ScheduledFault,
    pub fired: bool,
}

/// Percentiles of a sample, in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub count: usize,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

impl Summary {
    pub fn of(mut xs: Vec<u64>) -> Summary {
        if xs.is_empty() {
            return Summary::default();
        }
        xs.sort_unstable();
        let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
        Summary {
            count: xs.len(),
            p50: at(0.5),
            p99: at(0.99),
            max: *xs.last().unwrap(),
        }
    }

    /// The median and the 99th percentile, or `None` for no samples (a
    /// run without hand-offs has no hand-off time, not one of zero).
    pub fn p50_p99(&self) -> Option<(u64, u64)> {
        (self.count > 0).then_some((self.p50, self.p99))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Metrics {
    pub acquisitions: u64,
    pub releases: u64,
    pub notifications: u64,
    /// Notifications delivered per release or expiry, in order.
    pub notifications_per_release: Vec<u32>,
    /// Notifications per store step that sent any (a create, delete,
    /// close or expiry that woke someone), in order: a barrier's and a
    /// queue's herd measure.
    pub notifications_per_change: Vec<u32>,
    /// Over an ensemble, notifications sent by each server, by server
    /// number (empty on one server).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notifications_per_server: Vec<u64>,
    pub store_requests: BTreeMap<RequestKind, u64>,
    /// Sleeps a recipe asked for that ran out (`Timer::Wake`): a poller's
    /// tries after a failed one.
    pub wakes: u64,
    pub handoff_us: Summary,
    pub wait_us: Summary,
    pub events: u64,
    pub end_us: u64,
    /// Writes the fenced resource rejected.
    pub rejected_writes: u64,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum RunEnd {
    /// Every live client finished, or nothing was left to happen.
    Finished,
    /// The time limit: `progress` was judged only if the liveness bound
    /// had passed by then.
    TimeLimit { at_us: u64 },
    /// Virtual time stopped advancing: this many events at one instant
    /// with no client acquiring.
    /// No verdict on `progress`; the configuration cannot make progress.
    Stuck { at_us: u64, events: u64 },
    /// The run reached the cap on events.
    EventLimit { events: u64 },
}

impl RunEnd {
    /// A run the simulator had to cut off: its outcome is no verdict.
    pub fn is_cut_off(self) -> bool {
        match self {
            RunEnd::Finished | RunEnd::TimeLimit { .. } => false,
            RunEnd::Stuck { .. } | RunEnd::EventLimit { .. } => true,
        }
    }
}

impl std::fmt::Display for RunEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match *self {
            RunEnd::Finished => write!(f, "finished"),
            RunEnd::TimeLimit { at_us } => {
                write!(f, "time limit reached at {:.3} s", at_us as f64 / 1e6)
            }
            RunEnd::Stuck { at_us, events } => write!(
                f,
                "stuck: {events} events at virtual time {:.6} s without time advancing \
                 or any client acquiring \
                 (zero latencies and timers that re-arm at once?)",
                at_us as f64 / 1e6
            ),
            RunEnd::EventLimit { events } => {
                write!(f, "stopped after {events} events (the cap on one run)")
            }
        }
    }
}

/// What a run found.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub seed: u64,
    /// Why it stopped.
    pub end: RunEnd,
    pub violations: Vec<Violation>,
    pub faults: Vec<FaultRecord>,
    pub metrics: Metrics,
    /// The `sometimes` property `hand_off`: the lock passed from one client
    /// to another in this run.
    pub hand_off: bool,
    /// Clients that spent their request budget: each broke the progress
    /// goal (a violation naming it) by sending on while the run did no
    /// work. Left out of the JSON when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub livelocked: Vec<ClientIdx>,
    /// FNV-1a of the trace's JSON lines (present when the trace was recorded).
    pub trace_hash: Option<String>,
    #[serde(skip)]
    pub trace: Vec<TraceLine>,
}

impl Outcome {
    pub fn faults_fired(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        for f in self.faults.iter().filter(|f| f.fired) {
            *m.entry(f.fault.kind.name()).or_insert(0) += 1;
        }
        m
    }

    /// How often a client's `timer` fired, by the kept trace (0 for a run
    /// whose trace was not kept).
    pub fn timers_fired(&self, timer: Timer) -> usize {
        self.trace
            .iter()
            .filter(|l| matches!(l.event, TraceEvent::Timer { timer: t, .. } if t == timer))
            .count()
    }

    pub fn first_violation(&self, property: &str) -> Option<&Violation> {
        self.violations
            .iter()
            .find(|v| v.property.name() == property)
    }
}
