//! The explored graph's cycles, for the livelock check: its strongly
//! connected components that hold a cycle.
//!
//! Most shipped graphs have none (rounds and faults are bounded), so the
//! lists are first trimmed by sweeps — a state with no live successor, or
//! no live predecessor, lies on no cycle — which leave only the states on
//! or between cycles, usually none. Tarjan's algorithm, iterative (a
//! component may be deep), then runs on what is left, copied out of the
//! compact lists.

use super::edges::SuccessorLists;
use std::collections::HashMap;

/// Trimming sweeps at most; what they leave is only copied, never wrong.
const TRIM_ROUNDS: usize = 16;

/// The components with a cycle (two states or more, or one with an edge
/// to itself), each as its states in increasing order; components in the
/// order of their least state.
pub fn cyclic_components(lists: &SuccessorLists) -> Vec<Vec<u32>> {
    let live = trim(lists);
    let (states, adjacency) = remainder(lists, &live);
    let mut components: Vec<Vec<u32>> = tarjan(&adjacency)
        .into_iter()
        .filter(|c| c.len() > 1 || adjacency[c[0] as usize].contains(&c[0]))
        .map(|c| {
            let mut c: Vec<u32> = c.into_iter().map(|k| states[k as usize]).collect();
            c.sort_unstable();
            c
        })
        .collect();
    components.sort_unstable_by_key(|c| c[0]);
    components
}

/// Which states may lie on a cycle: every state but those the sweeps
/// found without a live successor or without a live predecessor.
fn trim(lists: &SuccessorLists) -> Vec<bool> {
    let n = lists.states();
    let mut live = vec![true; n];
    for _ in 0..TRIM_ROUNDS {
        let mut changed = false;
        // Backwards: breadth-first numbering puts most successors after
        // their state, so one sweep settles most states.
        lists.each(true, |i, successors| {
            if live[i] && !successors.iter().any(|&j| live[j as usize]) {
                live[i] = false;
                changed = true;
            }
        });
        let mut has_predecessor = vec![false; n];
        lists.each(false, |i, successors| {
            if live[i] {
                for &j in successors {
                    has_predecessor[j as usize] = true;
                }
            }
        });
        for (l, p) in live.iter_mut().zip(&has_predecessor) {
            if *l && !p {
                *l = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    live
}

/// The live states (in increasing order) and their lists among
/// themselves, numbered by position.
fn remainder(lists: &SuccessorLists, live: &[bool]) -> (Vec<u32>, Vec<Vec<u32>>) {
    let states: Vec<u32> = (0..live.len() as u32)
        .filter(|&i| live[i as usize])
        .collect();
    let local: HashMap<u32, u32> = states
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k as u32))
        .collect();
    let mut adjacency = Vec::with_capacity(states.len());
    lists.each(false, |i, successors| {
        if live[i] {
            adjacency.push(
                successors
                    .iter()
                    .filter_map(|j| local.get(j).copied())
                    .collect(),
            );
        }
    });
    (states, adjacency)
}

/// Tarjan's strongly connected components, without recursion.
fn tarjan(adjacency: &[Vec<u32>]) -> Vec<Vec<u32>> {
    const UNSEEN: u32 = u32::MAX;
    let n = adjacency.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next = 0u32;
    // (state, how many of its successors were looked at)
    let mut calls: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN {
            continue;
        }
        calls.push((root, 0));
        while let Some(&mut (v, ref mut at)) = calls.last_mut() {
            let vi = v as usize;
            if *at == 0 && index[vi] == UNSEEN {
                index[vi] = next;
                low[vi] = next;
                next += 1;
                stack.push(v);
                on_stack[vi] = true;
            }
            if let Some(&w) = adjacency[vi].get(*at) {
                *at += 1;
                let wi = w as usize;
                if index[wi] == UNSEEN {
                    calls.push((w, 0));
                } else if on_stack[wi] {
                    low[vi] = low[vi].min(index[wi]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u as usize] = low[u as usize].min(low[vi]);
            }
            if low[vi] == index[vi] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(n: u32, edges: &[(u32, u32)]) -> SuccessorLists {
        let mut lists = SuccessorLists::new();
        for i in 0..n {
            let mut list: Vec<u32> = edges.iter().filter(|e| e.0 == i).map(|e| e.1).collect();
            assert!(lists.push(&mut list).is_ok());
        }
        lists
    }

    #[test]
    fn an_acyclic_graph_has_no_cyclic_component() {
        let g = lists(5, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)]);
        assert!(cyclic_components(&g).is_empty());
    }

    #[test]
    fn cycles_and_self_loops_are_found_and_what_leads_to_them_is_not() {
        // 0 → 1 → 2 → 1 (a cycle), 2 → 3 → 3 (a self-loop), 3 → 4,
        // 0 → 5 → 6 → 5 → 4.
        let g = lists(
            7,
            &[
                (0, 1),
                (1, 2),
                (2, 1),
                (2, 3),
                (3, 3),
                (3, 4),
                (0, 5),
                (5, 6),
                (6, 5),
                (6, 4),
            ],
        );
        assert_eq!(cyclic_components(&g), vec![vec![1, 2], vec![3], vec![5, 6]]);
    }

    #[test]
    fn a_long_cycle_is_one_component() {
        let n = 100_000u32;
        let edges: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        let g = lists(n, &edges);
        let found = cyclic_components(&g);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), n as usize);
    }
}
