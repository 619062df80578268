//! The model's own rules, called directly, for what a mutation test of
//! `model/mod.rs` found unpinned by the other tests of this crate: which
//! sessions a client's connection carries on after a cut link, and which
//! messages in flight a reconnect keeps.

use models::client::{ClientState, Connection};
use models::ids::{Key, SessionId, ZPath};
use models::model::{session_carries_on, survives_reconnect};
use models::msg::{EtcdEvent, Msg, Reply, Request, WatchEvent, ZkEvent};
use models::store::StoreState;

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
/// it loses replies, requests, heartbeats and the resource's traffic.
#[test]
fn a_reconnect_keeps_events_notices_and_closes() {
    let s = SessionId::first(0);
    let zk = Msg::Notify {
        header: 1,
        owns_first: false,
        event: WatchEvent::Zk {
            kind: ZkEvent::NodeDeleted,
            path: ZPath::Lock,
        },
    };
    let etcd = Msg::Notify {
        header: 1,
        owns_first: false,
        event: WatchEvent::Etcd {
            kind: EtcdEvent::Delete,
            key: Key(s),
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
