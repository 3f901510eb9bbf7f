//! Where ledger writes land: through a symbolic link to its target, with the writers' lock
//! beside the target; a link to nothing is an error, never an empty ledger.

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use common::row;
use freezegate_ledger::{
    Error, LOCK_FILE_NAME, Ledger, check_writable, read, read_bytes, update, write_target,
};

/// A checkout whose `freeze/ledger.json` links to `shared/ledger.json` holding one row.
fn linked(root: &Path) {
    std::fs::create_dir_all(root.join("freeze")).unwrap();
    std::fs::create_dir_all(root.join("shared")).unwrap();
    std::fs::write(
        root.join("shared/ledger.json"),
        Ledger::from_rows(vec![row("p.q", 0)]).render(),
    )
    .unwrap();
    symlink("../shared/ledger.json", root.join("freeze/ledger.json")).unwrap();
}

#[test]
fn a_write_through_a_link_updates_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    linked(root);
    let link = root.join("freeze/ledger.json");
    update(&link, |ledger| ledger.upsert(row("p.q", 1))).unwrap();
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link is still a link");
    assert_eq!(
        read(&root.join("shared/ledger.json")).unwrap().rows().len(),
        2
    );
    // The lock is beside the file written, so every checkout linking to it takes the same lock.
    assert!(root.join("shared").join(LOCK_FILE_NAME).exists());
    assert!(!root.join("freeze").join(LOCK_FILE_NAME).exists());
    assert_eq!(
        write_target(&link).unwrap(),
        root.join("shared/ledger.json").canonicalize().unwrap()
    );
}

#[test]
fn two_links_to_one_ledger_lock_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    linked(root);
    std::fs::create_dir_all(root.join("other/freeze")).unwrap();
    let other = root.join("other/freeze/ledger.json");
    symlink("../../shared/ledger.json", &other).unwrap();
    // Hold the lock as a writer through the first link would, then write through the second.
    let lock = std::fs::File::create(root.join("shared").join(LOCK_FILE_NAME)).unwrap();
    lock.lock().unwrap();
    let (done, finished) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        let out = update(&other, |ledger| ledger.upsert(row("p.q", 2)));
        done.send(()).unwrap();
        out
    });
    assert!(
        finished.recv_timeout(Duration::from_millis(300)).is_err(),
        "the second writer waits for the lock"
    );
    lock.unlock().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(
        read(&root.join("shared/ledger.json")).unwrap().rows().len(),
        2
    );
}

#[test]
fn a_link_to_nothing_is_an_error_naming_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("freeze")).unwrap();
    let link = root.join("freeze/ledger.json");
    symlink("../gone.json", &link).unwrap();
    let expected = format!(
        "{} is a symbolic link to ../gone.json, which does not exist",
        link.display()
    );
    for error in [
        read_bytes(&link).unwrap_err(),
        read(&link).unwrap_err(),
        update(&link, |ledger| ledger.upsert(row("p.q", 0))).unwrap_err(),
        check_writable(&link).unwrap_err(),
    ] {
        assert!(matches!(error, Error::BrokenLink { .. }), "{error:?}");
        assert_eq!(error.to_string(), expected);
    }
    assert!(!root.join("gone.json").exists(), "nothing is created");
    assert!(!root.join("freeze").join(LOCK_FILE_NAME).exists());
}

#[test]
fn a_ledger_that_cannot_be_locked_is_found_before_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    linked(root);
    // A directory where the lock file should be: no writer, root included, can open it.
    std::fs::create_dir(root.join("shared").join(LOCK_FILE_NAME)).unwrap();
    let link = root.join("freeze/ledger.json");
    let before = std::fs::read(root.join("shared/ledger.json")).unwrap();
    for error in [
        check_writable(&link).unwrap_err(),
        update(&link, |ledger| ledger.upsert(row("p.q", 1))).unwrap_err(),
    ] {
        let shown = format!("{error}");
        assert_eq!(
            shown,
            link.display().to_string(),
            "the ledger is named first"
        );
    }
    assert_eq!(
        std::fs::read(root.join("shared/ledger.json")).unwrap(),
        before
    );
    // A writable ledger passes the check and is left as it was.
    std::fs::remove_dir(root.join("shared").join(LOCK_FILE_NAME)).unwrap();
    check_writable(&link).unwrap();
    assert_eq!(
        std::fs::read(root.join("shared/ledger.json")).unwrap(),
        before
    );
    let leftovers: Vec<_> = std::fs::read_dir(root.join("shared"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn schema_problems_are_shown_without_a_severity_of_their_own() {
    let text = br#"{"schema": "freezegate-ledger-v1", "rows": [{"nodeid": "x"}, {"note": 1}]}"#;
    let error = Ledger::from_slice(text).unwrap_err();
    let problems = error.schema_problems().expect("a schema error");
    assert!(problems.len() > 2, "{problems:?}");
    let shown = error.to_string();
    assert!(!shown.contains("error:"), "{shown}");
    assert!(
        shown.starts_with("the ledger breaks schema freezegate-ledger-v1: line 1, column "),
        "{shown}"
    );
    for problem in problems {
        let at = problem.at.expect("read from text, so placed");
        let part = format!("{at}: {}", problem.describe());
        assert!(shown.contains(&part), "{part} in {shown}");
    }
}

/// A ledger under a folder link to nothing (`freeze -> /gone`) is no empty ledger, and a
/// chain of links names the file missing at its end.
#[test]
fn a_folder_link_to_nothing_and_a_chain_of_links_name_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/nonexistent/freezegate", dir.path().join("freeze")).unwrap();
    let ledger = dir.path().join("freeze/ledger.json");
    let err = freezegate_ledger::read_bytes(&ledger).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is a symbolic link to /nonexistent/freezegate, which does not exist",
            dir.path().join("freeze").display()
        )
    );
    assert!(freezegate_ledger::check_writable(&ledger).is_err());

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("freeze")).unwrap();
    let a = dir.path().join("freeze/ledger.json");
    std::os::unix::fs::symlink("b.json", &a).unwrap();
    std::os::unix::fs::symlink("c.json", dir.path().join("freeze/b.json")).unwrap();
    let err = freezegate_ledger::read_bytes(&a).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is a symbolic link to {}, which does not exist",
            a.display(),
            dir.path().join("freeze/c.json").display()
        )
    );
}

/// The writability probe is named like a writer's temporary, which a writer holding the lock
/// removes: probing while another process updates the ledger still does not fail.
#[test]
fn probing_while_a_writer_sweeps_its_temporaries_does_not_fail() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("freeze/ledger.json");
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    std::fs::write(
        &ledger,
        "{\"schema\":\"freezegate-ledger-v1\",\"rows\":[]}\n",
    )
    .unwrap();
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            for _ in 0..200 {
                freezegate_ledger::update(&ledger, |_| ()).expect("update");
            }
        });
        for _ in 0..500 {
            freezegate_ledger::check_writable(&ledger).expect("writable");
        }
        writer.join().unwrap();
    });
}

/// A probe left by a process killed between creating and removing it, whose id this process
/// now has, does not make the ledger look unwritable; the next write sweeps it, and the
/// probes of the name used before as well.
#[test]
fn a_leftover_probe_with_this_process_id_is_skipped_and_swept() {
    let dir = tempfile::tempdir().unwrap();
    let freeze = dir.path().join("freeze");
    std::fs::create_dir_all(&freeze).unwrap();
    let ledger = freeze.join("ledger.json");
    let pid = std::process::id();
    let mut leftovers = vec![format!(".ledger.json-probe-{pid}")];
    leftovers.extend((0..8).map(|n| format!(".ledger.json.probe-{pid}-{n}.tmp")));
    for name in &leftovers {
        std::fs::write(freeze.join(name), "").unwrap();
    }
    check_writable(&ledger).unwrap();
    check_writable(&ledger).unwrap();
    for name in &leftovers {
        assert!(freeze.join(name).exists(), "{name}: only a writer sweeps");
    }
    update(&ledger, |ledger| ledger.upsert(row("p.q", 1))).unwrap();
    let left: Vec<String> = std::fs::read_dir(&freeze)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "ledger.json" && n != LOCK_FILE_NAME)
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A probe that cannot be created is named, after the ledger: the error is about that file
/// in the ledger's folder, not about the ledger existing.
#[test]
fn a_probe_that_cannot_be_created_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let freeze = dir.path().join("freeze");
    std::fs::create_dir_all(&freeze).unwrap();
    let ledger = freeze.join("ledger.json");
    // Every name the probe may take is a directory: creating a file there fails every time.
    let pid = std::process::id();
    for n in 0..16 {
        std::fs::create_dir(freeze.join(format!(".ledger.json.probe-{pid}-{n}.tmp"))).unwrap();
    }
    let error = check_writable(&ledger).unwrap_err();
    let shown = freezegate_ledger::ErrorChain(&error).to_string();
    assert!(
        shown.starts_with(&format!(
            "{}: {}/.ledger.json.probe-{pid}-",
            ledger.display(),
            freeze.display()
        )),
        "{shown}"
    );
    assert!(shown.ends_with("File exists (os error 17)"), "{shown}");
}

/// A symbolic link where the writers' lock belongs is not followed: neither a writer nor the
/// writability check creates or locks the file it points to, and the error says what it is.
#[test]
fn a_lock_file_that_is_a_symbolic_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let freeze = dir.path().join("freeze");
    std::fs::create_dir_all(&freeze).unwrap();
    let ledger = freeze.join("ledger.json");
    std::fs::write(&ledger, Ledger::from_rows(vec![row("p.q", 0)]).render()).unwrap();
    let before = std::fs::read(&ledger).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let lock = freeze.join(LOCK_FILE_NAME);
    for points_at in [elsewhere.join("created"), elsewhere.join("existing")] {
        if points_at.ends_with("existing") {
            std::fs::write(&points_at, "").unwrap();
        }
        let _ = std::fs::remove_file(&lock);
        symlink(&points_at, &lock).unwrap();
        for error in [
            check_writable(&ledger).unwrap_err(),
            update(&ledger, |ledger| ledger.upsert(row("p.q", 1))).unwrap_err(),
        ] {
            assert_eq!(
                freezegate_ledger::ErrorChain(&error).to_string(),
                format!(
                    "{}: {} is a symbolic link; the writers' lock must be a plain file (remove the link)",
                    ledger.display(),
                    lock.display()
                )
            );
        }
        assert_eq!(std::fs::read(&ledger).unwrap(), before);
    }
    assert!(
        !elsewhere.join("created").exists(),
        "a dangling link's target is not created"
    );
}

/// `update_waiting` calls its `waiting` only when another writer holds the lock, with the
/// lock's path, and drops what it returned once the lock is held, before the change runs.
#[test]
fn a_writer_is_told_when_it_has_to_wait_for_the_lock() {
    use std::sync::atomic::{AtomicBool, Ordering};
    struct Waited<'a>(&'a AtomicBool);
    impl Drop for Waited<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("freeze/ledger.json");
    // Free: `waiting` is not called.
    freezegate_ledger::update_waiting(
        &ledger,
        |_| panic!("nobody holds the lock"),
        |l| l.upsert(row("p.q", 0)),
    )
    .unwrap();
    let lock_path = dir.path().join("freeze").join(LOCK_FILE_NAME);
    let held = std::fs::File::options()
        .write(true)
        .open(&lock_path)
        .unwrap();
    held.lock().unwrap();
    let waited = AtomicBool::new(false);
    let (told, wait) = mpsc::channel();
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            freezegate_ledger::update_waiting(
                &ledger,
                |lock| {
                    told.send(lock.to_owned()).unwrap();
                    Waited(&waited)
                },
                |l| {
                    assert!(waited.load(Ordering::SeqCst), "dropped before the change");
                    l.upsert(row("p.q", 1))
                },
            )
        });
        assert_eq!(wait.recv().unwrap(), lock_path);
        held.unlock().unwrap();
        writer.join().unwrap().unwrap();
    });
    assert_eq!(read(&ledger).unwrap().rows().len(), 2);
}

/// A lock file removed and made anew while a writer waits on the old one (a `git clean` in a
/// parallel job, then another writer) does not let the waiter in beside the writer that holds
/// the new one: it takes the new lock, and reads what that writer wrote.
#[test]
fn a_lock_file_replaced_while_a_writer_waits_is_taken_anew() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("freeze/ledger.json");
    update(&ledger, |l| l.upsert(row("p.q", 0))).unwrap();
    let lock_path = dir.path().join("freeze").join(LOCK_FILE_NAME);
    let old = std::fs::File::options()
        .write(true)
        .open(&lock_path)
        .unwrap();
    old.lock().unwrap();
    let (told, wait) = mpsc::channel();
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            freezegate_ledger::update_waiting(
                &ledger,
                |_| told.send(()).unwrap(),
                |l| l.upsert(row("p.q", 1)),
            )
        });
        wait.recv().unwrap();
        std::fs::remove_file(&lock_path).unwrap();
        let new = std::fs::File::create_new(&lock_path).unwrap();
        new.lock().unwrap();
        old.unlock().unwrap();
        // The holder of the new lock writes; the waiter must not have read before this.
        let mut rows = read(&ledger).unwrap().rows().to_vec();
        rows.push(row("p.q", 2));
        std::fs::write(&ledger, Ledger::from_rows(rows).render()).unwrap();
        new.unlock().unwrap();
        writer.join().unwrap().unwrap();
    });
    assert_eq!(read(&ledger).unwrap().rows().len(), 3, "no update is lost");
}

/// A named pipe in place of the ledger or of its lock is refused at once, never waited on.
#[test]
fn a_named_pipe_in_place_of_the_ledger_or_its_lock_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let freeze = dir.path().join("freeze");
    std::fs::create_dir_all(&freeze).unwrap();
    let ledger = freeze.join("ledger.json");
    let mkfifo = |path: &Path| {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    };
    mkfifo(&ledger);
    let error = read_bytes(&ledger).unwrap_err();
    assert!(
        freezegate_ledger::ErrorChain(&error)
            .to_string()
            .contains("not a regular file"),
        "{error}"
    );
    assert!(update(&ledger, |l| l.upsert(row("p.q", 0))).is_err());
    std::fs::remove_file(&ledger).unwrap();
    let lock = freeze.join(LOCK_FILE_NAME);
    let _ = std::fs::remove_file(&lock);
    mkfifo(&lock);
    let error = update(&ledger, |l| l.upsert(row("p.q", 0))).unwrap_err();
    assert!(
        freezegate_ledger::ErrorChain(&error)
            .to_string()
            .contains("not a regular file"),
        "{error}"
    );
    assert!(!ledger.exists());
}
