//! The property monitors fed by hand, where a rule is simplest to pin.

use models::properties::{Acquisition, Monitors, Observation, PropertyName, Woken};
use models::recipe::App;

/// An owned acquisition whose token is where the store decided it.
fn acquired(client: u16, hold: u32, granted: u64) -> Observation {
    acquired_with(client, hold, granted, granted)
}

fn acquired_with(client: u16, hold: u32, granted: u64, token: u64) -> Observation {
    Observation::Acquired(Acquisition {
        client,
        hold,
        granted,
        token,
        owned: true,
    })
}

fn dequeued(item: u64, by: u16) -> Observation {
    Observation::Dequeued { item, by }
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

/// The properties `observe` reported, by name.
fn named(breaches: Vec<models::properties::Breach>) -> Vec<(PropertyName, Vec<u16>)> {
    breaches
        .into_iter()
        .map(|b| (b.property, b.clients))
        .collect()
}

/// Every property is found by its name and prints as it; a name lockstep
/// does not know is none.
/// Kills: properties.rs PropertyName::parse -> None, its `==` -> `!=`,
/// `<impl Display for PropertyName>::fmt` -> Ok(()).
#[test]
fn every_property_parses_and_prints_as_its_name() {
    for p in PropertyName::ALL {
        assert_eq!(PropertyName::parse(p.name()), Some(p));
        assert_eq!(p.to_string(), p.name());
    }
    assert_eq!(PropertyName::parse("mutual-exclusion"), None);
    assert_eq!(PropertyName::parse(""), None);
}

/// Each property belongs to the application that lists it (`herd_bound`
/// and `hand_off` to several, so to none), and a simulated run reports
/// every `always` and progress property of its application but
/// `followers_agree`, which only the checker decides, and the run-level
/// checks.
/// Kills: properties.rs PropertyName::app -> None / Some(Lock), and the
/// three mutants of PropertyName::simulated's filter.
#[test]
fn each_property_belongs_to_its_application() {
    let apps = App::ALL;
    for p in PropertyName::ALL {
        let listing: Vec<App> = apps
            .into_iter()
            .filter(|a| PropertyName::of(*a).contains(&p))
            .collect();
        match p.app() {
            // Judged only where holders re-enter (`RecipeModel::judged`), so
            // in no application's fixed list.
            Some(App::Lock) if p == PropertyName::ReentryImmediate => {
                assert!(listing.is_empty(), "{p} is listed by {listing:?}")
            }
            // Judged only where clients observe (`ModelCfg::judged`).
            Some(App::Election) if p == PropertyName::ObservedLeaderCurrent => {
                assert!(listing.is_empty(), "{p} is listed by {listing:?}")
            }
            Some(app) => assert_eq!(listing, vec![app], "{p}"),
            // The simulator's run-level checks judge every application's
            // runs, and no application lists them.
            None if PropertyName::RUN_CHECKS.contains(&p) => {
                assert!(listing.is_empty(), "{p} is listed by {listing:?}")
            }
            None => assert!(listing.len() > 1, "{p} is listed by {listing:?}"),
        }
    }
    let simulated: Vec<PropertyName> = PropertyName::simulated(App::Election).collect();
    use PropertyName as P;
    assert_eq!(
        simulated,
        vec![
            P::SingleLeader,
            P::ElectedWithKey,
            P::LeaderExclusion,
            P::HerdBound,
            P::LeaderElected,
            P::FaultFreeSessionLoss,
            P::SyncIsCurrent
        ]
    );
    let simulated: Vec<PropertyName> = PropertyName::simulated(App::Queue).collect();
    let queue_and_run_checks: Vec<PropertyName> = PropertyName::of(App::Queue)
        .iter()
        .copied()
        .chain(PropertyName::RUN_CHECKS)
        .collect();
    assert_eq!(simulated, queue_and_run_checks);
}

/// A queue consumer that deleted an element owes its item until it
/// processes it (its next take is that item): it loses the item if it
/// crashes, goes idle, takes another first, or the run ends. Processed
/// first and deleted after (a lock-safe consumer), nothing is owed.
/// Kills: properties.rs Monitors::took -> (), its `==`/`!=` and `!`
/// mutants, Monitors::forfeit -> () and its mutants, Monitors::at_end ->
/// vec![], `heeds`' Idle rule `==` -> `!=`, and the producer guard of
/// `Dequeued` (-> true, -> false).
#[test]
fn a_queue_consumer_owes_what_it_deleted_until_it_processes_it() {
    let queue = || Monitors::new(App::Queue, 1);
    let lost = |c: u16| vec![(PropertyName::NoLostItem, vec![c])];

    // Deleted, then processed: owes nothing after, whatever follows.
    let mut m = queue();
    assert!(m.observe(dequeued(10, 1)).is_empty());
    assert!(m.observe(acquired(1, 1, 10)).is_empty());
    assert!(m.observe(Observation::Idle { client: 1 }).is_empty());
    assert!(m.observe(Observation::Crashed { client: 1 }).is_empty());
    assert!(m.at_end().is_empty());
    assert!(m.holds(PropertyName::NoLostItem));

    // Processed, then deleted (lock-safe): nothing owed.
    let mut m = queue();
    m.observe(acquired(1, 1, 10));
    assert!(m.observe(dequeued(10, 1)).is_empty());
    assert!(m.observe(Observation::Idle { client: 1 }).is_empty());
    assert!(m.holds(PropertyName::NoLostItem));

    // Deleted, then crashed, went idle, or the run ended: lost.
    for end in [
        Observation::Crashed { client: 1 },
        Observation::Idle { client: 1 },
    ] {
        let mut m = queue();
        m.observe(dequeued(10, 1));
        // Another consumer's end owes nothing of client 1's.
        assert!(m.observe(Observation::Idle { client: 2 }).is_empty());
        assert_eq!(named(m.observe(end)), lost(1), "{end:?}");
        assert!(!m.holds(PropertyName::NoLostItem));
        assert!(m.observe(dequeued(11, 2)).is_empty());
        assert!(
            m.observe(Observation::Idle { client: 2 }).is_empty(),
            "the mark is sticky: reported once"
        );
    }
    let mut m = queue();
    m.observe(dequeued(10, 1));
    assert_eq!(named(m.at_end()), lost(1));

    // Deleted two, processed the second first: the first is lost.
    let mut m = queue();
    m.observe(dequeued(10, 1));
    m.observe(dequeued(11, 1));
    assert_eq!(named(m.observe(acquired(1, 1, 11))), lost(1));

    // A producer never processes: its element gone with its session is
    // lost at once.
    let mut m = queue();
    assert_eq!(named(m.observe(dequeued(10, 0))), lost(0));
}

/// An item taken twice, by one consumer or two, breaks `no_duplicate_item`
/// once, naming every taker; a producer's holds are no takes.
/// Kills: properties.rs Monitors::took's duplicate check mutants.
#[test]
fn an_item_taken_twice_is_a_duplicate() {
    let mut m = Monitors::new(App::Queue, 1);
    assert!(m.observe(acquired(1, 1, 10)).is_empty());
    assert!(m.observe(acquired(2, 1, 11)).is_empty());
    assert!(m.holds(PropertyName::NoDuplicateItem));
    assert_eq!(
        named(m.observe(acquired(2, 2, 10))),
        vec![(PropertyName::NoDuplicateItem, vec![1, 2])]
    );
    assert!(!m.holds(PropertyName::NoDuplicateItem));
    assert!(m.observe(acquired(1, 2, 11)).is_empty(), "reported once");

    let mut m = Monitors::new(App::Queue, 1);
    m.observe(acquired(0, 1, 10));
    assert!(
        m.observe(acquired(0, 2, 10)).is_empty(),
        "a producer takes nothing"
    );
    assert!(m.holds(PropertyName::NoDuplicateItem));
}

/// The resource's order: a lock's acquisitions by where the store decided
/// them (`granted`), an election's by its leader's key (`token`), so the
/// same writes are in order for one and out of order for the other. A
/// write of no acquisition breaks the rule outright.
/// Kills: properties.rs Monitors::place -> 0 / 1.
#[test]
fn the_resource_order_is_by_decision_for_a_lock_and_by_key_for_an_election() {
    let writes = |app: App| {
        let mut m = Monitors::new(app, 0);
        // Client 0 decided at header 5 on key 2; client 1 at 7 on key 1.
        m.observe(acquired_with(0, 1, 5, 2));
        m.observe(Observation::Released { client: 0 });
        m.observe(acquired_with(1, 1, 7, 1));
        let mut breaches = Vec::new();
        for client in [0, 1] {
            breaches.extend(m.observe(Observation::WriteAccepted { client, hold: 1 }));
        }
        (named(breaches), m)
    };
    let (breaches, m) = writes(App::Lock);
    assert!(breaches.is_empty(), "{breaches:?}");
    assert!(m.holds(PropertyName::ResourceExclusion));
    let (breaches, m) = writes(App::Election);
    assert_eq!(breaches, vec![(PropertyName::LeaderExclusion, vec![0, 1])]);
    assert!(!m.holds(PropertyName::LeaderExclusion));

    let mut m = Monitors::new(App::Lock, 0);
    assert_eq!(
        named(m.observe(Observation::WriteAccepted { client: 3, hold: 1 })),
        vec![(PropertyName::ResourceExclusion, vec![3])]
    );
}

/// A sole holder with the newest token fenced off breaks
/// `holder_writes_accepted`; a holder beside another, or with an older
/// token, is fenced rightly; an election reports no breach of it.
#[test]
fn only_a_sole_newest_holder_must_not_be_fenced() {
    let fenced = |client: u16, token: u64| Observation::WriteRejected { client, token };
    let mut m = Monitors::new(App::Lock, 0);
    m.observe(acquired(0, 1, 3));
    m.observe(Observation::Released { client: 0 });
    m.observe(acquired(1, 1, 5));
    assert!(m.observe(fenced(0, 3)).is_empty(), "not a holder");
    assert!(
        m.observe(fenced(0, 5)).is_empty(),
        "not the holder, though its token is the newest"
    );
    assert!(m.observe(fenced(1, 4)).is_empty(), "an older token");
    assert!(m.holds(PropertyName::HolderWritesAccepted));
    assert_eq!(
        named(m.observe(fenced(1, 5))),
        vec![(PropertyName::HolderWritesAccepted, vec![1])]
    );
    assert!(!m.holds(PropertyName::HolderWritesAccepted));

    let mut m = Monitors::new(App::Lock, 0);
    m.observe(acquired(0, 1, 3));
    m.observe(acquired(1, 1, 5));
    assert!(m.observe(fenced(1, 5)).is_empty(), "not the sole holder");

    let mut m = Monitors::new(App::Election, 0);
    m.observe(acquired(0, 1, 3));
    assert!(m.observe(fenced(0, 3)).is_empty());
}

/// The herd: a lock's or an election's release step that notifies two
/// breaks `herd_bound`, once, naming the first two clients it woke; a
/// barrier is judged by its futile wake-ups instead, and a queue by neither.
/// Kills: properties.rs `heeds`' rules for ReleaseStep and Woke, and a
/// herd breach that names nobody.
#[test]
fn the_herd_is_judged_by_each_applications_own_wakeups() {
    let woke = |clients: &[u16]| clients.iter().copied().collect::<Woken>();
    let release = |clients: &[u16]| Observation::ReleaseStep {
        woken: woke(clients),
    };
    let futile = |clients: &[u16]| Observation::Woke {
        futile: woke(clients),
    };
    for app in [App::Lock, App::Election] {
        let mut m = Monitors::new(app, 0);
        assert!(m.observe(release(&[1])).is_empty());
        assert!(m.observe(futile(&[1, 2, 3])).is_empty());
        assert!(m.holds(PropertyName::HerdBound));
        assert_eq!(
            named(m.observe(release(&[3, 1]))),
            vec![(PropertyName::HerdBound, vec![1, 3])]
        );
        assert!(m.observe(release(&[1, 2, 3])).is_empty());
        assert!(!m.holds(PropertyName::HerdBound));
    }
    let mut m = Monitors::new(App::Barrier, 0);
    assert!(m.observe(release(&[0, 1, 2, 3])).is_empty());
    assert!(m.holds(PropertyName::HerdBound));
    assert_eq!(
        named(m.observe(futile(&[2, 0, 1]))),
        vec![(PropertyName::HerdBound, vec![0, 2])]
    );
    let mut m = Monitors::new(App::Queue, 1);
    assert!(m.observe(release(&[0, 1, 2, 3])).is_empty());
    assert!(m.observe(futile(&[0, 1, 2, 3])).is_empty());
}

/// `Woken` keeps the count of every notification and the first two
/// clients, sorted and once each.
#[test]
fn woken_counts_all_and_names_the_first_two() {
    let w: Woken = [5u16, 5, 2, 9].into_iter().collect();
    assert_eq!(w.count(), 4);
    assert_eq!(w.clients(), vec![5]);
    let w: Woken = [7u16, 2, 9].into_iter().collect();
    assert_eq!((w.count(), w.clients()), (3, vec![2, 7]));
    assert_eq!(Woken::default().clients(), Vec::<u16>::new());
}

/// A double barrier's member that leaves before every member has left
/// breaks `no_early_leave`, once; leaving after everyone is no breach.
#[test]
fn leaving_before_every_member_left_is_early() {
    let mut m = Monitors::new(App::Barrier, 0);
    let left = |client: u16, all_left: bool| Observation::Left { client, all_left };
    assert!(m.observe(left(0, true)).is_empty());
    assert!(m.holds(PropertyName::NoEarlyLeave));
    assert_eq!(
        named(m.observe(left(1, false))),
        vec![(PropertyName::NoEarlyLeave, vec![1])]
    );
    assert!(m.observe(left(2, false)).is_empty());
    assert!(!m.holds(PropertyName::NoEarlyLeave));
}

/// Holding on a message that did not show one's entry first in line is
/// each application's own breach; two holders at once break only the
/// lock's and the election's exclusion (a barrier lets all pass).
#[test]
fn each_application_names_its_own_rules() {
    use PropertyName as P;
    for (app, owns_key, exclusion) in [
        (App::Lock, P::HolderOwnsKey, Some(P::MutualExclusion)),
        (App::Election, P::ElectedWithKey, Some(P::SingleLeader)),
        (App::Barrier, P::NoEarlyPass, None),
        (App::Queue, P::FifoOrder, None),
    ] {
        let mut m = Monitors::new(app, 0);
        let unowned = Observation::Acquired(Acquisition {
            client: 2,
            hold: 1,
            granted: 4,
            token: 4,
            owned: false,
        });
        assert_eq!(
            named(m.observe(unowned)),
            vec![(owns_key, vec![2])],
            "{app:?}"
        );
        assert!(!m.holds(owns_key));
        let second = named(m.observe(acquired(1, 1, 6)));
        let expected: Vec<_> = exclusion.into_iter().map(|p| (p, vec![1, 2])).collect();
        assert_eq!(second, expected, "{app:?}");
    }
}

/// The checker's frontier keeps many monitors, each trimmed.
/// Kills: properties.rs Monitors::shrink_to_fit -> ().
#[test]
fn monitors_give_back_the_room_their_history_grew() {
    let mut m = Monitors::new(App::Lock, 0);
    for hold in 1..=3 {
        m.observe(acquired(0, hold, u64::from(hold)));
        m.observe(Observation::Released { client: 0 });
    }
    assert!(m.acquisitions.capacity() > 3);
    m.shrink_to_fit();
    assert_eq!(m.acquisitions.capacity(), 3);
}

/// A client's step means `Idle` to the monitors only when it comes to
/// wait with nothing outstanding, or finishes, from a step that was not
/// idle: the moment a queue consumer gives up what it still owes.
/// Kills: properties.rs observe_client's idle guard (-> true, -> false,
/// `&&` -> `||`, `!` deleted).
#[test]
fn a_client_is_seen_idle_once_when_it_comes_to_rest() {
    use models::client::{ClientState, Marks, Phase};
    use models::ids::SessionId;
    use models::properties::observe_client;
    let busy = Marks {
        holding: false,
        reentered: 0,
        left: None,
        idle: false,
        named_stale: false,
    };
    let resting = Marks { idle: true, ..busy };
    let mut done = ClientState::new(SessionId::first(3));
    done.phase = Phase::Done;
    let connecting = ClientState::new(SessionId::first(3));
    assert_eq!(
        observe_client(3, busy, &done),
        Some(Observation::Idle { client: 3 })
    );
    assert_eq!(observe_client(3, resting, &done), None, "idle already");
    assert_eq!(observe_client(3, busy, &connecting), None, "not idle");
    assert_eq!(observe_client(3, resting, &connecting), None);
}

/// A consumer that loses what it owed owes nothing after, and the others
/// still owe theirs: the monitors (part of the checker's state) are then
/// those of a run where the same item count was lost by someone else.
/// Kills: properties.rs Monitors::forfeit's `c != client` -> `==`.
#[test]
fn a_loss_clears_only_the_losers_debts() {
    let mut m = Monitors::new(App::Queue, 1);
    m.observe(dequeued(10, 1));
    m.observe(dequeued(11, 2));
    m.observe(Observation::Crashed { client: 1 });
    let mut other = Monitors::new(App::Queue, 1);
    other.observe(dequeued(12, 3));
    other.observe(Observation::Crashed { client: 3 });
    other.observe(dequeued(11, 2));
    assert_eq!(m, other);
}
