//! The library's edges as an API user meets them: a configuration that
//! cannot be checked is an error naming its setting, verdicts are looked up
//! by `PropertyName`, and the library's errors name no program's flags.

use models::checker::{check, CheckError, CheckOptions, Status};
use models::model::{FaultBudget, ModelCfg, Setting};
use models::properties::PropertyName;
use models::recipes;

fn cfg(recipe: &str, clients: u8) -> ModelCfg {
    ModelCfg::new(recipes::parse(recipe).expect("a shipped recipe"), clients)
}

/// No clients and no rounds would check nothing and call every safety
/// property held; the model is refused instead, naming the setting.
#[test]
fn a_configuration_that_checks_nothing_is_refused() {
    let e = ModelCfg {
        rounds: 0,
        ..cfg("fair-predecessor", 1)
    }
    .into_model()
    .err()
    .expect("one client and no rounds check nothing");
    assert_eq!(e.setting, Setting::Clients);
    assert!(e.to_string().contains("(got 1)"), "{e}");

    let e = ModelCfg {
        rounds: 0,
        ..cfg("fair-predecessor", 2)
    }
    .into_model()
    .err()
    .expect("no rounds check nothing");
    assert_eq!(e.setting, Setting::Rounds);
    assert_eq!(e.to_string(), "rounds must be between 1 and 3 (got 0)");

    let e = ModelCfg {
        producers: 3,
        ..cfg("zk-fifo-queue", 3)
    }
    .into_model()
    .err()
    .expect("a queue of producers only");
    assert_eq!(e.setting, Setting::Producers);

    let e = ModelCfg {
        faults: FaultBudget {
            crashes: 2,
            pauses: 2,
            ..FaultBudget::default()
        },
        ..cfg("fair-predecessor", 3)
    }
    .into_model()
    .err()
    .expect("four faults");
    assert_eq!(e.setting, Setting::Faults);

    assert!(cfg("fair-predecessor", 2).into_model().is_ok());
}

/// A verdict is looked up by its name's type: a property the check judged
/// is there, one of another application (or one not asked) is `None`,
/// never a panic.
#[test]
fn verdicts_are_looked_up_by_property_name() {
    let model = cfg("fair-predecessor", 2).into_model().unwrap();
    let r = check(&model, CheckOptions::default()).unwrap();
    let mutex = r.property(PropertyName::MutualExclusion).expect("judged");
    assert_eq!(mutex.status, Status::Holds);
    assert_eq!(mutex.name, PropertyName::MutualExclusion);
    assert!(r.property(PropertyName::SingleLeader).is_none());
    assert!(r.property(PropertyName::QueueDrains).is_none());

    let asked = CheckOptions::default().asking(&[PropertyName::HerdBound]);
    let r = check(&model, asked).unwrap();
    assert!(r.property(PropertyName::HerdBound).is_some());
    assert!(r.property(PropertyName::MutualExclusion).is_none());
}

/// The library says what is wrong in its own terms; flags are the CLI's.
#[test]
fn check_errors_name_no_flags() {
    let errors = [
        CheckError::IdentityDependent { found: "x".into() },
        CheckError::Collision { found: "x".into() },
        CheckError::Reduction { found: "x".into() },
        CheckError::Threads {
            asked: 9,
            reason: "x".into(),
        },
    ];
    for e in errors {
        assert!(!e.to_string().contains("--"), "{e}");
    }
    let e = cfg("fair-predecessor", 9).validate().unwrap_err();
    assert!(!e.to_string().contains("--"), "{e}");
}
