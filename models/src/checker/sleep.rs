//! Sleep sets (Godefroid, *Partial-Order Methods for the Verification of
//! Concurrent Systems*, 1996, ch. 5): fewer transitions, the same states.
//!
//! Where two steps `a` and `b` enabled at a state `w` commute
//! ([`crate::model::commute::independent`]), `b` then `a` and `a` then `b`
//! reach the same state; a breadth-first search that takes both computes
//! that state twice, and most of the successors the checker computes are
//! such duplicates. So the enabled steps of a state are taken in the
//! order `Model::actions` lists them, and the
//! successor `a(w)` is given a *sleep set*: the steps that commute with `a`
//! at `w` and either were taken at `w` before `a` or were asleep at `w`
//! already. From `a(w)` those steps are not taken.
//!
//! A state reached from several states of the level before keeps the
//! sleep set of its first arrival: the one the merge meets first, in the
//! order of the level's states and, within a state, of its steps — the
//! arrival it records as the state's parent, with or without sleep sets.
//!
//! **Every state is still reached, at its breadth-first depth, by the same
//! first arrival**, so the state counts, the verdicts and the
//! counterexamples themselves (each state's parent and step) are those of
//! the search without sleep sets. Order the paths of one length by their
//! steps, first step first (two paths first differ at a state they share,
//! where steps are ordered as `Model::actions` lists them). The search
//! numbers a level's states in the order of their least shortest paths,
//! and a state's first arrival is the last step of its least shortest
//! path (by induction over the levels: the merge takes the parents in
//! their order, and each parent's steps in theirs). It remains to see that
//! every step of the least shortest path `s(0) … s(n)` to a state is taken.
//! By induction along it, suppose its `i`th step `y`, from `s(i-1)`, were
//! asleep there. The arrival into `s(i-1)` is the path's own step
//! `a(i-1)` from `s(i-2)` (its first arrival, its least path being the
//! prefix), so `y` commutes with `a(i-1)` at `s(i-2)` and was either taken
//! there before `a(i-1)` — so it comes before `a(i-1)` in the order — or
//! asleep at `s(i-2)` already. In the second case the same holds one step
//! back, and so on; since nothing sleeps at the initial state, at some
//! `s(j)` the step `y` was taken before `a(j+1)` and commutes with every
//! step of the path from there to `s(i-1)`. Moving `y` to just after
//! `s(j)` then gives a path as short to the same state that comes before
//! the least one: a contradiction. (The argument stays within shortest
//! paths: a breadth-first search needs nothing like the re-exploration a
//! depth-first one does when it meets a state again with fewer steps
//! asleep.)
//!
//! Under symmetry reduction the search keeps one representative per orbit:
//! a successor's sleep set is renamed by the permutation that made it the
//! representative, and the argument runs on orbits (a relabelled step of a
//! relabelled state reaches the relabelled successor).
//!
//! Each asleep step carries its *footprint*
//! ([`crate::model::commute::Footprint`]: which shared parts — the store,
//! the resource, the monitors, the fault budget — it reads and changes),
//! which independence asks: a step asleep was not taken, so its successor
//! was not computed. It was computed where the step was put to sleep, and
//! after a step that commutes with it a step reads and changes no more
//! than it did before (the test `steps_called_independent_commute` checks
//! this pairwise). By induction along the steps taken since, each
//! independent of it as judged by what it carries: if the carried
//! footprint covers the real one at a state, a step independent by the
//! carried one is independent by the real one (independence only grows
//! as a footprint shrinks), so the pairwise check shows the real one after
//! that step is covered by the real one before, hence by the carried one.
//! Judged by the footprint carried, a step is so called independent of no
//! more steps than by its own.
//!
//! Used only for checks that keep no edges (no progress asked: progress
//! needs every edge of the graph) and without the partial-order reduction
//! (which already takes one client's steps alone).

use crate::model::commute::Footprint;
use crate::model::Action;
use crate::symmetry::{Perm, Relabel};
use smallvec::SmallVec;

/// The steps not to take from a state, each with its footprint where it
/// was put to sleep (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sleep(SmallVec<[(Action, Footprint); 4]>);

impl Sleep {
    pub fn contains(&self, a: &Action) -> bool {
        self.0.iter().any(|(b, _)| b == a)
    }

    /// The steps asleep, each with its footprint.
    pub fn steps(&self) -> &[(Action, Footprint)] {
        &self.0
    }

    pub fn push(&mut self, a: Action, at: Footprint) {
        self.0.push((a, at));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Relabel for Sleep {
    fn relabel(&mut self, p: &Perm) {
        for (a, _) in &mut self.0 {
            a.relabel(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Link;

    #[test]
    fn a_relabelled_sleep_set_names_the_new_clients() {
        let mut x = Sleep::default();
        x.push(Action::Deliver(0, Link::StoreToClient), Footprint::NONE);
        x.push(Action::Crash(2), Footprint::ALL);
        // Client 0 is now 1, 1 is 2, 2 is 0 (`perm[old] = new`).
        x.relabel(&[1, 2, 0]);
        assert_eq!(
            x.steps(),
            &[
                (Action::Deliver(1, Link::StoreToClient), Footprint::NONE),
                (Action::Crash(0), Footprint::ALL)
            ]
        );
        assert!(!x.contains(&Action::Deliver(0, Link::StoreToClient)));
    }
}
