//! The per-run HTML timeline: one self-contained file (no network) with a
//! lane per client — holds as bars in the application's words (a lock's
//! tokens, an election's terms, a queue's items, an item taken twice
//! hatched), red exactly where two holds overlap, faults shaded for as long
//! as they last (or marked where they are instants), session expiry,
//! connection states, every write to the guarded resource (accepted or
//! rejected), watch notifications, a queue producer's enqueues, and each
//! violation on the lanes of the clients it names. Hovering shows the trace
//! line; the buttons, Ctrl+wheel and dragging zoom and pan, the time axis
//! follows the range shown, and `#view=FROM-TO` (virtual µs) in the address
//! shows a range (the page keeps it up to date, so a view can be shared).
//! The page draws itself from the data below it, which
//! [`TimelineData::from_trace`] computes (and the tests check); where marks
//! would cover each other the page stacks them, at every zoom.

use crate::trace::{secs, MsgKind, Party, TraceEvent, TraceLine};
use models::client::Connection;
use models::html::escape;
use models::msg::Timer;
use models::recipe::App;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

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
    /// A hold of an item some hold took before (a queue's duplicate).
    pub duplicate: bool,
}

/// An instant on a lane (`lane` absent: every lane).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mark {
    pub lane: Option<usize>,
    pub at_us: u64,
    pub kind: MarkKind,
    /// What the page writes beside the mark's glyph (a violation's
    /// property, an enqueued item); often nothing.
    pub label: String,
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
    /// A queue producer starts enqueuing an item.
    Enqueue,
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
    /// One lane per client: `client 0`, `client 1`, … (`client 0 (producer)`).
    pub lanes: Vec<String>,
    /// What the legend calls a hold bar, in the application's words.
    pub holds_key: String,
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
        let mut words = None;
        let mut enqueues = Enqueues {
            producers: crate::timeline::producers(lines),
            ..Enqueues::default()
        };
        let mut d = TimelineData {
            title: title.to_string(),
            lanes: chart.lanes.iter().map(|l| l.name.clone()).collect(),
            holds_key: chart.holds_key.clone(),
            end_us: chart.end_us,
            ..TimelineData::default()
        };
        for line in lines {
            let t = line.t;
            let text = || line.to_string().trim_start().to_string();
            let mut mark = |lane: Option<usize>, kind: MarkKind, label: String| {
                d.marks.push(Mark {
                    lane,
                    at_us: t,
                    kind,
                    label,
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
                    words = crate::trace::app_of(recipe).map(|app| app.spec().hold);
                    enqueues.rounds = u64::from(*rounds);
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
                TraceEvent::Restart { client } => {
                    enqueues.restarted.insert(*client);
                    mark(lane(*client), MarkKind::Restart, String::new())
                }
                TraceEvent::Write {
                    client, accepted, ..
                } => mark(
                    lane(*client),
                    if *accepted {
                        MarkKind::WriteAccepted
                    } else {
                        MarkKind::WriteRejected
                    },
                    String::new(),
                ),
                TraceEvent::Deliver {
                    to: Party::Client(c),
                    kind: MsgKind::Notify,
                    ..
                } => mark(lane(*c), MarkKind::Notify, String::new()),
                // On the lane of each client it names; naming none, on all.
                TraceEvent::Violation { property, clients } => {
                    let on: Vec<usize> = if clients.is_empty() {
                        (0..chart.lanes.len()).collect()
                    } else {
                        clients.iter().filter_map(|&c| lane(c)).collect()
                    };
                    for l in on {
                        mark(Some(l), MarkKind::Violation, property.to_string());
                    }
                }
                TraceEvent::Timer {
                    client,
                    timer: Timer::Think,
                } => {
                    if let Some(item) = enqueues.starts(*client) {
                        mark(lane(*client), MarkKind::Enqueue, item);
                    }
                }
                TraceEvent::Deliver { .. }
                | TraceEvent::Timer { .. }
                | TraceEvent::Fault { .. }
                | TraceEvent::Resume { .. }
                | TraceEvent::Heal { .. }
                | TraceEvent::DelayEnd { .. }
                | TraceEvent::Connection { .. }
                | TraceEvent::Release { .. }
                | TraceEvent::Expire { .. }
                | TraceEvent::StoreFault { .. }
                | TraceEvent::Replicate { .. }
                | TraceEvent::Apply { .. }
                | TraceEvent::Follower { .. }
                | TraceEvent::Moved { .. }
                | TraceEvent::ServerSilent { .. }
                | TraceEvent::End { .. } => {}
            }
            if !line.is_heartbeat() {
                d.lines.push(line.to_string());
            }
        }
        // Marks on other lanes' events are dropped with their lane.
        d.marks.retain(|m| m.lane.is_some());
        let words = words.unwrap_or(App::Lock.spec().hold);
        // Items are taken once: a second hold of one is a duplicate.
        let mut taken: BTreeMap<u64, usize> = BTreeMap::new();
        let mut holds: Vec<(u64, usize, u64, u64)> = Vec::new();
        for (i, l) in chart.lanes.iter().enumerate() {
            holds.extend(l.holds.iter().map(|&(from, to)| (from, i, from, to)));
        }
        holds.sort_unstable();
        for (_, i, from, to) in holds {
            let name = &chart.lanes[i].name;
            let token = tokens.get(&(i, from)).copied();
            let times = token.map_or(0, |t| {
                let n = taken.entry(t).or_default();
                *n += 1;
                *n
            });
            let duplicate = words.produces.is_some() && times > 1;
            let label = match (words.token, token) {
                (Some(word), Some(t)) if duplicate => format!("{word} {t} again"),
                (Some(word), Some(t)) => format!("{word} {t}"),
                (None, _) | (_, None) => words.verb.to_string(),
            };
            let text = format!(
                "{name} {} ({label}) from {} to {}",
                words.verb,
                secs(from),
                secs(to)
            );
            d.holds.push(Span {
                duplicate,
                ..span(i, from, to, label, text)
            });
        }
        for (i, l) in chart.lanes.iter().enumerate() {
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

/// A queue's producers' enqueues, read off their think timers: each starts
/// a round, whose item is numbered as the client loop numbers it
/// ([`models::client::Client::item`]: producer by producer, from 1).
#[derive(Default)]
struct Enqueues {
    producers: BTreeSet<u16>,
    rounds: u64,
    /// Rounds started, per producer.
    started: BTreeMap<u16, u64>,
    /// Producers that restarted: one may start a round again, so its round
    /// count, and the item numbers after it, are no longer known.
    restarted: BTreeSet<u16>,
}

impl Enqueues {
    /// The label of the enqueue `client`'s think timer starts, if it is a
    /// producer's: its item, where the trace tells which.
    fn starts(&mut self, client: u16) -> Option<String> {
        if !self.producers.contains(&client) {
            return None;
        }
        let round = self.started.entry(client).or_default();
        let item = u64::from(client) * self.rounds + *round + 1;
        *round += 1;
        Some(if self.restarted.contains(&client) {
            "an item".to_string()
        } else {
            format!("item {item}")
        })
    }
}

fn span(lane: usize, from_us: u64, to_us: u64, label: String, text: String) -> Span {
    Span {
        lane,
        from_us,
        to_us,
        label,
        text,
        duplicate: false,
    }
}

fn point(lane: usize, at_us: u64, kind: MarkKind, text: String) -> Mark {
    Mark {
        lane: Some(lane),
        at_us,
        kind,
        label: String::new(),
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
