//! The explored graph's edges, for progress: every state's successor list,
//! coded compactly, and the backward reachability that decides a progress
//! goal on them.
//!
//! A list is sorted and kept as variable-length numbers (seven bits a
//! byte): its length, the first successor as its distance from the state
//! (zigzag, so a step back costs no more than one forward), each next one
//! as its distance from the one before, less one. Breadth-first numbering
//! gives a state's new successors consecutive numbers, so most of a list
//! takes a byte an edge and its first entry two or three, where four bytes
//! an edge (and four a state for where its list began) were kept before.
//! Lists are read a block of `BLOCK` states at a time, so only where each
//! block begins is kept.

use super::seen::Chunked;

/// Every state's successor list, in state order.
pub struct SuccessorLists {
    bytes: Chunked<u8>,
    /// Where each block of `BLOCK` states' lists starts in `bytes`.
    block_start: Vec<u64>,
    states: usize,
    edges: usize,
}

/// States whose lists are read together.
const BLOCK: usize = 64;

/// Past 2³² edges the predecessor lists cannot be indexed: the search
/// stops, as at the state limit.
pub struct EdgesOverflow;

impl SuccessorLists {
    pub fn new() -> Self {
        SuccessorLists {
            bytes: Chunked::new(),
            block_start: Vec::new(),
            states: 0,
            edges: 0,
        }
    }

    /// States with a list so far.
    pub fn states(&self) -> usize {
        self.states
    }

    pub fn edges(&self) -> usize {
        self.edges
    }

    /// Appends the next state's list: `list` is sorted and cleared of
    /// repeats in place.
    pub fn push(&mut self, list: &mut Vec<u32>) -> Result<(), EdgesOverflow> {
        list.sort_unstable();
        list.dedup();
        if u32::try_from(self.edges + list.len()).is_err() {
            return Err(EdgesOverflow);
        }
        if self.states.is_multiple_of(BLOCK) {
            self.block_start.push(self.bytes.len() as u64);
        }
        let i = self.states as i64;
        self.put(list.len() as u64);
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
        self.states += 1;
        Ok(())
    }

    fn put(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.bytes.push(n as u8 | 0x80);
            n >>= 7;
        }
        self.bytes.push(n as u8);
    }

    /// The number at `*at`, which moves past it.
    fn take(&self, at: &mut usize) -> u64 {
        let mut n = 0u64;
        let mut shift = 0;
        loop {
            let b = self.bytes.get(*at);
            *at += 1;
            n |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return n;
            }
        }
    }

    /// Block `b`'s lists: `lists[ends[k-1]..ends[k]]` are the successors,
    /// in increasing order, of the block's `k`-th state.
    fn read_block(&self, b: usize, ends: &mut Vec<usize>, lists: &mut Vec<u32>) {
        ends.clear();
        lists.clear();
        let mut at = self.block_start[b] as usize;
        let first = b * BLOCK;
        for i in first..self.states.min(first + BLOCK) {
            let len = self.take(&mut at);
            let mut before: Option<u32> = None;
            for _ in 0..len {
                let n = self.take(&mut at);
                let j = match before {
                    None => (i as i64 + unzigzag(n)) as u32,
                    Some(b) => b + 1 + n as u32,
                };
                lists.push(j);
                before = Some(j);
            }
            ends.push(lists.len());
        }
    }

    /// Calls `f(i, successors of i)` for every state, in state order or,
    /// `backwards`, from the last state to the first.
    pub(super) fn each(&self, backwards: bool, mut f: impl FnMut(usize, &[u32])) {
        let (mut ends, mut lists) = (Vec::new(), Vec::new());
        let blocks = self.block_start.len();
        for k in 0..blocks {
            let b = if backwards { blocks - 1 - k } else { k };
            self.read_block(b, &mut ends, &mut lists);
            for m in 0..ends.len() {
                let m = if backwards { ends.len() - 1 - m } else { m };
                let from = if m == 0 { 0 } else { ends[m - 1] };
                f(b * BLOCK + m, &lists[from..ends[m]]);
            }
        }
    }

    /// Every state's successors, in state order.
    #[cfg(test)]
    fn all(&self) -> Vec<Vec<u32>> {
        let mut all = Vec::new();
        self.each(false, |_, list| all.push(list.to_vec()));
        all
    }

    pub fn bytes(&self) -> usize {
        self.bytes.bytes() + self.block_start.capacity() * 8
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
            self.each(true, |i, successors| {
                if !ok[i] && successors.iter().any(|&j| ok[j as usize]) {
                    ok[i] = true;
                    changed = true;
                }
            });
            if !changed {
                return true;
            }
        }
        false
    }
}

/// Sweeps over the successor lists before predecessor lists are built.
const SWEEPS: usize = 8;

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
        lists.each(false, |_, successors| {
            for &j in successors {
                start[j as usize] += 1;
            }
        });
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut pred = vec![0u32; lists.edges()];
        lists.each(false, |i, successors| {
            for &j in successors {
                start[j as usize] -= 1;
                pred[start[j as usize] as usize] = i as u32;
            }
        });
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
        assert_eq!(l.all(), want);
        // Backwards, block by block, every state once, last first.
        let mut seen = Vec::new();
        l.each(true, |i, list| {
            assert_eq!(list, want[i], "state {i}");
            seen.push(i);
        });
        assert!(seen.iter().rev().copied().eq(0..want.len()));
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
