//! The baseline herd sweep against the closed form.

use models::recipes::Recipe;
use sim::herd::{baseline, closed_form, row};

#[test]
fn the_baseline_agrees_with_the_closed_form_exactly() {
    for recipe in Recipe::ALL {
        for n in [2u16, 3, 5, 10, 37, 100] {
            let s = baseline(recipe, n, 1);
            let r = row(recipe, &s, 1);
            assert_eq!(r.violations, 0, "{recipe} {n}");
            assert_eq!(r.acquisitions, n as u64, "{recipe} {n}");
            assert_eq!(
                r.notifications_per_release,
                closed_form(recipe, n as u32),
                "{recipe} with {n} clients"
            );
        }
    }
}
