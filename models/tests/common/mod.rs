//! Helpers the model tests share: every recipe variant under every kind of
//! fault, the safety properties of a configuration, its reachable states.

#![allow(dead_code)] // each test binary uses some of them

use models::checker::{CheckResult, Kind, Status};
use models::client::Policy;
use models::model::{FaultBudget, ModelCfg, ModelState, RecipeModel};
use models::properties::PropertyName;
use models::recipe::RecipeRef;
use models::recipes::REGISTRY;
use models::symmetry::fingerprint;
use stateright::Model;

/// Every recipe at every variant (a lock over several Redis masters on
/// three, as the tour checks it: on five its checks are ten times larger).
pub fn every_variant() -> Vec<RecipeRef> {
    REGISTRY
        .iter()
        .flat_map(|r| {
            std::iter::once((r.build)(None))
                .chain(r.variants.iter().map(|v| (r.build)(Some(v.name))))
        })
        .map(|r| r.on_masters(3).unwrap_or(r))
        .collect()
}

/// One configuration per kind of fault (and none); configurations a
/// recipe does not take are filtered out where they are used.
pub fn fault_kinds() -> Vec<(FaultBudget, Policy)> {
    let one = |f: fn(&mut FaultBudget)| {
        let mut b = FaultBudget::default();
        f(&mut b);
        b
    };
    vec![
        (FaultBudget::default(), Policy::Naive),
        (one(|b| b.crashes = 1), Policy::Naive),
        (one(|b| b.pauses = 1), Policy::Naive),
        (one(|b| b.partitions = 1), Policy::Naive),
        (one(|b| b.lost_replies = 1), Policy::Naive),
        (one(|b| b.pauses = 1), Policy::LeaseAware),
        // Consul's alone: a node check going critical, and a leader
        // failover after it, while its lock-delay runs.
        (
            one(|b| {
                b.critical_checks = 1;
                b.failovers = 1;
            }),
            Policy::Naive,
        ),
    ]
}

/// Two clients, every recipe at every variant, one configuration per
/// kind of fault (those the recipe takes).
pub fn two_clients_every_variant_and_fault() -> Vec<ModelCfg> {
    every_variant()
        .into_iter()
        .flat_map(|recipe| {
            fault_kinds()
                .into_iter()
                .map(move |(faults, policy)| ModelCfg {
                    faults,
                    policy,
                    ..ModelCfg::new(recipe.clone(), 2)
                })
        })
        .filter(|cfg| cfg.validate().is_ok())
        .collect()
}

/// Curator's lock, two clients, over three ZooKeeper servers: one
/// configuration with a mute of a follower, one with an isolation.
pub fn curator_lock_with_each_follower_fault() -> Vec<ModelCfg> {
    let one = |faults| ModelCfg {
        servers: 3,
        faults,
        ..ModelCfg::new(
            models::recipes::parse("fair-predecessor:curator").unwrap(),
            2,
        )
    };
    vec![
        one(FaultBudget {
            mutes: 1,
            ..FaultBudget::default()
        }),
        one(FaultBudget {
            isolations: 1,
            ..FaultBudget::default()
        }),
    ]
}

/// The properties of `cfg`'s application that are not progress.
pub fn safety(cfg: &ModelCfg) -> Vec<PropertyName> {
    PropertyName::of(cfg.recipe.app())
        .iter()
        .copied()
        .filter(|p| p.kind() != Kind::Progress)
        .collect()
}

/// States of `model` reachable without symmetry, breadth-first, up to
/// `limit`.
pub fn reachable(model: &RecipeModel, limit: usize) -> Vec<ModelState> {
    use std::collections::HashSet;
    let mut seen = HashSet::new();
    let mut states = model.init_states();
    seen.insert(fingerprint(&states[0]));
    let mut i = 0;
    let mut actions = Vec::new();
    while i < states.len() && states.len() < limit {
        actions.clear();
        model.actions(&states[i], &mut actions);
        for &a in &actions {
            if let Some(next) = model.next_state(&states[i], a) {
                if seen.insert(fingerprint(&next)) {
                    states.push(next);
                }
            }
        }
        i += 1;
    }
    states
}

/// The properties a check violated, sorted by name.
pub fn violated(r: &CheckResult) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = r
        .properties
        .iter()
        .filter(|p| p.status == Status::Violated)
        .map(|p| p.name.name())
        .collect();
    v.sort_unstable();
    v
}
