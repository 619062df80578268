//! Renamings of a state's parts, kept to be used again.
//!
//! Symmetry reduction renames the clients of about one successor in five
//! (`symmetry.rs`), and renaming a state rewrites every part of it: the
//! store, its timers, the resource, the monitors and each client's slot,
//! each copied, rewritten and hashed again. Yet a search meets few
//! distinct parts: on fair-predecessor at 4 clients with a crash, about
//! 3,600 distinct slots and 6,000 distinct stores in 4.9 M states. So
//! the same part is renamed by the same permutation again and again, and
//! [`Renamings`] keeps each renaming it did: the next time, the part is
//! swapped for the renamed one, its hash and key with it, with no copy.
//!
//! A part is found by its content (its hash, then compared in full unless
//! it is the very part kept), so what comes back is exactly what renaming
//! afresh would give: states, fingerprints and counts do not depend on
//! what is kept. The tables are bounded; a full one is emptied.

use crate::fixed_hash::Identity;
use crate::model::{ClientSlot, Shared, Timers};
use crate::properties::Monitors;
use crate::relabel::{Perm, Relabel};
use crate::resource::ResourceState;
use crate::store::StoreState;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};

/// A part of a state, as a renaming of clients rewrites it.
pub trait Part: Clone + Hash + Eq + Sized {
    /// Rewrites every client name in the part, re-sorting what is sorted by
    /// them (copied first if shared).
    fn rename(this: &mut Shared<Self>, p: &Perm);

    /// This kind of part's table among the renamings kept.
    fn table(kept: &mut Renamings) -> &mut Table<Self>;
}

impl Part for ClientSlot {
    fn rename(this: &mut Shared<Self>, p: &Perm) {
        // A slot's label-free key is the same in any names.
        Shared::make_mut_keeping_key(this).relabel(p);
    }
    fn table(kept: &mut Renamings) -> &mut Table<Self> {
        &mut kept.slots
    }
}

impl Part for StoreState {
    fn rename(this: &mut Shared<Self>, p: &Perm) {
        Shared::make_mut(this).relabel(p);
    }
    fn table(kept: &mut Renamings) -> &mut Table<Self> {
        &mut kept.stores
    }
}

impl Part for Timers {
    fn rename(this: &mut Shared<Self>, p: &Perm) {
        let timers = Shared::make_mut(this);
        timers.relabel(p);
        timers.sort();
    }
    fn table(kept: &mut Renamings) -> &mut Table<Self> {
        &mut kept.store_timers
    }
}

impl Part for ResourceState {
    fn rename(this: &mut Shared<Self>, p: &Perm) {
        // The log keeps the order writes were accepted in: nothing to
        // re-sort.
        for w in &mut Shared::make_mut(this).log {
            w.client.relabel(p);
        }
    }
    fn table(kept: &mut Renamings) -> &mut Table<Self> {
        &mut kept.resources
    }
}

impl Part for Monitors {
    fn rename(this: &mut Shared<Self>, p: &Perm) {
        Shared::make_mut(this).relabel(p);
    }
    fn table(kept: &mut Renamings) -> &mut Table<Self> {
        &mut kept.monitors
    }
}

/// How a state's parts are renamed: afresh ([`Afresh`]), or from the
/// renamings kept ([`Renamings`]; the checker's also hands each new
/// renaming to its hash-consing, so that what it keeps is the part the
/// frontier shares).
pub trait RenameParts {
    fn slot(&mut self, part: &mut Shared<ClientSlot>, p: &Perm);
    fn store(&mut self, part: &mut Shared<StoreState>, p: &Perm);
    fn store_timers(&mut self, part: &mut Shared<Timers>, p: &Perm);
    fn resource(&mut self, part: &mut Shared<ResourceState>, p: &Perm);
    fn monitors(&mut self, part: &mut Shared<Monitors>, p: &Perm);
}

/// Every part copied and rewritten.
pub struct Afresh;

impl RenameParts for Afresh {
    fn slot(&mut self, part: &mut Shared<ClientSlot>, p: &Perm) {
        Part::rename(part, p);
    }
    fn store(&mut self, part: &mut Shared<StoreState>, p: &Perm) {
        Part::rename(part, p);
    }
    fn store_timers(&mut self, part: &mut Shared<Timers>, p: &Perm) {
        Part::rename(part, p);
    }
    fn resource(&mut self, part: &mut Shared<ResourceState>, p: &Perm) {
        Part::rename(part, p);
    }
    fn monitors(&mut self, part: &mut Shared<Monitors>, p: &Perm) {
        Part::rename(part, p);
    }
}

/// The renamings done before, by kind of part; one thread's (the checker
/// keeps one for each worker).
#[derive(Default)]
pub struct Renamings {
    slots: Table<ClientSlot>,
    stores: Table<StoreState>,
    store_timers: Table<Timers>,
    resources: Table<ResourceState>,
    monitors: Table<Monitors>,
}

impl Renamings {
    /// Renames `part` by `p` from a renaming kept, or afresh; a new
    /// renaming is passed to `settle` (which may swap it for an equal
    /// part) before it is kept.
    pub(crate) fn rename<T: Part>(
        &mut self,
        part: &mut Shared<T>,
        p: &Perm,
        settle: impl FnOnce(&mut Shared<T>),
    ) {
        T::table(self).rename(part, p, settle);
    }
}

/// Kept renamings, each kept as renaming gave it.
impl RenameParts for Renamings {
    fn slot(&mut self, part: &mut Shared<ClientSlot>, p: &Perm) {
        self.rename(part, p, |_| {});
    }
    fn store(&mut self, part: &mut Shared<StoreState>, p: &Perm) {
        self.rename(part, p, |_| {});
    }
    fn store_timers(&mut self, part: &mut Shared<Timers>, p: &Perm) {
        self.rename(part, p, |_| {});
    }
    fn resource(&mut self, part: &mut Shared<ResourceState>, p: &Perm) {
        self.rename(part, p, |_| {});
    }
    fn monitors(&mut self, part: &mut Shared<Monitors>, p: &Perm) {
        self.rename(part, p, |_| {});
    }
}

/// Renamings of one kind of part, by the part's hash and the
/// permutation; a later renaming that lands on the same entry replaces it.
pub struct Table<T> {
    kept: HashMap<u64, Renamed<T>, BuildHasherDefault<Identity>>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            kept: HashMap::default(),
        }
    }
}

struct Renamed<T> {
    perm: u32,
    from: Shared<T>,
    to: Shared<T>,
}

/// Entries a table keeps before it is emptied: each holds two parts (a
/// few hundred bytes), so each checker thread keeps at most a few
/// megabytes of each kind (measured: about 3 MB a thread in all, on
/// fair-predecessor at 4 clients).
const KEPT: usize = 1 << 13;

impl<T: Part> Table<T> {
    fn rename(&mut self, part: &mut Shared<T>, p: &Perm, settle: impl FnOnce(&mut Shared<T>)) {
        let perm = perm_code(p);
        let at = part.hash_value() ^ u64::from(perm).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        if let Some(r) = self.kept.get(&at) {
            if r.perm == perm && r.from == *part {
                *part = r.to.clone();
                return;
            }
        }
        let from = part.clone();
        T::rename(part, p);
        settle(part);
        if self.kept.len() >= KEPT {
            self.kept.clear();
        }
        let to = part.clone();
        self.kept.insert(at, Renamed { perm, from, to });
    }
}

/// A permutation of at most eight clients in 32 bits, four to each (one
/// to one for the permutations of one state's clients, which
/// `ModelState::rename_with` checks it is given).
fn perm_code(p: &Perm) -> u32 {
    assert!(
        p.len() <= 8,
        "renamings are kept for at most 8 clients, not {}",
        p.len()
    );
    p.iter().fold(0, |code, &c| code << 4 | u32::from(c))
}
