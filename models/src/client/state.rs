//! A client's state: where it is in its round ([`Phase`]), its session,
//! its outstanding request, the recipe's state, and the marks the
//! monitors compare across a step.

use crate::apps::lock::Nesting;
use crate::client::Connection;
use crate::ids::SessionId;
use crate::msg::Request;
use crate::recipe::AnyState;
use std::fmt;

/// Where a client is in its round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Opening the session (ZooKeeper connect, etcd lease grant).
    Connecting,
    Thinking,
    Acquiring,
    /// Believes it holds what its application grants (the lock, the lead,
    /// a lease, …). `granted` is the header of the store message that
    /// decided it: where the acquisition falls in the store's order;
    /// `owned` is that message's ghost mark: whether the client owned its
    /// entry first in line when the store sent it. `sent` and `acked`
    /// count a writing holder's writes.
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

/// An acquisition's clocks beyond the client's own (and one ghost flag of
/// an observer's, [`Clocks::NAMED_STALE`]): a sleep the recipe is
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
    pub(super) const SLEEPING: u8 = 1;
    pub(super) const TIMED_OUT: u8 = 2;
    /// A watchdog armed by an answer that came after the application's
    /// interrupt (Redisson #7272): it renews a key the client does not
    /// believe it holds.
    pub(super) const ORPHAN_WATCHDOG: u8 = 4;
    /// The answer to a request an interrupt left behind is still due: the
    /// library's callback, not the caller, takes it.
    pub(super) const ANSWER_DUE: u8 = 8;
    /// Ghost, not a clock: an election's observer named a leader on a store
    /// message sent while that leader did not own the first key, live
    /// (`observed_leader_current`). Sticky.
    pub(super) const NAMED_STALE: u8 = 16;

    pub fn sleeping(self) -> bool {
        self.0 & Clocks::SLEEPING != 0
    }

    pub fn timed_out(self) -> bool {
        self.0 & Clocks::TIMED_OUT != 0
    }

    pub fn orphan_watchdog(self) -> bool {
        self.0 & Clocks::ORPHAN_WATCHDOG != 0
    }

    pub fn answer_due(self) -> bool {
        self.0 & Clocks::ANSWER_DUE != 0
    }

    pub fn named_stale(self) -> bool {
        self.0 & Clocks::NAMED_STALE != 0
    }

    pub(super) fn set(&mut self, flag: u8, on: bool) {
        self.0 = if on { self.0 | flag } else { self.0 & !flag };
    }
}

impl fmt::Debug for Clocks {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let mut d = f.debug_struct("Clocks");
        d.field("sleeping", &self.sleeping())
            .field("timed_out", &self.timed_out())
            .field("orphan_watchdog", &self.orphan_watchdog())
            .field("answer_due", &self.answer_due());
        // Written only when set, so states without it print as before.
        if self.named_stale() {
            d.field("named_stale", &true);
        }
        d.finish()
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
    /// An observer has named a leader on a stale message (sticky).
    pub named_stale: bool,
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
            holding: self.is_holding(),
            reentered: self.nesting.made(),
            left: self.left,
            idle: self.is_waiting() || self.phase == Phase::Done,
            named_stale: self.clocks.named_stale(),
        }
    }

    /// Believes it holds what its application grants: the lock, the
    /// lead, a lease, a read or write lock, the barrier passed, an item.
    pub fn is_holding(&self) -> bool {
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
