//! The timed mode (`check --time ticks`): the checker keeps time in whole
//! ticks. Every latency, timeout, session and lease TTL, heartbeat and
//! recipe timer lasts a number of ticks, so a deadline policy, a lease's
//! expiry and the heartbeats that hold it off are explored exhaustively,
//! where the untimed mode ([`super::time`]) can only say what may happen
//! in some order.
//!
//! Time is relative, as in a digitized timed automaton: each armed timer
//! and each message in flight carries a countdown ([`Due`]: from `lo`
//! ticks on it may happen, by `hi` it must), and a [`super::Action::Tick`]
//! counts every one down at once. A tick is taken only when nothing is
//! overdue (nothing whose `hi` has run out could still happen now), so
//! every deadline is met exactly. States at different times with the same
//! countdowns are one state, so the state space stays finite without a
//! horizon: a run's rounds bound it.
//!
//! The actors do not change: they set timers in durations, and a timed
//! model gives them durations of whole ticks (`tick_ms` milliseconds
//! each), read back as ticks when they set a timer. A recipe's own sleeps
//! (milliseconds in its source) are rounded up to whole ticks.

use super::{session_carries_on, Action, Link, ModelState, RecipeModel, Status};
use crate::client::{ClientTiming, Policy};
use crate::ids::ClientIdx;
use crate::msg::Timer;
use crate::recipe::Face;
use crate::recipe::RecipeRef;
use crate::timing;
use smallvec::SmallVec;
use std::fmt;
use std::ops::Range;
use std::time::Duration;

/// The most ticks anything may take: countdowns are bytes.
pub const MAX_TICKS: u8 = 250;

/// A window in ticks: from `lo` ticks on, and by `hi` at the latest. In a
/// configuration, how long something takes; on a timer or a message in
/// flight, the ticks left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Due {
    pub lo: u8,
    pub hi: u8,
}

impl Due {
    pub const fn exactly(n: u8) -> Due {
        Due { lo: n, hi: n }
    }

    /// It may happen now.
    pub fn ripe(self) -> bool {
        self.lo == 0
    }

    /// It must happen before the next tick.
    pub fn overdue(self) -> bool {
        self.hi == 0
    }

    fn count_down(&mut self) {
        self.lo = self.lo.saturating_sub(1);
        self.hi = self.hi.saturating_sub(1);
    }
}

impl fmt::Display for Due {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.lo == self.hi {
            true => write!(f, "{}", self.lo),
            false => write!(f, "{}-{}", self.lo, self.hi),
        }
    }
}

/// How the checker treats time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Time {
    /// Timers carry no time; the model decides when each may fire
    /// ([`super::time`]). Exact for everything but deadlines and expiry
    /// by the clock; the default.
    #[default]
    Untimed,
    /// Whole ticks, every duration as [`TickTiming`] says.
    Ticks(TickTiming),
}

impl Time {
    pub fn ticks(&self) -> Option<&TickTiming> {
        match self {
            Time::Untimed => None,
            Time::Ticks(t) => Some(t),
        }
    }
}

/// Every duration of a timed check, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickTiming {
    /// How long a tick is, in milliseconds: a recipe's own sleeps (given
    /// in milliseconds) are rounded up to ticks of this length.
    pub tick_ms: u32,
    /// Session timeout (ZooKeeper) or lease TTL (etcd).
    pub session: u8,
    /// Heartbeat interval.
    pub ping: u8,
    /// The lease-aware and suspend-aware clients' deadline.
    pub deadline: u8,
    /// Resend a request unanswered for this long (only one that was lost:
    /// one merely on its way waits another period).
    pub retry: u8,
    /// One-way latency of every link.
    pub latency: Due,
    pub think: Due,
    pub hold: Due,
    /// How long a pause lasts.
    pub pause: Due,
    /// How long a partition lasts.
    pub partition: Due,
    /// An acquire timeout (`--acquire-timeout`).
    pub acquire_timeout: u8,
    /// The keys given (bit `i`: [`TICK_KEYS`]`[i]`), so that one that
    /// would change nothing is refused.
    pub given: u16,
}

impl Default for TickTiming {
    /// A 7-tick session with heartbeats every 2 and a one-way latency of
    /// 1, so the first heartbeat arrives in time (2 + 2 × 1 < 7) and a
    /// deadline of 5 is both past a heartbeat's answer (> 2 + 2) and before
    /// expiry (5 + 1 < 7); a hold of two 8-tick stretches outlasts a
    /// session, as do pauses and partitions of up to 10 ticks, which is
    /// where deadline policies matter. The latency is one value: a window
    /// (`latency=0-1`) multiplies the states by about 60 at two clients,
    /// since every message may then come in either of two ticks.
    fn default() -> Self {
        TickTiming {
            tick_ms: 1000,
            session: 7,
            ping: 2,
            deadline: 5,
            retry: 3,
            latency: Due::exactly(1),
            think: Due { lo: 0, hi: 2 },
            hold: Due::exactly(8),
            pause: Due { lo: 1, hi: 10 },
            partition: Due { lo: 1, hi: 10 },
            acquire_timeout: 4,
            given: 0,
        }
    }
}

/// The keys `--ticks` takes, in the order they are listed.
pub const TICK_KEYS: &[&str] = &[
    "session",
    "ping",
    "deadline",
    "retry",
    "latency",
    "think",
    "hold",
    "pause",
    "partition",
    "acquire_timeout",
    "tick_ms",
];

impl TickTiming {
    /// Applies `key=value, …` (a window as `lo-hi` or one number) over the
    /// defaults; every key once.
    pub fn parse(spec: &str) -> Result<TickTiming, String> {
        let mut t = TickTiming::default();
        let mut seen: Vec<&str> = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(format!(
                    "'{item}' is not key=value (keys: {})",
                    TICK_KEYS.join(", ")
                ));
            };
            let (key, value) = (key.trim(), value.trim());
            if seen.contains(&key) {
                return Err(format!("'{key}' is given twice"));
            }
            seen.push(key);
            t.set(key, value)?;
            if let Some(i) = TICK_KEYS.iter().position(|k| *k == key) {
                t.given |= 1 << i;
            }
        }
        Ok(t)
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let n = || ticks(key, value);
        match key {
            "session" => self.session = n()?,
            "ping" => self.ping = n()?,
            "deadline" => self.deadline = n()?,
            "retry" => self.retry = n()?,
            "acquire_timeout" => self.acquire_timeout = n()?,
            "latency" => self.latency = window(key, value)?,
            "think" => self.think = window(key, value)?,
            "hold" => self.hold = window(key, value)?,
            "pause" => self.pause = window(key, value)?,
            "partition" => self.partition = window(key, value)?,
            "tick_ms" => {
                self.tick_ms = value.parse().ok().filter(|&ms| ms > 0).ok_or_else(|| {
                    format!("tick_ms must be a whole number of milliseconds from 1 (got '{value}')")
                })?
            }
            _ => {
                return Err(format!(
                    "unknown key '{key}' (keys: {})",
                    TICK_KEYS.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// Refuses timing that misbehaves without any fault (the simulator's
    /// rules, [`crate::timing`]), zero-length faults and timers, and a
    /// recipe whose sleeps do not fit in ticks. The error names the key.
    pub fn validate(
        &self,
        policy: Policy,
        recipe: &RecipeRef,
        acquire_timeout: bool,
    ) -> Result<(), (&'static str, String)> {
        // A key that changes nothing is a mistake.
        if self.was_given("deadline") && !policy.keeps_a_deadline() {
            return Err((
                "deadline",
                format!(
                    "applies only to a policy that keeps a deadline (lease-aware, lease-aware-from-send, \
                     suspend-aware): a {policy} client keeps no clock of its own"
                ),
            ));
        }
        if self.was_given("acquire_timeout") && !acquire_timeout {
            return Err((
                "acquire_timeout",
                "applies only with --acquire-timeout".to_string(),
            ));
        }
        if acquire_timeout && self.acquire_timeout == 0 {
            return Err((
                "acquire_timeout",
                "must be at least 1 tick: a timeout of 0 gives up every acquisition that waits"
                    .to_string(),
            ));
        }
        let one_way = u64::from(self.latency.hi);
        let (session, ping) = (u64::from(self.session), u64::from(self.ping));
        for (key, n) in [
            ("session", self.session),
            ("ping", self.ping),
            ("retry", self.retry),
        ] {
            if n == 0 {
                return Err((key, format!("{key} must be at least 1 tick")));
            }
        }
        for (key, w) in [("pause", self.pause), ("partition", self.partition)] {
            if w.lo == 0 {
                return Err((key, format!("a {key} lasts at least 1 tick (got {w})")));
            }
        }
        if !timing::first_heartbeat_in_time(session, ping, one_way) {
            return Err((
                "ping",
                format!(
                    "the first heartbeat reaches the store a one-way latency, the ping interval and a one-way \
                     latency after the session is granted: ping ({ping}) plus twice the longest one-way \
                     latency ({one_way}) must be below the session ({session} ticks), or sessions and \
                     leases expire without any fault"
                ),
            ));
        }
        if !timing::retry_after_round_trip(self.retry.into(), one_way) {
            return Err((
                "retry",
                format!(
                    "retry ({}) must be longer than the longest round trip ({} ticks), or clients resend \
                     requests whose replies are on their way",
                    self.retry,
                    2 * one_way
                ),
            ));
        }
        if policy.keeps_a_deadline() {
            let deadline = u64::from(self.deadline);
            if !timing::deadline_after_heartbeat(deadline, ping, one_way) {
                return Err((
                    "deadline",
                    format!(
                        "deadline ({deadline}) must be longer than ping ({ping}) plus the longest round trip \
                         ({} ticks), or a {policy} client gives up a healthy session",
                        2 * one_way
                    ),
                ));
            }
            if !timing::deadline_before_expiry(deadline, one_way, session) {
                return Err((
                    "deadline",
                    format!(
                        "deadline ({deadline}) plus the longest one-way latency ({one_way}) must be below the \
                         session ({session} ticks): a {policy} client must give up before the store expires it"
                    ),
                ));
            }
        }
        let sleep = recipe.longest_sleep();
        if self.ticks_of(sleep) > u64::from(MAX_TICKS) {
            return Err((
                "tick_ms",
                format!(
                    "{recipe} sleeps up to {} ms, more than {MAX_TICKS} ticks of {} ms: make the ticks longer",
                    sleep.as_millis(),
                    self.tick_ms
                ),
            ));
        }
        for (key, n) in [
            ("session", self.session),
            ("ping", self.ping),
            ("deadline", self.deadline),
            ("retry", self.retry),
            ("acquire_timeout", self.acquire_timeout),
            ("latency", self.latency.hi),
            ("think", self.think.hi),
            ("hold", self.hold.hi),
            ("pause", self.pause.hi),
            ("partition", self.partition.hi),
        ] {
            if n > MAX_TICKS {
                return Err((
                    key,
                    format!("{key} may be at most {MAX_TICKS} ticks (got {n})"),
                ));
            }
        }
        Ok(())
    }

    fn was_given(&self, key: &str) -> bool {
        TICK_KEYS
            .iter()
            .position(|k| *k == key)
            .is_some_and(|i| self.given & (1 << i) != 0)
    }

    /// `n` ticks as the actors' duration.
    fn duration(&self, n: u8) -> Duration {
        Duration::from_millis(u64::from(n) * u64::from(self.tick_ms))
    }

    fn range(&self, w: Due) -> Range<Duration> {
        self.duration(w.lo)..self.duration(w.hi)
    }

    /// A duration in whole ticks, rounded up.
    fn ticks_of(&self, d: Duration) -> u64 {
        let tick = u128::from(self.tick_ms) * 1_000_000;
        d.as_nanos().div_ceil(tick).try_into().unwrap_or(u64::MAX)
    }

    /// The window a timer set for `range` falls in: a range one
    /// nanosecond wide (the actors' `exactly`) is one instant.
    pub fn window_of(&self, range: &Range<Duration>) -> Due {
        let lo = self.ticks_of(range.start).min(MAX_TICKS.into()) as u8;
        let hi = match range.end.saturating_sub(range.start) <= Duration::from_nanos(1) {
            true => lo,
            false => (self.ticks_of(range.end).min(MAX_TICKS.into()) as u8).max(lo),
        };
        Due { lo, hi }
    }

    /// The client timing the actors run with.
    pub fn client_timing(&self, acquire_timeout: bool) -> ClientTiming {
        ClientTiming {
            think: self.range(self.think),
            produce: self.range(self.think),
            hold: self.range(self.hold),
            retry: self.duration(self.retry),
            ping: self.duration(self.ping),
            deadline: self.duration(self.deadline),
            acquire_timeout: acquire_timeout.then(|| self.duration(self.acquire_timeout)),
        }
    }

    /// The session timeout the store runs with.
    pub fn session_timeout(&self) -> Duration {
        self.duration(self.session)
    }

    /// A ZooKeeper client's read timeout, in ticks.
    pub fn read_timeout(&self) -> u8 {
        timing::read_timeout(self.session.into()) as u8
    }
}

impl fmt::Display for TickTiming {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "ticks of {} ms: session {}, ping {}, deadline {}, retry {}, latency {}, think {}, hold {}, \
             pause {}, partition {}",
            self.tick_ms,
            self.session,
            self.ping,
            self.deadline,
            self.retry,
            self.latency,
            self.think,
            self.hold,
            self.pause,
            self.partition
        )
    }
}

fn ticks(key: &str, value: &str) -> Result<u8, String> {
    value
        .parse::<u8>()
        .ok()
        .filter(|&n| n <= MAX_TICKS)
        .ok_or_else(|| {
            format!("{key} must be a whole number of ticks from 0 to {MAX_TICKS} (got '{value}')")
        })
}

fn window(key: &str, value: &str) -> Result<Due, String> {
    let (lo, hi) = match value.split_once('-') {
        Some((lo, hi)) => (ticks(key, lo.trim())?, ticks(key, hi.trim())?),
        None => {
            let n = ticks(key, value)?;
            (n, n)
        }
    };
    if lo > hi {
        return Err(format!("{key} needs low <= high (got {lo}-{hi})"));
    }
    Ok(Due { lo, hi })
}

/// A client's countdowns, kept only by a timed check: one per armed timer
/// (in the order of the slot's timers) and one per message on each link
/// (in the order of the link), and how long the current pause or
/// partition has lasted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlotClock {
    pub timers: SmallVec<[Due; 4]>,
    /// By [`Link`] index ([`link_index`]).
    pub links: [SmallVec<[Due; 2]>; 4],
    /// Ticks the current pause or partition has lasted (up to its longest).
    pub fault: u8,
}

/// Where a link's countdowns are kept in a [`SlotClock`].
pub fn link_index(link: Link) -> usize {
    match link {
        Link::StoreToClient => 0,
        Link::ClientToStore => 1,
        Link::ClientToResource => 2,
        Link::ResourceToClient => 3,
    }
}

/// The store's countdowns: one per armed timer, in their order.
pub type StoreClock = SmallVec<[Due; 4]>;

/// What a client's slot makes of the clock.
struct SlotTime {
    /// Something of it must happen before the next tick.
    overdue: bool,
    /// A tick would change something of it.
    runs: bool,
}

impl RecipeModel {
    /// The timed check's steps of client `c` that wait for their moment —
    /// deliveries, timers, the end of a pause or a partition — pushed onto
    /// `actions` when ripe; and what the client makes of the next tick.
    fn timed_actions(
        &self,
        t: &TickTiming,
        state: &ModelState,
        c: ClientIdx,
        actions: &mut Vec<Action>,
    ) -> SlotTime {
        let slot = &state.clients[c as usize];
        let mut time = SlotTime {
            overdue: false,
            runs: false,
        };
        let Some(clock) = slot.clock.0.as_deref() else {
            return time;
        };
        let running = slot.status == Status::Running;
        for link in Link::ALL {
            let dues = &clock.links[link_index(link)];
            time.runs |= dues.iter().any(|d| d.hi > 0);
            let Some(&head) = dues.first() else { continue };
            if slot.link_open(link) && head.ripe() {
                actions.push(Action::Deliver(c, link));
                time.overdue |= head.overdue();
            }
        }
        for (&timer, &due) in slot.timers.iter().zip(&clock.timers) {
            time.runs |= due.hi > 0;
            // A resend waits while its request or reply is on its way (the
            // tick sets it again for another period, as the simulator does).
            if running
                && due.ripe()
                && (timer != Timer::Retry || self.resend_fires(&state.store, slot))
            {
                actions.push(Action::Timeout(c, timer));
                time.overdue |= due.overdue();
            }
        }
        let carries_on = session_carries_on(&state.store, &slot.state);
        let Some((fault, lasts)) = Fault::of(t, slot) else {
            return time;
        };
        time.runs |= clock.fault < lasts.hi;
        if clock.fault < lasts.lo {
            return time;
        }
        time.overdue |= clock.fault >= lasts.hi;
        // Within its read timeout the connection survives (if the session
        // does); past it, it is made anew. An etcd client's gRPC
        // connection survives a pause.
        let within = clock.fault < t.read_timeout() && carries_on;
        let zookeeper = self.cfg.recipe.face() == Face::ZooKeeper;
        match fault {
            Fault::Pause if !zookeeper || within => actions.push(Action::Resume(c)),
            Fault::Pause => actions.push(Action::ResumeReconnect(c)),
            Fault::Partition if within => actions.push(Action::Heal(c)),
            Fault::Partition => actions.push(Action::Reconnect(c)),
        }
        time
    }

    /// Every timed step that waits for its moment, and the tick when
    /// nothing is overdue and a tick changes something.
    pub(super) fn push_timed_actions(
        &self,
        t: &TickTiming,
        state: &ModelState,
        actions: &mut Vec<Action>,
    ) {
        let (mut overdue, mut runs) = (false, false);
        for c in 0..state.clients.len() {
            let time = self.timed_actions(t, state, c as ClientIdx, actions);
            overdue |= time.overdue;
            runs |= time.runs;
        }
        if let Some(dues) = state.store_clock.0.as_deref() {
            for (&timer, &due) in state.store_timers.iter().zip(dues) {
                runs |= due.hi > 0;
                if let Timer::Expiry(s) = timer {
                    if due.ripe() && state.store.is_alive(s) && !self.stays_connected(state, s) {
                        actions.push(Action::Expire(s));
                        overdue |= due.overdue();
                    }
                }
            }
        }
        if runs && !overdue {
            actions.push(Action::Tick);
        }
    }

    /// A tick: every countdown runs down by one, a pause or partition lasts
    /// one tick longer, and a resend that came due while its request or
    /// reply was on its way is set for another period.
    pub(super) fn tick(&self, t: &TickTiming, state: &mut ModelState) {
        for c in 0..state.clients.len() {
            let slot = &state.clients[c];
            let Some(clock) = slot.clock.0.as_deref() else {
                continue;
            };
            let fault = Fault::of(t, slot).map(|(_, lasts)| lasts.hi);
            let still = |d: &Due| d.hi == 0;
            let idle = clock
                .timers
                .iter()
                .chain(clock.links.iter().flatten())
                .all(still)
                && fault.is_none_or(|longest| clock.fault >= longest);
            if idle {
                continue; // left shared
            }
            let resend_waits = !self.resend_fires(&state.store, slot);
            let slot = state.slot_mut(c as ClientIdx);
            let timers = slot.timers.clone();
            let clock = slot.clock_mut();
            for (timer, due) in timers.iter().zip(clock.timers.iter_mut()) {
                if *timer == Timer::Retry && due.overdue() && resend_waits {
                    // Due again a period after it came due: this tick is
                    // the first of the period.
                    *due = Due::exactly(t.retry - 1);
                } else {
                    due.count_down();
                }
            }
            clock.links.iter_mut().flatten().for_each(Due::count_down);
            if let Some(longest) = fault {
                clock.fault = clock.fault.saturating_add(1).min(longest);
            }
        }
        if let Some(dues) = &mut state.store_clock.0 {
            if dues.iter().any(|d| d.hi > 0) {
                dues.iter_mut().for_each(Due::count_down);
            }
        }
    }
}

impl RecipeModel {
    /// Whether a resend timer that came due fires: when nothing it awaits
    /// is on its way — a lost request or reply to resend, or no request
    /// out at all (a timer left armed, which fires and does nothing, as
    /// the simulator's does). Otherwise it waits another period.
    fn resend_fires(&self, store: &crate::store::StoreState, slot: &super::ClientSlot) -> bool {
        slot.state.pending.is_none() || self.resend_due(store, slot)
    }
}

/// The fault a client is in, as the clock sees it.
enum Fault {
    Pause,
    Partition,
}

impl Fault {
    /// The pause or partition `slot` is in, and how long one lasts.
    fn of(t: &TickTiming, slot: &super::ClientSlot) -> Option<(Fault, Due)> {
        match (slot.status, slot.partitioned) {
            (Status::Paused, _) => Some((Fault::Pause, t.pause)),
            (_, true) => Some((Fault::Partition, t.partition)),
            (Status::Running | Status::Crashed, false) => None,
        }
    }
}

/// What survived a reconnect is sent anew on the new connection: its
/// flight starts over.
pub(super) fn sent_anew(slot: &mut super::ClientSlot, latency: Due) {
    if let Some(clock) = &mut slot.clock.0 {
        for link in [Link::StoreToClient, Link::ClientToStore] {
            clock.links[link_index(link)]
                .iter_mut()
                .for_each(|d| *d = latency);
        }
    }
}

/// A pause or partition of `slot` begins: its length counts from 0.
pub(super) fn fault_starts(slot: &mut super::ClientSlot) {
    if let Some(clock) = &mut slot.clock.0 {
        clock.fault = 0;
    }
}
