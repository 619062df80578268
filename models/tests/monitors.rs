//! The property monitors fed by hand, where a rule is simplest to pin.

use models::properties::{Acquisition, Monitors, Observation, PropertyName};
use models::recipe::App;

fn acquired(client: u16, hold: u32, granted: u64) -> Observation {
    Observation::Acquired(Acquisition {
        client,
        hold,
        granted,
        token: granted,
        owned: true,
    })
}

/// `hand_off` is witnessed only once the lock passes from one client to
/// another; the same client taking it again is no hand-off. Two believers
/// at once break `mutual_exclusion`, and a release or a crash ends a belief.
#[test]
fn hand_off_needs_two_different_holders_in_a_row() {
    let mut m = Monitors::new(App::Lock, 0);
    assert!(!m.holds(PropertyName::HandOff));
    assert!(m.observe(acquired(0, 1, 3)).is_empty());
    m.observe(Observation::Released { client: 0 });
    m.observe(acquired(0, 2, 5));
    m.observe(Observation::Released { client: 0 });
    assert!(
        !m.holds(PropertyName::HandOff),
        "one client twice is no hand-off"
    );
    m.observe(acquired(1, 1, 7));
    assert!(m.holds(PropertyName::HandOff));
    assert!(m.holds(PropertyName::MutualExclusion));
    let breaches = m.observe(acquired(0, 3, 9));
    assert_eq!(breaches.len(), 1);
    assert_eq!(breaches[0].property, PropertyName::MutualExclusion);
    assert!(!m.holds(PropertyName::MutualExclusion));
}
