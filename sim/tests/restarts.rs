//! A restarted client is a new process: the watches its predecessor set
//! died with the old connection, on either face.

use sim::engine::simulate;
use sim::scenario::Scenario;

/// The crash-storm scenario (clients crash and come back as new processes,
/// with fencing) on `recipe`.
fn storm(recipe: &str) -> Scenario {
    let toml = format!(
        "recipe = \"{recipe}\"\nclients = 5\nrounds = 8\nfencing = true\n\
         [timing]\nsession_timeout_ms = 1500\nthink_ms = [10, 100]\nhold_ms = [100, 400]\n\
         latency_ms = [0.2, 2.0]\n\
         [faults]\nuntil_ms = 10000\ncrash = {{ rate_per_s = 1.0, duration_ms = [200, 1500] }}\n"
    );
    Scenario::parse(&toml, "storm.toml", "storm").unwrap()
}

#[test]
fn a_restarted_etcd_client_hears_nothing_its_predecessor_watched() {
    // The predecessor's watch used to outlive its process: a release woke
    // the dead process's watch and the new one's at once, and herd_bound
    // fell on 716 of seeds 0..1000, reported by no client.
    let s = storm("etcd-revision");
    for seed in 0..150 {
        let o = simulate(&s, seed, false);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        assert!(
            o.faults.iter().any(|f| f.fired),
            "seed {seed}: no crash fired"
        );
    }
}

#[test]
fn a_restarted_zookeeper_client_hears_nothing_its_predecessor_watched() {
    let s = storm("fair-predecessor");
    for seed in 0..150 {
        let o = simulate(&s, seed, false);
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
    }
}
