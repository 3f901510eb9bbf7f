//! `xtask ledger check|list|lift` end to end: the real binary on a repository in a temp dir.

use std::path::Path;
use std::process::{Command, Output};

use freezegate_canon::fixture::{Meta, pin};
use freezegate_canon::{Canonicalization, Int, Position, Value, canonicalize, parse};
use freezegate_ledger::{EnvClass, Ledger, Row, Seed, Timestamp, read};
use freezegate_replay::Label;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const PROPERTY: &str = "tax.cached_total_equals_fresh_sum";
const NOW: &str = "2026-09-17T12:00:00Z";
const SIGNERS: &str = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice\n";

fn xtask(dir: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Pins fixture `{"n": n}` of PROPERTY under `root` and returns its row (remote, active at NOW).
fn pinned_row(root: &Path, n: u64) -> Result<Row, Box<dyn std::error::Error>> {
    let fixture = canonicalize(format!("{{\"n\":{n}}}").as_bytes(), Canonicalization::V1)?;
    let origin = canonicalize(
        format!("{{\"n\":{n},\"pad\":[1,2,3]}}").as_bytes(),
        Canonicalization::V1,
    )?;
    let meta = Meta {
        property_id: PROPERTY.parse()?,
        fixture_id: fixture.fixture_id(),
        fixture_digest: fixture.digest(),
        origin_id: origin.fixture_id(),
        origin_digest: origin.digest(),
        canonicalization: Canonicalization::V1,
        seed: 20_260_917,
        pinned_at: "2026-09-14T08:00:00Z".to_owned(),
        patch_id: "feedface".to_owned(),
        oracle_calls: 5,
        shrink_path: Vec::new(),
    };
    pin(root, &meta, &fixture, &origin)?;
    Ok(Row {
        property_id: meta.property_id,
        fixture_id: meta.fixture_id,
        fixture_digest: meta.fixture_digest,
        origin_digest: meta.origin_digest,
        canonicalization: Canonicalization::V1,
        seed: Seed::from(20_260_917_u64),
        env_class: EnvClass::Remote,
        runner_id: "ci-runner-7".to_owned(),
        replays: [Label::AssertPass, Label::AssertFail]
            .into_iter()
            .cycle()
            .take(7)
            .collect(),
        patch_id: "0123456789abcdef".to_owned(),
        owner: "alice@example.com".to_owned(),
        reason: "thread scheduling in the cache warm-up".to_owned(),
        created_at: ts("2026-09-15T09:30:00Z"),
        expires_at: ts("2026-09-25T09:30:00Z"),
    })
}

/// A repository with signers and a ledger of `rows`.
fn repo(
    rows: impl FnOnce(&Path) -> Vec<Row>,
) -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("freeze"))?;
    std::fs::write(dir.path().join("freeze/allowed_signers"), SIGNERS)?;
    let rows = rows(dir.path());
    if !rows.is_empty() {
        std::fs::write(
            dir.path().join("freeze/ledger.json"),
            Ledger::from_rows(rows).render(),
        )?;
    }
    Ok(dir)
}

#[test]
fn check_passes_a_missing_and_a_valid_ledger() -> TestResult {
    let empty = repo(|_| Vec::new())?;
    let out = xtask(empty.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let full = repo(|root| (0..3).map(|n| pinned_row(root, n).unwrap()).collect())?;
    // -C after the subcommand works too.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["ledger", "check", "--now", NOW, "-C"])
        .arg(full.path())
        .output()?;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("valid: 0 errors, 0 warnings"),
        "{}",
        stdout(&out)
    );
    Ok(())
}

#[test]
fn check_reports_every_problem_and_exits_1() -> TestResult {
    let dir = repo(|root| {
        let mut bad_owner = pinned_row(root, 0).unwrap();
        bad_owner.owner = "eve@example.com".to_owned();
        let mut no_fixture = pinned_row(root, 1).unwrap();
        std::fs::remove_file(root.join(format!(
            "fixtures/{PROPERTY}/{}.json",
            no_fixture.fixture_id
        )))
        .unwrap();
        no_fixture.env_class = EnvClass::Local;
        vec![bad_owner, no_fixture]
    })?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("owner: \"eve@example.com\" is not exactly one principal"),
        "{text}"
    );
    assert!(
        text.contains("env_class: env class local may not freeze"),
        "{text}"
    );
    assert!(
        text.contains("fixture_digest: the fixture file does not exist"),
        "{text}"
    );
    assert!(text.contains("invalid: 3 errors, 0 warnings"), "{text}");
    let out = xtask(
        dir.path(),
        &["ledger", "check", "--now", NOW, "--format", "json"],
    )?;
    assert_eq!(out.status.code(), Some(1));
    let doc = parse(&out.stdout)?;
    assert_eq!(doc.get("ok"), Some(&Value::Bool(false)));
    let Some(Value::Array(problems)) = doc.get("problems") else {
        return Err("no problems array".into());
    };
    let rules: Vec<&Value> = problems.iter().filter_map(|p| p.get("rule")).collect();
    assert_eq!(rules.len(), 3);
    assert!(rules.contains(&&Value::String("owner".to_owned())));
    // Each problem names the place of its field's key, in text and in JSON.
    let ledger = std::fs::read_to_string(dir.path().join("freeze/ledger.json"))?;
    let key = ledger
        .find("\"owner\": \"eve@example.com\"")
        .ok_or("no owner key")?;
    let at = Position::at(ledger.as_bytes(), key);
    assert!(at.line > 1 && at.column > 1, "{at}");
    assert!(
        text.contains(&format!("error: freeze/ledger.json: {at}: row ")),
        "{at}: {text}"
    );
    let owner = problems
        .iter()
        .find(|p| p.get("rule") == Some(&Value::String("owner".to_owned())))
        .ok_or("no owner problem")?;
    assert_eq!(owner.get("line"), Some(&Value::Int(Int::from(at.line))));
    assert_eq!(owner.get("column"), Some(&Value::Int(Int::from(at.column))));
    Ok(())
}

#[test]
fn a_name_keyed_row_never_validates() -> TestResult {
    let dir = repo(|_| Vec::new())?;
    std::fs::write(
        dir.path().join("freeze/ledger.json"),
        "{\"schema\": \"freezegate-ledger-v1\", \"rows\": [{\"nodeid\": \"tests/test_tax.py::test_total\"}]}\n",
    )?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("rows must be keyed by a fixture digest, not a test name"),
        "{}",
        stdout(&out)
    );
    Ok(())
}

#[test]
fn empty_truncated_or_non_json_ledgers_exit_3_with_line_and_column() -> TestResult {
    let dir = repo(|root| vec![pinned_row(root, 0).unwrap()])?;
    let path = dir.path().join("freeze/ledger.json");
    let full = std::fs::read_to_string(&path)?;
    for (text, place) in [
        ("", "line 1, column 1"),
        (&full[..40], "line 3, column 3"),
        ("{\"schema\": nope}", "line 1, column 12"),
    ] {
        std::fs::write(&path, text)?;
        let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
        assert_eq!(out.status.code(), Some(3), "{text:?}");
        let err = stderr(&out);
        assert!(
            err.contains("freeze/ledger.json") && err.contains(place),
            "{text:?}: {err}"
        );
        // `list` says it in `check`'s words; `lift`, which writes, says what it could not do.
        let first = err.lines().next().unwrap_or("").to_owned();
        assert!(
            first.starts_with("error: freeze/ledger.json is not JSON: "),
            "{first}"
        );
        let out = xtask(dir.path(), &["ledger", "list", "--now", NOW])?;
        assert_eq!(out.status.code(), Some(3), "{text:?}");
        assert_eq!(stderr(&out).lines().next().unwrap_or(""), first, "{text:?}");
        let lift = [
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            "0000000000000000",
        ];
        let out = xtask(dir.path(), &lift)?;
        assert_eq!(out.status.code(), Some(3), "{text:?}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: cannot update the ledger: freeze/ledger.json: ")
                && err.contains(place),
            "{text:?}: {err}"
        );
    }
    Ok(())
}

/// A row's meta file that cannot be read leaves the row's `canonicalization` and
/// `origin_digest` unchecked: `ledger check` says so instead of passing in silence.
#[test]
fn check_warns_of_a_meta_file_it_cannot_read() -> TestResult {
    let mut id = None;
    let dir = repo(|root| {
        let row = pinned_row(root, 0).unwrap();
        id = Some(row.fixture_id);
        vec![row]
    })?;
    let id = id.ok_or("no row")?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let meta = format!("fixtures/{PROPERTY}/{id}.meta.json");
    std::fs::write(dir.path().join(&meta), "{")?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("warning: {meta} cannot be read, so its row's canonicalization and origin_digest are not checked against it: "))
            && err.contains("(`xtask gate` reports it as an integrity error)"),
        "{err}"
    );
    Ok(())
}

#[test]
fn a_broken_allowed_signers_file_exits_3_with_line_and_column() -> TestResult {
    let dir = repo(|root| vec![pinned_row(root, 0).unwrap()])?;
    std::fs::write(
        dir.path().join("freeze/allowed_signers"),
        format!("{SIGNERS}  \"bob@example.com ssh-ed25519 AAAAC3Nzb\n"),
    )?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let line = SIGNERS.lines().count() + 1;
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "freeze/allowed_signers is not an allowed signers file: line {line}, column 3: unterminated double quote"
        )),
        "{err}"
    );
    Ok(())
}

#[test]
fn expired_rows_warn_unless_strict() -> TestResult {
    let dir = repo(|root| {
        let mut r = pinned_row(root, 0).unwrap();
        r.created_at = ts("2026-09-01T00:00:00Z");
        r.expires_at = ts("2026-09-10T00:00:00Z");
        vec![r]
    })?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).ends_with("freeze/ledger.json: valid: 0 errors, 1 warning\n"),
        "{}",
        stdout(&out)
    );
    let ledger = std::fs::read_to_string(dir.path().join("freeze/ledger.json"))?;
    let at = Position::at(
        ledger.as_bytes(),
        ledger.find("\"expires_at\"").ok_or("no expires_at")?,
    );
    assert!(
        stdout(&out).contains(&format!(
            "warning: freeze/ledger.json: {at}: row 0 (fixture "
        )),
        "{}",
        stdout(&out)
    );
    let out = xtask(dir.path(), &["ledger", "check", "--strict", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(1));
    // Under --strict the expired row is an error, and the summary counts it as one.
    assert!(
        stdout(&out).contains(&format!("error: freeze/ledger.json: {at}: row 0 (fixture ")),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).ends_with("freeze/ledger.json: invalid: 1 error, 0 warnings\n"),
        "{}",
        stdout(&out)
    );
    Ok(())
}

#[test]
fn list_prints_a_table_and_json() -> TestResult {
    let dir = repo(|root| {
        let mut soon = pinned_row(root, 0).unwrap();
        soon.expires_at = ts("2026-09-18T00:00:00Z");
        vec![soon, pinned_row(root, 1).unwrap()]
    })?;
    let out = xtask(dir.path(), &["ledger", "list", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.starts_with("PROPERTY "), "{text}");
    assert!(
        text.contains("(in 12 hours)") && text.contains("(in 7 days, 22 hours)"),
        "{text}"
    );
    let out = xtask(
        dir.path(),
        &["ledger", "list", "--expiring", "1", "--now", NOW],
    )?;
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
    // Rows there, none in the window: said so, not "no freeze rows".
    let out = xtask(
        dir.path(),
        &["ledger", "list", "--expiring", "0", "--now", NOW],
    )?;
    assert_eq!(
        stdout(&out),
        "no freeze rows expire within 0 days (2 rows in all)\n"
    );
    let out = xtask(
        dir.path(),
        &["ledger", "list", "--format", "json", "--now", NOW],
    )?;
    let doc = parse(&out.stdout)?;
    assert_eq!(doc.get("now"), Some(&Value::String(NOW.to_owned())));
    assert!(matches!(doc.get("rows"), Some(Value::Array(rows)) if rows.len() == 2));
    Ok(())
}

/// A row that breaks a rule freezes nothing in the gate, so the listing does not call it
/// active, names the rules, and says so on stderr; the listing itself succeeds.
#[test]
fn list_marks_rows_that_break_rules() -> TestResult {
    let dir = repo(|root| {
        let mut stranger = pinned_row(root, 0).unwrap();
        stranger.owner = "eve@example.com".to_owned();
        vec![stranger, pinned_row(root, 1).unwrap()]
    })?;
    let out = xtask(
        dir.path(),
        &["ledger", "list", "--format", "json", "--now", NOW],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 of these rows breaks rules and freezes nothing"),
        "{}",
        stderr(&out)
    );
    let doc = parse(&out.stdout)?;
    let Some(Value::Array(rows)) = doc.get("rows") else {
        return Err("no rows".into());
    };
    let owner = |row: &Value| row.get("owner").cloned();
    let eve = Value::String("eve@example.com".to_owned());
    for row in rows {
        let broken = owner(row) == Some(eve.clone());
        assert_eq!(row.get("active"), Some(&Value::Bool(!broken)), "{row:?}");
        let rules = if broken {
            vec![Value::String("owner".to_owned())]
        } else {
            Vec::new()
        };
        assert_eq!(row.get("broken"), Some(&Value::Array(rules)), "{row:?}");
        assert_eq!(row.get("checked"), Some(&Value::Bool(true)), "{row:?}");
    }
    let out = xtask(dir.path(), &["ledger", "list", "--now", NOW])?;
    let text = stdout(&out);
    assert_eq!(
        text.matches("; freezes nothing, breaks owner)").count(),
        1,
        "{text}"
    );
    // A policy or signers file that cannot be read leaves the rows unchecked, with a
    // warning: the listing itself stays true and exits 0.
    std::fs::write(dir.path().join("freezegate.toml"), "[policy\n")?;
    let out = xtask(dir.path(), &["ledger", "list", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: the rows are listed unchecked against the rules: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out).lines().count(), 3, "{}", stdout(&out));
    assert!(
        !stdout(&out).contains("freezes nothing"),
        "{}",
        stdout(&out)
    );
    // The JSON says so on every row, since a tool reads stdout alone.
    let out = xtask(
        dir.path(),
        &["ledger", "list", "--now", NOW, "--format", "json"],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = parse(&out.stdout)?;
    let Some(Value::Array(rows)) = doc.get("rows") else {
        return Err("no rows".into());
    };
    assert_eq!(rows.len(), 2, "{}", stdout(&out));
    for row in rows {
        assert_eq!(row.get("checked"), Some(&Value::Bool(false)), "{row:?}");
        assert_eq!(
            row.get("broken"),
            Some(&Value::Array(Vec::new())),
            "{row:?}"
        );
    }
    Ok(())
}

#[test]
fn lift_removes_the_fixtures_rows_only() -> TestResult {
    let mut keep = None;
    let mut gone = None;
    let dir = repo(|root| {
        let a = pinned_row(root, 0).unwrap();
        let mut a_local = a.clone();
        a_local.env_class = EnvClass::Local;
        // An owner no terminal should see raw.
        a_local.owner = "\u{1b}[2Jbob\nlifted nothing".to_owned();
        let b = pinned_row(root, 1).unwrap();
        gone = Some(a.fixture_id);
        keep = Some(b.clone());
        vec![a, a_local, b]
    })?;
    let gone = gone.ok_or("no fixture")?.to_string();
    let args = [
        "ledger",
        "lift",
        "--property",
        PROPERTY,
        "--fixture",
        gone.as_str(),
    ];
    let out = xtask(dir.path(), &args)?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("lifted 2 rows"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(r#"(owner "\u{1b}[2Jbob\nlifted nothing")"#)
            && !stderr(&out).contains('\u{1b}'),
        "{}",
        stderr(&out)
    );
    let ledger = read(&dir.path().join("freeze/ledger.json"))?;
    assert_eq!(ledger.rows(), [keep.ok_or("no row")?]);
    // Lifting again finds nothing and leaves the file byte-identical.
    let before = std::fs::read(dir.path().join("freeze/ledger.json"))?;
    let out = xtask(dir.path(), &args)?;
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        std::fs::read(dir.path().join("freeze/ledger.json"))?,
        before
    );
    Ok(())
}

/// A stderr that cannot be written (`2>/dev/full`) loses the messages, not the work: `lift`
/// still removes the rows and exits 0, `list` still lists, where a panic would exit 101.
#[test]
fn a_stderr_that_cannot_be_written_changes_no_exit_code() -> TestResult {
    let mut gone = None;
    let dir = repo(|root| {
        let a = pinned_row(root, 0).unwrap();
        let mut stranger = pinned_row(root, 1).unwrap();
        stranger.owner = "eve@example.com".to_owned();
        gone = Some(a.fixture_id);
        vec![a, stranger]
    })?;
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full");
    let run = |args: &[&str]| -> std::io::Result<Output> {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .arg("-C")
            .arg(dir.path())
            .args(args)
            .stderr(full()?)
            .output()
    };
    // The stranger's row breaks a rule, so `list` has a note for stderr.
    let out = run(&["ledger", "list", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out).lines().count(), 3, "{}", stdout(&out));
    let gone = gone.ok_or("no fixture")?.to_string();
    let out = run(&["ledger", "lift", "--property", PROPERTY, "--fixture", &gone])?;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        read(&dir.path().join("freeze/ledger.json"))?.rows().len(),
        1
    );
    Ok(())
}

/// A `freezegate.toml` or `allowed_signers` that is a link to nothing is an error naming the
/// link (exit 3), as in the gate, not a missing file judged by the default policy or by no
/// signers at all; an `allowed_signers` in UTF-16 is named with its place.
#[test]
fn a_config_or_signers_link_to_nothing_is_an_error_not_a_missing_file() -> TestResult {
    for (file, link_to) in [
        ("freezegate.toml", "gone.toml"),
        ("freeze/allowed_signers", "../gone_signers"),
    ] {
        let dir = repo(|root| vec![pinned_row(root, 0).unwrap()])?;
        let _ = std::fs::remove_file(dir.path().join(file));
        std::os::unix::fs::symlink(link_to, dir.path().join(file))?;
        let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
        assert_eq!(out.status.code(), Some(3), "{file}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(file) && stderr(&out).contains("symbolic link"),
            "{file}: {}",
            stderr(&out)
        );
    }
    let dir = repo(|root| vec![pinned_row(root, 0).unwrap()])?;
    let mut utf16 = vec![0xff, 0xfe];
    utf16.extend(SIGNERS.encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::write(dir.path().join("freeze/allowed_signers"), utf16)?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 1, column 1: not UTF-8"),
        "{}",
        stderr(&out)
    );
    Ok(())
}

#[test]
fn lift_of_nothing_neither_creates_nor_rewrites_the_ledger() -> TestResult {
    let empty = repo(|_| Vec::new())?;
    let ledger_path = empty.path().join("freeze/ledger.json");
    let args = [
        "ledger",
        "lift",
        "--property",
        PROPERTY,
        "--fixture",
        "0123456789abcdef",
    ];
    let out = xtask(empty.path(), &args)?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        !ledger_path.exists(),
        "a lift of nothing created the ledger"
    );
    // Nor, in a repository without `freeze/`, that folder or the writers' lock.
    let bare = tempfile::tempdir()?;
    let out = xtask(bare.path(), &args)?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("has no row for fixture 0123456789abcdef"),
        "{}",
        stderr(&out)
    );
    assert!(
        !bare.path().join("freeze").exists(),
        "a lift created freeze/"
    );
    // A valid ledger laid out by hand (one line) stays as it is.
    let full = repo(|root| vec![pinned_row(root, 0).unwrap()])?;
    let path = full.path().join("freeze/ledger.json");
    let one_line: String = std::fs::read_to_string(&path)?
        .lines()
        .map(str::trim)
        .collect();
    std::fs::write(&path, &one_line)?;
    let out = xtask(full.path(), &args)?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path)?, one_line);
    Ok(())
}

#[test]
fn lift_prints_the_lifted_rows_as_json() -> TestResult {
    let mut id = None;
    let dir = repo(|root| {
        let row = pinned_row(root, 0).unwrap();
        id = Some(row.fixture_id);
        vec![row, pinned_row(root, 1).unwrap()]
    })?;
    let id = id.ok_or("no fixture")?.to_string();
    let out = xtask(
        dir.path(),
        &[
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            &id,
            "--format",
            "json",
        ],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(doc["schema"], "freezegate-ledger-lift-v1");
    let lifted = doc["lifted"].as_array().ok_or("no lifted array")?;
    assert_eq!(lifted.len(), 1);
    assert_eq!(lifted[0]["fixture_id"], id.as_str());
    assert_eq!(lifted[0]["owner"], "alice@example.com");
    Ok(())
}

#[test]
fn check_without_allowed_signers_says_the_file_is_missing() -> TestResult {
    let dir = repo(|root| vec![pinned_row(root, 0).unwrap()])?;
    std::fs::remove_file(dir.path().join("freeze/allowed_signers"))?;
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("freeze/allowed_signers does not exist"),
        "{}",
        stderr(&out)
    );
    Ok(())
}

/// The schema-breaking ledger of the schema tests: two rows, each with an unknown field.
fn schema_breaking_ledger(root: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let rows: Vec<Row> = (0..2)
        .map(|n| pinned_row(root, n))
        .collect::<Result<_, _>>()?;
    let text = Ledger::from_rows(rows)
        .render()
        .replace("\"owner\":", "\"note\": \"x\",\n      \"owner\":");
    std::fs::write(root.join("freeze/ledger.json"), text)?;
    Ok(())
}

#[test]
fn list_and_lift_print_every_schema_problem_once_each() -> TestResult {
    let dir = repo(|_| Vec::new())?;
    schema_breaking_ledger(dir.path())?;
    let before = std::fs::read(dir.path().join("freeze/ledger.json"))?;
    let fixture = pinned_row(dir.path(), 0)?.fixture_id.to_string();
    for args in [
        vec!["ledger", "list", "--now", NOW],
        vec![
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            &fixture,
        ],
    ] {
        let out = xtask(dir.path(), &args)?;
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let text = stderr(&out);
        assert!(!text.contains("error: error:"), "{text}");
        assert!(!text.contains(": error: "), "{text}");
        let problems: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("error: freeze/ledger.json: line "))
            .collect();
        assert_eq!(problems.len(), 2, "one line per problem: {text}");
        for (row, line) in problems.iter().enumerate() {
            assert!(
                line.contains(&format!("row {row} ")) && line.ends_with("note: unknown field"),
                "{line}"
            );
        }
        assert!(
            text.contains("freeze/ledger.json breaks schema freezegate-ledger-v1 (2 problems"),
            "{text}"
        );
    }
    assert_eq!(
        std::fs::read(dir.path().join("freeze/ledger.json"))?,
        before
    );
    Ok(())
}

#[test]
fn lift_writes_through_a_linked_ledger_and_locks_beside_its_target() -> TestResult {
    let mut gone = None;
    let dir = repo(|root| {
        let rows: Vec<Row> = (0..2).map(|n| pinned_row(root, n).unwrap()).collect();
        gone = Some(rows[0].fixture_id);
        rows
    })?;
    let root = dir.path();
    std::fs::create_dir_all(root.join("shared"))?;
    std::fs::rename(
        root.join("freeze/ledger.json"),
        root.join("shared/ledger.json"),
    )?;
    std::os::unix::fs::symlink("../shared/ledger.json", root.join("freeze/ledger.json"))?;
    let gone = gone.ok_or("no fixture")?.to_string();
    let out = xtask(
        root,
        &["ledger", "lift", "--property", PROPERTY, "--fixture", &gone],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let link = std::fs::symlink_metadata(root.join("freeze/ledger.json"))?;
    assert!(link.file_type().is_symlink(), "the link is still a link");
    assert_eq!(read(&root.join("shared/ledger.json"))?.rows().len(), 1);
    assert!(root.join("shared/.ledger.lock").exists());
    assert!(!root.join("freeze/.ledger.lock").exists());
    Ok(())
}

#[test]
fn a_ledger_link_to_nothing_is_an_error_naming_the_file() -> TestResult {
    let dir = repo(|_| Vec::new())?;
    let root = dir.path();
    std::os::unix::fs::symlink("../gone.json", root.join("freeze/ledger.json"))?;
    let fixture = "0123456789abcdef";
    for args in [
        vec!["ledger", "check", "--now", NOW],
        vec!["ledger", "list", "--now", NOW],
        vec![
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            fixture,
        ],
    ] {
        let out = xtask(root, &args)?;
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stdout(&out));
        assert!(
            stderr(&out).contains(
                "freeze/ledger.json is a symbolic link to ../gone.json, which does not exist"
            ),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(!stdout(&out).contains("valid"), "{}", stdout(&out));
    }
    assert!(!root.join("gone.json").exists());
    Ok(())
}

#[test]
fn a_ledger_that_cannot_be_updated_exits_3_naming_it() -> TestResult {
    let dir = repo(|_| Vec::new())?;
    let root = dir.path();
    std::fs::create_dir(root.join("freeze/ledger.json"))?;
    let out = xtask(
        root,
        &[
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            "0123456789abcdef",
        ],
    )?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("error: cannot update the ledger: freeze/ledger.json: "),
        "{}",
        stderr(&out)
    );
    Ok(())
}

/// The text of a ledger holding `rows` in this order, as a hand edit or a bad merge leaves it.
fn ledger_text_in_order(rows: &[Row]) -> String {
    let rows = rows.iter().map(Row::to_value).collect();
    freezegate_canon::to_pretty_string(&Value::Object(vec![
        (
            "schema".to_owned(),
            Value::String(freezegate_ledger::SCHEMA.to_owned()),
        ),
        ("rows".to_owned(), Value::Array(rows)),
    ]))
}

/// Two rows with one key (the `duplicate` rule) that differ in their owner and reason, and an
/// unrelated valid row, in a repository; the ledger holds the rows in the order `order`.
fn duplicates(
    order: [usize; 3],
) -> Result<(tempfile::TempDir, [Row; 3]), Box<dyn std::error::Error>> {
    let dir = repo(|_| Vec::new())?;
    let first = pinned_row(dir.path(), 0)?;
    let mut second = first.clone();
    second.reason = "a second opinion".to_owned();
    second.created_at = ts("2026-09-16T09:30:00Z");
    let other = pinned_row(dir.path(), 1)?;
    let rows = [first, second, other];
    let ordered: Vec<Row> = order.iter().map(|&i| rows[i].clone()).collect();
    std::fs::write(
        dir.path().join("freeze/ledger.json"),
        ledger_text_in_order(&ordered),
    )?;
    Ok((dir, rows))
}

/// A key that two rows share makes neither trustworthy: `ledger check` and `ledger list`
/// blame both, wherever each is in the file.
#[test]
fn every_row_of_a_duplicated_key_is_broken() -> TestResult {
    for order in [[0, 1, 2], [1, 0, 2], [2, 1, 0]] {
        let (dir, rows) = duplicates(order)?;
        let out = xtask(
            dir.path(),
            &["ledger", "check", "--format", "json", "--now", NOW],
        )?;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let mut blamed: Vec<u64> = doc["problems"]
            .as_array()
            .ok_or("no problems")?
            .iter()
            .filter(|p| p["rule"] == "duplicate")
            .filter_map(|p| p["row"].as_u64())
            .collect();
        blamed.sort_unstable();
        // The file's places of rows 0 and 1.
        let mut places: Vec<u64> = (0..3)
            .filter(|&at| order[at] != 2)
            .map(|at| at as u64)
            .collect();
        places.sort_unstable();
        assert_eq!(blamed, places, "{order:?}: {doc}");

        let out = xtask(
            dir.path(),
            &["ledger", "list", "--format", "json", "--now", NOW],
        )?;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("2 of these rows break rules and freeze nothing"),
            "{}",
            stderr(&out)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let listed = doc["rows"].as_array().ok_or("no rows")?;
        assert_eq!(listed.len(), 3);
        for row in listed {
            let duplicated = row["fixture_id"] == rows[0].fixture_id.to_string();
            let broken: &[&str] = if duplicated { &["duplicate"] } else { &[] };
            assert_eq!(row["broken"], serde_json::json!(broken), "{order:?}: {row}");
            assert_eq!(row["active"], !duplicated, "{order:?}: {row}");
        }
    }
    Ok(())
}

/// Rows with equal keys sort by their content, so a write leaves the same bytes whatever
/// order they had in the file.
#[test]
fn lifting_another_row_writes_the_same_bytes_whatever_the_order_of_duplicates() -> TestResult {
    let mut written = Vec::new();
    for order in [[0, 1, 2], [1, 0, 2]] {
        let (dir, rows) = duplicates(order)?;
        let other = rows[2].fixture_id.to_string();
        let out = xtask(
            dir.path(),
            &[
                "ledger",
                "lift",
                "--property",
                PROPERTY,
                "--fixture",
                &other,
            ],
        )?;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        written.push(std::fs::read_to_string(
            dir.path().join("freeze/ledger.json"),
        )?);
    }
    assert_eq!(written[0], written[1]);
    Ok(())
}

/// `ledger lift` does not follow a symbolic link where the writers' lock belongs: it exits 3
/// naming the link, creates nothing where it points and leaves the ledger as it was.
#[test]
fn a_lock_that_is_a_symbolic_link_stops_a_lift() -> TestResult {
    let mut fixture = None;
    let dir = repo(|root| {
        let r = pinned_row(root, 0).unwrap();
        fixture = Some(r.fixture_id.to_string());
        vec![r]
    })?;
    let fixture = fixture.ok_or("no fixture")?;
    let target = dir.path().join("created-by-the-lock");
    std::os::unix::fs::symlink(&target, dir.path().join("freeze/.ledger.lock"))?;
    let before = std::fs::read(dir.path().join("freeze/ledger.json"))?;
    let out = xtask(
        dir.path(),
        &[
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            &fixture,
        ],
    )?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: cannot update the ledger: freeze/ledger.json: freeze/.ledger.lock is a symbolic link; the writers' lock must be a plain file (remove the link)\n"
    );
    assert!(!target.exists());
    assert_eq!(
        std::fs::read(dir.path().join("freeze/ledger.json"))?,
        before
    );
    Ok(())
}

/// A writer that has to wait for the lock says so once on stderr, and goes on when the lock
/// is free. The lock is held here, by this test process, for as long as it takes the line to
/// appear.
#[test]
fn a_writer_waiting_for_the_lock_says_so() -> TestResult {
    use std::io::{BufRead, BufReader};
    let mut fixture = None;
    let dir = repo(|root| {
        let r = pinned_row(root, 0).unwrap();
        fixture = Some(r.fixture_id.to_string());
        vec![r, pinned_row(root, 1).unwrap()]
    })?;
    let fixture = fixture.ok_or("no fixture")?;
    let lock = std::fs::File::create(dir.path().join("freeze/.ledger.lock"))?;
    lock.lock()?;
    let mut lift = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir.path())
        .args([
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            &fixture,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let mut stderr_lines = BufReader::new(lift.stderr.take().ok_or("no stderr")?).lines();
    let first = stderr_lines.next().ok_or("stderr ended")??;
    assert_eq!(
        first,
        "waiting for freeze/.ledger.lock, held by another writer"
    );
    assert!(lift.try_wait()?.is_none(), "the lift waits for the lock");
    lock.unlock()?;
    let rest: Vec<String> = stderr_lines.collect::<Result<_, _>>()?;
    let status = lift.wait()?;
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert!(
        !rest.iter().any(|l| l.starts_with("waiting for")),
        "said once: {rest:?}"
    );
    assert_eq!(
        read(&dir.path().join("freeze/ledger.json"))?.rows().len(),
        1
    );
    // A writer that finds the lock free says nothing about it.
    let other = read(&dir.path().join("freeze/ledger.json"))?.rows()[0]
        .fixture_id
        .to_string();
    let out = xtask(
        dir.path(),
        &[
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            &other,
        ],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("waiting for"), "{}", stderr(&out));
    Ok(())
}

/// Temporaries that killed writers left in freeze/ are harmless but must not be committed:
/// `ledger check` warns about each on stderr and still passes; the next write removes them.
#[test]
fn check_warns_about_leftover_temporaries_and_passes() -> TestResult {
    let mut fixture = None;
    let dir = repo(|root| {
        let r = pinned_row(root, 0).unwrap();
        fixture = Some(r.fixture_id.to_string());
        vec![r, pinned_row(root, 1).unwrap()]
    })?;
    let fixture = fixture.ok_or("no fixture")?;
    let leftovers = [".ledger.json.4242-0.tmp", ".ledger.json.probe-77-0.tmp"];
    for name in leftovers {
        std::fs::write(dir.path().join("freeze").join(name), "{\"schema\"")?;
    }
    for format in ["text", "json"] {
        let out = xtask(
            dir.path(),
            &["ledger", "check", "--now", NOW, "--format", format],
        )?;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let warnings: Vec<String> = stderr(&out)
            .lines()
            .filter(|l| l.starts_with("warning: freeze/.ledger.json."))
            .map(str::to_owned)
            .collect();
        assert_eq!(
            warnings,
            leftovers.map(|name| format!(
                "warning: freeze/{name} is a temporary file a killed writer left: the next write of the ledger removes it; do not commit it"
            )),
            "{}",
            stderr(&out)
        );
    }
    let out = xtask(
        dir.path(),
        &[
            "ledger",
            "lift",
            "--property",
            PROPERTY,
            "--fixture",
            &fixture,
        ],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = xtask(dir.path(), &["ledger", "check", "--now", NOW])?;
    assert!(!stderr(&out).contains("temporary"), "{}", stderr(&out));
    for name in leftovers {
        assert!(!dir.path().join("freeze").join(name).exists(), "{name}");
    }
    Ok(())
}
