//! SIGINT, SIGTERM and SIGHUP while oracles run (SPEC §4: no process left).
//!
//! Every oracle run is in a process group of its own, so a terminal's Ctrl-C or a CI
//! runner's cancel reaches this process alone. A thread waits for those signals; on the first
//! it lets the writes of fixture files and the ledger in progress finish and starts no new
//! one, kills every run still going with the processes that left its group
//! ([`freezegate_replay::kill_active_runs`]), says so in one line on stderr and exits with
//! 128 + the signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
//!
//! Meanwhile the command's own thread sees its runs die: it must neither print results made
//! of them nor exit with its own code first. So from the signal on, [`park_if_stopping`]
//! (called before a result is written and before `main` returns) stops it for good.

use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Set when a stopping signal arrived.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// The signals that stop a command that runs oracles.
const STOPPING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Installs the handler for the signals that stop a command: a thread that kills the runs
/// and exits when one arrives. An error leaves the default (the process dies at once).
pub fn handle_stop_signals() -> std::io::Result<()> {
    let mut signals = Signals::new(STOPPING)?;
    std::thread::Builder::new()
        .name("xtask-signals".to_owned())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                stop(signal);
            }
        })?;
    Ok(())
}

/// Ends this process on `signal` without leaving a process of its runs or a half-written
/// file behind.
fn stop(signal: i32) -> ! {
    STOPPED.store(true, Ordering::SeqCst);
    // Writes in progress finish (a file is replaced whole or not at all, and no stale
    // temporary file is left in a fixture folder); none starts after this.
    freezegate_canon::fixture::hold_writes();
    let runs = freezegate_replay::kill_active_runs();
    let what = match runs {
        0 => "no oracle was running".to_owned(),
        1 => "killed 1 oracle run".to_owned(),
        n => format!("killed {n} oracle runs"),
    };
    eprintln!("error: stopped by {}: {what}", name(signal));
    std::process::exit(128 + signal)
}

/// The name of one of [`STOPPING`].
fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Never returns once a stopping signal arrived (the signal's thread ends the process);
/// returns at once otherwise.
pub fn park_if_stopping() {
    while STOPPED.load(Ordering::SeqCst) {
        std::thread::park();
    }
}
