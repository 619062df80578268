//! A semaphore's herd, paced, in the model: the run that
//! `kazoo_semaphore.py` makes kazoo's own `Semaphore` go through.
//!
//! In the baseline (every client at once, fixed holds) whether a released
//! lease finds a waiter depends on how the holds and the mutex's hand-offs
//! interleave, in the model as on a real server. Paced, every release
//! meets the waiter it should: the clients start one at a time, in index
//! order, each once the last one holds or waits (the first `k` take a
//! lease; the next takes the mutex and waits for a lease; the rest wait
//! for the mutex); then the holders release one at a time, in the order
//! they acquired, each once the last release has settled (the waiter took
//! the freed lease and released the mutex, and the mutex's next holder, if
//! anyone waits, listed the leases and waits).
//!
//! The model's own actors — `models::client::Client` and
//! `models::store::Store`, built as the simulator builds them for the
//! baseline scenario (whose `permits` the real harness is given) — are
//! stepped here: a client starts when its think timer is fired, releases
//! when its hold timer is; between those, every message in flight is
//! delivered, one at a time and in the order it was sent, until none is.
//! No other timer fires (no ping, no resend, no expiry: a fault-free run).
//! Counted as the simulator counts (`sim::herd::row`): the store requests
//! by kind (the session's set-up apart), the notifications the store sent,
//! and those it sent in the step that carried out each release.

use crate::replay::Model;
use models::ids::{client_of, store_id, ClientIdx};
use models::msg::{Msg, RequestClass, Timer};
use models::properties::is_release;
use models::recipe::RecipeRef;
use stateright::actor::Id;
use std::collections::BTreeMap;
use std::time::Instant;

/// The paced run, measured.
#[derive(Clone, Debug)]
pub struct PacedRun {
    /// The semaphore's leases.
    pub permits: u16,
    /// Who acquired, in order.
    pub order: Vec<ClientIdx>,
    /// Store requests by kind, as the model names them.
    pub requests: BTreeMap<String, u64>,
    /// Notifications the store sent, in all.
    pub notifications: u64,
    /// Those it sent in each release's step, in release order.
    pub notifications_per_release: Vec<u32>,
    pub wall_seconds: f64,
}

/// Deliveries a run may take before it is taken to be going round.
const MOST_DELIVERIES: usize = 1_000_000;

/// Runs `recipe` (a semaphore) paced with `clients` clients, as many
/// permits as its baseline has.
pub fn semaphore(recipe: &RecipeRef, clients: u16) -> Result<PacedRun, String> {
    let started = Instant::now();
    let scenario = sim::herd::baseline(recipe, clients, 1);
    let mut run = Run {
        model: Model::start(&scenario),
        measured: PacedRun {
            permits: scenario.permits,
            order: Vec::new(),
            requests: BTreeMap::new(),
            notifications: 0,
            notifications_per_release: Vec::new(),
            wall_seconds: 0.0,
        },
    };
    // The sessions open.
    run.settle()?;
    for c in 0..clients as ClientIdx {
        run.fire(c, Timer::Think)?;
        let st = &run.model.clients[c as usize];
        if !st.is_holding() && !st.is_waiting() {
            return Err(format!("client {c} neither holds nor waits once started"));
        }
    }
    let mut released = 0;
    while let Some(&c) = run.measured.order.get(released) {
        run.fire(c, Timer::Hold)?;
        if run.model.clients[c as usize].is_holding() {
            return Err(format!("client {c} still holds after its release"));
        }
        released += 1;
    }
    if released != usize::from(clients) {
        return Err(format!(
            "{released} of {clients} clients acquired and released"
        ));
    }
    run.measured.wall_seconds = started.elapsed().as_secs_f64();
    Ok(run.measured)
}

struct Run {
    model: Model,
    measured: PacedRun,
}

impl Run {
    /// Fires client `c`'s `timer`, then lets the run settle.
    fn fire(&mut self, c: ClientIdx, timer: Timer) -> Result<(), String> {
        self.stepped(c, |model| model.timer(c, timer));
        self.settle()
    }

    /// Client `c` takes a step; an acquisition is noted.
    fn stepped(&mut self, c: ClientIdx, step: impl FnOnce(&mut Model)) {
        let held = self.model.clients[c as usize].is_holding();
        step(&mut self.model);
        if !held && self.model.clients[c as usize].is_holding() {
            self.measured.order.push(c);
        }
    }

    /// Delivers every message in flight, oldest first, until none is.
    fn settle(&mut self) -> Result<(), String> {
        for _ in 0..MOST_DELIVERIES {
            let Some((from, to, msg)) = self.model.oldest() else {
                return Ok(());
            };
            if to == store_id() {
                self.at_store(from, msg);
            } else if let Some(c) = client_of(to) {
                self.stepped(c, |model| model.client_step(c, from, msg));
            } else {
                self.model.resource_step(from, msg);
            }
        }
        Err(format!(
            "still going after {MOST_DELIVERIES} deliveries: no quiet state"
        ))
    }

    /// The store takes `msg` from `from`, counted as the simulator counts.
    fn at_store(&mut self, from: Id, msg: Msg) {
        if let Msg::Request { req, .. } = &msg {
            let kind = req.kind();
            if kind.class() != RequestClass::Session {
                *self
                    .measured
                    .requests
                    .entry(kind.name().to_string())
                    .or_insert(0) += 1;
            }
        }
        let release = is_release(&msg);
        let before = self.model.store_state.header();
        let sent = self.model.store_step(from, msg);
        let notified = sent
            .iter()
            .filter(|(_, m)| matches!(m, Msg::Notify { .. }))
            .count() as u32;
        self.measured.notifications += u64::from(notified);
        if release && self.model.store_state.header() != before {
            self.measured.notifications_per_release.push(notified);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kazoo's semaphore paced: each of the first N − k releases wakes the
    /// one waiter, who lists, creates (its own watch fires), checks and
    /// hands the mutex on (the mutex's next waiter hears it go).
    #[test]
    fn every_release_meets_its_waiter() {
        let recipe = models::recipes::parse("zk-semaphore:kazoo").expect("registered");
        for (n, k) in [(2u16, 1u16), (5, 2), (20, 2)] {
            let run = semaphore(&recipe, n).expect("the paced run settles");
            let (n64, k64) = (u64::from(n), u64::from(k));
            let waiters = n64 - k64;
            assert_eq!(run.permits, k);
            assert_eq!(run.order, (0..n as ClientIdx).collect::<Vec<_>>());
            let mut per = vec![1; waiters as usize];
            per.resize(n as usize, 0);
            assert_eq!(run.notifications_per_release, per);
            assert_eq!(run.notifications, n64 + waiters + (waiters - 1));
            let expected: BTreeMap<String, u64> = [
                ("create", 2 * n64),
                ("delete", 2 * n64),
                ("exists", 2 * n64 + waiters),
                ("get_children", n64 + waiters - 1),
                ("get_children_watch", n64 + waiters),
                ("get_data_watch", waiters - 1),
            ]
            .into_iter()
            .filter(|(_, v)| *v > 0)
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            assert_eq!(run.requests, expected, "{n} clients");
        }
    }
}
