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
use std::hash::{Hash, Hasher};

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

/// A ZooKeeper session or an etcd lease: the client that opened it, which
/// of that client's sessions it is (a client opens a new one after losing
/// one), and — for an etcd lease — where in the store's grant order it came.
///
/// Deriving the client's part from the client keeps states that differ only
/// in who connected first identical, and lets symmetry reduction relabel
/// them. An etcd lease id is the store's, as etcd's are: it counts grants
/// in its leading digits, so keys named by leases (`pfx/<lease id>`) sort
/// in grant order, whatever the clients are called — unless the recipe's
/// `Setup` numbers leases by client (`LeaseIds::ByClient`: no grant).
/// Either way a session is its client's incarnation: the id a client asks
/// a grant for and the id granted are the same session
/// ([`SessionId::same_session`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SessionId {
    pub client: ClientIdx,
    pub incarnation: u16,
    /// The etcd store's grant number (1 for the first lease it granted);
    /// 0 for a lease not granted yet and for every ZooKeeper session.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grant: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// As the derived hash was before `grant`: the grant only when there is
/// one, so ZooKeeper states fingerprint as they did.
impl Hash for SessionId {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.client.hash(h);
        self.incarnation.hash(h);
        if self.grant != 0 {
            self.grant.hash(h);
        }
    }
}

/// Grants a store can number: a granted lease id keeps the grant in 24 bits.
pub const MAX_GRANTS: u32 = (1 << 24) - 1;

/// The leading hex digits of every lease id of this model: `694d` for a
/// session not granted by an etcd store (twelve digits in all), `69` for a
/// granted lease (sixteen in all, the grant number next).
const UNGRANTED_MARK: i64 = 0x694d;
const GRANTED_MARK: i64 = 0x69;

impl SessionId {
    pub fn first(client: ClientIdx) -> Self {
        SessionId {
            client,
            incarnation: 0,
            grant: 0,
        }
    }

    /// The client's next session, not granted yet.
    pub fn next(self) -> Self {
        SessionId {
            incarnation: self.incarnation.wrapping_add(1),
            grant: 0,
            ..self
        }
    }

    /// This session as the store's grant number `grant` made it.
    pub fn granted(self, grant: u32) -> Self {
        SessionId { grant, ..self }
    }

    /// Whether `other` is this session, granted or not: the same client's
    /// same incarnation.
    pub fn same_session(self, other: SessionId) -> bool {
        (self.client, self.incarnation) == (other.client, other.incarnation)
    }

    /// As an etcd lease id, and the id a ZooKeeper session is shown by. A
    /// granted lease: `0x69`, the grant (24 bits), the client and the
    /// incarnation (16 bits each) — sixteen hex digits, so keys named by
    /// leases sort by grant, and no two leases share one. Otherwise `0x694d`
    /// then the client and the incarnation: twelve hex digits.
    pub fn lease_id(self) -> i64 {
        let owner = ((self.client as i64) << 16) | self.incarnation as i64;
        match self.grant {
            0 => (UNGRANTED_MARK << 32) | owner,
            g => (GRANTED_MARK << 56) | (i64::from(g & MAX_GRANTS) << 32) | owner,
        }
    }

    /// How many hex digits [`SessionId::lease_id`] has.
    fn lease_digits(self) -> u32 {
        match self.grant {
            0 => 12,
            _ => 16,
        }
    }

    /// The inverse of [`SessionId::lease_id`].
    pub fn from_lease_id(id: i64) -> Option<SessionId> {
        let grant = match (id >> 56, id >> 32) {
            (GRANTED_MARK, g) => u32::try_from(g & i64::from(MAX_GRANTS))
                .ok()
                .filter(|&g| g != 0)?,
            (0, UNGRANTED_MARK) => 0,
            _ => return None,
        };
        Some(SessionId {
            client: (id >> 16) as u16,
            incarnation: id as u16,
            grant,
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
/// prefix (`lock-`, `__READ__`), an etcd key prefix (`/lock/`).
///
/// A name is a pointer to its text, kept with the text's hash (FNV-1a) and,
/// for a path, its split at the last `/`, all made once: a name is 8 bytes,
/// compared and hashed as cheaply as a number, and means the same in every
/// run and on every thread. Ordered by hash, then text: a fixed order, not
/// the alphabet's.
///
/// Recipes write their names with [`name!`](crate::name) (`name!("/lock")`,
/// usable in constants); a name read at run time (a trace, a real server's
/// listing) is [`Name::intern`]ed: kept for the rest of the process, once
/// per text.
#[derive(Clone, Copy)]
pub struct Name(&'static NameText);

/// A name's text, hash and split, made by [`name!`](crate::name) or
/// [`Name::intern`].
#[doc(hidden)]
#[derive(Debug)]
pub struct NameText {
    text: &'static str,
    hash: u32,
    /// The directory and the last name of a path with a `/` past its first
    /// byte (`/sem/leases`: `/sem` and `leases`).
    split: Option<(&'static NameText, &'static NameText)>,
}

/// FNV-1a, 32 bits: fixed, and computable in a constant.
const fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u32;
        h = h.wrapping_mul(0x0100_0193);
        i += 1;
    }
    h
}

const fn is_name(bytes: &[u8]) -> bool {
    if bytes.len() > MAX_NAME {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] <= b' ' || bytes[i] >= 0x7f {
            return false;
        }
        i += 1;
    }
    true
}

/// Where a path splits into its directory and last name: its last `/`,
/// if past the first byte.
#[doc(hidden)]
pub const fn last_slash(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = b.len();
    while i > 1 {
        i -= 1;
        if b[i] == b'/' {
            return Some(i);
        }
    }
    None
}

/// The directory part of a path (empty if it has none).
#[doc(hidden)]
pub const fn dir_of(text: &'static str) -> &'static str {
    match last_slash(text) {
        Some(at) => text.split_at(at).0,
        None => "",
    }
}

/// The last name of a path (empty if it has no directory part).
#[doc(hidden)]
pub const fn leaf_of(text: &'static str) -> &'static str {
    match last_slash(text) {
        Some(at) => text.split_at(at + 1).1,
        None => "",
    }
}

impl NameText {
    /// A name's text and its split. A text that breaks the rules of a
    /// name does not compile (in a constant).
    pub const fn new(
        text: &'static str,
        split: Option<(&'static NameText, &'static NameText)>,
    ) -> NameText {
        assert!(
            is_name(text.as_bytes()),
            "a name is printable ASCII without spaces, at most 200 bytes"
        );
        NameText {
            text,
            hash: fnv1a(text.as_bytes()),
            split,
        }
    }
}

/// A [`Name`] from its text, in a constant: `const DIR: Name =
/// name!("/sem/leases");`. The text must be printable ASCII without
/// spaces, at most 200 bytes, or it does not compile.
#[macro_export]
macro_rules! name {
    ($text:expr) => {{
        const TEXT: &str = $text;
        const DIR: $crate::ids::NameText =
            $crate::ids::NameText::new($crate::ids::dir_of(TEXT), None);
        const LEAF: $crate::ids::NameText =
            $crate::ids::NameText::new($crate::ids::leaf_of(TEXT), None);
        const SPLIT: Option<(&$crate::ids::NameText, &$crate::ids::NameText)> =
            match $crate::ids::last_slash(TEXT) {
                Some(_) => Some((&DIR, &LEAF)),
                None => None,
            };
        const NAME: $crate::ids::Name =
            $crate::ids::Name::from_text(&$crate::ids::NameText::new(TEXT, SPLIT));
        NAME
    }};
}

impl Name {
    #[doc(hidden)]
    pub const fn from_text(text: &'static NameText) -> Name {
        Name(text)
    }

    /// A name read at run time; `None` if it is not a name (control
    /// characters, spaces, non-ASCII, more than 200 bytes). Its text is
    /// kept once per process.
    pub fn intern(text: &str) -> Option<Name> {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static KEPT: OnceLock<Mutex<HashMap<&'static str, &'static NameText>>> = OnceLock::new();
        if !is_name(text.as_bytes()) {
            return None;
        }
        let kept = || {
            KEPT.get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        };
        if let Some(t) = kept().get(text) {
            return Some(Name(t));
        }
        // The parts first (the lock is not held across them).
        let split = match last_slash(text) {
            Some(at) => Some((
                Name::intern(&text[..at])?.0,
                Name::intern(&text[at + 1..])?.0,
            )),
            None => None,
        };
        let mut kept = kept();
        let t: &'static NameText = match kept.get(text) {
            Some(t) => t,
            None => {
                let owned: &'static str = Box::leak(text.to_owned().into_boxed_str());
                let t: &'static NameText = Box::leak(Box::new(NameText::new(owned, split)));
                kept.insert(owned, t);
                t
            }
        };
        Some(Name(t))
    }

    pub const fn as_str(self) -> &'static str {
        self.0.text
    }

    /// A path's directory and last name (`/sem/leases`: `/sem`,
    /// `leases`); `None` for a name with no `/` past its first byte.
    pub fn split(self) -> Option<(Name, Name)> {
        match self.0.split {
            Some((dir, leaf)) => Some((Name(dir), Name(leaf))),
            // A directory part `name!` made of a deeper path (`/a/b` of
            // `/a/b/c`) carries no split of its own: found by its text,
            // as an interned name's is.
            None => {
                let text = self.as_str();
                let at = last_slash(text)?;
                Some((Name::intern(&text[..at])?, Name::intern(&text[at + 1..])?))
            }
        }
    }
}

const MAX_NAME: usize = 200;

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
            || (self.0.hash == other.0.hash && self.0.text == other.0.text)
    }
}

impl Eq for Name {}

impl Hash for Name {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(u64::from(self.0.hash) << 32 | self.0.text.len() as u64);
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if std::ptr::eq(self.0, other.0) {
            return std::cmp::Ordering::Equal;
        }
        (self.0.hash, self.0.text.len())
            .cmp(&(other.0.hash, other.0.text.len()))
            .then_with(|| self.0.text.cmp(other.0.text))
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        Name::intern(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{text:?} is not a name (printable ASCII without spaces, at most 200 bytes)"
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
    /// A path of text only: `ZPath::fixed(name!("/lock"))`. Panics (at
    /// compile time in a constant) unless it is absolute, without a
    /// trailing or doubled `/`.
    pub const fn fixed(name: Name) -> ZPath {
        let b = name.as_str().as_bytes();
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
        ZPath::Fixed(name)
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
            ZPath::Fixed(name) => name
                .split()
                .map(|(dir, leaf)| (dir, Child::named(leaf, None))),
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
/// `concurrency` package names a session's key (`/lock/6900000100010000`:
/// the store's first grant, client 1's first session).
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

    /// A key of text only: `Key::fixed(name!("/election/leader"))`.
    pub const fn fixed(prefix: Name) -> Key {
        Key {
            prefix,
            lease: None,
        }
    }

    /// Whether the key's text starts with `prefix` (a range over a
    /// prefix). A prefix that falls among the client digits of this key's
    /// lease id — where whether it matches would depend on the lease's
    /// client, which symmetry reduction renames — matches none of them
    /// (no recipe ranges so); short of the client's digits (in the mark or
    /// the grant) it is etcd's answer (`/lock/69` matches every lease key
    /// of `/lock/`).
    pub fn has_prefix(&self, prefix: Name) -> bool {
        let (p, own) = (prefix.as_str().as_bytes(), self.prefix.as_str().as_bytes());
        match self.lease {
            // Decided by the key's own text: the recipes' ranges.
            Some(_) if p.len() <= own.len() => own.starts_with(p),
            None => own.starts_with(p),
            // Every client's key has the prefix, or none counts.
            Some(lease) => [0, ClientIdx::MAX].iter().all(|&client| {
                self.text_of(SessionId { client, ..lease })
                    .take(p.len())
                    .eq(p.iter().copied())
            }),
        }
    }

    /// How the key's text orders against `bound`'s (a range's `key` or
    /// `range_end`), as etcd compares bytes. Where the order would depend
    /// on the lease id's client digits — the bound falls among them — the
    /// key sorts before the bound, whatever
    /// its client: symmetry reduction renames clients, so what a range
    /// takes must not depend on which client a lease is (no recipe ranges
    /// so). A prefix that falls there matches none of them likewise.
    pub fn cmp_bound(&self, bound: Name) -> std::cmp::Ordering {
        let b = bound.as_str().bytes();
        let Some(lease) = self.lease else {
            return self.prefix.as_str().bytes().cmp(b);
        };
        // A lease id's client digits are fixed-width hex: the text orders
        // as the client does, so the lowest and the highest client bound
        // every other.
        let at = |client| self.text_of(SessionId { client, ..lease }).cmp(b.clone());
        let lowest = at(0);
        if lowest == at(ClientIdx::MAX) {
            lowest
        } else {
            std::cmp::Ordering::Less
        }
    }

    /// The key's bytes, as etcd compares them.
    fn text(&self) -> impl Iterator<Item = u8> + '_ {
        self.prefix
            .as_str()
            .bytes()
            .chain(self.lease.into_iter().flat_map(lease_text))
    }

    /// The bytes of this key's prefix with `lease`'s id.
    fn text_of(&self, lease: SessionId) -> impl Iterator<Item = u8> + '_ {
        self.prefix.as_str().bytes().chain(lease_text(lease))
    }
}

/// A lease id's hex digits, as a key names it (no allocation: keys are
/// compared on every store lookup).
fn lease_text(lease: SessionId) -> impl Iterator<Item = u8> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let id = lease.lease_id();
    (0..lease.lease_digits())
        .rev()
        .map(move |i| HEX[((id >> (4 * i)) & 0xf) as usize])
}

/// How two lease ids' texts order (a fixed key, with none, first).
fn cmp_lease_text(a: Option<SessionId>, b: Option<SessionId>) -> std::cmp::Ordering {
    match (a, b) {
        // Of one width, the text orders as the number does.
        (Some(x), Some(y)) if x.lease_digits() == y.lease_digits() => {
            x.lease_id().cmp(&y.lease_id())
        }
        (Some(x), Some(y)) => lease_text(x).cmp(lease_text(y)),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self.prefix == other.prefix {
            // Granted leases sort in grant order, whoever holds them.
            return cmp_lease_text(self.lease, other.lease)
                .then_with(|| self.lease.cmp(&other.lease));
        }
        // Two keys of one text (a prefix that spells a lease id out, and
        // the prefix with that lease) are told apart by their lease, so the
        // order agrees with equality.
        self.text()
            .cmp(other.text())
            .then_with(|| self.lease.cmp(&other.lease))
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
/// queue's item, a counter), a session's id (who wrote it) or a Consul
/// semaphore's holders: a value the checker can hash and compare, and that
/// symmetry relabels when it names a client. Sixteen bytes, whatever the
/// variant (a test holds it).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Data {
    #[default]
    Empty,
    Number(u64),
    Session(SessionId),
    /// Last, so the variants before it hash as they did.
    Holders(Holders),
}

/// The value of a Consul semaphore's `.lock` key, `api.Semaphore`'s
/// `semaphoreLock`: the limit the contenders agree on and the sessions
/// holding a slot (`{"Limit": 2, "Holders": {"<session>": true}}`), at
/// most [`Holders::CAPACITY`] of them, packed so that a [`Data`] stays
/// sixteen bytes: a session as its client and incarnation (Consul sessions
/// have no etcd grant number), kept sorted, so a set has one form.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Holders {
    limit: u8,
    len: u8,
    /// `(client, incarnation)`, sorted; past `len`, zeros.
    held: [(ClientIdx, u16); Holders::CAPACITY],
}

impl Holders {
    /// The most holders a value keeps: a semaphore's limit is at most this.
    pub const CAPACITY: usize = 3;

    /// No holders yet, `limit` slots (`decodeLock` of an empty value).
    pub fn new(limit: u8) -> Holders {
        Holders {
            limit,
            ..Holders::default()
        }
    }

    pub fn limit(self) -> u8 {
        self.limit
    }

    pub fn len(self) -> usize {
        usize::from(self.len)
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The holding sessions, sorted.
    pub fn iter(self) -> impl Iterator<Item = SessionId> {
        self.held
            .into_iter()
            .take(self.len())
            .map(|(client, incarnation)| SessionId {
                client,
                incarnation,
                grant: 0,
            })
    }

    pub fn contains(self, s: SessionId) -> bool {
        self.iter().any(|h| h.same_session(s))
    }

    /// With `s` added; `None` if there is no room for it.
    pub fn with(self, s: SessionId) -> Option<Holders> {
        if self.contains(s) {
            return Some(self);
        }
        let mut out = self;
        *out.held.get_mut(self.len())? = (s.client, s.incarnation);
        out.len += 1;
        out.sort();
        Some(out)
    }

    /// Only the holders `keep` keeps (`pruneDeadHolders`, a release).
    pub fn retain(self, mut keep: impl FnMut(SessionId) -> bool) -> Holders {
        let mut out = Holders::new(self.limit);
        for s in self.iter().filter(|&s| keep(s)) {
            out.held[out.len()] = (s.client, s.incarnation);
            out.len += 1;
        }
        out
    }

    /// Renames the holders' clients (symmetry), keeping the set sorted.
    pub fn rename(&mut self, mut f: impl FnMut(ClientIdx) -> ClientIdx) {
        for (client, _) in &mut self.held[..usize::from(self.len)] {
            *client = f(*client);
        }
        self.sort();
    }

    fn sort(&mut self) {
        self.held[..usize::from(self.len)].sort_unstable();
    }
}

/// As the set it is: its limit and its sessions.
impl fmt::Debug for Holders {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("Holders")
            .field("limit", &self.limit)
            .field("holders", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

/// As Consul's JSON has it, the sessions by their ids.
impl fmt::Display for Holders {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{{Limit: {}, Holders: [", self.limit)?;
        for (i, s) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{s}")?;
        }
        f.write_str("]}")
    }
}

impl Data {
    pub fn number(self) -> Option<u64> {
        match self {
            Data::Number(n) => Some(n),
            Data::Empty | Data::Session(_) | Data::Holders(_) => None,
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
            Data::Holders(h) => write!(f, "{h}"),
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
                // Hex digits only (no sign, nothing multi-byte to split).
                let hex = rest
                    .get(..8)
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))?;
                let client = u16::from_str_radix(&hex[..4], 16).ok()?;
                let incarnation = u16::from_str_radix(&hex[4..], 16).ok()?;
                (
                    Some(SessionId {
                        client,
                        incarnation,
                        grant: 0,
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
    /// (`69`, a grant and eight hex digits; or `694d` and eight) after `/`
    /// is a session's key.
    pub fn parse(key: &str) -> Option<Key> {
        if let Some((prefix, hex)) = key.rsplit_once('/') {
            if hex.len() == 12 || hex.len() == 16 {
                if let Some(lease) = i64::from_str_radix(hex, 16)
                    .ok()
                    .and_then(SessionId::from_lease_id)
                    .filter(|l| l.lease_digits() as usize == hex.len())
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

    const LOCK: Name = name!("/lock");
    const NODE: Name = name!("lock-");

    #[test]
    fn data_is_sixteen_bytes_with_a_holder_set() {
        assert_eq!(std::mem::size_of::<Data>(), 16);
        let s = |client, incarnation| SessionId {
            client,
            incarnation,
            grant: 0,
        };
        let h = Holders::new(3);
        let h = h.with(s(7, 1)).unwrap().with(s(2, 0)).unwrap();
        assert_eq!(h.iter().collect::<Vec<_>>(), [s(2, 0), s(7, 1)]);
        assert_eq!(h.with(s(2, 0)), Some(h), "already a holder");
        let full = h.with(s(5, 0)).unwrap();
        assert_eq!(full.with(s(6, 0)), None, "no room");
        assert!(full.contains(s(5, 0)) && !full.contains(s(5, 1)));
        assert_eq!(full.retain(|x| x.client != 5), h);
        let mut renamed = full;
        renamed.rename(|c| 9 - c);
        assert_eq!(
            renamed.iter().collect::<Vec<_>>(),
            [s(2, 1), s(4, 0), s(7, 0)],
            "sorted again"
        );
        assert_eq!(
            Data::Holders(h).to_string(),
            "{Limit: 3, Holders: [0x694d00020000, 0x694d00070001]}"
        );
    }

    #[test]
    fn names_parse_back() {
        let s = SessionId {
            client: 300,
            incarnation: 2,
            grant: 0,
        };
        for p in [
            ZPath::fixed(name!("/lock")),
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
            ZPath::fixed(name!("/lock/ready")),
            ZPath::fixed(name!("/sem/leases")),
            ZPath::Node {
                dir: name!("/sem/leases"),
                child: Child {
                    seq: Some(4),
                    prefix: name!("lease-"),
                    guid: Some(s),
                },
            },
            ZPath::Node {
                dir: LOCK,
                child: Child {
                    seq: None,
                    prefix: name!("__READ__"),
                    guid: Some(s),
                },
            },
        ] {
            assert_eq!(ZPath::parse(&p.to_string()), Some(p), "{p}");
        }
        for k in [
            Key::of_lease(name!("/lock/"), s),
            Key::fixed(name!("/election/leader")),
        ] {
            assert_eq!(Key::parse(&k.to_string()), Some(k), "{k}");
        }
        assert_eq!(SessionId::from_lease_id(s.lease_id()), Some(s));
        for bad in [
            "other",
            "/",
            "/lock/",
            "//lock",
            "/a b",
            "/lock/_c_abc\u{e9}0000-x",
        ] {
            assert_eq!(ZPath::parse(bad), None, "{bad}");
        }
    }

    /// One path, one form: a child without a guid or sequence number is a
    /// path of text, and splits back into its directory and name.
    #[test]
    fn a_path_has_one_form() {
        let ready = ZPath::child(LOCK, Child::named(name!("ready"), None));
        assert_eq!(ready, ZPath::fixed(name!("/lock/ready")));
        assert_eq!(
            ready.split(),
            Some((LOCK, Child::named(name!("ready"), None)))
        );
        assert_eq!(ZPath::fixed(name!("/lock")).split(), None);
        assert_eq!(
            ZPath::fixed(name!("/sem/leases")).parent(),
            Some(name!("/sem"))
        );
        // A deeper path's directory splits as the same text interned does.
        let dir = ZPath::fixed(name!("/a/b/c")).parent().unwrap();
        assert_eq!(dir.split(), Name::intern("/a/b").unwrap().split());
        assert_eq!(dir.split().map(|(d, _)| d), Some(name!("/a")));
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
                grant: 0,
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
            grant: 0,
        };
        let mut keys = [
            Key::fixed(name!("/lock/zz")),
            Key::of_lease(name!("/lock/"), s(2)),
            Key::fixed(name!("/lock/")),
            Key::of_lease(name!("/lock/"), s(1)),
            Key::fixed(name!("/a")),
        ];
        keys.sort();
        let text: Vec<String> = keys.iter().map(Key::to_string).collect();
        let mut sorted = text.clone();
        sorted.sort();
        assert_eq!(text, sorted);
        assert!(keys[2].has_prefix(name!("/lock/")));
        // Every lease id starts 694d; a prefix that reaches a client's
        // digits would name one, so it matches no lease key.
        assert!(keys[2].has_prefix(name!("/lock/694d")));
        for within in ["/lock/694d0", "/lock/694d0001", "/lock/694d00010000"] {
            assert!(
                !keys[2].has_prefix(Name::intern(within).unwrap()),
                "{within}"
            );
        }
        assert!(!Key::fixed(name!("/lockx")).has_prefix(name!("/lock/")));
        // Bounds order as text; one among the client digits goes after
        // every lease key of the prefix.
        let lease = keys[2];
        let bound = |t: &str| lease.cmp_bound(Name::intern(t).unwrap());
        assert_eq!(bound("/lock/"), std::cmp::Ordering::Greater);
        assert_eq!(bound("/lock/694d"), std::cmp::Ordering::Greater);
        assert_eq!(bound("/lock/7"), std::cmp::Ordering::Less);
        assert_eq!(bound("/lock/694c"), std::cmp::Ordering::Greater);
        assert_eq!(bound("/lock/694e"), std::cmp::Ordering::Less);
        assert_eq!(bound("/lock/694d0001"), std::cmp::Ordering::Less);
        assert_eq!(bound("/lock/694d0"), std::cmp::Ordering::Greater);
        assert_eq!(bound("/lock/694d00010000"), std::cmp::Ordering::Less);
        assert_eq!(
            Key::fixed(name!("/lock/zz")).cmp_bound(name!("/lock/zz")),
            std::cmp::Ordering::Equal
        );
        assert!(!Key::fixed(name!("/lockx")).has_prefix(name!("/lock/")));
    }
}
