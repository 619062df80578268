//! A shipped scenario beside a real run (its "twin"): parsed as `lockstep
//! run` reads it, simulated at its own seed, with what it violated and
//! what its file's `expect` lists, each sorted, for the report to set side
//! by side.

use sim::engine::Outcome;
use sim::scenario::Scenario;

/// Scenario `file` (`scenarios/NAME.toml`) from its `text`, named as
/// `lockstep run NAME` names it.
pub fn parse(file: &str, text: &str) -> Result<Scenario, String> {
    let name = file
        .trim_start_matches("scenarios/")
        .trim_end_matches(".toml");
    Scenario::parse(text, file, name).map_err(|e| e.to_string())
}

/// A twin's run at its own seed, traced.
pub struct Run {
    pub outcome: Outcome,
    /// The properties it violated, sorted, each once.
    pub violated: Vec<String>,
    /// Its file's `expect`, sorted.
    pub expected: Vec<String>,
}

/// Simulates `scenario` at its own seed, with the trace.
pub fn run(scenario: &Scenario) -> Run {
    let outcome = sim::engine::simulate(scenario, scenario.seed, true);
    let mut violated: Vec<String> = outcome
        .violations
        .iter()
        .map(|v| v.property.name().to_string())
        .collect();
    violated.sort();
    violated.dedup();
    let mut expected: Vec<String> = scenario
        .expect
        .iter()
        .flatten()
        .map(|p| p.name().to_string())
        .collect();
    expected.sort();
    Run {
        outcome,
        violated,
        expected,
    }
}
