//! unfair-create: the "seed articles" lock and ZooKeeper's non-fair leader
//! election.
//!
//! 1. `create(/lock, ephemeral)`. Success: hold; the token is its czxid.
//! 2. NodeExists: `exists(/lock, watch)`. If it is already gone, go to 1 at once;
//!    else wait for the watch event, then go to 1.
//! 3. Release: `delete(/lock)`.
//!
//! Every waiter watches the same node, so every release wakes every waiter:
//! the herd.

use super::Step;
use crate::ids::ZPath;
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum State {
    /// `create(/lock)` in flight.
    Creating,
    /// `exists(/lock, watch)` in flight.
    Checking,
    /// Waiting for `/lock` to be deleted.
    Waiting,
    Holding,
}

fn create() -> Request {
    Request::Create {
        path: ZPath::Lock,
        ephemeral: true,
        sequential: false,
    }
}

pub fn acquire() -> (State, Request) {
    (State::Creating, create())
}

pub fn on_reply(st: &mut State, reply: &Reply) -> Step {
    match (*st, reply) {
        (State::Creating, Reply::Created { czxid, .. }) => {
            *st = State::Holding;
            Step::Acquired { token: *czxid }
        }
        (State::Creating, Reply::Error(ZkError::NodeExists)) => {
            *st = State::Checking;
            Step::Send(Request::Exists {
                path: ZPath::Lock,
                watch: true,
            })
        }
        (State::Checking, Reply::Stat(Some(_))) => {
            *st = State::Waiting;
            Step::Wait
        }
        // Released between our create and our exists: try again at once.
        (State::Checking, Reply::Stat(None)) => {
            *st = State::Creating;
            Step::Send(create())
        }
        _ => Step::Unexpected,
    }
}

pub fn on_event(st: &mut State, ev: &WatchEvent) -> Step {
    match (*st, ev) {
        (
            State::Waiting,
            WatchEvent::Zk {
                kind: ZkEvent::NodeDeleted,
                path: ZPath::Lock,
            },
        ) => {
            *st = State::Creating;
            Step::Send(create())
        }
        // An exists watch set on an absent node fires when anyone (even we)
        // creates it; nothing to do.
        _ => Step::Wait,
    }
}

pub fn release() -> Request {
    Request::Delete { path: ZPath::Lock }
}
