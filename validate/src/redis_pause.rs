//! Kleppmann's pause on real Redis, beside the model's run of it.
//!
//! A holder of redis-py's own `Lock` (TTL 1 s, `validate/redis_pause.py`)
//! writes once to a guarded resource and is stopped (SIGSTOP, a GC pause)
//! before its second write. While it is stopped its key runs out by the
//! server's clock, and a second redis-py client, which has been polling,
//! takes the lock, writes twice and releases. Then the first resumes
//! (SIGCONT) still believing it holds — nothing told it otherwise — and
//! writes: two holders at once. Its release then finds the key gone
//! (`LockNotOwnedError`).
//!
//! The resource is the model's own (`models::resource::Resource`), served
//! on loopback by the validator. Unfenced, it takes the stale write: the
//! holders' writes interleave. Fenced, with the fencing token of
//! `redis-token:incr-token` (`INCR lock:fence` after acquiring), it
//! refuses the stale holder's lower token.
//!
//! The model's twins are the shipped scenarios `scenarios/redis-gc-pause.toml`
//! (`redis-token`) and `scenarios/redis-gc-pause-fenced.toml`
//! (`redis-token:incr-token`, fenced), simulated at their own seeds: three
//! clients, pauses of 11–14 s past the recipe's fixed 10 s TTL. There, A is
//! the holder the first pause struck and B the next client to take the
//! lock. The TTLs differ (real 1 s, simulated 10 s) and so do the times:
//! only facts of order are compared — B took the lock during A's pause;
//! both held at once; A's write after B took it was accepted (unfenced) or
//! refused (fenced) — and the simulated run must violate exactly what its
//! file's `expect` says.

use crate::etcdctl::collect;
use models::ids::{client_id, resource_id, ClientIdx};
use models::msg::Msg;
use models::resource::{Resource, ResourceState};
use serde::Serialize;
use sim::scenario::FaultKind;
use sim::trace::TraceEvent;
use stateright::actor::{Actor, Command as ActorCommand, Out};
use std::borrow::Cow;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The real lock's TTL, seconds.
const TTL_S: f64 = 1.0;
/// The shortest real pause: past the TTL with room to spare.
const PAUSE_S: f64 = 2.0;

/// The model's twins: the shipped scenarios, as `lockstep run` reads them.
/// Their recipe's TTL is 10 s (fixed), the real run's 1 s, so only facts
/// of order are compared ([`Facts`]), never times.
const TWINS: [(&str, &str); 2] = [
    (
        "scenarios/redis-gc-pause.toml",
        include_str!("../../scenarios/redis-gc-pause.toml"),
    ),
    (
        "scenarios/redis-gc-pause-fenced.toml",
        include_str!("../../scenarios/redis-gc-pause-fenced.toml"),
    ),
];

/// What a run, real or simulated, is compared on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// The second client took the lock while the first was paused.
    pub b_took_it_during_the_pause: bool,
    /// The first still believed it held when the second took the lock.
    pub both_at_once: bool,
    /// A write of the first holder's after the second took the lock was
    /// accepted by the resource.
    pub stale_write_accepted: bool,
    /// It was rejected (fenced).
    pub stale_write_rejected: bool,
}

/// A write the resource answered: (when, client, token, accepted).
type Written = (f64, ClientIdx, u64, bool);

/// Who held when, seconds since the first holder acquired.
#[derive(Clone, Debug, Serialize)]
pub struct Story {
    pub a_held: (f64, f64),
    pub b_held: Option<(f64, f64)>,
    pub pause: (f64, f64),
    /// The resource's answers: (when, client, token, accepted).
    pub writes: Vec<Written>,
}

impl Story {
    fn facts(&self) -> Facts {
        // The first holder's writes after the second took the lock.
        let b_from = self.b_held.map_or(f64::INFINITY, |b| b.0);
        let stale: Vec<bool> = self
            .writes
            .iter()
            .filter(|w| w.1 == 0 && w.0 > b_from)
            .map(|w| w.3)
            .collect();
        Facts {
            b_took_it_during_the_pause: self
                .b_held
                .is_some_and(|b| self.pause.0 < b.0 && b.0 < self.pause.1),
            both_at_once: self
                .b_held
                .is_some_and(|b| self.a_held.0 < b.1 && b.0 < self.a_held.1),
            stale_write_accepted: stale.contains(&true),
            stale_write_rejected: stale.contains(&false),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RealRun {
    pub story: Story,
    pub facts: Facts,
    /// The tokens the holders wrote with.
    pub tokens: (u64, u64),
    /// What the first holder's release said (`RELEASED`, or
    /// `RELEASE_ERROR LockNotOwnedError`).
    pub a_release: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ModelRun {
    pub recipe: String,
    /// The shipped scenario simulated, at its own seed.
    pub scenario: String,
    pub seed: u64,
    pub clients: u16,
    /// The holder the first pause struck (A), and the client that took the
    /// lock next (B), by their numbers in the scenario.
    pub paused: ClientIdx,
    pub taker: ClientIdx,
    /// Its story, A and B renumbered 0 and 1.
    pub story: Story,
    pub facts: Facts,
    pub violated: Vec<String>,
    /// The scenario's `expect`: the violations its own report checks.
    pub expected: Vec<String>,
    pub rejected_writes: u64,
}

/// One experiment: the real run beside the model's.
#[derive(Clone, Debug, Serialize)]
pub struct Experiment {
    pub fenced: bool,
    pub real: Option<RealRun>,
    pub model: Option<ModelRun>,
    pub error: Option<String>,
}

impl Experiment {
    /// The real run and the model's agree on every fact, and show what the
    /// scenario is for: both at once, the stale write taken unfenced and
    /// refused fenced.
    pub fn agrees(&self) -> bool {
        match (&self.real, &self.model, &self.error) {
            (Some(r), Some(m), None) => {
                r.facts == m.facts
                    && m.violated == m.expected
                    && r.facts.both_at_once
                    && r.facts.b_took_it_during_the_pause
                    && r.facts.stale_write_rejected == self.fenced
                    && r.facts.stale_write_accepted != self.fenced
            }
            _ => false,
        }
    }
}

/// The model's resource on loopback: a line `WRITE CLIENT HOLD TOKEN`,
/// answered `ACCEPTED` or `REJECTED`.
struct ResourceServer {
    addr: SocketAddr,
    started: Instant,
    writes: Arc<Mutex<Vec<Written>>>,
    stop: Arc<AtomicBool>,
}

impl ResourceServer {
    fn start(fencing: bool) -> std::io::Result<ResourceServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let started = Instant::now();
        let writes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let state = Arc::new(Mutex::new(ResourceState::default()));
        let resource = Arc::new(Resource::new(fencing));
        let (log, done) = (writes.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if done.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (state, resource, log) = (state.clone(), resource.clone(), log.clone());
                std::thread::spawn(move || serve(conn, &resource, &state, &log, started));
            }
        });
        Ok(ResourceServer {
            addr,
            started,
            writes,
            stop,
        })
    }
}

impl Drop for ResourceServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// One connection's writes, each put to the model's resource actor.
fn serve(
    conn: TcpStream,
    resource: &Resource,
    state: &Mutex<ResourceState>,
    log: &Mutex<Vec<Written>>,
    started: Instant,
) {
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    for line in BufReader::new(conn).lines() {
        let Ok(line) = line else { return };
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [_, client, hold, token] = parts[..] else {
            return;
        };
        let (Ok(client), Ok(hold), Ok(token)) = (
            client.parse::<ClientIdx>(),
            hold.parse::<u32>(),
            token.parse::<u64>(),
        ) else {
            return;
        };
        let mut o = Out::new();
        let accepted = {
            let mut st = state.lock().unwrap();
            let mut cow = Cow::Borrowed(&*st);
            resource.on_msg(
                resource_id(),
                &mut cow,
                client_id(client),
                Msg::Write { token, hold },
                &mut o,
            );
            if let Cow::Owned(s) = cow {
                *st = s;
            }
            o.into_iter().any(|c| {
                matches!(
                    c,
                    ActorCommand::Send(_, Msg::WriteAck { accepted: true, .. })
                )
            })
        };
        log.lock()
            .unwrap()
            .push((started.elapsed().as_secs_f64(), client, token, accepted));
        let answer: &[u8] = if accepted {
            b"ACCEPTED\n"
        } else {
            b"REJECTED\n"
        };
        if out.write_all(answer).is_err() {
            return;
        }
    }
}

/// A harness process and what it prints; killed when dropped.
struct Proc {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Proc {
    fn start(
        redis: &str,
        resource: SocketAddr,
        role: &str,
        fenced: bool,
        client: u16,
    ) -> Result<Proc, String> {
        let mut child = Command::new("python3")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/redis_pause.py"))
            .args([
                redis,
                &resource.to_string(),
                role,
                &TTL_S.to_string(),
                if fenced { "1" } else { "0" },
                &client.to_string(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run redis_pause.py: {e}"))?;
        let stdout = collect(child.stdout.take());
        let stderr = collect(child.stderr.take());
        Ok(Proc {
            child,
            stdout,
            stderr,
        })
    }

    /// (wall time, what) per line.
    fn lines(&self) -> Vec<(f64, String)> {
        self.stdout
            .lock()
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter_map(|(t, rest)| Some((t.parse().ok()?, rest.trim().to_string())))
            .collect()
    }

    /// When it first printed a line starting with `what`, and the line.
    fn first(&self, what: &str) -> Option<(f64, String)> {
        self.lines().into_iter().find(|l| l.1.starts_with(what))
    }

    /// Waits up to `limit` for a line starting with `what`.
    fn wait(&mut self, what: &str, limit: Duration) -> Result<(f64, String), String> {
        let started = Instant::now();
        loop {
            if let Some(l) = self.first(what) {
                return Ok(l);
            }
            let exited = matches!(self.child.try_wait(), Ok(Some(_)));
            if exited || started.elapsed() > limit {
                std::thread::sleep(Duration::from_millis(100));
                return self.first(what).ok_or_else(|| {
                    format!(
                        "no {what} from redis_pause.py; its stderr: {}",
                        self.stderr.lock().unwrap().trim()
                    )
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn signal(&self, sig: &str) -> Result<(), String> {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .map_err(|e| format!("kill {sig}: {e}"))?
            .success();
        ok.then_some(())
            .ok_or_else(|| format!("kill {sig} {} failed", self.child.id()))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // SIGKILL ends a stopped process too.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The real run on the master at `redis` (already flushed).
fn real_run(redis: &str, fenced: bool) -> Result<RealRun, String> {
    let server = ResourceServer::start(fenced).map_err(|e| format!("the resource: {e}"))?;
    // Wall time of the server's start, to put its writes on the processes' clock.
    let server_epoch = now_s() - server.started.elapsed().as_secs_f64();
    let mut a = Proc::start(redis, server.addr, "hold", fenced, 0)?;
    let (a_from, a_acquired) = a.wait("ACQUIRED", Duration::from_secs(10))?;
    a.wait("WROTE 1", Duration::from_secs(5))?;
    a.signal("-STOP")?;
    let paused = now_s();
    let mut b = Proc::start(redis, server.addr, "take", fenced, 1)?;
    let b_released = b.wait("RELEASED", Duration::from_secs(15));
    // At least PAUSE_S, and until B is done.
    let left = PAUSE_S - (now_s() - paused);
    if left > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(left));
    }
    a.signal("-CONT")?;
    let resumed = now_s();
    let (a_to, a_release) = a.wait("RELEASE", Duration::from_secs(10))?;
    let b_released = b_released?;
    let (b_from, b_acquired) = b
        .first("ACQUIRED")
        .ok_or("B printed no ACQUIRED".to_string())?;
    let token = |l: &str| {
        l.split_whitespace()
            .nth(1)
            .and_then(|t| t.parse().ok())
            .unwrap_or(0)
    };
    let rel = |t: f64| t - a_from;
    let writes = server
        .writes
        .lock()
        .unwrap()
        .iter()
        .map(|&(t, c, tok, ok)| (rel(server_epoch + t), c, tok, ok))
        .collect();
    let story = Story {
        a_held: (0.0, rel(a_to)),
        b_held: Some((rel(b_from), rel(b_released.0))),
        pause: (rel(paused), rel(resumed)),
        writes,
    };
    Ok(RealRun {
        facts: story.facts(),
        story,
        tokens: (token(&a_acquired), token(&b_acquired)),
        a_release,
    })
}

/// The first pause that struck a holder, in a simulated run's trace: who
/// was paused (A) and who took the lock next (B), with their holds, the
/// pause, and the writes of both (clients renumbered: A is 0, B is 1).
/// Times are seconds since A acquired.
fn model_story(
    trace: &[sim::trace::TraceLine],
    end_us: u64,
) -> Result<(Story, ClientIdx, ClientIdx), String> {
    let s = |t: u64| t as f64 / 1e6;
    // Each client's holds, as (from, to) in microseconds.
    let mut holds: Vec<(ClientIdx, u64, Option<u64>)> = Vec::new();
    let mut pause: Option<(ClientIdx, u64)> = None;
    let mut resumed: Option<u64> = None;
    for l in trace {
        match &l.event {
            TraceEvent::Hold { client, .. } => holds.push((*client, l.t, None)),
            TraceEvent::Release { client } => {
                if let Some(h) = holds.iter_mut().rev().find(|h| h.0 == *client) {
                    h.2.get_or_insert(l.t);
                }
            }
            TraceEvent::Fault {
                fault: FaultKind::Pause,
                client,
                ..
            } if pause.is_none() && holds.iter().any(|h| h.0 == *client && h.2.is_none()) => {
                pause = Some((*client, l.t));
            }
            TraceEvent::Resume { client }
                if resumed.is_none() && pause.is_some_and(|p| p.0 == *client) =>
            {
                resumed = Some(l.t);
            }
            _ => {}
        }
    }
    let (a, paused) = pause.ok_or("no pause struck a holder")?;
    let resumed = resumed.ok_or("the paused holder never resumed")?;
    let span = |h: &(ClientIdx, u64, Option<u64>)| (h.1, h.2.unwrap_or(end_us));
    let a_held = holds
        .iter()
        .rev()
        .find(|h| h.0 == a && h.1 <= paused)
        .map(span)
        .ok_or("the paused client held nothing")?;
    let (b, b_held) = holds
        .iter()
        .find(|h| h.0 != a && h.1 > paused)
        .map(|h| (h.0, span(h)))
        .ok_or("nobody took the lock after the pause")?;
    let rel = |t: u64| s(t) - s(a_held.0);
    let writes = trace
        .iter()
        .filter_map(|l| match l.event {
            TraceEvent::Write {
                client,
                token,
                accepted,
            } if (client == a || client == b) && a_held.0 <= l.t && l.t <= a_held.1 => {
                Some((rel(l.t), ClientIdx::from(client == b), token, accepted))
            }
            _ => None,
        })
        .collect();
    let story = Story {
        a_held: (0.0, rel(a_held.1)),
        b_held: Some((rel(b_held.0), rel(b_held.1))),
        pause: (rel(paused), rel(resumed)),
        writes,
    };
    Ok((story, a, b))
}

/// The shipped twin, unfenced or fenced, simulated at its own seed.
fn model_run(fenced: bool) -> Result<ModelRun, String> {
    let (file, text) = TWINS[usize::from(fenced)];
    let scenario = crate::twin::parse(file, text)?;
    let crate::twin::Run {
        outcome: o,
        violated,
        expected,
    } = crate::twin::run(&scenario);
    let (story, a, b) = model_story(&o.trace, o.metrics.end_us)?;
    Ok(ModelRun {
        recipe: scenario.recipe.id(),
        scenario: file.into(),
        seed: scenario.seed,
        clients: scenario.clients,
        paused: a,
        taker: b,
        facts: story.facts(),
        story,
        violated,
        expected,
        rejected_writes: o.metrics.rejected_writes,
    })
}

/// Runs one experiment on the master at `redis`, unfenced or fenced.
pub fn experiment(redis: &str, fenced: bool) -> Experiment {
    let mut error = None;
    let model = match model_run(fenced) {
        Ok(m) => Some(m),
        Err(e) => {
            error = Some(format!("the model's run: {e}"));
            None
        }
    };
    let real = match real_run(redis, fenced) {
        Ok(r) => Some(r),
        Err(e) => {
            error = Some(e);
            None
        }
    };
    Experiment {
        fenced,
        real,
        model,
        error,
    }
}

/// The report's part on the pause experiments.
pub fn section(experiments: &[Experiment]) -> String {
    let mut md = String::from("\n### Kleppmann's pause on real Redis, and its simulated twin\n\nredis-py 5.3.1's own `Lock(timeout=1)` (`validate/redis_pause.py`): the holder A writes once to a guarded resource (the model's own resource actor, served by the validator on loopback) and is stopped (SIGSTOP) for at least 2 s, past its key's 1 s TTL; B, polling, takes the lock when the server expires the key, writes twice and releases; A resumes (SIGCONT), still believing it holds, writes, and releases. Unfenced, both write with token 0 (redis-py's random token orders nothing); fenced, each writes with its `INCR lock:fence` (lockstep's `redis-token:incr-token`) and the resource refuses a token lower than the highest it took. Beside it, the shipped scenarios simulated at their own seeds: `scenarios/redis-gc-pause.toml` (`redis-token`) and `scenarios/redis-gc-pause-fenced.toml` (`redis-token:incr-token`, the resource fenced): three clients, pauses of 11–14 s at random, past the recipe's fixed 10 s TTL; A is the holder the first pause struck, B the next client to take the lock. The real TTL is 1 s and the simulated one 10 s, so times differ and are not compared: only the facts of order are (the four yes/no columns), and the simulated run must violate exactly what its file's `expect` lists. Times are seconds since A acquired.\n\n| resource | run | A held | B held | A paused | writes (time, client, token, accepted) | B took it during the pause | both at once | stale write accepted | stale write rejected | A's release | agree |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let span = |x: (f64, f64)| format!("{:.2}–{:.2}", x.0, x.1);
    let writes = |w: &[Written]| {
        w.iter()
            .map(|(t, c, tok, ok)| {
                format!(
                    "{t:.2} {} {tok} {}",
                    ["A", "B"].get(usize::from(*c)).unwrap_or(&"?"),
                    if *ok { "yes" } else { "no" }
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    for e in experiments {
        let resource = if e.fenced {
            "fenced (`incr-token`)"
        } else {
            "unfenced"
        };
        let agree = if e.agrees() { "yes" } else { "NO" };
        let yn = |b: bool| if b { "yes" } else { "no" };
        if let Some(r) = &e.real {
            md.push_str(&format!(
                "| {resource} | real (tokens A {}, B {}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {agree} |\n",
                r.tokens.0,
                r.tokens.1,
                span(r.story.a_held),
                r.story.b_held.map_or("—".into(), span),
                span(r.story.pause),
                writes(&r.story.writes),
                yn(r.facts.b_took_it_during_the_pause),
                yn(r.facts.both_at_once),
                yn(r.facts.stale_write_accepted),
                yn(r.facts.stale_write_rejected),
                r.a_release,
            ));
        }
        if let Some(m) = &e.model {
            let list = |v: &[String]| {
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.join(", ")
                }
            };
            md.push_str(&format!(
                "| {resource} | model (`{}`, seed {}, {} clients: A is client {}, B client {}; `{}`; violated: {}; expected: {}) | {} | {} | {} | {} | {} | {} | {} | {} | — | {agree} |\n",
                m.scenario,
                m.seed,
                m.clients,
                m.paused,
                m.taker,
                m.recipe,
                list(&m.violated),
                list(&m.expected),
                span(m.story.a_held),
                m.story.b_held.map_or("—".into(), span),
                span(m.story.pause),
                writes(&m.story.writes),
                yn(m.facts.b_took_it_during_the_pause),
                yn(m.facts.both_at_once),
                yn(m.facts.stale_write_accepted),
                yn(m.facts.stale_write_rejected),
            ));
        }
        if let Some(err) = &e.error {
            md.push_str(&format!("\n- {resource}: did not run: {err}\n"));
        }
    }
    md.push_str(
        "\n- The simulated writes are A's and B's while A held; the third client's are left out.\n",
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_twins_show_the_pause() {
        let unfenced = model_run(false).unwrap();
        assert_eq!(unfenced.violated, unfenced.expected);
        assert_eq!(
            unfenced.facts,
            Facts {
                b_took_it_during_the_pause: true,
                both_at_once: true,
                stale_write_accepted: true,
                stale_write_rejected: false,
            }
        );
        let fenced = model_run(true).unwrap();
        assert_eq!(fenced.violated, fenced.expected);
        assert_eq!(
            fenced.facts,
            Facts {
                b_took_it_during_the_pause: true,
                both_at_once: true,
                stale_write_accepted: false,
                stale_write_rejected: true,
            }
        );
        assert_ne!(unfenced.paused, unfenced.taker);
    }
}
