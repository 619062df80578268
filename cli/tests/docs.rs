//! The documentation's examples are tests. Every command shown with its
//! output in README.md and docs/*.md — a ```console block: `$ lockstep …`,
//! `? STATUS` when it does not exit 0, then what it prints, stdout and
//! stderr together — is run by `trycmd` and its output compared. `[..]`
//! (any text within a line) and `...` (any lines) stand only for what the
//! machine decides: times, rates, memory, and the table columns they widen.
//! So a changed count fails this test until the doc says the new one.
//!
//! A command shown but not run (too slow for the suite, or one of cargo's)
//! goes in a ```sh block, with no output: the second test holds every doc
//! to that.

use std::path::{Path, PathBuf};

/// The repository's root (this crate is `cli/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

/// The Markdown files whose examples run: README.md and docs/*.md.
fn docs() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is there")
        .map(|e| e.expect("a readable docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    files.extend(more);
    files
}

#[test]
fn every_example_in_the_docs_prints_what_the_docs_say() {
    // The commands run in a fresh directory: they name shipped scenarios,
    // not the repository's files, and what they write lands here.
    let cwd = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-examples");
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).expect("a scratch directory");
    std::env::set_current_dir(&cwd).expect("into the scratch directory");
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("lockstep", PathBuf::from(env!("CARGO_BIN_EXE_lockstep")))
        .timeout(std::time::Duration::from_secs(300));
    for file in docs() {
        cases.case(file);
    }
    cases.run();
}

/// A fenced block's language and its lines.
struct Block {
    line: usize,
    lang: String,
    body: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => {
                open = Some(Block {
                    line: i + 1,
                    lang: lang.trim().to_string(),
                    body: Vec::new(),
                })
            }
            (Some(_), Some(_)) => out.extend(open.take()),
            (Some(b), None) => b.body.push(line.to_string()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a code block is never closed");
    out
}

/// What is shown is either run (```console, every command lockstep's) or
/// plainly not run (a command block without output, or a file's text):
/// no block that trycmd would skip or misread.
#[test]
fn every_block_is_run_or_plainly_not_a_command_with_output() {
    let mut commands = 0;
    for file in docs() {
        let text = std::fs::read_to_string(&file).expect("readable");
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        for b in blocks(&text) {
            let at = format!("{name}:{}", b.line);
            match b.lang.as_str() {
                "console" => {
                    let shown: Vec<&String> =
                        b.body.iter().filter(|l| l.starts_with("$ ")).collect();
                    assert!(!shown.is_empty(), "{at}: a console block runs a command");
                    for l in shown {
                        assert!(
                            l.starts_with("$ lockstep "),
                            "{at}: only lockstep's commands run here: {l}"
                        );
                        commands += 1;
                    }
                }
                // Shown, not run: commands without output.
                "sh" => {
                    for l in &b.body {
                        assert!(
                            !l.starts_with("$ ") && !l.starts_with("? "),
                            "{at}: a `sh` block is not run; show output only in a \
                             `console` block: {l}"
                        );
                    }
                }
                "" => panic!("{at}: a code block needs a language (trycmd runs bare blocks)"),
                lang => assert!(
                    !lang.starts_with("console") && !lang.starts_with("trycmd"),
                    "{at}: `{lang}`: every console block is run"
                ),
            }
        }
    }
    assert!(commands > 0, "the docs show no command at all");
    println!("the docs show {commands} commands with their output");
}
