//! The synchronizing barrier in the simulator: the member that completes
//! the group crashes after entering and before creating /start, and the
//! others wait forever.

use sim::engine::simulate;
use sim::scenario::Scenario;
use sim::trace::{Party, TraceEvent};
use std::path::PathBuf;

#[test]
fn the_last_entrant_crashing_before_start_leaves_everyone_waiting() {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
        .join("barrier-last-entrant-crash.toml");
    let s = Scenario::load(&path).unwrap();
    let o = simulate(&s, s.seed, true);
    let violated: Vec<&str> = o.violations.iter().map(|v| v.property.name()).collect();
    assert_eq!(violated, ["all_pass"]);
    let crashed_at = o
        .trace
        .iter()
        .find(|l| matches!(l.event, TraceEvent::Fault { client: 1, .. }))
        .map(|l| l.t)
        .unwrap();
    let to_store = |client: u16, what: &str| {
        o.trace.iter().any(|l| {
            matches!(&l.event, TraceEvent::Deliver { from: Party::Client(c), to: Party::Store, msg, .. }
                if *c == client && msg.starts_with(what))
                && l.t < crashed_at
        })
    };
    // It had entered (its member node's create reached the store) …
    assert!(to_store(1, "create(/lock/_c_0001"));
    // … and nobody created /lock/ready; nobody passed.
    assert!(!o.trace.iter().any(|l| matches!(&l.event,
        TraceEvent::Deliver { msg, .. } if msg.starts_with("create(/lock/ready"))));
    assert!(!o
        .trace
        .iter()
        .any(|l| matches!(l.event, TraceEvent::Hold { .. })));
}
