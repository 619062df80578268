//! etcd's own client code, through `etcdctl` (etcd 3.4.23): does the real
//! client take leadership, or the lock, for a candidate whose lease ended
//! while it waited?
//!
//! - `etcdctl elect` (`concurrency.Election.Campaign`): the phantom leader.
//! - `etcdctl lock` (`concurrency.Mutex.Lock`, 3.4): etcd #11456.
//!
//! 1. A runs the command and wins (its key is there).
//! 2. B runs it and waits in `waitDeletes` behind A's key.
//! 3. B's process is stopped (SIGSTOP) and its lease ends: revoked for
//!    `elect` (its session TTL is a fixed 60 s; revoking is the same store
//!    change without the minute's wait), expired for real for `lock`
//!    (`--ttl 2`). Either way its key is deleted.
//! 4. A is interrupted (SIGINT): it resigns or unlocks, deleting its key.
//! 5. B resumes (SIGCONT). If its wait returns, B goes on as leader or holder
//!    with no key: `elect` prints the get of its key (`-w json`: a header and
//!    no `kvs`); `lock` runs its command (`echo HOLDING`). The experiment
//!    stops B once it has printed.

use serde::Serialize;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which `etcdctl` command the experiment runs.
#[derive(Clone, Copy, Debug)]
enum Tool {
    Elect,
    Lock,
}

impl Tool {
    fn prefix(self) -> &'static str {
        match self {
            Tool::Elect => "/lockstep-elect",
            Tool::Lock => "/lockstep-lock",
        }
    }

    fn args(self, proposal: &str) -> Vec<String> {
        let name = self.prefix().to_string();
        match (self, proposal) {
            (Tool::Elect, p) => vec!["-w".into(), "json".into(), "elect".into(), name, p.into()],
            (Tool::Lock, "a") => vec!["lock".into(), name],
            (Tool::Lock, _) => vec![
                "lock".into(),
                "--ttl".into(),
                "2".into(),
                name,
                "echo".into(),
                "HOLDING".into(),
            ],
        }
    }

    /// Whether what B printed shows its wait returned.
    fn returned(self, stdout: &str) -> bool {
        match self {
            Tool::Elect => stdout.contains("\"header\""),
            Tool::Lock => stdout.contains("HOLDING"),
        }
    }
}

/// What an experiment saw.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// B's wait returned leadership (the lock) after its key was gone.
    pub phantom: bool,
    /// Seconds from B's resumption to its printing that it leads (holds).
    pub returned_after_seconds: Option<f64>,
    /// B's key was gone when A resigned (so the leadership had no key).
    pub key_gone_before_return: bool,
    /// B's exit status and what it printed.
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// What went wrong running the experiment, if anything.
    pub error: Option<String>,
}

fn etcdctl(endpoint: &str, args: &[&str]) -> Command {
    let mut c = Command::new("etcdctl");
    c.env("ETCDCTL_API", "3")
        .arg(format!("--endpoints={endpoint}"))
        .args(args);
    c
}

pub(crate) fn signal(child: &Child, sig: &str) -> Result<(), String> {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .map_err(|e| format!("kill {sig}: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("kill {sig} failed"))
}

/// The election's (lock's) keys with their leases, oldest first.
async fn keys(client: &mut etcd_client::Client, tool: Tool) -> Result<Vec<(String, i64)>, String> {
    let opts = etcd_client::GetOptions::new().with_prefix().with_sort(
        etcd_client::SortTarget::Create,
        etcd_client::SortOrder::Ascend,
    );
    let resp = client
        .get(tool.prefix(), Some(opts))
        .await
        .map_err(|e| e.to_string())?;
    Ok(resp
        .kvs()
        .iter()
        .map(|kv| (kv.key_str().unwrap_or("").to_string(), kv.lease()))
        .collect())
}

async fn wait_for_keys(
    client: &mut etcd_client::Client,
    tool: Tool,
    n: usize,
) -> Result<(), String> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if keys(client, tool).await?.len() == n {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!("{} never had {n} key(s)", tool.prefix()))
}

fn spawn(endpoint: &str, tool: Tool, proposal: &str) -> Result<Child, String> {
    let args = tool.args(proposal);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    etcdctl(endpoint, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run etcdctl: {e}"))
}

/// Collects what `child` prints on stdout as it prints it.
pub(crate) fn collect_stdout(child: &mut Child) -> Arc<Mutex<String>> {
    collect(child.stdout.take())
}

/// What a child process prints on `pipe`, collected as it prints it.
pub(crate) fn collect(pipe: Option<impl Read + Send + 'static>) -> Arc<Mutex<String>> {
    let out = Arc::new(Mutex::new(String::new()));
    if let Some(mut pipe) = pipe {
        let out = out.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                out.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    out
}

/// Waits until `done` says so or `child` exits, at most `limit`; then stops
/// the child. Returns its exit status (None if it was killed) and stderr.
pub(crate) fn finish(
    mut child: Child,
    limit: Duration,
    done: impl Fn() -> bool,
) -> (Option<i32>, String) {
    let started = Instant::now();
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) if started.elapsed() < limit && !done() => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let mut err = String::new();
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    (code, err)
}

/// `etcdctl elect`: the phantom leader.
pub async fn phantom_leader(endpoint: &str) -> Outcome {
    experiment(endpoint, Tool::Elect).await
}

/// `etcdctl lock` (3.4): etcd #11456.
pub async fn mutex_11456(endpoint: &str) -> Outcome {
    experiment(endpoint, Tool::Lock).await
}

async fn experiment(endpoint: &str, tool: Tool) -> Outcome {
    match run(endpoint, tool).await {
        Ok(o) => o,
        Err(e) => Outcome {
            phantom: false,
            returned_after_seconds: None,
            key_gone_before_return: false,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(e),
        },
    }
}

async fn run(endpoint: &str, tool: Tool) -> Result<Outcome, String> {
    let mut client = etcd_client::Client::connect([endpoint], None)
        .await
        .map_err(|e| e.to_string())?;
    client
        .delete(
            tool.prefix(),
            Some(etcd_client::DeleteOptions::new().with_prefix()),
        )
        .await
        .map_err(|e| e.to_string())?;

    let mut a = spawn(endpoint, tool, "a")?;
    let _ = collect_stdout(&mut a);
    wait_for_keys(&mut client, tool, 1).await?;
    let mut b = spawn(endpoint, tool, "b")?;
    let printed = collect_stdout(&mut b);
    wait_for_keys(&mut client, tool, 2).await?;
    // Let B's waitDeletes set its watch behind A's key.
    tokio::time::sleep(Duration::from_millis(500)).await;

    signal(&b, "-STOP")?;
    match tool {
        Tool::Elect => {
            let (_, b_lease) = keys(&mut client, tool).await?[1].clone();
            client
                .lease_revoke(b_lease)
                .await
                .map_err(|e| e.to_string())?;
        }
        // The 2 s lease expires while B is stopped.
        Tool::Lock => wait_for_keys(&mut client, tool, 1).await?,
    }
    signal(&a, "-INT")?;
    let _ = finish(a, Duration::from_secs(5), || false);
    let key_gone_before_return = keys(&mut client, tool).await?.is_empty();
    signal(&b, "-CONT")?;
    let resumed = Instant::now();
    let returned = || tool.returned(&printed.lock().unwrap());
    let (exit_code, stderr) = finish(b, Duration::from_secs(10), returned);
    let returned_after_seconds = returned().then(|| resumed.elapsed().as_secs_f64());
    let stdout = printed.lock().unwrap().clone();
    let phantom = returned_after_seconds.is_some()
        && key_gone_before_return
        && match tool {
            Tool::Elect => !stdout.contains("\"kvs\""),
            Tool::Lock => true,
        };
    Ok(Outcome {
        phantom,
        returned_after_seconds,
        key_gone_before_return,
        exit_code,
        stdout,
        stderr,
        error: None,
    })
}

/// The counters of etcd's `/metrics` this measurement reads.
fn metrics(endpoint: &str) -> Result<std::collections::BTreeMap<String, u64>, String> {
    use std::io::Write;
    let mut conn = std::net::TcpStream::connect(endpoint).map_err(|e| format!("metrics: {e}"))?;
    conn.write_all(b"GET /metrics HTTP/1.0\r\nHost: etcd\r\n\r\n")
        .map_err(|e| format!("metrics: {e}"))?;
    let mut body = String::new();
    conn.read_to_string(&mut body)
        .map_err(|e| format!("metrics: {e}"))?;
    let mut out = std::collections::BTreeMap::new();
    for line in body.lines() {
        let (name, value) = match line.rsplit_once(' ') {
            Some(x) => x,
            None => continue,
        };
        let key = if name == "etcd_debugging_mvcc_events_total" {
            "events"
        } else if let Some(rest) = name.strip_prefix("grpc_server_started_total{grpc_method=\"") {
            match rest.split('"').next() {
                Some("Txn") => "txn",
                Some("Range") => "range",
                Some("DeleteRange") => "delete_key",
                Some("Watch") => "watch",
                _ => continue,
            }
        } else {
            continue;
        };
        *out.entry(key.to_string()).or_insert(0) += value.parse::<f64>().unwrap_or(0.0) as u64;
    }
    Ok(out)
}

/// `etcdctl lock` (3.4's `Mutex`) in the baseline herd scenario, measured
/// by the server: gRPC calls by method (as lockstep's request kinds `txn`,
/// `range`, `delete_key`, `watch`) and watch events sent, from etcd's
/// `/metrics` before and after.
pub async fn lock_herd(endpoint: &str, n: u16, hold_ms: u64) -> Result<crate::Totals, String> {
    let mut client = etcd_client::Client::connect([endpoint], None)
        .await
        .map_err(|e| e.to_string())?;
    let name = "/lockstep-herd";
    client
        .delete(name, Some(etcd_client::DeleteOptions::new().with_prefix()))
        .await
        .map_err(|e| e.to_string())?;
    let before = metrics(endpoint)?;
    let started = Instant::now();
    let hold = format!("{:.3}", hold_ms as f64 / 1000.0);
    let children: Vec<Child> = (0..n)
        .map(|_| {
            etcdctl(endpoint, &["lock", name, "sleep", &hold])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run etcdctl: {e}"))
        })
        .collect::<Result<_, _>>()?;
    for mut c in children {
        let status = c.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("etcdctl lock exited with {status}"));
        }
    }
    let wall_seconds = started.elapsed().as_secs_f64();
    // Let the last watch events be counted.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = metrics(endpoint)?;
    let delta = |k: &str| after.get(k).copied().unwrap_or(0) - before.get(k).copied().unwrap_or(0);
    let requests_per_acquisition = ["txn", "range", "delete_key", "watch"]
        .iter()
        .map(|k| (k.to_string(), delta(k) as f64 / n as f64))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    Ok(crate::Totals {
        requests_per_acquisition,
        notifications: delta("events"),
        wall_seconds,
    })
}
