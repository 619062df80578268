//! `lockstep report`: one self-contained HTML page and its Markdown twin —
//! the model-checking summary, the herd charts and table, and the holders
//! timelines of the shipped split-brain scenarios. Also the herd charts on
//! their own and `report timeline TRACE`. (The herd charts are drawn by
//! `charts`, for the herd sweep and the tour alike.)

use super::charts::chart_err;
use super::{ReportArgs, ReportWhat, UsageError};
use reports::timeline::timeline;
use sim::timeline::timeline_from_trace;
use sim::trace::TraceEvent;
use std::path::Path;

/// The largest trace `report timeline` reads: a run's trace of the
/// shipped scenarios is kilobytes, a thousand-client herd's some hundreds
/// of megabytes; a larger file (or `/dev/zero`) is refused, not read until
/// memory runs out.
const MAX_TRACE_BYTES: u64 = 512 << 20;

/// The most lanes a static timeline draws: one lane a client, about 26
/// pixels each, so a picture stays a few thousand pixels high.
const MAX_TIMELINE_LANES: u16 = 200;

pub fn timeline_command(trace: &Path, out: Option<&Path>) -> Result<(), UsageError> {
    let text = sim::read_capped(trace, MAX_TRACE_BYTES)
        .map_err(|e| UsageError(format!("{}: {e}", trace.display())))?;
    let lines = sim::trace::parse_trace(&text)
        .map_err(|e| UsageError(format!("{}: {e}", trace.display())))?;
    if let Some(TraceEvent::Start { clients, .. }) = lines.first().map(|l| &l.event) {
        if *clients > MAX_TIMELINE_LANES {
            return Err(UsageError(format!(
                "{}: a run of {clients} clients; a timeline draws one lane a client, at most \
                 {MAX_TIMELINE_LANES} (run the scenario with fewer clients to look at it)",
                trace.display()
            )));
        }
    }
    // Titled with the scenario and seed the trace names.
    let title = lines
        .iter()
        .find_map(|l| match &l.event {
            TraceEvent::Start {
                scenario,
                seed,
                recipe,
                ..
            } => {
                let holders =
                    sim::trace::app_of(recipe).map_or("who believes it holds", |a| a.holders());
                Some(format!("{scenario} — seed {seed}: {holders}"))
            }
            _ => None,
        })
        .unwrap_or_else(|| format!("Who believes it holds — {}", trace.display()));
    if let Some(out) = out {
        if out.is_dir() {
            return Err(UsageError(format!(
                "--out {} is a directory; --out takes the charts' path without extension (e.g. {})",
                out.display(),
                out.join("timeline").display()
            )));
        }
        let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = dir.filter(|d| !d.is_dir()) {
            return Err(UsageError(format!(
                "--out {}: no directory {} to write the charts into",
                out.display(),
                dir.display()
            )));
        }
    }
    let t = timeline_from_trace(&title, &lines);
    let base = out.map(Path::to_path_buf).unwrap_or_else(|| {
        // The chart goes beside the trace, named after it byte for byte.
        let mut name = trace.file_stem().unwrap_or_default().to_os_string();
        name.push("-timeline");
        trace.with_file_name(name)
    });
    let html = base.with_extension("html");
    for written in [
        base.with_extension("svg"),
        base.with_extension("png"),
        html.clone(),
    ] {
        if super::same_file(&written, trace) {
            return Err(UsageError(format!(
                "{} is the trace being drawn; writing the timeline there would replace it (give --out another name)",
                written.display()
            )));
        }
    }
    timeline(&t, &base).map_err(chart_err)?;
    std::fs::write(&html, sim::html::timeline_page(&title, &lines))
        .map_err(|e| UsageError(format!("cannot write {}: {e}", html.display())))?;
    println!(
        "written: {}, {} and {}",
        base.with_extension("svg").display(),
        base.with_extension("png").display(),
        html.display()
    );
    Ok(())
}

pub fn run(args: &ReportArgs) -> Result<std::process::ExitCode, UsageError> {
    match &args.what {
        Some(ReportWhat::Timeline { trace, out }) => {
            timeline_command(trace, out.as_deref())?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        None => {
            // The sweep's smallest client count is 2.
            if !(2..=sim::scenario::MAX_SIM_CLIENTS).contains(&(args.max_clients as u32)) {
                return Err(UsageError(format!(
                    "--max-clients must be between 2 and {} (got {})",
                    sim::scenario::MAX_SIM_CLIENTS,
                    args.max_clients
                )));
            }
            super::tour::run(&args.out, args.max_clients)
        }
    }
}
