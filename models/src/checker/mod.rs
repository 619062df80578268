//! lockstep's explorer over stateright's `Model` trait.
//!
//! stateright 0.31's own checkers fall short for lockstep in three ways: BFS
//! ignores `.symmetry()`, BFS counterexamples are not always the shortest, and
//! `eventually` is unsound on cyclic graphs, so progress cannot be checked
//! with it. This explorer is a plain breadth-first search that keeps the
//! state graph's edges:
//! - every state is first reached by a shortest path, so the first violation
//!   found is a shortest counterexample;
//! - states are deduplicated after symmetry reduction when asked;
//! - `progress` is decided on the explored graph: every state must reach a
//!   state where all live clients finished (backward reachability from those),
//!   and no live client may send requests forever on a fair cycle
//!   ([`livelock`]);
//! - every counterexample is replayed from the initial state through
//!   `Model::next_state` in the clients' real names, and re-checked, before
//!   it is returned.

use crate::fixed_hash::Identity;
use crate::ids::ClientIdx;
use crate::model::commute::{independent, local_to, Footprint};
use crate::model::{Action, Goal, ModelState, RecipeModel};
use crate::properties::PropertyName;
use crate::renamings::Renamings;
use crate::symmetry::{
    fingerprint, inverse, representative, representative_and_fingerprint, PermBuf, Relabel,
};
use edges::{EdgesOverflow, SuccessorLists};
use intern::{Interner, Interning, Settled};
use seen::{Chunked, Indexed, Seen};
use smallvec::SmallVec;
use stateright::Model;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::BuildHasherDefault;
use std::time::Instant;

mod cycles;
mod edges;
mod intern;
mod livelock;
pub mod memory;
mod seen;
mod sleep;

use sleep::Sleep;

#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    /// Explore one state per orbit of client relabelling.
    pub symmetry: bool,
    /// Stop (and report the check incomplete) beyond this many unique states.
    pub max_states: usize,
    /// Stop taking new states (and report the check incomplete) once the
    /// process's resident memory passes this many bytes: checked after
    /// each chunk a level is merged in, the states known then are the
    /// last (the frontier is still expanded, as at `max_states`). `None`:
    /// no memory limit. Where the limit strikes depends on the allocator
    /// and the threads, so an incomplete count varies from run to run.
    pub max_resident: Option<u64>,
    /// Worker threads; `None` uses every core. The result does not depend on it.
    pub threads: Option<usize>,
    /// The properties asked about (bit `i`: `PropertyName::ALL[i]`); 0 asks
    /// about every property of the application. With only `always` and
    /// `sometimes` properties asked, the search stops as soon as each is
    /// decided: an `always` at its first (shortest) violation, a
    /// `sometimes` at its first witness. Progress needs the whole graph.
    pub ask: u32,
    /// States of a level expanded (in parallel) before their successors
    /// are merged. The result does not depend on it (tests vary it).
    pub level_chunk: usize,
    /// Told after each level (a long check's progress line).
    pub on_level: Option<fn(&Level)>,
    /// Partial-order reduction: where a client's local steps commute with
    /// everything else, explore only those ([`crate::model::commute`]).
    /// Keeps every verdict (with progress asked, a client's steps are taken
    /// alone only where none can make an asked goal false); counterexamples
    /// may be longer than the shortest.
    pub partial_order: bool,
    /// Sleep sets ([`sleep`]): of two steps that commute, the second is not
    /// taken again after the first. The same states, verdicts and
    /// counterexamples from fewer transitions; used where no edges
    /// are kept (progress not asked) and without the partial-order
    /// reduction.
    pub sleep_sets: bool,
}

/// Where the search is, after a level.
#[derive(Clone, Copy, Debug)]
pub struct Level {
    pub depth: u32,
    pub unique_states: u64,
    /// States of the next level, to be expanded.
    pub frontier: u64,
    pub seconds: f64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            symmetry: true,
            max_states: 50_000_000,
            max_resident: None,
            threads: None,
            ask: 0,
            level_chunk: LEVEL_CHUNK,
            on_level: None,
            partial_order: false,
            sleep_sets: true,
        }
    }
}

impl CheckOptions {
    /// These options asking about `properties` only (all when empty).
    pub fn asking(self, properties: &[PropertyName]) -> Self {
        let ask = properties.iter().fold(0, |bits, p| {
            let i = PropertyName::ALL
                .iter()
                .position(|q| q == p)
                .expect("every property is in ALL");
            bits | 1 << i
        });
        CheckOptions { ask, ..self }
    }

    fn asks(&self, name: PropertyName) -> bool {
        self.ask == 0
            || PropertyName::ALL
                .iter()
                .enumerate()
                .any(|(i, &p)| self.ask & (1 << i) != 0 && p == name)
    }
}

/// Why a check could not give a verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// Symmetry reduction assumes clients are interchangeable; this recipe
    /// (or store, or client) behaves differently when clients swap names.
    IdentityDependent {
        /// What the checker saw, in words.
        found: String,
    },
    /// A path the search recorded does not replay: two different states
    /// shared a 64-bit fingerprint (a chance of about n²/2⁶⁴ in n states).
    Collision {
        /// Where the replay failed.
        found: String,
    },
    /// A state the partial-order reduction's graph showed stuck is not
    /// stuck in the full model: a step the reduction took alone did not
    /// commute, or it made a goal false.
    Reduction {
        /// Which property, in words.
        found: String,
    },
    /// The worker threads asked for could not be started.
    Threads {
        /// How many were asked for.
        asked: usize,
        /// Why the system refused.
        reason: String,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            CheckError::IdentityDependent { found } => write!(
                f,
                "the model's behaviour depends on which client is which, so symmetry \
                 reduction would give wrong answers: {found}. Check it without symmetry \
                 reduction (or make the recipe treat clients alike: relabel every client name \
                 in its state)"
            ),
            CheckError::Collision { found } => write!(
                f,
                "two different states shared a fingerprint ({found} does not replay), \
                 so the search may have missed states and no verdict is given; \
                 check a smaller configuration, or without symmetry reduction"
            ),
            CheckError::Reduction { found } => write!(
                f,
                "the partial-order reduction gave a wrong answer: {found}, so no verdict is \
                 given; check without the partial-order reduction (and report this to lockstep)"
            ),
            CheckError::Threads { asked, reason } => write!(
                f,
                "could not start {asked} checker threads ({reason}); ask for fewer"
            ),
        }
    }
}

impl std::error::Error for CheckError {}

/// States of a level expanded (in parallel) before their successors are
/// merged, by default.
pub const LEVEL_CHUNK: usize = 1 << 13;

/// Every state up to this many is audited for symmetry; beyond, one in
/// [`AUDIT_EVERY`], chosen by fingerprint (deterministic, any thread count).
const AUDIT_ALL_UP_TO: usize = 2_000;
const AUDIT_EVERY: u64 = 1024;

pub use crate::properties::Kind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Holds,
    Violated,
    /// The exploration stopped at its state limit before deciding.
    Unknown,
}

#[derive(Clone, Debug)]
pub struct PropertyResult {
    pub name: PropertyName,
    pub kind: Kind,
    pub status: Status,
    /// A shortest path, in real client names: to a violating state (always),
    /// to a witness (sometimes), to a state from which no completion is
    /// reachable (progress).
    pub path: Option<Vec<Action>>,
    /// A progress goal's livelock: `path[repeats_from..]`, a lap round a
    /// cycle on which a client sends requests, can be taken forever (the
    /// path is a lasso, not a shortest path).
    pub repeats_from: Option<usize>,
    /// Seconds into the check when the verdict was known: the level of the
    /// first violation or witness, else the end of the search.
    pub decided_after: f64,
}

#[derive(Clone, Debug)]
pub struct CheckResult {
    /// Transitions explored (states generated, duplicates included).
    pub states: u64,
    pub unique_states: u64,
    pub max_depth: u32,
    pub seconds: f64,
    pub complete: bool,
    pub symmetry: bool,
    /// The partial-order reduction was on: `states`/`unique_states` count
    /// the reduced graph.
    pub partial_order: bool,
    /// Sleep sets were used: `states` counts fewer transitions, the same
    /// unique states.
    pub sleep_sets: bool,
    /// The search stopped before exploring everything because every
    /// property asked about was decided (see [`CheckOptions::ask`]).
    pub decided_early: bool,
    pub properties: Vec<PropertyResult>,
    /// The most states one BFS level held in full.
    pub peak_frontier: u64,
    /// Bytes of the fingerprint table and the graph at the end (the full
    /// states of the frontier come on top).
    pub index_bytes: u64,
    /// The memory limit stopped the search: the resident bytes read then.
    pub stopped_at_memory: Option<u64>,
}

impl CheckResult {
    /// The verdict on `name`; `None` when the check did not judge it (a
    /// property of another application, or one not asked about).
    pub fn property(&self, name: PropertyName) -> Option<&PropertyResult> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// The shortest path found for `name` (a counterexample, or a
    /// `sometimes` witness); `None` when it was not judged or has none.
    pub fn path(&self, name: PropertyName) -> Option<&[Action]> {
        self.property(name)?.path.as_deref()
    }

    pub fn all_hold(&self) -> bool {
        self.properties.iter().all(|p| p.status == Status::Holds)
    }
}

/// The explored graph, compactly: for every state its BFS parent and
/// which of the parent's enabled actions led to it (the path's actions are
/// recomputed by replaying it), and — only when progress is asked, which
/// needs the whole graph — its successors and the goals it reaches.
struct Graph {
    parent: Chunked<u32>,
    /// The position of the action in the parent's `Model::actions`.
    via: Chunked<u16>,
    /// Successor lists (progress only).
    succ: SuccessorLists,
    /// For each state, bit `g`: progress goal `g` holds there (progress only).
    reached: Chunked<u8>,
}

impl Graph {
    fn new() -> Self {
        Graph {
            parent: Chunked::new(),
            via: Chunked::new(),
            succ: SuccessorLists::new(),
            reached: Chunked::new(),
        }
    }

    /// The shortest path to state `i`, in the clients' real names.
    /// `Err` if a recorded step cannot be taken again: two states shared a
    /// fingerprint.
    fn path_to(
        &self,
        model: &RecipeModel,
        symmetry: bool,
        i: u32,
    ) -> Result<Vec<Action>, CheckError> {
        Ok(walk(model, symmetry, &self.steps_to(i), &format!("state {i}"))?.path)
    }

    /// The positions of the actions of the shortest path to state `i`,
    /// each among its state's `Model::actions`.
    fn steps_to(&self, i: u32) -> Vec<u16> {
        let mut chain = Vec::new();
        let mut j = i;
        while j != 0 {
            chain.push(self.via.get(j as usize));
            j = self.parent.get(j as usize);
        }
        chain.reverse();
        chain
    }

    /// Bytes held.
    fn bytes(&self) -> usize {
        self.parent.bytes() + self.via.bytes() + self.succ.bytes() + self.reached.bytes()
    }

    /// For each progress goal, the first state (in search order) from
    /// which no state where the goal holds is reachable. The successor
    /// lists are freed after.
    fn first_stuck(&mut self, goals: usize) -> Vec<Option<u32>> {
        let succ = std::mem::replace(&mut self.succ, SuccessorLists::new());
        let mut preds = None;
        (0..goals)
            .map(|g| {
                let mut ok: Vec<bool> = self.reached.iter().map(|r| r & (1 << g) != 0).collect();
                succ.mark_reaching(&mut ok, &mut preds);
                ok.iter().position(|ok| !ok).map(|i| i as u32)
            })
            .collect()
    }
}

/// Checks that the model treats clients alike at `state`: swapping two
/// clients' names and then stepping gives the same states as stepping and
/// then swapping. `None` if so; otherwise what differs.
fn audit_symmetry(
    model: &RecipeModel,
    state: &ModelState,
    actions: &[Action],
    fp: u64,
) -> Option<String> {
    let n = state.clients.len();
    if n < 2 {
        return None;
    }
    let i = (fp % n as u64) as usize;
    let j = (i + 1 + ((fp / n as u64) % (n as u64 - 1)) as usize) % n;
    let mut swap: Vec<ClientIdx> = (0..n as ClientIdx).collect();
    swap.swap(i, j);
    let mut swapped = state.clone();
    swapped.relabel(&swap);
    let mut swapped_actions = Vec::new();
    model.actions(&swapped, &mut swapped_actions);
    if swapped_actions.len() != actions.len() {
        return Some(format!(
            "with clients {i} and {j} swapped, {} steps are enabled instead of {}",
            swapped_actions.len(),
            actions.len()
        ));
    }
    for &a in actions {
        let mut sa = a;
        sa.relabel(&swap);
        if !swapped_actions.contains(&sa) {
            return Some(format!(
                "with clients {i} and {j} swapped, step {sa:?} (the image of {a:?}) is not enabled"
            ));
        }
        let mut expected = model.next_state(state, a);
        if let Some(e) = expected.as_mut() {
            e.relabel(&swap);
        }
        if model.next_state(&swapped, sa) != expected {
            let what = crate::model::describe::describe(state, a).3;
            return Some(format!(
                "step {a:?} ({what}) leads elsewhere once clients {i} and {j} swap names"
            ));
        }
    }
    None
}

/// What expanding one state found.
struct Expanded {
    /// The symmetry audit's finding, if this state was audited and failed.
    asymmetry: Option<String>,
    /// Bit k: property k's condition "hit" (violated for always, seen for sometimes).
    hits: u64,
    /// Bit g: progress goal g holds here.
    reached: u8,
    /// Successors: the position of the action among the enabled ones,
    /// the successor's fingerprint, and the state itself if this expansion
    /// was the first to claim the fingerprint (the others drop theirs on
    /// their own thread), and the steps asleep there after this arrival.
    successors: Vec<(u16, u64, Option<ModelState>, Sleep)>,
}

/// A state of the frontier, waiting to be expanded.
struct Queued {
    state: ModelState,
    fp: u64,
    /// The steps not to take from it ([`sleep`]).
    asleep: Sleep,
}

/// A place in the next level: the state once its claimer hands it over,
/// and the steps asleep there (those its first arrival brought).
struct Pending {
    state: Option<(ModelState, u64)>,
    asleep: Sleep,
}

/// What every expansion judges a state by.
struct Judges<'a> {
    model: &'a RecipeModel,
    /// The `always` and `sometimes` properties asked, read off the monitors.
    props: &'a [PropertyName],
    goals: &'a [Goal],
    symmetry: bool,
    partial_order: bool,
    /// Sleep sets are used ([`CheckOptions::sleep_sets`], where they apply).
    sleep: bool,
}

/// A successor as the search keeps it: its fingerprint and the state (the
/// representative of its orbit, under symmetry).
type Successor = (u64, ModelState);

thread_local! {
    /// Each worker's renamings of parts, kept for the successors it renames
    /// later. The pool's threads live for one check, and their renamings
    /// with them.
    static RENAMINGS: std::cell::RefCell<Renamings> = std::cell::RefCell::default();
}

/// Passes `found` the successors of `state` the search explores, by the
/// position of their action among `actions`, in that order: all of them,
/// or under the partial-order reduction an ample set's. `earlier` is how
/// many states the levels before this one's successors hold: a successor
/// among them is not new (condition C3 of [`crate::model::commute`]).
/// With sleep sets, the steps `asleep` are not taken, and each successor
/// comes with the steps asleep there. The renamings symmetry does are
/// kept, each hash-consed by `interning` first.
#[allow(clippy::too_many_arguments)]
fn explore_successors(
    judges: &Judges,
    claimed: &Seen,
    earlier: usize,
    interning: Interning,
    state: &ModelState,
    actions: &[Action],
    asleep: &Sleep,
    mut found: impl FnMut(usize, Successor, Sleep),
) {
    let model = judges.model;
    // The successor's fingerprint and representative, and (under
    // symmetry) the renaming that made it the representative.
    let renamed = |next: ModelState| -> (Successor, Option<PermBuf>) {
        if judges.symmetry {
            let (rep, perm, fp) = RENAMINGS.with_borrow_mut(|kept| {
                representative_and_fingerprint(next, &mut Settled { kept, interning })
            });
            ((fp.unwrap_or_else(|| fingerprint(&rep)), rep), Some(perm))
        } else {
            ((fingerprint(&next), next), None)
        }
    };
    let named = |next: ModelState| renamed(next).0;
    // Successors already computed (for ample sets tried), by position.
    let mut computed: Vec<Option<Option<Successor>>> = Vec::new();
    let candidates = match judges.partial_order {
        true => model.ample_candidates(state, actions),
        false => Vec::new(),
    };
    // Progress asks more of an ample set (condition C4 of
    // [`crate::model::commute`]): no step in it can make an asked goal false.
    if !candidates.is_empty() {
        computed = actions.iter().map(|_| None).collect();
        let ample = candidates.into_iter().find_map(|c| {
            let steps: Vec<usize> = (0..actions.len())
                .filter(|&i| local_to(&actions[i]) == Some(c))
                .collect();
            let mut local = true;
            for &i in &steps {
                let next = model.next_state(state, actions[i]);
                local &= next
                    .as_ref()
                    .is_none_or(|n| model.may_take_alone(state, c, n, judges.goals));
                computed[i] = Some(next.map(&named));
            }
            let all_new = steps.iter().all(|&i| match &computed[i] {
                Some(Some((fp, _))) => !claimed.indexed_below(*fp, earlier),
                Some(None) | None => true,
            });
            (local && all_new).then_some(steps)
        });
        if let Some(steps) = ample {
            for i in steps {
                if let Some(next) = computed[i].take().flatten() {
                    found(i, next, Sleep::default());
                }
            }
            return;
        }
    }
    // Every step not asleep (none is without sleep sets), each successor
    // with the steps asleep there: those taken before it or asleep here
    // that commute with it.
    let mut taken: SmallVec<[(Action, Footprint); 16]> = SmallVec::new();
    for (i, &a) in actions.iter().enumerate() {
        if asleep.contains(&a) {
            continue;
        }
        if let Some(done) = computed.get_mut(i).and_then(Option::take) {
            // Computed for an ample set tried (the partial-order reduction
            // goes without sleep sets).
            if let Some(next) = done {
                found(i, next, Sleep::default());
            }
            continue;
        }
        let Some(next) = model.next_state(state, a) else {
            continue;
        };
        let mut sleep = Sleep::default();
        if judges.sleep {
            let at = Footprint::of(state, &a, &next);
            for &(b, b_at) in asleep.steps().iter().chain(&taken) {
                if independent(&b, b_at, &a, at) {
                    sleep.push(b, b_at);
                }
            }
            taken.push((a, at));
        }
        let (successor, perm) = renamed(next);
        if let Some(perm) = perm.filter(|_| !sleep.is_empty()) {
            sleep.relabel(&perm);
        }
        found(i, successor, sleep);
    }
}

fn expand(
    judges: &Judges,
    audit_all: bool,
    claimed: &Seen,
    earlier: usize,
    interner: Interning,
    queued: &Queued,
) -> Expanded {
    let Queued { state, fp, asleep } = queued;
    let fp = *fp;
    let Judges {
        model,
        props,
        goals,
        symmetry,
        ..
    } = *judges;
    let mut hits = 0u64;
    for (k, &p) in props.iter().enumerate() {
        let holds = state.monitors.holds(p);
        let hit = match p.kind() {
            Kind::Always => !holds,
            Kind::Sometimes => holds,
            // Decided on the graph; never among `props`.
            Kind::Progress => false,
        };
        if hit {
            hits |= 1 << k;
        }
    }
    // Room for what a state usually enables (one allocation, not the
    // three or four of growing from empty).
    let mut actions = Vec::with_capacity(8 * state.clients.len());
    model.actions(state, &mut actions);
    let asymmetry = if symmetry {
        (audit_all || fp.is_multiple_of(AUDIT_EVERY))
            .then(|| audit_symmetry(model, state, &actions, fp))
            .flatten()
    } else {
        None
    };
    assert!(
        actions.len() <= usize::from(u16::MAX),
        "a state enables at most 65,535 actions"
    );
    let mut successors = Vec::with_capacity(actions.len());
    // Each successor's slot is fetched while the next are computed, and
    // claimed after: the claims then seldom wait for memory.
    explore_successors(
        judges,
        claimed,
        earlier,
        interner,
        state,
        &actions,
        asleep,
        |via, (fp, next), sleep| {
            claimed.prefetch(fp);
            successors.push((via as u16, fp, Some(next), sleep));
        },
    );
    for (_, fp, next, _) in &mut successors {
        if claimed.claim(*fp) {
            if let Some(next) = next {
                interner.intern(next, state);
            }
        } else {
            *next = None;
        }
    }
    Expanded {
        asymmetry,
        hits,
        reached: goals
            .iter()
            .enumerate()
            .filter(|(_, goal)| goal.holds(model, state))
            .fold(0, |bits, (g, _)| bits | 1 << g),
        successors,
    }
}

/// Expands a BFS level on the pool's threads; results come back in
/// frontier order, so the search is the same whatever the thread count.
///
/// The pool lives for the whole check: workers that outlive a level keep
/// their allocator's free pages, which the next level reuses, where threads
/// started per level would hand their heaps back and fault in fresh ones.
fn expand_level(
    judges: &Judges,
    audit_all: bool,
    pool: &rayon::ThreadPool,
    claimed: &Seen,
    earlier: usize,
    interner: Interning,
    frontier: Vec<Queued>,
) -> Vec<Expanded> {
    use rayon::prelude::*;
    let expand = |q: &Queued| expand(judges, audit_all, claimed, earlier, interner, q);
    if pool.current_num_threads() <= 1 || frontier.len() < 64 {
        return expand_in_order(frontier, expand).collect();
    }
    // Runs of states, each expanded in order by one worker, which also
    // frees the states it expanded.
    let mut states = frontier.into_iter();
    let runs: Vec<Vec<Queued>> = std::iter::from_fn(|| {
        let run: Vec<Queued> = states.by_ref().take(RUN).collect();
        (!run.is_empty()).then_some(run)
    })
    .collect();
    pool.install(|| {
        runs.into_par_iter()
            .flat_map_iter(|run| expand_in_order(run, expand))
            .collect()
    })
}

/// States a worker expands in a row (with the parts of the next ones asked
/// for ahead).
const RUN: usize = 32;

/// Expands `states` in order, each freed once expanded. A frontier's
/// states' parts are far apart in memory and a step reads every part of its
/// state: the next state's parts are asked for while this one is expanded.
fn expand_in_order(
    states: Vec<Queued>,
    expand: impl Fn(&Queued) -> Expanded,
) -> impl Iterator<Item = Expanded> {
    let mut rest = states.into_iter();
    std::iter::from_fn(move || {
        let q = rest.next()?;
        if let Some(next) = rest.as_slice().first() {
            next.state.prefetch_parts();
        }
        Some(expand(&q))
    })
}

/// The sequential half of the search: numbers a chunk's new states in
/// frontier order, records their parents (and edges, for progress), notes
/// each property's first hit, and places the claimed states in the next
/// frontier.
struct Merge<'a> {
    seen: &'a Seen,
    graph: Graph,
    keep_edges: bool,
    max_states: usize,
    started: Instant,
    first_hit: Vec<Option<u32>>,
    hit_after: Vec<f64>,
    generated: u64,
    complete: bool,
    /// The index of the next state to merge (states are merged in order).
    index: u32,
    chunk_size: usize,
    /// The first index of the level being built.
    level_start: usize,
    /// The next level's states by index; each is filled in by the
    /// expansion that claimed it, which may come later in the level.
    next_frontier: Vec<Vec<Pending>>,
    /// The next level's states by fingerprint (as the table keeps it: two
    /// fingerprints it takes for one are one here too), so that the
    /// expansion that claimed one (which may come later) finds its place.
    /// Only where the table keeps no indices: where it does, the index
    /// says the place.
    new_here: HashMap<u64, u32, BuildHasherDefault<Identity>>,
    successors_of_one: Vec<u32>,
}

impl Merge<'_> {
    fn start_level(&mut self) {
        self.level_start = self.seen.len();
        self.new_here.clear();
    }

    fn take(&mut self, expanded: Vec<Expanded>) -> Result<(), EdgesOverflow> {
        // The slots of the next state's successors are fetched while this
        // one's are indexed.
        let mut expanded = expanded.into_iter().peekable();
        while let Some(e) = expanded.next() {
            if let Some(next) = expanded.peek() {
                next.successors.iter().for_each(|s| self.seen.prefetch(s.1));
            }
            for (k, hit) in self.first_hit.iter_mut().enumerate() {
                if hit.is_none() && e.hits & (1 << k) != 0 {
                    *hit = Some(self.index);
                    self.hit_after[k] = self.started.elapsed().as_secs_f64();
                }
            }
            self.successors_of_one.clear();
            for (via, fp, next, sleep) in e.successors {
                self.generated += 1;
                let j = match self.seen.index(fp, self.max_states) {
                    Indexed::Known(j) => j,
                    Indexed::New(j) => {
                        self.graph.parent.push(self.index);
                        self.graph.via.push(via);
                        // Its first arrival, the one whose steps asleep it
                        // keeps (`sleep.rs`).
                        let pending = Pending {
                            state: None,
                            asleep: sleep,
                        };
                        match self.next_frontier.last_mut() {
                            Some(c) if c.len() < self.chunk_size => c.push(pending),
                            _ => {
                                let mut c = Vec::with_capacity(self.chunk_size);
                                c.push(pending);
                                self.next_frontier.push(c);
                            }
                        }
                        // Its place, for the expansion that claimed it
                        // (when not this one, whose state is placed below).
                        if !self.seen.keeps_indices() && next.is_none() {
                            self.new_here.insert(Seen::key(fp), j);
                        }
                        Some(j)
                    }
                    Indexed::OverLimit => {
                        self.complete = false;
                        continue;
                    }
                };
                if let Some(state) = next {
                    // The claim is made in the level that first reaches
                    // a state, so its state is new here.
                    let k = match j {
                        Some(j) => j,
                        None => self.new_here[&Seen::key(fp)],
                    } as usize
                        - self.level_start;
                    self.next_frontier[k / self.chunk_size][k % self.chunk_size].state =
                        Some((state, fp));
                }
                if let Some(j) = j.filter(|_| self.keep_edges) {
                    self.successors_of_one.push(j);
                }
            }
            if self.keep_edges {
                self.graph.reached.push(e.reached);
                if let Err(overflow) = self.graph.succ.push(&mut self.successors_of_one) {
                    self.complete = false;
                    return Err(overflow);
                }
            }
            self.index += 1;
        }
        Ok(())
    }
}

/// Whether a check uses sleep sets: asked, and neither progress (whose
/// graph needs every edge) nor the partial-order reduction is.
fn use_sleep_sets(opts: &CheckOptions, goals: &[Goal]) -> bool {
    opts.sleep_sets && goals.is_empty() && !opts.partial_order
}

/// Model-checks every property of `model`, and progress.
///
/// With symmetry reduction on, the checker audits that the model treats
/// clients alike (every state at first, then a deterministic sample) and
/// returns [`CheckError::IdentityDependent`] rather than a verdict it
/// cannot stand behind.
pub fn check(model: &RecipeModel, opts: CheckOptions) -> Result<CheckResult, CheckError> {
    let started = Instant::now();
    // A queue's producers and consumers are not interchangeable. A timed
    // check explores without reductions: a tick touches every client
    // (nothing commutes with it), and a state's countdowns are not renamed
    // with the store's timers.
    let timed = model.cfg.time.ticks().is_some();
    let opts = CheckOptions {
        symmetry: opts.symmetry && model.cfg.clients_interchangeable() && !timed,
        partial_order: opts.partial_order && !timed,
        sleep_sets: opts.sleep_sets && !timed,
        ..opts
    };
    let mut props = model.state_properties();
    props.retain(|&p| opts.asks(p));
    assert!(props.len() <= 64, "property hits are kept in a u64");
    let mut goals = model.progress_goals();
    goals.retain(|g| opts.asks(g.name));
    assert!(goals.len() <= 8, "goals reached are kept in a u8");
    let judges = Judges {
        model,
        props: &props,
        goals: &goals,
        symmetry: opts.symmetry,
        partial_order: opts.partial_order,
        sleep: use_sleep_sets(&opts, &goals),
    };
    let threads = opts
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|k| format!("check-{k}"))
        .build()
        .map_err(|e| CheckError::Threads {
            asked: threads,
            reason: e.to_string(),
        })?;

    // Successor lists are kept only for progress, which needs the graph;
    // they name states by index, which the fingerprint table then keeps.
    let keep_edges = !goals.is_empty();
    // The partial-order reduction asks whether a successor was indexed in
    // an earlier level: by its index.
    let seen = Seen::new(keep_edges || opts.partial_order);
    let mut merge = Merge {
        seen: &seen,
        graph: Graph::new(),
        keep_edges,
        max_states: opts.max_states,
        started,
        first_hit: vec![None; props.len()],
        hit_after: vec![0.0; props.len()],
        generated: 0,
        complete: true,
        index: 0,
        chunk_size: opts.level_chunk.max(1),
        level_start: 0,
        next_frontier: Vec::new(),
        new_here: HashMap::default(),
        successors_of_one: Vec::new(),
    };
    let mut decided_early = false;
    let mut stopped_at_memory = None;
    let mut depth = 0u32;
    let mut peak_frontier = 0usize;

    let init = search_root(model, opts.symmetry);
    let init_fp = fingerprint(&init);
    seen.claim(init_fp);
    let _root = seen.index(init_fp, usize::MAX);
    // The root has no parent; this entry is never followed (`path_to` stops at 0).
    merge.graph.parent.push(0);
    merge.graph.via.push(0);
    // A level's states in chunks of `chunk_size`: a growing level never
    // copies itself into a vector twice its size, and each chunk's states
    // are freed once expanded (the parts new in the level stay in its
    // interning table until the whole level is expanded).
    let mut frontier: Vec<Vec<Queued>> = vec![vec![Queued {
        state: init,
        fp: init_fp,
        asleep: Sleep::default(),
    }]];
    // The parts new in the frontier's states (interned as they were made).
    let mut frontier_parts = Interner::default();
    'search: while !frontier.is_empty() {
        peak_frontier = peak_frontier.max(frontier.iter().map(Vec::len).sum());
        let audit_all = seen.len() < AUDIT_ALL_UP_TO;
        // A successor's new parts are shared with equal ones of the next
        // level's states and of the frontier's (which a relabelled
        // successor's parts often equal).
        let next_parts = Interner::default();
        let interner = Interning {
            this_level: &next_parts,
            level_before: &frontier_parts,
        };
        merge.start_level();
        // The states of every level up to the one expanded now.
        let earlier = seen.len();
        // The level is expanded and merged a chunk at a time, in frontier
        // order: a state is claimed in the chunk that first reaches it, so
        // indices are those of a whole-level merge, while only one chunk's
        // successors wait for the merge at once. A chunk is merged while
        // the next is expanded: every claim the merge meets was made by its
        // own chunk's expansion or before, which had all ended.
        let mut chunks = frontier.into_iter();
        let mut expanded: Option<Vec<Expanded>> = None;
        loop {
            let chunk = chunks.next();
            if chunk.is_none() && expanded.is_none() {
                break;
            }
            let (next, merged) = pool.join(
                || {
                    chunk.map(|c| {
                        expand_level(&judges, audit_all, &pool, &seen, earlier, interner, c)
                    })
                },
                || expanded.take().map(|e| merge.take(e)),
            );
            if let Some(Err(EdgesOverflow)) = merged {
                break 'search;
            }
            // Past the memory limit, the states known are the last.
            if let (Some(Ok(())), Some(limit), None) =
                (&merged, opts.max_resident, stopped_at_memory)
            {
                if let Some(now) = memory::resident_bytes().filter(|&b| b > limit) {
                    stopped_at_memory = Some(now);
                    merge.max_states = merge.max_states.min(seen.len());
                }
            }
            if let Some(found) = next.iter().flatten().find_map(|e| e.asymmetry.clone()) {
                return Err(CheckError::IdentityDependent { found });
            }
            expanded = next;
        }
        frontier_parts = next_parts;
        let next_frontier = std::mem::take(&mut merge.next_frontier);
        if !next_frontier.is_empty() {
            depth += 1;
        }
        if let Some(tell) = opts.on_level {
            tell(&Level {
                depth,
                unique_states: seen.len() as u64,
                frontier: next_frontier.iter().map(Vec::len).sum::<usize>() as u64,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        frontier = next_frontier
            .into_iter()
            .map(|chunk| {
                chunk
                    .into_iter()
                    .map(|Pending { state, asleep }| {
                        let (state, fp) =
                            state.expect("every new state was claimed by one expansion");
                        Queued { state, fp, asleep }
                    })
                    .collect()
            })
            .collect();
        // Everything asked is decided: no progress goal (which needs the
        // whole graph) and a violation or witness for every property. The
        // search stops at the end of the level, so what it reports does
        // not depend on how the level was cut into chunks.
        if opts.ask != 0 && goals.is_empty() && merge.first_hit.iter().all(Option::is_some) {
            decided_early = !frontier.is_empty();
            // Its states, left unexpanded, are not needed any more.
            frontier.clear();
            break;
        }
    }
    let Merge {
        mut graph,
        first_hit,
        hit_after,
        generated,
        complete,
        ..
    } = merge;
    let searched = started.elapsed().as_secs_f64();
    // The fingerprint table has done its work: free it before progress
    // transposes the graph. So have the last level's interned parts.
    let unique_states = seen.len() as u64;
    let index_bytes = (seen.bytes() + graph.bytes()) as u64;
    drop(seen);
    drop(frontier_parts);

    let mut properties = Vec::new();
    for (k, &p) in props.iter().enumerate() {
        let kind = p.kind();
        let (status, path) = match (kind, first_hit[k]) {
            (Kind::Always, Some(i)) => (
                Status::Violated,
                Some(graph.path_to(model, opts.symmetry, i)?),
            ),
            (_, Some(i)) => (Status::Holds, Some(graph.path_to(model, opts.symmetry, i)?)),
            (_, None) if !complete => (Status::Unknown, None),
            (Kind::Always, None) => (Status::Holds, None),
            (_, None) => (Status::Violated, None),
        };
        properties.push(PropertyResult {
            name: p,
            kind,
            status,
            path,
            repeats_from: None,
            decided_after: first_hit[k].map_or(searched, |_| hit_after[k]),
        });
    }
    // Every goal also requires that no client sends forever: one search
    // of the graph's cycles serves them all.
    let livelock = match complete && !goals.is_empty() {
        true => {
            let components = cycles::cyclic_components(&graph.succ);
            livelock::find(model, &graph, opts.symmetry, &components)?
                .map(|lasso| -> Result<_, CheckError> {
                    let to = "a livelock's cycle";
                    let path = walk(model, opts.symmetry, &lasso.steps, to)?.path;
                    Ok((path, lasso.repeats_from))
                })
                .transpose()?
        }
        false => None,
    };
    let stuck = match complete {
        true => graph.first_stuck(goals.len()),
        false => Vec::new(),
    };
    for (g, Goal { name, .. }) in goals.iter().enumerate() {
        let (status, path, repeats_from) = match (stuck.get(g), &livelock) {
            (Some(&Some(i)), _) => (
                Status::Violated,
                Some(graph.path_to(model, opts.symmetry, i)?),
                None,
            ),
            (Some(None), Some((path, from))) => (Status::Violated, Some(path.clone()), Some(*from)),
            (Some(None), None) => (Status::Holds, None, None),
            (None, _) => (Status::Unknown, None, None),
        };
        properties.push(PropertyResult {
            name: *name,
            kind: Kind::Progress,
            status,
            path,
            repeats_from,
            decided_after: started.elapsed().as_secs_f64(),
        });
    }

    // Replay every path (in real client names) from the initial state and
    // re-check it. Under symmetry, a path that does not re-check means the
    // audit's sample missed a state where clients are not alike.
    let not_alike = |what: String| CheckError::IdentityDependent { found: what };
    for p in &mut properties {
        if let Some(real) = &p.path {
            let confirmed = match p.kind {
                Kind::Progress => match p.repeats_from {
                    Some(from) => livelock::confirm(model, opts.symmetry, real, from),
                    None => {
                        let goal = goals.iter().find(|g| g.name == p.name).expect("known goal");
                        confirm_stuck(model, real, goal)
                    }
                },
                Kind::Always | Kind::Sometimes => replay(model, real)
                    .is_some_and(|end| end.monitors.holds(p.name) == (p.kind == Kind::Sometimes)),
            };
            if !confirmed && opts.partial_order && p.kind == Kind::Progress {
                return Err(CheckError::Reduction {
                    found: format!(
                        "the state its {} counterexample reaches can still reach the goal",
                        p.name
                    ),
                });
            }
            if !confirmed && opts.symmetry {
                return Err(not_alike(format!(
                    "the {} path found among representatives does not re-check in the clients' real names",
                    p.name
                )));
            }
            assert!(
                confirmed,
                "the {} counterexample did not re-check on replay; this is a lockstep bug",
                p.name
            );
        }
    }

    Ok(CheckResult {
        states: generated,
        unique_states,
        peak_frontier: peak_frontier as u64,
        index_bytes,
        max_depth: depth,
        seconds: started.elapsed().as_secs_f64(),
        complete,
        symmetry: opts.symmetry,
        partial_order: opts.partial_order,
        sleep_sets: judges.sleep,
        decided_early,
        properties,
        stopped_at_memory,
    })
}

/// Where [`walk`] ends: the path in the clients' real names, and the
/// searched state it reaches (a representative, under symmetry).
struct Walk {
    path: Vec<Action>,
    state: ModelState,
}

/// Takes `steps` from the search's root, each the action at that position
/// among the searched state's (a representative's, under symmetry), and
/// translates them back through the relabellings the search applied.
/// `Err` if a step cannot be taken: two states shared a fingerprint.
fn walk(model: &RecipeModel, symmetry: bool, steps: &[u16], to: &str) -> Result<Walk, CheckError> {
    let init = model.init_states().remove(0);
    // The searched state, and the map from its names to the real ones.
    let (mut state, mut to_real) = if symmetry {
        let (rep, perm) = representative(&init);
        (rep, inverse(&perm))
    } else {
        let n = init.clients.len() as ClientIdx;
        (init, (0..n).collect())
    };
    let mut actions = Vec::new();
    let mut path = Vec::with_capacity(steps.len());
    for &via in steps {
        actions.clear();
        model.actions(&state, &mut actions);
        let step = actions.get(via as usize).copied();
        let Some((a, next)) = step.and_then(|a| Some((a, model.next_state(&state, a)?))) else {
            return Err(CheckError::Collision {
                found: format!("step {} of the path to {to}", path.len() + 1),
            });
        };
        let mut real = a;
        real.relabel(&to_real);
        path.push(real);
        state = if symmetry {
            let (rep, perm) = representative(&next);
            let back = inverse(&perm);
            to_real = back.iter().map(|&x| to_real[x as usize]).collect();
            rep
        } else {
            next
        };
    }
    Ok(Walk { path, state })
}

/// The state the search starts from: the initial state, or its
/// representative under symmetry.
fn search_root(model: &RecipeModel, symmetry: bool) -> ModelState {
    let init = model.init_states().remove(0);
    if symmetry {
        representative(&init).0
    } else {
        init
    }
}

/// Replays `path` from the initial state; `None` if a step is not enabled.
pub fn replay(model: &RecipeModel, path: &[Action]) -> Option<ModelState> {
    let mut state = model.init_states().remove(0);
    let mut enabled = Vec::new();
    for &a in path {
        enabled.clear();
        model.actions(&state, &mut enabled);
        if !enabled.contains(&a) {
            return None;
        }
        state = model.next_state(&state, a)?;
    }
    Some(state)
}

/// Re-checks a progress counterexample: from the end of `path`, no state in
/// which `goal` holds is reachable.
fn confirm_stuck(model: &RecipeModel, path: &[Action], goal: &Goal) -> bool {
    let Some(end) = replay(model, path) else {
        return false;
    };
    let mut seen = std::collections::HashSet::new();
    let mut queue = VecDeque::from([end]);
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        if goal.holds(model, &s) {
            return false;
        }
        if !seen.insert(fingerprint(&s)) {
            continue;
        }
        actions.clear();
        model.actions(&s, &mut actions);
        for &a in &actions {
            if let Some(n) = model.next_state(&s, a) {
                queue.push_back(n);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FaultBudget, ModelCfg};

    /// A property named twice (`--property X --property X`) is asked, and
    /// nothing else is; none named asks every one. (A mutation test: `^`
    /// for `|` when the names are gathered left a repeated name asked as
    /// none, which asks everything.)
    #[test]
    fn a_property_asked_twice_is_asked_alone() {
        use PropertyName::{MutualExclusion, Progress};
        let twice = CheckOptions::default().asking(&[MutualExclusion, MutualExclusion]);
        assert!(twice.asks(PropertyName::MutualExclusion));
        assert!(!twice.asks(PropertyName::Progress));
        let both = CheckOptions::default().asking(&[MutualExclusion, Progress]);
        assert!(both.asks(PropertyName::MutualExclusion) && both.asks(PropertyName::Progress));
        assert!(!both.asks(PropertyName::HerdBound));
        let all = CheckOptions::default().asking(&[]);
        assert!(all.asks(PropertyName::HerdBound) && all.asks(PropertyName::Progress));
    }

    /// A progress counterexample is confirmed only if no state where the
    /// goal holds can be reached from its end. (Mutation tests: confirming
    /// every path, or looking no further than the path's end, went
    /// unnoticed: the search's own counterexamples are all stuck.)
    #[test]
    fn a_path_that_can_still_reach_the_goal_is_not_confirmed_stuck() {
        let model_of = |recipe: &str, faults| {
            let recipe = crate::recipes::lookup(recipe, None).expect("shipped");
            ModelCfg {
                faults,
                ..ModelCfg::new(recipe, 2)
            }
            .into_model()
            .unwrap()
        };
        let progress = |model: &RecipeModel| {
            let goals = model.progress_goals();
            goals
                .into_iter()
                .find(|g| g.name == PropertyName::Progress)
                .expect("a lock's progress goal")
        };
        // From the start, every client can be done.
        let model = model_of("fair-predecessor", FaultBudget::default());
        assert!(!confirm_stuck(&model, &[], &progress(&model)));
        // A paused unfair-create client waits behind its own node for
        // ever (see the checker's tests): its path is confirmed, and a
        // prefix of it that stops short of the pause is not.
        let paused = FaultBudget {
            pauses: 1,
            ..FaultBudget::default()
        };
        let model = model_of("unfair-create", paused);
        let r = check(&model, CheckOptions::default()).expect("a verdict");
        let stuck = r
            .property(PropertyName::Progress)
            .unwrap()
            .path
            .clone()
            .expect("stuck");
        let goal = progress(&model);
        assert!(confirm_stuck(&model, &stuck, &goal));
        let before_the_pause = stuck
            .iter()
            .position(|a| matches!(a, Action::Pause(_)))
            .expect("a pause on the path");
        assert!(!confirm_stuck(&model, &stuck[..before_the_pause], &goal));
    }
}
