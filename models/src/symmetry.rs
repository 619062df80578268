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
use crate::ids::{Child, ClientIdx, Key, SessionId, ZPath};
use crate::model::{Action, ClientSlot, LockState};
use crate::msg::{Kv, Msg, OpResult, Range, Reply, Request, Timer, TxnOp, WatchEvent};
use crate::recipes::{etcd_revision, fair_predecessor, RecipeState};
use crate::store::StoreState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

/// `perm[old] = new`.
pub type Perm = [ClientIdx];

/// Rewrites every client index in a value.
pub trait Relabel {
    fn relabel(&mut self, p: &Perm);
}

impl Relabel for ClientIdx {
    fn relabel(&mut self, p: &Perm) {
        *self = p[*self as usize];
    }
}

impl Relabel for SessionId {
    fn relabel(&mut self, p: &Perm) {
        self.client.relabel(p);
    }
}

impl<T: Relabel> Relabel for Option<T> {
    fn relabel(&mut self, p: &Perm) {
        if let Some(x) = self {
            x.relabel(p);
        }
    }
}

impl<T: Relabel> Relabel for Vec<T> {
    fn relabel(&mut self, p: &Perm) {
        for x in self {
            x.relabel(p);
        }
    }
}

impl<A: Relabel, B: Relabel> Relabel for (A, B) {
    fn relabel(&mut self, p: &Perm) {
        self.0.relabel(p);
        self.1.relabel(p);
    }
}

impl Relabel for u64 {
    fn relabel(&mut self, _: &Perm) {}
}

impl Relabel for Child {
    fn relabel(&mut self, p: &Perm) {
        self.guid.relabel(p);
    }
}

impl Relabel for ZPath {
    fn relabel(&mut self, p: &Perm) {
        if let ZPath::Child(c) = self {
            c.relabel(p);
        }
    }
}

impl Relabel for Key {
    fn relabel(&mut self, p: &Perm) {
        self.0.relabel(p);
    }
}

impl Relabel for Kv {
    fn relabel(&mut self, p: &Perm) {
        self.key.relabel(p);
        self.lease.relabel(p);
    }
}

impl Relabel for Range {
    fn relabel(&mut self, p: &Perm) {
        self.key.relabel(p);
    }
}

impl Relabel for Request {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Request::Create { path, .. }
            | Request::Delete { path }
            | Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::GetChildren { path, .. } => path.relabel(p),
            Request::Txn(t) => {
                t.compare_create_revision.0.relabel(p);
                for op in t.success.iter_mut().chain(t.failure.iter_mut()) {
                    match op {
                        TxnOp::Put { key, lease } => {
                            key.relabel(p);
                            lease.relabel(p);
                        }
                        TxnOp::Range(r) => r.relabel(p),
                    }
                }
            }
            Request::Range(r) => r.relabel(p),
            Request::Watch { key, .. } | Request::DeleteKey { key } => key.relabel(p),
            Request::Connect | Request::LeaseGrant => {}
        }
    }
}

impl Relabel for Reply {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Reply::Created { path, .. } => path.relabel(p),
            Reply::Stat(Some(stat)) => stat.ephemeral_owner.relabel(p),
            Reply::Children(children) => {
                // Relabelling names keeps the sequence order.
                *children = children
                    .iter()
                    .map(|c| {
                        let mut c = *c;
                        c.relabel(p);
                        c
                    })
                    .collect();
            }
            Reply::TxnResult { responses, .. } => {
                for r in responses {
                    if let OpResult::Range { kvs } = r {
                        kvs.relabel(p);
                    }
                }
            }
            Reply::RangeResult { kvs, .. } => kvs.relabel(p),
            _ => {}
        }
    }
}

impl Relabel for WatchEvent {
    fn relabel(&mut self, p: &Perm) {
        match self {
            WatchEvent::Zk { path, .. } => path.relabel(p),
            WatchEvent::Etcd { key, .. } => key.relabel(p),
        }
    }
}

impl Relabel for Msg {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Msg::Request { session, req, .. } => {
                session.relabel(p);
                req.relabel(p);
            }
            Msg::Reply { reply, .. } => reply.relabel(p),
            Msg::Ping { session }
            | Msg::Pong { session }
            | Msg::Expired { session }
            | Msg::Close { session } => session.relabel(p),
            Msg::Notify { event, .. } => event.relabel(p),
            Msg::Write { .. } | Msg::WriteAck { .. } => {}
        }
    }
}

impl Relabel for Timer {
    fn relabel(&mut self, p: &Perm) {
        if let Timer::Expiry(s) = self {
            s.relabel(p);
        }
    }
}

impl Relabel for RecipeState {
    fn relabel(&mut self, p: &Perm) {
        use fair_predecessor::State as F;
        match self {
            RecipeState::Fair(s) => match s {
                F::Listing(m) | F::FetchingToken(m) | F::Holding(m) => m.node.relabel(p),
                F::Watching(m, pred) | F::Waiting(m, pred) => {
                    m.node.relabel(p);
                    pred.relabel(p);
                }
                F::Creating | F::Finding => {}
            },
            RecipeState::Etcd(
                etcd_revision::State::Watching { key, .. }
                | etcd_revision::State::Waiting { key, .. },
            ) => key.relabel(p),
            // children-watch names nodes without a guid; unfair-create names none.
            _ => {}
        }
    }
}

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
        other => std::mem::discriminant(&other).hash(&mut h),
    }
    std::mem::discriminant(&st.recipe).hash(&mut h);
    match st.recipe {
        RecipeState::Fair(f) => std::mem::discriminant(&f).hash(&mut h),
        RecipeState::Etcd(e) => {
            // Hash the revision, not the watched key (which names a client).
            std::mem::discriminant(&e).hash(&mut h);
            etcd_my_rev(e).hash(&mut h);
        }
        RecipeState::Unfair(u) => u.hash(&mut h),
        RecipeState::Children(c) => c.hash(&mut h),
        RecipeState::Idle => {}
    }
    if let Some(own) = own_sequence(st) {
        own.hash(&mut h);
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

fn etcd_my_rev(st: etcd_revision::State) -> Option<u64> {
    use etcd_revision::State as E;
    match st {
        E::Trying => None,
        E::Ranging { my_rev }
        | E::Watching { my_rev, .. }
        | E::Waiting { my_rev, .. }
        | E::Verifying { my_rev }
        | E::Holding { my_rev } => Some(my_rev),
    }
}

fn own_sequence(st: &ClientState) -> Option<u32> {
    use fair_predecessor::State as F;
    match st.recipe {
        RecipeState::Fair(
            F::Listing(m)
            | F::Watching(m, _)
            | F::Waiting(m, _)
            | F::FetchingToken(m)
            | F::Holding(m),
        ) => Some(m.node.seq),
        RecipeState::Children(
            crate::recipes::children_watch::State::Listing(m)
            | crate::recipes::children_watch::State::Waiting(m)
            | crate::recipes::children_watch::State::Holding(m),
        ) => Some(m.node.seq),
        _ => None,
    }
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
