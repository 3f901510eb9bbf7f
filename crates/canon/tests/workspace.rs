//! Checks of the workspace around the crate: they read its manifests, so they run in the
//! repository and are left out of the package (`exclude` in Cargo.toml).

/// The library does not depend on serde_json, and the workspace turns on no serde_json
/// feature: cargo unifies features across a build, so one turned on here would change how a
/// dependant's own serde_json parses numbers.
#[test]
fn canon_turns_on_no_serde_json_feature_for_its_dependants() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("\n[")
        .find(|table| table.starts_with("dependencies]"))
        .expect("a [dependencies] table");
    assert!(
        !dependencies.lines().any(|l| l.starts_with("serde_json")),
        "crates/canon/Cargo.toml: serde_json is a normal dependency:\n{dependencies}"
    );
    let workspace = std::fs::read_to_string(dir.join("../../Cargo.toml")).unwrap();
    let line = workspace
        .lines()
        .find(|l| l.starts_with("serde_json"))
        .expect("serde_json in [workspace.dependencies]");
    assert!(
        !line.contains("features"),
        "Cargo.toml: the workspace turns on serde_json features: {line}"
    );
}
