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

use super::Step;
use crate::ids::{Child, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkEvent};
use serde::{Deserialize, Serialize};

/// Our node and its czxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Mine {
    pub node: Child,
    pub czxid: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum State {
    Creating,
    /// `get_children(watch)` in flight.
    Listing(Mine),
    /// Waiting for any change under `/lock`.
    Waiting(Mine),
    Holding(Mine),
}

fn list() -> Request {
    Request::GetChildren {
        path: ZPath::Lock,
        watch: true,
    }
}

pub fn acquire() -> (State, Request) {
    let create = Request::Create {
        path: ZPath::Child(Child { guid: None, seq: 0 }),
        ephemeral: true,
        sequential: true,
    };
    (State::Creating, create)
}

pub fn on_reply(st: &mut State, reply: &Reply) -> Step {
    match (*st, reply) {
        (
            State::Creating,
            Reply::Created {
                path: ZPath::Child(node),
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

pub fn on_event(st: &mut State, ev: &WatchEvent) -> Step {
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

pub fn release(st: &State) -> Option<Request> {
    match st {
        State::Holding(mine) => Some(Request::Delete {
            path: ZPath::Child(mine.node),
        }),
        _ => None,
    }
}
