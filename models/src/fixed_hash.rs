//! The one hash function behind every fingerprint, part hash and
//! label-free key: foldhash's quality variant with a fixed seed, so the
//! same state hashes the same in every run, on every thread, and on every
//! 64-bit little-endian machine (x86-64, aarch64): no code path is chosen
//! by the CPU's features, as ahash's is (AES where the build enables it).
//! A state's representative under symmetry is picked by fingerprint among
//! tied orders, so the names in a counterexample follow this function.
//!
//! Chosen for speed: a state's parts are hashed field by field, mostly
//! bytes and small integers, which foldhash packs 128 bits at a time
//! into each multiply, where ahash (without AES) multiplies per field:
//! the checker took less time with it (`lockstep bench --against`, in the
//! commit that made the change).

use std::hash::{BuildHasher, Hash};

/// A fixed-seed hasher factory; each use names its own seed, so that two
/// uses hashing the same value (a part's hash, its label-free key) give
/// unrelated numbers.
pub fn seeded(seed: u64) -> foldhash::quality::FixedState {
    foldhash::quality::FixedState::with_seed(seed)
}

/// `value`'s hash under `seed`.
pub fn hash_one<T: Hash + ?Sized>(seed: u64, value: &T) -> u64 {
    seeded(seed).hash_one(value)
}

/// A hasher for keys that are already hashes (fingerprints, parts'
/// hashes): it hashes them no further.
#[derive(Default)]
pub struct Identity(u64);

impl std::hash::Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 hashes are hashed again")
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
