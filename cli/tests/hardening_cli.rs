//! `check`, `report`, `herd` and `explore` under adversarial input: an
//! incomplete search is not a pass, limits come from the machine and say
//! so, nonsense flags are errors, tampered traces are refused, write errors
//! name the path.

mod common;

use common::{lockstep, scratch, stderr, stdout};
use std::io::{BufRead, BufReader, Read, Write};

use std::process::{Command, Stdio};

fn usage_error(args: &[&str], says: &str) {
    let o = lockstep(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(
        stderr(&o).contains(says),
        "{args:?}: expected '{says}' in {}",
        stderr(&o)
    );
}

#[test]
fn an_incomplete_check_exits_three_not_zero() {
    let args = [
        "check",
        "--recipe",
        "fair-predecessor",
        "--clients",
        "3",
        "--max-states",
        "10",
    ];
    let o = lockstep(&args);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("INCOMPLETE: stopped at the limit of 10 unique states (--max-states)")
    );
    // A verdict not reached has no time it was decided at.
    let row = stdout(&o)
        .lines()
        .find(|l| l.starts_with("mutual_exclusion"))
        .map(str::to_string)
        .unwrap();
    assert!(row.trim_end().ends_with(" -"), "{row}");
    let mut json = args.to_vec();
    json.push("--json");
    let o = lockstep(&json);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["max_states"], 10);
    // A violation found before the limit is still a violation: exit 1.
    let o = lockstep(&[
        "check",
        "--recipe",
        "unfair-create",
        "--clients",
        "3",
        "--pauses",
        "1",
        "--max-states",
        "3000",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("INCOMPLETE"), "{}", stdout(&o));
}

#[test]
fn the_default_state_limit_follows_the_machine_and_says_so() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "unfair-create",
        "--clients",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let from = v["max_states_from"].as_str().unwrap();
    assert!(from.contains("default"), "{from}");
    assert!(v["max_states"].as_u64().unwrap() > 0);
    // The memory limit is the machine's too, where its memory can be read.
    if std::path::Path::new("/proc/meminfo").exists() {
        let from = v["max_memory_from"].as_str().unwrap();
        assert!(from.contains("three quarters of its"), "{from}");
        assert!(v["max_memory"].as_u64().unwrap() > 0);
        assert!(v.get("stopped_at_memory").is_none(), "{v}");
    }
    usage_error(
        &[
            "check",
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--max-states",
            "0",
        ],
        "--max-states must be between 1",
    );
    usage_error(
        &[
            "check",
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--threads",
            "100000",
        ],
        "--threads must be between 1 and 1024",
    );
}

/// A memory limit the process is past from the start stops the search
/// after the first states it merges: incomplete (exit 3), saying the
/// memory stopped it, and the JSON says where it stood. A size that is
/// not one is refused naming the flag.
#[test]
fn the_memory_limit_stops_the_search_and_says_so() {
    if !std::path::Path::new("/proc/self/status").exists() {
        return; // no resident memory to read
    }
    let check = [
        "check",
        "--recipe",
        "fair-predecessor",
        "--clients",
        "3",
        "--crashes",
        "1",
        "--max-memory",
        "1M",
    ];
    let o = lockstep(&check);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("when the checker's memory reached")
            && stdout(&o).contains("(the limit: 1 MiB, --max-memory)"),
        "{}",
        stdout(&o)
    );
    let o = lockstep(&[&check[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["max_memory"], 1 << 20);
    assert!(v["stopped_at_memory"].as_u64().unwrap() > 1 << 20, "{v}");
    assert!(v["unique_states"].as_u64().unwrap() < 1_000, "{v}");
    for (size, says) in [
        ("0", "--max-memory 0: must be more than 0"),
        (
            "lots",
            "--max-memory lots: a size is a whole number of bytes",
        ),
        (
            "2T",
            "--max-memory 2T: a size is a whole number of bytes, or one with K, M or G",
        ),
    ] {
        usage_error(
            &[
                "check",
                "--recipe",
                "unfair-create",
                "--clients",
                "2",
                "--max-memory",
                size,
            ],
            says,
        );
    }
}

#[test]
fn a_flag_that_repeats_or_does_nothing_is_refused() {
    let check = ["check", "--recipe", "unfair-create", "--clients", "2"];
    let with = |more: &[&'static str]| [&check[..], more].concat();
    usage_error(
        &with(&[
            "--property",
            "mutual_exclusion",
            "--property",
            "mutual_exclusion",
        ]),
        "--property mutual_exclusion is given twice",
    );
    usage_error(
        &with(&["--partial-order", "--no-sleep-sets"]),
        "never uses sleep sets",
    );
}

#[test]
fn nonsense_report_flags_are_errors() {
    for n in ["0", "1"] {
        usage_error(
            &["report", "--max-clients", n],
            "--max-clients must be between 2",
        );
    }
}

#[test]
fn a_tampered_trace_is_refused_naming_file_and_line() {
    let dir = scratch("trace");
    let trace = dir.join("t.jsonl");
    let o = lockstep(&[
        "run",
        &format!("{}/../scenarios/healthy.toml", env!("CARGO_MANIFEST_DIR")),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&trace).unwrap();
    let cases = [
        ("empty.jsonl", String::new(), "no trace events"),
        ("blank.jsonl", "\n\n".to_string(), "no trace events"),
        (
            "torn.jsonl",
            text[..text.len() - 10].to_string(),
            "not a trace event",
        ),
        (
            "short.jsonl",
            text.lines().take(5).map(|l| format!("{l}\n")).collect(),
            "without its `end` line",
        ),
        (
            "headless.jsonl",
            text.lines().skip(1).map(|l| format!("{l}\n")).collect(),
            "`start` line",
        ),
        (
            "unknown-field.jsonl",
            text.replacen("\"event\":\"end\"", "\"event\":\"end\",\"bogus\":7", 1),
            "unknown field `bogus`",
        ),
        (
            "no-rounds.jsonl",
            text.replacen("\"rounds\":3", "\"rounds\":0", 1),
            "0 rounds",
        ),
        (
            "too-many.jsonl",
            text.replacen("\"clients\":5", "\"clients\":20000", 1),
            "20000 clients",
        ),
        (
            // A valid run, too many lanes to draw: 300 of them would make a
            // picture some eight thousand pixels high.
            "wide.jsonl",
            text.replacen("\"clients\":5", "\"clients\":300", 1),
            "at most 200",
        ),
        (
            "no-policy.jsonl",
            text.replacen("\"policy\":\"naive\"", "\"policy\":\"whatever\"", 1),
            "policy",
        ),
    ];
    for (name, body, says) in cases {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        let o = lockstep(&["report", "timeline", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(path.to_str().unwrap()),
            "{name}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(says), "{name}: {}", stderr(&o));
    }
    // The whole trace draws; a chart that cannot be written names its path.
    let o = lockstep(&["report", "timeline", trace.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bad = dir.join("missing").join("chart");
    usage_error(
        &[
            "report",
            "timeline",
            trace.to_str().unwrap(),
            "--out",
            bad.to_str().unwrap(),
        ],
        bad.to_str().unwrap(),
    );
}

#[test]
fn an_unwritable_out_fails_before_the_work() {
    let dir = scratch("out");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("sub");
    // The full sweep takes minutes; the error comes at once.
    usage_error(
        &["herd", "--out", bad.to_str().unwrap()],
        bad.to_str().unwrap(),
    );
    usage_error(
        &["report", "--out", bad.to_str().unwrap()],
        bad.to_str().unwrap(),
    );
}

#[cfg(unix)]
#[test]
fn a_scenario_path_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch("utf8");
    let path = dir.join(std::ffi::OsStr::from_bytes(b"x-\xfe.toml"));
    std::fs::copy(
        format!("{}/../scenarios/healthy.toml", env!("CARGO_MANIFEST_DIR")),
        &path,
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("run")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not valid UTF-8"), "{}", stderr(&o));
}

#[test]
fn explore_on_port_zero_serves_where_it_says() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args([
            "explore",
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--port",
            "0",
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let serving = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find(|l| l.starts_with("serving"))
        .expect("a serving line");
    let port: u16 = serving
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|p| p.parse().ok())
        .expect("a port in the serving line");
    assert_ne!(port, 0, "{serving}");
    // The server may take a moment to bind.
    let mut answer = String::new();
    for _ in 0..100 {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
            s.read_to_string(&mut answer).unwrap();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(answer.starts_with("HTTP/1."), "{answer}");
}

/// A bench baseline that is not there, or a name that is a path: exit 2,
/// naming the problem.
#[test]
fn bench_baselines_are_checked() {
    usage_error(
        &[
            "bench",
            "--skip-sim",
            "--skip-check",
            "--baseline",
            "never-saved-xyz",
        ],
        "save one with --save-baseline never-saved-xyz",
    );
    usage_error(
        &[
            "bench",
            "--skip-sim",
            "--skip-check",
            "--save-baseline",
            "../escape",
        ],
        "letters, digits",
    );
}

/// `bench --against` times this build against another on the same search,
/// pair by pair: against itself the states are the same and every pair has
/// a ratio; a path that is no lockstep build, or no file, is exit 2.
#[test]
fn bench_against_another_build() {
    let me = env!("CARGO_BIN_EXE_lockstep");
    let o = lockstep(&[
        "bench",
        "--against",
        me,
        "--pairs",
        "2",
        "--pair-states",
        "3000",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let pairs = v["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    for p in pairs {
        assert_eq!(p["this_unique_states"], p["other_unique_states"]);
        assert!(p["this_unique_states"].as_u64().unwrap() >= 3000);
        assert!(p["ratio"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["same_states"], true);
    let mean = v["geometric_mean"].as_f64().unwrap();
    assert!(v["min"].as_f64().unwrap() <= mean && mean <= v["max"].as_f64().unwrap());

    usage_error(
        &["bench", "--against", "/no/such/lockstep"],
        "--against /no/such/lockstep",
    );
    usage_error(&["bench", "--against", "/"], "not an executable file");
    usage_error(
        &["bench", "--against", "/bin/true", "--pair-states", "2000"],
        "is it a lockstep build",
    );
    usage_error(
        &["bench", "--against", me, "--pairs", "0"],
        "--pairs takes 1 to 100",
    );
    usage_error(
        &["bench", "--against", me, "--pair-states", "10"],
        "--pair-states takes at least 1,000",
    );
    usage_error(&["bench", "--pairs", "3"], "--against");
}

/// Output that cannot be written (a full disk) is one line and exit 2, not
/// a panic.
#[test]
fn a_failed_write_to_stdout_is_an_error_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // no /dev/full on this system
    };
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("recipes")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("lockstep: cannot write the output to standard output"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

/// `run`'s outputs are neither the scenario it reads nor each other, and a
/// timeline is refused with --json (which would drop it).
#[test]
fn run_outputs_do_not_replace_their_input_or_each_other() {
    let dir = scratch("run-outputs");
    let scenario = dir.join("s.toml");
    std::fs::copy("../scenarios/healthy.toml", &scenario).unwrap();
    let s = scenario.to_str().unwrap();
    usage_error(&["run", s, "--trace", s], "that is the file being run");
    usage_error(&["run", s, "--html", s], "that is the file being run");
    let x = dir.join("x");
    let x = x.to_str().unwrap();
    usage_error(&["run", s, "--trace", x, "--html", x], "both name");
    // One file spelled two ways, before either exists.
    let x2 = dir.join(".").join("x");
    let x2 = x2.to_str().unwrap();
    usage_error(&["run", s, "--trace", x, "--html", x2], "both name");
    assert!(!dir.join("x").exists(), "nothing written");
    // A link to the other output, not yet written; and a loop of links.
    #[cfg(unix)]
    {
        let link = dir.join("link");
        std::os::unix::fs::symlink("x", &link).unwrap();
        usage_error(
            &["run", s, "--trace", link.to_str().unwrap(), "--html", x],
            "both name",
        );
        let (l1, l2) = (dir.join("l1"), dir.join("l2"));
        std::os::unix::fs::symlink("l2", &l1).unwrap();
        std::os::unix::fs::symlink("l1", &l2).unwrap();
        let o = lockstep(&["run", s, "--trace", l1.to_str().unwrap(), "--html", x]);
        assert_eq!(o.status.code(), Some(2), "a loop of links: {}", stderr(&o));
        // A second name of one file (a hard link).
        let (t, h) = (dir.join("t"), dir.join("h"));
        std::fs::write(&t, "kept").unwrap();
        std::fs::hard_link(&t, &h).unwrap();
        usage_error(
            &[
                "run",
                s,
                "--trace",
                t.to_str().unwrap(),
                "--html",
                h.to_str().unwrap(),
            ],
            "both name",
        );
        assert_eq!(std::fs::read_to_string(&t).unwrap(), "kept");
    }
    assert!(std::fs::read_to_string(&scenario)
        .unwrap()
        .contains("recipe"));
    let o = lockstep(&["run", s, "--json", "--timeline"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// A reproducer's `expect` is checked at its own seed only: at another seed
/// the run is reported, not judged against it.
#[test]
fn expect_is_checked_at_the_files_seed_only() {
    let file = "../scenarios/gc-pause-split-brain.toml";
    let at_own = lockstep(&["run", file]);
    assert_eq!(at_own.status.code(), Some(1), "{}", stdout(&at_own));
    // A seed at which nothing is violated: judged against `expect`, it
    // would be "did not reproduce" (exit 1).
    let clean = (0..50u64)
        .map(|seed| {
            (
                seed,
                lockstep(&["run", file, "--seed", &seed.to_string(), "--json"]),
            )
        })
        .find(|(_, o)| {
            let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
            v["violations"].as_array().unwrap().is_empty()
        });
    let (seed, o) = clean.expect("a seed without violations among the first 50");
    assert_eq!(o.status.code(), Some(0), "seed {seed}: {}", stdout(&o));
    let text = lockstep(&["run", file, "--seed", &seed.to_string()]);
    assert_eq!(text.status.code(), Some(0));
    assert!(stderr(&text).contains("not checked"), "{}", stderr(&text));
}

/// bench refuses bad figures before it measures anything, and a run that
/// would measure nothing.
#[test]
fn bench_checks_its_arguments_first() {
    let started = std::time::Instant::now();
    usage_error(
        &["bench", "--clients", "abc", "--skip-sim"],
        "--clients takes",
    );
    usage_error(&["bench", "--clients", "3,6", "--skip-sim"], "got '6'");
    usage_error(
        &["bench", "--crashes", "255", "--skip-sim"],
        "--crashes 255",
    );
    usage_error(
        &["bench", "--skip-check", "--skip-sim"],
        "nothing to measure",
    );
    usage_error(&["bench", "--rounds", "0", "--skip-sim"], "1 to 20 rounds");
    usage_error(&["bench", "--rounds", "21", "--skip-sim"], "got 21");
    usage_error(&["bench", "--rounds=-1", "--skip-sim"], "invalid value");
    assert!(
        started.elapsed().as_secs() < 30,
        "an argument error waited for measuring"
    );
}

/// A herd sweep's rows are one per recipe and count; a value given twice
/// is an error, not a duplicated row.
#[test]
fn herd_refuses_repeated_rows() {
    usage_error(&["herd", "--clients", "2,2"], "--clients: 2 is given twice");
    usage_error(
        &[
            "herd",
            "--recipes",
            "unfair-create,unfair-create",
            "--clients",
            "2",
        ],
        "--recipes: unfair-create is given twice",
    );
}

/// A herd row that violates a property exits 1, and stderr says which row
/// (the table is of the herd, not of verdicts).
#[test]
fn herd_says_which_row_violated() {
    let dir = scratch("herd-violation");
    let scenario = dir.join("delayed.toml");
    // Client 0's messages delayed by eleven days: it cannot finish its
    // rounds in time, a progress violation.
    std::fs::write(
        &scenario,
        "recipe = \"fair-predecessor\"\nclients = 3\nrounds = 50\nseed = 1\n\
         [timing]\nsession_timeout_ms = 4000\nthink_ms = [5, 50]\nhold_ms = [10, 40]\nlatency_ms = [0.2, 2.0]\n\
         [[schedule]]\nat_ms = 20\nkind = \"delay\"\nclient = 0\nduration_ms = 1000\nextra_ms = 1000000000\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = lockstep(&[
        "herd",
        "--recipes",
        "unfair-create",
        "--clients",
        "2",
        "--scenario",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("properties were violated in 1 run: delayed-unfair-create-2"),
        "{}",
        stderr(&o)
    );
}

/// A run with no hand-off has no hand-off time: `-`, not `0.000 ms`.
#[test]
fn a_run_without_hand_offs_shows_no_hand_off_time() {
    let dir = scratch("no-hand-off");
    let scenario = dir.join("alone.toml");
    std::fs::write(
        &scenario,
        "recipe = \"fair-predecessor\"\nclients = 1\nrounds = 1\nseed = 1\n",
    )
    .unwrap();
    let o = lockstep(&["run", scenario.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let row = |name: &str| {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap();
        line[name.len()..].trim().to_string()
    };
    assert_eq!(row("hand-off p50 / p99"), "-", "{text}");
    // It waited for nothing, but it did wait: that is measured.
    assert_ne!(row("wait p50 / p99"), "-", "{text}");
}

/// A barrier hands nothing off: its herd row has no hand-off time, in the
/// table (`-`) and in the CSV (empty cells), rather than zero.
#[test]
fn a_herd_row_without_hand_offs_has_no_hand_off_time() {
    let dir = scratch("herd-no-hand-off");
    let out = dir.join("out");
    let o = lockstep(&[
        "herd",
        "--recipes",
        "zk-barrier,fair-predecessor",
        "--clients",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("herd.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let p50 = header.iter().position(|h| *h == "handoff_p50_us").unwrap();
    let cell = |recipe: &str| {
        let line = csv.lines().find(|l| l.starts_with(recipe)).unwrap();
        line.split(',').nth(p50).unwrap().to_string()
    };
    assert_eq!(cell("zk-barrier,"), "", "{csv}");
    assert!(
        cell("fair-predecessor,").parse::<u64>().unwrap() > 0,
        "{csv}"
    );
    let text = stdout(&o);
    let row = text
        .lines()
        .find(|l| l.starts_with("baseline-zk-barrier-3"))
        .unwrap();
    assert!(row.contains(" - "), "{text}");
}

/// No output replaces an input or another output, whatever the spelling.
#[test]
fn outputs_do_not_replace_inputs_or_each_other() {
    let dir = scratch("outputs");
    // A timeline drawn over its own trace.
    let trace = dir.join("t.html");
    let o = lockstep(&[
        "run",
        "../scenarios/healthy.toml",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = std::fs::read(&trace).unwrap();
    let base = dir.join("t");
    usage_error(
        &[
            "report",
            "timeline",
            trace.to_str().unwrap(),
            "--out",
            base.to_str().unwrap(),
        ],
        "is the trace being drawn",
    );
    assert_eq!(
        std::fs::read(&trace).unwrap(),
        before,
        "the trace is intact"
    );
    // A directory is no path without extension (the charts went beside it).
    usage_error(
        &[
            "report",
            "timeline",
            trace.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ],
        "is a directory",
    );
    // A check's page where its ITF traces go.
    let itf = dir.join("itf");
    let page = itf.join("progress.itf.json");
    usage_error(
        &[
            "check",
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--pauses",
            "1",
            "--itf",
            itf.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
        "is where --itf",
    );
    // A page named like a trace of no property is written.
    let page = itf.join("report.itf.json");
    let o = lockstep(&[
        "check",
        "--recipe",
        "unfair-create",
        "--clients",
        "2",
        "--itf",
        itf.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
}

/// A flag that would be ignored is an error, not a silent no-op.
#[test]
fn flags_that_would_do_nothing_are_refused() {
    // An interrupt only where the library returns from one (Redisson's).
    usage_error(
        &[
            "check",
            "--recipe",
            "redis-token",
            "--clients",
            "2",
            "--interrupts",
            "1",
        ],
        "--interrupts: an interrupt returns from an acquisition with its request on the way, \
         which redis-token's library does not model; recipes that do: redis-token:watchdog, \
         redis-token:watchdog-after-unlock",
    );
    usage_error(&["check", "--list", "--recipe", "nope"], "--list");
    usage_error(
        &["report", "--out", "elsewhere", "timeline", "t.jsonl"],
        "cannot be used with",
    );
    usage_error(
        &["bench", "--against", "/bin/true", "--clients", "3"],
        "cannot be used with",
    );
    usage_error(
        &["bench", "--skip-sim", "--clients", "3,3"],
        "3 is given twice",
    );
    usage_error(
        &["bench", "--skip-check", "--rounds", "5"],
        "cannot be used with",
    );
    for recipe in ["zk-barrier", "zk-fifo-queue"] {
        usage_error(
            &["check", "--recipe", recipe, "--clients", "3", "--fencing"],
            "whose clients write nothing",
        );
    }
    let dir = scratch("fenced-barrier");
    let file = dir.join("b.toml");
    std::fs::write(
        &file,
        "recipe = \"zk-barrier\"\nclients = 3\nfencing = true\n",
    )
    .unwrap();
    usage_error(&["run", file.to_str().unwrap()], "`fencing`");
}
