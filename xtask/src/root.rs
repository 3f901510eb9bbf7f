//! The repository root: where oracle commands run (SPEC §4: `sh -c` in the repository root) and
//! where the repository's commands (`gate`, `classify`, `freeze`, `ledger`) find
//! `freezegate.toml`, `fixtures/` and `freeze/`, from whichever subdirectory they are started.

use std::path::{Path, PathBuf};

use freezegate_gate::config::CONFIG_FILE;

/// The root for a command started in `start`: the nearest directory at or above it that holds
/// `freezegate.toml`; else the top of the git work tree around it (a `.git` directory or
/// file); else `start` itself.
pub fn find(start: &Path) -> PathBuf {
    let holding = |name: &str| {
        start
            .ancestors()
            .find(|dir| dir.join(name).exists())
            .map(Path::to_path_buf)
    };
    holding(CONFIG_FILE)
        .or_else(|| holding(".git"))
        .unwrap_or_else(|| start.to_path_buf())
}

/// `path` as given on the command line, made absolute against `start` so that it keeps its
/// meaning once the process works in the root. `-` (standard input) stays as it is.
pub fn anchor(start: &Path, path: &mut Option<PathBuf>) {
    if let Some(p) = path
        && p.is_relative()
        && p.as_os_str() != "-"
    {
        *p = start.join(&*p);
    }
}
