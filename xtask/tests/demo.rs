//! `xtask demo`, the README's first command, end to end: it must succeed, every time.

use std::process::Command;

#[test]
fn the_demo_walks_the_whole_promotion_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = dir.path().join("demo");
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["demo", "--keep"])
        .arg(&keep)
        .env_remove("ENV_CLASS")
        .env_remove("RUNNER_ID")
        .env_remove("PROP_SEED")
        .env_remove("REPLAYS")
        .output()
        .expect("xtask runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The story, in order: failures pinned, a flicker, the hang in the infra queue, a refused
    // local freeze, an accepted remote one, and the gate passing with the flicker frozen.
    let steps = [
        "pin_fixture",
        "freeze_after_pin",
        "timeout",
        "gate: blocked",
        "env class local may not freeze",
        "froze report.header_keeps_declared_order",
        "gate: pass — 1 frozen (no vote)",
    ];
    let mut at = 0;
    for step in steps {
        match stdout[at..].find(step) {
            Some(i) => at += i + step.len(),
            None => panic!("the demo's output lacks {step:?} after byte {at}:\n{stdout}"),
        }
    }
    // --keep leaves a repository whose ledger holds exactly the one frozen row.
    let ledger = std::fs::read_to_string(keep.join("freeze/ledger.json")).expect("ledger");
    assert_eq!(ledger.matches("\"property_id\"").count(), 1, "{ledger}");
    assert!(ledger.contains("\"env_class\": \"remote\""), "{ledger}");
}
