//! The files a gate run writes: its reports (`--out`, `--json-out`, …), which hold this run's
//! report or do not exist, and the queues it appends to (`--infra-out`, a CI step summary).
//!
//! [`prepare`] runs before anything else: it refuses outputs that would write where the
//! caller did not mean (the gate's own files, through a link a patch could place, two
//! outputs on one file) and removes what stands at the report paths. [`check_writable`]
//! then tries each output, so that a path that cannot be written stops the run before any
//! oracle runs, and [`write()`] and [`append`] write them when the report is out.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

/// What an output is to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// A report: this run's, or nothing ([`prepare`] removes what stands there).
    Report,
    /// A queue the run appends to (`--infra-out`): kept as it is, never a link inside the
    /// root.
    Queue,
    /// A file the CI runner names (`$GITHUB_STEP_SUMMARY`), appended to; the runner, not the
    /// patch, chose its folder.
    RunnerFile,
}

/// One output of a run: the flag (or variable) that names it, its path, and its role.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Output {
    /// The flag or variable that names it, as messages show it (`--json-out`).
    pub name: &'static str,
    /// Its path, absolute or relative to the root.
    pub path: PathBuf,
    /// What it is to the run.
    pub role: Role,
}

impl Output {
    /// The output `name` at `path`, with `role`.
    pub fn new(name: &'static str, path: impl Into<PathBuf>, role: Role) -> Output {
        Output {
            name,
            path: path.into(),
            role,
        }
    }
}

/// Why an output cannot be used or written (bad input: exit 3).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// It would write where the caller did not mean.
    #[error("{name} {}: {why}", path.display())]
    Refused {
        /// The flag that names it.
        name: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        why: &'static str,
    },
    /// It names the same file as another output.
    #[error("{name} {} is also {other}: give each output its own file", path.display())]
    Shared {
        /// The flag that names it.
        name: &'static str,
        /// Its path.
        path: PathBuf,
        /// The output (or `the standard output of --format`) it shares its file with.
        other: &'static str,
    },
    /// An earlier report at its path cannot be removed.
    #[error("cannot remove the earlier {name} report {}", path.display())]
    Remove {
        /// The flag that names it.
        name: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It cannot be opened for writing.
    #[error("cannot open {name} {}", path.display())]
    Open {
        /// The flag that names it.
        name: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A queue or runner file cannot be appended to.
    #[error("cannot write {name} {}", path.display())]
    Append {
        /// The flag that names it.
        name: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A report cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// Its path.
        path: PathBuf,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// `path` with `.` and `..` taken away as written, links not followed.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` as the file system names it: resolved (links, `..`) when it exists; else, after
/// the links that lead nowhere yet (the file a write would create), its folder resolved when
/// that exists.
fn resolved(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        if let Ok(real) = std::fs::canonicalize(&path) {
            return real;
        }
        match std::fs::read_link(&path) {
            Ok(target) => {
                path = path
                    .parent()
                    .map_or(target.clone(), |dir| dir.join(&target))
            }
            Err(_) => break,
        }
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
        .map_or_else(|_| path.to_path_buf(), |dir| dir.join(name)),
        _ => path.to_path_buf(),
    }
}

/// What a path names: the file (device and inode) when it exists, else the path resolved; a
/// character device (`/dev/null`, a terminal) is no file two outputs could spoil.
#[derive(PartialEq, Eq)]
enum Identity {
    File(u64, u64),
    Path(PathBuf),
    Device(usize),
}

fn identity(path: &Path, index: usize) -> Identity {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_char_device() => Identity::Device(index),
        Ok(m) => Identity::File(m.dev(), m.ino()),
        Err(_) => Identity::Path(resolved(path)),
    }
}

/// Makes `outputs` of a run in the repository at `root` ready, before anything else runs:
///
/// - refuses (usage errors, before anything is touched) an output among the gate's own files
///   (`freezegate.toml`, `freeze/`, `fixtures/` of the root; through a link too, one that
///   leads nowhere yet included), which it would replace; one inside the root whose folder is
///   a link out of it (a patch could place that link and aim the run's writes, and the
///   removal of an earlier report, anywhere); a queue that is a link inside the root; `-`,
///   which is no file; and two outputs naming one file however spelt (`/dev/stdout` and
///   `/proc/self/fd/1` are one pipe), or one naming the standard output when
///   `stdout_has_report`;
/// - then removes what stands at the report paths, so that each holds this run's report or
///   does not exist: a run stopped before its report (a signal, a job timeout) leaves none,
///   never an earlier run's, nor one a patch committed there for an artifact upload to
///   publish. A regular file goes, and so does a link inside the root (the patch's to
///   place); a link out of the root (`/dev/stdout`), a pipe or a device is where the caller
///   wants the report, and stays.
pub fn prepare(
    root: &Path,
    outputs: &[Output],
    stdout_has_report: bool,
) -> Result<(), OutputError> {
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let written_root = lexical(root);
    for out in outputs {
        let refuse = |why: &'static str| {
            Err(OutputError::Refused {
                name: out.name,
                path: out.path.clone(),
                why,
            })
        };
        if out.path.as_os_str() == "-" {
            return refuse("standard output holds the report of --format: name a file");
        }
        let as_written = lexical(&root.join(&out.path));
        let inside = as_written.starts_with(&written_root) || as_written.starts_with(&real_root);
        let folder_outside = as_written
            .parent()
            .and_then(|dir| std::fs::canonicalize(dir).ok())
            .is_some_and(|dir| !dir.starts_with(&real_root));
        if out.role != Role::RunnerFile && inside && folder_outside {
            return refuse(
                "its folder is a link out of the repository: name the folder it points to",
            );
        }
        if out.role == Role::Queue
            && inside
            && std::fs::symlink_metadata(&out.path).is_ok_and(|m| m.file_type().is_symlink())
        {
            return refuse("a link inside the repository: name the queue's own file");
        }
        let here = resolved(&root.join(&out.path));
        if here == real_root.join(crate::config::CONFIG_FILE)
            || here.starts_with(real_root.join("freeze"))
            || here.starts_with(real_root.join(freezegate_canon::fixture::FIXTURES_DIR))
        {
            return refuse(
                "the gate's own files (freezegate.toml, freeze/, fixtures/) take no output",
            );
        }
    }
    let stdout = Output::new(
        "the standard output of --format",
        "/dev/stdout",
        Role::RunnerFile,
    );
    let named: Vec<&Output> = stdout_has_report
        .then_some(&stdout)
        .into_iter()
        .chain(outputs)
        .collect();
    let identities: Vec<Identity> = named
        .iter()
        .enumerate()
        .map(|(i, out)| identity(&root.join(&out.path), i))
        .collect();
    for (i, out) in named.iter().enumerate() {
        if let Some(at) = identities[..i].iter().position(|id| *id == identities[i]) {
            return Err(OutputError::Shared {
                name: out.name,
                path: out.path.clone(),
                other: named[at].name,
            });
        }
    }
    for out in outputs.iter().filter(|o| o.role == Role::Report) {
        let path = root.join(&out.path);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        let in_root = || {
            path.parent()
                .and_then(|dir| std::fs::canonicalize(dir).ok())
                .is_some_and(|dir| dir.starts_with(&real_root))
        };
        if kind.is_file() || (kind.is_symlink() && in_root()) {
            std::fs::remove_file(&path).map_err(|source| OutputError::Remove {
                name: out.name,
                path: out.path.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

/// Opens each output as the run will write it, before it starts, so that a path that cannot
/// be written is bad input at once, not after every oracle has run and the report is lost.
/// One that exists is opened to append, which changes nothing in it. For one that does not
/// (or a link to a file that does not), a probe file (`.<name>.probe-<pid>.tmp`) is created
/// beside it (beside the link's target) and removed again: never the file itself, so that a run killed in between leaves no empty report where a reader
/// (an artifact upload after a timeout) would take it for this run's. A pipe or a device is
/// not tried: opening a named pipe and closing it again ends its reader's input.
pub fn check_writable(outputs: &[Output]) -> Result<(), OutputError> {
    for out in outputs {
        let path = &out.path;
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            continue;
        }
        let open_error = |source| OutputError::Open {
            name: out.name,
            path: path.clone(),
            source,
        };
        // What the write will create: the path, or for a link to nothing (out of the root:
        // `prepare` refuses one inside it) the file it names, which the write creates
        // through the link.
        let new_file = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() && std::fs::metadata(path).is_err() => {
                match std::fs::read_link(path) {
                    Ok(target) => path.parent().unwrap_or(Path::new(".")).join(target),
                    Err(e) => return Err(open_error(e)),
                }
            }
            Ok(_) => {
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .map_err(open_error)?;
                continue;
            }
            Err(_) => path.clone(),
        };
        let probe = probe_path(&new_file).ok_or_else(|| {
            open_error(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path names no file",
            ))
        })?;
        let _ = std::fs::remove_file(&probe);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map_err(open_error)?;
        // Best effort: a probe left behind is a hidden, empty file beside the report.
        let _ = std::fs::remove_file(&probe);
    }
    Ok(())
}

/// The probe [`check_writable`] creates beside `path`: `.<name>.probe-<pid>.tmp`.
fn probe_path(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy();
    Some(path.with_file_name(format!(".{name}.probe-{}.tmp", std::process::id())))
}

/// Writes a report to `path`. A new file is written whole, by a rename, so that a reader
/// never sees half of it; what is still there after [`prepare`] (a pipe, a device, a process
/// substitution's `/dev/fd/N`, a link out of the root) is written in place.
pub fn write(path: &Path, text: &str) -> Result<(), OutputError> {
    let written = if std::fs::symlink_metadata(path).is_ok() {
        std::fs::write(path, text).map_err(|e| Box::new(e) as _)
    } else {
        freezegate_canon::fixture::write_atomic(path, text.as_bytes()).map_err(|e| Box::new(e) as _)
    };
    written.map_err(|source| OutputError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Appends `text` to the queue or runner file `out` (created if need be).
pub fn append(out: &Output, text: &str) -> Result<(), OutputError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out.path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|source| OutputError::Append {
            name: out.name,
            path: out.path.clone(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report path's earlier file goes, a queue's stays; the gate's own files, a file named
    /// twice and a folder linked out of the root are refused before anything is touched.
    #[test]
    fn prepare_removes_earlier_reports_and_refuses_what_would_aim_a_write() {
        let root = tempfile::tempdir().expect("temp dir");
        let root = root.path();
        std::fs::write(root.join("old.json"), "stale").expect("report");
        std::fs::write(root.join("queue.jsonl"), "{}\n").expect("queue");
        let outs = [
            Output::new("--json-out", "old.json", Role::Report),
            Output::new("--infra-out", "queue.jsonl", Role::Queue),
        ];
        prepare(root, &outs, false).expect("prepared");
        assert!(!root.join("old.json").exists());
        assert_eq!(
            std::fs::read_to_string(root.join("queue.jsonl")).expect("queue"),
            "{}\n"
        );

        std::fs::write(root.join("kept.json"), "kept").expect("report");
        let outside = tempfile::tempdir().expect("temp dir");
        std::os::unix::fs::symlink(outside.path(), root.join("reports")).expect("link");
        for (outs, why) in [
            (
                vec![Output::new("--out", "freeze/ledger.json", Role::Report)],
                "the gate's own files",
            ),
            (
                vec![
                    Output::new("--out", "kept.json", Role::Report),
                    Output::new("--json-out", "./kept.json", Role::Report),
                ],
                "is also --out",
            ),
            (
                vec![Output::new("--out", "reports/r.json", Role::Report)],
                "its folder is a link out of the repository",
            ),
        ] {
            let error = prepare(root, &outs, false)
                .expect_err("refused")
                .to_string();
            assert!(error.contains(why), "{error}");
            assert_eq!(
                std::fs::read_to_string(root.join("kept.json")).expect("kept"),
                "kept"
            );
        }
    }

    /// Checking a new report path leaves nothing behind (its probe is a hidden file beside
    /// it, gone again), an existing file unchanged, and a path that cannot be created is an
    /// error naming the option and the path.
    #[test]
    fn check_writable_probes_beside_a_new_report_and_leaves_nothing() {
        let root = tempfile::tempdir().expect("temp dir");
        let new = root.path().join("r.json");
        let kept = root.path().join("kept.json");
        std::fs::write(&kept, "kept").expect("kept");
        check_writable(&[
            Output::new("--json-out", &new, Role::Report),
            Output::new("--infra-out", &kept, Role::Queue),
        ])
        .expect("writable");
        let left: Vec<_> = std::fs::read_dir(root.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, [std::ffi::OsString::from("kept.json")]);
        assert_eq!(std::fs::read_to_string(&kept).expect("kept"), "kept");
        assert_eq!(
            probe_path(&new).and_then(|p| p.file_name().map(|n| n.to_owned())),
            Some(format!(".r.json.probe-{}.tmp", std::process::id()).into())
        );
        // A link to a file not created yet (a report folder set up by the job) is checked
        // beside its target, and nothing is left there either.
        let elsewhere = tempfile::tempdir().expect("temp dir");
        let linked = root.path().join("linked.json");
        std::os::unix::fs::symlink(elsewhere.path().join("r.json"), &linked).expect("link");
        check_writable(&[Output::new("--json-out", &linked, Role::Report)]).expect("writable");
        assert_eq!(
            std::fs::read_dir(elsewhere.path()).expect("list").count(),
            0,
            "nothing created beside the target"
        );
        let nowhere = root.path().join("nowhere.json");
        std::os::unix::fs::symlink(elsewhere.path().join("gone/r.json"), &nowhere).expect("link");
        assert!(check_writable(&[Output::new("--out", &nowhere, Role::Report)]).is_err());
        let under_a_file = kept.join("r.json");
        let error = check_writable(&[Output::new("--out", &under_a_file, Role::Report)])
            .expect_err("not a folder")
            .to_string();
        assert!(
            error.contains("--out") && error.contains(&under_a_file.display().to_string()),
            "{error}"
        );
    }

    /// A new report is written whole; a pipe or device that stands at the path is written
    /// through.
    #[test]
    fn write_creates_a_report_and_writes_through_a_device() {
        let root = tempfile::tempdir().expect("temp dir");
        let path = root.path().join("r.json");
        write(&path, "{}\n").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("report"), "{}\n");
        write(Path::new("/dev/null"), "x").expect("written through");
        assert!(
            std::fs::metadata("/dev/null")
                .map(|m| !m.is_file())
                .unwrap_or(false)
        );
    }
}
