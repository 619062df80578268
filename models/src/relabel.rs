//! Relabelling: rewriting every client name in a value by a map of client
//! indices. Symmetry reduction relabels whole states by a permutation; the
//! label-free key that orders clients relabels with a map that sends every
//! client to one name, erasing who is who.
//!
//! Every type that can name a client (a client index, a session, a node
//! guid, an etcd key or lease) implements [`Relabel`]; the impls over our
//! own enums match every variant, so a new variant that names a client
//! cannot be forgotten. A recipe's state implements it the same way.

use crate::ids::{Child, ClientIdx, Data, Key, SessionId, ZPath};
use crate::msg::{
    Compare, CompareTarget, ConsulCmd, ConsulReply, Keys, Kv, KvPair, Msg, MultiOp, MultiResult,
    OpResult, Range, RedisCmd, RedisReply, Reply, Request, Stat, Timer, TxnOp, WatchEvent,
};

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
            // A path's text has no client in it; a generated name's guid
            // may.
            ZPath::Node { child, .. } => child.relabel(p),
            ZPath::Fixed(_) => {}
        }
    }
}

impl Relabel for Key {
    fn relabel(&mut self, p: &Perm) {
        self.lease.relabel(p);
    }
}

impl Relabel for Data {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Data::Session(s) => s.relabel(p),
            Data::Holders(h) => h.rename(|c| p[c as usize]),
            Data::Empty | Data::Number(_) => {}
        }
    }
}

impl Relabel for Kv {
    fn relabel(&mut self, p: &Perm) {
        self.key.relabel(p);
        self.lease.relabel(p);
        self.value.relabel(p);
    }
}

impl Relabel for Keys {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Keys::One(k) => k.relabel(p),
            // Text only: no client in a prefix or bound.
            Keys::Prefix(_) | Keys::Between { .. } => {}
        }
    }
}

impl Relabel for Range {
    fn relabel(&mut self, p: &Perm) {
        self.keys.relabel(p);
    }
}

impl Relabel for Stat {
    fn relabel(&mut self, p: &Perm) {
        self.ephemeral_owner.relabel(p);
        self.data.relabel(p);
    }
}

impl Relabel for Compare {
    fn relabel(&mut self, p: &Perm) {
        self.key.relabel(p);
        match &mut self.target {
            CompareTarget::Value(v) => v.relabel(p),
            CompareTarget::CreateRevision(_)
            | CompareTarget::ModRevision(_)
            | CompareTarget::Version(_) => {}
        }
    }
}

impl Relabel for TxnOp {
    fn relabel(&mut self, p: &Perm) {
        match self {
            TxnOp::Put { key, value, lease } => {
                key.relabel(p);
                value.relabel(p);
                lease.relabel(p);
            }
            TxnOp::Delete { key } => key.relabel(p),
            TxnOp::Range(r) => r.relabel(p),
        }
    }
}

impl Relabel for OpResult {
    fn relabel(&mut self, p: &Perm) {
        match self {
            OpResult::Range { kvs } => kvs.relabel(p),
            OpResult::Put { .. } | OpResult::Delete { .. } | OpResult::Count { .. } => {}
        }
    }
}

impl Relabel for MultiOp {
    fn relabel(&mut self, p: &Perm) {
        match self {
            MultiOp::Check { path, .. } | MultiOp::Delete { path, .. } => path.relabel(p),
            MultiOp::Create { path, data, .. } | MultiOp::SetData { path, data, .. } => {
                path.relabel(p);
                data.relabel(p);
            }
        }
    }
}

impl Relabel for MultiResult {
    fn relabel(&mut self, p: &Perm) {
        match self {
            MultiResult::Created { path, .. } => path.relabel(p),
            MultiResult::Set(stat) => stat.relabel(p),
            MultiResult::Checked
            | MultiResult::Deleted
            | MultiResult::RolledBack
            | MultiResult::Error(_)
            | MultiResult::RuntimeInconsistency => {}
        }
    }
}

impl Relabel for Request {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Request::Create { path, data, .. } | Request::SetData { path, data, .. } => {
                path.relabel(p);
                data.relabel(p);
            }
            Request::Delete { path, .. }
            | Request::Sync { path }
            | Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::GetChildren { path, .. } => path.relabel(p),
            Request::Txn(t) => {
                t.compares.relabel(p);
                t.success.relabel(p);
                t.failure.relabel(p);
            }
            Request::Range(r) => r.relabel(p),
            Request::Watch { key, .. } | Request::DeleteKey { key } => key.relabel(p),
            Request::Multi(ops) => ops.relabel(p),
            Request::WatchRange { keys, .. } => keys.relabel(p),
            Request::LeaseTimeToLive { lease, .. } => lease.relabel(p),
            Request::Redis { cmd, .. } => cmd.relabel(p),
            Request::Consul(cmd) => cmd.relabel(p),
            Request::Connect
            | Request::LeaseGrant
            | Request::LeaseRevoke
            | Request::LeaseKeepAlive => {}
        }
    }
}

impl Relabel for Reply {
    fn relabel(&mut self, p: &Perm) {
        match self {
            Reply::Created { path, .. } => path.relabel(p),
            Reply::Stat(stat) => stat.relabel(p),
            Reply::Children(children) => {
                // A listing is in the store's order (sequence number, then
                // name): relabelled guids can reorder children whose
                // sequence numbers tie.
                let mut renamed: Vec<Child> = children
                    .iter()
                    .map(|c| {
                        let mut c = *c;
                        c.relabel(p);
                        c
                    })
                    .collect();
                if !renamed.is_sorted() {
                    renamed.sort();
                }
                *children = renamed.into();
            }
            Reply::TxnResult { responses, .. } => responses.relabel(p),
            Reply::RangeResult { kvs, .. } => kvs.relabel(p),
            Reply::Multi(results) => results.relabel(p),
            // Attached keys are in key order: a renamed lease can move one.
            Reply::LeaseTtl { keys, .. } => {
                keys.relabel(p);
                keys.sort();
            }
            Reply::LeaseGranted { lease } => lease.relabel(p),
            Reply::Redis(RedisReply::Value(d)) => d.relabel(p),
            Reply::Redis(
                RedisReply::Ok | RedisReply::Nil | RedisReply::Int(_) | RedisReply::Down,
            ) => {}
            Reply::Consul(ConsulReply::Pair { pair, .. }) => pair.relabel(p),
            Reply::Consul(ConsulReply::List { pairs, .. }) => relabel_pairs(pairs, p),
            Reply::Consul(
                ConsulReply::SessionCreated
                | ConsulReply::SessionDestroyed
                | ConsulReply::Held
                | ConsulReply::Bool(_)
                | ConsulReply::InvalidSession
                | ConsulReply::SessionInfo(_),
            ) => {}
            Reply::Connected
            | Reply::Deleted
            | Reply::Error(_)
            | Reply::LeaseNotFound
            | Reply::WatchCreated { .. }
            | Reply::DeleteResult { .. }
            | Reply::RangeCount { .. }
            | Reply::LeaseRevoked
            | Reply::Synced
            | Reply::LeaseKeptAlive => {}
        }
    }
}

impl Relabel for RedisCmd {
    fn relabel(&mut self, p: &Perm) {
        match self {
            RedisCmd::Set { value, .. }
            | RedisCmd::SetNx { value, .. }
            | RedisCmd::DelIfValue { value, .. }
            | RedisCmd::ExpireIfValue { value, .. } => value.relabel(p),
            RedisCmd::Expire { .. }
            | RedisCmd::Get { .. }
            | RedisCmd::Del { .. }
            | RedisCmd::Incr { .. }
            | RedisCmd::Wait { .. } => {}
        }
    }
}

impl Relabel for WatchEvent {
    fn relabel(&mut self, p: &Perm) {
        match self {
            WatchEvent::Zk { path, .. } => path.relabel(p),
            WatchEvent::Etcd { key, .. } => key.relabel(p),
            WatchEvent::Consul { pair, .. } => pair.relabel(p),
            WatchEvent::ConsulList { pairs, .. } => relabel_pairs(pairs, p),
        }
    }
}

impl Relabel for ConsulCmd {
    fn relabel(&mut self, p: &Perm) {
        match self {
            ConsulCmd::Acquire { key, value }
            | ConsulCmd::Cas { key, value, .. }
            | ConsulCmd::Put { key, value } => {
                key.relabel(p);
                value.relabel(p);
            }
            ConsulCmd::Get { key, .. }
            | ConsulCmd::Release { key }
            | ConsulCmd::Delete { key, .. } => key.relabel(p),
            ConsulCmd::List { .. }
            | ConsulCmd::DeleteTree { .. }
            | ConsulCmd::SessionCreate(_)
            | ConsulCmd::SessionDestroy
            | ConsulCmd::SessionInfo => {}
        }
    }
}

/// A Consul listing is in the store's order, by key: keys named by
/// sessions reorder when their clients are renamed.
fn relabel_pairs(pairs: &mut std::sync::Arc<[KvPair]>, p: &Perm) {
    let mut renamed = pairs.to_vec();
    renamed.relabel(p);
    renamed.sort_by_key(|pair| pair.key);
    *pairs = renamed.into();
}

impl Relabel for KvPair {
    fn relabel(&mut self, p: &Perm) {
        self.key.relabel(p);
        self.value.relabel(p);
        self.session.relabel(p);
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
            Timer::LockDelay { key } => key.relabel(p),
            Timer::QueryWait { client } => client.relabel(p),
            // Redis keys are the recipe's own text, no client's name.
            Timer::KeyTtl { .. }
            | Timer::Validity
            | Timer::Renew
            | Timer::Think
            | Timer::Hold
            | Timer::Retry
            | Timer::Ping
            | Timer::Deadline
            | Timer::Wake
            | Timer::GiveUp
            | Timer::Kill => {}
        }
    }
}
