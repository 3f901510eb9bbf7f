//! The JSON Schema of `freeze/ledger.json`, generated from the row's field types.
//!
//! Each field type states its own JSON shape ([`FieldType`]); the row schema lists the
//! fields in [`ROW_FIELDS`](crate::ROW_FIELDS) order. The committed copy lives at
//! `docs/ledger.schema.json`, and a test fails when it is stale.

use freezegate_canon::{Canonicalization, Digest, FixtureId, PropertyId, Value, to_pretty_string};
use freezegate_replay::Label;

use crate::row::{EnvClass, SCHEMA, Seed};
use crate::stamp::Timestamp;

/// A type that can state the JSON Schema of its stored form.
trait FieldType {
    fn schema() -> Value;
}

fn obj(members: Vec<(&str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

fn string_pattern(pattern: &str) -> Value {
    obj(vec![("type", s("string")), ("pattern", s(pattern))])
}

fn string_enum(names: impl IntoIterator<Item = &'static str>) -> Value {
    obj(vec![
        ("type", s("string")),
        ("enum", Value::Array(names.into_iter().map(s).collect())),
    ])
}

impl FieldType for PropertyId {
    fn schema() -> Value {
        string_pattern("^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    }
}

impl FieldType for FixtureId {
    fn schema() -> Value {
        string_pattern("^[0-9a-f]{16}$")
    }
}

impl FieldType for Digest {
    fn schema() -> Value {
        string_pattern("^[0-9a-f]{64}$")
    }
}

impl FieldType for Canonicalization {
    fn schema() -> Value {
        string_enum([Canonicalization::V1, Canonicalization::V1Ordered].map(|c| c.as_str()))
    }
}

impl FieldType for Seed {
    fn schema() -> Value {
        obj(vec![("type", s("integer"))])
    }
}

impl FieldType for EnvClass {
    fn schema() -> Value {
        string_enum([EnvClass::Local, EnvClass::Remote].map(EnvClass::as_str))
    }
}

impl FieldType for String {
    fn schema() -> Value {
        obj(vec![("type", s("string")), ("minLength", Value::int(1))])
    }
}

impl FieldType for Vec<Label> {
    fn schema() -> Value {
        let labels = [
            Label::AssertPass,
            Label::AssertFail,
            Label::Timeout,
            Label::HarnessError,
        ];
        obj(vec![
            ("type", s("array")),
            ("minItems", Value::int(2)),
            ("items", string_enum(labels.map(Label::as_str))),
        ])
    }
}

impl FieldType for Timestamp {
    fn schema() -> Value {
        string_pattern("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")
    }
}

fn field<T: FieldType>(name: &'static str, description: &str) -> (&'static str, Value) {
    let mut schema = T::schema();
    if let Value::Object(members) = &mut schema {
        members.insert(0, ("description".to_owned(), s(description)));
    }
    (name, schema)
}

/// The row's fields with their schemas, in rendering order.
fn row_fields() -> Vec<(&'static str, Value)> {
    vec![
        field::<PropertyId>("property_id", "The property whose pinned fixture flickers."),
        field::<FixtureId>(
            "fixture_id",
            "The fixture's file name: the first 16 hex of fixture_digest.",
        ),
        field::<Digest>(
            "fixture_digest",
            "SHA-256 of the fixture's canonical bytes; fixtures/<property_id>/<fixture_id>.json must hash to it.",
        ),
        field::<Digest>(
            "origin_digest",
            "SHA-256 of the un-shrunk input the fixture was shrunk from.",
        ),
        field::<Canonicalization>(
            "canonicalization",
            "The canonical form of the fixture (SPEC section 3).",
        ),
        field::<Seed>("seed", "The seed every justifying replay ran with."),
        field::<EnvClass>(
            "env_class",
            "Where the replays ran; the policy names the classes that may freeze (default: remote only).",
        ),
        field::<String>("runner_id", "The machine that ran the replays."),
        field::<Vec<Label>>(
            "replays",
            "The labels of the justifying replays in run-index order: both assert_pass and assert_fail, nothing else.",
        ),
        field::<String>(
            "patch_id",
            "The candidate under test (commit or pull request id), not the base.",
        ),
        field::<String>(
            "owner",
            "The human who vouches for the row: exactly one principal of freeze/allowed_signers.",
        ),
        field::<String>("reason", "The named cause of non-determinism."),
        field::<Timestamp>(
            "created_at",
            "When the row was written (UTC); never in the future.",
        ),
        field::<Timestamp>(
            "expires_at",
            "When the row stops excusing anything (UTC): after created_at, at most max_freeze_days later.",
        ),
    ]
}

/// The JSON Schema (draft 2020-12) of `freeze/ledger.json` as a value.
pub fn json_schema() -> Value {
    let fields = row_fields();
    let required = Value::Array(fields.iter().map(|(name, _)| s(name)).collect());
    let row = obj(vec![
        ("type", s("object")),
        ("additionalProperties", Value::Bool(false)),
        ("required", required),
        ("properties", obj(fields)),
    ]);
    obj(vec![
        ("$schema", s("https://json-schema.org/draft/2020-12/schema")),
        ("title", s("freezegate freeze ledger, schema v1")),
        (
            "description",
            s(
                "freeze/ledger.json: rows that excuse a flickering pinned fixture for a bounded time. Generated by freezegate-ledger; do not edit.",
            ),
        ),
        ("type", s("object")),
        ("additionalProperties", Value::Bool(false)),
        ("required", Value::Array(vec![s("schema"), s("rows")])),
        (
            "properties",
            obj(vec![
                ("schema", obj(vec![("const", s(SCHEMA))])),
                (
                    "rows",
                    obj(vec![
                        ("type", s("array")),
                        ("items", obj(vec![("$ref", s("#/$defs/row"))])),
                    ]),
                ),
            ]),
        ),
        ("$defs", obj(vec![("row", row)])),
    ])
}

/// [`json_schema`] rendered like the ledger (two-space indent, trailing newline): the
/// content of `docs/ledger.schema.json`.
pub fn json_schema_text() -> String {
    to_pretty_string(&json_schema())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::ROW_FIELDS;

    #[test]
    fn row_schema_lists_the_rendered_fields_in_order() {
        let names: Vec<&str> = row_fields().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ROW_FIELDS);
    }
}
