//! The trace is typed: every line a recorded run writes parses back to the
//! same event and re-serialises to the same bytes, and a malformed line is an
//! error naming it.

use sim::engine::simulate;
use sim::scenario::Scenario;
use sim::trace::{parse_lines, TraceEvent, TraceLine};

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
    assert!(err.starts_with("line 2:"), "{err}");
}
