//! `lockstep bench --against OTHER`: this build's checker timed against
//! another build's on the same search, both at once.
//!
//! On a shared or throttled machine two runs of the same binary a minute
//! apart differ by ±10%, which hides any change smaller than that. Run at
//! the same moment, one on each core, the two builds meet the same machine:
//! the ratio of their times is steady where the times are not. The cores
//! are swapped every pair (one core may be the faster), and the ratios are
//! summed up by their geometric mean.

use super::check::grouped;
use super::spin_twin::{child_args, PER_STATE_CLIENTS, PER_STATE_CRASHES, PER_STATE_RECIPE};
use super::{BenchArgs, UsageError};
use serde::Serialize;
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};

/// Bounds of `--pairs` and `--pair-states`.
const MAX_PAIRS: u32 = 100;
const MIN_PAIR_STATES: u64 = 1_000;

#[derive(Serialize, Debug, Clone, PartialEq)]
struct Pair {
    /// The cores this build's and the other build's search ran on (`None`:
    /// one after the other, on one core).
    cores: Option<(usize, usize)>,
    this_seconds: f64,
    other_seconds: f64,
    this_unique_states: u64,
    other_unique_states: u64,
    /// This build's seconds per unique state over the other's.
    ratio: f64,
}

#[derive(Serialize, Debug)]
struct Paired {
    against: String,
    search: String,
    pairs: Vec<Pair>,
    geometric_mean: f64,
    min: f64,
    max: f64,
    /// Whether both builds explored the same number of states in every
    /// pair (if not, the ratio is of time per unique state).
    same_states: bool,
}

/// One build's figures, from its `check --json`.
#[derive(serde::Deserialize)]
struct Figures {
    unique_states: u64,
    seconds: f64,
}

pub fn run(args: &BenchArgs, other: &Path) -> Result<ExitCode, UsageError> {
    let pairs = args.pairs;
    if !(1..=MAX_PAIRS).contains(&pairs) {
        return Err(UsageError(format!(
            "--pairs takes 1 to {MAX_PAIRS} pairs, got {pairs}"
        )));
    }
    if args.pair_states < MIN_PAIR_STATES {
        return Err(UsageError(format!(
            "--pair-states takes at least {} states (fewer are over before \
             they can be timed), got {}",
            grouped(MIN_PAIR_STATES),
            args.pair_states
        )));
    }
    let this = std::env::current_exe()
        .map_err(|e| UsageError(format!("bench --against: cannot find this executable: {e}")))?;
    check_executable(other)?;
    let cores = two_cores();
    let search = format!(
        "{PER_STATE_RECIPE}, {PER_STATE_CLIENTS} clients, {PER_STATE_CRASHES} crash, full check, \
         one thread each, first {} unique states",
        grouped(args.pair_states)
    );
    if !args.json {
        eprintln!(
            "paired against {}: {search}; {}",
            other.display(),
            match cores {
                Some(_) => "both at once, one on each core, cores swapped every pair",
                None => "one core only: one after the other, the order swapped every pair",
            }
        );
    }
    let mut done = Vec::new();
    for k in 0..pairs {
        let swap = k % 2 == 1;
        let pair = run_pair(&this, other, args.pair_states, cores, swap)?;
        if !args.json {
            eprintln!(
                "pair {}: this build {:.2} s, the other {:.2} s: {:.3}",
                k + 1,
                pair.this_seconds,
                pair.other_seconds,
                pair.ratio
            );
        }
        done.push(pair);
    }
    let summary = summarise(other, search, done);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serialisable")
        );
    } else {
        print(&summary);
    }
    Ok(ExitCode::SUCCESS)
}

/// `other` must be a file this user can run.
fn check_executable(other: &Path) -> Result<(), UsageError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(other)
        .map_err(|e| UsageError(format!("--against {}: {e}", other.display())))?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(UsageError(format!(
            "--against {}: not an executable file (give the path of another lockstep build, \
             e.g. a copy of target/release/lockstep made before a change)",
            other.display()
        )));
    }
    Ok(())
}

/// The first two cores this process may run on, if it may run on two.
fn two_cores() -> Option<(usize, usize)> {
    // SAFETY: `set` is a plain bit set the call fills in; the size passed
    // is its own.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        set
    };
    // SAFETY: reads bits of the set filled in above, within its size.
    let mut allowed =
        (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) });
    Some((allowed.next()?, allowed.next()?))
}

/// The check both builds run: the bench's per-state full check, on one
/// thread, stopped after `states` unique states.
fn search_args(states: u64) -> Vec<String> {
    let mut args = child_args(None);
    args.extend(["--threads", "1", "--max-states", &states.to_string()].map(String::from));
    args
}

/// Starts `exe`'s search, pinned to `core` if given.
fn start(exe: &Path, states: u64, core: Option<usize>) -> Result<Child, UsageError> {
    let mut cmd = Command::new(exe);
    cmd.args(search_args(states))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(core) = core {
        use std::os::unix::process::CommandExt;
        // SAFETY: the hook runs in the child between fork and exec; it
        // only fills a bit set on its stack and makes one system call,
        // both async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(core, &mut set);
                match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
    }
    cmd.spawn().map_err(|e| {
        UsageError(format!(
            "bench --against: cannot start {}: {e}",
            exe.display()
        ))
    })
}

/// Waits for a search and reads its figures.
fn finish(exe: &Path, states: u64, child: Child) -> Result<Figures, UsageError> {
    let out = child
        .wait_with_output()
        .map_err(|e| UsageError(format!("bench --against: {}: {e}", exe.display())))?;
    let shown = format!("{} {}", exe.display(), search_args(states).join(" "));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail = stderr.lines().last().unwrap_or("");
    match out.status.code() {
        // Nothing violated, a violation (resource_exclusion is violated at
        // this configuration), or stopped at the state limit, as asked.
        Some(0 | 1 | 3) => {}
        Some(c) => {
            return Err(UsageError(format!(
                "bench --against: `{shown}` exited with status {c}: {tail}"
            )))
        }
        None => {
            return Err(UsageError(format!(
                "bench --against: `{shown}` was killed by a signal (out of memory?)"
            )))
        }
    }
    serde_json::from_slice::<Figures>(&out.stdout).map_err(|e| {
        UsageError(format!(
            "bench --against: `{shown}` printed no check figures this bench can read ({e}); \
             is it a lockstep build with `check --json`?"
        ))
    })
}

/// Runs one pair: at once on two cores (this build on the second when
/// `swap`), or one after the other (the other build first when `swap`).
fn run_pair(
    this: &Path,
    other: &Path,
    states: u64,
    cores: Option<(usize, usize)>,
    swap: bool,
) -> Result<Pair, UsageError> {
    let (a, b) = match cores {
        Some((c0, c1)) => {
            let (mine, theirs) = if swap { (c1, c0) } else { (c0, c1) };
            let mut a = start(this, states, Some(mine))?;
            let b = match start(other, states, Some(theirs)) {
                Ok(b) => b,
                Err(e) => {
                    // Not left running on its own.
                    a.kill().ok();
                    a.wait().ok();
                    return Err(e);
                }
            };
            // Both are waited for before either's failure is reported.
            let (a, b) = (finish(this, states, a), finish(other, states, b));
            (a?, b?)
        }
        None => {
            let run = |exe: &Path| finish(exe, states, start(exe, states, None)?);
            match swap {
                true => {
                    let b = run(other)?;
                    (run(this)?, b)
                }
                false => {
                    let a = run(this)?;
                    (a, run(other)?)
                }
            }
        }
    };
    let per_state = |f: &Figures| f.seconds / f.unique_states.max(1) as f64;
    Ok(Pair {
        cores: cores.map(|(c0, c1)| if swap { (c1, c0) } else { (c0, c1) }),
        this_seconds: a.seconds,
        other_seconds: b.seconds,
        this_unique_states: a.unique_states,
        other_unique_states: b.unique_states,
        ratio: per_state(&a) / per_state(&b).max(f64::MIN_POSITIVE),
    })
}

fn summarise(other: &Path, search: String, pairs: Vec<Pair>) -> Paired {
    let logs: f64 = pairs.iter().map(|p| p.ratio.ln()).sum();
    let ratios = pairs.iter().map(|p| p.ratio);
    Paired {
        against: other.display().to_string(),
        search,
        geometric_mean: (logs / pairs.len().max(1) as f64).exp(),
        min: ratios.clone().fold(f64::INFINITY, f64::min),
        max: ratios.fold(0.0, f64::max),
        same_states: pairs
            .iter()
            .all(|p| p.this_unique_states == p.other_unique_states),
        pairs,
    }
}

fn print(p: &Paired) {
    println!("paired against {}: {}", p.against, p.search);
    let rows: Vec<Vec<String>> = p
        .pairs
        .iter()
        .enumerate()
        .map(|(k, pair)| {
            vec![
                (k + 1).to_string(),
                pair.cores.map_or("-".into(), |(a, b)| format!("{a} / {b}")),
                format!("{:.2}", pair.this_seconds),
                format!("{:.2}", pair.other_seconds),
                format!("{:.3}", pair.ratio),
            ]
        })
        .collect();
    print!(
        "{}",
        reports::table::render(
            &[
                "pair",
                "cores (this / other)",
                "this build (s)",
                "other build (s)",
                "this / other"
            ],
            &rows
        )
    );
    if !p.same_states {
        println!(
            "the builds explored different numbers of states: the ratios are of time per unique state"
        );
    }
    println!(
        "this build takes {:.3}x the other's time (geometric mean of {} pairs; {:.3} to {:.3}). \
         To know the noise, run a build against a copy of itself.",
        p.geometric_mean,
        p.pairs.len(),
        p.min,
        p.max
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(this: f64, other: f64, states: (u64, u64)) -> Pair {
        Pair {
            cores: Some((0, 1)),
            this_seconds: this,
            other_seconds: other,
            this_unique_states: states.0,
            other_unique_states: states.1,
            ratio: (this / states.0 as f64) / (other / states.1 as f64),
        }
    }

    #[test]
    fn the_summary_is_the_geometric_mean_of_the_ratios() {
        let s = summarise(
            Path::new("old"),
            "s".into(),
            vec![
                pair(1.0, 2.0, (10, 10)),
                pair(2.0, 1.0, (10, 10)),
                pair(1.0, 4.0, (10, 10)),
            ],
        );
        // (0.5 · 2 · 0.25)^(1/3) = 0.25^(1/3)
        assert!((s.geometric_mean - 0.25f64.powf(1.0 / 3.0)).abs() < 1e-12);
        assert_eq!((s.min, s.max), (0.25, 2.0));
        assert!(s.same_states);
    }

    #[test]
    fn different_state_counts_compare_time_per_state() {
        let s = summarise(Path::new("old"), "s".into(), vec![pair(2.0, 1.0, (20, 10))]);
        assert!(!s.same_states);
        assert!((s.geometric_mean - 1.0).abs() < 1e-12);
    }
}
