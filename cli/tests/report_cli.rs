//! The report reads: results beside their expected outcomes, violations and
//! differences marked in text as well as colour, a header that says which
//! lockstep wrote it, when and how, a table of contents, an interactive
//! timeline per run; and the herd charts keep a recipe's look whatever is
//! selected.

mod common;

use common::{lockstep, scratch, stderr};

#[test]
fn the_report_shows_expected_outcomes_version_contents_and_links() {
    let dir = scratch("page");
    let o = lockstep(&[
        "report",
        "--max-clients",
        "5",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let version = format!("lockstep <strong>{}</strong>", env!("CARGO_PKG_VERSION"));
    assert!(html.contains(&version), "the version in the header");
    assert!(md.contains(&format!("lockstep {}", env!("CARGO_PKG_VERSION"))));
    assert!(html.contains("command: <code>lockstep report --max-clients 5 --out"));
    // The page keeps a marker on the line of its word (a no-break space).
    for (page, space) in [(&html, "&nbsp;"), (&md, " ")] {
        assert!(page.contains("expected violated") && page.contains("as expected"));
        assert!(
            page.contains(&format!("✗{space}VIOLATED")),
            "violations marked in text"
        );
        assert!(page.contains(&format!("✓{space}yes")));
        assert!(page.contains("(#scenarios)") || page.contains("href=\"#scenarios\""));
    }
    // Highlighted by class, contents linked to their sections.
    assert!(html.contains("class=\"violated\">✗&nbsp;VIOLATED</td>"));
    assert!(html.contains("<nav>") && html.contains("<h2 id=\"scenarios\">"));
    assert!(html.contains("<a href=\"#timeline-partition-past-session\">"));
    // Readable at 800 px: tables wrap (the wide ones stack their rows),
    // figures shrink; the browser test measures that nothing overflows.
    assert!(html.contains("<div class=\"scroll\"><table class=\"stack\">"));
    assert!(html.contains("overflow-x:auto") && html.contains("max-width:100%"));
    assert!(html.contains("name=\"viewport\""));
    // Every expectation met at the shipped seeds.
    assert!(html.contains("class=\"summary ok\""), "a result differs");
    // The interactive timeline of each run, beside the report and linked.
    for page in [
        "partition-past-session-seed-1.html",
        "gc-pause-split-brain-seed-2.html",
    ] {
        assert!(dir.join(page).exists(), "{page}");
        assert!(html.contains(&format!("href=\"{page}\"")), "{page} linked");
    }
    // The hand-off latency chart is gone; its p50 stays in the table.
    assert!(!dir.join("herd-handoff.svg").exists());
    assert!(!html.contains("herd-handoff") && html.contains("hand-off p50 (ms)"));
}

/// The stroke colours of an SVG.
fn strokes(svg: &str) -> std::collections::BTreeSet<String> {
    svg.split("stroke=\"#")
        .skip(1)
        .map(|s| s[..6].to_string())
        .collect()
}

#[test]
fn a_recipe_keeps_its_colour_whatever_is_selected_and_scenario_runs_are_drawn() {
    let (alone, both) = (scratch("alone"), scratch("both"));
    for (dir, recipes) in [
        (&alone, "fair-predecessor"),
        (&both, "unfair-create,fair-predecessor"),
    ] {
        let o = lockstep(&[
            "herd",
            "--recipes",
            recipes,
            "--clients",
            "2,5",
            "--scenario",
            &format!("{}/../scenarios/healthy.toml", env!("CARGO_MANIFEST_DIR")),
            "--json",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let alone = std::fs::read_to_string(alone.join("herd-notifications.svg")).unwrap();
    let both = std::fs::read_to_string(both.join("herd-notifications.svg")).unwrap();
    // fair-predecessor is second in the registry: blue, alone or not.
    assert!(strokes(&alone).contains("0072B2"), "{:?}", strokes(&alone));
    assert!(!strokes(&alone).contains("D55E00"));
    assert!(strokes(&both).contains("0072B2") && strokes(&both).contains("D55E00"));
    // The --scenario runs are series of their own, named by scenario.
    assert!(alone.contains("fair-predecessor — healthy"));
    assert!(both.contains("unfair-create — healthy"));
    // Ticks at the client counts measured.
    assert!(alone.contains("\n5\n</text>") && alone.contains("\n2\n</text>"));
}
