//! The edges of the API: errors, the canonical form in options, the budget of zero, the
//! order of deletions, and where each pass leaves a simple value.

use freezegate_canon::{Canonicalization, Value, parse_str, to_canonical_bytes};
use freezegate_shrink::{Options, Params, Pass, ShrinkError, apply_path, shrink};

fn text(v: &Value) -> String {
    String::from_utf8(to_canonical_bytes(v).unwrap()).unwrap()
}

#[test]
fn an_input_without_canonical_form_is_an_error_and_the_oracle_is_never_called() {
    // "e\u0301" and "é" are the same key after NFC.
    let input = Value::Object(vec![
        ("e\u{301}".to_owned(), Value::int(1)),
        ("\u{e9}".to_owned(), Value::int(2)),
    ]);
    let mut called = false;
    let err = shrink(
        &input,
        |_: &Value| {
            called = true;
            true
        },
        &Options::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ShrinkError::Canonical(_)));
    assert_eq!(err.to_string(), "the input has no canonical form");
    assert!(!called);
}

#[test]
fn a_budget_of_zero_returns_the_input_flagged() {
    let input = parse_str("[1, 2, 3]").unwrap();
    let shrunk = shrink(
        &input,
        |_: &Value| true,
        &Options {
            max_calls: 0,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(shrunk.value, input);
    assert!(shrunk.budget_exhausted);
    assert_eq!(shrunk.oracle_calls, 0);
    assert!(shrunk.path.is_empty());
}

#[test]
fn members_go_last_key_first_in_the_canonical_order_of_the_options() {
    // Fails while at least two members remain: the first deletion that is accepted removes
    // the last member in canonical order.
    let input = parse_str(r#"{"b": 1, "c": 2, "a": 3}"#).unwrap();
    let two_left = |v: &Value| matches!(v, Value::Object(m) if m.len() >= 2);
    for (form, kept) in [
        (Canonicalization::V1, r#"{"a":3,"b":1}"#),
        (Canonicalization::V1Ordered, r#"{"b":1,"c":2}"#),
    ] {
        let options = Options {
            canonicalization: form,
            ..Options::default()
        };
        let shrunk = shrink(&input, two_left, &options).unwrap();
        let first = &shrunk.path[0];
        assert_eq!(first.pass(), Pass::Delete);
        assert!(matches!(&first.params, Params::Members { keys } if keys.len() == 1));
        assert_eq!(
            text(&apply_path(&input, &shrunk.path[..1]).unwrap()),
            kept,
            "{form:?}"
        );
    }
}

#[test]
fn each_pass_reaches_its_simplest_value() {
    let cases = [
        // strings shorten to the one character that matters
        (r#"["hello x world"]"#, r#"["x"]"#),
        // floats fall to an integral value, then toward zero
        (r#"[12345.678]"#, r#"[100.0]"#),
        // huge integers fall to the bound
        (
            r#"[123456789012345678901234567890123456789012345678901234567890]"#,
            r#"[100]"#,
        ),
    ];
    for (input, want) in cases {
        let input = parse_str(input).unwrap();
        let fails = |v: &Value| match v {
            Value::Array(items) => items.iter().any(|x| match x {
                Value::String(s) => s.contains('x'),
                Value::Float(f) => f.get() >= 100.0,
                Value::Int(n) => n.to_i64().is_none_or(|n| n >= 100),
                _ => false,
            }),
            _ => false,
        };
        let shrunk = shrink(&input, fails, &Options::default()).unwrap();
        assert_eq!(text(&shrunk.value), want);
        assert!(!shrunk.budget_exhausted);
    }
}
