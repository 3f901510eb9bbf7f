//! The process-wide set-up of a binary that runs oracles: adopting the orphans its oracles
//! leave, and stopping cleanly on SIGINT, SIGTERM and SIGHUP (SPEC §4: no process left).
//!
//! Every oracle run is in a process group of its own, so a terminal's Ctrl-C or a CI
//! runner's cancel reaches the binary alone: without a handler it dies and its oracles keep
//! running, reparented to PID 1. [`setup`] does what freezegate's own xtask does, once, early
//! in `main`:
//!
//! - it makes the process a child subreaper ([`become_child_subreaper`]), so the processes an
//!   oracle leaves behind are reaped here, and those that left a run's group are killed when
//!   the run ends;
//! - it starts a thread that waits for SIGINT, SIGTERM and SIGHUP ([`handle_stop_signals`]).
//!   On the first it lets the fixture and ledger writes in progress finish and starts no new
//!   one ([`freezegate_canon::fixture::hold_writes`]), kills every run still going with the
//!   processes that left its group ([`kill_active_runs`]), says so in one line on stderr
//!   (`error: stopped by SIGTERM: killed 2 oracle runs`) and exits with 128 + the signal:
//!   130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.
//!
//! Meanwhile the thread that ran the gate sees its runs die: it must neither print results
//! made of them nor exit with its own code first. So from the signal on,
//! [`park_if_stopping`] (call it before writing a result and before `main` returns) never
//! returns.
//!
//! The hidden subcommand that serves a Rust property ([`crate::rust_prop::Registry::serve`])
//! is itself an oracle: route it before calling [`setup`], so that it keeps the default
//! signal dispositions its runner relies on. The crate-level docs show a whole `main`.

use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

pub use freezegate_replay::{become_child_subreaper, kill_active_runs};

/// Set when a stopping signal arrived.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// The signals that stop a binary that runs oracles: SIGINT, SIGTERM and SIGHUP.
pub const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// A step of [`setup`] that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// `PR_SET_CHILD_SUBREAPER` was refused: the orphans of oracles go to PID 1, and a
    /// process that left a run's group outlives the run.
    #[error("cannot become a child subreaper, orphans of oracles go to PID 1")]
    Subreaper(#[source] std::io::Error),
    /// The signal handler or its thread could not be installed: a stopping signal kills
    /// this process at once and leaves its oracles running.
    #[error("cannot handle SIGINT, SIGTERM and SIGHUP")]
    Signals(#[source] std::io::Error),
}

/// Makes this process a child subreaper and installs the handler of SIGINT, SIGTERM and
/// SIGHUP (see the [module docs](self)). Call it once, early in `main`, after routing the
/// hidden Rust-property subcommand.
///
/// Both steps are attempted even if the first fails, so a caller that only warns about the
/// error still has the other one in place; the error names the first step that failed.
pub fn setup() -> Result<(), SetupError> {
    let subreaper = become_child_subreaper().map_err(SetupError::Subreaper);
    let signals = handle_stop_signals();
    subreaper.and(signals)
}

/// Installs the handler of SIGINT, SIGTERM and SIGHUP alone: a thread that, on the first
/// of them, holds the file writes, kills every active run, prints one line on stderr and
/// exits with 128 + the signal. An error leaves the default dispositions (the process dies
/// at once). For a command that runs no oracle but writes the ledger, this without
/// [`become_child_subreaper`] is enough; [`setup`] does both.
pub fn handle_stop_signals() -> Result<(), SetupError> {
    let mut signals = Signals::new(STOP_SIGNALS).map_err(SetupError::Signals)?;
    std::thread::Builder::new()
        .name("freezegate-signals".to_owned())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                stop(signal);
            }
        })
        .map_err(SetupError::Signals)?;
    Ok(())
}

/// Ends this process on `signal` without leaving a process of its runs or a half-written
/// file behind.
fn stop(signal: i32) -> ! {
    STOPPED.store(true, Ordering::SeqCst);
    // Writes in progress finish (a file is replaced whole or not at all, and no stale
    // temporary file is left in a fixture folder); none starts after this.
    freezegate_canon::fixture::hold_writes();
    let runs = kill_active_runs();
    eprintln!("error: stopped by {}: {}", name(signal), killed(runs));
    std::process::exit(128 + signal)
}

/// What [`stop`] says about the runs it killed.
fn killed(runs: usize) -> String {
    match runs {
        0 => "no oracle was running".to_owned(),
        1 => "killed 1 oracle run".to_owned(),
        n => format!("killed {n} oracle runs"),
    }
}

/// The name of one of [`STOP_SIGNALS`].
fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Whether a stopping signal arrived (the signal's thread is ending the process).
pub fn stopping() -> bool {
    STOPPED.load(Ordering::SeqCst)
}

/// Never returns once a stopping signal arrived (the signal's thread ends the process);
/// returns at once otherwise. Call it before writing a result and before `main` returns.
pub fn park_if_stopping() {
    while stopping() {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_line_names_the_signal_and_counts_the_runs() {
        assert_eq!(name(SIGINT), "SIGINT");
        assert_eq!(name(SIGTERM), "SIGTERM");
        assert_eq!(name(SIGHUP), "SIGHUP");
        assert_eq!(killed(0), "no oracle was running");
        assert_eq!(killed(1), "killed 1 oracle run");
        assert_eq!(killed(3), "killed 3 oracle runs");
    }

    #[test]
    fn no_signal_means_no_parking() {
        assert!(!stopping());
        park_if_stopping();
    }
}
