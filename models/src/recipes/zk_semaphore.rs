//! zk-semaphore: a counting semaphore of `k` leases on ZooKeeper, as
//! Curator's `InterProcessSemaphoreV2` takes one (the default; Curator 5,
//! `InterProcessSemaphoreV2.internalAcquire1Lease`), or kazoo's `Semaphore`
//! (variant `kazoo`; kazoo 2, `recipe/lock.py`).
//!
//! Curator, under `/sem`:
//!
//! 1. Take the mutex `/sem/locks` (an `InterProcessMutex`: the
//!    fair-predecessor lock as Curator runs it, there).
//! 2. `create(/sem/leases/_c_<guid>-lease-, ephemeral-sequential)`.
//! 3. `getChildren(/sem/leases, watch)`. Our lease missing: the session is
//!    gone. At most `k` leases (ours counted: `children.size() <=
//!    maxLeases`): go to 5.
//! 4. Wait for the watch (a lease went), then go to 3.
//! 5. Release the mutex (`finally { lock.release() }`): delete its node;
//!    the lease is held. Its token is the lease's sequence number.
//!
//! Release: `delete(our lease)`. The mutex is held while a client waits for
//! a lease, so one waiter at a time watches the leases.
//!
//! kazoo, under `/sem`:
//!
//! 1. `exists(/sem/<guid>-lease)`: already ours (a lease held by this
//!    instance) — not in a fresh acquisition.
//! 2. Take the lock `/sem-__lock__` (kazoo's `Lock`: getData on the
//!    predecessor).
//! 3. `getChildren(/sem, watch)`; fewer than `k` leases: `create(/sem/<guid>-lease,
//!    ephemeral)` (not sequential: the name is the instance's).
//! 4. `exists(/sem/<guid>-lease)`: there, the lease is held — release the
//!    lock and go on; not there, wait for the watch and go to 3.
//!
//! Variant `sync`: Curator's, calling `sync()` on the directory before each
//! listing (the mutex's and the leases'; Curator never does): over an
//! ensemble each listing is the leader's as of the sync.
//!
//! A holder paused past its session keeps believing it holds its lease while
//! the store has given it to another: `k + 1` holders (`permits_bound`).

use super::fair_predecessor::{self, Library as LockLibrary, Mine};
use super::names::Place;
use super::{Registered, Variant, VariantKind};
use crate::ids::{Child, Data, Name, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::name;
use crate::recipe::{Application, Face, Recipe, RecipeRef, SemaphoreRecipe, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-semaphore",
    aliases: &[],
    summary: "a counting semaphore: a mutex around lease creation, leases as children, \
              wait while more than k (Curator InterProcessSemaphoreV2)",
    variants: &[
        Variant {
            name: "curator",
            summary: "Curator 5 InterProcessSemaphoreV2: /sem/locks mutex, ephemeral-sequential leases, size() <= maxLeases",
            kind: VariantKind::Default,
        },
        Variant {
            name: "sync",
            summary: "Curator 5 InterProcessSemaphoreV2 calling sync() before each listing",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "kazoo",
            summary: "kazoo 2 Semaphore: /sem-__lock__ lock, a lease named by the instance, created when fewer than max_leases",
            kind: VariantKind::Departure,
        },
    ],
    build: |variant| {
        RecipeRef::new(ZkSemaphore {
            library: match variant {
                Some("kazoo") => Library::Kazoo,
                Some("sync") => Library::CuratorSync,
                _ => Library::Curator,
            },
            permits: 1,
        })
    },
};

/// Whose semaphore it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Library {
    Curator,
    /// Curator's, `sync()` before each listing.
    CuratorSync,
    Kazoo,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZkSemaphore {
    pub library: Library,
    /// Curator's `maxLeases`, kazoo's `max_leases`.
    pub permits: u16,
}

/// The semaphore's root and its two parts.
const SEM: Name = name!("/sem");
const CURATOR_LOCKS: Name = name!("/sem/locks");
const CURATOR_LEASES: Name = name!("/sem/leases");
const KAZOO_LOCK: Name = name!("/sem-__lock__");
const LOCK_NODE: Name = name!("lock-");
const LEASE: Name = name!("lease-");
const KAZOO_LEASE: Name = name!("lease");

/// One lease: its node, and the token it is held with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    pub node: Child,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// kazoo: `exists(our lease)` before anything else.
    Probing,
    /// Taking the mutex, as the lock recipe does.
    Locking(fair_predecessor::State),
    /// Curator: the lease's create is in flight, the mutex held.
    Creating(Mine),
    /// Curator: after a lost create reply, listing the leases to find ours
    /// by its guid.
    Finding(Mine),
    /// `sync`: `sync(leases)` in flight before listing them.
    Syncing(Mine, Option<Lease>),
    /// `sync`: `sync(leases)` in flight before listing them to find ours.
    SyncingToFind(Mine),
    /// `getChildren(leases, watch)` in flight; Curator's lease is made.
    Counting(Mine, Option<Lease>),
    /// kazoo: its lease's create, then `exists` on it, in flight; whether
    /// the leases changed since the listing (its `wake_event` was set: the
    /// wait that follows returns at once).
    Claiming(Mine, bool),
    Checking(Mine, bool),
    /// Waiting for the leases to change.
    Waiting(Mine, Option<Lease>),
    /// The mutex's release in flight, the lease in hand (its token).
    Unlocking(Lease, u64),
    Holding(Lease),
}

impl Relabel for Lease {
    fn relabel(&mut self, p: &Perm) {
        self.node.relabel(p);
    }
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Probing => {}
            State::Locking(lock) => lock.relabel(p),
            State::Creating(m)
            | State::Finding(m)
            | State::SyncingToFind(m)
            | State::Claiming(m, _)
            | State::Checking(m, _) => m.relabel(p),
            State::Counting(m, lease) | State::Syncing(m, lease) | State::Waiting(m, lease) => {
                m.relabel(p);
                lease.relabel(p);
            }
            State::Unlocking(lease, _) | State::Holding(lease) => lease.relabel(p),
        }
    }
}

impl ZkSemaphore {
    /// The mutex, as each library takes it: Curator's `InterProcessMutex`
    /// under `/sem/locks`, kazoo's `Lock` at `/sem-__lock__`.
    fn lock(&self) -> fair_predecessor::Options {
        let (library, dir) = match self.library {
            Library::Curator | Library::CuratorSync => (LockLibrary::Curator, CURATOR_LOCKS),
            Library::Kazoo => (LockLibrary::Kazoo, KAZOO_LOCK),
        };
        fair_predecessor::Options {
            library,
            place: Place {
                dir,
                prefix: LOCK_NODE,
            },
            sync_first: self.library == Library::CuratorSync,
            ..fair_predecessor::Options::default()
        }
    }

    /// Where the leases are.
    fn leases(&self) -> Name {
        match self.library {
            Library::Curator | Library::CuratorSync => CURATOR_LEASES,
            Library::Kazoo => SEM,
        }
    }

    /// kazoo's lease: named by the instance (here its session), not
    /// sequential.
    fn kazoo_lease(session: SessionId) -> ZPath {
        ZPath::Node {
            dir: SEM,
            child: Child::named(KAZOO_LEASE, Some(session)),
        }
    }

    /// Step 3's listing (`sync` first, in the variant that calls it).
    fn list_leases(&self, st: &mut State, lock: Mine, lease: Option<Lease>) -> Step {
        if self.library == Library::CuratorSync {
            *st = State::Syncing(lock, lease);
            return Step::Send(self.sync_leases());
        }
        *st = State::Counting(lock, lease);
        Step::Send(self.count())
    }

    fn sync_leases(&self) -> Request {
        Request::Sync {
            path: ZPath::Fixed(self.leases()),
        }
    }

    /// Curator's look for its lease after a lost create reply: by guid.
    fn find() -> Request {
        Request::GetChildren {
            path: ZPath::Fixed(CURATOR_LEASES),
            watch: false,
        }
    }

    fn count(&self) -> Request {
        Request::GetChildren {
            path: ZPath::Fixed(self.leases()),
            watch: true,
        }
    }

    fn create_lease(&self, session: SessionId) -> Request {
        let (path, sequential) = match self.library {
            Library::Curator | Library::CuratorSync => (
                ZPath::Node {
                    dir: CURATOR_LEASES,
                    child: Child::named(LEASE, Some(session)),
                },
                true,
            ),
            Library::Kazoo => (Self::kazoo_lease(session), false),
        };
        Request::Create {
            path,
            ephemeral: true,
            sequential,
            data: Data::Empty,
        }
    }

    /// The mutex is ours: Curator makes its lease, kazoo counts first.
    fn locked(&self, session: SessionId, st: &mut State, lock: Mine) -> Step {
        match self.library {
            Library::Curator | Library::CuratorSync => {
                *st = State::Creating(lock);
                Step::Send(self.create_lease(session))
            }
            Library::Kazoo => self.list_leases(st, lock, None),
        }
    }

    /// A step of the mutex's acquisition; once it is held, on to the lease.
    fn locking(&self, session: SessionId, st: &mut State, step: Step) -> Step {
        match (step, *st) {
            (Step::Acquired { .. }, State::Locking(fair_predecessor::State::Holding(lock))) => {
                self.locked(session, st, lock)
            }
            (step, _) => step,
        }
    }

    /// Curator, step 3: a listing of the leases.
    fn curator_counted(&self, st: &mut State, lock: Mine, lease: Lease, leases: &[Child]) -> Step {
        // The store numbered the lease; one without a number is not ours.
        let Some(seq) = lease.node.seq else {
            return Step::Unexpected;
        };
        if !leases.contains(&lease.node) {
            return Step::SessionLost;
        }
        let held = leases.iter().filter(|c| c.prefix == LEASE).count();
        if held <= usize::from(self.permits) {
            self.unlock(st, lock, lease, u64::from(seq))
        } else {
            *st = State::Waiting(lock, Some(lease));
            Step::Wait
        }
    }

    /// kazoo, `_get_lease`: a listing of `/sem`.
    fn kazoo_counted(
        &self,
        session: SessionId,
        st: &mut State,
        lock: Mine,
        leases: &[Child],
    ) -> Step {
        let held = leases.iter().filter(|c| c.prefix == KAZOO_LEASE).count();
        if held < usize::from(self.permits) {
            *st = State::Claiming(lock, false);
            Step::Send(self.create_lease(session))
        } else {
            *st = State::Checking(lock, false);
            Step::Send(Request::Exists {
                path: Self::kazoo_lease(session),
                watch: false,
            })
        }
    }

    /// Step 5: the lease is ours; the mutex goes.
    fn unlock(&self, st: &mut State, lock: Mine, lease: Lease, token: u64) -> Step {
        *st = State::Unlocking(lease, token);
        Step::Send(Request::Delete {
            path: self.lock().place.node(lock.node),
            version: None,
        })
    }
}

impl Recipe for ZkSemaphore {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Semaphore(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match self.library {
            Library::Curator => None,
            Library::CuratorSync => Some("sync"),
            Library::Kazoo => Some("kazoo"),
        }
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    /// The mutex's and the leases' directories; the line (first in line)
    /// is the mutex's.
    fn setup(&self) -> Setup {
        let lock = self.lock().place;
        Setup {
            dirs: vec![lock.dir_path(), ZPath::Fixed(self.leases())],
            line: crate::recipe::Line {
                path: lock.dir_path(),
                keys: lock.dir,
            },
            ..Setup::bare()
        }
    }

    /// kazoo's lease watch sets `wake_event` whenever it fires; the
    /// requests after the listing (create, exists) do not lose it.
    fn notes_events(&self) -> bool {
        self.library == Library::Kazoo
    }

    fn note_event(&self, st: &mut State, event: &WatchEvent) {
        let leases_changed = matches!(
            event,
            WatchEvent::Zk {
                kind: ZkEvent::NodeChildrenChanged,
                path,
            } if *path == ZPath::Fixed(self.leases())
        );
        if let (State::Claiming(_, woken) | State::Checking(_, woken), true) = (st, leases_changed)
        {
            *woken = true;
        }
    }

    fn acquire(&self, session: SessionId) -> (State, Request) {
        match self.library {
            Library::Curator | Library::CuratorSync => {
                let (lock, req) = fair_predecessor::acquire(self.lock(), session);
                (State::Locking(lock), req)
            }
            Library::Kazoo => (
                State::Probing,
                Request::Exists {
                    path: Self::kazoo_lease(session),
                    watch: false,
                },
            ),
        }
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (State::Probing, Reply::Stat(None)) => {
                let (lock, req) = fair_predecessor::acquire(self.lock(), session);
                *st = State::Locking(lock);
                Step::Send(req)
            }
            (State::Locking(mut lock), reply) => {
                let step = fair_predecessor::on_reply(self.lock(), session, &mut lock, reply);
                *st = State::Locking(lock);
                self.locking(session, st, step)
            }
            (
                State::Creating(lock),
                Reply::Created {
                    path: ZPath::Node { child, .. },
                    ..
                },
            ) => self.list_leases(st, lock, Some(Lease { node: *child })),
            (State::Syncing(lock, lease), Reply::Synced) => {
                *st = State::Counting(lock, lease);
                Step::Send(self.count())
            }
            (State::SyncingToFind(lock), Reply::Synced) => {
                *st = State::Finding(lock);
                Step::Send(Self::find())
            }
            (State::Finding(lock), Reply::Children(leases)) => {
                match leases.iter().find(|c| c.guid == Some(session)) {
                    Some(node) => self.list_leases(st, lock, Some(Lease { node: *node })),
                    None => {
                        *st = State::Creating(lock);
                        Step::Send(self.create_lease(session))
                    }
                }
            }
            (State::Counting(lock, Some(lease)), Reply::Children(leases)) => {
                self.curator_counted(st, lock, lease, leases)
            }
            (State::Counting(lock, None), Reply::Children(leases)) => {
                self.kazoo_counted(session, st, lock, leases)
            }
            // kazoo's create; NodeExists is its own lease after a lost reply.
            (
                State::Claiming(lock, woken),
                Reply::Created { .. } | Reply::Error(ZkError::NodeExists),
            ) => {
                *st = State::Checking(lock, woken);
                Step::Send(Request::Exists {
                    path: Self::kazoo_lease(session),
                    watch: false,
                })
            }
            (State::Checking(lock, _), Reply::Stat(Some(stat))) => {
                let lease = Lease {
                    node: Child::named(KAZOO_LEASE, Some(session)),
                };
                self.unlock(st, lock, lease, stat.czxid)
            }
            // The leases changed since the listing: `wake_event` is set,
            // the wait returns at once, `_get_lease` again.
            (State::Checking(lock, true), Reply::Stat(None)) => self.list_leases(st, lock, None),
            (State::Checking(lock, false), Reply::Stat(None)) => {
                *st = State::Waiting(lock, None);
                Step::Wait
            }
            (State::Unlocking(lease, token), Reply::Deleted | Reply::Error(ZkError::NoNode)) => {
                *st = State::Holding(lease);
                Step::Acquired { token }
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            (State::Locking(mut lock), event) => {
                // The mutex re-lists on its predecessor's delete: it is
                // never won on an event itself.
                let step = fair_predecessor::on_event(self.lock(), &mut lock, event);
                *st = State::Locking(lock);
                step
            }
            (
                State::Waiting(lock, lease),
                WatchEvent::Zk {
                    kind: ZkEvent::NodeChildrenChanged,
                    path,
                },
            ) if *path == ZPath::Fixed(self.leases()) => self.list_leases(st, lock, lease),
            _ => Step::Wait,
        }
    }

    /// Curator's lease create is protected (its guid): a lost reply is
    /// looked for by listing; the mutex's requests as the lock resends them.
    fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
        match (*st, lost) {
            (State::Locking(mut lock), lost) => {
                let req = fair_predecessor::resend(self.lock(), &mut lock, lost);
                *st = State::Locking(lock);
                req
            }
            (State::Creating(lock), Request::Create { .. })
                if self.library == Library::CuratorSync =>
            {
                *st = State::SyncingToFind(lock);
                self.sync_leases()
            }
            (State::Creating(lock), Request::Create { .. }) => {
                *st = State::Finding(lock);
                Self::find()
            }
            _ => lost.clone(),
        }
    }

    fn release(&self, session: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding(lease) => Some(Request::Delete {
                path: match self.library {
                    Library::Curator | Library::CuratorSync => {
                        ZPath::child(CURATOR_LEASES, lease.node)
                    }
                    Library::Kazoo => Self::kazoo_lease(session),
                },
                version: None,
            }),
            State::Probing
            | State::Locking(_)
            | State::Creating(_)
            | State::Finding(_)
            | State::SyncingToFind(_)
            | State::Syncing(..)
            | State::Counting(..)
            | State::Claiming(..)
            | State::Checking(..)
            | State::Waiting(..)
            | State::Unlocking(..) => None,
        }
    }
}

impl SemaphoreRecipe for ZkSemaphore {
    fn for_permits(&self, k: u16) -> RecipeRef {
        RecipeRef::new(ZkSemaphore {
            permits: k,
            ..*self
        })
    }
}
