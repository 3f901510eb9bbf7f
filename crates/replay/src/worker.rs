//! The worker runner: one long-lived oracle process answering a line per candidate
//! (SPEC §4, worker mode).

use std::io::{self, BufWriter, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::Label;
use crate::escape::{MARK_VAR, PipeEnd, RunMark, spawn_run};
use crate::oracle::{Excerpt, Exit, Oracle, RunContext, RunOutcome, TailBuffer};
use crate::process::{
    ConfigError, DEFAULT_GRACE, DEFAULT_OUTPUT_CAP, SETTLE_LIMIT, nonempty, shell, terminate_group,
};

/// How long one answer line may be; the rest of a longer line is discarded.
const ANSWER_CAP: usize = 64 * 1024;

/// How often a wait for an answer looks whether the worker is still alive.
const LIVENESS_TICK: Duration = Duration::from_millis(50);

/// Runs an oracle command in worker mode (SPEC §4): `sh -c CMD` started once with
/// `FREEZEGATE_WORKER=1`, `PROP_SEED` and `PROPERTY_ID` (no `FREEZEGATE_REPLAY`), reading one
/// candidate per line on stdin and answering one line per candidate on stdout: `pass`,
/// `fail`, `fail <signature>` or `error <message>` (`harness_error`).
///
/// A worker that answers more than one line to a candidate is out of step: when the extra
/// lines arrive together with the answer, or before the next candidate is sent, the worker is
/// replaced (and the candidate, in the first case, labelled `harness_error`); lines written
/// later still cannot be told from the next answer, so a worker must keep its stdout for
/// answers.
///
/// Each candidate has its own deadline. A worker that dies before answering is labelled
/// `harness_error` for the candidate in flight, one still silent at the deadline `timeout`
/// (its process group is then killed: SIGTERM, grace, SIGKILL; when no worker of this oracle
/// has answered a candidate yet, the message asks whether it flushes its stdout after each answer, since
/// an answer left in a block buffer looks like silence), and one that answers
/// something outside the protocol `harness_error`; in each case the worker is discarded and
/// the next candidate starts a fresh one.
///
/// Parallel runs on one `WorkerOracle` use separate worker processes: idle workers wait in a
/// pool and a run takes one whose `PROP_SEED` and `PROPERTY_ID` match its context, or starts
/// one. Dropping the oracle closes the workers' stdin, gives them the grace period to exit
/// and then kills their groups.
///
/// A worker is one run for [`crate::ProcessOracle`]'s rule on processes that leave the
/// group: it carries a mark of its own in `FREEZEGATE_RUN_MARK`, and where this process is a
/// child subreaper, whatever left the worker's group and is still running when the worker is
/// stopped (replaced, or the oracle dropped) is killed and reaped then, with the same limits.
///
/// Replays for a verdict must use a fresh process per run ([`crate::ProcessOracle`]); a
/// worker is for shrinking and campaigns, where thousands of calls would each pay a start.
#[derive(Debug)]
pub struct WorkerOracle {
    command: String,
    dir: PathBuf,
    grace: Duration,
    stderr_cap: usize,
    idle: Mutex<Vec<Worker>>,
    starts: AtomicU64,
    /// Whether any worker of this oracle has answered a candidate within the protocol: the
    /// command does flush its answers.
    any_answered: std::sync::atomic::AtomicBool,
}

impl WorkerOracle {
    /// A worker runner of `command` (a shell string) started in `dir`.
    pub fn new(
        command: impl Into<String>,
        dir: impl Into<PathBuf>,
    ) -> Result<WorkerOracle, ConfigError> {
        Ok(WorkerOracle {
            command: nonempty(command.into())?,
            dir: dir.into(),
            grace: DEFAULT_GRACE,
            stderr_cap: DEFAULT_OUTPUT_CAP,
            idle: Mutex::new(Vec::new()),
            starts: AtomicU64::new(0),
            any_answered: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The same runner with another grace period between SIGTERM and SIGKILL; one too large
    /// for the clock (`Duration::MAX`) never ends: SIGKILL never follows.
    pub fn with_grace(mut self, grace: Duration) -> WorkerOracle {
        self.grace = grace;
        self
    }

    /// The command.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The working directory of the workers.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether a worker of this oracle has answered a candidate within the protocol yet: a
    /// command that never has, and lets candidates time out, may not flush its answers.
    pub fn has_answered(&self) -> bool {
        self.any_answered.load(Ordering::Relaxed)
    }

    /// How many worker processes this oracle has started so far (restarts included).
    pub fn starts(&self) -> u64 {
        self.starts.load(Ordering::Relaxed)
    }

    fn take_worker(&self, ctx: &RunContext) -> Option<Worker> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let i = idle
            .iter()
            .position(|w| w.seed == ctx.seed && w.property_id == ctx.property_id)?;
        Some(idle.swap_remove(i))
    }

    fn give_back(&self, worker: Worker) {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(worker);
    }

    fn start(&self, ctx: &RunContext) -> io::Result<Worker> {
        self.starts.fetch_add(1, Ordering::Relaxed);
        // Active from before the process exists until its leftovers are gone.
        let mark = RunMark::new();
        let mut cmd = shell(&self.command, &self.dir);
        cmd.env("FREEZEGATE_WORKER", "1")
            .env("PROP_SEED", ctx.seed.to_string())
            .env("PROPERTY_ID", &ctx.property_id)
            .env_remove("FREEZEGATE_REPLAY")
            .env_remove("FREEZEGATE_GENERATE")
            .env(MARK_VAR, mark.env_value());
        let mut child = spawn_run(&mut cmd, &mark)?;
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => {
                    let _ = terminate_group(&mut child, Duration::ZERO);
                    return Err(io::Error::other("the worker's pipes were not set up"));
                }
            };
        // The worker's ends of its pipes, by which an escapee that cleared its environment is
        // still known as the worker's.
        let pipes: Vec<PipeEnd> = [
            PipeEnd::opposite(stdin.as_fd(), false),
            PipeEnd::opposite(stdout.as_fd(), true),
            PipeEnd::opposite(stderr.as_fd(), true),
        ]
        .into_iter()
        .flatten()
        .collect();
        // Each pipe has its own thread: writes, so a worker that stops reading cannot block
        // the caller past its deadline; reads, so answers can be awaited with a timeout.
        let (lines, to_write) = mpsc::sync_channel::<Vec<u8>>(1);
        let (answer_tx, answers) = mpsc::channel::<Vec<Vec<u8>>>();
        let (done_tx, finished) = mpsc::channel::<()>();
        let stderr_tail = Arc::new(Mutex::new(TailBuffer::new(self.stderr_cap)));
        let tail = Arc::clone(&stderr_tail);
        let spawned = spawn_pipe_thread("freezegate-worker-stdin", &done_tx, move || {
            let mut stdin = BufWriter::new(stdin);
            for line in to_write {
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    break;
                }
            }
        })
        .and_then(|()| {
            spawn_pipe_thread("freezegate-worker-stdout", &done_tx, move || {
                read_lines(stdout, &answer_tx)
            })
        })
        .and_then(|()| {
            spawn_pipe_thread("freezegate-worker-stderr", &done_tx, move || {
                drain_into(stderr, &tail)
            })
        });
        if let Err(e) = spawned {
            let _ = terminate_group(&mut child, Duration::ZERO);
            let mut mark = mark;
            mark.sweep(&pipes, Instant::now() + SETTLE_LIMIT);
            return Err(e);
        }
        Ok(Worker {
            mark,
            pipes,
            seed: ctx.seed,
            property_id: ctx.property_id.clone(),
            child,
            lines: Some(lines),
            answers,
            stderr: stderr_tail,
            grace: self.grace,
            stopped: false,
            answered: false,
            finished,
        })
    }
}

impl Oracle for WorkerOracle {
    fn run(&self, candidate: &[u8], ctx: &RunContext) -> RunOutcome {
        let start = Instant::now();
        if candidate.contains(&b'\n') {
            return RunOutcome::not_run("the candidate holds a raw newline: not canonical bytes");
        }
        let idle = self.take_worker(ctx).and_then(|mut worker| {
            // A line nobody asked for means the worker is out of step with us: its next
            // answer could belong to the wrong candidate. A worker that exited while idle
            // would make this candidate look like its cause. Replace either.
            let stray_or_closed = !matches!(worker.answers.try_recv(), Err(TryRecvError::Empty));
            if stray_or_closed || !matches!(worker.child.try_wait(), Ok(None)) {
                worker.stop();
                None
            } else {
                Some(worker)
            }
        });
        let mut worker = match idle {
            Some(worker) => worker,
            None => match self.start(ctx) {
                Ok(worker) => worker,
                Err(e) => {
                    return RunOutcome::not_run(format!(
                        "cannot start the worker `sh -c` in {}: {e}",
                        self.dir.display()
                    ));
                }
            },
        };
        let mut line = Vec::with_capacity(candidate.len() + 1);
        line.extend_from_slice(candidate);
        line.push(b'\n');
        // A timeout past what an `Instant` can hold is no deadline.
        let answer = worker.ask(line, start.checked_add(ctx.timeout));
        let duration = start.elapsed();
        match answer {
            Asked::Answer(text) => {
                let (outcome, healthy) = parse_answer(&text, duration);
                if healthy {
                    worker.answered = true;
                    self.any_answered.store(true, Ordering::Relaxed);
                    self.give_back(worker);
                    outcome
                } else {
                    let stderr = worker.stop();
                    RunOutcome { stderr, ..outcome }
                }
            }
            Asked::Extra(n) => {
                let stderr = worker.stop();
                let outcome = RunOutcome::new(Label::HarnessError, duration, Exit::Answer)
                    .with_message(format!(
                        "the worker answered {n} lines to one candidate, outside the protocol"
                    ));
                RunOutcome { stderr, ..outcome }
            }
            Asked::Silent => {
                let answered = worker.answered || self.any_answered.load(Ordering::Relaxed);
                let stderr = worker.stop();
                let outcome = RunOutcome::new(Label::Timeout, duration, Exit::Deadline)
                    .with_message(silent_message(ctx.timeout, answered));
                RunOutcome { stderr, ..outcome }
            }
            Asked::Died => {
                let status = worker.stop_status();
                let stderr = worker.stderr_excerpt();
                let outcome = RunOutcome::new(Label::HarnessError, duration, Exit::WorkerDied)
                    .with_message(format!("the worker died before answering ({status})"));
                RunOutcome { stderr, ..outcome }
            }
        }
    }
}

/// The label of one answer line, and whether the worker may keep serving.
fn parse_answer(line: &[u8], duration: Duration) -> (RunOutcome, bool) {
    let text = String::from_utf8_lossy(line);
    // Trailing blanks (a `\r`, a space after `pass`) are not part of the answer, and a
    // signature of blanks is no signature, as in process mode.
    let text = text.trim_end();
    let (word, rest) = match text.split_once(' ') {
        Some((word, rest)) => (word, Some(rest.trim()).filter(|r| !r.is_empty())),
        None => (text, None),
    };
    match (word, rest) {
        ("pass", None) => (
            RunOutcome::new(Label::AssertPass, duration, Exit::Answer),
            true,
        ),
        ("fail", None) => (
            RunOutcome::new(Label::AssertFail, duration, Exit::Answer),
            true,
        ),
        ("fail", Some(sig)) => (
            RunOutcome::new(Label::AssertFail, duration, Exit::Answer).with_signature(sig),
            true,
        ),
        ("error", message) => (
            RunOutcome::cannot_test(duration, Exit::Answer)
                .with_message(message.unwrap_or("the worker reported an error")),
            true,
        ),
        _ => (
            RunOutcome::new(Label::HarnessError, duration, Exit::Answer).with_message(format!(
                "the worker answered outside the protocol: {:?}",
                truncate(text, 200)
            )),
            false,
        ),
    }
}

/// Why a worker's candidate is a `timeout`, in one sentence. A worker that never answered
/// may have answered into a buffer it does not flush (Python's stdout is block-buffered when
/// it is a pipe), be waiting for the end of its stdin, or still be starting: from here each
/// looks like a hang, so the message names them.
fn silent_message(timeout: Duration, answered: bool) -> String {
    let ms = timeout.as_millis();
    if answered {
        format!("the worker gave no answer within {ms} ms")
    } else {
        format!(
            "the worker gave no answer within {ms} ms and has answered no candidate yet: does it flush stdout after each answer, read stdin line by line rather than to its end, and start within the deadline?"
        )
    }
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// What asking a worker gave.
enum Asked {
    Answer(Vec<u8>),
    /// More than one line came back for one candidate.
    Extra(usize),
    Silent,
    Died,
}

impl Asked {
    fn from_batch(mut batch: Vec<Vec<u8>>) -> Asked {
        match batch.len() {
            1 => Asked::Answer(batch.pop().unwrap_or_default()),
            n => Asked::Extra(n),
        }
    }
}

/// One live worker process and its pipes' threads.
#[derive(Debug)]
struct Worker {
    seed: u64,
    property_id: String,
    child: Child,
    /// Lines to write to the worker's stdin; dropping it closes stdin.
    lines: Option<SyncSender<Vec<u8>>>,
    /// The complete lines of each read of the worker's stdout.
    answers: Receiver<Vec<Vec<u8>>>,
    stderr: Arc<Mutex<TailBuffer>>,
    grace: Duration,
    /// The worker's mark, for its processes that leave the group.
    mark: RunMark,
    /// The worker's ends of its pipes.
    pipes: Vec<PipeEnd>,
    /// Whether the process was ended and reaped already.
    stopped: bool,
    /// Whether the worker has answered a candidate within the protocol.
    answered: bool,
    /// One message from each pipe thread as it ends.
    finished: Receiver<()>,
}

impl Worker {
    /// Sends one candidate and waits for its answer until `deadline` (`None`: no deadline).
    fn ask(&mut self, line: Vec<u8>, deadline: Option<Instant>) -> Asked {
        let Some(lines) = &self.lines else {
            return Asked::Died;
        };
        if lines.send(line).is_err() {
            // The writer thread ended: the worker's stdin is closed.
            return Asked::Died;
        }
        loop {
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if left.is_zero() {
                return Asked::Silent;
            }
            match self.answers.recv_timeout(left.min(LIVENESS_TICK)) {
                Ok(batch) => return Asked::from_batch(batch),
                Err(RecvTimeoutError::Disconnected) => return Asked::Died,
                Err(RecvTimeoutError::Timeout) => {
                    // A dead worker whose output a leftover process holds open would
                    // otherwise look silent until the deadline.
                    if let Ok(Some(_)) = self.child.try_wait() {
                        return match self.answers.try_recv() {
                            Ok(batch) => Asked::from_batch(batch),
                            Err(_) => Asked::Died,
                        };
                    }
                }
            }
        }
    }

    fn stderr_excerpt(&self) -> Excerpt {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .excerpt()
    }

    /// Kills the worker's group and returns the end of its stderr.
    fn stop(mut self) -> Excerpt {
        let grace = self.grace;
        let _ = self.end(grace);
        self.stderr_excerpt()
    }

    /// Kills what is left of a dead worker's group; describes how it ended.
    fn stop_status(&mut self) -> String {
        match self.end(Duration::ZERO) {
            Ok(status) => status.to_string(),
            Err(e) => format!("status unknown: {e}"),
        }
    }

    /// Closes the worker's stdin, ends its group (SIGTERM, `grace`, SIGKILL), then kills
    /// and reaps the processes that left the group, where this process is a subreaper.
    fn end(&mut self, grace: Duration) -> io::Result<std::process::ExitStatus> {
        self.lines = None;
        self.stopped = true;
        let status = terminate_group(&mut self.child, grace);
        self.mark.sweep(&self.pipes, Instant::now() + SETTLE_LIMIT);
        status
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing stdin asks the worker to leave; the grace period lets it.
        if !self.stopped {
            let grace = self.grace;
            let _ = self.end(grace);
        }
        // The group is dead, so the pipe threads see EOF or EPIPE and end, closing the
        // pipes; waiting for them makes dropping a worker release its descriptors. A process
        // that left the group and holds a pipe open is not waited for past the limit.
        let limit = Instant::now() + THREAD_LIMIT;
        for _ in 0..PIPE_THREADS {
            let now = Instant::now();
            if now >= limit || self.finished.recv_timeout(limit - now).is_err() {
                break;
            }
        }
    }
}

/// The number of threads a worker's pipes take.
const PIPE_THREADS: usize = 3;

/// How long dropping a worker waits for its pipe threads after its group was killed.
const THREAD_LIMIT: Duration = Duration::from_secs(1);

/// Starts a named thread that reports on `done` when it ends.
fn spawn_pipe_thread(
    name: &str,
    done: &mpsc::Sender<()>,
    work: impl FnOnce() + Send + 'static,
) -> io::Result<()> {
    let done = done.clone();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            work();
            let _ = done.send(());
        })
        .map(drop)
}

/// Sends the `\n`-terminated lines of `pipe` (without the `\n`, at most [`ANSWER_CAP`]
/// bytes of each) until EOF, the lines completed by one read together, so that two answers
/// written at once to one candidate are seen as such; a final unterminated piece is dropped.
fn read_lines(mut pipe: impl Read, answers: &mpsc::Sender<Vec<Vec<u8>>>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line = Vec::new();
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let mut rest = &buf[..n];
        let mut batch = Vec::new();
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            let room = ANSWER_CAP.saturating_sub(line.len());
            line.extend_from_slice(&rest[..i.min(room)]);
            batch.push(std::mem::take(&mut line));
            rest = &rest[i + 1..];
        }
        if !batch.is_empty() && answers.send(batch).is_err() {
            return;
        }
        let room = ANSWER_CAP.saturating_sub(line.len());
        line.extend_from_slice(&rest[..rest.len().min(room)]);
    }
}

/// Reads `pipe` to its end, keeping its tail.
fn drain_into(mut pipe: impl Read, tail: &Mutex<TailBuffer>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => tail
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_map_to_labels() {
        let d = Duration::ZERO;
        let (o, ok) = parse_answer(b"pass", d);
        assert_eq!((o.label, ok), (Label::AssertPass, true));
        let (o, ok) = parse_answer(b"fail", d);
        assert_eq!((o.label, o.signature, ok), (Label::AssertFail, None, true));
        let (o, _) = parse_answer(b"fail off by one\r", d);
        assert_eq!(o.signature.as_deref(), Some("off by one"));
        let (o, ok) = parse_answer(b"pass  \r", d);
        assert_eq!((o.label, ok), (Label::AssertPass, true));
        let (o, ok) = parse_answer(b"fail   ", d);
        assert_eq!((o.label, o.signature, ok), (Label::AssertFail, None, true));
        let (o, ok) = parse_answer(b"error no such user", d);
        assert_eq!(o.label, Label::HarnessError);
        assert_eq!((o.message.as_deref(), ok), (Some("no such user"), true));
        assert!(o.declined, "`error` declines the candidate on purpose");
        let (o, ok) = parse_answer(b"passed", d);
        assert_eq!(
            (o.label, ok, o.declined),
            (Label::HarnessError, false, false)
        );
        let (_, ok) = parse_answer(b"pass now", d);
        assert!(!ok);
    }
}
