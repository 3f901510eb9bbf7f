//! The Rust properties of this repository, registered for the gate.
//!
//! Each checks one of the workspace's own crates. They run through the hidden
//! `__freezegate-property` subcommand, a fresh process per replay, like any external oracle.

use freezegate_gate::rust_prop::Registry;

/// This repository's Rust properties.
pub fn registry() -> Registry {
    Registry::new()
}

/// Serves the hidden subcommand: one candidate on stdin (or one per line with
/// `FREEZEGATE_WORKER=1`), the oracle protocol's exit code or answers.
pub fn serve(id: &str) -> u8 {
    let worker = std::env::var_os("FREEZEGATE_WORKER").is_some_and(|v| v == "1");
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    registry().serve(id, worker, &mut stdin.lock(), &mut stdout.lock())
}
