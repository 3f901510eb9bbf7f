//! The JSON Schemas of the gate's JSON report (`docs/gate-report.schema.json`) and of its
//! error document (`docs/gate-error.schema.json`), and a small validator for the subset of
//! JSON Schema they use, so tests can hold every document the gate writes to its schema.

use serde_json::{Value, json};

use crate::report::REPORT_FORMAT;

fn string() -> Value {
    json!({"type": "string"})
}

fn opt_string() -> Value {
    json!({"type": ["string", "null"]})
}

fn uint() -> Value {
    json!({"type": "integer", "minimum": 0})
}

fn object(required: &[(&str, Value)]) -> Value {
    let props: serde_json::Map<String, Value> = required
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    let names: Vec<&str> = required.iter().map(|(k, _)| *k).collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": names,
        "properties": props,
    })
}

fn labels() -> Value {
    json!({
        "type": "array",
        "items": {"enum": ["assert_pass", "assert_fail", "timeout", "harness_error"]},
    })
}

fn freeze() -> Value {
    object(&[
        ("property_id", string()),
        ("fixture_id", string()),
        ("env_class", json!({"enum": ["local", "remote"]})),
        ("owner", string()),
        ("reason", string()),
        ("expires_at", string()),
    ])
}

/// The JSON Schema (draft 2020-12) of the report `xtask gate --format json` prints.
pub fn report_schema() -> Value {
    let settings = object(&[
        ("seed", uint()),
        ("replays", uint()),
        ("jobs", uint()),
        ("env_class", json!({"enum": ["local", "remote"]})),
        ("runner_id", string()),
        ("now", string()),
        ("patch_id", string()),
        (
            "properties",
            json!({"type": "array", "items": object(&[
                ("id", string()),
                ("oracle", json!({"enum": ["command", "worker", "rust"]})),
                ("cases", uint()),
                ("timeout_ms", uint()),
                ("replays", uint()),
            ])}),
        ),
        ("overrides", json!({"type": "array", "items": string()})),
        ("ledger_active", uint()),
        ("ledger_expired", uint()),
        ("rust_runner", opt_string()),
    ]);
    let fixture = object(&[
        ("property_id", string()),
        ("fixture_id", string()),
        ("path", string()),
        ("labels", labels()),
        (
            "verdict",
            json!({"enum": ["reject_malformed", "infra_queue", "block_patch", "not_reproduced", "freeze_eligible"]}),
        ),
        (
            "status",
            json!({"enum": ["pass", "regression", "flicker", "frozen", "infra"]}),
        ),
        ("freeze", json!({"anyOf": [freeze(), {"type": "null"}]})),
        ("note", opt_string()),
        ("signature", opt_string()),
        ("duration_ms", uint()),
    ]);
    let campaign = object(&[
        ("property_id", string()),
        ("cases", uint()),
        ("cases_run", uint()),
        (
            "status",
            json!({"enum": ["pass", "failure", "infra", "no_generator"]}),
        ),
        ("blocking", json!({"type": "boolean"})),
        (
            "failing_case",
            json!({"type": ["integer", "null"], "minimum": 0}),
        ),
        (
            "action",
            json!({"enum": ["no_failure", "pin_fixture", "freeze_after_pin", "pin_origin", "drop_nonreproducible", "infra_queue", "already_pinned", null]}),
        ),
        ("fixture_id", opt_string()),
        ("minimal", opt_string()),
        ("labels", labels()),
        ("signature", opt_string()),
        ("already_pinned", json!({"type": "boolean"})),
        ("trivial", json!({"type": "boolean"})),
        ("oracle_calls", uint()),
        ("shrinks", uint()),
        ("note", opt_string()),
        ("infra", opt_string()),
        ("duration_ms", uint()),
    ]);
    let finding = object(&[
        (
            "kind",
            json!({"enum": ["config", "ledger", "integrity", "patch", "campaign"]}),
        ),
        ("blocking", json!({"type": "boolean"})),
        ("file", opt_string()),
        ("line", json!({"type": ["integer", "null"], "minimum": 0})),
        ("column", json!({"type": ["integer", "null"], "minimum": 0})),
        ("rule", string()),
        ("message", string()),
    ]);
    let patch = object(&[
        ("base", string()),
        ("commits", uint()),
        (
            "ledger_diff",
            json!({"type": "array", "items": object(&[
                ("change", json!({"enum": ["added", "removed", "changed"]})),
                ("property_id", string()),
                ("fixture_id", string()),
                ("seed", string()),
                ("env_class", json!({"enum": ["local", "remote"]})),
                ("owner", string()),
                ("expires_at", string()),
                ("fields", json!({"type": "array", "items": string()})),
            ])}),
        ),
        (
            "settings_diff",
            json!({"type": "array", "items": object(&[
                ("key", string()),
                ("base", opt_string()),
                ("head", opt_string()),
                ("weakens", json!({"type": "boolean"})),
            ])}),
        ),
    ]);
    let mut schema = object(&[
        ("format", json!({"const": REPORT_FORMAT})),
        ("settings", settings),
        ("fixtures", json!({"type": "array", "items": fixture})),
        ("campaigns", json!({"type": "array", "items": campaign})),
        ("findings", json!({"type": "array", "items": finding})),
        ("expired_rows", json!({"type": "array", "items": freeze()})),
        ("patch", json!({"anyOf": [patch, {"type": "null"}]})),
        (
            "decision",
            object(&[
                ("outcome", json!({"enum": ["pass", "blocked", "infra"]})),
                ("exit_code", json!({"enum": [0, 1, 2, 3]})),
            ]),
        ),
        (
            "summary",
            object(&[
                ("regressions", uint()),
                ("unfrozen_flickers", uint()),
                ("frozen", uint()),
                ("infra", uint()),
                ("new_failures", uint()),
                ("blocking_findings", uint()),
                ("warnings", uint()),
                ("fixtures", uint()),
                ("replays", uint()),
                ("duration_ms", uint()),
            ]),
        ),
    ]);
    if let Value::Object(map) = &mut schema {
        let mut head = serde_json::Map::new();
        head.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        head.insert("$id".into(), json!("freezegate-gate-report-v1"));
        head.insert(
            "title".into(),
            json!("The JSON report of `cargo xtask gate --format json`"),
        );
        head.extend(std::mem::take(map));
        *map = head;
    }
    schema
}

/// The committed text of `docs/gate-report.schema.json`.
pub fn report_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&report_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// The JSON Schema (draft 2020-12) of the document `xtask gate --format json` prints when
/// the gate cannot run at all (exit 3), format [`crate::render::ERROR_FORMAT`].
pub fn error_schema() -> Value {
    let place = json!({"type": ["integer", "null"], "minimum": 1});
    let mut schema = object(&[
        ("format", json!({"const": crate::render::ERROR_FORMAT})),
        ("exit_code", json!({"const": crate::report::exit::USAGE})),
        ("error", string()),
        ("file", opt_string()),
        ("line", place.clone()),
        ("column", place),
    ]);
    if let Value::Object(map) = &mut schema {
        let mut head = serde_json::Map::new();
        head.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        head.insert("$id".into(), json!(crate::render::ERROR_FORMAT));
        head.insert(
            "title".into(),
            json!("The error document of `cargo xtask gate --format json` (exit 3)"),
        );
        head.extend(std::mem::take(map));
        *map = head;
    }
    schema
}

/// The committed text of `docs/gate-error.schema.json`.
pub fn error_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&error_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// Checks `value` against `schema` for the keywords [`report_schema`] uses (`type`,
/// `properties`, `required`, `additionalProperties: false`, `items`, `enum`, `const`,
/// `anyOf`, `minimum`) and returns every problem, each with its JSON pointer.
pub fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    check(schema, value, "", &mut problems);
    problems
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        _ => false,
    }
}

fn check(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        let ok = any.iter().any(|s| {
            let mut p = Vec::new();
            check(s, value, at, &mut p);
            p.is_empty()
        });
        if !ok {
            problems.push(format!("{at}: matches none of anyOf"));
        }
        return;
    }
    if let Some(t) = schema.get("type") {
        let ok = match t {
            Value::String(name) => type_matches(name, value),
            Value::Array(names) => names
                .iter()
                .filter_map(Value::as_str)
                .any(|n| type_matches(n, value)),
            _ => true,
        };
        if !ok {
            problems.push(format!("{at}: expected type {t}, got {value}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        problems.push(format!(
            "{at}: {value} is not one of {}",
            Value::Array(allowed.clone())
        ));
    }
    if let Some(c) = schema.get("const")
        && c != value
    {
        problems.push(format!("{at}: expected {c}, got {value}"));
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_i64),
        value.as_i64(),
    ) && n < min
    {
        problems.push(format!("{at}: {n} is below {min}"));
    }
    if let Value::Object(members) = value {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    problems.push(format!("{at}: missing {name}"));
                }
            }
        }
        for (k, v) in members {
            let path = format!("{at}/{k}");
            match props.and_then(|p| p.get(k)) {
                Some(s) => check(s, v, &path, problems),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    problems.push(format!("{path}: not in the schema"));
                }
                None => {}
            }
        }
    }
    if let (Value::Array(items), Some(s)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(s, item, &format!("{at}/{i}"), problems);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_document_holds_to_its_schema_with_its_keys_in_order() {
        let place = crate::render::ErrorPlace {
            file: "freezegate.toml".into(),
            line: Some(2),
            column: Some(11),
        };
        for place in [Some(&place), None] {
            let text = crate::render::error_json("freezegate.toml: bad", place);
            let value: Value = serde_json::from_str(&text).unwrap();
            let problems = validate(&error_schema(), &value);
            assert!(problems.is_empty(), "{problems:?}\n{text}");
            // serde_json's map sorts its keys: read the order from the text itself.
            let keys: Vec<&str> = text
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix('"'))
                .filter_map(|l| l.split_once("\":").map(|(k, _)| k))
                .collect();
            assert_eq!(
                keys,
                ["format", "exit_code", "error", "file", "line", "column"],
                "{text}"
            );
        }
    }

    #[test]
    fn the_validator_catches_what_the_schema_forbids() {
        let schema = report_schema();
        let problems = validate(&schema, &json!({"format": "other", "extra": 1}));
        assert!(
            problems.iter().any(|p| p.contains("/format")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("/extra: not in the schema")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("missing settings")),
            "{problems:?}"
        );
    }
}
