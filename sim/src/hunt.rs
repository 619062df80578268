//! Many seeds of one scenario: in parallel, sharded across machines, merged,
//! and the first failure shrunk to a reproducer.

use crate::engine::{simulate, Outcome};
use crate::scenario::{Scenario, ScheduledFault};
use serde::{Deserialize, Serialize};

/// What a hunt found: the JSON `hunt --json` prints and `hunt --merge` reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HuntResult {
    pub scenario: String,
    /// The seed range, `A..B` (B excluded).
    pub seeds: String,
    /// `K/N` when this was one shard of the range.
    pub shard: Option<String>,
    pub seeds_run: u64,
    pub violating_seeds: Vec<u64>,
    /// Seeds per violated property.
    pub by_property: std::collections::BTreeMap<String, Vec<u64>>,
    pub reproducer: Option<String>,
}

/// Parses `A..B` (B excluded).
pub fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("--seeds takes A..B, got '{s}'"))?;
    let a: u64 = a
        .trim()
        .parse()
        .map_err(|_| format!("--seeds: '{a}' is not a seed"))?;
    let b: u64 = b
        .trim()
        .parse()
        .map_err(|_| format!("--seeds: '{b}' is not a seed"))?;
    if b <= a {
        return Err(format!("--seeds {a}..{b} is empty"));
    }
    Ok((a, b))
}

/// Parses `K/N` (1 ≤ K ≤ N).
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| format!("--shard takes K/N, got '{s}'"))?;
    let k: u64 = k
        .trim()
        .parse()
        .map_err(|_| format!("--shard: '{k}' is not a number"))?;
    let n: u64 = n
        .trim()
        .parse()
        .map_err(|_| format!("--shard: '{n}' is not a number"))?;
    if n == 0 || k == 0 || k > n {
        return Err(format!("--shard {k}/{n}: need 1 <= K <= N"));
    }
    Ok((k, n))
}

/// The seeds of `range` that shard `k` of `n` runs: every n-th, so shards
/// are balanced whatever the range.
pub fn shard_seeds((a, b): (u64, u64), shard: Option<(u64, u64)>) -> Vec<u64> {
    match shard {
        None => (a..b).collect(),
        Some((k, n)) => (a..b).filter(|s| (s - a) % n == k - 1).collect(),
    }
}

/// Runs every seed on `jobs` threads; `progress` is called after each seed
/// with the number done. Results are in seed order whatever the thread count.
pub fn run_seeds(
    scenario: &Scenario,
    seeds: &[u64],
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Outcome> {
    let order: Vec<usize> = (0..seeds.len()).collect();
    crate::parallel::map(
        seeds,
        &order,
        jobs,
        &|&seed| simulate(scenario, seed, false),
        &|n| progress(n as u64),
    )
}

/// Summarises outcomes into a hunt result.
pub fn summarise(
    scenario: &Scenario,
    range: (u64, u64),
    shard: Option<(u64, u64)>,
    outcomes: &[Outcome],
) -> HuntResult {
    let mut r = HuntResult {
        scenario: scenario.name.clone(),
        seeds: format!("{}..{}", range.0, range.1),
        shard: shard.map(|(k, n)| format!("{k}/{n}")),
        seeds_run: outcomes.len() as u64,
        ..Default::default()
    };
    for o in outcomes {
        if !o.violations.is_empty() {
            r.violating_seeds.push(o.seed);
        }
        let mut props: Vec<&str> = o.violations.iter().map(|v| v.property.name()).collect();
        props.sort_unstable();
        props.dedup();
        for p in props {
            r.by_property.entry(p.to_string()).or_default().push(o.seed);
        }
    }
    r
}

/// Combines shard results of one scenario and seed range.
pub fn merge(parts: Vec<HuntResult>) -> Result<HuntResult, String> {
    let Some(first) = parts.first() else {
        return Err("nothing to merge".into());
    };
    let mut out = HuntResult {
        scenario: first.scenario.clone(),
        seeds: first.seeds.clone(),
        ..Default::default()
    };
    for p in &parts {
        if p.scenario != out.scenario || p.seeds != out.seeds {
            return Err(format!(
                "cannot merge results of {} {} with {} {}",
                out.scenario, out.seeds, p.scenario, p.seeds
            ));
        }
        out.seeds_run += p.seeds_run;
        out.violating_seeds.extend(&p.violating_seeds);
        for (k, v) in &p.by_property {
            out.by_property.entry(k.clone()).or_default().extend(v);
        }
        if out.reproducer.is_none() {
            out.reproducer = p.reproducer.clone();
        }
    }
    out.violating_seeds.sort_unstable();
    out.violating_seeds.dedup();
    for v in out.by_property.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    Ok(out)
}

/// A failing run cut down: the faults it needs and the rounds it needs.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub property: &'static str,
    pub seed: u64,
    pub rounds: u8,
    pub schedule: Vec<ScheduledFault>,
    /// Faults that fired in the original run.
    pub faults_before: usize,
}

fn violates(s: &Scenario, seed: u64, property: &str) -> bool {
    simulate(s, seed, false).first_violation(property).is_some()
}

fn with(s: &Scenario, rounds: u8, schedule: &[ScheduledFault]) -> Scenario {
    let mut s = s.clone();
    s.rounds = rounds;
    s.profile.clear();
    s.schedule = schedule.to_vec();
    s
}

/// Shrinks the first violation of `seed`: keep only the faults that fired,
/// then drop each fault whose removal keeps the violation, then the rounds.
pub fn shrink(scenario: &Scenario, seed: u64) -> Option<Shrunk> {
    let original = simulate(scenario, seed, false);
    let property = original.violations.first()?.property.name();
    let mut schedule: Vec<ScheduledFault> = original
        .faults
        .iter()
        .filter(|f| f.fired)
        .map(|f| f.fault.clone())
        .collect();
    let faults_before = schedule.len();
    let mut rounds = scenario.rounds;
    if !violates(&with(scenario, rounds, &schedule), seed, property) {
        return None;
    }
    let mut i = 0;
    while i < schedule.len() {
        let mut fewer = schedule.clone();
        fewer.remove(i);
        if violates(&with(scenario, rounds, &fewer), seed, property) {
            schedule = fewer;
        } else {
            i += 1;
        }
    }
    for r in 1..rounds {
        if violates(&with(scenario, r, &schedule), seed, property) {
            rounds = r;
            break;
        }
    }
    Some(Shrunk {
        property,
        seed,
        rounds,
        schedule,
        faults_before,
    })
}
