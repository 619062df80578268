//! The trace recorder: typed lines, built only when asked for, and their
//! hash (FNV-1a over each line's JSON and a newline).

use crate::trace::{self, TraceEvent, TraceLine};

pub(super) struct Recorder {
    on: bool,
    lines: Vec<TraceLine>,
    hash: u64,
}

impl Recorder {
    pub fn new(on: bool) -> Self {
        Recorder {
            on,
            lines: Vec::new(),
            hash: trace::FNV_OFFSET,
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Records a line and folds its JSON and a newline into the hash (the
    /// same value as `trace::hash` of the whole trace).
    pub fn record(&mut self, t: u64, event: TraceEvent) {
        let line = TraceLine { t, event };
        self.hash = trace::fnv1a(self.hash, line.to_json().as_bytes());
        self.hash = trace::fnv1a(self.hash, b"\n");
        self.lines.push(line);
    }

    /// The lines and the hash (when recorded).
    pub fn finish(self) -> (Vec<TraceLine>, Option<String>) {
        let hash = self.on.then(|| format!("{:016x}", self.hash));
        (self.lines, hash)
    }
}
