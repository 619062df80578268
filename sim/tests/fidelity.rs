//! Variants named after the client code they model, over 1,000 seeds:
//! etcd #11456 in 3.4's Mutex and not in 3.5's.

use sim::hunt::{hunt, HuntResult, SeedSet};
use sim::scenario::Scenario;
use std::path::PathBuf;

fn hunt_1000(name: &str) -> HuntResult {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
        .join(format!("{name}.toml"));
    hunt(
        &Scenario::load(&path).unwrap(),
        SeedSet::range(0, 1000),
        2,
        &|_| {},
    )
    .unwrap()
}

fn seeds<'a>(r: &'a HuntResult, property: &str) -> &'a [u64] {
    r.by_property.get(property).map_or(&[], Vec::as_slice)
}

#[test]
fn etcd_11456_in_the_3_4_mutex_and_not_in_3_5() {
    let v34 = hunt_1000("etcd-mutex-11456");
    let v35 = hunt_1000("etcd-mutex-11456-fixed");
    assert!(
        seeds(&v34, "holder_owns_key").len() > 300,
        "{:?}",
        v34.by_property
    );
    assert!(seeds(&v35, "holder_owns_key").is_empty());
    // 3.5 breaks mutual exclusion only where the stalled client held the
    // lock (a GC pause); 3.4 also where it was waiting.
    let gc_pause = seeds(&v35, "mutual_exclusion");
    assert!(gc_pause
        .iter()
        .all(|s| seeds(&v34, "mutual_exclusion").contains(s)));
    assert!(seeds(&v34, "mutual_exclusion").len() > gc_pause.len() + 100);
    // A seed where 3.4 takes the lock without a key beside a real holder.
    let at_3 = |r: &HuntResult, p: &str| seeds(r, p).contains(&3);
    assert!(at_3(&v34, "holder_owns_key") && at_3(&v34, "mutual_exclusion"));
    assert!(!at_3(&v35, "holder_owns_key") && !at_3(&v35, "mutual_exclusion"));
}

/// Curator and kazoo watch the predecessor with getData, the recipe text
/// with exists; everything else about the queue is the same.
#[test]
fn curator_and_kazoo_watch_the_predecessor_with_get_data() {
    for (variant, watch) in [
        ("fair-predecessor", "exists_watch"),
        ("fair-predecessor:zk-docs", "exists_watch"),
        ("fair-predecessor:curator", "get_data_watch"),
        ("fair-predecessor:kazoo", "get_data_watch"),
    ] {
        let recipe = models::recipes::parse(variant).unwrap();
        let row = sim::herd::row(&sim::herd::baseline(&recipe, 5, 1), 1);
        assert_eq!(row.store_requests.get(watch), Some(&0.8), "{variant}");
        let other = if watch == "exists_watch" {
            "get_data_watch"
        } else {
            "exists_watch"
        };
        assert_eq!(row.store_requests.get(other), None, "{variant}");
        assert_eq!(row.notifications_per_release, [1, 1, 1, 1, 0], "{variant}");
    }
}

/// kazoo's Lock after a pause past its session: an `oblivious` holder
/// believes until its hold ends, a `naive` one drops its belief when told.
#[test]
fn an_oblivious_holder_outlasts_the_naive_one() {
    use sim::engine::simulate;
    use sim::trace::TraceEvent;
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
        .join("kazoo-oblivious-pause.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let stale_release = |policy: &str| {
        let s = Scenario::parse(
            &text.replace("policy = \"oblivious\"", &format!("policy = \"{policy}\"")),
            "kazoo-oblivious-pause.toml",
            "kazoo-oblivious-pause",
        )
        .unwrap();
        let o = simulate(&s, s.seed, true);
        let released = o
            .trace
            .iter()
            .find(|l| matches!(l.event, TraceEvent::Release { client: 0 }))
            .map(|l| l.t)
            .unwrap();
        let mut violated: Vec<&str> = o.violations.iter().map(|v| v.property.name()).collect();
        violated.dedup();
        (released, violated)
    };
    let (oblivious_until, oblivious) = stale_release("oblivious");
    let (naive_until, naive) = stale_release("naive");
    // The pause ends at 6.15 s: naive drops its belief there, oblivious
    // holds on to the end of its hold (10.1 s).
    assert_eq!(naive_until, 6_150_000);
    assert!(oblivious_until > 10_000_000, "{oblivious_until}");
    assert_eq!(naive, ["mutual_exclusion"]);
    assert_eq!(oblivious, ["mutual_exclusion", "resource_exclusion"]);
}

/// ZooKeeper's connection states with the real timing: a partition of the
/// holder shorter than its read timeout (2/3 of the 4 s session timeout)
/// goes unnoticed; one past the read timeout makes it SUSPENDED at 2.67 s
/// and RECONNECTED (the same session) when it heals; one past the session
/// timeout ends LOST, then a new session connects.
#[test]
fn a_partition_suspends_reconnects_or_loses_the_session_as_zookeeper_clients_do() {
    use models::client::Connection;
    use sim::engine::simulate;
    use sim::trace::TraceEvent;
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
        .join("kazoo-oblivious-pause.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let states = |policy: &str, cut_ms: u64| {
        let text = text
            .replace("policy = \"oblivious\"", &format!("policy = \"{policy}\""))
            .replace("kind = \"pause\"", "kind = \"partition\"")
            .replace("duration_ms = 6000", &format!("duration_ms = {cut_ms}"));
        let s = Scenario::parse(&text, "cut.toml", "cut").unwrap();
        let o = simulate(&s, s.seed, true);
        // The read timeout runs from the last word before the cut (150 ms).
        let heard = o
            .trace
            .iter()
            .filter(|l| l.t < 150_000)
            .filter_map(|l| match l.event {
                TraceEvent::Deliver {
                    from: sim::trace::Party::Store,
                    to: sim::trace::Party::Client(0),
                    ..
                } => Some(l.t),
                _ => None,
            })
            .next_back()
            .unwrap();
        let seen: Vec<(u64, Connection)> = o
            .trace
            .iter()
            .filter_map(|l| match l.event {
                TraceEvent::Connection { client: 0, state } => Some((l.t, state)),
                _ => None,
            })
            .collect();
        (seen, heard + 2_666_666, o.violations.is_empty())
    };
    use Connection::{Connected, Lost, Suspended};
    let (short, _, safe) = states("naive", 2000);
    assert_eq!(short, [], "a 2 s cut is within the read timeout");
    assert!(safe);
    let (past_read, drops, safe) = states("naive", 3500);
    assert!(drops > 2_700_000 && drops < 2_816_667, "{drops}");
    assert_eq!(past_read, [(drops, Suspended), (3_650_000, Connected)]);
    assert!(safe, "the session outlived the cut");
    let (past_session, drops, _) = states("naive", 6000);
    let kinds: Vec<Connection> = past_session.iter().map(|&(_, c)| c).collect();
    assert_eq!(kinds, [Suspended, Lost, Connected]);
    assert_eq!(past_session[0].0, drops);
    assert!(past_session[1].0 >= 6_150_000, "told on reconnect");
    // A suspend-aware holder gives the lock up at SUSPENDED: nobody else
    // holds before it, so the expiry costs no exclusion.
    let (aware, drops, safe) = states("suspend-aware", 6000);
    assert_eq!(aware.first(), Some(&(drops, Suspended)));
    assert!(safe);
}

/// A ZooKeeper client paused past its read timeout drops its connection on
/// resume before reading what came meanwhile (measured with the Java
/// client: the watch event sent during the pause came again after the
/// reconnect). At seed 115 of `gc-pause-split-brain` client 1 is paused
/// with a `getChildren` in flight; the reply from before its session
/// expired is lost with the connection, so it never acts on it: it hears
/// LOST instead. etcd's gRPC connection survives a pause: no connection
/// change at the resume.
#[test]
fn a_zookeeper_client_resumed_past_its_read_timeout_reconnects_before_reading() {
    use models::client::Connection;
    use sim::engine::simulate;
    use sim::trace::TraceEvent;
    let scenario = |name: &str| {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
            .join(format!("{name}.toml"));
        Scenario::load(&path).unwrap()
    };
    let s = scenario("gc-pause-split-brain");
    let o = simulate(&s, 115, true);
    let resumed = o
        .trace
        .iter()
        .position(|l| matches!(l.event, TraceEvent::Resume { client: 1 }))
        .unwrap();
    let after: Vec<&TraceEvent> = o.trace[resumed + 1..].iter().map(|l| &l.event).collect();
    assert!(matches!(
        after[0],
        TraceEvent::Connection {
            client: 1,
            state: Connection::Suspended
        }
    ));
    let lost = after
        .iter()
        .position(|e| {
            matches!(
                e,
                TraceEvent::Connection {
                    client: 1,
                    state: Connection::Lost
                }
            )
        })
        .unwrap();
    assert!(
        !after[..lost]
            .iter()
            .any(|e| matches!(e, TraceEvent::Hold { client: 1, .. })),
        "client 1 acted on a reply from before its pause"
    );
    assert!(o.violations.is_empty(), "{:?}", o.violations);

    let etcd = scenario("etcd-lease-pause");
    let o = simulate(&etcd, etcd.seed, true);
    assert!(o
        .trace
        .iter()
        .any(|l| matches!(l.event, TraceEvent::Resume { .. })));
    // It learns of its lease from the answer to what it sends (LOST), and
    // is never SUSPENDED.
    let states: Vec<Connection> = o
        .trace
        .iter()
        .filter_map(|l| match l.event {
            TraceEvent::Connection { state, .. } => Some(state),
            _ => None,
        })
        .collect();
    assert_eq!(states, [Connection::Lost, Connection::Connected]);
}

/// Connection changes with the faults that cause them, from the kazoo pause
/// scenario with its fault schedule replaced (`schedule` holds TOML
/// `[[schedule]]` entries); client 0's changes, in order, with times.
fn connection_changes(policy: &str, schedule: &str) -> Vec<(u64, models::client::Connection)> {
    connection_changes_with(policy, schedule, "latency_ms = [0.1, 0.5]")
}

fn connection_changes_with(
    policy: &str,
    schedule: &str,
    latency: &str,
) -> Vec<(u64, models::client::Connection)> {
    use sim::engine::simulate;
    use sim::trace::TraceEvent;
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
        .join("kazoo-oblivious-pause.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let head = &text[..text.find("[[schedule]]").unwrap()];
    let text = format!("{head}{schedule}")
        .replace("policy = \"oblivious\"", &format!("policy = \"{policy}\""))
        .replace(
            "expect = [\"mutual_exclusion\", \"resource_exclusion\"]",
            "",
        )
        .replace("latency_ms = [0.1, 0.5]", latency);
    let s = Scenario::parse(&text, "faults.toml", "faults").unwrap();
    let o = simulate(&s, s.seed, true);
    o.trace
        .iter()
        .filter_map(|l| match l.event {
            TraceEvent::Connection { client: 0, state } => Some((l.t, state)),
            _ => None,
        })
        .collect()
}

fn fault(kind: &str, at_ms: u64, duration_ms: u64) -> String {
    format!(
        "[[schedule]]\nat_ms = {at_ms}\nkind = \"{kind}\"\nclient = 0\nduration_ms = {duration_ms}\n\n"
    )
}

/// A pause past the read timeout (2.67 s of a 4 s session) that the session
/// outlives: SUSPENDED and RECONNECTED at the resume, both traced.
#[test]
fn a_pause_past_the_read_timeout_is_suspended_then_reconnected() {
    use models::client::Connection::{Connected, Suspended};
    let seen = connection_changes("naive", &fault("pause", 150, 3500));
    assert_eq!(seen, [(3_650_000, Suspended), (3_650_000, Connected)]);
    // Within the read timeout, nothing.
    assert_eq!(connection_changes("naive", &fault("pause", 150, 2000)), []);
}

/// A pause inside a partition: the client notices the silence when it
/// resumes (past its read timeout) and reconnects only when the cut heals.
#[test]
fn a_client_resumed_on_a_cut_link_reconnects_at_the_heal() {
    use models::client::Connection::{Connected, Lost, Suspended};
    let schedule = fault("partition", 150, 5000) + &fault("pause", 300, 2600);
    let seen = connection_changes("naive", &schedule);
    let kinds: Vec<_> = seen.iter().map(|&(_, c)| c).collect();
    assert_eq!(kinds, [Suspended, Lost, Connected], "{seen:?}");
    assert_eq!(seen[0].0, 2_900_000, "noticed at the resume");
    assert!(seen[1].0 >= 5_150_000, "told at the heal: {seen:?}");
}

/// A restarted process's read timeout runs from its start, not from what
/// the crashed one last heard: a short cut right after the restart, before
/// the store's first answer (2–3 ms each way here), goes unnoticed.
#[test]
fn a_restarted_client_does_not_inherit_the_old_processs_silence() {
    let schedule = fault("crash", 100, 3000) + &fault("partition", 3101, 500);
    let latency = "latency_ms = [2.0, 3.0]";
    assert_eq!(connection_changes_with("naive", &schedule, latency), []);
}
