//! Virtual time's event queue: events ordered by (time, sequence number),
//! and the housekeeping that drops timer events made stale by a cancel or a
//! re-set once they are most of the queue.
//!
//! Keys are 128-bit — the time, then the sequence number with the event's
//! slot — and the events themselves wait in a slab and never move. Virtual
//! time never goes back and sequence numbers only grow, so every key pushed
//! is above the last one popped: a radix heap orders them, with buckets by
//! the highest bit in which a key differs from the last popped, where each
//! key moves down a few buckets in its life instead of being sifted through
//! a binary heap on every push and pop.

use models::msg::{Msg, Timer};
use stateright::actor::Id;

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
    /// time << 64 | sequence number << 24 | slot: sequence numbers are
    /// unique, so the slot never decides the order.
    heap: RadixHeap,
    slab: Vec<Option<Event>>,
    free: Vec<u32>,
    seq: u64,
    /// Timer events in the heap that a cancel or a re-set made stale.
    stale: usize,
}

/// Slots take the low 24 bits of a heap key: at most this many events wait
/// at once (a run of 10,000 clients has a few tens of thousands).
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;

impl EventQueue {
    pub fn push(&mut self, at: u64, event: Event) {
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = Some(event);
                s as u64
            }
            None => {
                self.slab.push(Some(event));
                self.slab.len() as u64 - 1
            }
        };
        assert!(
            slot <= SLOT_MASK && self.seq < 1 << (64 - SLOT_BITS),
            "more than 16 M events waiting at once, or 2^40 events in one run"
        );
        self.heap
            .push(u128::from(at) << 64 | u128::from(self.seq << SLOT_BITS | slot));
    }

    pub fn pop(&mut self) -> Option<Queued> {
        let k = self.heap.pop()?;
        let (at, key) = ((k >> 64) as u64, k as u64);
        let slot = (key & SLOT_MASK) as usize;
        let event = self.slab[slot]
            .take()
            .expect("a queued event's slot is full");
        self.free.push(slot as u32);
        Some(Queued {
            at,
            seq: key >> SLOT_BITS,
            event,
        })
    }

    /// A timer event went stale. Once most of the queue is such events,
    /// drop them, so memory follows the live events rather than every
    /// timer ever set.
    pub fn went_stale(&mut self, is_stale: impl Fn(&Event) -> bool) {
        self.stale += 1;
        if self.stale < 4096 || self.stale * 2 < self.heap.len() {
            return;
        }
        let (slab, free) = (&mut self.slab, &mut self.free);
        self.heap.retain(|k| {
            let slot = (k as u64 & SLOT_MASK) as usize;
            let stale = slab[slot].as_ref().is_some_and(&is_stale);
            if stale {
                slab[slot] = None;
                free.push(slot as u32);
            }
            !stale
        });
        self.stale = 0;
    }
}

/// A monotone priority queue of distinct keys: every key pushed is above
/// the last popped. Bucket `b > 0` holds keys whose highest bit differing
/// from the last popped key is bit `b - 1`; bucket 0 the last popped key
/// itself (never, keys being distinct, once it is popped).
struct RadixHeap {
    last: u128,
    buckets: Vec<Vec<u128>>,
    /// Bit `b`: bucket `b + 1` is not empty (bucket 0 is looked at directly).
    nonempty: u128,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            buckets: vec![Vec::new(); 129],
            nonempty: 0,
            len: 0,
        }
    }
}

impl RadixHeap {
    fn bucket(&self, k: u128) -> usize {
        128 - (k ^ self.last).leading_zeros() as usize
    }

    fn push(&mut self, k: u128) {
        assert!(
            k > self.last || self.len == 0 && k >= self.last,
            "an event pushed before the last one popped: virtual time went back"
        );
        self.put(k);
        self.len += 1;
    }

    fn put(&mut self, k: u128) {
        let b = self.bucket(k);
        self.buckets[b].push(k);
        if b > 0 {
            self.nonempty |= 1 << (b - 1);
        }
    }

    fn pop(&mut self) -> Option<u128> {
        if self.buckets[0].is_empty() {
            // The smallest key is the least of the first non-empty bucket;
            // it becomes the last, and its bucket's keys move down.
            if self.nonempty == 0 {
                return None;
            }
            let b = self.nonempty.trailing_zeros() as usize + 1;
            self.nonempty &= !(1 << (b - 1));
            let mut keys = std::mem::take(&mut self.buckets[b]);
            self.last = *keys.iter().min().expect("a non-empty bucket");
            for &k in &keys {
                self.put(k);
            }
            // Hand the emptied vector back, to keep its capacity.
            keys.clear();
            self.buckets[b] = keys;
        }
        self.len -= 1;
        self.buckets[0].pop()
    }

    fn len(&self) -> usize {
        self.len
    }

    fn retain(&mut self, mut keep: impl FnMut(u128) -> bool) {
        self.nonempty = 0;
        for (i, b) in self.buckets.iter_mut().enumerate() {
            b.retain(|&k| keep(k));
            if i > 0 && !b.is_empty() {
                self.nonempty |= 1 << (i - 1);
            }
        }
        self.len = self.buckets.iter().map(Vec::len).sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_radix_heap_pops_in_order_as_keys_are_pushed_above_the_last() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut heap = RadixHeap::default();
        let mut reference = std::collections::BTreeSet::new();
        let mut last = 0u128;
        for _ in 0..20_000 {
            if rng.random_bool(0.55) {
                let bits = rng.random_range(0..100);
                let k = last + 1 + rng.random_range(0..1u128 << bits);
                if reference.insert(k) {
                    heap.push(k);
                }
            } else {
                let want = reference.pop_first();
                assert_eq!(heap.pop(), want);
                if let Some(k) = want {
                    last = k;
                }
            }
            assert_eq!(heap.len(), reference.len());
        }
        while let Some(k) = reference.pop_first() {
            assert_eq!(heap.pop(), Some(k));
        }
        assert_eq!(heap.pop(), None);
    }
}
