//! A replicated store: a ZooKeeper ensemble or an etcd cluster of
//! `servers` servers, the leader and its followers.
//!
//! The leader's state is the [`StoreState`] itself: every write is applied
//! there (committed: the model's ensemble always has a majority) and
//! appended to the log of committed entries. Each follower keeps its own
//! view — a [`StoreState`] that has applied a prefix of the log, in order —
//! and applies the next entry when the engine says (`Action::Apply` in the
//! checker, a drawn delay in the simulator). A client is connected to one
//! server, which serves its reads, holds its watches (they fire when *that*
//! server applies the change), and answers its writes once it has applied
//! them (ZooKeeper's `FinalRequestProcessor`, etcd's apply wait), as it
//! answers a `sync` once it has applied the log as of the sync.
//!
//! Sessions are the leader's: a session is created by a committed entry,
//! which a follower's client hears of when its server has applied it; an
//! expiry ends the session at the leader at once, and on a follower when
//! it applies the expiry's entry — the follower then closes its client's
//! connection (the expiry notice).
//!
//! Replaying an entry on a follower calls the same [`StoreState::apply`]
//! the leader ran: the store is deterministic, so a follower that has
//! applied the same prefix is the same state (sequence numbers, zxids,
//! revisions and lease ids included) — but for its session table, which
//! does not hold other servers' local sessions. So the session check is
//! the leader's alone: a follower applies a write as the leader took it
//! (`Entry::Apply`), or not at all (`Entry::Refused`).

use super::zookeeper::SessionEnd;
use super::{EnsembleCfg, RunConstant, StoreState};
use crate::ids::{ClientIdx, SessionId};
use crate::msg::{Msg, Reply, Request, WatchEvent};
use crate::properties::Woken;
use serde::{Deserialize, Serialize};

/// One committed change, as each follower replays it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Entry {
    /// A request the leader applied for `session` (a write, a session's
    /// creation, a lease's grant or revoke).
    Apply { session: SessionId, req: Request },
    /// A request the leader refused, its session having ended: it takes
    /// its place in the log and changes nothing (ZooKeeper's error
    /// transaction, whose zxid the model does not count: no server's zxid
    /// moves for it). A follower cannot judge the session itself, as it
    /// may not know it (another server's local session).
    Refused { session: SessionId, req: Request },
    /// The leader ended `session` (`closeSession`; a lease's expiry).
    End { session: SessionId, expired: bool },
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Entry::Apply { session, req } => write!(f, "{req} [session {session}]"),
            Entry::Refused { session, req } => {
                write!(
                    f,
                    "the refusal of {req} [session {session}] (its session had ended)"
                )
            }
            Entry::End {
                session,
                expired: true,
            } => write!(f, "the expiry of session {session}"),
            Entry::End {
                session,
                expired: false,
            } => write!(f, "the close of session {session}"),
        }
    }
}

/// A reply a follower holds until it has applied the log to `at`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Held {
    pub at: u64,
    pub session: SessionId,
    pub epoch: u8,
    pub owed: Owed,
    /// A queue's mark, taken by the leader before it applied the request
    /// (what the request named); `None`: the mark when it is sent.
    pub head: Option<bool>,
    /// Whether the connection it came on is still up: a reply for one
    /// that dropped is not sent, but the request still orders the
    /// session's later ones behind it (a server's commit processor keeps a
    /// session's requests in order, whichever connection they came on).
    pub connected: bool,
}

/// What a held request is owed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Owed {
    /// A write's or a `sync`'s answer, made when it was committed.
    Reply(Reply),
    /// A read queued behind the session's earlier write: served from the
    /// server's state once it has applied that write.
    Read(Request),
    /// A request a server cut off from the leader (or a deposed leader)
    /// could pass to no quorum (`Held::at` is `u64::MAX`): passed on if
    /// the cut heals first, else gone with the connection. Held, not
    /// dropped, so the client waits on its connection as ZooKeeper's
    /// does, resending only on a new one.
    Lost { req: Request, release: bool },
}

impl Owed {
    pub fn is_lost(&self) -> bool {
        matches!(self, Owed::Lost { .. })
    }
}

/// One follower: what it has applied and the replies it owes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Follower {
    /// Its state: the leader's as of `applied` entries, with the watches
    /// its own clients set.
    pub view: Box<StoreState>,
    /// How many of the log's entries it has applied.
    pub applied: u64,
    /// Replies it owes its clients, by the position each waits for.
    pub held: Vec<Held>,
    /// Sessions whose end the leader told their client in a reconnect's
    /// handshake before this follower applied it (sorted): it tells them
    /// no second time.
    pub told: Vec<SessionId>,
    /// Where it stands with the leader.
    pub link: LeaderLink,
    /// Its server's number (1 up until a failover; a deposed leader keeps
    /// its own).
    pub server: u8,
    /// Between a failover's cut and its election: it was cut off from the
    /// leader, or down, when the leader was deposed, and so lacks what was
    /// committed since its own cut (the others have the whole log).
    pub missed_log: bool,
}

/// A follower's link to the leader.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LeaderLink {
    /// It follows: it hears the leader's commits and passes its clients'
    /// requests and pings on.
    #[default]
    Up,
    /// Cut off, not yet given up: it serves its clients' reads (an etcd
    /// member its serializable ones) from its own view, and a ZooKeeper
    /// follower their pings (an etcd member answers no keepalive); what it
    /// would pass on it holds, to pass on if the cut heals while the
    /// connection is up.
    Cut,
    /// Gone after syncLimit × tickTime without the leader (ZooKeeper's
    /// `Learner.shutdown`), or dropped by the leader after syncLimit ×
    /// tickTime without a word from it (`LearnerHandler`'s read timeout):
    /// its clients' connections are closed, and it takes none until it
    /// rejoins.
    Down,
    /// A ZooKeeper follower the leader does not hear (its half of the
    /// link held), not yet dropped: it still hears and applies the
    /// leader's commits, so it serves its clients' reads fresh and tells
    /// them of an expiry when it applies it; but what it sends the leader
    /// is held — its clients' writes, `sync`s and new global sessions, and
    /// its pings' session touches, so their sessions are silent at the
    /// leader. It takes no reconnecting client: the session's revalidation
    /// it would send the leader gets no answer.
    Muted,
    /// A leader cut off from its followers that still believes it leads
    /// (ZooKeeper's leader until its quorum check fails): it answers its
    /// clients' reads, `sync`s and pings at once from its own state,
    /// commits nothing — their writes are proposals no quorum acknowledges,
    /// lost — and takes no new connection.
    Deposed,
}

impl LeaderLink {
    /// Whether a server with this link takes a reconnecting client: one
    /// that is down does not, nor does a deposed leader (the model's cut
    /// keeps the rest of the ensemble's clients from it).
    pub fn takes_clients(self) -> bool {
        match self {
            LeaderLink::Up | LeaderLink::Cut => true,
            LeaderLink::Down | LeaderLink::Deposed | LeaderLink::Muted => false,
        }
    }

    /// Whether a server with this link applies the leader's commits.
    pub fn hears_leader(self) -> bool {
        match self {
            LeaderLink::Up | LeaderLink::Muted => true,
            LeaderLink::Cut | LeaderLink::Down | LeaderLink::Deposed => false,
        }
    }

    /// Whether what a server with this link passes the leader is held
    /// until the link heals (cut off both ways, or muted).
    pub fn holds_for_leader(self) -> bool {
        match self {
            LeaderLink::Cut | LeaderLink::Muted => true,
            LeaderLink::Up | LeaderLink::Down | LeaderLink::Deposed => false,
        }
    }
}

/// The servers beside the leader, and the log they apply.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ensemble {
    /// Servers 1..n; the leader is server 0.
    pub followers: Vec<Follower>,
    /// The committed entries not every follower has applied yet, oldest
    /// first; `log[0]` is entry number `base`.
    pub log: Vec<Entry>,
    pub base: u64,
    /// Each client's server, by client index (0: the leader). A
    /// ZooKeeper client moves to another on a reconnect.
    pub server_of: Vec<u8>,
    /// Each client's last seen position (ZooKeeper's `lastZxidSeen`):
    /// where the log stood at the server that sent its session's latest
    /// reply; 0 for a session that has had none (a new handle sends 0).
    pub seen: Vec<u64>,
    /// Sessions a follower opened by itself and has not upgraded to global
    /// ones (ZooKeeper's local sessions), sorted.
    pub local: Vec<SessionId>,
    /// The most entries a follower may be behind: the checker's bound on
    /// the lags it explores. A commit that would leave one further behind
    /// has it apply its oldest first.
    pub max_lag: RunConstant<u32>,
    /// Which of the ensemble's options this store runs with.
    pub cfg: RunConstant<EnsembleCfg>,
    /// The server that leads (0 until a failover).
    pub leader: u8,
    /// Ghost: the first `sync` a server answered behind the leader's
    /// commits — the session, where the server stood and where the
    /// leader's log did (`sync_is_current`).
    pub stale_sync: Option<(SessionId, u64, u64)>,
    /// Ghost: the notifications of the changes some follower still
    /// following has yet to apply, in header order (`Tally`).
    pub herd: Vec<Tally>,
}

/// Ghost, fed by the engines: the notifications one committed change has
/// sent so far on every server — the leader's when it took it, each
/// follower's as it applies it. A release's herd over an ensemble is the
/// sum: its waiters hear of it from their own servers, at different times.
/// A change is known by the header its notifications carry (the zxid or
/// revision it made: every change that notifies makes one).
///
/// Two tallies are the same when they count the same up to two: the herd's
/// monitor tells only one wake-up from more, and the clients named are
/// only the breach's words (the checker rebuilds a counterexample's states
/// from its path), so states that differ only there are one.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Tally {
    pub header: u64,
    /// The change was a release step's (a release, a session's close or
    /// expiry).
    pub release: bool,
    /// The live clients notified, and those told of a change that left
    /// them still not first (a barrier's, a queue's herd).
    pub woken: Woken,
    pub futile: Woken,
}

impl Tally {
    fn counted(&self) -> (u64, bool, u32, u32) {
        let up_to_two = |w: &Woken| w.count().min(2);
        (
            self.header,
            self.release,
            up_to_two(&self.woken),
            up_to_two(&self.futile),
        )
    }
}

impl PartialEq for Tally {
    fn eq(&self, other: &Tally) -> bool {
        self.counted() == other.counted()
    }
}

impl Eq for Tally {}

impl std::hash::Hash for Tally {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.counted().hash(h);
    }
}

/// The change a notification tells of: an etcd event names its revision
/// (a replayed one too); a ZooKeeper event is known by the header it
/// carries, the zxid of the change its server just applied (a watch that
/// fires when it is set again on another server carries that server's
/// header: counted with its latest change).
pub fn change_of(header: u64, event: &WatchEvent) -> u64 {
    match event {
        WatchEvent::Etcd { revision, .. } => *revision,
        WatchEvent::Zk { .. } | WatchEvent::Consul { .. } | WatchEvent::ConsulList { .. } => header,
    }
}

/// The notifications of one store step that carried one header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    pub header: u64,
    pub woken: Woken,
    pub futile: Woken,
}

/// Whom a store step's notifications woke: every live client told, those
/// told in vain (still not first), and, over an ensemble, the same by the
/// change each told of (one, but for a step that also made a lagging
/// follower apply an older change).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notified {
    pub woken: Woken,
    pub futile: Woken,
    pub by_change: Vec<Sent>,
}

impl Notified {
    /// Counts `msg` to `client` if it is a notification; whether it was.
    pub fn add(&mut self, client: ClientIdx, msg: &Msg, ensemble: bool) -> bool {
        let Msg::Notify {
            owns_first,
            header,
            event,
        } = msg
        else {
            return false;
        };
        let (owns_first, header) = (*owns_first, *header);
        self.woken.add(client);
        if !owns_first {
            self.futile.add(client);
        }
        if !ensemble {
            return true;
        }
        let header = change_of(header, event);
        let i = match self.by_change.iter().position(|g| g.header == header) {
            Some(i) => i,
            None => {
                self.by_change.push(Sent {
                    header,
                    ..Sent::default()
                });
                self.by_change.len() - 1
            }
        };
        let g = &mut self.by_change[i];
        g.woken.add(client);
        if !owns_first {
            g.futile.add(client);
        }
        true
    }
}

impl Follower {
    /// The requests it holds for want of a leader (`Owed::Lost`), taken
    /// out; the rest it goes on holding.
    pub fn take_lost(&mut self) -> Vec<Held> {
        let (lost, kept) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|h| h.owed.is_lost());
        self.held = kept;
        lost
    }
}

impl Ensemble {
    /// `cfg.servers` servers (odd, at least 3) beside a leader in state
    /// `leader`; `cfg.clients` clients connected round the servers from
    /// the first follower on (client 0 on server 1, client 1 on server 2,
    /// …), so that with fewer clients than servers every client starts on
    /// a follower.
    pub fn new(leader: &StoreState, cfg: EnsembleCfg) -> Ensemble {
        let EnsembleCfg {
            servers,
            clients,
            max_lag,
            ..
        } = cfg;
        let view = Box::new(leader.clone());
        Ensemble {
            followers: (1..servers)
                .map(|server| Follower {
                    view: view.clone(),
                    applied: 0,
                    held: Vec::new(),
                    told: Vec::new(),
                    link: LeaderLink::Up,
                    server,
                    missed_log: false,
                })
                .collect(),
            log: Vec::new(),
            base: 0,
            server_of: (0..clients).map(|c| first_server(c, servers)).collect(),
            seen: vec![0; usize::from(clients)],
            local: Vec::new(),
            max_lag: RunConstant(max_lag),
            cfg: RunConstant(cfg),
            leader: 0,
            stale_sync: None,
            herd: Vec::new(),
        }
    }

    /// The follower slot of server `server` (`None`: the leader).
    pub fn slot(&self, server: u8) -> Option<usize> {
        self.followers.iter().position(|f| f.server == server)
    }

    /// The number of follower `f`'s server.
    pub fn id(&self, f: usize) -> u8 {
        self.followers[f].server
    }

    /// How many servers the ensemble has.
    pub fn servers(&self) -> u8 {
        self.cfg.0.servers
    }

    /// Where server `server` has got to in the log (the leader: all of it).
    pub fn position(&self, server: u8) -> u64 {
        match self.slot(server) {
            None => self.committed(),
            Some(f) => self.followers[f].applied,
        }
    }

    /// The server `client` reconnects to: the next one round from its
    /// own that is not behind the client's last seen position and takes
    /// clients. Those behind refuse it ("client must try another server")
    /// and it tries the next; the leader never is behind.
    pub fn next_server(&self, client: ClientIdx) -> u8 {
        let n = self.servers();
        let seen = self.seen.get(usize::from(client)).copied().unwrap_or(0);
        let from = self.server(client);
        (1..=n)
            .map(|k| (from + k) % n)
            .find(|&s| self.position(s) >= seen && self.link(s).takes_clients())
            .unwrap_or(self.leader)
    }

    /// Server `server`'s link to the leader (the leader's own: up).
    pub fn link(&self, server: u8) -> LeaderLink {
        match self.slot(server) {
            None => LeaderLink::Up,
            Some(f) => self.followers[f].link,
        }
    }

    /// The clients connected to follower `f`.
    pub fn clients_on(&self, f: usize) -> Vec<ClientIdx> {
        self.clients_at(self.id(f))
    }

    /// The clients connected to server `server`.
    pub fn clients_at(&self, server: u8) -> Vec<ClientIdx> {
        (0..self.server_of.len() as ClientIdx)
            .filter(|&c| self.server(c) == server)
            .collect()
    }

    /// The servers `client` would be refused by on a reconnect now, in
    /// the order it tries them (one that is down takes no connection at
    /// all, and is not named).
    pub fn refusing(&self, client: ClientIdx) -> Vec<u8> {
        let n = self.servers();
        let to = self.next_server(client);
        let from = self.server(client);
        (1..n)
            .map(|k| (from + k) % n)
            .take_while(|&s| s != to)
            .filter(|&s| self.link(s).takes_clients())
            .collect()
    }

    /// A reply to `client` from `server` is on its way: the client's last
    /// seen position is that server's (kept only where clients move: no
    /// one else reads it).
    pub fn replied(&mut self, client: ClientIdx, server: u8) {
        let at = self.position(server);
        if let Some(seen) = self.seen.get_mut(usize::from(client)) {
            *seen = at;
        }
    }

    /// Whether `session` is a local session not yet upgraded.
    pub fn is_local(&self, session: SessionId) -> bool {
        self.local.binary_search(&session).is_ok()
    }

    /// The committed entries from log position `from` to `to` (none if
    /// `to` is not past `from`).
    pub fn log_between(&self, from: u64, to: u64) -> &[Entry] {
        let (a, b) = (from.saturating_sub(self.base), to.saturating_sub(self.base));
        self.log.get(a as usize..b as usize).unwrap_or_default()
    }

    /// How many entries the leader has committed.
    pub fn committed(&self) -> u64 {
        self.base + self.log.len() as u64
    }

    /// The server `client` is connected to.
    pub fn server(&self, client: ClientIdx) -> u8 {
        self.server_of
            .get(usize::from(client))
            .copied()
            .unwrap_or(self.leader)
    }

    /// The follower `client` is connected to, if not the leader.
    pub fn follower_of(&self, client: ClientIdx) -> Option<usize> {
        self.slot(self.server(client))
    }

    /// How far behind follower `f` is.
    pub fn lag(&self, f: usize) -> u64 {
        self.committed() - self.followers[f].applied
    }

    /// The followers with an entry to apply.
    pub fn behind(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.followers.len()).filter(|&f| self.lag(f) > 0)
    }

    /// Appends a committed entry. A local session's end, or its
    /// upgrade's `createSession`, leaves it local no more.
    pub fn commit(&mut self, entry: Entry) {
        if let Entry::End { session, .. }
        | Entry::Apply {
            session,
            req: Request::Connect,
        } = entry
        {
            if let Ok(i) = self.local.binary_search(&session) {
                self.local.remove(i);
            }
        }
        self.log.push(entry);
    }

    /// Holds `held` at follower `f` until it has applied the log to
    /// `held.at`.
    pub fn hold(&mut self, f: usize, held: Held) {
        let h = &mut self.followers[f].held;
        let at = h.partition_point(|x| x.at <= held.at);
        h.insert(at, held);
    }

    /// The entry follower `f` applies next, if it is behind.
    pub fn next_entry(&self, f: usize) -> Option<Entry> {
        let i = self.followers[f].applied.checked_sub(self.base)?;
        self.log.get(i as usize).cloned()
    }

    /// Follower `f` has applied one more entry: the replies now due,
    /// oldest first; entries every follower has applied leave the log.
    pub fn applied_one(&mut self, f: usize) -> Vec<Held> {
        let fo = &mut self.followers[f];
        fo.applied += 1;
        let due = fo.held.partition_point(|h| h.at <= fo.applied);
        let out: Vec<Held> = fo.held.drain(..due).collect();
        let floor = self
            .followers
            .iter()
            .map(|f| f.applied)
            .min()
            .unwrap_or(self.base);
        let done = (floor - self.base) as usize;
        self.log.drain(..done);
        self.base = floor;
        out
    }

    /// Where every server that will apply more and tell its clients has
    /// got to: the changes up to it have no notification left to send. A
    /// deposed ZooKeeper leader applies nothing more until it steps down,
    /// when it closes its clients' connections; a deposed etcd leader keeps
    /// its clients, and tells them of what it applies once it hears the
    /// new leader.
    fn applied_everywhere(&self) -> Option<u64> {
        let leases = self.cfg.0.leases;
        self.followers
            .iter()
            .filter(|f| f.link != LeaderLink::Deposed || leases)
            .map(|f| f.view.header())
            .min()
    }

    /// Whether a tally is of a change every server has applied, and its
    /// notifications counted: [`Ensemble::prune_tallies`] has work.
    pub fn tallies_to_prune(&self) -> bool {
        let oldest = self.herd.first().map(|t| t.header);
        matches!((oldest, self.applied_everywhere()), (Some(t), Some(h)) if t <= h)
    }

    /// The tallies of changes every server has applied go. The engines
    /// call it after they have counted a step's notifications: the last
    /// server to apply a change still adds to its tally.
    pub fn prune_tallies(&mut self) {
        if let Some(h) = self.applied_everywhere() {
            self.herd.retain(|t| t.header > h);
        }
    }

    /// The tally of the change known by `header`, opened if new (kept in
    /// header order).
    fn tally_of(&mut self, header: u64) -> &mut Tally {
        let i = self.herd.partition_point(|t| t.header < header);
        if self.herd.get(i).is_none_or(|t| t.header != header) {
            let tally = Tally {
                header,
                release: false,
                woken: Woken::default(),
                futile: Woken::default(),
            };
            self.herd.insert(i, tally);
        }
        &mut self.herd[i]
    }

    /// A store step over the ensemble: its notifications join the tallies
    /// of the changes they told of, and the change it made is a release's
    /// if `released` names it (its header). The tallies it touched, so far:
    /// what the monitors judge the herd by, and the metrics count.
    pub fn tally_step(&mut self, by_change: &[Sent], released: Option<u64>) -> Vec<Tally> {
        let mut touched: Vec<Tally> = by_change
            .iter()
            .map(|sent| {
                let t = self.tally_of(sent.header);
                t.woken.join_clients(sent.woken);
                t.futile.join_clients(sent.futile);
                *t
            })
            .collect();
        if let Some(header) = released {
            let t = self.tally_of(header);
            t.release = true;
            let t = *t;
            match touched.iter_mut().find(|x| x.header == header) {
                Some(x) => *x = t,
                None => touched.push(t),
            }
        }
        touched
    }

    /// What the servers hold for `client` (its server's, as the client
    /// is on one), those of a dropped connection too.
    pub fn held_for(&self, client: ClientIdx) -> impl Iterator<Item = &Held> + '_ {
        self.followers
            .iter()
            .flat_map(|f| &f.held)
            .filter(move |h| h.session.client == client)
    }

    /// Where follower `f` must have got to before it serves a read of
    /// `session`: past every request of the session it holds. A request
    /// held by another server (the client's old one) orders nothing here:
    /// the new server knows nothing of it.
    pub fn read_barrier(&self, f: usize, session: SessionId) -> Option<u64> {
        self.followers[f]
            .held
            .iter()
            .filter(|h| h.session.client == session.client && !h.owed.is_lost())
            .map(|h| h.at)
            .max()
    }

    /// `client`'s process is gone: the replies held for it go with its
    /// connection, and so do the watches it set on its server.
    pub fn connection_closed(&mut self, client: ClientIdx) {
        for f in &mut self.followers {
            f.held.retain(|h| h.session.client != client);
            f.view.connection_closed(client);
        }
    }
}

/// The server client `c` starts on, of `servers` (the leader is 0): server
/// (c + 1) mod `servers`, so that with fewer clients than servers every
/// client is on a follower. The validator places real clients by it too.
pub fn first_server(c: ClientIdx, servers: u8) -> u8 {
    ((u32::from(c) + 1) % u32::from(servers)) as u8
}

/// A leader failover's steps on the ensemble (the store's side, with the
/// timers and messages, is `Store::depose_leader` and `Store::elect`).
impl Ensemble {
    /// The leader is cut off from its followers: it becomes a follower slot
    /// of its own, `Deposed`, with `view` — its state as of the cut — as if
    /// it had applied the whole log; the followers hear nothing more (a
    /// follower already down stays down).
    pub fn depose(&mut self, view: StoreState) {
        let applied = self.committed();
        for f in &mut self.followers {
            match f.link {
                // A muted follower heard the whole log: it is cut off from
                // the deposed leader as the others are.
                LeaderLink::Up | LeaderLink::Muted => f.link = LeaderLink::Cut,
                LeaderLink::Cut | LeaderLink::Down | LeaderLink::Deposed => f.missed_log = true,
            }
        }
        self.followers.push(Follower {
            view: Box::new(view),
            applied,
            held: Vec::new(),
            told: Vec::new(),
            link: LeaderLink::Deposed,
            server: self.leader,
            missed_log: false,
        });
    }

    /// The server the followers elect: ZooKeeper's vote goes to the most
    /// log, then the highest server id. A follower that was following when
    /// the leader was cut off has received the whole committed log (the
    /// model commits a write when the leader takes it, so a majority has
    /// it); one cut off from the leader before, or down, has not
    /// (`missed_log`: the simulator's failover during an isolation), so the
    /// highest id of the others wins.
    pub fn candidate(&self) -> Option<usize> {
        (0..self.followers.len())
            .filter(|&f| self.followers[f].link != LeaderLink::Deposed)
            .max_by_key(|&f| {
                let fo = &self.followers[f];
                (!fo.missed_log, fo.server)
            })
    }

    /// Follower `f` leads: its slot goes (the leader's state is the store's
    /// own, which has applied the whole log), and every other follower but
    /// a deposed leader follows it. Returns its view, whose watches its
    /// clients carry to their next server.
    pub fn promote(&mut self, f: usize) -> StoreState {
        let new = self.followers.swap_remove(f);
        self.leader = new.server;
        for fo in &mut self.followers {
            fo.missed_log = false;
            if fo.link != LeaderLink::Deposed {
                fo.link = LeaderLink::Up;
            }
        }
        *new.view
    }

    /// The clients connected to a server other than a deposed leader.
    pub fn clients_following(&self) -> Vec<ClientIdx> {
        (0..self.server_of.len() as ClientIdx)
            .filter(|&c| self.link(self.server(c)) != LeaderLink::Deposed)
            .collect()
    }

    /// The deposed leader's slot, if one is deposed.
    pub fn deposed(&self) -> Option<usize> {
        self.followers
            .iter()
            .position(|f| f.link == LeaderLink::Deposed)
    }
}

/// A reconnect's landing in words: `to server 2`, and the servers that
/// refused it first.
pub fn moved_words(server: u8, refused: &[u8]) -> String {
    let mut s = format!("to server {server}");
    if !refused.is_empty() {
        let list: Vec<String> = refused.iter().map(|r| format!("server {r}")).collect();
        s.push_str(&format!(
            " (refused by {}: behind its last seen zxid)",
            list.join(", ")
        ));
    }
    s
}

impl Ensemble {
    /// Where `client`'s reconnect lands now, in words, if it moves.
    pub fn reconnect_words(&self, client: ClientIdx) -> Option<String> {
        let to = self.next_server(client);
        (self.cfg.0.clients_move && to != self.server(client))
            .then(|| moved_words(to, &self.refusing(client)))
    }
}

/// Where a request is served in an ensemble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// By the client's own server, from its view: ZooKeeper's reads (and
    /// the watches they set), etcd's watches and serializable reads.
    Local,
    /// Through the leader, committed, answered by the client's server
    /// once it has applied it: every write, a session's creation.
    Committed,
    /// By the leader's state, at once: what only the leader knows (etcd's
    /// linearizable reads, through its read index; a lease's
    /// time-to-live).
    Leader,
    /// ZooKeeper's `sync`: answered by the client's server once it has
    /// applied the leader's log as of the sync.
    Sync,
}

impl Route {
    pub fn of(req: &Request) -> Route {
        match req {
            Request::Exists { .. }
            | Request::GetData { .. }
            | Request::GetChildren { .. }
            | Request::Watch { .. }
            | Request::WatchRange { .. } => Route::Local,
            Request::Sync { .. } => Route::Sync,
            // `WithSerializable()`: the member's own answer.
            Request::Range(r) if r.serializable => Route::Local,
            Request::Range(_) | Request::LeaseTimeToLive { .. } => Route::Leader,
            Request::Connect
            | Request::Create { .. }
            | Request::Delete { .. }
            | Request::SetData { .. }
            | Request::Multi(_)
            | Request::LeaseGrant
            | Request::LeaseRevoke
            | Request::Txn(_)
            | Request::DeleteKey { .. } => Route::Committed,
            // The leader answers a keepalive; Redis and Consul have no
            // ensemble (the configuration refuses one).
            Request::LeaseKeepAlive | Request::Redis { .. } | Request::Consul(_) => Route::Leader,
        }
    }
}

/// The notifications follower `view` fires, with the session of each.
pub type Fired = Vec<(SessionId, WatchEvent)>;

/// How an entry's session end reads to [`StoreState::end_session_full`].
pub fn end_of(expired: bool) -> SessionEnd {
    if expired {
        SessionEnd::Expired
    } else {
        SessionEnd::Closed
    }
}
