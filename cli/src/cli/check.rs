//! `lockstep check` and the no-argument summary.

use super::{counterexample, limits, CheckArgs, UsageError};
use models::checker::{check, CheckOptions, CheckResult, Kind, Level, PropertyResult, Status};
use models::model::{ModelCfg, RecipeModel};
use models::properties::PropertyName;
use models::trace::{steps, TraceStep};
use serde::Serialize;
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Serialize)]
struct PropertyJson {
    name: &'static str,
    kind: &'static str,
    status: &'static str,
    /// Seconds into the check when the verdict was known.
    decided_after: f64,
    /// The shortest counterexample, when violated and one exists.
    counterexample: Option<Vec<TraceStep>>,
}

#[derive(Serialize)]
struct CheckJson {
    recipe: String,
    clients: u8,
    rounds: u8,
    crashes: u8,
    pauses: u8,
    partitions: u8,
    lost_replies: u8,
    /// Crashed clients that may restart (`--restarts`); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    restarts: u8,
    /// The application's interrupts (`--interrupts`); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    interrupts: u8,
    /// Consul's node checks that go critical (`--critical-checks`);
    /// absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    critical_checks: u8,
    /// A ZooKeeper ensemble's followers cut off from the leader
    /// (`--isolations`); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    isolations: u8,
    /// A ZooKeeper ensemble's followers the leader stops hearing
    /// (`--mutes`); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    mutes: u8,
    fencing: bool,
    policy: String,
    /// Waiters may give an acquisition up (`--acquire-timeout`).
    acquire_timeout: bool,
    /// A holder's re-entries per hold (`--reentries`).
    reentries: u8,
    /// A shared lock's writers (`--writers`); absent for other recipes.
    #[serde(skip_serializing_if = "Option::is_none")]
    writers: Option<u8>,
    /// A semaphore's permits (`--permits`); absent for other recipes.
    #[serde(skip_serializing_if = "Option::is_none")]
    permits: Option<u8>,
    /// An election's observers (`--observers`); absent where there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    observers: Option<u8>,
    /// How time was treated: `untimed`, or the ticks' durations.
    time: String,
    symmetry: bool,
    /// The partial-order reduction was on.
    partial_order: bool,
    /// Sleep sets were used: `states` (transitions) is fewer, the unique
    /// states the same.
    sleep_sets: bool,
    complete: bool,
    /// The search stopped once every property asked (`--property`) was
    /// decided, before exploring everything.
    decided_early: bool,
    /// The state limit, and where it came from.
    max_states: usize,
    max_states_from: String,
    /// The memory limit in bytes, and where it came from; absent when
    /// there is none (the available memory could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_memory: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_memory_from: Option<String>,
    /// The resident memory read when the memory limit stopped the
    /// search; absent when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped_at_memory: Option<u64>,
    states: u64,
    unique_states: u64,
    max_depth: u32,
    seconds: f64,
    states_per_second: f64,
    unique_states_per_second: f64,
    /// The process's peak resident memory (Linux), and per unique state.
    peak_memory_bytes: Option<u64>,
    bytes_per_state: Option<f64>,
    /// The most states one BFS level held in full.
    peak_frontier: u64,
    /// The fingerprint table and the graph, in bytes.
    index_bytes: u64,
    properties: Vec<PropertyJson>,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Holds => "holds",
        Status::Violated => "violated",
        Status::Unknown => "unknown",
    }
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Always => "always",
        Kind::Sometimes => "sometimes",
        Kind::Progress => "progress",
    }
}

/// Thousands separators, for reading large counts at a glance.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// One line on the terminal, rewritten after each level of a check.
fn progress_line(l: &Level) {
    eprint!(
        "\r\x1b[2Klevel {}: {} unique states, {} to expand, {:.0} s",
        l.depth,
        grouped(l.unique_states),
        grouped(l.frontier),
        l.seconds
    );
}

fn unique_per_second(r: &CheckResult) -> f64 {
    r.unique_states as f64 / r.seconds.max(1e-9)
}

/// Peak memory, and per unique state.
fn memory(r: &CheckResult) -> (Option<u64>, Option<f64>) {
    let peak = models::checker::memory::peak_resident_bytes();
    (peak, peak.map(|b| b as f64 / r.unique_states.max(1) as f64))
}

fn per_second(r: &CheckResult) -> f64 {
    if r.seconds > 0.0 {
        r.states as f64 / r.seconds
    } else {
        0.0
    }
}

/// What a violation's counterexample shows: for a `sometimes` property that
/// never happened there is no path, only the fact.
fn counterexample(model: &RecipeModel, p: &PropertyResult) -> Option<Vec<TraceStep>> {
    if p.status != Status::Violated || p.kind == Kind::Sometimes {
        return None;
    }
    p.path.as_ref().map(|path| steps(model, path))
}

/// 1 when a property is violated (a counterexample found before a limit
/// is still one); else 3 when the search stopped at its state limit; else 0.
fn exit_code(r: &CheckResult) -> ExitCode {
    if r.properties.iter().any(|p| p.status == Status::Violated) {
        ExitCode::from(1)
    } else if !r.complete {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// The properties `--property` names, each one of the recipe's
/// application's; none asks for all.
fn asked_properties(names: &[String], cfg: &ModelCfg) -> Result<Vec<PropertyName>, UsageError> {
    let app = cfg.recipe.app();
    let judged = cfg.judged();
    let known = || {
        judged
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(twice) = names
        .iter()
        .enumerate()
        .find_map(|(i, n)| names[..i].contains(n).then_some(n))
    {
        return Err(UsageError(format!(
            "--property {twice} is given twice: name each property once"
        )));
    }
    names
        .iter()
        .map(|n| match PropertyName::parse(n) {
            Some(p) if judged.contains(&p) => Ok(p),
            Some(_) => Err(UsageError(format!(
                "--property {n}: not a property of {} (a {app} recipe; its properties: {})",
                cfg.recipe,
                known()
            ))),
            None => Err(UsageError(format!(
                "--property {n}: no such property (the properties of {}: {})",
                cfg.recipe,
                known()
            ))),
        })
        .collect()
}

/// The memory limit: the flag's, or the machine's default (none where the
/// available memory cannot be read); and its source.
fn memory_limit(asked: Option<&str>) -> Result<Option<(u64, String)>, UsageError> {
    match asked {
        None => Ok(limits::default_max_memory()),
        Some(text) => limits::parse_memory(text)
            .map(|bytes| Some((bytes, "--max-memory".to_string())))
            .map_err(UsageError),
    }
}

/// The state limit: the flag's, or the machine's default; and its source.
fn state_limit(asked: Option<usize>) -> Result<(usize, String), UsageError> {
    match asked {
        None => Ok(limits::default_max_states()),
        Some(n) if n == 0 || n as u64 > limits::max_states_cap() => Err(UsageError(format!(
            "--max-states must be between 1 and {} (got {n})",
            limits::max_states_cap()
        ))),
        Some(n) => Ok((n, "--max-states".to_string())),
    }
}

pub fn run(args: &CheckArgs) -> Result<ExitCode, UsageError> {
    if args.model.list {
        return super::recipes::run(args.json);
    }
    let cfg = args.model.to_cfg()?;
    let (max_states, max_states_from) = state_limit(args.max_states)?;
    let max_memory = memory_limit(args.max_memory.as_deref())?;
    match args.threads {
        Some(t) if t == 0 || t > sim::parallel::MAX_THREADS => {
            return Err(UsageError(format!(
                "--threads must be between 1 and {} (got {t})",
                sim::parallel::MAX_THREADS
            )))
        }
        Some(_) | None => {}
    }
    let asked = asked_properties(&args.property, &cfg)?;
    // The partial-order reduction runs without sleep sets: turning them off
    // as well changes nothing, and a flag that does nothing is a mistake.
    if args.partial_order && args.no_sleep_sets {
        return Err(UsageError(
            "--no-sleep-sets with --partial-order: the partial-order reduction never uses sleep sets \
             (give one of the two)"
                .into(),
        ));
    }
    // A timed check explores without reductions: a flag that turns one
    // on or off would do nothing.
    if cfg.time.ticks().is_some() {
        let useless = [
            (args.partial_order, "--partial-order"),
            (args.no_sleep_sets, "--no-sleep-sets"),
            (args.no_symmetry, "--no-symmetry"),
        ];
        if let Some((_, flag)) = useless.iter().find(|(given, _)| *given) {
            return Err(UsageError(format!(
                "{flag} with --time ticks: a timed check explores every state without symmetry, \
                 partial-order reduction or sleep sets (a tick touches every client)"
            )));
        }
    }
    let opts = CheckOptions {
        symmetry: !args.no_symmetry,
        partial_order: args.partial_order,
        sleep_sets: !args.no_sleep_sets,
        max_states,
        max_resident: max_memory.as_ref().map(|(bytes, _)| *bytes),
        threads: args.threads,
        on_level: std::io::stderr()
            .is_terminal()
            .then_some(progress_line as fn(&Level)),
        ..CheckOptions::default()
    }
    .asking(&asked);
    // Bad output paths fail before the search, not after it.
    if let Some(dir) = &args.itf {
        super::writable_dir(dir, "--itf")?;
    }
    if let (Some(html), Some(dir)) = (&args.html, &args.itf) {
        // The traces the check may write: one for each property asked.
        let judged = cfg.judged();
        let may_write = match asked.is_empty() {
            true => &judged[..],
            false => &asked[..],
        };
        let itf_name = html.file_name().filter(|n| {
            may_write
                .iter()
                .any(|p| n.to_str() == Some(&format!("{}.itf.json", p.name())))
        });
        if itf_name.is_some_and(|n| super::same_file(&dir.join(n), html)) {
            return Err(UsageError(format!(
                "--html {} is where --itf {} writes a property's trace (PROPERTY.itf.json): give the page another name",
                html.display(),
                dir.display()
            )));
        }
    }
    let html = args
        .html
        .as_ref()
        .map(|p| {
            std::fs::File::create(p)
                .map(|f| (p.clone(), f))
                .map_err(|e| UsageError(format!("--html {}: cannot write: {e}", p.display())))
        })
        .transpose()?;
    let model = cfg.clone().into_model()?;
    let r = check(&model, opts);
    if opts.on_level.is_some() {
        eprint!("\r\x1b[2K");
    }
    let r = r.map_err(super::check_failed)?;
    // Read once, after the search: its high-water mark.
    let (peak_memory, bytes_per_state) = memory(&r);
    let mut written = Vec::new();
    if let Some((path, mut file)) = html {
        use std::io::Write;
        file.write_all(counterexample::html_page(&model, &r).as_bytes())
            .map_err(|e| UsageError(format!("--html {}: cannot write: {e}", path.display())))?;
        written.push(path.display().to_string());
    }
    if let Some(dir) = &args.itf {
        for (name, itf) in super::itf::itf_all(&model, &r) {
            let path = dir.join(format!("{name}.itf.json"));
            let text = serde_json::to_string_pretty(&itf).expect("serialisable");
            std::fs::write(&path, text + "\n")
                .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))?;
            written.push(path.display().to_string());
        }
    }
    if args.json {
        let out = CheckJson {
            recipe: cfg.recipe.to_string(),
            clients: cfg.clients,
            rounds: cfg.rounds,
            crashes: cfg.faults.crashes,
            pauses: cfg.faults.pauses,
            partitions: cfg.faults.partitions,
            lost_replies: cfg.faults.lost_replies,
            restarts: cfg.faults.restarts,
            interrupts: cfg.faults.interrupts,
            critical_checks: cfg.faults.critical_checks,
            isolations: cfg.faults.isolations,
            mutes: cfg.faults.mutes,
            fencing: cfg.fencing,
            policy: cfg.policy.to_string(),
            acquire_timeout: cfg.acquire_timeout,
            reentries: cfg.reentries,
            writers: (cfg.recipe.app() == models::recipe::App::SharedLock).then_some(cfg.writers),
            permits: (cfg.recipe.app() == models::recipe::App::Semaphore).then_some(cfg.permits),
            observers: (cfg.observers > 0).then_some(cfg.observers),
            time: match cfg.time.ticks() {
                Some(ticks) => ticks.to_string(),
                None => "untimed".into(),
            },
            symmetry: r.symmetry,
            partial_order: r.partial_order,
            sleep_sets: r.sleep_sets,
            complete: r.complete,
            decided_early: r.decided_early,
            max_states,
            max_states_from,
            max_memory: max_memory.as_ref().map(|(bytes, _)| *bytes),
            max_memory_from: max_memory.as_ref().map(|(_, from)| from.clone()),
            stopped_at_memory: r.stopped_at_memory,
            states: r.states,
            unique_states: r.unique_states,
            max_depth: r.max_depth,
            seconds: r.seconds,
            states_per_second: per_second(&r),
            unique_states_per_second: unique_per_second(&r),
            peak_memory_bytes: peak_memory,
            bytes_per_state,
            peak_frontier: r.peak_frontier,
            index_bytes: r.index_bytes,
            properties: r
                .properties
                .iter()
                .map(|p| PropertyJson {
                    name: p.name.name(),
                    kind: kind_word(p.kind),
                    status: status_word(p.status),
                    decided_after: p.decided_after,
                    counterexample: counterexample(&model, p),
                })
                .collect(),
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serialisable")
        );
        return Ok(exit_code(&r));
    }

    println!("lockstep check: {cfg}");
    println!(
        "symmetry reduction: {}",
        match (r.symmetry, cfg.time.ticks().is_some()) {
            (true, _) => "on (clients are interchangeable)",
            (false, true) => "off (a timed check explores every state)",
            (false, false) => "off",
        }
    );
    if r.partial_order {
        println!(
            "partial-order reduction: on (with progress asked, only steps that cannot make a \
             goal false are taken alone; a counterexample may be longer than the shortest)"
        );
    }
    if r.sleep_sets {
        println!(
            "sleep sets: on (of two commuting steps, the second is not taken again after the \
             first: the same states and counterexamples from fewer transitions; \
             --no-sleep-sets takes every step)"
        );
    }
    match (r.complete, r.stopped_at_memory, &max_memory) {
        (true, _, _) => {}
        (false, Some(at), Some((limit, from))) => println!(
            "INCOMPLETE: stopped taking new states at {} unique states, when the checker's \
             memory reached {} (the limit: {}, {from}); undecided properties say unknown. \
             Raise --max-memory on a machine with more, or check a smaller configuration.",
            grouped(r.unique_states),
            limits::bytes_words(at),
            limits::bytes_words(*limit)
        ),
        (false, _, _) => println!(
            "INCOMPLETE: stopped at the limit of {} unique states ({max_states_from}); \
             undecided properties say unknown. Raise --max-states to search further.",
            grouped(max_states as u64)
        ),
    }
    if r.decided_early {
        println!(
            "stopped as soon as every property asked was decided (the states below are \
             those explored until then)"
        );
    } else if !args.property.is_empty() && r.properties.iter().any(|p| p.kind == Kind::Progress) {
        println!("progress is decided on the whole state graph: the search explored everything");
    }
    println!();
    // What the search found, then what it cost on this machine (apart, so
    // that the first reads the same everywhere).
    let rows = vec![
        vec!["states explored".to_string(), grouped(r.states)],
        vec!["unique states".to_string(), grouped(r.unique_states)],
        vec!["max depth".to_string(), r.max_depth.to_string()],
    ];
    print!("{}", reports::table::render(&["measure", "value"], &rows));
    println!();
    let rows = vec![
        vec!["seconds".to_string(), format!("{:.2}", r.seconds)],
        vec!["states/s".to_string(), grouped(per_second(&r) as u64)],
        vec![
            "unique states/s".to_string(),
            grouped(unique_per_second(&r) as u64),
        ],
        vec![
            "peak memory".to_string(),
            match (peak_memory, bytes_per_state) {
                (Some(b), Some(per)) => {
                    format!("{:.0} MB ({per:.0} B a unique state)", b as f64 / 1e6)
                }
                _ => "not measured (no /proc/self/status)".to_string(),
            },
        ],
        vec![
            "index".to_string(),
            format!(
                "{:.0} MB; peak frontier {} states",
                r.index_bytes as f64 / 1e6,
                grouped(r.peak_frontier)
            ),
        ],
    ];
    print!("{}", reports::table::render(&["cost", "value"], &rows));
    println!();
    let rows: Vec<Vec<String>> = r
        .properties
        .iter()
        .map(|p| {
            let what = match (p.kind, p.status) {
                (Kind::Sometimes, Status::Holds) => "holds (witnessed)".to_string(),
                (Kind::Sometimes, Status::Violated) => {
                    "VIOLATED (never happens: a pass would be vacuous)".to_string()
                }
                (_, Status::Violated) => "VIOLATED".to_string(),
                (_, s) => status_word(s).to_string(),
            };
            vec![
                p.name.to_string(),
                kind_word(p.kind).to_string(),
                what,
                // An unknown verdict was never decided.
                match p.status {
                    Status::Unknown => "-".to_string(),
                    Status::Holds | Status::Violated => format!("{:.2}", p.decided_after),
                },
            ]
        })
        .collect();
    print!(
        "{}",
        reports::table::render(&["property", "kind", "result", "decided (s)"], &rows)
    );
    for p in &r.properties {
        if let Some(trace) = counterexample(&model, p) {
            println!();
            let tail = match (p.kind, p.repeats_from) {
                (Kind::Progress, Some(from)) => format!(
                    "; a livelock: steps {} to {} repeat forever, a client sending on",
                    from + 1,
                    trace.len()
                ),
                (Kind::Progress, None) => "; from its last state no completion is reachable".into(),
                (Kind::Always | Kind::Sometimes, _) => String::new(),
            };
            let which = match p.repeats_from {
                Some(_) => "counterexample",
                None => "shortest counterexample",
            };
            println!(
                "{} violated — {which}, {} steps (replayed and re-checked{tail}):",
                p.name,
                trace.len()
            );
            for s in &trace {
                println!("{s}");
            }
        }
    }
    if !written.is_empty() {
        println!();
    }
    for w in &written {
        println!("written: {w}");
    }
    Ok(exit_code(&r))
}
