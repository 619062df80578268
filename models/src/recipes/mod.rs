//! The recipes lockstep ships, and the one registry the CLI finds them in.
//!
//! Each recipe is one file whose steps read like its source — the ZooKeeper
//! recipe text, Curator, etcd's `concurrency` package, the seed articles —
//! and implements [`crate::recipe::Recipe`]. Adding one is that file plus
//! one line in [`REGISTRY`].

pub mod children_watch;
pub mod consul_election;
pub mod consul_lock;
pub mod consul_semaphore;
pub mod etcd_election;
pub mod etcd_revision;
pub mod fair_predecessor;
pub mod lowest_watch;
pub mod redis_setnx;
pub mod redis_token;
pub mod redlock;
pub mod unfair_create;
pub mod zk_barrier;
pub mod zk_double_barrier;
pub mod zk_fair_election;
pub mod zk_fifo_queue;
pub mod zk_rwlock;
pub mod zk_semaphore;
pub mod zk_unfair_election;

pub mod consul;
pub mod names;
pub mod redis;

use crate::recipe::RecipeRef;

/// A variant of a recipe: a documented departure from its default.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub name: &'static str,
    pub summary: &'static str,
    pub kind: VariantKind,
}

/// What a variant is to its recipe: one of three, so that no variant is
/// both the default and broken on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariantKind {
    /// The default written out under a name (`fair-predecessor:zk-docs`):
    /// it builds what the recipe's name alone builds, so the recipe built
    /// at it says no variant (`Recipe::variant` is `None`), and a scenario
    /// or trace made with it names the default. A recipe has at most one.
    Default,
    /// A documented departure from the default (another library's code, a
    /// known-unsafe configuration): it names itself.
    Departure,
    /// A departure broken on purpose, which tests use to show a property
    /// catches a bug; not meant for users' conclusions. It names itself.
    TestOnly,
}

/// A recipe as the registry lists it.
#[derive(Clone, Copy, Debug)]
pub struct Registered {
    pub name: &'static str,
    /// Other names users know it by.
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub variants: &'static [Variant],
    /// Builds the recipe at a variant (`None`: the default). Only called with
    /// a variant listed in `variants`.
    pub build: fn(Option<&str>) -> RecipeRef,
}

/// Every recipe lockstep ships, in the order it reports them.
pub const REGISTRY: &[Registered] = &[
    unfair_create::REGISTERED,
    fair_predecessor::REGISTERED,
    etcd_revision::REGISTERED,
    children_watch::REGISTERED,
    lowest_watch::REGISTERED,
    zk_unfair_election::REGISTERED,
    zk_fair_election::REGISTERED,
    etcd_election::REGISTERED,
    zk_barrier::REGISTERED,
    zk_double_barrier::REGISTERED,
    zk_fifo_queue::REGISTERED,
    zk_rwlock::REGISTERED,
    zk_semaphore::REGISTERED,
    redis_setnx::REGISTERED,
    redis_token::REGISTERED,
    redlock::REGISTERED,
    consul_lock::REGISTERED,
    consul_lock::REGISTERED_CLI,
    consul_election::REGISTERED,
    consul_semaphore::REGISTERED,
];

/// Every registered recipe at its default variant.
pub fn defaults() -> Vec<RecipeRef> {
    REGISTRY.iter().map(|r| (r.build)(None)).collect()
}

/// Every registered recipe at its default and at each departure users run
/// (test-only variants left out), in registry order.
pub fn runnable() -> Vec<RecipeRef> {
    REGISTRY
        .iter()
        .flat_map(|r| {
            let departures = r.variants.iter().filter_map(|v| match v.kind {
                VariantKind::Departure => Some((r.build)(Some(v.name))),
                VariantKind::Default | VariantKind::TestOnly => None,
            });
            std::iter::once((r.build)(None)).chain(departures)
        })
        .collect()
}

fn known_names() -> String {
    REGISTRY
        .iter()
        .map(|r| r.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The registered recipe called `name` (or one of its aliases).
pub fn find(name: &str) -> Result<&'static Registered, String> {
    REGISTRY
        .iter()
        .find(|r| r.name == name || r.aliases.contains(&name))
        .ok_or_else(|| format!("unknown recipe '{name}' (known: {})", known_names()))
}

/// The recipe `name` at `variant` (`None`: its default).
pub fn lookup(name: &str, variant: Option<&str>) -> Result<RecipeRef, String> {
    let reg = find(name)?;
    match variant {
        None => Ok((reg.build)(None)),
        Some(v) if reg.variants.iter().any(|x| x.name == v) => Ok((reg.build)(Some(v))),
        Some(v) => {
            let known: Vec<&str> = reg.variants.iter().map(|x| x.name).collect();
            Err(format!(
                "unknown variant '{v}' of recipe '{}' (known: {})",
                reg.name,
                if known.is_empty() {
                    "none; it has no variants".to_string()
                } else {
                    known.join(", ")
                }
            ))
        }
    }
}

/// Parses `name` or `name:variant`.
pub fn parse(spec: &str) -> Result<RecipeRef, String> {
    match spec.split_once(':') {
        Some((name, variant)) => lookup(name, Some(variant)),
        None => lookup(spec, None),
    }
}
