//! A Redis replica at the command line: the failover scenario runs from
//! its shipped name and shows its expected outcome, and replication
//! settings that would misbehave are refused with status 2, naming the
//! key.

mod common;

use common::{lockstep, scratch, stderr, stdout};

#[test]
fn the_failover_scenarios_run_from_their_shipped_names() {
    let o = lockstep(&["run", "redis-failover-lost-lock"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("replica: master 0's changes reach it 50–150 ms later"),
        "{out}"
    );
    assert!(out.contains("VIOLATED mutual_exclusion"), "{out}");
    let o = lockstep(&["run", "redis-failover-lost-lock-wait"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("no violations"), "{}", stdout(&o));
}

#[test]
fn bad_replication_settings_exit_2_naming_the_key() {
    let dir = scratch("replication");
    let cases = [
        (
            "inverted",
            "replica = true\n[timing]\nreplication_ms = [9, 3]\n",
            "`timing.replication_ms`: low 9 is above high 3",
        ),
        (
            "negative",
            "replica = true\n[timing]\nreplication_ms = [-5, 3]\n",
            "replication_ms",
        ),
        (
            "past-wait",
            "replica = true\n[timing]\nreplication_ms = [1, 500]\n",
            "`timing.replication_ms`: must stay below",
        ),
        (
            "no-replica",
            "[timing]\nreplication_ms = [1, 5]\n",
            "`timing.replication_ms`: is the lag",
        ),
        (
            "failover-alone",
            "[[schedule]]\nat_ms = 5\nkind = \"failover\"\nmaster = 0\n",
            "`replica`",
        ),
    ];
    for (name, body, says) in cases {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(
            &file,
            format!("recipe = \"redis-token\"\nclients = 2\n{body}"),
        )
        .unwrap();
        let o = lockstep(&["run", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{name}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{name}: {}", stderr(&o));
    }
}

/// An ensemble's servers and lag bound at the command line: a check over
/// three servers runs and says so; bad settings exit 2 naming the flag.
#[test]
fn ensemble_flags_run_and_bad_ones_exit_2_naming_the_flag() {
    let o = lockstep(&[
        "check",
        "--recipe",
        "fair-predecessor",
        "--clients",
        "2",
        "--servers",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("3 servers (followers at most 2 behind)"),
        "{}",
        stdout(&o)
    );
    for (args, says) in [
        (&["--servers", "2"][..], "--servers: servers must be odd"),
        (&["--servers", "0"][..], "--servers: servers must be odd"),
        (
            &["--servers", "9"][..],
            "--servers: servers must be odd, 1 to 7",
        ),
        (
            &["--max-lag", "4"][..],
            "--max-lag: max-lag bounds a follower's lag",
        ),
        (
            &["--servers", "3", "--max-lag", "0"][..],
            "--max-lag: max-lag must be 1 to 8",
        ),
        (
            &["--servers", "3", "--time", "ticks"][..],
            "--servers: the timed checker",
        ),
        (
            &["--local-sessions"][..],
            "--local-sessions: local sessions are a follower's",
        ),
        (
            &["--isolations", "1"][..],
            "--isolations: an isolation cuts a follower off",
        ),
        (
            &["--mutes", "1"][..],
            "--mutes: a mute holds a follower's half of its link",
        ),
    ] {
        let mut all = vec!["check", "--recipe", "fair-predecessor", "--clients", "2"];
        all.extend(args);
        let o = lockstep(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}");
        assert!(stderr(&o).contains(says), "{all:?}: {}", stderr(&o));
    }
    let o = lockstep(&[
        "check",
        "--recipe",
        "redis-token",
        "--clients",
        "2",
        "--servers",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("ZooKeeper's or etcd's"),
        "{}",
        stderr(&o)
    );
    // ZooKeeper's own: an etcd cluster has no local sessions (an isolated
    // member it has: `--isolations` is taken), and no mute (Raft has no
    // syncLimit to drop a member by).
    for (flag, says) in [
        (
            &["--local-sessions"][..],
            "--local-sessions: etcd-revision talks to Etcd",
        ),
        (
            &["--mutes", "1"][..],
            "--mutes: etcd-revision talks to Etcd: a mute is a ZooKeeper ensemble's",
        ),
    ] {
        let mut all = vec![
            "check",
            "--recipe",
            "etcd-revision",
            "--clients",
            "2",
            "--servers",
            "3",
        ];
        all.extend(flag);
        let o = lockstep(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}");
        assert!(stderr(&o).contains(says), "{all:?}: {}", stderr(&o));
    }
    // A lag fault on one server, in a scenario file.
    let dir = std::env::temp_dir().join(format!("lockstep-lag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lag.toml");
    std::fs::write(
        &file,
        "recipe = \"fair-predecessor\"\nclients = 2\n\
         [[schedule]]\nat_ms = 10\nkind = \"lag\"\nserver = 1\nduration_ms = 100\n",
    )
    .unwrap();
    let o = lockstep(&["run", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("schedule[0].kind") && stderr(&o).contains("one server has none"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}
