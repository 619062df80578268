//! lockstep's simulator: the `models` actors driven in virtual time under
//! randomized or scheduled faults, one seed driving everything.
//!
//! - [`scenario`]: scenario files (TOML), validated;
//! - [`rng`]: one seed split into named, portable streams;
//! - [`engine`]: the discrete-event engine, its online checks and metrics;
//! - [`hunt`]: many seeds in parallel, sharding, merging, shrinking;
//! - [`html`]: the per-run interactive HTML timeline;
//! - [`chrome`]: the run as a Chrome / Perfetto trace.

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
