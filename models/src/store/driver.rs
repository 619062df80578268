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
        let mut cow = Cow::Borrowed(&self.st);
        let mut out = Out::new();
        f(&self.store, &mut cow, &mut out);
        self.st = cow.into_owned();
        out.into_iter()
            .filter_map(|c| match c {
                Command::Send(to, msg) => Some((client_of(to)?, msg)),
                Command::CancelTimer(_)
                | Command::SetTimer(..)
                | Command::ChooseRandom(..)
                | Command::Save(_) => None,
            })
            .collect()
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
        let from = client_id(session.client);
        let ping = Msg::Ping { session };
        self.step(|store, st, o| store.on_msg(store_id(), st, from, ping, o))
    }

    /// Follower `f` is cut off from the leader (an isolation).
    pub fn cut_off(&mut self, f: usize) -> Sent {
        self.step(|store, st, _| store.cut_off(st, f))
    }

    /// Follower `f` hears the leader again: what it sent as it did.
    pub fn rejoin(&mut self, f: usize) -> Sent {
        self.step(|store, st, o| {
            store.rejoin(st, f, o);
        })
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
