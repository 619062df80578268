//! `lockstep explore`: stateright's Explorer over a lockstep model.

use super::{ExploreArgs, UsageError};
use stateright::Model;
use std::net::TcpListener;
use std::process::ExitCode;

pub fn run(args: &ExploreArgs) -> Result<ExitCode, UsageError> {
    let cfg = args.model.to_cfg()?;
    let addr = ("127.0.0.1", args.port);
    // stateright's server panics on a port in use; find out first.
    TcpListener::bind(addr)
        .map_err(|e| UsageError(format!("cannot serve on 127.0.0.1:{}: {e}", args.port)))?;
    eprintln!("lockstep explore: {cfg}");
    eprintln!(
        "serving stateright's Explorer on http://127.0.0.1:{} (Ctrl-C to stop)",
        args.port
    );
    cfg.into_model().checker().serve(addr);
    Ok(ExitCode::SUCCESS)
}
