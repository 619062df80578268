//! A state as its actors show it: for each client, the store, the guarded
//! resource and the fault budget, named fields with readable values. The
//! counterexample viewer (`check --html`) highlights the fields a step
//! changed, and the ITF export (`check --itf`) writes one record per actor.

use super::{ModelState, RecipeModel, Status};
use crate::recipe::Face;
use serde::Serialize;

/// One actor's fields, in a fixed order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ActorView {
    pub name: String,
    pub fields: Vec<(String, String)>,
}

fn list<T>(items: impl IntoIterator<Item = T>, show: impl Fn(T) -> String) -> String {
    let shown: Vec<String> = items.into_iter().map(show).collect();
    if shown.is_empty() {
        "—".to_string()
    } else {
        shown.join("; ")
    }
}

/// Every actor of `state`: clients in order, then the store, the resource
/// and the faults left.
pub fn view(model: &RecipeModel, state: &ModelState) -> Vec<ActorView> {
    let mut out = Vec::with_capacity(state.clients.len() + 3);
    for (c, slot) in state.clients.iter().enumerate() {
        let st = &slot.state;
        let field = |k: &str, v: String| (k.to_string(), v);
        out.push(ActorView {
            name: format!("client {c}"),
            fields: vec![
                field(
                    "process",
                    match slot.status {
                        Status::Running => "running",
                        Status::Paused => "paused",
                        Status::Crashed => "crashed",
                    }
                    .to_string(),
                ),
                field(
                    "link to store",
                    if slot.partitioned { "cut" } else { "up" }.to_string(),
                ),
                field("session", st.session.to_string()),
                field("connection", st.connection.to_string()),
                field("phase", phase(st)),
                field("rounds done", st.rounds_done.to_string()),
                field(
                    "recipe state",
                    st.recipe
                        .as_ref()
                        .map_or("—".to_string(), |r| format!("{r:?}")),
                ),
                field(
                    "awaiting reply to",
                    st.pending
                        .as_ref()
                        .map_or("—".to_string(), |r| format!("{r} (epoch {})", st.epoch)),
                ),
                field("timers", list(&slot.timers, |t| format!("{t:?}"))),
                field("store → client", list(&slot.from_store, |m| m.to_string())),
                field("client → store", list(&slot.to_store, |m| m.to_string())),
                field(
                    "client → resource",
                    list(&slot.to_resource, |m| m.to_string()),
                ),
                field(
                    "resource → client",
                    list(&slot.from_resource, |m| m.to_string()),
                ),
            ],
        });
    }
    let store = &state.store;
    let mut fields = vec![(
        "sessions".to_string(),
        list(&store.sessions, |(s, alive)| {
            format!("{s} {}", if *alive { "alive" } else { "ended" })
        }),
    )];
    match model.cfg.recipe.face() {
        Face::ZooKeeper => {
            let zk = &store.zk;
            fields.push(("zxid".into(), zk.zxid.to_string()));
            fields.push((
                "nodes".into(),
                list(&zk.nodes, |(p, n)| match n.ephemeral_owner {
                    Some(owner) => format!("{p} (czxid {}, ephemeral of {owner})", n.czxid),
                    None => format!("{p} (czxid {})", n.czxid),
                }),
            ));
            fields.push((
                "data watches".into(),
                list(&zk.data_watches, |(p, s)| format!("{p} by {s}")),
            ));
            fields.push((
                "child watches".into(),
                list(&zk.child_watches, |(p, s)| format!("{p} by {s}")),
            ));
        }
        Face::Etcd => {
            let kv = &store.etcd;
            fields.push(("revision".into(), kv.revision.to_string()));
            fields.push((
                "keys".into(),
                list(&kv.kvs, |k| {
                    format!(
                        "{} (create rev {}{}{})",
                        k.key,
                        k.create_revision,
                        k.lease.map(|l| format!(", lease {l}")).unwrap_or_default(),
                        if k.value.is_empty() {
                            String::new()
                        } else {
                            format!(", value {}", k.value)
                        }
                    )
                }),
            ));
            fields.push((
                "watches".into(),
                list(&kv.watchers, |w| {
                    format!(
                        "{} from rev {} by client {}",
                        w.key, w.start_revision, w.client
                    )
                }),
            ));
        }
    }
    fields.push((
        "session timers".into(),
        list(state.store_timers.iter(), |t| format!("{t:?}")),
    ));
    out.push(ActorView {
        name: "store".into(),
        fields,
    });
    out.push(ActorView {
        name: "resource".into(),
        fields: vec![(
            "accepted writes".into(),
            list(&state.resource.log, |a| {
                format!("client {} token {} (hold #{})", a.client, a.token, a.hold)
            }),
        )],
    });
    let b = state.budget;
    out.push(ActorView {
        name: "faults left".into(),
        fields: vec![
            ("crashes".into(), b.crashes.to_string()),
            ("pauses".into(), b.pauses.to_string()),
            ("partitions".into(), b.partitions.to_string()),
            ("lost replies".into(), b.lost_replies.to_string()),
        ],
    });
    out
}

/// A client's phase, with its re-entries and an acquisition's clocks when
/// it has any (so a view without them reads as it always did).
fn phase(st: &crate::client::ClientState) -> String {
    let mut out = format!("{:?}", st.phase);
    if st.nesting != crate::client::Nesting::default() {
        out.push_str(&format!(", {:?}", st.nesting));
    }
    if st.clocks != crate::client::Clocks::default() {
        out.push_str(&format!(", {:?}", st.clocks));
    }
    out
}
