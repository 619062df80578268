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
//! the lock (Curator's transaction of two deletes is two requests here;
//! the item goes first, so nobody can take it in between). A consumer that
//! dies while processing leaves the item in the queue for another: it is
//! processed twice.

use super::{Registered, Variant};
use crate::ids::{Child, SessionId, ZPath};
use crate::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use crate::recipe::{App, Face, Recipe, RecipeRef, Setup, Step};
use crate::relabel::{Perm, Relabel};

pub const REGISTERED: Registered = Registered {
    name: "zk-fifo-queue",
    aliases: &[],
    summary: "the article's FIFO queue: producers create persistent-sequential elements, consumers getChildren(watch), take the lowest (getData, delete)",
    variants: &[
        Variant {
            name: "take-safe",
            summary: "ZooKeeper's DistributedQueue.take(): on NoNode, try the next child of the same listing",
            test_only: false,
        },
        Variant {
            name: "lock-safe",
            summary: "Curator's DistributedQueue with lockPath: lock the element (ephemeral /taken/<element>), process, then delete it",
            test_only: false,
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
    /// `getChildren(/lock, watch)` in flight.
    Listing,
    /// The queue was empty: waiting for the watch.
    Waiting,
    /// `create(/taken/<head>, ephemeral)` in flight (lock-safe).
    Locking {
        head: Child,
        rest: Vec<Child>,
    },
    /// `getData(head)` in flight.
    Reading {
        head: Child,
        rest: Vec<Child>,
    },
    /// `delete(head)` in flight; `item` is what `getData` read.
    Deleting {
        head: Child,
        item: u64,
        rest: Vec<Child>,
    },
    /// `delete(/taken/<head>)` in flight after `head` was gone (lock-safe).
    Unlocking {
        head: Child,
        rest: Vec<Child>,
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

impl Relabel for State {
    fn relabel(&mut self, p: &Perm) {
        match self {
            State::Locking { head, rest }
            | State::Reading { head, rest }
            | State::Deleting { head, rest, .. }
            | State::Unlocking { head, rest } => {
                head.relabel(p);
                rest.relabel(p);
            }
            State::Took { head, .. } | State::DeletingLock { head } => head.relabel(p),
            State::Enqueuing { .. } | State::Enqueued { .. } | State::Listing | State::Waiting => {}
        }
    }
}

fn produce(item: u64) -> Request {
    Request::Create {
        path: ZPath::Child(Child { guid: None, seq: 0 }),
        ephemeral: false,
        sequential: true,
        data: item,
    }
}

fn list() -> Request {
    Request::GetChildren {
        path: ZPath::Lock,
        watch: true,
    }
}

fn read(head: Child) -> Request {
    Request::GetData {
        path: ZPath::Child(head),
        watch: false,
    }
}

fn delete(head: Child) -> Request {
    Request::Delete {
        path: ZPath::Child(head),
    }
}

fn lock(head: Child) -> Request {
    Request::Create {
        path: ZPath::Taken(head),
        ephemeral: true,
        sequential: false,
        data: 0,
    }
}

fn unlock(head: Child) -> Request {
    Request::Delete {
        path: ZPath::Taken(head),
    }
}

impl ZkFifoQueue {
    /// The first request for the children of a listing, in order: the
    /// article looks at the lowest only.
    fn take_from(&self, st: &mut State, children: &[Child]) -> Step {
        let Some((&head, rest)) = children.split_first() else {
            *st = State::Waiting;
            return Step::Wait;
        };
        let rest = match self.take {
            Take::Article => Vec::new(),
            Take::NextOnNoNode | Take::LockFirst => rest.to_vec(),
        };
        match self.take {
            Take::Article | Take::NextOnNoNode => {
                *st = State::Reading { head, rest };
                Step::Send(read(head))
            }
            Take::LockFirst => {
                *st = State::Locking { head, rest };
                Step::Send(lock(head))
            }
        }
    }

    /// `head` was gone (or locked by another): the next child of the
    /// listing, or a new listing (the article always lists again).
    fn next_child(&self, st: &mut State, rest: &[Child]) -> Step {
        if rest.is_empty() {
            *st = State::Listing;
            return Step::Send(list());
        }
        self.take_from(st, rest)
    }
}

impl Recipe for ZkFifoQueue {
    type State = State;

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

    fn setup(&self) -> Setup {
        Setup { lock_dir: true }
    }

    fn app(&self) -> App {
        App::Queue
    }

    fn enqueue(&self, _: SessionId, item: u64) -> Option<(State, Request)> {
        Some((State::Enqueuing { item }, produce(item)))
    }

    /// A consumer's round: one `consume()`.
    fn acquire(&self, _: SessionId) -> (State, Request) {
        (State::Listing, list())
    }

    fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (st.clone(), reply) {
            (State::Enqueuing { item }, Reply::Created { .. }) => {
                *st = State::Enqueued { item };
                Step::Acquired { token: item }
            }
            (State::Listing, Reply::Children(children)) => self.take_from(st, children),
            (State::Locking { head, rest }, Reply::Created { .. }) => {
                *st = State::Reading { head, rest };
                Step::Send(read(head))
            }
            (State::Locking { rest, .. }, Reply::Error(ZkError::NodeExists)) => {
                self.next_child(st, &rest)
            }
            (State::Reading { head, rest }, Reply::Stat(Some(stat))) => match self.take {
                Take::Article | Take::NextOnNoNode => {
                    *st = State::Deleting {
                        head,
                        item: stat.data,
                        rest,
                    };
                    Step::Send(delete(head))
                }
                // Processed before it is deleted.
                Take::LockFirst => {
                    *st = State::Took {
                        head,
                        item: stat.data,
                    };
                    Step::Acquired { token: stat.data }
                }
            },
            (State::Reading { head, rest }, Reply::Error(ZkError::NoNode)) => match self.take {
                Take::Article => {
                    *st = State::Listing;
                    Step::Send(list())
                }
                Take::NextOnNoNode => self.next_child(st, &rest),
                Take::LockFirst => {
                    *st = State::Unlocking { head, rest };
                    Step::Send(unlock(head))
                }
            },
            (State::Deleting { head, item, .. }, Reply::Deleted) => {
                *st = State::Took { head, item };
                Step::Acquired { token: item }
            }
            (State::Deleting { rest, .. }, Reply::Error(ZkError::NoNode)) => match self.take {
                Take::Article => {
                    *st = State::Listing;
                    Step::Send(list())
                }
                Take::NextOnNoNode | Take::LockFirst => self.next_child(st, &rest),
            },
            (State::Unlocking { rest, .. }, Reply::Deleted | Reply::Error(ZkError::NoNode)) => {
                self.next_child(st, &rest)
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (&*st, event) {
            (
                State::Waiting,
                WatchEvent::Zk {
                    kind: ZkEvent::NodeChildrenChanged,
                    path: ZPath::Lock,
                },
            ) => {
                *st = State::Listing;
                Step::Send(list())
            }
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
                *st = State::Listing;
                list()
            }
        }
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
            | State::Listing
            | State::Waiting
            | State::Locking { .. }
            | State::Reading { .. }
            | State::Deleting { .. }
            | State::Unlocking { .. }
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
