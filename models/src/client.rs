//! The client application: rounds of think, acquire, hold (two writes to the
//! guarded resource, tagged with the fencing token), release.
//!
//! It wraps a recipe the way stateright's `RegisterActor` wraps a server: the
//! recipe decides the store requests, the client owns the session, the
//! resend-on-silence, the writes and the policy for a holder that stops
//! hearing from the store.

use crate::ids::{client_of, resource_id, store_id, ClientIdx, SessionId};
use crate::msg::{Msg, Reply, Request, Timer, ZkError};
use crate::recipe::{AnyState, App, Face, RecipeRef, Reentry, Resume, Step};
use serde::{Deserialize, Serialize};
use stateright::actor::{Actor, Id, Out};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::time::Duration;

/// What a holder does when it stops hearing from the store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Policy {
    /// Keeps believing it holds until told otherwise: drops the belief when
    /// told its session expired.
    #[default]
    Naive,
    /// Never drops the belief until it releases, even when told its session
    /// expired: kazoo's `Lock.is_acquired` after a lost session, a command
    /// run by `etcdctl lock NAME -- cmd` that outlives its lease.
    Oblivious,
    /// Gives up the lock it holds — stops writing and releases it — once it
    /// has not heard from the store for the deadline (Curator's SUSPENDED,
    /// about 2/3 of the session timeout: Curator's advice for a lock holder),
    /// but keeps its session and goes on when the store answers again.
    SuspendAware,
    /// Treats its session, and any lock it holds or is acquiring, as lost once
    /// the session may have expired by its own clock (no word from the store
    /// for the deadline), and starts over with a new session. Its clock runs
    /// while it is cut off, so it gives up before the store expires the
    /// session; it cannot run while the process is paused.
    LeaseAware,
}

impl FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "naive" => Ok(Policy::Naive),
            "oblivious" => Ok(Policy::Oblivious),
            "suspend-aware" => Ok(Policy::SuspendAware),
            "lease-aware" => Ok(Policy::LeaseAware),
            _ => Err(format!(
                "unknown policy '{s}' (known: naive, oblivious, suspend-aware, lease-aware)"
            )),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Policy::Naive => "naive",
            Policy::Oblivious => "oblivious",
            Policy::SuspendAware => "suspend-aware",
            Policy::LeaseAware => "lease-aware",
        })
    }
}

impl Policy {
    /// Whether the client keeps a clock of its own on the store's silence
    /// (the deadline timer).
    pub fn keeps_a_deadline(self) -> bool {
        match self {
            Policy::Naive | Policy::Oblivious => false,
            Policy::SuspendAware | Policy::LeaseAware => true,
        }
    }
}

/// Client timing. The model checker ignores durations (see `model`); the
/// simulator draws each timer uniformly from its range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientTiming {
    pub think: Range<Duration>,
    /// A queue's producers think this long between items instead (a
    /// producer's pace need not be its consumers').
    pub produce: Range<Duration>,
    pub hold: Range<Duration>,
    /// Resend a request whose reply has not come after this long.
    pub retry: Duration,
    /// Heartbeat interval (ZooKeeper ping, etcd keepalive at TTL/3).
    pub ping: Duration,
    /// Lease-aware policy: give up the lock after this long without word from
    /// the store (the session timeout minus a safety margin).
    pub deadline: Duration,
    /// A lock acquired with a timeout (Curator's `acquire(time, unit)`,
    /// kazoo's `acquire(timeout=…)`): give the acquisition up once it has
    /// taken this long, at the recipe's next wait. `None`: wait for ever.
    pub acquire_timeout: Option<Duration>,
}

impl Default for ClientTiming {
    fn default() -> Self {
        let ms = Duration::from_millis;
        ClientTiming {
            think: ms(10)..ms(50),
            produce: ms(10)..ms(50),
            hold: ms(5)..ms(20),
            retry: ms(1000),
            ping: ms(2000),
            deadline: ms(5000),
            acquire_timeout: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Client {
    pub recipe: RecipeRef,
    /// Rounds each client runs; a queue's producers enqueue this many items
    /// each, and its consumers take up to every item there is.
    pub rounds: u8,
    pub policy: Policy,
    pub timing: ClientTiming,
    /// A queue: the first `producers` clients produce, the others consume.
    /// 0 for every other application.
    pub producers: u16,
    /// A lock: how often a holder acquires again during each hold (nested,
    /// each released before the outer one), as its recipe's library
    /// answers a second acquire ([`Reentry`]). 0 for every other
    /// application.
    pub reentries: u8,
    /// A shared lock: the first `writers` clients write, the others read.
    /// 0 for every other application.
    pub writers: u16,
}

/// Writes per hold: at least two, so that a pause in the middle of a hold
/// shows in the resource's log.
pub const WRITES_PER_HOLD: u8 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Opening the session (ZooKeeper connect, etcd lease grant).
    Connecting,
    Thinking,
    Acquiring,
    /// Believes it holds the lock. `granted` is the header of the store
    /// message that decided it: where the acquisition falls in the store's
    /// order; `owned` is that message's ghost mark: whether the client owned
    /// the lock entry first in line when the store sent it.
    Holding {
        token: u64,
        granted: u64,
        owned: bool,
        sent: u8,
        acked: u8,
    },
    Releasing,
    Done,
}

/// The client library's view of its connection: ZooKeeper's connection
/// states as Curator and kazoo report them (etcd's Go client has no such
/// events; an etcd client passes through the same states, unreported).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Connection {
    /// Hearing from the store.
    #[default]
    Connected,
    /// SUSPENDED: nothing from the store for the read timeout (2/3 of the
    /// session timeout), and the connection dropped; the library is trying
    /// to reconnect. The session may still be alive. Left for `Connected`
    /// (RECONNECTED: the same session, watches re-registered) when the store
    /// answers again.
    Suspended,
    /// LOST: told the session expired (or given up on it); the library
    /// opens a new session.
    Lost,
}

impl Connection {
    /// The word a library's listener would print for entering this state:
    /// SUSPENDED, LOST, RECONNECTED.
    pub fn word(self) -> &'static str {
        match self {
            Connection::Connected => "RECONNECTED",
            Connection::Suspended => "SUSPENDED",
            Connection::Lost => "LOST",
        }
    }
}

impl fmt::Display for Connection {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Connection::Connected => "connected",
            Connection::Suspended => "suspended",
            Connection::Lost => "lost",
        })
    }
}

/// What survives a crash (the simulator restarts crashed clients; the model
/// checker's crashes are for good): a restarted client opens a new session,
/// goes on with the rounds it has left, and keeps numbering its acquisitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientStorage {
    pub incarnation: u16,
    pub rounds_done: u8,
    pub holds: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientState {
    pub session: SessionId,
    pub rounds_done: u8,
    pub phase: Phase,
    /// The recipe's state during an acquisition and the hold that follows;
    /// `None` between rounds.
    pub recipe: Option<AnyState>,
    /// The outstanding store request, kept to resend it.
    pub pending: Option<Request>,
    /// Bumped on each resend and new session; replies carry it back.
    pub epoch: u8,
    /// Ghost: acquisitions so far. Names the acquisition a write belongs to.
    pub holds: u32,
    /// A recipe that goes on in its next session (see
    /// [`crate::recipe::Recipe::resume`]): its state and the request it
    /// sends once the session is open.
    /// Boxed: rarely there, and a client's state is copied on every step.
    pub resume: Option<Box<(AnyState, Request)>>,
    /// What the client library says of its connection.
    pub connection: Connection,
    /// Ghost, a barrier member that finished its leave: the mark of the
    /// store message it left on (every member had left). `None` before.
    pub left: Option<bool>,
    /// The acquisition's clocks beyond the client's own.
    pub clocks: Clocks,
    /// A holder's re-entries in its current hold.
    pub nesting: Nesting,
}

/// A holder's re-entries in its current hold: how many it made, how many
/// are still open (not released), what it awaits from the store for one
/// (a library that acquires again, or releases, through the store), and
/// whether it blocked on itself. One byte (made and open are at most
/// [`crate::model::MAX_REENTRIES`]), hashed only when some is set, so
/// that states of runs without re-entries hash as they did before.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Nesting(u8);

impl Nesting {
    // Bits: made 0–1, open 2–3, asking 4–5, blocked 6.
    const BLOCKED: u8 = 1 << 6;

    pub fn made(self) -> u8 {
        self.0 & 3
    }

    pub fn open(self) -> u8 {
        self.0 >> 2 & 3
    }

    pub fn asking(self) -> Asking {
        match self.0 >> 4 & 3 {
            0 => Asking::Nothing,
            1 => Asking::Again,
            _ => Asking::Release,
        }
    }

    pub fn blocked(self) -> bool {
        self.0 & Nesting::BLOCKED != 0
    }

    fn set_made(&mut self, made: u8) {
        self.0 = self.0 & !3 | made.min(3);
    }

    fn set_open(&mut self, open: u8) {
        self.0 = self.0 & !(3 << 2) | open.min(3) << 2;
    }

    fn set_asking(&mut self, asking: Asking) {
        let bits = match asking {
            Asking::Nothing => 0,
            Asking::Again => 1,
            Asking::Release => 2,
        };
        self.0 = self.0 & !(3 << 4) | bits << 4;
    }

    fn block(&mut self) {
        self.0 |= Nesting::BLOCKED;
    }
}

impl fmt::Debug for Nesting {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("Nesting")
            .field("made", &self.made())
            .field("open", &self.open())
            .field("asking", &self.asking())
            .field("blocked", &self.blocked())
            .finish()
    }
}

/// What a re-entering holder awaits from the store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Asking {
    #[default]
    Nothing,
    /// The second acquire (etcd's `Lock` again).
    Again,
    /// The inner release (etcd's `Unlock`: a delete of the key).
    Release,
}

impl std::hash::Hash for Nesting {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        if self.0 != 0 {
            h.write_u8(self.0);
        }
    }
}

/// An acquisition's clocks beyond the client's own: a sleep the recipe is
/// in ([`Step::Sleep`]), and whether the acquire timeout passed while a
/// request was outstanding (the acquisition is then given up at the
/// recipe's next wait: Curator and kazoo look at the clock only when they
/// wait). One byte of flags, as a client's state is copied on every step;
/// hashed only when some is set, so that a state of a run with neither
/// hashes as it did before they existed: fingerprints decide which
/// representative symmetry keeps, and so which counterexample is found.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Clocks(u8);

impl Clocks {
    const SLEEPING: u8 = 1;
    const TIMED_OUT: u8 = 2;

    pub fn sleeping(self) -> bool {
        self.0 & Clocks::SLEEPING != 0
    }

    pub fn timed_out(self) -> bool {
        self.0 & Clocks::TIMED_OUT != 0
    }

    fn set(&mut self, flag: u8, on: bool) {
        self.0 = if on { self.0 | flag } else { self.0 & !flag };
    }
}

impl fmt::Debug for Clocks {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("Clocks")
            .field("sleeping", &self.sleeping())
            .field("timed_out", &self.timed_out())
            .finish()
    }
}

impl std::hash::Hash for Clocks {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        if self.0 != 0 {
            h.write_u8(self.0);
        }
    }
}

/// What the monitors compare before and after a client's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marks {
    pub holding: bool,
    /// Re-entries made in the current hold.
    pub reentered: u8,
    pub left: Option<bool>,
    /// Waiting with nothing outstanding, or done: idle.
    pub idle: bool,
}

impl ClientState {
    /// A client that has not started: about to open its first session.
    pub fn new(session: SessionId) -> Self {
        ClientState {
            session,
            rounds_done: 0,
            phase: Phase::Connecting,
            recipe: None,
            pending: None,
            epoch: 0,
            holds: 0,
            resume: None,
            connection: Connection::Connected,
            left: None,
            clocks: Clocks::default(),
            nesting: Nesting::default(),
        }
    }

    /// Waiting for a watch event, with nothing outstanding (a queue's
    /// consumer on an empty queue).
    pub fn is_waiting(&self) -> bool {
        matches!(self.phase, Phase::Acquiring | Phase::Releasing) && self.pending.is_none()
    }

    /// What the monitors compare across a step.
    pub fn marks(&self) -> Marks {
        Marks {
            holding: self.holds_lock(),
            reentered: self.nesting.made(),
            left: self.left,
            idle: self.is_waiting() || self.phase == Phase::Done,
        }
    }

    pub fn holds_lock(&self) -> bool {
        matches!(self.phase, Phase::Holding { .. })
    }

    /// The current hold's token, header and ghost mark; `None` when not
    /// holding.
    fn hold(&self) -> Option<(u64, u64, bool)> {
        match self.phase {
            Phase::Holding {
                token,
                granted,
                owned,
                ..
            } => Some((token, granted, owned)),
            Phase::Connecting
            | Phase::Thinking
            | Phase::Acquiring
            | Phase::Releasing
            | Phase::Done => None,
        }
    }

    pub fn token(&self) -> Option<u64> {
        self.hold().map(|(token, _, _)| token)
    }

    /// Whether the message the current hold was decided on showed this
    /// client owning the lock entry first in line (false when not holding).
    pub fn owned(&self) -> bool {
        self.hold().is_some_and(|(_, _, owned)| owned)
    }

    /// The store header at which the current hold was decided.
    pub fn granted(&self) -> Option<u64> {
        self.hold().map(|(_, granted, _)| granted)
    }
}

impl Client {
    /// Whether `client` is one of a queue's producers.
    pub fn produces(&self, client: ClientIdx) -> bool {
        self.recipe.app() == App::Queue && client < self.producers
    }

    /// Whether `client` is one of a queue's consumers, which take items for
    /// as long as there are any: they count no rounds and never finish.
    pub fn consumes(&self, client: ClientIdx) -> bool {
        self.recipe.app() == App::Queue && !self.produces(client)
    }

    /// Whether `client` is one of a shared lock's readers.
    pub fn reads(&self, client: ClientIdx) -> bool {
        self.recipe.app() == App::SharedLock && client >= self.writers
    }

    /// Whether `client`'s holds write to the guarded resource: a lock
    /// holder's, a leader's and a shared lock's writer's do; a reader's, a
    /// lease holder's, a barrier member's and a queue client's do not.
    pub fn writes(&self, client: ClientIdx) -> bool {
        self.recipe.app().holders_write() && !self.reads(client)
    }

    /// Whether the client has run all its rounds.
    fn rounds_over(&self, st: &ClientState) -> bool {
        !self.consumes(st.session.client) && st.rounds_done >= self.rounds
    }

    /// A round is over (a consumer counts none).
    fn count_round(&self, st: &mut ClientState) {
        if !self.consumes(st.session.client) {
            st.rounds_done = st.rounds_done.saturating_add(1);
        }
    }

    /// The item a producer enqueues in its round `round` (0-based): items
    /// are numbered from 1, producer by producer.
    pub fn item(&self, producer: ClientIdx, round: u8) -> u64 {
        u64::from(producer) * u64::from(self.rounds) + u64::from(round) + 1
    }

    fn open_session(&self) -> Request {
        match self.recipe.face() {
            Face::ZooKeeper => Request::Connect,
            Face::Etcd => Request::LeaseGrant,
        }
    }

    fn send_request(&self, st: &mut ClientState, req: Request, o: &mut Out<Self>) {
        o.send(
            store_id(),
            Msg::Request {
                session: st.session,
                epoch: st.epoch,
                release: st.phase == Phase::Releasing || st.nesting.asking() == Asking::Release,
                req: req.clone(),
            },
        );
        st.pending = Some(req);
        o.set_timer(Timer::Retry, exactly(self.timing.retry));
    }

    fn think(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if self.rounds_over(st) {
            st.phase = Phase::Done;
            o.cancel_timer(Timer::Ping);
            o.cancel_timer(Timer::Deadline);
        } else {
            st.phase = Phase::Thinking;
            let think = if self.produces(st.session.client) {
                &self.timing.produce
            } else {
                &self.timing.think
            };
            o.set_timer(Timer::Think, think.clone());
        }
    }

    fn write(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if let Phase::Holding { token, sent, .. } = &mut st.phase {
            *sent += 1;
            o.send(
                resource_id(),
                Msg::Write {
                    token: *token,
                    hold: st.holds,
                },
            );
        }
    }

    fn release(&self, st: &mut ClientState, o: &mut Out<Self>) {
        o.cancel_timer(Timer::Hold);
        // A re-entering holder may have a request out (a second acquire,
        // an inner release): its reply must not pass for the release's.
        if st.pending.take().is_some() {
            st.epoch = st.epoch.wrapping_add(1);
        }
        self.stop_sleeping(st, o);
        st.phase = Phase::Releasing;
        st.nesting = Nesting::default();
        let release = st
            .recipe
            .as_ref()
            .and_then(|r| self.recipe.release(st.session, r));
        self.leave(st, release, o);
    }

    /// Releasing: send the request that gives up the recipe's entry, or
    /// end the round at once if it has none.
    fn leave(&self, st: &mut ClientState, req: Option<Request>, o: &mut Out<Self>) {
        match req {
            Some(req) => self.send_request(st, req, o),
            None => self.finish_round(st, o),
        }
    }

    /// The holder acquires again, as its library answers a second acquire.
    fn reenter(&self, st: &mut ClientState, o: &mut Out<Self>) {
        st.nesting.set_made(st.nesting.made() + 1);
        match self.recipe.reentry() {
            Reentry::Counted => {
                st.nesting.set_open(st.nesting.open() + 1);
                o.set_timer(Timer::Hold, self.timing.hold.clone());
            }
            // Nothing more happens: no timer, no request, no release.
            Reentry::Blocks => st.nesting.block(),
            Reentry::Again => {
                st.nesting.set_open(st.nesting.open() + 1);
                st.nesting.set_asking(Asking::Again);
                let (recipe, req) = self.recipe.acquire(st.session);
                st.recipe = Some(recipe);
                self.send_request(st, req, o);
            }
            // Refused by the configuration; a write keeps the hold going.
            Reentry::Unsupported => self.write(st, o),
        }
    }

    /// The hold's writes so far are done: release the innermost open
    /// re-entry, or the lock.
    fn end_of_writes(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if st.nesting.open() == 0 {
            return self.release(st, o);
        }
        let inner = match self.recipe.reentry() {
            Reentry::Again => st
                .recipe
                .as_ref()
                .and_then(|r| self.recipe.release(st.session, r)),
            Reentry::Counted | Reentry::Blocks | Reentry::Unsupported => None,
        };
        match inner {
            Some(req) => {
                st.nesting.set_asking(Asking::Release);
                self.send_request(st, req, o);
            }
            None => self.inner_released(st, o),
        }
    }

    /// An inner release is over: the outer hold goes on with one more write.
    fn inner_released(&self, st: &mut ClientState, o: &mut Out<Self>) {
        st.nesting.set_open(st.nesting.open() - 1);
        st.nesting.set_asking(Asking::Nothing);
        if let Phase::Holding { sent, acked, .. } = &mut st.phase {
            *sent = WRITES_PER_HOLD - 1;
            *acked = WRITES_PER_HOLD - 1;
        }
        o.set_timer(Timer::Hold, self.timing.hold.clone());
    }

    /// A reply to what a re-entering holder asked the store.
    fn on_nested_reply(&self, st: &mut ClientState, reply: &Reply, o: &mut Out<Self>) {
        match st.nesting.asking() {
            Asking::Again => {
                let Some(recipe) = st.recipe.as_mut() else {
                    return;
                };
                match self.recipe.on_reply(st.session, recipe, reply) {
                    // Held again: the hold goes on (its token and its
                    // acquisition are the outer one's).
                    Step::Acquired { .. } => {
                        st.nesting.set_asking(Asking::Nothing);
                        o.set_timer(Timer::Hold, self.timing.hold.clone());
                    }
                    Step::Send(req) => self.send_request(st, req, o),
                    Step::SessionLost => self.session_lost(st, o),
                    // Waiting behind someone while believing it holds: it
                    // stays so (a progress violation shows it).
                    Step::Wait
                    | Step::Sleep { .. }
                    | Step::Unexpected
                    | Step::Released
                    | Step::GaveUp => {}
                }
            }
            Asking::Release => self.inner_released(st, o),
            Asking::Nothing => {}
        }
    }

    /// Starts an acquisition's clock, where the application gives up after
    /// a timeout.
    fn start_acquisition_clock(&self, o: &mut Out<Self>) {
        if let Some(timeout) = self.timing.acquire_timeout {
            o.set_timer(Timer::GiveUp, exactly(timeout));
        }
    }

    /// The acquisition is over (held, given up or lost): its timeout, and
    /// a sleep the recipe was in, no longer run.
    fn stop_acquisition_clocks(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if self.timing.acquire_timeout.is_some() {
            o.cancel_timer(Timer::GiveUp);
        }
        self.stop_sleeping(st, o);
        st.clocks.set(Clocks::TIMED_OUT, false);
    }

    fn stop_sleeping(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if st.clocks.sleeping() {
            st.clocks.set(Clocks::SLEEPING, false);
            o.cancel_timer(Timer::Wake);
        }
    }

    /// The acquisition's timeout is up and the recipe waits: take its entry
    /// out of line (the recipe's clean-up request, sent as a release) and
    /// end the round without holding.
    fn give_up(&self, st: &mut ClientState, o: &mut Out<Self>) {
        self.stop_acquisition_clocks(st, o);
        st.phase = Phase::Releasing;
        let withdraw = st
            .recipe
            .as_ref()
            .and_then(|r| self.recipe.withdraw(st.session, r));
        self.leave(st, withdraw, o);
    }

    fn finish_round(&self, st: &mut ClientState, o: &mut Out<Self>) {
        self.stop_sleeping(st, o);
        self.count_round(st);
        st.recipe = None;
        self.persist(st, o);
        self.think(st, o);
    }

    fn persist(&self, st: &ClientState, o: &mut Out<Self>) {
        o.save(ClientStorage {
            incarnation: st.session.incarnation,
            rounds_done: st.rounds_done,
            holds: st.holds,
        });
    }

    /// The session is gone (told by the store, or given up by the lease-aware
    /// policy): whatever it held is lost. Open a new session and start the
    /// round again.
    fn session_lost(&self, st: &mut ClientState, o: &mut Out<Self>) {
        st.connection = Connection::Lost;
        // A member that passed its barrier, or a consumer that took its
        // item, has done its round: it does not enter (or take) again.
        if matches!(self.recipe.app(), App::Barrier | App::Queue) && st.holds_lock() {
            self.count_round(st);
            st.recipe = None;
        }
        for t in [Timer::Hold, Timer::Deadline, Timer::Think, Timer::Retry] {
            o.cancel_timer(t);
        }
        self.stop_acquisition_clocks(st, o);
        st.nesting = Nesting::default();
        let next = st.session.next();
        // Only an acquisition or a hold goes on in the next session: a
        // round that was releasing is over (a closed latch re-lists nothing).
        let resumable = matches!(st.phase, Phase::Acquiring | Phase::Holding { .. });
        if let Some(mut recipe) = st.recipe.take().filter(|_| resumable) {
            if let Resume::Continue(req) = self.recipe.resume(next, &mut recipe) {
                st.resume = Some(Box::new((recipe, req)));
            }
        }
        st.pending = None;
        // Let go of the old session: if it is still alive (the lease-aware
        // policy gave up on it), its lock node must not outlive our interest
        // — unless the library replaces its handle without closing it.
        if self.recipe.closes_abandoned_session() {
            o.send(
                store_id(),
                Msg::Close {
                    session: st.session,
                },
            );
        }
        if self.rounds_over(st) {
            st.resume = None;
            st.phase = Phase::Done;
            o.cancel_timer(Timer::Ping);
            // No session any more: the abandoned one is silent from now on,
            // so the store expires it even if the close never arrives.
            st.session = next;
            return;
        }
        // The new session's deadline starts when it is granted.
        st.session = next;
        st.epoch = st.epoch.wrapping_add(1);
        st.phase = Phase::Connecting;
        self.persist(st, o);
        let req = self.open_session();
        self.send_request(st, req, o);
    }

    /// The connection dropped: nothing came from the store for the read
    /// timeout (2/3 of the session timeout) — SUSPENDED. What the
    /// application does then is its policy's: a suspend-aware holder gives
    /// the lock up and keeps its session; anyone else waits for the store.
    pub fn on_disconnect(&self, state: &mut Cow<ClientState>, o: &mut Out<Self>) {
        if state.connection != Connection::Connected || state.phase == Phase::Done {
            return;
        }
        let st = state.to_mut();
        st.connection = Connection::Suspended;
        // Curator tells the application; etcd's client does not, and a
        // suspend-aware etcd application goes by its own deadline.
        if self.recipe.face() == Face::ZooKeeper {
            self.suspended(st, o);
        }
    }

    /// What the policy does on SUSPENDED: a suspend-aware holder gives the
    /// lock up and keeps its session.
    fn suspended(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if self.policy == Policy::SuspendAware && st.holds_lock() {
            self.release(st, o);
        }
    }

    /// The connection to the store was made anew after a partition or a
    /// pause long enough to drop it (past the read timeout, so the client was
    /// SUSPENDED by then if it had not noticed yet). The reply to the
    /// outstanding request, if any, went with the old connection
    /// (ConnectionLoss), so the request goes again. If the session lives
    /// the client is RECONNECTED (same session, watches re-registered);
    /// if not, the store's expiry notice comes next (LOST).
    pub fn on_reconnect(
        &self,
        state: &mut Cow<ClientState>,
        session_alive: bool,
        o: &mut Out<Self>,
    ) {
        self.on_disconnect(state, o);
        if session_alive && state.connection == Connection::Suspended {
            state.to_mut().connection = Connection::Connected;
        }
        // A ZooKeeper client whose session is gone is told so in the
        // handshake and sends nothing more on it; an etcd client learns of
        // its lease only from an answer, so it goes on asking. A client
        // opening a new session asks again.
        let told = !session_alive
            && self.recipe.face() == Face::ZooKeeper
            && state.phase != Phase::Connecting;
        if state.pending.is_some() && !told {
            self.resend(state.to_mut(), o);
        }
    }

    /// The outstanding request's reply is not coming: send what the recipe
    /// says instead (by default the same request), under a new epoch so a
    /// late reply to the old one is ignored.
    fn resend(&self, st: &mut ClientState, o: &mut Out<Self>) {
        let Some(lost) = st.pending.clone() else {
            return;
        };
        st.epoch = st.epoch.wrapping_add(1);
        let req = match (st.phase, st.recipe.as_mut()) {
            (Phase::Acquiring, Some(recipe)) => self.recipe.on_lost_reply(recipe, &lost),
            _ => lost,
        };
        self.send_request(st, req, o);
    }

    /// Carries out the recipe's step, taken on a store message with
    /// `header` and ghost mark `owns_first`.
    fn apply(
        &self,
        st: &mut ClientState,
        step: Step,
        (header, owns_first): (u64, bool),
        o: &mut Out<Self>,
    ) {
        match step {
            Step::Send(req) => {
                self.stop_sleeping(st, o);
                self.send_request(st, req, o)
            }
            // The timeout passed while a request was out: given up now.
            Step::Wait | Step::Sleep { .. }
                if st.phase == Phase::Acquiring && st.clocks.timed_out() =>
            {
                self.give_up(st, o)
            }
            Step::Sleep { after } => {
                st.clocks.set(Clocks::SLEEPING, true);
                o.set_timer(Timer::Wake, exactly(after));
            }
            // "Not mine": an armed sleep runs on.
            Step::Wait | Step::Unexpected => {}
            // Only a release ends with `Released`: while acquiring it is a
            // step the recipe should not take, and the client stops there.
            Step::Released if st.phase == Phase::Releasing => {
                if self.recipe.app() == App::Barrier {
                    st.left = Some(owns_first);
                }
                self.finish_round(st, o)
            }
            Step::Released => {}
            // Not to be had: the round is over without a hold.
            Step::GaveUp if st.phase == Phase::Acquiring => {
                self.stop_acquisition_clocks(st, o);
                self.finish_round(st, o)
            }
            Step::GaveUp => {}
            Step::Acquired { .. } if st.phase == Phase::Releasing => {}
            Step::Acquired { token } => {
                self.stop_acquisition_clocks(st, o);
                st.holds += 1;
                self.persist(st, o);
                st.phase = Phase::Holding {
                    token,
                    granted: header,
                    owned: owns_first,
                    sent: 0,
                    acked: 0,
                };
                let me = st.session.client;
                if self.produces(me) {
                    // An item enqueued: the producer's round is over.
                    self.release(st, o)
                } else if self.writes(me) {
                    self.write(st, o)
                } else {
                    // Past the barrier, an item taken, a read lock or a
                    // lease held: the work it guards (processing the item,
                    // reading), then on.
                    o.set_timer(Timer::Hold, self.timing.hold.clone())
                }
            }
            Step::SessionLost => {
                if st.phase == Phase::Releasing {
                    self.count_round(st);
                }
                self.session_lost(st, o)
            }
        }
    }

    fn on_reply(
        &self,
        st: &mut ClientState,
        evidence: (u64, bool),
        reply: Reply,
        o: &mut Out<Self>,
    ) {
        let expired = matches!(
            reply,
            Reply::Error(ZkError::SessionExpired) | Reply::LeaseNotFound
        );
        match st.phase {
            Phase::Connecting if expired => self.session_lost(st, o),
            Phase::Connecting => {
                st.connection = Connection::Connected;
                o.set_timer(Timer::Ping, exactly(self.timing.ping));
                if self.policy.keeps_a_deadline() {
                    o.set_timer(Timer::Deadline, exactly(self.timing.deadline));
                }
                match st.resume.take().map(|r| *r) {
                    Some((recipe, req)) => {
                        st.recipe = Some(recipe);
                        st.phase = Phase::Acquiring;
                        self.send_request(st, req, o);
                    }
                    None => self.think(st, o),
                }
            }
            Phase::Acquiring if expired => self.session_lost(st, o),
            Phase::Acquiring => {
                let Some(recipe) = st.recipe.as_mut() else {
                    return;
                };
                let step = self.recipe.on_reply(st.session, recipe, &reply);
                self.apply(st, step, evidence, o);
            }
            Phase::Releasing => {
                // An expired session ends the release (what it held went
                // with the session) and is renewed; any other answer goes to
                // the recipe, whose release is by default over whatever it
                // was (deleted, already gone).
                if expired {
                    self.count_round(st);
                    self.session_lost(st, o);
                    return;
                }
                let Some(recipe) = st.recipe.as_mut() else {
                    return self.finish_round(st, o);
                };
                let step = self.recipe.on_release_reply(st.session, recipe, &reply);
                self.apply(st, step, evidence, o);
            }
            Phase::Holding { .. } if expired && st.nesting.asking() != Asking::Nothing => {
                self.session_lost(st, o)
            }
            Phase::Holding { .. } => self.on_nested_reply(st, &reply, o),
            Phase::Thinking | Phase::Done => {}
        }
    }
}

fn exactly(d: Duration) -> Range<Duration> {
    d..d.saturating_add(Duration::from_nanos(1))
}

impl Actor for Client {
    type Msg = Msg;
    type Timer = Timer;
    type State = ClientState;
    type Storage = ClientStorage;
    type Random = ();

    fn on_start(&self, id: Id, storage: &Option<ClientStorage>, o: &mut Out<Self>) -> ClientState {
        let me = client_of(id).expect("client actors have client ids");
        let mut st = match storage {
            None => ClientState::new(SessionId::first(me)),
            Some(saved) => ClientState {
                rounds_done: saved.rounds_done,
                holds: saved.holds,
                ..ClientState::new(SessionId {
                    client: me,
                    incarnation: saved.incarnation.wrapping_add(1),
                })
            },
        };
        // Saved at once, so a restarted process never reuses this session.
        self.persist(&st, o);
        if self.rounds_over(&st) {
            st.phase = Phase::Done;
            return st;
        }
        let req = self.open_session();
        self.send_request(&mut st, req, o);
        st
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<ClientState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        let in_session = !matches!(state.phase, Phase::Connecting | Phase::Done);
        // Evidence that the session was renewed a moment ago: an answered
        // heartbeat; on ZooKeeper any reply or event too, since every request
        // renews a ZooKeeper session. An etcd lease is renewed by keepalives
        // alone, so other replies prove nothing about its expiry.
        // A suspend-aware client's clock is the connection's (SUSPENDED,
        // RECONNECTED): any message from the store restarts it.
        let renewed = match msg {
            Msg::Pong { .. } => true,
            Msg::Reply { .. } | Msg::Notify { .. } => {
                self.recipe.face() == Face::ZooKeeper || self.policy == Policy::SuspendAware
            }
            // An expiry notice renews nothing; the rest never come from
            // the store.
            Msg::Expired { .. }
            | Msg::Request { .. }
            | Msg::Close { .. }
            | Msg::Ping { .. }
            | Msg::Write { .. }
            | Msg::WriteAck { .. } => false,
        };
        if src == store_id() && self.policy.keeps_a_deadline() && in_session && renewed {
            o.set_timer(Timer::Deadline, exactly(self.timing.deadline));
        }
        // The store answers a suspended client: RECONNECTED (its expiry
        // notice instead makes it LOST, below).
        if src == store_id()
            && state.connection == Connection::Suspended
            && !matches!(msg, Msg::Expired { .. })
        {
            state.to_mut().connection = Connection::Connected;
        }
        match msg {
            Msg::Reply {
                epoch,
                header,
                owns_first,
                reply,
            } => {
                if epoch != state.epoch || state.pending.is_none() {
                    return; // a reply to a request given up on
                }
                let st = state.to_mut();
                st.pending = None;
                o.cancel_timer(Timer::Retry);
                self.on_reply(st, (header, owns_first), reply, o);
            }
            Msg::Notify {
                header,
                owns_first,
                event,
            } => {
                let waiting = matches!(state.phase, Phase::Acquiring | Phase::Releasing);
                if waiting && state.pending.is_some() && self.recipe.notes_events() {
                    if let Some(recipe) = state.to_mut().recipe.as_mut() {
                        self.recipe.note_event(recipe, &event);
                    }
                } else if waiting && state.pending.is_none() {
                    let st = state.to_mut();
                    let Some(recipe) = st.recipe.as_mut() else {
                        return;
                    };
                    let step = if st.phase == Phase::Releasing {
                        self.recipe.on_release_event(recipe, &event)
                    } else {
                        self.recipe.on_event(recipe, &event)
                    };
                    self.apply(st, step, (header, owns_first), o);
                }
            }
            Msg::Expired { session } => {
                if session == state.session && state.phase == Phase::Acquiring {
                    let st = state.to_mut();
                    let Some(recipe) = st.recipe.as_mut() else {
                        return;
                    };
                    let step = self.recipe.on_expired(recipe);
                    self.apply(st, step, (0, false), o);
                } else if self.policy == Policy::Oblivious && state.holds_lock() {
                    // The library knows (LOST); the application goes on as
                    // the holder, and its release will find the session gone.
                    if session == state.session {
                        state.to_mut().connection = Connection::Lost;
                    }
                } else if session == state.session && state.phase != Phase::Done {
                    let st = state.to_mut();
                    if st.phase == Phase::Releasing {
                        self.count_round(st);
                    }
                    self.session_lost(st, o);
                }
            }
            Msg::WriteAck { hold, accepted } => {
                let Phase::Holding { sent, acked, .. } = state.phase else {
                    return;
                };
                if hold != state.holds {
                    return;
                }
                let st = state.to_mut();
                if !accepted {
                    // Fenced off: someone with a newer token holds. Stop writing.
                    self.release(st, o);
                    return;
                }
                let acked = acked + 1;
                if let Phase::Holding { acked: a, .. } = &mut st.phase {
                    *a = acked;
                }
                if acked >= WRITES_PER_HOLD {
                    self.end_of_writes(st, o);
                } else if acked == sent {
                    o.set_timer(Timer::Hold, self.timing.hold.clone());
                }
            }
            Msg::Pong { .. }
            | Msg::Request { .. }
            | Msg::Ping { .. }
            | Msg::Close { .. }
            | Msg::Write { .. } => {}
        }
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<ClientState>, timer: &Timer, o: &mut Out<Self>) {
        match timer {
            Timer::Think if state.phase == Phase::Thinking => {
                let st = state.to_mut();
                let me = st.session.client;
                let start = if self.produces(me) {
                    let item = self.item(me, st.rounds_done);
                    self.recipe.enqueue(st.session, item)
                } else if self.reads(me) {
                    Some(self.recipe.acquire_shared(st.session))
                } else {
                    Some(self.recipe.acquire(st.session))
                };
                st.phase = Phase::Acquiring;
                // A queue recipe that cannot enqueue stops the producer
                // here, visibly (its round never ends).
                if let Some((recipe_state, req)) = start {
                    st.recipe = Some(recipe_state);
                    self.send_request(st, req, o);
                    self.start_acquisition_clock(o);
                }
            }
            // The recipe's sleep is over: its next step.
            Timer::Wake if state.clocks.sleeping() => {
                let st = state.to_mut();
                st.clocks.set(Clocks::SLEEPING, false);
                let Some(recipe) = st.recipe.as_mut() else {
                    return;
                };
                let step = self.recipe.on_wake(st.session, recipe);
                self.apply(st, step, (0, false), o);
            }
            // The acquisition took its time: given up now if the recipe
            // waits, else at its next wait.
            Timer::GiveUp if state.phase == Phase::Acquiring => {
                let st = state.to_mut();
                if st.pending.is_none() {
                    self.give_up(st, o);
                } else {
                    st.clocks.set(Clocks::TIMED_OUT, true);
                }
            }
            Timer::Hold if state.holds_lock() => {
                let me = state.session.client;
                if self.recipe.app() == App::Lock && state.nesting.made() < self.reentries {
                    self.reenter(state.to_mut(), o)
                } else if self.writes(me) {
                    self.write(state.to_mut(), o)
                } else {
                    self.release(state.to_mut(), o)
                }
            }
            Timer::Retry if state.pending.is_some() => self.resend(state.to_mut(), o),
            Timer::Ping if state.phase != Phase::Done => {
                o.send(
                    store_id(),
                    Msg::Ping {
                        session: state.session,
                    },
                );
                o.set_timer(Timer::Ping, exactly(self.timing.ping));
            }
            Timer::Deadline if !matches!(state.phase, Phase::Connecting | Phase::Done) => {
                match self.policy {
                    // SUSPENDED: a holder gives the lock up and keeps the
                    // session; anyone else waits for the store to answer.
                    // The connection is gone with whatever reply was on its
                    // way (ConnectionLoss): the request goes again once the
                    // store answers.
                    Policy::SuspendAware => {
                        let pending = state.pending.is_some() && !state.holds_lock();
                        self.on_disconnect(state, o);
                        // Its own clock: the etcd application gives up here.
                        self.suspended(state.to_mut(), o);
                        if pending {
                            self.resend(state.to_mut(), o);
                        }
                    }
                    Policy::LeaseAware | Policy::Naive | Policy::Oblivious => {
                        let st = state.to_mut();
                        if st.phase == Phase::Releasing {
                            self.count_round(st);
                        }
                        self.session_lost(st, o);
                    }
                }
            }
            // A timer whose moment has passed: the phase it was set for is
            // over (the think time of a crashed round, a hold released, a
            // retry answered, a client done).
            Timer::Think
            | Timer::Hold
            | Timer::Retry
            | Timer::Ping
            | Timer::Deadline
            | Timer::Wake
            | Timer::GiveUp => {}
            // The store's timer: never set on a client.
            Timer::Expiry(_) => {}
        }
    }

    fn name(&self) -> String {
        "client".into()
    }
}
