//! `xtask freeze` end to end: real oracle processes replay a pinned fixture, then the row is
//! written (or renewed), or refused with the ledger left byte-identical.

use std::path::Path;
use std::process::{Command, Output};

use freezegate_canon::fixture::{Meta, pin};
use freezegate_canon::{Canonicalization, FixtureId, canonicalize};
use freezegate_ledger::{EnvClass, read};
use freezegate_replay::Label;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const PROPERTY: &str = "tax.cached_total_equals_fresh_sum";
const NOW: &str = "2026-09-17T12:00:00Z";
const SIGNERS: &str = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice\n";
/// Fails on odd replays: a real flicker.
const FLICKER: &str = "[ $((FREEZEGATE_REPLAY % 2)) -eq 0 ]";
/// A ledger with one unrelated row, so refusals can be checked byte for byte.
const OTHER_ROW_LEDGER: &str = r#"{
  "schema": "freezegate-ledger-v1",
  "rows": [
    {
      "property_id": "cart.discount_never_negative",
      "fixture_id": "aaaaaaaaaaaaaaaa",
      "fixture_digest": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "origin_digest": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
      "canonicalization": "freezegate-canon-v1",
      "seed": 1,
      "env_class": "remote",
      "runner_id": "ci-runner-1",
      "replays": [
        "assert_pass",
        "assert_fail"
      ],
      "patch_id": "abc",
      "owner": "alice@example.com",
      "reason": "clock skew",
      "created_at": "2026-09-16T00:00:00Z",
      "expires_at": "2026-09-20T00:00:00Z"
    }
  ]
}
"#;

/// A repository with a pinned fixture, signers and a one-row ledger; returns the fixture id.
fn repo() -> Result<(tempfile::TempDir, FixtureId), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    let fixture = canonicalize(br#"{"items":[3,4],"total":7}"#, Canonicalization::V1)?;
    let origin = canonicalize(br#"{"items":[3,4,0,0],"total":7}"#, Canonicalization::V1)?;
    let meta = Meta {
        property_id: PROPERTY.parse()?,
        fixture_id: fixture.fixture_id(),
        fixture_digest: fixture.digest(),
        origin_id: origin.fixture_id(),
        origin_digest: origin.digest(),
        canonicalization: Canonicalization::V1,
        seed: 4242,
        pinned_at: "2026-09-14T08:00:00Z".to_owned(),
        patch_id: "feedface".to_owned(),
        oracle_calls: 5,
        // The step that turns the origin into the fixture: a freeze checks it.
        shrink_path: vec![freezegate_canon::parse_str(
            r#"{"pass": "delete", "pointer": "/items", "start": 2, "count": 2, "reindex": false}"#,
        )?],
    };
    pin(root, &meta, &fixture, &origin)?;
    std::fs::create_dir_all(root.join("freeze"))?;
    std::fs::write(root.join("freeze/allowed_signers"), SIGNERS)?;
    std::fs::write(root.join("freeze/ledger.json"), OTHER_ROW_LEDGER)?;
    Ok((dir, fixture.fixture_id()))
}

/// The property as `freezegate.toml` declares it: oracle, replay count, deadline.
#[derive(Clone, Copy)]
struct Prop {
    oracle: &'static str,
    replays: usize,
    timeout_ms: u64,
}

impl Prop {
    /// The oracle with the default policy: 7 replays, 10 s each.
    fn oracle(oracle: &'static str) -> Prop {
        Prop {
            oracle,
            replays: 7,
            timeout_ms: 10_000,
        }
    }
}

/// Writes `freezegate.toml` declaring the property as `prop` says.
fn write_config(dir: &Path, prop: Prop) -> std::io::Result<()> {
    let oracle = prop.oracle.replace('\\', "\\\\").replace('"', "\\\"");
    std::fs::write(
        dir.join("freezegate.toml"),
        format!(
            "[policy]\nreplays = {}\n\n[[property]]\nid = \"{PROPERTY}\"\noracle = \"{oracle}\"\ntimeout_ms = {}\n",
            prop.replays, prop.timeout_ms
        ),
    )
}

/// Runs `xtask freeze` on a remote runner with the usual flags plus `extra`, the property
/// declared with `oracle` in `freezegate.toml`.
fn freeze(
    dir: &Path,
    fixture: FixtureId,
    oracle: &'static str,
    extra: &[&str],
) -> std::io::Result<Output> {
    freeze_env(dir, fixture, Prop::oracle(oracle), extra, &[])
}

/// [`freeze`] with the property declared as `prop` and environment variables set after the
/// defaults.
fn freeze_env(
    dir: &Path,
    fixture: FixtureId,
    prop: Prop,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::io::Result<Output> {
    write_config(dir, prop)?;
    let fixture = fixture.to_string();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.arg("-C").arg(dir).args([
        "freeze",
        "--property",
        PROPERTY,
        "--fixture",
        fixture.as_str(),
        "--now",
        NOW,
        "--patch-id",
        "0123456789abcdef0123456789abcdef01234567",
    ]);
    let mut defaults = vec![
        ("--owner", "alice@example.com"),
        ("--reason", "thread scheduling in the cache warm-up"),
        ("--expires-in", "7"),
    ];
    defaults.retain(|(flag, _)| !extra.contains(flag));
    for (flag, value) in defaults {
        cmd.args([flag, value]);
    }
    cmd.args(extra)
        .env("ENV_CLASS", "remote")
        .env("RUNNER_ID", "ci-runner-7")
        .env_remove("PROP_SEED")
        .env_remove("REPLAYS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_flickering_fixture_gets_a_row_and_a_second_freeze_renews_it() -> TestResult {
    let (dir, fixture) = repo()?;
    let out = freeze(dir.path(), fixture, FLICKER, &[])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("froze "));
    let ledger = read(&dir.path().join("freeze/ledger.json"))?;
    assert_eq!(ledger.rows().len(), 2);
    let row = ledger
        .rows()
        .iter()
        .find(|r| r.fixture_id == fixture)
        .ok_or("no row for the fixture")?;
    let expected: Vec<Label> = (0..7)
        .map(|i| {
            if i % 2 == 0 {
                Label::AssertPass
            } else {
                Label::AssertFail
            }
        })
        .collect();
    assert_eq!(row.replays, expected, "labels in run-index order");
    assert_eq!(row.env_class, EnvClass::Remote);
    assert_eq!(row.runner_id, "ci-runner-7");
    assert_eq!(row.seed.to_string(), "20260917", "the policy's seed");
    assert_eq!(row.created_at.to_string(), NOW);
    assert_eq!(row.expires_at.to_string(), "2026-09-24T12:00:00Z");
    // Freezing the same key again renews the row instead of adding one.
    let out = freeze(
        dir.path(),
        fixture,
        FLICKER,
        &["--reason", "renewed: still flickers", "--expires-in", "14"],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("renewed "));
    let ledger = read(&dir.path().join("freeze/ledger.json"))?;
    assert_eq!(ledger.rows().len(), 2);
    let row = ledger
        .rows()
        .iter()
        .find(|r| r.fixture_id == fixture)
        .ok_or("no row")?;
    assert_eq!(row.reason, "renewed: still flickers");
    assert_eq!(row.expires_at.to_string(), "2026-10-01T12:00:00Z");
    Ok(())
}

/// One refusal case: oracle, extra flags, environment, expected message.
type Case = (Prop, &'static [&'static str], Env, &'static str);
/// Environment variables set for one run.
type Env = &'static [(&'static str, &'static str)];

/// Each refusal exits 1, names its rule, and leaves the ledger byte-identical.
#[test]
fn every_refusal_names_its_rule_and_writes_nothing() -> TestResult {
    let (dir, fixture) = repo()?;
    let ledger_path = dir.path().join("freeze/ledger.json");
    let cases: [Case; 7] = [
        (
            Prop::oracle("exit 1"),
            &[],
            &[],
            "all 7 replays failed — this is a regression, fix it",
        ),
        (Prop::oracle("exit 0"), &[], &[], "all 7 replays passed"),
        (
            Prop {
                oracle: "if [ \"$FREEZEGATE_REPLAY\" = 1 ]; then sleep 5; fi; [ $((FREEZEGATE_REPLAY % 2)) -eq 0 ]",
                replays: 3,
                timeout_ms: 300,
            },
            &[],
            &[],
            "1 replay timed out — infra queue",
        ),
        (
            Prop {
                oracle: "if [ \"$FREEZEGATE_REPLAY\" = 2 ]; then exit 7; fi; [ $((FREEZEGATE_REPLAY % 2)) -eq 0 ]",
                replays: 4,
                timeout_ms: 10_000,
            },
            &[],
            &[],
            "1 replay broke the harness — infra queue",
        ),
        (
            Prop::oracle(FLICKER),
            &[],
            &[("ENV_CLASS", "local")],
            "env class local may not freeze",
        ),
        (
            Prop::oracle(FLICKER),
            &["--owner", "eve@example.com"],
            &[],
            "owner \"eve@example.com\" is not exactly one principal of freeze/allowed_signers",
        ),
        (
            Prop::oracle(FLICKER),
            &["--expires-in", "30"],
            &[],
            "an expiry of 30 days is over the policy limit of 14 days",
        ),
    ];
    for (prop, extra, env, message) in cases {
        let oracle = prop.oracle;
        let before = std::fs::read(&ledger_path)?;
        let out = freeze_env(dir.path(), fixture, prop, extra, env)?;
        assert_eq!(out.status.code(), Some(1), "{oracle}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("freeze write refused: ") && err.contains(message),
            "{oracle} {extra:?}: {err}"
        );
        assert_eq!(std::fs::read(&ledger_path)?, before, "{message}");
    }
    Ok(())
}

#[test]
fn without_a_meta_file_freeze_exits_3_and_says_to_classify() -> TestResult {
    let (dir, fixture) = repo()?;
    std::fs::remove_file(
        dir.path()
            .join(format!("fixtures/{PROPERTY}/{fixture}.meta.json")),
    )?;
    let out = freeze(dir.path(), fixture, FLICKER, &[])?;
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("classify"), "{}", stderr(&out));
    Ok(())
}

#[test]
fn a_remote_runner_must_name_itself() -> TestResult {
    let (dir, fixture) = repo()?;
    write_config(dir.path(), Prop::oracle(FLICKER))?;
    let fixture = fixture.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir.path())
        .args([
            "freeze",
            "--property",
            PROPERTY,
            "--fixture",
            &fixture,
            "--owner",
            "alice@example.com",
            "--reason",
            "r",
            "--expires-in",
            "7",
            "--patch-id",
            "abc",
        ])
        .env("ENV_CLASS", "remote")
        .env_remove("RUNNER_ID")
        .output()?;
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("RUNNER_ID"), "{}", stderr(&out));
    Ok(())
}

#[test]
fn patch_id_defaults_to_head() -> TestResult {
    let (dir, fixture) = repo()?;
    write_config(dir.path(), Prop::oracle(FLICKER))?;
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
    };
    git(&["init", "-q"])?;
    git(&["commit", "-q", "--allow-empty", "-m", "base"])?;
    let head = String::from_utf8(git(&["rev-parse", "HEAD"])?.stdout)?;
    let fixture_text = fixture.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir.path())
        .args([
            "freeze",
            "--property",
            PROPERTY,
            "--fixture",
            &fixture_text,
            "--owner",
            "alice@example.com",
            "--reason",
            "r",
            "--expires-in",
            "7",
            "--now",
            NOW,
        ])
        .env("ENV_CLASS", "remote")
        .env("RUNNER_ID", "ci-runner-7")
        .env_remove("REPLAYS")
        .env_remove("PROP_SEED")
        .output()?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ledger = read(&dir.path().join("freeze/ledger.json"))?;
    let row = ledger
        .rows()
        .iter()
        .find(|r| r.fixture_id == fixture)
        .ok_or("no row")?;
    assert_eq!(row.patch_id, head.trim());
    // In a git repository that does not ignore the writers' lock, freeze says to ignore it.
    assert!(
        stderr(&out).contains("freeze/.ledger.lock is the writers' lock"),
        "{}",
        stderr(&out)
    );
    // ... and the temporaries a killed writer leaves, until they are ignored too.
    let freeze_again = || {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .arg("-C")
            .arg(dir.path())
            .args(["freeze", "--property", PROPERTY, "--fixture", &fixture_text])
            .args(["--owner", "alice@example.com", "--reason", "r"])
            .args(["--expires-in", "7", "--now", NOW])
            .env("ENV_CLASS", "remote")
            .env("RUNNER_ID", "ci-runner-7")
            .output()
    };
    let tmp_note = "note: freeze/.*.tmp are temporaries a killed writer leaves (the next write removes them), not part of the ledger: add the pattern to .gitignore";
    assert!(stderr(&out).contains(tmp_note), "{}", stderr(&out));
    std::fs::write(dir.path().join(".gitignore"), "/freeze/.ledger.lock\n")?;
    let out = freeze_again()?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("writers' lock"), "{}", stderr(&out));
    assert!(stderr(&out).contains(tmp_note), "{}", stderr(&out));
    std::fs::write(
        dir.path().join(".gitignore"),
        "/freeze/.ledger.lock\n/freeze/.*.tmp\n",
    )?;
    let out = freeze_again()?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(".gitignore"), "{}", stderr(&out));
    Ok(())
}

#[test]
fn with_freezegate_toml_the_file_alone_sets_oracle_seed_and_replays() -> TestResult {
    let (dir, fixture) = repo()?;
    std::fs::write(
        dir.path().join("freezegate.toml"),
        format!(
            "[policy]\nreplays = 5\n\n[[property]]\nid = \"{PROPERTY}\"\noracle = \"{FLICKER}\"\n"
        ),
    )?;
    let fixture_text = fixture.to_string();
    let base = [
        "freeze",
        "--property",
        PROPERTY,
        "--fixture",
        &fixture_text,
        "--owner",
        "alice@example.com",
        "--reason",
        "r",
        "--expires-in",
        "7",
        "--now",
        NOW,
        "--patch-id",
        "abc",
    ];
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .arg("-C")
            .arg(dir.path())
            .args(base)
            .args(extra)
            .env("ENV_CLASS", "remote")
            .env("RUNNER_ID", "ci-runner-7")
            .env("REPLAYS", "3")
            .env_remove("PROP_SEED")
            .output()
    };
    // No flag may override the file.
    for extra in [
        &["--oracle", "exit 1"][..],
        &["--replays", "3"],
        &["--seed", "1"],
        &["--timeout-ms", "60000"],
    ] {
        let out = run(extra)?;
        assert_eq!(out.status.code(), Some(3), "{extra:?}");
        assert!(
            stderr(&out).contains(&format!("{} is not accepted", extra[0])),
            "{}",
            stderr(&out)
        );
    }
    let out = run(&[])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("REPLAYS is ignored"),
        "{}",
        stderr(&out)
    );
    let ledger = read(&dir.path().join("freeze/ledger.json"))?;
    let row = ledger
        .rows()
        .iter()
        .find(|r| r.fixture_id == fixture)
        .ok_or("no row")?;
    assert_eq!(row.replays.len(), 5, "the file's replay count, not REPLAYS");
    assert_eq!(row.seed.to_string(), "20260917", "the file's seed");
    Ok(())
}

#[test]
fn without_freezegate_toml_there_is_nothing_to_replay_with() -> TestResult {
    let (dir, fixture) = repo()?;
    let ledger_path = dir.path().join("freeze/ledger.json");
    let before = std::fs::read(&ledger_path)?;
    let out = freeze_on_remote(dir.path(), &fixture.to_string(), "alice@example.com")?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("there is no freezegate.toml"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&ledger_path)?, before);
    Ok(())
}

/// Bad input exits 3 before any rule refuses and before the oracle runs, whatever else is
/// wrong with the request (SPEC §8: 3, then 1, then 2).
#[test]
fn bad_input_exits_3_before_any_refusal_or_replay() -> TestResult {
    // The oracle leaves a mark when it runs.
    const MARKING: &str = "touch ran; [ $((FREEZEGATE_REPLAY % 2)) -eq 0 ]";
    type Breakage = (&'static str, fn(&Path) -> std::io::Result<()>, &'static str);
    let breakages: [Breakage; 5] = [
        (
            "a meta whose origin_digest is not its origin's",
            |root| {
                let dir = root.join(format!("fixtures/{PROPERTY}"));
                for entry in std::fs::read_dir(&dir)? {
                    let path = entry?.path();
                    if path.to_string_lossy().ends_with(".meta.json") {
                        // The next-to-last hex digit: the origin's id, its first 16, still matches.
                        let text = std::fs::read_to_string(&path)?;
                        let at = text.find("\"origin_digest\": \"").unwrap_or(0) + 17 + 63;
                        let last = if &text[at..=at] == "0" { "1" } else { "0" };
                        let changed = format!("{}{last}{}", &text[..at], &text[at + 1..]);
                        std::fs::write(&path, changed)?;
                    }
                }
                Ok(())
            },
            "does not match the origin's digest",
        ),
        (
            "a missing fixture file",
            |root| {
                let dir = root.join(format!("fixtures/{PROPERTY}"));
                for entry in std::fs::read_dir(&dir)? {
                    let path = entry?.path();
                    if path.extension().is_some_and(|e| e == "json")
                        && !path.to_string_lossy().ends_with(".meta.json")
                    {
                        std::fs::remove_file(path)?;
                    }
                }
                Ok(())
            },
            "No such file",
        ),
        (
            "a truncated ledger",
            |root| {
                std::fs::write(
                    root.join("freeze/ledger.json"),
                    r#"{"schema": "freezegate-ledger-v1", "rows": ["#,
                )
            },
            "line 1, column",
        ),
        (
            "a broken allowed_signers",
            |root| {
                std::fs::write(
                    root.join("freeze/allowed_signers"),
                    "alice@example.com \"x\n",
                )
            },
            "allowed_signers",
        ),
        (
            "an unknown property",
            |_| Ok(()),
            "is not in freezegate.toml",
        ),
    ];
    for (what, breakage, message) in breakages {
        let (dir, fixture) = repo()?;
        breakage(dir.path())?;
        let mut extra = vec!["--owner", "eve@example.com"];
        if what == "an unknown property" {
            // The config declares another property than the one asked for.
            std::fs::write(
                dir.path().join("freezegate.toml"),
                "[[property]]\nid = \"other.property\"\noracle = \"true\"\n",
            )?;
            let out = freeze_on_remote(dir.path(), &fixture.to_string(), "eve@example.com")?;
            assert_eq!(out.status.code(), Some(3), "{what}: {}", stderr(&out));
            assert!(stderr(&out).contains(message), "{what}: {}", stderr(&out));
            continue;
        }
        extra.extend(["--expires-in", "99"]);
        let out = freeze_env(dir.path(), fixture, Prop::oracle(MARKING), &extra, &[])?;
        assert_eq!(out.status.code(), Some(3), "{what}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{what}: {}", stderr(&out));
        assert!(!dir.path().join("ran").exists(), "{what}: the oracle ran");
    }
    Ok(())
}

/// `freeze` of `PROPERTY`'s `fixture` for `owner` on a remote runner, 7 days, with the
/// `freezegate.toml` of `dir` as it is.
fn freeze_on_remote(dir: &Path, fixture: &str, owner: &str) -> std::io::Result<Output> {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("-C")
        .arg(dir)
        .args(["freeze", "--property", PROPERTY, "--fixture", fixture])
        .args(["--owner", owner, "--reason", "r"])
        .args(["--expires-in", "7", "--now", NOW, "--patch-id", "abc"])
        .env("ENV_CLASS", "remote")
        .env("RUNNER_ID", "ci-runner-7")
        .output()
}

/// A property with no `oracle` that no Rust code registers has nothing to replay with: a
/// configuration error at its table, before any replay.
#[test]
fn a_property_with_nothing_to_run_is_a_configuration_error() -> TestResult {
    let (dir, fixture) = repo()?;
    std::fs::write(
        dir.path().join("freezegate.toml"),
        format!("[policy]\nreplays = 3\n\n[[property]]\nid = \"{PROPERTY}\"\n"),
    )?;
    let out = freeze_on_remote(dir.path(), &fixture.to_string(), "alice@example.com")?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "freezegate.toml: line 4, column 1: property[0]: property {PROPERTY} has no `oracle`"
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("freeze/ledger.json"))?,
        OTHER_ROW_LEDGER,
        "no row written"
    );
    Ok(())
}

#[test]
fn without_allowed_signers_the_refusal_names_the_missing_file() -> TestResult {
    let (dir, fixture) = repo()?;
    std::fs::remove_file(dir.path().join("freeze/allowed_signers"))?;
    let out = freeze(dir.path(), fixture, FLICKER, &[])?;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("freeze/allowed_signers does not exist"),
        "{}",
        stderr(&out)
    );
    Ok(())
}

#[test]
fn json_output_holds_the_result_the_labels_and_the_row() -> TestResult {
    let (dir, fixture) = repo()?;
    let out = freeze(dir.path(), fixture, FLICKER, &["--format", "json"])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(doc["schema"], "freezegate-freeze-result-v1");
    assert_eq!(doc["result"], "froze");
    assert_eq!(doc["rule"], serde_json::Value::Null);
    assert_eq!(doc["labels"].as_array().map(Vec::len), Some(7));
    assert_eq!(doc["labels"][1], "assert_fail");
    assert_eq!(doc["row"]["fixture_id"], fixture.to_string());
    assert_eq!(doc["row"]["runner_id"], "ci-runner-7");
    // A refusal is a document too, with the rule that refused and no row; exit 1.
    let out = freeze(
        dir.path(),
        fixture,
        FLICKER,
        &["--format", "json", "--expires-in", "30"],
    )?;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(doc["result"], "refused");
    assert_eq!(doc["rule"], "expiry");
    assert_eq!(doc["row"], serde_json::Value::Null);
    assert_eq!(
        doc["labels"],
        serde_json::json!([]),
        "refused before any replay"
    );
    let out = freeze(dir.path(), fixture, "exit 1", &["--format", "json"])?;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(doc["rule"], "regression");
    assert_eq!(doc["labels"][0], "assert_fail");
    Ok(())
}

#[test]
fn a_freeze_writes_through_a_linked_ledger() -> TestResult {
    let (dir, fixture) = repo()?;
    let root = dir.path();
    std::fs::create_dir_all(root.join("shared"))?;
    std::fs::rename(
        root.join("freeze/ledger.json"),
        root.join("shared/ledger.json"),
    )?;
    std::os::unix::fs::symlink("../shared/ledger.json", root.join("freeze/ledger.json"))?;
    let out = freeze(root, fixture, FLICKER, &[])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let link = std::fs::symlink_metadata(root.join("freeze/ledger.json"))?;
    assert!(link.file_type().is_symlink(), "the link is still a link");
    assert_eq!(read(&root.join("shared/ledger.json"))?.rows().len(), 2);
    assert!(root.join("shared/.ledger.lock").exists());
    assert!(!root.join("freeze/.ledger.lock").exists());
    Ok(())
}

/// Replays the flicker, leaving a mark that it ran.
const MARKING_FLICKER: &str = "touch replayed; [ $((FREEZEGATE_REPLAY % 2)) -eq 0 ]";

#[test]
fn a_ledger_that_cannot_be_written_exits_3_before_any_replay() -> TestResult {
    let (dir, fixture) = repo()?;
    let root = dir.path();
    // No writer, root included, can open a directory as the lock file.
    std::fs::create_dir(root.join("freeze/.ledger.lock"))?;
    let before = std::fs::read(root.join("freeze/ledger.json"))?;
    for format in ["text", "json"] {
        let out = freeze(root, fixture, MARKING_FLICKER, &["--format", format])?;
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with("error: cannot update the ledger: freeze/ledger.json: "),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains(".tmp"), "{}", stderr(&out));
        assert!(
            out.stdout.is_empty(),
            "bad input prints no outcome document"
        );
        assert!(!root.join("replayed").exists(), "no replay ran");
    }
    assert_eq!(std::fs::read(root.join("freeze/ledger.json"))?, before);
    Ok(())
}

#[test]
fn a_broken_ledger_link_stops_a_freeze() -> TestResult {
    let (dir, fixture) = repo()?;
    let root = dir.path();
    std::fs::remove_file(root.join("freeze/ledger.json"))?;
    std::os::unix::fs::symlink("../gone.json", root.join("freeze/ledger.json"))?;
    let out = freeze(root, fixture, MARKING_FLICKER, &[])?;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "freeze/ledger.json is a symbolic link to ../gone.json, which does not exist"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!root.join("replayed").exists(), "no replay ran");
    assert!(!root.join("gone.json").exists());
    Ok(())
}

#[test]
fn env_class_and_runner_id_flags_beat_the_environment() -> TestResult {
    // The defaults of `freeze_env` set ENV_CLASS=remote and RUNNER_ID=ci-runner-7.
    let (dir, fixture) = repo()?;
    let before = std::fs::read(dir.path().join("freeze/ledger.json"))?;
    let prop = Prop::oracle(FLICKER);
    // --env-class local beats ENV_CLASS=remote: a local runner may not freeze.
    let out = freeze_env(dir.path(), fixture, prop, &["--env-class", "local"], &[])?;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("env class local may not freeze"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(dir.path().join("freeze/ledger.json"))?,
        before
    );
    // A bad value is bad input naming the flag.
    let out = freeze_env(dir.path(), fixture, prop, &["--env-class", "laptop"], &[])?;
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("--env-class \"laptop\" is not an env class"),
        "{}",
        stderr(&out)
    );
    let out = freeze_env(dir.path(), fixture, prop, &["--runner-id", ""], &[])?;
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("--runner-id"), "{}", stderr(&out));
    // --runner-id beats RUNNER_ID in the written row.
    let out = freeze_env(
        dir.path(),
        fixture,
        prop,
        &["--env-class", "remote", "--runner-id", "ci-flag-3"],
        &[("ENV_CLASS", "local")],
    )?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ledger = read(&dir.path().join("freeze/ledger.json"))?;
    let row = ledger
        .rows()
        .iter()
        .find(|r| r.fixture_id == fixture)
        .ok_or("no row for the fixture")?;
    assert_eq!(row.env_class, EnvClass::Remote);
    assert_eq!(row.runner_id, "ci-flag-3");
    Ok(())
}

/// A ledger with two rows of the key a freeze would write freezes nothing for that key;
/// renewing one of them would leave the other, so the freeze is refused before any replay.
#[test]
fn a_key_with_duplicate_rows_is_refused_and_the_ledger_left_alone() -> TestResult {
    let (dir, fixture) = repo()?;
    let root = dir.path();
    let out = freeze(root, fixture, FLICKER, &[])?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ledger_path = root.join("freeze/ledger.json");
    let mut rows: Vec<_> = read(&ledger_path)?.rows().to_vec();
    let mut twin = rows
        .iter()
        .find(|r| r.fixture_id == fixture)
        .ok_or("no row")?
        .clone();
    twin.reason = "a second opinion".to_owned();
    rows.push(twin);
    let text = freezegate_canon::to_pretty_string(&freezegate_canon::Value::Object(vec![
        (
            "schema".to_owned(),
            freezegate_canon::Value::String(freezegate_ledger::SCHEMA.to_owned()),
        ),
        (
            "rows".to_owned(),
            freezegate_canon::Value::Array(rows.iter().map(|r| r.to_value()).collect()),
        ),
    ]));
    std::fs::write(&ledger_path, &text)?;
    for format in ["text", "json"] {
        let out = freeze(root, fixture, MARKING_FLICKER, &["--format", format])?;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("freeze write refused: freeze/ledger.json has 2 rows with key ("),
            "{}",
            stderr(&out)
        );
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            assert_eq!(doc["rule"], "duplicate");
            assert_eq!(doc["result"], "refused");
        }
        assert_eq!(std::fs::read_to_string(&ledger_path)?, text);
        assert!(!root.join("replayed").exists(), "no replay ran");
    }
    Ok(())
}

/// A writability probe left by a process killed between creating and removing it, with the
/// process id this freeze gets (ids repeat in containers): the freeze still runs, and its
/// write sweeps the leftovers. `exec` keeps the shell's id for xtask.
#[test]
fn a_leftover_probe_with_this_process_id_does_not_stop_a_freeze() -> TestResult {
    let (dir, fixture) = repo()?;
    let root = dir.path();
    write_config(root, Prop::oracle(FLICKER))?;
    let fixture = fixture.to_string();
    let out = Command::new("sh")
        .arg("-c")
        .arg(
            "touch freeze/.ledger.json-probe-$$ freeze/.ledger.json.probe-$$-0.tmp && \
             ls -a freeze > leftovers && exec \"$@\"",
        )
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "freeze",
            "--property",
            PROPERTY,
            "--fixture",
            fixture.as_str(),
            "--now",
            NOW,
            "--patch-id",
            "0123456789abcdef0123456789abcdef01234567",
            "--owner",
            "alice@example.com",
            "--reason",
            "thread scheduling in the cache warm-up",
            "--expires-in",
            "7",
        ])
        .current_dir(root)
        .env("ENV_CLASS", "remote")
        .env("RUNNER_ID", "ci-runner-7")
        .env_remove("PROP_SEED")
        .env_remove("REPLAYS")
        .output()?;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let before = std::fs::read_to_string(root.join("leftovers"))?;
    assert_eq!(before.matches("probe-").count(), 2, "{before}");
    let after: Vec<String> = std::fs::read_dir(root.join("freeze"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("probe"))
        .collect();
    assert!(after.is_empty(), "swept by the write: {after:?}");
    assert_eq!(read(&root.join("freeze/ledger.json"))?.rows().len(), 2);
    Ok(())
}
