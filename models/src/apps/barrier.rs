//! The barrier: enter, wait for the whole group (every client of the run),
//! pass, work (no writes) and, for a double barrier, leave. Passed once a
//! run.

use super::{worker, Herd, HoldWords, Place, Rules, Spec};
use crate::properties::{Breach, Observation, OwnMonitor, PropertyName as P, Seen};
use crate::recipe::RecipeRef;

pub const SPEC: Spec = Spec {
    name: "barrier",
    a_name: "a barrier",
    taken: "passes",
    holders: "who has passed the barrier",
    holders_write: false,
    hold: HoldWords {
        verb: "has passed",
        token: None,
        produces: None,
    },
    properties: &[P::NoEarlyPass, P::NoEarlyLeave, P::HerdBound, P::AllPass],
    rules: Rules {
        // Every member passes at once: no exclusion, no resource.
        exclusion: None,
        // The barrier's mark: every member's node was there.
        owns_key: Some(P::NoEarlyPass),
        resource: None,
        place: Place::Granted,
        // A wake-up that can proceed is no herd (the recipes page's point).
        herd: Herd::FutileWakeups,
    },
    role: worker,
    // A member that passed does not enter again in a new session.
    hold_ends_round: true,
    judges_leaving: true,
};

/// A barrier's own hook.
pub trait BarrierRecipe {
    /// The same recipe for a group of `n` members (as ZooKeeper's
    /// `Barrier(address, root, size)` is built with its size).
    fn for_group(&self, n: u16) -> RecipeRef;
}

/// `no_early_leave`: a member left before every member had (sticky, set
/// only on a violating path).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaveMonitor {
    pub(crate) left_early: bool,
}

impl OwnMonitor for LeaveMonitor {
    fn heeds(&self, obs: &Observation) -> bool {
        // A member that left after everyone did breaks nothing.
        matches!(
            obs,
            Observation::Left {
                all_left: false,
                ..
            }
        )
    }

    fn observe(&mut self, _: Seen, obs: &Observation, breaches: &mut Vec<Breach>) {
        if let Observation::Left { client, .. } = *obs {
            if !self.left_early {
                self.left_early = true;
                breaches.push(Breach {
                    property: P::NoEarlyLeave,
                    clients: vec![client],
                });
            }
        }
    }

    fn holds(&self, _: Seen, p: P) -> Option<bool> {
        (p == P::NoEarlyLeave).then_some(!self.left_early)
    }
}
