//! The recipe trait: what a coordination recipe says, and nothing else.
//!
//! A recipe is the library code between an application and the store: the
//! lock of the ZooKeeper recipes page, Curator's `InterProcessMutex`, etcd's
//! `concurrency.Mutex`. It is a small state machine that the client
//! application drives: the application asks it to acquire, hands it every
//! reply and watch event, tells it when a reply was lost, and asks it for
//! the request that releases. The recipe answers with the next [`Step`]. At
//! most one request is outstanding at a time, as in the sequential code it
//! models.
//!
//! The application (the lock client of [`crate::client`]) owns the session,
//! resends, the writes to the guarded resource and the policy for a holder
//! that stops hearing from the store; the engines (the model checker and the
//! simulator) own time, links and faults; the monitors of
//! [`crate::properties`] judge. A recipe knows none of them, which is why one
//! recipe runs unchanged in every engine.
//!
//! # Writing a recipe
//!
//! ```
//! use models::ids::{Data, SessionId, ZPath};
//! use models::name;
//! use models::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
//! use models::recipe::{Face, Recipe, Setup, Step};
//! use models::relabel::{Perm, Relabel};
//!
//! /// Spin on `create(/lock)`: no watch, retry on NodeExists.
//! #[derive(Debug)]
//! struct SpinCreate;
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
//! enum State { Creating, Holding }
//!
//! impl Relabel for State {
//!     fn relabel(&mut self, _: &Perm) {
//!         match self { State::Creating | State::Holding => {} } // names no client
//!     }
//! }
//!
//! const LOCK: ZPath = ZPath::fixed(name!("/lock"));
//!
//! fn create() -> Request {
//!     Request::Create { path: LOCK, ephemeral: true, sequential: false, data: Data::Empty }
//! }
//!
//! impl Recipe for SpinCreate {
//!     type State = State;
//!     fn name(&self) -> &'static str { "spin-create" }
//!     fn face(&self) -> Face { Face::ZooKeeper }
//!     fn setup(&self) -> Setup { Setup::bare() }
//!     fn acquire(&self, _: SessionId) -> (State, Request) { (State::Creating, create()) }
//!     fn on_reply(&self, _: SessionId, st: &mut State, reply: &Reply) -> Step {
//!         match (*st, reply) {
//!             (State::Creating, Reply::Created { czxid, .. }) => {
//!                 *st = State::Holding;
//!                 Step::Acquired { token: *czxid }
//!             }
//!             (State::Creating, Reply::Error(ZkError::NodeExists)) => Step::Send(create()),
//!             _ => Step::Unexpected,
//!         }
//!     }
//!     fn on_event(&self, _: &mut State, _: &WatchEvent) -> Step { Step::Wait }
//!     fn release(&self, _: SessionId, st: &State) -> Option<Request> {
//!         (*st == State::Holding).then_some(Request::Delete { path: LOCK, version: None })
//!     }
//! }
//!
//! let model = models::model::ModelCfg::new(models::recipe::RecipeRef::new(SpinCreate), 2)
//!     .into_model()
//!     .unwrap();
//! let result = models::checker::check(&model, Default::default()).unwrap();
//! let verdict = result.property(models::properties::PropertyName::MutualExclusion).unwrap();
//! assert_eq!(verdict.status, models::checker::Status::Holds);
//! ```

use crate::ids::{Child, Name, SessionId, ZPath};
use crate::msg::{Reply, Request, SessionOpts, WatchEvent};
use crate::name;
use crate::relabel::{Perm, Relabel};
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub use crate::apps::queue::HERD_QUEUE_ITEMS;
pub use crate::apps::shared_lock::herd_writers;
pub use crate::apps::{
    App, Application, BarrierRecipe, ElectionRecipe, LateAnswer, LockRecipe, PlainLock,
    QueueRecipe, Reentry, SemaphoreRecipe, SharedLockRecipe,
};
pub use crate::recipes::redis::KeyTiming;

/// What the recipe does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send this request and wait for its reply.
    Send(Request),
    /// Wait for a watch event.
    Wait,
    /// The lock is ours; `token` is the fencing token (the lock node's czxid,
    /// the key's create revision).
    Acquired { token: u64 },
    /// Our session (lease) is gone: the acquisition failed.
    SessionLost,
    /// A reply the recipe has no step for. The client stops there, so a
    /// recipe bug shows up as a progress violation rather than being hidden.
    Unexpected,
    /// Releasing: the release is over (a double barrier's member has left,
    /// a lock-safe queue's item and lock are deleted).
    Released,
    /// Sleep on the recipe's own clock for `after` (a back-off, a poll
    /// interval), or until a watch event comes, whichever is first: with
    /// nothing outstanding, like [`Step::Wait`]. When the time is up the
    /// client calls [`Recipe::on_wake`]. A `Wait` (an event that is not the
    /// recipe's) leaves the sleep armed; any other step cancels it.
    /// The simulator sleeps exactly `after` of virtual time; the checker
    /// lets the sleep end at any moment (durations are not modelled there).
    Sleep { after: Duration },
    /// Acquiring: the lock is not to be had and the recipe has cleaned up
    /// (etcd's `TryLock` deleted its key and returns `ErrLocked`): the
    /// round ends without a hold.
    GaveUp,
}

/// Which store API a recipe speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Face {
    ZooKeeper,
    Etcd,
    /// Redis: text keys with TTLs on one master or several, no sessions,
    /// no watches (`store::redis`).
    Redis,
    /// Consul: a KV store with sessions (TTL, behavior, lock-delay),
    /// `?acquire=` / `?release=`, and blocking queries as its only watch
    /// (`store::consul`).
    Consul,
}

/// A Redis lock key's lease: its TTL by the server's clock, and the
/// period of the holder's renewals, if it renews.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyLease {
    pub ttl: Duration,
    pub renew_every: Option<Duration>,
}

/// What one try of a recipe that polls costs (Redis has no watches: a
/// waiter sleeps and tries again), as the herd sweep's closed form for
/// its rows needs it (`sim::herd::polling_closed_form`). Each count is of
/// requests sent one after another, each on the reply to the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PollCost {
    /// The sleep after a try that failed, before the next: the recipe's
    /// own retry delay, fixed.
    pub delay: Duration,
    /// Requests of a try that fails, up to its sleep.
    pub failed_try: u32,
    /// Requests of a try that wins, up to the hold.
    pub to_hold: u32,
    /// Requests of the release.
    pub release: u32,
}

/// What a recipe does with its state when the client opens a new session
/// after losing the old one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Forget the old state; the next round starts afresh (the default).
    StartOver,
    /// Carry the old state into the new session and send this request
    /// (Curator's `LeaderLatch` re-lists on RECONNECTED with its old path).
    Continue(Request),
}

/// What a recipe needs in the store before any client starts, and where
/// its line is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    /// Persistent directories made before the run (ZooKeeper face), with
    /// their parents.
    pub dirs: Vec<ZPath>,
    /// Where the recipe's contenders, candidates, members or elements are.
    pub line: Line,
    /// A queue whose consumers claim an element before they take it: the
    /// directory of the claims (the claim on `<line>/<element>` is
    /// `<claims>/<element>`).
    pub claims: Option<Name>,
    /// How the etcd store numbers the leases it grants, and so how keys
    /// named by leases sort (ZooKeeper: no leases, no effect).
    pub leases: LeaseIds,
    /// Redis: how many independent masters the recipe talks to (1; a
    /// Redlock's N). The other faces have one store.
    pub masters: u8,
}

/// How an etcd store's lease ids are made, and so in which order keys
/// named by leases (`<prefix><lease id>`) sort: what a range sorted by
/// key, or not sorted, lists first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LeaseIds {
    /// As etcd's: the store numbers the leases it grants, so lease keys
    /// sort in grant order, whoever holds them, and symmetry reduction
    /// renames no order a recipe can read. Every state carries the order
    /// the leases were granted in, so a check meets up to n! times as
    /// many states at n clients as by client.
    #[default]
    InGrantOrder,
    /// Derived from the client and its incarnation, so lease keys sort by
    /// client name and no state carries a grant order: for a recipe whose
    /// requests never let that order show — the shipped etcd recipes
    /// range over their prefix sorted by create revision, one key at a
    /// time. A recipe that says so wrongly behaves by client names, which
    /// the symmetry audit refuses (`IdentityDependent`).
    ByClient,
}

/// Where a recipe's line is: what the store's ghost marks (first in line,
/// a barrier's members, a queue's head) are computed over. Recipes never
/// read these marks; only the properties do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Line {
    /// ZooKeeper: the directory whose children named with a guid or a
    /// sequence number queue up, or the one node a recipe races to create.
    pub path: ZPath,
    /// etcd: the prefix of the keys that queue up.
    pub keys: Name,
}

impl Line {
    /// `/lock` and `/lock/`: the names of the shipped recipes.
    pub const LOCK: Line = Line {
        path: ZPath::fixed(name!("/lock")),
        keys: name!("/lock/"),
    };

    /// A member of the line: a child of its directory named with a guid or
    /// a sequence number.
    pub fn member(self, path: ZPath) -> Option<Child> {
        match (self.path, path) {
            (ZPath::Fixed(line), ZPath::Node { dir, child }) if dir == line => Some(child),
            (ZPath::Fixed(_) | ZPath::Node { .. }, ZPath::Fixed(_) | ZPath::Node { .. }) => None,
        }
    }
}

impl Setup {
    /// Nothing made before the run; the line at `/lock` (a recipe that
    /// races to create `/lock`, or an etcd recipe under `/lock/`).
    pub fn bare() -> Setup {
        Setup {
            dirs: Vec::new(),
            line: Line::LOCK,
            claims: None,
            leases: LeaseIds::InGrantOrder,
            masters: 1,
        }
    }

    /// A persistent `/lock` whose children queue up.
    pub fn lock_dir() -> Setup {
        Setup {
            dirs: vec![Line::LOCK.path],
            ..Setup::bare()
        }
    }
}

/// A coordination recipe. See the [module documentation](self) for an example.
///
/// `State` is the recipe's state during one acquisition and the hold that
/// follows. The model checker hashes and compares it, so it must hold
/// everything the recipe's next steps depend on and nothing else; symmetry
/// reduction relabels it, so every client name in it (a session, a node's
/// guid, an etcd key) must be reached by its [`Relabel`] impl. A recipe whose
/// steps depend on which client is which (beyond the names it relabels) is
/// detected by the checker, which then asks for `--no-symmetry`.
pub trait Recipe: fmt::Debug + Send + Sync + 'static {
    type State: Clone + fmt::Debug + Eq + Hash + Send + Sync + Relabel + 'static;

    /// The recipe's name, as users type it (`fair-predecessor`).
    fn name(&self) -> &'static str;

    /// This instance's variant; `None` for the recipe as its source has it.
    fn variant(&self) -> Option<&'static str> {
        None
    }

    /// Which store API it speaks.
    fn face(&self) -> Face;

    /// What it needs in the store at the start.
    fn setup(&self) -> Setup;

    /// Starts an acquisition in `session`: the state and the first request.
    fn acquire(&self, session: SessionId) -> (Self::State, Request);

    /// The reply to the outstanding request has come.
    fn on_reply(&self, session: SessionId, st: &mut Self::State, reply: &Reply) -> Step;

    /// A watch event has come while no request is outstanding.
    fn on_event(&self, st: &mut Self::State, event: &WatchEvent) -> Step;

    /// Whether the recipe keeps note of watch events that arrive while a
    /// request is outstanding ([`Recipe::note_event`]). By default such an
    /// event is lost to the recipe, as it is to code that sets its watch
    /// with the last request before it waits (the event can only follow
    /// that reply).
    fn notes_events(&self) -> bool {
        false
    }

    /// A watch event arrived while a request is outstanding: a library
    /// whose watcher sets a flag the waiting thread reads later (kazoo's
    /// `wake_event`, a `threading.Event`) notes it in its state here.
    /// Called only where [`Recipe::notes_events`] says.
    fn note_event(&self, _st: &mut Self::State, _event: &WatchEvent) {}

    /// The reply to a request the release step sent. By default the release
    /// is over whatever the answer (deleted, already gone); a recipe whose
    /// release takes several steps (a double barrier's leave, a lock-safe
    /// queue's delete of the item and then of its lock) answers the next
    /// [`Step`]: `Send`, `Wait` or `Released`.
    fn on_release_reply(&self, _session: SessionId, _st: &mut Self::State, _reply: &Reply) -> Step {
        Step::Released
    }

    /// A watch event while releasing, with no request outstanding.
    fn on_release_event(&self, _st: &mut Self::State, _event: &WatchEvent) -> Step {
        Step::Wait
    }

    /// The reply to `lost` never came: the request to send in its place.
    /// By default the same request again, as a client library's retry does.
    fn on_lost_reply(&self, _st: &mut Self::State, lost: &Request) -> Request {
        lost.clone()
    }

    /// The release step: the request that gives the lock held in `st` up,
    /// or `None` if there is nothing to give up. Sending it is a hand-off:
    /// the herd metrics count the notifications it causes.
    fn release(&self, session: SessionId, st: &Self::State) -> Option<Request>;

    /// The herd's closed form, where the recipe's source makes one known:
    /// notifications delivered by the `k`-th of `n` releases (1-based) in the
    /// baseline herd scenario (every client requests at once, one round, no
    /// faults). The herd sweep checks its measurements against it.
    ///
    /// A barrier or a queue hands nothing off: for them it is the
    /// notifications of the `k`-th store change that woke anyone, `None`
    /// past the last. A barrier's baseline is the lock's (every member
    /// enters at once); a queue's is one producer enqueuing
    /// [`HERD_QUEUE_ITEMS`] items, each once every consumer is idle, and
    /// `n - 1` consumers.
    fn herd_closed_form(&self, _n: u32, _k: u32) -> Option<u32> {
        None
    }

    /// The application it serves, with that application's own hooks
    /// ([`Application`]); a lock with none of them unless it says
    /// otherwise.
    fn application(&self) -> Application<'_, Self::State> {
        Application::Lock(&PlainLock)
    }

    /// The sleep the recipe asked for ([`Step::Sleep`]) is over, with
    /// nothing outstanding: its next step. A recipe that never sleeps is
    /// never called here; by default the client stops (`Unexpected`), so a
    /// recipe that sleeps without saying how it wakes shows as a progress
    /// violation.
    fn on_wake(&self, _session: SessionId, _st: &mut Self::State) -> Step {
        Step::Unexpected
    }

    /// The longest sleep the recipe ever asks for ([`Step::Sleep`]): the
    /// simulator's liveness bound allows a round that much more, so a
    /// back-off is not mistaken for a client that never finishes.
    fn longest_sleep(&self) -> Duration {
        Duration::ZERO
    }

    /// The client heard that its session (lease) expired while this
    /// acquisition was under way. By default the acquisition is lost; a
    /// recipe whose source does not watch the session (etcd's `Campaign`)
    /// answers [`Step::Wait`] and carries on.
    fn on_expired(&self, _st: &mut Self::State) -> Step {
        Step::SessionLost
    }

    /// The client lost its session during this acquisition or hold and has
    /// opened `session`: start over (the default), or go on from `st`.
    fn resume(&self, _session: SessionId, _st: &mut Self::State) -> Resume {
        Resume::StartOver
    }

    /// Redis: the TTL the recipe gives its lock's key, and how often it
    /// renews it while it holds (a watchdog), if it does: by default its
    /// clocks' TTL, never renewed. `None` for a recipe on a store with
    /// sessions: their TTL is the session's.
    fn key_lease(&self) -> Option<KeyLease> {
        self.key_timing().map(|t| KeyLease {
            ttl: t.ttl(),
            renew_every: None,
        })
    }

    /// A recipe that polls instead of watching: what one try costs
    /// ([`PollCost`]), which the herd sweep's closed form for its rows
    /// reads; `None` for a recipe that watches, or declares no form.
    fn poll_cost(&self) -> Option<PollCost> {
        None
    }

    /// Redis: this recipe on `masters` independent masters, for a recipe
    /// that spreads its lock over several (Redlock); `None` for the others.
    fn for_masters(&self, _masters: u8) -> Option<RecipeRef> {
        None
    }

    /// Redis: the lock's clocks — its key's TTL and its retry delay;
    /// `None` for a recipe that keeps none.
    fn key_timing(&self) -> Option<KeyTiming> {
        None
    }

    /// Redis: this recipe on other clocks, or why it cannot run on them
    /// (they passed [`KeyTiming::check`] already).
    fn with_key_timing(&self, _timing: KeyTiming) -> Result<RecipeRef, String> {
        Err(format!("{} keeps no key TTL", self.name()))
    }

    /// Redis: how long an attempt may take, by the client's own clock,
    /// before the keys it set may have expired (Redlock's validity time:
    /// the TTL less the clock drift), for a recipe that checks; `None`
    /// for one that does not. The client starts the clock when an attempt
    /// starts (the acquisition, or a wake from the retry delay) and calls
    /// [`Recipe::on_validity_passed`] when it runs out.
    fn validity(&self) -> Option<Duration> {
        None
    }

    /// The attempt's validity time has passed (see [`Recipe::validity`]):
    /// by default nothing changes.
    fn on_validity_passed(&self, _st: &mut Self::State) -> Step {
        Step::Wait
    }

    /// Redis: the renewal a holder's watchdog sends every
    /// [`KeyLease::renew_every`] while it holds (Redisson's
    /// `renewExpiration`). Its answer changes nothing for the client.
    fn renewal(&self, _session: SessionId, _st: &Self::State) -> Option<Request> {
        None
    }

    /// Whether the client closes a session it gives up on by its own clock.
    /// A ZooKeeper handle replaced while disconnected sends no closeSession
    /// (Curator's own session expiry), so its nodes live on until the
    /// server expires them.
    fn closes_abandoned_session(&self) -> bool {
        true
    }

    /// Consul: what the recipe's session asks for at `session/create`
    /// (behavior, lock-delay); `None` for the other faces.
    fn consul_session(&self) -> Option<SessionOpts> {
        None
    }

    /// Consul: this recipe with its session asking for `opts` (a
    /// scenario's `consul.lock_delay_ms`, `consul.behavior`), or why not.
    fn with_consul_session(&self, _opts: SessionOpts) -> Result<RecipeRef, String> {
        Err(format!("{} opens no Consul session", self.name()))
    }

    /// Consul: the wait its blocking queries ask for (`?wait=`, in ms),
    /// for a recipe that names one (`api.Lock`'s `LockWaitTime`).
    fn consul_wait(&self) -> Option<u32> {
        None
    }

    /// The most clients a stock check runs it with (the tour's, at 1
    /// round and 1 crash; the engine-agreement matrix's): 3, fewer for a
    /// recipe whose state space at 3 is too large for them (the tour's
    /// table says so in its row).
    fn checked_clients(&self) -> u8 {
        3
    }

    /// Consul: this recipe with its blocking queries waiting `wait_ms` (a
    /// scenario's `consul.wait_ms`), or why not.
    fn with_consul_wait(&self, _wait_ms: u32) -> Result<RecipeRef, String> {
        Err(format!(
            "{} names no wait for its blocking queries (they take the server's default)",
            self.name()
        ))
    }
}

// ---------------------------------------------------------------------------
// Type erasure: the engines hold any recipe behind one pointer type.

/// A recipe state of some recipe, hashable, comparable and relabelable
/// without knowing its type. Cloning shares it; a step that changes it
/// replaces it. Its hashes — as it is, and with client names erased — are
/// taken once, when first asked, and kept with the state for every copy:
/// the checker hashes every state it meets and orders clients by their
/// erased situation, and a recipe state changes far less often than it is
/// hashed; the simulator asks for neither.
#[derive(Clone)]
pub struct AnyState {
    state: Arc<Hashed<dyn ErasedState>>,
}

/// A recipe state with its hashes, taken when first asked.
struct Hashed<S: ?Sized> {
    hash: OnceLock<u64>,
    unlabelled: OnceLock<u64>,
    state: S,
}

/// Sends every client to client 0: relabelling with it erases names. Long
/// enough for any client index a state can name (sessions use 16 bits).
static ERASE: [crate::ids::ClientIdx; 1 << 16] = [0; 1 << 16];

fn fixed_hasher() -> impl std::hash::Hasher {
    use std::hash::BuildHasher;
    crate::fixed_hash::seeded(0x7265_6369_7065_7374).build_hasher()
}

trait ErasedState: Any + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn eq_dyn(&self, other: &dyn ErasedState) -> bool;
    fn relabelled(&self, p: &Perm) -> AnyState;
    fn fmt_dyn(&self, f: &mut fmt::Formatter) -> fmt::Result;
    /// The state's hash (fixed seeds).
    fn hash_fixed(&self) -> u64;
    /// The hash of the state with every client name erased.
    fn unlabelled_fixed(&self) -> u64;
}

impl<S> ErasedState for S
where
    S: Clone + fmt::Debug + Eq + Hash + Send + Sync + Relabel + 'static,
{
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn eq_dyn(&self, other: &dyn ErasedState) -> bool {
        other.as_any().downcast_ref::<S>() == Some(self)
    }
    fn relabelled(&self, p: &Perm) -> AnyState {
        let mut s = self.clone();
        s.relabel(p);
        AnyState::new(s)
    }
    fn fmt_dyn(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
    fn hash_fixed(&self) -> u64 {
        let mut h = fixed_hasher();
        self.hash(&mut h);
        h.finish()
    }
    fn unlabelled_fixed(&self) -> u64 {
        let mut erased = self.clone();
        erased.relabel(&ERASE);
        erased.hash_fixed()
    }
}

impl AnyState {
    fn new<S: Clone + fmt::Debug + Eq + Hash + Send + Sync + Relabel + 'static>(s: S) -> Self {
        AnyState {
            state: Arc::new(Hashed {
                hash: OnceLock::new(),
                unlabelled: OnceLock::new(),
                state: s,
            }),
        }
    }

    /// The state as its recipe's type. Only the recipe that made a state is
    /// ever handed it, so a mismatch is a lockstep bug.
    fn get<S: 'static>(&self) -> &S {
        self.state
            .state
            .as_any()
            .downcast_ref::<S>()
            .expect("a recipe is handed only the states it made")
    }

    fn hash_value(&self) -> u64 {
        *self
            .state
            .hash
            .get_or_init(|| self.state.state.hash_fixed())
    }

    /// A hash of the state with every client name erased: equal for two
    /// clients in the same situation under different names.
    pub fn unlabelled_hash(&self) -> u64 {
        *self
            .state
            .unlabelled
            .get_or_init(|| self.state.state.unlabelled_fixed())
    }
}

impl PartialEq for AnyState {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
            || self.hash_value() == other.hash_value()
                && self.state.state.eq_dyn(&other.state.state)
    }
}
impl Eq for AnyState {}

impl Hash for AnyState {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash_value());
    }
}

impl Relabel for AnyState {
    fn relabel(&mut self, p: &Perm) {
        *self = self.state.state.relabelled(p);
    }
}

impl fmt::Debug for AnyState {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.state.state.fmt_dyn(f)
    }
}

/// [`Recipe`] with its state type erased; implemented for every recipe.
pub trait DynRecipe: fmt::Debug + Send + Sync {
    fn name(&self) -> &'static str;
    fn variant(&self) -> Option<&'static str>;
    fn face(&self) -> Face;
    fn setup(&self) -> Setup;
    fn acquire(&self, session: SessionId) -> (AnyState, Request);
    fn acquire_shared(&self, session: SessionId) -> (AnyState, Request);
    fn on_reply(&self, session: SessionId, st: &mut AnyState, reply: &Reply) -> Step;
    fn on_event(&self, st: &mut AnyState, event: &WatchEvent) -> Step;
    fn on_lost_reply(&self, st: &mut AnyState, lost: &Request) -> Request;
    fn enqueue(&self, session: SessionId, item: u64) -> Option<(AnyState, Request)>;
    fn notes_events(&self) -> bool;
    fn note_event(&self, st: &mut AnyState, event: &WatchEvent);
    fn on_release_reply(&self, session: SessionId, st: &mut AnyState, reply: &Reply) -> Step;
    fn on_release_event(&self, st: &mut AnyState, event: &WatchEvent) -> Step;
    fn release(&self, session: SessionId, st: &AnyState) -> Option<Request>;
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32>;
    fn app(&self) -> App;
    fn for_group(&self, n: u16) -> Option<RecipeRef>;
    fn for_permits(&self, k: u16) -> Option<RecipeRef>;
    fn max_permits(&self) -> u16;
    fn leader_seen(&self, st: &AnyState) -> Option<SessionId>;
    fn observe(&self, session: SessionId) -> Option<(AnyState, Request)>;
    fn report_seen(&self, st: &AnyState) -> Option<(SessionId, u64)>;
    fn on_expired(&self, st: &mut AnyState) -> Step;
    fn on_wake(&self, session: SessionId, st: &mut AnyState) -> Step;
    fn longest_sleep(&self) -> Duration;
    fn reentry(&self) -> Reentry;
    fn withdraws(&self) -> bool;
    fn withdraw(&self, session: SessionId, st: &AnyState) -> Option<Request>;
    fn interruptible(&self) -> bool;
    fn kill_grace(&self) -> Option<Duration>;
    fn on_late_answer(&self, session: SessionId, reply: &Reply) -> LateAnswer;
    fn orphan_renewal(&self, session: SessionId) -> Option<Request>;
    fn resume(&self, session: SessionId, st: &mut AnyState) -> Resume;
    fn closes_abandoned_session(&self) -> bool;
    fn key_lease(&self) -> Option<KeyLease>;
    fn poll_cost(&self) -> Option<PollCost>;
    fn renewal(&self, session: SessionId, st: &AnyState) -> Option<Request>;
    fn validity(&self) -> Option<Duration>;
    fn on_validity_passed(&self, st: &mut AnyState) -> Step;
    fn for_masters(&self, masters: u8) -> Option<RecipeRef>;
    fn key_timing(&self) -> Option<KeyTiming>;
    fn with_key_timing(&self, timing: KeyTiming) -> Result<RecipeRef, String>;
    fn consul_session(&self) -> Option<SessionOpts>;
    fn with_consul_session(&self, opts: SessionOpts) -> Result<RecipeRef, String>;
    fn consul_wait(&self) -> Option<u32>;
    fn checked_clients(&self) -> u8;
    fn with_consul_wait(&self, wait_ms: u32) -> Result<RecipeRef, String>;
}

/// Runs `f` on the typed state. A state no one else holds (the
/// simulator's always) is stepped in place and its hashes forgotten; a
/// shared one (the checker's: the parent state holds it too) is stepped on
/// a copy, stored back only if it changed, so unchanged states stay shared.
fn step_on<S, T>(st: &mut AnyState, f: impl FnOnce(&mut S) -> T) -> T
where
    S: Clone + fmt::Debug + Eq + Hash + Send + Sync + Relabel + 'static,
{
    if let Some(own) = Arc::get_mut(&mut st.state) {
        let typed = own
            .state
            .as_any_mut()
            .downcast_mut::<S>()
            .expect("a recipe is handed only the states it made");
        let out = f(typed);
        own.hash.take();
        own.unlabelled.take();
        return out;
    }
    let mut typed: S = st.get::<S>().clone();
    let out = f(&mut typed);
    if typed != *st.get::<S>() {
        *st = AnyState::new(typed);
    }
    out
}

/// A recipe's lock hooks: its own if it is a lock, else a plain lock's
/// (no other application calls them).
trait LockHooks: Recipe {
    fn lock_hooks(&self) -> &dyn LockRecipe<Self::State> {
        match self.application() {
            Application::Lock(h) => h,
            Application::SharedLock(_)
            | Application::Semaphore(_)
            | Application::Election(_)
            | Application::Barrier(_)
            | Application::Queue(_) => &PlainLock,
        }
    }
}

impl<R: Recipe> LockHooks for R {}

impl<R: Recipe> DynRecipe for R {
    fn name(&self) -> &'static str {
        Recipe::name(self)
    }
    fn variant(&self) -> Option<&'static str> {
        Recipe::variant(self)
    }
    fn face(&self) -> Face {
        Recipe::face(self)
    }
    fn setup(&self) -> Setup {
        Recipe::setup(self)
    }
    fn acquire(&self, session: SessionId) -> (AnyState, Request) {
        let (s, req) = Recipe::acquire(self, session);
        (AnyState::new(s), req)
    }
    fn acquire_shared(&self, session: SessionId) -> (AnyState, Request) {
        let (s, req) = match Recipe::application(self) {
            Application::SharedLock(h) => h.acquire_shared(session),
            Application::Lock(_)
            | Application::Semaphore(_)
            | Application::Election(_)
            | Application::Barrier(_)
            | Application::Queue(_) => Recipe::acquire(self, session),
        };
        (AnyState::new(s), req)
    }
    fn on_reply(&self, session: SessionId, st: &mut AnyState, reply: &Reply) -> Step {
        step_on(st, |s: &mut R::State| {
            Recipe::on_reply(self, session, s, reply)
        })
    }
    fn on_event(&self, st: &mut AnyState, event: &WatchEvent) -> Step {
        step_on(st, |s: &mut R::State| Recipe::on_event(self, s, event))
    }
    fn on_lost_reply(&self, st: &mut AnyState, lost: &Request) -> Request {
        step_on(st, |s: &mut R::State| Recipe::on_lost_reply(self, s, lost))
    }
    fn enqueue(&self, session: SessionId, item: u64) -> Option<(AnyState, Request)> {
        match Recipe::application(self) {
            Application::Queue(h) => {
                let (s, req) = h.enqueue(session, item);
                Some((AnyState::new(s), req))
            }
            Application::Lock(_)
            | Application::SharedLock(_)
            | Application::Semaphore(_)
            | Application::Election(_)
            | Application::Barrier(_) => None,
        }
    }
    fn notes_events(&self) -> bool {
        Recipe::notes_events(self)
    }
    fn note_event(&self, st: &mut AnyState, event: &WatchEvent) {
        step_on(st, |s: &mut R::State| Recipe::note_event(self, s, event))
    }
    fn on_release_reply(&self, session: SessionId, st: &mut AnyState, reply: &Reply) -> Step {
        step_on(st, |s: &mut R::State| {
            Recipe::on_release_reply(self, session, s, reply)
        })
    }
    fn on_release_event(&self, st: &mut AnyState, event: &WatchEvent) -> Step {
        step_on(st, |s: &mut R::State| {
            Recipe::on_release_event(self, s, event)
        })
    }
    fn release(&self, session: SessionId, st: &AnyState) -> Option<Request> {
        Recipe::release(self, session, st.get::<R::State>())
    }
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Recipe::herd_closed_form(self, n, k)
    }
    fn app(&self) -> App {
        Recipe::application(self).app()
    }
    fn for_group(&self, n: u16) -> Option<RecipeRef> {
        match Recipe::application(self) {
            Application::Barrier(h) => Some(h.for_group(n)),
            Application::Lock(_)
            | Application::SharedLock(_)
            | Application::Semaphore(_)
            | Application::Election(_)
            | Application::Queue(_) => None,
        }
    }
    fn for_permits(&self, k: u16) -> Option<RecipeRef> {
        match Recipe::application(self) {
            Application::Semaphore(h) => Some(h.for_permits(k)),
            Application::Lock(_)
            | Application::SharedLock(_)
            | Application::Election(_)
            | Application::Barrier(_)
            | Application::Queue(_) => None,
        }
    }
    fn max_permits(&self) -> u16 {
        match Recipe::application(self) {
            Application::Semaphore(h) => h.max_permits(),
            Application::Lock(_)
            | Application::SharedLock(_)
            | Application::Election(_)
            | Application::Barrier(_)
            | Application::Queue(_) => u16::MAX,
        }
    }
    fn leader_seen(&self, st: &AnyState) -> Option<SessionId> {
        match Recipe::application(self) {
            Application::Election(h) => h.leader_seen(st.get::<R::State>()),
            Application::Lock(_)
            | Application::SharedLock(_)
            | Application::Semaphore(_)
            | Application::Barrier(_)
            | Application::Queue(_) => None,
        }
    }
    fn report_seen(&self, st: &AnyState) -> Option<(SessionId, u64)> {
        match Recipe::application(self) {
            Application::Election(h) => h.report_seen(st.get::<R::State>()),
            Application::Lock(_)
            | Application::SharedLock(_)
            | Application::Semaphore(_)
            | Application::Barrier(_)
            | Application::Queue(_) => None,
        }
    }
    fn observe(&self, session: SessionId) -> Option<(AnyState, Request)> {
        match Recipe::application(self) {
            Application::Election(h) => h.observe(session).map(|(s, req)| (AnyState::new(s), req)),
            Application::Lock(_)
            | Application::SharedLock(_)
            | Application::Semaphore(_)
            | Application::Barrier(_)
            | Application::Queue(_) => None,
        }
    }
    fn on_expired(&self, st: &mut AnyState) -> Step {
        step_on(st, |s: &mut R::State| Recipe::on_expired(self, s))
    }
    fn on_wake(&self, session: SessionId, st: &mut AnyState) -> Step {
        step_on(st, |s: &mut R::State| Recipe::on_wake(self, session, s))
    }
    fn longest_sleep(&self) -> Duration {
        Recipe::longest_sleep(self)
    }
    fn reentry(&self) -> Reentry {
        self.lock_hooks().reentry()
    }
    fn withdraws(&self) -> bool {
        self.lock_hooks().withdraws()
    }
    fn withdraw(&self, session: SessionId, st: &AnyState) -> Option<Request> {
        self.lock_hooks().withdraw(session, st.get::<R::State>())
    }
    fn kill_grace(&self) -> Option<Duration> {
        self.lock_hooks().kill_grace()
    }
    fn interruptible(&self) -> bool {
        self.lock_hooks().interruptible()
    }
    fn on_late_answer(&self, session: SessionId, reply: &Reply) -> LateAnswer {
        self.lock_hooks().on_late_answer(session, reply)
    }
    fn orphan_renewal(&self, session: SessionId) -> Option<Request> {
        self.lock_hooks().orphan_renewal(session)
    }
    fn resume(&self, session: SessionId, st: &mut AnyState) -> Resume {
        step_on(st, |s: &mut R::State| Recipe::resume(self, session, s))
    }
    fn closes_abandoned_session(&self) -> bool {
        Recipe::closes_abandoned_session(self)
    }
    fn key_lease(&self) -> Option<KeyLease> {
        Recipe::key_lease(self)
    }
    fn poll_cost(&self) -> Option<PollCost> {
        Recipe::poll_cost(self)
    }
    fn renewal(&self, session: SessionId, st: &AnyState) -> Option<Request> {
        Recipe::renewal(self, session, st.get::<R::State>())
    }
    fn validity(&self) -> Option<Duration> {
        Recipe::validity(self)
    }
    fn for_masters(&self, masters: u8) -> Option<RecipeRef> {
        Recipe::for_masters(self, masters)
    }
    fn key_timing(&self) -> Option<KeyTiming> {
        Recipe::key_timing(self)
    }
    fn with_key_timing(&self, timing: KeyTiming) -> Result<RecipeRef, String> {
        Recipe::with_key_timing(self, timing)
    }
    fn consul_session(&self) -> Option<SessionOpts> {
        Recipe::consul_session(self)
    }
    fn with_consul_session(&self, opts: SessionOpts) -> Result<RecipeRef, String> {
        Recipe::with_consul_session(self, opts)
    }
    fn consul_wait(&self) -> Option<u32> {
        Recipe::consul_wait(self)
    }
    fn checked_clients(&self) -> u8 {
        Recipe::checked_clients(self)
    }
    fn with_consul_wait(&self, wait_ms: u32) -> Result<RecipeRef, String> {
        Recipe::with_consul_wait(self, wait_ms)
    }
    fn on_validity_passed(&self, st: &mut AnyState) -> Step {
        step_on(st, |s: &mut R::State| Recipe::on_validity_passed(self, s))
    }
}

/// A recipe, shared by every client and engine that runs it. Two are equal
/// when they are the same recipe and variant.
#[derive(Clone)]
pub struct RecipeRef {
    recipe: Arc<dyn DynRecipe>,
    /// Asked on nearly every step: read here, not through the vtable.
    face: Face,
    app: App,
}

impl RecipeRef {
    pub fn new<R: Recipe>(recipe: R) -> Self {
        let recipe: Arc<dyn DynRecipe> = Arc::new(recipe);
        RecipeRef {
            face: recipe.face(),
            app: recipe.app(),
            recipe,
        }
    }

    /// The store face it runs on (the recipe's own answer, kept).
    pub fn face(&self) -> Face {
        self.face
    }

    /// What it is: a lock, an election, a barrier, a queue.
    pub fn app(&self) -> App {
        self.app
    }

    /// This recipe for a group of `n` clients: a barrier recipe made for
    /// that size, any other recipe as it is.
    pub fn in_group(&self, n: u16) -> RecipeRef {
        self.recipe.for_group(n).unwrap_or_else(|| self.clone())
    }

    /// This recipe with `k` permits: a semaphore recipe made for them, any
    /// other recipe as it is.
    pub fn with_permits(&self, k: u16) -> RecipeRef {
        self.recipe.for_permits(k).unwrap_or_else(|| self.clone())
    }

    /// This recipe on `masters` independent masters: a recipe that spreads
    /// its lock over several (Redlock) made for them; `None` for one that
    /// talks to one store.
    pub fn on_masters(&self, masters: u8) -> Option<RecipeRef> {
        self.recipe.for_masters(masters)
    }

    /// `name` or `name:variant`: how the CLI and scenario files name it.
    pub fn id(&self) -> String {
        match self.variant() {
            Some(v) => format!("{}:{v}", self.name()),
            None => self.name().to_string(),
        }
    }
}

impl std::ops::Deref for RecipeRef {
    type Target = dyn DynRecipe;
    fn deref(&self) -> &Self::Target {
        &*self.recipe
    }
}

impl PartialEq for RecipeRef {
    fn eq(&self, other: &Self) -> bool {
        (self.name(), self.variant()) == (other.name(), other.variant())
    }
}
impl Eq for RecipeRef {}

impl Hash for RecipeRef {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self.name(), self.variant()).hash(h);
    }
}

impl fmt::Debug for RecipeRef {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.id())
    }
}

/// The name, and the variant in parentheses when it is not the default:
/// `fair-predecessor (no-guid)`.
impl fmt::Display for RecipeRef {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())?;
        if let Some(v) = self.variant() {
            write!(f, " ({v})")?;
        }
        Ok(())
    }
}

/// Serialised as its id: `name` or `name:variant`.
impl serde::Serialize for RecipeRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.id())
    }
}
