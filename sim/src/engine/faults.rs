//! The faults of a run: the scenario's schedule plus the randomized ones
//! its profile draws, each kind from its own stream of the seed.

use crate::rng::{between, exponential, stream};
use crate::scenario::{FaultKind, Scenario, ScheduledFault};

/// The faults of a run of `s` with `seed`: its schedule and the faults its
/// profile draws, in time order. Where crashes do not restart (`restart =
/// false`) a crash keeps no duration: it lasts for good, and the trace, the
/// liveness bound and a reproducer say so.
pub fn run_faults(s: &Scenario, seed: u64) -> Vec<ScheduledFault> {
    let mut faults: Vec<ScheduledFault> = s.schedule.clone();
    faults.extend(draw_faults(s, seed));
    if !s.restart {
        for f in faults.iter_mut().filter(|f| f.kind == FaultKind::Crash) {
            f.duration_ms = None;
        }
    }
    faults.sort();
    faults
}

/// Draws the randomized faults of the scenario's profile, in time order.
pub fn draw_faults(s: &Scenario, seed: u64) -> Vec<ScheduledFault> {
    let mut out = Vec::new();
    for (kind, rate) in &s.profile {
        let mut rng = stream(seed, &format!("faults/{}", kind.name()));
        let mean_gap = 1e6 / rate.per_second;
        let mut t = 0u64;
        loop {
            t += exponential(&mut rng, mean_gap).max(1);
            if t >= s.faults_until_us {
                break;
            }
            let client = between(&mut rng, 0, s.clients as u64 - 1) as u32;
            let duration = between(&mut rng, rate.duration_us.0, rate.duration_us.1);
            let extra = between(&mut rng, rate.extra_us.0, rate.extra_us.1);
            out.push(ScheduledFault {
                at_ms: t / 1000,
                kind: *kind,
                client,
                master: None,
                server: None,
                duration_ms: (duration > 0
                    || *kind == FaultKind::Pause
                    || *kind == FaultKind::Partition)
                    .then_some(duration / 1000)
                    .filter(|_| *kind != FaultKind::LostReply),
                extra_ms: (*kind == FaultKind::Delay).then_some(extra / 1000),
            });
        }
    }
    out.sort();
    out
}
