//! The `lockstep` command.
//!
//! Exit status: 0 when nothing was violated, 1 when a property was violated,
//! 2 on bad usage or bad input (with a message naming the problem).

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
