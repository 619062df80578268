fn main() {
    let path = std::env::args().nth(1).unwrap();
    let seed: u64 = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(1);
    let sc = sim::scenario::Scenario::load(std::path::Path::new(&path)).unwrap();
    let t = std::time::Instant::now();
    let o = sim::engine::simulate(&sc, seed, true);
    eprintln!("{:?}", t.elapsed());
    for l in o.trace.iter().take(40) { println!("{l}"); }
    println!("... {} lines", o.trace.len());
    println!("{:?}\n{:?}\n{:?}", o.violations, o.metrics, o.faults_fired());
}
