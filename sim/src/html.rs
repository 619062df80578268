//! The per-run HTML timeline: one self-contained file (no network) with a
//! lane per client — holds as bars, red exactly where two holds overlap,
//! faults shaded for as long as they last (or marked where they are
//! instants), session expiry, connection states, every write to the guarded
//! resource with its token (accepted or rejected), watch notifications and
//! violations. Hovering shows the trace line; the buttons and Ctrl+wheel
//! zoom. The page draws itself from the data below it, which
//! [`TimelineData::from_trace`] computes (and the tests check).

use crate::scenario::FaultKind;
use crate::trace::{MsgKind, Party, TraceEvent, TraceLine};
use models::client::Connection;
use serde::Serialize;
use std::collections::BTreeMap;

/// An interval on a client's lane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    pub client: u16,
    pub from_us: u64,
    pub to_us: u64,
    /// What it is, for the eye (`pause`, `token 3`, …).
    pub label: String,
    /// The hover text.
    pub text: String,
}

/// An instant on a client's lane (`client` absent: every lane).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mark {
    pub client: Option<u16>,
    pub at_us: u64,
    pub kind: MarkKind,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    Crash,
    LostReply,
    Restart,
    Expire,
    Suspended,
    Reconnected,
    Lost,
    WriteAccepted,
    WriteRejected,
    Notify,
    Violation,
}

/// Everything the page draws.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimelineData {
    pub title: String,
    pub subtitle: String,
    pub clients: u16,
    pub end_us: u64,
    /// Believed holds (leaderships), from acquisition to release or crash.
    pub holds: Vec<Span>,
    /// Where a hold overlaps another client's hold: on each of the two lanes.
    pub overlaps: Vec<Span>,
    /// Faults that last: pause, partition, delay.
    pub faults: Vec<Span>,
    pub marks: Vec<Mark>,
    /// Every trace line but heartbeats, as the readable timeline prints it.
    pub lines: Vec<String>,
}

impl TimelineData {
    pub fn from_trace(title: &str, lines: &[TraceLine]) -> TimelineData {
        let mut d = TimelineData {
            title: title.to_string(),
            ..TimelineData::default()
        };
        let mut open: BTreeMap<u16, (u64, String)> = BTreeMap::new();
        for line in lines {
            let t = line.t;
            d.end_us = d.end_us.max(t);
            let text = line.to_string().trim_start().to_string();
            let mut mark = |client: Option<u16>, kind: MarkKind| {
                d.marks.push(Mark {
                    client,
                    at_us: t,
                    kind,
                    text: text.clone(),
                })
            };
            match &line.event {
                TraceEvent::Start {
                    scenario,
                    seed,
                    recipe,
                    clients,
                    rounds,
                    fencing,
                    policy,
                } => {
                    d.clients = *clients;
                    d.subtitle = format!(
                        "{scenario}, seed {seed}: {recipe}, {clients} clients, {rounds} round{}, \
                         {policy} policy, fencing {}",
                        if *rounds == 1 { "" } else { "s" },
                        if *fencing { "on" } else { "off" }
                    );
                }
                TraceEvent::Hold { client, token } => {
                    open.insert(*client, (t, format!("token {token}")));
                }
                TraceEvent::Release { client } => {
                    if let Some((from, label)) = open.remove(client) {
                        d.holds.push(hold(*client, from, t, label));
                    }
                }
                TraceEvent::Fault {
                    fault,
                    client,
                    duration_us,
                    ..
                } => match fault {
                    FaultKind::Pause | FaultKind::Partition | FaultKind::Delay => {
                        d.faults.push(Span {
                            client: *client,
                            from_us: t,
                            to_us: t + duration_us.unwrap_or(0),
                            label: fault.name().to_string(),
                            text,
                        })
                    }
                    FaultKind::Crash => {
                        mark(Some(*client), MarkKind::Crash);
                        if let Some((from, label)) = open.remove(client) {
                            d.holds.push(hold(*client, from, t, label));
                        }
                    }
                    FaultKind::LostReply => mark(Some(*client), MarkKind::LostReply),
                },
                TraceEvent::Restart { client } => mark(Some(*client), MarkKind::Restart),
                TraceEvent::Expire { client, .. } => mark(Some(*client), MarkKind::Expire),
                TraceEvent::Connection { client, state } => mark(
                    Some(*client),
                    match state {
                        Connection::Connected => MarkKind::Reconnected,
                        Connection::Suspended => MarkKind::Suspended,
                        Connection::Lost => MarkKind::Lost,
                    },
                ),
                TraceEvent::Write {
                    client, accepted, ..
                } => mark(
                    Some(*client),
                    if *accepted {
                        MarkKind::WriteAccepted
                    } else {
                        MarkKind::WriteRejected
                    },
                ),
                TraceEvent::Deliver {
                    to: Party::Client(c),
                    kind: MsgKind::Notify,
                    ..
                } => mark(Some(*c), MarkKind::Notify),
                TraceEvent::Violation { .. } => mark(None, MarkKind::Violation),
                TraceEvent::Deliver { .. }
                | TraceEvent::Timer { .. }
                | TraceEvent::Resume { .. }
                | TraceEvent::Heal { .. }
                | TraceEvent::DelayEnd { .. }
                | TraceEvent::End { .. } => {}
            }
            if !line.is_heartbeat() {
                d.lines.push(line.to_string());
            }
        }
        for (client, (from, label)) in open {
            d.holds.push(hold(client, from, d.end_us, label));
        }
        d.holds.sort_by_key(|h| (h.from_us, h.client));
        d.overlaps = overlaps(&d.holds);
        // Faults still on at the end are drawn to the end.
        for f in &mut d.faults {
            f.to_us = f.to_us.min(d.end_us.max(f.from_us));
        }
        d
    }
}

fn hold(client: u16, from_us: u64, to_us: u64, label: String) -> Span {
    let text = format!(
        "client {client} believes it holds ({label}) from {} to {}",
        crate::trace::secs(from_us),
        crate::trace::secs(to_us)
    );
    Span {
        client,
        from_us,
        to_us,
        label,
        text,
    }
}

/// For each pair of holds of two clients that overlap in time, the
/// overlapping interval on both lanes.
fn overlaps(holds: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    for (i, a) in holds.iter().enumerate() {
        for b in &holds[i + 1..] {
            let (from, to) = (a.from_us.max(b.from_us), a.to_us.min(b.to_us));
            if a.client == b.client || from >= to {
                continue;
            }
            for (me, other) in [(a, b), (b, a)] {
                out.push(Span {
                    client: me.client,
                    from_us: from,
                    to_us: to,
                    label: format!("overlaps client {}", other.client),
                    text: format!(
                        "clients {} and {} both believe they hold from {} to {}",
                        me.client,
                        other.client,
                        crate::trace::secs(from),
                        crate::trace::secs(to)
                    ),
                });
            }
        }
    }
    out.sort_by_key(|s| (s.client, s.from_us));
    out
}

/// The page for `lines` (a whole run's trace), titled `title`.
pub fn timeline_page(title: &str, lines: &[TraceLine]) -> String {
    let data = TimelineData::from_trace(title, lines);
    // `</` cannot end the script element early: JSON escapes it as `<\/`.
    let json = serde_json::to_string(&data)
        .expect("timeline data serialises")
        .replace("</", "<\\/");
    PAGE.replace("{{TITLE}}", &escape(title))
        .replace("{{DATA}}", &json)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PAGE: &str = include_str!("html/timeline.html");
