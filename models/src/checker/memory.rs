//! The process's memory, as Linux's /proc reports it: what a search's
//! memory limit compares against (`CheckOptions::max_resident`), and what
//! a check's report measures. `None` where it cannot be read.

/// Resident memory now (`VmRSS` in /proc/self/status), in bytes.
pub fn resident_bytes() -> Option<u64> {
    status_field("VmRSS:")
}

/// Peak resident memory (`VmHWM` in /proc/self/status), in bytes.
pub fn peak_resident_bytes() -> Option<u64> {
    status_field("VmHWM:")
}

/// The machine's available memory (`MemAvailable` in /proc/meminfo), in
/// bytes.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, "MemAvailable:")
}

fn status_field(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&text, name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_in_kib() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   16777216 kB\n";
        assert_eq!(kib_field(text, "MemAvailable:"), Some(16 << 30));
        assert_eq!(kib_field("MemTotal: 1 kB\n", "MemAvailable:"), None);
        assert_eq!(kib_field("MemAvailable: lots\n", "MemAvailable:"), None);
        assert_eq!(kib_field("VmHWM: 2 MB\n", "VmHWM:"), None);
        assert_eq!(
            kib_field("VmPeak: 9 kB\nVmHWM:  2 kB\n", "VmHWM:"),
            Some(2048)
        );
    }

    #[test]
    fn this_process_has_resident_memory() {
        if std::path::Path::new("/proc/self/status").exists() {
            let now = resident_bytes().expect("VmRSS");
            let peak = peak_resident_bytes().expect("VmHWM");
            assert!(now > 0 && peak >= now, "{now} {peak}");
        }
    }
}
