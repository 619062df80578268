//! A run as a Chrome trace (the Trace Event Format that chrome://tracing
//! and Perfetto open): a track per client, the store and the resource;
//! holds, pauses, partitions and delays as slices that last; messages,
//! expiries, connection changes, writes and violations as instants. Times
//! are the run's virtual microseconds.

use crate::html::TimelineData;
use crate::trace::{Party, TraceEvent, TraceLine};
use serde_json::{json, Value};

const PID: u32 = 1;

/// The run as Chrome's JSON object format.
pub fn chrome_trace(lines: &[TraceLine]) -> Value {
    // Holds and faults are the intervals the HTML timeline draws, a track
    // per lane; then the store's and the resource's.
    let d = TimelineData::from_trace("", lines);
    let lanes = d.lanes.len() as u32;
    let lane_tid = |lane: usize| lane as u32 + 1;
    let tid = |p: Party| -> Option<u32> {
        match p {
            Party::Client(c) => d.lane_of.get(&c).map(|&l| lane_tid(l)),
            Party::Store => Some(lanes + 1),
            Party::Resource => Some(lanes + 2),
        }
    };
    let mut events = Vec::new();
    let mut name_thread = |tid: u32, name: &str| {
        events.push(json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_name", "args": {"name": name}}));
        events.push(json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}));
    };
    for (i, name) in d.lanes.iter().enumerate() {
        name_thread(lane_tid(i), name);
    }
    name_thread(lanes + 1, "store");
    name_thread(lanes + 2, "resource");
    events
        .push(json!({"ph": "M", "pid": PID, "name": "process_name", "args": {"name": d.subtitle}}));
    let slice = |tid: u32, name: &str, cat: &str, from: u64, to: u64, text: &str| {
        json!({"ph": "X", "pid": PID, "tid": tid, "name": name, "cat": cat,
               "ts": from, "dur": to.saturating_sub(from), "args": {"what": text}})
    };
    for h in &d.holds {
        events.push(slice(
            lane_tid(h.lane),
            &format!("holds ({})", h.label),
            "hold",
            h.from_us,
            h.to_us,
            &h.text,
        ));
    }
    for o in &d.overlaps {
        events.push(slice(
            lane_tid(o.lane),
            &o.label,
            "overlap",
            o.from_us,
            o.to_us,
            &o.text,
        ));
    }
    for f in &d.faults {
        events.push(slice(
            lane_tid(f.lane),
            &f.label,
            "fault",
            f.from_us,
            f.to_us,
            &f.text,
        ));
    }
    for line in lines.iter().filter(|l| !l.is_heartbeat()) {
        let (party, cat) = match &line.event {
            TraceEvent::Deliver { to, .. } => (Some(*to), "message"),
            TraceEvent::Timer { client, .. } => (Some(Party::Client(*client)), "timer"),
            TraceEvent::Fault { client, .. } => (Some(Party::Client(*client)), "fault"),
            TraceEvent::Restart { client }
            | TraceEvent::Resume { client }
            | TraceEvent::Heal { client }
            | TraceEvent::DelayEnd { client } => (Some(Party::Client(*client)), "recover"),
            TraceEvent::Connection { client, .. } => (Some(Party::Client(*client)), "connection"),
            TraceEvent::Write { .. } => (Some(Party::Resource), "write"),
            TraceEvent::Hold { client, .. } | TraceEvent::Release { client } => {
                (Some(Party::Client(*client)), "belief")
            }
            TraceEvent::Expire { .. } => (Some(Party::Store), "expiry"),
            TraceEvent::Violation { .. } => (None, "violation"),
            TraceEvent::Start { .. } | TraceEvent::End { .. } => (None, "run"),
        };
        let name = line.event.to_string();
        let mut e = json!({"ph": "i", "pid": PID, "name": name, "cat": cat, "ts": line.t});
        match party.map(tid) {
            Some(Some(t)) => {
                e["tid"] = json!(t);
                e["s"] = json!("t");
            }
            // A client without a lane (a big run's quiet one): skipped.
            Some(None) => continue,
            None => e["s"] = json!("g"),
        }
        events.push(e);
    }
    json!({"traceEvents": events, "displayTimeUnit": "ms"})
}
