//! zk-double-barrier: the double barrier of the ZooKeeper recipes page
//! ("Double Barriers"). A group of `N` processes enters together, computes,
//! and leaves together. `/lock` plays the barrier node `b`, `/lock/ready`
//! its `b/ready`.
//!
//! Enter:
//! 1. `exists(b/ready, watch)`.
//! 2. `create(b/<p>, ephemeral)`: the process node.
//! 3. `getChildren(b)`.
//! 4. If fewer than `N` children, wait for the watch (the creation of
//!    `b/ready`); else `create(b/ready)`. Either way, pass.
//!
//! Leave:
//! 1. `getChildren(b)`.
//! 2. No children: leave.
//! 3. Only our node: `delete` it and leave.
//! 4. Ours is the lowest: wait on the highest (`exists(highest, watch)`).
//! 5. Else `delete` ours if it is still there, and wait on the lowest.
//! 6. Go to 1.
//!
//! Two departures, both for the model's sake and both said where they
//! matter:
//! - The process node is ephemeral-sequential (named with the client's
//!   guid, as `zk-barrier`'s), so "lowest" and "highest" are the store's
//!   order of entry rather than an order of process names: any fixed order
//!   serves the recipe, and one the store gives keeps the clients
//!   interchangeable for symmetry reduction.
//! - A listing of `b` does not show `b/ready` (see ARCHITECTURE.md); the
//!   page's count would include it, but `b/ready` exists only once the
//!   whole group was counted, so no count it could change is ever made.
//! - lockstep's client hands a recipe watch events only while no request is
//!   outstanding, so the `b/ready` event can come during step 3 and be
//!   missed; a process that counts too few looks at `b/ready` once more
//!   (`exists`, watch) before it waits, as `zk-barrier` does.
//!
//! The page's remark on herds holds: the wake-ups it causes are of
//! processes that can proceed (all wait on `b/ready`; on leaving, all but
//! the lowest wait on the lowest, which goes last).
//!
//! Variant `tutorial`, the `Barrier` of the ZooKeeper tutorial ("Barrier
//! and Queue Tutorial"), a double barrier without `ready`:
//! - enter: `create(root/<name>, ephemeral)`; then `getChildren(root,
//!   watch)` until there are `size` children, waiting for the watch in
//!   between (`mutex.wait()`, woken by any event);
//! - leave: `delete(root/<name>)`; then `getChildren(root, watch)` until
//!   there are none, waiting in between.
//!
//! The tutorial deletes with `delete(root/<name>, 0)`: its node is never
//! written, so version 0 is always its version, and the model's delete
//! (any version) does the same.
//!
//! Every child change wakes every waiter: a herd, which `herd_bound`
//! reports from four members on. And a slow member that lists after the
//! first has left sees fewer than `size` children and waits for good.

use super::names::{is_member, member, new_member, LOCK, READY};
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{Application, BarrierRecipe, Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-double-barrier",
    aliases: &[],
    summary: "the ZooKeeper recipes page's double barrier: enter (wait on b/ready until N are in), compute, leave (the lowest waits on the highest, the others delete theirs and wait on the lowest)",
    variants: &[Variant {
        name: "tutorial",
        summary: "the ZooKeeper tutorial's Barrier: no ready node; enter and leave re-list the children on every change until size are in, then none",
        kind: VariantKind::Departure,
    }],
    build: |variant| {
        RecipeRef::new(ZkDoubleBarrier {
            group: 0,
            tutorial: variant == Some("tutorial"),
        })
    },
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ZkDoubleBarrier {
    /// How many processes the group has (set by [`Recipe::for_group`]).
    pub group: u16,
    /// The tutorial's `Barrier` rather than the recipes page's.
    pub tutorial: bool,
}

/// Our process node and its czxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    pub node: Child,
    pub czxid: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Enter 1: `exists(b/ready, watch)` in flight.
    Watching,
    /// Enter 2: the process node's create in flight.
    Entering,
    /// Enter 3: `getChildren(b)` in flight.
    Counting(Member),
    /// Too few: `exists(b/ready, watch)` again before waiting.
    Rechecking(Member),
    /// Enter 4: `create(b/ready)` in flight.
    Starting(Member),
    /// Waiting for `b/ready` to appear.
    Waiting(Member),
    /// Entered: computing.
    Passed(Member),
    /// Leave 1: `getChildren(b)` in flight.
    Listing(Member),
    /// Leave 3 or 5: `delete(ours)` in flight; then leave (`last`) or wait
    /// on `then`.
    Deleting { me: Member, then: Option<Child> },
    /// Leave 4 or 5: `exists(other, watch)` in flight.
    Watching2(Member, Child),
    /// Waiting for `other` to go.
    WaitingOn(Member, Child),
    /// Tutorial: `getChildren(root, watch)` in flight, entering or leaving.
    Polling { me: Member, leaving: bool },
    /// Tutorial: waiting for the children to change.
    Idle { me: Member, leaving: bool },
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Counting(m)
            | State::Rechecking(m)
            | State::Starting(m)
            | State::Waiting(m)
            | State::Passed(m)
            | State::Listing(m)
            | State::Polling { me: m, .. }
            | State::Idle { me: m, .. } => m.node.relabel(p),
            State::Deleting { me, then } => {
                me.node.relabel(p);
                then.relabel(p);
            }
            State::Watching2(m, other) | State::WaitingOn(m, other) => {
                m.node.relabel(p);
                other.relabel(p);
            }
            State::Watching | State::Entering => {}
        }
    }
}

fn watch_ready() -> Request {
    Request::Exists {
        path: READY,
        watch: true,
    }
}

fn create_node(session: SessionId) -> Request {
    Request::Create {
        path: new_member(Some(session)),
        ephemeral: true,
        sequential: true,
        data: Data::Empty,
    }
}

fn children() -> Request {
    Request::GetChildren {
        path: LOCK,
        watch: false,
    }
}

fn create_ready() -> Request {
    Request::Create {
        path: READY,
        ephemeral: false,
        sequential: false,
        data: Data::Empty,
    }
}

fn delete(node: Child) -> Request {
    Request::Delete {
        path: member(node),
        version: None,
    }
}

fn watch(node: Child) -> Request {
    Request::Exists {
        path: member(node),
        watch: true,
    }
}

fn poll() -> Request {
    Request::GetChildren {
        path: LOCK,
        watch: true,
    }
}

fn pass(st: &mut State, m: Member) -> Step {
    *st = State::Passed(m);
    Step::Acquired { token: m.czxid }
}

/// Leave, steps 2 to 5, on the listing `l` (in the store's order).
/// How many members a listing of `b` shows: its children but `ready`.
/// (Curator's `internalEnter` counts every child, `ready` too: a member
/// still entering when another has begun to leave then creates `ready` and
/// takes its NodeExists, where this one looks `ready` up — the same
/// outcome by another request.)
fn entered(listed: &[Child]) -> usize {
    listed.iter().filter(|c| is_member(c)).count()
}

/// Leave, steps 2–6, on a listing of `b`: its members, without the ready
/// node (Curator's `filterAndSortChildren` drops it too).
fn leave_on(st: &mut State, me: Member, listed: &[Child]) -> Step {
    let l: Vec<Child> = listed.iter().copied().filter(is_member).collect();
    let (Some(&lowest), Some(&highest)) = (l.first(), l.last()) else {
        return Step::Released;
    };
    if l == [me.node] {
        *st = State::Deleting { me, then: None };
        return Step::Send(delete(me.node));
    }
    if lowest == me.node {
        *st = State::Watching2(me, highest);
        return Step::Send(watch(highest));
    }
    if l.contains(&me.node) {
        *st = State::Deleting {
            me,
            then: Some(lowest),
        };
        return Step::Send(delete(me.node));
    }
    *st = State::Watching2(me, lowest);
    Step::Send(watch(lowest))
}

fn relist(st: &mut State, me: Member) -> Step {
    *st = State::Listing(me);
    Step::Send(children())
}

impl Recipe for ZkDoubleBarrier {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Barrier(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::lock_dir()
    }

    fn variant(&self) -> Option<&'static str> {
        self.tutorial.then_some("tutorial")
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        if self.tutorial {
            (State::Entering, create_node(session))
        } else {
            (State::Watching, watch_ready())
        }
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        if self.group == 0 {
            // Built without its group's size (see `for_group`).
            return Step::Unexpected;
        }
        match (*st, reply) {
            (State::Watching, Reply::Stat(_)) => {
                *st = State::Entering;
                Step::Send(create_node(session))
            }
            (
                State::Entering,
                Reply::Created {
                    path: ZPath::Node { child: node, .. },
                    czxid,
                },
            ) => {
                let me = Member {
                    node: *node,
                    czxid: *czxid,
                };
                if self.tutorial {
                    *st = State::Polling { me, leaving: false };
                    return Step::Send(poll());
                }
                *st = State::Counting(me);
                Step::Send(children())
            }
            (State::Polling { me, .. }, Reply::Children(l))
                if entered(l) >= usize::from(self.group) =>
            {
                pass(st, me)
            }
            (State::Polling { me, .. }, Reply::Children(_)) => {
                *st = State::Idle { me, leaving: false };
                Step::Wait
            }
            (State::Counting(m), Reply::Children(l)) if entered(l) >= usize::from(self.group) => {
                *st = State::Starting(m);
                Step::Send(create_ready())
            }
            (State::Counting(m), Reply::Children(_)) => {
                *st = State::Rechecking(m);
                Step::Send(watch_ready())
            }
            (State::Rechecking(m), Reply::Stat(Some(_))) => pass(st, m),
            (State::Rechecking(m), Reply::Stat(None)) => {
                *st = State::Waiting(m);
                Step::Wait
            }
            (State::Starting(m), Reply::Created { .. } | Reply::Error(ZkError::NodeExists)) => {
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
            // The tutorial's watcher wakes the waiter on any event.
            (State::Idle { me, leaving }, WatchEvent::Zk { .. }) => {
                *st = State::Polling { me, leaving };
                Step::Send(poll())
            }
            _ => Step::Wait,
        }
    }

    /// Every member enters at once. The page's: `b/ready` wakes all `n`;
    /// leaving, the highest's delete wakes the lowest (which watches it),
    /// and the lowest's, last, wakes the other `n - 1`. The tutorial's:
    /// nobody waits to enter (all are in before anyone lists); leaving,
    /// the first delete wakes all `n`, whose child watches are still set.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        match (self.tutorial, k) {
            (true, 1) => Some(n),
            (false, 1) => Some(n),
            (false, 2) => Some(1),
            (false, 3) => Some(n - 1),
            _ => None,
        }
    }

    /// Leave, step 1 (the tutorial deletes its node first).
    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Passed(m) if self.tutorial => Some(delete(m.node)),
            State::Passed(_) => Some(children()),
            State::Watching
            | State::Entering
            | State::Counting(_)
            | State::Rechecking(_)
            | State::Starting(_)
            | State::Waiting(_)
            | State::Listing(_)
            | State::Deleting { .. }
            | State::Watching2(..)
            | State::WaitingOn(..)
            | State::Polling { .. }
            | State::Idle { .. } => None,
        }
    }

    fn on_release_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (State::Passed(me), Reply::Deleted | Reply::Error(ZkError::NoNode))
                if self.tutorial =>
            {
                *st = State::Polling { me, leaving: true };
                Step::Send(poll())
            }
            (State::Polling { .. }, Reply::Children(l)) if !l.iter().any(is_member) => {
                Step::Released
            }
            (State::Polling { me, .. }, Reply::Children(_)) => {
                *st = State::Idle { me, leaving: true };
                Step::Wait
            }
            (State::Passed(me) | State::Listing(me), Reply::Children(l)) => leave_on(st, me, l),
            (
                State::Deleting { then: None, .. },
                Reply::Deleted | Reply::Error(ZkError::NoNode),
            ) => Step::Released,
            (
                State::Deleting {
                    me,
                    then: Some(lowest),
                },
                Reply::Deleted | Reply::Error(ZkError::NoNode),
            ) => {
                *st = State::Watching2(me, lowest);
                Step::Send(watch(lowest))
            }
            (State::Watching2(me, _), Reply::Stat(None)) => relist(st, me),
            (State::Watching2(me, other), Reply::Stat(Some(_))) => {
                *st = State::WaitingOn(me, other);
                Step::Wait
            }
            _ => Step::Unexpected,
        }
    }

    fn on_release_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            (
                State::WaitingOn(me, other),
                WatchEvent::Zk {
                    kind: ZkEvent::NodeDeleted,
                    path,
                },
            ) if *path == member(other) => relist(st, me),
            (State::Idle { me, leaving }, WatchEvent::Zk { .. }) => {
                *st = State::Polling { me, leaving };
                Step::Send(poll())
            }
            _ => Step::Wait,
        }
    }
}

impl BarrierRecipe for ZkDoubleBarrier {
    fn for_group(&self, n: u16) -> RecipeRef {
        RecipeRef::new(ZkDoubleBarrier { group: n, ..*self })
    }
}
