//! Scenario validation and the engine's bounds, one test per class of input
//! that used to hang, wrap, panic or raise a false alarm; then a
//! property-based fuzz test over generated scenario files.
//!
//! The fuzz test runs 2,000 cases in the normal test run; a longer soak:
//! `PROPTEST_CASES=200000 cargo test --release -p lockstep-sim --test hardening generated`.

use proptest::prelude::*;
use sim::engine::{simulate, RunEnd};
use sim::scenario::{Scenario, ScenarioError};

fn parse(toml: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(toml, "inline.toml", "inline")
}

/// The key a scenario is refused for.
fn refused_key(toml: &str) -> String {
    match parse(toml) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e.key,
    }
}

const HEALTHY: &str = "recipe = \"fair-predecessor\"\nclients = 3\nrounds = 2\n";

#[test]
fn a_deadline_that_cannot_make_progress_is_refused() {
    // Used to give its session up and reopen it forever at one instant.
    let toml = format!(
        "{HEALTHY}policy = \"lease-aware\"\n[timing]\ndeadline_ms = 0\nlatency_ms = [0.0, 0.0]\n"
    );
    assert_eq!(refused_key(&toml), "timing.deadline_ms");
    // Shorter than a ping interval plus a round trip: gives healthy sessions up.
    let toml = format!(
        "{HEALTHY}policy = \"lease-aware\"\n[timing]\nsession_timeout_ms = 3000\nping_interval_ms = 1000\ndeadline_ms = 1003\nlatency_ms = [1.0, 2.0]\n"
    );
    assert_eq!(refused_key(&toml), "timing.deadline_ms");
}

/// The Redis keys, the store faults and the application's interrupt, each
/// refused naming the key where it means nothing.
#[test]
fn redis_keys_and_interrupts_are_refused_where_they_mean_nothing() {
    let redis = "recipe = \"redis-token\"\nclients = 2\n";
    let watchdog = "recipe = \"redis-token\"\nvariant = \"watchdog\"\nclients = 2\n";
    let interrupt = "[[schedule]]\nat_ms = 3\nkind = \"interrupt\"\nclient = 0\n";
    let cases = [
        // Only a library that returns from an interrupted acquire.
        (format!("{redis}{interrupt}"), "schedule[0].kind"),
        (format!("{HEALTHY}{interrupt}"), "schedule[0].kind"),
        (
            format!("{watchdog}{interrupt}duration_ms = 5\n"),
            "schedule[0].duration_ms",
        ),
        (
            format!("{watchdog}[[schedule]]\nat_ms = 3\nkind = \"interrupt\"\nmaster = 0\n"),
            "schedule[0].client",
        ),
        (
            format!("{watchdog}[[schedule]]\nat_ms = 3\nkind = \"interrupt\"\nclient = 5\n"),
            "schedule[0].client",
        ),
        // A store fault names a master of a Redis store.
        (
            format!("{redis}[[schedule]]\nat_ms = 3\nkind = \"master_restart\"\nmaster = 1\n"),
            "schedule[0].master",
        ),
        (
            format!("{HEALTHY}[[schedule]]\nat_ms = 3\nkind = \"clock_jump\"\nmaster = 0\n"),
            "schedule[0].kind",
        ),
        (
            format!("{redis}[[schedule]]\nat_ms = 3\nkind = \"clock_jump\"\nclient = 0\n"),
            "schedule[0].client",
        ),
        (format!("{HEALTHY}masters = 3\n"), "masters"),
        // A watchdog's renewal must land inside the TTL.
        (
            format!("{watchdog}[timing]\nkey_ttl_ms = 6\nretry_delay_ms = 1\nretry_ms = 5\nlatency_ms = [1, 2]\n"),
            "timing.key_ttl_ms",
        ),
        // The lock's clocks: a TTL, and a retry delay shorter than it.
        (
            format!("{redis}[timing]\nkey_ttl_ms = 0\n"),
            "timing.key_ttl_ms",
        ),
        (
            format!("{redis}[timing]\nretry_delay_ms = 10000\n"),
            "timing.retry_delay_ms",
        ),
        (
            format!("{redis}[timing]\nretry_delay_ms = 0\n"),
            "timing.retry_delay_ms",
        ),
        (
            format!("{HEALTHY}[timing]\nkey_ttl_ms = 5000\n"),
            "timing.key_ttl_ms",
        ),
        (
            "recipe = \"redis-setnx\"\nclients = 2\n[timing]\nkey_ttl_ms = 1500\n".into(),
            "timing.key_ttl_ms",
        ),
        (
            "recipe = \"redlock\"\nclients = 2\n[timing]\nkey_ttl_ms = 2\nretry_delay_ms = 1\n"
                .into(),
            "timing.key_ttl_ms",
        ),
        (
            format!("{redis}persistence = \"sometimes\"\n"),
            "persistence",
        ),
    ];
    for (toml, key) in cases {
        assert_eq!(refused_key(&toml), key, "{toml}");
    }
    // And a valid interrupt runs.
    assert!(parse(&format!("{watchdog}{interrupt}")).is_ok());
}

/// A scenario's TTL and retry delay are the recipe's: the key is set with
/// that TTL, and a shorter delay polls more.
#[test]
fn a_scenario_sets_the_redis_locks_clocks() {
    let file = |retry: &str| {
        format!(
            "recipe = \"redis-token\"\nclients = 2\nrounds = 2\n[timing]\nkey_ttl_ms = 800\n\
             {retry}retry_ms = 500\nhold_ms = [100, 200]\n"
        )
    };
    let fast = parse(&file("retry_delay_ms = 10\n")).unwrap();
    let lease = fast.recipe.key_lease().unwrap();
    assert_eq!(lease.ttl, std::time::Duration::from_millis(800));
    assert_eq!(
        fast.recipe.longest_sleep(),
        std::time::Duration::from_millis(10)
    );
    let slow = parse(&file("")).unwrap();
    let sets = |s: &sim::scenario::Scenario| {
        let o = simulate(s, s.seed, false);
        assert!(o.violations.is_empty(), "{:?}", o.violations);
        o.metrics.store_requests.values().sum::<u64>()
    };
    assert!(sets(&fast) > sets(&slow));
}

#[test]
fn times_that_would_wrap_are_refused_naming_the_key() {
    let cases = [
        (
            "[[schedule]]\nat_ms = 18446744073709552\nkind = \"pause\"\nclient = 0\nduration_ms = 10\n",
            "schedule[0].at_ms",
        ),
        (
            "[[schedule]]\nat_ms = 10\nkind = \"pause\"\nclient = 0\nduration_ms = 9223372036854775807\n",
            "schedule[0].duration_ms",
        ),
        ("duration_ms = 9223372036854775807\n", "duration_ms"),
        (
            "[timing]\nsession_timeout_ms = 18446744073709552\n",
            "timing.session_timeout_ms",
        ),
        ("[timing]\nlatency_ms = [0, 1e300]\n", "timing.latency_ms"),
        (
            "[timing]\nthink_ms = [0, 9223372036854775807]\n",
            "timing.think_ms",
        ),
        ("[faults]\nuntil_ms = 9223372036854775807\n", "faults.until_ms"),
    ];
    for (tail, key) in cases {
        // Top-level keys must come before the tables.
        let toml = if tail.starts_with("duration_ms") {
            format!("duration_ms = 9223372036854775807\n{HEALTHY}")
        } else {
            format!("{HEALTHY}{tail}")
        };
        assert_eq!(refused_key(&toml), key, "{toml}");
    }
}

#[test]
fn the_largest_times_accepted_do_not_wrap() {
    // Every time at its maximum still validates and sums without wrapping.
    let max = sim::scenario::MAX_TIME_MS;
    let toml = format!(
        "{HEALTHY}[[schedule]]\nat_ms = {max}\nkind = \"pause\"\nclient = 0\nduration_ms = {max}\n"
    );
    let s = parse(&toml).unwrap();
    // The pause comes after the run's work: it is drawn but the run ends
    // when every client is done and the fault is over. It must not fire
    // early (it used to wrap to 384 µs).
    let o = simulate(&s, 1, true);
    let first_fault = o
        .trace
        .iter()
        .find(|l| matches!(l.event, sim::trace::TraceEvent::Fault { .. }));
    if let Some(l) = first_fault {
        assert!(l.t >= max * 1000, "fired at {} µs", l.t);
    }
}

#[test]
fn a_retry_shorter_than_a_round_trip_is_refused() {
    // Used to resend `connect` 1,935 times and report progress with no fault.
    let toml = format!("{HEALTHY}[timing]\nlatency_ms = [600, 600]\n");
    let e = parse(&toml).unwrap_err();
    assert_eq!(e.key, "timing.retry_ms");
    assert!(e.reason.contains("round trip"), "{e}");
    // Just above the round trip is fine.
    let toml = format!(
        "{HEALTHY}[timing]\nlatency_ms = [600, 600]\nretry_ms = 1201\nsession_timeout_ms = 8000\n"
    );
    let s = parse(&toml).unwrap();
    let o = simulate(&s, 3, false);
    assert!(o.violations.is_empty(), "{:?}", o.violations);
    assert_eq!(o.metrics.acquisitions, 6);
    // One connect per client: nothing was resent.
    assert_eq!(
        o.metrics
            .store_requests
            .get(&models::msg::RequestKind::Connect),
        Some(&3)
    );
}

#[test]
fn a_lease_that_expires_before_its_first_keepalive_is_refused() {
    // Used to be accepted (ping 3 + one way 4 < 10), and the lease
    // expired before the first keep-alive arrived: grant, reply (4 ms),
    // ping timer (3 ms), keep-alive (4 ms) is 11 ms after the grant.
    // single_leader and elected_with_key fell on 300 of 300 seeds.
    let election = "recipe = \"etcd-election\"\nclients = 2\nrounds = 2\n";
    let e = parse(&format!(
        "{election}[timing]\nsession_timeout_ms = 10\nlatency_ms = [4, 4]\n"
    ))
    .unwrap_err();
    assert_eq!(e.key, "timing.session_timeout_ms");
    assert!(
        e.reason
            .contains("twice the longest one-way latency (8 ms)"),
        "{e}"
    );
    // The same on the ZooKeeper face, whose session clock starts at the
    // connect the same way.
    assert_eq!(
        refused_key(&format!(
            "{HEALTHY}[timing]\nsession_timeout_ms = 10\nlatency_ms = [4, 4]\n"
        )),
        "timing.session_timeout_ms"
    );
    // Just inside the bound (ping 4 + 2 x 4 < 13): no lease is lost, so
    // nothing is violated and each client granted its one lease.
    let s = parse(&format!(
        "{election}[timing]\nsession_timeout_ms = 13\nlatency_ms = [4, 4]\n"
    ))
    .unwrap();
    for seed in 0..300 {
        let o = simulate(&s, seed, false);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        assert_eq!(
            o.metrics
                .store_requests
                .get(&models::msg::RequestKind::LeaseGrant),
            Some(&2),
            "seed {seed}"
        );
    }
}

#[test]
fn the_message_blames_the_setting_the_user_wrote() {
    // A one-millisecond session timeout used to blame ping_interval_ms.
    assert_eq!(
        refused_key(&format!("{HEALTHY}[timing]\nsession_timeout_ms = 1\n")),
        "timing.session_timeout_ms"
    );
    // Heartbeats plus latency too slow for the session: the default ping
    // interval is not the user's fault.
    assert_eq!(
        refused_key(&format!(
            "{HEALTHY}[timing]\nsession_timeout_ms = 30\nlatency_ms = [25, 25]\nretry_ms = 100\n"
        )),
        "timing.session_timeout_ms"
    );
    assert_eq!(
        refused_key(&format!(
            "{HEALTHY}[timing]\nsession_timeout_ms = 1000\nping_interval_ms = 999\n"
        )),
        "timing.ping_interval_ms"
    );
    // A naive client has no deadline: the lease-aware rule is not applied,
    // and a deadline given anyway is an error, not ignored.
    let naive = format!(
        "{HEALTHY}[timing]\nsession_timeout_ms = 100\nlatency_ms = [30, 30]\nretry_ms = 100\n"
    );
    parse(&naive).unwrap();
    assert_eq!(
        refused_key(&format!("{HEALTHY}[timing]\ndeadline_ms = 100\n")),
        "timing.deadline_ms"
    );
}

#[test]
fn silent_defaults_and_ignored_settings_are_errors() {
    let cases = [
        (
            "[timing]\nping_interval_ms = 0\n",
            "timing.ping_interval_ms",
        ),
        (
            "[faults]\nlost_reply = { rate_per_s = 1.0, duration_ms = [1, 2] }\n",
            "faults.lost_reply.duration_ms",
        ),
        (
            "[faults]\nuntil_ms = 0\npause = { rate_per_s = 1.0, duration_ms = [1, 2] }\n",
            "faults.until_ms",
        ),
        (
            "[faults]\npause = { rate_per_s = 1.0, duration_ms = [1, 2], extra_ms = [1, 2] }\n",
            "faults.pause.extra_ms",
        ),
    ];
    for (tail, key) in cases {
        assert_eq!(refused_key(&format!("{HEALTHY}{tail}")), key, "{tail}");
    }
}

#[test]
fn fault_counts_are_capped() {
    // A rate of 1e9 per second used to draw 2×10^7 faults.
    let toml = format!("{HEALTHY}[faults]\npause = {{ rate_per_s = 1e9, duration_ms = [1, 2] }}\n");
    let e = parse(&toml).unwrap_err();
    assert_eq!(e.key, "faults.pause.rate_per_s");
    assert!(e.reason.contains("at most"), "{e}");
}

#[test]
fn a_time_limit_is_not_a_progress_violation() {
    // `duration_ms = 100` on healthy used to report progress violated at 0.1 s.
    let s = parse(&format!("duration_ms = 100\n{HEALTHY}")).unwrap();
    let o = simulate(&s, 1, false);
    assert_eq!(o.end, RunEnd::TimeLimit { at_us: 100_000 });
    assert!(o.violations.is_empty(), "{:?}", o.violations);
    // Without the limit the same run finishes.
    let o = simulate(&parse(HEALTHY).unwrap(), 1, false);
    assert_eq!(o.end, RunEnd::Finished);
    assert!(o.violations.is_empty());
}

#[test]
fn a_zero_time_herd_is_slow_but_not_stuck() {
    // Every time zero: each release wakes every waiter, all at one instant,
    // so 1,000 clients take about 2.5 M events at time 0 — past the
    // at-one-instant guard (1 M + 1,000 a client), which used to call the
    // run stuck. Clients acquiring is progress.
    let clients: u16 = 1000;
    let toml = format!(
        "recipe = \"unfair-create\"\nclients = {clients}\nrounds = 1\n[timing]\n\
         think_ms = [0, 0]\nhold_ms = [0, 0]\nlatency_ms = [0.0, 0.0]\n"
    );
    let o = simulate(&parse(&toml).unwrap(), 1, false);
    assert_eq!(o.end, RunEnd::Finished);
    assert_eq!(o.metrics.end_us, 0);
    assert_eq!(o.metrics.acquisitions, u64::from(clients));
    let guard = sim::scenario::MAX_EVENTS_AT_ONE_INSTANT
        + sim::scenario::EVENTS_AT_ONE_INSTANT_PER_CLIENT * u64::from(clients);
    assert!(o.metrics.events > guard, "{} events", o.metrics.events);
}

#[test]
fn a_run_whose_time_stands_still_is_cut_off_not_hung() {
    // Validation refuses this timing; built behind its back, the engine
    // must still stop and say why.
    let mut s = parse(&format!("{HEALTHY}policy = \"lease-aware\"\n")).unwrap();
    s.timing.latency_us = (0, 0);
    s.timing.deadline_us = 0;
    let o = simulate(&s, 1, false);
    match o.end {
        RunEnd::Stuck { events, .. } => assert!(events > 1_000_000),
        other => panic!("expected a stuck run, got {other}"),
    }
    assert!(o.end.is_cut_off());
    assert!(
        o.violations.iter().all(|v| v.property.name() != "progress"),
        "a cut-off run is no verdict on progress"
    );
}

#[test]
fn a_run_that_must_reach_the_event_cap_is_refused_up_front() {
    // A 3 ms session heartbeats every millisecond (three events) through a
    // hold of a million seconds: 3 G events before client 0 can be done,
    // past the 2 G cap. It used to run for half an hour to say so.
    let toml = |more: &str| {
        format!("recipe = \"fair-predecessor\"\nclients = 1\n{more}[timing]\nsession_timeout_ms = 3\nlatency_ms = [0, 0]\nhold_ms = [1000000000, 1000000000]\n")
    };
    let e = parse(&toml("")).unwrap_err();
    assert_eq!(e.key, "timing.session_timeout_ms");
    assert!(e.reason.contains("past the simulator's cap"), "{e}");
    // A time limit that ends it sooner is not refused.
    parse(&toml("duration_ms = 1000\n")).unwrap();
    // Nor is a queue whose consumer holds its one item briefly, though
    // client 0, its producer, is the same; with the long hold it is (the
    // consumer's hold used to go unchecked: sim/tests/timing_roles.rs).
    let queue = toml("").replace(
        "fair-predecessor\"\nclients = 1",
        "zk-fifo-queue\"\nclients = 2",
    );
    assert_eq!(refused_key(&queue), "timing.session_timeout_ms");
    parse(&queue.replace("hold_ms = [1000000000, 1000000000]", "hold_ms = [10, 10]")).unwrap();
    // With faults it is no bound: a crash for good ends client 0 at once.
    let crashed = format!(
        "{}[[schedule]]\nat_ms = 0\nkind = \"crash\"\nclient = 0\n",
        toml("")
    );
    let s = parse(&crashed).unwrap();
    assert_eq!(simulate(&s, 1, false).end, RunEnd::Finished);
}

#[test]
fn every_run_is_bounded_in_events() {
    let mut s = parse(HEALTHY).unwrap();
    s.max_events = 50;
    let o = simulate(&s, 1, false);
    assert_eq!(o.end, RunEnd::EventLimit { events: 50 });
    assert_eq!(o.metrics.events, 50);
}

#[test]
fn seeds_above_i64_round_trip_through_a_reproducer() {
    let s = parse(HEALTHY).unwrap();
    for seed in [0, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
        let text = s.reproducer(
            seed,
            (s.clients, s.producers, s.writers, s.observers, 1),
            Vec::new(),
            &[],
            "note",
        );
        let back = parse(&text).unwrap();
        assert_eq!(back.seed, seed, "{text}");
    }
    assert_eq!(refused_key(&format!("seed = -1\n{HEALTHY}")), "");
    let e = parse(&format!("seed = \"12x\"\n{HEALTHY}")).unwrap_err();
    assert!(e.reason.contains("not a seed"), "{e}");
}

#[test]
fn a_streamed_trace_equals_the_kept_one() {
    let s = parse(&format!(
        "{HEALTHY}[faults]\nuntil_ms = 2000\npause = {{ rate_per_s = 1.0, duration_ms = [100, 5000] }}\n"
    ))
    .unwrap();
    let kept = simulate(&s, 7, true);
    let mut bytes = Vec::new();
    let streamed = sim::engine::simulate_traced(
        &s,
        7,
        sim::engine::TraceOptions {
            keep: false,
            hash: false,
            write: Some(Box::new(&mut bytes)),
        },
    )
    .unwrap();
    assert!(
        streamed.trace.is_empty(),
        "streaming keeps nothing in memory"
    );
    assert_eq!(streamed.trace_hash, kept.trace_hash);
    let text: String = kept.trace.iter().map(|l| l.to_json() + "\n").collect();
    assert_eq!(String::from_utf8(bytes).unwrap(), text);
}

#[test]
fn a_failing_trace_writer_is_an_error_not_a_panic() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let s = parse(HEALTHY).unwrap();
    let r = sim::engine::simulate_traced(
        &s,
        1,
        sim::engine::TraceOptions {
            keep: false,
            hash: false,
            write: Some(Box::new(Full)),
        },
    );
    assert_eq!(r.unwrap_err().to_string(), "disk full");
}

// ---- Fuzz: generated scenario files, valid and invalid ----

/// A number as TOML writes it, from a mix of ordinary and extreme values.
fn ms_value() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        40 => (0u64..5_000).prop_map(|v| v.to_string()),
        1 => Just("0".to_string()),
        1 => Just("1".to_string()),
        1 => Just("1000000000".to_string()),
        1 => Just("1000000001".to_string()),
        1 => Just("18446744073709552".to_string()),
        1 => Just("9223372036854775807".to_string()),
        1 => Just("-5".to_string()),
    ]
}

fn float_value() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        40 => (0.0f64..5.0).prop_map(|v| format!("{v:.3}")),
        1 => Just("0.0".to_string()),
        1 => Just("1e300".to_string()),
        1 => Just("nan".to_string()),
        1 => Just("inf".to_string()),
        1 => Just("-1.0".to_string()),
        1 => Just("1e9".to_string()),
    ]
}

/// `[low, high]`, usually in order.
fn pair<S: Strategy<Value = String> + Clone>(s: S) -> impl Strategy<Value = String> {
    (s.clone(), s, prop::bool::weighted(0.8)).prop_map(|(a, b, sort)| {
        let (a, b) = match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) if sort && x > y => (b, a),
            _ => (a, b),
        };
        format!("[{a}, {b}]")
    })
}

fn optional(key: &'static str, v: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::option::weighted(0.25, v)
        .prop_map(move |v| v.map(|v| format!("{key} = {v}\n")).unwrap_or_default())
}

fn scenario_file() -> impl Strategy<Value = String> {
    let head = (
        prop_oneof![
            5 => Just("fair-predecessor"),
            5 => Just("unfair-create"),
            5 => Just("etcd-revision"),
            5 => Just("children-watch"),
            5 => Just("lowest-watch"),
            3 => Just("zk-unfair-election"),
            3 => Just("zk-fair-election"),
            3 => Just("etcd-election"),
            1 => Just("no-such-recipe"),
        ],
        prop_oneof![30 => (1u32..5).prop_map(|c| c.to_string()), 1 => Just("0".into()), 1 => Just("10001".into())],
        prop_oneof![30 => (1u32..3).prop_map(|c| c.to_string()), 1 => Just("0".into()), 1 => Just("201".into())],
        prop_oneof![10 => Just("naive"), 5 => Just("oblivious"), 5 => Just("suspend-aware"), 10 => Just("lease-aware"), 1 => Just("sloppy")],
        any::<bool>(),
        optional("seed", prop_oneof![Just("3".to_string()), Just("\"18446744073709551615\"".to_string()), Just("-1".to_string())]),
        optional("duration_ms", ms_value()),
    )
        .prop_map(|(recipe, clients, rounds, policy, fencing, seed, duration)| {
            format!(
                "{duration}{seed}recipe = \"{recipe}\"\nclients = {clients}\nrounds = {rounds}\npolicy = \"{policy}\"\nfencing = {fencing}\n"
            )
        });
    let timing = (
        optional("session_timeout_ms", ms_value()),
        optional("ping_interval_ms", ms_value()),
        optional("think_ms", pair(ms_value())),
        optional("hold_ms", pair(ms_value())),
        optional("latency_ms", pair(float_value())),
        optional("retry_ms", ms_value()),
        optional("deadline_ms", ms_value()),
    )
        .prop_map(|(a, b, c, d, e, f, g)| format!("[timing]\n{a}{b}{c}{d}{e}{f}{g}"));
    let rate = |with_duration: bool| {
        (float_value(), pair(ms_value()), any::<bool>()).prop_map(move |(r, d, dur)| {
            if with_duration || dur {
                format!("{{ rate_per_s = {r}, duration_ms = {d} }}")
            } else {
                format!("{{ rate_per_s = {r} }}")
            }
        })
    };
    let faults = (
        optional("until_ms", ms_value()),
        optional("pause", rate(true)),
        optional("crash", rate(false)),
        optional("partition", rate(true)),
        optional("lost_reply", rate(false)),
        optional(
            "delay",
            (float_value(), pair(ms_value()), pair(ms_value())).prop_map(|(r, d, x)| {
                format!("{{ rate_per_s = {r}, duration_ms = {d}, extra_ms = {x} }}")
            }),
        ),
    )
        .prop_map(|(a, b, c, d, e, f)| format!("[faults]\n{a}{b}{c}{d}{e}{f}"));
    let schedule = prop::collection::vec(
        (
            ms_value(),
            prop_oneof![
                Just("pause"),
                Just("crash"),
                Just("partition"),
                Just("lost_reply"),
                Just("delay"),
                // Consul's, refused for these recipes naming the key.
                Just("check_critical"),
                Just("failover")
            ],
            prop_oneof![9 => 0u32..2, 1 => 0u32..6],
            prop::option::of(ms_value()),
            prop::option::of(ms_value()),
        )
            .prop_map(|(at, kind, client, d, x)| {
                let d = d
                    .map(|d| format!("duration_ms = {d}\n"))
                    .unwrap_or_default();
                let x = x.map(|x| format!("extra_ms = {x}\n")).unwrap_or_default();
                format!("[[schedule]]\nat_ms = {at}\nkind = \"{kind}\"\nclient = {client}\n{d}{x}")
            }),
        0..3,
    );
    (
        head,
        prop::option::of(timing),
        prop::option::of(faults),
        schedule,
    )
        .prop_map(|(head, timing, faults, schedule)| {
            format!(
                "{head}{}{}{}",
                timing.unwrap_or_default(),
                faults.unwrap_or_default(),
                schedule.concat()
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        // 2,000 cases take about a quarter of a second; PROPTEST_CASES
        // sets more for a soak.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every generated file validates or is refused with a message naming
    /// the file; a valid one runs to an end within the event cap, never
    /// panics, never stands still, and — without faults — reports nothing.
    #[test]
    fn generated_scenarios_validate_or_fail_cleanly(toml in scenario_file()) {
        let mut s = match parse(&toml) {
            Err(e) => {
                prop_assert!(e.to_string().starts_with("inline.toml"), "{e}");
                prop_assert!(!e.reason.is_empty());
                return Ok(());
            }
            Ok(s) => s,
        };
        // Sized for the normal test run: long virtual runs stop at the cap
        // (reported as such, never as a verdict).
        s.max_events = 200_000;
        let o = simulate(&s, s.seed, false);
        let stood_still = matches!(o.end, RunEnd::Stuck { .. });
        prop_assert!(!stood_still, "{}\n{toml}", o.end);
        let fault_free = s.profile.is_empty() && s.schedule.is_empty();
        if fault_free && !o.end.is_cut_off() {
            // Without faults every shipped recipe is safe and live; only a
            // recipe that really herds (its closed form wakes more than one
            // waiter per release) may break herd_bound.
            let herds = sim::herd::closed_form(&s.recipe, s.clients as u32)
                .is_some_and(|per_release| per_release.iter().any(|&n| n > 1));
            for v in &o.violations {
                prop_assert!(
                    v.property.name() == "herd_bound" && herds,
                    "{:?}\n{toml}", o.violations
                );
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_refused_not_mangled() {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir().join(format!("lockstep-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(std::ffi::OsStr::from_bytes(b"bad-\xff.toml"));
    std::fs::write(&path, HEALTHY).unwrap();
    let e = Scenario::load(&path).unwrap_err();
    assert!(e.reason.contains("not valid UTF-8"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Settings that contradict each other, or a fault that does nothing, are
/// refused naming the key: the run would not be the one the file describes.
#[test]
fn contradictions_and_empty_faults_are_refused() {
    let fair = "recipe = \"fair-predecessor\"\nclients = 3\n";
    let cases = [
        // `guid = true` is the recipe with the guid; no-guid is without.
        (format!("{fair}variant = \"no-guid\"\nguid = true\n"), "guid"),
        (format!("{fair}variant = \"curator\"\nguid = false\n"), "guid"),
        // Producers are a queue's; 0 given for a lock is a mistake too.
        (format!("{fair}producers = 0\n"), "producers"),
        (
            format!("{fair}expect = [\"mutual_exclusion\", \"mutual_exclusion\"]\n"),
            "expect[1]",
        ),
        (
            format!("{fair}[faults]\npause = {{ rate_per_s = 1.0, duration_ms = [0, 0] }}\n"),
            "faults.pause.duration_ms",
        ),
        (
            format!("{fair}[[schedule]]\nat_ms = 5\nkind = \"partition\"\nclient = 0\nduration_ms = 0\n"),
            "schedule[0].duration_ms",
        ),
    ];
    for (toml, key) in cases {
        assert_eq!(refused_key(&toml), key, "{toml}");
    }
    // What agrees is accepted: the variant and the older spelling of it,
    // a crash with no down time (the process restarts at once), a pause
    // range that may draw 0.
    let no_guid = parse(&format!("{fair}variant = \"no-guid\"\nguid = false\n")).unwrap();
    assert_eq!(no_guid.recipe.variant(), Some("no-guid"));
    let curator = parse(&format!("{fair}variant = \"curator\"\nguid = true\n")).unwrap();
    assert_eq!(curator.recipe.variant(), Some("curator"));
    parse(&format!(
        "{fair}[faults]\ncrash = {{ rate_per_s = 1.0, duration_ms = [0, 0] }}\npause = {{ rate_per_s = 1.0, duration_ms = [0, 5] }}\n"
    ))
    .unwrap();
}

/// Two mistakes a user makes from the CLI's habits get a message that says
/// what to write instead.
#[test]
fn cli_spellings_in_a_file_say_what_to_write() {
    let e = parse("recipe = \"fair-predecessor:curator\"\nclients = 2\n").unwrap_err();
    assert_eq!(e.key, "recipe");
    assert!(e.reason.contains("variant = \"curator\""), "{}", e.reason);
    let e = parse("recipe = \"fair-predecessor\"\nclients = 2\nseed = 18446744073709551615\n")
        .unwrap_err();
    assert!(
        e.reason.contains("write a larger seed as a string"),
        "{}",
        e.reason
    );
    let big =
        parse("recipe = \"fair-predecessor\"\nclients = 2\nseed = \"18446744073709551615\"\n")
            .unwrap();
    assert_eq!(big.seed, u64::MAX);
}

/// A path that never ends is refused at the cap, not read until memory
/// runs out.
#[cfg(unix)]
#[test]
fn an_endless_file_is_refused_not_read_forever() {
    let e = Scenario::load(std::path::Path::new("/dev/zero")).unwrap_err();
    assert!(e.reason.contains("longer than 64 MiB"), "{e}");
}
