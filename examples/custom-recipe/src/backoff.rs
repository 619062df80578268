//! polling-backoff: a second recipe written outside lockstep, one that
//! keeps time. It watches nothing: a waiter polls the lock's children and
//! sleeps between polls, doubling its sleep each time (exponential
//! back-off), as the retry loops of lock libraries without watches do.
//!
//! It names its own nodes: pollers queue under `/backoff` as
//! `/backoff/_c_<guid>-poller-<seq>`, each node holding its owner's
//! session id as data (who holds is readable in the store, as Curator
//! writes a lock node's owner into it).
//!
//! 1. `create(/backoff/<guid>-poller-, ephemeral+sequential, data: session)`.
//! 2. `get_children(/backoff)`, no watch; only `poller-` nodes count.
//! 3. Our node is the lowest: hold; the token is its sequence number (the
//!    store hands them out in creation order, and the lock goes in that
//!    order, so a later holder has a larger token).
//! 4. Else sleep `BASE_SLEEP × 2^k` (k = polls so far, at most
//!    [`MAX_DOUBLINGS`]) and go to 2.
//! 5. Release: `delete(our node)`.
//!
//! A create whose reply was lost is looked for by its guid (a listing)
//! instead of being sent again, which would leave an orphan node ahead of
//! us. It can be acquired with a timeout: a waiter that gives up deletes
//! its node, so no one polls behind it for ever.
//!
//! What it costs against a watch: no herd (a release notifies nobody), but
//! a waiter's polls are store requests, and a release is noticed only at
//! the next poll — up to a whole sleep later.

use models::ids::{Child, Data, Name, SessionId, ZPath};
use models::msg::{Reply, Request, WatchEvent};
use models::name;
use models::recipe::{Application, Face, Line, LockRecipe, Recipe, RecipeRef, Setup, Step};
use models::relabel::{Perm, Relabel};
use std::time::Duration;

/// The recipe's name, as the example prints it (not in lockstep's
/// registry).
pub const NAME: &str = "polling-backoff";

/// The first sleep between two polls.
pub const BASE_SLEEP: Duration = Duration::from_millis(5);

/// How often a sleep doubles: the longest is `BASE_SLEEP × 2^MAX_DOUBLINGS`.
/// Bounded, so that the model checker's states are too.
pub const MAX_DOUBLINGS: u8 = 3;

/// The directory the pollers queue in, made before the run.
pub const DIR: Name = name!("/backoff");
/// A poller's node name, before its guid and sequence number.
pub const PREFIX: Name = name!("poller-");

/// A poller's node in [`DIR`].
pub fn node_path(node: Child) -> ZPath {
    ZPath::Node {
        dir: DIR,
        child: node,
    }
}

/// The recipe. Stateless: everything an acquisition needs is in [`State`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PollingBackoff;

/// One acquisition and the hold that follows. `polls` is how often the
/// sleep has doubled; the node's guid names a client, so symmetry
/// reduction relabels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The create is in flight.
    Creating,
    /// After a lost create reply: listing to find our node by its guid.
    Finding,
    /// `get_children` in flight.
    Polling {
        node: Child,
        polls: u8,
    },
    /// Asleep between two polls.
    Sleeping {
        node: Child,
        polls: u8,
    },
    Holding {
        node: Child,
    },
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Polling { node, .. }
            | State::Sleeping { node, .. }
            | State::Holding { node } => node.relabel(p),
            State::Creating | State::Finding => {}
        }
    }
}

fn create(session: SessionId) -> Request {
    Request::Create {
        path: node_path(Child::named(PREFIX, Some(session))),
        ephemeral: true,
        sequential: true,
        data: Data::Session(session),
    }
}

fn list() -> Request {
    Request::GetChildren {
        path: ZPath::Fixed(DIR),
        watch: false,
    }
}

/// The sleep after `polls` polls that did not win.
pub fn sleep_after(polls: u8) -> Duration {
    BASE_SLEEP * (1 << polls.min(MAX_DOUBLINGS))
}

/// Step 3 or 4 on a fresh listing (in sequence order).
fn decide(st: &mut State, node: Child, polls: u8, children: &[Child]) -> Step {
    // The store numbered our node; a node without a number is not ours.
    let Some(seq) = node.seq else {
        return Step::Unexpected;
    };
    let mut pollers = children.iter().filter(|c| c.prefix == PREFIX);
    match pollers.next() {
        // Our node is gone: only our session's end deletes it.
        _ if !children.contains(&node) => Step::SessionLost,
        Some(first) if *first == node => {
            *st = State::Holding { node };
            Step::Acquired {
                token: u64::from(seq),
            }
        }
        Some(_) | None => {
            *st = State::Sleeping {
                node,
                polls: (polls + 1).min(MAX_DOUBLINGS),
            };
            Step::Sleep {
                after: sleep_after(polls),
            }
        }
    }
}

impl Recipe for PollingBackoff {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Lock(self)
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        // The line the store's ghost marks watch is our directory.
        Setup {
            dirs: vec![ZPath::Fixed(DIR)],
            line: Line {
                path: ZPath::Fixed(DIR),
                keys: DIR,
            },
            ..Setup::bare()
        }
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        (State::Creating, create(session))
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (
                State::Creating,
                Reply::Created {
                    path: ZPath::Node { child: node, .. },
                    ..
                },
            ) => {
                *st = State::Polling {
                    node: *node,
                    polls: 0,
                };
                Step::Send(list())
            }
            (State::Finding, Reply::Children(children)) => {
                match children.iter().find(|c| c.guid == Some(session)) {
                    Some(&node) => decide(st, node, 0, children),
                    None => {
                        *st = State::Creating;
                        Step::Send(create(session))
                    }
                }
            }
            (State::Polling { node, polls }, Reply::Children(children)) => {
                decide(st, node, polls, children)
            }
            _ => Step::Unexpected,
        }
    }

    /// It sets no watch: no event concerns it.
    fn on_event(&self, _: &mut State, _: &WatchEvent) -> Step {
        Step::Wait
    }

    /// The sleep is over: poll again.
    fn on_wake(&self, _: SessionId, st: &mut State) -> Step {
        match *st {
            State::Sleeping { node, polls } => {
                *st = State::Polling { node, polls };
                Step::Send(list())
            }
            State::Creating | State::Finding | State::Polling { .. } | State::Holding { .. } => {
                Step::Unexpected
            }
        }
    }

    fn longest_sleep(&self) -> Duration {
        sleep_after(MAX_DOUBLINGS)
    }

    /// A lost create reply: find our node by its guid rather than create a
    /// second one.
    fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
        match (*st, lost) {
            (State::Creating, Request::Create { .. }) => {
                *st = State::Finding;
                list()
            }
            _ => lost.clone(),
        }
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding { node } => Some(Request::Delete {
                path: node_path(*node),
                version: None,
            }),
            State::Creating | State::Finding | State::Polling { .. } | State::Sleeping { .. } => {
                None
            }
        }
    }

    /// No watches: a release wakes nobody.
    fn herd_closed_form(&self, _: u32, _: u32) -> Option<u32> {
        Some(0)
    }
}

/// It can be acquired with a timeout.
impl LockRecipe<State> for PollingBackoff {
    fn withdraws(&self) -> bool {
        true
    }
    /// Given up: our node goes, so that no one polls behind it.
    fn withdraw(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Polling { node, .. }
            | State::Sleeping { node, .. }
            | State::Holding { node } => Some(Request::Delete {
                path: node_path(*node),
                version: None,
            }),
            State::Creating | State::Finding => None,
        }
    }
}

/// The recipe, as lockstep's engines hold it.
pub fn recipe() -> RecipeRef {
    RecipeRef::new(PollingBackoff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> SessionId {
        SessionId {
            client: 1,
            incarnation: 0,
            grant: 0,
        }
    }

    fn node(client: u16, seq: u32) -> Child {
        Child {
            seq: Some(seq),
            prefix: PREFIX,
            guid: Some(SessionId {
                client,
                incarnation: 0,
                grant: 0,
            }),
        }
    }

    #[test]
    fn a_waiter_sleeps_longer_after_each_poll_up_to_the_cap() {
        let mine = node(1, 5);
        let mut st = State::Polling {
            node: mine,
            polls: 0,
        };
        let listing = Reply::Children(vec![node(0, 4), mine].into());
        let mut sleeps = Vec::new();
        for _ in 0..6 {
            match PollingBackoff.on_reply(me(), &mut st, &listing) {
                Step::Sleep { after } => sleeps.push(after.as_millis()),
                other => panic!("expected a sleep, got {other:?}"),
            }
            assert_eq!(PollingBackoff.on_wake(me(), &mut st), Step::Send(list()));
        }
        assert_eq!(sleeps, [5, 10, 20, 40, 40, 40]);
        assert_eq!(PollingBackoff.longest_sleep(), Duration::from_millis(40));
    }

    #[test]
    fn the_lowest_node_holds_with_its_sequence_as_token() {
        let mine = node(1, 5);
        let mut st = State::Polling {
            node: mine,
            polls: 2,
        };
        let step = PollingBackoff.on_reply(me(), &mut st, &Reply::Children(vec![mine].into()));
        assert_eq!(step, Step::Acquired { token: 5 });
        assert_eq!(
            PollingBackoff.release(me(), &st),
            Some(Request::Delete {
                path: node_path(mine),
                version: None,
            })
        );
    }

    #[test]
    fn a_lost_create_is_found_by_its_guid() {
        let (mut st, req) = PollingBackoff.acquire(me());
        assert_eq!(PollingBackoff.on_lost_reply(&mut st, &req), list());
        let mine = node(1, 3);
        let step = PollingBackoff.on_reply(
            me(),
            &mut st,
            &Reply::Children(vec![node(0, 2), mine].into()),
        );
        assert!(matches!(step, Step::Sleep { .. }), "{step:?}");
        assert_eq!(
            PollingBackoff.withdraw(me(), &st),
            Some(Request::Delete {
                path: node_path(mine),
                version: None,
            })
        );
    }
}
