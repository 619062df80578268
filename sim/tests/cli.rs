//! The `lockstep` command as a user runs it: exit statuses, JSON shape,
//! readable counterexamples, and clear errors for bad input.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn lockstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .output()
        .expect("lockstep runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_json_reports_every_property_and_exits_zero_when_all_hold() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor",
        "--clients",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("stdout is one JSON object");
    assert_eq!(v["recipe"], "fair-predecessor");
    assert_eq!(v["clients"], 2);
    assert!(v["states"].as_u64().unwrap() >= v["unique_states"].as_u64().unwrap());
    assert!(v["seconds"].as_f64().is_some());
    let names: Vec<&str> = v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for want in [
        "mutual_exclusion",
        "resource_exclusion",
        "herd_bound",
        "hand_off",
        "progress",
    ] {
        assert!(names.contains(&want), "{names:?}");
    }
    assert!(v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["status"] == "holds"));
}

#[test]
fn a_violation_exits_one_with_a_numbered_counterexample() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "unfair-create",
        "--clients",
        "2",
        "--pauses",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("mutual_exclusion    always     VIOLATED"),
        "{out}"
    );
    assert!(
        out.contains("mutual_exclusion violated — shortest counterexample"),
        "{out}"
    );
    assert!(out.contains("FAULT client"), "{out}");
    assert!(out.contains("expires (its owner is silent)"), "{out}");
    assert!(out.contains("  1. client"), "{out}");

    let o = lockstep(&[
        "check",
        "--recipe",
        "unfair-create",
        "--clients",
        "2",
        "--pauses",
        "1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let me = v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mutual_exclusion")
        .unwrap();
    assert_eq!(me["status"], "violated");
    let steps = me["counterexample"].as_array().unwrap();
    assert_eq!(steps[0]["step"], 1);
    let last = steps.last().unwrap();
    assert_eq!(
        last["holders"].as_array().unwrap().len(),
        2,
        "two believe they hold: {last}"
    );
}

#[test]
fn no_arguments_checks_every_recipe_in_one_table() {
    let o = lockstep(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for r in [
        "unfair-create",
        "fair-predecessor",
        "etcd-revision",
        "children-watch",
    ] {
        assert!(out.lines().any(|l| l.starts_with(r)), "{r} missing:\n{out}");
    }
    assert!(out.contains("herd_bound"));
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let o = lockstep(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
}

#[test]
fn bad_input_is_a_clear_error_with_status_two() {
    assert_usage_error(
        &["check", "--recipe", "bakery", "--clients", "3"],
        "unknown recipe 'bakery'",
    );
    assert_usage_error(
        &["check", "--recipe", "etcd-revision", "--clients", "9"],
        "clients must be between 2 and 4",
    );
    assert_usage_error(
        &["check", "--recipe", "etcd-revision", "--clients", "1"],
        "clients must be between 2 and 4",
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "etcd-revision",
            "--clients",
            "3",
            "--no-guid",
        ],
        "--no-guid applies only to fair-predecessor",
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "etcd-revision",
            "--clients",
            "3",
            "--policy",
            "brave",
        ],
        "unknown policy 'brave'",
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "etcd-revision",
            "--clients",
            "3",
            "--crashes",
            "3",
        ],
        "crashes (3) must be fewer than clients (3)",
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "etcd-revision",
            "--clients",
            "3",
            "--pauses",
            "2",
            "--crashes",
            "2",
        ],
        "at most 3 faults",
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "etcd-revision",
            "--clients",
            "3",
            "--threads",
            "0",
        ],
        "--threads must be at least 1",
    );
    assert_usage_error(&["check", "--recipe", "etcd-revision"], "--clients");
    assert_usage_error(
        &["check", "--recipe", "etcd-revision", "--clients", "three"],
        "invalid value 'three'",
    );
    assert_usage_error(&["frobnicate"], "unrecognized subcommand");
}

#[test]
fn explore_refuses_a_busy_port_and_serves_the_explorer_on_a_free_one() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    assert_usage_error(
        &[
            "explore",
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--port",
            &port,
        ],
        "cannot serve on 127.0.0.1",
    );

    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args([
            "explore",
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--port",
            &free.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut response = String::new();
    while Instant::now() < deadline {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", free)) {
            s.write_all(b"GET /.states/0 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .unwrap();
            s.read_to_string(&mut response).unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains("client 0 → store: connect"),
        "the first steps: {response}"
    );
}
