//! What the end-to-end tests of the binary share: a temporary git repository cut off from the
//! machine's git configuration, and runs of the real `xtask` in it. Each test file takes what
//! it needs (`mod support;`) and adds its own methods to [`Repo`] in an `impl` of its own.

#![allow(dead_code)] // Each test binary uses a part of this module.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The clock the tests pass as `--now`.
pub const NOW: &str = "2026-12-01T12:00:00Z";

/// An oracle protocol helper for Python test oracles (`from oracle import serve`): `check`
/// returns `None` for a pass or a failure's signature, in both modes of SPEC §4.
pub const ORACLE_PY: &str = r#"
import json, os, sys
def serve(check):
    if os.environ.get("FREEZEGATE_WORKER") == "1":
        for line in sys.stdin:
            m = check(json.loads(line))
            print("pass" if m is None else "fail " + m, flush=True)
        return 0
    m = check(json.load(sys.stdin))
    if m is None:
        return 0
    print("failure: " + m)
    return 1
"#;

/// Variables of the caller's environment that would change what xtask does.
const CLEARED: &[&str] = &[
    "ENV_CLASS",
    "RUNNER_ID",
    "PROP_SEED",
    "REPLAYS",
    "GITHUB_STEP_SUMMARY",
];

/// One finished run of xtask.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// A temporary folder, removed when dropped.
pub struct Repo {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
}

impl Repo {
    /// An empty temporary folder, not yet a repository.
    pub fn empty() -> Repo {
        let tmp = tempfile::tempdir().expect("temp dir");
        Repo {
            dir: tmp.path().to_path_buf(),
            _tmp: tmp,
        }
    }

    /// A repository whose first commit, "suite", holds `files`.
    pub fn new(files: &[(&str, &str)]) -> Repo {
        let repo = Repo::empty();
        for (name, text) in files {
            repo.write(name, text);
        }
        repo.git(&["init", "-q"]);
        repo.commit("suite");
        repo
    }

    /// As [`Repo::new`], with [`ORACLE_PY`] as `oracle.py` (which `files` may replace).
    pub fn with_oracle(files: &[(&str, &str)]) -> Repo {
        let mut all = vec![("oracle.py", ORACLE_PY)];
        all.extend_from_slice(files);
        Repo::new(&all)
    }

    /// Writes `text` to `name` (a path under the folder), making its folders.
    pub fn write(&self, name: &str, text: &str) {
        let path = self.dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// The text of `name`.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).expect("read")
    }

    /// Runs git in the folder; panics unless it succeeds.
    pub fn git(&self, args: &[&str]) {
        git(&self.dir, args);
    }

    /// Commits everything, even nothing.
    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// xtask in the folder (see [`xtask_in`]).
    pub fn command(&self, args: &[&str]) -> Command {
        xtask_in(&self.dir, args)
    }

    /// Runs `classify` on `input` (written to `input.json`) for `property`, as of [`NOW`] with
    /// patch id `test-patch` and the `extra` arguments, to its end.
    pub fn classify_run(&self, property: &str, input: &str, extra: &[&str]) -> Run {
        self.write("input.json", input);
        let mut args = vec![
            "classify",
            "--property",
            property,
            "--input",
            "input.json",
            "--now",
            NOW,
            "--patch-id",
            "test-patch",
        ];
        args.extend_from_slice(extra);
        self.xtask(&args, &[])
    }

    /// Pins `input` for `property` with `classify` (see [`Repo::classify_run`]) and returns
    /// its JSON record; the input file is removed again.
    pub fn classify(&self, property: &str, input: &str) -> serde_json::Value {
        let run = self.classify_run(property, input, &[]);
        std::fs::remove_file(self.dir.join("input.json")).expect("rm");
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("classify record: {e}\n{}\n{}", run.stdout, run.stderr))
    }

    /// Runs `xtask gate` as of [`NOW`] with patch id `test-patch` and the `extra` arguments,
    /// with `env` added, to its end.
    pub fn gate(&self, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let mut args = vec!["gate", "--now", NOW, "--patch-id", "test-patch"];
        args.extend_from_slice(extra);
        self.xtask(&args, env)
    }

    /// `gate --format json` (see [`Repo::gate`]): the run and its report.
    pub fn gate_json(&self) -> (Run, serde_json::Value) {
        let run = self.gate(&["--format", "json"], &[]);
        let report = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("gate report: {e}\n{}\n{}", run.stdout, run.stderr));
        (run, report)
    }

    /// Runs xtask (as [`xtask_in`]) with `env` added, to its end.
    pub fn xtask(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        cmd.output().expect("xtask runs").into()
    }
}

/// Writes an executable file from a child process (`sh -c 'cat > FILE'`). Written from this
/// process, the file's descriptor could be inherited by a child another test thread forks at
/// that moment, and running the file while that child still holds it fails with "Text file
/// busy" (`ETXTBSY`); this process never holds it open.
pub fn write_executable(path: &Path, text: &str) {
    use std::io::Write as _;
    let mut writer = Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh runs");
    writer
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    assert!(writer.wait().expect("sh ends").success());
}

/// A fresh ed25519 signing key: the folder that holds it (removed when dropped), the private
/// key's path, and its `freeze/allowed_signers` line for `alice@example.com` (with its
/// newline).
pub fn signing_key() -> (tempfile::TempDir, PathBuf, String) {
    let keys = tempfile::tempdir().expect("temp dir");
    let key = keys.path().join("alice");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen runs");
    assert!(made.success());
    let public = std::fs::read_to_string(keys.path().join("alice.pub")).expect("public key");
    let signers = format!("alice@example.com namespaces=\"git\" {}\n", public.trim());
    (keys, key, signers)
}

impl Repo {
    /// Amends the last commit, unchanged, with an SSH signature by the private `key`.
    pub fn amend_signed(&self, key: &Path) {
        let signing = format!("user.signingkey={}", key.display());
        self.git(&[
            "-c",
            "gpg.format=ssh",
            "-c",
            &signing,
            "commit",
            "-q",
            "--amend",
            "--no-edit",
            "-S",
        ]);
    }
}

/// `(rule, file)` of each blocking finding of a gate's JSON report, in report order.
pub fn blocking_findings(report: &serde_json::Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["blocking"] == true)
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_owned(),
                f["file"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// xtask with `-C dir` and `args`, without the variables of [`CLEARED`], with the real
/// Python first on the `PATH` (see [`python_path`]).
pub fn xtask_in(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    if let Some(path) = python_path() {
        cmd.env("PATH", path);
    }
    cmd.arg("-C").arg(dir).args(args);
    for var in CLEARED {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs git in `dir` with a fixed identity and fixed dates (the same commits get the same ids
/// on every run, for snapshots), no signing and no configuration of the machine's; panics
/// unless it succeeds.
pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-11-30T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-30T10:00:00Z")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .status()
        .expect("git runs")
        .success();
    assert!(ok, "git {args:?}");
}

/// `PATH` with the real Python interpreter's folder first: where `python3` is a launcher
/// script (pyenv), each of the hundreds of oracle starts would pay for it. `None` when it
/// cannot be told.
pub fn python_path() -> Option<OsString> {
    static PATH: OnceLock<Option<OsString>> = OnceLock::new();
    PATH.get_or_init(|| {
        let out = Command::new("python3")
            .args([
                "-c",
                "import os, sys; print(os.path.dirname(os.path.realpath(sys.executable)))",
            ])
            .output()
            .ok()?;
        let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
        if !dir.join("python3").exists() {
            return None;
        }
        let mut paths = vec![dir];
        paths.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(paths).ok()
    })
    .clone()
}
