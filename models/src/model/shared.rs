//! A part of a state (the store, a client's slot, the monitors) shared
//! between a state and its successors until a step changes it, with its
//! hash kept with it (in the one allocation all copies share): a
//! successor's fingerprint hashes only the parts its step changed, and the
//! checker's hash-consing reuses the same hash. A
//! client's slot also keeps its label-free key (`symmetry.rs`), which a
//! renaming of clients leaves as it was.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A hint to load the cache line at `at`; never faults, whatever the
/// address.
#[inline]
pub fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint; it reads nothing and cannot fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

pub struct Shared<T> {
    held: Arc<Held<T>>,
}

/// The part with what is computed from it, in one allocation: every copy
/// of a `Shared` sees a hash or key as soon as one of them computed it.
struct Held<T> {
    /// The part's hash; 0 until first asked (a hash of 0 is kept as 1).
    hash: AtomicU64,
    /// A second value computed from the part and kept the same way: for a
    /// client's slot, its label-free key (`Shared::key`).
    key: AtomicU64,
    part: T,
}

impl<T: Clone> Clone for Held<T> {
    fn clone(&self) -> Self {
        Held {
            hash: AtomicU64::new(self.hash.load(Ordering::Relaxed)),
            key: AtomicU64::new(self.key.load(Ordering::Relaxed)),
            part: self.part.clone(),
        }
    }
}

impl<T> Shared<T> {
    pub fn new(part: T) -> Self {
        Shared {
            held: Arc::new(Held {
                hash: AtomicU64::new(0),
                key: AtomicU64::new(0),
                part,
            }),
        }
    }

    /// The part, to change it (copied first if shared); its hash is
    /// recomputed when next asked.
    pub fn make_mut(this: &mut Self) -> &mut T
    where
        T: Clone,
    {
        let held = Self::changing(this);
        *held.key.get_mut() = 0;
        &mut held.part
    }

    /// The part, to change it in a way that keeps its key (renaming
    /// clients keeps a label-free key); its hash is recomputed when next
    /// asked.
    pub fn make_mut_keeping_key(this: &mut Self) -> &mut T
    where
        T: Clone,
    {
        &mut Self::changing(this).part
    }

    /// The part and what is kept with it, unshared, its hash forgotten.
    fn changing(this: &mut Self) -> &mut Held<T>
    where
        T: Clone,
    {
        let held = Arc::make_mut(&mut this.held);
        *held.hash.get_mut() = 0;
        held
    }

    /// Lets `trim` change how the part is held — spare capacity, never
    /// its value — if no one else holds it; its hash is kept.
    pub fn trim(this: &mut Self, trim: impl FnOnce(&mut T)) {
        if let Some(held) = Arc::get_mut(&mut this.held) {
            trim(&mut held.part);
        }
    }

    /// Asks for the first cache line of the part and what is kept with it
    /// ahead of a read.
    #[inline]
    pub fn prefetch(&self) {
        prefetch(Arc::as_ptr(&self.held));
    }

    /// The same part, not merely an equal one.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.held, &b.held)
    }

    /// The part's hash (fixed seeds: the same in every run).
    pub fn hash_value(&self) -> u64
    where
        T: Hash,
    {
        match self.held.hash.load(Ordering::Relaxed) {
            0 => {
                let h = crate::fixed_hash::hash_one(0x7061_7274_6861_7368, &self.held.part).max(1);
                self.held.hash.store(h, Ordering::Relaxed);
                h
            }
            h => h,
        }
    }

    /// The part's key as `compute` gives it, computed once (a key of 0 is
    /// kept as 1). Every caller passes the same function: a part has one
    /// key.
    pub fn key(&self, compute: impl FnOnce(&T) -> u64) -> u64 {
        match self.held.key.load(Ordering::Relaxed) {
            0 => {
                let k = compute(&self.held.part).max(1);
                self.held.key.store(k, Ordering::Relaxed);
                k
            }
            k => k,
        }
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.held.part
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared {
            held: Arc::clone(&self.held),
        }
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        if Shared::ptr_eq(self, other) {
            return true;
        }
        let (a, b) = (
            self.held.hash.load(Ordering::Relaxed),
            other.held.hash.load(Ordering::Relaxed),
        );
        if a != 0 && b != 0 && a != b {
            return false;
        }
        self.held.part == other.held.part
    }
}

impl<T: Eq> Eq for Shared<T> {}

/// A state's hash takes the part's hash, not the part: two different parts
/// with the same 64-bit hash would make two states collide, as any two
/// states with the same fingerprint do.
impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash_value());
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.held.part.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_forgets_the_hash() {
        let mut a = Shared::new(vec![1u8, 2]);
        let before = a.hash_value();
        let b = a.clone();
        Shared::make_mut(&mut a).push(3);
        assert_ne!(a.hash_value(), before);
        assert_eq!(b.hash_value(), before);
        assert_ne!(a, b);
        Shared::make_mut(&mut a).pop();
        assert_eq!(a, b);
        assert_eq!(a.hash_value(), before);
        assert!(!Shared::ptr_eq(&a, &b));
    }

    #[test]
    fn a_change_forgets_the_key_unless_it_keeps_it() {
        let len = |v: &Vec<u8>| v.len() as u64;
        let mut a = Shared::new(vec![1u8, 2]);
        assert_eq!(a.key(len), 2);
        assert_eq!(a.clone().key(|_| unreachable!("kept")), 2);
        // A key one copy computes, every copy has.
        let c = Shared::new(vec![5u8]);
        assert_eq!(c.clone().key(len), 1);
        assert_eq!(c.key(|_| unreachable!("computed by a copy")), 1);
        Shared::make_mut(&mut a).push(3);
        assert_eq!(a.key(len), 3);
        Shared::make_mut_keeping_key(&mut a).push(4);
        assert_eq!(a.key(len), 3, "kept, as asked");
        assert_ne!(a.hash_value(), Shared::new(vec![1u8, 2, 3]).hash_value());
        assert_eq!(Shared::new(Vec::<u8>::new()).key(len), 1, "0 is kept as 1");
    }
}
