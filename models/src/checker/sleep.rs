//! Sleep sets (Godefroid, *Partial-Order Methods for the Verification of
//! Concurrent Systems*, 1996, ch. 5): fewer transitions, the same states.
//!
//! Where two steps `a` and `b` enabled at a state `w` commute
//! ([`crate::model::commute::independent`]), `b` then `a` and `a` then `b`
//! reach the same state; a breadth-first search that takes both computes
//! that state twice, and most of the successors the checker computes are
//! such duplicates. So the enabled steps of a state are taken in their
//! fixed order (the order of `Model::actions`, the same for every state:
//! by client, then kind of step, then the store's timers), and the
//! successor `a(w)` is given a *sleep set*: the steps that commute with `a`
//! at `w` and either were taken at `w` before `a` or were asleep at `w`
//! already. From `a(w)` those steps are not taken.
//!
//! A state reached from several states of the level before sleeps on the
//! intersection of what each arrival brought: a step asleep there is one
//! every arrival could skip. Arrivals from its own level or later ones
//! bring nothing into it.
//!
//! **Every state is still reached, at its breadth-first depth**, so the
//! state counts, the verdicts and the shortest counterexamples' lengths
//! are those of the search without sleep sets. Take a state `v` and, among
//! the shortest paths to it, the least in the order of their steps
//! (compared first step first). By induction along it, each of its steps
//! is taken. Suppose its `i`th step `y`, from `s(i-1)`, were asleep there.
//! The path's step `a(i-1)` into `s(i-1)` was taken (induction), from the
//! level before, so it is one of the arrivals whose sleep sets were
//! intersected: `y` commutes with `a(i-1)` at `s(i-2)` and was either taken
//! there before `a(i-1)` — so it comes before `a(i-1)` in the order — or
//! asleep at `s(i-2)` already. In the second case the same holds one step
//! back, and so on; since nothing sleeps at the initial state, at some
//! `s(j)` the step `y` was taken before `a(j+1)` and commutes with every
//! step of the path from there to `s(i-1)`. Moving `y` to just after
//! `s(j)` then gives a path as short to the same `v` that comes before the
//! chosen one in the order: a contradiction. (The argument stays within
//! shortest paths, which is why only arrivals from the level before count,
//! and why a breadth-first search needs nothing like the re-exploration a
//! depth-first one does when it meets a state again with fewer steps
//! asleep.)
//!
//! Under symmetry reduction the search keeps one representative per orbit:
//! a successor's sleep set is renamed by the permutation that made it the
//! representative, and the argument runs on orbits (a relabelled step of a
//! relabelled state reaches the relabelled successor).
//!
//! Each asleep step carries whether it is *quiet* (a local step that stays
//! local): independence asks it, and a step asleep was not taken, so its
//! successor was not computed. It was computed (or carried) where the step
//! was put to sleep, and a step commuting with it changes nothing a quiet
//! step reads, nor anything a step that is not quiet reads to decide what
//! it touches: so it is quiet at the successor exactly when it was before.
//!
//! Used only for checks that keep no edges (no progress asked: progress
//! needs every edge of the graph) and without the partial-order reduction
//! (which already takes one client's steps alone).

use crate::model::Action;
use crate::symmetry::{Perm, Relabel};
use smallvec::SmallVec;

/// The steps not to take from a state, each with whether it is quiet
/// there (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sleep(SmallVec<[(Action, bool); 4]>);

impl Sleep {
    pub fn contains(&self, a: &Action) -> bool {
        self.0.iter().any(|(b, _)| b == a)
    }

    /// The steps asleep, with whether each is quiet.
    pub fn steps(&self) -> &[(Action, bool)] {
        &self.0
    }

    pub fn push(&mut self, a: Action, quiet: bool) {
        self.0.push((a, quiet));
    }

    /// Keeps only the steps `other` has asleep too: a state reached by
    /// several steps sleeps on what every one of them could skip.
    pub fn intersect(&mut self, other: &Sleep) {
        self.0.retain(|step| other.0.contains(step));
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
    fn an_intersection_keeps_what_both_sleep_on() {
        let (a, b, c) = (
            Action::Crash(0),
            Action::Deliver(1, Link::StoreToClient),
            Action::Pause(2),
        );
        let mut x = Sleep::default();
        x.push(a, false);
        x.push(b, true);
        let mut y = Sleep::default();
        y.push(b, true);
        y.push(c, false);
        x.intersect(&y);
        assert!(x.contains(&b) && !x.contains(&a) && !x.contains(&c));
        x.intersect(&y);
        assert_eq!(
            x.steps(),
            &[(b, true)],
            "intersecting again changes nothing"
        );
        x.intersect(&Sleep::default());
        assert!(x.is_empty());
    }

    #[test]
    fn a_relabelled_sleep_set_names_the_new_clients() {
        let mut x = Sleep::default();
        x.push(Action::Deliver(0, Link::StoreToClient), true);
        x.relabel(&[1, 0]);
        assert!(x.contains(&Action::Deliver(1, Link::StoreToClient)));
        assert!(!x.contains(&Action::Deliver(0, Link::StoreToClient)));
    }
}
