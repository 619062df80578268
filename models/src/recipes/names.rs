//! The names the shipped recipes give their nodes and keys: a lock's
//! directory `/lock` with members `[_c_<guid>-]lock-<seq>`, a barrier's
//! `/lock/ready`, a queue's claims under `/taken`, and etcd keys
//! `/lock/<lease id>` as etcd's `concurrency` package names them. Recipes
//! of other shapes name their own (see [`crate::ids`]).

use crate::ids::{Child, Key, Name, SessionId, ZPath};
use crate::name;

/// Where a lock's contenders queue: a directory, and the name a node gets
/// before its sequence number. Recipes that hold a lock of their own inside
/// (a semaphore's mutex) give it another place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    pub dir: Name,
    pub prefix: Name,
}

impl Place {
    /// `/lock/[_c_<guid>-]lock-<seq>`.
    pub const LOCK: Place = Place {
        dir: LOCK_DIR,
        prefix: MEMBER,
    };

    /// The directory, as the path a recipe lists.
    pub fn dir_path(self) -> ZPath {
        ZPath::Fixed(self.dir)
    }

    /// What a sequential create of a contender sends.
    pub fn new_node(self, guid: Option<SessionId>) -> ZPath {
        if self == Place::LOCK {
            return new_member(guid);
        }
        ZPath::child(self.dir, Child::named(self.prefix, guid))
    }

    /// A contender by its name.
    pub fn node(self, child: Child) -> ZPath {
        ZPath::child(self.dir, child)
    }
}

/// The directory of the line.
pub const LOCK_DIR: Name = name!("/lock");
/// The directory as a path (the node a recipe lists, or races to create).
pub const LOCK: ZPath = ZPath::fixed(name!("/lock"));
/// A member's name before its guid and sequence number.
pub const MEMBER: Name = name!("lock-");
/// A barrier's signal node (the article's `/synchronizing/start`, the
/// recipes page's `b/ready`).
pub const READY: ZPath = ZPath::fixed(name!("/lock/ready"));
/// Where a lock-safe queue's consumer claims an element (Curator's
/// `lockPath`): `/taken/<element>`.
pub const TAKEN_DIR: Name = name!("/taken");
/// The prefix of a session's etcd key.
pub const KEYS: Name = name!("/lock/");

/// What a sequential create of a member sends: `/lock/[_c_<guid>-]lock-`.
pub fn new_member(guid: Option<SessionId>) -> ZPath {
    const PLAIN: ZPath = ZPath::fixed(name!("/lock/lock-"));
    match guid {
        Some(g) => ZPath::Node {
            dir: LOCK_DIR,
            child: Child::named(MEMBER, Some(g)),
        },
        None => PLAIN,
    }
}

/// A member of `/lock` by its name (which the store gave a sequence
/// number, or a guid).
pub fn member(child: Child) -> ZPath {
    ZPath::child(LOCK_DIR, child)
}

/// A member of `/lock` made without a sequence number, named by its guid
/// (a barrier's `/lock/_c_<guid>-lock-0000000000`).
pub fn named_member(guid: SessionId) -> ZPath {
    ZPath::Node {
        dir: LOCK_DIR,
        child: Child {
            seq: Some(0),
            prefix: MEMBER,
            guid: Some(guid),
        },
    }
}

/// Whether a listed child of `/lock` is a member (not `ready`).
pub fn is_member(child: &Child) -> bool {
    child.prefix == MEMBER && child.is_generated()
}

/// A queue consumer's claim on `element`.
pub fn claim(element: Child) -> ZPath {
    ZPath::child(TAKEN_DIR, element)
}

/// A session's key, `/lock/<lease id>`.
pub fn session_key(s: SessionId) -> Key {
    Key::of_lease(KEYS, s)
}
