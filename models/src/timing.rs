//! The timing a run needs so that nothing misbehaves without a fault: no
//! session or lease expires between heartbeats, no request is resent while
//! its reply is on its way, no lease-aware client gives up a healthy
//! session or outlives an expired one. One rule, in any unit, for the
//! simulator's scenarios (microseconds) and the timed checker (ticks);
//! each words its refusal in its own keys.

/// The session's clock starts when the store grants it; the grant's reply
/// takes a one-way latency, the client's first heartbeat goes a ping
/// interval later and takes another: the store hears it up to a ping
/// interval plus two one-way latencies after the grant. (Later heartbeats
/// leave a ping interval apart, so they come closer than that.)
pub fn first_heartbeat_in_time(session_timeout: u64, ping: u64, one_way: u64) -> bool {
    ping + 2 * one_way < session_timeout
}

/// A request is resent when no reply came within the retry time: shorter
/// than a round trip, every request would be resent without any fault.
pub fn retry_after_round_trip(retry: u64, one_way: u64) -> bool {
    retry > 2 * one_way
}

/// A heartbeat's answer comes at most a ping interval plus a round trip
/// after the one before: a shorter deadline gives up healthy sessions.
pub fn deadline_after_heartbeat(deadline: u64, ping: u64, one_way: u64) -> bool {
    deadline > ping + 2 * one_way
}

/// The deadline restarts when an answer arrives, up to a one-way latency
/// after the store renewed the session: it must pass before the session
/// can expire, or a lease-aware client outlives its session.
pub fn deadline_before_expiry(deadline: u64, one_way: u64, session_timeout: u64) -> bool {
    deadline + one_way < session_timeout
}

/// A ZooKeeper client's read timeout: two thirds of the session timeout
/// without word from the store, and it gives its connection up
/// (SUSPENDED) and looks for another.
pub fn read_timeout(session_timeout: u64) -> u64 {
    session_timeout / 3 * 2
}

/// A ZooKeeper client's connect timeout: the session timeout over the
/// number of servers it may try; a handshake unanswered that long, and it
/// tries the next server (the Java client's `ClientCnxn`, kazoo's
/// connection loop).
pub fn connect_timeout(session_timeout: u64, servers: u64) -> u64 {
    session_timeout / servers.max(1)
}

/// Redis: a lock key set with a TTL must outlive a holder that keeps to
/// its timing, or keys expire under healthy holders. It is needed from the
/// first master's `SET` until the last master's release: the `SET`s to the
/// other masters (a round trip each), the reply, `writes` writes each
/// answered with `hold` between them, and the release on every master (a
/// round trip each, the last one way).
pub fn key_outlives_hold(ttl: u64, masters: u64, writes: u64, hold: u64, one_way: u64) -> bool {
    let flights =
        2 * masters.saturating_sub(1) + 1 + 2 * writes + 2 * masters.saturating_sub(1) + 1;
    writes.saturating_sub(1).saturating_mul(hold) + flights.saturating_mul(one_way) < ttl
}

/// Redis: a watchdog that renews every `every` keeps its key if the
/// renewal, sent that long after the last and a round trip on its way
/// (`one_way` each direction, the answer's included), lands inside the
/// TTL.
pub fn renewal_lands_in_time(ttl: u64, every: u64, one_way: u64) -> bool {
    every.saturating_add(one_way.saturating_mul(2)) < ttl
}

/// Redis: a request resent after the key it set has expired finds the
/// lock taken by someone else; the resend timer must come before the TTL.
pub fn resend_before_ttl(retry: u64, ttl: u64) -> bool {
    retry < ttl
}
