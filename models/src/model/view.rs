//! A state as its actors show it: for each client, the store, the guarded
//! resource and the fault budget, named fields with typed values — paths,
//! keys and sessions as the store writes them. The counterexample viewer
//! (`check --html`) shows them as text and highlights the fields a step
//! changed, the ITF export (`check --itf`) writes them as ITF values, and
//! the Explorer lists them.

mod debug;
mod why;

use super::{ModelState, RecipeModel, Status};
use crate::client::Phase;
use crate::ids::ClientIdx;
use crate::recipe::Face;
use std::fmt;

pub use debug::from_debug;
pub use why::breaking_step;

/// A field's value, typed as the Informal Trace Format types values, so
/// the viewer and the ITF export read one view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(u64),
    Bool(bool),
    /// Text as the store or the client library writes it: a path, a key, a
    /// session id, a message.
    Text(String),
    /// In order (a link's messages in flight).
    Seq(Vec<Value>),
    /// In no order that matters (written sorted).
    Set(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Tup(Vec<Value>),
    /// Named fields; names are identifiers.
    Record(Vec<(String, Value)>),
    /// One case of a sum type — a phase, a recipe's state, an option — with
    /// its value (`Value::unit()` when it has none), as Quint writes one.
    Variant(String, Box<Value>),
}

impl Value {
    /// What a case without a value carries: an empty record, as Quint
    /// writes one (`{"tag": "None", "value": {}}`).
    pub fn unit() -> Value {
        Value::Record(Vec::new())
    }

    /// A case without a value.
    pub fn tag(tag: &str) -> Value {
        Value::Variant(tag.to_string(), Box::new(Value::unit()))
    }

    /// An option: `Some` with the value, or `None`.
    pub fn option(v: Option<Value>) -> Value {
        match v {
            Some(v) => Value::Variant("Some".into(), Box::new(v)),
            None => Value::tag("None"),
        }
    }

    pub fn text(s: impl fmt::Display) -> Value {
        Value::Text(s.to_string())
    }

    fn record(fields: Vec<(&str, Value)>) -> Value {
        Value::Record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
}

/// Writes items a `sep` apart, `—` for none.
fn items<'a>(
    f: &mut fmt::Formatter,
    items: impl IntoIterator<Item = &'a Value>,
    sep: &str,
) -> fmt::Result {
    let mut none = true;
    for (i, v) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{v}")?;
        none = false;
    }
    if none {
        f.write_str("—")?;
    }
    Ok(())
}

/// The viewer's text: an option as its value or `—`, a case as its tag
/// with its value in parentheses, a record as `name: value` pairs.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Text(s) => f.write_str(s),
            Value::Seq(vs) | Value::Set(vs) => items(f, vs, "; "),
            Value::Tup(vs) => {
                f.write_str("(")?;
                items(f, vs, ", ")?;
                f.write_str(")")
            }
            Value::Map(kvs) => {
                if kvs.is_empty() {
                    return f.write_str("—");
                }
                for (i, (k, v)) in kvs.iter().enumerate() {
                    write!(f, "{}{k}: {v}", if i > 0 { "; " } else { "" })?;
                }
                Ok(())
            }
            Value::Record(fields) => {
                for (i, (k, v)) in fields.iter().enumerate() {
                    write!(f, "{}{k}: {v}", if i > 0 { ", " } else { "" })?;
                }
                Ok(())
            }
            Value::Variant(tag, v) => match (tag.as_str(), &**v) {
                ("None", _) => f.write_str("—"),
                ("Some", v) => write!(f, "{v}"),
                (_, Value::Record(fs)) if fs.is_empty() => f.write_str(tag),
                (_, v) => write!(f, "{tag}({v})"),
            },
        }
    }
}

/// One actor's fields, in a fixed order; field names are identifiers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields(pub Vec<(&'static str, Value)>);

impl Fields {
    /// As an ITF record.
    pub fn to_record(&self) -> Value {
        Value::record(self.0.clone())
    }
}

/// A state as its actors show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateView {
    pub clients: Vec<Fields>,
    pub store: Fields,
    pub resource: Fields,
    pub faults_left: Fields,
}

impl StateView {
    /// Every actor with the name people read: clients in order, then the
    /// store, the resource and the faults left.
    pub fn actors(&self) -> Vec<(String, &Fields)> {
        let clients = self
            .clients
            .iter()
            .enumerate()
            .map(|(c, f)| (format!("client {c}"), f));
        clients
            .chain([
                ("store".to_string(), &self.store),
                ("resource".to_string(), &self.resource),
                ("faults left".to_string(), &self.faults_left),
            ])
            .collect()
    }
}

/// Every actor as a block of `  field: value` lines (the Explorer's text).
impl fmt::Display for StateView {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (i, (name, fields)) in self.actors().into_iter().enumerate() {
            write!(f, "{}{name}", if i > 0 { "\n\n" } else { "" })?;
            for (k, v) in &fields.0 {
                write!(f, "\n  {}: {v}", label(k))?;
            }
        }
        Ok(())
    }
}

/// A field's name as people read it: `link_to_store` is "link to store".
pub fn label(field: &str) -> String {
    field.replace('_', " ")
}

/// The clients that believe they hold (lead, pass, …) in `state`, with
/// their tokens: every live client whose phase is a hold.
pub fn believers(state: &ModelState) -> Vec<(ClientIdx, u64)> {
    state
        .clients
        .iter()
        .enumerate()
        .filter(|(_, s)| s.status != Status::Crashed)
        .filter_map(|(c, s)| Some((c as ClientIdx, s.state.token()?)))
        .collect()
}

fn texts<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> Vec<Value> {
    items.into_iter().map(Value::text).collect()
}

/// What a client that believes it holds is said to do, in its
/// application's words: `believes it leads`, `has passed the barrier`
/// (its [`crate::apps::Spec::holders`] without the `who`).
pub fn holds_phrase(model: &RecipeModel) -> &'static str {
    let holders = model.cfg.recipe.app().spec().holders;
    holders.strip_prefix("who ").unwrap_or(holders)
}

/// Every actor of `state`.
pub fn view(model: &RecipeModel, state: &ModelState) -> StateView {
    StateView {
        clients: (0..state.clients.len())
            .map(|c| client_fields(model, state, c))
            .collect(),
        store: store_fields(model, state),
        resource: Fields(vec![(
            "accepted_writes",
            Value::Seq(
                state
                    .resource
                    .log
                    .iter()
                    .map(|a| {
                        Value::record(vec![
                            ("client", Value::Int(a.client.into())),
                            ("token", Value::Int(a.token)),
                            ("hold", Value::Int(a.hold.into())),
                        ])
                    })
                    .collect(),
            ),
        )]),
        faults_left: {
            let b = state.budget;
            Fields(vec![
                ("crashes", Value::Int(b.crashes.into())),
                ("pauses", Value::Int(b.pauses.into())),
                ("partitions", Value::Int(b.partitions.into())),
                ("lost_replies", Value::Int(b.lost_replies.into())),
                ("restarts", Value::Int(b.restarts.into())),
            ])
        },
    }
}

fn client_fields(model: &RecipeModel, state: &ModelState, c: usize) -> Fields {
    let slot = &state.clients[c];
    let st = &slot.state;
    let process = match slot.status {
        Status::Running => "running",
        Status::Paused => "paused",
        Status::Crashed => "crashed",
    };
    let mut fields = vec![
        ("process", Value::text(process)),
        (
            "link_to_store",
            Value::text(if slot.partitioned { "cut" } else { "up" }),
        ),
        ("session", Value::text(st.session)),
        ("connection", Value::text(st.connection)),
        ("phase", phase(st.phase)),
        ("rounds_done", Value::Int(st.rounds_done.into())),
        (
            "recipe_state",
            Value::option(st.recipe.as_ref().map(|r| from_debug(&format!("{r:?}")))),
        ),
        (
            "awaiting_reply_to",
            Value::option(st.pending.as_ref().map(|r| {
                Value::record(vec![
                    ("request", Value::text(r)),
                    ("epoch", Value::Int(st.epoch.into())),
                ])
            })),
        ),
        ("timers", Value::Set(texts(&slot.timers))),
        ("store_to_client", Value::Seq(texts(&slot.from_store))),
        ("client_to_store", Value::Seq(texts(&slot.to_store))),
        ("client_to_resource", Value::Seq(texts(&slot.to_resource))),
        ("resource_to_client", Value::Seq(texts(&slot.from_resource))),
    ];
    // Shown only where the run has them, so every state of a trace has the
    // same fields (an ITF record's type) and a run without them reads as
    // it always did.
    if model.cfg.reentries > 0 {
        fields.push(("reentries", from_debug(&format!("{:?}", st.nesting))));
    }
    // A timed check's countdowns: ticks until each timer and message may
    // come (and, after the dash, by when it must), and how long the
    // current pause or partition has lasted.
    if let Some(clock) = slot.clock.0.as_deref() {
        let link = |i: usize| Value::Seq(texts(&clock.links[i]));
        fields.push((
            "ticks_left",
            Value::record(vec![
                (
                    "timers",
                    Value::Seq(
                        slot.timers
                            .iter()
                            .zip(&clock.timers)
                            .map(|(t, d)| Value::text(format!("{t}: {d}")))
                            .collect(),
                    ),
                ),
                ("store_to_client", link(0)),
                ("client_to_store", link(1)),
                ("client_to_resource", link(2)),
                ("resource_to_client", link(3)),
                ("fault_lasted", Value::Int(clock.fault.into())),
            ]),
        ));
    }
    if model.cfg.acquire_timeout || !model.cfg.recipe.longest_sleep().is_zero() {
        fields.push((
            "clocks",
            Value::record(vec![
                ("sleeping", Value::Bool(st.clocks.sleeping())),
                ("timed_out", Value::Bool(st.clocks.timed_out())),
            ]),
        ));
    }
    Fields(fields)
}

/// A client's phase: a hold with its token, the store header it was
/// decided at, whether the deciding message showed it owning its entry,
/// and its writes.
fn phase(p: Phase) -> Value {
    match p {
        Phase::Connecting => Value::tag("Connecting"),
        Phase::Thinking => Value::tag("Thinking"),
        Phase::Acquiring => Value::tag("Acquiring"),
        Phase::Holding {
            token,
            granted,
            owned,
            sent,
            acked,
        } => Value::Variant(
            "Holding".into(),
            Box::new(Value::record(vec![
                ("token", Value::Int(token)),
                ("granted", Value::Int(granted)),
                ("owned", Value::Bool(owned)),
                ("sent", Value::Int(sent.into())),
                ("acked", Value::Int(acked.into())),
            ])),
        ),
        Phase::Releasing => Value::tag("Releasing"),
        Phase::Done => Value::tag("Done"),
    }
}

fn store_fields(model: &RecipeModel, state: &ModelState) -> Fields {
    let store = &state.store;
    let mut fields = vec![(
        "sessions",
        Value::Map(
            store
                .sessions
                .iter()
                .map(|(s, alive)| {
                    let status = if *alive { "alive" } else { "ended" };
                    (Value::text(s), Value::text(status))
                })
                .collect(),
        ),
    )];
    let watch = |(p, s): &(crate::ids::ZPath, crate::ids::SessionId)| {
        Value::record(vec![("path", Value::text(p)), ("session", Value::text(s))])
    };
    match model.cfg.recipe.face() {
        Face::ZooKeeper => {
            let zk = &store.zk;
            fields.push(("zxid", Value::Int(zk.zxid)));
            fields.push((
                "nodes",
                Value::Map(
                    zk.nodes
                        .iter()
                        .map(|(p, n)| {
                            let owner = n.ephemeral_owner.map(Value::text);
                            let node = Value::record(vec![
                                ("czxid", Value::Int(n.czxid)),
                                ("ephemeral_owner", Value::option(owner)),
                            ]);
                            (Value::text(p), node)
                        })
                        .collect(),
                ),
            ));
            fields.push((
                "data_watches",
                Value::Set(zk.data_watches.into_iter().map(watch).collect()),
            ));
            fields.push((
                "child_watches",
                Value::Set(zk.child_watches.into_iter().map(watch).collect()),
            ));
        }
        Face::Etcd => {
            let kv = &store.etcd;
            fields.push(("revision", Value::Int(kv.revision)));
            fields.push((
                "keys",
                Value::Map(
                    kv.kvs
                        .iter()
                        .map(|k| {
                            let lease = k.lease.map(Value::text);
                            let key = Value::record(vec![
                                ("create_revision", Value::Int(k.create_revision)),
                                ("lease", Value::option(lease)),
                                ("value", from_debug(&format!("{:?}", k.value))),
                            ]);
                            (Value::text(k.key), key)
                        })
                        .collect(),
                ),
            ));
            let watcher = |what: String, from: u64, client: ClientIdx| {
                Value::record(vec![
                    ("keys", Value::Text(what)),
                    ("from_revision", Value::Int(from)),
                    ("client", Value::Int(client.into())),
                ])
            };
            let watches = kv
                .watchers
                .iter()
                .map(|w| watcher(w.key.to_string(), w.start_revision, w.client))
                .chain(
                    kv.range_watchers
                        .iter()
                        .map(|w| watcher(w.keys.to_string(), w.start_revision, w.client)),
                );
            fields.push(("watches", Value::Set(watches.collect())));
        }
        Face::Redis => {
            let masters = store.redis.masters.iter().map(|space| {
                Value::Map(
                    space
                        .keys
                        .iter()
                        .map(|e| {
                            let ttl = e.ttl.map(|t| {
                                Value::record(vec![
                                    ("ms", Value::Int(t.ms.into())),
                                    ("set_by", Value::text(t.setter)),
                                ])
                            });
                            let entry = Value::record(vec![
                                ("value", from_debug(&format!("{:?}", e.value))),
                                ("ttl", Value::option(ttl)),
                            ]);
                            (Value::text(e.key), entry)
                        })
                        .collect(),
                )
            });
            fields.push(("masters", Value::Seq(masters.collect())));
        }
        Face::Consul => {
            let Some(kv) = store.consul.as_deref() else {
                return Fields(fields);
            };
            fields.push(("index", Value::Int(kv.index)));
            let pairs = kv.pairs.iter().map(|p| {
                let pair = Value::record(vec![
                    ("value", from_debug(&format!("{:?}", p.value))),
                    ("session", Value::option(p.session.map(Value::text))),
                    ("lock_index", Value::Int(p.lock_index)),
                    ("modify_index", Value::Int(p.modify_index)),
                ]);
                (Value::text(p.key), pair)
            });
            fields.push(("keys", Value::Map(pairs.collect())));
            let delays = kv.delays.iter().map(|(k, _)| Value::text(k));
            fields.push(("lock_delays", Value::Set(delays.collect())));
            let queries = kv.queries.iter().map(|q| {
                Value::record(vec![
                    ("client", Value::Int(q.client.into())),
                    ("key", Value::text(q.key)),
                    ("index", Value::Int(q.index)),
                ])
            });
            fields.push(("blocking_queries", Value::Set(queries.collect())));
        }
    }
    fields.push((
        "session_timers",
        Value::Set(texts(state.store_timers.iter())),
    ));
    if let Some(dues) = state.store_clock.0.as_deref() {
        let left = state
            .store_timers
            .iter()
            .zip(dues)
            .map(|(t, d)| format!("{t}: {d}"));
        fields.push(("session_ticks_left", Value::Seq(texts(left))));
    }
    Fields(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_as_their_value_and_cases_as_their_tag() {
        let v = Value::Variant(
            "Holding".into(),
            Box::new(Value::record(vec![
                ("token", Value::Int(2)),
                ("owned", Value::Bool(false)),
                ("node", Value::option(Some(Value::text("/lock/x")))),
                ("czxid", Value::option(None)),
            ])),
        );
        assert_eq!(
            v.to_string(),
            "Holding(token: 2, owned: false, node: /lock/x, czxid: —)"
        );
        assert_eq!(Value::Seq(vec![]).to_string(), "—");
        assert_eq!(Value::tag("Done").to_string(), "Done");
    }
}
