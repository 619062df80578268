//! `zk-semaphore`: Curator's `InterProcessSemaphoreV2` (the default) and
//! kazoo's `Semaphore`, `k` permits (`permits_bound`).

use models::checker::{check, CheckOptions, CheckResult, Status};
use models::ids::{Child, SessionId, ZPath};
use models::model::{FaultBudget, ModelCfg, Setting};
use models::msg::{Reply, Request, WatchEvent, ZkEvent};
use models::name;
use models::properties::PropertyName;
use models::recipe::{Recipe, Step};
use models::recipes::{self, zk_semaphore};

fn check_k(recipe: &str, clients: u8, permits: u8, faults: FaultBudget) -> CheckResult {
    let cfg = ModelCfg {
        permits,
        faults,
        ..ModelCfg::new(recipes::parse(recipe).unwrap(), clients)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete);
    r
}

fn status(r: &CheckResult, p: PropertyName) -> Status {
    r.property(p).expect("judged for a semaphore").status
}

/// Without faults at most `k` hold, every release wakes at most one
/// waiter (the mutex's holder is the only one watching the leases), and
/// everyone gets a lease.
#[test]
fn k_leases_without_faults() {
    for (recipe, clients, permits, states) in [
        ("zk-semaphore", 3, 2, 91_177),
        ("zk-semaphore", 3, 1, 28_567),
        ("zk-semaphore:kazoo", 3, 2, 76_596),
        ("zk-semaphore:kazoo", 3, 1, 27_108),
    ] {
        let r = check_k(recipe, clients, permits, FaultBudget::default());
        assert_eq!(r.unique_states, states, "{recipe} k={permits}");
        for p in PropertyName::of(models::recipe::App::Semaphore) {
            assert_eq!(status(&r, *p), Status::Holds, "{recipe} k={permits}: {p}");
        }
    }
}

/// A lease holder paused past its session still believes it holds while
/// the store has given its lease to the next client: `k + 1` holders. (Asked
/// about `permits_bound` alone, the search stops at the level that decides
/// it: the whole space is 11.1 M states for Curator at 2 permits.)
#[test]
fn a_paused_holder_makes_k_plus_one() {
    let pause = FaultBudget {
        pauses: 1,
        ..FaultBudget::default()
    };
    for (recipe, permits, steps) in [("zk-semaphore", 2, 41), ("zk-semaphore:kazoo", 1, 38)] {
        let cfg = ModelCfg {
            permits,
            faults: pause,
            ..ModelCfg::new(recipes::parse(recipe).unwrap(), 3)
        };
        let opts = CheckOptions::default().asking(&[PropertyName::PermitsBound]);
        let r = check(&cfg.into_model().unwrap(), opts).unwrap();
        assert_eq!(status(&r, PropertyName::PermitsBound), Status::Violated);
        let path = r
            .path(PropertyName::PermitsBound)
            .expect("a counterexample");
        assert_eq!(path.len(), steps, "{recipe}");
    }
}

/// A crashed lease holder's lease goes with its session: nothing breaks.
#[test]
fn a_crashed_holder_gives_its_lease_back() {
    let crash = FaultBudget {
        crashes: 1,
        ..FaultBudget::default()
    };
    let r = check_k("zk-semaphore", 3, 2, crash);
    assert_eq!(r.unique_states, 553_566);
    assert!(r.all_hold());
}

/// Permits are a semaphore's: none, as many as the clients, or given to a
/// lock are refused, naming the setting.
#[test]
fn permits_out_of_range_are_refused() {
    let sem = recipes::parse("zk-semaphore").unwrap();
    for permits in [0, 3, 7] {
        let e = ModelCfg {
            permits,
            ..ModelCfg::new(sem.clone(), 3)
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.setting, Setting::Permits, "{permits}");
        assert!(e.reason.contains(&format!("got {permits}")), "{}", e.reason);
    }
    let e = ModelCfg {
        permits: 1,
        ..ModelCfg::new(recipes::parse("fair-predecessor").unwrap(), 3)
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.setting, Setting::Permits);
    assert!(e.reason.contains("semaphore"), "{}", e.reason);
}

/// kazoo's lease watch sets `wake_event` whenever it fires: a lease that
/// goes while kazoo's create and exists are out is not lost — the waiter
/// lists again instead of waiting for good (the model's false alarm
/// without it: `progress` violated at 3 clients, 2 permits).
#[test]
fn kazoo_keeps_a_wake_up_that_came_while_it_asked() {
    let r = recipes::parse("zk-semaphore:kazoo")
        .unwrap()
        .with_permits(2);
    assert!(r.notes_events());
    let me = SessionId::first(0);
    let sem = zk_semaphore::ZkSemaphore {
        library: zk_semaphore::Library::Kazoo,
        permits: 2,
    };
    let lock = recipes::fair_predecessor::Mine {
        node: Child {
            seq: Some(0),
            prefix: name!("lock-"),
            guid: Some(me),
        },
        czxid: Some(2),
    };
    let changed = WatchEvent::Zk {
        kind: ZkEvent::NodeChildrenChanged,
        path: ZPath::fixed(name!("/sem")),
    };
    for (woken, next) in [(false, Step::Wait), (true, Step::Send(sem_count()))] {
        let mut st = zk_semaphore::State::Checking(lock, false);
        if woken {
            sem.note_event(&mut st, &changed);
        }
        assert_eq!(sem.on_reply(me, &mut st, &Reply::Stat(None)), next);
    }
    // Curator sets its watch with the last request before it waits.
    assert!(!recipes::parse("zk-semaphore").unwrap().notes_events());
}

fn sem_count() -> Request {
    Request::GetChildren {
        path: ZPath::fixed(name!("/sem")),
        watch: true,
    }
}

/// `zk-semaphore:sync`: Curator's `InterProcessSemaphoreV2` with `sync()`
/// on the directory before each listing — the mutex's (as
/// `fair-predecessor:sync` takes it), the leases' count, and the look for
/// its lease after a lost create reply.
#[test]
fn the_sync_variant_syncs_before_every_listing() {
    let sem = recipes::parse("zk-semaphore:sync").unwrap();
    assert_eq!(sem.variant(), Some("sync"));
    let sem = zk_semaphore::ZkSemaphore {
        library: zk_semaphore::Library::CuratorSync,
        permits: 1,
    };
    let me = SessionId::first(0);
    let sync = |dir| Request::Sync {
        path: ZPath::fixed(dir),
    };
    let list = |dir, watch| Request::GetChildren {
        path: ZPath::fixed(dir),
        watch,
    };
    // The mutex.
    let (mut st, _) = sem.acquire(me);
    let lock = Child {
        seq: Some(0),
        prefix: name!("lock-"),
        guid: Some(me),
    };
    let created = Reply::Created {
        path: ZPath::child(name!("/sem/locks"), lock),
        czxid: 2,
    };
    assert_eq!(
        sem.on_reply(me, &mut st, &created),
        Step::Send(sync(name!("/sem/locks")))
    );
    assert_eq!(
        sem.on_reply(me, &mut st, &Reply::Synced),
        Step::Send(list(name!("/sem/locks"), false))
    );
    let Step::Send(create) = sem.on_reply(me, &mut st, &Reply::Children(vec![lock].into())) else {
        panic!("the mutex is ours: the lease's create next");
    };
    assert!(
        matches!(create, Request::Create { path: ZPath::Node { dir, .. }, .. } if dir == name!("/sem/leases")),
        "{create:?}"
    );
    // The leases' count.
    let mut lost = st;
    let lease = Child {
        seq: Some(0),
        prefix: name!("lease-"),
        guid: Some(me),
    };
    let created = Reply::Created {
        path: ZPath::child(name!("/sem/leases"), lease),
        czxid: 3,
    };
    assert_eq!(
        sem.on_reply(me, &mut st, &created),
        Step::Send(sync(name!("/sem/leases")))
    );
    assert_eq!(
        sem.on_reply(me, &mut st, &Reply::Synced),
        Step::Send(list(name!("/sem/leases"), true))
    );
    // The look for the lease, by its guid, after a lost create reply.
    assert_eq!(
        sem.on_lost_reply(&mut lost, &create),
        sync(name!("/sem/leases"))
    );
    assert_eq!(
        sem.on_reply(me, &mut lost, &Reply::Synced),
        Step::Send(list(name!("/sem/leases"), false))
    );
}
