//! Livelock is a progress violation: a queue consumer that reads the same
//! taken element forever (`retry-taken`, test-only) while another consumer
//! drains the queue. The queue still empties from every reachable state,
//! so reachability alone passes it; every progress goal also requires that
//! no fair cycle carries a live client's request, and the checker reports
//! the cycle as a lasso that replays.

#[path = "livelock/retry_taken.rs"]
mod retry_taken;

use models::checker::{check, replay, CheckOptions, CheckResult, Status};
use models::model::{Action, Link, ModelCfg};
use models::properties::PropertyName;
use models::recipe::RecipeRef;
use models::recipes;
use models::symmetry::fingerprint;
use retry_taken::retry_taken;

/// One producer, two consumers, one item each round.
fn run(recipe: RecipeRef, rounds: u8) -> CheckResult {
    let cfg = ModelCfg {
        producers: 1,
        rounds,
        ..ModelCfg::new(recipe, 3)
    };
    cfg.validate().unwrap();
    check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap()
}

#[test]
fn a_consumer_rereading_a_taken_element_forever_is_a_livelock() {
    let r = run(retry_taken(), 1);
    let drains = r.property(PropertyName::QueueDrains).unwrap();
    assert_eq!(drains.status, Status::Violated);
    let path = drains.path.as_ref().unwrap();
    let from = drains.repeats_from.expect("a livelock is a lasso");
    let lap = &path[from..];
    // The lap is one consumer's read, delivered and answered, over again:
    // nobody else moves.
    let requests: Vec<&Action> = lap
        .iter()
        .filter(|a| matches!(a, Action::Deliver(_, Link::ClientToStore)))
        .collect();
    assert!(!requests.is_empty());
    let looping = lap[0].client().expect("a client's step");
    assert!(lap.iter().all(|a| a.client() == Some(looping)), "{lap:?}");
    assert!(looping >= 1, "a consumer loops, not the producer");
    // The lap ends where it began: it can be taken forever.
    let model = ModelCfg {
        producers: 1,
        rounds: 1,
        ..ModelCfg::new(retry_taken(), 3)
    }
    .into_model()
    .unwrap();
    let start = replay(&model, &path[..from]).unwrap();
    let end = replay(&model, path).unwrap();
    assert_eq!(fingerprint(&start), fingerprint(&end));
    // The other goals of the queue are safety properties, unchanged.
    assert_eq!(
        r.property(PropertyName::NoLostItem).unwrap().status,
        Status::Holds
    );
}

#[test]
fn the_article_consumer_lists_again_and_is_no_livelock() {
    let r = run(recipes::parse("zk-fifo-queue").unwrap(), 1);
    let drains = r.property(PropertyName::QueueDrains).unwrap();
    assert_eq!(drains.status, Status::Holds);
    assert_eq!(drains.repeats_from, None);
}
