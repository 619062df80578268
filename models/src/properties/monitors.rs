//! The monitors' state and how observations change it: the rules every
//! application shares (who believes, the resource's order, the herd, the
//! hand-off) here, under each application's names ([`crate::apps::Rules`]),
//! and each application's own rules in its module, behind [`OwnMonitor`].

use super::{Acquisition, Breach, Observation, PropertyName};
use crate::apps::barrier::LeaveMonitor;
use crate::apps::election::ElectionMonitor;
use crate::apps::lock::LockMonitor;
use crate::apps::queue::Ledger;
use crate::apps::semaphore::PermitsMonitor;
use crate::apps::shared_lock::RwMonitor;
use crate::apps::{App, Herd, Place, Roles};
use crate::ids::ClientIdx;
use crate::relabel::{Perm, Relabel};

/// The monitors' state. In the model checker it is part of the state: it
/// holds the acquisition history (which the resource order needs anyway)
/// and sticky marks that change only on a violating path, so it tells
/// apart no two states that differ in nothing else but a violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Monitors {
    /// Every acquisition so far, in the order clients came to believe.
    pub acquisitions: Vec<Acquisition>,
    /// Clients that believe they hold now, with their tokens.
    believers: Vec<(ClientIdx, u64)>,
    /// `resource_exclusion`: the last accepted write's place in the order.
    resource_last: Option<(u64, usize)>,
    resource_broken: bool,
    /// `herd_bound`: the most notifications one release delivered, capped at 2.
    widest_wakeup: u8,
    /// `sync_is_current`: a server answered a `sync` behind the leader.
    /// Not hashed: it follows from the store's ghost (`Ensemble::stale_sync`).
    stale_sync: bool,
    /// The application's own monitors; their variant names the rules (the
    /// same rule is `mutual_exclusion` for a lock and `single_leader` for
    /// an election). Fixed for a run.
    own: Own,
}

/// What an application's own monitors read of the shared ones.
#[derive(Clone, Copy)]
pub struct Seen<'a> {
    /// Every acquisition so far (before the one being observed, if any).
    pub acquisitions: &'a [Acquisition],
    /// Who believes now.
    pub believers: &'a [(ClientIdx, u64)],
}

/// An application's own monitors: the rules that judge it alone.
pub trait OwnMonitor {
    /// Whether `obs` can change them, whatever they hold, where the shared
    /// monitors leave it to the application (an idle client, a member's
    /// leave, a re-entry). By default nothing.
    fn heeds(&self, _obs: &Observation) -> bool {
        false
    }

    /// Feeds one observation the monitors heed, before the shared rules
    /// take it. By default nothing changes.
    fn observe(&mut self, _seen: Seen, _obs: &Observation, _breaches: &mut Vec<Breach>) {}

    /// After a client came to believe, and the shared rules took it.
    fn acquired(&mut self, _seen: Seen, _breaches: &mut Vec<Breach>) {}

    /// Whether one of its own properties holds so far (a `sometimes` one:
    /// has been witnessed); `None` for a property that is not its own.
    fn holds(&self, seen: Seen, p: PropertyName) -> Option<bool>;

    /// The run is over with nothing left to happen.
    fn at_end(&mut self, _breaches: &mut Vec<Breach>) {}
}

/// Each application's own monitors.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Own {
    Lock(LockMonitor),
    Election(ElectionMonitor),
    Barrier(LeaveMonitor),
    Queue(Ledger),
    SharedLock(RwMonitor),
    Semaphore(PermitsMonitor),
}

impl Own {
    fn app(&self) -> App {
        match self {
            Own::Lock(_) => App::Lock,
            Own::Election(_) => App::Election,
            Own::Barrier(_) => App::Barrier,
            Own::Queue(_) => App::Queue,
            Own::SharedLock(_) => App::SharedLock,
            Own::Semaphore(_) => App::Semaphore,
        }
    }

    fn get(&self) -> &dyn OwnMonitor {
        match self {
            Own::Lock(m) => m,
            Own::Election(m) => m,
            Own::Barrier(m) => m,
            Own::Queue(m) => m,
            Own::SharedLock(m) => m,
            Own::Semaphore(m) => m,
        }
    }

    fn get_mut(&mut self) -> &mut dyn OwnMonitor {
        match self {
            Own::Lock(m) => m,
            Own::Election(m) => m,
            Own::Barrier(m) => m,
            Own::Queue(m) => m,
            Own::SharedLock(m) => m,
            Own::Semaphore(m) => m,
        }
    }
}

impl Monitors {
    /// Monitors for a run of `app`; for a queue, clients below `producers`
    /// produce (0 for the other applications).
    pub fn new(app: App, producers: ClientIdx) -> Self {
        let own = match app {
            App::Lock => Own::Lock(LockMonitor::default()),
            App::Election => Own::Election(ElectionMonitor::default()),
            App::Barrier => Own::Barrier(LeaveMonitor::default()),
            App::Queue => Own::Queue(Ledger::new(producers)),
            App::SharedLock => Own::SharedLock(RwMonitor::default()),
            App::Semaphore => Own::Semaphore(PermitsMonitor::default()),
        };
        Monitors {
            acquisitions: Vec::new(),
            believers: Vec::new(),
            resource_last: None,
            resource_broken: false,
            widest_wakeup: 0,
            stale_sync: false,
            own,
        }
    }

    /// Monitors for a run of `app` with these roles and, for a semaphore,
    /// `permits` that may hold at once.
    pub fn for_run(app: App, roles: Roles, permits: u16) -> Self {
        Monitors::new(app, roles.producers)
            .with_writers(roles.writers)
            .with_permits(permits)
    }

    /// A shared lock's monitors: clients below `writers` write (no other
    /// application has writers apart).
    pub fn with_writers(mut self, writers: ClientIdx) -> Self {
        if let Own::SharedLock(m) = &mut self.own {
            m.writers = writers;
        }
        self
    }

    /// A semaphore's monitors: `permits` may hold at once (no other
    /// application counts permits).
    pub fn with_permits(mut self, permits: u16) -> Self {
        if let Own::Semaphore(m) = &mut self.own {
            m.permits = permits;
        }
        self
    }

    /// The application these monitors judge.
    pub fn app(&self) -> App {
        self.own.app()
    }

    /// Gives back spare capacity (the model checker's frontier keeps many).
    pub fn shrink_to_fit(&mut self) {
        self.acquisitions.shrink_to_fit();
        self.believers.shrink_to_fit();
        if let Own::Queue(ledger) = &mut self.own {
            ledger.shrink_to_fit();
        }
    }

    fn seen(&self) -> Seen<'_> {
        Seen {
            acquisitions: &self.acquisitions,
            believers: &self.believers,
        }
    }

    /// An acquisition's place in the order the resource must follow.
    fn place(&self, a: &Acquisition) -> u64 {
        match self.app().spec().rules.place {
            Place::Granted => a.granted,
            Place::Token => a.token,
        }
    }

    /// The run is over with nothing left to happen: an item still owed will
    /// never be processed.
    pub fn at_end(&mut self) -> Vec<Breach> {
        let mut breaches = Vec::new();
        self.own.get_mut().at_end(&mut breaches);
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
        let herd = self.app().spec().rules.herd;
        match *obs {
            Observation::Woke { .. } => herd == Herd::FutileWakeups,
            Observation::ReleaseStep { .. } => herd == Herd::ReleaseSteps,
            Observation::Acquired(_)
            | Observation::Released { .. }
            | Observation::WriteAccepted { .. }
            | Observation::WriteRejected { .. }
            | Observation::Crashed { .. }
            | Observation::Dequeued { .. } => true,
            Observation::StaleSync { .. } => !self.stale_sync,
            Observation::Idle { .. }
            | Observation::Left { .. }
            | Observation::Reentered { .. }
            | Observation::NamedStale { .. } => self.own.get().heeds(obs),
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
        let seen = Seen {
            acquisitions: &self.acquisitions,
            believers: &self.believers,
        };
        self.own.get_mut().observe(seen, &obs, &mut breaches);
        let rules = self.app().spec().rules;
        match obs {
            Observation::Acquired(a) => {
                if let (false, Some(property)) = (a.owned, rules.owns_key) {
                    breaches.push(Breach {
                        property,
                        clients: vec![a.client],
                    });
                }
                self.acquisitions.push(a);
                self.believers.retain(|(c, _)| *c != a.client);
                self.believers.push((a.client, a.token));
                if let (2, Some(property)) = (self.believers.len(), rules.exclusion) {
                    breaches.push(Breach {
                        property,
                        clients: self.believers_sorted(),
                    });
                }
                let seen = Seen {
                    acquisitions: &self.acquisitions,
                    believers: &self.believers,
                };
                self.own.get_mut().acquired(seen, &mut breaches);
            }
            Observation::Released { client } | Observation::Crashed { client } => {
                self.believers.retain(|(c, _)| *c != client)
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
                if let (false, false, Some(property)) =
                    (in_order, self.resource_broken, rules.resource)
                {
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
            // The herd: a barrier's wake-ups, a lock's or an election's
            // release steps (`heeds` says which).
            // The breach names the clients woken at once (the first two).
            Observation::Woke { futile: woken } | Observation::ReleaseStep { woken } => {
                if woken.count() > 1 && self.widest_wakeup <= 1 {
                    breaches.push(Breach {
                        property: PropertyName::HerdBound,
                        clients: woken.clients(),
                    });
                }
                self.widest_wakeup = self.widest_wakeup.max(woken.count().min(2) as u8);
            }
            Observation::StaleSync { client } => {
                self.stale_sync = true;
                breaches.push(Breach {
                    property: PropertyName::SyncIsCurrent,
                    clients: vec![client],
                });
            }
            // The application's own.
            Observation::WriteRejected { .. }
            | Observation::Dequeued { .. }
            | Observation::Idle { .. }
            | Observation::Left { .. }
            | Observation::Reentered { .. }
            | Observation::NamedStale { .. } => {}
        }
        // A rule reports only where it is one of the application's
        // properties (a queue's release steps are not judged by herd_bound);
        // re-entries, observers' reports and stale syncs happen only where
        // the run has them, so their properties are let through as if
        // asked.
        let app = self.app();
        breaches.retain(|b| {
            b.property == PropertyName::SyncIsCurrent
                || PropertyName::judging(app, true, true).any(|p| p == b.property)
        });
        breaches
    }

    fn believers_sorted(&self) -> Vec<ClientIdx> {
        let mut clients: Vec<ClientIdx> = self.believers.iter().map(|(c, _)| *c).collect();
        clients.sort_unstable();
        clients
    }

    /// Whether an `always` property holds so far, or a `sometimes` one has
    /// been witnessed. Progress is judged by the engines, and a property
    /// of another application by nothing here: both answer true.
    #[inline]
    pub fn holds(&self, p: PropertyName) -> bool {
        let rules = self.app().spec().rules;
        if Some(p) == rules.exclusion {
            return self.believers.len() <= 1;
        }
        if Some(p) == rules.resource {
            return !self.resource_broken;
        }
        if Some(p) == rules.owns_key {
            return self.acquisitions.iter().all(|a| a.owned);
        }
        match p {
            PropertyName::HerdBound => self.widest_wakeup <= 1,
            PropertyName::SyncIsCurrent => !self.stale_sync,
            PropertyName::HandOff => self
                .acquisitions
                .windows(2)
                .any(|w| w[0].client != w[1].client),
            PropertyName::MutualExclusion
            | PropertyName::SingleLeader
            | PropertyName::ResourceExclusion
            | PropertyName::LeaderExclusion
            | PropertyName::HolderOwnsKey
            | PropertyName::ElectedWithKey
            | PropertyName::NoEarlyPass
            | PropertyName::FifoOrder
            | PropertyName::NoEarlyLeave
            | PropertyName::RwExclusion
            | PropertyName::ReadersShare
            | PropertyName::PermitsBound
            | PropertyName::ReentryImmediate
            | PropertyName::NoLostItem
            | PropertyName::NoDuplicateItem
            | PropertyName::HolderWritesAccepted
            | PropertyName::Progress
            | PropertyName::FollowersAgree
            | PropertyName::LeaderElected
            | PropertyName::AllPass
            | PropertyName::QueueDrains
            | PropertyName::ObservedLeaderCurrent => {
                self.own.get().holds(self.seen(), p).unwrap_or(true)
            }
            // The simulator's engine judges it, never the monitors.
            PropertyName::FaultFreeSessionLoss => true,
        }
    }
}

/// Hashes the history only: who believes now follows from the clients'
/// states, and the resource order's place from the resource's log and the
/// acquisitions, so hashing them again would only cost the checker time.
impl std::hash::Hash for Monitors {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.acquisitions.hash(h);
        self.widest_wakeup.hash(h);
        self.own.hash(h);
    }
}

/// The applications' marks, hashed as they were when they were fields of
/// one struct, in its order, an absent one as its default: fingerprints
/// decide which representative symmetry keeps, and so which counterexample
/// is found, and the tests pin both.
impl std::hash::Hash for Own {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let mut lock = &LockMonitor::default();
        let (mut ledger, mut left_early, mut exceeded) = (None, false, false);
        let mut named_stale = false;
        match self {
            Own::Lock(m) => lock = m,
            Own::Election(m) => named_stale = m.named_stale,
            Own::Barrier(m) => left_early = m.left_early,
            Own::Queue(m) => ledger = Some(m),
            Own::SharedLock(m) => exceeded = m.exceeded,
            Own::Semaphore(m) => exceeded = m.exceeded,
        }
        lock.holder_fenced.hash(h);
        Ledger::hash_marks(ledger, h);
        left_early.hash(h);
        // Hashed only when set, so that states without them hash as they
        // did before the marks existed.
        if lock.reentry_delayed {
            true.hash(h);
        }
        if exceeded {
            2u8.hash(h);
        }
        if named_stale {
            3u8.hash(h);
        }
    }
}

impl Relabel for Monitors {
    fn relabel(&mut self, p: &Perm) {
        self.acquisitions.relabel(p);
        for (c, _) in &mut self.believers {
            c.relabel(p);
        }
        if let Own::Queue(ledger) = &mut self.own {
            ledger.relabel(p);
        }
        // Believers are kept in the order they came to believe, which names
        // no client; nothing to re-sort.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::Kind;

    /// Every `always` and `sometimes` property an application lists is
    /// judged by something: a shared rule under its name, the herd, the
    /// hand-off, or the application's own monitor. A property nothing
    /// judges would read "holds" for ever.
    #[test]
    fn every_listed_property_has_a_judge() {
        for app in App::ALL {
            let monitors = Monitors::new(app, 1);
            let rules = app.spec().rules;
            // Re-entries are a lock's alone, observers an election's (the
            // configuration refuses them elsewhere).
            for p in PropertyName::judging(app, app == App::Lock, app == App::Election) {
                if p.kind() == Kind::Progress {
                    continue;
                }
                let shared = [rules.exclusion, rules.owns_key, rules.resource].contains(&Some(p))
                    || (p == PropertyName::HerdBound && rules.herd != Herd::Unbounded)
                    || p == PropertyName::HandOff;
                let own = monitors.own.get().holds(monitors.seen(), p).is_some();
                assert!(
                    shared != own,
                    "{app}: {p} judged by the shared rules {shared}, by its own {own}"
                );
            }
        }
    }

    /// The shared rules' names and the herd are among the application's
    /// properties: a rule that reports under a name the application does
    /// not list would be dropped silently.
    #[test]
    fn the_shared_rules_report_under_listed_names() {
        for app in App::ALL {
            let spec = app.spec();
            let listed = |p: PropertyName| spec.properties.contains(&p);
            for rule in [
                spec.rules.exclusion,
                spec.rules.owns_key,
                spec.rules.resource,
            ] {
                assert!(rule.is_none_or(listed), "{app}: {rule:?}");
            }
            assert_eq!(
                spec.rules.herd != Herd::Unbounded,
                listed(PropertyName::HerdBound),
                "{app}"
            );
            for &p in spec.properties {
                assert!(p.app().is_none_or(|a| a == app), "{app} lists {p}");
            }
        }
    }
}
