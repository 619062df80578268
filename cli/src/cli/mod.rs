//! Command-line interface: argument definitions and dispatch.

mod baseline;
mod bench;
mod charts;
mod check;
mod counterexample;
mod explore;
mod front;
mod herd;
mod itf;
mod limits;
mod paired;
mod recipes;
mod report;
mod shell;
mod simulate;
mod spin_twin;
mod tour;

use clap::{Args, Parser, Subcommand};
use models::checker::CheckError;
use models::client::Policy;
use models::model::{ConfigError, FaultBudget, ModelCfg, Setting, TickTiming, Time};
use models::recipe::RecipeRef;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Bad usage or bad input; the message names the problem. Exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

/// The library names a setting; the command line names its flag.
impl From<ConfigError> for UsageError {
    fn from(e: ConfigError) -> Self {
        let flag = match e.setting {
            Setting::Clients => "--clients",
            Setting::Rounds => "--rounds",
            Setting::Producers => "--producers",
            Setting::Writers => "--writers",
            Setting::Permits => "--permits",
            Setting::Observers => "--observers",
            Setting::Fencing => "--fencing",
            Setting::AcquireTimeout => "--acquire-timeout",
            Setting::Reentries => "--reentries",
            Setting::Interrupts => "--interrupts",
            Setting::CriticalChecks => "--critical-checks",
            Setting::Faults => {
                "--crashes, --pauses, --partitions, --lost-replies, --interrupts, --critical-checks"
            }
            Setting::Crashes => "--crashes",
            Setting::Restarts => "--restarts",
            Setting::Ticks(key) => return UsageError(format!("--ticks {key}: {e}")),
            Setting::Masters => "--masters",
            Setting::Redis(key) => return UsageError(format!("--{}: {e}", key.replace('_', "-"))),
            Setting::Policy => "--policy",
            Setting::Time => "--time",
            Setting::Servers => "--servers",
            Setting::MaxLag => "--max-lag",
            Setting::Isolations => "--isolations",
            Setting::Mutes => "--mutes",
            Setting::LocalSessions => "--local-sessions",
        };
        UsageError(format!("{flag}: {e}"))
    }
}

/// A check that gave no verdict, with the flag that checks it otherwise.
pub fn check_failed(e: CheckError) -> UsageError {
    let otherwise = match &e {
        CheckError::IdentityDependent { .. } | CheckError::Collision { .. } => {
            "--no-symmetry checks without symmetry reduction"
        }
        CheckError::Reduction { .. } => "without --partial-order the reduction is off",
        CheckError::Threads { .. } => "--threads N asks for fewer",
    };
    UsageError(format!("{e} ({otherwise})"))
}

/// Whether two paths name one file, as far as can be told before either is
/// written: a path that does not exist yet is resolved through its
/// directory (`./a` and `/here/a` are one file); two that exist are one
/// file if they are one inode (hard links too).
pub fn same_file(a: &Path, b: &Path) -> bool {
    // `links`: symbolic links still to follow (a loop of them ends).
    fn resolved(p: &Path, links: u8) -> Option<PathBuf> {
        if let Ok(p) = std::fs::canonicalize(p) {
            return Some(p);
        }
        // A link to a file not yet written: the file it will write.
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        if let Ok(target) = std::fs::read_link(p) {
            let to = dir.unwrap_or(Path::new(".")).join(target);
            return resolved(&to, links.checked_sub(1)?);
        }
        let dir = std::fs::canonicalize(dir.unwrap_or(Path::new("."))).ok()?;
        Some(dir.join(p.file_name()?))
    }
    // Two names of one file (a hard link) resolve to two paths.
    #[cfg(unix)]
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        use std::os::unix::fs::MetadataExt;
        if (x.dev(), x.ino()) == (y.dev(), y.ino()) {
            return true;
        }
    }
    match (resolved(a, 40), resolved(b, 40)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// Checks, before long work starts, that `dir` (given with `flag`) can be
/// created and written: results are not lost to a bad path found at the end.
pub fn writable_dir(dir: &std::path::Path, flag: &str) -> Result<(), UsageError> {
    let fail = |e: std::io::Error| {
        UsageError(format!("{flag} {}: cannot write there: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(format!(".lockstep-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(fail)?;
    std::fs::remove_file(&probe).map_err(fail)
}

#[derive(Parser, Debug)]
#[command(
    name = "lockstep",
    version,
    about = "Model-check and simulate coordination recipes on ZooKeeper, etcd, Redis and Consul: locks, shared locks, \
             semaphores, leader elections, barriers and queues.",
    long_about = "Model-check and simulate coordination recipes on ZooKeeper, etcd, Redis and Consul: locks, shared locks, \
                  semaphores, leader elections, barriers and queues.\n\n\
                  Without a command, runs the tour: checks every lock, shared-lock, semaphore, election and \
                  barrier recipe at its default configuration, runs the shipped scenarios, sweeps the herd to \
                  1,000 clients, prints the tables and writes the report to lockstep-report/ in the current \
                  directory (`lockstep report --out DIR` writes it elsewhere).",
    after_help = "Exit status: 0 nothing violated; 1 a property violated (or a reproducer that did not \
                  reproduce); 2 bad usage or input, or a run cut off with no verdict; 3 incomplete: a check \
                  stopped at its state limit, a hunt with seeds cut off, or a merge that lacks shards."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Exhaustively check a recipe's invariants for a few clients and faults
    /// (a lock: mutual exclusion, resource exclusion, progress, herd bound;
    /// a shared lock: rw exclusion, readers share, resource exclusion,
    /// progress; a semaphore: permits bound, herd bound, hand-off, progress;
    /// an election: single leader, elected with key, leader exclusion,
    /// leader elected, followers agree, herd bound; a barrier: no early
    /// pass, no early leave, herd bound, all pass; a queue: no lost item, no
    /// duplicate item, FIFO order, queue drains).
    Check(CheckArgs),
    /// Serve stateright's Explorer to step through a model in a browser.
    Explore(ExploreArgs),
    /// Simulate a scenario (a file, or a shipped one by name) in virtual
    /// time with one seed.
    Run(RunArgs),
    /// Simulate many seeds in parallel and report every violating one.
    Hunt(HuntArgs),
    /// Run a reproducer (or any scenario with its own seed).
    Replay(ReplayArgs),
    /// Sweep client counts in the baseline herd scenario: notifications and
    /// store requests per hand-off, latency; CSV, JSON and charts.
    Herd(HerdArgs),
    /// Write the report (HTML and Markdown): checks, herd charts, split-brain
    /// timelines. `report timeline TRACE` draws one trace's holders timeline.
    Report(ReportArgs),
    /// Measure the model checker (states/s, symmetry reduction) and the
    /// simulator (virtual time per wall second, seeds/s, events/s).
    Bench(BenchArgs),
    /// List the applications, the registered recipes and their variants.
    Recipes {
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
pub struct HerdArgs {
    /// Recipes, comma-separated, or `all`.
    #[arg(long, default_value = "all")]
    pub recipes: String,
    /// Client counts, comma-separated (default 2,5,10,…,10000; a polling
    /// recipe's, to 1000).
    #[arg(long)]
    pub clients: Option<String>,
    /// Also run this scenario at each recipe and client count.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where herd.csv, herd.json and the charts go.
    #[arg(long, default_value = "lockstep-report")]
    pub out: PathBuf,
    /// Print JSON on stdout (and nothing else).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub what: Option<ReportWhat>,
    /// Directory for the report.
    #[arg(long, default_value = "lockstep-report")]
    pub out: PathBuf,
    /// Largest client count of the report's herd sweep.
    #[arg(long = "max-clients", default_value_t = 1000)]
    pub max_clients: u16,
}

#[derive(Subcommand, Debug)]
pub enum ReportWhat {
    /// Draw the holders timeline of a `run --trace` file (SVG and PNG, and
    /// the interactive HTML page).
    Timeline {
        trace: PathBuf,
        /// Output path without extension (default: next to the trace).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scenario file (TOML), or the name of a shipped scenario
    /// (`gc-pause-split-brain`: scenarios/NAME.toml, built in).
    pub scenario: PathBuf,
    /// Seed (default: the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub output: RunOutput,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Jsonl,
    Chrome,
}

/// What `run` and `replay` print and write.
#[derive(Args, Debug)]
pub struct RunOutput {
    /// Write the full trace to this file (JSON Lines, or see --trace-format).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// The --trace file's format: `jsonl` (lockstep's, read back by
    /// `report timeline`) or `chrome` (Trace Event Format, for Perfetto and
    /// chrome://tracing).
    #[arg(long, value_enum, default_value_t = TraceFormat::Jsonl, requires = "trace")]
    pub trace_format: TraceFormat,
    /// Print a readable timeline before each violation.
    #[arg(long, conflicts_with = "json")]
    pub timeline: bool,
    /// Write the run's interactive timeline (one self-contained HTML file).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct HuntArgs {
    /// Scenario file (TOML), or the name of a shipped scenario.
    pub scenario: Option<PathBuf>,
    /// Seeds to run, A..B (B excluded) or A..=B (B included).
    #[arg(long)]
    pub seeds: Option<String>,
    /// Parallel workers (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard K of N (every N-th seed), for batch engines.
    #[arg(long)]
    pub shard: Option<String>,
    /// For each violated property, shrink its first failing run (faults,
    /// clients, rounds) and write a reproducer and its HTML timeline.
    #[arg(long)]
    pub shrink: bool,
    /// Directory for the reproducers (default: lockstep-reproducers/, made
    /// if missing).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Combine the JSON results of several shards instead of running.
    #[arg(long, num_args = 1..)]
    pub merge: Vec<PathBuf>,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A reproducer, or any scenario file or shipped scenario's name (run
    /// with its own seed).
    pub file: PathBuf,
    #[command(flatten)]
    pub output: RunOutput,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Client counts to measure, comma-separated.
    #[arg(long, default_value = "3,4")]
    pub clients: String,
    /// Crashes in each configuration.
    #[arg(long, default_value_t = 1)]
    pub crashes: u8,
    /// Also check without symmetry reduction, to measure it, up to this many
    /// clients (without it, 4 clients take tens of GiB for some recipes).
    #[arg(long = "compare-up-to", default_value_t = 3)]
    pub compare_up_to: u8,
    /// Skip the model-checker measurements.
    #[arg(long = "skip-check")]
    pub skip_check: bool,
    /// Skip the simulator measurements.
    #[arg(long = "skip-sim")]
    pub skip_sim: bool,
    /// Skip the full default herd sweep of the recipes that watch (each to
    /// 10,000 clients: the longest part of the simulator's measurements).
    #[arg(long = "skip-herd")]
    pub skip_herd: bool,
    /// The directory of the SPIN twin of the fair lock (`fair_lock.pml`),
    /// for the comparisons with SPIN, run when `spin` and `gcc` are
    /// installed [default: anchors/ in the repository this lockstep was
    /// built from].
    #[arg(long, value_name = "DIR")]
    pub anchors: Option<PathBuf>,
    /// Rounds of the throughput comparison with the SPIN twin (1–20):
    /// lockstep's safety-only check and pan's run one after the other, the
    /// median round's figures reported (this machine's load moves one run
    /// by a quarter or more).
    #[arg(long, default_value_t = 3, conflicts_with = "skip_check")]
    pub rounds: u32,
    /// Save this run's figures as baseline NAME (`target/lockstep-bench/NAME.json`).
    #[arg(long = "save-baseline", value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Compare this run's figures with baseline NAME, each with its change.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Time this build's checker against another lockstep build's (a copy
    /// of target/release/lockstep made before a change): both run the same
    /// search at once, one on each core, cores swapped every pair; prints
    /// the geometric mean of this build's time over the other's. Runs only
    /// this comparison.
    #[arg(
        long,
        value_name = "LOCKSTEP",
        conflicts_with_all = [
            "save_baseline", "baseline", "clients", "crashes", "compare_up_to",
            "skip_check", "skip_sim", "skip_herd", "anchors", "rounds",
        ]
    )]
    pub against: Option<PathBuf>,
    /// With --against: pairs of runs (1–100).
    #[arg(long, default_value_t = 6, requires = "against")]
    pub pairs: u32,
    /// With --against: unique states each search explores (fair-predecessor,
    /// 4 clients, 1 crash, full check, one thread; at least 1,000).
    #[arg(
        long = "pair-states",
        default_value_t = 1_500_000,
        requires = "against"
    )]
    pub pair_states: u64,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The model configuration shared by `check` and `explore`.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// List the recipes and their variants, and exit (as `lockstep recipes`).
    #[arg(long, exclusive = true)]
    pub list: bool,
    /// Recipe (`--list` shows them), optionally `name:variant`.
    #[arg(long, required_unless_present = "list")]
    pub recipe: Option<String>,
    /// One of the recipe's variants (`lockstep recipes` lists them).
    #[arg(long)]
    pub variant: Option<String>,
    /// Number of clients (2–5; five fit for the smaller configurations: see
    /// docs/performance.md).
    #[arg(long, required_unless_present = "list")]
    pub clients: Option<u8>,
    /// Rounds of acquire / write / release (campaign / lead / resign) per client (1–3).
    #[arg(long, default_value_t = 1)]
    pub rounds: u8,
    /// A queue recipe: how many of the clients produce (the first ones)
    /// [default: half the clients, at least one]; the others consume.
    #[arg(long)]
    pub producers: Option<u8>,
    /// A shared-lock recipe: how many of the clients write (the first
    /// ones) [default: 1]; the others read.
    #[arg(long)]
    pub writers: Option<u8>,
    /// A semaphore recipe: how many leases it has [default: one fewer
    /// than the clients].
    #[arg(long)]
    pub permits: Option<u8>,
    /// An election recipe whose library has an observer (etcd-election's
    /// `Observe`): how many of the clients observe (the first ones), never
    /// campaigning [default: 0]; the others campaign. Judged by
    /// `observed_leader_current` too.
    #[arg(long)]
    pub observers: Option<u8>,
    /// Client crashes the checker may inject (for good, unless restarted).
    #[arg(long, default_value_t = 0)]
    pub crashes: u8,
    /// Crashed clients that may restart, each as a new process: its saved
    /// storage, a new session, a new connection (at most --crashes).
    #[arg(long, default_value_t = 0)]
    pub restarts: u8,
    /// Client pauses (process frozen, then resumes).
    #[arg(long, default_value_t = 0)]
    pub pauses: u8,
    /// Client–store partitions (link cut, then healed).
    #[arg(long, default_value_t = 0)]
    pub partitions: u8,
    /// Replies the store sends that never arrive (the client resends).
    #[arg(long = "lost-replies", default_value_t = 0)]
    pub lost_replies: u8,
    /// The application interrupts an acquisition, its request still on
    /// its way, and unlocks (Redisson's `lockInterruptibly`; the Redisson
    /// variants of redis-token).
    #[arg(long, default_value_t = 0)]
    pub interrupts: u8,
    /// Consul: a client's node check goes critical, which invalidates its
    /// session at once while the client runs on.
    #[arg(long = "critical-checks", default_value_t = 0)]
    pub critical_checks: u8,
    /// ZooKeeper and etcd: the ensemble's servers (odd; 1, the default,
    /// is one linearizable server). With 3 or more, a leader commits every
    /// write and followers apply it later; client i is connected to server
    /// (i + 1) mod N, so with fewer clients than servers all are on
    /// followers, whose reads and watches lag.
    #[arg(long, default_value_t = 1)]
    pub servers: u8,
    /// With --servers: how many committed entries a follower may be behind
    /// the leader at most (the bound on the lags the checker explores).
    #[arg(long = "max-lag", default_value_t = models::model::DEFAULT_MAX_LAG)]
    pub max_lag: u8,
    /// With --servers, ZooKeeper: local sessions (`localSessionsEnabled`):
    /// a follower opens a new session by itself, from its own view, and
    /// upgrades it to a global one before its first ephemeral node.
    #[arg(long = "local-sessions")]
    pub local_sessions: bool,
    /// The guarded resource rejects tokens lower than the highest it accepted
    /// (locks and elections: a barrier's and a queue's clients write nothing).
    #[arg(long)]
    pub fencing: bool,
    /// What a holder does about its session: naive (drops its belief when told
    /// the session expired), oblivious (never drops it until it releases),
    /// suspend-aware (releases on SUSPENDED, keeps the session) or lease-aware
    /// (gives the session up by its own clock).
    #[arg(long, default_value = "naive")]
    pub policy: String,
    /// fair-predecessor only: no guid in node names, so a lost create reply
    /// leaves an orphan (the same as `--variant no-guid`).
    #[arg(long = "no-guid")]
    pub no_guid: bool,
    /// A lock acquired with a timeout (Curator's `acquire(time, unit)`,
    /// kazoo's `acquire(timeout=…)`, etcd's `Lock` on a context with a
    /// deadline): a waiting client may give up at any moment, taking its
    /// entry out of line, and its round ends without a hold.
    #[arg(long = "acquire-timeout")]
    pub acquire_timeout: bool,
    /// A lock holder acquires again this often in each hold (0–2), nested,
    /// as its library answers a second acquire: Curator counts it
    /// (reentrant), kazoo blocks on itself, etcd's Mutex acquires again and
    /// one release frees both. Judged by `reentry_immediate` too.
    #[arg(long, default_value_t = 0)]
    pub reentries: u8,
    /// How the checker treats time: `untimed` (timers carry no time: each
    /// fires at any moment it could, heartbeats never, a session expires
    /// whenever its owner is silent) or `ticks` (every latency, timeout,
    /// session and lease TTL, heartbeat and timer lasts whole ticks, so
    /// deadlines and expiry go by the clock; explored without symmetry,
    /// partial-order reduction or sleep sets). docs/checking.md says what
    /// each covers.
    #[arg(long, default_value = "untimed", value_parser = ["untimed", "ticks"])]
    pub time: String,
    /// Redis: how many independent masters a recipe that spreads its lock
    /// over several (Redlock) talks to: odd, at least 3 [default: 5].
    #[arg(long)]
    pub masters: Option<u8>,
    /// Redis: restarts of a master; without persistence it comes back
    /// empty.
    #[arg(long = "master-restarts", default_value_t = 0)]
    pub master_restarts: u8,
    /// Redis: jumps of a master's clock past every TTL it keeps.
    #[arg(long = "clock-jumps", default_value_t = 0)]
    pub clock_jumps: u8,
    /// Redis: failovers promoting the first master's replica (needs
    /// --replica). Consul: leader failovers to a server restored from a
    /// snapshot, which forget the lock-delays and restart session TTLs.
    /// A ZooKeeper ensemble (--servers 3): the leader cut off from its
    /// followers, who elect another (at most 1).
    #[arg(long, default_value_t = 0)]
    pub failovers: u8,
    /// A ZooKeeper ensemble (--servers 3): followers cut off from the
    /// leader; each serves its clients on from its own state until it
    /// gives the leader up (syncLimit × tickTime), or the cut heals. An
    /// etcd cluster: members cut off from the leader, which answer no
    /// keepalive and keep their clients until the cut heals.
    #[arg(long, default_value_t = 0)]
    pub isolations: u8,
    /// A ZooKeeper ensemble (--servers 3): followers the leader stops
    /// hearing (their half of the link held); each still applies the
    /// leader's commits and serves its clients, while their writes and
    /// sessions' touches wait, until the leader drops it (syncLimit ×
    /// tickTime) or the link heals.
    #[arg(long, default_value_t = 0)]
    pub mutes: u8,
    /// Redis: give the first master an asynchronously replicated replica.
    #[arg(long)]
    pub replica: bool,
    /// Redis: what a master keeps over a restart: `none` or
    /// `appendfsync-always`.
    #[arg(long, default_value = "none")]
    pub persistence: String,
    /// With --time ticks: durations in ticks as `key=value,…` over the
    /// defaults session=7, ping=2, deadline=5, retry=3, latency=1,
    /// think=0-2, hold=8, pause=1-10, partition=1-10, acquire_timeout=4,
    /// tick_ms=1000 (a window is `low-high`).
    #[arg(long)]
    pub ticks: Option<String>,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print one JSON object on stdout instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Explore every state rather than one per orbit of interchangeable clients.
    #[arg(long = "no-symmetry")]
    pub no_symmetry: bool,
    /// Partial-order reduction: where a client's local steps (a delivery to
    /// it, its timer) commute with every other step, explore only those.
    /// Every verdict is kept (progress too: with progress asked, a client's
    /// steps are taken alone only where none can make a goal false); a
    /// counterexample may be longer than the shortest.
    #[arg(long = "partial-order")]
    pub partial_order: bool,
    /// Take every enabled step from every state. By default, where no
    /// progress property is asked and without --partial-order, a step that
    /// commutes with the one that led to a state, and was taken before it,
    /// is not taken again from there (sleep sets): the same states and
    /// verdicts from fewer transitions.
    #[arg(long = "no-sleep-sets")]
    pub no_sleep_sets: bool,
    /// Ask about this property only (repeatable; default: every property of
    /// the recipe's application). With only `always` and `sometimes`
    /// properties asked, the search stops as soon as each is decided: an
    /// `always` at its shortest counterexample (under --partial-order, at
    /// its first, which may be longer). Progress needs the whole graph.
    #[arg(long = "property", value_name = "NAME")]
    pub property: Vec<String>,
    /// Give up (and report the check incomplete, exit 3) beyond this many
    /// unique states [default: as many as the checker can index; the
    /// memory limit comes first].
    #[arg(long = "max-states")]
    pub max_states: Option<usize>,
    /// Stop taking new states (and report the check incomplete, exit 3)
    /// once the checker's resident memory passes this size: bytes, or a
    /// number with K, M or G [default: three quarters of the memory
    /// available when the check starts].
    #[arg(long = "max-memory", value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the counterexample viewer: every property's verdict and, per
    /// counterexample, a sequence diagram and each step with the state of
    /// every actor, what changed highlighted (one self-contained HTML file).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write each counterexample as an Informal Trace Format file
    /// (`PROPERTY.itf.json`, read by Apalache and Quint) into this directory.
    #[arg(long, value_name = "DIR")]
    pub itf: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ExploreArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Port on 127.0.0.1 to serve the Explorer on.
    #[arg(long, default_value_t = 3000)]
    pub port: u16,
}

impl ModelArgs {
    /// `--time` and `--ticks`: the durations only with ticks.
    fn time_mode(&self) -> Result<Time, UsageError> {
        match (self.time.as_str(), &self.ticks) {
            ("ticks", spec) => TickTiming::parse(spec.as_deref().unwrap_or(""))
                .map(Time::Ticks)
                .map_err(|e| UsageError(format!("--ticks: {e}"))),
            (_, Some(_)) => Err(UsageError(
                "--ticks gives durations in ticks: it needs --time ticks".into(),
            )),
            (_, None) => Ok(Time::Untimed),
        }
    }

    /// Resolves the flags into a configuration, rejecting unknown names and
    /// contradictory or out-of-range settings.
    pub fn to_cfg(&self) -> Result<ModelCfg, UsageError> {
        let (Some(name), Some(clients)) = (&self.recipe, self.clients) else {
            return Err(UsageError("--recipe and --clients are required".into()));
        };
        let recipe = recipe_arg(name, self.variant.as_deref(), self.no_guid)?;
        let recipe = match self.masters {
            None => recipe,
            Some(n) => recipe.on_masters(n).ok_or_else(|| {
                UsageError(format!(
                    "--masters: {recipe} talks to one store; masters are for a lock over \
                     several Redis masters (redlock)"
                ))
            })?,
        };
        let policy: Policy = self.policy.parse().map_err(UsageError)?;
        let persistence = self
            .persistence
            .parse()
            .map_err(|e| UsageError(format!("--persistence: {e}")))?;
        for (setting, given) in [
            (Setting::Producers, self.producers.is_some()),
            (Setting::Writers, self.writers.is_some()),
            (Setting::Permits, self.permits.is_some()),
            (Setting::Observers, self.observers.is_some()),
        ] {
            models::model::check_given(&recipe, setting, given)
                .map_err(|e| UsageError::from(ConfigError { setting, reason: e }))?;
        }
        let cfg = ModelCfg {
            clients,
            rounds: self.rounds,
            faults: FaultBudget {
                crashes: self.crashes,
                pauses: self.pauses,
                partitions: self.partitions,
                lost_replies: self.lost_replies,
                interrupts: self.interrupts,
                critical_checks: self.critical_checks,
                restarts: self.restarts,
                master_restarts: self.master_restarts,
                clock_jumps: self.clock_jumps,
                failovers: self.failovers,
                isolations: self.isolations,
                mutes: self.mutes,
            },
            deployment: models::store::redis::Deployment {
                persistence,
                replica: self.replica,
            },
            fencing: self.fencing,
            producers: self
                .producers
                .unwrap_or_else(|| models::model::default_producers(&recipe, clients.into()) as u8),
            acquire_timeout: self.acquire_timeout,
            reentries: self.reentries,
            writers: self
                .writers
                .unwrap_or_else(|| models::model::default_writers(&recipe) as u8),
            permits: self.permits.unwrap_or_else(|| {
                // Fewer than the clients, a u8.
                models::model::default_permits(&recipe, clients.into()) as u8
            }),
            observers: self.observers.unwrap_or(0),
            recipe,
            policy,
            time: self.time_mode()?,
            servers: self.servers,
            max_lag: self.max_lag,
            local_sessions: self.local_sessions,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

/// The recipe that `--recipe NAME[:VARIANT] [--variant V] [--no-guid]` names.
pub fn recipe_arg(
    spec: &str,
    variant: Option<&str>,
    no_guid: bool,
) -> Result<RecipeRef, UsageError> {
    let (name, inline) = match spec.split_once(':') {
        Some((n, v)) => (n, Some(v)),
        None => (spec, None),
    };
    let registered = models::recipes::find(name).map_err(UsageError)?;
    let no_guid = no_guid.then_some("no-guid");
    if no_guid.is_some() && registered.name != "fair-predecessor" {
        return Err(UsageError(format!(
            "--no-guid applies only to fair-predecessor, not {}",
            registered.name
        )));
    }
    let given: Vec<&str> = [inline, variant, no_guid].into_iter().flatten().collect();
    match given.as_slice() {
        [] => models::recipes::lookup(registered.name, None),
        [v] => models::recipes::lookup(registered.name, Some(v)),
        [a, rest @ ..] if rest.iter().all(|b| b == a) => {
            models::recipes::lookup(registered.name, Some(a))
        }
        _ => Err(format!(
            "more than one variant given ({}); a run checks one",
            given.join(", ")
        )),
    }
    .map_err(UsageError)
}

/// The configuration the no-argument tour checks each recipe at.
pub fn default_cfg(recipe: RecipeRef) -> ModelCfg {
    // A lock over several Redis masters on three: the tour's check at five
    // (3 million states) would take half a minute of its own.
    let recipe = recipe.on_masters(3).unwrap_or(recipe);
    ModelCfg {
        faults: FaultBudget {
            crashes: 1,
            ..FaultBudget::default()
        },
        // Where the clients write to the resource: a barrier's and a
        // queue's write nothing.
        fencing: models::model::writes_to_resource(&recipe),
        ..ModelCfg::new(recipe.clone(), recipe.checked_clients())
    }
}

pub fn run(cli: Cli) -> Result<ExitCode, UsageError> {
    match cli.command {
        None => tour::run(std::path::Path::new("lockstep-report"), 1000),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::Explore(args)) => explore::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Run(args)) => simulate::run(&args),
        Some(Command::Herd(args)) => herd::run(&args),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::Hunt(args)) => simulate::hunt(&args),
        Some(Command::Replay(args)) => simulate::replay(&args),
        Some(Command::Recipes { json }) => recipes::run(json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's errors speak of settings and reductions; the command
    /// line says which flag to use.
    #[test]
    fn errors_gain_the_flag_that_changes_them() {
        let e = check_failed(CheckError::IdentityDependent { found: "x".into() });
        assert!(e.0.contains("without symmetry reduction"), "{}", e.0);
        assert!(e.0.contains("--no-symmetry"), "{}", e.0);
        let e = check_failed(CheckError::Reduction { found: "x".into() });
        assert!(e.0.contains("--partial-order"), "{}", e.0);
        let cfg = ModelCfg {
            rounds: 0,
            ..ModelCfg::new(models::recipes::parse("fair-predecessor").unwrap(), 2)
        };
        let e = UsageError::from(cfg.validate().unwrap_err());
        assert_eq!(e.0, "--rounds: rounds must be between 1 and 3 (got 0)");
    }
}
