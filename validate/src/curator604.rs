//! CURATOR-604 on the real ZooKeeper ensemble: the scenarios
//! `curator-604-stale-view-double-lock` (local sessions) and its twin
//! `curator-604-global-sessions` replayed with Curator 5.4's own
//! `InterProcessMutex` (`CuratorPause.java`), beside the model's runs of the
//! two files, compared on facts of order.
//!
//! The model's client 0 (A) starts on server 1 and its reconnect goes to
//! server 2, whose commits lag; client 1 (B) is on server 2. With local
//! sessions that is the real server 2 (`localSessionsEnabled`), and A
//! starts on real server 1. With global sessions (ZooKeeper's default,
//! which the real server 1 has) the two followers swap roles: B and the lag
//! on real server 1, A starting on real server 2 (its first ephemeral node
//! makes its session a global one). A's handles take their servers in that
//! order (`ordered`).
//!
//! 1. B takes the lock; A queues behind it.
//! 2. A is stopped (SIGSTOP) for the file's pause; B, told to, releases
//!    and queues again, behind A's node.
//! 3. The lagging server's commits are kept back ([`Links::lag`]: the
//!    leader's heartbeats, proposals and revalidation answers pass).
//! 4. The leader expires A's session and deletes its node; A resumes, its
//!    library reconnects to the lagging server, is told its session
//!    expired (LOST), and opens a new one there. A local session opens at
//!    once and lists A's old node first: A holds on a node the leader has
//!    deleted. A global one is not answered there until the server has
//!    applied its creation, behind the expiry (had the lag outlasted the
//!    client's connect timeout, the client would have given that server up
//!    and opened the session elsewhere: where it opened is reported);
//!    either way A's node is gone from its listing, and A queues again.
//! 5. The lag ends when the file's does, after A resumed: the lagging
//!    server applies the expiry, B's watch fires, and B takes the lock
//!    again — beside A, with local sessions.
//!
//! The real run's schedule is read off the file ([`Schedule`]).

use crate::ensemble::{Ensembles, ZkEnsemble};
use crate::faults::{has, until, verdict, Harness, Library, Readers};
use crate::linkproxy::Links;
use crate::zkproxy::{now_s, sessions_opened, Proxy};
use models::client::Connection;
use serde::Serialize;
use sim::scenario::{FaultKind, Scenario};
use sim::trace::{FollowerChange, TraceEvent, TraceLine};
use std::time::{Duration, Instant};

/// How long the run is watched after B takes the lock again, seconds.
const WATCHED_S: f64 = 1.5;

/// The real run's schedule, read off the scenario file, so that the two
/// cannot drift apart.
struct Schedule {
    /// The clients' session timeout, seconds (as `CuratorPause.java` takes it).
    session_s: String,
    /// How long A is stopped.
    pause: Duration,
    /// B's release, after A was stopped (B's hold less when the pause struck).
    release_after: Duration,
    /// The lag's end, after A resumed.
    lag_after_resume: Duration,
}

impl Schedule {
    fn of(scenario: &Scenario) -> Result<Schedule, String> {
        let raw = &scenario.source;
        let faults = raw.schedule.as_deref().unwrap_or_default();
        let pause = faults
            .iter()
            .filter(|f| f.kind == FaultKind::Pause && f.client == 0)
            .max_by_key(|f| f.duration_ms)
            .ok_or("the file pauses no client 0")?;
        let lag = faults
            .iter()
            .find(|f| f.kind == FaultKind::Lag)
            .ok_or("the file lags no server")?;
        let timing = raw.timing.as_ref().ok_or("the file has no [timing]")?;
        let session = timing.session_timeout_ms.ok_or("no session_timeout_ms")?;
        let hold = timing.hold_ms.ok_or("no hold_ms")?[0];
        let pause_end = pause.at_ms + pause.duration_ms.unwrap_or(0);
        let lag_end = lag.at_ms + lag.duration_ms.unwrap_or(0);
        Ok(Schedule {
            session_s: format!("{}", session as f64 / 1000.0),
            pause: Duration::from_millis(pause.duration_ms.unwrap_or(0)),
            release_after: Duration::from_millis(hold.saturating_sub(pause.at_ms)),
            lag_after_resume: Duration::from_millis(lag_end.saturating_sub(pause_end)),
        })
    }
}

/// Which of the two scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sessions {
    Local,
    Global,
}

impl Sessions {
    pub const ALL: [Sessions; 2] = [Sessions::Local, Sessions::Global];

    pub fn scenario(self) -> &'static str {
        match self {
            Sessions::Local => "curator-604-stale-view-double-lock",
            Sessions::Global => "curator-604-global-sessions",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Sessions::Local => {
                include_str!("../../scenarios/curator-604-stale-view-double-lock.toml")
            }
            Sessions::Global => include_str!("../../scenarios/curator-604-global-sessions.toml"),
        }
    }

    fn parse(self) -> Result<Scenario, String> {
        crate::twin::parse(
            &format!("scenarios/{}.toml", self.scenario()),
            self.source(),
        )
    }

    /// The real servers (`run.sh`'s numbers, 1 up) that play the model's
    /// servers 1 (A's first) and 2 (B's, the one that lags).
    fn servers(self) -> (usize, usize) {
        match self {
            Sessions::Local => (1, 2),
            Sessions::Global => (2, 1),
        }
    }
}

/// One run, real or simulated: seconds since B first took the lock.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Story {
    /// A stopped, from, until.
    pub pause: (f64, f64),
    /// The lagging server's commits kept back, from, until.
    pub lag: (f64, f64),
    /// A's node gone at the leader (its session expired there).
    pub a_expired: Option<f64>,
    /// A's library said LOST.
    pub a_lost: Option<f64>,
    /// A took the lock.
    pub a_holds: Option<f64>,
    /// A stopped believing it holds (`None`: not while watched).
    pub a_released: Option<f64>,
    /// B took the lock the second time.
    pub b_again: Option<f64>,
    /// Where A's sessions opened after B first held, and when (real runs:
    /// the servers as `run.sh` numbers them, as A's proxies saw it).
    pub a_sessions: Vec<(f64, usize)>,
    /// The end of what was watched.
    pub end: f64,
}

/// What a real run and the model's are compared on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub a_told_lost: bool,
    pub a_held_after_its_node_was_gone: bool,
    pub a_held_while_the_server_lagged: bool,
    pub b_took_it_again_only_after_the_lag: bool,
    pub both_at_once: bool,
}

impl Story {
    pub fn facts(&self) -> Facts {
        let a_until = self.a_released.unwrap_or(self.end);
        Facts {
            a_told_lost: self.a_lost.is_some(),
            a_held_after_its_node_was_gone: matches!(
                (self.a_expired, self.a_holds),
                (Some(e), Some(h)) if e < h
            ),
            a_held_while_the_server_lagged: self
                .a_holds
                .is_some_and(|h| self.lag.0 < h && h < self.lag.1),
            b_took_it_again_only_after_the_lag: self.b_again.is_some_and(|b| b > self.lag.1),
            both_at_once: matches!(
                (self.a_holds, self.b_again),
                (Some(a), Some(b)) if a < self.end && b < a_until
            ),
        }
    }

    /// The run's events in time order.
    pub fn order(&self) -> String {
        let mut ev: Vec<(f64, &str)> = vec![
            (self.pause.0, "A stopped"),
            (self.lag.0, "lag"),
            (self.pause.1, "A resumes"),
            (self.lag.1, "lag ends"),
        ];
        for (t, what) in [
            (self.a_expired, "A's session expires"),
            (self.a_lost, "A LOST"),
            (self.a_holds, "A holds"),
            (self.b_again, "B holds again"),
        ] {
            if let Some(t) = t {
                ev.push((t, what));
            }
        }
        ev.sort_by(|x, y| x.0.total_cmp(&y.0));
        ev.iter().map(|e| e.1).collect::<Vec<_>>().join(" < ")
    }
}

/// One scenario: the real run beside the model's.
#[derive(Clone, Debug, Serialize)]
pub struct Experiment {
    pub sessions: Sessions,
    pub real: Option<Story>,
    pub model: Option<Story>,
    pub model_violated: Vec<String>,
    pub error: Option<String>,
}

impl Experiment {
    pub fn agrees(&self) -> bool {
        match (&self.real, &self.model, &self.error) {
            (Some(r), Some(m), None) => r.facts() == m.facts(),
            _ => false,
        }
    }
}

/// Runs both scenarios on the ensembles' ZooKeeper, if they have one.
pub fn run_all(e: &Ensembles) -> Vec<Experiment> {
    let Some(ens) = &e.zk else {
        return Vec::new();
    };
    let links = &e.links;
    Sessions::ALL
        .iter()
        .map(|&sessions| {
            let (model, model_violated, model_err) = match model_run(sessions) {
                Ok((s, v)) => (Some(s), v, None),
                Err(e) => (None, Vec::new(), Some(format!("the model's run: {e}"))),
            };
            // Blocking work (processes, signals, sleeps, polls) on this
            // worker, which the runtime can spare: the clients' sessions go
            // on on its other threads.
            let real = tokio::task::block_in_place(|| real_run(ens, links, sessions));
            let errors: Vec<String> = [real.as_ref().err().cloned(), model_err]
                .into_iter()
                .flatten()
                .collect();
            let x = Experiment {
                sessions,
                error: (!errors.is_empty()).then(|| errors.join("; ")),
                real: real.ok(),
                model,
                model_violated,
            };
            eprintln!(
                "{:<40} {}",
                format!("curator {}", sessions.scenario()),
                verdict(x.error.as_deref(), x.agrees())
            );
            x
        })
        .collect()
}

/// The model's run of the shipped file, watched until [`WATCHED_S`] after
/// B takes the lock again, as the real run is.
fn model_run(sessions: Sessions) -> Result<(Story, Vec<String>), String> {
    let run = crate::twin::run(&sessions.parse()?);
    Ok((story_of(&run.outcome.trace)?, run.violated))
}

fn story_of(trace: &[TraceLine]) -> Result<Story, String> {
    let holds = |c: u16| {
        trace.iter().filter_map(move |l| match l.event {
            TraceEvent::Hold { client, .. } if client == c => Some(l.t),
            _ => None,
        })
    };
    let b_first = holds(1).next().ok_or("client 1 never held")?;
    let b_again = holds(1).nth(1);
    let s = |t: u64| (t as f64 - b_first as f64) / 1e6;
    let end = b_again.map_or(trace.last().map_or(0, |l| l.t), |b| {
        b + (WATCHED_S * 1e6) as u64
    });
    let seen = &trace[..trace.partition_point(|l| l.t <= end)];
    let find = |pick: &dyn Fn(&TraceEvent) -> bool| seen.iter().find(|l| pick(&l.event));
    let pause = seen
        .iter()
        .filter_map(|l| match l.event {
            TraceEvent::Fault {
                client: 0,
                duration_us: Some(d),
                ..
            } => Some((l.t, l.t + d)),
            _ => None,
        })
        .max_by_key(|p| p.1 - p.0)
        .ok_or("client 0 was never paused")?;
    let lag = seen
        .iter()
        .find_map(|l| match l.event {
            TraceEvent::Follower {
                change: FollowerChange::Lags { duration_us },
                ..
            } => Some((l.t, l.t + duration_us)),
            _ => None,
        })
        .ok_or("no server lagged")?;
    let a_holds = holds(0).find(|&t| t <= end);
    Ok(Story {
        pause: (s(pause.0), s(pause.1)),
        lag: (s(lag.0), s(lag.1)),
        a_expired: find(&|e| matches!(e, TraceEvent::Expire { client: 0, .. })).map(|l| s(l.t)),
        a_lost: find(&|e| {
            matches!(
                e,
                TraceEvent::Connection {
                    client: 0,
                    state: Connection::Lost
                }
            )
        })
        .map(|l| s(l.t)),
        a_holds: a_holds.map(s),
        a_released: a_holds.and_then(|h| {
            seen.iter()
                .find(|l| l.t > h && matches!(l.event, TraceEvent::Release { client: 0 }))
                .map(|l| s(l.t))
        }),
        b_again: b_again.filter(|&b| b <= end).map(s),
        a_sessions: Vec::new(),
        end: s(end),
    })
}

fn real_run(ens: &ZkEnsemble, links: &Links, sessions: Sessions) -> Result<Story, String> {
    let who = format!("curator {}", sessions.scenario());
    let plan = Schedule::of(&sessions.parse()?)?;
    let path = format!("/lockstep-{}", sessions.scenario());
    let (first, lagging) = sessions.servers();
    let server = |n: usize| ens.servers[n - 1].as_str();
    let leader = server(3);
    crate::isolation::settled(ens)?;
    crate::faults::clear(leader, &path)?;
    // Servers 1, 2 and 3, to poll what each lists.
    let readers = Readers::open(&[server(1), server(2), leader])?;
    let everywhere = |n: usize| (0..3).all(|i| readers.children(i, &path) == n);
    let mut b = Harness::start(
        Library::Curator,
        server(lagging),
        "again",
        &plan.session_s,
        &path,
        false,
    )?;
    if !b.wait(Duration::from_secs(60), |l| has(l, "ACQUIRED")) {
        return Err(format!("{who}: B never took the lock: {}", b.stderr_tail()));
    }
    // A through a proxy a server, taken in order: where its sessions open
    // is seen.
    let order = [first, lagging, 3];
    let proxies = order
        .map(|n| Proxy::start(server(n)))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let connect: Vec<String> = proxies.iter().map(Proxy::endpoint).collect();
    let a = Harness::start(
        Library::Curator,
        &connect.join(","),
        "hold",
        &plan.session_s,
        &path,
        true,
    )?;
    if !until(Duration::from_secs(60), || everywhere(2)) {
        return Err(format!(
            "{who}: A never queued behind B: {}",
            a.stderr_tail()
        ));
    }
    if has(&a.lines(), "ACQUIRED") || has(&b.lines(), "RELEASED") {
        return Err(format!(
            "{who}: the lock changed hands before A was stopped"
        ));
    }
    let pause_from = now_s();
    a.signal("-STOP")?;
    let resume = Instant::now() + plan.pause;
    // A's session ends at the leader whenever it does: watched from here.
    let mut a_expired = None;
    let mut expiry = || {
        if a_expired.is_none() && readers.children(2, &path) == 1 {
            a_expired = Some(now_s());
        }
    };
    std::thread::sleep(plan.release_after);
    let requeued = b.tell("release").is_ok()
        && until(Duration::from_secs(10), || {
            has(&b.lines(), "RELEASED") && everywhere(2)
        });
    if !requeued {
        let _ = a.signal("-CONT");
        return Err(format!("{who}: B never queued again: {}", b.stderr_tail()));
    }
    let lag_from = now_s();
    links.lag(&[format!("zk{lagging}")]);
    while Instant::now() < resume {
        expiry();
        std::thread::sleep(Duration::from_millis(50));
    }
    let cont = a.signal("-CONT");
    let pause_until = now_s();
    let lag_end = Instant::now() + plan.lag_after_resume;
    while Instant::now() < lag_end {
        expiry();
        std::thread::sleep(Duration::from_millis(50));
    }
    links.release();
    let lag_until = now_s();
    let again = b.wait(Duration::from_secs(10), |l| {
        l.iter().filter(|x| x.1 == "ACQUIRED").count() == 2
    });
    std::thread::sleep(Duration::from_secs_f64(WATCHED_S + 0.3));
    let (a_lines, b_lines) = (a.lines(), b.lines());
    let a_err = a.stderr_tail();
    drop(a);
    drop(b);
    cont?;
    if !again {
        return Err(format!("{who}: B never took the lock again: {a_err}"));
    }
    let b_acquired: Vec<f64> = b_lines
        .iter()
        .filter(|l| l.1 == "ACQUIRED")
        .map(|l| l.0)
        .collect();
    let t0 = b_acquired[0];
    let s = |t: f64| t - t0;
    let b_again = b_acquired[1];
    let end = b_again + WATCHED_S;
    // What A did once resumed, while watched.
    let a_line = |what: &str| {
        a_lines
            .iter()
            .find(|l| l.1 == what && l.0 >= pause_until && l.0 <= end)
            .map(|l| s(l.0))
    };
    let mut a_sessions: Vec<(f64, usize)> = proxies
        .iter()
        .zip(order)
        .flat_map(|(p, n)| {
            sessions_opened(&p.events())
                .map(|at| (s(at), n))
                .collect::<Vec<_>>()
        })
        .collect();
    a_sessions.sort_by(|x, y| x.0.total_cmp(&y.0));
    Ok(Story {
        pause: (s(pause_from), s(pause_until)),
        lag: (s(lag_from), s(lag_until)),
        a_expired: a_expired.map(s),
        a_lost: a_line("STATE LOST"),
        a_holds: a_line("ACQUIRED"),
        // Curator's lock object never gives a lock up by itself.
        a_released: a_line("BELIEF false"),
        b_again: Some(s(b_again)),
        a_sessions,
        end: s(end),
    })
}

/// The report's section.
pub fn section(experiments: &[Experiment]) -> String {
    let mut md = format!(
        "\n## CURATOR-604 on the real ensemble, beside the model\n\n\
The scenarios `curator-604-stale-view-double-lock` (local sessions) and `curator-604-global-sessions` replayed on the real ZooKeeper ensemble with Curator 5.4's own `InterProcessMutex` (`validate/CuratorPause.java`), beside the model's runs of the two files as shipped. The real run follows the file's schedule, read off it: the session timeout; how long A is stopped; B's release, the file's hold less when A is stopped after B took the lock; the lag's end, after A resumes. B (role `again`) takes the lock on the server that will lag: real server 2, which has `localSessionsEnabled`; for the global twin real server 1, the followers swapping roles. A (its handles taking the other follower, then the lagging one, then the leader, each through a proxy of its own) queues behind B and is stopped (SIGSTOP); B is told to release, and queues again behind A's node; the lagging server's commits are then kept back (heartbeats, proposals and the leader's revalidation answers pass: a slow commit processor); A resumes when its pause ends; the lag ends when the file's does. The leader's expiry of A's session is watched for throughout (A's node gone there). Times are seconds since B first took the lock; the real run is watched until {WATCHED_S} s after B takes the lock again, the model's likewise. Compared: A's library said LOST; A took the lock after the leader had deleted its node; A took it while the server lagged; B took it again only after the lag (B is on the lagging server: this says the lag held); both held at once (A's lock object still believed when B took it).\n",
    );
    for x in experiments {
        md.push_str(&format!("\n### `{}`\n\n", x.sessions.scenario()));
        if let Some(e) = &x.error {
            md.push_str(&format!("**The experiment did not run:** {e}\n"));
        }
        md.push_str("| run | A stopped | lag | A's session expired | A LOST | A holds | B holds again | order |\n|---|---|---|---|---|---|---|---|\n");
        let t = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.2}"));
        for (what, story) in [("real", &x.real), ("model", &x.model)] {
            if let Some(s) = story {
                md.push_str(&format!(
                    "| {what} | {:.2}–{:.2} | {:.2}–{:.2} | {} | {} | {} | {} | {} |\n",
                    s.pause.0,
                    s.pause.1,
                    s.lag.0,
                    s.lag.1,
                    t(s.a_expired),
                    t(s.a_lost),
                    t(s.a_holds),
                    t(s.b_again),
                    s.order()
                ));
            }
        }
        if let Some(r) = &x.real {
            let opened: Vec<String> = r
                .a_sessions
                .iter()
                .map(|(t, n)| format!("server {n} at {t:.2}"))
                .collect();
            md.push_str(&format!(
                "\n- Real: A's sessions opened on {}.\n",
                opened.join(", ")
            ));
        }
        if let (Some(r), Some(m)) = (&x.real, &x.model) {
            let (rf, mf) = (r.facts(), m.facts());
            md.push_str(&format!(
                "- Real: {rf:?}.\n- Model: {mf:?}; it violated {}.\n- {}\n",
                if x.model_violated.is_empty() {
                    "nothing".to_string()
                } else {
                    x.model_violated.join(", ")
                },
                if rf == mf {
                    "**Agree.**"
                } else {
                    "**DIFFER.**"
                }
            ));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's runs of the two files: with local sessions A holds on
    /// its deleted node while server 2 lags and B holds beside it once the
    /// lag ends; with global sessions A never holds while watched.
    #[test]
    fn the_twins_tell_the_two_stories() {
        let (local, violated) = model_run(Sessions::Local).expect("simulates");
        let f = local.facts();
        assert!(
            f.a_told_lost
                && f.a_held_after_its_node_was_gone
                && f.a_held_while_the_server_lagged
                && f.b_took_it_again_only_after_the_lag
                && f.both_at_once,
            "{local:?} {f:?}"
        );
        assert!(violated.iter().any(|v| v == "mutual_exclusion"));
        let (global, violated) = model_run(Sessions::Global).expect("simulates");
        let f = global.facts();
        assert!(
            f.a_told_lost
                && !f.a_held_after_its_node_was_gone
                && !f.both_at_once
                && f.b_took_it_again_only_after_the_lag,
            "{global:?} {f:?}"
        );
        assert!(violated.is_empty(), "{violated:?}");
    }
}
