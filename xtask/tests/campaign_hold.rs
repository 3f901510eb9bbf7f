//! A pinned fixture that blocks the run holds back its property's campaign: an unfrozen
//! flicker is as blocking as a regression, so the campaign stops at its first failing case
//! instead of pinning more inputs of what is most likely the same bug, run after run.
//! End to end through the real binary, in a temporary git repository with a Python oracle.

use std::path::PathBuf;
use std::process::{Command, Stdio};

const NOW: &str = "2026-12-01T12:00:00Z";

/// The oracle protocol helper the test oracles import.
const ORACLE_PY: &str = r#"
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

/// `n` from 100 on flickers (fails on even replays); `n` from 1000 on always fails.
const FLAKE_AND_BUG: &str = "import os, sys\nfrom oracle import serve\ndef check(doc):\n    n = doc.get('n', 0)\n    if n >= 1000:\n        return 'n too big'\n    if n >= 100 and int(os.environ.get('FREEZEGATE_REPLAY', '0')) % 2 == 0:\n        return 'flaky cache'\n    return None\nsys.exit(serve(check))\n";

struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Repo {
    fn new(files: &[(&str, &str)]) -> Repo {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().to_path_buf();
        let repo = Repo { _tmp: tmp, dir };
        repo.write("oracle.py", ORACLE_PY);
        for (name, text) in files {
            repo.write(name, text);
        }
        repo.git(&["init", "-q"]);
        repo.commit("suite");
        repo
    }

    fn write(&self, name: &str, text: &str) {
        let path = self.dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn git(&self, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    }

    fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
    }

    fn xtask(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
        if let Some(path) = python_path() {
            cmd.env("PATH", path);
        }
        cmd.arg("-C").arg(&self.dir).args(args);
        for var in [
            "ENV_CLASS",
            "RUNNER_ID",
            "PROP_SEED",
            "REPLAYS",
            "GITHUB_STEP_SUMMARY",
        ] {
            cmd.env_remove(var);
        }
        let out = cmd.output().expect("xtask runs");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Pins `input` for `property` with classify and returns the record.
    fn classify(&self, property: &str, input: &str) -> serde_json::Value {
        self.write("input.json", input);
        let run = self.xtask(&[
            "classify",
            "--property",
            property,
            "--input",
            "input.json",
            "--now",
            NOW,
            "--patch-id",
            "test-patch",
        ]);
        std::fs::remove_file(self.dir.join("input.json")).expect("rm");
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("classify record: {e}\n{}\n{}", run.stdout, run.stderr))
    }

    /// The names of the files in `fixtures/<property>/`, sorted.
    fn fixture_files(&self, property: &str) -> Vec<String> {
        let dir = self.dir.join("fixtures").join(property);
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .expect("fixture folder")
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }
}

/// `PATH` with the real Python interpreter's directory first: where `python3` is a launcher
/// script (pyenv), each oracle start would pay for it.
fn python_path() -> Option<std::ffi::OsString> {
    static PATH: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
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

/// A generator printing `{"n": v}` for each of `values`.
fn numbers(values: &[u32]) -> String {
    let lines: Vec<String> = values.iter().map(|v| format!("{{\"n\": {v}}}")).collect();
    format!("print('''{}''')\n", lines.join("\n"))
}

#[test]
fn an_unfrozen_flicker_holds_back_its_campaign() {
    // The flake's own origin first, then a stable failure the campaign would otherwise shrink
    // and pin.
    let mut values = vec![150];
    values.extend(1..=19);
    values.push(5000);
    let toml = format!(
        "[policy]\nseed = 20260917\nreplays = 3\ntimeout_ms = 5000\njobs = 2\nmin_cases = 10\n\n\
         [[property]]\nid = \"p.f\"\noracle = \"python3 f.py\"\ngenerate = \"python3 gen.py\"\nworker = true\ncases = {}\n",
        values.len()
    );
    let repo = Repo::new(&[
        ("freezegate.toml", &toml),
        ("f.py", FLAKE_AND_BUG),
        ("gen.py", &numbers(&values)),
    ]);
    let record = repo.classify("p.f", r#"{"n": 150}"#);
    assert_eq!(record["action"], "freeze_after_pin", "{record}");
    let flake = record["fixture_id"]
        .as_str()
        .expect("fixture id")
        .to_owned();
    repo.commit("pin the flake, freeze nothing");
    let pinned = repo.fixture_files("p.f");

    let run = repo.xtask(&[
        "gate",
        "--now",
        NOW,
        "--patch-id",
        "test-patch",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    assert_eq!(run.code, 1, "the unfrozen flicker blocks: {}", run.stdout);
    let fixtures = report["fixtures"].as_array().expect("fixtures");
    assert_eq!(fixtures.len(), 1, "{}", run.stdout);
    assert_eq!(fixtures[0]["fixture_id"], flake.as_str());
    assert_eq!(fixtures[0]["status"], "flicker");

    // The campaign stopped at its first failing case, the flake's origin: the stable failure
    // at the end was neither run nor shrunk, and nothing new was pinned.
    let campaign = &report["campaigns"][0];
    assert_eq!(campaign["action"], "already_pinned", "{campaign}");
    assert_eq!(campaign["failing_case"], 0, "{campaign}");
    assert_eq!(campaign["shrinks"], 0, "{campaign}");
    assert_eq!(campaign["cases_run"], 1, "{campaign}");
    let note = campaign["note"].as_str().expect("note");
    assert!(
        note.contains(&format!(
            "pinned fixture {flake} of this property blocks this run already"
        )),
        "{note}"
    );
    assert_eq!(report["summary"]["new_failures"], 0, "{}", run.stdout);
    assert_eq!(repo.fixture_files("p.f"), pinned);
}
