//! What a pinned fixture's meta file and a ledger row must agree on, end to end through the
//! real binary in temporary git repositories: the meta's shrink path re-applies to its origin
//! (SPEC §3, §5), a row repeats its meta's canonicalization and origin digest (SPEC §3), a
//! patch id is never written empty, and a row's seed is one a run can have.

mod support;

use support::{Repo, Run};

use freezegate_canon::fixture::Meta;
use freezegate_canon::{Value, parse_str};

const NOW: &str = "2026-01-02T00:00:00Z";

/// Fails on even replays, and always outside a replay (first run, shrinking): a flicker.
const FLAKY: &str = "cat >/dev/null\n[ $((FREEZEGATE_REPLAY % 2)) = 0 ] && exit 1\nexit 0\n";

const CONFIG: &str = "[policy]\nreplays = 3\ntimeout_ms = 5000\nmin_cases = 1\n\
freeze_env_classes = [\"remote\", \"local\"]\n\n\
[[property]]\nid = \"p.flaky\"\noracle = \"sh flaky.sh\"\n";

const SIGNERS: &str = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPp6jZo0Gkc4e1Qx0Ku6Ho0s8Xfb4tHjAr0Wq9ptQ0V8\n";

/// A repository with `p.flaky`, its fixture `{}` pinned from origin `{"x":1}` by classify,
/// and a local freeze row for it written by `freeze`.
struct Scene {
    repo: Repo,
    fixture: String,
}

impl std::ops::Deref for Scene {
    type Target = Repo;
    fn deref(&self) -> &Repo {
        &self.repo
    }
}

impl Scene {
    fn new() -> Scene {
        let repo = Repo::new(&[
            ("freezegate.toml", CONFIG),
            ("flaky.sh", FLAKY),
            ("freeze/allowed_signers", SIGNERS),
            (".gitignore", "/freeze/.ledger.lock\n"),
        ]);
        repo.write("input.json", "{\"x\": 1}");
        let run = repo.xtask(
            &[
                "classify",
                "--property",
                "p.flaky",
                "--input",
                "input.json",
                "--now",
                NOW,
                "--patch-id",
                "test-patch",
            ],
            &[],
        );
        std::fs::remove_file(repo.dir.join("input.json")).expect("rm");
        let record: serde_json::Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("classify record: {e}\n{}\n{}", run.stdout, run.stderr));
        assert_eq!(record["action"], "freeze_after_pin", "{}", run.stdout);
        let fixture = record["fixture_id"]
            .as_str()
            .expect("fixture id")
            .to_owned();
        let scene = Scene { repo, fixture };
        let run = scene.freeze(&scene.fixture);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        scene
    }

    fn freeze(&self, fixture: &str) -> Run {
        self.xtask(
            &[
                "freeze",
                "--property",
                "p.flaky",
                "--fixture",
                fixture,
                "--owner",
                "alice@example.com",
                "--reason",
                "odd runs fail",
                "--expires-in",
                "7",
                "--now",
                NOW,
                "--patch-id",
                "test-patch",
            ],
            &[],
        )
    }

    /// `gate --format json`: exit code and report.
    fn gate(&self) -> (i32, serde_json::Value) {
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
            &[],
        );
        let report = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("gate report: {e}\n{}\n{}", run.stdout, run.stderr));
        (run.code, report)
    }

    fn meta_file(&self) -> String {
        format!("fixtures/p.flaky/{}.meta.json", self.fixture)
    }

    /// Rewrites the meta file through `edit`, in its rendered layout (so that only the edited
    /// field is wrong).
    fn edit_meta(&self, edit: impl FnOnce(&mut Meta)) {
        let file = self.meta_file();
        let mut meta = Meta::parse(self.read(&file).as_bytes()).expect("meta parses");
        edit(&mut meta);
        self.write(&file, &meta.render());
    }

    /// Replaces `from` by `to` in the ledger's text, once.
    fn edit_ledger(&self, from: &str, to: &str) {
        let text = self.read("freeze/ledger.json");
        assert!(text.contains(from), "{from} not in {text}");
        self.write("freeze/ledger.json", &text.replacen(from, to, 1));
    }
}

/// The status of the one pinned fixture in a gate report.
fn status(report: &serde_json::Value) -> String {
    report["fixtures"][0]["status"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The findings of `rule` about `file` in a gate report.
fn findings<'r>(
    report: &'r serde_json::Value,
    rule: &str,
    file: &str,
) -> Vec<&'r serde_json::Value> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == rule && f["file"] == file)
        .collect()
}

#[test]
fn a_meta_whose_shrink_path_does_not_lead_from_origin_to_fixture_is_an_integrity_error() {
    let repo = Scene::new();
    let (code, report) = repo.gate();
    assert_eq!((code, status(&report).as_str()), (0, "frozen"), "{report}");
    let recorded = Meta::parse(repo.read(&repo.meta_file()).as_bytes())
        .expect("meta")
        .shrink_path;
    assert!(!recorded.is_empty(), "classify shrank {{\"x\":1}}");

    let step = |text: &str| parse_str(text).expect("step");
    let cases: Vec<(Vec<Value>, &str)> = vec![
        // A step of no pass.
        (vec![step(r#"{"pass": "bogus"}"#)], "step 0"),
        // No step at all: the origin is not the fixture.
        (Vec::new(), "not into the fixture"),
        // A step that names no node of the origin.
        (
            vec![step(
                r#"{"pass": "delete", "pointer": "", "keys": ["nope"]}"#,
            )],
            "step 0",
        ),
        // A detour through a larger value that still arrives at the fixture.
        (
            [
                step(r#"{"pass": "integer", "pointer": "/x", "to": 5000}"#),
                step(r#"{"pass": "integer", "pointer": "/x", "to": 1}"#),
            ]
            .into_iter()
            .chain(recorded.iter().cloned())
            .collect(),
            "step 0 (integer at \"/x\"): the value after it (10 bytes) is not smaller than before (7 bytes)",
        ),
        // The recorded steps and one more that turns the fixture into something else.
        (
            recorded
                .iter()
                .cloned()
                .chain([step(r#"{"pass": "replace", "pointer": "", "by": "/a"}"#)])
                .collect(),
            "step 1",
        ),
    ];
    for (path, needle) in cases {
        repo.edit_meta(|m| m.shrink_path = path.clone());
        let (code, report) = repo.gate();
        assert_eq!(code, 1, "{path:?}: {report}");
        let found = findings(&report, "integrity.fixture", &repo.meta_file());
        assert_eq!(found.len(), 1, "{path:?}: {report}");
        let message = found[0]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("shrink_path") && message.contains(needle),
            "{path:?}: {message}"
        );
        // `freeze` reads the same meta file: bad input.
        let run = repo.freeze(&repo.fixture);
        assert_eq!(run.code, 3, "{path:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains("shrink_path"), "{}", run.stderr);
    }

    // The recorded path again: all is well.
    repo.edit_meta(|m| m.shrink_path = recorded.clone());
    let (code, report) = repo.gate();
    assert_eq!((code, status(&report).as_str()), (0, "frozen"), "{report}");
}

#[test]
fn a_row_that_disagrees_with_its_meta_file_breaks_a_rule_and_freezes_nothing() {
    let repo = Scene::new();
    let meta = Meta::parse(repo.read(&repo.meta_file()).as_bytes()).expect("meta");
    let origin = meta.origin_digest.to_string();
    let zeros = "0".repeat(64);
    for (from, to, field) in [
        (
            "\"canonicalization\": \"freezegate-canon-v1\"",
            "\"canonicalization\": \"freezegate-canon-v1-ordered\"",
            "canonicalization",
        ),
        (origin.as_str(), zeros.as_str(), "origin_digest"),
    ] {
        let before = repo.read("freeze/ledger.json");
        repo.edit_ledger(from, to);
        let run = repo.xtask(&["ledger", "check", "--now", NOW, "--format", "json"], &[]);
        assert_eq!(run.code, 1, "{field}: {}{}", run.stdout, run.stderr);
        let check: serde_json::Value = serde_json::from_str(&run.stdout).expect("check report");
        let problems: Vec<&serde_json::Value> = check["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .filter(|p| p["severity"] == "error")
            .collect();
        assert_eq!(problems.len(), 1, "{field}: {check}");
        assert_eq!(problems[0]["rule"], "meta", "{check}");
        assert_eq!(problems[0]["field"], field, "{check}");
        assert!(problems[0]["line"].is_u64(), "{check}");

        // The gate reports the row and does not let it freeze the flicker.
        let (code, report) = repo.gate();
        assert_eq!(code, 1, "{field}: {report}");
        assert_eq!(status(&report), "flicker", "{field}: {report}");
        assert_eq!(
            findings(&report, "ledger.meta", "freeze/ledger.json").len(),
            1,
            "{report}"
        );
        repo.write("freeze/ledger.json", &before);
    }
    let (code, report) = repo.gate();
    assert_eq!((code, status(&report).as_str()), (0, "frozen"), "{report}");
}

#[test]
fn an_empty_patch_id_is_refused_and_never_recorded_but_read_in_older_meta_files() {
    let repo = Scene::new();
    repo.write("input.json", "{\"y\": 2}");
    for args in [
        vec![
            "classify",
            "--property",
            "p.flaky",
            "--input",
            "input.json",
            "--patch-id",
            "",
        ],
        vec![
            "classify",
            "--property",
            "p.flaky",
            "--input",
            "input.json",
            "--patch-id",
            " \t",
        ],
        vec!["gate", "--patch-id", ""],
        // `freeze` refuses it before any replay runs, as bad input.
        vec![
            "freeze",
            "--property",
            "p.flaky",
            "--fixture",
            repo.fixture.as_str(),
            "--owner",
            "alice@example.com",
            "--reason",
            "odd runs fail",
            "--expires-in",
            "7",
            "--patch-id",
            "",
        ],
        vec![
            "freeze",
            "--property",
            "p.flaky",
            "--fixture",
            repo.fixture.as_str(),
            "--owner",
            "alice@example.com",
            "--reason",
            "odd runs fail",
            "--expires-in",
            "7",
            "--patch-id",
            " ",
        ],
    ] {
        let mut with_now = args.clone();
        with_now.extend(["--now", NOW]);
        let run = repo.xtask(&with_now, &[]);
        assert_eq!(run.code, 3, "{args:?}: {}{}", run.stdout, run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("--patch-id"), "{}", run.stderr);
        assert!(!run.stderr.contains("replays:"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    // Nothing was pinned: the one fixture of the set-up is all there is.
    let fixtures: Vec<_> = std::fs::read_dir(repo.dir.join("fixtures/p.flaky"))
        .expect("folder")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .collect();
    assert_eq!(fixtures.len(), 2, "a fixture and its meta file");

    // Older versions wrote an empty patch id into meta files: such a file is read as it is,
    // with no finding, and its frozen fixture stays frozen.
    for empty in ["", " "] {
        repo.edit_meta(|m| m.patch_id = empty.to_owned());
        let (code, report) = repo.gate();
        assert_eq!((code, status(&report).as_str()), (0, "frozen"), "{report}");
        assert!(
            findings(&report, "integrity.fixture", &repo.meta_file()).is_empty(),
            "{report}"
        );
    }
}

#[test]
fn a_row_seed_no_run_can_have_breaks_the_seed_rule() {
    let repo = Scene::new();
    let check = |repo: &Scene| -> (i32, serde_json::Value) {
        let run = repo.xtask(&["ledger", "check", "--now", NOW, "--format", "json"], &[]);
        let report = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr));
        (run.code, report)
    };
    let before = repo.read("freeze/ledger.json");
    for seed in [
        "-1",
        "18446744073709551616",
        "123456789012345678901234567890",
    ] {
        repo.edit_ledger("\"seed\": 20260917", &format!("\"seed\": {seed}"));
        let (code, report) = check(&repo);
        assert_eq!(code, 1, "{seed}: {report}");
        let problems = report["problems"].as_array().expect("problems");
        assert_eq!(problems.len(), 1, "{seed}: {report}");
        assert_eq!(problems[0]["rule"], "seed", "{report}");
        assert_eq!(problems[0]["field"], "seed", "{report}");
        assert!(
            problems[0]["message"]
                .as_str()
                .is_some_and(|m| m.contains("0 to 2^64-1")),
            "{report}"
        );
        repo.write("freeze/ledger.json", &before);
    }
    // The ends of the range are seeds a run can have.
    for seed in ["0", "18446744073709551615"] {
        repo.edit_ledger("\"seed\": 20260917", &format!("\"seed\": {seed}"));
        let (code, report) = check(&repo);
        assert_eq!(code, 0, "{seed}: {report}");
        repo.write("freeze/ledger.json", &before);
    }
}

/// The integrity findings of a gate report (every file), their messages.
fn integrity_messages(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| {
            f["rule"]
                .as_str()
                .is_some_and(|r| r.starts_with("integrity"))
        })
        .map(|f| format!("{}: {}", f["file"], f["message"]))
        .collect()
}

/// The one origin file of the repository's pinned fixture.
fn origin_file(repo: &Scene) -> String {
    let meta = Meta::parse(repo.read(&repo.meta_file()).as_bytes()).expect("meta");
    format!("fixtures/p.flaky/origins/{}.json", meta.origin_id)
}

#[test]
fn a_deleted_fixture_is_reported_once() {
    let repo = Scene::new();
    std::fs::remove_file(
        repo.dir
            .join(format!("fixtures/p.flaky/{}.json", repo.fixture)),
    )
    .expect("rm fixture");
    let (code, report) = repo.gate();
    assert_eq!(code, 1, "{report}");
    let messages = integrity_messages(&report);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].contains("does not exist"), "{messages:#?}");
}

#[test]
fn a_tampered_origin_is_reported_once() {
    let repo = Scene::new();
    let origin = origin_file(&repo);
    repo.write(&origin, "{\"x\":2}");
    let (code, report) = repo.gate();
    assert_eq!(code, 1, "{report}");
    let messages = integrity_messages(&report);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].contains(&origin), "{messages:#?}");
    assert_eq!(report["summary"]["blocking_findings"], 1, "{report}");
}

#[test]
fn a_symlinked_fixtures_folder_is_not_read_through() {
    let repo = Scene::new();
    let origin = origin_file(&repo);
    let outside = tempfile::tempdir().expect("temp dir");
    let moved = outside.path().join("fixtures");
    std::fs::rename(repo.dir.join("fixtures"), &moved).expect("move fixtures");
    std::os::unix::fs::symlink(&moved, repo.dir.join("fixtures")).expect("symlink");
    // A broken origin behind the link: only the link itself may be reported.
    std::fs::write(outside.path().join(&origin), "{\"x\":2}").expect("tamper");
    let (code, report) = repo.gate();
    assert_eq!(code, 1, "{report}");
    let messages = integrity_messages(&report);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(messages[0].contains("symbolic link"), "{messages:#?}");
}
