//! The model's own rules, called directly, for what a mutation test of
//! `model/mod.rs` found unpinned by the other tests of this crate: which
//! sessions a client's connection carries on after a cut link, which
//! messages in flight a reconnect keeps, how a pause or a partition may
//! end, and what stateright's Explorer is shown of each step.

use models::client::{ClientState, Connection};
use models::ids::SessionId;
use models::model::{
    session_carries_on, survives_reconnect, Action, ModelCfg, RecipeModel, Shared, Status,
};
use models::msg::{EtcdEvent, Msg, Reply, Request, WatchEvent, ZkEvent};
use models::recipes::lookup;
use models::recipes::names;
use models::store::StoreState;
use stateright::actor::Actor;
use stateright::Model;

mod common;

/// A live session carries on, even for a client that gave up on it; an
/// ended one never does; one not opened yet does, unless the client gave
/// up on its last (LOST: a new session is a new connection).
#[test]
fn a_connection_carries_on_a_live_or_opening_session_only() {
    let (alive, ended, opening) = (
        SessionId::first(0),
        SessionId::first(1),
        SessionId::first(2),
    );
    let store = StoreState {
        sessions: vec![(alive, true), (ended, false)],
        ..StoreState::default()
    };
    let carries = |session, connection| {
        let client = ClientState {
            connection,
            ..ClientState::new(session)
        };
        session_carries_on(&store, &client)
    };
    let cases = [
        (alive, Connection::Connected, true),
        (alive, Connection::Lost, true),
        (ended, Connection::Connected, false),
        (ended, Connection::Suspended, false),
        (opening, Connection::Connected, true),
        (opening, Connection::Suspended, true),
        (opening, Connection::Lost, false),
    ];
    for (session, connection, expected) in cases {
        assert_eq!(
            carries(session, connection),
            expected,
            "{session:?}, {connection:?}"
        );
    }
}

/// A reconnect keeps watch events (ZooKeeper's only while the session
/// lives: an expired one is told so instead), expiry notices and closes;
/// it loses replies, requests and heartbeats. (Writes and their acks are
/// judged lost too, but travel on the resource's links, which a reconnect
/// leaves alone.)
#[test]
fn a_reconnect_keeps_events_notices_and_closes() {
    let s = SessionId::first(0);
    let zk = Msg::Notify {
        header: 1,
        owns_first: false,
        event: WatchEvent::Zk {
            kind: ZkEvent::NodeDeleted,
            path: names::LOCK,
        },
    };
    let etcd = Msg::Notify {
        header: 1,
        owns_first: false,
        event: WatchEvent::Etcd {
            kind: EtcdEvent::Delete,
            key: names::session_key(s),
            revision: 1,
        },
    };
    let kept = [etcd, Msg::Expired { session: s }, Msg::Close { session: s }];
    let lost = [
        Msg::Reply {
            epoch: 0,
            header: 1,
            owns_first: false,
            reply: Reply::Connected,
        },
        Msg::Request {
            session: s,
            epoch: 0,
            release: false,
            req: Request::Connect,
        },
        Msg::Ping { session: s },
        Msg::Pong { session: s },
        Msg::Write { token: 1, hold: 1 },
        Msg::WriteAck {
            hold: 1,
            accepted: true,
        },
    ];
    for alive in [true, false] {
        assert_eq!(survives_reconnect(&zk, alive), alive);
        for msg in &kept {
            assert!(survives_reconnect(msg, alive), "{msg:?}, alive {alive}");
        }
        for msg in &lost {
            assert!(!survives_reconnect(msg, alive), "{msg:?}, alive {alive}");
        }
    }
}

/// `recipe`'s model with two clients and no faults.
fn two_clients(recipe: &str) -> RecipeModel {
    ModelCfg::new(lookup(recipe, None).unwrap(), 2)
        .into_model()
        .unwrap()
}

/// How client 0 may come back in `recipe` when it is paused (`paused`) or
/// cut off (not `paused`), with its first session alive or expired.
fn ways_back(recipe: &str, paused: bool, expired: bool) -> Vec<Action> {
    let model = two_clients(recipe);
    let mut state = model.init_states().remove(0);
    let slot = state.slot_mut(0);
    match paused {
        true => slot.status = Status::Paused,
        false => slot.partitioned = true,
    }
    Shared::make_mut(&mut state.store).sessions = vec![(SessionId::first(0), !expired)];
    let mut actions = Vec::new();
    model.actions(&state, &mut actions);
    actions.retain(|a| {
        matches!(
            a,
            Action::Resume(0) | Action::ResumeReconnect(0) | Action::Heal(0) | Action::Reconnect(0)
        )
    });
    actions
}

/// A pause or a partition that outlived the session outlived the read
/// timeout too: a ZooKeeper client then comes back only on a new
/// connection; within it, either way. An etcd client's pause ends as it
/// was (its connection does not time out); a partition past the lease
/// ends in a reconnect.
#[test]
fn a_pause_or_partition_past_the_session_ends_in_a_reconnect() {
    use Action::{Heal, Reconnect, Resume, ResumeReconnect};
    for (recipe, expired, paused_ways, cut_ways) in [
        (
            "fair-predecessor",
            false,
            vec![Resume(0), ResumeReconnect(0)],
            vec![Heal(0), Reconnect(0)],
        ),
        (
            "fair-predecessor",
            true,
            vec![ResumeReconnect(0)],
            vec![Reconnect(0)],
        ),
        (
            "etcd-revision",
            false,
            vec![Resume(0)],
            vec![Heal(0), Reconnect(0)],
        ),
        ("etcd-revision", true, vec![Resume(0)], vec![Reconnect(0)]),
    ] {
        let what = format!("{recipe}, session expired: {expired}");
        assert_eq!(
            ways_back(recipe, true, expired),
            paused_ways,
            "paused, {what}"
        );
        assert_eq!(
            ways_back(recipe, false, expired),
            cut_ways,
            "cut off, {what}"
        );
    }
}

/// The Explorer lists each step in words naming its client (faults marked
/// FAULT), shows a step as the configuration, the step and the actors of
/// the state it leads to, and draws the path as a sequence diagram.
#[test]
fn the_explorer_shows_each_step_in_words() {
    let model = two_clients("fair-predecessor");
    let session = SessionId::first(1);
    let expire = Action::Expire(session);
    assert_eq!(
        model.format_action(&expire),
        format!("store: session {session} expires")
    );
    let faults = [
        Action::Crash(1),
        Action::Pause(1),
        Action::Partition(1),
        Action::LoseReply(1),
    ];
    for a in faults {
        let words = model.format_action(&a);
        assert!(
            words.starts_with("FAULT") && words.contains("client 1"),
            "{words}"
        );
    }
    let init = model.init_states().remove(0);
    let mut actions = Vec::new();
    model.actions(&init, &mut actions);
    let first = Action::Deliver(0, models::model::Link::ClientToStore);
    assert!(actions.contains(&first), "{actions:?}");
    assert_eq!(model.format_action(&first), "client 0 → store: deliver");
    let step = model
        .format_step(&init, first)
        .expect("the step can be taken");
    assert!(step.starts_with(&model.cfg.to_string()), "{step}");
    assert!(step.contains("client 0 → store:"), "{step}");
    assert!(
        step.contains("\nclient 1\n"),
        "the actors are shown: {step}"
    );
    // A step between two actors is drawn as an arrow; one within an actor
    // (a timer) is not.
    let line = |step: &str| step.split("\n\n").nth(1).unwrap().to_string();
    assert_eq!(
        line(&step),
        "client 0 → store: connect [session 0x694d00000000]"
    );
    let (state, timeout) = common::reachable(&model, 1_000)
        .into_iter()
        .find_map(|state| {
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            let timeout = actions
                .into_iter()
                .find(|a| matches!(a, Action::Timeout(..)));
            timeout.map(|t| (state, t))
        })
        .expect("a timer fires in the first 1,000 states");
    let timed = line(&model.format_step(&state, timeout).unwrap());
    assert!(
        timed.starts_with("client ") && !timed.contains('→'),
        "{timed}"
    );
    let path = stateright::Path::from_actions(&model, init, [&first]).unwrap();
    let svg = model.as_svg(path).expect("a diagram");
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(
        svg.contains("<title>1. deliver: client 0 → store: connect"),
        "the step is drawn: {svg}"
    );
    // The client actor's name, as stateright's Explorer shows it.
    assert_eq!(model.client.name(), "client");
}
