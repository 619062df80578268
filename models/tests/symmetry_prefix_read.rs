//! Symmetry reduction and a prefix read without a limit (issue 47, item 7).
//!
//! etcd's `get(pfx)` lists keys in key order; a session's key is
//! `pfx/<lease id>`. Lease ids are the store's, counted in grant order
//! (`LeaseIds::InGrantOrder`, a recipe's default), so the listing's order
//! does not depend on which client is which: a recipe that reads the whole
//! prefix is checked under symmetry, with the verdicts it has without. One
//! that picks a key by its holder's client name is still refused, and so
//! is the listing with leases numbered by client (`LeaseIds::ByClient`,
//! the shipped recipes' setting: they never list).

use models::apps::election::ElectionRecipe;
use models::checker::{check, CheckError, CheckOptions, CheckResult, Status};
use models::ids::{Key, SessionId};
use models::model::{FaultBudget, ModelCfg};
use models::msg::{Keys, Kv, Range, Reply, Request, WatchEvent};
use models::properties::PropertyName;
use models::recipe::{Application, Face, LeaseIds, Recipe, RecipeRef, Setup, Step};
use models::recipes::etcd_election::{EtcdElection, State};
use models::recipes::names;

/// etcd-election whose `waitDeletes` reads the whole prefix with
/// `get(pfx)` (no sort, no limit) and finds the key to wait on itself,
/// instead of asking the store for the last one created before its own.
#[derive(Debug)]
struct ListingElection {
    /// How it picks the key to wait on from the listing.
    pick: Pick,
    /// How the store numbers leases.
    leases: LeaseIds,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pick {
    /// The last created before its own: what etcd's range answers, so the
    /// recipe behaves as etcd-election does.
    LastCreated,
    /// The older key whose lease belongs to the lowest-numbered client:
    /// which key that is depends on the clients' names.
    LowestClient,
}

impl ListingElection {
    /// The key `waitDeletes` waits on among `kvs`: one created before
    /// `leader_rev`.
    fn pick(&self, kvs: &[Kv], leader_rev: u64) -> Option<Kv> {
        let older = kvs.iter().filter(|kv| kv.create_revision < leader_rev);
        match self.pick {
            Pick::LastCreated => older.max_by_key(|kv| kv.create_revision),
            Pick::LowestClient => older.min_by_key(|kv| kv.lease.map(|l| l.client)),
        }
        .copied()
    }
}

/// A last-created range below a revision becomes `get(pfx)`; any other
/// request goes as the election sends it.
fn listing(step: Step) -> Step {
    match step {
        Step::Send(Request::Range(r)) if r.max_create_revision > 0 => {
            Step::Send(Request::Range(Range::of(r.keys)))
        }
        other => other,
    }
}

const ELECTION: EtcdElection = EtcdElection {
    check_own_key: false,
    serializable_observe: false,
};

impl Recipe for ListingElection {
    type State = State;

    fn application(&self) -> Application<'_, State> {
        Application::Election(self)
    }
    fn name(&self) -> &'static str {
        match self.pick {
            Pick::LastCreated => "listing-election",
            Pick::LowestClient => "lowest-client-election",
        }
    }
    fn face(&self) -> Face {
        Face::Etcd
    }
    fn setup(&self) -> Setup {
        Setup {
            leases: self.leases,
            ..ELECTION.setup()
        }
    }
    fn acquire(&self, session: SessionId) -> (State, Request) {
        ELECTION.acquire(session)
    }
    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        let picked;
        let reply = match (*st, reply) {
            (State::Ranging { leader_rev }, Reply::RangeResult { revision, kvs }) => {
                picked = Reply::RangeResult {
                    revision: *revision,
                    kvs: self.pick(kvs, leader_rev).into_iter().collect(),
                };
                &picked
            }
            _ => reply,
        };
        listing(ELECTION.on_reply(session, st, reply))
    }
    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        listing(ELECTION.on_event(st, event))
    }
    fn on_expired(&self, st: &mut State) -> Step {
        ELECTION.on_expired(st)
    }
    fn release(&self, session: SessionId, st: &State) -> Option<Request> {
        ELECTION.release(session, st)
    }
}

impl ElectionRecipe<State> for ListingElection {
    fn leader_seen(&self, st: &State) -> Option<SessionId> {
        ELECTION.leader_seen(st)
    }
}

fn model(pick: Pick, clients: u8, faults: FaultBudget) -> models::model::RecipeModel {
    model_with(pick, LeaseIds::InGrantOrder, clients, faults)
}

fn model_with(
    pick: Pick,
    leases: LeaseIds,
    clients: u8,
    faults: FaultBudget,
) -> models::model::RecipeModel {
    ModelCfg {
        faults,
        ..ModelCfg::new(RecipeRef::new(ListingElection { pick, leases }), clients)
    }
    .into_model()
    .unwrap()
}

fn checked(model: &models::model::RecipeModel, symmetry: bool) -> CheckResult {
    let r = check(
        model,
        CheckOptions {
            symmetry,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("symmetry {symmetry}: {e}"));
    assert!(r.complete, "symmetry {symmetry}: the search ran to its end");
    r
}

fn verdicts(r: &CheckResult) -> Vec<(PropertyName, Status)> {
    r.properties.iter().map(|p| (p.name, p.status)).collect()
}

/// The election reads the whole prefix, so it is checked under symmetry
/// with the verdicts it has without, in fewer states; and it behaves as
/// etcd-election (the phantom leader under an expiry).
///
/// The counts, pinned (ARCHITECTURE.md quotes them): the grant order is in
/// every state, so they are etcd-election's with leases numbered by client
/// (293 and 582, 7,597 and 45,355, 8,473 and 16,938) times about the
/// orders leases can be granted in; symmetry keeps its factor.
#[test]
fn an_unlimited_prefix_read_is_checked_under_symmetry() {
    for (clients, faults, counts) in [
        (2, FaultBudget::default(), (555, 1109)),
        (3, FaultBudget::default(), (41_882, 251_245)),
        (
            2,
            FaultBudget {
                pauses: 1,
                ..Default::default()
            },
            (17_197, 34_392),
        ),
    ] {
        let model = model(Pick::LastCreated, clients, faults);
        let reduced = checked(&model, true);
        let full = checked(&model, false);
        assert!(reduced.symmetry, "symmetry stayed on");
        assert_eq!(verdicts(&reduced), verdicts(&full), "{clients} clients");
        assert_eq!(
            (reduced.unique_states, full.unique_states),
            counts,
            "{clients} clients: states reduced, and without"
        );
        let shipped = ModelCfg {
            faults,
            ..ModelCfg::new(RecipeRef::new(ELECTION), clients)
        }
        .into_model()
        .unwrap();
        assert_eq!(
            verdicts(&reduced),
            verdicts(&checked(&shipped, true)),
            "{clients} clients: as etcd-election"
        );
    }
}

/// Waiting on the key of the lowest-numbered client depends on names: the
/// audit refuses it under symmetry, and without symmetry it is checked.
#[test]
fn picking_a_key_by_its_holders_name_is_still_refused() {
    let model = model(Pick::LowestClient, 3, FaultBudget::default());
    let err = check(&model, CheckOptions::default()).unwrap_err();
    assert!(
        matches!(err, CheckError::IdentityDependent { .. }),
        "expected the identity-dependence error, got: {err}"
    );
    let r = checked(&model, false);
    assert!(r.unique_states > 0);
}

/// With leases numbered by client, the listing comes in client order: which
/// key the election waits on does not change, but the reply it reads does
/// once clients swap names, and the audit refuses it under symmetry. (The
/// shipped etcd recipes number leases so, for fewer states: they never
/// list.)
#[test]
fn a_listing_in_client_order_is_refused() {
    let model = model_with(
        Pick::LastCreated,
        LeaseIds::ByClient,
        3,
        FaultBudget::default(),
    );
    let err = check(&model, CheckOptions::default()).unwrap_err();
    assert!(
        matches!(err, CheckError::IdentityDependent { .. }),
        "expected the identity-dependence error, got: {err}"
    );
}

/// The store numbers leases in grant order and the keys they name sort so:
/// the first lease granted, client 1's, lists before client 0's.
#[test]
fn lease_keys_list_in_grant_order() {
    let mut store = models::store::StoreState::default();
    let granted = |store: &mut models::store::StoreState, client| match store
        .apply(SessionId::first(client), &Request::LeaseGrant)
        .0
    {
        Reply::LeaseGranted { lease } => lease,
        other => panic!("lease grant answered {other}"),
    };
    let (first, second) = (granted(&mut store, 1), granted(&mut store, 0));
    assert_eq!((first.grant, second.grant), (1, 2));
    // Asked again (a lost reply), a grant is the same lease.
    assert_eq!(granted(&mut store, 1), first);
    for lease in [second, first] {
        let key = names::session_key(lease);
        store.apply(
            lease,
            &Request::Txn(Box::new(models::msg::Txn {
                compares: vec![],
                success: vec![models::msg::TxnOp::Put {
                    key,
                    value: models::ids::Data::Empty,
                    lease: Some(lease),
                }],
                failure: vec![],
            })),
        );
    }
    let Reply::RangeResult { kvs, .. } = store
        .apply(first, &Request::Range(Range::of(Keys::Prefix(names::KEYS))))
        .0
    else {
        panic!("a range answers a range result");
    };
    let listed: Vec<Key> = kvs.iter().map(|kv| kv.key).collect();
    assert_eq!(
        listed,
        vec![names::session_key(first), names::session_key(second)]
    );
    assert_eq!(listed[0].to_string(), "/lock/6900000100010000");
    assert_eq!(Key::parse("/lock/6900000100010000"), Some(listed[0]));
}

/// Between a grant and its reply the client still speaks in the id it
/// asked for; the store's lease, with its number, is the same session: the
/// client is not silent, so without a fault the lease cannot expire (it
/// did, and each grant after it numbered one more lease: the search never
/// ended), and the first lease granted is the one the reply names.
#[test]
fn a_lease_is_not_expired_before_its_grant_is_heard() {
    use models::model::{Action, Link};
    use stateright::Model;
    let model = model(Pick::LastCreated, 2, FaultBudget::default());
    let mut state = model.init_states().remove(0);
    let step = |state: &models::model::ModelState, a: Action| {
        let mut enabled = Vec::new();
        model.actions(state, &mut enabled);
        assert!(enabled.contains(&a), "{a:?} is enabled");
        model.next_state(state, a).expect("a step")
    };
    state = step(&state, Action::Deliver(0, Link::ClientToStore));
    let lease = state.store.sessions[0].0;
    assert_eq!(
        (lease.client, lease.grant),
        (0, 1),
        "the first lease granted"
    );
    assert_eq!(state.clients[0].state.session.grant, 0, "not heard yet");
    let mut enabled = Vec::new();
    model.actions(&state, &mut enabled);
    assert!(
        !enabled.iter().any(|a| matches!(a, Action::Expire(_))),
        "no expiry without a fault: {enabled:?}"
    );
    state = step(&state, Action::Deliver(0, Link::StoreToClient));
    assert_eq!(state.clients[0].state.session, lease, "the reply names it");
}
