//! Rendering of lockstep's measurements: plain data in, text out.
//! It knows nothing of the models or the simulator.

pub mod chart;
pub mod table;
pub mod timeline;
