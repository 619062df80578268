//! `check --html` (the counterexample viewer) and `check --itf` (Informal
//! Trace Format) as a user and a tool read them: who holds is marked on
//! the diagram, the breaking step says why, rows link to steps; every
//! exported trace reads back with Informal Systems' own ITF reader into
//! typed values.

mod common;

use common::{lockstep, scratch, stderr, stdout};
use itf::Value as Itf;
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `check` with `args`, writing the viewer to `html` and the traces
/// under `itf`; a violation is expected (exit status 1).
fn check_writing(args: &[&str], html: &Path, itf: &Path) -> String {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend([
        "--html",
        html.to_str().unwrap(),
        "--itf",
        itf.to_str().unwrap(),
    ]);
    let o = lockstep(&all);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// How many times `needle` occurs in `hay`.
fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// The viewer of one property's counterexample: holders marked, exactly
/// one breaking step with a reason, every step an anchor the diagram links
/// to, the expand-all control, no Rust `Debug` text; the same page twice.
fn assert_viewer(args: &[&str], property: &str, steps: usize, why_has: &[&str]) {
    let dir = scratch(&format!("viewer-{property}"));
    let html = dir.join("page.html");
    check_writing(args, &html, &dir.join("itf"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(count(&page, "class=\"holder\"") >= 1, "no holder marked");
    assert_eq!(count(&page, "<li id=\""), steps + 1, "a <li> per step");
    assert_eq!(count(&page, "class=\"breaking\""), 1);
    let why = page
        .split("<p class=\"why\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("a why");
    assert!(why.len() > property.len() + 10, "{why}");
    for needle in why_has {
        assert!(why.contains(needle), "{why} lacks {needle}");
    }
    // The breaking <li> holds the why.
    let breaking = page.split("class=\"breaking\"").nth(1).unwrap();
    let li_end = breaking.find("</li>").unwrap();
    assert!(breaking[..li_end].contains("<p class=\"why\">"));
    for n in 0..=steps {
        assert!(
            page.contains(&format!("<li id=\"{property}-step-{n}\"")),
            "{n}"
        );
    }
    for n in 1..=steps {
        assert!(
            page.contains(&format!("<a href=\"#{property}-step-{n}\">")),
            "{n}"
        );
    }
    assert_eq!(count(&page, "id=\"expand-all\""), 1);
    for debug in ["Some(", "None", "SessionId {", "Child {", "Key {", "Node {"] {
        assert!(!page.contains(debug), "Debug text {debug:?} on the page");
    }
    // The headline property comes first in the verdict table.
    let verdicts = page.split("<table class=\"verdicts\">").nth(1).unwrap();
    let first = verdicts.split("<td>").nth(1).unwrap();
    assert!(
        first.starts_with(&format!("<a href=\"#{property}\">")),
        "{first}"
    );
    // Deterministic: the same page again, byte for byte.
    let again = dir.join("again.html");
    check_writing(args, &again, &dir.join("itf2"));
    assert_eq!(page, std::fs::read_to_string(&again).unwrap());
}

/// etcd's phantom leader: the candidate leads on a range answered after its
/// lease expired; the viewer says so at step 10.
#[test]
fn the_phantom_leader_viewer_marks_the_leader_and_says_why_it_breaks() {
    let args = [
        "--recipe",
        "etcd-election",
        "--clients",
        "2",
        "--pauses",
        "1",
        "--property",
        "elected_with_key",
    ];
    assert_viewer(
        &args,
        "elected_with_key",
        10,
        &["client 0", "believes it leads", "owned no key"],
    );
}

/// Kleppmann's pause on the fair lock: two believe they hold.
#[test]
fn the_mutual_exclusion_viewer_marks_both_holders() {
    let args = [
        "--recipe",
        "fair-predecessor",
        "--clients",
        "2",
        "--pauses",
        "1",
        "--property",
        "mutual_exclusion",
    ];
    let dir = scratch("viewer-steps");
    let out = check_writing(&args, &dir.join("p.html"), &dir.join("itf"));
    let steps = out
        .lines()
        .skip_while(|l| !l.starts_with("mutual_exclusion violated"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .count();
    assert_viewer(
        &args,
        "mutual_exclusion",
        steps,
        &[
            "client 0",
            "client 1",
            "believes it holds the lock",
            "two at once",
        ],
    );
    let page = std::fs::read_to_string(dir.join("p.html")).unwrap();
    // The last row marks both holders.
    let last_row = page
        .rsplit("<a href=\"#mutual_exclusion-step-")
        .next()
        .unwrap();
    assert_eq!(count(last_row, "class=\"holder\""), 2, "{last_row}");
}

// The records below are read to check their types and names (each field
// must be there, typed so, and no other): some fields are read no further.

/// A client's record as `check --itf` writes it, read as typed values.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Client {
    process: String,
    link_to_store: String,
    session: String,
    connection: String,
    phase: Phase,
    rounds_done: u64,
    recipe_state: Opt<Json>,
    awaiting_reply_to: Opt<Awaiting>,
    timers: Vec<String>,
    store_to_client: Vec<String>,
    client_to_store: Vec<String>,
    client_to_resource: Vec<String>,
    resource_to_client: Vec<String>,
}

/// A Quint-style option.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "tag", content = "value")]
enum Opt<T> {
    Some(T),
    None,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Awaiting {
    request: String,
    epoch: u64,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "tag", content = "value")]
enum Phase {
    Connecting,
    Thinking,
    Acquiring,
    Holding {
        token: u64,
        granted: u64,
        owned: bool,
        sent: u64,
        acked: u64,
    },
    Releasing,
    Done,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Faults {
    crashes: u64,
    pauses: u64,
    partitions: u64,
    lost_replies: u64,
    restarts: u64,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Write {
    client: u64,
    token: u64,
    hold: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Resource {
    accepted_writes: Vec<Write>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct State {
    #[serde(rename = "mbt::actionTaken")]
    action: String,
    #[serde(rename = "mbt::nondetPicks")]
    picks: Picks,
    step: String,
    clients: BTreeMap<u64, Client>,
    store: Json,
    resource: Resource,
    faults_left: Faults,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Picks {
    client: Opt<u64>,
}

const ACTIONS: [&str; 12] = [
    "init",
    "Deliver",
    "Timeout",
    "Expire",
    "Crash",
    "Pause",
    "Resume",
    "ResumeReconnect",
    "Partition",
    "Heal",
    "Reconnect",
    "LoseReply",
];

fn is_identifier(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Every integer is a `#bigint` (never a plain JSON number, never a
/// string of digits), and every record's field names are identifiers.
fn assert_typed(v: &Itf, at: &str) {
    match v {
        Itf::Number(n) => panic!("{at}: a plain number {n}"),
        Itf::String(s) => assert!(s.parse::<i64>().is_err(), "{at}: a number as text {s:?}"),
        Itf::Record(r) => {
            for (k, v) in r.iter() {
                // A sum type's case is a record of `tag` and `value`.
                assert!(is_identifier(k), "{at}: field {k:?}");
                assert_typed(v, &format!("{at}.{k}"));
            }
        }
        Itf::List(items) => items.iter().for_each(|v| assert_typed(v, at)),
        Itf::Set(s) => s.iter().for_each(|v| assert_typed(v, at)),
        Itf::Tuple(t) => t.iter().for_each(|v| assert_typed(v, at)),
        Itf::Map(m) => m.iter().for_each(|(k, v)| {
            assert_typed(k, at);
            assert_typed(v, at);
        }),
        Itf::Bool(_) | Itf::BigInt(_) | Itf::Unserializable(_) => {}
    }
}

/// Every counterexample of a few checks, at least one per application,
/// read back with the `itf` crate: typed as ITF types values, variables
/// that are identifiers (and Quint's `mbt::` ones), the action in every
/// state, a state per step of the report's counterexample.
#[test]
fn every_itf_trace_reads_back_typed() {
    let checks: [&[&str]; 6] = [
        &[
            "--recipe",
            "unfair-create",
            "--clients",
            "2",
            "--pauses",
            "1",
        ],
        &[
            "--recipe",
            "etcd-election",
            "--clients",
            "2",
            "--pauses",
            "1",
        ],
        &[
            "--recipe",
            "zk-double-barrier",
            "--clients",
            "2",
            "--pauses",
            "1",
        ],
        &[
            "--recipe",
            "zk-fifo-queue:lock-safe",
            "--clients",
            "3",
            "--producers",
            "1",
            "--crashes",
            "1",
        ],
        &[
            "--recipe",
            "zk-rwlock",
            "--clients",
            "3",
            "--writers",
            "1",
            "--pauses",
            "1",
            "--property",
            "rw_exclusion",
        ],
        &[
            "--recipe",
            "zk-semaphore",
            "--clients",
            "2",
            "--permits",
            "1",
            "--pauses",
            "1",
        ],
    ];
    let mut traces = 0;
    for (i, args) in checks.iter().enumerate() {
        let dir = scratch(&format!("itf-{i}"));
        let out = check_writing(args, &dir.join("page.html"), &dir.join("itf"));
        let mut files: Vec<_> = std::fs::read_dir(dir.join("itf"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{args:?}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let property = file.file_name().unwrap().to_str().unwrap();
            let property = property.strip_suffix(".itf.json").unwrap();
            // The crate's own value type, read from the JSON (its decoding
            // of a value into itself cannot take a unit: `{}`).
            let raw: itf::Trace<Itf> = serde_json::from_str(&text).unwrap();
            assert_eq!(raw.meta.format.as_deref(), Some("ITF"));
            for var in &raw.vars {
                assert!(
                    is_identifier(var) || var.starts_with("mbt::"),
                    "{property}: variable {var:?}"
                );
            }
            for s in &raw.states {
                let Itf::Record(vars) = &s.value else {
                    panic!("{property}: a state is no record");
                };
                // Every variable in every state, and no other.
                assert_eq!(vars.len(), raw.vars.len(), "{property}");
                for (var, v) in vars.iter() {
                    assert!(raw.vars.contains(var), "{property}: {var}");
                    assert_typed(v, &format!("{property}: {var}"));
                }
            }
            let typed = itf::trace_from_str::<State>(&text)
                .unwrap_or_else(|e| panic!("{args:?} {property}: {e}"));
            let states = &typed.states;
            for (n, s) in states.iter().enumerate() {
                assert_eq!(s.meta.index, Some(n as u64));
                assert!(
                    ACTIONS.contains(&s.value.action.as_str()),
                    "{}",
                    s.value.action
                );
                assert_eq!(s.value.action == "init", n == 0);
                assert_eq!(matches!(s.value.picks.client, Opt::None), n == 0);
                assert!(!s.value.step.is_empty());
                assert!(s.value.store.get("sessions").is_some());
                assert!(s.value.clients.len() >= 2);
                for c in s.value.clients.values() {
                    assert!(matches!(
                        c.process.as_str(),
                        "running" | "paused" | "crashed"
                    ));
                    assert!(c.session.starts_with("0x"), "{}", c.session);
                }
            }
            // A pause's budget is spent along a trace that pauses.
            let paused = states.iter().any(|s| s.value.action == "Pause");
            let (first, last) = (&states[0].value, &states.last().unwrap().value);
            assert_eq!(
                first.faults_left.pauses - last.faults_left.pauses,
                paused as u64
            );
            // A state per step of the counterexample the report printed.
            let steps = out
                .lines()
                .skip_while(|l| !l.starts_with(&format!("{property} violated")))
                .skip(1)
                .take_while(|l| !l.is_empty() && !l.starts_with("  from"))
                .count();
            assert_eq!(states.len(), steps + 1, "{property}: {out}");
            traces += 1;
        }
    }
    assert!(traces >= 12, "{traces} traces");
}

/// The fair lock's Kleppmann pause: the page shows every verdict and what
/// each step changed; exported, the last state has both
/// clients holding, each with its own token, and the resource's writes
/// are records of numbers.
#[test]
fn the_itf_trace_of_mutual_exclusion_ends_with_two_holders() {
    let dir = scratch("itf-mutex");
    let args = [
        "--recipe",
        "fair-predecessor",
        "--clients",
        "2",
        "--pauses",
        "1",
    ];
    check_writing(&args, &dir.join("p.html"), &dir.join("itf"));
    // The page of the whole check: every verdict, progress too, and what
    // each step changed.
    let page = std::fs::read_to_string(dir.join("p.html")).unwrap();
    for needle in [
        "fair-predecessor with 2 clients",
        "<td>progress</td>",
        "mutual_exclusion violated: shortest counterexample",
        "class=\"changed\"",
        "<svg",
    ] {
        assert!(page.contains(needle), "{needle}");
    }
    let text = std::fs::read_to_string(dir.join("itf/mutual_exclusion.itf.json")).unwrap();
    let trace = itf::trace_from_str::<State>(&text).unwrap();
    let last = &trace.states.last().unwrap().value;
    let tokens: Vec<u64> = last
        .clients
        .values()
        .filter_map(|c| match c.phase {
            Phase::Holding { token, .. } => Some(token),
            _ => None,
        })
        .collect();
    assert_eq!(tokens.len(), 2, "{last:?}");
    assert_ne!(tokens[0], tokens[1]);
    assert_eq!(last.faults_left.pauses, 0);
    assert!(last
        .resource
        .accepted_writes
        .iter()
        .all(|w| w.token > 0 && w.hold > 0));
    assert_eq!(last.faults_left.crashes + last.faults_left.partitions, 0);
}
