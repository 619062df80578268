//! What a run looks like: the static timeline draws what differs between
//! runs (a refused write, a violation), and the interactive page's data
//! speaks each application's words and marks what went wrong on the lanes
//! of the clients concerned.

use sim::engine::simulate;
use sim::html::{MarkKind, TimelineData};
use sim::scenario::Scenario;
use sim::timeline::timeline_from_trace;
use sim::trace::TraceLine;

fn run(name: &str) -> Vec<TraceLine> {
    let path = format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let s = Scenario::load(std::path::Path::new(&path)).unwrap();
    simulate(&s, s.seed, true).trace
}

/// The static timeline of a scenario's run, titled the same for every run.
fn svg(name: &str) -> String {
    reports::timeline::timeline_svg(&timeline_from_trace("t", &run(name))).unwrap()
}

/// The text of every `<text>` element of an SVG.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

#[test]
fn the_fenced_and_unfenced_gc_pause_pictures_differ_where_the_runs_do() {
    let (plain, fenced) = (
        svg("gc-pause-split-brain"),
        svg("gc-pause-split-brain-fenced"),
    );
    assert_ne!(plain, fenced, "same title, different pictures");
    let refused = |svg: &str| texts(svg).iter().filter(|t| *t == "✗").count();
    // The stale write of the paused holder is refused only with fencing.
    assert!(refused(&fenced) >= 1, "a refused write is drawn");
    assert_eq!(refused(&plain), 0);
    let accepted = |svg: &str| texts(svg).iter().filter(|t| *t == "✓").count();
    assert!(accepted(&plain) > accepted(&fenced));
    assert!(texts(&fenced)
        .iter()
        .any(|t| t == "write refused (stale token)"));
    // Only the unfenced stale write breaks the resource's order.
    let named = |svg: &str, p: &str| texts(svg).iter().any(|t| *t == format!("✗ {p}"));
    assert!(named(&plain, "resource_exclusion"));
    assert!(!named(&fenced, "resource_exclusion"));
    // Both violate a property, each marked with its name.
    for svg in [&plain, &fenced] {
        assert!(
            texts(svg).iter().any(|t| t.starts_with("✗ ")),
            "a violation mark"
        );
    }
}

#[test]
fn the_phantom_leaders_picture_shows_its_violation_in_election_words() {
    let labels = texts(&svg("etcd-campaign-phantom-leader"));
    assert!(
        labels.iter().any(|t| t == "✗ elected_with_key"),
        "{labels:?}"
    );
    assert!(labels.iter().any(|t| t == "leads (term N)"), "{labels:?}");
    // Its fixed twin elects no phantom.
    let checked = texts(&svg("etcd-campaign-phantom-leader-checked"));
    assert!(!checked.iter().any(|t| t == "✗ elected_with_key"));
}

#[test]
fn violations_are_marked_on_the_lanes_of_the_clients_they_name() {
    let d = TimelineData::from_trace("t", &run("etcd-campaign-phantom-leader"));
    let marks: Vec<_> = d
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Violation)
        .collect();
    // The phantom leader is client 1, and the trace names it alone.
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert_eq!(marks[0].lane, d.lane_of.get(&1).copied());
    assert_eq!(marks[0].label, "elected_with_key");
    assert!(d.holds.iter().all(|h| h.label.starts_with("term ")));
    assert!(
        d.holds[0].text.contains(" leads (term "),
        "{}",
        d.holds[0].text
    );
}

#[test]
fn a_queues_timeline_has_its_producers_enqueues_and_its_duplicate() {
    let d = TimelineData::from_trace("t", &run("queue-consumer-crash"));
    // Two producers (the first clients), four rounds each: items 1–8.
    assert_eq!(d.lanes[0], "client 0 (producer)");
    assert_eq!(d.lanes[1], "client 1 (producer)");
    assert_eq!(d.lanes[2], "client 2");
    let enqueued: Vec<(usize, &str)> = d
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Enqueue)
        .map(|m| (m.lane.unwrap(), m.label.as_str()))
        .collect();
    for item in 1..=8 {
        let lane = if item <= 4 { 0 } else { 1 };
        assert!(
            enqueued.contains(&(lane, &format!("item {item}"))),
            "item {item}: {enqueued:?}"
        );
    }
    assert!(
        d.holds.iter().all(|h| h.lane >= 2),
        "producers take nothing"
    );
    // Item 1 is taken twice (its first consumer crashed): the second take
    // is marked, and the violation is on both consumers' lanes.
    let again: Vec<_> = d.holds.iter().filter(|h| h.duplicate).collect();
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].label, "item 1 again");
    let first = d.holds.iter().find(|h| h.label == "item 1").unwrap();
    assert!(first.from_us < again[0].from_us);
    let lanes: Vec<Option<usize>> = d
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Violation)
        .map(|m| m.lane)
        .collect();
    assert_eq!(lanes, vec![Some(2), Some(3)]);
}

#[test]
fn a_lock_has_no_producers_and_its_holds_are_tokens() {
    let d = TimelineData::from_trace("t", &run("gc-pause-split-brain"));
    assert!(d.lanes.iter().all(|l| !l.contains("producer")));
    assert!(!d.marks.iter().any(|m| m.kind == MarkKind::Enqueue));
    assert!(d
        .holds
        .iter()
        .all(|h| h.label.starts_with("token ") && !h.duplicate));
    assert_eq!(d.holds_key, "holds the lock (token N)");
}

/// The page is the same bytes for the same run.
#[test]
fn the_page_is_deterministic() {
    let lines = run("queue-consumer-crash");
    assert_eq!(
        sim::html::timeline_page("t", &lines),
        sim::html::timeline_page("t", &lines)
    );
}
