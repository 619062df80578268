//! A replicated store, its steps called directly: the behaviours measured
//! on a real three-server ZooKeeper 3.8 ensemble (docs/ensemble.md) that
//! the model reproduces — a lagging follower serves its clients the old
//! data, `sync` waits for the client's server, a watch set on a follower
//! fires when that follower applies the change, a write is answered once
//! the client's server has applied it, a new session is answered only once
//! its server has applied its creation (so it never sees a view older than
//! that), and an expiry reaches a follower's client when its server
//! applies it — and the two properties of a session's view: within a
//! session no read goes back, and a new session starts no older than its
//! creation.

mod common;

use models::ids::{ClientIdx, Data, SessionId, ZPath};
use models::msg::{Msg, Reply, Request};
use models::recipe::Setup;
use models::store::driver::{Sent, StoreDriver};
use models::store::{EnsembleCfg, Store};
use proptest::prelude::*;
use std::time::Duration;

/// A three-server ZooKeeper ensemble and three clients: client 0 on
/// server 1, client 1 on server 2, client 2 on the leader (server 0).
struct Ens(StoreDriver);

fn sid(c: ClientIdx) -> SessionId {
    SessionId::first(c)
}

fn node(name: &str) -> ZPath {
    ZPath::parse(&format!("/lock/{name}")).unwrap()
}

fn create(name: &str) -> Request {
    Request::Create {
        path: node(name),
        ephemeral: true,
        sequential: false,
        data: Data::Empty,
    }
}

fn children(watch: bool) -> Request {
    Request::GetChildren {
        path: ZPath::parse("/lock").unwrap(),
        watch,
    }
}

fn exists(name: &str) -> Request {
    Request::Exists {
        path: node(name),
        watch: true,
    }
}

/// The replies in `sent` to client `c`.
fn replies_to(sent: &Sent, c: ClientIdx) -> Vec<(u64, Reply)> {
    sent.iter()
        .filter_map(|(to, m)| match m {
            Msg::Reply { header, reply, .. } if *to == c => Some((*header, reply.clone())),
            _ => None,
        })
        .collect()
}

fn names(reply: &Reply) -> Vec<String> {
    match reply {
        Reply::Children(c) => c.iter().map(|c| c.to_string()).collect(),
        other => panic!("not a listing: {other:?}"),
    }
}

impl Ens {
    fn new() -> Ens {
        Ens::with(false)
    }

    /// With ZooKeeper's local sessions or without.
    fn with(local_sessions: bool) -> Ens {
        let store = Store {
            ensemble: Some(EnsembleCfg::new(
                models::recipe::Face::ZooKeeper,
                3,
                3,
                u32::MAX,
                local_sessions,
            )),
            ..Store::for_face(
                models::recipe::Face::ZooKeeper,
                Duration::from_secs(4),
                Setup::lock_dir(),
            )
        };
        let mut e = Ens(StoreDriver::new(store));
        // Every client connected, every server caught up.
        for c in 0..3 {
            e.send(c, Request::Connect);
        }
        e.catch_up();
        e
    }

    fn send(&mut self, c: ClientIdx, req: Request) -> Sent {
        self.0.send_in(sid(c), req)
    }

    /// Follower `f` (server `f + 1`) applies one entry.
    fn apply(&mut self, f: usize) -> Sent {
        let sent = self.0.apply(f);
        sent.unwrap_or_else(|| panic!("follower {f} had nothing to apply"))
    }

    fn catch_up(&mut self) -> Sent {
        (0..2).flat_map(|f| self.0.catch_up(f)).collect()
    }

    /// Client `c` reconnects on a new connection.
    fn reconnect(&mut self, c: ClientIdx) -> Sent {
        self.0.reconnect(sid(c))
    }

    fn expire(&mut self, c: ClientIdx) -> Sent {
        self.0.expire(sid(c))
    }

    fn ping(&mut self, c: ClientIdx) -> Sent {
        self.0.ping(sid(c))
    }
}

/// The driver's own steps (`send_in`, `lag`, `server`, its state `st`)
/// as they are.
impl std::ops::Deref for Ens {
    type Target = StoreDriver;
    fn deref(&self) -> &StoreDriver {
        &self.0
    }
}

impl std::ops::DerefMut for Ens {
    fn deref_mut(&mut self) -> &mut StoreDriver {
        &mut self.0
    }
}

/// The leader commits a create; server 1 has not applied it: its client
/// lists the old children, the leader's client the new. Once it applies
/// the create, its client sees it too.
#[test]
fn a_lagging_follower_serves_its_clients_the_old_data() {
    let mut e = Ens::new();
    let made = e.send(2, create("a"));
    assert!(matches!(
        replies_to(&made, 2)[..],
        [(_, Reply::Created { .. })]
    ));
    let stale = e.send(0, children(false));
    let [(stale_zxid, ref listing)] = replies_to(&stale, 0)[..] else {
        panic!("{stale:?}");
    };
    assert!(names(listing).is_empty(), "server 1 has not applied it");
    let fresh = e.send(2, children(false));
    assert_eq!(names(&replies_to(&fresh, 2)[0].1), ["a"]);
    e.apply(0);
    let after = e.send(0, children(false));
    let [(zxid, ref listing)] = replies_to(&after, 0)[..] else {
        panic!("{after:?}");
    };
    assert_eq!(names(listing), ["a"]);
    assert!(zxid > stale_zxid, "the follower's zxid moved on with it");
}

/// `sync` on a lagging follower does not answer stale: it waits until the
/// follower has applied what the leader had committed, then answers; on
/// a caught-up server (or the leader) it answers at once.
#[test]
fn sync_waits_until_the_clients_server_has_caught_up() {
    let mut e = Ens::new();
    e.send(2, create("a"));
    e.send(2, create("b"));
    let sync = Request::Sync {
        path: ZPath::parse("/lock").unwrap(),
    };
    assert!(replies_to(&e.send(0, sync.clone()), 0).is_empty(), "held");
    assert!(replies_to(&e.apply(0), 0).is_empty(), "one of two applied");
    let done = e.apply(0);
    assert!(matches!(replies_to(&done, 0)[..], [(_, Reply::Synced)]));
    assert_eq!(
        names(&replies_to(&e.send(0, children(false)), 0)[0].1),
        ["a", "b"]
    );
    // The leader's own client, and a caught-up follower's: at once.
    assert!(matches!(
        replies_to(&e.send(2, sync.clone()), 2)[..],
        [(_, Reply::Synced)]
    ));
    e.catch_up();
    assert!(matches!(
        replies_to(&e.send(1, sync), 1)[..],
        [(_, Reply::Synced)]
    ));
}

/// A watch set on server 1 fires when server 1 applies the change, not
/// when the leader commits it; the leader's own watcher hears at commit.
#[test]
fn a_watch_fires_when_the_watchers_server_applies_the_change() {
    let mut e = Ens::new();
    e.send(0, exists("a"));
    e.send(2, exists("a"));
    let committed = e.send(1, create("a"));
    let told = |s: &Sent, c| {
        s.iter()
            .any(|(to, m)| *to == c && matches!(m, Msg::Notify { .. }))
    };
    assert!(told(&committed, 2), "the leader's watcher hears at commit");
    assert!(!told(&committed, 0), "server 1 has not applied it");
    let applied = e.apply(0);
    assert!(told(&applied, 0));
}

/// A write from a follower's client is committed by the leader at once and
/// answered when the client's server has applied it; what the client reads
/// next includes it (its own writes, in order).
#[test]
fn a_write_is_answered_once_the_clients_server_has_applied_it() {
    let mut e = Ens::new();
    let sent = e.send(0, create("a"));
    assert!(replies_to(&sent, 0).is_empty(), "held by server 1");
    assert!(e.st.zk.node(node("a")).is_some(), "committed by the leader");
    assert!(e.st.holds_reply(0, 0));
    let applied = e.apply(0);
    assert!(matches!(
        replies_to(&applied, 0)[..],
        [(_, Reply::Created { .. })]
    ));
    assert_eq!(
        names(&replies_to(&e.send(0, children(false)), 0)[0].1),
        ["a"]
    );
}

/// A new (global) session is created by the leader and answered by the
/// client's server once it has applied the creation — so its first read
/// sees at least everything committed before it. (A local session, opened
/// by the follower itself, could see older: not modelled yet.)
#[test]
fn a_new_global_session_never_sees_a_view_older_than_its_creation() {
    let mut e = Ens::new();
    e.send(2, create("a"));
    // Client 0 opens a second session (as after an expiry).
    let fresh = SessionId {
        incarnation: 1,
        ..sid(0)
    };
    assert!(
        replies_to(&e.send_in(fresh, Request::Connect), 0).is_empty(),
        "not before server 1 applied it"
    );
    assert!(replies_to(&e.apply(0), 0).is_empty(), "the create first");
    assert!(matches!(
        replies_to(&e.apply(0), 0)[..],
        [(_, Reply::Connected)]
    ));
    let read = e.send_in(fresh, children(false));
    assert_eq!(names(&replies_to(&read, 0)[0].1), ["a"]);
}

/// An expiry ends the session at the leader at once (its ephemeral node
/// goes there), but a follower's client hears of it only when its server
/// applies the expiry: until then its server answers its pings and still
/// lists its node.
#[test]
fn an_expiry_reaches_a_followers_client_when_its_server_applies_it() {
    let mut e = Ens::new();
    e.send(0, create("a"));
    e.apply(0);
    let expired = e.expire(0);
    let told = |s: &Sent| {
        s.iter()
            .any(|(to, m)| *to == 0 && matches!(m, Msg::Expired { .. }))
    };
    assert!(!told(&expired), "server 1 has not applied it");
    assert!(e.st.zk.node(node("a")).is_none(), "gone at the leader");
    assert!(e
        .ping(0)
        .iter()
        .any(|(to, m)| *to == 0 && matches!(m, Msg::Pong { .. })));
    assert_eq!(
        names(&replies_to(&e.send(0, children(false)), 0)[0].1),
        ["a"]
    );
    assert!(told(&e.apply(0)));
    assert!(e
        .ping(0)
        .iter()
        .any(|(to, m)| *to == 0 && matches!(m, Msg::Expired { .. })));
}

/// Within a session no read returns an older zxid than one already seen,
/// whatever the followers' lags and the servers the clients reconnect to:
/// random runs of writes, reads, syncs, applies and reconnects, every
/// reply's zxid to each client in order (and every notification's, on
/// one connection: a notification is not a read, and a client that moves
/// may hear from a server behind the one that sent it).
fn no_read_goes_back(ops: &[(u8, u8)]) -> Result<(), TestCaseError> {
    let mut e = Ens::new();
    let mut seen = [0u64; 3];
    let mut heard = [0u64; 3];
    for (n, &(what, who)) in ops.iter().enumerate() {
        let c = ClientIdx::from(who % 3);
        let sent = match what % 6 {
            5 => {
                heard[usize::from(c)] = 0;
                e.reconnect(c)
            }
            0 => e.send(c, create(&format!("n{n}"))),
            1 => e.send(c, children(who % 2 == 0)),
            2 => e.send(
                c,
                Request::Sync {
                    path: ZPath::parse("/lock").unwrap(),
                },
            ),
            _ => {
                let f = usize::from(who % 2);
                if e.lag(f) == 0 {
                    continue;
                }
                e.apply(f)
            }
        };
        for (to, m) in &sent {
            let (header, last) = match m {
                Msg::Reply { header, .. } => (*header, &mut seen[usize::from(*to)]),
                Msg::Notify { header, .. } => (*header, &mut heard[usize::from(*to)]),
                _ => continue,
            };
            prop_assert!(
                header >= *last,
                "client {} saw {} after {}",
                to,
                header,
                last
            );
            *last = header;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn within_a_session_no_read_goes_back(ops in prop::collection::vec((0u8..6, 0u8..6), 0..40)) {
        no_read_goes_back(&ops)?;
    }
}

/// One server is the store as it always was: no ensemble in its state.
#[test]
fn one_server_has_no_ensemble() {
    let store = Store::for_face(
        models::recipe::Face::ZooKeeper,
        Duration::from_secs(4),
        Setup::lock_dir(),
    );
    assert!(store.initial_state().ensemble.is_none());
    assert!(Ens::new().st.ensemble.is_some());
}

/// The checker over three servers: the clients on followers, every
/// property of the lock kept without faults, the counts pinned; a pause
/// breaks what it breaks on one server, and progress too: a create whose
/// reply went with the old connection is not yet on the server the client
/// reconnects to, so the guid's listing misses it, and the client creates
/// a second node and waits behind its own first.
#[test]
fn the_checker_explores_the_followers_lags() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::{FaultBudget, ModelCfg};
    let run = |servers, faults| {
        let cfg = ModelCfg {
            servers,
            faults,
            ..ModelCfg::new(
                models::recipes::parse("fair-predecessor:curator").unwrap(),
                2,
            )
        };
        check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap()
    };
    let violated = |r: &models::checker::CheckResult| -> Vec<&'static str> {
        r.properties
            .iter()
            .filter(|p| p.status == Status::Violated)
            .map(|p| p.name.name())
            .collect()
    };
    let calm = run(3, FaultBudget::default());
    assert_eq!(violated(&calm), Vec::<&str>::new());
    // herd_bound too: a release's notifications from every server, added
    // up (`the_checker_adds_up_a_releases_herd_over_the_servers`).
    let judged: Vec<&str> = calm.properties.iter().map(|p| p.name.name()).collect();
    assert!(judged.contains(&"herd_bound"), "{judged:?}");
    assert!(judged.contains(&"mutual_exclusion"));
    assert_eq!(calm.unique_states, 1_990);
    let one = run(1, FaultBudget::default());
    assert!(
        one.unique_states < calm.unique_states,
        "the lags are explored"
    );
    let pause = FaultBudget {
        pauses: 1,
        ..FaultBudget::default()
    };
    let one = violated(&run(1, pause));
    assert_eq!(one, ["mutual_exclusion", "resource_exclusion"]);
    let three = run(3, pause);
    assert_eq!(violated(&three), [&one[..], &["progress"]].concat());
    let progress = three
        .properties
        .iter()
        .find(|p| p.name.name() == "progress")
        .and_then(|p| p.path.as_ref())
        .expect("a counterexample");
    assert!(
        progress
            .iter()
            .any(|a| matches!(a, models::model::Action::ResumeReconnect(_))),
        "{progress:?}"
    );
}

/// Two clients of `variant` over three servers, with or without local
/// sessions, one of them paused once.
fn paused_over_three(variant: &str, local_sessions: bool) -> models::model::ModelCfg {
    use models::model::{FaultBudget, ModelCfg};
    ModelCfg {
        servers: 3,
        local_sessions,
        faults: FaultBudget {
            pauses: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse(variant).unwrap(), 2)
    }
}

/// CURATOR-604 in the checker: with local sessions, a client whose session
/// expired reconnects to a server that has applied its node's create but
/// not the expiry, opens a new session there at once, lists its old node
/// first and holds on it — `holder_owns_key` violated. With global
/// sessions no such path exists; the `sync` variant has none either.
#[test]
fn the_checker_finds_curator_604_only_with_local_sessions() {
    use models::checker::{check, CheckOptions, Status};
    let run = |variant: &str, local_sessions| {
        let cfg = paused_over_three(variant, local_sessions);
        check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap()
    };
    let owns = |r: &models::checker::CheckResult| {
        r.properties
            .iter()
            .find(|p| p.name.name() == "holder_owns_key")
            .map(|p| (p.status, p.path.as_ref().map(Vec::len)))
            .unwrap()
    };
    let local = run("fair-predecessor:curator", true);
    assert_eq!(owns(&local), (Status::Violated, Some(17)));
    assert_eq!(
        owns(&run("fair-predecessor:curator", false)).0,
        Status::Holds
    );
    assert_eq!(owns(&run("fair-predecessor:sync", true)).0, Status::Holds);
}

/// The stale read of helix#1118 in an election, in the checker: with local
/// sessions, `LeaderLatch` before CURATOR-696, whose session expired,
/// reconnects to a server that has applied its node's create but not the
/// expiry, opens a new session there at once, lists its old node lowest
/// and leads on it — `elected_with_key` violated (16 steps). With global
/// sessions no such path exists; `LeaderLatch` with the fix, which checks
/// the node's `ephemeralOwner`, has none with local sessions either.
#[test]
fn the_checker_elects_on_a_stale_listing_only_with_local_sessions() {
    use models::checker::{check, CheckOptions, Status};
    use models::properties::PropertyName;
    let asked = PropertyName::ALL
        .iter()
        .position(|&p| p == PropertyName::ElectedWithKey)
        .unwrap();
    let run = |variant: &str, local_sessions| {
        let cfg = paused_over_three(variant, local_sessions);
        let options = CheckOptions {
            ask: 1 << asked,
            ..CheckOptions::default()
        };
        let r = check(&cfg.into_model().unwrap(), options).unwrap();
        r.properties
            .iter()
            .find(|p| p.name == PropertyName::ElectedWithKey)
            .map(|p| (p.status, p.path.as_ref().map(Vec::len)))
            .unwrap()
    };
    assert_eq!(
        run("zk-fair-election:curator-696", true),
        (Status::Violated, Some(16))
    );
    assert_eq!(run("zk-fair-election:curator-696", false).0, Status::Holds);
    assert_eq!(run("zk-fair-election:curator", true).0, Status::Holds);
}

/// A client that has seen server 1's newer state reconnects: server 2,
/// next in its list, is behind what it has seen and refuses it ("client
/// must try another server"); it lands on the leader. Once server 2 has
/// caught up, a client moving there is taken.
#[test]
fn a_reconnect_is_refused_by_a_server_behind_what_the_client_has_seen() {
    let mut e = Ens::new();
    e.send(2, create("a"));
    e.apply(0);
    assert_eq!(
        names(&replies_to(&e.send(0, children(false)), 0)[0].1),
        ["a"]
    );
    assert_eq!(e.lag(1), 1, "server 2 has not applied the create");
    let ens = e.st.ensemble.as_ref().unwrap();
    assert_eq!(ens.refusing(0), [2]);
    e.reconnect(0);
    assert_eq!(e.server(0), 0, "refused by server 2, taken by the leader");
    // Client 1 on server 2 has seen nothing newer than server 2: it moves
    // to the leader's successor in its list, server 0, unrefused.
    assert!(e.st.ensemble.as_ref().unwrap().refusing(1).is_empty());
    e.catch_up();
    // Client 0, now on the leader, moves on to server 1 (caught up).
    e.reconnect(0);
    assert_eq!(e.server(0), 1);
    assert_eq!(
        names(&replies_to(&e.send(0, children(false)), 0)[0].1),
        ["a"]
    );
}

/// A watch moves with its client (`setWatches`): an exists watch on a
/// missing node, set on lagging server 1, fires NodeCreated as the client
/// reconnects to the leader, where the node exists; a watch whose node has
/// not changed is set on the new server and fires when that changes.
#[test]
fn a_watch_moves_with_its_client_and_fires_if_its_node_changed() {
    let mut e = Ens::new();
    e.send(0, exists("a"));
    e.send(
        0,
        Request::GetChildren {
            path: ZPath::parse("/lock").unwrap(),
            watch: true,
        },
    );
    e.send(
        2,
        Request::Create {
            path: ZPath::parse("/b").unwrap(),
            ephemeral: false,
            sequential: false,
            data: Data::Empty,
        },
    );
    e.catch_up();
    e.send(2, create("a"));
    // Server 1 has not applied it; client 0 has seen only what came before.
    let moved = e.reconnect(0);
    assert_eq!(e.server(0), 2, "server 2 is not behind what client 0 saw");
    assert!(
        moved.is_empty(),
        "server 2 has not applied the create either"
    );
    let fired = e.apply(1);
    let events: Vec<_> = fired
        .iter()
        .filter_map(|(to, m)| match m {
            Msg::Notify { event, .. } if *to == 0 => Some(event.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(events.len(), 2, "both watches, now on server 2: {events:?}");
    // Back round to a server ahead of where the watch was set: it fires
    // as the client arrives.
    let mut e = Ens::new();
    e.send(0, exists("a"));
    e.send(2, create("a"));
    e.apply(1);
    let moved = e.reconnect(0);
    assert_eq!(e.server(0), 2);
    assert!(
        moved
            .iter()
            .any(|(to, m)| *to == 0 && matches!(m, Msg::Notify { .. })),
        "NodeCreated on arrival: {moved:?}"
    );
}

/// A watch that moves to a server ahead of the one it was set on fires as
/// its client arrives, and tells of the first change it had not seen: the
/// herd counts it with that change, as the old server's apply would have,
/// not with the new server's latest.
#[test]
fn a_moved_watch_tells_of_the_change_that_fired_it() {
    let mut e = Ens::new();
    e.send(0, exists("a"));
    e.send(2, create("a"));
    let created = e.st.header();
    e.send(2, create("b"));
    e.apply(1);
    e.apply(1);
    let moved = e.reconnect(0);
    assert_eq!(e.server(0), 2);
    let told: Vec<u64> = moved
        .iter()
        .filter_map(|(to, m)| match m {
            Msg::Notify { header, .. } if *to == 0 => Some(*header),
            _ => None,
        })
        .collect();
    assert_eq!(told, [created], "NodeCreated, of /a's create: {moved:?}");
    let latest = e.st.server(Some(1)).header();
    assert!(latest > created, "server 2 has applied /b's create too");
}

/// A session that has ended is told so on its reconnect, and its watches
/// are not set again: the new server closes the connection before it
/// reads the `setWatches`.
#[test]
fn an_ended_sessions_watches_do_not_move() {
    let mut e = Ens::new();
    e.send(0, exists("a"));
    e.send(2, create("a"));
    e.expire(0);
    e.apply(1);
    e.apply(1);
    let moved = e.reconnect(0);
    assert_eq!(e.server(0), 2);
    assert!(
        moved
            .iter()
            .any(|(to, m)| *to == 0 && matches!(m, Msg::Expired { .. })),
        "told of the expiry: {moved:?}"
    );
    assert!(
        !moved
            .iter()
            .any(|(to, m)| *to == 0 && matches!(m, Msg::Notify { .. })),
        "no watch event: {moved:?}"
    );
}

/// Global sessions: a new session on a lagging follower waits for its
/// `createSession` to be applied there, and so lists no node of a session
/// the leader expired before. Local sessions: the follower opens it at
/// once, from its own view, and lists the expired session's node (the
/// CURATOR-604 window); its first ephemeral node upgrades it, committed.
#[test]
fn a_local_session_opens_at_once_and_can_see_a_view_older_than_its_creation() {
    for local in [false, true] {
        let mut e = Ens::with(local);
        e.send(1, create("a"));
        e.catch_up();
        e.expire(1);
        assert_eq!(e.lag(0), 1, "server 1 has not applied the expiry");
        let fresh = SessionId {
            incarnation: 1,
            ..sid(0)
        };
        let opened = replies_to(&e.send_in(fresh, Request::Connect), 0);
        let listed = replies_to(&e.send_in(fresh, children(false)), 0);
        if local {
            assert!(matches!(opened[..], [(_, Reply::Connected)]));
            assert_eq!(names(&listed[0].1), ["a"], "the expired session's node");
            let before = e.st.ensemble.as_ref().unwrap().committed();
            e.send_in(fresh, create("b"));
            let log = &e.st.ensemble.as_ref().unwrap().log;
            assert_eq!(e.st.ensemble.as_ref().unwrap().committed(), before + 2);
            assert!(
                log.iter().any(|entry| matches!(
                    entry,
                    models::store::ensemble::Entry::Apply {
                        session,
                        req: Request::Connect
                    } if *session == fresh
                )),
                "upgraded before its ephemeral node: {log:?}"
            );
        } else {
            assert!(opened.is_empty(), "waits for its createSession");
            assert!(listed.is_empty(), "and its read behind it");
            let done = e.catch_up();
            let to0 = replies_to(&done, 0);
            assert!(matches!(to0[0], (_, Reply::Connected)));
            assert!(names(&to0[1].1).is_empty(), "the expiry came first");
        }
    }
}

/// A local session is its server's alone, yet its persistent writes are
/// the leader's and every server applies them (the leader's session
/// tracker lets a learner's local session through): a server that does
/// not know the session still applies its create. Once the session has
/// ended at the leader (its client moved away), the leader refuses its
/// write, and no server applies it.
#[test]
fn every_server_applies_a_local_sessions_write_and_none_a_refused_one() {
    let mut e = Ens::with(true);
    let persistent = |name| Request::Create {
        path: node(name),
        ephemeral: false,
        sequential: false,
        data: Data::Empty,
    };
    let created = e.send(0, persistent("q"));
    assert!(
        replies_to(&created, 0).is_empty(),
        "answered once server 1 has it"
    );
    e.catch_up();
    for c in 0..3 {
        let listed = replies_to(&e.send(c, children(false)), c);
        assert_eq!(names(&listed[0].1), ["q"], "client {c}'s server");
    }
    // Client 0 moves to server 2, which does not know its local session:
    // the session ends at the leader, and the write it sends before it
    // hears so is refused there.
    e.reconnect(0);
    assert_eq!(e.server(0), 2);
    let refused = e.send(0, persistent("r"));
    let log = &e.st.ensemble.as_ref().unwrap().log;
    assert!(
        matches!(
            log.last(),
            Some(models::store::ensemble::Entry::Refused { .. })
        ),
        "{log:?}"
    );
    e.catch_up();
    let answer = replies_to(&refused, 0);
    assert!(
        !answer
            .iter()
            .any(|(_, r)| matches!(r, Reply::Created { .. })),
        "{answer:?}"
    );
    for c in 1..3 {
        let listed = replies_to(&e.send(c, children(false)), c);
        assert_eq!(names(&listed[0].1), ["q"], "client {c}'s server");
    }
}

/// The FIFO queue over three servers, in the checker, with local sessions
/// or global ones, without faults and with a pause: every verdict is the
/// one-server verdict. A stale listing on a follower only delays a
/// consumer (its take is the leader's delete), and a queue's read is
/// marked by the leader's queue when its server answers (before, a read a
/// follower served was marked by the lock's rule, and `fifo_order` fell
/// at 2 clients without a fault); a producer's local session's creates
/// reach every server (before, a server that did not know the session
/// dropped them, and the queue never drained).
#[test]
fn the_queue_over_three_servers_keeps_its_one_server_verdicts() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::{FaultBudget, ModelCfg};
    let verdicts = |variant: &str, servers, local_sessions, pauses| {
        let cfg = ModelCfg {
            servers,
            local_sessions,
            faults: FaultBudget {
                pauses,
                ..FaultBudget::default()
            },
            ..ModelCfg::new(models::recipes::parse(variant).unwrap(), 2)
        };
        let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
        let violated: Vec<_> = r
            .properties
            .iter()
            .filter(|p| p.status == Status::Violated)
            .map(|p| p.name.name())
            .collect();
        violated
    };
    for variant in [
        "zk-fifo-queue",
        "zk-fifo-queue:take-safe",
        "zk-fifo-queue:lock-safe",
    ] {
        for pauses in [0, 1] {
            let one = verdicts(variant, 1, false, pauses);
            for local in [false, true] {
                assert_eq!(
                    verdicts(variant, 3, local, pauses),
                    one,
                    "{variant}, {pauses} pauses, local sessions {local}"
                );
            }
        }
    }
    // Not a vacuous equality: a pause breaks the queue on one server.
    assert_eq!(
        verdicts("zk-fifo-queue", 1, false, 1),
        ["no_lost_item", "no_duplicate_item"]
    );
}

/// What only an ensemble shows, beside the CURATOR-604 and protected-create
/// findings pinned above (docs/ensemble.md, "What an ensemble changes"):
/// each property holds on one server and falls over three, its shortest
/// path through a follower's late answer or stale view.
/// - `unfair-create` with a lost reply: the holder's resent `delete(/lock)`
///   deletes the next holder's node at the leader, whose own server
///   answers its create only after (`holder_owns_key`); the election's
///   resignation the same (`elected_with_key`).
/// - The tutorial's barrier with a pause: a member lists, on a lagging
///   server, no child of a member that has entered again (after its
///   session expired), and leaves before it (`no_early_leave`).
/// - The seed article's `findLeader` with local sessions and a pause: the
///   old leader's new session reads its own old `/leader` on a lagging
///   server and watches it beside the other candidate, and its delete
///   wakes both (`herd_bound`); with global sessions the new session
///   waits for its creation, after the expiry, and it holds.
#[test]
fn the_stale_views_only_an_ensemble_has() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::{FaultBudget, ModelCfg};
    use models::properties::PropertyName;
    let run = |recipe: &str, property: PropertyName, faults, servers, local_sessions| {
        let asked = PropertyName::ALL
            .iter()
            .position(|&p| p == property)
            .unwrap();
        let cfg = ModelCfg {
            servers,
            local_sessions,
            faults,
            ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), 2)
        };
        let options = CheckOptions {
            ask: 1 << asked,
            ..CheckOptions::default()
        };
        let r = check(&cfg.into_model().unwrap(), options).unwrap();
        let p = r.properties.iter().find(|p| p.name == property).unwrap();
        (p.status, p.path.as_ref().map(Vec::len))
    };
    let lost = FaultBudget {
        lost_replies: 1,
        ..FaultBudget::default()
    };
    let paused = FaultBudget {
        pauses: 1,
        ..FaultBudget::default()
    };
    let cases = [
        (
            "unfair-create",
            PropertyName::HolderOwnsKey,
            lost,
            false,
            24,
        ),
        (
            "zk-unfair-election",
            PropertyName::ElectedWithKey,
            lost,
            false,
            24,
        ),
        (
            "zk-double-barrier:tutorial",
            PropertyName::NoEarlyLeave,
            paused,
            false,
            29,
        ),
        (
            "zk-unfair-election:getdata",
            PropertyName::HerdBound,
            paused,
            true,
            21,
        ),
    ];
    for (recipe, property, faults, local, steps) in cases {
        assert_eq!(
            run(recipe, property, faults, 1, false),
            (Status::Holds, None),
            "{recipe}, one server"
        );
        assert_eq!(
            run(recipe, property, faults, 3, local),
            (Status::Violated, Some(steps)),
            "{recipe}, three servers"
        );
    }
    assert_eq!(
        run(
            "zk-unfair-election:getdata",
            PropertyName::HerdBound,
            paused,
            3,
            false
        ),
        (Status::Holds, None),
        "with global sessions"
    );
}

/// A failover's new leader takes over its clients' watches from its view
/// as a follower: one whose node changed since fires, counted with the
/// change that fired it — the first the new leader had not applied — not
/// with the newest (a release's herd is the tally of its own change).
#[test]
fn a_watch_the_new_leader_takes_over_is_counted_with_its_change() {
    let mut e = Ens::new();
    e.send(2, create("a"));
    e.catch_up();
    // Client 1, on server 2 (the leader to be), watches `a`.
    e.send(1, exists("a"));
    let delete = Request::Delete {
        path: node("a"),
        version: None,
    };
    e.send(2, delete);
    let deleted_at = e.st.header();
    e.send(2, create("b"));
    assert!(
        e.st.header() > deleted_at,
        "a newer change after the delete"
    );
    assert_eq!(e.lag(1), 2, "server 2 has applied neither");
    e.depose_leader();
    let told = e.elect();
    assert_eq!(e.st.ensemble.as_ref().unwrap().leader, 2);
    let headers: Vec<u64> = told
        .iter()
        .filter(|(c, _)| *c == 1)
        .filter_map(|(_, m)| match m {
            Msg::Notify { header, .. } => Some(*header),
            _ => None,
        })
        .collect();
    assert_eq!(headers, [deleted_at], "the delete's, not the create's");
}

/// A leader failover in the checker (`--failovers 1` over a ZooKeeper
/// ensemble): the cut, the election and the old leader's step-down, each
/// a step, and the old leader's rejoin as a follower after it. At 2 clients nobody is on the leader (clients start on servers
/// 1 and 2), so every `sync` is current and the lock holds every property;
/// the followers' clients reconnect at the election, their requests to the
/// cut-off followers held until then, not resent on the same connection.
/// At 3 clients the shortest stale `sync` is nine steps. Two failovers,
/// or one over an etcd cluster, are refused naming the setting.
#[test]
fn the_checker_fails_the_leader_over() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::{FaultBudget, ModelCfg};
    let cfg = |recipe: &str, failovers, clients| ModelCfg {
        servers: 3,
        faults: FaultBudget {
            failovers,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), clients)
    };
    let r = check(
        &cfg("fair-predecessor:sync", 1, 2).into_model().unwrap(),
        CheckOptions::default(),
    )
    .unwrap();
    assert_eq!(r.unique_states, 620_988);
    for p in &r.properties {
        assert_eq!(p.status, Status::Holds, "{}", p.name.name());
    }
    assert!(r
        .properties
        .iter()
        .any(|p| p.name.name() == "sync_is_current"));
    // Client 2 starts on the leader: cut off, it answers client 2's `sync`
    // after the new leader committed client 0's session (ZOOKEEPER-1675).
    let three = cfg("fair-predecessor:sync", 1, 3);
    let opts = CheckOptions::default().asking(&[models::properties::PropertyName::SyncIsCurrent]);
    let r = check(&three.into_model().unwrap(), opts).unwrap();
    let stale = r
        .property(models::properties::PropertyName::SyncIsCurrent)
        .expect("judged");
    assert_eq!(stale.status, Status::Violated);
    assert_eq!(stale.path.as_ref().map(Vec::len), Some(9));
    let e = cfg("fair-predecessor:sync", 2, 2)
        .into_model()
        .err()
        .expect("refused");
    assert!(e.to_string().contains("once a check"), "{e}");
}

/// A leader failover over an etcd cluster in the checker: the followers
/// elect another after an election timeout, every lease starts its
/// time-to-live again (the lessor's extension on promotion), and the old
/// leader's CheckQuorum steps it down — a member with no leader, which
/// keeps its clients and answers no keepalive; what members could not
/// propose without a leader goes to the new one. At 2 clients nobody is on
/// the leader and every property holds, progress too. At 3 clients client 2
/// holds on the leader: once it stepped down, client 2's lease is renewed
/// nowhere, expires after the election, and another client takes the lock
/// while client 2 still holds. `sync_is_current` is not judged: etcd has
/// no `sync`. The herd's tallies wait for the old leader too, which keeps
/// its clients and tells them of what it applies once it hears the new
/// leader (one tally a change, whatever the order the servers apply it).
#[test]
fn the_checker_fails_an_etcd_leader_over() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::{Action, FaultBudget, ModelCfg};
    use models::properties::PropertyName;
    let cfg = |clients| ModelCfg {
        servers: 3,
        faults: FaultBudget {
            failovers: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse("etcd-revision").unwrap(), clients)
    };
    let two = check(&cfg(2).into_model().unwrap(), CheckOptions::default()).unwrap();
    assert_eq!(two.unique_states, 32_061);
    for p in &two.properties {
        assert_eq!(p.status, Status::Holds, "{}", p.name.name());
    }
    assert!(two.property(PropertyName::SyncIsCurrent).is_none());
    let opts = CheckOptions::default().asking(&[PropertyName::MutualExclusion]);
    let three = check(&cfg(3).into_model().unwrap(), opts).unwrap();
    let me = three
        .property(PropertyName::MutualExclusion)
        .expect("judged");
    assert_eq!(me.status, Status::Violated);
    let path = me.path.as_ref().expect("a counterexample");
    let at = |want: fn(&Action) -> bool| path.iter().position(want).expect("on the path");
    let cut = at(|a| matches!(a, Action::Failover));
    let elect = at(|a| matches!(a, Action::Elect));
    let step_down = at(|a| matches!(a, Action::StepDown));
    let expiry = at(|a| matches!(a, Action::Expire(s) if s.client == 2));
    assert!(
        cut < elect && elect < step_down && step_down < expiry,
        "{path:?}"
    );
}

/// The herd over an ensemble: a release's waiters hear of it from their
/// own servers, each when it applies the release, and `herd_bound` judges
/// the sum. The recipe whose every waiter watches the lowest node breaks
/// it at 3 clients over 3 servers, and the shortest path ends with a
/// follower's apply: the release woke one waiter on its own server and
/// another as it reached a second. The fair lock wakes one waiter a
/// release, wherever it is connected.
#[test]
fn the_checker_adds_up_a_releases_herd_over_the_servers() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::{Action, ModelCfg};
    let herd = |recipe: &str| {
        let cfg = ModelCfg {
            servers: 3,
            ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), 3)
        };
        let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
        r.properties
            .into_iter()
            .find(|p| p.name.name() == "herd_bound")
            .expect("herd_bound is judged over an ensemble")
    };
    let lowest = herd("lowest-watch");
    assert_eq!(lowest.status, Status::Violated);
    let path = lowest.path.expect("a counterexample");
    assert!(
        matches!(path.last(), Some(Action::Apply(_))),
        "the second wake-up is a follower's: {path:?}"
    );
    assert_eq!(herd("fair-predecessor").status, Status::Holds);
}

/// `zk-fair-election:sync`, `LeaderLatch` calling `sync()` before each
/// listing, over three servers with a pause: the lock's ensemble finding
/// has an election twin. `LeaderLatch`'s protected create whose reply went
/// with the old connection is looked for on the server the client
/// reconnects to, which has not applied it: its listing misses the node,
/// the candidate creates a second one and waits behind its own first, and
/// no leader is ever elected (`leader_elected`, as on one server it is
/// not). A `sync` first makes that listing the leader's as of the sync:
/// the node is found and the progress goals hold. A pause still breaks
/// `single_leader` in both, as on one server.
#[test]
fn the_sync_variant_of_the_election_finds_its_node_after_a_reconnect() {
    sync_keeps_what_a_lagging_server_breaks(
        "zk-fair-election:curator",
        "zk-fair-election:sync",
        ["leader_elected", "single_leader"],
    );
}

/// A `:sync` variant's finding, with a pause: the library's `goal` holds
/// on one server and falls over three, its protected create looked for on
/// a server that has not applied it; the `sync` variant's holds over
/// three. `fault`, which a pause breaks on one server, falls in all three.
fn sync_keeps_what_a_lagging_server_breaks(library: &str, sync: &str, [goal, fault]: [&str; 2]) {
    use models::checker::Status::{Holds, Violated};
    let status = |recipe, servers| paused(recipe, servers, [goal, fault]);
    assert_eq!(
        status(library, 1),
        (Holds, Violated),
        "{library}, one server"
    );
    assert_eq!(
        status(library, 3),
        (Violated, Violated),
        "{library}, three servers"
    );
    assert_eq!(status(sync, 3), (Holds, Violated), "{sync}, three servers");
}

/// A check of `recipe` at 2 clients over `servers` servers with a pause:
/// the statuses of the two properties named.
fn paused(
    recipe: &str,
    servers: u8,
    [a, b]: [&str; 2],
) -> (models::checker::Status, models::checker::Status) {
    use models::checker::{check, CheckOptions};
    use models::model::{FaultBudget, ModelCfg};
    let cfg = ModelCfg {
        servers,
        faults: FaultBudget {
            pauses: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), 2)
    };
    let r = check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap();
    let of = |name: &str| {
        r.properties
            .iter()
            .find(|p| p.name.name() == name)
            .map(|p| p.status)
            .expect("judged")
    };
    (of(a), of(b))
}

/// `zk-rwlock:sync`, Curator's `InterProcessReadWriteLock` with `sync()`
/// before each listing: the same ensemble finding for the shared lock.
/// Over three servers with a pause Curator's writer or reader looks for its
/// node on a server that has not applied its create, and `progress` falls,
/// as on one server it does not; with `sync` it holds. A pause breaks
/// `rw_exclusion` in all three, as on one server.
#[test]
fn the_sync_variant_of_the_shared_lock_finds_its_node_after_a_reconnect() {
    sync_keeps_what_a_lagging_server_breaks(
        "zk-rwlock:curator",
        "zk-rwlock:sync",
        ["progress", "rw_exclusion"],
    );
}

/// `zk-semaphore:sync`, Curator's `InterProcessSemaphoreV2` with `sync()`
/// before each listing: the same finding in the semaphore's mutex. Over
/// three servers with a pause Curator's `progress` falls to the lock
/// node looked for on a server that has not applied its create; with
/// `sync` it holds. A pause breaks `permits_bound` in both, as on one
/// server, where `progress` holds.
#[test]
fn the_sync_variant_of_the_semaphore_finds_its_node_after_a_reconnect() {
    sync_keeps_what_a_lagging_server_breaks(
        "zk-semaphore:curator",
        "zk-semaphore:sync",
        ["progress", "permits_bound"],
    );
}

/// The isolated follower in the checker (`--isolations 1`, the simulator's
/// `isolate`): a follower cut off from the leader answers its clients'
/// reads and pings from its own state, while their sessions go unheard at
/// the leader. Client 0's session expires there while its create, which
/// server 1 took before the cut, waits for server 1 to apply it; the cut
/// heals before server 1 gives the leader up, server 1 applies the create
/// but not yet the expiry, and client 0 lists its own node first and holds
/// — as client 1 does once the expiry is applied where it is: two holders,
/// for a suspend-aware client too, whose connection never dropped. Without
/// the isolation the lock keeps every property (`the_checker_explores_the_
/// followers_lags`). An isolation on one server is refused naming the
/// setting.
#[test]
fn the_checker_isolates_a_follower() {
    use models::checker::{check, CheckOptions, Status};
    use models::client::Policy;
    use models::model::{Action, FaultBudget, ModelCfg};
    use models::properties::PropertyName;
    let cfg = |recipe: &str, servers| ModelCfg {
        servers,
        policy: Policy::SuspendAware,
        faults: FaultBudget {
            isolations: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), 2)
    };
    let opts = CheckOptions::default().asking(&[PropertyName::MutualExclusion]);
    let r = check(
        &cfg("fair-predecessor:curator", 3).into_model().unwrap(),
        opts,
    )
    .unwrap();
    let me = r.property(PropertyName::MutualExclusion).expect("judged");
    assert_eq!(me.status, Status::Violated);
    let path = me.path.as_ref().expect("a counterexample");
    let at = |want: fn(&Action) -> bool| path.iter().position(want);
    let cut = at(|a| matches!(a, Action::Isolate(0))).expect("server 1 is cut off");
    let expiry = at(|a| matches!(a, Action::Expire(s) if s.client == 0)).expect("an expiry");
    assert!(cut < expiry, "{path:?}");
    assert!(
        !path.iter().any(|a| matches!(a, Action::GiveUpLeader(_))),
        "the holder's connection stays up: {path:?}"
    );
    for (recipe, servers, says) in [
        ("fair-predecessor", 1, "--servers 3"),
        ("etcd-revision", 1, "--servers 3"),
    ] {
        let e = cfg(recipe, servers).into_model().err().expect("refused");
        assert!(e.to_string().contains(says), "{recipe}: {e}");
    }
}

/// A muted follower (the leader does not hear it; the simulator's `mute`):
/// it still applies the leader's commits, so its client reads what the
/// leader committed since; but what it would pass the leader waits — its
/// client's write is unanswered and its pings renew nothing at the leader
/// (they are answered, until the write is held: a ping's answer then
/// waits behind it) — until the link heals, when the write is passed on
/// and answered. The leader's expiry of the session reaches the client
/// when server 1 applies it. Dropped by the leader, it names its client.
#[test]
fn a_muted_follower_applies_on_and_holds_what_it_passes_the_leader() {
    let mut e = Ens::new();
    e.mute(0);
    e.send(2, create("b"));
    e.apply(0);
    assert_eq!(
        names(&replies_to(&e.send(0, children(false)), 0)[0].1),
        ["b"],
        "server 1 applied the leader's create"
    );
    let (pong, renewed) = e.ping_renewing(sid(0));
    assert!(pong
        .iter()
        .any(|(to, m)| *to == 0 && matches!(m, Msg::Pong { .. })));
    assert!(!renewed, "the leader does not hear client 0's ping");
    assert!(replies_to(&e.send(0, create("a")), 0).is_empty(), "held");
    let (pong, renewed) = e.ping_renewing(sid(0));
    assert!(pong.is_empty(), "the answer waits behind the held create");
    assert!(!renewed);
    // On a follower that follows but lags, the held write's session is
    // touched at the leader as its ping arrives; the answer still waits.
    let mut lagging = Ens::new();
    assert!(
        replies_to(&lagging.send(0, create("a")), 0).is_empty(),
        "held"
    );
    let (pong, renewed) = lagging.ping_renewing(sid(0));
    assert!(pong.is_empty() && renewed);
    assert!(
        !lagging.st.silent_to(sid(0)),
        "it lags: the untimed checker waits"
    );
    assert!(e.st.silent_to(sid(0)) && e.st.another_server_answers(0));
    let passed = e.rejoin(0);
    assert!(replies_to(&passed, 0).is_empty(), "answered once applied");
    assert_eq!(
        replies_to(&e.apply(0), 0).len(),
        1,
        "the held create, answered"
    );
    assert!(e.st.zk.node(node("a")).is_some());
    assert!(e.ping_renewing(sid(0)).1, "heard again");

    e.mute(0);
    let expired = e.expire(0);
    let told = |s: &Sent| {
        s.iter()
            .any(|(to, m)| *to == 0 && matches!(m, Msg::Expired { .. }))
    };
    assert!(!told(&expired), "server 1 has not applied it");
    assert!(
        told(&e.apply(0)),
        "server 1 applies the expiry and tells its client"
    );
    assert_eq!(
        e.drop_follower(0),
        vec![0],
        "its client's connection closed"
    );
}

/// The muted follower in the checker (`--mutes 1`): client 0's session,
/// silent at the leader, expires there, and client 1 takes the lock. A
/// suspend-aware client 0 is told when server 1 applies the expiry, so the
/// double hold needs server 1 behind the expiry when client 1 holds (the
/// race the simulator's `muted-follower-tells-holder` loses on a few
/// seeds); the holder's connection never drops before. Refused on etcd
/// and on one server, naming the setting.
#[test]
fn the_checker_mutes_a_follower() {
    use models::checker::{check, CheckOptions, Status};
    use models::client::Policy;
    use models::model::{Action, FaultBudget, ModelCfg};
    use models::properties::PropertyName;
    use stateright::Model;
    let cfg = |recipe: &str, servers| ModelCfg {
        servers,
        policy: Policy::SuspendAware,
        faults: FaultBudget {
            mutes: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), 2)
    };
    let model = cfg("fair-predecessor:curator", 3).into_model().unwrap();
    let opts = CheckOptions::default().asking(&[PropertyName::MutualExclusion]);
    let r = check(&model, opts).unwrap();
    let me = r.property(PropertyName::MutualExclusion).expect("judged");
    assert_eq!(me.status, Status::Violated);
    let path = me.path.as_ref().expect("a counterexample");
    let at = |want: fn(&Action) -> bool| path.iter().position(want);
    let muted = at(|a| matches!(a, Action::Mute(0))).expect("server 1 is muted");
    let expiry = at(|a| matches!(a, Action::Expire(s) if s.client == 0)).expect("an expiry");
    assert!(muted < expiry, "{path:?}");
    assert!(
        !path
            .iter()
            .any(|a| matches!(a, Action::DropMuted(_) | Action::GiveUpLeader(_))),
        "the holder's connection stays up: {path:?}"
    );
    let mut state = model.init_states().remove(0);
    for &a in path {
        state = model.next_state(&state, a).expect("the path replays");
    }
    let e = state.store.ensemble.as_ref().expect("an ensemble");
    assert!(
        e.lag(0) > 0,
        "server 1 has not applied the expiry: {path:?}"
    );
    for (recipe, servers, says) in [
        ("fair-predecessor", 1, "--servers 3"),
        (
            "etcd-revision",
            3,
            "a mute is a ZooKeeper ensemble's follower's",
        ),
    ] {
        let e = cfg(recipe, servers).into_model().err().expect("refused");
        assert!(e.to_string().contains(says), "{recipe}: {e}");
    }
}

/// An isolated etcd member (`--isolations 1` over etcd): it holds what its
/// clients would have it propose until the cut heals, and answers no
/// keepalive (the lessor is the leader's), so the leader expires client
/// 0's lease while client 0's `Txn`, committed before the cut, waits on
/// its member to be answered. The cut heals, the member answers the `Txn`
/// before it applies the expiry, and client 0 holds beside client 1, which
/// took the lock once its own member applied the expiry. No member gives
/// its clients up (an etcd member has no syncLimit). A lease-aware client
/// keeps exclusion: its own deadline runs out first.
#[test]
fn the_checker_isolates_an_etcd_member() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::{Action, FaultBudget, ModelCfg};
    use models::properties::PropertyName;
    let cfg = ModelCfg {
        servers: 3,
        faults: FaultBudget {
            isolations: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse("etcd-revision").unwrap(), 2)
    };
    let r = check(&cfg.clone().into_model().unwrap(), CheckOptions::default()).unwrap();
    assert_eq!(r.unique_states, 73_510);
    let me = r.property(PropertyName::MutualExclusion).expect("judged");
    assert_eq!(me.status, Status::Violated);
    let path = me.path.as_ref().expect("a counterexample");
    let at = |want: fn(&Action) -> bool| path.iter().position(want);
    let cut = at(|a| matches!(a, Action::Isolate(0))).expect("server 1 is cut off");
    let expiry = at(|a| matches!(a, Action::Expire(s) if s.client == 0)).expect("an expiry");
    let healed = at(|a| matches!(a, Action::Rejoin(0))).expect("the cut heals");
    assert!(cut < expiry && expiry < healed, "{path:?}");
    assert!(
        !path.iter().any(|a| matches!(a, Action::GiveUpLeader(_))),
        "{path:?}"
    );
    let progress = r.property(PropertyName::Progress).expect("judged");
    assert_eq!(progress.status, Status::Holds);
    // A lease-aware holder hears none of its keepalives answered, as in a
    // partition, and its own deadline runs out before the leader's expiry:
    // exclusion holds (its unfenced writes, delayed, still land late).
    let lease_aware = ModelCfg {
        policy: models::client::Policy::LeaseAware,
        ..cfg
    };
    let r = check(&lease_aware.into_model().unwrap(), CheckOptions::default()).unwrap();
    let status = |p| r.property(p).expect("judged").status;
    assert_eq!(status(PropertyName::MutualExclusion), Status::Holds);
    assert_eq!(status(PropertyName::HolderOwnsKey), Status::Holds);
    assert_eq!(status(PropertyName::ResourceExclusion), Status::Violated);
}

/// etcd's reads over a three-member cluster: a linearizable range (the
/// default) goes through the leader's read index and sees every committed
/// write, wherever the client is; a serializable one (`WithSerializable()`)
/// is the member's own answer, stale while the member lags, current once
/// it has applied the write.
#[test]
fn an_etcd_serializable_read_is_its_members_and_may_be_stale() {
    use models::msg::{Keys, Range, Txn, TxnOp};
    use models::recipes::names;
    let store = Store {
        ensemble: Some(EnsembleCfg::new(
            models::recipe::Face::Etcd,
            3,
            3,
            u32::MAX,
            false,
        )),
        ..Store::for_face(
            models::recipe::Face::Etcd,
            Duration::from_secs(4),
            Setup::bare(),
        )
    };
    let mut d = StoreDriver::new(store);
    for c in 0..3 {
        d.send_in(sid(c), Request::LeaseGrant);
    }
    for f in 0..2 {
        d.catch_up(f);
    }
    // Client 2, on the leader, puts a key; server 1 (client 0's) has not
    // applied it.
    let key = names::session_key(sid(2));
    let put = Txn {
        compares: Vec::new(),
        success: vec![TxnOp::Put {
            key,
            value: Data::Empty,
            lease: None,
        }],
        failure: Vec::new(),
    };
    d.send_in(sid(2), Request::Txn(Box::new(put)));
    assert_eq!(d.lag(0), 1);
    let read = |serializable| Range {
        serializable,
        ..Range::of(Keys::One(key))
    };
    let found = |sent: &Sent| -> Vec<usize> {
        replies_to(sent, 0)
            .into_iter()
            .map(|(_, r)| match r {
                Reply::RangeResult { kvs, .. } => kvs.len(),
                other => panic!("not a range: {other:?}"),
            })
            .collect()
    };
    let linearizable = d.send_in(sid(0), Request::Range(read(false)));
    assert_eq!(found(&linearizable), [1], "through the leader's read index");
    let serializable = d.send_in(sid(0), Request::Range(read(true)));
    assert_eq!(found(&serializable), [0], "server 1's own, stale");
    d.catch_up(0);
    let caught_up = d.send_in(sid(0), Request::Range(read(true)));
    assert_eq!(found(&caught_up), [1]);
}

/// The herd's tally over an ensemble, as both engines feed it
/// (`observe_notified`, `observe_release`): a release by the client on the
/// leader, whose waiters are on the two followers, wakes no one there; each
/// follower's wake-up joins the release's tally as it applies the delete,
/// the last one's too, and the monitors see the release wake two; then,
/// every server having applied it, the tally goes.
#[test]
fn a_releases_tally_counts_every_server_the_last_too() {
    use models::properties::{observe_notified, observe_release, Observation};
    use models::store::ensemble::Notified;
    let notified = |sent: &Sent| {
        let mut n = Notified::default();
        for (c, m) in sent {
            n.add(*c, m, true);
        }
        n
    };
    let release_steps = |seen: &[Observation]| -> Vec<u32> {
        seen.iter()
            .filter_map(|o| match o {
                Observation::ReleaseStep { woken } => Some(woken.count()),
                _ => None,
            })
            .collect()
    };
    let mut e = Ens::new();
    e.send(2, create("a"));
    e.catch_up();
    e.send(0, exists("a"));
    e.send(1, exists("a"));
    let sent = e.send(
        2,
        Request::Delete {
            path: node("a"),
            version: None,
        },
    );
    let n = notified(&sent);
    assert_eq!(n.woken.count(), 0, "nobody waits on the leader");
    let header = e.st.header();
    let ens = e.0.st.ensemble.as_deref_mut().expect("an ensemble");
    let (obs, tally) = observe_release(Some(ens), n.woken, header);
    assert_eq!(release_steps(&[obs]), [0]);
    assert!(tally.is_some_and(|t| t.release));
    let mut woke = Vec::new();
    for f in 0..2 {
        let sent = e.apply(f);
        let n = notified(&sent);
        assert_eq!(n.woken.count(), 1, "server {}'s waiter", f + 1);
        let ens = e.0.st.ensemble.as_deref_mut().expect("an ensemble");
        let (seen, _) = observe_notified(Some(ens), &n);
        woke.extend(release_steps(&seen));
    }
    assert_eq!(woke, [1, 2], "the last server's wake-up counts too");
    let ens = e.0.st.ensemble.as_deref_mut().expect("an ensemble");
    assert!(ens.tallies_to_prune());
    ens.prune_tallies();
    assert!(ens.herd.is_empty());
}

/// etcd's `Observe` over a cluster, in the checker, 3 clients of which one
/// observes: on one server every property holds, `observed_leader_current`
/// and `followers_agree` included; over three members the observer names
/// a resigned leader — through its member's prefix watch as shipped (23
/// steps), through its `Get` itself when it is serializable (19 steps).
#[test]
fn an_observer_names_a_resigned_leader_only_over_a_lagging_member() {
    use models::checker::{check, CheckOptions, Status};
    use models::model::ModelCfg;
    use models::properties::PropertyName;
    let run = |variant: &str, servers| {
        let cfg = ModelCfg {
            servers,
            observers: 1,
            ..ModelCfg::new(models::recipes::parse(variant).unwrap(), 3)
        };
        check(&cfg.into_model().unwrap(), CheckOptions::default()).unwrap()
    };
    let observed = |r: &models::checker::CheckResult| {
        r.properties
            .iter()
            .find(|p| p.name == PropertyName::ObservedLeaderCurrent)
            .map(|p| (p.status, p.path.as_ref().map(Vec::len)))
            .expect("judged where clients observe")
    };
    for variant in ["etcd-election", "etcd-election:serializable-observe"] {
        let one = run(variant, 1);
        assert_eq!(one.unique_states, 26_898, "{variant}");
        assert!(
            one.properties.iter().all(|p| p.status == Status::Holds),
            "{variant}: {:?}",
            one.properties
        );
    }
    let shipped = run("etcd-election", 3);
    assert_eq!(shipped.unique_states, 212_067);
    assert_eq!(observed(&shipped), (Status::Violated, Some(23)));
    let serializable = run("etcd-election:serializable-observe", 3);
    assert_eq!(serializable.unique_states, 203_052);
    assert_eq!(observed(&serializable), (Status::Violated, Some(19)));
    for r in [&shipped, &serializable] {
        let others = r
            .properties
            .iter()
            .filter(|p| p.name != PropertyName::ObservedLeaderCurrent);
        for p in others {
            assert_eq!(p.status, Status::Holds, "{:?}", p.name);
        }
    }
}

/// `observers` only for an election whose library has an observer, and
/// fewer than the clients; the error names the setting.
#[test]
fn observers_are_refused_where_nobody_could_observe() {
    use models::model::{ModelCfg, Setting};
    let cfg = |recipe: &str, clients, observers| ModelCfg {
        observers,
        ..ModelCfg::new(models::recipes::parse(recipe).unwrap(), clients)
    };
    for (recipe, clients, observers, says) in [
        ("zk-fair-election", 3, 1, "has no observer"),
        ("etcd-election", 2, 2, "fewer than the clients"),
        ("etcd-revision", 3, 1, "observers are for election recipes"),
    ] {
        let e = cfg(recipe, clients, observers).validate().unwrap_err();
        assert_eq!(e.setting, Setting::Observers, "{recipe}");
        assert!(e.to_string().contains(says), "{recipe}: {e}");
    }
    assert!(cfg("etcd-election", 2, 1).validate().is_ok());
}

/// A client's read timeout on a silent server, in the checker (`--mutes
/// 1`, `--isolations 1`): where server 1 holds a client's request for a
/// leader it cannot reach, the client may give it up (`GiveUpServer`) —
/// only then — and lands on a server that follows the leader, the held
/// reply no longer sent on its old connection and its request sent anew.
#[test]
fn the_checker_gives_a_silent_server_up() {
    use models::model::Action;
    use models::store::ensemble::LeaderLink;
    use stateright::Model;
    for cfg in common::curator_lock_with_each_follower_fault() {
        let faults = cfg.faults;
        let model = cfg.into_model().unwrap();
        let mut given_up = 0;
        let mut actions = Vec::new();
        for state in common::reachable(&model, 60_000) {
            actions.clear();
            model.actions(&state, &mut actions);
            for c in 0..2 {
                let enabled = actions.contains(&Action::GiveUpServer(c));
                // Only where its server holds a request of its session on
                // this connection, for a leader it cannot reach.
                let e = state.store.ensemble.as_ref().unwrap();
                let session = state.clients[c as usize].state.session;
                let held = e
                    .held_for(c)
                    .any(|h| h.connected && h.session.same_session(session));
                let link = state.store.link_of(c);
                if !held || !matches!(link, LeaderLink::Muted | LeaderLink::Cut) {
                    assert!(!enabled, "{faults:?}: client {c}, {link:?}, held {held}");
                }
                if !enabled {
                    continue;
                }
                let next = model
                    .next_state(&state, Action::GiveUpServer(c))
                    .expect("a step");
                let e = next.store.ensemble.as_ref().unwrap();
                assert_ne!(
                    e.server(c),
                    state.store.ensemble.as_ref().unwrap().server(c)
                );
                assert_eq!(next.store.link_of(c), LeaderLink::Up);
                assert!(
                    !next.store.pings_wait(session),
                    "nothing held on its new connection"
                );
                // Its request goes again, or the handshake tells it its
                // session has ended (or both: a handshake resent).
                let slot = &next.clients[c as usize];
                let resent = slot
                    .to_store
                    .iter()
                    .any(|m| matches!(m, Msg::Request { .. }));
                let told = slot
                    .from_store
                    .iter()
                    .any(|m| matches!(m, Msg::Expired { .. }));
                assert!(
                    resent || told,
                    "{faults:?}: {:?} / {:?} / {:?}",
                    slot.to_store,
                    slot.from_store,
                    slot.state
                );
                given_up += 1;
            }
        }
        assert!(
            given_up > 0,
            "{faults:?}: a client gives a silent server up"
        );
    }
}
