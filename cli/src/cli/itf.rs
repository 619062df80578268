//! `check --itf`: each counterexample as an Informal Trace Format file (ITF
//! JSON, https://apalache-mc.org/docs/adr/015adr-trace.html), which
//! Apalache and Quint read. Values are typed as ITF types them — integers
//! `{"#bigint": "1"}`, sets `{"#set": […]}`, maps `{"#map": [[k, v], …]}`,
//! tuples `{"#tup": […]}`, records as objects, a case of a sum type as
//! Quint writes one (`{"tag": …, "value": …}`) — and the variables are
//! identifiers: `clients` (a map from a client's number to its record),
//! `store`, `resource`, `faults_left`. The step that led to a state is
//! Quint's `mbt::actionTaken` (its kind, `Deliver`, `Timeout`, …, `init`
//! for the first state) with the client it is about in
//! `mbt::nondetPicks`, and in words in `step`; so a model-based test can
//! replay it against a specification.

use super::counterexample::{counterexamples, states};
use models::checker::CheckResult;
use models::model::describe::action_name;
use models::model::view::{view, Value};
use models::model::{Action, RecipeModel};
use models::properties::PropertyName;
use models::trace::steps;
use serde_json::{json, Map, Value as Json};

/// The state variables, in the order each state lists them.
pub const VARS: [&str; 7] = [
    "mbt::actionTaken",
    "mbt::nondetPicks",
    "step",
    "clients",
    "store",
    "resource",
    "faults_left",
];

/// A view's value as ITF JSON.
pub fn to_itf(v: &Value) -> Json {
    match v {
        Value::Int(n) => json!({ "#bigint": n.to_string() }),
        Value::Bool(b) => Json::Bool(*b),
        Value::Text(s) => Json::String(s.clone()),
        Value::Seq(items) => Json::Array(items.iter().map(to_itf).collect()),
        Value::Set(items) => json!({ "#set": items.iter().map(to_itf).collect::<Vec<_>>() }),
        Value::Tup(items) => json!({ "#tup": items.iter().map(to_itf).collect::<Vec<_>>() }),
        Value::Map(kvs) => {
            let pairs: Vec<Json> = kvs
                .iter()
                .map(|(k, v)| Json::Array(vec![to_itf(k), to_itf(v)]))
                .collect();
            json!({ "#map": pairs })
        }
        Value::Record(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), to_itf(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Variant(tag, value) => json!({ "tag": tag, "value": to_itf(value) }),
    }
}

/// What a specification's step chose: the client it is about (`None`
/// for the initial state and a tick).
fn nondet_picks(action: Option<Action>) -> Json {
    let client = action
        .and_then(Action::client)
        .map(|c| Value::Int(c.into()));
    json!({ "client": to_itf(&Value::option(client)) })
}

/// One counterexample as an ITF trace.
pub fn itf(model: &RecipeModel, property: PropertyName, path: &[Action]) -> Json {
    let cfg = &model.cfg;
    let trace = steps(model, path);
    let states = states(model, path);
    let mut out = Vec::with_capacity(states.len());
    for (i, s) in states.iter().enumerate() {
        let action = i.checked_sub(1).map(|a| path[a]);
        let v = view(model, s);
        let clients = Value::Map(
            v.clients
                .iter()
                .enumerate()
                .map(|(c, f)| (Value::Int(c as u64), f.to_record()))
                .collect(),
        );
        let step = match i {
            0 => "init".to_string(),
            _ => trace[i - 1].to_string().trim_start().to_string(),
        };
        let values = [
            Json::String(action.map_or("init", action_name).to_string()),
            nondet_picks(action),
            Json::String(step),
            to_itf(&clients),
            to_itf(&v.store.to_record()),
            to_itf(&v.resource.to_record()),
            to_itf(&v.faults_left.to_record()),
        ];
        let mut record = Map::new();
        record.insert("#meta".into(), json!({ "index": i }));
        for (name, value) in VARS.iter().zip(values) {
            record.insert(name.to_string(), value);
        }
        out.push(Json::Object(record));
    }
    json!({
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": format!("lockstep check: {cfg}"),
            "description": format!("shortest counterexample to {property}"),
        },
        "vars": VARS,
        "states": out,
    })
}

/// Every counterexample of `r`, as (property, ITF).
pub fn itf_all(model: &RecipeModel, r: &CheckResult) -> Vec<(PropertyName, Json)> {
    counterexamples(r)
        .into_iter()
        .map(|(name, path)| (name, itf(model, name, path)))
        .collect()
}
