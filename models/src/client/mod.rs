//! The client: one machine under every application — rounds of think,
//! acquire, hold, release; the session (opened, renewed by heartbeats,
//! lost and opened anew), the outstanding request and its resends, the
//! library's connection state and the application's policy for a holder
//! that stops hearing from the store.
//!
//! It wraps a recipe the way stateright's `RegisterActor` wraps a server: the
//! recipe decides the store requests, the client owns the rest. What
//! differs between applications — what each client's role is, what a hold
//! does, whether a lost hold ends the round, a lock holder's re-entries, a
//! producer's items — is asked of the application ([`crate::apps`]).

mod policy;
mod state;

pub use crate::apps::lock::{Asking, Nesting};
pub use policy::{Connection, Policy};
pub use state::{ClientState, ClientStorage, Clocks, Marks, Phase};

use crate::apps::{Hold, LateAnswer, Role, Roles, Spec};
use crate::ids::{client_of, resource_id, store_id, ClientIdx, SessionId};
use crate::msg::{ConsulCmd, ConsulReply, Msg, Reply, Request, Timer, ZkError};
use crate::recipe::{Face, RecipeRef, Resume, Step};
use stateright::actor::{Actor, Id, Out};
use std::borrow::Cow;
use std::ops::Range;
use std::time::Duration;

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
    /// answers a second acquire ([`crate::apps::Reentry`]). 0 for every
    /// other application.
    pub reentries: u8,
    /// A shared lock: the first `writers` clients write, the others read.
    /// 0 for every other application.
    pub writers: u16,
    /// An election: the first `observers` clients observe (etcd's
    /// `Observe`) rather than campaign. 0 for every other application.
    pub observers: u16,
}

/// Writes per hold: at least two, so that a pause in the middle of a hold
/// shows in the resource's log.
pub const WRITES_PER_HOLD: u8 = 2;

impl Client {
    /// The application's facts.
    fn spec(&self) -> &'static Spec {
        self.recipe.app().spec()
    }

    /// How the run's clients divide among the application's roles.
    pub fn roles(&self) -> Roles {
        Roles {
            producers: self.producers,
            writers: self.writers,
            observers: self.observers,
        }
    }

    /// What `client` does in its application.
    pub fn role(&self, client: ClientIdx) -> Role {
        (self.spec().role)(&self.roles(), client)
    }

    /// Whether `client` is one of a queue's producers.
    pub fn produces(&self, client: ClientIdx) -> bool {
        self.role(client) == Role::Producer
    }

    /// Whether `client` is one of a queue's consumers, which take items for
    /// as long as there are any: they count no rounds and never finish.
    pub fn consumes(&self, client: ClientIdx) -> bool {
        self.role(client) == Role::Consumer
    }

    /// Whether `client` is one of an election's observers, which follow
    /// who leads for as long as the run lasts: they count no rounds and
    /// never finish.
    pub fn observes(&self, client: ClientIdx) -> bool {
        self.role(client) == Role::Observer
    }

    /// Whether a notification to `client` counts in the herd (`herd_bound`
    /// and the herd metrics): not an observer's, which is what it observes
    /// with.
    pub fn counts_in_herd(&self, client: ClientIdx) -> bool {
        !self.observes(client)
    }

    /// Whether `client` is one of a shared lock's readers.
    pub fn reads(&self, client: ClientIdx) -> bool {
        self.role(client) == Role::Reader
    }

    /// Whether `client`'s holds write to the guarded resource: a lock
    /// holder's, a leader's and a shared lock's writer's do; a reader's, a
    /// lease holder's, a barrier member's and a queue client's do not.
    pub fn writes(&self, client: ClientIdx) -> bool {
        self.role(client).hold() == Hold::Writes
    }

    /// Whether the client has run all its rounds.
    fn rounds_over(&self, st: &ClientState) -> bool {
        self.role(st.session.client).counts_rounds() && st.rounds_done >= self.rounds
    }

    /// A round is over (a consumer counts none).
    fn count_round(&self, st: &mut ClientState) {
        if self.role(st.session.client).counts_rounds() {
            st.rounds_done = st.rounds_done.saturating_add(1);
        }
    }

    fn open_session(&self) -> Request {
        match self.recipe.face() {
            Face::ZooKeeper => Request::Connect,
            Face::Etcd => Request::LeaseGrant,
            // A connection: the server keeps nothing for it.
            Face::Redis => Request::Connect,
            Face::Consul => Request::Consul(ConsulCmd::SessionCreate(
                self.recipe.consul_session().unwrap_or_default(),
            )),
        }
    }

    pub(crate) fn send_request(&self, st: &mut ClientState, req: Request, o: &mut Out<Self>) {
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
        self.sent_to_store(st, o);
    }

    /// The known-wrong lease-aware client restarts its deadline on every
    /// send, as if sending proved the session alive.
    fn sent_to_store(&self, st: &ClientState, o: &mut Out<Self>) {
        if self.policy.trusts_its_sends() && !matches!(st.phase, Phase::Connecting | Phase::Done) {
            o.set_timer(Timer::Deadline, exactly(self.timing.deadline));
        }
    }

    fn think(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if self.rounds_over(st) {
            st.phase = Phase::Done;
            o.cancel_timer(Timer::Ping);
            o.cancel_timer(Timer::Deadline);
        } else {
            st.phase = Phase::Thinking;
            let think = if self.role(st.session.client) == Role::Producer {
                &self.timing.produce
            } else {
                &self.timing.think
            };
            o.set_timer(Timer::Think, think.clone());
        }
    }

    pub(crate) fn write(&self, st: &mut ClientState, o: &mut Out<Self>) {
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

    pub(crate) fn release(&self, st: &mut ClientState, o: &mut Out<Self>) {
        o.cancel_timer(Timer::Hold);
        // The unlock cancels the thread's watchdog, one a late answer
        // armed too.
        self.stop_renewing(o);
        st.clocks.set(Clocks::ORPHAN_WATCHDOG, false);
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

    /// Starts an acquisition's clock, where the application gives up after
    /// a timeout, and its first attempt's.
    fn start_acquisition_clock(&self, o: &mut Out<Self>) {
        if let Some(timeout) = self.timing.acquire_timeout {
            o.set_timer(Timer::GiveUp, exactly(timeout));
        }
        self.start_attempt_clock(o);
    }

    /// An attempt starts: a recipe that checks its validity (Redlock)
    /// counts it from here.
    fn start_attempt_clock(&self, o: &mut Out<Self>) {
        if let Some(validity) = self.recipe.validity() {
            o.set_timer(Timer::Validity, exactly(validity));
        }
    }

    /// A holder whose recipe renews its key (a watchdog): the next renewal.
    fn arm_renewal(&self, o: &mut Out<Self>) {
        if let Some(every) = self.recipe.key_lease().and_then(|l| l.renew_every) {
            o.set_timer(Timer::Renew, exactly(every));
        }
    }

    /// The acquisition is over (held, given up or lost): its timeout, and
    /// a sleep the recipe was in, no longer run.
    fn stop_acquisition_clocks(&self, st: &mut ClientState, o: &mut Out<Self>) {
        if self.timing.acquire_timeout.is_some() {
            o.cancel_timer(Timer::GiveUp);
        }
        self.stop_attempt_clock(o);
        self.stop_sleeping(st, o);
        st.clocks.set(Clocks::TIMED_OUT, false);
    }

    /// The attempt is over (held, given up, or the recipe sleeps before
    /// the next): its validity no longer runs.
    fn stop_attempt_clock(&self, o: &mut Out<Self>) {
        if self.recipe.validity().is_some() {
            o.cancel_timer(Timer::Validity);
        }
    }

    fn stop_renewing(&self, o: &mut Out<Self>) {
        if self
            .recipe
            .key_lease()
            .is_some_and(|l| l.renew_every.is_some())
        {
            o.cancel_timer(Timer::Renew);
        }
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

    /// The application interrupts its acquisition (Redisson's
    /// `lockInterruptibly`): the caller returns at once, whatever request
    /// is on its way, and unlocks. Its unlock goes on another pooled
    /// connection, before the acquire it overtakes, and finds no key of
    /// its own: it changes nothing, so it is not sent (ARCHITECTURE.md).
    /// The round ends without holding; the library still hears the
    /// acquire's answer ([`Client::on_late_answer`]).
    pub fn on_interrupt(&self, state: &mut Cow<ClientState>, o: &mut Out<Self>) {
        if state.phase != Phase::Acquiring {
            return;
        }
        let st = state.to_mut();
        self.stop_acquisition_clocks(st, o);
        if st.pending.take().is_some() {
            st.epoch = st.epoch.wrapping_add(1);
            st.clocks.set(Clocks::ANSWER_DUE, true);
            o.cancel_timer(Timer::Retry);
        }
        self.finish_round(st, o);
    }

    /// What the library does with an answer its caller no longer waits
    /// for: the interrupted request's, or one to a request the library
    /// sent on its own since. Any other stale answer (a request resent on
    /// a new connection) is dropped, as it always was.
    fn on_late_answer(&self, state: &mut Cow<ClientState>, reply: &Reply, o: &mut Out<Self>) {
        if state.clocks.answer_due() {
            state.to_mut().clocks.set(Clocks::ANSWER_DUE, false);
        } else if !state.clocks.orphan_watchdog() {
            return;
        }
        match self.recipe.on_late_answer(state.session, reply) {
            LateAnswer::Ignore => {}
            LateAnswer::ArmWatchdog => {
                state.to_mut().clocks.set(Clocks::ORPHAN_WATCHDOG, true);
                self.arm_renewal(o);
            }
            LateAnswer::StopWatchdog => {
                if state.clocks.orphan_watchdog() {
                    state.to_mut().clocks.set(Clocks::ORPHAN_WATCHDOG, false);
                    if !state.is_holding() {
                        self.stop_renewing(o);
                    }
                }
            }
            LateAnswer::Release(req) => self.send_late(state, req, true, o),
        }
    }

    /// A request the library sends on its own, outside the caller's
    /// round: no resend, and an epoch no current request has, so that
    /// its answer comes back as a late one.
    fn send_late(&self, st: &ClientState, req: Request, release: bool, o: &mut Out<Self>) {
        o.send(
            store_id(),
            Msg::Request {
                session: st.session,
                epoch: st.epoch.wrapping_sub(1),
                release,
                req,
            },
        );
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
    pub(crate) fn session_lost(&self, st: &mut ClientState, o: &mut Out<Self>) {
        st.connection = Connection::Lost;
        // A member that passed its barrier, or a consumer that took its
        // item, has done its round: it does not enter (or take) again.
        if self.spec().hold_ends_round && st.is_holding() {
            self.count_round(st);
            st.recipe = None;
        }
        for t in [Timer::Hold, Timer::Deadline, Timer::Think, Timer::Retry] {
            o.cancel_timer(t);
        }
        self.stop_renewing(o);
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
        if self.policy == Policy::SuspendAware && st.is_holding() {
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

    /// An observer that, on a store message marked `owns_first`, made a
    /// new report (a leader, or a term, other than `before`): the ghost
    /// keeps whether that leader did not own the first key, live, when the
    /// store sent it.
    fn note_named(&self, st: &mut ClientState, before: Option<(SessionId, u64)>, owns_first: bool) {
        if owns_first || !self.observes(st.session.client) {
            return;
        }
        let after = st.recipe.as_ref().and_then(|r| self.recipe.report_seen(r));
        if after.is_some() && after != before {
            st.clocks.set(Clocks::NAMED_STALE, true);
        }
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
                // The next attempt starts at the wake.
                self.stop_attempt_clock(o);
            }
            // "Not mine": an armed sleep runs on.
            Step::Wait | Step::Unexpected => {}
            // Only a release ends with `Released`: while acquiring it is a
            // step the recipe should not take, and the client stops there.
            Step::Released if st.phase == Phase::Releasing => {
                if self.spec().judges_leaving {
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
                match self.role(st.session.client).hold() {
                    // An item enqueued: the producer's round is over.
                    Hold::Nothing => self.release(st, o),
                    Hold::Writes => {
                        self.arm_renewal(o);
                        self.write(st, o)
                    }
                    // Past the barrier, an item taken, a read lock or a
                    // lease held: the work it guards (processing the item,
                    // reading), then on.
                    Hold::Work => o.set_timer(Timer::Hold, self.timing.hold.clone()),
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
            Reply::Error(ZkError::SessionExpired)
                | Reply::LeaseNotFound
                | Reply::Consul(ConsulReply::InvalidSession)
        );
        match st.phase {
            Phase::Connecting if expired => self.session_lost(st, o),
            Phase::Connecting => {
                // An etcd lease's id is the store's: the session is known
                // by it from now on.
                if let Reply::LeaseGranted { lease } = reply {
                    st.session = lease;
                }
                st.connection = Connection::Connected;
                // A Redis connection has no session to keep alive.
                if self.recipe.face() != Face::Redis {
                    o.set_timer(Timer::Ping, exactly(self.timing.ping));
                }
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
                let named = self.recipe.report_seen(recipe);
                let step = self.recipe.on_reply(st.session, recipe, &reply);
                self.note_named(st, named, evidence.1);
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
                ..ClientState::new(
                    SessionId {
                        incarnation: saved.incarnation,
                        ..SessionId::first(me)
                    }
                    .next(),
                )
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
        let trusts_replies = self.policy.keeps_a_deadline() && !self.policy.trusts_its_sends();
        if src == store_id() && trusts_replies && in_session && renewed {
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
                if epoch != state.epoch {
                    // A reply to a request given up on: only a library
                    // whose caller was interrupted still acts on it.
                    self.on_late_answer(state, &reply, o);
                    return;
                }
                if state.pending.is_none() {
                    return; // a duplicate of one answered
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
                    let named = self.recipe.report_seen(recipe);
                    let step = if st.phase == Phase::Releasing {
                        self.recipe.on_release_event(recipe, &event)
                    } else {
                        self.recipe.on_event(recipe, &event)
                    };
                    self.note_named(st, named, owns_first);
                    self.apply(st, step, (header, owns_first), o);
                }
            }
            Msg::Expired { session } => {
                if session.same_session(state.session) && state.phase == Phase::Acquiring {
                    let st = state.to_mut();
                    let Some(recipe) = st.recipe.as_mut() else {
                        return;
                    };
                    let step = self.recipe.on_expired(recipe);
                    self.apply(st, step, (0, false), o);
                } else if let (Some(grace), true) = (self.recipe.kill_grace(), state.is_holding()) {
                    // `consul lock`: SIGTERM to the child, which may go on
                    // until the SIGKILL.
                    if session.same_session(state.session) {
                        state.to_mut().connection = Connection::Lost;
                        o.set_timer(Timer::Kill, exactly(grace));
                    }
                } else if self.policy == Policy::Oblivious && state.is_holding() {
                    // The library knows (LOST); the application goes on as
                    // the holder, and its release will find the session gone.
                    if session.same_session(state.session) {
                        state.to_mut().connection = Connection::Lost;
                    }
                } else if session.same_session(state.session) && state.phase != Phase::Done {
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
                let item = self.item(me, st.rounds_done);
                let start = self.role(me).start(&*self.recipe, st.session, item);
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
                if st.phase == Phase::Acquiring && matches!(step, Step::Send(_)) {
                    self.start_attempt_clock(o);
                }
                self.apply(st, step, (0, false), o);
            }
            // The attempt outlasted its validity: the recipe's to judge.
            Timer::Validity if state.phase == Phase::Acquiring => {
                let st = state.to_mut();
                let Some(recipe) = st.recipe.as_mut() else {
                    return;
                };
                let step = self.recipe.on_validity_passed(recipe);
                self.apply(st, step, (0, false), o);
            }
            // The watchdog renews the key while the client holds and has
            // nothing else out; its answer changes nothing.
            Timer::Renew if state.is_holding() => {
                let renewal = state
                    .recipe
                    .as_ref()
                    .and_then(|r| self.recipe.renewal(state.session, r));
                if let (Some(req), None) = (renewal, &state.pending) {
                    self.send_request(state.to_mut(), req, o);
                }
                self.arm_renewal(o);
            }
            // A watchdog a late answer armed renews a key no one holds;
            // its answer schedules the next renewal.
            Timer::Renew if state.clocks.orphan_watchdog() => {
                if let Some(req) = self.recipe.orphan_renewal(state.session) {
                    self.send_late(state, req, false, o);
                }
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
            Timer::Hold if state.is_holding() => {
                if self.reenters_now(state) {
                    self.reenter(state.to_mut(), o)
                } else {
                    match self.role(state.session.client).hold() {
                        Hold::Writes => self.write(state.to_mut(), o),
                        Hold::Work | Hold::Nothing => self.release(state.to_mut(), o),
                    }
                }
            }
            Timer::Retry if state.pending.is_some() => self.resend(state.to_mut(), o),
            // SIGKILL: the child is gone, and with it the holder's belief.
            Timer::Kill if state.is_holding() => {
                self.session_lost(state.to_mut(), o);
            }
            Timer::Ping if state.phase != Phase::Done => {
                o.send(
                    store_id(),
                    Msg::Ping {
                        session: state.session,
                    },
                );
                o.set_timer(Timer::Ping, exactly(self.timing.ping));
                self.sent_to_store(state, o);
            }
            Timer::Deadline if !matches!(state.phase, Phase::Connecting | Phase::Done) => {
                match self.policy {
                    // SUSPENDED: a holder gives the lock up and keeps the
                    // session; anyone else waits for the store to answer.
                    // The connection is gone with whatever reply was on its
                    // way (ConnectionLoss): the request goes again once the
                    // store answers.
                    Policy::SuspendAware => {
                        let pending = state.pending.is_some() && !state.is_holding();
                        self.on_disconnect(state, o);
                        // Its own clock: the etcd application gives up here.
                        self.suspended(state.to_mut(), o);
                        if pending {
                            self.resend(state.to_mut(), o);
                        }
                    }
                    Policy::LeaseAware
                    | Policy::LeaseAwareFromSend
                    | Policy::Naive
                    | Policy::Oblivious => {
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
            | Timer::GiveUp
            | Timer::Validity
            | Timer::Renew
            | Timer::Kill => {}
            // The store's timers: never set on a client.
            Timer::Expiry(_)
            | Timer::KeyTtl { .. }
            | Timer::LockDelay { .. }
            | Timer::QueryWait { .. } => {}
        }
    }

    fn name(&self) -> String {
        "client".into()
    }
}
