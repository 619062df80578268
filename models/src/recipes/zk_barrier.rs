//! zk-barrier: the synchronizing barrier of the widely read ZooKeeper
//! article on queues and barriers ("synchronizing queue"). A group of `N`
//! members; `/lock` plays the article's `/synchronizing`, `/lock/ready` its
//! `/synchronizing/start`.
//!
//! 1. Enter: `create(/lock/<guid>-lock-, ephemeral-sequential)` (the guid
//!    names the member's node; the article never looks for it, so a create
//!    resent after a lost reply makes a second node for the same member).
//! 2. `exists(/lock/ready, watch)`. If it exists, pass.
//! 3. Else `getChildren(/lock)`: if `N` members are there, create
//!    `/lock/ready` and pass; else wait for the watch (the creation of
//!    `/lock/ready`), then pass.
//!
//! The article's watcher waits on the mutex the main thread holds while it
//! lists, so an event that arrives during the listing is not lost; lockstep's
//! client hands a recipe events only while no request is outstanding. So,
//! standing for that, a member that counts too few looks at `/lock/ready`
//! once more (`exists`, watch) before it waits. The count is the article's:
//! every child of `/lock`, `/lock/ready` too if it is there (it exists only
//! once the whole group was seen, so it changes no decision).
//!
//! There is no leave. Two members that both see the group complete both
//! create `/lock/ready`: the article's code throws on the second's
//! NodeExists (variant `article`), where the default takes it as the signal
//! it is and passes. A member that crashes after entering and before
//! creating `/lock/ready` leaves everyone waiting for good.

use super::names::{new_member, LOCK, READY};
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{Application, BarrierRecipe, Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-barrier",
    aliases: &[],
    summary: "the article's synchronizing barrier: each member creates a child and exists()-watches /start; who sees the group complete creates it",
    variants: &[Variant {
        name: "article",
        summary: "as the article's code: a member whose create of /start finds it there (NodeExists) throws",
        kind: VariantKind::Departure,
    }],
    build: |variant| {
        RecipeRef::new(ZkBarrier {
            group: 0,
            throws_on_node_exists: variant == Some("article"),
        })
    },
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ZkBarrier {
    /// How many members the group has (set by [`Recipe::for_group`]).
    pub group: u16,
    /// The article's code: NodeExists on `/lock/ready` throws.
    pub throws_on_node_exists: bool,
}

/// Our member node and its czxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    pub node: Child,
    pub czxid: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The member node's create is in flight.
    Entering,
    /// `exists(/lock/ready, watch)` in flight.
    Checking(Member),
    /// `getChildren(/lock)` in flight.
    Counting(Member),
    /// Too few members: `exists(/lock/ready, watch)` again before waiting.
    Rechecking(Member),
    /// `create(/lock/ready)` in flight.
    Starting(Member),
    /// Waiting for `/lock/ready` to appear.
    Waiting(Member),
    Passed(Member),
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Checking(m)
            | State::Counting(m)
            | State::Rechecking(m)
            | State::Starting(m)
            | State::Waiting(m)
            | State::Passed(m) => m.node.relabel(p),
            State::Entering => {}
        }
    }
}

fn enter(session: SessionId) -> Request {
    Request::Create {
        path: new_member(Some(session)),
        ephemeral: true,
        sequential: true,
        data: Data::Empty,
    }
}

fn check_ready() -> Request {
    Request::Exists {
        path: READY,
        watch: true,
    }
}

fn count() -> Request {
    Request::GetChildren {
        path: LOCK,
        watch: false,
    }
}

fn start() -> Request {
    Request::Create {
        path: READY,
        ephemeral: false,
        sequential: false,
        data: Data::Empty,
    }
}

fn pass(st: &mut State, m: Member) -> Step {
    *st = State::Passed(m);
    Step::Acquired { token: m.czxid }
}

impl Recipe for ZkBarrier {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Barrier(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        self.throws_on_node_exists.then_some("article")
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::lock_dir()
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        (State::Entering, enter(session))
    }

    fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        if self.group == 0 {
            // Built without its group's size (see `for_group`): stop here,
            // visibly, rather than start a barrier of nobody.
            return Step::Unexpected;
        }
        match (*st, reply) {
            (
                State::Entering,
                Reply::Created {
                    path: ZPath::Node { child: node, .. },
                    czxid,
                },
            ) => {
                *st = State::Checking(Member {
                    node: *node,
                    czxid: *czxid,
                });
                Step::Send(check_ready())
            }
            (State::Checking(m), Reply::Stat(Some(_))) => pass(st, m),
            (State::Checking(m), Reply::Stat(None)) => {
                *st = State::Counting(m);
                Step::Send(count())
            }
            (State::Counting(m), Reply::Children(members)) => {
                if members.len() >= self.group as usize {
                    *st = State::Starting(m);
                    Step::Send(start())
                } else {
                    *st = State::Rechecking(m);
                    Step::Send(check_ready())
                }
            }
            (State::Rechecking(m), Reply::Stat(Some(_))) => pass(st, m),
            (State::Rechecking(m), Reply::Stat(None)) => {
                *st = State::Waiting(m);
                Step::Wait
            }
            (State::Starting(m), Reply::Created { .. }) => pass(st, m),
            (State::Starting(m), Reply::Error(ZkError::NodeExists))
                if !self.throws_on_node_exists =>
            {
                pass(st, m)
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            (
                State::Waiting(m),
                WatchEvent::Zk {
                    kind: ZkEvent::NodeCreated,
                    path,
                },
            ) if *path == READY => pass(st, m),
            _ => Step::Wait,
        }
    }

    /// Every member enters at once, so every one has set its watch on
    /// `/start` when the first to count the whole group creates it: that
    /// one change wakes all `n`, each of which can proceed.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        (k == 1).then_some(n)
    }

    /// No leave: a member that passed has nothing to give up.
    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Entering
            | State::Checking(_)
            | State::Counting(_)
            | State::Rechecking(_)
            | State::Starting(_)
            | State::Waiting(_)
            | State::Passed(_) => None,
        }
    }
}

impl BarrierRecipe for ZkBarrier {
    fn for_group(&self, n: u16) -> RecipeRef {
        RecipeRef::new(ZkBarrier { group: n, ..*self })
    }
}
