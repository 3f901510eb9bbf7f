//! One oracle command in its two modes, end to end: the Python oracle recipe of
//! docs/gate.md and the demo's `serve` give an input the same label and signature as a worker
//! and as a fresh process, whatever the property raises or prints; and the environment each
//! kind of run sees.

use std::path::Path;

mod support;

use support::{Repo, Run};

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

impl Repo {
    /// Runs xtask with the file `input` on its stdin.
    fn fed(&self, args: &[&str], input: &Path) -> Run {
        let mut cmd = self.command(args);
        cmd.stdin(std::fs::File::open(input).expect("input"));
        cmd.output().expect("xtask runs").into()
    }
}

fn config(worker: bool, oracle: &str) -> String {
    format!(
        "[policy]\nseed = 20260917\nreplays = 3\ntimeout_ms = 5000\njobs = 2\nmin_cases = 10\n\n\
         [[property]]\nid = \"invoice\"\noracle = \"{oracle}\"\ngenerate = \"python3 gen.py\"\ncases = 10\nworker = {worker}\n"
    )
}

/// A repository whose oracle and generator are the shell scripts `oracle` and `generator`.
fn shell_repo(worker: bool, oracle: &str, generator: &str) -> Repo {
    Repo::new(&[
        (
            "freezegate.toml",
            &config(worker, "sh oracle.sh").replace("python3 gen.py", "sh gen.sh"),
        ),
        ("oracle.sh", oracle),
        ("gen.sh", generator),
    ])
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
        let (run, report) = repo.gate_json();
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
        let (run, report) = repo.gate_json();
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
        let run = repo.fed(&args, &input);
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
        let (run, report) = repo.gate_json();
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
            let run = repo.fed(&args, &input);
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

/// `FREEZEGATE_REPLAY` is a replay's index, `0` in every other fresh process (a campaign
/// case, a shrink candidate) and absent in a worker; `FREEZEGATE_WORKER` is `1` in a worker
/// only (docs/gate.md, SPEC §4).
#[test]
fn each_kind_of_run_sees_its_documented_environment() {
    const ORACLE: &str = r#"seen() { echo "worker=${FREEZEGATE_WORKER-unset} replay=${FREEZEGATE_REPLAY-unset}" >> seen.log; }
if [ "$FREEZEGATE_WORKER" = 1 ]; then
  while IFS= read -r line; do
    seen
    case "$line" in *'"n":1'*) echo "fail one" ;; *) echo pass ;; esac
  done
  exit 0
fi
seen
case "$(cat)" in *'"n":1'*) echo "failure: one"; exit 1 ;; esac
exit 0
"#;
    const GEN: &str =
        "for i in $(seq 1 $PROP_CASES); do echo \"{\\\"n\\\": $((i % 5)), \\\"k\\\": $i}\"; done\n";
    let lines = |worker: bool| -> Vec<String> {
        let repo = shell_repo(worker, ORACLE, GEN);
        let (run, report) = repo.gate_json();
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        assert_eq!(report["campaigns"][0]["minimal"], r#"{"n":1}"#);
        let log = std::fs::read_to_string(repo.dir.join("seen.log")).expect("seen.log");
        let mut lines: Vec<String> = log.lines().map(str::to_owned).collect();
        lines.sort();
        lines
    };
    let count = |lines: &[String], line: &str| lines.iter().filter(|l| *l == line).count();

    // Process mode: the cases and the shrink's candidates see 0, the three replays 0, 1, 2.
    let process = lines(false);
    assert!(count(&process, "worker=unset replay=0") > 2, "{process:?}");
    assert_eq!(count(&process, "worker=unset replay=1"), 1, "{process:?}");
    assert_eq!(count(&process, "worker=unset replay=2"), 1, "{process:?}");
    assert!(
        process
            .iter()
            .all(|l| l.starts_with("worker=unset replay=")),
        "{process:?}"
    );
    // Worker mode: cases and candidates in a worker, which sees no replay index.
    let worker = lines(true);
    assert!(count(&worker, "worker=1 replay=unset") > 1, "{worker:?}");
    for i in 0..3 {
        assert_eq!(
            count(&worker, &format!("worker=unset replay={i}")),
            1,
            "{worker:?}"
        );
    }
    assert_eq!(worker.len(), count(&worker, "worker=1 replay=unset") + 3);
    // `xtask shrink`: 0 in its fresh processes, nothing in a worker.
    for (extra, seen) in [
        (&[][..], "worker=unset replay=0"),
        (&["--worker"], "worker=1 replay=unset"),
    ] {
        let repo = Repo::new(&[("oracle.sh", ORACLE), ("input.json", r#"{"n": 1, "k": 7}"#)]);
        let mut args = vec![
            "shrink",
            "--oracle",
            "sh oracle.sh",
            "--input",
            "input.json",
        ];
        args.extend_from_slice(extra);
        let run = repo.xtask(&args, &[]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, "{\"n\":1}\n"),
            "{}",
            run.stderr
        );
        let log = std::fs::read_to_string(repo.dir.join("seen.log")).expect("seen.log");
        let mut lines: Vec<&str> = log.lines().collect();
        if extra.is_empty() {
            assert!(lines.len() > 1, "{lines:?}");
        } else {
            // The worker's result is confirmed by one fresh process.
            assert_eq!(lines.pop(), Some("worker=unset replay=0"));
        }
        assert!(lines.iter().all(|l| *l == seen), "{extra:?}: {lines:?}");
    }
}

/// A command that fails inputs as a worker but exits `0` as a fresh process (the worker loop
/// written, the one-shot ending forgotten) has every campaign failure dropped as not
/// reproduced, and the gate passes: the note says that the worker and the fresh processes
/// disagreed, and what a fresh process must do.
#[test]
fn a_worker_that_fresh_processes_contradict_is_named_in_the_drop_note() {
    const ORACLE: &str = r#"while IFS= read -r line; do
  case "$line" in *'"n":4'*) echo "fail four" ;; *) echo pass ;; esac
done
exit 0
"#;
    const GEN: &str = "for i in $(seq 1 $PROP_CASES); do echo \"{\\\"n\\\": $((i % 5))}\"; done\n";
    for worker in [true, false] {
        let repo = shell_repo(worker, ORACLE, GEN);
        let (run, report) = repo.gate_json();
        let campaign = &report["campaigns"][0];
        let note = campaign["note"].as_str().unwrap_or("");
        if worker {
            assert_eq!(
                (run.code, &campaign["action"]),
                (0, &"drop_nonreproducible".into()),
                "{}\n{}",
                run.stdout,
                run.stderr
            );
            assert!(
                note.contains(
                    "the worker failed the origin and none of its 3 fresh-process replays did"
                ) && note.contains("without FREEZEGATE_WORKER, where a failure must exit 1"),
                "{note}"
            );
        } else {
            // Without a worker nothing fails: no disagreement to name.
            assert_eq!(
                (run.code, &campaign["status"]),
                (0, &"pass".into()),
                "{}",
                run.stdout
            );
        }
    }
}
