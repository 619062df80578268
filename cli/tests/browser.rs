//! lockstep's HTML pages in a real browser, headless Chromium: every page
//! lockstep writes — a run's interactive timeline (`run --html`), the
//! checker's counterexample viewer (`check --html`) and the report
//! (`report`) — loads without a console error and without a network
//! request, has the elements its contract names, and is photographed at
//! 1,400 and at 800 pixels wide into `$LOCKSTEP_SCREENSHOTS` (relative to
//! the workspace; default `target/screenshots`).
//!
//! Chromium is required: without it the test fails and says how to install
//! it (`.ci/run` installs it in CI). A page's facts are read by a probe
//! script added to a copy of the page, which runs once the page has loaded
//! and writes what it saw into the DOM that `--dump-dom` prints; each
//! Chromium runs in its own process group, which is killed when it is done
//! or after `CHROMIUM_TIMEOUT`, so none is left behind.

mod common;

use common::{lockstep, scratch, stderr};
use serde_json::Value;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The widths every page is loaded and photographed at: a laptop's and a
/// narrow window's.
const WIDTHS: [u32; 2] = [1400, 800];
/// A page's window height: a screen's, or taller for a page whose
/// screenshot should reach further down (headless Chromium photographs a
/// page scrolled to an anchor blank, so a screenshot always starts at the
/// top).
const SCREEN_HEIGHT: u32 = 900;
/// The longest one Chromium may take to load, probe and photograph a page.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(30);
/// The time window a run's timeline page is opened at (`#view=FROM-TO`,
/// virtual µs): where the shipped gc-pause scenarios break — the unfenced
/// run's overlapping holds from 4.98 s, the fenced run's refused write.
const VIEW: (u64, u64) = (4_500_000, 7_500_000);

/// Added to each page's `<head>`, before the page's own scripts: collects
/// console errors, uncaught exceptions, failed loads and every resource
/// fetched; after the load, what `QUERIES` select, whether anything is
/// wider than its box, and the external URLs the DOM names. Written as
/// ASCII JSON (every other character escaped) in a hidden `<pre>`.
const PROBE: &str = r#"<script>(function () {
  var errors = [], queries = QUERIES;
  var original = console.error;
  console.error = function () {
    errors.push(Array.prototype.map.call(arguments, String).join(" "));
    return original.apply(console, arguments);
  };
  window.addEventListener("error", function (e) {
    var t = e.target;
    errors.push(t && t !== window ? "failed to load " + (t.src || t.href || t.tagName) : String(e.message));
  }, true);
  window.addEventListener("unhandledrejection", function (e) { errors.push("unhandled rejection: " + e.reason); });
  function describe(el) {
    return {
      id: el.id || "",
      cls: typeof el.className === "string" ? el.className : (el.getAttribute("class") || ""),
      text: (el.textContent || "").trim().slice(0, 200),
      href: el.getAttribute("href") || "",
      us: el.getAttribute("data-us")
    };
  }
  window.addEventListener("load", function () { setTimeout(function () {
    var found = {};
    Object.keys(queries).forEach(function (k) {
      found[k] = Array.prototype.map.call(document.querySelectorAll(queries[k]), describe);
    });
    var wide = Array.prototype.filter.call(document.querySelectorAll(".scroll, table, figure"), function (el) {
      return el.scrollWidth > el.clientWidth + 1;
    }).map(function (el) { return el.tagName.toLowerCase() + "." + (el.className || ""); });
    if (document.documentElement.scrollWidth > window.innerWidth + 1) wide.push("the page itself");
    var requests = performance.getEntriesByType("resource").map(function (r) { return r.name; })
      .filter(function (n) { return !/^(file|data|blob|about):/i.test(n); });
    var external = Array.prototype.map.call(document.querySelectorAll("[src], [href]"), function (el) {
      return el.getAttribute("src") || el.getAttribute("href");
    }).filter(function (u) { return /^([a-z][a-z0-9+.-]*:)?\/\//i.test(u) && !/^file:/i.test(u); });
    var out = JSON.stringify({ errors: errors, found: found, wide: wide, requests: requests,
      external: external, width: window.innerWidth, hash: location.hash });
    var pre = document.createElement("pre");
    pre.id = "lockstep-probe";
    pre.hidden = true;
    pre.textContent = out.replace(/[^\x20-\x7e]|[<>&]/g, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
    document.body.appendChild(pre);
  }, 500); });
})();</script>"#;

/// Where Chromium is: the first of its usual names on `PATH`.
fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "the browser test needs headless Chromium, and none is on PATH \
         (chromium, chromium-browser or google-chrome): install it with \
         `apt-get install chromium fonts-dejavu-core` (Debian, Ubuntu), as .ci/run does"
    );
}

/// Where the screenshots go: `$LOCKSTEP_SCREENSHOTS`, relative to the
/// workspace, or `target/screenshots`.
fn screenshot_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("LOCKSTEP_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/screenshots"));
    let dir = workspace.join(dir);
    std::fs::create_dir_all(&dir).expect("the screenshot directory can be made");
    dir
}

/// What the probe saw of one page at one width.
struct Seen {
    width: u32,
    facts: Value,
}

impl Seen {
    fn list(&self, key: &str) -> Vec<String> {
        self.facts[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The elements query `name` selected.
    fn found(&self, name: &str) -> Vec<Value> {
        self.facts["found"][name]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// Runs `chromium` on `url` at `width`, photographing it to `screenshot`,
/// and returns the DOM it printed. Chromium runs in a process group of its
/// own, killed when it ends or times out.
fn load(chromium: &Path, profile: &Path, url: &str, size: (u32, u32), screenshot: &Path) -> String {
    let mut child = Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-sync",
            "--disable-background-networking",
            "--disable-component-update",
            // Any request off this machine fails: a page must need none.
            "--proxy-server=http://127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={},{}", size.0, size.1))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg("--dump-dom")
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    let group = child.id() as i32;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        let _ = stdout.read_to_string(&mut dom);
        dom
    });
    let started = Instant::now();
    let finished = loop {
        match child.try_wait().expect("chromium can be waited for") {
            Some(status) => break Some(status),
            None if started.elapsed() > CHROMIUM_TIMEOUT => break None,
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    // Its helper processes too, whether it ended or hung.
    // SAFETY: kill(2) on the process group this test made for Chromium.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
    let _ = child.wait();
    let dom = reader.join().expect("the reader thread ends");
    match finished {
        Some(status) => assert!(status.success(), "chromium on {url}: {status}"),
        None => panic!("chromium took more than {CHROMIUM_TIMEOUT:?} on {url}; killed"),
    }
    dom
}

/// Loads the page `file` (its URL fragment `fragment`) at each of `WIDTHS`
/// and `height`, with the probe selecting `queries` (name, CSS selector),
/// photographs it as `<name>-<width>.png`, and returns what the probe saw.
fn visit(
    name: &str,
    (file, fragment): (&Path, &str),
    height: u32,
    queries: &[(&str, &str)],
    scratch: &Path,
) -> Vec<Seen> {
    let chromium = chromium();
    let html = std::fs::read_to_string(file).expect("the page was written");
    let object: serde_json::Map<String, Value> = queries
        .iter()
        .map(|(k, q)| (k.to_string(), Value::from(*q)))
        .collect();
    let probe = PROBE.replace("QUERIES", &Value::Object(object).to_string());
    let head = html.find("<head>").expect("the page has a <head>") + "<head>".len();
    let probed = file.with_file_name(format!("{name}.probed.html"));
    std::fs::write(
        &probed,
        format!("{}{probe}{}", &html[..head], &html[head..]),
    )
    .unwrap();
    let url = format!("file://{}{fragment}", probed.display());
    WIDTHS
        .iter()
        .map(|&width| {
            let profile = scratch.join(format!("profile-{name}-{width}"));
            let shot = screenshot_dir().join(format!("{name}-{width}.png"));
            // A screenshot from an earlier run must not pass for this one's.
            let _ = std::fs::remove_file(&shot);
            let dom = load(&chromium, &profile, &url, (width, height), &shot);
            let png = std::fs::read(&shot).unwrap_or_default();
            assert!(png.starts_with(b"\x89PNG"), "{} is a PNG", shot.display());
            let start = dom
                .find("id=\"lockstep-probe\"")
                .unwrap_or_else(|| panic!("{name} at {width} px: the probe never reported"));
            let json = &dom[dom[start..].find('>').unwrap() + start + 1..];
            let json = &json[..json.find("</pre>").unwrap()];
            let facts: Value = serde_json::from_str(json).expect("the probe's JSON");
            assert_eq!(facts["width"], width, "the window's width");
            Seen { width, facts }
        })
        .collect()
}

/// What every page must do at every width: no console error, no request
/// and no URL off this machine.
fn every_page(page: &str, seen: &[Seen], failures: &mut Vec<String>) {
    for s in seen {
        for (what, key) in [
            ("console error", "errors"),
            ("network request", "requests"),
            ("external URL", "external"),
        ] {
            for item in s.list(key) {
                failures.push(format!("{page} at {} px: {what}: {item}", s.width));
            }
        }
    }
}

/// Records `what` as a failure of `page` unless `ok`.
fn expect(ok: bool, page: &str, what: String, failures: &mut Vec<String>) {
    if !ok {
        failures.push(format!("{page}: {what}"));
    }
}

fn class_has(v: &Value, class: &str) -> bool {
    v["cls"]
        .as_str()
        .is_some_and(|c| c.split_whitespace().any(|x| x == class))
}

/// A run's interactive timeline: violation and write marks by class, a
/// time axis of ticks in virtual µs, lane names, and `#view=FROM-TO`
/// honoured on load.
/// `must_show` names the query whose marks the run must have.
fn run_timeline(page: &str, seen: &[Seen], must_show: (&str, &str), failures: &mut Vec<String>) {
    for s in seen {
        let at = format!("{page} at {} px", s.width);
        let writes = s.found("writes");
        for w in &writes {
            let verdicts = ["accepted", "rejected"]
                .iter()
                .filter(|c| class_has(w, c))
                .count();
            expect(
                verdicts == 1,
                &at,
                format!("a write mark is accepted or rejected, exactly one: {w}"),
                failures,
            );
        }
        let (query, selector) = must_show;
        expect(
            !s.found(query).is_empty(),
            &at,
            format!("a mark `{selector}`"),
            failures,
        );
        expect(
            s.found("axis").len() == 1,
            &at,
            "one time axis, id `axis`".into(),
            failures,
        );
        let ticks = s.found("ticks");
        expect(
            ticks.len() >= 3,
            &at,
            format!("at least 3 `.tick` labels in #axis, found {}", ticks.len()),
            failures,
        );
        for t in &ticks {
            let us = t["us"].as_str().and_then(|u| u.parse::<u64>().ok());
            expect(
                us.is_some_and(|u| (VIEW.0..=VIEW.1).contains(&u)),
                &at,
                format!(
                    "after #view={}-{}, every tick's data-us within it: {t}",
                    VIEW.0, VIEW.1
                ),
                failures,
            );
        }
        expect(
            !s.found("lanes").is_empty(),
            &at,
            "lane names of class `lane-name`".into(),
            failures,
        );
    }
}

/// The counterexample viewer: the holders drawn, one breaking step saying
/// why, steps `<property>-step-<n>` the diagram links to, an expand-all
/// control.
fn counterexample(page: &str, seen: &[Seen], failures: &mut Vec<String>) {
    for s in seen {
        let at = format!("{page} at {} px", s.width);
        expect(
            !s.found("holders").is_empty(),
            &at,
            "SVG elements of class `holder`".into(),
            failures,
        );
        // One breaking step per counterexample: each violated property's
        // own, with its one-line why.
        let breaking = s.found("breaking");
        let mut properties: Vec<&str> = breaking
            .iter()
            .filter_map(|b| b["id"].as_str())
            .filter(|id| is_step(id))
            .filter_map(|id| id.rsplit_once("-step-").map(|(p, _)| p))
            .collect();
        properties.sort_unstable();
        properties.dedup();
        expect(
            !breaking.is_empty() && properties.len() == breaking.len(),
            &at,
            format!(
                "one `li.breaking` per violated property, each a step, found {}: {breaking:?}",
                breaking.len()
            ),
            failures,
        );
        let why = s.found("why");
        expect(
            why.len() == breaking.len()
                && why
                    .iter()
                    .all(|w| w["text"].as_str().is_some_and(|t| !t.trim().is_empty())),
            &at,
            format!("one non-empty `p.why` per breaking step, found {why:?}"),
            failures,
        );
        let ids: Vec<String> = s
            .found("ids")
            .iter()
            .filter_map(|v| v["id"].as_str().map(String::from))
            .filter(|id| is_step(id))
            .collect();
        expect(
            !ids.is_empty(),
            &at,
            "steps with ids `<property>-step-<n>`".into(),
            failures,
        );
        let links: Vec<String> = s
            .found("links")
            .iter()
            .filter_map(|v| v["href"].as_str()?.strip_prefix('#').map(String::from))
            .filter(|h| is_step(h))
            .collect();
        expect(
            !links.is_empty(),
            &at,
            "diagram links `href=\"#<property>-step-<n>\"`".into(),
            failures,
        );
        for l in &links {
            expect(
                ids.contains(l),
                &at,
                format!("the link #{l} has a step to go to"),
                failures,
            );
        }
        expect(
            s.found("expand").len() == 1,
            &at,
            "a control with id `expand-all`".into(),
            failures,
        );
    }
}

/// `<property>-step-<n>`.
fn is_step(id: &str) -> bool {
    id.rsplit_once("-step-").is_some_and(|(p, n)| {
        !p.is_empty()
            && p.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            && !n.is_empty()
            && n.chars().all(|c| c.is_ascii_digit())
    })
}

/// The report: its tables and charts, none wider than the page, and the
/// charts saying on their axes that they are logarithmic.
fn report(page: &str, seen: &[Seen], failures: &mut Vec<String>) {
    for s in seen {
        let at = format!("{page} at {} px", s.width);
        let tables = s.found("tables").len();
        expect(
            tables >= 7,
            &at,
            format!("the checks' five tables, the scenarios' and the herd's: {tables}"),
            failures,
        );
        let charts = s.found("charts");
        expect(
            charts.len() >= 2,
            &at,
            format!(
                "the herd charts and the timelines inline, found {}",
                charts.len()
            ),
            failures,
        );
        let herd = charts
            .iter()
            .filter(|c| {
                c["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("per release"))
            })
            .count();
        expect(herd == 1, &at, "the notifications chart".into(), failures);
        let log = charts
            .iter()
            .filter(|c| c["text"].as_str().is_some_and(|t| t.contains("log scale")))
            .count();
        expect(
            log >= 2,
            &at,
            format!("both herd charts say `log scale` on their axes, {log} do"),
            failures,
        );
        for wide in s.list("wide") {
            failures.push(format!(
                "{at}: wider than its box (needs horizontal scrolling): {wide}"
            ));
        }
    }
}

fn run_html(scenario: &str, out: &Path) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{scenario}.toml"));
    let o = lockstep(&[
        "run",
        file.to_str().unwrap(),
        "--html",
        out.to_str().unwrap(),
    ]);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "run {scenario}: {}",
        stderr(&o)
    );
}

#[test]
fn every_page_loads_clean_with_its_key_elements_at_1400_and_800_px() {
    let dir = scratch("browser");
    let mut failures = Vec::new();

    // A run's interactive timeline: the unfenced pause breaks mutual
    // exclusion; the fenced one has its stale write rejected.
    let (violations, rejected) = (TIMELINE_QUERIES[1], TIMELINE_QUERIES[2]);
    let fragment = format!("#view={}-{}", VIEW.0, VIEW.1);
    for (scenario, must_show) in [
        ("gc-pause-split-brain", violations),
        ("gc-pause-split-brain-fenced", rejected),
    ] {
        let file = dir.join(format!("{scenario}.html"));
        run_html(scenario, &file);
        let page = format!("run-{scenario}");
        let seen = visit(
            &page,
            (&file, &fragment),
            SCREEN_HEIGHT,
            &TIMELINE_QUERIES,
            &dir,
        );
        every_page(&page, &seen, &mut failures);
        run_timeline(&page, &seen, must_show, &mut failures);
    }

    // The counterexample viewer of `check --html`.
    let file = dir.join("counterexample.html");
    let o = lockstep(&[
        "check",
        "--recipe",
        "unfair-create",
        "--clients",
        "2",
        "--pauses",
        "1",
        "--html",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "a violation: {}", stderr(&o));
    let seen = visit(
        "check-counterexample",
        (&file, ""),
        SCREEN_HEIGHT,
        &[
            ("holders", "svg .holder"),
            ("breaking", "li.breaking"),
            ("why", "li.breaking p.why"),
            ("ids", "[id*=\"-step-\"]"),
            ("links", "a[href^=\"#\"]"),
            ("expand", "#expand-all"),
        ],
        &dir,
    );
    every_page("check-counterexample", &seen, &mut failures);
    counterexample("check-counterexample", &seen, &mut failures);

    // The report.
    let out = dir.join("report");
    let o = lockstep(&[
        "report",
        "--max-clients",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "report: {}", stderr(&o));
    // Photographed down to the scenarios' table, the widest (hashes, links).
    let seen = visit(
        "report",
        (&out.join("index.html"), ""),
        3600,
        &[("tables", "table"), ("charts", "figure svg")],
        &dir,
    );
    every_page("report", &seen, &mut failures);
    report("report", &seen, &mut failures);

    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The run timeline's queries, the violation's and the rejected write's
/// among them.
const TIMELINE_QUERIES: [(&str, &str); 6] = [
    ("writes", ".write"),
    ("violations", ".violation"),
    ("rejected", ".write.rejected"),
    ("axis", "#axis"),
    ("ticks", "#axis .tick"),
    ("lanes", ".lane-name"),
];

/// The probe and the checks themselves, on two pages made here: one that
/// keeps the run timeline's contract passes, one that breaks it in every
/// way is caught in every way.
#[test]
fn the_checks_pass_a_page_that_keeps_the_contract_and_catch_one_that_does_not() {
    let dir = scratch("browser-probe");
    let fragment = format!("#view={}-{}", VIEW.0, VIEW.1);
    let ticks: String = [VIEW.0, (VIEW.0 + VIEW.1) / 2, VIEW.1]
        .iter()
        .map(|us| format!("<span class=\"tick\" data-us=\"{us}\">{us}</span>"))
        .collect();
    let good = dir.join("good.html");
    std::fs::write(
        &good,
        format!(
            "<!doctype html><html><head><title>t</title></head><body>\
             <div id=\"axis\">{ticks}</div><p class=\"lane-name\">client 0</p>\
             <svg><rect class=\"write accepted\"/><rect class=\"write rejected\"/>\
             <line class=\"violation\"/></svg></body></html>"
        ),
    )
    .unwrap();
    let seen = visit(
        "probe-good",
        (&good, &fragment),
        400,
        &TIMELINE_QUERIES,
        &dir,
    );
    let mut failures = Vec::new();
    every_page("good", &seen, &mut failures);
    run_timeline("good", &seen, TIMELINE_QUERIES[1], &mut failures);
    assert_eq!(failures, Vec::<String>::new());

    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!doctype html><html><head><title>t</title></head><body>\
         <div id=\"axis\"><span class=\"tick\" data-us=\"9000000\">9 s</span></div>\
         <img src=\"http://192.0.2.1/x.png\"><svg><rect class=\"write\"/></svg>\
         <script>console.error(\"broken\");</script></body></html>",
    )
    .unwrap();
    let seen = visit("probe-bad", (&bad, &fragment), 400, &TIMELINE_QUERIES, &dir);
    let mut failures = Vec::new();
    every_page("bad", &seen, &mut failures);
    run_timeline("bad", &seen, TIMELINE_QUERIES[1], &mut failures);
    let caught = |what: &str| failures.iter().filter(|f| f.contains(what)).count();
    assert_eq!(caught("console error: broken"), 2, "{failures:#?}");
    assert_eq!(
        caught("external URL: http://192.0.2.1/x.png"),
        2,
        "{failures:#?}"
    );
    assert_eq!(caught("network request: http://192.0.2.1/x.png"), 2);
    assert_eq!(
        caught("console error: failed to load http://192.0.2.1/x.png"),
        2
    );
    assert_eq!(
        caught("exactly one"),
        2,
        "a write neither accepted nor rejected"
    );
    assert_eq!(caught("a mark `.violation`"), 2);
    assert_eq!(caught("every tick's data-us within it"), 2);
    assert_eq!(caught("at least 3 `.tick`"), 2);
    assert_eq!(caught("lane names"), 2);
}

#[test]
fn a_step_id_is_a_property_and_a_number() {
    assert!(is_step("mutual_exclusion-step-12"));
    assert!(!is_step("mutual_exclusion-step-"));
    assert!(!is_step("-step-3"));
    assert!(!is_step("timeline-gc-pause"));
}
