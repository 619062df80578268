//! The properties, each defined once, as monitors over one stream of typed
//! observations that every engine feeds: the model checker after each step
//! (the monitors' state is part of its state), the simulator as its events
//! happen (violations then carry a time).
//!
//! Observations come from [`observe_client`] (a client came to believe it
//! holds, or stopped), the guarded resource (a write accepted or rejected),
//! and the store (a release step and the notifications it caused). An engine
//! decides only *when* to feed them; what they mean is decided here.

use crate::client::{Asking, ClientState, Marks};
use crate::ids::ClientIdx;
use crate::msg::Msg;
use crate::recipe::App;
use crate::relabel::{Perm, Relabel};
use crate::store::StoreState;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The properties lockstep checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PropertyName {
    /// Always: never two live clients that both believe they hold.
    MutualExclusion,
    /// Always: the resource's accepted writes come in one block per
    /// acquisition, blocks in the order the store decided the acquisitions.
    ResourceExclusion,
    /// Always: a release (a delete, a session close or expiry) delivers at
    /// most one notification. For a barrier, where a wake-up that can
    /// proceed is no herd: a store change wakes at most one member that
    /// cannot (whose message's mark says the group is not ready for it).
    HerdBound,
    /// Always: the store reply a client decides to hold on was sent while
    /// that client's live session owned the lock entry first in line.
    HolderOwnsKey,
    /// Always: when exactly one client believes it holds and its token is
    /// the newest, the resource accepts its writes.
    HolderWritesAccepted,
    /// Sometimes: the lock passes from one client to another.
    HandOff,
    /// From every reachable state, a state where every live client finished
    /// is reachable (checker); every live client finishes (simulator).
    Progress,
    /// Election, always: at most one live client believes it leads
    /// (`mutual_exclusion`'s rule for leaders).
    SingleLeader,
    /// Election, always: the store reply a client decides to lead on was
    /// sent while its live session owned the election entry first in line
    /// (`holder_owns_key`'s rule).
    ElectedWithKey,
    /// Election, always: the resource never accepts a deposed leader's write
    /// after the next leader's (`resource_exclusion`'s rule).
    LeaderExclusion,
    /// Election, progress: from every reachable state, a state is reachable
    /// where every live follower's observed leader is the current leader.
    FollowersAgree,
    /// Election, progress: from every reachable state, a state with a
    /// leader, or with every live client finished, is reachable (checker);
    /// every live client finishes (simulator).
    LeaderElected,
    /// Barrier, always: nobody passes before every member of the group has
    /// entered (the store had every member's node when it sent what the
    /// member passed on: `holder_owns_key`'s rule with the barrier's mark).
    NoEarlyPass,
    /// Barrier, progress: from every reachable state, a state where every
    /// live member passed (and finished) is reachable (checker); every live
    /// member finishes (simulator).
    AllPass,
    /// Double barrier, always: nobody finishes leaving before every member
    /// has left (the store had no member node left when it sent what the
    /// member left on).
    NoEarlyLeave,
    /// Queue, always: no item leaves the queue without being processed —
    /// the consumer whose delete removed it processes it before it takes
    /// another, stops, or crashes.
    NoLostItem,
    /// Queue, always: no item is processed twice.
    NoDuplicateItem,
    /// Queue, always: every item is taken at the queue's head (the lowest
    /// element no other consumer has a lock on), so items are taken in the
    /// order they were enqueued.
    FifoOrder,
    /// Queue, progress: from every reachable state, a state is reachable
    /// where every live producer finished, the queue is empty and no live
    /// consumer is still processing (checker); the same at the run's end
    /// (simulator).
    QueueDrains,
    /// Lock, always, judged where holders re-enter (`--reentries`): a
    /// holder's second acquire completes in the step that asks for it,
    /// with no store request and no other client's step (a reentrant lock).
    ReentryImmediate,
    /// Shared lock, always: a writer holds alone — no other writer and no
    /// reader believes it holds while a writer does.
    RwExclusion,
    /// Shared lock, sometimes: two readers hold at once (the lock is not
    /// a mutex).
    ReadersShare,
    /// Semaphore, always: at most `permits` live clients believe they hold
    /// a lease at once.
    PermitsBound,
}

/// How a property is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Always,
    Sometimes,
    /// Every reachable state can reach one where all live clients finished.
    Progress,
}

impl PropertyName {
    /// Every property lockstep knows, lock properties first.
    pub const ALL: [PropertyName; 23] = [
        PropertyName::MutualExclusion,
        PropertyName::ResourceExclusion,
        PropertyName::HerdBound,
        PropertyName::HolderOwnsKey,
        PropertyName::HolderWritesAccepted,
        PropertyName::HandOff,
        PropertyName::Progress,
        PropertyName::SingleLeader,
        PropertyName::ElectedWithKey,
        PropertyName::LeaderExclusion,
        PropertyName::FollowersAgree,
        PropertyName::LeaderElected,
        PropertyName::NoEarlyPass,
        PropertyName::AllPass,
        PropertyName::NoEarlyLeave,
        PropertyName::NoLostItem,
        PropertyName::NoDuplicateItem,
        PropertyName::FifoOrder,
        PropertyName::QueueDrains,
        PropertyName::ReentryImmediate,
        PropertyName::RwExclusion,
        PropertyName::ReadersShare,
        PropertyName::PermitsBound,
    ];

    /// The properties that judge `app`, in the order lockstep reports them.
    pub fn of(app: App) -> &'static [PropertyName] {
        use PropertyName as P;
        match app {
            App::Lock => &[
                P::MutualExclusion,
                P::ResourceExclusion,
                P::HerdBound,
                P::HolderOwnsKey,
                P::HolderWritesAccepted,
                P::HandOff,
                P::Progress,
            ],
            App::Election => &[
                P::SingleLeader,
                P::ElectedWithKey,
                P::LeaderExclusion,
                P::HerdBound,
                P::HandOff,
                P::LeaderElected,
                P::FollowersAgree,
            ],
            App::Barrier => &[P::NoEarlyPass, P::NoEarlyLeave, P::HerdBound, P::AllPass],
            App::Queue => &[
                P::NoLostItem,
                P::NoDuplicateItem,
                P::FifoOrder,
                P::QueueDrains,
            ],
            // Readers wake together behind a writer by design (the recipes
            // page says so): the herd sweep measures it, no property bounds
            // it. A reader holds without being first in line, so the owns-key
            // rule does not apply either.
            App::SharedLock => &[
                P::RwExclusion,
                P::ReadersShare,
                P::ResourceExclusion,
                P::Progress,
            ],
            App::Semaphore => &[P::PermitsBound, P::HerdBound, P::HandOff, P::Progress],
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            PropertyName::MutualExclusion => "mutual_exclusion",
            PropertyName::ResourceExclusion => "resource_exclusion",
            PropertyName::HerdBound => "herd_bound",
            PropertyName::HolderOwnsKey => "holder_owns_key",
            PropertyName::HolderWritesAccepted => "holder_writes_accepted",
            PropertyName::HandOff => "hand_off",
            PropertyName::Progress => "progress",
            PropertyName::SingleLeader => "single_leader",
            PropertyName::ElectedWithKey => "elected_with_key",
            PropertyName::LeaderExclusion => "leader_exclusion",
            PropertyName::FollowersAgree => "followers_agree",
            PropertyName::LeaderElected => "leader_elected",
            PropertyName::NoEarlyPass => "no_early_pass",
            PropertyName::AllPass => "all_pass",
            PropertyName::NoEarlyLeave => "no_early_leave",
            PropertyName::NoLostItem => "no_lost_item",
            PropertyName::NoDuplicateItem => "no_duplicate_item",
            PropertyName::FifoOrder => "fifo_order",
            PropertyName::QueueDrains => "queue_drains",
            PropertyName::ReentryImmediate => "reentry_immediate",
            PropertyName::RwExclusion => "rw_exclusion",
            PropertyName::ReadersShare => "readers_share",
            PropertyName::PermitsBound => "permits_bound",
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            PropertyName::MutualExclusion
            | PropertyName::ResourceExclusion
            | PropertyName::HerdBound
            | PropertyName::HolderOwnsKey
            | PropertyName::HolderWritesAccepted
            | PropertyName::SingleLeader
            | PropertyName::ElectedWithKey
            | PropertyName::LeaderExclusion
            | PropertyName::NoEarlyPass
            | PropertyName::NoEarlyLeave
            | PropertyName::NoLostItem
            | PropertyName::NoDuplicateItem
            | PropertyName::FifoOrder
            | PropertyName::ReentryImmediate
            | PropertyName::RwExclusion
            | PropertyName::PermitsBound => Kind::Always,
            PropertyName::HandOff | PropertyName::ReadersShare => Kind::Sometimes,
            PropertyName::Progress
            | PropertyName::FollowersAgree
            | PropertyName::LeaderElected
            | PropertyName::AllPass
            | PropertyName::QueueDrains => Kind::Progress,
        }
    }

    /// The properties that judge a run of `app`: the application's, and
    /// `reentry_immediate` where holders re-enter.
    pub fn judging(app: App, reentries: bool) -> impl Iterator<Item = PropertyName> {
        let reentry = reentries.then_some(PropertyName::ReentryImmediate);
        PropertyName::of(app).iter().copied().chain(reentry)
    }

    /// The properties a simulated run of `app` can report violated: every
    /// `always` and progress property but `followers_agree`, which only the
    /// checker's state graph decides.
    pub fn simulated(app: App) -> impl Iterator<Item = PropertyName> {
        PropertyName::judging(app, false).filter(|p| p.violable_in_a_run())
    }

    /// Whether a simulated run can report this property violated.
    pub fn violable_in_a_run(self) -> bool {
        self.kind() != Kind::Sometimes && self != PropertyName::FollowersAgree
    }

    /// The application this property judges (`herd_bound`, `hand_off`,
    /// `resource_exclusion` and `progress` judge several; they answer
    /// `None`).
    pub fn app(self) -> Option<App> {
        match self {
            PropertyName::MutualExclusion
            | PropertyName::HolderOwnsKey
            | PropertyName::HolderWritesAccepted
            | PropertyName::ReentryImmediate => Some(App::Lock),
            PropertyName::SingleLeader
            | PropertyName::ElectedWithKey
            | PropertyName::LeaderExclusion
            | PropertyName::FollowersAgree
            | PropertyName::LeaderElected => Some(App::Election),
            PropertyName::NoEarlyPass | PropertyName::NoEarlyLeave | PropertyName::AllPass => {
                Some(App::Barrier)
            }
            PropertyName::NoLostItem
            | PropertyName::NoDuplicateItem
            | PropertyName::FifoOrder
            | PropertyName::QueueDrains => Some(App::Queue),
            PropertyName::RwExclusion | PropertyName::ReadersShare => Some(App::SharedLock),
            PropertyName::PermitsBound => Some(App::Semaphore),
            PropertyName::HerdBound
            | PropertyName::HandOff
            | PropertyName::ResourceExclusion
            | PropertyName::Progress => None,
        }
    }

    pub fn parse(s: &str) -> Option<PropertyName> {
        PropertyName::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl fmt::Display for PropertyName {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One acquisition of the lock: who, which of its holds, the store header
/// at which it was decided, its token, and whether the deciding message
/// showed the client owning the entry first in line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Acquisition {
    pub client: ClientIdx,
    pub hold: u32,
    pub granted: u64,
    pub token: u64,
    pub owned: bool,
}

/// What the monitors are told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observation {
    /// A client came to believe it holds.
    Acquired(Acquisition),
    /// A client stopped believing it holds (it released, lost its session,
    /// was fenced off, or crashed).
    Released { client: ClientIdx },
    /// The resource accepted a write of `client`'s hold `hold`.
    WriteAccepted { client: ClientIdx, hold: u32 },
    /// The resource rejected (fenced off) a write with `token`.
    WriteRejected { client: ClientIdx, token: u64 },
    /// A release step — a delete, a session close or an expiry that removed
    /// something — and the notifications it sent to live clients.
    ReleaseStep { notifications: u32 },
    /// A store step sent notifications, `futile` of them with a mark that
    /// says the recipient cannot proceed on them (a barrier's herd).
    Woke { futile: u32 },
    /// A client crashed: it believes nothing any more, and what it had
    /// taken out of a queue and not processed is lost.
    Crashed { client: ClientIdx },
    /// A queue element holding `item` left the store: deleted on `by`'s
    /// request, or gone with `by`'s session.
    Dequeued { item: u64, by: ClientIdx },
    /// A client came to wait with nothing outstanding, or finished: what it
    /// took out of a queue and still owes it will not process now.
    Idle { client: ClientIdx },
    /// A double barrier's member finished leaving; `all_left` is the mark of
    /// the store message it left on: every member had left (deleted its
    /// node, or lost it with its session).
    Left { client: ClientIdx, all_left: bool },
    /// A holder acquired again; `immediate`: in the same step, with no
    /// store request (its library counted it), rather than by asking the
    /// store or not at all.
    Reentered { client: ClientIdx, immediate: bool },
}

/// The monitors' state. In the model checker it is part of the state: it
/// holds the acquisition history (which the resource order needs anyway)
/// and sticky marks that change only on a violating path, so it tells
/// apart no two states that differ in nothing else but a violation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Monitors {
    /// Names the rules: the same rule is `mutual_exclusion` for a lock and
    /// `single_leader` for an election. Fixed for a run.
    app: App,
    /// Every acquisition so far, in the order clients came to believe.
    pub acquisitions: Vec<Acquisition>,
    /// Clients that believe they hold now, with their tokens.
    believers: Vec<(ClientIdx, u64)>,
    /// `resource_exclusion`: the last accepted write's place in the order.
    resource_last: Option<(u64, usize)>,
    resource_broken: bool,
    /// `herd_bound`: the most notifications one release delivered, capped at 2.
    widest_wakeup: u8,
    /// `holder_writes_accepted`: a sole, newest holder was fenced off.
    holder_fenced: bool,
    /// A queue: clients below this index produce (their acquisitions are
    /// enqueues), the others consume (theirs are takes).
    producers: ClientIdx,
    /// A shared lock: clients below this index write, the others read.
    writers: ClientIdx,
    /// A semaphore: how many may hold at once.
    permits: u16,
    /// `rw_exclusion` / `permits_bound` reported (each is reported once).
    holders_exceeded: bool,
    /// `no_lost_item`: items a consumer's delete removed that it has not
    /// processed yet.
    owed: Vec<(ClientIdx, u64)>,
    /// Sticky marks: an item was lost, an item was processed twice.
    item_lost: bool,
    item_duplicated: bool,
    /// `no_early_leave`: a member left before every member had.
    left_early: bool,
    /// `reentry_immediate`: a holder's re-entry waited for the store, or
    /// never came.
    reentry_delayed: bool,
}

impl Monitors {
    /// Gives back spare capacity (the model checker's frontier keeps many).
    pub fn shrink_to_fit(&mut self) {
        self.acquisitions.shrink_to_fit();
        self.believers.shrink_to_fit();
        self.owed.shrink_to_fit();
    }
}

/// Hashes the history only: who believes now follows from the clients'
/// states, and the resource order's place from the resource's log and the
/// acquisitions, so hashing them again would only cost the checker time.
impl std::hash::Hash for Monitors {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.acquisitions.hash(h);
        self.widest_wakeup.hash(h);
        self.holder_fenced.hash(h);
        self.owed.hash(h);
        self.item_lost.hash(h);
        self.item_duplicated.hash(h);
        self.left_early.hash(h);
        // Hashed only when set, so that states without re-entries hash as
        // they did before the mark existed.
        if self.reentry_delayed {
            true.hash(h);
        }
        // Set only on a violating path; hashed only when set, likewise.
        if self.holders_exceeded {
            2u8.hash(h);
        }
    }
}

/// A property newly violated, and the clients involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    pub property: PropertyName,
    pub clients: Vec<ClientIdx>,
}

/// The rules the lock and the election share, and their names in each.
#[derive(Clone, Copy, Debug)]
enum Rule {
    /// At most one live believer.
    Exclusion,
    /// Believing on a reply that showed one's own entry first in line.
    OwnsKey,
    /// The resource's accepted writes in acquisition order.
    Resource,
}

impl Rule {
    /// The rule's name in `app`; `None` where it does not apply (a barrier
    /// lets every member pass at once and guards no resource).
    fn named(self, app: App) -> Option<PropertyName> {
        use PropertyName as P;
        match (self, app) {
            (Rule::Exclusion, App::Lock) => Some(P::MutualExclusion),
            (Rule::Exclusion, App::Election) => Some(P::SingleLeader),
            (Rule::OwnsKey, App::Lock) => Some(P::HolderOwnsKey),
            (Rule::OwnsKey, App::Election) => Some(P::ElectedWithKey),
            (Rule::OwnsKey, App::Barrier) => Some(P::NoEarlyPass),
            (Rule::OwnsKey, App::Queue) => Some(P::FifoOrder),
            (Rule::Resource, App::Lock | App::SharedLock) => Some(P::ResourceExclusion),
            (Rule::Resource, App::Election) => Some(P::LeaderExclusion),
            (Rule::Exclusion | Rule::Resource, App::Barrier | App::Queue) => None,
            // Their own bounds on holders (`Monitors::too_many_holders`);
            // readers and lease holders are not first in line, and lease
            // holders write nothing.
            (Rule::Exclusion | Rule::OwnsKey, App::SharedLock | App::Semaphore) => None,
            (Rule::Resource, App::Semaphore) => None,
        }
    }
}

impl Monitors {
    /// An acquisition's place in the order the resource must follow: for a
    /// lock, where the store decided it (its header); for an election, its
    /// epoch (the election key's create revision, the node's czxid), since a
    /// leader elected on no key (etcd's phantom) was decided on nothing, and
    /// the leaders' order is the order of their keys.
    fn place(&self, a: &Acquisition) -> u64 {
        match self.app {
            App::Lock | App::Barrier | App::Queue | App::SharedLock | App::Semaphore => a.granted,
            App::Election => a.token,
        }
    }

    /// Monitors for a run of `app`; for a queue, clients below `producers`
    /// produce (0 for the other applications).
    pub fn new(app: App, producers: ClientIdx) -> Self {
        Monitors {
            app,
            producers,
            ..Monitors::default()
        }
    }

    /// A shared lock's monitors: clients below `writers` write.
    pub fn with_writers(self, writers: ClientIdx) -> Self {
        Monitors { writers, ..self }
    }

    /// A semaphore's monitors: `permits` may hold at once.
    pub fn with_permits(self, permits: u16) -> Self {
        Monitors { permits, ..self }
    }

    /// Whether a shared lock's client is a writer.
    fn writes(&self, client: ClientIdx) -> bool {
        client < self.writers
    }

    /// The bound on holders broken now, if this application has its own:
    /// a writer beside anyone (`rw_exclusion`), more than `permits` lease
    /// holders (`permits_bound`).
    #[inline]
    fn too_many_holders(&self) -> Option<PropertyName> {
        let n = self.believers.len();
        match self.app {
            App::SharedLock if n >= 2 && self.believers.iter().any(|(c, _)| self.writes(*c)) => {
                Some(PropertyName::RwExclusion)
            }
            App::Semaphore if n > usize::from(self.permits) => Some(PropertyName::PermitsBound),
            App::SharedLock
            | App::Semaphore
            | App::Lock
            | App::Election
            | App::Barrier
            | App::Queue => None,
        }
    }

    /// A queue consumer took `a.token`'s item (the recipe handed it over:
    /// the application processes it now).
    fn took(&mut self, a: Acquisition, breaches: &mut Vec<Breach>) {
        // Every acquisition of a queue is a take (a producer's enqueue is
        // never seen as a hold).
        let mut takers: Vec<ClientIdx> = self
            .acquisitions
            .iter()
            .filter(|b| b.token == a.token)
            .map(|b| b.client)
            .collect();
        if !self.item_duplicated && !takers.is_empty() {
            self.item_duplicated = true;
            takers.push(a.client);
            takers.sort_unstable();
            takers.dedup();
            breaches.push(Breach {
                property: PropertyName::NoDuplicateItem,
                clients: takers,
            });
        }
        self.owed
            .retain(|&(c, item)| (c, item) != (a.client, a.token));
        // It takes another item while it owes one: that one is lost.
        self.forfeit(a.client, breaches);
    }

    /// `client` will process nothing it owes any more.
    fn forfeit(&mut self, client: ClientIdx, breaches: &mut Vec<Breach>) {
        let owes = self.owed.iter().any(|&(c, _)| c == client);
        if owes {
            self.owed.retain(|&(c, _)| c != client);
            if !self.item_lost {
                self.item_lost = true;
                breaches.push(Breach {
                    property: PropertyName::NoLostItem,
                    clients: vec![client],
                });
            }
        }
    }

    /// The run is over with nothing left to happen: an item still owed will
    /// never be processed.
    pub fn at_end(&mut self) -> Vec<Breach> {
        let mut breaches = Vec::new();
        let owing: Vec<ClientIdx> = self.owed.iter().map(|&(c, _)| c).collect();
        for c in owing {
            self.forfeit(c, &mut breaches);
        }
        breaches
    }

    /// Whether `obs` can change the monitors of this application at all,
    /// whatever they hold: an idle client matters only to a queue (what it
    /// owes), a member that left after everyone did breaks nothing, a
    /// barrier's herd is its wake-ups and a lock's and an election's their
    /// release steps. The model checker feeds only what is heeded, so a
    /// step that feeds nothing else leaves the monitors shared (and, for
    /// the partial-order reduction, invisible).
    pub fn heeds(&self, obs: &Observation) -> bool {
        match *obs {
            Observation::Idle { .. } => self.app == App::Queue,
            Observation::Left { all_left, .. } => !all_left,
            Observation::Woke { .. } => self.app == App::Barrier,
            // A shared lock's herd is by design (no property bounds it).
            Observation::ReleaseStep { .. } => {
                !matches!(self.app, App::Barrier | App::Queue | App::SharedLock)
            }
            Observation::Acquired(_)
            | Observation::Released { .. }
            | Observation::WriteAccepted { .. }
            | Observation::WriteRejected { .. }
            | Observation::Crashed { .. }
            | Observation::Dequeued { .. } => true,
            // Only a re-entry that waited changes anything.
            Observation::Reentered { immediate, .. } => !immediate,
        }
    }

    /// Feeds one observation; returns the violations it makes (for engines
    /// that report them as they happen). What it does not heed changes
    /// nothing.
    pub fn observe(&mut self, obs: Observation) -> Vec<Breach> {
        let mut breaches = Vec::new();
        if !self.heeds(&obs) {
            return breaches;
        }
        match obs {
            Observation::Acquired(a) => {
                // (A producer's enqueue is no hold: it releases in the step
                // it is told, so the monitors never see it.)
                if self.app == App::Queue && a.client >= self.producers {
                    self.took(a, &mut breaches);
                }
                if let (false, Some(property)) = (a.owned, Rule::OwnsKey.named(self.app)) {
                    breaches.push(Breach {
                        property,
                        clients: vec![a.client],
                    });
                }
                self.acquisitions.push(a);
                self.believers.retain(|(c, _)| *c != a.client);
                self.believers.push((a.client, a.token));
                if let (2, Some(property)) = (self.believers.len(), Rule::Exclusion.named(self.app))
                {
                    let mut clients: Vec<ClientIdx> =
                        self.believers.iter().map(|(c, _)| *c).collect();
                    clients.sort_unstable();
                    breaches.push(Breach { property, clients });
                }
                if let (false, Some(property)) = (self.holders_exceeded, self.too_many_holders()) {
                    self.holders_exceeded = true;
                    let mut clients: Vec<ClientIdx> =
                        self.believers.iter().map(|(c, _)| *c).collect();
                    clients.sort_unstable();
                    breaches.push(Breach { property, clients });
                }
            }
            Observation::Released { client } => self.believers.retain(|(c, _)| *c != client),
            Observation::Reentered { client, immediate } => {
                if !immediate && !self.reentry_delayed {
                    self.reentry_delayed = true;
                    breaches.push(Breach {
                        property: PropertyName::ReentryImmediate,
                        clients: vec![client],
                    });
                }
            }
            Observation::Crashed { client } => {
                self.believers.retain(|(c, _)| *c != client);
                self.forfeit(client, &mut breaches);
            }
            Observation::Idle { client } => self.forfeit(client, &mut breaches),
            // Heeded only when not every member had left.
            Observation::Left { client, .. } => {
                if !self.left_early {
                    self.left_early = true;
                    breaches.push(Breach {
                        property: PropertyName::NoEarlyLeave,
                        clients: vec![client],
                    });
                }
            }
            Observation::Dequeued { item, by } if by < self.producers => {
                // A producer never processes: an element that left the
                // queue by its hand (its ephemeral gone with its session)
                // is lost.
                self.owed.push((by, item));
                self.forfeit(by, &mut breaches);
            }
            Observation::Dequeued { item, by } => {
                // Processed already (a lock-safe consumer deletes after
                // processing): nothing is owed.
                let processed = self
                    .acquisitions
                    .iter()
                    .rev()
                    .find(|a| a.client == by)
                    .is_some_and(|a| a.token == item);
                if !processed {
                    self.owed.push((by, item));
                }
            }
            Observation::WriteAccepted { client, hold } => {
                let at = self
                    .acquisitions
                    .iter()
                    .rposition(|a| a.client == client && a.hold == hold);
                // A write of no acquisition at all breaks exclusion outright.
                let in_order = at.is_some_and(|at| {
                    let key = (self.place(&self.acquisitions[at]), at);
                    let ok = self.resource_last.is_none_or(|last| key >= last);
                    self.resource_last = Some(key);
                    ok
                });
                let rule = Rule::Resource.named(self.app);
                if let (false, false, Some(property)) = (in_order, self.resource_broken, rule) {
                    self.resource_broken = true;
                    let mut clients = vec![client];
                    if let Some(other) = self.acquisitions.iter().rev().find(|a| a.client != client)
                    {
                        clients.push(other.client);
                    }
                    clients.sort_unstable();
                    breaches.push(Breach { property, clients });
                }
            }
            Observation::WriteRejected { client, token } => {
                let sole = self.believers.len() == 1 && self.believers[0].0 == client;
                let newest = self.acquisitions.iter().all(|a| a.token <= token);
                // A lock property; elections report no breach of it.
                if sole && newest && !self.holder_fenced && self.app == App::Lock {
                    self.holder_fenced = true;
                    breaches.push(Breach {
                        property: PropertyName::HolderWritesAccepted,
                        clients: vec![client],
                    });
                }
            }
            // The herd: a barrier's wake-ups, a lock's or an election's
            // release steps (`heeds` says which; a queue's releases, the
            // lock-safe deletes, are no hand-off).
            Observation::Woke { futile: woken }
            | Observation::ReleaseStep {
                notifications: woken,
            } => {
                if woken > 1 && self.widest_wakeup <= 1 {
                    breaches.push(Breach {
                        property: PropertyName::HerdBound,
                        clients: Vec::new(),
                    });
                }
                self.widest_wakeup = self.widest_wakeup.max(woken.min(2) as u8);
            }
        }
        // A rule reports only where it is one of the application's
        // properties (a queue's release steps are not judged by herd_bound);
        // re-entries happen only where asked for, so their property is
        // let through as if asked.
        breaches.retain(|b| PropertyName::judging(self.app, true).any(|p| p == b.property));
        breaches
    }

    /// Whether an `always` property holds so far, or a `sometimes` one has
    /// been witnessed. Progress is judged by the engines.
    #[inline]
    pub fn holds(&self, p: PropertyName) -> bool {
        match p {
            PropertyName::MutualExclusion | PropertyName::SingleLeader => self.believers.len() <= 1,
            PropertyName::ResourceExclusion | PropertyName::LeaderExclusion => {
                !self.resource_broken
            }
            PropertyName::HerdBound => self.widest_wakeup <= 1,
            PropertyName::HolderOwnsKey
            | PropertyName::ElectedWithKey
            | PropertyName::NoEarlyPass
            | PropertyName::FifoOrder => self.acquisitions.iter().all(|a| a.owned),
            PropertyName::NoEarlyLeave => !self.left_early,
            PropertyName::RwExclusion | PropertyName::PermitsBound => {
                self.too_many_holders() != Some(p)
            }
            PropertyName::ReadersShare => {
                self.believers
                    .iter()
                    .filter(|(c, _)| !self.writes(*c))
                    .count()
                    >= 2
            }
            PropertyName::ReentryImmediate => !self.reentry_delayed,
            PropertyName::NoLostItem => !self.item_lost,
            PropertyName::NoDuplicateItem => !self.item_duplicated,
            PropertyName::HolderWritesAccepted => !self.holder_fenced,
            PropertyName::HandOff => self
                .acquisitions
                .windows(2)
                .any(|w| w[0].client != w[1].client),
            PropertyName::Progress
            | PropertyName::FollowersAgree
            | PropertyName::LeaderElected
            | PropertyName::AllPass
            | PropertyName::QueueDrains => true,
        }
    }
}

impl Relabel for Acquisition {
    fn relabel(&mut self, p: &Perm) {
        self.client.relabel(p);
    }
}

impl Relabel for Monitors {
    fn relabel(&mut self, p: &Perm) {
        self.acquisitions.relabel(p);
        for (c, _) in &mut self.believers {
            c.relabel(p);
        }
        for (c, _) in &mut self.owed {
            c.relabel(p);
        }
        // Believers are kept in the order they came to believe, which names
        // no client; nothing to re-sort.
    }
}

/// What a client's step means to the monitors: `before` is what it believed
/// before the step ([`ClientState::marks`]), `after` its state after.
pub fn observe_client(
    client: ClientIdx,
    before: Marks,
    after: &ClientState,
) -> Option<Observation> {
    if let (None, Some(all_left)) = (before.left, after.left) {
        return Some(Observation::Left { client, all_left });
    }
    // A holder asked to acquire again: at once, or through the store (or
    // never, blocked on itself).
    if after.nesting.made() > before.reentered && after.holds_lock() {
        let immediate = after.nesting.asking() == Asking::Nothing && !after.nesting.blocked();
        return Some(Observation::Reentered { client, immediate });
    }
    let idle = after.marks().idle;
    match (before.holding, after.holds_lock()) {
        (false, true) => Some(Observation::Acquired(Acquisition {
            client,
            hold: after.holds,
            granted: after.granted().unwrap_or(0),
            token: after.token().unwrap_or(0),
            owned: after.owned(),
        })),
        (true, false) => Some(Observation::Released { client }),
        // (Coming to hold or to stop holding is never idle in the same
        // step but for a member done with its barrier, which owes nothing.)
        (false, false) if idle && !before.idle => Some(Observation::Idle { client }),
        (true, true) | (false, false) => None,
    }
}

/// What a store step meant to the monitors: the queue items it removed,
/// `removed_before` being [`StoreState::items_removed`] before the step.
pub fn observe_store(removed_before: usize, after: &StoreState) -> Vec<Observation> {
    after
        .queue
        .as_ref()
        .map(|q| {
            q.removed
                .iter()
                .skip(removed_before)
                .map(|&(item, by)| Observation::Dequeued { item, by })
                .collect()
        })
        .unwrap_or_default()
}

/// What the resource's answer to `write` from `client` means to the monitors.
pub fn observe_resource(client: ClientIdx, write: &Msg, ack: &Msg) -> Option<Observation> {
    match (write, ack) {
        (Msg::Write { hold, .. }, Msg::WriteAck { accepted: true, .. }) => {
            Some(Observation::WriteAccepted {
                client,
                hold: *hold,
            })
        }
        (
            Msg::Write { token, .. },
            Msg::WriteAck {
                accepted: false, ..
            },
        ) => Some(Observation::WriteRejected {
            client,
            token: *token,
        }),
        _ => None,
    }
}

/// Whether delivering `msg` to the store is a release step (when it changes
/// the store): the request a recipe's release step sent, or a session
/// close. (A session expiry is the third kind; the engines see it as a timer.)
pub fn is_release(msg: &Msg) -> bool {
    match msg {
        Msg::Request { release, .. } => *release,
        Msg::Close { .. } => true,
        Msg::Reply { .. }
        | Msg::Ping { .. }
        | Msg::Pong { .. }
        | Msg::Notify { .. }
        | Msg::Expired { .. }
        | Msg::Write { .. }
        | Msg::WriteAck { .. } => false,
    }
}
