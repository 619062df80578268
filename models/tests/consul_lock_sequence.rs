//! consul-lock's requests, call by call, against the sequence read from
//! the Go client's `api/lock.go` (`Lock`, `monitorLock`, `Unlock`). No
//! Go toolchain that builds `github.com/hashicorp/consul/api` can be
//! installed from the registries this project reaches, and no Consul
//! server at all, so this transcription is what pins the recipe to its
//! source (docs/validation.md says what is validated and what is not).
//!
//! The harness runs the recipe against the store's Consul face, as the
//! engines do: each request applied in the recipe's session, a held
//! blocking query's answer given back as the notification it is.

use models::ids::{Data, Key, SessionId};
use models::msg::{Behavior, ConsulCmd, ConsulReply, Reply, Request, SessionOpts, WatchEvent};
use models::recipe::{Recipe, Step};
use models::recipes::consul::{LOCK_KEY, LOCK_RETRY_MS, LOCK_WAIT_MS};
use models::recipes::consul_lock::{ConsulLock, State};
use models::store::{SessionEnd, StoreState};
use std::time::Duration;

const ME: SessionId = SessionId {
    client: 0,
    incarnation: 0,
    grant: 0,
};
const OTHER: SessionId = SessionId {
    client: 1,
    incarnation: 0,
    grant: 0,
};

fn key() -> Key {
    Key::fixed(LOCK_KEY)
}

/// `GET key?wait=15000ms[&index=N]`: `Lock`'s WAIT.
fn wait(index: u64) -> ConsulCmd {
    ConsulCmd::Get {
        key: key(),
        index,
        wait_ms: LOCK_WAIT_MS,
    }
}

/// A `GET` with no index: the read after a refused acquire, and
/// `monitorLock`'s first (`?consistent`, no wait).
fn read() -> ConsulCmd {
    ConsulCmd::Get {
        key: key(),
        index: 0,
        wait_ms: 0,
    }
}

fn acquire() -> ConsulCmd {
    ConsulCmd::Acquire {
        key: key(),
        value: Data::Empty,
    }
}

/// A store with both sessions, as `Lock` creates its own:
/// `PUT /v1/session/create {"TTL":"15s"}` (no `Behavior`, no
/// `LockDelay`: the server's defaults, release and 15 s).
fn store() -> StoreState {
    let mut st = StoreState::new(&lock().setup());
    st.consul = Some(Box::default());
    for s in [ME, OTHER] {
        let create = Request::Consul(ConsulCmd::SessionCreate(SessionOpts::default()));
        let (reply, _) = st.apply(s, &create);
        assert_eq!(reply, Reply::Consul(ConsulReply::SessionCreated));
    }
    st
}

/// `consul-lock` at its defaults.
fn lock() -> ConsulLock {
    ConsulLock {
        cli: false,
        session: SessionOpts::default(),
        wait_ms: LOCK_WAIT_MS,
    }
}

/// Runs `ME`'s acquisition until it holds, a sleep or a held query it
/// cannot get past (`stop`), recording every call it makes.
struct Run {
    recipe: ConsulLock,
    st: State,
    calls: Vec<ConsulCmd>,
}

enum Stop {
    Held(u64),
    Asleep(Duration),
    Blocked,
}

impl Run {
    fn new() -> (Run, Step) {
        let recipe = lock();
        let (st, req) = recipe.acquire(ME);
        (
            Run {
                recipe,
                st,
                calls: Vec::new(),
            },
            Step::Send(req),
        )
    }

    fn go(&mut self, store: &mut StoreState, mut step: Step) -> Stop {
        loop {
            step = match step {
                Step::Send(Request::Consul(cmd)) => {
                    self.calls.push(cmd);
                    let (reply, _) = store.apply(ME, &Request::Consul(cmd));
                    self.recipe.on_reply(ME, &mut self.st, &reply)
                }
                Step::Wait => return Stop::Blocked,
                Step::Sleep { after } => return Stop::Asleep(after),
                Step::Acquired { token } => return Stop::Held(token),
                other => panic!("unexpected step {other:?}"),
            };
        }
    }

    /// The held query's answer, as the store notifies it.
    fn answer(&mut self, store: &mut StoreState) -> Stop {
        let (pair, index) = store.consul.as_ref().unwrap().read(key());
        let step = self
            .recipe
            .on_event(&mut self.st, &WatchEvent::Consul { pair, index });
        self.go(store, step)
    }
}

#[test]
fn a_free_lock_is_read_acquired_and_monitored() {
    let mut store = store();
    let (mut run, first) = Run::new();
    // lock.go: WAIT `kv.Get(key, qOpts)` (no index yet) finds no pair;
    // `kv.Acquire(pair)` returns true; HELD starts `monitorLock`, whose
    // first `kv.Get` (RequireConsistent) the model's holder believes on.
    assert!(matches!(run.go(&mut store, first), Stop::Held(1)));
    assert_eq!(run.calls, vec![wait(0), acquire(), read()]);
    // Unlock: `kv.Release(lockEnt)`, then the session renewer's destroy
    // (not sent by the model: its session is the client's, see
    // ARCHITECTURE.md).
    assert_eq!(
        run.recipe.release(ME, &run.st),
        Some(Request::Consul(ConsulCmd::Release { key: key() }))
    );
}

#[test]
fn a_held_lock_is_waited_for_by_blocking_query_past_its_index() {
    let mut store = store();
    let (reply, _) = store.apply(OTHER, &Request::Consul(acquire()));
    assert_eq!(reply, Reply::Consul(ConsulReply::Bool(true)));
    let held_at = store.consul.as_ref().unwrap().read(key()).1;
    let (mut run, first) = Run::new();
    // WAIT finds another session: `qOpts.WaitIndex = meta.LastIndex;
    // goto WAIT`, a blocking query the store holds.
    assert!(matches!(run.go(&mut store, first), Stop::Blocked));
    assert_eq!(run.calls, vec![wait(0), wait(held_at)]);
    // The holder's Unlock answers it: the pair has no session, so
    // `kv.Acquire`, then the monitor's read.
    store.apply(OTHER, &Request::Consul(ConsulCmd::Release { key: key() }));
    assert!(matches!(run.answer(&mut store), Stop::Held(2)));
    assert_eq!(
        run.calls,
        vec![wait(0), wait(held_at), acquire(), read()],
        "LockIndex 2: a second session acquired the key"
    );
}

#[test]
fn a_lock_delay_refusal_reads_again_and_sleeps_five_seconds() {
    let mut store = store();
    store.apply(OTHER, &Request::Consul(acquire()));
    // The holder's session is invalidated: the key is released under the
    // session's lock-delay (15 s).
    store.end_session(OTHER, SessionEnd::Expired);
    let (mut run, first) = Run::new();
    // WAIT finds no session; `kv.Acquire` is refused (false); the second
    // `kv.Get` (WaitIndex 0) finds no session either: "a lock-delay is in
    // effect and a timed wait must be used": `time.After(5 s)`.
    let stop = run.go(&mut store, first);
    assert!(
        matches!(stop, Stop::Asleep(d) if d == Duration::from_millis(LOCK_RETRY_MS.into())),
        "DefaultLockRetryTime"
    );
    assert_eq!(run.calls, vec![wait(0), acquire(), read()]);
    // Then `goto WAIT` with WaitIndex still 0: a plain read, which, the
    // lock-delay over, leads to an acquire that holds.
    store.consul.as_mut().unwrap().end_delay(key());
    let step = run.recipe.on_wake(ME, &mut run.st);
    assert!(matches!(run.go(&mut store, step), Stop::Held(2)));
    assert_eq!(
        run.calls,
        vec![wait(0), acquire(), read(), wait(0), acquire(), read()]
    );
}

#[test]
fn the_session_is_created_as_lock_go_creates_it() {
    // `LockOptions` with no `Session`: `createSession` sends TTL 15 s and
    // no behavior or lock-delay, so the server's defaults: release, 15 s.
    assert_eq!(
        lock().consul_session(),
        Some(SessionOpts {
            behavior: Behavior::Release,
            lock_delay_ms: 15_000,
        })
    );
    assert_eq!(models::recipes::consul::SESSION_TTL_MS, 15_000);
}

#[test]
fn a_pair_seen_as_ours_goes_to_held_without_an_acquire() {
    // WAIT: `if pair != nil && pair.Session == l.lockSession { goto HELD }`
    // (the lock re-entered after a lost acquire reply, say).
    let mut store = store();
    store.apply(ME, &Request::Consul(acquire()));
    let (mut run, first) = Run::new();
    assert!(matches!(run.go(&mut store, first), Stop::Held(1)));
    assert_eq!(run.calls, vec![wait(0), read()]);
}
