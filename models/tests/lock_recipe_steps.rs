//! The lock recipes' steps read against their sources, called directly:
//! a waiter wakes only for the node (etcd key) it waits on, as the
//! ZooKeeper recipe text ("wait for a notification for the pathname from
//! the previous step") and etcd's `waitDeletes` (a watch on one key) say. The checker and the
//! simulator never reach these branches — a waiter's one armed watch is
//! on that node, so a mutation test found them unpinned — and a store or
//! user recipe that lets a stale event through would wake the wrong waiter.

use models::ids::{Child, SessionId};
use models::msg::{EtcdEvent, Request, WatchEvent, ZkEvent};
use models::recipe::{Recipe, Step};
use models::recipes::names;
use models::recipes::{etcd_revision, fair_predecessor, lowest_watch};

fn child(client: u16, seq: u32, guid: bool) -> Child {
    Child {
        seq: Some(seq),
        prefix: names::MEMBER,
        guid: guid.then_some(SessionId::first(client as _)),
    }
}

fn deleted(c: Child) -> WatchEvent {
    WatchEvent::Zk {
        kind: ZkEvent::NodeDeleted,
        path: names::member(c),
    }
}

fn relist() -> Step {
    Step::Send(Request::GetChildren {
        path: names::LOCK,
        watch: false,
    })
}

#[test]
fn fair_predecessor_wakes_only_for_its_predecessor() {
    use fair_predecessor::{FairPredecessor, Mine, State};
    let (other, pred, me) = (child(0, 0, true), child(1, 1, true), child(2, 2, true));
    let mine = Mine {
        node: me,
        czxid: Some(7),
    };
    let r = FairPredecessor::default();
    let mut st = State::Waiting(mine, pred);
    assert_eq!(r.on_event(&mut st, &deleted(other)), Step::Wait);
    assert_eq!(
        st,
        State::Waiting(mine, pred),
        "a stray delete changes nothing"
    );
    assert_eq!(r.on_event(&mut st, &deleted(pred)), relist());
    assert_eq!(st, State::Listing(mine));
}

#[test]
fn lowest_watch_wakes_only_for_the_lowest_node() {
    use lowest_watch::{LowestWatch, Mine, State};
    let (lowest, other, me) = (child(0, 0, false), child(1, 1, false), child(2, 2, false));
    let mine = Mine { node: me, czxid: 7 };
    let mut st = State::Waiting(mine, lowest);
    assert_eq!(LowestWatch.on_event(&mut st, &deleted(other)), Step::Wait);
    assert_eq!(
        st,
        State::Waiting(mine, lowest),
        "a stray delete changes nothing"
    );
    assert_eq!(LowestWatch.on_event(&mut st, &deleted(lowest)), relist());
    assert_eq!(st, State::Listing(mine));
}

#[test]
fn etcd_revision_wakes_only_for_the_key_it_waits_on() {
    use etcd_revision::{EtcdRevision, State};
    let (key, other) = (
        names::session_key(SessionId::first(0)),
        names::session_key(SessionId::first(1)),
    );
    let delete = |key| WatchEvent::Etcd {
        kind: EtcdEvent::Delete,
        key,
        revision: 9,
    };
    let r = EtcdRevision::default();
    let mut st = State::Waiting { my_rev: 5, key };
    assert_eq!(r.on_event(&mut st, &delete(other)), Step::Wait);
    assert_eq!(st, State::Waiting { my_rev: 5, key });
    assert!(matches!(
        r.on_event(&mut st, &delete(key)),
        Step::Send(Request::Range(_))
    ));
    assert_eq!(st, State::Ranging { my_rev: 5 });
}

#[test]
fn fair_predecessor_found_by_guid_whose_node_is_gone_has_lost_its_session() {
    // The node found by guid after a lost create reply is gone by the time
    // its czxid is asked for: only an expiry deletes it. In the model the
    // expiry notice always comes first, so only this test reaches the arm.
    use fair_predecessor::{FairPredecessor, Mine, State};
    use models::msg::Reply;
    let me = child(0, 3, true);
    let mut st = State::FetchingToken(Mine {
        node: me,
        czxid: None,
    });
    let step =
        FairPredecessor::default().on_reply(SessionId::first(0), &mut st, &Reply::Stat(None));
    assert_eq!(step, Step::SessionLost);
}
