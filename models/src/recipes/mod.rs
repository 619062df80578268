//! The lock recipes. Each is one file whose steps read like its source:
//! the ZooKeeper recipe text, Curator, etcd's `concurrency` package.
//!
//! A recipe is a small state machine driven by the client application: it
//! turns replies and watch events into the next store request ([`Step`]). At
//! most one request is outstanding at a time, as in the sequential code it
//! models.

pub mod children_watch;
pub mod etcd_revision;
pub mod fair_predecessor;
pub mod unfair_create;

use crate::ids::SessionId;
use crate::msg::{Reply, Request, WatchEvent};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What the recipe does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send this request and wait for its reply.
    Send(Request),
    /// Wait for a watch event.
    Wait,
    /// The lock is ours; `token` is the fencing token.
    Acquired { token: u64 },
    /// Our session (lease) is gone: the acquisition failed.
    SessionLost,
    /// A reply the recipe has no step for. The client stops there, so a
    /// recipe bug shows up as a progress violation rather than being hidden.
    Unexpected,
}

/// Which store API a recipe speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    ZooKeeper,
    Etcd,
}

/// A recipe and its variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Recipe {
    UnfairCreate,
    FairPredecessor(fair_predecessor::Options),
    EtcdRevision,
    ChildrenWatch,
}

/// The recipe's state during one acquisition (and the hold that follows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RecipeState {
    Idle,
    Unfair(unfair_create::State),
    Fair(fair_predecessor::State),
    Etcd(etcd_revision::State),
    Children(children_watch::State),
}

impl Recipe {
    /// Every recipe at its default variant, in the order lockstep reports them.
    pub const ALL: [Recipe; 4] = [
        Recipe::UnfairCreate,
        Recipe::FairPredecessor(fair_predecessor::Options {
            guid: true,
            relist_after_wake: true,
        }),
        Recipe::EtcdRevision,
        Recipe::ChildrenWatch,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Recipe::UnfairCreate => "unfair-create",
            Recipe::FairPredecessor(_) => "fair-predecessor",
            Recipe::EtcdRevision => "etcd-revision",
            Recipe::ChildrenWatch => "children-watch",
        }
    }

    pub fn face(&self) -> Face {
        match self {
            Recipe::EtcdRevision => Face::Etcd,
            _ => Face::ZooKeeper,
        }
    }

    /// Recipes that create children under a persistent `/lock` directory.
    pub fn needs_lock_dir(&self) -> bool {
        matches!(self, Recipe::FairPredecessor(_) | Recipe::ChildrenWatch)
    }

    /// Recipes in which each waiter watches only its predecessor.
    pub fn watches_predecessor(&self) -> bool {
        matches!(self, Recipe::FairPredecessor(_) | Recipe::EtcdRevision)
    }

    /// Start an acquisition: the first request.
    pub fn acquire(&self, session: SessionId) -> (RecipeState, Request) {
        match self {
            Recipe::UnfairCreate => {
                let (s, r) = unfair_create::acquire();
                (RecipeState::Unfair(s), r)
            }
            Recipe::FairPredecessor(opts) => {
                let (s, r) = fair_predecessor::acquire(*opts, session);
                (RecipeState::Fair(s), r)
            }
            Recipe::EtcdRevision => {
                let (s, r) = etcd_revision::acquire(session);
                (RecipeState::Etcd(s), r)
            }
            Recipe::ChildrenWatch => {
                let (s, r) = children_watch::acquire();
                (RecipeState::Children(s), r)
            }
        }
    }

    pub fn on_reply(&self, session: SessionId, st: &mut RecipeState, reply: &Reply) -> Step {
        match (self, st) {
            (Recipe::UnfairCreate, RecipeState::Unfair(s)) => unfair_create::on_reply(s, reply),
            (Recipe::FairPredecessor(o), RecipeState::Fair(s)) => {
                fair_predecessor::on_reply(*o, session, s, reply)
            }
            (Recipe::EtcdRevision, RecipeState::Etcd(s)) => {
                etcd_revision::on_reply(session, s, reply)
            }
            (Recipe::ChildrenWatch, RecipeState::Children(s)) => children_watch::on_reply(s, reply),
            _ => Step::Unexpected,
        }
    }

    pub fn on_event(&self, st: &mut RecipeState, ev: &WatchEvent) -> Step {
        match (self, st) {
            (Recipe::UnfairCreate, RecipeState::Unfair(s)) => unfair_create::on_event(s, ev),
            (Recipe::FairPredecessor(o), RecipeState::Fair(s)) => {
                fair_predecessor::on_event(*o, s, ev)
            }
            (Recipe::EtcdRevision, RecipeState::Etcd(s)) => etcd_revision::on_event(s, ev),
            (Recipe::ChildrenWatch, RecipeState::Children(s)) => children_watch::on_event(s, ev),
            _ => Step::Wait,
        }
    }

    /// The request to send in place of `lost`, whose reply never came.
    pub fn resend(&self, st: &mut RecipeState, lost: &Request) -> Request {
        match (self, st) {
            (Recipe::FairPredecessor(o), RecipeState::Fair(s)) => {
                fair_predecessor::resend(*o, s, lost)
            }
            _ => lost.clone(),
        }
    }

    /// The request that releases the lock held in `st`.
    pub fn release(&self, session: SessionId, st: &RecipeState) -> Option<Request> {
        match (self, st) {
            (Recipe::UnfairCreate, RecipeState::Unfair(_)) => Some(unfair_create::release()),
            (Recipe::FairPredecessor(_), RecipeState::Fair(s)) => fair_predecessor::release(s),
            (Recipe::EtcdRevision, RecipeState::Etcd(_)) => Some(etcd_revision::release(session)),
            (Recipe::ChildrenWatch, RecipeState::Children(s)) => children_watch::release(s),
            _ => None,
        }
    }
}

impl fmt::Display for Recipe {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())?;
        if let Recipe::FairPredecessor(o) = self {
            if !o.guid {
                f.write_str(" (no guid)")?;
            }
            if !o.relist_after_wake {
                f.write_str(" (broken: no re-list after wake)")?;
            }
        }
        Ok(())
    }
}

impl FromStr for Recipe {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Recipe::ALL
            .into_iter()
            .find(|r| {
                r.name() == s || (s == "fair-predecessor-watch" && r.name() == "fair-predecessor")
            })
            .ok_or_else(|| {
                let known: Vec<_> = Recipe::ALL.iter().map(|r| r.name()).collect();
                format!("unknown recipe '{s}' (known: {})", known.join(", "))
            })
    }
}
