//! How traces, counterexamples and the Explorer word the messages, requests,
//! replies and timers (a mutation test of `msg.rs` found none of these
//! words pinned by a test of this crate): every timer, message and
//! request class, and the requests and replies with parts shown only
//! sometimes (a create's mode and data, a range's sort and bound, a
//! transaction's several operations, a list's separators).

use models::ids::{Child, Data, Key, SessionId};
use models::msg::{
    Behavior, Compare, CompareOp, CompareTarget, ConsulCmd, ConsulReply, EtcdEvent, Keys, Kv, Msg,
    MultiOp, MultiResult, OpResult, Range, RangeOnly, Reply, Request, RequestClass, RequestKind,
    SessionOpts, Sort, SortOrder, SortTarget, Stat, Timer, Txn, TxnOp, WatchEvent, ZkError,
    ZkEvent,
};
use models::name;
use models::recipes::names;

fn key(c: u16) -> Key {
    names::session_key(SessionId::first(c))
}

fn kv(c: u16, create_revision: u64) -> Kv {
    Kv {
        key: key(c),
        create_revision,
        mod_revision: create_revision,
        version: 1,
        lease: Some(SessionId::first(c)),
        value: Data::Empty,
    }
}

fn range(key: Option<Key>, sort: Sort, max_create_revision: u64) -> Range {
    Range {
        sort,
        limit: 1,
        max_create_revision,
        ..Range::of(key.map_or(Keys::Prefix(names::KEYS), Keys::One))
    }
}

fn stat(data: u64) -> Stat {
    Stat {
        czxid: 4,
        mzxid: 4,
        version: 0,
        cversion: 0,
        ephemeral_owner: None,
        data: if data == 0 {
            Data::Empty
        } else {
            Data::Number(data)
        },
    }
}

fn shown<T: std::fmt::Display>(items: &[T]) -> Vec<String> {
    items.iter().map(T::to_string).collect()
}

#[test]
fn timers_say_what_their_firing_means() {
    let timers = [
        Timer::Think,
        Timer::Hold,
        Timer::Retry,
        Timer::Ping,
        Timer::Deadline,
        Timer::Expiry(SessionId::first(1)),
    ];
    assert_eq!(
        shown(&timers),
        [
            "think time over: start acquiring",
            "hold time over: next write or release",
            "no reply: resend",
            "heartbeat",
            "no word from the store for its deadline (its own clock; SUSPENDED for a suspend-aware client)",
            "expiry of 0x694d00010000",
        ]
    );
}

#[test]
fn requests_read_as_the_store_apis() {
    let create = |ephemeral, sequential, data| Request::Create {
        path: names::LOCK,
        ephemeral,
        sequential,
        data: if data == 0 {
            Data::Empty
        } else {
            Data::Number(data)
        },
    };
    let requests = [
        Request::Connect,
        create(true, true, 0),
        create(true, false, 7),
        create(false, true, 0),
        create(false, false, 0),
        Request::Exists {
            path: names::LOCK,
            watch: true,
        },
        Request::LeaseGrant,
        Request::Txn(Box::new(Txn {
            compares: vec![Compare::created_at(key(0), 0)],
            success: vec![
                TxnOp::Put {
                    key: key(0),
                    value: Data::Empty,
                    lease: Some(SessionId::first(0)),
                },
                TxnOp::Range(range(None, Sort::Ascend, 0)),
            ],
            failure: vec![TxnOp::Range(range(Some(key(0)), Sort::None, 0))],
        })),
        Request::Range(range(None, Sort::Descend, 9)),
        Request::Range(range(None, Sort::None, 0)),
        Request::SetData {
            path: names::LOCK,
            data: Data::Number(3),
            version: Some(2),
        },
        Request::SetData {
            path: names::LOCK,
            data: Data::Session(SessionId::first(1)),
            version: None,
        },
        Request::Delete {
            path: names::LOCK,
            version: Some(4),
        },
        Request::Txn(Box::new(Txn {
            compares: vec![
                Compare {
                    key: Key::fixed(name!("/count")),
                    target: CompareTarget::Value(Data::Number(3)),
                    op: CompareOp::Equal,
                },
                Compare {
                    key: Key::fixed(name!("/count")),
                    target: CompareTarget::Version(2),
                    op: CompareOp::Less,
                },
            ],
            success: vec![
                TxnOp::Put {
                    key: Key::fixed(name!("/count")),
                    value: Data::Number(4),
                    lease: None,
                },
                TxnOp::Delete { key: key(1) },
            ],
            failure: vec![],
        })),
    ];
    assert_eq!(
        shown(&requests),
        [
            "connect",
            "create(/lock, ephemeral-sequential)",
            "create(/lock, ephemeral, data 7)",
            "create(/lock, sequential)",
            "create(/lock, persistent)",
            "exists(/lock, watch=true)",
            "lease_grant",
            "txn(if create_revision(/lock/694d00000000) == 0 then put(/lock/694d00000000, lease 0x694d00000000); range(/lock/, first-created) else get(/lock/694d00000000))",
            "range(/lock/, last-created, max_create_revision=9)",
            "range(/lock/)",
            "set_data(/lock, 3, version 2)",
            "set_data(/lock, 0x694d00010000)",
            "delete(/lock, version 4)",
            "txn(if value(/count) == \"3\" and version(/count) < 2 then put(/count, \"4\"); delete(/lock/694d00010000) else )",
        ]
    );
}

#[test]
fn replies_and_messages_show_what_came_back() {
    let replies = [
        Reply::Stat(Some(stat(0))),
        Reply::Stat(Some(stat(3))),
        Reply::Stat(None),
        Reply::TxnResult {
            succeeded: true,
            revision: 5,
            responses: vec![
                OpResult::Put { revision: 5 },
                OpResult::Range {
                    kvs: vec![kv(0, 2), kv(1, 5)],
                },
            ],
        },
        Reply::RangeResult {
            revision: 6,
            kvs: vec![],
        },
        Reply::RangeResult {
            revision: 6,
            kvs: vec![kv(1, 5)],
        },
    ];
    assert_eq!(
        shown(&replies),
        [
            "exists (czxid 4)",
            "exists (czxid 4, data 3)",
            "no node",
            "txn succeeded at revision 5, range [/lock/694d00000000 created at 2, /lock/694d00010000 created at 5]",
            "range at revision 6: []",
            "range at revision 6: [/lock/694d00010000 created at 5]",
        ]
    );
    let s = SessionId::first(1);
    let msgs = [
        Msg::Notify {
            header: 1,
            owns_first: false,
            event: WatchEvent::Zk {
                kind: ZkEvent::NodeDeleted,
                path: names::LOCK,
            },
        },
        Msg::Notify {
            header: 1,
            owns_first: false,
            event: WatchEvent::Etcd {
                kind: EtcdEvent::Delete,
                key: key(1),
                revision: 8,
            },
        },
        Msg::Close { session: s },
        Msg::Ping { session: s },
        Msg::Pong { session: s },
        Msg::Expired { session: s },
        Msg::Write { token: 3, hold: 2 },
        Msg::WriteAck {
            hold: 2,
            accepted: true,
        },
        Msg::WriteAck {
            hold: 2,
            accepted: false,
        },
        Msg::Reply {
            epoch: 0,
            header: 1,
            owns_first: false,
            reply: Reply::Connected,
        },
    ];
    assert_eq!(
        shown(&msgs),
        [
            "watch event NodeDeleted(/lock)",
            "watch event Delete(/lock/694d00010000) at revision 8",
            "close session 0x694d00010000",
            "ping [session 0x694d00010000]",
            "pong [session 0x694d00010000]",
            "session 0x694d00010000 expired",
            "write (its hold #2) with token 3",
            "write accepted",
            "write rejected (fenced)",
            "connected",
        ]
    );
}

#[test]
fn children_are_listed_in_order() {
    let child = |c, seq| Child {
        seq: Some(seq),
        prefix: names::MEMBER,
        guid: Some(SessionId::first(c)),
    };
    let replies = [
        Reply::Children(vec![child(0, 0), child(1, 1)].into()),
        Reply::Children(Vec::new().into()),
    ];
    assert_eq!(
        shown(&replies),
        [
            "children [_c_00000000-lock-0000000000, _c_00010000-lock-0000000001]",
            "children []",
        ]
    );
}

/// A multi reads as its ops, each as the request of its name (a check as
/// ZooKeeper's `check`), and its reply as each op's result.
#[test]
fn a_multi_reads_as_its_ops() {
    let node = names::member(Child {
        seq: Some(2),
        prefix: names::MEMBER,
        guid: Some(SessionId::first(1)),
    });
    let multi = Request::Multi(vec![
        MultiOp::Check {
            path: names::LOCK,
            version: None,
        },
        MultiOp::Check {
            path: names::LOCK,
            version: Some(3),
        },
        MultiOp::Create {
            path: names::new_member(Some(SessionId::first(1))),
            ephemeral: true,
            sequential: true,
            data: Data::Number(5),
        },
        MultiOp::SetData {
            path: node,
            data: Data::Number(6),
            version: Some(0),
        },
        MultiOp::Delete {
            path: node,
            version: None,
        },
    ]);
    assert_eq!(
        multi.to_string(),
        "multi(check(/lock); check(/lock, version 3); \
         create(/lock/_c_00010000-lock-, ephemeral-sequential, data 5); \
         set_data(/lock/_c_00010000-lock-0000000002, 6, version 0); \
         delete(/lock/_c_00010000-lock-0000000002))"
    );
    assert_eq!(multi.kind(), RequestKind::Multi);
    let done = Reply::Multi(vec![
        MultiResult::Checked,
        MultiResult::Created {
            path: node,
            czxid: 9,
        },
        MultiResult::Set(Stat {
            version: 1,
            mzxid: 9,
            ..stat(6)
        }),
        MultiResult::Deleted,
    ]);
    assert_eq!(
        done.to_string(),
        "multi succeeded [checked, created /lock/_c_00010000-lock-0000000002 (czxid 9), \
         set (version 1, mzxid 9), deleted]"
    );
    let failed = Reply::Multi(MultiResult::failed_at(3, 1, ZkError::NoNode));
    assert_eq!(
        failed.to_string(),
        "multi failed [rolled back, error NoNode, not run (RuntimeInconsistency)]"
    );
}

/// A range over `[from, end)`, its other sorts, keys only and counts read
/// as etcd's options; a get of one key as it always has.
#[test]
fn ranges_read_with_their_options() {
    let between = |end| Keys::Between {
        from: name!("/lock/"),
        end,
    };
    let ranges = [
        Range {
            sort: Sort::by(SortTarget::Mod, SortOrder::Descend),
            ..Range::of(between(Some(name!("/lock0"))))
        },
        Range {
            sort: Sort::by(SortTarget::Create, SortOrder::Ascend),
            max_create_revision: 4,
            ..Range::of(between(None))
        },
        Range {
            only: RangeOnly::Keys,
            sort: Sort::by(SortTarget::Value, SortOrder::Ascend),
            ..Range::of(Keys::Prefix(names::KEYS))
        },
        Range {
            only: RangeOnly::Count,
            ..Range::of(Keys::One(key(1)))
        },
        Range {
            serializable: true,
            ..Range::of(Keys::One(key(1)))
        },
    ];
    assert_eq!(
        shown(&ranges),
        [
            "range([/lock/, /lock0), by Mod Descend)",
            "range([/lock/, ...), first-created, max_create_revision=4)",
            "range(/lock/, by Value Ascend, keys only)",
            "get(/lock/694d00010000, count only)",
            "get(/lock/694d00010000, serializable)",
        ]
    );
    let watches = [
        Request::WatchRange {
            keys: Keys::Prefix(names::KEYS),
            start_revision: 3,
        },
        Request::WatchRange {
            keys: between(None),
            start_revision: 1,
        },
        Request::WatchRange {
            keys: Keys::One(key(0)),
            start_revision: 2,
        },
    ];
    assert_eq!(
        shown(&watches),
        [
            "watch(/lock/*, from revision 3)",
            "watch([/lock/, ...), from revision 1)",
            "watch(/lock/694d00000000, from revision 2)",
        ]
    );
    assert!(watches.iter().all(|w| w.kind() == RequestKind::Watch));
    assert_eq!(
        Sort::by(SortTarget::Create, SortOrder::Descend),
        Sort::Descend,
        "one form for each sort"
    );
    let replies = [
        Reply::RangeCount {
            revision: 7,
            count: 2,
        },
        Reply::TxnResult {
            succeeded: false,
            revision: 7,
            responses: vec![OpResult::Count { count: 2 }],
        },
    ];
    assert_eq!(
        shown(&replies),
        [
            "count at revision 7: 2",
            "txn failed at revision 7, count 2"
        ]
    );
}

/// A recipe's own lease requests read as etcd's calls, their answers as
/// what came back.
#[test]
fn lease_requests_read_as_etcds_calls() {
    let requests = [
        Request::LeaseRevoke,
        Request::LeaseKeepAlive,
        Request::LeaseTimeToLive {
            lease: SessionId::first(1),
            keys: true,
        },
        Request::LeaseTimeToLive {
            lease: SessionId::first(1),
            keys: false,
        },
    ];
    assert_eq!(
        shown(&requests),
        [
            "lease_revoke",
            "lease_keep_alive",
            "lease_time_to_live(0x694d00010000, keys)",
            "lease_time_to_live(0x694d00010000)",
        ]
    );
    let replies = [
        Reply::LeaseRevoked,
        Reply::LeaseKeptAlive,
        Reply::LeaseTtl {
            alive: true,
            keys: vec![key(1)],
        },
        Reply::LeaseTtl {
            alive: true,
            keys: vec![],
        },
        Reply::LeaseTtl {
            alive: false,
            keys: vec![],
        },
    ];
    assert_eq!(
        shown(&replies),
        [
            "lease revoked",
            "lease kept alive",
            "lease alive, keys [/lock/694d00010000]",
            "lease alive",
            "lease not alive",
        ]
    );
}

/// The Consul calls a recipe of its own may make beside the lock's: a
/// plain `PUT`, `session/info` and `DELETE ?recurse`, each with its
/// request kind, and `session/info`'s answers.
#[test]
fn consul_put_session_info_and_recursive_delete_read_as_the_http_api() {
    let calls = [
        ConsulCmd::Put {
            key: Key::fixed(name!("service/web/config")),
            value: Data::Number(3),
        },
        ConsulCmd::SessionInfo,
        ConsulCmd::DeleteTree {
            prefix: name!("sem/"),
        },
    ];
    assert_eq!(
        shown(&calls),
        [
            "PUT service/web/config (3)",
            "session/info",
            "DELETE sem/?recurse"
        ]
    );
    let kinds = calls.map(|c| Request::Consul(c).kind());
    assert_eq!(
        kinds,
        [
            RequestKind::ConsulPut,
            RequestKind::ConsulSessionInfo,
            RequestKind::ConsulDeleteTree,
        ]
    );
    let replies = [
        ConsulReply::SessionInfo(Some(SessionOpts {
            behavior: Behavior::Delete,
            lock_delay_ms: 0,
        })),
        ConsulReply::SessionInfo(None),
    ];
    assert_eq!(
        shown(&replies),
        [
            "session live (behavior=delete, lock-delay=0ms)",
            "null (no such session)",
        ]
    );
}

/// The names request counters and the herd metrics' columns use, each
/// kind with its class.
#[test]
fn request_kinds_and_classes_have_their_metric_names() {
    let named: Vec<String> = RequestKind::ALL
        .iter()
        .map(|k| format!("{k} {}", k.class().name()))
        .collect();
    assert_eq!(
        named,
        [
            "connect session",
            "create writes",
            "delete writes",
            "exists reads",
            "exists_watch watches",
            "get_data reads",
            "get_data_watch watches",
            "get_children reads",
            "get_children_watch watches",
            "lease_grant session",
            "txn writes",
            "range reads",
            "watch watches",
            "delete_key writes",
            "set_data writes",
            "multi writes",
            "lease_revoke writes",
            "lease_keep_alive session",
            "lease_time_to_live reads",
            "set writes",
            "setnx writes",
            "pexpire writes",
            "get reads",
            "del writes",
            "incr writes",
            "eval writes",
            "wait reads",
            "session_create session",
            "session_destroy writes",
            "kv_get reads",
            "kv_get_blocking watches",
            "kv_acquire writes",
            "kv_release writes",
            "kv_cas writes",
            "kv_delete writes",
            "kv_put writes",
            "session_info reads",
            "kv_delete_tree writes",
            "sync reads",
        ]
    );
    assert!(RequestKind::ALL.iter().all(|k| k.to_string() == k.name()));
    let classes = [
        RequestClass::Writes,
        RequestClass::Reads,
        RequestClass::Watches,
        RequestClass::Session,
    ];
    assert_eq!(
        classes.map(RequestClass::name),
        ["writes", "reads", "watches", "session"]
    );
}

/// Traces are JSON: the newer requests and replies read back as they were
/// written, and a range without `only` is written as it always was (no
/// new field), so old traces read and new ones of old shapes are the same.
#[test]
fn newer_shapes_read_back_from_json() {
    let s = SessionId::first(1);
    let requests = [
        Request::Multi(vec![
            MultiOp::Check {
                path: names::LOCK,
                version: Some(1),
            },
            MultiOp::Create {
                path: names::new_member(Some(s)),
                ephemeral: true,
                sequential: true,
                data: Data::Session(s),
            },
        ]),
        Request::Range(Range {
            sort: Sort::by(SortTarget::Value, SortOrder::Descend),
            only: RangeOnly::Count,
            ..Range::of(Keys::Between {
                from: name!("/a"),
                end: None,
            })
        }),
        Request::WatchRange {
            keys: Keys::Prefix(names::KEYS),
            start_revision: 4,
        },
        Request::LeaseRevoke,
        Request::LeaseKeepAlive,
        Request::LeaseTimeToLive {
            lease: s,
            keys: true,
        },
    ];
    for r in &requests {
        let json = serde_json::to_string(r).unwrap();
        assert_eq!(
            &serde_json::from_str::<Request>(&json).unwrap(),
            r,
            "{json}"
        );
    }
    let replies = [
        Reply::Multi(MultiResult::failed_at(2, 0, ZkError::NodeExists)),
        Reply::RangeCount {
            revision: 3,
            count: 1,
        },
        Reply::LeaseRevoked,
        Reply::LeaseKeptAlive,
        Reply::LeaseTtl {
            alive: true,
            keys: vec![key(1)],
        },
    ];
    for r in &replies {
        let json = serde_json::to_string(r).unwrap();
        assert_eq!(&serde_json::from_str::<Reply>(&json).unwrap(), r, "{json}");
    }
    let old = Range::of(Keys::Prefix(names::KEYS));
    let json = serde_json::to_string(&old).unwrap();
    assert!(!json.contains("only"), "{json}");
    assert_eq!(serde_json::from_str::<Range>(&json).unwrap(), old);
}
