//! The progress goals: from every reachable state, a state where the goal
//! holds must stay reachable.
//!
//! A goal reads the store and, of each client, its marks only
//! ([`ClientMarks`], each read when a goal asks for it). Most goals read
//! less: a few *rising bits* of each client, in which they are monotone
//! (a bit that turns true never turns the goal false) — "every live client
//! is done" is true of a client that finished, and stays so whatever else
//! that client's step changed. So a client's step that leaves the store
//! alone and turns none of its bits from true to false cannot make such a
//! goal false, wherever in a run it is taken; a goal that reads the marks
//! themselves ([`GoalReads::Marks`]) can only be sure of a step that
//! leaves them ([`GoalMarks`], all of them) as they were. The partial-order
//! reduction keeps progress verdicts on that ([`super::commute`]).

use super::{ClientSlot, ModelState, RecipeModel};
use crate::client::Phase;
use crate::ids::{ClientIdx, SessionId};
use crate::model::MAX_CLIENTS;
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

/// A state as a goal that reads the marks sees it: each client's marks
/// (a goal of rising bits is handed the store beside them).
pub struct GoalView<'a> {
    model: &'a RecipeModel,
    state: &'a ModelState,
}

impl<'a> GoalView<'a> {
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
    model: &'a RecipeModel,
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
        self.slot.state.is_holding()
    }

    /// Still campaigning (or waiting for the lock).
    pub fn acquiring(&self) -> bool {
        self.slot.state.phase == Phase::Acquiring
    }

    pub fn session(&self) -> SessionId {
        self.slot.state.session
    }

    /// An election's observer (a constant of the run: no step changes it).
    pub fn observes(&self) -> bool {
        self.model.client.observes(self.slot.state.session.client)
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

/// A progress property: its name, and the states it asks to stay
/// reachable, written over what it reads.
#[derive(Clone, Copy)]
pub struct Goal {
    pub name: PropertyName,
    pub reads: GoalReads,
}

/// What a goal reads of a state, and so which client steps cannot make it
/// false.
#[derive(Clone, Copy)]
pub enum GoalReads {
    /// The store, and of each client its `bits` (up to eight, from its
    /// marks); `holds` sees nothing else and is monotone in every bit:
    /// turning one from false to true never turns it from true to false
    /// (`goals_are_monotone_in_their_rising_bits` checks it).
    Rising {
        bits: fn(&RecipeModel, ClientIdx, &ClientMarks) -> u8,
        holds: fn(&RecipeModel, &StoreState, &[u8]) -> bool,
    },
    /// The store and any of the clients' marks.
    Marks(fn(&RecipeModel, &GoalView) -> bool),
}

/// The rising bits of a goal that reads "live client `c` is done".
const DONE_OR_GONE: u8 = 1;
/// … "client `c` is live and holds" (a leader).
const LIVE_HOLDER: u8 = 2;

impl Goal {
    /// Whether the goal holds at `state`.
    pub fn holds(&self, model: &RecipeModel, state: &ModelState) -> bool {
        match self.reads {
            GoalReads::Rising { bits, holds } => {
                let mut read = [0u8; MAX_CLIENTS as usize];
                let n = state.clients.len();
                for (c, m) in model.goal_view(state).clients().enumerate() {
                    read[c] = bits(model, c as ClientIdx, &m);
                }
                holds(model, &state.store, &read[..n])
            }
            GoalReads::Marks(holds) => holds(model, &model.goal_view(state)),
        }
    }

    /// Whether client `c`'s step from `last` to `next`, which leaves the
    /// store alone (the caller's to compare), cannot make the goal false:
    /// it turns none of the client's rising bits from true to false, or,
    /// for a goal that reads the marks, leaves them as they were. What a
    /// local step does to `c`'s marks depends on `c`'s state and the message
    /// or timer it takes, so this holds wherever the step is taken (C4 in
    /// [`super::commute`]).
    pub fn cannot_falsify(
        &self,
        model: &RecipeModel,
        last: &ModelState,
        c: ClientIdx,
        next: &ModelState,
    ) -> bool {
        let i = c as usize;
        let before = ClientMarks {
            model,
            slot: &last.clients[i],
        };
        let after = ClientMarks {
            model,
            slot: &next.clients[i],
        };
        match self.reads {
            GoalReads::Rising { bits, .. } => {
                bits(model, c, &before) & !bits(model, c, &after) == 0
            }
            GoalReads::Marks(_) => before.all() == after.all(),
        }
    }
}

impl RecipeModel {
    /// `state` as the goals see it.
    pub fn goal_view<'a>(&'a self, state: &'a ModelState) -> GoalView<'a> {
        GoalView { model: self, state }
    }

    /// The progress properties of the recipe's application, each with its
    /// goal.
    pub fn progress_goals(&self) -> Vec<Goal> {
        PropertyName::of(self.cfg.recipe.app())
            .iter()
            .filter_map(|&name| {
                let reads = match name {
                    PropertyName::Progress | PropertyName::AllPass => GoalReads::Rising {
                        bits: |_, _, m| done_or_gone(m),
                        holds: |_, _, bits| all_done_or_gone(bits),
                    },
                    PropertyName::LeaderElected => GoalReads::Rising {
                        bits: |_, _, m| {
                            done_or_gone(m) | (u8::from(m.live() && m.holding()) * LIVE_HOLDER)
                        },
                        holds: |_, _, bits| {
                            all_done_or_gone(bits) || bits.iter().any(|b| b & LIVE_HOLDER != 0)
                        },
                    },
                    PropertyName::FollowersAgree => GoalReads::Marks(|_, v| followers_agree(v)),
                    PropertyName::QueueDrains => GoalReads::Rising {
                        bits: |model, c, m| match model.client.produces(c) {
                            true => done_or_gone(m),
                            false => u8::from(!m.live() || !m.holding()) * DONE_OR_GONE,
                        },
                        holds: |_, store, bits| store.line_is_empty() && all_done_or_gone(bits),
                    },
                    PropertyName::MutualExclusion
                    | PropertyName::RwExclusion
                    | PropertyName::ReadersShare
                    | PropertyName::PermitsBound
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
                    | PropertyName::FifoOrder
                    | PropertyName::ReentryImmediate
                    | PropertyName::FaultFreeSessionLoss
                    | PropertyName::SyncIsCurrent
                    | PropertyName::ObservedLeaderCurrent => return None,
                };
                Some(Goal { name, reads })
            })
            .collect()
    }

    /// Every live follower (a client still campaigning, or an observer) has
    /// seen the current leader, and there is exactly one; or nobody
    /// follows; or there is no leader and only observers follow.
    pub fn followers_agree(&self, state: &ModelState) -> bool {
        followers_agree(&self.goal_view(state))
    }
}

/// The client is crashed, has finished its rounds, or is an observer,
/// which has no rounds to finish (a bit that, once true, no step of the
/// client's own turns false).
fn done_or_gone(m: &ClientMarks) -> u8 {
    u8::from(!m.live() || m.done() || m.observes()) * DONE_OR_GONE
}

/// Every client's `DONE_OR_GONE` bit is set (for a queue's consumer, the
/// bit says it holds no item).
fn all_done_or_gone(bits: &[u8]) -> bool {
    bits.iter().all(|b| b & DONE_OR_GONE != 0)
}

fn followers_agree(view: &GoalView) -> bool {
    let mut leaders = view.clients().filter(|c| c.live() && c.holding());
    let leader = match (leaders.next(), leaders.next()) {
        (Some(l), None) => Some(l.session()),
        _ => None,
    };
    // An observer names the last leader `Observe` sent, never "none": with
    // no leader, whatever it names is as good as it can be.
    view.clients().filter(|c| c.live()).all(|c| {
        !c.acquiring()
            || match leader {
                Some(_) => c.leader_seen() == leader,
                None => c.observes(),
            }
    })
}
