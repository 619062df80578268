//! Sleep sets (`CheckOptions::sleep_sets`, `checker/sleep.rs`): the steps
//! the checker calls independent commute, on every reachable state of
//! every recipe and variant under every kind of fault at 2 clients (and on
//! the first states of a 3-client configuration); and a search with sleep
//! sets reaches the same states at the same depths as one without — the
//! same count at every level, the same verdicts and the very same
//! counterexamples — from fewer transitions, whatever the threads and
//! chunks.

mod common;

use common::{reachable, safety, two_clients_every_variant_and_fault};
use models::checker::{check, replay, CheckOptions, CheckResult, Level};
use models::model::commute::{independent, Footprint};
use models::model::{Action, FaultBudget, ModelCfg, ModelState, RecipeModel};
use models::recipes;
use stateright::Model;

fn enabled(model: &RecipeModel, s: &ModelState, a: &Action) -> bool {
    let mut actions = Vec::new();
    model.actions(s, &mut actions);
    actions.contains(a)
}

/// At `s`, every pair of enabled steps the checker calls independent
/// commutes: neither disables the other, both orders reach the same
/// state, and each step's footprint after the other is covered by what it
/// was before (the sleep sets carry the one from before). Returns how many
/// pairs were independent.
fn independent_pairs_commute_at(model: &RecipeModel, cfg: &ModelCfg, s: &ModelState) -> usize {
    let mut actions = Vec::new();
    model.actions(s, &mut actions);
    let next: Vec<ModelState> = actions
        .iter()
        .map(|&a| {
            model
                .next_state(s, a)
                .expect("an enabled step has a successor")
        })
        .collect();
    let at: Vec<Footprint> = actions
        .iter()
        .zip(&next)
        .map(|(a, n)| Footprint::of(s, a, n))
        .collect();
    let mut pairs = 0;
    for (i, x) in actions.iter().enumerate() {
        for (j, y) in actions.iter().enumerate() {
            if i == j || !independent(x, at[i], y, at[j]) {
                continue;
            }
            pairs += 1;
            assert!(
                enabled(model, &next[i], y),
                "{cfg}: {x:?} disables {y:?}, called independent"
            );
            let xy = model.next_state(&next[i], *y).expect("enabled");
            let yx = model.next_state(&next[j], *x).expect("enabled");
            assert!(
                xy == yx,
                "{cfg}: {x:?} and {y:?}, called independent, do not commute"
            );
            let after = Footprint::of(&next[j], x, &yx);
            assert!(
                at[i].covers(after),
                "{cfg}: after {y:?}, {x:?} reads or changes more than before: {after:?}, not {:?}",
                at[i]
            );
        }
    }
    pairs
}

#[test]
fn steps_called_independent_commute() {
    let mut configs = two_clients_every_variant_and_fault();
    // Three clients with a crash, as the benchmark checks it.
    configs.push(ModelCfg {
        faults: FaultBudget {
            crashes: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(recipes::parse("fair-predecessor").unwrap(), 3)
    });
    let mut pairs = 0;
    for cfg in &configs {
        let model = cfg.clone().into_model().unwrap();
        // Every state at 2 clients (the largest has 88 k); the first
        // 20,000 at 3.
        let limit = if cfg.clients == 2 { usize::MAX } else { 20_000 };
        for s in reachable(&model, limit) {
            pairs += independent_pairs_commute_at(&model, cfg, &s);
        }
    }
    assert!(pairs > 1_000_000, "only {pairs} independent pairs checked");
}

thread_local! {
    /// The levels a check on this thread reported: (depth, unique states
    /// so far, states of the next level).
    static LEVELS: std::cell::RefCell<Vec<(u32, u64, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn record(l: &Level) {
    LEVELS.with_borrow_mut(|v| v.push((l.depth, l.unique_states, l.frontier)));
}

/// The check's result, and the states it reached level by level.
fn run(cfg: &ModelCfg, opts: CheckOptions) -> (CheckResult, Vec<(u32, u64, u64)>) {
    LEVELS.with_borrow_mut(Vec::clear);
    let r = check(
        &cfg.clone().into_model().unwrap(),
        CheckOptions {
            on_level: Some(record),
            ..opts
        },
    )
    .expect("clients are alike");
    (r, LEVELS.with_borrow_mut(std::mem::take))
}

/// The search with sleep sets against the one without, on `cfg`: the same
/// states at every depth, the same verdicts and counterexamples (which
/// replay). Returns both searches' transitions.
fn same_search(cfg: &ModelCfg, symmetry: bool) -> (u64, u64) {
    let opts = CheckOptions {
        symmetry,
        ..CheckOptions::default()
    }
    .asking(&safety(cfg));
    let (sleeping, sleeping_levels) = run(cfg, opts);
    let (every, every_levels) = run(
        cfg,
        CheckOptions {
            sleep_sets: false,
            ..opts
        },
    );
    assert!(sleeping.sleep_sets && !every.sleep_sets, "{cfg}");
    assert!(!every_levels.is_empty(), "{cfg}");
    assert_eq!(sleeping_levels, every_levels, "{cfg}: level by level");
    assert_eq!(
        (
            sleeping.unique_states,
            sleeping.max_depth,
            sleeping.complete,
            sleeping.decided_early
        ),
        (
            every.unique_states,
            every.max_depth,
            every.complete,
            every.decided_early
        ),
        "{cfg}"
    );
    assert!(sleeping.states <= every.states, "{cfg}");
    for p in &every.properties {
        let q = sleeping.property(p.name).expect("judged by both");
        assert_eq!(
            (q.status, &q.path),
            (p.status, &p.path),
            "{cfg}: {} with sleep sets",
            p.name
        );
        if let Some(path) = &q.path {
            assert!(
                replay(&cfg.clone().into_model().unwrap(), path).is_some(),
                "{cfg}"
            );
        }
    }
    (sleeping.states, every.states)
}

#[test]
fn sleep_sets_keep_every_state_verdict_and_shortest_length() {
    let (mut fewer, mut all) = (0, 0);
    for cfg in two_clients_every_variant_and_fault() {
        let (s, e) = same_search(&cfg, true);
        fewer += s;
        all += e;
    }
    assert!(
        fewer * 10 < all * 9,
        "sleep sets took {fewer} of {all} transitions"
    );
}

#[test]
fn sleep_sets_keep_the_search_at_three_clients_and_without_symmetry() {
    for (recipe, faults) in [
        ("fair-predecessor", FaultBudget::default()),
        (
            "unfair-create",
            FaultBudget {
                crashes: 1,
                ..FaultBudget::default()
            },
        ),
        (
            "etcd-revision",
            FaultBudget {
                pauses: 1,
                ..FaultBudget::default()
            },
        ),
        ("zk-fair-election", FaultBudget::default()),
        ("zk-double-barrier", FaultBudget::default()),
    ] {
        let cfg = ModelCfg {
            faults,
            ..ModelCfg::new(recipes::parse(recipe).unwrap(), 3)
        };
        for symmetry in [true, false] {
            let (s, e) = same_search(&cfg, symmetry);
            assert!(s < e, "{cfg}: {s} transitions of {e}");
        }
    }
}

#[test]
fn the_search_with_sleep_sets_is_the_same_whatever_the_threads_and_chunks() {
    let cfg = ModelCfg {
        faults: FaultBudget {
            crashes: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(recipes::parse("fair-predecessor").unwrap(), 3)
    };
    let model = cfg.clone().into_model().unwrap();
    let opts = CheckOptions::default().asking(&safety(&cfg));
    let base = check(&model, opts).unwrap();
    assert!(base.sleep_sets);
    for (threads, level_chunk) in [(1, 7), (2, 7), (2, 1 << 20), (1, 1 << 20)] {
        let r = check(
            &model,
            CheckOptions {
                threads: Some(threads),
                level_chunk,
                ..opts
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

/// A restart reads the store and the budget and closes its client's
/// watches: every pair of steps called independent where a crashed client
/// may restart commutes too, and sleep sets keep the search the same.
#[test]
fn restarts_commute_where_called_independent() {
    let mut pairs = 0;
    for recipe in ["fair-predecessor", "etcd-revision", "zk-fifo-queue"] {
        let cfg = ModelCfg {
            faults: FaultBudget {
                crashes: 1,
                restarts: 1,
                ..FaultBudget::default()
            },
            ..ModelCfg::new(recipes::parse(recipe).unwrap(), 2)
        };
        let model = cfg.clone().into_model().unwrap();
        for s in reachable(&model, 30_000) {
            pairs += independent_pairs_commute_at(&model, &cfg, &s);
        }
        let (s, e) = same_search(&cfg, cfg.clients_interchangeable());
        assert!(s <= e, "{cfg}: {s} transitions of {e}");
    }
    assert!(pairs > 10_000, "only {pairs} independent pairs checked");
}
