//! fair-predecessor-watch: the ZooKeeper lock recipe (Curator's
//! `InterProcessMutex`).
//!
//! 1. `create(/lock/<guid>-lock-, ephemeral+sequential)`.
//! 2. `get_children(/lock)` without a watch.
//! 3. If our node has the lowest sequence, hold; the token is its czxid.
//! 4. Else `exists(predecessor, watch)` on the largest sequence below ours.
//!    If it is already gone, go to 2; else wait for its event, then go to 2.
//!    Curator (`LockInternals.internalLockLoop`) and kazoo (`Lock._inner_acquire`)
//!    use `getData(predecessor, watch)` instead (Curator's source says why:
//!    an `exists` on a node already gone leaves a watch behind); NoNode means
//!    it is gone: go to 2. Both find their node by its guid (Curator's
//!    protection, kazoo's prefix) after a lost create reply. kazoo and the
//!    recipe text start over when their node is missing from the listing
//!    (in a model where only an expiry deletes it, the session loss);
//!    Curator's `acquire` throws (`validateOurIndex`) and is called again.
//! 5. Release: `delete(our node)`.
//!
//! Curator goes on in a new session with the node it has: its retry loop
//! retries a SESSIONEXPIRED once the new handle is up, and the watcher's
//! Expired event wakes `internalLockLoop`, which lists again and looks for
//! its node. A server that has not applied the old session's end still
//! lists it — CURATOR-604, where the loop takes the lock on a node about
//! to go. The `sync` variant calls `sync()` before each listing, so the
//! server has applied all the leader had committed, the end included.
//!
//! The guid: "if a recoverable error occurs calling create() the client should
//! call getChildren() and check for a node containing the guid used in the
//! path name" — without it, a create whose reply was lost leaves an orphan
//! node that the retry then waits behind forever (ZOOKEEPER-1262).

use super::names::Place;
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{
    Application, Face, LockRecipe, Recipe, RecipeRef, Reentry, Resume, Setup, Step,
};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "fair-predecessor",
    aliases: &["fair-predecessor-watch"],
    summary: "ZooKeeper's lock recipe: ephemeral-sequential nodes, each waiter \
              watches its predecessor with exists(); the guid finds one's node after a lost create reply",
    variants: &[
        Variant {
            name: "zk-docs",
            summary: "the recipe text: exists() watch on the predecessor",
            kind: VariantKind::Default,
        },
        Variant {
            name: "curator",
            summary: "Curator 5 InterProcessMutex: getData() watch on the predecessor, protection guid",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "kazoo",
            summary: "kazoo 2 Lock: getData() watch on the predecessor, uuid prefix",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "sync",
            summary: "Curator 5 InterProcessMutex calling sync() before each listing: \
                      no stale view on a lagging server (CURATOR-604)",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "no-guid",
            summary: "without the guid: a lost create reply leaves an orphan node (ZOOKEEPER-1262)",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "no-relist",
            summary: "broken on purpose: takes the lock on the predecessor's delete event without re-listing",
            kind: VariantKind::TestOnly,
        },
    ],
    build: |variant| {
        RecipeRef::new(FairPredecessor(match variant {
            Some("no-guid") => Options {
                guid: false,
                ..Options::default()
            },
            Some("no-relist") => Options {
                relist_after_wake: false,
                ..Options::default()
            },
            Some("curator") => Options {
                library: Library::Curator,
                ..Options::default()
            },
            Some("kazoo") => Options {
                library: Library::Kazoo,
                ..Options::default()
            },
            Some("sync") => Options {
                library: Library::Curator,
                sync_first: true,
                ..Options::default()
            },
            _ => Options::default(),
        }))
    },
};

/// The recipe at its options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FairPredecessor(pub Options);

/// Whose code the recipe follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Library {
    /// The ZooKeeper recipes page.
    ZkDocs,
    /// Curator's `InterProcessMutex`.
    Curator,
    /// kazoo's `Lock`.
    Kazoo,
}

/// Variants of the recipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    pub library: Library,
    /// Prefix node names with the guid and look for it after a lost create reply.
    pub guid: bool,
    /// Re-list the children when the predecessor's watch fires (step 4 → 2).
    /// `false` is a deliberately broken variant that takes the lock on the
    /// event, as if the predecessor's deletion meant it was our turn.
    pub relist_after_wake: bool,
    /// Where its nodes go: `/lock` for the lock itself; a semaphore's
    /// mutex takes its own.
    pub place: Place,
    /// Call `sync(dir)` before each listing.
    pub sync_first: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            library: Library::ZkDocs,
            guid: true,
            relist_after_wake: true,
            place: Place::LOCK,
            sync_first: false,
        }
    }
}

/// Our node and its czxid (unknown when we found it by guid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mine {
    pub node: Child,
    pub czxid: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The create is in flight.
    Creating,
    /// After a lost create reply: listing to find our node by its guid.
    Finding,
    /// `get_children` in flight.
    Listing(Mine),
    /// `exists(predecessor, watch)` in flight.
    Watching(Mine, Child),
    /// Waiting for the predecessor's deletion.
    Waiting(Mine, Child),
    /// Lowest, but found by guid: `exists(our node)` to learn its czxid.
    FetchingToken(Mine),
    /// `sync(dir)` in flight before a listing: to find our node by its
    /// guid (`None`), or to decide (`Some`).
    Syncing(Option<Mine>),
    Holding(Mine),
}

impl Relabel for Mine {
    fn relabel(&mut self, p: &Perm) {
        self.node.relabel(p);
    }
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Listing(m) | State::FetchingToken(m) | State::Holding(m) => m.relabel(p),
            State::Syncing(m) => m.relabel(p),
            State::Watching(m, pred) | State::Waiting(m, pred) => {
                m.relabel(p);
                pred.relabel(p);
            }
            State::Creating | State::Finding => {}
        }
    }
}

impl Recipe for FairPredecessor {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Lock(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match (self.0.library, self.0.guid, self.0.relist_after_wake) {
            (Library::Curator, ..) if self.0.sync_first => Some("sync"),
            (Library::ZkDocs, true, true) => None,
            (Library::ZkDocs, false, true) => Some("no-guid"),
            (Library::ZkDocs, true, false) => Some("no-relist"),
            (Library::ZkDocs, false, false) => Some("no-guid+no-relist"),
            (Library::Curator, ..) => Some("curator"),
            (Library::Kazoo, ..) => Some("kazoo"),
        }
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::lock_dir()
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        acquire(self.0, session)
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        on_reply(self.0, session, st, reply)
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        on_event(self.0, st, event)
    }

    fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
        resend(self.0, st, lost)
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        release(self.0, st)
    }

    /// Curator's `internalLockLoop` goes on in the new session with the
    /// node it has, listing again; the others start over.
    fn resume(&self, _: SessionId, st: &mut State) -> Resume {
        let mine = match *st {
            State::Listing(mine)
            | State::Watching(mine, _)
            | State::Waiting(mine, _)
            | State::FetchingToken(mine)
            | State::Syncing(Some(mine)) => mine,
            State::Creating | State::Finding | State::Syncing(None) | State::Holding(_) => {
                return Resume::StartOver
            }
        };
        match self.0.library {
            Library::Curator => Resume::Continue(relisting(self.0, st, mine)),
            Library::ZkDocs | Library::Kazoo => Resume::StartOver,
        }
    }

    /// One waiter watches each node: every release but the last wakes one.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(u32::from(k < n))
    }
}

impl LockRecipe<State> for FairPredecessor {
    /// Curator counts a holder's re-entries (`InterProcessMutex.internalLock`);
    /// kazoo's second acquire by the holder retries for ever without a
    /// request (`_inner_acquire`: `if self.is_acquired: raise
    /// ForceRetryError()`); the recipes page says nothing of it.
    fn reentry(&self) -> Reentry {
        match self.0.library {
            Library::Curator => Reentry::Counted,
            Library::Kazoo => Reentry::Blocks,
            Library::ZkDocs => Reentry::Unsupported,
        }
    }
    /// Curator's `acquire(time, unit)` and kazoo's `acquire(timeout=…)`
    /// give up; the recipes page's lock waits for ever.
    fn withdraws(&self) -> bool {
        match self.0.library {
            Library::Curator | Library::Kazoo => true,
            Library::ZkDocs => false,
        }
    }
    fn withdraw(&self, _: SessionId, st: &State) -> Option<Request> {
        withdraw(self.0, st)
    }
}

fn create(opts: Options, session: SessionId) -> Request {
    Request::Create {
        path: opts.place.new_node(opts.guid.then_some(session)),
        ephemeral: true,
        sequential: true,
        data: Data::Empty,
    }
}

fn list(opts: Options) -> Request {
    Request::GetChildren {
        path: opts.place.dir_path(),
        watch: false,
    }
}

fn sync(opts: Options) -> Request {
    Request::Sync {
        path: opts.place.dir_path(),
    }
}

/// Step 2 for `mine` (`sync` first, in the variant that calls it).
fn relist(opts: Options, st: &mut State, mine: Mine) -> Step {
    Step::Send(relisting(opts, st, mine))
}

/// [`relist`]'s request.
fn relisting(opts: Options, st: &mut State, mine: Mine) -> Request {
    if opts.sync_first {
        *st = State::Syncing(Some(mine));
        return sync(opts);
    }
    *st = State::Listing(mine);
    list(opts)
}

/// Step 1.
pub fn acquire(opts: Options, session: SessionId) -> (State, Request) {
    (State::Creating, create(opts, session))
}

/// Steps 2–4 on a reply.
pub fn on_reply(opts: Options, session: SessionId, st: &mut State, reply: &Reply) -> Step {
    match (*st, reply) {
        (
            State::Creating,
            Reply::Created {
                path: ZPath::Node { child: node, .. },
                czxid,
            },
        ) => {
            let mine = Mine {
                node: *node,
                czxid: Some(*czxid),
            };
            relist(opts, st, mine)
        }
        (State::Syncing(Some(mine)), Reply::Synced) => {
            *st = State::Listing(mine);
            Step::Send(list(opts))
        }
        (State::Syncing(None), Reply::Synced) => {
            *st = State::Finding;
            Step::Send(list(opts))
        }
        (State::Finding, Reply::Children(children)) => {
            match children.iter().find(|c| c.guid == Some(session)) {
                Some(node) => {
                    let mine = Mine {
                        node: *node,
                        czxid: None,
                    };
                    decide(opts, session, st, mine, children)
                }
                None => {
                    *st = State::Creating;
                    Step::Send(create(opts, session))
                }
            }
        }
        (State::Listing(mine), Reply::Children(children)) => {
            decide(opts, session, st, mine, children)
        }
        (State::Watching(mine, pred), Reply::Stat(Some(_))) => {
            *st = State::Waiting(mine, pred);
            Step::Wait
        }
        (State::Watching(mine, _), Reply::Stat(None) | Reply::Error(ZkError::NoNode)) => {
            relist(opts, st, mine)
        }
        (State::FetchingToken(mine), Reply::Stat(Some(stat))) => {
            *st = State::Holding(Mine {
                czxid: Some(stat.czxid),
                ..mine
            });
            Step::Acquired { token: stat.czxid }
        }
        // Our own node is gone: only session expiry deletes it.
        (State::FetchingToken(_), Reply::Stat(None)) => Step::SessionLost,
        _ => Step::Unexpected,
    }
}

/// Steps 3 and 4 on a fresh child list, which comes in sequence order.
fn decide(
    opts: Options,
    session: SessionId,
    st: &mut State,
    mine: Mine,
    children: &[Child],
) -> Step {
    let at = children.partition_point(|c| c.seq < mine.node.seq);
    if children.get(at).map(|c| c.seq) != Some(mine.node.seq) {
        // Our node is gone. Curator's `acquire` throws ("Sequential path
        // not found") and the application calls it again, in the session
        // it has; the others take it for the session's loss.
        return match opts.library {
            Library::Curator => {
                *st = State::Creating;
                Step::Send(create(opts, session))
            }
            Library::ZkDocs | Library::Kazoo => Step::SessionLost,
        };
    }
    let predecessor = at.checked_sub(1).map(|i| &children[i]);
    match (predecessor, mine.czxid) {
        (None, Some(token)) => {
            *st = State::Holding(mine);
            Step::Acquired { token }
        }
        (None, None) => {
            *st = State::FetchingToken(mine);
            Step::Send(Request::Exists {
                path: opts.place.node(mine.node),
                watch: false,
            })
        }
        (Some(pred), _) => {
            *st = State::Watching(mine, *pred);
            let path = opts.place.node(*pred);
            Step::Send(match opts.library {
                Library::ZkDocs => Request::Exists { path, watch: true },
                Library::Curator | Library::Kazoo => Request::GetData { path, watch: true },
            })
        }
    }
}

/// Step 4's wait on a watch event.
pub fn on_event(opts: Options, st: &mut State, ev: &WatchEvent) -> Step {
    match (*st, ev) {
        (
            State::Waiting(mine, pred),
            WatchEvent::Zk {
                kind: ZkEvent::NodeDeleted,
                path,
            },
        ) if *path == opts.place.node(pred) => {
            if opts.relist_after_wake {
                relist(opts, st, mine)
            } else {
                *st = State::Holding(mine);
                Step::Acquired {
                    token: mine.czxid.unwrap_or(0),
                }
            }
        }
        _ => Step::Wait,
    }
}

/// What to send instead of a request whose reply never came.
pub fn resend(opts: Options, st: &mut State, lost: &Request) -> Request {
    match (*st, lost) {
        (State::Creating, Request::Create { .. }) if opts.guid && opts.sync_first => {
            *st = State::Syncing(None);
            sync(opts)
        }
        (State::Creating, Request::Create { .. }) if opts.guid => {
            *st = State::Finding;
            list(opts)
        }
        _ => lost.clone(),
    }
}

/// Given up while waiting: delete our node, so that our successor is not
/// left behind it (Curator's `internalLockLoop` sets `doDelete` and
/// `deleteOurPath`s in its `finally`; kazoo's `_inner_acquire` times out and
/// `_best_effort_cleanup` deletes the node).
fn withdraw(opts: Options, st: &State) -> Option<Request> {
    match st {
        State::Listing(mine)
        | State::Watching(mine, _)
        | State::Waiting(mine, _)
        | State::FetchingToken(mine)
        | State::Syncing(Some(mine))
        | State::Holding(mine) => Some(Request::Delete {
            path: opts.place.node(mine.node),
            version: None,
        }),
        State::Creating | State::Finding | State::Syncing(None) => None,
    }
}

/// Step 5.
pub fn release(opts: Options, st: &State) -> Option<Request> {
    match st {
        State::Holding(mine) => Some(Request::Delete {
            path: opts.place.node(mine.node),
            version: None,
        }),
        State::Creating
        | State::Finding
        | State::Listing(_)
        | State::Watching(..)
        | State::Waiting(..)
        | State::FetchingToken(_)
        | State::Syncing(_) => None,
    }
}
