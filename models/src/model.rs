//! The model-checking configuration: the store, the guarded resource and N
//! interchangeable clients, their FIFO links, and a fault budget.
//!
//! Time is abstracted. A timer may fire only when, in real time, it could:
//! - think and hold timers at any moment (they are arbitrary delays);
//! - a client's resend timer only when its request or the reply was lost;
//! - heartbeats never: a healthy connected client keeps its session, so
//!   session (lease) expiry is a store step enabled only while the owner is
//!   silent — crashed, paused, cut off, or gone on to a new session;
//! - the lease-aware deadline only after the client missed contact (paused or
//!   cut off); and a cut-off lease-aware holder's clock runs, so its deadline
//!   passes before the store expires its session.
//!
//! Faults are budgeted, which keeps the state space finite: `crashes` (for
//! good), `pauses` (process frozen with its timers and inbox, then resumes),
//! `partitions` (the client–store link carries nothing until it heals; what
//! was sent arrives afterwards, as TCP would deliver it), `lost_replies` (the
//! store applied a request but the reply never arrives).

use crate::client::{Client, ClientState, ClientTiming, Phase, Policy};
use crate::ids::{client_id, client_of, resource_id, store_id, ClientIdx, SessionId};
use crate::msg::{Msg, Timer};
use crate::properties::{
    is_release, observe_client, observe_resource, Monitors, Observation, PropertyName,
};
use crate::recipe::RecipeRef;
use crate::resource::{Resource, ResourceState};
use crate::store::{Store, StoreState};
use serde::{Deserialize, Serialize};
use stateright::actor::{Actor, Command, Id, Out};
use stateright::{Model, Property};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The smallest and largest client counts the model checker supports.
pub const MIN_CLIENTS: u8 = 2;
pub const MAX_CLIENTS: u8 = 4;

/// How many faults of each kind a run may inject.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FaultBudget {
    pub crashes: u8,
    pub pauses: u8,
    pub partitions: u8,
    pub lost_replies: u8,
}

/// A model-checking configuration; `into_model()` builds the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockModelCfg {
    pub recipe: RecipeRef,
    pub clients: u8,
    pub rounds: u8,
    pub faults: FaultBudget,
    pub fencing: bool,
    pub policy: Policy,
}

impl LockModelCfg {
    pub fn new(recipe: RecipeRef, clients: u8) -> Self {
        LockModelCfg {
            recipe,
            clients,
            rounds: 1,
            faults: FaultBudget::default(),
            fencing: false,
            policy: Policy::Naive,
        }
    }

    /// Checks the configuration; the error names the offending setting.
    pub fn validate(&self) -> Result<(), String> {
        if !(MIN_CLIENTS..=MAX_CLIENTS).contains(&self.clients) {
            return Err(format!(
                "clients must be between {MIN_CLIENTS} and {MAX_CLIENTS} for model checking (got {}); \
                 use the simulator for more",
                self.clients
            ));
        }
        if !(1..=3).contains(&self.rounds) {
            return Err(format!(
                "rounds must be between 1 and 3 (got {})",
                self.rounds
            ));
        }
        let total = self.faults.crashes as u32
            + self.faults.pauses as u32
            + self.faults.partitions as u32
            + self.faults.lost_replies as u32;
        if total > 3 {
            return Err(format!(
                "at most 3 faults in all can be model-checked (got {total}); use the simulator for more"
            ));
        }
        if self.faults.crashes >= self.clients {
            return Err(format!(
                "crashes ({}) must be fewer than clients ({}), or nobody is left to take the lock",
                self.faults.crashes, self.clients
            ));
        }
        Ok(())
    }

    pub fn into_model(self) -> LockModel {
        let timing = ClientTiming::default();
        LockModel {
            store: Store::for_face(
                self.recipe.face(),
                Duration::from_secs(6),
                self.recipe.setup().lock_dir,
            ),
            resource: Resource::new(self.fencing),
            client: Client {
                recipe: self.recipe.clone(),
                rounds: self.rounds,
                policy: self.policy,
                timing,
            },
            cfg: self,
        }
    }
}

pub struct LockModel {
    pub cfg: LockModelCfg,
    pub store: Store,
    pub resource: Resource,
    pub client: Client,
}

/// Whether a client process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Running,
    Paused,
    Crashed,
}

/// A client, what the model knows about its process, and its links.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientSlot {
    pub state: ClientState,
    pub status: Status,
    /// The client–store link is cut.
    pub partitioned: bool,
    /// Lease-aware clients: it was paused or cut off and has not heard from
    /// the store since.
    pub missed_contact: bool,
    /// Armed timers, sorted.
    pub timers: Vec<Timer>,
    /// FIFO links: store → client, client → store, client → resource,
    /// resource → client.
    pub from_store: Vec<Msg>,
    pub to_store: Vec<Msg>,
    pub to_resource: Vec<Msg>,
    pub from_resource: Vec<Msg>,
}

impl ClientSlot {
    pub fn is_live(&self) -> bool {
        self.status != Status::Crashed
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockState {
    // Shared between a state and its successors until a step changes them:
    // most steps touch one client, so most of a successor is not copied.
    pub store: Arc<StoreState>,
    pub store_timers: Vec<Timer>,
    pub resource: ResourceState,
    pub clients: Vec<Arc<ClientSlot>>,
    /// Faults still to inject.
    pub budget: FaultBudget,
    /// Ghost: the property monitors, fed after every step (shared until a
    /// step feeds them).
    pub monitors: Arc<Monitors>,
}

/// A link, named by its ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Link {
    StoreToClient,
    ClientToStore,
    ClientToResource,
    ResourceToClient,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    /// Deliver the message at the head of a client's link.
    Deliver(ClientIdx, Link),
    /// A client's timer fires.
    Timeout(ClientIdx, Timer),
    /// The store's expiry timer for a silent session fires.
    Expire(SessionId),
    Crash(ClientIdx),
    Pause(ClientIdx),
    Resume(ClientIdx),
    Partition(ClientIdx),
    Heal(ClientIdx),
    /// The reply at the head of the store → client link is lost.
    LoseReply(ClientIdx),
}

impl Action {
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Action::Crash(_) | Action::Pause(_) | Action::Partition(_) | Action::LoseReply(_)
        )
    }
}

impl LockState {
    /// Client `c`'s slot, to change it (copied first if shared).
    pub fn slot_mut(&mut self, c: ClientIdx) -> &mut ClientSlot {
        Arc::make_mut(&mut self.clients[c as usize])
    }

    /// Live clients that believe they hold the lock.
    pub fn holders(&self) -> impl Iterator<Item = ClientIdx> + '_ {
        self.clients
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_live() && s.state.holds_lock())
            .map(|(c, _)| c as ClientIdx)
    }

    /// Every live client has finished its rounds.
    pub fn all_live_done(&self) -> bool {
        self.clients
            .iter()
            .all(|s| !s.is_live() || s.state.phase == Phase::Done)
    }

    /// Someone acquired the lock after someone else had it.
    pub fn handed_off(&self) -> bool {
        self.monitors.holds(PropertyName::HandOff)
    }
}

fn insert_timer(timers: &mut Vec<Timer>, t: Timer) {
    if let Err(at) = timers.binary_search(&t) {
        timers.insert(at, t);
    }
}

fn remove_timer(timers: &mut Vec<Timer>, t: &Timer) {
    if let Ok(at) = timers.binary_search(t) {
        timers.remove(at);
    }
}

/// Feeds the monitors (copied first if shared).
fn observe(state: &mut LockState, obs: Observation) {
    Arc::make_mut(&mut state.monitors).observe(obs);
}

impl LockModel {
    fn silent(&self, state: &LockState, s: SessionId) -> bool {
        let Some(slot) = state.clients.get(s.client as usize) else {
            return true;
        };
        if slot.state.session != s {
            return true; // the owner has moved on to a new session
        }
        if slot.state.phase == Phase::Done {
            return false; // a finished client stays connected
        }
        match slot.status {
            Status::Crashed | Status::Paused => true,
            Status::Running => {
                // A cut-off lease-aware holder's own clock runs out first.
                slot.partitioned
                    && !(self.client.policy == Policy::LeaseAware
                        && slot.timers.binary_search(&Timer::Deadline).is_ok())
            }
        }
    }

    fn timer_may_fire(&self, slot: &ClientSlot, t: Timer) -> bool {
        match t {
            Timer::Think | Timer::Hold => true,
            Timer::Retry => {
                slot.state.pending.is_some()
                    && !slot
                        .to_store
                        .iter()
                        .any(|m| matches!(m, Msg::Request { .. }))
                    && !slot.from_store.iter().any(
                        |m| matches!(m, Msg::Reply { epoch, .. } if *epoch == slot.state.epoch),
                    )
            }
            Timer::Ping | Timer::Expiry(_) => false,
            Timer::Deadline => slot.missed_contact,
        }
    }

    /// Applies an actor's output commands: sends go onto links, timers into
    /// the sender's timer set. Returns the notifications sent.
    fn apply_out<A>(&self, state: &mut LockState, from: Id, out: Out<A>) -> u8
    where
        A: Actor<Msg = Msg, Timer = Timer>,
    {
        let mut notifications = 0u8;
        for cmd in out {
            match cmd {
                Command::Send(dst, msg) => {
                    if let Some(c) = client_of(dst) {
                        let slot = state.slot_mut(c);
                        if slot.status == Status::Crashed {
                            // Its connection closed with it, and the server
                            // dropped the connection's watches: nothing is sent.
                            continue;
                        }
                        if matches!(msg, Msg::Notify { .. }) {
                            notifications = notifications.saturating_add(1);
                        }
                        if from == store_id() {
                            slot.from_store.push(msg);
                        } else {
                            slot.from_resource.push(msg);
                        }
                    } else if let Some(c) = client_of(from) {
                        let slot = state.slot_mut(c);
                        if dst == store_id() {
                            slot.to_store.push(msg);
                        } else {
                            slot.to_resource.push(msg);
                        }
                    }
                }
                Command::SetTimer(t, _) => insert_timer(self.timers_of(state, from), t),
                Command::CancelTimer(t) => remove_timer(self.timers_of(state, from), &t),
                Command::ChooseRandom(..) | Command::Save(_) => {}
            }
        }
        notifications
    }

    fn timers_of<'a>(&self, state: &'a mut LockState, id: Id) -> &'a mut Vec<Timer> {
        match client_of(id) {
            Some(c) => &mut state.slot_mut(c).timers,
            None => &mut state.store_timers,
        }
    }

    /// A store step. `release` says whether it is a release step (the
    /// release request, a session close or expiry) if it changes the store.
    fn store_step(
        &self,
        state: &mut LockState,
        release: bool,
        f: impl FnOnce(&mut Cow<StoreState>, &mut Out<Store>),
    ) {
        let before = state.store.header();
        let mut out = Out::new();
        let mut cow = Cow::Borrowed(&*state.store);
        f(&mut cow, &mut out);
        if let Cow::Owned(s) = cow {
            state.store = Arc::new(s);
        }
        let n = self.apply_out(state, store_id(), out);
        if release && state.store.header() != before {
            observe(
                state,
                Observation::ReleaseStep {
                    notifications: n as u32,
                },
            );
        }
    }

    fn client_step(
        &self,
        state: &mut LockState,
        c: ClientIdx,
        f: impl FnOnce(&mut Cow<ClientState>, &mut Out<Client>),
    ) {
        let mut out = Out::new();
        let slot = &state.clients[c as usize];
        let was_holding = slot.state.holds_lock();
        let mut cow = Cow::Borrowed(&slot.state);
        f(&mut cow, &mut out);
        if let Cow::Owned(s) = cow {
            state.slot_mut(c).state = s;
        }
        self.apply_out(state, client_id(c), out);
        if let Some(obs) = observe_client(c, was_holding, &state.clients[c as usize].state) {
            observe(state, obs);
        }
    }
}

impl Model for LockModel {
    type State = LockState;
    type Action = Action;

    fn init_states(&self) -> Vec<LockState> {
        let mut state = LockState {
            store: Arc::new(StoreState::new(self.store.lock_dir)),
            store_timers: Vec::new(),
            resource: ResourceState::default(),
            clients: Vec::new(),
            budget: self.cfg.faults,
            monitors: Arc::new(Monitors::default()),
        };
        for c in 0..self.cfg.clients {
            let mut out = Out::new();
            let client_state = self
                .client
                .on_start(client_id(c as ClientIdx), &None, &mut out);
            state.clients.push(Arc::new(ClientSlot {
                state: client_state,
                status: Status::Running,
                partitioned: false,
                missed_contact: false,
                timers: Vec::new(),
                from_store: Vec::new(),
                to_store: Vec::new(),
                to_resource: Vec::new(),
                from_resource: Vec::new(),
            }));
            self.apply_out(&mut state, client_id(c as ClientIdx), out);
        }
        vec![state]
    }

    fn actions(&self, state: &LockState, actions: &mut Vec<Action>) {
        for (i, slot) in state.clients.iter().enumerate() {
            let c = i as ClientIdx;
            let running = slot.status == Status::Running;
            if !slot.from_store.is_empty() && running && !slot.partitioned {
                actions.push(Action::Deliver(c, Link::StoreToClient));
            }
            if !slot.to_store.is_empty() && !slot.partitioned {
                actions.push(Action::Deliver(c, Link::ClientToStore));
            }
            if !slot.to_resource.is_empty() {
                actions.push(Action::Deliver(c, Link::ClientToResource));
            }
            if !slot.from_resource.is_empty() && running {
                actions.push(Action::Deliver(c, Link::ResourceToClient));
            }
            if running {
                for &t in &slot.timers {
                    if self.timer_may_fire(slot, t) {
                        actions.push(Action::Timeout(c, t));
                    }
                }
            }
            let active = slot.state.phase != Phase::Done;
            if state.budget.crashes > 0 && slot.is_live() && active {
                actions.push(Action::Crash(c));
            }
            if state.budget.pauses > 0 && running && active && !slot.partitioned {
                actions.push(Action::Pause(c));
            }
            if slot.status == Status::Paused {
                actions.push(Action::Resume(c));
            }
            if state.budget.partitions > 0 && running && active && !slot.partitioned {
                actions.push(Action::Partition(c));
            }
            if slot.partitioned {
                actions.push(Action::Heal(c));
            }
            if state.budget.lost_replies > 0
                && slot.is_live()
                && matches!(slot.from_store.first(), Some(Msg::Reply { .. }))
            {
                actions.push(Action::LoseReply(c));
            }
        }
        for t in &state.store_timers {
            if let Timer::Expiry(s) = *t {
                if state.store.is_alive(s) && self.silent(state, s) {
                    actions.push(Action::Expire(s));
                }
            }
        }
    }

    fn next_state(&self, last: &LockState, action: Action) -> Option<LockState> {
        let mut state = last.clone();
        match action {
            Action::Deliver(c, link) => {
                let slot = state.slot_mut(c);
                let queue = match link {
                    Link::StoreToClient => &mut slot.from_store,
                    Link::ClientToStore => &mut slot.to_store,
                    Link::ClientToResource => &mut slot.to_resource,
                    Link::ResourceToClient => &mut slot.from_resource,
                };
                if queue.is_empty() {
                    return None;
                }
                let msg = queue.remove(0);
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
                        let mut cow = Cow::Borrowed(&state.resource);
                        self.resource
                            .on_msg(resource_id(), &mut cow, src, msg.clone(), &mut out);
                        if let Cow::Owned(r) = cow {
                            state.resource = r;
                        }
                        let answer = out.iter().find_map(|cmd| match cmd {
                            Command::Send(_, ack) => observe_resource(c, &msg, ack),
                            _ => None,
                        });
                        self.apply_out(&mut state, resource_id(), out);
                        if let Some(obs) = answer {
                            observe(&mut state, obs);
                        }
                    }
                }
            }
            Action::Timeout(c, t) => {
                remove_timer(&mut state.slot_mut(c).timers, &t);
                let id = client_id(c);
                self.client_step(&mut state, c, |s, o| self.client.on_timeout(id, s, &t, o));
            }
            Action::Expire(s) => {
                let t = Timer::Expiry(s);
                remove_timer(&mut state.store_timers, &t);
                self.store_step(&mut state, true, |st, o| {
                    self.store.on_timeout(store_id(), st, &t, o)
                });
            }
            Action::Crash(c) => {
                state.budget.crashes -= 1;
                if state.clients[c as usize].state.holds_lock() {
                    // A crashed process believes nothing any more.
                    observe(&mut state, Observation::Released { client: c });
                }
                let slot = state.slot_mut(c);
                slot.status = Status::Crashed;
                slot.partitioned = false;
                slot.missed_contact = false;
                slot.timers.clear();
                slot.from_store.clear();
                slot.from_resource.clear();
            }
            Action::Pause(c) => {
                state.budget.pauses -= 1;
                let slot = state.slot_mut(c);
                slot.status = Status::Paused;
                slot.missed_contact = self.client.policy == Policy::LeaseAware;
            }
            Action::Resume(c) => state.slot_mut(c).status = Status::Running,
            Action::Partition(c) => {
                state.budget.partitions -= 1;
                let slot = state.slot_mut(c);
                slot.partitioned = true;
                slot.missed_contact = self.client.policy == Policy::LeaseAware;
            }
            Action::Heal(c) => state.slot_mut(c).partitioned = false,
            Action::LoseReply(c) => {
                state.budget.lost_replies -= 1;
                state.slot_mut(c).from_store.remove(0);
            }
        }
        Some(state)
    }

    fn format_action(&self, action: &Action) -> String {
        format!("{action:?}")
    }

    /// The Explorer shows each step as a trace line, then the state it leads to.
    fn format_step(&self, last: &LockState, action: Action) -> Option<String> {
        let (_, from, to, what) = crate::trace::describe(last, action);
        let next = self.next_state(last, action)?;
        let arrow = if to.is_empty() || to == from {
            format!("{from}: {what}")
        } else {
            format!("{from} → {to}: {what}")
        };
        Some(format!("{arrow}\n\n{next:#?}"))
    }

    /// Every property of [`PropertyName`] but progress (which the checker
    /// decides on the graph), read off the monitors.
    fn properties(&self) -> Vec<Property<Self>> {
        use PropertyName as P;
        // stateright takes plain functions: one per property, each reading
        // the monitors.
        macro_rules! read {
            ($p:expr) => {
                |_: &LockModel, s: &LockState| s.monitors.holds($p)
            };
        }
        vec![
            Property::always(P::MutualExclusion.name(), read!(P::MutualExclusion)),
            Property::always(P::ResourceExclusion.name(), read!(P::ResourceExclusion)),
            Property::always(P::HerdBound.name(), read!(P::HerdBound)),
            Property::always(P::HolderOwnsKey.name(), read!(P::HolderOwnsKey)),
            Property::always(
                P::HolderWritesAccepted.name(),
                read!(P::HolderWritesAccepted),
            ),
            Property::sometimes(P::HandOff.name(), read!(P::HandOff)),
        ]
    }
}

impl fmt::Display for LockModelCfg {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{} with {} clients, {} round{}, {} policy, fencing {}",
            self.recipe,
            self.clients,
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
            self.policy,
            if self.fencing { "on" } else { "off" }
        )?;
        let b = self.faults;
        let faults: Vec<String> = [
            (b.crashes, "crash"),
            (b.pauses, "pause"),
            (b.partitions, "partition"),
            (b.lost_replies, "lost reply"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if faults.is_empty() {
            write!(f, ", no faults")
        } else {
            write!(f, ", faults: {}", faults.join(", "))
        }
    }
}
