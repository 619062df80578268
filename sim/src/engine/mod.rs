//! The discrete-event engine. It drives the `models` actors themselves —
//! `on_start`, `on_msg`, `on_timeout` — and schedules the commands they return
//! on a virtual clock (integer microseconds). Events are ordered by
//! (time, sequence number); every random draw comes from a named stream of
//! the scenario's seed; nothing reads the wall clock. Same scenario and seed,
//! same trace, byte for byte.
//!
//! Links are FIFO per (sender, receiver), like the TCP connections they
//! stand for: a message leaves after a latency drawn from the scenario's
//! range, but never before the one sent ahead of it. Faults:
//! - crash: the client process stops; its connection closes (the store sends
//!   it nothing more); with a duration it restarts as a new process with its
//!   saved storage and a new session (unless the scenario says `restart =
//!   false`: then every crash is for good);
//! - pause: the process is frozen with its timers and inbox; on resume, what
//!   came due meanwhile runs at once, in order;
//! - partition: the client–store link carries nothing; what was sent either
//!   way waits and arrives, in order, once it heals (or is lost with the
//!   connection, past the read timeout);
//! - lost reply: the store's next reply to that client is applied but never
//!   arrives, so the client resends (its resend timer waits while the
//!   request or reply is merely late, as the checker's does);
//! - delay: extra latency on the client's links for a while.
//!
//! Modules, one job each: `queue` (events in virtual time), `faults`
//! (drawing a run's faults), `recorder` (the typed trace and its hash),
//! `outcome` (what a run reports); the property monitors are the models'
//! (`models::properties`). This module runs the actors, the links and the
//! faults, and feeds the monitors.

mod faults;
mod lent;
mod outcome;
mod queue;
mod recorder;
mod timers;

pub use faults::{draw_faults, run_faults};
use lent::Lender;
pub use outcome::{FaultRecord, Metrics, Outcome, RunEnd, Summary, Violation};
use queue::{Awaited, Event, EventQueue, Queued};
use recorder::Recorder;
pub use recorder::TraceOptions;
use timers::{Due, FewTimers, ManyTimers, Setting, TimerEntry, TimerSet};

use crate::rng::{between, stream};
use crate::scenario::{
    FaultKind, FollowerFault, Scenario, DEFAULT_SYNC_LIMIT_MS, DEFAULT_TICK_MS,
    EVENTS_AT_ONE_INSTANT_PER_CLIENT, MAX_EVENTS_AT_ONE_INSTANT,
};
use crate::trace::{FollowerChange, MsgKind, Party, TraceEvent};
use models::client::{Client, ClientState, ClientStorage, Connection, Marks, Phase};
use models::ids::{client_id, client_of, resource_id, store_id, ClientIdx, SessionId};
use models::msg::{Msg, Request, RequestClass, RequestKind, Timer};
use models::properties::{
    is_release, observe_client, observe_notified, observe_release, observe_resource, observe_store,
    Monitors, Observation, PropertyName, Woken,
};
use models::recipe::{App, Face};
use models::resource::{Resource, ResourceState};
use models::store::ensemble::LeaderLink;
use models::store::ensemble::{Notified, Tally as EnsembleTally};
use models::store::{Elected, Store, StoreState};
use rand_chacha::ChaCha8Rng;
use stateright::actor::{Actor, Command, Id, Out};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Paused,
    Crashed,
}

struct ClientRt {
    /// Always owned: actor steps change it where it lies, with nothing to
    /// copy in or out (the model checker's borrowed states copy on write).
    state: Cow<'static, ClientState>,
    status: Status,
    storage: Option<ClientStorage>,
    /// Timer → (deadline, generation); a fired or re-set timer's old event is stale.
    timers: FewTimers,
    /// Per link (see [`link`]), when its last message arrives (FIFO).
    link_clock: [u64; 4],
    /// Events that came due while paused.
    frozen: Vec<Queued>,
    partitioned: bool,
    /// When the current partition began.
    cut_since_us: u64,
    /// When the client last heard from the store: its read timeout runs
    /// from there.
    heard_us: u64,
    /// When the client's current connection was made: a read timeout runs
    /// from then at the earliest (the client's clock of the last word heard
    /// starts again with each connection).
    connected_us: u64,
    /// The `since_us` an unanswered ping's check is queued for: one check
    /// a silence, however many pings go unanswered in it.
    silence_checked: Option<u64>,
    /// Messages held on the cut client–store link, both ways, in send order.
    cut_link: Vec<Queued>,
    /// What still counts of the store link's messages sent before its
    /// current connection was made.
    old_link: OldLink,
    extra_latency_us: u64,
    lose_next_reply: Option<usize>,
    /// When the current acquisition started (for wait times).
    acquire_started_us: Option<u64>,
    /// Crashed or done: nothing more is expected of it.
    finished: bool,
    /// The connection state last traced.
    connection: Connection,
    /// What the monitors last saw of the client (its barrier leave, whether
    /// it was idle; the holders list says whether it held).
    seen: Marks,
    /// The application's requests it sent (its session's upkeep aside),
    /// against its livelock budget ([`Sim::spend_request`]).
    requests: u64,
    /// Reported as livelocked (once a run).
    livelocked: bool,
}

/// The messages of a client's store link sent before a new connection
/// (sequence number below `since_seq`): they went with the old one, but for
/// those a reconnect keeps (`survives_reconnect`); a new process keeps only
/// what its predecessor sent to the store, as a crash does.
#[derive(Clone, Copy)]
struct OldLink {
    since_seq: u64,
    keeps: Keeps,
}

#[derive(Clone, Copy)]
enum Keeps {
    Survivors { session_alive: bool },
    ToStoreOnly,
}

impl OldLink {
    /// No connection made anew yet: every message counts.
    const NONE: OldLink = OldLink {
        since_seq: 0,
        keeps: Keeps::ToStoreOnly,
    };

    fn drops(&self, seq: u64, from: Id, msg: &Msg) -> bool {
        seq < self.since_seq
            && match self.keeps {
                Keeps::Survivors { session_alive } => {
                    !models::model::survives_reconnect(msg, session_alive)
                }
                Keeps::ToStoreOnly => from == store_id(),
            }
    }
}

impl ClientRt {
    fn is_finished(&self) -> bool {
        self.status == Status::Crashed || self.state.phase == Phase::Done
    }
}

/// Appends a trace event at the current time, built only when the trace is
/// recorded.
macro_rules! trace {
    ($sim:expr, $event:expr) => {
        if $sim.recorder.is_on() {
            let t = $sim.now;
            $sim.recorder.record(t, $event);
        }
    };
}

pub struct Sim<'a> {
    scenario: &'a Scenario,
    now: u64,
    queue: EventQueue,
    store: Store,
    /// Owned, like a client's state.
    store_state: Cow<'static, StoreState>,
    store_timers: ManyTimers,
    resource: Resource,
    resource_state: Cow<'static, ResourceState>,
    client: Client,
    clients: Vec<ClientRt>,
    /// The random streams a run draws from.
    draws: Draws,
    replication: ReplicationClock,
    /// An ensemble: each follower's stream of commits, as the
    /// replication's (FIFO, one event per entry).
    applies: Vec<ReplicationClock>,
    faults: Vec<FaultRecord>,
    /// The property monitors, fed as things happen.
    monitors: Monitors,
    /// Clients that believe they hold (for hand-off timing and the trace).
    holders: Vec<ClientIdx>,
    violations: Vec<Violation>,
    /// What the run measures as it goes.
    tally: Tally,
    /// Clients neither crashed nor done.
    unfinished: usize,
    recorder: Recorder<'a>,
    /// Numbers timer settings, so a fired timer's event can tell it is the
    /// latest setting.
    generation: u64,
    /// The command buffers lent to each kind of actor's steps.
    lenders: Lenders,
    /// Told how the run is going every [`PROGRESS_EVERY`] events (a long
    /// run's progress line); it sees the run, never steers it.
    progress: Option<Watcher<'a>>,
}

/// The random streams of a run, each derived from its seed by name.
struct Draws {
    /// Message latencies.
    latency: ChaCha8Rng,
    /// Timer durations drawn from a range.
    timers: ChaCha8Rng,
    /// A Redis replica's lag (drawn only in a deployment with one).
    replication: ChaCha8Rng,
    /// An ensemble's followers' apply delays (drawn only with one).
    applies: ChaCha8Rng,
}

/// The replication stream from the first Redis master to its replica: a
/// change reaches it a drawn lag after it was made, never before the one
/// made ahead of it (the stream is FIFO), one event per change.
#[derive(Default)]
struct ReplicationClock {
    /// How many of the backlog's changes have their event queued.
    scheduled: usize,
    /// A follower's lag fault: it applies nothing from `stopped_from_us`
    /// (for a lag or a cut, when it struck; for a mute, the leader's drop)
    /// until `stopped_until_us`.
    stopped_from_us: u64,
    stopped_until_us: u64,
    /// When the last change queued reaches the replica.
    last_us: u64,
    /// Bumped when the backlog is lost (a failover, a restart of the
    /// master): the events queued for it then arrive to nothing.
    generation: u64,
}

impl ReplicationClock {
    /// When something due at `at` happens: at the stop's end if the stop
    /// holds it.
    fn after_stop(&self, at: u64) -> u64 {
        match at >= self.stopped_from_us {
            true => at.max(self.stopped_until_us),
            false => at,
        }
    }

    /// A new stream, stopped until `stopped_until_us`: what was queued for
    /// the old one arrives to nothing (a failover's old leader, its new
    /// one).
    fn start_anew(&mut self, stopped_until_us: u64) {
        *self = ReplicationClock {
            generation: self.generation + 1,
            stopped_until_us,
            ..ReplicationClock::default()
        };
    }
}

/// What a run measures as it goes; `Metrics` at its end.
struct Tally {
    metrics: Metrics,
    /// Store requests by kind (`RequestKind as usize`), counted here and
    /// put in `metrics` at the end: a counter per request, not a map.
    store_requests: [u64; RequestKind::ALL.len()],
    last_release_us: Option<u64>,
    handoffs: Vec<u64>,
    waits: Vec<u64>,
    /// An ensemble's changes, by header: their rows in the metrics'
    /// notifications per change and per release, which grow as the
    /// followers apply them.
    rows: BTreeMap<u64, HerdRows>,
}

/// Where one change of an ensemble is counted in the metrics.
#[derive(Clone, Copy, Debug, Default)]
struct HerdRows {
    change: Option<usize>,
    release: Option<usize>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            metrics: Metrics::default(),
            store_requests: [0; RequestKind::ALL.len()],
            last_release_us: None,
            handoffs: Vec::new(),
            waits: Vec::new(),
            rows: BTreeMap::new(),
        }
    }
}

impl Tally {
    /// Notifications of an ensemble's change, `added` of them by the step
    /// just taken: its rows in the metrics, opened on the first.
    fn count_change(&mut self, t: &EnsembleTally, added: u32) {
        let m = &mut self.metrics;
        let rows = self.rows.entry(t.header).or_default();
        if added > 0 {
            match rows.change {
                Some(i) => m.notifications_per_change[i] += added,
                None => {
                    rows.change = Some(m.notifications_per_change.len());
                    m.notifications_per_change.push(t.woken.count());
                }
            }
        }
        if t.release {
            match rows.release {
                Some(i) => m.notifications_per_release[i] += added,
                None => {
                    rows.release = Some(m.notifications_per_release.len());
                    m.notifications_per_release.push(t.woken.count());
                }
            }
        }
    }
}

/// The command buffers lent to each kind of actor's steps.
#[derive(Default)]
struct Lenders {
    client: Lender<Client>,
    store: Lender<Store>,
    resource: Lender<Resource>,
}

/// How far a run has gone, for a progress line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Virtual time now.
    pub now_us: u64,
    /// Where the run will stop at the latest: the file's `duration_ms`, or
    /// the liveness bound after the last fault.
    pub limit_us: u64,
    pub events: u64,
    /// Clients neither crashed nor done.
    pub unfinished: usize,
}

/// What a watched run tells how far it has gone.
type Watcher<'a> = Box<dyn FnMut(&Progress) + 'a>;

/// Requests a client may send for each unit of the run's work before it
/// is reported livelocked ([`Sim::spend_request`]): generous — a waiter of
/// a herd asks two or three times a release — yet a client that retries
/// without end is caught within a few hundred requests.
pub const REQUESTS_PER_WORK: u64 = 64;

/// Events between two [`Progress`] reports (a power of two).
pub const PROGRESS_EVERY: u64 = 1 << 14;

impl<'a> Sim<'a> {
    /// A simulation of `scenario` with `seed`, its trace recorded as `trace`
    /// asks.
    pub fn new(scenario: &'a Scenario, seed: u64, trace: TraceOptions<'a>) -> Self {
        let faults = run_faults(scenario, seed);
        let store = scenario.store();
        let client = scenario.client();
        let mut sim = Sim {
            scenario,
            now: 0,
            queue: EventQueue::default(),
            store_state: Cow::Owned(store.initial_state()),
            store,
            store_timers: ManyTimers::default(),
            resource: Resource::new(scenario.fencing),
            resource_state: Cow::Owned(ResourceState::default()),
            monitors: Monitors::for_run(scenario.recipe.app(), client.roles(), scenario.permits),
            client,
            clients: Vec::new(),
            draws: Draws {
                latency: stream(seed, "latency"),
                timers: stream(seed, "timers"),
                replication: stream(seed, "replication"),
                applies: stream(seed, "applies"),
            },
            replication: ReplicationClock::default(),
            applies: Vec::new(),
            faults: faults
                .into_iter()
                .map(|fault| FaultRecord {
                    fault,
                    fired: false,
                })
                .collect(),
            holders: Vec::new(),
            violations: Vec::new(),
            tally: Tally::default(),
            unfinished: 0,
            recorder: Recorder::new(trace),
            generation: 0,
            lenders: Lenders::default(),
            progress: None,
        };
        trace!(
            sim,
            TraceEvent::Start {
                scenario: scenario.name.clone(),
                seed,
                recipe: scenario.recipe.to_string(),
                clients: scenario.clients,
                rounds: scenario.rounds,
                fencing: scenario.fencing,
                policy: scenario.policy.to_string(),
            }
        );
        for i in 0..sim.faults.len() {
            let at = sim.faults[i].fault.at_ms * 1000;
            sim.push(at, Event::FaultStart(i));
        }
        for c in 0..scenario.clients {
            sim.clients.push(ClientRt {
                state: Cow::Owned(ClientState::new(models::ids::SessionId::first(c))),
                status: Status::Running,
                storage: None,
                timers: FewTimers::default(),
                link_clock: [0; 4],
                frozen: Vec::new(),
                partitioned: false,
                cut_since_us: 0,
                heard_us: 0,
                connected_us: 0,
                silence_checked: None,
                cut_link: Vec::new(),
                old_link: OldLink::NONE,
                extra_latency_us: 0,
                lose_next_reply: None,
                acquire_started_us: None,
                finished: false,
                connection: Connection::Connected,
                seen: ClientState::new(models::ids::SessionId::first(c)).marks(),
                requests: 0,
                livelocked: false,
            });
            sim.unfinished += 1;
            sim.start_client(c);
        }
        sim
    }

    fn push(&mut self, at: u64, event: Event) {
        self.queue.push(at, event);
    }

    fn start_client(&mut self, c: ClientIdx) {
        let mut out = self.lenders.client.lend();
        let storage = self.clients[c as usize].storage;
        let state = self.client.on_start(client_id(c), &storage, &mut out);
        let since_seq = self.queue.next_seq();
        let rt = &mut self.clients[c as usize];
        // A new process starts with a connection of its own: nothing its
        // predecessor's connection carried reaches it.
        rt.old_link = OldLink {
            since_seq,
            keeps: Keeps::ToStoreOnly,
        };
        rt.connection = state.connection;
        rt.heard_us = self.now;
        rt.connected_us = self.now;
        rt.state = Cow::Owned(state);
        rt.status = Status::Running;
        self.apply_client_out(c, out);
        self.after_client_step(c);
    }

    fn send(&mut self, from: Id, to: Id, msg: Msg) {
        // Every link has one client end: its delay is the link's.
        let (c, l) = link(from, to);
        let rt = &mut self.clients[c as usize];
        let (lo, hi) = self.scenario.timing.latency_us;
        let arrive = self.now + between(&mut self.draws.latency, lo, hi) + rt.extra_latency_us;
        let clock = &mut rt.link_clock[l];
        let at = arrive.max(*clock);
        *clock = at;
        self.push(at, Event::Deliver { from, to, msg });
    }

    fn set_timer(&mut self, actor: Id, timer: Timer, range: std::ops::Range<Duration>) {
        let lo = range.start.as_micros() as u64;
        let hi = (range.end.as_micros() as u64).saturating_sub(1).max(lo);
        let at = self.now + between(&mut self.draws.timers, lo, hi);
        self.generation += 1;
        let setting = Setting {
            generation: self.generation,
            at,
            seq: self.queue.reserve_seq(),
        };
        let entry = match client_of(actor) {
            Some(c) => self.clients[c as usize].timers.entry(timer),
            None => self.store_timers.entry(timer),
        };
        let replaced = entry.carrier.is_some();
        if entry.arm(setting) {
            self.queue.push_at(
                at,
                setting.seq,
                Event::Timer {
                    actor,
                    timer,
                    generation: setting.generation,
                },
            );
            if replaced {
                self.timer_went_stale();
            }
        }
    }

    /// A cancelled timer's event stays queued: when it comes, nothing fires
    /// (or a later setting takes it over).
    fn cancel_timer(&mut self, actor: Id, timer: Timer) {
        let entry = match client_of(actor) {
            Some(c) => self.clients[c as usize].timers.entry(timer),
            None => self.store_timers.entry(timer),
        };
        entry.armed = None;
    }

    /// What a timer event that came due means; a timer set again for later
    /// is queued again there.
    fn timer_came_due(&mut self, actor: Id, timer: Timer, generation: u64) -> Due {
        let timers: &mut dyn TimerSet = match client_of(actor) {
            Some(c) => &mut self.clients[c as usize].timers,
            None => &mut self.store_timers,
        };
        let due = match timers.get(&timer) {
            Some(_) => timers.entry(timer).came_due(generation),
            None => Due::Stale,
        };
        match due {
            Due::Stale | Due::Fires => {}
            Due::Cancelled => timers.remove(&timer),
            Due::Later(s) => self.queue.push_at(
                s.at,
                s.seq,
                Event::Timer {
                    actor,
                    timer,
                    generation: s.generation,
                },
            ),
        }
        due
    }

    /// A timer set again before its event came leaves that event in the
    /// queue.
    fn timer_went_stale(&mut self) {
        let (clients, store_timers) = (&self.clients, &self.store_timers);
        self.queue
            .went_stale(|e| is_stale(clients, store_timers, e));
    }

    fn apply_client_out(&mut self, c: ClientIdx, out: Out<Client>) {
        let me = client_id(c);
        let mut commands = Lender::commands(out);
        for cmd in commands.drain(..) {
            match cmd {
                Command::Send(to, msg) => self.send(me, to, msg),
                Command::SetTimer(t, r) => self.set_timer(me, t, r),
                Command::CancelTimer(t) => self.cancel_timer(me, t),
                Command::Save(s) => self.clients[c as usize].storage = Some(s),
                Command::ChooseRandom(..) => {}
            }
        }
        self.lenders.client.give_back(commands);
    }

    /// Store output. Returns whom its notifications to live clients woke.
    fn apply_store_out(&mut self, out: Out<Store>) -> Woken {
        let ensemble = self.store_state.ensemble.is_some();
        let mut n = Notified::default();
        let mut commands = Lender::commands(out);
        for cmd in commands.drain(..) {
            match cmd {
                Command::Send(to, msg) => {
                    let c = client_of(to).expect("the store sends only to clients");
                    let rt = &mut self.clients[c as usize];
                    if rt.status == Status::Crashed {
                        continue; // its connection closed with it
                    }
                    if matches!(msg, Msg::Reply { .. }) {
                        if let Some(i) = rt.lose_next_reply.take() {
                            self.faults[i].fired = true;
                            trace!(
                                self,
                                TraceEvent::Fault {
                                    fault: FaultKind::LostReply,
                                    client: c,
                                    duration_us: None,
                                    what: Some(msg.to_string()),
                                }
                            );
                            continue;
                        }
                    }
                    if self.client.counts_in_herd(c) && n.add(c, &msg, ensemble) {
                        self.count_per_server(c);
                    }
                    self.send(store_id(), to, msg);
                }
                Command::SetTimer(t, r) => self.set_timer(store_id(), t, r),
                Command::CancelTimer(t) => self.cancel_timer(store_id(), t),
                Command::Save(_) | Command::ChooseRandom(..) => {}
            }
        }
        self.lenders.store.give_back(commands);
        let notifications = n.woken.count();
        self.tally.metrics.notifications += notifications as u64;
        if notifications > 0 {
            let e = match ensemble {
                true => self.store_state.to_mut().ensemble.as_deref_mut(),
                false => None,
            };
            let (seen, tallies) = observe_notified(e, &n);
            match ensemble {
                false => self
                    .tally
                    .metrics
                    .notifications_per_change
                    .push(notifications),
                true => {
                    for (t, sent) in tallies.iter().zip(&n.by_change) {
                        self.tally.count_change(t, sent.woken.count());
                    }
                }
            }
            for obs in seen {
                self.observe(obs);
            }
        }
        // Counted: the tallies of changes every server has applied go.
        if ensemble
            && self
                .store_state
                .ensemble
                .as_ref()
                .is_some_and(|e| e.tallies_to_prune())
        {
            let e = self.store_state.to_mut().ensemble.as_mut();
            e.expect("an ensemble").prune_tallies();
        }
        n.woken
    }

    /// A notification to client `c` went out through its server: counted
    /// per server over an ensemble.
    fn count_per_server(&mut self, c: ClientIdx) {
        let Some(e) = self.store_state.ensemble.as_ref() else {
            return;
        };
        let per = &mut self.tally.metrics.notifications_per_server;
        per.resize(usize::from(e.servers()), 0);
        per[usize::from(e.server(c))] += 1;
    }

    /// Bookkeeping after a client acted: acquisitions, releases, the
    /// mutual-exclusion check.
    /// Keeps the count of unfinished clients right after client `c` changed.
    fn refresh_finished(&mut self, c: ClientIdx) {
        // A role that counts no rounds — a queue's consumer, an election's
        // observer — runs for as long as the run has something for it:
        // waiting for a watch, it has nothing left to do.
        let endless = !self.client.role(c).counts_rounds();
        let rt = &mut self.clients[c as usize];
        let finished = rt.is_finished() || (endless && rt.state.is_waiting());
        if finished != rt.finished {
            rt.finished = finished;
            if finished {
                self.unfinished -= 1;
            } else {
                self.unfinished += 1;
            }
        }
    }

    fn after_client_step(&mut self, c: ClientIdx) {
        self.refresh_finished(c);
        let now = self.now;
        let connection = self.clients[c as usize].state.connection;
        if connection != self.clients[c as usize].connection {
            self.clients[c as usize].connection = connection;
            trace!(
                self,
                TraceEvent::Connection {
                    client: c,
                    state: connection
                }
            );
        }
        let rt = &mut self.clients[c as usize];
        if rt.state.phase == Phase::Acquiring && rt.acquire_started_us.is_none() {
            rt.acquire_started_us = Some(now);
        }
        let before = Marks {
            holding: self.holders.contains(&c),
            ..rt.seen
        };
        rt.seen = rt.state.marks();
        let rt = &self.clients[c as usize];
        let Some(obs) = observe_client(c, before, &rt.state) else {
            return;
        };
        match obs {
            Observation::Acquired(a) => {
                let rt = &mut self.clients[c as usize];
                if let Some(started) = rt.acquire_started_us.take() {
                    self.tally.waits.push(now - started);
                }
                self.tally.metrics.acquisitions += 1;
                if let Some(r) = self.tally.last_release_us.take() {
                    self.tally.handoffs.push(now - r);
                }
                self.holders.push(c);
                trace!(
                    self,
                    TraceEvent::Hold {
                        client: c,
                        token: a.token,
                    }
                );
            }
            Observation::Released { .. } => self.released(c),
            Observation::Left { .. } | Observation::Idle { .. } | Observation::Reentered { .. } => {
            }
            Observation::WriteAccepted { .. }
            | Observation::WriteRejected { .. }
            | Observation::ReleaseStep { .. }
            | Observation::Crashed { .. }
            | Observation::Dequeued { .. }
            | Observation::Woke { .. }
            | Observation::StaleSync { .. }
            | Observation::NamedStale { .. } => {}
        }
        self.observe(obs);
    }

    /// Client `c` no longer believes it holds.
    fn released(&mut self, c: ClientIdx) {
        let now = self.now;
        self.holders.retain(|&h| h != c);
        self.tally.last_release_us = Some(now);
        let rt = &mut self.clients[c as usize];
        if rt.state.phase != Phase::Acquiring {
            rt.acquire_started_us = None;
        }
        trace!(self, TraceEvent::Release { client: c });
    }

    /// Feeds the monitors what the store's last step removed from a queue.
    fn observe_store(&mut self, removed_before: usize) {
        for obs in observe_store(removed_before, &self.store_state) {
            self.observe(obs);
        }
    }

    /// What tells a release step: the store's header (a ZooKeeper or etcd
    /// store moves it on every change), and a Redis lock's holder by the
    /// store's keys (a delete moves no header there).
    fn release_mark(&self) -> (u64, Option<SessionId>) {
        (
            self.store_state.header(),
            self.store_state.majority_holder(),
        )
    }

    /// Whether the store's steps since `before` released: changed a
    /// store with watches, or took a Redis lock from its holder.
    fn released_since(&self, before: (u64, Option<SessionId>)) -> bool {
        let (header, holder) = self.release_mark();
        match self.store_state.redis.is_empty() {
            true => header != before.0,
            false => before.1.is_some() && holder != before.1,
        }
    }

    /// A release step's notifications woke `woken`. Over an ensemble they
    /// are the leader's: each follower's join them as it applies the
    /// release (`apply_store_out`).
    fn release_step(&mut self, woken: Woken) {
        let header = self.store_state.header();
        let e = match self.store_state.ensemble.is_some() {
            true => self.store_state.to_mut().ensemble.as_deref_mut(),
            false => None,
        };
        let (obs, tally) = observe_release(e, woken, header);
        match tally {
            Some(t) => self.tally.count_change(&t, 0),
            None => self
                .tally
                .metrics
                .notifications_per_release
                .push(woken.count()),
        }
        self.observe(obs);
    }

    /// Feeds the monitors and reports what they find, as it happens.
    fn observe(&mut self, obs: Observation) {
        for breach in self.monitors.observe(obs) {
            self.violation(breach.property, breach.clients);
        }
    }

    /// The run-level check `fault_free_session_loss`: session `s` expires
    /// now. Without any fault fired so far, nothing should have kept its
    /// client from renewing it (the scenario check refuses timing that
    /// would), so an expiry of the session the client still uses — it is
    /// not done — is a violation, reported once a run. A done client's
    /// session may expire quietly: it stopped heartbeating on purpose.
    fn check_fault_free_expiry(&mut self, s: SessionId) {
        let property = PropertyName::FaultFreeSessionLoss;
        let client = &self.clients[s.client as usize].state;
        let in_use = client.session.same_session(s) && client.phase != Phase::Done;
        let fault_fired = self.faults.iter().any(|f| f.fired);
        let reported = self.violations.iter().any(|v| v.property == property);
        if in_use && !fault_fired && !reported {
            self.violation(property, vec![s.client]);
        }
    }

    /// A client's request against its livelock budget: a client that keeps
    /// sending while the run does no work — a consumer retrying an element
    /// another took, forever — breaks the application's progress goal, as
    /// the checker's cycle of a client's own requests does. The budget is
    /// [`REQUESTS_PER_WORK`] for each unit of the run's work so far: each
    /// round the scenario gives a client, each acquisition of any client
    /// (a release wakes waiters, who ask again), each fault fired (a
    /// client resends and reconnects), and one to start. Reported once a
    /// client, naming it; the run goes on.
    fn spend_request(&mut self, c: ClientIdx) {
        let rt = &mut self.clients[c as usize];
        rt.requests += 1;
        if rt.livelocked {
            return;
        }
        let sent = rt.requests;
        let work = 1 + u64::from(self.scenario.rounds) + self.tally.metrics.acquisitions;
        // Faults are counted only when the rest of the budget is spent.
        if sent <= REQUESTS_PER_WORK * work {
            return;
        }
        let fired = self.faults.iter().filter(|f| f.fired).count() as u64;
        if sent > REQUESTS_PER_WORK * (work + fired) {
            self.clients[c as usize].livelocked = true;
            let property = progress_of(self.client.recipe.app());
            self.violation(property, vec![c]);
        }
    }

    fn violation(&mut self, property: PropertyName, clients: Vec<ClientIdx>) {
        trace!(
            self,
            TraceEvent::Violation {
                property,
                clients: clients.clone(),
            }
        );
        self.violations.push(Violation {
            property,
            at_us: self.now,
            clients,
        });
    }

    fn deliver(&mut self, from: Id, to: Id, msg: Msg) {
        let party = |id: Id| match client_of(id) {
            Some(c) => Party::Client(c),
            None if id == store_id() => Party::Store,
            None => Party::Resource,
        };
        trace!(
            self,
            TraceEvent::Deliver {
                from: party(from),
                to: party(to),
                kind: MsgKind::of(&msg),
                msg: msg.to_string(),
            }
        );
        if to == store_id() {
            if let Msg::Request { req, .. } = &msg {
                self.tally.store_requests[req.kind() as usize] += 1;
                if let (Some(c), false) =
                    (client_of(from), req.kind().class() == RequestClass::Session)
                {
                    self.spend_request(c);
                }
            }
            let release = is_release(&msg);
            // Only a server of an ensemble holds a request (`pings_wait`).
            let unanswered = client_of(from)
                .filter(|_| self.store_state.ensemble.is_some())
                .and_then(|c| self.awaits(c, &msg).map(|a| (c, a)));
            let before = self.release_mark();
            let removed_before = self.store_state.items_removed();
            let mut out = self.lenders.store.lend();
            self.store
                .on_msg(store_id(), &mut self.store_state, from, msg, &mut out);
            let n = self.apply_store_out(out);
            self.schedule_store_events();
            self.observe_store(removed_before);
            // A release step that changed the store.
            if release && self.released_since(before) {
                self.release_step(n);
            }
            if let Some((c, (awaited, at, session))) = unanswered {
                if self.store_state.pings_wait(session) {
                    self.check_silence(c, awaited, at);
                }
            }
        } else if to == resource_id() {
            let mut out = self.lenders.resource.lend();
            let write = msg.clone();
            self.resource
                .on_msg(resource_id(), &mut self.resource_state, from, msg, &mut out);
            let mut commands = Lender::commands(out);
            for cmd in commands.drain(..) {
                match cmd {
                    Command::Send(to, msg) => {
                        let writer = client_of(from).expect("writes come from clients");
                        if let (Msg::Write { token, .. }, Msg::WriteAck { accepted, .. }) =
                            (&write, &msg)
                        {
                            if !accepted {
                                self.tally.metrics.rejected_writes += 1;
                            }
                            trace!(
                                self,
                                TraceEvent::Write {
                                    client: writer,
                                    token: *token,
                                    accepted: *accepted,
                                }
                            );
                        }
                        if let Some(obs) = observe_resource(writer, &write, &msg) {
                            self.observe(obs);
                        }
                        if client_of(to)
                            .is_some_and(|c| self.clients[c as usize].status != Status::Crashed)
                        {
                            self.send(resource_id(), to, msg);
                        }
                    }
                    // The resource only answers.
                    Command::SetTimer(..)
                    | Command::CancelTimer(..)
                    | Command::Save(..)
                    | Command::ChooseRandom(..) => {}
                }
            }
            self.lenders.resource.give_back(commands);
        } else if let Some(c) = client_of(to) {
            let mut out = self.lenders.client.lend();
            self.client
                .on_msg(to, &mut self.clients[c as usize].state, from, msg, &mut out);
            self.apply_client_out(c, out);
            self.after_client_step(c);
        }
    }

    /// A message reaches its link's far end: held there if the link is
    /// cut, kept in a paused client's inbox, dropped at a crashed one, or
    /// delivered.
    fn arrive(&mut self, q: Queued) {
        let Event::Deliver { from, to, msg } = q.event else {
            unreachable!("only messages arrive")
        };
        let c = client_of(to)
            .or(client_of(from))
            .expect("every link has a client end");
        let rt = &mut self.clients[c as usize];
        let store_link = from == store_id() || to == store_id();
        if client_of(to).is_some() && rt.status == Status::Crashed {
            return;
        }
        if store_link && rt.old_link.drops(q.seq, from, &msg) {
            return; // it went with a connection since made anew
        }
        if store_link && rt.partitioned {
            rt.cut_link.push(Queued {
                event: Event::Deliver { from, to, msg },
                ..q
            });
            return;
        }
        if client_of(to).is_some() && rt.status == Status::Paused {
            rt.frozen.push(Queued {
                event: Event::Deliver { from, to, msg },
                ..q
            });
            return;
        }
        if from == store_id() {
            rt.heard_us = self.now;
        }
        self.deliver(from, to, msg);
    }

    /// Whether client `c`'s outstanding request, or the store's reply to
    /// it, is still on its way (queued, or held on a cut link): the
    /// client's resend timer then waits, by the checker's own rule
    /// (`models::model::awaited_on_link`). A real client resends only on a
    /// new connection; a request the store answered but whose reply was
    /// lost is the one case a resend timer stands for.
    fn request_in_flight(&self, c: ClientIdx) -> bool {
        let rt = &self.clients[c as usize];
        let epoch = rt.state.epoch;
        let on_its_way = |e: &Event| {
            let Event::Deliver { from, to, msg } = e else {
                return false;
            };
            let to_store = client_of(*from) == Some(c) && *to == store_id();
            let to_client = *from == store_id() && client_of(*to) == Some(c);
            (to_store || to_client) && models::model::awaited_on_link(msg, to_store, epoch)
        };
        rt.cut_link.iter().any(|q| on_its_way(&q.event))
            || self.queue.any(on_its_way)
            || self.store_state.holds_reply(c, epoch)
    }

    fn fault_start(&mut self, i: usize) {
        let f = self.faults[i].fault.clone();
        if f.kind.strikes_the_store() {
            return self.store_fault(i);
        }
        let c = f.client as ClientIdx;
        let status = self.clients[c as usize].status;
        let done = self.clients[c as usize].state.phase == Phase::Done;
        let duration = f.duration_ms.map(|d| d * 1000);
        let acquiring = self.clients[c as usize].state.phase == Phase::Acquiring;
        let fired = match f.kind {
            FaultKind::Crash if status != Status::Crashed && !done => {
                let rt = &mut self.clients[c as usize];
                rt.status = Status::Crashed;
                rt.timers.clear();
                rt.frozen.clear();
                rt.cut_link.clear();
                rt.partitioned = false;
                if let Some(d) = duration {
                    self.push(self.now + d, Event::FaultEnd(i));
                }
                // A crashed process believes nothing any more.
                if self.holders.contains(&c) {
                    self.released(c);
                }
                self.observe(Observation::Crashed { client: c });
                self.refresh_finished(c);
                true
            }
            FaultKind::Pause if status == Status::Running && !done => {
                self.clients[c as usize].status = Status::Paused;
                self.push(self.now + duration.unwrap_or(0), Event::FaultEnd(i));
                true
            }
            FaultKind::Partition
                if status != Status::Crashed && !done && !self.clients[c as usize].partitioned =>
            {
                self.clients[c as usize].partitioned = true;
                self.clients[c as usize].cut_since_us = self.now;
                let end = self.now + duration.unwrap_or(0);
                self.push(end, Event::FaultEnd(i));
                // The ZooKeeper client's read timeout (etcd's client has no
                // SUSPENDED; its reconnect comes with the heal).
                let drops = self.drops_at_us(c);
                if drops <= end && self.client.recipe.face() == Face::ZooKeeper {
                    self.push(drops.max(self.now), Event::ReadTimeout(i));
                }
                true
            }
            FaultKind::LostReply if status != Status::Crashed && !done => {
                // Fires when the store next replies to this client.
                self.clients[c as usize].lose_next_reply = Some(i);
                false
            }
            FaultKind::Delay if status != Status::Crashed && !done => {
                self.clients[c as usize].extra_latency_us = f.extra_ms.unwrap_or(0) * 1000;
                self.push(self.now + duration.unwrap_or(0), Event::FaultEnd(i));
                true
            }
            FaultKind::Interrupt if status == Status::Running && acquiring => {
                return self.interrupt(i, c);
            }
            FaultKind::CheckCritical if !done => return self.check_critical(i, c),
            // Struck above.
            FaultKind::MasterRestart
            | FaultKind::ClockJump
            | FaultKind::Failover
            | FaultKind::Lag
            | FaultKind::Isolate
            | FaultKind::Mute => false,
            // The client is past this fault (crashed, done, already cut
            // off, or not running to be paused): it does not fire, and the
            // summary says so.
            FaultKind::Crash
            | FaultKind::Pause
            | FaultKind::Partition
            | FaultKind::LostReply
            | FaultKind::Delay
            | FaultKind::Interrupt
            | FaultKind::CheckCritical => false,
        };
        if fired {
            self.faults[i].fired = true;
            trace!(
                self,
                TraceEvent::Fault {
                    fault: f.kind,
                    client: c,
                    duration_us: duration,
                    what: None,
                }
            );
        }
    }

    /// The application interrupts client `c`'s acquisition (fault `i`):
    /// traced first, then the client's step (`Client::on_interrupt`).
    fn interrupt(&mut self, i: usize, c: ClientIdx) {
        self.faults[i].fired = true;
        trace!(
            self,
            TraceEvent::Fault {
                fault: FaultKind::Interrupt,
                client: c,
                duration_us: None,
                what: None,
            }
        );
        let mut out = self.lenders.client.lend();
        let rt = &mut self.clients[c as usize];
        self.client.on_interrupt(&mut rt.state, &mut out);
        self.apply_client_out(c, out);
        self.after_client_step(c);
    }

    /// Consul: client `c`'s node check goes critical (fault `i`). The
    /// store invalidates the client's session at once
    /// (`Store::check_critical`): its key released or deleted under its
    /// lock-delay, its blocking queries and its owner told. The fault is
    /// the node's, not the process's, so it strikes a paused or crashed
    /// client's session too; it fires only if that session is alive.
    fn check_critical(&mut self, i: usize, c: ClientIdx) {
        let session = self
            .store_state
            .known(self.clients[c as usize].state.session);
        if !self.store_state.is_alive(session) {
            return;
        }
        self.faults[i].fired = true;
        trace!(
            self,
            TraceEvent::Fault {
                fault: FaultKind::CheckCritical,
                client: c,
                duration_us: None,
                what: None,
            }
        );
        trace!(self, TraceEvent::Expire { session, client: c });
        let before = self.release_mark();
        let removed_before = self.store_state.items_removed();
        let mut out = self.lenders.store.lend();
        self.store
            .check_critical(&mut self.store_state, session, &mut out);
        let n = self.apply_store_out(out);
        self.observe_store(removed_before);
        // An invalidation that released (or deleted) the key is a release
        // step, as an expiry's is.
        if self.released_since(before) {
            self.release_step(n);
        }
    }

    fn fault_end(&mut self, i: usize) {
        let f = self.faults[i].fault.clone();
        let c = f.client as ClientIdx;
        let what = match f.kind {
            FaultKind::Crash => {
                // A new process: the old one's connection, and its
                // watches, are gone (real etcd cancels a watch with its
                // stream; ZooKeeper's die with the connection).
                self.store_state.to_mut().connection_closed(c);
                self.start_client(c);
                TraceEvent::Restart { client: c }
            }
            FaultKind::Pause => {
                if self.clients[c as usize].status != Status::Paused {
                    return;
                }
                let alive = models::model::session_carries_on(
                    &self.store_state,
                    &self.clients[c as usize].state,
                );
                // Past its read timeout a ZooKeeper client drops the
                // connection before it reads what came meanwhile, and
                // reconnects; etcd's gRPC connection survives a pause.
                // A client whose link is still cut only notices the silence
                // now; its reconnect comes with the heal.
                // A server that gave the leader up while the client was
                // frozen closed its connection: the client finds it closed.
                let closed = self.store_state.link_of(c) == LeaderLink::Down;
                let past = self.client.recipe.face() == Face::ZooKeeper
                    && (!alive || closed || self.now >= self.drops_at_us(c));
                let cut = self.clients[c as usize].partitioned;
                let reconnect = past && !cut;
                let rt = &mut self.clients[c as usize];
                rt.status = Status::Running;
                let frozen = std::mem::take(&mut rt.frozen);
                trace!(self, TraceEvent::Resume { client: c });
                if reconnect {
                    self.reconnect(c, alive);
                } else if past {
                    self.disconnect(c);
                }
                for q in frozen {
                    let lost = matches!(&q.event, Event::Deliver { from, msg, .. }
                        if reconnect && *from == store_id()
                            && !models::model::survives_reconnect(msg, alive));
                    if let Event::Timer {
                        actor,
                        timer,
                        generation,
                    } = q.event
                    {
                        // Settled now, as if it came due now: the reconnect
                        // above may have set the timer again, and a setting
                        // due now must keep its own place among this
                        // instant's events, not come after them.
                        match self.timer_came_due(actor, timer, generation) {
                            Due::Fires => {
                                let entry = self.clients[c as usize].timers.entry(timer);
                                entry.carrier = Some((generation, self.now));
                                self.push(self.now, q.event);
                            }
                            // Its number is taken all the same, so every
                            // later event's is what it was.
                            Due::Stale | Due::Cancelled | Due::Later(_) => {
                                self.queue.reserve_seq();
                            }
                        }
                        continue;
                    }
                    if !lost {
                        self.push(self.now, q.event);
                    }
                }
                return;
            }
            FaultKind::Partition => {
                let alive = models::model::session_carries_on(
                    &self.store_state,
                    &self.clients[c as usize].state,
                );
                let drops = self.drops_at_us(c);
                let rt = &mut self.clients[c as usize];
                if !rt.partitioned {
                    return; // a crash ended the cut already
                }
                rt.partitioned = false;
                // Past the client's read timeout (2/3 of the session
                // timeout), or past the session itself, the connection is
                // given up and made anew: what was in flight on it is lost,
                // and the client resends. So is one a server closed (it
                // gave the leader up) while the link was cut.
                let closed = self.store_state.link_of(c) == LeaderLink::Down;
                let rt = &mut self.clients[c as usize];
                let reconnect = !alive || closed || self.now >= drops;
                let held = std::mem::take(&mut rt.cut_link);
                if !reconnect {
                    // The connection survived: what the cut held arrives
                    // now, in the order sent, ahead of anything sent after
                    // it (FIFO, as TCP delivers it once the path is back).
                    trace!(self, TraceEvent::Heal { client: c });
                    for q in held {
                        self.arrive(q);
                    }
                    return;
                }
                for q in held {
                    if let Event::Deliver { from, to, msg } = q.event {
                        if models::model::survives_reconnect(&msg, alive) {
                            self.send(from, to, msg);
                        }
                    }
                }
                if self.clients[c as usize].status == Status::Running {
                    self.reconnect(c, alive);
                }
                TraceEvent::Heal { client: c }
            }
            FaultKind::Delay => {
                self.clients[c as usize].extra_latency_us = 0;
                TraceEvent::DelayEnd { client: c }
            }
            // Instantaneous: nothing ends.
            FaultKind::LostReply
            | FaultKind::Interrupt
            | FaultKind::CheckCritical
            | FaultKind::MasterRestart
            | FaultKind::ClockJump
            | FaultKind::Failover
            | FaultKind::Lag
            | FaultKind::Isolate
            | FaultKind::Mute => return,
        };
        trace!(self, what);
    }

    /// A store fault: a Redis master's restart, clock jump or failover, or
    /// a Consul leader's failover, as the store carries it out
    /// (`Store::restart_master`, `jump_clock`, `fail_over`). It always
    /// fires — a master with `appendfsync always` restarts too, and loses
    /// nothing — whatever it changes.
    fn store_fault(&mut self, i: usize) {
        let f = self.faults[i].fault.clone();
        if let Some(kind) = f.kind.follower_fault() {
            return self.strike_follower(i, kind);
        }
        if f.kind == FaultKind::Failover && self.store_state.ensemble.is_some() {
            return self.depose_leader(i);
        }
        let master = f.master.and_then(|m| u8::try_from(m).ok()).unwrap_or(0);
        let mut out = self.lenders.store.lend();
        let store = &self.store;
        let state = &mut self.store_state;
        let fired = match f.kind {
            FaultKind::MasterRestart => {
                store.restart_master(state, master, &mut out);
                true
            }
            FaultKind::ClockJump => {
                store.jump_clock(state, master, &mut out);
                true
            }
            FaultKind::Failover => {
                store.fail_over(state, &mut out);
                true
            }
            // Struck by `lag`, `isolate` and `mute`.
            FaultKind::Lag | FaultKind::Isolate | FaultKind::Mute => false,
            FaultKind::Crash
            | FaultKind::Pause
            | FaultKind::Partition
            | FaultKind::LostReply
            | FaultKind::Delay
            | FaultKind::Interrupt
            | FaultKind::CheckCritical => false,
        };
        self.apply_store_out(out);
        self.schedule_store_events();
        if fired {
            self.faults[i].fired = true;
            trace!(
                self,
                TraceEvent::StoreFault {
                    fault: f.kind,
                    // Consul's leader names no master.
                    master: f.master.map(|_| master),
                }
            );
        }
    }

    /// A fault that strikes a follower (`kind`). A lag: it applies nothing
    /// for the fault's duration, then what it missed, in order. An
    /// isolation cuts it off from the leader too: it gives the leader up
    /// after syncLimit × tickTime if the cut lasts that long, and follows
    /// it again when the cut heals. A mute holds only what it sends the
    /// leader: it applies on, and the leader drops it after syncLimit ×
    /// tickTime if the mute lasts that long (it then applies nothing until
    /// the mute ends and it follows again).
    fn strike_follower(&mut self, i: usize, kind: FollowerFault) {
        let f = &self.faults[i].fault;
        // Checked against the ensemble when the scenario was read.
        let server = f.server.map_or(0, |s| s as u8);
        let duration_us = f.duration_ms.unwrap_or(0) * 1000;
        let e = self.store_state.ensemble.as_ref().expect("an ensemble");
        // A server that leads now (after a failover) has nothing to lag.
        let Some(follower) = e.slot(server) else {
            return;
        };
        let until = self.now + duration_us;
        let limit = self.scenario.timing.sync_limit_us.unwrap_or(u64::MAX);
        // Where its applies stop: from the start of a lag or a cut, from
        // the leader's drop of a muted follower (none if it is not
        // dropped).
        let stops_from = match kind {
            FollowerFault::Mute => (limit < duration_us).then(|| self.now + limit),
            FollowerFault::Lag | FollowerFault::Isolate => Some(self.now),
        };
        if let Some(from) = stops_from {
            let clock = self.apply_clock(server);
            clock.stopped_from_us = from;
            clock.stopped_until_us = clock.stopped_until_us.max(until);
        }
        self.faults[i].fired = true;
        let change = match kind {
            FollowerFault::Lag => FollowerChange::Lags { duration_us },
            FollowerFault::Isolate => FollowerChange::CutOff { duration_us },
            FollowerFault::Mute => FollowerChange::Muted { duration_us },
        };
        trace!(self, TraceEvent::Follower { server, change });
        match kind {
            FollowerFault::Lag => return,
            FollowerFault::Isolate => self.store.cut_off(&mut self.store_state, follower),
            FollowerFault::Mute => self.store.mute(&mut self.store_state, follower),
        }
        if limit < duration_us {
            self.push(self.now + limit, Event::FollowerDrop { server });
        }
        self.push(self.now + duration_us, Event::Rejoin { server });
    }

    /// Server `server`'s stream of commits to apply (its own index, not
    /// a follower slot's: slots move in a failover).
    fn apply_clock(&mut self, server: u8) -> &mut ReplicationClock {
        let i = usize::from(server);
        if self.applies.len() <= i {
            self.applies.resize_with(i + 1, ReplicationClock::default);
        }
        &mut self.applies[i]
    }

    /// A leader failover begins: the leader is cut off from its followers
    /// for the fault's duration (`Store::depose_leader`). It goes on
    /// serving its clients — reads and `sync`s from its own state, their
    /// writes lost — until its quorum check fails, syncLimit × tickTime
    /// and a tick after the cut; the followers give it up after syncLimit
    /// × tickTime and elect a new leader at once.
    fn depose_leader(&mut self, i: usize) {
        let f = &self.faults[i].fault;
        let duration_us = f.duration_ms.unwrap_or(0) * 1000;
        let e = self.store_state.ensemble.as_ref().expect("an ensemble");
        if e.deposed().is_some() {
            return; // a leader is cut off already: refused when read
        }
        let server = e.leader;
        let mut out = self.lenders.store.lend();
        self.store.depose_leader(&mut self.store_state, &mut out);
        self.apply_store_out(out);
        self.faults[i].fired = true;
        trace!(
            self,
            TraceEvent::Follower {
                server,
                change: FollowerChange::Deposed { duration_us },
            }
        );
        let until = self.now + duration_us;
        self.apply_clock(server).start_anew(until);
        let timing = &self.scenario.timing;
        // etcd: the followers elect another after an election timeout,
        // and the old leader's CheckQuorum steps it down then too (after
        // the election, in the queue's order). ZooKeeper: syncLimit ×
        // tickTime, and a tick more for the old leader's quorum check.
        let (limit, tick) = match timing.election_timeout_us {
            Some(election) => (election, 0),
            None => (
                timing.sync_limit_us.unwrap_or(DEFAULT_SYNC_LIMIT_MS * 1000),
                timing.tick_us.unwrap_or(DEFAULT_TICK_MS * 1000),
            ),
        };
        self.push(self.now + limit, Event::Elect);
        if limit + tick < duration_us {
            self.push(self.now + limit + tick, Event::FollowerDrop { server });
        }
        self.push(self.now + duration_us, Event::Rejoin { server });
    }

    /// The followers elect a new leader (`Store::elect`): every client not
    /// on the deposed leader finds its connection closed and reconnects.
    fn elect(&mut self) {
        let before = self.release_mark();
        let mut out = self.lenders.store.lend();
        // etcd's lessor adds an election timeout to every lease.
        let extend = self.scenario.timing.election_timeout_us.unwrap_or(0);
        let elected = self.store.elect(
            &mut self.store_state,
            &mut out,
            Duration::from_micros(extend),
        );
        let n = self.apply_store_out(out);
        let Some(Elected {
            leader: server,
            reconnect: clients,
            passed_on_release,
        }) = elected
        else {
            return;
        };
        if passed_on_release && self.released_since(before) {
            self.release_step(n);
        }
        self.apply_clock(server).start_anew(0);
        let change = match self.leases() {
            true => FollowerChange::ElectedKeepingClients,
            false => FollowerChange::Elected,
        };
        trace!(self, TraceEvent::Follower { server, change });
        self.reconnect_closed(&clients);
        self.schedule_store_events();
    }

    /// Whether the store is an etcd cluster, whose sessions are leases
    /// and whose members keep their clients through a leader change.
    fn leases(&self) -> bool {
        self.store_state
            .ensemble
            .as_ref()
            .is_some_and(|e| e.cfg.0.leases)
    }

    /// The clients whose server closed their connections: each running
    /// one reconnects at once; a paused or cut-off one finds the
    /// connection closed when its own fault ends.
    fn reconnect_closed(&mut self, clients: &[ClientIdx]) {
        for &c in clients {
            let rt = &self.clients[usize::from(c)];
            if rt.status != Status::Running || rt.partitioned {
                continue;
            }
            let alive = self.store_state.is_alive(rt.state.session);
            self.reconnect(c, alive);
        }
    }

    /// A cut-off follower gives the leader up (`Learner.shutdown`): it
    /// closes its clients' connections, and each running client reconnects
    /// to another server at once (SUSPENDED, then RECONNECTED or LOST).
    /// A paused or cut-off client finds the connection closed when its
    /// own fault ends.
    fn follower_drop(&mut self, server: u8) {
        let e = self.store_state.ensemble.as_ref().expect("an ensemble");
        let Some(f) = e.slot(server) else {
            return; // it leads now
        };
        let (change, clients) = match e.followers[f].link {
            LeaderLink::Deposed => (
                match e.cfg.0.leases {
                    true => FollowerChange::StepsDownKeepingClients,
                    false => FollowerChange::StepsDown,
                },
                self.store.deposed_gives_up(&mut self.store_state),
            ),
            LeaderLink::Muted => (
                FollowerChange::DroppedByLeader,
                self.store.drop_follower(&mut self.store_state, f),
            ),
            LeaderLink::Up | LeaderLink::Cut | LeaderLink::Down => (
                FollowerChange::Dropped,
                self.store.drop_follower(&mut self.store_state, f),
            ),
        };
        trace!(self, TraceEvent::Follower { server, change });
        self.reconnect_closed(&clients);
    }

    /// A cut-off follower hears the leader again: it follows it, applying
    /// what it missed.
    fn rejoin(&mut self, server: u8) {
        let e = self.store_state.ensemble.as_ref().expect("an ensemble");
        let Some(f) = e.slot(server) else {
            return; // it leads now
        };
        // A deposed leader that hears the new one steps down first
        // (closing its clients' connections), then follows.
        if e.followers[f].link == LeaderLink::Deposed {
            self.follower_drop(server);
        }
        let e = self.store_state.ensemble.as_ref().expect("an ensemble");
        let Some(f) = e.slot(server) else {
            return;
        };
        let mut out = self.lenders.store.lend();
        let before = self.release_mark();
        let released = self.store.rejoin(&mut self.store_state, f, &mut out);
        let n = self.apply_store_out(out);
        if released && self.released_since(before) {
            self.release_step(n);
        }
        trace!(
            self,
            TraceEvent::Follower {
                server,
                change: FollowerChange::Rejoins,
            }
        );
        self.schedule_store_events();
    }

    /// After a store step: the replication and the followers' applies it
    /// started.
    fn schedule_store_events(&mut self) {
        self.schedule_replication();
        self.schedule_applies();
    }

    /// Queues each follower's application of the entries committed since
    /// the last store step, each a drawn delay from now, in order.
    fn schedule_applies(&mut self) {
        let (Some(e), Some((lo, hi))) = (
            self.store_state.ensemble.as_ref(),
            self.scenario.timing.apply_us,
        ) else {
            return;
        };
        let lags: Vec<(u8, u64)> = (0..e.followers.len())
            .map(|f| (e.id(f), e.lag(f)))
            .collect();
        for (server, lag) in lags {
            while (self.apply_clock(server).scheduled as u64) < lag {
                let draw = between(&mut self.draws.applies, lo, hi);
                let now = self.now;
                let clock = self.apply_clock(server);
                let at = clock.after_stop((now + draw).max(clock.last_us));
                clock.last_us = at;
                clock.scheduled += 1;
                let generation = clock.generation;
                self.queue.push(at, Event::Apply { server, generation });
            }
        }
    }

    /// A follower applies the next committed entry (`Store::apply_next`):
    /// the watches set there fire and the replies it held go out. One
    /// stopped by a lag applies it when the lag is over.
    fn apply_at_follower(&mut self, server: u8, generation: u64) {
        let now = self.now;
        let clock = self.apply_clock(server);
        if clock.generation != generation {
            return; // queued for a stream a failover ended
        }
        if clock.after_stop(now) != now {
            let at = clock.stopped_until_us;
            clock.last_us = clock.last_us.max(at);
            self.queue.push(at, Event::Apply { server, generation });
            return;
        }
        clock.scheduled = clock.scheduled.saturating_sub(1);
        let e = self.store_state.ensemble.as_ref().expect("an ensemble");
        let Some(f) = e.slot(server) else {
            return; // it leads now
        };
        let removed_before = self.store_state.items_removed();
        let mut out = self.lenders.store.lend();
        let entry = self.store.apply_next(&mut self.store_state, f, &mut out);
        if let Some(entry) = entry {
            trace!(
                self,
                TraceEvent::Apply {
                    server,
                    change: entry.to_string(),
                }
            );
        }
        self.apply_store_out(out);
        self.observe_store(removed_before);
    }

    /// Queues the replication of the first master's changes made since
    /// the last store step, each a drawn lag from now; a backlog that
    /// shrank was lost (only a replication event takes one change off),
    /// and what was queued for it arrives to nothing. No replica, no
    /// draw.
    fn schedule_replication(&mut self) {
        let (Some(r), Some((lo, hi))) = (
            &self.store_state.redis.replica,
            self.scenario.timing.replication_us,
        ) else {
            return;
        };
        let backlog = r.backlog.len();
        let clock = &mut self.replication;
        if backlog < clock.scheduled {
            clock.generation += 1;
            clock.scheduled = 0;
        }
        while clock.scheduled < backlog {
            let at = (self.now + between(&mut self.draws.replication, lo, hi)).max(clock.last_us);
            clock.last_us = at;
            clock.scheduled += 1;
            let generation = clock.generation;
            self.queue.push(at, Event::Replicate { generation });
        }
    }

    /// The first master's oldest change reaches its replica (unless the
    /// backlog it was queued for is gone): `Store::replicate`, which
    /// answers a `WAIT` it caught up with.
    fn replicate(&mut self, generation: u64) {
        if generation != self.replication.generation {
            return;
        }
        self.replication.scheduled -= 1;
        let mut out = self.lenders.store.lend();
        let change = self.store.replicate(&mut self.store_state, &mut out);
        if let Some(change) = change {
            trace!(
                self,
                TraceEvent::Replicate {
                    change: models::store::redis::change_text(&change),
                }
            );
        }
        self.apply_store_out(out);
    }

    /// A ZooKeeper client's read timeout, 2/3 of the session timeout (the
    /// etcd client's gRPC keepalive is modelled with the same bound).
    fn read_timeout_us(&self) -> u64 {
        models::timing::read_timeout(self.scenario.timing.session_timeout_us)
    }

    /// A ZooKeeper client's connect timeout, the session timeout over the
    /// servers it may try.
    fn connect_timeout_us(&self) -> u64 {
        let servers = self
            .store_state
            .ensemble
            .as_ref()
            .map_or(1, |e| e.servers());
        models::timing::connect_timeout(self.scenario.timing.session_timeout_us, servers.into())
    }

    /// Client `c` makes a new connection to the store (what was in flight
    /// on the old one is dealt with by the caller).
    fn reconnect(&mut self, c: ClientIdx, session_alive: bool) {
        self.clients[c as usize].connected_us = self.now;
        self.clients[c as usize].old_link = OldLink {
            since_seq: self.queue.next_seq(),
            keeps: Keeps::Survivors { session_alive },
        };
        // The old connection's replies held by its server go with it; the
        // handshake tells of a session the leader has ended.
        if let Some(e) = self.store_state.ensemble.as_ref() {
            let (from, refused) = (e.server(c), e.refusing(c));
            let session = self.clients[c as usize].state.session;
            let mut out = self.lenders.store.lend();
            self.store
                .reconnected(&mut self.store_state, session, &mut out);
            let to = self
                .store_state
                .ensemble
                .as_ref()
                .map_or(from, |e| e.server(c));
            if to != from {
                trace!(
                    self,
                    TraceEvent::Moved {
                        client: c,
                        server: to,
                        refused,
                    }
                );
            }
            self.apply_store_out(out);
        }
        // SUSPENDED first (traced), if the client had not noticed yet.
        self.disconnect(c);
        let mut out = self.lenders.client.lend();
        self.client
            .on_reconnect(&mut self.clients[c as usize].state, session_alive, &mut out);
        self.apply_client_out(c, out);
        self.after_client_step(c);
    }

    /// Client `c`'s connection drops (SUSPENDED).
    fn disconnect(&mut self, c: ClientIdx) {
        let mut out = self.lenders.client.lend();
        self.client
            .on_disconnect(&mut self.clients[c as usize].state, &mut out);
        self.apply_client_out(c, out);
        self.after_client_step(c);
    }

    /// When a cut-off client's connection drops: a read timeout after it
    /// last heard from the store.
    fn drops_at_us(&self, c: ClientIdx) -> u64 {
        self.clients[c as usize].heard_us + self.read_timeout_us()
    }

    /// A partition has lasted past the read timeout: a running client
    /// notices the silence and its connection drops (SUSPENDED). A paused
    /// one cannot notice; it reconnects when the cut heals.
    fn read_timeout(&mut self, i: usize) {
        let c = self.faults[i].fault.client as ClientIdx;
        let rt = &self.clients[c as usize];
        let same_cut = rt.partitioned && self.drops_at_us(c).max(rt.cut_since_us) == self.now;
        if !same_cut || rt.status != Status::Running {
            return;
        }
        self.disconnect(c);
    }

    /// What client `c` gives its server up after if `msg` goes unanswered,
    /// when, and the session it awaits for: a ping its read timeout from
    /// when it last heard (on this connection), a handshake its connect
    /// timeout from now. (A client still handshaking has only its connect
    /// to await.)
    fn awaits(&self, c: ClientIdx, msg: &Msg) -> Option<(Awaited, u64, SessionId)> {
        let rt = &self.clients[c as usize];
        match msg {
            Msg::Ping { session } if rt.state.phase != Phase::Connecting => {
                let since_us = rt.heard_us.max(rt.connected_us);
                let at = since_us + self.read_timeout_us();
                Some((Awaited::Ping { since_us }, at, *session))
            }
            Msg::Request {
                req: Request::Connect,
                session,
                epoch,
                ..
            } => {
                let (session, epoch) = (*session, *epoch);
                let at = self.now + self.connect_timeout_us();
                Some((Awaited::Handshake { session, epoch }, at, session))
            }
            Msg::Ping { .. }
            | Msg::Request { .. }
            | Msg::Reply { .. }
            | Msg::Close { .. }
            | Msg::Pong { .. }
            | Msg::Notify { .. }
            | Msg::Expired { .. }
            | Msg::Write { .. }
            | Msg::WriteAck { .. } => None,
        }
    }

    /// Client `c`'s ping or handshake went unanswered: whether what it
    /// awaited came is checked `at` its timeout (a ping's once a silence).
    fn check_silence(&mut self, c: ClientIdx, awaited: Awaited, at: u64) {
        if let Awaited::Ping { since_us } = awaited {
            if self.clients[c as usize].silence_checked == Some(since_us) {
                return;
            }
            self.clients[c as usize].silence_checked = Some(since_us);
        }
        let at = at.max(self.now);
        self.push(at, Event::Unanswered { client: c, awaited });
    }

    /// Client `c` has heard nothing from its server since `since_us`, for
    /// its read timeout (or, handshaking, its connect timeout): it gives
    /// the connection up (SUSPENDED) and reconnects, to the next server
    /// (the Java client's `ClientCnxn`, kazoo's connection loop). A paused
    /// client cannot notice (its resume does); a cut-off one notices by its
    /// partition's own read timeout.
    fn unanswered(&mut self, c: ClientIdx, awaited: Awaited) {
        let rt = &self.clients[c as usize];
        let answered = match awaited {
            Awaited::Ping { since_us } => rt.heard_us > since_us || rt.connected_us > since_us,
            Awaited::Handshake { session, epoch } => {
                let st = &rt.state;
                st.phase != Phase::Connecting || st.session != session || st.epoch != epoch
            }
        };
        if answered || rt.status != Status::Running || rt.partitioned || rt.finished {
            return;
        }
        let alive = models::model::session_carries_on(&self.store_state, &rt.state);
        let server = self
            .store_state
            .ensemble
            .as_ref()
            .map_or(0, |e| e.server(c));
        trace!(self, TraceEvent::ServerSilent { client: c, server });
        self.reconnect(c, alive);
    }

    /// When the last fault is over: crash restarts, resumes, heals.
    /// (Scenario validation bounds every time, so the sums fit.)
    fn quiet_from_us(&self) -> u64 {
        self.faults
            .iter()
            .map(|f| (f.fault.at_ms + f.fault.duration_ms.unwrap_or(0)) * 1000)
            .max()
            .unwrap_or(0)
    }

    /// Whether the store still owes an observer something that may change
    /// what it names: a notification or reply on its way, or a follower's
    /// apply to come that may fire its watch. An observer that waits counts
    /// as finished, but its run is not over before these arrive.
    fn observers_owed(&self) -> bool {
        self.client.observers > 0
            && self.queue.any(|e| match e {
                // A follower's change to come: it may fire a watch, or
                // move one.
                Event::Apply { .. }
                | Event::FollowerDrop { .. }
                | Event::Rejoin { .. }
                | Event::Elect => true,
                Event::Deliver { from, to, msg } => {
                    *from == store_id()
                        && client_of(*to).is_some_and(|c| self.client.observes(c))
                        && matches!(msg, Msg::Notify { .. } | Msg::Reply { .. })
                }
                Event::Timer { .. }
                | Event::FaultStart(_)
                | Event::FaultEnd(_)
                | Event::ReadTimeout(_)
                | Event::Unanswered { .. }
                | Event::Replicate { .. } => false,
            })
    }

    /// Every live client finished; for a queue, the queue is empty too.
    fn all_live_done(&self) -> bool {
        self.unfinished == 0
            && (self.client.recipe.app() != App::Queue || self.store_state.line_is_empty())
    }

    /// Runs to the end: every live client finished (and no fault is still
    /// to come), nothing left to happen, the time limit, or a safety cap.
    ///
    /// The time limit is the file's `duration_ms` if it gives one, else the
    /// liveness bound after the last fault. Clients unfinished when the
    /// liveness bound has passed (or when nothing is left to happen) violate
    /// `progress`; a `duration_ms` that ends the run sooner only reports
    /// "time limit reached".
    pub fn run(mut self) -> std::io::Result<Outcome> {
        let quiet = self.quiet_from_us();
        let progress_due = quiet.saturating_add(self.scenario.liveness_bound_us());
        let limit = self.scenario.duration_us.unwrap_or(progress_due);
        let at_one_instant_cap = MAX_EVENTS_AT_ONE_INSTANT
            + EVENTS_AT_ONE_INSTANT_PER_CLIENT * self.scenario.clients as u64;
        // Events at this instant since time last advanced or a client last
        // acquired (took the lock, led, passed, took an item): a zero-latency
        // herd is slow but moving, and rounds bound the acquisitions.
        let mut at_one_instant = 0u64;
        let mut acquisitions_then = 0u64;
        let pending_crash_restart = |s: &Self| {
            s.faults.iter().any(|f| {
                f.fault.kind == FaultKind::Crash && f.fault.duration_ms.is_some() && !f.fired
            })
        };
        let mut end = RunEnd::Finished;
        while let Some(q) = self.queue.pop() {
            if q.at > limit {
                self.now = limit;
                end = RunEnd::TimeLimit { at_us: limit };
                break;
            }
            if q.at == self.now && self.tally.metrics.acquisitions == acquisitions_then {
                at_one_instant += 1;
                if at_one_instant > at_one_instant_cap {
                    end = RunEnd::Stuck {
                        at_us: self.now,
                        events: at_one_instant,
                    };
                    break;
                }
            } else {
                at_one_instant = 0;
                acquisitions_then = self.tally.metrics.acquisitions;
            }
            if self.tally.metrics.events >= self.scenario.max_events {
                end = RunEnd::EventLimit {
                    events: self.tally.metrics.events,
                };
                break;
            }
            self.now = q.at;
            if let Event::Timer {
                actor,
                timer,
                generation,
            } = q.event
            {
                match self.timer_came_due(actor, timer, generation) {
                    Due::Fires => {}
                    Due::Stale | Due::Cancelled | Due::Later(_) => continue,
                }
            }
            self.tally.metrics.events += 1;
            if self.tally.metrics.events & (PROGRESS_EVERY - 1) == 0 {
                if let Some(tell) = self.progress.as_mut() {
                    tell(&Progress {
                        now_us: self.now,
                        limit_us: limit,
                        events: self.tally.metrics.events,
                        unfinished: self.unfinished,
                    });
                }
            }
            match q.event {
                Event::Deliver { .. } => self.arrive(q),
                Event::Timer {
                    actor,
                    timer,
                    generation,
                } => match client_of(actor) {
                    Some(c) => {
                        let rt = &mut self.clients[c as usize];
                        if rt.status == Status::Crashed {
                            continue;
                        }
                        if rt.status == Status::Paused {
                            rt.frozen.push(Queued {
                                at: q.at,
                                seq: q.seq,
                                event: Event::Timer {
                                    actor,
                                    timer,
                                    generation,
                                },
                            });
                            continue;
                        }
                        rt.timers.remove(&timer);
                        if timer == Timer::Wake {
                            self.tally.metrics.wakes += 1;
                        }
                        if timer == Timer::Retry && self.request_in_flight(c) {
                            // Delayed, not lost: wait another period.
                            let retry = self.client.timing.retry;
                            self.set_timer(
                                actor,
                                Timer::Retry,
                                retry..retry + Duration::from_nanos(1),
                            );
                            continue;
                        }
                        let mut out = self.lenders.client.lend();
                        let rt = &mut self.clients[c as usize];
                        self.client
                            .on_timeout(actor, &mut rt.state, &timer, &mut out);
                        if timer != Timer::Ping {
                            trace!(self, TraceEvent::Timer { client: c, timer });
                        }
                        self.apply_client_out(c, out);
                        self.after_client_step(c);
                    }
                    None => {
                        self.store_timers.remove(&timer);
                        if let Timer::Expiry(s) = timer {
                            if self.store_state.is_alive(s) {
                                trace!(
                                    self,
                                    TraceEvent::Expire {
                                        session: s,
                                        client: s.client,
                                    }
                                );
                                self.check_fault_free_expiry(s);
                            }
                        }
                        let before = self.release_mark();
                        let removed_before = self.store_state.items_removed();
                        let mut out = self.lenders.store.lend();
                        self.store
                            .on_timeout(store_id(), &mut self.store_state, &timer, &mut out);
                        let n = self.apply_store_out(out);
                        self.schedule_store_events();
                        self.observe_store(removed_before);
                        // An expiry that deleted a node or key releases it.
                        if self.released_since(before) {
                            self.release_step(n);
                        }
                    }
                },
                Event::FaultStart(i) => self.fault_start(i),
                Event::FaultEnd(i) => self.fault_end(i),
                Event::ReadTimeout(i) => self.read_timeout(i),
                Event::Unanswered { client, awaited } => self.unanswered(client, awaited),
                Event::Replicate { generation } => self.replicate(generation),
                Event::Apply { server, generation } => self.apply_at_follower(server, generation),
                Event::FollowerDrop { server } => self.follower_drop(server),
                Event::Rejoin { server } => self.rejoin(server),
                Event::Elect => self.elect(),
            }
            if self.all_live_done()
                && self.now >= quiet
                && !pending_crash_restart(&self)
                && !self.observers_owed()
            {
                break;
            }
        }
        self.tally.metrics.end_us = self.now;
        // Unfinished clients violate progress when they had their time, or
        // when nothing is left that could finish them.
        let had_their_time = match end {
            RunEnd::Finished => true,
            RunEnd::TimeLimit { at_us } => at_us >= progress_due,
            RunEnd::Stuck { .. } | RunEnd::EventLimit { .. } => false,
        };
        if !self.all_live_done() && had_their_time {
            let live = |c: &&ClientRt| c.status != Status::Crashed;
            let mut stuck: Vec<ClientIdx> = (0..self.clients.len())
                .filter(|&i| live(&&self.clients[i]) && !self.clients[i].finished)
                .map(|i| i as ClientIdx)
                .collect();
            // A queue left full while every consumer waits: they all are.
            if stuck.is_empty() {
                stuck = (0..self.clients.len())
                    .filter(|&i| live(&&self.clients[i]))
                    .map(|i| i as ClientIdx)
                    .collect();
            }
            self.violation(progress_of(self.client.recipe.app()), stuck);
        }
        // Nothing is left to happen: an item taken out and still owed will
        // never be processed.
        if end == RunEnd::Finished {
            for breach in self.monitors.at_end() {
                self.violation(breach.property, breach.clients);
            }
        }
        self.tally.metrics.releases = self.tally.metrics.notifications_per_release.len() as u64;
        self.tally.metrics.store_requests = RequestKind::ALL
            .into_iter()
            .filter(|&k| self.tally.store_requests[k as usize] > 0)
            .map(|k| (k, self.tally.store_requests[k as usize]))
            .collect();
        self.tally.metrics.handoff_us = Summary::of(std::mem::take(&mut self.tally.handoffs));
        self.tally.metrics.wait_us = Summary::of(std::mem::take(&mut self.tally.waits));
        trace!(
            self,
            TraceEvent::End {
                acquisitions: self.tally.metrics.acquisitions,
                violations: self.violations.len(),
            }
        );
        let (trace, trace_hash) = self.recorder.finish()?;
        Ok(Outcome {
            seed: 0,
            end,
            violations: self.violations,
            faults: self.faults,
            metrics: self.tally.metrics,
            hand_off: self.monitors.holds(PropertyName::HandOff),
            livelocked: self
                .clients
                .iter()
                .enumerate()
                .filter(|(_, rt)| rt.livelocked)
                .map(|(c, _)| c as ClientIdx)
                .collect(),
            trace_hash,
            trace,
        })
    }
}

/// Whether a timer event's timer was cancelled or set again since.
fn is_stale(clients: &[ClientRt], store_timers: &ManyTimers, event: &Event) -> bool {
    let Event::Timer {
        actor,
        timer,
        generation,
    } = event
    else {
        return false;
    };
    let entry = match client_of(*actor) {
        Some(c) => clients[c as usize].timers.get(timer),
        None => store_timers.get(timer),
    };
    TimerEntry::is_stale(entry, *generation)
}

/// A link's client, and which of its four links it is: to the store, from
/// the store, to the resource, from the resource.
fn link(from: Id, to: Id) -> (ClientIdx, usize) {
    match (client_of(from), client_of(to)) {
        (Some(c), _) if to == store_id() => (c, 0),
        (_, Some(c)) if from == store_id() => (c, 1),
        (Some(c), _) => (c, 2),
        (_, Some(c)) => (c, 3),
        (None, None) => unreachable!("every link has a client end"),
    }
}

/// Runs `scenario` with `seed`; `record` keeps the trace lines and their hash.
pub fn simulate(scenario: &Scenario, seed: u64, record: bool) -> Outcome {
    let trace = if record {
        TraceOptions::kept()
    } else {
        TraceOptions::default()
    };
    simulate_traced(scenario, seed, trace).expect("a trace kept in memory cannot fail to write")
}

/// Runs `scenario` with `seed`, its trace recorded as `trace` asks; fails
/// only when writing the trace does.
pub fn simulate_traced<'a>(
    scenario: &'a Scenario,
    seed: u64,
    trace: TraceOptions<'a>,
) -> std::io::Result<Outcome> {
    simulate_with(scenario, seed, trace, None)
}

/// [`simulate_traced`], telling `progress` how the run is going every
/// [`PROGRESS_EVERY`] events. The same run: the same outcome and trace.
pub fn simulate_watched<'a>(
    scenario: &'a Scenario,
    seed: u64,
    trace: TraceOptions<'a>,
    progress: impl FnMut(&Progress) + 'a,
) -> std::io::Result<Outcome> {
    simulate_with(scenario, seed, trace, Some(Box::new(progress)))
}

fn simulate_with<'a>(
    scenario: &'a Scenario,
    seed: u64,
    trace: TraceOptions<'a>,
    progress: Option<Watcher<'a>>,
) -> std::io::Result<Outcome> {
    let mut sim = Sim::new(scenario, seed, trace);
    sim.progress = progress;
    let mut o = sim.run()?;
    o.seed = seed;
    Ok(o)
}

/// The property a run with unfinished clients violates: the simulator's
/// reading of `progress` (lock) and `leader_elected` (election).
/// `followers_agree` is decided on the checker's graph only.
fn progress_of(app: models::recipe::App) -> PropertyName {
    PropertyName::simulated(app)
        .find(|p| p.kind() == models::properties::Kind::Progress)
        .expect("every application has a progress property the simulator judges")
}
