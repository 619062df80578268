//! unfair-getdata: a lock recipe written outside lockstep, against its
//! public API only, plus the few helpers the example binary and its tests
//! share to run it in lockstep's simulator.
//!
//! # The recipe
//!
//! It reads like the ephemeral-node leader elections of ZooKeeper-era
//! systems (Kafka's controller election on `/controller` is the best-known
//! one): everyone races to create one ephemeral node; a loser reads the node
//! and keeps a watch on it; and a loser that finds the node is its *own* — a
//! create that succeeded but whose reply was lost, then retried — takes it
//! (Kafka's ZooKeeper utilities handled this case by comparing the node's
//! stored data with their own). Here the read is the raw API's
//! `getData(path, watch)` and the owner test is the stat's `ephemeralOwner`:
//!
//! 1. `create(/lock, ephemeral)`. Success: hold; the token is its czxid.
//! 2. NodeExists: `getData(/lock, watch)`.
//!    - The node is ours (its `ephemeralOwner` is our session): hold; the
//!      token is the stat's czxid.
//!    - It is someone else's: wait for its `NodeDeleted`, then go to 1.
//!    - NoNode (released between our create and our read; `getData`, unlike
//!      `exists`, leaves no watch behind on a missing node): go to 1 at once.
//! 3. Release: `delete(/lock)`.
//!
//! Two things set it apart from lockstep's shipped `unfair-create`, which
//! watches with `exists`: the owner check lets it recover from a lost create
//! reply (unfair-create waits forever on its own node: a progress
//! violation), and a read of a missing node sets no stray watch. What it
//! shares: every waiter watches the one node, so the `k`-th of `n` releases
//! wakes the `n - k` clients still waiting — the herd.

pub mod backoff;

use models::ids::{Data, SessionId, ZPath};
use models::name;

/// The lock node: the recipe races to create it.
const LOCK: ZPath = ZPath::fixed(name!("/lock"));
use models::msg::{Reply, Request, WatchEvent, ZkError, ZkEvent};
use models::recipe::{Face, Recipe, RecipeRef, Setup, Step};
use models::relabel::{Perm, Relabel};
use sim::scenario::{Scenario, ScenarioError};

/// The recipe. Stateless: everything an acquisition needs is in [`State`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct UnfairGetData;

/// One acquisition and the hold that follows.
///
/// The model checker hashes and compares this, so it holds what the next
/// steps depend on and nothing else: the token lives in the client once
/// [`Step::Acquired`] hands it over, and the owner check compares with the
/// session the client passes to every call, so no client name is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `create(/lock, ephemeral)` in flight.
    Creating,
    /// `getData(/lock, watch)` in flight.
    Reading,
    /// `/lock` is another session's: waiting for its deletion.
    Waiting,
    Holding,
}

/// Symmetry reduction relabels every client name in a state. This state
/// names no client, so there is nothing to rewrite; the match lists every
/// variant (no `_`) so that a variant added later carrying a [`SessionId`],
/// a [`models::ids::Child`] or a [`models::ids::Key`] fails to compile here
/// until it is relabelled (`session.relabel(p)`).
impl Relabel for State {
    fn relabel(&mut self, _: &Perm) {
        match self {
            State::Creating | State::Reading | State::Waiting | State::Holding => {}
        }
    }
}

/// The recipe's name, as the example prints it. It is not in lockstep's
/// registry, so neither the CLI nor a scenario file can name it.
pub const NAME: &str = "unfair-getdata";

fn create() -> Request {
    Request::Create {
        path: LOCK,
        ephemeral: true,
        sequential: false,
        data: Data::Empty,
    }
}

fn read_and_watch() -> Request {
    Request::GetData {
        path: LOCK,
        watch: true,
    }
}

impl Recipe for UnfairGetData {
    type State = State;

    fn name(&self) -> &'static str {
        NAME
    }

    fn face(&self) -> Face {
        Face::ZooKeeper
    }

    /// Nothing to prepare: `/lock` itself is the lock node.
    fn setup(&self) -> Setup {
        Setup::bare()
    }

    fn acquire(&self, _: SessionId) -> (State, Request) {
        (State::Creating, create())
    }

    fn on_reply(&self, session: SessionId, st: &mut State, reply: &Reply) -> Step {
        match (*st, reply) {
            (State::Creating, Reply::Created { czxid, .. }) => {
                *st = State::Holding;
                Step::Acquired { token: *czxid }
            }
            (State::Creating, Reply::Error(ZkError::NodeExists)) => {
                *st = State::Reading;
                Step::Send(read_and_watch())
            }
            // Our own node: an earlier create of this session succeeded and
            // its reply was lost. Comparing with `session` (which symmetry
            // relabels along with the stat) keeps clients interchangeable.
            (State::Reading, Reply::Stat(Some(stat))) if stat.ephemeral_owner == Some(session) => {
                *st = State::Holding;
                Step::Acquired { token: stat.czxid }
            }
            (State::Reading, Reply::Stat(Some(_))) => {
                *st = State::Waiting;
                Step::Wait
            }
            // Released between our create and our read: try again at once.
            (State::Reading, Reply::Error(ZkError::NoNode)) => {
                *st = State::Creating;
                Step::Send(create())
            }
            _ => Step::Unexpected,
        }
    }

    fn on_event(&self, st: &mut State, event: &WatchEvent) -> Step {
        match (*st, event) {
            (
                State::Waiting,
                WatchEvent::Zk {
                    kind: ZkEvent::NodeDeleted,
                    path,
                },
            ) if *path == LOCK => {
                *st = State::Creating;
                Step::Send(create())
            }
            // Our own data watch (set when we found our own node) fires when
            // we delete it; nothing else concerns an acquisition.
            _ => Step::Wait,
        }
    }

    fn release(&self, _: SessionId, st: &State) -> Option<Request> {
        match st {
            State::Holding => Some(Request::Delete {
                path: LOCK,
                version: None,
            }),
            State::Creating | State::Reading | State::Waiting => None,
        }
    }

    /// Every waiter watches `/lock`: the `k`-th of `n` releases wakes the
    /// `n - k` clients still waiting.
    fn herd_closed_form(&self, n: u32, k: u32) -> Option<u32> {
        Some(n - k)
    }
}

/// The recipe, as lockstep's engines hold it.
pub fn recipe() -> RecipeRef {
    RecipeRef::new(UnfairGetData)
}

/// The shipped recipe this one is compared with (it differs only in how a
/// waiter watches, and in what it does when its create's reply was lost).
pub const SHIPPED_TWIN: &str = "unfair-create";

/// A scenario for our recipe from scenario-file text without `recipe`
/// (the rest of the format is `lockstep`'s: see `sim::scenario`).
pub fn scenario(body: &str, name: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse_with_recipe(body, &format!("{name} (built in)"), name, recipe())
}

/// Healthy timing, no faults: lockstep's `scenarios/healthy.toml`.
pub const HEALTHY: &str = "\
clients = 5
rounds = 3
[timing]
session_timeout_ms = 4000
think_ms = [5, 50]
hold_ms = [10, 40]
latency_ms = [0.2, 2.0]
";

/// Clients crash and restart with new sessions, fencing on: lockstep's
/// `scenarios/crash-storm.toml` at 3 rounds instead of 8.
pub const CRASH_STORM: &str = "\
clients = 5
rounds = 3
fencing = true
[timing]
session_timeout_ms = 1500
think_ms = [10, 100]
hold_ms = [100, 400]
latency_ms = [0.2, 2.0]
[faults]
until_ms = 5000
crash = { rate_per_s = 1.0, duration_ms = [200, 1500] }
";

/// The herd sweep's baseline scenario (`sim::herd::baseline`) for our
/// recipe with `clients` clients: everyone requests at once, one round, no
/// faults, one fixed latency.
pub fn herd_baseline(clients: u16, seed: u64) -> Scenario {
    sim::herd::baseline(&recipe(), clients, seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::msg::Stat;

    fn session(client: u16, incarnation: u16) -> SessionId {
        SessionId {
            client,
            incarnation,
            grant: 0,
        }
    }

    fn stat(owner: SessionId) -> Reply {
        Reply::Stat(Some(Stat {
            czxid: 7,
            mzxid: 7,
            version: 0,
            cversion: 0,
            ephemeral_owner: Some(owner),
            data: Data::Empty,
        }))
    }

    fn after_node_exists(me: SessionId) -> State {
        let (mut st, _) = UnfairGetData.acquire(me);
        let step = UnfairGetData.on_reply(me, &mut st, &Reply::Error(ZkError::NodeExists));
        assert_eq!(step, Step::Send(read_and_watch()));
        st
    }

    #[test]
    fn our_own_node_is_held_with_its_czxid() {
        let me = session(1, 0);
        let mut st = after_node_exists(me);
        assert_eq!(
            UnfairGetData.on_reply(me, &mut st, &stat(me)),
            Step::Acquired { token: 7 }
        );
        assert_eq!(
            UnfairGetData.release(me, &st),
            Some(Request::Delete {
                path: LOCK,
                version: None
            })
        );
    }

    #[test]
    fn a_node_of_our_previous_session_is_waited_for() {
        // A restarted process has a new session; its old node must expire.
        let me = session(1, 1);
        let mut st = after_node_exists(me);
        assert_eq!(
            UnfairGetData.on_reply(me, &mut st, &stat(session(1, 0))),
            Step::Wait
        );
        assert_eq!(st, State::Waiting);
        assert_eq!(UnfairGetData.release(me, &st), None);
        let deleted = WatchEvent::Zk {
            kind: ZkEvent::NodeDeleted,
            path: LOCK,
        };
        assert_eq!(
            UnfairGetData.on_event(&mut st, &deleted),
            Step::Send(create())
        );
    }

    #[test]
    fn a_missing_node_is_created_again_at_once() {
        let me = session(0, 0);
        let mut st = after_node_exists(me);
        assert_eq!(
            UnfairGetData.on_reply(me, &mut st, &Reply::Error(ZkError::NoNode)),
            Step::Send(create())
        );
        assert_eq!(st, State::Creating);
    }

    #[test]
    fn scenarios_carry_our_recipe() {
        let s = scenario(HEALTHY, "healthy").unwrap();
        assert_eq!(s.recipe, recipe());
        // Not registered: a reproducer written from it names no recipe, so
        // the CLI refuses to replay it rather than run another recipe.
        assert_eq!(s.source.recipe, "");
        assert_eq!(herd_baseline(4, 1).recipe.name(), NAME);
    }
}
