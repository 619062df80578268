//! A path as a sequence diagram (SVG): a lifeline per client, the store and
//! the guarded resource; one row per step — a delivery as an arrow from
//! sender to receiver labelled with the whole message (wrapped, never cut),
//! a timer, fault or recovery as a note on its actor's lifeline. A bar on
//! a client's lifeline (class `holder`) marks the steps after which it
//! believes it holds (leads, has passed: its application's words).
//! Hovering shows the whole step. The Explorer draws it beside each state
//! (on its own white ground: the Explorer's page is dark); `check --html`
//! beside each counterexample, with the row where the property breaks
//! marked and each row a link to its step.

use super::describe::describe;
use super::view::{believers, holds_phrase};
use super::{Action, ModelState, RecipeModel};
use crate::html::escape;
use stateright::Model;
use std::fmt::Write;

const COL: usize = 200;
/// The least height of a row, and of one line of a label.
const ROW: usize = 28;
const LINE: usize = 13;
const LEFT: usize = 90;
const TOP: usize = 40;
/// An upper bound on the width of a character of the 11 px sans-serif
/// labels, so that a wrapped line fits its span.
const CHAR_PX: f64 = 6.4;

/// What `check --html` adds to a diagram.
#[derive(Clone, Copy, Debug, Default)]
pub struct Marks<'a> {
    /// The property whose counterexample this is: each row links to its
    /// step (`#<property>-step-<n>`).
    pub property: Option<&'a str>,
    /// The step where the property breaks, and why.
    pub breaking: Option<(usize, &'a str)>,
}

/// The id of step `n` of `property`'s counterexample on the viewer's page.
pub fn step_anchor(property: &str, n: usize) -> String {
    format!("{property}-step-{n}")
}

/// `s` in lines of at most `width` characters, broken at spaces where it
/// can be (a word longer than a line is broken where it must).
fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let gap = usize::from(used > 0);
            if used + gap + word.len() <= width {
                if gap == 1 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            let rest = word.split_off(width);
            lines.push(word.into_iter().collect());
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// How many characters fit in `px`.
fn chars_in(px: usize) -> usize {
    (px as f64 / CHAR_PX) as usize
}

/// `lines` as one `<text>` of `<tspan>`s, the first at `y`.
fn text_block(x: i64, y: usize, anchor: &str, fill: &str, lines: &[String]) -> String {
    let mut out = format!("<text x=\"{x}\" y=\"{y}\" text-anchor=\"{anchor}\" fill=\"{fill}\">");
    for (i, l) in lines.iter().enumerate() {
        let dy = if i == 0 { 0 } else { LINE };
        let _ = write!(out, "<tspan x=\"{x}\" dy=\"{dy}\">{}</tspan>", escape(l));
    }
    out.push_str("</text>");
    out
}

/// The diagram of `actions` taken from `init` (the Explorer's).
pub fn sequence_svg(model: &RecipeModel, init: &ModelState, actions: &[Action]) -> String {
    sequence_svg_marked(model, init, actions, Marks::default())
}

/// One step, laid out: its label's lines and the row's height.
struct Row {
    kind: &'static str,
    from: Option<usize>,
    to: Option<usize>,
    tip: String,
    lines: Vec<String>,
    height: usize,
    /// Who believes after the step, with their tokens.
    holders: Vec<(usize, u64)>,
}

/// The diagram of `actions` taken from `init`, with `marks`.
pub fn sequence_svg_marked(
    model: &RecipeModel,
    init: &ModelState,
    actions: &[Action],
    marks: Marks,
) -> String {
    let clients = init.clients.len();
    let names: Vec<String> = (0..clients)
        .map(|c| format!("client {c}"))
        .chain(["store".to_string(), "resource".to_string()])
        .collect();
    let col = |name: &str| names.iter().position(|n| n == name);
    let x = |i: usize| LEFT + i * COL;
    let rows = layout(model, init, actions, &col);
    let width = LEFT + (names.len() - 1) * COL + LEFT;
    let height = TOP + rows.iter().map(|r| r.height).sum::<usize>() + ROW / 2;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
         markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">\
         <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#333\"/></marker></defs>\
         <rect width=\"{width}\" height=\"{height}\" fill=\"#fff\"/>"
    );
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"#222\">{n}</text>\
             <line x1=\"{0}\" x2=\"{0}\" y1=\"28\" y2=\"{height}\" stroke=\"#bbb\"/>",
            x(i)
        );
    }
    let holds = holds_phrase(model);
    let mut top = TOP;
    for (step, row) in rows.iter().enumerate() {
        let n = step + 1;
        let breaking = marks.breaking.filter(|&(b, _)| b == n);
        if let Some(p) = marks.property {
            let _ = write!(svg, "<a href=\"#{}\">", step_anchor(p, n));
        }
        let tip = match breaking {
            Some((_, why)) => format!("{}\n✗ {why}", row.tip),
            None => row.tip.clone(),
        };
        let _ = write!(svg, "<g><title>{}</title>", escape(&tip));
        // The row's ground: hover target for its tooltip and link, red
        // where the property breaks.
        let ground = if breaking.is_some() {
            "#fde2de"
        } else {
            "#fff"
        };
        let _ = write!(
            svg,
            "<rect x=\"0\" y=\"{top}\" width=\"{width}\" height=\"{}\" fill=\"{ground}\"{}/>",
            row.height,
            if breaking.is_some() {
                " class=\"breaking-row\""
            } else {
                ""
            }
        );
        for &(c, token) in &row.holders {
            let _ = write!(
                svg,
                "<rect class=\"holder\" x=\"{}\" y=\"{top}\" width=\"8\" height=\"{}\" \
                 fill=\"#2e8b57\" fill-opacity=\"0.8\"><title>after step {n}: client {c} {holds} \
                 (token {token})</title></rect>",
                x(c) - 4,
                row.height
            );
        }
        let number_fill = if breaking.is_some() { "#b00" } else { "#777" };
        let _ = write!(
            svg,
            "<text x=\"4\" y=\"{}\" fill=\"{number_fill}\">{}{n}</text>",
            top + LINE,
            if breaking.is_some() { "✗ " } else { "" },
        );
        if let (Some(p), Some(_)) = (marks.property, breaking) {
            let _ = write!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#b00\" \
                 font-weight=\"bold\">✗ {}</text>",
                width - 4,
                top + LINE,
                escape(p)
            );
        }
        draw_row(&mut svg, row, top, &x);
        svg.push_str("</g>");
        if marks.property.is_some() {
            svg.push_str("</a>");
        }
        top += row.height;
    }
    svg.push_str("</svg>");
    svg
}

/// Each step's row: what it shows and how tall its wrapped label makes it.
fn layout(
    model: &RecipeModel,
    init: &ModelState,
    actions: &[Action],
    col: &dyn Fn(&str) -> Option<usize>,
) -> Vec<Row> {
    let mut rows = Vec::with_capacity(actions.len());
    let mut state = init.clone();
    for (step, &a) in actions.iter().enumerate() {
        let (kind, from, to, what) = describe(&state, a);
        let (f, t) = (col(&from), col(&to));
        let arrow = matches!((kind, f, t), ("deliver" | "expire", Some(f), Some(t)) if f != t)
            || matches!(a, Action::LoseReply(_));
        // An arrow's label spans the arrow (half of it for a lost reply);
        // a note has its column.
        let span = match (f, t) {
            (Some(f), Some(t)) if arrow && f != t => {
                let full = f.abs_diff(t) * COL;
                if matches!(a, Action::LoseReply(_)) {
                    full / 2 + COL / 2
                } else {
                    full
                }
            }
            _ => COL,
        };
        let label = if matches!(a, Action::LoseReply(_)) {
            format!("✕ {what}")
        } else {
            what.clone()
        };
        let lines = wrap(&label, chars_in(span.saturating_sub(16)));
        let height = ROW.max(lines.len() * LINE + 14);
        let Some(next) = model.next_state(&state, a) else {
            break;
        };
        state = next;
        rows.push(Row {
            kind,
            from: f,
            to: t,
            tip: format!("{}. {kind}: {from} → {to}: {what}", step + 1),
            lines,
            height,
            holders: believers(&state)
                .into_iter()
                .map(|(c, token)| (usize::from(c), token))
                .collect(),
        });
    }
    rows
}

/// A row's arrow or note and its label, the row's top at `top`.
fn draw_row(svg: &mut String, row: &Row, top: usize, x: &dyn Fn(usize) -> usize) {
    // The label's lines above the arrow, which runs at the row's foot.
    let y = top + row.lines.len() * LINE + 6;
    let first = top + LINE;
    match (row.kind, row.from, row.to) {
        ("deliver" | "expire", Some(f), Some(t)) if f != t => {
            let (x1, x2) = (x(f) as i64, x(t) as i64);
            let dash = if row.kind == "expire" {
                " stroke-dasharray=\"4 3\""
            } else {
                ""
            };
            let _ = write!(
                svg,
                "<line x1=\"{x1}\" x2=\"{x2}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#333\"{dash} \
                 marker-end=\"url(#arrow)\"/>{}",
                text_block((x1 + x2) / 2, first, "middle", "#222", &row.lines)
            );
        }
        ("fault", Some(f), Some(t)) if f != t => {
            // A lost reply: the arrow stops half way.
            let (x1, x2) = (x(f) as i64, x(t) as i64);
            let mid = (x1 + x2) / 2;
            let _ = write!(
                svg,
                "<line x1=\"{x1}\" x2=\"{mid}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#cc3311\"/>{}",
                text_block(mid, first, "middle", "#cc3311", &row.lines)
            );
        }
        (_, Some(f), _) | (_, None, Some(f)) => {
            let colour = match row.kind {
                "fault" => "#cc3311",
                "recover" => "#228833",
                _ => "#444",
            };
            let _ = write!(
                svg,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{colour}\"/>{}",
                x(f),
                first - 4,
                text_block(x(f) as i64 + 8, first, "start", colour, &row.lines)
            );
        }
        (_, None, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::wrap;

    /// A long label is wrapped, never cut: its words all come back, each
    /// line within the width.
    #[test]
    fn labels_wrap_without_losing_text() {
        let s = "txn(if create_revision(/lock/694d00000000) == 0 then put(/lock/694d00000000, \
                 lease 0x694d00000000) else get(/lock/694d00000000)) [session 0x694d00000000]";
        let lines = wrap(s, 30);
        assert!(lines.len() > 3, "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() <= 30), "{lines:?}");
        // Every character comes back in order (a word longer than a line
        // is broken without a space).
        let squeeze = |t: &str| t.replace(' ', "");
        assert_eq!(squeeze(&lines.concat()), squeeze(s));
        assert!(lines.join(" ").starts_with("txn(if"));
        assert_eq!(
            wrap("a-very-long-word-indeed", 8).concat(),
            "a-very-long-word-indeed"
        );
        assert_eq!(wrap("", 8), vec![String::new()]);
    }
}
