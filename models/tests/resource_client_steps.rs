//! The client application's and the guarded resource's steps called
//! directly, for what a mutation test of `client.rs` and `resource.rs`
//! found unpinned by the model checks and other tests of this crate, or
//! pinned only by a state count that moves for any change: the connection
//! states a disconnect and a reconnect leave (the model's resend timer
//! hides a reconnect that resends nothing), what restarts the client's
//! deadline, which store messages it reads at all, heartbeats (never fired
//! by the checker), what it does with a step its recipe should not take,
//! its ghost count of acquisitions, the exact fence of the resource, the
//! names of policies and connection states, and a queue's roles.

use models::client::{Client, ClientState, Connection, Phase, Policy};
use models::ids::Data;
use models::ids::{client_id, resource_id, store_id, SessionId};
use models::model::{Action, ModelCfg, ModelState, RecipeModel};
use models::msg::{Msg, Reply, Request, Timer};
use models::recipe::{Face, Recipe, RecipeRef, Setup, Step};
use models::recipes::lookup;
use models::recipes::names;
use stateright::actor::{Actor, Command, Out};
use stateright::Model;
use std::borrow::Cow;

fn model(recipe: &str, policy: Policy) -> RecipeModel {
    ModelCfg {
        policy,
        ..ModelCfg::new(lookup(recipe, None).unwrap(), 2)
    }
    .into_model()
    .unwrap()
}

/// Runs client 0 alone (deliveries both ways, its think and hold timers),
/// from the initial state, until `done` says so.
fn drive(model: &RecipeModel, done: impl Fn(&ClientState) -> bool) -> ClientState {
    let mut state: ModelState = model.init_states().remove(0);
    for _ in 0..100 {
        let st = &state.clients[0].state;
        if done(st) {
            return st.clone();
        }
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let a = actions
            .into_iter()
            .find(|a| {
                matches!(
                    a,
                    Action::Deliver(0, _) | Action::Timeout(0, Timer::Think | Timer::Hold)
                )
            })
            .expect("client 0 can step");
        state = model.next_state(&state, a).unwrap();
    }
    panic!("client 0 never got there");
}

/// Client 0 with its first acquisition's request outstanding.
fn acquiring(model: &RecipeModel) -> ClientState {
    drive(model, |st| {
        st.phase == Phase::Acquiring && st.pending.is_some()
    })
}

/// Client 0 holding the lock, its first write sent.
fn holding(model: &RecipeModel) -> ClientState {
    drive(model, ClientState::is_holding)
}

/// The store requests among a step's commands.
fn requests(out: &Out<Client>) -> Vec<(u8, Request)> {
    out.iter()
        .filter_map(|c| match c {
            Command::Send(to, Msg::Request { epoch, req, .. }) if *to == store_id() => {
                Some((*epoch, req.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Client 0 at `st` taking one step of its actor (`step` calls the
/// handler): the state after it and what it sent or set.
fn client_step(
    model: &RecipeModel,
    st: &ClientState,
    step: impl FnOnce(&Client, &mut Cow<ClientState>, &mut Out<Client>),
) -> (ClientState, Out<Client>) {
    let mut cow = Cow::Borrowed(st);
    let mut out = Out::new();
    step(&model.client, &mut cow, &mut out);
    (cow.into_owned(), out)
}

fn disconnect(model: &RecipeModel, st: &ClientState) -> (ClientState, Out<Client>) {
    client_step(model, st, |c, st, out| c.on_disconnect(st, out))
}

fn reconnect(model: &RecipeModel, st: &ClientState, alive: bool) -> (ClientState, Out<Client>) {
    client_step(model, st, |c, st, out| c.on_reconnect(st, alive, out))
}

fn deliver(
    model: &RecipeModel,
    st: &ClientState,
    from: stateright::actor::Id,
    msg: Msg,
) -> (ClientState, Out<Client>) {
    client_step(model, st, |c, st, out| {
        c.on_msg(client_id(0), st, from, msg, out)
    })
}

/// A connection that drops makes a connected client SUSPENDED, whatever it
/// is doing; a naive client does nothing more (no request, no release).
/// Reconnected on its live session it is RECONNECTED and sends its
/// outstanding request again under a new epoch (its reply went with the
/// old connection).
#[test]
fn a_dropped_connection_suspends_and_a_reconnect_resends_on_the_live_session() {
    for recipe in ["lowest-watch", "etcd-revision"] {
        let m = model(recipe, Policy::Naive);
        let st = acquiring(&m);
        assert_eq!(st.connection, Connection::Connected, "{recipe}");
        let (down, out) = disconnect(&m, &st);
        assert_eq!(down.connection, Connection::Suspended, "{recipe}");
        assert!(requests(&out).is_empty(), "{recipe}");
        assert_eq!(down.pending, st.pending, "{recipe}");
        let (up, out) = reconnect(&m, &down, true);
        assert_eq!(up.connection, Connection::Connected, "{recipe}");
        let again = requests(&out);
        assert_eq!(again.len(), 1, "{recipe}: {again:?}");
        assert_eq!(again[0].0, st.epoch.wrapping_add(1), "{recipe}");
        assert_eq!(up.epoch, again[0].0, "{recipe}");
        assert_eq!(Some(&again[0].1), up.pending.as_ref(), "{recipe}");
        // A reconnect the client had not noticed the drop before: the same.
        let (up, out) = reconnect(&m, &st, true);
        assert_eq!(up.connection, Connection::Connected, "{recipe}");
        assert_eq!(requests(&out).len(), 1, "{recipe}");
    }
}

/// A ZooKeeper client whose session ended meanwhile is told so in the
/// reconnect's handshake: it stays SUSPENDED (LOST comes with the expiry
/// notice) and sends nothing more on that session. An etcd client learns
/// of its lease only from an answer, so it asks again; a client opening a
/// new session asks again on either store.
#[test]
fn a_reconnect_on_an_ended_session_resends_only_where_the_client_cannot_know() {
    let zk = model("lowest-watch", Policy::Naive);
    let st = acquiring(&zk);
    let (after, out) = reconnect(&zk, &st, false);
    assert_eq!(after.connection, Connection::Suspended);
    assert!(requests(&out).is_empty(), "{:?}", requests(&out));
    assert_eq!(after.epoch, st.epoch);

    let etcd = model("etcd-revision", Policy::Naive);
    let st = acquiring(&etcd);
    let (after, out) = reconnect(&etcd, &st, false);
    assert_eq!(after.connection, Connection::Suspended);
    assert_eq!(requests(&out).len(), 1);

    // Opening a session: the connect (lease grant) goes again.
    for (m, open) in [(&zk, Request::Connect), (&etcd, Request::LeaseGrant)] {
        let mut out = Out::new();
        let st = m.client.on_start(client_id(0), &None, &mut out);
        assert_eq!(st.phase, Phase::Connecting);
        let (_, out) = reconnect(m, &st, false);
        assert_eq!(requests(&out), vec![(st.epoch + 1, open)]);
    }
}

/// A dropped connection changes nothing for a client that already knows
/// its session is lost (it is opening a new one) or that has finished.
#[test]
fn a_dropped_connection_leaves_a_lost_or_finished_client_as_it_was() {
    let m = model("lowest-watch", Policy::SuspendAware);
    let lost = ClientState {
        connection: Connection::Lost,
        ..holding(&m)
    };
    let (after, out) = disconnect(&m, &lost);
    assert_eq!(after, lost);
    assert!(out.is_empty());
    let done = ClientState {
        phase: Phase::Done,
        ..ClientState::new(SessionId::first(0))
    };
    let (after, out) = disconnect(&m, &done);
    assert_eq!(after, done);
    assert!(out.is_empty());
}

/// SUSPENDED on ZooKeeper is an event Curator hands the application: a
/// suspend-aware holder gives the lock up at once (its release request
/// goes out). etcd's client reports nothing, so an etcd holder holds on
/// until its own deadline.
#[test]
fn a_suspend_aware_holder_gives_up_on_a_dropped_zookeeper_connection_only() {
    let zk = model("lowest-watch", Policy::SuspendAware);
    let st = holding(&zk);
    let (after, out) = disconnect(&zk, &st);
    assert_eq!(after.phase, Phase::Releasing);
    assert_eq!(requests(&out).len(), 1, "the release request");

    let etcd = model("etcd-revision", Policy::SuspendAware);
    let st = holding(&etcd);
    let (after, out) = disconnect(&etcd, &st);
    assert_eq!(after.connection, Connection::Suspended);
    assert!(after.is_holding());
    assert!(requests(&out).is_empty());
}

/// A recipe that takes whatever step it is scripted to, to see what the
/// client does with steps no built-in recipe takes at that point.
#[derive(Debug)]
struct Scripted;

/// The steps the scripted recipe answers: a `Created` reply (the token is
/// its czxid) acquires, a `Deleted` reply releases, whatever the phase.
fn scripted_step(reply: &Reply) -> Step {
    match reply {
        Reply::Created { czxid, .. } => Step::Acquired { token: *czxid },
        Reply::Deleted => Step::Released,
        _ => Step::Unexpected,
    }
}

fn create() -> Request {
    Request::Create {
        path: names::LOCK,
        ephemeral: true,
        sequential: false,
        data: Data::Empty,
    }
}

impl Recipe for Scripted {
    type State = u8;
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn face(&self) -> Face {
        Face::ZooKeeper
    }
    fn setup(&self) -> Setup {
        Setup::bare()
    }
    fn acquire(&self, _: SessionId) -> (u8, Request) {
        (0, create())
    }
    fn on_reply(&self, _: SessionId, _: &mut u8, reply: &Reply) -> Step {
        scripted_step(reply)
    }
    fn on_event(&self, _: &mut u8, _: &models::msg::WatchEvent) -> Step {
        // Any event is news to act on: read the lock node again.
        Step::Send(Request::Exists {
            path: names::LOCK,
            watch: true,
        })
    }
    fn on_release_reply(&self, _: SessionId, _: &mut u8, reply: &Reply) -> Step {
        scripted_step(reply)
    }
    fn release(&self, _: SessionId, _: &u8) -> Option<Request> {
        Some(Request::Delete {
            path: names::LOCK,
            version: None,
        })
    }
}

fn scripted() -> RecipeModel {
    ModelCfg::new(RecipeRef::new(Scripted), 2)
        .into_model()
        .unwrap()
}

fn reply(st: &ClientState, reply: Reply) -> Msg {
    Msg::Reply {
        epoch: st.epoch,
        header: 7,
        owns_first: true,
        reply,
    }
}

/// Only a release ends with `Released`: a recipe that says so while
/// acquiring has taken a step it should not, and the client stops there
/// (visibly: a progress violation) rather than counting a round it never
/// held the lock in. Likewise `Acquired` while releasing: the client does
/// not go back to holding a lock it is giving up.
#[test]
fn a_step_out_of_place_stops_the_client_where_it_is() {
    let m = scripted();
    let st = acquiring(&m);
    let (after, out) = deliver(&m, &st, store_id(), reply(&st, Reply::Deleted));
    assert_eq!(after.phase, Phase::Acquiring);
    assert_eq!(after.rounds_done, 0);
    assert!(after.recipe.is_some());
    assert!(after.pending.is_none());
    assert!(requests(&out).is_empty());
    assert!(
        !out.iter().any(|c| matches!(c, Command::SetTimer(..))),
        "{out:?}"
    );

    let held = holding(&m);
    let releasing = drive(&m, |st| {
        st.phase == Phase::Releasing && st.pending.is_some()
    });
    let token = 99;
    let created = Reply::Created {
        path: names::LOCK,
        czxid: token,
    };
    let (after, out) = deliver(&m, &releasing, store_id(), reply(&releasing, created));
    assert_eq!(after.phase, Phase::Releasing);
    assert_eq!(after.holds, held.holds);
    assert!(!out
        .iter()
        .any(|c| matches!(c, Command::Send(to, _) if *to == resource_id())));
    // The release's own answer still ends the round.
    let (after, _) = deliver(
        &m,
        &releasing,
        store_id(),
        reply(&releasing, Reply::Deleted),
    );
    assert_eq!(after.rounds_done, 1);
    assert_eq!(after.phase, Phase::Done);
}

/// The client numbers its acquisitions (a ghost the checker reads to tell
/// them apart): the first is 1, each next one adds one, every write is
/// tagged with the acquisition it belongs to, and the count is saved for
/// a restart.
#[test]
fn each_acquisition_is_numbered_and_its_writes_carry_the_number() {
    let m = scripted();
    let st = acquiring(&m);
    assert_eq!(st.holds, 0);
    for n in 1..=3u32 {
        let before = ClientState {
            holds: n - 1,
            ..st.clone()
        };
        let created = Reply::Created {
            path: names::LOCK,
            czxid: 40 + u64::from(n),
        };
        let (after, out) = deliver(&m, &before, store_id(), reply(&before, created));
        assert_eq!(after.holds, n);
        assert_eq!(after.token(), Some(40 + u64::from(n)));
        let writes: Vec<&Msg> = out
            .iter()
            .filter_map(|c| match c {
                Command::Send(to, w) if *to == resource_id() => Some(w),
                _ => None,
            })
            .collect();
        assert_eq!(
            writes,
            vec![&Msg::Write {
                token: 40 + u64::from(n),
                hold: n
            }]
        );
        assert!(out
            .iter()
            .any(|c| matches!(c, Command::Save(s) if s.holds == n)));
    }
}

/// A ZooKeeper connect resent on a session that ended meanwhile is
/// answered SessionExpired: the client is LOST and opens a new session;
/// it does not take the refusal for a connection.
#[test]
fn a_refused_connect_opens_a_new_session() {
    use models::msg::ZkError;
    let m = model("lowest-watch", Policy::LeaseAware);
    let mut out = Out::new();
    let st = m.client.on_start(client_id(0), &None, &mut out);
    let refused = reply(&st, Reply::Error(ZkError::SessionExpired));
    let (after, out) = deliver(&m, &st, store_id(), refused);
    assert_eq!(after.phase, Phase::Connecting);
    assert_eq!(after.connection, Connection::Lost);
    assert_eq!(after.session, st.session.next());
    assert_eq!(requests(&out), vec![(after.epoch, Request::Connect)]);
    assert!(!out.iter().any(|c| matches!(
        c,
        Command::SetTimer(Timer::Ping | Timer::Deadline | Timer::Think, _)
    )));
}

/// Whether a step set (or reset) the client's deadline timer.
fn deadline_set(out: &Out<Client>) -> bool {
    out.iter()
        .any(|c| matches!(c, Command::SetTimer(Timer::Deadline, _)))
}

/// A message that proves nothing but that the store is there: a reply to
/// a request given up on (its epoch is past), a watch event, a heartbeat's
/// answer.
fn store_messages(st: &ClientState) -> [(&'static str, Msg); 3] {
    use models::msg::{WatchEvent, ZkEvent};
    [
        (
            "reply",
            Msg::Reply {
                epoch: st.epoch.wrapping_add(1),
                header: 9,
                owns_first: false,
                reply: Reply::Deleted,
            },
        ),
        (
            "event",
            Msg::Notify {
                header: 9,
                owns_first: false,
                event: WatchEvent::Zk {
                    kind: ZkEvent::NodeDeleted,
                    path: names::READY,
                },
            },
        ),
        (
            "pong",
            Msg::Pong {
                session: st.session,
            },
        ),
    ]
}

/// What restarts a client's own clock of the store's silence (the
/// deadline): on ZooKeeper any word from the store in its session (every
/// request renews a ZooKeeper session); on etcd only a keepalive's answer
/// (the lease is renewed by keepalives alone) — unless the policy is
/// suspend-aware, whose clock is the connection's. Never a message from
/// the resource, never before the session is open or after the client is
/// done, and never for a policy that keeps no deadline.
#[test]
fn what_restarts_the_deadline_is_word_from_the_store_that_renews_the_session() {
    for (recipe, policy, renewing) in [
        (
            "lowest-watch",
            Policy::LeaseAware,
            ["reply", "event", "pong"].as_slice(),
        ),
        (
            "lowest-watch",
            Policy::SuspendAware,
            &["reply", "event", "pong"],
        ),
        ("etcd-revision", Policy::LeaseAware, &["pong"]),
        (
            "etcd-revision",
            Policy::SuspendAware,
            &["reply", "event", "pong"],
        ),
        ("lowest-watch", Policy::Naive, &[]),
        ("etcd-revision", Policy::Oblivious, &[]),
    ] {
        let m = model(recipe, policy);
        let st = holding(&m);
        for (what, msg) in store_messages(&st) {
            let (_, out) = deliver(&m, &st, store_id(), msg);
            assert_eq!(
                deadline_set(&out),
                renewing.contains(&what),
                "{recipe}, {policy}: {what}"
            );
        }
        let ack = Msg::WriteAck {
            hold: st.holds,
            accepted: true,
        };
        let (_, out) = deliver(&m, &st, resource_id(), ack);
        assert!(!deadline_set(&out), "{recipe}, {policy}: a write's ack");
        // Not in a session: opening one, or done.
        let mut o = Out::new();
        let connecting = m.client.on_start(client_id(0), &None, &mut o);
        let done = ClientState {
            phase: Phase::Done,
            ..st.clone()
        };
        for st in [connecting, done] {
            let pong = Msg::Pong {
                session: st.session,
            };
            let (_, out) = deliver(&m, &st, store_id(), pong);
            assert!(!deadline_set(&out), "{recipe}, {policy}: {:?}", st.phase);
        }
    }
}

/// A SUSPENDED client that hears from the store again is RECONNECTED,
/// unless what it hears is its session's expiry; a message from the
/// resource says nothing of the store; and a client that knows its
/// session is LOST stays so until a new session opens.
#[test]
fn word_from_the_store_reconnects_a_suspended_client_only() {
    let m = model("lowest-watch", Policy::Naive);
    let held = holding(&m);
    let suspended = ClientState {
        connection: Connection::Suspended,
        ..held.clone()
    };
    for (what, msg) in store_messages(&suspended) {
        let (after, _) = deliver(&m, &suspended, store_id(), msg);
        assert_eq!(after.connection, Connection::Connected, "{what}");
    }
    let expired = Msg::Expired {
        session: suspended.session,
    };
    let (after, _) = deliver(&m, &suspended, store_id(), expired);
    assert_eq!(after.connection, Connection::Lost);
    let ack = Msg::WriteAck {
        hold: suspended.holds,
        accepted: true,
    };
    let (after, _) = deliver(&m, &suspended, resource_id(), ack);
    assert_eq!(after.connection, Connection::Suspended);

    let lost = ClientState {
        connection: Connection::Lost,
        ..held
    };
    for (what, msg) in store_messages(&lost) {
        let (after, _) = deliver(&m, &lost, store_id(), msg);
        assert_eq!(after.connection, Connection::Lost, "{what}");
    }
    let ack = Msg::WriteAck {
        hold: lost.holds,
        accepted: true,
    };
    let (after, _) = deliver(&m, &lost, resource_id(), ack);
    assert_eq!(after.connection, Connection::Lost);
}

/// A reply is read only when it answers the request outstanding: one to
/// a request the client gave up on (its epoch is past: resent, or the
/// session renewed) is dropped, and so is any reply while nothing is
/// outstanding, even under the current epoch.
#[test]
fn a_reply_to_nothing_outstanding_is_dropped() {
    let m = model("lowest-watch", Policy::Naive);
    let st = acquiring(&m);
    let pending = st.pending.clone();
    let answer = Reply::Children(vec![].into());
    let stale = Msg::Reply {
        epoch: st.epoch.wrapping_sub(1),
        header: 5,
        owns_first: false,
        reply: answer.clone(),
    };
    let (after, out) = deliver(&m, &st, store_id(), stale);
    assert_eq!(after.pending, pending);
    assert_eq!(after.recipe, st.recipe);
    assert!(requests(&out).is_empty());
    assert!(!out
        .iter()
        .any(|c| matches!(c, Command::CancelTimer(Timer::Retry))));

    let held = holding(&m);
    let (after, out) = deliver(&m, &held, store_id(), reply(&held, answer));
    assert_eq!(after, held);
    assert!(out.is_empty(), "{out:?}");
}

/// A watch event is for a client that waits with nothing outstanding: one
/// that comes while a request is out (the reply will tell the recipe what
/// changed) or while the client holds the lock is not handed to the
/// recipe.
#[test]
fn a_watch_event_reaches_only_a_waiting_client_with_nothing_outstanding() {
    use models::msg::{WatchEvent, ZkEvent};
    let m = scripted();
    let event = Msg::Notify {
        header: 9,
        owns_first: true,
        event: WatchEvent::Zk {
            kind: ZkEvent::NodeChildrenChanged,
            path: names::LOCK,
        },
    };
    for st in [acquiring(&m), holding(&m)] {
        let (after, out) = deliver(&m, &st, store_id(), event.clone());
        assert_eq!(after, st, "{:?}", st.phase);
        assert!(out.is_empty(), "{:?}: {out:?}", st.phase);
    }
    // Waiting with nothing out: the recipe hears of it and acts.
    let waiting = ClientState {
        pending: None,
        ..acquiring(&m)
    };
    let (after, out) = deliver(&m, &waiting, store_id(), event);
    let read = Request::Exists {
        path: names::LOCK,
        watch: true,
    };
    assert_eq!(requests(&out), vec![(waiting.epoch, read.clone())]);
    assert_eq!(after.pending, Some(read));
}

/// The store's word that a session expired is about that session: one
/// the client already gave up on (it opened a new one) changes nothing,
/// whatever the client is doing in its new session. An oblivious holder
/// told its own session expired goes on holding, but its library knows
/// (LOST).
#[test]
fn an_expiry_notice_is_about_the_session_it_names() {
    let m = model("lowest-watch", Policy::LeaseAware);
    let acq = acquiring(&m);
    let renewed = ClientState {
        session: acq.session.next(),
        ..acq
    };
    let old = Msg::Expired {
        session: acq.session,
    };
    for st in [
        renewed.clone(),
        ClientState {
            session: acq.session.next(),
            ..holding(&m)
        },
    ] {
        let (after, out) = deliver(&m, &st, store_id(), old.clone());
        assert_eq!(after, st, "{:?}", st.phase);
        assert!(out.is_empty(), "{:?}: {out:?}", st.phase);
    }

    let m = model("lowest-watch", Policy::Oblivious);
    let held = holding(&m);
    let own = Msg::Expired {
        session: held.session,
    };
    let (after, out) = deliver(&m, &held, store_id(), own);
    assert!(after.is_holding());
    assert_eq!(after.connection, Connection::Lost);
    assert!(requests(&out).is_empty());
    let moved_on = ClientState {
        session: held.session.next(),
        ..held
    };
    let (after, _) = deliver(&m, &moved_on, store_id(), old);
    assert_eq!(after, moved_on);
}

fn timeout(model: &RecipeModel, st: &ClientState, timer: Timer) -> (ClientState, Out<Client>) {
    client_step(model, st, |c, st, out| {
        c.on_timeout(client_id(0), st, &timer, out)
    })
}

/// A client in a session sends a heartbeat on its ping timer, for that
/// session, and arms the timer again: the model checker never fires it
/// (a healthy client keeps its session), so only this pins it.
#[test]
fn the_ping_timer_sends_a_heartbeat_and_rearms() {
    for recipe in ["lowest-watch", "etcd-revision"] {
        let m = model(recipe, Policy::Naive);
        for st in [acquiring(&m), holding(&m)] {
            let (after, out) = timeout(&m, &st, Timer::Ping);
            assert_eq!(after, st, "{recipe}");
            let sent: Vec<&Command<Msg, Timer, (), models::client::ClientStorage>> =
                out.iter().collect();
            assert_eq!(sent.len(), 2, "{recipe}: {sent:?}");
            assert!(matches!(
                sent[0],
                Command::Send(to, Msg::Ping { session }) if *to == store_id() && *session == st.session
            ));
            assert!(
                matches!(sent[1], Command::SetTimer(Timer::Ping, r) if r.start == m.client.timing.ping),
                "{recipe}: {sent:?}"
            );
        }
    }
}

/// A suspend-aware client's deadline is its own read timeout: SUSPENDED.
/// A holder gives the lock up (one release request) and keeps its
/// session; a client with a request out has lost that request's reply with
/// the connection and sends it again, once, under a new epoch.
#[test]
fn a_suspend_aware_deadline_releases_a_holder_and_resends_a_request_in_flight() {
    for recipe in ["lowest-watch", "etcd-revision"] {
        let m = model(recipe, Policy::SuspendAware);
        let st = acquiring(&m);
        let (after, out) = timeout(&m, &st, Timer::Deadline);
        assert_eq!(after.connection, Connection::Suspended, "{recipe}");
        assert_eq!(after.session, st.session, "{recipe}");
        let sent = requests(&out);
        assert_eq!(sent.len(), 1, "{recipe}: {sent:?}");
        assert_eq!(sent[0].0, st.epoch.wrapping_add(1), "{recipe}");
        assert_eq!(after.pending.as_ref(), Some(&sent[0].1), "{recipe}");

        let st = holding(&m);
        let (after, out) = timeout(&m, &st, Timer::Deadline);
        assert_eq!(after.phase, Phase::Releasing, "{recipe}");
        assert_eq!(after.session, st.session, "{recipe}");
        let sent = requests(&out);
        assert_eq!(sent.len(), 1, "{recipe}: {sent:?}");
        assert_eq!(sent[0].0, st.epoch, "{recipe}: a first send, not a resend");
    }
}

/// Writes `tokens` in turn from client 0's acquisition 1 and returns what
/// each ack said, and the log.
fn write_all(resource: &models::resource::Resource, tokens: &[u64]) -> (Vec<bool>, Vec<u64>) {
    use models::resource::ResourceState;
    let mut state = Cow::Owned(ResourceState::default());
    let mut acks = Vec::new();
    for &token in tokens {
        let mut out = Out::new();
        resource.on_msg(
            resource_id(),
            &mut state,
            client_id(0),
            Msg::Write { token, hold: 1 },
            &mut out,
        );
        match out.iter().collect::<Vec<_>>().as_slice() {
            [Command::Send(to, Msg::WriteAck { hold: 1, accepted })] if *to == client_id(0) => {
                acks.push(*accepted)
            }
            other => panic!("{other:?}"),
        }
    }
    let log = state.log.iter().map(|a| a.token).collect();
    (acks, log)
}

/// The fence: a token below the highest accepted is refused, an equal one
/// (the same holder's next write) and a higher one are accepted, and only
/// what is accepted is logged. The deliberately broken fence the checker's
/// tests use refuses an equal token too, and still accepts a higher one
/// and refuses a lower one. Without fencing everything is accepted.
#[test]
fn the_fence_refuses_lower_tokens_and_the_broken_one_equal_ones_too() {
    use models::resource::Resource;
    let tokens = [5, 5, 7, 6, 7, 9];
    let fence = Resource::new(true);
    assert_eq!(
        write_all(&fence, &tokens),
        (
            vec![true, true, true, false, true, true],
            vec![5, 5, 7, 7, 9]
        )
    );
    let broken = Resource {
        reject_equal_tokens: true,
        ..Resource::new(true)
    };
    assert_eq!(
        write_all(&broken, &tokens),
        (vec![true, false, true, false, false, true], vec![5, 7, 9])
    );
    let open = Resource::new(false);
    assert_eq!(write_all(&open, &tokens), (vec![true; 6], tokens.to_vec()));
}

/// A policy's name parses back to it (scenario files and `--policy` use
/// them), an unknown one is refused naming the known ones; the connection
/// states print as the Java and Python libraries name them.
#[test]
fn policies_and_connection_states_have_their_library_names() {
    let policies = [
        (Policy::Naive, "naive"),
        (Policy::Oblivious, "oblivious"),
        (Policy::SuspendAware, "suspend-aware"),
        (Policy::LeaseAware, "lease-aware"),
    ];
    for (policy, name) in policies {
        assert_eq!(name.parse::<Policy>(), Ok(policy));
        assert_eq!(policy.to_string(), name);
    }
    let err = "sloppy".parse::<Policy>().unwrap_err();
    assert!(
        err.contains("'sloppy'") && err.contains("lease-aware"),
        "{err}"
    );
    let states = [
        (Connection::Connected, "RECONNECTED", "connected"),
        (Connection::Suspended, "SUSPENDED", "suspended"),
        (Connection::Lost, "LOST", "lost"),
    ];
    for (state, word, shown) in states {
        assert_eq!(state.word(), word);
        assert_eq!(state.to_string(), shown);
    }
}

/// A queue's first `producers` clients produce and the rest consume, each
/// producer its own items; in any other application nobody does either.
/// A client waits (for a watch event) when it acquires or releases with
/// nothing outstanding.
#[test]
fn producers_consumers_and_waiting() {
    let client = |recipe: &str, producers| Client {
        recipe: lookup(recipe, None).unwrap(),
        rounds: 1,
        policy: Policy::Naive,
        timing: Default::default(),
        producers,
        reentries: 0,
        writers: 0,
        observers: 0,
    };
    let roles = |client: Client| -> Vec<_> {
        (0..4)
            .map(|c| (client.produces(c), client.consumes(c)))
            .collect()
    };
    let (producer, consumer) = ((true, false), (false, true));
    assert_eq!(
        roles(client("zk-fifo-queue", 2)),
        [producer, producer, consumer, consumer]
    );
    assert_eq!(
        roles(client("zk-fifo-queue", 3)),
        [producer, producer, producer, consumer]
    );
    assert_eq!(roles(client("fair-predecessor", 2)), [(false, false); 4]);

    // Items are numbered from 1, producer by producer, round by round:
    // every item of every producer distinct.
    let three_rounds = Client {
        rounds: 3,
        ..client("zk-fifo-queue", 2)
    };
    let items: Vec<u64> = (0..2)
        .flat_map(|p| (0..3).map(move |r| (p, r)))
        .map(|(p, r)| three_rounds.item(p, r))
        .collect();
    assert_eq!(items, [1, 2, 3, 4, 5, 6]);

    let mut st = ClientState::new(SessionId::first(0));
    assert!(!st.is_waiting(), "connecting");
    for phase in [Phase::Acquiring, Phase::Releasing] {
        st.phase = phase;
        st.pending = None;
        assert!(st.is_waiting(), "{phase:?}, nothing outstanding");
        st.pending = Some(create());
        assert!(!st.is_waiting(), "{phase:?}, a request outstanding");
    }
    st.pending = None;
    for phase in [Phase::Thinking, Phase::Done] {
        st.phase = phase;
        assert!(!st.is_waiting(), "{phase:?}");
    }
}

/// A timer that fires outside the phase it was set for (one a step did
/// not cancel, as a simulator's may be) does nothing: no think while
/// acquiring, no write unless holding, no resend with nothing outstanding,
/// no heartbeat once done, no deadline while connecting or done. In its
/// phase each one acts.
#[test]
fn a_timer_out_of_its_phase_does_nothing() {
    let m = model("fair-predecessor", Policy::LeaseAware);
    let thinking = drive(&m, |st| st.phase == Phase::Thinking);
    assert!(thinking.pending.is_none());
    let asking = acquiring(&m);
    let held = holding(&m);
    let connecting = ClientState::new(SessionId::first(0));
    let done = ClientState {
        phase: Phase::Done,
        ..thinking.clone()
    };
    let idle = [
        (&asking, Timer::Think),
        (&held, Timer::Think),
        (&thinking, Timer::Hold),
        (&asking, Timer::Hold),
        (&thinking, Timer::Retry),
        (&held, Timer::Retry),
        (&done, Timer::Ping),
        (&connecting, Timer::Deadline),
        (&done, Timer::Deadline),
    ];
    for (st, timer) in idle {
        let (after, out) = timeout(&m, st, timer);
        assert_eq!(&after, st, "{timer:?} in {:?}", st.phase);
        assert_eq!(out.iter().count(), 0, "{timer:?} in {:?}", st.phase);
    }
    let acting = [
        (&thinking, Timer::Think),
        (&held, Timer::Hold),
        (&asking, Timer::Retry),
        (&thinking, Timer::Ping),
        (&asking, Timer::Deadline),
    ];
    for (st, timer) in acting {
        let (_, out) = timeout(&m, st, timer);
        assert_ne!(out.iter().count(), 0, "{timer:?} in {:?}", st.phase);
    }
    // A barrier's or a queue's hold ends in a release, not a write: out of
    // its phase it does not release, in it it does.
    for recipe in ["zk-barrier", "zk-fifo-queue"] {
        let m = model(recipe, Policy::Naive);
        let st = acquiring(&m);
        let (after, out) = timeout(&m, &st, Timer::Hold);
        assert_eq!((after, out.iter().count()), (st.clone(), 0), "{recipe}");
        let held = ClientState {
            phase: Phase::Holding {
                token: 1,
                granted: 1,
                owned: true,
                sent: 0,
                acked: 0,
            },
            pending: None,
            ..st
        };
        let (after, _) = timeout(&m, &held, Timer::Hold);
        assert_ne!(after.phase, held.phase, "{recipe}: the hold ends");
    }
}

/// A lease-aware client whose own clock says its session may be gone
/// starts over on a new session; a release under way counts as its round
/// done (what it held went with the session), an acquisition does not.
#[test]
fn a_deadline_ends_a_release_as_a_round_and_an_acquisition_as_none() {
    let m = model("fair-predecessor", Policy::LeaseAware);
    let asking = acquiring(&m);
    let releasing = drive(&m, |st| st.phase == Phase::Releasing);
    for (st, rounds) in [(&asking, 0), (&releasing, 1)] {
        assert_eq!(st.rounds_done, 0);
        let (after, _) = timeout(&m, st, Timer::Deadline);
        assert_eq!(after.rounds_done, rounds, "{:?}", st.phase);
        assert_eq!(after.session, st.session.next(), "{:?}", st.phase);
    }
}
