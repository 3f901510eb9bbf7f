//! Shared helpers of the patch-integrity tests: isolated git repositories and SSH keys made with
//! the real `git` and `ssh-keygen`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use freezegate_gate::patch::{PatchOptions, PatchReport, check_patch};

/// Environment that isolates every git process from the machine's configuration.
pub const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_AUTHOR_NAME", "Patch Tester"),
    ("GIT_AUTHOR_EMAIL", "tester@example.invalid"),
    ("GIT_COMMITTER_NAME", "Patch Tester"),
    ("GIT_COMMITTER_EMAIL", "tester@example.invalid"),
    ("GIT_AUTHOR_DATE", "2026-09-17T12:00:00Z"),
    ("GIT_COMMITTER_DATE", "2026-09-17T12:00:00Z"),
];

/// An ed25519 key pair made with `ssh-keygen`.
pub struct Key {
    /// The private key file (for `user.signingkey`).
    pub private: PathBuf,
    /// The public key line (`ssh-ed25519 AAAA… comment`).
    pub public: String,
    /// The principal used for it in allowed-signers files.
    pub principal: String,
}

impl Key {
    /// Its allowed-signers line.
    pub fn allowed_line(&self) -> String {
        format!(
            "{} namespaces=\"git\" {}\n",
            self.principal,
            self.public.trim()
        )
    }
}

/// The keys of the patch tests: made once under the build's temporary directory
/// (`CARGO_TARGET_TMPDIR`, removed by `cargo clean`), never in the system's, and reused by
/// every test and every later run.
pub struct Keys {
    /// A human reviewer, listed in the base revision's allowed signers.
    pub alice: Key,
    /// A key the patch author controls, never listed at the base revision.
    pub mallory: Key,
}

fn make_key(dir: &Path, name: &str) {
    let private = dir.join(name);
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&private)
        .status()
        .expect("ssh-keygen runs");
    assert!(status.success(), "ssh-keygen failed");
}

fn read_key(dir: &Path, name: &str) -> Key {
    let public = std::fs::read_to_string(dir.join(format!("{name}.pub"))).expect("public key");
    Key {
        private: dir.join(name),
        public,
        principal: format!("{name}@example.org"),
    }
}

/// The shared keys.
pub fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let dir = tmp.join("patch-keys");
        if !dir.join("mallory.pub").exists() {
            // Made aside and renamed into place, so a test binary running at the same time
            // never sees half a set; the loser of a race drops its own.
            let fresh = tempfile::Builder::new()
                .prefix("patch-keys.")
                .tempdir_in(tmp)
                .expect("temp dir");
            make_key(fresh.path(), "alice");
            make_key(fresh.path(), "mallory");
            if std::fs::rename(fresh.path(), &dir).is_err() {
                assert!(dir.join("mallory.pub").exists(), "cannot keep the keys");
            }
        }
        Keys {
            alice: read_key(&dir, "alice"),
            mallory: read_key(&dir, "mallory"),
        }
    })
}

/// A temporary repository on branch `main`.
pub struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    /// A new empty repository.
    pub fn new() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    /// Its root.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs git in the repository; panics on failure; returns trimmed stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.path())
            .args(args)
            .envs(GIT_ENV.iter().copied())
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Writes a file (creating folders).
    pub fn write(&self, path: &str, content: &str) {
        let full = self.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, content).expect("write");
    }

    /// Deletes a file.
    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.path().join(path)).expect("remove");
    }

    /// Commits everything, unsigned; returns the commit id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// Commits everything, signed with `key` (SSH); returns the commit id.
    pub fn commit_signed(&self, message: &str, key: &Key) -> String {
        self.git(&["add", "-A"]);
        let signing = format!("user.signingkey={}", key.private.display());
        self.git(&[
            "-c",
            "gpg.format=ssh",
            "-c",
            &signing,
            "commit",
            "-q",
            "--allow-empty",
            "-S",
            "-m",
            message,
        ]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// Writes one file and commits it, signed with `key` when given; returns the commit id.
    pub fn commit_and_write(&self, path: &str, content: &str, key: Option<&Key>) -> String {
        self.write(path, content);
        match key {
            Some(key) => self.commit_signed(&format!("change {path}"), key),
            None => self.commit(&format!("change {path}")),
        }
    }

    /// Starts branch `name` at `at` and checks it out.
    pub fn branch(&self, name: &str, at: &str) {
        self.git(&["checkout", "-q", "-B", name, at]);
    }

    /// The options every check uses: isolated git, head `head`.
    pub fn options(head: &str) -> PatchOptions {
        let mut options = PatchOptions::default();
        options.head = head.to_string();
        options.git_env = GIT_ENV
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        options
    }

    /// `check_patch(base..HEAD)`.
    pub fn check(&self, base: &str) -> PatchReport {
        self.check_head(base, "HEAD")
    }

    /// `check_patch(base..head)`.
    pub fn check_head(&self, base: &str, head: &str) -> PatchReport {
        check_patch(self.path(), base, &Self::options(head)).expect("the patch can be judged")
    }
}

/// The paths of the report's violations, with their commits.
pub fn violations(report: &PatchReport) -> Vec<(String, String)> {
    report
        .violations
        .iter()
        .map(|v| (v.commit.clone(), v.path.clone()))
        .collect()
}
