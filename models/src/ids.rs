//! Who is who: actor ids, client indices, sessions, and the names recipes
//! give their nodes, keys and data.
//!
//! A recipe names its own paths (ZooKeeper) and keys (etcd): fixed text
//! ([`Name`]: `/lock`, `/sem/leases`, `__READ__`) plus the parts a client's
//! id or the store fills in — a guid, a sequence number, a lease id — kept
//! typed, so the model checker hashes and copies a path without building a
//! string, and symmetry reduction finds every client name inside one.
//! `Display` renders the real path; `parse` reads it back.

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

/// A name a recipe chooses: a directory (`/lock`, `/sem/leases`), a node's
/// prefix (`lock-`, `__READ__`), an etcd key prefix (`/lock/`). Compared,
/// ordered and hashed by its text, so a name means the same in every run
/// and on every thread.
///
/// Recipes write their names as constants (`Name::new("/lock")`); a name
/// read at run time (a trace, a real server's listing) is
/// [`Name::intern`]ed: kept for the rest of the process, once per text.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(&'static str);

impl Name {
    /// A name in the program's text. At most 200 bytes, printable ASCII
    /// (a constant that breaks this does not compile).
    pub const fn new(text: &'static str) -> Name {
        assert!(text.len() <= MAX_NAME, "a name has at most 200 bytes");
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            assert!(
                bytes[i] > b' ' && bytes[i] < 0x7f,
                "a name is printable ASCII without spaces"
            );
            i += 1;
        }
        Name(text)
    }

    /// A name read at run time; `None` if it is not a name (empty parts
    /// are allowed, control characters, spaces, non-ASCII and more than
    /// 200 bytes are not). The text is kept once per process.
    pub fn intern(text: &str) -> Option<Name> {
        use std::collections::HashSet;
        use std::sync::{Mutex, OnceLock};
        static KEPT: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        if text.len() > MAX_NAME || !text.bytes().all(|b| b > b' ' && b < 0x7f) {
            return None;
        }
        let mut kept = KEPT
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(t) = kept.get(text) {
            return Some(Name(t));
        }
        let t: &'static str = Box::leak(text.to_owned().into_boxed_str());
        kept.insert(t);
        Some(Name(t))
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

const MAX_NAME: usize = 200;

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        Name::intern(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{text:?} is not a name (printable ASCII, at most 200 bytes)"
            ))
        })
    }
}

/// A ZooKeeper path under the run's root.
///
/// A path is either all text — `/lock`, `/lock/ready`, `/sem/leases` — or
/// a directory and a node whose name carries a client's guid or a sequence
/// number (`/lock/_c_00010000-lock-0000000003`). Each path has one form
/// ([`ZPath::child`] picks it), so two paths are equal exactly when their
/// texts are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ZPath {
    /// A path without a guid or a sequence number.
    Fixed(Name),
    /// A node of `dir` named with a guid or a sequence number (or both).
    Node { dir: Name, child: Child },
}

/// A child's name: `[_c_<guid>-]<prefix>[<seq>]`. `seq` is the ten-digit
/// suffix of a sequential node (the store appends it; a sequential create
/// sends none); the optional guid is the prefix a client uses to find its
/// own node again after a lost create reply (the ZooKeeper recipe's
/// "guid", Curator's protection).
///
/// Ordered by sequence number first, as the recipes sort a listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Child {
    pub seq: Option<u32>,
    pub prefix: Name,
    pub guid: Option<SessionId>,
}

impl Child {
    /// A child named `prefix` (with a guid if given), to be created
    /// sequentially or found by name.
    pub const fn named(prefix: Name, guid: Option<SessionId>) -> Child {
        Child {
            seq: None,
            prefix,
            guid,
        }
    }

    /// Whether its name carries a client's or the store's part.
    pub fn is_generated(&self) -> bool {
        self.seq.is_some() || self.guid.is_some()
    }
}

impl ZPath {
    /// A path of text only. Panics (at compile time in a constant) unless
    /// it is absolute, without a trailing or doubled `/`.
    pub const fn fixed(text: &'static str) -> ZPath {
        let b = text.as_bytes();
        assert!(
            b.len() >= 2 && b[0] == b'/' && b[b.len() - 1] != b'/',
            "a ZooKeeper path starts with / and does not end with it"
        );
        let mut i = 1;
        while i < b.len() {
            assert!(
                !(b[i] == b'/' && b[i - 1] == b'/'),
                "a path has no empty part"
            );
            i += 1;
        }
        ZPath::Fixed(Name::new(text))
    }

    /// `dir/child`, in its one form: a child without a guid or sequence
    /// number makes a path of text only.
    pub fn child(dir: Name, child: Child) -> ZPath {
        if child.is_generated() {
            ZPath::Node { dir, child }
        } else {
            ZPath::Fixed(
                Name::intern(&format!("{dir}/{}", child.prefix))
                    .expect("a directory and a name make a name"),
            )
        }
    }

    /// The directory this path is in and its name there; `None` for a path
    /// directly under the root (`/lock`), whose parent nobody watches.
    pub fn split(self) -> Option<(Name, Child)> {
        match self {
            ZPath::Node { dir, child } => Some((dir, child)),
            ZPath::Fixed(name) => {
                let text = name.as_str();
                let at = text.rfind('/').filter(|&at| at > 0)?;
                Some((Name(&text[..at]), Child::named(Name(&text[at + 1..]), None)))
            }
        }
    }

    /// The directory whose child watches a create or delete of this node
    /// fires.
    pub fn parent(self) -> Option<Name> {
        self.split().map(|(dir, _)| dir)
    }

    /// The node this path names in `dir`, if it is one of `dir`'s
    /// children.
    pub fn child_of(self, dir: Name) -> Option<Child> {
        self.split().filter(|(d, _)| *d == dir).map(|(_, c)| c)
    }

    /// The node of a guid or sequence number, if this path is one.
    pub fn node(self) -> Option<Child> {
        match self {
            ZPath::Node { child, .. } => Some(child),
            ZPath::Fixed(_) => None,
        }
    }

    /// Whether this path is `dir` itself.
    pub fn is(self, dir: Name) -> bool {
        self == ZPath::Fixed(dir)
    }
}

impl fmt::Display for ZPath {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ZPath::Fixed(name) => f.write_str(name.as_str()),
            ZPath::Node { dir, child } => write!(f, "{dir}/{child}"),
        }
    }
}

impl fmt::Display for Child {
    /// `_c_<client:04x><incarnation:04x>-`, the prefix, then the sequence
    /// number in ten digits: fixed widths, written digit by digit, because
    /// a traced `get_children` reply of a large herd lists thousands of
    /// them.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        if let Some(g) = self.guid {
            let mut name = *b"_c_00000000-";
            let mut at = 3;
            for half in [g.client, g.incarnation] {
                for shift in [12, 8, 4, 0] {
                    name[at] = HEX[usize::from((half >> shift) & 0xf)];
                    at += 1;
                }
            }
            f.write_str(std::str::from_utf8(&name).expect("ASCII"))?;
        }
        f.write_str(self.prefix.as_str())?;
        if let Some(mut seq) = self.seq {
            // u32::MAX has ten digits, so `{:010}` is always exactly ten.
            let mut digits = [b'0'; 10];
            for d in digits.iter_mut().rev() {
                *d = b'0' + (seq % 10) as u8;
                seq /= 10;
            }
            f.write_str(std::str::from_utf8(&digits).expect("ASCII"))?;
        }
        Ok(())
    }
}

/// An etcd key: text, or a prefix followed by a lease id in hex, as etcd's
/// `concurrency` package names a session's key (`/lock/694d00010000`).
/// Ordered as etcd orders keys: by their bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Key {
    pub prefix: Name,
    pub lease: Option<SessionId>,
}

impl Key {
    /// `prefix` followed by `lease`'s id in hex.
    pub const fn of_lease(prefix: Name, lease: SessionId) -> Key {
        Key {
            prefix,
            lease: Some(lease),
        }
    }

    /// A key of text only.
    pub const fn fixed(text: &'static str) -> Key {
        Key {
            prefix: Name::new(text),
            lease: None,
        }
    }

    /// Whether the key's text starts with `prefix` (a range over a prefix).
    pub fn has_prefix(&self, prefix: Name) -> bool {
        let p = prefix.as_str();
        let own = self.prefix.as_str();
        if own.len() >= p.len() {
            return own.starts_with(p);
        }
        // The prefix reaches into the lease id's digits.
        p.starts_with(own)
            && self
                .lease
                .is_some_and(|l| lease_hex(l).starts_with(&p[own.len()..]))
    }

    /// The key's bytes, as etcd compares them.
    fn text(&self) -> impl Iterator<Item = u8> + '_ {
        let hex = self.lease.map(lease_hex).unwrap_or_default();
        self.prefix.as_str().bytes().chain(hex.into_bytes())
    }
}

fn lease_hex(lease: SessionId) -> String {
    format!("{:x}", lease.lease_id())
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self.prefix == other.prefix {
            // Lease ids are twelve hex digits (they start 0x694d), so their
            // text orders as their numbers do.
            return self.lease.cmp(&other.lease);
        }
        self.text().cmp(other.text())
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.prefix.as_str())?;
        match self.lease {
            Some(l) => write!(f, "{:x}", l.lease_id()),
            None => Ok(()),
        }
    }
}

/// A node's or key's data. What the model's recipes store is a number (a
/// queue's item, a counter) or a session's id (who wrote it): a value the
/// checker can hash and compare, and that symmetry relabels when it names
/// a client.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Data {
    #[default]
    Empty,
    Number(u64),
    Session(SessionId),
}

impl Data {
    pub fn number(self) -> Option<u64> {
        match self {
            Data::Number(n) => Some(n),
            Data::Empty | Data::Session(_) => None,
        }
    }

    pub fn is_empty(self) -> bool {
        self == Data::Empty
    }
}

impl fmt::Display for Data {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Data::Empty => Ok(()),
            Data::Number(n) => write!(f, "{n}"),
            Data::Session(s) => write!(f, "{s}"),
        }
    }
}

impl ZPath {
    /// The inverse of `Display`: `None` for what is not an absolute path.
    pub fn parse(path: &str) -> Option<ZPath> {
        if !path.starts_with('/') || path.len() < 2 || path.ends_with('/') || path.contains("//") {
            return None;
        }
        let (dir, name) = path.rsplit_once('/')?;
        match Child::parse(name) {
            Some(child) if child.is_generated() && !dir.is_empty() => Some(ZPath::Node {
                dir: Name::intern(dir)?,
                child,
            }),
            _ => Name::intern(path).map(ZPath::Fixed),
        }
    }
}

impl Child {
    /// The inverse of `Display`: an optional `_c_<client><incarnation>-`
    /// (hex, four digits each), the prefix, an optional ten-digit sequence
    /// number. A name that ends in ten digits is read as sequential.
    pub fn parse(name: &str) -> Option<Child> {
        let (guid, rest) = match name.strip_prefix("_c_") {
            Some(rest) if rest.len() >= 9 && rest.as_bytes()[8] == b'-' => {
                let hex = &rest[..8];
                let client = u16::from_str_radix(&hex[..4], 16).ok()?;
                let incarnation = u16::from_str_radix(&hex[4..], 16).ok()?;
                (
                    Some(SessionId {
                        client,
                        incarnation,
                    }),
                    &rest[9..],
                )
            }
            Some(_) | None => (None, name),
        };
        let digits = rest.len() >= 10
            && rest.as_bytes()[rest.len() - 10..]
                .iter()
                .all(u8::is_ascii_digit);
        let (prefix, seq) = if digits {
            let (p, s) = rest.split_at(rest.len() - 10);
            (p, Some(s.parse().ok()?))
        } else {
            (rest, None)
        };
        Some(Child {
            seq,
            prefix: Name::intern(prefix)?,
            guid,
        })
    }
}

impl Key {
    /// The inverse of `Display`: a key ending in a lease id of this model
    /// (`694d` and eight hex digits) after `/` is a session's key.
    pub fn parse(key: &str) -> Option<Key> {
        if let Some((prefix, hex)) = key.rsplit_once('/') {
            if hex.len() == 12 {
                if let Some(lease) = i64::from_str_radix(hex, 16)
                    .ok()
                    .and_then(SessionId::from_lease_id)
                {
                    return Some(Key {
                        prefix: Name::intern(&key[..prefix.len() + 1])?,
                        lease: Some(lease),
                    });
                }
            }
        }
        Some(Key {
            prefix: Name::intern(key)?,
            lease: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: Name = Name::new("/lock");
    const NODE: Name = Name::new("lock-");

    #[test]
    fn names_parse_back() {
        let s = SessionId {
            client: 300,
            incarnation: 2,
        };
        for p in [
            ZPath::fixed("/lock"),
            ZPath::Node {
                dir: LOCK,
                child: Child {
                    seq: Some(17),
                    prefix: NODE,
                    guid: Some(s),
                },
            },
            ZPath::Node {
                dir: LOCK,
                child: Child {
                    seq: Some(3),
                    prefix: NODE,
                    guid: None,
                },
            },
            ZPath::fixed("/lock/ready"),
            ZPath::fixed("/sem/leases"),
            ZPath::Node {
                dir: Name::new("/sem/leases"),
                child: Child {
                    seq: Some(4),
                    prefix: Name::new("lease-"),
                    guid: Some(s),
                },
            },
            ZPath::Node {
                dir: LOCK,
                child: Child {
                    seq: None,
                    prefix: Name::new("__READ__"),
                    guid: Some(s),
                },
            },
        ] {
            assert_eq!(ZPath::parse(&p.to_string()), Some(p), "{p}");
        }
        for k in [
            Key::of_lease(Name::new("/lock/"), s),
            Key::fixed("/election/leader"),
        ] {
            assert_eq!(Key::parse(&k.to_string()), Some(k), "{k}");
        }
        assert_eq!(SessionId::from_lease_id(s.lease_id()), Some(s));
        for bad in ["other", "/", "/lock/", "//lock", "/a b"] {
            assert_eq!(ZPath::parse(bad), None, "{bad}");
        }
    }

    /// One path, one form: a child without a guid or sequence number is a
    /// path of text, and splits back into its directory and name.
    #[test]
    fn a_path_has_one_form() {
        let ready = ZPath::child(LOCK, Child::named(Name::new("ready"), None));
        assert_eq!(ready, ZPath::fixed("/lock/ready"));
        assert_eq!(
            ready.split(),
            Some((LOCK, Child::named(Name::new("ready"), None)))
        );
        assert_eq!(ZPath::fixed("/lock").split(), None);
        assert_eq!(
            ZPath::fixed("/sem/leases").parent(),
            Some(Name::new("/sem"))
        );
    }

    /// A child's name is ZooKeeper's: the guid's two halves as four hex
    /// digits each, the sequence number as ten decimal digits.
    #[test]
    fn child_names_have_zookeeper_widths() {
        let child = |guid: Option<(u16, u16)>, seq| Child {
            seq: Some(seq),
            prefix: NODE,
            guid: guid.map(|(client, incarnation)| SessionId {
                client,
                incarnation,
            }),
        };
        for (child, name) in [
            (child(None, 0), "lock-0000000000"),
            (child(None, 42), "lock-0000000042"),
            (child(None, u32::MAX), "lock-4294967295"),
            (child(Some((0, 0)), 7), "_c_00000000-lock-0000000007"),
            (
                child(Some((0xabc, 0x1f)), 1_234_567_890),
                "_c_0abc001f-lock-1234567890",
            ),
            (
                child(Some((u16::MAX, u16::MAX)), u32::MAX),
                "_c_ffffffff-lock-4294967295",
            ),
        ] {
            assert_eq!(child.to_string(), name);
            assert_eq!(
                ZPath::parse(&format!("/lock/{name}")),
                Some(ZPath::Node { dir: LOCK, child })
            );
        }
    }

    /// Keys order as etcd orders their bytes, whatever their parts.
    #[test]
    fn keys_order_by_their_text() {
        let s = |client| SessionId {
            client,
            incarnation: 0,
        };
        let mut keys = [
            Key::fixed("/lock/zz"),
            Key::of_lease(Name::new("/lock/"), s(2)),
            Key::fixed("/lock/"),
            Key::of_lease(Name::new("/lock/"), s(1)),
            Key::fixed("/a"),
        ];
        keys.sort();
        let text: Vec<String> = keys.iter().map(Key::to_string).collect();
        let mut sorted = text.clone();
        sorted.sort();
        assert_eq!(text, sorted);
        assert!(keys[2].has_prefix(Name::new("/lock/694d")));
        assert!(!Key::fixed("/lockx").has_prefix(Name::new("/lock/")));
    }
}
