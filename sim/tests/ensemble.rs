//! An ensemble in the simulator: `servers` and `timing.apply_ms`, each
//! follower applying every commit a drawn delay later (traced as `apply`),
//! the same trace from the same seed, and the file's bad settings refused
//! naming their key.

use sim::engine::simulate;
use sim::scenario::Scenario;
use sim::trace::{FollowerChange, TraceEvent};

fn parse(toml: &str) -> Result<Scenario, sim::scenario::ScenarioError> {
    Scenario::parse(toml, "inline.toml", "inline")
}

/// A lock over `servers` servers with one lag fault, its `fields` given.
fn lag(servers: u8, fields: &str) -> String {
    format!(
        "{}[[schedule]]\nat_ms = 10\nkind = \"lag\"\n{fields}\n",
        lock(servers, "")
    )
}

/// A lock over `servers` servers whose leader fails over at 10 ms, its
/// `fields` given.
fn failover(servers: u8, fields: &str) -> String {
    format!(
        "{}[[schedule]]\nat_ms = 10\nkind = \"failover\"\n{fields}\n",
        lock(servers, "")
    )
}

/// The same file with etcd's `concurrency.Mutex` for the lock.
fn etcd(toml: String) -> String {
    toml.replace("fair-predecessor", "etcd-revision")
        .replace("variant = \"curator\"\n", "")
}

fn lock(servers: u8, apply: &str) -> String {
    format!(
        "recipe = \"fair-predecessor\"\nvariant = \"curator\"\nclients = 3\nrounds = 2\n\
         servers = {servers}\n[timing]\nthink_ms = [20, 200]\nhold_ms = [100, 400]\n{apply}"
    )
}

/// Three servers, no faults: nothing is violated, each follower applies
/// the commits in the one order (traced), and a seed gives the same trace
/// every time.
#[test]
fn an_ensemble_runs_clean_and_the_same_from_the_same_seed() {
    let s = parse(&lock(3, "apply_ms = [1, 50]\n")).unwrap();
    assert_eq!(s.servers, 3);
    assert_eq!(s.timing.apply_us, Some((1_000, 50_000)));
    for seed in 0..30 {
        let o = simulate(&s, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        // Each follower applies the one log in its order (the run may end
        // with the last few commits still on their way to one of them).
        let log = |srv: u8| -> Vec<String> {
            o.trace
                .iter()
                .filter_map(|l| match &l.event {
                    TraceEvent::Apply { server, change } if *server == srv => Some(change.clone()),
                    _ => None,
                })
                .collect()
        };
        let (one, two) = (log(1), log(2));
        assert!(one.len() > 5 && two.len() > 5, "seed {seed}");
        let n = one.len().min(two.len());
        assert_eq!(one[..n], two[..n], "seed {seed}");
        assert_eq!(o.trace_hash, simulate(&s, seed, true).trace_hash);
        assert!(o.trace_hash.is_some());
    }
    // The default: a follower applies one link's latency after a commit.
    let d = parse(&lock(3, "")).unwrap();
    assert_eq!(d.timing.apply_us, Some(d.timing.latency_us));
}

/// A follower's client is answered once its server has applied its write:
/// with followers that take half a second to apply, every acquisition
/// waits at least that long for its create's answer.
#[test]
fn a_followers_client_waits_for_its_server_to_apply() {
    let slow = parse(&lock(3, "apply_ms = [500, 500]\n")).unwrap();
    let fast = parse(&lock(1, "")).unwrap();
    for seed in 0..10 {
        let (s, f) = (simulate(&slow, seed, false), simulate(&fast, seed, false));
        assert!(s.violations.is_empty(), "seed {seed}");
        assert!(
            s.metrics.end_us >= f.metrics.end_us + 500_000,
            "seed {seed}: {} µs on three servers, {} on one",
            s.metrics.end_us,
            f.metrics.end_us
        );
    }
}

#[test]
fn bad_ensemble_settings_are_refused_naming_the_key() {
    for (toml, key, says) in [
        (lock(2, ""), "servers", "odd"),
        (lock(0, ""), "servers", "odd"),
        (lock(9, ""), "servers", "1 to 7"),
        (
            lock(1, "apply_ms = [1, 2]\n"),
            "timing.apply_ms",
            "servers = 3",
        ),
        (lock(3, "apply_ms = [5, 1]\n"), "timing.apply_ms", ""),
        (
            lock(3, "apply_ms = [100, 3000]\n"),
            "timing.apply_ms",
            "half the read timeout",
        ),
        (
            "recipe = \"redis-token\"\nclients = 2\nservers = 3\n".to_string(),
            "servers",
            "ZooKeeper's or etcd's",
        ),
        (
            "recipe = \"consul-lock\"\nclients = 2\nservers = 3\n".to_string(),
            "servers",
            "ZooKeeper's or etcd's",
        ),
        (
            "recipe = \"etcd-revision\"\nclients = 2\nservers = 3\nlocal_sessions = true\n"
                .to_string(),
            "local_sessions",
            "ZooKeeper's",
        ),
        (
            format!("{}local_sessions = true\n", "recipe = \"fair-predecessor\"\nclients = 2\n"),
            "local_sessions",
            "servers 3 or more",
        ),
        (lag(1, "server = 1\nduration_ms = 100"), "schedule[0].kind", "one server"),
        (lag(3, "server = 0\nduration_ms = 100"), "schedule[0].server", "leader"),
        (lag(3, "server = 3\nduration_ms = 100"), "schedule[0].server", "no follower"),
        (lag(3, "duration_ms = 100"), "schedule[0].server", "needs the follower"),
        (lag(3, "server = 1"), "schedule[0].duration_ms", "how long"),
        (lag(3, "server = 1\nclient = 0\nduration_ms = 100"), "schedule[0].server", "not a client"),
        (
            lag(1, "server = 1\nduration_ms = 100").replace("\"lag\"", "\"isolate\""),
            "schedule[0].kind",
            "one server has none",
        ),
        (
            lock(1, "sync_limit_ms = 2000\n"),
            "timing.sync_limit_ms",
            "ZooKeeper recipe with `servers = 3`",
        ),
        (lock(3, "sync_limit_ms = 0\n"), "timing.sync_limit_ms", "more than 0"),
        (
            format!(
                "{}[[schedule]]\nat_ms = 50\nkind = \"isolate\"\nserver = 1\nduration_ms = 100\n",
                lag(3, "server = 1\nduration_ms = 100")
            ),
            "schedule[1].at_ms",
            "overlaps an earlier lag, isolate or mute of server 1",
        ),
        (
            format!(
                "{}[[schedule]]\nat_ms = 50\nkind = \"mute\"\nserver = 1\nduration_ms = 100\n",
                lag(3, "server = 1\nduration_ms = 100")
            ),
            "schedule[1].at_ms",
            "overlaps an earlier lag, isolate or mute of server 1",
        ),
        (
            lag(1, "server = 1\nduration_ms = 100").replace("\"lag\"", "\"mute\""),
            "schedule[0].kind",
            "one server has none",
        ),
        (
            etcd(lag(3, "server = 1\nduration_ms = 100").replace("\"lag\"", "\"mute\"")),
            "schedule[0].kind",
            "a mute is a ZooKeeper follower's",
        ),
        (
            lag(3, "duration_ms = 100").replace("\"lag\"", "\"mute\""),
            "schedule[0].server",
            "needs the follower",
        ),
        (
            format!(
                "{}[[schedule]]\nat_ms = 50\nkind = \"mute\"\nserver = 2\nduration_ms = 100\n",
                lag(3, "server = 1\nduration_ms = 100").replace("\"lag\"", "\"isolate\"")
            ),
            "schedule[0].at_ms",
            "at most 1 can be cut off at once",
        ),
        (
            format!(
                "{}[[schedule]]\nat_ms = 10\nkind = \"pause\"\nclient = 0\nserver = 1\nduration_ms = 100\n",
                lock(3, "")
            ),
            "schedule[0].server",
            "only a lag",
        ),
        (lock(1, "tick_ms = 1000\n"), "timing.tick_ms", "servers = 3"),
        (lock(3, "tick_ms = 0\n"), "timing.tick_ms", "more than 0"),
        (failover(3, "duration_ms = 5000"), "schedule[0].duration_ms", "outlast"),
        (failover(3, ""), "schedule[0].duration_ms", "how long"),
        (failover(3, "duration_ms = 20000\nserver = 1"), "schedule[0].server", "whichever"),
        (
            format!(
                "{}[[schedule]]\nat_ms = 50\nkind = \"failover\"\nduration_ms = 20000\n",
                failover(3, "duration_ms = 20000")
            ),
            "schedule[1].kind",
            "once a run",
        ),
        (
            format!(
                "{}[[schedule]]\nat_ms = 50\nkind = \"isolate\"\nserver = 2\nduration_ms = 100\n",
                lag(3, "server = 1\nduration_ms = 100").replace("\"lag\"", "\"isolate\"")
            ),
            "schedule[0].at_ms",
            "at most 1 can be cut off at once",
        ),
        (
            format!(
                "{}[[schedule]]\nat_ms = 50\nkind = \"isolate\"\nserver = 2\nduration_ms = 100\n",
                failover(3, "duration_ms = 20000")
            ),
            "schedule[1].at_ms",
            "or the leader has no quorum",
        ),
        (
            etcd(failover(3, "duration_ms = 1000")),
            "schedule[0].duration_ms",
            "outlast timing.election_timeout_ms (1000 ms)",
        ),
        (
            etcd(lock(1, "election_timeout_ms = 500\n")),
            "timing.election_timeout_ms",
            "an etcd recipe with `servers = 3`",
        ),
        (
            lock(3, "election_timeout_ms = 500\n"),
            "timing.election_timeout_ms",
            "an etcd recipe",
        ),
        (
            etcd(lock(3, "election_timeout_ms = 0\n")),
            "timing.election_timeout_ms",
            "more than 0",
        ),
    ] {
        match parse(&toml) {
            Ok(_) => panic!("accepted:\n{toml}"),
            Err(e) => {
                assert_eq!(e.key, key, "{toml}");
                assert!(e.reason.contains(says), "{toml}: {}", e.reason);
            }
        }
    }
}

/// The herd over an ensemble: a release's notifications come from each
/// server as it applies the release, and the simulator adds them up per
/// release. `children-watch`, whose every release wakes every waiter,
/// breaks `herd_bound` on three servers as on one, and its rows count
/// every server's notifications: those per change (a create's, a
/// release's) add up to all of them, as do those per server, and some
/// release woke more than one waiter. The fair lock wakes one waiter a release over three servers.
#[test]
fn a_releases_herd_is_added_up_over_the_servers() {
    let file = |recipe: &str, servers: u8| {
        parse(&format!(
            "recipe = \"{recipe}\"\nclients = 4\nrounds = 2\nservers = {servers}\n\
             [timing]\nthink_ms = [20, 200]\nhold_ms = [100, 400]\n"
        ))
        .unwrap()
    };
    let (one, three) = (file("children-watch", 1), file("children-watch", 3));
    for seed in 0..5 {
        assert!(simulate(&one, seed, false)
            .first_violation("herd_bound")
            .is_some());
        let o = simulate(&three, seed, true);
        assert!(o.first_violation("herd_bound").is_some(), "seed {seed}");
        let m = &o.metrics;
        let per_change: u64 = m
            .notifications_per_change
            .iter()
            .map(|&n| u64::from(n))
            .sum();
        assert_eq!(per_change, m.notifications, "seed {seed}");
        assert_eq!(m.notifications_per_server.len(), 3);
        assert_eq!(
            m.notifications_per_server.iter().sum::<u64>(),
            m.notifications
        );
        let servers = m
            .notifications_per_server
            .iter()
            .filter(|&&n| n > 0)
            .count();
        assert!(servers > 1, "seed {seed}: {:?}", m.notifications_per_server);
        assert!(m.notifications_per_release.iter().any(|&n| n > 1));
    }
    let fair = file("fair-predecessor", 3);
    for seed in 0..5 {
        let o = simulate(&fair, seed, false);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        assert!(o.metrics.notifications_per_release.iter().all(|&n| n <= 1));
        assert!(o.metrics.notifications > 0);
    }
}

/// The shipped CURATOR-604 pair, at every seed of a range: with local
/// sessions client 0 holds on its old node, listed by lagging server 2 to
/// its new session, then client 1 holds too once server 2 applies the
/// expiry; with global sessions the new session is answered after the
/// expiry and nothing is violated. The trace says where client 0 went.
#[test]
fn curator_604_double_locks_with_local_sessions_and_not_with_global_ones() {
    let shipped = |name: &str| {
        let path = format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        Scenario::parse(&std::fs::read_to_string(&path).unwrap(), &path, name).unwrap()
    };
    let local = shipped("curator-604-stale-view-double-lock");
    let global = shipped("curator-604-global-sessions");
    assert!(local.local_sessions && !global.local_sessions);
    for seed in 0..20 {
        let o = simulate(&local, seed, true);
        let owns = o
            .first_violation("holder_owns_key")
            .expect("holder_owns_key");
        let both = o
            .first_violation("mutual_exclusion")
            .expect("mutual_exclusion");
        assert!(owns.at_us < both.at_us, "seed {seed}");
        assert!(o.trace.iter().any(|l| matches!(
            l.event,
            TraceEvent::Moved {
                client: 0,
                server: 2,
                ..
            }
        )));
        assert!(o.trace.iter().any(|l| matches!(
            l.event,
            TraceEvent::Follower {
                server: 2,
                change: FollowerChange::Lags { .. }
            }
        )));
        let g = simulate(&global, seed, true);
        assert!(g.violations.is_empty(), "seed {seed}: {:?}", g.violations);
    }
}

/// The reconnect floor in the simulator: client 0 has been answered by
/// server 1 while server 2 stopped applying; frozen past its read timeout
/// (not its session), it reconnects, and server 2, next in its list, is
/// behind what it has seen: refused, it lands on the leader.
#[test]
fn a_reconnect_skips_a_server_behind_the_clients_last_seen_zxid() {
    let s = parse(
        "recipe = \"fair-predecessor\"\nvariant = \"curator\"\nclients = 3\nrounds = 3\n\
         servers = 3\n[timing]\nsession_timeout_ms = 6000\nthink_ms = [20, 200]\n\
         hold_ms = [300, 600]\n\
         [[schedule]]\nat_ms = 0\nkind = \"lag\"\nserver = 2\nduration_ms = 9000\n\
         [[schedule]]\nat_ms = 300\nkind = \"pause\"\nclient = 0\nduration_ms = 5000\n",
    )
    .unwrap();
    for seed in 0..10 {
        let o = simulate(&s, seed, true);
        let moved: Vec<&TraceEvent> = o
            .trace
            .iter()
            .map(|l| &l.event)
            .filter(|e| matches!(e, TraceEvent::Moved { client: 0, .. }))
            .collect();
        assert!(
            matches!(
                moved.first(),
                Some(TraceEvent::Moved {
                    server: 0,
                    refused,
                    ..
                }) if refused == &[2]
            ),
            "seed {seed}: {moved:?}"
        );
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
    }
}

/// A follower cut off from the leader keeps its client's connection up:
/// the holder on it, suspend-aware, is told nothing while the leader
/// expires its session and the other client takes the lock; the window
/// closes when the follower gives the leader up, syncLimit × tickTime
/// after the cut, and the holder releases at that moment. With syncLimit
/// × tickTime under the session timeout the connection drops first, the
/// session lives on another server, and nothing is violated.
#[test]
fn an_isolated_follower_keeps_its_holder_until_sync_limit() {
    let shipped = |name: &str| {
        let path = format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        Scenario::parse(&std::fs::read_to_string(&path).unwrap(), &path, name).unwrap()
    };
    let long = shipped("isolated-follower-keeps-holder");
    let short = shipped("isolated-follower-short-sync-limit");
    assert_eq!(long.timing.sync_limit_us, Some(10_000_000));
    assert_eq!(short.timing.sync_limit_us, Some(2_000_000));
    let cut_at = 500_000;
    for seed in 0..20 {
        let o = simulate(&long, seed, true);
        let both = o
            .first_violation("mutual_exclusion")
            .expect("mutual_exclusion");
        assert!(
            both.at_us > cut_at + 4_000_000 - 1_000_000 && both.at_us < cut_at + 10_000_000,
            "seed {seed}: {}",
            both.at_us
        );
        let at = |pred: &dyn Fn(&TraceEvent) -> bool| {
            o.trace.iter().find(|l| pred(&l.event)).map(|l| l.t)
        };
        let dropped = at(&|e| {
            matches!(
                e,
                TraceEvent::Follower {
                    server: 1,
                    change: FollowerChange::Dropped
                }
            )
        });
        assert_eq!(dropped, Some(cut_at + 10_000_000), "seed {seed}");
        let released = at(&|e| matches!(e, TraceEvent::Release { client: 0 }));
        assert_eq!(
            released, dropped,
            "seed {seed}: the window closes at the drop"
        );
        let g = simulate(&short, seed, true);
        assert!(g.violations.is_empty(), "seed {seed}: {:?}", g.violations);
    }
}

/// The one-way twin of the isolated follower: the leader stops hearing
/// server 1 (a mute) but server 1 still hears the leader. The holder's
/// session, silent at the leader, expires there as under the two-way cut;
/// but server 1 applies the expiry as every server does and tells the
/// holder, which (suspend-aware) releases within 2 ms of it. A
/// double hold is left only to the race between that notice and the other
/// client's acquisition, which the notice wins on most seeds, and it ends
/// when the notice arrives; under the two-way cut it lasts until server 1
/// gives the leader up. The leader drops server 1 at syncLimit × tickTime.
#[test]
fn a_muted_follower_tells_its_holder_of_the_expiry_when_it_applies_it() {
    let muted = shipped("muted-follower-tells-holder");
    let cut = shipped("isolated-follower-keeps-holder");
    let (mute_at, limit) = (500_000, 10_000_000);
    let mut raced = 0;
    for seed in 0..200 {
        let o = simulate(&muted, seed, true);
        assert_eq!(
            follower_change(
                &o,
                1,
                FollowerChange::Muted {
                    duration_us: 15_000_000
                }
            ),
            Some(mute_at),
            "seed {seed}"
        );
        assert_eq!(
            follower_change(&o, 1, FollowerChange::DroppedByLeader),
            Some(mute_at + limit),
            "seed {seed}: the leader drops it at syncLimit × tickTime"
        );
        let expired = expiry_of(&o, 0).expect("client 0's session expires at the leader");
        assert!(
            expired > mute_at + 3_000_000 && expired < mute_at + limit,
            "seed {seed}"
        );
        let released = o
            .trace
            .iter()
            .find(|l| matches!(l.event, TraceEvent::Release { client: 0 }))
            .map(|l| l.t)
            .expect("client 0 releases");
        assert!(
            released > expired && released < expired + 2_000,
            "seed {seed}: told of the expiry within its server's apply and a message \
             ({expired} → {released})"
        );
        if let Some(both) = o.first_violation("mutual_exclusion") {
            raced += 1;
            assert!(
                both.at_us <= released,
                "seed {seed}: the window ends with the notice"
            );
        }
        if seed < 20 {
            let c = simulate(&cut, seed, true);
            let both = c
                .first_violation("mutual_exclusion")
                .expect("the two-way cut");
            assert!(both.at_us + 5_000_000 < mute_at + limit, "seed {seed}");
        }
    }
    assert!(raced < 20, "{raced} of 200 seeds raced the notice");
    assert!(
        raced > 0,
        "no seed raced the notice: the window is not modelled"
    );
}

/// A client paused while its follower gave the leader up finds the
/// connection closed when it resumes, however short the pause, and
/// reconnects elsewhere at once: it is not left talking to a server that
/// answers nothing until it rejoins.
#[test]
fn a_client_frozen_while_its_follower_dropped_reconnects_when_it_resumes() {
    let s = parse(
        "recipe = \"fair-predecessor\"\nvariant = \"curator\"\nclients = 2\nrounds = 2\n\
         servers = 3\n[timing]\nsession_timeout_ms = 8000\nsync_limit_ms = 3000\n\
         think_ms = [20, 50]\nhold_ms = [200, 400]\n\
         [[schedule]]\nat_ms = 100\nkind = \"isolate\"\nserver = 1\nduration_ms = 10000\n\
         [[schedule]]\nat_ms = 2900\nkind = \"pause\"\nclient = 0\nduration_ms = 300\n",
    )
    .unwrap();
    for seed in 0..10 {
        let o = simulate(&s, seed, true);
        let moved = o
            .trace
            .iter()
            .find(|l| matches!(l.event, TraceEvent::Moved { client: 0, .. }));
        assert_eq!(moved.map(|l| l.t), Some(3_200_000), "seed {seed}");
    }
}

fn shipped(name: &str) -> Scenario {
    let path = format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    Scenario::parse(&std::fs::read_to_string(&path).unwrap(), &path, name).unwrap()
}

/// When client `c` first holds in `o`'s trace.
fn first_hold(o: &sim::engine::Outcome, c: u16) -> Option<u64> {
    o.trace
        .iter()
        .find(|l| matches!(l.event, TraceEvent::Hold { client, .. } if client == c))
        .map(|l| l.t)
}

/// When `change` first happens to `server` in `o`'s trace.
fn follower_change(o: &sim::engine::Outcome, server: u8, change: FollowerChange) -> Option<u64> {
    o.trace
        .iter()
        .find(|l| {
            matches!(&l.event, TraceEvent::Follower { server: s, change: c }
                if *s == server && *c == change)
        })
        .map(|l| l.t)
}

/// ZOOKEEPER-1675: a leader cut off from its followers answers `sync` at
/// once while it still believes it leads, behind the commits of the
/// leader the followers elected meanwhile. The followers elect at exactly
/// cut + syncLimit × tickTime (the highest id, server 2); the old leader
/// stops leading a tick later; the stale `sync` falls between. Without
/// the failover the same runs' `sync`s are current, and neither run
/// breaks the lock.
#[test]
fn a_deposed_leader_answers_sync_stale_only_across_a_failover() {
    let across = shipped("sync-not-a-quorum-op");
    let without = shipped("sync-is-current-without-failover");
    assert_eq!(across.timing.sync_limit_us, Some(2_000_000));
    assert_eq!(across.timing.tick_us, Some(1_000_000));
    let cut_at = 455_000;
    for seed in 0..20 {
        let o = simulate(&across, seed, true);
        let stale = o.first_violation("sync_is_current").expect("a stale sync");
        assert_eq!(stale.clients, vec![2], "seed {seed}");
        let elected = follower_change(&o, 2, FollowerChange::Elected);
        let stepped = follower_change(&o, 0, FollowerChange::StepsDown);
        assert_eq!(elected, Some(cut_at + 2_000_000), "seed {seed}");
        assert_eq!(stepped, Some(cut_at + 3_000_000), "seed {seed}");
        assert!(
            stale.at_us > cut_at + 2_000_000 && stale.at_us < cut_at + 3_000_000,
            "seed {seed}: {}",
            stale.at_us
        );
        assert_eq!(o.violations.len(), 1, "seed {seed}: {:?}", o.violations);
        let w = simulate(&without, seed, true);
        assert!(w.violations.is_empty(), "seed {seed}: {:?}", w.violations);
    }
}

/// A failover loses the deposed leader's uncommitted proposals and keeps
/// every session through the election: a lock of three clients, client 2
/// on the leader, cut off from its followers at 1 ms — before anyone asks
/// — for longer than the session timeout. No session expires (no timer
/// runs while no leader leads, and every one starts again at the
/// election); client 2's create, a proposal no quorum acknowledged, is
/// lost, and what the old leader owes it after (its handshake's or its
/// pings' answers) waits behind it: client 2 gives the old leader up at
/// its connect timeout (4 s over 3 servers) or read timeout (2/3 of 4 s),
/// well before the old leader stops leading, and like the others acquires
/// only once the followers have elected a leader; nothing is violated.
#[test]
fn a_failover_restarts_session_timers_and_loses_the_old_leaders_writes() {
    let toml = format!(
        "{}session_timeout_ms = 4000\nsync_limit_ms = 6000\ntick_ms = 2000\n\
         [[schedule]]\nat_ms = 1\nkind = \"failover\"\nduration_ms = 12000\n",
        "recipe = \"fair-predecessor\"\nvariant = \"curator\"\nclients = 3\nrounds = 1\n\
         servers = 3\n[timing]\nthink_ms = [5, 5]\nhold_ms = [100, 100]\n"
    );
    let s = parse(&toml).unwrap();
    let (elected, stepped_down) = (6_001_000, 8_001_000);
    for seed in 0..10 {
        let o = simulate(&s, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        // A finished client stops pinging: its session may expire, one
        // timeout after the election at the earliest.
        let expired = o
            .trace
            .iter()
            .find(|l| matches!(l.event, TraceEvent::Expire { .. }) && l.t < elected + 4_000_000);
        assert!(expired.is_none(), "seed {seed}: {expired:?}");
        assert_eq!(
            follower_change(&o, 2, FollowerChange::Elected),
            Some(elected)
        );
        assert_eq!(
            follower_change(&o, 0, FollowerChange::StepsDown),
            Some(stepped_down)
        );
        let first = |c| first_hold(&o, c);
        let gave_up = o.trace.iter().find_map(|l| match l.event {
            TraceEvent::ServerSilent { client: 2, server } => Some((l.t, server)),
            _ => None,
        });
        let (t, server) = gave_up.expect("client 2 gives the old leader up");
        assert_eq!(server, 0, "seed {seed}");
        let (connect, read) = (1_333_000, 2_666_000);
        let after = |timeout: u64| t > timeout && t < timeout + 50_000;
        assert!(after(connect) || after(read), "seed {seed}: at {t}");
        // Client 2 waits for the election, as the others do; they, on
        // the followers, do not wait for the old leader to step down.
        assert!(first(2) > Some(elected), "seed {seed}: {:?}", first(2));
        for c in [0, 1] {
            let t = first(c).expect("acquires");
            assert!(
                t > elected && t < stepped_down,
                "seed {seed}: client {c} at {t}"
            );
        }
    }
}

/// A ZooKeeper server answers a session's requests in order, pings too:
/// a muted follower holding its client's create answers none of that
/// client's pings (measured on a real muted follower: the client gave its
/// connection up at its read timeout, before the leader dropped the
/// follower). Client 0, on server 1, asks while server 1 is muted (from
/// 20 ms, for 12 s; syncLimit × tickTime 10 s): it hears nothing more, gives
/// server 1 up at its read timeout (2/3 of its 4 s session) after it last
/// heard, moves to the next server, is answered there, and holds — long
/// before the drop; nothing is violated. With the mute shorter than the
/// read timeout it stays and its create is passed on at the release.
/// With server 1 cut off and server 2 lagging, it gives both up in turn,
/// the second a read timeout after the last word it heard on its new
/// connection.
#[test]
fn a_client_whose_request_a_muted_follower_holds_gives_it_up_at_its_read_timeout() {
    let body = |mute_ms: u64| {
        format!(
            "recipe = \"fair-predecessor\"\nvariant = \"curator\"\nclients = 2\nrounds = 1\n\
             servers = 3\n[timing]\nthink_ms = [30, 30]\nhold_ms = [100, 100]\n\
             sync_limit_ms = 10000\n\
             [[schedule]]\nat_ms = 20\nkind = \"mute\"\nserver = 1\nduration_ms = {mute_ms}\n"
        )
    };
    let (long, short) = (parse(&body(12000)).unwrap(), parse(&body(1000)).unwrap());
    for seed in 0..20 {
        let o = simulate(&long, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        let heard = o
            .trace
            .iter()
            .filter(|l| {
                matches!(
                    &l.event,
                    TraceEvent::Deliver {
                        to: sim::trace::Party::Client(0),
                        ..
                    }
                )
            })
            .map(|l| l.t)
            .take_while(|&t| t < 20_000)
            .last()
            .expect("client 0 heard its connect reply");
        let at = |pick: &dyn Fn(&TraceEvent) -> bool| {
            o.trace.iter().find(|l| pick(&l.event)).map(|l| l.t)
        };
        let silent = at(&|e| {
            matches!(
                e,
                TraceEvent::ServerSilent {
                    client: 0,
                    server: 1
                }
            )
        });
        assert_eq!(silent, Some(heard + 2_666_666), "seed {seed}");
        let moved = at(&|e| {
            matches!(
                e,
                TraceEvent::Moved {
                    client: 0,
                    server: 2,
                    ..
                }
            )
        });
        assert_eq!(moved, silent, "seed {seed}");
        let held = first_hold(&o, 0).expect("client 0 holds");
        assert!(
            held > heard + 2_666_666 && held < 3_000_000,
            "seed {seed}: {held}"
        );
        assert_eq!(
            follower_change(&o, 1, FollowerChange::DroppedByLeader),
            Some(10_020_000)
        );
        let o = simulate(&short, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        let gave_up = o.trace.iter().any(|l| {
            matches!(
                l.event,
                TraceEvent::ServerSilent { .. } | TraceEvent::Moved { .. }
            )
        });
        assert!(!gave_up, "seed {seed}");
        let held = first_hold(&o, 0).expect("client 0 holds");
        assert!(held > 1_020_000, "seed {seed}: {held}");
    }
    // A second silent server: server 1 cut off and server 2 lagging.
    // Client 0 gives server 1 up, moves to server 2, which holds its
    // resent create: its read timeout there runs from the new connection,
    // and it gives server 2 up too, for the leader.
    let two = parse(
        "recipe = \"fair-predecessor\"\nvariant = \"curator\"\nclients = 2\nrounds = 1\n\
         servers = 3\n[timing]\nthink_ms = [30, 30]\nhold_ms = [100, 100]\n\
         sync_limit_ms = 20000\n\
         [[schedule]]\nat_ms = 20\nkind = \"isolate\"\nserver = 1\nduration_ms = 15000\n\
         [[schedule]]\nat_ms = 20\nkind = \"lag\"\nserver = 2\nduration_ms = 9000\n",
    )
    .unwrap();
    for seed in 0..10 {
        let o = simulate(&two, seed, true);
        let gave_up: Vec<(u64, u8)> = o
            .trace
            .iter()
            .filter_map(|l| match l.event {
                TraceEvent::ServerSilent { client: 0, server } => Some((l.t, server)),
                _ => None,
            })
            .collect();
        assert_eq!(gave_up.len(), 2, "seed {seed}: {gave_up:?}");
        assert_eq!((gave_up[0].1, gave_up[1].1), (1, 2), "seed {seed}");
        // A read timeout from the last word heard on the new connection.
        let heard = o
            .trace
            .iter()
            .filter(|l| {
                l.t < gave_up[1].0
                    && matches!(
                        &l.event,
                        TraceEvent::Deliver {
                            to: sim::trace::Party::Client(0),
                            from: sim::trace::Party::Store,
                            ..
                        }
                    )
            })
            .map(|l| l.t)
            .next_back()
            .expect("heard");
        assert!(heard >= gave_up[0].0, "seed {seed}: {heard}");
        assert_eq!(gave_up[1].0 - heard, 2_666_666, "seed {seed}");
        assert!(first_hold(&o, 0) > Some(gave_up[1].0), "seed {seed}");
    }
}

/// A request sent to a follower cut off from the leader waits on its
/// connection, unanswered and not resent (ZooKeeper's client resends only
/// on a new connection): when the cut heals before syncLimit × tickTime,
/// and before the client's read timeout, the follower passes it on, and
/// the client goes on with no reconnect. Client 0, on server 1, starts
/// acquiring while server 1 is cut off (from 20 ms to 1.52 s, inside the
/// 2.67 s read timeout): its create is answered only after the heal,
/// nobody moves, nothing is violated.
#[test]
fn a_request_held_by_a_cut_off_follower_is_passed_on_when_the_cut_heals() {
    let toml = format!(
        "{}[[schedule]]\nat_ms = 20\nkind = \"isolate\"\nserver = 1\nduration_ms = 1500\n",
        "recipe = \"fair-predecessor\"\nvariant = \"curator\"\nclients = 2\nrounds = 1\n\
         servers = 3\n[timing]\nthink_ms = [30, 30]\nhold_ms = [100, 100]\n"
    );
    let s = parse(&toml).unwrap();
    let heal = 1_520_000;
    for seed in 0..10 {
        let o = simulate(&s, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        let moved = o
            .trace
            .iter()
            .any(|l| matches!(l.event, TraceEvent::Moved { .. }));
        assert!(!moved, "seed {seed}: nobody reconnects");
        let held = first_hold(&o, 0);
        assert!(held > Some(heal), "seed {seed}: client 0 held at {held:?}");
        // One create of client 0's, passed on after the heal.
        let creates = o
            .trace
            .iter()
            .filter(|l| {
                matches!(&l.event, TraceEvent::Apply { server: 2, change }
                    if change.starts_with("create") && change.contains("_c_00000000"))
            })
            .count();
        assert_eq!(creates, 1, "seed {seed}");
    }
}

/// The shipped etcd failover pair, at every seed of a range. Client 2
/// holds on the leader, cut off at 500 ms: the followers elect server 2 at
/// exactly 1.5 s (an election timeout later) and the old leader steps down
/// at that instant, keeping its clients. Client 2's lease starts its
/// time-to-live again at the election, an election timeout longer, and,
/// renewed nowhere, expires at exactly 5.5 s; client 1 takes the lock after
/// it, client 2 still holding.
/// With a cut of 3.2 s the member follows the new leader before the
/// extended lease runs out, and the lease lives until client 2 is done
/// with it: the extension is what keeps it (its time-to-live from client
/// 2's last word to the leader ran out near 3 s).
#[test]
fn an_etcd_failover_extends_leases_and_strands_the_old_leaders_clients() {
    let (outlived, extended) = (
        shipped("etcd-failover-lease-outlived"),
        shipped("etcd-failover-lease-extended"),
    );
    for seed in 0..20 {
        let o = simulate(&outlived, seed, true);
        let elected = follower_change(&o, 2, FollowerChange::ElectedKeepingClients);
        assert_eq!(elected, Some(1_500_000), "seed {seed}");
        let stepped = follower_change(&o, 0, FollowerChange::StepsDownKeepingClients);
        assert_eq!(stepped, Some(1_500_000), "seed {seed}");
        assert_eq!(expiry_of(&o, 2), Some(5_500_000), "seed {seed}");
        let v = o.first_violation("mutual_exclusion").expect("two holders");
        assert!(v.at_us > 5_500_000, "seed {seed}: {v:?}");
        assert!(
            first_hold(&o, 2) < Some(500_000),
            "seed {seed}: client 2 held first"
        );
        let e = simulate(&extended, seed, true);
        assert!(e.violations.is_empty(), "seed {seed}: {:?}", e.violations);
        // Its lease ends only after it released and stopped its keepalives.
        let ended = expiry_of(&e, 2).unwrap_or(u64::MAX);
        assert!(ended > 6_000_000, "seed {seed}: {ended}");
    }
}

/// An isolated etcd member (`kind = "isolate"` over etcd): client 0 holds
/// through server 1 when server 1 is cut off at 500 ms for 6 s. The member
/// answers no keepalive (the lessor is the leader's), so client 0's lease,
/// last renewed at its grant, expires at the leader a TTL (3 s) later, and
/// client 1 takes the lock while client 0 still holds; the member never
/// gives the leader up (no syncLimit), so nothing tells client 0. With a
/// cut of 1.5 s the keepalives reach the leader again in time, and the
/// lease lives until client 0 is done with it.
#[test]
fn an_isolated_etcd_member_strands_its_holder_past_its_lease() {
    let (long, short) = (
        shipped("etcd-isolated-member-keeps-holder"),
        shipped("etcd-isolated-member-short-cut"),
    );
    for seed in 0..20 {
        let o = simulate(&long, seed, true);
        let expired = expiry_of(&o, 0).expect("client 0's lease expires");
        assert!(
            (3_000_000..3_010_000).contains(&expired),
            "seed {seed}: a TTL after the grant: {expired}"
        );
        let v = o.first_violation("mutual_exclusion").expect("two holders");
        assert!(
            v.at_us > expired && v.at_us < 6_500_000,
            "seed {seed}: {v:?}"
        );
        assert!(first_hold(&o, 0) < Some(500_000), "seed {seed}");
        let dropped = follower_change(&o, 1, FollowerChange::Dropped);
        assert_eq!(
            dropped, None,
            "seed {seed}: an etcd member keeps its clients"
        );
        let s = simulate(&short, seed, true);
        assert!(s.violations.is_empty(), "seed {seed}: {:?}", s.violations);
        let ended = expiry_of(&s, 0).unwrap_or(u64::MAX);
        assert!(ended > 8_000_000, "seed {seed}: {ended}");
    }
}

/// When client `c`'s session (lease) first expires in `o`'s trace.
fn expiry_of(o: &sim::engine::Outcome, c: u16) -> Option<u64> {
    o.trace
        .iter()
        .find(|l| matches!(l.event, TraceEvent::Expire { client, .. } if client == c))
        .map(|l| l.t)
}

/// The shipped stale-read pair, the election's CURATOR-604: with local
/// sessions client 0's new session on lagging server 2 lists its old node
/// lowest and `LeaderLatch` before CURATOR-696 leads on it
/// (`elected_with_key` first), then client 1 leads too once server 2
/// applies the expiry; with global sessions nothing is violated. On the
/// local schedule, the fixed `LeaderLatch` (which checks the node's
/// `ephemeralOwner`) and its `:sync` variant violate nothing either.
#[test]
fn a_stale_listing_elects_two_leaders_with_local_sessions_and_not_with_global_ones() {
    let path = format!(
        "{}/../scenarios/stale-read-two-leaders.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let with_variant = |v: &str| {
        let toml = text.replace("variant = \"curator-696\"", &format!("variant = \"{v}\""));
        assert_ne!(toml, text);
        Scenario::parse(&toml, &path, "stale-read-two-leaders").unwrap()
    };
    let local = shipped("stale-read-two-leaders");
    let global = shipped("stale-read-global-sessions");
    assert!(local.local_sessions && !global.local_sessions);
    let fixed = [with_variant("curator"), with_variant("sync")];
    for seed in 0..10 {
        let o = simulate(&local, seed, true);
        let stale = o
            .first_violation("elected_with_key")
            .expect("elected_with_key");
        let two = o.first_violation("single_leader").expect("single_leader");
        assert!(stale.at_us < two.at_us, "seed {seed}");
        assert_eq!(stale.clients, vec![0], "seed {seed}");
        assert!(o.trace.iter().any(|l| matches!(
            l.event,
            TraceEvent::Moved {
                client: 0,
                server: 2,
                ..
            }
        )));
        // Client 0 leads on its old node before server 2 has applied the
        // expiry: the lag is still on.
        let lag_ends = o.trace.iter().find_map(|l| match l.event {
            TraceEvent::Follower {
                server: 2,
                change: FollowerChange::Lags { duration_us },
            } => Some(l.t + duration_us),
            _ => None,
        });
        assert!(stale.at_us < lag_ends.expect("a lag"), "seed {seed}");
        let g = simulate(&global, seed, true);
        assert!(g.violations.is_empty(), "seed {seed}: {:?}", g.violations);
        for f in &fixed {
            let o = simulate(f, seed, true);
            assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        }
    }
}

/// The shipped `Observe` pair: an observer starting while its member lags
/// behind the first leader's resignation names that leader when its `Get`
/// is serializable (`observed_leader_current`, at its first report, while
/// the member still lags); with `Observe` as shipped the `Get` goes through
/// the leader's read index and nothing is violated.
#[test]
fn a_serializable_observe_names_a_resigned_leader_and_the_shipped_one_does_not() {
    let serializable = shipped("etcd-serializable-observe");
    let shipped_observe = shipped("etcd-linearizable-observe");
    assert_eq!((serializable.observers, shipped_observe.observers), (1, 1));
    for seed in 0..10 {
        let o = simulate(&serializable, seed, true);
        let stale = o
            .first_violation("observed_leader_current")
            .expect("observed_leader_current");
        assert_eq!(stale.clients, vec![0], "seed {seed}");
        // After the observer resumes (1.5 s), before its member catches up
        // (the lag runs from 0.5 s to 4 s).
        assert!((1_500_000..4_000_000).contains(&stale.at_us), "seed {seed}");
        assert_eq!(o.violations.len(), 1, "seed {seed}: {:?}", o.violations);
        let l = simulate(&shipped_observe, seed, true);
        assert!(l.violations.is_empty(), "seed {seed}: {:?}", l.violations);
    }
}

/// A scenario's `observers`: only for an election with an observer, fewer
/// than its clients; each refusal names the key.
#[test]
fn a_scenario_refuses_observers_nobody_could_be() {
    let election = |recipe: &str, clients: u8, observers: u8| {
        format!(
            "recipe = \"{recipe}\"\nclients = {clients}\nobservers = {observers}\nrounds = 1\n\
             [timing]\nthink_ms = [20, 200]\nhold_ms = [100, 400]\n"
        )
    };
    for (toml, says) in [
        (election("zk-fair-election", 3, 1), "has no observer"),
        (election("etcd-election", 2, 2), "fewer than the clients"),
        (
            election("etcd-revision", 3, 1),
            "observers are for election recipes",
        ),
    ] {
        match parse(&toml) {
            Ok(_) => panic!("accepted:\n{toml}"),
            Err(e) => {
                assert_eq!(e.key, "observers", "{toml}");
                assert!(e.reason.contains(says), "{toml}: {}", e.reason);
            }
        }
    }
    assert_eq!(
        parse(&election("etcd-election", 3, 1)).unwrap().observers,
        1
    );
}

/// The herd baseline over three servers (`herd::baseline_over`, which the
/// validator runs its actors against on the real ensembles) counts what it
/// counts on one server: each notification of a release comes from the
/// waiter's own server, and the sum over the servers is the one server's.
/// For every ZooKeeper and etcd lock and election, release by release; for
/// the other applications in total (a shared lock's readers, or a
/// semaphore's holders, each take hold when their own server applies what
/// let them in, so which of their releases wakes a waiter can differ).
#[test]
fn the_herd_baseline_over_three_servers_is_the_one_servers() {
    use models::apps::App;
    use models::recipe::Face;
    for recipe in sim::herd::swept_recipes() {
        if !matches!(recipe.face(), Face::ZooKeeper | Face::Etcd) {
            continue;
        }
        for n in [2, 5] {
            let one = sim::herd::row(&sim::herd::baseline(&recipe, n, 1), 1);
            let three = sim::herd::row(&sim::herd::baseline_over(&recipe, n, 1, 3), 1);
            let what = format!("{}, {n} clients", recipe.id());
            assert_eq!(three.notifications, one.notifications, "{what}");
            assert_eq!(three.store_requests, one.store_requests, "{what}");
            if matches!(recipe.app(), App::Lock | App::Election) {
                assert_eq!(
                    three.notifications_per_release, one.notifications_per_release,
                    "{what}"
                );
            }
        }
    }
}

/// A failover while a follower is cut off from the leader, over five
/// servers: the followers elect the highest id among those still
/// following (they have the whole committed log), never the cut-off one,
/// which missed what was committed since its cut.
#[test]
fn a_failover_never_elects_a_follower_cut_off_from_the_leader() {
    let toml = "recipe = \"fair-predecessor\"\nclients = 2\nservers = 5\nseed = 1\n\
                [timing]\nsync_limit_ms = 2000\n\
                [[schedule]]\nat_ms = 100\nkind = \"isolate\"\nserver = 4\nduration_ms = 6000\n\
                [[schedule]]\nat_ms = 3000\nkind = \"failover\"\nduration_ms = 3000\n";
    let s = parse(toml).unwrap();
    let out = simulate(&s, s.seed, true);
    let elected: Vec<u8> = out
        .trace
        .iter()
        .filter_map(|l| match &l.event {
            TraceEvent::Follower {
                server,
                change: FollowerChange::Elected,
            } => Some(*server),
            _ => None,
        })
        .collect();
    assert_eq!(elected, [3], "server 4 was cut off");
}

/// The simulator finds what the checker's `the_stale_views_only_an_ensemble_has`
/// finds for `unfair-create` with lost replies: over three servers a
/// holder's resent `delete(/lock)` removes the next holder's node at the
/// leader before the next holder's server answers its create
/// (`holder_owns_key`); on one server the answer comes first.
#[test]
fn a_resent_delete_answered_late_only_over_an_ensemble() {
    let toml = |servers: u8| {
        format!(
            "recipe = \"unfair-create\"\nclients = 2\nrounds = 3\nservers = {servers}\nseed = 257\n\
             [faults]\nuntil_ms = 20000\nlost_reply = {{ rate_per_s = 2.0 }}\n{}",
            if servers > 1 { "[timing]\napply_ms = [1, 20]\n" } else { "" }
        )
    };
    let violated = |servers| {
        let s = parse(&toml(servers)).unwrap();
        let o = simulate(&s, s.seed, false);
        o.violations
            .iter()
            .any(|v| v.property.name() == "holder_owns_key")
    };
    assert!(violated(3), "three servers");
    assert!(!violated(1), "one server");
}
