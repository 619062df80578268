//! A store's steps called directly, each returning what it sent: how the
//! store-level tests and the validator's model runs drive an ensemble
//! without a checker or a simulator around it.

use super::{Store, StoreState};
use crate::ids::{client_id, client_of, store_id, ClientIdx, SessionId};
use crate::msg::{Msg, Request, Timer};
use stateright::actor::{Actor, Command, Out};
use std::borrow::Cow;

/// What one step sent: (to, message), clients only.
pub type Sent = Vec<(ClientIdx, Msg)>;

/// A store and its state, stepped by hand.
pub struct StoreDriver {
    pub store: Store,
    pub st: StoreState,
}

impl StoreDriver {
    /// `store` in its initial state.
    pub fn new(store: Store) -> StoreDriver {
        let st = store.initial_state();
        StoreDriver { store, st }
    }

    /// One step of the store: what it sent to clients.
    fn step(&mut self, f: impl FnOnce(&Store, &mut Cow<StoreState>, &mut Out<Store>)) -> Sent {
        self.step_timed(f).0
    }

    /// One step of the store: what it sent to clients, and the timers it
    /// set.
    fn step_timed(
        &mut self,
        f: impl FnOnce(&Store, &mut Cow<StoreState>, &mut Out<Store>),
    ) -> (Sent, Vec<Timer>) {
        let mut cow = Cow::Borrowed(&self.st);
        let mut out = Out::new();
        f(&self.store, &mut cow, &mut out);
        self.st = cow.into_owned();
        let (mut sent, mut timers) = (Vec::new(), Vec::new());
        for c in out {
            match c {
                Command::Send(to, msg) => sent.extend(client_of(to).map(|c| (c, msg))),
                Command::SetTimer(t, _) => timers.push(t),
                Command::CancelTimer(_) | Command::ChooseRandom(..) | Command::Save(_) => {}
            }
        }
        (sent, timers)
    }

    /// `req` in `session`, from its client, at epoch 0.
    pub fn send_in(&mut self, session: SessionId, req: Request) -> Sent {
        let msg = Msg::Request {
            session,
            epoch: 0,
            release: false,
            req,
        };
        let from = client_id(session.client);
        self.step(|store, st, o| store.on_msg(store_id(), st, from, msg, o))
    }

    /// Follower `f` applies its next entry; `None` if it has none.
    pub fn apply(&mut self, f: usize) -> Option<Sent> {
        let mut applied = false;
        let sent = self.step(|store, st, o| applied = store.apply_next(st, f, o).is_some());
        applied.then_some(sent)
    }

    /// Follower `f` applies everything it is behind: what it sent.
    pub fn catch_up(&mut self, f: usize) -> Sent {
        let mut all = Vec::new();
        while let Some(sent) = self.apply(f) {
            all.extend(sent);
        }
        all
    }

    /// `session`'s client reconnects on a new connection.
    pub fn reconnect(&mut self, session: SessionId) -> Sent {
        self.step(|store, st, o| store.reconnected(st, session, o))
    }

    /// `session`'s expiry timer runs out at the leader.
    pub fn expire(&mut self, session: SessionId) -> Sent {
        let t = Timer::Expiry(session);
        self.step(|store, st, o| store.on_timeout(store_id(), st, &t, o))
    }

    /// `session`'s client pings its server.
    pub fn ping(&mut self, session: SessionId) -> Sent {
        self.ping_renewing(session).0
    }

    /// `session`'s client pings its server: what it sent, and whether the
    /// ping renewed the session (set its expiry timer at the leader again).
    pub fn ping_renewing(&mut self, session: SessionId) -> (Sent, bool) {
        let from = client_id(session.client);
        let ping = Msg::Ping { session };
        let (sent, timers) =
            self.step_timed(|store, st, o| store.on_msg(store_id(), st, from, ping, o));
        let renewed = timers.iter().any(|t| matches!(t, Timer::Expiry(_)));
        (sent, renewed)
    }

    /// Follower `f` is cut off from the leader (an isolation).
    pub fn cut_off(&mut self, f: usize) -> Sent {
        self.step(|store, st, _| store.cut_off(st, f))
    }

    /// The leader stops hearing follower `f` (a mute).
    pub fn mute(&mut self, f: usize) -> Sent {
        self.step(|store, st, _| store.mute(st, f))
    }

    /// Follower `f` gives the leader up (cut off) or is dropped by it
    /// (muted), after syncLimit × tickTime: the clients whose connections
    /// it closed.
    pub fn drop_follower(&mut self, f: usize) -> Vec<ClientIdx> {
        let mut closed = Vec::new();
        self.step(|store, st, _| closed = store.drop_follower(st, f));
        closed
    }

    /// Follower `f` hears the leader again: what it sent as it did.
    pub fn rejoin(&mut self, f: usize) -> Sent {
        self.step(|store, st, o| {
            store.rejoin(st, f, o);
        })
    }

    /// The leader is cut off from its followers (a failover's first step).
    pub fn depose_leader(&mut self) -> Sent {
        self.step(|store, st, o| store.depose_leader(st, o))
    }

    /// The followers elect a new leader (untimed: no lease extended).
    pub fn elect(&mut self) -> Sent {
        self.elect_leader().0
    }

    /// The followers elect a new leader (untimed: no lease extended): what
    /// it sent, the server that leads now (`None`: none to elect), and the
    /// sessions whose expiry timers it started again.
    pub fn elect_leader(&mut self) -> (Sent, Option<u8>, Vec<SessionId>) {
        let mut leader = None;
        let (sent, timers) = self.step_timed(|store, st, o| {
            leader = store
                .elect(st, o, std::time::Duration::ZERO)
                .map(|e| e.leader);
        });
        let restarted = timers
            .into_iter()
            .filter_map(|t| {
                if let Timer::Expiry(s) = t {
                    Some(s)
                } else {
                    None
                }
            })
            .collect();
        (sent, leader, restarted)
    }

    /// The deposed leader's quorum check fails and it gives leading up:
    /// the clients whose connections it closed.
    pub fn deposed_gives_up(&mut self) -> Vec<ClientIdx> {
        let mut closed = Vec::new();
        self.step(|store, st, _| closed = store.deposed_gives_up(st));
        closed
    }

    /// The follower slot of a deposed leader, while it is one.
    pub fn deposed(&self) -> Option<usize> {
        self.st.ensemble.as_ref().and_then(|e| e.deposed())
    }

    /// How far follower `f` is behind (0 on one server).
    pub fn lag(&self, f: usize) -> u64 {
        self.st.ensemble.as_ref().map_or(0, |e| e.lag(f))
    }

    /// The server client `c` is connected to (0: the leader).
    pub fn server(&self, c: ClientIdx) -> u8 {
        self.st.ensemble.as_ref().map_or(0, |e| e.server(c))
    }
}
