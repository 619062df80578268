//! The model's side of the ensemble experiments ([`crate::ensemble`]): the
//! model store of a three-server ZooKeeper ensemble or etcd cluster, its
//! steps called directly (as `models/tests/ensemble.rs` does), running
//! the same behaviour as each real experiment and saying what it shows in
//! the same words. When a cut-off follower gives its leader up is the
//! simulator's to say: that fact's timing comes from its twin scenario's
//! trace.
//!
//! Clients are placed as the model places them: client 0 on server 1 (a
//! follower, the one that lags: the real experiments' held server),
//! client 1 on server 2, client 2 on the leader (server 0). A follower
//! that has not applied the leader's last commit is the held follower of
//! the real runs; "released" is the follower applying what it missed.

use models::ids::{ClientIdx, Data, Key, SessionId, ZPath};
use models::msg::{Keys, Msg, Range, Reply, Request, TxnOp};
use models::recipe::{Face, Setup};
use models::store::driver::{Sent, StoreDriver};
use models::store::{EnsembleCfg, Store};
use sim::trace::{FollowerChange, MsgKind, Party, TraceEvent};
use std::time::Duration;

/// A three-server store and three clients, every server caught up.
struct Ens {
    d: StoreDriver,
}

fn replies(s: &Sent, c: ClientIdx) -> Vec<Reply> {
    s.iter()
        .filter_map(|(to, m)| match m {
            Msg::Reply { reply, .. } if *to == c => Some(reply.clone()),
            _ => None,
        })
        .collect()
}

fn told(s: &Sent, c: ClientIdx) -> bool {
    s.iter()
        .any(|(to, m)| *to == c && matches!(m, Msg::Notify { .. }))
}

fn names(reply: &Reply) -> Vec<String> {
    match reply {
        Reply::Children(c) => c.iter().map(|c| c.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn node(name: &str) -> ZPath {
    ZPath::parse(&format!("/lock/{name}")).expect("a node path")
}

fn lock_dir() -> ZPath {
    ZPath::parse("/lock").expect("a path")
}

fn key() -> Key {
    Key::parse("/ens/k").expect("a key")
}

impl Ens {
    fn new(face: Face) -> Ens {
        Ens::with(face, false, 3)
    }

    /// With ZooKeeper's local sessions (`localSessionsEnabled`) or
    /// without, and `clients` clients (placed round the servers from
    /// server 1 on: client 3 on server 1 again, and so on).
    fn with(face: Face, local_sessions: bool, clients: ClientIdx) -> Ens {
        let store = Store {
            ensemble: Some(EnsembleCfg::new(face, 3, clients, u32::MAX, local_sessions)),
            ..Store::for_face(face, Duration::from_secs(4), Setup::lock_dir())
        };
        let mut e = Ens {
            d: StoreDriver::new(store),
        };
        if face == Face::ZooKeeper {
            for c in 0..clients {
                e.send(c, Request::Connect);
            }
        }
        e.catch_up();
        e
    }

    fn send_as(&mut self, session: SessionId, req: Request) -> Sent {
        self.d.send_in(session, req)
    }

    fn send(&mut self, c: ClientIdx, req: Request) -> Sent {
        self.send_as(SessionId::first(c), req)
    }

    /// Server 1 applies everything it missed: what it sent meanwhile.
    fn release(&mut self) -> Sent {
        self.d.catch_up(0)
    }

    /// Server 2 (follower 1) applies everything it missed.
    fn catch_up_server_2(&mut self) {
        self.d.catch_up(1);
    }

    /// Client `c`'s session reconnects on a new connection (the store
    /// moves it to the next server not behind what it has seen).
    fn reconnect(&mut self, c: ClientIdx) {
        self.d.reconnect(SessionId::first(c));
    }

    /// The leader expires client `c`'s first session.
    fn expire(&mut self, c: ClientIdx) {
        self.d.expire(SessionId::first(c));
    }

    fn server(&self, c: ClientIdx) -> u8 {
        self.d.server(c)
    }

    fn catch_up(&mut self) {
        for f in 0..2 {
            self.d.catch_up(f);
        }
    }

    fn create(&mut self, c: ClientIdx, name: &str) -> Sent {
        self.create_node(SessionId::first(c), name, false)
    }

    fn create_node(&mut self, session: SessionId, name: &str, ephemeral: bool) -> Sent {
        self.send_as(
            session,
            Request::Create {
                path: node(name),
                ephemeral,
                sequential: false,
                data: Data::Empty,
            },
        )
    }

    fn list(&mut self, c: ClientIdx) -> Option<Vec<String>> {
        self.list_as(SessionId::first(c))
    }

    fn list_as(&mut self, session: SessionId) -> Option<Vec<String>> {
        let s = self.send_as(
            session,
            Request::GetChildren {
                path: lock_dir(),
                watch: false,
            },
        );
        replies(&s, session.client).first().map(names)
    }

    /// A failover's old leader gives leading up, follows the new one and
    /// applies what it missed: its view then (`None`: no leader deposed).
    fn old_leader_caught_up(&mut self) -> Option<&models::store::StoreState> {
        let f = self.d.deposed()?;
        self.d.deposed_gives_up();
        self.d.rejoin(f);
        self.d.catch_up(f);
        Some(self.d.st.server(Some(f)))
    }

    fn put(&mut self, c: ClientIdx, value: u64) -> Sent {
        let txn = models::msg::Txn {
            compares: Vec::new(),
            success: vec![TxnOp::Put {
                key: key(),
                value: Data::Number(value),
                lease: None,
            }],
            failure: Vec::new(),
        };
        self.send(c, Request::Txn(Box::new(txn)))
    }
}

/// The value a range reply gives for the key, if any.
fn value_of(reply: &Reply) -> Option<Data> {
    match reply {
        Reply::RangeResult { kvs, .. } => kvs.first().map(|kv| kv.value),
        _ => None,
    }
}

/// ZooKeeper: the leader commits a new child; server 1's client lists the
/// old children until server 1 applies it. (stale on the follower, new on
/// the leader, new on the follower once applied)
pub fn zk_stale_read() -> (bool, bool, bool) {
    let mut e = Ens::new(Face::ZooKeeper);
    e.create(2, "a");
    let stale = e.list(0).is_some_and(|n| n.is_empty());
    let leader_new = e.list(2).is_some_and(|n| n == ["a"]);
    e.release();
    let after = e.list(0).is_some_and(|n| n == ["a"]);
    (stale, leader_new, after)
}

/// ZooKeeper: `sync` on server 1 is held until server 1 has applied what
/// the leader had committed, and the read after it sees the new child.
/// (held while lagging, answered on apply, the read after it new)
pub fn zk_sync_waits() -> (bool, bool, bool) {
    let mut e = Ens::new(Face::ZooKeeper);
    e.create(2, "a");
    let held = replies(&e.send(0, Request::Sync { path: lock_dir() }), 0).is_empty();
    let done = e.release();
    let answered = replies(&done, 0).iter().any(|r| matches!(r, Reply::Synced));
    let read_new = e.list(0).is_some_and(|n| n == ["a"]);
    (held, answered, read_new)
}

/// ZooKeeper: an `exists` watch set on server 1 and one on the leader; the
/// leader's watcher is told at the commit, server 1's when it applies.
/// (leader's told at commit, server 1's not, server 1's on apply)
pub fn zk_watch_on_apply() -> (bool, bool, bool) {
    let mut e = Ens::new(Face::ZooKeeper);
    for c in [0, 2] {
        e.send(
            c,
            Request::Exists {
                path: node("a"),
                watch: true,
            },
        );
    }
    let committed = e.create(1, "a");
    let applied = e.release();
    (told(&committed, 2), !told(&committed, 0), told(&applied, 0))
}

/// ZooKeeper: a new (global) session on server 1 is a committed entry,
/// answered only once server 1 has applied it. (no answer while
/// lagging, connected on apply)
pub fn zk_new_session_waits() -> (bool, bool) {
    let mut e = Ens::new(Face::ZooKeeper);
    let fresh = SessionId {
        incarnation: 1,
        ..SessionId::first(0)
    };
    let waiting = replies(&e.send_as(fresh, Request::Connect), 0).is_empty();
    let done = e.release();
    let connected = replies(&done, 0)
        .iter()
        .any(|r| matches!(r, Reply::Connected));
    (waiting, connected)
}

/// ZooKeeper: the leader's client (client 2) writes and so has seen the
/// leader's position; server 1 has not applied the write, server 2 has.
/// Its reconnect, trying server 1 first (the next round from the
/// leader), is refused there; the same reconnect once server 1 has caught
/// up lands on server 1. (refused while behind, accepted once caught up)
pub fn zk_reconnect_refused() -> (bool, bool) {
    let run = |caught_up: bool| {
        let mut e = Ens::new(Face::ZooKeeper);
        e.create(2, "a");
        e.catch_up_server_2();
        if caught_up {
            e.release();
        }
        let refusing =
            e.d.st
                .ensemble
                .as_ref()
                .map(|en| en.refusing(2))
                .unwrap_or_default();
        e.reconnect(2);
        (refusing, e.server(2))
    };
    let (behind, landed) = run(false);
    let (after, landed_after) = run(true);
    (
        behind == [1] && landed != 1,
        after.is_empty() && landed_after == 1,
    )
}

/// ZooKeeper with local sessions: client 2's session on the leader makes
/// an ephemeral node, every server applies it, and the leader ends the
/// session (an expiry: the model's `closeSession` is the same committed
/// end); server 1 has not applied the end. Client 0's new session on
/// server 1 opens at once and lists the node; once server 1 has applied
/// the end, no more. (opened at once, lists the node, gone once applied)
pub fn zk_local_session_stale() -> (bool, bool, bool) {
    let mut e = Ens::with(Face::ZooKeeper, true, 3);
    e.create_node(SessionId::first(2), "h", true);
    e.catch_up();
    e.expire(2);
    let fresh = SessionId {
        incarnation: 1,
        ..SessionId::first(0)
    };
    let opened = replies(&e.send_as(fresh, Request::Connect), 0)
        .iter()
        .any(|r| matches!(r, Reply::Connected));
    let lists = |l: &Option<Vec<String>>| l.as_ref().is_some_and(|l| l.iter().any(|c| c == "h"));
    let stale = lists(&e.list_as(fresh));
    e.release();
    let after = e.list_as(fresh);
    (opened, stale, after.is_some() && !lists(&after))
}

/// ZooKeeper with local sessions, CURATOR-604's whole window: client 2's
/// session on the leader makes an ephemeral node, every server applies
/// it, and the leader ends the session; server 1 has not applied the end.
/// Client 2 reconnects: the store moves it to server 1 (the next round
/// from the leader), which tells it at once that its session has expired
/// (it asks the leader); a new session of client 2's there opens at once
/// and lists the node; once server 1 has applied the end, no more. (told
/// expired while behind, the new session lists the node, gone once
/// applied)
pub fn zk_expired_told_behind() -> (bool, bool, bool) {
    let mut e = Ens::with(Face::ZooKeeper, true, 3);
    let old = SessionId::first(2);
    e.create_node(old, "h", true);
    e.catch_up();
    e.expire(2);
    let answer = e.d.reconnect(old);
    let told = e.server(2) == 1
        && e.d.lag(0) > 0
        && answer
            .iter()
            .any(|(to, m)| *to == 2 && matches!(m, Msg::Expired { session } if *session == old));
    let fresh = SessionId {
        incarnation: 1,
        ..old
    };
    let opened = replies(&e.send_as(fresh, Request::Connect), 2)
        .iter()
        .any(|r| matches!(r, Reply::Connected));
    let lists = |l: &Option<Vec<String>>| l.as_ref().is_some_and(|l| l.iter().any(|c| c == "h"));
    let stale = opened && lists(&e.list_as(fresh));
    e.release();
    let after = e.list_as(fresh);
    (told, stale, after.is_some() && !lists(&after))
}

/// ZooKeeper, a leader failover: the leader is cut off from its
/// followers (the real leader stopped); they elect server 2 (as much log
/// as server 1, the higher id), which starts every live session's timer
/// again; client 0, on server 1, reconnects (its server restarted its
/// client service) and its session lives; a write through the new leader
/// commits; the old leader gives leading up, follows the new one and
/// applies the write. (server 2 elected, the timers started again, the
/// follower's session lives, the old leader has the write)
pub fn zk_failover() -> (bool, bool, bool, bool) {
    let mut e = Ens::new(Face::ZooKeeper);
    let on_follower = SessionId::first(0);
    e.create_node(on_follower, "f", true);
    e.catch_up();
    e.d.depose_leader();
    let (_, leader, restarted) = e.d.elect_leader();
    let live: Vec<SessionId> = (0..3).map(SessionId::first).collect();
    let timers = live.iter().all(|s| restarted.contains(s));
    let back = e.d.reconnect(on_follower);
    let lives = !back
        .iter()
        .any(|(to, m)| *to == 0 && matches!(m, Msg::Expired { .. }));
    let wrote = replies(&e.create(1, "n"), 1)
        .iter()
        .any(|r| matches!(r, Reply::Created { .. }));
    let has = e
        .old_leader_caught_up()
        .is_some_and(|view| view.zk.node(node("n")).is_some());
    (leader == Some(2), timers, lives, wrote && has)
}

/// ZooKeeper: server 1 cut off from the leader (the real hold) with a
/// write outstanding still answers its client from its own view, and
/// closes nothing; given up (`drop_follower`), it names the client whose
/// connection it closes. When it gives up is the simulator's rule: the
/// twin scenario `isolated-follower-short-sync-limit` (syncLimit ×
/// tickTime = `sync_limit_ms`, 2 s), whose trace says when server 1 was
/// cut off and when it was dropped; the model's cut-off is the leader's
/// last packet. (answered until the bound, dropped by the bound + 1 s),
/// and what the twin's trace showed.
pub fn zk_follower_dropped() -> (bool, bool, String) {
    let mut e = Ens::new(Face::ZooKeeper);
    e.d.cut_off(0);
    e.create(2, "a");
    let answered_stale = e.list(0).is_some_and(|n| n.is_empty());
    let closed = e.d.drop_follower(0);
    let (after, words) = said(twin_drop_after(), |(after, bound)| {
        format!(
            "the twin's server 1 was dropped {} ms after it was cut off (sync_limit_ms {})",
            after / 1000,
            bound / 1000
        )
    });
    let within = |ok: fn(u64, u64) -> bool| after.is_some_and(|(a, b)| ok(a, b));
    (
        answered_stale && within(|a, b| a >= b),
        closed.contains(&0) && within(|a, b| a <= b + 1_000_000),
        words,
    )
}

/// ZooKeeper: a follower whose commits lag (it hears the leader and
/// acknowledges its proposals) is never dropped, however long the lag:
/// its client reads the old data and stays connected, and reads the new
/// once the follower applies. The store's steps give the reads; the
/// simulator's run of a lag of server 1 longer than `sync_limit_ms`
/// (inline below) gives the time: no drop of server 1 in its trace.
/// (old data past syncLimit × tickTime, connected throughout, new data
/// once applied; the words for the report's detail)
pub fn zk_lag_past_sync_limit() -> (bool, bool, bool, String) {
    let mut e = Ens::new(Face::ZooKeeper);
    e.create(2, "a");
    let stale = e.list(0).is_some_and(|n| n.is_empty());
    e.release();
    let after = e.list(0).is_some_and(|n| n == ["a"]);
    let text = "recipe = \"fair-predecessor\"\nclients = 2\nservers = 3\nseed = 1\n\
                [timing]\nsync_limit_ms = 2000\n\
                [[schedule]]\nat_ms = 100\nkind = \"lag\"\nserver = 1\nduration_ms = 4000\n";
    let scenario = match crate::twin::parse("scenarios/lag-past-sync-limit.toml", text) {
        Ok(s) => s,
        Err(err) => return (false, false, false, err),
    };
    let run = crate::twin::run(&scenario);
    let changes: Vec<&FollowerChange> = run
        .outcome
        .trace
        .iter()
        .filter_map(|l| match &l.event {
            TraceEvent::Follower { server: 1, change } => Some(change),
            _ => None,
        })
        .collect();
    let lagged = changes
        .iter()
        .any(|c| matches!(c, FollowerChange::Lags { duration_us } if *duration_us > 2_000_000));
    let dropped = changes.iter().any(|c| matches!(c, FollowerChange::Dropped));
    (
        stale && lagged,
        lagged && !dropped,
        after,
        format!(
            "the simulator's server 1, lagging 4,000 ms with sync_limit_ms 2,000: {}",
            if dropped { "dropped" } else { "never dropped" }
        ),
    )
}

/// What a simulator's run measured, if it did, and the words for it (or
/// for why it did not).
fn said<T: Copy>(measured: Result<T, String>, words: impl Fn(T) -> String) -> (Option<T>, String) {
    match measured {
        Ok(m) => (Some(m), words(m)),
        Err(e) => (None, e),
    }
}

/// When the first line of `run`'s trace that `want` picks happened, µs.
fn first_at(run: &crate::twin::Run, want: impl Fn(&TraceEvent) -> bool) -> Option<u64> {
    run.outcome
        .trace
        .iter()
        .find(|l| want(&l.event))
        .map(|l| l.t)
}

/// When server 1 first changed as `want` picks, in `run`'s trace, µs.
fn server_1_at(run: &crate::twin::Run, want: fn(&FollowerChange) -> bool) -> Option<u64> {
    first_at(
        run,
        |e| matches!(e, TraceEvent::Follower { server: 1, change } if want(change)),
    )
}

/// The twin scenario's drop: (µs from server 1's cut-off to its drop,
/// the scenario's sync limit in µs).
fn twin_drop_after() -> Result<(u64, u64), String> {
    let file = "scenarios/isolated-follower-short-sync-limit.toml";
    let scenario = crate::twin::parse(
        file,
        include_str!("../../scenarios/isolated-follower-short-sync-limit.toml"),
    )?;
    let bound = scenario
        .timing
        .sync_limit_us
        .ok_or_else(|| format!("{file} sets no sync_limit_ms"))?;
    let run = crate::twin::run(&scenario);
    match (
        server_1_at(&run, |c| matches!(c, FollowerChange::CutOff { .. })),
        server_1_at(&run, |c| matches!(c, FollowerChange::Dropped)),
    ) {
        (Some(cut), Some(dropped)) => Ok((dropped.saturating_sub(cut), bound)),
        _ => Err(format!("{file}: server 1 was not cut off and dropped")),
    }
}

/// ZooKeeper: the leader stops hearing server 1 (a mute), which still
/// hears it. Seven clients, so that three are on server 1: client 0
/// reads, client 3 writes, client 6's session is silent at the leader.
/// Server 1 applies the leader's create, and client 0 lists it; client
/// 3's create is held (no answer); client 6's ping is answered by server
/// 1 and renews nothing at the leader, whose timer then expires it, and
/// server 1, applying that, tells client 6 (and not client 0); dropped,
/// server 1 names client 0 among those whose connections it closes;
/// following again, it catches up, and client 3's create is nowhere.
/// A writer's read timeout is the simulator's run of a client whose create
/// server 1 holds (`simulated_muted_writer`, with the real writer's
/// session timeout, `writer_ms`): it gives server 1 up within its read
/// timeout of the create, before the drop.
/// When is the simulator's: its run of the same mute (inline below, with
/// the real run's syncLimit × tickTime, `sync_ms`, and silent session's
/// timeout, `session_ms`), whose trace says when client 0 was told its
/// session expired and when the leader dropped server 1, from the mute,
/// the model's last word from it. (the six steps of
/// `zk-muted-follower-dropped`; the words for the report's detail)
pub fn zk_muted_follower_dropped(
    sync_ms: u64,
    session_ms: u64,
    writer_ms: u64,
) -> ([bool; 6], String) {
    let (reader, writer, silent) = (0, 3, 6);
    let mut e = Ens::with(Face::ZooKeeper, false, 7);
    e.d.mute(0);
    e.create(2, "b");
    e.release();
    let fresh = e.list(reader).is_some_and(|n| n == ["b"]);
    let held = replies(&e.create(writer, "a"), writer).is_empty();
    let (pong, renewed) = e.d.ping_renewing(SessionId::first(silent));
    let answered = pong
        .iter()
        .any(|(to, m)| *to == silent && matches!(m, Msg::Pong { .. }));
    e.expire(silent);
    let applied = e.release();
    let expired = |c: ClientIdx| {
        applied
            .iter()
            .any(|(to, m)| *to == c && matches!(m, Msg::Expired { .. }))
    };
    let told = answered && !renewed && expired(silent) && !expired(reader);
    let closed = e.d.drop_follower(0);
    e.d.rejoin(0);
    e.release();
    let view = e.d.st.server(Some(0));
    let lost = e.d.lag(0) == 0
        && view.zk.node(node("b")).is_some()
        && [&e.d.st, view]
            .iter()
            .all(|s| s.zk.node(node("a")).is_none());
    let (timing, words) = said(
        simulated_mute(sync_ms, session_ms),
        |(told_after, dropped_after)| {
            format!(
                "the simulator's server 1, muted with a {session_ms} ms session on it and sync_limit_ms {sync_ms}: client 0 told its session expired {} ms after the mute, server 1 dropped {} ms after it",
                told_after / 1000,
                dropped_after / 1000
            )
        },
    );
    let bound = sync_ms * 1000;
    let on_time = |ok: &dyn Fn(u64, u64) -> bool| timing.is_some_and(|(t, d)| ok(t, d));
    let read_timeout = models::timing::read_timeout(writer_ms * 1000);
    let (gave_up, writer_words) = said(
        simulated_muted_writer(sync_ms, writer_ms),
        |(after_create, dropped_after_create, silence)| {
            format!(
                "the simulator's writer ({writer_ms} ms session, read timeout {} ms) gave server 1 up {} ms after its create, {} ms after it last heard from it, the drop {} ms after the create",
                read_timeout / 1000,
                after_create / 1000,
                silence / 1000,
                dropped_after_create / 1000
            )
        },
    );
    // At its read timeout from the last word it heard, which came before
    // its create: within its read timeout of the create.
    let writer_on_time = gave_up.is_some_and(|(g, d, silence)| silence == read_timeout && g < d);
    (
        [
            fresh,
            held,
            told && on_time(&|t, d| t < bound && t < d),
            closed.contains(&reader) && on_time(&|_, d| d >= bound && d <= bound + 1_000_000),
            lost,
            writer_on_time,
        ],
        format!("{words}; {writer_words}"),
    )
}

/// The simulator's writer on a muted server 1 (`writer_ms` its session
/// timeout, syncLimit × tickTime `sync_ms`): client 0 creates 100 ms into
/// the mute, and gives server 1 up when its read timeout runs out. (µs
/// from the create's arrival at server 1 to the give-up, and to the drop;
/// µs from the last word client 0 heard from the store to the give-up)
fn simulated_muted_writer(sync_ms: u64, writer_ms: u64) -> Result<(u64, u64, u64), String> {
    let text = format!(
        "recipe = \"fair-predecessor\"\nclients = 2\nservers = 3\nseed = 1\n\
         [timing]\nsession_timeout_ms = {writer_ms}\nsync_limit_ms = {sync_ms}\n\
         think_ms = [600, 600]\n\
         [[schedule]]\nat_ms = 500\nkind = \"mute\"\nserver = 1\nduration_ms = {}\n",
        2 * sync_ms
    );
    let file = "scenarios/muted-follower-writer.toml";
    let run = crate::twin::run(&crate::twin::parse(file, &text)?);
    let created = first_at(
        &run,
        |e| matches!(e, TraceEvent::Deliver { from: Party::Client(0), msg, .. } if msg.starts_with("create")),
    );
    let gave_up = first_at(&run, |e| {
        matches!(
            e,
            TraceEvent::ServerSilent {
                client: 0,
                server: 1
            }
        )
    });
    let dropped = server_1_at(&run, |c| matches!(c, FollowerChange::DroppedByLeader));
    let heard = gave_up.and_then(|g| {
        let to_0 = |e: &TraceEvent| {
            matches!(
                e,
                TraceEvent::Deliver {
                    from: Party::Store,
                    to: Party::Client(0),
                    ..
                }
            )
        };
        let lines = run.outcome.trace.iter();
        lines
            .filter(|l| l.t <= g && to_0(&l.event))
            .map(|l| l.t)
            .next_back()
    });
    match (created, gave_up, dropped, heard) {
        (Some(c), Some(g), Some(d), Some(h)) if g >= c && d >= c => Ok((g - c, d - c, g - h)),
        _ => Err(format!(
            "{file}: not client 0's create, its give-up of server 1 and server 1's drop, in order, and a word heard before: {created:?}, {gave_up:?}, {dropped:?}, {heard:?}"
        )),
    }
}

/// The simulator's mute of server 1, with syncLimit × tickTime of
/// `sync_ms`, where client 0 has a session of `session_ms`: (µs from the
/// mute to client 0's being told its session expired, µs from the mute to
/// the leader's dropping server 1).
fn simulated_mute(sync_ms: u64, session_ms: u64) -> Result<(u64, u64), String> {
    let text = format!(
        "recipe = \"fair-predecessor\"\nclients = 2\nservers = 3\nseed = 1\n\
         [timing]\nsession_timeout_ms = {session_ms}\nsync_limit_ms = {sync_ms}\n\
         [[schedule]]\nat_ms = 500\nkind = \"mute\"\nserver = 1\nduration_ms = 3000\n"
    );
    let file = "scenarios/muted-follower-dropped.toml";
    let run = crate::twin::run(&crate::twin::parse(file, &text)?);
    let muted = server_1_at(&run, |c| matches!(c, FollowerChange::Muted { .. }));
    let dropped = server_1_at(&run, |c| matches!(c, FollowerChange::DroppedByLeader));
    let told = first_at(&run, |e| {
        matches!(
            e,
            TraceEvent::Deliver {
                to: Party::Client(0),
                kind: MsgKind::Expired,
                ..
            }
        )
    });
    match (muted, told, dropped) {
        (Some(m), Some(t), Some(d)) if t >= m => Ok((t - m, d.saturating_sub(m))),
        _ => Err(format!(
            "{file}: not server 1 muted, client 0 told its session expired, server 1 dropped: {muted:?}, {told:?}, {dropped:?}"
        )),
    }
}

/// etcd: the leader puts a new value; a linearizable `Range` from server
/// 1's client is the leader's (its read index). (the new value)
pub fn etcd_linearizable_new() -> bool {
    let mut e = Ens::new(Face::Etcd);
    e.put(2, 1);
    e.catch_up();
    e.put(2, 2);
    let s = e.send(0, Request::Range(Range::of(Keys::One(key()))));
    replies(&s, 0).first().and_then(value_of) == Some(Data::Number(2))
}

/// etcd: the leader puts a new value while server 1 has not applied it; a
/// serializable `Range` from server 1's client is server 1's own answer,
/// the old value, and the new one once server 1 has caught up.
/// (old value on the member, new value once caught up)
pub fn etcd_serializable_stale() -> (bool, bool) {
    let mut e = Ens::new(Face::Etcd);
    e.put(2, 1);
    e.catch_up();
    e.put(2, 2);
    let serializable = || {
        Request::Range(Range {
            serializable: true,
            ..Range::of(Keys::One(key()))
        })
    };
    let stale = e.send(0, serializable());
    e.release();
    let fresh = e.send(0, serializable());
    let read = |s: &Sent| replies(s, 0).first().and_then(value_of);
    (
        read(&stale) == Some(Data::Number(1)),
        read(&fresh) == Some(Data::Number(2)),
    )
}

/// etcd: client 0's lease, granted through server 1; server 1 is cut off
/// from the leader. A keepalive through it is not answered (the lessor is
/// the leader's); the leader's timer, which nothing renews, ends the lease
/// while the cut lasts; once the cut heals, a keepalive finds it gone.
/// (no keepalive answered, the lease ended at the leader, gone after)
pub fn etcd_keepalive_cut() -> (bool, bool, bool) {
    let mut e = Ens::new(Face::Etcd);
    let s = SessionId::first(0);
    e.send(0, Request::LeaseGrant);
    e.catch_up();
    let answered = |sent: &Sent| {
        sent.iter()
            .any(|(to, m)| *to == 0 && matches!(m, Msg::Pong { .. }))
    };
    let (before, renewed_before) = e.d.ping_renewing(s);
    e.d.cut_off(0);
    let (during, renewed_during) = e.d.ping_renewing(s);
    // Nothing renewed it since the cut: the leader's timer ends it.
    e.expire(0);
    let ended = e.d.st.ended(e.d.st.known(s));
    e.d.rejoin(0);
    e.release();
    let after = answered(&e.d.ping(s));
    (
        answered(&before) && renewed_before && !answered(&during),
        !renewed_during && ended,
        !after,
    )
}

/// etcd, a leader failover: client 0's lease is granted, nobody renews
/// it; the leader is cut off from its members (the real leader stopped);
/// they elect another, which starts every lease's timer again (etcd's
/// lessor extends each); a write through the new leader commits; the old
/// leader steps down (CheckQuorum), follows the new one once it hears it,
/// and applies the write. (another elected, the lease's timer started
/// again, the old leader has the write)
pub fn etcd_failover() -> (bool, bool, bool) {
    let mut e = Ens::new(Face::Etcd);
    e.send(0, Request::LeaseGrant);
    e.catch_up();
    // The lease as the store numbers it (etcd's ids, in grant order).
    let lease = e.d.st.known(SessionId::first(0));
    e.d.depose_leader();
    let (_, leader, restarted) = e.d.elect_leader();
    let elected = leader.is_some_and(|l| l != 0);
    let extended = restarted.contains(&lease);
    let wrote = replies(&e.put(1, 7), 1)
        .iter()
        .any(|r| matches!(r, Reply::TxnResult { .. }));
    let has = e
        .old_leader_caught_up()
        .and_then(|view| view.etcd.get(key()))
        .is_some_and(|kv| kv.value == Data::Number(7));
    (elected, extended, wrote && has)
}

/// etcd: a watch made through server 1 and one through the leader; the
/// leader's fires at the commit, server 1's when server 1 applies it.
/// (leader's at commit, server 1's not, server 1's on apply)
pub fn etcd_watch_on_apply() -> (bool, bool, bool) {
    let mut e = Ens::new(Face::Etcd);
    for c in [0, 2] {
        e.send(
            c,
            Request::Watch {
                key: key(),
                start_revision: 0,
            },
        );
    }
    e.catch_up();
    let committed = e.put(1, 7);
    let applied = e.release();
    (told(&committed, 2), !told(&committed, 0), told(&applied, 0))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_model_shows_each_behaviour() {
        assert_eq!(super::zk_stale_read(), (true, true, true));
        assert_eq!(super::zk_sync_waits(), (true, true, true));
        assert_eq!(super::zk_watch_on_apply(), (true, true, true));
        assert_eq!(super::zk_new_session_waits(), (true, true));
        assert_eq!(super::zk_reconnect_refused(), (true, true));
        assert_eq!(super::zk_local_session_stale(), (true, true, true));
        assert_eq!(super::zk_expired_told_behind(), (true, true, true));
        assert_eq!(super::zk_failover(), (true, true, true, true));
        assert_eq!(super::etcd_failover(), (true, true, true));
        let (answered, dropped, words) = super::zk_follower_dropped();
        assert!(answered && dropped, "{words}");
        let (stale, connected, new, words) = super::zk_lag_past_sync_limit();
        assert!(stale && connected && new, "{words}");
        // The real run's timing (`run.sh`: tickTime 250, syncLimit 8;
        // `ensemble::SILENT_SESSION_MS`).
        let (steps, words) = super::zk_muted_follower_dropped(2000, 1000, 2400);
        assert_eq!(steps, [true; 6], "{words}");
        assert!(super::etcd_linearizable_new());
        assert_eq!(super::etcd_serializable_stale(), (true, true));
        assert_eq!(super::etcd_keepalive_cut(), (true, true, true));
        assert_eq!(super::etcd_watch_on_apply(), (true, true, true));
    }
}
