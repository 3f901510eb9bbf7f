//! File arguments of commands that act in the repository root
//! ([`freezegate_gate::config::repository_root`]) keep the meaning they had where they
//! were typed.

use std::path::{Path, PathBuf};

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
