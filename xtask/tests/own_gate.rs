//! This repository's own gate: every pinned fixture remembers a real failure.
//!
//! Each fixture under `fixtures/` was pinned by `classify` from a failure of an earlier,
//! buggy version of its property's code. Its meta file's `patch_id` names that commit; the
//! `freezegate.toml` of that commit names the buggy oracle. This test replays every fixture
//! against both: the oracle of the pinning commit must fail on it (the fixture reproduces
//! the bug it was pinned for) and today's oracle must pass (the bug stays fixed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use freezegate_canon::fixture::Meta;
use freezegate_gate::config::Config;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root())
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Exit code of `sh -c oracle` in the repository root with `input` on stdin.
fn run_oracle(oracle: &str, input: &[u8]) -> i32 {
    use std::io::Write;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(oracle)
        .current_dir(root())
        .env("PROP_SEED", "20260917")
        .env_remove("FREEZEGATE_WORKER")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sh starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input)
        .expect("the oracle reads its input");
    child.wait().expect("the oracle ends").code().unwrap_or(-1)
}

fn metas() -> Vec<(PathBuf, Meta)> {
    let mut out = Vec::new();
    let fixtures = root().join("fixtures");
    for property in std::fs::read_dir(&fixtures).expect("fixtures/ exists") {
        let dir = property.expect("readable").path();
        for entry in std::fs::read_dir(&dir).expect("readable") {
            let path = entry.expect("readable").path();
            if path.to_string_lossy().ends_with(".meta.json") {
                let meta = Meta::parse(&std::fs::read(&path).expect("readable"))
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.push((path, meta));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_fixture_fails_the_version_it_was_pinned_from_and_passes_today() {
    let today = Config::load(&root()).expect("freezegate.toml is valid");
    let metas = metas();
    assert!(
        metas.len() >= 3,
        "at least three pinned fixtures, found {}",
        metas.len()
    );
    let mut properties: Vec<&str> = metas.iter().map(|(_, m)| m.property_id.as_str()).collect();
    properties.dedup();
    assert!(
        properties.len() >= 3,
        "fixtures of at least three properties"
    );
    for (path, meta) in &metas {
        let commit = meta.patch_id.as_str();
        let then_text = git(&["show", &format!("{commit}:freezegate.toml")]).unwrap_or_else(|| {
            panic!(
                "{}: patch_id {commit} is not a commit of this repository with a freezegate.toml",
                path.display()
            )
        });
        let then = Config::parse(&then_text, Path::new("freezegate.toml@patch_id"))
            .expect("the pinning commit's freezegate.toml is valid");
        let id = meta.property_id.as_str();
        let buggy = then
            .property(id)
            .and_then(|p| p.oracle.clone())
            .expect("the property had an oracle when it was pinned");
        let fixed = today
            .property(id)
            .and_then(|p| p.oracle.clone())
            .expect("the property has an oracle today");
        assert_ne!(buggy, fixed, "{id}: the oracle changed since the pin");
        let fixture = path.with_file_name(format!("{}.json", meta.fixture_id));
        let bytes = std::fs::read(&fixture).expect("the fixture exists");
        assert_eq!(
            run_oracle(&buggy, &bytes),
            1,
            "{}: the oracle of {commit} ({buggy}) must fail on the fixture",
            fixture.display()
        );
        assert_eq!(
            run_oracle(&fixed, &bytes),
            0,
            "{}: today's oracle ({fixed}) must pass on the fixture",
            fixture.display()
        );
    }
}
