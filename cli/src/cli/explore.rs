//! `lockstep explore`: stateright's Explorer over a lockstep model.

use super::{ExploreArgs, UsageError};
use stateright::Model;
use std::net::TcpListener;
use std::process::ExitCode;

pub fn run(args: &ExploreArgs) -> Result<ExitCode, UsageError> {
    if args.model.list {
        return super::recipes::run(false);
    }
    let cfg = args.model.to_cfg()?;
    // stateright's server panics on a port in use; find out first. Port 0
    // asks the system for a free port: the one it gives is the one served
    // and printed.
    let port = TcpListener::bind(("127.0.0.1", args.port))
        .and_then(|l| l.local_addr())
        .map_err(|e| UsageError(format!("cannot serve on 127.0.0.1:{}: {e}", args.port)))?
        .port();
    eprintln!("lockstep explore: {cfg}");
    eprintln!("serving stateright's Explorer on http://127.0.0.1:{port} (Ctrl-C to stop)");
    cfg.into_model()?.checker().serve(("127.0.0.1", port));
    Ok(ExitCode::SUCCESS)
}
