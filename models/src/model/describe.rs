//! Each action in words: who sent what to whom, which timer fired, which
//! fault struck. Counterexample traces, the Explorer and the checker's
//! symmetry audit all read it.

use super::{Action, Link, ModelState};

fn client(c: crate::ids::ClientIdx) -> String {
    format!("client {c}")
}

/// (kind, from, to, what) of `action` taken in `state`.
/// Where client `c`'s reconnect lands, if an ensemble moves it: ` to
/// server 2 (…)`.
fn moves(state: &ModelState, c: crate::ids::ClientIdx) -> String {
    state
        .store
        .ensemble
        .as_ref()
        .and_then(|e| e.reconnect_words(c))
        .map(|w| format!(" {w}"))
        .unwrap_or_default()
}

pub fn describe(state: &ModelState, action: Action) -> (&'static str, String, String, String) {
    match action {
        Action::Deliver(c, link) => {
            let slot = &state.clients[c as usize];
            let (from, to, queue) = match link {
                Link::StoreToClient => ("store".to_string(), client(c), &slot.from_store),
                Link::ClientToStore => (client(c), "store".to_string(), &slot.to_store),
                Link::ClientToResource => (client(c), "resource".to_string(), &slot.to_resource),
                Link::ResourceToClient => ("resource".to_string(), client(c), &slot.from_resource),
            };
            let what = queue.first().map(|m| m.to_string()).unwrap_or_default();
            ("deliver", from, to, what)
        }
        Action::Timeout(c, t) => {
            let what = t.to_string();
            ("timer", client(c), client(c), what)
        }
        Action::Expire(s) => (
            "expire",
            "store".into(),
            client(s.client),
            // A timed check keeps the store's clock; an untimed one lets a
            // session expire whenever its owner is silent.
            match state.store_clock.0.is_some() {
                true => format!("session {s} expires (its timeout ran out)"),
                false => format!("session {s} expires (its owner is silent)"),
            },
        ),
        Action::ExpireKey {
            setter,
            master,
            key,
        } => (
            "expire",
            "store".into(),
            client(setter),
            format!("the TTL of {key} on master {master} (set by client {setter}) runs out"),
        ),
        Action::CheckCritical(c) => (
            "fault",
            client(c),
            "store".into(),
            "its node check goes critical: the store invalidates its session at once".into(),
        ),
        Action::EndLockDelay(s) => (
            "expire",
            "store".into(),
            client(s.client),
            format!("the lock-delay that the end of session {s} started is over"),
        ),
        Action::RestartMaster(m) => (
            "fault",
            format!("master {m}"),
            String::new(),
            // The state does not say how the masters persist.
            "restarts: empty without persistence, its keys kept with appendfsync always".into(),
        ),
        Action::ClockJump(m) => (
            "fault",
            format!("master {m}"),
            String::new(),
            "its clock jumps forward: every key with a TTL expires".into(),
        ),
        Action::Replicate => (
            "replicate",
            "master 0".into(),
            "replica".into(),
            "the replica receives the master's oldest change".into(),
        ),
        Action::Apply(f) => (
            "apply",
            format!("server {}", server_of_slot(state, f)),
            format!("server {}", server_of_slot(state, f)),
            match state
                .store
                .ensemble
                .as_ref()
                .and_then(|e| e.next_entry(usize::from(f)))
            {
                Some(entry) => format!("applies {entry}"),
                None => "has nothing to apply".into(),
            },
        ),
        Action::Failover if state.store.ensemble.is_some() => (
            "fault",
            "leader".into(),
            String::new(),
            "is cut off from its followers: it serves its clients on, believing it leads".into(),
        ),
        Action::Elect if leases(state) => (
            "recover",
            "followers".into(),
            String::new(),
            format!(
                "elect server {} (an election timeout without a leader); every lease starts \
                 its time-to-live again (and an election timeout more), and the members keep \
                 their clients",
                elected(state)
            ),
        ),
        Action::StepDown if leases(state) => (
            "recover",
            "old leader".into(),
            String::new(),
            "hears no quorum for an election timeout (CheckQuorum) and stops leading: it keeps \
             its clients, with no leader"
                .into(),
        ),
        Action::Elect => (
            "recover",
            "followers".into(),
            String::new(),
            format!(
                "elect server {} (the most log, the highest id); every session's timer starts \
                 again",
                elected(state)
            ),
        ),
        Action::StepDown => (
            "recover",
            "old leader".into(),
            String::new(),
            "finds no quorum and stops leading: its clients reconnect elsewhere".into(),
        ),
        Action::Isolate(f) => (
            "fault",
            format!("server {}", server_of_slot(state, f)),
            String::new(),
            match state
                .store
                .ensemble
                .as_ref()
                .is_some_and(|e| e.cfg.0.leases)
            {
                // An etcd member forwards keepalives to the leader's lessor.
                true => "is cut off from the leader: it serves its clients' serializable reads \
                         from its own state, answers no keepalive, and holds what it would \
                         propose until the cut heals"
                    .into(),
                false => "is cut off from the leader: it serves its clients' reads and pings \
                          from its own state, and holds what it would pass on until the cut \
                          heals"
                    .into(),
            },
        ),
        Action::Mute(f) => (
            "fault",
            format!("server {}", server_of_slot(state, f)),
            String::new(),
            "is muted: the leader hears nothing from it, while it still applies the leader's \
             commits; it serves its clients' reads and pings, and holds what it would pass on \
             until the link heals"
                .into(),
        ),
        Action::DropMuted(f) => (
            "recover",
            format!("server {}", server_of_slot(state, f)),
            String::new(),
            "is dropped by the leader (no word from it for syncLimit × tickTime): its clients \
             reconnect elsewhere"
                .into(),
        ),
        Action::GiveUpLeader(f) => (
            "recover",
            format!("server {}", server_of_slot(state, f)),
            String::new(),
            "gives the leader up (syncLimit × tickTime): its clients reconnect elsewhere".into(),
        ),
        Action::Rejoin(f) => (
            "recover",
            format!("server {}", server_of_slot(state, f)),
            String::new(),
            "hears the leader again and follows it".into(),
        ),
        Action::Failover if state.store.consul.is_some() => (
            "fault",
            "leader".into(),
            String::new(),
            "fails over to a server restored from a snapshot: lock-delays forgotten, session \
             TTLs started again"
                .into(),
        ),
        Action::Failover => (
            "fault",
            "replica".into(),
            String::new(),
            "is promoted in master 0's place (what it had not received is lost)".into(),
        ),
        Action::Crash(c) => ("fault", client(c), String::new(), "crashes".into()),
        Action::Restart(c) => (
            "recover",
            client(c),
            "store".into(),
            "restarts as a new process: its saved storage, a new session on a new connection \
             (its predecessor's watches closed, nothing its connection carried arrives)"
                .into(),
        ),
        Action::Pause(c) => (
            "fault",
            client(c),
            String::new(),
            "pauses (process frozen)".into(),
        ),
        Action::Resume(c) => ("recover", client(c), String::new(), "resumes".into()),
        Action::ResumeReconnect(c) => (
            "recover",
            client(c),
            "store".into(),
            format!(
                "resumes past its read timeout: SUSPENDED, reconnects on a new connection{} \
                 (what was in flight is lost): RECONNECTED if its session lives, else told LOST",
                moves(state, c)
            ),
        ),
        Action::Partition(c) => (
            "fault",
            client(c),
            "store".into(),
            "link to the store is cut".into(),
        ),
        Action::Heal(c) => (
            "recover",
            client(c),
            "store".into(),
            "link to the store heals".into(),
        ),
        Action::Reconnect(c) => (
            "recover",
            client(c),
            "store".into(),
            format!(
                "SUSPENDED past the read timeout, reconnects on a new connection{} (what was \
                 in flight is lost): RECONNECTED if its session lives, else told LOST",
                moves(state, c)
            ),
        ),
        Action::GiveUpServer(c) => (
            "recover",
            client(c),
            "store".into(),
            format!(
                "hears nothing from its server for its read timeout (its pings' answers wait \
                 behind its held request): SUSPENDED, reconnects on a new connection{} (what \
                 was in flight is lost): RECONNECTED if its session lives, else told LOST",
                moves(state, c)
            ),
        ),
        Action::LoseReply(c) => {
            let what = state.clients[c as usize]
                .from_store
                .first()
                .map(|m| format!("{m} is lost"))
                .unwrap_or_default();
            ("fault", "store".into(), client(c), what)
        }
        Action::Interrupt(c) => (
            "fault",
            client(c),
            client(c),
            "the application interrupts the acquisition: the caller returns at once and \
             unlocks, whatever is on its way"
                .into(),
        ),
        Action::Tick => (
            "tick",
            "store".into(),
            String::new(),
            "one tick passes (every clock counts down)".into(),
        ),
    }
}

/// The kind of `action` as one word, the name a specification would give
/// the step (ITF's `mbt::actionTaken`): `Deliver`, `Timeout`, `Crash`, …
pub fn action_name(action: Action) -> &'static str {
    match action {
        Action::Deliver(..) => "Deliver",
        Action::Timeout(..) => "Timeout",
        Action::Expire(_) => "Expire",
        Action::ExpireKey { .. } => "ExpireKey",
        Action::EndLockDelay(_) => "EndLockDelay",
        Action::CheckCritical(_) => "CheckCritical",
        Action::RestartMaster(_) => "RestartMaster",
        Action::ClockJump(_) => "ClockJump",
        Action::Replicate => "Replicate",
        Action::Apply(_) => "Apply",
        Action::Failover => "Failover",
        Action::Elect => "Elect",
        Action::StepDown => "StepDown",
        Action::Isolate(_) => "Isolate",
        Action::Mute(_) => "Mute",
        Action::DropMuted(_) => "DropMuted",
        Action::GiveUpLeader(_) => "GiveUpLeader",
        Action::Rejoin(_) => "Rejoin",
        Action::Crash(_) => "Crash",
        Action::Interrupt(_) => "Interrupt",
        Action::Restart(_) => "Restart",
        Action::Pause(_) => "Pause",
        Action::Resume(_) => "Resume",
        Action::ResumeReconnect(_) => "ResumeReconnect",
        Action::Partition(_) => "Partition",
        Action::Heal(_) => "Heal",
        Action::Reconnect(_) => "Reconnect",
        Action::GiveUpServer(_) => "GiveUpServer",
        Action::LoseReply(_) => "LoseReply",
        Action::Tick => "Tick",
    }
}

/// The server follower slot `f` stands for.
/// The server the followers would elect now.
fn elected(state: &ModelState) -> u8 {
    state
        .store
        .ensemble
        .as_ref()
        .and_then(|e| e.candidate().map(|f| e.id(f)))
        .unwrap_or(0)
}

/// Whether the store is an etcd cluster (leases, members that keep their
/// clients through a leader change).
fn leases(state: &ModelState) -> bool {
    state
        .store
        .ensemble
        .as_ref()
        .is_some_and(|e| e.cfg.0.leases)
}

fn server_of_slot(state: &ModelState, f: u8) -> u8 {
    state
        .store
        .ensemble
        .as_ref()
        .and_then(|e| e.followers.get(usize::from(f)).map(|fo| fo.server))
        .unwrap_or(f + 1)
}
