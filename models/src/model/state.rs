//! The model's state: every client with its process status and links, the
//! store, the resource, the fault budget left and the property monitors;
//! and the actions that step it.

use super::clock::{link_index, Due, SlotClock, StoreClock};
use super::shared::Shared;
use super::FaultBudget;
use crate::client::{ClientState, ClientStorage};
use crate::ids::{ClientIdx, SessionId};
use crate::msg::{Msg, Timer};
use crate::properties::{Monitors, PropertyName};
use crate::resource::ResourceState;
use crate::store::StoreState;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

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
    pub timers: Timers,
    /// FIFO links: store → client, client → store, client → resource,
    /// resource → client.
    pub from_store: Vec<Msg>,
    pub to_store: Vec<Msg>,
    pub to_resource: Vec<Msg>,
    pub from_resource: Vec<Msg>,
    /// What the process saved for a successor (its storage), kept only
    /// where restarts are checked.
    pub saved: Saved,
    /// Its countdowns, kept only by a timed check.
    pub clock: Clocked<SlotClock>,
}

/// Countdowns kept only by a timed check ([`super::clock`]), and hashed
/// only when kept, so a state of an untimed check hashes as it did before
/// time was kept (its fingerprints, and so its representatives and
/// counterexamples, are unchanged).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clocked<T>(pub Option<Box<T>>);

impl<T: std::hash::Hash> std::hash::Hash for Clocked<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        if let Some(clock) = &self.0 {
            clock.hash(h);
        }
    }
}

/// A client process's saved storage, as a restart hands it to the new
/// process ([`Action::Restart`]). Kept only by a check with restarts
/// ([`super::FaultBudget::restarts`]), and hashed only when kept, so a
/// slot of any other check hashes as it did before restarts existed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Saved(pub Option<ClientStorage>);

impl std::hash::Hash for Saved {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        if let Some(storage) = &self.0 {
            storage.hash(h);
        }
    }
}

/// Every client's slot, by client index, kept inline: a successor is
/// copied without an allocation, and a frontier state's slots are read
/// without first fetching where they are.
pub type Slots = SmallVec<[Shared<ClientSlot>; super::MAX_CLIENTS as usize]>;

/// Armed timers, sorted: a few at a time, kept inline, so a step that
/// copies a slot or the store's timers copies them without an allocation.
/// Measured on fair-predecessor at 4 clients with a crash (full check, one
/// thread, `bench --against`): 0.91x the time of a `Vec`. Messages inline
/// as well (`SmallVec<[Msg; 1]>` for each link) measured 1.05x: a
/// message is 56 bytes, and the larger slot costs more to read than the
/// allocations it saves.
pub type Timers = SmallVec<[Timer; 4]>;

impl ClientSlot {
    pub fn is_live(&self) -> bool {
        self.status != Status::Crashed
    }

    /// The messages on `link`, in the order sent.
    pub fn link(&self, link: Link) -> &Vec<Msg> {
        match link {
            Link::StoreToClient => &self.from_store,
            Link::ClientToStore => &self.to_store,
            Link::ClientToResource => &self.to_resource,
            Link::ResourceToClient => &self.from_resource,
        }
    }

    /// Whether `link` carries messages now: a cut holds the store's links
    /// both ways, and a process that is not running reads nothing.
    pub fn link_open(&self, link: Link) -> bool {
        let running = self.status == Status::Running;
        match link {
            Link::StoreToClient => running && !self.partitioned,
            Link::ClientToStore => !self.partitioned,
            Link::ClientToResource => true,
            Link::ResourceToClient => running,
        }
    }

    fn link_mut(&mut self, link: Link) -> &mut Vec<Msg> {
        match link {
            Link::StoreToClient => &mut self.from_store,
            Link::ClientToStore => &mut self.to_store,
            Link::ClientToResource => &mut self.to_resource,
            Link::ResourceToClient => &mut self.from_resource,
        }
    }

    /// The countdowns of a timed check (made on first use).
    pub(super) fn clock_mut(&mut self) -> &mut SlotClock {
        self.clock.0.get_or_insert_with(Default::default)
    }

    /// The countdown of the message at the head of `link` (a timed check).
    pub fn head_due(&self, link: Link) -> Option<Due> {
        let clock = self.clock.0.as_ref()?;
        clock.links[link_index(link)].first().copied()
    }

    /// Sends `msg` on `link`; a timed check counts its flight down from
    /// `latency`.
    pub(super) fn push(&mut self, link: Link, msg: Msg, latency: Option<Due>) {
        self.link_mut(link).push(msg);
        if let Some(due) = latency {
            self.clock_mut().links[link_index(link)].push(due);
        }
    }

    /// Takes the message at the head of `link`.
    pub(super) fn pop(&mut self, link: Link) -> Option<Msg> {
        let queue = self.link_mut(link);
        if queue.is_empty() {
            return None;
        }
        let msg = queue.remove(0);
        if let Some(clock) = &mut self.clock.0 {
            clock.links[link_index(link)].remove(0);
        }
        Some(msg)
    }

    /// Keeps the messages on `link` that `keep` says.
    pub(super) fn retain(&mut self, link: Link, keep: impl Fn(&Msg) -> bool) {
        let kept: Vec<bool> = self.link(link).iter().map(&keep).collect();
        let mut i = 0;
        self.link_mut(link).retain(|_| {
            i += 1;
            kept[i - 1]
        });
        if let Some(clock) = &mut self.clock.0 {
            let mut i = 0;
            clock.links[link_index(link)].retain(|_| {
                i += 1;
                kept[i - 1]
            });
        }
    }

    /// Empties `link`.
    pub(super) fn clear(&mut self, link: Link) {
        self.link_mut(link).clear();
        if let Some(clock) = &mut self.clock.0 {
            clock.links[link_index(link)].clear();
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelState {
    // Shared between a state and its successors until a step changes them:
    // most steps touch one client, so most of a successor is not copied
    // (and the checker's frontier keeps each distinct part once).
    pub store: Shared<StoreState>,
    pub store_timers: Shared<Timers>,
    pub resource: Shared<ResourceState>,
    pub clients: Slots,
    /// Faults still to inject.
    pub budget: FaultBudget,
    /// Ghost: the property monitors, fed after every step (shared until a
    /// step feeds them).
    pub monitors: Shared<Monitors>,
    /// The store's timers' countdowns, kept only by a timed check.
    pub store_clock: Clocked<StoreClock>,
}

/// The fields in order, as a derived hash would take them, except that
/// the store's timers and the resource are hashed as themselves, not by
/// their kept hash: a state's fingerprint is what it was before they were
/// shared parts, so every representative and counterexample is too.
impl std::hash::Hash for ModelState {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.store.hash(h);
        (*self.store_timers).hash(h);
        (*self.resource).hash(h);
        self.clients.hash(h);
        self.budget.hash(h);
        self.monitors.hash(h);
        self.store_clock.hash(h);
    }
}

/// A link, named by its ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Link {
    StoreToClient,
    ClientToStore,
    ClientToResource,
    ResourceToClient,
}

impl Link {
    /// Every link, in the order a state's steps list their deliveries.
    pub const ALL: [Link; 4] = [
        Link::StoreToClient,
        Link::ClientToStore,
        Link::ClientToResource,
        Link::ResourceToClient,
    ];
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
    /// A crashed client starts again as a new process: its saved storage,
    /// a new session, a new connection (nothing its predecessor's carried
    /// reaches it; the store drops that connection's watches).
    Restart(ClientIdx),
    Pause(ClientIdx),
    /// The paused process resumes within its read timeout: what the store
    /// sent meanwhile is read.
    Resume(ClientIdx),
    /// A ZooKeeper client resumes past its read timeout: its connection
    /// drops before it reads (SUSPENDED) and it reconnects, as a
    /// [`Action::Reconnect`] does (measured with the Java client: the watch
    /// event sent during the pause comes again after the reconnect).
    ResumeReconnect(ClientIdx),
    Partition(ClientIdx),
    /// The cut link heals with its TCP connection intact: what was sent
    /// arrives (a partition shorter than the client's read timeout).
    Heal(ClientIdx),
    /// The cut link heals on a new connection (a partition past the read
    /// timeout): replies, requests and heartbeats in flight are lost with the
    /// old one; watch events and the expiry notice are still delivered (the
    /// client re-registers its watches); the client resends what it awaited.
    Reconnect(ClientIdx),
    /// A ZooKeeper client hears nothing from its server for its read
    /// timeout — the server holds the session's request, and with it the
    /// answers to its pings, for a leader it cannot reach
    /// (`StoreState::silent_to`) — and gives the connection up
    /// (SUSPENDED), reconnecting as a [`Action::Reconnect`] does, to the
    /// next server.
    GiveUpServer(ClientIdx),
    /// The reply at the head of the store → client link is lost.
    LoseReply(ClientIdx),
    /// The application interrupts the client's acquisition, whatever is
    /// on its way (Redisson's `lockInterruptibly`).
    Interrupt(ClientIdx),
    /// A tick passes (a timed check only): every countdown runs down by
    /// one. Taken only when nothing is overdue.
    Tick,
    /// Redis: the TTL of `key` on `master`, set by client `setter`, runs
    /// out by the server's clock and the key is deleted.
    ExpireKey {
        setter: ClientIdx,
        master: u8,
        key: crate::ids::Name,
    },
    /// Redis: a master restarts (without persistence: empty).
    RestartMaster(u8),
    /// Redis: a master's clock jumps forward past every TTL it keeps.
    ClockJump(u8),
    /// Redis: the first master's replica receives its oldest change not
    /// yet received (asynchronous replication).
    Replicate,
    /// Redis: the replica is promoted in the first master's place.
    /// Consul: the leader fails over to a server restored from a
    /// snapshot (lock-delays forgotten, session TTLs started again).
    /// A ZooKeeper ensemble: the leader is cut off from its followers.
    Failover,
    /// A ZooKeeper ensemble whose leader is cut off: the followers elect
    /// another (`Store::elect`).
    Elect,
    /// The cut-off old leader's quorum check fails: it stops leading
    /// (`Store::deposed_gives_up`).
    StepDown,
    /// Consul: the client's node check goes critical: the store
    /// invalidates its session at once.
    CheckCritical(ClientIdx),
    /// Consul: the lock-delays that the invalidation of this session
    /// started (on every key it held, all at once) are over.
    EndLockDelay(SessionId),
    /// A replicated store: follower slot `f` (`Ensemble::id` names its
    /// server) applies the next committed entry it has not.
    Apply(u8),
    /// A ZooKeeper ensemble: follower slot `f` is cut off from the leader
    /// (`Store::cut_off`).
    Isolate(u8),
    /// A ZooKeeper ensemble: the leader stops hearing follower slot `f`
    /// (`Store::mute`); it still hears the leader.
    Mute(u8),
    /// The leader drops muted follower slot `f` after syncLimit × tickTime
    /// without a word from it; the follower closes its clients'
    /// connections (`Store::drop_follower`).
    DropMuted(u8),
    /// Cut-off follower slot `f` gives the leader up after syncLimit ×
    /// tickTime and closes its clients' connections
    /// (`Store::drop_follower`).
    GiveUpLeader(u8),
    /// Follower slot `f`, cut off or down (an old leader that stepped
    /// down too), hears the leader again and follows it (`Store::rejoin`).
    Rejoin(u8),
}

impl Action {
    /// The client the step is about: the one it delivers from or to, whose
    /// timer fires, whom the fault strikes, whose session expires. Every
    /// step but a tick has one (the store and the resource act only on a
    /// client's message or a session's timer).
    pub fn client(self) -> Option<ClientIdx> {
        let mut a = self;
        a.client_mut().map(|c| *c)
    }

    /// The client the step is about, to rename it.
    pub fn client_mut(&mut self) -> Option<&mut ClientIdx> {
        Some(match self {
            Action::Deliver(c, _)
            | Action::Timeout(c, _)
            | Action::Crash(c)
            | Action::Restart(c)
            | Action::Pause(c)
            | Action::Resume(c)
            | Action::ResumeReconnect(c)
            | Action::Partition(c)
            | Action::Heal(c)
            | Action::Reconnect(c)
            | Action::GiveUpServer(c)
            | Action::LoseReply(c)
            | Action::Interrupt(c)
            | Action::CheckCritical(c) => c,
            Action::Expire(s) | Action::EndLockDelay(s) => &mut s.client,
            Action::ExpireKey { setter, .. } => setter,
            // The store's own steps: they touch every client's keys.
            Action::Tick
            | Action::RestartMaster(_)
            | Action::ClockJump(_)
            | Action::Replicate
            | Action::Apply(_)
            | Action::Failover
            | Action::Elect
            | Action::StepDown
            | Action::Isolate(_)
            | Action::Mute(_)
            | Action::DropMuted(_)
            | Action::GiveUpLeader(_)
            | Action::Rejoin(_) => return None,
        })
    }

    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Action::Crash(_)
                | Action::Pause(_)
                | Action::Partition(_)
                | Action::LoseReply(_)
                | Action::Interrupt(_)
                | Action::CheckCritical(_)
                | Action::RestartMaster(_)
                | Action::ClockJump(_)
                | Action::Failover
                | Action::Isolate(_)
                | Action::Mute(_)
        )
    }
}

impl ModelState {
    /// Client `c`'s slot, to change it (copied first if shared).
    pub fn slot_mut(&mut self, c: ClientIdx) -> &mut ClientSlot {
        Shared::make_mut(&mut self.clients[c as usize])
    }

    /// Asks for every part's first cache line ahead of a read.
    pub fn prefetch_parts(&self) {
        self.store.prefetch();
        self.store_timers.prefetch();
        self.resource.prefetch();
        self.monitors.prefetch();
        self.clients.iter().for_each(Shared::prefetch);
    }

    /// Live clients that believe they hold the lock.
    pub fn holders(&self) -> impl Iterator<Item = ClientIdx> + '_ {
        self.clients
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_live() && s.state.is_holding())
            .map(|(c, _)| c as ClientIdx)
    }

    /// Someone acquired the lock after someone else had it.
    pub fn handed_off(&self) -> bool {
        self.monitors.holds(PropertyName::HandOff)
    }
}

pub(super) fn insert_timer(timers: &mut Timers, t: Timer) {
    if let Err(at) = timers.binary_search(&t) {
        timers.insert(at, t);
    }
}

/// Arms timer `t` counting down from `due` (a timed check): one armed
/// already is set again, its countdown restarted.
pub(super) fn arm_timer(timers: &mut Timers, dues: &mut SmallVec<[Due; 4]>, t: Timer, due: Due) {
    match timers.binary_search(&t) {
        Ok(at) => dues[at] = due,
        Err(at) => {
            timers.insert(at, t);
            dues.insert(at, due);
        }
    }
}

/// Disarms timer `t`, and its countdown if one is kept.
pub(super) fn remove_timer(timers: &mut Timers, dues: Option<&mut SmallVec<[Due; 4]>>, t: &Timer) {
    if let Ok(at) = timers.binary_search(t) {
        timers.remove(at);
        if let Some(dues) = dues {
            dues.remove(at);
        }
    }
}
