//! Virtual time's event queue: events ordered by (time, sequence number),
//! and the housekeeping that drops timer events made stale by a cancel or a
//! re-set once they are most of the queue.
//!
//! The events wait in a slab and never move. Sequence numbers only grow, so
//! each instant's events arrive in order and wait in a FIFO of slots; the
//! distinct instants are ordered by a radix heap — virtual time never goes
//! back, so every instant pushed is after the last one popped, and each
//! moves down a few buckets (by the highest bit in which it differs from the
//! last popped) instead of being sifted through a binary heap.

use models::ids::{ClientIdx, SessionId};
use models::msg::{Msg, Timer};
use stateright::actor::Id;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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
    /// A ZooKeeper client's ping or handshake went unanswered (its server
    /// holds the session's request, and the answer waits behind it): its
    /// read or connect timeout runs out now, unless what it awaited came.
    Unanswered {
        client: ClientIdx,
        awaited: Awaited,
    },
    /// Redis: the first master's oldest change reaches its replica, if the
    /// backlog it was sent from (its `generation`) was not lost since.
    Replicate {
        generation: u64,
    },
    /// An ensemble: follower `server` applies the next committed entry
    /// (unless its stream was started anew since: a failover).
    Apply {
        server: u8,
        generation: u64,
    },
    /// An ensemble: cut-off follower `server` gives the leader up, or a
    /// deposed leader `server` gives leading up.
    FollowerDrop {
        server: u8,
    },
    /// An ensemble: cut-off server `server` follows the leader again.
    Rejoin {
        server: u8,
    },
    /// An ensemble whose leader is cut off: the followers elect another.
    Elect,
}

/// What a ZooKeeper client's server left unanswered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Awaited {
    /// A ping: the read timeout runs from `since_us`, when the client last
    /// heard from the store or made its connection, whichever is later;
    /// anything heard since is an answer, and a new connection ends the
    /// wait (its own pings are checked afresh).
    Ping { since_us: u64 },
    /// The handshake of `session` (the connect sent under `epoch`): the
    /// connect timeout runs from its arrival; only its reply answers it.
    Handshake { session: SessionId, epoch: u8 },
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
///
/// Sequence numbers only grow, so the events of one instant are pushed in
/// their order: each instant keeps its events in a chain (linked through
/// the slab) in that order, and only the distinct instants go through the
/// radix heap. A store step that sends a thousand notifications, all due
/// one latency later, costs a thousand links and one heap push, not a
/// thousand heap keys.
#[derive(Default)]
pub(super) struct EventQueue {
    /// The pending instants after `now`, each once.
    times: RadixHeap,
    /// Each pending instant's chain of events (its index in `chains`).
    at: HashMap<u64, u32, BuildHasherDefault<MixHasher>>,
    /// The pending instants' chains, and the unused entries.
    chains: Vec<Chain>,
    free_chains: Vec<u32>,
    /// A pending instant pushed to lately and its chain (always a key of
    /// `at`, cleared when its instant is popped or its chain dropped): a
    /// herd's thousand sends to one instant look it up once, not a
    /// thousand times.
    hot: Option<(u64, u32)>,
    /// The earliest instant, being drained, and what is left of its chain.
    now: u64,
    current: Option<Chain>,
    /// Per slot: its event's sequence number and the event.
    slab: Vec<Option<(u64, Event)>>,
    /// Per slot: the next event of its instant, or `NO_NEXT`.
    next: Vec<u32>,
    free: Vec<u32>,
    seq: u64,
    len: usize,
    /// Timer events in the queue that a re-set made stale.
    stale: usize,
}

/// An instant's events, first and last, linked in sequence order.
#[derive(Clone, Copy)]
struct Chain {
    head: u32,
    tail: u32,
}

const NO_NEXT: u32 = u32::MAX;

impl EventQueue {
    pub fn push(&mut self, at: u64, event: Event) {
        let seq = self.reserve_seq();
        self.push_at(at, seq, event);
    }

    /// The next sequence number, for an event queued later (see
    /// `push_at`).
    pub fn reserve_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Queues `event` at `at` with a sequence number reserved earlier: it
    /// takes its place among the instant's events by that number.
    /// The sequence number the next event will get: every event queued so
    /// far has a smaller one.
    pub fn next_seq(&self) -> u64 {
        self.seq + 1
    }

    pub fn push_at(&mut self, at: u64, seq: u64, event: Event) {
        assert!(
            at >= self.now,
            "an event pushed before the last one popped: virtual time went back"
        );
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                let s = u32::try_from(self.slab.len())
                    .ok()
                    .filter(|&s| s != NO_NEXT)
                    .expect("fewer than 4 G events waiting");
                self.slab.push(None);
                self.next.push(NO_NEXT);
                s
            }
        };
        // Written once, straight from the caller's event.
        self.slab[slot as usize] = Some((seq, event));
        self.next[slot as usize] = NO_NEXT;
        self.len += 1;
        let alone = Chain {
            head: slot,
            tail: slot,
        };
        let chain = if at == self.now {
            match &mut self.current {
                Some(c) => c,
                None => {
                    self.current = Some(alone);
                    return;
                }
            }
        } else {
            let (i, new) = match self.hot {
                Some((t, i)) if t == at => (i, false),
                _ => match self.at.entry(at) {
                    Entry::Occupied(e) => (*e.get(), false),
                    Entry::Vacant(e) => {
                        let i = match self.free_chains.pop() {
                            Some(i) => {
                                self.chains[i as usize] = alone;
                                i
                            }
                            None => {
                                self.chains.push(alone);
                                // No more chains than slots, whose count
                                // is checked above.
                                (self.chains.len() - 1) as u32
                            }
                        };
                        e.insert(i);
                        self.times.push(at);
                        (i, true)
                    }
                },
            };
            self.hot = Some((at, i));
            if new {
                return;
            }
            &mut self.chains[i as usize]
        };
        link(&self.slab, &mut self.next, chain, slot, seq);
    }

    /// Whether any queued event is one `pred` looks for (a scan of every
    /// waiting event: for the rare question, not the hot path).
    pub fn any(&self, pred: impl Fn(&Event) -> bool) -> bool {
        self.slab.iter().flatten().any(|(_, e)| pred(e))
    }

    pub fn pop(&mut self) -> Option<Queued> {
        let slot = loop {
            if let Some(c) = &mut self.current {
                let slot = c.head;
                if slot == c.tail {
                    self.current = None;
                } else {
                    c.head = self.next[slot as usize];
                }
                break slot;
            }
            let t = self.times.pop()?;
            // An instant whose events all went stale has no chain left.
            self.current = self.at.remove(&t).map(|i| {
                self.free_chains.push(i);
                self.chains[i as usize]
            });
            if self.hot.is_some_and(|(h, _)| h == t) {
                self.hot = None;
            }
            self.now = t;
        };
        self.len -= 1;
        let (seq, event) = self.slab[slot as usize]
            .take()
            .expect("a queued event's slot is full");
        self.free.push(slot);
        Some(Queued {
            at: self.now,
            seq,
            event,
        })
    }

    /// A timer event went stale. Once most of the queue is such events,
    /// drop them, so memory follows the live events rather than every
    /// timer ever set.
    pub fn went_stale(&mut self, is_stale: impl Fn(&Event) -> bool) {
        self.stale += 1;
        if self.stale < 4096 || self.stale * 2 < self.len {
            return;
        }
        let (slab, next, free) = (&mut self.slab, &mut self.next, &mut self.free);
        let mut dropped = 0;
        let mut unlink = |chain: Chain| -> Option<Chain> {
            let mut kept: Option<Chain> = None;
            let mut slot = chain.head;
            loop {
                let after = next[slot as usize];
                let stale = slab[slot as usize]
                    .as_ref()
                    .is_some_and(|(_, e)| is_stale(e));
                if stale {
                    slab[slot as usize] = None;
                    free.push(slot);
                    dropped += 1;
                } else {
                    next[slot as usize] = NO_NEXT;
                    match &mut kept {
                        Some(k) => {
                            next[k.tail as usize] = slot;
                            k.tail = slot;
                        }
                        None => {
                            kept = Some(Chain {
                                head: slot,
                                tail: slot,
                            })
                        }
                    }
                }
                if slot == chain.tail {
                    return kept;
                }
                slot = after;
            }
        };
        self.current = self.current.and_then(&mut unlink);
        // Instants left empty keep their place in the heap: `pop` passes
        // over them.
        let (chains, free_chains) = (&mut self.chains, &mut self.free_chains);
        self.at
            .retain(|_, &mut i| match unlink(chains[i as usize]) {
                Some(kept) => {
                    chains[i as usize] = kept;
                    true
                }
                None => {
                    free_chains.push(i);
                    false
                }
            });
        if self.hot.is_some_and(|(t, _)| !self.at.contains_key(&t)) {
            self.hot = None;
        }
        debug_assert_eq!(self.chains.len(), self.at.len() + self.free_chains.len());
        self.len -= dropped;
        self.stale = 0;
    }
}

/// Links `slot` (sequence number `seq`) into `chain` by sequence number:
/// at the end, unless it was numbered before events queued since.
fn link(slab: &[Option<(u64, Event)>], next: &mut [u32], chain: &mut Chain, slot: u32, seq: u64) {
    let seq_of = |s: u32| slab[s as usize].as_ref().map_or(0, |(q, _)| *q);
    if seq_of(chain.tail) < seq {
        next[chain.tail as usize] = slot;
        chain.tail = slot;
    } else if seq < seq_of(chain.head) {
        next[slot as usize] = chain.head;
        chain.head = slot;
    } else {
        let mut before = chain.head;
        while seq_of(next[before as usize]) < seq {
            before = next[before as usize];
        }
        next[slot as usize] = next[before as usize];
        next[before as usize] = slot;
    }
}

/// A monotone priority queue of distinct keys: every key pushed is above
/// the last popped. Bucket `b > 0` holds keys whose highest bit differing
/// from the last popped key is bit `b - 1`; bucket 0 the last popped key
/// itself (never, keys being distinct, once it is popped).
struct RadixHeap {
    last: u64,
    buckets: Vec<Vec<u64>>,
    /// Bit `b`: bucket `b + 1` is not empty (bucket 0 is looked at directly).
    nonempty: u64,
}

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            buckets: vec![Vec::new(); 65],
            nonempty: 0,
        }
    }
}

impl RadixHeap {
    fn bucket(&self, k: u64) -> usize {
        64 - (k ^ self.last).leading_zeros() as usize
    }

    fn push(&mut self, k: u64) {
        assert!(k > self.last, "a key pushed at or before the last popped");
        self.put(k);
    }

    fn put(&mut self, k: u64) {
        let b = self.bucket(k);
        self.buckets[b].push(k);
        if b > 0 {
            self.nonempty |= 1 << (b - 1);
        }
    }

    fn pop(&mut self) -> Option<u64> {
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
        self.buckets[0].pop()
    }
}

/// A small fast hash for instant keys; the map is never iterated, so the
/// hash decides no order.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        // A final mix, so the map's bucket bits depend on every byte.
        (self.0 ^ self.0 >> 29).wrapping_mul(0xbf58_476d_1ce4_e5b9)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    // Whole words at a time.
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(23) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;

    #[test]
    fn the_radix_heap_pops_in_order_as_keys_are_pushed_above_the_last() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut heap = RadixHeap::default();
        let mut reference = BTreeSet::new();
        let mut last = 0u64;
        for _ in 0..20_000 {
            if rng.random_bool(0.55) {
                let bits = rng.random_range(0..60);
                let k = last + 1 + rng.random_range(0..1u64 << bits);
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
        }
        while let Some(k) = reference.pop_first() {
            assert_eq!(heap.pop(), Some(k));
        }
        assert_eq!(heap.pop(), None);
    }

    fn timer(generation: u64) -> Event {
        Event::Timer {
            actor: Id::from(0),
            timer: Timer::Ping,
            generation,
        }
    }

    fn generation(e: &Event) -> u64 {
        match e {
            Event::Timer { generation, .. } => *generation,
            other @ (Event::Deliver { .. }
            | Event::FaultStart(_)
            | Event::FaultEnd(_)
            | Event::ReadTimeout(_)
            | Event::Unanswered { .. }
            | Event::Replicate { .. }
            | Event::Apply { .. }
            | Event::FollowerDrop { .. }
            | Event::Rejoin { .. }
            | Event::Elect) => panic!("only timers are queued here, not {other:?}"),
        }
    }

    /// Bursts at one instant, pushes at the instant being drained, far
    /// instants, and stale events dropped on the way: the queue pops in
    /// (time, sequence) order whatever the mix, and drops only stale ones.
    #[test]
    fn the_queue_pops_by_time_then_push_order_and_drops_only_stale_events() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut queue = EventQueue::default();
        // (at, seq) -> generation; a generation is stale when odd and over 1000.
        let mut reference = std::collections::BTreeMap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        let stale = |g: u64| g % 2 == 1 && g > 1000;
        let mut dropped = 0;
        let mut reserved = Vec::new();
        let mut overtaking = 0;
        for round in 0..30_000u64 {
            if rng.random_bool(0.1) {
                // A sequence number given now, its event queued later (a
                // timer set again for later, queued when its carrier comes).
                seq += 1;
                let at = match rng.random_range(0..3) {
                    0 => now + 1000,
                    1 => now + rng.random_range(0..5),
                    _ => now + rng.random_range(0..1u64 << 20),
                };
                let s = queue.reserve_seq();
                assert_eq!(s, seq);
                reserved.push((at, s, round));
            } else if rng.random_bool(0.1) && !reserved.is_empty() {
                let (at, s, g) = reserved.swap_remove(rng.random_range(0..reserved.len()));
                if at >= now {
                    // Behind events of its instant queued since?
                    if reference.range((at, s)..(at + 1, 0)).next().is_some() {
                        overtaking += 1;
                    }
                    queue.push_at(at, s, timer(g));
                    reference.insert((at, s), g);
                }
            } else if rng.random_bool(0.5) {
                let at = match rng.random_range(0..4) {
                    0 => now,
                    1 => now + 1000,
                    2 => now + rng.random_range(0..5),
                    _ => now + rng.random_range(0..1u64 << 30),
                };
                seq += 1;
                queue.push(at, timer(round));
                reference.insert((at, seq), round);
                if stale(round) {
                    queue.went_stale(|e| stale(generation(e)));
                }
            } else {
                let got = queue.pop();
                // The queue drops stale events in batches: skip those it
                // no longer holds.
                let want = loop {
                    match reference.pop_first() {
                        Some(((_, s), g))
                            if stale(g) && got.as_ref().is_none_or(|q| q.seq != s) =>
                        {
                            dropped += 1;
                        }
                        other => break other,
                    }
                };
                match (got, want) {
                    (Some(q), Some(((at, s), g))) => {
                        assert_eq!((q.at, q.seq, generation(&q.event)), (at, s, g));
                        now = at;
                    }
                    (None, None) => {}
                    (got, want) => panic!(
                        "queue {:?} vs reference {want:?}",
                        got.map(|q| (q.at, q.seq))
                    ),
                }
            }
        }
        assert!(dropped > 0, "the run dropped stale events");
        assert!(
            overtaking > 0,
            "some reserved events went before later ones"
        );
    }
}
