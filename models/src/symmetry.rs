//! Symmetry reduction: clients are interchangeable, so states that differ
//! only in which client is which are explored once.
//!
//! A state is relabelled by a permutation of client indices applied to
//! everything that names a client: slots and their links, sessions, node
//! guids, etcd keys and leases, watches, the resource's log and the ghost
//! acquisition order. Sorted tables are re-sorted afterwards, so a relabelled
//! state is exactly a state the model can reach. The representative orders
//! clients by a label-free key; ties keep their order, which may leave two
//! representatives of one orbit (less reduction, never unsound).

use crate::client::{ClientState, Phase};
use crate::ids::ClientIdx;
use crate::model::{Action, ClientSlot, LockState};
pub use crate::relabel::{Perm, Relabel};
use crate::store::StoreState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

impl Relabel for ClientState {
    fn relabel(&mut self, p: &Perm) {
        self.session.relabel(p);
        self.recipe.relabel(p);
        self.pending.relabel(p);
    }
}

impl Relabel for ClientSlot {
    fn relabel(&mut self, p: &Perm) {
        self.state.relabel(p);
        self.timers.relabel(p);
        self.timers.sort();
        self.from_store.relabel(p);
        self.to_store.relabel(p);
        // Writes and acks name no client.
    }
}

impl Relabel for StoreState {
    fn relabel(&mut self, p: &Perm) {
        for (s, _) in &mut self.sessions {
            s.relabel(p);
        }
        self.sessions.sort();
        let zk = &mut self.zk;
        for (path, node) in &mut zk.nodes {
            path.relabel(p);
            node.ephemeral_owner.relabel(p);
        }
        zk.nodes.sort_by_key(|(path, _)| *path);
        for table in [&mut zk.data_watches, &mut zk.child_watches] {
            *table = std::mem::take(table)
                .into_iter()
                .map(|mut w| {
                    w.relabel(p);
                    w
                })
                .collect();
        }
        zk.children_cache.0 = None;
        let etcd = &mut self.etcd;
        etcd.kvs.relabel(p);
        etcd.kvs.sort_by_key(|kv| kv.key);
        for (key, _) in &mut etcd.deletes {
            key.relabel(p);
        }
        for w in &mut etcd.watchers {
            w.client.relabel(p);
            w.key.relabel(p);
        }
        etcd.watchers.sort();
    }
}

impl Relabel for LockState {
    fn relabel(&mut self, p: &Perm) {
        Arc::make_mut(&mut self.store).relabel(p);
        self.store_timers.relabel(p);
        self.store_timers.sort();
        for w in &mut self.resource.log {
            w.client.relabel(p);
        }
        for a in &mut self.acquisitions {
            a.client.relabel(p);
        }
        for slot in &mut self.clients {
            Arc::make_mut(slot).relabel(p);
        }
        let mut slots: Vec<(ClientIdx, Arc<ClientSlot>)> = std::mem::take(&mut self.clients)
            .into_iter()
            .enumerate()
            .map(|(old, slot)| (p[old], slot))
            .collect();
        slots.sort_by_key(|(new, _)| *new);
        self.clients = slots.into_iter().map(|(_, slot)| slot).collect();
    }
}

impl Relabel for Action {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Action::Deliver(c, _)
            | Action::Timeout(c, _)
            | Action::Crash(c)
            | Action::Pause(c)
            | Action::Resume(c)
            | Action::Partition(c)
            | Action::Heal(c)
            | Action::LoseReply(c) => c.relabel(p),
            Action::Expire(s) => s.relabel(p),
        }
    }
}

/// Sends every client to client 0: relabelling with it erases names.
static ERASE: [ClientIdx; crate::model::MAX_CLIENTS as usize] =
    [0; crate::model::MAX_CLIENTS as usize];

/// A hash of what a client slot looks like with every client name erased:
/// equal for two clients that are in the same situation.
fn label_free_key(slot: &ClientSlot) -> u64 {
    let mut h = ahash::RandomState::with_seeds(1, 2, 3, 4).build_hasher();
    slot.status.hash(&mut h);
    slot.partitioned.hash(&mut h);
    slot.missed_contact.hash(&mut h);
    let st = &slot.state;
    (st.rounds_done, st.holds, st.epoch, st.session.incarnation).hash(&mut h);
    match st.phase {
        Phase::Holding {
            token,
            granted,
            sent,
            acked,
        } => (5u8, token, granted, sent, acked).hash(&mut h),
        Phase::Connecting | Phase::Thinking | Phase::Acquiring | Phase::Releasing | Phase::Done => {
            std::mem::discriminant(&st.phase).hash(&mut h)
        }
    }
    // The recipe's state with every client name erased: its node's
    // sequence, its revision, what it waits for, but not whose it is.
    match &st.recipe {
        Some(r) => r.hash_unlabelled(&ERASE, &mut h),
        None => 0u8.hash(&mut h),
    }
    (
        slot.timers.len(),
        slot.from_store.len(),
        slot.to_store.len(),
    )
        .hash(&mut h);
    // Writes and acks name no client.
    slot.to_resource.hash(&mut h);
    slot.from_resource.hash(&mut h);
    h.finish()
}

/// The representative of `state`'s orbit, and the permutation that maps
/// `state` to it.
pub fn representative(state: &LockState) -> (LockState, Vec<ClientIdx>) {
    let n = state.clients.len();
    let keys: Vec<u64> = state.clients.iter().map(|s| label_free_key(s)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (keys[i], i));
    let mut perm = vec![0 as ClientIdx; n];
    for (new, &old) in order.iter().enumerate() {
        perm[old] = new as ClientIdx;
    }
    if perm.iter().enumerate().all(|(i, &p)| p as usize == i) {
        return (state.clone(), perm);
    }
    let mut rep = state.clone();
    rep.relabel(&perm);
    (rep, perm)
}

/// The inverse of a permutation.
pub fn inverse(perm: &Perm) -> Vec<ClientIdx> {
    let mut inv = vec![0 as ClientIdx; perm.len()];
    for (old, &new) in perm.iter().enumerate() {
        inv[new as usize] = old as ClientIdx;
    }
    inv
}
