//! Conventions of the workspace, enforced: every Rust file opens with `//!`, no test is
//! ignored or expected to panic, no placeholder macros, no trailing whitespace, no tabs.
//! Each failure names the file and line.

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "snapshots" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn rust_files_follow_the_house_conventions() {
    let root = workspace_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("xtask"), &mut files);
    assert!(
        files.len() > 5,
        "tidy found too few files under {}",
        root.display()
    );

    // Spelled in pieces so this file does not match itself.
    let banned = [
        (concat!("#[", "ignore"), "ignored test"),
        (concat!("#[", "should_panic"), "should_panic test"),
        (concat!("todo", "!("), "placeholder macro"),
        (concat!("unimplemented", "!("), "placeholder macro"),
    ];
    let mut problems = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) => {
                problems.push(format!("{rel}: unreadable: {e}"));
                continue;
            }
        };
        if !text.starts_with("//!") {
            problems.push(format!("{rel}:1: file must open with a `//!` doc comment"));
        }
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.ends_with(' ') || line.ends_with('\t') {
                problems.push(format!("{rel}:{n}: trailing whitespace"));
            }
            if line.contains('\t') {
                problems.push(format!("{rel}:{n}: tab character"));
            }
            for (pattern, what) in banned {
                if line.contains(pattern) {
                    problems.push(format!("{rel}:{n}: {what} ({pattern})"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "tidy:\n{}", problems.join("\n"));
}

#[test]
fn readme_names_the_two_setup_commands_and_ci_runs_the_test_command() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap_or_default();
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap_or_default();
    assert!(
        readme.contains("cargo test --workspace"),
        "README.md must name the test command"
    );
    assert!(
        ci.contains("cargo test --workspace"),
        ".ci/run must run the README's test command"
    );
    assert!(
        readme.contains("cargo xtask "),
        "README.md must name the main job's command"
    );
}
