//! zk-unfair-election: ZooKeeper's non-fair leader election, as the seed
//! articles write it.
//!
//! Default (`exists`):
//! 1. `create(/leader, ephemeral)`. Success: lead; the epoch is its czxid.
//! 2. NodeExists: `exists(/leader, watch)`. There: follow its
//!    `ephemeralOwner` and wait for the watch; gone already: go to 1.
//! 3. NodeDeleted: go to 1.
//! 4. Resign: `delete(/leader)`.
//!
//! Variant `getdata`, the article's `findLeader`:
//! 1. `getData(/leader, watch)`. There: follow the leader it names and wait
//!    for the watch. NoNode (no watch is set on an absent node):
//! 2. `create(/leader, ephemeral)`. Success: lead. NodeExists: go to 1.
//! 3. NodeDeleted: go to 1.
//!
//! Every follower watches `/leader`, so every resignation or expiry wakes
//! every follower: the herd. The model names the node `/lock` in traces (the
//! store models one namespace; see ARCHITECTURE.md).

use super::names::LOCK;
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::SessionId;
use crate::msg::{Reply, Request, Stat, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{Application, ElectionRecipe, Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-unfair-election",
    aliases: &[],
    summary: "ZooKeeper's non-fair election: everyone creates one ephemeral /leader; \
              followers exists()-watch it and run again when it goes",
    variants: &[Variant {
        name: "getdata",
        summary:
            "the seed article's findLeader: getData(/leader, watch) first, create it if absent",
        kind: VariantKind::Departure,
    }],
    build: |variant| {
        RecipeRef::new(ZkUnfairElection {
            find_leader_first: variant == Some("getdata"),
        })
    },
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ZkUnfairElection {
    /// The article's `findLeader`: read `/leader` before trying to create it.
    pub find_leader_first: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `create(/leader)` in flight.
    Creating,
    /// `exists(/leader, watch)` or `getData(/leader, watch)` in flight.
    Finding,
    /// Following the leader `/leader`'s stat named; waiting for its deletion.
    Following {
        leader: Option<SessionId>,
    },
    Leading,
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Following { leader } => leader.relabel(p),
            State::Creating | State::Finding | State::Leading => {}
        }
    }
}

impl Recipe for ZkUnfairElection {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Election(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        self.find_leader_first.then_some("getdata")
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::bare()
    }

    fn acquire(&self, _: SessionId) -> (State, Request) {
        self.run()
    }

    fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (State::Creating, Reply::Created { czxid, .. }) => {
                *st = State::Leading;
                Step::Acquired { token: *czxid }
            }
            (State::Creating, Reply::Error(ZkError::NodeExists)) => self.find_leader(st),
            (State::Finding, Reply::Stat(Some(stat))) => follow(st, stat),
            // Gone between our create and our look: run again at once.
            (State::Finding, Reply::Stat(None) | Reply::Error(ZkError::NoNode)) => create(st),
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, ev: &WatchEvent) -> Step {
        match (*st, ev) {
            (
                State::Following { .. },
                WatchEvent::Zk {
                    kind: ZkEvent::NodeDeleted,
                    path,
                },
            ) if *path == LOCK => {
                let (next, req) = self.run();
                *st = next;
                Step::Send(req)
            }
            // An exists watch on an absent node fires when anyone creates it.
            _ => Step::Wait,
        }
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Leading => Some(Request::Delete {
                path: LOCK,
                version: None,
            }),
            State::Creating | State::Finding | State::Following { .. } => None,
        }
    }

    /// Every follower watches `/leader`: the `k`-th resignation wakes the
    /// `n - k` candidates still following.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(n - k)
    }
}

impl ElectionRecipe<State> for ZkUnfairElection {
    fn leader_seen(&self, st: &State) -> Option<SessionId> {
        match st {
            State::Following { leader } => *leader,
            State::Creating | State::Finding | State::Leading => None,
        }
    }
}

impl ZkUnfairElection {
    /// Runs for leader: create at once, or (`findLeader`) look first.
    fn run(&self) -> (State, Request) {
        if self.find_leader_first {
            (State::Finding, look())
        } else {
            (State::Creating, create_leader())
        }
    }

    fn find_leader(&self, st: &mut State) -> Step {
        *st = State::Finding;
        Step::Send(if self.find_leader_first {
            look()
        } else {
            Request::Exists {
                path: LOCK,
                watch: true,
            }
        })
    }
}

fn create_leader() -> Request {
    Request::Create {
        path: LOCK,
        ephemeral: true,
        sequential: false,
        data: Data::Empty,
    }
}

/// `findLeader`'s read: `getData(/leader, watch)`.
fn look() -> Request {
    Request::GetData {
        path: LOCK,
        watch: true,
    }
}

fn create(st: &mut State) -> Step {
    *st = State::Creating;
    Step::Send(create_leader())
}

fn follow(st: &mut State, stat: &Stat) -> Step {
    *st = State::Following {
        leader: stat.ephemeral_owner,
    };
    Step::Wait
}
