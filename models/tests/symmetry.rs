//! Symmetry is checked, not assumed: the representative of a state does not
//! depend on how its clients are named, and a recipe whose steps depend on
//! which client is which is refused under symmetry reduction and checked
//! correctly without it.

use models::checker::{check, CheckError, CheckOptions, Status};
use models::ids::Data;
use models::ids::{Child, ClientIdx, SessionId, ZPath};
use models::model::{FaultBudget, ModelCfg};
use models::msg::{Reply, Request, WatchEvent};
use models::properties::PropertyName;
use models::recipe::{Face, Recipe, RecipeRef, Setup, Step};
use models::recipes::names;
use models::relabel::{Perm, Relabel};
use models::symmetry::representative;
use proptest::prelude::*;
use stateright::Model;

/// Lock recipes whose steps depend on which client is which.
#[derive(Debug)]
enum ByName {
    /// Takes the lock when its node has the smallest *guid* — the lowest
    /// client index — instead of the lowest sequence.
    LowestGuid,
    /// A safe lock (the lowest sequence holds it; a waiter is never woken,
    /// which safety does not mind) in which client 0 only looks: it lists
    /// the children and waits. No property is violated, so no
    /// counterexample's replay can show that clients are not alike: only
    /// the checker's audit can.
    ClientZeroLooks,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum NameState {
    Creating,
    Listing(Child),
    Holding(Child),
}

impl Relabel for NameState {
    fn relabel(&mut self, p: &Perm) {
        match self {
            NameState::Listing(c) | NameState::Holding(c) => c.relabel(p),
            NameState::Creating => {}
        }
    }
}

impl Recipe for ByName {
    type State = NameState;
    fn name(&self) -> &'static str {
        match self {
            ByName::LowestGuid => "lowest-name",
            ByName::ClientZeroLooks => "client-zero-looks",
        }
    }
    fn face(&self) -> Face {
        Face::ZooKeeper
    }
    fn setup(&self) -> Setup {
        Setup::lock_dir()
    }
    fn acquire(&self, session: SessionId) -> (NameState, Request) {
        let request = match (self, session.client) {
            (ByName::ClientZeroLooks, 0) => Request::GetChildren {
                path: names::LOCK,
                watch: false,
            },
            (ByName::LowestGuid | ByName::ClientZeroLooks, _) => Request::Create {
                path: names::new_member(Some(session)),
                ephemeral: true,
                sequential: true,
                data: Data::Empty,
            },
        };
        (NameState::Creating, request)
    }
    fn on_reply(&self, _: SessionId, st: &mut NameState, reply: &Reply) -> Step {
        match (*st, reply) {
            (NameState::Creating, Reply::Children(_)) => Step::Wait,
            (
                NameState::Creating,
                Reply::Created {
                    path: ZPath::Node { child: c, .. },
                    ..
                },
            ) => {
                *st = NameState::Listing(*c);
                Step::Send(Request::GetChildren {
                    path: names::LOCK,
                    watch: false,
                })
            }
            (NameState::Listing(mine), Reply::Children(children)) => {
                let lowest = match self {
                    ByName::LowestGuid => {
                        children.iter().map(|c| c.guid).min().flatten() == mine.guid
                    }
                    ByName::ClientZeroLooks => {
                        children.iter().map(|c| c.seq).min() == Some(mine.seq)
                    }
                };
                if lowest {
                    *st = NameState::Holding(mine);
                    Step::Acquired { token: 1 }
                } else {
                    Step::Wait
                }
            }
            _ => Step::Unexpected,
        }
    }
    fn on_event(&self, _: &mut NameState, _: &WatchEvent) -> Step {
        Step::Wait
    }
    fn release(&self, _: SessionId, st: &NameState) -> Option<Request> {
        match st {
            NameState::Holding(c) => Some(Request::Delete {
                path: names::member(*c),
                version: None,
            }),
            NameState::Creating | NameState::Listing(_) => None,
        }
    }
}

#[test]
fn a_recipe_that_depends_on_names_is_refused_under_symmetry() {
    let model = ModelCfg::new(RecipeRef::new(ByName::LowestGuid), 2)
        .into_model()
        .unwrap();
    let err = check(&model, CheckOptions::default()).unwrap_err();
    let CheckError::IdentityDependent { found } = &err else {
        panic!("expected the identity-dependence error, got: {err}");
    };
    assert!(!found.is_empty());
    let message = err.to_string();
    assert!(message.contains("without symmetry reduction"), "{message}");
    assert!(
        !message.contains("--"),
        "the library names no flag: {message}"
    );
    assert!(message.contains("which client is which"), "{message}");

    // Without symmetry the verdict is right: a later client with a lower
    // name also takes the lock.
    let r = check(
        &model,
        CheckOptions {
            symmetry: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        r.property(PropertyName::MutualExclusion).unwrap().status,
        Status::Violated
    );
}

#[test]
fn a_safe_recipe_that_treats_one_client_apart_is_refused_by_the_audit() {
    let model = ModelCfg::new(RecipeRef::new(ByName::ClientZeroLooks), 3)
        .into_model()
        .unwrap();
    let safety =
        CheckOptions::default().asking(&[models::properties::PropertyName::MutualExclusion]);
    // Without symmetry: safe, so there is no path whose replay could
    // tell the clients apart.
    let r = check(
        &model,
        CheckOptions {
            symmetry: false,
            ..safety
        },
    )
    .unwrap();
    assert!(r.complete);
    assert_eq!(
        r.property(PropertyName::MutualExclusion).unwrap().status,
        Status::Holds
    );
    // With it, the audit of the first states finds client 0 apart.
    let err = check(&model, safety).unwrap_err();
    let CheckError::IdentityDependent { found } = &err else {
        panic!("expected the identity-dependence error, got: {err}");
    };
    assert!(found.contains("swap"), "{found}");
}

/// Walks `steps` pseudo-random steps from the initial state.
fn reachable(model: &models::model::RecipeModel, choices: &[usize]) -> models::model::ModelState {
    let mut state = model.init_states().remove(0);
    let mut actions = Vec::new();
    for &c in choices {
        actions.clear();
        model.actions(&state, &mut actions);
        if actions.is_empty() {
            break;
        }
        let a = actions[c % actions.len()];
        if let Some(next) = model.next_state(&state, a) {
            state = next;
        }
    }
    state
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For every shipped recipe, under faults: relabelling a reachable state
    /// does not change its representative.
    #[test]
    fn the_representative_does_not_depend_on_names(
        recipe in 0..models::recipes::REGISTRY.len(),
        clients in 2u8..=4,
        choices in proptest::collection::vec(0usize..64, 0..80),
        perm_seed in any::<u64>(),
    ) {
        let recipe = (models::recipes::REGISTRY[recipe].build)(None);
        let cfg = ModelCfg {
            faults: FaultBudget { crashes: 1, pauses: 1, lost_replies: 1, ..Default::default() },
            ..ModelCfg::new(recipe, clients)
        };
        let model = cfg.into_model().unwrap();
        let state = reachable(&model, &choices);
        // A permutation drawn from the seed.
        let mut perm: Vec<ClientIdx> = (0..clients as ClientIdx).collect();
        let mut x = perm_seed;
        for i in (1..perm.len()).rev() {
            let j = (x % (i as u64 + 1)) as usize;
            x /= i as u64 + 1;
            perm.swap(i, j);
        }
        let mut relabelled = state.clone();
        relabelled.relabel(&perm);
        prop_assert_eq!(representative(&relabelled).0, representative(&state).0);
    }
}

/// Relabelling a state moves each client's slot to its new index: the slot
/// of old client `i` is the new client `p[i]`'s, with every name in it
/// renamed (its session first of all).
#[test]
fn relabelling_moves_each_slot_to_its_new_name() {
    let model = ModelCfg::new((models::recipes::REGISTRY[0].build)(None), 4)
        .into_model()
        .unwrap();
    let state = model.init_states().remove(0);
    for p in [[1, 2, 3, 0], [3, 2, 1, 0], [0, 1, 3, 2], [2, 0, 1, 3]] {
        let mut relabelled = state.clone();
        relabelled.relabel(&p);
        for (old, &new) in p.iter().enumerate() {
            let slot = &relabelled.clients[new as usize];
            assert_eq!(slot.state.session.client, new);
            let mut expected = (*state.clients[old]).clone();
            expected.relabel(&p);
            assert_eq!(**slot, expected, "old client {old}'s slot under {p:?}");
        }
    }
}

/// A map that is not a permutation of the clients is refused, never
/// half-applied (nor looped over).
#[test]
#[should_panic(expected = "a state is relabelled by a permutation of its clients")]
fn relabelling_by_a_non_permutation_is_refused() {
    let model = ModelCfg::new((models::recipes::REGISTRY[0].build)(None), 3)
        .into_model()
        .unwrap();
    let mut state = model.init_states().remove(0);
    state.relabel(&[0, 0, 1]);
}

/// Every client name in the store's newer request and reply shapes is
/// renamed: a multi's paths (guids) and data (sessions), its results'
/// paths and owners. A relabelling that missed one would leave a state
/// that names a client symmetry moved elsewhere.
#[test]
fn relabelling_renames_clients_in_every_request_shape() {
    use models::msg::{Keys, MultiOp, MultiResult, Range, Stat};
    let (a, b) = (SessionId::first(0), SessionId::first(1));
    let node = |s: SessionId| {
        names::member(Child {
            seq: Some(3),
            prefix: names::MEMBER,
            guid: Some(s),
        })
    };
    let shapes = |s: SessionId| {
        let stat = Stat {
            czxid: 2,
            mzxid: 3,
            version: 1,
            cversion: 0,
            ephemeral_owner: Some(s),
            data: Data::Session(s),
        };
        (
            vec![
                Request::WatchRange {
                    keys: Keys::One(names::session_key(s)),
                    start_revision: 2,
                },
                Request::Range(Range::of(Keys::One(names::session_key(s)))),
                Request::LeaseTimeToLive {
                    lease: s,
                    keys: true,
                },
                Request::Multi(vec![
                    MultiOp::Check {
                        path: node(s),
                        version: None,
                    },
                    MultiOp::Create {
                        path: names::new_member(Some(s)),
                        ephemeral: true,
                        sequential: true,
                        data: Data::Session(s),
                    },
                    MultiOp::Delete {
                        path: node(s),
                        version: Some(1),
                    },
                    MultiOp::SetData {
                        path: node(s),
                        data: Data::Session(s),
                        version: None,
                    },
                ]),
            ],
            vec![
                Reply::Multi(vec![
                    MultiResult::Created {
                        path: node(s),
                        czxid: 4,
                    },
                    MultiResult::Set(stat),
                ]),
                Reply::LeaseTtl {
                    alive: true,
                    keys: vec![names::session_key(s)],
                },
            ],
        )
    };
    let (mut requests, mut replies) = shapes(a);
    requests.relabel(&[1, 0]);
    replies.relabel(&[1, 0]);
    assert_eq!((requests, replies), shapes(b));
}

/// A store's range watches are renamed with it: the watcher, and a client
/// named in the key it watches.
#[test]
fn relabelling_a_store_renames_its_range_watches() {
    use models::msg::Keys;
    use models::store::StoreState;
    let (a, b) = (SessionId::first(0), SessionId::first(1));
    let watching = |own: SessionId, other: u16| {
        let mut store = StoreState::default();
        let mut sink = Vec::new();
        let one = Keys::One(names::session_key(own));
        store.etcd.watch_range(own.client, one, 1, &mut sink);
        store
            .etcd
            .watch_range(other, Keys::Prefix(names::KEYS), 1, &mut sink);
        store
    };
    let mut renamed = watching(a, 1);
    renamed.relabel(&[1, 0]);
    assert_eq!(renamed, watching(b, 0));
}
