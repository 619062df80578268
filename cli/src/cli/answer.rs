//! `lockstep bench`'s time to answer: the shortest `mutual_exclusion`
//! counterexample of fair-predecessor with 3 clients and 1 pause, asked on
//! its own (the checker stops at it), beside the SPIN twin of the same lock
//! (`../shared/anchors/fair_lock.pml`, breadth-first, so its trail is the
//! shortest too) run in the same bench when `spin` and `gcc` are installed.

use super::UsageError;
use models::checker::{check, CheckOptions, Status};
use models::model::{FaultBudget, LockModelCfg};
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

pub fn measure(anchors: &Path) -> Result<Answer, UsageError> {
    let recipe = models::recipes::lookup("fair-predecessor", None).map_err(UsageError)?;
    let cfg = LockModelCfg {
        faults: FaultBudget {
            pauses: 1,
            ..FaultBudget::default()
        },
        ..LockModelCfg::new(recipe, 3)
    };
    let model = cfg.into_model();
    let started = Instant::now();
    let r = check(
        &model,
        CheckOptions::default().asking(&[PropertyName::MutualExclusion]),
    )
    .map_err(|e| UsageError(e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    let p = r.property(PropertyName::MutualExclusion.name());
    if p.status != Status::Violated {
        return Err(UsageError(
            "bench: fair-predecessor with 1 pause no longer violates mutual_exclusion".into(),
        ));
    }
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
    let model = anchors.join("fair_lock.pml");
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
    let dir = scratch_dir()?;
    let run = |cmd: &mut Command| -> Result<std::process::Output, String> {
        let out = cmd
            .current_dir(&dir)
            .output()
            .map_err(|e| format!("{cmd:?}: {e}"))?;
        Ok(out)
    };
    std::fs::copy(&model, dir.join("fair_lock.pml")).map_err(|e| e.to_string())?;
    let defines = ["-DN=3", "-DCRASHES=0", "-DPAUSES=1"];
    let a = run(Command::new("spin")
        .arg("-a")
        .args(defines)
        .arg("fair_lock.pml"))?;
    if !dir.join("pan.c").is_file() {
        return Err(format!(
            "spin -a failed: {}",
            String::from_utf8_lossy(&a.stdout)
        ));
    }
    let cc = run(Command::new("gcc").args([
        "-O2",
        "-DSAFETY",
        "-DNOREDUCE",
        "-DBFS",
        "-o",
        "pan",
        "pan.c",
    ]))?;
    if !cc.status.success() {
        return Err(format!(
            "gcc failed: {}",
            String::from_utf8_lossy(&cc.stderr)
        ));
    }
    let started = Instant::now();
    let pan = run(Command::new(dir.join("pan")).args(["-m10000", "-w22"]))?;
    let seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    let log = String::from_utf8_lossy(&pan.stdout);
    if !log.contains("assertion violated") {
        return Err("the SPIN twin found no violation".into());
    }
    // "pan:1: assertion violated ... (at depth 12)"
    let depth = log
        .split("(at depth ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|d| d.trim().parse().ok())
        .ok_or("pan's output names no error depth")?;
    Ok((seconds, depth))
}

fn scratch_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("lockstep-spin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}
