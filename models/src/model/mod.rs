//! The model: the store, the guarded resource and N interchangeable
//! clients, their FIFO links, and a fault budget, as a stateright `Model`
//! that lockstep's explorer (and stateright's) checks.
//!
//! - [`config`]: what to check, and `into_model()`;
//! - [`state`]: the state and the actions;
//! - [`time`]: when a timer may fire (time is abstracted);
//! - [`commute`]: which steps commute (the partial-order reduction);
//! - `goals`: the progress goals, and what they read of a client;
//! - [`describe`]: each action in words, for traces and the Explorer;
//! - [`view`]: a state as its actors show it, field by field;
//! - [`sequence`]: a path as a sequence diagram;
//! - this module: how an action steps the actors, and the properties (read
//!   off [`crate::properties`]'s monitors).
//!
//! Faults are budgeted, which keeps the state space finite: `crashes` (for
//! good, unless a `restarts` budget brings the client back as a new
//! process, as the simulator restarts one), `pauses` (process frozen with its timers and inbox, then resumes),
//! `partitions` (the client–store link carries nothing until it heals; what
//! was sent arrives afterwards, as TCP would deliver it), `lost_replies` (the
//! store applied a request but the reply never arrives).

pub mod clock;
pub mod commute;
mod config;
pub mod describe;
mod goals;
pub mod sequence;
mod shared;
mod state;
mod time;
pub mod view;

pub use clock::{Due, TickTiming, Time, TICK_KEYS};
pub use config::{
    check_acquire_timeout, check_fencing, check_given, check_interrupts, check_local_sessions,
    check_masters, check_max_lag, check_observers, check_permits, check_producers,
    check_redis_policy, check_reentries, check_servers, check_writers, default_permits,
    default_producers, default_writers, writes_to_resource, ConfigError, FaultBudget, ModelCfg,
    Setting, DEFAULT_MAX_LAG, MAX_CLIENTS, MAX_REENTRIES, MIN_CLIENTS,
};
pub use goals::{ClientMarks, Goal, GoalMarks, GoalReads, GoalView};
pub use shared::{prefetch, Shared};
pub use state::{Action, ClientSlot, Clocked, Link, ModelState, Saved, Slots, Status, Timers};

use crate::client::{Client, ClientState, Connection, Marks, Phase};
use crate::ids::{client_id, client_of, resource_id, store_id, ClientIdx};
use crate::msg::{Msg, Timer, WatchEvent};
use crate::properties::{
    is_release, observe_client, observe_notified, observe_release, observe_resource, observe_store,
    Kind, Monitors, Observation, PropertyName,
};
use crate::recipe::Face;
use crate::resource::{Resource, ResourceState};
use crate::store::ensemble::{Ensemble, LeaderLink, Notified};
use crate::store::{Store, StoreState};
use state::{arm_timer, insert_timer, remove_timer};
use stateright::actor::{Actor, Command, Id, Out};
use stateright::{Model, Property};
use std::borrow::Cow;

pub struct RecipeModel {
    pub cfg: ModelCfg,
    pub store: Store,
    pub resource: Resource,
    pub client: Client,
}

/// Whether a client's connection can carry its current session on: the
/// session is alive, or is being opened on that connection for the first
/// time. Not when it ended, nor when the client gave up on its last one
/// (LOST) and is opening a new session: a new session is a new connection,
/// and nothing its old one held survives.
pub fn session_carries_on(store: &StoreState, client: &ClientState) -> bool {
    store.is_alive(client.session)
        || (!store.ended(client.session) && client.connection != Connection::Lost)
}

/// What a reconnect keeps of a cut link: watch events (re-registered
/// watches fire for what changed), the expiry notice (told on reconnect) and
/// a session the client gave up (its close — and, on etcd, its watch's
/// cancel, which is the client's own — goes out on the new connection; a
/// library that does not close, Curator's, sent none). Replies, requests and
/// heartbeats in flight went with the old connection.
///
/// A ZooKeeper client whose session expired meanwhile is told so on
/// reconnect and gets no watch events (`session_alive` false); etcd watch
/// events belong to the client's connection, not to its lease.
pub fn survives_reconnect(msg: &Msg, session_alive: bool) -> bool {
    match msg {
        Msg::Notify {
            event: WatchEvent::Zk { .. },
            ..
        } => session_alive,
        Msg::Notify { .. } | Msg::Expired { .. } | Msg::Close { .. } => true,
        Msg::Reply { .. }
        | Msg::Request { .. }
        | Msg::Ping { .. }
        | Msg::Pong { .. }
        | Msg::Write { .. }
        | Msg::WriteAck { .. } => false,
    }
}

/// Whether `msg`, on a client's link to the store (`to_store` its way), is
/// the client's outstanding request or the reply to it (`epoch` the
/// client's): while one is on its way, held by a cut or not, the client's
/// resend timer waits, since nothing was lost. The one rule of both
/// engines (the checker's `timer_may_fire`, the simulator's resend timer).
pub fn awaited_on_link(msg: &Msg, to_store: bool, epoch: u8) -> bool {
    match to_store {
        true => matches!(msg, Msg::Request { .. }),
        false => matches!(msg, Msg::Reply { epoch: e, .. } if *e == epoch),
    }
}

/// Feeds the monitors what they heed (copied first if shared).
fn observe(state: &mut ModelState, obs: Observation) {
    if state.monitors.heeds(&obs) {
        Shared::make_mut(&mut state.monitors).observe(obs);
    }
}

/// A client's last seen position is read only by a reconnect: once none
/// can come (no pause, partition, failover, isolation or mute left in the budget
/// or under way), it is forgotten, so that states that differ only there are one.
fn forget_unread_positions(state: &mut ModelState) {
    let Some(e) = state.store.ensemble.as_ref() else {
        return;
    };
    if !e.seen.iter().any(|&p| p > 0) {
        return;
    }
    let b = state.budget;
    let under_way = e.deposed().is_some()
        || e.followers.iter().any(|f| f.link.holds_for_leader())
        || state
            .clients
            .iter()
            .any(|s| s.partitioned || s.status == Status::Paused);
    let store_cuts = b.failovers + b.isolations + b.mutes;
    if b.pauses == 0 && b.partitions == 0 && store_cuts == 0 && !under_way {
        let store = Shared::make_mut(&mut state.store);
        let e = store.ensemble.as_mut().expect("an ensemble");
        e.seen.iter_mut().for_each(|p| *p = 0);
    }
}

impl RecipeModel {
    /// The `always` and `sometimes` properties of the recipe's
    /// application, in the order lockstep reports them: each is read off
    /// the monitors of a state (`Monitors::holds`).
    pub fn state_properties(&self) -> Vec<PropertyName> {
        self.cfg
            .judged()
            .into_iter()
            .filter(|p| p.kind() != Kind::Progress)
            .collect()
    }

    /// Client `c` (running) reconnects on a new connection: what was in
    /// flight on the old one is lost, and the client resends what it awaited.
    fn reconnect(&self, state: &mut ModelState, c: ClientIdx) {
        let alive = session_carries_on(&state.store, &state.clients[c as usize].state);
        // The old connection's replies held by its server go with it; the
        // handshake tells of a session the leader has ended.
        if state.store.ensemble.is_some() {
            let session = state.clients[c as usize].state.session;
            self.store_step(state, false, |st, o| self.store.reconnected(st, session, o));
        }
        let slot = state.slot_mut(c);
        slot.retain(Link::StoreToClient, |m| survives_reconnect(m, alive));
        slot.retain(Link::ClientToStore, |m| survives_reconnect(m, alive));
        if let Some(ticks) = self.cfg.time.ticks() {
            clock::sent_anew(slot, ticks.latency);
        }
        self.client_step(state, c, |s, o| self.client.on_reconnect(s, alive, o));
    }

    /// The clients whose server closed their connections (an election, an
    /// old leader stepping down): each running one reconnects at once; a
    /// paused or cut-off one does when its fault ends, by the step that
    /// ends it with a reconnect.
    fn reconnect_all(&self, state: &mut ModelState, clients: &[ClientIdx]) {
        for &c in clients {
            let slot = &state.clients[c as usize];
            if slot.status == Status::Running && !slot.partitioned {
                self.reconnect(state, c);
            }
        }
    }

    /// Applies an actor's output commands: sends go onto links, timers into
    /// the sender's timer set. Returns whom the notifications sent woke.
    fn apply_out<A>(&self, state: &mut ModelState, from: Id, out: Out<A>) -> Notified
    where
        A: Actor<Msg = Msg, Timer = Timer>,
    {
        let mut notified = Notified::default();
        let ensemble = state.store.ensemble.is_some();
        let ticks = self.cfg.time.ticks();
        let latency = ticks.map(|t| t.latency);
        for cmd in out {
            match cmd {
                Command::Send(dst, msg) => {
                    if let Some(c) = client_of(dst) {
                        if state.clients[c as usize].status == Status::Crashed {
                            // Its connection closed with it, and the server
                            // dropped the connection's watches: nothing is
                            // sent (and its slot stays shared).
                            continue;
                        }
                        if self.client.counts_in_herd(c) {
                            notified.add(c, &msg, ensemble);
                        }
                        let slot = state.slot_mut(c);
                        let link = match from == store_id() {
                            true => Link::StoreToClient,
                            false => Link::ResourceToClient,
                        };
                        slot.push(link, msg, latency);
                    } else if let Some(c) = client_of(from) {
                        let link = match dst == store_id() {
                            true => Link::ClientToStore,
                            false => Link::ClientToResource,
                        };
                        state.slot_mut(c).push(link, msg, latency);
                    }
                }
                // A timed check restarts the countdown of a timer set
                // again; an untimed one leaves a timer armed already (a
                // store hearing a session again) shared.
                Command::SetTimer(t, range) => match ticks {
                    Some(ticks) => self.arm(state, from, t, ticks.window_of(&range)),
                    None => {
                        if !self.armed(state, from, &t) {
                            insert_timer(self.timers_of(state, from), t);
                        }
                    }
                },
                Command::CancelTimer(t) => {
                    if self.armed(state, from, &t) {
                        self.disarm(state, from, &t);
                    }
                }
                // A client's saves are kept by its step (`keep_saved`).
                Command::ChooseRandom(..) | Command::Save(_) => {}
            }
        }
        notified
    }

    /// Keeps what client `from` saved for a successor, where a restart may
    /// need it (a check with restarts); elsewhere nothing is kept, so the
    /// slot stays as it was (and shared).
    fn keep_saved(&self, state: &mut ModelState, c: ClientIdx, out: &Out<Client>) {
        let last = out.iter().rev().find_map(|cmd| match cmd {
            Command::Save(storage) => Some(*storage),
            Command::Send(..)
            | Command::SetTimer(..)
            | Command::CancelTimer(_)
            | Command::ChooseRandom(..) => None,
        });
        let Some(storage) = last else {
            return;
        };
        let saved = Saved(Some(storage));
        if self.cfg.faults.restarts > 0 && state.clients[c as usize].saved != saved {
            state.slot_mut(c).saved = saved;
        }
    }

    /// Crashed client `c` starts again as a new process, as the simulator
    /// restarts one (`fault_end` of a crash, `start_client`): the store
    /// drops the old connection's watches, and the new process starts from
    /// its predecessor's saved storage with a new session on a new
    /// connection. Nothing the old connection carried reaches it (its
    /// inbound links were emptied by the crash, and nothing is sent to a
    /// crashed client); what the old process sent still arrives.
    fn restart(&self, state: &mut ModelState, c: ClientIdx) {
        let mut store = (*state.store).clone();
        store.connection_closed(c);
        if store != *state.store {
            state.store = Shared::new(store);
        }
        let slot = state.slot_mut(c);
        slot.status = Status::Running;
        let saved = slot.saved.0;
        // The crash told the monitors its process believes nothing any more.
        let before = Marks {
            holding: false,
            ..slot.state.marks()
        };
        let id = client_id(c);
        self.client_step_from(state, c, before, |s, o| {
            *s = Cow::Owned(self.client.on_start(id, &saved, o));
        });
    }

    /// Whether `id` has timer `t` armed.
    fn armed(&self, state: &ModelState, id: Id, t: &Timer) -> bool {
        let timers = match client_of(id) {
            Some(c) => &state.clients[c as usize].timers,
            None => &*state.store_timers,
        };
        timers.binary_search(t).is_ok()
    }

    fn timers_of<'a>(&self, state: &'a mut ModelState, id: Id) -> &'a mut Timers {
        match client_of(id) {
            Some(c) => &mut state.slot_mut(c).timers,
            None => Shared::make_mut(&mut state.store_timers),
        }
    }

    /// Arms `id`'s timer `t` counting down from `due` (a timed check).
    fn arm(&self, state: &mut ModelState, id: Id, t: Timer, due: Due) {
        match client_of(id) {
            Some(c) => {
                let slot = state.slot_mut(c);
                let timers = &mut slot.timers;
                let dues = &mut slot.clock.0.get_or_insert_with(Default::default).timers;
                arm_timer(timers, dues, t, due);
            }
            None => {
                let dues = state.store_clock.0.get_or_insert_with(Default::default);
                arm_timer(Shared::make_mut(&mut state.store_timers), dues, t, due);
            }
        }
    }

    /// Disarms `id`'s timer `t`, and its countdown where one is kept.
    fn disarm(&self, state: &mut ModelState, id: Id, t: &Timer) {
        match client_of(id) {
            Some(c) => {
                let slot = state.slot_mut(c);
                let dues = slot.clock.0.as_mut().map(|clock| &mut clock.timers);
                remove_timer(&mut slot.timers, dues, t);
            }
            None => {
                let dues = state.store_clock.0.as_deref_mut();
                remove_timer(Shared::make_mut(&mut state.store_timers), dues, t);
            }
        }
    }

    /// A store step. `release` says whether it is a release step (the
    /// release request, a session close or expiry) if it changes the store.
    fn store_step(
        &self,
        state: &mut ModelState,
        release: bool,
        f: impl FnOnce(&mut Cow<StoreState>, &mut Out<Store>),
    ) {
        self.store_step_released(state, |st, o| {
            f(st, o);
            release
        });
    }

    /// A store step that says itself whether it was a release step (one
    /// that passed on a release held while its server had no leader).
    fn store_step_released(
        &self,
        state: &mut ModelState,
        f: impl FnOnce(&mut Cow<StoreState>, &mut Out<Store>) -> bool,
    ) {
        let before = state.store.header();
        let mut release = false;
        let n = self.run_store(state, |st, o| release = f(st, o));
        let header = state.store.header();
        if release && header != before {
            let (obs, _) = observe_release(self.ensemble_mut(state), n.woken, header);
            observe(state, obs);
        }
        // Counted: the tallies of changes every server has applied go.
        if state
            .store
            .ensemble
            .as_ref()
            .is_some_and(|e| e.tallies_to_prune())
        {
            if let Some(e) = self.ensemble_mut(state) {
                e.prune_tallies();
            }
        }
    }

    /// The store's ensemble, to tally its herd (`None`: one server, whose
    /// state is left shared).
    fn ensemble_mut<'a>(&self, state: &'a mut ModelState) -> Option<&'a mut Ensemble> {
        state.store.ensemble.as_ref()?;
        Shared::make_mut(&mut state.store).ensemble.as_deref_mut()
    }

    /// Runs a store step and what it sent, and tells the monitors of its
    /// wake-ups and the items it removed. Whom its notifications woke.
    fn run_store(
        &self,
        state: &mut ModelState,
        f: impl FnOnce(&mut Cow<StoreState>, &mut Out<Store>),
    ) -> Notified {
        let removed_before = state.store.items_removed();
        let mut out = Out::new();
        let mut cow = Cow::Borrowed(&*state.store);
        f(&mut cow, &mut out);
        // A request that only read the store leaves it shared (the store
        // takes a copy to serve any request).
        if let Cow::Owned(s) = cow {
            if s != *state.store {
                state.store = Shared::new(s);
            }
        }
        let n = self.apply_out(state, store_id(), out);
        // In the simulator's order: the wake-ups, then the items removed.
        if n.woken.count() > 0 {
            let (seen, _) = observe_notified(self.ensemble_mut(state), &n);
            for obs in seen {
                observe(state, obs);
            }
        }
        for obs in observe_store(removed_before, &state.store) {
            observe(state, obs);
        }
        n
    }

    fn client_step(
        &self,
        state: &mut ModelState,
        c: ClientIdx,
        f: impl FnOnce(&mut Cow<ClientState>, &mut Out<Client>),
    ) {
        let before = state.clients[c as usize].state.marks();
        self.client_step_from(state, c, before, f);
    }

    /// A client step, the monitors told what changed since `before`.
    fn client_step_from(
        &self,
        state: &mut ModelState,
        c: ClientIdx,
        before: Marks,
        f: impl FnOnce(&mut Cow<ClientState>, &mut Out<Client>),
    ) {
        let mut out = Out::new();
        let slot = &state.clients[c as usize];
        let mut cow = Cow::Borrowed(&slot.state);
        f(&mut cow, &mut out);
        if let Cow::Owned(s) = cow {
            state.slot_mut(c).state = s;
        }
        self.keep_saved(state, c, &out);
        self.apply_out(state, client_id(c), out);
        if let Some(obs) = observe_client(c, before, &state.clients[c as usize].state) {
            observe(state, obs);
        }
    }
}

/// The model's steps; `impl Model` below hands them to stateright.
impl RecipeModel {
    fn initial_state(&self) -> Vec<ModelState> {
        let mut state = ModelState {
            store: Shared::new(self.store.initial_state()),
            store_timers: Shared::new(Timers::new()),
            resource: Shared::new(ResourceState::default()),
            clients: Slots::new(),
            budget: self.cfg.faults,
            monitors: Shared::new(Monitors::for_run(
                self.cfg.recipe.app(),
                self.client.roles(),
                self.cfg.permits.into(),
            )),
            store_clock: Clocked(self.cfg.time.ticks().map(|_| Box::default())),
        };
        for c in 0..self.cfg.clients {
            let mut out = Out::new();
            let client_state = self
                .client
                .on_start(client_id(c as ClientIdx), &None, &mut out);
            state.clients.push(Shared::new(ClientSlot {
                state: client_state,
                status: Status::Running,
                partitioned: false,
                missed_contact: false,
                timers: Timers::new(),
                from_store: Vec::new(),
                to_store: Vec::new(),
                to_resource: Vec::new(),
                from_resource: Vec::new(),
                saved: Saved::default(),
                clock: Clocked(self.cfg.time.ticks().map(|_| Box::default())),
            }));
            self.keep_saved(&mut state, c as ClientIdx, &out);
            self.apply_out(&mut state, client_id(c as ClientIdx), out);
        }
        vec![state]
    }

    fn enabled(&self, state: &ModelState, actions: &mut Vec<Action>) {
        // A timed check's deliveries, timers, resumes and heals wait for
        // their moment (`clock`); an untimed one's for what they need.
        let untimed = self.cfg.time.ticks().is_none();
        for (i, slot) in state.clients.iter().enumerate() {
            let c = i as ClientIdx;
            let running = slot.status == Status::Running;
            if untimed {
                self.untimed_waits(state, c, actions);
            }
            let active = slot.state.phase != Phase::Done;
            if state.budget.crashes > 0 && slot.is_live() && active {
                actions.push(Action::Crash(c));
            }
            // A new process starts once what its predecessor sent has
            // arrived (its replies went with the old connection): a restart
            // takes longer than a message's flight, as the simulator's down
            // times (hundreds of milliseconds) are longer than its latencies.
            let sent_arrived = slot.to_store.is_empty() && slot.to_resource.is_empty();
            if state.budget.restarts > 0 && slot.status == Status::Crashed && sent_arrived {
                actions.push(Action::Restart(c));
            }
            if state.budget.pauses > 0 && running && active && !slot.partitioned {
                actions.push(Action::Pause(c));
            }
            if untimed {
                self.untimed_resumes(state, c, actions);
            }
            if state.budget.partitions > 0 && running && active && !slot.partitioned {
                actions.push(Action::Partition(c));
            }
            if untimed {
                self.untimed_heals(state, c, actions);
            }
            if state.budget.lost_replies > 0
                && slot.is_live()
                && matches!(slot.from_store.first(), Some(Msg::Reply { .. }))
            {
                actions.push(Action::LoseReply(c));
            }
            if state.budget.interrupts > 0 && running && slot.state.phase == Phase::Acquiring {
                actions.push(Action::Interrupt(c));
            }
            // A live session of a client that runs (or is paused, cut
            // off): its node's check may go critical.
            let session = slot.state.session;
            if state.budget.critical_checks > 0 && active && state.store.is_alive(session) {
                actions.push(Action::CheckCritical(c));
            }
        }
        self.store_faults(state, actions);
        match self.cfg.time.ticks() {
            None => {
                for t in state.store_timers.iter() {
                    match *t {
                        Timer::Expiry(s) => {
                            if state.store.is_alive(s) && self.silent(state, s) {
                                actions.push(Action::Expire(s));
                            }
                        }
                        Timer::KeyTtl { master, key } => {
                            let ttl = state.store.redis.get(master, key).and_then(|e| e.ttl);
                            if let Some(ttl) = ttl.filter(|t| self.ttl_may_run_out(state, t.setter))
                            {
                                actions.push(Action::ExpireKey {
                                    setter: ttl.setter.client,
                                    master,
                                    key,
                                });
                            }
                        }
                        Timer::LockDelay { key } => {
                            let owner = state.store.consul.as_ref().and_then(|c| c.delay_of(key));
                            let action = owner
                                .filter(|&o| self.lock_delay_may_end(state, o))
                                .map(Action::EndLockDelay);
                            // One action ends every key the session held.
                            if let Some(a) = action.filter(|a| !actions.contains(a)) {
                                actions.push(a);
                            }
                        }
                        // The answer of a query whose wait ran out is what
                        // it would have been: the recipe asks again. The
                        // checker leaves that stutter out.
                        Timer::QueryWait { .. } => {}
                        Timer::Think
                        | Timer::Hold
                        | Timer::Retry
                        | Timer::Ping
                        | Timer::Deadline
                        | Timer::Wake
                        | Timer::GiveUp
                        | Timer::Validity
                        | Timer::Renew
                        | Timer::Kill => {}
                    }
                }
            }
            Some(ticks) => self.push_timed_actions(ticks, state, actions),
        }
    }

    fn step(&self, last: &ModelState, action: Action) -> Option<ModelState> {
        let mut state = last.clone();
        match action {
            Action::Deliver(c, link) => {
                let slot = state.slot_mut(c);
                let msg = slot.pop(link)?;
                let src = client_id(c);
                match link {
                    Link::StoreToClient => {
                        slot.missed_contact = false;
                        self.client_step(&mut state, c, |s, o| {
                            self.client.on_msg(src, s, store_id(), msg, o)
                        });
                    }
                    Link::ResourceToClient => {
                        self.client_step(&mut state, c, |s, o| {
                            self.client.on_msg(src, s, resource_id(), msg, o)
                        });
                    }
                    Link::ClientToStore => {
                        let release = is_release(&msg);
                        self.store_step(&mut state, release, |s, o| {
                            self.store.on_msg(store_id(), s, src, msg, o)
                        });
                    }
                    Link::ClientToResource => {
                        let mut out = Out::new();
                        let mut cow = Cow::Borrowed(&*state.resource);
                        self.resource
                            .on_msg(resource_id(), &mut cow, src, msg.clone(), &mut out);
                        if let Cow::Owned(r) = cow {
                            state.resource = Shared::new(r);
                        }
                        let answer = out.iter().find_map(|cmd| match cmd {
                            Command::Send(_, ack) => observe_resource(c, &msg, ack),
                            Command::SetTimer(..)
                            | Command::CancelTimer(_)
                            | Command::ChooseRandom(..)
                            | Command::Save(_) => None,
                        });
                        self.apply_out(&mut state, resource_id(), out);
                        if let Some(obs) = answer {
                            observe(&mut state, obs);
                        }
                    }
                }
            }
            Action::Timeout(c, t) => {
                self.disarm(&mut state, client_id(c), &t);
                let id = client_id(c);
                self.client_step(&mut state, c, |s, o| self.client.on_timeout(id, s, &t, o));
            }
            Action::Expire(s) => {
                let t = Timer::Expiry(s);
                // Enabled only while the timer is armed: it is there.
                self.disarm(&mut state, store_id(), &t);
                self.store_step(&mut state, true, |st, o| {
                    self.store.on_timeout(store_id(), st, &t, o)
                });
            }
            Action::ExpireKey { master, key, .. } => {
                let t = Timer::KeyTtl { master, key };
                self.disarm(&mut state, store_id(), &t);
                self.store_step(&mut state, true, |st, o| {
                    self.store.on_timeout(store_id(), st, &t, o)
                });
            }
            Action::CheckCritical(c) => {
                state.budget.critical_checks -= 1;
                let session = state.store.known(state.clients[c as usize].state.session);
                self.disarm(&mut state, store_id(), &Timer::Expiry(session));
                self.store_step(&mut state, true, |st, o| {
                    self.store.check_critical(st, session, o)
                });
            }
            Action::EndLockDelay(owner) => {
                let keys: Vec<_> = state
                    .store
                    .consul
                    .iter()
                    .flat_map(|c| c.delays.iter())
                    .filter(|(_, s)| *s == owner)
                    .map(|(key, _)| *key)
                    .collect();
                for key in keys {
                    let t = Timer::LockDelay { key };
                    self.disarm(&mut state, store_id(), &t);
                    self.store_step(&mut state, false, |st, o| {
                        self.store.on_timeout(store_id(), st, &t, o)
                    });
                }
            }
            Action::RestartMaster(m) => {
                state.budget.master_restarts -= 1;
                self.store_step(&mut state, false, |st, o| {
                    self.store.restart_master(st, m, o);
                });
            }
            Action::ClockJump(m) => {
                state.budget.clock_jumps -= 1;
                self.store_step(&mut state, false, |st, o| {
                    self.store.jump_clock(st, m, o);
                });
            }
            Action::Replicate => {
                self.store_step(&mut state, false, |st, o| {
                    self.store.replicate(st, o);
                });
            }
            Action::Apply(f) => {
                self.store_step(&mut state, false, |st, o| {
                    self.store.apply_next(st, usize::from(f), o);
                });
            }
            Action::Failover if state.store.ensemble.is_some() => {
                state.budget.failovers -= 1;
                self.store_step(&mut state, false, |st, o| {
                    self.store.depose_leader(st, o);
                });
            }
            Action::Failover => {
                state.budget.failovers -= 1;
                self.store_step(&mut state, false, |st, o| {
                    self.store.fail_over(st, o);
                });
            }
            Action::Elect => {
                let mut moving = Vec::new();
                self.store_step_released(&mut state, |st, o| {
                    // Untimed: no duration to extend a lease by.
                    let extend = std::time::Duration::ZERO;
                    let elected = self.store.elect(st, o, extend);
                    let released = elected.as_ref().is_some_and(|e| e.passed_on_release);
                    moving = elected.map(|e| e.reconnect).unwrap_or_default();
                    released
                });
                self.reconnect_all(&mut state, &moving);
            }
            Action::StepDown => {
                let mut moving = Vec::new();
                self.store_step(&mut state, false, |st, _| {
                    moving = self.store.deposed_gives_up(st);
                });
                self.reconnect_all(&mut state, &moving);
            }
            Action::Isolate(f) => {
                state.budget.isolations -= 1;
                self.store_step(&mut state, false, |st, _| {
                    self.store.cut_off(st, usize::from(f));
                });
            }
            Action::Mute(f) => {
                state.budget.mutes -= 1;
                self.store_step(&mut state, false, |st, _| {
                    self.store.mute(st, usize::from(f));
                });
            }
            Action::GiveUpLeader(f) | Action::DropMuted(f) => {
                let mut moving = Vec::new();
                self.store_step(&mut state, false, |st, _| {
                    moving = self.store.drop_follower(st, usize::from(f));
                });
                self.reconnect_all(&mut state, &moving);
            }
            Action::Rejoin(f) => {
                self.store_step_released(&mut state, |st, o| {
                    self.store.rejoin(st, usize::from(f), o)
                });
            }
            Action::Crash(c) => {
                state.budget.crashes -= 1;
                // A crashed process believes nothing any more.
                observe(&mut state, Observation::Crashed { client: c });
                let slot = state.slot_mut(c);
                slot.status = Status::Crashed;
                slot.partitioned = false;
                slot.missed_contact = false;
                slot.timers.clear();
                if let Some(clock) = &mut slot.clock.0 {
                    clock.timers.clear();
                }
                slot.clear(Link::StoreToClient);
                slot.clear(Link::ResourceToClient);
            }
            Action::Restart(c) => {
                state.budget.restarts -= 1;
                self.restart(&mut state, c);
            }
            Action::Pause(c) => {
                state.budget.pauses -= 1;
                let lost_contact = self.loses_contact();
                let slot = state.slot_mut(c);
                slot.status = Status::Paused;
                slot.missed_contact = lost_contact;
                clock::fault_starts(slot);
            }
            Action::Resume(c) => state.slot_mut(c).status = Status::Running,
            Action::ResumeReconnect(c) => {
                state.slot_mut(c).status = Status::Running;
                self.reconnect(&mut state, c);
            }
            Action::Partition(c) => {
                state.budget.partitions -= 1;
                let lost_contact = self.loses_contact();
                let slot = state.slot_mut(c);
                slot.partitioned = true;
                slot.missed_contact = lost_contact;
                clock::fault_starts(slot);
            }
            Action::Heal(c) => state.slot_mut(c).partitioned = false,
            Action::Reconnect(c) => {
                // A cut-off client is running: a pause never starts on a cut link.
                state.slot_mut(c).partitioned = false;
                self.reconnect(&mut state, c);
            }
            Action::GiveUpServer(c) => {
                // It heard nothing for its read timeout: a deadline of its
                // own may have run out meanwhile, as in a partition.
                state.slot_mut(c).missed_contact = self.loses_contact();
                self.reconnect(&mut state, c);
            }
            Action::LoseReply(c) => {
                state.budget.lost_replies -= 1;
                state.slot_mut(c).pop(Link::StoreToClient);
            }
            Action::Interrupt(c) => {
                state.budget.interrupts -= 1;
                self.client_step(&mut state, c, |s, o| self.client.on_interrupt(s, o));
            }
            Action::Tick => {
                let ticks = self.cfg.time.ticks()?;
                self.tick(ticks, &mut state);
            }
        }
        forget_unread_positions(&mut state);
        Some(state)
    }

    /// The Redis store's own steps: its faults while the budget lasts —
    /// a restart of a master that has keys to lose, a clock jump on one
    /// with TTLs to run out, a failover — and replication while the
    /// replica lags.
    fn store_faults(&self, state: &ModelState, actions: &mut Vec<Action>) {
        if let Some(e) = &state.store.ensemble {
            actions.extend(e.behind().map(|f| Action::Apply(f as u8)));
            // A leader failover: the cut, then the election, then the old
            // leader's step-down (syncLimit × tickTime, and a tick more).
            match e.deposed() {
                // Not while a follower is cut off or down (an isolation):
                // the model's election counts every follower in.
                None if state.budget.failovers > 0
                    && e.followers.iter().all(|f| f.link == LeaderLink::Up) =>
                {
                    actions.push(Action::Failover)
                }
                None => {}
                Some(d) if e.id(d) == e.leader => actions.push(Action::Elect),
                Some(_) => actions.push(Action::StepDown),
            }
            // A follower cut off from the leader, outside a failover: it
            // gives the leader up (syncLimit × tickTime) or hears it again
            // first, whichever the checker takes; one that gave it up (an
            // old leader that stepped down too) hears it again.
            // One more cut keeps the leader a quorum (itself and the
            // followers still following): the model's leader commits
            // whatever it takes, as a leader with a quorum does.
            let following = e.followers.iter().filter(|f| f.link == LeaderLink::Up);
            let quorum_after_a_cut = following.count() > usize::from(e.servers() / 2);
            if e.deposed().is_none() {
                for (f, fo) in e.followers.iter().enumerate() {
                    let f = f as u8;
                    match fo.link {
                        LeaderLink::Up if quorum_after_a_cut => {
                            if state.budget.isolations > 0 {
                                actions.push(Action::Isolate(f));
                            }
                            if state.budget.mutes > 0 {
                                actions.push(Action::Mute(f));
                            }
                        }
                        LeaderLink::Up => {}
                        LeaderLink::Muted => {
                            actions.extend([Action::DropMuted(f), Action::Rejoin(f)]);
                        }
                        // An etcd member keeps its clients: it gives nothing up.
                        LeaderLink::Cut if e.cfg.0.leases => actions.push(Action::Rejoin(f)),
                        LeaderLink::Cut => {
                            actions.extend([Action::GiveUpLeader(f), Action::Rejoin(f)]);
                        }
                        LeaderLink::Down => actions.push(Action::Rejoin(f)),
                        LeaderLink::Deposed => {}
                    }
                }
            }
        }
        // Consul's failover forgets the lock-delays and restarts session
        // TTLs, which the untimed check keeps no time for: it is taken
        // only where there is a lock-delay to forget.
        if let Some(c) = &state.store.consul {
            if state.budget.failovers > 0 && !c.delays.is_empty() {
                actions.push(Action::Failover);
            }
            return;
        }
        let redis = &state.store.redis;
        if redis.is_empty() {
            return;
        }
        let b = state.budget;
        for (m, space) in redis.masters.iter().enumerate() {
            let m = m as u8;
            // With appendfsync always the restart keeps every key: taken
            // all the same, it changes nothing but the budget.
            if b.master_restarts > 0 && !space.keys.is_empty() {
                actions.push(Action::RestartMaster(m));
            }
            if b.clock_jumps > 0 && space.keys.iter().any(|e| e.ttl.is_some()) {
                actions.push(Action::ClockJump(m));
            }
        }
        if let Some(r) = &redis.replica {
            if !r.backlog.is_empty() {
                actions.push(Action::Replicate);
            }
            if b.failovers > 0 {
                actions.push(Action::Failover);
            }
        }
    }

    /// Whether a client that stops hearing from the store marks it
    /// (`missed_contact`): an untimed check's deadline, and a Redlock
    /// attempt's validity, may run out only then; a timed one's by its
    /// clock.
    fn loses_contact(&self) -> bool {
        self.cfg.time.ticks().is_none()
            && (self.client.policy.keeps_a_deadline() || self.cfg.recipe.validity().is_some())
    }

    /// An untimed check's deliveries and timers of client `c`: each when
    /// it can happen at all.
    fn untimed_waits(&self, state: &ModelState, c: ClientIdx, actions: &mut Vec<Action>) {
        let slot = &state.clients[c as usize];
        for link in Link::ALL {
            if !slot.link(link).is_empty() && slot.link_open(link) {
                actions.push(Action::Deliver(c, link));
            }
        }
        if slot.status == Status::Running {
            for &t in &slot.timers {
                if self.timer_may_fire(&state.store, slot, t) {
                    actions.push(Action::Timeout(c, t));
                }
            }
        }
    }

    /// An untimed check's ends of client `c`'s pause: any time.
    fn untimed_resumes(&self, state: &ModelState, c: ClientIdx, actions: &mut Vec<Action>) {
        let slot = &state.clients[c as usize];
        if slot.status == Status::Paused {
            // A pause that outlived the session outlived the read
            // timeout too; a ZooKeeper client drops its connection then.
            let zookeeper = self.cfg.recipe.face() == Face::ZooKeeper;
            if !zookeeper || session_carries_on(&state.store, &slot.state) {
                actions.push(Action::Resume(c));
            }
            if zookeeper {
                actions.push(Action::ResumeReconnect(c));
            }
        }
    }

    /// An untimed check's ends of client `c`'s partition: any time.
    fn untimed_heals(&self, state: &ModelState, c: ClientIdx, actions: &mut Vec<Action>) {
        let slot = &state.clients[c as usize];
        if slot.partitioned {
            // A partition that outlived the session outlived the read
            // timeout too: its connection cannot have survived.
            if session_carries_on(&state.store, &slot.state) {
                actions.push(Action::Heal(c));
            }
            actions.push(Action::Reconnect(c));
        }
        // A server that holds the client's request for a leader it cannot
        // reach answers none of its pings: its read timeout runs out, and
        // it moves to a server that follows the leader. (Where none does —
        // a failover's followers before the election — the real client
        // tries each in turn, as silent; the checker keeps it waiting on
        // its connection instead of taking that round without end, each
        // resend a new epoch.)
        if slot.status == Status::Running
            && !slot.partitioned
            && state.store.silent_to(slot.state.session)
            && state.store.another_server_answers(c)
        {
            actions.push(Action::GiveUpServer(c));
        }
    }
}

impl RecipeModel {
    /// Follower slot `f` in a step's words: its server while no failover
    /// can have moved the slots (slot f is server f + 1), else the slot.
    fn follower_name(&self, f: u8) -> String {
        match self.cfg.faults.failovers {
            0 => format!("server {}", f + 1),
            _ => format!("follower slot {f}"),
        }
    }
}

impl Model for RecipeModel {
    type State = ModelState;
    type Action = Action;

    fn init_states(&self) -> Vec<ModelState> {
        self.initial_state()
    }

    fn actions(&self, state: &ModelState, actions: &mut Vec<Action>) {
        self.enabled(state, actions)
    }

    fn next_state(&self, last: &ModelState, action: Action) -> Option<ModelState> {
        self.step(last, action)
    }

    /// What the Explorer lists as the step to take (the state it is taken
    /// in shows the message: see `format_step`).
    fn format_action(&self, action: &Action) -> String {
        let c = |c: &crate::ids::ClientIdx| format!("client {c}");
        match action {
            Action::Deliver(n, Link::StoreToClient) => format!("store → {}: deliver", c(n)),
            Action::Deliver(n, Link::ClientToStore) => format!("{} → store: deliver", c(n)),
            Action::Deliver(n, Link::ClientToResource) => {
                format!("{} → resource: deliver", c(n))
            }
            Action::Deliver(n, Link::ResourceToClient) => {
                format!("resource → {}: deliver", c(n))
            }
            Action::Timeout(n, t) => format!("{}: {t}", c(n)),
            Action::Expire(s) => format!("store: session {s} expires"),
            Action::ExpireKey { master, key, .. } => {
                format!("store: the TTL of {key} on master {master} runs out")
            }
            Action::CheckCritical(n) => format!("FAULT {}'s node check goes critical", c(n)),
            Action::EndLockDelay(s) => {
                format!("store: the lock-delay from session {s}'s end is over")
            }
            Action::RestartMaster(m) => format!("FAULT master {m}: restarts"),
            Action::ClockJump(m) => format!("FAULT master {m}: clock jumps forward"),
            Action::Replicate => "store: master 0 → replica".into(),
            // Slot f is server f + 1 until a failover moves the leader.
            Action::Apply(f) if self.cfg.faults.failovers == 0 => {
                format!("store: server {} applies the next committed change", f + 1)
            }
            Action::Apply(f) => {
                format!("store: follower slot {f} applies the next committed change")
            }
            Action::Failover if self.cfg.servers > 1 => {
                "FAULT the leader is cut off from its followers".into()
            }
            Action::Elect => "store: the followers elect a new leader".into(),
            Action::StepDown => "store: the old leader finds no quorum and stops leading".into(),
            Action::Isolate(f) => format!(
                "FAULT {} is cut off from the leader (it serves its clients on)",
                self.follower_name(*f)
            ),
            Action::Mute(f) => format!(
                "FAULT the leader stops hearing {} (it still hears the leader)",
                self.follower_name(*f)
            ),
            Action::DropMuted(f) => format!(
                "store: the leader drops {} (no word from it for syncLimit × tickTime): its \
                 clients reconnect elsewhere",
                self.follower_name(*f)
            ),
            Action::GiveUpLeader(f) => format!(
                "store: {} gives the leader up (syncLimit × tickTime): its clients reconnect \
                 elsewhere",
                self.follower_name(*f)
            ),
            Action::Rejoin(f) => format!(
                "store: {} hears the leader again and follows it",
                self.follower_name(*f)
            ),
            // The action names no store: the face says which failover.
            Action::Failover if self.cfg.recipe.face() == crate::recipe::Face::Consul => {
                "FAULT the leader fails over".into()
            }
            Action::Failover => "FAULT replica promoted in master 0's place".into(),
            Action::Crash(n) => format!("FAULT {} crashes", c(n)),
            Action::Restart(n) => format!("{} restarts as a new process", c(n)),
            Action::Pause(n) => format!("FAULT {} pauses", c(n)),
            Action::Resume(n) => format!("{} resumes", c(n)),
            Action::ResumeReconnect(n) => {
                format!("{} resumes past its read timeout and reconnects", c(n))
            }
            Action::Partition(n) => format!("FAULT {}'s link to the store is cut", c(n)),
            Action::Heal(n) => format!("{}'s link heals", c(n)),
            Action::Reconnect(n) => format!("{} reconnects on a new connection", c(n)),
            Action::GiveUpServer(n) => format!(
                "{} hears nothing from its server for its read timeout and reconnects",
                c(n)
            ),
            Action::LoseReply(n) => format!("FAULT the reply to {} is lost", c(n)),
            Action::Interrupt(n) => format!("FAULT {}'s acquisition is interrupted", c(n)),
            Action::Tick => "a tick passes".into(),
        }
    }

    /// The Explorer's diagram of the path so far.
    fn as_svg(&self, path: stateright::Path<ModelState, Action>) -> Option<String> {
        let init = self.init_states().remove(0);
        Some(sequence::sequence_svg(self, &init, &path.into_actions()))
    }

    /// The Explorer shows each step as a trace line, then the state it leads to.
    fn format_step(&self, last: &ModelState, action: Action) -> Option<String> {
        let (_, from, to, what) = crate::model::describe::describe(last, action);
        let next = self.next_state(last, action)?;
        let arrow = if to.is_empty() || to == from {
            format!("{from}: {what}")
        } else {
            format!("{from} → {to}: {what}")
        };
        let actors = view::view(self, &next).to_string();
        Some(format!("{}\n\n{arrow}\n\n{}", self.cfg, actors))
    }

    /// Every `always` and `sometimes` property of the recipe's application,
    /// read off the monitors (stateright's form, for the Explorer; lockstep's
    /// checker reads [`RecipeModel::state_properties`]). Progress properties
    /// are decided on the graph (see [`RecipeModel::progress_goals`]).
    fn properties(&self) -> Vec<Property<Self>> {
        use PropertyName as P;
        // stateright takes plain functions: one per property, each reading
        // the monitors.
        macro_rules! read {
            ($p:expr) => {
                |_: &RecipeModel, s: &ModelState| s.monitors.holds($p)
            };
        }
        self.cfg
            .judged()
            .into_iter()
            .filter_map(|p| match p {
                P::MutualExclusion => Some(Property::always(p.name(), read!(P::MutualExclusion))),
                P::ResourceExclusion => {
                    Some(Property::always(p.name(), read!(P::ResourceExclusion)))
                }
                P::HerdBound => Some(Property::always(p.name(), read!(P::HerdBound))),
                P::HolderOwnsKey => Some(Property::always(p.name(), read!(P::HolderOwnsKey))),
                P::HolderWritesAccepted => {
                    Some(Property::always(p.name(), read!(P::HolderWritesAccepted)))
                }
                P::SingleLeader => Some(Property::always(p.name(), read!(P::SingleLeader))),
                P::ElectedWithKey => Some(Property::always(p.name(), read!(P::ElectedWithKey))),
                P::LeaderExclusion => Some(Property::always(p.name(), read!(P::LeaderExclusion))),
                P::HandOff => Some(Property::sometimes(p.name(), read!(P::HandOff))),
                P::NoEarlyPass => Some(Property::always(p.name(), read!(P::NoEarlyPass))),
                P::NoEarlyLeave => Some(Property::always(p.name(), read!(P::NoEarlyLeave))),
                P::NoLostItem => Some(Property::always(p.name(), read!(P::NoLostItem))),
                P::NoDuplicateItem => Some(Property::always(p.name(), read!(P::NoDuplicateItem))),
                P::FifoOrder => Some(Property::always(p.name(), read!(P::FifoOrder))),
                P::ReentryImmediate => Some(Property::always(p.name(), read!(P::ReentryImmediate))),
                P::RwExclusion => Some(Property::always(p.name(), read!(P::RwExclusion))),
                P::ReadersShare => Some(Property::sometimes(p.name(), read!(P::ReadersShare))),
                P::PermitsBound => Some(Property::always(p.name(), read!(P::PermitsBound))),
                P::SyncIsCurrent => Some(Property::always(p.name(), read!(P::SyncIsCurrent))),
                P::ObservedLeaderCurrent => {
                    Some(Property::always(p.name(), read!(P::ObservedLeaderCurrent)))
                }
                P::Progress
                | P::FollowersAgree
                | P::LeaderElected
                | P::AllPass
                | P::QueueDrains => None,
                // The simulator's run-level check: no application lists it.
                P::FaultFreeSessionLoss => None,
            })
            .collect()
    }
}
