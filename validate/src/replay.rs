//! Conformance replay: the model's own fault-free run of a barrier or
//! queue recipe, carried out request by request on a real ZooKeeper.
//!
//! A real herd of barrier members or queue consumers races (who creates
//! `ready` first, who deletes an element first), so counts measured on a
//! real run would depend on timing. The replay is deterministic instead:
//! the simulator runs the baseline scenario with its trace kept, and the
//! replay walks that trace in order, sending each request the model's
//! store was handed to the real server on the requesting client's own
//! session, one at a time, and comparing the real reply and the watch
//! events the real server sent with the model store's at the same step.
//!
//! How the typed requests are had in order: the trace records each
//! delivery with its message printed, not typed. So the replay drives the
//! model's own actors — `models::client::Client` and `models::store::Store`,
//! built as the simulator builds them — in the trace's order: a delivery
//! line takes the message at the head of its link (links are FIFO, as in
//! the simulator) and that message must print exactly as the trace printed
//! it; a timer line fires that client's timer. A replay that drifted from
//! the simulator's run stops with an error rather than compare anything.

use crate::backend::{Backend, Fired, Watch};
use models::client::{Client, ClientState};
use models::ids::{client_id, client_of, resource_id, store_id, ClientIdx, Data, SessionId, ZPath};
use models::msg::{Msg, MultiResult, Reply, Request, Stat, Timer, WatchEvent, ZkEvent};
use models::recipe::RecipeRef;
use models::recipes::names;
use models::resource::{Resource, ResourceState};
use models::store::{Store, StoreState};
use serde::Serialize;
use sim::scenario::Scenario;
use sim::trace::{MsgKind, Party, TraceEvent, TraceLine};
use stateright::actor::{Actor, Command, Id, Out};
use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::task::Poll;
use std::time::Instant;

/// The recipes replayed: every barrier, queue, shared-lock and semaphore
/// recipe with its variants
/// (but `zk-barrier:article`, which differs from `zk-barrier` only when two
/// members both create `ready`, and throws there).
pub fn replayed_recipes() -> Vec<RecipeRef> {
    [
        "zk-barrier",
        "zk-double-barrier",
        "zk-double-barrier:tutorial",
        "zk-fifo-queue",
        "zk-fifo-queue:take-safe",
        "zk-fifo-queue:lock-safe",
        // Readers and writers, lease holders and the mutex's waiters race
        // as a herd's members do.
        "zk-rwlock",
        "zk-rwlock:curator",
        "zk-rwlock:kazoo",
        "zk-semaphore",
        "zk-semaphore:kazoo",
    ]
    .iter()
    .map(|id| models::recipes::parse(id).expect("registered"))
    .collect()
}

/// The fewest clients a barrier (a group) or a queue (a producer and a
/// consumer) is run with.
pub const FEWEST_CLIENTS: u16 = 2;

/// A watch event as compared: ZooKeeper's event is its kind and path.
type Event = (ZkEvent, ZPath);

/// One step where the real server answered otherwise than the model.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    /// The request's number in the replay, from 1.
    pub step: usize,
    /// When the model's store was handed it (virtual µs).
    pub t_us: u64,
    /// Who sent the request.
    pub requester: ClientIdx,
    pub request: String,
    /// What differs: `reply`, `zxid order` or `events of client N`.
    pub what: String,
    pub model: String,
    pub real: String,
}

/// One recipe × client count, replayed.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayRow {
    pub recipe: String,
    pub clients: u16,
    /// A queue's producers (the first clients) and the items they
    /// enqueue in all; 0 otherwise.
    pub producers: u16,
    pub items: u16,
    /// Trace events replayed: deliveries and timers.
    pub steps: usize,
    /// Requests by kind, as the model names them: carried out on the real
    /// server, and counted by the simulator in its run.
    pub requests_real: BTreeMap<String, u64>,
    pub requests_model: BTreeMap<String, u64>,
    /// Watch events: those the real server sent (each once per session
    /// and step), and those the simulator counted its store sending.
    pub notifications_real: u64,
    pub notifications_model: u64,
    /// Every reply the same but for zxids.
    pub replies_equal: bool,
    /// The replies' zxids in the model's order.
    pub zxids_in_order: bool,
    /// Every step's watch events the same, client by client.
    pub events_equal: bool,
    pub differences: Vec<Difference>,
    /// Why the replay stopped short, if it did.
    pub error: Option<String>,
    pub wall_seconds: f64,
}

impl ReplayRow {
    /// The real server did what the model did, at every step.
    pub fn agrees(&self) -> bool {
        self.error.is_none()
            && self.replies_equal
            && self.zxids_in_order
            && self.events_equal
            && self.requests_real == self.requests_model
            && self.notifications_real == self.notifications_model
    }
}

/// Replays the model's baseline run of `recipe` with `clients` clients on
/// the real ZooKeeper behind `backend` (a `/lock` freshly made, `/taken`
/// empty).
pub async fn replay(recipe: &RecipeRef, clients: u16, backend: Backend) -> ReplayRow {
    let started = Instant::now();
    let scenario = sim::herd::baseline(recipe, clients, 1);
    let outcome = sim::engine::simulate(&scenario, scenario.seed, true);
    let mut run = Replay::new(&scenario, backend);
    let error = run.walk(&outcome.trace).await.err();
    let requests_model: BTreeMap<String, u64> = outcome
        .metrics
        .store_requests
        .iter()
        .map(|(k, n)| (k.name().to_string(), *n))
        .collect();
    // The replay's model must have made the simulator's run, request for
    // request and notification for notification.
    let error = error.or_else(|| {
        (run.tally.model_requests != requests_model
            || run.tally.model_notifications != outcome.metrics.notifications)
            .then(|| {
                "the replayed model's requests or notifications are not the simulator's".into()
            })
    });
    let row = ReplayRow {
        recipe: recipe.id(),
        clients,
        producers: scenario.producers,
        items: scenario.producers * u16::from(scenario.rounds),
        steps: run.tally.steps,
        requests_real: run.tally.real_requests,
        requests_model,
        notifications_real: run.tally.real_notifications,
        notifications_model: outcome.metrics.notifications,
        replies_equal: run.tally.replies_equal,
        zxids_in_order: same_order(&run.tally.zxids),
        events_equal: run.tally.events_equal,
        differences: run.tally.differences,
        error,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    eprintln!(
        "{:<28} {:>3} clients: replayed {} steps on ZooKeeper: {} ({:.1} s)",
        row.recipe,
        clients,
        row.steps,
        match (&row.error, row.agrees()) {
            (Some(e), _) => format!("STOPPED: {e}"),
            (None, true) => "replies and events match".into(),
            (None, false) => "DIFFER".into(),
        },
        row.wall_seconds
    );
    row
}

/// What the walk counted and found.
struct Tally {
    steps: usize,
    /// Store requests carried out so far: the request's number.
    requests: usize,
    real_requests: BTreeMap<String, u64>,
    model_requests: BTreeMap<String, u64>,
    real_notifications: u64,
    model_notifications: u64,
    replies_equal: bool,
    events_equal: bool,
    /// (model zxid, real zxid) of every reply that carried one.
    zxids: Vec<(u64, u64)>,
    differences: Vec<Difference>,
}

/// A replay under way: the model's actors and the real sessions.
struct Replay {
    model: Model,
    real: Real,
    tally: Tally,
}

impl Replay {
    fn new(scenario: &Scenario, backend: Backend) -> Self {
        Replay {
            model: Model::start(scenario),
            real: Real {
                backend,
                sessions: BTreeMap::new(),
                watches: BTreeMap::new(),
            },
            tally: Tally {
                steps: 0,
                requests: 0,
                real_requests: BTreeMap::new(),
                model_requests: BTreeMap::new(),
                real_notifications: 0,
                model_notifications: 0,
                replies_equal: true,
                events_equal: true,
                zxids: Vec::new(),
                differences: Vec::new(),
            },
        }
    }

    /// Walks the trace in order.
    async fn walk(&mut self, trace: &[TraceLine]) -> Result<(), String> {
        for line in trace {
            match &line.event {
                TraceEvent::Deliver {
                    from,
                    to,
                    kind,
                    msg,
                } => {
                    self.tally.steps += 1;
                    let (from, to) = (actor(*from), *to);
                    let m = self.model.delivered(from, actor(to), *kind, msg)?;
                    match to {
                        Party::Store => self.at_store(line.t, from, m).await?,
                        Party::Client(c) => self.model.client_step(c, from, m),
                        // The resource is the model's, on either side.
                        Party::Resource => self.model.resource_step(from, m),
                    }
                }
                TraceEvent::Timer { client, timer } => {
                    self.tally.steps += 1;
                    self.model.timer(*client, *timer);
                }
                // What the actors' steps meant, as the simulator saw it.
                TraceEvent::Start { .. }
                | TraceEvent::Connection { .. }
                | TraceEvent::Write { .. }
                | TraceEvent::Hold { .. }
                | TraceEvent::Release { .. }
                | TraceEvent::Violation { .. }
                | TraceEvent::End { .. } => {}
                TraceEvent::Fault { .. }
                | TraceEvent::Restart { .. }
                | TraceEvent::Resume { .. }
                | TraceEvent::Heal { .. }
                | TraceEvent::DelayEnd { .. }
                | TraceEvent::StoreFault { .. }
                | TraceEvent::Replicate { .. }
                | TraceEvent::Expire { .. } => {
                    return Err(format!(
                        "the baseline has no faults, but its trace has `{line}`"
                    ))
                }
                TraceEvent::Apply { .. }
                | TraceEvent::Follower { .. }
                | TraceEvent::Moved { .. }
                | TraceEvent::ServerSilent { .. } => {
                    return Err(format!(
                        "the conformance replay runs one server, but its trace has `{line}`"
                    ))
                }
            }
        }
        Ok(())
    }

    /// The model's store is handed `msg` from client actor `from`.
    async fn at_store(&mut self, t_us: u64, from: Id, msg: Msg) -> Result<(), String> {
        let c = client_of(from).ok_or("the store hears only from clients")?;
        match msg {
            Msg::Request {
                session, ref req, ..
            } => {
                let req = req.clone();
                let sent = self.model.store_step(from, msg);
                self.request(t_us, c, session, &req, &sent).await
            }
            // The real client library heartbeats its session by itself.
            Msg::Ping { .. } => {
                self.model.store_step(from, msg);
                Ok(())
            }
            Msg::Close { .. } => Err(format!(
                "`{msg}` reached the store: the baseline closes no session"
            )),
            Msg::Reply { .. }
            | Msg::Pong { .. }
            | Msg::Notify { .. }
            | Msg::Expired { .. }
            | Msg::Write { .. }
            | Msg::WriteAck { .. } => Err(format!("`{msg}` is no message to the store")),
        }
    }

    /// One request: carried out on the real session, its reply and the
    /// watch events it fired compared with what the model's store `sent`.
    async fn request(
        &mut self,
        t_us: u64,
        c: ClientIdx,
        session: SessionId,
        req: &Request,
        sent: &[(Id, Msg)],
    ) -> Result<(), String> {
        self.tally.requests += 1;
        let kind = req.kind().name().to_string();
        *self.tally.model_requests.entry(kind.clone()).or_insert(0) += 1;
        let model_reply = reply_to(c, sent)?;
        let model_events = notifications(sent);
        self.tally.model_notifications +=
            model_events.values().map(|e| e.len() as u64).sum::<u64>();
        let real_reply = self.real.call(c, session, req).await?;
        *self.tally.real_requests.entry(kind).or_insert(0) += 1;
        let real_events = self.real.fired().await;
        self.tally.real_notifications += real_events.values().map(|e| e.len() as u64).sum::<u64>();
        let step = Step {
            number: self.tally.requests,
            t_us,
            requester: c,
            request: req,
        };
        self.compare_replies(&step, model_reply, &real_reply);
        self.compare_events(&step, &model_events, &real_events);
        Ok(())
    }

    fn compare_replies(&mut self, step: &Step, model: &Reply, real: &Reply) {
        let (m, r) = (zxids_of(model), zxids_of(real));
        if m.len() == r.len() {
            self.tally.zxids.extend(m.into_iter().zip(r));
        }
        if comparable(step.request, model) != comparable(step.request, real) {
            self.tally.replies_equal = false;
            self.tally.differences.push(step.difference(
                "reply",
                model.to_string(),
                real.to_string(),
            ));
        }
    }

    fn compare_events(
        &mut self,
        step: &Step,
        model: &BTreeMap<ClientIdx, Vec<Event>>,
        real: &BTreeMap<ClientIdx, Vec<Event>>,
    ) {
        let none = Vec::new();
        let told: std::collections::BTreeSet<&ClientIdx> =
            model.keys().chain(real.keys()).collect();
        for c in told {
            let (m, r) = (model.get(c).unwrap_or(&none), real.get(c).unwrap_or(&none));
            if m != r {
                self.tally.events_equal = false;
                self.tally.differences.push(step.difference(
                    &format!("events of client {c}"),
                    show_events(m),
                    show_events(r),
                ));
            }
        }
    }
}

/// The request a comparison is about.
struct Step<'a> {
    number: usize,
    t_us: u64,
    requester: ClientIdx,
    request: &'a Request,
}

impl Step<'_> {
    fn difference(&self, what: &str, model: String, real: String) -> Difference {
        Difference {
            step: self.number,
            t_us: self.t_us,
            requester: self.requester,
            request: self.request.to_string(),
            what: what.to_string(),
            model,
            real,
        }
    }
}

/// The model's actors, stepped in the order a trace says (or, for a
/// paced run, [`crate::paced`], each message in the order it was sent).
pub(crate) struct Model {
    client: Client,
    store: Store,
    pub(crate) store_state: StoreState,
    /// The guarded resource, the model's own (a shared lock's writers
    /// write to it; it is no server to compare with).
    resource: Resource,
    resource_state: ResourceState,
    pub(crate) clients: Vec<ClientState>,
    /// Messages sent and not yet delivered, per (sender, receiver), in
    /// send order, each with its number in the order of all sends.
    links: BTreeMap<(Id, Id), VecDeque<(u64, Msg)>>,
    sends: u64,
}

impl Model {
    /// The actors as `sim::engine::Sim::new` builds them, every client
    /// started in order.
    pub(crate) fn start(scenario: &Scenario) -> Self {
        let client = scenario.client();
        let store = scenario.store();
        let resource = Resource::new(scenario.fencing);
        let mut model = Model {
            store_state: store.initial_state(),
            store,
            resource_state: resource.on_start(resource_id(), &None, &mut Out::new()),
            resource,
            client,
            clients: Vec::new(),
            links: BTreeMap::new(),
            sends: 0,
        };
        for c in 0..scenario.clients {
            let mut out = Out::new();
            let state = model.client.on_start(client_id(c), &None, &mut out);
            model.clients.push(state);
            model.queue(client_id(c), sent(out));
        }
        model
    }

    /// Puts what `from` sent on its links.
    fn queue(&mut self, from: Id, sent: Vec<(Id, Msg)>) {
        for (to, msg) in sent {
            self.sends += 1;
            self.links
                .entry((from, to))
                .or_default()
                .push_back((self.sends, msg));
        }
    }

    /// Takes the message sent first of those not yet delivered: (from,
    /// to, the message).
    pub(crate) fn oldest(&mut self) -> Option<(Id, Id, Msg)> {
        let (&link, _) = self
            .links
            .iter()
            .filter_map(|(link, q)| q.front().map(|(n, _)| (link, *n)))
            .min_by_key(|(_, n)| *n)?;
        let (_, msg) = self.links.get_mut(&link)?.pop_front()?;
        Some((link.0, link.1, msg))
    }

    /// Takes the message the trace delivers from `from` to `to`: the one
    /// at the head of that link, which must print as the trace printed it.
    fn delivered(&mut self, from: Id, to: Id, kind: MsgKind, printed: &str) -> Result<Msg, String> {
        let msg = self
            .links
            .get_mut(&(from, to))
            .and_then(VecDeque::pop_front)
            .map(|(_, msg)| msg)
            .ok_or_else(|| {
                format!("the trace delivers `{printed}`, which the model's actors never sent")
            })?;
        if MsgKind::of(&msg) != kind || msg.to_string() != printed {
            return Err(format!(
                "out of step with the trace: it delivers `{printed}` where the model's actors sent `{msg}`"
            ));
        }
        Ok(msg)
    }

    /// The store handles `msg` from `from`; returns what it sent (queued
    /// on the links too).
    pub(crate) fn store_step(&mut self, from: Id, msg: Msg) -> Vec<(Id, Msg)> {
        let mut out = Out::new();
        let mut state = Cow::Owned(std::mem::take(&mut self.store_state));
        self.store
            .on_msg(store_id(), &mut state, from, msg, &mut out);
        self.store_state = state.into_owned();
        let sent = sent(out);
        self.queue(store_id(), sent.clone());
        sent
    }

    /// The resource handles a write from `from`.
    pub(crate) fn resource_step(&mut self, from: Id, msg: Msg) {
        let mut out = Out::new();
        let mut state = Cow::Borrowed(&self.resource_state);
        self.resource
            .on_msg(resource_id(), &mut state, from, msg, &mut out);
        if let Cow::Owned(s) = state {
            self.resource_state = s;
        }
        self.queue(resource_id(), sent(out));
    }

    /// Client `c` handles `msg` from `from`.
    pub(crate) fn client_step(&mut self, c: ClientIdx, from: Id, msg: Msg) {
        let mut out = Out::new();
        let mut state = Cow::Borrowed(&self.clients[c as usize]);
        self.client
            .on_msg(client_id(c), &mut state, from, msg, &mut out);
        if let Cow::Owned(s) = state {
            self.clients[c as usize] = s;
        }
        self.queue(client_id(c), sent(out));
    }

    /// Client `c`'s `timer` fires.
    pub(crate) fn timer(&mut self, c: ClientIdx, timer: Timer) {
        let mut out = Out::new();
        let mut state = Cow::Borrowed(&self.clients[c as usize]);
        self.client
            .on_timeout(client_id(c), &mut state, &timer, &mut out);
        if let Cow::Owned(s) = state {
            self.clients[c as usize] = s;
        }
        self.queue(client_id(c), sent(out));
    }
}

/// The messages an actor's step sent. Its timers fire where the trace
/// says; a fault-free run restarts nobody, so nothing saved is read.
fn sent<A: Actor<Msg = Msg>>(out: Out<A>) -> Vec<(Id, Msg)> {
    out.into_iter()
        .filter_map(|cmd| match cmd {
            Command::Send(to, msg) => Some((to, msg)),
            Command::SetTimer(..)
            | Command::CancelTimer(..)
            | Command::Save(..)
            | Command::ChooseRandom(..) => None,
        })
        .collect()
}

/// The model store's reply to client `c`, among what it `sent`.
fn reply_to(c: ClientIdx, sent: &[(Id, Msg)]) -> Result<&Reply, String> {
    sent.iter()
        .find_map(|(to, msg)| match msg {
            Msg::Reply { reply, .. } if *to == client_id(c) => Some(reply),
            _ => None,
        })
        .ok_or_else(|| format!("the model's store sent client {c} no reply"))
}

/// The model store's notifications among what it `sent`, per client.
fn notifications(sent: &[(Id, Msg)]) -> BTreeMap<ClientIdx, Vec<Event>> {
    let mut told: BTreeMap<ClientIdx, Vec<Event>> = BTreeMap::new();
    for (to, msg) in sent {
        if let (Msg::Notify { event, .. }, Some(c)) = (msg, client_of(*to)) {
            told.entry(c).or_default().push(zk_event(event));
        }
    }
    // One request's events to one session, in a fixed order: the client
    // library hands each watch its own event, so their order among
    // themselves is not seen on the real side.
    for events in told.values_mut() {
        events.sort();
    }
    told
}

fn zk_event(event: &WatchEvent) -> Event {
    match *event {
        WatchEvent::Zk { kind, path } => (kind, path),
        WatchEvent::Etcd { .. } | WatchEvent::Consul { .. } | WatchEvent::ConsulList { .. } => {
            unreachable!("a ZooKeeper recipe's store sends ZooKeeper events")
        }
    }
}

fn show_events(events: &[Event]) -> String {
    let shown: Vec<String> = events
        .iter()
        .map(|&(kind, path)| WatchEvent::Zk { kind, path }.to_string())
        .collect();
    format!("[{}]", shown.join(", "))
}

/// The actor a trace's party names.
fn actor(party: Party) -> Id {
    match party {
        Party::Store => store_id(),
        Party::Resource => models::ids::resource_id(),
        Party::Client(c) => client_id(c),
    }
}

/// A reply as compared: without its zxids (the real server's count its
/// sessions and the set-up too; their order is compared apart), and a
/// stat's data only where the request reads it (`get_data`: ZooKeeper's
/// `exists` returns no data, which the model's stat carries anyway).
fn comparable(req: &Request, reply: &Reply) -> Reply {
    let reads_data = matches!(req, Request::GetData { .. });
    match reply {
        Reply::Created { path, .. } => Reply::Created {
            path: *path,
            czxid: 0,
        },
        Reply::Stat(stat) => Reply::Stat(stat.map(|s| Stat {
            czxid: 0,
            mzxid: 0,
            data: if reads_data { s.data } else { Data::Empty },
            ..s
        })),
        Reply::Multi(results) => Reply::Multi(
            results
                .iter()
                .map(|r| match *r {
                    MultiResult::Created { path, .. } => MultiResult::Created { path, czxid: 0 },
                    MultiResult::Set(s) => MultiResult::Set(Stat {
                        czxid: 0,
                        mzxid: 0,
                        ..s
                    }),
                    MultiResult::Checked
                    | MultiResult::Deleted
                    | MultiResult::RolledBack
                    | MultiResult::Error(_)
                    | MultiResult::RuntimeInconsistency => *r,
                })
                .collect(),
        ),
        Reply::Connected
        | Reply::Deleted
        | Reply::Children(_)
        | Reply::Error(_)
        | Reply::LeaseGranted { .. }
        | Reply::LeaseNotFound
        | Reply::TxnResult { .. }
        | Reply::RangeResult { .. }
        | Reply::WatchCreated { .. }
        | Reply::DeleteResult { .. }
        | Reply::RangeCount { .. }
        | Reply::LeaseRevoked
        | Reply::LeaseKeptAlive
        | Reply::LeaseTtl { .. }
        | Reply::Redis(_)
        | Reply::Consul(_)
        | Reply::Synced => reply.clone(),
    }
}

/// The zxids a ZooKeeper reply carries.
fn zxids_of(reply: &Reply) -> Vec<u64> {
    match reply {
        Reply::Created { czxid, .. } => vec![*czxid],
        Reply::Stat(Some(s)) => vec![s.czxid, s.mzxid],
        // Each op's result carries what the same write sent alone does;
        // a result only a multi has (a check, a rolled-back op) none.
        Reply::Multi(results) => results
            .iter()
            .flat_map(|r| match r.single_reply() {
                Reply::Multi(_) => Vec::new(),
                single => zxids_of(&single),
            })
            .collect(),
        Reply::Stat(None)
        | Reply::Connected
        | Reply::Deleted
        | Reply::Children(_)
        | Reply::Synced
        | Reply::Error(_) => Vec::new(),
        // etcd's revisions: no ZooKeeper recipe is answered with them.
        Reply::LeaseGranted { .. }
        | Reply::LeaseNotFound
        | Reply::TxnResult { .. }
        | Reply::RangeResult { .. }
        | Reply::WatchCreated { .. }
        | Reply::DeleteResult { .. }
        | Reply::RangeCount { .. }
        | Reply::LeaseRevoked
        | Reply::LeaseKeptAlive
        | Reply::LeaseTtl { .. } => Vec::new(),
        // Redis has no zxids (its conformance replay is crate::redis's);
        // no Consul recipe is replayed.
        Reply::Redis(_) | Reply::Consul(_) => Vec::new(),
    }
}

/// Whether (model, real) zxid pairs order the same way: one real zxid
/// for each model zxid, rising with it.
fn same_order(pairs: &[(u64, u64)]) -> bool {
    let mut pairs = pairs.to_vec();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1)
}

/// The real sessions, one per model session, and their watches.
struct Real {
    backend: Backend,
    /// Each client's session, as the model names it.
    sessions: BTreeMap<ClientIdx, SessionId>,
    /// Watches set and not yet fired, per client.
    watches: BTreeMap<ClientIdx, Vec<Watch>>,
}

impl Real {
    /// Carries out client `c`'s request on its real session and keeps the
    /// watch it set.
    async fn call(
        &mut self,
        c: ClientIdx,
        session: SessionId,
        req: &Request,
    ) -> Result<Reply, String> {
        if matches!(req, Request::Connect) && self.sessions.insert(c, session).is_some() {
            return Err(format!(
                "client {c} opened a second session: the baseline has one per client"
            ));
        }
        let (reply, _header, watch) = self.backend.call(session, req).await;
        if let Some(w) = watch {
            self.watches.entry(c).or_default().push(w);
        }
        Ok(reply)
    }

    /// The watch events each session has been sent since the last call,
    /// each once (the client library hands one event to every watch of the
    /// session on that node, where the server sent it once). A cheap
    /// request on each session with a watch set is the fence: ZooKeeper
    /// sends a session its watch events before its answers to later
    /// requests, and the library hands an event to its watch before it
    /// hands over a later answer.
    async fn fired(&mut self) -> BTreeMap<ClientIdx, Vec<Event>> {
        let fence = Request::Exists {
            path: names::LOCK,
            watch: false,
        };
        let mut fired: BTreeMap<ClientIdx, Vec<Event>> = BTreeMap::new();
        let watching: Vec<ClientIdx> = self
            .watches
            .iter()
            .filter(|(_, w)| !w.is_empty())
            .map(|(c, _)| *c)
            .collect();
        for c in watching {
            self.backend.call(self.sessions[&c], &fence).await;
            let set = std::mem::take(self.watches.entry(c).or_default());
            for mut watch in set {
                match poll_once(&mut watch).await {
                    Some(done) => {
                        fired
                            .entry(c)
                            .or_default()
                            .extend(done.events.iter().map(zk_event));
                        // A stream goes on (no ZooKeeper watch does).
                        if let Some(rest) = done.then {
                            self.watches.entry(c).or_default().push(rest);
                        }
                    }
                    None => self.watches.entry(c).or_default().push(watch),
                }
            }
        }
        for events in fired.values_mut() {
            events.sort();
            events.dedup();
        }
        fired.retain(|_, e| !e.is_empty());
        fired
    }
}

/// The watch's events if it has fired by now (it is not waited for).
async fn poll_once(watch: &mut Watch) -> Option<Fired> {
    std::future::poll_fn(|cx| {
        Poll::Ready(match watch.as_mut().poll(cx) {
            Poll::Ready(events) => Some(events),
            Poll::Pending => None,
        })
    })
    .await
}

/// The report's section.
pub fn section(rows: &[ReplayRow], skipped: &[u16]) -> String {
    let mut md = String::from("\n## Barriers, queues, shared locks and semaphores: the model's runs replayed on ZooKeeper 3.8\n\nA real herd of barrier members, queue consumers, readers and writers or lease holders races (who creates `ready`, who deletes an element first, whose node comes first), so counts measured on a real run would depend on timing. Instead each recipe's fault-free baseline scenario (`sim::herd::baseline`: N clients at once, one round; a queue's producers and items as the baseline has them) is simulated with its trace kept, and the model's own run is replayed on the real server (`validate/src/replay.rs`). The model's client and store actors are stepped in the trace's order (every delivery must print as the trace printed it, or the replay stops), and every request the model's store was handed is carried out, in that order and one at a time, on the requesting client's own real session (one per model session, opened as the trace opens them). Compared at every request: the real reply with the model's (kind, path names with their sequence suffixes, the data read, the owner, the error; zxids only by their order), and, after a fence (`exists(/lock)` on every session with a watch set: ZooKeeper sends a session its watch events before its answers to later requests), the watch events (kind, path) each session was sent with the model's notifications to that client at that step. Steps replayed: the trace's deliveries and timers. Requests by kind as the model names them: carried out on the server (real), counted by the simulator (model); notifications: sent by the server, once per session and step (real), sent by the model's store (model).\n\n| recipe | clients | steps replayed | requests (real / model) | notifications (real / model) | replies equal | events equal |\n|---|---|---|---|---|---|---|\n");
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} / {} | {} | {} |\n",
            r.recipe,
            clients_cell(r),
            r.steps,
            requests_cell(&r.requests_real, &r.requests_model),
            r.notifications_real,
            r.notifications_model,
            yes_no(r.replies_equal && r.zxids_in_order && r.error.is_none()),
            yes_no(r.events_equal && r.error.is_none()),
        ));
    }
    if !skipped.is_empty() {
        md.push_str(&format!(
            "\nNot replayed with {skipped:?} client(s): a barrier, a queue, a shared lock or a semaphore needs at least {FEWEST_CLIENTS}.\n"
        ));
    }
    md.push_str(&differences(rows));
    md
}

/// `20`, or for a queue `20 (1 producer, 3 items)`.
fn clients_cell(r: &ReplayRow) -> String {
    if r.producers == 0 {
        return r.clients.to_string();
    }
    let plural = |n: u16, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    format!(
        "{} ({}, {})",
        r.clients,
        plural(r.producers, "producer"),
        plural(r.items, "item")
    )
}

fn yes_no(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "NO"
    }
}

/// `create 10 / 10, delete 5 / 5`: every kind either side counted.
fn requests_cell(real: &BTreeMap<String, u64>, model: &BTreeMap<String, u64>) -> String {
    let kinds: std::collections::BTreeSet<&String> = real.keys().chain(model.keys()).collect();
    kinds
        .into_iter()
        .map(|k| {
            format!(
                "{k} {} / {}",
                real.get(k).copied().unwrap_or(0),
                model.get(k).copied().unwrap_or(0)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many differences of a row the report shows in detail (all of them
/// are in `validation.json`).
const SHOWN_DIFFERENCES: usize = 5;

/// The rows that stopped or differ, their first differences in detail.
fn differences(rows: &[ReplayRow]) -> String {
    let mut md = String::new();
    for r in rows.iter().filter(|r| !r.agrees()) {
        md.push_str(&format!("\n**{}, {} clients:**", r.recipe, r.clients));
        if let Some(e) = &r.error {
            md.push_str(&format!(" the replay stopped: {e}."));
        }
        md.push('\n');
        for d in r.differences.iter().take(SHOWN_DIFFERENCES) {
            md.push_str(&format!(
                "- step {} (model time {} µs), client {}'s `{}`: {} — model `{}`, real `{}`\n",
                d.step, d.t_us, d.requester, d.request, d.what, d.model, d.real
            ));
        }
        if r.differences.len() > SHOWN_DIFFERENCES {
            md.push_str(&format!(
                "- and {} more (`validation.json`)\n",
                r.differences.len() - SHOWN_DIFFERENCES
            ));
        }
        if !r.zxids_in_order {
            md.push_str("- the replies' zxids are not in the model's order\n");
        }
    }
    md
}
