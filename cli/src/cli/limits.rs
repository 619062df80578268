//! The checker's default limits, from the machine's memory.
//!
//! A search stops taking new states at the first limit it reaches: a
//! number of unique states (`--max-states`; by default as many as the
//! checker can index), or the process's resident memory (`--max-memory`;
//! by default three quarters of the memory available when the check
//! starts). The memory limit measures what the search holds instead of
//! guessing it: per unique state it ranges widely, measured with
//! `lockstep check … --clients 4` (the report's `peak memory`, the
//! process's VmHWM) from 85 B (unfair-create with a pause, 10.1 M states)
//! to 126 B (etcd-revision, 1.51 M), 48 B for three clients with a pause
//! over three servers at 121 M states, and 40 B for fair-predecessor at
//! five clients with a crash at 214 M; small checks cost more per state
//! (the process's own tens of MB). A quarter of the memory is left for
//! what the search's end builds (the progress goals' passes free the
//! fingerprint table first) and for the rest of the machine.

use models::checker::memory;

/// The share of the available memory the default memory limit takes.
const MEMORY_SHARE: (u64, u64) = (3, 4);

/// The state limit when the available memory cannot be read (and so no
/// memory limit can be set).
const FALLBACK_STATES: usize = 10_000_000;

/// The checker indexes states with 32 bits.
const MAX_STATES: u64 = u32::MAX as u64;

/// The default `--max-states` and where it came from, in words.
pub fn default_max_states() -> (usize, String) {
    match memory::available_bytes() {
        Some(_) => (
            MAX_STATES as usize,
            "the default: as many as the checker can index (the memory limit comes first)"
                .to_string(),
        ),
        None => (
            FALLBACK_STATES,
            "the default when the available memory cannot be read (/proc/meminfo)".to_string(),
        ),
    }
}

/// The default `--max-memory` and where it came from, in words; `None`
/// where the available memory cannot be read.
pub fn default_max_memory() -> Option<(u64, String)> {
    let available = memory::available_bytes()?;
    let (num, den) = MEMORY_SHARE;
    Some((
        available / den * num,
        format!(
            "the default for this machine: three quarters of its {} available memory",
            bytes_words(available)
        ),
    ))
}

/// A `--max-memory` value: bytes, or a number with `K`, `M` or `G`
/// (KiB, MiB, GiB; `KiB`, `MiB`, `GiB` and `KB`, `MB`, `GB` are read the
/// same).
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let not_a_size = || {
        format!(
            "--max-memory {text}: a size is a whole number of bytes, or one with K, M or G (as \
             16G or 512M)"
        )
    };
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(not_a_size()),
    };
    let n: u64 = number.parse().map_err(|_| not_a_size())?;
    match n.checked_mul(1 << shift) {
        Some(0) => Err(format!("--max-memory {text}: must be more than 0")),
        Some(bytes) => Ok(bytes),
        None => Err(format!("--max-memory {text}: too large")),
    }
}

/// Bytes in words: `1.5 GiB`, `300 MiB`.
pub fn bytes_words(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b => format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64),
    }
}

/// The limit an explicit `--max-states` may not exceed.
pub fn max_states_cap() -> u64 {
    MAX_STATES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_size_is_read_with_its_unit() {
        assert_eq!(parse_memory("512"), Ok(512));
        assert_eq!(parse_memory("16G"), Ok(16 << 30));
        assert_eq!(parse_memory("300MiB"), Ok(300 << 20));
        assert_eq!(parse_memory("64 kb"), Ok(64 << 10));
        for (bad, says) in [
            ("0", "more than 0"),
            ("0M", "more than 0"),
            ("lots", "a whole number of bytes"),
            ("-5G", "a whole number of bytes"),
            ("G", "a whole number of bytes"),
            ("5T", "a whole number of bytes"),
            ("1.5G", "a whole number of bytes"),
            ("99999999999999G", "too large"),
        ] {
            let e = parse_memory(bad).expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn bytes_are_said_in_mib_or_gib() {
        assert_eq!(bytes_words(300 << 20), "300 MiB");
        assert_eq!(bytes_words(3 << 29), "1.5 GiB");
    }
}
