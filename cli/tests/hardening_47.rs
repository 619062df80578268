//! Issue 47's last items at the command line: commands printed for the
//! user are shell-quoted, the last seed (2^64 − 1) can be hunted, a seed
//! range that would wrap is refused, `explore` answers only requests for
//! its own address, and timing no client role can honour is refused.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn lockstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lockstep-47-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{name}.toml"))
}

/// A file whose name a shell would read as three commands.
fn hostile_copy(dir: &Path, scenario: &str) -> PathBuf {
    let file = dir.join("a;touch PWNED;b.toml");
    std::fs::copy(shipped(scenario), &file).unwrap();
    file
}

#[test]
fn run_prints_its_reproduce_command_quoted() {
    let dir = scratch("run");
    let file = hostile_copy(&dir, "gc-pause-split-brain");
    let o = lockstep(&["run", file.to_str().unwrap()]);
    let out = text(&o.stdout);
    let quoted = format!("reproduce: lockstep run '{}' --seed ", file.display());
    assert!(out.contains(&quoted), "{out}");
    // Pasted into a shell, it runs the same file and touches nothing.
    let line = out.lines().find(|l| l.starts_with("reproduce: ")).unwrap();
    let command = line.trim_start_matches("reproduce: ").replacen(
        "lockstep",
        &format!("'{}'", env!("CARGO_BIN_EXE_lockstep")),
        1,
    );
    let again = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        o.status.code(),
        "{}",
        text(&again.stderr)
    );
    assert!(!dir.join("PWNED").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hunt_shrink_prints_its_replay_command_quoted() {
    let dir = scratch("shrink");
    let out_dir = dir.join("out dir;x");
    let o = lockstep(&[
        "hunt",
        shipped("orphan-create").to_str().unwrap(),
        "--seeds",
        "0..1",
        "--jobs",
        "1",
        "--shrink",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.contains("run it with: "))
        .expect(&out);
    let command = line.split("run it with: ").nth(1).unwrap();
    assert!(command.starts_with("lockstep replay '"), "{line}");
    assert!(command.contains("out dir;x/"), "{line}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hunt_runs_the_last_seed_and_refuses_a_range_that_would_wrap() {
    let healthy = shipped("healthy");
    let healthy = healthy.to_str().unwrap();
    let o = lockstep(&[
        "hunt",
        healthy,
        "--seeds",
        "18446744073709551614..=18446744073709551615",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["seeds_run"], 2);
    assert_eq!(json["seeds"], "18446744073709551614..=18446744073709551615");
    // A shard of the top of the range, and the result merges back.
    let dir = scratch("seeds");
    let part = dir.join("part.json");
    std::fs::write(&part, &o.stdout).unwrap();
    let merged = lockstep(&["hunt", "--merge", part.to_str().unwrap(), "--json"]);
    assert_eq!(merged.status.code(), Some(0), "{}", text(&merged.stderr));
    // The exclusive form cannot name the last seed; 2^64 seeds, and a
    // seed past the last, are refused with status 2.
    for (seeds, says) in [
        ("0..=18446744073709551615", "2^64 seeds"),
        ("0..18446744073709551616", "is not a seed"),
        ("18446744073709551615..=18446744073709551614", "is empty"),
        ("5..5", "is empty"),
    ] {
        let o = lockstep(&["hunt", healthy, "--seeds", seeds]);
        assert_eq!(o.status.code(), Some(2), "{seeds}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(says),
            "{seeds}: {}",
            text(&o.stderr)
        );
    }
    // `run` takes the last seed too.
    let o = lockstep(&["run", healthy, "--seed", "18446744073709551615"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("seed 18446744073709551615"),
        "{}",
        text(&o.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn timing_no_consumer_can_honour_is_refused_with_status_2() {
    let dir = scratch("timing");
    let file = dir.join("consumer.toml");
    std::fs::write(
        &file,
        "recipe = \"zk-fifo-queue\"\nclients = 2\nproducers = 1\n[timing]\nsession_timeout_ms = 3\n\
         latency_ms = [0, 0]\nhold_ms = [1000000000, 1000000000]\n",
    )
    .unwrap();
    let o = lockstep(&["run", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(err.contains("timing.session_timeout_ms"), "{err}");
    assert!(err.contains("queue consumer"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One request to `port` with `host` as its `Host`: the whole answer.
fn get(port: u16, host: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!("GET /.states/0 HTTP/1.1\r\nHost: {host}\r\n\r\n");
    s.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn explore_answers_only_requests_for_its_own_address() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["explore", "--recipe", "unfair-create", "--clients", "2"])
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let own = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    let good: Vec<String> = own.iter().map(|h| get(port, h)).collect();
    let rebound = get(port, &format!("attacker.example:{port}"));
    let portless = get(port, "localhost");
    child.kill().unwrap();
    child.wait().unwrap();
    for response in &good {
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.contains("client 0 → store: connect"), "{response}");
    }
    for response in [&rebound, &portless] {
        assert!(response.starts_with("HTTP/1.1 421"), "{response}");
        assert!(!response.contains("client 0"), "{response}");
    }
}
