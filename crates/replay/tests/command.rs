//! `ShellCommand`: a command run to its end under the runner's rules, its stdout kept from
//! the start up to a cap. (Its own test binary: the subreaper setting is process-wide.)

use std::time::Duration;

use freezegate_replay::{CommandEnd, ShellCommand, become_child_subreaper};
use rustix::process::{Pid, Signal, kill_process};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A `sleep` argument no other process has: `2718.<this pid><n>` seconds, about 45 minutes.
fn marker(n: u32) -> String {
    format!("2718.{:07}{n:03}", std::process::id())
}

/// The pids of the running processes (zombies aside) with `marker` as an argument.
fn running_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if !zombie && cmdline.split(|&b| b == 0).any(|a| a == marker.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// Kills what is left with its markers when dropped, so a failing test leaves nothing.
struct Cleanup(Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for m in &self.0 {
            for pid in running_with(m) {
                if let Some(pid) = Pid::from_raw(pid) {
                    let _ = kill_process(pid, Signal::KILL);
                }
            }
        }
    }
}

#[test]
fn stdout_is_kept_from_the_start_with_the_callers_environment() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = ShellCommand::new(
        r#"printf '%s %s [%s] [%s]\n' "$PROP_SEED" "$(pwd)" "${FREEZEGATE_REPLAY-unset}" "${FREEZEGATE_WORKER-unset}"; echo oops >&2; exit 3"#,
        dir.path(),
    )?
    .env("PROP_SEED", "42")
    .run();
    assert_eq!(out.end.clone(), exited(3)?);
    let cwd = dir.path().canonicalize()?;
    assert_eq!(
        String::from_utf8(out.stdout.clone())?,
        format!("42 {} [unset] [unset]\n", cwd.display())
    );
    assert_eq!(out.stdout_total, out.stdout.len() as u64);
    assert_eq!(out.stderr.text, "oops\n");
    Ok(())
}

fn exited(code: i32) -> Result<CommandEnd, Box<dyn std::error::Error>> {
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("exit {code}")])
        .status()?;
    Ok(CommandEnd::Exited(status))
}

#[test]
fn input_goes_to_stdin_and_is_closed() -> TestResult {
    let out = ShellCommand::new("wc -c", ".")?.input(&b"12345"[..]).run();
    assert_eq!(out.end, exited(0)?);
    assert_eq!(String::from_utf8(out.stdout)?.trim(), "5");
    Ok(())
}

/// A background child that keeps stdout open neither holds the run past the command's exit
/// (the run would last the child's 45 minutes) nor outlives it.
#[test]
fn a_background_child_holding_stdout_is_killed_when_the_command_exits() -> TestResult {
    let m = marker(1);
    let _cleanup = Cleanup(vec![m.clone()]);
    let out = ShellCommand::new(format!("sleep {m} & printf 'a\\nb\\n'"), ".")?
        .timeout(Duration::from_secs(600))
        .run();
    assert_eq!(out.end, exited(0)?);
    assert_eq!(out.stdout, b"a\nb\n");
    assert_eq!(running_with(&m), Vec::<i32>::new());
    Ok(())
}

/// Where this process is a child subreaper, a process that left the group (`setsid`) while
/// holding stdout is killed too, and said so.
#[test]
fn an_escapee_is_killed_and_noted() -> TestResult {
    become_child_subreaper()?;
    let dir = tempfile::tempdir()?;
    let m = marker(2);
    let _cleanup = Cleanup(vec![m.clone()]);
    let script = format!(
        r#"setsid sh -c ": > ready; exec sleep {m}" &
while [ ! -e ready ]; do sleep 0.01; done; echo '{{}}'"#
    );
    let out = ShellCommand::new(script, dir.path())?
        .timeout(Duration::from_secs(600))
        .run();
    assert_eq!(out.end, exited(0)?);
    assert_eq!(out.stdout, b"{}\n");
    assert_eq!(
        out.notes,
        ["1 process left the command's process group and was killed"]
    );
    assert_eq!(running_with(&m), Vec::<i32>::new());
    Ok(())
}

/// A command that prints more than the cap is stopped there, not read on to its deadline;
/// what it printed first is kept.
#[test]
fn stdout_past_the_cap_stops_the_command() -> TestResult {
    let out = ShellCommand::new("yes", ".")?
        .stdout_cap(1 << 20)
        .timeout(Duration::from_secs(600))
        .run();
    assert_eq!(out.end, CommandEnd::StdoutOverflow);
    assert_eq!(out.stdout.len(), 1 << 20);
    assert!(out.stdout.starts_with(b"y\ny\n"));
    assert!(out.stdout_total > 1 << 20);
    Ok(())
}

#[test]
fn a_command_still_running_at_its_deadline_times_out() -> TestResult {
    let m = marker(3);
    let _cleanup = Cleanup(vec![m.clone()]);
    let out = ShellCommand::new(format!("echo started; exec sleep {m}"), ".")?
        .timeout(Duration::from_millis(300))
        .grace(Duration::from_millis(50))
        .run();
    assert_eq!(out.end, CommandEnd::TimedOut);
    assert_eq!(out.stdout, b"started\n");
    assert_eq!(running_with(&m), Vec::<i32>::new());
    Ok(())
}

#[test]
fn an_empty_command_is_refused_and_a_missing_directory_is_not_run() -> TestResult {
    assert!(ShellCommand::new("  ", ".").is_err());
    let out = ShellCommand::new("true", "/nonexistent/freezegate")?.run();
    assert!(
        matches!(&out.end, CommandEnd::NotRun(why) if why.contains("/nonexistent/freezegate")),
        "{:?}",
        out.end
    );
    Ok(())
}

/// A timeout or grace too large for the clock means no deadline (no end to the grace), never
/// a panic: a command that exits by itself ends as usual, and one stopped at its deadline
/// with an endless grace ends on SIGTERM.
#[test]
fn a_timeout_or_grace_of_duration_max_is_no_deadline() -> TestResult {
    let out = ShellCommand::new("echo done", ".")?
        .timeout(Duration::MAX)
        .grace(Duration::MAX)
        .run();
    assert_eq!(out.end, exited(0)?);
    assert_eq!(out.stdout, b"done\n");
    let m = marker(4);
    let _cleanup = Cleanup(vec![m.clone()]);
    let out = ShellCommand::new(format!("exec sleep {m}"), ".")?
        .timeout(Duration::from_millis(300))
        .grace(Duration::MAX)
        .run();
    assert_eq!(out.end, CommandEnd::TimedOut);
    assert_eq!(running_with(&m), Vec::<i32>::new());
    Ok(())
}
