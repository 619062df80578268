//! Hash-consing of a level's new states: equal parts (a client's slot, the
//! store and its timers, the resource, the monitors) are kept once, shared
//! by every state of the frontier that has them.
//!
//! Successors share what their step left alone with their parent, but a
//! relabelling for symmetry rebuilds every part, and sibling states rebuild
//! the same parts independently; without this the frontier holds many
//! copies of each. The workers intern each state they claim, before it
//! waits for the merge. A level's table lives while that level is made
//! and while it is expanded: a part rebuilt in a successor (relabelling
//! rebuilds every part, also those it leaves equal) is often one that was
//! interned when its parent's level was made, and is then shared with
//! that one. (A part the parent kept from its own parent is in neither
//! table.) A renaming a worker keeps for symmetry (`Settled`) is interned
//! when it is first made, whether or not its successor is new, so that a
//! kept renaming is the part the tables hold.
//! Measured on fair-predecessor, 4 clients, 1 crash, safety only, its
//! first 2.5 M states on one thread: 133–135 MB peak against 605–606 MB
//! without interning, in 0.72–0.80 of the time (4 pairs run at once, one
//! on each core, cores swapped; 2026-11-26). The first measurement, before
//! parts kept their hashes and sleep sets thinned the transitions: 229 MB
//! against 238 MB, 0.90 of the time.

use crate::fixed_hash::Identity;
use crate::model::{ClientSlot, ModelState, Shared, Timers};
use crate::properties::Monitors;
use crate::relabel::Perm;
use crate::renamings::{Part, RenameParts, Renamings};
use crate::resource::ResourceState;
use crate::store::StoreState;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::hash::Hash;
use std::sync::Mutex;

const SHARDS: usize = 64;

#[derive(Default)]
pub struct Interner {
    slots: Table<ClientSlot>,
    stores: Table<StoreState>,
    store_timers: Table<Timers>,
    resources: Table<ResourceState>,
    monitors: Table<Monitors>,
}

/// Parts by content hash, in shards. Equal hashes are compared in full; of
/// two different parts with one hash (rare), the second is not shared.
struct Table<T>(Box<[Mutex<Shard<T>>]>);

/// Keyed by the part's hash, which needs no hashing again.
type Shard<T> = HashMap<u64, Shared<T>, BuildHasherDefault<Identity>>;

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table((0..SHARDS).map(|_| Mutex::default()).collect())
    }
}

/// A part that can give back the spare capacity its step's pushes left
/// (a vector grown by one push holds room for four): every new part
/// interned is kept for two levels.
trait Trim {
    fn trim(&mut self);
}

impl Trim for ClientSlot {
    fn trim(&mut self) {
        for v in [
            &mut self.from_store,
            &mut self.to_store,
            &mut self.to_resource,
            &mut self.from_resource,
        ] {
            v.shrink_to_fit();
        }
        self.timers.shrink_to_fit();
    }
}

impl Trim for StoreState {
    fn trim(&mut self) {
        self.shrink_to_fit();
    }
}

impl Trim for Timers {
    fn trim(&mut self) {
        self.shrink_to_fit();
    }
}

impl Trim for ResourceState {
    fn trim(&mut self) {
        self.log.shrink_to_fit();
    }
}

impl Trim for Monitors {
    fn trim(&mut self) {
        self.shrink_to_fit();
    }
}

impl<T: Hash + Eq + Trim> Table<T> {
    fn intern(&self, part: &mut Shared<T>, parent: Option<&Shared<T>>, earlier: &Table<T>) {
        if parent.is_some_and(|p| Shared::ptr_eq(p, part)) {
            // Left alone by the step: the parent's part, interned already.
            return;
        }
        let h = part.hash_value();
        // Bits the shard's map does not use: it places by the low bits and
        // tags by the top seven.
        let at = (h >> 32) as usize % SHARDS;
        let mut shard = self.0[at].lock().expect("a checker thread panicked");
        match shard.get(&h) {
            Some(p) if p == part => *part = p.clone(),
            Some(_) => {}
            None => {
                let before = earlier.0[at].lock().expect("a checker thread panicked");
                match before.get(&h) {
                    Some(p) if p == part => *part = p.clone(),
                    Some(_) | None => Shared::trim(part, T::trim),
                }
                shard.insert(h, part.clone());
            }
        }
    }
}

/// The tables of the level being made and of the level before it, whose
/// states are being expanded.
#[derive(Clone, Copy)]
pub struct Interning<'a> {
    pub this_level: &'a Interner,
    pub level_before: &'a Interner,
}

impl Interning<'_> {
    /// Shares `state`'s parts with equal ones interned before, in either
    /// level; `parent` is the state it stepped from (whose parts are
    /// interned).
    pub fn intern(&self, state: &mut ModelState, parent: &ModelState) {
        self.this_level.intern(state, parent, self.level_before);
    }
}

impl Interner {
    fn intern(&self, state: &mut ModelState, parent: &ModelState, earlier: &Interner) {
        self.stores
            .intern(&mut state.store, Some(&parent.store), &earlier.stores);
        self.store_timers.intern(
            &mut state.store_timers,
            Some(&parent.store_timers),
            &earlier.store_timers,
        );
        self.resources.intern(
            &mut state.resource,
            Some(&parent.resource),
            &earlier.resources,
        );
        self.monitors.intern(
            &mut state.monitors,
            Some(&parent.monitors),
            &earlier.monitors,
        );
        for (k, slot) in state.clients.iter_mut().enumerate() {
            self.slots
                .intern(slot, parent.clients.get(k), &earlier.slots);
        }
    }
}

/// Renamings kept by a worker, each new one hash-consed in the level's
/// tables before it is kept: a part renamed from a kept renaming is then
/// the very part the frontier shares, which the interning of a new state
/// finds without comparing it in full.
pub struct Settled<'a> {
    pub kept: &'a mut Renamings,
    pub interning: Interning<'a>,
}

impl Settled<'_> {
    /// Renames `part` from the renamings kept, or afresh and then interned
    /// in `table` of this level (or shared with the level before's).
    fn rename<T: Part + Trim>(
        &mut self,
        part: &mut Shared<T>,
        p: &Perm,
        table: fn(&Interner) -> &Table<T>,
    ) {
        let this = table(self.interning.this_level);
        let before = table(self.interning.level_before);
        self.kept
            .rename(part, p, |to| this.intern(to, None, before));
    }
}

impl RenameParts for Settled<'_> {
    fn slot(&mut self, part: &mut Shared<ClientSlot>, p: &Perm) {
        self.rename(part, p, |i| &i.slots);
    }
    fn store(&mut self, part: &mut Shared<StoreState>, p: &Perm) {
        self.rename(part, p, |i| &i.stores);
    }
    fn store_timers(&mut self, part: &mut Shared<Timers>, p: &Perm) {
        self.rename(part, p, |i| &i.store_timers);
    }
    fn resource(&mut self, part: &mut Shared<ResourceState>, p: &Perm) {
        self.rename(part, p, |i| &i.resources);
    }
    fn monitors(&mut self, part: &mut Shared<Monitors>, p: &Perm) {
        self.rename(part, p, |i| &i.monitors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelCfg;
    use stateright::Model;

    /// A renaming the checker keeps is hash-consed first: renaming the same
    /// state afresh and interning it then finds the very parts kept.
    #[test]
    fn a_kept_renaming_is_the_part_the_tables_hold() {
        let recipe = crate::recipes::lookup("fair-predecessor", None).expect("shipped");
        let model = ModelCfg::new(recipe, 3).into_model().unwrap();
        // A few steps in, so that every part names clients.
        let mut state = model.init_states().remove(0);
        for _ in 0..12 {
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            let Some(next) = actions.first().and_then(|&a| model.next_state(&state, a)) else {
                break;
            };
            state = next;
        }
        let (this_level, level_before) = (Interner::default(), Interner::default());
        let interning = Interning {
            this_level: &this_level,
            level_before: &level_before,
        };
        let mut kept = Renamings::default();
        let p = [1, 2, 0];
        let mut renamed = state.clone();
        renamed.rename_with(
            &p,
            &mut Settled {
                kept: &mut kept,
                interning,
            },
        );
        let mut afresh = state.clone();
        crate::relabel::Relabel::relabel(&mut afresh, &p);
        assert_eq!(afresh, renamed);
        interning.intern(&mut afresh, &state);
        assert!(Shared::ptr_eq(&afresh.store, &renamed.store));
        assert!(Shared::ptr_eq(&afresh.store_timers, &renamed.store_timers));
        assert!(Shared::ptr_eq(&afresh.resource, &renamed.resource));
        assert!(Shared::ptr_eq(&afresh.monitors, &renamed.monitors));
        for (a, b) in afresh.clients.iter().zip(&renamed.clients) {
            assert!(Shared::ptr_eq(a, b));
        }
        // Renamed again: every part comes from the renamings kept, and is
        // the one the tables hold.
        let mut again = state.clone();
        again.rename_with(
            &p,
            &mut Settled {
                kept: &mut kept,
                interning,
            },
        );
        assert_eq!(again, afresh);
        assert!(Shared::ptr_eq(&again.store, &afresh.store));
        assert!(Shared::ptr_eq(&again.monitors, &afresh.monitors));
        for (a, b) in again.clients.iter().zip(&afresh.clients) {
            assert!(Shared::ptr_eq(a, b));
        }
    }
}
