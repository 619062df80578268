use models::checker::{check, CheckOptions};
use models::model::{FaultBudget, LockModelCfg};
use models::recipes::Recipe;
use models::trace::steps;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let clients: u8 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(3);
    let crashes: u8 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(0);
    let pauses: u8 = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(0);
    let sym = args.get(4).map(|s| s == "sym").unwrap_or(true);
    for r in Recipe::ALL {
        let mut cfg = LockModelCfg::new(r, clients);
        cfg.faults = FaultBudget {
            crashes,
            pauses,
            ..Default::default()
        };
        let model = cfg.clone().into_model();
        let res = check(
            &model,
            CheckOptions {
                symmetry: sym,
                ..Default::default()
            },
        );
        println!(
            "{cfg}: states {} unique {} depth {} {:.2}s",
            res.states, res.unique_states, res.max_depth, res.seconds
        );
        for p in &res.properties {
            println!(
                "  {} {:?} path len {:?}",
                p.name,
                p.status,
                p.path.as_ref().map(|p| p.len())
            );
            if p.name != "hand_off" {
                if let Some(path) = &p.path {
                    if p.status == models::checker::Status::Violated {
                        for s in steps(&model, path) {
                            println!("     {s}");
                        }
                    }
                }
            }
        }
    }
}
