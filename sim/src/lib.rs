//! lockstep's simulator: the `models` actors driven in virtual time under
//! randomized or scheduled faults, one seed driving everything.
//!
//! - [`scenario`]: scenario files (TOML), validated;
//! - [`rng`]: one seed split into named, portable streams;
//! - [`engine`]: the discrete-event engine, its online checks and metrics;
//! - [`hunt`]: many seeds in parallel, sharding, merging, shrinking;
//! - [`html`]: the per-run interactive HTML timeline;
//! - [`chrome`]: the run as a Chrome / Perfetto trace.

// A wildcard arm over one of lockstep's own closed sets (messages, timers,
// faults, phases) makes a new variant compile and silently do nothing.
// Matches over a foreign open set allow it by name, with the reason.
#![deny(clippy::wildcard_enum_match_arm)]

pub mod chrome;
pub mod engine;
pub mod herd;
pub mod html;
pub mod hunt;
pub mod parallel;
pub mod rng;
pub mod scenario;
pub mod timeline;
pub mod trace;

/// Reads a text file of at most `limit` bytes: a scenario, a reproducer or
/// a hunt's result given a path like `/dev/zero` (or a huge file by
/// mistake) is refused, not read until memory runs out.
pub fn read_capped(path: &std::path::Path, limit: u64) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "longer than {} MiB: not a file lockstep wrote or reads",
            limit >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| format!("cannot read: not UTF-8 text ({e})"))
}
