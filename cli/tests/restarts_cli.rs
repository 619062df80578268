//! `check --restarts`: refused without a crash to undo, naming the flag
//! (exit 2); with one, the double barrier's early pass and leave, which a
//! crash for good never shows.

mod common;

use common::{lockstep, stderr, stdout};

#[test]
fn restarts_without_crashes_are_refused_naming_the_flag() {
    for (crashes, says) in [
        ("0", "--restarts: a restart brings a crashed client back, and no crash is allowed"),
        ("1", "--restarts: a restart brings a crashed client back: restarts (2) must be at most crashes (1)"),
    ] {
        let restarts = if crashes == "0" { "1" } else { "2" };
        let o = lockstep(&[
            "check", "--recipe", "zk-double-barrier", "--clients", "2", "--crashes", crashes,
            "--restarts", restarts,
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

#[test]
fn a_restart_shows_what_a_crash_for_good_does_not() {
    let verdicts = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--recipe",
            "zk-double-barrier",
            "--clients",
            "2",
            "--crashes",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = lockstep(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let violated: Vec<String> = v["properties"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["status"] == "violated")
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect();
        (violated, v["restarts"].clone())
    };
    let (for_good, none) = verdicts(&[]);
    assert_eq!(for_good, ["all_pass"]);
    assert!(none.is_null(), "no restarts field without restarts");
    let (restarted, one) = verdicts(&["--restarts", "1"]);
    assert_eq!(restarted, ["no_early_pass", "no_early_leave", "herd_bound"]);
    assert_eq!(one, 1);
}
