//! Relabelling: rewriting every client name in a value by a map of client
//! indices. Symmetry reduction relabels whole states by a permutation; the
//! label-free key that orders clients relabels with a map that sends every
//! client to one name, erasing who is who.
//!
//! Every type that can name a client (a client index, a session, a node
//! guid, an etcd key or lease) implements [`Relabel`]; the impls over our
//! own enums match every variant, so a new variant that names a client
//! cannot be forgotten. A recipe's state implements it the same way.

use crate::ids::{Child, ClientIdx, Key, SessionId, ZPath};
use crate::msg::{Kv, Msg, OpResult, Range, Reply, Request, Stat, Timer, TxnOp, WatchEvent};

/// `map[old] = new`: a permutation of the clients, or (to erase names) any map.
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

impl<A: smallvec::Array> Relabel for smallvec::SmallVec<A>
where
    A::Item: Relabel,
{
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

/// Values that name no client.
macro_rules! names_no_client {
    ($($t:ty),*) => {
        $(impl Relabel for $t {
            fn relabel(&mut self, _: &Perm) {}
        })*
    };
}
names_no_client!(u8, u32, u64, bool, ());

impl Relabel for Child {
    fn relabel(&mut self, p: &Perm) {
        self.guid.relabel(p);
    }
}

impl Relabel for ZPath {
    fn relabel(&mut self, p: &Perm) {
        match self {
            ZPath::Child(c) | ZPath::Taken(c) => c.relabel(p),
            ZPath::Lock | ZPath::Ready => {}
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

impl Relabel for Stat {
    fn relabel(&mut self, p: &Perm) {
        self.ephemeral_owner.relabel(p);
    }
}

impl Relabel for TxnOp {
    fn relabel(&mut self, p: &Perm) {
        match self {
            TxnOp::Put { key, lease } => {
                key.relabel(p);
                lease.relabel(p);
            }
            TxnOp::Range(r) => r.relabel(p),
        }
    }
}

impl Relabel for OpResult {
    fn relabel(&mut self, p: &Perm) {
        match self {
            OpResult::Range { kvs } => kvs.relabel(p),
            OpResult::Put { .. } => {}
        }
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
                t.success.relabel(p);
                t.failure.relabel(p);
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
            Reply::Stat(stat) => stat.relabel(p),
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
            Reply::TxnResult { responses, .. } => responses.relabel(p),
            Reply::RangeResult { kvs, .. } => kvs.relabel(p),
            Reply::Connected
            | Reply::Deleted
            | Reply::Error(_)
            | Reply::LeaseGranted
            | Reply::LeaseNotFound
            | Reply::WatchCreated { .. }
            | Reply::DeleteResult { .. } => {}
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
            // Writes and acks name no client (the link does).
            Msg::Write { .. } | Msg::WriteAck { .. } => {}
        }
    }
}

impl Relabel for Timer {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Timer::Expiry(s) => s.relabel(p),
            Timer::Think
            | Timer::Hold
            | Timer::Retry
            | Timer::Ping
            | Timer::Deadline
            | Timer::Wake
            | Timer::GiveUp => {}
        }
    }
}
