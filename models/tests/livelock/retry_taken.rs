//! A test-only livelock: the article's queue consumer (`zk-fifo-queue`),
//! except that when the element it read is gone (NoNode: another consumer
//! took it) it reads the same element again instead of listing the queue
//! again — forever, while the other consumers drain the queue. Shared by
//! the model tests and the simulator's (`#[path]`), so it is written once.

use models::ids::SessionId;
use models::msg::{Reply, Request, WatchEvent, ZkError};
use models::recipe::{Application, Face, QueueRecipe, Recipe, RecipeRef, Setup, Step};
use models::recipes::names::member;
use models::recipes::zk_fifo_queue::{State, Take, TakeStep, ZkFifoQueue};

#[derive(Debug)]
pub struct RetryTaken(ZkFifoQueue);

/// The livelocking consumer, ready for either engine.
pub fn retry_taken() -> RecipeRef {
    RecipeRef::new(RetryTaken(ZkFifoQueue {
        take: Take::Article,
    }))
}

impl Recipe for RetryTaken {
    type State = State;
    fn name(&self) -> &'static str {
        "retry-taken"
    }
    fn face(&self) -> Face {
        self.0.face()
    }
    fn setup(&self) -> Setup {
        self.0.setup()
    }
    fn application(&self) -> Application<'_, State> {
        Application::Queue(self)
    }
    fn acquire(&self, s: SessionId) -> (State, Request) {
        self.0.acquire(s)
    }
    fn on_reply(&self, s: SessionId, st: &mut State, reply: &Reply) -> Step {
        if let (
            State::Taking {
                listing,
                at,
                step: TakeStep::Reading,
            },
            Reply::Error(ZkError::NoNode),
        ) = (&*st, reply)
        {
            // The bug: the same read again, the state as it was.
            return Step::Send(Request::GetData {
                path: member(listing[*at]),
                watch: false,
            });
        }
        self.0.on_reply(s, st, reply)
    }
    fn on_event(&self, st: &mut State, ev: &WatchEvent) -> Step {
        self.0.on_event(st, ev)
    }
    fn on_lost_reply(&self, st: &mut State, lost: &Request) -> Request {
        self.0.on_lost_reply(st, lost)
    }
    fn release(&self, s: SessionId, st: &State) -> Option<Request> {
        self.0.release(s, st)
    }
    fn on_release_reply(&self, s: SessionId, st: &mut State, reply: &Reply) -> Step {
        self.0.on_release_reply(s, st, reply)
    }
}

impl QueueRecipe<State> for RetryTaken {
    fn enqueue(&self, s: SessionId, item: u64) -> (State, Request) {
        self.0.enqueue(s, item)
    }
}
