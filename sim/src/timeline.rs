//! Holders timelines from traces: who believed it held the lock, when, and
//! which faults fired. Shared by `lockstep report` and the validator.

use crate::scenario::FaultKind;
use crate::trace::{TraceEvent, TraceLine};
use reports::chart::{Lane, Timeline};
use std::collections::BTreeMap;

/// Builds a holders timeline from a trace.
pub fn timeline_from_trace(title: &str, lines: &[TraceLine]) -> Timeline {
    let mut lanes: BTreeMap<u64, Lane> = BTreeMap::new();
    let mut open: BTreeMap<u64, u64> = BTreeMap::new();
    let mut end = 0u64;
    let mut clients = 0u64;
    let lane = |lanes: &mut BTreeMap<u64, Lane>, c: u64| {
        lanes.entry(c).or_insert_with(|| Lane {
            name: format!("client {c}"),
            holds: Vec::new(),
            faults: Vec::new(),
        });
    };
    for line in lines {
        let t = line.t;
        end = end.max(t);
        match &line.event {
            TraceEvent::Start { clients: n, .. } => clients = *n as u64,
            TraceEvent::Hold { client, .. } => {
                let c = *client as u64;
                lane(&mut lanes, c);
                open.insert(c, t);
            }
            TraceEvent::Release { client } => {
                let c = *client as u64;
                lane(&mut lanes, c);
                close_hold(&mut lanes, &mut open, c, t);
            }
            TraceEvent::Fault { fault, client, .. } => {
                let c = *client as u64;
                lane(&mut lanes, c);
                if *fault == FaultKind::Crash {
                    close_hold(&mut lanes, &mut open, c, t);
                }
                lanes
                    .get_mut(&c)
                    .expect("lane exists")
                    .faults
                    .push((t, fault.name().to_string()));
            }
            TraceEvent::Deliver { .. }
            | TraceEvent::Timer { .. }
            | TraceEvent::Connection { .. }
            | TraceEvent::Write { .. }
            | TraceEvent::Restart { .. }
            | TraceEvent::Resume { .. }
            | TraceEvent::Heal { .. }
            | TraceEvent::DelayEnd { .. }
            | TraceEvent::Expire { .. }
            | TraceEvent::Violation { .. }
            | TraceEvent::End { .. } => {}
        }
    }
    for (c, a) in open {
        if let Some(l) = lanes.get_mut(&c) {
            l.holds.push((a, end, false));
        }
    }
    for c in 0..clients.min(64) {
        lanes.entry(c).or_insert_with(|| Lane {
            name: format!("client {c}"),
            holds: Vec::new(),
            faults: Vec::new(),
        });
    }
    // Overlaps: a hold that shares time with another client's hold.
    let all: Vec<(u64, u64, u64)> = lanes
        .iter()
        .flat_map(|(c, l)| l.holds.iter().map(move |h| (*c, h.0, h.1)))
        .collect();
    for (c, lane) in lanes.iter_mut() {
        for h in &mut lane.holds {
            h.2 = all.iter().any(|&(d, a, b)| d != *c && a < h.1 && h.0 < b);
        }
    }
    Timeline {
        title: title.to_string(),
        x_label: "virtual time (s)".to_string(),
        end_us: end,
        lanes: lanes.into_values().collect(),
    }
}

/// Ends client `c`'s open hold, if any, at `t`.
fn close_hold(lanes: &mut BTreeMap<u64, Lane>, open: &mut BTreeMap<u64, u64>, c: u64, t: u64) {
    if let (Some(a), Some(lane)) = (open.remove(&c), lanes.get_mut(&c)) {
        lane.holds.push((a, t, false));
    }
}
