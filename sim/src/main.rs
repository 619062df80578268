//! The `lockstep` command.
//!
//! Exit status: 0 when nothing was violated, 1 when a property was violated,
//! 2 on bad usage or bad input (with a message naming the problem).

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(cli::UsageError(msg)) => {
            eprintln!("lockstep: {msg}");
            ExitCode::from(2)
        }
    }
}
