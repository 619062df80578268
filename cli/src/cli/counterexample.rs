//! The checker's counterexamples for people and for tools: `check --html`
//! writes one page with, per violated property, the sequence diagram and
//! each step as its trace line above the state of every actor, the fields
//! the step changed highlighted (as the TLA+ Toolbox shows an error trace);
//! `check --itf` writes each as an Informal Trace Format file (ITF JSON, read
//! by Apalache and Quint).

use models::checker::{CheckResult, Kind, Status};
use models::html::escape as esc;
use models::model::sequence::sequence_svg;
use models::model::view::{view, ActorView};
use models::model::{Action, ModelState, RecipeModel};
use models::properties::PropertyName;
use models::trace::{steps, Happened};
use serde_json::{json, Map, Value};
use stateright::Model;
use std::fmt::Write;

/// The counterexamples worth showing: violated `always` and `progress`
/// properties with a path (a `sometimes` that never happened has none).
fn counterexamples(r: &CheckResult) -> Vec<(PropertyName, &[Action])> {
    r.properties
        .iter()
        .filter(|p| p.status == Status::Violated && p.kind != Kind::Sometimes)
        .filter_map(|p| Some((p.name, p.path.as_deref()?)))
        .collect()
}

/// The states along `path`, the initial one first.
fn states(model: &RecipeModel, path: &[Action]) -> Vec<ModelState> {
    let mut out = vec![model.init_states().remove(0)];
    for &a in path {
        let next = model
            .next_state(out.last().expect("the initial state"), a)
            .expect("a checked path replays");
        out.push(next);
    }
    out
}

fn actors_table(now: &[ActorView], before: Option<&[ActorView]>) -> String {
    let mut html = String::from("<div class=\"actors\">");
    for (i, a) in now.iter().enumerate() {
        let old = before.and_then(|b| b.get(i));
        let changed_actor = old.is_some_and(|o| o != a);
        let _ = write!(
            html,
            "<table class=\"actor{}\"><caption>{}</caption>",
            if changed_actor { " touched" } else { "" },
            esc(&a.name)
        );
        for (j, (k, v)) in a.fields.iter().enumerate() {
            let changed = old.is_some_and(|o| o.fields.get(j).map(|f| &f.1) != Some(v));
            let _ = write!(
                html,
                "<tr{}><th>{}</th><td>{}{}</td></tr>",
                if changed { " class=\"changed\"" } else { "" },
                esc(k),
                if changed { "▸ " } else { "" },
                esc(v)
            );
        }
        html.push_str("</table>");
    }
    html.push_str("</div>");
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
         <code>progress</code> included:</p><table class=\"verdicts\"><tr><th>property</th>\
         <th>kind</th><th>result</th></tr>",
        esc(&cfg.to_string()),
        r.unique_states,
        if r.complete {
            ""
        } else {
            " (INCOMPLETE: stopped at the state limit)"
        }
    );
    for p in &r.properties {
        let (word, class) = match (p.kind, p.status) {
            (_, Status::Violated) => ("VIOLATED", "bad"),
            (_, Status::Holds) => ("holds", "good"),
            (_, Status::Unknown) => ("unknown", ""),
        };
        let kind = match p.kind {
            Kind::Always => "always",
            Kind::Sometimes => "sometimes",
            Kind::Progress => "progress",
        };
        let link = if counterexamples(r).iter().any(|(n, _)| *n == p.name) {
            format!("<a href=\"#{0}\">{0}</a>", p.name)
        } else {
            p.name.to_string()
        };
        let _ = write!(
            body,
            "<tr class=\"{class}\"><td>{link}</td><td>{kind}</td><td>{word}</td></tr>"
        );
    }
    body.push_str("</table>");
    for (name, path) in counterexamples(r) {
        let trace = steps(model, path);
        let states = states(model, path);
        let views: Vec<Vec<ActorView>> = states.iter().map(|s| view(model, s)).collect();
        let _ = write!(
            body,
            "<h2 id=\"{name}\">{name} violated: shortest counterexample, {} steps</h2>\
             <div class=\"diagram\">{}</div><ol class=\"steps\"><li value=\"0\"><details>\
             <summary>initial state</summary>{}</details></li>",
            trace.len(),
            sequence_svg(model, &states[0], path),
            actors_table(&views[0], None)
        );
        for (i, step) in trace.iter().enumerate() {
            let line = Happened(step).to_string();
            let last = i + 1 == trace.len();
            let _ = write!(
                body,
                "<li value=\"{}\"><details{}><summary>{}</summary>{}</details></li>",
                i + 1,
                if last { " open" } else { "" },
                esc(&line),
                actors_table(&views[i + 1], Some(&views[i]))
            );
        }
        body.push_str("</ol>");
    }
    if counterexamples(r).is_empty() {
        body.push_str("<p>No property is violated: no counterexample to show.</p>");
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>lockstep check: {}</title><style>{STYLE}</style></head><body>{body}</body></html>\n",
        esc(&cfg.to_string())
    )
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1em;color:#222}\
h1{font-size:1.2em}h2{font-size:1.1em;margin-top:2em}\
table.verdicts td,table.verdicts th{padding:.1em .8em;text-align:left}\
tr.bad td{color:#b00;font-weight:bold}tr.good td:last-child{color:#276}\
.diagram{overflow-x:auto;border:1px solid #ddd;margin:.5em 0}\
ol.steps summary{font-family:ui-monospace,monospace;cursor:pointer}\
.actors{display:flex;flex-wrap:wrap;gap:.6em;margin:.4em 0 .8em}\
table.actor{border:1px solid #ccc;border-collapse:collapse;font-size:12px;max-width:100%}\
table.actor.touched{border-color:#c60}\
table.actor caption{font-weight:bold;text-align:left}\
table.actor th{text-align:left;color:#555;padding:0 .5em;vertical-align:top;white-space:nowrap}\
table.actor td{padding:0 .5em;font-family:ui-monospace,monospace;word-break:break-word}\
tr.changed td,tr.changed th{background:#fff1c2}";

/// One counterexample as an ITF trace: per state, the step that led to it
/// (`action`) and a record per actor of its fields (strings).
pub fn itf(model: &RecipeModel, property: PropertyName, path: &[Action]) -> Value {
    let cfg = &model.cfg;
    let trace = steps(model, path);
    let states = states(model, path);
    let mut vars = vec!["action".to_string()];
    let mut out = Vec::with_capacity(states.len());
    for (i, s) in states.iter().enumerate() {
        let mut record = Map::new();
        record.insert("#meta".into(), json!({ "index": i }));
        let action = match i {
            0 => "init".to_string(),
            _ => trace[i - 1].to_string().trim_start().to_string(),
        };
        record.insert("action".into(), Value::String(action));
        for a in view(model, s) {
            if i == 0 {
                vars.push(a.name.clone());
            }
            let fields: Map<String, Value> = a
                .fields
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            record.insert(a.name, Value::Object(fields));
        }
        out.push(Value::Object(record));
    }
    json!({
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": format!("lockstep check: {cfg}"),
            "description": format!("shortest counterexample to {property}"),
        },
        "vars": vars,
        "states": out,
    })
}

/// Every counterexample of `r`, as (property, ITF).
pub fn itf_all(model: &RecipeModel, r: &CheckResult) -> Vec<(PropertyName, Value)> {
    counterexamples(r)
        .into_iter()
        .map(|(name, path)| (name, itf(model, name, path)))
        .collect()
}
