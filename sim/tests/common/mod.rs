//! What the simulator tests share: the recipes they sweep and the clients
//! each application needs.

use models::recipe::{App, RecipeRef};
use models::recipes::{VariantKind, REGISTRY};

/// The clients a recipe's application needs to show its failures: two,
/// but three for a queue (one producer, two consumers: a duplicate item
/// needs a second taker) and a semaphore (two permits and one waiter) —
/// no more than the recipe's stock checks take (`consul-semaphore`: two,
/// one permit and one waiter).
pub fn clients_needed(recipe: &RecipeRef) -> u8 {
    let needed = match recipe.app() {
        App::Queue | App::Semaphore => 3,
        App::Lock | App::Election | App::Barrier | App::SharedLock => 2,
    };
    needed.min(recipe.checked_clients())
}

/// Every registered recipe at its default and at every other variant it
/// lists, test-only ones included: they exist to show that a property
/// catches a bug, which both engines must then catch. A lock over several
/// Redis masters on three, as the tour checks it.
pub fn every_recipe_and_variant() -> Vec<RecipeRef> {
    REGISTRY
        .iter()
        .flat_map(|r| {
            let others = r
                .variants
                .iter()
                .filter(|v| v.kind != VariantKind::Default)
                .map(|v| (r.build)(Some(v.name)));
            std::iter::once((r.build)(None)).chain(others)
        })
        .map(|r| r.on_masters(3).unwrap_or(r))
        .collect()
}

/// A scenario file's `masters` line for a recipe over several Redis
/// masters (as many as it was made for), else nothing.
pub fn masters_line(recipe: &RecipeRef) -> String {
    match recipe.setup().masters {
        1 => String::new(),
        n => format!("masters = {n}\n"),
    }
}
