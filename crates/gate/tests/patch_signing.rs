//! Protected paths need a signature by a key of the base revision's allowed signers: adversarial
//! tests with real git repositories, real `ssh-keygen` keys and SSH-signed commits.

mod patch_support;

use freezegate_gate::patch::{ChangeKind, PatchError, SignatureStatus, WarningKind, check_patch};
use patch_support::{Repo, keys, violations};

const LEDGER: &str = "{\n  \"schema\": \"freezegate-ledger-v1\",\n  \"rows\": []\n}\n";
const LEDGER_WITH_ROW: &str = "{\n  \"schema\": \"freezegate-ledger-v1\",\n  \"rows\": [{\"property_id\": \"tax.total\"}]\n}\n";
const FIXTURE: &str = "fixtures/tax.total/84a6b2a276edd51b.json";

/// The findings of `report` under `rule`, as (file, line, blocking).
fn rule_findings(
    report: &freezegate_gate::patch::PatchReport,
    rule: &str,
) -> Vec<(String, u32, bool)> {
    report
        .findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| (f.file.clone(), f.line, f.blocking))
        .collect()
}

/// A base revision with a policy, a ledger, allowed signers (alice only) and one fixture.
fn base_repo(with_signers: bool) -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nprotected = [\"src/oracle/**\"]\nproperty_paths = [\"tests/**\"]\n",
    );
    repo.write("freeze/ledger.json", LEDGER);
    if with_signers {
        repo.write("freeze/allowed_signers", &keys().alice.allowed_line());
    }
    repo.write(FIXTURE, "{\"role\":\"\",\"user_id\":0}\n");
    repo.write("fixtures/tax.total/84a6b2a276edd51b.meta.json", "{}\n");
    repo.write("src/oracle/tax.rs", "pub fn total() {}\n");
    repo.write("src/lib.rs", "pub mod tax;\n");
    let base = repo.commit("base");
    (repo, base)
}

#[test]
fn an_unsigned_ledger_row_is_blocked() {
    let (repo, base) = base_repo(true);
    let c = repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, None);
    let report = repo.check(&base);
    assert!(report.blocking());
    assert_eq!(
        violations(&report),
        vec![(c.clone(), "freeze/ledger.json".to_string())]
    );
    assert_eq!(report.violations[0].signature, SignatureStatus::Unsigned);
    assert_eq!(report.violations[0].protected_by, "freeze/**");
    assert_eq!(report.violations[0].change, ChangeKind::Modified);
}

#[test]
fn a_ledger_row_signed_by_an_allowed_key_passes() {
    let (repo, base) = base_repo(true);
    let c = repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, Some(&keys().alice));
    let report = repo.check(&base);
    assert!(!report.blocking(), "{:#?}", report.violations);
    let commit = &report.commits[0];
    assert_eq!(commit.commit, c);
    assert_eq!(commit.signature.status, SignatureStatus::Allowed);
    assert_eq!(
        commit.signature.signer.as_deref(),
        Some("alice@example.org")
    );
    assert_eq!(
        commit.protected_paths,
        vec!["freeze/ledger.json".to_string()]
    );
}

#[test]
fn a_key_the_patch_adds_to_allowed_signers_is_refused() {
    let (repo, base) = base_repo(true);
    let mallory = &keys().mallory;
    let signers = format!("{}{}", keys().alice.allowed_line(), mallory.allowed_line());
    let c1 = repo.commit_and_write("freeze/allowed_signers", &signers, Some(mallory));
    let c2 = repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, Some(mallory));
    let report = repo.check(&base);
    assert!(report.blocking());
    assert_eq!(
        violations(&report),
        vec![
            (c1, "freeze/allowed_signers".to_string()),
            (c2, "freeze/ledger.json".to_string()),
        ]
    );
    for v in &report.violations {
        assert_eq!(v.signature, SignatureStatus::UnknownKey);
    }
    // The same key passes once the base revision lists it.
    let report = repo.check_head(&repo.git(&["rev-parse", "HEAD~1"]), "HEAD");
    assert!(!report.blocking(), "{:#?}", report.violations);
}

#[test]
fn an_unsigned_new_fixture_passes() {
    let (repo, base) = base_repo(true);
    repo.write("fixtures/tax.total/01751cc09a4bb8e9.json", "[]\n");
    repo.write("fixtures/tax.total/01751cc09a4bb8e9.meta.json", "{}\n");
    repo.write("fixtures/tax.total/origins/01751cc09a4bb8e9.json", "[]\n");
    repo.commit("pin the fixture of my own failure");
    let report = repo.check(&base);
    assert!(!report.blocking(), "{:#?}", report.violations);
    assert!(report.commits[0].protected_paths.is_empty());
}

#[test]
fn unsigned_fixture_edits_renames_and_deletions_are_blocked() {
    let (repo, base) = base_repo(true);

    repo.branch("edit", &base);
    let edit = repo.commit_and_write(FIXTURE, "{\"role\":\"admin\",\"user_id\":0}\n", None);
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![(edit, FIXTURE.to_string())]);
    assert_eq!(report.violations[0].protected_by, "fixtures/**");

    repo.branch("rename", &base);
    repo.git(&["mv", FIXTURE, "fixtures/tax.total/0000000000000000.json"]);
    let rename = repo.commit("rename a fixture");
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![(rename, FIXTURE.to_string())]);
    assert_eq!(report.violations[0].change, ChangeKind::Renamed);

    repo.branch("delete", &base);
    repo.remove(FIXTURE);
    let delete = repo.commit("drop a fixture");
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![(delete, FIXTURE.to_string())]);
    assert_eq!(report.violations[0].change, ChangeKind::Deleted);

    // Signed by the allowed key, the same deletion passes.
    repo.branch("signed-delete", &base);
    repo.remove(FIXTURE);
    repo.commit_signed("drop a fixture, reviewed", &keys().alice);
    assert!(!repo.check(&base).blocking());
}

#[test]
fn a_protected_change_hidden_in_a_merge_commit_is_blocked() {
    let (repo, base) = base_repo(true);
    repo.branch("side", &base);
    repo.write("src/lib.rs", "pub mod tax;\npub mod side;\n");
    let side = repo.commit("side work");
    repo.branch("main", &base);
    repo.write("README.md", "main work\n");
    let main = repo.commit("main work");
    repo.git(&["merge", "-q", "--no-ff", "--no-commit", "side"]);
    repo.write("freeze/ledger.json", LEDGER_WITH_ROW);
    repo.write("src/oracle/tax.rs", "pub fn total() { /* evil */ }\n");
    let merge = repo.commit("Merge branch 'side'");
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![
            (merge.clone(), "freeze/ledger.json".to_string()),
            (merge.clone(), "src/oracle/tax.rs".to_string()),
        ]
    );
    assert_eq!(report.commits.len(), 3);
    let judged: Vec<&str> = report.commits.iter().map(|c| c.commit.as_str()).collect();
    assert!(judged.contains(&side.as_str()) && judged.contains(&main.as_str()));
    assert_eq!(report.commits[2].parents.len(), 2);
}

#[test]
fn a_clean_merge_owns_nothing_of_what_it_brings_in() {
    let (repo, base) = base_repo(true);
    repo.branch("side", &base);
    repo.write("freeze/ledger.json", LEDGER_WITH_ROW);
    let side = repo.commit_signed("reviewed ledger row", &keys().alice);
    repo.branch("main", &base);
    repo.write("README.md", "main work\n");
    repo.commit("main work");
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge", "side"]);
    let report = repo.check(&base);
    assert!(!report.blocking(), "{:#?}", report.violations);
    let merge = report
        .commits
        .iter()
        .find(|c| c.parents.len() == 2)
        .unwrap();
    assert!(merge.protected_paths.is_empty());
    let side_report = report.commits.iter().find(|c| c.commit == side).unwrap();
    assert_eq!(
        side_report.protected_paths,
        vec!["freeze/ledger.json".to_string()]
    );
}

#[test]
fn an_unsigned_protected_change_reverted_later_is_still_blocked() {
    let (repo, base) = base_repo(true);
    let bad = repo.commit_and_write("freezegate.toml", "[policy]\nproperty_paths = []\n", None);
    repo.git(&["revert", "--no-edit", "HEAD"]);
    let report = repo.check(&base);
    assert!(report.blocking());
    let paths = violations(&report);
    assert_eq!(paths[0], (bad, "freezegate.toml".to_string()));
    assert_eq!(
        paths.len(),
        2,
        "the revert itself is an unsigned protected change too"
    );
}

#[test]
fn without_allowed_signers_at_base_no_protected_edit_passes() {
    let (repo, base) = base_repo(false);
    let alice = &keys().alice;
    // Even adding the signers file, signed by the key it lists, cannot bootstrap trust.
    let c1 = repo.commit_and_write("freeze/allowed_signers", &alice.allowed_line(), Some(alice));
    let c2 = repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, Some(alice));
    let report = repo.check(&base);
    assert!(!report.allowed_signers_at_base);
    assert_eq!(
        violations(&report),
        vec![
            (c1, "freeze/allowed_signers".to_string()),
            (c2, "freeze/ledger.json".to_string()),
        ]
    );
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::NoAllowedSigners)
    );
}

#[test]
fn policy_globs_come_from_the_base_revision_not_from_the_patch() {
    let (repo, base) = base_repo(true);
    // A signed commit drops the protected glob; the next, unsigned, edits the once-protected file.
    repo.commit_and_write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\n",
        Some(&keys().alice),
    );
    let edit = repo.commit_and_write("src/oracle/tax.rs", "pub fn total() { 0; }\n", None);
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(edit, "src/oracle/tax.rs".to_string())]
    );
    assert_eq!(report.violations[0].protected_by, "src/oracle/**");
}

#[test]
fn default_globs_are_protected_even_if_the_base_policy_omits_them() {
    let (repo, base) = base_repo(true);
    repo.write(".github/workflows/ci.yml", "env:\n  REPLAYS: 1\n");
    repo.write("xtask/src/gate.rs", "//! gate\n");
    repo.write(
        "rust-toolchain.toml",
        "[toolchain]\nchannel = \"nightly\"\n",
    );
    repo.write(".cargo/config.toml", "[env]\nREPLAYS = \"1\"\n");
    repo.write(".ci/run", "exit 0\n");
    let c = repo.commit("ci tweaks");
    let report = repo.check(&base);
    let paths: Vec<String> = report.violations.iter().map(|v| v.path.clone()).collect();
    assert_eq!(
        paths,
        vec![
            ".cargo/config.toml",
            ".ci/run",
            ".github/workflows/ci.yml",
            "rust-toolchain.toml",
            "xtask/src/gate.rs"
        ]
    );
    assert!(report.violations.iter().all(|v| v.commit == c));
}

#[test]
fn an_unknown_base_revision_is_an_error_not_a_pass() {
    let (repo, _) = base_repo(true);
    let err = check_patch(repo.path(), "no-such-branch", &Repo::options("HEAD")).unwrap_err();
    assert!(
        matches!(err, PatchError::BadRevision { shallow: false, .. }),
        "{err}"
    );
    // A full clone: the hint is the name, not the history.
    assert_eq!(
        err.to_string(),
        "base revision \"no-such-branch\" is not a commit of this repository (no ref or commit of that name: check the spelling, and that the base branch was fetched)"
    );
}

#[test]
fn a_broken_policy_at_base_is_an_error_naming_line_and_column() {
    let repo = Repo::new();
    repo.write("freezegate.toml", "[policy]\nmin_cases = \"lots\"\n");
    let base = repo.commit("base");
    let err = check_patch(repo.path(), &base, &Repo::options("HEAD")).unwrap_err();
    assert!(
        matches!(
            err,
            PatchError::Config {
                source: freezegate_gate::config::ConfigError::Syntax { line: 2, .. },
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn the_report_serializes_deterministically() {
    let (repo, base) = base_repo(true);
    repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, None);
    repo.commit_and_write("fixtures/tax.total/01751cc09a4bb8e9.json", "[]\n", None);
    let a = serde_json::to_string_pretty(&repo.check(&base)).unwrap();
    let b = serde_json::to_string_pretty(&repo.check(&base)).unwrap();
    assert_eq!(a, b);
    let value: serde_json::Value = serde_json::from_str(&a).unwrap();
    // Top-level members in the documented order (two-space indent marks the top level).
    let keys: Vec<&str> = a
        .lines()
        .filter_map(|l| l.strip_prefix("  \""))
        .filter_map(|l| l.split_once('"').map(|(k, _)| k))
        .collect();
    assert_eq!(
        keys,
        vec![
            "base",
            "head",
            "allowed_signers_at_base",
            "commits",
            "violations",
            "findings",
            "warnings"
        ]
    );
    assert_eq!(value["violations"][0]["signature"], "unsigned");
}

#[test]
fn a_replacement_ref_cannot_hide_a_protected_change() {
    let (repo, base) = base_repo(true);
    let bad = repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, None);
    // A stand-in commit with the base's tree, installed as a replacement of the real one.
    let tree = repo.git(&["rev-parse", &format!("{base}^{{tree}}")]);
    let stand_in = repo.git(&["commit-tree", &tree, "-p", &base, "-m", "innocent"]);
    repo.git(&["replace", &bad, &stand_in]);
    assert_eq!(repo.git(&["log", "-1", "--format=%s", &bad]), "innocent");
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(bad, "freeze/ledger.json".to_string())]
    );
}

#[test]
fn an_unrelated_history_merged_in_is_judged_from_its_root() {
    let (repo, base) = base_repo(true);
    repo.git(&["checkout", "-q", "--orphan", "other"]);
    repo.git(&["rm", "-rqf", "."]);
    repo.write("freeze/ledger.json", LEDGER_WITH_ROW);
    let root = repo.commit("unrelated root");
    repo.branch("main-work", &base);
    repo.git(&[
        "merge",
        "-q",
        "--allow-unrelated-histories",
        "-X",
        "theirs",
        "-m",
        "merge unrelated",
        "other",
    ]);
    let report = repo.check(&base);
    let found = violations(&report);
    assert!(
        found.contains(&(root.clone(), "freeze/ledger.json".to_string())),
        "{found:?}"
    );
    let root_report = report.commits.iter().find(|c| c.commit == root).unwrap();
    assert!(root_report.parents.is_empty());
}

#[test]
fn turning_a_protected_file_into_a_symlink_is_a_protected_change() {
    let (repo, base) = base_repo(true);
    repo.remove("freeze/ledger.json");
    std::os::unix::fs::symlink("../src/lib.rs", repo.path().join("freeze/ledger.json")).unwrap();
    let c = repo.commit("ledger is now a link");
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(c, "freeze/ledger.json".to_string())]
    );
    assert_eq!(report.violations[0].change, ChangeKind::TypeChanged);
}

#[test]
fn an_openpgp_signature_the_machine_trusts_is_not_an_allowed_signature() {
    let (repo, base) = base_repo(true);
    let gnupg = tempfile::tempdir().unwrap();
    let home = gnupg.path().to_str().unwrap().to_string();
    let made = std::process::Command::new("gpg")
        .env("GNUPGHOME", &home)
        .args([
            "--batch",
            "--quiet",
            "--passphrase",
            "",
            "--quick-gen-key",
            "Eve <eve@example.org>",
            "ed25519",
            "sign",
            "never",
        ])
        .output();
    let Ok(made) = made else {
        // No gpg on this machine: then no OpenPGP signature can be trusted by it either.
        return;
    };
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    repo.write("freeze/ledger.json", LEDGER_WITH_ROW);
    repo.git(&["add", "-A"]);
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo.path())
        .envs(patch_support::GIT_ENV.iter().copied())
        .env("GNUPGHOME", &home)
        .args([
            "-c",
            "gpg.format=openpgp",
            "-c",
            "user.signingkey=eve@example.org",
            "commit",
            "-q",
            "-S",
            "-m",
            "pgp-signed ledger row",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The machine's own git trusts the signature…
    let plain = std::process::Command::new("git")
        .arg("-C")
        .arg(repo.path())
        .envs(patch_support::GIT_ENV.iter().copied())
        .env("GNUPGHOME", &home)
        .args(["log", "-1", "--format=%G?"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&plain.stdout).trim(), "G");
    // …the gate does not, with the same keyring in reach.
    let mut options = Repo::options("HEAD");
    options
        .git_env
        .push(("GNUPGHOME".into(), home.clone().into()));
    let report = check_patch(repo.path(), &base, &options).unwrap();
    assert!(report.blocking());
    assert_ne!(report.violations[0].signature, SignatureStatus::Allowed);
}

#[test]
fn a_signature_lifted_onto_other_content_is_bad() {
    let (repo, base) = base_repo(true);
    let signed = repo.commit_and_write("README.md", "reviewed\n", Some(&keys().alice));
    // Same headers and signature, another tree: the ledger edit rides on alice's signature.
    repo.write("freeze/ledger.json", LEDGER_WITH_ROW);
    repo.git(&["add", "-A"]);
    let tree = repo.git(&["write-tree"]);
    let object = repo.git(&["cat-file", "commit", &signed]);
    let old_tree = repo.git(&["rev-parse", &format!("{signed}^{{tree}}")]);
    let forged = object.replacen(&format!("tree {old_tree}"), &format!("tree {tree}"), 1) + "\n";
    let path = repo.path().join(".git/forged");
    std::fs::write(&path, forged).unwrap();
    let forged_sha = repo.git(&["hash-object", "-t", "commit", "-w", path.to_str().unwrap()]);
    repo.git(&["reset", "-q", "--hard", &forged_sha]);
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(forged_sha, "freeze/ledger.json".to_string())]
    );
    assert_eq!(report.violations[0].signature, SignatureStatus::Bad);
}

#[test]
fn a_listed_key_outside_the_git_namespace_is_not_allowed() {
    let repo = Repo::new();
    let line = keys()
        .alice
        .allowed_line()
        .replace("namespaces=\"git\"", "namespaces=\"file\"");
    repo.write("freeze/allowed_signers", &line);
    repo.write("freeze/ledger.json", LEDGER);
    let base = repo.commit("base");
    repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, Some(&keys().alice));
    let report = repo.check(&base);
    assert!(report.blocking());
    assert_ne!(report.violations[0].signature, SignatureStatus::Allowed);
}

/// A merge of the base with one of the base's own ancestors brings in no commit, so every
/// version it takes from that ancestor is its own change: restoring an old
/// `freezegate.toml` that a signed commit replaced needs a signature like any edit.
#[test]
fn a_merge_with_an_ancestor_of_the_base_cannot_restore_old_protected_content() {
    let (repo, old) = base_repo(true);
    repo.write(
        "freezegate.toml",
        "[policy]\nreplays = 11\nprotected = [\"src/oracle/**\"]\nproperty_paths = [\"tests/**\"]\n",
    );
    let base = repo.commit_signed("more replays", &keys().alice);
    // The patch: one merge commit whose tree takes the old policy back.
    repo.git(&["checkout", "-q", &old, "--", "freezegate.toml"]);
    let tree = repo.git(&["write-tree"]);
    let merge = repo.git(&[
        "commit-tree",
        &tree,
        "-p",
        &base,
        "-p",
        &old,
        "-m",
        "merge old work",
    ]);
    let report = repo.check_head(&base, &merge);
    assert_eq!(
        violations(&report),
        vec![(merge.clone(), "freezegate.toml".to_string())]
    );
    // The same merge the other way round (the ancestor as first parent) is judged the same.
    let merge = repo.git(&[
        "commit-tree",
        &tree,
        "-p",
        &old,
        "-p",
        &base,
        "-m",
        "merge old work",
    ]);
    let report = repo.check_head(&base, &merge);
    assert_eq!(
        violations(&report),
        vec![(merge.clone(), "freezegate.toml".to_string())]
    );
}

/// A path an evil merge changes against both parents is one violation, not one per parent.
#[test]
fn an_evil_merge_is_one_violation_per_path() {
    let (repo, base) = base_repo(true);
    repo.branch("side", &base);
    repo.write("freezegate.toml", "[policy]\nreplays = 9\n");
    repo.commit_signed("side policy", &keys().alice);
    repo.branch("main", &base);
    repo.write("freezegate.toml", "[policy]\nreplays = 8\n");
    repo.commit_signed("main policy", &keys().alice);
    repo.git(&[
        "merge",
        "-q",
        "--no-ff",
        "--no-commit",
        "-s",
        "ours",
        "side",
    ]);
    repo.write("freezegate.toml", "[policy]\nreplays = 1\n");
    let merge = repo.commit("resolve");
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(merge, "freezegate.toml".to_string())]
    );
}

/// A symbolic link that stands where a protected folder would be (`.cargo` pointing at a
/// folder holding `config.toml`) is a change to that folder's contents.
#[test]
fn a_directory_symlink_onto_a_protected_path_needs_a_signature() {
    for link in [
        ".cargo",
        ".github/workflows",
        "xtask",
        ".ci",
        "src/oracle",
        "src",
    ] {
        let (repo, base) = base_repo(true);
        if link.starts_with("src") {
            // Replace the real folder by a link to another one.
            std::fs::remove_dir_all(repo.path().join(link)).unwrap();
        }
        repo.write(
            "elsewhere/config.toml",
            "[build]\nrustc-wrapper = \"./evil.sh\"\n",
        );
        let target = std::path::Path::new(link)
            .components()
            .skip(1)
            .map(|_| "..")
            .chain(["elsewhere"])
            .collect::<Vec<_>>()
            .join("/");
        let at = repo.path().join(link);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&target, &at).unwrap();
        let c = repo.commit("link");
        let report = repo.check(&base);
        assert!(
            violations(&report).contains(&(c.clone(), link.to_string())),
            "{link}: {:?}",
            violations(&report)
        );
    }
    // A link elsewhere is no protected change.
    let (repo, base) = base_repo(true);
    std::os::unix::fs::symlink("src", repo.path().join("docs")).unwrap();
    repo.commit("docs link");
    assert_eq!(violations(&repo.check(&base)), vec![]);
}

/// On a branch `main` from `fork`, the base branch's signed change that a merge made with
/// `-s ours` drops: a stronger policy and a new fixture, signed by Alice. Returns the commit.
fn signed_base_change(repo: &Repo, fork: &str) -> String {
    repo.branch("main", fork);
    repo.write(
        "freezegate.toml",
        "[policy]\nprotected = [\"src/oracle/**\"]\nproperty_paths = [\"tests/**\"]\nreplays = 9\n",
    );
    repo.write("fixtures/tax.total/0123456789abcdef.json", "{\"a\":1}\n");
    repo.commit_signed("stronger policy, new fixture", &keys().alice)
}

/// The patch branch forked before a signed change of the base branch (a stronger policy,
/// a pinned fixture), then merged the base with `-s ours`: the merge's tree is the patch
/// branch's, so it equals one parent everywhere, yet it drops the signed changes. Against
/// git's own merge of the two parents it changes both paths, unsigned.
#[test]
fn a_merge_that_drops_the_base_branchs_signed_changes_is_blocked() {
    let (repo, fork) = base_repo(true);
    repo.branch("agent", &fork);
    repo.write("README.md", "agent work\n");
    repo.commit("agent work");
    let base = signed_base_change(&repo, &fork);
    repo.git(&["checkout", "-q", "agent"]);
    repo.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-s",
        "ours",
        "-m",
        "merge main",
        "main",
    ]);
    let merge = repo.git(&["rev-parse", "HEAD"]);
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![
            (
                merge.clone(),
                "fixtures/tax.total/0123456789abcdef.json".to_string()
            ),
            (merge.clone(), "freezegate.toml".to_string()),
        ]
    );
    let kinds: Vec<ChangeKind> = report.violations.iter().map(|v| v.change).collect();
    assert_eq!(kinds, [ChangeKind::Deleted, ChangeKind::Modified]);
}

/// The same drop through an octopus merge (`git merge -s ours main topic`: three parents,
/// the tree the patch branch's): it equals one parent everywhere, so "differs from every
/// parent" saw nothing; against git's own merge of the parents, folded one by one, it
/// changes both paths.
#[test]
fn an_octopus_merge_that_drops_the_base_branchs_signed_changes_is_blocked() {
    let (repo, fork) = base_repo(true);
    repo.branch("topic", &fork);
    repo.write("docs/topic.md", "topic\n");
    repo.commit("topic work");
    repo.branch("agent", &fork);
    repo.write("README.md", "agent work\n");
    repo.commit("agent work");
    let base = signed_base_change(&repo, &fork);
    repo.git(&["checkout", "-q", "agent"]);
    repo.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-s",
        "ours",
        "-m",
        "merge main and topic",
        "main",
        "topic",
    ]);
    let merge = repo.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        repo.git(&["rev-list", "--parents", "-n1", "HEAD"])
            .split_whitespace()
            .count(),
        4,
        "an octopus merge"
    );
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![
            (
                merge.clone(),
                "fixtures/tax.total/0123456789abcdef.json".to_string()
            ),
            (merge.clone(), "freezegate.toml".to_string()),
        ]
    );

    // The same merge with an unrelated third parent (an orphan commit of the empty tree):
    // git refuses unrelated histories unless asked, and a refusal fell back to the older rule.
    repo.git(&["checkout", "-q", "agent"]);
    repo.git(&["reset", "-q", "--hard", "HEAD^"]);
    let empty = repo.git(&["hash-object", "-t", "tree", "-w", "/dev/null"]);
    let orphan = repo.git(&["commit-tree", "-m", "orphan", empty.trim()]);
    let tree = repo.git(&["rev-parse", "agent^{tree}"]);
    let merge = repo.git(&[
        "commit-tree",
        "-m",
        "merge",
        "-p",
        "agent",
        "-p",
        "main",
        "-p",
        orphan.trim(),
        tree.trim(),
    ]);
    repo.git(&["reset", "-q", "--hard", merge.trim()]);
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![
            (
                merge.trim().to_string(),
                "fixtures/tax.total/0123456789abcdef.json".to_string()
            ),
            (merge.trim().to_string(), "freezegate.toml".to_string()),
        ]
    );

    // A clean octopus merge (the default strategy) owns nothing.
    repo.git(&["checkout", "-q", "agent"]);
    repo.git(&["reset", "-q", "--hard", "HEAD^"]);
    repo.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge main and topic",
        "main",
        "topic",
    ]);
    let report = repo.check(&base);
    assert!(!report.blocking(), "{:#?}", report.violations);
}

/// Two signed changes to one protected file that git merges without a conflict: the
/// merge resolves nothing, so it needs no signature, though its version of the file differs
/// from both parents'.
#[test]
fn a_clean_automatic_merge_of_two_signed_changes_to_one_file_passes() {
    let policy = |extra: &str, replays: u32| {
        format!(
            "[policy]\nprotected = [\"src/oracle/**\"]\nproperty_paths = [\"tests/**\"]\nreplays = {replays}\n\n\n\n\n{extra}"
        )
    };
    let (repo, base) = base_repo(true);
    repo.write("freezegate.toml", &policy("", 7));
    let base2 = repo.commit_signed("policy", &keys().alice);
    repo.branch("pr", &base2);
    repo.write(
        "freezegate.toml",
        &policy("[[property]]\nid = \"tax.total\"\noracle = \"true\"\n", 7),
    );
    repo.commit_signed("a property", &keys().alice);
    repo.branch("main", &base2);
    repo.write("freezegate.toml", &policy("", 9));
    let main = repo.commit_signed("more replays", &keys().alice);
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge pr", "pr"]);
    let merged = repo.git(&["show", "HEAD:freezegate.toml"]);
    assert!(merged.contains("replays = 9") && merged.contains("tax.total"));
    let report = repo.check(&main);
    assert!(!report.blocking(), "{:#?}", report.violations);
    let merge = report
        .commits
        .iter()
        .find(|c| c.parents.len() == 2)
        .unwrap();
    assert!(merge.protected_paths.is_empty());
    let _ = base;
}

/// A `.gitattributes` of the patch that asks for the `ours` merge driver on a protected
/// file does not make a reverting merge look automatic: attributes play no part in the
/// comparison. (Both branches changed the file, signed, so git calls the driver, which keeps
/// the patch branch's version and drops the base branch's signed change.)
#[test]
fn a_merge_driver_attribute_cannot_hide_a_reverting_merge() {
    let policy = |extra: &str, replays: u32| {
        format!(
            "[policy]\nprotected = [\"src/oracle/**\"]\nproperty_paths = [\"tests/**\"]\nreplays = {replays}\n\n\n\n\n{extra}"
        )
    };
    let property = "[[property]]\nid = \"tax.total\"\noracle = \"true\"\n";
    let (repo, _) = base_repo(true);
    repo.write("freezegate.toml", &policy("", 7));
    let fork = repo.commit_signed("policy", &keys().alice);
    repo.git(&["config", "merge.ours.driver", "true"]);
    repo.branch("agent", &fork);
    repo.write("freezegate.toml", &policy(property, 7));
    repo.commit_signed("a property", &keys().alice);
    repo.write(".gitattributes", "freezegate.toml merge=ours\n");
    let attributes = repo.commit("agent: attributes");
    repo.branch("main", &fork);
    repo.write("freezegate.toml", &policy("", 9));
    let base = repo.commit_signed("more replays", &keys().alice);
    repo.git(&["checkout", "-q", "agent"]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge main", "main"]);
    // The driver kept the agent's version: the signed `replays = 9` is gone.
    let merged = repo.git(&["show", "HEAD:freezegate.toml"]);
    assert!(merged.contains("replays = 7"), "{merged}");
    let merge = repo.git(&["rev-parse", "HEAD"]);
    let report = repo.check(&base);
    // The unsigned `.gitattributes` is a protected change of its own; the merge is judged
    // apart from it, and blocked too.
    assert_eq!(
        violations(&report),
        vec![
            (attributes, ".gitattributes".to_string()),
            (merge, "freezegate.toml".to_string())
        ]
    );
}

/// A tag the patch pushes under the base's short name (`origin/main`) would be picked by
/// git over the remote branch, making the patch its own base: an ambiguous name is refused.
#[test]
fn an_ambiguous_base_name_is_refused() {
    let (repo, base) = base_repo(true);
    repo.git(&["update-ref", "refs/remotes/origin/main", &base]);
    repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, None);
    repo.git(&["tag", "origin/main", "HEAD"]);
    let err = check_patch(repo.path(), "origin/main", &Repo::options("HEAD")).unwrap_err();
    match &err {
        PatchError::AmbiguousRevision { rev, refs } => {
            assert_eq!(rev, "origin/main");
            assert_eq!(refs, &["refs/tags/origin/main", "refs/remotes/origin/main"]);
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("pass the full ref name"), "{err}");
    // The full name is judged as usual.
    let report = check_patch(
        repo.path(),
        "refs/remotes/origin/main",
        &Repo::options("HEAD"),
    )
    .expect("judged");
    assert!(report.blocking());
}

/// In a shallow clone whose tip is signed, the unsigned commits under it are not there to be
/// judged: the range reaches the shallow boundary, and the check refuses to guess.
#[test]
fn a_range_that_reaches_a_shallow_boundary_cannot_be_judged() {
    let (repo, base) = base_repo(true);
    repo.branch("agent", &base);
    repo.commit_and_write("freezegate.toml", "[policy]\nreplays = 1\n", None);
    repo.commit_and_write("README.md", "reviewed\n", Some(&keys().alice));
    let clone = tempfile::tempdir().expect("temp dir");
    let url = format!("file://{}", repo.path().display());
    let git = |dir: &std::path::Path, args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(
            ok.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
    };
    let dest = clone.path().join("c");
    git(
        clone.path(),
        &[
            "clone", "-q", "--depth", "1", "--branch", "agent", &url, "c",
        ],
    );
    git(
        &dest,
        &[
            "fetch",
            "-q",
            "--depth",
            "1",
            "origin",
            "main:refs/remotes/origin/main",
        ],
    );
    let err = check_patch(&dest, "origin/main", &Repo::options("HEAD")).unwrap_err();
    assert!(matches!(err, PatchError::ShallowClone { .. }), "{err}");
    assert!(err.to_string().contains("fetch-depth: 0"), "{err}");
    // A base the shallow clone does not hold: the hint is the history.
    let err = check_patch(&dest, "origin/main~1", &Repo::options("HEAD")).unwrap_err();
    assert!(
        matches!(err, PatchError::BadRevision { shallow: true, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("the clone is shallow"), "{err}");
    // With the history fetched, the unsigned commit is found.
    git(&dest, &["fetch", "-q", "--unshallow", "origin"]);
    let report = check_patch(&dest, "origin/main", &Repo::options("HEAD")).expect("judged");
    assert_eq!(report.violations.len(), 1, "{:#?}", report.violations);
    assert_eq!(report.violations[0].path, "freezegate.toml");
}

/// A project in a folder of its repository (`svc/`): its `freezegate.toml`, `freeze/` and
/// fixtures are protected by their paths in the folder, the allowed signers are read there,
/// and the CI files at the top of the work tree stay protected; paths are reported relative
/// to the project.
#[test]
fn a_project_in_a_folder_of_its_repository_is_protected() {
    let repo = Repo::new();
    repo.write(
        "svc/freezegate.toml",
        "[policy]\nprotected = [\"src/oracle/**\"]\n",
    );
    repo.write("svc/freeze/ledger.json", LEDGER);
    repo.write("svc/freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write("svc/fixtures/tax.total/84a6b2a276edd51b.json", "{}\n");
    repo.write("svc/src/oracle/tax.rs", "pub fn total() {}\n");
    repo.write(".github/workflows/ci.yml", "on: push\n");
    repo.write("freeze/ledger.json", LEDGER);
    let base = repo.commit("base");
    let project = repo.path().join("svc");
    let signed = repo.commit_and_write(
        "svc/freeze/ledger.json",
        LEDGER_WITH_ROW,
        Some(&keys().alice),
    );
    let report = check_patch(&project, &base, &Repo::options("HEAD")).expect("judged");
    assert!(report.allowed_signers_at_base);
    assert!(!report.blocking(), "{:#?}", report.violations);
    assert_eq!(report.commits[0].commit, signed);
    assert_eq!(report.commits[0].protected_paths, ["freeze/ledger.json"]);

    let c1 = repo.commit_and_write("svc/freeze/ledger.json", LEDGER, None);
    let c2 = repo.commit_and_write("svc/src/oracle/tax.rs", "pub fn total() { 1 }\n", None);
    let c3 = repo.commit_and_write("svc/fixtures/tax.total/84a6b2a276edd51b.json", "[]\n", None);
    let c4 = repo.commit_and_write(".github/workflows/ci.yml", "on: never\n", None);
    // Outside the project: another folder's ledger is not this project's.
    repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, None);
    let report = check_patch(&project, &base, &Repo::options("HEAD")).expect("judged");
    assert_eq!(
        violations(&report),
        vec![
            (c1, "freeze/ledger.json".to_string()),
            (c2, "src/oracle/tax.rs".to_string()),
            (c3, "fixtures/tax.total/84a6b2a276edd51b.json".to_string()),
            (c4, "../.github/workflows/ci.yml".to_string()),
        ]
    );
}

/// A listed key used outside its `valid-before` window is refused as `expired` (git says
/// only "no principal matched", as for a key the file does not list), and a key the file
/// does not list stays `unknown_key`.
#[test]
fn a_listed_key_outside_its_validity_window_is_expired_not_unknown() {
    let repo = Repo::new();
    let line = keys().alice.allowed_line().replace(
        "namespaces=\"git\"",
        "namespaces=\"git\" valid-before=\"20200101\"",
    );
    repo.write("freeze/allowed_signers", &line);
    repo.write("freeze/ledger.json", LEDGER);
    let base = repo.commit("base");
    repo.commit_and_write("freeze/ledger.json", LEDGER_WITH_ROW, Some(&keys().alice));
    repo.commit_and_write("freeze/ledger.json", LEDGER, Some(&keys().mallory));
    let report = repo.check(&base);
    let statuses: Vec<SignatureStatus> = report.violations.iter().map(|v| v.signature).collect();
    assert_eq!(
        statuses,
        [SignatureStatus::Expired, SignatureStatus::UnknownKey]
    );
}

/// A `.gitattributes` makes git check out other bytes than the blob the gate lexes
/// (`working-tree-encoding=SHIFT_JIS` turns a harmless string literal into code; `eol`,
/// `ident`, `filter` likewise): adding, changing or deleting one, in any folder or above a
/// project that lives in a folder, needs a signature.
#[test]
fn a_gitattributes_anywhere_needs_a_signature() {
    let (repo, _) = base_repo(true);
    repo.write("tests/properties/prop_add.py", "print('ok')\n");
    let base = repo.commit_signed("a property file", &keys().alice);
    let added = repo.commit_and_write(
        "tests/properties/.gitattributes",
        "prop_add.py working-tree-encoding=SHIFT_JIS\n",
        None,
    );
    let top = repo.commit_and_write(".gitattributes", "*.py eol=crlf\n", None);
    repo.remove("tests/properties/.gitattributes");
    let deleted = repo.commit("drop the attributes");
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![
            (added, "tests/properties/.gitattributes".to_string()),
            (top, ".gitattributes".to_string()),
            (deleted, "tests/properties/.gitattributes".to_string()),
        ]
    );
    for v in &report.violations {
        assert_eq!(v.protected_by, "**/.gitattributes");
    }
    assert_eq!(report.violations[2].change, ChangeKind::Deleted);

    // Signed by an allowed key, the same attributes pass.
    repo.branch("signed", &base);
    repo.commit_and_write(
        "tests/properties/.gitattributes",
        "prop_add.py working-tree-encoding=SHIFT_JIS\n",
        Some(&keys().alice),
    );
    let report = repo.check(&base);
    assert!(!report.blocking(), "{:#?}", report.violations);
    assert_eq!(
        report.commits[0].protected_paths,
        ["tests/properties/.gitattributes"]
    );

    // For a project in a folder, the attributes above it steer its checkout too.
    let repo = Repo::new();
    repo.write("svc/freezegate.toml", "[policy]\n");
    repo.write("svc/freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write("svc/p.py", "print('ok')\n");
    repo.write(".gitattributes", "*.png binary\n");
    let base = repo.commit("base");
    let c1 = repo.commit_and_write(".gitattributes", "*.py ident\n", None);
    let c2 = repo.commit_and_write("svc/.gitattributes", "p.py filter=x\n", None);
    let report =
        check_patch(&repo.path().join("svc"), &base, &Repo::options("HEAD")).expect("judged");
    assert_eq!(
        violations(&report),
        vec![
            (c1, "../.gitattributes".to_string()),
            (c2, ".gitattributes".to_string()),
        ]
    );
}

const PROP_ADD: &str = "import sys\nfrom oracle import serve\nfrom calc import add\n\ndef check(doc):\n    a, b = doc[\"a\"], doc[\"b\"]\n    if add(a, b) != a + b:\n        return \"add\"\n    return None\n\nsys.exit(serve(check))\n";

/// A base revision whose property `add` runs `tests/properties/prop_add.py` as its oracle and
/// `gen_add.py` of that folder as its generator; `tests/properties/oracle.py` is a helper the
/// oracle imports.
fn oracle_repo() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/properties/**\"]\n\n[[property]]\nid = \"add\"\noracle = \"python3 tests/properties/prop_add.py\"\ngenerate = \"cd tests/properties && python3 gen_add.py --count=200\"\n",
    );
    repo.write("freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write("tests/properties/prop_add.py", PROP_ADD);
    repo.write(
        "tests/properties/gen_add.py",
        "for i in range(200):\n    print('{\"a\": %d, \"b\": 1}' % i)\n",
    );
    repo.write(
        "tests/properties/oracle.py",
        "def serve(check):\n    return 0\n",
    );
    let base = repo.commit("base");
    (repo, base)
}

/// The oracle and the generator are the executable form of a property: a patch that edits,
/// renames or deletes the files their commands name at REV needs a signature, however
/// harmless the edit looks to the gaming rules (`!=` to `<` in an `if`, a later `check =
/// lambda doc: None`, `serve(check) and 0`).
#[test]
fn the_files_an_oracle_or_generator_command_names_need_a_signature() {
    let (repo, base) = oracle_repo();
    let oracle_file = "tests/properties/prop_add.py";
    let oracle_why = format!("the oracle of property add at {base}");
    for (name, text) in [
        ("weaker", PROP_ADD.replace("!= a + b", "< a + b")),
        (
            "rebound",
            PROP_ADD.replace("\nsys.exit", "\ncheck = lambda doc: None\nsys.exit"),
        ),
        (
            "exit",
            PROP_ADD.replace("serve(check))", "serve(check) and 0)"),
        ),
    ] {
        repo.branch(name, &base);
        let c = repo.commit_and_write(oracle_file, &text, None);
        let report = repo.check(&base);
        assert_eq!(
            violations(&report),
            vec![(c, oracle_file.to_string())],
            "{name}"
        );
        assert_eq!(report.violations[0].protected_by, oracle_why, "{name}");
        assert_eq!(report.commits[0].protected_paths, [oracle_file], "{name}");
    }

    repo.branch("generator", &base);
    let c = repo.commit_and_write("tests/properties/gen_add.py", "print('{}')\n", None);
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(c, "tests/properties/gen_add.py".to_string())]
    );
    assert_eq!(
        report.violations[0].protected_by,
        format!("the generator of property add at {base}")
    );

    repo.branch("rename", &base);
    repo.git(&["mv", oracle_file, "tests/properties/prop_add_old.py"]);
    repo.write(oracle_file, "import sys\nsys.exit(0)\n");
    let c = repo.commit("move the oracle aside");
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![(c, oracle_file.to_string())]);

    repo.branch("delete", &base);
    repo.remove("tests/properties/gen_add.py");
    let c = repo.commit("drop the generator");
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(c, "tests/properties/gen_add.py".to_string())]
    );
    assert_eq!(report.violations[0].change, ChangeKind::Deleted);

    // A helper the oracle imports (`from oracle import serve`, found in the script's folder,
    // Python's `sys.path[0]`) is property code too.
    repo.branch("helper", &base);
    let c = repo.commit_and_write(
        "tests/properties/oracle.py",
        "def serve(check):\n    return 1\n",
        None,
    );
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(c, "tests/properties/oracle.py".to_string())]
    );
    assert_eq!(
        report.violations[0].protected_by,
        format!("{oracle_why} (imported by {oracle_file})")
    );
    // `from calc import add` finds `calc` nowhere in the tree (the code under test, put on
    // `sys.path` at run time): a `calc.py` added beside the script would be imported instead.
    repo.branch("shadow", &base);
    let c = repo.commit_and_write(
        "tests/properties/calc.py",
        "def add(a, b):\n    return a + b\n",
        None,
    );
    let report = repo.check(&base);
    assert_eq!(
        violations(&report),
        vec![(c, "tests/properties/calc.py".to_string())]
    );
    assert_eq!(
        report.violations[0].protected_by,
        format!("{oracle_why} (imported by {oracle_file})")
    );

    // And so is what the helper imports in turn: a module of a package beside the script,
    // reached through the package's `__init__.py` and a relative import.
    repo.branch("helpers-base", &base);
    repo.write(
        "tests/properties/oracle.py",
        "import sys\n\ntry:\n    from helpers import (\n        decode,\n    )\nexcept ImportError:  # import nothing\n    raise\n\ndef serve(check):\n    return 0 if check(decode(sys.stdin.read())) is None else 1\n",
    );
    repo.write(
        "tests/properties/helpers/__init__.py",
        "from .codec import decode\n",
    );
    repo.write(
        "tests/properties/helpers/codec.py",
        "import json\n\ndef decode(text):\n    return json.loads(text)\n",
    );
    repo.write("tests/properties/helpers/unused.py", "x = 1\n");
    let signed_base = repo.commit_signed("helpers", &keys().alice);
    let c1 = repo.commit_and_write(
        "tests/properties/helpers/codec.py",
        "def decode(text):\n    return {\"a\": 0, \"b\": 0}\n",
        None,
    );
    repo.commit_and_write("tests/properties/helpers/unused.py", "x = 2\n", None);
    let report = repo.check(&signed_base);
    assert_eq!(
        violations(&report),
        vec![(c1, "tests/properties/helpers/codec.py".to_string())]
    );
    assert_eq!(
        report.violations[0].protected_by,
        format!(
            "the oracle of property add at {signed_base} (imported by tests/properties/helpers/__init__.py)"
        )
    );

    // Signed by an allowed key, the same edit passes.
    repo.branch("signed", &base);
    repo.commit_and_write(
        oracle_file,
        &PROP_ADD.replace("!= a + b", "< a + b"),
        Some(&keys().alice),
    );
    let report = repo.check(&base);
    assert!(!report.blocking(), "{:#?}", report.violations);
    assert_eq!(report.commits[0].protected_paths, [oracle_file]);
}

/// The commands are read at REV, not at HEAD: a patch that points its oracle at a new file
/// still needs a signature for that (`freezegate.toml` is protected), and a file the base
/// revision's commands do not name is free.
#[test]
fn the_commands_are_read_at_the_base_revision() {
    let (repo, base) = oracle_repo();
    let toml = repo.git(&["show", "HEAD:freezegate.toml"]);
    repo.write(
        "freezegate.toml",
        &toml.replace(
            "tests/properties/prop_add.py",
            "tests/properties/prop_add2.py",
        ),
    );
    let signed = repo.commit_signed("run another oracle", &keys().alice);
    // At `signed`, prop_add2.py is not in the tree: adding it is free, and prop_add.py
    // (no longer named) is free too.
    repo.write("tests/properties/prop_add2.py", "import sys\nsys.exit(0)\n");
    repo.write("tests/properties/prop_add.py", "import sys\nsys.exit(0)\n");
    repo.commit("a new oracle");
    let report = repo.check(&signed);
    assert!(violations(&report).is_empty(), "{:#?}", report.violations);
    // From the first base, changing prop_add.py is a violation, and so is the policy change
    // had it not been signed.
    let report = repo.check(&base);
    assert_eq!(report.violations.len(), 1, "{:#?}", report.violations);
    assert_eq!(report.violations[0].path, "tests/properties/prop_add.py");
}

/// The code under test runs in the oracle's process when the oracle imports it, so it can
/// answer the protocol itself (`pass` per line, then `os._exit(0)`). It has no reason to read
/// the protocol's variables: a commit that makes code outside `property_paths` name one is a
/// `harness-aware` finding, blocking unless signed; a line that already named one before is
/// not new, and an ordinary edit finds nothing.
#[test]
fn code_under_test_that_starts_reading_the_oracle_protocol_is_a_finding() {
    let (repo, _) = oracle_repo();
    repo.write("src/calc.py", "def add(a, b):\n    return a + b\n");
    repo.write(
        "src/env.py",
        "import os\nSEED = os.environ.get('PROP_SEED')\n",
    );
    let base2 = repo.commit_signed("the code under test", &keys().alice);
    let hijack = "def add(a, b):\n    return a + b\n\nimport os as _os, sys as _sys\nif _os.environ.get(\"FREEZEGATE_WORKER\") == \"1\":\n    for _line in _sys.stdin:\n        print(\"pass\", flush=True)\n    _os._exit(0)\n";
    let findings =
        |report: &freezegate_gate::patch::PatchReport| rule_findings(report, "harness-aware");
    repo.branch("hijack", &base2);
    repo.commit_and_write("src/calc.py", hijack, None);
    let report = repo.check(&base2);
    assert_eq!(findings(&report), [("src/calc.py".to_string(), 5, true)]);
    assert!(
        report.findings[0]
            .explanation
            .contains("starts reading `FREEZEGATE_WORKER`"),
        "{:#?}",
        report.findings
    );
    repo.branch("signed", &base2);
    repo.commit_and_write("src/calc.py", hijack, Some(&keys().alice));
    assert_eq!(
        findings(&repo.check(&base2)),
        [("src/calc.py".to_string(), 5, false)]
    );
    // Not the whole word, a comment, a file of another language: nothing.
    repo.branch("other-words", &base2);
    repo.write(
        "src/listing.py",
        "LISTING_PROPERTY_ID_COLUMN = 'pid'\n# PROP_SEED is the gate's, not ours\n",
    );
    repo.write("scripts/ci.sh", "PROP_SEED=1 make test\n");
    repo.commit("listing");
    assert_eq!(findings(&repo.check(&base2)), []);
    // An old line that already named a variable, moved about, and an ordinary edit.
    repo.branch("ordinary", &base2);
    repo.write(
        "src/env.py",
        "import os\n\nSEED = os.environ.get('PROP_SEED')\nX = 1\n",
    );
    repo.commit_and_write("src/calc.py", "def add(a, b):\n    return b + a\n", None);
    assert_eq!(findings(&repo.check(&base2)), []);
}

/// The runner marks every run with `FREEZEGATE_RUN_MARK`, which the code under test can read
/// as well as the protocol's own variables (and which the isolated oracle's child inherits);
/// any word that starts with `FREEZEGATE` names the protocol (`k.startswith("FREEZEGATE")`,
/// `"FREEZEGATE_" "WORKER"`); and a Node oracle `require`s the code under test into its
/// process, so JavaScript is read as Python is.
#[test]
fn code_under_test_that_tells_the_oracle_by_other_words_is_a_finding() {
    let (repo, base) = oracle_repo();
    let findings =
        |report: &freezegate_gate::patch::PatchReport| rule_findings(report, "harness-aware");
    for (name, path, text, word) in [
        (
            "mark",
            "src/calc.py",
            "import os\n_EXACT = 'FREEZEGATE_RUN_MARK' in os.environ\n",
            "FREEZEGATE_RUN_MARK",
        ),
        (
            "prefix",
            "src/calc.py",
            "import os\n_EXACT = any(k.startswith('FREEZEGATE') for k in os.environ)\n",
            "FREEZEGATE",
        ),
        (
            "pieces",
            "src/calc.py",
            "import os\n_EXACT = 'FREEZEGATE_' 'WORKER' in os.environ\n",
            "FREEZEGATE_",
        ),
        (
            "node",
            "src/money.js",
            "'use strict';\nconst exact = 'FREEZEGATE_WORKER' in process.env;\n",
            "FREEZEGATE_WORKER",
        ),
        (
            "typescript",
            "src/money.ts",
            "// the money module\nexport const exact = process.env.PROP_SEED !== undefined;\n",
            "PROP_SEED",
        ),
    ] {
        repo.branch(name, &base);
        repo.commit_and_write(path, text, None);
        let report = repo.check(&base);
        assert_eq!(findings(&report), [(path.to_string(), 2, true)], "{name}");
        let finding = report
            .findings
            .iter()
            .find(|f| f.rule == "harness-aware")
            .unwrap();
        assert!(
            finding
                .explanation
                .contains(&format!("starts reading `{word}`")),
            "{name}: {}",
            finding.explanation
        );
    }
    // A comment in JavaScript, and a word that only contains the prefix: nothing.
    repo.branch("js-comment", &base);
    repo.commit_and_write(
        "src/money.js",
        "// FREEZEGATE_WORKER is the oracle's, not ours\nconst NOT_FREEZEGATE = 1;\n",
        None,
    );
    assert_eq!(findings(&repo.check(&base)), []);
}

/// Oracle commands spelled as a red-team audit spelled them, which `sh` runs and the first
/// reading of commands did not resolve: Python's options run together (`-Bm`), a shell's `-c`
/// command line, `python -m` under `PYTHONPATH`. Each protects the oracle file. A command that
/// names no file at all (`python3 -c "…"`) protects nothing, and the report says so.
#[test]
fn commands_in_other_spellings_protect_their_files_or_are_reported() {
    let oracle_file = "tests/properties/prop_add.py";
    for (name, oracle) in [
        ("cluster", "cd tests/properties && python3 -Bm prop_add"),
        (
            "shell",
            "sh -c 'cd tests/properties && exec python3 prop_add.py'",
        ),
        (
            "pythonpath",
            "PYTHONPATH=tests/properties python3 -m prop_add",
        ),
    ] {
        let (repo, _) = oracle_repo();
        let toml = repo.git(&["show", "HEAD:freezegate.toml"]);
        repo.write(
            "freezegate.toml",
            &toml.replace("python3 tests/properties/prop_add.py", oracle),
        );
        let base = repo.commit("another spelling");
        let c = repo.commit_and_write(oracle_file, &PROP_ADD.replace("!= a + b", "< a + b"), None);
        let report = repo.check(&base);
        assert_eq!(
            violations(&report),
            vec![(c, oracle_file.to_string())],
            "{name}: {oracle}"
        );
        assert!(
            !report
                .warnings
                .iter()
                .any(|w| w.kind == WarningKind::UnprotectedCommand),
            "{name}: {:#?}",
            report.warnings
        );
    }
    let (repo, _) = oracle_repo();
    let toml = repo.git(&["show", "HEAD:freezegate.toml"]);
    repo.write(
        "freezegate.toml",
        &toml.replace(
            "python3 tests/properties/prop_add.py",
            "cd tests/properties && python3 -c \\\"import runpy; runpy.run_path('prop_add.py')\\\"",
        ),
    );
    let base = repo.commit("a command that names no file");
    repo.commit_and_write(oracle_file, &PROP_ADD.replace("!= a + b", "< a + b"), None);
    let report = repo.check(&base);
    assert!(violations(&report).is_empty(), "{:#?}", report.violations);
    let unprotected: Vec<&str> = report
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::UnprotectedCommand)
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(unprotected.len(), 1, "{:#?}", report.warnings);
    assert!(
        unprotected[0].starts_with(&format!(
            "the oracle of property add at {base} names no file of the tree"
        )),
        "{}",
        unprotected[0]
    );
}

/// A command that runs a script in a language whose loads the gate does not follow (here
/// Node, and a shell script) protects the script but not what it loads: the report warns,
/// naming the script, unless a `policy.protected` glob covers it. A Python script, and a data
/// file a command names, draw no such warning.
#[test]
fn scripts_whose_loads_are_not_followed_are_named_in_a_warning() {
    let unfollowed = |toml: &str| -> Vec<String> {
        let repo = Repo::new();
        repo.write("freezegate.toml", toml);
        repo.write("freeze/allowed_signers", &keys().alice.allowed_line());
        repo.write(
            "tests/oracles/split.js",
            "const serve = require('./serve');\n",
        );
        repo.write("tests/oracles/serve.js", "module.exports = () => 0;\n");
        repo.write("tests/oracles/gen.sh", ". ./tests/oracles/lib.sh\n");
        repo.write("tests/oracles/lib.sh", "echo '{}'\n");
        repo.write("tests/oracles/p.py", "import sys\n");
        repo.write("tests/oracles/cases.json", "[]\n");
        let base = repo.commit("base");
        // An unsigned edit of what the Node oracle loads.
        repo.commit_and_write(
            "tests/oracles/serve.js",
            "module.exports = () => 1;\n",
            None,
        );
        let report = repo.check(&base);
        report
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::UnfollowedScript)
            .map(|w| w.message.replace(&base, "BASE"))
            .collect()
    };
    let properties = "[[property]]\nid = \"split\"\noracle = \"node tests/oracles/split.js 3>&1 1>&2\"\ngenerate = \"sh tests/oracles/gen.sh\"\n\n\
        [[property]]\nid = \"py\"\noracle = \"python3 tests/oracles/p.py --cases tests/oracles/cases.json\"\n";
    let warned = unfollowed(&format!(
        "[policy]\nproperty_paths = [\"tests/**\"]\n\n{properties}"
    ));
    assert_eq!(
        warned,
        [
            "the generator of property split at BASE runs tests/oracles/gen.sh, which the gate protects but does not read (it follows Python's imports only): the files it loads (require, import, source, …) can change without a signature; list them under policy.protected",
            "the oracle of property split at BASE runs tests/oracles/split.js, which the gate protects but does not read (it follows Python's imports only): the files it loads (require, import, source, …) can change without a signature; list them under policy.protected",
        ],
    );
    // Listed under `protected`, the folder is covered: no warning.
    let covered = unfollowed(&format!(
        "[policy]\nprotected = [\"tests/oracles/**\"]\nproperty_paths = [\"tests/**\"]\n\n{properties}"
    ));
    assert_eq!(covered, Vec::<String>::new());
    // A glob that names the scripts alone covers nothing they load (`serve.js` above is
    // still unprotected): the warnings stay.
    let scripts_only = unfollowed(&format!(
        "[policy]\nprotected = [\"tests/oracles/split.js\", \"tests/oracles/gen.sh\"]\nproperty_paths = [\"tests/**\"]\n\n{properties}"
    ));
    assert_eq!(scripts_only, warned);
    // A glob over the scripts' ending in their folder covers what they load there.
    let by_ending = unfollowed(&format!(
        "[policy]\nprotected = [\"tests/oracles/*.js\", \"tests/oracles/*.sh\"]\nproperty_paths = [\"tests/**\"]\n\n{properties}"
    ));
    assert_eq!(by_ending, Vec::<String>::new());
}

/// What a protected script imports is protected where it is property code (under
/// `property_paths`), every place the import may load from, the tree holding a file there or
/// not; the code under test it imports is not, so that a fix can change it. Shown on a flat
/// layout run with `python -m`, where the code under test sits in the folder the module runs
/// from.
#[test]
fn imports_are_protected_under_property_paths_and_the_code_under_test_is_not() {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\n\n[[property]]\nid = \"add\"\noracle = \"python3 -m tests.prop_add\"\n",
    );
    repo.write("freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write("tests/__init__.py", "");
    repo.write(
        "tests/prop_add.py",
        "import sys\nfrom calc import add\nfrom tests.helper import serve\nsys.exit(serve(add))\n",
    );
    repo.write(
        "tests/helper.py",
        "def serve(add):\n    return 0 if add(1, 2) == 3 else 1\n",
    );
    let base = repo.commit("base");
    // The fix of the code under test needs no signature.
    repo.branch("fix", &base);
    repo.commit_and_write("calc.py", "def add(a, b):\n    return a + b\n", None);
    assert_eq!(violations(&repo.check(&base)), vec![]);
    // The helper it imports, under property_paths, does.
    repo.branch("helper", &base);
    let c = repo.commit_and_write("tests/helper.py", "def serve(add):\n    return 0\n", None);
    assert_eq!(
        violations(&repo.check(&base)),
        vec![(c, "tests/helper.py".to_string())]
    );
    // A package added beside the module `-m` runs, or beside the helper, takes its place.
    repo.branch("package", &base);
    repo.write("tests/prop_add/__init__.py", "");
    let c1 = repo.commit_and_write("tests/prop_add/__main__.py", "raise SystemExit(0)\n", None);
    let c2 = repo.commit_and_write(
        "tests/helper/__init__.py",
        "def serve(add):\n    return 0\n",
        None,
    );
    let mut found = violations(&repo.check(&base));
    found.sort();
    let mut want = vec![
        (c1.clone(), "tests/prop_add/__init__.py".to_string()),
        (c1, "tests/prop_add/__main__.py".to_string()),
        (c2, "tests/helper/__init__.py".to_string()),
    ];
    want.sort();
    assert_eq!(found, want);
}

/// A repository whose `freezegate.toml` has `property_paths = ["tests/**"]` and
/// `properties` (TOML `[[property]]` tables), with alice's key allowed and `tests/` a package.
fn python_project(properties: &str) -> Repo {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        &format!("[policy]\nproperty_paths = [\"tests/**\"]\n\n{properties}"),
    );
    repo.write("freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write("tests/__init__.py", "");
    repo
}

/// The (rule, file) of each blocking finding of a report.
fn blocking_findings(report: &freezegate_gate::patch::PatchReport) -> Vec<(String, String)> {
    report
        .findings
        .iter()
        .filter(|f| f.blocking)
        .map(|f| (f.rule.clone(), f.file.clone()))
        .collect()
}

/// `importlib.metadata` reads every folder of `sys.path` for distribution metadata, and
/// Hypothesis (the `hypothesis` entry-point group) and pytest (`pytest11`) load what their
/// entry points name when imported. A `X.dist-info` (or `X.egg-info`) added where `python -m`
/// runs makes `import hypothesis` run code of the patch's choosing in the generator, which
/// imports no code under test, and can narrow its strategies: `module-shadowed`, blocking
/// unless signed. Metadata elsewhere, or deleted, finds nothing.
#[test]
fn distribution_metadata_where_the_oracle_looks_first_needs_a_signature() {
    let repo = python_project(
        "[[property]]\nid = \"add\"\noracle = \"python3 -m tests.prop_add\"\ngenerate = \"python3 -m tests.gen_add\"\n",
    );
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write(
        "tests/prop_add.py",
        "import json, sys\nfrom calc import add\na, b = json.load(sys.stdin)\nsys.exit(0 if add(a, b) == a + b else 1)\n",
    );
    repo.write("tests/gen_add.py", "import hypothesis\n");
    repo.write("docs/old.dist-info/METADATA", "Name: old\n");
    let base = repo.commit("base");
    let metadata = |report: &freezegate_gate::patch::PatchReport| -> Vec<(String, bool)> {
        rule_findings(report, "module-shadowed")
            .into_iter()
            .map(|(file, _, blocking)| (file, blocking))
            .collect()
    };
    repo.branch("plugin", &base);
    repo.write(
        "calc_tools-1.0.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: calc-tools\nVersion: 1.0\n",
    );
    repo.write(
        "calc_tools-1.0.dist-info/entry_points.txt",
        "[hypothesis]\ncalc = calc:_hypothesis_setup_hook\n",
    );
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a - b\n\ndef _hypothesis_setup_hook():\n    pass\n",
    );
    repo.commit("calc: hypothesis integration");
    let report = repo.check(&base);
    assert_eq!(
        metadata(&report),
        vec![("calc_tools-1.0.dist-info".to_string(), true)]
    );
    assert!(
        report.findings[0].explanation.contains("entry points"),
        "{}",
        report.findings[0].explanation
    );
    repo.branch("egg", &base);
    repo.commit_and_write(
        "Calc.egg-info/entry_points.txt",
        "[pytest11]\ncalc = calc\n",
        None,
    );
    assert_eq!(
        metadata(&repo.check(&base)),
        vec![("Calc.egg-info".to_string(), true)]
    );
    repo.branch("signed", &base);
    repo.write("calc_tools-1.0.dist-info/METADATA", "Name: calc-tools\n");
    repo.commit_signed("vendor the plugin", &keys().alice);
    assert_eq!(
        metadata(&repo.check(&base)),
        vec![("calc_tools-1.0.dist-info".to_string(), false)]
    );
    // Not a folder Python searches, and a deletion: nothing.
    repo.branch("elsewhere", &base);
    repo.write("docs/new.dist-info/METADATA", "Name: new\n");
    repo.commit("docs");
    repo.remove("docs/old.dist-info/METADATA");
    repo.commit("drop");
    assert_eq!(metadata(&repo.check(&base)), vec![]);
}

/// `python -m` puts the folder it runs in ahead of the standard library on `sys.path`, and
/// that folder is not property code here. A module file added there under a name that
/// `import` would otherwise take from elsewhere runs in the oracle's process: one named like
/// a module the oracle imports from outside the tree needs a signature, and any module named
/// like a standard one, or a test tool, is `module-shadowed` (blocking when unsigned). A new
/// module of another name, and the fix of the code under test, need nothing.
#[test]
fn a_module_added_where_the_oracle_looks_first_needs_a_signature() {
    let repo =
        python_project("[[property]]\nid = \"add\"\noracle = \"python3 -m tests.prop_add\"\n");
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write(
        "tests/prop_add.py",
        "import json, sys\nfrom calc import add\na, b = json.load(sys.stdin)\nsys.exit(0 if add(a, b) == a + b else 1)\n",
    );
    let base = repo.commit("base");
    let shadowing = |report: &freezegate_gate::patch::PatchReport| -> Vec<(String, bool)> {
        rule_findings(report, "module-shadowed")
            .into_iter()
            .map(|(file, _, blocking)| (file, blocking))
            .collect()
    };

    // `json.py` beside the code under test: what the oracle's `import json` loads.
    repo.branch("json", &base);
    let c = repo.commit_and_write("json.py", "from _json import *\n", None);
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![(c, "json.py".to_string())]);
    assert_eq!(
        report.violations[0].protected_by,
        format!("the oracle of property add at {base} (imported by tests/prop_add.py)")
    );
    assert_eq!(shadowing(&report), vec![("json.py".to_string(), true)]);
    let finding = &report.findings[0];
    assert!(
        finding
            .explanation
            .contains("standard library's module `json`")
            && finding
                .explanation
                .contains("ahead of the standard library"),
        "{}",
        finding.explanation
    );

    // A standard module the oracle does not import itself (the standard library may), and
    // a test tool's package: flagged, and signed they pass.
    repo.branch("random", &base);
    repo.write("hypothesis/__init__.py", "");
    repo.commit_and_write("random.py", "def random():\n    return 0.5\n", None);
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![]);
    assert_eq!(
        shadowing(&report),
        vec![
            ("hypothesis/__init__.py".to_string(), true),
            ("random.py".to_string(), true)
        ]
    );
    repo.branch("random-signed", &base);
    repo.write("random.py", "def random():\n    return 0.5\n");
    repo.commit_signed("vendor a deterministic random", &keys().alice);
    assert_eq!(
        shadowing(&repo.check(&base)),
        vec![("random.py".to_string(), false)]
    );

    // The fix of the code under test: nothing.
    repo.branch("fix", &base);
    repo.commit_and_write("calc.py", "def add(a, b):\n    return a + b\n", None);
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![]);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    // Any new module there, named like nothing standard, is a finding too: the standard
    // library imports names of its own choosing (`copy` tries `org.python.core`). A test file
    // pytest collects by its name is not.
    repo.branch("new-module", &base);
    repo.write("org/__init__.py", "");
    repo.write("org/python/__init__.py", "");
    repo.write("org/python/core.py", "PyStringMap = dict\n");
    repo.write("test_calc.py", "def test_add():\n    pass\n");
    repo.commit_and_write("calc_util.py", "def plus(a, b):\n    return a + b\n", None);
    let report = repo.check(&base);
    assert_eq!(
        shadowing(&report),
        vec![
            ("calc_util.py".to_string(), true),
            ("org/__init__.py".to_string(), true)
        ]
    );
    assert!(
        report.findings[1]
            .explanation
            .contains("`org`, which the standard library imports when it finds it"),
        "{}",
        report.findings[1].explanation
    );
}

/// The places protected where the tree holds nothing are top-level names only: inside a
/// package of the code under test, a module the base lacks (a submodule it imports, one a
/// fix moves code into, a module turned into a package) can only come from that package's
/// folder, so adding it is a fix like any other and needs no signature.
#[test]
fn modules_added_inside_the_code_under_tests_packages_need_nothing() {
    let repo =
        python_project("[[property]]\nid = \"add\"\noracle = \"python3 -m tests.prop_add\"\n");
    repo.write(
        "tests/prop_add.py",
        "import json, sys\nfrom calc import add\na, b = json.load(sys.stdin)\nsys.exit(0 if add(a, b) == a + b else 1)\n",
    );
    repo.write("calc/__init__.py", "from .core import add\n");
    repo.write(
        "calc/core.py",
        "from .util import twice\n\ndef add(a, b):\n    from .fast import plus\n    return plus(a, b)\n",
    );
    repo.write("calc/util.py", "def twice(x):\n    return 2 * x\n");
    let base = repo.commit("base");
    // The submodule the code imports and the base lacks: the fix.
    repo.branch("fast", &base);
    repo.commit_and_write("calc/fast.py", "def plus(a, b):\n    return a + b\n", None);
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![]);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    // A module turned into a package.
    repo.branch("package", &base);
    repo.remove("calc/util.py");
    repo.write("calc/util/__init__.py", "def twice(x):\n    return 2 * x\n");
    repo.commit("util becomes a package");
    assert_eq!(violations(&repo.check(&base)), vec![]);
    // Code moved into a new submodule that `from calc import add` may name.
    repo.branch("moved", &base);
    repo.write("calc/__init__.py", "from .add import add\n");
    repo.commit_and_write("calc/add.py", "def add(a, b):\n    return a + b\n", None);
    assert_eq!(violations(&repo.check(&base)), vec![]);
    // A top-level name the tree does not hold, beside the code under test, still does.
    repo.branch("top", &base);
    let c = repo.commit_and_write("json.py", "from _json import *\n", None);
    assert_eq!(
        violations(&repo.check(&base)),
        vec![(c, "json.py".to_string())]
    );
}

/// Other ways into the folders an oracle's Python searches first: a symbolic link named like
/// a package (the gate does not follow it: `opaque-code`), the folder `python -c` runs in,
/// and the real folder of a script that is a link.
#[test]
fn links_and_other_commands_where_python_looks_first_are_seen() {
    let repo = python_project(
        "[[property]]\nid = \"m\"\noracle = \"python3 -m tests.prop\"\n\n[[property]]\nid = \"c\"\noracle = \"cd c && python3 -c 'import sys; sys.exit(0)'\"\n\n[[property]]\nid = \"l\"\noracle = \"python3 tools/o.py\"\n",
    );
    repo.write("tests/prop.py", "import json, sys\nsys.exit(0)\n");
    repo.write("c/README.md", "the folder `python -c` runs in\n");
    repo.write("checks/o.py", "import sys\nsys.exit(0)\n");
    std::fs::create_dir_all(repo.path().join("tools")).expect("mkdir");
    std::os::unix::fs::symlink("../checks/o.py", repo.path().join("tools/o.py")).expect("link");
    let base = repo.commit("base");

    // A link named like the standard `json`, at the root `-m` runs in.
    repo.branch("link", &base);
    repo.write(
        "vendor/fj/__init__.py",
        "def loads(s):\n    return [1, 1]\n",
    );
    std::os::unix::fs::symlink("vendor/fj", repo.path().join("json")).expect("link");
    repo.commit("vendor a faster json");
    assert_eq!(
        blocking_findings(&repo.check(&base)),
        vec![("opaque-code".to_string(), "json".to_string())]
    );
    // A link not named like a module, and one outside every searched folder: nothing.
    repo.branch("docs-link", &base);
    std::os::unix::fs::symlink("c/README.md", repo.path().join("README.md")).expect("link");
    std::fs::create_dir_all(repo.path().join("docs")).expect("mkdir");
    std::os::unix::fs::symlink("../c", repo.path().join("docs/json")).expect("link");
    repo.commit("links");
    assert_eq!(blocking_findings(&repo.check(&base)), vec![]);

    // Bytecode is opaque wherever it lies, property code or not: Python runs a `__pycache__`
    // file in place of its source.
    repo.branch("bytecode", &base);
    repo.write("checks/__pycache__/o.cpython-311.pyc", "\u{1}\u{2}");
    repo.write("src/shop/__pycache__/calc.cpython-311.pyc", "\u{1}\u{2}");
    repo.commit("compiled");
    let mut found = blocking_findings(&repo.check(&base));
    found.sort();
    assert_eq!(
        found,
        vec![
            (
                "opaque-code".to_string(),
                "checks/__pycache__/o.cpython-311.pyc".to_string()
            ),
            (
                "opaque-code".to_string(),
                "src/shop/__pycache__/calc.cpython-311.pyc".to_string()
            ),
        ]
    );

    // A standard name where `python -c` runs, and beside the real script of a link.
    repo.branch("beside", &base);
    repo.write("c/random.py", "def random():\n    return 0.5\n");
    repo.write("checks/selectors.py", "");
    repo.write("tools/selectors.py", "");
    repo.commit("helpers");
    let mut found = blocking_findings(&repo.check(&base));
    found.sort();
    assert_eq!(
        found,
        vec![
            ("module-shadowed".to_string(), "c/random.py".to_string()),
            (
                "module-shadowed".to_string(),
                "checks/selectors.py".to_string()
            ),
            (
                "module-shadowed".to_string(),
                "tools/selectors.py".to_string()
            ),
        ]
    );
}

/// For a project in a folder of the work tree, the folder `python -m` runs in is the
/// project's: a standard name added there is flagged and protected, under its project path;
/// the same file at the top of the work tree, where no oracle looks, is nothing.
#[test]
fn where_the_oracle_looks_first_is_read_from_the_project_folder() {
    let repo = Repo::new();
    repo.write(
        "svc/freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\n\n[[property]]\nid = \"m\"\noracle = \"python3 -m tests.prop\"\n",
    );
    repo.write("svc/freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write("svc/tests/__init__.py", "");
    repo.write("svc/tests/prop.py", "import json, sys\nsys.exit(0)\n");
    let base = repo.commit("base");
    let judge =
        || check_patch(&repo.path().join("svc"), &base, &Repo::options("HEAD")).expect("judged");
    repo.branch("top", &base);
    repo.commit_and_write("json.py", "from _json import *\n", None);
    let report = judge();
    assert_eq!(violations(&report), vec![]);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    repo.branch("project", &base);
    let c = repo.commit_and_write("svc/json.py", "from _json import *\n", None);
    let report = judge();
    assert_eq!(violations(&report), vec![(c, "json.py".to_string())]);
    let shadowing: Vec<(&str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.rule.as_str(), f.file.as_str()))
        .collect();
    assert_eq!(shadowing, vec![("module-shadowed", "json.py")]);

    // Under `-I` Python does not search that folder first: no `module-shadowed` finding. The
    // place `prop.py` imports `json` from stays protected (looked for beside it, as ever).
    repo.branch("isolated", &base);
    repo.write(
        "svc/freezegate.toml",
        "[policy]\nproperty_paths = [\"tests/**\"]\n\n[[property]]\nid = \"m\"\noracle = \"python3 -I -m tests.prop\"\n",
    );
    let isolated_base = repo.commit("isolate the oracle");
    let c = repo.commit_and_write("svc/json.py", "from _json import *\n", None);
    let report = check_patch(
        &repo.path().join("svc"),
        &isolated_base,
        &Repo::options("HEAD"),
    )
    .expect("judged");
    assert_eq!(violations(&report), vec![(c, "json.py".to_string())]);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

/// `PYTHONPATH=lib python3 -m prop`: Python finds `prop` in `lib/`, but the module's own
/// imports look in `sys.path[0]` first, the folder the command runs in: the `helper.py` there
/// is what runs, and it is the one protected.
#[test]
fn a_module_found_through_pythonpath_imports_from_where_the_command_runs() {
    let repo = Repo::new();
    repo.write(
        "freezegate.toml",
        "[policy]\nproperty_paths = [\"helper.py\", \"lib/**\"]\n\n[[property]]\nid = \"p\"\noracle = \"PYTHONPATH=lib python3 -m prop\"\n",
    );
    repo.write("freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write(
        "lib/prop.py",
        "import sys\nfrom helper import check\nsys.exit(check())\n",
    );
    repo.write("helper.py", "def check():\n    return 1\n");
    let base = repo.commit("base");
    let c = repo.commit_and_write("helper.py", "def check():\n    return 0\n", None);
    let report = repo.check(&base);
    assert_eq!(violations(&report), vec![(c, "helper.py".to_string())]);
    assert_eq!(
        report.violations[0].protected_by,
        format!("the oracle of property p at {base} (imported by lib/prop.py)")
    );
}

/// For a project in a folder, commands run in that folder: a `cd` moves where the words are
/// resolved, `python3 -m pkg.mod` names `pkg/mod.py`, a path may climb above the project
/// folder within the work tree, and a symbolic link the command names protects its target too.
#[test]
fn command_paths_resolve_from_the_project_folder_through_cd_modules_and_links() {
    let repo = Repo::new();
    repo.write(
        "svc/freezegate.toml",
        "[policy]\nproperty_paths = [\"checks/**\"]\n\n[[property]]\nid = \"mod\"\noracle = \"cd checks && PYTHONHASHSEED=0 python3 -m props.add\"\ngenerate = \"python3 ../tools/gen.py\"\n\n[[property]]\nid = \"linked\"\noracle = \"env -i sh ./run.sh\"\n",
    );
    repo.write("svc/freeze/allowed_signers", &keys().alice.allowed_line());
    repo.write("svc/checks/props/add.py", "print('pass')\n");
    repo.write("svc/checks/props/__init__.py", "");
    repo.write("tools/gen.py", "print('{}')\n");
    repo.write("svc/real/run.sh", "exit 0\n");
    std::os::unix::fs::symlink("real/run.sh", repo.path().join("svc/run.sh")).expect("symlink");
    let base = repo.commit("base");
    let c1 = repo.commit_and_write("svc/checks/props/add.py", "print('fine')\n", None);
    let c2 = repo.commit_and_write("tools/gen.py", "print('[]')\n", None);
    let c3 = repo.commit_and_write("svc/real/run.sh", "exit 1\n", None);
    // Imported before the module runs: the package's `__init__.py`.
    let c4 = repo.commit_and_write("svc/checks/props/__init__.py", "x = 1\n", None);
    let report =
        check_patch(&repo.path().join("svc"), &base, &Repo::options("HEAD")).expect("judged");
    assert_eq!(
        violations(&report),
        vec![
            (c1, "checks/props/add.py".to_string()),
            (c2, "../tools/gen.py".to_string()),
            (c3, "real/run.sh".to_string()),
            (c4, "checks/props/__init__.py".to_string()),
        ]
    );
    let why: Vec<&str> = report
        .violations
        .iter()
        .map(|v| v.protected_by.as_str())
        .collect();
    assert_eq!(
        why,
        [
            format!("the oracle of property mod at {base}"),
            format!("the generator of property mod at {base}"),
            format!("the oracle of property linked at {base}"),
            format!("the oracle of property mod at {base} (imported by python -m props.add)"),
        ]
    );
}
