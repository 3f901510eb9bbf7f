//! The one runner interface every oracle kind implements ([`Oracle`]), and what one run
//! returns ([`RunOutcome`]).

use std::fmt;
use std::time::Duration;

use crate::Label;

/// The deadline of a run when none is configured: 10 s (SPEC §4).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything about a run except the candidate: the environment an oracle sees and its
/// deadline. Built with [`RunContext::new`] and the `with_` methods (the struct may gain
/// fields).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunContext {
    /// The seed (`PROP_SEED`).
    pub seed: u64,
    /// The property's id (`PROPERTY_ID`); empty where a command was given no property.
    pub property_id: String,
    /// The 0-based run index of a replay (`FREEZEGATE_REPLAY`); 0 for calls that are not
    /// replays, such as a shrinker's. Workers never see it (SPEC §4).
    pub replay: u32,
    /// How long the run may take before it is killed and labelled `timeout`, counted from
    /// its start; a duration too large for the clock (`Duration::MAX`) means no deadline.
    pub timeout: Duration,
}

impl RunContext {
    /// A context with `seed`, no property id, replay index 0 and the default deadline.
    pub fn new(seed: u64) -> RunContext {
        RunContext {
            seed,
            property_id: String::new(),
            replay: 0,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same context with a property id.
    pub fn with_property(mut self, property_id: impl Into<String>) -> RunContext {
        self.property_id = property_id.into();
        self
    }

    /// The same context with another replay index.
    pub fn with_replay(mut self, replay: u32) -> RunContext {
        self.replay = replay;
        self
    }

    /// The same context with another deadline ([`RunContext::timeout`]; `Duration::MAX`:
    /// none).
    pub fn with_timeout(mut self, timeout: Duration) -> RunContext {
        self.timeout = timeout;
        self
    }
}

/// How a run ended, beyond its label.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// A process exited with this code.
    Code(i32),
    /// A process was killed by this signal (and not by us at its deadline).
    Signal(i32),
    /// Still running at the deadline: killed (process group: SIGTERM, grace, SIGKILL).
    Deadline,
    /// A worker answered this line (`pass`, `fail ...`, `error ...`).
    Answer,
    /// A worker died or closed its output before answering.
    WorkerDied,
    /// An in-process closure returned.
    Returned,
    /// An in-process closure panicked.
    Panicked,
    /// The oracle could not be started or fed (spawn failed, candidate not usable).
    NotRun,
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit {code}"),
            Exit::Signal(sig) => write!(f, "signal {sig}"),
            Exit::Deadline => f.write_str("killed at deadline"),
            Exit::Answer => f.write_str("answered"),
            Exit::WorkerDied => f.write_str("worker died"),
            Exit::Returned => f.write_str("returned"),
            Exit::Panicked => f.write_str("panicked"),
            Exit::NotRun => f.write_str("not run"),
        }
    }
}

/// The tail of one captured output stream: at most the runner's cap of its last bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Excerpt {
    /// The kept bytes (the stream's end), lossily decoded as UTF-8.
    pub text: String,
    /// How many bytes the stream carried in all, kept or not.
    pub total_bytes: u64,
}

impl Excerpt {
    /// Whether bytes were dropped because the stream was longer than the cap.
    pub fn truncated(&self) -> bool {
        self.total_bytes > self.text.len() as u64
    }

    /// The line of the text that says what went wrong ([`telling_line`]).
    pub fn telling_line(&self) -> Option<&str> {
        telling_line(&self.text)
    }
}

/// The line of an oracle's stderr that says what went wrong, trimmed: the last non-blank
/// line that is not what a runtime prints after the error itself — a stack frame, indented
/// `at …` (Node, the JVM), `... 3 more` (the JVM) or `12: symbol` (a Rust backtrace, with
/// its `stack backtrace:` heading), the properties Node prints after an error's frames
/// (`    at … {`, indented `code: 'ERR_ASSERTION',` lines, `}`), Node's version banner
/// (`Node.js v20.20.2`), or Rust's `note: … RUST_BACKTRACE …` after a panic — else the last
/// non-blank line. `None` when the text holds only blanks. A Python traceback ends with its
/// exception, which is that line.
///
/// ```
/// use freezegate_replay::telling_line;
/// let node = "/t/split.js:4\n  throw new TypeError('no parts');\n  ^\n\nTypeError: no parts\n    at Object.<anonymous> (/t/split.js:4:9)\n    at node:internal/main:1:1\n\nNode.js v20.20.2\n";
/// assert_eq!(telling_line(node), Some("TypeError: no parts"));
/// let java = "Exception in thread \"main\" java.lang.ArithmeticException: / by zero\n\tat Naive.main(Naive.java:10)\n";
/// assert_eq!(telling_line(java), Some("Exception in thread \"main\" java.lang.ArithmeticException: / by zero"));
/// assert_eq!(telling_line("ValueError: bad\n\n"), Some("ValueError: bad"));
/// assert_eq!(telling_line(" \n"), None);
/// ```
pub fn telling_line(text: &str) -> Option<&str> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = *lines.last()?;
    let mut end = lines.len();
    while end > 0 {
        let line = lines[end - 1];
        if is_trailer(line) {
            end -= 1;
        } else if let Some(opener) = node_properties(&lines[..end]) {
            // The frame that opens the block is a trailer too; an error line that opens it
            // (an error with no frames) is the telling line.
            if !is_trailer(lines[opener].trim_end().trim_end_matches('{')) {
                return Some(lines[opener].trim());
            }
            end = opener;
        } else {
            return Some(line.trim());
        }
    }
    Some(last.trim())
}

/// Whether `line` is one a runtime prints after the error: an indented stack frame (`at …`,
/// `... N more`, a Rust backtrace's `12: symbol`), a Rust backtrace's heading or the note
/// after a panic, or Node's version banner.
fn is_trailer(line: &str) -> bool {
    let text = line.trim();
    let indented = line.starts_with([' ', '\t']);
    let rust_frame = text
        .split_once(": ")
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let frame = text.starts_with("at ")
        || (text.starts_with("... ") && text.ends_with(" more"))
        || text == "..."
        || rust_frame;
    let banner = text.strip_prefix("Node.js v").is_some_and(|version| {
        !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.')
    });
    let rust_note = text == "stack backtrace:"
        || (text.starts_with("note: ") && text.contains("`RUST_BACKTRACE="));
    (indented && frame) || banner || (!indented && rust_note)
}

/// Where the block of properties that Node prints after an uncaught error's frames begins,
/// when `lines` ends with one: a `}` line at the start of a line, closing a `{` that ends an
/// earlier line (`    at node:internal/main:1:1 {`), with only indented lines between. The
/// index of the line that opens the block.
fn node_properties(lines: &[&str]) -> Option<usize> {
    let (close, body) = lines.split_last()?;
    if *close != "}" {
        return None;
    }
    let mut depth = 0usize;
    for (i, line) in body.iter().enumerate().rev() {
        let text = line.trim_end();
        if !line.starts_with([' ', '\t']) {
            // The opener is the first line at depth 0 that ends with ` {` after some text.
            return (depth == 0 && text.ends_with(" {")).then_some(i);
        }
        if text.trim_start().starts_with(['}', ']']) {
            depth += 1;
        }
        if text.ends_with(['{', '[']) {
            if depth == 0 {
                // An indented line opening the block: a frame, `    at … {`.
                return text.ends_with(" {").then_some(i);
            }
            depth -= 1;
        }
    }
    None
}

/// What one run of an oracle on one candidate gave.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The label (SPEC §4).
    pub label: Label,
    /// The failure signature: the text of a last stdout line `failure: <text>` on exit 1,
    /// a worker's `fail <text>`, or an in-process failure's or panic's message.
    pub signature: Option<String>,
    /// Wall time of the run.
    pub duration: Duration,
    /// How the run ended.
    pub exit: Exit,
    /// Why a run is a `harness_error` or `timeout`, in one line, where there is more to say
    /// than [`RunOutcome::exit`] (a spawn error, a worker's `error <message>`).
    pub message: Option<String>,
    /// The end of standard output (process runs).
    pub stdout: Excerpt,
    /// The end of standard error (process runs and workers).
    pub stderr: Excerpt,
    /// Whether the oracle declined the input on purpose, "cannot test this input" (SPEC §4):
    /// a process's exit 125, a worker's `error <message>` answer, an in-process
    /// [`crate::Failure::CannotTest`]. Such a run is a `harness_error` like any other in a
    /// verdict, but unlike a crash, a death, a deadline or an answer outside the protocol it
    /// says the oracle works: a shrinker may take it for "outside the domain". A worker that
    /// exits 125 without answering has died, and is not declining.
    pub declined: bool,
}

impl RunOutcome {
    /// An outcome with a label, a duration and how it ended; no signature, message or
    /// output.
    pub fn new(label: Label, duration: Duration, exit: Exit) -> RunOutcome {
        RunOutcome {
            label,
            signature: None,
            duration,
            exit,
            message: None,
            stdout: Excerpt::default(),
            stderr: Excerpt::default(),
            declined: false,
        }
    }

    /// A `harness_error` by which the oracle declined the input ("cannot test this input"):
    /// [`RunOutcome::declined`] is set.
    pub fn cannot_test(duration: Duration, exit: Exit) -> RunOutcome {
        RunOutcome {
            declined: true,
            ..RunOutcome::new(Label::HarnessError, duration, exit)
        }
    }

    /// A `harness_error` that never ran, with why.
    pub fn not_run(message: impl Into<String>) -> RunOutcome {
        RunOutcome::new(Label::HarnessError, Duration::ZERO, Exit::NotRun).with_message(message)
    }

    /// The same outcome with a failure signature.
    pub fn with_signature(mut self, signature: impl Into<String>) -> RunOutcome {
        self.signature = Some(signature.into());
        self
    }

    /// The same outcome with a message.
    pub fn with_message(mut self, message: impl Into<String>) -> RunOutcome {
        self.message = Some(message.into());
        self
    }

    /// Whether this run failed the way a shrinker keeping signatures wants (SPEC §4): an
    /// `assert_fail`, and, when `signature` is given, with exactly that signature (so a
    /// shrink cannot slip to another bug).
    pub fn fails_like(&self, signature: Option<&str>) -> bool {
        self.label == Label::AssertFail
            && signature.is_none_or(|want| self.signature.as_deref() == Some(want))
    }

    /// The outcome in words, for a sentence that compares two runs: `assert_pass`,
    /// `assert_fail with the signature "boom"`, `assert_fail with no signature`, or a
    /// `timeout` or `harness_error` with its message (else how it ended) in parentheses.
    pub fn describe(&self) -> String {
        match (self.label, &self.signature) {
            (Label::AssertFail, Some(sig)) => format!("assert_fail with the signature {sig:?}"),
            (Label::AssertFail, None) => "assert_fail with no signature".to_owned(),
            (Label::AssertPass, _) => Label::AssertPass.to_string(),
            (label, _) => format!(
                "{label} ({})",
                self.message
                    .clone()
                    .unwrap_or_else(|| self.exit.to_string())
            ),
        }
    }
}

/// The likely causes, in words, when a worker and a fresh process of one command label a
/// value `worker` and `fresh` and do not fail it the same way (SPEC §4: a command that
/// serves both modes gives a value the same label and signature in both).
pub fn mode_difference_causes(worker: Label, fresh: Label) -> &'static str {
    match (worker, fresh) {
        (Label::AssertFail, Label::AssertFail) => {
            "the two modes name the failure differently, or a flaky oracle"
        }
        (Label::AssertFail, _) => {
            "a worker out of step, a flaky oracle, or a command that does not also run in process mode"
        }
        _ => "a flaky oracle, or a command that does not also run in worker mode",
    }
}

/// Runs a property on one candidate: the interface the replayer, the shrinker and the gate
/// take, whatever runs the property (a fresh process, a long-lived worker, a closure).
///
/// `candidate` is the candidate's canonical bytes (never a raw newline; no trailing `\n`:
/// the runner adds what its protocol needs). `run` never fails: whatever goes wrong is a
/// label (`harness_error`, `timeout`) with a message.
///
/// Oracles are `Send + Sync` and `run` takes `&self`, so one oracle serves parallel runs
/// from many threads; a runner with per-run state (a worker process) keeps a pool inside.
///
/// Closures `Fn(&[u8], &RunContext) -> RunOutcome` are oracles too, which suits tests of
/// code that takes an oracle. Code that takes an oracle should take `&O` with
/// `O: Oracle + ?Sized`, so that `&dyn Oracle` works as well.
pub trait Oracle: Send + Sync {
    /// Runs the oracle once on `candidate`.
    fn run(&self, candidate: &[u8], ctx: &RunContext) -> RunOutcome;
}

impl<F> Oracle for F
where
    F: Fn(&[u8], &RunContext) -> RunOutcome + Send + Sync,
{
    fn run(&self, candidate: &[u8], ctx: &RunContext) -> RunOutcome {
        self(candidate, ctx)
    }
}

/// Keeps the last `cap` bytes written to it and counts them all.
#[derive(Debug)]
#[cfg(target_os = "linux")]
pub(crate) struct TailBuffer {
    cap: usize,
    buf: Vec<u8>,
    total: u64,
    /// Keeps the stream's first `cap` bytes instead of its last.
    head: bool,
}

#[cfg(target_os = "linux")]
impl TailBuffer {
    pub(crate) fn new(cap: usize) -> TailBuffer {
        TailBuffer {
            cap,
            buf: Vec::new(),
            total: 0,
            head: false,
        }
    }

    /// A buffer that keeps the first `cap` bytes of the stream and counts the rest.
    pub(crate) fn head(cap: usize) -> TailBuffer {
        TailBuffer {
            head: true,
            ..TailBuffer::new(cap)
        }
    }

    /// How many bytes the stream carried in all.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Whether the stream was longer than the cap.
    pub(crate) fn overflowed(&self) -> bool {
        self.total() > self.cap as u64
    }

    /// Whether this buffer keeps the stream's head and the stream outgrew it.
    pub(crate) fn is_full_head(&self) -> bool {
        self.head && self.overflowed()
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.cap == 0 {
            return;
        }
        if self.head {
            let room = self.cap.saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&bytes[..room.min(bytes.len())]);
            return;
        }
        if bytes.len() >= self.cap {
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[bytes.len() - self.cap..]);
            return;
        }
        self.buf.extend_from_slice(bytes);
        // Compact once the buffer holds twice the cap: amortised O(1) per byte.
        if self.buf.len() >= 2 * self.cap {
            let cut = self.buf.len() - self.cap;
            self.buf.drain(..cut);
        }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        let start = self.buf.len().saturating_sub(self.cap);
        &self.buf[start..]
    }

    /// The kept bytes, taken out.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        let start = self.buf.len().saturating_sub(self.cap);
        self.buf.drain(..start);
        std::mem::take(&mut self.buf)
    }

    pub(crate) fn excerpt(&self) -> Excerpt {
        Excerpt {
            text: String::from_utf8_lossy(self.bytes()).into_owned(),
            total_bytes: self.total,
        }
    }
}

/// The text of a last stdout line `failure: <text>` (SPEC §4), trimmed; lines end at `\n`.
/// Trailing blank lines (a stray `print()` after the signature) and trailing blanks are not
/// lines of output; a signature of blanks is no signature, as in worker mode.
#[cfg(target_os = "linux")]
pub(crate) fn failure_signature(stdout: &[u8]) -> Option<String> {
    let trimmed = stdout.trim_ascii_end();
    let last = match trimmed.iter().rposition(|&b| b == b'\n') {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    };
    let text = last.strip_prefix(b"failure:")?;
    let text = String::from_utf8_lossy(text).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The telling line skips only indented frames and Node's banner: an unindented `at …`
    /// line, a banner-like line with more after the version, and a frame-only stderr keep
    /// their last line.
    #[test]
    fn the_telling_line_skips_frames_and_banners_only() {
        let java = "Exception in thread \"main\" java.lang.IllegalStateException: outer\n\tat A.f(A.java:3)\nCaused by: java.lang.ArithmeticException: / by zero\n\tat A.g(A.java:9)\n\t... 2 more\n";
        assert_eq!(
            telling_line(java),
            Some("Caused by: java.lang.ArithmeticException: / by zero")
        );
        assert_eq!(telling_line("error\nat index 3\n"), Some("at index 3"));
        assert_eq!(
            telling_line("error\nNode.js v20 is too old\n"),
            Some("Node.js v20 is too old")
        );
        assert_eq!(telling_line("Node.js v\n"), Some("Node.js v"));
        assert_eq!(
            telling_line("    at f (x.js:1:1)\n    at g (x.js:2:1)\n"),
            Some("at g (x.js:2:1)")
        );
        assert_eq!(telling_line("Node.js v22.1.0\n"), Some("Node.js v22.1.0"));
    }

    /// Node prints an error's own properties after its frames (`node:assert`'s
    /// `AssertionError`, a system error's `code`), and Rust a note after a panic and a
    /// backtrace with `RUST_BACKTRACE=1`: the telling line is the error's, not the `}` or the
    /// note that close them. A `}` that closes no such block (a JSON document printed to
    /// stderr) is still the last line.
    #[test]
    fn the_telling_line_skips_nodes_error_properties_and_rusts_panic_note() {
        let assert = "node:assert:90\n  throw new AssertionError(obj);\n  ^\n\nAssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n1 !== 2\n\n    at Object.<anonymous> (/t/as.js:2:8)\n    at node:internal/main/run_main_module:28:49 {\n  generatedMessage: true,\n  code: 'ERR_ASSERTION',\n  actual: 1,\n  expected: 2,\n  operator: 'strictEqual'\n}\n\nNode.js v20.20.2\n";
        assert_eq!(telling_line(assert), Some("1 !== 2"));
        let enoent = "node:fs:573\n  return binding.open(\n                 ^\n\nError: ENOENT: no such file or directory, open '/nonexistent'\n    at Object.openSync (node:fs:573:18)\n    at node:internal/main/run_main_module:28:49 {\n  errno: -2,\n  code: 'ENOENT',\n  details: {\n    nested: [\n      1\n    ]\n  },\n  path: '/nonexistent'\n}\n\nNode.js v20.20.2\n";
        assert_eq!(
            telling_line(enoent),
            Some("Error: ENOENT: no such file or directory, open '/nonexistent'")
        );
        // An error printed with no frames opens the block itself.
        assert_eq!(
            telling_line("Error: boom {\n  code: 'E_X'\n}\n"),
            Some("Error: boom {")
        );
        assert_eq!(telling_line("{\n  \"a\": 1\n}\n"), Some("}"));
        let panic = "\nthread 'main' panicked at src/main.rs:1:12:\nboom at 3\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(telling_line(panic), Some("boom at 3"));
        let backtrace = "thread 'main' panicked at src/main.rs:1:12:\nboom at 3\nstack backtrace:\n   0: __rustc::rust_begin_unwind\n             at /rustc/5980/library/std/src/panicking.rs:689:5\n   1: p::main\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n";
        assert_eq!(telling_line(backtrace), Some("boom at 3"));
    }

    proptest! {
        /// The telling line is one of the text's non-blank lines, trimmed, and there is one
        /// exactly when the text has a non-blank line.
        #[test]
        fn the_telling_line_is_a_non_blank_line_of_the_text(
            lines in proptest::collection::vec(
                proptest::sample::select(vec![
                    "", " ", "boom", "    at f (x.js:1:1)", "\tat A.f(A.java:3)", "\t... 2 more",
                    "Node.js v20.20.2", "at top", "  Error: x  ", "}", "{", "  code: 'E',",
                    "    at g (x.js:2:1) {", "Error: y {", "   3: p::main", "stack backtrace:",
                    "note: run with `RUST_BACKTRACE=1`",
                ]),
                0..8,
            )
        ) {
            let text = lines.join("\n");
            let non_blank: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            match telling_line(&text) {
                None => prop_assert!(non_blank.is_empty()),
                Some(line) => prop_assert!(non_blank.contains(&line), "{line:?} of {text:?}"),
            }
        }
    }

    #[test]
    fn signature_is_the_last_line_only() {
        assert_eq!(
            failure_signature(b"x\nfailure: off by one\n").as_deref(),
            Some("off by one")
        );
        assert_eq!(failure_signature(b"failure: a\r\n").as_deref(), Some("a"));
        assert_eq!(failure_signature(b"failure: a\nmore\n"), None);
        assert_eq!(
            failure_signature(b"failure: a \n\n  \r\n").as_deref(),
            Some("a")
        );
        assert_eq!(failure_signature(b"failure:   \n"), None);
        assert_eq!(failure_signature(b""), None);
        assert_eq!(failure_signature(b"failures: a"), None);
    }

    #[test]
    fn fails_like_matches_label_and_signature() {
        let d = Duration::ZERO;
        let fail = RunOutcome::new(Label::AssertFail, d, Exit::Code(1)).with_signature("a");
        assert!(fail.fails_like(None));
        assert!(fail.fails_like(Some("a")));
        assert!(!fail.fails_like(Some("b")));
        let bare = RunOutcome::new(Label::AssertFail, d, Exit::Code(1));
        assert!(bare.fails_like(None));
        assert!(!bare.fails_like(Some("a")));
        for label in [Label::AssertPass, Label::Timeout, Label::HarnessError] {
            assert!(!RunOutcome::new(label, d, Exit::Code(0)).fails_like(None));
        }
    }

    #[test]
    fn describe_names_label_signature_and_why() {
        let d = Duration::ZERO;
        let fail = RunOutcome::new(Label::AssertFail, d, Exit::Code(1));
        assert_eq!(fail.describe(), "assert_fail with no signature");
        assert_eq!(
            fail.with_signature("boom").describe(),
            "assert_fail with the signature \"boom\""
        );
        assert_eq!(
            RunOutcome::new(Label::AssertPass, d, Exit::Code(0)).describe(),
            "assert_pass"
        );
        let died = RunOutcome::new(Label::HarnessError, d, Exit::Code(125));
        assert_eq!(
            died.describe(),
            format!("harness_error ({})", Exit::Code(125))
        );
        assert_eq!(
            died.with_message("the worker died").describe(),
            "harness_error (the worker died)"
        );
    }

    #[test]
    fn mode_difference_causes_follow_who_failed() {
        let (fail, pass) = (Label::AssertFail, Label::AssertPass);
        assert!(mode_difference_causes(fail, fail).contains("name the failure differently"));
        assert!(mode_difference_causes(fail, pass).contains("a worker out of step"));
        assert!(mode_difference_causes(pass, fail).contains("does not also run in worker mode"));
    }

    proptest! {
        #[test]
        fn tail_buffer_keeps_the_last_cap_bytes(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..30),
            cap in 0usize..64,
        ) {
            let mut tail = TailBuffer::new(cap);
            let mut all = Vec::new();
            for c in &chunks {
                tail.push(c);
                all.extend_from_slice(c);
            }
            let keep = all.len().min(cap);
            prop_assert_eq!(tail.bytes(), &all[all.len() - keep..]);
            prop_assert_eq!(tail.total, all.len() as u64);
        }
    }
}
