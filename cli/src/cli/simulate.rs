//! `lockstep run`, `lockstep hunt` and `lockstep replay`.

use super::shell::lockstep_command;
use super::tour::SHIPPED;
use super::{
    same_file, writable_dir, HuntArgs, ReplayArgs, RunArgs, RunOutput, TraceFormat, UsageError,
};
use indicatif::{ProgressBar, ProgressStyle};
use models::properties::PropertyName;
use models::recipe::App;
use serde::Serialize;
use sim::engine::{
    simulate_traced, simulate_watched, Metrics, Outcome, RunEnd, TraceOptions, Violation,
};
use sim::hunt::{hunt as hunt_seeds, merge, parse_range, parse_shard, shrink, HuntResult, SeedSet};
use sim::parallel::MAX_THREADS;
use sim::scenario::Scenario;
use sim::trace::{millis, secs, TraceEvent};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The scenario a command names: a file, or one of the shipped scenarios
/// by its name (`gc-pause-split-brain` for `scenarios/gc-pause-split-brain.toml`,
/// built into lockstep, so it runs from any directory). A file of that name
/// wins; a bare name that is neither is refused with the shipped names.
fn load(path: &Path) -> Result<Scenario, UsageError> {
    let bare = path.components().count() == 1 && path.extension().is_none();
    let name = path.to_str().filter(|_| bare && !path.is_file());
    let Some(name) = name else {
        return Scenario::load(path).map_err(|e| UsageError(e.to_string()));
    };
    match SHIPPED.iter().find(|(shipped, _)| *shipped == name) {
        Some((name, text)) => Scenario::parse(text, &format!("scenarios/{name}.toml"), name)
            .map_err(|e| UsageError(e.to_string())),
        None => {
            // The names, a few to a line.
            let mut list = String::new();
            for (k, (shipped, _)) in SHIPPED.iter().enumerate() {
                let last = list.rsplit('\n').next().unwrap_or_default();
                let sep = match k {
                    0 => "  ",
                    _ if last.len() + shipped.len() > 76 => ",\n  ",
                    _ => ", ",
                };
                list.push_str(sep);
                list.push_str(shipped);
            }
            Err(UsageError(format!(
                "{name}: no such scenario file, and no shipped scenario of that name; the \
                 shipped scenarios:\n{list}"
            )))
        }
    }
}

#[derive(Serialize)]
struct RunJson<'a> {
    scenario: &'a str,
    seed: u64,
    end: RunEnd,
    /// Whether the file's `expect` happened (absent when it expects nothing).
    reproduced: Option<bool>,
    trace_hash: Option<&'a str>,
    violations: &'a [Violation],
    hand_off: bool,
    faults_fired: BTreeMap<&'static str, u64>,
    faults_not_fired: Vec<String>,
    metrics: &'a Metrics,
}

fn describe_settings(s: &Scenario, seed: u64) {
    let t = &s.timing;
    let clients = if s.recipe.app() == App::Queue {
        format!(
            "{} clients ({} producing, {} consuming)",
            s.clients,
            s.producers,
            s.clients - s.producers
        )
    } else if s.observers > 0 {
        format!(
            "{} clients ({} observing, {} campaigning)",
            s.clients,
            s.observers,
            s.clients - s.observers
        )
    } else {
        format!("{} clients", s.clients)
    };
    println!(
        "lockstep run {}: {}, {clients}, {} round{}, seed {seed}, fencing {}, {} policy",
        s.name,
        s.recipe,
        s.rounds,
        if s.rounds == 1 { "" } else { "s" },
        if s.fencing { "on" } else { "off" },
        s.policy
    );
    // A Redis connection is no session: its clocks are the key's.
    let clocks = match s.recipe.key_timing() {
        Some(k) => format!("key TTL {} ms, retry delay {} ms", k.ttl_ms, k.retry_ms),
        None => format!(
            "session timeout {} ms, ping every {} ms",
            t.session_timeout_us / 1000,
            t.ping_interval_us / 1000
        ),
    };
    println!(
        "timing: {clocks}, think {}–{} ms, hold {}–{} ms, latency {}–{}, resend after {} ms",
        t.think_us.0 / 1000,
        t.think_us.1 / 1000,
        t.hold_us.0 / 1000,
        t.hold_us.1 / 1000,
        millis(t.latency_us.0).trim_end_matches(" ms"),
        millis(t.latency_us.1),
        t.retry_us / 1000
    );
    if let Some((lo, hi)) = t.replication_us {
        println!(
            "replica: master 0's changes reach it {}–{} ms later",
            lo / 1000,
            hi / 1000
        );
    }
    if let Some((lo, hi)) = t.apply_us {
        println!(
            "ensemble: {} servers, client i on server (i + 1) mod {}; a follower applies each \
             committed change {}–{} later",
            s.servers,
            s.servers,
            millis(lo).trim_end_matches(" ms"),
            millis(hi)
        );
        if s.recipe.face() == models::recipe::Face::ZooKeeper {
            println!(
                "ensemble: a reconnect moves a client to the next server not behind its last seen \
                 zxid{}",
                if s.local_sessions {
                    "; local sessions: a follower opens a new one by itself"
                } else {
                    ""
                }
            );
        }
    }
    if s.profile.is_empty() && s.schedule.is_empty() {
        println!("faults: none");
    }
    for (kind, rate) in &s.profile {
        println!(
            "faults: {} at {}/s, lasting {}–{} ms, until {} ms",
            kind.name(),
            sim::scenario::short_number(rate.per_second),
            rate.duration_us.0 / 1000,
            rate.duration_us.1 / 1000,
            s.faults_until_us / 1000
        );
    }
    for f in &s.schedule {
        println!("fault scheduled: {f}");
    }
}

fn not_fired(o: &Outcome) -> Vec<String> {
    o.faults
        .iter()
        .filter(|f| !f.fired)
        .map(|f| f.fault.to_string())
        .collect()
}

fn print_outcome(s: &Scenario, o: &Outcome, timeline: bool, reproduce: &str) {
    let fired = o.faults_fired();
    if fired.is_empty() {
        println!("faults fired: none");
    } else {
        let parts: Vec<String> = fired.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        println!("faults fired: {}", parts.join(", "));
    }
    for f in o.faults.iter().filter(|f| f.fired) {
        println!("  {}", f.fault);
    }
    let missing = not_fired(o);
    if !missing.is_empty() {
        println!("configured but never fired: {}", missing.join("; "));
    }
    let m = &o.metrics;
    println!();
    let requests: u64 = m.store_requests.values().sum();
    // Hand-offs are the lock's and the election's; a barrier has none.
    let hands_off = PropertyName::of(s.recipe.app()).contains(&PropertyName::HandOff);
    let taken = s.recipe.app().spec().taken;
    let mut rows = vec![
        vec![taken.to_string(), m.acquisitions.to_string()],
        vec!["notifications".to_string(), m.notifications.to_string()],
        vec!["store requests".to_string(), requests.to_string()],
    ];
    // Over an ensemble each waiter hears from its own server.
    if !m.notifications_per_server.is_empty() {
        let per: Vec<String> = m
            .notifications_per_server
            .iter()
            .enumerate()
            .map(|(server, n)| format!("{server}: {n}"))
            .collect();
        rows.insert(
            rows.len() - 1,
            vec!["notifications by server".to_string(), per.join(", ")],
        );
    }
    if hands_off {
        rows.insert(1, vec!["releases".to_string(), m.releases.to_string()]);
        rows.push(vec![
            "hand-off p50 / p99".to_string(),
            p50_p99(&m.handoff_us),
        ]);
    }
    rows.extend([
        vec!["wait p50 / p99".to_string(), p50_p99(&m.wait_us)],
        vec!["events".to_string(), m.events.to_string()],
        vec!["virtual time".to_string(), secs(m.end_us)],
    ]);
    print!("{}", reports::table::render(&["metric", "value"], &rows));
    let kinds: Vec<String> = m
        .store_requests
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    println!("requests by kind: {}", kinds.join(", "));
    println!();
    if hands_off {
        println!(
            "hand_off (sometimes): {}",
            if o.hand_off {
                "witnessed"
            } else {
                "not witnessed"
            }
        );
    }
    if o.violations.is_empty() {
        println!("no violations");
    }
    for v in &o.violations {
        // A herd bound or a drained queue is about the run, not a client.
        let who: Vec<String> = v.clients.iter().map(|c| c.to_string()).collect();
        let who = match who.len() {
            0 => String::new(),
            1 => format!(" (client {})", who[0]),
            _ => format!(" (clients {})", who.join(", ")),
        };
        println!("VIOLATED {} at {}{who}", v.property, secs(v.at_us));
    }
    if let Some(h) = &o.trace_hash {
        println!("trace hash: {h}");
    }
    println!("run ended: {}", o.end);
    if timeline {
        print_timeline(o);
    }
    if !o.violations.is_empty() {
        println!();
        println!("reproduce: {reproduce}");
    }
}

/// `p50 / p99` in milliseconds, or `-` when nothing was measured.
fn p50_p99(s: &sim::engine::Summary) -> String {
    match s.p50_p99() {
        Some((p50, p99)) => format!("{} / {}", millis(p50), millis(p99)),
        None => "-".to_string(),
    }
}

/// The readable timeline of the violations, without heartbeats: one window
/// per group of violations, from the earliest of the last fault before each
/// and the acquisitions of the clients involved (the stale holder's too),
/// to the last violation of the group.
fn print_timeline(o: &Outcome) {
    let mut spans: Vec<(u64, u64, &Violation)> = o
        .violations
        .iter()
        .map(|v| {
            let before = |l: &&sim::trace::TraceLine| l.t <= v.at_us;
            let last_fault = o
                .trace
                .iter()
                .filter(before)
                .filter(|l| matches!(l.event, TraceEvent::Fault { .. }))
                .map(|l| l.t)
                .next_back();
            let acquired = v.clients.iter().filter_map(|&c| {
                o.trace
                    .iter()
                    .filter(before)
                    .filter(|l| matches!(l.event, TraceEvent::Hold { client, .. } if client == c))
                    .map(|l| l.t)
                    .next_back()
            });
            let from = last_fault
                .into_iter()
                .chain(acquired)
                .min()
                .unwrap_or(v.at_us.saturating_sub(1_000_000));
            (from, v.at_us, v)
        })
        .collect();
    // Overlapping windows become one, from the earliest start to the
    // latest end.
    spans.sort_by_key(|&(from, to, _)| (from, to));
    let mut windows: Vec<(u64, u64, Vec<&Violation>)> = Vec::new();
    for (from, to, v) in spans {
        match windows.last_mut() {
            Some((_, end, group)) if from <= *end => {
                *end = (*end).max(to);
                group.push(v);
            }
            _ => windows.push((from, to, vec![v])),
        }
    }
    for (from, to, group) in windows {
        let names: Vec<String> = group
            .iter()
            .map(|v| format!("{} at {}", v.property, secs(v.at_us)))
            .collect();
        println!();
        println!(
            "timeline from {} to {} ({}):",
            secs(from),
            secs(to),
            names.join("; ")
        );
        for line in &o.trace {
            if line.t >= from && line.t <= to && !line.is_heartbeat() {
                println!("{line}");
            }
        }
    }
}

/// Opens the trace file before the run, so a bad path fails at once.
fn trace_file(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, UsageError> {
    std::fs::File::create(path)
        .map(std::io::BufWriter::new)
        .map_err(|e| UsageError(format!("cannot write the trace to {}: {e}", path.display())))
}

/// Opens the HTML timeline's file before the run, so a bad path fails at
/// once.
fn html_file(path: &Path) -> Result<(PathBuf, std::fs::File), UsageError> {
    std::fs::File::create(path)
        .map(|f| (path.to_path_buf(), f))
        .map_err(|e| {
            UsageError(format!(
                "cannot write the timeline to {}: {e}",
                path.display()
            ))
        })
}

pub(super) fn timeline_title(s: &Scenario, seed: u64) -> String {
    format!("{} — seed {seed}: {}", s.name, s.recipe.app().holders())
}

/// Writes the interactive timeline of `lines` to the open `file`.
pub(super) fn write_html(
    path: &Path,
    mut file: &std::fs::File,
    title: &str,
    lines: &[sim::trace::TraceLine],
) -> Result<(), UsageError> {
    use std::io::Write;
    file.write_all(sim::html::timeline_page(title, lines).as_bytes())
        .map_err(|e| {
            UsageError(format!(
                "cannot write the timeline to {}: {e}",
                path.display()
            ))
        })
}

/// Whether the run did what the file expects (`None`: it expects nothing),
/// and if not, what happened instead.
fn reproduced(s: &Scenario, o: &Outcome) -> Option<Result<(), String>> {
    let expect = s.expect.as_ref()?;
    let mut violated: Vec<PropertyName> = o.violations.iter().map(|v| v.property).collect();
    violated.sort();
    violated.dedup();
    let names = |ps: &[PropertyName]| {
        if ps.is_empty() {
            "nothing".to_string()
        } else {
            ps.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
        }
    };
    let ok = if expect.is_empty() {
        violated.is_empty()
    } else {
        expect.iter().all(|p| violated.contains(p))
    };
    Some(if ok {
        Ok(())
    } else {
        Err(format!(
            "did not reproduce: expected {} violated, this run violated {}",
            names(expect),
            names(&violated)
        ))
    })
}

/// The files a run writes must be neither the file it reads nor each
/// other: one would silently replace the other.
fn distinct_outputs(input: &Path, out: &RunOutput) -> Result<(), UsageError> {
    let outputs = [
        ("--trace", out.trace.as_ref()),
        ("--html", out.html.as_ref()),
    ];
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let Some(path) = path else { continue };
        // (A shipped scenario's name is no file to replace.)
        if input.is_file() && same_file(path, input) {
            return Err(UsageError(format!(
                "{flag} {}: that is the file being run; writing there would replace it",
                path.display()
            )));
        }
        for (other, other_path) in &outputs[..i] {
            if other_path.is_some_and(|o| same_file(o, path)) {
                return Err(UsageError(format!(
                    "{other} and {flag} both name {}: give each its own file",
                    path.display()
                )));
            }
        }
    }
    Ok(())
}

/// Runs `s` with `seed` and reports it as `out` asks.
fn simulate_and_report(
    s: &Scenario,
    seed: u64,
    out: &RunOutput,
    reproduce: &str,
) -> Result<ExitCode, UsageError> {
    let (json, timeline, trace) = (out.json, out.timeline, out.trace.as_ref());
    let chrome = out.trace_format == TraceFormat::Chrome;
    let mut writer = trace.map(|p| trace_file(p)).transpose()?;
    // A Chrome trace is one JSON object, written when the run is over.
    let chrome_writer = if chrome { writer.take() } else { None };
    let html = out.html.as_ref().map(|p| html_file(p)).transpose()?;
    if !json {
        describe_settings(s, seed);
        println!();
    }
    // The trace goes to its file as it happens; it is kept in memory only
    // for a timeline.
    let options = TraceOptions {
        keep: timeline || html.is_some() || chrome,
        hash: true,
        write: writer.map(|w| Box::new(w) as Box<dyn std::io::Write>),
    };
    // A progress line on a terminal only; otherwise the run is not watched.
    let result = if !json && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("a valid template"),
        );
        let result = simulate_watched(s, seed, options, |p| {
            bar.set_message(format!(
                "virtual time {:.3} s (limit {:.3} s), {} events, {} of {} clients unfinished",
                p.now_us as f64 / 1e6,
                p.limit_us as f64 / 1e6,
                p.events,
                p.unfinished,
                s.clients
            ));
            bar.tick();
        });
        bar.finish_and_clear();
        result
    } else {
        simulate_traced(s, seed, options)
    };
    let o = &result.map_err(|e| {
        let path = trace.map(|p| p.display().to_string()).unwrap_or_default();
        UsageError(format!("cannot write the trace to {path}: {e}"))
    })?;
    if let (Some(mut w), Some(path)) = (chrome_writer, trace) {
        use std::io::Write;
        serde_json::to_writer(&mut w, &sim::chrome::chrome_trace(&o.trace))
            .map_err(std::io::Error::from)
            .and_then(|()| w.flush())
            .map_err(|e| {
                UsageError(format!("cannot write the trace to {}: {e}", path.display()))
            })?;
    }
    if let (Some((path, file)), false) = (&html, o.trace.is_empty()) {
        write_html(path, file, &timeline_title(s, seed), &o.trace)?;
    }
    let expectation = reproduced(s, o);
    if json {
        let out = RunJson {
            scenario: &s.name,
            seed: o.seed,
            end: o.end,
            reproduced: expectation.as_ref().map(|r| r.is_ok()),
            trace_hash: o.trace_hash.as_deref(),
            violations: &o.violations,
            hand_off: o.hand_off,
            faults_fired: o.faults_fired(),
            faults_not_fired: not_fired(o),
            metrics: &o.metrics,
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serialisable")
        );
    } else {
        print_outcome(s, o, timeline, reproduce);
        if let Some(p) = trace {
            println!("trace written to {}", p.display());
        }
        if let Some((p, _)) = &html {
            println!("timeline written to {}", p.display());
        }
    }
    if o.end.is_cut_off() {
        return Err(UsageError(format!(
            "{} seed {seed}: {}; no verdict",
            s.name, o.end
        )));
    }
    if let Some(Err(why)) = &expectation {
        if !json {
            println!("{why}");
        }
        return Ok(ExitCode::from(1));
    }
    Ok(if o.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn run(args: &RunArgs) -> Result<ExitCode, UsageError> {
    distinct_outputs(&args.scenario, &args.output)?;
    let mut s = load(&args.scenario)?;
    let seed = args.seed.unwrap_or(s.seed);
    // A file's `expect` is what happens at its own seed; at another seed
    // the run is a different run, and its outcome is only reported.
    if seed != s.seed && s.expect.take().is_some() && !args.output.json {
        eprintln!(
            "note: {} expects its outcome at seed {}; at seed {seed} that is not checked",
            args.scenario.display(),
            s.seed
        );
    }
    let reproduce = lockstep_command(&[
        "run",
        &args.scenario.display().to_string(),
        "--seed",
        &seed.to_string(),
    ]);
    simulate_and_report(&s, seed, &args.output, &reproduce)
}

pub fn replay(args: &ReplayArgs) -> Result<ExitCode, UsageError> {
    distinct_outputs(&args.file, &args.output)?;
    let s = load(&args.file)?;
    let reproduce = lockstep_command(&["replay", &args.file.display().to_string()]);
    simulate_and_report(&s, s.seed, &args.output, &reproduce)
}

fn read_result(path: &Path) -> Result<(String, HuntResult), UsageError> {
    let name = path.display().to_string();
    // A result lists seeds: a gibibyte holds about a hundred million.
    let text = sim::read_capped(path, 1 << 30).map_err(|e| UsageError(format!("{name}: {e}")))?;
    let r = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{name}: not a hunt result: {e}")))?;
    Ok((name, r))
}

fn print_hunt(r: &HuntResult, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(r).expect("serialisable"));
        return;
    }
    println!(
        "{}: {} seeds run ({}{}), {} violating",
        r.scenario,
        r.seeds_run,
        r.seeds,
        r.shard
            .as_ref()
            .map(|s| format!(", shard {s}"))
            .unwrap_or_default(),
        r.violating_seeds.len()
    );
    let show = |seeds: &[u64]| {
        let shown: Vec<String> = seeds.iter().take(20).map(|s| s.to_string()).collect();
        let more = if seeds.len() > 20 {
            format!(" … ({} in all)", seeds.len())
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    for (p, seeds) in &r.by_property {
        println!("  {p}: seeds {}", show(seeds));
    }
    if !r.cut_off_seeds.is_empty() {
        println!(
            "cut off (stuck or at the event cap; no verdict): seeds {}",
            show(&r.cut_off_seeds)
        );
    }
    if !r.is_complete() {
        println!(
            "incomplete: {} shard{} missing: {}{}",
            r.shards_missing,
            if r.shards_missing == 1 { "" } else { "s" },
            r.missing_shards.join(", "),
            if r.shards_missing > r.missing_shards.len() as u64 {
                " …"
            } else {
                ""
            }
        );
    }
    for (property, p) in &r.reproducers {
        println!(
            "{property}: reproducer written to {p} (timeline {}); run it with: {}",
            Path::new(p).with_extension("html").display(),
            lockstep_command(&["replay", p])
        );
    }
}

/// 1 when a seed violated something; else 3 when some seeds gave no
/// verdict (cut off) or a merge lacks shards; else 0.
fn hunt_status(r: &HuntResult) -> ExitCode {
    if !r.violating_seeds.is_empty() {
        ExitCode::from(1)
    } else if !r.cut_off_seeds.is_empty() || !r.is_complete() {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// Where `hunt --shrink` writes its reproducers unless told otherwise.
pub const DEFAULT_REPRODUCER_DIR: &str = "lockstep-reproducers";

/// For each violated property, shrinks its first seed and writes the
/// reproducer (TOML, replayable) and its interactive timeline (HTML) into
/// `dir`.
fn write_reproducers(s: &Scenario, dir: &Path, r: &mut HuntResult) -> Result<(), UsageError> {
    let firsts: Vec<(String, u64)> = r
        .by_property
        .iter()
        .filter_map(|(p, seeds)| Some((p.clone(), *seeds.first()?)))
        .collect();
    for (name, seed) in firsts {
        let property = PropertyName::parse(&name)
            .ok_or_else(|| UsageError(format!("unknown property {name} in the hunt result")))?;
        let Some(small) = shrink(s, seed, Some(property)) else {
            continue;
        };
        let note = format!(
            "Reproducer: {} shrunk from seed {seed} of {}: {}.\nExpected: {} is violated.\nRun: lockstep replay <this file>",
            small.property,
            s.name,
            small.what_was_cut(),
            small.property
        );
        let text = s.reproducer(
            seed,
            (
                small.clients,
                small.producers,
                small.writers,
                small.observers,
                small.rounds,
            ),
            small.schedule,
            &[small.property],
            &note,
        );
        let file = dir.join(format!("{}-seed-{seed}-{}.toml", s.name, small.property));
        std::fs::write(&file, &text)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", file.display())))?;
        // Its timeline, from the reproducer itself.
        let small_scenario = Scenario::parse(&text, &file.display().to_string(), &s.name)
            .map_err(|e| UsageError(format!("{}: {e}", file.display())))?;
        let o = sim::engine::simulate(&small_scenario, seed, true);
        let html = file.with_extension("html");
        std::fs::write(
            &html,
            sim::html::timeline_page(&timeline_title(&small_scenario, seed), &o.trace),
        )
        .map_err(|e| UsageError(format!("cannot write {}: {e}", html.display())))?;
        let shown = file.display().to_string();
        r.reproducer.get_or_insert_with(|| shown.clone());
        r.reproducers.insert(name, shown);
    }
    Ok(())
}

fn jobs(asked: Option<usize>) -> Result<usize, UsageError> {
    match asked {
        Some(j) if j == 0 || j > MAX_THREADS => Err(UsageError(format!(
            "--jobs must be between 1 and {MAX_THREADS} (got {j})"
        ))),
        Some(j) => Ok(j),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

pub fn hunt(args: &HuntArgs) -> Result<ExitCode, UsageError> {
    if !args.merge.is_empty() {
        if args.scenario.is_some()
            || args.seeds.is_some()
            || args.shard.is_some()
            || args.shrink
            || args.out.is_some()
            || args.jobs.is_some()
        {
            return Err(UsageError(
                "--merge takes only result files (and --json)".into(),
            ));
        }
        let parts = args
            .merge
            .iter()
            .map(|p| read_result(p))
            .collect::<Result<Vec<_>, _>>()?;
        let r = merge(parts).map_err(UsageError)?;
        print_hunt(&r, args.json);
        return Ok(hunt_status(&r));
    }
    let path = args
        .scenario
        .as_ref()
        .ok_or_else(|| UsageError("hunt needs a SCENARIO (or --merge FILES)".into()))?;
    let (start, last) = parse_range(
        args.seeds
            .as_deref()
            .ok_or_else(|| UsageError("hunt needs --seeds A..B".into()))?,
    )
    .map_err(UsageError)?;
    let shard = args
        .shard
        .as_deref()
        .map(parse_shard)
        .transpose()
        .map_err(UsageError)?;
    let jobs = jobs(args.jobs)?;
    let out_dir =
        match (&args.out, args.shrink) {
            (Some(_), false) => return Err(UsageError(
                "--out is where --shrink writes its reproducer; without --shrink it does nothing"
                    .into(),
            )),
            (Some(dir), true) => Some(dir.clone()),
            (None, true) => Some(PathBuf::from(DEFAULT_REPRODUCER_DIR)),
            (None, false) => None,
        };
    let s = load(path)?;
    if let Some(dir) = &out_dir {
        writable_dir(dir, "--out")?;
    }
    let seeds = SeedSet { start, last, shard };
    if seeds.is_empty() {
        // Still a shard's result, which a merge of every shard needs.
        eprintln!(
            "note: shard {} of seeds {} holds no seeds (there are fewer seeds than \
             shards), so nothing is run",
            args.shard.as_deref().unwrap_or_default(),
            seeds.range_text()
        );
    }
    let bar = if !args.json && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(seeds.len());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} seeds  {per_sec}  eta {eta}")
                .expect("a valid template"),
        );
        Some(bar)
    } else {
        None
    };
    let progress = |n: u64| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    };
    let result = hunt_seeds(&s, seeds, jobs, &progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut r = result.map_err(|e| UsageError(e.to_string()))?;
    if let Some(dir) = &out_dir {
        write_reproducers(&s, dir, &mut r)?;
    }
    print_hunt(&r, args.json);
    Ok(hunt_status(&r))
}
