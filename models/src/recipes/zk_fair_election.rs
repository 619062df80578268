//! zk-fair-election: the ZooKeeper recipes page's leader election, and
//! Curator's `LeaderLatch` on reconnect.
//!
//! Default (`zk-docs`, the recipe text):
//! 1. Create `ELECTION/<guid>-n_` with SEQUENCE and EPHEMERAL.
//! 2. Let C be the children of ELECTION (`getChildren`).
//! 3. If ours is the smallest, lead; the epoch is its czxid.
//! 4. Otherwise `exists(watch)` the node with the largest sequence below ours;
//!    on its deletion, go to 2.
//! 5. Resign: delete our node.
//!
//! The guid finds our node after a lost create reply, as the recipe says.
//!
//! Variants `curator-696` and `curator`: `LeaderLatch` watches the next-lower
//! node with `getData` (NoNode: re-list) and, after its session is lost and
//! a new one opened (Curator's own session expiry replaces the ZooKeeper
//! handle without closing the old session), handles RECONNECTED by listing
//! again with its old node path (`getChildren` → `checkLeadership`):
//! - `curator-696`: if the old path is lowest, it leads (CURATOR-696: the
//!   old node is its expired session's, and goes when the server expires it);
//! - `curator` (the fix): lowest only leads after `getData(ourPath)` shows
//!   `ephemeralOwner` is the current session; otherwise `reset()` deletes the
//!   old node and creates a new one;
//! - `sync`: `curator` calling `sync(ELECTION)` before each `getChildren`
//!   (`LeaderLatch` never does): over an ensemble, the listing is the
//!   leader's as of the sync, not a lagging server's.
//!
//! Each candidate watches one node: a resignation wakes one follower.

/// Our node and its czxid (unknown when we found it by guid), as the lock
/// recipe keeps it.
pub use super::fair_predecessor::Mine;
use super::names::{member, new_member, LOCK};
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{Application, ElectionRecipe, Face, Recipe, RecipeRef, Resume, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-fair-election",
    aliases: &[],
    summary: "ZooKeeper's election recipe: ephemeral-sequential nodes, each candidate \
              watches the next-lower one, the lowest leads",
    variants: &[
        Variant {
            name: "curator-696",
            summary: "Curator LeaderLatch before CURATOR-696: after a new session it trusts its old node path",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "curator",
            summary: "Curator LeaderLatch with the CURATOR-696 fix: checks the node's ephemeralOwner before leading",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "sync",
            summary: "Curator LeaderLatch with the fix, calling sync() before each listing",
            kind: VariantKind::Departure,
        },
    ],
    build: |variant| {
        RecipeRef::new(ZkFairElection(match variant {
            Some("curator-696") => Latch::Curator696,
            Some("curator") => Latch::Curator,
            Some("sync") => Latch::CuratorSync,
            _ => Latch::ZkDocs,
        }))
    },
};

/// Which code the recipe follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Latch {
    /// The recipe text.
    ZkDocs,
    /// `LeaderLatch` before the CURATOR-696 fix.
    Curator696,
    /// `LeaderLatch` with the fix.
    Curator,
    /// `LeaderLatch` with the fix, `sync()` before each listing.
    CuratorSync,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZkFairElection(pub Latch);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Creating,
    /// `sync`: `sync(ELECTION)` in flight before a listing (for our node
    /// by its guid, when we do not know it).
    Syncing(Option<Mine>),
    /// After a lost create reply: listing to find our node by its guid.
    Finding,
    /// `getChildren` in flight.
    Listing(Mine),
    /// The watch on the next-lower node is being set; `leader` is the owner
    /// of the lowest node the listing showed.
    Watching {
        mine: Mine,
        next_lower: Child,
        leader: Option<SessionId>,
    },
    Following {
        mine: Mine,
        next_lower: Child,
        leader: Option<SessionId>,
    },
    /// `curator`: `getData(ourPath)` to check its `ephemeralOwner`.
    CheckingOwner(Mine),
    /// `curator`'s `reset()`: deleting a node that is not this session's.
    Resetting,
    Leading(Mine),
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Listing(m) | State::CheckingOwner(m) | State::Leading(m) => m.relabel(p),
            State::Syncing(m) => m.relabel(p),
            State::Watching {
                mine,
                next_lower,
                leader,
            }
            | State::Following {
                mine,
                next_lower,
                leader,
            } => {
                mine.relabel(p);
                next_lower.relabel(p);
                leader.relabel(p);
            }
            State::Creating | State::Finding | State::Resetting => {}
        }
    }
}

impl Recipe for ZkFairElection {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Election(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match self.0 {
            Latch::ZkDocs => None,
            Latch::Curator696 => Some("curator-696"),
            Latch::Curator => Some("curator"),
            Latch::CuratorSync => Some("sync"),
        }
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::lock_dir()
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
                    czxid,
                },
            ) => self.list(
                st,
                Mine {
                    node: *node,
                    czxid: Some(*czxid),
                },
            ),
            (State::Syncing(Some(mine)), Reply::Synced) => {
                *st = State::Listing(mine);
                Step::Send(children())
            }
            (State::Syncing(None), Reply::Synced) => {
                *st = State::Finding;
                Step::Send(children())
            }
            (State::Finding, Reply::Children(children)) => {
                match children.iter().find(|c| c.guid == Some(session)) {
                    Some(node) => self.check_leadership(
                        session,
                        st,
                        Mine {
                            node: *node,
                            czxid: None,
                        },
                        children,
                    ),
                    None => reset(session, st),
                }
            }
            (State::Listing(mine), Reply::Children(children)) => {
                self.check_leadership(session, st, mine, children)
            }
            (
                State::Watching {
                    mine,
                    next_lower,
                    leader,
                },
                Reply::Stat(Some(_)),
            ) => {
                *st = State::Following {
                    mine,
                    next_lower,
                    leader,
                };
                Step::Wait
            }
            // The next-lower node went before our watch was set: list again.
            (State::Watching { mine, .. }, Reply::Stat(None) | Reply::Error(ZkError::NoNode)) => {
                self.list(st, mine)
            }
            (State::CheckingOwner(mine), Reply::Stat(Some(stat)))
                if stat.ephemeral_owner == Some(session) =>
            {
                *st = State::Leading(Mine {
                    czxid: Some(stat.czxid),
                    ..mine
                });
                Step::Acquired { token: stat.czxid }
            }
            (State::CheckingOwner(mine), Reply::Stat(Some(_))) => {
                *st = State::Resetting;
                Step::Send(Request::Delete {
                    path: member(mine.node),
                    version: None,
                })
            }
            // Our node is gone: the recipe text's session loss; Curator resets.
            (State::CheckingOwner(_), Reply::Error(ZkError::NoNode)) => match self.0 {
                Latch::ZkDocs => Step::SessionLost,
                Latch::Curator696 | Latch::Curator | Latch::CuratorSync => reset(session, st),
            },
            (State::Resetting, Reply::Deleted | Reply::Error(ZkError::NoNode)) => {
                reset(session, st)
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, ev: &WatchEvent) -> Step {
        match (*st, ev) {
            (
                State::Following {
                    mine, next_lower, ..
                },
                WatchEvent::Zk {
                    kind: ZkEvent::NodeDeleted,
                    path,
                },
            ) if *path == member(next_lower) => self.list(st, mine),
            _ => Step::Wait,
        }
    }

    fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
        match (*st, lost) {
            (State::Creating, Request::Create { .. }) if self.0 == Latch::CuratorSync => {
                *st = State::Syncing(None);
                sync()
            }
            (State::Creating, Request::Create { .. }) => {
                *st = State::Finding;
                children()
            }
            _ => lost.clone(),
        }
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Leading(mine) => Some(Request::Delete {
                path: member(mine.node),
                version: None,
            }),
            State::Creating
            | State::Syncing(_)
            | State::Finding
            | State::Listing(_)
            | State::Watching { .. }
            | State::Following { .. }
            | State::CheckingOwner(_)
            | State::Resetting => None,
        }
    }

    /// `LeaderLatch` on RECONNECTED after a new session: `getChildren` with
    /// the old node path. The recipe text starts over.
    fn resume(&self, _: SessionId, st: &mut State) -> Resume {
        let mine = match *st {
            State::Listing(mine)
            | State::Syncing(Some(mine))
            | State::CheckingOwner(mine)
            | State::Leading(mine)
            | State::Watching { mine, .. }
            | State::Following { mine, .. } => mine,
            State::Creating | State::Syncing(None) | State::Finding | State::Resetting => {
                return Resume::StartOver
            }
        };
        match self.0 {
            Latch::ZkDocs => Resume::StartOver,
            Latch::Curator696 | Latch::Curator | Latch::CuratorSync => {
                Resume::Continue(self.listing(st, mine))
            }
        }
    }

    /// Curator replaces a disconnected ZooKeeper handle without closing the
    /// old session.
    fn closes_abandoned_session(&self) -> bool {
        self.0 == Latch::ZkDocs
    }

    /// One follower watches each node: every resignation but the last wakes one.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(u32::from(k < n))
    }
}

impl ElectionRecipe<State> for ZkFairElection {
    fn leader_seen(&self, st: &State) -> Option<SessionId> {
        match st {
            State::Watching { leader, .. } | State::Following { leader, .. } => *leader,
            State::Creating
            | State::Syncing(_)
            | State::Finding
            | State::Listing(_)
            | State::CheckingOwner(_)
            | State::Resetting
            | State::Leading(_) => None,
        }
    }
}

impl ZkFairElection {
    /// Steps 3 and 4 (`checkLeadership`) on a fresh child list, in sequence order.
    fn check_leadership(
        &self,
        session: SessionId,
        st: &mut State,
        mine: Mine,
        children: &[Child],
    ) -> Step {
        let at = children.partition_point(|c| c.seq < mine.node.seq);
        if children.get(at).map(|c| c.seq) != Some(mine.node.seq) {
            return match self.0 {
                // Our node is gone: only a session expiry deletes it.
                Latch::ZkDocs => Step::SessionLost,
                // "Can't find our node. Resetting."
                Latch::Curator696 | Latch::Curator | Latch::CuratorSync => reset(session, st),
            };
        }
        let Some(next_lower) = at.checked_sub(1).map(|i| children[i]) else {
            return self.lead(st, mine);
        };
        *st = State::Watching {
            mine,
            next_lower,
            leader: children[0].guid,
        };
        let path = member(next_lower);
        Step::Send(match self.0 {
            Latch::ZkDocs => Request::Exists { path, watch: true },
            Latch::Curator696 | Latch::Curator | Latch::CuratorSync => {
                Request::GetData { path, watch: true }
            }
        })
    }

    /// Step 2 for `mine`: `getChildren` (`sync` first, in the variant that
    /// calls it).
    fn list(&self, st: &mut State, mine: Mine) -> Step {
        Step::Send(self.listing(st, mine))
    }

    /// [`Self::list`]'s request.
    fn listing(&self, st: &mut State, mine: Mine) -> Request {
        if self.0 == Latch::CuratorSync {
            *st = State::Syncing(Some(mine));
            return sync();
        }
        *st = State::Listing(mine);
        children()
    }

    /// Ours is the lowest node.
    fn lead(&self, st: &mut State, mine: Mine) -> Step {
        match (self.0, mine.czxid) {
            (Latch::Curator | Latch::CuratorSync, _)
            | (Latch::ZkDocs | Latch::Curator696, None) => {
                *st = State::CheckingOwner(mine);
                Step::Send(Request::GetData {
                    path: member(mine.node),
                    watch: false,
                })
            }
            (Latch::ZkDocs | Latch::Curator696, Some(token)) => {
                *st = State::Leading(mine);
                Step::Acquired { token }
            }
        }
    }
}

fn create(session: SessionId) -> Request {
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

fn sync() -> Request {
    Request::Sync { path: LOCK }
}

/// `reset()`: a new node in the current session.
fn reset(session: SessionId, st: &mut State) -> Step {
    *st = State::Creating;
    Step::Send(create(session))
}
