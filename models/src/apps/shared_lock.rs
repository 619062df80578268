//! The shared (read-write) lock: the first `writers` clients of a run take
//! it to write — alone, writing to the guarded resource as a lock holder
//! does — the others to read, beside each other, writing nothing.

use super::{Herd, HoldWords, Place, Role, Roles, Rules, Spec};
use crate::ids::{ClientIdx, SessionId};
use crate::msg::Request;
use crate::properties::{Breach, OwnMonitor, PropertyName as P, Seen};

pub const SPEC: Spec = Spec {
    name: "shared lock",
    a_name: "a shared lock",
    taken: "acquisitions",
    holders: "who believes it holds the lock (to read or to write)",
    holders_write: true,
    hold: HoldWords {
        verb: "holds the lock",
        token: Some("token"),
        produces: None,
    },
    // A reader holds without being first in line, so the owns-key rule
    // does not apply; readers wake together behind a writer by design (the
    // recipes page says so): the herd sweep measures it, no property
    // bounds it.
    properties: &[
        P::RwExclusion,
        P::ReadersShare,
        P::ResourceExclusion,
        P::Progress,
    ],
    rules: Rules {
        exclusion: None,
        owns_key: None,
        resource: Some(P::ResourceExclusion),
        place: Place::Granted,
        herd: Herd::Unbounded,
    },
    role,
    hold_ends_round: false,
    judges_leaving: false,
};

fn role(roles: &Roles, client: ClientIdx) -> Role {
    if client < roles.writers {
        Role::Writer
    } else {
        Role::Reader
    }
}

/// A shared lock's writers in the baseline herd of `n` clients: the first
/// half (at least one, and fewer than `n`, so that someone reads).
pub fn herd_writers(n: u32) -> u32 {
    (n / 2).clamp(1, n.saturating_sub(1).max(1))
}

/// A shared lock's own hook: its readers' acquire (its writers' is
/// [`crate::recipe::Recipe::acquire`]).
pub trait SharedLockRecipe<S> {
    /// Starts a reader's acquisition: the state and the first request.
    fn acquire_shared(&self, session: SessionId) -> (S, Request);
}

/// `rw_exclusion` and `readers_share`, read off the believers and who
/// writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RwMonitor {
    /// Clients below this index write, the others read.
    pub(crate) writers: ClientIdx,
    /// `rw_exclusion` reported (once); set only on a violating path.
    pub(crate) exceeded: bool,
}

impl RwMonitor {
    fn writes(&self, client: ClientIdx) -> bool {
        client < self.writers
    }

    /// A writer believes beside someone.
    fn writer_not_alone(&self, seen: Seen) -> bool {
        seen.believers.len() >= 2 && seen.believers.iter().any(|(c, _)| self.writes(*c))
    }
}

impl OwnMonitor for RwMonitor {
    fn acquired(&mut self, seen: Seen, breaches: &mut Vec<Breach>) {
        if !self.exceeded && self.writer_not_alone(seen) {
            self.exceeded = true;
            breaches.push(Breach::by_believers(P::RwExclusion, seen));
        }
    }

    fn holds(&self, seen: Seen, p: P) -> Option<bool> {
        if p == P::RwExclusion {
            Some(!self.writer_not_alone(seen))
        } else if p == P::ReadersShare {
            let readers = seen.believers.iter().filter(|(c, _)| !self.writes(*c));
            Some(readers.count() >= 2)
        } else {
            None
        }
    }
}
