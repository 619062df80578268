//! A real Curator holder on a follower cut off from the leader, beside the
//! model's run of the same scenario: `isolated-follower-keeps-holder` and
//! its twin `isolated-follower-short-sync-limit`, replayed on the real
//! three-server ZooKeeper ensemble ([`crate::ensemble`]).
//!
//! 1. A, Curator 5.4's own `InterProcessMutex` (`CuratorPause.java`), its
//!    connect string servers 1, 2 and the leader, taken in that order,
//!    connects to server 1 (global sessions) and takes the lock; B, on
//!    server 2, waits for it.
//! 2. Server 1's link to the leader is held both ways, the sockets kept
//!    open, for [`cut_ms`].
//! 3. *keeps-holder*: A's session timeout is half syncLimit × tickTime. The
//!    leader hears nothing of A's session and expires it; B takes the lock,
//!    while server 1 still answers A's pings from its own view: A's library
//!    hears nothing until server 1 gives the leader up (syncLimit × tickTime
//!    after the cut) and closes A's connection. *short-sync-limit*: the
//!    session timeout is twice syncLimit × tickTime: server 1 closes A's
//!    connection first, and A's library reconnects to another server, its
//!    session alive.
//! 4. The link is let go; A keeps reporting.
//!
//! The model's twins are the two scenario files with the ensemble's
//! timing, A's session timeout and the cut set in code. Each real story is
//! compared with its twin on [`crate::faults::Facts`], as the single
//! server's cut-off holders are.

use crate::ensemble::{Ensembles, ZkEnsemble};
use crate::faults::{
    clear, experiment_body, has, story_of, until, Experiment, Fault, Harness, Library, ModelRun,
    Readers, RealRun, Recorded, AFTER_S, WATCHED_AFTER_S,
};
use crate::linkproxy::Links;
use crate::zkproxy::{now_s, sessions_opened, Proxy};
use models::client::Policy;
use serde::Serialize;
use sim::scenario::{FaultKind, Scenario};
use std::path::Path;
use std::time::Duration;

/// How long server 1 is cut off, ms: past syncLimit × tickTime (`sync_ms`)
/// and past the longer session timeout, by a second.
fn cut_ms(sync_ms: u64) -> u64 {
    Setting::ShortSyncLimit.session_ms(sync_ms).max(sync_ms) + 1000
}
/// When the model's cut starts, ms: the file's client 1 starts late
/// (a 100 ms pause at 50 ms) so that client 0 holds first.
const CUT_AT_MS: u64 = 500;

/// Which of the two scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Setting {
    /// The session timeout shorter than syncLimit × tickTime.
    KeepsHolder,
    /// syncLimit × tickTime shorter than the session timeout.
    ShortSyncLimit,
}

impl Setting {
    pub const ALL: [Setting; 2] = [Setting::KeepsHolder, Setting::ShortSyncLimit];

    /// The twin's scenario file, by name.
    pub fn scenario(self) -> &'static str {
        match self {
            Setting::KeepsHolder => "isolated-follower-keeps-holder",
            Setting::ShortSyncLimit => "isolated-follower-short-sync-limit",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Setting::KeepsHolder => {
                include_str!("../../scenarios/isolated-follower-keeps-holder.toml")
            }
            Setting::ShortSyncLimit => {
                include_str!("../../scenarios/isolated-follower-short-sync-limit.toml")
            }
        }
    }

    /// A's session timeout, ms, against syncLimit × tickTime.
    pub fn session_ms(self, sync_ms: u64) -> u64 {
        match self {
            Setting::KeepsHolder => sync_ms / 2,
            Setting::ShortSyncLimit => sync_ms * 2,
        }
    }

    /// The policies whose model runs a real story stands beside. With
    /// syncLimit × tickTime the shorter, a suspend-aware application
    /// releases at SUSPENDED and B takes the lock, which the real run's
    /// second lane, read off a program that does not release, cannot show:
    /// only the lock object is compared there.
    pub fn policies(self) -> &'static [Policy] {
        match self {
            Setting::KeepsHolder => &[Policy::Oblivious, Policy::SuspendAware],
            Setting::ShortSyncLimit => &[Policy::Oblivious],
        }
    }
}

/// Waits until the ensemble is as `run.sh` laid it out (server 3 leading
/// servers 1 and 2) and every server has applied the same zxid: the run
/// before may have dropped a follower, which then syncs again.
pub(crate) fn settled(ens: &ZkEnsemble) -> Result<(), String> {
    let h = tokio::runtime::Handle::current();
    h.block_on(crate::ensemble::zk_servers(ens))?;
    h.block_on(crate::ensemble::zk_in_step(&ens.servers))
}

/// Runs one setting: the real libraries on the ensemble, and the model.
pub fn experiment(ens: &ZkEnsemble, links: &Links, setting: Setting) -> Experiment {
    let sync_ms = ens.sync_ms();
    let mut model = Vec::new();
    let mut error = None;
    for &policy in setting.policies() {
        match model_run(setting, ens.tick_ms, sync_ms, policy) {
            Ok(m) => model.push(m),
            Err(e) => error = Some(format!("the model's run: {e}")),
        }
    }
    let real = match real_run(ens, links, setting) {
        Ok(r) => Some(r),
        Err(e) => {
            error = Some(e);
            None
        }
    };
    Experiment {
        library: Library::Curator,
        fault: Fault::Isolation(setting),
        real,
        model,
        error,
    }
}

/// Runs both settings on the ensemble's ZooKeeper, if it has one, each
/// said on stderr and drawn into `out`.
pub fn run_all(e: &Ensembles, out: &Path) -> Vec<Experiment> {
    let Some(zk) = &e.zk else {
        return Vec::new();
    };
    Setting::ALL
        .iter()
        .map(|&setting| {
            // Blocking work (processes, sleeps, polls) on this worker, which
            // the runtime can spare: the clients' sessions go on on its
            // other threads (the link proxies have a thread of their own).
            let x = tokio::task::block_in_place(|| experiment(zk, &e.links, setting));
            x.report(out);
            x
        })
        .collect()
}

/// The report's section.
pub fn section(e: &Ensembles, experiments: &[Experiment]) -> String {
    let Some(zk) = &e.zk else {
        return String::new();
    };
    let sync_ms = zk.sync_ms();
    let mut md = format!(
        "\n## A real holder on a follower cut off from the leader, beside the model\n\n\
The ensemble scenarios `isolated-follower-keeps-holder` and `isolated-follower-short-sync-limit` on the real ZooKeeper ensemble (tickTime {} ms, syncLimit {}: syncLimit × tickTime = {sync_ms} ms), with Curator 5.4's own `InterProcessMutex` (`validate/CuratorPause.java`). Each run starts once server 3 leads servers 1 and 2 again and all three have applied the same zxid. A's connect string names server 1, server 2 and the leader, its ZooKeeper handles taking them in that order (as the model's client 0 goes: server 1, then the next); B connects to server 2. Once B waits behind A's node, server 1's link to the leader is held both ways, the sockets kept open, for {} ms, then let go. With A's session timeout {} ms (half syncLimit × tickTime) the leader expires A's session while server 1 answers A's pings from its own view, and B takes the lock; with {} ms (twice it) server 1 gives the leader up first and closes A's connection, and A's library reconnects to another server with its session alive. The model's twins are the two files with this timing, A's session timeout and the cut set in code; the facts compared, and the second real lane (an application that gives the lock up at SUSPENDED, read off the same run), are those of the section \"Real holders cut off past their sessions, beside the model\" (the full run's report). With the shorter syncLimit × tickTime only the lock object is compared: a suspend-aware application would release at SUSPENDED and let B in, which a program that does not release cannot show.\n",
        zk.tick_ms,
        zk.sync_limit,
        cut_ms(sync_ms),
        Setting::KeepsHolder.session_ms(sync_ms),
        Setting::ShortSyncLimit.session_ms(sync_ms),
    );
    for x in experiments {
        md.push_str(&experiment_body(x));
    }
    md
}

/// The twin: the scenario file with the ensemble's timing, the session
/// timeout and the cut of the real run, under `policy`.
fn twin(setting: Setting, tick_ms: u64, sync_ms: u64, policy: Policy) -> Result<Scenario, String> {
    let file = format!("scenarios/{}.toml", setting.scenario());
    let base = crate::twin::parse(&file, setting.source())?;
    let mut raw = base.source.clone();
    raw.policy = Some(policy.to_string());
    raw.expect = None;
    let timing = raw.timing.get_or_insert_with(Default::default);
    timing.session_timeout_ms = Some(setting.session_ms(sync_ms));
    timing.sync_limit_ms = Some(sync_ms);
    timing.tick_ms = Some(tick_ms);
    let schedule = raw.schedule.get_or_insert_with(Vec::new);
    let cut: Vec<_> = schedule
        .iter_mut()
        .filter(|f| f.kind == FaultKind::Isolate)
        .collect();
    let [cut] = <[_; 1]>::try_from(cut)
        .map_err(|c| format!("{file} must isolate once (it does {} times)", c.len()))?;
    cut.at_ms = CUT_AT_MS;
    cut.duration_ms = Some(cut_ms(sync_ms));
    let name = format!("{}-{policy}", setting.scenario());
    Scenario::resolve(raw, &file, &name).map_err(|e| e.to_string())
}

fn model_run(
    setting: Setting,
    tick_ms: u64,
    sync_ms: u64,
    policy: Policy,
) -> Result<ModelRun, String> {
    let scenario = twin(setting, tick_ms, sync_ms, policy)?;
    let from = CUT_AT_MS * 1000;
    let until = from + cut_ms(sync_ms) * 1000;
    let run = crate::twin::run(&scenario);
    // Seen as long as the real run watches A after the cut.
    let seen = until + ((AFTER_S + WATCHED_AFTER_S) * 1e6) as u64;
    let story = story_of(&run.outcome.trace, 0, from, until, Some(seen))?;
    let violated = run.violated;
    Ok(ModelRun {
        policy: policy.to_string(),
        scenario: format!(
            "`scenarios/{}.toml` with policy = \"{policy}\", timing.session_timeout_ms = {}, sync_limit_ms = {sync_ms}, tick_ms = {tick_ms}, and server 1 cut off at {CUT_AT_MS} ms for {} ms",
            setting.scenario(),
            setting.session_ms(sync_ms),
            cut_ms(sync_ms),
        ),
        story,
        violated,
    })
}

fn real_run(ens: &ZkEnsemble, links: &Links, setting: Setting) -> Result<RealRun, String> {
    let who = format!("curator {}", setting.scenario());
    let path = format!("/lockstep-{}", setting.scenario());
    // `run.sh`'s servers 1, 2, 3; 3 leads.
    let [one, two, leader] = [0, 1, 2].map(|i| ens.servers[i].as_str());
    settled(ens)?;
    clear(leader, &path)?;
    let sync_ms = ens.sync_ms();
    let timeout_s = format!("{}", setting.session_ms(sync_ms) as f64 / 1000.0);
    // A's connections, one proxy a server, so that its reconnections and
    // what they were told are seen wherever they go: server 1 first, then
    // server 2, as the model's client 0 goes.
    let proxies_a = [one, two, leader]
        .map(Proxy::start)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let proxy_b = Proxy::start(two)?;
    let connect: Vec<String> = proxies_a.iter().map(Proxy::endpoint).collect();
    let mut a = Harness::start(
        Library::Curator,
        &connect.join(","),
        "hold",
        &timeout_s,
        &path,
        true,
    )?;
    if !a.wait(Duration::from_secs(60), |l| has(l, "ACQUIRED")) {
        return Err(format!(
            "{who}: A never took the lock on server 1: {}",
            a.stderr_tail()
        ));
    }
    let opened: Vec<usize> = proxies_a
        .iter()
        .map(|p| sessions_opened(&p.events()).count())
        .collect();
    if opened != [1, 0, 0] {
        return Err(format!(
            "{who}: A's sessions opened on servers 1, 2 and the leader: {opened:?}, not on server 1 alone"
        ));
    }
    let readers = Readers::open(&[one, two])?;
    let mut b = Harness::start(
        Library::Curator,
        &proxy_b.endpoint(),
        "take",
        &timeout_s,
        &path,
        false,
    )?;
    // B waits behind A's node once its own is there, and the ensemble has
    // applied both.
    let queued = until(Duration::from_secs(30), || {
        readers.children(0, &path) >= 2 && readers.children(1, &path) >= 2
    });
    if !queued {
        return Err(format!(
            "{who}: B never queued behind A: {}",
            b.stderr_tail()
        ));
    }
    let fault_from = now_s();
    links.hold(&["zk1".to_string()]);
    std::thread::sleep(Duration::from_millis(cut_ms(sync_ms)));
    links.release();
    let fault_until = now_s();
    // Then A goes on reporting for a while, and B ends its hold if it has
    // one.
    std::thread::sleep(Duration::from_secs_f64(AFTER_S + WATCHED_AFTER_S));
    if has(&b.lines(), "ACQUIRED") {
        b.wait(Duration::from_secs(10), |l| has(l, "RELEASED"));
    }
    let a_wire = proxies_a.iter().map(Proxy::events).collect();
    let recorded =
        Recorded::of(who, path, a, b, a_wire, proxy_b.events()).cut(fault_from, fault_until);
    recorded.stories()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The twins at the validator's ensemble timing (tickTime 250 ms,
    /// syncLimit 8) show what the scenario files show at theirs: the
    /// holder kept by its follower loses the lock to B while it believes,
    /// even suspend-aware; with the shorter syncLimit × tickTime it is told
    /// first, reconnects with its session alive, and B never takes it.
    #[test]
    fn the_twins_at_the_ensembles_timing() {
        for setting in Setting::ALL {
            for &policy in setting.policies() {
                let m = model_run(setting, 250, 2000, policy).expect("simulates");
                let f = m.story.facts();
                eprintln!(
                    "{setting:?} {policy}: {:?} {f:?} violated {:?}",
                    m.story, m.violated
                );
                match setting {
                    Setting::KeepsHolder => {
                        assert!(f.b_took_it_during_the_fault && f.both_at_once);
                        assert!(!f.a_suspended_before_b_took_it);
                        assert_eq!(f.a_states_to_lost, ["SUSPENDED", "LOST"]);
                        assert!(m.violated.iter().any(|v| v == "mutual_exclusion"));
                    }
                    Setting::ShortSyncLimit => {
                        assert!(!f.b_took_it_during_the_fault && !f.both_at_once);
                        assert_eq!(f.a_states_to_lost, ["SUSPENDED", "RECONNECTED"]);
                        assert!(m.violated.is_empty(), "{:?}", m.violated);
                    }
                }
            }
        }
    }
}
