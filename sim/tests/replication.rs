//! The simulator's replication clock: each change of the first Redis
//! master reaches its replica a drawn lag later, in the order it was made;
//! a failover loses what had not arrived; a `WAIT` is answered when the
//! replica has caught up. And the settings that would misbehave are
//! refused, naming the key.

use sim::engine::simulate;
use sim::scenario::Scenario;
use sim::trace::{Party, TraceEvent, TraceLine};

/// One `redis-token` client with a replica lagging `lag` ms, 3 rounds.
fn replicated(variant: &str, lag: [u64; 2]) -> Scenario {
    let text = format!(
        "recipe = \"redis-token\"\n{variant}clients = 1\nrounds = 3\nreplica = true\n\
         [timing]\nhold_ms = [10, 20]\nreplication_ms = [{}, {}]\n",
        lag[0], lag[1]
    );
    Scenario::parse(&text, "replicated.toml", "replicated").unwrap()
}

/// The changes the store made on master 0, with when, as the replication
/// stream carries them: a `SET NX` answered `OK`, a compare-and-delete
/// answered 1. (A client has one request out at a time: its next reply
/// is the answer to its last request.)
fn changes(trace: &[TraceLine]) -> Vec<(u64, String)> {
    let mut asked: Vec<Option<(u64, String)>> = vec![None; 4];
    let mut out = Vec::new();
    for line in trace {
        let TraceEvent::Deliver { from, to, msg, .. } = &line.event else {
            continue;
        };
        match (from, to) {
            (Party::Client(c), Party::Store) => asked[*c as usize] = Some((line.t, msg.clone())),
            (Party::Store, Party::Client(c)) => {
                let Some((t, req)) = asked[*c as usize].take() else {
                    continue;
                };
                let token = req.split(' ').nth(2).unwrap_or_default();
                if req.starts_with("SET lock") && msg == "OK" {
                    out.push((t, format!("SET lock {token} PX 10000")));
                } else if req.starts_with("EVAL(if GET lock") && msg == "(integer) 1" {
                    out.push((t, "DEL lock".to_string()));
                }
            }
            _ => {}
        }
    }
    out.sort_by_key(|(t, _)| *t);
    out
}

/// The changes the replica received, with when.
fn received(trace: &[TraceLine]) -> Vec<(u64, String)> {
    trace
        .iter()
        .filter_map(|l| match &l.event {
            TraceEvent::Replicate { change } => Some((l.t, change.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn every_change_reaches_the_replica_in_order_a_drawn_lag_later() {
    let s = replicated("", [30, 60]);
    let mut lags = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let o = simulate(&s, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        let made = changes(&o.trace);
        let got = received(&o.trace);
        // Three rounds: a SET and a DEL each. They arrive in order; the
        // run ends when the client is done, with the last DEL still on
        // its way.
        assert_eq!(made.len(), 6, "seed {seed}");
        let texts = |v: &[(u64, String)]| v.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&got), texts(&made)[..got.len()], "seed {seed}");
        let due = made.iter().filter(|(t, _)| t + 60_000 <= o.metrics.end_us);
        let due = due.count();
        assert!(
            got.len() >= due,
            "seed {seed}: {} of {due} due arrived",
            got.len()
        );
        for ((at, _), (arrived, _)) in made.iter().zip(&got) {
            let lag = arrived - at;
            assert!(
                (30_000..=60_000).contains(&lag),
                "seed {seed}: lag {lag} µs"
            );
            lags.insert(lag);
        }
    }
    assert!(lags.len() > 10, "the lag is drawn, not fixed: {lags:?}");
}

#[test]
fn a_wait_is_answered_once_the_replica_has_the_key() {
    let s = replicated("variant = \"wait\"\n", [30, 60]);
    for seed in 0..10 {
        let o = simulate(&s, seed, true);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        assert_eq!(o.metrics.acquisitions, 3, "seed {seed}");
        // Each hold begins after its SET reached the replica.
        let sets: Vec<u64> = received(&o.trace)
            .into_iter()
            .filter(|(_, c)| c.starts_with("SET"))
            .map(|(t, _)| t)
            .collect();
        let holds: Vec<u64> = o
            .trace
            .iter()
            .filter(|l| matches!(l.event, TraceEvent::Hold { .. }))
            .map(|l| l.t)
            .collect();
        assert_eq!(sets.len(), holds.len(), "seed {seed}");
        assert!(sets.iter().zip(&holds).all(|(s, h)| s < h), "seed {seed}");
        // Held at the store, the WAIT is not resent.
        assert_eq!(o.timers_fired(models::msg::Timer::Retry), 0, "seed {seed}");
    }
}

#[test]
fn a_failover_loses_every_change_the_replica_had_not_received() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/redis-failover-lost-lock.toml"
    );
    let s = Scenario::load(std::path::Path::new(path)).unwrap();
    let o = simulate(&s, s.seed, true);
    let failover = o
        .trace
        .iter()
        .find(|l| matches!(l.event, TraceEvent::StoreFault { .. }))
        .map(|l| l.t)
        .expect("the failover fired");
    let made = changes(&o.trace);
    let (lost, kept): (Vec<_>, Vec<_>) = made.into_iter().partition(|(t, _)| *t < failover);
    assert!(!lost.is_empty(), "a SET was answered before the failover");
    let got = received(&o.trace);
    assert!(got.iter().all(|(t, _)| *t > failover), "{got:?}");
    let texts = |v: &[(u64, String)]| v.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>();
    // What the promoted master makes afterwards reaches its new replica;
    // what the old one made before is gone.
    assert_eq!(texts(&got), texts(&kept)[..got.len()]);
    assert!(got.len() + 1 >= kept.len(), "all but the last arrived");
}

#[test]
fn without_a_replica_nothing_is_drawn_and_a_wait_answers_zero() {
    let text = "recipe = \"redis-token\"\nvariant = \"wait\"\nclients = 1\nduration_ms = 2000\n";
    let s = Scenario::parse(text, "bare.toml", "bare").unwrap();
    let o = simulate(&s, 1, true);
    assert!(received(&o.trace).is_empty());
    assert_eq!(o.metrics.acquisitions, 0, "WAIT 1 answers 0: never held");
    assert!(o
        .trace
        .iter()
        .any(|l| matches!(&l.event, TraceEvent::Deliver { msg, .. } if msg == "(integer) 0")));
}

#[test]
fn replication_settings_that_would_misbehave_are_refused_naming_the_key() {
    let refused = |body: &str, says: &str| {
        let text = format!("recipe = \"redis-token\"\nclients = 2\n{body}");
        let e = Scenario::parse(&text, "r.toml", "r")
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{body}: {e}");
    };
    let key = "timing.replication_ms";
    refused(
        "replica = true\n[timing]\nreplication_ms = [60, 30]\n",
        "low 60 is above high 30",
    );
    refused("replica = true\n[timing]\nreplication_ms = [60, 30]\n", key);
    refused(
        "replica = true\n[timing]\nreplication_ms = [-1, 30]\n",
        "replication_ms",
    );
    refused(
        "replica = true\n[timing]\nreplication_ms = [1, 2, 3]\n",
        "replication_ms",
    );
    refused(
        "replica = true\n[timing]\nreplication_ms = [10, 200]\n",
        "below the 200 ms timeout",
    );
    refused(
        "[timing]\nreplication_ms = [1, 5]\n",
        "set `replica = true`",
    );
    refused(
        "[[schedule]]\nat_ms = 10\nkind = \"failover\"\nmaster = 0\n",
        "set `replica = true`",
    );
    refused(
        "replica = true\n[[schedule]]\nat_ms = 10\nkind = \"failover\"\nmaster = 1\n",
        "master must be 0",
    );
}
