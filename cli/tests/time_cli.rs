//! `check --time ticks`: nonsense refused with exit 2 naming the flag or
//! key; a timed check's verdict and its JSON.

mod common;

use common::{lockstep, stderr, stdout};

fn check(extra: &[&str]) -> std::process::Output {
    let mut args = vec!["check", "--recipe", "etcd-election", "--clients", "2"];
    args.extend_from_slice(extra);
    lockstep(&args)
}

#[test]
fn bad_time_flags_are_refused_naming_them() {
    for (extra, says) in [
        (&["--ticks", "ping=3"][..], "--ticks gives durations in ticks: it needs --time ticks"),
        (&["--time", "sundial"], "sundial"),
        (&["--time", "ticks", "--ticks", "bogus=1"], "--ticks: unknown key 'bogus'"),
        (&["--time", "ticks", "--ticks", "latency=3-1"], "--ticks: latency needs low <= high"),
        (&["--time", "ticks", "--ticks", "ping=2,ping=3"], "--ticks: 'ping' is given twice"),
        (&["--time", "ticks", "--ticks", "hold=999"], "--ticks: hold must be a whole number of ticks"),
        (&["--time", "ticks", "--ticks", "session=4"], "--ticks ping: the first heartbeat"),
        (
            &["--time", "ticks", "--policy", "lease-aware", "--ticks", "deadline=6"],
            "--ticks deadline: deadline (6) plus the longest one-way latency (1) must be below the session",
        ),
        (
            &["--time", "ticks", "--ticks", "deadline=5"],
            "--ticks deadline: applies only to a policy that keeps a deadline",
        ),
        (
            &["--time", "ticks", "--ticks", "acquire_timeout=3"],
            "--ticks acquire_timeout: applies only with --acquire-timeout",
        ),
        (&["--time", "ticks", "--partial-order"], "--partial-order with --time ticks"),
        (&["--time", "ticks", "--no-symmetry"], "--no-symmetry with --time ticks"),
        (&["--time", "ticks", "--no-sleep-sets"], "--no-sleep-sets with --time ticks"),
    ] {
        let o = check(extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
    }
}

#[test]
fn a_timed_check_says_how_it_kept_time() {
    let o = check(&["--time", "ticks", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["symmetry"], false);
    assert!(json["time"]
        .as_str()
        .unwrap()
        .starts_with("ticks of 1000 ms: session 7"));
    let untimed = check(&["--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&untimed)).unwrap();
    assert_eq!(json["time"], "untimed");
}
