//! lowest-watch: the lock of a widely read ZooKeeper article, in which every
//! waiter watches the *lowest* node rather than its predecessor.
//!
//! 1. `create(/lock/lock-, ephemeral+sequential)`.
//! 2. `get_children(/lock)` without a watch, sorted by sequence.
//! 3. If our node is `nodes[0]`, hold; the token is its czxid.
//! 4. Else `waitForLock(nodes[0])`: `exists(nodes[0], watch)`. If it is
//!    already gone, go to 2; else wait for its deletion, then go to 2.
//! 5. Release: `delete(our node)`.
//!
//! It is safe (only the lowest node holds), but every waiter watches the
//! same node, so each release wakes every waiter: the `k`-th of `n`
//! releases delivers `n - k` notifications — the herd the predecessor watch
//! of the ZooKeeper recipe avoids.

use super::names::{member, new_member, LOCK};
use super::Registered;
use crate::ids::Data;
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkEvent};
use crate::recipe::{Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "lowest-watch",
    aliases: &[],
    summary: "a popular article's lock: ephemeral-sequential nodes, every waiter exists()-watches the lowest",
    variants: &[],
    build: |_| RecipeRef::new(LowestWatch),
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LowestWatch;

/// Our node and its czxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mine {
    pub node: Child,
    pub czxid: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The create is in flight.
    Creating,
    /// `get_children` in flight.
    Listing(Mine),
    /// `exists(lowest, watch)` in flight.
    Watching(Mine, Child),
    /// Waiting for the lowest node's deletion.
    Waiting(Mine, Child),
    Holding(Mine),
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Listing(m) | State::Holding(m) => m.node.relabel(p),
            State::Watching(m, lowest) | State::Waiting(m, lowest) => {
                m.node.relabel(p);
                lowest.relabel(p);
            }
            State::Creating => {}
        }
    }
}

fn create() -> Request {
    Request::Create {
        path: new_member(None),
        ephemeral: true,
        sequential: true,
        data: Data::Empty,
    }
}

fn list() -> Request {
    Request::GetChildren {
        path: LOCK,
        watch: false,
    }
}

/// Steps 3 and 4 on a fresh child list, which comes in sequence order.
fn decide(st: &mut State, mine: Mine, children: &[Child]) -> Step {
    // The children come in sequence order.
    let at = children.partition_point(|c| c.seq < mine.node.seq);
    if children.get(at).map(|c| c.seq) != Some(mine.node.seq) {
        return Step::SessionLost; // our node is gone
    }
    let lowest = children[0];
    if lowest.seq == mine.node.seq {
        *st = State::Holding(mine);
        return Step::Acquired { token: mine.czxid };
    }
    *st = State::Watching(mine, lowest);
    Step::Send(Request::Exists {
        path: member(lowest),
        watch: true,
    })
}

impl Recipe for LowestWatch {
    type State = State;

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::lock_dir()
    }

    fn acquire(&self, _: SessionId) -> (State, Request) {
        (State::Creating, create())
    }

    fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (
                State::Creating,
                Reply::Created {
                    path: ZPath::Node { child: node, .. },
                    czxid,
                },
            ) => {
                *st = State::Listing(Mine {
                    node: *node,
                    czxid: *czxid,
                });
                Step::Send(list())
            }
            (State::Listing(mine), Reply::Children(children)) => decide(st, mine, children),
            (State::Watching(mine, lowest), Reply::Stat(Some(_))) => {
                *st = State::Waiting(mine, lowest);
                Step::Wait
            }
            (State::Watching(mine, _), Reply::Stat(None)) => {
                *st = State::Listing(mine);
                Step::Send(list())
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            (
                State::Waiting(mine, lowest),
                WatchEvent::Zk {
                    kind: ZkEvent::NodeDeleted,
                    path,
                },
            ) if *path == member(lowest) => {
                *st = State::Listing(mine);
                Step::Send(list())
            }
            _ => Step::Wait,
        }
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding(mine) => Some(Request::Delete {
                path: member(mine.node),
                version: None,
            }),
            State::Creating | State::Listing(_) | State::Watching(..) | State::Waiting(..) => None,
        }
    }

    /// Every waiter watches the holder's node: `n - k` per release.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(n - k)
    }
}
