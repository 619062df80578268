//! The partial-order reduction (`CheckOptions::partial_order`) keeps every
//! verdict of the full search — `always`, `sometimes` and progress — on
//! every recipe and variant (the broken-on-purpose ones too) under every
//! kind of fault; explores fewer states; and is as deterministic as the
//! full search.

mod common;

use common::{reachable, safety, two_clients_every_variant_and_fault};
use models::checker::{check, replay, CheckOptions, CheckResult, Kind, Status};
use models::client::Policy;
use models::model::commute::local_to;
use models::model::{Action, FaultBudget, Goal, ModelCfg, ModelState, RecipeModel};
use models::properties::PropertyName;
use models::recipes;
use stateright::Model;

fn reduced() -> CheckOptions {
    CheckOptions {
        partial_order: true,
        ..CheckOptions::default()
    }
}

fn run(cfg: &ModelCfg, opts: CheckOptions) -> CheckResult {
    cfg.validate().unwrap();
    check(&cfg.clone().into_model().unwrap(), opts).expect("clients are alike")
}

/// What one comparison found.
struct Compared {
    /// The full search's unique states, unless it stopped early.
    full: Option<u64>,
    reduced: u64,
    /// Progress properties violated (in both searches).
    progress_violated: usize,
}

/// The reduced search's verdicts against the full one's, on `cfg`, asked
/// `asked` (every property when empty).
fn same_verdicts(cfg: &ModelCfg, asked: &[PropertyName]) -> Compared {
    let part = run(cfg, reduced().asking(asked));
    let full = run(cfg, CheckOptions::default().asking(asked));
    assert!(full.complete && part.complete, "{cfg}");
    assert!(part.partial_order);
    // (A full search whose every property was decided stops early.)
    assert!(
        full.decided_early || part.unique_states <= full.unique_states,
        "{cfg}: the reduction explored more states ({} > {})",
        part.unique_states,
        full.unique_states
    );
    assert_eq!(part.properties.len(), full.properties.len(), "{cfg}");
    let mut progress_violated = 0;
    for p in &full.properties {
        let q = part.property(p.name).expect("judged by both");
        assert_eq!(q.status, p.status, "{cfg}: {} under the reduction", p.name);
        // A path of the reduced graph is one of the full graph's: it
        // replays from the initial state in real names, and is no shorter
        // than the full search's shortest.
        if let (Some(short), Some(path)) = (&p.path, &q.path) {
            assert!(path.len() >= short.len(), "{cfg}: {}", p.name);
            assert!(replay(&cfg.clone().into_model().unwrap(), path).is_some());
        }
        progress_violated += usize::from(p.kind == Kind::Progress && p.status == Status::Violated);
    }
    Compared {
        full: (!full.decided_early).then_some(full.unique_states),
        reduced: part.unique_states,
        progress_violated,
    }
}

#[test]
fn every_verdict_is_kept_on_every_recipe_variant_and_fault() {
    let (mut fewer, mut compared, mut total, mut stuck) = (0, 0, 0, 0);
    let mut safety_fewer = 0;
    for cfg in two_clients_every_variant_and_fault() {
        // Every property: progress restricts the reduction.
        let all = same_verdicts(&cfg, &[]);
        if let Some(full) = all.full {
            compared += 1;
            fewer += usize::from(all.reduced < full);
        }
        stuck += all.progress_violated;
        // Safety alone: the reduction unrestricted.
        let some = same_verdicts(&cfg, &safety(&cfg));
        safety_fewer += usize::from(some.full.is_some_and(|full| some.reduced < full));
        total += 1;
    }
    // Every configuration above, the reduction bit in most of them, and
    // progress was found violated (and kept) in some.
    assert!(total >= 100, "{total} configurations");
    assert!(
        fewer * 2 > compared,
        "fewer states in {fewer} of {compared}"
    );
    assert!(
        safety_fewer * 2 > total,
        "fewer states in {safety_fewer} of {total}"
    );
    assert!(stuck >= 5, "{stuck} progress violations compared");
    eprintln!("{stuck} progress violations, {fewer} of {compared} reduced with progress, {safety_fewer} of {total} without");
}

/// Every recipe at 3 clients, with no fault and with a crash: the soak
/// (about nine minutes on two cores), run by
/// `cargo test -p lockstep-models --test partial_order -- --ignored`.
#[test]
#[ignore]
fn three_clients_keep_every_verdict() {
    three_clients_keep_the_verdicts_of(recipes::defaults());
}

/// At 3 clients on a sample that the suite runs each time: a lock, an
/// election and a barrier of ZooKeeper, and etcd's lock.
#[test]
fn three_clients_keep_every_verdict_on_a_sample() {
    let sample = [
        "fair-predecessor",
        "zk-fair-election",
        "zk-barrier",
        "etcd-revision",
    ];
    three_clients_keep_the_verdicts_of(sample.iter().map(|r| recipes::parse(r).unwrap()).collect());
}

fn three_clients_keep_the_verdicts_of(recipes: Vec<models::recipe::RecipeRef>) {
    for recipe in recipes.into_iter().map(|r| r.on_masters(3).unwrap_or(r)) {
        for (faults, policy) in [
            (FaultBudget::default(), Policy::Naive),
            (
                FaultBudget {
                    crashes: 1,
                    ..Default::default()
                },
                Policy::Naive,
            ),
        ] {
            let cfg = ModelCfg {
                faults,
                policy,
                ..ModelCfg::new(recipe.clone(), 3)
            };
            same_verdicts(&cfg, &[]);
        }
    }
}

#[test]
fn the_double_barrier_needs_a_third_of_the_states() {
    // Pinned: a change to which steps commute shows up here first. (The
    // reduced count follows the representatives symmetry keeps, so the
    // fingerprints: 66,389 before paths were a recipe's own names, which
    // hash otherwise; the full space and the verdicts are the same.)
    let cfg = ModelCfg::new(recipes::parse("zk-double-barrier").unwrap(), 3);
    let some = same_verdicts(&cfg, &safety(&cfg));
    assert_eq!((some.full, some.reduced), (Some(210_880), 66_453));
    // Asked progress too: a member's step that finishes it is visible to
    // `all_pass`, but only ever towards it, so it is still taken alone
    // (C4) and progress costs the reduction nothing here (it cost 83,809
    // states while only steps that left the goals as they were were).
    let all = same_verdicts(&cfg, &[]);
    assert_eq!((all.full, all.reduced), (Some(210_880), 66_453));
}

#[test]
fn progress_restricts_the_reduction_where_a_goal_could_turn_false() {
    // Pinned: a follower's step that changes what `followers_agree` reads
    // (the leader it has seen, whether it campaigns) is not taken alone
    // when progress is asked, which is all of the difference here (the
    // steps that could make `leader_elected` false, a leader resigning, also
    // feed the monitors, so C2 keeps them out already); a change to C4, or
    // a checker that stops asking it, shows up here. (Which client's steps
    // are tried first as an ample set follows the clients' names in each
    // representative, which the fingerprint picks among tied orders: the
    // safety-only count was 3,251 with ahash's fingerprints, 3,264 with
    // foldhash's, `fixed_hash.rs`; the verdicts are the same.)
    let cfg = ModelCfg::new(recipes::parse("zk-fair-election").unwrap(), 3);
    let some = same_verdicts(&cfg, &safety(&cfg));
    let all = same_verdicts(&cfg, &[]);
    assert_eq!(
        (all.full, all.reduced, some.reduced),
        (Some(9_803), 7_573, 3_264)
    );
}

#[test]
fn the_reduction_finds_the_known_violations() {
    // etcd 3.4's mutex lets a waiter whose key expired take the lock
    // (etcd #11456); a pause shows it. Found under the reduction too, and
    // its counterexample re-checks in real names (the checker replays it).
    let cfg = ModelCfg {
        faults: FaultBudget {
            pauses: 1,
            ..Default::default()
        },
        ..ModelCfg::new(recipes::parse("etcd-revision:v3.4").unwrap(), 3)
    };
    let r = run(&cfg, reduced());
    assert_eq!(
        r.property(PropertyName::MutualExclusion).unwrap().status,
        Status::Violated
    );
    assert!(r.path(PropertyName::MutualExclusion).is_some());
}

#[test]
fn the_reduced_search_is_the_same_whatever_the_threads_and_chunks() {
    let cfg = ModelCfg::new(recipes::parse("zk-double-barrier").unwrap(), 3);
    let model = cfg.into_model().unwrap();
    let base = check(&model, reduced()).unwrap();
    for (threads, level_chunk) in [
        (1, 7),
        (2, 7),
        (2, models::checker::LEVEL_CHUNK),
        (1, 1 << 20),
    ] {
        let r = check(
            &model,
            CheckOptions {
                threads: Some(threads),
                level_chunk,
                ..reduced()
            },
        )
        .unwrap();
        assert_eq!(
            (r.states, r.unique_states, r.max_depth),
            (base.states, base.unique_states, base.max_depth),
            "{threads} threads, chunks of {level_chunk}"
        );
        for (x, y) in r.properties.iter().zip(&base.properties) {
            assert_eq!((x.status, &x.path), (y.status, &y.path), "{}", x.name);
        }
    }
}

#[test]
fn without_symmetry_the_reduction_keeps_the_verdicts_too() {
    let crash = FaultBudget {
        crashes: 1,
        ..Default::default()
    };
    for (name, clients, faults) in [
        ("fair-predecessor", 3, crash),
        ("zk-double-barrier", 3, FaultBudget::default()),
        ("etcd-election", 2, crash),
    ] {
        let cfg = ModelCfg {
            faults,
            ..ModelCfg::new(recipes::parse(name).unwrap(), clients)
        };
        let part = run(
            &cfg,
            CheckOptions {
                symmetry: false,
                ..reduced()
            },
        );
        let full = run(
            &cfg,
            CheckOptions {
                symmetry: false,
                ..CheckOptions::default()
            },
        );
        assert!(part.unique_states < full.unique_states, "{name}");
        for p in &part.properties {
            assert_eq!(
                p.status,
                full.property(p.name).expect("judged by both").status,
                "{name}: {}",
                p.name
            );
        }
    }
}

/// Condition C1 of `model/commute.rs`, checked pairwise at `s`: for the
/// clients the model offers as ample, each local step `a` and each step
/// `b` outside the set commute — both orders reach the same state,
/// neither disables the other — and `b` gives the client no local step
/// the set lacks; and a set taken alone with progress asked (`goals`, the
/// model's) makes no goal false, here or after any other step (C4).
/// Returns how many pairs were checked, and how many sets would be taken
/// alone with progress asked.
fn commutes_at(model: &RecipeModel, goals: &[Goal], s: &ModelState) -> (usize, usize) {
    let enabled = |s: &ModelState| {
        let mut v = Vec::new();
        model.actions(s, &mut v);
        v
    };
    let here = enabled(s);
    let (mut pairs, mut alone) = (0, 0);
    for c in model.ample_candidates(s, &here) {
        let ample: Vec<Action> = here
            .iter()
            .copied()
            .filter(|a| local_to(a) == Some(c))
            .collect();
        assert!(!ample.is_empty(), "C0 at {s:?}");
        let after: Vec<ModelState> = ample
            .iter()
            .map(|&a| model.next_state(s, a).expect("enabled"))
            .collect();
        // With progress asked, a set the checker would take alone makes no
        // goal false (C4): each goal that held before each step holds after.
        if after.iter().all(|n| model.may_take_alone(s, c, n, goals)) {
            for n in &after {
                let (before, then) = (goals_at(model, goals, s), goals_at(model, goals, n));
                assert!(
                    before.iter().zip(&then).all(|(b, t)| !b || *t),
                    "{ample:?} made a goal false: {before:?} then {then:?}"
                );
            }
            alone += 1;
        }
        // The checker uses the set only if every step stays local.
        if !after.iter().all(|n| model.may_take_alone(s, c, n, &[])) {
            continue;
        }
        for &b in here.iter().filter(|b| !ample.contains(b)) {
            let sb = model.next_state(s, b).expect("enabled");
            let at_sb = enabled(&sb);
            let local_at_sb: Vec<Action> = at_sb
                .iter()
                .copied()
                .filter(|x| local_to(x) == Some(c))
                .collect();
            assert!(
                local_at_sb.iter().all(|x| ample.contains(x)),
                "{b:?} gave client {c} a new local step: {local_at_sb:?} against {ample:?}"
            );
            for (&a, sa) in ample.iter().zip(&after) {
                assert!(at_sb.contains(&a), "{b:?} disabled {a:?}");
                assert!(enabled(sa).contains(&b), "{a:?} disabled {b:?}");
                let sba = model.next_state(&sb, a);
                assert!(
                    model.next_state(sa, b) == sba,
                    "{a:?} and {b:?} do not commute"
                );
                // A step that cannot make a goal false here cannot after
                // `b` either (C4 wherever it is taken).
                let sba = sba.expect("enabled");
                for g in goals {
                    if g.cannot_falsify(model, s, c, sa) {
                        assert!(
                            g.cannot_falsify(model, &sb, c, &sba),
                            "{a:?} after {b:?}: {:?}",
                            g.name
                        );
                        assert!(
                            !g.holds(model, &sb) || g.holds(model, &sba),
                            "{a:?} after {b:?} made {:?} false",
                            g.name
                        );
                    }
                }
                pairs += 1;
            }
        }
    }
    (pairs, alone)
}

/// Which of `goals` hold at `s`.
fn goals_at(model: &RecipeModel, goals: &[Goal], s: &ModelState) -> Vec<bool> {
    goals.iter().map(|g| g.holds(model, s)).collect()
}

#[test]
fn local_steps_commute_with_every_other_step() {
    let (mut pairs, mut alone) = (0, 0);
    for cfg in two_clients_every_variant_and_fault() {
        let model = cfg.clone().into_model().unwrap();
        let goals = model.progress_goals();
        for s in reachable(&cfg.clone().into_model().unwrap(), 20_000) {
            let (p, a) = commutes_at(&model, &goals, &s);
            pairs += p;
            alone += a;
        }
    }
    assert!(pairs > 10_000, "{pairs} pairs checked");
    assert!(
        alone > 10_000,
        "{alone} sets taken alone with progress asked"
    );
}

/// `Goal::cannot_falsify` is sound on every client's local step, ample or
/// not (in the shipped recipes the steps that lower a goal's bits also
/// feed the monitors, so C2 alone keeps them out of ample sets): a step it
/// clears never turns its goal from true to false.
#[test]
fn a_step_that_cannot_falsify_a_goal_does_not() {
    let (mut cleared, mut refused) = (0usize, 0usize);
    for cfg in two_clients_every_variant_and_fault() {
        let model = cfg.clone().into_model().unwrap();
        let goals = model.progress_goals();
        let mut actions = Vec::new();
        for s in reachable(&cfg.clone().into_model().unwrap(), 5_000) {
            actions.clear();
            model.actions(&s, &mut actions);
            for &a in &actions {
                let (Some(c), Some(next)) = (local_to(&a), model.next_state(&s, a)) else {
                    continue;
                };
                for g in &goals {
                    if !g.cannot_falsify(&model, &s, c, &next) {
                        refused += 1;
                    } else if s.store == next.store {
                        // (The caller compares the store, which a goal may
                        // read: C2 for an ample step.)
                        assert!(
                            !g.holds(&model, &s) || g.holds(&model, &next),
                            "{cfg}: {a:?} made {:?} false",
                            g.name
                        );
                        cleared += 1;
                    }
                }
            }
        }
    }
    assert!(
        cleared > 10_000 && refused > 1_000,
        "{cleared} cleared, {refused} refused"
    );
}

/// A goal that reads rising bits is monotone in each (what C4 rests on):
/// at every store a small configuration of each recipe reaches, for every
/// client count the checker takes and every assignment of the bits the
/// goal's clients were seen with, setting one more bit never turns the
/// goal from true to false.
#[test]
fn goals_are_monotone_in_their_rising_bits() {
    use models::model::{GoalReads, MAX_CLIENTS};
    let mut checked = 0usize;
    for recipe in recipes::defaults()
        .into_iter()
        .map(|r| r.on_masters(3).unwrap_or(r))
    {
        let cfg = ModelCfg::new(recipe, 2);
        let model = cfg.clone().into_model().unwrap();
        let states = reachable(&cfg.clone().into_model().unwrap(), 5_000);
        for goal in model.progress_goals() {
            let GoalReads::Rising { bits, holds } = goal.reads else {
                continue;
            };
            // Every bit the goal reads, as the reachable states show them.
            let mut used = 0u8;
            for s in &states {
                for (c, m) in model.goal_view(s).clients().enumerate() {
                    used |= bits(&model, c as u16, &m);
                }
            }
            assert!(used != 0 && used < 16, "{:?}: bits {used:#b}", goal.name);
            let values: Vec<u8> = (0..=used).filter(|v| v & !used == 0).collect();
            for s in states.iter().step_by(53) {
                for n in 2..=usize::from(MAX_CLIENTS).min(4) {
                    let mut read = vec![0u8; n];
                    for k in 0..values.len().pow(n as u32) {
                        let mut k = k;
                        for r in read.iter_mut() {
                            *r = values[k % values.len()];
                            k /= values.len();
                        }
                        if !holds(&model, &s.store, &read) {
                            continue;
                        }
                        for i in 0..n {
                            for bit in (0..4).map(|b| 1u8 << b).filter(|b| used & b != 0) {
                                let mut more = read.clone();
                                more[i] |= bit;
                                assert!(
                                    holds(&model, &s.store, &more),
                                    "{:?}: {read:?} holds, {more:?} does not",
                                    goal.name
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked} rises checked");
}

/// Condition C1 over a replicated store with a follower's fault: a
/// client's local steps commute with the store's and the other client's,
/// `GiveUpServer` (a silent server given up) among them, over a mute and
/// an isolation of server 1.
#[test]
fn local_steps_commute_over_an_ensemble_with_a_follower_fault() {
    let (mut pairs, mut gave_up) = (0, 0);
    for cfg in common::curator_lock_with_each_follower_fault() {
        let model = cfg.into_model().unwrap();
        let goals = model.progress_goals();
        for s in reachable(&model, 20_000) {
            pairs += commutes_at(&model, &goals, &s).0;
            let mut here = Vec::new();
            model.actions(&s, &mut here);
            gave_up += here
                .iter()
                .filter(|a| matches!(a, Action::GiveUpServer(_)))
                .count();
        }
    }
    assert!(pairs > 1_000, "{pairs} pairs checked");
    assert!(
        gave_up > 0,
        "no silent server given up in the states checked"
    );
}
