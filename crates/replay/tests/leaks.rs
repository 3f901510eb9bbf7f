//! Many runs leave nothing behind: no open descriptors, no unreaped children. (Its own test
//! binary, with one test, so that no other test's processes or files muddy the counts.)

use std::time::Duration;

use freezegate_replay::{
    Label, Oracle, ProcessOracle, ReplayOptions, ReplayPlan, RunContext, WorkerOracle, replay,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn open_fds() -> Result<usize, std::io::Error> {
    Ok(std::fs::read_dir("/proc/self/fd")?.count())
}

/// Children of this process that exited and were never reaped.
fn zombie_children() -> Result<usize, std::io::Error> {
    let me = std::process::id().to_string();
    let mut zombies = 0;
    for entry in std::fs::read_dir("/proc")? {
        let Ok(stat) = std::fs::read_to_string(entry?.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_ascii_whitespace();
        if fields.next() == Some("Z") && fields.next() == Some(me.as_str()) {
            zombies += 1;
        }
    }
    Ok(zombies)
}

#[test]
fn runs_leak_no_descriptors_and_no_children() -> TestResult {
    let dir = tempfile::tempdir()?;
    let before = open_fds()?;
    let plan = ReplayPlan::new(60, 1)?;
    let options = ReplayOptions::default()
        .with_jobs(4)
        .with_timeout(Duration::from_millis(700));
    // Passes, failures, a leftover background process, and timeouts.
    let script = r#"case $((FREEZEGATE_REPLAY % 4)) in
        0) exit 0 ;;
        1) echo "failure: one"; exit 1 ;;
        2) sleep 30 & exit 0 ;;
        *) [ "$FREEZEGATE_REPLAY" -lt 10 ] && exec sleep 30; exit 1 ;;
    esac"#;
    let oracle = ProcessOracle::new(script, dir.path())?.with_grace(Duration::from_millis(50));
    let report = replay(&oracle, b"[]", &plan, &options);
    assert_eq!(report.labels()[3], Label::Timeout);
    assert_eq!(report.labels()[59], Label::AssertFail);

    std::fs::write(
        dir.path().join("w.sh"),
        "while read -r line; do echo pass; done\n",
    )?;
    let workers = WorkerOracle::new("exec sh w.sh", dir.path())?;
    for _ in 0..50 {
        assert_eq!(
            workers.run(b"1", &RunContext::new(1)).label,
            Label::AssertPass
        );
    }
    drop(workers);

    assert_eq!(zombie_children()?, 0);
    assert_eq!(open_fds()?, before);
    Ok(())
}
