//! The committed JSON Schema at `docs/ledger.schema.json` is what the types generate.
//!
//! Regenerate it with `UPDATE_SCHEMA=1 cargo test -p freezegate-ledger --test schema`.

use std::path::PathBuf;

use freezegate_canon::{Value, parse};
use freezegate_ledger::{ROW_FIELDS, json_schema_text};

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/ledger.schema.json")
}

#[test]
fn committed_schema_is_current() {
    let fresh = json_schema_text();
    let path = committed_path();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "docs/ledger.schema.json is stale: regenerate it with \
         `UPDATE_SCHEMA=1 cargo test -p freezegate-ledger --test schema` and commit it"
    );
}

#[test]
fn schema_requires_every_row_field_and_forbids_others() {
    let schema = parse(json_schema_text().as_bytes()).unwrap();
    let required = schema.pointer("/$defs/row/required").unwrap();
    let expected: Vec<Value> = ROW_FIELDS
        .iter()
        .map(|f| Value::String((*f).to_owned()))
        .collect();
    assert_eq!(required, &Value::Array(expected));
    assert_eq!(
        schema.pointer("/$defs/row/additionalProperties"),
        Some(&Value::Bool(false))
    );
    assert_eq!(
        schema.pointer("/additionalProperties"),
        Some(&Value::Bool(false))
    );
}
