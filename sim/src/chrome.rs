//! A run as a Chrome trace (the Trace Event Format that chrome://tracing
//! and Perfetto open): a track per client, the store and the resource;
//! holds, pauses, partitions and delays as slices that last; messages,
//! expiries, connection changes, writes and violations as instants. Times
//! are the run's virtual microseconds.
//!
//! Perfetto drops complete ('X') slices of one track that overlap without
//! nesting, and a client's hold and its partition do just that: so a
//! client's holds, its overlaps and its faults each have their own tracks
//! (`client 0`, `client 0 overlaps`, `client 0 faults`), and a slice that
//! would still overlap one of its track without nesting goes to a further
//! track of the same name (`client 0 faults 2`).

use crate::html::{Span, TimelineData};
use crate::trace::{Party, TraceEvent, TraceLine};
use serde_json::{json, Value};

const PID: u32 = 1;

/// Whether two intervals share time without one holding the other: what
/// one track must never show.
pub fn cross(a: (u64, u64), b: (u64, u64)) -> bool {
    let shared = a.0 < b.1 && b.0 < a.1;
    let nested = (a.0 <= b.0 && b.1 <= a.1) || (b.0 <= a.0 && a.1 <= b.1);
    shared && !nested
}

/// One track: its name, where it sorts, the slices on it.
struct Track {
    name: String,
    sort: u32,
    slices: Vec<(u64, u64)>,
}

/// The tracks of one process; a track's tid is its place here, from 1.
#[derive(Default)]
struct Tracks {
    tracks: Vec<Track>,
}

impl Tracks {
    /// A new track named `name`, sorted at `sort`: its tid.
    fn open(&mut self, name: String, sort: u32) -> u32 {
        self.tracks.push(Track {
            name,
            sort,
            slices: Vec::new(),
        });
        self.tracks.len() as u32
    }

    /// The tid of the first track named `name` (or `name 2`, `name 3`, …)
    /// where `(from, to)` crosses no slice, opened if there is none; the
    /// slice is recorded there.
    fn place(&mut self, name: &str, sort: u32, from: u64, to: u64) -> u32 {
        let mut n = 1;
        loop {
            let wanted = if n == 1 {
                name.to_string()
            } else {
                format!("{name} {n}")
            };
            let found = self.tracks.iter().position(|t| t.name == wanted);
            let tid = match found {
                Some(i) if self.tracks[i].slices.iter().any(|&s| cross(s, (from, to))) => {
                    n += 1;
                    continue;
                }
                Some(i) => i as u32 + 1,
                None => self.open(wanted, sort + n - 1),
            };
            self.tracks[tid as usize - 1].slices.push((from, to));
            return tid;
        }
    }
}

/// Sort indexes: a lane's tracks together, in lane order, its holds first.
const PER_LANE: u32 = 100;
const OVERLAPS: u32 = 20;
const FAULTS: u32 = 40;

/// The run as Chrome's JSON object format.
pub fn chrome_trace(lines: &[TraceLine]) -> Value {
    // Holds and faults are the intervals the HTML timeline draws, each
    // kind on tracks of its own per lane; then the store's and the
    // resource's tracks.
    let d = TimelineData::from_trace("", lines);
    let mut tracks = Tracks::default();
    for (i, name) in d.lanes.iter().enumerate() {
        tracks.open(name.clone(), i as u32 * PER_LANE);
    }
    let lanes = d.lanes.len() as u32;
    let store = tracks.open("store".to_string(), lanes * PER_LANE);
    let resource = tracks.open("resource".to_string(), lanes * PER_LANE + 1);
    let lane_tid = |lane: usize| lane as u32 + 1;
    let tid = |p: Party| -> Option<u32> {
        match p {
            Party::Client(c) => d.lane_of.get(&c).map(|&l| lane_tid(l)),
            Party::Store => Some(store),
            Party::Resource => Some(resource),
        }
    };
    let mut slices = Vec::new();
    let mut slice = |s: &Span, track: &str, offset: u32, name: String, cat: &str| {
        let at = tracks.place(
            &format!("{}{track}", d.lanes[s.lane]),
            s.lane as u32 * PER_LANE + offset,
            s.from_us,
            s.to_us,
        );
        slices.push(json!({"ph": "X", "pid": PID, "tid": at, "name": name, "cat": cat,
               "ts": s.from_us, "dur": s.to_us.saturating_sub(s.from_us), "args": {"what": s.text}}));
    };
    for h in &d.holds {
        slice(h, "", 0, h.label.clone(), "hold");
    }
    for o in &d.overlaps {
        slice(o, " overlaps", OVERLAPS, o.label.clone(), "overlap");
    }
    for f in &d.faults {
        slice(f, " faults", FAULTS, f.label.clone(), "fault");
    }
    let mut events = Vec::new();
    for (i, Track { name, sort, .. }) in tracks.tracks.iter().enumerate() {
        let tid = i as u32 + 1;
        events.push(json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_name", "args": {"name": name}}));
        events.push(json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": sort}}));
    }
    events
        .push(json!({"ph": "M", "pid": PID, "name": "process_name", "args": {"name": d.subtitle}}));
    events.extend(slices);
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
            TraceEvent::StoreFault { .. } => (Some(Party::Store), "fault"),
            TraceEvent::Replicate { .. } => (Some(Party::Store), "replication"),
            TraceEvent::Apply { .. } => (Some(Party::Store), "apply"),
            TraceEvent::Follower { .. } => (Some(Party::Store), "fault"),
            TraceEvent::Moved { client, .. } | TraceEvent::ServerSilent { client, .. } => {
                (Some(Party::Client(*client)), "reconnect")
            }
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
