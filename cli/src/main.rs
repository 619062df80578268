//! The `lockstep` command.
//!
//! Exit status: 0 when nothing was violated; 1 when a property was violated
//! (or a reproducer did not reproduce); 2 on bad usage or bad input (with a
//! message naming the problem), or a simulated run cut off with no verdict;
//! 3 when a result is incomplete — a check stopped at its state limit, a
//! hunt with seeds cut off, a merge that lacks shards.

mod cli;

use clap::Parser;
use std::process::ExitCode;

// The checker allocates and frees states on several threads; glibc's malloc
// spends more time consolidating than exploring there.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Behave like a Unix tool when the reader goes away (`lockstep … | head`).
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(cli::UsageError(msg)) => {
            eprintln!("lockstep: {msg}");
            ExitCode::from(2)
        }
    }
}
