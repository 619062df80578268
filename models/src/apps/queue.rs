//! The queue: the first `producers` clients of a run enqueue numbered
//! items, one a round, at their own pace; the others take items and
//! process them, one a round (the hold), for as long as there are any.

use super::{Herd, HoldWords, Place, Role, Roles, Rules, Spec};
use crate::client::Client;
use crate::ids::{ClientIdx, SessionId};
use crate::msg::Request;
use crate::properties::{Breach, Observation, OwnMonitor, PropertyName as P, Seen};
use crate::relabel::{Perm, Relabel};
use std::hash::{Hash, Hasher};

pub const SPEC: Spec = Spec {
    name: "queue",
    a_name: "a queue",
    taken: "items taken",
    holders: "who is processing an item",
    holders_write: false,
    hold: HoldWords {
        verb: "processes",
        token: Some("item"),
        produces: Some("enqueues"),
    },
    properties: &[
        P::NoLostItem,
        P::NoDuplicateItem,
        P::FifoOrder,
        P::QueueDrains,
    ],
    rules: Rules {
        exclusion: None,
        // The queue's mark: the element taken was the head.
        owns_key: Some(P::FifoOrder),
        resource: None,
        place: Place::Granted,
        // Its releases (the lock-safe deletes) are no hand-offs.
        herd: Herd::Unbounded,
    },
    role,
    // A consumer that took its item has done its round: it does not take
    // it again in a new session.
    hold_ends_round: true,
    judges_leaving: false,
};

fn role(roles: &Roles, client: ClientIdx) -> Role {
    if client < roles.producers {
        Role::Producer
    } else {
        Role::Consumer
    }
}

/// How many items the queue's herd baseline enqueues.
pub const HERD_QUEUE_ITEMS: u32 = 3;

/// A queue's own hook: a producer's round (consumers start with
/// [`crate::recipe::Recipe::acquire`]).
pub trait QueueRecipe<S> {
    /// Enqueues `item` (the application's data): the state and the first
    /// request.
    fn enqueue(&self, session: SessionId, item: u64) -> (S, Request);
}

impl Client {
    /// The item a producer enqueues in its round `round` (0-based): items
    /// are numbered from 1, producer by producer.
    pub fn item(&self, producer: ClientIdx, round: u8) -> u64 {
        u64::from(producer) * u64::from(self.rounds) + u64::from(round) + 1
    }
}

/// `no_lost_item` and `no_duplicate_item`: who owes the processing of
/// which item, and the sticky marks of a loss and a duplicate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Clients below this index produce (their acquisitions are enqueues,
    /// never seen as holds), the others consume (theirs are takes).
    producers: ClientIdx,
    /// Items a consumer's delete removed that it has not processed yet.
    owed: Vec<(ClientIdx, u64)>,
    item_lost: bool,
    item_duplicated: bool,
}

impl Ledger {
    pub(crate) fn new(producers: ClientIdx) -> Self {
        Ledger {
            producers,
            ..Ledger::default()
        }
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.owed.shrink_to_fit();
    }

    /// Hashes the ledger's marks (or, with none, what an empty one hashes
    /// as): the history only, as [`crate::properties::Monitors`] does.
    pub(crate) fn hash_marks<H: Hasher>(ledger: Option<&Ledger>, h: &mut H) {
        match ledger {
            Some(l) => {
                l.owed.hash(h);
                l.item_lost.hash(h);
                l.item_duplicated.hash(h);
            }
            None => {
                <[(ClientIdx, u64)]>::hash(&[], h);
                false.hash(h);
                false.hash(h);
            }
        }
    }

    /// A consumer took `token`'s item (the recipe handed it over: the
    /// application processes it now).
    fn took(&mut self, seen: Seen, client: ClientIdx, token: u64, breaches: &mut Vec<Breach>) {
        let mut takers: Vec<ClientIdx> = seen
            .acquisitions
            .iter()
            .filter(|b| b.token == token)
            .map(|b| b.client)
            .collect();
        if !self.item_duplicated && !takers.is_empty() {
            self.item_duplicated = true;
            takers.push(client);
            takers.sort_unstable();
            takers.dedup();
            breaches.push(Breach {
                property: P::NoDuplicateItem,
                clients: takers,
            });
        }
        self.owed.retain(|&(c, item)| (c, item) != (client, token));
        // It takes another item while it owes one: that one is lost.
        self.forfeit(client, breaches);
    }

    /// `client` will process nothing it owes any more.
    fn forfeit(&mut self, client: ClientIdx, breaches: &mut Vec<Breach>) {
        let owes = self.owed.iter().any(|&(c, _)| c == client);
        if owes {
            self.owed.retain(|&(c, _)| c != client);
            if !self.item_lost {
                self.item_lost = true;
                breaches.push(Breach {
                    property: P::NoLostItem,
                    clients: vec![client],
                });
            }
        }
    }
}

impl OwnMonitor for Ledger {
    fn heeds(&self, obs: &Observation) -> bool {
        // What an idle consumer owes, it will not process now.
        matches!(obs, Observation::Idle { .. })
    }

    fn observe(&mut self, seen: Seen, obs: &Observation, breaches: &mut Vec<Breach>) {
        if let Observation::Acquired(a) = *obs {
            // (A producer's enqueue is no hold: it releases in the step it
            // is told, so the monitors never see it.)
            if a.client >= self.producers {
                self.took(seen, a.client, a.token, breaches);
            }
        } else if let Observation::Crashed { client } | Observation::Idle { client } = *obs {
            self.forfeit(client, breaches);
        } else if let Observation::Dequeued { item, by } = *obs {
            if by < self.producers {
                // A producer never processes: an element that left the
                // queue by its hand (its ephemeral gone with its session)
                // is lost.
                self.owed.push((by, item));
                self.forfeit(by, breaches);
            } else if !processed(seen, by, item) {
                self.owed.push((by, item));
            }
        }
    }

    fn holds(&self, _: Seen, p: P) -> Option<bool> {
        if p == P::NoLostItem {
            Some(!self.item_lost)
        } else if p == P::NoDuplicateItem {
            Some(!self.item_duplicated)
        } else {
            None
        }
    }

    fn at_end(&mut self, breaches: &mut Vec<Breach>) {
        let owing: Vec<ClientIdx> = self.owed.iter().map(|&(c, _)| c).collect();
        for c in owing {
            self.forfeit(c, breaches);
        }
    }
}

/// Whether `item` was processed already by the consumer whose delete
/// removed it (a lock-safe consumer deletes after processing): nothing is
/// owed then.
fn processed(seen: Seen, by: ClientIdx, item: u64) -> bool {
    seen.acquisitions
        .iter()
        .rev()
        .find(|a| a.client == by)
        .is_some_and(|a| a.token == item)
}

impl Relabel for Ledger {
    fn relabel(&mut self, p: &Perm) {
        for (c, _) in &mut self.owed {
            c.relabel(p);
        }
    }
}
