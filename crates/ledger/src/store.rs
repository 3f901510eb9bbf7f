//! Reading and writing `freeze/ledger.json`: a missing file is an empty ledger; writes are
//! atomic and serialised by a lock on a separate file.
//!
//! A ledger that is a symbolic link is written through: the temporary file, the rename and the
//! lock are beside the file the link points to, so the link stays a link and checkouts that
//! share one ledger through links lock each other. A link that points nowhere is an error,
//! never an empty ledger.

use std::fs::{self, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use freezegate_canon::fixture::write_atomic;

use crate::error::Error;
use crate::ledger::Ledger;

/// Where the ledger lives, relative to the repository root.
pub const LEDGER_PATH: &str = "freeze/ledger.json";
/// The allowed signers file, relative to the repository root.
pub const SIGNERS_PATH: &str = "freeze/allowed_signers";
/// The lock file beside `freeze/ledger.json` (git-ignored).
pub const LOCK_FILE_NAME: &str = ".ledger.lock";

/// The bytes of the ledger file, or `None` when it does not exist. A symbolic link is
/// followed; one whose target does not exist is an error naming the link.
///
/// Anything but a regular file (a folder, a named pipe, a socket, a device) is an error; a
/// named pipe is opened without waiting for a writer, so it cannot hang the reader.
pub fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    match read_regular(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match dangling_link(path) {
            Some((link, missing)) => Err(Error::BrokenLink {
                path: link,
                target: missing,
            }),
            None => Ok(None),
        },
        Err(e) => Err(Error::io(path, e)),
    }
}

/// The bytes of the regular file at `path` (links followed).
fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A named pipe opens at once instead of waiting for a writer; the check below then
        // refuses it. The flag's bits fit an i32 on every unix.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let mut file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(not_regular());
    }
    // A folder fails here, as `fs::read` says it. The size is a hint (a sparse file may
    // claim more than memory holds): reserving it may fail, and reading then says so.
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(meta.len()).unwrap_or(0))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn not_regular() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a named pipe, a socket or a device)",
    )
}

/// Whether `path` is there and is neither a regular file, a folder nor a link.
fn is_special(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| {
        let t = m.file_type();
        !t.is_file() && !t.is_dir() && !t.is_symlink()
    })
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn broken_link(path: &Path) -> Error {
    let (link, missing) = dangling_link(path).unwrap_or_else(|| (path.to_owned(), chain_end(path)));
    Error::BrokenLink {
        path: link,
        target: missing,
    }
}

/// Where `path`, which does not exist, is a symbolic link to nothing or lies in a folder that
/// is one (`freeze -> /gone`): that link, and the path missing at the end of its chain of
/// links. `None` when no link is broken: the path is just absent, and a missing ledger reads
/// as an empty one, which a link to nothing must not.
fn dangling_link(path: &Path) -> Option<(PathBuf, PathBuf)> {
    path.ancestors()
        .take_while(|at| !at.as_os_str().is_empty())
        .find(|at| is_symlink(at) && fs::metadata(at).is_err())
        .map(|link| (link.to_owned(), chain_end(link)))
}

/// The path a chain of symbolic links from `link` ends at (at most 40 links followed): as
/// the link says it when there is one link, else resolved from `link`'s folder.
fn chain_end(link: &Path) -> PathBuf {
    let mut at = link.to_owned();
    let mut said = PathBuf::new();
    let mut hops = 0;
    while hops < 40 {
        match fs::read_link(&at) {
            Ok(target) => {
                at = if target.is_absolute() {
                    target.clone()
                } else {
                    parent_dir(&at).join(&target)
                };
                said = target;
                hops += 1;
            }
            Err(_) => break,
        }
    }
    if hops == 1 { said } else { at }
}

/// The file that writes of the ledger at `path` replace: `path` itself, or, when `path` is a
/// symbolic link, the file it points to (links followed to the end). A link whose target does
/// not exist is an error naming `path`.
pub fn write_target(path: &Path) -> Result<PathBuf, Error> {
    if !is_symlink(path) {
        if let Some((link, missing)) = dangling_link(path) {
            return Err(Error::BrokenLink {
                path: link,
                target: missing,
            });
        }
        return Ok(path.to_owned());
    }
    fs::canonicalize(path).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            broken_link(path)
        } else {
            Error::io(path, e)
        }
    })
}

/// How the names of `write_atomic`'s temporaries end (`.ledger.json.<pid>-<n>.tmp`).
const TEMPORARY_SUFFIX: &str = ".tmp";

/// How many names [`check_writable`] tries for its probe before it gives up on files that
/// already have them.
const PROBE_TRIES: u32 = 16;

/// Checks, without changing the ledger, that [`update`] could write the ledger at `path`: the
/// target's directory exists or can be made, the writers' lock can be opened, and a file can
/// be created beside the target. A caller with costly work before its write (`freeze` replays
/// the fixture) asks first. Errors name `path`, the ledger, and then the file that could not
/// be opened or created: the lock, or the probe.
///
/// The probe is named like a writer's temporary (`.ledger.json.probe-<pid>-<n>.tmp`), so one
/// left by a process killed between creating and removing it is swept by the next write, as
/// a killed writer's temporaries are; a name already taken (a leftover of an earlier process
/// with the same id) is skipped for the next one. A writer's sweep may remove a probe in use,
/// which costs nothing: the probe was created, and that was the question.
pub fn check_writable(path: &Path) -> Result<(), Error> {
    let target = write_target(path)?;
    let dir = parent_dir(&target);
    fs::create_dir_all(dir).map_err(|e| Error::io(path, e))?;
    open_lock(path, &target)?;
    let prefix = temporary_prefix(&target);
    let mut n = 0;
    let probe = loop {
        let probe = dir.join(format!(
            "{prefix}probe-{}-{n}{TEMPORARY_SUFFIX}",
            std::process::id()
        ));
        match OpenOptions::new().write(true).create_new(true).open(&probe) {
            Ok(_) => break probe,
            // Taken by a leftover, or by another thread of this process probing now.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n + 1 < PROBE_TRIES => n += 1,
            Err(e) => return Err(Error::in_file(path, Error::io(&probe, e))),
        }
    };
    match fs::remove_file(&probe) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(Error::in_file(path, Error::io(&probe, e)))
        }
        _ => Ok(()),
    }
}

/// Opens (creating it) the writers' lock beside `target`, the file behind the ledger `path`.
/// A symbolic link there is not followed (`O_NOFOLLOW`): opening it would create or lock
/// whatever file it points to.
fn open_lock(path: &Path, target: &Path) -> Result<(fs::File, PathBuf), Error> {
    let lock = lock_path(target);
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // No link followed; a named pipe fails at once rather than wait for a reader. The
        // flags' bits fit an i32 on every unix.
        options.custom_flags(
            (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
        );
    }
    let file = options.open(&lock).map_err(|e| {
        if is_symlink(&lock) {
            Error::in_file(path, Error::LockLink { path: lock.clone() })
        } else if is_special(&lock) {
            Error::in_file(path, Error::io(&lock, not_regular()))
        } else {
            Error::in_file(path, Error::io(&lock, e))
        }
    })?;
    if file.metadata().is_ok_and(|m| !m.is_file()) {
        return Err(Error::in_file(path, Error::io(&lock, not_regular())));
    }
    Ok((file, lock))
}

/// Whether `file`, the lock just taken, is still the file at `lock`: one removed or replaced
/// while this writer waited (a `git clean` of a parallel job) locks nobody else out, and a
/// writer that took it would write beside one that took the new file. Off unix, assumed so.
fn still_the_lock(file: &fs::File, lock: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::symlink_metadata(lock)) {
            (Ok(held), Ok(there)) => held.dev() == there.dev() && held.ino() == there.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, lock);
        true
    }
}

/// How many times a writer takes the lock again when the lock file was replaced under it
/// before giving up; each time another process removed or replaced it.
const LOCK_ATTEMPTS: u32 = 100;

/// Reads a ledger file: a missing file is an empty ledger; an empty, truncated or
/// schema-breaking one is an error naming the file (never silently empty).
pub fn read(path: &Path) -> Result<Ledger, Error> {
    match read_bytes(path)? {
        None => Ok(Ledger::new()),
        Some(bytes) => Ledger::from_slice(&bytes).map_err(|e| Error::in_file(path, e)),
    }
}

/// The lock file that serialises writers of the ledger file at `path` (for a symbolic link,
/// pass its [`write_target`]: the lock sits beside the file that is written).
pub fn lock_path(path: &Path) -> PathBuf {
    parent_dir(path).join(LOCK_FILE_NAME)
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Changes the ledger at `path` under an exclusive lock and writes it back atomically.
///
/// Blocks until the lock on `.ledger.lock` beside the ledger is held (the ledger itself is
/// not locked: the rename swaps that file under a waiting writer; for a symbolic link, beside
/// the file it points to, which is the file replaced), then reads the ledger as
/// it is now, hands it to `change`, and writes the result only if `change` changed its rows:
/// a change that leaves them as they were (a lift of a row that is not there) leaves the file
/// byte-identical, however it is laid out, and does not create a missing one. So concurrent
/// writers all land and a reader sees the old file or the new one, never a torn one. A ledger
/// that does not parse is not overwritten. Errors name `path`, never a temporary file.
pub fn update<T>(path: &Path, change: impl FnOnce(&mut Ledger) -> T) -> Result<T, Error> {
    update_waiting(path, |_| (), change)
}

/// [`update`], telling the caller when it has to wait for the lock: when another writer
/// holds it, `waiting` is called with the lock file's path before this blocks, and what it
/// returns is dropped once the lock is held (or taking it failed). A command line can start
/// a timer there and say, after a while, what it waits for; the crate itself prints nothing.
pub fn update_waiting<T, W>(
    path: &Path,
    waiting: impl FnOnce(&Path) -> W,
    change: impl FnOnce(&mut Ledger) -> T,
) -> Result<T, Error> {
    let target = write_target(path)?;
    let dir = parent_dir(&target);
    fs::create_dir_all(dir).map_err(|e| Error::io(path, e))?;
    let mut waiting = Some(waiting);
    let mut wait = None;
    let mut attempts = 0;
    let (lock_file, lock) = loop {
        let (lock_file, lock) = open_lock(path, &target)?;
        match lock_file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                if let Some(waiting) = waiting.take() {
                    wait = Some(waiting(&lock));
                }
                lock_file
                    .lock()
                    .map_err(|e| Error::in_file(path, Error::io(&lock, e)))?;
            }
            Err(TryLockError::Error(e)) => {
                return Err(Error::in_file(path, Error::io(&lock, e)));
            }
        }
        if still_the_lock(&lock_file, &lock) {
            break (lock_file, lock);
        }
        attempts += 1;
        if attempts >= LOCK_ATTEMPTS {
            return Err(Error::in_file(
                path,
                Error::io(
                    &lock,
                    io::Error::other(format!(
                        "the lock file was removed or replaced {LOCK_ATTEMPTS} times while this writer took it"
                    )),
                ),
            ));
        }
    };
    drop(wait);
    remove_stale_temporaries(&target);
    let before = read_bytes(&target).map_err(|e| named(path, e))?;
    let mut ledger = match &before {
        None => Ledger::new(),
        Some(bytes) => Ledger::from_slice(bytes).map_err(|e| Error::in_file(path, e))?,
    };
    // The rendering of the rows as read: what `change` must alter for a write to happen.
    let rendered_before = before.as_ref().map(|_| ledger.render());
    let out = change(&mut ledger);
    let text = ledger.render();
    let changed = match &rendered_before {
        Some(rendered) => *rendered != text,
        None => !ledger.is_empty(),
    };
    if changed {
        // Temporary file in the same directory, fsync, rename, fsync of the directory.
        write_atomic(&target, text.as_bytes()).map_err(|e| match e {
            freezegate_canon::Error::Io { source, .. } => Error::io(path, source),
            other => Error::in_file(path, Error::Write(other)),
        })?;
    }
    // Dropping the file releases the lock; unlock first to say so explicitly.
    lock_file
        .unlock()
        .map_err(|e| Error::in_file(path, Error::io(&lock, e)))?;
    Ok(out)
}

/// An error about the file behind the ledger, renamed to the ledger's own `path`.
fn named(path: &Path, error: Error) -> Error {
    match error {
        Error::Io { source, .. } => Error::io(path, source),
        other => other,
    }
}

/// The start of the names `write_atomic` gives its temporaries (`.ledger.json.<pid>-<n>.tmp`).
fn temporary_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.")
}

/// Removes temporaries left by a writer that died mid-write, and probes of
/// [`check_writable`] left by a process killed between creating and removing one (named
/// `.ledger.json-probe-<pid>` before they were named like temporaries). Only lock holders
/// write temporaries, so under the lock every one of them is stale; a probe in use may go
/// too, which its prober does not mind.
fn remove_stale_temporaries(path: &Path) {
    for leftover in temporaries_beside(path) {
        let _ = fs::remove_file(leftover);
    }
}

/// The writers' temporaries and probes beside the ledger file `path` (see
/// [`remove_stale_temporaries`]), sorted by name.
fn temporaries_beside(path: &Path) -> Vec<PathBuf> {
    let prefix = temporary_prefix(path);
    let old_probe = format!("{}-probe-", prefix.trim_end_matches('.'));
    let Ok(entries) = fs::read_dir(parent_dir(path)) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            (name.starts_with(&prefix) && name.ends_with(TEMPORARY_SUFFIX))
                || name.starts_with(&old_probe)
        })
        .map(|entry| entry.path())
        .collect();
    found.sort();
    found
}

/// Temporary files that writers killed mid-write left beside the ledger at `path` (for a
/// symbolic link, beside its target), sorted: harmless, since readers ignore them and the
/// next write removes them, but `git add -A` would commit them. Nothing when the folder
/// cannot be read. `ledger check` warns about them.
pub fn leftover_temporaries(path: &Path) -> Vec<PathBuf> {
    match write_target(path) {
        Ok(target) => temporaries_beside(&target),
        Err(_) => Vec::new(),
    }
}
