//! The `lockstep` command as a user runs it: exit statuses, JSON shape,
//! readable counterexamples, and clear errors for bad input.

mod common;

use common::{lockstep, scratch, stderr, stdout};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    assert_eq!(v["acquire_timeout"], false);
    assert_eq!(v["reentries"], 0);
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
        out.lines().any(|l| l.starts_with("mutual_exclusion ")
            && l.contains("always")
            && l.contains("VIOLATED")),
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
fn no_arguments_runs_the_tour_and_writes_the_report() {
    let dir = scratch("tour");
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for r in [
        "unfair-create",
        "fair-predecessor",
        "etcd-revision",
        "children-watch",
        "zk-unfair-election",
        "zk-fair-election",
        "etcd-election",
    ] {
        assert!(out.lines().any(|l| l.starts_with(r)), "{r} missing:\n{out}");
    }
    assert!(out.contains("herd_bound"));
    assert!(out.contains("single_leader") && out.contains("followers_agree"));
    assert!(out.contains("etcd-campaign-phantom-leader"), "{out}");
    assert!(out.contains("gc-pause-split-brain"), "{out}");
    assert!(out.contains("report: lockstep-report/index.html"), "{out}");
    let report = dir.join("lockstep-report");
    for f in [
        "index.html",
        "report.md",
        "herd.csv",
        "herd.json",
        "herd-notifications.png",
        "herd-notifications.svg",
        "timeline-gc-pause-split-brain.png",
        "timeline-etcd-campaign-phantom-leader.png",
    ] {
        assert!(report.join(f).exists(), "{f} missing");
    }
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("Watch notifications per release"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("herd.json")).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert!(rows
        .iter()
        .any(|r| r["clients"] == 1000 && r["recipe"] == "unfair-create"));
    assert!(rows
        .iter()
        .any(|r| r["clients"] == 1000 && r["recipe"] == "etcd-election"));
    // The pollers to the same count, each row as its closed form says.
    for recipe in ["redis-setnx", "redis-token", "redlock"] {
        let r = rows
            .iter()
            .find(|r| r["clients"] == 1000 && r["recipe"] == recipe)
            .unwrap_or_else(|| panic!("{recipe} at 1000 clients"));
        assert_eq!(r["polling"]["polls_per_acquisition"], 499.5, "{r}");
    }
    assert!(out.contains("Polling (Redis: no watches)"), "{out}");
}

/// A poller's rows are a section of their own: polls and requests per
/// acquisition beside the closed form, in the table, the JSON and the CSV;
/// the default sweep stops them at its cap and says so.
#[test]
fn herd_counts_a_pollers_polls_beside_its_closed_form() {
    let dir = scratch("herd-polling");
    let out = dir.to_str().unwrap();
    let o = lockstep(&[
        "herd",
        "--recipes",
        "fair-predecessor,redlock",
        "--clients",
        "2,7",
        "--json",
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    assert!(v.get("polling_max_clients").is_none(), "{v}");
    for r in v["rows"].as_array().unwrap() {
        let n = r["clients"].as_f64().unwrap();
        if r["recipe"] == "fair-predecessor" {
            assert!(r.get("polling").is_none(), "{r}");
            continue;
        }
        // Redlock on 5 masters: one try a hold, 10 requests a try.
        let p = &r["polling"];
        assert_eq!(p["delay_ms"], 200.0, "{r}");
        assert_eq!(p["polls_per_acquisition"], (n - 1.0) / 2.0, "{r}");
        assert_eq!(p["closed_form"]["tries_per_hold"], 1, "{r}");
        let form = p["closed_form"]["requests_per_acquisition"]
            .as_f64()
            .unwrap();
        assert_eq!(form, 10.0 + 10.0 * (n - 1.0) / 2.0, "{r}");
        assert_eq!(r["store_requests"]["writes"].as_f64(), Some(form), "{r}");
    }
    let csv = std::fs::read_to_string(dir.join("herd.csv")).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .ends_with(",polls_per_acquisition,retry_delay_ms,closed_form_requests_per_acquisition"));
    assert!(csv.contains(",3.0000,200,40.0000\n"), "{csv}");

    // The default sweep: to the cap, and the table says where it stopped.
    let o = lockstep(&["herd", "--recipes", "redis-token", "--out", out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("polls/acq") && !text.contains("notifications"),
        "{text}"
    );
    assert!(
        text.contains("polling rows stop at 1,000 clients in the default sweep (not run: 2,000, 5,000, 10,000)"),
        "{text}"
    );
    assert!(text.contains("baseline-redis-token-1000 "), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("herd.json")).unwrap()).unwrap();
    assert_eq!(v["polling_max_clients"], 1000);
    assert_eq!(v["rows"].as_array().unwrap().len(), 9);
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
        "clients must be between 2 and 5",
    );
    // The library names the setting; the command line adds its flag.
    assert_usage_error(
        &["check", "--recipe", "etcd-revision", "--clients", "1"],
        "--clients: clients must be between 2 and 5",
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "etcd-revision",
            "--clients",
            "2",
            "--rounds",
            "0",
        ],
        "--rounds: rounds must be between 1 and 3 (got 0)",
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
        "--crashes: crashes (3) must be fewer than clients (3)",
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
        "--threads must be between 1 and 1024",
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
            let request = format!(
                "GET /.states/0 HTTP/1.1\r\nHost: localhost:{free}\r\nConnection: close\r\n\r\n"
            );
            s.write_all(request.as_bytes()).unwrap();
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

fn scenario(name: &str) -> String {
    format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn run_reports_the_split_brain_writes_the_trace_and_exits_one() {
    let dir = scratch("run");
    let trace = dir.join("trace.jsonl");
    let html = dir.join("timeline.html");
    let o = lockstep(&[
        "run",
        &scenario("gc-pause-split-brain"),
        "--trace",
        trace.to_str().unwrap(),
        "--timeline",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("VIOLATED mutual_exclusion at"), "{out}");
    assert!(out.contains("faults fired: pause"), "{out}");
    // One window for the violations, which shows how each of the two
    // holders came to hold.
    let window = &out[out.find("timeline from").expect("a timeline")..];
    assert_eq!(out.matches("timeline from").count(), 1, "{out}");
    assert!(window.contains("mutual_exclusion at"), "{out}");
    assert!(window.contains("FAULT pause of client"), "{out}");
    for c in ["client 0 now holds", "client 1 now holds"] {
        assert!(window.contains(c), "{c}: {window}");
    }
    assert!(
        !window.contains("timer Think"),
        "timers read as words: {window}"
    );
    // The interactive timeline: self-contained, titled with scenario and
    // seed, with the overlap drawn.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("gc-pause-split-brain — seed 2"), "title");
    assert!(page.contains("\"overlaps\":[{"), "an overlap to draw");
    let outside: Vec<&str> = page
        .match_indices("http")
        .map(|(i, _)| &page[i..(i + 30).min(page.len())])
        .filter(|u| !u.starts_with("http://www.w3.org/2000/svg"))
        .collect();
    assert!(outside.is_empty(), "no network: {outside:?}");
    assert!(out.contains("reproduce: lockstep run"), "{out}");
    let lines = std::fs::read_to_string(&trace).unwrap();
    assert!(lines
        .lines()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));

    let o = lockstep(&["run", &scenario("gc-pause-split-brain"), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seed"], 2);
    assert!(v["trace_hash"].as_str().unwrap().len() == 16);
    assert_eq!(v["violations"][0]["property"], "mutual_exclusion");
    assert!(v["violations"][0]["at_us"].as_u64().is_some());
    assert!(v["faults_fired"]["pause"].as_u64().unwrap() >= 1);
    assert!(v["metrics"]["acquisitions"].as_u64().unwrap() > 0);

    let o = lockstep(&["run", &scenario("healthy"), "--seed", "5"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("no violations"));
}

#[test]
fn hunt_shrinks_to_a_reproducer_that_replays_byte_for_byte() {
    let dir = scratch("hunt");
    let o = lockstep(&[
        "hunt",
        &scenario("gc-pause-split-brain"),
        "--seeds",
        "0..50",
        "--shrink",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seeds_run"], 50);
    assert!(!v["violating_seeds"].as_array().unwrap().is_empty());
    let repro = v["reproducer"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(&repro).unwrap();
    assert!(text.starts_with("# Reproducer"), "{text}");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    for t in [&a, &b] {
        let o = lockstep(&["replay", &repro, "--trace", t.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        assert!(stdout(&o).contains("VIOLATED"));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn shards_merge_into_the_whole_hunt() {
    let dir = scratch("shards");
    let whole = lockstep(&[
        "hunt",
        &scenario("gc-pause-split-brain"),
        "--seeds",
        "0..60",
        "--json",
    ]);
    let mut files = Vec::new();
    for k in 1..=3 {
        let o = lockstep(&[
            "hunt",
            &scenario("gc-pause-split-brain"),
            "--seeds",
            "0..60",
            "--shard",
            &format!("{k}/3"),
            "--json",
        ]);
        let f = dir.join(format!("shard{k}.json"));
        std::fs::write(&f, &o.stdout).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args = vec!["hunt", "--json", "--merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = lockstep(&args);
    let w: serde_json::Value = serde_json::from_slice(&whole.stdout).unwrap();
    let m: serde_json::Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(m["seeds_run"], 60);
    assert_eq!(m["violating_seeds"], w["violating_seeds"]);
    assert_eq!(merged.status.code(), whole.status.code());
}

#[test]
fn bad_simulator_input_is_a_clear_error_with_status_two() {
    let dir = scratch("bad");
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "recipe = \"fair-predecessor\"\nclients = 3\nfencing = \"yes\"\n",
    )
    .unwrap();
    assert_usage_error(&["run", bad.to_str().unwrap()], "bad.toml");
    assert_usage_error(&["run", "/nonexistent/scenario.toml"], "cannot read");
    assert_usage_error(
        &["hunt", &scenario("healthy"), "--seeds", "9..3"],
        "--seeds 9..3 is empty",
    );
    assert_usage_error(
        &[
            "hunt",
            &scenario("healthy"),
            "--seeds",
            "0..10",
            "--shard",
            "4/3",
        ],
        "need 1 <= K <= N",
    );
    assert_usage_error(&["hunt", &scenario("healthy")], "hunt needs --seeds A..B");
    assert_usage_error(
        &[
            "hunt",
            &scenario("healthy"),
            "--seeds",
            "0..10",
            "--jobs",
            "0",
        ],
        "--jobs must be between 1 and 1024",
    );
    assert_usage_error(
        &["hunt", "--merge", bad.to_str().unwrap()],
        "not a hunt result",
    );
}

#[test]
fn herd_writes_json_csv_and_charts_that_match_the_closed_form() {
    let dir = scratch("herd");
    let o = lockstep(&[
        "herd",
        "--recipes",
        "unfair-create,fair-predecessor",
        "--clients",
        "2,7",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("only JSON on stdout");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        let n = r["clients"].as_u64().unwrap();
        let per: Vec<u64> = r["notifications_per_release"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        let want: Vec<u64> = if r["recipe"] == "unfair-create" {
            (1..=n).map(|k| n - k).collect()
        } else {
            (1..=n).map(|k| u64::from(k < n)).collect()
        };
        assert_eq!(per, want, "{r}");
        for k in ["writes", "reads", "watches"] {
            assert!(r["store_requests"][k].as_f64().is_some(), "{r}");
        }
        assert!(
            r["handoff_us"]["p50"].as_u64().is_some() && r["handoff_us"]["p99"].as_u64().is_some()
        );
    }
    let csv = std::fs::read_to_string(dir.join("herd.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5);
    for f in [
        "herd.json",
        "herd-notifications.svg",
        "herd-notifications.png",
        "herd-requests.png",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    // The hand-off latency chart said nothing (flat at every N): dropped.
    assert!(!dir.join("herd-handoff.png").exists());
    assert_usage_error(
        &["herd", "--clients", "1", "--out", dir.to_str().unwrap()],
        "--clients: '1'",
    );
    assert_usage_error(
        &["herd", "--recipes", "mutex", "--out", dir.to_str().unwrap()],
        "unknown recipe 'mutex'",
    );
}

#[test]
fn report_timeline_draws_a_run_trace() {
    let dir = scratch("timeline");
    let trace = dir.join("t.jsonl");
    lockstep(&[
        "run",
        &scenario("partition-past-session"),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let o = lockstep(&["report", "timeline", trace.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let svg = std::fs::read_to_string(dir.join("t-timeline.svg")).unwrap();
    assert!(
        svg.contains("client 2") && svg.contains("partition"),
        "lanes and the fault are labelled"
    );
    assert!(dir.join("t-timeline.png").exists());
    let junk = dir.join("junk.jsonl");
    std::fs::write(&junk, "not json\n").unwrap();
    assert_usage_error(
        &["report", "timeline", junk.to_str().unwrap()],
        "line 1: not a trace event",
    );
}

/// `--trace-format chrome` writes one Trace Event Format object: a named
/// track per client, holds and the pause as slices with their durations.
#[test]
fn run_writes_a_chrome_trace_for_perfetto() {
    let dir = scratch("chrome");
    let trace = dir.join("run.json");
    let o = lockstep(&[
        "run",
        &scenario("gc-pause-split-brain"),
        "--trace",
        trace.to_str().unwrap(),
        "--trace-format",
        "chrome",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let named = |n: &str| {
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == n)
    };
    assert!(named("client 0") && named("client 2") && named("store"));
    let slices = |cat: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == cat)
            .count()
    };
    assert!(slices("hold") > 0 && slices("overlap") > 0);
    let pause = events
        .iter()
        .find(|e| e["ph"] == "X" && e["name"] == "pause")
        .expect("the pause as a slice");
    assert!(pause["dur"].as_u64().unwrap() >= 2_500_000);
    assert_usage_error(
        &["run", &scenario("healthy"), "--trace-format", "chrome"],
        "--trace",
    );
}

#[test]
fn sleep_sets_keep_the_states_and_the_counterexample_on_fewer_transitions() {
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "check",
            "--recipe",
            "fair-predecessor",
            "--clients",
            "3",
            "--crashes",
            "1",
            "--property",
            "mutual_exclusion",
            "--property",
            "resource_exclusion",
            "--json",
        ];
        a.extend_from_slice(extra);
        let o = lockstep(&a);
        // resource_exclusion is violated (a write in flight outlives a crash).
        assert_eq!(o.status.code(), Some(1), "{a:?}: {}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("one JSON object")
    };
    let sleeping = args(&[]);
    let every = args(&["--no-sleep-sets"]);
    assert_eq!(sleeping["sleep_sets"], true);
    assert_eq!(every["sleep_sets"], false);
    assert_eq!(sleeping["unique_states"], every["unique_states"]);
    assert_eq!(sleeping["max_depth"], every["max_depth"]);
    let states = |v: &serde_json::Value| v["states"].as_u64().unwrap();
    assert!(states(&sleeping) < states(&every));
    assert_eq!(sleeping["properties"][1]["name"], "resource_exclusion");
    for k in 0..2 {
        let (p, q) = (&sleeping["properties"][k], &every["properties"][k]);
        assert_eq!(p["status"], q["status"]);
        assert_eq!(p["counterexample"], q["counterexample"]);
    }
    assert_eq!(sleeping["properties"][1]["status"], "violated");
    // Progress needs every edge: a full check takes every step.
    let o = lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor",
        "--clients",
        "2",
        "--json",
    ]);
    let full: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(full["sleep_sets"], false);
    let o = lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor",
        "--clients",
        "2",
        "--property",
        "mutual_exclusion",
    ]);
    assert!(stdout(&o).contains("sleep sets: on"), "{}", stdout(&o));
}

#[test]
fn the_partial_order_reduction_keeps_every_verdict_on_fewer_states() {
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "check",
            "--recipe",
            "zk-double-barrier",
            "--clients",
            "3",
            "--json",
        ];
        a.extend_from_slice(extra);
        let o = lockstep(&a);
        assert_eq!(o.status.code(), Some(0), "{a:?}: {}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("one JSON object")
    };
    let full = args(&[]);
    let reduced = args(&["--partial-order"]);
    assert_eq!(full["partial_order"], false);
    assert_eq!(reduced["partial_order"], true);
    let unique = |v: &serde_json::Value| v["unique_states"].as_u64().unwrap();
    assert!(unique(&reduced) < unique(&full));
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["properties"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect()
    };
    // Every property, progress (all_pass) too, has the full search's
    // verdict.
    assert_eq!(names(&full), names(&reduced));
    assert!(names(&full).contains(&"all_pass".to_string()));
    for (p, q) in full["properties"]
        .as_array()
        .unwrap()
        .iter()
        .zip(reduced["properties"].as_array().unwrap())
    {
        assert_eq!(q["status"], p["status"], "{}", p["name"]);
    }
    // The text report says how progress restricts the reduction.
    let o = lockstep(&[
        "check",
        "--recipe",
        "zk-double-barrier",
        "--clients",
        "2",
        "--partial-order",
    ]);
    assert!(
        stdout(&o).contains("partial-order reduction: on (with progress asked"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn progress_is_found_violated_under_the_partial_order_reduction_too() {
    // Without its guid, a create whose reply is lost leaves a node no one
    // owns up to, and the next waiter waits on it for ever.
    let args = |reduced: bool| {
        let mut a = vec![
            "check",
            "--recipe",
            "fair-predecessor",
            "--no-guid",
            "--clients",
            "2",
            "--lost-replies",
            "1",
            "--property",
            "progress",
            "--json",
        ];
        if reduced {
            a.push("--partial-order");
        }
        a
    };
    let json = |reduced| -> serde_json::Value {
        serde_json::from_str(&stdout(&lockstep(&args(reduced)))).unwrap()
    };
    let (full, reduced) = (json(false), json(true));
    assert_eq!(full["properties"][0]["status"], "violated");
    assert_eq!(reduced["properties"][0]["status"], "violated");
    assert_eq!(reduced["partial_order"], true);
    let path = |v: &serde_json::Value| {
        v["properties"][0]["counterexample"]
            .as_array()
            .unwrap()
            .len()
    };
    assert!(path(&reduced) >= path(&full) && path(&full) > 0);
}

/// `--acquire-timeout`: a lock whose library gives up is checked with
/// waiters that may give up at any moment; safety and progress hold, and
/// the header says so. Curator removes no watch when it gives up, so the
/// predecessor's delete also wakes the waiter that left: `herd_bound` is
/// violated. A recipe whose source has no timeout is refused, naming
/// those that have one.
#[test]
fn an_acquire_timeout_is_checked_where_the_library_has_one() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor:curator",
        "--clients",
        "3",
        "--acquire-timeout",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("acquire timeout, no faults"), "{out}");
    for (property, verdict) in [
        ("mutual_exclusion", "holds"),
        ("progress", "holds"),
        ("herd_bound", "VIOLATED"),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(property))
            .unwrap_or_else(|| panic!("{property} in {out}"));
        assert!(line.contains(verdict), "{line}");
    }
    assert!(
        out.contains("acquire timeout: give up at the next wait"),
        "{out}"
    );
    for refused in [
        "fair-predecessor",
        "unfair-create",
        "zk-fair-election",
        "etcd-revision",
    ] {
        assert_usage_error(
            &[
                "check",
                "--recipe",
                refused,
                "--clients",
                "2",
                "--acquire-timeout",
            ],
            "--acquire-timeout: an acquire timeout gives up a lock acquisition",
        );
    }
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--acquire-timeout",
        ],
        "recipes that can: fair-predecessor:curator, fair-predecessor:kazoo",
    );
}

/// `--reentries`: the holder acquires again as its library answers; the
/// header says so, `reentry_immediate` is judged, and a recipe whose
/// source has no second acquire to model is refused, naming those that do.
#[test]
fn reentries_are_checked_as_the_library_answers() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "etcd-revision",
        "--clients",
        "2",
        "--reentries",
        "1",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("1 reentry, no faults"), "{out}");
    let line = |p: &str| {
        out.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("{p} in {out}"))
            .to_string()
    };
    assert!(line("reentry_immediate").contains("VIOLATED"));
    assert!(line("mutual_exclusion").contains("VIOLATED"));
    // Asked alone, as any property of the configuration.
    let o = lockstep(&[
        "check",
        "--recipe",
        "etcd-revision",
        "--clients",
        "2",
        "--reentries",
        "1",
        "--property",
        "reentry_immediate",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("reentry_immediate violated — shortest counterexample, 8 steps"),
        "{out}"
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "fair-predecessor",
            "--clients",
            "2",
            "--reentries",
            "1",
        ],
        "--reentries: re-entries are a lock holder's second acquire",
    );
    assert_usage_error(
        &[
            "check",
            "--recipe",
            "fair-predecessor:curator",
            "--clients",
            "2",
            "--reentries",
            "3",
        ],
        "--reentries: a holder re-enters at most 2 times in a hold (got 3)",
    );
}

/// A shipped scenario runs by its name, from any directory, as the file
/// does: the same trace, byte for byte. A name that is neither a file nor
/// shipped is exit 2, with the shipped names.
#[test]
fn run_finds_a_shipped_scenario_by_name() {
    let hash = |o: &std::process::Output| {
        let out = stdout(o);
        out.lines()
            .find_map(|l| l.strip_prefix("trace hash: "))
            .unwrap_or_else(|| panic!("no trace hash in {out}"))
            .to_string()
    };
    let dir = scratch("run-by-name");
    let by_name = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["run", "gc-pause-split-brain", "--seed", "8"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(by_name.status.code(), Some(1), "{}", stderr(&by_name));
    let by_file = lockstep(&["run", &scenario("gc-pause-split-brain"), "--seed", "8"]);
    assert_eq!(hash(&by_name), hash(&by_file));
    assert!(
        stdout(&by_name).contains("reproduce: lockstep run gc-pause-split-brain --seed 8"),
        "{}",
        stdout(&by_name)
    );
    for command in ["run", "hunt", "replay"] {
        let mut args = vec![command, "no-such-scenario"];
        if command == "hunt" {
            args.extend(["--seeds", "0..1"]);
        }
        let o = lockstep(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        for shipped in ["healthy", "gc-pause-split-brain", "rwlock-orphan-write"] {
            assert!(stderr(&o).contains(shipped), "{args:?}: {}", stderr(&o));
        }
    }
}
