//! The fingerprints the search has seen, each with its state's index.
//!
//! One table serves both phases of a level: the workers *claim* the
//! fingerprints of the successors they generate (the first claim of a
//! fingerprint keeps its state, the others drop theirs on their own thread),
//! then the sequential merge *indexes* them in frontier order, so indices do
//! not depend on the thread count. The merge of one chunk of a level runs
//! while the workers claim the next chunk's successors: the fingerprints it
//! indexes were all claimed before that expansion began.
//!
//! The table is 64 shards of open addressing with linear probing, each
//! grown on its own by a quarter when four fifths full, so it is 64–80%
//! full (doubling at three quarters left it 37–75% full, and 64 shards
//! filled alike double together: a jump of the whole table). A
//! fingerprint's slot is its bits below the shard's scaled to the shard's
//! size (any size, not only powers of two). A slot is the fingerprint (8
//! bytes), and its state's index (4 more) only when the search keeps the
//! graph's edges, which name states by index: about 11 or 17 bytes per
//! state, against about 45 for a `HashMap<u64, u32>` beside a concurrent
//! set of claims. The fingerprint's lowest bit marks a claim not yet
//! indexed, so fingerprints are compared on their other 63 bits.
//!
//! A slot is a cache miss (the table is far larger than the cache), so
//! the checker asks for it ahead ([`Seen::prefetch`]): a worker as soon
//! as it has a successor's fingerprint, claiming its state's successors
//! after computing them all; the merge for the next state's successors
//! while it indexes this one's (5–8% of the time of a full check of
//! fair-predecessor at 4 clients with a crash, on one thread).

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::model::prefetch;

/// The top bits of a fingerprint choose its shard; the low bits its slot.
const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;
/// No fingerprint in this slot. Fingerprints that would be stored as 0 are
/// stored as 2 (one more 2⁻⁶³ chance of a collision).
const EMPTY: u64 = 0;
/// The stored fingerprint's lowest bit: claimed, not indexed yet (or not at
/// all: past the limit).
const PENDING: u64 = 1;

pub struct Seen {
    shards: Box<[Mutex<Shard>]>,
    /// Where each shard's slots are and how many, as of its last growth:
    /// read without the lock only to prefetch a slot (a stale address is
    /// harmless there: a prefetch never faults).
    where_slots: Box<[Where]>,
    /// Written by the merge alone.
    indexed: AtomicUsize,
    with_indices: bool,
}

/// A shard's fingerprints and indices (null without), and its slots.
#[derive(Default)]
struct Where {
    fps: AtomicPtr<u64>,
    idx: AtomicPtr<u32>,
    cap: AtomicUsize,
}

impl Where {
    fn set(&self, shard: &mut Shard) {
        self.fps.store(shard.fps.as_mut_ptr(), Ordering::Relaxed);
        let idx = match shard.idx.is_empty() {
            true => std::ptr::null_mut(),
            false => shard.idx.as_mut_ptr(),
        };
        self.idx.store(idx, Ordering::Relaxed);
        self.cap.store(shard.fps.len(), Ordering::Relaxed);
    }
}

struct Shard {
    /// Fingerprints with their lowest bit the pending mark.
    fps: Vec<u64>,
    /// Each slot's state index (only with indices).
    idx: Vec<u32>,
    len: usize,
}

/// The slot where a shard of `cap` slots first looks for `fp`: its bits
/// below the shard's, as a fraction of the shard's size.
fn home(fp: u64, cap: usize) -> usize {
    ((u128::from(fp << SHARD_BITS) * cap as u128) >> 64) as usize
}

/// A fingerprint as stored, its lowest bit cleared.
fn stored(fp: u64) -> u64 {
    match fp & !PENDING {
        EMPTY => 2,
        f => f,
    }
}

impl Shard {
    fn new(with_indices: bool) -> Self {
        let cap = 1 << 10;
        Shard {
            fps: vec![EMPTY; cap],
            idx: if with_indices {
                vec![0; cap]
            } else {
                Vec::new()
            },
            len: 0,
        }
    }

    /// The slot holding `fp` (as stored), or the empty slot where it would go.
    fn find(&self, fp: u64) -> Result<usize, usize> {
        let cap = self.fps.len();
        let mut i = home(fp, cap);
        loop {
            match self.fps[i] {
                EMPTY => return Err(i),
                f if f & !PENDING == fp => return Ok(i),
                _ => {
                    i += 1;
                    if i == cap {
                        i = 0;
                    }
                }
            }
        }
    }

    /// Adds `fp` pending; false if it was there.
    fn claim(&mut self, fp: u64) -> bool {
        match self.find(fp) {
            Ok(_) => false,
            Err(slot) => {
                self.fps[slot] = fp | PENDING;
                self.len += 1;
                if self.len * 5 > self.fps.len() * 4 {
                    self.grow();
                }
                true
            }
        }
    }

    fn grow(&mut self) {
        let cap = self.fps.len() + self.fps.len() / 4;
        let fps = std::mem::replace(&mut self.fps, vec![EMPTY; cap]);
        let with_indices = !self.idx.is_empty();
        let idx = std::mem::replace(
            &mut self.idx,
            if with_indices {
                vec![0; cap]
            } else {
                Vec::new()
            },
        );
        for (k, fp) in fps.into_iter().enumerate() {
            if fp != EMPTY {
                let slot = self.find(fp & !PENDING).expect_err("each fingerprint once");
                self.fps[slot] = fp;
                if with_indices {
                    self.idx[slot] = idx[k];
                }
            }
        }
    }
}

impl Seen {
    /// An empty table; `with_indices` keeps each state's index, which
    /// [`Indexed::Known`] then gives.
    pub fn new(with_indices: bool) -> Self {
        let shards: Box<[Mutex<Shard>]> = (0..SHARDS)
            .map(|_| Mutex::new(Shard::new(with_indices)))
            .collect();
        let where_slots = shards
            .iter()
            .map(|s| {
                let w = Where::default();
                w.set(&mut s.lock().expect("a new table"));
                w
            })
            .collect();
        Seen {
            shards,
            where_slots,
            indexed: AtomicUsize::new(0),
            with_indices,
        }
    }
}

/// What the merge found for a successor's fingerprint.
pub enum Indexed {
    /// Seen in an earlier level, or earlier in this one: its index, when
    /// the table keeps indices.
    Known(Option<u32>),
    /// First indexed now.
    New(u32),
    /// Claimed, but the state limit is reached: not explored.
    OverLimit,
}

impl Seen {
    /// `fp` as the table keeps it: fingerprints equal on their upper 63
    /// bits (and 0 to 3) are one state to it.
    pub fn key(fp: u64) -> u64 {
        stored(fp)
    }

    fn shard(fp: u64) -> usize {
        (fp >> (64 - SHARD_BITS)) as usize
    }

    /// Claims `fp` (from any thread): true for the first claim.
    pub fn claim(&self, fp: u64) -> bool {
        let fp = stored(fp);
        let k = Self::shard(fp);
        let mut shard = self.shards[k].lock().expect("a checker thread panicked");
        let cap = shard.fps.len();
        let first = shard.claim(fp);
        if shard.fps.len() != cap {
            self.where_slots[k].set(&mut shard);
        }
        first
    }

    /// Asks the processor to bring `fp`'s slot (and its index) into the
    /// cache, so that a claim or an index of it soon after does not wait
    /// for memory.
    pub fn prefetch(&self, fp: u64) {
        let fp = stored(fp);
        let w = &self.where_slots[Self::shard(fp)];
        let cap = w.cap.load(Ordering::Relaxed);
        let i = home(fp, cap);
        prefetch(w.fps.load(Ordering::Relaxed).wrapping_add(i));
        let idx = w.idx.load(Ordering::Relaxed);
        if !idx.is_null() {
            prefetch(idx.wrapping_add(i));
        }
    }

    /// Indexes a claimed `fp` (the merge, one thread, while workers may
    /// claim others): its index, the next one if it has none yet and fewer
    /// than `limit` states are indexed.
    pub fn index(&self, fp: u64, limit: usize) -> Indexed {
        let fp = stored(fp);
        let indexed = self.indexed.load(Ordering::Relaxed);
        let mut shard = self.shards[Self::shard(fp)]
            .lock()
            .expect("a checker thread panicked");
        let slot = shard
            .find(fp)
            .expect("every successor's fingerprint was claimed");
        let pending = shard.fps[slot] & PENDING != 0;
        match pending {
            true if indexed >= limit => Indexed::OverLimit,
            true => {
                let i = u32::try_from(indexed).expect("the state limit fits in u32");
                shard.fps[slot] = fp;
                if self.with_indices {
                    shard.idx[slot] = i;
                }
                self.indexed.store(indexed + 1, Ordering::Relaxed);
                Indexed::New(i)
            }
            false => Indexed::Known(self.with_indices.then(|| shard.idx[slot])),
        }
    }

    /// Whether `fp` was indexed before the table held `bound` states (the
    /// table must keep indices). A claim not indexed yet, or indexed since,
    /// is not: so, asked during a level's expansion with `bound` the states
    /// of the earlier levels, the answer does not depend on how far the
    /// merge of the level has got.
    pub fn indexed_below(&self, fp: u64, bound: usize) -> bool {
        assert!(
            self.with_indices,
            "indexed_below needs a table with indices"
        );
        let fp = stored(fp);
        let shard = self.shards[Self::shard(fp)]
            .lock()
            .expect("a checker thread panicked");
        match shard.find(fp) {
            Ok(slot) => shard.fps[slot] & PENDING == 0 && (shard.idx[slot] as usize) < bound,
            Err(_) => false,
        }
    }

    /// Whether the table keeps each state's index.
    pub fn keeps_indices(&self) -> bool {
        self.with_indices
    }

    /// States indexed so far.
    pub fn len(&self) -> usize {
        self.indexed.load(Ordering::Relaxed)
    }

    /// Bytes held by the table.
    pub fn bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().expect("a checker thread panicked");
                s.fps.capacity() * 8 + s.idx.capacity() * 4
            })
            .sum()
    }
}

/// An append-only vector in fixed chunks: no copy and at most one chunk
/// unused as it grows, where a `Vec` doubles (and copies) at every power of two.
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

const CHUNK: usize = 1 << 16;

impl<T: Copy> Chunked<T> {
    pub fn new() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }

    pub fn push(&mut self, x: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(x),
            _ => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(x);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    pub fn get(&self, i: usize) -> T {
        self.chunks[i / CHUNK][i % CHUNK]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.chunks.iter().flatten().copied()
    }

    pub fn bytes(&self) -> usize {
        self.chunks.len() * CHUNK * std::mem::size_of::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_once_and_indexes_in_merge_order() {
        let seen = Seen::new(true);
        // Enough fingerprints to grow every shard several times.
        let fps: Vec<u64> = (0..200_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        for &fp in &fps {
            assert!(seen.claim(fp));
            assert!(!seen.claim(fp));
        }
        for (i, &fp) in fps.iter().enumerate() {
            assert!(matches!(seen.index(fp, usize::MAX), Indexed::New(j) if j as usize == i));
        }
        for (i, &fp) in fps.iter().enumerate() {
            assert!(
                matches!(seen.index(fp, usize::MAX), Indexed::Known(Some(j)) if j as usize == i)
            );
        }
        assert_eq!(seen.len(), fps.len());
    }

    #[test]
    fn where_a_prefetch_looks_follows_every_growth() {
        for with_indices in [true, false] {
            let seen = Seen::new(with_indices);
            for i in 0..100_000u64 {
                let fp = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                seen.prefetch(fp);
                seen.claim(fp);
            }
            for (shard, w) in seen.shards.iter().zip(seen.where_slots.iter()) {
                let mut shard = shard.lock().unwrap();
                assert!(shard.fps.len() > 1 << 10, "every shard grew");
                assert_eq!(w.cap.load(Ordering::Relaxed), shard.fps.len());
                assert_eq!(w.fps.load(Ordering::Relaxed), shard.fps.as_mut_ptr());
                assert_eq!(w.idx.load(Ordering::Relaxed).is_null(), !with_indices);
            }
        }
    }

    #[test]
    fn past_the_limit_nothing_is_indexed() {
        for with_indices in [true, false] {
            let seen = Seen::new(with_indices);
            for fp in [10u64, 12, 14] {
                seen.claim(fp);
            }
            assert!(matches!(seen.index(10, 2), Indexed::New(0)));
            assert!(matches!(seen.index(12, 2), Indexed::New(1)));
            assert!(matches!(seen.index(14, 2), Indexed::OverLimit));
            let known = seen.index(10, 2);
            assert!(matches!(known, Indexed::Known(i) if i == with_indices.then_some(0)));
        }
    }

    #[test]
    fn indexed_below_counts_only_states_indexed_before_the_bound() {
        let seen = Seen::new(true);
        for fp in [10u64, 12, 14, 16] {
            seen.claim(fp);
        }
        assert!(matches!(seen.index(10, 9), Indexed::New(0)));
        assert!(matches!(seen.index(12, 9), Indexed::New(1)));
        assert!(matches!(seen.index(14, 9), Indexed::New(2)));
        // 16 is claimed, not indexed; 18 never seen.
        assert!(seen.indexed_below(10, 2));
        assert!(seen.indexed_below(12, 2));
        assert!(!seen.indexed_below(14, 2));
        assert!(!seen.indexed_below(16, 2));
        assert!(!seen.indexed_below(18, 2));
        assert!(seen.indexed_below(14, 3));
    }

    #[test]
    fn without_indices_a_claim_is_new_once() {
        let seen = Seen::new(false);
        let fps: Vec<u64> = (0..100_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        for &fp in &fps {
            assert!(seen.claim(fp));
        }
        for (i, &fp) in fps.iter().enumerate() {
            assert!(matches!(seen.index(fp, usize::MAX), Indexed::New(j) if j as usize == i));
            assert!(matches!(seen.index(fp, usize::MAX), Indexed::Known(None)));
        }
    }

    #[test]
    fn fingerprints_equal_but_for_the_lowest_bit_are_one() {
        let seen = Seen::new(false);
        assert!(seen.claim(2));
        assert!(!seen.claim(3));
        assert_eq!(Seen::key(2), Seen::key(3));
        assert!(matches!(seen.index(3, 9), Indexed::New(0)));
        assert!(matches!(seen.index(2, 9), Indexed::Known(None)));
    }

    #[test]
    fn zero_is_a_fingerprint_too() {
        let seen = Seen::new(true);
        assert!(seen.claim(0));
        assert!(!seen.claim(0));
        assert!(matches!(seen.index(0, 9), Indexed::New(0)));
    }

    #[test]
    fn chunked_keeps_order_across_chunks() {
        let mut v = Chunked::new();
        for i in 0..(3 * CHUNK + 5) as u32 {
            v.push(i);
        }
        assert_eq!(v.len(), 3 * CHUNK + 5);
        assert_eq!(v.get(CHUNK + 7), CHUNK as u32 + 7);
        assert!(v.iter().enumerate().all(|(i, x)| x as usize == i));
    }
}
