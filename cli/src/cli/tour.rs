//! The tour: what `lockstep` with no arguments (and `lockstep report`) does.
//! Check every recipe, run the shipped scenarios, sweep the herd up to a
//! thousand clients, and write one report.

use super::check::grouped;
use super::herd::{sweep, write_files};
use super::{default_cfg, UsageError};
use models::checker::{check, CheckOptions, Status};
use models::recipe::App;
use sim::engine::simulate;
use sim::herd::{HerdRow, DEFAULT_CLIENTS};
use sim::scenario::Scenario;
use sim::timeline::timeline_from_trace;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// The shipped scenarios, built in so the tour runs from anywhere.
pub const SHIPPED: [(&str, &str); 16] = [
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
];

struct Section {
    markdown: String,
    html: String,
}

fn table(header: &[&str], rows: &[Vec<String>]) -> Section {
    let mut md = format!(
        "| {} |\n|{}|\n",
        header.join(" | "),
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    let mut html = String::from("<table><thead><tr>");
    for h in header {
        let _ = write!(html, "<th>{}</th>", esc(h));
    }
    html.push_str("</tr></thead><tbody>");
    for r in rows {
        let _ = writeln!(md, "| {} |", r.join(" | "));
        html.push_str("<tr>");
        for c in r {
            let _ = write!(html, "<td>{}</td>", esc(c));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>\n");
    Section { markdown: md, html }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn figure(dir: &Path, base: &str, caption: &str) -> Result<Section, UsageError> {
    let svg = std::fs::read_to_string(dir.join(format!("{base}.svg")))
        .map_err(|e| UsageError(format!("cannot read {base}.svg: {e}")))?;
    let svg = svg.trim_start_matches(|c| c != '<').to_string();
    Ok(Section {
        markdown: format!("![{caption}]({base}.png)\n\n*{caption}* ([SVG]({base}.svg))\n"),
        html: format!(
            "<figure>{svg}<figcaption>{}</figcaption></figure>\n",
            esc(caption)
        ),
    })
}

pub fn run(out: &Path, max_clients: u16) -> Result<ExitCode, UsageError> {
    let started = Instant::now();
    super::writable_dir(out, "--out")?;
    let mut sections: Vec<(String, Vec<Section>)> = Vec::new();

    // 1. Model checking, one table per application (their properties differ).
    eprintln!("lockstep: model-checking every recipe …");
    for app in [App::Lock, App::Election] {
        let mut rows = Vec::new();
        let mut names = Vec::new();
        for recipe in models::recipes::defaults() {
            if recipe.app() != app {
                continue;
            }
            let cfg = default_cfg(recipe.clone());
            let r = check(&cfg.clone().into_model(), CheckOptions::default())
                .map_err(|e| UsageError(format!("{recipe}: {e}")))?;
            names = r.properties.iter().map(|p| p.name).collect();
            let mut row = vec![
                recipe.name().to_string(),
                grouped(r.unique_states),
                format!("{:.2}", r.seconds),
            ];
            row.extend(r.properties.iter().map(|p| {
                match p.status {
                    Status::Holds => "holds",
                    Status::Violated => "VIOLATED",
                    Status::Unknown => "unknown",
                }
                .to_string()
            }));
            rows.push(row);
        }
        let mut header = vec!["recipe", "unique states", "seconds"];
        header.extend(names.iter().copied());
        let title = format!(
            "Model checking, {app} recipes (3 clients, 1 round, 1 crash, fencing on, naive policy)"
        );
        println!("{title}\n");
        print!("{}", reports::table::render(&header, &rows));
        println!();
        sections.push((title, vec![table(&header, &rows)]));
    }

    // 2. The shipped scenarios.
    eprintln!("lockstep: running the shipped scenarios …");
    let mut rows = Vec::new();
    let mut figures = Vec::new();
    for (name, text) in SHIPPED {
        let s = Scenario::parse(text, &format!("scenarios/{name}.toml"), name)
            .map_err(|e| UsageError(e.to_string()))?;
        let o = simulate(&s, s.seed, true);
        let mut props: Vec<&str> = o.violations.iter().map(|v| v.property.name()).collect();
        props.sort_unstable();
        props.dedup();
        let fired: Vec<String> = o
            .faults_fired()
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        rows.push(vec![
            name.to_string(),
            s.seed.to_string(),
            if fired.is_empty() {
                "none".into()
            } else {
                fired.join(", ")
            },
            o.metrics.acquisitions.to_string(),
            if props.is_empty() {
                "none".into()
            } else {
                props.join(", ")
            },
            o.trace_hash.clone().unwrap_or_default(),
        ]);
        if matches!(
            name,
            "gc-pause-split-brain"
                | "gc-pause-split-brain-fenced"
                | "partition-past-session"
                | "election-gc-pause"
                | "etcd-campaign-phantom-leader"
                | "curator-reconnect-double-leader"
        ) {
            let who = match s.recipe.app() {
                App::Lock => "who believes it holds the lock",
                App::Election => "who believes it leads",
            };
            let t = timeline_from_trace(&format!("{name} (seed {}): {who}", s.seed), &o.trace);
            let base = format!("timeline-{name}");
            reports::chart::timeline(&t, &out.join(&base))
                .map_err(|e| UsageError(format!("cannot draw a timeline: {e}")))?;
            figures.push(figure(
                out,
                &base,
                &format!(
                    "{name}: hold (or leadership) intervals per client; red where two overlap; ▲ faults"
                ),
            )?);
        }
    }
    let header = [
        "scenario",
        "seed",
        "faults fired",
        "acquisitions",
        "violated",
        "trace hash",
    ];
    println!("\nShipped scenarios\n");
    print!("{}", reports::table::render(&header, &rows));
    let mut list = vec![table(&header, &rows)];
    list.extend(figures);
    sections.push(("Split-brain scenarios (simulator)".into(), list));

    // 3. The herd sweep.
    let clients: Vec<u16> = DEFAULT_CLIENTS
        .iter()
        .copied()
        .filter(|&n| n <= max_clients)
        .collect();
    eprintln!("lockstep: herd sweep up to {max_clients} clients …");
    let herd: Vec<HerdRow> = sweep(&models::recipes::defaults(), &clients, None, 1, false)?;
    // herd.csv, herd.json and the three charts, drawn once.
    write_files(out, &herd, 1)?;
    let rows: Vec<Vec<String>> = herd
        .iter()
        .map(|r| {
            vec![
                r.recipe.clone(),
                r.clients.to_string(),
                format!("{:.2}", r.notifications_per_release_mean()),
                r.notifications_per_release
                    .iter()
                    .max()
                    .copied()
                    .unwrap_or(0)
                    .to_string(),
                format!("{:.2}", r.requests_per_acquisition("all")),
                format!("{:.1}", r.handoff_us.p50 as f64 / 1000.0),
            ]
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
        .filter(|r| r[1] == max_clients.to_string() || r[1] == "10")
        .cloned()
        .collect();
    print!("{}", reports::table::render(&header, &wide));
    sections.push((
        "Herd effect (baseline: N clients request at once, one round, no faults)".into(),
        vec![
            figure(
                out,
                "herd-notifications",
                "Notifications per hand-off vs clients (log–log)",
            )?,
            figure(
                out,
                "herd-requests",
                "Store requests per acquisition vs clients",
            )?,
            figure(out, "herd-handoff", "Hand-off latency vs clients")?,
            table(&header, &rows),
        ],
    ));

    // 4. Cross-validation, when `validate/run.sh` has written it here.
    let validation = out.join("validation").join("validation.md");
    if validation.exists() {
        sections.push((
            "Model vs real servers".into(),
            vec![Section {
                markdown: "See [validation/validation.md](validation/validation.md) (written by `validate/run.sh`).\n".into(),
                html: "<p>See <a href=\"validation/validation.md\">validation/validation.md</a> (written by <code>validate/run.sh</code>).</p>\n".into(),
            }],
        ));
    }

    // 5. The page and its twin.
    let mut md = String::from("# lockstep report\n\n");
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>lockstep report</title><style>\
         body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:4px 8px;text-align:right}\
         td:first-child,th:first-child{text-align:left}figure{margin:1em 0}figure svg{max-width:100%;height:auto}\
         </style></head><body><h1>lockstep report</h1>\n",
    );
    for (title, parts) in &sections {
        let _ = write!(md, "## {title}\n\n");
        let _ = writeln!(html, "<h2>{}</h2>", esc(title));
        for p in parts {
            md.push_str(&p.markdown);
            md.push('\n');
            html.push_str(&p.html);
        }
    }
    html.push_str("</body></html>\n");
    let write = |name: &str, body: &str| {
        let path = out.join(name);
        std::fs::write(&path, body)
            .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))
    };
    write("report.md", &md)?;
    write("index.html", &html)?;
    println!(
        "\nreport: {} (and report.md), written in {:.1} s",
        out.join("index.html").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
