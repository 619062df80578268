//! Holders timelines from traces: a lane per client of the run and no
//! more, overlaps exactly where two holds share time, faults for as long
//! as they last.

use models::client::Connection;
use models::ids::SessionId;
use sim::engine::simulate;
use sim::scenario::{FaultKind, Scenario};
use sim::timeline::timeline_from_trace;
use sim::trace::{TraceEvent, TraceLine};

fn at(t: u64, event: TraceEvent) -> TraceLine {
    TraceLine { t, event }
}

fn start(clients: u16) -> TraceLine {
    at(
        0,
        TraceEvent::Start {
            scenario: "t".into(),
            seed: 1,
            recipe: "fair-predecessor".into(),
            clients,
            rounds: 1,
            fencing: false,
            policy: "naive".into(),
        },
    )
}

fn end(t: u64) -> TraceLine {
    at(
        t,
        TraceEvent::End {
            acquisitions: 2,
            violations: 1,
        },
    )
}

#[test]
fn overlap_is_exactly_the_shared_time_and_lanes_are_the_runs_clients() {
    let lines = vec![
        start(3),
        at(
            1_000_000,
            TraceEvent::Hold {
                client: 0,
                token: 1,
            },
        ),
        at(
            1_500_000,
            TraceEvent::Fault {
                fault: FaultKind::Pause,
                client: 0,
                duration_us: Some(2_000_000),
                what: None,
            },
        ),
        at(
            2_000_000,
            TraceEvent::Connection {
                client: 0,
                state: Connection::Suspended,
            },
        ),
        at(
            2_900_000,
            TraceEvent::Expire {
                session: SessionId {
                    client: 0,
                    incarnation: 0,
                    grant: 0,
                },
                client: 0,
            },
        ),
        at(
            3_000_000,
            TraceEvent::Hold {
                client: 1,
                token: 2,
            },
        ),
        at(3_500_000, TraceEvent::Resume { client: 0 }),
        at(4_000_000, TraceEvent::Release { client: 0 }),
        at(
            4_500_000,
            TraceEvent::Fault {
                fault: FaultKind::Crash,
                client: 2,
                duration_us: None,
                what: None,
            },
        ),
        at(6_000_000, TraceEvent::Release { client: 1 }),
        end(7_000_000),
    ];
    let t = timeline_from_trace("t", &lines);
    assert_eq!(t.lanes.len(), 3, "one lane per client of the run");
    assert_eq!(
        t.lanes.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["client 0", "client 1", "client 2"]
    );
    assert_eq!(t.end_us, 7_000_000);
    let (c0, c1, c2) = (&t.lanes[0], &t.lanes[1], &t.lanes[2]);
    assert_eq!(c0.holds, vec![(1_000_000, 4_000_000)]);
    assert_eq!(c1.holds, vec![(3_000_000, 6_000_000)]);
    // [max start, min end], and nothing of the rest of either hold.
    assert_eq!(c0.overlaps, vec![(3_000_000, 4_000_000)]);
    assert_eq!(c1.overlaps, vec![(3_000_000, 4_000_000)]);
    assert!(c2.overlaps.is_empty() && c2.holds.is_empty());
    // The pause for its duration, the crash where it fired.
    assert_eq!(c0.spans, vec![(1_500_000, 3_500_000, "pause".to_string())]);
    assert_eq!(c2.faults, vec![(4_500_000, "crash".to_string())]);
    assert_eq!(c0.expiries, vec![2_900_000]);
    assert_eq!(c0.states, vec![(2_000_000, "SUSPENDED".to_string())]);
}

#[test]
fn a_small_run_has_no_empty_lane_beyond_its_clients() {
    let lines = vec![
        start(2),
        at(
            1_000,
            TraceEvent::Hold {
                client: 1,
                token: 1,
            },
        ),
        end(2_000),
    ];
    let t = timeline_from_trace("t", &lines);
    assert_eq!(t.lanes.len(), 2);
    // A hold still open at the end of the trace ends there.
    assert_eq!(t.lanes[1].holds, vec![(1_000, 2_000)]);
}

/// partition-past-session, the example: red only where two
/// clients really held at once, each overlap bounded by a hold of its lane
/// and one of another lane, the holds themselves untouched.
#[test]
fn a_real_split_brain_is_red_only_while_both_hold() {
    let path = format!(
        "{}/../scenarios/partition-past-session.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = Scenario::load(std::path::Path::new(&path)).unwrap();
    let o = simulate(&s, s.seed, true);
    let t = timeline_from_trace("t", &o.trace);
    assert_eq!(t.lanes.len(), s.clients as usize);
    let mut any = false;
    for (i, lane) in t.lanes.iter().enumerate() {
        for &(a, b) in &lane.overlaps {
            any = true;
            assert!(a < b);
            let mine = lane.holds.iter().find(|h| h.0 <= a && b <= h.1);
            let theirs = t
                .lanes
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, l)| l.holds.iter())
                .find(|h| h.0 <= a && b <= h.1);
            let (mine, theirs) = (mine.expect("inside a hold"), theirs.expect("shared"));
            assert_eq!(
                (a, b),
                (mine.0.max(theirs.0), mine.1.min(theirs.1)),
                "exactly [max start, min end]"
            );
            // Shorter than the hold: only the shared part is red.
            assert!(b - a < mine.1 - mine.0 || (a, b) == *mine);
        }
    }
    assert!(any, "the scenario's split brain shows");
    // The run: far less red than the whole holds.
    let red: u64 = t
        .lanes
        .iter()
        .flat_map(|l| &l.overlaps)
        .map(|(a, b)| b - a)
        .sum();
    let held: u64 = t
        .lanes
        .iter()
        .flat_map(|l| &l.holds)
        .filter(|h| {
            t.lanes
                .iter()
                .flat_map(|l| &l.overlaps)
                .any(|o| h.0 <= o.0 && o.1 <= h.1)
        })
        .map(|(a, b)| b - a)
        .sum();
    assert!(red * 4 < held, "red {red} µs of {held} µs held");
}

/// A barrier's members pass together and a queue's consumers process at
/// once by design: their timelines mark no overlap, a lock's does.
#[test]
fn holds_at_once_are_overlaps_only_where_holding_is_exclusive() {
    let two_at_once = |recipe: &str| {
        let mut lines = vec![start(2)];
        if let TraceEvent::Start { recipe: r, .. } = &mut lines[0].event {
            *r = recipe.to_string();
        }
        lines.push(at(
            10,
            TraceEvent::Hold {
                client: 0,
                token: 1,
            },
        ));
        lines.push(at(
            20,
            TraceEvent::Hold {
                client: 1,
                token: 2,
            },
        ));
        lines.push(at(30, TraceEvent::Release { client: 0 }));
        lines.push(at(40, TraceEvent::Release { client: 1 }));
        let t = timeline_from_trace("t", &lines);
        t.lanes.iter().map(|l| l.overlaps.len()).sum::<usize>()
    };
    assert_eq!(two_at_once("fair-predecessor"), 2);
    assert_eq!(two_at_once("zk-double-barrier"), 0);
    assert_eq!(two_at_once("zk-fifo-queue (lock-safe)"), 0);
}
