//! The progress goals: from every reachable state, a state where the goal
//! holds must stay reachable.
//!
//! A goal reads the store and, of each client, its marks only
//! ([`ClientMarks`], each read when a goal asks for it). So a client's
//! step that leaves its marks ([`GoalMarks`], all of them) and the store
//! as they were leaves every goal as it was, wherever in a run it is
//! taken: the partial-order reduction keeps progress verdicts on that
//! ([`super::commute`]).

use super::{ClientSlot, LockModel, LockState};
use crate::client::Phase;
use crate::ids::{ClientIdx, SessionId};
use crate::properties::PropertyName;
use crate::store::StoreState;

/// Every mark the progress goals can read of a client, to compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoalMarks {
    /// Not crashed.
    pub live: bool,
    pub done: bool,
    pub holding: bool,
    /// Still campaigning (or waiting for the lock).
    pub acquiring: bool,
    pub session: SessionId,
    /// Election recipes: the leader as the store's answers have shown it.
    pub leader_seen: Option<SessionId>,
}

/// A state as the goals see it: the store, and each client's marks.
pub struct GoalView<'a> {
    model: &'a LockModel,
    state: &'a LockState,
}

impl<'a> GoalView<'a> {
    pub fn store(&self) -> &'a StoreState {
        &self.state.store
    }

    /// The clients' marks, in client order.
    pub fn clients(&self) -> impl Iterator<Item = ClientMarks<'a>> + 'a {
        let model = self.model;
        self.state
            .clients
            .iter()
            .map(move |slot| ClientMarks { model, slot })
    }
}

/// A client as the goals see it: each mark is read off its slot when a
/// goal asks (most goals decide on the first few), and nothing else is.
#[derive(Clone, Copy)]
pub struct ClientMarks<'a> {
    model: &'a LockModel,
    slot: &'a ClientSlot,
}

impl ClientMarks<'_> {
    /// Not crashed.
    pub fn live(&self) -> bool {
        self.slot.is_live()
    }

    pub fn done(&self) -> bool {
        self.slot.state.phase == Phase::Done
    }

    pub fn holding(&self) -> bool {
        self.slot.state.holds_lock()
    }

    /// Still campaigning (or waiting for the lock).
    pub fn acquiring(&self) -> bool {
        self.slot.state.phase == Phase::Acquiring
    }

    pub fn session(&self) -> SessionId {
        self.slot.state.session
    }

    /// Election recipes: the leader as the store's answers have shown it.
    pub fn leader_seen(&self) -> Option<SessionId> {
        let recipe = &self.model.client.recipe;
        self.slot
            .state
            .recipe
            .as_ref()
            .and_then(|r| recipe.leader_seen(r))
    }

    /// Every mark.
    pub fn all(&self) -> GoalMarks {
        GoalMarks {
            live: self.live(),
            done: self.done(),
            holding: self.holding(),
            acquiring: self.acquiring(),
            session: self.session(),
            leader_seen: self.leader_seen(),
        }
    }
}

/// A progress property: its name and the states it asks to stay reachable.
pub type Goal = (PropertyName, fn(&LockModel, &GoalView) -> bool);

impl LockModel {
    /// Every mark the goals can read of `slot`'s client.
    pub fn goal_marks(&self, slot: &ClientSlot) -> GoalMarks {
        ClientMarks { model: self, slot }.all()
    }

    /// Whether client `c`'s step from `last` to `next` left its marks as
    /// they were (the store is the caller's to compare).
    pub fn keeps_goals(&self, last: &LockState, c: ClientIdx, next: &LockState) -> bool {
        let c = c as usize;
        self.goal_marks(&last.clients[c]) == self.goal_marks(&next.clients[c])
    }

    /// `state` as the goals see it.
    pub fn goal_view<'a>(&'a self, state: &'a LockState) -> GoalView<'a> {
        GoalView { model: self, state }
    }

    /// The progress properties of the recipe's application, each with its
    /// goal.
    pub fn progress_goals(&self) -> Vec<Goal> {
        PropertyName::of(self.cfg.recipe.app())
            .iter()
            .filter_map(|&p| -> Option<Goal> {
                match p {
                    PropertyName::Progress | PropertyName::AllPass => {
                        Some((p, |_, v| all_live_done(v)))
                    }
                    PropertyName::LeaderElected => Some((p, |_, v| {
                        all_live_done(v) || v.clients().any(|c| c.live() && c.holding())
                    })),
                    PropertyName::FollowersAgree => Some((p, |_, v| followers_agree(v))),
                    PropertyName::QueueDrains => Some((p, LockModel::queue_drained)),
                    PropertyName::MutualExclusion
                    | PropertyName::ResourceExclusion
                    | PropertyName::HerdBound
                    | PropertyName::HolderOwnsKey
                    | PropertyName::HolderWritesAccepted
                    | PropertyName::HandOff
                    | PropertyName::SingleLeader
                    | PropertyName::ElectedWithKey
                    | PropertyName::LeaderExclusion
                    | PropertyName::NoEarlyPass
                    | PropertyName::NoEarlyLeave
                    | PropertyName::NoLostItem
                    | PropertyName::NoDuplicateItem
                    | PropertyName::FifoOrder => None,
                }
            })
            .collect()
    }

    /// A queue has drained: every live producer finished, no element is
    /// left in the store, and no live consumer is still processing an item.
    pub fn queue_drained(&self, view: &GoalView) -> bool {
        view.store().zk.children().next().is_none()
            && view.clients().enumerate().all(|(c, m)| {
                !m.live()
                    || if self.client.produces(c as ClientIdx) {
                        m.done()
                    } else {
                        !m.holding()
                    }
            })
    }

    /// Every live follower (a client still campaigning) has seen the current
    /// leader, and there is exactly one; or nobody follows.
    pub fn followers_agree(&self, state: &LockState) -> bool {
        followers_agree(&self.goal_view(state))
    }
}

/// Every live client has finished its rounds.
fn all_live_done(view: &GoalView) -> bool {
    view.clients().all(|c| !c.live() || c.done())
}

fn followers_agree(view: &GoalView) -> bool {
    let mut leaders = view.clients().filter(|c| c.live() && c.holding());
    let leader = match (leaders.next(), leaders.next()) {
        (Some(l), None) => Some(l.session()),
        _ => None,
    };
    view.clients()
        .filter(|c| c.live())
        .all(|c| !c.acquiring() || leader.is_some() && c.leader_seen() == leader)
}
