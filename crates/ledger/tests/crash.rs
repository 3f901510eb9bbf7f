//! Crash safety and concurrency of ledger writes, with real processes.
//!
//! The test binary re-executes itself in a helper mode (`child_mode`, selected by an
//! environment variable) to get writer processes that do nothing but ledger writes.

mod common;

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::row;
use freezegate_ledger::{Ledger, Row, read, update};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

const MODE: &str = "FREEZEGATE_LEDGER_TEST_CHILD";
const LEDGER: &str = "FREEZEGATE_LEDGER_TEST_PATH";
/// The writer loop cycles through the ledgers of 0..=CYCLE rows.
const CYCLE: usize = 6;

fn crash_row(n: usize) -> Row {
    row("crash.writer", n as u64)
}

fn writer_row(n: usize) -> Row {
    row(&format!("writer.{n}"), n as u64)
}

/// Not a test of its own: the body of the helper processes. Without the variable it does
/// nothing.
#[test]
fn child_mode() {
    let Ok(mode) = std::env::var(MODE) else {
        return;
    };
    let path = PathBuf::from(std::env::var(LEDGER).unwrap());
    if mode == "loop" {
        // Writes forever: grow to CYCLE rows one at a time, then lift them all at once. After
        // the first write it says so on stdout, so the parent's kill lands among writes
        // however long this process took to start.
        let mut announced = false;
        loop {
            update(&path, |ledger| {
                let n = ledger.rows().len();
                if n == CYCLE {
                    *ledger = Ledger::new();
                } else {
                    ledger.upsert(crash_row(n));
                }
            })
            .unwrap();
            if !announced {
                announced = true;
                let mut out = std::io::stdout().lock();
                writeln!(out, "writing").unwrap();
                out.flush().unwrap();
            }
        }
    }
    let n: usize = mode.strip_prefix("add:").unwrap().parse().unwrap();
    // The barrier: standard input closes once every writer has been started.
    let mut sink = Vec::new();
    std::io::stdin().read_to_end(&mut sink).unwrap();
    update(&path, |ledger| ledger.upsert(writer_row(n))).unwrap();
}

fn spawn_child(mode: &str, ledger: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_mode", "--test-threads=1", "--quiet"])
        .env(MODE, mode)
        .env(LEDGER, ledger)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The ledger holds exactly one of the states the writer passes through.
fn assert_a_written_state(path: &Path) -> usize {
    let ledger = read(path).unwrap_or_else(|e| panic!("torn ledger: {e}"));
    let n = ledger.rows().len();
    assert!(n <= CYCLE);
    let expected = Ledger::from_rows((0..n).map(crash_row).collect());
    assert_eq!(ledger, expected, "a state the writer never wrote");
    n
}

#[test]
fn sigkill_at_random_moments_leaves_the_old_or_the_new_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("freeze").join("ledger.json");
    let mut rng = Pcg64::seed_from_u64(0x5EED_1ED6);
    let mut states = std::collections::BTreeSet::new();
    let mut mid_write = 0;
    for _ in 0..300 {
        let mut child = spawn_child("loop", &path);
        // Wait for its first write (a loaded machine can take longer to start the child
        // than any fixed delay), then kill it at a random moment of the writes that follow.
        // (The test harness writes its own lines to the same stdout first.)
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut lines = stdout.lines();
        assert!(
            lines.any(|line| line.unwrap() == "writing"),
            "the writer ended before its first write"
        );
        let delay_us = rng.next_u64() % 9_000;
        std::thread::sleep(Duration::from_micros(delay_us));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let leftovers = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        if leftovers > 0 {
            mid_write += 1;
        }
        if path.exists() {
            states.insert(assert_a_written_state(&path));
        }
    }
    // Some kills landed in the middle of a write (its temporary file was left behind).
    assert!(mid_write > 0, "no kill of 300 landed mid-write");
    eprintln!("{mid_write} of 300 kills landed mid-write");
    assert!(states.len() > 2, "states seen: {states:?}");
    // A later writer still gets the lock and cleans up what the dead ones left.
    update(&path, |ledger| *ledger = Ledger::new()).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".ledger.lock", "ledger.json"]);
}

#[test]
fn eight_concurrent_writers_all_land() {
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("freeze").join("ledger.json");
        let mut children: Vec<Child> = (0..8)
            .map(|n| spawn_child(&format!("add:{n}"), &path))
            .collect();
        // Release the barrier: every writer starts its update at about the same time.
        for child in &mut children {
            drop(child.stdin.take());
        }
        for mut child in children {
            assert!(child.wait().unwrap().success(), "round {round}");
        }
        let ledger = read(&path).unwrap();
        let expected = Ledger::from_rows((0..8).map(writer_row).collect());
        assert_eq!(ledger, expected, "round {round}: a lost row");
    }
}
