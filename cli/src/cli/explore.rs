//! `lockstep explore`: stateright's Explorer over a lockstep model, behind
//! a front that checks each request's `Host` (`front.rs`).

use super::{front, ExploreArgs, UsageError};
use stateright::Model;
use std::net::TcpListener;
use std::process::ExitCode;

pub fn run(args: &ExploreArgs) -> Result<ExitCode, UsageError> {
    if args.model.list {
        return super::recipes::run(false);
    }
    let cfg = args.model.to_cfg()?;
    // The user's port is the front's, held from here on: a port in use is
    // an error here, not a panic in stateright's server. Port 0 asks the
    // system for a free port: the one it gives is the one served and
    // printed.
    let listener = TcpListener::bind(("127.0.0.1", args.port))
        .map_err(|e| UsageError(format!("cannot serve on 127.0.0.1:{}: {e}", args.port)))?;
    let port = local_port(&listener)?;
    // The Explorer itself on a free loopback port only the front talks to.
    let backend = local_port(
        &TcpListener::bind(("127.0.0.1", 0))
            .map_err(|e| UsageError(format!("cannot find a free loopback port: {e}")))?,
    )?;
    eprintln!("lockstep explore: {cfg}");
    let model = cfg.into_model()?;
    eprintln!("serving stateright's Explorer on http://127.0.0.1:{port} (Ctrl-C to stop)");
    std::thread::spawn(move || {
        model.checker().serve(("127.0.0.1", backend));
    });
    front::serve(listener, port, backend);
    Ok(ExitCode::SUCCESS)
}

fn local_port(listener: &TcpListener) -> Result<u16, UsageError> {
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| UsageError(format!("cannot read the port served: {e}")))
}
