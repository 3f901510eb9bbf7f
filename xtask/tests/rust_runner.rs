//! `gate --rust-runner`: Rust properties run and drawn by a build of the tree under test, not
//! by the gate's own binary. A gate built from the base revision (`--base`, as
//! docs/threat-model.md asks) would otherwise judge the base's code with them.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use support::{NOW, Repo, Run};

/// A runner of one Rust property, `ext.sum_is_small`, written in `sh`: it serves the hidden
/// subcommand's three modes (one run, worker, `FREEZEGATE_GENERATE=1`) as a build of a
/// repository's xtask would. The property fails on pairs whose sum is at least 50; its
/// inputs are `[i, 7 * i]` for case `i`, offset by the seed's last digit. It logs each
/// generation request to `generated.log`.
const RUNNER: &str = r#"#!/bin/sh
[ "$1" = __freezegate-property ] || { echo "not the hidden subcommand: $1" >&2; exit 2; }
[ "$2" = ext.sum_is_small ] || { echo "error: no Rust property $2 is registered" >&2; exit 3; }
judge() { a=${1#[}; a=${a%%,*}; b=${1#*,}; b=${b%]}; [ $((a + b)) -lt 50 ]; }
if [ "$FREEZEGATE_GENERATE" = 1 ]; then
  echo "seed=$PROP_SEED cases=$PROP_CASES" >> generated.log
  off=$((PROP_SEED % 10)); i=0
  while [ $i -lt "$PROP_CASES" ]; do echo "[$((i + off)),$((7 * i))]"; i=$((i + 1)); done
  exit 0
fi
if [ "$FREEZEGATE_WORKER" = 1 ]; then
  while IFS= read -r l; do
    case "$l" in \[*,*\]) if judge "$l"; then echo pass; else echo "fail too big"; fi;;
      *) echo "error not a pair";; esac
  done
  exit 0
fi
l=$(cat)
case "$l" in \[*,*\]) ;; *) exit 125;; esac
judge "$l" && exit 0
echo "failure: too big"; exit 1
"#;

const CONFIG: &str = "[policy]\nseed = 20260917\nreplays = 3\ntimeout_ms = 5000\njobs = 2\nmin_cases = 5\n\n[[property]]\nid = \"ext.sum_is_small\"\ncases = 10\n";

fn repo() -> Repo {
    let repo = Repo::new(&[("freezegate.toml", CONFIG)]);
    support::write_executable(&repo.dir.join("runner.sh"), RUNNER);
    repo.commit("the runner");
    repo
}

fn json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("report: {e}\n{}\n{}", run.stdout, run.stderr))
}

/// The gate's own binary does not register the property: without a runner the property has
/// nothing to run (exit 3). With the runner the campaign's inputs come from it, under the
/// policy's seed and case count; the failure it finds is shrunk through it, pinned and blocks,
/// and the settings block names the runner.
#[test]
fn a_rust_runner_draws_and_runs_the_rust_properties() {
    let repo = repo();
    let run = repo.gate(&[], &[]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("no Rust property of that id is registered"),
        "{}",
        run.stderr
    );
    // A relative runner is found from where the command was typed, not from `-C`'s folder.
    let run: Run = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(&repo.dir)
        .args(["gate", "--now", NOW, "--patch-id", "test-patch"])
        .args(["--format", "json", "--rust-runner", "runner.sh"])
        .env_remove("PROP_SEED")
        .env_remove("REPLAYS")
        .output()
        .expect("xtask runs")
        .into();
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let report = json(&run);
    let runner = repo.dir.join("runner.sh").display().to_string();
    assert_eq!(
        report["settings"]["rust_runner"],
        runner.as_str(),
        "{report}"
    );
    let campaign = &report["campaigns"][0];
    assert_eq!(campaign["property_id"], "ext.sum_is_small", "{report}");
    assert_eq!(campaign["status"], "failure", "{report}");
    assert_eq!(campaign["cases"], 10, "{report}");
    // Seed 20260917 makes case i `[i + 7, 7i]`: case 6, `[13,42]`, is the first to fail, and
    // the runner's worker shrinks it to the smallest pair that sums to 50.
    assert_eq!(campaign["failing_case"], 6, "{report}");
    assert_eq!(campaign["minimal"], "[0,50]", "{report}");
    assert_eq!(
        repo.read("generated.log"),
        "seed=20260917 cases=10\n",
        "one generation, with the policy's seed and cases"
    );
    let fixtures = repo.files_under("fixtures/ext.sum_is_small");
    assert!(
        fixtures.iter().any(|f| f.ends_with(".meta.json")),
        "{fixtures:?}"
    );
    // The text report names the runner in its settings block.
    let run = repo.gate(&["--rust-runner", &runner], &[("PROP_SEED", "20260917")]);
    assert!(
        run.stdout.contains(&format!("  rust runner: {runner}\n")),
        "{}",
        run.stdout
    );
}

impl Repo {
    /// The relative paths of the files under `dir`, sorted.
    fn files_under(&self, dir: &str) -> Vec<String> {
        let mut out: Vec<String> = walk(&self.dir.join(dir))
            .into_iter()
            .map(|p| {
                p.strip_prefix(&self.dir)
                    .expect("under")
                    .display()
                    .to_string()
            })
            .collect();
        out.sort();
        out
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// A runner that does not register a property `freezegate.toml` names without an `oracle` is
/// a configuration error (exit 3), as the gate's own registry lacking it is: never a pass, and
/// never an infra item a retry could clear. A runner that is not a file is refused before
/// anything runs.
#[test]
fn a_runner_without_the_property_or_without_a_file_stops_the_gate() {
    let repo = repo();
    repo.write(
        "freezegate.toml",
        &CONFIG.replace("ext.sum_is_small", "ext.gone"),
    );
    let runner = repo.dir.join("runner.sh").display().to_string();
    let run = repo.gate(&["--format", "json", "--rust-runner", &runner], &[]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    let doc = json(&run);
    assert_eq!(doc["format"], "freezegate-gate-error-v1", "{doc}");
    assert!(
        doc["error"]
            .as_str()
            .is_some_and(|e| e.starts_with(&format!(
                "no Rust property ext.gone is registered by the Rust runner {runner}"
            ))),
        "{doc}"
    );
    let run = repo.gate(&["--rust-runner", "no-such-runner"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("no-such-runner: no such file"),
        "{}",
        run.stderr
    );
    assert!(!repo.dir.join("generated.log").exists());
}

/// `gate --base` warns when Rust properties run the gate's own binary: built from the base, as
/// CI should build it, that binary holds the base's code. With a runner there is no warning.
/// (freezegate's own xtask, which registers `canon.text_and_value_agree`, is both here.)
#[test]
fn base_without_a_runner_warns_that_rust_properties_run_this_build() {
    let own = "[policy]\nseed = 20260917\nreplays = 1\ntimeout_ms = 20000\njobs = 2\nmin_cases = 1\n\n[[property]]\nid = \"canon.text_and_value_agree\"\ncases = 2\n";
    let repo = Repo::new(&[("freezegate.toml", own)]);
    repo.git(&["tag", "base"]);
    repo.write("notes.txt", "a change\n");
    repo.commit("a patch");
    let warned = |run: &Run| {
        json(run)["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule"] == "patch.rust_properties_of_this_build" && f["blocking"] == false)
    };
    let run = repo.gate(&["--format", "json", "--base", "base"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(warned(&run), "{}", run.stdout);
    let run = repo.gate(
        &[
            "--format",
            "json",
            "--base",
            "base",
            "--rust-runner",
            env!("CARGO_BIN_EXE_xtask"),
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!warned(&run), "{}", run.stdout);
    let report = json(&run);
    assert_eq!(report["campaigns"][0]["status"], "pass", "{report}");
    assert_eq!(report["campaigns"][0]["cases"], 2, "{report}");
}

/// The hidden subcommand of freezegate's own xtask serves `FREEZEGATE_GENERATE=1`: the same
/// seed and case count give the same lines, another seed other lines, each line canonical
/// JSON; an unknown property exits 3, and a request without `PROP_CASES` too.
#[test]
fn the_hidden_subcommand_generates_campaign_inputs() {
    let generate = |id: &str, env: &[(&str, &str)]| -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
        cmd.args(["__freezegate-property", id])
            .env("FREEZEGATE_GENERATE", "1")
            .env_remove("PROP_SEED")
            .env_remove("PROP_CASES")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        // Nothing is read from stdin in this mode.
        let _ = child.stdin.take().expect("stdin").write_all(b"");
        child.wait_with_output().expect("wait").into()
    };
    let id = "canon.text_and_value_agree";
    let env = [("PROP_SEED", "20260917"), ("PROP_CASES", "12")];
    let a = generate(id, &env);
    assert_eq!(a.code, 0, "{}", a.stderr);
    let lines: Vec<&str> = a.stdout.lines().collect();
    assert_eq!(lines.len(), 12, "{}", a.stdout);
    for line in &lines {
        let value = freezegate_canon::parse_str(line).expect("a JSON line");
        // The ordered variant's bytes: canonical except for member order, which is kept.
        let bytes =
            freezegate_canon::value_bytes(&value, freezegate_canon::Canonicalization::V1Ordered)
                .expect("canonical");
        assert_eq!(line.as_bytes(), bytes.as_slice());
    }
    assert_eq!(generate(id, &env).stdout, a.stdout);
    let other = generate(id, &[("PROP_SEED", "1"), ("PROP_CASES", "12")]);
    assert_ne!(other.stdout, a.stdout);
    let unknown = generate("ext.nothing", &env);
    assert_eq!(unknown.code, 3);
    assert!(
        unknown
            .stderr
            .contains("no Rust property ext.nothing is registered"),
        "{}",
        unknown.stderr
    );
    let missing = generate(id, &[("PROP_SEED", "1")]);
    assert_eq!(missing.code, 3);
    assert!(
        missing.stderr.contains("PROP_CASES is not set"),
        "{}",
        missing.stderr
    );
}

/// `FREEZEGATE_GENERATE` in the environment xtask was started with never reaches an oracle
/// run: with it, a Rust property's runner would print inputs instead of judging one (and with
/// `PROP_CASES` too, exit 0: a pass).
#[test]
fn the_generation_switch_of_the_callers_environment_never_reaches_a_run() {
    let repo = Repo::new(&[("f.json", "{}\n")]);
    let run = repo.xtask(
        &[
            "replay",
            "--oracle",
            "test -z \"${FREEZEGATE_GENERATE+set}\"",
            "--fixture",
            "f.json",
            "--replays",
            "3",
        ],
        &[("FREEZEGATE_GENERATE", "1"), ("PROP_CASES", "1")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("not_reproduced"), "{}", run.stdout);
}

/// `classify` and `freeze` act on one property: in a repository that also lists a Rust
/// property only another build registers, they act on a property with an `oracle` as they
/// would anywhere, and take `--rust-runner` for the Rust property itself, as the gate does.
#[test]
fn classify_and_freeze_act_on_one_property_and_take_a_rust_runner() {
    let config = format!(
        "{CONFIG}\n[[property]]\nid = \"py.small\"\noracle = \"python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)[0] < 5 else 1)'\"\n"
    );
    let signers = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOm+iqtWY8JcllVdNqblscY+uEw8dN5PHWCH30uKwyvt\n";
    let repo = Repo::new(&[
        ("freezegate.toml", &config),
        ("freeze/allowed_signers", signers),
    ]);
    support::write_executable(&repo.dir.join("runner.sh"), RUNNER);
    repo.commit("the runner");
    // The property with an oracle: classified (pinned, exit 1), the Rust one not in the way.
    let run = repo.classify_run("py.small", "[9, 1]", &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(json(&run)["action"], "pin_fixture", "{}", run.stdout);
    // The Rust property: exit 3 without a runner, as in the gate; classified with one.
    let run = repo.classify_run("ext.sum_is_small", "[40, 30]", &[]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("ext.sum_is_small"), "{}", run.stderr);
    let run = repo.classify_run(
        "ext.sum_is_small",
        "[40, 30]",
        &["--rust-runner", "runner.sh"],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let record = json(&run);
    assert_eq!(record["action"], "pin_fixture", "{record}");
    // freeze: the runner replays the Rust property's fixture (a stable failure: refused as a
    // regression, exit 1), and a missing runner file is bad input.
    let fixture = record["fixture_id"]
        .as_str()
        .expect("fixture id")
        .to_owned();
    let freeze = |extra: &[&str]| {
        let mut args = vec![
            "freeze",
            "--property",
            "ext.sum_is_small",
            "--fixture",
            &fixture,
            "--owner",
            "alice@example.com",
            "--reason",
            "r",
            "--expires-in",
            "3",
            "--now",
            NOW,
            "--env-class",
            "remote",
            "--runner-id",
            "ci-1",
        ];
        args.extend_from_slice(extra);
        repo.xtask(&args, &[])
    };
    let run = freeze(&["--rust-runner", "runner.sh"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("regression") || run.stdout.contains("regression"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let run = freeze(&["--rust-runner", "no-such-runner"]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("--rust-runner"), "{}", run.stderr);
}
