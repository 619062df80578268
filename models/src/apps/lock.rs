//! The lock: acquire, hold (writes to the guarded resource, fenced by the
//! token), release — and a holder's re-entries, as its library answers a
//! second acquire ([`Reentry`]).

use super::{writer, App, Herd, HoldWords, Place, Rules, Spec};
use crate::client::{Client, ClientState, Phase, WRITES_PER_HOLD};
use crate::ids::{ClientIdx, SessionId};
use crate::msg::{Reply, Request, Timer};
use crate::properties::{Breach, Observation, OwnMonitor, PropertyName as P, Seen};
use crate::recipe::Step;
use stateright::actor::Out;
use std::fmt;

pub const SPEC: Spec = Spec {
    name: "lock",
    a_name: "a lock",
    taken: "acquisitions",
    holders: "who believes it holds the lock",
    holders_write: true,
    hold: HoldWords {
        verb: "holds the lock",
        token: Some("token"),
        produces: None,
    },
    properties: &[
        P::MutualExclusion,
        P::ResourceExclusion,
        P::HerdBound,
        P::HolderOwnsKey,
        P::HolderWritesAccepted,
        P::HandOff,
        P::Progress,
    ],
    rules: Rules {
        exclusion: Some(P::MutualExclusion),
        owns_key: Some(P::HolderOwnsKey),
        resource: Some(P::ResourceExclusion),
        place: Place::Granted,
        herd: Herd::ReleaseSteps,
    },
    role: writer,
    hold_ends_round: false,
    judges_leaving: false,
};

/// What a second acquire by the holder does — the library's answer, read
/// from its source. The lock application re-enters only a recipe that
/// says (`--reentries`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reentry {
    /// The recipe's source has no second acquire to model.
    Unsupported,
    /// Counted in the library, no store request; the inner release only
    /// counts down, the outermost deletes (Curator's `InterProcessMutex`:
    /// `lockData.lockCount.incrementAndGet()`).
    Counted,
    /// The caller never returns and nothing reaches the store (kazoo's
    /// `Lock`: `_inner_acquire` raises `ForceRetryError` while
    /// `is_acquired`, under a `KazooRetry` with no limit): the holder
    /// deadlocks on itself.
    Blocks,
    /// The library acquires again from the start in the same session and
    /// returns at once, its key being first in line already; the inner
    /// release is a full one (etcd's `Mutex.Lock`: the txn's `Else` branch
    /// finds the session's key, `ownerKey[0].CreateRevision == m.myRev`;
    /// one `Unlock` deletes the key under both callers).
    Again,
}

/// A lock's own hooks, each with the answer of a lock that has none of
/// them.
pub trait LockRecipe<S> {
    /// What a second acquire by the holder does.
    fn reentry(&self) -> Reentry {
        Reentry::Unsupported
    }

    /// Whether the recipe's source can give up an acquisition that takes
    /// too long (Curator's `acquire(time, unit)`, kazoo's
    /// `acquire(timeout=…)`, etcd's `Lock` on a context with a deadline).
    /// The lock application's acquire timeout is refused for a recipe that
    /// cannot.
    fn withdraws(&self) -> bool {
        false
    }

    /// For a recipe that [`LockRecipe::withdraws`]: the acquisition in `st`
    /// is given up while the recipe waits (its timeout passed). The request
    /// that takes its entry out of line — Curator's `deleteOurPath`,
    /// kazoo's `_best_effort_cleanup`, etcd's `Unlock` after a failed wait
    /// — or `None` when it has none in line. The client then ends the round
    /// without holding.
    fn withdraw(&self, _session: SessionId, _st: &S) -> Option<Request> {
        None
    }

    /// Whether the application can interrupt an acquisition at any moment,
    /// its request still on its way (Redisson's `lockInterruptibly`: the
    /// caller returns at once and unlocks): the `--interrupts` fault. The
    /// library then handles the request's late answer
    /// ([`LockRecipe::on_late_answer`]).
    /// How long the application goes on holding after its library
    /// reports the lock lost, for a lock whose library stops the guarded
    /// work by signals (`consul lock`: SIGTERM to the child, SIGKILL after
    /// 5 s): a child that does not exit on SIGTERM keeps its writes coming
    /// until the SIGKILL. `None`: the application drops it at once, as its
    /// policy says.
    fn kill_grace(&self) -> Option<std::time::Duration> {
        None
    }

    fn interruptible(&self) -> bool {
        false
    }

    /// What the library does with the answer to a request an interrupt
    /// left behind, or to one it sent on its own since ([`LateAnswer`]).
    fn on_late_answer(&self, _session: SessionId, _reply: &Reply) -> LateAnswer {
        LateAnswer::Ignore
    }

    /// The renewal a watchdog armed by a late answer sends, holder or not
    /// ([`LateAnswer::ArmWatchdog`]).
    fn orphan_renewal(&self, _session: SessionId) -> Option<Request> {
        None
    }
}

/// What a library does with an answer that comes after its caller was
/// interrupted: the caller has gone on, the library's callbacks have not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LateAnswer {
    /// Nothing.
    Ignore,
    /// The acquire's callback arms the key's watchdog, which renews the
    /// key for a caller that no longer holds it (Redisson #7272); a
    /// renewal's answer arms the next.
    ArmWatchdog,
    /// The watchdog found the key gone and stops.
    StopWatchdog,
    /// The library gives back what the late answer granted.
    Release(Request),
}

/// A lock with none of the lock's own hooks: not reentrant, never gives up.
pub struct PlainLock;

impl<S> LockRecipe<S> for PlainLock {}

// --- The client loop: a holder's re-entries ---

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

impl std::hash::Hash for Nesting {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        if self.0 != 0 {
            h.write_u8(self.0);
        }
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

impl Client {
    /// Whether the holder acquires again now, at its hold timer: a lock
    /// whose run asks for re-entries, until it made them all.
    pub(crate) fn reenters_now(&self, st: &ClientState) -> bool {
        self.recipe.app() == App::Lock && st.nesting.made() < self.reentries
    }

    /// The holder acquires again, as its library answers a second acquire.
    pub(crate) fn reenter(&self, st: &mut ClientState, o: &mut Out<Self>) {
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
    pub(crate) fn end_of_writes(&self, st: &mut ClientState, o: &mut Out<Self>) {
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
    pub(crate) fn on_nested_reply(&self, st: &mut ClientState, reply: &Reply, o: &mut Out<Self>) {
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
}

/// What a holder's step means to the monitors when it acquired again: at
/// once, or through the store (or never, blocked on itself). `None` when
/// the step made no re-entry.
pub(crate) fn observe_reentry(
    client: ClientIdx,
    reentered_before: u8,
    after: &ClientState,
) -> Option<Observation> {
    (after.nesting.made() > reentered_before && after.is_holding()).then(|| {
        let immediate = after.nesting.asking() == Asking::Nothing && !after.nesting.blocked();
        Observation::Reentered { client, immediate }
    })
}

// --- The lock's own monitors ---

/// `holder_writes_accepted` and `reentry_immediate`: sticky marks, set only
/// on a violating path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockMonitor {
    /// A sole, newest holder was fenced off.
    pub(crate) holder_fenced: bool,
    /// A holder's re-entry waited for the store, or never came.
    pub(crate) reentry_delayed: bool,
}

impl OwnMonitor for LockMonitor {
    fn heeds(&self, obs: &Observation) -> bool {
        // Only a re-entry that waited changes anything.
        matches!(
            obs,
            Observation::Reentered {
                immediate: false,
                ..
            }
        )
    }

    fn observe(&mut self, seen: Seen, obs: &Observation, breaches: &mut Vec<Breach>) {
        if let Observation::Reentered { client, .. } = *obs {
            // Heeded only when it waited.
            if !self.reentry_delayed {
                self.reentry_delayed = true;
                breaches.push(Breach {
                    property: P::ReentryImmediate,
                    clients: vec![client],
                });
            }
        } else if let Observation::WriteRejected { client, token } = *obs {
            let sole = seen.believers.len() == 1 && seen.believers[0].0 == client;
            let newest = seen.acquisitions.iter().all(|a| a.token <= token);
            if sole && newest && !self.holder_fenced {
                self.holder_fenced = true;
                breaches.push(Breach {
                    property: P::HolderWritesAccepted,
                    clients: vec![client],
                });
            }
        }
    }

    fn holds(&self, _: Seen, p: P) -> Option<bool> {
        if p == P::HolderWritesAccepted {
            Some(!self.holder_fenced)
        } else if p == P::ReentryImmediate {
            Some(!self.reentry_delayed)
        } else {
            None
        }
    }
}
