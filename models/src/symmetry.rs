//! Symmetry reduction: clients are interchangeable, so states that differ
//! only in which client is which are explored once.
//!
//! A state is relabelled by a permutation of client indices applied to
//! everything that names a client: slots and their links, sessions, node
//! guids, etcd keys and leases, watches, the resource's log and the ghost
//! acquisition order. Sorted tables are re-sorted afterwards, so a relabelled
//! state is exactly a state the model can reach. The representative orders
//! clients by a label-free key of their slots, then clients whose slots tie
//! by a label-free key of what the rest of the state says about each
//! ([`outside_key`]); every order of clients still tied is tried and the
//! one with the smallest fingerprint kept, so every state of an orbit has
//! the same representative (up to hash collisions).

use crate::client::{ClientState, Phase};
use crate::ids::ClientIdx;
use crate::model::{Action, ClientSlot, ModelState, Shared};
use crate::msg::Msg;
pub use crate::relabel::{Perm, Relabel};
use crate::renamings::{Afresh, RenameParts};
use crate::store::StoreState;
use smallvec::SmallVec;
use std::hash::{BuildHasher, Hash, Hasher};

impl Relabel for ClientState {
    fn relabel(&mut self, p: &Perm) {
        self.session.relabel(p);
        self.recipe.relabel(p);
        self.pending.relabel(p);
        if let Some(resume) = &mut self.resume {
            let (recipe, req) = &mut **resume;
            recipe.relabel(p);
            req.relabel(p);
        }
    }
}

impl Relabel for ClientSlot {
    fn relabel(&mut self, p: &Perm) {
        self.state.relabel(p);
        self.timers.relabel(p);
        match &mut self.clock.0 {
            None => self.timers.sort(),
            // A timed check's countdowns stay with their timers.
            Some(clock) => {
                let mut paired: Vec<_> = self
                    .timers
                    .iter()
                    .copied()
                    .zip(clock.timers.iter().copied())
                    .collect();
                paired.sort();
                self.timers = paired.iter().map(|&(t, _)| t).collect();
                clock.timers = paired.iter().map(|&(_, d)| d).collect();
            }
        }
        self.from_store.relabel(p);
        self.to_store.relabel(p);
        // Writes and acks name no client, nor does the saved storage.
    }
}

impl Relabel for StoreState {
    fn relabel(&mut self, p: &Perm) {
        for (s, _) in &mut self.sessions {
            s.relabel(p);
        }
        self.sessions.sort();
        if let Some(b) = &mut self.barrier {
            let crate::store::Members {
                group: _,
                entered,
                leaving,
            } = b;
            for members in [entered, leaving] {
                for c in members.iter_mut() {
                    c.relabel(p);
                }
                members.sort_unstable();
            }
        }
        if let Some(q) = &mut self.queue {
            let crate::store::QueueLedger { claims: _, removed } = q;
            for (_, by) in removed {
                by.relabel(p);
            }
        }
        let zk = &mut self.zk;
        for (path, node) in &mut zk.nodes {
            path.relabel(p);
            node.ephemeral_owner.relabel(p);
            node.data.relabel(p);
        }
        zk.nodes.sort_by_key(|(path, _)| *path);
        for table in [&mut zk.data_watches, &mut zk.child_watches] {
            table.rename(|w| w.relabel(p));
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
        for w in &mut etcd.range_watchers {
            w.client.relabel(p);
            w.keys.relabel(p);
        }
        etcd.range_watchers.sort();
        // Redis keys are the recipes' own text: only values and setters
        // name clients, and the keys keep their order.
        for e in self.redis.entries_mut() {
            e.value.relabel(p);
            if let Some(ttl) = &mut e.ttl {
                ttl.setter.relabel(p);
            }
        }
        if let Some(r) = &mut self.redis.replica {
            for w in &mut r.waits {
                w.session.relabel(p);
            }
            r.waits.sort_unstable();
        }
        if let Some(c) = &mut self.consul {
            // Keys named by a session (a semaphore's contender keys) move
            // with it.
            for pair in &mut c.pairs {
                pair.relabel(p);
            }
            c.pairs.sort_by_key(|pair| pair.key);
            for (s, _) in &mut c.sessions {
                s.relabel(p);
            }
            c.sessions.sort_by_key(|(s, _)| (s.client, s.incarnation));
            for (key, s) in &mut c.delays {
                key.relabel(p);
                s.relabel(p);
            }
            c.delays.sort_by_key(|(key, _)| *key);
            for q in &mut c.queries {
                q.client.relabel(p);
                q.key.relabel(p);
            }
            c.queries.sort_unstable();
        }
        self.first_in_line.relabel(p);
    }
}

/// A state is relabelled by a permutation of its clients only (erasing
/// names is for parts: a state's slots must each go somewhere).
impl Relabel for ModelState {
    fn relabel(&mut self, p: &Perm) {
        self.rename_with(p, &mut Afresh);
    }
}

impl ModelState {
    /// Relabels the state by a permutation of its clients, each part
    /// renamed by `parts` (afresh, or from renamings kept).
    pub fn rename_with(&mut self, p: &Perm, parts: &mut impl RenameParts) {
        // Checked in every build: the in-place move of the slots below
        // would not end for a map that is not a permutation.
        assert!(
            is_permutation(p, self.clients.len()),
            "a state is relabelled by a permutation of its clients, not {p:?}"
        );
        // A timed check's store countdowns are not renamed with the store's
        // timers: it explores without symmetry (`checker::check`).
        debug_assert!(self.store_clock.0.is_none(), "a timed state renamed");
        parts.store(&mut self.store, p);
        parts.store_timers(&mut self.store_timers, p);
        parts.resource(&mut self.resource, p);
        parts.monitors(&mut self.monitors, p);
        for slot in &mut self.clients {
            parts.slot(slot, p);
        }
        // Each slot to its new place, in place: a swap puts the slot at
        // `i` where it goes, and brings `i` the slot from there.
        let mut to: SmallVec<[ClientIdx; 8]> = SmallVec::from_slice(p);
        for i in 0..self.clients.len() {
            while to[i] as usize != i {
                let j = to[i] as usize;
                self.clients.swap(i, j);
                to.swap(i, j);
            }
        }
    }
}

impl Relabel for Action {
    fn relabel(&mut self, p: &Perm) {
        // Every step names one client and no other (a session names its
        // client); a tick names none.
        if let Some(c) = self.client_mut() {
            c.relabel(p);
        }
    }
}

/// A hash of what a client slot looks like with every client name erased:
/// equal for two clients that are in the same situation.
///
/// In three tiers, by how often a step changes them: its high half hashes
/// what changes seldom (process and link status, rounds, acquisitions,
/// session, connection, phase), the next quarter where the client is in
/// its protocol (epoch, what it holds, the recipe's state, its timers),
/// the low quarter its messages in flight, which nearly every step that
/// touches the client changes. Clients are ordered by it, so a
/// step that changes only a client's traffic moves it only among clients
/// whose other tiers tie: more successors keep every client where it was,
/// and a state kept in its own names is not relabelled (every part
/// rebuilt and hashed again). Measured on fair-predecessor at 4 clients
/// with a crash, safety only: 81% of successors keep their names with
/// three tiers (79% with the timers in the low one), 75% with two
/// (seldom, and everything else together), 54% before ties were told
/// apart by [`outside_key`].
fn label_free_key(slot: &ClientSlot) -> u64 {
    let st = &slot.state;
    let seldom = crate::fixed_hash::hash_one(
        5,
        &(
            slot.status,
            slot.partitioned,
            slot.missed_contact,
            st.rounds_done,
            st.holds,
            st.session.incarnation,
            st.connection,
            std::mem::discriminant(&st.phase),
        ),
    );
    // What it saved for a successor (kept only where restarts are
    // checked) changes as seldom: with it only when kept, so the key of a
    // check without restarts is what it was. So does the number of the
    // lease the store granted it (leases numbered in grant order only):
    // no name, and it tells apart clients that are not alike.
    let seldom = match slot.saved.0 {
        Some(saved) => crate::fixed_hash::hash_one(5, &(seldom, saved)),
        None => seldom,
    };
    let seldom = match st.session.grant {
        0 => seldom,
        grant => crate::fixed_hash::hash_one(5, &(seldom, grant)),
    };
    (seldom & !0xffff_ffff) | (protocol_key(slot) & 0xffff_0000) | (traffic_key(slot) & 0xffff)
}

/// A label-free hash of what the parts outside client `c`'s slot say
/// about it: its sessions, the nodes and keys they own and the watches they
/// hold, its writes the resource accepted and its acquisitions, each item
/// with what places it that names no client (a zxid, a revision, a place in
/// the log) and without the client names in it. Items are summed, so the
/// order of a table sorted by client names does not count.
///
/// Computed only for clients whose slots tie: measured on fair-predecessor
/// at 4 clients with a crash, 97% of the states with tied slots are told
/// apart only by the resource's log, the monitors or the ZooKeeper tree.
fn outside_key(state: &ModelState, c: ClientIdx) -> u64 {
    use crate::ids::{Data, Key, SessionId, ZPath};
    use crate::msg::Keys;
    fn item<T: Hash>(what: &T) -> u64 {
        crate::fixed_hash::hash_one(7, what)
    }
    let mine = |s: &SessionId| s.client == c;
    // A session with its client erased: its incarnation, its grant
    // number if the store numbered it, and whether it is `c`'s.
    let erased = |s: SessionId| Erased(s.incarnation, s.grant, mine(&s));
    // A path with the client in its guid erased (whose node it is, is what
    // `mine` asks of the owner).
    let shape = |p: &ZPath| match *p {
        ZPath::Node { dir, child } => (dir, child.seq, Some(child.prefix), child.guid.map(erased)),
        ZPath::Fixed(name) => (name, None, None, None),
    };
    let data = |d: Data| match d {
        Data::Empty => (0u8, 0, None),
        Data::Number(n) => (1, n, None),
        Data::Session(s) => (2, 0, Some(erased(s))),
        // A Consul semaphore's holders: the Consul store is not keyed here.
        Data::Holders(h) => (3, h.len() as u64, None),
    };
    let names_c = |d: Data| matches!(d, Data::Session(s) if mine(&s));
    let key = |k: Key| (k.prefix, k.lease.map(erased));
    let store = &state.store;
    let mut sum = 0u64;
    let mut add = |v: u64| sum = sum.wrapping_add(v);
    for (s, alive) in store.sessions.iter().filter(|(s, _)| mine(s)) {
        add(match s.grant {
            0 => item(&(1u8, s.incarnation, alive)),
            grant => item(&(1u8, s.incarnation, alive, grant)),
        });
    }
    for (path, node) in &store.zk.nodes {
        let owner = node.ephemeral_owner.filter(mine).map(|s| s.incarnation);
        let path = shape(path);
        let named = path.3.is_some_and(|Erased(_, _, m)| m) || names_c(node.data);
        if owner.is_some() || named {
            add(item(&(
                2u8,
                path,
                owner,
                (node.czxid, node.mzxid, node.version),
                data(node.data),
            )));
        }
    }
    for (tag, watches) in [(3u8, &store.zk.data_watches), (4, &store.zk.child_watches)] {
        for (path, s) in watches.iter().filter(|(_, s)| mine(s)) {
            add(item(&(tag, shape(path), s.incarnation)));
        }
    }
    let etcd = &store.etcd;
    for kv in etcd.kvs.iter().filter(|kv| {
        kv.key.lease.is_some_and(|l| mine(&l))
            || kv.lease.is_some_and(|l| mine(&l))
            || names_c(kv.value)
    }) {
        add(item(&(
            5u8,
            key(kv.key),
            kv.lease.map(erased),
            (kv.create_revision, kv.mod_revision, kv.version),
            data(kv.value),
        )));
    }
    for (k, rev) in etcd
        .deletes
        .iter()
        .filter(|(k, _)| k.lease.is_some_and(|l| mine(&l)))
    {
        add(item(&(6u8, key(*k), rev)));
    }
    for w in etcd.watchers.iter().filter(|w| w.client == c) {
        add(item(&(7u8, key(w.key), w.start_revision)));
    }
    for w in etcd.range_watchers.iter().filter(|w| w.client == c) {
        let keys = match w.keys {
            Keys::One(k) => (0u8, Some(key(k)), None, None),
            Keys::Prefix(p) => (1, None, Some(p), None),
            Keys::Between { from, end } => (2, None, Some(from), end),
        };
        add(item(&(10u8, keys, w.start_revision)));
    }
    for (at, e) in state.store.redis.entries() {
        let setter = e.ttl.map(|t| t.setter).filter(mine);
        if setter.is_some() || names_c(e.value) {
            let ttl = e.ttl.map(|t| (t.ms, erased(t.setter)));
            add(item(&(11u8, at, e.key, data(e.value), ttl)));
        }
    }
    for w in state.store.redis.waits().filter(|w| mine(&w.session)) {
        add(item(&(12u8, w.behind, erased(w.session), w.epoch)));
    }
    for (at, w) in state.resource.log.iter().enumerate() {
        if w.client == c {
            add(item(&(8u8, at, w.hold, w.token)));
        }
    }
    for (at, a) in state.monitors.acquisitions.iter().enumerate() {
        if a.client == c {
            add(item(&(9u8, at, a.hold, a.granted, a.token, a.owned)));
        }
    }
    sum
}

/// A session with its client's name erased: its incarnation, the store's
/// grant number (hashed only when there is one, so that a check whose
/// leases are not numbered keys as before), and whether it is the
/// client's being keyed.
#[derive(Clone, Copy)]
struct Erased(u16, u32, bool);

impl Hash for Erased {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.hash(h);
        if self.1 != 0 {
            self.1.hash(h);
        }
        self.2.hash(h);
    }
}

/// The label-free hash of where a client is in its protocol: its epoch,
/// what it holds, the recipe's state, its timers (changed by some of its
/// steps).
fn protocol_key(slot: &ClientSlot) -> u64 {
    let mut h = crate::fixed_hash::seeded(1).build_hasher();
    let st = &slot.state;
    st.epoch.hash(&mut h);
    match st.phase {
        Phase::Holding {
            token,
            granted,
            owned,
            sent,
            acked,
        } => (token, granted, owned, sent, acked).hash(&mut h),
        Phase::Connecting | Phase::Thinking | Phase::Acquiring | Phase::Releasing | Phase::Done => {
        }
    }
    // The recipe's state with every client name erased: its node's
    // sequence, its revision, what it waits for, but not whose it is.
    st.recipe.as_ref().map(|r| r.unlabelled_hash()).hash(&mut h);
    st.resume
        .as_ref()
        .map(|r| (r.0.unlabelled_hash(), std::mem::discriminant(&r.1)))
        .hash(&mut h);
    // Timers by kind.
    for t in &slot.timers {
        std::mem::discriminant(t).hash(&mut h);
    }
    h.finish()
}

/// The label-free hash of a client's messages in flight (changed by
/// nearly every step that touches the client).
fn traffic_key(slot: &ClientSlot) -> u64 {
    let mut h = crate::fixed_hash::seeded(2).build_hasher();
    // Messages by their shape (what kind, which epoch, which header),
    // without the names in them: few ties are left for `representative`
    // to try every order of.
    for link in [&slot.from_store, &slot.to_store] {
        link.len().hash(&mut h);
        for m in link {
            hash_shape(m, &mut h);
        }
    }
    // Writes and acks name no client.
    slot.to_resource.hash(&mut h);
    slot.from_resource.hash(&mut h);
    h.finish()
}

/// What a message is, without the client names in it.
fn hash_shape<H: Hasher>(m: &Msg, h: &mut H) {
    std::mem::discriminant(m).hash(h);
    match m {
        Msg::Request {
            epoch,
            release,
            req,
            ..
        } => (epoch, release, req.kind()).hash(h),
        Msg::Reply {
            epoch,
            header,
            owns_first,
            reply,
        } => (epoch, header, owns_first, std::mem::discriminant(reply)).hash(h),
        Msg::Notify {
            header,
            owns_first,
            event,
        } => (header, owns_first, std::mem::discriminant(event)).hash(h),
        Msg::Close { .. }
        | Msg::Ping { .. }
        | Msg::Pong { .. }
        | Msg::Expired { .. }
        | Msg::Write { .. }
        | Msg::WriteAck { .. } => {}
    }
}

/// The representative of `state`'s orbit, and the permutation that maps
/// `state` to it.
///
/// Clients are sorted by their slots' label-free keys, clients whose slots
/// tie by [`outside_key`]. Clients whose keys both tie are in the same
/// situation up to names, and any order of them is a candidate; the
/// candidate with the smallest hash is chosen, so the representative does
/// not depend on how the state was labelled: every state of an orbit maps to
/// the same representative (up to hash collisions).
pub fn representative(state: &ModelState) -> (ModelState, Vec<ClientIdx>) {
    let (rep, perm, _) = representative_and_fingerprint(state.clone(), &mut Afresh);
    (rep, perm.to_vec())
}

/// A client's label-free key, computed once per slot: a successor shares
/// every slot its step left alone, with its key, and renaming clients
/// keeps each slot's key (`ModelState::relabel`), so a state's keys are
/// mostly its parent's.
fn slot_key(slot: &Shared<ClientSlot>) -> u64 {
    slot.key(label_free_key)
}

/// A permutation of a state's clients, kept inline (the checker takes one
/// for every state it generates).
pub type PermBuf = SmallVec<[ClientIdx; 8]>;

/// The checker's fingerprint of a state: a 64-bit hash with fixed seeds.
pub fn fingerprint(state: &ModelState) -> u64 {
    crate::fixed_hash::hash_one(0x6c6f_636b_7374_6570, state)
}

/// [`representative`] of a state the caller gives up (relabelled in place:
/// renamed afresh, the parts it does not share are not copied again), and the
/// representative's fingerprint when choosing it took one (clients tied),
/// so the checker need not hash it again. Its parts are renamed by
/// `parts` (the checker keeps the renamings it did: [`Renamings`]).
///
/// [`Renamings`]: crate::renamings::Renamings
pub fn representative_and_fingerprint(
    state: ModelState,
    parts: &mut impl RenameParts,
) -> (ModelState, PermBuf, Option<u64>) {
    let n = state.clients.len();
    let keys: SmallVec<[u64; 8]> = state.clients.iter().map(slot_key).collect();
    let mut order: SmallVec<[usize; 8]> = (0..n).collect();
    order.sort_by_key(|&i| (keys[i], i));
    let mut groups = tied_groups(&order, &keys);
    if !groups.is_empty() {
        // Clients whose slots tie, told apart where they can be by what
        // the rest of the state says about each: every order of a tie is
        // built and hashed, an order of the others is not.
        let mut refined: SmallVec<[(u64, u64); 8]> = keys.iter().map(|&k| (k, 0)).collect();
        for g in &groups {
            for &i in &order[g.clone()] {
                refined[i].1 = outside_key(&state, i as ClientIdx);
            }
        }
        order.sort_by_key(|&i| (refined[i], i));
        groups = tied_groups(&order, &refined);
    }
    if groups.is_empty() {
        let (rep, perm) = renamed(state, &order, parts);
        return (rep, perm, None);
    }
    let mut best: Option<(u64, ModelState, PermBuf)> = None;
    let mut candidate = order;
    loop {
        let (rep, perm) = renamed(state.clone(), &candidate, parts);
        let h = fingerprint(&rep);
        if best.as_ref().is_none_or(|(bh, _, _)| h < *bh) {
            best = Some((h, rep, perm));
        }
        if !next_arrangement(&mut candidate, &groups) {
            break;
        }
    }
    let (h, rep, perm) = best.expect("at least one candidate");
    (rep, perm, Some(h))
}

/// `state` with client `order[k]` renamed `k` (in place: renamed afresh,
/// the parts it does not share are not copied again), and that
/// permutation.
fn renamed(
    mut state: ModelState,
    order: &[usize],
    parts: &mut impl RenameParts,
) -> (ModelState, PermBuf) {
    let mut perm: PermBuf = smallvec::smallvec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        perm[old] = new as ClientIdx;
    }
    if perm.iter().enumerate().any(|(i, &p)| p as usize != i) {
        state.rename_with(&perm, parts);
    }
    (state, perm)
}

/// Ranges of `order` (sorted by key) whose keys are equal, two or more long.
fn tied_groups<K: PartialEq>(order: &[usize], keys: &[K]) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    for end in 1..=order.len() {
        if end == order.len() || keys[order[end]] != keys[order[start]] {
            if end - start > 1 {
                groups.push(start..end);
            }
            start = end;
        }
    }
    groups
}

/// Steps to the next arrangement of the tied groups (each group's members
/// through every permutation, groups like the digits of a counter); false
/// once every arrangement has been seen.
fn next_arrangement(order: &mut [usize], groups: &[std::ops::Range<usize>]) -> bool {
    for g in groups {
        if next_permutation(&mut order[g.clone()]) {
            return true;
        }
        // This group wrapped round to its first (sorted) arrangement; carry.
    }
    false
}

/// Lexicographic next permutation; on the last one, wraps to the first
/// (sorted) and returns false.
fn next_permutation(xs: &mut [usize]) -> bool {
    let Some(i) = (1..xs.len()).rev().find(|&i| xs[i - 1] < xs[i]) else {
        xs.reverse();
        return false;
    };
    let j = (i..xs.len())
        .rev()
        .find(|&j| xs[j] > xs[i - 1])
        .expect("a larger element");
    xs.swap(i - 1, j);
    xs[i..].reverse();
    true
}

/// Whether `p` maps `0..n` onto itself.
fn is_permutation(p: &Perm, n: usize) -> bool {
    let mut hit: SmallVec<[bool; 8]> = smallvec::smallvec![false; n];
    p.len() == n
        && p.iter()
            .all(|&x| (x as usize) < n && !std::mem::replace(&mut hit[x as usize], true))
}

/// The inverse of a permutation.
pub fn inverse(perm: &Perm) -> Vec<ClientIdx> {
    let mut inv = vec![0 as ClientIdx; perm.len()];
    for (old, &new) in perm.iter().enumerate() {
        inv[new as usize] = old as ClientIdx;
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FaultBudget, ModelCfg};
    use stateright::Model;

    /// Random walks from the initial state of every shipped recipe with 3
    /// clients, under faults: `seen` is shown every state walked through.
    fn walk_states(mut seen: impl FnMut(&ModelState)) {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for r in crate::recipes::REGISTRY {
            let cfg = ModelCfg {
                faults: FaultBudget {
                    crashes: 1,
                    pauses: 1,
                    lost_replies: 1,
                    ..Default::default()
                },
                ..ModelCfg::new((r.build)(None), 3)
            };
            let model = cfg.into_model().unwrap();
            for _ in 0..30 {
                let mut state = model.init_states().remove(0);
                let mut actions = Vec::new();
                for _ in 0..60 {
                    seen(&state);
                    actions.clear();
                    model.actions(&state, &mut actions);
                    let Some(&a) = actions.get(next() as usize % actions.len().max(1)) else {
                        break;
                    };
                    if let Some(s) = model.next_state(&state, a) {
                        state = s;
                    }
                }
            }
        }
    }

    #[test]
    fn the_outside_key_names_no_client() {
        walk_states(|state| {
            for p in [[1, 2, 0], [0, 2, 1], [2, 1, 0]] {
                let mut renamed = state.clone();
                renamed.relabel(&p);
                for c in 0..3 {
                    assert_eq!(
                        outside_key(&renamed, p[c as usize]),
                        outside_key(state, c),
                        "client {c} renamed by {p:?} in {state:?}"
                    );
                }
            }
        });
    }

    /// What the outside key is for: clients whose slots tie, and who are
    /// not interchangeable (swapping their names changes the state), are
    /// told apart.
    #[test]
    fn the_outside_key_tells_apart_clients_whose_slots_tie() {
        let (mut tied, mut told_apart) = (0, 0);
        walk_states(|state| {
            for a in 0..3 {
                for b in a + 1..3 {
                    let (sa, sb) = (&state.clients[a], &state.clients[b]);
                    let mut swap: [ClientIdx; 3] = [0, 1, 2];
                    swap.swap(a, b);
                    let mut swapped = state.clone();
                    swapped.relabel(&swap);
                    if slot_key(sa) == slot_key(sb) && swapped != *state {
                        tied += 1;
                        let outside = |c: usize| outside_key(state, c as ClientIdx);
                        told_apart += usize::from(outside(a) != outside(b));
                    }
                }
            }
        });
        assert!(tied > 20, "the walks meet ties: {tied}");
        assert!(
            told_apart * 10 >= tied * 9,
            "{told_apart} of {tied} tied pairs told apart"
        );
    }

    /// Renaming from the renamings kept gives exactly what renaming afresh
    /// gives, every part with its true hash and key; a part renamed again
    /// by the same permutation is the one kept, not a copy.
    #[test]
    fn a_kept_renaming_is_the_renaming_afresh() {
        let mut kept = crate::renamings::Renamings::default();
        let mut renamings = 0;
        walk_states(|state| {
            for p in [[1, 2, 0], [0, 2, 1], [2, 1, 0]] {
                let mut afresh = state.clone();
                afresh.relabel(&p);
                let mut first = state.clone();
                first.rename_with(&p, &mut kept);
                let mut again = state.clone();
                again.rename_with(&p, &mut kept);
                // A table that fills up is emptied: if that happened while
                // `first` was renamed, `again` renamed some parts afresh
                // and kept them. A third renaming finds every one.
                let mut third = state.clone();
                third.rename_with(&p, &mut kept);
                for renamed in [&first, &again, &third] {
                    assert_eq!(*renamed, afresh, "{state:?} renamed by {p:?}");
                    assert_eq!(fingerprint(renamed), fingerprint(&afresh));
                    let true_hash =
                        |s: &Shared<StoreState>| Shared::new((**s).clone()).hash_value();
                    assert_eq!(renamed.store.hash_value(), true_hash(&renamed.store));
                    for slot in &renamed.clients {
                        assert_eq!(slot_key(slot), label_free_key(slot));
                        let fresh = Shared::new((**slot).clone());
                        assert_eq!(slot.hash_value(), fresh.hash_value());
                    }
                }
                assert!(Shared::ptr_eq(&again.store, &third.store));
                assert!(Shared::ptr_eq(&again.store_timers, &third.store_timers));
                assert!(Shared::ptr_eq(&again.resource, &third.resource));
                assert!(Shared::ptr_eq(&again.monitors, &third.monitors));
                for (a, b) in again.clients.iter().zip(&third.clients) {
                    assert!(Shared::ptr_eq(a, b), "a slot renamed twice is copied twice");
                }
                renamings += 1;
            }
        });
        assert!(renamings > 1000, "{renamings} states renamed");
    }
}
