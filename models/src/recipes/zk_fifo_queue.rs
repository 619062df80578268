//! zk-fifo-queue: the producer/consumer queue of the widely read ZooKeeper
//! article on queues and barriers. `/lock` plays the article's queue root
//! (`/app1`), its persistent-sequential children the `element` nodes; an
//! element's data is its item.
//!
//! Producer (`produce(i)`): `create(/lock/lock-, persistent-sequential,
//! data = i)`. A create whose reply is lost is sent again, as a retrying
//! client library does (the article's raw producer would drop the item on
//! ConnectionLoss instead); the store may then hold the item twice.
//!
//! Consumer (`consume()`), as the article has it:
//! 1. `getChildren(/lock, watch)`. If empty, wait for the watch, then 1.
//! 2. Take the lowest: `getData(lowest)`, then `delete(lowest)`; the item is
//!    the consumer's once the delete succeeds.
//! 3. Any KeeperException (a NoNode: another consumer took it first; a
//!    ConnectionLoss: a reply lost) ends `consume()`; the article's main
//!    loop catches it (`i--`) and calls `consume()` again: back to 1.
//!
//! Variant `take-safe`, ZooKeeper's `DistributedQueue.take()`: from one
//! listing it tries each child in order, going on to the next on NoNode
//! (`// Another client deleted the node first.`), and lists again only when
//! every child was gone. It saves re-listing after a lost race; a lost
//! delete reply still looks like one.
//!
//! Variant `lock-safe`, Curator's `DistributedQueue` built with `lockPath`:
//! for each child in order, `create(/taken/<child>, ephemeral)` (NodeExists:
//! another consumer has it, next child); `getData(child)` (NoNode: gone,
//! drop the lock, next child); process the item; then delete the item and
//! its lock (`processWithLockSafety`; Curator's delete and its `finally`
//! are two requests here, the item first, so nobody can take it in
//! between). A pass over a listing that took nothing waits until the queue
//! changes from what it listed (Curator's `ChildrenCache` and
//! `blockingNextGetData`); nothing watches `/taken`, so an item whose
//! holder died waits for the queue's next change. A consumer that dies
//! while processing leaves the item for another: it is processed twice.
//! Curator works through a whole listing before it lists again; here a
//! consumer lists again after each item it took (one item a round).

use super::names::{claim, member, new_member, LOCK, TAKEN_DIR};
use super::{Registered, Variant, VariantKind};
use crate::ids::Data;
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{Application, Face, QueueRecipe, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-fifo-queue",
    aliases: &[],
    summary: "the article's FIFO queue: producers create persistent-sequential elements, consumers getChildren(watch), take the lowest (getData, delete)",
    variants: &[
        Variant {
            name: "take-safe",
            summary: "ZooKeeper's DistributedQueue.take(): on NoNode, try the next child of the same listing",
            kind: VariantKind::Departure,
        },
        Variant {
            name: "lock-safe",
            summary: "Curator's DistributedQueue with lockPath: lock the element (ephemeral /taken/<element>), process, then delete it",
            kind: VariantKind::Departure,
        },
    ],
    build: |variant| {
        RecipeRef::new(ZkFifoQueue {
            take: match variant {
                Some("take-safe") => Take::NextOnNoNode,
                Some("lock-safe") => Take::LockFirst,
                _ => Take::Article,
            },
        })
    },
};

/// How a consumer takes an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Take {
    /// The article: the lowest child; any error starts `consume()` over.
    Article,
    /// `DistributedQueue.take()`: each child of the listing in turn.
    NextOnNoNode,
    /// Curator's lock-safe mode: lock, read, process, delete.
    LockFirst,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZkFifoQueue {
    pub take: Take,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// A producer's create of its item's element is in flight.
    Enqueuing {
        item: u64,
    },
    Enqueued {
        item: u64,
    },
    /// `getChildren(/lock, watch)` in flight. Lock-safe, after a pass over
    /// `unchanged_from` that took nothing: if the queue still holds just
    /// that, wait for it to change (Curator's `blockingNextGetData`).
    Listing {
        unchanged_from: Option<Vec<Child>>,
    },
    /// Waiting for the watch: the queue was empty (or, lock-safe, unchanged).
    Waiting,
    /// Working through `listing` (in sequence order), at `listing[at]`:
    Taking {
        listing: Vec<Child>,
        at: usize,
        step: TakeStep,
    },
    /// The item is the consumer's: being processed.
    Took {
        head: Child,
        item: u64,
    },
    /// Releasing (lock-safe): after `delete(head)` (sent from `Took`),
    /// `delete(/taken/<head>)` in flight.
    DeletingLock {
        head: Child,
    },
}

/// Where a consumer is with the element it is trying to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TakeStep {
    /// `create(/taken/<element>, ephemeral)` in flight (lock-safe).
    Locking,
    /// `getData(element)` in flight.
    Reading,
    /// `delete(element)` in flight; `item` is what `getData` read.
    Deleting { item: u64 },
    /// `delete(/taken/<element>)` in flight: the element was gone (lock-safe).
    Unlocking,
}

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Listing { unchanged_from } => unchanged_from.relabel(p),
            State::Taking { listing, .. } => listing.relabel(p),
            State::Took { head, .. } | State::DeletingLock { head } => head.relabel(p),
            State::Enqueuing { .. } | State::Enqueued { .. } | State::Waiting => {}
        }
    }
}

fn produce(item: u64) -> Request {
    Request::Create {
        path: new_member(None),
        ephemeral: false,
        sequential: true,
        data: Data::Number(item),
    }
}

fn list() -> Request {
    Request::GetChildren {
        path: LOCK,
        watch: true,
    }
}

fn read(head: Child) -> Request {
    Request::GetData {
        path: member(head),
        watch: false,
    }
}

fn delete(head: Child) -> Request {
    Request::Delete {
        path: member(head),
        version: None,
    }
}

fn lock(head: Child) -> Request {
    Request::Create {
        path: claim(head),
        ephemeral: true,
        sequential: false,
        data: Data::Empty,
    }
}

fn unlock(head: Child) -> Request {
    Request::Delete {
        path: claim(head),
        version: None,
    }
}

impl ZkFifoQueue {
    /// Starts on `listing[at]`: the article looks at the lowest only;
    /// `take()` and Curator go down the listing.
    fn take_at(&self, st: &mut State, listing: Vec<Child>, at: usize) -> Step {
        let Some(&head) = listing.get(at) else {
            return self.exhausted(st, listing);
        };
        let (step, req) = match self.take {
            Take::Article | Take::NextOnNoNode => (TakeStep::Reading, read(head)),
            Take::LockFirst => (TakeStep::Locking, lock(head)),
        };
        *st = State::Taking { listing, at, step };
        Step::Send(req)
    }

    /// A listing came: wait if there is nothing (new) to take.
    fn listed(&self, st: &mut State, children: &[Child]) -> Step {
        let unchanged = matches!(st, State::Listing { unchanged_from: Some(l) } if l == children);
        if children.is_empty() || unchanged {
            *st = State::Waiting;
            return Step::Wait;
        }
        // The article looks at the lowest only.
        let listing = match self.take {
            Take::Article => children[..1].to_vec(),
            Take::NextOnNoNode | Take::LockFirst => children.to_vec(),
        };
        self.take_at(st, listing, 0)
    }

    /// `listing[at]` was gone (or locked by another): the next element; the
    /// article always lists again.
    fn next(&self, st: &mut State, listing: Vec<Child>, at: usize) -> Step {
        match self.take {
            Take::Article => self.list_again(st, None),
            // What was tried no longer matters to `take()`.
            Take::NextOnNoNode => self.take_at(st, listing[at + 1..].to_vec(), 0),
            // Curator compares the next listing with the whole of this one.
            Take::LockFirst => self.take_at(st, listing, at + 1),
        }
    }

    /// Every element of `listing` was tried and none taken: `take()` lists
    /// again; Curator waits for the queue to change from what it saw.
    fn exhausted(&self, st: &mut State, listing: Vec<Child>) -> Step {
        match self.take {
            Take::Article | Take::NextOnNoNode => self.list_again(st, None),
            Take::LockFirst => self.list_again(st, Some(listing)),
        }
    }

    fn list_again(&self, st: &mut State, unchanged_from: Option<Vec<Child>>) -> Step {
        *st = State::Listing { unchanged_from };
        Step::Send(list())
    }

    /// A reply while working on `listing[at]`.
    fn taking(
        &self,
        st: &mut State,
        (listing, at, step): (Vec<Child>, usize, TakeStep),
        reply: &Reply,
    ) -> Step {
        let head = listing[at];
        match (step, reply) {
            (TakeStep::Locking, Reply::Created { .. }) => {
                *st = State::Taking {
                    listing,
                    at,
                    step: TakeStep::Reading,
                };
                Step::Send(read(head))
            }
            (TakeStep::Locking, Reply::Error(ZkError::NodeExists)) => self.next(st, listing, at),
            (TakeStep::Reading, Reply::Stat(Some(stat))) => match self.take {
                Take::Article | Take::NextOnNoNode => {
                    *st = State::Taking {
                        listing,
                        at,
                        step: TakeStep::Deleting {
                            item: stat.data.number().unwrap_or(0),
                        },
                    };
                    Step::Send(delete(head))
                }
                // Processed before it is deleted.
                Take::LockFirst => {
                    *st = State::Took {
                        head,
                        item: stat.data.number().unwrap_or(0),
                    };
                    Step::Acquired {
                        token: stat.data.number().unwrap_or(0),
                    }
                }
            },
            (TakeStep::Reading, Reply::Error(ZkError::NoNode)) => match self.take {
                Take::Article | Take::NextOnNoNode => self.next(st, listing, at),
                Take::LockFirst => {
                    *st = State::Taking {
                        listing,
                        at,
                        step: TakeStep::Unlocking,
                    };
                    Step::Send(unlock(head))
                }
            },
            (TakeStep::Deleting { item }, Reply::Deleted) => {
                *st = State::Took { head, item };
                Step::Acquired { token: item }
            }
            (TakeStep::Deleting { .. }, Reply::Error(ZkError::NoNode)) => {
                self.next(st, listing, at)
            }
            (TakeStep::Unlocking, Reply::Deleted | Reply::Error(ZkError::NoNode)) => {
                self.next(st, listing, at)
            }
            _ => Step::Unexpected,
        }
    }
}

impl Recipe for ZkFifoQueue {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Queue(self)
    }

    fn name(&self) -> &'static str {
        REGISTERED.name
    }

    fn variant(&self) -> Option<&'static str> {
        match self.take {
            Take::Article => None,
            Take::NextOnNoNode => Some("take-safe"),
            Take::LockFirst => Some("lock-safe"),
        }
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    /// The queue is `/lock`; the lock-safe consumer claims an element
    /// under `/taken` (Curator's `lockPath`), a persistent directory.
    fn setup(&self) -> Setup {
        match self.take {
            Take::LockFirst => Setup {
                dirs: vec![LOCK, ZPath::Fixed(TAKEN_DIR)],
                claims: Some(TAKEN_DIR),
                ..Setup::lock_dir()
            },
            Take::Article | Take::NextOnNoNode => Setup::lock_dir(),
        }
    }

    /// A consumer's round: one `consume()`.
    fn acquire(&self, _: SessionId) -> (State, Request) {
        (
            State::Listing {
                unchanged_from: None,
            },
            list(),
        )
    }

    fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (st.clone(), reply) {
            (State::Enqueuing { item }, Reply::Created { .. }) => {
                *st = State::Enqueued { item };
                Step::Acquired { token: item }
            }
            (State::Listing { .. }, Reply::Children(children)) => self.listed(st, children),
            (State::Taking { listing, at, step }, _) => self.taking(st, (listing, at, step), reply),
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (&*st, event) {
            (
                State::Waiting,
                WatchEvent::Zk {
                    kind: ZkEvent::NodeChildrenChanged,
                    path,
                },
            ) if *path == LOCK => self.list_again(st, None),
            _ => Step::Wait,
        }
    }

    /// ConnectionLoss: the raw ZooKeeper handle throws, and the consumer
    /// calls `consume()` (`take()`) again; Curator retries the operation. A
    /// producer sends its create again (see the module documentation).
    fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
        match (self.take, &*st) {
            (_, State::Enqueuing { .. }) | (Take::LockFirst, _) => lost.clone(),
            (Take::Article | Take::NextOnNoNode, _) => {
                *st = State::Listing {
                    unchanged_from: None,
                };
                list()
            }
        }
    }

    /// One producer, `n - 1` idle consumers, every one watching the
    /// queue's children: each enqueue wakes them all, and so does the
    /// winner's delete (each re-listed with a watch when it woke). Two
    /// changes per item, `n - 1` notifications each.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        (k <= 2 * crate::recipe::HERD_QUEUE_ITEMS).then_some(n - 1)
    }

    /// A producer has nothing to give up; a consumer of the article or
    /// `take()` has deleted its item already; a lock-safe consumer deletes
    /// the item it processed, then its lock.
    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Took { head, .. } if self.take == Take::LockFirst => Some(delete(*head)),
            State::Took { .. }
            | State::Enqueuing { .. }
            | State::Enqueued { .. }
            | State::Listing { .. }
            | State::Waiting
            | State::Taking { .. }
            | State::DeletingLock { .. } => None,
        }
    }

    fn on_release_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (st.clone(), reply) {
            (State::Took { head, .. }, Reply::Deleted | Reply::Error(ZkError::NoNode)) => {
                *st = State::DeletingLock { head };
                Step::Send(unlock(head))
            }
            (State::DeletingLock { .. }, Reply::Deleted | Reply::Error(ZkError::NoNode)) => {
                Step::Released
            }
            _ => Step::Unexpected,
        }
    }
}

impl QueueRecipe<State> for ZkFifoQueue {
    fn enqueue(&self, _: SessionId, item: u64) -> (State, Request) {
        (State::Enqueuing { item }, produce(item))
    }
}
