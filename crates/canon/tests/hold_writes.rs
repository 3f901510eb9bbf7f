//! `fixture::hold_writes`: once it returns, no atomic write starts, so a program exiting on a
//! signal leaves neither a new file nor a temporary one. Its own test binary: the hold is
//! process-wide and for ever.

use std::time::Duration;

use freezegate_canon::fixture::{hold_writes, write_atomic};

#[test]
fn a_write_after_hold_writes_waits_and_leaves_no_file() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let before = dir.path().join("before.json");
    write_atomic(&before, b"1\n").map_err(std::io::Error::other)?;
    // No write in progress: returns at once.
    hold_writes();
    let after = dir.path().join("after.json");
    let path = after.clone();
    let writer = std::thread::spawn(move || write_atomic(&path, b"2\n"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!writer.is_finished(), "a write after the hold went ahead");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.sort();
    assert_eq!(names, ["before.json"]);
    assert_eq!(std::fs::read(&before)?, b"1\n");
    Ok(())
}
