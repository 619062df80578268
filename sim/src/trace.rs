//! The trace: one typed event per line, written as JSON Lines by the
//! simulator (and the validator) and read back by timelines and the
//! readable `--timeline` — with serde, never by hand or by substring.
//!
//! A line is `{"t": <virtual µs>, "event": "<kind>", ...fields}`.

use crate::scenario::FaultKind;
use models::client::Connection;
use models::ids::{ClientIdx, SessionId};
use models::msg::{Msg, Timer};
use models::properties::PropertyName;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One trace line: when, and what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceLine {
    /// Virtual time in microseconds.
    pub t: u64,
    #[serde(flatten)]
    pub event: TraceEvent,
}

/// Who sent or received a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Party {
    Store,
    Resource,
    Client(ClientIdx),
}

/// What kind of message was delivered (the text says the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MsgKind {
    Request,
    Reply,
    Close,
    Ping,
    Pong,
    Notify,
    Expired,
    Write,
    WriteAck,
}

impl MsgKind {
    pub fn of(m: &Msg) -> MsgKind {
        match m {
            Msg::Request { .. } => MsgKind::Request,
            Msg::Reply { .. } => MsgKind::Reply,
            Msg::Close { .. } => MsgKind::Close,
            Msg::Ping { .. } => MsgKind::Ping,
            Msg::Pong { .. } => MsgKind::Pong,
            Msg::Notify { .. } => MsgKind::Notify,
            Msg::Expired { .. } => MsgKind::Expired,
            Msg::Write { .. } => MsgKind::Write,
            Msg::WriteAck { .. } => MsgKind::WriteAck,
        }
    }

    /// Heartbeats, which readable timelines leave out.
    pub fn is_heartbeat(self) -> bool {
        matches!(self, MsgKind::Ping | MsgKind::Pong)
    }
}

/// How an ensemble's follower came to stand with the leader.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowerChange {
    /// A lag fault: it applies nothing for a while, still connected.
    Lags { duration_us: u64 },
    /// An isolation fault: cut off from the leader for a while.
    CutOff { duration_us: u64 },
    /// Cut off for syncLimit × tickTime, it gives the leader up.
    Dropped,
    /// A mute fault: the leader hears nothing from it for a while; it
    /// still hears the leader.
    Muted { duration_us: u64 },
    /// Muted for syncLimit × tickTime, the leader drops it.
    DroppedByLeader,
    /// It hears the leader again and follows it.
    Rejoins,
    /// A failover fault: the leader is cut off from its followers for a
    /// while; it goes on serving its clients, believing it leads.
    Deposed { duration_us: u64 },
    /// The followers elected it: it leads.
    Elected,
    /// A deposed leader's quorum check fails: it stops leading.
    StepsDown,
    /// etcd: the followers elected it after an election timeout: it leads,
    /// every lease is extended (its time-to-live again, and an election
    /// timeout more), and the members keep their clients.
    ElectedKeepingClients,
    /// etcd: a deposed leader that heard no quorum for an election timeout
    /// (CheckQuorum) stops leading; it keeps its clients, with no leader.
    StepsDownKeepingClients,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum TraceEvent {
    /// The run's settings.
    Start {
        scenario: String,
        seed: u64,
        recipe: String,
        clients: u16,
        rounds: u8,
        fencing: bool,
        policy: String,
    },
    /// A message arrived.
    Deliver {
        from: Party,
        to: Party,
        kind: MsgKind,
        msg: String,
    },
    /// A client's timer fired (heartbeat timers are not traced).
    Timer { client: ClientIdx, timer: Timer },
    /// A fault fired: for a lost reply, `what` is the reply that was lost.
    Fault {
        fault: FaultKind,
        client: ClientIdx,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_us: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        what: Option<String>,
    },
    /// A fault struck the store: a Redis master (a restart, a clock jump,
    /// a failover) or Consul's leader (a failover, naming no master); it
    /// names no client.
    StoreFault {
        fault: FaultKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        master: Option<u8>,
    },
    /// A change of the first Redis master reached its replica (`SET lock
    /// … PX …` or `DEL lock`, as the replication stream carries it).
    Replicate { change: String },
    /// An ensemble's follower (server `server`, 1 and up) applied the
    /// next committed change.
    Apply { server: u8, change: String },
    /// A ZooKeeper client heard nothing from its server (`server`, 0:
    /// the leader) for its read timeout, or its connect timeout while
    /// handshaking — the server held the session's request, and its pings'
    /// answers behind it — and gives the connection up; `moved` follows if
    /// another server takes it.
    ServerSilent { client: ClientIdx, server: u8 },
    /// A ZooKeeper client's reconnect landed on server `server` (0: the
    /// leader), after being refused by each of `refused`, which were
    /// behind its last seen zxid.
    Moved {
        client: ClientIdx,
        server: u8,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        refused: Vec<u8>,
    },
    /// An ensemble's follower (server `server`, 1 and up) changed how it
    /// stands with the leader.
    Follower { server: u8, change: FollowerChange },
    /// A crashed client restarted as a new process.
    Restart { client: ClientIdx },
    /// A paused client resumed.
    Resume { client: ClientIdx },
    /// A cut link healed.
    Heal { client: ClientIdx },
    /// A delay spike ended.
    DelayEnd { client: ClientIdx },
    /// A client library's connection state changed: SUSPENDED, RECONNECTED
    /// (back to connected), LOST.
    Connection {
        client: ClientIdx,
        state: Connection,
    },
    /// The guarded resource took (or, fenced, refused) a client's write.
    Write {
        client: ClientIdx,
        token: u64,
        accepted: bool,
    },
    /// A client came to believe it holds.
    Hold { client: ClientIdx, token: u64 },
    /// A client stopped believing it holds.
    Release { client: ClientIdx },
    /// The store expired a session.
    Expire {
        session: SessionId,
        client: ClientIdx,
    },
    /// A property was violated.
    Violation {
        property: PropertyName,
        clients: Vec<ClientIdx>,
    },
    /// The run ended.
    End {
        acquisitions: u64,
        violations: usize,
    },
}

impl TraceLine {
    /// The line as JSON (one line, no newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("trace lines serialise")
    }

    /// The line as a trace file holds it, JSON and a newline, in `out`
    /// (cleared first, so one buffer serves every line).
    pub fn json_line(&self, out: &mut Vec<u8>) {
        out.clear();
        serde_json::to_writer(&mut *out, self).expect("trace lines serialise");
        out.push(b'\n');
    }

    /// Parses one line of a trace file; an error says what is wrong and at
    /// which column.
    pub fn parse(line: &str) -> Result<TraceLine, String> {
        serde_json::from_str(line).map_err(|e| {
            // serde_json ends its message with "at line 1 column N"; in a
            // file of one event per line only the column says anything.
            let text = e.to_string();
            let position = format!(" at line {} column {}", e.line(), e.column());
            let what = text.strip_suffix(&position).unwrap_or(&text);
            format!("not a trace event: {what} (column {})", e.column())
        })
    }

    /// Whether this line is a heartbeat delivery.
    pub fn is_heartbeat(&self) -> bool {
        matches!(self.event, TraceEvent::Deliver { kind, .. } if kind.is_heartbeat())
    }
}

/// Parses a whole trace file's text (blank lines are skipped); an error
/// names the line. A trace has at least its `start` line, so a text without
/// any event is an error too.
pub fn parse_lines(text: &str) -> Result<Vec<TraceLine>, String> {
    let lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| TraceLine::parse(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    if lines.is_empty() {
        return Err("no trace events (the file is empty)".to_string());
    }
    Ok(lines)
}

/// Parses a whole trace as a run writes it: [`parse_lines`], and it must
/// open with its `start` line and close with its `end` line, so a file cut
/// short at a line boundary is an error too, not a shorter story.
///
/// It must also be one run's story: one `start` and one `end`, time that
/// never runs backwards, and no client beyond the `start` line's count
/// (a chart drawn from anything else would show what never ran).
pub fn parse_trace(text: &str) -> Result<Vec<TraceLine>, String> {
    // `run --trace-format chrome` writes one JSON object for Perfetto.
    let opening = text.trim_start().lines().next().unwrap_or_default();
    if opening.starts_with('{') && opening.contains("\"traceEvents\"") {
        return Err(
            "a Chrome trace (Trace Event Format, for Perfetto), not lockstep's \
                    JSON Lines trace: write one with `run --trace FILE` (the default format)"
                .to_string(),
        );
    }
    let lines = parse_lines(text)?;
    let (clients, rounds, policy) = match lines.first().map(|l| &l.event) {
        Some(TraceEvent::Start {
            clients,
            rounds,
            policy,
            ..
        }) => (*clients, *rounds, policy),
        _ => return Err("the trace does not open with its `start` line".to_string()),
    };
    // What a scenario can say, the `start` line can say: nothing else.
    let max = crate::scenario::MAX_SIM_CLIENTS;
    if clients == 0 || u32::from(clients) > max {
        return Err(format!(
            "the `start` line says {clients} clients: a run has 1 to {max}"
        ));
    }
    if !(1..=crate::scenario::MAX_ROUNDS).contains(&rounds) {
        return Err(format!(
            "the `start` line says {rounds} rounds: a run has 1 to {}",
            crate::scenario::MAX_ROUNDS
        ));
    }
    policy
        .parse::<models::client::Policy>()
        .map_err(|e| format!("the `start` line's policy: {e}"))?;
    // An `end` line with lines after it is a trace that goes on past its
    // run, not one cut short.
    let end = lines
        .iter()
        .position(|l| matches!(l.event, TraceEvent::End { .. }));
    if let Some(at) = end.filter(|&at| at + 1 < lines.len()) {
        return Err(format!(
            "event {} is the `end` line, and {} more line(s) follow it: a run's trace ends there",
            at + 1,
            lines.len() - at - 1
        ));
    }
    match lines.last().map(|l| &l.event) {
        Some(TraceEvent::End { .. }) => {}
        _ => {
            return Err(format!(
                "the trace stops after {} lines without its `end` line: it was cut short",
                lines.len()
            ))
        }
    }
    // Line numbers count the events (blank lines are skipped).
    for (i, pair) in lines.windows(2).enumerate() {
        let (before, line) = (&pair[0], &pair[1]);
        let n = i + 2;
        if line.t < before.t {
            return Err(format!(
                "event {n}: time goes back ({} after {}): not one run's trace",
                secs(line.t),
                secs(before.t)
            ));
        }
        match &line.event {
            TraceEvent::Start { .. } => {
                return Err(format!(
                    "event {n}: a second `start` line: two traces in one file"
                ))
            }
            // (An `end` line before the last was refused above.)
            TraceEvent::End { .. }
            | TraceEvent::Deliver { .. }
            | TraceEvent::Timer { .. }
            | TraceEvent::Fault { .. }
            | TraceEvent::Restart { .. }
            | TraceEvent::Resume { .. }
            | TraceEvent::Heal { .. }
            | TraceEvent::DelayEnd { .. }
            | TraceEvent::Connection { .. }
            | TraceEvent::Write { .. }
            | TraceEvent::Hold { .. }
            | TraceEvent::Release { .. }
            | TraceEvent::Expire { .. }
            | TraceEvent::StoreFault { .. }
            | TraceEvent::Replicate { .. }
            | TraceEvent::Apply { .. }
            | TraceEvent::Follower { .. }
            | TraceEvent::Moved { .. }
            | TraceEvent::ServerSilent { .. }
            | TraceEvent::Violation { .. } => {}
        }
        if let Some(c) = line
            .event
            .clients()
            .find(|&c| u32::from(c) >= u32::from(clients))
        {
            return Err(format!(
                "event {n}: client {c}, but the `start` line says {clients} clients (0..{clients})"
            ));
        }
    }
    Ok(lines)
}

impl TraceEvent {
    /// Every client the event names.
    pub fn clients(&self) -> impl Iterator<Item = ClientIdx> + '_ {
        let client = |p: &Party| match p {
            Party::Client(c) => Some(*c),
            Party::Store | Party::Resource => None,
        };
        let (named, many): ([Option<ClientIdx>; 2], &[ClientIdx]) = match self {
            TraceEvent::Start { .. }
            | TraceEvent::End { .. }
            | TraceEvent::StoreFault { .. }
            | TraceEvent::Replicate { .. }
            | TraceEvent::Apply { .. }
            | TraceEvent::Follower { .. } => ([None, None], &[]),
            TraceEvent::Deliver { from, to, .. } => ([client(from), client(to)], &[]),
            TraceEvent::Timer { client, .. }
            | TraceEvent::Fault { client, .. }
            | TraceEvent::Restart { client }
            | TraceEvent::Resume { client }
            | TraceEvent::Heal { client }
            | TraceEvent::DelayEnd { client }
            | TraceEvent::Connection { client, .. }
            | TraceEvent::Moved { client, .. }
            | TraceEvent::ServerSilent { client, .. }
            | TraceEvent::Write { client, .. }
            | TraceEvent::Hold { client, .. }
            | TraceEvent::Release { client }
            | TraceEvent::Expire { client, .. } => ([Some(*client), None], &[]),
            TraceEvent::Violation { clients, .. } => ([None, None], clients.as_slice()),
        };
        named.into_iter().flatten().chain(many.iter().copied())
    }
}

/// The trace hash: FNV-1a over each line's JSON and a newline — that is,
/// over the bytes of the JSON Lines file `run --trace` writes. The engine
/// computes the same value as it records.
pub fn hash(lines: &[TraceLine]) -> String {
    let mut h = FNV_OFFSET;
    let mut json = Vec::new();
    for line in lines {
        line.json_line(&mut json);
        h = fnv1a(h, &json);
    }
    format!("{h:016x}")
}

/// FNV-1a's offset basis (64-bit).
pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Folds `bytes` into the FNV-1a hash `h`.
pub(crate) fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl fmt::Display for Party {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Party::Store => f.write_str("store"),
            Party::Resource => f.write_str("resource"),
            Party::Client(c) => write!(f, "client {c}"),
        }
    }
}

/// A duration in microseconds as milliseconds: `625.971 ms`. Readable
/// output gives instants in seconds ([`secs`]) and durations in ms.
pub fn millis(us: u64) -> String {
    format!("{}.{:03} ms", us / 1000, us % 1000)
}

/// Seconds with microseconds: `5.336045 s`.
pub fn secs(us: u64) -> String {
    format!("{}.{:06} s", us / 1_000_000, us % 1_000_000)
}

/// The readable form: time, then what happened.
impl fmt::Display for TraceLine {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:>16}  {}", secs(self.t), self.event)
    }
}

/// What happened, in words (a trace line without its time).
impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            TraceEvent::Start {
                scenario,
                seed,
                recipe,
                clients,
                ..
            } => write!(
                f,
                "start {scenario} (seed {seed}): {recipe} with {clients} clients"
            ),
            TraceEvent::Deliver { from, to, msg, .. } => write!(f, "{from} → {to}: {msg}"),
            TraceEvent::Timer { client, timer } => write!(f, "client {client}: {timer}"),
            TraceEvent::Fault {
                fault,
                client,
                what,
                ..
            } => {
                write!(f, "FAULT {} of client {client}", fault.name())?;
                match what {
                    Some(w) => write!(f, ": {w} is lost"),
                    None => Ok(()),
                }
            }
            TraceEvent::Restart { client } => {
                write!(f, "client {client} restarts as a new process")
            }
            TraceEvent::Resume { client } => write!(f, "client {client} resumes"),
            TraceEvent::Heal { client } => write!(f, "client {client}'s link to the store heals"),
            TraceEvent::DelayEnd { client } => write!(f, "client {client}'s links are fast again"),
            TraceEvent::Connection { client, state } => {
                write!(f, "client {client}'s connection: {}", state.word())
            }
            TraceEvent::Write {
                client,
                token,
                accepted,
            } => {
                let verdict = if *accepted { "accepts" } else { "REJECTS" };
                write!(
                    f,
                    "resource {verdict} client {client}'s write with token {token}"
                )
            }
            TraceEvent::Hold { client, token } => {
                write!(f, "client {client} now holds (token {token})")
            }
            TraceEvent::Release { client } => write!(f, "client {client} no longer holds"),
            TraceEvent::Expire { session, .. } => write!(f, "store: session {session} expires"),
            // Consul: the leader, restored from a snapshot.
            TraceEvent::StoreFault {
                fault: FaultKind::Failover,
                master: None,
            } => write!(
                f,
                "FAULT the leader fails over: lock-delays forgotten, every session's TTL starts again"
            ),
            TraceEvent::StoreFault {
                fault,
                master: None,
            } => write!(f, "FAULT the store: {}", fault.name()),
            TraceEvent::StoreFault {
                fault,
                master: Some(master),
            } => {
                let what = match fault {
                    FaultKind::MasterRestart => "restarts",
                    FaultKind::ClockJump => "clock jumps forward: every key with a TTL expires",
                    FaultKind::Failover => "fails over: its replica is promoted",
                    FaultKind::Crash
                    | FaultKind::Pause
                    | FaultKind::Partition
                    | FaultKind::LostReply
                    | FaultKind::Delay
                    | FaultKind::Interrupt
                    | FaultKind::CheckCritical
                    | FaultKind::Lag
                    | FaultKind::Isolate
                    | FaultKind::Mute => fault.name(),
                };
                write!(f, "FAULT master {master}: {what}")
            }
            TraceEvent::Replicate { change } => {
                write!(f, "store: master 0's replica receives {change}")
            }
            TraceEvent::Apply { server, change } => {
                write!(f, "store: server {server} applies {change}")
            }
            TraceEvent::ServerSilent { client, server } => write!(
                f,
                "client {client} hears nothing from server {server} within its read or connect \
                 timeout (the server holds its request, and what it owes after it): it gives \
                 the connection up"
            ),
            TraceEvent::Moved {
                client,
                server,
                refused,
            } => write!(
                f,
                "store: client {client} reconnects {}",
                models::store::ensemble::moved_words(*server, refused)
            ),
            TraceEvent::Follower { server, change } => match change {
                FollowerChange::Lags { duration_us } => write!(
                    f,
                    "FAULT server {server} stops applying the leader's commits for {} ms",
                    duration_us / 1000
                ),
                FollowerChange::CutOff { duration_us } => write!(
                    f,
                    "FAULT server {server} is cut off from the leader for {} ms (it still serves \
                     its clients)",
                    duration_us / 1000
                ),
                FollowerChange::Dropped => write!(
                    f,
                    "store: server {server} gives the leader up (syncLimit × tickTime without \
                     it) and closes its clients' connections"
                ),
                FollowerChange::Muted { duration_us } => write!(
                    f,
                    "FAULT the leader hears nothing from server {server} for {} ms (it still \
                     hears the leader, applies its commits and serves its clients)",
                    duration_us / 1000
                ),
                FollowerChange::DroppedByLeader => write!(
                    f,
                    "store: the leader drops server {server} (syncLimit × tickTime without a \
                     word from it); server {server} closes its clients' connections"
                ),
                FollowerChange::Rejoins => {
                    write!(f, "store: server {server} follows the leader again")
                }
                FollowerChange::Deposed { duration_us } => write!(
                    f,
                    "FAULT server {server}, the leader, is cut off from its followers for {} ms \
                     (it still serves its clients, believing it leads)",
                    duration_us / 1000
                ),
                FollowerChange::Elected => write!(
                    f,
                    "store: the followers elect server {server} (the most log, the highest id); \
                     it leads, every session's timer starts again, and the servers close their \
                     clients' connections"
                ),
                FollowerChange::StepsDown => write!(
                    f,
                    "store: server {server} finds no quorum (syncLimit × tickTime and a tick \
                     without one) and stops leading; it closes its clients' connections"
                ),
                FollowerChange::ElectedKeepingClients => write!(
                    f,
                    "store: the followers elect server {server} (an election timeout without a \
                     leader); it leads, every lease starts its time-to-live again and an \
                     election timeout more, and the members keep their clients"
                ),
                FollowerChange::StepsDownKeepingClients => write!(
                    f,
                    "store: server {server} hears no quorum for an election timeout \
                     (CheckQuorum) and stops leading; it keeps its clients, with no leader: it \
                     answers no keepalive, and their requests wait"
                ),
            },
            TraceEvent::Violation { property, clients } => {
                let list: Vec<String> = clients.iter().map(|c| c.to_string()).collect();
                write!(f, "VIOLATION {property} by clients [{}]", list.join(","))
            }
            TraceEvent::End {
                acquisitions,
                violations,
            } => write!(
                f,
                "end: {acquisitions} acquisitions, {violations} violations"
            ),
        }
    }
}

/// The application of the recipe a trace's `start` line names (`name` or
/// `name (variant)`), when lockstep ships it.
pub fn app_of(recipe: &str) -> Option<models::recipe::App> {
    let name = recipe.split(" (").next().unwrap_or(recipe);
    models::recipes::find(name)
        .ok()
        .map(|r| (r.build)(None).app())
}
