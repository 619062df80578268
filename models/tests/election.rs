//! What the model checker must show about the election recipes: every
//! property holds without faults; a pause breaks `single_leader` for every
//! recipe and `elected_with_key` only for etcd's shipped `Campaign` (the
//! phantom leader); epoch fencing keeps `leader_exclusion`; CURATOR-696 needs
//! a reconnect, and its fix holds; the herd is unfair-election's alone.

use models::checker::{check, replay, CheckOptions, CheckResult, Status};
use models::client::Policy;
use models::ids::SessionId;
use models::model::{Action, FaultBudget, ModelCfg};
use models::msg::{Reply, Request, WatchEvent};
use models::properties::PropertyName;
use models::recipe::{App, Application, ElectionRecipe, Face, Recipe, RecipeRef, Setup, Step};
use models::recipes::{self, zk_unfair_election};

/// Every election recipe and variant.
const ELECTIONS: [&str; 7] = [
    "zk-unfair-election",
    "zk-unfair-election:getdata",
    "zk-fair-election",
    "zk-fair-election:curator-696",
    "zk-fair-election:curator",
    "etcd-election",
    "etcd-election:checked",
];

fn run(name: &str, clients: u8, faults: FaultBudget, fencing: bool, policy: Policy) -> CheckResult {
    run_recipe(
        recipes::parse(name).unwrap(),
        clients,
        faults,
        fencing,
        policy,
    )
}

fn run_recipe(
    recipe: RecipeRef,
    clients: u8,
    faults: FaultBudget,
    fencing: bool,
    policy: Policy,
) -> CheckResult {
    let cfg = ModelCfg {
        faults,
        fencing,
        policy,
        ..ModelCfg::new(recipe, clients)
    };
    cfg.validate().unwrap();
    check(&cfg.into_model().unwrap(), CheckOptions::default()).expect("clients are alike")
}

fn status(r: &CheckResult, name: &str) -> Status {
    let name = PropertyName::parse(name).expect("a property name");
    r.property(name).expect("judged by this check").status
}

fn pause() -> FaultBudget {
    FaultBudget {
        pauses: 1,
        ..Default::default()
    }
}

fn crash() -> FaultBudget {
    FaultBudget {
        crashes: 1,
        ..Default::default()
    }
}

fn partition() -> FaultBudget {
    FaultBudget {
        partitions: 1,
        ..Default::default()
    }
}

#[test]
fn election_recipes_report_the_election_properties_and_no_lock_ones() {
    let r = run(
        "zk-fair-election",
        2,
        FaultBudget::default(),
        false,
        Policy::Naive,
    );
    let names: Vec<&str> = r.properties.iter().map(|p| p.name.name()).collect();
    assert_eq!(
        names,
        [
            "single_leader",
            "elected_with_key",
            "leader_exclusion",
            "herd_bound",
            "hand_off",
            "leader_elected",
            "followers_agree"
        ]
    );
    for name in ELECTIONS {
        assert_eq!(recipes::parse(name).unwrap().app(), App::Election, "{name}");
    }
}

/// Three clients, no faults: everything holds (but unfair election's herd).
/// Unique state counts are pinned: a change to a recipe or the model that
/// moves them should be a change someone meant.
#[test]
fn without_faults_every_election_property_holds() {
    let pinned = [1_883, 1_479, 9_803, 6_819, 7_917, 7_597, 8_767];
    for (name, states) in ELECTIONS.iter().zip(pinned) {
        let r = run(name, 3, FaultBudget::default(), false, Policy::Naive);
        assert!(r.complete, "{name}");
        for p in &r.properties {
            let expected = if p.name.name() == "herd_bound" && name.starts_with("zk-unfair") {
                Status::Violated
            } else {
                Status::Holds
            };
            assert_eq!(p.status, expected, "{name}: {}", p.name);
        }
        assert_eq!(r.unique_states, states, "{name}");
    }
}

#[test]
fn a_pause_breaks_single_leader_everywhere_and_elected_with_key_only_in_etcd_v3_5() {
    for clients in [2, 3] {
        for name in ELECTIONS {
            if clients == 3 && name.starts_with("zk-fair") {
                continue; // millions of states; 2 clients show the same
            }
            let r = run(name, clients, pause(), false, Policy::Naive);
            assert_eq!(
                status(&r, "single_leader"),
                Status::Violated,
                "{name} ×{clients}"
            );
            let phantom = name == "etcd-election";
            assert_eq!(
                status(&r, "elected_with_key"),
                if phantom {
                    Status::Violated
                } else {
                    Status::Holds
                },
                "{name} ×{clients}"
            );
        }
    }
}

/// The shortest `elected_with_key` counterexample of etcd's shipped
/// `Campaign` is the phantom leader: the candidate's lease expires, then the
/// empty `waitDeletes` range makes it leader with no key in the store.
#[test]
fn the_phantom_leader_leads_with_no_key() {
    let recipe = recipes::parse("etcd-election").unwrap();
    let cfg = ModelCfg {
        faults: pause(),
        ..ModelCfg::new(recipe, 2)
    };
    let model = cfg.into_model().unwrap();
    let r = check(&model, CheckOptions::default()).unwrap();
    let path = r.path(PropertyName::ElectedWithKey).unwrap().to_vec();
    let expired: Vec<SessionId> = path
        .iter()
        .filter_map(|a| match a {
            Action::Expire(s) => Some(*s),
            _ => None,
        })
        .collect();
    let end = replay(&model, &path).unwrap();
    let leaders: Vec<_> = end.holders().collect();
    assert_eq!(leaders.len(), 1);
    let leader = &end.clients[leaders[0] as usize].state;
    assert!(
        expired.contains(&leader.session),
        "the leader's lease expired on the way"
    );
    assert!(
        end.store
            .etcd
            .kvs
            .iter()
            .all(|kv| kv.lease != Some(leader.session)),
        "the leader has no key"
    );
}

#[test]
fn epoch_fencing_keeps_leader_exclusion_under_a_pause_and_a_crash() {
    for name in ELECTIONS {
        let paused = run(name, 2, pause(), true, Policy::Naive);
        assert_eq!(
            status(&paused, "leader_exclusion"),
            Status::Holds,
            "{name} pause"
        );
        let crashed = run(name, 3, crash(), true, Policy::Naive);
        assert_eq!(
            status(&crashed, "leader_exclusion"),
            Status::Holds,
            "{name} crash"
        );
        // Without fencing the deposed leader's writes land: it can fail.
        let unfenced = run(name, 2, pause(), false, Policy::Naive);
        assert_eq!(
            status(&unfenced, "leader_exclusion"),
            Status::Violated,
            "{name}"
        );
    }
}

/// CURATOR-696: the leader is cut off, Curator's own expiry replaces the
/// session without closing it, and RECONNECTED re-lists with the old path.
#[test]
fn curator_696_double_leader_needs_a_reconnect_and_the_fix_holds() {
    let r = run(
        "zk-fair-election:curator-696",
        2,
        partition(),
        false,
        Policy::LeaseAware,
    );
    assert_eq!(status(&r, "single_leader"), Status::Violated);
    assert_eq!(status(&r, "elected_with_key"), Status::Violated);
    let path = r.path(PropertyName::SingleLeader).unwrap().to_vec();
    assert!(path.iter().any(|a| matches!(a, Action::Partition(_))));
    assert!(path.iter().any(|a| matches!(a, Action::Expire(_))));

    for fixed in ["zk-fair-election:curator", "zk-fair-election"] {
        let r = run(fixed, 2, partition(), false, Policy::LeaseAware);
        assert_eq!(status(&r, "single_leader"), Status::Holds, "{fixed}");
        assert_eq!(status(&r, "elected_with_key"), Status::Holds, "{fixed}");
        assert_eq!(status(&r, "herd_bound"), Status::Holds, "{fixed}");
    }
}

#[test]
fn only_the_unfair_election_has_a_herd() {
    for name in ELECTIONS {
        let r = run(name, 3, FaultBudget::default(), false, Policy::Naive);
        let expected = if name.starts_with("zk-unfair") {
            Status::Violated
        } else {
            Status::Holds
        };
        assert_eq!(status(&r, "herd_bound"), expected, "{name}");
    }
}

/// unfair election with its followers' watch left off: they wait for a
/// deletion nobody tells them of. `leader_elected` and `followers_agree`
/// must both catch it (a follower left behind forever agrees with nobody).
#[derive(Debug)]
struct DeafFollowers(zk_unfair_election::ZkUnfairElection);

impl Recipe for DeafFollowers {
    type State = zk_unfair_election::State;
    fn name(&self) -> &'static str {
        "deaf-followers"
    }
    fn face(&self) -> Face {
        Face::ZooKeeper
    }
    fn setup(&self) -> Setup {
        self.0.setup()
    }
    fn application(&self) -> Application<'_, Self::State> {
        Application::Election(self)
    }
    fn acquire(&self, s: SessionId) -> (Self::State, Request) {
        self.0.acquire(s)
    }
    fn on_reply(&self, s: SessionId, st: &mut Self::State, reply: &Reply) -> Step {
        match self.0.on_reply(s, st, reply) {
            Step::Send(Request::Exists { path, .. }) => {
                Step::Send(Request::Exists { path, watch: false })
            }
            step => step,
        }
    }
    fn on_event(&self, st: &mut Self::State, ev: &WatchEvent) -> Step {
        self.0.on_event(st, ev)
    }
    fn release(&self, s: SessionId, st: &Self::State) -> Option<Request> {
        self.0.release(s, st)
    }
}

impl ElectionRecipe<zk_unfair_election::State> for DeafFollowers {
    fn leader_seen(&self, st: &zk_unfair_election::State) -> Option<SessionId> {
        self.0.leader_seen(st)
    }
}

#[test]
fn progress_properties_catch_followers_left_behind() {
    let deaf = RecipeRef::new(DeafFollowers(Default::default()));
    let r = run_recipe(deaf, 2, FaultBudget::default(), false, Policy::Naive);
    assert_eq!(status(&r, "leader_elected"), Status::Violated);
    assert_eq!(status(&r, "followers_agree"), Status::Violated);
    assert_eq!(status(&r, "single_leader"), Status::Holds);
}

/// Followers of the ZooKeeper recipes name the leader their last answer
/// showed: some reachable state has one leader and two followers that both
/// name it (and `followers_agree` holds there), and some has a leader and
/// a follower that does not name it yet (and `followers_agree` fails).
#[test]
fn waiting_followers_name_the_current_leader() {
    use stateright::Model;
    for name in ["zk-unfair-election", "zk-fair-election"] {
        let model = ModelCfg::new(recipes::parse(name).unwrap(), 3)
            .into_model()
            .unwrap();
        let recipe = recipes::parse(name).unwrap();
        let mut seen = std::collections::HashSet::new();
        let mut queue = std::collections::VecDeque::from(model.init_states());
        let mut found = false;
        let mut behind = false;
        while let Some(state) = queue.pop_front() {
            if found && behind {
                break;
            }
            if !seen.insert(state.clone()) {
                continue;
            }
            let leaders: Vec<_> = state.holders().collect();
            let followers: Vec<_> = state
                .clients
                .iter()
                .filter(|c| c.state.phase == models::client::Phase::Acquiring)
                .collect();
            if let ([leader], [_, _]) = (&leaders[..], &followers[..]) {
                let session = state.clients[*leader as usize].state.session;
                let names_leader = |f: &models::model::ClientSlot| {
                    f.state.recipe.as_ref().and_then(|r| recipe.leader_seen(r)) == Some(session)
                };
                if followers.iter().all(|f| names_leader(f)) {
                    assert!(model.followers_agree(&state), "{name}");
                    found = true;
                } else if followers.iter().any(|f| f.is_live() && !names_leader(f)) {
                    assert!(!model.followers_agree(&state), "{name}");
                    behind = true;
                }
            }
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            for a in actions {
                queue.extend(model.next_state(&state, a));
            }
        }
        assert!(
            found,
            "{name}: no state where two followers name the leader"
        );
        assert!(
            behind,
            "{name}: no state where a follower has not seen the leader"
        );
    }
}

/// A lost reply is sent again. etcd's `Campaign` txn that went through
/// fails its compare when resent (the key is there, ours) and takes the
/// key's create revision from the failure branch's range: it campaigns on
/// and every property holds. The ZooKeeper recipes: the fair one finds its
/// node by its guid and holds too; the unfair one's resent create finds
/// `/leader` there, its own, and follows itself for good.
#[test]
fn a_lost_reply_is_resent_and_only_the_unfair_election_stalls() {
    let lost = FaultBudget {
        lost_replies: 1,
        ..Default::default()
    };
    for name in ELECTIONS {
        let r = run(name, 2, lost, false, Policy::Naive);
        assert!(
            r.properties
                .iter()
                .any(|p| p.name.name() == "leader_elected"),
            "{name}: every election property is judged"
        );
        for p in &r.properties {
            let stalls = name.starts_with("zk-unfair")
                && matches!(p.name.name(), "leader_elected" | "followers_agree");
            let expected = if stalls {
                Status::Violated
            } else {
                Status::Holds
            };
            assert_eq!(p.status, expected, "{name}: {}", p.name);
        }
    }
}

/// A lease-aware client gives its session up when cut off and reconnects
/// with a new one. The recipe text's client closes the old session, so its
/// node goes at once, and starts over; Curator's fixed latch leaves the old
/// session to expire, finds its old node lowest but owned by that session,
/// deletes it (`reset()`) and runs again. Both must still elect a leader
/// every follower names. Pinned: which of the two ran shows here.
#[test]
fn after_a_new_session_both_fair_elections_still_elect_a_leader() {
    for (name, states) in [
        ("zk-fair-election", 78_932),
        ("zk-fair-election:curator", 159_683),
    ] {
        let r = run(name, 2, partition(), false, Policy::LeaseAware);
        for p in [
            "single_leader",
            "elected_with_key",
            "leader_elected",
            "followers_agree",
        ] {
            assert_eq!(status(&r, p), Status::Holds, "{name}: {p}");
        }
        assert_eq!(r.unique_states, states, "{name}");
    }
}
