//! The `lockstep` command.
//!
//! Exit status: 0 when nothing was violated; 1 when a property was violated
//! (or a reproducer did not reproduce); 2 on bad usage or bad input (with a
//! message naming the problem), or a simulated run cut off with no verdict;
//! 3 when a result is incomplete — a check stopped at its state limit, a
//! hunt with seeds cut off, a merge that lacks shards.

mod cli;

use clap::Parser;
use libmimalloc_sys::{mi_malloc, mi_realloc, mi_zalloc};
use mimalloc::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};
use std::process::ExitCode;

// The checker allocates and frees states on several threads; glibc's malloc
// spends more time consolidating than exploring there. mimalloc's v2 series
// (the `v2` feature; the crate's default is v3): on the 4-client check it
// peaks 15% lower than v3 (253 MB to 300 MB for 4.9 M states) and runs a
// few percent faster.
#[global_allocator]
static ALLOC: Allocator = Allocator;

/// mimalloc, asked for alignment only when a block of the layout's size
/// might not have it. `mimalloc::MiMalloc` takes the aligned path for every
/// allocation, which costs a check of the free block's address and a few
/// calls more on each of the checker's 20-odd allocations per state it
/// generates (3% of the checker's instructions).
struct Allocator;

/// Whether every mimalloc block of `size` bytes is aligned to `align`:
/// mimalloc's own rule (`mi_malloc_is_naturally_aligned`, mimalloc 2.x) for
/// alignments up to `max_align_t`'s, 16 bytes.
fn naturally_aligned(size: usize, align: usize) -> bool {
    align <= 16 && align <= size
}

// SAFETY: each method hands the layout to mimalloc's aligned entry points
// (through `MiMalloc`) unless every block of its size is aligned as asked
// (`naturally_aligned`); `mi_free` frees a block from either kind of entry
// point. `mi_realloc` may be handed a block the aligned path allocated (a
// layout smaller than its alignment, grown): it keeps the block if it
// fits — aligned already — or copies into a new `mi_malloc` block of the
// new size, which `naturally_aligned` vouched for, and frees the old one.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match naturally_aligned(layout.size(), layout.align()) {
            true => unsafe { mi_malloc(layout.size()).cast() },
            false => unsafe { MiMalloc.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match naturally_aligned(layout.size(), layout.align()) {
            true => unsafe { mi_zalloc(layout.size()).cast() },
            false => unsafe { MiMalloc.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match naturally_aligned(new_size, layout.align()) {
            true => unsafe { mi_realloc(ptr.cast(), new_size).cast() },
            false => unsafe { MiMalloc.realloc(ptr, layout, new_size) },
        }
    }
}

fn main() -> ExitCode {
    // Behave like a Unix tool when the reader goes away (`lockstep … | head`).
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    exit_on_failed_output();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(cli::UsageError(msg)) => {
            eprintln!("lockstep: {msg}");
            ExitCode::from(2)
        }
    }
}

/// `print!` panics when standard output cannot be written (a full disk,
/// a closed file): that is an error of where the output goes, not a bug,
/// so it is said in one line and the exit status is 2, like any other
/// problem with what lockstep was given. Every other panic is reported as
/// the default hook reports it.
fn exit_on_failed_output() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        match message.and_then(|m| m.strip_prefix("failed printing to stdout: ")) {
            Some(why) => {
                eprintln!("lockstep: cannot write the output to standard output: {why}");
                std::process::exit(2);
            }
            None => default(info),
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block is aligned as its layout asks, whichever entry point
    /// serves it, and stays so (with its contents) through reallocs.
    #[test]
    fn blocks_are_aligned_as_asked() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in (1..=160).chain([4095, 4096, 70_000]) {
                let layout = Layout::from_size_align(size, align).expect("a valid layout");
                let aligned = |p: *mut u8| !p.is_null() && (p as usize).is_multiple_of(align);
                // SAFETY: nonzero sizes; each block is used within its size
                // and freed (or reallocated) once, with the layout it has.
                unsafe {
                    let mut p = Allocator.alloc(layout);
                    assert!(aligned(p), "alloc {size}, align {align}");
                    p.write_bytes(0xa5, size);
                    for new_size in [1, size / 2 + 1, size * 3] {
                        let q = Allocator.realloc(p, layout, new_size);
                        assert!(aligned(q), "realloc {size} to {new_size}, align {align}");
                        assert_eq!(*q, 0xa5, "realloc keeps the contents");
                        let grown = Layout::from_size_align(new_size, align).expect("valid");
                        p = Allocator.realloc(q, grown, size);
                        assert!(aligned(p), "realloc {new_size} to {size}, align {align}");
                        assert_eq!(*p, 0xa5);
                        p.write_bytes(0xa5, size);
                    }
                    Allocator.dealloc(p, layout);
                    let z = Allocator.alloc_zeroed(layout);
                    assert!(aligned(z), "alloc_zeroed {size}, align {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    Allocator.dealloc(z, layout);
                }
            }
        }
    }
}
