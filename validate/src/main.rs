//! lockstep-validate: the models against real servers.
//!
//! Runs each recipe as real clients — the very `models` client and recipe
//! actors, their requests carried out against ZooKeeper 3.8 or etcd 3.4 —
//! in the baseline herd scenario, compares notifications per release,
//! requests per acquisition and acquisition order with lockstep's simulation
//! of the same scenario, and reproduces a split brain on etcd next to its
//! simulated twin. The client libraries' own locks — kazoo's `Lock`,
//! Curator's `InterProcessMutex`, etcd's `Mutex` through `etcdctl` — run the
//! same herd and are compared with the variants that model them, the
//! ZooKeeper ones measured at the wire through a protocol proxy
//! ([`zkproxy`]); their holders are cut off past the session timeout
//! (SIGSTOP; the proxy frozen) beside the model's runs of the same scenario
//! ([`faults`]). kazoo's own `ReadLock` / `WriteLock` run the shared
//! lock's baseline, and its own `Semaphore` a herd paced so that every
//! release meets the waiter it should, beside the model's run paced the
//! same way ([`paced`]). The barrier, queue, shared-lock and semaphore
//! recipes, whose real herds race, are checked by replaying the model's
//! own run request by request on ZooKeeper ([`replay`]). The Redis recipes
//! run on real Redis 7.0 masters, every reply replayed against the model's
//! store in the order `MONITOR` showed; redis-py's `Lock` and pottery's
//! `Redlock` are counted at the wire, a redis-py holder is paused past its
//! TTL beside the model's run, a failover on a master and replica pair
//! loses an acknowledged lock, and the simulated Redlock master restarts
//! are replayed on the five masters with the restart done for real
//! ([`redis`], [`redis_pause`], [`redis_failover`], [`redis_restart`]).
//! `validate/run.sh` installs and starts the servers.

mod backend;
mod curator604;
mod ensemble;
mod ensemble_model;
mod etcdctl;
mod failover;
mod faults;
mod isolation;
mod linkproxy;
mod paced;
mod redis;
mod redis_failover;
mod redis_pause;
mod redis_restart;
mod replay;
mod resp;
mod runtime;
mod twin;
mod zkproxy;
mod zkwire;

use backend::Backend;
use clap::Parser;
use models::client::{Client, ClientTiming, Policy};
use models::ids::ClientIdx;
use models::recipe::{Face, RecipeRef};
use models::resource::{Resource, ResourceState};
use reports::chart::{line_chart, LineChart, Series};
use reports::timeline::timeline;
use runtime::{run_client, Input, Shared};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

#[derive(Parser)]
#[command(
    about = "Cross-validate lockstep's store model against real ZooKeeper, etcd and Redis servers."
)]
struct Args {
    /// ZooKeeper endpoint, host:port.
    #[arg(long, default_value = "")]
    zk: String,
    /// etcd endpoint, host:port.
    #[arg(long, default_value = "")]
    etcd: String,
    /// Client counts of the baseline herd scenario.
    #[arg(long, default_value = "2,5,20")]
    clients: String,
    /// How long each holder holds (long enough for every waiter to register).
    #[arg(long = "hold-ms", default_value_t = 300)]
    hold_ms: u64,
    /// Where the comparison goes.
    #[arg(long, default_value = "lockstep-report/validation")]
    out: PathBuf,
    /// A Redis master, PORT (on 127.0.0.1) or HOST:PORT. Without it the
    /// Redis section is skipped.
    #[arg(long)]
    redis: Option<String>,
    /// Five (or any number of) independent Redis masters, comma-separated
    /// PORTs or HOST:PORTs: Redlock's.
    #[arg(long = "redis-masters")]
    redis_masters: Option<String>,
    /// A Redis master and its replica, MASTERPORT:REPLICAPORT (on
    /// 127.0.0.1).
    #[arg(long = "redis-replica")]
    redis_replica: Option<String>,
    /// How long each holder of a Redis lock holds in the herds (the
    /// recipes poll every 100 ms).
    #[arg(long = "redis-hold-ms", default_value_t = 100)]
    redis_hold_ms: u64,
    /// Run the Redis validation only (ZooKeeper and etcd are not needed).
    #[arg(long = "redis-only")]
    redis_only: bool,
    /// Allows the validator to stop the third of the `--redis-masters`
    /// (`SHUTDOWN NOSAVE`, then SIGKILL of its own restarted one) and start
    /// it again itself, for the Redlock restart experiments; it is left
    /// stopped after them.
    #[arg(long = "redis-restart")]
    redis_restart: bool,
    /// A three-server ZooKeeper ensemble: the client endpoints of servers
    /// 1, 2 and 3, HOST:PORT,HOST:PORT,HOST:PORT. Server 3 leads; server 2
    /// has local sessions (`run.sh` lays it out so).
    #[arg(long = "zk-ensemble")]
    zk_ensemble: Option<String>,
    /// The proxies on server 1's and server 2's links to server 3's quorum
    /// port, LISTEN:UPSTREAM,LISTEN:UPSTREAM (ports on 127.0.0.1): the
    /// validator runs them, and their servers' configurations name them.
    #[arg(long = "zk-ensemble-links")]
    zk_ensemble_links: Option<String>,
    /// The ensemble's tickTime (ms) and syncLimit, TICK:SYNCLIMIT.
    #[arg(long = "zk-ensemble-timing", default_value = "250:8")]
    zk_ensemble_timing: String,
    /// Server 1's log, where it logs refusing a client that has seen a
    /// newer zxid.
    #[arg(long = "zk-ensemble-log")]
    zk_ensemble_log: Option<PathBuf>,
    /// The process of the ZooKeeper ensemble's leader (server 3): stopped
    /// and resumed, last of all, for a leader failover.
    #[arg(long = "zk-ensemble-leader-pid")]
    zk_ensemble_leader_pid: Option<u32>,
    /// The etcd cluster's members' processes, in `--etcd-cluster`'s order:
    /// the leader's is stopped and resumed, last of all, for a failover.
    #[arg(long = "etcd-cluster-pids", value_delimiter = ',')]
    etcd_cluster_pids: Option<Vec<u32>>,
    /// A three-member etcd cluster: its members' client endpoints.
    #[arg(long = "etcd-cluster")]
    etcd_cluster: Option<String>,
    /// The proxy in front of each member's peer port, in the members'
    /// order, LISTEN:UPSTREAM,... (each member advertises its proxy's
    /// port as its peer URL).
    #[arg(long = "etcd-cluster-peers")]
    etcd_cluster_peers: Option<String>,
    /// How many times the ensemble facts run.
    #[arg(long = "ensemble-runs", default_value_t = 3)]
    ensemble_runs: usize,
    /// Run the ensemble facts only (needs --zk-ensemble or --etcd-cluster).
    #[arg(long = "ensemble-only")]
    ensemble_only: bool,
}

impl Args {
    /// The Redis servers it was given.
    fn redis_endpoints(&self) -> redis::Endpoints {
        redis::Endpoints::parse(
            self.redis.as_deref(),
            self.redis_masters.as_deref(),
            self.redis_replica.as_deref(),
        )
    }
}

#[derive(Serialize, Clone)]
struct Measured {
    notifications_per_release: Vec<u32>,
    notifications_before_first_release: u32,
    /// Notifications in all, at a release or not.
    notifications: u64,
    requests_per_acquisition: BTreeMap<String, f64>,
    acquisition_tokens: Vec<u64>,
    wall_seconds: f64,
}

/// A real library's run measured in totals: requests per acquisition by
/// kind, notifications in all (where only the server counts them).
#[derive(Clone, Debug, Serialize)]
pub struct Totals {
    pub requests_per_acquisition: BTreeMap<String, f64>,
    pub notifications: u64,
    pub wall_seconds: f64,
}

/// A real library's totals beside the model's.
#[derive(Serialize)]
struct TotalsRow {
    clients: u16,
    real: Totals,
    model_requests_per_acquisition: BTreeMap<String, f64>,
    model_notifications: u32,
    agree: bool,
}

/// Requests per acquisition, as the report prints them: `create 1.00, …`.
fn fmt_req(m: &BTreeMap<String, f64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k} {v:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report's table of a real library's totals beside the model's.
fn totals_table(what: &str, rows: &[TotalsRow]) -> String {
    let mut md = format!("\n{what}:\n\n| clients | requests per acquisition (real) | (model) | notifications (real) | (model) | match |\n|---|---|---|---|---|---|\n");
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.clients,
            fmt_req(&r.real.requests_per_acquisition),
            fmt_req(&r.model_requests_per_acquisition),
            r.real.notifications,
            r.model_notifications,
            if r.agree { "yes" } else { "NO" },
        ));
    }
    md
}

fn compare_totals(label: &str, clients: u16, real: Totals, model: &Measured) -> TotalsRow {
    let model_notifications: u32 = model.notifications_per_release.iter().sum();
    let agree = close(
        &real.requests_per_acquisition,
        &model.requests_per_acquisition,
    ) && real.notifications == model_notifications as u64;
    eprintln!(
        "{label:<28} {clients:>3} clients: requests and notifications {} ({:.1} s)",
        if agree { "match" } else { "DIFFER" },
        real.wall_seconds
    );
    TotalsRow {
        clients,
        real,
        model_requests_per_acquisition: model.requests_per_acquisition.clone(),
        model_notifications,
        agree,
    }
}

#[derive(Serialize)]
struct Row {
    recipe: String,
    clients: u16,
    real: Measured,
    model: Measured,
    notifications_match: bool,
    requests_match: bool,
    order_follows_tokens: bool,
    explained: Vec<String>,
}

fn timing(think_ms: u64, hold_ms: u64, ping_ms: u64) -> ClientTiming {
    let ms = Duration::from_millis;
    ClientTiming {
        think: ms(think_ms)..ms(think_ms) + Duration::from_micros(1),
        produce: ms(think_ms)..ms(think_ms) + Duration::from_micros(1),
        hold: ms(hold_ms)..ms(hold_ms) + Duration::from_micros(1),
        retry: ms(600_000),
        ping: ms(ping_ms),
        deadline: ms(ping_ms * 2),
        acquire_timeout: None,
    }
}

/// Where a real run's clients connect.
#[derive(Clone, Copy)]
enum Servers<'a> {
    /// The single ZooKeeper, etcd or Redis servers of `Args`.
    Single,
    /// An ensemble's client endpoints in the model's order, its leader
    /// first: client i on the model's server (i + 1) mod 3, as the
    /// simulator places it (an etcd client on that member alone).
    Ensemble(&'a [String; 3]),
}

impl<'a> Servers<'a> {
    /// Client `c`'s endpoint, if not the single server's.
    fn of(self, c: ClientIdx) -> Option<&'a str> {
        match self {
            Servers::Single => None,
            Servers::Ensemble(e) => {
                Some(&e[usize::from(models::store::ensemble::first_server(c, e.len() as u8))])
            }
        }
    }

    /// How many servers: the model's run has as many.
    fn count(self) -> u8 {
        match self {
            Servers::Single => 1,
            Servers::Ensemble(e) => e.len() as u8,
        }
    }

    /// Where the store is emptied before a run: the leader.
    fn leader(self) -> Option<&'a str> {
        match self {
            Servers::Single => None,
            Servers::Ensemble(e) => Some(&e[0]),
        }
    }
}

async fn backend(recipe: &RecipeRef, args: &Args, ttl_seconds: i64) -> Backend {
    backend_at(recipe, args, ttl_seconds, None).await
}

/// [`backend`] on endpoint `at` rather than the single server's.
async fn backend_at(
    recipe: &RecipeRef,
    args: &Args,
    ttl_seconds: i64,
    at: Option<&str>,
) -> Backend {
    match recipe.face() {
        Face::ZooKeeper => Backend::ZooKeeper {
            endpoint: at.unwrap_or(&args.zk).to_string(),
            session_timeout: Duration::from_secs(10),
            sessions: HashMap::new(),
        },
        Face::Etcd => Backend::Etcd {
            client: Box::new(
                etcd_client::Client::connect([at.unwrap_or(&args.etcd)], None)
                    .await
                    .expect("etcd is up"),
            ),
            ttl_seconds,
        },
        Face::Redis => Backend::Redis(redis::Conns::new(
            args.redis_endpoints()
                .for_masters(recipe.setup().masters)
                .expect("the run was given as many Redis masters as the recipe talks to"),
        )),
        Face::Consul => unreachable!("{NO_CONSUL}"),
    }
}

/// The recipes validated against the real servers. lowest-watch's waiters
/// exists()-watch the lowest node, so a late create fires no watch: it needs
/// no start-skew allowance (unlike children-watch). The election recipes run
/// as the election application; `curator-696` differs from `curator` only
/// after a reconnect, which the baseline has none of. `fair-predecessor:kazoo`
/// is the same model as `:curator` (a getData watch) and is not run twice.
fn validated_recipes() -> Vec<RecipeRef> {
    [
        "unfair-create",
        "fair-predecessor",
        "fair-predecessor:curator",
        "etcd-revision",
        "etcd-revision:v3.4",
        "children-watch",
        "lowest-watch",
        "zk-unfair-election",
        "zk-unfair-election:getdata",
        "zk-fair-election",
        "zk-fair-election:curator",
        "etcd-election",
    ]
    .iter()
    .map(|id| models::recipes::parse(id).expect("registered"))
    .collect()
}

/// Recipes whose acquisitions must follow token order: one waiter per
/// predecessor, so the queue is fair.
fn fair(recipe: &str) -> bool {
    matches!(
        recipe,
        "fair-predecessor"
            | "fair-predecessor:curator"
            | "etcd-revision"
            | "etcd-revision:v3.4"
            | "lowest-watch"
            | "zk-fair-election"
            | "zk-fair-election:curator"
            | "etcd-election"
    )
}

/// The ensemble scenarios replayed on the real ensembles with the real
/// libraries, and the ensembles' leader failovers, each beside the model.
#[derive(Default, Serialize)]
struct Replays {
    isolations: Vec<faults::Experiment>,
    curator_604: Vec<curator604::Experiment>,
    failover: Vec<ensemble::FactRow>,
}

impl Replays {
    /// The scenarios (each run leaves the ensembles as `run.sh` laid them
    /// out), their pictures drawn into `out`.
    fn scenarios(e: &ensemble::Ensembles, out: &std::path::Path) -> Replays {
        Replays {
            isolations: isolation::run_all(e, out),
            curator_604: curator604::run_all(e),
            failover: Vec::new(),
        }
    }

    /// The leader failovers, given the leaders' processes: last of all, as
    /// another server leads after them.
    async fn failovers(&mut self, args: &Args, e: &ensemble::Ensembles) {
        self.failover = failover::run_all(
            e,
            args.zk_ensemble_leader_pid,
            args.etcd_cluster_pids.as_deref(),
        )
        .await;
    }

    fn markdown(&self, e: &ensemble::Ensembles) -> String {
        format!(
            "{}{}{}",
            isolation::section(e, &self.isolations),
            curator604::section(&self.curator_604),
            failover::section(&self.failover)
        )
    }

    fn agrees(&self) -> bool {
        self.isolations.iter().all(faults::Experiment::agrees)
            && self.curator_604.iter().all(curator604::Experiment::agrees)
            && self.failover.iter().all(ensemble::FactRow::ok)
    }
}

/// A run of one section alone (`--redis-only`, `--ensemble-only`): its
/// report written and printed, and the exit status its verdict gives.
fn write_one_section(
    args: &Args,
    what: &str,
    markdown: &str,
    json: &serde_json::Value,
    agrees: bool,
) -> ExitCode {
    let md = format!("# Model vs real servers: {what}\n{markdown}");
    std::fs::write(args.out.join("validation.md"), &md).expect("write");
    std::fs::write(
        args.out.join("validation.json"),
        serde_json::to_string_pretty(json).unwrap(),
    )
    .expect("write");
    println!("{md}");
    println!("written: {}", args.out.join("validation.md").display());
    if agrees {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "lockstep-validate: model and real {what} differ (see {})",
        args.out.join("validation.md").display()
    );
    ExitCode::from(1)
}

/// Deletes `root` and everything under it (children first); a path that
/// is not there is nothing to do.
pub(crate) async fn delete_tree(c: &zookeeper_client::Client, root: &str) {
    let mut found = vec![root.to_string()];
    let mut at = 0;
    while at < found.len() {
        if let Ok(children) = c.list_children(&found[at]).await {
            let parent = found[at].clone();
            found.extend(children.into_iter().map(|ch| format!("{parent}/{ch}")));
        }
        at += 1;
    }
    for path in found.iter().rev() {
        let _ = c.delete(path, None).await;
    }
}

/// Leaves the store as the model's starts: the recipe's directories, fresh
/// and empty (nothing under `/lock` where it is not one of them), and an
/// empty `/taken` directory.
async fn clean(recipe: &RecipeRef, args: &Args) {
    clean_at(recipe, args, None).await
}

/// [`clean`] through endpoint `at` rather than the single server's.
async fn clean_at(recipe: &RecipeRef, args: &Args, at: Option<&str>) {
    match recipe.face() {
        Face::ZooKeeper => {
            let c = zookeeper_client::Client::connect(at.unwrap_or(&args.zk))
                .await
                .expect("ZooKeeper is up");
            // The recipe's directories (and `/lock`) go with everything in
            // them, so that sequence numbers start again at 0, as in the
            // model's fresh store.
            let mut roots: Vec<String> = vec!["/lock".into()];
            roots.extend(recipe.setup().dirs.iter().map(|d| d.to_string()));
            for root in roots {
                delete_tree(&c, &root).await;
            }
            let opts = zookeeper_client::CreateMode::Persistent
                .with_acls(zookeeper_client::Acls::anyone_all());
            // The recipe's directories, parents first (the queue's `/taken`
            // is made below).
            for dir in recipe.setup().dirs {
                let path = dir.to_string();
                let parts: Vec<&str> = path.split('/').skip(1).collect();
                for end in 1..=parts.len() {
                    let prefix = format!("/{}", parts[..end].join("/"));
                    match c.create(&prefix, b"", &opts).await {
                        Ok(_) | Err(zookeeper_client::Error::NodeExists) => {}
                        Err(e) => panic!("create {prefix}: {e}"),
                    }
                }
            }
            // The lock-safe queue's element locks go under `/taken`, a
            // persistent directory the model takes to exist: emptied, made
            // if missing.
            if let Ok(children) = c.list_children("/taken").await {
                for ch in children {
                    let _ = c.delete(&format!("/taken/{ch}"), None).await;
                }
            }
            match c.create("/taken", b"", &opts).await {
                Ok(_) | Err(zookeeper_client::Error::NodeExists) => {}
                Err(e) => panic!("create /taken: {e}"),
            }
        }
        Face::Etcd => {
            let mut c = etcd_client::Client::connect([at.unwrap_or(&args.etcd)], None)
                .await
                .expect("etcd is up");
            c.delete(
                "/lock/",
                Some(etcd_client::DeleteOptions::new().with_prefix()),
            )
            .await
            .expect("clean etcd");
            // Lease ids are derived from client ids, so the last run's must go.
            let leases = c.leases().await.expect("list leases");
            for l in leases.leases() {
                let _ = c.lease_revoke(l.id()).await;
            }
        }
        Face::Redis => {
            // Every master empty, as the model's start.
            let endpoints = args
                .redis_endpoints()
                .for_masters(recipe.setup().masters)
                .expect("the run was given as many Redis masters as the recipe talks to");
            redis::flush_all(&endpoints).await.expect("Redis is up");
        }
        Face::Consul => unreachable!("{NO_CONSUL}"),
    }
}

/// Why no Consul recipe reaches a real store: no Consul server is in the
/// package registries this project reaches (docs/validation.md).
const NO_CONSUL: &str = "the validator runs no Consul recipe: no Consul server is installed";

struct RealRun {
    shared: Arc<Shared>,
    wall_seconds: f64,
    /// Redis: every command the clients sent, with its reply.
    journal: Vec<redis::Exchange>,
}

/// Runs `n` real clients of `recipe`; `freeze_first_holder` freezes the
/// first client to hold for that long.
/// How a real run goes.
enum RealStart {
    /// The herd baseline: every client's first request answered before any
    /// client's next ([`runtime::StartGate`]).
    Baseline,
    /// No gate; the first client to hold is frozen this long.
    FreezeFirstHolder(Duration),
}

#[allow(clippy::too_many_arguments)]
async fn run_real(
    recipe: &RecipeRef,
    n: u16,
    args: &Args,
    servers: Servers<'_>,
    client: Client,
    fencing: bool,
    ttl_seconds: i64,
    start: RealStart,
) -> RealRun {
    clean_at(recipe, args, servers.leader()).await;
    // Every server has the cleaned store before a client reads there.
    if let (Servers::Ensemble(at), Face::ZooKeeper) = (servers, recipe.face()) {
        ensemble::zk_in_step(at)
            .await
            .expect("the ensemble's servers catch up with the leader");
    }
    let (gate, freeze_first_holder) = match start {
        RealStart::Baseline => (Some(runtime::StartGate::new(n)), None),
        RealStart::FreezeFirstHolder(d) => (None, Some(d)),
    };
    let shared = Arc::new(Shared {
        gate,
        start: Instant::now(),
        log: Mutex::new(Default::default()),
        resource: Resource::new(fencing),
        monitors: Mutex::new(
            models::properties::Monitors::new(recipe.app(), 0).with_writers(client.writers),
        ),
        resource_state: Mutex::new(ResourceState::default()),
    });
    let mut handles = Vec::new();
    let mut controls = Vec::new();
    for c in 0..n {
        let (tx, rx) = mpsc::unbounded_channel();
        controls.push(tx.clone());
        let b = backend_at(recipe, args, ttl_seconds, servers.of(c as ClientIdx)).await;
        handles.push(tokio::spawn(run_client(
            c as ClientIdx,
            client.clone(),
            b,
            shared.clone(),
            tx,
            rx,
        )));
    }
    if let Some(d) = freeze_first_holder {
        let shared = shared.clone();
        tokio::spawn(async move {
            loop {
                let first = shared.log.lock().unwrap().acquisitions.first().map(|a| a.1);
                if let Some(c) = first {
                    let _ = controls[c as usize].send(Input::Freeze(d));
                    return;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        });
    }
    let mut connections = Vec::new();
    for h in handles {
        connections.push(h.await.expect("client tasks finish").1);
    }
    let journal = connections
        .iter_mut()
        .flat_map(Backend::take_journal)
        .collect();
    // Let the last notifications arrive before the sessions close.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(connections);
    RealRun {
        wall_seconds: shared.start.elapsed().as_secs_f64(),
        shared,
        journal,
    }
}

fn measure_real(run: &RealRun, n: u16) -> Measured {
    let log = run.shared.log.lock().unwrap();
    let mut releases: Vec<u64> = log.releases.iter().map(|r| r.0).collect();
    releases.sort_unstable();
    let mut per = vec![0u32; releases.len().max(n as usize)];
    let mut before = 0;
    for &(t, _) in &log.notifications {
        match releases.iter().rposition(|&r| r <= t) {
            Some(k) => per[k] += 1,
            None => before += 1,
        }
    }
    let acquisitions = log.acquisitions.len().max(1) as f64;
    let mut requests: BTreeMap<String, f64> = BTreeMap::new();
    for &(_, _, kind) in &log.requests {
        if !matches!(kind, "connect" | "lease_grant") {
            *requests.entry(kind.to_string()).or_insert(0.0) += 1.0 / acquisitions;
        }
    }
    Measured {
        notifications_per_release: per,
        notifications_before_first_release: before,
        notifications: log.notifications.len() as u64,
        requests_per_acquisition: requests,
        acquisition_tokens: log.acquisitions.iter().map(|a| a.2).collect(),
        wall_seconds: run.wall_seconds,
    }
}

/// Runs a real library's harness (`what` names it in errors) and reads the
/// one JSON object it prints.
fn run_harness(program: &str, args: &[&str], what: &str) -> Result<serde_json::Value, String> {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("{what} printed no JSON: {e}"))
}

/// A harness's `requests` counts divided by its acquisitions (at least 1).
fn per_acquisition(v: &serde_json::Value, acquisitions: f64) -> BTreeMap<String, f64> {
    let acquisitions = acquisitions.max(1.0);
    v["requests"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, c)| (k.clone(), c.as_f64().unwrap_or(0.0) / acquisitions))
                .collect()
        })
        .unwrap_or_default()
}

/// Watchers ZooKeeper has triggered so far, from `mntr`.
fn zk_watchers_triggered(zk: &str) -> Result<u64, String> {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(zk).map_err(|e| format!("mntr: {e}"))?;
    conn.write_all(b"mntr").map_err(|e| format!("mntr: {e}"))?;
    let mut out = String::new();
    conn.read_to_string(&mut out)
        .map_err(|e| format!("mntr: {e}"))?;
    let sums: Vec<u64> = out
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(k, _)| k.starts_with("zk_sum_node_") && k.ends_with("_watch_count"))
        .filter_map(|(_, v)| v.trim().parse().ok())
        .collect();
    if sums.is_empty() {
        return Err("mntr gave no watch counts (is `4lw.commands.whitelist=mntr` set?)".into());
    }
    Ok(sums.iter().sum())
}

/// The classpath of the Curator harnesses: Debian's jars.
pub fn curator_classpath() -> String {
    [
        "curator-framework",
        "curator-client",
        "curator-recipes",
        "zookeeper",
        "zookeeper-jute",
        "guava",
        "slf4j-api",
        "slf4j-nop",
    ]
    .iter()
    .map(|j| format!("/usr/share/java/{j}.jar"))
    .collect::<Vec<_>>()
    .join(":")
}

/// A real library's herd: what the library's own hooks counted, what the
/// server counted, and what the wire saw.
struct LibraryHerd {
    acquisitions: u64,
    /// Requests per acquisition by the library's own count: kazoo's
    /// `KazooClient._call`, Curator's `AdvancedTracerDriver`.
    hook_requests: BTreeMap<String, f64>,
    /// kazoo's own count of its predecessor watch's events, per release.
    hook_notifications_per_release: Option<Vec<u32>>,
    /// kazoo's acquisitions' sequence numbers, in order.
    hook_tokens: Option<Vec<u64>>,
    /// Watchers the server triggered (`mntr`).
    server_notifications: u64,
    wire: zkproxy::WireCounts,
    wall_seconds: f64,
}

/// Runs a real library's herd of `n` clients through `proxy`, a ZooKeeper
/// proxy in front of `zk`.
fn library_herd(
    zk: &str,
    proxy: &zkproxy::Proxy,
    library: faults::Library,
    n: u16,
    hold_ms: u64,
) -> Result<LibraryHerd, String> {
    let (n_s, hold_s) = (n.to_string(), hold_ms.to_string());
    let endpoint = proxy.endpoint();
    herd_at_wire(zk, proxy, "/lock", || match library {
        faults::Library::Kazoo => run_harness(
            "python3",
            &[
                concat!(env!("CARGO_MANIFEST_DIR"), "/kazoo_lock.py"),
                &endpoint,
                &n_s,
                &hold_s,
            ],
            "kazoo_lock.py",
        ),
        faults::Library::Curator => run_harness(
            "java",
            &[
                "-cp",
                &curator_classpath(),
                concat!(env!("CARGO_MANIFEST_DIR"), "/CuratorMutex.java"),
                &endpoint,
                &n_s,
                &hold_s,
            ],
            "CuratorMutex.java",
        ),
    })
}

/// kazoo's own `ReadLock` / `WriteLock` in the shared lock's baseline herd
/// of `n` clients, the first `writers` writing, through `proxy`
/// (`kazoo_rwlock.py`; it starts the clients in order, so the hold is
/// long enough for every node to be made before the first release).
fn kazoo_rw_herd(
    zk: &str,
    proxy: &zkproxy::Proxy,
    n: u16,
    writers: u16,
    hold_ms: u64,
) -> Result<LibraryHerd, String> {
    let endpoint = proxy.endpoint();
    let (n_s, w_s) = (n.to_string(), writers.to_string());
    let hold_s = hold_ms.max(100 + 30 * u64::from(n)).to_string();
    herd_at_wire(zk, proxy, "/lock", || {
        run_harness(
            "python3",
            &[
                concat!(env!("CARGO_MANIFEST_DIR"), "/kazoo_rwlock.py"),
                &endpoint,
                zk,
                &n_s,
                &w_s,
                &hold_s,
            ],
            "kazoo_rwlock.py",
        )
    })
}

/// kazoo's own `Semaphore` of `permits` leases in a herd of `n` clients
/// paced as [`paced`] paces the model's, through `proxy`
/// (`kazoo_semaphore.py`).
fn kazoo_semaphore_herd(
    zk: &str,
    proxy: &zkproxy::Proxy,
    n: u16,
    permits: u16,
) -> Result<LibraryHerd, String> {
    let endpoint = proxy.endpoint();
    let (n_s, k_s) = (n.to_string(), permits.to_string());
    herd_at_wire(zk, proxy, "/sem", || {
        run_harness(
            "python3",
            &[
                concat!(env!("CARGO_MANIFEST_DIR"), "/kazoo_semaphore.py"),
                &endpoint,
                &n_s,
                &k_s,
            ],
            "kazoo_semaphore.py",
        )
    })
}

/// Runs a harness through `proxy` and reads what it, the server and the
/// wire counted; a release is a delete of a node under `dir`.
fn herd_at_wire(
    zk: &str,
    proxy: &zkproxy::Proxy,
    dir: &str,
    harness: impl FnOnce() -> Result<serde_json::Value, String>,
) -> Result<LibraryHerd, String> {
    proxy.reset();
    let before = zk_watchers_triggered(zk)?;
    let v = harness()?;
    let after = zk_watchers_triggered(zk)?;
    let wire = zkproxy::count(&proxy.events(), dir);
    let numbers = |key: &str| -> Option<Vec<u64>> {
        v[key]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect())
    };
    let hook_tokens = numbers("acquisition_sequence");
    let acquisitions = match &hook_tokens {
        Some(t) => t.len() as u64,
        None => v["acquisitions"].as_u64().unwrap_or(0),
    };
    Ok(LibraryHerd {
        acquisitions,
        hook_requests: per_acquisition(&v, acquisitions as f64),
        hook_notifications_per_release: numbers("notifications_per_release")
            .map(|p| p.into_iter().map(|x| x as u32).collect()),
        hook_tokens,
        server_notifications: after - before,
        wire,
        wall_seconds: v["wall_seconds"].as_f64().unwrap_or(0.0),
    })
}

/// A real library's herd beside the model of it.
#[derive(Serialize)]
struct LibraryRow {
    library: &'static str,
    model: String,
    clients: u16,
    /// A semaphore's leases.
    #[serde(skip_serializing_if = "Option::is_none")]
    permits: Option<u16>,
    acquisitions: u64,
    wire: zkproxy::WireCounts,
    wire_requests_per_acquisition: BTreeMap<String, f64>,
    hook_requests_per_acquisition: BTreeMap<String, f64>,
    hook_notifications_per_release: Option<Vec<u32>>,
    server_notifications: u64,
    model_requests_per_acquisition: BTreeMap<String, f64>,
    model_notifications_per_release: Vec<u32>,
    /// The model's notifications in all, at a release or not.
    model_notifications: u64,
    /// The wire's requests per acquisition are the model's (but for the
    /// library's own set-up, [`setup_requests`]).
    requests_match: bool,
    /// The wire's notifications per release are the model's, as many
    /// others came as the model's sent, and the server triggered as many
    /// as the model's sent in all.
    notifications_match: bool,
    /// A lock's releases deleted the nodes in sequence order (a shared
    /// lock's writers', then its readers' in any order); a paced
    /// semaphore's clients acquired in the model's order.
    order_agrees: bool,
    /// The library's own request count is the wire's.
    hook_agrees_with_wire: bool,
    wall_seconds: f64,
}

/// What a row's herd is, for the order its acquisitions must take.
#[derive(Clone, Copy)]
enum Herd {
    /// A lock's: its releases delete the nodes in sequence order.
    Lock,
    /// A shared lock's, its first `writers` writing: they release in
    /// sequence order, its readers after them in any order.
    SharedLock { writers: u16 },
    /// A semaphore's of `permits` leases, paced ([`paced`]): its clients
    /// acquire in the model's order.
    Semaphore { permits: u16 },
}

/// Which library and model a row compares, and what herd.
struct Compared {
    library: faults::Library,
    name: &'static str,
    model: String,
    herd: Herd,
}

/// Requests per acquisition that a library sends for its own set-up and
/// the recipe text, so the model, does not have. kazoo's `Lock` makes sure
/// its parent exists, once per `Lock` object (`Lock._ensure_path`: one
/// `exists`). kazoo's `Semaphore` does so for its own node and reads the
/// `max_leases` stored there to check it, once per `Semaphore` object
/// (`Semaphore._ensure_path`: `exists`, `getData`), and takes its mutex
/// with a new `Lock` each time (one more `exists`).
fn setup_requests(library: faults::Library, herd: Herd) -> BTreeMap<String, f64> {
    let per: &[(&str, f64)] = match (library, herd) {
        (faults::Library::Kazoo, Herd::Lock | Herd::SharedLock { .. }) => &[("exists", 1.0)],
        (faults::Library::Kazoo, Herd::Semaphore { .. }) => &[("exists", 2.0), ("get_data", 1.0)],
        (faults::Library::Curator, _) => &[],
    };
    per.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Whether a lock's releases (a shared lock's with its first `writers`
/// writing) took the order of their nodes' sequence numbers.
fn released_by_token(real: &LibraryHerd, n: u16, writers: u16) -> bool {
    let tokens: Vec<Option<u64>> = real
        .wire
        .releases
        .iter()
        .map(|p| zkproxy::sequence(p))
        .collect();
    // A shared lock's writers release in token order and before every
    // reader; its readers share the lock and release in any order.
    let in_order = usize::from(writers.max(1)).min(tokens.len());
    let readers_after = tokens[in_order..]
        .iter()
        .all(|t| t > &tokens[..in_order].iter().max().copied().flatten());
    tokens.len() as u64 == real.acquisitions
        && real.acquisitions == n as u64
        && tokens.iter().all(Option::is_some)
        && (writers == 0 || readers_after)
        && tokens[..if writers == 0 { tokens.len() } else { in_order }]
            .windows(2)
            .all(|w| w[0] < w[1])
        && real
            .hook_tokens
            .as_ref()
            .is_none_or(|t| t.windows(2).all(|w| w[0] < w[1]))
}

fn library_row(compared: Compared, n: u16, real: LibraryHerd, model: &Measured) -> LibraryRow {
    let Compared {
        library,
        name,
        model: model_id,
        herd,
    } = compared;
    let per = |m: &BTreeMap<String, u64>| -> BTreeMap<String, f64> {
        m.iter()
            .map(|(k, v)| (k.clone(), *v as f64 / real.acquisitions.max(1) as f64))
            .collect()
    };
    let wire_requests = per(&real.wire.requests);
    let mut recipe_requests = wire_requests.clone();
    for (kind, setup) in setup_requests(library, herd) {
        *recipe_requests.entry(kind).or_insert(0.0) -= setup;
    }
    let requests_match = close(&recipe_requests, &model.requests_per_acquisition);
    let at_releases: u32 = model.notifications_per_release.iter().sum();
    let notifications_match = real.wire.notifications_per_release
        == model.notifications_per_release
        && u64::from(real.wire.other_notifications) + u64::from(at_releases) == model.notifications
        && real.server_notifications == model.notifications;
    let (order_agrees, order_word) = match herd {
        Herd::Lock => (released_by_token(&real, n, 0), "by token"),
        Herd::SharedLock { writers } => (released_by_token(&real, n, writers), "by token"),
        Herd::Semaphore { .. } => (
            real.acquisitions == n as u64
                && real.wire.releases.len() == usize::from(n)
                && real.hook_tokens.as_deref() == Some(model.acquisition_tokens.as_slice()),
            "the model's",
        ),
    };
    let hook_agrees_with_wire = close(&real.hook_requests, &wire_requests);
    let word = |ok: bool, yes: &'static str, no: &'static str| if ok { yes } else { no };
    eprintln!(
        "{:<28} {:>3} clients: at the wire, notifications {} requests {} order {}{}; library's own count {} the wire ({:.1} s)",
        format!("{name} (real library)"),
        n,
        word(notifications_match, "match", "DIFFER"),
        word(requests_match, "match", "DIFFER"),
        word(order_agrees, "", "NOT "),
        order_word,
        word(hook_agrees_with_wire, "agrees with", "DIFFERS from"),
        real.wall_seconds
    );
    LibraryRow {
        library: name,
        model: model_id,
        clients: n,
        permits: match herd {
            Herd::Semaphore { permits } => Some(permits),
            Herd::Lock | Herd::SharedLock { .. } => None,
        },
        acquisitions: real.acquisitions,
        wire_requests_per_acquisition: wire_requests,
        hook_requests_per_acquisition: real.hook_requests,
        hook_notifications_per_release: real.hook_notifications_per_release,
        server_notifications: real.server_notifications,
        wire: real.wire,
        model_requests_per_acquisition: model.requests_per_acquisition.clone(),
        model_notifications_per_release: model.notifications_per_release.clone(),
        model_notifications: model.notifications,
        requests_match,
        notifications_match,
        order_agrees,
        hook_agrees_with_wire,
        wall_seconds: real.wall_seconds,
    }
}

/// Counts as the report prints them: `connect 2, ping 4`.
fn fmt_counts(m: &BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report's table of the libraries' herds at the wire.
fn library_table(rows: &[LibraryRow]) -> String {
    let mut md = String::from("\n## The client libraries' own locks and semaphore, at the wire\n\nkazoo 2.11's own `Lock` (`validate/kazoo_lock.py`) against `fair-predecessor:kazoo`, Curator 5.4's own `InterProcessMutex` (`validate/CuratorMutex.java`) against `fair-predecessor:curator`: the baseline herd (N clients with a session each take the lock at once, hold it, release it); kazoo's own `ReadLock` / `WriteLock` (`validate/kazoo_rwlock.py`) against `zk-rwlock:kazoo` in the shared lock's baseline (the first half write, the rest read; the clients start in order, each once the last one's node is listed, so the nodes come in the model's order, and the readers, who share the lock, release in any order after the writers), and kazoo's own `Semaphore` (`validate/kazoo_semaphore.py`) against `zk-semaphore:kazoo` with k leases (the baseline's: 1 for 2 clients, else 2), paced so that every release meets the waiter it should (the clients start one at a time, each once the last one holds a lease or waits — the mutex's holder for a lease, the rest for the mutex —, then the holders release one at a time in the order they acquired, each once the last release has settled; the model's actors run the same pacing, `validate/src/paced.rs`, counted as the simulator counts), every client connected through a ZooKeeper wire-protocol proxy on loopback (`validate/src/zkproxy.rs`), which reads each frame both ways. Requests are counted by op per acquisition, as lockstep names them (`create` and `create2` are both `create`, `getChildren` and `getChildren2` both `get_children`; `_watch` when the request sets a watch); session upkeep (connect, ping, closeSession, setWatches) is counted apart, in all. A release is a delete of a node under `/lock` (a semaphore's: of a lease, under `/sem`). Each notification is charged to the change that fired it: the last request to pass the proxy that fires it (a delete of its path for `NodeDeleted`; a create or delete under its path for `NodeChildrenChanged`); a release's notifications are those charged to it, and the rest (a semaphore's: each lease create's own child watch, the mutex's hand-offs) are compared in all with the model's notifications outside its releases. Beside the wire: the library's own count (kazoo's `KazooClient._call`, Curator's `AdvancedTracerDriver`, paths under `/lock`; kazoo's predecessor-watch callback for a lock's notifications) and the server's (`mntr`: watchers triggered, compared with the model's notifications in all).\n\n| library | clients | requests per acquisition (wire) | (library's own count) | (model) | notifications per release (wire) | (model) | (library's own count) | other notifications (wire / model) | watchers triggered (server) | session upkeep (wire, in all) | match | acquisition order |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        md.push_str(&format!(
            "| {} vs `{}` | {} | {} | {} | {} | {:?} | {:?} | {} | {} / {} | {} | {} | {} | {} |\n",
            r.library,
            r.model,
            match r.permits {
                Some(k) => format!(
                    "{} ({k} permit{})",
                    r.clients,
                    if k == 1 { "" } else { "s" }
                ),
                None => r.clients.to_string(),
            },
            fmt_req(&r.wire_requests_per_acquisition),
            fmt_req(&r.hook_requests_per_acquisition),
            fmt_req(&r.model_requests_per_acquisition),
            r.wire.notifications_per_release,
            r.model_notifications_per_release,
            r.hook_notifications_per_release
                .as_ref()
                .map_or("—".to_string(), |p| format!("{p:?}")),
            r.wire.other_notifications,
            r.model_notifications
                - r.model_notifications_per_release
                    .iter()
                    .map(|&x| u64::from(x))
                    .sum::<u64>(),
            r.server_notifications,
            fmt_counts(&r.wire.session),
            if r.requests_match && r.notifications_match {
                "yes"
            } else {
                "NO"
            },
            match (r.permits, r.order_agrees) {
                (None, true) => "by token",
                (None, false) => "not by token",
                (Some(_), true) => "the model's (start order)",
                (Some(_), false) => "NOT the model's",
            },
        ));
    }
    md.push_str("\n- kazoo: one `exists` per acquisition at the wire, its `Lock._ensure_path` of the lock's parent (once per `Lock` object); the recipe text has no such step. kazoo's `Semaphore`: two `exists` and one `getData` per acquisition — its `Semaphore._ensure_path` (`exists(/sem)`, then `get(/sem)` to check the `max_leases` stored there, once per `Semaphore` object) and its mutex's `Lock._ensure_path` (`exists(/sem-__lock__)`, a new `Lock` each acquisition). These are the only differences: every other request kind and every notification is compared exactly.\n");
    for library in ["kazoo", "curator"] {
        let mut ops = std::collections::BTreeSet::new();
        let mut events = std::collections::BTreeSet::new();
        for r in rows.iter().filter(|r| r.library == library) {
            ops.extend(r.wire.ops.keys().cloned());
            events.extend(r.wire.notifications.keys().cloned());
        }
        if !ops.is_empty() {
            md.push_str(&format!(
                "- {library} at the wire: ops {}; notifications {}.\n",
                ops.into_iter().collect::<Vec<_>>().join(", "),
                events.into_iter().collect::<Vec<_>>().join(", "),
            ));
        }
    }
    let disagree: Vec<String> = rows
        .iter()
        .filter(|r| !r.hook_agrees_with_wire)
        .map(|r| format!("{} with {} clients", r.library, r.clients))
        .collect();
    md.push_str(&if disagree.is_empty() {
        "- The libraries' own request counts agree with the wire's in every row.\n".to_string()
    } else {
        format!(
            "- The library's own request count differs from the wire's: {}.\n",
            disagree.join("; ")
        )
    });
    let other: u32 = rows.iter().map(|r| r.wire.other_notifications).sum();
    if other > 0 {
        md.push_str(&format!(
            "- {other} notification(s) at the wire for a node no release deleted.\n"
        ));
    }
    md
}

fn measure_model(recipe: &RecipeRef, n: u16) -> Measured {
    measure_model_over(recipe, n, 1)
}

/// [`measure_model`] over `servers` servers.
fn measure_model_over(recipe: &RecipeRef, n: u16, servers: u8) -> Measured {
    let scenario = sim::herd::baseline_over(recipe, n, 1, servers);
    let row = sim::herd::row(&scenario, 1);
    let requests = row
        .store_requests
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "writes" | "reads" | "watches"))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    Measured {
        notifications_per_release: row.notifications_per_release.clone(),
        notifications_before_first_release: 0,
        notifications: row.notifications,
        requests_per_acquisition: requests,
        acquisition_tokens: Vec::new(),
        wall_seconds: row.wall_seconds,
    }
}

/// The model's paced run ([`paced`]) as a row compares it: its
/// acquisitions' tokens are the clients, in the order they acquired.
fn paced_measured(run: &paced::PacedRun) -> Measured {
    let acquisitions = run.order.len().max(1) as f64;
    Measured {
        notifications_per_release: run.notifications_per_release.clone(),
        notifications_before_first_release: 0,
        notifications: run.notifications,
        requests_per_acquisition: run
            .requests
            .iter()
            .map(|(k, v)| (k.clone(), *v as f64 / acquisitions))
            .collect(),
        acquisition_tokens: run.order.iter().map(|&c| u64::from(c)).collect(),
        wall_seconds: run.wall_seconds,
    }
}

/// The report's section on one `etcdctl` experiment.
fn experiment_section(
    title: &str,
    setup: &str,
    shown: &str,
    not_shown: &str,
    model: &str,
    o: &etcdctl::Outcome,
) -> String {
    let verdict = match (&o.error, o.phantom) {
        (Some(e), _) => format!("The experiment did not run: {e}."),
        (None, true) => shown.to_string(),
        (None, false) => not_shown.to_string(),
    };
    format!(
        "\n## {title}\n\n{setup} {verdict}\n\nB's exit status {:?}; stdout {:?}; stderr {:?}. B's key was gone before A's went: {}.\n\n{model}\n",
        o.exit_code,
        o.stdout.trim(),
        o.stderr.trim(),
        o.key_gone_before_return,
    )
}

/// One compared row: prints its line and keeps it for the report.
fn row(
    recipe: String,
    clients: u16,
    (real, model): (Measured, Measured),
    (notifications_match, requests_match): (bool, bool),
    explained: Vec<String>,
) -> Row {
    let order_follows_tokens = real.acquisition_tokens.windows(2).all(|w| w[0] < w[1]);
    let word = |ok: bool, yes: &'static str, no: &'static str| if ok { yes } else { no };
    eprintln!(
        "{:<28} {:>3} clients: notifications {} requests {} order {} ({:.1} s)",
        recipe,
        clients,
        word(notifications_match, "match", "DIFFER"),
        word(requests_match, "match", "DIFFER"),
        word(order_follows_tokens, "by token", "NOT by token"),
        real.wall_seconds
    );
    Row {
        recipe,
        clients,
        real,
        model,
        notifications_match,
        requests_match,
        order_follows_tokens,
        explained,
    }
}

/// lockstep's actors of `recipe`, `n` of them, in the herd baseline on
/// `servers`, against the simulator's run of the same baseline over as
/// many servers: one compared row.
async fn actor_row(recipe: &RecipeRef, n: u16, args: &Args, servers: Servers<'_>) -> Row {
    let client = Client {
        recipe: recipe.clone(),
        rounds: 1,
        policy: Policy::Naive,
        timing: timing(300, args.hold_ms, 3000),
        producers: 0,
        reentries: 0,
        writers: 0,
        observers: 0,
    };
    let real_run = run_real(
        recipe,
        n,
        args,
        servers,
        client,
        false,
        60,
        RealStart::Baseline,
    )
    .await;
    let real = measure_real(&real_run, n);
    let model = measure_model_over(recipe, n, servers.count());
    // Exact, with no allowance: the start gate gives every recipe the
    // model's order of first requests.
    let notifications_match = real.notifications_per_release == model.notifications_per_release
        && real.notifications_before_first_release == 0;
    let mut explained = Vec::new();
    if recipe.face() == Face::Etcd {
        // waitDelete's deferred cancel goes out on the watch stream; the
        // model ends the key watch at its delete instead.
        explained.push("etcd: after the delete it waited for, the client cancels its watch on the shared watch stream; the model ends the key watch at the delete, so that cancel is not counted on either side".into());
    }
    let real_requests = real.requests_per_acquisition.clone();
    let mut requests_match = close(&real_requests, &model.requests_per_acquisition);
    if !requests_match && recipe.id() == "zk-unfair-election:getdata" {
        if let Some(saved) = found_leader_early(&real_requests, &model.requests_per_acquisition) {
            requests_match = true;
            explained.push(format!(
                "zk-unfair-election:getdata, {n} clients: {saved:.2} create(s) and as many getData(s) per acquisition fewer than the model: a woken follower whose getData landed after the new leader's create found it and followed, where the model's simultaneous arrivals have every woken follower find nothing, create, get NodeExists and look again; notifications agree exactly"
            ));
        }
    }
    row(
        recipe.id(),
        n,
        (real, model),
        (notifications_match, requests_match),
        explained,
    )
}

/// The compared rows of lockstep's actors as a table, and the
/// differences they explain.
fn rows_table(rows: &[Row]) -> String {
    let mut md = String::from("| recipe | clients | notifications per release (real) | (model) | before the first release (real) | requests per acquisition (real) | (model) | match | acquisition order |\n|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {:?} | {:?} | {} | {} | {} | {} | {} |\n",
            r.recipe,
            r.clients,
            r.real.notifications_per_release,
            r.model.notifications_per_release,
            r.real.notifications_before_first_release,
            fmt_req(&r.real.requests_per_acquisition),
            fmt_req(&r.model.requests_per_acquisition),
            if r.notifications_match && r.requests_match {
                "yes"
            } else {
                "NO"
            },
            if r.order_follows_tokens {
                "by token"
            } else {
                "not by token"
            },
        ));
    }
    let mut explained: Vec<&String> = rows.iter().flat_map(|r| &r.explained).collect();
    explained.dedup();
    if !explained.is_empty() {
        md.push_str("\nDifferences, explained:\n");
        for e in explained {
            md.push_str(&format!("- {e}\n"));
        }
    }
    md
}

/// Whether every row's counts match, and every fair recipe's order follows
/// its tokens.
fn rows_agree(rows: &[Row]) -> bool {
    rows.iter().all(|r| {
        r.notifications_match && r.requests_match && (!fair(&r.recipe) || r.order_follows_tokens)
    })
}

/// The most clients the actors run with on the ensembles.
const ENSEMBLE_CLIENTS: u16 = 5;

/// `findLeader` when real wake-ups were apart: a follower whose getData
/// found the new leader's node saved a create and the getData after its
/// NodeExists. Returns the saving per acquisition if it accounts for every
/// difference: creates and get_data_watch short by the same amount, the rest
/// equal.
fn found_leader_early(real: &BTreeMap<String, f64>, model: &BTreeMap<String, f64>) -> Option<f64> {
    let get = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let saved = get(model, "create") - get(real, "create");
    let also = get(model, "get_data_watch") - get(real, "get_data_watch");
    let rest_equal = |m: &BTreeMap<String, f64>| -> BTreeMap<String, f64> {
        m.iter()
            .filter(|(k, _)| !matches!(k.as_str(), "create" | "get_data_watch"))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    (saved > 0.0 && (saved - also).abs() < 1e-9 && close(&rest_equal(real), &rest_equal(model)))
        .then_some(saved)
}

fn close(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> bool {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .all(|k| (a.get(k).copied().unwrap_or(0.0) - b.get(k).copied().unwrap_or(0.0)).abs() < 1e-9)
}

/// Replays the model's baseline run of every barrier, queue, shared-lock
/// and semaphore recipe on
/// ZooKeeper, for each client count they can run with; returns the rows
/// and the counts left out.
async fn replay_barriers_and_queues(
    args: &Args,
    counts: &[u16],
) -> (Vec<replay::ReplayRow>, Vec<u16>) {
    let (run, skipped): (Vec<u16>, Vec<u16>) =
        counts.iter().partition(|&&n| n >= replay::FEWEST_CLIENTS);
    let mut rows = Vec::new();
    for recipe in replay::replayed_recipes() {
        for &n in &run {
            clean(&recipe, args).await;
            let b = backend(&recipe, args, 60).await;
            rows.push(replay::replay(&recipe, n, b).await);
        }
    }
    (rows, skipped)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let counts: Vec<u16> = match args.clients.split(',').map(|c| c.trim().parse()).collect() {
        Ok(c) => c,
        Err(_) => {
            eprintln!("lockstep-validate: --clients takes a comma-separated list of counts");
            return ExitCode::from(2);
        }
    };
    // The ensembles' link proxies first: their servers cannot form an
    // ensemble before the proxies are up.
    let ensembles = match ensemble::Ensembles::start(&ensemble::Flags {
        zk: args.zk_ensemble.as_deref(),
        zk_links: args.zk_ensemble_links.as_deref(),
        zk_timing: &args.zk_ensemble_timing,
        zk_log: args.zk_ensemble_log.as_ref(),
        etcd: args.etcd_cluster.as_deref(),
        etcd_peers: args.etcd_cluster_peers.as_deref(),
    }) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("lockstep-validate: {e}");
            return ExitCode::from(2);
        }
    };
    if args.ensemble_only && ensembles.is_none() {
        eprintln!("lockstep-validate: --ensemble-only needs --zk-ensemble or --etcd-cluster");
        return ExitCode::from(2);
    }
    if !args.redis_only && !args.ensemble_only && (args.zk.is_empty() || args.etcd.is_empty()) {
        eprintln!(
            "lockstep-validate: --zk and --etcd are needed (or --redis-only, --ensemble-only)"
        );
        return ExitCode::from(2);
    }
    std::fs::create_dir_all(&args.out).expect("create the output directory");
    if let (true, Some(e)) = (args.ensemble_only, &ensembles) {
        let section = ensemble::validate(e, args.ensemble_runs).await;
        let mut replays = Replays::scenarios(e, &args.out);
        replays.failovers(&args, e).await;
        let json = serde_json::json!({ "ensembles": section, "replays": replays });
        return write_one_section(
            &args,
            "ensembles",
            &format!("{}{}", section.markdown(), replays.markdown(e)),
            &json,
            section.agrees() && replays.agrees(),
        );
    }
    if args.redis_only {
        let Some(section) = redis::validate(&args, &counts).await else {
            eprintln!("lockstep-validate: --redis-only needs --redis");
            return ExitCode::from(2);
        };
        let json = serde_json::json!({ "redis": section });
        return write_one_section(&args, "Redis", &section.markdown(), &json, section.agrees());
    }
    let mut rows = Vec::new();
    for recipe in validated_recipes() {
        for &n in &counts {
            rows.push(actor_row(&recipe, n, &args, Servers::Single).await);
        }
    }

    // The same actors on the ensembles, each client on its own server as
    // the model places it (after the facts of order, which hold the
    // ensembles' links: the actors run on ensembles that have settled).
    let ensemble_section = match &ensembles {
        Some(e) => Some(ensemble::validate(e, args.ensemble_runs).await),
        None => None,
    };
    // The ensemble scenarios replayed with the real libraries (after the
    // facts, before the actors: each run leaves the ensembles settled).
    let mut replays = ensembles
        .as_ref()
        .map_or_else(Replays::default, |e| Replays::scenarios(e, &args.out));
    let mut ensemble_rows = Vec::new();
    let mut ensemble_errors = Vec::new();
    if let Some(e) = &ensembles {
        let zk = match &e.zk {
            Some(z) => Some(ensemble::zk_servers(z).await),
            None => None,
        };
        let etcd = match &e.etcd {
            Some(c) => Some(ensemble::etcd_servers(c).await),
            None => None,
        };
        for recipe in validated_recipes() {
            let servers = match recipe.face() {
                Face::ZooKeeper => &zk,
                Face::Etcd => &etcd,
                Face::Redis | Face::Consul => &None,
            };
            match servers {
                Some(Ok(at)) => {
                    for &n in counts.iter().filter(|&&n| n <= ENSEMBLE_CLIENTS) {
                        ensemble_rows
                            .push(actor_row(&recipe, n, &args, Servers::Ensemble(at)).await);
                    }
                }
                Some(Err(err)) => ensemble_errors.push(format!("{}: {err}", recipe.id())),
                None => {}
            }
        }
        for err in &ensemble_errors {
            eprintln!("lockstep-validate: the actors on the ensembles did not run: {err}");
        }
    }
    // Last of all on the ensembles: afterwards another server leads.
    if let Some(e) = &ensembles {
        replays.failovers(&args, e).await;
    }

    // The barrier, queue, shared-lock and semaphore recipes: the model's
    // own runs, replayed.
    let (replay_rows, replay_skipped) = replay_barriers_and_queues(&args, &counts).await;

    // The real libraries' own locks at the wire: kazoo's Lock against
    // fair-predecessor:kazoo, Curator's InterProcessMutex against
    // fair-predecessor:curator, each herd through a ZooKeeper proxy.
    let mut library_rows = Vec::new();
    for library in [faults::Library::Kazoo, faults::Library::Curator] {
        let model_recipe = models::recipes::lookup("fair-predecessor", Some(library.variant()))
            .expect("registered");
        let proxy = match zkproxy::Proxy::start(&args.zk) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("lockstep-validate: {e}");
                return ExitCode::from(1);
            }
        };
        for &n in &counts {
            clean(&model_recipe, &args).await;
            let model = measure_model(&model_recipe, n);
            match library_herd(&args.zk, &proxy, library, n, args.hold_ms) {
                Ok(real) => {
                    let compared = Compared {
                        library,
                        name: library.name(),
                        model: model_recipe.id(),
                        herd: Herd::Lock,
                    };
                    library_rows.push(library_row(compared, n, real, &model))
                }
                Err(e) => {
                    eprintln!(
                        "lockstep-validate: {} herd, {n} clients: {e}",
                        library.name()
                    );
                    return ExitCode::from(1);
                }
            }
        }
    }

    // kazoo's own ReadLock / WriteLock against zk-rwlock:kazoo, in the
    // shared lock's baseline, and its own Semaphore against
    // zk-semaphore:kazoo, paced as the model's paced run, at the wire.
    let rw_recipe = models::recipes::lookup("zk-rwlock", Some("kazoo")).expect("registered");
    let sem_recipe = models::recipes::lookup("zk-semaphore", Some("kazoo")).expect("registered");
    let proxy = match zkproxy::Proxy::start(&args.zk) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lockstep-validate: {e}");
            return ExitCode::from(1);
        }
    };
    for (name, recipe) in [
        ("kazoo ReadLock/WriteLock", &rw_recipe),
        ("kazoo Semaphore", &sem_recipe),
    ] {
        for &n in counts.iter().filter(|&&n| n >= 2) {
            clean(recipe, &args).await;
            let compared = |herd| Compared {
                library: faults::Library::Kazoo,
                name,
                model: recipe.id(),
                herd,
            };
            let row = if recipe.app() == models::recipe::App::Semaphore {
                paced::semaphore(recipe, n).and_then(|model| {
                    let permits = model.permits;
                    kazoo_semaphore_herd(&args.zk, &proxy, n, permits).map(|real| {
                        let herd = Herd::Semaphore { permits };
                        library_row(compared(herd), n, real, &paced_measured(&model))
                    })
                })
            } else {
                let writers = models::recipe::herd_writers(n.into()) as u16;
                let model = measure_model(recipe, n);
                kazoo_rw_herd(&args.zk, &proxy, n, writers, args.hold_ms).map(|real| {
                    library_row(compared(Herd::SharedLock { writers }), n, real, &model)
                })
            };
            match row {
                Ok(row) => library_rows.push(row),
                Err(e) => {
                    eprintln!("lockstep-validate: {name} herd, {n} clients: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    }
    drop(proxy);

    // The real libraries' holders cut off past their sessions, beside the
    // model's runs of the same scenario.
    let mut experiments = Vec::new();
    for library in [faults::Library::Kazoo, faults::Library::Curator] {
        for fault in [faults::Fault::Pause, faults::Fault::Partition] {
            // Blocking work (processes, signals, sleeps) off the runtime.
            let zk = args.zk.clone();
            let e = tokio::task::spawn_blocking(move || faults::experiment(&zk, library, fault))
                .await
                .expect("the experiment's thread finishes");
            e.report(&args.out);
            experiments.push(e);
        }
    }

    // etcdctl lock (etcd 3.4's own Mutex) against etcd-revision:v3.4, by
    // the server's counters.
    let v34 = models::recipes::parse("etcd-revision:v3.4").expect("registered");
    let mut etcdctl_rows = Vec::new();
    for &n in &counts {
        let real = match etcdctl::lock_herd(&args.etcd, n, args.hold_ms).await {
            Ok(r) => r,
            Err(e) => {
                eprintln!("lockstep-validate: etcdctl lock, {n} clients: {e}");
                return ExitCode::from(1);
            }
        };
        let model = measure_model(&v34, n);
        etcdctl_rows.push(compare_totals("etcdctl lock (real)", n, real, &model));
    }

    // A real split brain on etcd: the first holder freezes past its lease TTL.
    let recipe = models::recipes::lookup("etcd-revision", None).expect("registered");
    let client = Client {
        recipe: recipe.clone(),
        rounds: 1,
        policy: Policy::Naive,
        timing: timing(100, 100, 600),
        producers: 0,
        reentries: 0,
        writers: 0,
        observers: 0,
    };
    let split = run_real(
        &recipe,
        2,
        &args,
        Servers::Single,
        client,
        true,
        2,
        RealStart::FreezeFirstHolder(Duration::from_millis(3500)),
    )
    .await;
    let lines: Vec<sim::trace::TraceLine> = {
        let log = split.shared.log.lock().unwrap();
        let mut l = log.lines.clone();
        l.sort_by_key(|x| x.t);
        l
    };
    let mut real_timeline = sim::timeline::timeline_from_trace(
        "Real etcd 3.4: the first holder frozen 3.5 s between its writes, lease TTL 2 s",
        &lines,
    );
    real_timeline.x_label = "wall time (s)".into();
    let both_held = real_timeline.lanes.iter().any(|l| !l.overlaps.is_empty());
    let rejected = split.shared.log.lock().unwrap().rejected_writes.clone();
    // The property monitors, fed by the real run as by the simulator.
    let real_violated: std::collections::BTreeSet<&'static str> = split
        .shared
        .log
        .lock()
        .unwrap()
        .violations
        .iter()
        .map(|(_, b)| b.property.name())
        .collect();
    timeline(&real_timeline, &args.out.join("split-brain-real")).expect("draw");
    let scenario = sim::scenario::Scenario::parse(
        include_str!("../../scenarios/etcd-lease-pause.toml"),
        "scenarios/etcd-lease-pause.toml",
        "etcd-lease-pause",
    )
    .expect("the twin scenario parses");
    let sim_started = Instant::now();
    let twin = sim::engine::simulate(&scenario, scenario.seed, true);
    let sim_wall = sim_started.elapsed().as_secs_f64();
    let sim_timeline = sim::timeline::timeline_from_trace(
        "lockstep run scenarios/etcd-lease-pause.toml (simulated)",
        &twin.trace,
    );
    timeline(&sim_timeline, &args.out.join("split-brain-sim")).expect("draw");
    let twin_mutual = twin.first_violation("mutual_exclusion").is_some();
    let twin_resource = twin.first_violation("resource_exclusion").is_some();
    let twin_rejected = twin.metrics.rejected_writes;
    // holder_owns_key needs the model store's ghost mark, which a real
    // server cannot give: compare the others.
    let twin_violated: std::collections::BTreeSet<&'static str> = twin
        .violations
        .iter()
        .map(|v| v.property.name())
        .filter(|p| *p != "holder_owns_key")
        .collect();
    let monitors_agree = real_violated == twin_violated;

    // etcd's own Campaign (etcdctl elect): the phantom leader, for real?
    let phantom = etcdctl::phantom_leader(&args.etcd).await;
    let mutex_11456 = etcdctl::mutex_11456(&args.etcd).await;
    for (what, o) in [
        ("etcdctl elect: phantom leader", &phantom),
        ("etcdctl lock: etcd #11456", &mutex_11456),
    ] {
        eprintln!(
            "{what} {}",
            match (&o.error, o.phantom) {
                (Some(e), _) => format!("not tried: {e}"),
                (None, true) => "shown".into(),
                (None, false) => "not shown".into(),
            }
        );
    }

    // Redis: lockstep's actors on real masters, the real libraries at the
    // wire, a real pause past the TTL (skipped without --redis).
    let redis_section = redis::validate(&args, &counts).await;

    // The chart: notifications per release, model against real.
    let mut series = Vec::new();
    for (colour, recipe) in validated_recipes().into_iter().enumerate() {
        for (label, pick) in [("model", true), ("real server", false)] {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.recipe == recipe.id())
                .map(|r| {
                    let m = if pick { &r.model } else { &r.real };
                    let total: u32 = m.notifications_per_release.iter().sum();
                    (
                        r.clients as f64,
                        total as f64 / m.notifications_per_release.len().max(1) as f64,
                    )
                })
                .collect();
            series.push(Series {
                name: format!("{} ({label})", recipe.id()),
                points,
                colour: Some(colour),
                markers_only: !pick,
            });
        }
    }
    line_chart(
        &LineChart {
            title: "Notifications per release: model vs real servers".into(),
            x_label: "clients".into(),
            y_label: "notifications per release (mean)".into(),
            log_x: true,
            log_y: true,
            series,
        },
        &args.out.join("validation-notifications"),
    )
    .expect("draw");

    // The report.
    let mut md = String::from("# Model vs real servers\n\nBaseline herd scenario (N clients request at once, one round, no faults), the same client and recipe actors against ZooKeeper 3.8 and etcd 3.4 on loopback, compared with lockstep's simulation.\n\n![notifications](validation-notifications.png)\n\n");
    md.push_str(&rows_table(&rows));
    md.push_str(&totals_table(
        "`etcdctl lock NAME sleep HOLD` (etcd 3.4's own `concurrency.Mutex`), N processes at once, measured by the server (`/metrics`: gRPC calls by method, watch events sent), against `etcd-revision:v3.4`",
        &etcdctl_rows,
    ));
    md.push_str(&library_table(&library_rows));
    md.push_str(&format!(
        "\n## A real split brain, and its simulated twin\n\nReal etcd: both clients believed they held at once: {both_held}; the resource (fencing on, token = create revision) rejected {} stale write(s) {:?}. Wall time {:.2} s. The property monitors, fed by the real run, found violated: {real_violated:?}; fed by the simulation: {twin_violated:?} (agree: {monitors_agree}).\n\nSimulated twin (`lockstep run scenarios/etcd-lease-pause.toml`): mutual_exclusion violated: {twin_mutual}; resource_exclusion violated: {twin_resource}; stale writes rejected: {twin_rejected}; {:.2} virtual seconds simulated in {:.4} wall seconds.\n\nTime compression: the real run took {:.0}x the wall time of its simulation.\n\n![real](split-brain-real.png)\n![simulated](split-brain-sim.png)\n",
        rejected.len(),
        rejected,
        split.wall_seconds,
        twin.metrics.end_us as f64 / 1e6,
        sim_wall,
        split.wall_seconds / sim_wall.max(1e-9),
    ));
    md.push_str(&experiment_section(
        "etcd's own Campaign: the phantom leader",
        "`etcdctl elect` (etcd 3.4's `concurrency.Election`): candidate A leads, B waits in `Campaign` behind A's key; B's process is stopped and its lease revoked (its key goes, as on expiry), A resigns, B resumes.",
        &format!("**Campaign returned leadership with no key** {:.2} s after B resumed: etcdctl printed its get(key) response with no `kvs` and went on as leader until its session's next keepalive (up to 20 s later, TTL/3) found the lease gone. The real client shows the phantom leader.", phantom.returned_after_seconds.unwrap_or(0.0)),
        "Campaign did not return leadership: the real client did not show the phantom leader here.",
        "The model (`lockstep check --recipe etcd-election --clients 2 --pauses 1`) finds the same: `elected_with_key` violated for variant `v3.5`, holding for `checked`.",
        &phantom,
    ));
    md.push_str(&experiment_section(
        "etcd's own Mutex (3.4): etcd #11456",
        "`etcdctl lock` (etcd 3.4's `concurrency.Mutex`): A holds; B (`--ttl 2`, command `echo HOLDING`) waits in `Lock` behind A's key; B's process is stopped until its lease expires (its key goes), A unlocks, B resumes.",
        &format!("**Lock returned with no key** {:.2} s after B resumed: etcdctl ran B's command as the holder. The real 3.4 client reproduces #11456.", mutex_11456.returned_after_seconds.unwrap_or(0.0)),
        "Lock did not return: the real client did not reproduce #11456 here.",
        "The model: `lockstep check --recipe etcd-revision:v3.4 --clients 2 --pauses 1` violates `holder_owns_key`; `v3.5` holds; `lockstep hunt scenarios/etcd-mutex-11456.toml` shows it in the simulator.",
        &mutex_11456,
    ));
    md.push_str(&faults::section(&experiments));
    md.push_str(&replay::section(&replay_rows, &replay_skipped));
    match &redis_section {
        Some(r) => md.push_str(&r.markdown()),
        None => {
            md.push_str("\n## Redis\n\nNot run: the validator was given no Redis (`--redis`).\n")
        }
    }
    match &ensemble_section {
        Some(e) => {
            md.push_str(&e.markdown());
            md.push_str(&format!(
                "\n## lockstep's actors on the ensembles\n\nThe baseline herd rows above, for N up to {ENSEMBLE_CLIENTS}, on the three-server ZooKeeper ensemble and the three-member etcd cluster: client i on the model's server (i + 1) mod 3 (the leader is server 0; an etcd client on that member alone), against the simulator's run of the same baseline over three servers.\n\n"
            ));
            md.push_str(&rows_table(&ensemble_rows));
            for err in &ensemble_errors {
                md.push_str(&format!("\nNot run: {err}.\n"));
            }
        }
        None => md.push_str("\n## Replicated stores: facts of order on real ensembles\n\nNot run: the validator was given no ensemble (`--zk-ensemble`, `--etcd-cluster`).\n"),
    }
    if let Some(e) = &ensembles {
        md.push_str(&replays.markdown(e));
    }
    std::fs::write(args.out.join("validation.md"), &md).expect("write");
    std::fs::write(
        args.out.join("validation.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "rows": rows,
            "split_brain": {
                "real_both_held": both_held,
                "real_rejected_writes": rejected,
                "real_wall_seconds": split.wall_seconds,
                "real_monitors_violated": real_violated,
                "sim_monitors_violated": twin_violated,
                "sim_mutual_exclusion_violated": twin_mutual,
                "sim_resource_exclusion_violated": twin_resource,
                "sim_rejected_writes": twin_rejected,
                "sim_virtual_seconds": twin.metrics.end_us as f64 / 1e6,
                "sim_wall_seconds": sim_wall,
            },
            "etcdctl_elect_phantom_leader": phantom,
            "etcdctl_lock_11456": mutex_11456,
            "library_herds": library_rows,
            "fault_experiments": experiments,
            "etcdctl_lock_herd": etcdctl_rows,
            "barrier_queue_replay": replay_rows,
            "redis": redis_section,
            "ensembles": ensemble_section,
            "ensemble_rows": ensemble_rows,
            "ensemble_actor_errors": ensemble_errors,
            "replays": replays,
        }))
        .unwrap(),
    )
    .expect("write");
    println!("{md}");
    println!("written: {}", args.out.join("validation.md").display());
    let actors_agree =
        rows_agree(&rows) && rows_agree(&ensemble_rows) && ensemble_errors.is_empty();
    let split_ok = both_held
        && !rejected.is_empty()
        && twin_mutual
        && !twin_resource
        && twin_rejected > 0
        && monitors_agree;
    let etcdctl_agrees = etcdctl_rows.iter().all(|r| r.agree);
    let libraries_agree = library_rows
        .iter()
        .all(|r| r.requests_match && r.notifications_match && r.order_agrees);
    let faults_agree = experiments.iter().all(faults::Experiment::agrees);
    let elect_ran = [&phantom, &mutex_11456]
        .iter()
        .all(|o| o.error.is_none() && o.key_gone_before_return);
    let replays_agree = replay_rows.iter().all(replay::ReplayRow::agrees);
    // Without --redis there is nothing to compare (and nothing differs).
    let redis_agrees = redis_section.as_ref().is_none_or(redis::Section::agrees);
    let ensembles_agree = ensemble_section
        .as_ref()
        .is_none_or(ensemble::Section::agrees)
        && replays.agrees();
    if actors_agree
        && split_ok
        && etcdctl_agrees
        && libraries_agree
        && faults_agree
        && elect_ran
        && replays_agree
        && redis_agrees
        && ensembles_agree
    {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "lockstep-validate: model and real servers differ (see {})",
            args.out.join("validation.md").display()
        );
        ExitCode::from(1)
    }
}
