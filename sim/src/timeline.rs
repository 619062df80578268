//! Holders timelines from traces: who believed it held the lock (led, passed,
//! processed an item: the application's words), when, where two believed at
//! once, which faults fired for how long, each write to the guarded
//! resource and each violation on the lanes of the clients it names. Shared
//! by `lockstep report` and the interactive page ([`crate::html`]).

use crate::scenario::FaultKind;
use crate::trace::{TraceEvent, TraceLine};
use models::recipe::App;
use reports::timeline::{overlaps, Lane, Timeline};
use std::collections::{BTreeMap, BTreeSet};

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
/// states (SUSPENDED, LOST, RECONNECTED) as markers, writes (accepted or
/// refused) and violations where they happen.
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
    let mut app = None;
    // Violations naming a client, kept to be put on its lane once the lanes
    // are known; one naming no client goes on every lane.
    let mut violations: Vec<(u64, Vec<u16>, String)> = Vec::new();
    for line in lines {
        let t = line.t;
        end = end.max(t);
        let who = match &line.event {
            TraceEvent::Start {
                clients: n, recipe, ..
            } => {
                count = Some(*n as u64);
                app = crate::trace::app_of(recipe);
                // Readers share a shared lock, lease holders a semaphore:
                // overlaps there are the rules' to judge.
                exclusive = app.is_none_or(App::exclusive);
                continue;
            }
            TraceEvent::Violation { property, clients } => {
                violations.push((t, clients.clone(), property.to_string()));
                continue;
            }
            TraceEvent::Hold { client, .. }
            | TraceEvent::Release { client }
            | TraceEvent::Fault { client, .. }
            | TraceEvent::Resume { client }
            | TraceEvent::Heal { client }
            | TraceEvent::DelayEnd { client }
            | TraceEvent::Connection { client, .. }
            | TraceEvent::Write { client, .. }
            | TraceEvent::Expire { client, .. } => *client as u64,
            TraceEvent::Deliver { .. }
            | TraceEvent::Timer { .. }
            | TraceEvent::Restart { .. }
            | TraceEvent::StoreFault { .. }
            | TraceEvent::Replicate { .. }
            | TraceEvent::Apply { .. }
            | TraceEvent::Follower { .. }
            | TraceEvent::Moved { .. }
            | TraceEvent::ServerSilent { .. }
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
                FaultKind::Interrupt => c.lane.faults.push((t, "interrupt".to_string())),
                FaultKind::CheckCritical => c.lane.faults.push((t, "check critical".to_string())),
                // A store fault is traced as a store fault, on no lane.
                FaultKind::MasterRestart
                | FaultKind::ClockJump
                | FaultKind::Failover
                | FaultKind::Lag
                | FaultKind::Isolate
                | FaultKind::Mute => {}
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
            TraceEvent::Write { accepted, .. } => c.lane.writes.push((t, *accepted)),
            // Not about one client's lane (skipped above).
            TraceEvent::Start { .. }
            | TraceEvent::Deliver { .. }
            | TraceEvent::Timer { .. }
            | TraceEvent::Restart { .. }
            | TraceEvent::Violation { .. }
            | TraceEvent::StoreFault { .. }
            | TraceEvent::Replicate { .. }
            | TraceEvent::Apply { .. }
            | TraceEvent::Follower { .. }
            | TraceEvent::Moved { .. }
            | TraceEvent::ServerSilent { .. }
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
    for (t, named, property) in violations {
        for (&c, client) in clients.iter_mut() {
            if named.is_empty() || named.contains(&(c as u16)) {
                client.lane.violations.push((t, property.clone()));
            }
        }
    }
    let ids: Vec<u16> = clients.keys().map(|&c| c as u16).collect();
    let producing = producers(lines);
    let mut lanes: Vec<Lane> = clients
        .into_iter()
        .map(|(c, client)| Lane {
            name: if producing.contains(&(c as u16)) {
                format!("client {c} (producer)")
            } else {
                format!("client {c}")
            },
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
        holds_key: app.map_or(String::new(), holds_key),
    };
    (timeline, ids)
}

/// The legend's words for a hold bar: `leads (term N)`, `processes (item N)`.
fn holds_key(app: App) -> String {
    let words = app.spec().hold;
    match words.token {
        Some(token) => format!("{} ({token} N)", words.verb),
        None => words.verb.to_string(),
    }
}

/// A run's producers (a queue's), read off its trace. The trace does not
/// name them, but a queue's producers are its first clients and never take
/// an item: they are the clients below the lowest one that took an item
/// (none where no client took one, or where the application has no
/// producers).
pub fn producers(lines: &[TraceLine]) -> BTreeSet<u16> {
    let mut has_producers = false;
    let mut first_taker: Option<u16> = None;
    for line in lines {
        if let TraceEvent::Start { recipe, .. } = &line.event {
            has_producers =
                crate::trace::app_of(recipe).is_some_and(|app| app.spec().hold.produces.is_some());
        }
        if let TraceEvent::Hold { client, .. } = &line.event {
            first_taker = Some(first_taker.map_or(*client, |f| f.min(*client)));
        }
    }
    match first_taker {
        Some(taker) if has_producers => (0..taker).collect(),
        _ => BTreeSet::new(),
    }
}
