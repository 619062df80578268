//! The client actors in real time against a real store: the same
//! `models::client::Client` the checker and the simulator drive, with its
//! store requests carried out by a [`Backend`], its timers on tokio's clock,
//! and the guarded resource in process.
//!
//! Each client is one task that handles one input at a time, in order: its
//! request's reply first, then the events of the watch it set (a watch
//! forwarder is started only after the reply is queued), as the server's
//! FIFO connection delivers them.

use crate::backend::{Backend, Watch};
use models::client::{Client, ClientState, Phase};
use models::ids::{client_id, resource_id, store_id, ClientIdx};
use models::msg::{Msg, Timer, WatchEvent};
use models::properties::{
    observe_client, observe_resource, Breach, Monitors, Observation, PropertyName,
};
use models::resource::{Resource, ResourceState};
use sim::scenario::FaultKind;
use sim::trace::{MsgKind, Party, TraceEvent, TraceLine};
use stateright::actor::{Actor, Command, Id, Out};
use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What a client task can be told.
#[derive(Debug)]
pub enum Input {
    Msg {
        from: Id,
        msg: Msg,
    },
    Timer {
        timer: Timer,
        generation: u64,
    },
    /// Freeze the process (timers and inbox) for this long: a GC pause.
    Freeze(Duration),
}

/// What happened, in wall-clock microseconds since the start, as the
/// simulator's typed trace lines, so one timeline drawer serves both.
#[derive(Default)]
pub struct Log {
    pub lines: Vec<TraceLine>,
    /// (time, kind) of every store request the recipes sent.
    pub requests: Vec<(u64, ClientIdx, &'static str)>,
    /// Time of every watch notification received.
    pub notifications: Vec<(u64, ClientIdx)>,
    /// Time each release (the delete of a held lock) was sent.
    pub releases: Vec<(u64, ClientIdx)>,
    /// (time, client, token) of every acquisition.
    pub acquisitions: Vec<(u64, ClientIdx, u64)>,
    pub rejected_writes: Vec<(u64, ClientIdx, u64)>,
    /// (time, client) of every recipe sleep that ran out (a poll's
    /// retry delay): the polls a polling recipe made.
    pub wakes: Vec<(u64, ClientIdx)>,
    /// What the property monitors found, when.
    pub violations: Vec<(u64, Breach)>,
}

/// The herd baseline's start, kept in real time: every client's first
/// store request (after opening its session) is answered before any client
/// sends its next one, as in the model, where all first requests arrive at
/// one instant. Without it, a client that starts a little late creates its
/// node after another's first listing and fires its child watch: a
/// notification the baseline does not have.
pub struct StartGate {
    clients: u16,
    answered: Mutex<u16>,
    open: tokio::sync::Notify,
}

impl StartGate {
    pub fn new(clients: u16) -> Self {
        StartGate {
            clients,
            answered: Mutex::new(0),
            open: tokio::sync::Notify::new(),
        }
    }

    fn is_open(&self) -> bool {
        *self.answered.lock().unwrap() >= self.clients
    }

    fn answered(&self) {
        let mut n = self.answered.lock().unwrap();
        *n += 1;
        if *n >= self.clients {
            self.open.notify_waiters();
        }
    }

    async fn wait(&self) {
        loop {
            let notified = self.open.notified();
            if self.is_open() {
                return;
            }
            notified.await;
        }
    }
}

pub struct Shared {
    /// The baseline's start gate (herd runs only).
    pub gate: Option<StartGate>,
    pub start: Instant,
    pub log: Mutex<Log>,
    pub resource: Resource,
    pub resource_state: Mutex<ResourceState>,
    /// The same property monitors the checker and the simulator feed.
    pub monitors: Mutex<Monitors>,
}

impl Shared {
    pub fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    fn line(&self, event: TraceEvent) {
        // The time is read under the lock: lines from several tasks go in
        // in time order, as a trace's reader requires.
        let mut log = self.log.lock().unwrap();
        let t = self.now_us();
        log.lines.push(TraceLine { t, event });
    }

    /// Feeds the monitors; what they find goes into the log and the trace.
    /// A real server puts no ghost mark on its replies, so
    /// `holder_owns_key` cannot be judged here and is left out.
    fn observe(&self, obs: Observation) {
        let breaches = self.monitors.lock().unwrap().observe(obs);
        for b in breaches {
            if b.property == PropertyName::HolderOwnsKey {
                continue;
            }
            self.line(TraceEvent::Violation {
                property: b.property,
                clients: b.clients.clone(),
            });
            let t = self.now_us();
            self.log.lock().unwrap().violations.push((t, b));
        }
    }
}

/// Runs one client to the end of its rounds, and hands back its connection
/// to the store: a finished client stays connected (as in the model), so the
/// notifications already on their way to it still arrive.
pub async fn run_client(
    c: ClientIdx,
    client: Client,
    mut backend: Backend,
    shared: Arc<Shared>,
    tx: mpsc::UnboundedSender<Input>,
    mut rx: mpsc::UnboundedReceiver<Input>,
) -> (ClientState, Backend) {
    let me = client_id(c);
    let mut generations: BTreeMap<Timer, u64> = BTreeMap::new();
    let mut next_generation = 0u64;
    let mut local: VecDeque<Input> = VecDeque::new();
    let mut out = Out::new();
    let mut state = client.on_start(me, &None, &mut out);
    let mut before = state.marks();
    // Store requests sent so far, the session's opening not counted.
    let mut sent = 0u32;
    let mut commands: VecDeque<Command<Msg, Timer, (), models::client::ClientStorage>> =
        out.into_iter().collect();
    loop {
        // What the step meant, before what it asked for is carried out: a
        // new holder's writes reach the resource after it came to hold.
        if let Some(obs) = observe_client(c, before, &state) {
            let t = shared.now_us();
            match obs {
                Observation::Acquired(a) => {
                    shared
                        .log
                        .lock()
                        .unwrap()
                        .acquisitions
                        .push((t, c, a.token));
                    shared.line(TraceEvent::Hold {
                        client: c,
                        token: a.token,
                    });
                }
                Observation::Released { .. } => shared.line(TraceEvent::Release { client: c }),
                Observation::WriteAccepted { .. }
                | Observation::WriteRejected { .. }
                | Observation::ReleaseStep { .. }
                | Observation::Crashed { .. }
                | Observation::Dequeued { .. }
                | Observation::Left { .. }
                | Observation::Idle { .. }
                | Observation::Reentered { .. }
                | Observation::Woke { .. }
                | Observation::StaleSync { .. }
                | Observation::NamedStale { .. } => {}
            }
            shared.observe(obs);
            before = state.marks();
        }
        // Carry out what the actor asked for.
        while let Some(cmd) = commands.pop_front() {
            match cmd {
                Command::Send(to, msg) if to == store_id() => match msg {
                    Msg::Request {
                        session,
                        epoch,
                        req,
                        release,
                    } => {
                        let kind = req.kind().name();
                        let opening = matches!(kind, "connect" | "lease_grant");
                        if let (Some(gate), false, true) = (&shared.gate, opening, sent >= 1) {
                            gate.wait().await;
                        }
                        shared
                            .log
                            .lock()
                            .unwrap()
                            .requests
                            .push((shared.now_us(), c, kind));
                        // The recipe's release step, as the client marked it.
                        if release {
                            shared
                                .log
                                .lock()
                                .unwrap()
                                .releases
                                .push((shared.now_us(), c));
                        }
                        let (reply, header, watch) = backend.call(session, &req).await;
                        if !opening {
                            sent += 1;
                            if let (Some(gate), 1) = (&shared.gate, sent) {
                                gate.answered();
                            }
                        }
                        local.push_back(Input::Msg {
                            from: store_id(),
                            msg: Msg::Reply {
                                epoch,
                                header,
                                // No ghost mark from a real server (see `observe`).
                                owns_first: false,
                                reply,
                            },
                        });
                        if let Some(w) = watch {
                            forward_watch(c, w, tx.clone(), shared.clone());
                        }
                    }
                    Msg::Ping { session } if !backend.ping(session).await => {
                        local.push_back(Input::Msg {
                            from: store_id(),
                            msg: Msg::Expired { session },
                        });
                    }
                    Msg::Close { session } => backend.close(session).await,
                    _ => {}
                },
                Command::Send(to, msg) if to == resource_id() => {
                    let mut o = Out::new();
                    {
                        let mut rs = shared.resource_state.lock().unwrap();
                        let mut cow = Cow::Borrowed(&*rs);
                        shared
                            .resource
                            .on_msg(resource_id(), &mut cow, me, msg.clone(), &mut o);
                        if let Cow::Owned(s) = cow {
                            *rs = s;
                        }
                    }
                    for cmd in o {
                        if let Command::Send(_, ack) = cmd {
                            if let (
                                Msg::WriteAck {
                                    accepted: false, ..
                                },
                                Msg::Write { token, .. },
                            ) = (&ack, &msg)
                            {
                                shared.log.lock().unwrap().rejected_writes.push((
                                    shared.now_us(),
                                    c,
                                    *token,
                                ));
                                shared.line(TraceEvent::Deliver {
                                    from: Party::Resource,
                                    to: Party::Client(c),
                                    kind: MsgKind::WriteAck,
                                    msg: format!("write rejected (fenced), token {token}"),
                                });
                            }
                            if let Some(obs) = observe_resource(c, &msg, &ack) {
                                shared.observe(obs);
                            }
                            local.push_back(Input::Msg {
                                from: resource_id(),
                                msg: ack,
                            });
                        }
                    }
                }
                Command::SetTimer(timer, range) => {
                    next_generation += 1;
                    let generation = next_generation;
                    generations.insert(timer, generation);
                    let tx = tx.clone();
                    let wait = range.start;
                    tokio::spawn(async move {
                        tokio::time::sleep(wait).await;
                        let _ = tx.send(Input::Timer { timer, generation });
                    });
                }
                Command::CancelTimer(timer) => {
                    generations.remove(&timer);
                }
                _ => {}
            }
        }
        if state.phase == Phase::Done {
            return (state, backend);
        }
        // The next input.
        let input = match local.pop_front() {
            Some(i) => i,
            None => match rx.recv().await {
                Some(i) => i,
                None => return (state, backend),
            },
        };
        let mut out = Out::new();
        let mut cow = Cow::Owned(state);
        match input {
            Input::Msg { from, msg } => client.on_msg(me, &mut cow, from, msg, &mut out),
            Input::Timer { timer, generation } => {
                if generations.get(&timer) != Some(&generation) {
                    state = cow.into_owned();
                    continue;
                }
                generations.remove(&timer);
                if timer == Timer::Wake {
                    shared.log.lock().unwrap().wakes.push((shared.now_us(), c));
                }
                client.on_timeout(me, &mut cow, &timer, &mut out);
            }
            Input::Freeze(d) => {
                shared.line(TraceEvent::Fault {
                    fault: FaultKind::Pause,
                    client: c,
                    duration_us: Some(d.as_micros() as u64),
                    what: None,
                });
                tokio::time::sleep(d).await;
                shared.line(TraceEvent::Resume { client: c });
            }
        }
        state = cow.into_owned();
        commands = out.into_iter().collect();
    }
}

fn forward_watch(c: ClientIdx, w: Watch, tx: mpsc::UnboundedSender<Input>, shared: Arc<Shared>) {
    tokio::spawn(async move {
        let mut next = Some(w);
        while let Some(w) = next.take() {
            let fired = w.await;
            next = fired.then;
            forward_events(c, fired.events, &tx, &shared);
        }
    });
}

fn forward_events(
    c: ClientIdx,
    events: Vec<WatchEvent>,
    tx: &mpsc::UnboundedSender<Input>,
    shared: &Shared,
) {
    for event in events {
        shared
            .log
            .lock()
            .unwrap()
            .notifications
            .push((shared.now_us(), c));
        let _ = tx.send(Input::Msg {
            from: store_id(),
            msg: Msg::Notify {
                header: 0,
                owns_first: false,
                event,
            },
        });
    }
}
