//! lockstep's protocol: the coordination store, the lock recipes and the
//! client application as stateright actors, and the model-checking
//! configuration and properties built from them.
//!
//! Every recipe and the store exist once, here. The model checker
//! ([`checker`]) explores every interleaving of these actors; the simulator
//! (the `lockstep` crate) drives the very same actors in virtual time.

// A wildcard arm over one of lockstep's own closed sets (messages, timers,
// faults, phases) makes a new variant compile and silently do nothing.
// Matches over a foreign open set allow it by name, with the reason.
#![deny(clippy::wildcard_enum_match_arm)]

pub mod apps;
pub mod checker;
pub mod client;
pub mod fixed_hash;
pub mod html;
pub mod ids;
pub mod model;
pub mod msg;
pub mod properties;
pub mod recipe;
pub mod recipes;
pub mod relabel;
pub mod renamings;
pub mod resource;
pub mod store;
pub mod symmetry;
pub mod timing;
pub mod trace;
