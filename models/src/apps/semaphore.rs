//! The semaphore: `permits` leases; acquire one, hold it (no writes: up
//! to `permits` hold at once), release it.

use super::{worker, Herd, HoldWords, Place, Rules, Spec};
use crate::properties::{Breach, OwnMonitor, PropertyName as P, Seen};
use crate::recipe::RecipeRef;

pub const SPEC: Spec = Spec {
    name: "semaphore",
    a_name: "a semaphore",
    taken: "leases taken",
    holders: "who believes it holds a lease",
    holders_write: false,
    hold: HoldWords {
        verb: "holds a lease",
        token: Some("token"),
        produces: None,
    },
    properties: &[P::PermitsBound, P::HerdBound, P::HandOff, P::Progress],
    rules: Rules {
        // Its own bound on holders; lease holders are not first in line
        // and write nothing.
        exclusion: None,
        owns_key: None,
        resource: None,
        place: Place::Granted,
        herd: Herd::ReleaseSteps,
    },
    role: worker,
    hold_ends_round: false,
    judges_leaving: false,
};

/// A semaphore's own hook.
pub trait SemaphoreRecipe {
    /// The same recipe with `k` permits (Curator's `maxLeases`, kazoo's
    /// `max_leases`).
    fn for_permits(&self, k: u16) -> RecipeRef;

    /// The most permits the recipe can keep track of (a Consul semaphore's
    /// `.lock` value lists at most a few holders); by default no bound.
    fn max_permits(&self) -> u16 {
        u16::MAX
    }
}

/// `permits_bound`: at most `permits` believers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermitsMonitor {
    /// How many may hold at once.
    pub(crate) permits: u16,
    /// Reported (once); set only on a violating path.
    pub(crate) exceeded: bool,
}

impl PermitsMonitor {
    fn exceeded_by(&self, seen: Seen) -> bool {
        seen.believers.len() > usize::from(self.permits)
    }
}

impl OwnMonitor for PermitsMonitor {
    fn acquired(&mut self, seen: Seen, breaches: &mut Vec<Breach>) {
        if !self.exceeded && self.exceeded_by(seen) {
            self.exceeded = true;
            breaches.push(Breach::by_believers(P::PermitsBound, seen));
        }
    }

    fn holds(&self, seen: Seen, p: P) -> Option<bool> {
        (p == P::PermitsBound).then(|| !self.exceeded_by(seen))
    }
}
