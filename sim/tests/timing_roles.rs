//! Issue 47, item 1: the scenario check bounds the timing of every client
//! of every role, not client 0's alone. Each client heartbeats every ping
//! interval in every phase until it is done (sessions and leases are
//! renewed through holds, so a hold cannot outlast a session without a
//! fault); what the check must refuse is a run whose heartbeats alone pass
//! the simulator's event cap before it can end — a queue consumer's long
//! hold used to run for 427 s of CPU and 2·10⁹ events to say "no verdict".

use sim::scenario::{Scenario, ScenarioError};

fn parse(toml: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(toml, "inline.toml", "inline")
}

/// A 3 ms session pings every millisecond: three events a client per
/// millisecond it is busy.
fn scenario(head: &str, timing: &str) -> String {
    format!("{head}[timing]\nsession_timeout_ms = 3\nlatency_ms = [0, 0]\n{timing}")
}

#[test]
fn a_queue_consumers_hold_is_bounded() {
    // Client 0 produces, and producing is quick; the consumer processes
    // the one item for 10⁶ s: 3·10⁹ heartbeat events.
    let head = "recipe = \"zk-fifo-queue\"\nclients = 2\nproducers = 1\n";
    let long = scenario(head, "hold_ms = [1000000000, 1000000000]\n");
    let e = parse(&long).unwrap_err();
    assert_eq!(e.key, "timing.session_timeout_ms", "{e}");
    assert!(e.reason.contains("1 queue consumer"), "{e}");
    assert!(e.reason.contains("timing.hold_ms"), "{e}");
    assert!(
        e.reason.contains("past the simulator's cap of 2000000000"),
        "{e}"
    );
    // The bound is the consumers' share: three consumers share the three
    // items of three rounds, the busiest at least one, 3·10⁵ s; all three
    // heartbeat as long: 9·10⁸ events each, 2.7·10⁹ in all.
    let shared = scenario(
        "recipe = \"zk-fifo-queue\"\nclients = 4\nproducers = 1\nrounds = 3\n",
        "hold_ms = [300000000, 300000000]\n",
    );
    let e = parse(&shared).unwrap_err();
    assert!(e.reason.contains("3 queue consumers"), "{e}");
    // A tenth of the hold fits.
    parse(&shared.replace("300000000", "30000000")).unwrap();
    // So does the long hold with a time limit that ends the run first.
    parse(&format!("duration_ms = 1000\n{long}")).unwrap();
}

#[test]
fn consumers_heartbeat_while_they_wait_for_the_producers() {
    // One producer's pace of 10⁵ s is 3·10⁸ events; the ten consumers
    // heartbeat as long, waiting for its item: 3.3·10⁹ in all.
    let head =
        |clients: u32| format!("recipe = \"zk-fifo-queue\"\nclients = {clients}\nproducers = 1\n");
    let timing = "produce_ms = [100000000, 100000000]\n";
    let e = parse(&scenario(&head(11), timing)).unwrap_err();
    assert_eq!(e.key, "timing.session_timeout_ms", "{e}");
    assert!(e.reason.contains("10 queue consumers"), "{e}");
    assert!(e.reason.contains("timing.produce_ms"), "{e}");
    // One producer and one consumer: 6·10⁸ events, under the cap.
    parse(&scenario(&head(2), timing)).unwrap();
}

#[test]
fn every_worker_counts_not_client_0_alone() {
    // A semaphore's lease holders (workers): each one's think and hold of
    // 2·10⁵ s is 6·10⁸ events, under the cap alone; four make 2.4·10⁹.
    let head = |clients: u32| format!("recipe = \"zk-semaphore\"\nclients = {clients}\n");
    let timing = "think_ms = [0, 0]\nhold_ms = [200000000, 200000000]\n";
    let e = parse(&scenario(&head(4), timing)).unwrap_err();
    assert_eq!(e.key, "timing.session_timeout_ms", "{e}");
    assert!(e.reason.contains("4 semaphore workers"), "{e}");
    assert!(
        e.reason.contains("timing.think_ms and timing.hold_ms"),
        "{e}"
    );
    parse(&scenario(&head(3), timing)).unwrap();
    // A shared lock's readers count as much as its writer (client 0).
    let shared = "recipe = \"zk-rwlock\"\nclients = 4\nwriters = 1\n";
    let e = parse(&scenario(shared, timing)).unwrap_err();
    assert!(e.reason.contains("3 shared lock readers"), "{e}");
}
