//! What a run reports: violations, faults, metrics.

use crate::scenario::ScheduledFault;
use crate::trace::TraceLine;
use models::ids::ClientIdx;
use models::msg::RequestKind;
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
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Metrics {
    pub acquisitions: u64,
    pub releases: u64,
    pub notifications: u64,
    /// Notifications delivered per release or expiry, in order.
    pub notifications_per_release: Vec<u32>,
    pub store_requests: BTreeMap<RequestKind, u64>,
    pub handoff_us: Summary,
    pub wait_us: Summary,
    pub events: u64,
    pub end_us: u64,
    /// Writes the fenced resource rejected.
    pub rejected_writes: u64,
}

/// What a run found.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub seed: u64,
    pub violations: Vec<Violation>,
    pub faults: Vec<FaultRecord>,
    pub metrics: Metrics,
    /// The `sometimes` property `hand_off`: the lock passed from one client
    /// to another in this run.
    pub hand_off: bool,
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

    pub fn first_violation(&self, property: &str) -> Option<&Violation> {
        self.violations
            .iter()
            .find(|v| v.property.name() == property)
    }
}
