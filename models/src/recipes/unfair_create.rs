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

use super::names::LOCK;
use super::Registered;
use crate::ids::Data;
use crate::ids::SessionId;
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "unfair-create",
    aliases: &[],
    summary:
        "everyone creates one ephemeral /lock; losers exists()-watch it (the seed articles' lock)",
    variants: &[],
    build: |_| RecipeRef::new(UnfairCreate),
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct UnfairCreate;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `create(/lock)` in flight.
    Creating,
    /// `exists(/lock, watch)` in flight.
    Checking,
    /// Waiting for `/lock` to be deleted.
    Waiting,
    Holding,
}

impl Relabel for State {
    fn relabel(&mut self, _: &Perm) {
        match self {
            State::Creating | State::Checking | State::Waiting | State::Holding => {}
        }
    }
}

impl Recipe for UnfairCreate {
    type State = State;

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::bare()
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
        match st {
            State::Holding => Some(release()),
            State::Creating | State::Checking | State::Waiting => None,
        }
    }

    /// Every waiter watches `/lock`: the `k`-th release wakes the `n - k`
    /// clients still waiting.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(n - k)
    }
}

fn create() -> Request {
    Request::Create {
        path: LOCK,
        ephemeral: true,
        sequential: false,
        data: Data::Empty,
    }
}

fn acquire() -> (State, Request) {
    (State::Creating, create())
}

fn on_reply(st: &mut State, reply: &Reply) -> Step {
    match (*st, reply) {
        (State::Creating, Reply::Created { czxid, .. }) => {
            *st = State::Holding;
            Step::Acquired { token: *czxid }
        }
        (State::Creating, Reply::Error(ZkError::NodeExists)) => {
            *st = State::Checking;
            Step::Send(Request::Exists {
                path: LOCK,
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

fn on_event(st: &mut State, ev: &WatchEvent) -> Step {
    match (*st, ev) {
        (
            State::Waiting,
            WatchEvent::Zk {
                kind: ZkEvent::NodeDeleted,
                path,
            },
        ) if *path == LOCK => {
            *st = State::Creating;
            Step::Send(create())
        }
        // An exists watch set on an absent node fires when anyone (even we)
        // creates it; nothing to do.
        _ => Step::Wait,
    }
}

fn release() -> Request {
    Request::Delete {
        path: LOCK,
        version: None,
    }
}
