//! Scenario files: what to simulate. TOML; an unknown key, a wrong type or an
//! impossible value is an error naming the file, the key and the reason.
//!
//! ```toml
//! recipe = "fair-predecessor"   # any registered recipe (`lockstep recipes` lists them)
//! variant = "no-guid"           # optional: one of the recipe's variants
//! clients = 5
//! rounds = 3
//! seed = 42
//! fencing = false
//! policy = "naive"              # or "lease-aware"
//! guid = true                   # fair-predecessor only: false is variant "no-guid"
//!
//! [timing]                      # milliseconds; ranges are [low, high]
//! session_timeout_ms = 4000     # ZooKeeper session timeout / etcd lease TTL
//! ping_interval_ms = 1333       # default: a third of the timeout
//! think_ms = [5, 50]
//! hold_ms = [10, 40]
//! latency_ms = [0.2, 2.0]       # one way, per message
//! retry_ms = 1000
//! deadline_ms = 2600            # lease-aware: default two thirds of the timeout
//!
//! [faults]                      # randomized: each kind a rate and a duration
//! until_ms = 20000              # no new faults after this
//! pause = { rate_per_s = 0.2, duration_ms = [3000, 6000] }
//! crash = { rate_per_s = 0.1, duration_ms = [500, 2000] }   # down time; then it restarts
//! partition = { rate_per_s = 0.1, duration_ms = [1000, 8000] }
//! lost_reply = { rate_per_s = 0.5 }
//! delay = { rate_per_s = 0.2, duration_ms = [100, 1000], extra_ms = [50, 500] }
//!
//! [[schedule]]                  # or explicit faults
//! at_ms = 300
//! kind = "pause"
//! client = 0
//! duration_ms = 5000
//! ```

use models::client::{ClientTiming, Policy};
use models::recipe::RecipeRef;
use models::recipes;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// An error in a scenario: which file, which key, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub key: String,
    pub reason: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file, self.reason)
        } else {
            write!(f, "{}: `{}`: {}", self.file, self.key, self.reason)
        }
    }
}

/// The file as written.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub recipe: String,
    pub variant: Option<String>,
    pub clients: u32,
    pub rounds: Option<u32>,
    pub seed: Option<u64>,
    pub fencing: Option<bool>,
    pub policy: Option<String>,
    pub guid: Option<bool>,
    /// Virtual time limit; by default long enough for every round.
    pub duration_ms: Option<u64>,
    pub timing: Option<TimingFile>,
    pub faults: Option<FaultProfileFile>,
    pub schedule: Option<Vec<ScheduledFault>>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TimingFile {
    pub session_timeout_ms: Option<u64>,
    pub ping_interval_ms: Option<u64>,
    pub think_ms: Option<[u64; 2]>,
    pub hold_ms: Option<[u64; 2]>,
    pub latency_ms: Option<[f64; 2]>,
    pub retry_ms: Option<u64>,
    pub deadline_ms: Option<u64>,
}

/// A fault kind's rate and how long each lasts.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultRate {
    pub rate_per_s: f64,
    pub duration_ms: Option<[u64; 2]>,
    /// Delay spikes only: extra one-way latency.
    pub extra_ms: Option<[u64; 2]>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultProfileFile {
    pub until_ms: Option<u64>,
    pub crash: Option<FaultRate>,
    pub pause: Option<FaultRate>,
    pub partition: Option<FaultRate>,
    pub lost_reply: Option<FaultRate>,
    pub delay: Option<FaultRate>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The client process stops; with a duration it restarts afterwards
    /// (a new process, a new session), without one it stays down.
    Crash,
    Pause,
    Partition,
    LostReply,
    Delay,
}

impl FaultKind {
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Crash,
        FaultKind::Pause,
        FaultKind::Partition,
        FaultKind::LostReply,
        FaultKind::Delay,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Crash => "crash",
            FaultKind::Pause => "pause",
            FaultKind::Partition => "partition",
            FaultKind::LostReply => "lost_reply",
            FaultKind::Delay => "delay",
        }
    }
}

/// One fault at a given time, for a given client.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(deny_unknown_fields)]
pub struct ScheduledFault {
    pub at_ms: u64,
    pub kind: FaultKind,
    pub client: u32,
    pub duration_ms: Option<u64>,
    pub extra_ms: Option<u64>,
}

/// Resolved timing, in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timing {
    pub session_timeout_us: u64,
    pub ping_interval_us: u64,
    pub think_us: (u64, u64),
    pub hold_us: (u64, u64),
    pub latency_us: (u64, u64),
    pub retry_us: u64,
    pub deadline_us: u64,
}

/// A fault kind's resolved rate and durations (microseconds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rate {
    pub per_second: f64,
    pub duration_us: (u64, u64),
    pub extra_us: (u64, u64),
}

/// A validated scenario, every setting resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    pub name: String,
    pub recipe: RecipeRef,
    pub clients: u16,
    pub rounds: u8,
    pub seed: u64,
    pub fencing: bool,
    pub policy: Policy,
    pub timing: Timing,
    /// Randomized faults (none if empty); drawn until `faults_until_us`.
    pub profile: Vec<(FaultKind, Rate)>,
    pub faults_until_us: u64,
    pub schedule: Vec<ScheduledFault>,
    pub duration_us: Option<u64>,
    /// The file as written, to write reproducers from.
    #[serde(skip)]
    pub source: ScenarioFile,
}

/// The largest client count the simulator accepts.
pub const MAX_SIM_CLIENTS: u32 = 10_000;

fn ms(x: u64) -> u64 {
    x * 1000
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            key: String::new(),
            reason: format!("cannot read: {e}"),
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.clone());
        Scenario::parse(&text, &file, &name)
    }

    pub fn parse(text: &str, file: &str, name: &str) -> Result<Scenario, ScenarioError> {
        let raw: ScenarioFile = toml::from_str(text).map_err(|e| ScenarioError {
            file: file.to_string(),
            key: String::new(),
            reason: e.to_string().trim().replace('\n', " "),
        })?;
        Scenario::resolve(raw, file, name)
    }

    /// A scenario for `recipe`, which need not be registered (a user's own
    /// recipe): `text` is a scenario file without `recipe`, `variant` or `guid`.
    pub fn parse_with_recipe(
        text: &str,
        file: &str,
        name: &str,
        recipe: RecipeRef,
    ) -> Result<Scenario, ScenarioError> {
        let raw: ScenarioFile = toml::from_str(text).map_err(|e| ScenarioError {
            file: file.to_string(),
            key: String::new(),
            reason: e.to_string().trim().replace('\n', " "),
        })?;
        Scenario::resolve_with(raw, file, name, Some(recipe))
    }

    pub fn resolve(raw: ScenarioFile, file: &str, name: &str) -> Result<Scenario, ScenarioError> {
        Scenario::resolve_with(raw, file, name, None)
    }

    fn resolve_with(
        mut raw: ScenarioFile,
        file: &str,
        name: &str,
        given: Option<RecipeRef>,
    ) -> Result<Scenario, ScenarioError> {
        let err = |key: &str, reason: String| ScenarioError {
            file: file.to_string(),
            key: key.to_string(),
            reason,
        };
        let recipe = match given {
            Some(recipe) => {
                if !raw.recipe.is_empty() || raw.variant.is_some() || raw.guid.is_some() {
                    return Err(err(
                        "recipe",
                        format!("the recipe is given by the caller ({recipe}); leave `recipe`, `variant` and `guid` out"),
                    ));
                }
                recipe
            }
            None => registered_recipe(&raw, &err)?,
        };
        // Reproducers name the recipe when the registry can find it again;
        // a user's own recipe stays unnamed, so replaying one is an error
        // ("missing recipe") rather than a run of some other recipe.
        if raw.recipe.is_empty()
            && recipes::lookup(recipe.name(), recipe.variant()).is_ok_and(|r| r == recipe)
        {
            raw.recipe = recipe.name().to_string();
            raw.variant = recipe.variant().map(str::to_string);
        }
        if !(1..=MAX_SIM_CLIENTS).contains(&raw.clients) {
            return Err(err(
                "clients",
                format!(
                    "must be between 1 and {MAX_SIM_CLIENTS} (got {})",
                    raw.clients
                ),
            ));
        }
        let rounds = raw.rounds.unwrap_or(1);
        if !(1..=200).contains(&rounds) {
            return Err(err(
                "rounds",
                format!("must be between 1 and 200 (got {rounds})"),
            ));
        }
        let policy: Policy = match &raw.policy {
            Some(p) => p.parse().map_err(|e| err("policy", e))?,
            None => Policy::Naive,
        };
        let t = raw.timing.clone().unwrap_or_default();
        let session_timeout = t.session_timeout_ms.unwrap_or(4000);
        if session_timeout == 0 {
            return Err(err("timing.session_timeout_ms", "must be positive".into()));
        }
        let range = |key: &str,
                     r: Option<[u64; 2]>,
                     default: [u64; 2]|
         -> Result<(u64, u64), ScenarioError> {
            let [lo, hi] = r.unwrap_or(default);
            if lo > hi {
                return Err(err(key, format!("low {lo} is above high {hi}")));
            }
            Ok((ms(lo), ms(hi)))
        };
        let ping = t.ping_interval_ms.unwrap_or(session_timeout / 3).max(1);
        if ping >= session_timeout {
            return Err(err(
                "timing.ping_interval_ms",
                format!("must be below the session timeout ({session_timeout} ms), or every session expires"),
            ));
        }
        let [lat_lo, lat_hi] = t.latency_ms.unwrap_or([0.2, 2.0]);
        if !(lat_lo >= 0.0 && lat_hi >= lat_lo && lat_hi.is_finite()) {
            return Err(err(
                "timing.latency_ms",
                format!("needs 0 <= low <= high (got [{lat_lo}, {lat_hi}])"),
            ));
        }
        let deadline = t.deadline_ms.unwrap_or(session_timeout * 2 / 3);
        if deadline >= session_timeout {
            return Err(err(
                "timing.deadline_ms",
                format!("must be below the session timeout ({session_timeout} ms): the client must give up first"),
            ));
        }
        let latency_hi_ms = lat_hi.ceil() as u64;
        if deadline + latency_hi_ms >= session_timeout {
            return Err(err(
                "timing.deadline_ms",
                format!(
                    "deadline ({deadline} ms) plus the longest one-way latency ({latency_hi_ms} ms) must be below the \
                     session timeout ({session_timeout} ms): a lease-aware client must give up before the store expires it"
                ),
            ));
        }
        let retry = t.retry_ms.unwrap_or(1000);
        if retry == 0 {
            return Err(err("timing.retry_ms", "must be positive".into()));
        }
        let timing = Timing {
            session_timeout_us: ms(session_timeout),
            ping_interval_us: ms(ping),
            think_us: range("timing.think_ms", t.think_ms, [5, 50])?,
            hold_us: range("timing.hold_ms", t.hold_ms, [10, 40])?,
            latency_us: ((lat_lo * 1000.0) as u64, (lat_hi * 1000.0) as u64),
            retry_us: ms(retry),
            deadline_us: ms(deadline),
        };

        let mut profile = Vec::new();
        let f = raw.faults.clone().unwrap_or_default();
        for (kind, rate) in [
            (FaultKind::Crash, &f.crash),
            (FaultKind::Pause, &f.pause),
            (FaultKind::Partition, &f.partition),
            (FaultKind::LostReply, &f.lost_reply),
            (FaultKind::Delay, &f.delay),
        ] {
            let Some(rate) = rate else { continue };
            let key = format!("faults.{}", kind.name());
            if !(rate.rate_per_s >= 0.0 && rate.rate_per_s.is_finite()) {
                return Err(err(
                    &format!("{key}.rate_per_s"),
                    "must be a non-negative number".into(),
                ));
            }
            let needs_duration = !matches!(kind, FaultKind::LostReply | FaultKind::Crash);
            if needs_duration && rate.duration_ms.is_none() && rate.rate_per_s > 0.0 {
                return Err(err(
                    &format!("{key}.duration_ms"),
                    "is required: [low, high]".into(),
                ));
            }
            if kind != FaultKind::Delay && rate.extra_ms.is_some() {
                return Err(err(
                    &format!("{key}.extra_ms"),
                    "applies only to delay".into(),
                ));
            }
            let duration_us = match rate.duration_ms {
                Some(d) => range(&format!("{key}.duration_ms"), Some(d), d)?,
                None => (0, 0),
            };
            let extra_us = match rate.extra_ms {
                Some(d) => range(&format!("{key}.extra_ms"), Some(d), d)?,
                None if kind == FaultKind::Delay && rate.rate_per_s > 0.0 => {
                    return Err(err(
                        &format!("{key}.extra_ms"),
                        "is required: [low, high]".into(),
                    ))
                }
                None => (0, 0),
            };
            if rate.rate_per_s > 0.0 {
                profile.push((
                    kind,
                    Rate {
                        per_second: rate.rate_per_s,
                        duration_us,
                        extra_us,
                    },
                ));
            }
        }
        let schedule = raw.schedule.clone().unwrap_or_default();
        for (i, s) in schedule.iter().enumerate() {
            let key = format!("schedule[{i}]");
            if s.client >= raw.clients {
                return Err(err(
                    &format!("{key}.client"),
                    format!("no client {} (clients are 0..{})", s.client, raw.clients),
                ));
            }
            match s.kind {
                FaultKind::Pause | FaultKind::Partition | FaultKind::Delay
                    if s.duration_ms.is_none() =>
                {
                    return Err(err(
                        &format!("{key}.duration_ms"),
                        format!("a {} needs a duration", s.kind.name()),
                    ))
                }
                FaultKind::Delay if s.extra_ms.is_none() => {
                    return Err(err(
                        &format!("{key}.extra_ms"),
                        "a delay needs extra_ms".into(),
                    ))
                }
                FaultKind::LostReply if s.duration_ms.is_some() => {
                    return Err(err(
                        &format!("{key}.duration_ms"),
                        "a lost reply has no duration".into(),
                    ))
                }
                _ => {}
            }
            if s.kind != FaultKind::Delay && s.extra_ms.is_some() {
                return Err(err(
                    &format!("{key}.extra_ms"),
                    "applies only to delay".into(),
                ));
            }
        }
        let faults_until_us = ms(f.until_ms.unwrap_or(20_000));
        if let Some(d) = raw.duration_ms {
            if d == 0 {
                return Err(err("duration_ms", "must be positive".into()));
            }
        }
        Ok(Scenario {
            name: name.to_string(),
            recipe,
            clients: raw.clients as u16,
            rounds: rounds as u8,
            seed: raw.seed.unwrap_or(0),
            fencing: raw.fencing.unwrap_or(false),
            policy,
            timing,
            profile,
            faults_until_us,
            schedule,
            duration_us: raw.duration_ms.map(ms),
            source: raw,
        })
    }

    /// The client actors' timing.
    pub fn client_timing(&self) -> ClientTiming {
        let us = Duration::from_micros;
        let t = &self.timing;
        ClientTiming {
            think: us(t.think_us.0)..us(t.think_us.1 + 1),
            hold: us(t.hold_us.0)..us(t.hold_us.1 + 1),
            retry: us(t.retry_us),
            ping: us(t.ping_interval_us),
            deadline: us(t.deadline_us),
        }
    }

    /// This scenario as a file with an explicit schedule, no randomized
    /// faults, and the given seed and rounds: a reproducer.
    pub fn reproducer(
        &self,
        seed: u64,
        rounds: u8,
        schedule: Vec<ScheduledFault>,
        note: &str,
    ) -> String {
        let mut file = self.source.clone();
        file.seed = Some(seed);
        file.rounds = Some(rounds as u32);
        file.faults = None;
        file.schedule = Some(schedule);
        let body = toml::to_string(&file).expect("scenario files serialise");
        let mut out = String::new();
        for line in note.lines() {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&body);
        out
    }
}

/// The registered recipe a scenario file names (`recipe`, `variant`, or the
/// older `guid = false`).
fn registered_recipe(
    raw: &ScenarioFile,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<RecipeRef, ScenarioError> {
    if raw.recipe.is_empty() {
        return Err(err(
            "recipe",
            "missing: name a recipe (`lockstep recipes` lists them)".into(),
        ));
    }
    let registered = recipes::find(&raw.recipe).map_err(|e| err("recipe", e))?;
    // `guid = false` is the older spelling of fair-predecessor's variant.
    let fair = registered.name == "fair-predecessor";
    let variant = match (raw.variant.as_deref(), raw.guid) {
        (v, None) => v,
        (v, Some(true)) if fair => v,
        (None, Some(false)) if fair => Some("no-guid"),
        (Some(_), Some(false)) if fair => {
            return Err(err(
                "guid",
                "give the variant once: `variant = \"no-guid\"` or `guid = false`, not both".into(),
            ))
        }
        (_, Some(_)) => {
            return Err(err(
                "guid",
                format!("applies only to fair-predecessor, not {}", registered.name),
            ))
        }
    };
    recipes::lookup(registered.name, variant).map_err(|e| err("variant", e))
}
