//! `lockstep bench`: the model checker's speed, the symmetry and the
//! partial-order reductions,
//! the simulator's (a dense run, a hunt, the full herd sweep), and the
//! comparisons with the SPIN twin (time to answer; throughput and memory per
//! unique state, `spin_twin.rs`), measured in one run so the figures compare.

use super::baseline;
use super::check::grouped;
use super::{BenchArgs, UsageError};
use models::checker::{check, CheckOptions, CheckResult};
use models::model::{FaultBudget, ModelCfg, MAX_CLIENTS, MIN_CLIENTS};
use models::recipe::App;
use serde::Serialize;
use sim::engine::simulate;
use sim::hunt::{run_seeds_with, SeedSet};
use sim::scenario::Scenario;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Serialize)]
struct Row {
    recipe: &'static str,
    clients: u8,
    crashes: u8,
    states: u64,
    unique_states: u64,
    seconds: f64,
    states_per_second: f64,
    /// Unique states without symmetry reduction (when measured).
    unique_states_without_symmetry: Option<u64>,
    seconds_without_symmetry: Option<f64>,
    /// unique_states_without_symmetry / unique_states.
    symmetry_reduction: Option<f64>,
    /// Unique states of the same check (every property, progress too)
    /// with the partial-order reduction on top of symmetry, its seconds,
    /// and unique_states / these.
    unique_states_partial_order: u64,
    seconds_partial_order: f64,
    partial_order_reduction: f64,
}

fn rate(r: &CheckResult) -> f64 {
    r.states as f64 / r.seconds.max(1e-9)
}

#[derive(Serialize)]
struct SimBench {
    /// 10 clients × 200 rounds, one thread, `DENSE_RUNS` runs (seeds 1..)
    /// one after the other: about 1.4 M events.
    runs: u64,
    virtual_seconds: f64,
    wall_seconds: f64,
    virtual_per_wall: f64,
    events: u64,
    events_per_second: f64,
    /// `hunt` on 5 clients × 20 rounds.
    hunt_seeds: u64,
    hunt_wall_seconds: f64,
    seeds_per_second: f64,
    hunt_events_per_second: f64,
    jobs: usize,
}

fn scenario(clients: u16, rounds: u8) -> Scenario {
    let text = format!(
        "recipe = \"fair-predecessor\"\nclients = {clients}\nrounds = {rounds}\n\
         [timing]\nsession_timeout_ms = 4000\nthink_ms = [5, 50]\nhold_ms = [10, 40]\nlatency_ms = [0.2, 2.0]\n"
    );
    Scenario::parse(&text, "bench", "bench").expect("a valid bench scenario")
}

/// Runs of the dense 10-client scenario: one is 35 k events and 40 ms,
/// too short to time; forty are long enough.
const DENSE_RUNS: u64 = 40;

fn sim_bench() -> Result<SimBench, UsageError> {
    let long = scenario(10, 200);
    let started = Instant::now();
    let (mut dense_events, mut virtual_us) = (0u64, 0u64);
    for seed in 1..=DENSE_RUNS {
        let o = simulate(&long, seed, false);
        dense_events += o.metrics.events;
        virtual_us += o.metrics.end_us;
    }
    let wall = started.elapsed().as_secs_f64();
    let jobs = sim::parallel::default_threads();
    let hunt = scenario(5, 20);
    let seeds = SeedSet::range(0, 2000);
    let started = Instant::now();
    let events = run_seeds_with(&hunt, seeds, jobs, &|_| {}, &|o| Some(o.metrics.events))
        .map_err(|e| UsageError(e.to_string()))?;
    let hunt_wall = started.elapsed().as_secs_f64();
    let hunt_events: u64 = events.iter().sum();
    let virtual_seconds = virtual_us as f64 / 1e6;
    Ok(SimBench {
        runs: DENSE_RUNS,
        virtual_seconds,
        wall_seconds: wall,
        virtual_per_wall: virtual_seconds / wall.max(1e-9),
        events: dense_events,
        events_per_second: dense_events as f64 / wall.max(1e-9),
        hunt_seeds: seeds.len(),
        hunt_wall_seconds: hunt_wall,
        seeds_per_second: seeds.len() as f64 / hunt_wall.max(1e-9),
        hunt_events_per_second: hunt_events as f64 / hunt_wall.max(1e-9),
        jobs,
    })
}

/// The full default herd sweep of the recipes that watch, as `lockstep
/// herd` runs them: the rows this bench has timed from the start. The
/// polling rows the default sweep adds are `lockstep herd`'s alone.
#[derive(Serialize)]
struct HerdBench {
    rows: usize,
    events: u64,
    threads: usize,
    wall_seconds: f64,
    /// The rows' own times added up (each row runs on one thread).
    rows_seconds: f64,
    /// The target for `wall_seconds` on 2 cores.
    target_wall_seconds: f64,
    longest_row: String,
    longest_row_seconds: f64,
}

/// The checker's memory target at 4 clients: bytes a unique state.
const TARGET_BYTES_PER_STATE: u64 = 64;

/// The sweep's target: under a minute on 2 cores.
const HERD_TARGET_SECONDS: f64 = 60.0;

fn herd_bench() -> Result<HerdBench, UsageError> {
    // The ZooKeeper and etcd watchers: the set this figure has timed
    // since before the pollers (Redis) and the blocking queries (Consul)
    // joined the sweep, so that it stays comparable across builds.
    let recipes = sim::herd::swept_recipes_waiting(sim::herd::Waiting::Watches);
    let clients = super::herd::Counts::Default(sim::herd::DEFAULT_CLIENTS.to_vec());
    let started = Instant::now();
    let rows = super::herd::sweep(&recipes, &clients, None, 1, true)?;
    let wall = started.elapsed().as_secs_f64();
    let longest = rows
        .iter()
        .max_by(|a, b| a.wall_seconds.total_cmp(&b.wall_seconds))
        .ok_or_else(|| UsageError("the herd sweep ran no rows".into()))?;
    Ok(HerdBench {
        rows: rows.len(),
        events: rows.iter().map(|r| r.events).sum(),
        // The sweep's own count of workers.
        threads: sim::parallel::default_threads(),
        wall_seconds: wall,
        rows_seconds: rows.iter().map(|r| r.wall_seconds).sum(),
        target_wall_seconds: HERD_TARGET_SECONDS,
        longest_row: format!("{}, {} clients", longest.recipe, longest.clients),
        longest_row_seconds: longest.wall_seconds,
    })
}

fn print_herd(h: &HerdBench) {
    println!(
        "herd sweep: every recipe that watches at 2 to 10,000 clients ({} rows, {} threads)",
        h.rows, h.threads
    );
    let rows = vec![
        vec![
            "wall time".to_string(),
            format!(
                "{:.1} s (target: under {:.0} s on 2 cores)",
                h.wall_seconds, h.target_wall_seconds
            ),
        ],
        vec![
            "rows' own times added".into(),
            format!("{:.1} s", h.rows_seconds),
        ],
        vec!["events".into(), grouped(h.events)],
        vec![
            format!("longest row: {}", h.longest_row),
            format!("{:.1} s", h.longest_row_seconds),
        ],
    ];
    print!("{}", reports::table::render(&["measure", "value"], &rows));
    println!();
}

/// A table row of `columns` for a SPIN twin that did not run, saying why.
fn spin_not_run(why: Option<&str>, columns: usize) -> Vec<String> {
    let mut row = vec![format!(
        "SPIN twin: not run ({})",
        why.unwrap_or("unknown reason")
    )];
    row.resize(columns, "-".into());
    row
}

/// Prints the time-to-answer comparison.
fn print_answer(a: &super::spin_twin::Answer) {
    println!("time to answer: fair-predecessor, 3 clients, 1 pause, shortest mutual_exclusion counterexample");
    let mut rows = vec![vec![
        "lockstep (check --property mutual_exclusion)".to_string(),
        format!("{:.3} s", a.seconds),
        a.steps.to_string(),
        grouped(a.unique_states),
    ]];
    match (&a.spin_seconds, &a.spin_steps, &a.spin_skipped) {
        (Some(s), Some(d), _) => rows.push(vec![
            "SPIN twin (pan -DBFS, build not counted; steps: error depth)".to_string(),
            format!("{s:.3} s"),
            d.to_string(),
            "-".to_string(),
        ]),
        (_, _, why) => rows.push(spin_not_run(why.as_deref(), 4)),
    }
    print!(
        "{}",
        reports::table::render(&["checker", "time", "steps", "unique states"], &rows)
    );
    if let Some(r) = a.ratio() {
        println!("lockstep / SPIN: {r:.1}x (target: within 10x)");
    }
    println!();
}

/// Megabytes (10^6 bytes), for a peak memory.
fn megabytes(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

/// Prints the throughput and memory per unique state beside the SPIN twin.
fn print_per_state(p: &super::spin_twin::PerState) {
    println!(
        "throughput and memory per unique state: fair-predecessor, {} clients, {} crash \
         (lockstep: child processes on {} threads; SPIN: pan, one thread)",
        p.lockstep_full_check.clients, p.lockstep_full_check.crashes, p.lockstep_threads
    );
    let lockstep = |what: &str, r: &super::spin_twin::LockstepRow| {
        vec![
            what.to_string(),
            grouped(r.unique_states),
            format!("{:.2}", r.seconds),
            grouped(r.unique_states_per_second as u64),
            r.peak_memory_bytes.map_or("-".into(), megabytes),
            r.bytes_per_state.map_or("-".into(), |b| format!("{b:.0}")),
        ]
    };
    let mut rows = vec![
        lockstep(
            "lockstep, safety only (--property mutual_exclusion; no graph edges)",
            &p.lockstep_safety_only,
        ),
        lockstep(
            "lockstep, full check (progress included; keeps the edges)",
            &p.lockstep_full_check,
        ),
    ];
    match (&p.spin_twin, &p.spin_skipped) {
        (Some(s), _) => rows.push(vec![
            "SPIN twin (pan -DSAFETY -DNOREDUCE -w22; pan's own figures)".to_string(),
            grouped(s.unique_states),
            format!("{:.2}", s.seconds),
            grouped(s.unique_states_per_second as u64),
            megabytes(s.peak_memory_bytes),
            format!("{:.0}", s.bytes_per_state),
        ]),
        (None, why) => rows.push(spin_not_run(why.as_deref(), 6)),
    }
    print!(
        "{}",
        reports::table::render(
            &[
                "checker",
                "unique states",
                "seconds",
                "unique states/s",
                "peak memory",
                "bytes/state"
            ],
            &rows
        )
    );
    println!(
        "the state counts differ: lockstep models more (asynchronous acknowledged writes, \
         sessions, links) and reduces symmetry, so the comparison is per unique state"
    );
    if let (Some(r), Some(s)) = (&p.lockstep_over_spin, &p.spin_twin) {
        let times = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}x"));
        let each: Vec<String> = p.rounds.iter().map(|r| times(r.safety_only_rate)).collect();
        println!(
            "lockstep / SPIN, safety only, unique states/s, round by round: {} \
             (the table shows the median round)",
            each.join(", ")
        );
        if let Some(why) = &p.spin_skipped {
            println!("the SPIN twin did not run in every round ('-' above): {why}");
        }
        let compared = p
            .rounds
            .iter()
            .filter(|r| r.safety_only_rate.is_some())
            .count();
        let median = match compared {
            1 => "safety only, one round".to_string(),
            n => format!(
                "safety only, the median of {n} rounds, {}–{}",
                times(Some(r.safety_only_rate_lowest)),
                times(Some(r.safety_only_rate_highest))
            ),
        };
        println!(
            "lockstep / SPIN, this run: unique states/s {} ({median}), {} (full check, \
             against the median round's pan); bytes/state {} (safety only), {} (full check); \
             pan's wall time {:.2} s",
            times(Some(r.safety_only_rate)),
            times(Some(r.full_check_rate)),
            times(r.safety_only_bytes_per_state),
            times(r.full_check_bytes_per_state),
            s.wall_seconds
        );
        let met = |ok: bool| if ok { "met" } else { "not met" };
        let bytes = p.lockstep_safety_only.bytes_per_state;
        println!(
            "targets: unique states/s at least SPIN's (1.00x), safety only: {}; \
             at most {TARGET_BYTES_PER_STATE} bytes a unique state, safety only: {}",
            met(r.safety_only_rate >= 1.0),
            bytes.map_or("not measured", |b| met(b <= TARGET_BYTES_PER_STATE as f64)),
        );
    }
    println!();
}

/// The most rounds `--rounds` takes (each is a check of some seconds and
/// a run of pan).
const MAX_ROUNDS: u32 = 20;

pub fn run(args: &BenchArgs) -> Result<ExitCode, UsageError> {
    if let Some(other) = &args.against {
        return super::paired::run(args, other);
    }
    // The baselines are read (and a name to save under checked) before
    // minutes of measuring.
    let old = args.baseline.as_deref().map(baseline::load).transpose()?;
    if let Some(name) = &args.save_baseline {
        baseline::check_name(name)?;
    }
    if !(1..=MAX_ROUNDS).contains(&args.rounds) {
        return Err(UsageError(format!(
            "--rounds takes 1 to {MAX_ROUNDS} rounds, got {}",
            args.rounds
        )));
    }
    if args.skip_check && args.skip_sim {
        return Err(UsageError(
            "--skip-check and --skip-sim leave nothing to measure".into(),
        ));
    }
    // Every configuration is checked before anything is measured: a typo
    // is an error now, not after minutes of measuring.
    let configurations = checker_configurations(args)?;
    // So is the SPIN twin's place, where the comparisons need it.
    let anchors = (!args.skip_check)
        .then(|| super::spin_twin::anchors(args.anchors.as_deref()))
        .transpose()?;
    let sim = (!args.skip_sim).then(sim_bench).transpose()?;
    let herd = (!args.skip_sim && !args.skip_herd)
        .then(herd_bench)
        .transpose()?;
    let answer = anchors
        .as_deref()
        .map(super::spin_twin::measure)
        .transpose()?;
    if let (Some(a), false) = (&answer, args.json) {
        print_answer(a);
    }
    let per_state = anchors
        .as_deref()
        .map(|dir| super::spin_twin::measure_per_state(dir, args.rounds, args.json))
        .transpose()?;
    if let (Some(p), false) = (&per_state, args.json) {
        print_per_state(p);
    }
    if let Some(b) = &sim {
        if !args.json {
            println!("simulator");
            let rows = vec![
                vec![
                    format!(
                        "10 clients × 200 rounds, {} runs on one thread: virtual time",
                        b.runs
                    ),
                    format!("{:.1} s", b.virtual_seconds),
                ],
                vec!["wall time".into(), format!("{:.3} s", b.wall_seconds)],
                vec!["events".into(), grouped(b.events)],
                vec![
                    "virtual / wall".into(),
                    format!("{}x", grouped(b.virtual_per_wall as u64)),
                ],
                vec![
                    "events/s (one thread)".into(),
                    grouped(b.events_per_second as u64),
                ],
                vec![
                    format!("hunt, 5 clients × 20 rounds, {} jobs: seeds/s", b.jobs),
                    grouped(b.seeds_per_second as u64),
                ],
                vec![
                    "hunt events/s".into(),
                    grouped(b.hunt_events_per_second as u64),
                ],
            ];
            print!("{}", reports::table::render(&["measure", "value"], &rows));
            println!();
        }
    }
    if let (Some(h), false) = (&herd, args.json) {
        print_herd(h);
    }
    if args.skip_check {
        let report = serde_json::json!({ "simulator": sim, "herd_sweep": herd });
        return finish(args, old.as_ref(), &report);
    }
    let mut rows = Vec::new();
    for cfg in configurations {
        let (name, n) = (cfg.recipe.name(), cfg.clients);
        let model = cfg.into_model()?;
        let not_alike = super::check_failed;
        let with = check(&model, CheckOptions::default()).map_err(not_alike)?;
        let without = match n <= args.compare_up_to {
            true => Some(
                check(
                    &model,
                    CheckOptions {
                        symmetry: false,
                        ..CheckOptions::default()
                    },
                )
                .map_err(not_alike)?,
            ),
            false => None,
        };
        let reduced = check(
            &model,
            CheckOptions {
                partial_order: true,
                ..CheckOptions::default()
            },
        )
        .map_err(not_alike)?;
        if !args.json {
            eprintln!("measured {name} with {n} clients");
        }
        rows.push(Row {
            recipe: name,
            clients: n,
            crashes: args.crashes,
            states: with.states,
            unique_states: with.unique_states,
            seconds: with.seconds,
            states_per_second: rate(&with),
            unique_states_without_symmetry: without.as_ref().map(|w| w.unique_states),
            seconds_without_symmetry: without.as_ref().map(|w| w.seconds),
            symmetry_reduction: without
                .as_ref()
                .map(|w| w.unique_states as f64 / with.unique_states as f64),
            unique_states_partial_order: reduced.unique_states,
            seconds_partial_order: reduced.seconds,
            partial_order_reduction: with.unique_states as f64
                / reduced.unique_states.max(1) as f64,
        });
    }
    let report = serde_json::json!({
        "simulator": sim,
        "herd_sweep": herd,
        "time_to_answer": answer,
        "per_state": per_state,
        "checker": rows,
    });
    if args.json {
        return finish(args, old.as_ref(), &report);
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.recipe.to_string(),
                r.clients.to_string(),
                grouped(r.states),
                grouped(r.unique_states),
                format!("{:.2}", r.seconds),
                grouped(r.states_per_second as u64),
                r.unique_states_without_symmetry.map_or("-".into(), grouped),
                r.symmetry_reduction
                    .map_or("-".into(), |x| format!("{x:.2}x")),
                grouped(r.unique_states_partial_order),
                format!("{:.2}x", r.partial_order_reduction),
            ]
        })
        .collect();
    print!(
        "{}",
        reports::table::render(
            &[
                "recipe",
                "clients",
                "states",
                "unique",
                "seconds",
                "states/s",
                "unique w/o symmetry",
                "reduction",
                "unique, partial order",
                "reduction"
            ],
            &table
        )
    );
    finish(args, old.as_ref(), &report)
}

/// The model checker's configurations: every lock and election recipe at
/// each of `--clients`, with `--crashes`.
fn checker_configurations(args: &BenchArgs) -> Result<Vec<ModelCfg>, UsageError> {
    let clients: Vec<u8> = args
        .clients
        .split(',')
        .map(|c| {
            c.trim()
                .parse::<u8>()
                .ok()
                .filter(|n| (MIN_CLIENTS..=MAX_CLIENTS).contains(n))
                .ok_or_else(|| {
                    UsageError(format!(
                        "--clients takes a comma-separated list of counts between {MIN_CLIENTS} and {MAX_CLIENTS}, got '{c}'"
                    ))
                })
        })
        .collect::<Result<_, _>>()?;
    // One row per recipe and count.
    super::herd::no_repeats(&clients, "--clients", u8::to_string)?;
    let mut configurations = Vec::new();
    for &n in &clients {
        // The locks and elections: a double barrier's leave at 4 members
        // with a crash runs past tens of millions of states, which is no
        // throughput figure but a long wait. The Redis locks are not among
        // them: their figures would move the totals the saved baselines
        // compare, and a Redlock at 4 clients is as long a wait.
        let measured = models::recipes::defaults()
            .into_iter()
            .filter(|r| r.face() != models::recipe::Face::Redis)
            .filter(|r| match r.app() {
                App::Lock | App::Election => true,
                App::Barrier | App::Queue | App::SharedLock | App::Semaphore => false,
            });
        for recipe in measured {
            let cfg = ModelCfg {
                faults: FaultBudget {
                    crashes: args.crashes,
                    ..FaultBudget::default()
                },
                ..ModelCfg::new(recipe, n)
            };
            cfg.validate().map_err(|e| {
                UsageError(format!("--clients {n} --crashes {}: {e}", args.crashes))
            })?;
            configurations.push(cfg);
        }
    }
    Ok(configurations)
}

/// Prints the JSON report (`--json`), saves it as a baseline, and compares
/// it with one: every figure beside its baseline's, criterion-style.
fn finish(
    args: &BenchArgs,
    old: Option<&serde_json::Value>,
    report: &serde_json::Value,
) -> Result<ExitCode, UsageError> {
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(report).expect("serialisable")
        );
    }
    if let (Some(name), Some(old)) = (&args.baseline, old) {
        let changes = baseline::compare(old, report);
        if changes.is_empty() {
            return Err(UsageError(format!(
                "baseline '{name}' has none of this run's figures (it measured other parts: \
                 run the bench with the same --skip-* flags as the baseline)"
            )));
        }
        if !args.json {
            println!();
            println!("against baseline '{name}':");
            print!("{}", baseline::render(&changes));
        }
    }
    if let Some(name) = &args.save_baseline {
        let path = baseline::save(name, report)?;
        if !args.json {
            println!("baseline '{name}' saved: {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
