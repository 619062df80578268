//! Recipes as the CLI finds them: the registry, variants, bad names, and the
//! recipe added to prove the architecture open (`lowest-watch`).

mod common;

use common::{lockstep, scratch, stderr};
use std::process::Output;

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// The status `check --json` gave property `name`.
fn property_status(v: &serde_json::Value, name: &str) -> String {
    v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} reported"))["status"]
        .as_str()
        .unwrap()
        .to_string()
}

fn usage_error(args: &[&str], needles: &[&str]) {
    let o = lockstep(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: expected '{n}' in: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn recipes_lists_the_registry_with_variants() {
    let o = lockstep(&["recipes", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "unfair-create",
            "fair-predecessor",
            "etcd-revision",
            "children-watch",
            "lowest-watch",
            "zk-unfair-election",
            "zk-fair-election",
            "etcd-election",
            "zk-barrier",
            "zk-double-barrier",
            "zk-fifo-queue",
            "zk-rwlock",
            "zk-semaphore",
            "redis-setnx",
            "redis-token",
            "redlock",
            "consul-lock",
            "consul-lock-cli",
            "consul-election",
            "consul-semaphore"
        ]
    );
    let apps: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["app"].as_str().unwrap())
        .collect();
    assert_eq!(apps[..5], ["lock"; 5]);
    assert_eq!(apps[5..8], ["election"; 3]);
    assert_eq!(apps[8], "barrier");
    assert_eq!(apps[11..13], ["shared_lock", "semaphore"]);
    assert_eq!(apps[13..18], ["lock"; 5]);
    assert_eq!(apps[18..20], ["election", "semaphore"]);
    let etcd = &v[7]["variants"];
    assert_eq!(etcd[0]["name"], "v3.5");
    assert_eq!(etcd[1]["name"], "checked");
    // (name, test only, the default written out)
    let fair: Vec<(&str, bool, bool)> = v[1]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap(),
                x["test_only"].as_bool().unwrap(),
                x["default"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fair,
        [
            ("zk-docs", false, true),
            ("curator", false, false),
            ("kazoo", false, false),
            ("sync", false, false),
            ("no-guid", false, false),
            ("no-relist", true, false)
        ]
    );
    let mutex = &v[2]["variants"];
    assert_eq!(mutex[0]["name"], "v3.5");
    assert_eq!(mutex[1]["name"], "v3.4");
    assert_eq!(mutex[1]["test_only"], false);
    assert_eq!(mutex[0]["default"], true);
    assert_eq!(mutex[1]["default"], false);
    assert_eq!(mutex[2]["name"], "trylock");
    assert_eq!(mutex[2]["test_only"], false);
}

#[test]
fn unknown_recipes_and_variants_name_the_known_ones() {
    usage_error(
        &["check", "--recipe", "bakery", "--clients", "2"],
        &[
            "unknown recipe 'bakery'",
            "lowest-watch",
            "fair-predecessor",
        ],
    );
    usage_error(
        &[
            "check",
            "--recipe",
            "fair-predecessor",
            "--variant",
            "x",
            "--clients",
            "2",
        ],
        &["unknown variant 'x'", "no-guid", "no-relist"],
    );
    usage_error(
        &["check", "--recipe", "lowest-watch:fast", "--clients", "2"],
        &["unknown variant 'fast'", "no variants"],
    );
    usage_error(
        &[
            "check",
            "--recipe",
            "fair-predecessor:no-guid",
            "--variant",
            "no-relist",
            "--clients",
            "2",
        ],
        &["more than one variant"],
    );
    usage_error(
        &["herd", "--recipes", "lowest-watch:x", "--clients", "2"],
        &["unknown variant 'x'"],
    );
}

#[test]
fn a_variant_given_by_flag_or_by_name_is_the_same_check() {
    let a = json(&lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor",
        "--variant",
        "no-guid",
        "--clients",
        "2",
        "--lost-replies",
        "1",
        "--json",
    ]));
    let b = json(&lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor:no-guid",
        "--clients",
        "2",
        "--lost-replies",
        "1",
        "--json",
    ]));
    let c = json(&lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor",
        "--no-guid",
        "--clients",
        "2",
        "--lost-replies",
        "1",
        "--json",
    ]));
    assert_eq!(a["unique_states"], b["unique_states"]);
    assert_eq!(a["unique_states"], c["unique_states"]);
    let progress = |v: &serde_json::Value| {
        v["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "progress")
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(progress(&a), "violated");
}

#[test]
fn lowest_watch_keeps_exclusion_but_herds_and_matches_its_closed_form() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "lowest-watch",
        "--clients",
        "3",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "herd_bound is violated");
    let v = json(&o);
    let status = |name: &str| property_status(&v, name);
    assert_eq!(status("herd_bound"), "violated");
    assert_eq!(status("mutual_exclusion"), "holds");
    assert_eq!(status("progress"), "holds");
    assert_eq!(status("holder_owns_key"), "holds");

    let dir = scratch("lowest");
    let o = lockstep(&[
        "herd",
        "--recipes",
        "lowest-watch",
        "--clients",
        "2,5,13,40",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    for r in v["rows"].as_array().unwrap() {
        let n = r["clients"].as_u64().unwrap();
        let per: Vec<u64> = r["notifications_per_release"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        let closed: Vec<u64> = (1..=n).map(|k| n - k).collect();
        assert_eq!(per, closed, "lowest-watch with {n} clients");
    }
}

/// Election recipes refuse lock-only settings and lock recipes election
/// ones: exit 2, naming the problem.
#[test]
fn lock_and_election_settings_do_not_mix() {
    usage_error(
        &[
            "check",
            "--recipe",
            "zk-fair-election",
            "--no-guid",
            "--clients",
            "2",
        ],
        &["--no-guid applies only to fair-predecessor"],
    );
    usage_error(
        &[
            "check",
            "--recipe",
            "etcd-election",
            "--variant",
            "v3.4",
            "--clients",
            "2",
        ],
        &["unknown variant 'v3.4'", "v3.5, checked"],
    );
    let dir = scratch("mix");
    let write = |name: &str, body: &str| {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_string()
    };
    let election = write(
        "election.toml",
        "recipe = \"etcd-election\"\nclients = 2\nexpect = [\"mutual_exclusion\"]\n",
    );
    usage_error(
        &["run", &election],
        &[
            "`expect`",
            "'mutual_exclusion' judges the lock application",
            "single_leader",
        ],
    );
    let lock = write(
        "lock.toml",
        "recipe = \"fair-predecessor\"\nclients = 2\nexpect = [\"single_leader\"]\n",
    );
    usage_error(
        &["run", &lock],
        &[
            "'single_leader' judges the election application",
            "mutual_exclusion",
        ],
    );
    let graph_only = write(
        "graph.toml",
        "recipe = \"zk-fair-election\"\nclients = 2\nexpect = [\"followers_agree\"]\n",
    );
    usage_error(
        &["run", &graph_only],
        &["'followers_agree' is no property a run can violate"],
    );
    let guid = write(
        "guid.toml",
        "recipe = \"zk-unfair-election\"\nguid = false\nclients = 2\n",
    );
    usage_error(
        &["run", &guid],
        &["`guid`: applies only to fair-predecessor"],
    );
}

/// `check` on an election recipe reports the election properties.
#[test]
fn check_reports_election_properties() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "etcd-election",
        "--clients",
        "2",
        "--pauses",
        "1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let status = |name: &str| property_status(&v, name);
    assert_eq!(status("elected_with_key"), "violated");
    assert_eq!(status("single_leader"), "violated");
    assert_eq!(status("leader_elected"), "holds");
    assert!(v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["name"] != "mutual_exclusion"));
}

/// `check --list` shows the recipes and their variants, as `recipes` does.
#[test]
fn check_list_shows_recipes_and_variants() {
    let o = lockstep(&["check", "--list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = common::stdout(&o);
    for needle in [
        "fair-predecessor (lock)",
        ":curator",
        ":kazoo",
        ":zk-docs",
        "etcd-revision (lock)",
        ":v3.4",
        "etcd-election (election)",
    ] {
        assert!(out.contains(needle), "{needle} missing:\n{out}");
    }
    usage_error(&["check", "--recipe", "etcd-election"], &["--clients"]);
}

/// Queue and barrier options where they do not belong, a queue without a
/// role, too small a group and an unknown variant: exit 2, naming the
/// problem.
#[test]
fn queue_and_barrier_options_are_checked() {
    usage_error(
        &[
            "check",
            "--recipe",
            "fair-predecessor",
            "--clients",
            "3",
            "--producers",
            "1",
        ],
        &["producers are for queue recipes", "fair-predecessor"],
    );
    // Even 0, which is what a barrier has: given, it is a mistake.
    for producers in ["1", "0"] {
        usage_error(
            &[
                "check",
                "--recipe",
                "zk-barrier",
                "--clients",
                "3",
                "--producers",
                producers,
            ],
            &["--producers: producers are for queue recipes", "barrier"],
        );
    }
    usage_error(
        &[
            "check",
            "--recipe",
            "zk-fifo-queue",
            "--clients",
            "3",
            "--producers",
            "3",
        ],
        &["producers must be at least 1 and fewer than the clients (3)"],
    );
    usage_error(
        &[
            "check",
            "--recipe",
            "zk-fifo-queue",
            "--clients",
            "3",
            "--producers",
            "0",
        ],
        &["producers must be at least 1"],
    );
    usage_error(
        &["check", "--recipe", "zk-fifo-queue:nope", "--clients", "3"],
        &["nope", "take-safe", "lock-safe"],
    );
    usage_error(
        &["check", "--recipe", "zk-barrier", "--clients", "1"],
        &["clients must be between 2 and 5"],
    );
    let dir = scratch("queue-opts");
    let run_refuses = |name: &str, text: &str, needles: &[&str]| {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        usage_error(&["run", file.to_str().unwrap()], needles);
    };
    run_refuses(
        "lock-with-producers.toml",
        "recipe = \"fair-predecessor\"\nclients = 3\nproducers = 1\n",
        &["`producers`", "producers are for queue recipes"],
    );
    run_refuses(
        "queue-all-producers.toml",
        "recipe = \"zk-fifo-queue\"\nclients = 3\nproducers = 5\n",
        &["`producers`", "(got 5)"],
    );
    run_refuses(
        "lock-with-producer-pace.toml",
        "recipe = \"fair-predecessor\"\nclients = 3\n[timing]\nproduce_ms = [5, 5]\n",
        &["`timing.produce_ms`", "is no queue"],
    );
}

/// A semaphore's permits and a shared lock's writers: out of range, or
/// given to a recipe of another kind (even as 0), exit 2 naming the flag
/// or key and what is allowed.
#[test]
fn permits_and_writers_are_checked() {
    let check = |recipe: &str, flag: &str, value: &str| -> Vec<String> {
        ["check", "--recipe", recipe, "--clients", "3", flag, value]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    for permits in ["0", "3"] {
        usage_error(
            &args(&check("zk-semaphore", "--permits", permits)),
            &[
                "--permits:",
                "permits must be at least 1 and fewer than the clients (3)",
                &format!("got {permits}"),
            ],
        );
    }
    for writers in ["0", "3"] {
        usage_error(
            &args(&check("zk-rwlock", "--writers", writers)),
            &[
                "--writers:",
                "writers must be at least 1 and fewer than the clients (3)",
            ],
        );
    }
    usage_error(
        &args(&check("fair-predecessor", "--permits", "0")),
        &["--permits:", "permits are for semaphore recipes", "lock"],
    );
    usage_error(
        &args(&check("zk-semaphore", "--writers", "1")),
        &[
            "--writers:",
            "writers are for shared-lock recipes",
            "semaphore",
        ],
    );
    let dir = scratch("roles");
    let file = dir.join("lock-with-permits.toml");
    std::fs::write(
        &file,
        "recipe = \"fair-predecessor\"\nclients = 3\npermits = 1\n",
    )
    .unwrap();
    usage_error(
        &["run", file.to_str().unwrap()],
        &["`permits`", "permits are for semaphore recipes"],
    );
    let file = dir.join("semaphore-too-many.toml");
    std::fs::write(
        &file,
        "recipe = \"zk-semaphore\"\nclients = 3\npermits = 5\n",
    )
    .unwrap();
    usage_error(&["run", file.to_str().unwrap()], &["`permits`", "got 5"]);
}

/// `--help` and `lockstep recipes` name every application, and `recipes`
/// how many recipes serve each.
#[test]
fn help_and_recipes_name_every_application() {
    let help = common::stdout(&lockstep(&["--help"]));
    let listed = common::stdout(&lockstep(&["recipes"]));
    let first = listed.lines().next().unwrap_or_default();
    for app in models::recipe::App::ALL {
        assert!(
            help.contains(app.name()),
            "{app} missing from --help:\n{help}"
        );
        let served = models::recipes::REGISTRY
            .iter()
            .filter(|r| (r.build)(None).app() == app)
            .count();
        assert!(
            first.contains(&format!("{app} ({served})")),
            "{app} ({served}) missing from: {first}"
        );
    }
}
