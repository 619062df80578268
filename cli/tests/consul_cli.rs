//! Consul from the command line: its own faults, what the checker finds
//! with them, and the settings it refuses.

mod common;

use common::{lockstep, stderr};

/// `check --json`'s status of each property asked, by name.
fn statuses(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = lockstep(&all);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stderr(&o)));
    (o.status.code(), v)
}

fn status(v: &serde_json::Value, name: &str) -> String {
    v["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} reported"))["status"]
        .as_str()
        .expect("a status")
        .to_string()
}

#[test]
fn a_critical_check_breaks_the_lock_only_without_its_lock_delay() {
    let args = |recipe| {
        [
            "--recipe",
            recipe,
            "--clients",
            "2",
            "--critical-checks",
            "1",
            "--property",
            "mutual_exclusion",
        ]
    };
    let (code, with) = statuses(&args("consul-lock"));
    assert_eq!(code, Some(0));
    assert_eq!(status(&with, "mutual_exclusion"), "holds");
    assert_eq!(with["critical_checks"], 1);
    let (code, without) = statuses(&args("consul-lock:lock-delay-0"));
    assert_eq!(code, Some(1));
    assert_eq!(status(&without, "mutual_exclusion"), "violated");
}

#[test]
fn a_leader_failover_forgets_the_lock_delay() {
    let (code, v) = statuses(&[
        "--recipe",
        "consul-lock",
        "--clients",
        "2",
        "--critical-checks",
        "1",
        "--failovers",
        "1",
        "--property",
        "mutual_exclusion",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(status(&v, "mutual_exclusion"), "violated");
}

#[test]
fn consul_lock_cli_cut_off_past_its_session_keeps_no_exclusion_but_owns_its_key() {
    let (_, v) = statuses(&[
        "--recipe",
        "consul-lock-cli",
        "--clients",
        "2",
        "--partitions",
        "1",
        "--property",
        "mutual_exclusion",
        "--property",
        "holder_owns_key",
    ]);
    assert_eq!(status(&v, "mutual_exclusion"), "violated");
    assert_eq!(status(&v, "holder_owns_key"), "holds");
}

#[test]
fn lock_index_fences_unless_the_key_is_deleted() {
    let args = |recipe| {
        [
            "--recipe",
            recipe,
            "--clients",
            "2",
            "--pauses",
            "1",
            "--fencing",
            "--property",
            "resource_exclusion",
        ]
    };
    let (_, release) = statuses(&args("consul-lock"));
    assert_eq!(status(&release, "resource_exclusion"), "holds");
    let (_, delete) = statuses(&args("consul-lock:behavior-delete"));
    assert_eq!(status(&delete, "resource_exclusion"), "violated");
}

#[test]
fn consul_settings_are_refused_elsewhere_and_the_timed_check_refuses_consul() {
    for (args, needles) in [
        (
            vec![
                "check",
                "--recipe",
                "fair-predecessor",
                "--clients",
                "2",
                "--critical-checks",
                "1",
            ],
            vec!["--critical-checks", "Consul"],
        ),
        (
            vec![
                "check",
                "--recipe",
                "consul-lock",
                "--clients",
                "2",
                "--time",
                "ticks",
            ],
            vec!["--time", "Consul"],
        ),
        (
            vec![
                "check",
                "--recipe",
                "consul-lock",
                "--clients",
                "2",
                "--critical-checks",
                "2",
                "--pauses",
                "2",
            ],
            vec!["at most 3 faults"],
        ),
    ] {
        let o = lockstep(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: expected '{n}' in: {err}");
        }
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
