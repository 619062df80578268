//! The semaphore and the shared lock in the simulator: a paused lease
//! holder makes `k + 1` holders, the shrinker keeps the roles valid, and a
//! shared lock's healthy runs keep writers alone while readers share.

use sim::engine::simulate;
use sim::hunt::{hunt, shrink, SeedSet};
use sim::scenario::Scenario;
use std::path::Path;

fn shipped(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    Scenario::load(&path).unwrap()
}

/// At the file's seed three clients hold two leases; over 200 seeds the
/// pauses that land on a holder while another waits do it again (11 of
/// them, pinned: the seeds are the run's only randomness).
#[test]
fn a_paused_lease_holder_makes_three_holders_of_two_leases() {
    let s = shipped("semaphore-gc-pause");
    assert_eq!(s.permits, 2);
    let o = simulate(&s, s.seed, false);
    let v = o
        .violations
        .iter()
        .find(|v| v.property.name() == "permits_bound")
        .expect("permits_bound violated at the file's seed");
    assert_eq!(v.clients, [0, 1, 2]);
    let r = hunt(&s, SeedSet::range(0, 200), 2, &|_| {}).unwrap();
    assert_eq!(r.by_property.get("permits_bound").map(Vec::len), Some(11));
    // Shrunk, it keeps more clients than permits.
    let small = shrink(&s, s.seed, None).expect("it shrinks");
    assert!(small.clients > 2, "{}", small.what_was_cut());
}

/// A shared lock without faults, at many seeds: no writer beside anyone,
/// and everyone finishes.
#[test]
fn a_healthy_shared_lock_keeps_writers_alone() {
    for variant in ["zk-docs", "curator", "kazoo"] {
        let text = format!(
            "recipe = \"zk-rwlock\"\nvariant = \"{variant}\"\nclients = 5\nwriters = 2\nrounds = 3\n\
             [timing]\nthink_ms = [0, 20]\nhold_ms = [5, 20]\nlatency_ms = [0.2, 2.0]\n"
        );
        let s = Scenario::parse(&text, "rw", "rw").unwrap();
        for seed in 0..100 {
            let o = simulate(&s, seed, false);
            assert!(
                o.violations.is_empty(),
                "{variant} seed {seed}: {:?}",
                o.violations
            );
        }
    }
}

/// A writer without the guid loses its create reply: its orphan blocks
/// everyone (the run ends with clients stuck); with the guid, everyone
/// finishes.
#[test]
fn a_writers_orphan_node_blocks_the_shared_lock_without_the_guid() {
    let s = shipped("rwlock-orphan-write");
    let violated: Vec<&str> = simulate(&s, s.seed, false)
        .violations
        .iter()
        .map(|v| v.property.name())
        .collect();
    assert_eq!(violated, ["progress"]);
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rwlock-orphan-write.toml"),
    )
    .unwrap()
    .replace("variant = \"no-guid\"", "variant = \"zk-docs\"")
    .replace("expect = [\"progress\"]", "expect = []");
    let with_guid = Scenario::parse(&text, "guid", "guid").unwrap();
    assert!(simulate(&with_guid, with_guid.seed, false)
        .violations
        .is_empty());
}
