//! The runners against real processes: shell and Python oracles written into temp dirs.

use std::path::Path;
use std::time::Duration;

use freezegate_replay::{
    Exit, Failure, InProcessOracle, Label, Oracle, ProcessOracle, ReplayOptions, ReplayPlan,
    RunContext, Verdict, WorkerOracle, group_is_running, replay,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANDIDATE: &[u8] = br#"{"role":"","user_id":0}"#;

/// A short deadline and grace keep the suite fast; nothing here asserts a duration.
fn ctx() -> RunContext {
    RunContext::new(20260917).with_timeout(Duration::from_secs(10))
}

/// For runs meant to hit their deadline: long enough for `sh` to start and write its pgid
/// file on a loaded machine.
fn short() -> RunContext {
    ctx().with_timeout(Duration::from_millis(700))
}

fn oracle(dir: &Path, cmd: &str) -> Result<ProcessOracle, Box<dyn std::error::Error>> {
    Ok(ProcessOracle::new(cmd, dir)?.with_grace(Duration::from_millis(100)))
}

fn read_pgid(path: &Path) -> Result<u32, Box<dyn std::error::Error>> {
    Ok(std::fs::read_to_string(path)?.trim().parse()?)
}

#[test]
fn exit_codes_map_to_labels() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cases: [(&str, Label, Exit); 5] = [
        ("exit 0", Label::AssertPass, Exit::Code(0)),
        ("exit 1", Label::AssertFail, Exit::Code(1)),
        ("exit 125", Label::HarnessError, Exit::Code(125)),
        ("exit 2", Label::HarnessError, Exit::Code(2)),
        ("kill -KILL $$", Label::HarnessError, Exit::Signal(9)),
    ];
    for (cmd, label, exit) in cases {
        let out = oracle(dir.path(), cmd)?.run(CANDIDATE, &ctx());
        assert_eq!((cmd, out.label, out.exit), (cmd, label, exit));
        // Exit 125 alone is the oracle declining the input ("cannot test").
        assert_eq!((cmd, out.declined), (cmd, cmd == "exit 125"));
    }
    Ok(())
}

#[test]
fn failure_signature_is_the_last_stdout_line_on_exit_1() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = oracle(
        dir.path(),
        "cat >/dev/null; echo checking; echo 'failure: total off by one'; exit 1",
    )?
    .run(CANDIDATE, &ctx());
    assert_eq!(out.label, Label::AssertFail);
    assert_eq!(out.signature.as_deref(), Some("total off by one"));
    assert!(out.stdout.text.starts_with("checking\n"));
    // Not on exit 0, and not when another line follows.
    let out = oracle(dir.path(), "echo 'failure: x'; exit 0")?.run(CANDIDATE, &ctx());
    assert_eq!((out.label, out.signature), (Label::AssertPass, None));
    let out = oracle(dir.path(), "echo 'failure: x'; echo more; exit 1")?.run(CANDIDATE, &ctx());
    assert_eq!((out.label, out.signature), (Label::AssertFail, None));
    Ok(())
}

#[test]
fn the_oracle_sees_its_input_environment_and_directory() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("marker"), "")?;
    let script = r#"
        IFS= read -r line
        [ "$line" = '{"role":"","user_id":0}' ] || { echo "failure: stdin $line"; exit 1; }
        [ "$PROP_SEED" = 42 ] || { echo "failure: seed $PROP_SEED"; exit 1; }
        [ "$PROPERTY_ID" = tax.total ] || { echo "failure: property"; exit 1; }
        [ "$FREEZEGATE_REPLAY" = 3 ] || { echo "failure: replay"; exit 1; }
        [ -z "${FREEZEGATE_WORKER+set}" ] || { echo "failure: worker"; exit 1; }
        [ -f marker ] || { echo "failure: cwd"; exit 1; }
        exit 0
    "#;
    let ctx = RunContext::new(42)
        .with_property("tax.total")
        .with_replay(3);
    let out = oracle(dir.path(), script)?.run(CANDIDATE, &ctx);
    assert_eq!((out.label, out.signature), (Label::AssertPass, None));
    Ok(())
}

#[test]
fn a_run_past_its_deadline_is_a_timeout() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = oracle(dir.path(), "echo $$ > pgid; exec sleep 30")?.run(CANDIDATE, &short());
    assert_eq!((out.label, out.exit), (Label::Timeout, Exit::Deadline));
    assert!(!group_is_running(read_pgid(&dir.path().join("pgid"))?));
    Ok(())
}

#[test]
fn a_grandchild_that_ignores_sigterm_does_not_survive_the_deadline() -> TestResult {
    let dir = tempfile::tempdir()?;
    let script = r#"echo $$ > pgid; sh -c 'trap "" TERM; sleep 30; sleep 30' & trap "" TERM; sleep 30; sleep 30"#;
    let out = oracle(dir.path(), script)?.run(CANDIDATE, &short());
    assert_eq!(out.label, Label::Timeout);
    assert!(!group_is_running(read_pgid(&dir.path().join("pgid"))?));
    Ok(())
}

#[test]
fn leftovers_of_an_oracle_that_exited_are_killed() -> TestResult {
    let dir = tempfile::tempdir()?;
    // The background child keeps stdout open: the run must still end at once.
    let script =
        r#"echo $$ > pgid; (trap "" TERM; sleep 30) & echo 'failure: left one behind'; exit 1"#;
    let out = oracle(dir.path(), script)?.run(CANDIDATE, &ctx());
    assert_eq!(out.label, Label::AssertFail);
    assert_eq!(out.signature.as_deref(), Some("left one behind"));
    assert!(!group_is_running(read_pgid(&dir.path().join("pgid"))?));
    Ok(())
}

#[test]
fn an_escapee_holding_the_output_does_not_hold_up_the_run() -> TestResult {
    // This test binary is no child subreaper: a process that left the group is beyond the
    // runner's reach, but the run does not wait for the output it keeps open.
    let dir = tempfile::tempdir()?;
    let marker = format!("3141.{:07}501", std::process::id());
    let script = format!(
        r#"setsid sh -c "echo \$\$ > escapee; exec sleep {marker}" &
while [ ! -s escapee ]; do sleep 0.01; done; exit 0"#
    );
    let out = oracle(dir.path(), &script)?.run(CANDIDATE, &ctx());
    // The escapee is this test's to end.
    let pid = read_pgid(&dir.path().join("escapee"))?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    if cmdline
        .split(|&b| b == 0)
        .any(|arg| arg == marker.as_bytes())
    {
        std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()?;
    }
    assert_eq!(out.label, Label::AssertPass);
    assert_eq!(
        out.message.as_deref(),
        Some("the oracle's output stayed open after it exited")
    );
    // A run that waited for the pipe lasted the runner's settle limit, 2 s.
    assert!(out.duration < Duration::from_secs(2), "{out:?}");
    Ok(())
}

#[test]
fn fifty_megabytes_of_output_are_drained_not_kept() -> TestResult {
    let dir = tempfile::tempdir()?;
    let script = "head -c 50000000 /dev/zero & head -c 5000000 /dev/zero >&2; wait; exit 0";
    let out = oracle(dir.path(), script)?
        .with_output_cap(1000)
        .run(CANDIDATE, &ctx());
    assert_eq!(out.label, Label::AssertPass);
    assert_eq!(out.stdout.total_bytes, 50_000_000);
    assert_eq!(out.stderr.total_bytes, 5_000_000);
    assert_eq!(out.stdout.text.len(), 1000);
    assert!(out.stdout.truncated());
    Ok(())
}

#[test]
fn an_oracle_that_reads_no_stdin_does_not_hang_the_run() -> TestResult {
    let dir = tempfile::tempdir()?;
    // Far more than a pipe holds.
    let big = format!("\"{}\"", "a".repeat(4 << 20));
    let out = oracle(dir.path(), "sleep 0.05; exit 1")?.run(big.as_bytes(), &ctx());
    assert_eq!(out.label, Label::AssertFail);
    let out = oracle(dir.path(), "exit 0")?.run(big.as_bytes(), &ctx());
    assert_eq!(out.label, Label::AssertPass);
    // One that reads it all sees all of it.
    let count = format!("[ $(wc -c) -eq {} ]", big.len() + 1);
    let out = oracle(dir.path(), &count)?.run(big.as_bytes(), &ctx());
    assert_eq!(out.label, Label::AssertPass);
    Ok(())
}

#[test]
fn bad_commands_and_directories_are_harness_errors() -> TestResult {
    let dir = tempfile::tempdir()?;
    assert!(ProcessOracle::new("  ", dir.path()).is_err());
    let out = oracle(&dir.path().join("missing"), "exit 0")?.run(CANDIDATE, &ctx());
    assert_eq!((out.label, out.exit), (Label::HarnessError, Exit::NotRun));
    assert!(out.message.is_some());
    let out = oracle(dir.path(), "no-such-command-here")?.run(CANDIDATE, &ctx());
    assert_eq!(
        (out.label, out.exit),
        (Label::HarnessError, Exit::Code(127))
    );
    let out = oracle(dir.path(), "exit 0")?.run(b"[1,\n2]", &ctx());
    assert_eq!(out.label, Label::HarnessError);
    Ok(())
}

#[test]
fn replays_of_a_flicker_in_parallel_keep_run_index_order() -> TestResult {
    let dir = tempfile::tempdir()?;
    // Odd runs fail, and earlier runs take longer, so completion order differs from index order.
    let script = r#"sleep 0.0$((9 - FREEZEGATE_REPLAY)); [ $((FREEZEGATE_REPLAY % 2)) -eq 0 ] || { echo "failure: odd"; exit 1; }"#;
    let plan = ReplayPlan::new(8, 7)?;
    let options = ReplayOptions::default()
        .with_jobs(4)
        .with_timeout(Duration::from_secs(10));
    let report = replay(&oracle(dir.path(), script)?, CANDIDATE, &plan, &options);
    let expected: Vec<Label> = (0..8)
        .map(|i| {
            if i % 2 == 0 {
                Label::AssertPass
            } else {
                Label::AssertFail
            }
        })
        .collect();
    assert_eq!(report.labels(), expected);
    assert_eq!(report.verdict, Verdict::FreezeEligible);
    assert_eq!(report.runs[1].signature.as_deref(), Some("odd"));
    Ok(())
}

#[test]
fn replay_verdicts_from_real_processes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let plan = ReplayPlan::new(3, 1)?;
    let options = |timeout_ms| {
        ReplayOptions::default()
            .with_jobs(3)
            .with_timeout(Duration::from_millis(timeout_ms))
            .with_property_id("p")
    };
    let cases = [
        ("exit 1", 10_000, Verdict::BlockPatch),
        ("exit 0", 10_000, Verdict::NotReproduced),
        (
            "[ $FREEZEGATE_REPLAY -ne 1 ] || exit 125",
            10_000,
            Verdict::InfraQueue,
        ),
        (
            "[ $FREEZEGATE_REPLAY -ne 2 ] || exec sleep 30; exit 1",
            700,
            Verdict::InfraQueue,
        ),
    ];
    for (cmd, timeout_ms, verdict) in cases {
        let report = replay(
            &oracle(dir.path(), cmd)?,
            CANDIDATE,
            &plan,
            &options(timeout_ms),
        );
        assert_eq!((cmd, report.verdict), (cmd, verdict));
    }
    Ok(())
}

const PY_WORKER: &str = r#"
import json, os, sys, time
assert os.environ.get("FREEZEGATE_WORKER") == "1"
assert "FREEZEGATE_REPLAY" not in os.environ
mode = sys.argv[1]
if mode == "hang":
    with open("pgid", "w") as f:
        f.write(str(os.getpgid(0)))
for line in sys.stdin:
    value = json.loads(line)
    if value == 13 and mode == "crash":
        os._exit(3)
    if value == 13 and mode == "quit":
        with open("pid", "w") as f:
            f.write(str(os.getpid()))
        print("pass", flush=True)
        os._exit(0)
    if value == 13 and mode == "hang":
        time.sleep(60)
    if value == 14 and mode == "error":
        print("error cannot test 14", flush=True)
    elif value == 15 and mode == "garbage":
        print("maybe", flush=True)
    elif value == 16 and mode == "chatty":
        sys.stdout.write("pass\npass\n")
        sys.stdout.flush()
    elif value % 7 == 0:
        print("fail multiple of 7", flush=True)
    else:
        print("pass", flush=True)
"#;

fn worker(dir: &Path, mode: &str) -> Result<WorkerOracle, Box<dyn std::error::Error>> {
    std::fs::write(dir.join("worker.py"), PY_WORKER)?;
    Ok(
        WorkerOracle::new(format!("exec python3 worker.py {mode}"), dir)?
            .with_grace(Duration::from_millis(100)),
    )
}

fn check_worker_answers(
    oracle: &WorkerOracle,
    count: u32,
    ctx: &RunContext,
    special: impl Fn(u32) -> Option<Label>,
) {
    for i in 1..=count {
        let out = oracle.run(i.to_string().as_bytes(), ctx);
        let expected = special(i).unwrap_or(if i % 7 == 0 {
            Label::AssertFail
        } else {
            Label::AssertPass
        });
        assert_eq!((i, out.label), (i, expected));
        if expected == Label::AssertFail {
            assert_eq!(out.signature.as_deref(), Some("multiple of 7"));
        }
    }
}

#[test]
fn ten_thousand_candidates_through_one_worker() -> TestResult {
    let dir = tempfile::tempdir()?;
    let oracle = worker(dir.path(), "plain")?;
    check_worker_answers(&oracle, 10_000, &ctx(), |_| None);
    assert_eq!(oracle.starts(), 1);
    Ok(())
}

#[test]
fn a_worker_that_crashes_is_restarted() -> TestResult {
    let dir = tempfile::tempdir()?;
    let oracle = worker(dir.path(), "crash")?;
    check_worker_answers(&oracle, 40, &ctx(), |i| {
        (i == 13).then_some(Label::HarnessError)
    });
    assert_eq!(oracle.starts(), 2);
    // A death is breakage, never a declined input.
    let died = oracle.run(b"13", &ctx());
    assert_eq!((died.exit, died.declined), (Exit::WorkerDied, false));
    Ok(())
}

/// A worker process that exits 125 instead of answering has died: its exit code is not the
/// answer `error`, so the candidate is not declined.
#[test]
fn a_worker_that_exits_125_has_died_and_declines_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let oracle = WorkerOracle::new("exit 125", dir.path())?.with_grace(Duration::from_millis(100));
    let out = oracle.run(CANDIDATE, &ctx());
    assert_eq!(
        (out.label, out.exit, out.declined),
        (Label::HarnessError, Exit::WorkerDied, false)
    );
    Ok(())
}

#[test]
fn a_worker_that_exits_between_candidates_is_replaced_without_blame() -> TestResult {
    let dir = tempfile::tempdir()?;
    let oracle = worker(dir.path(), "quit")?;
    // It answers 13, then exits; 14 must not be labelled for that.
    check_worker_answers(&oracle, 13, &ctx(), |i| {
        (i == 13).then_some(Label::AssertPass)
    });
    // The point is a worker that is gone when 14 comes: wait for its exit.
    let pid = read_pgid(&dir.path().join("pid"))?;
    for _ in 0..1000 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next());
        if matches!(state, None | Some("Z" | "X")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for i in 14..=30u32 {
        let out = oracle.run(i.to_string().as_bytes(), &ctx());
        let expected = if i % 7 == 0 {
            Label::AssertFail
        } else {
            Label::AssertPass
        };
        assert_eq!((i, out.label), (i, expected));
    }
    assert_eq!(oracle.starts(), 2);
    Ok(())
}

#[test]
fn a_worker_that_hangs_is_killed_and_restarted() -> TestResult {
    let dir = tempfile::tempdir()?;
    let oracle = worker(dir.path(), "hang")?;
    // Long enough for a Python start on a machine loaded by parallel builds (1.5 s was
    // not, at a load average of 15); each of the three hangs below costs it once.
    let ctx = ctx().with_timeout(Duration::from_millis(4000));
    let first_pgid = dir.path().join("pgid");
    check_worker_answers(&oracle, 12, &ctx, |_| None);
    let hung_group = read_pgid(&first_pgid)?;
    check_worker_answers(&oracle, 40, &ctx, |i| (i == 13).then_some(Label::Timeout));
    assert!(!group_is_running(hung_group));
    // 1..=12, then 1..=12 again on the same worker, 13 hangs it, then a fresh one.
    assert_eq!(oracle.starts(), 2);
    // A worker that has answered flushes its answers: its silence gets no hint about that.
    let oracle = worker(dir.path(), "hang")?;
    check_worker_answers(&oracle, 12, &ctx, |_| None);
    let out = oracle.run(b"13", &ctx);
    assert_eq!(out.label, Label::Timeout);
    assert_eq!(
        out.message.as_deref(),
        Some("the worker gave no answer within 4000 ms")
    );
    // Nor does the fresh worker started after it, which hangs on its first candidate: the
    // command has shown it flushes.
    let out = oracle.run(b"13", &ctx);
    assert_eq!(out.label, Label::Timeout);
    assert_eq!(
        out.message.as_deref(),
        Some("the worker gave no answer within 4000 ms")
    );
    Ok(())
}

/// Python's stdout is block-buffered when it is a pipe: a worker that prints its answers
/// without flushing them never answers, and the timeout says what to look at.
#[test]
fn a_worker_that_does_not_flush_its_answers_is_told_why_it_timed_out() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("buffered.py"),
        "import sys\nfor line in sys.stdin:\n    print('pass')\n",
    )?;
    let oracle = WorkerOracle::new(
        "exec env -u PYTHONUNBUFFERED python3 buffered.py",
        dir.path(),
    )?
    .with_grace(Duration::from_millis(100));
    let ctx = ctx().with_timeout(Duration::from_millis(1500));
    for candidate in [b"1", b"2"] {
        let out = oracle.run(candidate, &ctx);
        assert_eq!(out.label, Label::Timeout);
        assert_eq!(
            out.message.as_deref(),
            Some(
                "the worker gave no answer within 1500 ms and has answered no candidate yet: does it flush stdout after each answer, read stdin line by line rather than to its end, and start within the deadline?"
            )
        );
    }
    Ok(())
}

#[test]
fn worker_errors_and_protocol_breaks_are_harness_errors() -> TestResult {
    let dir = tempfile::tempdir()?;
    let oracle = worker(dir.path(), "error")?;
    check_worker_answers(&oracle, 20, &ctx(), |i| {
        (i == 14).then_some(Label::HarnessError)
    });
    // `error` is an answer: the worker keeps serving. It declines the candidate on purpose.
    assert_eq!(oracle.starts(), 1);
    assert!(oracle.run(b"14", &ctx()).declined);
    assert!(!oracle.run(b"13", &ctx()).declined);
    let oracle = worker(dir.path(), "garbage")?;
    check_worker_answers(&oracle, 20, &ctx(), |i| {
        (i == 15).then_some(Label::HarnessError)
    });
    // An answer outside the protocol: the worker is replaced. That is breakage, not a
    // declined input.
    assert_eq!(oracle.starts(), 2);
    assert!(!oracle.run(b"15", &ctx()).declined);
    // Two answers to one candidate: the stray one is never taken for the next candidate's.
    let oracle = worker(dir.path(), "chatty")?;
    check_worker_answers(&oracle, 30, &ctx(), |i| {
        (i == 16).then_some(Label::HarnessError)
    });
    assert_eq!(oracle.starts(), 2);
    assert!(!oracle.run(b"16", &ctx()).declined);
    Ok(())
}

#[test]
fn parallel_runs_on_one_worker_oracle_use_separate_workers() -> TestResult {
    let dir = tempfile::tempdir()?;
    let oracle = worker(dir.path(), "plain")?;
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| check_worker_answers(&oracle, 200, &ctx(), |_| None));
        }
    });
    assert!((1..=3).contains(&oracle.starts()));
    Ok(())
}

#[test]
fn in_process_labels() {
    let oracle = InProcessOracle::new(|v: &freezegate_canon::Value| {
        match v.get("user_id").and_then(|i| match i {
            freezegate_canon::Value::Int(i) => i.to_i64(),
            _ => None,
        }) {
            Some(0) => Ok(()),
            Some(1) => Err(Failure::signature("user 1")),
            Some(2) => Err(Failure::cannot_test("no user 2")),
            Some(n) => panic!("crashed on {n}"),
            None => Err(Failure::assert()),
        }
    });
    let run = |bytes: &[u8]| oracle.run(bytes, &ctx());
    assert_eq!(run(br#"{"user_id":0}"#).label, Label::AssertPass);
    let out = run(br#"{"user_id":1}"#);
    assert_eq!(
        (out.label, out.signature.as_deref()),
        (Label::AssertFail, Some("user 1"))
    );
    let out = run(br#"{"user_id":2}"#);
    assert_eq!((out.label, out.declined), (Label::HarnessError, true));
    let out = run(br#"{"user_id":3}"#);
    assert_eq!((out.label, out.exit), (Label::AssertFail, Exit::Panicked));
    // Named by where it panicked, not by its message, which shows the input.
    let signature = out.signature.clone().unwrap_or_default();
    assert!(
        signature.starts_with("panicked at crates/replay/tests/runners.rs:"),
        "{signature}"
    );
    assert_eq!(out.message, Some(format!("{signature}: crashed on 3")));
    let again = run(br#"{"user_id":4}"#);
    assert_eq!(again.signature, out.signature);
    assert_eq!(run(b"[]").label, Label::AssertFail);
    let out = run(b"not json");
    assert_eq!((out.label, out.declined), (Label::HarnessError, false));
}

#[test]
fn quiet_in_process_runs_still_report_panics() {
    let oracle = InProcessOracle::new(|v: &freezegate_canon::Value| match v {
        freezegate_canon::Value::Array(items) if items.len() > 2 => panic!("{} items", items.len()),
        _ => Ok(()),
    })
    .quiet();
    let out = oracle.run(b"[1,2,3]", &ctx());
    assert_eq!(out.label, Label::AssertFail);
    assert!(
        out.message
            .as_deref()
            .is_some_and(|m| m.ends_with(": 3 items")),
        "{out:?}"
    );
    assert_eq!(oracle.run(b"[1,2,3,4]", &ctx()).signature, out.signature);
    assert_eq!(oracle.run(b"[1]", &ctx()).label, Label::AssertPass);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// Exit 0 passes, exit 1 fails, every other code is a harness error (SPEC §4).
    #[test]
    fn every_exit_code_maps_to_its_label(code in 0i32..=255) {
        let dir = tempfile::tempdir().map_err(case_error)?;
        let oracle = ProcessOracle::new(format!("exit {code}"), dir.path())
            .map_err(case_error)?;
        let out = oracle.run(CANDIDATE, &ctx());
        let expected = match code {
            0 => Label::AssertPass,
            1 => Label::AssertFail,
            _ => Label::HarnessError,
        };
        proptest::prop_assert_eq!((out.label, out.exit), (expected, Exit::Code(code)));
    }

    /// Whatever the signature text, the runner hands it back as the oracle printed it
    /// (trimmed), and only on exit 1.
    #[test]
    fn signatures_round_trip(sig in "[ -~]{0,60}", noise in "[ -~]{0,30}") {
        let dir = tempfile::tempdir().map_err(case_error)?;
        std::fs::write(dir.path().join("sig"), format!("{noise}\nfailure: {sig}\n"))
            .map_err(case_error)?;
        let oracle = ProcessOracle::new("cat sig; exit 1", dir.path())
            .map_err(case_error)?;
        let out = oracle.run(CANDIDATE, &ctx());
        proptest::prop_assert_eq!(out.label, Label::AssertFail);
        // A signature of blanks is no signature (SPEC §4 leaves it empty, and so do we).
        let expected = Some(sig.trim()).filter(|s| !s.is_empty());
        proptest::prop_assert_eq!(out.signature.as_deref(), expected);
        prop_assert_run_fails_like(&out, expected)?;
    }
}

/// A setup error as a failed proptest case.
fn case_error(e: impl std::fmt::Display) -> proptest::test_runner::TestCaseError {
    proptest::test_runner::TestCaseError::fail(e.to_string())
}

fn prop_assert_run_fails_like(
    out: &freezegate_replay::RunOutcome,
    sig: Option<&str>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    proptest::prop_assert!(out.fails_like(sig));
    proptest::prop_assert!(out.fails_like(None));
    Ok(())
}

/// A timeout or grace too large for the clock (`Duration::MAX`) means no deadline, never a
/// panic, for every runner: a run that ends by itself is labelled as usual, through
/// `RunContext::with_timeout` and `ReplayOptions::timeout` alike, and a worker stopped with an
/// endless grace ends on SIGTERM.
#[test]
fn a_timeout_or_grace_of_duration_max_is_no_deadline() -> TestResult {
    let dir = tempfile::tempdir()?;
    let endless = ctx().with_timeout(Duration::MAX);
    let process =
        ProcessOracle::new("cat >/dev/null; exit 1", dir.path())?.with_grace(Duration::MAX);
    let out = process.run(CANDIDATE, &endless);
    assert_eq!((out.label, out.exit), (Label::AssertFail, Exit::Code(1)));
    let options = ReplayOptions::default().with_timeout(Duration::MAX);
    let report = replay(&process, CANDIDATE, &ReplayPlan::new(2, 7)?, &options);
    assert_eq!(report.labels(), [Label::AssertFail, Label::AssertFail]);
    assert_eq!(report.verdict, Verdict::BlockPatch);

    let worker = WorkerOracle::new("while read l; do echo pass; done", dir.path())?
        .with_grace(Duration::MAX);
    let out = worker.run(CANDIDATE, &endless);
    assert_eq!(out.label, Label::AssertPass, "{:?}", out.message);
    // An answer outside the protocol stops the worker: SIGTERM, then the endless grace.
    let garbage = WorkerOracle::new("while read l; do echo maybe; done", dir.path())?
        .with_grace(Duration::MAX);
    let out = garbage.run(CANDIDATE, &endless);
    assert_eq!(out.label, Label::HarnessError, "{:?}", out.message);
    drop((worker, garbage));
    Ok(())
}
