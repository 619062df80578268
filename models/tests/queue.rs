//! What the model checker shows about the article's FIFO queue
//! (`zk-fifo-queue`) and the variants faithful to ZooKeeper's
//! `DistributedQueue.take()` (`take-safe`) and Curator's lock-safe
//! `DistributedQueue` (`lock-safe`): without faults every property holds;
//! a lost delete reply loses an item in every variant that deletes before
//! it processes; a consumer crash loses one there too, while the lock-safe
//! queue, which processes before it deletes, processes it twice instead.

use models::checker::{check, CheckOptions, CheckResult, Status};
use models::model::{Action, FaultBudget, ModelCfg};
use models::properties::PropertyName;
use models::recipes;

fn run(name: &str, clients: u8, rounds: u8, faults: FaultBudget) -> CheckResult {
    let cfg = ModelCfg {
        faults,
        rounds,
        ..ModelCfg::new(recipes::parse(name).unwrap(), clients)
    };
    cfg.validate().unwrap();
    check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap()
}

fn status(r: &CheckResult, p: &str) -> Status {
    let name = PropertyName::parse(p).expect("a property name");
    r.property(name).expect("judged by this check").status
}

const PROPERTIES: [&str; 4] = [
    "no_lost_item",
    "no_duplicate_item",
    "fifo_order",
    "queue_drains",
];

#[test]
fn without_faults_two_producers_and_two_consumers_keep_every_property() {
    for (name, states) in [
        ("zk-fifo-queue", 53_892),
        ("zk-fifo-queue:take-safe", 56_948),
        ("zk-fifo-queue:lock-safe", 502_724),
    ] {
        let r = run(name, 4, 1, FaultBudget::default());
        for p in PROPERTIES {
            assert_eq!(status(&r, p), Status::Holds, "{name}: {p}");
        }
        // Producers and consumers are not interchangeable: no symmetry.
        assert!(!r.symmetry, "{name}");
        // Pinned: a change to the queue, the client or the store shows here.
        assert_eq!(r.unique_states, states, "{name}");
    }
}

/// The delete went through and its reply was lost: the retried delete (or
/// the next `consume()`) finds the element gone, which looks like a race
/// lost to another consumer. Neither the article nor `take()` can tell.
#[test]
fn a_lost_delete_reply_loses_an_item_in_the_article_and_in_take() {
    let lost = FaultBudget {
        lost_replies: 1,
        ..Default::default()
    };
    for name in ["zk-fifo-queue", "zk-fifo-queue:take-safe"] {
        let r = run(name, 3, 2, lost);
        assert_eq!(status(&r, "no_lost_item"), Status::Violated, "{name}");
        let path = r.path(PropertyName::NoLostItem).unwrap().to_vec();
        assert!(
            path.iter().any(|a| matches!(a, Action::LoseReply(_))),
            "{name}: {path:?}"
        );
        assert_eq!(status(&r, "fifo_order"), Status::Holds, "{name}");
        // A producer's create whose reply is lost is sent again: the item
        // is in the queue twice and processed twice.
        assert_eq!(status(&r, "no_duplicate_item"), Status::Violated, "{name}");
    }
}

/// One producer, two consumers, one crash: a consumer that deleted an
/// element and crashed before it processed the item lost it; the lock-safe
/// consumer processes first, so its crash leaves the item (and its lock,
/// until its session expires) for the other consumer, which processes it
/// again.
#[test]
fn a_consumer_crash_loses_an_item_or_processes_it_twice() {
    let crash = FaultBudget {
        crashes: 1,
        ..Default::default()
    };
    let article = run("zk-fifo-queue", 3, 1, crash);
    assert_eq!(status(&article, "no_lost_item"), Status::Violated);
    assert_eq!(status(&article, "no_duplicate_item"), Status::Holds);
    assert_eq!(status(&article, "queue_drains"), Status::Holds);

    let safe = run("zk-fifo-queue:lock-safe", 3, 1, crash);
    assert_eq!(status(&safe, "no_lost_item"), Status::Holds);
    assert_eq!(status(&safe, "no_duplicate_item"), Status::Violated);
    let path = safe.path(PropertyName::NoDuplicateItem).unwrap().to_vec();
    assert!(
        path.iter().any(|a| matches!(a, Action::Crash(_))),
        "{path:?}"
    );
    // Nothing watches the lock directory: when the crashed consumer's lock
    // goes with its session, a consumer waiting for the queue to change
    // is not woken, and with no item to come the queue never drains.
    assert_eq!(status(&safe, "queue_drains"), Status::Violated);
}

/// With two items (one producer, two rounds), the lock-safe queue can take them out of order: an item
/// locked by a crashed consumer is passed over until its session expires.
#[test]
fn a_stale_lock_breaks_the_lock_safe_queues_order() {
    let crash = FaultBudget {
        crashes: 1,
        ..Default::default()
    };
    let r = run("zk-fifo-queue:lock-safe", 3, 2, crash);
    assert_eq!(status(&r, "fifo_order"), Status::Violated);
    let article = run("zk-fifo-queue", 3, 2, crash);
    assert_eq!(status(&article, "fifo_order"), Status::Holds);
}

/// Producers belong to queues, and a queue needs both roles.
#[test]
fn producers_are_checked() {
    let mut cfg = ModelCfg::new(recipes::parse("zk-fifo-queue").unwrap(), 4);
    assert_eq!(cfg.producers, 2, "half the clients by default");
    cfg.producers = 4;
    let e = cfg.validate().unwrap_err();
    assert!(
        e.reason.contains("producers must be at least 1 and fewer"),
        "{e}"
    );
    assert_eq!(e.setting, models::model::Setting::Producers);
    cfg.producers = 0;
    assert!(cfg.validate().is_err());
    let mut lock = ModelCfg::new(recipes::parse("fair-predecessor").unwrap(), 3);
    assert_eq!(lock.producers, 0);
    lock.producers = 1;
    let e = lock.validate().unwrap_err();
    assert!(e.reason.contains("producers are for queue recipes"), "{e}");
}

/// A consumer whose delete reply was lost, and which then finds the queue
/// empty and waits, has lost the item as surely as one that takes another;
/// a producer's resent create is a duplicate, not a queue that never
/// drains.
#[test]
fn a_lost_item_is_judged_when_its_consumer_goes_idle() {
    let lost = FaultBudget {
        lost_replies: 1,
        ..Default::default()
    };
    let r = run("zk-fifo-queue", 3, 1, lost);
    assert_eq!(status(&r, "no_lost_item"), Status::Violated);
    let r = run("zk-fifo-queue", 2, 1, lost);
    assert_eq!(status(&r, "no_duplicate_item"), Status::Violated);
    assert_eq!(status(&r, "queue_drains"), Status::Holds);
}
