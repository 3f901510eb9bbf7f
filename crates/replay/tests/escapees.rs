//! Processes that leave a run's process group (a new session from `setsid` or from Python's
//! `start_new_session`) are killed when the run ends, at pass, fail and timeout, with the
//! runner a child subreaper; the processes of a run still going, and children of the runner
//! that no run started, are left alone. (Its own test binary: the subreaper setting is
//! process-wide.)
//!
//! Each escapee is a `sleep` with an argument no other process has (it holds this test
//! process's pid), so that a scan of `/proc` finds it, and a guard kills what is left of it
//! even when a test fails.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use freezegate_replay::{
    Label, Oracle, ProcessOracle, ReplayOptions, ReplayPlan, ReplayReport, RunContext, RunOutcome,
    WorkerOracle, become_child_subreaper, replay,
};
use rustix::process::{Pid, Signal, WaitOptions, kill_process, waitpid};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANDIDATE: &[u8] = br#"{"a":1}"#;

/// How long the runner waits for the pipes of a finished run at most (its `SETTLE_LIMIT`).
/// A run held up by an escapee that keeps its output open lasted at least this long past
/// its end.
const SETTLE_LIMIT: Duration = Duration::from_secs(2);

/// The note of a run that one process escaped from.
const ONE_KILLED: &str = "1 process left the oracle's process group and was killed";

/// A `sleep` argument no other process has: `3141.<this pid><n>` seconds, about 52 minutes.
fn marker(n: u32) -> String {
    format!("3141.{:07}{n:03}", std::process::id())
}

/// The state letter and the argument list of a process, if it still exists.
fn state_and_args(pid: &str) -> Option<(String, Vec<String>)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let state = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])?
        .split_whitespace()
        .next()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args = cmdline
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    Some((state.to_owned(), args))
}

/// The pids of the running processes (zombies aside) that have `marker` as an argument.
fn running_with(marker: &str) -> Result<Vec<i32>, std::io::Error> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let name = entry?.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Some((state, args)) = state_and_args(pid)
            && state != "Z"
            && args.iter().any(|a| a == marker)
            && let Ok(pid) = pid.parse()
        {
            pids.push(pid);
        }
    }
    Ok(pids)
}

/// Kills, when dropped, every process still running with one of its markers, and reaps
/// those that are children of this process: a failing test leaves nothing behind.
struct Cleanup(Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for marker in &self.0 {
            for pid in running_with(marker).unwrap_or_default() {
                if let Some(pid) = Pid::from_raw(pid) {
                    let _ = kill_process(pid, Signal::KILL);
                    // ECHILD when it is not our child: then its parent reaps it.
                    let _ = waitpid(Some(pid), WaitOptions::empty());
                }
            }
        }
    }
}

fn options(jobs: usize, timeout: Duration) -> ReplayOptions {
    ReplayOptions::default()
        .with_jobs(jobs)
        .with_timeout(timeout)
}

/// A script that starts `sleep MARKER` in a new session (`setsid`), waits until it has
/// left the group, then goes on with `tail`. The escapee keeps the oracle's stdin, stdout
/// and stderr. It says it is ready with a redirection, not `touch`: a `touch` still exiting
/// in its session would be counted as a second escapee.
fn setsid_escape(marker: &str, tail: &str) -> String {
    format!(
        r#"r=ready.$$; setsid sh -c ": > $r; exec sleep {marker}" &
while [ ! -e $r ]; do sleep 0.01; done; {tail}"#
    )
}

/// A script that starts `sleep MARKER` in a new session from Python (`Popen` returns once
/// the child runs the new program), then goes on with `tail`. The escapee keeps the
/// oracle's stdin only.
fn python_escape(marker: &str, tail: &str) -> String {
    format!(
        r#"python3 -c 'import subprocess as s
s.Popen(["sleep", "{marker}"], start_new_session=True, stdout=s.DEVNULL, stderr=s.DEVNULL)'
{tail}"#
    )
}

const PASS: &str = "exit 0";
const FAIL: &str = "echo 'failure: escaped'; exit 1";
const HANG: &str = "exec sleep 100";

/// Replays `script` twice in parallel, each run leaving one escapee with `marker`.
fn replay_escapes(
    dir: &Path,
    script: &str,
    timeout: Duration,
) -> Result<ReplayReport, Box<dyn std::error::Error>> {
    become_child_subreaper()?;
    let oracle = ProcessOracle::new(script, dir)?.with_grace(Duration::from_millis(100));
    Ok(replay(
        &oracle,
        CANDIDATE,
        &ReplayPlan::new(2, 7)?,
        &options(2, timeout),
    ))
}

/// What the escapee of a run kept open.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// The oracle's stdout and stderr: a runner that waited for them to close would wait
    /// its settle limit past the run's end.
    Output,
    /// Nothing the runner waits for.
    Nothing,
}

/// Every run of `report` has `label` and says that one process escaped and was killed.
/// Where the escapee held the output, the run did not wait for it: it lasted less than the
/// runner's settle limit past its end (its deadline, for a timeout), which a run waiting
/// for the output cannot.
fn check_runs(report: &ReplayReport, label: Label, timeout: Duration, holds: Holds) {
    for run in &report.runs {
        assert_eq!(run.label, label, "{run:?}");
        let message = run.message.as_deref().unwrap_or_default();
        assert!(message.ends_with(ONE_KILLED), "{run:?}");
        if holds == Holds::Output {
            let bound = if label == Label::Timeout {
                timeout + SETTLE_LIMIT
            } else {
                SETTLE_LIMIT
            };
            assert!(run.duration < bound, "{run:?}");
        }
    }
}

#[test]
fn setsid_escapees_are_killed_at_pass_fail_and_timeout() -> TestResult {
    let cases = [
        (PASS, Label::AssertPass, Duration::from_secs(30)),
        (FAIL, Label::AssertFail, Duration::from_secs(30)),
        (HANG, Label::Timeout, Duration::from_millis(700)),
    ];
    for (n, (tail, label, timeout)) in (1..).zip(cases) {
        // A directory per case: no `ready` file of an earlier run can be found.
        let dir = tempfile::tempdir()?;
        let m = marker(n);
        let _cleanup = Cleanup(vec![m.clone()]);
        let report = replay_escapes(dir.path(), &setsid_escape(&m, tail), timeout)?;
        check_runs(&report, label, timeout, Holds::Output);
        if label == Label::AssertFail {
            assert!(
                report
                    .runs
                    .iter()
                    .all(|r| r.signature.as_deref() == Some("escaped"))
            );
        }
        assert_eq!(running_with(&m)?, Vec::<i32>::new(), "{tail}");
    }
    Ok(())
}

#[test]
fn python_new_session_escapees_are_killed_at_pass_fail_and_timeout() -> TestResult {
    // Python takes a while to start: a deadline it cannot miss on a loaded machine.
    let cases = [
        (PASS, Label::AssertPass, Duration::from_secs(30)),
        (FAIL, Label::AssertFail, Duration::from_secs(30)),
        (HANG, Label::Timeout, Duration::from_secs(3)),
    ];
    for (n, (tail, label, timeout)) in (11..).zip(cases) {
        let dir = tempfile::tempdir()?;
        let m = marker(n);
        let _cleanup = Cleanup(vec![m.clone()]);
        // The timeout case must not reach `sleep 100` before the escapee started: Popen
        // returns only then, and the shell runs the tail after Python exits.
        let report = replay_escapes(dir.path(), &python_escape(&m, tail), timeout)?;
        check_runs(&report, label, timeout, Holds::Nothing);
        assert_eq!(running_with(&m)?, Vec::<i32>::new(), "{tail}");
    }
    Ok(())
}

#[test]
fn an_escapee_without_the_environment_is_known_by_the_output_it_holds() -> TestResult {
    let dir = tempfile::tempdir()?;
    let m = marker(21);
    let _cleanup = Cleanup(vec![m.clone()]);
    // `env -i`: no trace of the run in its environment, but it holds the oracle's stdout.
    let script = format!(
        r#"r=ready.$$; env -i setsid sh -c ": > $r; exec sleep {m}" &
while [ ! -e $r ]; do sleep 0.01; done; exit 0"#
    );
    let timeout = Duration::from_secs(30);
    let report = replay_escapes(dir.path(), &script, timeout)?;
    check_runs(&report, Label::AssertPass, timeout, Holds::Output);
    assert_eq!(running_with(&m)?, Vec::<i32>::new());
    Ok(())
}

/// An escapee that ends by itself as the run ends hands its own escapee to the runner only
/// once the kernel has freed its memory, which takes a while for hundreds of megabytes and
/// meanwhile hides its environment (the run's mark): the sweep waits for that child and
/// kills it.
#[test]
fn the_child_of_an_escapee_slow_to_exit_is_killed() -> TestResult {
    let dir = tempfile::tempdir()?;
    let m = marker(25);
    let _cleanup = Cleanup(vec![m.clone()]);
    std::fs::write(
        dir.path().join("slow.py"),
        format!(
            "import os, subprocess\n\
             held = b'x' * (768 << 20)\n\
             subprocess.Popen(['sleep', '{m}'], start_new_session=True)\n\
             open('ready', 'w').close()\n\
             os._exit(0)\n"
        ),
    )?;
    // No pipe of the run is held: the escapees are known by their mark alone.
    let script = "setsid python3 slow.py </dev/null >/dev/null 2>&1 &
while [ ! -e ready ]; do sleep 0.01; done; exit 0";
    become_child_subreaper()?;
    let oracle = ProcessOracle::new(script, dir.path())?;
    let out = oracle.run(CANDIDATE, &RunContext::new(1));
    assert_eq!(out.label, Label::AssertPass, "{out:?}");
    assert_eq!(running_with(&m)?, Vec::<i32>::new());
    Ok(())
}

/// Run 1 finishes (and kills its own escapee) while run 0 still runs with a background
/// child in its group and a daemon that left its group and was orphaned to this process:
/// neither may be killed before run 0 ends.
#[test]
fn a_finishing_run_leaves_the_processes_of_a_run_still_going_alone() -> TestResult {
    become_child_subreaper()?;
    let dir = tempfile::tempdir()?;
    let (in_group, daemon, escapee) = (marker(31), marker(32), marker(33));
    let _cleanup = Cleanup(vec![in_group.clone(), daemon.clone(), escapee.clone()]);
    let script = format!(
        r#"if [ "$FREEZEGATE_REPLAY" = 0 ]; then
    sleep {in_group} &
    sh -c 'setsid sh -c ": > daemon.ready; exec sleep {daemon}" &
        while [ ! -e daemon.ready ]; do sleep 0.01; done'
    : > ready
    while [ ! -e swept ]; do sleep 0.01; done
    exit 0
fi
while [ ! -e ready ]; do sleep 0.01; done
{}"#,
        setsid_escape(&escapee, PASS)
    );
    let inner = ProcessOracle::new(script, dir.path())?;
    // What was running right after run 1 returned: (in group, daemon, run 1's escapee).
    let seen: Mutex<Option<(usize, usize, usize)>> = Mutex::new(None);
    let oracle = |candidate: &[u8], ctx: &RunContext| -> RunOutcome {
        let outcome = inner.run(candidate, ctx);
        if ctx.replay == 1 {
            let count = |m: &str| running_with(m).map_or(usize::MAX, |p| p.len());
            *seen.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((count(&in_group), count(&daemon), count(&escapee)));
            let _ = std::fs::write(dir.path().join("swept"), "");
        }
        outcome
    };
    let report = replay(
        &oracle,
        CANDIDATE,
        &ReplayPlan::new(2, 7)?,
        &options(2, Duration::from_secs(60)),
    );
    assert_eq!(report.labels(), [Label::AssertPass, Label::AssertPass]);
    assert_eq!(
        *seen.lock().unwrap_or_else(|e| e.into_inner()),
        Some((1, 1, 0))
    );
    // Run 0's daemon goes when run 0 ends; its background child with its group.
    assert_eq!(report.runs[0].message.as_deref(), Some(ONE_KILLED));
    assert_eq!(report.runs[1].message.as_deref(), Some(ONE_KILLED));
    for m in [&in_group, &daemon, &escapee] {
        assert_eq!(running_with(m)?, Vec::<i32>::new(), "{m}");
    }
    Ok(())
}

/// Children of this process that no run started — one in a process group of its own, as
/// another library might start it, and an orphan of one, as a daemonizing tool leaves —
/// survive runs whose escapees are killed.
#[test]
fn children_that_no_run_started_are_left_alone() -> TestResult {
    become_child_subreaper()?;
    let dir = tempfile::tempdir()?;
    let (own_group, orphan, escapee) = (marker(41), marker(42), marker(43));
    let _cleanup = Cleanup(vec![own_group.clone(), orphan.clone(), escapee.clone()]);
    let mut outsider = Command::new("sleep")
        .arg(&own_group)
        .process_group(0)
        .spawn()?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            r#"setsid sh -c ": > orphan.ready; exec sleep {orphan}" &
while [ ! -e orphan.ready ]; do sleep 0.01; done"#
        ))
        .current_dir(dir.path())
        .status()?;
    assert!(status.success());

    let timeout = Duration::from_secs(30);
    let report = replay_escapes(dir.path(), &setsid_escape(&escapee, PASS), timeout)?;
    check_runs(&report, Label::AssertPass, timeout, Holds::Output);
    assert_eq!(running_with(&escapee)?, Vec::<i32>::new());

    assert!(outsider.try_wait()?.is_none());
    assert_eq!(running_with(&orphan)?.len(), 1);
    outsider.kill()?;
    outsider.wait()?;
    Ok(())
}

/// A worker is one long run: what left its group lives while the worker serves (it may be a
/// helper the worker talks to), and is killed when the worker is stopped — replaced after a
/// timeout, or with the oracle dropped — whether it kept the environment or only a pipe.
#[test]
fn worker_escapees_are_killed_when_the_worker_stops() -> TestResult {
    become_child_subreaper()?;
    let dir = tempfile::tempdir()?;
    let (kept_env, no_env, second) = (marker(51), marker(52), marker(53));
    let _cleanup = Cleanup(vec![kept_env.clone(), no_env.clone(), second.clone()]);
    // The first worker leaves two escapees, then answers `pass` per line until it reads
    // `{"hang":1}`, which it never answers; the worker started after that leaves one more.
    let script = format!(
        r#"if [ -e first.done ]; then
    setsid sh -c ": > second.ready; exec sleep {second}" &
    while [ ! -e second.ready ]; do sleep 0.01; done
else
    : > first.done
    setsid sh -c ": > a.ready; exec sleep {kept_env}" &
    env -i setsid sh -c ": > b.ready; exec sleep {no_env}" &
    while [ ! -e a.ready ] || [ ! -e b.ready ]; do sleep 0.01; done
fi
while read -r line; do
    case "$line" in
        *hang*) exec sleep 100 ;;
        *) echo pass ;;
    esac
done"#
    );
    let oracle = WorkerOracle::new(script, dir.path())?.with_grace(Duration::from_millis(100));
    let ctx = |timeout| RunContext::new(7).with_timeout(timeout);
    let long = Duration::from_secs(30);
    assert_eq!(oracle.run(CANDIDATE, &ctx(long)).label, Label::AssertPass);
    // Serving: its escapees are left alone.
    assert_eq!(running_with(&kept_env)?.len(), 1);
    assert_eq!(running_with(&no_env)?.len(), 1);

    let hung = oracle.run(br#"{"hang":1}"#, &ctx(Duration::from_millis(700)));
    assert_eq!(hung.label, Label::Timeout);
    assert_eq!(running_with(&kept_env)?, Vec::<i32>::new());
    assert_eq!(running_with(&no_env)?, Vec::<i32>::new());

    assert_eq!(oracle.run(CANDIDATE, &ctx(long)).label, Label::AssertPass);
    assert_eq!(oracle.starts(), 2);
    assert_eq!(running_with(&second)?.len(), 1);
    drop(oracle);
    assert_eq!(running_with(&second)?, Vec::<i32>::new());
    Ok(())
}
