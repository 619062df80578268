//! The election: campaign, lead (writes with the epoch as token), resign;
//! candidates still campaigning are followers and observe who leads. Its
//! rules are the lock's, under its own names; its progress goals
//! (`leader_elected`, `followers_agree`) are in [`crate::model::goals`].

use super::{Herd, HoldWords, Place, Role, Roles, Rules, Spec};
use crate::ids::ClientIdx;
use crate::ids::SessionId;
use crate::msg::Request;
use crate::properties::{Breach, Observation, OwnMonitor, PropertyName as P, Seen};

pub const SPEC: Spec = Spec {
    name: "election",
    a_name: "an election",
    taken: "acquisitions",
    holders: "who believes it leads",
    holders_write: true,
    hold: HoldWords {
        verb: "leads",
        token: Some("term"),
        produces: None,
    },
    properties: &[
        P::SingleLeader,
        P::ElectedWithKey,
        P::LeaderExclusion,
        P::HerdBound,
        P::HandOff,
        P::LeaderElected,
        P::FollowersAgree,
    ],
    rules: Rules {
        exclusion: Some(P::SingleLeader),
        owns_key: Some(P::ElectedWithKey),
        resource: Some(P::LeaderExclusion),
        // A leader elected on no key (etcd's phantom) was decided on
        // nothing; the leaders' order is the order of their keys.
        place: Place::Token,
        herd: Herd::ReleaseSteps,
    },
    role: candidate_or_observer,
    hold_ends_round: false,
    judges_leaving: false,
};

/// Whether `client` observes when a run has `observers`: the first ones
/// do (the store's marks ask it too).
pub fn observes(observers: ClientIdx, client: ClientIdx) -> bool {
    client < observers
}

/// The first `observers` clients observe; the others campaign.
fn candidate_or_observer(roles: &Roles, client: ClientIdx) -> Role {
    if observes(roles.observers, client) {
        Role::Observer
    } else {
        Role::Writer
    }
}

/// An election's own hook.
pub trait ElectionRecipe<S> {
    /// The leader as the store's answers so far have shown it to this
    /// candidate (the `ephemeralOwner` of `/leader`, the owner of the
    /// lowest child); `None` when they have not named one.
    fn leader_seen(&self, st: &S) -> Option<SessionId>;

    /// An observer's start, where the library has one (etcd's
    /// `Election.Observe`): a client that does not campaign and follows who
    /// leads, its [`Self::leader_seen`] the last leader it reported. `None`
    /// where the library has no observer (the configuration refuses
    /// `observers` then).
    fn observe(&self, _session: SessionId) -> Option<(S, Request)> {
        None
    }

    /// An observer's last report: the leader and its term, where the
    /// library's report carries one (etcd: the key's create revision), so
    /// that a report of the same leader at a new term is a new report.
    fn report_seen(&self, st: &S) -> Option<(SessionId, u64)> {
        self.leader_seen(st).map(|leader| (leader, 0))
    }
}

/// The election's own monitor: `observed_leader_current`, a sticky mark
/// set only on a violating path. Its other `always` rules are the shared
/// ones, its progress goals the checker's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ElectionMonitor {
    /// An observer named a leader on a stale message.
    pub(crate) named_stale: bool,
}

impl OwnMonitor for ElectionMonitor {
    fn heeds(&self, obs: &Observation) -> bool {
        matches!(obs, Observation::NamedStale { .. })
    }

    fn observe(&mut self, _: Seen, obs: &Observation, breaches: &mut Vec<Breach>) {
        if let Observation::NamedStale { client } = *obs {
            if !self.named_stale {
                self.named_stale = true;
                breaches.push(Breach {
                    property: P::ObservedLeaderCurrent,
                    clients: vec![client],
                });
            }
        }
    }

    fn holds(&self, _: Seen, p: P) -> Option<bool> {
        (p == P::ObservedLeaderCurrent).then_some(!self.named_stale)
    }
}
