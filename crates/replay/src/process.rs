//! The process runner: a fresh `sh -c CMD` per run, in its own process group, killed as a
//! group at its deadline (SPEC §4).

use std::io::{self, Read, Write};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::io::Errno;
use rustix::process::{
    Pid, PidfdFlags, Signal, WaitOptions, kill_process_group, pidfd_open, test_kill_process_group,
    waitpgid,
};

use crate::Label;
use crate::escape::{MARK_VAR, PipeEnd, RunMark, forking_child_holds, spawn_run};
use crate::oracle::{Exit, Oracle, RunContext, RunOutcome, TailBuffer, failure_signature};

/// How long a process group gets between SIGTERM and SIGKILL at a deadline, by default.
pub const DEFAULT_GRACE: Duration = Duration::from_millis(500);

/// How many bytes of each output stream a run keeps (its end), by default.
pub const DEFAULT_OUTPUT_CAP: usize = 64 * 1024;

/// How long the runner waits, after a run's process group was killed, for its processes to
/// be gone and its pipes to close before it gives up on them.
pub(crate) const SETTLE_LIMIT: Duration = Duration::from_secs(2);

/// Errors in configuring a runner.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The oracle command is empty or only whitespace.
    #[error("the oracle command is empty")]
    EmptyCommand,
}

/// `command` when it has something to run, else [`ConfigError::EmptyCommand`]: what every
/// runner's constructor checks.
pub(crate) fn nonempty(command: String) -> Result<String, ConfigError> {
    if command.trim().is_empty() {
        return Err(ConfigError::EmptyCommand);
    }
    Ok(command)
}

/// `sh -c command` in `dir`, in a process group of its own, its three streams piped: what
/// every runner starts. The caller adds the environment (the run's mark included).
pub(crate) fn shell(command: &str, dir: &Path) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// Runs an oracle command as a fresh process per run (SPEC §4).
///
/// Each run is `sh -c CMD` in the configured directory, in a new process group, with the
/// candidate's canonical bytes and `\n` on stdin and `PROP_SEED`, `PROPERTY_ID` and
/// `FREEZEGATE_REPLAY` in its environment (`FREEZEGATE_WORKER` removed). Exit 0 is
/// `assert_pass`, exit 1 `assert_fail` (with the signature of a last stdout line
/// `failure: <text>`), any other exit or death by a signal `harness_error`.
///
/// **Deadline.** A run still going at its deadline gets SIGTERM sent to its whole process
/// group, then after the grace period SIGKILL to the group, and is labelled `timeout`.
/// **No leftovers.** When the command exits, whatever it left running in its group is
/// killed (SIGKILL), and `run` returns only once no process of the group is still running
/// (zombies aside; it gives up after a few seconds on a process stuck in the kernel). Call
/// [`become_child_subreaper`] once so that orphaned grandchildren are reparented to this
/// process and reaped by the runner rather than left to PID 1.
///
/// **Processes that leave the group** (`setsid`, `setpgid`, a daemon's double fork) are
/// beyond a kill of the group. Every run's environment carries a mark of the run,
/// `FREEZEGATE_RUN_MARK` (oracles must leave it alone), which its descendants inherit.
/// Where this process is a child subreaper, such processes are reparented to it when their
/// parents die, and once the run's group is settled (after the command exited, or was
/// killed at its deadline) the runner kills (SIGKILL) and reaps every child of this process
/// that carries the run's mark or holds the run's end of one of its pipes, with its process
/// group where it leads one, and again for their own children, until none is left: `run` returns
/// with no process of the run running. The run keeps the label it earned; its message says
/// that `N processes left the oracle's process group and were killed`. Left alone: this
/// process's own group, the processes of runs still going on other threads (in their
/// groups or not: a daemon a run started lives until that run ends), and children of this
/// process that no run started. A run never waits for output that a process outside its
/// group holds open once its group is gone (`the oracle's output stayed open after it
/// exited`), so such a process cannot stretch it past its deadline and grace. (It only
/// waits for a child this process is starting on another thread, which holds a copy of
/// every descriptor until it runs its program.)
///
/// Limits: where this process is not a child subreaper, a process that left the group is
/// out of reach (reparented to PID 1 or another reaper) and keeps running. One that clears
/// its environment and holds none of the run's pipes
/// (`env -i setsid cmd </dev/null >/dev/null 2>&1 &`) is not recognised as the run's: it
/// lives on as an orphan of this process, until [`crate::kill_orphans`], which a binary
/// calls when its command is done (freezegate's xtask does, and on a stopping signal). One
/// that ends by itself before the run does stays a zombie child of this process (not
/// running, but not reaped either: nothing tells it from another child's). A worker
/// ([`crate::WorkerOracle`]) carries a mark too: its escapees are swept when the worker is
/// stopped.
///
/// **Input and output.** One thread does everything with `poll`: stdin is written without
/// blocking (an oracle that reads none neither hangs the run nor fails it), stdout and stderr
/// are read as they come and only their last [`DEFAULT_OUTPUT_CAP`] bytes are kept, the
/// rest read and discarded, so a chatty oracle neither exhausts memory nor blocks on a full
/// pipe.
#[derive(Debug, Clone)]
pub struct ProcessOracle {
    command: String,
    dir: PathBuf,
    grace: Duration,
    output_cap: usize,
}

impl ProcessOracle {
    /// A runner of `command` (a shell string) started in `dir` (the repository root).
    pub fn new(
        command: impl Into<String>,
        dir: impl Into<PathBuf>,
    ) -> Result<ProcessOracle, ConfigError> {
        Ok(ProcessOracle {
            command: nonempty(command.into())?,
            dir: dir.into(),
            grace: DEFAULT_GRACE,
            output_cap: DEFAULT_OUTPUT_CAP,
        })
    }

    /// The same runner with another grace period between SIGTERM and SIGKILL; one too large
    /// for the clock (`Duration::MAX`) never ends: SIGKILL never follows.
    pub fn with_grace(mut self, grace: Duration) -> ProcessOracle {
        self.grace = grace;
        self
    }

    /// The same runner keeping another number of bytes of each output stream.
    pub fn with_output_cap(mut self, bytes: usize) -> ProcessOracle {
        self.output_cap = bytes;
        self
    }

    /// The command.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The working directory of the runs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Oracle for ProcessOracle {
    fn run(&self, candidate: &[u8], ctx: &RunContext) -> RunOutcome {
        let start = Instant::now();
        if candidate.contains(&b'\n') {
            return RunOutcome::not_run("the candidate holds a raw newline: not canonical bytes");
        }
        // Active from before the process exists until its leftovers are gone.
        let mark = RunMark::new();
        let mut cmd = shell(&self.command, &self.dir);
        cmd.env("PROP_SEED", ctx.seed.to_string())
            .env("PROPERTY_ID", &ctx.property_id)
            .env("FREEZEGATE_REPLAY", ctx.replay.to_string())
            .env(MARK_VAR, mark.env_value())
            .env_remove("FREEZEGATE_WORKER")
            // A run is a run: never the generation mode of a Rust property's runner.
            .env_remove("FREEZEGATE_GENERATE");
        let mut child = match spawn_run(&mut cmd, &mark) {
            Ok(child) => child,
            Err(e) => {
                return RunOutcome::not_run(format!(
                    "cannot start `sh -c` in {}: {e}",
                    self.dir.display()
                ));
            }
        };
        let mut input = Vec::with_capacity(candidate.len() + 1);
        input.extend_from_slice(candidate);
        input.push(b'\n');
        let outputs = (
            TailBuffer::new(self.output_cap),
            TailBuffer::new(self.output_cap),
        );
        let mut run = Run::new(&mut child, input, outputs, mark);
        // A timeout past what an `Instant` can hold is no deadline.
        let deadline = start.checked_add(ctx.timeout);
        let (status, timed_out) = run.supervise(deadline, self.grace);
        let duration = start.elapsed();
        let stdout = run.stdout.excerpt();
        let stderr = run.stderr.excerpt();
        let mut outcome = match (status, timed_out) {
            (_, true) => RunOutcome::new(Label::Timeout, duration, Exit::Deadline).with_message(
                format!("still running after {} ms", ctx.timeout.as_millis()),
            ),
            (Ok(status), false) => outcome_of(status, duration, run.stdout.bytes()),
            (Err(e), false) => RunOutcome::new(Label::HarnessError, duration, Exit::NotRun)
                .with_message(format!("cannot wait for the oracle: {e}")),
        };
        for note in run.notes.drain(..) {
            outcome.message = Some(match outcome.message.take() {
                Some(m) => format!("{m}; {note}"),
                None => note,
            });
        }
        outcome.stdout = stdout;
        outcome.stderr = stderr;
        outcome
    }
}

/// The exit code by which a process oracle declines its input, "cannot test this input"
/// (SPEC §4; as in `git bisect run`).
const CANNOT_TEST: i32 = 125;

/// The label of a process that exited by itself.
fn outcome_of(status: ExitStatus, duration: Duration, stdout: &[u8]) -> RunOutcome {
    match (status.code(), status.signal()) {
        (Some(0), _) => RunOutcome::new(Label::AssertPass, duration, Exit::Code(0)),
        (Some(1), _) => {
            let outcome = RunOutcome::new(Label::AssertFail, duration, Exit::Code(1));
            match failure_signature(stdout) {
                Some(sig) => outcome.with_signature(sig),
                None => outcome,
            }
        }
        (Some(CANNOT_TEST), _) => RunOutcome::cannot_test(duration, Exit::Code(CANNOT_TEST)),
        (Some(code), _) => RunOutcome::new(Label::HarnessError, duration, Exit::Code(code)),
        (None, Some(sig)) => RunOutcome::new(Label::HarnessError, duration, Exit::Signal(sig)),
        (None, None) => RunOutcome::new(Label::HarnessError, duration, Exit::NotRun)
            .with_message(format!("unknown exit status {status}")),
    }
}

/// Makes this process a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`): orphaned
/// descendants are reparented to it instead of PID 1, so the runners can reap the processes
/// an oracle leaves behind, and [`ProcessOracle`] kills those of a run that left its process
/// group when the run ends. It affects the whole process; call it once, early, from a
/// binary that runs oracles.
pub fn become_child_subreaper() -> io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).map_err(io::Error::from)
}

/// Whether any process of group `pgid` is still running (zombies do not count).
///
/// Cheap when the group is gone (one `kill(-pgid, 0)`); otherwise it scans `/proc`.
pub fn group_is_running(pgid: u32) -> bool {
    let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    match test_kill_process_group(pid) {
        Err(Errno::SRCH) => false,
        Err(_) => true,
        Ok(()) => proc_group_running(pgid).unwrap_or(true),
    }
}

/// Scans `/proc` for a process of group `pgid` that is not a zombie.
fn proc_group_running(pgid: u32) -> io::Result<bool> {
    let mut running = false;
    try_for_each_process(|_, stat| {
        running = u32::try_from(stat.pgrp) == Ok(pgid) && stat.running();
        if running {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    Ok(running)
}

/// The fields of `/proc/PID/stat` the runners need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// The state letter (`R`, `S`, `D`, `Z`, ...).
    pub(crate) state: u8,
    /// The parent's pid.
    pub(crate) ppid: i32,
    /// The process group.
    pub(crate) pgrp: i32,
    /// The kernel's flags word (`PF_*`).
    pub(crate) flags: u32,
}

impl ProcStat {
    /// Parses the text of `/proc/PID/stat`: `pid (comm) state ppid pgrp session tty_nr
    /// tpgid flags ...`, where comm may hold spaces and parentheses.
    pub(crate) fn parse(stat: &str) -> Option<ProcStat> {
        let rest = stat.rfind(')').map(|i| &stat[i + 1..])?;
        let mut fields = rest.split_ascii_whitespace();
        let state = *fields.next()?.as_bytes().first()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgrp = fields.next()?.parse().ok()?;
        // session, tty_nr, tpgid, then flags.
        let flags = fields.nth(3)?.parse().ok()?;
        Some(ProcStat {
            state,
            ppid,
            pgrp,
            flags,
        })
    }

    /// The stat of process `pid`; `None` if it is gone.
    pub(crate) fn read(pid: i32) -> Option<ProcStat> {
        ProcStat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// Whether the process is running: not a zombie, not dead.
    pub(crate) fn running(&self) -> bool {
        !matches!(self.state, b'Z' | b'X' | b'x')
    }
}

/// Calls `f` with the pid and stat of every process in `/proc` until it breaks; processes
/// gone meanwhile are skipped.
fn try_for_each_process(mut f: impl FnMut(i32, ProcStat) -> ControlFlow<()>) -> io::Result<()> {
    for entry in std::fs::read_dir("/proc")? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(stat) = ProcStat::read(pid)
            && f(pid, stat).is_break()
        {
            break;
        }
    }
    Ok(())
}

/// Calls `f` with the pid and stat of every process in `/proc`; sees nothing where `/proc`
/// cannot be read.
pub(crate) fn for_each_process(mut f: impl FnMut(i32, ProcStat)) {
    let _ = try_for_each_process(|pid, stat| {
        f(pid, stat);
        ControlFlow::Continue(())
    });
}

/// After the leader of group `pgid` was reaped: kills what is left of the group and waits
/// until none of it runs, reaping what was reparented to us. False if something still ran
/// at `limit`.
pub(crate) fn settle_group(pgid: Option<Pid>, limit: Instant) -> bool {
    let Some(pgid) = pgid else { return true };
    // A reaped leader's pid stays reserved while its group has members, so the group id
    // cannot name someone else's processes here.
    if test_kill_process_group(pgid).is_err() {
        return true;
    }
    let _ = kill_process_group(pgid, Signal::KILL);
    let raw = pgid.as_raw_nonzero().get().unsigned_abs();
    let mut pause = Duration::from_micros(200);
    loop {
        // Taken before reaping: once no member runs, every member is a zombie and every
        // orphan has been reparented (to us, if we are a subreaper).
        let running = group_is_running(raw);
        let none_of_ours = loop {
            match waitpgid(pgid, WaitOptions::NOHANG) {
                Ok(Some(_)) => {}
                Ok(None) => break false,
                Err(_) => break true,
            }
        };
        if test_kill_process_group(pgid).is_err() {
            return true;
        }
        if !running && none_of_ours {
            // Only zombies that another process (PID 1) has to reap are left.
            return true;
        }
        if Instant::now() >= limit {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Ends a process and its group: SIGTERM to the group, up to `grace` for the leader to
/// exit, SIGKILL to the group, then [`settle_group`]. Returns the leader's exit status.
pub(crate) fn terminate_group(child: &mut Child, grace: Duration) -> io::Result<ExitStatus> {
    let pgid = Pid::from_raw(child.id() as i32);
    if let Some(status) = child.try_wait()? {
        settle_group(pgid, Instant::now() + SETTLE_LIMIT);
        return Ok(status);
    }
    if let Some(pgid) = pgid {
        let _ = kill_process_group(pgid, Signal::TERM);
    }
    // A grace past what an `Instant` can hold never ends: SIGKILL only if the leader
    // outlives the grace.
    let until = Instant::now().checked_add(grace);
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let now = Instant::now();
        let left = until.map_or(Duration::MAX, |until| until.saturating_duration_since(now));
        if left.is_zero() {
            if let Some(pgid) = pgid {
                let _ = kill_process_group(pgid, Signal::KILL);
            }
            break child.wait()?;
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    settle_group(pgid, Instant::now() + SETTLE_LIMIT);
    Ok(status)
}

/// One run's process, pipes and captured output.
pub(crate) struct Run<'c> {
    child: &'c mut Child,
    pgid: Option<Pid>,
    pidfd: Option<OwnedFd>,
    stdin: Option<ChildStdin>,
    input: Vec<u8>,
    written: usize,
    out_pipe: Option<ChildStdout>,
    err_pipe: Option<ChildStderr>,
    pub(crate) stdout: TailBuffer,
    pub(crate) stderr: TailBuffer,
    /// The run's mark, for its processes that leave the group.
    mark: RunMark,
    /// The run's end of the stdin pipe, known past closing ours: an escapee may still hold
    /// it.
    stdin_end: Option<PipeEnd>,
    /// What is worth saying about the run (escapees, leftovers that would not die, pipes
    /// held open), in order.
    pub(crate) notes: Vec<String>,
    /// What the notes call the run's process: `oracle` unless set.
    pub(crate) whose: &'static str,
}

/// What one `poll` found ready.
struct Polled {
    /// The pidfd: the leader exited.
    pidfd: bool,
    /// Stdout or stderr: data, end of file or an error.
    pipes: bool,
}

/// What waiting for the leader ended with.
enum Waited {
    Exited(io::Result<ExitStatus>),
    Deadline,
    /// Stdout outgrew a buffer that keeps its head.
    Overflow,
}

impl<'c> Run<'c> {
    /// A run of `child`, fed `input`, its stdout and stderr going to `outputs`. A stdout
    /// buffer that keeps the stream's head ends the run (as at a deadline, but not labelled
    /// one) once the stream outgrows it.
    pub(crate) fn new(
        child: &'c mut Child,
        input: Vec<u8>,
        outputs: (TailBuffer, TailBuffer),
        mark: RunMark,
    ) -> Run<'c> {
        // The group was recorded in the run's mark when the process was started.
        let pgid = Pid::from_raw(child.id() as i32);
        let pidfd = pgid.and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok());
        let stdin = child.stdin.take();
        let out_pipe = child.stdout.take();
        let err_pipe = child.stderr.take();
        for fd in [
            stdin.as_ref().map(|p| p.as_fd()),
            out_pipe.as_ref().map(|p| p.as_fd()),
            err_pipe.as_ref().map(|p| p.as_fd()),
        ]
        .into_iter()
        .flatten()
        {
            // A pipe left blocking would only make poll's answers conservative for reads;
            // for stdin the writes below stop at WouldBlock, so this must hold.
            let _ = rustix::io::ioctl_fionbio(fd, true);
        }
        let stdin_end = stdin
            .as_ref()
            .and_then(|p| PipeEnd::opposite(p.as_fd(), false));
        Run {
            child,
            pgid,
            pidfd,
            stdin,
            input,
            written: 0,
            out_pipe,
            err_pipe,
            stdout: outputs.0,
            stderr: outputs.1,
            mark,
            stdin_end,
            notes: Vec::new(),
            whose: "oracle",
        }
    }

    /// Runs the process to its end: returns its exit status and whether it was killed at
    /// the deadline (a run whose stdout outgrew a head buffer is killed too, but not at
    /// the deadline). `None`: no deadline (a timeout too large for an `Instant`). Afterwards
    /// no process of the group is running and the pipes are drained.
    pub(crate) fn supervise(
        &mut self,
        deadline: Option<Instant>,
        grace: Duration,
    ) -> (io::Result<ExitStatus>, bool) {
        // A candidate that fits the pipe goes in (and stdin is closed) before the first
        // poll: one wake-up less per run.
        self.write_input();
        match self.wait_leader(deadline) {
            Waited::Exited(status) => {
                self.finish_group();
                (status, false)
            }
            ended @ (Waited::Deadline | Waited::Overflow) => {
                self.signal_group(Signal::TERM);
                let status = match self.wait_leader(Instant::now().checked_add(grace)) {
                    Waited::Exited(status) => {
                        self.finish_group();
                        status
                    }
                    Waited::Deadline | Waited::Overflow => {
                        // The leader is alive, so its pid still names the group.
                        self.signal_group(Signal::KILL);
                        let status = self.child.wait();
                        self.finish_group();
                        status
                    }
                };
                (status, matches!(ended, Waited::Deadline))
            }
        }
    }

    fn signal_group(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH: the group is gone already.
            let _ = kill_process_group(pgid, signal);
        }
    }

    /// After the leader was reaped: kills what is left of its group, waits until none of
    /// it runs (reaping what was reparented to us), kills the processes that left the group
    /// where this process is a child subreaper, and drains the pipes.
    fn finish_group(&mut self) {
        self.stdin = None;
        let limit = Instant::now() + SETTLE_LIMIT;
        if !settle_group(self.pgid, limit) {
            self.notes.push(format!(
                "a process of the {}'s group would not die",
                self.whose
            ));
        }
        let mut pipes = self.output_ends();
        pipes.extend(self.stdin_end.clone());
        let swept = self.mark.sweep(&pipes, limit);
        match swept.killed {
            0 => {}
            1 => self.notes.push(format!(
                "1 process left the {}'s process group and was killed",
                self.whose
            )),
            n => self.notes.push(format!(
                "{n} processes left the {}'s process group and were killed",
                self.whose
            )),
        }
        if !swept.settled {
            self.notes.push(format!(
                "a process that left the {}'s process group would not die",
                self.whose
            ));
        }
        // No process of the group runs, nor any escapee found: what they wrote is in the
        // pipes, so read it without waiting. A pipe still open after that is held by a
        // process that left the group and was not found (this process is no subreaper, or
        // nothing ties it to the run): waiting for it would only stretch the run, and so
        // would reading for ever what such a process keeps writing.
        while self.out_pipe.is_some() || self.err_pipe.is_some() {
            let polled = self.pump(Duration::ZERO, None);
            let open = Instant::now() < limit;
            match polled {
                Ok(polled) if polled.pipes && open => continue,
                // A child this process is starting on another thread may hold a copy of the
                // run's end until it runs its program: that is worth a wait.
                Ok(_) if open && forking_child_holds(&self.output_ends()) => {
                    let _ = self.pump(Duration::from_millis(1), None);
                    continue;
                }
                _ => {}
            }
            self.notes.push(format!(
                "the {}'s output stayed open after it exited",
                self.whose
            ));
            self.out_pipe = None;
            self.err_pipe = None;
        }
    }

    /// The run's ends (write ends) of the stdout and stderr pipes still open.
    fn output_ends(&self) -> Vec<PipeEnd> {
        [
            self.out_pipe
                .as_ref()
                .and_then(|p| PipeEnd::opposite(p.as_fd(), true)),
            self.err_pipe
                .as_ref()
                .and_then(|p| PipeEnd::opposite(p.as_fd(), true)),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Moves input and output until the leader exits or `until` passes.
    fn wait_leader(&mut self, until: Option<Instant>) -> Waited {
        let mut check = true;
        loop {
            if check {
                match self.child.try_wait() {
                    Ok(Some(status)) => return Waited::Exited(Ok(status)),
                    Ok(None) => {}
                    Err(e) => return Waited::Exited(Err(e)),
                }
            }
            let mut wait = match until {
                Some(until) => match until.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left,
                    _ => return Waited::Deadline,
                },
                None => Duration::MAX,
            };
            if self.pidfd.is_none() {
                // No pidfd (an old kernel): look at the child every few milliseconds.
                wait = wait.min(Duration::from_millis(2));
            }
            let pidfd = self.pidfd.take();
            let ready = self.pump(wait, pidfd.as_ref());
            self.pidfd = pidfd;
            if self.stdout.is_full_head() {
                return Waited::Overflow;
            }
            check = match ready {
                Ok(polled) => polled.pidfd || self.pidfd.is_none(),
                Err(_) => true,
            };
        }
    }

    /// One `poll` over the pipes still open (and the pidfd, if given) for at most `wait`;
    /// handles what is ready and says what was.
    fn pump(&mut self, wait: Duration, pidfd: Option<&OwnedFd>) -> io::Result<Polled> {
        const IN: usize = 0;
        const OUT: usize = 1;
        const ERR: usize = 2;
        const PID: usize = 3;
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
        let mut slots = [usize::MAX; 4];
        if self.written < self.input.len()
            && let Some(stdin) = &self.stdin
        {
            slots[IN] = fds.len();
            fds.push(PollFd::new(stdin, PollFlags::OUT));
        }
        if let Some(out) = &self.out_pipe {
            slots[OUT] = fds.len();
            fds.push(PollFd::new(out, PollFlags::IN));
        }
        if let Some(err) = &self.err_pipe {
            slots[ERR] = fds.len();
            fds.push(PollFd::new(err, PollFlags::IN));
        }
        if let Some(pidfd) = pidfd {
            slots[PID] = fds.len();
            fds.push(PollFd::new(pidfd, PollFlags::IN));
        }
        let timeout = Timespec::try_from(wait).unwrap_or(Timespec {
            tv_sec: i64::MAX,
            tv_nsec: 0,
        });
        match poll(&mut fds, Some(&timeout)) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        let ready: [bool; 4] =
            std::array::from_fn(|i| slots[i] != usize::MAX && !fds[slots[i]].revents().is_empty());
        drop(fds);
        if ready[IN] {
            self.write_input();
        }
        if ready[OUT] {
            read_pipe(&mut self.out_pipe, &mut self.stdout);
        }
        if ready[ERR] {
            read_pipe(&mut self.err_pipe, &mut self.stderr);
        }
        Ok(Polled {
            pidfd: ready[PID],
            pipes: ready[OUT] || ready[ERR],
        })
    }

    /// Writes what the stdin pipe takes now; closes it when done or when the oracle closed
    /// its end (an oracle need not read its input).
    fn write_input(&mut self) {
        let Some(stdin) = &mut self.stdin else { return };
        loop {
            if self.written == self.input.len() {
                self.stdin = None;
                return;
            }
            match stdin.write(&self.input[self.written..]) {
                Ok(0) => {
                    self.stdin = None;
                    return;
                }
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // EPIPE and the like: the oracle does not want (the rest of) its input.
                    self.stdin = None;
                    return;
                }
            }
        }
    }
}

/// Reads what a pipe holds now into `tail`; drops the pipe at EOF or on an error.
fn read_pipe<P: Read>(pipe: &mut Option<P>, tail: &mut TailBuffer) {
    let Some(p) = pipe else { return };
    let mut buf = [0u8; 64 * 1024];
    // A bounded number of reads per call, so a writer faster than us cannot keep the
    // caller from its deadline.
    for _ in 0..16 {
        match p.read(&mut buf) {
            Ok(0) => {
                *pipe = None;
                return;
            }
            Ok(n) => tail.push(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                *pipe = None;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_fields_follow_the_last_parenthesis() {
        let stat = "4242 (a) b (c)) S 17 4240 4240 0 -1 4194560 99 0 0 0";
        assert_eq!(
            ProcStat::parse(stat),
            Some(ProcStat {
                state: b'S',
                ppid: 17,
                pgrp: 4240,
                flags: 4194560
            })
        );
        assert!(ProcStat::parse(stat).is_some_and(|s| s.running()));
        assert!(ProcStat::parse("1 (z) Z 1 1 1 0 -1 64").is_some_and(|s| !s.running()));
        assert_eq!(ProcStat::parse("1 (x) R 1 1 1 0 -1"), None);
        assert_eq!(ProcStat::parse("no parenthesis"), None);
        let me = ProcStat::read(std::process::id() as i32);
        assert!(me.is_some_and(|s| s.running() && s.ppid > 0));
    }
}
