//! Holders timelines from traces: who believed it held the lock, when, where
//! two believed at once, and which faults fired for how long. Shared by
//! `lockstep report` and the validator.

use crate::scenario::FaultKind;
use crate::trace::{TraceEvent, TraceLine};
use models::recipe::App;
use reports::chart::{overlaps, Lane, Timeline};
use std::collections::BTreeMap;

/// Lanes for every client of a run with at most this many; a bigger run
/// gets lanes only for the clients its trace says something about.
const ALL_LANES_UP_TO: u64 = 64;

/// What the trace says about one client.
#[derive(Default)]
struct Client {
    lane: Lane,
    /// The hold that has begun and not ended.
    holding: Option<u64>,
    /// Faults that last and have not ended: kind, start.
    lasting: Vec<(FaultKind, u64)>,
}

impl Client {
    fn end_hold(&mut self, t: u64) {
        if let Some(a) = self.holding.take() {
            self.lane.holds.push((a, t));
        }
    }

    /// Ends the oldest open fault of `kind` (one without a duration) at `t`.
    fn end_fault(&mut self, kind: FaultKind, t: u64) {
        if let Some(i) = self.lasting.iter().position(|(k, _)| *k == kind) {
            let (k, a) = self.lasting.remove(i);
            self.lane.spans.push((a, t, k.name().to_string()));
        }
    }
}

/// Builds a holders timeline from a trace: one lane per client of the run
/// (`start`'s client count; without a `start` line, the clients the trace
/// names), holds as bars, overlaps exactly where two clients hold at once,
/// pauses, partitions and delays shaded for their duration, crashes and
/// lost replies marked where they fire, session expiries and connection
/// states (SUSPENDED, LOST, RECONNECTED) as markers.
pub fn timeline_from_trace(title: &str, lines: &[TraceLine]) -> Timeline {
    timeline_with_clients(title, lines).0
}

/// [`timeline_from_trace`], with the client each lane is for, in lane order.
pub fn timeline_with_clients(title: &str, lines: &[TraceLine]) -> (Timeline, Vec<u16>) {
    let mut clients: BTreeMap<u64, Client> = BTreeMap::new();
    let mut count: Option<u64> = None;
    // Holds at once are a finding only where holding is exclusive.
    let mut exclusive = true;
    let mut end = 0u64;
    for line in lines {
        let t = line.t;
        end = end.max(t);
        let who = match &line.event {
            TraceEvent::Start {
                clients: n, recipe, ..
            } => {
                count = Some(*n as u64);
                // Readers share a shared lock, lease holders a semaphore:
                // overlaps there are the rules' to judge.
                exclusive = crate::trace::app_of(recipe).is_none_or(App::exclusive);
                continue;
            }
            TraceEvent::Hold { client, .. }
            | TraceEvent::Release { client }
            | TraceEvent::Fault { client, .. }
            | TraceEvent::Resume { client }
            | TraceEvent::Heal { client }
            | TraceEvent::DelayEnd { client }
            | TraceEvent::Connection { client, .. }
            | TraceEvent::Expire { client, .. } => *client as u64,
            TraceEvent::Deliver { .. }
            | TraceEvent::Timer { .. }
            | TraceEvent::Restart { .. }
            | TraceEvent::Write { .. }
            | TraceEvent::Violation { .. }
            | TraceEvent::End { .. } => continue,
        };
        if count.is_some_and(|n| who >= n) {
            continue;
        }
        let c = clients.entry(who).or_default();
        match &line.event {
            TraceEvent::Hold { .. } => {
                c.holding.get_or_insert(t);
            }
            TraceEvent::Release { .. } => c.end_hold(t),
            TraceEvent::Fault {
                fault, duration_us, ..
            } => match fault {
                FaultKind::Crash => {
                    c.end_hold(t);
                    c.lane.faults.push((t, "crash".to_string()));
                }
                FaultKind::LostReply => c.lane.faults.push((t, "lost reply".to_string())),
                FaultKind::Pause | FaultKind::Partition | FaultKind::Delay => match duration_us {
                    Some(d) => {
                        c.lane
                            .spans
                            .push((t, t.saturating_add(*d), fault.name().to_string()))
                    }
                    None => c.lasting.push((*fault, t)),
                },
            },
            TraceEvent::Resume { .. } => c.end_fault(FaultKind::Pause, t),
            TraceEvent::Heal { .. } => c.end_fault(FaultKind::Partition, t),
            TraceEvent::DelayEnd { .. } => c.end_fault(FaultKind::Delay, t),
            TraceEvent::Connection { state, .. } => {
                c.lane.states.push((t, state.word().to_string()))
            }
            TraceEvent::Expire { .. } => c.lane.expiries.push(t),
            // Not about one client's lane (skipped above).
            TraceEvent::Start { .. }
            | TraceEvent::Deliver { .. }
            | TraceEvent::Timer { .. }
            | TraceEvent::Restart { .. }
            | TraceEvent::Write { .. }
            | TraceEvent::Violation { .. }
            | TraceEvent::End { .. } => {}
        }
    }
    // What is still going on when the trace ends ends there.
    for c in clients.values_mut() {
        c.end_hold(end);
        for (k, a) in std::mem::take(&mut c.lasting) {
            c.lane.spans.push((a, end, k.name().to_string()));
        }
        for s in &mut c.lane.spans {
            s.1 = s.1.min(end.max(s.0));
        }
        c.lane.spans.sort_by_key(|s| (s.0, s.1));
    }
    if let Some(n) = count.filter(|&n| n <= ALL_LANES_UP_TO) {
        for c in 0..n {
            clients.entry(c).or_default();
        }
    }
    let ids: Vec<u16> = clients.keys().map(|&c| c as u16).collect();
    let mut lanes: Vec<Lane> = clients
        .into_iter()
        .map(|(c, client)| Lane {
            name: format!("client {c}"),
            ..client.lane
        })
        .collect();
    if exclusive {
        let holds: Vec<&[(u64, u64)]> = lanes.iter().map(|l| l.holds.as_slice()).collect();
        let shared = overlaps(&holds);
        for (lane, o) in lanes.iter_mut().zip(shared) {
            lane.overlaps = o;
        }
    }
    let timeline = Timeline {
        title: title.to_string(),
        x_label: "virtual time (s)".to_string(),
        end_us: end,
        lanes,
    };
    (timeline, ids)
}
