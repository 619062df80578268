//! Armed timers of one actor, each with the generation of its latest
//! setting (a fired or re-set timer's older event is stale).
//!
//! A client arms a handful at most, so a short list searched in place
//! beats a tree; the store arms one expiry timer per session, so its set
//! is keyed by a hash map (never iterated: no order to keep).

use models::msg::Timer;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A client's timers.
#[derive(Default)]
pub(super) struct FewTimers(Vec<(Timer, u64)>);

/// The store's timers.
#[derive(Default)]
pub(super) struct ManyTimers(HashMap<Timer, u64, BuildHasherDefault<MixHasher>>);

/// A small fast hash for timer keys (a few bytes each); hash maps here are
/// never iterated, so the hash decides no order.
#[derive(Default)]
pub(super) struct MixHasher(u64);

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
    // Whole words at a time: a timer key is a discriminant and a few ids.
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

pub(super) trait TimerSet {
    fn get(&self, timer: &Timer) -> Option<u64>;
    /// Arms `timer` with `generation`; the generation it replaced, if any.
    fn insert(&mut self, timer: Timer, generation: u64) -> Option<u64>;
    fn remove(&mut self, timer: &Timer) -> Option<u64>;
}

impl TimerSet for FewTimers {
    fn get(&self, timer: &Timer) -> Option<u64> {
        self.0.iter().find(|(t, _)| t == timer).map(|&(_, g)| g)
    }

    fn insert(&mut self, timer: Timer, generation: u64) -> Option<u64> {
        match self.0.iter_mut().find(|(t, _)| *t == timer) {
            Some((_, g)) => Some(std::mem::replace(g, generation)),
            None => {
                self.0.push((timer, generation));
                None
            }
        }
    }

    fn remove(&mut self, timer: &Timer) -> Option<u64> {
        let i = self.0.iter().position(|(t, _)| t == timer)?;
        Some(self.0.swap_remove(i).1)
    }
}

impl FewTimers {
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

impl TimerSet for ManyTimers {
    fn get(&self, timer: &Timer) -> Option<u64> {
        self.0.get(timer).copied()
    }

    fn insert(&mut self, timer: Timer, generation: u64) -> Option<u64> {
        self.0.insert(timer, generation)
    }

    fn remove(&mut self, timer: &Timer) -> Option<u64> {
        self.0.remove(timer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(set: &mut impl TimerSet) {
        assert_eq!(set.insert(Timer::Retry, 1), None);
        assert_eq!(set.insert(Timer::Ping, 2), None);
        assert_eq!(set.insert(Timer::Retry, 3), Some(1));
        assert_eq!(set.get(&Timer::Retry), Some(3));
        assert_eq!(set.remove(&Timer::Ping), Some(2));
        assert_eq!(set.get(&Timer::Ping), None);
        assert_eq!(set.remove(&Timer::Ping), None);
        assert_eq!(set.get(&Timer::Retry), Some(3));
    }

    #[test]
    fn both_sets_keep_the_latest_generation() {
        exercise(&mut FewTimers::default());
        exercise(&mut ManyTimers::default());
    }
}
