//! `freezegate_gate::freeze::freeze`, as a project's own xtask calls it: a flicker is
//! replayed with `freezegate.toml`'s seed, replay count and deadline whatever the overrides
//! say, and its row written, then renewed; what no replay can change is refused before the
//! replays; a fixture without its meta file is an error.

use freezegate_gate::config::RunOverrides;
use freezegate_gate::freeze::{Ask, FreezeError, freeze};
use freezegate_gate::freezegate_canon::fixture::{self, Meta};
use freezegate_gate::freezegate_canon::{Canonicalization, FixtureId, canonicalize};
use freezegate_gate::freezegate_ledger::{FreezeOutcome, Ledger, Refusal};
use freezegate_gate::freezegate_replay::Label;
use freezegate_gate::rust_prop::Registry;

const SIGNERS: &str = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOm+iqtWY8JcllVdNqblscY+uEw8dN5PHWCH30uKwyvt\n";

/// A repository whose property `p` fails on even replays (a flicker), with `[1]` pinned.
fn repo() -> (tempfile::TempDir, FixtureId) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let root = dir.path();
    let write = |name: &str, text: &str| {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("folder");
        std::fs::write(path, text).expect("write");
    };
    write(
        "freezegate.toml",
        "[policy]\nseed = 20260917\nreplays = 4\ntimeout_ms = 5000\nfreeze_env_classes = [\"remote\"]\nmax_freeze_days = 14\n\n[[property]]\nid = \"p\"\noracle = \"sh p.sh\"\n",
    );
    write(
        "p.sh",
        "r=${FREEZEGATE_REPLAY:-0}\n[ \"$PROP_SEED\" = 20260917 ] || exit 2\n[ $((r % 2)) = 0 ] && exit 1\nexit 0\n",
    );
    write("freeze/allowed_signers", SIGNERS);
    let case = canonicalize(b"[1]", Canonicalization::V1).expect("canonical");
    let meta = Meta {
        property_id: "p".parse().expect("id"),
        fixture_id: case.fixture_id(),
        fixture_digest: case.digest(),
        origin_id: case.fixture_id(),
        origin_digest: case.digest(),
        canonicalization: Canonicalization::V1,
        seed: 20260917,
        pinned_at: "2026-09-17T10:00:00Z".to_owned(),
        patch_id: "pin".to_owned(),
        oracle_calls: 1,
        shrink_path: Vec::new(),
    };
    fixture::pin(root, &meta, &case, &case).expect("pin");
    (dir, case.fixture_id())
}

/// An ask for `fixture` from a remote runner, with every override a freeze must ignore set.
fn ask(fixture: FixtureId, env_class: &str) -> Ask {
    let mut overrides = RunOverrides::from_env(|k| {
        match k {
            "PROP_SEED" => Some("5"),
            "REPLAYS" => Some("1"),
            "ENV_CLASS" => Some(env_class),
            "RUNNER_ID" => Some("ci-7"),
            _ => None,
        }
        .map(str::to_owned)
    });
    overrides.flag_seed = Some(6);
    overrides.flag_replays = Some(9);
    overrides.flag_timeout_ms = Some(1);
    Ask {
        property: "p".parse().expect("id"),
        fixture,
        owner: "alice@example.com".to_owned(),
        reason: "replay parity".to_owned(),
        expires_in_days: 7,
        patch_id: "candidate".to_owned(),
        now: "2026-09-17T12:00:00Z".parse().expect("time"),
        overrides,
    }
}

#[test]
fn a_flicker_is_frozen_with_the_files_settings_then_renewed() {
    let (dir, fixture) = repo();
    let registry = Registry::new();
    let told = std::cell::RefCell::new(Vec::new());
    let frozen = freeze(
        dir.path(),
        &registry,
        None,
        ask(fixture, "remote"),
        |labels| told.borrow_mut().extend_from_slice(labels),
        |_| (),
    )
    .expect("a freeze");
    // The caller is told the labels before the ledger is written.
    assert_eq!(*told.borrow(), frozen.labels);
    // The file's seed (the oracle exits 2 under any other) and its 4 replays.
    use Label::{AssertFail as F, AssertPass as P};
    assert_eq!(frozen.labels, [F, P, F, P]);
    let FreezeOutcome::Written { row, renewed } = &frozen.outcome else {
        panic!("not written: {:?}", frozen.outcome);
    };
    assert!(!renewed);
    assert_eq!(row.seed.to_string(), "20260917");
    assert_eq!(row.runner_id, "ci-7");
    assert_eq!(row.env_class.as_str(), "remote");
    let on_disk = Ledger::from_slice(
        &std::fs::read(dir.path().join("freeze/ledger.json")).expect("the ledger"),
    )
    .expect("a ledger");
    assert_eq!(on_disk.rows(), [(**row).clone()]);

    let again = freeze(
        dir.path(),
        &registry,
        None,
        ask(fixture, "remote"),
        |_| (),
        |_| (),
    )
    .expect("a renewal");
    assert!(
        matches!(again.outcome, FreezeOutcome::Written { renewed: true, .. }),
        "{:?}",
        again.outcome
    );
}

#[test]
fn what_no_replay_changes_is_refused_before_the_replays() {
    let (dir, fixture) = repo();
    // The oracle would leave a mark if it ran.
    std::fs::write(dir.path().join("p.sh"), "touch ran\nexit 1\n").expect("write");
    let frozen = freeze(
        dir.path(),
        &Registry::new(),
        None,
        ask(fixture, "local"),
        |_| (),
        |_| (),
    )
    .expect("judged");
    assert!(
        matches!(
            frozen.outcome,
            FreezeOutcome::Refused(Refusal::EnvClass { .. })
        ),
        "{:?}",
        frozen.outcome
    );
    assert!(frozen.labels.is_empty());
    assert!(!dir.path().join("ran").exists(), "the oracle ran");
    assert!(!dir.path().join("freeze/ledger.json").exists());
}

#[test]
fn a_fixture_without_its_meta_file_is_an_error() {
    let (dir, fixture) = repo();
    let meta = fixture::meta_path(dir.path(), &"p".parse().expect("id"), fixture);
    std::fs::remove_file(&meta).expect("remove the meta file");
    let error = freeze(
        dir.path(),
        &Registry::new(),
        None,
        ask(fixture, "remote"),
        |_| (),
        |_| (),
    )
    .expect_err("no meta file");
    assert!(matches!(error, FreezeError::NoMeta { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .ends_with(".meta.json does not exist: pin the fixture with `xtask classify` first; a freeze needs its meta file"),
        "{error}"
    );
    let missing = tempfile::tempdir().expect("temporary folder");
    let error = freeze(
        missing.path(),
        &Registry::new(),
        None,
        ask(fixture, "remote"),
        |_| (),
        |_| (),
    )
    .expect_err("no freezegate.toml");
    assert!(matches!(error, FreezeError::NoConfig), "{error:?}");
}
