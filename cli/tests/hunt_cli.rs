//! `run`, `hunt` and `replay` under adversarial input: huge seed ranges,
//! absurd thread counts, bad output paths, tampered or mismatched results,
//! reproducers that no longer reproduce. Each used to panic, hang, allocate
//! without bound or give a wrong answer.

mod common;

use common::{lockstep, scratch, stderr, stdout};
use std::path::Path;

fn scenario(name: &str) -> String {
    format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

fn usage_error(args: &[&str], says: &str) {
    let o = lockstep(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(
        stderr(&o).contains(says),
        "{args:?}: expected '{says}' in {}",
        stderr(&o)
    );
}

/// Runs a hunt with `--json` and writes its result to `dir/name`.
fn shard(dir: &Path, name: &str, file: &str, seeds: &str, shard: Option<&str>) -> String {
    let mut args = vec!["hunt", file, "--seeds", seeds, "--json", "--jobs", "2"];
    if let Some(s) = shard {
        args.extend(["--shard", s]);
    }
    let o = lockstep(&args);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let path = dir.join(name);
    std::fs::write(&path, &o.stdout).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn huge_seed_ranges_start_at_once_and_use_no_memory_per_seed() {
    // One shard of 10^11 seeds is 1,000 seeds: computed, never listed (this
    // used to walk the whole range, or allocate 800 GB).
    let o = lockstep(&[
        "hunt",
        &scenario("healthy"),
        "--seeds",
        "0..100000000000",
        "--shard",
        "1/100000000",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seeds_run"], 1000);
    // The top of the seed space: no overflow at 2^64 − 1.
    let o = lockstep(&[
        "hunt",
        &scenario("healthy"),
        "--seeds",
        "18446744073709551605..18446744073709551615",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seeds_run"], 10);
    usage_error(
        &[
            "hunt",
            &scenario("healthy"),
            "--seeds",
            "0..18446744073709551616",
        ],
        "is not a seed",
    );
}

#[test]
fn absurd_thread_counts_are_refused() {
    usage_error(
        &[
            "hunt",
            &scenario("healthy"),
            "--seeds",
            "0..10",
            "--jobs",
            "10000",
        ],
        "--jobs must be between 1 and 1024",
    );
}

#[test]
fn out_without_shrink_and_unwritable_out_are_refused_before_the_hunt() {
    let dir = scratch("out");
    usage_error(
        &[
            "hunt",
            &scenario("healthy"),
            "--seeds",
            "0..10",
            "--out",
            dir.to_str().unwrap(),
        ],
        "without --shrink it does nothing",
    );
    // A path under a regular file cannot be a directory.
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("sub");
    usage_error(
        &[
            "hunt",
            &scenario("gc-pause-split-brain"),
            "--seeds",
            "0..100000000",
            "--shrink",
            "--out",
            bad.to_str().unwrap(),
        ],
        bad.to_str().unwrap(),
    );
}

#[test]
fn shrinking_above_two_to_the_63_writes_a_reproducer_that_replays() {
    let dir = scratch("big-seed");
    let o = lockstep(&[
        "hunt",
        &scenario("gc-pause-split-brain"),
        "--seeds",
        "18446744073709551515..18446744073709551615",
        "--shrink",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let repro = v["reproducer"].as_str().expect("a reproducer").to_string();
    let text = std::fs::read_to_string(&repro).unwrap();
    assert!(text.contains("seed = \"1844674407370955"), "{text}");
    assert!(text.contains("expect = ["), "{text}");
    let o = lockstep(&["replay", &repro]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("VIOLATED"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("did not reproduce"), "{}", stdout(&o));
}

#[test]
fn a_reproducer_that_no_longer_reproduces_says_so() {
    let dir = scratch("no-repro");
    let healthy = std::fs::read_to_string(scenario("healthy")).unwrap();
    let file = dir.join("claims-split-brain.toml");
    let claims = healthy.replace("expect = []", "expect = [\"mutual_exclusion\"]");
    assert_ne!(claims, healthy);
    std::fs::write(&file, claims).unwrap();
    let o = lockstep(&["replay", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "did not reproduce: expected mutual_exclusion violated, this run violated nothing"
        ),
        "{}",
        stdout(&o)
    );
    let o = lockstep(&["replay", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["reproduced"], false);
    // An expectation that names no property is a scenario error.
    let bad = dir.join("bad-expect.toml");
    std::fs::write(
        &bad,
        healthy.replace("expect = []", "expect = [\"split_brain\"]"),
    )
    .unwrap();
    usage_error(&["replay", bad.to_str().unwrap()], "split_brain");
}

#[test]
fn a_time_limit_is_reported_as_such() {
    let dir = scratch("limit");
    let healthy = std::fs::read_to_string(scenario("healthy")).unwrap();
    let file = dir.join("short.toml");
    std::fs::write(&file, format!("duration_ms = 100\n{healthy}")).unwrap();
    let o = lockstep(&["run", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("run ended: time limit reached at 0.100 s"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("VIOLATED"), "{}", stdout(&o));
}

#[test]
fn the_trace_streams_to_its_file_and_a_bad_path_fails_first() {
    let dir = scratch("trace");
    let trace = dir.join("t.jsonl");
    let o = lockstep(&[
        "run",
        &scenario("gc-pause-split-brain"),
        "--trace",
        trace.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines = sim::trace::parse_lines(&text).unwrap();
    assert_eq!(
        sim::trace::hash(&lines),
        v["trace_hash"].as_str().unwrap(),
        "the file is the hashed trace"
    );
    let bad = dir.join("no-such-dir").join("t.jsonl");
    usage_error(
        &[
            "run",
            &scenario("healthy"),
            "--trace",
            bad.to_str().unwrap(),
        ],
        bad.to_str().unwrap(),
    );
}

#[test]
fn merge_refuses_what_does_not_belong_together() {
    let dir = scratch("merge");
    let gc = scenario("gc-pause-split-brain");
    let s1 = shard(&dir, "s1.json", &gc, "0..90", Some("1/3"));
    let s2 = shard(&dir, "s2.json", &gc, "0..90", Some("2/3"));
    let s3 = shard(&dir, "s3.json", &gc, "0..90", Some("3/3"));
    let full = shard(&dir, "full.json", &gc, "0..90", None);
    let other_n = shard(&dir, "n2.json", &gc, "0..90", Some("1/2"));

    // Complete: the same as the full run.
    let o = lockstep(&["hunt", "--merge", &s1, &s2, &s3, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let merged: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let whole: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&full).unwrap()).unwrap();
    assert_eq!(merged["seeds_run"], 90);
    assert_eq!(merged["violating_seeds"], whole["violating_seeds"]);

    usage_error(&["hunt", "--merge", &s1, &s1, &s2, &s3], "given twice");
    usage_error(&["hunt", "--merge", &s1, &other_n], "overlap");
    usage_error(&["hunt", "--merge", &full, &s1], "not a shard");
    // One range, however it is spaced.
    let mut spaced: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&s2).unwrap()).unwrap();
    spaced["seeds"] = "0..90 ".into();
    let s2_spaced = dir.join("s2-spaced.json");
    std::fs::write(&s2_spaced, spaced.to_string()).unwrap();
    let o = lockstep(&["hunt", "--merge", &s1, s2_spaced.to_str().unwrap(), &s3]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    // A lone shard is not shown as complete.
    let o = lockstep(&["hunt", "--merge", &s1, &s3]);
    assert!(
        stdout(&o).contains("incomplete: 1 shard missing: 2/3"),
        "{}",
        stdout(&o)
    );
    assert_ne!(o.status.code(), Some(0));

    // The same name, different content: the fenced twin renamed.
    let twin = dir.join("gc-pause-split-brain.toml");
    std::fs::copy(scenario("gc-pause-split-brain-fenced"), &twin).unwrap();
    let t2 = shard(
        &dir,
        "t2.json",
        twin.to_str().unwrap(),
        "0..90",
        Some("2/3"),
    );
    usage_error(&["hunt", "--merge", &s1, &t2], "not the same scenario file");
}

#[test]
fn merge_refuses_tampered_results() {
    let dir = scratch("tamper");
    let gc = scenario("gc-pause-split-brain");
    let good = shard(&dir, "good.json", &gc, "0..60", Some("1/2"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    assert!(
        !v["violating_seeds"].as_array().unwrap().is_empty(),
        "the scenario violates"
    );
    let tamper = |name: &str, edit: &dyn Fn(&mut serde_json::Value), says: &str| {
        let mut t = v.clone();
        edit(&mut t);
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string(&t).unwrap()).unwrap();
        usage_error(&["hunt", "--merge", path.to_str().unwrap()], says);
    };
    let last = v["violating_seeds"].as_array().unwrap().len() - 1;
    tamper(
        "outside.json",
        &|t| t["violating_seeds"][last] = 62.into(),
        "seed 62, which is not among the seeds run",
    );
    tamper(
        "other-shard.json",
        &|t| t["violating_seeds"] = serde_json::json!([1]),
        "seed 1, which is not among the seeds run",
    );
    tamper(
        "unsorted.json",
        &|t| t["violating_seeds"] = serde_json::json!([4, 2]),
        "not sorted",
    );
    tamper(
        "invented.json",
        &|t| t["by_property"]["split_brain"] = serde_json::json!([0]),
        "split_brain",
    );
    tamper(
        "count.json",
        &|t| t["seeds_run"] = 31.into(),
        "seeds_run is 31",
    );
    tamper(
        "wraps.json",
        &|t| t["seeds_run"] = serde_json::json!(18446744073709551615u64),
        "seeds_run",
    );
    tamper("unknown.json", &|t| t["extra"] = 1.into(), "unknown field");
    tamper(
        "hash.json",
        &|t| t["scenario_hash"] = "zzz".into(),
        "scenario_hash 'zzz'",
    );
    tamper(
        "inconsistent.json",
        &|t| t["by_property"] = serde_json::json!({}),
        "not exactly the seeds listed by_property",
    );
    let property = v["by_property"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    tamper(
        "emptied.json",
        &|t| t["by_property"][&property] = serde_json::json!([]),
        "lists no seeds",
    );
    tamper(
        "bogus-reproducer.json",
        &|t| t["reproducers"] = serde_json::json!({ "resource_exclusion_x": "x" }),
        "which no seed of this result violated",
    );
    tamper(
        "stray-reproducer.json",
        &|t| t["reproducer"] = "/etc/passwd".into(),
        "is not among the reproducers",
    );
}
