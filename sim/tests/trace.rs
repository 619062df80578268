//! The trace is typed: every line a recorded run writes parses back to the
//! same event and re-serialises to the same bytes, and a malformed line is an
//! error naming it.

use sim::engine::simulate;
use sim::scenario::Scenario;
use sim::trace::{hash, parse_lines, parse_trace, TraceEvent, TraceLine};

fn shipped(name: &str) -> Scenario {
    let path = format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    Scenario::load(std::path::Path::new(&path)).unwrap()
}

#[test]
fn every_trace_line_round_trips_byte_for_byte() {
    for name in [
        "gc-pause-split-brain",
        "crash-storm",
        "orphan-create",
        "etcd-lease-pause",
    ] {
        let s = shipped(name);
        let o = simulate(&s, s.seed, true);
        assert!(o.trace.len() > 10, "{name}");
        let text: String = o.trace.iter().map(|l| l.to_json() + "\n").collect();
        let parsed = parse_lines(&text).unwrap();
        assert_eq!(parsed, o.trace, "{name}");
        for (line, back) in text.lines().zip(&parsed) {
            assert_eq!(back.to_json(), line, "{name}");
        }
        assert!(
            matches!(o.trace[0].event, TraceEvent::Start { .. }),
            "{name}"
        );
        assert!(
            matches!(o.trace.last().unwrap().event, TraceEvent::End { .. }),
            "{name}"
        );
    }
}

#[test]
fn violations_and_faults_are_typed_events() {
    let s = shipped("gc-pause-split-brain");
    let o = simulate(&s, s.seed, true);
    let traced: Vec<_> = o
        .trace
        .iter()
        .filter_map(|l| match &l.event {
            TraceEvent::Violation { property, clients } => Some((l.t, *property, clients.clone())),
            _ => None,
        })
        .collect();
    let reported: Vec<_> = o
        .violations
        .iter()
        .map(|v| (v.at_us, v.property, v.clients.clone()))
        .collect();
    assert_eq!(traced, reported);
    assert!(o
        .trace
        .iter()
        .any(|l| matches!(l.event, TraceEvent::Fault { .. })));
}

#[test]
fn a_malformed_line_is_an_error_that_names_it() {
    let good = TraceLine {
        t: 5,
        event: TraceEvent::Release { client: 1 },
    }
    .to_json();
    let text = format!("{good}\n{{\"t\":7,\"event\":\"hold\"}}\n");
    let err = parse_lines(&text).unwrap_err();
    assert!(err.starts_with("line 2: not a trace event"), "{err}");
    assert!(err.contains("missing field `client`"), "{err}");
    // serde_json's own "at line 1" would contradict the line named.
    assert!(!err.contains("at line"), "{err}");

    let text = format!("{good}\n\n{{\"t\":8,\"event\":\"teleport\",\"client\":0}}\n");
    let err = parse_lines(&text).unwrap_err();
    assert!(err.starts_with("line 3:"), "{err}");
    assert!(err.contains("unknown variant `teleport`"), "{err}");

    let err = parse_lines("{\"t\":-1,\"event\":\"release\",\"client\":0}").unwrap_err();
    assert!(err.starts_with("line 1:"), "{err}");

    assert!(parse_lines("").is_err());
    assert!(parse_lines("\n  \n").is_err());
}

#[test]
fn the_trace_hash_is_fnv1a_over_the_json_lines_file() {
    for name in ["gc-pause-split-brain", "partition-past-session"] {
        let s = shipped(name);
        let o = simulate(&s, s.seed, true);
        let text: String = o.trace.iter().map(|l| l.to_json() + "\n").collect();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(o.trace_hash, Some(format!("{h:016x}")), "{name}");
        assert_eq!(o.trace_hash, Some(hash(&o.trace)), "{name}");
        // Same scenario and seed: the same bytes, not only equal events.
        let again: String = simulate(&s, s.seed, true)
            .trace
            .iter()
            .map(|l| l.to_json() + "\n")
            .collect();
        assert_eq!(text, again, "{name}");
        // Not recording builds no trace and no hash.
        let quiet = simulate(&s, s.seed, false);
        assert!(
            quiet.trace.is_empty() && quiet.trace_hash.is_none(),
            "{name}"
        );
    }
}

#[test]
fn lines_keep_their_json_field_names() {
    let line = |event| TraceLine { t: 42, event }.to_json();
    assert_eq!(
        line(TraceEvent::Hold {
            client: 1,
            token: 6
        }),
        r#"{"t":42,"event":"hold","client":1,"token":6}"#
    );
    assert_eq!(
        line(TraceEvent::Violation {
            property: models::properties::PropertyName::MutualExclusion,
            clients: vec![0, 2],
        }),
        r#"{"t":42,"event":"violation","property":"mutual_exclusion","clients":[0,2]}"#
    );
    assert_eq!(
        line(TraceEvent::Fault {
            fault: sim::scenario::FaultKind::LostReply,
            client: 0,
            duration_us: None,
            what: Some("connected".into()),
        }),
        r#"{"t":42,"event":"fault","fault":"lost_reply","client":0,"what":"connected"}"#
    );
    assert_eq!(
        line(TraceEvent::DelayEnd { client: 3 }),
        r#"{"t":42,"event":"delay_end","client":3}"#
    );
}

#[test]
fn the_readable_form_is_the_timeline_line() {
    let v = TraceLine {
        t: 5_336_045,
        event: TraceEvent::Violation {
            property: models::properties::PropertyName::MutualExclusion,
            clients: vec![0, 2],
        },
    };
    assert_eq!(
        v.to_string(),
        "      5.336045 s  VIOLATION mutual_exclusion by clients [0,2]"
    );
}

/// A trace file is one run's story: every recorded run's trace is read
/// back, and a file that could not come from one run is refused, naming
/// what is wrong.
#[test]
fn a_trace_that_is_no_single_run_is_refused() {
    let s = shipped("gc-pause-split-brain");
    let o = simulate(&s, s.seed, true);
    let text =
        |lines: &[TraceLine]| -> String { lines.iter().map(|l| l.to_json() + "\n").collect() };
    assert_eq!(parse_trace(&text(&o.trace)).unwrap(), o.trace);

    let edited = |edit: &dyn Fn(&mut Vec<TraceLine>)| {
        let mut lines = o.trace.clone();
        edit(&mut lines);
        parse_trace(&text(&lines)).unwrap_err()
    };
    let err = edited(&|l| {
        if let TraceEvent::Start { clients, .. } = &mut l[0].event {
            *clients = 0;
        }
    });
    assert!(err.contains("0 clients"), "{err}");
    // A client beyond the count: the first event naming a client names 99.
    let err = edited(&|l| {
        let i = l
            .iter()
            .position(|x| x.event.clients().next().is_some())
            .unwrap();
        l[i].event = TraceEvent::Release { client: 99 };
    });
    assert!(
        err.contains("client 99, but the `start` line says 3 clients"),
        "{err}"
    );
    let err = edited(&|l| {
        let last = l.len() - 2;
        l[last].t = 0;
    });
    assert!(err.contains("time goes back"), "{err}");
    let err = edited(&|l| {
        let again = l.clone();
        l.extend(again);
    });
    assert!(err.contains("more line(s) follow it"), "{err}");
    // One line after the `end`: said so, not "cut short".
    let err = edited(&|l| {
        let extra = l[1].clone();
        l.push(TraceLine {
            t: l.last().unwrap().t,
            ..extra
        });
    });
    assert!(
        err.contains("is the `end` line, and 1 more line(s) follow it"),
        "{err}"
    );
    let err = edited(&|l| {
        let start = TraceLine {
            t: l[1].t,
            ..l[0].clone()
        };
        l.insert(2, start);
    });
    assert!(err.contains("a second `start` line"), "{err}");

    // The run's Chrome trace is another format, and is said to be.
    let chrome = serde_json::to_string(&sim::chrome::chrome_trace(&o.trace)).unwrap();
    let err = parse_trace(&chrome).unwrap_err();
    assert!(err.starts_with("a Chrome trace"), "{err}");
}
