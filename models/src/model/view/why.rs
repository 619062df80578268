//! Where a counterexample breaks its property, and why, in one line: the
//! step after which the monitors no longer say it holds, told from what
//! the rule that broke reads — who believes, the acquisition the monitors
//! recorded and its ghost mark, the resource's log, the notifications
//! the step sent — in the application's own words (what its holds are
//! called: [`crate::apps::Spec::holders`]). Nothing here is written per
//! scenario: the sentence is the rule's, the names and numbers the path's.

use super::{believers, holds_phrase};
use crate::apps::Herd;
use crate::ids::{ClientIdx, SessionId};
use crate::model::{Action, ModelState, RecipeModel};
use crate::msg::Msg;
use crate::properties::{Kind, PropertyName};
use crate::recipe::Face;

/// Where and why `property` breaks along `states` (the initial state, then
/// one per step of `path`): the step's number (0 for the initial state)
/// and a one-line reason. An `always` property breaks at the first step
/// after which the monitors say it does not hold; a progress property at
/// the last state, from which its goal is out of reach. `None` for a
/// `sometimes` property (its counterexample is no path) or a path along
/// which the property holds.
pub fn breaking_step(
    model: &RecipeModel,
    states: &[ModelState],
    path: &[Action],
    property: PropertyName,
) -> Option<(usize, String)> {
    match property.kind() {
        Kind::Sometimes => None,
        Kind::Progress => Some((path.len(), unreachable_goal(property))),
        Kind::Always => {
            let step = states
                .iter()
                .position(|s| !s.monitors.holds(property))
                .filter(|&i| i > 0)?;
            let (before, after) = (&states[step - 1], &states[step]);
            let why = broken_rule(model, before, after, path[step - 1], property);
            Some((step, why))
        }
    }
}

fn client(c: ClientIdx) -> String {
    format!("client {c}")
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The sentence of the `always` rule `property` that `action` broke,
/// going from `before` to `after`.
fn broken_rule(
    model: &RecipeModel,
    before: &ModelState,
    after: &ModelState,
    action: Action,
    property: PropertyName,
) -> String {
    let rules = model.cfg.recipe.app().spec().rules;
    let phrase = holds_phrase(model);
    let actor = action.client().map_or_else(|| "a tick".to_string(), client);
    if Some(property) == rules.exclusion {
        return exclusion(before, after, phrase);
    }
    if Some(property) == rules.owns_key {
        return owns_key(model, after, property, phrase);
    }
    if Some(property) == rules.resource {
        return resource_order(after);
    }
    match property {
        PropertyName::HerdBound => {
            let woken = woken_clients(model, before, after, rules.herd == Herd::FutileWakeups);
            format!(
                "one store step wakes {} at once (herd_bound allows one): {}",
                woken.len(),
                and_list(&woken)
            )
        }
        PropertyName::HolderWritesAccepted => format!(
            "the resource refuses a write of {actor}, which alone {phrase} with the newest token"
        ),
        PropertyName::NoEarlyLeave => {
            format!("{actor} finishes leaving the barrier before every member has left")
        }
        PropertyName::NoLostItem => format!(
            "{actor} {} without processing an item it removed from the queue: the item is lost",
            if matches!(action, Action::Crash(_)) {
                "crashes"
            } else {
                "goes on"
            }
        ),
        PropertyName::NoDuplicateItem => {
            format!("{actor} processes an item that was processed already")
        }
        PropertyName::ReentryImmediate => format!(
            "{actor}'s second acquire, while it holds, does not complete in the step that asks \
             for it"
        ),
        PropertyName::ObservedLeaderCurrent => format!(
            "{actor}, an observer, names a leader on a store message sent while that leader \
             did not own the election's first key"
        ),
        PropertyName::RwExclusion => {
            let now: Vec<String> = believers(after).iter().map(|b| client(b.0)).collect();
            format!(
                "a writer holds beside another holder: {} each {phrase}",
                and_list(&now)
            )
        }
        PropertyName::PermitsBound => {
            let now: Vec<String> = believers(after).iter().map(|b| client(b.0)).collect();
            let permits = model.cfg.permits;
            format!(
                "{} each {phrase} at once: {} clients, and the semaphore has {permits} permit{}",
                and_list(&now),
                now.len(),
                if permits == 1 { "" } else { "s" }
            )
        }
        // The shared rules under another application's names, and the
        // properties that are no `always` rule: not reached for a
        // property of this application that broke.
        PropertyName::MutualExclusion
        | PropertyName::SingleLeader
        | PropertyName::HolderOwnsKey
        | PropertyName::ElectedWithKey
        | PropertyName::NoEarlyPass
        | PropertyName::FifoOrder
        | PropertyName::ResourceExclusion
        | PropertyName::LeaderExclusion
        | PropertyName::HandOff
        | PropertyName::ReadersShare
        | PropertyName::Progress
        | PropertyName::FollowersAgree
        | PropertyName::LeaderElected
        | PropertyName::AllPass
        | PropertyName::QueueDrains
        // The simulator's run-level check: the checker never judges it.
        | PropertyName::FaultFreeSessionLoss
        | PropertyName::SyncIsCurrent => format!("{property} breaks at {actor}'s step"),
    }
}

/// Two believers at once: the one that came to believe in this step, and
/// the ones that still did.
fn exclusion(before: &ModelState, after: &ModelState, phrase: &str) -> String {
    let was: Vec<ClientIdx> = believers(before).iter().map(|b| b.0).collect();
    let now = believers(after);
    let (new, old): (Vec<_>, Vec<_>) = now.iter().partition(|(c, _)| !was.contains(c));
    let named = |bs: &[&(ClientIdx, u64)]| -> Vec<String> {
        bs.iter()
            .map(|(c, t)| format!("{} (token {t})", client(*c)))
            .collect()
    };
    format!(
        "{} {phrase} while {} still does: two at once",
        and_list(&named(&new)),
        and_list(&named(&old))
    )
}

/// The acquisition that was decided on a message without the ghost mark:
/// who, and what its session owned in the store then.
fn owns_key(
    model: &RecipeModel,
    after: &ModelState,
    property: PropertyName,
    phrase: &str,
) -> String {
    let Some(a) = after.monitors.acquisitions.iter().rev().find(|a| !a.owned) else {
        return format!("{property} breaks");
    };
    let who = client(a.client);
    match property {
        PropertyName::NoEarlyPass => {
            format!("{who} {phrase} on a store message sent before every member had entered")
        }
        PropertyName::FifoOrder => {
            format!("{who} takes an item that was not at the queue's head when the store answered")
        }
        // The lock's and the election's rule (the others are no owns-key
        // rule of any application, so not reached).
        PropertyName::HolderOwnsKey
        | PropertyName::ElectedWithKey
        | PropertyName::MutualExclusion
        | PropertyName::ResourceExclusion
        | PropertyName::HerdBound
        | PropertyName::HolderWritesAccepted
        | PropertyName::HandOff
        | PropertyName::Progress
        | PropertyName::SingleLeader
        | PropertyName::LeaderExclusion
        | PropertyName::FollowersAgree
        | PropertyName::LeaderElected
        | PropertyName::AllPass
        | PropertyName::NoEarlyLeave
        | PropertyName::NoLostItem
        | PropertyName::NoDuplicateItem
        | PropertyName::QueueDrains
        | PropertyName::ReentryImmediate
        | PropertyName::RwExclusion
        | PropertyName::ReadersShare
        | PropertyName::PermitsBound
        | PropertyName::FaultFreeSessionLoss
        | PropertyName::SyncIsCurrent
        | PropertyName::ObservedLeaderCurrent => {
            let session = after.clients[a.client as usize].state.session;
            let entry = match model.cfg.recipe.face() {
                Face::ZooKeeper => "node",
                Face::Etcd | Face::Redis | Face::Consul => "key",
            };
            let held = if owns_an_entry(after, session) {
                format!("while its {entry} was not first in line")
            } else {
                format!("while its session owned no {entry}")
            };
            format!(
                "{who} {phrase} (token {}) on a store reply sent {held}",
                a.token
            )
        }
    }
}

/// Whether `session` owns a node (ephemeral) or a key (by its lease).
fn owns_an_entry(state: &ModelState, session: SessionId) -> bool {
    let store = &state.store;
    store
        .zk
        .nodes
        .iter()
        .any(|(_, n)| n.ephemeral_owner == Some(session))
        || store.etcd.kvs.iter().any(|k| k.lease == Some(session))
}

/// The accepted write out of the acquisitions' order: the last one, and
/// the write of another client before it.
fn resource_order(after: &ModelState) -> String {
    let log = &after.resource.log;
    let Some(last) = log.last() else {
        return "the resource accepts a write out of order".into();
    };
    let earlier = log.iter().rev().skip(1).find(|a| a.client != last.client);
    let after_whom = earlier.map_or("a write of no acquisition".to_string(), |e| {
        format!("{}'s (token {})", client(e.client), e.token)
    });
    format!(
        "the resource accepts {}'s write (token {}) after {after_whom}, out of the order the \
         store decided the acquisitions",
        client(last.client),
        last.token
    )
}

/// The watch notifications in `q`; with `futile`, only those whose mark
/// says the recipient cannot proceed on them (a barrier's herd).
fn notifies(q: &[Msg], futile: bool) -> usize {
    q.iter()
        .filter(|m| matches!(m, Msg::Notify { owns_first, .. } if !(futile && *owns_first)))
        .count()
}

/// The clients a step queued a watch notification for (with `futile`,
/// one they cannot proceed on), as `client N`, once per notification.
fn woken_clients(
    model: &RecipeModel,
    before: &ModelState,
    after: &ModelState,
    futile: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for (c, (a, b)) in after.clients.iter().zip(before.clients.iter()).enumerate() {
        if !model.client.counts_in_herd(c as ClientIdx) {
            continue;
        }
        let sent = notifies(&a.from_store, futile).saturating_sub(notifies(&b.from_store, futile));
        out.extend((0..sent).map(|_| client(c as ClientIdx)));
    }
    out
}

/// What a progress property's last state lacks: its goal is out of reach.
fn unreachable_goal(property: PropertyName) -> String {
    let goal = match property {
        PropertyName::Progress => "a state where every live client has finished",
        PropertyName::LeaderElected => "a state with a leader (or with every live client finished)",
        PropertyName::FollowersAgree => "a state where every live follower sees the current leader",
        PropertyName::AllPass => "a state where every live member has passed",
        PropertyName::QueueDrains => {
            "a state where the producers have finished and the queue is drained"
        }
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
        | PropertyName::FifoOrder
        | PropertyName::ReentryImmediate
        | PropertyName::RwExclusion
        | PropertyName::ReadersShare
        | PropertyName::PermitsBound
        | PropertyName::FaultFreeSessionLoss
        | PropertyName::SyncIsCurrent
        | PropertyName::ObservedLeaderCurrent => "the property's goal",
    };
    format!("from this state no sequence of steps reaches {goal}")
}
