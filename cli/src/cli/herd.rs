//! `lockstep herd`: the herd-effect sweep, as a table, CSV, JSON and charts.

use super::check::grouped;
use super::{HerdArgs, UsageError};
use indicatif::{ProgressBar, ProgressStyle};
use models::recipe::RecipeRef;
use serde::Serialize;
use sim::herd::{baseline, default_counts, row, HerdRow, Waiting, DEFAULT_CLIENTS};
use sim::scenario::{Scenario, MAX_SIM_CLIENTS};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

#[derive(Serialize)]
struct HerdJson<'a> {
    seed: u64,
    /// The default sweep's cap on a polling recipe's client counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    polling_max_clients: Option<u16>,
    rows: &'a [HerdRow],
}

/// The client counts a sweep runs.
pub enum Counts {
    /// `--clients`: every recipe at each.
    Given(Vec<u16>),
    /// The default (or the tour's share of it): a polling recipe's stop at
    /// [`sim::herd::POLLING_MAX_CLIENTS`].
    Default(Vec<u16>),
}

impl Counts {
    fn all(&self) -> &[u16] {
        match self {
            Counts::Given(c) | Counts::Default(c) => c,
        }
    }

    /// The counts a recipe that waits so runs at.
    fn of(&self, waiting: Waiting) -> Vec<u16> {
        match self {
            Counts::Given(c) => c.clone(),
            Counts::Default(c) => default_counts(waiting, c),
        }
    }

    /// The cap, where it left a polling recipe's count out: what the
    /// output says of the rows it does not have.
    fn polling_cap(&self) -> Option<u16> {
        (self.of(Waiting::Polls).len() < self.all().len()).then_some(sim::herd::POLLING_MAX_CLIENTS)
    }
}

fn parse_recipes(s: &str) -> Result<Vec<RecipeRef>, UsageError> {
    if s == "all" {
        return Ok(sim::herd::swept_recipes());
    }
    let recipes: Vec<RecipeRef> = s
        .split(',')
        .map(|r| models::recipes::parse(r.trim()).map_err(UsageError))
        .collect::<Result<_, _>>()?;
    no_repeats(&recipes, "--recipes", |r| r.to_string())?;
    Ok(recipes)
}

/// A sweep's rows are one per recipe and count: a value given twice would
/// write the same row twice into the table, the CSV and the charts.
pub(super) fn no_repeats<T: PartialEq>(
    values: &[T],
    flag: &str,
    show: impl Fn(&T) -> String,
) -> Result<(), UsageError> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(UsageError(format!("{flag}: {} is given twice", show(v))));
        }
    }
    Ok(())
}

fn parse_clients(s: &str) -> Result<Vec<u16>, UsageError> {
    s.split(',')
        .map(|c| {
            c.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (2..=MAX_SIM_CLIENTS).contains(n))
                .map(|n| n as u16)
                .ok_or_else(|| {
                    UsageError(format!(
                        "--clients: '{c}' is not a client count between 2 and {MAX_SIM_CLIENTS}"
                    ))
                })
        })
        .collect()
}

/// The user's scenario with this row's recipe and client count: a queue
/// row's producers are half its clients, a barrier row runs one round.
fn adapt(s: &Scenario, recipe: &RecipeRef, clients: u16) -> Scenario {
    let mut s = s.clone();
    s.recipe = recipe.clone();
    s.clients = clients;
    s.producers = models::model::default_producers(recipe, clients);
    // Observers only where the row's recipe has them, and someone is left
    // to campaign.
    if models::model::check_observers(recipe, clients, s.observers.into()).is_err() {
        s.observers = 0;
    }
    if recipe.app() == models::recipe::App::Barrier {
        s.rounds = 1;
    }
    s.schedule.retain(|f| f.client < clients as u32);
    // An ensemble is ZooKeeper's or etcd's: another store's row runs on
    // one server.
    if models::model::check_servers(recipe, s.servers).is_err() {
        s.servers = 1;
        s.local_sessions = false;
        s.timing.apply_us = None;
    }
    s.name = format!("{}-{}-{clients}", s.name, recipe.name());
    s
}

pub fn csv(rows: &[HerdRow]) -> String {
    let mut out = String::from(
        "recipe,scenario,clients,acquisitions,releases,notifications,notifications_per_release_max,\
         writes_per_acquisition,reads_per_acquisition,watches_per_acquisition,handoff_p50_us,handoff_p99_us,events,wall_seconds,\
         polls_per_acquisition,retry_delay_ms,closed_form_requests_per_acquisition\n",
    );
    for r in rows {
        let req = |k: &str| r.requests_per_acquisition(k);
        // No hand-off measured: empty cells, not zero.
        let handoff = match r.handoff_us.p50_p99() {
            Some((p50, p99)) => (p50.to_string(), p99.to_string()),
            None => (String::new(), String::new()),
        };
        // A recipe that watches polls not: empty cells.
        let p = polling_cells(r, 4);
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{:.4},{:.4},{:.4},{},{},{},{:.4},{},{},{}\n",
            r.recipe,
            r.scenario,
            r.clients,
            r.acquisitions,
            r.releases,
            r.notifications,
            r.notifications_per_release
                .iter()
                .max()
                .copied()
                .unwrap_or(0),
            req("writes"),
            req("reads"),
            req("watches"),
            handoff.0,
            handoff.1,
            r.events,
            r.wall_seconds,
            p.polls,
            p.delay,
            p.form,
        ));
    }
    out
}

/// A row's polling figures as text, `digits` after the point; empty for
/// a recipe that watches, and the form's cells for a run with none.
#[derive(Default)]
pub struct PollingCells {
    pub delay: String,
    pub polls: String,
    pub form: String,
    /// Measured store requests per acquisition over the closed form's.
    pub ratio: String,
}

pub fn polling_cells(r: &HerdRow, digits: usize) -> PollingCells {
    let Some(p) = &r.polling else {
        return PollingCells::default();
    };
    let none = || "-".to_string();
    let form = p.closed_form.map(|f| f.requests_per_acquisition);
    PollingCells {
        delay: p.delay_ms.map_or_else(none, |d| format!("{d}")),
        polls: format!("{:.digits$}", p.polls_per_acquisition),
        form: form.map_or_else(none, |f| format!("{f:.digits$}")),
        ratio: form.map_or_else(none, |f| {
            format!("{:.3}", r.requests_per_acquisition("all") / f)
        }),
    }
}

/// Runs the sweep; shared with the no-argument tour.
pub fn sweep(
    recipes: &[RecipeRef],
    clients: &Counts,
    extra: Option<&Scenario>,
    seed: u64,
    quiet: bool,
) -> Result<Vec<HerdRow>, UsageError> {
    let mut jobs: Vec<Scenario> = Vec::new();
    for &n in clients.all() {
        for r in recipes {
            if !clients.of(Waiting::of(r)).contains(&n) {
                continue;
            }
            jobs.push(baseline(r, n, seed));
            if let Some(s) = extra {
                jobs.push(adapt(s, r, n));
            }
        }
    }
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(jobs.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} runs  eta {eta}")
                .expect("a valid template"),
        );
        bar
    });
    // Biggest first, on every core: the last rows dominate a sweep.
    let order: Vec<usize> = (0..jobs.len()).rev().collect();
    let threads = sim::parallel::default_threads();
    let rows = sim::parallel::map(&jobs, &order, threads, &|s| row(s, seed), &|_| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    rows.map_err(|e| UsageError(e.to_string()))
}

pub fn write_files(
    dir: &Path,
    rows: &[HerdRow],
    seed: u64,
    clients: &Counts,
) -> Result<(), UsageError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| UsageError(format!("cannot create {}: {e}", dir.display())))?;
    let write = |name: &str, body: String| {
        let p = dir.join(name);
        std::fs::write(&p, body)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", p.display())))
    };
    write("herd.csv", csv(rows))?;
    write("herd.json", json(rows, seed, clients))?;
    super::charts::herd_charts(dir, rows)
}

fn json(rows: &[HerdRow], seed: u64, clients: &Counts) -> String {
    serde_json::to_string_pretty(&HerdJson {
        seed,
        polling_max_clients: clients.polling_cap(),
        rows,
    })
    .expect("serialisable")
}

/// Hand-off latency p50 or p99 in milliseconds, `-` where none was measured.
fn handoff_ms(r: &HerdRow, which: fn((u64, u64)) -> u64) -> String {
    match r.handoff_us.p50_p99() {
        Some(q) => format!("{:.3}", which(q) as f64 / 1000.0),
        None => "-".to_string(),
    }
}

/// The rows of recipes that watch: what their notifications cost.
fn watching_table(rows: &[&HerdRow]) -> String {
    let cost = [
        "notifications",
        "per release",
        "writes/acq",
        "reads/acq",
        "watches/acq",
    ];
    rows_table(rows, &cost, |r| {
        let req = |k: &str| format!("{:.2}", r.requests_per_acquisition(k));
        vec![
            grouped(r.notifications),
            if r.notifications_per_release.is_empty() {
                "-".to_string()
            } else {
                format!("{:.2}", r.notifications_per_release_mean())
            },
            req("writes"),
            req("reads"),
            req("watches"),
        ]
    })
}

/// The rows of recipes that poll: no one is notified, so what their
/// polls cost, beside the closed form.
fn polling_table(rows: &[&HerdRow]) -> String {
    let cost = [
        "retry ms",
        "polls/acq",
        "requests/acq",
        "closed form",
        "measured/form",
    ];
    rows_table(rows, &cost, |r| {
        let p = polling_cells(r, 2);
        vec![
            p.delay,
            p.polls,
            format!("{:.2}", r.requests_per_acquisition("all")),
            p.form,
            p.ratio,
        ]
    })
}

/// A table of herd rows: each row's run and clients, the columns `cost`
/// names (`cells` gives them), then its hand-off, events and wall time.
fn rows_table(rows: &[&HerdRow], cost: &[&str], cells: impl Fn(&HerdRow) -> Vec<String>) -> String {
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![r.scenario.clone(), r.clients.to_string()];
            row.extend(cells(r));
            row.extend([
                handoff_ms(r, |(p50, _)| p50),
                handoff_ms(r, |(_, p99)| p99),
                grouped(r.events),
                format!("{:.3}", r.wall_seconds),
            ]);
            row
        })
        .collect();
    let mut header = vec!["run", "clients"];
    header.extend(cost);
    header.extend(["hand-off p50 ms", "p99 ms", "events", "wall s"]);
    reports::table::render(&header, &table)
}

/// The table, one section for the recipes that watch and one for those
/// that poll, each where there are rows.
fn print_tables(rows: &[HerdRow], clients: &Counts) {
    let (polling, watching): (Vec<&HerdRow>, Vec<&HerdRow>) =
        rows.iter().partition(|r| r.polling.is_some());
    if !watching.is_empty() {
        print!("{}", watching_table(&watching));
        let blocking = watching.iter().any(|r| {
            models::recipes::parse(&r.recipe)
                .is_ok_and(|x| Waiting::of(&x) == Waiting::BlockingQueries)
        });
        if let (true, Some(cap)) = (blocking, clients.polling_cap()) {
            println!(
                "blocking-query rows (Consul) stop at {} clients in the default sweep, as \
                 polling rows do; --clients runs any count",
                grouped(cap.into())
            );
        }
    }
    if polling.is_empty() {
        return;
    }
    if !watching.is_empty() {
        println!();
    }
    println!(
        "polling (no watches: a waiter sleeps its recipe's retry delay and tries again; \
         requests per acquisition against the closed form)"
    );
    print!("{}", polling_table(&polling));
    if let Some(cap) = clients.polling_cap() {
        let left: Vec<String> = clients
            .all()
            .iter()
            .filter(|&&n| n > cap)
            .map(|&n| grouped(n.into()))
            .collect();
        println!(
            "polling rows stop at {} clients in the default sweep (not run: {}); \
             --clients runs any count",
            grouped(cap.into()),
            left.join(", ")
        );
    }
}

pub fn run(args: &HerdArgs) -> Result<ExitCode, UsageError> {
    let recipes = parse_recipes(&args.recipes)?;
    let clients = match &args.clients {
        Some(c) => Counts::Given(parse_clients(c)?),
        None => Counts::Default(DEFAULT_CLIENTS.to_vec()),
    };
    no_repeats(clients.all(), "--clients", u16::to_string)?;
    let extra = args
        .scenario
        .as_ref()
        .map(|p| Scenario::load(p).map_err(|e| UsageError(e.to_string())))
        .transpose()?;
    if let Some(s) = &extra {
        // `adapt` keeps a scheduled fault only where its client exists.
        let smallest = clients.all().iter().copied().min().unwrap_or(0);
        let dropped = s
            .schedule
            .iter()
            .filter(|f| f.client >= u32::from(smallest))
            .count();
        if dropped > 0 && !args.json {
            eprintln!(
                "note: {dropped} of {}'s scheduled faults name clients that rows of {smallest} \
                 clients do not have; those rows run without them",
                s.name
            );
        }
    }
    super::writable_dir(&args.out, "--out")?;
    let rows = sweep(&recipes, &clients, extra.as_ref(), args.seed, args.json)?;
    write_files(&args.out, &rows, args.seed, &clients)?;
    if args.json {
        println!("{}", json(&rows, args.seed, &clients));
    } else {
        print_tables(&rows, &clients);
        println!(
            "\nwritten: {}/herd.csv, herd.json and the charts",
            args.out.display()
        );
    }
    // The exit status says a property was violated; stderr says where
    // (the table is of the herd, not of verdicts).
    let violated: Vec<String> = rows
        .iter()
        .filter(|r| r.violations > 0)
        .map(|r| format!("{} ({} violations)", r.scenario, r.violations))
        .collect();
    if violated.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "lockstep herd: properties were violated in {} run{}: {}; run the scenario with \
         `lockstep run` to see them",
        violated.len(),
        if violated.len() == 1 { "" } else { "s" },
        violated.join(", ")
    );
    Ok(ExitCode::from(1))
}
