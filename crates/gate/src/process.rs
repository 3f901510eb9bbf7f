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
//! A process an oracle left that the end of its run could not tie to the run (it left the
//! run's group with an empty environment and none of the run's pipes) is an orphan of this
//! process until [`kill_orphans`] kills it: the stop does, and a binary calls it once its
//! command is done, before `main` returns.
//!
//! Two registrations widen what a stop does. A child process that is itself such a binary
//! (another xtask, run by [`ForwardStop::spawn`]) gets SIGTERM and is waited for, so it
//! stops its own oracles before this process exits; a folder registered with
//! [`RemoveOnStop`] (a temporary repository, which the exit would leave behind since it runs
//! no destructor) is removed after that.
//!
//! Meanwhile the thread that ran the gate sees its runs die: it must neither print results
//! made of them nor exit with its own code first. So from the signal on,
//! [`park_if_stopping`] (call it before writing a result and before `main` returns) never
//! returns.
//!
//! The hidden subcommand that serves a Rust property ([`crate::rust_prop::Registry::serve`])
//! is itself an oracle: route it before calling [`setup`], so that it keeps the default
//! signal dispositions its runner relies on. The crate-level docs show a whole `main`.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{PidfdFlags, Signal, pidfd_open, pidfd_send_signal};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

pub use freezegate_replay::{become_child_subreaper, kill_active_runs, kill_orphans};

/// How long the stop on a signal and a command's end give the orphans [`kill_orphans`] kills
/// to be gone.
pub const ORPHAN_LIMIT: Duration = Duration::from_secs(2);

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
    // Held until the process exits: no child starts after this (see `ForwardStop::spawn`).
    let children = lock(&FORWARDED);
    // Writes in progress finish (a file is replaced whole or not at all, and no stale
    // temporary file is left in a fixture folder); none starts after this.
    freezegate_canon::fixture::hold_writes();
    let runs = kill_active_runs();
    let forwarded = forward(&children, FORWARD_GRACE);
    // What the runs left that no run could be tied to; the forwarded children, in this
    // process's group, are not among them.
    let orphans = kill_orphans(ORPHAN_LIMIT);
    for (_, dir) in lock(&REMOVED).iter() {
        // Best effort: the process is ending, and nothing else would remove it.
        let _ = std::fs::remove_dir_all(dir);
    }
    // Not `eprintln!`, which panics when stderr cannot be written: the exit code below is
    // what the caller waits for.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "error: stopped by {}: {}{}{}",
        name(signal),
        killed(runs),
        stopped(forwarded),
        orphans_killed(orphans)
    );
    std::process::exit(128 + signal)
}

/// How long the children of [`ForwardStop`] have, together, to end after their SIGTERM
/// before they get SIGKILL.
pub const FORWARD_GRACE: Duration = Duration::from_secs(10);

/// Children that stop themselves on a stopping signal, by pidfd, with their registration.
static FORWARDED: Mutex<Vec<(u64, OwnedFd)>> = Mutex::new(Vec::new());

/// Folders removed on a stopping signal, with their registration.
static REMOVED: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());

/// The registration numbers of [`FORWARDED`] and [`REMOVED`].
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A lock that a panic elsewhere does not make unusable: the lists stay valid whatever
/// panicked while holding them.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sends SIGTERM to every child of `children` and waits, up to `grace` ([`FORWARD_GRACE`] in
/// [`stop`]), for each to end; one still running then gets SIGKILL. Returns how many there
/// were.
fn forward(children: &[(u64, OwnedFd)], grace: Duration) -> usize {
    for (_, fd) in children {
        // A child that already ended cannot be signalled; nothing to do for it.
        let _ = pidfd_send_signal(fd, Signal::TERM);
    }
    let limit = Instant::now() + grace;
    for (_, fd) in children {
        // A pidfd is readable once its process has ended.
        let ended = loop {
            let left = limit.saturating_duration_since(Instant::now());
            let timeout = Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let mut fds = [PollFd::new(fd, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => break false,
                Ok(_) => break true,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break false,
            }
        };
        if !ended {
            let _ = pidfd_send_signal(fd, Signal::KILL);
        }
    }
    children.len()
}

/// What [`stop`] adds about the orphans it killed.
fn orphans_killed(orphans: usize) -> String {
    match orphans {
        0 => String::new(),
        1 => ", killed 1 orphaned process".to_owned(),
        n => format!(", killed {n} orphaned processes"),
    }
}

/// What [`stop`] adds about the children it stopped.
fn stopped(children: usize) -> String {
    match children {
        0 => String::new(),
        1 => ", stopped 1 child process".to_owned(),
        n => format!(", stopped {n} child processes"),
    }
}

/// A child process that is itself a binary stopping on SIGINT, SIGTERM and SIGHUP (another
/// `xtask`, say: one that runs oracles of its own), registered so that a stopping signal that
/// reaches this process reaches it too. On one, the child gets SIGTERM, and this process
/// waits for it to stop its own runs and end (up to [`FORWARD_GRACE`], then SIGKILL) before
/// it exits. Without this, a signal sent to this process alone (a CI runner's cancel, a
/// `kill`) would leave the child and its oracles running. The registration lasts as long as
/// the value: drop it once the child has been waited for.
#[derive(Debug)]
pub struct ForwardStop {
    id: u64,
}

impl ForwardStop {
    /// Starts `command` and registers the child (by pidfd; without one it runs
    /// unregistered). Once a stopping signal has arrived it starts
    /// nothing and never returns (the signal's thread is ending the process), so no child can
    /// start unregistered while the others are being stopped.
    pub fn spawn(command: &mut Command) -> std::io::Result<(Child, ForwardStop)> {
        let mut children = lock(&FORWARDED);
        if stopping() {
            drop(children);
            park_if_stopping();
            return Err(std::io::Error::other("stopping"));
        }
        let child = command.spawn()?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        // Without a pidfd (a kernel older than 5.3, a seccomp filter that refuses it, a
        // child already gone) the child runs unregistered: a stop does not reach it, as
        // before this registry existed, but the step itself is not refused.
        let pid = rustix::process::Pid::from_raw(child.id().try_into().unwrap_or(i32::MAX));
        if let Some(Ok(fd)) = pid.map(|pid| pidfd_open(pid, PidfdFlags::empty())) {
            children.push((id, fd));
        }
        Ok((child, ForwardStop { id }))
    }
}

impl Drop for ForwardStop {
    fn drop(&mut self) {
        lock(&FORWARDED).retain(|(id, _)| *id != self.id);
    }
}

/// A folder (a temporary one, say) that a stopping signal removes, after the runs and the
/// children of [`ForwardStop`] have ended: the process exits without running destructors, so
/// a `tempfile::TempDir` alone would be left behind. The registration lasts as long as the
/// value.
#[derive(Debug)]
pub struct RemoveOnStop {
    id: u64,
}

impl RemoveOnStop {
    /// Registers `dir`.
    pub fn new(dir: &Path) -> RemoveOnStop {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        lock(&REMOVED).push((id, dir.to_path_buf()));
        RemoveOnStop { id }
    }
}

impl Drop for RemoveOnStop {
    fn drop(&mut self) {
        lock(&REMOVED).retain(|(id, _)| *id != self.id);
    }
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
        assert_eq!(stopped(0), "");
        assert_eq!(stopped(1), ", stopped 1 child process");
        assert_eq!(stopped(2), ", stopped 2 child processes");
    }

    #[test]
    fn registrations_end_with_their_values() {
        let dir = std::env::temp_dir().join("freezegate-remove-on-stop-test");
        let a = RemoveOnStop::new(&dir);
        let b = RemoveOnStop::new(&dir);
        // Other tests register too: look at this test's own registrations only.
        let removed = |id: u64| lock(&REMOVED).iter().any(|(i, _)| *i == id);
        let (a_id, b_id) = (a.id, b.id);
        assert!(removed(a_id) && removed(b_id));
        drop(a);
        assert!(!removed(a_id) && removed(b_id));
        drop(b);
        assert!(!removed(b_id));

        let forwarded = |id: u64| lock(&FORWARDED).iter().any(|(i, _)| *i == id);
        let (mut child, forward) =
            ForwardStop::spawn(Command::new("true").stdout(std::process::Stdio::null()))
                .expect("true starts");
        let id = forward.id;
        assert!(forwarded(id));
        assert!(child.wait().expect("wait").success());
        drop(forward);
        assert!(!forwarded(id));
    }

    #[test]
    fn a_forwarded_child_gets_sigterm_and_is_waited_for() {
        // A child that ends on SIGTERM after a moment: `forward` returns after it ended.
        let (mut child, forward_stop) = ForwardStop::spawn(Command::new("sh").args([
            "-c",
            "trap 'kill $!; sleep 0.3; exit 7' TERM; sleep 30 & wait",
        ]))
        .expect("sh starts");
        // Give the shell time to install its trap.
        std::thread::sleep(Duration::from_millis(300));
        let start = Instant::now();
        let children = lock(&FORWARDED);
        let own: Vec<&(u64, OwnedFd)> = children
            .iter()
            .filter(|(id, _)| *id == forward_stop.id)
            .collect();
        assert_eq!(own.len(), 1);
        let fd = own[0].1.try_clone().expect("dup");
        drop(children);
        assert_eq!(forward(&[(forward_stop.id, fd)], FORWARD_GRACE), 1);
        let waited = start.elapsed();
        // It had ended when `forward` returned: its status is there at once.
        let status = child.try_wait().expect("try_wait");
        assert_eq!(status.and_then(|s| s.code()), Some(7), "after {waited:?}");
        assert!(waited >= Duration::from_millis(250), "{waited:?}");
        drop(forward_stop);
    }

    #[test]
    fn a_forwarded_child_that_ignores_sigterm_gets_sigkill_after_the_grace() {
        use std::os::unix::process::ExitStatusExt;
        let (mut child, forward_stop) =
            ForwardStop::spawn(Command::new("sh").args(["-c", "trap '' TERM; exec sleep 30"]))
                .expect("sh starts");
        std::thread::sleep(Duration::from_millis(300));
        let fd = {
            let children = lock(&FORWARDED);
            let own = children.iter().find(|(id, _)| *id == forward_stop.id);
            own.expect("registered").1.try_clone().expect("dup")
        };
        let start = Instant::now();
        forward(&[(forward_stop.id, fd)], Duration::from_millis(400));
        assert!(start.elapsed() >= Duration::from_millis(400));
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(9), "{status:?}");
        drop(forward_stop);
    }

    #[test]
    fn no_signal_means_no_parking() {
        assert!(!stopping());
        park_if_stopping();
    }
}
