//! What the simulator must show: determinism, each shipped scenario's
//! expected outcome, agreement with the model checker, no false alarms.

use sim::engine::{simulate, Outcome};
use sim::hunt::{hunt, merge, run_seeds_with, shrink, SeedSet, Shard};
use sim::scenario::{FaultKind, Scenario};
use std::path::PathBuf;

fn scenario_path(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios")).join(format!("{name}.toml"))
}

fn shipped(name: &str) -> Scenario {
    Scenario::load(&scenario_path(name)).unwrap()
}

fn inline(toml: &str) -> Scenario {
    Scenario::parse(toml, "inline.toml", "inline").unwrap()
}

fn properties(o: &Outcome) -> Vec<&'static str> {
    let mut p: Vec<_> = o.violations.iter().map(|v| v.property.name()).collect();
    p.sort_unstable();
    p.dedup();
    p
}

const SHIPPED: [&str; 51] = [
    "healthy",
    "gc-pause-split-brain",
    "gc-pause-split-brain-fenced",
    "partition-past-session",
    "orphan-create",
    "crash-storm",
    "etcd-lease-pause",
    "election-gc-pause",
    "election-gc-pause-fenced",
    "etcd-campaign-phantom-leader",
    "etcd-campaign-phantom-leader-checked",
    "curator-reconnect-double-leader",
    "curator-reconnect-double-leader-fixed",
    "etcd-mutex-11456",
    "etcd-mutex-11456-fixed",
    "kazoo-oblivious-pause",
    "redis-gc-pause",
    "redis-gc-pause-fenced",
    "redis-setnx-crash",
    "redis-setnx-crash-atomic",
    "redlock-restart-without-fsync",
    "redlock-restart-fsync-always",
    "redlock-clock-jump",
    "redlock-clock-jump-fenced",
    "redisson-watchdog-after-unlock",
    "redisson-watchdog-after-unlock-fixed",
    "redis-failover-lost-lock",
    "redis-failover-lost-lock-wait",
    "consul-partition-old-holder",
    "consul-partition-old-holder-fenced",
    "consul-lock-delay-protects",
    "consul-lock-delay-0",
    "consul-leader-failover-forgets-lock-delay",
    "consul-leader-failover-forgets-lock-delay-fenced",
    "consul-session-reaped-late",
    "consul-session-reaped-late-short-pause",
    "curator-604-stale-view-double-lock",
    "curator-604-global-sessions",
    "stale-read-two-leaders",
    "stale-read-global-sessions",
    "isolated-follower-keeps-holder",
    "isolated-follower-short-sync-limit",
    "muted-follower-tells-holder",
    "sync-not-a-quorum-op",
    "sync-is-current-without-failover",
    "etcd-failover-lease-outlived",
    "etcd-failover-lease-extended",
    "etcd-isolated-member-keeps-holder",
    "etcd-isolated-member-short-cut",
    "etcd-serializable-observe",
    "etcd-linearizable-observe",
];

/// A run watched for a progress line is the same run, told how far it has
/// gone every `PROGRESS_EVERY` events, its time never going back and its
/// limit fixed.
#[test]
fn a_watched_run_is_the_same_run() {
    use sim::engine::{simulate_watched, Progress, TraceOptions, PROGRESS_EVERY};
    let s = inline(
        "recipe = \"fair-predecessor\"\nclients = 20\nrounds = 150\n\
         [timing]\nthink_ms = [0, 100]\nhold_ms = [1, 2]\n",
    );
    let plain = simulate(&s, 7, true);
    let mut told: Vec<Progress> = Vec::new();
    let watched = simulate_watched(&s, 7, TraceOptions::kept(), |p| told.push(*p)).unwrap();
    assert_eq!(watched.trace, plain.trace);
    assert_eq!(watched.trace_hash, plain.trace_hash);
    assert_eq!(watched.metrics, plain.metrics);
    let events = plain.metrics.events;
    assert!(
        events > 2 * PROGRESS_EVERY,
        "{events} events: too few to be told"
    );
    assert_eq!(told.len() as u64, events / PROGRESS_EVERY);
    for (k, p) in told.iter().enumerate() {
        assert_eq!(p.events, (k as u64 + 1) * PROGRESS_EVERY);
        assert_eq!(p.limit_us, told[0].limit_us);
        assert!(p.now_us <= p.limit_us && p.unfinished <= 20);
    }
    assert!(told.windows(2).all(|w| w[0].now_us <= w[1].now_us));
}

#[test]
fn same_scenario_and_seed_give_the_byte_identical_trace() {
    for name in SHIPPED {
        let s = shipped(name);
        let a = simulate(&s, s.seed, true);
        let b = simulate(&s, s.seed, true);
        assert!(a.trace.len() > 10, "{name}");
        assert_eq!(a.trace, b.trace, "{name}");
        assert_eq!(a.trace_hash, b.trace_hash, "{name}");
        let other = simulate(&s, s.seed + 1, true);
        assert_ne!(
            a.trace_hash, other.trace_hash,
            "{name}: another seed, another run"
        );
    }
}

#[test]
fn each_shipped_scenario_shows_its_expected_outcome_at_its_seed() {
    let run = |name: &str| {
        let s = shipped(name);
        simulate(&s, s.seed, false)
    };
    assert_eq!(properties(&run("healthy")), Vec::<&str>::new());

    let gc = run("gc-pause-split-brain");
    assert_eq!(properties(&gc), ["mutual_exclusion", "resource_exclusion"]);
    assert!(gc.faults_fired()["pause"] >= 1);

    let fenced = run("gc-pause-split-brain-fenced");
    assert_eq!(properties(&fenced), ["mutual_exclusion"]);

    let cut = run("partition-past-session");
    assert!(properties(&cut).contains(&"mutual_exclusion"));
    let mut aware = shipped("partition-past-session");
    aware.policy = models::client::Policy::LeaseAware;
    for seed in 0..200 {
        let o = simulate(&aware, seed, false);
        assert!(
            o.first_violation("mutual_exclusion").is_none(),
            "lease-aware, seed {seed}"
        );
    }
    // The known-wrong deadline, restarted by the heartbeats it sends
    // into the cut: the simulator finds it (as `check --time ticks` does;
    // models/tests/timed.rs), where lease-aware keeps mutual exclusion.
    let mut from_send = shipped("partition-past-session");
    from_send.policy = models::client::Policy::LeaseAwareFromSend;
    let found = (0..200)
        .filter(|&seed| {
            simulate(&from_send, seed, false)
                .first_violation("mutual_exclusion")
                .is_some()
        })
        .count();
    assert!(found >= 50, "lease-aware-from-send: {found} of 200 seeds");

    let orphan = run("orphan-create");
    assert_eq!(properties(&orphan), ["progress"]);
    assert_eq!(orphan.faults_fired()["lost_reply"], 1);
    let with_guid = Scenario::parse(
        &std::fs::read_to_string(scenario_path("orphan-create"))
            .unwrap()
            .replace("guid = false", "guid = true"),
        "orphan-create.toml",
        "orphan-create",
    )
    .unwrap();
    let o = simulate(&with_guid, with_guid.seed, false);
    assert_eq!(properties(&o), Vec::<&str>::new());
    assert_eq!(o.metrics.acquisitions, 6);

    let storm = run("crash-storm");
    assert_eq!(properties(&storm), Vec::<&str>::new());
    assert!(storm.faults_fired()["crash"] >= 3);
}

#[test]
fn crash_storm_stays_live_over_many_seeds() {
    let s = shipped("crash-storm");
    let r = hunt(&s, SeedSet::range(0, 300), 2, &|_| {}).unwrap();
    assert_eq!(r.violating_seeds, Vec::<u64>::new());
    let crashes = run_seeds_with(&s, SeedSet::range(0, 300), 2, &|_| {}, &|o| {
        o.faults_fired().get("crash").copied()
    })
    .unwrap();
    assert!(crashes.iter().sum::<u64>() > 300);
}

#[test]
fn hunt_is_the_same_with_one_job_or_two_and_across_shards() {
    let s = shipped("gc-pause-split-brain");
    let one = hunt(&s, SeedSet::range(0, 200), 1, &|_| {}).unwrap();
    let two = hunt(&s, SeedSet::range(0, 200), 2, &|_| {}).unwrap();
    assert_eq!(one, two);
    let shards: Vec<_> = (1..=3)
        .map(|k| {
            let part = SeedSet {
                start: 0,
                last: 199,
                shard: Some(Shard { k, n: 3 }),
            };
            (format!("shard-{k}"), hunt(&s, part, 2, &|_| {}).unwrap())
        })
        .collect();
    let merged = merge(shards).unwrap();
    assert_eq!(merged.seeds_run, 200);
    assert_eq!(merged.violating_seeds, one.violating_seeds);
    assert_eq!(merged.by_property, one.by_property);
}

#[test]
fn hunt_finds_the_gc_pause_split_brain_and_shrinks_it_to_a_replayable_reproducer() {
    let s = shipped("gc-pause-split-brain");
    let r = hunt(&s, SeedSet::range(0, 100), 2, &|_| {}).unwrap();
    let first = *r
        .violating_seeds
        .first()
        .expect("a violation within 100 seeds");
    let small = shrink(&s, first, None).unwrap();
    assert!(small.schedule.len() <= 3, "{:?}", small.schedule);
    assert!(small.schedule.iter().all(|f| f.kind == FaultKind::Pause));
    // A split brain needs two clients; the third goes.
    assert_eq!((small.clients_before, small.clients), (3, 2));
    assert!(
        small
            .what_was_cut()
            .starts_with("clients 3 → 2, rounds 4 → "),
        "{}",
        small.what_was_cut()
    );
    let text = s.reproducer(
        first,
        (
            small.clients,
            small.producers,
            small.writers,
            small.observers,
            small.rounds,
        ),
        small.schedule.clone(),
        &[small.property],
        "test",
    );
    let reproducer = Scenario::parse(&text, "repro.toml", "repro").unwrap();
    assert!(reproducer.profile.is_empty());
    let a = simulate(&reproducer, reproducer.seed, true);
    let b = simulate(&reproducer, reproducer.seed, true);
    assert!(a.first_violation(small.property.name()).is_some());
    assert_eq!(a.trace, b.trace);
}

#[test]
fn no_false_alarms_over_ten_thousand_seeds() {
    for name in ["healthy", "gc-pause-split-brain-fenced"] {
        let s = shipped(name);
        let r = hunt(&s, SeedSet::range(0, 10_000), 2, &|_| {}).unwrap();
        assert_eq!(r.seeds_run, 10_000);
        assert_eq!(r.by_property.get("resource_exclusion"), None, "{name}");
        if name == "healthy" {
            assert_eq!(r.violating_seeds, Vec::<u64>::new());
        } else {
            assert!(
                r.by_property["mutual_exclusion"].len() > 1000,
                "the pauses do split the brain"
            );
        }
    }
}

// The simulator finds every class of counterexample the checker finds.

#[test]
fn a_crashed_holders_write_in_flight_lands_late_without_fencing() {
    // The checker's time is abstract, so a write can be in flight for as
    // long as it likes; here a delay spike keeps it in flight past the
    // crashed holder's session timeout.
    let s = inline(
        r#"
recipe = "etcd-revision"
clients = 3
rounds = 4
[timing]
session_timeout_ms = 300
hold_ms = [5, 20]
[faults]
until_ms = 3000
crash = { rate_per_s = 2.0 }
delay = { rate_per_s = 5.0, duration_ms = [200, 600], extra_ms = [300, 800] }
"#,
    );
    let r = hunt(&s, SeedSet::range(0, 300), 2, &|_| {}).unwrap();
    assert!(r.by_property.contains_key("resource_exclusion"), "{r:?}");
    let mut fenced = s.clone();
    fenced.fencing = true;
    let r = hunt(&fenced, SeedSet::range(0, 300), 2, &|_| {}).unwrap();
    assert!(!r.by_property.contains_key("resource_exclusion"), "{r:?}");
}

#[test]
fn one_release_wakes_every_waiter_only_in_the_herding_recipes() {
    let herd = |recipe: &str| {
        let s = inline(&format!(
            "recipe = \"{recipe}\"\nclients = 6\n[timing]\nthink_ms = [0, 1]\nhold_ms = [50, 60]\n"
        ));
        let o = simulate(&s, 1, false);
        // The simulator checks herd_bound online too: violated exactly when
        // one release woke more than one waiter.
        let herd_bound = o.first_violation("herd_bound").is_some();
        assert!(
            o.violations
                .iter()
                .all(|v| v.property.name() == "herd_bound"),
            "{recipe}: {:?}",
            o.violations
        );
        let widest = o
            .metrics
            .notifications_per_release
            .iter()
            .copied()
            .max()
            .unwrap();
        assert_eq!(herd_bound, widest > 1, "{recipe}");
        o.metrics
            .notifications_per_release
            .iter()
            .copied()
            .max()
            .unwrap()
    };
    assert_eq!(herd("fair-predecessor"), 1);
    assert_eq!(herd("etcd-revision"), 1);
    assert!(herd("unfair-create") >= 4);
    assert!(herd("children-watch") >= 5);
}

#[test]
fn a_lost_delete_reply_resent_by_unfair_create_deletes_the_next_holders_lock() {
    let s = inline(
        r#"
recipe = "unfair-create"
clients = 3
rounds = 5
[timing]
hold_ms = [5, 20]
retry_ms = 100
[faults]
until_ms = 3000
lost_reply = { rate_per_s = 20.0 }
"#,
    );
    let r = hunt(&s, SeedSet::range(0, 200), 2, &|_| {}).unwrap();
    assert!(r.by_property.contains_key("mutual_exclusion"), "{r:?}");
}

#[test]
fn relisting_skipped_after_a_watch_fires_is_caught_when_a_middle_waiter_crashes() {
    let mut s = inline(
        r#"
recipe = "fair-predecessor"
clients = 3
rounds = 3
[timing]
session_timeout_ms = 300
think_ms = [0, 5]
hold_ms = [200, 400]
[faults]
until_ms = 3000
crash = { rate_per_s = 2.0 }
"#,
    );
    let sound = hunt(&s, SeedSet::range(0, 200), 2, &|_| {}).unwrap();
    assert!(!sound.by_property.contains_key("mutual_exclusion"));
    s.recipe = models::recipes::parse("fair-predecessor:no-relist").unwrap();
    let broken = hunt(&s, SeedSet::range(0, 200), 2, &|_| {}).unwrap();
    assert!(
        broken.by_property.contains_key("mutual_exclusion"),
        "{broken:?}"
    );
}

#[test]
fn bad_scenarios_name_the_file_the_key_and_the_reason() {
    let err = |toml: &str| {
        Scenario::parse(toml, "bad.toml", "bad")
            .unwrap_err()
            .to_string()
    };
    assert!(
        err("recipe = \"fair-predecessor\"\nclients = 3\ncolour = 1\n")
            .contains("unknown field `colour`")
    );
    assert!(err("recipe = \"fair-predecessor\"\nclients = \"three\"\n").starts_with("bad.toml: "));
    assert!(err("recipe = \"paxos\"\nclients = 3\n").contains("`recipe`: unknown recipe 'paxos'"));
    assert!(err("recipe = \"etcd-revision\"\nclients = 0\n")
        .contains("`clients`: must be between 1 and 10000"));
    assert!(
        err("recipe = \"etcd-revision\"\nclients = 3\n[timing]\nhold_ms = [50, 10]\n")
            .contains("`timing.hold_ms`: low 50 is above high 10")
    );
    assert!(err("recipe = \"zk-fifo-queue\"\nclients = 1\n")
        .contains("`clients`: zk-fifo-queue is a queue, which needs at least 2 clients"));
    assert!(err(
        "recipe = \"etcd-revision\"\nclients = 3\n[timing]\nlatency_ms = [0.0001, 0.0004]\n"
    )
    .contains("0.0001 ms is below the simulator's resolution of 1 µs"));
    // A range is two numbers: a third is refused, not dropped.
    for range in [
        "[timing]\nthink_ms = [5, 50, 99999]",
        "[timing]\nhold_ms = [10, 40, 1, 2]",
        "[timing]\nlatency_ms = [1.0, 2.0, 3.0]",
        "[faults]\npause = { rate_per_s = 0.5, duration_ms = [2500, 4000, 1] }",
    ] {
        let e = err(&format!(
            "recipe = \"etcd-revision\"\nclients = 3\n{range}\n"
        ));
        assert!(
            e.contains("invalid length") && e.contains("two numbers, [low, high]"),
            "{range}: {e}"
        );
    }
    assert!(
        err("recipe = \"etcd-revision\"\nclients = 3\nguid = false\n")
            .contains("`guid`: applies only to fair-predecessor")
    );
    assert!(err("recipe = \"etcd-revision\"\nclients = 3\n[[schedule]]\nat_ms = 1\nkind = \"pause\"\nclient = 7\nduration_ms = 5\n")
        .contains("`schedule[0].client`: no client 7"));
    assert!(err("recipe = \"etcd-revision\"\nclients = 3\n[[schedule]]\nat_ms = 1\nkind = \"pause\"\nclient = 0\n")
        .contains("`schedule[0].duration_ms`"));
    assert!(err(
        "recipe = \"etcd-revision\"\nclients = 3\n[faults]\npause = { rate_per_s = 1.0 }\n"
    )
    .contains("`faults.pause.duration_ms`: is required"));
    assert!(err("recipe = \"etcd-revision\"\nclients = 3\n[timing]\nsession_timeout_ms = 1000\nping_interval_ms = 2000\n")
        .contains("`timing.ping_interval_ms`"));
}

#[test]
fn a_lease_aware_etcd_holder_gives_up_before_its_lease_runs_out() {
    // Only keepalives renew an etcd lease: a reply to another request must
    // not push the client's deadline past the store's expiry.
    let s = inline(
        r#"
recipe = "etcd-revision"
clients = 3
rounds = 3
policy = "lease-aware"
[timing]
session_timeout_ms = 6000
ping_interval_ms = 2000
deadline_ms = 5000
think_ms = [0, 2000]
hold_ms = [3000, 6000]
[faults]
until_ms = 30000
partition = { rate_per_s = 0.2, duration_ms = [6000, 9000] }
"#,
    );
    let r = hunt(&s, SeedSet::range(0, 500), 2, &|_| {}).unwrap();
    assert!(!r.by_property.contains_key("mutual_exclusion"), "{r:?}");
    let mut naive = s.clone();
    naive.policy = models::client::Policy::Naive;
    let r = hunt(&naive, SeedSet::range(0, 500), 2, &|_| {}).unwrap();
    assert!(
        r.by_property.contains_key("mutual_exclusion"),
        "the partitions do bite a naive holder"
    );
}

/// Every shipped scenario's trace hash at its own seed, as the engine gave
/// it before its queue, timers and link clocks were rewritten for speed: a
/// change that reorders events (deterministically, so the test above still
/// passes) shows here. A deliberate change of the model updates the table
/// (`lockstep run scenarios/NAME.toml --json` prints `trace_hash`).
const REFERENCE_TRACES: [(&str, &str); 54] = [
    ("barrier-last-entrant-crash", "146afe6bd9b74f33"),
    ("crash-storm", "7230d34ec636b66a"),
    ("curator-reconnect-double-leader-fixed", "5772660d31b266c8"),
    ("curator-reconnect-double-leader", "ce6ab3723df1970e"),
    ("election-gc-pause-fenced", "24ae6b99a1c83dbb"),
    ("election-gc-pause", "c491275ac34e8c1d"),
    ("etcd-campaign-phantom-leader-checked", "ff86f233627281d8"),
    ("etcd-campaign-phantom-leader", "61133e9c4a6f77e7"),
    ("etcd-lease-pause", "538028b2fc6e5b1a"),
    ("etcd-mutex-11456-fixed", "e04ee768d2e9e327"),
    ("etcd-mutex-11456", "dd6be07c83f0265d"),
    ("gc-pause-split-brain-fenced", "8ce78b5821c15c08"),
    ("gc-pause-split-brain", "eb0e5f0a1e6c0477"),
    ("healthy", "9535c05e02cefc4c"),
    ("kazoo-oblivious-pause", "dc41f704a67b57fa"),
    ("orphan-create", "c7df3ba76a8ed7c6"),
    ("partition-past-session", "66ee0f61c513451f"),
    ("queue-consumer-crash", "d8426ce19f442e40"),
    ("queue-lost-delete-reply", "a719d24c71f0d62d"),
    ("redis-gc-pause", "45a58fe5ddd005a5"),
    ("redis-gc-pause-fenced", "07048c214981356d"),
    ("redis-setnx-crash", "307a909ad4a40678"),
    ("redis-setnx-crash-atomic", "4135748b014a71ed"),
    ("redlock-restart-without-fsync", "c0a8467948d8d59f"),
    ("redlock-restart-fsync-always", "3a2e4beabde1e987"),
    ("redlock-clock-jump", "1aeefb3ada7a27b9"),
    ("redlock-clock-jump-fenced", "3f0910bf199b9867"),
    ("redisson-watchdog-after-unlock", "524091d7d52c3ceb"),
    ("redisson-watchdog-after-unlock-fixed", "c615d5441678fadb"),
    ("redis-failover-lost-lock", "8edb69260a87a768"),
    ("redis-failover-lost-lock-wait", "444815e71817e3be"),
    ("consul-partition-old-holder", "93c0726594de5dcd"),
    ("consul-partition-old-holder-fenced", "6aa1b5b1d640bc91"),
    ("consul-lock-delay-protects", "bac7dabbbe2205c2"),
    ("curator-604-stale-view-double-lock", "41629dd80015f1d4"),
    ("curator-604-global-sessions", "bbce1efea4e40d83"),
    ("stale-read-two-leaders", "d6358d417f7430b0"),
    ("stale-read-global-sessions", "984552aa6ccd62cc"),
    ("isolated-follower-keeps-holder", "d390a10246fb109b"),
    ("isolated-follower-short-sync-limit", "039c695b40191cad"),
    ("muted-follower-tells-holder", "63a8372c2eb96751"),
    ("sync-not-a-quorum-op", "339d2d2d7e33cd0f"),
    ("sync-is-current-without-failover", "1d3de6333d535977"),
    ("etcd-failover-lease-outlived", "006c37323788436d"),
    ("etcd-failover-lease-extended", "9fb8c90eee328b40"),
    ("etcd-isolated-member-keeps-holder", "d66faaf79edfefee"),
    ("etcd-isolated-member-short-cut", "dd85696a6ec8f1d9"),
    ("etcd-serializable-observe", "3ddea89218107211"),
    ("etcd-linearizable-observe", "dc2ce721ea9b2486"),
    ("consul-lock-delay-0", "6cda944bfc4e359e"),
    (
        "consul-leader-failover-forgets-lock-delay",
        "78d244a61aa77faa",
    ),
    (
        "consul-leader-failover-forgets-lock-delay-fenced",
        "06e398517eb6eebe",
    ),
    ("consul-session-reaped-late", "0aad99a088369ba3"),
    ("consul-session-reaped-late-short-pause", "3ac2d3c6ebc38dff"),
];

#[test]
fn traces_are_those_of_the_reference_engine() {
    // Every scenario's, each mismatch named.
    let differ: Vec<String> = REFERENCE_TRACES
        .iter()
        .filter_map(|(name, hash)| {
            let s = shipped(name);
            let o = simulate(&s, s.seed, true);
            let got = o.trace_hash.unwrap_or_default();
            (got != *hash).then(|| format!("{name}: {got}, pinned {hash}"))
        })
        .collect();
    assert!(differ.is_empty(), "{differ:#?}");
}

/// `acquire_timeout_ms`: waiters of a lock whose library gives up do so
/// in virtual time (the trace shows the timer), and nothing is violated;
/// a zero timeout and a recipe without one are refused, naming the key.
#[test]
fn an_acquire_timeout_gives_up_waiters_in_virtual_time() {
    let body = |recipe: &str, timeout: u64| {
        let recipe = match recipe.split_once(':') {
            Some((name, variant)) => format!("{name}\"\nvariant = \"{variant}"),
            None => recipe.to_string(),
        };
        format!(
            "recipe = \"{recipe}\"\nclients = 4\nrounds = 2\n[timing]\n\
             session_timeout_ms = 4000\nhold_ms = [30, 60]\nacquire_timeout_ms = {timeout}\n"
        )
    };
    for recipe in ["fair-predecessor:kazoo", "fair-predecessor:curator"] {
        let s = Scenario::parse(&body(recipe, 40), "t.toml", "t").unwrap();
        let mut gave_up = 0;
        for seed in 1..=20 {
            let o = simulate(&s, seed, true);
            // A waiter that gave up keeps its watch: a release may wake
            // it too (herd_bound), as on a real server; nothing else.
            let others: Vec<_> = o
                .violations
                .iter()
                .filter(|v| v.property != models::properties::PropertyName::HerdBound)
                .collect();
            assert!(others.is_empty(), "{recipe} seed {seed}: {others:?}");
            assert_eq!(o.end, sim::engine::RunEnd::Finished, "{recipe} seed {seed}");
            gave_up += o.timers_fired(models::msg::Timer::GiveUp);
        }
        assert!(gave_up > 0, "{recipe}: some waiter outlasted 40 ms");
    }
    let e = Scenario::parse(&body("fair-predecessor:kazoo", 0), "t.toml", "t").unwrap_err();
    assert!(e.to_string().contains("acquire_timeout_ms"), "{e}");
    assert!(e.to_string().contains("must be positive"), "{e}");
    for refused in ["unfair-create", "etcd-revision"] {
        let e = Scenario::parse(&body(refused, 50), "t.toml", "t").unwrap_err();
        assert!(e.to_string().contains("timing.acquire_timeout_ms"), "{e}");
        assert!(e.to_string().contains("recipes that can"), "{e}");
    }
    let e = Scenario::parse(&body("unfair-create", 50), "t.toml", "t").unwrap_err();
    assert!(e.to_string().contains("recipes that can"), "{e}");
}

/// `reentries` in a scenario: holders acquire again as their library
/// answers a second acquire. Curator's is counted (nothing violated),
/// etcd's frees the lock under the outer caller (two holders), kazoo's
/// blocks the holder on itself (nobody else ever finishes).
#[test]
fn reentries_run_as_each_library_answers_them() {
    let body = |recipe: &str, variant: Option<&str>, reentries: u32| {
        let variant = variant.map_or(String::new(), |v| format!("variant = \"{v}\"\n"));
        format!(
            "recipe = \"{recipe}\"\n{variant}clients = 3\nrounds = 2\nreentries = {reentries}\n\
             [timing]\nsession_timeout_ms = 4000\n"
        )
    };
    let violated = |recipe: &str, variant: Option<&str>| {
        let s = Scenario::parse(&body(recipe, variant, 1), "r.toml", "r").unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 1..=30 {
            for v in simulate(&s, seed, false).violations {
                seen.insert(v.property.name());
            }
        }
        seen.into_iter().collect::<Vec<_>>()
    };
    assert!(violated("fair-predecessor", Some("curator")).is_empty());
    let etcd = violated("etcd-revision", None);
    for p in ["mutual_exclusion", "reentry_immediate"] {
        assert!(etcd.contains(&p), "{etcd:?}");
    }
    let kazoo = violated("fair-predecessor", Some("kazoo"));
    for p in ["progress", "reentry_immediate"] {
        assert!(kazoo.contains(&p), "{kazoo:?}");
    }
    for (recipe, reentries, key) in [
        ("unfair-create", 1, "reentries"),
        ("etcd-revision", 3, "reentries"),
    ] {
        let e = Scenario::parse(&body(recipe, None, reentries), "r.toml", "r").unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }
}

/// `TryLock` in the herd baseline (everyone asks at once): one client
/// holds, every other gives up after deleting its key, nobody is woken,
/// and no closed form is claimed (there is one release, not N).
#[test]
fn trylock_gives_up_instead_of_waiting() {
    let recipe = models::recipes::parse("etcd-revision:trylock").unwrap();
    assert_eq!(sim::herd::closed_form(&recipe, 5), None);
    for n in [2u16, 5, 20] {
        let row = sim::herd::row(&sim::herd::baseline(&recipe, n, 1), 1);
        assert_eq!(row.acquisitions, 1, "N = {n}");
        assert_eq!(row.notifications, 0, "N = {n}");
        assert_eq!(row.violations, 0, "N = {n}");
        assert_eq!(row.end, sim::engine::RunEnd::Finished, "N = {n}");
    }
}

/// A reproducer names what it reproduces: `reentry_immediate` is one of
/// them where holders re-enter, and no property otherwise.
#[test]
fn reentry_immediate_is_expected_only_where_holders_re_enter() {
    let file = |reentries: u32| {
        format!(
            "recipe = \"etcd-revision\"\nclients = 2\nreentries = {reentries}\n\
             expect = [\"reentry_immediate\"]\n[timing]\nsession_timeout_ms = 4000\n"
        )
    };
    let s = Scenario::parse(&file(1), "r.toml", "r").unwrap();
    assert!(simulate(&s, 1, false)
        .violations
        .iter()
        .any(|v| v.property == models::properties::PropertyName::ReentryImmediate));
    let e = Scenario::parse(&file(0), "r.toml", "r").unwrap_err();
    assert!(e.to_string().contains("'reentry_immediate'"), "{e}");
}

/// A Redis lock's release is counted where the lock is freed — its key
/// gone from a majority of the masters, by a delete or an expiry — once
/// per release, however many masters it spans; no header moves there.
#[test]
fn a_redis_release_is_counted_once_where_the_key_goes() {
    for recipe in ["redis-token", "redis-setnx", "redlock"] {
        let toml = format!("recipe = \"{recipe}\"\nclients = 3\nrounds = 2\n");
        let s = Scenario::parse(&toml, "inline.toml", "inline").unwrap();
        let o = simulate(&s, 1, false);
        assert!(o.violations.is_empty(), "{recipe}: {:?}", o.violations);
        assert_eq!(o.metrics.acquisitions, 6, "{recipe}");
        assert_eq!(o.metrics.releases, 6, "{recipe}");
    }
}
