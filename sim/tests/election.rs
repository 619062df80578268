//! The election scenarios over 1,000 seeds each: every known failure shows
//! where its source says, and never in its fixed twin (determinism: the
//! shipped scenarios' test in `simulator.rs`).

use sim::engine::simulate;
use sim::hunt::{hunt, HuntResult, SeedSet};
use sim::scenario::Scenario;
use std::path::PathBuf;

fn shipped(name: &str) -> Scenario {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
        .join(format!("{name}.toml"));
    Scenario::load(&path).unwrap()
}

fn hunt_1000(name: &str) -> HuntResult {
    hunt(&shipped(name), SeedSet::range(0, 1000), 2, &|_| {}).unwrap()
}

/// How many of the 1,000 seeds violated `property`.
fn count(r: &HuntResult, property: &str) -> usize {
    r.by_property.get(property).map_or(0, Vec::len)
}

/// Properties violated on any seed, sorted.
fn violated(r: &HuntResult) -> Vec<&str> {
    r.by_property.keys().map(String::as_str).collect()
}

#[test]
fn phantom_leader_shows_in_campaign_as_shipped_and_not_when_checked() {
    let shipped = hunt_1000("etcd-campaign-phantom-leader");
    assert!(
        count(&shipped, "elected_with_key") > 100,
        "{:?}",
        shipped.by_property
    );
    let checked = hunt_1000("etcd-campaign-phantom-leader-checked");
    assert_eq!(count(&checked, "elected_with_key"), 0);
    // Where the paused candidate was the leader, it is the GC pause: both
    // variants show it alike.
    assert_eq!(
        count(&shipped, "single_leader"),
        count(&checked, "single_leader")
    );
    assert!(cut_off_none(&shipped) && cut_off_none(&checked));
}

#[test]
fn curator_696_double_leader_and_its_fix() {
    let broken = hunt_1000("curator-reconnect-double-leader");
    assert!(
        count(&broken, "single_leader") > 100,
        "{:?}",
        broken.by_property
    );
    assert!(count(&broken, "elected_with_key") > 100);
    let fixed = hunt_1000("curator-reconnect-double-leader-fixed");
    assert_eq!(violated(&fixed), Vec::<&str>::new());
    assert!(cut_off_none(&broken) && cut_off_none(&fixed));
}

#[test]
fn election_gc_pause_breaks_single_leader_and_fencing_keeps_leader_exclusion() {
    let unfenced = hunt_1000("election-gc-pause");
    assert!(count(&unfenced, "single_leader") > 100);
    assert!(count(&unfenced, "leader_exclusion") > 100);
    let fenced = hunt_1000("election-gc-pause-fenced");
    assert_eq!(violated(&fenced), ["single_leader"]);
    assert_eq!(
        count(&fenced, "single_leader"),
        count(&unfenced, "single_leader"),
        "fencing changes what the resource accepts, not who believes it leads"
    );
}

fn cut_off_none(r: &HuntResult) -> bool {
    r.cut_off_seeds.is_empty()
}

#[test]
fn each_election_scenario_shows_its_expected_outcome_at_its_seed() {
    let at_seed = |name: &str| {
        let s = shipped(name);
        let mut p: Vec<&str> = simulate(&s, s.seed, false)
            .violations
            .iter()
            .map(|v| v.property.name())
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    assert_eq!(
        at_seed("etcd-campaign-phantom-leader"),
        ["elected_with_key"]
    );
    assert_eq!(
        at_seed("etcd-campaign-phantom-leader-checked"),
        Vec::<&str>::new()
    );
    assert_eq!(
        at_seed("curator-reconnect-double-leader"),
        ["elected_with_key", "single_leader"]
    );
    assert_eq!(
        at_seed("curator-reconnect-double-leader-fixed"),
        Vec::<&str>::new()
    );
    assert_eq!(
        at_seed("election-gc-pause"),
        ["leader_exclusion", "single_leader"]
    );
    assert_eq!(at_seed("election-gc-pause-fenced"), ["single_leader"]);
}
