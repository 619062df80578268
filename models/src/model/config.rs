//! What to check: the recipe, how many clients and rounds, the fault
//! budget, fencing and the client policy; `into_model()` builds the model.

use super::{RecipeModel, Time};
use crate::client::{Client, ClientTiming, Policy};
use crate::properties::PropertyName;
use crate::recipe::{App, RecipeRef, Reentry};
use crate::resource::Resource;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The smallest and largest client counts the model checker supports.
pub const MIN_CLIENTS: u8 = 2;
pub const MAX_CLIENTS: u8 = 5;

/// A queue's producers when none are given: half the clients (at least
/// one); 0 for every other application.
pub fn default_producers(recipe: &RecipeRef, clients: u16) -> u16 {
    if recipe.app() == App::Queue {
        (clients / 2).max(1)
    } else {
        0
    }
}

/// Checks a queue's split into producers and consumers: at least one of
/// each; and no producers for any other application. The error names the
/// setting.
pub fn check_producers(recipe: &RecipeRef, clients: u16, producers: u32) -> Result<(), String> {
    match recipe.app() {
        App::Queue if clients < 2 => Err(format!(
            "{recipe} is a queue, which needs at least 2 clients: a producer and a consumer (got {clients})"
        )),
        App::Queue if producers == 0 || producers >= u32::from(clients) => Err(format!(
            "{recipe} is a queue: producers must be at least 1 and fewer than the clients \
             ({clients}), so that someone consumes (got {producers})"
        )),
        App::Queue => Ok(()),
        App::Lock | App::Election | App::Barrier | App::SharedLock | App::Semaphore
            if producers != 0 =>
        {
            Err(not_for(recipe, Setting::Producers))
        }
        App::Lock | App::Election | App::Barrier | App::SharedLock | App::Semaphore => Ok(()),
    }
}

/// The application a count of clients in a role belongs to, and how the
/// error says so: a queue's producers, a shared lock's writers, a
/// semaphore's permits; `None` for any other setting.
fn role(setting: Setting) -> Option<(App, &'static str)> {
    match setting {
        Setting::Producers => Some((App::Queue, "producers are for queue recipes")),
        Setting::Writers => Some((App::SharedLock, "writers are for shared-lock recipes")),
        Setting::Permits => Some((App::Semaphore, "permits are for semaphore recipes")),
        Setting::Observers => Some((App::Election, "observers are for election recipes")),
        Setting::Clients
        | Setting::Rounds
        | Setting::Fencing
        | Setting::AcquireTimeout
        | Setting::Reentries
        | Setting::Interrupts
        | Setting::CriticalChecks
        | Setting::Faults
        | Setting::Crashes
        | Setting::Restarts
        | Setting::Ticks(_)
        | Setting::Masters
        | Setting::Redis(_)
        | Setting::Policy
        | Setting::Time
        | Setting::Servers
        | Setting::MaxLag
        | Setting::LocalSessions
        | Setting::Isolations
        | Setting::Mutes => None,
    }
}

/// The error for a role's count given to a recipe of another application.
fn not_for(recipe: &RecipeRef, setting: Setting) -> String {
    let what = role(setting).map_or("", |(_, what)| what);
    format!("{what}; {recipe} is {} recipe", recipe.app().a_name())
}

/// A count of producers, writers or permits the user gave (`--writers`,
/// `permits =`) is for a queue, a shared lock or a semaphore: given for any
/// other recipe, even as 0, it is a mistake (the error says so).
pub fn check_given(recipe: &RecipeRef, setting: Setting, given: bool) -> Result<(), String> {
    match role(setting) {
        Some((app, _)) if given && recipe.app() != app => Err(not_for(recipe, setting)),
        Some(_) | None => Ok(()),
    }
}

/// A shared lock's writers when none are given: one.
pub fn default_writers(recipe: &RecipeRef) -> u16 {
    u16::from(recipe.app() == App::SharedLock)
}

/// Checks a shared lock's split into writers and readers: at least one
/// of each; no writers for any other application. The error names the
/// setting and the allowed values.
pub fn check_writers(recipe: &RecipeRef, clients: u16, writers: u32) -> Result<(), String> {
    match recipe.app() {
        App::SharedLock if writers == 0 || writers >= u32::from(clients) => Err(format!(
            "{recipe} is a shared lock: writers must be at least 1 and fewer than the clients \
             ({clients}), so that someone reads (got {writers})"
        )),
        App::SharedLock => Ok(()),
        App::Lock | App::Election | App::Barrier | App::Queue | App::Semaphore if writers != 0 => {
            Err(not_for(recipe, Setting::Writers))
        }
        App::Lock | App::Election | App::Barrier | App::Queue | App::Semaphore => Ok(()),
    }
}

/// Checks an election's observers: fewer than the clients (someone
/// campaigns), and only where the library has an observer; none for any
/// other application.
pub fn check_observers(recipe: &RecipeRef, clients: u16, observers: u32) -> Result<(), String> {
    let observes = recipe.observe(crate::ids::SessionId::first(0)).is_some();
    match recipe.app() {
        App::Election if observers == 0 => Ok(()),
        App::Election if !observes => Err(format!(
            "{recipe} has no observer: its library has no call that follows the leader \
             without campaigning (etcd-election's Observe has)"
        )),
        App::Election if observers >= u32::from(clients) => Err(format!(
            "{recipe}: observers must be fewer than the clients ({clients}), so that someone \
             campaigns (got {observers})"
        )),
        App::Election => Ok(()),
        App::Lock | App::SharedLock | App::Barrier | App::Queue | App::Semaphore
            if observers != 0 =>
        {
            Err(not_for(recipe, Setting::Observers))
        }
        App::Lock | App::SharedLock | App::Barrier | App::Queue | App::Semaphore => Ok(()),
    }
}

/// A semaphore's permits when none are given: one fewer than the clients
/// (so that someone waits), at least one, at most what the recipe keeps
/// track of.
pub fn default_permits(recipe: &RecipeRef, clients: u16) -> u16 {
    if recipe.app() == App::Semaphore {
        clients.saturating_sub(1).max(1).min(recipe.max_permits())
    } else {
        0
    }
}

/// Checks a semaphore's permits: at least 1 and fewer than the clients
/// (with as many permits as clients nobody ever waits), and no more than
/// the recipe keeps track of; none for any other application.
pub fn check_permits(recipe: &RecipeRef, clients: u16, permits: u32) -> Result<(), String> {
    match recipe.app() {
        App::Semaphore if permits == 0 || permits >= u32::from(clients) => Err(format!(
            "{recipe} is a semaphore: permits must be at least 1 and fewer than the clients \
             ({clients}), so that someone waits (got {permits})"
        )),
        App::Semaphore if permits > u32::from(recipe.max_permits()) => Err(format!(
            "{recipe} keeps at most {} holders: permits must be at most that (got {permits})",
            recipe.max_permits()
        )),
        App::Semaphore => Ok(()),
        App::Lock | App::Election | App::Barrier | App::Queue | App::SharedLock if permits != 0 => {
            Err(not_for(recipe, Setting::Permits))
        }
        App::Lock | App::Election | App::Barrier | App::Queue | App::SharedLock => Ok(()),
    }
}

/// Whether a recipe's clients write to the guarded resource: a lock's
/// holder, a leader and a shared lock's writer do; a barrier's, a queue's
/// and a semaphore's clients do not.
pub fn writes_to_resource(recipe: &RecipeRef) -> bool {
    recipe.app().holders_write()
}

/// Fencing (`--fencing`, `fencing = true`) guards the resource that a
/// holder's writes go to: asked for a recipe whose clients write nothing,
/// it would change nothing, and saying so beats a silent no-op.
pub fn check_fencing(recipe: &RecipeRef, fencing: bool) -> Result<(), String> {
    if fencing && !writes_to_resource(recipe) {
        return Err(format!(
            "fencing guards the resource a lock holder's or leader's writes go to; {recipe} is a {} recipe, whose clients write nothing to it",
            recipe.app()
        ));
    }
    Ok(())
}

/// What is wrong with a [`ModelCfg`]: the setting and why. The message
/// speaks of settings, not of any program's flags; a front end adds its own
/// names (the CLI: `--clients`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The setting at fault.
    pub setting: Setting,
    /// What is wrong with it, in words.
    pub reason: String,
}

/// A setting of [`ModelCfg`], as a [`ConfigError`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    Clients,
    Rounds,
    Producers,
    Writers,
    Permits,
    /// An election's observers.
    Observers,
    Fencing,
    AcquireTimeout,
    Reentries,
    /// The application's interrupts of an acquisition.
    Interrupts,
    /// Consul: node checks that go critical.
    CriticalChecks,
    /// The fault budget as a whole (its total).
    Faults,
    Crashes,
    /// Restarts of crashed clients.
    Restarts,
    /// A timed check's durations: the key of `--ticks` named.
    Ticks(&'static str),
    /// Redis: how many masters (a Redlock's).
    Masters,
    /// Redis: the store's faults and deployment, by the setting's name:
    /// `master_restarts`, `clock_jumps`, `failovers`, `replica`,
    /// `persistence`.
    Redis(&'static str),
    /// The client's policy.
    Policy,
    /// Untimed or in ticks.
    Time,
    /// An ensemble's servers.
    Servers,
    /// The bound on a follower's lag.
    MaxLag,
    /// ZooKeeper's local sessions.
    LocalSessions,
    /// A follower cut off from the leader.
    Isolations,
    /// A follower the leader does not hear.
    Mutes,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    fn new(setting: Setting, reason: String) -> Self {
        ConfigError { setting, reason }
    }
}

/// An acquire timeout (`--acquire-timeout`, `acquire_timeout_ms`) is the
/// lock application's, for a recipe whose source can give an acquisition
/// up; the error names the recipes that can.
pub fn check_acquire_timeout(recipe: &RecipeRef) -> Result<(), String> {
    let can = |r: &RecipeRef| r.app() == App::Lock && r.withdraws();
    if can(recipe) {
        return Ok(());
    }
    Err(format!(
        "an acquire timeout gives up a lock acquisition, which {recipe}'s source does not do; \
         recipes that can: {}",
        recipes_that(can)
    ))
}

/// A node check going critical (`--critical-checks`, a scenario's
/// `check-critical` fault) invalidates a Consul session: Consul's only.
pub fn check_critical_checks(recipe: &RecipeRef) -> Result<(), String> {
    if recipe.face() == crate::recipe::Face::Consul {
        return Ok(());
    }
    Err(format!(
        "a node check going critical invalidates a Consul session; {recipe} talks to {:?}",
        recipe.face()
    ))
}

/// An interrupt (`--interrupts`, a scenario's `interrupt` fault) is the
/// application's, for a recipe whose library returns from an interrupted
/// acquisition at once; the error names the recipes that do.
pub fn check_interrupts(recipe: &RecipeRef) -> Result<(), String> {
    let can = |r: &RecipeRef| r.app() == App::Lock && r.interruptible();
    if can(recipe) {
        return Ok(());
    }
    Err(format!(
        "an interrupt returns from an acquisition with its request on the way, which \
         {recipe}'s library does not model; recipes that do: {}",
        recipes_that(can)
    ))
}

/// The runnable recipes (`name:variant`) for which `pred` holds, listed
/// for an error message.
fn recipes_that(pred: impl Fn(&RecipeRef) -> bool) -> String {
    crate::recipes::runnable()
        .into_iter()
        .filter(|r| pred(r))
        .map(|r| r.id())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The most re-entries a holder makes in one hold.
pub const MAX_REENTRIES: u32 = 2;

/// Re-entries (`--reentries`, `reentries`) are a lock holder's second
/// acquire: at most [`MAX_REENTRIES`], and only for a recipe whose library's
/// answer to it is modelled; the error names the recipes that are.
pub fn check_reentries(recipe: &RecipeRef, reentries: u32) -> Result<(), String> {
    if reentries == 0 {
        return Ok(());
    }
    if reentries > MAX_REENTRIES {
        return Err(format!(
            "a holder re-enters at most {MAX_REENTRIES} times in a hold (got {reentries})"
        ));
    }
    let modelled = |r: &RecipeRef| r.app() == App::Lock && r.reentry() != Reentry::Unsupported;
    if modelled(recipe) {
        return Ok(());
    }
    Err(format!(
        "re-entries are a lock holder's second acquire, which {recipe}'s source does not \
         model; recipes that do: {}",
        recipes_that(modelled)
    ))
}

/// How many faults of each kind a run may inject, and how many crashed
/// clients may come back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultBudget {
    pub crashes: u8,
    pub pauses: u8,
    pub partitions: u8,
    pub lost_replies: u8,
    /// Crashed clients that may restart as new processes (at most
    /// `crashes`; 0: every crash is for good). Not a fault: it spends none
    /// of the three the checker allows.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restarts: u8,
    /// Redis: masters that restart (without persistence: empty).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub master_restarts: u8,
    /// Redis: a master's clock jumps forward past its keys' TTLs.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_jumps: u8,
    /// Redis: the first master's replica is promoted in its place.
    /// Consul: the leader fails over, forgetting the lock-delays.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failovers: u8,
    /// The application interrupts an acquisition (a recipe whose library
    /// can be interrupted: `LockRecipe::interruptible`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interrupts: u8,
    /// Consul: a client's node check goes critical, which invalidates its
    /// session at once, whatever its TTL, while the client runs on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub critical_checks: u8,
    /// A ZooKeeper ensemble: a follower cut off from the leader (the
    /// simulator's `isolate`); it gives the leader up, or hears it again,
    /// when the checker says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub isolations: u8,
    /// A ZooKeeper ensemble: a follower the leader stops hearing (the
    /// simulator's `mute`): it still applies the leader's commits; the
    /// leader drops it, or hears it again, when the checker says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mutes: u8,
}

impl FaultBudget {
    /// The store's faults (Redis): a master restart, a clock jump, a
    /// failover.
    pub fn store_faults(&self) -> u32 {
        u32::from(self.master_restarts) + u32::from(self.clock_jumps) + u32::from(self.failovers)
    }
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// The fields in order, as a derived hash would take them, but `restarts`
/// only when some are left: a budget of a check without restarts hashes as
/// it did before they existed, so its fingerprints (which decide the
/// representatives symmetry keeps, and so the counterexamples found) are
/// what they were.
impl std::hash::Hash for FaultBudget {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.crashes.hash(h);
        self.pauses.hash(h);
        self.partitions.hash(h);
        self.lost_replies.hash(h);
        if self.restarts != 0 {
            self.restarts.hash(h);
        }
        // The store's faults likewise, only where a check has some.
        if self.store_faults() != 0 {
            (self.master_restarts, self.clock_jumps, self.failovers).hash(h);
        }
        if self.interrupts != 0 {
            self.interrupts.hash(h);
        }
        if self.critical_checks != 0 {
            self.critical_checks.hash(h);
        }
        if self.isolations != 0 {
            self.isolations.hash(h);
        }
        if self.mutes != 0 {
            self.mutes.hash(h);
        }
    }
}

/// What only a Redis store has — its masters' number, persistence,
/// replica and faults — asked of a Redis recipe only, and in a form its
/// recipes can run; the policies that watch a session have none to watch.
fn check_redis(cfg: &ModelCfg) -> Result<(), ConfigError> {
    use crate::recipe::Face;
    let redis = cfg.recipe.face() == Face::Redis;
    let consul = cfg.recipe.face() == Face::Consul;
    // A leader failover over a ZooKeeper ensemble or an etcd cluster
    // (docs/ensemble.md).
    let ensemble = matches!(cfg.recipe.face(), Face::ZooKeeper | Face::Etcd) && cfg.servers > 1;
    if ensemble && cfg.faults.failovers > 1 {
        return Err(ConfigError::new(
            Setting::Redis("failovers"),
            format!(
                "{}: the model cuts an ensemble's leader off once a check: at most 1",
                cfg.faults.failovers
            ),
        ));
    }
    if consul && cfg.time.ticks().is_some() {
        return Err(ConfigError::new(
            Setting::Time,
            "the timed check does not keep Consul's lock-delays and session TTL windows yet: \
             check Consul recipes untimed, or simulate them"
                .into(),
        ));
    }
    let b = cfg.faults;
    let d = cfg.deployment;
    let what = if b.master_restarts > 0 {
        Some(("master_restarts", "master restarts are"))
    } else if b.clock_jumps > 0 {
        Some(("clock_jumps", "clock jumps are"))
    } else if b.failovers > 0 && !consul && !ensemble {
        Some(("failovers", "failovers are"))
    } else if d.replica {
        Some(("replica", "a replica is"))
    } else if d.persistence != crate::store::redis::Persistence::None {
        Some(("persistence", "persistence is"))
    } else {
        None
    };
    if let (false, Some((setting, what))) = (redis, what) {
        return Err(ConfigError::new(
            Setting::Redis(setting),
            format!(
                "{what} for Redis recipes (failovers for Redis, Consul, a ZooKeeper ensemble \
                 and an etcd cluster; {} talks to {:?})",
                cfg.recipe,
                cfg.recipe.face()
            ),
        ));
    }
    if !redis {
        return Ok(());
    }
    check_masters(&cfg.recipe).map_err(|e| ConfigError::new(Setting::Masters, e))?;
    if b.failovers > 0 && !d.replica {
        return Err(ConfigError::new(
            Setting::Redis("failovers"),
            "a failover promotes the first master's replica: deploy one (--replica)".into(),
        ));
    }
    check_redis_policy(&cfg.recipe, cfg.policy)
        .map_err(|e| ConfigError::new(Setting::Policy, e))?;
    if cfg.time.ticks().is_some() {
        return Err(ConfigError::new(
            Setting::Time,
            "the timed check does not keep Redis keys' TTLs yet: check Redis recipes untimed, \
             or simulate them"
                .into(),
        ));
    }
    Ok(())
}

/// A lock over several masters (Redlock) needs an odd number of them, at
/// least 3, for a majority to be one lock.
pub fn check_masters(recipe: &RecipeRef) -> Result<(), String> {
    let masters = recipe.setup().masters;
    let spreads = recipe.on_masters(masters).is_some();
    if spreads && (masters < 3 || masters.is_multiple_of(2)) {
        return Err(format!(
            "masters must be odd and at least 3, so that a majority is one lock (got {masters})"
        ));
    }
    Ok(())
}

/// A Redis client has no session whose silence a policy could time:
/// naive and oblivious only (Redlock's validity time is the recipe's own).
pub fn check_redis_policy(recipe: &RecipeRef, policy: Policy) -> Result<(), String> {
    if recipe.face() == crate::recipe::Face::Redis && policy.keeps_a_deadline() {
        return Err(format!(
            "a Redis client has no session whose silence it could time ({policy} policy); \
             use naive or oblivious (Redlock's validity time is the recipe's own)"
        ));
    }
    Ok(())
}

/// Restarts bring crashed clients back: at most one for each crash.
fn check_restarts(faults: FaultBudget) -> Result<(), ConfigError> {
    let FaultBudget {
        crashes, restarts, ..
    } = faults;
    if restarts == 0 || restarts <= crashes {
        return Ok(());
    }
    let reason = if crashes == 0 {
        format!("a restart brings a crashed client back, and no crash is allowed (got {restarts} restarts, 0 crashes)")
    } else {
        format!("a restart brings a crashed client back: restarts ({restarts}) must be at most crashes ({crashes})")
    };
    Err(ConfigError::new(Setting::Restarts, reason))
}

/// A model-checking configuration; `into_model()` builds the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelCfg {
    pub recipe: RecipeRef,
    pub clients: u8,
    pub rounds: u8,
    pub faults: FaultBudget,
    pub fencing: bool,
    pub policy: Policy,
    /// A queue: how many of the clients produce (the first ones); the
    /// others consume. 0 for every other application.
    pub producers: u8,
    /// A lock acquired with a timeout: a client may give an acquisition
    /// up at any moment the recipe waits (the checker does not model how
    /// long), and its round ends without a hold. Only for a lock recipe
    /// that can ([`crate::recipe::Recipe::withdraws`]).
    pub acquire_timeout: bool,
    /// A lock: how often a holder acquires again in each hold (nested),
    /// as its library answers a second acquire (0 to 2; only for a recipe
    /// whose [`crate::recipe::Recipe::reentry`] says).
    pub reentries: u8,
    /// A shared lock: how many of the clients write (the first ones); the
    /// others read. 0 for every other application.
    pub writers: u8,
    /// A semaphore: how many leases it has. 0 for every other application.
    pub permits: u8,
    /// An election: how many of the clients observe (the first ones) rather
    /// than campaign, where the library has an observer. 0 by default.
    pub observers: u8,
    /// How the checker treats time: untimed (the default) or in ticks.
    pub time: Time,
    /// Redis: persistence and replicas (the masters are the recipe's).
    pub deployment: crate::store::redis::Deployment,
    /// ZooKeeper and etcd: the servers of the ensemble (1: one server,
    /// linearizable; 3 or more: a leader and followers that lag).
    pub servers: u8,
    /// An ensemble's followers may be this many committed entries behind
    /// the leader at most: the bound on the lags the checker explores.
    pub max_lag: u8,
    /// ZooKeeper's `localSessionsEnabled`: a follower opens a new session
    /// by itself, from its own view.
    pub local_sessions: bool,
}

/// The most servers an ensemble can have in a check.
pub const MAX_SERVERS: u8 = 7;
/// The most entries a follower may lag in a check (the default: 2).
pub const MAX_LAG: u8 = 8;
pub const DEFAULT_MAX_LAG: u8 = 2;

/// Checks an ensemble's servers and lag bound for `recipe`.
pub fn check_servers(recipe: &RecipeRef, servers: u8) -> Result<(), String> {
    if servers == 0 || servers.is_multiple_of(2) || servers > MAX_SERVERS {
        return Err(format!(
            "servers must be odd, 1 to {MAX_SERVERS}: an ensemble needs a majority (got {servers})"
        ));
    }
    match recipe.face() {
        crate::recipe::Face::ZooKeeper | crate::recipe::Face::Etcd => Ok(()),
        crate::recipe::Face::Redis | crate::recipe::Face::Consul if servers > 1 => Err(format!(
            "{recipe} is a {:?} recipe: an ensemble of servers is ZooKeeper's or etcd's \
             (Redis has --replica; Consul's servers stand behind one agent)",
            recipe.face()
        )),
        crate::recipe::Face::Redis | crate::recipe::Face::Consul => Ok(()),
    }
}

/// Checks ZooKeeper's local sessions: a follower's, so an ensemble's, and
/// ZooKeeper's alone.
pub fn check_local_sessions(recipe: &RecipeRef, servers: u8, local: bool) -> Result<(), String> {
    match (local, recipe.face()) {
        (false, _) => Ok(()),
        (true, crate::recipe::Face::ZooKeeper) if servers > 1 => Ok(()),
        (true, crate::recipe::Face::ZooKeeper) => Err(
            "local sessions are a follower's (ZooKeeper's localSessionsEnabled): they need \
             servers 3 or more"
                .into(),
        ),
        (
            true,
            face @ (crate::recipe::Face::Etcd
            | crate::recipe::Face::Redis
            | crate::recipe::Face::Consul),
        ) => Err(format!(
            "{recipe} talks to {face:?}: local sessions are ZooKeeper's (localSessionsEnabled)"
        )),
    }
}

/// Checks the isolated followers: a ZooKeeper ensemble's follower, or an
/// etcd cluster's member, cut off from the leader.
pub fn check_isolations(recipe: &RecipeRef, servers: u8, isolations: u8) -> Result<(), String> {
    match (isolations, recipe.face()) {
        (0, _) => Ok(()),
        (_, crate::recipe::Face::ZooKeeper | crate::recipe::Face::Etcd) if servers > 1 => Ok(()),
        (_, crate::recipe::Face::ZooKeeper | crate::recipe::Face::Etcd) => Err(
            "an isolation cuts a follower off from the leader: it needs --servers 3 or more".into(),
        ),
        (_, face @ (crate::recipe::Face::Redis | crate::recipe::Face::Consul)) => Err(format!(
            "{recipe} talks to {face:?}: an isolation is a ZooKeeper ensemble's follower's or \
             an etcd cluster's member's"
        )),
    }
}

/// Checks the muted followers: a ZooKeeper ensemble's (etcd's Raft has
/// no syncLimit to drop a member by).
pub fn check_mutes(recipe: &RecipeRef, servers: u8, mutes: u8) -> Result<(), String> {
    match (mutes, recipe.face()) {
        (0, _) => Ok(()),
        (_, crate::recipe::Face::ZooKeeper) if servers > 1 => Ok(()),
        (_, crate::recipe::Face::ZooKeeper) => Err(
            "a mute holds a follower's half of its link to the leader: it needs --servers 3 or \
             more"
                .into(),
        ),
        (
            _,
            face @ (crate::recipe::Face::Etcd
            | crate::recipe::Face::Redis
            | crate::recipe::Face::Consul),
        ) => Err(format!(
            "{recipe} talks to {face:?}: a mute is a ZooKeeper ensemble's follower's, which \
                 the leader drops after syncLimit × tickTime"
        )),
    }
}

/// Checks the bound on a follower's lag: 1 to [`MAX_LAG`], and only with
/// an ensemble.
pub fn check_max_lag(servers: u8, max_lag: u8) -> Result<(), String> {
    if !(1..=MAX_LAG).contains(&max_lag) {
        return Err(format!(
            "max-lag must be 1 to {MAX_LAG} committed entries (got {max_lag})"
        ));
    }
    if servers == 1 && max_lag != DEFAULT_MAX_LAG {
        return Err("max-lag bounds a follower's lag: it needs --servers 3 or more".into());
    }
    Ok(())
}

impl ModelCfg {
    pub fn new(recipe: RecipeRef, clients: u8) -> Self {
        ModelCfg {
            clients,
            rounds: 1,
            faults: FaultBudget::default(),
            fencing: false,
            policy: Policy::Naive,
            // At most half of a u8 count: it fits.
            producers: default_producers(&recipe, clients.into()) as u8,
            acquire_timeout: false,
            reentries: 0,
            writers: default_writers(&recipe) as u8,
            // Fewer than the clients, which fit in a u8.
            permits: default_permits(&recipe, clients.into()) as u8,
            observers: 0,
            time: Time::Untimed,
            deployment: Default::default(),
            servers: 1,
            max_lag: DEFAULT_MAX_LAG,
            local_sessions: false,
            recipe,
        }
    }

    /// Every property this configuration is judged by: its application's,
    /// and `reentry_immediate` where holders re-enter.
    pub fn judged(&self) -> Vec<PropertyName> {
        PropertyName::judging_recipe(&self.recipe, self.reentries > 0, self.observers > 0)
            // Only a leader failover over a ZooKeeper ensemble answers a
            // `sync` stale: judged where one can happen (etcd has none).
            .chain(
                (self.servers > 1
                    && self.faults.failovers > 0
                    && self.recipe.face() == crate::recipe::Face::ZooKeeper)
                    .then_some(PropertyName::SyncIsCurrent),
            )
            .collect()
    }

    /// Whether every client runs the same program, so that symmetry
    /// reduction may swap them: not a queue's producers and consumers, nor
    /// a shared lock's writers and readers.
    pub fn clients_interchangeable(&self) -> bool {
        // In an ensemble each client is tied to its server, which the
        // renaming of clients does not rename (yet).
        !matches!(self.recipe.app(), App::Queue | App::SharedLock)
            && self.servers == 1
            && self.observers == 0
    }

    /// Checks the configuration; the error names the offending setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(MIN_CLIENTS..=MAX_CLIENTS).contains(&self.clients) {
            return Err(ConfigError::new(
                Setting::Clients,
                format!(
                    "clients must be between {MIN_CLIENTS} and {MAX_CLIENTS} for model checking \
                     (got {}); use the simulator for more",
                    self.clients
                ),
            ));
        }
        if !(1..=3).contains(&self.rounds) {
            return Err(ConfigError::new(
                Setting::Rounds,
                format!("rounds must be between 1 and 3 (got {})", self.rounds),
            ));
        }
        check_producers(&self.recipe, self.clients.into(), self.producers.into())
            .map_err(|e| ConfigError::new(Setting::Producers, e))?;
        check_writers(&self.recipe, self.clients.into(), self.writers.into())
            .map_err(|e| ConfigError::new(Setting::Writers, e))?;
        check_permits(&self.recipe, self.clients.into(), self.permits.into())
            .map_err(|e| ConfigError::new(Setting::Permits, e))?;
        check_observers(&self.recipe, self.clients.into(), self.observers.into())
            .map_err(|e| ConfigError::new(Setting::Observers, e))?;
        check_fencing(&self.recipe, self.fencing)
            .map_err(|e| ConfigError::new(Setting::Fencing, e))?;
        if self.acquire_timeout {
            check_acquire_timeout(&self.recipe)
                .map_err(|e| ConfigError::new(Setting::AcquireTimeout, e))?;
        }
        check_reentries(&self.recipe, self.reentries.into())
            .map_err(|e| ConfigError::new(Setting::Reentries, e))?;
        if self.faults.interrupts > 0 {
            check_interrupts(&self.recipe).map_err(|e| ConfigError::new(Setting::Interrupts, e))?;
        }
        if self.faults.critical_checks > 0 {
            check_critical_checks(&self.recipe)
                .map_err(|e| ConfigError::new(Setting::CriticalChecks, e))?;
        }
        if self.recipe.app() == crate::recipe::App::Barrier && self.rounds != 1 {
            return Err(ConfigError::new(
                Setting::Rounds,
                format!(
                    "{} is a barrier, which its group passes once: rounds must be 1 (got {})",
                    self.recipe, self.rounds
                ),
            ));
        }
        let total = self.faults.crashes as u32
            + self.faults.pauses as u32
            + self.faults.partitions as u32
            + self.faults.lost_replies as u32
            + self.faults.interrupts as u32
            + self.faults.critical_checks as u32
            + self.faults.isolations as u32
            + self.faults.mutes as u32;
        if total > 3 {
            return Err(ConfigError::new(
                Setting::Faults,
                format!(
                    "at most 3 faults in all can be model-checked (got {total}); use the simulator for more"
                ),
            ));
        }
        check_restarts(self.faults)?;
        check_redis(self)?;
        check_servers(&self.recipe, self.servers)
            .map_err(|e| ConfigError::new(Setting::Servers, e))?;
        check_max_lag(self.servers, self.max_lag)
            .map_err(|e| ConfigError::new(Setting::MaxLag, e))?;
        check_local_sessions(&self.recipe, self.servers, self.local_sessions)
            .map_err(|e| ConfigError::new(Setting::LocalSessions, e))?;
        check_isolations(&self.recipe, self.servers, self.faults.isolations)
            .map_err(|e| ConfigError::new(Setting::Isolations, e))?;
        check_mutes(&self.recipe, self.servers, self.faults.mutes)
            .map_err(|e| ConfigError::new(Setting::Mutes, e))?;
        if self.servers > 1 && self.time.ticks().is_some() {
            return Err(ConfigError::new(
                Setting::Servers,
                "the timed checker keeps no follower's lag: check an ensemble untimed, or \
                 simulate it"
                    .into(),
            ));
        }
        if let Some(ticks) = self.time.ticks() {
            ticks
                .validate(self.policy, &self.recipe, self.acquire_timeout)
                .map_err(|(key, reason)| ConfigError::new(Setting::Ticks(key), reason))?;
        }
        if self.faults.crashes >= self.clients {
            return Err(ConfigError::new(
                Setting::Crashes,
                format!(
                    "crashes ({}) must be fewer than clients ({}), or nobody is left to take the lock",
                    self.faults.crashes, self.clients
                ),
            ));
        }
        Ok(())
    }

    /// The model of this configuration, or what is wrong with it
    /// ([`ModelCfg::validate`]): a model with no clients or no rounds
    /// would report every safety property held of nothing.
    pub fn into_model(self) -> Result<RecipeModel, ConfigError> {
        self.validate()?;
        let (timing, session_timeout) = match self.time.ticks() {
            Some(ticks) => (
                ticks.client_timing(self.acquire_timeout),
                ticks.session_timeout(),
            ),
            None => (
                ClientTiming {
                    // Any length: the checker lets the timeout fire at any moment.
                    acquire_timeout: self.acquire_timeout.then_some(Duration::from_secs(1)),
                    ..ClientTiming::default()
                },
                Duration::from_secs(6),
            ),
        };
        Ok(RecipeModel {
            store: Store {
                deployment: self.deployment,
                observers: self.observers.into(),
                ensemble: (self.servers > 1).then(|| {
                    crate::store::EnsembleCfg::new(
                        self.recipe.face(),
                        self.servers,
                        self.clients.into(),
                        self.max_lag.into(),
                        self.local_sessions,
                    )
                }),
                ..Store::for_recipe(&self.recipe, session_timeout, self.clients as u16)
            },
            resource: Resource::new(self.fencing),
            client: Client {
                // A barrier recipe is made for its group's size, a
                // semaphore's for its permits.
                recipe: self
                    .recipe
                    .in_group(self.clients as u16)
                    .with_permits(self.permits.into()),
                rounds: self.rounds,
                policy: self.policy,
                timing,
                producers: self.producers.into(),
                reentries: self.reentries,
                writers: self.writers.into(),
                observers: self.observers.into(),
            },
            cfg: self,
        })
    }
}

impl fmt::Display for ModelCfg {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{} with {} clients, {} round{}, {} policy, fencing {}",
            self.recipe,
            self.clients,
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
            self.policy,
            if self.fencing { "on" } else { "off" }
        )?;
        if self.servers > 1 {
            write!(
                f,
                ", {} servers (followers at most {} behind)",
                self.servers, self.max_lag
            )?;
            if self.local_sessions {
                write!(f, ", local sessions")?;
            }
        }
        if self.acquire_timeout {
            write!(f, ", acquire timeout")?;
        }
        if self.reentries > 0 {
            let s = if self.reentries == 1 { "y" } else { "ies" };
            write!(f, ", {} reentr{s}", self.reentries)?;
        }
        if self.recipe.app() == App::Queue {
            write!(
                f,
                " ({} producing, {} consuming)",
                self.producers,
                self.clients.saturating_sub(self.producers)
            )?;
        }
        if self.recipe.app() == App::SharedLock {
            write!(
                f,
                " ({} writing, {} reading)",
                self.writers,
                self.clients.saturating_sub(self.writers)
            )?;
        }
        if self.observers > 0 {
            write!(
                f,
                " ({} observing, {} campaigning)",
                self.observers,
                self.clients.saturating_sub(self.observers)
            )?;
        }
        if self.recipe.app() == App::Semaphore {
            let s = if self.permits == 1 { "" } else { "s" };
            write!(f, " ({} permit{s})", self.permits)?;
        }
        let b = self.faults;
        let faults: Vec<String> = [
            (b.crashes, "crash"),
            (b.pauses, "pause"),
            (b.partitions, "partition"),
            (b.lost_replies, "lost reply"),
            (b.interrupts, "interrupt"),
            (b.critical_checks, "critical check"),
            (b.restarts, "restart"),
            (b.master_restarts, "master restart"),
            (b.clock_jumps, "clock jump"),
            (b.failovers, "failover"),
            (b.isolations, "isolation"),
            (b.mutes, "mute"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if faults.is_empty() {
            write!(f, ", no faults")?;
        } else {
            write!(f, ", faults: {}", faults.join(", "))?;
        }
        match self.time.ticks() {
            Some(ticks) => write!(f, ", time in {ticks}"),
            None => Ok(()),
        }
    }
}
