//! Every shipped scenario's Chrome trace opens in Perfetto: one JSON object
//! of Trace Event Format events, each with its fields, and no two complete
//! ('X') slices of one track (pid, tid) overlapping without nesting, which
//! Perfetto drops.

use serde_json::Value;
use sim::chrome::{chrome_trace, cross};
use sim::engine::simulate;
use sim::html::TimelineData;
use sim::scenario::Scenario;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Every scenario file shipped in `scenarios/`, by name.
fn shipped() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn number(e: &Value, field: &str) -> u64 {
    e[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} is a whole number: {e}"))
}

/// Checks one trace's events; returns how many slices it has.
fn check_events(name: &str, v: &Value) -> usize {
    let events = v["traceEvents"].as_array().expect("traceEvents");
    let mut tracks: BTreeMap<(u64, u64), Vec<(u64, u64)>> = BTreeMap::new();
    let mut named = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().expect("every event has its phase");
        assert!(e["name"].is_string(), "{name}: a name: {e}");
        let pid = number(e, "pid");
        match ph {
            "M" => {
                if e["name"] == "thread_name" {
                    named.insert((pid, number(e, "tid")), e["args"]["name"].clone());
                }
            }
            "X" => {
                let (tid, ts, dur) = (number(e, "tid"), number(e, "ts"), number(e, "dur"));
                assert!(e["cat"].is_string(), "{name}: {e}");
                tracks.entry((pid, tid)).or_default().push((ts, ts + dur));
            }
            "i" => {
                number(e, "ts");
                match e["s"].as_str() {
                    Some("t") => {
                        number(e, "tid");
                    }
                    Some("g") => {}
                    other => panic!("{name}: an instant's scope is t or g, not {other:?}"),
                }
            }
            other => panic!("{name}: unexpected phase {other}"),
        }
    }
    let mut slices = 0;
    for (track, spans) in &tracks {
        assert!(
            named.contains_key(track),
            "{name}: track {track:?} is named"
        );
        slices += spans.len();
        for (i, &a) in spans.iter().enumerate() {
            for &b in &spans[i + 1..] {
                assert!(
                    !cross(a, b),
                    "{name}: on track {:?} {a:?} and {b:?} overlap without nesting",
                    named[track]
                );
            }
        }
    }
    slices
}

#[test]
fn every_shipped_scenario_exports_slices_that_nest_per_track() {
    let files = shipped();
    assert!(files.len() >= 19, "the shipped scenarios: {files:?}");
    let mut total = 0;
    for path in files {
        let s = Scenario::load(&path).unwrap();
        let o = simulate(&s, s.seed, true);
        let text = serde_json::to_string(&chrome_trace(&o.trace)).unwrap();
        let v: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["displayTimeUnit"], "ms");
        let slices = check_events(&s.name, &v);
        // Every interval the timeline draws is a slice, none left out.
        let d = TimelineData::from_trace("", &o.trace);
        assert_eq!(
            slices,
            d.holds.len() + d.overlaps.len() + d.faults.len(),
            "{}",
            s.name
        );
        total += slices;
    }
    assert!(total > 0, "the runs' holds are slices");
}

/// The rule itself: sharing time is allowed only nested; touching is not
/// sharing.
#[test]
fn crossing_is_overlap_without_nesting() {
    assert!(cross((0, 10), (5, 15)));
    assert!(cross((5, 15), (0, 10)));
    assert!(!cross((0, 10), (2, 8)));
    assert!(!cross((2, 8), (0, 10)));
    assert!(!cross((0, 10), (10, 20)));
    assert!(!cross((0, 10), (0, 10)));
}

/// The run: a hold and a partition of one client that cross each
/// other are on two tracks of that client.
#[test]
fn a_hold_and_a_partition_that_cross_go_on_separate_tracks() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/partition-past-session.toml");
    let s = Scenario::load(&path).unwrap();
    let o = simulate(&s, s.seed, true);
    let v = chrome_trace(&o.trace);
    let events = v["traceEvents"].as_array().unwrap();
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    let crossing = slices.iter().any(|h| {
        h["cat"] == "hold"
            && slices.iter().any(|f| {
                f["cat"] == "fault"
                    && f["name"] == "partition"
                    && cross(
                        (number(h, "ts"), number(h, "ts") + number(h, "dur")),
                        (number(f, "ts"), number(f, "ts") + number(f, "dur")),
                    )
            })
    });
    assert!(crossing, "the scenario's hold crosses its partition");
    let faults: Vec<u64> = slices
        .iter()
        .filter(|e| e["cat"] == "fault")
        .map(|e| number(e, "tid"))
        .collect();
    let holds: Vec<u64> = slices
        .iter()
        .filter(|e| e["cat"] == "hold")
        .map(|e| number(e, "tid"))
        .collect();
    assert!(faults.iter().all(|t| !holds.contains(t)));
}
