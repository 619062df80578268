//! An ensemble in the simulator: `servers` and `timing.apply_ms`, each
//! follower applying every commit a drawn delay later (traced as `apply`),
//! the same trace from the same seed, and the file's bad settings refused
//! naming their key.

use sim::engine::simulate;
use sim::scenario::Scenario;
use sim::trace::TraceEvent;

fn parse(toml: &str) -> Result<Scenario, sim::scenario::ScenarioError> {
    Scenario::parse(toml, "inline.toml", "inline")
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

/// `herd_bound` is not judged over an ensemble (a release's notifications
/// come from each server as it applies the release, not yet added up per
/// release): `children-watch`, whose every release wakes every waiter,
/// violates it on one server and is not judged by it on three.
#[test]
fn herd_bound_is_not_judged_over_an_ensemble() {
    let file = |servers: u8| {
        parse(&format!(
            "recipe = \"children-watch\"\nclients = 4\nrounds = 2\nservers = {servers}\n\
             [timing]\nthink_ms = [20, 200]\nhold_ms = [100, 400]\n"
        ))
        .unwrap()
    };
    let herd = |s: &Scenario, seed| {
        simulate(s, seed, false)
            .first_violation("herd_bound")
            .is_some()
    };
    let (one, three) = (file(1), file(3));
    assert!((0..5).all(|seed| herd(&one, seed)));
    assert!((0..5).all(|seed| !herd(&three, seed)));
}
