//! The per-run HTML timeline: one self-contained file (no network) with a
//! lane per client — holds as bars, red exactly where two holds overlap,
//! faults shaded for as long as they last (or marked where they are
//! instants), session expiry, connection states, every write to the guarded
//! resource with its token (accepted or rejected), watch notifications and
//! violations. Hovering shows the trace line; the buttons and Ctrl+wheel
//! zoom. The page draws itself from the data below it, which
//! [`TimelineData::from_trace`] computes (and the tests check).

use crate::trace::{secs, MsgKind, Party, TraceEvent, TraceLine};
use models::client::Connection;
use models::html::escape;
use serde::Serialize;
use std::collections::BTreeMap;

/// An interval on a lane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Span {
    pub lane: usize,
    pub from_us: u64,
    pub to_us: u64,
    /// What it is, for the eye (`pause`, `token 3`, …).
    pub label: String,
    /// The hover text.
    pub text: String,
}

/// An instant on a lane (`lane` absent: every lane).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mark {
    pub lane: Option<usize>,
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

/// Everything the page draws. The holds, overlaps, fault spans, crashes,
/// expiries and connection states are the holders timeline's
/// ([`crate::timeline::timeline_from_trace`], one reading of a trace for
/// the chart and the page); the page adds writes, notifications, restarts
/// and violations, and the trace lines.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimelineData {
    pub title: String,
    pub subtitle: String,
    /// One lane per client: `client 0`, `client 1`, …
    pub lanes: Vec<String>,
    pub end_us: u64,
    /// Believed holds (leaderships), from acquisition to release or crash.
    pub holds: Vec<Span>,
    /// Where a hold overlaps another client's hold.
    pub overlaps: Vec<Span>,
    /// Faults that last: pause, partition, delay.
    pub faults: Vec<Span>,
    pub marks: Vec<Mark>,
    /// Every trace line but heartbeats, as the readable timeline prints it.
    pub lines: Vec<String>,
    /// The lane of each client that has one.
    #[serde(skip)]
    pub lane_of: BTreeMap<u16, usize>,
}

impl TimelineData {
    pub fn from_trace(title: &str, lines: &[TraceLine]) -> TimelineData {
        let (chart, ids) = crate::timeline::timeline_with_clients(title, lines);
        let lane_of: BTreeMap<u16, usize> = ids.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        let lane = |c: u16| lane_of.get(&c).copied();
        let mut tokens: BTreeMap<(usize, u64), u64> = BTreeMap::new();
        let mut d = TimelineData {
            title: title.to_string(),
            lanes: chart.lanes.iter().map(|l| l.name.clone()).collect(),
            end_us: chart.end_us,
            ..TimelineData::default()
        };
        for line in lines {
            let t = line.t;
            let text = || line.to_string().trim_start().to_string();
            let mut mark = |lane: Option<usize>, kind: MarkKind| {
                d.marks.push(Mark {
                    lane,
                    at_us: t,
                    kind,
                    text: text(),
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
                    d.subtitle = format!(
                        "{scenario}, seed {seed}: {recipe}, {clients} clients, {rounds} round{}, \
                         {policy} policy, fencing {}",
                        if *rounds == 1 { "" } else { "s" },
                        if *fencing { "on" } else { "off" }
                    );
                }
                TraceEvent::Hold { client, token } => {
                    if let Some(l) = lane(*client) {
                        tokens.entry((l, t)).or_insert(*token);
                    }
                }
                TraceEvent::Restart { client } => mark(lane(*client), MarkKind::Restart),
                TraceEvent::Write {
                    client, accepted, ..
                } => mark(
                    lane(*client),
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
                } => mark(lane(*c), MarkKind::Notify),
                TraceEvent::Violation { .. } => mark(None, MarkKind::Violation),
                TraceEvent::Deliver { .. }
                | TraceEvent::Timer { .. }
                | TraceEvent::Fault { .. }
                | TraceEvent::Resume { .. }
                | TraceEvent::Heal { .. }
                | TraceEvent::DelayEnd { .. }
                | TraceEvent::Connection { .. }
                | TraceEvent::Release { .. }
                | TraceEvent::Expire { .. }
                | TraceEvent::End { .. } => {}
            }
            if !line.is_heartbeat() {
                d.lines.push(line.to_string());
            }
        }
        // Marks on other lanes' events are dropped with their lane.
        d.marks
            .retain(|m| m.lane.is_some() || m.kind == MarkKind::Violation);
        for (i, l) in chart.lanes.iter().enumerate() {
            for &(from, to) in &l.holds {
                let label = tokens
                    .get(&(i, from))
                    .map_or("holds".to_string(), |t| format!("token {t}"));
                let text = format!(
                    "{} believes it holds ({label}) from {} to {}",
                    l.name,
                    secs(from),
                    secs(to)
                );
                d.holds.push(span(i, from, to, label, text));
            }
            for &(from, to) in &l.overlaps {
                let text = format!(
                    "{} and another client both believe they hold from {} to {}",
                    l.name,
                    secs(from),
                    secs(to)
                );
                d.overlaps
                    .push(span(i, from, to, "overlap".to_string(), text));
            }
            for (from, to, kind) in &l.spans {
                let text = format!("{kind} of {} from {} to {}", l.name, secs(*from), secs(*to));
                d.faults.push(span(i, *from, *to, kind.clone(), text));
            }
            for (at, what) in &l.faults {
                let kind = if what == "crash" {
                    MarkKind::Crash
                } else {
                    MarkKind::LostReply
                };
                d.marks.push(point(
                    i,
                    *at,
                    kind,
                    format!("{what} of {} at {}", l.name, secs(*at)),
                ));
            }
            for &at in &l.expiries {
                let text = format!("{}'s session expires at {}", l.name, secs(at));
                d.marks.push(point(i, at, MarkKind::Expire, text));
            }
            for (at, state) in &l.states {
                let kind = if state == Connection::Suspended.word() {
                    MarkKind::Suspended
                } else if state == Connection::Lost.word() {
                    MarkKind::Lost
                } else {
                    MarkKind::Reconnected
                };
                let text = format!("{}'s connection: {state} at {}", l.name, secs(*at));
                d.marks.push(point(i, *at, kind, text));
            }
        }
        d.marks.sort_by_key(|m| (m.at_us, m.lane));
        d.lane_of = lane_of;
        d
    }
}

fn span(lane: usize, from_us: u64, to_us: u64, label: String, text: String) -> Span {
    Span {
        lane,
        from_us,
        to_us,
        label,
        text,
    }
}

fn point(lane: usize, at_us: u64, kind: MarkKind, text: String) -> Mark {
    Mark {
        lane: Some(lane),
        at_us,
        kind,
        text,
    }
}

/// The page for `lines` (a whole run's trace), titled `title`.
pub fn timeline_page(title: &str, lines: &[TraceLine]) -> String {
    let data = TimelineData::from_trace(title, lines);
    // No `<` at all inside the script element (`</script>`, `<!--`): in
    // JSON strings it is written `\u003c`.
    let json = serde_json::to_string(&data)
        .expect("timeline data serialises")
        .replace('<', "\\u003c");
    // One pass, so nothing in the title or the data is taken for a marker.
    let (head, rest) = PAGE.split_once("{{TITLE}}").expect("the page has a title");
    let (middle, tail) = rest.split_once("{{DATA}}").expect("the page has data");
    [head, &escape(title), middle, &json, tail].concat()
}

const PAGE: &str = include_str!("html/timeline.html");
