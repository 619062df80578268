//! Parts relabelled lately, by the part and the permutation.
//!
//! The checker's frontier shares each distinct part (a client's slot, the
//! store, the monitors) among many states, and their successors are
//! relabelled by the few permutations of a handful of clients: the same
//! part is relabelled the same way again and again. A relabelled part is a
//! new copy, hashed again and compared with the interned ones; taken from
//! here it is the copy made the first time, with its hash.
//!
//! Each table is direct-mapped and small. An entry keeps the part it was
//! made from, so that the part's address names it for as long as the
//! entry lives (no other part can be given that address meanwhile).

use crate::model::{ClientSlot, Shared};
use crate::msg::Timer;
use crate::properties::Monitors;
use crate::relabel::Perm;
use crate::resource::ResourceState;
use crate::store::StoreState;
use std::hash::Hash;

/// One table per kind of part.
pub struct Memos {
    pub slots: Memo<ClientSlot>,
    pub stores: Memo<StoreState>,
    pub store_timers: Memo<Vec<Timer>>,
    pub resources: Memo<ResourceState>,
    pub monitors: Memo<Monitors>,
}

impl Default for Memos {
    fn default() -> Self {
        Memos {
            slots: Memo::new(1 << 12),
            stores: Memo::new(1 << 10),
            store_timers: Memo::new(1 << 8),
            resources: Memo::new(1 << 8),
            monitors: Memo::new(1 << 10),
        }
    }
}

/// A permutation as one number, where it fits (at most 7 clients, each
/// below 256): its length, then each client's new name.
pub fn perm_key(p: &Perm) -> Option<u64> {
    (p.len() <= 7 && p.iter().all(|&x| x < 256))
        .then(|| p.iter().fold(p.len() as u64, |k, &x| k << 8 | u64::from(x)))
}

struct Entry<T> {
    /// The part relabelled, kept alive.
    from: Shared<T>,
    perm: u64,
    to: Shared<T>,
}

pub struct Memo<T> {
    entries: Box<[Option<Entry<T>>]>,
    /// Entries by where their copy is held (1 + the entry's place; 0: none
    /// there), for [`Memo::adopt`].
    by_copy: Box<[u32]>,
}

/// The part types kept, each with its table.
pub trait Memoized: Sized {
    fn table(memos: &mut Memos) -> &mut Memo<Self>;
}

macro_rules! memoized {
    ($($t:ty => $field:ident),*) => {
        $(impl Memoized for $t {
            fn table(memos: &mut Memos) -> &mut Memo<Self> {
                &mut memos.$field
            }
        })*
    };
}
memoized!(
    ClientSlot => slots,
    StoreState => stores,
    Vec<Timer> => store_timers,
    ResourceState => resources,
    Monitors => monitors
);

impl<T: Hash> Memo<T> {
    fn new(size: usize) -> Self {
        debug_assert!(size.is_power_of_two());
        Memo {
            entries: (0..size).map(|_| None).collect(),
            by_copy: vec![0; size].into_boxed_slice(),
        }
    }

    /// `copy` is equal to `kept`, which the checker keeps for every state
    /// that has that part: an entry whose copy is `copy` gives `kept` from
    /// now on, so that the states renamed from it share it at once.
    pub fn adopt(&mut self, copy: &Shared<T>, kept: &Shared<T>) {
        let by = slot_of(Shared::addr(copy), 0, self.by_copy.len());
        let Some(at) = self.by_copy[by].checked_sub(1) else {
            return;
        };
        if let Some(e) = &mut self.entries[at as usize] {
            if Shared::ptr_eq(&e.to, copy) {
                e.to = kept.clone();
                self.by_copy[by] = 0;
                self.by_copy[slot_of(Shared::addr(kept), 0, self.by_copy.len())] = at + 1;
            }
        }
    }

    /// `part` relabelled by a permutation (whose key is `perm`): as `relabel` makes
    /// it, or as it made it before for this part and permutation.
    pub fn relabel(
        &mut self,
        part: &mut Shared<T>,
        perm: Option<u64>,
        relabel: impl FnOnce(&mut Shared<T>),
    ) {
        let Some(perm) = perm else {
            relabel(part);
            return;
        };
        let at = slot_of(Shared::addr(part), perm, self.entries.len());
        if let Some(e) = &self.entries[at] {
            if e.perm == perm && Shared::ptr_eq(&e.from, part) {
                *part = e.to.clone();
                return;
            }
        }
        let from = part.clone();
        relabel(part);
        // Every state renamed from this entry needs its hash.
        part.hash_value();
        self.by_copy[slot_of(Shared::addr(part), 0, self.by_copy.len())] = at as u32 + 1;
        self.entries[at] = Some(Entry {
            from,
            perm,
            to: part.clone(),
        });
    }
}

/// Where a part and permutation go in a table of `len` entries.
fn slot_of(addr: usize, perm: u64, len: usize) -> usize {
    let h = (addr as u64 ^ perm.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 32) as usize & (len - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reversed(v: &mut Shared<Vec<Timer>>, p: &Perm) {
        let v = Shared::make_mut(v);
        crate::relabel::Relabel::relabel(v, p);
        v.sort();
    }

    #[test]
    fn a_part_relabelled_again_is_the_first_copy_and_equal_to_a_fresh_one() {
        use crate::ids::SessionId;
        let timers = |a: u16, b: u16| {
            Shared::new(vec![
                Timer::Expiry(SessionId {
                    client: a,
                    incarnation: 0,
                }),
                Timer::Expiry(SessionId {
                    client: b,
                    incarnation: 1,
                }),
            ])
        };
        let part = timers(0, 1);
        let swap: &Perm = &[1, 0];
        let mut memo = Memo::new(4);
        let mut calls = 0;
        let mut relabel = |part: &Shared<Vec<Timer>>, p: &Perm| {
            let mut x = part.clone();
            memo.relabel(&mut x, perm_key(p), |x| {
                calls += 1;
                reversed(x, p)
            });
            x
        };
        let first = relabel(&part, swap);
        let again = relabel(&part, swap);
        assert!(Shared::ptr_eq(&first, &again), "taken from the memo");
        let mut fresh = part.clone();
        reversed(&mut fresh, swap);
        assert_eq!(*again, *fresh);
        // Another permutation, or an equal part held elsewhere, is made anew.
        let same = relabel(&part, &[0, 1]);
        assert_eq!(*same, *part);
        let elsewhere = relabel(&timers(0, 1), swap);
        assert_eq!(*elsewhere, *fresh);
        assert_eq!(calls, 3);
    }

    #[test]
    fn an_adopted_part_is_given_in_place_of_the_copy() {
        use crate::ids::SessionId;
        let part = Shared::new(vec![Timer::Expiry(SessionId {
            client: 0,
            incarnation: 0,
        })]);
        let to_one: &Perm = &[1, 0];
        let mut memo = Memo::new(4);
        let relabel = |memo: &mut Memo<Vec<Timer>>| {
            let mut x = part.clone();
            memo.relabel(&mut x, perm_key(to_one), |x| reversed(x, to_one));
            x
        };
        let copy = relabel(&mut memo);
        let kept = Shared::new((*copy).clone());
        // Something else is not adopted in its place.
        memo.adopt(&kept, &part);
        assert!(Shared::ptr_eq(&relabel(&mut memo), &copy));
        memo.adopt(&copy, &kept);
        assert!(Shared::ptr_eq(&relabel(&mut memo), &kept));
        // And adopted again.
        let again = Shared::new((*copy).clone());
        memo.adopt(&kept, &again);
        assert!(Shared::ptr_eq(&relabel(&mut memo), &again));
    }

    #[test]
    fn only_short_permutations_have_keys() {
        assert_ne!(perm_key(&[1, 0]), perm_key(&[0, 1]));
        assert_ne!(perm_key(&[0]), perm_key(&[0, 0]), "the length counts");
        assert_eq!(perm_key(&[0; 8]), None);
        assert_eq!(perm_key(&[300, 0]), None);
    }
}
