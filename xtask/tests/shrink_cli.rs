//! `xtask shrink` end to end: the real binary, real oracle processes (one per call, or one
//! long-lived worker), inputs that pass, oracles that time out or break on the original,
//! failure signatures, a spent budget, and a flaky oracle.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use freezegate_canon::{parse, parse_str, to_canonical_bytes};
use freezegate_shrink::{apply_path, path_from_value};

/// The pattern of an integer of at least 900 in canonical bytes (no strings with digits,
/// no floats in these tests).
const BIG: &str = "(^|[^0-9.-])(9[0-9][0-9]|[1-9][0-9][0-9][0-9]+)([^0-9.e]|$)";

/// A shell oracle (a shell starts in a few milliseconds, Python in hundreds): fails (exit 1,
/// signature `big`) when some integer is at least 900, fails with signature `negative` when
/// some integer is below zero, passes otherwise.
const ORACLE: &str = r#"input=$(cat)
if printf '%s' "$input" | grep -Eq "$BIG"; then echo "failure: big"; exit 1; fi
if printf '%s' "$input" | grep -Eq -- '-[1-9]'; then echo "failure: negative"; exit 1; fi
exit 0
"#;

/// The same property as a worker: one candidate per line, one answer per line. Without
/// `FREEZEGATE_WORKER=1` the same command is the process oracle (SPEC §4), which is how the
/// result of a worker-mode shrink is confirmed.
const WORKER: &str = r#"[ "$FREEZEGATE_WORKER" = 1 ] || exec sh oracle.sh
while IFS= read -r line; do
  if printf '%s' "$line" | grep -Eq "$BIG"; then echo "fail big"
  elif printf '%s' "$line" | grep -Eq -- '-[1-9]'; then echo "fail negative"
  else echo pass; fi
done
"#;

/// Passes every other run: a failing input sometimes passes, a passing one never fails.
const FLAKY: &str = r#"count=$(cat count 2>/dev/null || echo 0)
echo $((count + 1)) > count
input=$(cat)
if [ $((count % 2)) -eq 0 ] && printf '%s' "$input" | grep -Eq "$BIG"; then exit 1; fi
exit 0
"#;

/// A Python oracle in both modes that fails (signature `three`) when the input is a list
/// holding 3. As a worker it answers its first candidate twice, the second time late: only
/// once the next candidate has arrived, and long before that candidate's own answer. The
/// extra line is read as the next candidate's answer, so the worker is out of step whatever
/// the timing.
const LATE_WORKER: &str = r#"import json, os, sys, time

def fails(v):
    return isinstance(v, list) and 3 in v

if os.environ.get("FREEZEGATE_WORKER") == "1":
    for n, line in enumerate(sys.stdin):
        if n == 1:
            print("fail three", flush=True)
            time.sleep(5)
        print("fail three" if fails(json.loads(line)) else "pass", flush=True)
    sys.exit(0)
if fails(json.load(sys.stdin)):
    print("failure: three")
    sys.exit(1)
sys.exit(0)
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let big = format!("BIG='{BIG}'\n");
    std::fs::write(dir.path().join("oracle.sh"), big.clone() + ORACLE).unwrap();
    std::fs::write(dir.path().join("worker.sh"), big.clone() + WORKER).unwrap();
    std::fs::write(dir.path().join("flaky.sh"), big + FLAKY).unwrap();
    std::fs::write(dir.path().join("late_worker.py"), LATE_WORKER).unwrap();
    dir
}

fn xtask(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir)
        .arg("shrink")
        .args(args)
        .env_remove("PROP_SEED")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command refused before it reads stdin (a usage error) may exit before the write
    // ends: the broken pipe is its doing, not the test's.
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The number after `oracle_calls=` on standard error.
fn calls_of(out: &Output) -> u64 {
    let err = stderr(out);
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("oracle_calls="))
        .unwrap_or_else(|| panic!("no oracle_calls= in {err}"));
    line.parse().unwrap()
}

#[test]
fn process_oracle_shrinks_to_the_minimum_and_the_path_reapplies() {
    let dir = setup();
    let input = r#"{"b": [3, 17, 4005, 12], "a": "noise", "c": [[-0, 901234, 5]]}"#;
    let out = xtask(dir.path(), &["--oracle", "sh oracle.sh", "--path"], input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "900\n");
    let err = stderr(&out);
    assert!(
        err.contains("keeping the failure signature \"big\""),
        "{err}"
    );
    assert!(!err.contains("budget_exhausted"), "{err}");
    assert!(calls_of(&out) > 1);
    let path_json = err
        .lines()
        .find_map(|l| l.strip_prefix("shrink_path="))
        .unwrap_or_else(|| panic!("no shrink_path= in {err}"));
    let path = path_from_value(&parse_str(path_json).unwrap()).unwrap();
    let replayed = apply_path(&parse_str(input).unwrap(), &path).unwrap();
    assert_eq!(to_canonical_bytes(&replayed).unwrap(), b"900");
}

#[test]
fn worker_oracle_gives_the_same_result_and_calls_as_the_process_oracle() {
    let dir = setup();
    let items: Vec<String> = (0..300).map(|i| ((i * 37) % 800).to_string()).collect();
    let input = format!(
        "[{},123456789,{}]",
        items[..150].join(","),
        items[150..].join(",")
    );
    let worker = xtask(
        dir.path(),
        &["--oracle", "sh worker.sh", "--worker"],
        &input,
    );
    assert_eq!(worker.status.code(), Some(0), "{}", stderr(&worker));
    assert_eq!(stdout(&worker), "900\n");
    let small = r#"[5, 77, 123456789, 3]"#;
    let by_worker = xtask(dir.path(), &["--oracle", "sh worker.sh", "--worker"], small);
    let by_process = xtask(dir.path(), &["--oracle", "sh oracle.sh"], small);
    assert_eq!(stdout(&by_worker), "900\n");
    assert_eq!(stdout(&by_process), stdout(&by_worker));
    // The same shrink, plus one call: the worker's result confirmed by a fresh process.
    assert_eq!(calls_of(&by_process) + 1, calls_of(&by_worker));
    assert!(
        stderr(&by_worker).contains("confirmed in a fresh process"),
        "{}",
        stderr(&by_worker)
    );
    assert!(!stderr(&by_process).contains("confirmed in a fresh process"));
}

#[test]
fn a_worker_out_of_step_never_yields_a_value_that_passes() {
    let dir = setup();
    // The late extra "fail three" is read as the answer to `[]`, which passes: the worker
    // accepts it. A fresh process on `[]` passes, so `[]` is not printed.
    let out = xtask(
        dir.path(),
        &["--oracle", "python3 late_worker.py", "--worker"],
        "[1,2,3,4,5]",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(stdout(&out), "");
    assert!(
        err.contains("the worker's answers and a fresh process disagree")
            && err.contains("and a fresh process assert_pass (a worker out of step"),
        "{err}"
    );
    // The first check, `[]` (answered by the late line), and the fresh process on `[]`.
    assert_eq!(calls_of(&out), 3, "{err}");
    // In process mode the same command shrinks to [3].
    let out = xtask(
        dir.path(),
        &["--oracle", "python3 late_worker.py"],
        "[1,2,3,4,5]",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[3]\n");
}

/// A command whose two modes fail on the same inputs but name the failure differently: the
/// worker answers `fail boom`, the process exits 1 with no `failure:` line. The error says
/// that the signatures differ, not only that the labels are `assert_fail`.
#[test]
fn a_fresh_process_that_fails_without_the_workers_signature_is_named_as_such() {
    let dir = setup();
    let both = format!(
        "BIG='{BIG}'\n{}",
        r#"if [ "$FREEZEGATE_WORKER" = 1 ]; then
  while IFS= read -r line; do
    if printf '%s' "$line" | grep -Eq "$BIG"; then echo "fail boom"; else echo pass; fi
  done
  exit 0
fi
cat | grep -Eq "$BIG" && exit 1
exit 0
"#
    );
    std::fs::write(dir.path().join("unnamed.sh"), both).unwrap();
    let out = xtask(
        dir.path(),
        &["--oracle", "sh unnamed.sh", "--worker"],
        "[1, 4005, 7]",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(stdout(&out), "");
    assert!(
        err.contains(
            "the worker's answers and a fresh process disagree: on the worker's minimal value the worker gives assert_fail with the signature \"boom\" and a fresh process assert_fail with no signature (the two modes name the failure differently, or a flaky oracle), so it is not printed"
        ),
        "{err}"
    );
}

#[test]
fn an_input_that_passes_is_bad_input() {
    let dir = setup();
    let out = xtask(dir.path(), &["--oracle", "sh oracle.sh"], "[1, 2, 3]");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("nothing to shrink: the input passes"),
        "{}",
        stderr(&out)
    );
    assert_eq!(calls_of(&out), 1);
}

#[test]
fn a_first_run_that_times_out_or_breaks_is_never_shrunk() {
    let dir = setup();
    let out = xtask(
        dir.path(),
        &["--oracle", "sleep 5", "--timeout-ms", "300"],
        "[1000, 2000]",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.contains("refusing to shrink") && err.contains("timeout"),
        "{err}"
    );
    assert_eq!(calls_of(&out), 1);

    let out = xtask(dir.path(), &["--oracle", "exit 125"], "[1000, 2000]");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("harness_error"), "{}", stderr(&out));
}

#[test]
fn a_deadline_of_zero_is_a_usage_error_not_a_timeout() {
    // SPEC §8: bad usage exits 3; a zero deadline would otherwise run the oracle, label the
    // first run `timeout` and exit 2, as if the runner were at fault.
    let dir = setup();
    let out = xtask(
        dir.path(),
        &["--oracle", "sh oracle.sh", "--timeout-ms", "0"],
        "[1000]",
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(err.contains("--timeout-ms"), "{err}");
    assert!(!err.contains("oracle_calls="), "no oracle may run: {err}");
}

#[test]
fn candidates_that_fail_another_way_do_not_count_unless_asked() {
    let dir = setup();
    // The original fails with "big"; [-1] would be smaller but fails with "negative".
    let input = "[-5, 4005, -7]";
    let kept = xtask(dir.path(), &["--oracle", "sh oracle.sh"], input);
    assert_eq!(kept.status.code(), Some(0), "{}", stderr(&kept));
    assert_eq!(stdout(&kept), "900\n");
    let any = xtask(
        dir.path(),
        &["--oracle", "sh oracle.sh", "--any-signature"],
        input,
    );
    assert_eq!(any.status.code(), Some(0), "{}", stderr(&any));
    assert_eq!(stdout(&any), "-1\n");
}

#[test]
fn a_spent_budget_still_prints_the_best_value_and_says_so() {
    let dir = setup();
    let input = "[3, 17, 4005, 12, 901234, 8]";
    let out = xtask(
        dir.path(),
        &["--oracle", "sh oracle.sh", "--max-calls", "4"],
        input,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("budget_exhausted=true"),
        "{}",
        stderr(&out)
    );
    assert_eq!(calls_of(&out), 4);
    let best = parse(stdout(&out).trim_end().as_bytes()).unwrap();
    assert!(
        to_canonical_bytes(&best).unwrap().len()
            <= to_canonical_bytes(&parse_str(input).unwrap())
                .unwrap()
                .len()
    );
    assert!(stdout(&out).contains("4005") || stdout(&out).contains("901234"));
    // In worker mode the budget keeps one call for the confirmation by a fresh process.
    let out = xtask(
        dir.path(),
        &["--oracle", "sh worker.sh", "--worker", "--max-calls", "7"],
        input,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("budget_exhausted=true"), "{err}");
    assert!(err.contains("confirmed in a fresh process"), "{err}");
    assert_eq!(calls_of(&out), 7);
    assert_eq!(stdout(&out), "4005\n");
}

#[test]
fn a_flaky_oracle_never_yields_a_value_that_does_not_really_fail() {
    let dir = setup();
    // The first run (count 0) fails; later runs fail only on even counts.
    let input = "[3, 17, 4005, 12, 901234, 8]";
    let out = xtask(dir.path(), &["--oracle", "sh flaky.sh"], input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = parse(stdout(&out).trim_end().as_bytes()).unwrap();
    let text = String::from_utf8(to_canonical_bytes(&result).unwrap()).unwrap();
    let numbers: Vec<i64> = text
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert!(
        numbers.iter().any(|&n| n >= 900),
        "{text} does not fail the real property"
    );
    assert!(text.len() <= input.replace(' ', "").len());
    let runs: u64 = std::fs::read_to_string(dir.path().join("count"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(runs, calls_of(&out));
}

#[test]
fn json_format_is_one_document_with_the_value_the_calls_and_the_path() {
    let dir = setup();
    let input = r#"{"z": [1, 2], "a": [3, 4005]}"#;
    let out = xtask(
        dir.path(),
        &["--oracle", "sh oracle.sh", "--format", "json"],
        input,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = parse(&out.stdout).unwrap();
    assert_eq!(
        doc.get("schema"),
        Some(&"freezegate-shrink-result-v1".into())
    );
    assert_eq!(
        doc.get("value").map(|v| to_canonical_bytes(v).unwrap()),
        Some(b"900".to_vec())
    );
    let calls = doc.get("oracle_calls").and_then(|v| match v {
        freezegate_canon::Value::Int(n) => n.to_u64(),
        _ => None,
    });
    assert_eq!(calls, Some(calls_of(&out)));
    assert_eq!(
        doc.get("budget_exhausted"),
        Some(&freezegate_canon::Value::Bool(false))
    );
    let path = path_from_value(doc.get("shrink_path").unwrap()).unwrap();
    let replayed = apply_path(&parse_str(input).unwrap(), &path).unwrap();
    assert_eq!(to_canonical_bytes(&replayed).unwrap(), b"900");
}

/// SPEC §4: the oracle runs in the repository root (here: the folder of `freezegate.toml`)
/// when `shrink` is started in a subdirectory.
#[test]
fn the_oracle_runs_in_the_repository_root() {
    let dir = setup();
    std::fs::write(dir.path().join("freezegate.toml"), "").unwrap();
    let sub = dir.path().join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let out = xtask(&sub, &["--oracle", "sh oracle.sh"], "[5, 1000, 7]");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "900\n");
}
