//! `lockstep bench`'s comparisons with the SPIN twin of fair-predecessor
//! (the repository's `anchors/fair_lock.pml`), each run in the same bench
//! when `spin` and `gcc` are installed:
//!
//! - the time to answer: the shortest `mutual_exclusion` counterexample
//!   with 3 clients and 1 pause, asked on its own (the checker stops at
//!   it), beside the twin's breadth-first search (so its trail is the
//!   shortest too);
//! - throughput and memory per unique state: 4 clients and 1 crash, the
//!   lockstep check run as a child process (a clean peak memory) safety
//!   only, beside the twin's full safe check, in rounds (`--rounds`, the
//!   median round reported), then in full once.

use super::UsageError;
use models::checker::{check, CheckOptions, Status};
use models::model::{FaultBudget, ModelCfg};
use models::properties::PropertyName;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Serialize)]
pub struct Answer {
    /// lockstep: seconds to the verdict, steps of the counterexample.
    pub seconds: f64,
    pub steps: usize,
    pub unique_states: u64,
    /// The SPIN twin, measured in this run (pan's wall time, its build
    /// left out), or why it was not.
    pub spin_seconds: Option<f64>,
    pub spin_steps: Option<u64>,
    pub spin_skipped: Option<String>,
}

impl Answer {
    /// lockstep's time over SPIN's, when both were measured.
    pub fn ratio(&self) -> Option<f64> {
        self.spin_seconds.map(|s| self.seconds / s.max(1e-3))
    }
}

/// The file of the SPIN twin in its directory.
const TWIN: &str = "fair_lock.pml";

/// The directory of the SPIN twin: `given` (`--anchors DIR`), else the
/// `anchors/` directory of the repository this executable was built from.
/// Either must hold `fair_lock.pml`: a bench that cannot find its twin says
/// so before it measures anything.
pub fn anchors(given: Option<&Path>) -> Result<PathBuf, UsageError> {
    let dir = match given {
        Some(dir) => dir.to_path_buf(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../anchors"),
    };
    // A path without `..` in it, where it exists.
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    if dir.join(TWIN).is_file() {
        return Ok(dir);
    }
    Err(UsageError(match given {
        Some(_) => format!(
            "bench: --anchors {}: no {TWIN} there (the SPIN twin of the fair lock; the \
             repository keeps it in anchors/)",
            dir.display()
        ),
        None => format!(
            "bench: no SPIN twin at {} (the default: anchors/ in the repository this lockstep \
             was built from); --anchors DIR names the directory that holds {TWIN}",
            dir.join(TWIN).display()
        ),
    }))
}

pub fn measure(anchors: &Path) -> Result<Answer, UsageError> {
    let recipe = models::recipes::lookup("fair-predecessor", None).map_err(UsageError)?;
    let cfg = ModelCfg {
        faults: FaultBudget {
            pauses: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(recipe, 3)
    };
    let model = cfg.into_model()?;
    let started = Instant::now();
    let r = check(
        &model,
        CheckOptions::default().asking(&[PropertyName::MutualExclusion]),
    )
    .map_err(super::check_failed)?;
    let seconds = started.elapsed().as_secs_f64();
    let p = r.property(PropertyName::MutualExclusion);
    let Some(p) = p.filter(|p| p.status == Status::Violated) else {
        return Err(UsageError(
            "bench: fair-predecessor with 1 pause no longer violates mutual_exclusion".into(),
        ));
    };
    let steps = p.path.as_ref().map_or(0, Vec::len);
    let (spin_seconds, spin_steps, spin_skipped) = match spin_twin(anchors) {
        Ok((s, d)) => (Some(s), Some(d), None),
        Err(why) => (None, None, Some(why)),
    };
    Ok(Answer {
        seconds,
        steps,
        unique_states: r.unique_states,
        spin_seconds,
        spin_steps,
        spin_skipped,
    })
}

/// Builds and runs the SPIN twin's breadth-first search for the same
/// question; returns pan's wall seconds and the error's depth (its steps).
fn spin_twin(anchors: &Path) -> Result<(f64, u64), String> {
    let pan = run_spin_twin(
        anchors,
        &["-DN=3", "-DCRASHES=0", "-DPAUSES=1"],
        &["-DSAFETY", "-DNOREDUCE", "-DBFS"],
    )?;
    if !pan.log.contains("assertion violated") {
        return Err("the SPIN twin found no violation".into());
    }
    Ok((pan.wall_seconds, error_depth(&pan.log)?))
}

/// The depth of pan's error: "pan:1: assertion violated ... (at depth 12)".
fn error_depth(log: &str) -> Result<u64, String> {
    log.split("(at depth ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|d| d.trim().parse().ok())
        .ok_or_else(|| "pan's output names no error depth".to_string())
}

/// One run of the SPIN twin: pan's output and its wall seconds (the build
/// not counted).
struct PanRun {
    wall_seconds: f64,
    log: String,
}

/// Builds the SPIN twin (`spin -a DEFINES fair_lock.pml`, `gcc -O2 CFLAGS
/// -o pan pan.c`) in a scratch directory and runs `./pan -m10000 -w22`, as
/// `anchors/README.md` shows by hand; or says why it could not.
fn run_spin_twin(anchors: &Path, defines: &[&str], cflags: &[&str]) -> Result<PanRun, String> {
    let model = anchors.join(TWIN);
    if !model.is_file() {
        return Err(format!("no SPIN twin at {}", model.display()));
    }
    for tool in ["spin", "gcc"] {
        if Command::new(tool).arg("-V").output().is_err() {
            return Err(format!(
                "`{tool}` is not installed (apt-get install spin gcc)"
            ));
        }
    }
    let scratch = ScratchDir::new()?;
    let dir = &scratch.0;
    let run = |cmd: &mut Command| -> Result<std::process::Output, String> {
        cmd.current_dir(dir)
            .output()
            .map_err(|e| format!("{cmd:?}: {e}"))
    };
    std::fs::copy(&model, dir.join(TWIN)).map_err(|e| e.to_string())?;
    let a = run(Command::new("spin").arg("-a").args(defines).arg(TWIN))?;
    if !dir.join("pan.c").is_file() {
        return Err(format!(
            "spin -a failed: {}",
            String::from_utf8_lossy(&a.stdout)
        ));
    }
    let cc = run(Command::new("gcc")
        .arg("-O2")
        .args(cflags)
        .args(["-o", "pan", "pan.c"]))?;
    if !cc.status.success() {
        return Err(format!(
            "gcc failed: {}",
            String::from_utf8_lossy(&cc.stderr)
        ));
    }
    let started = Instant::now();
    let pan = run(Command::new(dir.join("pan")).args(["-m10000", "-w22"]))?;
    let wall_seconds = started.elapsed().as_secs_f64();
    Ok(PanRun {
        wall_seconds,
        log: String::from_utf8_lossy(&pan.stdout).into_owned(),
    })
}

/// A scratch directory for one SPIN build, removed when dropped (on every
/// path, errors included).
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Result<Self, String> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lockstep-spin-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------
// Throughput and memory per unique state, beside the SPIN twin.

/// The configuration both sides check: fair-predecessor, 4 clients, 1
/// crash (the twin's `-DN=4 -DCRASHES=1`). `bench --against` times the
/// same search.
pub const PER_STATE_RECIPE: &str = "fair-predecessor";
pub const PER_STATE_CLIENTS: u8 = 4;
pub const PER_STATE_CRASHES: u8 = 1;

/// One `lockstep check --json`, run as a child process so its peak memory
/// is its own.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct LockstepRow {
    pub clients: u8,
    pub crashes: u8,
    pub unique_states: u64,
    /// The search's seconds (the child's own figure).
    pub seconds: f64,
    /// The child process's wall seconds, start and JSON output included.
    pub wall_seconds: f64,
    pub unique_states_per_second: f64,
    /// The child's peak resident memory, and per unique state (absent
    /// where /proc cannot be read).
    pub peak_memory_bytes: Option<u64>,
    pub bytes_per_state: Option<f64>,
    /// The fingerprint table and the graph, in bytes.
    pub index_bytes: u64,
    pub peak_frontier: u64,
}

/// The SPIN twin's full safe check (`-DSAFETY -DNOREDUCE`), as pan reports it.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct SpinRow {
    pub clients: u8,
    pub crashes: u8,
    /// pan's "states, stored".
    pub unique_states: u64,
    /// pan's "elapsed time".
    pub seconds: f64,
    /// pan's wall time, measured here (its build not counted).
    pub wall_seconds: f64,
    /// pan's "rate" (states stored per second).
    pub unique_states_per_second: f64,
    /// pan's "total actual memory usage" (its `-w22` hash table included).
    pub peak_memory_bytes: u64,
    pub bytes_per_state: f64,
}

/// lockstep's unique states a second over the twin's.
fn rate_over(lockstep: &LockstepRow, spin: &SpinRow) -> f64 {
    lockstep.unique_states_per_second / spin.unique_states_per_second
}

/// lockstep over SPIN, per unique state, measured in the same run: the
/// median round's (see [`PerState::rounds`]).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Ratios {
    pub safety_only_rate: f64,
    /// The lowest and highest of the rounds' safety-only ratios.
    pub safety_only_rate_lowest: f64,
    pub safety_only_rate_highest: f64,
    pub full_check_rate: f64,
    pub safety_only_bytes_per_state: Option<f64>,
    pub full_check_bytes_per_state: Option<f64>,
}

/// One round of the safety-only comparison: lockstep's check and the
/// twin's, one right after the other (which goes first alternates), so
/// that both meet much the same load from the rest of the machine.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Round {
    pub lockstep_safety_only: LockstepRow,
    pub spin_twin: Option<SpinRow>,
    /// lockstep's unique states a second over pan's, in this round.
    pub safety_only_rate: Option<f64>,
}

impl Round {
    fn new(lockstep_safety_only: LockstepRow, spin_twin: Option<SpinRow>) -> Self {
        Round {
            safety_only_rate: spin_twin
                .as_ref()
                .map(|s| rate_over(&lockstep_safety_only, s)),
            lockstep_safety_only,
            spin_twin,
        }
    }
}

#[derive(Serialize)]
pub struct PerState {
    /// `check --property mutual_exclusion`: safety only, no graph edges
    /// kept (the median round's).
    pub lockstep_safety_only: LockstepRow,
    /// `check` with every property, progress included: keeps the edges.
    pub lockstep_full_check: LockstepRow,
    /// The checker's worker threads (every core); pan runs on one.
    pub lockstep_threads: usize,
    /// The twin's run in the median round.
    pub spin_twin: Option<SpinRow>,
    pub spin_skipped: Option<String>,
    /// Every round, in the order run. A machine shared with other work
    /// moves a single run's time by a quarter or more, so the comparison
    /// is repeated and the median round's figures are the ones reported.
    pub rounds: Vec<Round>,
    pub lockstep_over_spin: Option<Ratios>,
}

/// The round whose ratio is the median (the lower of the two middle ones
/// for an even count) among the rounds the twin ran in; by lockstep's rate
/// where it ran in none. `rounds` is not empty.
fn median_round(rounds: &[Round]) -> usize {
    let compared = rounds.iter().any(|r| r.safety_only_rate.is_some());
    let mut order: Vec<(f64, usize)> = rounds
        .iter()
        .enumerate()
        .filter_map(|(k, r)| match compared {
            true => r.safety_only_rate.map(|x| (x, k)),
            false => Some((r.lockstep_safety_only.unique_states_per_second, k)),
        })
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    order[(order.len() - 1) / 2].1
}

impl PerState {
    /// The figures of `rounds` (at least one) and the full check.
    fn new(rounds: Vec<Round>, full: LockstepRow, spin_skipped: Option<String>) -> Self {
        let median = rounds[median_round(&rounds)].clone();
        let mut out = PerState {
            lockstep_safety_only: median.lockstep_safety_only,
            lockstep_full_check: full,
            lockstep_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            spin_twin: median.spin_twin,
            spin_skipped,
            rounds,
            lockstep_over_spin: None,
        };
        out.lockstep_over_spin = out.ratios();
        out
    }

    fn ratios(&self) -> Option<Ratios> {
        let spin = self.spin_twin.as_ref()?;
        let rate = |r: &LockstepRow| rate_over(r, spin);
        let bytes = |r: &LockstepRow| r.bytes_per_state.map(|b| b / spin.bytes_per_state);
        let each = self.rounds.iter().filter_map(|r| r.safety_only_rate);
        let safety_only_rate = rate(&self.lockstep_safety_only);
        Some(Ratios {
            safety_only_rate,
            safety_only_rate_lowest: each.clone().fold(safety_only_rate, f64::min),
            safety_only_rate_highest: each.fold(safety_only_rate, f64::max),
            full_check_rate: rate(&self.lockstep_full_check),
            safety_only_bytes_per_state: bytes(&self.lockstep_safety_only),
            full_check_bytes_per_state: bytes(&self.lockstep_full_check),
        })
    }
}

/// Measures `rounds` rounds of lockstep's safety-only check beside the
/// SPIN twin's full safe check, then lockstep's full check once (child
/// processes of this executable, one after the other).
pub fn measure_per_state(anchors: &Path, rounds: u32, quiet: bool) -> Result<PerState, UsageError> {
    let say = |what: &str| {
        if !quiet {
            eprintln!("measuring per unique state: {what}");
        }
    };
    assert!(rounds >= 1, "the comparison takes at least one round");
    let mut done = Vec::new();
    let mut spin_skipped = None;
    for k in 1..=rounds {
        let safety = || {
            say(&format!(
                "round {k} of {rounds}: lockstep check, safety only (child process)"
            ));
            lockstep_child(Some("mutual_exclusion")).map_err(UsageError)
        };
        // Once the twin could not run, it is not tried again.
        let spin = || match spin_skipped.is_none() {
            true => {
                say(&format!(
                    "round {k} of {rounds}: SPIN twin, full safe check"
                ));
                spin_per_state(anchors)
            }
            false => Err(String::new()),
        };
        let (lockstep_safety_only, spin) = match k % 2 {
            1 => {
                let l = safety()?;
                (l, spin())
            }
            _ => {
                let s = spin();
                (safety()?, s)
            }
        };
        let spin_twin = match spin {
            Ok(s) => Some(s),
            Err(why) => {
                spin_skipped.get_or_insert(why);
                None
            }
        };
        done.push(Round::new(lockstep_safety_only, spin_twin));
    }
    say("lockstep check, full (child process)");
    let full = lockstep_child(None).map_err(UsageError)?;
    Ok(PerState::new(done, full, spin_skipped))
}

/// The check's arguments, `--property mutual_exclusion` for safety only.
pub fn child_args(property: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = [
        "check",
        "--recipe",
        PER_STATE_RECIPE,
        "--clients",
        &PER_STATE_CLIENTS.to_string(),
        "--crashes",
        &PER_STATE_CRASHES.to_string(),
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(p) = property {
        args.extend(["--property".to_string(), p.to_string()]);
    }
    args
}

/// Runs `lockstep check … --json` as a child process and reads its figures.
fn lockstep_child(property: Option<&str>) -> Result<LockstepRow, String> {
    let args = child_args(property);
    let shown = super::shell::lockstep_command(&args);
    let failed = |why: String| format!("bench: per-state comparison: `{shown}` failed: {why}");
    let exe =
        std::env::current_exe().map_err(|e| failed(format!("cannot find this executable: {e}")))?;
    let started = Instant::now();
    let out = Command::new(&exe)
        .args(&args)
        .output()
        .map_err(|e| failed(format!("cannot start {}: {e}", exe.display())))?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    let tail: String = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    match out.status.code() {
        // 0: nothing violated; 1: a property violated (the full check's
        // resource_exclusion, as expected).
        Some(0 | 1) => {}
        Some(3) => {
            return Err(failed(format!(
                "exit status 3: the search stopped at its state limit, so its figures are no full search's\n{tail}"
            )))
        }
        Some(c) => return Err(failed(format!("exit status {c}\n{tail}"))),
        None => {
            return Err(failed(format!(
                "killed by a signal (out of memory?)\n{tail}"
            )))
        }
    }
    let text = String::from_utf8_lossy(&out.stdout);
    parse_check_json(&text, wall_seconds).map_err(failed)
}

/// The figures of `lockstep check --json` this comparison reads.
#[derive(serde::Deserialize)]
struct CheckFigures {
    clients: u8,
    crashes: u8,
    complete: bool,
    decided_early: bool,
    unique_states: u64,
    seconds: f64,
    unique_states_per_second: f64,
    peak_memory_bytes: Option<u64>,
    bytes_per_state: Option<f64>,
    index_bytes: u64,
    peak_frontier: u64,
}

/// A `check --json` output as a row; only a complete search's figures are
/// a throughput.
fn parse_check_json(text: &str, wall_seconds: f64) -> Result<LockstepRow, String> {
    let c: CheckFigures =
        serde_json::from_str(text).map_err(|e| format!("its JSON output does not parse: {e}"))?;
    if !c.complete || c.decided_early {
        return Err(format!(
            "the search did not explore every state (complete: {}, decided early: {})",
            c.complete, c.decided_early
        ));
    }
    Ok(LockstepRow {
        clients: c.clients,
        crashes: c.crashes,
        unique_states: c.unique_states,
        seconds: c.seconds,
        wall_seconds,
        unique_states_per_second: c.unique_states_per_second,
        peak_memory_bytes: c.peak_memory_bytes,
        bytes_per_state: c.bytes_per_state,
        index_bytes: c.index_bytes,
        peak_frontier: c.peak_frontier,
    })
}

/// The twin's full safe check: `spin -a -DN=4 -DCRASHES=1`, `gcc -O2
/// -DSAFETY -DNOREDUCE`, `./pan -m10000 -w22`.
fn spin_per_state(anchors: &Path) -> Result<SpinRow, String> {
    let n = format!("-DN={PER_STATE_CLIENTS}");
    let crashes = format!("-DCRASHES={PER_STATE_CRASHES}");
    let pan = run_spin_twin(anchors, &[&n, &crashes], &["-DSAFETY", "-DNOREDUCE"])?;
    let s = parse_pan(&pan.log)?;
    if s.errors != 0 {
        return Err(format!(
            "the SPIN twin's full check reported {} error(s); its figures are no full search's",
            s.errors
        ));
    }
    Ok(SpinRow {
        clients: PER_STATE_CLIENTS,
        crashes: PER_STATE_CRASHES,
        unique_states: s.states_stored,
        seconds: s.elapsed_seconds,
        wall_seconds: pan.wall_seconds,
        unique_states_per_second: s.rate,
        peak_memory_bytes: s.memory_bytes,
        bytes_per_state: s.memory_bytes as f64 / s.states_stored.max(1) as f64,
    })
}

/// What pan says of a search.
#[derive(Debug, PartialEq)]
struct PanStats {
    states_stored: u64,
    errors: u64,
    elapsed_seconds: f64,
    /// pan's "rate"; it prints none for runs under 0.01 s, and then it is
    /// states stored over the elapsed time.
    rate: f64,
    /// "total actual memory usage", which pan gives in units of 2^20 bytes.
    memory_bytes: u64,
}

/// Reads pan's summary: "  2250368 states, stored", "errors: 0",
/// "  324.841\ttotal actual memory usage", "pan: elapsed time 2.75 seconds",
/// "pan: rate 818315.64 states/second". Counts may come as "%g" (1.2e+08).
fn parse_pan(log: &str) -> Result<PanStats, String> {
    let number = |s: &str| s.trim().parse::<f64>().ok();
    let find = |what: &str, get: &dyn Fn(&str) -> Option<f64>| -> Result<f64, String> {
        log.lines()
            .find_map(get)
            .ok_or_else(|| format!("pan's output has no {what}"))
    };
    let states_stored = find("\"states, stored\"", &|l: &str| {
        l.split_once("states, stored").and_then(|(n, _)| number(n))
    })?;
    let errors = find("\"errors:\"", &|l: &str| {
        l.split_once("errors:")
            .and_then(|(_, n)| number(n.split_whitespace().next()?))
    })?;
    let memory_mib = find("\"total actual memory usage\"", &|l: &str| {
        l.split_once("total actual memory usage")
            .and_then(|(n, _)| number(n))
    })?;
    let elapsed_seconds = find("\"pan: elapsed time\"", &|l: &str| {
        l.strip_prefix("pan: elapsed time")
            .and_then(|r| number(r.trim().trim_end_matches("seconds")))
    })?;
    let printed_rate = log.lines().find_map(|l| {
        l.strip_prefix("pan: rate")
            .and_then(|r| number(r.trim().trim_end_matches("states/second")))
    });
    let rate = match printed_rate {
        Some(r) => r,
        None if elapsed_seconds > 0.0 => states_stored / elapsed_seconds,
        None => return Err("pan's output has no rate (and an elapsed time of 0)".into()),
    };
    Ok(PanStats {
        states_stored: states_stored as u64,
        errors: errors as u64,
        elapsed_seconds,
        rate,
        memory_bytes: (memory_mib * 1048576.0).round() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `./pan -m10000 -w22` on `spin -a -DN=4 -DCRASHES=1 fair_lock.pml`,
    /// built with `gcc -O2 -DSAFETY -DNOREDUCE` (SPIN 6.5.2).
    const PAN_N4: &str = "\
Depth=      47 States=    1e+06 Transitions= 3.35e+06 Memory=   162.438\tt=     1.18 R=   8e+05
Depth=      52 States=    2e+06 Transitions= 6.73e+06 Memory=   292.321\tt=     2.41 R=   8e+05

(Spin Version 6.5.2 -- 6 December 2019)

Full statespace search for:
\tnever claim         \t- (none specified)
\tassertion violations\t+
\tcycle checks       \t- (disabled by -DSAFETY)
\tinvalid end states\t+

State-vector 152 byte, depth reached 52, errors: 0
  2250368 states, stored
  5351921 states, matched
  7602289 transitions (= stored+matched)
        0 atomic steps
hash conflicts:    753575 (resolved)

Stats on memory usage (in Megabytes):
  369.132\tequivalent memory usage for states (stored*(State-vector + overhead))
  292.822\tactual memory usage for states (compression: 79.33%)
         \tstate-vector as stored = 116 byte + 20 byte overhead
   32.000\tmemory used for hash table (-w22)
    0.458\tmemory used for DFS stack (-m10000)
  324.841\ttotal actual memory usage


unreached in proctype client
\tfair_lock.pml:245, state 145, \"-end-\"
\t(1 of 145 states)
unreached in proctype store
\tfair_lock.pml:340, state 531, \"-end-\"
\t(1 of 531 states)

pan: elapsed time 2.75 seconds
pan: rate 818315.64 states/second
";

    #[test]
    fn pan_output_is_read() {
        let s = parse_pan(PAN_N4).unwrap();
        assert_eq!(
            s,
            PanStats {
                states_stored: 2_250_368,
                errors: 0,
                elapsed_seconds: 2.75,
                rate: 818_315.64,
                memory_bytes: (324.841f64 * 1048576.0).round() as u64,
            }
        );
    }

    #[test]
    fn pan_output_without_rate_or_in_g_notation() {
        // A short run prints no rate; a large count comes as %g.
        let log = "State-vector 152 byte, depth reached 9, errors: 1\n\
                   1.2345678e+08 states, stored\n\
                   \x20 32.5\ttotal actual memory usage\n\
                   pan: elapsed time 2 seconds\n";
        let s = parse_pan(log).unwrap();
        assert_eq!(s.states_stored, 123_456_780);
        assert_eq!(s.errors, 1);
        assert_eq!(s.rate, 123_456_780.0 / 2.0);
        let no_memory = PAN_N4.replace("total actual memory usage", "total");
        let e = parse_pan(&no_memory).unwrap_err();
        assert!(e.contains("total actual memory usage"), "{e}");
    }

    #[test]
    fn a_missing_twin_is_a_reason_not_a_failure() {
        let why = spin_per_state(Path::new("/nonexistent/anchors")).unwrap_err();
        assert!(why.contains("no SPIN twin at"), "{why}");
    }

    #[test]
    fn pan_error_depth_is_read() {
        let log = "pan:1: assertion violated  !(me==0) (at depth 12)\n";
        assert_eq!(error_depth(log), Ok(12));
        assert!(error_depth("no error here").is_err());
    }

    /// The head of `lockstep check --recipe fair-predecessor --clients 4
    /// --crashes 1 --json` (its properties cut short).
    const CHECK_N4: &str = r#"{
  "recipe": "fair-predecessor",
  "clients": 4,
  "rounds": 1,
  "crashes": 1,
  "pauses": 0,
  "partitions": 0,
  "lost_replies": 0,
  "fencing": false,
  "policy": "naive",
  "symmetry": true,
  "complete": true,
  "decided_early": false,
  "max_states": 26572083,
  "max_states_from": "the default for this machine",
  "states": 14306614,
  "unique_states": 4920191,
  "max_depth": 70,
  "seconds": 41.580666748,
  "states_per_second": 344068.89352461236,
  "unique_states_per_second": 118328.8144420305,
  "peak_memory_bytes": 433979392,
  "bytes_per_state": 88.20376932521522,
  "peak_frontier": 189712,
  "index_bytes": 212860928,
  "properties": [
    {"name": "resource_exclusion", "kind": "always", "status": "violated",
     "decided_after": 1.5, "counterexample": []}
  ]
}"#;

    #[test]
    fn child_check_json_is_read() {
        let r = parse_check_json(CHECK_N4, 42.0).unwrap();
        assert_eq!(
            r,
            LockstepRow {
                clients: 4,
                crashes: 1,
                unique_states: 4_920_191,
                seconds: 41.580666748,
                wall_seconds: 42.0,
                unique_states_per_second: 118328.8144420305,
                peak_memory_bytes: Some(433_979_392),
                bytes_per_state: Some(88.20376932521522),
                index_bytes: 212_860_928,
                peak_frontier: 189_712,
            }
        );
        // No /proc: no memory figures.
        let no_proc = CHECK_N4
            .replace("433979392", "null")
            .replace("88.20376932521522", "null");
        let r = parse_check_json(&no_proc, 1.0).unwrap();
        assert_eq!((r.peak_memory_bytes, r.bytes_per_state), (None, None));
        // A search cut short is no throughput; garbage is an error, not a panic.
        let cut = CHECK_N4.replace("\"complete\": true", "\"complete\": false");
        assert!(parse_check_json(&cut, 1.0)
            .unwrap_err()
            .contains("every state"));
        assert!(parse_check_json("error: --recipe", 1.0)
            .unwrap_err()
            .contains("does not parse"));
        assert_eq!(
            child_args(Some("mutual_exclusion")).join(" "),
            "check --recipe fair-predecessor --clients 4 --crashes 1 --json --property mutual_exclusion"
        );
    }

    #[test]
    fn ratios_are_lockstep_over_spin() {
        let row = parse_check_json(CHECK_N4, 1.0).unwrap();
        let spin = SpinRow {
            clients: 4,
            crashes: 1,
            unique_states: 2_250_368,
            seconds: 2.75,
            wall_seconds: 2.8,
            unique_states_per_second: 818_315.64,
            peak_memory_bytes: 340_620_000,
            bytes_per_state: 151.4,
        };
        let round = |rate: f64| {
            let mut l = row.clone();
            l.unique_states_per_second = rate;
            Round::new(l, Some(spin.clone()))
        };
        let p = PerState::new(
            vec![round(900_000.0), round(700_000.0), round(800_000.0)],
            row,
            None,
        );
        // The median round's figures, the lowest and highest beside them.
        assert_eq!(p.lockstep_safety_only.unique_states_per_second, 800_000.0);
        let r = p.lockstep_over_spin.clone().unwrap();
        assert!((r.safety_only_rate - 800_000.0 / 818_315.64).abs() < 1e-12);
        assert!((r.safety_only_rate_lowest - 700_000.0 / 818_315.64).abs() < 1e-12);
        assert!((r.safety_only_rate_highest - 900_000.0 / 818_315.64).abs() < 1e-12);
        assert!((r.full_check_rate - 118328.8144420305 / 818_315.64).abs() < 1e-12);
        assert!((r.full_check_bytes_per_state.unwrap() - 88.20376932521522 / 151.4).abs() < 1e-12);
    }

    #[test]
    fn the_median_round_is_the_middle_ratio() {
        let row = parse_check_json(CHECK_N4, 1.0).unwrap();
        let round = |lockstep: f64, pan: Option<f64>| {
            let mut l = row.clone();
            l.unique_states_per_second = lockstep;
            Round {
                lockstep_safety_only: l,
                spin_twin: None,
                safety_only_rate: pan.map(|p| lockstep / p),
            }
        };
        // By the ratio, not by either side's rate alone.
        let rounds = [
            round(600.0, Some(400.0)),
            round(900.0, Some(1000.0)),
            round(700.0, Some(600.0)),
        ];
        assert_eq!(median_round(&rounds), 2);
        // An even count: the lower middle.
        assert_eq!(median_round(&rounds[..2]), 1);
        assert_eq!(median_round(&rounds[..1]), 0);
        // Rounds the twin did not run in are left out of the median.
        let mixed = [round(100.0, None), round(900.0, Some(1000.0))];
        assert_eq!(median_round(&mixed), 1);
        // No twin at all: by lockstep's rate.
        let alone = [round(300.0, None), round(100.0, None), round(200.0, None)];
        assert_eq!(median_round(&alone), 2);
    }
}
