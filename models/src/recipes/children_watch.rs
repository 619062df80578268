//! children-watch: the naive anti-pattern, for contrast.
//!
//! 1. `create(/lock/lock-, ephemeral+sequential)`.
//! 2. `get_children(/lock, watch)`.
//! 3. If our node has the lowest sequence, hold; the token is its czxid.
//! 4. Else wait for the child watch to fire, then go to 2.
//! 5. Release: `delete(our node)`.
//!
//! Every change under `/lock` wakes every waiter — and the holder too, whose
//! own child watch (set by the listing that told it it was lowest) fires at
//! its own delete.

use super::names::{member, new_member, LOCK};
use super::Registered;
use crate::ids::Data;
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkEvent};
use crate::recipe::{Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "children-watch",
    aliases: &[],
    summary: "the anti-pattern: every waiter watches all of /lock's children",
    variants: &[],
    build: |_| RecipeRef::new(ChildrenWatch),
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChildrenWatch;

/// Our node and its czxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mine {
    pub node: Child,
    pub czxid: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Creating,
    /// `get_children(watch)` in flight.
    Listing(Mine),
    /// Waiting for any change under `/lock`.
    Waiting(Mine),
    Holding(Mine),
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Listing(m) | State::Waiting(m) | State::Holding(m) => m.node.relabel(p),
            State::Creating => {}
        }
    }
}

impl Recipe for ChildrenWatch {
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
        acquire()
    }

    fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        on_reply(st, reply)
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        on_event(st, event)
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        release(st)
    }

    /// Every waiter, and the holder's own child watch: `n - k + 1`.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(n - k + 1)
    }
}

fn list() -> Request {
    Request::GetChildren {
        path: LOCK,
        watch: true,
    }
}

fn acquire() -> (State, Request) {
    let create = Request::Create {
        path: new_member(None),
        ephemeral: true,
        sequential: true,
        data: Data::Empty,
    };
    (State::Creating, create)
}

fn on_reply(st: &mut State, reply: &Reply) -> Step {
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
        (State::Listing(mine), Reply::Children(children)) => {
            // The children come in sequence order.
            let at = children.partition_point(|c| c.seq < mine.node.seq);
            if children.get(at).map(|c| c.seq) != Some(mine.node.seq) {
                return Step::SessionLost; // our node is gone
            }
            if at == 0 {
                *st = State::Holding(mine);
                Step::Acquired { token: mine.czxid }
            } else {
                *st = State::Waiting(mine);
                Step::Wait
            }
        }
        _ => Step::Unexpected,
    }
}

fn on_event(st: &mut State, ev: &WatchEvent) -> Step {
    match (*st, ev) {
        (
            State::Waiting(mine),
            WatchEvent::Zk {
                kind: ZkEvent::NodeChildrenChanged,
                ..
            },
        ) => {
            *st = State::Listing(mine);
            Step::Send(list())
        }
        _ => Step::Wait,
    }
}

fn release(st: &State) -> Option<Request> {
    match st {
        State::Holding(mine) => Some(Request::Delete {
            path: member(mine.node),
            version: None,
        }),
        State::Creating | State::Listing(_) | State::Waiting(_) => None,
    }
}
