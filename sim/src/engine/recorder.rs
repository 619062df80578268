//! The trace recorder: typed lines, built only when asked for, their hash
//! (FNV-1a over each line's JSON and a newline), kept in memory and/or
//! streamed to a writer as they happen, so a long run's trace never has to
//! fit in memory.

use crate::trace::{self, TraceEvent, TraceLine};
use std::io::Write;

/// What to do with a run's trace.
#[derive(Default)]
pub struct TraceOptions<'w> {
    /// Keep the lines in the outcome (timelines, tests).
    pub keep: bool,
    /// Hash the lines (the outcome's `trace_hash`); implied by `keep` and
    /// by `write`.
    pub hash: bool,
    /// Write each line as JSON Lines here as it happens.
    pub write: Option<Box<dyn Write + 'w>>,
}

impl TraceOptions<'_> {
    /// Lines kept and hashed: what `simulate(.., true)` records.
    pub fn kept() -> Self {
        TraceOptions {
            keep: true,
            hash: true,
            write: None,
        }
    }
}

pub(super) struct Recorder<'w> {
    on: bool,
    keep: bool,
    lines: Vec<TraceLine>,
    /// The line being recorded, as JSON and a newline.
    json: Vec<u8>,
    hash: u64,
    write: Option<Box<dyn Write + 'w>>,
    /// The first write error; nothing more is written after it.
    error: Option<std::io::Error>,
}

impl<'w> Recorder<'w> {
    pub fn new(opts: TraceOptions<'w>) -> Self {
        Recorder {
            on: opts.keep || opts.hash || opts.write.is_some(),
            keep: opts.keep,
            lines: Vec::new(),
            json: Vec::new(),
            hash: trace::FNV_OFFSET,
            write: opts.write,
            error: None,
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Records a line and folds its JSON and a newline into the hash (the
    /// same value as `trace::hash` of the whole trace).
    pub fn record(&mut self, t: u64, event: TraceEvent) {
        let line = TraceLine { t, event };
        // One buffer for every line: a large herd's `get_children` replies
        // make lines of hundreds of kilobytes.
        line.json_line(&mut self.json);
        self.hash = trace::fnv1a(self.hash, &self.json);
        if let (Some(w), None) = (self.write.as_mut(), self.error.as_ref()) {
            if let Err(e) = w.write_all(&self.json) {
                self.error = Some(e);
            }
        }
        if self.keep {
            self.lines.push(line);
        }
    }

    /// The kept lines and the hash (when recorded), or the first error
    /// writing the trace.
    pub fn finish(mut self) -> std::io::Result<(Vec<TraceLine>, Option<String>)> {
        if let (Some(w), None) = (self.write.as_mut(), self.error.as_ref()) {
            if let Err(e) = w.flush() {
                self.error = Some(e);
            }
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        let hash = self.on.then(|| format!("{:016x}", self.hash));
        Ok((self.lines, hash))
    }
}
