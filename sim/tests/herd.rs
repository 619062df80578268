//! The baseline herd sweep against the closed form.

use sim::herd::{baseline, closed_form, row};

#[test]
fn the_baseline_agrees_with_the_closed_form_exactly() {
    for recipe in sim::herd::swept_recipes() {
        for n in [2u16, 3, 5, 10, 37, 100] {
            let s = baseline(&recipe, n, 1);
            let r = row(&s, 1);
            assert_eq!(r.violations, 0, "{recipe} {n}");
            assert_eq!(r.acquisitions, n as u64, "{recipe} {n}");
            assert_eq!(
                r.notifications_per_release,
                closed_form(&recipe, n as u32).expect("every shipped recipe has a closed form"),
                "{recipe} with {n} clients"
            );
        }
    }
}
