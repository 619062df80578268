//! The tour: what `lockstep` with no arguments (and `lockstep report`) does.
//! Check every recipe, run the shipped scenarios, sweep the herd up to a
//! thousand clients, and write one report: `index.html` and its Markdown
//! twin `report.md`, each result beside its expected outcome, with the
//! charts, the timelines of the split brains and of the queue's lost and
//! duplicated items, and an interactive timeline per run.

use super::charts::HERD_CHARTS;
use super::check::grouped;
use super::herd::{polling_cells, sweep, write_files, Counts};
use super::{default_cfg, UsageError};
use models::checker::{check, CheckOptions, Status};
use models::html::escape as esc;
use models::recipe::App;
use sim::engine::simulate;
use sim::herd::{HerdRow, DEFAULT_CLIENTS, POLLING_MAX_CLIENTS};
use sim::scenario::Scenario;
use sim::timeline::timeline_from_trace;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// The shipped scenarios, built in so the tour runs from anywhere.
pub const SHIPPED: [(&str, &str); 56] = [
    ("healthy", include_str!("../../../scenarios/healthy.toml")),
    (
        "gc-pause-split-brain",
        include_str!("../../../scenarios/gc-pause-split-brain.toml"),
    ),
    (
        "gc-pause-split-brain-fenced",
        include_str!("../../../scenarios/gc-pause-split-brain-fenced.toml"),
    ),
    (
        "partition-past-session",
        include_str!("../../../scenarios/partition-past-session.toml"),
    ),
    (
        "orphan-create",
        include_str!("../../../scenarios/orphan-create.toml"),
    ),
    (
        "crash-storm",
        include_str!("../../../scenarios/crash-storm.toml"),
    ),
    (
        "etcd-lease-pause",
        include_str!("../../../scenarios/etcd-lease-pause.toml"),
    ),
    (
        "election-gc-pause",
        include_str!("../../../scenarios/election-gc-pause.toml"),
    ),
    (
        "election-gc-pause-fenced",
        include_str!("../../../scenarios/election-gc-pause-fenced.toml"),
    ),
    (
        "etcd-campaign-phantom-leader",
        include_str!("../../../scenarios/etcd-campaign-phantom-leader.toml"),
    ),
    (
        "etcd-campaign-phantom-leader-checked",
        include_str!("../../../scenarios/etcd-campaign-phantom-leader-checked.toml"),
    ),
    (
        "curator-reconnect-double-leader",
        include_str!("../../../scenarios/curator-reconnect-double-leader.toml"),
    ),
    (
        "curator-reconnect-double-leader-fixed",
        include_str!("../../../scenarios/curator-reconnect-double-leader-fixed.toml"),
    ),
    (
        "etcd-mutex-11456",
        include_str!("../../../scenarios/etcd-mutex-11456.toml"),
    ),
    (
        "etcd-mutex-11456-fixed",
        include_str!("../../../scenarios/etcd-mutex-11456-fixed.toml"),
    ),
    (
        "kazoo-oblivious-pause",
        include_str!("../../../scenarios/kazoo-oblivious-pause.toml"),
    ),
    (
        "barrier-last-entrant-crash",
        include_str!("../../../scenarios/barrier-last-entrant-crash.toml"),
    ),
    (
        "queue-lost-delete-reply",
        include_str!("../../../scenarios/queue-lost-delete-reply.toml"),
    ),
    (
        "queue-consumer-crash",
        include_str!("../../../scenarios/queue-consumer-crash.toml"),
    ),
    (
        "semaphore-gc-pause",
        include_str!("../../../scenarios/semaphore-gc-pause.toml"),
    ),
    (
        "rwlock-orphan-write",
        include_str!("../../../scenarios/rwlock-orphan-write.toml"),
    ),
    (
        "redis-gc-pause",
        include_str!("../../../scenarios/redis-gc-pause.toml"),
    ),
    (
        "redis-gc-pause-fenced",
        include_str!("../../../scenarios/redis-gc-pause-fenced.toml"),
    ),
    (
        "redis-setnx-crash",
        include_str!("../../../scenarios/redis-setnx-crash.toml"),
    ),
    (
        "redis-setnx-crash-atomic",
        include_str!("../../../scenarios/redis-setnx-crash-atomic.toml"),
    ),
    (
        "redlock-restart-without-fsync",
        include_str!("../../../scenarios/redlock-restart-without-fsync.toml"),
    ),
    (
        "redlock-restart-fsync-always",
        include_str!("../../../scenarios/redlock-restart-fsync-always.toml"),
    ),
    (
        "redlock-clock-jump",
        include_str!("../../../scenarios/redlock-clock-jump.toml"),
    ),
    (
        "redlock-clock-jump-fenced",
        include_str!("../../../scenarios/redlock-clock-jump-fenced.toml"),
    ),
    (
        "redisson-watchdog-after-unlock",
        include_str!("../../../scenarios/redisson-watchdog-after-unlock.toml"),
    ),
    (
        "redisson-watchdog-after-unlock-fixed",
        include_str!("../../../scenarios/redisson-watchdog-after-unlock-fixed.toml"),
    ),
    (
        "redis-failover-lost-lock",
        include_str!("../../../scenarios/redis-failover-lost-lock.toml"),
    ),
    (
        "redis-failover-lost-lock-wait",
        include_str!("../../../scenarios/redis-failover-lost-lock-wait.toml"),
    ),
    (
        "consul-partition-old-holder",
        include_str!("../../../scenarios/consul-partition-old-holder.toml"),
    ),
    (
        "consul-partition-old-holder-fenced",
        include_str!("../../../scenarios/consul-partition-old-holder-fenced.toml"),
    ),
    (
        "consul-lock-delay-protects",
        include_str!("../../../scenarios/consul-lock-delay-protects.toml"),
    ),
    (
        "consul-lock-delay-0",
        include_str!("../../../scenarios/consul-lock-delay-0.toml"),
    ),
    (
        "consul-leader-failover-forgets-lock-delay",
        include_str!("../../../scenarios/consul-leader-failover-forgets-lock-delay.toml"),
    ),
    (
        "consul-leader-failover-forgets-lock-delay-fenced",
        include_str!("../../../scenarios/consul-leader-failover-forgets-lock-delay-fenced.toml"),
    ),
    (
        "consul-session-reaped-late",
        include_str!("../../../scenarios/consul-session-reaped-late.toml"),
    ),
    (
        "consul-session-reaped-late-short-pause",
        include_str!("../../../scenarios/consul-session-reaped-late-short-pause.toml"),
    ),
    (
        "curator-604-stale-view-double-lock",
        include_str!("../../../scenarios/curator-604-stale-view-double-lock.toml"),
    ),
    (
        "curator-604-global-sessions",
        include_str!("../../../scenarios/curator-604-global-sessions.toml"),
    ),
    (
        "stale-read-two-leaders",
        include_str!("../../../scenarios/stale-read-two-leaders.toml"),
    ),
    (
        "stale-read-global-sessions",
        include_str!("../../../scenarios/stale-read-global-sessions.toml"),
    ),
    (
        "isolated-follower-keeps-holder",
        include_str!("../../../scenarios/isolated-follower-keeps-holder.toml"),
    ),
    (
        "isolated-follower-short-sync-limit",
        include_str!("../../../scenarios/isolated-follower-short-sync-limit.toml"),
    ),
    (
        "muted-follower-tells-holder",
        include_str!("../../../scenarios/muted-follower-tells-holder.toml"),
    ),
    (
        "sync-not-a-quorum-op",
        include_str!("../../../scenarios/sync-not-a-quorum-op.toml"),
    ),
    (
        "sync-is-current-without-failover",
        include_str!("../../../scenarios/sync-is-current-without-failover.toml"),
    ),
    (
        "etcd-failover-lease-outlived",
        include_str!("../../../scenarios/etcd-failover-lease-outlived.toml"),
    ),
    (
        "etcd-failover-lease-extended",
        include_str!("../../../scenarios/etcd-failover-lease-extended.toml"),
    ),
    (
        "etcd-serializable-observe",
        include_str!("../../../scenarios/etcd-serializable-observe.toml"),
    ),
    (
        "etcd-linearizable-observe",
        include_str!("../../../scenarios/etcd-linearizable-observe.toml"),
    ),
    (
        "etcd-isolated-member-keeps-holder",
        include_str!("../../../scenarios/etcd-isolated-member-keeps-holder.toml"),
    ),
    (
        "etcd-isolated-member-short-cut",
        include_str!("../../../scenarios/etcd-isolated-member-short-cut.toml"),
    ),
];

/// What the README ("What the checker finds") says the tour's check — 3
/// clients (`Recipe::checked_clients`), 1 round, 1 crash, fencing on where clients write, the naive
/// policy — finds for each
/// recipe at its default variant: the properties it violates; every other
/// property holds. `herd_bound` falls to the recipes whose waiters all
/// watch one node (or the children of one); a crash breaks nothing else
/// with fencing on.
const CHECK_EXPECT: [(&str, &[&str]); 20] = [
    ("unfair-create", &["herd_bound"]),
    ("fair-predecessor", &[]),
    ("etcd-revision", &[]),
    ("children-watch", &["herd_bound"]),
    ("lowest-watch", &["herd_bound"]),
    ("zk-unfair-election", &["herd_bound"]),
    ("zk-fair-election", &[]),
    ("etcd-election", &[]),
    // A member that crashes leaves the group forever incomplete.
    ("zk-barrier", &["all_pass"]),
    ("zk-double-barrier", &["all_pass"]),
    // A consumer that crashes between its delete and its processing loses
    // the item.
    ("zk-fifo-queue", &["no_lost_item"]),
    // A crashed holder's node (a writer's, a lease) goes with its session.
    ("zk-rwlock", &[]),
    ("zk-semaphore", &[]),
    // A client that crashes between SETNX and EXPIRE leaves a key that
    // never expires.
    ("redis-setnx", &["progress"]),
    // A crashed holder's key expires with its TTL.
    ("redis-token", &[]),
    // Three contenders can split the masters' votes, release and meet
    // again for ever: the spec's random retry delay makes it unlikely,
    // not impossible (checked on three masters).
    ("redlock", &["progress"]),
    // api.Lock's waiters all block on the one key: a release (or a
    // crashed holder's session reaped) answers them all. A crashed
    // holder's key is released with its session, after the lock-delay.
    ("consul-lock", &["herd_bound"]),
    ("consul-lock-cli", &["herd_bound"]),
    // Every follower blocks on the leader's key: the herd again.
    ("consul-election", &["herd_bound"]),
    // Checked at 2 clients (Recipe::checked_clients): 1 permit, so the one
    // waiter is all a release wakes; a crashed holder's slot is freed with
    // its session.
    ("consul-semaphore", &[]),
];

/// The shipped scenarios whose holders timeline the report draws: the
/// split brains of the locks and elections (a fenced twin beside its
/// unfenced run), and the queue's lost and duplicated items.
const TIMELINES: [&str; 12] = [
    "gc-pause-split-brain",
    "gc-pause-split-brain-fenced",
    "redis-gc-pause",
    "redis-gc-pause-fenced",
    "partition-past-session",
    "election-gc-pause",
    "etcd-campaign-phantom-leader",
    "curator-reconnect-double-leader",
    "curator-604-stale-view-double-lock",
    "isolated-follower-keeps-holder",
    "queue-lost-delete-reply",
    "queue-consumer-crash",
];

/// Whether a result is what was expected: exactly the expected properties
/// violated, no more and no fewer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    AsExpected,
    Differs,
    NoExpectation,
}

fn verdict(expected: Option<&[String]>, violated: &[String]) -> Verdict {
    match expected {
        None => Verdict::NoExpectation,
        Some(e) => {
            let mut e = e.to_vec();
            let mut v = violated.to_vec();
            e.sort();
            e.dedup();
            v.sort();
            v.dedup();
            if e == v {
                Verdict::AsExpected
            } else {
                Verdict::Differs
            }
        }
    }
}

/// One table cell: its text (as the terminal shows it), a marker that
/// says in a symbol what the colour says, a CSS class and a link.
#[derive(Clone, Debug, Default)]
struct Cell {
    text: String,
    mark: &'static str,
    class: &'static str,
    link: Option<String>,
}

impl Cell {
    fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            ..Cell::default()
        }
    }

    /// A property's status as the checker or the run gives it.
    fn status(violated: bool) -> Cell {
        if violated {
            Cell {
                text: "VIOLATED".into(),
                mark: "✗",
                class: "violated",
                link: None,
            }
        } else {
            Cell::plain("holds")
        }
    }

    fn verdict(v: Verdict) -> Cell {
        match v {
            Verdict::AsExpected => Cell {
                text: "yes".into(),
                mark: "✓",
                class: "ok",
                link: None,
            },
            Verdict::Differs => Cell {
                text: "NO".into(),
                mark: "⚠",
                class: "mismatch",
                link: None,
            },
            Verdict::NoExpectation => Cell {
                text: "no expectation".into(),
                mark: "?",
                class: "unknown",
                link: None,
            },
        }
    }

    /// A hash: one long token, which the page may break anywhere rather
    /// than widen its table for.
    fn hash(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            class: "hash",
            ..Cell::default()
        }
    }

    fn linked(mut self, href: impl Into<String>) -> Cell {
        self.link = Some(href.into());
        self
    }

    /// The text with its marker, for the page and the Markdown.
    fn marked(&self) -> String {
        if self.mark.is_empty() {
            self.text.clone()
        } else {
            format!("{} {}", self.mark, self.text)
        }
    }

    /// The cell under the column `label`, which a narrow screen shows
    /// beside it when the table's rows are stacked. The marker and the
    /// text stay on one line.
    fn html(&self, label: &str) -> String {
        let text = if self.mark.is_empty() {
            esc(&self.text)
        } else {
            format!("{}&nbsp;{}", self.mark, esc(&self.text))
        };
        let body = match &self.link {
            Some(href) => format!("<a href=\"{}\">{text}</a>", esc(href)),
            None => text,
        };
        let class = if self.class.is_empty() {
            String::new()
        } else {
            format!(" class=\"{}\"", self.class)
        };
        format!("<td data-label=\"{}\"{class}>{body}</td>", esc(label))
    }

    fn markdown(&self) -> String {
        let text = self.marked().replace('|', "\\|");
        let text = match &self.link {
            Some(href) => format!("[{text}]({href})"),
            None => text,
        };
        if matches!(self.class, "violated" | "mismatch") {
            format!("**{text}**")
        } else {
            text
        }
    }
}

/// A table row; a row whose result differs from what was expected is
/// highlighted as a whole.
struct Row {
    cells: Vec<Cell>,
    differs: bool,
}

impl Row {
    fn plain(&self) -> Vec<String> {
        self.cells.iter().map(|c| c.text.clone()).collect()
    }
}

struct Section {
    markdown: String,
    html: String,
}

impl Section {
    fn paragraph(text: &str, html: String) -> Section {
        Section {
            markdown: format!("{text}\n"),
            html: format!("<p>{html}</p>\n"),
        }
    }
}

/// The herd's polling rows (the Redis recipes): no notifications, so
/// their polls and requests per acquisition, beside the closed form.
fn polling_rows(rows: &[&HerdRow]) -> ([&'static str; 6], Vec<Row>) {
    let header = [
        "recipe",
        "clients",
        "retry delay (ms)",
        "polls / acquisition",
        "requests / acquisition",
        "measured / closed form",
    ];
    let rows = rows
        .iter()
        .map(|r| {
            let p = polling_cells(r, 2);
            Row {
                cells: vec![
                    Cell::plain(r.recipe.clone()),
                    Cell::plain(r.clients.to_string()),
                    Cell::plain(p.delay),
                    Cell::plain(p.polls),
                    Cell::plain(format!("{:.2}", r.requests_per_acquisition("all"))),
                    Cell::plain(p.ratio),
                ],
                differs: false,
            }
        })
        .collect();
    (header, rows)
}

/// The most columns a table keeps as a table on a narrow screen: the herd
/// table's six short numbers fit 800 pixels, the checks' eleven do not.
const STACK_ABOVE_COLUMNS: usize = 6;

fn table(header: &[&str], rows: &[Row]) -> Section {
    let mut md = format!(
        "| {} |\n|{}|\n",
        header.join(" | "),
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    // A table too wide for a narrow screen stacks its rows there (the
    // STYLE's media query), each cell beside its column's name.
    let class = if header.len() > STACK_ABOVE_COLUMNS {
        " class=\"stack\""
    } else {
        ""
    };
    let mut html = format!("<div class=\"scroll\"><table{class}><thead><tr>");
    for h in header {
        // Property names break after their underscores, not mid-word.
        let _ = write!(html, "<th>{}</th>", esc(h).replace('_', "_<wbr>"));
    }
    html.push_str("</tr></thead><tbody>\n");
    for r in rows {
        let cells: Vec<String> = r.cells.iter().map(Cell::markdown).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
        html.push_str(if r.differs {
            "<tr class=\"differs\">"
        } else {
            "<tr>"
        });
        for (c, h) in r.cells.iter().zip(header) {
            html.push_str(&c.html(h));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    Section { markdown: md, html }
}

/// An inline SVG figure (a PNG in the Markdown) with its caption and links.
fn figure(
    dir: &Path,
    base: &str,
    caption: &str,
    id: Option<&str>,
    links: &[(&str, String)],
) -> Result<Section, UsageError> {
    let svg = std::fs::read_to_string(dir.join(format!("{base}.svg")))
        .map_err(|e| UsageError(format!("cannot read {base}.svg: {e}")))?;
    let svg = svg.trim_start_matches(|c| c != '<').to_string();
    let mut all: Vec<(&str, String)> = links.to_vec();
    all.push(("PNG", format!("{base}.png")));
    all.push(("SVG", format!("{base}.svg")));
    let md_links: Vec<String> = all.iter().map(|(t, h)| format!("[{t}]({h})")).collect();
    let html_links: Vec<String> = all
        .iter()
        .map(|(t, h)| format!("<a href=\"{}\">{}</a>", esc(h), esc(t)))
        .collect();
    let anchor = id
        .map(|i| format!("<a id=\"{i}\"></a>\n"))
        .unwrap_or_default();
    Ok(Section {
        markdown: format!(
            "{anchor}![{caption}]({base}.png)\n\n*{caption}* — {}\n",
            md_links.join(" · ")
        ),
        html: format!(
            "<figure{}>{svg}<figcaption>{} — {}</figcaption></figure>\n",
            id.map(|i| format!(" id=\"{i}\"")).unwrap_or_default(),
            esc(caption),
            html_links.join(" · ")
        ),
    })
}

/// A report section: its anchor, title, parts, and entries under it in
/// the table of contents.
struct Part {
    id: String,
    title: String,
    body: Vec<Section>,
    sub: Vec<(String, String)>,
}

fn part(id: &str, title: impl Into<String>, body: Vec<Section>) -> Part {
    Part {
        id: id.to_string(),
        title: title.into(),
        body,
        sub: Vec::new(),
    }
}

/// A property list, or "nothing".
fn list(ps: &[String]) -> String {
    if ps.is_empty() {
        "nothing".into()
    } else {
        ps.join(", ")
    }
}

/// The command line that is running, as the user would type it.
fn command_line() -> String {
    let mut words = vec!["lockstep".to_string()];
    for a in std::env::args_os().skip(1) {
        let a = a.to_string_lossy().into_owned();
        if a.is_empty()
            || a.chars()
                .any(|c| c.is_whitespace() || "'\"$`\\*?;&|<>()".contains(c))
        {
            words.push(format!("'{}'", a.replace('\'', "'\\''")));
        } else {
            words.push(a);
        }
    }
    words.join(" ")
}

/// The date and time now, in UTC, for the report's header only (nothing
/// the runs compute or trace reads the clock).
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// `secs` after the Unix epoch as `YYYY-MM-DD HH:MM UTC` (proleptic
/// Gregorian calendar, counted in 400-year eras).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// What differed from what was expected, for the summary at the top.
struct Tally {
    checked: usize,
    differs: Vec<(String, String)>,
}

/// The expected outcomes of the tour's checks.
fn check_expectation(recipe: &str) -> Option<Vec<String>> {
    CHECK_EXPECT
        .iter()
        .find(|(r, _)| *r == recipe)
        .map(|(_, ps)| ps.iter().map(|p| p.to_string()).collect())
}

/// A shipped scenario's expected outcome: its file's `expect` (every
/// shipped file has one, which a test checks).
fn scenario_expectation(s: &Scenario) -> Option<Vec<String>> {
    s.expect
        .as_ref()
        .map(|e| e.iter().map(|p| p.name().to_string()).collect())
}

const STYLE: &str = "\
body{font-family:sans-serif;max-width:1200px;margin:0 auto;padding:1em;line-height:1.4;color:#111}\
h1{margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
.meta{color:#444;margin-top:0}.meta code{word-break:break-all}\
.summary{padding:.6em 1em;border-radius:4px;border:2px solid}\
.summary.ok{background:#e6f4ea;border-color:#2e7d32}\
.summary.differs{background:#fdecea;border-color:#c62828}\
nav{background:#f6f6f6;padding:.5em 1em;border-radius:4px}nav ol{margin:.3em 0}\
.scroll{overflow-x:auto;max-width:100%}\
table{border-collapse:collapse;margin:.5em 0;font-size:14px}\
td,th{border:1px solid #bbb;padding:4px 6px;text-align:right}\
th{background:#f0f0f0;vertical-align:bottom}td:first-child,th:first-child{text-align:left}\
td.hash{font-family:monospace;overflow-wrap:anywhere;min-width:8ch}\
td.violated{color:#b71c1c;font-weight:bold}\
td.ok{color:#1b5e20}\
td.mismatch{color:#fff;background:#c62828;font-weight:bold}\
td.unknown{color:#6d4c00}\
tr.differs td{background:#fdecea}tr.differs td.mismatch{background:#c62828}\
figure{margin:1em 0}figure svg,img{max-width:100%;height:auto}\
figcaption{font-size:14px;color:#333}\
@media (max-width:800px){body{padding:.5em;font-size:15px}td,th{padding:3px 5px;font-size:13px}\
table.stack,.stack tbody,.stack tr,.stack td{display:block}.stack thead{display:none}\
.stack tr{border:1px solid #bbb;margin:.6em 0}\
.stack td{display:flex;justify-content:space-between;gap:1em;border:0;border-bottom:1px solid #eee}\
.stack td::before{content:attr(data-label);text-align:left;font-weight:bold;color:#333}\
.stack td:first-child{background:#f0f0f0;font-weight:bold}.stack td.hash{min-width:0}}";

pub fn run(out: &Path, max_clients: u16) -> Result<ExitCode, UsageError> {
    let started = Instant::now();
    super::writable_dir(out, "--out")?;
    let mut parts: Vec<Part> = Vec::new();
    let mut tally = Tally {
        checked: 0,
        differs: Vec::new(),
    };

    // 1. Model checking, one table per application (their properties differ).
    eprintln!("lockstep: model-checking every recipe …");
    for app in [
        App::Lock,
        App::Election,
        App::Barrier,
        App::SharedLock,
        App::Semaphore,
    ] {
        let mut rows: Vec<Row> = Vec::new();
        let mut names = Vec::new();
        for recipe in models::recipes::defaults() {
            if recipe.app() != app {
                continue;
            }
            let cfg = default_cfg(recipe.clone());
            let r = check(&cfg.clone().into_model()?, CheckOptions::default())
                .map_err(|e| UsageError(format!("{recipe}: {e}")))?;
            names = r.properties.iter().map(|p| p.name.name()).collect();
            let violated: Vec<String> = r
                .properties
                .iter()
                .filter(|p| p.status == Status::Violated)
                .map(|p| p.name.to_string())
                .collect();
            let unknown = r.properties.iter().any(|p| p.status == Status::Unknown);
            let expected = check_expectation(recipe.name());
            let mut v = verdict(expected.as_deref(), &violated);
            if unknown && v == Verdict::AsExpected {
                // A property the search could not settle is not a result.
                v = Verdict::Differs;
            }
            let name = match cfg.clients {
                3 => recipe.name().to_string(),
                n => format!("{} ({n} clients)", recipe.name()),
            };
            let mut cells = vec![
                Cell::plain(name),
                Cell::plain(grouped(r.unique_states)),
                Cell::plain(format!("{:.2}", r.seconds)),
            ];
            cells.extend(r.properties.iter().map(|p| match p.status {
                Status::Holds => Cell::status(false),
                Status::Violated => Cell::status(true),
                Status::Unknown => Cell {
                    text: "unknown".into(),
                    mark: "?",
                    class: "unknown",
                    link: None,
                },
            }));
            cells.push(Cell::plain(
                expected.as_deref().map_or("—".to_string(), list),
            ));
            cells.push(Cell::verdict(v));
            tally.checked += usize::from(v != Verdict::NoExpectation);
            if v == Verdict::Differs {
                tally.differs.push((
                    format!("check {}", recipe.name()),
                    format!("checks-{}", app.name()),
                ));
            }
            rows.push(Row {
                cells,
                differs: v == Verdict::Differs,
            });
        }
        let mut header = vec!["recipe", "unique states", "seconds"];
        header.extend(names.iter().copied());
        header.extend(["expected violated", "as expected"]);
        let fencing = if app.holders_write() {
            "fencing on"
        } else {
            "no writes to fence"
        };
        let title = format!(
            "Model checking, {app} recipes (3 clients unless the row says, 1 round, 1 crash, {fencing}, naive policy)"
        );
        println!("{title}\n");
        let plain: Vec<Vec<String>> = rows.iter().map(Row::plain).collect();
        print!("{}", reports::table::render(&header, &plain));
        println!();
        parts.push(part(
            &format!("checks-{}", app.name()),
            title,
            vec![
                table(&header, &rows),
                Section::paragraph(
                    "Expected: what the README's \"What the checker finds\" says of this configuration; \
                     every property not listed holds. *As expected* means exactly the listed properties \
                     are violated.",
                    "Expected: what the README's “What the checker finds” says of this configuration; \
                     every property not listed holds. <em>As expected</em> means exactly the listed \
                     properties are violated."
                        .into(),
                ),
            ],
        ));
    }

    // 2. The shipped scenarios.
    eprintln!("lockstep: running the shipped scenarios …");
    let mut rows: Vec<Row> = Vec::new();
    let mut figures = Vec::new();
    let mut sub = Vec::new();
    for (name, text) in SHIPPED {
        let s = Scenario::parse(text, &format!("scenarios/{name}.toml"), name)
            .map_err(|e| UsageError(e.to_string()))?;
        let o = simulate(&s, s.seed, true);
        let mut props: Vec<String> = o
            .violations
            .iter()
            .map(|v| v.property.name().to_string())
            .collect();
        props.sort_unstable();
        props.dedup();
        let fired: Vec<String> = o
            .faults_fired()
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        let expectation = scenario_expectation(&s);
        let v = verdict(expectation.as_deref(), &props);
        tally.checked += usize::from(v != Verdict::NoExpectation);
        if v == Verdict::Differs {
            tally
                .differs
                .push((format!("scenario {name}"), "scenarios".into()));
        }
        // The interactive timeline of this run, beside the report.
        let page = format!("{name}-seed-{}.html", s.seed);
        let title = format!("{name} (seed {}): {}", s.seed, s.recipe.app().holders());
        std::fs::write(out.join(&page), sim::html::timeline_page(&title, &o.trace))
            .map_err(|e| UsageError(format!("cannot write {}: {e}", out.join(&page).display())))?;
        let drawn = TIMELINES.contains(&name);
        let mut scenario_cell = Cell::plain(name);
        if drawn {
            scenario_cell = scenario_cell.linked(format!("#timeline-{name}"));
        }
        let expected_cell = Cell::plain(expectation.as_ref().map_or("—".to_string(), |e| list(e)));
        let violated_cell = if props.is_empty() {
            Cell::plain("nothing")
        } else {
            Cell {
                text: props.join(", "),
                mark: "✗",
                class: "violated",
                link: None,
            }
        };
        rows.push(Row {
            cells: vec![
                scenario_cell,
                Cell::plain(s.seed.to_string()),
                Cell::plain(if fired.is_empty() {
                    "none".into()
                } else {
                    fired.join(", ")
                }),
                Cell::plain(o.metrics.acquisitions.to_string()),
                expected_cell,
                violated_cell,
                Cell::verdict(v),
                Cell::hash(o.trace_hash.clone().unwrap_or_default()),
                Cell::plain("interactive").linked(page.clone()),
            ],
            differs: v == Verdict::Differs,
        });
        if drawn {
            let t = timeline_from_trace(&title, &o.trace);
            let base = format!("timeline-{name}");
            reports::timeline::timeline(&t, &out.join(&base))
                .map_err(|e| UsageError(format!("cannot draw a timeline: {e}")))?;
            let id = format!("timeline-{name}");
            figures.push(figure(
                out,
                &base,
                &format!(
                    "{name} (seed {}): {} — {} per client; red exactly where two \
                     overlap; faults shaded for their duration (▲ where they are instants); ◆ session \
                     expired; writes ✓ accepted, ✗ refused; violations marked on the clients they name",
                    s.seed,
                    s.recipe.app().holders(),
                    t.holds_key,
                ),
                Some(&id),
                &[("interactive timeline", page)],
            )?);
            sub.push((id, name.to_string()));
        }
    }
    let header = [
        "scenario",
        "seed",
        "faults fired",
        "acquisitions",
        "expected violated",
        "violated",
        "as expected",
        "trace hash",
        "timeline",
    ];
    println!("\nShipped scenarios\n");
    let plain: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.plain()[..header.len() - 1].to_vec())
        .collect();
    print!(
        "{}",
        reports::table::render(&header[..header.len() - 1], &plain)
    );
    parts.push(part(
        "scenarios",
        "Shipped scenarios (simulator)",
        vec![
            table(&header, &rows),
            Section::paragraph(
                "Expected: the scenario file's `expect` (the violations at its own seed). *As expected* means exactly those properties are \
                 violated: a violation more, or one missing, is a difference to look at. Each run's \
                 interactive timeline (hover for the trace line, zoom) is linked in the last column; \
                 `lockstep run scenarios/NAME.toml` reproduces a row byte for byte (the trace hash).",
                "Expected: the scenario file's <code>expect</code> (the violations at its own seed). \
                 <em>As expected</em> means exactly \
                 those properties are violated: a violation more, or one missing, is a difference to look \
                 at. Each run's interactive timeline (hover for the trace line, zoom) is linked in the last \
                 column; <code>lockstep run scenarios/NAME.toml</code> reproduces a row byte for byte (the \
                 trace hash)."
                    .into(),
            ),
        ],
    ));
    let mut timelines = part(
        "timelines",
        "Timelines: split brains, and a queue's lost and duplicated items",
        figures,
    );
    timelines.sub = sub;
    parts.push(timelines);

    // 3. The herd sweep.
    let clients: Vec<u16> = DEFAULT_CLIENTS
        .iter()
        .copied()
        .filter(|&n| n <= max_clients)
        .collect();
    eprintln!("lockstep: herd sweep up to {max_clients} clients …");
    let clients = Counts::Default(clients);
    let herd: Vec<HerdRow> = sweep(&sim::herd::swept_recipes(), &clients, None, 1, false)?;
    // herd.csv, herd.json and the charts, drawn once.
    write_files(out, &herd, 1, &clients)?;
    let (polling, watching): (Vec<&HerdRow>, Vec<&HerdRow>) =
        herd.iter().partition(|r| r.polling.is_some());
    let rows: Vec<Row> = watching
        .iter()
        .map(|r| Row {
            cells: vec![
                Cell::plain(r.recipe.clone()),
                Cell::plain(r.clients.to_string()),
                Cell::plain(format!("{:.2}", r.notifications_per_release_mean())),
                Cell::plain(
                    r.notifications_per_release
                        .iter()
                        .max()
                        .copied()
                        .unwrap_or(0)
                        .to_string(),
                ),
                Cell::plain(format!("{:.2}", r.requests_per_acquisition("all"))),
                Cell::plain(match r.handoff_us.p50_p99() {
                    Some((p50, _)) => format!("{:.1}", p50 as f64 / 1000.0),
                    None => "-".to_string(),
                }),
            ],
            differs: false,
        })
        .collect();
    let header = [
        "recipe",
        "clients",
        "notifications / release",
        "max in one release",
        "requests / acquisition",
        "hand-off p50 (ms)",
    ];
    println!("\nHerd sweep (baseline)\n");
    let wide: Vec<Vec<String>> = rows
        .iter()
        .map(Row::plain)
        .filter(|r| r[1] == max_clients.to_string() || r[1] == "10")
        .collect();
    print!("{}", reports::table::render(&header, &wide));
    let (polling_header, polling_rows) = polling_rows(&polling);
    println!("\nPolling (Redis: no watches)\n");
    let wide: Vec<Vec<String>> = polling_rows
        .iter()
        .map(Row::plain)
        .filter(|r| r[1] == max_clients.min(POLLING_MAX_CLIENTS).to_string() || r[1] == "10")
        .collect();
    print!("{}", reports::table::render(&polling_header, &wide));
    let captions = [
        "Watch notifications per release vs clients (log–log; ticks at the client counts measured)",
        "Store requests per acquisition vs clients, the recipes that watch and those that poll (log–log)",
    ];
    let mut body = Vec::new();
    for (base, caption) in HERD_CHARTS.iter().zip(captions) {
        body.push(figure(out, base, caption, None, &[])?);
    }
    body.push(table(&header, &rows));
    let pollers = format!(
        "The Redis recipes have no watches: a waiter sleeps its recipe's retry delay and tries \
         again, so their rows count polls and store requests per acquisition, beside the closed \
         form (docs/herd.md), to {POLLING_MAX_CLIENTS} clients at most."
    );
    body.push(Section::paragraph(&pollers, pollers.clone()));
    body.push(table(&polling_header, &polling_rows));
    body.push(Section::paragraph(
        "The rows as data: [herd.csv](herd.csv), [herd.json](herd.json).",
        "The rows as data: <a href=\"herd.csv\">herd.csv</a>, <a href=\"herd.json\">herd.json</a>."
            .into(),
    ));
    parts.push(part(
        "herd",
        "Herd effect (baseline: N clients request at once, one round, no faults)",
        body,
    ));

    // 4. Cross-validation, when `validate/run.sh` has written it here.
    let validation = out.join("validation").join("validation.md");
    if validation.exists() {
        parts.push(part(
            "validation",
            "Model vs real servers",
            vec![Section::paragraph(
                "See [validation/validation.md](validation/validation.md) (written by `validate/run.sh`).",
                "See <a href=\"validation/validation.md\">validation/validation.md</a> (written by \
                 <code>validate/run.sh</code>)."
                    .into(),
            )],
        ));
    }

    // 5. The page and its twin.
    let (md, html) = page(&parts, &tally, started.elapsed().as_secs_f64());
    let write = |name: &str, body: &str| {
        let path = out.join(name);
        std::fs::write(&path, body)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))
    };
    write("report.md", &md)?;
    write("index.html", &html)?;
    if tally.differs.is_empty() {
        println!(
            "\nevery result with an expectation ({}) is as expected",
            tally.checked
        );
    } else {
        let what: Vec<&str> = tally.differs.iter().map(|d| d.0.as_str()).collect();
        println!(
            "\n{} of {} results differ from what is expected: {}",
            what.len(),
            tally.checked,
            what.join(", ")
        );
    }
    println!(
        "\nreport: {} (and report.md), written in {:.1} s",
        out.join("index.html").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// The Markdown and the HTML of the report.
fn page(parts: &[Part], tally: &Tally, seconds: f64) -> (String, String) {
    let version = env!("CARGO_PKG_VERSION");
    let date = utc_now();
    let command = command_line();
    let mut md = format!(
        "# lockstep report\n\nlockstep {version} · written {date} · command: `{command}` · {seconds:.1} s\n\n"
    );
    let mut html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>lockstep report</title><style>{STYLE}</style></head><body>\n\
         <header><h1>lockstep report</h1><p class=\"meta\">lockstep <strong>{version}</strong> · \
         written {date} · command: <code>{}</code> · {seconds:.1} s</p></header>\n",
        esc(&command)
    );
    // The summary: is anything not as expected?
    if tally.differs.is_empty() {
        let _ = writeln!(
            md,
            "**✓ All {} results with an expectation are as expected.** Violations marked ✗ are \
             the documented findings.\n",
            tally.checked
        );
        let _ = writeln!(
            html,
            "<p class=\"summary ok\">✓ All {} results with an expectation are as expected. \
             Violations marked ✗ are the documented findings.</p>",
            tally.checked
        );
    } else {
        let md_list: Vec<String> = tally
            .differs
            .iter()
            .map(|(w, id)| format!("[{w}](#{id})"))
            .collect();
        let html_list: Vec<String> = tally
            .differs
            .iter()
            .map(|(w, id)| format!("<a href=\"#{id}\">{}</a>", esc(w)))
            .collect();
        let _ = writeln!(
            md,
            "**⚠ {} of {} results differ from what is expected:** {}\n",
            tally.differs.len(),
            tally.checked,
            md_list.join(", ")
        );
        let _ = writeln!(
            html,
            "<p class=\"summary differs\">⚠ {} of {} results differ from what is expected: {}</p>",
            tally.differs.len(),
            tally.checked,
            html_list.join(", ")
        );
    }
    md.push_str("## Contents\n\n");
    html.push_str("<nav><strong>Contents</strong><ol>\n");
    for p in parts {
        let _ = writeln!(md, "1. [{}](#{})", p.title, p.id);
        let _ = write!(html, "<li><a href=\"#{}\">{}</a>", p.id, esc(&p.title));
        if !p.sub.is_empty() {
            html.push_str("<ol>");
            for (id, t) in &p.sub {
                let _ = writeln!(md, "   - [{t}](#{id})");
                let _ = write!(html, "<li><a href=\"#{id}\">{}</a></li>", esc(t));
            }
            html.push_str("</ol>");
        }
        html.push_str("</li>\n");
    }
    md.push('\n');
    html.push_str("</ol></nav>\n");
    for p in parts {
        let _ = write!(md, "<a id=\"{}\"></a>\n\n## {}\n\n", p.id, p.title);
        let _ = writeln!(html, "<section><h2 id=\"{}\">{}</h2>", p.id, esc(&p.title));
        for s in &p.body {
            md.push_str(&s.markdown);
            md.push('\n');
            html.push_str(&s.html);
        }
        html.push_str("</section>\n");
    }
    html.push_str("</body></html>\n");
    (md, html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_763_907_360), "2025-11-23 14:16 UTC");
    }

    #[test]
    fn a_result_is_as_expected_only_when_exactly_the_expected_properties_fall() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let e = s(&["mutual_exclusion"]);
        assert_eq!(
            verdict(Some(&e), &s(&["mutual_exclusion"])),
            Verdict::AsExpected
        );
        assert_eq!(
            verdict(Some(&e), &s(&["mutual_exclusion", "resource_exclusion"])),
            Verdict::Differs
        );
        assert_eq!(verdict(Some(&e), &[]), Verdict::Differs);
        assert_eq!(verdict(None, &[]), Verdict::NoExpectation);
    }

    #[test]
    fn a_difference_is_marked_in_text_and_by_class() {
        let rows = [Row {
            cells: vec![
                Cell::plain("x"),
                Cell::status(true),
                Cell::verdict(Verdict::Differs),
            ],
            differs: true,
        }];
        let t = table(&["what", "mutual_exclusion", "as expected"], &rows);
        assert!(t.html.contains("<tr class=\"differs\">"));
        assert!(t
            .html
            .contains("<td data-label=\"as expected\" class=\"mismatch\">⚠&nbsp;NO</td>"));
        assert!(t.html.contains(
            "<td data-label=\"mutual_exclusion\" class=\"violated\">✗&nbsp;VIOLATED</td>"
        ));
        assert!(t.markdown.contains("| x | **✗ VIOLATED** | **⚠ NO** |"));
    }

    #[test]
    fn a_wide_table_wraps_and_stacks_on_a_narrow_screen() {
        let row = |hash: &str| Row {
            cells: vec![Cell::plain("gc-pause-split-brain"), Cell::hash(hash)],
            differs: false,
        };
        let narrow = table(&["scenario", "trace hash"], &[row("9535c05e02cefc4c")]);
        assert!(
            !narrow.html.contains("class=\"stack\""),
            "few columns stay a table"
        );
        assert!(narrow
            .html
            .contains("<td data-label=\"trace hash\" class=\"hash\">9535c05e02cefc4c</td>"));
        let header = [
            "recipe",
            "mutual_exclusion",
            "c",
            "d",
            "e",
            "f",
            "as expected",
        ];
        let wide = table(&header, &[]);
        assert!(wide.html.contains("<table class=\"stack\">"));
        assert!(wide.html.contains("<th>mutual_<wbr>exclusion</th>"));
        // Every cell names its column, for the stacked rows.
        let rows = [Row {
            cells: header.iter().map(|h| Cell::plain(*h)).collect(),
            differs: false,
        }];
        let t = table(&header, &rows);
        for h in header {
            assert!(
                t.html.contains(&format!("<td data-label=\"{h}\">{h}</td>")),
                "{h}"
            );
        }
        // The page's style: no cell kept from wrapping, hashes break
        // anywhere, and under 800 pixels the wide tables stack.
        assert!(!STYLE.contains("nowrap"));
        assert!(STYLE.contains("td.hash{font-family:monospace;overflow-wrap:anywhere"));
        let narrow_screen = &STYLE[STYLE.find("@media (max-width:800px)").unwrap()..];
        assert!(
            narrow_screen.contains("table.stack,.stack tbody,.stack tr,.stack td{display:block}")
        );
        assert!(narrow_screen.contains(".stack td::before{content:attr(data-label)"));
    }

    #[test]
    fn every_shipped_scenario_and_recipe_has_an_expectation() {
        for (name, text) in SHIPPED {
            let s = Scenario::parse(text, name, name).unwrap();
            assert!(scenario_expectation(&s).is_some(), "{name}");
        }
        for r in models::recipes::REGISTRY {
            assert!(check_expectation(r.name).is_some(), "{}", r.name);
        }
    }

    /// The report's timelines are of shipped scenarios, and the queue's
    /// (whose lost and duplicated items the timelines mark) are among them,
    /// as the part's title says.
    #[test]
    fn the_timelines_drawn_include_the_queues() {
        let app = |name: &str| {
            let (_, text) = SHIPPED.iter().find(|(n, _)| *n == name).expect("shipped");
            Scenario::parse(text, name, name).unwrap().recipe.app()
        };
        let apps: Vec<App> = TIMELINES.iter().map(|n| app(n)).collect();
        for wanted in [App::Lock, App::Election, App::Queue] {
            assert!(apps.contains(&wanted), "{wanted}");
        }
    }
}
