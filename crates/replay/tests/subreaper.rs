//! With the runner a child subreaper, a killed group's orphans are reaped too: after the run
//! the group does not even exist as zombies. (Its own test binary: the setting is
//! process-wide.)

use std::time::Duration;

use freezegate_replay::{Label, Oracle, ProcessOracle, RunContext, become_child_subreaper};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Whether any process, zombies included, is still in group `pgid`.
fn group_exists(pgid: u32) -> bool {
    let Ok(pid) = i32::try_from(pgid) else {
        return false;
    };
    // `kill -0 -PGID` succeeds while any member, zombie or not, exists.
    std::process::Command::new("kill")
        .args(["-0", "--", &format!("-{pid}")])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn orphans_of_a_killed_group_are_reaped() -> TestResult {
    become_child_subreaper()?;
    let dir = tempfile::tempdir()?;
    let script = r#"echo $$ > pgid; (trap "" TERM; sleep 30) & (trap "" TERM; sleep 30) & trap "" TERM; sleep 30"#;
    let oracle = ProcessOracle::new(script, dir.path())?.with_grace(Duration::from_millis(100));
    let ctx = RunContext::new(1).with_timeout(Duration::from_millis(700));
    let out = oracle.run(b"[]", &ctx);
    assert_eq!(out.label, Label::Timeout);
    let pgid: u32 = std::fs::read_to_string(dir.path().join("pgid"))?
        .trim()
        .parse()?;
    assert!(!group_exists(pgid));

    // And the leftovers of an oracle that exited by itself.
    let script = r#"echo $$ > pgid; (sleep 30) & exit 0"#;
    let oracle = ProcessOracle::new(script, dir.path())?;
    let out = oracle.run(b"[]", &RunContext::new(1));
    assert_eq!(out.label, Label::AssertPass);
    let pgid: u32 = std::fs::read_to_string(dir.path().join("pgid"))?
        .trim()
        .parse()?;
    assert!(!group_exists(pgid));
    Ok(())
}
