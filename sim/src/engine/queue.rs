//! Virtual time's event queue: events ordered by (time, sequence number),
//! and the housekeeping that drops timer events made stale by a cancel or a
//! re-set once they are most of the queue.

use models::msg::{Msg, Timer};
use stateright::actor::Id;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens at a point in virtual time.
#[derive(Clone, Debug)]
pub(super) enum Event {
    Deliver {
        from: Id,
        to: Id,
        msg: Msg,
    },
    Timer {
        actor: Id,
        timer: Timer,
        generation: u64,
    },
    FaultStart(usize),
    FaultEnd(usize),
    /// A partition has lasted the client's read timeout: its connection
    /// drops (the fault's index).
    ReadTimeout(usize),
}

/// An event with its place in the order.
pub(super) struct Queued {
    pub at: u64,
    pub seq: u64,
    pub event: Event,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The queue of what is to happen.
#[derive(Default)]
pub(super) struct EventQueue {
    heap: BinaryHeap<Reverse<Queued>>,
    seq: u64,
    /// Timer events in the heap that a cancel or a re-set made stale.
    stale: usize,
}

impl EventQueue {
    pub fn push(&mut self, at: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse(Queued {
            at,
            seq: self.seq,
            event,
        }));
    }

    pub fn pop(&mut self) -> Option<Queued> {
        self.heap.pop().map(|Reverse(q)| q)
    }

    /// A timer event went stale. Once most of the queue is such events,
    /// drop them, so memory follows the live events rather than every
    /// timer ever set.
    pub fn went_stale(&mut self, is_stale: impl Fn(&Event) -> bool) {
        self.stale += 1;
        if self.stale < 4096 || self.stale * 2 < self.heap.len() {
            return;
        }
        let heap = std::mem::take(&mut self.heap);
        self.heap = heap
            .into_iter()
            .filter(|Reverse(q)| !is_stale(&q.event))
            .collect();
        self.stale = 0;
    }
}
