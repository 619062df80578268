//! A run as a Chrome trace (the Trace Event Format that chrome://tracing
//! and Perfetto open): a track per client, the store and the resource;
//! holds, pauses, partitions and delays as slices that last; messages,
//! expiries, connection changes, writes and violations as instants. Times
//! are the run's virtual microseconds.

use crate::html::TimelineData;
use crate::trace::{Party, TraceEvent, TraceLine};
use serde_json::{json, Value};

const PID: u32 = 1;

fn tid(p: Party, clients: u16) -> u32 {
    match p {
        Party::Client(c) => u32::from(c) + 1,
        Party::Store => u32::from(clients) + 1,
        Party::Resource => u32::from(clients) + 2,
    }
}

/// The trace as Chrome's JSON object format.
pub fn chrome_trace(lines: &[TraceLine]) -> Value {
    // Holds and faults are the intervals the HTML timeline draws.
    let d = TimelineData::from_trace("", lines);
    let n = d.clients;
    let mut events = Vec::new();
    let mut name_thread = |tid: u32, name: String| {
        events.push(json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_name", "args": {"name": name}}));
        events.push(json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}));
    };
    for c in 0..n {
        name_thread(tid(Party::Client(c), n), format!("client {c}"));
    }
    name_thread(tid(Party::Store, n), "store".into());
    name_thread(tid(Party::Resource, n), "resource".into());
    events
        .push(json!({"ph": "M", "pid": PID, "name": "process_name", "args": {"name": d.subtitle}}));
    let slice = |tid: u32, name: &str, cat: &str, from: u64, to: u64, text: &str| {
        json!({"ph": "X", "pid": PID, "tid": tid, "name": name, "cat": cat,
               "ts": from, "dur": to.saturating_sub(from), "args": {"what": text}})
    };
    for h in &d.holds {
        events.push(slice(
            tid(Party::Client(h.client), n),
            &format!("holds ({})", h.label),
            "hold",
            h.from_us,
            h.to_us,
            &h.text,
        ));
    }
    for o in &d.overlaps {
        events.push(slice(
            tid(Party::Client(o.client), n),
            &o.label,
            "overlap",
            o.from_us,
            o.to_us,
            &o.text,
        ));
    }
    for f in &d.faults {
        events.push(slice(
            tid(Party::Client(f.client), n),
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
        let text = line.to_string().trim_start().to_string();
        let name = text.split_once("  ").map_or(text.as_str(), |(_, w)| w);
        let mut e = json!({"ph": "i", "pid": PID, "name": name, "cat": cat, "ts": line.t});
        match party {
            Some(p) => {
                e["tid"] = json!(tid(p, n));
                e["s"] = json!("t");
            }
            None => e["s"] = json!("g"),
        }
        events.push(e);
    }
    json!({"traceEvents": events, "displayTimeUnit": "ms"})
}
