//! Who is who: actor ids, client indices, sessions and the lock's names.
//!
//! The store models the part of a ZooKeeper or etcd namespace that a lock
//! recipe touches: the lock node `/lock` and its children (ZooKeeper), or the
//! keys under the prefix `/lock/` (etcd). Names are typed rather than strings so
//! that the model checker hashes and clones them cheaply; `Display` renders
//! the real path.

use serde::{Deserialize, Serialize};
use stateright::actor::Id;
use std::fmt;

/// Index of a client (0-based). Clients are the only interchangeable actors.
pub type ClientIdx = u16;

/// The coordination store's actor id.
pub fn store_id() -> Id {
    Id::from(0)
}

/// The guarded resource's actor id.
pub fn resource_id() -> Id {
    Id::from(1)
}

const FIRST_CLIENT: usize = 2;

/// The actor id of client `c`.
pub fn client_id(c: ClientIdx) -> Id {
    Id::from(FIRST_CLIENT + c as usize)
}

/// The client index behind an actor id, if the actor is a client.
pub fn client_of(id: Id) -> Option<ClientIdx> {
    usize::from(id)
        .checked_sub(FIRST_CLIENT)
        .and_then(|c| ClientIdx::try_from(c).ok())
}

/// A ZooKeeper session or an etcd lease: the client that opened it, and which
/// of that client's sessions it is (a client opens a new one after losing one).
///
/// Real servers pick these ids; deriving them from the client keeps states that
/// differ only in who connected first identical, and lets symmetry reduction
/// relabel them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SessionId {
    pub client: ClientIdx,
    pub incarnation: u16,
}

impl SessionId {
    pub fn first(client: ClientIdx) -> Self {
        SessionId {
            client,
            incarnation: 0,
        }
    }

    pub fn next(self) -> Self {
        SessionId {
            incarnation: self.incarnation.wrapping_add(1),
            ..self
        }
    }

    /// As an etcd lease id (etcd lets the client choose it): `0x694d` then
    /// the client and the incarnation, 16 bits each.
    pub fn lease_id(self) -> i64 {
        (0x694d << 32) | ((self.client as i64) << 16) | self.incarnation as i64
    }

    /// The inverse of [`SessionId::lease_id`].
    pub fn from_lease_id(id: i64) -> Option<SessionId> {
        (id >> 32 == 0x694d).then_some(SessionId {
            client: (id >> 16) as u16,
            incarnation: id as u16,
        })
    }
}

impl fmt::Display for SessionId {
    /// Rendered like a ZooKeeper session id or etcd lease id (hex).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "0x{:x}", self.lease_id())
    }
}

/// A ZooKeeper path: the lock node itself, or one of its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ZPath {
    /// `/lock`
    Lock,
    /// `/lock/<guid>-lock-<seq>` (or `/lock/lock-<seq>` without a guid)
    Child(Child),
    /// `/lock/ready`: a barrier's signal node (the article's
    /// `/synchronizing/start`, the recipes page's `b/ready`). A listing of
    /// `/lock` shows the member children, not this node, which the barrier
    /// recipes look up by name.
    Ready,
    /// `/taken/<element>`: a lock-safe queue consumer's lock on the queue
    /// element of the same name (Curator's `lockPath`). Its directory is
    /// not under `/lock` (so creating it fires no watch on the queue) and
    /// is taken to exist.
    Taken(Child),
}

/// A child of `/lock`. `seq` is the ten-digit suffix of a sequential node; the
/// optional guid is the prefix a client uses to find its own node again after a
/// lost create reply (the ZooKeeper recipe's "guid", Curator's protection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Child {
    pub guid: Option<SessionId>,
    pub seq: u32,
}

impl ZPath {
    /// The parent whose child watches a create or delete of this node fires;
    /// `None` for `/lock`, whose parent (the root) nobody watches.
    pub fn parent(self) -> Option<ZPath> {
        match self {
            ZPath::Lock | ZPath::Taken(_) => None,
            ZPath::Child(_) | ZPath::Ready => Some(ZPath::Lock),
        }
    }
}

impl fmt::Display for ZPath {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ZPath::Lock => write!(f, "/lock"),
            ZPath::Child(c) => write!(f, "/lock/{c}"),
            ZPath::Ready => write!(f, "/lock/ready"),
            ZPath::Taken(c) => write!(f, "/taken/{c}"),
        }
    }
}

impl fmt::Display for Child {
    /// `_c_<client:04x><incarnation:04x>-lock-<seq:010>`, or without the
    /// guid `lock-<seq:010>`: fixed widths, written digit by digit, because a
    /// traced `get_children` reply of a large herd lists thousands of them.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut name = [0u8; 27];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            name[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        if let Some(g) = self.guid {
            put(b"_c_");
            for half in [g.client, g.incarnation] {
                for shift in [12, 8, 4, 0] {
                    put(&[HEX[usize::from((half >> shift) & 0xf)]]);
                }
            }
            put(b"-");
        }
        put(b"lock-");
        // u32::MAX has ten digits, so `{:010}` is always exactly ten.
        let mut digits = [b'0'; 10];
        let mut seq = self.seq;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (seq % 10) as u8;
            seq /= 10;
        }
        put(&digits);
        f.write_str(std::str::from_utf8(&name[..at]).expect("ASCII"))
    }
}

/// An etcd key under the lock prefix: `/lock/<lease id hex>`, as etcd's
/// `concurrency.Mutex` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Key(pub SessionId);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "/lock/{:x}", self.0.lease_id())
    }
}

impl ZPath {
    /// The path a create sends: for a sequential create, the name without
    /// the sequence suffix the store will append (`/lock/_c_…-lock-`).
    pub fn create_path(self, sequential: bool) -> String {
        let full = self.to_string();
        match (sequential, self) {
            (true, ZPath::Child(_)) => full
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .to_string(),
            _ => full,
        }
    }

    /// The inverse of `Display`: a path the store's namespace can hold.
    pub fn parse(path: &str) -> Option<ZPath> {
        if path == "/lock" {
            return Some(ZPath::Lock);
        }
        if let Some(name) = path.strip_prefix("/taken/") {
            return Child::parse(name).map(ZPath::Taken);
        }
        let name = path.strip_prefix("/lock/")?;
        if name == "ready" {
            return Some(ZPath::Ready);
        }
        Child::parse(name).map(ZPath::Child)
    }
}

impl Child {
    /// The inverse of `Display`: `_c_<client><incarnation>-lock-<seq>` (hex,
    /// four digits each; decimal, ten digits) or `lock-<seq>`.
    pub fn parse(name: &str) -> Option<Child> {
        let (guid, seq) = match name.strip_prefix("_c_") {
            Some(rest) => {
                let (hex, seq) = rest.split_once("-lock-")?;
                if hex.len() != 8 {
                    return None;
                }
                let client = u16::from_str_radix(&hex[..4], 16).ok()?;
                let incarnation = u16::from_str_radix(&hex[4..], 16).ok()?;
                (
                    Some(SessionId {
                        client,
                        incarnation,
                    }),
                    seq,
                )
            }
            None => (None, name.strip_prefix("lock-")?),
        };
        Some(Child {
            guid,
            seq: seq.parse().ok()?,
        })
    }
}

impl Key {
    /// The inverse of `Display`.
    pub fn parse(key: &str) -> Option<Key> {
        let hex = key.strip_prefix("/lock/")?;
        let id = i64::from_str_radix(hex, 16).ok()?;
        SessionId::from_lease_id(id).map(Key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        let s = SessionId {
            client: 300,
            incarnation: 2,
        };
        for p in [
            ZPath::Lock,
            ZPath::Child(Child {
                guid: Some(s),
                seq: 17,
            }),
            ZPath::Child(Child { guid: None, seq: 3 }),
            ZPath::Ready,
            ZPath::Taken(Child { guid: None, seq: 4 }),
        ] {
            assert_eq!(ZPath::parse(&p.to_string()), Some(p));
        }
        assert_eq!(Key::parse(&Key(s).to_string()), Some(Key(s)));
        assert_eq!(SessionId::from_lease_id(s.lease_id()), Some(s));
        assert_eq!(ZPath::parse("/other"), None);
        assert_eq!(Key::parse("/lock/zz"), None);
    }

    /// A child's name is ZooKeeper's: the guid's two halves as four hex
    /// digits each, the sequence number as ten decimal digits.
    #[test]
    fn child_names_have_zookeeper_widths() {
        let guid = |client, incarnation| {
            Some(SessionId {
                client,
                incarnation,
            })
        };
        for (child, name) in [
            (Child { guid: None, seq: 0 }, "lock-0000000000"),
            (
                Child {
                    guid: None,
                    seq: 42,
                },
                "lock-0000000042",
            ),
            (
                Child {
                    guid: None,
                    seq: u32::MAX,
                },
                "lock-4294967295",
            ),
            (
                Child {
                    guid: guid(0, 0),
                    seq: 7,
                },
                "_c_00000000-lock-0000000007",
            ),
            (
                Child {
                    guid: guid(0xabc, 0x1f),
                    seq: 1_234_567_890,
                },
                "_c_0abc001f-lock-1234567890",
            ),
            (
                Child {
                    guid: guid(u16::MAX, u16::MAX),
                    seq: u32::MAX,
                },
                "_c_ffffffff-lock-4294967295",
            ),
        ] {
            assert_eq!(child.to_string(), name);
            assert_eq!(
                ZPath::parse(&format!("/lock/{name}")),
                Some(ZPath::Child(child))
            );
        }
    }
}
