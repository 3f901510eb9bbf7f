//! The JSON schemas committed under the repository's `docs/` are the ones the crate
//! generates. They read the repository around the crate, so they run in the workspace and are
//! left out of the package (`exclude` in Cargo.toml).

use freezegate_gate::schema::{error_schema_text, report_schema_text};

fn check_committed(name: &str, expected: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, expected).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "{} is stale: run `UPDATE_SCHEMA=1 cargo test -p freezegate-gate --test committed_schemas` and commit it",
        path.display()
    );
}

#[test]
fn the_committed_schema_is_current() {
    check_committed("gate-report.schema.json", &report_schema_text());
}

#[test]
fn the_committed_error_schema_is_current() {
    check_committed("gate-error.schema.json", &error_schema_text());
}
