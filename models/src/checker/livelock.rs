//! Livelock: a client that keeps sending requests forever while the run
//! goes round in a circle. Every progress goal also requires that there is
//! none: a goal that stays reachable does not make a run that never
//! reaches it progress.
//!
//! What is checked, exactly: the explored graph has no *fair* cycle on
//! which a live client's request reaches the store. A cycle is fair
//! (weak fairness, per action) when every step enabled at all of its
//! states is taken on it — a delivery, a timer, a paused process resuming,
//! a cut link healing, a silent session expiring — except faults (a crash,
//! a pause, a partition, a lost reply), which a run never owes. So a
//! client polling while the holder it waits for is never scheduled is not
//! a livelock: the holder's step is enabled throughout and never taken.
//!
//! Within one strongly connected component, a cycle through all of its
//! states and steps exists; it is fair exactly when every step enabled at
//! all of the component's states is taken somewhere in it, and any fair
//! cycle in the component is no fairer than that one. So the check is
//! exact per component: [`super::cycles`] finds the components with a
//! cycle, and each is replayed — its states recomputed from their
//! shortest paths, its steps labelled by the model — and judged.
//!
//! Under symmetry reduction the component is one of representatives, whose
//! steps a renaming on the way may name differently: a component that looks
//! fair is judged again in real names — its lap taken until the real run
//! returns to the very state it began in (at most [`MOST_LAPS`] laps), and
//! that run must be fair — or it is not reported (a livelock missed under
//! symmetry, never a false one). The counterexample is a lasso: a path to
//! the component, then that many laps through a request.

use super::{walk, CheckError, Graph};
use crate::model::{Action, Link, ModelState, RecipeModel};
use crate::msg::Msg;
use crate::symmetry::{fingerprint, representative};
use std::collections::{HashMap, HashSet, VecDeque};

/// A livelock found on the graph: the steps (positions among each
/// searched state's actions) of a path to a cycle and once round it.
pub struct Lasso {
    pub steps: Vec<u16>,
    /// `steps[repeats_from..]` is the lap, which can be taken forever.
    pub repeats_from: usize,
}

/// A step between two states of one component.
struct Inner {
    from: usize,
    position: u16,
    action: Action,
    to: usize,
}

/// The first component (in the order of its least state) that holds a
/// fair cycle through a live client's request, as a lasso.
pub fn find(
    model: &RecipeModel,
    graph: &Graph,
    symmetry: bool,
    components: &[Vec<u32>],
) -> Result<Option<Lasso>, CheckError> {
    for members in components {
        let states = member_states(model, graph, symmetry, members)?;
        let inner = inner_steps(model, symmetry, &states);
        if !is_fair(model, &states, &inner) {
            continue;
        }
        let Some(request) = inner
            .iter()
            .position(|s| is_live_request(&states[s.from], s.action))
        else {
            continue;
        };
        let mut steps = graph.steps_to(members[0]);
        let repeats_from = steps.len();
        let once = lap(&inner, &inner[request]);
        // Under symmetry the component's steps are named by representatives,
        // which a lap may rename: judged again in real names, laps taken
        // until the real run closes, it must still be fair.
        let laps = match symmetry {
            false => 1,
            true => match laps_fair_in_real_names(model, &steps, &once)? {
                Some(k) => k,
                None => continue,
            },
        };
        for _ in 0..laps {
            steps.extend_from_slice(&once);
        }
        return Ok(Some(Lasso {
            steps,
            repeats_from,
        }));
    }
    Ok(None)
}

/// The searched state of each member, from its shortest path.
fn member_states(
    model: &RecipeModel,
    graph: &Graph,
    symmetry: bool,
    members: &[u32],
) -> Result<Vec<ModelState>, CheckError> {
    members
        .iter()
        .map(|&i| Ok(walk(model, symmetry, &graph.steps_to(i), &format!("state {i}"))?.state))
        .collect()
}

/// The state the search keeps for `state`: itself, or its representative.
fn searched(symmetry: bool, state: ModelState) -> ModelState {
    match symmetry {
        true => representative(&state).0,
        false => state,
    }
}

/// Every step from a member to a member (the model's own steps: a superset
/// of the graph's under the partial-order reduction, all of them real).
fn inner_steps(model: &RecipeModel, symmetry: bool, states: &[ModelState]) -> Vec<Inner> {
    let index: HashMap<u64, usize> = states
        .iter()
        .enumerate()
        .map(|(k, s)| (fingerprint(s), k))
        .collect();
    let mut inner = Vec::new();
    let mut actions = Vec::new();
    for (from, state) in states.iter().enumerate() {
        actions.clear();
        stateright::Model::actions(model, state, &mut actions);
        for (position, &action) in actions.iter().enumerate() {
            let Some(next) = stateright::Model::next_state(model, state, action) else {
                continue;
            };
            if let Some(&to) = index.get(&fingerprint(&searched(symmetry, next))) {
                inner.push(Inner {
                    from,
                    position: position as u16,
                    action,
                    to,
                });
            }
        }
    }
    inner
}

/// Faults are the run's misfortunes, never owed, and so is a restart (the
/// budget allows one; a crashed process may as well stay down); every other
/// step, enabled long enough, is taken.
fn owed(action: Action) -> bool {
    match action {
        Action::Crash(_)
        | Action::Pause(_)
        | Action::Partition(_)
        | Action::LoseReply(_)
        | Action::Interrupt(_)
        | Action::CheckCritical(_)
        | Action::Restart(_)
        | Action::RestartMaster(_)
        | Action::ClockJump(_)
        | Action::Failover
        | Action::Isolate(_)
        | Action::Mute(_) => false,
        Action::Deliver(..)
        | Action::Timeout(..)
        | Action::Expire(_)
        | Action::ExpireKey { .. }
        | Action::EndLockDelay(_)
        | Action::Replicate
        | Action::Apply(_)
        | Action::Elect
        | Action::StepDown
        | Action::GiveUpLeader(_)
        | Action::DropMuted(_)
        | Action::Rejoin(_)
        | Action::Resume(_)
        | Action::ResumeReconnect(_)
        | Action::Heal(_)
        | Action::Reconnect(_)
        | Action::GiveUpServer(_)
        // Time passes.
        | Action::Tick => true,
    }
}

/// The most laps a livelock found under symmetry is taken to close in real
/// names: a lap renames clients by a permutation, which is the identity
/// after as many laps as its order, at most 6 for up to six clients (a
/// longer cycle is not reported: a livelock missed, never a false one).
const MOST_LAPS: usize = 6;

/// How many laps of `lap` (positions, after `prefix`) bring the real run
/// back to the very state it began the first in, if that run is fair in
/// real names: every owed step enabled at all of its states taken on it.
/// `None` if no number of laps up to [`MOST_LAPS`] closes it, or it is
/// unfair: the representatives' names made an unfair cycle look fair (a
/// client that polls while another, renamed on the way, waits to be
/// scheduled), and no livelock is reported from it.
fn laps_fair_in_real_names(
    model: &RecipeModel,
    prefix: &[u16],
    lap: &[u16],
) -> Result<Option<usize>, CheckError> {
    let mut steps = prefix.to_vec();
    for _ in 0..MOST_LAPS {
        steps.extend_from_slice(lap);
    }
    let real = walk(model, true, &steps, "a livelock's lap")?.path;
    let Some(start) = super::replay(model, &real[..prefix.len()]) else {
        return Ok(None);
    };
    let mut states = vec![start.clone()];
    for (k, chunk) in real[prefix.len()..].chunks(lap.len()).enumerate() {
        for &a in chunk {
            let next = stateright::Model::next_state(model, states.last().expect("a state"), a);
            let Some(next) = next else {
                return Ok(None);
            };
            states.push(next);
        }
        if *states.last().expect("a state") == start {
            let taken = &real[prefix.len()..prefix.len() + (k + 1) * lap.len()];
            let fair = fair(model, &states, taken.iter().copied());
            return Ok(fair.then_some(k + 1));
        }
    }
    Ok(None)
}

/// Whether the component's full cycle is fair: every owed step enabled at
/// all of its states is taken on one of its inner steps.
fn is_fair(model: &RecipeModel, states: &[ModelState], inner: &[Inner]) -> bool {
    fair(model, states, inner.iter().map(|s| s.action))
}

/// Whether a cycle through `states` taking `taken` is fair: every owed step
/// enabled at all of the states is among those taken, and so is every
/// step owed under strong fairness enabled at any of them.
fn fair(model: &RecipeModel, states: &[ModelState], taken: impl Iterator<Item = Action>) -> bool {
    let mut actions = Vec::new();
    let mut always: Option<HashSet<Action>> = None;
    let mut ever: HashSet<Action> = HashSet::new();
    for state in states {
        actions.clear();
        stateright::Model::actions(model, state, &mut actions);
        ever.extend(actions.iter().copied().filter(|&a| strongly_owed(a)));
        let here: HashSet<Action> = actions.iter().copied().filter(|&a| owed(a)).collect();
        always = Some(match always {
            None => here,
            Some(before) => before.intersection(&here).copied().collect(),
        });
    }
    let taken: HashSet<Action> = taken.collect();
    always.is_some_and(|always| always.is_subset(&taken)) && ever.is_subset(&taken)
}

/// A Redis key's TTL runs out by the server's clock whatever its setter
/// does, and a Consul lock-delay by the leader's whatever its old owner
/// does: enabled again and again (while a client polls), it is taken.
/// (A cycle of a component that avoids the states where it is enabled is
/// not looked for: a livelock missed, never a false one.)
fn strongly_owed(action: Action) -> bool {
    matches!(action, Action::ExpireKey { .. } | Action::EndLockDelay(_))
}

/// Whether `action` at `state` hands the store a live client's request.
pub fn is_live_request(state: &ModelState, action: Action) -> bool {
    let Action::Deliver(c, Link::ClientToStore) = action else {
        return false;
    };
    let slot = &state.clients[c as usize];
    slot.is_live() && matches!(slot.to_store.first(), Some(Msg::Request { .. }))
}

/// Once round the component from its least state through `through`: the
/// positions of a shortest way to its start, the step itself, and a
/// shortest way back.
fn lap(inner: &[Inner], through: &Inner) -> Vec<u16> {
    let mut steps = way(inner, 0, through.from);
    steps.push(through.position);
    steps.extend(way(inner, through.to, 0));
    steps
}

/// The positions of a shortest way from member `from` to member `to` over
/// the inner steps (one exists: the members are strongly connected).
fn way(inner: &[Inner], from: usize, to: usize) -> Vec<u16> {
    let mut leaving: HashMap<usize, Vec<usize>> = HashMap::new();
    for (e, step) in inner.iter().enumerate() {
        leaving.entry(step.from).or_default().push(e);
    }
    let mut came_by: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([from]);
    let mut seen = HashSet::from([from]);
    while let Some(k) = queue.pop_front() {
        if k == to {
            break;
        }
        for &e in leaving.get(&k).into_iter().flatten() {
            if seen.insert(inner[e].to) {
                came_by.insert(inner[e].to, e);
                queue.push_back(inner[e].to);
            }
        }
    }
    let mut steps = Vec::new();
    let mut k = to;
    while k != from {
        let e = came_by[&k];
        steps.push(inner[e].position);
        k = inner[e].from;
    }
    steps.reverse();
    steps
}

/// Re-checks a livelock counterexample in real names: `path` replays, its
/// lap hands the store a live client's request, and the lap ends in the
/// state it began in (up to a renaming of clients, under symmetry).
pub fn confirm(model: &RecipeModel, symmetry: bool, path: &[Action], repeats_from: usize) -> bool {
    let (Some(start), Some(_)) = (
        super::replay(model, &path[..repeats_from]),
        super::replay(model, path),
    ) else {
        return false;
    };
    let mut state = start.clone();
    // The lap's steps, taken from where it begins.
    let mut requested = false;
    for &a in &path[repeats_from..] {
        requested |= is_live_request(&state, a);
        match stateright::Model::next_state(model, &state, a) {
            Some(next) => state = next,
            None => return false,
        }
    }
    let back = fingerprint(&searched(symmetry, start)) == fingerprint(&searched(symmetry, state));
    requested && back
}
