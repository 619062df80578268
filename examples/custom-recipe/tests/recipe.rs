//! The example recipe through lockstep's public API: the model checker,
//! the simulator and the herd sweep, with results that a wrong recipe (or a
//! wrong closed form, or a wrong relabelling) would fail.

use custom_recipe::{herd_baseline, recipe, scenario, UnfairGetData, HEALTHY, SHIPPED_TWIN};
use models::checker::{check, CheckError, CheckOptions, CheckResult, Status};
use models::ids::SessionId;
use models::model::{FaultBudget, ModelCfg};
use models::msg::{Reply, Request, WatchEvent};
use models::properties::PropertyName;
use models::recipe::{Face, Recipe, RecipeRef, Setup, Step};
use sim::engine::simulate;

fn try_check(
    recipe: RecipeRef,
    faults: FaultBudget,
    fencing: bool,
    symmetry: bool,
) -> Result<CheckResult, CheckError> {
    let mut cfg = ModelCfg::new(recipe, 3);
    cfg.faults = faults;
    cfg.fencing = fencing;
    let model = cfg.into_model().unwrap();
    let opts = CheckOptions {
        symmetry,
        ..CheckOptions::default()
    };
    check(&model, opts)
}

fn check_3(recipe: RecipeRef, faults: FaultBudget, fencing: bool) -> CheckResult {
    let r = try_check(recipe, faults, fencing, true).expect("clients are interchangeable");
    assert!(r.complete, "the check stopped at its state limit");
    r
}

fn status(r: &CheckResult, property: &str) -> Status {
    let name = PropertyName::parse(property).expect("a property name");
    r.property(name).expect("judged by this check").status
}

#[test]
fn safe_and_live_without_faults() {
    let r = check_3(recipe(), FaultBudget::default(), false);
    for p in [
        "mutual_exclusion",
        "resource_exclusion",
        "holder_owns_key",
        "holder_writes_accepted",
        "hand_off",
        "progress",
    ] {
        assert_eq!(status(&r, p), Status::Holds, "{p}");
    }
}

#[test]
fn one_release_wakes_every_waiter() {
    let r = check_3(recipe(), FaultBudget::default(), false);
    assert_eq!(status(&r, "herd_bound"), Status::Violated);
    assert!(r.path(PropertyName::HerdBound).is_some());
}

#[test]
fn a_crash_with_fencing_is_survived() {
    let crash = FaultBudget {
        crashes: 1,
        ..FaultBudget::default()
    };
    let r = check_3(recipe(), crash, true);
    for p in ["mutual_exclusion", "resource_exclusion", "progress"] {
        assert_eq!(status(&r, p), Status::Holds, "{p}");
    }
}

/// The owner check is what the recipe adds: with one lost reply the shipped
/// unfair-create can wait on its own node for ever; ours takes its node.
#[test]
fn the_owner_check_survives_a_lost_create_reply() {
    let lost = FaultBudget {
        lost_replies: 1,
        ..FaultBudget::default()
    };
    let ours = check_3(recipe(), lost, false);
    assert_eq!(status(&ours, "progress"), Status::Holds);
    let shipped = check_3(models::recipes::parse(SHIPPED_TWIN).unwrap(), lost, false);
    assert_eq!(status(&shipped, "progress"), Status::Violated);
}

/// Symmetry reduction explores fewer states and must reach the same
/// verdicts, which it does only if `Relabel` reaches every client name.
#[test]
fn symmetry_reduction_gives_the_same_verdicts() {
    let crash = FaultBudget {
        crashes: 1,
        ..FaultBudget::default()
    };
    let reduced = try_check(recipe(), crash, true, true).unwrap();
    let full = try_check(recipe(), crash, true, false).unwrap();
    assert!(reduced.unique_states < full.unique_states);
    for p in &full.properties {
        assert_eq!(status(&reduced, p.name.name()), p.status, "{}", p.name);
    }
}

/// A recipe whose steps depend on which client runs them: client 0 gives
/// up when the lock is taken. The checker refuses it under symmetry
/// reduction and checks it without.
#[derive(Debug)]
struct ClientZeroGivesUp;

impl Recipe for ClientZeroGivesUp {
    type State = <UnfairGetData as Recipe>::State;
    fn name(&self) -> &'static str {
        "client-zero-gives-up"
    }
    fn face(&self) -> Face {
        UnfairGetData.face()
    }
    fn setup(&self) -> Setup {
        UnfairGetData.setup()
    }
    fn acquire(&self, session: SessionId) -> (Self::State, Request) {
        UnfairGetData.acquire(session)
    }
    fn on_reply(&self, session: SessionId, st: &mut Self::State, reply: &Reply) -> Step {
        match UnfairGetData.on_reply(session, st, reply) {
            Step::Send(Request::GetData { .. }) if session.client == 0 => Step::Unexpected,
            step => step,
        }
    }
    fn on_event(&self, st: &mut Self::State, event: &WatchEvent) -> Step {
        UnfairGetData.on_event(st, event)
    }
    fn release(&self, session: SessionId, st: &Self::State) -> Option<Request> {
        UnfairGetData.release(session, st)
    }
}

#[test]
fn an_identity_dependent_recipe_is_refused_under_symmetry() {
    let r = try_check(
        RecipeRef::new(ClientZeroGivesUp),
        FaultBudget::default(),
        false,
        true,
    );
    match r {
        Err(e @ CheckError::IdentityDependent { .. }) => {
            assert!(e.to_string().contains("without symmetry reduction"), "{e}")
        }
        Err(
            e @ (CheckError::Threads { .. }
            | CheckError::Collision { .. }
            | CheckError::Reduction { .. }),
        ) => panic!("{e}"),
        Ok(_) => panic!("symmetry reduction accepted an identity-dependent recipe"),
    }
    let full = try_check(
        RecipeRef::new(ClientZeroGivesUp),
        FaultBudget::default(),
        false,
        false,
    )
    .unwrap();
    // Client 0 stops when it loses the race: it never finishes.
    assert_eq!(status(&full, "progress"), Status::Violated);
}

#[test]
fn the_herd_matches_the_closed_form() {
    let r = recipe();
    for n in [2u16, 5, 10] {
        let row = sim::herd::row(&herd_baseline(n, 1), 1);
        let closed = sim::herd::closed_form(&r, n as u32).expect("the recipe declares one");
        assert_eq!(row.notifications_per_release, closed, "N = {n}");
        assert_eq!(row.notifications as u32, n as u32 * (n as u32 - 1) / 2);
        assert_eq!(row.acquisitions, n as u64);
        assert_eq!(row.violations, 0, "N = {n}");
        // One getData-with-watch per wake-up, never a plain read.
        assert_eq!(row.requests_per_acquisition("reads"), 0.0);
        assert_eq!(
            row.requests_per_acquisition("get_data_watch"),
            row.notifications_per_release_mean()
        );
    }
}

#[test]
fn healthy_simulations_violate_nothing_but_the_herd_bound() {
    let sc = scenario(HEALTHY, "healthy").unwrap();
    let rounds = sc.clients as u64 * sc.rounds as u64;
    for seed in 1..=50 {
        let o = simulate(&sc, seed, false);
        let others: Vec<_> = o
            .violations
            .iter()
            .filter(|v| v.property != PropertyName::HerdBound)
            .collect();
        assert!(others.is_empty(), "seed {seed}: {others:?}");
        assert_eq!(o.metrics.acquisitions, rounds, "seed {seed}");
        assert_eq!(o.metrics.releases, rounds, "seed {seed}");
        assert!(o.hand_off, "seed {seed}");
    }
}

#[test]
fn simulations_are_deterministic_per_seed() {
    let sc = scenario(HEALTHY, "healthy").unwrap();
    let a = simulate(&sc, 7, true);
    let b = simulate(&sc, 7, true);
    assert!(a.trace_hash.is_some());
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.metrics, b.metrics);
}
