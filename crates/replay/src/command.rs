//! One shell command run to its end under the process runner's rules, for commands that
//! are not oracle runs: a campaign's generator (SPEC §4).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::escape::{MARK_VAR, RunMark, spawn_run};
use crate::oracle::{Excerpt, TailBuffer};
use crate::process::{ConfigError, DEFAULT_GRACE, DEFAULT_OUTPUT_CAP, Run, nonempty, shell};

/// How many bytes of stdout a [`ShellCommand`] keeps by default: 256 MiB.
pub const DEFAULT_STDOUT_CAP: usize = 256 * 1024 * 1024;

/// A shell command run once, to its end, under the rules of [`crate::ProcessOracle`]'s
/// runs: `sh -c CMD` in `dir`, in a process group of its own, killed as a group at its
/// deadline (SIGTERM, the grace period, SIGKILL); when it exits, what it left running in its
/// group is killed, and where this process is a child subreaper, so is what left the group
/// (known by the run's `FREEZEGATE_RUN_MARK` or the pipes it holds). No output that a
/// leftover holds open is waited for, so a command that starts a background process cannot
/// stretch the run past its end.
///
/// Unlike an oracle run, its stdout is the product: it is kept from its start, up to a cap
/// ([`DEFAULT_STDOUT_CAP`]), and a command that prints more is stopped there
/// ([`CommandEnd::StdoutOverflow`]) rather than read on until its deadline. Of stderr the
/// last [`DEFAULT_OUTPUT_CAP`] bytes are kept. Stdin gets [`ShellCommand::input`] (nothing by
/// default) and is then closed. `FREEZEGATE_REPLAY` and `FREEZEGATE_WORKER` are removed from
/// the environment; the caller adds what the command needs.
///
/// ```
/// use std::time::Duration;
/// use freezegate_replay::{CommandEnd, ShellCommand};
///
/// let out = ShellCommand::new("printf '%s\\n' \"$PROP_CASES\"", ".")?
///     .env("PROP_CASES", "3")
///     .timeout(Duration::from_secs(30))
///     .run();
/// assert!(matches!(out.end, CommandEnd::Exited(status) if status.success()));
/// assert_eq!(out.stdout, b"3\n");
/// # Ok::<(), freezegate_replay::ConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ShellCommand {
    command: String,
    dir: PathBuf,
    env: Vec<(OsString, OsString)>,
    input: Vec<u8>,
    timeout: Duration,
    grace: Duration,
    stdout_cap: usize,
}

/// How a [`ShellCommand`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommandEnd {
    /// It exited (or died of a signal it was not sent by the runner) before its deadline.
    Exited(ExitStatus),
    /// It was still running at its deadline and was killed.
    TimedOut,
    /// Its stdout outgrew the cap and it was killed.
    StdoutOverflow,
    /// It could not be started or waited for; the text says why.
    NotRun(String),
}

/// What a [`ShellCommand`] run gave.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommandOutput {
    /// How it ended.
    pub end: CommandEnd,
    /// Its stdout from the start, at most the cap.
    pub stdout: Vec<u8>,
    /// How many bytes its stdout carried in all (more than `stdout.len()` when it overflowed).
    pub stdout_total: u64,
    /// The end of its stderr.
    pub stderr: Excerpt,
    /// How long it ran.
    pub duration: Duration,
    /// What is worth saying besides (processes that left the group and were killed,
    /// leftovers that would not die, output held open), in order.
    pub notes: Vec<String>,
}

impl ShellCommand {
    /// A run of `command` (a shell string) in `dir`, with the default deadline of
    /// [`crate::DEFAULT_TIMEOUT`].
    pub fn new(
        command: impl Into<String>,
        dir: impl Into<PathBuf>,
    ) -> Result<ShellCommand, ConfigError> {
        Ok(ShellCommand {
            command: nonempty(command.into())?,
            dir: dir.into(),
            env: Vec::new(),
            input: Vec::new(),
            timeout: crate::DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
            stdout_cap: DEFAULT_STDOUT_CAP,
        })
    }

    /// Adds a variable to the command's environment.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> ShellCommand {
        self.env.push((key.into(), value.into()));
        self
    }

    /// What the command reads on stdin (then closed).
    pub fn input(mut self, bytes: impl Into<Vec<u8>>) -> ShellCommand {
        self.input = bytes.into();
        self
    }

    /// The deadline, counted from the start; a duration too large for the clock
    /// (`Duration::MAX`) means no deadline.
    pub fn timeout(mut self, timeout: Duration) -> ShellCommand {
        self.timeout = timeout;
        self
    }

    /// The grace period between SIGTERM and SIGKILL; one too large for the clock
    /// (`Duration::MAX`) never ends: SIGKILL never follows.
    pub fn grace(mut self, grace: Duration) -> ShellCommand {
        self.grace = grace;
        self
    }

    /// The most bytes of stdout kept; a command that prints more is stopped.
    pub fn stdout_cap(mut self, bytes: usize) -> ShellCommand {
        self.stdout_cap = bytes;
        self
    }

    /// The command.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The working directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs the command to its end. Never fails: what goes wrong is in
    /// [`CommandOutput::end`].
    pub fn run(&self) -> CommandOutput {
        let start = Instant::now();
        // Active from before the process exists until its leftovers are gone.
        let mark = RunMark::new();
        let mut cmd = shell(&self.command, &self.dir);
        cmd.env_remove("FREEZEGATE_REPLAY")
            .env_remove("FREEZEGATE_WORKER")
            .env_remove("FREEZEGATE_GENERATE")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env(MARK_VAR, mark.env_value());
        let mut child = match spawn_run(&mut cmd, &mark) {
            Ok(child) => child,
            Err(e) => {
                return CommandOutput {
                    end: CommandEnd::NotRun(format!(
                        "cannot start `sh -c` in {}: {e}",
                        self.dir.display()
                    )),
                    stdout: Vec::new(),
                    stdout_total: 0,
                    stderr: Excerpt::default(),
                    duration: start.elapsed(),
                    notes: Vec::new(),
                };
            }
        };
        let outputs = (
            TailBuffer::head(self.stdout_cap),
            TailBuffer::new(DEFAULT_OUTPUT_CAP),
        );
        let mut run = Run::new(&mut child, self.input.clone(), outputs, mark);
        run.whose = "command";
        let (status, timed_out) = run.supervise(start.checked_add(self.timeout), self.grace);
        let overflowed = run.stdout.overflowed();
        let end = match (status, timed_out) {
            (_, true) => CommandEnd::TimedOut,
            _ if overflowed => CommandEnd::StdoutOverflow,
            (Ok(status), false) => CommandEnd::Exited(status),
            (Err(e), false) => CommandEnd::NotRun(format!("cannot wait for the command: {e}")),
        };
        CommandOutput {
            end,
            stdout_total: run.stdout.total(),
            stdout: run.stdout.take(),
            stderr: run.stderr.excerpt(),
            duration: start.elapsed(),
            notes: std::mem::take(&mut run.notes),
        }
    }
}
