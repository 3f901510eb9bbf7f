//! `xtask replay` end to end: the real binary, real oracle processes, every exit code.

use std::path::Path;
use std::process::{Command, Output};

use freezegate_canon::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const FIXTURE: &str = "{\"role\":\"\",\"user_id\":0}\n";

/// A temp dir holding `fixture.json`.
fn workdir() -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("fixture.json"), FIXTURE)?;
    Ok(dir)
}

fn xtask(dir: &Path, args: &[&str]) -> Result<Output, std::io::Error> {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir)
        .arg("replay")
        .args(args)
        .env_remove("PROP_SEED")
        .env_remove("REPLAYS")
        .output()
}

fn code(out: &Output) -> Option<i32> {
    out.status.code()
}

fn json(out: &Output) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(freezegate_canon::parse(&out.stdout)?)
}

fn field<'v>(doc: &'v Value, key: &str) -> Result<&'v Value, String> {
    doc.get(key)
        .ok_or_else(|| format!("no {key} in the report"))
}

fn text(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}

fn labels(doc: &Value) -> Result<Vec<String>, String> {
    match field(doc, "labels")? {
        Value::Array(items) => Ok(items
            .iter()
            .filter_map(|v| text(v).map(str::to_owned))
            .collect()),
        _ => Err("labels is not an array".into()),
    }
}

#[test]
fn a_stable_failure_blocks_with_exit_1() -> TestResult {
    let dir = workdir()?;
    let out = xtask(
        dir.path(),
        &[
            "--oracle",
            "echo 'failure: negative total'; exit 1",
            "--fixture",
            "fixture.json",
            "--replays",
            "3",
        ],
    )?;
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout)?;
    assert!(
        stdout.contains("verdict: block_patch (stable_fail)"),
        "{stdout}"
    );
    assert!(stdout.contains("failure: negative total"), "{stdout}");
    assert!(stdout.contains("budget, not a proof"), "{stdout}");
    Ok(())
}

#[test]
fn passes_and_flickers_exit_0_and_json_is_the_only_stdout() -> TestResult {
    let dir = workdir()?;
    let out = xtask(
        dir.path(),
        &[
            "--oracle",
            "cat >/dev/null",
            "--fixture",
            "fixture.json",
            "--format",
            "json",
        ],
    )?;
    assert_eq!(code(&out), Some(0));
    let doc = json(&out)?;
    assert_eq!(text(field(&doc, "verdict")?), Some("not_reproduced"));
    assert_eq!(text(field(&doc, "schema")?), Some("freezegate-replay-v1"));
    assert_eq!(labels(&doc)?.len(), 7);

    let flicker = r#"[ $((FREEZEGATE_REPLAY % 2)) -eq 0 ]"#;
    let out = xtask(
        dir.path(),
        &[
            "--oracle",
            flicker,
            "--fixture",
            "fixture.json",
            "--replays",
            "4",
            "--jobs",
            "2",
            "--format",
            "json",
        ],
    )?;
    assert_eq!(code(&out), Some(0));
    let doc = json(&out)?;
    assert_eq!(text(field(&doc, "verdict")?), Some("freeze_eligible"));
    assert_eq!(text(field(&doc, "status")?), Some("flicker"));
    assert_eq!(
        labels(&doc)?,
        ["assert_pass", "assert_fail", "assert_pass", "assert_fail"]
    );
    assert_eq!(text(field(&doc, "fixture_id")?), Some("84a6b2a276edd51b"));
    Ok(())
}

#[test]
fn timeouts_and_harness_errors_exit_2() -> TestResult {
    let dir = workdir()?;
    let out = xtask(
        dir.path(),
        &[
            "--oracle",
            "exit 125",
            "--fixture",
            "fixture.json",
            "--replays",
            "2",
        ],
    )?;
    assert_eq!(code(&out), Some(2));
    let out = xtask(
        dir.path(),
        &[
            "--oracle",
            "[ $FREEZEGATE_REPLAY -ne 1 ] || exec sleep 30; exit 1",
            "--fixture",
            "fixture.json",
            "--replays",
            "2",
            "--timeout-ms",
            "1000",
            "--format",
            "json",
        ],
    )?;
    assert_eq!(code(&out), Some(2));
    let doc = json(&out)?;
    assert_eq!(labels(&doc)?, ["assert_fail", "timeout"]);
    assert_eq!(text(field(&doc, "verdict")?), Some("infra_queue"));
    Ok(())
}

#[test]
fn environment_defaults_and_flags_that_override_them() -> TestResult {
    let dir = workdir()?;
    let oracle = r#"[ "$PROP_SEED" = 42 ] && [ "$PROPERTY_ID" = tax.total ]"#;
    let run = |extra: &[&str], seed: &str, replays: &str| {
        let mut args = vec![
            "--oracle",
            oracle,
            "--fixture",
            "fixture.json",
            "--format",
            "json",
            "--property",
            "tax.total",
        ];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .arg("replay")
            .args(&args)
            .arg("-C")
            .arg(dir.path())
            .env("PROP_SEED", seed)
            .env("REPLAYS", replays)
            .output()
    };
    let out = run(&[], "42", "3")?;
    assert_eq!(code(&out), Some(0));
    let doc = json(&out)?;
    assert_eq!(field(&doc, "seed")?, &Value::Int(42.into()));
    assert_eq!(field(&doc, "replays")?, &Value::Int(3.into()));
    // Flags win over the environment.
    let out = run(&["--seed", "43", "--replays", "2"], "42", "3")?;
    assert_eq!(code(&out), Some(1));
    assert_eq!(labels(&json(&out)?)?.len(), 2);
    Ok(())
}

#[test]
fn bad_input_exits_3() -> TestResult {
    let dir = workdir()?;
    std::fs::write(
        dir.path().join("loose.json"),
        "{\"user_id\": 0, \"role\": \"\"}\n",
    )?;
    std::fs::write(
        dir.path().join("bare.json"),
        "{\"role\":\"\",\"user_id\":0}",
    )?;
    std::fs::write(dir.path().join("broken.json"), "{\"role\":\n")?;
    let cases: [&[&str]; 7] = [
        &["--oracle", "exit 0", "--fixture", "missing.json"],
        &["--oracle", "exit 0", "--fixture", "loose.json"],
        &["--oracle", "exit 0", "--fixture", "bare.json"],
        &["--oracle", "exit 0", "--fixture", "broken.json"],
        &["--oracle", "  ", "--fixture", "fixture.json"],
        &[
            "--oracle",
            "exit 0",
            "--fixture",
            "fixture.json",
            "--replays",
            "0",
        ],
        &[
            "--oracle",
            "exit 0",
            "--fixture",
            "fixture.json",
            "--property",
            "../up",
        ],
    ];
    for args in cases {
        let out = xtask(dir.path(), args)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!((args, code(&out)), (args, Some(3)), "{stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["replay", "--oracle", "exit 0", "--fixture", "fixture.json"])
        .current_dir(dir.path())
        .env("REPLAYS", "seven")
        .output()?;
    assert_eq!(code(&out), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("REPLAYS"));
    Ok(())
}

/// SPEC §4: the oracle runs in the repository root, wherever `replay` is started; the
/// fixture path keeps the meaning it has where the command was typed.
#[test]
fn the_oracle_runs_in_the_repository_root_from_a_subdirectory() -> TestResult {
    let dir = workdir()?;
    let git = Command::new("git")
        .arg("-C")
        .arg(dir.path())
        .args(["init", "-q"])
        .status()?;
    assert!(git.success());
    std::fs::create_dir(dir.path().join("sub"))?;
    std::fs::write(dir.path().join("oracle.sh"), "exit 1\n")?;
    let out = xtask(
        &dir.path().join("sub"),
        &[
            "--oracle",
            "sh oracle.sh",
            "--fixture",
            "../fixture.json",
            "--replays",
            "2",
        ],
    )?;
    assert_eq!(
        code(&out),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

#[test]
fn out_of_range_counts_and_deadlines_are_usage_errors() -> TestResult {
    let dir = workdir()?;
    for (args, message) in [
        (&["--timeout-ms", "0"][..], "--timeout-ms"),
        (
            &["--replays", "100000000000"],
            "over the most a plan allows",
        ),
        (&["--replays", "0"], "at least 1"),
        // As `gate --jobs 0` and `classify --jobs 0`: no silent fix to 1.
        (&["--jobs", "0"], "--jobs"),
    ] {
        let mut all = vec!["--oracle", "true", "--fixture", "fixture.json"];
        all.extend(args);
        let out = xtask(dir.path(), &all)?;
        assert_eq!(code(&out), Some(3), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
    Ok(())
}

#[test]
fn a_report_that_cannot_be_written_exits_3_without_a_panic() -> TestResult {
    let dir = workdir()?;
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full")?;
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir.path())
        .args(["replay", "--oracle", "true", "--fixture", "fixture.json"])
        .args(["--replays", "1"])
        .stdout(full)
        .output()?;
    assert_eq!(code(&out), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write standard output"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    Ok(())
}

#[test]
fn a_large_fixture_that_is_not_canonical_is_one_short_sentence() -> TestResult {
    let dir = workdir()?;
    let zeros = vec!["0"; 2_000_000].join(",");
    std::fs::write(
        dir.path().join("big.json"),
        format!("{{\"a\":[{zeros}], \"b\":1}}\n"),
    )?;
    let out = xtask(dir.path(), &["--oracle", "exit 0", "--fixture", "big.json"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), Some(3), "{}", &stderr[..stderr.len().min(400)]);
    assert!(stderr.len() < 400, "{} bytes", stderr.len());
    let at = "{\"a\":[".len() + zeros.len() + "],".len();
    assert!(
        stderr.contains(&format!(
            "is not canonical (freezegate-canon-v1): they first differ from the canonical bytes at byte {at} (line 1, column {}): found ` \"b\":1}}` where the canonical bytes have `\"b\":1}}`",
            at + 1
        )),
        "{stderr}"
    );
    Ok(())
}
