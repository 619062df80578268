//! The Redis face: what docs/redis.md's table says the checker finds, each
//! row a check whose verdicts are pinned, and the store's commands and
//! faults one by one.

mod common;

use common::violated;
use models::checker::{check, replay, CheckOptions, CheckResult};
use models::ids::{Data, SessionId};
use models::model::{Action, FaultBudget, ModelCfg};
use models::msg::{RedisCmd, RedisReply};
use models::name;
use models::properties::PropertyName::{self, *};
use models::recipes;
use models::store::redis::{Deployment, Persistence, RedisKv};

fn cfg(recipe: &str, clients: u8, faults: FaultBudget) -> ModelCfg {
    ModelCfg {
        faults,
        ..ModelCfg::new(recipes::parse(recipe).unwrap(), clients)
    }
}

fn run(cfg: ModelCfg) -> CheckResult {
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    assert!(r.complete);
    r
}

/// One master with an asynchronously replicated replica, no persistence.
fn replicated() -> RedisKv {
    RedisKv::deployed(
        1,
        Deployment {
            persistence: Persistence::None,
            replica: true,
        },
    )
}

fn one(f: fn(&mut FaultBudget)) -> FaultBudget {
    let mut b = FaultBudget::default();
    f(&mut b);
    b
}

#[test]
fn redis_token_holds_without_faults_and_breaks_at_the_lease_limit() {
    for faults in [
        FaultBudget::default(),
        one(|b| b.crashes = 1),
        one(|b| b.lost_replies = 1),
    ] {
        let r = run(cfg("redis-token", 3, faults));
        assert_eq!(violated(&r), Vec::<&str>::new(), "{faults:?}");
    }
    // No watches: herd_bound is not judged.
    let r = run(cfg("redis-token", 3, FaultBudget::default()));
    assert!(r.property(HerdBound).is_none());
    assert_eq!(r.unique_states, 353);
    // A pause past the TTL: two believers and interleaved writes, each
    // decided on a reply sent while the key was the client's.
    for fencing in [false, true] {
        let r = run(ModelCfg {
            fencing,
            ..cfg("redis-token", 3, one(|b| b.pauses = 1))
        });
        assert_eq!(
            violated(&r),
            ["mutual_exclusion", "resource_exclusion"],
            "fencing {fencing}: the token is random, 0 for every holder"
        );
    }
    // With a token from INCR the fence refuses the stale write.
    let r = run(ModelCfg {
        fencing: true,
        ..cfg("redis-token:incr-token", 3, one(|b| b.pauses = 1))
    });
    assert_eq!(violated(&r), ["holder_owns_key", "mutual_exclusion"]);
}

#[test]
fn redis_setnx_loses_progress_to_a_crash_between_its_two_commands() {
    let r = run(cfg("redis-setnx", 2, one(|b| b.crashes = 1)));
    assert_eq!(violated(&r), ["progress"]);
    let path = r.path(Progress).unwrap();
    assert!(path.iter().any(|a| matches!(a, Action::Crash(_))));
    let r = run(cfg("redis-setnx:atomic", 2, one(|b| b.crashes = 1)));
    assert_eq!(violated(&r), Vec::<&str>::new());
    // A stale holder's DEL removes the next holder's key.
    let r = run(cfg("redis-setnx", 3, one(|b| b.pauses = 1)));
    assert_eq!(
        violated(&r),
        ["holder_owns_key", "mutual_exclusion", "resource_exclusion"]
    );
    let r = run(cfg("redis-setnx:atomic", 3, one(|b| b.pauses = 1)));
    assert_eq!(violated(&r), ["mutual_exclusion", "resource_exclusion"]);
}

#[test]
fn redlock_holds_without_faults_and_falls_to_a_master_that_forgets() {
    for faults in [
        FaultBudget::default(),
        one(|b| b.crashes = 1),
        one(|b| b.lost_replies = 1),
    ] {
        let r = run(cfg("redlock", 2, faults));
        assert_eq!(violated(&r), Vec::<&str>::new(), "{faults:?}");
    }
    // The Redlock page's own example: a master of the holder's majority
    // restarts empty, another client takes a majority.
    let restart = one(|b| b.master_restarts = 1);
    let r = run(cfg("redlock", 2, restart));
    assert_eq!(
        violated(&r),
        ["holder_owns_key", "mutual_exclusion", "resource_exclusion"]
    );
    let model = cfg("redlock", 2, restart).into_model().unwrap();
    let path = r.path(MutualExclusion).unwrap();
    assert_eq!(path.len(), 27);
    assert!(path.iter().any(|a| matches!(a, Action::RestartMaster(2))));
    replay(&model, path).expect("the counterexample replays");
    // With appendfsync always the restart loses nothing.
    let r = run(ModelCfg {
        deployment: Deployment {
            persistence: Persistence::AppendfsyncAlways,
            replica: false,
        },
        ..cfg("redlock", 2, restart)
    });
    assert_eq!(violated(&r), Vec::<&str>::new());
    // A clock jump expires the holder's key on one master of its majority.
    let r = run(cfg("redlock", 2, one(|b| b.clock_jumps = 1)));
    assert!(violated(&r).contains(&"mutual_exclusion"));
}

/// Three contenders on three masters can split the votes, each release
/// and meet again: a livelock the spec's random retry delay makes
/// unlikely, which an untimed checker owes no randomness to rule out.
#[test]
fn redlock_split_votes_can_repeat_for_ever() {
    let recipe = recipes::parse("redlock").unwrap().on_masters(3).unwrap();
    let r = run(ModelCfg::new(recipe, 3));
    assert_eq!(violated(&r), ["progress"]);
    assert!(r.property(Progress).unwrap().repeats_from.is_some());
}

/// A deployment with a replica and one failover.
fn failover(recipe: &str) -> ModelCfg {
    ModelCfg {
        deployment: Deployment {
            persistence: Persistence::None,
            replica: true,
        },
        ..cfg(recipe, 2, one(|b| b.failovers = 1))
    }
}

#[test]
fn a_failover_loses_a_lock_the_replica_had_not_received() {
    let r = run(failover("redis-token"));
    assert_eq!(violated(&r), ["mutual_exclusion", "resource_exclusion"]);
    assert_eq!(r.unique_states, 1_446);
    let path = r.path(MutualExclusion).unwrap();
    assert!(path.iter().any(|a| matches!(a, Action::Failover)));
}

/// Redisson #7272: an interrupt while the acquire is on its way; the late
/// grant arms a watchdog after the caller's unlock, and nobody acquires
/// again. The fix gives the grant back. Without an interrupt the two
/// variants are one model.
#[test]
fn a_watchdog_armed_after_the_unlock_renews_a_key_nobody_holds() {
    let late = run(cfg(
        "redis-token:watchdog-after-unlock",
        2,
        one(|b| b.interrupts = 1),
    ));
    assert_eq!(violated(&late), ["progress"]);
    assert_eq!(late.unique_states, 433);
    let path = late.path(Progress).unwrap();
    // From the interrupt on, the grant on its way decides it.
    assert_eq!(path.len(), 5);
    assert!(matches!(path[4], Action::Interrupt(0)), "{path:?}");
    let fixed = run(cfg("redis-token:watchdog", 2, one(|b| b.interrupts = 1)));
    assert_eq!(violated(&fixed), Vec::<&str>::new());
    assert_eq!(fixed.unique_states, 510);
    // The fix holds with more faults beside the interrupt (a lost answer
    // leaves a key that expires), and over two rounds (the late grant's
    // key does not expire under the next round's hold).
    for faults in [
        one(|b| {
            b.interrupts = 1;
            b.lost_replies = 1;
            b.crashes = 1;
        }),
        one(|b| {
            b.interrupts = 1;
            b.lost_replies = 1;
        }),
        one(|b| b.interrupts = 2),
    ] {
        let fixed = run(cfg("redis-token:watchdog", 2, faults));
        assert_eq!(violated(&fixed), Vec::<&str>::new(), "{faults:?}");
    }
    let fixed = run(ModelCfg {
        rounds: 2,
        ..cfg("redis-token:watchdog", 2, one(|b| b.interrupts = 1))
    });
    assert_eq!(violated(&fixed), Vec::<&str>::new());
    for faults in [FaultBudget::default(), one(|b| b.pauses = 1)] {
        let a = run(cfg("redis-token:watchdog", 2, faults));
        let b = run(cfg("redis-token:watchdog-after-unlock", 2, faults));
        assert_eq!(a.unique_states, b.unique_states, "{faults:?}");
        assert_eq!(violated(&a), violated(&b), "{faults:?}");
    }
}

/// `WAIT 1` after the `SET` does not close the window: a failover between
/// the `SET`'s answer and the `WAIT`'s arrival sends the `WAIT` to the
/// promoted replica, which has no change to wait for and answers 1 at
/// once — as Redis, whose `WAIT` counts the connection's own writes,
/// answers on a fresh connection. The holder then holds no key
/// (`holder_owns_key`), and the next `SET NX` succeeds beside it.
#[test]
fn wait_after_set_still_loses_a_lock_to_a_failover_before_the_wait() {
    let r = run(failover("redis-token:wait"));
    assert_eq!(
        violated(&r),
        ["holder_owns_key", "mutual_exclusion", "resource_exclusion"]
    );
    assert_eq!(r.unique_states, 1_110);
    let path = r.path(HolderOwnsKey).unwrap();
    let at = |f: fn(&Action) -> bool| path.iter().position(f).unwrap();
    let failed_over = at(|a| matches!(a, Action::Failover));
    let last = path.len() - 1;
    assert!(
        failed_over < last,
        "the failover comes before the WAIT's answer"
    );
    assert!(
        !path.iter().any(|a| matches!(a, Action::Replicate)),
        "the WAIT is answered with no change replicated: {path:?}"
    );
    // Without a failover WAIT protects nothing it need not: every property
    // holds, the replica catching up before each hold.
    let r = run(ModelCfg {
        faults: FaultBudget::default(),
        ..failover("redis-token:wait")
    });
    assert_eq!(violated(&r), Vec::<&str>::new());
    // Without a replica WAIT answers 0 at once and the lock is never held.
    let r = run(cfg("redis-token:wait", 2, FaultBudget::default()));
    assert_eq!(violated(&r), ["hand_off", "progress"]);
}

#[test]
fn a_wait_is_held_until_the_replica_has_every_change_before_it() {
    let s = SessionId::first(0);
    let key = name!("lock");
    let mut kv = replicated();
    let wait = RedisCmd::Wait {
        replicas: 1,
        timeout_ms: 200,
    };
    // Nothing to wait for: answered at once, one replica.
    assert!(!kv.holds_back(0, wait));
    assert_eq!(kv.apply(s, 0, wait).0, RedisReply::Int(1));
    let set = RedisCmd::Set {
        key,
        value: Data::Session(s),
        nx: false,
        px: Some(100),
    };
    kv.apply(s, 0, set);
    kv.apply(s, 0, RedisCmd::Del { key });
    assert!(kv.holds_back(0, wait));
    kv.hold_wait(s, 7);
    assert!(kv.holds_wait(0, 7) && !kv.holds_wait(0, 6));
    // Two changes ahead of it: the first applied, it still waits.
    assert!(kv.replicate_one().is_some());
    assert!(kv.take_waits(true).is_empty());
    assert!(kv.replicate_one().is_some());
    let answered = kv.take_waits(true);
    assert_eq!(answered.len(), 1);
    assert_eq!((answered[0].session, answered[0].epoch), (s, 7));
    assert!(!kv.holds_wait(0, 7));
    // `WAIT 0` never waits; another master has no replica.
    kv.apply(s, 0, set);
    let wait0 = RedisCmd::Wait {
        replicas: 0,
        timeout_ms: 200,
    };
    assert!(!kv.holds_back(0, wait0));
    assert_eq!(kv.apply(s, 0, wait0).0, RedisReply::Int(0));
    // No replica: 0 at once.
    let mut bare = RedisKv::new(1);
    assert!(!bare.holds_back(0, wait));
    assert_eq!(bare.apply(s, 0, wait).0, RedisReply::Int(0));
}

#[test]
fn the_commands_answer_as_redis_does() {
    let s = SessionId::first(0);
    let t = SessionId::first(1);
    let key = name!("lock");
    let mut kv = RedisKv::new(1);
    let set = |s, nx, px| RedisCmd::Set {
        key,
        value: Data::Session(s),
        nx,
        px,
    };
    assert_eq!(kv.apply(s, 0, set(s, true, Some(100))).0, RedisReply::Ok);
    assert_eq!(kv.apply(t, 0, set(t, true, Some(100))).0, RedisReply::Nil);
    let setnx = RedisCmd::SetNx {
        key,
        value: Data::Session(t),
    };
    assert_eq!(kv.apply(t, 0, setnx).0, RedisReply::Int(0));
    assert_eq!(
        kv.apply(t, 0, RedisCmd::Get { key }).0,
        RedisReply::Value(Data::Session(s))
    );
    // Compare-and-delete by someone else's token deletes nothing.
    let del_t = RedisCmd::DelIfValue {
        key,
        value: Data::Session(t),
    };
    assert_eq!(kv.apply(t, 0, del_t).0, RedisReply::Int(0));
    let extend = RedisCmd::ExpireIfValue {
        key,
        value: Data::Session(s),
        ms: 300,
    };
    assert_eq!(kv.apply(s, 0, extend).0, RedisReply::Int(1));
    assert_eq!(kv.get(0, key).unwrap().ttl.unwrap().ms, 300);
    assert!(kv.expire(0, key));
    assert_eq!(kv.apply(t, 0, RedisCmd::Get { key }).0, RedisReply::Nil);
    let expire = RedisCmd::Expire {
        key,
        ms: 1000,
        seconds: true,
    };
    assert_eq!(kv.apply(t, 0, expire).0, RedisReply::Int(0));
    let fence = name!("lock:fence");
    assert_eq!(
        kv.apply(t, 0, RedisCmd::Incr { key: fence }).0,
        RedisReply::Int(1)
    );
    assert_eq!(
        kv.apply(s, 0, RedisCmd::Incr { key: fence }).0,
        RedisReply::Int(2)
    );
    assert_eq!(
        kv.apply(s, 0, RedisCmd::Del { key: fence }).0,
        RedisReply::Int(1)
    );
    // A master the deployment does not have is down.
    assert_eq!(kv.apply(s, 3, RedisCmd::Get { key }).0, RedisReply::Down);
}

#[test]
fn a_replica_lags_and_a_failover_keeps_only_what_it_received() {
    let s = SessionId::first(0);
    let key = name!("lock");
    let mut kv = replicated();
    let set = RedisCmd::Set {
        key,
        value: Data::Session(s),
        nx: true,
        px: Some(100),
    };
    kv.apply(s, 0, set);
    // A SET NX that finds the key changes nothing and sends nothing on.
    kv.apply(s, 0, set);
    assert_eq!(kv.replica.as_ref().unwrap().backlog.len(), 1);
    kv.fail_over();
    assert!(kv.get(0, key).is_none(), "the replica had not received it");
    kv.apply(s, 0, set);
    assert!(kv.replicate_one().is_some());
    kv.fail_over();
    assert!(kv.get(0, key).is_some());
}

#[test]
fn redis_settings_are_refused_where_they_mean_nothing() {
    use models::model::Setting;
    let refused = |cfg: ModelCfg| cfg.validate().unwrap_err().setting;
    assert_eq!(
        refused(cfg("fair-predecessor", 2, one(|b| b.clock_jumps = 1))),
        Setting::Redis("clock_jumps")
    );
    assert_eq!(
        refused(cfg("redis-token", 2, one(|b| b.failovers = 1))),
        Setting::Redis("failovers")
    );
    assert_eq!(
        refused(ModelCfg {
            policy: models::client::Policy::LeaseAware,
            ..cfg("redis-token", 2, FaultBudget::default())
        }),
        Setting::Policy
    );
    // Only a library that returns from an interrupted acquire takes one.
    for recipe in ["redis-token", "fair-predecessor", "redlock"] {
        assert_eq!(
            refused(cfg(recipe, 2, one(|b| b.interrupts = 1))),
            Setting::Interrupts,
            "{recipe}"
        );
    }
    let even = recipes::parse("redlock").unwrap().on_masters(4).unwrap();
    assert_eq!(refused(ModelCfg::new(even, 2)), Setting::Masters);
    let _: PropertyName = MutualExclusion;
}
