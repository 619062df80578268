//! Many seeds of one scenario: in parallel, sharded across machines, merged,
//! and the first failure shrunk to a reproducer.
//!
//! A hunt never lists its seeds: a [`SeedSet`] computes the i-th seed of a
//! range or shard, so a range of 2^64 − 1 seeds starts at once, and only
//! the seeds that violated something (or were cut off) are kept. Results
//! carry the scenario's content hash and their shard, so a merge can refuse
//! what does not belong together and say what is missing.

use crate::engine::{simulate, Outcome};
use crate::parallel::{filter_map_indices, ThreadError};
use crate::scenario::{Scenario, ScheduledFault};
use crate::trace;
use models::model::{check_observers, check_permits, check_producers, check_writers};
use models::properties::{Kind, PropertyName};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One shard of a seed range: every `n`-th seed, starting with the `k`-th
/// (1 ≤ k ≤ n).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    pub k: u64,
    pub n: u64,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// The seeds a hunt runs: `start..=last`, or one shard of it. The last
/// seed is kept, not the one after it, so a range can end at 2^64 − 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedSet {
    pub start: u64,
    pub last: u64,
    pub shard: Option<Shard>,
}

impl SeedSet {
    /// `start..end`, `end` excluded and above `start`.
    pub fn range(start: u64, end: u64) -> SeedSet {
        assert!(end > start, "an empty seed range {start}..{end}");
        SeedSet {
            start,
            last: end - 1,
            shard: None,
        }
    }

    /// The offset of the first seed from `start`, and the step.
    fn first_and_step(&self) -> (u64, u64) {
        match self.shard {
            None => (0, 1),
            Some(Shard { k, n }) => (k - 1, n),
        }
    }

    /// How many seeds (the range holds fewer than 2^64: `parse_range`
    /// refuses the one that would not).
    pub fn len(&self) -> u64 {
        let (first, step) = self.first_and_step();
        let span = self.last.saturating_sub(self.start);
        if span < first {
            0
        } else {
            // At most span + 1 when step is 1; span < 2^64 − 1 then.
            (span - first) / step + 1
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th seed (`i < len()`, so it cannot overflow).
    pub fn nth(&self, i: u64) -> u64 {
        let (first, step) = self.first_and_step();
        self.start + first + i * step
    }

    pub fn contains(&self, seed: u64) -> bool {
        let (first, step) = self.first_and_step();
        (self.start..=self.last).contains(&seed) && (seed - self.start) % step == first
    }

    /// The range as a hunt writes it: `A..B` (B excluded), or `A..=B` when
    /// B is the last seed there is.
    pub fn range_text(&self) -> String {
        match self.last.checked_add(1) {
            Some(end) => format!("{}..{end}", self.start),
            None => format!("{}..={}", self.start, self.last),
        }
    }
}

/// What a hunt found: the JSON `hunt --json` prints and `hunt --merge` reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HuntResult {
    pub scenario: String,
    /// FNV-1a of the resolved scenario (every setting): results of two
    /// different files never merge, whatever their names.
    pub scenario_hash: String,
    /// The seed range, `A..B` (B excluded), or `A..=B` when B is 2^64 − 1.
    pub seeds: String,
    /// `K/N` when this was one shard of the range.
    pub shard: Option<String>,
    /// The shards a merge did not have (`K/N`, the first 1,000 of them);
    /// empty when complete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_shards: Vec<String>,
    /// How many shards the merge did not have.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shards_missing: u64,
    pub seeds_run: u64,
    pub violating_seeds: Vec<u64>,
    /// Seeds per violated property.
    pub by_property: BTreeMap<String, Vec<u64>>,
    /// Seeds whose run was cut off (stuck, or at the event cap): no verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_off_seeds: Vec<u64>,
    /// The first reproducer written (`hunt --shrink`).
    pub reproducer: Option<String>,
    /// One reproducer per violated property, by property.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reproducers: BTreeMap<String, String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl HuntResult {
    /// Every seed of its range was run (a merge that lacks shards was not).
    pub fn is_complete(&self) -> bool {
        self.shards_missing == 0
    }
}

/// The content hash of a resolved scenario.
pub fn scenario_hash(s: &Scenario) -> String {
    let json = serde_json::to_string(s).expect("scenarios serialise");
    format!("{:016x}", trace::fnv1a(trace::FNV_OFFSET, json.as_bytes()))
}

/// Parses `A..B` (B excluded) or `A..=B` (B included, so the last seed,
/// 2^64 − 1, can be run): the first and the last seed. A range of 2^64
/// seeds, which no count holds, is refused.
pub fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("--seeds takes A..B or A..=B, got '{s}'"))?;
    let (b, inclusive) = match b.strip_prefix('=') {
        Some(b) => (b, true),
        None => (b, false),
    };
    let seed = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("--seeds: '{}' is not a seed (0 to {})", x.trim(), u64::MAX))
    };
    let (a, b) = (seed(a)?, seed(b)?);
    let last = match inclusive {
        true if b < a => return Err(format!("--seeds {a}..={b} is empty")),
        true => b,
        false if b <= a => return Err(format!("--seeds {a}..{b} is empty")),
        false => b - 1,
    };
    if (a, last) == (0, u64::MAX) {
        return Err(format!(
            "--seeds {a}..={last} holds 2^64 seeds, one more than a count can hold: \
             split it (0..{last} and {last}..={last})"
        ));
    }
    Ok((a, last))
}

/// Parses `K/N` (1 ≤ K ≤ N).
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("--shard takes K/N, got '{s}'"))?;
    let number = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("--shard: '{x}' is not a number"))
    };
    let (k, n) = (number(k)?, number(n)?);
    if n == 0 || k == 0 || k > n {
        return Err(format!("--shard {k}/{n}: need 1 <= K <= N"));
    }
    Ok(Shard { k, n })
}

/// Runs every seed of `seeds` on `jobs` threads and keeps what `keep`
/// returns for each, in seed order (nothing for `None`: memory follows
/// what is kept). `progress` is told the number of seeds done.
pub fn run_seeds_with<R: Send>(
    scenario: &Scenario,
    seeds: SeedSet,
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
    keep: &(dyn Fn(Outcome) -> Option<R> + Sync),
) -> Result<Vec<R>, ThreadError> {
    let kept = filter_map_indices(
        seeds.len(),
        jobs,
        &|i| keep(simulate(scenario, seeds.nth(i), false)),
        progress,
    )?;
    Ok(kept.into_iter().map(|(_, r)| r).collect())
}

/// What a hunt keeps of one seed's run.
struct SeedNote {
    seed: u64,
    violated: BTreeSet<PropertyName>,
    cut_off: bool,
}

/// Runs every seed of `seeds` and summarises them; a passing seed leaves
/// nothing behind.
pub fn hunt(
    scenario: &Scenario,
    seeds: SeedSet,
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<HuntResult, ThreadError> {
    let notes = run_seeds_with(scenario, seeds, jobs, progress, &|o| {
        let note = SeedNote {
            seed: o.seed,
            violated: o.violations.iter().map(|v| v.property).collect(),
            cut_off: o.end.is_cut_off(),
        };
        (note.cut_off || !note.violated.is_empty()).then_some(note)
    })?;
    let mut r = HuntResult {
        scenario: scenario.name.clone(),
        scenario_hash: scenario_hash(scenario),
        seeds: seeds.range_text(),
        shard: seeds.shard.map(|s| s.to_string()),
        seeds_run: seeds.len(),
        ..Default::default()
    };
    for n in notes {
        if n.cut_off {
            r.cut_off_seeds.push(n.seed);
        }
        if !n.violated.is_empty() {
            r.violating_seeds.push(n.seed);
        }
        for p in n.violated {
            r.by_property.entry(p.to_string()).or_default().push(n.seed);
        }
    }
    Ok(r)
}

/// Checks a result read from a file (`what` names it): its seeds lie in
/// its range and shard, its counts agree, its properties exist.
pub fn check_result(r: &HuntResult, what: &str) -> Result<SeedSet, String> {
    let bad = |why: String| format!("{what}: {why}");
    let (start, last) = parse_range(&r.seeds).map_err(bad)?;
    let shard = match &r.shard {
        Some(s) => Some(parse_shard(s).map_err(bad)?),
        None => None,
    };
    let set = SeedSet { start, last, shard };
    // As `hunt` writes it: the scenario file's hash in 16 hex digits.
    if r.scenario_hash.len() != 16 || !r.scenario_hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad(format!(
            "scenario_hash '{}' is not the 16 hex digits a hunt writes",
            r.scenario_hash
        )));
    }
    if !r.missing_shards.is_empty() || r.shards_missing > 0 {
        return Err(bad(format!(
            "a merge that lacks shards ({}) cannot be merged again: merge the shard files",
            r.missing_shards.join(", ")
        )));
    }
    if r.seeds_run != set.len() {
        return Err(bad(format!(
            "seeds_run is {} but {}{} has {} seeds",
            r.seeds_run,
            r.seeds,
            shard.map(|s| format!(" shard {s}")).unwrap_or_default(),
            set.len()
        )));
    }
    let seeds_ok = |name: &str, seeds: &[u64]| -> Result<(), String> {
        if let Some(w) = seeds.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!(
                "{what}: {name} is not sorted without repeats ({} then {})",
                w[0], w[1]
            ));
        }
        match seeds.iter().find(|&&s| !set.contains(s)) {
            Some(s) => Err(format!(
                "{what}: {name} has seed {s}, which is not among the seeds run"
            )),
            None => Ok(()),
        }
    };
    seeds_ok("violating_seeds", &r.violating_seeds)?;
    seeds_ok("cut_off_seeds", &r.cut_off_seeds)?;
    let mut union = BTreeSet::new();
    for (name, seeds) in &r.by_property {
        match PropertyName::parse(name) {
            Some(p) if p.kind() != Kind::Sometimes => {}
            Some(_) | None => {
                return Err(bad(format!(
                "by_property names '{name}', which is no property the simulator reports violated"
            )))
            }
        }
        if seeds.is_empty() {
            return Err(bad(format!(
                "by_property.{name} lists no seeds (a hunt lists only properties it saw violated)"
            )));
        }
        seeds_ok(&format!("by_property.{name}"), seeds)?;
        union.extend(seeds.iter().copied());
    }
    // A reproducer is written for a property some seed violated, and the
    // first one written is one of them.
    if let Some(name) = r
        .reproducers
        .keys()
        .find(|p| !r.by_property.contains_key(*p))
    {
        return Err(bad(format!(
            "reproducers names '{name}', which no seed of this result violated"
        )));
    }
    if let Some(first) = &r.reproducer {
        if !r.reproducers.values().any(|v| v == first) {
            return Err(bad(format!(
                "reproducer {first} is not among the reproducers written per property"
            )));
        }
    }
    if !union.iter().copied().eq(r.violating_seeds.iter().copied()) {
        return Err(bad(
            "violating_seeds is not exactly the seeds listed by_property".into(),
        ));
    }
    Ok(set)
}

/// Combines the results of one scenario's seed range: either one full
/// result, or shards of one `N`, each at most once. `parts` pairs each
/// result with the name of its file. A merge without every shard says
/// which are missing (`missing_shards`).
pub fn merge(parts: Vec<(String, HuntResult)>) -> Result<HuntResult, String> {
    let Some((first_file, first)) = parts.first() else {
        return Err("nothing to merge".into());
    };
    let mut sets = Vec::new();
    for (file, p) in &parts {
        let set = check_result(p, file)?;
        if (p.scenario.as_str(), p.scenario_hash.as_str())
            != (first.scenario.as_str(), first.scenario_hash.as_str())
        {
            return Err(format!(
                "{file} is a result of scenario {} ({}), {first_file} of {} ({}): not the same scenario file",
                p.scenario, p.scenario_hash, first.scenario, first.scenario_hash
            ));
        }
        // Compared as ranges ("0..30 " is "0..30"), each checked above.
        if parse_range(&p.seeds) != parse_range(&first.seeds) {
            return Err(format!(
                "{file} ran seeds {}, {first_file} seeds {}: merge results of one range",
                p.seeds, first.seeds
            ));
        }
        sets.push((file, set));
    }
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    let mut n_of_all = None;
    for (file, set) in &sets {
        let Some(Shard { k, n }) = set.shard else {
            if parts.len() > 1 {
                return Err(format!(
                    "{file} is a whole run of {}, not a shard: it cannot be merged with other results",
                    first.seeds
                ));
            }
            continue;
        };
        if *n_of_all.get_or_insert(n) != n {
            return Err(format!(
                "{file} is shard {k}/{n} but the others are shards of {}: they overlap",
                n_of_all.unwrap_or(n)
            ));
        }
        if let Some(other) = seen.insert(k, file) {
            return Err(format!("shard {k}/{n} is given twice ({other} and {file})"));
        }
    }
    let mut out = HuntResult {
        scenario: first.scenario.clone(),
        scenario_hash: first.scenario_hash.clone(),
        seeds: first.seeds.clone(),
        ..Default::default()
    };
    if let Some(n) = n_of_all {
        out.shards_missing = n - seen.len() as u64;
        out.missing_shards = (1..=n)
            .filter(|k| !seen.contains_key(k))
            .take(1000)
            .map(|k| format!("{k}/{n}"))
            .collect();
    }
    for (_, p) in &parts {
        out.seeds_run = out
            .seeds_run
            .checked_add(p.seeds_run)
            .ok_or("the merged seed count does not fit in 64 bits")?;
        out.violating_seeds.extend(&p.violating_seeds);
        out.cut_off_seeds.extend(&p.cut_off_seeds);
        for (k, v) in &p.by_property {
            out.by_property.entry(k.clone()).or_default().extend(v);
        }
        if out.reproducer.is_none() {
            out.reproducer = p.reproducer.clone();
        }
        for (k, v) in &p.reproducers {
            out.reproducers
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
    }
    // Shards are disjoint, so sorting is all the merge needs.
    out.violating_seeds.sort_unstable();
    out.cut_off_seeds.sort_unstable();
    for v in out.by_property.values_mut() {
        v.sort_unstable();
    }
    Ok(out)
}

/// A violation cut down to what it needs: the faults that matter, as few
/// clients and rounds as still show it, with the same seed.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub property: PropertyName,
    pub seed: u64,
    pub clients: u16,
    /// A queue's producers among `clients` (0 for other applications).
    pub producers: u16,
    /// A shared lock's writers among `clients` (0 for other applications).
    pub writers: u16,
    /// An election's observers among `clients` (0 where there are none).
    pub observers: u16,
    pub rounds: u8,
    pub schedule: Vec<ScheduledFault>,
    /// Faults that fired in the original run.
    pub faults_before: usize,
    pub clients_before: u16,
    pub rounds_before: u8,
}

impl Shrunk {
    /// What shrinking cut, in words: "clients 3 → 2, rounds 4 → 1,
    /// faults 37 → 1 (kept: pause of client 0 at 797 ms for 2794 ms)".
    pub fn what_was_cut(&self) -> String {
        let kept: Vec<String> = self.schedule.iter().map(|f| f.to_string()).collect();
        format!(
            "clients {} → {}, rounds {} → {}, faults {} → {}{}",
            self.clients_before,
            self.clients,
            self.rounds_before,
            self.rounds,
            self.faults_before,
            self.schedule.len(),
            if kept.is_empty() {
                String::new()
            } else {
                format!(" (kept: {})", kept.join("; "))
            }
        )
    }
}

fn violates(s: &Scenario, seed: u64, property: PropertyName) -> bool {
    simulate(s, seed, false)
        .violations
        .iter()
        .any(|v| v.property == property)
}

/// Who is who among a run's clients: how many, and how many of them (the
/// first) produce, write, and observe.
type Cast = (u16, u16, u16, u16);

fn with(
    s: &Scenario,
    (clients, producers, writers, observers): Cast,
    rounds: u8,
    schedule: &[ScheduledFault],
) -> Scenario {
    let mut s = s.clone();
    s.clients = clients;
    s.producers = producers;
    s.writers = writers;
    s.observers = observers;
    s.rounds = rounds;
    s.profile.clear();
    s.schedule = schedule.to_vec();
    s
}

/// Shrinks the violation of `property` (by default the run's first) at
/// `seed`: keep only the faults that fired, then drop each fault whose
/// removal keeps the violation, then each client (with its faults) whose
/// removal keeps it, then rounds. The seed stays; a run with fewer clients or rounds
/// draws its timings differently, so each cut is kept only if the
/// violation still shows.
pub fn shrink(scenario: &Scenario, seed: u64, property: Option<PropertyName>) -> Option<Shrunk> {
    let original = simulate(scenario, seed, false);
    let property = match property {
        Some(p) => {
            original
                .violations
                .iter()
                .find(|v| v.property == p)?
                .property
        }
        None => original.violations.first()?.property,
    };
    let mut schedule: Vec<ScheduledFault> = original
        .faults
        .iter()
        .filter(|f| f.fired)
        .map(|f| f.fault.clone())
        .collect();
    let faults_before = schedule.len();
    let (mut clients, mut rounds) = (scenario.clients, scenario.rounds);
    let (mut producers, mut writers, mut observers) =
        (scenario.producers, scenario.writers, scenario.observers);
    if !violates(
        &with(
            scenario,
            (clients, producers, writers, observers),
            rounds,
            &schedule,
        ),
        seed,
        property,
    ) {
        return None;
    }
    let mut i = 0;
    while i < schedule.len() {
        let mut fewer = schedule.clone();
        fewer.remove(i);
        if violates(
            &with(
                scenario,
                (clients, producers, writers, observers),
                rounds,
                &fewer,
            ),
            seed,
            property,
        ) {
            schedule = fewer;
        } else {
            i += 1;
        }
    }
    // Each client in turn, from the highest: its faults go, and the
    // clients above it move down one place (a store fault names none).
    let mut k = clients;
    while k > 0 && clients > 1 {
        k -= 1;
        let fewer: Vec<ScheduledFault> = schedule
            .iter()
            .filter(|f| f.kind.strikes_the_store() || f.client != u32::from(k))
            .map(|f| ScheduledFault {
                client: if !f.kind.strikes_the_store() && f.client > u32::from(k) {
                    f.client - 1
                } else {
                    f.client
                },
                ..f.clone()
            })
            .collect();
        // A queue keeps at least one producer and one consumer, a shared
        // lock a writer and a reader (clients below the count play the
        // first role), a semaphore more clients than permits.
        let fewer_producers = producers - u16::from(k < producers);
        let fewer_writers = writers - u16::from(k < writers);
        let fewer_observers = observers - u16::from(k < observers);
        let r = &scenario.recipe;
        let roles_ok = check_producers(r, clients - 1, fewer_producers.into()).is_ok()
            && check_writers(r, clients - 1, fewer_writers.into()).is_ok()
            && check_permits(r, clients - 1, scenario.permits.into()).is_ok()
            && check_observers(r, clients - 1, fewer_observers.into()).is_ok();
        let cast = (clients - 1, fewer_producers, fewer_writers, fewer_observers);
        if roles_ok && violates(&with(scenario, cast, rounds, &fewer), seed, property) {
            clients -= 1;
            producers = fewer_producers;
            writers = fewer_writers;
            observers = fewer_observers;
            schedule = fewer;
        }
    }
    for r in 1..rounds {
        if violates(
            &with(
                scenario,
                (clients, producers, writers, observers),
                r,
                &schedule,
            ),
            seed,
            property,
        ) {
            rounds = r;
            break;
        }
    }
    Some(Shrunk {
        property,
        seed,
        clients,
        producers,
        writers,
        observers,
        rounds,
        schedule,
        faults_before,
        clients_before: scenario.clients,
        rounds_before: scenario.rounds,
    })
}
