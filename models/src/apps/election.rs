//! The election: campaign, lead (writes with the epoch as token), resign;
//! candidates still campaigning are followers and observe who leads. Its
//! rules are the lock's, under its own names; its progress goals
//! (`leader_elected`, `followers_agree`) are in [`crate::model::goals`].

use super::{writer, Herd, HoldWords, Place, Rules, Spec};
use crate::ids::SessionId;
use crate::properties::{OwnMonitor, PropertyName as P, Seen};

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
    role: writer,
    hold_ends_round: false,
    judges_leaving: false,
};

/// An election's own hook.
pub trait ElectionRecipe<S> {
    /// The leader as the store's answers so far have shown it to this
    /// candidate (the `ephemeralOwner` of `/leader`, the owner of the
    /// lowest child); `None` when they have not named one.
    fn leader_seen(&self, st: &S) -> Option<SessionId>;
}

/// The election has no monitor of its own: its `always` rules are the
/// shared ones, its progress goals the checker's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ElectionMonitor;

impl OwnMonitor for ElectionMonitor {
    fn holds(&self, _: Seen, _: P) -> Option<bool> {
        None
    }
}
