//! The checker's default state limit, from the machine's memory.
//!
//! Measured peak memory per unique state, `lockstep check … --clients 4`
//! (the report's `peak memory`, the process's VmHWM): fair-predecessor with
//! 1 crash 89 B (438 MB, 4.92 M states), etcd-revision 126 B (189 MB,
//! 1.51 M), children-watch 99 B (285 MB, 2.88 M), unfair-create with a
//! pause 85 B (867 MB, 10.1 M); asking only `always` properties (no graph
//! edges kept) fair-predecessor takes 55 B. Small checks cost more per state
//! (the process's own tens of MB). The limit assumes 200 B, half again above
//! the largest, and uses at most half of the memory available when the check
//! starts.

/// Bytes of memory one unique state costs the checker, with margin.
pub const BYTES_PER_STATE: u64 = 200;

/// When the available memory cannot be read.
const FALLBACK_STATES: usize = 10_000_000;

/// The checker indexes states with 32 bits.
const MAX_STATES: u64 = u32::MAX as u64;

/// The default `--max-states` and where it came from, in words.
pub fn default_max_states() -> (usize, String) {
    match available_bytes() {
        Some(bytes) => {
            let states = (bytes / 2 / BYTES_PER_STATE).clamp(1, MAX_STATES) as usize;
            (
                states,
                format!(
                    "the default for this machine: half of its {:.1} GiB available memory at about {BYTES_PER_STATE} bytes a state",
                    bytes as f64 / (1u64 << 30) as f64
                ),
            )
        }
        None => (
            FALLBACK_STATES,
            "the default when the available memory cannot be read (/proc/meminfo)".to_string(),
        ),
    }
}

/// The process's peak resident memory (`VmHWM` in /proc/self/status), in
/// bytes; `None` where it cannot be read.
pub fn peak_rss_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&text, "VmHWM:")
}

/// `MemAvailable` from /proc/meminfo, in bytes.
fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

fn parse_mem_available(text: &str) -> Option<u64> {
    kib_field(text, "MemAvailable:")
}

/// A `NAME:  N kB` line's value in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => kib.checked_mul(1024),
        _ => None,
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
    fn mem_available_is_read_in_kib() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   16777216 kB\n";
        assert_eq!(parse_mem_available(text), Some(16 << 30));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(parse_mem_available("MemAvailable: lots\n"), None);
        assert_eq!(
            kib_field("VmPeak: 9 kB\nVmHWM:  2 kB\n", "VmHWM:"),
            Some(2048)
        );
    }
}
