//! The `harness-aware` rule reads the code under test for the names of the variables
//! freezegate gives oracles ([`HARNESS_WORDS`]): every variable an oracle's process gets from
//! freezegate must be one of them, or code under test could tell that it runs under an
//! oracle by that variable alone (a red-team audit found `FREEZEGATE_RUN_MARK` missing).
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use freezegate_gate::patch::HARNESS_WORDS;
use freezegate_replay::{Oracle, ProcessOracle, RunContext, WorkerOracle};

/// The names of freezegate's variables (`FREEZEGATE_*`, `PROP_*`, `PROPERTY_*`) that the
/// oracle process saw, written by the oracle to `out`.
fn names_seen(out: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
        .filter(|k| {
            k.starts_with("FREEZEGATE_") || k.starts_with("PROP_") || k.starts_with("PROPERTY_")
        })
        .collect()
}

#[test]
fn every_variable_an_oracle_gets_is_a_harness_word() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = RunContext::new(7)
        .with_property("p")
        .with_timeout(Duration::from_secs(20));
    let fresh_out = dir.path().join("fresh.env");
    let fresh = ProcessOracle::new(format!("env > '{}'", fresh_out.display()), dir.path()).unwrap();
    fresh.run(b"0", &ctx);
    let worker_out = dir.path().join("worker.env");
    let worker = WorkerOracle::new(
        format!(
            "env > '{}'; while read -r line; do echo pass; done",
            worker_out.display()
        ),
        dir.path(),
    )
    .unwrap();
    worker.run(b"0", &ctx);
    let mut seen = names_seen(&fresh_out);
    seen.extend(names_seen(&worker_out));
    assert!(seen.contains("FREEZEGATE_REPLAY"), "{seen:?}");
    assert!(seen.contains("FREEZEGATE_WORKER"), "{seen:?}");
    let missing: Vec<&String> = seen
        .iter()
        .filter(|name| !HARNESS_WORDS.contains(&name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "variables oracles get that harness-aware does not read: {missing:?}"
    );
}
