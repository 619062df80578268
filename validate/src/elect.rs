//! etcd's own `Campaign`, through `etcdctl elect` (etcd 3.4's
//! `concurrency.Election`): does the real client return leadership to a
//! candidate whose lease ended while it campaigned (the phantom leader)?
//!
//! 1. Candidate A runs `etcdctl elect NAME a` and leads (its key is there).
//! 2. Candidate B runs `etcdctl elect NAME b` and waits in `waitDeletes`
//!    behind A's key.
//! 3. B's process is stopped (SIGSTOP) and its lease revoked, which deletes
//!    its key as an expiry would (etcdctl's session TTL is 60 s and cannot be
//!    set; revoking is the same store change without the minute's wait).
//! 4. A is interrupted (SIGINT): it resigns, deleting its key.
//! 5. B resumes (SIGCONT). If `Campaign` returns, etcdctl reads B's key and
//!    prints the response (`-w json`: a header and no `kvs`, the key being
//!    gone), then waits on the session until its next keepalive (up to 20 s
//!    later) finds the lease gone ("elect: session expired"). For that while
//!    it is leader with no key: the phantom leader. The experiment stops B
//!    once it has printed.

use serde::Serialize;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NAME: &str = "/lockstep-elect";

/// What the experiment saw.
#[derive(Clone, Debug, Serialize)]
pub struct ElectOutcome {
    /// B's `Campaign` returned leadership after its key was gone.
    pub phantom_leader: bool,
    /// Seconds from B's resumption to its printing that it leads.
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

fn signal(child: &Child, sig: &str) -> Result<(), String> {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .map_err(|e| format!("kill {sig}: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("kill {sig} failed"))
}

/// The election's keys with their leases, oldest first.
async fn keys(client: &mut etcd_client::Client) -> Result<Vec<(String, i64)>, String> {
    let opts = etcd_client::GetOptions::new().with_prefix().with_sort(
        etcd_client::SortTarget::Create,
        etcd_client::SortOrder::Ascend,
    );
    let resp = client
        .get(NAME, Some(opts))
        .await
        .map_err(|e| e.to_string())?;
    Ok(resp
        .kvs()
        .iter()
        .map(|kv| (kv.key_str().unwrap_or("").to_string(), kv.lease()))
        .collect())
}

async fn wait_for_keys(client: &mut etcd_client::Client, n: usize) -> Result<(), String> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if keys(client).await?.len() == n {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!("the election never had {n} key(s)"))
}

fn spawn(endpoint: &str, proposal: &str) -> Result<Child, String> {
    etcdctl(endpoint, &["-w", "json", "elect", NAME, proposal])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run etcdctl: {e}"))
}

/// Collects what `child` prints on stdout as it prints it.
fn collect_stdout(child: &mut Child) -> Arc<Mutex<String>> {
    let out = Arc::new(Mutex::new(String::new()));
    if let Some(mut pipe) = child.stdout.take() {
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
fn finish(mut child: Child, limit: Duration, done: impl Fn() -> bool) -> (Option<i32>, String) {
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

pub async fn phantom_leader(endpoint: &str) -> ElectOutcome {
    match run(endpoint).await {
        Ok(o) => o,
        Err(e) => ElectOutcome {
            phantom_leader: false,
            returned_after_seconds: None,
            key_gone_before_return: false,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(e),
        },
    }
}

async fn run(endpoint: &str) -> Result<ElectOutcome, String> {
    let mut client = etcd_client::Client::connect([endpoint], None)
        .await
        .map_err(|e| e.to_string())?;
    client
        .delete(NAME, Some(etcd_client::DeleteOptions::new().with_prefix()))
        .await
        .map_err(|e| e.to_string())?;

    let mut a = spawn(endpoint, "a")?;
    let _ = collect_stdout(&mut a);
    wait_for_keys(&mut client, 1).await?;
    let mut b = spawn(endpoint, "b")?;
    let printed = collect_stdout(&mut b);
    wait_for_keys(&mut client, 2).await?;
    // Let B's waitDeletes set its watch behind A's key.
    tokio::time::sleep(Duration::from_millis(500)).await;

    signal(&b, "-STOP")?;
    let (_, b_lease) = keys(&mut client).await?[1].clone();
    client
        .lease_revoke(b_lease)
        .await
        .map_err(|e| e.to_string())?;
    signal(&a, "-INT")?;
    let _ = finish(a, Duration::from_secs(5), || false);
    let key_gone_before_return = keys(&mut client).await?.is_empty();
    signal(&b, "-CONT")?;
    let resumed = Instant::now();
    // B's Campaign returning shows as the JSON of its get(key).
    let returned = || printed.lock().unwrap().contains("\"header\"");
    let (exit_code, stderr) = finish(b, Duration::from_secs(10), returned);
    let returned_after_seconds = returned().then(|| resumed.elapsed().as_secs_f64());
    let stdout = printed.lock().unwrap().clone();
    Ok(ElectOutcome {
        phantom_leader: returned_after_seconds.is_some() && !stdout.contains("\"kvs\""),
        returned_after_seconds,
        key_gone_before_return,
        exit_code,
        stdout,
        stderr,
        error: None,
    })
}
