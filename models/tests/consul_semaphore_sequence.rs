//! consul-semaphore's requests, call by call, against the sequence read
//! from the Go client's `api/semaphore.go` (`Semaphore.Acquire`,
//! `Release`, `pruneDeadHolders`, `decodeLock` / `encodeLock`). No Go
//! toolchain that builds `github.com/hashicorp/consul/api` can be
//! installed from the registries this project reaches, and no Consul
//! server at all, so this transcription is what pins the recipe to its
//! source (docs/validation.md says what is validated and what is not).
//!
//! The harness runs the recipe against the store's Consul face, as the
//! engines do: each request applied in the recipe's session, a held
//! blocking query's answer given back as the notification the store fired
//! for it (so a test sees which writes answer a waiter, and whom).
//!
//! Where the model differs from `semaphore.go` on purpose, as the
//! recipe's header says, the tests follow the model and say so: the
//! client's session is made once and kept across rounds (Go's `Acquire`
//! creates one and `Release` destroys it); `monitorLock`'s listings are
//! not sent (the store's expiry notice stands for their answer); the
//! contender entry's `Value` and the keys' `Flags`
//! (`SemaphoreFlagValue`) are not modelled. A session that ends while its
//! contender is still waiting is not pinned here.

use models::ids::{Data, Holders, Key, SessionId};
use models::msg::{
    Behavior, ConsulCmd, ConsulReply, KvPair, Reply, Request, SessionOpts, WatchEvent,
};
use models::recipe::{Recipe, Step};
use models::recipes::consul::{
    SEMAPHORE_CONTENDERS, SEMAPHORE_LOCK, SEMAPHORE_PREFIX, SESSION_TTL_MS,
};
use models::recipes::consul_semaphore::{ConsulSemaphore, State};
use models::store::{SessionEnd, StoreState};

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
const THIRD: SessionId = SessionId {
    client: 2,
    incarnation: 0,
    grant: 0,
};

/// `DefaultSemaphoreWaitTime`: every listing `Acquire` sends carries it
/// (`QueryOptions{WaitTime: 15 s}`), with an index or not.
const WAIT_MS: u32 = 15_000;

/// `api.Semaphore`'s session as `createSession` makes it: TTL
/// `DefaultSemaphoreSessionTTL`, `Behavior: delete`, no `LockDelay` (the
/// server's 15 s).
const SESSION: SessionOpts = SessionOpts {
    behavior: Behavior::Delete,
    lock_delay_ms: 15_000,
};

/// `SemaphorePrefix("sem", permits)`.
fn semaphore(permits: u16) -> ConsulSemaphore {
    ConsulSemaphore {
        permits,
        session: SESSION,
    }
}

/// `<prefix>/<session>`: `contenderEntry`.
fn contender(s: SessionId) -> Key {
    Key::of_lease(SEMAPHORE_CONTENDERS, s)
}

/// `<prefix>/.lock`: `DefaultSemaphoreKey`.
fn lock_key() -> Key {
    Key::fixed(SEMAPHORE_LOCK)
}

/// `kv.Acquire(contenderEntry(session))`: `PUT <prefix>/<session>?acquire=`.
fn enter(s: SessionId) -> ConsulCmd {
    ConsulCmd::Acquire {
        key: contender(s),
        value: Data::Empty,
    }
}

/// WAIT: `kv.List(prefix, qOpts)`, `GET <prefix>?recurse&wait=15000ms`
/// with `&index=<WaitIndex>` once it is not 0.
fn list(index: u64) -> ConsulCmd {
    ConsulCmd::List {
        prefix: SEMAPHORE_PREFIX,
        index,
        wait_ms: WAIT_MS,
    }
}

/// `encodeLock(lock, ModifyIndex)` then `kv.CAS`: `PUT <prefix>/.lock?cas=`
/// with `{Limit, Holders}`.
fn cas(index: u64, limit: u8, holders: &[SessionId]) -> ConsulCmd {
    ConsulCmd::Cas {
        key: lock_key(),
        value: Data::Holders(set(limit, holders)),
        index,
    }
}

/// `Release`'s READ: `kv.Get(<prefix>/.lock, nil)`, no index, no wait.
fn read_lock() -> ConsulCmd {
    ConsulCmd::Get {
        key: lock_key(),
        index: 0,
        wait_ms: 0,
    }
}

/// `kv.Delete(<prefix>/<session>, nil)`.
fn delete_entry(s: SessionId) -> ConsulCmd {
    ConsulCmd::Delete {
        key: contender(s),
        cas: None,
    }
}

fn set(limit: u8, holders: &[SessionId]) -> Holders {
    holders.iter().fold(Holders::new(limit), |h, &s| {
        h.with(s).expect("room for every holder")
    })
}

/// The store and the notifications it fired that nobody took yet.
struct World {
    store: StoreState,
    mail: Vec<(SessionId, WatchEvent)>,
}

impl World {
    /// A store with `sessions` made as `createSession` makes them.
    fn new(sessions: &[SessionId]) -> World {
        let mut store = StoreState::new(&semaphore(1).setup());
        store.consul = Some(Box::default());
        for &s in sessions {
            let create = Request::Consul(ConsulCmd::SessionCreate(SESSION));
            let (reply, _) = store.apply(s, &create);
            assert_eq!(reply, Reply::Consul(ConsulReply::SessionCreated));
        }
        World {
            store,
            mail: Vec::new(),
        }
    }

    /// The notifications fired for `s`'s client, taken.
    fn mail_for(&mut self, s: SessionId) -> Vec<WatchEvent> {
        let (mine, rest) = std::mem::take(&mut self.mail)
            .into_iter()
            .partition(|(to, _)| to.client == s.client);
        self.mail = rest;
        mine.into_iter().map(|(_, event)| event).collect()
    }

    /// `s`'s session is invalidated (its TTL ran out): with behavior
    /// `delete`, its contender entry goes.
    fn expire(&mut self, s: SessionId) {
        let fired = self.store.end_session(s, SessionEnd::Expired);
        self.mail.extend(fired);
    }

    /// `.lock` as it is.
    fn lock(&self) -> Option<KvPair> {
        self.store.consul.as_ref().unwrap().get(lock_key()).copied()
    }

    /// `.lock`'s `ModifyIndex`.
    fn lock_modify_index(&self) -> u64 {
        self.lock().expect(".lock is there").modify_index
    }

    /// The `X-Consul-Index` a listing of the prefix would answer now.
    fn listing_index(&self) -> u64 {
        self.store.consul.as_ref().unwrap().list(SEMAPHORE_PREFIX).1
    }

    fn holds_query(&self, s: SessionId) -> bool {
        self.store.consul.as_ref().unwrap().holds_query(s.client)
    }
}

/// One client's semaphore, its calls recorded as it makes them.
struct Run {
    me: SessionId,
    recipe: ConsulSemaphore,
    st: State,
    /// What it does next, not yet done.
    next: Step,
    releasing: bool,
    calls: Vec<ConsulCmd>,
}

#[derive(Debug, PartialEq, Eq)]
enum Stop {
    Held(u64),
    /// A blocking query held by the store.
    Blocked,
    Released,
    SessionLost,
}

impl Run {
    /// `Acquire` begun in `me`'s session (already made: see the header).
    fn new(me: SessionId, permits: u16) -> Run {
        let recipe = semaphore(permits);
        let (st, req) = recipe.acquire(me);
        Run {
            me,
            recipe,
            st,
            next: Step::Send(req),
            releasing: false,
            calls: Vec::new(),
        }
    }

    /// The request about to go.
    fn outgoing(&self) -> Request {
        match &self.next {
            Step::Send(req) => req.clone(),
            other => panic!("nothing to send: {other:?}"),
        }
    }

    /// Sends the next request and takes its reply.
    fn step(&mut self, w: &mut World) {
        let req = self.outgoing();
        let Request::Consul(cmd) = req else {
            panic!("not a Consul call: {req:?}");
        };
        self.calls.push(cmd);
        let (reply, fired) = w.store.apply(self.me, &req);
        assert!(
            fired.iter().all(|(to, _)| to.client != self.me.client),
            "a request answers no query of its own client"
        );
        w.mail.extend(fired);
        self.next = if self.releasing {
            self.recipe.on_release_reply(self.me, &mut self.st, &reply)
        } else {
            self.recipe.on_reply(self.me, &mut self.st, &reply)
        };
    }

    /// Sends the next request, which the store carries out, but its
    /// reply is lost: what the recipe sends in its place comes next.
    fn lose_reply(&mut self, w: &mut World) {
        let req = self.outgoing();
        let Request::Consul(cmd) = req else {
            panic!("not a Consul call: {req:?}");
        };
        self.calls.push(cmd);
        let (_, fired) = w.store.apply(self.me, &req);
        w.mail.extend(fired);
        self.next = Step::Send(self.recipe.on_lost_reply(&mut self.st, &req));
    }

    /// Runs until it holds, releases, loses its session or waits on a
    /// held query.
    fn go(&mut self, w: &mut World) -> Stop {
        for _ in 0..32 {
            match &self.next {
                Step::Send(_) => self.step(w),
                Step::Wait => {
                    assert!(w.holds_query(self.me), "waiting with no query held");
                    return Stop::Blocked;
                }
                Step::Acquired { token } => return Stop::Held(*token),
                Step::Released => return Stop::Released,
                Step::SessionLost => return Stop::SessionLost,
                other => panic!("unexpected step {other:?}"),
            }
        }
        panic!(
            "no end to its calls: {:?}",
            &self.calls[self.calls.len().saturating_sub(4)..]
        );
    }

    /// Its held query answered: the notification the store fired.
    fn answer(&mut self, w: &mut World, event: &WatchEvent) -> Stop {
        assert_eq!(self.next, Step::Wait);
        self.next = if self.releasing {
            self.recipe.on_release_event(&mut self.st, event)
        } else {
            self.recipe.on_event(&mut self.st, event)
        };
        self.go(w)
    }

    /// `Release` begun: its first request is next.
    fn begin_release(&mut self) {
        let req = self.recipe.release(self.me, &self.st).expect("holding");
        self.releasing = true;
        self.next = Step::Send(req);
    }

    fn release(&mut self, w: &mut World) -> Stop {
        self.begin_release();
        self.go(w)
    }

    /// The calls made since they were last taken.
    fn take_calls(&mut self) -> Vec<ConsulCmd> {
        std::mem::take(&mut self.calls)
    }
}

/// The one notification `s` has, a listing of the prefix.
fn only_listing(w: &mut World, s: SessionId) -> WatchEvent {
    match &w.mail_for(s)[..] {
        [event @ WatchEvent::ConsulList { .. }] => event.clone(),
        mail => panic!("{s} should have one listing, has {mail:?}"),
    }
}

#[test]
fn a_free_semaphore_is_entered_listed_and_claimed_at_cas_0() {
    // The session `createSession` makes: behavior delete (the contender
    // entry goes with it), TTL 15 s, the server's lock-delay.
    assert_eq!(semaphore(1).consul_session(), Some(SESSION));
    assert_eq!(SESSION_TTL_MS, 15_000, "DefaultSemaphoreSessionTTL");
    let mut w = World::new(&[ME]);
    let mut me = Run::new(ME, 1);
    // Acquire: the contender entry; WAIT with WaitIndex 0 (answered at
    // once); `findLock` finds no `.lock`, `decodeLock` of it is
    // `{Limit: 1, Holders: {}}`, so `len(Holders) < Limit`: us added, and
    // `encodeLock(lock, lockPair.ModifyIndex)` with the absent pair's 0:
    // `?cas=0`, create only. `didSet`: the slot is ours (no sequencer:
    // token 0).
    assert_eq!(me.go(&mut w), Stop::Held(0));
    assert_eq!(me.take_calls(), vec![enter(ME), list(0), cas(0, 1, &[ME])]);
    assert_eq!(w.lock().unwrap().value, Data::Holders(set(1, &[ME])));
    let entry = w.store.consul.as_ref().unwrap().get(contender(ME)).copied();
    assert_eq!(
        entry.and_then(|p| p.session),
        Some(ME),
        "the contender entry is held by our session"
    );
}

#[test]
fn a_full_semaphore_is_waited_for_past_the_listings_index() {
    let mut w = World::new(&[ME, OTHER]);
    let mut other = Run::new(OTHER, 1);
    assert_eq!(other.go(&mut w), Stop::Held(0));
    other.take_calls();
    let mut me = Run::new(ME, 1);
    // The listing shows `.lock` with OTHER, whose entry is alive: no
    // pruning, `len(Holders) >= Limit`, so `qOpts.WaitIndex =
    // meta.LastIndex; goto WAIT`: a blocking query past the listing's
    // X-Consul-Index, the last write under the prefix (our own entry).
    assert_eq!(me.go(&mut w), Stop::Blocked);
    let full_at = w.listing_index();
    let mine = w.store.consul.as_ref().unwrap().get(contender(ME)).unwrap();
    assert_eq!(full_at, mine.modify_index);
    assert_eq!(me.take_calls(), vec![enter(ME), list(0), list(full_at)]);
    assert!(w.mail_for(ME).is_empty(), "held: nothing has changed");
    // The holder's Release: READ `.lock`, `?cas=` without it, then its
    // entry deleted. The `cas` is the first change under the prefix, and
    // answers our query; the delete after it has none left to answer.
    let read_at = w.lock_modify_index();
    assert_eq!(other.release(&mut w), Stop::Released);
    assert_eq!(
        other.take_calls(),
        vec![read_lock(), cas(read_at, 1, &[]), delete_entry(OTHER)]
    );
    let event = only_listing(&mut w, ME);
    let left_at = w.lock_modify_index();
    assert!(matches!(event, WatchEvent::ConsulList { index, .. } if index == left_at));
    // Answered: no holders, so ours at `.lock`'s ModifyIndex.
    assert_eq!(me.answer(&mut w, &event), Stop::Held(0));
    assert_eq!(me.take_calls(), vec![cas(left_at, 1, &[ME])]);
}

#[test]
fn a_dead_holder_is_pruned_and_its_slot_claimed_at_the_locks_modify_index() {
    let mut w = World::new(&[ME, OTHER]);
    let mut other = Run::new(OTHER, 1);
    assert_eq!(other.go(&mut w), Stop::Held(0));
    let claimed_at = w.lock_modify_index();
    let mut me = Run::new(ME, 1);
    assert_eq!(me.go(&mut w), Stop::Blocked);
    let full_at = w.listing_index();
    assert_eq!(me.take_calls(), vec![enter(ME), list(0), list(full_at)]);
    // OTHER's session is invalidated: behavior delete takes its entry,
    // and the delete (a tombstone under the prefix) answers our query.
    // `.lock` still lists OTHER.
    w.expire(OTHER);
    let event = only_listing(&mut w, ME);
    assert_eq!(w.lock().unwrap().value, Data::Holders(set(1, &[OTHER])));
    let WatchEvent::ConsulList { pairs, index } = &event else {
        unreachable!()
    };
    assert!(*index > full_at);
    assert!(
        pairs.iter().all(|p| p.session != Some(OTHER)),
        "OTHER's session holds no key under the prefix"
    );
    // pruneDeadHolders: a holder is alive only if some pair under the
    // prefix has its session; OTHER is dropped, and the slot is ours at
    // `.lock`'s ModifyIndex, which the prune did not change (the holders
    // are pruned in the copy that is written, not on the server).
    assert_eq!(me.answer(&mut w, &event), Stop::Held(0));
    assert_eq!(me.take_calls(), vec![cas(claimed_at, 1, &[ME])]);
    assert_eq!(w.lock().unwrap().value, Data::Holders(set(1, &[ME])));
}

#[test]
fn a_lost_cas_race_lists_again_past_the_same_index() {
    let mut w = World::new(&[ME, OTHER, THIRD]);
    let mut other = Run::new(OTHER, 1);
    assert_eq!(other.go(&mut w), Stop::Held(0));
    other.take_calls();
    let mut me = Run::new(ME, 1);
    assert_eq!(me.go(&mut w), Stop::Blocked);
    let first_wait = w.listing_index();
    // THIRD's contender entry is a change under the prefix: it answers
    // our query (the herd), and we wait again past the new index.
    let mut third = Run::new(THIRD, 1);
    assert_eq!(third.go(&mut w), Stop::Blocked);
    let wait_at = w.listing_index();
    assert_eq!(
        third.take_calls(),
        vec![enter(THIRD), list(0), list(wait_at)]
    );
    let entered = only_listing(&mut w, ME);
    assert_eq!(me.answer(&mut w, &entered), Stop::Blocked);
    assert_eq!(
        me.take_calls(),
        vec![enter(ME), list(0), list(first_wait), list(wait_at)]
    );
    // OTHER releases: its `cas` answers both waiters, past the same index.
    let read_at = w.lock_modify_index();
    assert_eq!(other.release(&mut w), Stop::Released);
    let freed_at = w.lock_modify_index();
    assert_eq!(
        other.take_calls(),
        vec![read_lock(), cas(read_at, 1, &[]), delete_entry(OTHER)]
    );
    let for_third = only_listing(&mut w, THIRD);
    let for_me = only_listing(&mut w, ME);
    assert!(matches!(&for_me, WatchEvent::ConsulList { index, .. } if *index == freed_at));
    // THIRD's `cas` goes first and takes the slot.
    assert_eq!(third.answer(&mut w, &for_third), Stop::Held(0));
    assert_eq!(third.take_calls(), vec![cas(freed_at, 1, &[THIRD])]);
    // Ours, at the same ModifyIndex, is refused: `if !didSet { goto WAIT
    // }` with qOpts untouched, so the listing is past the index we were
    // waiting on (`wait_at`), not the index of the answer we decided on
    // (`freed_at`). That listing is answered at once (the index moved on),
    // shows THIRD holding, and the next waits past its index.
    assert_eq!(me.answer(&mut w, &for_me), Stop::Blocked);
    let now = w.listing_index();
    assert!(freed_at > wait_at && now > freed_at);
    assert_eq!(
        me.take_calls(),
        vec![cas(freed_at, 1, &[ME]), list(wait_at), list(now)]
    );
}

#[test]
fn a_release_whose_cas_fails_reads_again_then_deletes_its_entry() {
    let mut w = World::new(&[ME, OTHER]);
    let mut me = Run::new(ME, 2);
    let mut other = Run::new(OTHER, 2);
    assert_eq!(me.go(&mut w), Stop::Held(0));
    let mine_at = w.lock_modify_index();
    // Two permits: OTHER finds one holder and adds itself.
    assert_eq!(other.go(&mut w), Stop::Held(0));
    assert_eq!(
        other.take_calls(),
        vec![enter(OTHER), list(0), cas(mine_at, 2, &[ME, OTHER])]
    );
    me.take_calls();
    // Release: READ `.lock`; we are a holder, so `encodeLock` without us
    // at its ModifyIndex — but OTHER's release changes `.lock` first.
    let both_at = w.lock_modify_index();
    me.begin_release();
    me.step(&mut w);
    assert_eq!(other.release(&mut w), Stop::Released);
    let other_left_at = w.lock_modify_index();
    assert_eq!(
        other.take_calls(),
        vec![read_lock(), cas(both_at, 2, &[ME]), delete_entry(OTHER)]
    );
    // `if !didSet { goto READ }`: a plain GET again, then the `cas` at the
    // new ModifyIndex, then the entry's delete.
    assert_eq!(me.go(&mut w), Stop::Released);
    assert_eq!(
        me.take_calls(),
        vec![
            read_lock(),
            cas(both_at, 2, &[OTHER]),
            read_lock(),
            cas(other_left_at, 2, &[]),
            delete_entry(ME),
        ]
    );
    assert_eq!(w.lock().unwrap().value, Data::Holders(set(2, &[])));
    assert!(w
        .store
        .consul
        .as_ref()
        .unwrap()
        .get(contender(ME))
        .is_none());
    // (Go's Release then closes the renewer, which destroys the session;
    // the model's client keeps it for its next round.)
}

#[test]
fn a_release_not_among_the_holders_only_deletes_its_entry() {
    let mut w = World::new(&[ME, OTHER]);
    let mut me = Run::new(ME, 1);
    assert_eq!(me.go(&mut w), Stop::Held(0));
    me.take_calls();
    // Our session ends under us (the application carries on: `lockCh`
    // closed, unread); the next contender prunes us and takes the slot.
    w.expire(ME);
    let mut other = Run::new(OTHER, 1);
    assert_eq!(other.go(&mut w), Stop::Held(0));
    // Release: READ `.lock`, which does not list us: no `cas`, straight to
    // the entry's delete (gone already: DELETE answers true anyway).
    assert_eq!(me.release(&mut w), Stop::Released);
    assert_eq!(me.take_calls(), vec![read_lock(), delete_entry(ME)]);
    assert_eq!(w.lock().unwrap().value, Data::Holders(set(1, &[OTHER])));
}

#[test]
fn a_lost_reply_while_acquiring_destroys_the_session() {
    // Each of Acquire's three calls: an error returns from `Acquire` (no
    // retry), and its deferred clean-up closes the renewer, which sends
    // `session/destroy`. The model sends that in place of a resend.
    let sequence = [enter(ME), list(0), cas(0, 1, &[ME])];
    for lost in 0..sequence.len() {
        let mut w = World::new(&[ME]);
        let mut me = Run::new(ME, 1);
        for _ in 0..lost {
            me.step(&mut w);
        }
        me.lose_reply(&mut w);
        assert_eq!(
            me.outgoing(),
            Request::Consul(ConsulCmd::SessionDestroy),
            "after losing {:?}",
            sequence[lost]
        );
        assert_eq!(me.go(&mut w), Stop::SessionLost);
        let mut calls = sequence[..=lost].to_vec();
        calls.push(ConsulCmd::SessionDestroy);
        assert_eq!(me.take_calls(), calls);
    }
    // The `cas` that went through though its reply was lost left us in
    // `.lock`; the destroy took our entry (behavior delete), so the next
    // contender prunes us and has the slot at once. (Resending the `cas`
    // instead would be refused, and we would list ourselves as a holder
    // and wait for our own slot.)
    let mut w = World::new(&[ME, OTHER]);
    let mut me = Run::new(ME, 1);
    me.step(&mut w);
    me.step(&mut w);
    me.lose_reply(&mut w);
    assert_eq!(me.go(&mut w), Stop::SessionLost);
    assert_eq!(w.lock().unwrap().value, Data::Holders(set(1, &[ME])));
    let stale_at = w.lock_modify_index();
    let mut other = Run::new(OTHER, 1);
    assert_eq!(other.go(&mut w), Stop::Held(0));
    assert_eq!(
        other.take_calls(),
        vec![enter(OTHER), list(0), cas(stale_at, 1, &[OTHER])]
    );
}
