//! zk-rwlock: the ZooKeeper recipes page's shared lock ("Shared Locks"),
//! Curator's `InterProcessReadWriteLock` (variant `curator`) and kazoo's
//! `ReadLock` / `WriteLock` (variant `kazoo`). Readers and writers queue
//! under `/lock` as one line of ephemeral-sequential nodes.
//!
//! Read lock:
//! 1. `create(/lock/<guid>-read-, ephemeral-sequential)`.
//! 2. `getChildren(/lock)`, no watch.
//! 3. No `write-` node with a lower sequence number: hold.
//! 4. Else watch a `write-` node below ours and wait for its delete, then
//!    go to 2 (if it is already gone, go to 2 at once). Which one: the
//!    recipes page's "next lowest" — the nearest writer below ours — with
//!    `exists()`; kazoo the same nearest writer (`_get_predecessor`:
//!    `sorted_matches[-1]` among `__lock__` nodes) with `get()`; Curator
//!    the *first* writer in the listing (`readLockPredicate`:
//!    `children.get(firstWriteIndex)`) with `getData()`.
//!
//! Write lock: the same with `write-`, holding when no node at all is
//! below ours and watching the node just below (any kind).
//!
//! Release: `delete(our node)`. Names: `read-`/`write-` (recipes page),
//! `__READ__`/`__WRIT__` (Curator), `__rlock__`/`__lock__` (kazoo); each
//! finds its node again by its guid after a lost create reply.
//!
//! Curator's reader, watching the first writer, wakes at every writer's
//! release ahead of it where the page's reader wakes only at the last's:
//! the herd sweep shows it. Variant `no-guid` names nodes without the
//! guid: a lost create reply makes a second node and leaves the first, an
//! orphan that every later reader or writer waits behind (ZOOKEEPER-1262).
//! Variant `reader-blind` (test only) is a writer that sees only writers
//! below it: it takes the lock beside readers. Variant `sync`: Curator's,
//! calling `sync(/lock)` before each listing (Curator never does): over an
//! ensemble the listing is the leader's as of the sync.

use super::fair_predecessor::Mine;
use super::names::LOCK_DIR;
use super::{Registered, Variant, VariantKind};
use crate::ids::{Child, Data, Name, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::name;
use crate::recipe::{
    herd_writers, Application, Face, Recipe, RecipeRef, Setup, SharedLockRecipe, Step,
};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-rwlock",
    aliases: &["zk-shared-lock"],
    summary: "ZooKeeper's shared lock: read-/write- ephemeral-sequential nodes; a reader waits \
              for the writers below it, a writer for every node below it",
    variants: &[
        Variant {
            name: "zk-docs",
            summary: "the recipes page: a reader watches the next lowest write- node with exists()",
            kind: VariantKind::Default,
        },
        Variant {
            name: "curator",
            summary: "Curator 5 InterProcessReadWriteLock: a reader watches the first writer in the listing (getData)",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "kazoo",
            summary: "kazoo 2 ReadLock/WriteLock: a reader watches the nearest writer below it (get)",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "no-guid",
            summary: "the recipes page without the guid: a lost create reply leaves an orphan node (ZOOKEEPER-1262)",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "sync",
            summary: "Curator 5 InterProcessReadWriteLock calling sync() before each listing",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "reader-blind",
            summary: "broken on purpose: a writer sees only the writers below it",
            kind: VariantKind::TestOnly,
        },
    ],
    build: |variant| {
        RecipeRef::new(ZkRwLock(match variant {
            Some("curator") => Library::Curator,
            Some("sync") => Library::CuratorSync,
            Some("kazoo") => Library::Kazoo,
            Some("reader-blind") => Library::ReaderBlind,
            Some("no-guid") => Library::NoGuid,
            _ => Library::ZkDocs,
        }))
    },
};

/// Whose code the recipe follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Library {
    ZkDocs,
    Curator,
    /// Curator's, `sync()` before each listing.
    CuratorSync,
    Kazoo,
    /// The recipes page's, with a writer blind to readers below it.
    ReaderBlind,
    /// The recipes page's without the guid in node names.
    NoGuid,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZkRwLock(pub Library);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// The create is in flight; `reads` says which lock.
    Creating {
        reads: bool,
    },
    /// After a lost create reply: listing to find our node by its guid.
    Finding {
        reads: bool,
    },
    /// `sync`: `sync(/lock)` in flight before listing for our node.
    Syncing(Mine),
    /// `sync`: `sync(/lock)` in flight before listing to find our node.
    SyncingToFind {
        reads: bool,
    },
    /// `getChildren` in flight.
    Listing(Mine),
    /// The watch on the node to wait for is being set.
    Watching(Mine, Child),
    /// Waiting for that node's delete.
    Waiting(Mine, Child),
    /// First in our kind of line, but found by guid: `exists(our node)`
    /// for its czxid (the token).
    FetchingToken(Mine),
    Holding(Mine),
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Listing(m) | State::Syncing(m) | State::FetchingToken(m) | State::Holding(m) => {
                m.relabel(p)
            }
            State::Watching(m, other) | State::Waiting(m, other) => {
                m.relabel(p);
                other.relabel(p);
            }
            State::Creating { .. } | State::Finding { .. } | State::SyncingToFind { .. } => {}
        }
    }
}

impl ZkRwLock {
    /// The names of a read node and a write node before their numbers.
    fn prefixes(&self) -> (Name, Name) {
        match self.0 {
            Library::ZkDocs | Library::ReaderBlind | Library::NoGuid => {
                (name!("read-"), name!("write-"))
            }
            Library::Curator | Library::CuratorSync => (name!("__READ__"), name!("__WRIT__")),
            Library::Kazoo => (name!("__rlock__"), name!("__lock__")),
        }
    }

    fn writes(&self, node: &Child) -> bool {
        node.prefix == self.prefixes().1
    }

    fn create(&self, session: SessionId, reads: bool) -> Request {
        const READ: ZPath = ZPath::fixed(name!("/lock/read-"));
        const WRITE: ZPath = ZPath::fixed(name!("/lock/write-"));
        let (read, write) = self.prefixes();
        let path = match self.0 {
            Library::NoGuid if reads => READ,
            Library::NoGuid => WRITE,
            Library::ZkDocs
            | Library::Curator
            | Library::CuratorSync
            | Library::Kazoo
            | Library::ReaderBlind => ZPath::Node {
                dir: LOCK_DIR,
                child: Child::named(if reads { read } else { write }, Some(session)),
            },
        };
        Request::Create {
            path,
            ephemeral: true,
            sequential: true,
            data: Data::Empty,
        }
    }

    fn start(&self, session: SessionId, reads: bool) -> (State, Request) {
        (State::Creating { reads }, self.create(session, reads))
    }

    /// The node to wait for below ours, if any: for a reader a writer (the
    /// nearest, or Curator's first), for a writer the node just below (the
    /// blind writer's: the nearest writer).
    fn blocker(&self, mine: &Mine, below: &[Child]) -> Option<Child> {
        let mut writers = below.iter().filter(|c| self.writes(c));
        if self.writes(&mine.node) {
            return match self.0 {
                Library::ReaderBlind => writers.next_back().copied(),
                Library::ZkDocs
                | Library::Curator
                | Library::CuratorSync
                | Library::Kazoo
                | Library::NoGuid => below.last().copied(),
            };
        }
        match self.0 {
            Library::Curator | Library::CuratorSync => writers.next().copied(),
            Library::ZkDocs | Library::Kazoo | Library::ReaderBlind | Library::NoGuid => {
                writers.next_back().copied()
            }
        }
    }

    /// Step 2 for `mine` (`sync` first, in the variant that calls it).
    fn list(&self, st: &mut State, mine: Mine) -> Step {
        if self.0 == Library::CuratorSync {
            *st = State::Syncing(mine);
            return Step::Send(sync());
        }
        *st = State::Listing(mine);
        Step::Send(list())
    }

    /// Steps 3 and 4 on a fresh listing (in sequence order).
    fn decide(&self, st: &mut State, mine: Mine, children: &[Child]) -> Step {
        let Some(at) = children.iter().position(|c| *c == mine.node) else {
            return Step::SessionLost; // our node is gone
        };
        match (self.blocker(&mine, &children[..at]), mine.czxid) {
            (None, Some(token)) => {
                *st = State::Holding(mine);
                Step::Acquired { token }
            }
            (None, None) => {
                *st = State::FetchingToken(mine);
                Step::Send(Request::Exists {
                    path: node(mine.node),
                    watch: false,
                })
            }
            (Some(blocker), _) => {
                *st = State::Watching(mine, blocker);
                let path = node(blocker);
                Step::Send(match self.0 {
                    Library::ZkDocs | Library::ReaderBlind | Library::NoGuid => {
                        Request::Exists { path, watch: true }
                    }
                    Library::Curator | Library::CuratorSync | Library::Kazoo => {
                        Request::GetData { path, watch: true }
                    }
                })
            }
        }
    }
}

fn node(child: Child) -> ZPath {
    ZPath::child(LOCK_DIR, child)
}

fn list() -> Request {
    Request::GetChildren {
        path: ZPath::Fixed(LOCK_DIR),
        watch: false,
    }
}

fn sync() -> Request {
    Request::Sync {
        path: ZPath::Fixed(LOCK_DIR),
    }
}

impl Recipe for ZkRwLock {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::SharedLock(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match self.0 {
            Library::ZkDocs => None,
            Library::Curator => Some("curator"),
            Library::CuratorSync => Some("sync"),
            Library::Kazoo => Some("kazoo"),
            Library::ReaderBlind => Some("reader-blind"),
            Library::NoGuid => Some("no-guid"),
        }
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    fn setup(&self) -> Setup {
        Setup::lock_dir()
    }

    /// The write lock.
    fn acquire(&self, session: SessionId) -> (State, Request) {
        self.start(session, false)
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (
                State::Creating { .. },
                Reply::Created {
                    path: ZPath::Node { child, .. },
                    czxid,
                },
            ) => self.list(
                st,
                Mine {
                    node: *child,
                    czxid: Some(*czxid),
                },
            ),
            (State::Syncing(mine), Reply::Synced) => {
                *st = State::Listing(mine);
                Step::Send(list())
            }
            (State::SyncingToFind { reads }, Reply::Synced) => {
                *st = State::Finding { reads };
                Step::Send(list())
            }
            (State::Finding { reads }, Reply::Children(children)) => {
                match children.iter().find(|c| c.guid == Some(session)) {
                    Some(node) => self.decide(
                        st,
                        Mine {
                            node: *node,
                            czxid: None,
                        },
                        children,
                    ),
                    None => {
                        *st = State::Creating { reads };
                        Step::Send(self.create(session, reads))
                    }
                }
            }
            (State::Listing(mine), Reply::Children(children)) => self.decide(st, mine, children),
            (State::Watching(mine, blocker), Reply::Stat(Some(_))) => {
                *st = State::Waiting(mine, blocker);
                Step::Wait
            }
            (State::Watching(mine, _), Reply::Stat(None) | Reply::Error(ZkError::NoNode)) => {
                self.list(st, mine)
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

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            (
                State::Waiting(mine, blocker),
                WatchEvent::Zk {
                    kind: ZkEvent::NodeDeleted,
                    path,
                },
            ) if *path == node(blocker) => self.list(st, mine),
            _ => Step::Wait,
        }
    }

    /// A lost create reply: find our node by its guid (without one, the
    /// create goes again and the first node is left behind).
    fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
        match (*st, lost) {
            (State::Creating { reads }, Request::Create { .. })
                if self.0 == Library::CuratorSync =>
            {
                *st = State::SyncingToFind { reads };
                sync()
            }
            (State::Creating { reads }, Request::Create { .. }) if self.0 != Library::NoGuid => {
                *st = State::Finding { reads };
                list()
            }
            _ => lost.clone(),
        }
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding(mine) => Some(Request::Delete {
                path: node(mine.node),
                version: None,
            }),
            State::Creating { .. }
            | State::Finding { .. }
            | State::Syncing(_)
            | State::SyncingToFind { .. }
            | State::Listing(_)
            | State::Watching(..)
            | State::Waiting(..)
            | State::FetchingToken(_) => None,
        }
    }

    /// The baseline's first half writes ([`herd_writers`]), in order of
    /// entry, then the readers: each writer wakes the next; the last writer
    /// wakes every reader; Curator's readers, watching the first writer,
    /// wake at every writer's release too. Readers wake nobody.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        let writers = herd_writers(n);
        let readers = n - writers;
        let before_last_writer = match self.0 {
            Library::Curator | Library::CuratorSync => 1 + readers,
            Library::ZkDocs | Library::Kazoo | Library::NoGuid => 1,
            Library::ReaderBlind => return None,
        };
        Some(match k.cmp(&writers) {
            std::cmp::Ordering::Less => before_last_writer,
            std::cmp::Ordering::Equal => readers,
            std::cmp::Ordering::Greater => 0,
        })
    }
}

impl SharedLockRecipe<State> for ZkRwLock {
    /// The read lock.
    fn acquire_shared(&self, session: SessionId) -> (State, Request) {
        self.start(session, true)
    }
}
