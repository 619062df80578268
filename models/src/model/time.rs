//! The time abstraction. The checker's timers carry no time, so the model
//! decides when each may fire — only when, in real time, it could:
//! - think and hold timers at any moment (they are arbitrary delays);
//! - a client's resend timer only when its request or the reply was lost;
//! - heartbeats never: a healthy connected client keeps its session, so
//!   session (lease) expiry is a store step enabled only while the owner is
//!   silent — crashed, paused, cut off, or gone on to a new session;
//! - the lease-aware deadline only after the client missed contact (paused or
//!   cut off); and a cut-off lease-aware holder's clock runs, so its deadline
//!   passes before the store expires its session;
//! - a recipe's sleep (`Step::Sleep`: a back-off, a poll interval) and an
//!   acquisition's timeout (`Timer::GiveUp`) at any moment while armed: a
//!   sleep of any length, a timeout shorter or longer than any wait. The
//!   client ignores a timeout that comes while a request is outstanding
//!   until the recipe next waits, as Curator and kazoo do.

use super::{awaited_on_link, ClientSlot, ModelState, RecipeModel, Status};
use crate::client::Phase;
use crate::ids::SessionId;
use crate::msg::Timer;
use crate::store::ensemble::LeaderLink;
use crate::store::StoreState;

impl RecipeModel {
    /// Whether session `s`'s owner is silent, so the store may expire it.
    pub(super) fn silent(&self, state: &ModelState, s: SessionId) -> bool {
        let Some(slot) = state.clients.get(s.client as usize) else {
            return true;
        };
        if !slot.state.session.same_session(s) {
            return true; // the owner has moved on to a new session
        }
        if self.stays_connected(state, s) {
            return false;
        }
        // Its ZooKeeper server is cut off from the leader, or muted: its
        // pings reach no one who can renew the session, though they are
        // answered. (A local session is its follower's, which its pings
        // keep alive.)
        let local = state.store.ensemble.as_ref().is_some_and(|e| e.is_local(s));
        let cut_member = cut_from_lessor(&state.store, s.client);
        if state.store.link_of(s.client).holds_for_leader() && !local && !cut_member {
            return true;
        }
        match slot.status {
            Status::Crashed | Status::Paused => true,
            Status::Running => {
                // A cut-off lease-aware holder's own clock runs out first:
                // partitioned, or on an etcd member cut off from the
                // leader, whose keepalives go unanswered as in a partition.
                (slot.partitioned || cut_member)
                    && !(self.client.policy.keeps_a_deadline()
                        && slot.timers.binary_search(&Timer::Deadline).is_ok())
            }
        }
    }

    /// Redis: whether a key's TTL, set by session `setter`, may have run
    /// out. A client that keeps to its timing (a hold shorter than the
    /// TTL, or a watchdog renewing it) never sees its key expire while it
    /// relies on it — acquiring, holding or releasing — so the TTL runs
    /// out only while its setter is silent (crashed, paused, cut off,
    /// moved on) or no longer relies on the key: between rounds, or
    /// polling after a try that failed (a `SET NX` whose earlier reply was
    /// lost finds the client's own key, and waits for its TTL: the checker
    /// owes that expiry under strong fairness, since the poll disables it
    /// again and again while the TTL runs on), and not while a watchdog
    /// renews it. What a
    /// silent setter sent before it fell silent arrives first — a
    /// message's flight is far shorter than a TTL — unless its link is
    /// cut.
    pub(super) fn ttl_may_run_out(&self, state: &ModelState, setter: SessionId) -> bool {
        let Some(slot) = state.clients.get(setter.client as usize) else {
            return true;
        };
        // An attempt's validity (Redlock's) is shorter than its keys' TTL
        // and counts from before they were set: it runs out first.
        if slot.timers.binary_search(&Timer::Validity).is_ok() {
            return false;
        }
        if self.silent(state, setter) {
            return slot.partitioned || (slot.to_store.is_empty() && slot.to_resource.is_empty());
        }
        // The answer to an interrupted request is still on its way: the
        // key it set is as young as the flight (Redisson #7272). And a
        // watchdog armed after an interrupt renews the key in time,
        // whatever the client's round, while it runs: its timer armed or
        // a renewal on its way.
        let clocks = slot.state.clocks;
        let in_flight = !slot.to_store.is_empty() || !slot.from_store.is_empty();
        let renewing = in_flight || slot.timers.binary_search(&Timer::Renew).is_ok();
        if (clocks.answer_due() && in_flight) || (clocks.orphan_watchdog() && renewing) {
            return false;
        }
        match slot.state.phase {
            Phase::Thinking | Phase::Connecting | Phase::Done => true,
            Phase::Acquiring => slot.state.clocks.sleeping(),
            Phase::Holding { .. } | Phase::Releasing => false,
        }
    }

    /// Consul: whether a key's lock-delay, started by the invalidation of
    /// session `owner`, may have run out. The lock-delay (15 s by
    /// default) is there for the old holder to hear of its loss and stop:
    /// a message's flight and a healthy client's reaction are far shorter.
    /// So it runs out only once the owner has heard — its monitor's answer
    /// (the expiry notice) delivered — and is past the grace `consul lock`
    /// gives its child between SIGTERM and SIGKILL (5 s); or while the
    /// owner is silent (crashed, paused, cut off), whose silence can
    /// outlast any lock-delay (#1843). Either way what the owner sent
    /// before has arrived — unless its link is cut, as a Redis TTL's rule
    /// has it.
    pub(super) fn lock_delay_may_end(&self, state: &ModelState, owner: SessionId) -> bool {
        let Some(slot) = state.clients.get(owner.client as usize) else {
            return true;
        };
        let sent_arrived = slot.to_store.is_empty() && slot.to_resource.is_empty();
        if !slot.state.session.same_session(owner) || self.silent(state, owner) {
            return slot.partitioned || sent_arrived;
        }
        if !sent_arrived {
            return false;
        }
        let notice_on_its_way = slot.from_store.iter().any(
            |m| matches!(m, crate::msg::Msg::Expired { session } if session.same_session(owner)),
        );
        !notice_on_its_way && slot.timers.binary_search(&Timer::Kill).is_err()
    }

    /// Whether session `s` is its finished client's, which stays connected
    /// (its session never expires).
    pub(super) fn stays_connected(&self, state: &ModelState, s: SessionId) -> bool {
        state.clients.get(s.client as usize).is_some_and(|slot| {
            slot.state.session.same_session(s) && slot.state.phase == Phase::Done
        })
    }

    /// Whether the client's resend timer may fire: a request is out and
    /// neither it nor its reply is on its way (so one was lost) — a
    /// reply the store holds (a Redis `WAIT`, an ensemble's write or
    /// `sync`) is on its way too.
    pub(super) fn resend_due(&self, store: &StoreState, slot: &ClientSlot) -> bool {
        let epoch = slot.state.epoch;
        slot.state.pending.is_some()
            && !store.holds_reply(slot.state.session.client, epoch)
            && !slot
                .to_store
                .iter()
                .any(|m| awaited_on_link(m, true, epoch))
            && !slot
                .from_store
                .iter()
                .any(|m| awaited_on_link(m, false, epoch))
    }

    /// Whether client timer `t` may fire now (untimed).
    pub(super) fn timer_may_fire(&self, store: &StoreState, slot: &ClientSlot, t: Timer) -> bool {
        match t {
            Timer::Think | Timer::Hold | Timer::Wake | Timer::GiveUp | Timer::Renew => true,
            // An attempt outlasts its validity only if the client stopped
            // hearing from the store meanwhile (paused or cut off).
            Timer::Validity => slot.missed_contact,
            Timer::Retry => self.resend_due(store, slot),
            // SIGKILL comes at any moment of the grace.
            Timer::Kill => true,
            Timer::Ping
            | Timer::Expiry(_)
            | Timer::KeyTtl { .. }
            | Timer::LockDelay { .. }
            | Timer::QueryWait { .. } => false,
            Timer::Deadline => {
                slot.missed_contact || cut_from_lessor(store, slot.state.session.client)
            }
        }
    }
}

/// Whether `client` is on an etcd member cut off from the leader: it hears
/// nothing of its keepalives (the lessor is the leader's), so its own
/// deadline may run out, as in a partition.
fn cut_from_lessor(store: &StoreState, client: crate::ids::ClientIdx) -> bool {
    store.ensemble.as_ref().is_some_and(|e| e.cfg.0.leases)
        && store.link_of(client) == LeaderLink::Cut
}
