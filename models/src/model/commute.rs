//! Which steps commute: the partial-order reduction's ample sets.
//!
//! A client's *local* steps — a delivery from the store or the resource to
//! it, one of its timers firing — read and write its own slot only: its
//! state, its timers, the heads of its inbound links and the tails of its
//! outbound ones. Every other actor touches that slot only at the other
//! ends of those links (the store appends to `from_store` and pops
//! `to_store`), so at a state where both are enabled a local step of
//! client `c` and a step of anyone else commute: taken in either order they
//! reach the same state, and neither disables the other.
//!
//! So at a state where client `c` qualifies, exploring only `c`'s enabled
//! local steps (an *ample set*) loses no reachable violation of an `always`
//! property and no witness of a `sometimes` one (the classic conditions,
//! Clarke, Grumberg and Peled, *Model Checking*, ch. 10; each condition
//! below says which it meets); with C4 too, no progress verdict either:
//!
//! - **C0**, not empty: `c` has a message from the store waiting.
//! - **C1**, no step outside the set that depends on one inside can come
//!   first. Others cannot give `c` a new local step before `c` takes one:
//!   a message from the store is already at the head of its link (more only
//!   queue behind it); none from the resource can come unless `c` has a
//!   write in flight, so one must already be waiting or none be in flight;
//!   its think and hold timers are armed and disarmed by `c` alone; its
//!   deadline fires only once it missed contact, which only a pause or a
//!   partition of `c` makes it (so it must not have); and its resend timer,
//!   whose firing depends on the links, must be unable to fire until `c`
//!   acts: nothing outstanding, or the reply already waiting. No fault can
//!   strike `c` first: every fault budget that could is spent (or `c`
//!   finished, where no crash, pause or partition is offered to it, and no
//!   step of `c` unfinishes it), and it is running and connected, so the
//!   store offers no expiry of its session (a step of `c` that moves it to
//!   a new session can only enable the expiry of the old one). Crashing or
//!   cutting off another client touches that client's slot only. The test
//!   `local_steps_commute_with_every_other_step` checks all of this on
//!   every reachable state of small configurations: each step of the set
//!   and each step outside it, taken in either order, reach the same
//!   state, neither disables the other, and no step outside gives `c` a
//!   local step the set lacks.
//! - **C2**, invisible: every step in the set leaves the monitors — the
//!   only thing properties read — as they were. Whether a client's step
//!   feeds the monitors depends on its own state and the message only,
//!   which no other actor changes, so the step is invisible wherever it is
//!   taken later too. The checker verifies, on the successors it computed,
//!   that each step changed `c`'s slot and nothing else
//!   ([`RecipeModel::stays_local`]); if not, the state is fully expanded.
//! - **C3**, no step postponed for ever: the checker fully expands a state
//!   whose ample successors were not all new to the search (seen at this
//!   depth or before), so every cycle of the reduced graph holds a fully
//!   expanded state.
//!
//! - **C4**, for progress (from every state a goal state is reachable:
//!   AG EF goal): when progress is asked, no step in the set can make an
//!   asked goal false — it leaves the store alone (C2) and, of `c`, turns
//!   none of the goal's rising bits from true to false, or, for a goal that
//!   reads the marks themselves, leaves them as they were
//!   ([`super::Goal::cannot_falsify`]). The marks read `c`'s state and
//!   process status only; `c`'s step is a function of its state and the
//!   message at the head of its link (or the timer), which other actors do
//!   not change (they touch `c`'s slot at the far ends of its links), and
//!   its status changes only by a fault, which C1 rules out. So what the
//!   step does to the marks is the same wherever it is taken later; the
//!   test `local_steps_commute_with_every_other_step` checks it after every
//!   other step, and `a_step_that_cannot_falsify_a_goal_does_not` checks
//!   the rule itself on every local step. A member's step that finishes it
//!   (visible to "every member is done", but only ever towards it) may so
//!   be taken alone. (In the shipped recipes a step that lowers a goal's
//!   bit — a leader resigning, a consumer taking an item — also feeds the
//!   monitors, so C2 keeps it out of ample sets already; the rising-bit
//!   rule is what keeps a recipe where that is not so sound.)
//!
//!   Why the verdict is the same on both graphs, for steps that are
//!   deterministic (each action has at most one successor, as here):
//!
//!   *A goal the full graph reaches from a state `s` of the reduced one, the
//!   reduced graph reaches too.* Take a shortest full path `π` from `s` to a
//!   goal state `t`. If `s` is fully expanded, `π`'s first step is explored.
//!   Otherwise let `A` be its ample set. If `π` takes a step `a` of `A`, the
//!   steps before the first such are outside `A`, so by C1 `a` commutes with
//!   each: `a` then the rest of `π` reaches the same `t`, and `a` is
//!   explored. If `π` takes none, any `a` of `A` stays enabled along `π` and
//!   commutes with all of it (C1): from `a(s)`, `π` reaches `a(t)`, where the
//!   goal still holds (C4). Either way the reduced graph takes a step to a
//!   state from which a path of `π`'s length or shorter reaches a goal. The
//!   second case keeps the length, but the ample successors of a reduced
//!   state are new to the search (C3), so each is one level deeper; since
//!   the depth is bounded, the second case cannot repeat for ever, and by
//!   induction the reduced graph reaches a goal state.
//!
//!   *Every state of the full graph reaches a state of the reduced one.*
//!   The same argument, run from the initial state along a path to any
//!   full-graph state `u` with `u` as the target (no goal is needed: in
//!   the second case the target moves from `u` to `a(u)`), finds a
//!   reduced-graph state `v` with `u` reaching `v` by the steps of the
//!   second case.
//!
//!   So if every state of the reduced graph reaches a goal (in it, hence in
//!   the full graph), every state of the full graph does too, through `v`:
//!   a "holds" rests on C0–C3 alone. C4 is what makes a "violated" true: a
//!   reduced-graph state that reaches no goal in the reduced graph reaches
//!   none in the full graph either. The search confirms that anyway before
//!   reporting it (below), so a broken C4 would show as
//!   `CheckError::Reduction`, not as a wrong verdict. Unlike the stuttering bisimulation
//!   argument for all of CTL without next (Gerth, Kuiper, Peled and
//!   Penczek 1999; Clarke, Grumberg and Peled §10.6), which asks for
//!   single-step sets that leave the goals alone, this keeps one kind of
//!   property, "a goal stays reachable", and asks only that the set cannot
//!   make a goal false.
//!
//! Under symmetry reduction the set is chosen at the representative the
//! search expands; the same choice moved to any member of its orbit meets
//! the same conditions, since clients are alike, and the goals are the
//! same on every member of an orbit (they read every client alike; the one
//! goal whose bits depend on which client it is, `queue_drains` with its
//! producers, belongs to the queue, never checked with symmetry).
//!
//! What it does not cover: the shortest counterexample of the reduced
//! graph can be longer than the full graph's (the reduction takes `c`'s
//! steps first). A stuck state the reduced graph finds is confirmed in
//! the full model (a search of everything reachable from it) before it is
//! reported.

use super::{Goal, ModelState, RecipeModel};
use crate::client::Phase;
use crate::ids::ClientIdx;
use crate::model::state::{Action, ClientSlot, Link, Status};
use crate::model::Shared;
use crate::msg::{Msg, Timer};
use crate::store::ensemble::LeaderLink;

/// The client whose local step `a` is, if it is one.
pub fn local_to(a: &Action) -> Option<ClientIdx> {
    match *a {
        Action::Deliver(c, Link::StoreToClient | Link::ResourceToClient)
        | Action::Timeout(c, _) => Some(c),
        Action::Deliver(_, Link::ClientToStore | Link::ClientToResource)
        | Action::Expire(_)
        | Action::ExpireKey { .. }
        | Action::EndLockDelay(_)
        | Action::CheckCritical(_)
        | Action::Crash(_)
        | Action::Restart(_)
        | Action::Pause(_)
        | Action::Resume(_)
        | Action::ResumeReconnect(_)
        | Action::Partition(_)
        | Action::Heal(_)
        | Action::Reconnect(_)
        | Action::GiveUpServer(_)
        | Action::LoseReply(_)
        | Action::Interrupt(_)
        | Action::Tick
        | Action::RestartMaster(_)
        | Action::ClockJump(_)
        | Action::Replicate
        | Action::Apply(_)
        | Action::Failover
        | Action::Elect
        | Action::StepDown
        | Action::Isolate(_)
        | Action::Mute(_)
        | Action::DropMuted(_)
        | Action::GiveUpLeader(_)
        | Action::Rejoin(_) => None,
    }
}

/// A part of the state that steps of different clients can share, as a bit
/// of a [`Footprint`]: the store with its timers, the guarded resource, the
/// property monitors, the fault budget.
const STORE: u8 = 1;
const RESOURCE: u8 = 1 << 1;
const MONITORS: u8 = 1 << 2;
const BUDGET: u8 = 1 << 3;

/// What a step enabled at a state reads and changes there of the parts
/// shared between clients ([`independent`] compares two).
///
/// What it changes is seen on its successor: the parts it did not change
/// are still shared with the state it left (a step copies only what it
/// changes). What it reads follows from what kind of step it is, and
/// covers whether it is enabled as well as what it does:
///
/// - a client's local step (a delivery to it, its timer) reads its own
///   slot only: its state, its timers, the head of an inbound link;
/// - a store step (a delivery to the store, a session's expiry) reads the
///   store and its timers, its client's slot (the head of its outbound
///   link; an expiry, whether the session's client is silent), and of the
///   others only whether each has crashed (nothing is sent to a crashed
///   client);
/// - a delivery to the resource reads the resource;
/// - a fault (crash, pause, partition, lost reply) reads the fault budget;
/// - a restart reads the budget and the store (it closes its old
///   connection's watches there);
/// - a resume, heal or reconnect reads the store (whether its session
///   carries on; a reconnect filters its client's whole inbound link by
///   it, which only a store step that writes the store appends to);
///
/// and a step that changes a part read it too. Monitors a step fed but
/// left as they were count as read: what they heed does not depend on
/// their state. Two steps that change the monitors, or one that changes
/// them beside one that feeds them, are not independent here, though some
/// would commute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    reads: u8,
    writes: u8,
}

impl Footprint {
    /// A step that reads and changes no shared part (a client's local step
    /// that stays local).
    pub const NONE: Footprint = Footprint {
        reads: 0,
        writes: 0,
    };
    /// A step that may read and change everything: one that replaced
    /// another client's slot other than as the store appends a watch event
    /// to it. No step of the model does; [`independent`] calls such a step
    /// independent of none.
    pub const ALL: Footprint = Footprint {
        reads: u8::MAX,
        writes: u8::MAX,
    };

    /// The footprint of step `a` from `last`, which led to `next`.
    pub fn of(last: &ModelState, a: &Action, next: &ModelState) -> Footprint {
        let Replaced {
            parts,
            another_client,
        } = match a.client() {
            Some(c) => Replaced::between(last, c, next),
            // A tick counts every client's clock down: it touches all.
            None => return Footprint::ALL,
        };
        // Monitors fed what left them as they were were read, not changed:
        // what they heed does not depend on their state, but what feeding
        // them changes does.
        let fed = parts & MONITORS;
        let monitors_changed = fed != 0 && *next.monitors != *last.monitors;
        let writes = parts & !MONITORS | if monitors_changed { MONITORS } else { 0 };
        // What it reads, and whether it may append to another client's
        // inbound link (only the store sends to others).
        let (reads, sends_to_others) = match a {
            Action::Deliver(_, Link::StoreToClient | Link::ResourceToClient)
            | Action::Timeout(..) => (0, false),
            Action::Deliver(_, Link::ClientToStore)
            | Action::Expire(_)
            | Action::ExpireKey { .. }
            | Action::EndLockDelay(_) => (STORE, true),
            Action::CheckCritical(_) => (STORE | BUDGET, true),
            Action::Deliver(_, Link::ClientToResource) => (RESOURCE, false),
            Action::Crash(_)
            | Action::Pause(_)
            | Action::Partition(_)
            | Action::LoseReply(_)
            | Action::Interrupt(_) => (BUDGET, false),
            Action::Resume(_)
            | Action::ResumeReconnect(_)
            | Action::Heal(_)
            | Action::Reconnect(_)
            | Action::GiveUpServer(_) => (STORE, false),
            // It spends the budget and closes its old connection's
            // watches in the store.
            Action::Restart(_) => (STORE | BUDGET, false),
            Action::Tick
            | Action::RestartMaster(_)
            | Action::ClockJump(_)
            | Action::Replicate
            | Action::Apply(_)
            | Action::Failover
            | Action::Elect
            | Action::StepDown
            | Action::Isolate(_)
            | Action::Mute(_)
            | Action::DropMuted(_)
            | Action::GiveUpLeader(_)
            | Action::Rejoin(_) => return Footprint::ALL,
        };
        if another_client && !sends_to_others {
            return Footprint::ALL;
        }
        Footprint {
            reads: reads | fed | writes,
            writes,
        }
    }

    /// Whether this footprint reads and changes everything `other` does:
    /// judged by it, a step is independent of no more steps than by
    /// `other`.
    pub fn covers(self, other: Footprint) -> bool {
        other.reads & !self.reads == 0 && other.writes & !self.writes == 0
    }
}

/// What a step replaced of what a state shares with its successor: the
/// shared parts (a step copies only what it changes, so a part not
/// replaced is the one it left), and whether it replaced another client's
/// slot than its own.
struct Replaced {
    parts: u8,
    another_client: bool,
}

impl Replaced {
    /// What the step of client `c` from `last` to `next` replaced.
    fn between(last: &ModelState, c: ClientIdx, next: &ModelState) -> Replaced {
        let ModelState {
            store,
            store_timers,
            resource,
            clients,
            budget,
            monitors,
            store_clock,
        } = next;
        let part = |bit: u8, same: bool| if same { 0 } else { bit };
        let parts = part(
            STORE,
            Shared::ptr_eq(store, &last.store) && Shared::ptr_eq(store_timers, &last.store_timers),
        ) | part(RESOURCE, Shared::ptr_eq(resource, &last.resource))
            | part(MONITORS, Shared::ptr_eq(monitors, &last.monitors))
            | part(BUDGET, *budget == last.budget)
            | part(STORE, *store_clock == last.store_clock);
        let another_client = clients.len() != last.clients.len()
            || clients
                .iter()
                .zip(&last.clients)
                .enumerate()
                .any(|(d, (x, y))| d != c as usize && !Shared::ptr_eq(x, y));
        Replaced {
            parts,
            another_client,
        }
    }
}

/// Whether two steps enabled at one state commute there: taken in either
/// order they reach the same state, and neither disables the other. Each
/// comes with its [`Footprint`] there.
///
/// They do when they concern different clients ([`Action::client`]: the
/// one whose slot a step reads or changes other than at the far ends of
/// its links) and neither changes a shared part the other reads. A step
/// touches another client's slot only as the store does, appending a
/// watch event to its inbound link (replies go to whoever asked, the
/// expiry notice to the session's client); a step of that client reads
/// its links at the heads and appends at the tails of its outbound ones,
/// so the two orders append the same, and a timer that may fire only while
/// no reply waits is not woken by a watch event. A crash of that client
/// clears its inbound link, and the store sends nothing to a crashed
/// client: either order leaves the link empty. The count of watch events
/// sent then differs by order, and only the monitors read it: a crash
/// always feeds them, so the two are independent only where neither
/// changes the monitors, and the monitors keep the widest wake-up as a
/// maximum, so a count that left them as they were leaves them so when
/// smaller too (a monitor that counted wake-ups exactly would have to make
/// such a store step read the clients it sends to). Everything else a
/// step reads is its own slot or the shared parts its footprint names. The
/// test `steps_called_independent_commute` checks this on every reachable
/// state of small configurations of every recipe, faults included, and
/// that each step's footprint after the other step is covered by the one
/// before (what the sleep sets carry).
///
/// One pair of steps concerning the same client is independent too: its
/// crash and a delivery of its message to the store or the resource. The
/// delivery reads of its slot only the head of that outbound link, which
/// a crash leaves in flight, and whether it has crashed; and what it sends
/// back, the crash clears from the inbound link or, after it, is not sent.
pub fn independent(x: &Action, x_at: Footprint, y: &Action, y_at: Footprint) -> bool {
    let apart =
        x.client() != y.client() || crash_and_its_delivery(x, y) || crash_and_its_delivery(y, x);
    apart
        && x_at != Footprint::ALL
        && y_at != Footprint::ALL
        && x_at.writes & y_at.reads == 0
        && y_at.writes & x_at.reads == 0
}

/// `x` crashes a client and `y` delivers that client's message to the
/// store or the resource.
fn crash_and_its_delivery(x: &Action, y: &Action) -> bool {
    matches!((x, y), (Action::Crash(c), Action::Deliver(d, Link::ClientToStore | Link::ClientToResource)) if c == d)
}

/// Whether timer `t`, armed at `slot`'s client, can neither come to fire
/// nor stop being able to by another actor's step: it is armed and
/// disarmed by the client alone, and whether it may fire depends on fields
/// of the slot only the client's own steps (and faults) change.
fn fires_by_itself(slot: &ClientSlot, t: Timer) -> bool {
    match t {
        Timer::Think
        | Timer::Hold
        | Timer::Deadline
        | Timer::Ping
        | Timer::Expiry(_)
        | Timer::KeyTtl { .. }
        | Timer::Validity
        | Timer::Renew
        | Timer::Wake
        | Timer::GiveUp
        | Timer::LockDelay { .. }
        | Timer::QueryWait { .. }
        | Timer::Kill => true,
        // It may fire once the request left and no reply to it came, which
        // the store's steps decide; unless nothing is outstanding, or the
        // reply is already waiting (only the client takes it off its link).
        Timer::Retry => {
            slot.state.pending.is_none()
                || slot
                    .from_store
                    .iter()
                    .any(|m| matches!(m, Msg::Reply { epoch, .. } if *epoch == slot.state.epoch))
        }
    }
}

impl RecipeModel {
    /// The clients whose enabled local steps form an ample set at `state`
    /// (conditions C0 and C1 of the module doc), fewest steps first, ties
    /// by name; `actions` are the steps enabled there.
    pub fn ample_candidates(&self, state: &ModelState, actions: &[Action]) -> Vec<ClientIdx> {
        // A follower cut off, muted, down or deposed has steps to come —
        // its drop, its give-up, an election, a step-down, a client's give-up
        // of it — that close connections, and so disable a client's
        // delivery: no client's steps are taken alone meanwhile.
        let ensemble_settled = state
            .store
            .ensemble
            .as_ref()
            .is_none_or(|e| e.followers.iter().all(|f| f.link == LeaderLink::Up));
        if !ensemble_settled {
            return Vec::new();
        }
        let mut found: Vec<(usize, ClientIdx)> = state
            .clients
            .iter()
            .enumerate()
            .filter(|(c, slot)| {
                let done = slot.state.phase == Phase::Done;
                // A Consul lock-delay its session started runs out by what
                // the client has heard and sent (`lock_delay_may_end`),
                // which its own steps change: its steps are left to the
                // full search while one is pending.
                let delays = state.store.consul.as_ref().map(|k| &k.delays);
                let owns_a_delay =
                    delays.is_some_and(|d| d.iter().any(|(_, s)| s.client as usize == *c));
                // A restart brings back only a crashed client, never a
                // running one: it cannot strike `c` first.
                let super::FaultBudget {
                    crashes,
                    pauses,
                    partitions,
                    lost_replies,
                    restarts: _,
                    master_restarts,
                    clock_jumps,
                    failovers,
                    interrupts,
                    critical_checks,
                    isolations,
                    mutes,
                } = state.budget;
                // A finished client is offered no crash, pause or partition;
                // a store fault is no client's, and is left to the full
                // search.
                let store_faults = master_restarts + clock_jumps + failovers + isolations + mutes;
                let no_fault_first = store_faults == 0
                    && (done || crashes == 0 && pauses == 0 && partitions == 0)
                    && (lost_replies == 0
                        || !matches!(slot.from_store.first(), Some(Msg::Reply { .. })))
                    && (interrupts == 0 || slot.state.phase != Phase::Acquiring)
                    && critical_checks == 0;
                slot.status == Status::Running
                    && !slot.partitioned
                    && !slot.missed_contact
                    && !slot.from_store.is_empty()
                    && (!slot.from_resource.is_empty() || slot.to_resource.is_empty())
                    && slot.timers.iter().all(|&t| fires_by_itself(slot, t))
                    && no_fault_first
                    && !owns_a_delay
            })
            .map(|(c, _)| {
                let c = c as ClientIdx;
                let steps = actions.iter().filter(|a| local_to(a) == Some(c)).count();
                (steps, c)
            })
            .collect();
        found.sort_unstable();
        found.into_iter().map(|(_, c)| c).collect()
    }

    /// Whether the local step of client `c` from `last` to `next` may be
    /// taken alone: it stays local (C2 for the monitors, and C1's "touches
    /// no one else"), and it cannot make any of the progress `goals` asked
    /// false (C4; none asked, for safety alone).
    pub fn may_take_alone(
        &self,
        last: &ModelState,
        c: ClientIdx,
        next: &ModelState,
        goals: &[Goal],
    ) -> bool {
        RecipeModel::stays_local(last, c, next)
            && goals.iter().all(|g| g.cannot_falsify(self, last, c, next))
    }

    /// Whether `next`, reached from `last` by a local step of client `c`,
    /// differs from it in `c`'s slot alone: the step fed the monitors
    /// nothing (it is invisible) and touched no other actor.
    pub fn stays_local(last: &ModelState, c: ClientIdx, next: &ModelState) -> bool {
        let Replaced {
            parts,
            another_client,
        } = Replaced::between(last, c, next);
        parts == 0 && !another_client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(reads: u8, writes: u8) -> Footprint {
        Footprint { reads, writes }
    }

    /// `covers` is what the sleep-set test holds a step's footprint after
    /// another step to (`steps_called_independent_commute`): a weaker
    /// `covers` would let that test pass footprints that grew.
    #[test]
    fn a_footprint_covers_what_reads_and_changes_no_more() {
        let reads_store = at(STORE, 0);
        let writes_store = at(STORE, STORE);
        let reads_resource = at(RESOURCE, 0);
        assert!(Footprint::ALL.covers(writes_store));
        assert!(writes_store.covers(writes_store));
        assert!(writes_store.covers(reads_store));
        assert!(writes_store.covers(Footprint::NONE));
        assert!(
            !reads_store.covers(writes_store),
            "changes a part the other only reads"
        );
        assert!(
            !writes_store.covers(reads_resource),
            "reads a part the other does not"
        );
        assert!(!Footprint::NONE.covers(reads_store));
        assert!(!writes_store.covers(Footprint::ALL));
    }

    /// Only the store writes into other clients' slots (a watch event on
    /// their inbound links). No other step of the model does; one that
    /// did would be independent of nothing.
    #[test]
    fn a_step_that_replaced_another_clients_slot_touches_everything() {
        use stateright::Model;
        let recipe = crate::recipes::parse("fair-predecessor").expect("a shipped recipe");
        let model = crate::model::ModelCfg::new(recipe, 2).into_model().unwrap();
        let last = model.init_states().remove(0);
        let mut next = last.clone();
        next.slot_mut(1).partitioned = true;
        let timer = Action::Timeout(0, Timer::Think);
        assert_eq!(Footprint::of(&last, &timer, &next), Footprint::ALL);
        let delivery = Action::Deliver(0, Link::ClientToStore);
        assert_ne!(Footprint::of(&last, &delivery, &next), Footprint::ALL);
        // Its own slot is its own business.
        let mut own = last.clone();
        own.slot_mut(0).partitioned = true;
        assert_eq!(Footprint::of(&last, &timer, &own), Footprint::NONE);
    }

    #[test]
    fn steps_are_independent_when_apart_and_neither_changes_what_the_other_reads() {
        let local = |c| Action::Deliver(c, Link::StoreToClient);
        let to_store = |c| Action::Deliver(c, Link::ClientToStore);
        let none = Footprint::NONE;
        let writes_store = at(STORE, STORE);
        let reads_store = at(STORE, 0);
        let feeds_monitors = at(MONITORS, 0);
        let changes_monitors = at(MONITORS, MONITORS);
        // Two clients' local steps.
        assert!(independent(&local(0), none, &local(1), none));
        // One client's two steps.
        assert!(!independent(
            &local(0),
            none,
            &Action::Timeout(0, Timer::Think),
            none
        ));
        // A store write beside another client's store read, either way
        // round; two reads are independent.
        assert!(!independent(
            &to_store(0),
            writes_store,
            &Action::Resume(1),
            reads_store
        ));
        assert!(!independent(
            &Action::Resume(1),
            reads_store,
            &to_store(0),
            writes_store
        ));
        assert!(independent(
            &Action::Resume(0),
            reads_store,
            &Action::Resume(1),
            reads_store
        ));
        // Monitors changed beside monitors fed; fed on both sides is fine.
        assert!(!independent(
            &local(0),
            changes_monitors,
            &local(1),
            feeds_monitors
        ));
        assert!(independent(
            &local(0),
            feeds_monitors,
            &local(1),
            feeds_monitors
        ));
        // Two clients' writes to the resource, two clients' faults (each
        // spends the budget).
        let to_resource = |c| Action::Deliver(c, Link::ClientToResource);
        let writes_resource = at(RESOURCE, RESOURCE);
        assert!(!independent(
            &to_resource(0),
            writes_resource,
            &to_resource(1),
            writes_resource
        ));
        let spends = at(BUDGET, BUDGET);
        assert!(!independent(
            &Action::Crash(0),
            spends,
            &Action::Pause(1),
            spends
        ));
        // A step that may touch everything is independent of nothing.
        assert!(!independent(&local(0), Footprint::ALL, &local(1), none));
        assert!(!independent(&local(0), none, &local(1), Footprint::ALL));
        // A client's crash and the delivery of its message, either order;
        // not its other steps.
        let crash = at(BUDGET | MONITORS, BUDGET | MONITORS);
        assert!(independent(
            &Action::Crash(0),
            crash,
            &to_store(0),
            writes_store
        ));
        assert!(independent(
            &to_store(0),
            writes_store,
            &Action::Crash(0),
            crash
        ));
        assert!(independent(
            &Action::Crash(0),
            crash,
            &to_resource(0),
            writes_resource
        ));
        assert!(!independent(&Action::Crash(0), crash, &local(0), none));
        assert!(!independent(&Action::Crash(1), crash, &to_store(0), crash));
    }
}
