//! `zk-rwlock`: the recipes page's shared lock and Curator's and kazoo's
//! read-write locks (`rw_exclusion`, `readers_share`).

use models::checker::{check, CheckOptions, CheckResult, Status};
use models::ids::{Child, Name, SessionId, ZPath};
use models::model::{FaultBudget, ModelCfg, Setting};
use models::msg::{Reply, Request};
use models::name;
use models::properties::PropertyName;
use models::recipe::{Recipe, SharedLockRecipe, Step};
use models::recipes::{self, zk_rwlock};

fn check_rw(recipe: &str, clients: u8, writers: u8, faults: FaultBudget) -> CheckResult {
    let cfg = ModelCfg {
        writers,
        faults,
        ..ModelCfg::new(recipes::parse(recipe).unwrap(), clients)
    };
    assert!(!cfg.clients_interchangeable(), "readers and writers differ");
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete);
    r
}

fn status(r: &CheckResult, p: PropertyName) -> Status {
    r.property(p).expect("judged for a shared lock").status
}

/// A writer holds alone, two readers hold at once (it is no mutex), the
/// writers' writes come in order, and everyone gets the lock: for each
/// library, with one writer and with two.
#[test]
fn writers_alone_readers_together() {
    for (recipe, clients, writers, states) in [
        ("zk-rwlock", 3, 1, 48_475),
        ("zk-rwlock", 3, 2, 36_131),
        // With one writer, the first writer is the nearest: Curator's and
        // kazoo's readers wait alike (getData), the page's with exists.
        ("zk-rwlock:curator", 3, 1, 32_315),
        ("zk-rwlock:kazoo", 3, 1, 32_315),
    ] {
        let r = check_rw(recipe, clients, writers, FaultBudget::default());
        assert_eq!(r.unique_states, states, "{recipe} {clients}/{writers}");
        for p in [
            PropertyName::RwExclusion,
            PropertyName::ResourceExclusion,
            PropertyName::Progress,
        ] {
            assert_eq!(status(&r, p), Status::Holds, "{recipe}: {p}");
        }
        let share = status(&r, PropertyName::ReadersShare);
        let readers = clients - writers;
        let want = if readers >= 2 {
            Status::Holds
        } else {
            Status::Violated
        };
        assert_eq!(share, want, "{recipe} with {readers} readers");
    }
}

/// A writer blind to the readers below it takes the lock beside them.
#[test]
fn a_reader_blind_writer_breaks_exclusion() {
    let r = check_rw("zk-rwlock:reader-blind", 3, 1, FaultBudget::default());
    assert_eq!(status(&r, PropertyName::RwExclusion), Status::Violated);
    assert_eq!(r.path(PropertyName::RwExclusion).map(|p| p.len()), Some(14));
}

/// A writer's lost create reply: with the guid it finds its node; without
/// it (ZOOKEEPER-1262) the resent create leaves an orphan that it and
/// everyone after it waits behind.
#[test]
fn a_lost_create_reply_orphans_a_node_without_the_guid() {
    let lost = FaultBudget {
        lost_replies: 1,
        ..FaultBudget::default()
    };
    let with = check_rw("zk-rwlock", 3, 1, lost);
    assert_eq!(with.unique_states, 400_754);
    assert!(with.all_hold());
    let without = check_rw("zk-rwlock:no-guid", 3, 1, lost);
    assert_eq!(status(&without, PropertyName::Progress), Status::Violated);
    assert_eq!(status(&without, PropertyName::RwExclusion), Status::Holds);
    assert_eq!(
        without.path(PropertyName::Progress).map(<[_]>::len),
        Some(5)
    );
}

/// Writers are a shared lock's: none, as many as the clients, or given to
/// a lock are refused, naming the setting.
#[test]
fn writers_out_of_range_are_refused() {
    let rw = recipes::parse("zk-rwlock").unwrap();
    for writers in [0, 3] {
        let e = ModelCfg {
            writers,
            ..ModelCfg::new(rw.clone(), 3)
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.setting, Setting::Writers, "{writers}");
    }
    let e = ModelCfg {
        writers: 1,
        ..ModelCfg::new(recipes::parse("fair-predecessor").unwrap(), 3)
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.setting, Setting::Writers);
}

fn node(client: u16, seq: u32, prefix: &'static str) -> Child {
    Child {
        seq: Some(seq),
        prefix: Name::intern(prefix).unwrap(),
        guid: Some(SessionId::first(client)),
    }
}

/// Which writer a waiting reader watches: the page's and kazoo's the
/// nearest below it, Curator's the first in the listing.
#[test]
fn a_reader_watches_the_writer_its_library_names() {
    let me = SessionId::first(3);
    for (library, read, write, watched, call) in [
        (zk_rwlock::Library::ZkDocs, "read-", "write-", 1, "exists"),
        (
            zk_rwlock::Library::Kazoo,
            "__rlock__",
            "__lock__",
            1,
            "get_data",
        ),
        (
            zk_rwlock::Library::Curator,
            "__READ__",
            "__WRIT__",
            0,
            "get_data",
        ),
    ] {
        let recipe = zk_rwlock::ZkRwLock(library);
        let writers = [node(0, 0, write), node(1, 1, write)];
        let mine = node(3, 3, read);
        let listing = vec![writers[0], writers[1], node(2, 2, read), mine];
        let (mut st, _) = recipe.acquire_shared(me);
        let created = Reply::Created {
            path: ZPath::child(name!("/lock"), mine),
            czxid: 9,
        };
        recipe.on_reply(me, &mut st, &created);
        let step = recipe.on_reply(me, &mut st, &Reply::Children(listing.into()));
        let path = ZPath::child(name!("/lock"), writers[watched]);
        let want = match call {
            "exists" => Request::Exists { path, watch: true },
            _ => Request::GetData { path, watch: true },
        };
        assert_eq!(step, Step::Send(want), "{library:?}");
    }
}

/// The `sync` variant: Curator's steps, each listing after a
/// `sync(/lock)` — after the create, and when a lost create reply sends it
/// looking for its node by guid — and Curator's choice of writer to watch.
#[test]
fn the_sync_variant_syncs_before_every_listing() {
    let me = SessionId::first(3);
    let recipe = zk_rwlock::ZkRwLock(zk_rwlock::Library::CuratorSync);
    assert_eq!(recipe.variant(), Some("sync"));
    let sync = Request::Sync {
        path: ZPath::Fixed(name!("/lock")),
    };
    let list = Request::GetChildren {
        path: ZPath::Fixed(name!("/lock")),
        watch: false,
    };
    let writers = [node(0, 0, "__WRIT__"), node(1, 1, "__WRIT__")];
    let mine = node(3, 3, "__READ__");
    let (mut st, _) = recipe.acquire_shared(me);
    let created = Reply::Created {
        path: ZPath::child(name!("/lock"), mine),
        czxid: 9,
    };
    assert_eq!(
        recipe.on_reply(me, &mut st, &created),
        Step::Send(sync.clone())
    );
    assert_eq!(
        recipe.on_reply(me, &mut st, &Reply::Synced),
        Step::Send(list.clone())
    );
    let listing = vec![writers[0], writers[1], mine];
    let watch = Request::GetData {
        path: ZPath::child(name!("/lock"), writers[0]),
        watch: true,
    };
    assert_eq!(
        recipe.on_reply(me, &mut st, &Reply::Children(listing.into())),
        Step::Send(watch)
    );
    let (mut lost, create) = recipe.acquire_shared(me);
    assert_eq!(recipe.on_lost_reply(&mut lost, &create), sync);
    assert_eq!(
        recipe.on_reply(me, &mut lost, &Reply::Synced),
        Step::Send(list)
    );
    assert_eq!(lost, zk_rwlock::State::Finding { reads: true });
}

/// Under faults: a crash (with fencing) breaks nothing — the dead client's
/// node goes with its session; a pause past the session lets a writer hold
/// beside the paused holder (asked about `rw_exclusion` alone, the search
/// stops at the level that decides it).
#[test]
fn a_crash_is_survived_and_a_pause_breaks_exclusion() {
    let cfg = ModelCfg {
        fencing: true,
        faults: FaultBudget {
            crashes: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(recipes::parse("zk-rwlock").unwrap(), 3)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert_eq!(r.unique_states, 368_644);
    assert!(r.all_hold());
    let cfg = ModelCfg {
        faults: FaultBudget {
            pauses: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(recipes::parse("zk-rwlock").unwrap(), 3)
    };
    let opts = CheckOptions::default().asking(&[PropertyName::RwExclusion]);
    let r = check(&cfg.into_model().unwrap(), opts).unwrap();
    assert_eq!(status(&r, PropertyName::RwExclusion), Status::Violated);
    assert_eq!(r.path(PropertyName::RwExclusion).map(<[_]>::len), Some(16));
}
