//! A path as a sequence diagram (SVG): a lifeline per client, the store and
//! the guarded resource; one row per step — a delivery as an arrow from
//! sender to receiver labelled with the message, a timer, fault or recovery
//! as a note on its actor's lifeline. Hovering shows the whole step. The
//! Explorer draws it beside each state; `check --html` beside each
//! counterexample.

use super::describe::describe;
use super::{Action, ModelState, RecipeModel};
use crate::html::escape;
use stateright::Model;
use std::fmt::Write;

const COL: usize = 170;
const ROW: usize = 28;
const LEFT: usize = 90;
const TOP: usize = 40;

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let cut: String = s.chars().take(n - 1).collect();
        format!("{cut}…")
    }
}

/// The diagram of `actions` taken from `init`.
pub fn sequence_svg(model: &RecipeModel, init: &ModelState, actions: &[Action]) -> String {
    let clients = init.clients.len();
    let names: Vec<String> = (0..clients)
        .map(|c| format!("client {c}"))
        .chain(["store".to_string(), "resource".to_string()])
        .collect();
    let col = |name: &str| names.iter().position(|n| n == name);
    let x = |i: usize| LEFT + i * COL;
    let width = LEFT + (names.len() - 1) * COL + LEFT;
    let height = TOP + (actions.len() + 1) * ROW;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
         markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">\
         <path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>"
    );
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-weight=\"bold\">{n}</text>\
             <line x1=\"{0}\" x2=\"{0}\" y1=\"28\" y2=\"{height}\" stroke=\"#bbb\"/>",
            x(i)
        );
    }
    let mut state = init.clone();
    for (step, &a) in actions.iter().enumerate() {
        let (kind, from, to, what) = describe(&state, a);
        let y = TOP + step * ROW + ROW / 2;
        let tip = escape(&format!("{}. {kind}: {from} → {to}: {what}", step + 1));
        let label = escape(&short(&what, 34));
        let _ = write!(
            svg,
            "<g><title>{tip}</title><text x=\"4\" y=\"{}\" fill=\"#999\">{}</text>",
            y + 4,
            step + 1
        );
        match (kind, col(&from), col(&to)) {
            ("deliver" | "expire", Some(f), Some(t)) if f != t => {
                let (x1, x2) = (x(f) as i64, x(t) as i64);
                let dash = if kind == "expire" {
                    " stroke-dasharray=\"4 3\""
                } else {
                    ""
                };
                let _ = write!(
                    svg,
                    "<line x1=\"{x1}\" x2=\"{x2}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#333\"{dash} \
                     marker-end=\"url(#arrow)\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
                    (x1 + x2) / 2,
                    y - 4
                );
            }
            ("fault", Some(f), Some(t)) if matches!(a, Action::LoseReply(_)) => {
                let (x1, x2) = (x(f) as i64, x(t) as i64);
                let mid = (x1 + x2) / 2;
                let _ = write!(
                    svg,
                    "<line x1=\"{x1}\" x2=\"{mid}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#cc3311\"/>\
                     <text x=\"{mid}\" y=\"{}\" text-anchor=\"middle\" fill=\"#cc3311\">✕ {label}</text>",
                    y + 4
                );
            }
            (_, Some(f), _) | (_, None, Some(f)) => {
                let colour = match kind {
                    "fault" => "#cc3311",
                    "recover" => "#228833",
                    _ => "#555",
                };
                let _ = write!(
                    svg,
                    "<circle cx=\"{}\" cy=\"{y}\" r=\"3\" fill=\"{colour}\"/>\
                     <text x=\"{}\" y=\"{}\" fill=\"{colour}\">{label}</text>",
                    x(f),
                    x(f) + 6,
                    y + 4
                );
            }
            (_, None, None) => {}
        }
        svg.push_str("</g>");
        match model.next_state(&state, a) {
            Some(next) => state = next,
            None => break,
        }
    }
    svg.push_str("</svg>");
    svg
}
