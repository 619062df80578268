use models::model::{FaultBudget, ModelCfg};
use stateright::Model;
use std::collections::HashSet;
fn fp<T: std::hash::Hash>(v: &T) -> u64 {
    use std::hash::BuildHasher;
    std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
        .hash_one(v)
}
fn main() {
    let cfg = ModelCfg {
        servers: 3,
        faults: FaultBudget {
            failovers: 1,
            ..FaultBudget::default()
        },
        ..ModelCfg::new(models::recipes::parse("fair-predecessor:sync").unwrap(), 2)
    };
    let m = cfg.into_model().unwrap();
    let mut seen = HashSet::new();
    let s0 = m.init_states().remove(0);
    let mut stack = vec![(s0, Vec::<String>::new())];
    while let Some((s, path)) = stack.pop() {
        if path.len() >= 140 {
            for p in &path {
                println!("{p}");
            }
            return;
        }
        let mut acts = Vec::new();
        m.actions(&s, &mut acts);
        for a in acts {
            let desc = m.format_action(&a);
            if let Some(n) = m.next_state(&s, a) {
                if seen.insert(fp(&n)) {
                    let mut p = path.clone();
                    p.push(desc);
                    stack.push((n, p));
                }
            }
        }
    }
}
