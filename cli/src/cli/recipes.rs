//! `lockstep recipes`: what the registry holds.

use super::UsageError;
use models::recipe::App;
use models::recipes::{VariantKind, REGISTRY};
use std::process::ExitCode;

pub fn run(json: bool) -> Result<ExitCode, UsageError> {
    if json {
        let list: Vec<_> = REGISTRY
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name,
                    "app": (r.build)(None).app(),
                    "aliases": r.aliases,
                    "summary": r.summary,
                    "variants": r.variants.iter().map(|v| serde_json::json!({
                        "name": v.name,
                        "summary": v.summary,
                        "test_only": v.kind == VariantKind::TestOnly,
                        "default": v.kind == VariantKind::Default,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&list).expect("serialisable")
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Every application, with how many recipes serve it.
    let apps: Vec<String> = App::ALL
        .iter()
        .map(|&app| {
            let n = REGISTRY
                .iter()
                .filter(|r| (r.build)(None).app() == app)
                .count();
            format!("{app} ({n})")
        })
        .collect();
    println!("applications: {}\n", apps.join(", "));
    for r in REGISTRY {
        println!("{} ({})\n    {}", r.name, (r.build)(None).app(), r.summary);
        for v in r.variants {
            let note = match v.kind {
                VariantKind::TestOnly => " [test only]",
                VariantKind::Default => " [the default]",
                VariantKind::Departure => "",
            };
            println!("  :{}{note}\n      {}", v.name, v.summary);
        }
    }
    Ok(ExitCode::SUCCESS)
}
