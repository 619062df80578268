//! The store's, client's and resource's steps called directly, for what a
//! mutation test of them found that no model check, simulation or other
//! test pinned: each test here fails with one injected bug (named in its
//! doc comment) and passes on the real code.

use models::ids::Data;
use models::ids::SessionId;
use models::recipes::names;
use models::store::etcd::EtcdKv;

fn sid(c: u16) -> SessionId {
    SessionId::first(c)
}

/// etcd's `version` counts the puts to a key since its creation (1, 2,
/// ...); no recipe reads it, so the checker cannot see it.
/// Kills: etcd.rs put_at `kv.version += 1` -> `*= 1` (and `-= 1`).
#[test]
fn an_etcd_key_counts_its_puts() {
    let mut kv = EtcdKv::default();
    let a = names::session_key(sid(0));
    kv.put(a, Data::Empty, Some(sid(0)), &mut Vec::new());
    assert_eq!(kv.get(a).unwrap().version, 1);
    let second = kv.put(a, Data::Empty, Some(sid(0)), &mut Vec::new());
    let got = kv.get(a).unwrap();
    assert_eq!(got.version, 2);
    assert_eq!(got.mod_revision, second);
    assert!(got.create_revision < got.mod_revision);
}

/// A watch set answers `contains` for what it holds (store_props asserts
/// only `!contains` after a watch fires, which a `contains` that always
/// says false passes).
/// Kills: zookeeper.rs WatchSet::contains -> false.
#[test]
fn a_watch_set_contains_what_was_set() {
    use models::store::zookeeper::ZkTree;
    let mut tree = ZkTree::new(&[names::LOCK]);
    assert!(tree.exists(names::READY, Some(sid(1))).is_none());
    assert!(tree.data_watches.contains(&(names::READY, sid(1))));
    assert!(!tree.data_watches.contains(&(names::READY, sid(0))));
    tree.get_children(names::LOCK, Some(sid(0))).unwrap();
    assert!(tree.child_watches.contains(&(names::LOCK, sid(0))));
}

/// The counterexample viewer (`check --html`, `--itf`) lists a ZooKeeper
/// store's watches: a state whose only difference is a watch must not
/// look the same as one without it.
/// Kills: zookeeper.rs `impl IntoIterator for &WatchSet` -> empty iterator.
#[test]
fn the_state_view_lists_the_stores_watches() {
    use models::model::{view::view, ModelCfg, Shared};
    use models::recipes::lookup;
    use stateright::Model;
    let model = ModelCfg::new(lookup("lowest-watch", None).unwrap(), 2)
        .into_model()
        .unwrap();
    let mut state = model.init_states().remove(0);
    let store = Shared::make_mut(&mut state.store);
    store.zk.exists(names::READY, Some(sid(1)));
    store.zk.get_children(names::LOCK, Some(sid(0))).unwrap();
    let store = view(&model, &state).store;
    let field = |k: &str| {
        store
            .0
            .iter()
            .find(|(name, _)| *name == k)
            .map(|(_, v)| v.to_string())
            .unwrap_or_else(|| panic!("no field {k}"))
    };
    assert_ne!(field("data_watches"), "—");
    assert!(field("data_watches").contains(&sid(1).to_string()));
    assert!(field("child_watches").contains(&sid(0).to_string()));
}

/// A watch from a revision not yet reached (a custom recipe may ask for
/// one; etcd allows it) fires for the events at that revision and after,
/// and for none before it. The built-in recipes watch from the revision of
/// their last range, already reached, so every event a registered watch
/// sees is past its start and the checker never tells `<` from `<=`/`==`.
/// Kills: etcd.rs notify `revision < w.start_revision` -> `==` (and `<=`).
#[test]
fn an_etcd_watch_from_a_future_revision_starts_there() {
    use models::msg::EtcdEvent;
    let mut kv = EtcdKv::default();
    let (a, b) = (names::session_key(sid(0)), names::session_key(sid(1)));
    let mut fired = Vec::new();
    // From the next revision: the next put is at it, and is seen.
    let next = kv.revision + 1;
    kv.watch(7, a, next, &mut fired);
    assert!(fired.is_empty());
    let rev = kv.put(a, Data::Empty, Some(sid(0)), &mut fired);
    assert_eq!(rev, next);
    assert_eq!(fired, vec![(7, EtcdEvent::Put, a, next)]);
    // From two revisions on: a put before then is not seen, one at it is.
    fired.clear();
    let later = kv.revision + 2;
    kv.watch(8, b, later, &mut fired);
    kv.put(b, Data::Empty, Some(sid(1)), &mut fired);
    assert!(
        fired.iter().all(|(c, ..)| *c != 8),
        "an event before the watch's start revision fired: {fired:?}"
    );
    fired.clear();
    kv.put(b, Data::Empty, Some(sid(1)), &mut fired);
    assert!(fired.contains(&(8, EtcdEvent::Put, b, later)), "{fired:?}");
}

/// A restarted client (the simulator restarts crashed clients) opens a
/// new session and goes on from what it saved: the rounds it has done
/// and its count of acquisitions, so that its writes are not taken for an
/// earlier acquisition's.
/// Kills: client.rs on_start, delete field `rounds_done` (and `holds`) from
/// the restored `ClientState`. The model checker's crashes are for good, so
/// only the simulator restarts a client: without `rounds_done` the suite
/// ran past its time limit rather than failing; without `holds` only a
/// simulator trace comparison failed.
#[test]
fn a_restarted_client_goes_on_from_what_it_saved() {
    use models::client::ClientStorage;
    use models::ids::client_id;
    use models::model::ModelCfg;
    use models::recipes::lookup;
    use stateright::actor::{Actor, Command, Out};
    let model = ModelCfg {
        rounds: 3,
        ..ModelCfg::new(lookup("lowest-watch", None).unwrap(), 2)
    }
    .into_model()
    .unwrap();
    let saved = ClientStorage {
        incarnation: 2,
        rounds_done: 1,
        holds: 4,
    };
    let mut out = Out::new();
    let st = model.client.on_start(client_id(1), &Some(saved), &mut out);
    assert_eq!(
        st.session,
        SessionId {
            client: 1,
            incarnation: 3,
            grant: 0
        }
    );
    assert_eq!((st.rounds_done, st.holds), (1, 4));
    let saves: Vec<ClientStorage> = out
        .iter()
        .filter_map(|c| match c {
            Command::Save(s) => Some(*s),
            _ => None,
        })
        .collect();
    assert_eq!(
        saves,
        vec![ClientStorage {
            incarnation: 3,
            rounds_done: 1,
            holds: 4
        }]
    );
}

/// A ZooKeeper connect resent on a live session (its reply was lost) is
/// answered Connected again; only a session that ended is refused.
/// Kills: store/mod.rs apply, Connect `open_session(s) || is_alive(s)` ->
/// `&&` (which no property noticed: the client just opens another session;
/// only a pinned state count in the checker's tests changed).
#[test]
fn a_resent_connect_on_a_live_session_is_connected() {
    use models::msg::{Reply, Request, ZkError};
    use models::store::{SessionEnd, StoreState};
    let mut store = StoreState::new(&models::recipe::Setup::lock_dir());
    let s = sid(0);
    assert_eq!(store.apply(s, &Request::Connect).0, Reply::Connected);
    assert_eq!(store.apply(s, &Request::Connect).0, Reply::Connected);
    assert!(store.is_alive(s));
    store.end_session(s, SessionEnd::Expired);
    assert_eq!(
        store.apply(s, &Request::Connect).0,
        Reply::Error(ZkError::SessionExpired)
    );
}

/// An etcd lease grant under an id whose lease expired grants it afresh
/// (the id is free again): a grant resent after its reply was lost and
/// the lease expired meanwhile must leave a live lease.
/// Kills: store/mod.rs apply, LeaseGrant `if !self.open_session(s)` ->
/// `if self.open_session(s)`.
#[test]
fn a_lease_grant_on_an_expired_id_revives_it() {
    use models::msg::{Reply, Request};
    use models::store::{SessionEnd, StoreState};
    let mut store = StoreState::new(&models::recipe::Setup::bare());
    let grant = |store: &mut StoreState| match store.apply(sid(0), &Request::LeaseGrant).0 {
        Reply::LeaseGranted { lease } => lease,
        other => panic!("a grant answered {other}"),
    };
    let s = grant(&mut store);
    store.end_session(s, SessionEnd::Expired);
    assert!(store.ended(s));
    assert_eq!(grant(&mut store), s, "the same lease");
    assert!(store.is_alive(s), "the granted lease is alive");
}

/// Connects client `c` and has it create an ephemeral sequential child of
/// `/lock` named by `guid` and holding `data`; returns the child's path.
fn create_child(
    store: &mut models::store::StoreState,
    c: u16,
    guid: Option<SessionId>,
    data: u64,
) -> models::ids::ZPath {
    use models::msg::{Reply, Request};
    assert_eq!(store.apply(sid(c), &Request::Connect).0, Reply::Connected);
    let create = Request::Create {
        path: names::new_member(guid),
        ephemeral: true,
        sequential: true,
        data: Data::Number(data),
    };
    match store.apply(sid(c), &create).0 {
        Reply::Created { path, .. } => path,
        other => panic!("client {c}'s create answered {other:?}"),
    }
}

/// Clients `0..n` each create their own child of `/lock` ([`create_child`]),
/// in order; returns the children's paths.
fn queue_up(store: &mut models::store::StoreState, n: u16) -> Vec<models::ids::ZPath> {
    (0..n)
        .map(|c| create_child(store, c, Some(sid(c)), 0))
        .collect()
}

/// A notification carries the mark "your client's live session owns the
/// entry first in line", on which a recipe that takes the lock on a
/// notification (fair-predecessor's no-relist variant) is judged by
/// `holder_owns_key`: the owner of the lowest child has it, the others
/// do not, the next one has it once the first is gone, and no one whose
/// session ended does.
/// Kills: store/mod.rs client_owns_first `s.client == client` -> `!=`.
#[test]
fn a_notification_is_marked_first_in_line_for_the_lowest_childs_owner() {
    use models::msg::Request;
    use models::store::{SessionEnd, StoreState};
    let mut store = StoreState::new(&models::recipe::Setup::lock_dir());
    let paths = queue_up(&mut store, 3);
    assert!(store.client_owns_first(0));
    assert!(!store.client_owns_first(1));
    assert!(!store.client_owns_first(2));
    store.apply(
        sid(0),
        &Request::Delete {
            path: paths[0],
            version: None,
        },
    );
    assert!(!store.client_owns_first(0));
    assert!(store.client_owns_first(1));
    assert!(!store.client_owns_first(2));
    // The first in line's session ends: its node goes with it.
    store.end_session(sid(1), SessionEnd::Expired);
    assert!(!store.client_owns_first(1));
    assert!(store.client_owns_first(2));
}

/// The checker's frontier keeps many stores, each trimmed of the room
/// its vectors grew, its watch tables too.
/// Kills: store/mod.rs StoreState::shrink_to_fit -> (); zookeeper.rs
/// WatchSet::shrink_to_fit -> ().
#[test]
fn a_store_gives_back_the_room_its_vectors_grew() {
    use models::store::StoreState;
    let mut store = StoreState::new(&models::recipe::Setup::lock_dir());
    let paths = queue_up(&mut store, 3);
    for (c, path) in paths.iter().enumerate() {
        store.zk.data_watches.insert((*path, sid(c as u16)));
        store.zk.child_watches.insert((names::LOCK, sid(c as u16)));
    }
    assert!(store.sessions.capacity() > store.sessions.len());
    assert!(store.zk.data_watches.capacity() > 3);
    store.shrink_to_fit();
    assert_eq!(store.sessions.capacity(), store.sessions.len());
    assert_eq!(store.zk.nodes.capacity(), store.zk.nodes.len());
    assert_eq!(store.zk.data_watches.capacity(), 3);
    assert_eq!(store.zk.child_watches.capacity(), 3);
}

/// A watch table prints as the set it stands for (traces and test
/// failures show a store's watches): every watch, in order.
/// Kills: zookeeper.rs `<impl Debug for WatchSet>::fmt` -> Ok(()).
#[test]
fn a_watch_table_prints_every_watch() {
    use models::store::zookeeper::WatchSet;
    let mut set = WatchSet::default();
    set.insert((names::LOCK, sid(1)));
    set.insert((names::LOCK, sid(0)));
    let printed = format!("{set:?}");
    let expected = format!(
        "{{{:?}, {:?}}}",
        (names::LOCK, sid(0)),
        (names::LOCK, sid(1))
    );
    assert_eq!(printed, expected);
}

/// A ZooKeeper store actor, and its state with clients 0 and 1 queued
/// up ([`queue_up`]).
fn zk_store_with_two_queued() -> (models::store::Store, models::store::StoreState) {
    use models::recipe::Face;
    use models::store::Store;
    let store = Store::for_face(
        Face::ZooKeeper,
        std::time::Duration::from_millis(100),
        models::recipe::Setup::lock_dir(),
    );
    let mut st = store.initial_state();
    queue_up(&mut st, 2);
    (store, st)
}

/// A queue's ephemeral elements leave with their session, and the ledger
/// (`no_lost_item`) charges each to its owner: only the ended session's
/// elements, by its client.
/// Kills: store/mod.rs end_session `owner == s` -> `!=`.
#[test]
fn a_session_that_ends_takes_only_its_own_queue_elements() {
    use models::store::{QueueLedger, SessionEnd, StoreState};
    let mut store = StoreState::new(&models::recipe::Setup::lock_dir());
    store.queue = Some(QueueLedger::default());
    for (c, item) in [(0, 10), (1, 11), (0, 12)] {
        create_child(&mut store, c, None, item);
    }
    store.end_session(sid(0), SessionEnd::Expired);
    let ledger = store.queue.as_ref().unwrap();
    assert_eq!(ledger.removed, vec![(10, 0), (12, 0)]);
    assert_eq!(store.items_removed(), 2);
}

/// The store actor starts in its configured state (the simulator starts
/// it through `on_start`; the checker builds the state itself): the lock
/// directory, and a barrier's ghost members.
/// Kills: store/mod.rs `<impl Actor for Store>::on_start` -> Default.
#[test]
fn the_store_actor_starts_with_its_lock_directory_and_ghosts() {
    use models::ids::store_id;
    use models::store::Store;
    use stateright::actor::{Actor, Out};
    use std::time::Duration;
    let store = Store {
        session_timeout: Duration::from_millis(100),
        layout: models::recipe::Setup::lock_dir(),
        barrier_group: Some(3),
        queue: true,
        tell_expiry: true,
        sessions_expire: true,
        deployment: Default::default(),
        consul: false,
        observers: 0,
        ensemble: None,
    };
    let st = store.on_start(store_id(), &None, &mut Out::new());
    assert_eq!(st, store.initial_state());
    assert!(st.zk.node(names::LOCK).is_some());
    assert_eq!(st.barrier.as_ref().map(|b| b.group), Some(3));
    assert!(st.queue.is_some());
}

/// A close names the session it ends; the store takes it only from that
/// session's own client, as it takes pings (a message from another
/// client naming someone else's session changes nothing).
/// Kills: store/mod.rs on_msg, Close guard `session.client == client` ->
/// `true`.
#[test]
fn a_close_from_another_client_ends_no_session() {
    use models::ids::{client_id, store_id};
    use models::msg::Msg;
    use stateright::actor::{Actor, Out};
    use std::borrow::Cow;
    let (store, st) = zk_store_with_two_queued();
    let mut cow = Cow::Borrowed(&st);
    let mut out = Out::new();
    let close = Msg::Close { session: sid(0) };
    store.on_msg(store_id(), &mut cow, client_id(1), close.clone(), &mut out);
    assert!(
        cow.is_alive(sid(0)),
        "client 1 cannot close client 0's session"
    );
    store.on_msg(store_id(), &mut cow, client_id(0), close, &mut out);
    assert!(!cow.is_alive(sid(0)), "client 0 closes its own");
}

/// A ping keeps its session alive and is answered on its own client's
/// link; a ping from another client naming someone else's session is
/// neither.
/// Kills: store/mod.rs on_msg, Ping guard `session.client == client` ->
/// `true`, -> `false`, and `==` -> `!=`; timeout_range's `+` -> `-` (an
/// empty range).
#[test]
fn a_ping_is_answered_only_from_its_sessions_own_client() {
    use models::ids::{client_id, store_id};
    use models::msg::{Msg, Timer};
    use stateright::actor::{Actor, Command, Out};
    use std::borrow::Cow;
    let (store, st) = zk_store_with_two_queued();
    let mut cow = Cow::Borrowed(&st);
    let ping = Msg::Ping { session: sid(0) };
    let mut foreign = Out::new();
    store.on_msg(
        store_id(),
        &mut cow,
        client_id(1),
        ping.clone(),
        &mut foreign,
    );
    assert!(foreign.is_empty(), "{foreign:?}");
    let mut own = Out::new();
    store.on_msg(store_id(), &mut cow, client_id(0), ping, &mut own);
    assert!(own.iter().any(|c| matches!(
        c,
        Command::Send(to, Msg::Pong { session }) if *to == client_id(0) && *session == sid(0)
    )));
    // The session lives its timeout from now: the timer's range starts
    // there and is not empty (the simulator draws from it).
    assert!(own.iter().any(|c| matches!(
        c,
        Command::SetTimer(Timer::Expiry(s), when)
            if *s == sid(0) && when.start == store.session_timeout && !when.is_empty()
    )));
}

/// A client speaks only in its own sessions: a request naming another
/// client's session is dropped unanswered and changes nothing; the same
/// request from the session's own client is served and answered on its
/// link.
/// Kills: store/mod.rs on_msg -> (), its Request arm deleted, and its
/// guard `session.client != client` -> `==`.
#[test]
fn a_request_is_served_only_in_its_clients_own_session() {
    use models::ids::{client_id, store_id};
    use models::msg::{Msg, Reply, Request};
    use stateright::actor::{Actor, Command, Out};
    use std::borrow::Cow;
    let (store, st) = zk_store_with_two_queued();
    let request = Msg::Request {
        session: sid(0),
        epoch: 0,
        release: false,
        req: Request::Create {
            path: names::READY,
            ephemeral: false,
            sequential: false,
            data: Data::Empty,
        },
    };
    let mut cow = Cow::Borrowed(&st);
    let mut foreign = Out::new();
    store.on_msg(
        store_id(),
        &mut cow,
        client_id(1),
        request.clone(),
        &mut foreign,
    );
    assert!(foreign.is_empty(), "{foreign:?}");
    assert_eq!(*cow, st);
    let mut own = Out::new();
    store.on_msg(store_id(), &mut cow, client_id(0), request, &mut own);
    assert!(cow.zk.node(names::READY).is_some());
    assert!(own.iter().any(|c| matches!(
        c,
        Command::Send(to, Msg::Reply { reply: Reply::Created { .. }, .. }) if *to == client_id(0)
    )));
}

/// A recipe's own keepalive renews its lease's expiry timer (etcd hears a
/// lease only in keepalives); its revoke ends the lease, tells the
/// watchers of its keys, and cancels the expiry, which has nothing left
/// to end; a second revoke finds no lease.
#[test]
fn a_keepalive_renews_and_a_revoke_ends_the_lease() {
    use models::ids::client_id;
    use models::msg::{EtcdEvent, Keys, Msg, Reply, Request, Timer, Txn, TxnOp, WatchEvent};
    use models::recipe::{Face, Setup};
    use models::store::Store;
    use stateright::actor::{Actor, Command, Id, Out};
    use std::borrow::Cow;
    use std::time::Duration;
    let store = Store::for_face(Face::Etcd, Duration::from_secs(5), Setup::bare());
    let mut state = Cow::Owned(store.initial_state());
    let send = |state: &mut Cow<_>, req: Request, from: u16| {
        let mut out = Out::new();
        let msg = Msg::Request {
            session: sid(from),
            epoch: 0,
            release: false,
            req,
        };
        store.on_msg(Id::from(0), state, client_id(from), msg, &mut out);
        out.into_iter().collect::<Vec<_>>()
    };
    let reply = |out: &[Command<Msg, Timer, (), ()>]| {
        out.iter()
            .find_map(|c| match c {
                Command::Send(_, Msg::Reply { reply, .. }) => Some(reply.clone()),
                _ => None,
            })
            .expect("a reply")
    };
    // The lease as the store numbered it; the client's requests may
    // still name it by the id it asked for (`sid`), as before the grant's
    // reply: the store knows it by either.
    let s = match reply(&send(&mut state, Request::LeaseGrant, 0)) {
        Reply::LeaseGranted { lease } => lease,
        other => panic!("a grant answered {other}"),
    };
    assert_eq!(s.grant, 1, "the first lease granted");
    let sets_expiry = |out: &[Command<Msg, Timer, (), ()>]| {
        out.iter()
            .any(|c| matches!(c, Command::SetTimer(Timer::Expiry(l), _) if *l == s))
    };
    send(&mut state, Request::LeaseGrant, 1);
    let key = names::session_key(s);
    let txn = Txn {
        compares: vec![],
        success: vec![TxnOp::Put {
            key,
            value: Data::Empty,
            lease: Some(s),
        }],
        failure: vec![],
    };
    send(&mut state, Request::Txn(Box::new(txn)), 0);
    let watch = Request::WatchRange {
        keys: Keys::Prefix(names::KEYS),
        start_revision: 1,
    };
    send(&mut state, watch, 1);
    let out = send(&mut state, Request::LeaseKeepAlive, 0);
    assert_eq!(reply(&out), Reply::LeaseKeptAlive);
    assert!(sets_expiry(&out), "a keepalive renews the lease");
    let revision = state.etcd.revision;
    let out = send(&mut state, Request::LeaseRevoke, 0);
    assert_eq!(reply(&out), Reply::LeaseRevoked);
    assert!(out
        .iter()
        .any(|c| matches!(c, Command::CancelTimer(Timer::Expiry(l)) if *l == s)));
    let told: Vec<&WatchEvent> = out
        .iter()
        .filter_map(|c| match c {
            Command::Send(to, Msg::Notify { event, .. }) if *to == client_id(1) => Some(event),
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        [&WatchEvent::Etcd {
            kind: EtcdEvent::Delete,
            key,
            revision: revision + 1,
        }]
    );
    assert!(state.etcd.get(key).is_none(), "its key went with it");
    let out = send(&mut state, Request::LeaseRevoke, 0);
    assert_eq!(reply(&out), Reply::LeaseNotFound);
    let out = send(&mut state, Request::LeaseKeepAlive, 0);
    assert_eq!(reply(&out), Reply::LeaseNotFound);
    assert!(!sets_expiry(&out));
}
