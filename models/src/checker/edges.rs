//! The explored graph's edges, for progress: every state's successor list,
//! coded compactly, and the backward reachability that decides a progress
//! goal on them.
//!
//! A list is sorted and kept as variable-length numbers (seven bits a
//! byte): the first successor as its distance from the state (zigzag, so
//! a step back costs no more than one forward), each next one as its
//! distance from the one before, less one. Breadth-first numbering gives a
//! state's new successors consecutive numbers, so most of a list takes a
//! byte an edge and its first entry two or three, where four bytes an edge
//! were kept before.

use super::seen::Chunked;

/// Every state's successor list, in state order.
pub struct SuccessorLists {
    bytes: Chunked<u8>,
    /// Where each list starts in `bytes`, and where the last one ends.
    start: Chunked<u32>,
    edges: usize,
}

/// Past 2³² bytes of lists the graph cannot be indexed: the search stops,
/// as at the state limit.
pub struct EdgesOverflow;

impl SuccessorLists {
    pub fn new() -> Self {
        let mut start = Chunked::new();
        start.push(0);
        SuccessorLists {
            bytes: Chunked::new(),
            start,
            edges: 0,
        }
    }

    /// States with a list so far.
    pub fn states(&self) -> usize {
        self.start.len() - 1
    }

    pub fn edges(&self) -> usize {
        self.edges
    }

    /// Appends the next state's list: `list` is sorted and cleared of
    /// repeats in place.
    pub fn push(&mut self, list: &mut Vec<u32>) -> Result<(), EdgesOverflow> {
        list.sort_unstable();
        list.dedup();
        let i = self.states() as i64;
        let mut before: Option<u32> = None;
        for &j in list.iter() {
            let gap = match before {
                None => zigzag(i64::from(j) - i),
                Some(b) => u64::from(j - b - 1),
            };
            self.put(gap);
            before = Some(j);
        }
        self.edges += list.len();
        let end = u32::try_from(self.bytes.len()).map_err(|_| EdgesOverflow)?;
        self.start.push(end);
        Ok(())
    }

    fn put(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.bytes.push(n as u8 | 0x80);
            n >>= 7;
        }
        self.bytes.push(n as u8);
    }

    /// State `i`'s successors, in increasing order.
    pub fn successors(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.start.get(i) as usize;
        let end = self.start.get(i + 1) as usize;
        let mut before: Option<u32> = None;
        std::iter::from_fn(move || {
            if at == end {
                return None;
            }
            let mut n = 0u64;
            let mut shift = 0;
            loop {
                let b = self.bytes.get(at);
                at += 1;
                n |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
            let j = match before {
                None => (i as i64 + unzigzag(n)) as u32,
                Some(b) => b + 1 + n as u32,
            };
            before = Some(j);
            Some(j)
        })
    }

    pub fn bytes(&self) -> usize {
        self.bytes.bytes() + self.start.bytes()
    }

    /// Marks every state from which a marked state is reachable.
    ///
    /// Sweeps the lists from the last state to the first: breadth-first
    /// numbering puts most successors after their state, so one sweep
    /// marks nearly all of them and a few more settle the rest (2 to 5 on
    /// every shipped recipe), with nothing held but the marks. Lists whose
    /// back edges need more than `SWEEPS` sweeps are turned into
    /// predecessor lists, built once (`preds`) for every goal that needs
    /// them, and finished backwards from what the sweeps marked: the same
    /// states either way.
    pub fn mark_reaching(&self, ok: &mut [bool], preds: &mut Option<Predecessors>) {
        if !self.sweep(ok) {
            preds
                .get_or_insert_with(|| Predecessors::of(self))
                .mark_reaching(ok);
        }
    }

    /// Sweeps until one marks nothing new (true) or `SWEEPS` have (false).
    fn sweep(&self, ok: &mut [bool]) -> bool {
        for _ in 0..SWEEPS {
            let mut changed = false;
            for i in (0..self.states()).rev() {
                if !ok[i] && self.successors(i).any(|j| ok[j as usize]) {
                    ok[i] = true;
                    changed = true;
                }
            }
            if !changed {
                return true;
            }
        }
        false
    }
}

/// Sweeps over the successor lists before predecessor lists are built.
pub const SWEEPS: usize = 8;

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// The lists turned around: `pred[start[j]..start[j+1]]` are the states
/// with `j` among their successors.
pub struct Predecessors {
    start: Vec<u32>,
    pred: Vec<u32>,
}

impl Predecessors {
    /// The counts' running sums end each list; filling from the ends
    /// leaves each at its start, with no second array of positions.
    fn of(lists: &SuccessorLists) -> Self {
        let n = lists.states();
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            for j in lists.successors(i) {
                start[j as usize] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut pred = vec![0u32; lists.edges()];
        for i in 0..n {
            for j in lists.successors(i) {
                start[j as usize] -= 1;
                pred[start[j as usize] as usize] = i as u32;
            }
        }
        Predecessors { start, pred }
    }

    /// Backwards from the marked states (the order does not matter).
    fn mark_reaching(&self, ok: &mut [bool]) {
        let mut todo: Vec<u32> = (0..ok.len() as u32).filter(|&i| ok[i as usize]).collect();
        while let Some(j) = todo.pop() {
            let (a, b) = (
                self.start[j as usize] as usize,
                self.start[j as usize + 1] as usize,
            );
            for &i in &self.pred[a..b] {
                if !ok[i as usize] {
                    ok[i as usize] = true;
                    todo.push(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists for `n` states from these edges.
    fn lists(n: u32, edges: &[(u32, u32)]) -> SuccessorLists {
        let mut l = SuccessorLists::new();
        for i in 0..n {
            let mut list: Vec<u32> = edges
                .iter()
                .filter(|(a, _)| *a == i)
                .map(|(_, j)| *j)
                .collect();
            assert!(l.push(&mut list).is_ok());
        }
        l
    }

    /// The states that can reach a marked one, by a plain search from each.
    fn reaching_by_search(n: u32, edges: &[(u32, u32)], goal: &[bool]) -> Vec<bool> {
        (0..n)
            .map(|i| {
                let mut seen = vec![false; n as usize];
                let mut todo = vec![i];
                seen[i as usize] = true;
                while let Some(k) = todo.pop() {
                    if goal[k as usize] {
                        return true;
                    }
                    for &(_, j) in edges.iter().filter(|(a, _)| *a == k) {
                        if !seen[j as usize] {
                            seen[j as usize] = true;
                            todo.push(j);
                        }
                    }
                }
                false
            })
            .collect()
    }

    /// A small xorshift: the same pseudo-random graphs every run.
    fn draws() -> impl FnMut(u32) -> u32 {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        move |m| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % u64::from(m)) as u32
        }
    }

    #[test]
    fn lists_come_back_sorted_without_repeats() {
        let mut next = draws();
        let mut l = SuccessorLists::new();
        let mut want = Vec::new();
        for i in 0..5_000u32 {
            // Near and far successors, before and after the state,
            // repeated, and the state itself.
            let mut list: Vec<u32> = (0..next(6))
                .map(|_| match next(4) {
                    0 => next(1 << 31),
                    1 => i,
                    _ => i.saturating_sub(300) + next(600),
                })
                .collect();
            list.extend(list.clone());
            let mut sorted = list.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert!(l.push(&mut list).is_ok());
            want.push(sorted);
        }
        assert_eq!(l.states(), want.len());
        assert_eq!(l.edges(), want.iter().map(Vec::len).sum::<usize>());
        for (i, w) in want.iter().enumerate() {
            assert_eq!(&l.successors(i).collect::<Vec<_>>(), w, "state {i}");
        }
    }

    #[test]
    fn a_goal_behind_many_back_edges_is_found_on_predecessor_lists() {
        // Only state 0 is marked, and every state steps back to the one
        // before: each sweep from the last state settles one more state,
        // so the sweeps give up and the predecessor lists finish.
        let n = 3 * SWEEPS as u32;
        let mut edges: Vec<(u32, u32)> = (1..n).map(|i| (i, i - 1)).collect();
        let marked = |n: u32| (0..n).map(|i| i == 0).collect::<Vec<bool>>();
        let mut ok = marked(n);
        let mut preds = None;
        lists(n, &edges).mark_reaching(&mut ok, &mut preds);
        assert!(preds.is_some());
        assert!(ok.iter().all(|&ok| ok));
        // A state that only loops on itself cannot reach it, nor can the
        // states after it, which step back through it.
        edges.retain(|&(a, _)| a != 10);
        edges.push((10, 10));
        let mut ok = marked(n);
        lists(n, &edges).mark_reaching(&mut ok, &mut None);
        assert_eq!(ok.iter().position(|ok| !ok), Some(10));
        assert!(ok[10..].iter().all(|ok| !ok));
    }

    #[test]
    fn sweeps_and_predecessor_lists_mark_what_a_search_finds() {
        let mut next = draws();
        let mut fell_back = 0;
        for round in 0..300 {
            let n = 2 + next(60);
            let mut edges = Vec::new();
            for i in 0..n {
                for _ in 0..next(3) {
                    // Mostly forward, as breadth-first numbering makes
                    // them; some anywhere, some a step back (chains of
                    // which need many sweeps).
                    let j = match next(6) {
                        0 => next(n),
                        1 | 2 => i.saturating_sub(1),
                        _ if round % 3 == 0 => i.saturating_sub(1),
                        _ => (i + 1 + next(3)).min(n - 1),
                    };
                    edges.push((i, j));
                }
            }
            // Goals anywhere, or only among the first states.
            let within = if round % 2 == 0 { n } else { 1 + n / 8 };
            let mut goal = vec![false; n as usize];
            for _ in 0..1 + next(3) {
                goal[next(within) as usize] = true;
            }
            let mut ok = goal.clone();
            let mut preds = None;
            lists(n, &edges).mark_reaching(&mut ok, &mut preds);
            fell_back += usize::from(preds.is_some());
            assert_eq!(
                ok,
                reaching_by_search(n, &edges, &goal),
                "round {round}: {n} states, edges {edges:?}, goal {goal:?}"
            );
        }
        // Both ways were taken.
        assert!(fell_back > 0 && fell_back < 300, "{fell_back} fell back");
    }
}
