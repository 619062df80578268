//! The properties, each defined once, as monitors over one stream of typed
//! observations that every engine feeds: the model checker after each step
//! (the monitors' state is part of its state), the simulator as its events
//! happen (violations then carry a time).
//!
//! Observations come from [`observe_client`] (a client came to believe it
//! holds, or stopped), the guarded resource (a write accepted or rejected),
//! and the store (a release step and the notifications it caused). An engine
//! decides only *when* to feed them; what they mean is decided here: the
//! rules every application shares in [`Monitors`], each application's own
//! in its module under [`crate::apps`].

mod monitors;

pub use monitors::{Monitors, OwnMonitor, Seen};

use crate::client::{ClientState, Marks};
use crate::ids::ClientIdx;
use crate::msg::Msg;
use crate::recipe::App;
use crate::relabel::{Perm, Relabel};
use crate::store::ensemble::{Ensemble, Notified, Tally};
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
    /// Every application, always, judged by the simulator's engine alone (a
    /// run-level check, not a monitor: the checker's time is untimed, and
    /// no application lists it): in a run where no fault has fired, no
    /// client's session or lease expires while the client still uses it.
    /// The scenario check refuses timing that would let one; this catches
    /// what it missed, naming the client.
    FaultFreeSessionLoss,
    /// Every application over an ensemble, always: a `sync` is answered
    /// only by a server that has applied every change the leader had
    /// committed when it arrived — ZooKeeper's promise for `sync` then
    /// read, which a leader cut off from its followers breaks while it
    /// still believes it leads (ZOOKEEPER-1675). Only a leader failover
    /// can violate it: every simulated run is judged by it (a run check),
    /// and a check with a failover; a monitor fed by the store's ghost.
    SyncIsCurrent,
    /// Election, always, judged where clients observe (`observers`, etcd's
    /// `Observe`): the leader an observer comes to name owned the
    /// election's first key, live, when the store sent what the observer
    /// named it on — `elected_with_key`'s rule for an observer's report.
    ObservedLeaderCurrent,
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
    pub const ALL: [PropertyName; 26] = [
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
        PropertyName::FaultFreeSessionLoss,
        PropertyName::SyncIsCurrent,
        PropertyName::ObservedLeaderCurrent,
    ];

    /// The simulator's run-level checks: they judge a run of every
    /// application. The checker judges `sync_is_current` where a failover
    /// can happen (`ModelCfg::judged`), `fault_free_session_loss` never.
    pub const RUN_CHECKS: [PropertyName; 2] = [
        PropertyName::FaultFreeSessionLoss,
        PropertyName::SyncIsCurrent,
    ];

    /// The properties that judge `app`, in the order lockstep reports them
    /// (each application's module lists its own).
    pub fn of(app: App) -> &'static [PropertyName] {
        app.spec().properties
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
            PropertyName::FaultFreeSessionLoss => "fault_free_session_loss",
            PropertyName::SyncIsCurrent => "sync_is_current",
            PropertyName::ObservedLeaderCurrent => "observed_leader_current",
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
            | PropertyName::PermitsBound
            | PropertyName::FaultFreeSessionLoss
            | PropertyName::SyncIsCurrent
            | PropertyName::ObservedLeaderCurrent => Kind::Always,
            PropertyName::HandOff | PropertyName::ReadersShare => Kind::Sometimes,
            PropertyName::Progress
            | PropertyName::FollowersAgree
            | PropertyName::LeaderElected
            | PropertyName::AllPass
            | PropertyName::QueueDrains => Kind::Progress,
        }
    }

    /// The properties that judge a run of `app`: the application's,
    /// `reentry_immediate` where holders re-enter, and
    /// `observed_leader_current` where clients observe.
    pub fn judging(
        app: App,
        reentries: bool,
        observers: bool,
    ) -> impl Iterator<Item = PropertyName> {
        let reentry = reentries.then_some(PropertyName::ReentryImmediate);
        let observed = observers.then_some(PropertyName::ObservedLeaderCurrent);
        PropertyName::of(app)
            .iter()
            .copied()
            .chain(reentry)
            .chain(observed)
    }

    /// The properties a run of `recipe` is judged by: [`Self::judging`]'s,
    /// less `herd_bound` on a store with no watches (Redis: its clients
    /// poll, and the herd sweep counts their requests instead).
    pub fn judging_recipe(
        recipe: &crate::recipe::RecipeRef,
        reentries: bool,
        observers: bool,
    ) -> impl Iterator<Item = PropertyName> {
        let watches = recipe.face() != crate::recipe::Face::Redis;
        PropertyName::judging(recipe.app(), reentries, observers)
            .filter(move |p| watches || *p != PropertyName::HerdBound)
    }

    /// The properties a simulated run of `app` can report violated: every
    /// `always` and progress property but `followers_agree`, which only the
    /// checker's state graph decides, and the run-level checks.
    pub fn simulated(app: App) -> impl Iterator<Item = PropertyName> {
        PropertyName::judging(app, false, false)
            .filter(|p| p.violable_in_a_run())
            .chain(PropertyName::RUN_CHECKS)
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
            | PropertyName::LeaderElected
            | PropertyName::ObservedLeaderCurrent => Some(App::Election),
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
            | PropertyName::Progress
            | PropertyName::FaultFreeSessionLoss
            | PropertyName::SyncIsCurrent => None,
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
    /// something — and the live clients its notifications woke.
    ReleaseStep { woken: Woken },
    /// A store step sent notifications; `futile`: those with a mark that
    /// says the recipient cannot proceed on them (a barrier's herd).
    Woke { futile: Woken },
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
    /// A server of an ensemble answered `client`'s `sync` behind what the
    /// leader had committed when it arrived (`sync_is_current`).
    StaleSync { client: ClientIdx },
    /// An election's observer came to name a leader on a store message
    /// sent while that leader did not own the first key
    /// (`observed_leader_current`).
    NamedStale { client: ClientIdx },
}

/// A property newly violated, and the clients involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    pub property: PropertyName,
    pub clients: Vec<ClientIdx>,
}

/// The clients a store step's notifications woke: how many, and the first
/// two — enough to name a herd (more than one), without an allocation, so
/// an observation stays a copy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Woken {
    count: u32,
    first: [ClientIdx; 2],
}

impl Woken {
    /// One more notification, to `client`.
    pub fn add(&mut self, client: ClientIdx) {
        if let Some(slot) = self.first.get_mut(self.count as usize) {
            *slot = client;
        }
        self.count = self.count.saturating_add(1);
    }

    /// The clients `other` woke that this has not (a change's wake-ups on
    /// another server): a client told twice of one change — by its old
    /// server, and by its new one after a reconnect — is woken once. Past
    /// the first two, which is all it keeps, each counts.
    pub fn join_clients(&mut self, other: Woken) {
        let kept = (other.count as usize).min(other.first.len());
        for &c in &other.first[..kept] {
            if !self.first[..(self.count as usize).min(self.first.len())].contains(&c) {
                self.add(c);
            }
        }
        self.count = self
            .count
            .saturating_add(other.count.saturating_sub(kept as u32));
    }

    /// How many notifications there were.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The first two clients woken, in order of their indices.
    pub fn clients(&self) -> Vec<ClientIdx> {
        let kept = (self.count as usize).min(self.first.len());
        let mut clients = self.first[..kept].to_vec();
        clients.sort_unstable();
        clients.dedup();
        clients
    }
}

impl FromIterator<ClientIdx> for Woken {
    fn from_iter<I: IntoIterator<Item = ClientIdx>>(clients: I) -> Woken {
        let mut woken = Woken::default();
        for c in clients {
            woken.add(c);
        }
        woken
    }
}

impl Breach {
    /// `property` broken by everyone who believes now.
    pub fn by_believers(property: PropertyName, seen: Seen) -> Breach {
        let mut clients: Vec<ClientIdx> = seen.believers.iter().map(|(c, _)| *c).collect();
        clients.sort_unstable();
        Breach { property, clients }
    }
}

impl Relabel for Acquisition {
    fn relabel(&mut self, p: &Perm) {
        self.client.relabel(p);
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
    if let Some(reentry) = crate::apps::lock::observe_reentry(client, before.reentered, after) {
        return Some(reentry);
    }
    if !before.named_stale && after.clocks.named_stale() {
        return Some(Observation::NamedStale { client });
    }
    let idle = after.marks().idle;
    match (before.holding, after.is_holding()) {
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
    let mut seen: Vec<Observation> = after
        .queue
        .as_ref()
        .map(|q| {
            q.removed
                .iter()
                .skip(removed_before)
                .map(|&(item, by)| Observation::Dequeued { item, by })
                .collect()
        })
        .unwrap_or_default();
    // The ghost stays set: the monitors heed it once.
    if let Some((session, _, _)) = after.ensemble.as_ref().and_then(|e| e.stale_sync) {
        seen.push(Observation::StaleSync {
            client: session.client,
        });
    }
    seen
}

/// What a store step's notifications mean to the herd's monitor. On one
/// server, the step's own (`Woke`, if it notified anyone). Over an
/// ensemble (`ensemble`), each change it told of adds to that change's
/// tally, and the monitors judge the tally so far: the wake-ups of every
/// server that has applied the change (`Woke`), and, for a release's,
/// the release's (`ReleaseStep`). The tallies touched, for the metrics.
pub fn observe_notified(
    ensemble: Option<&mut Ensemble>,
    n: &Notified,
) -> (Vec<Observation>, Vec<Tally>) {
    let Some(e) = ensemble else {
        let woke = (n.woken.count() > 0).then_some(Observation::Woke { futile: n.futile });
        return (woke.into_iter().collect(), Vec::new());
    };
    let tallies = e.tally_step(&n.by_change, None);
    let mut seen = Vec::new();
    for t in &tallies {
        seen.push(Observation::Woke { futile: t.futile });
        if t.release {
            seen.push(Observation::ReleaseStep { woken: t.woken });
        }
    }
    (seen, tallies)
}

/// What a release step — one that changed the store, leaving the header
/// at `header` — means to the herd's monitor: on one server, the step's
/// wake-ups; over an ensemble, its change's tally so far (the servers that
/// have not applied it yet add theirs as they do), which is returned.
pub fn observe_release(
    ensemble: Option<&mut Ensemble>,
    woken: Woken,
    header: u64,
) -> (Observation, Option<Tally>) {
    match ensemble {
        None => (Observation::ReleaseStep { woken }, None),
        Some(e) => {
            let t = e.tally_step(&[], Some(header))[0];
            (Observation::ReleaseStep { woken: t.woken }, Some(t))
        }
    }
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
