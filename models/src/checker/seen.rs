//! The fingerprints the search has seen, each with its state's index.
//!
//! One table serves both phases of a level: the workers *claim* the
//! fingerprints of the successors they generate (the first claim of a
//! fingerprint keeps its state, the others drop theirs on their own thread),
//! then the sequential merge *indexes* them in frontier order, so indices do
//! not depend on the thread count.
//!
//! A slot is 12 bytes (the fingerprint and the index, in two arrays), in
//! 64 shards of open addressing with linear probing, each grown on its own
//! at three quarters full: about 18 bytes per state on average, against
//! about 45 for a `HashMap<u64, u32>` beside a concurrent set of claims.

use std::sync::Mutex;

/// The top bits of a fingerprint choose its shard; the low bits its slot.
const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;
/// No fingerprint in this slot. A fingerprint of 0 is stored as 1 (one more
/// 2⁻⁶⁴ chance of a collision).
const EMPTY: u64 = 0;
/// Claimed in this level, not indexed yet (or not at all: past the limit).
const UNINDEXED: u32 = u32::MAX;

pub struct Seen {
    shards: Box<[Mutex<Shard>]>,
    indexed: usize,
}

struct Shard {
    fps: Vec<u64>,
    idx: Vec<u32>,
    len: usize,
}

fn stored(fp: u64) -> u64 {
    if fp == EMPTY {
        1
    } else {
        fp
    }
}

impl Shard {
    fn new() -> Self {
        Shard {
            fps: vec![EMPTY; 1 << 10],
            idx: vec![UNINDEXED; 1 << 10],
            len: 0,
        }
    }

    /// The slot holding `fp`, or the empty slot where it would go.
    fn find(&self, fp: u64) -> Result<usize, usize> {
        let mask = self.fps.len() - 1;
        let mut i = fp as usize & mask;
        loop {
            match self.fps[i] {
                EMPTY => return Err(i),
                f if f == fp => return Ok(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Adds `fp` unindexed; false if it was there.
    fn claim(&mut self, fp: u64) -> bool {
        match self.find(fp) {
            Ok(_) => false,
            Err(slot) => {
                self.fps[slot] = fp;
                self.len += 1;
                if self.len * 4 > self.fps.len() * 3 {
                    self.grow();
                }
                true
            }
        }
    }

    fn grow(&mut self) {
        let cap = self.fps.len() * 2;
        let fps = std::mem::replace(&mut self.fps, vec![EMPTY; cap]);
        let idx = std::mem::replace(&mut self.idx, vec![UNINDEXED; cap]);
        for (fp, i) in fps.into_iter().zip(idx) {
            if fp != EMPTY {
                let slot = self.find(fp).expect_err("each fingerprint once");
                self.fps[slot] = fp;
                self.idx[slot] = i;
            }
        }
    }
}

impl Default for Seen {
    fn default() -> Self {
        Seen {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::new())).collect(),
            indexed: 0,
        }
    }
}

/// What the merge found for a successor's fingerprint.
pub enum Indexed {
    /// Seen in an earlier level, or earlier in this one.
    Known(u32),
    /// First indexed now.
    New(u32),
    /// Claimed, but the state limit is reached: not explored.
    OverLimit,
}

impl Seen {
    fn shard(fp: u64) -> usize {
        (fp >> (64 - SHARD_BITS)) as usize
    }

    /// Claims `fp` (from any thread): true for the first claim.
    pub fn claim(&self, fp: u64) -> bool {
        let fp = stored(fp);
        self.shards[Self::shard(fp)]
            .lock()
            .expect("a checker thread panicked")
            .claim(fp)
    }

    /// Indexes a claimed `fp` (the merge, one thread): its index, the next
    /// one if it has none yet and fewer than `limit` states are indexed.
    pub fn index(&mut self, fp: u64, limit: usize) -> Indexed {
        let fp = stored(fp);
        let indexed = self.indexed;
        let shard = self.shards[Self::shard(fp)]
            .get_mut()
            .expect("a checker thread panicked");
        let slot = shard
            .find(fp)
            .expect("every successor's fingerprint was claimed");
        match shard.idx[slot] {
            UNINDEXED if indexed >= limit => Indexed::OverLimit,
            UNINDEXED => {
                let i = u32::try_from(indexed).expect("the state limit fits in u32");
                shard.idx[slot] = i;
                self.indexed += 1;
                Indexed::New(i)
            }
            i => Indexed::Known(i),
        }
    }

    /// States indexed so far.
    pub fn len(&self) -> usize {
        self.indexed
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
        let mut seen = Seen::default();
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
            assert!(matches!(seen.index(fp, usize::MAX), Indexed::Known(j) if j as usize == i));
        }
        assert_eq!(seen.len(), fps.len());
    }

    #[test]
    fn past_the_limit_nothing_is_indexed() {
        let mut seen = Seen::default();
        for fp in [5u64, 6, 7] {
            seen.claim(fp);
        }
        assert!(matches!(seen.index(5, 2), Indexed::New(0)));
        assert!(matches!(seen.index(6, 2), Indexed::New(1)));
        assert!(matches!(seen.index(7, 2), Indexed::OverLimit));
        assert!(matches!(seen.index(5, 2), Indexed::Known(0)));
    }

    #[test]
    fn zero_is_a_fingerprint_too() {
        let mut seen = Seen::default();
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
