//! The applications a recipe serves — lock, shared lock, semaphore,
//! election, barrier, queue — one module each. A module holds everything
//! that is its application's alone:
//!
//! - the recipe hooks only that application calls (its trait: a lock's
//!   re-entry and give-up, a reader's acquire, a producer's enqueue, …),
//! - its facts ([`Spec`]: what its holds are called, which properties
//!   judge it and under which names the shared rules go, what each client
//!   of a run does in it — its [`Role`]),
//! - the part of the client loop that is its own (a lock holder's
//!   re-entries, a producer's items),
//! - its own monitors (a queue's ledger of owed items, a barrier's early
//!   leave, the bounds on holders of a shared lock and a semaphore).
//!
//! Under all of them runs one client machine ([`crate::client`]: session,
//! connection, resends, policy) and one set of shared monitors
//! ([`crate::properties`]: who believes, the resource's order, the herd);
//! each asks the application only where applications differ, through
//! [`App::spec`].

pub mod barrier;
pub mod election;
pub mod lock;
pub mod queue;
pub mod semaphore;
pub mod shared_lock;

use crate::ids::{ClientIdx, SessionId};
use crate::msg::Request;
use crate::properties::PropertyName;
use crate::recipe::{AnyState, DynRecipe};
use std::fmt;

pub use barrier::BarrierRecipe;
pub use election::ElectionRecipe;
pub use lock::{LateAnswer, LockRecipe, PlainLock, Reentry};
pub use queue::QueueRecipe;
pub use semaphore::SemaphoreRecipe;
pub use shared_lock::SharedLockRecipe;

/// Which application a recipe serves: what the client does with what the
/// recipe grants, and which properties judge it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum App {
    /// Acquire, hold (writes to the guarded resource), release.
    #[default]
    Lock,
    /// Campaign, lead (writes with the epoch as token), resign; candidates
    /// still campaigning are followers and observe who leads.
    Election,
    /// Enter, wait for the whole group, pass, work, and (for a double
    /// barrier) leave; the group is every client of the run.
    Barrier,
    /// Producers enqueue numbered items, one a round; consumers take items
    /// and process them, one a round, until the queue stays empty. The
    /// first `producers` clients of a run produce, the others consume.
    Queue,
    /// A read-write lock: the first `writers` clients of a run take it to
    /// write (holding alone, writing to the guarded resource), the others
    /// to read (holding beside other readers, writing nothing).
    SharedLock,
    /// A counting semaphore of `permits` leases: acquire a lease, hold it
    /// (no writes: up to `permits` hold at once), release it.
    Semaphore,
}

impl App {
    /// Every application.
    pub const ALL: [App; 6] = [
        App::Lock,
        App::Election,
        App::Barrier,
        App::Queue,
        App::SharedLock,
        App::Semaphore,
    ];

    /// The application's facts, from its module.
    pub fn spec(self) -> &'static Spec {
        match self {
            App::Lock => &lock::SPEC,
            App::Election => &election::SPEC,
            App::Barrier => &barrier::SPEC,
            App::Queue => &queue::SPEC,
            App::SharedLock => &shared_lock::SPEC,
            App::Semaphore => &semaphore::SPEC,
        }
    }

    /// What a timeline of this application's holds shows.
    pub fn holders(self) -> &'static str {
        self.spec().holders
    }

    /// Whether its holders write to the guarded resource: a lock's, a
    /// leader's and a shared lock's writers' do (a shared lock's readers
    /// do not); a barrier's, a queue's and a semaphore's do not.
    pub fn holders_write(self) -> bool {
        self.spec().holders_write
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Its name with the indefinite article: `a lock`, `an election`.
    pub fn a_name(self) -> &'static str {
        self.spec().a_name
    }

    /// Whether at most one client may hold at once (a lock, an election):
    /// elsewhere overlapping holds are the application's own rules' to
    /// judge (readers share, lease holders and members pass together).
    pub fn exclusive(self) -> bool {
        self.spec().rules.exclusion.is_some()
    }
}

impl fmt::Display for App {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The application a recipe serves, with the hooks that application
/// alone calls: each application's are its own trait, so the [`crate::recipe::Recipe`]
/// trait keeps only what every recipe has.
pub enum Application<'a, S> {
    Lock(&'a dyn LockRecipe<S>),
    SharedLock(&'a dyn SharedLockRecipe<S>),
    Semaphore(&'a dyn SemaphoreRecipe),
    Election(&'a dyn ElectionRecipe<S>),
    Barrier(&'a dyn BarrierRecipe),
    Queue(&'a dyn QueueRecipe<S>),
}

impl<S> Application<'_, S> {
    pub fn app(&self) -> App {
        match self {
            Application::Lock(_) => App::Lock,
            Application::SharedLock(_) => App::SharedLock,
            Application::Semaphore(_) => App::Semaphore,
            Application::Election(_) => App::Election,
            Application::Barrier(_) => App::Barrier,
            Application::Queue(_) => App::Queue,
        }
    }
}

/// What one application is, as the client loop, the monitors and the
/// engines ask it. One `const` per application module.
#[derive(Debug)]
pub struct Spec {
    /// `lock`, `shared lock`: how messages name it.
    pub name: &'static str,
    /// Its name with the indefinite article: `a lock`, `an election`.
    pub a_name: &'static str,
    /// What a run's summary calls its acquisitions: `acquisitions`,
    /// `leases taken`, `passes`, `items taken`.
    pub taken: &'static str,
    /// What a timeline of its holds shows.
    pub holders: &'static str,
    /// How a timeline speaks of one hold and its token.
    pub hold: HoldWords,
    /// Whether some of its holders write to the guarded resource.
    pub holders_write: bool,
    /// The properties that judge it, in the order lockstep reports them.
    pub properties: &'static [PropertyName],
    /// The rules the lock and the election share, under this
    /// application's names; `None` where a rule does not judge it.
    pub rules: Rules,
    /// What a run's client does, given the run's roles.
    pub role: fn(&Roles, ClientIdx) -> Role,
    /// Whether a client that loses its session while it holds has done its
    /// round: a member that passed its barrier does not enter again, a
    /// consumer that took its item does not take again.
    pub hold_ends_round: bool,
    /// Whether a finished release is a leave that the monitors judge (a
    /// double barrier's: the ghost mark of the message it left on).
    pub judges_leaving: bool,
}

/// How a timeline speaks of a hold, in the application's words.
#[derive(Clone, Copy, Debug)]
pub struct HoldWords {
    /// What a holder does, after its name: `holds the lock`, `leads`,
    /// `has passed`, `processes`.
    pub verb: &'static str,
    /// What a hold's token is to a reader, where it is anything: a lock's
    /// `token`, an election's `term`, a queue's `item` (its number).
    pub token: Option<&'static str>,
    /// What a producer does (a queue's: `enqueues`), where there are any.
    pub produces: Option<&'static str>,
}

/// The rules the lock and the election share (and the barrier and the
/// queue in part), named per application.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// At most one live believer: `mutual_exclusion`, `single_leader`.
    pub exclusion: Option<PropertyName>,
    /// Believing on a reply that showed one's own entry first in line:
    /// `holder_owns_key`, `elected_with_key`, a barrier's `no_early_pass`
    /// (its mark: every member there), a queue's `fifo_order` (its mark:
    /// the queue's head).
    pub owns_key: Option<PropertyName>,
    /// The resource's accepted writes in acquisition order:
    /// `resource_exclusion`, `leader_exclusion`.
    pub resource: Option<PropertyName>,
    /// Where an acquisition falls in the order the resource must follow.
    pub place: Place,
    /// What `herd_bound` counts, if it judges this application.
    pub herd: Herd,
}

/// Where an acquisition falls in the order the resource must follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Where the store decided it (the header of the message it held on).
    Granted,
    /// Its token: an election's epoch (the key's create revision, the
    /// node's czxid), since a leader elected on no key (etcd's phantom)
    /// was decided on nothing, and the leaders' order is their keys'.
    Token,
}

/// What `herd_bound` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Herd {
    /// The notifications of each release step (a lock's, an election's, a
    /// semaphore's hand-offs).
    ReleaseSteps,
    /// The wake-ups a member cannot proceed on (a barrier, where a wake-up
    /// that can proceed is no herd).
    FutileWakeups,
    /// Nothing: a queue's releases are no hand-offs, and a shared lock's
    /// readers wake together behind a writer by design (the herd sweep
    /// measures it).
    Unbounded,
}

/// How a run's clients divide among an application's roles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Roles {
    /// A queue: the first `producers` clients produce, the others consume.
    pub producers: ClientIdx,
    /// A shared lock: the first `writers` clients write, the others read.
    pub writers: ClientIdx,
    /// An election: the first `observers` clients observe (etcd's
    /// `Observe`), the others campaign.
    pub observers: ClientIdx,
}

/// What one client does in its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Acquires and holds with writes to the guarded resource (a lock's
    /// holder, a leader, a shared lock's writer).
    Writer,
    /// Acquires through [`SharedLockRecipe::acquire_shared`] and holds for
    /// the hold time, beside other readers.
    Reader,
    /// Acquires and holds for the hold time without writing (a lease
    /// holder, a barrier member passing, a consumer processing an item).
    Worker,
    /// Enqueues one item a round, at the producers' pace; holds nothing.
    Producer,
    /// Takes items for as long as there are any: counts no rounds.
    Consumer,
    /// Follows who leads without campaigning (an election's observer):
    /// holds nothing, counts no rounds, and is done when it waits.
    Observer,
}

/// What a holder does with its hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Writes to the guarded resource, a hold time apart.
    Writes,
    /// Works for the hold time, then releases.
    Work,
    /// Nothing: releases at once (an enqueued item).
    Nothing,
}

impl Role {
    /// What a message calls a client of this role.
    pub fn name(self) -> &'static str {
        match self {
            Role::Writer => "writer",
            Role::Reader => "reader",
            Role::Worker => "worker",
            Role::Producer => "producer",
            Role::Consumer => "consumer",
            Role::Observer => "observer",
        }
    }

    /// What its holds are.
    pub fn hold(self) -> Hold {
        match self {
            Role::Writer => Hold::Writes,
            Role::Reader | Role::Worker | Role::Consumer => Hold::Work,
            Role::Producer | Role::Observer => Hold::Nothing,
        }
    }

    /// Whether its rounds are counted (a consumer counts none: it is done
    /// when it waits on an empty queue).
    pub fn counts_rounds(self) -> bool {
        !matches!(self, Role::Consumer | Role::Observer)
    }

    /// Starts a round: the recipe's state and first request. `item` is
    /// what a producer enqueues this round; `None` for a queue recipe
    /// that cannot enqueue (the producer stops there, visibly).
    pub fn start(
        self,
        recipe: &dyn DynRecipe,
        session: SessionId,
        item: u64,
    ) -> Option<(AnyState, Request)> {
        match self {
            Role::Producer => recipe.enqueue(session, item),
            Role::Observer => recipe.observe(session),
            Role::Reader => Some(recipe.acquire_shared(session)),
            Role::Writer | Role::Worker | Role::Consumer => Some(recipe.acquire(session)),
        }
    }
}

/// The role every client has where all do the same: the holder of a lock,
/// a leader, a lease holder, a barrier member.
fn writer(_: &Roles, _: ClientIdx) -> Role {
    Role::Writer
}

fn worker(_: &Roles, _: ClientIdx) -> Role {
    Role::Worker
}
