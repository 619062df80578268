//! The ZooKeeper double barrier's and fair election's steps read against
//! their sources, called directly, where a mutation test of them found
//! that no model check or simulation tells a changed step from the recipe:
//!
//! - the tutorial `Barrier`'s `leave()` returns once `getChildren` shows
//!   no child; a last member that waited on an empty barrier for good
//!   would break `all_pass`, but the tutorial's barrier breaks it already
//!   (a slow member stranded, `barrier.rs`), so its check reads alike;
//! - the recipes page's leave and the election's followers wait on one
//!   node and go on only when *that* node goes; in the model their one
//!   armed watch is on that node, so no other delete reaches them (as the
//!   lock recipes' in `lock_recipe_steps.rs`);
//! - the page's leave starts with `getChildren`, never with a delete of its
//!   own node, so a delete's reply in that step is none of its steps;
//! - `LeaderLatch`'s CURATOR-696 check and `checkLeadership`'s search for
//!   our node, whose mutants the election checks show only by running
//!   past a two-minute limit.

use models::ids::Data;
use models::recipes::names;
use std::sync::Arc;

use models::ids::{Child, SessionId};
use models::msg::{Reply, Request, WatchEvent, ZkEvent};
use models::recipe::{ElectionRecipe, Recipe, Step};

fn child(client: u16, seq: u32) -> Child {
    Child {
        seq: Some(seq),
        prefix: names::MEMBER,
        guid: Some(SessionId::first(client as _)),
    }
}

fn children(l: &[Child]) -> Reply {
    Reply::Children(Arc::from(l))
}

fn deleted(c: Child) -> WatchEvent {
    WatchEvent::Zk {
        kind: ZkEvent::NodeDeleted,
        path: names::member(c),
    }
}

/// An `exists`/`getData` reply: the node is there, created (and last
/// written) at `czxid`, owned by `owner`'s session.
fn there(czxid: u64, owner: Option<SessionId>) -> Reply {
    Reply::Stat(Some(models::msg::Stat {
        czxid,
        mzxid: czxid,
        version: 0,
        cversion: 0,
        ephemeral_owner: owner,
        data: Data::Empty,
    }))
}

fn list(watch: bool) -> Step {
    Step::Send(Request::GetChildren {
        path: names::LOCK,
        watch,
    })
}

mod double_barrier {
    use super::*;
    use models::recipes::zk_double_barrier::{Member, State, ZkDoubleBarrier};

    fn member(client: u16, seq: u32) -> Member {
        Member {
            node: child(client, seq),
            czxid: 10 + u64::from(seq),
        }
    }

    /// The tutorial's `leave()`: delete our node, then `getChildren(root,
    /// watch)` and wait while any child is left; once the list is empty,
    /// return. The last member out must leave, not wait on a barrier
    /// nobody will change again.
    #[test]
    fn the_tutorials_member_leaves_once_no_child_is_left() {
        let r = ZkDoubleBarrier {
            group: 2,
            tutorial: true,
        };
        let (s, me, other) = (SessionId::first(0), member(0, 0), member(1, 1));
        let mut st = State::Passed(me);
        assert_eq!(
            r.release(s, &st),
            Some(Request::Delete {
                path: names::member(me.node),
                version: None,
            })
        );
        assert_eq!(r.on_release_reply(s, &mut st, &Reply::Deleted), list(true));
        assert_eq!(st, State::Polling { me, leaving: true });
        // Someone is still in: wait for the children to change.
        assert_eq!(
            r.on_release_reply(s, &mut st, &children(&[other.node])),
            Step::Wait
        );
        let changed = WatchEvent::Zk {
            kind: ZkEvent::NodeChildrenChanged,
            path: names::LOCK,
        };
        assert_eq!(r.on_release_event(&mut st, &changed), list(true));
        // Nobody is: the member has left.
        assert_eq!(
            r.on_release_reply(s, &mut st, &children(&[])),
            Step::Released
        );
    }

    /// The page's leave lists first (`L = getChildren(b, false)`) and
    /// deletes its node only where the listing says so; only the tutorial
    /// deletes first. A delete's reply to a member that has just passed is
    /// none of the page's steps: it stops visibly rather than polling as
    /// the tutorial does. (The model never sends the page's member such a
    /// reply.)
    #[test]
    fn the_pages_member_leaves_by_listing_first() {
        let r = ZkDoubleBarrier {
            group: 2,
            tutorial: false,
        };
        let (s, me) = (SessionId::first(0), member(0, 0));
        let st = State::Passed(me);
        assert_eq!(
            r.release(s, &st),
            Some(Request::GetChildren {
                path: names::LOCK,
                watch: false
            })
        );
        let mut passed = st;
        assert_eq!(
            r.on_release_reply(s, &mut passed, &Reply::Deleted),
            Step::Unexpected
        );
        // Alone in the barrier: delete ours and leave.
        let mut st = State::Passed(me);
        assert_eq!(
            r.on_release_reply(s, &mut st, &children(&[me.node])),
            Step::Send(Request::Delete {
                path: names::member(me.node),
                version: None,
            })
        );
        assert_eq!(
            r.on_release_reply(s, &mut st, &Reply::Deleted),
            Step::Released
        );
    }

    /// Leave, steps 4 and 5: the lowest waits on the highest, the others on
    /// the lowest, and each re-lists only when the node it waits on is
    /// deleted; another member's delete changes nothing.
    #[test]
    fn a_leaving_member_wakes_only_for_the_node_it_waits_on() {
        let r = ZkDoubleBarrier {
            group: 3,
            tutorial: false,
        };
        let s = SessionId::first(1);
        let (lowest, me, highest) = (member(0, 0), member(1, 1), member(2, 2));
        let mut st = State::Listing(me);
        let l = [lowest.node, me.node, highest.node];
        // Not the lowest: delete ours, then wait on the lowest.
        assert_eq!(
            r.on_release_reply(s, &mut st, &children(&l)),
            Step::Send(Request::Delete {
                path: names::member(me.node),
                version: None,
            })
        );
        assert_eq!(
            r.on_release_reply(s, &mut st, &Reply::Deleted),
            Step::Send(Request::Exists {
                path: names::member(lowest.node),
                watch: true
            })
        );
        let there = there(lowest.czxid, lowest.node.guid);
        assert_eq!(r.on_release_reply(s, &mut st, &there), Step::Wait);
        assert_eq!(st, State::WaitingOn(me, lowest.node));
        assert_eq!(
            r.on_release_event(&mut st, &deleted(highest.node)),
            Step::Wait
        );
        assert_eq!(
            st,
            State::WaitingOn(me, lowest.node),
            "a stray delete changes nothing"
        );
        assert_eq!(
            r.on_release_event(&mut st, &deleted(lowest.node)),
            list(false)
        );
        assert_eq!(st, State::Listing(me));
    }
}

mod fair_election {
    use super::*;
    use models::recipes::zk_fair_election::{Latch, Mine, State, ZkFairElection};

    /// Step 4 of the recipe text ("watch for changes on the node with the
    /// largest sequence number smaller than ours … on its deletion, go to
    /// 2"), and `LeaderLatch`'s watcher on its `getData` of the same node:
    /// a follower re-lists when the node just below its own goes, and for
    /// no other delete. In the model a follower's one armed watch that a
    /// delete can fire is on that node (the store drops a superseded
    /// session's watch events), so only this test sends it another.
    #[test]
    fn a_follower_wakes_only_for_the_node_below_its_own() {
        let s = SessionId::first(2);
        let (leader, next_lower, me) = (child(0, 0), child(1, 1), child(2, 2));
        let mine = Mine {
            node: me,
            czxid: Some(12),
        };
        for latch in [Latch::ZkDocs, Latch::Curator696, Latch::Curator] {
            let r = ZkFairElection(latch);
            let mut st = State::Listing(mine);
            let path = names::member(next_lower);
            let watch = match latch {
                Latch::ZkDocs => Request::Exists { path, watch: true },
                Latch::Curator696 | Latch::Curator | Latch::CuratorSync => {
                    Request::GetData { path, watch: true }
                }
            };
            assert_eq!(
                r.on_reply(s, &mut st, &children(&[leader, next_lower, me])),
                Step::Send(watch),
                "{latch:?}"
            );
            let there = there(11, next_lower.guid);
            assert_eq!(r.on_reply(s, &mut st, &there), Step::Wait, "{latch:?}");
            let following = State::Following {
                mine,
                next_lower,
                leader: leader.guid,
            };
            assert_eq!(st, following, "{latch:?}");
            assert_eq!(r.leader_seen(&st), leader.guid, "{latch:?}");
            assert_eq!(
                r.on_event(&mut st, &deleted(leader)),
                Step::Wait,
                "{latch:?}"
            );
            assert_eq!(st, following, "{latch:?}: a stray delete changes nothing");
            assert_eq!(
                r.on_event(&mut st, &deleted(next_lower)),
                list(false),
                "{latch:?}"
            );
            assert_eq!(st, State::Listing(mine), "{latch:?}");
        }
    }

    /// `LeaderLatch` with the CURATOR-696 fix: a candidate whose node is
    /// lowest and whose czxid it has not seen (it re-listed with its old
    /// path after a new session) leads only once `getData(ourPath)` shows
    /// the current session as the node's `ephemeralOwner`; a node of the
    /// old session is deleted and a new one created (`reset()`).
    #[test]
    fn curator_leads_only_when_the_current_session_owns_its_lowest_node() {
        let old = SessionId::first(0);
        let now = old.next();
        let me = child(0, 3);
        let mine = Mine {
            node: me,
            czxid: None,
        };
        let r = ZkFairElection(Latch::Curator);
        let owned_by = |owner| there(13, Some(owner));
        let delete_mine = Step::Send(Request::Delete {
            path: names::member(me),
            version: None,
        });
        // Lowest: look at the owner before leading.
        let mut st = State::Listing(mine);
        assert_eq!(
            r.on_reply(now, &mut st, &children(&[me, child(1, 4)])),
            Step::Send(Request::GetData {
                path: names::member(me),
                watch: false,
            })
        );
        assert_eq!(st, State::CheckingOwner(mine));
        // Ours: lead, with the node's czxid as the epoch.
        assert_eq!(
            r.on_reply(now, &mut st, &owned_by(now)),
            Step::Acquired { token: 13 }
        );
        assert_eq!(
            st,
            State::Leading(Mine {
                czxid: Some(13),
                ..mine
            })
        );
        // The old session's: reset.
        let mut st = State::CheckingOwner(mine);
        assert_eq!(r.on_reply(now, &mut st, &owned_by(old)), delete_mine);
        assert_eq!(st, State::Resetting);
        assert!(matches!(
            r.on_reply(now, &mut st, &Reply::Deleted),
            Step::Send(Request::Create {
                ephemeral: true,
                sequential: true,
                ..
            })
        ));
        assert_eq!(st, State::Creating);
    }

    /// The `sync` variant: `LeaderLatch` with the fix, every listing
    /// preceded by `sync(ELECTION)` — after the create, after the
    /// next-lower node's delete, on a resume with the old node, and when a
    /// lost create reply sends it looking for its node by guid.
    #[test]
    fn the_sync_variant_syncs_before_every_listing() {
        let s = SessionId::first(2);
        let r = ZkFairElection(Latch::CuratorSync);
        assert_eq!(r.variant(), Some("sync"));
        let sync = Step::Send(Request::Sync { path: names::LOCK });
        let (leader, next_lower, me) = (child(0, 0), child(1, 1), child(2, 2));
        let created = Reply::Created {
            path: names::member(me),
            czxid: 12,
        };
        let mine = Mine {
            node: me,
            czxid: Some(12),
        };
        let (mut st, _) = r.acquire(s);
        assert_eq!(r.on_reply(s, &mut st, &created), sync);
        assert_eq!(st, State::Syncing(Some(mine)));
        assert_eq!(r.on_reply(s, &mut st, &Reply::Synced), list(false));
        assert_eq!(st, State::Listing(mine));
        r.on_reply(s, &mut st, &children(&[leader, next_lower, me]));
        r.on_reply(s, &mut st, &there(11, next_lower.guid));
        assert_eq!(r.on_event(&mut st, &deleted(next_lower)), sync);
        assert_eq!(st, State::Syncing(Some(mine)));
        // A resume lists its old node again, after a sync.
        let mut resumed = State::Leading(mine);
        assert_eq!(
            r.resume(s, &mut resumed),
            models::recipe::Resume::Continue(Request::Sync { path: names::LOCK })
        );
        assert_eq!(resumed, State::Syncing(Some(mine)));
        // A lost create reply: sync, then look for the node by its guid.
        let (mut lost, create) = r.acquire(s);
        assert_eq!(
            r.on_lost_reply(&mut lost, &create),
            Request::Sync { path: names::LOCK }
        );
        assert_eq!(r.on_reply(s, &mut lost, &Reply::Synced), list(false));
        assert_eq!(lost, State::Finding);
    }
}
