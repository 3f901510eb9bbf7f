//! One oracle command in its two modes, end to end: the Python oracle recipe of
//! docs/gate.md and the demo's `serve` give an input the same label and signature as a worker
//! and as a fresh process, whatever the property raises or prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const NOW: &str = "2026-12-01T12:00:00Z";

/// docs/gate.md, whose Python recipe these tests run as written.
const GATE_DOCS: &str = include_str!("../../docs/gate.md");

/// The demo's protocol helper for Python properties.
const DEMO_ORACLE: &str = include_str!("../../crates/gate/demo/oracle.py");

/// The property the recipe imports: it prints (stdout must stay the worker's) and divides by
/// the number of lines, so an invoice without lines raises `ZeroDivisionError`, and one
/// without a `lines` key `KeyError` (another failure, which the shrinker must not slip to).
const TEST_INVOICE: &str = "def cached_total_equals_fresh_sum(doc):\n    print('checking', doc)\n    lines = doc['lines']\n    average = sum(l['cents'] for l in lines) // len(lines)\n    assert average >= 0\n";

/// `PROP_CASES` invoices; every seventh has no lines.
const GEN: &str = "import json, os\nfor i in range(int(os.environ['PROP_CASES'])):\n    lines = [] if i % 7 == 3 else [{'cents': 100 + i, 'sku': 'x'}]\n    print(json.dumps({'currency': 'EUR', 'lines': lines, 'note': 'n' * i}))\n";

/// The Python block of docs/gate.md that starts with `# tests/oracles/invoice.py`.
fn recipe() -> &'static str {
    let start = GATE_DOCS
        .find("```python\n# tests/oracles/invoice.py")
        .expect("docs/gate.md shows the oracle recipe")
        + "```python\n".len();
    let len = GATE_DOCS[start..].find("```").expect("the block ends");
    &GATE_DOCS[start..start + len]
}

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
        let repo = Repo {
            dir: tmp.path().to_path_buf(),
            _tmp: tmp,
        };
        for (name, text) in files {
            repo.write(name, text);
        }
        repo.git(&["init", "-q"]);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "suite"]);
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

    fn xtask(&self, args: &[&str], stdin: Option<&Path>) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
        cmd.arg("-C").arg(&self.dir).args(args);
        for var in ["ENV_CLASS", "RUNNER_ID", "PROP_SEED", "REPLAYS"] {
            cmd.env_remove(var);
        }
        if let Some(path) = stdin {
            cmd.stdin(std::fs::File::open(path).expect("input"));
        }
        let out = cmd.output().expect("xtask runs");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn gate(&self) -> (Run, serde_json::Value) {
        let run = self.xtask(
            &[
                "gate",
                "--now",
                NOW,
                "--patch-id",
                "test-patch",
                "--format",
                "json",
            ],
            None,
        );
        let report = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("report: {e}\n{}\n{}", run.stdout, run.stderr));
        (run, report)
    }
}

fn config(worker: bool, oracle: &str) -> String {
    format!(
        "[policy]\nseed = 20260917\nreplays = 3\ntimeout_ms = 5000\njobs = 2\nmin_cases = 10\n\n\
         [[property]]\nid = \"invoice\"\noracle = \"{oracle}\"\ngenerate = \"python3 gen.py\"\ncases = 10\nworker = {worker}\n"
    )
}

/// The recipe's repository: `python3 -m tests.oracles.invoice` run from the root.
fn recipe_repo(worker: bool) -> Repo {
    Repo::new(&[
        (
            "freezegate.toml",
            &config(worker, "python3 -m tests.oracles.invoice"),
        ),
        ("gen.py", GEN),
        ("tests/__init__.py", ""),
        ("tests/oracles/__init__.py", ""),
        ("tests/oracles/invoice.py", recipe()),
        ("tests/test_invoice.py", TEST_INVOICE),
    ])
}

/// A `ZeroDivisionError` in the property blocks whether campaigns run a worker or a process
/// per case, with the same minimal input; the property's prints do not matter; and the
/// replays (fresh processes) name the failure as the worker did.
#[test]
fn the_docs_recipe_blocks_on_any_exception_in_both_modes() {
    let mut minimal = Vec::new();
    for worker in [true, false] {
        let repo = recipe_repo(worker);
        let (run, report) = repo.gate();
        let campaign = &report["campaigns"][0];
        assert_eq!(
            (worker, run.code, &campaign["status"], &campaign["action"]),
            (worker, 1, &"failure".into(), &"pin_fixture".into()),
            "{}\n{}",
            run.stdout,
            run.stderr
        );
        assert_eq!(campaign["infra"], serde_json::Value::Null, "{}", run.stdout);
        assert_eq!(
            campaign["labels"],
            serde_json::json!(["assert_fail", "assert_fail", "assert_fail"])
        );
        minimal.push(campaign["minimal"].clone());
        // The pinned fixture's replays, fresh processes, name it the same way (without the
        // campaign, which would now shrink its other failing cases too).
        repo.write(
            "freezegate.toml",
            &config(worker, "python3 -m tests.oracles.invoice")
                .replace("generate = \"python3 gen.py\"\n", ""),
        );
        let (run, report) = repo.gate();
        assert_eq!(run.code, 1, "{}", run.stderr);
        let fixture = &report["fixtures"][0];
        assert_eq!(fixture["status"], "regression", "{}", run.stdout);
        assert_eq!(fixture["signature"], "ZeroDivisionError", "{}", run.stdout);
    }
    assert_eq!(minimal[0], r#"{"lines":[]}"#);
    assert_eq!(minimal[0], minimal[1]);
}

/// The worker's answers and a fresh process agree on label and signature: `xtask shrink
/// --worker` confirms its result in a fresh process only when both fail the same way.
#[test]
fn the_docs_recipe_gives_the_same_signature_as_a_worker_and_as_a_process() {
    let repo = recipe_repo(true);
    repo.write(
        "input.json",
        r#"{"currency": "EUR", "lines": [], "note": "nnn"}"#,
    );
    let input = repo.dir.join("input.json");
    for extra in [&["--worker"][..], &[]] {
        let mut args = vec!["shrink", "--oracle", "python3 -m tests.oracles.invoice"];
        args.extend_from_slice(extra);
        let run = repo.xtask(&args, Some(&input));
        assert_eq!(run.code, 0, "{extra:?}: {}", run.stderr);
        assert_eq!(run.stdout, "{\"lines\":[]}\n");
        assert!(
            run.stderr
                .contains("keeping the failure signature \"ZeroDivisionError\""),
            "{}",
            run.stderr
        );
        assert_eq!(
            run.stderr.contains("confirmed in a fresh process"),
            !extra.is_empty(),
            "{}",
            run.stderr
        );
    }
}

/// What breaks before the property runs is "cannot test" in both modes: an infra item
/// (exit 2), never a pinned failure.
#[test]
fn the_docs_recipe_is_an_infra_item_when_the_property_cannot_be_imported() {
    for worker in [true, false] {
        let repo = recipe_repo(worker);
        repo.write(
            "tests/test_invoice.py",
            "raise RuntimeError('no database')\n",
        );
        let (run, report) = repo.gate();
        let campaign = &report["campaigns"][0];
        assert_eq!(
            (worker, run.code, &campaign["status"]),
            (worker, 2, &"infra".into()),
            "{}\n{}",
            run.stdout,
            run.stderr
        );
        assert!(!repo.dir.join("fixtures").exists());
    }
}

/// The demo's `serve`: a property that raises and prints fails the same way in both modes.
#[test]
fn the_demo_oracle_serves_both_modes_alike() {
    let property = "import sys\nfrom oracle import serve\ndef check(doc):\n    print('looking at', doc)\n    return 'too big' if 1 / doc['n'] > 0.3 else None\nsys.exit(serve(check))\n";
    let repo = Repo::new(&[
        ("freezegate.toml", "[policy]\nmin_cases = 10\n"),
        ("oracle.py", DEMO_ORACLE),
        ("p.py", property),
    ]);
    let cases = [
        (
            r#"{"n": 0, "pad": [1, 2, 3]}"#,
            "ZeroDivisionError",
            "{\"n\":0}\n",
        ),
        (r#"{"n": 2, "pad": [1, 2, 3]}"#, "too big", "{\"n\":1}\n"),
    ];
    for (input, signature, minimal) in cases {
        repo.write("input.json", input);
        let input = repo.dir.join("input.json");
        for extra in [&["--worker"][..], &[]] {
            let mut args = vec!["shrink", "--oracle", "python3 p.py"];
            args.extend_from_slice(extra);
            let run = repo.xtask(&args, Some(&input));
            assert_eq!(run.code, 0, "{extra:?}: {}", run.stderr);
            assert_eq!(run.stdout, minimal);
            assert!(
                run.stderr
                    .contains(&format!("keeping the failure signature {signature:?}")),
                "{}",
                run.stderr
            );
        }
    }
}
