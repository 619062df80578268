//! The checker's counterexamples for people: `check --html` writes one page
//! with every property's verdict (the violated first) and, per violated
//! property, the sequence diagram — who holds at each step marked on its
//! lifeline, the row where the property breaks in red, each row a link to
//! its step — then each step as its trace line above the state of every
//! actor, the fields the step changed highlighted (as the TLA+ Toolbox
//! shows an error trace), the breaking step open with why it breaks.
//! `check --itf` is [`super::itf`].

use models::checker::{CheckResult, Kind, Status};
use models::html::escape as esc;
use models::model::sequence::{sequence_svg_marked, step_anchor, Marks};
use models::model::view::{breaking_step, label, view, Fields, StateView};
use models::model::{Action, ModelState, RecipeModel};
use models::properties::PropertyName;
use models::trace::{steps, Happened};
use stateright::Model;
use std::fmt::Write;

/// The counterexamples worth showing: violated `always` and `progress`
/// properties with a path (a `sometimes` that never happened has none).
pub(super) fn counterexamples(r: &CheckResult) -> Vec<(PropertyName, &[Action])> {
    r.properties
        .iter()
        .filter(|p| p.status == Status::Violated && p.kind != Kind::Sometimes)
        .filter_map(|p| Some((p.name, p.path.as_deref()?)))
        .collect()
}

/// Where a progress property's counterexample starts its lap, if it is a
/// livelock: `path[from..]` repeats forever.
fn lap_start(r: &CheckResult, name: PropertyName) -> Option<usize> {
    r.properties
        .iter()
        .find(|p| p.name == name)
        .and_then(|p| p.repeats_from)
}

/// A livelock's why: the lap's steps, and whose they are.
fn lap_why(name: PropertyName, path: &[Action], from: usize) -> (usize, String) {
    let mut who: Vec<String> = path[from..]
        .iter()
        .filter_map(|a| a.client().map(|c| format!("client {c}")))
        .collect();
    who.sort_unstable();
    who.dedup();
    (
        from + 1,
        format!(
            "steps {} to {} repeat forever, taken by {}: the requests go on and {name}'s goal              is never reached (a livelock)",
            from + 1,
            path.len(),
            who.join(" and ")
        ),
    )
}

/// The states along `path`, the initial one first.
pub(super) fn states(model: &RecipeModel, path: &[Action]) -> Vec<ModelState> {
    let mut out = vec![model.init_states().remove(0)];
    for &a in path {
        let next = model
            .next_state(out.last().expect("the initial state"), a)
            .expect("a checked path replays");
        out.push(next);
    }
    out
}

/// One actor's table; the fields that differ from `before` highlighted.
fn actor_table(name: &str, now: &Fields, before: Option<&Fields>) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<table class=\"actor{}\"><caption>{}</caption>",
        if before.is_some_and(|b| b != now) {
            " touched"
        } else {
            ""
        },
        esc(name)
    );
    for (j, (k, v)) in now.0.iter().enumerate() {
        let changed = before.is_some_and(|b| b.0.get(j).map(|f| &f.1) != Some(v));
        let _ = write!(
            html,
            "<tr{}><th>{}</th><td>{}{}</td></tr>",
            if changed { " class=\"changed\"" } else { "" },
            esc(&label(k)),
            if changed { "▸ " } else { "" },
            esc(&v.to_string())
        );
    }
    html.push_str("</table>");
    html
}

fn actors_table(now: &StateView, before: Option<&StateView>) -> String {
    let old = before.map(|b| b.actors());
    let mut html = String::from("<div class=\"actors\">");
    for (i, (name, fields)) in now.actors().into_iter().enumerate() {
        let was = old.as_ref().and_then(|o| o.get(i)).map(|(_, f)| *f);
        html.push_str(&actor_table(&name, fields, was));
    }
    html.push_str("</div>");
    html
}

/// The verdict table, the violated properties first (the headline is the
/// first of them), each linking to its counterexample.
fn verdicts(r: &CheckResult) -> String {
    let shown = counterexamples(r);
    let mut rows: Vec<_> = r.properties.iter().collect();
    rows.sort_by_key(|p| p.status != Status::Violated);
    let mut html = String::from(
        "<table class=\"verdicts\"><tr><th>property</th><th>kind</th><th>result</th></tr>",
    );
    for p in rows {
        let (word, class) = match p.status {
            Status::Violated => ("VIOLATED", "bad"),
            Status::Holds => ("holds", "good"),
            Status::Unknown => ("unknown", ""),
        };
        let kind = match p.kind {
            Kind::Always => "always",
            Kind::Sometimes => "sometimes",
            Kind::Progress => "progress",
        };
        let link = if shown.iter().any(|(n, _)| *n == p.name) {
            format!("<a href=\"#{0}\">{0}</a>", p.name)
        } else {
            p.name.to_string()
        };
        let _ = write!(
            html,
            "<tr class=\"{class}\"><td>{link}</td><td>{kind}</td><td>{word}</td></tr>"
        );
    }
    html.push_str("</table>");
    html
}

/// One counterexample: its diagram and its steps, the breaking one open
/// with why.
fn counterexample(
    model: &RecipeModel,
    name: PropertyName,
    path: &[Action],
    lap: Option<usize>,
) -> String {
    let trace = steps(model, path);
    let states = states(model, path);
    let views: Vec<StateView> = states.iter().map(|s| view(model, s)).collect();
    let breaking = match lap {
        Some(from) => Some(lap_why(name, path, from)),
        None => breaking_step(model, &states, path, name),
    };
    let marks = Marks {
        property: Some(name.name()),
        breaking: breaking.as_ref().map(|(n, why)| (*n, why.as_str())),
    };
    let mut html = String::new();
    let _ = write!(
        html,
        "<h2 id=\"{name}\">{name} violated: shortest counterexample, {} steps</h2>",
        trace.len()
    );
    if let Some((n, why)) = &breaking {
        let _ = write!(
            html,
            "<p class=\"headline\"><a href=\"#{}\">step {n}</a>: {}</p>",
            step_anchor(name.name(), *n),
            esc(why)
        );
    }
    let _ = write!(
        html,
        "<div class=\"diagram\">{}</div><ol class=\"steps\">",
        sequence_svg_marked(model, &states[0], path, marks)
    );
    let lines = std::iter::once("initial state".to_string())
        .chain(trace.iter().map(|step| Happened(step).to_string()));
    for (i, line) in lines.enumerate() {
        let why = breaking.as_ref().filter(|(n, _)| *n == i).map(|(_, w)| w);
        let _ = write!(
            html,
            "<li id=\"{}\" value=\"{i}\"{}><details{}><summary>{}</summary>{}{}</details></li>",
            step_anchor(name.name(), i),
            if why.is_some() {
                " class=\"breaking\""
            } else {
                ""
            },
            if why.is_some() { " open" } else { "" },
            esc(&line),
            why.map(|w| format!("<p class=\"why\">✗ {}: {}</p>", name, esc(w)))
                .unwrap_or_default(),
            actors_table(&views[i], i.checked_sub(1).map(|b| &views[b]))
        );
    }
    html.push_str("</ol>");
    html
}

/// The page: the configuration, every property's verdict, and each
/// counterexample step by step.
pub fn html_page(model: &RecipeModel, r: &CheckResult) -> String {
    let cfg = &model.cfg;
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>lockstep check: {}</h1><p>{} unique states{}. Every property, \
         <code>progress</code> included:</p>{}",
        esc(&cfg.to_string()),
        r.unique_states,
        if r.complete {
            ""
        } else {
            " (INCOMPLETE: stopped at the state limit)"
        },
        verdicts(r)
    );
    let shown = counterexamples(r);
    if shown.is_empty() {
        body.push_str("<p>No property is violated: no counterexample to show.</p>");
    } else {
        body.push_str(
            "<p class=\"controls\"><button id=\"expand-all\" type=\"button\">expand all steps\
             </button> Each step's row on a diagram links to its state; a green bar on a \
             lifeline marks who ",
        );
        body.push_str(&esc(models::model::view::holds_phrase(model)));
        body.push_str(" after that step; the red row is where the property breaks.</p>");
    }
    for (name, path) in shown {
        body.push_str(&counterexample(model, name, path, lap_start(r, name)));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>lockstep check: {}</title><style>{STYLE}</style></head><body>{body}\
         <script>{SCRIPT}</script></body></html>\n",
        esc(&cfg.to_string())
    )
}

/// Expand all (or collapse all) steps; a link to a step opens it.
const SCRIPT: &str = "(function(){\
var b=document.getElementById('expand-all');\
function all(open){document.querySelectorAll('ol.steps details').forEach(function(d){d.open=open;});}\
if(b){b.addEventListener('click',function(){var open=b.getAttribute('data-open')!=='1';all(open);\
b.setAttribute('data-open',open?'1':'0');b.textContent=open?'collapse all steps':'expand all steps';});}\
function reveal(){var id=decodeURIComponent(location.hash.slice(1));var li=id&&document.getElementById(id);\
var d=li&&li.querySelector('details');if(d){d.open=true;}}\
window.addEventListener('hashchange',reveal);reveal();})();";

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1em;color:#222}\
h1{font-size:1.2em}h2{font-size:1.1em;margin-top:2em}\
table.verdicts td,table.verdicts th{padding:.1em .8em;text-align:left}\
tr.bad td{color:#b00;font-weight:bold}tr.good td:last-child{color:#276}\
p.headline{font-weight:bold;color:#b00}\
.diagram{overflow-x:auto;border:1px solid #ddd;margin:.5em 0}\
.diagram a:hover rect:first-of-type{fill:#eef4ff}\
.diagram a:hover rect.breaking-row{fill:#fbcfc8}\
ol.steps summary{font-family:ui-monospace,monospace;cursor:pointer}\
ol.steps li:target>details>summary{background:#eef4ff}\
li.breaking>details>summary{color:#b00;font-weight:bold}\
p.why{color:#b00;font-weight:bold;margin:.3em 0}\
.actors{display:flex;flex-wrap:wrap;gap:.6em;margin:.4em 0 .8em}\
table.actor{border:1px solid #ccc;border-collapse:collapse;font-size:12px;max-width:100%}\
table.actor.touched{border-color:#c60}\
table.actor caption{font-weight:bold;text-align:left}\
table.actor th{text-align:left;color:#555;padding:0 .5em;vertical-align:top;white-space:nowrap}\
table.actor td{padding:0 .5em;font-family:ui-monospace,monospace;word-break:break-word}\
tr.changed td,tr.changed th{background:#fff1c2}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_livelock_breaks_where_its_lap_starts_and_names_who_loops() {
        let path = [Action::Crash(0), Action::Pause(1), Action::Resume(1)];
        let (step, why) = lap_why(PropertyName::QueueDrains, &path, 1);
        assert_eq!(step, 2);
        assert!(
            why.starts_with("steps 2 to 3 repeat forever, taken by client 1:"),
            "{why}"
        );
        assert!(why.contains("queue_drains"), "{why}");
        assert!(!why.contains("client 0"), "{why}");
    }
}
