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

#[test]
fn characters_move_toward_zero_keeping_what_the_failure_needs() {
    type Needs = fn(&str) -> bool;
    let cases: [(&str, Needs, &str); 6] = [
        // Any character will do: "0", whatever the generator drew.
        ("\u{10C30}\u{1F600}", |s| !s.is_empty(), "0"),
        // A non-ASCII character: the lowest one.
        ("z\u{e9}\u{1F600}", |s| !s.is_ascii(), "\u{80}"),
        // A letter: "A", then nothing below it is a letter.
        ("\u{dc}ber", |s| s.chars().any(char::is_alphabetic), "A"),
        // A lowercase letter: "a".
        ("\u{df}", |s| s.chars().any(char::is_lowercase), "a"),
        // Two characters in order: each falls as far as the order allows.
        (
            "\u{3a9}\u{3b1}",
            |s| s.chars().count() == 2 && s.chars().next() < s.chars().nth(1),
            "01",
        ),
        // A control character (escaped, six bytes) becomes a plain one.
        ("\u{1}", |s| !s.is_empty(), "0"),
    ];
    for (input, needs, want) in cases {
        let input = Value::Array(vec![Value::from(input)]);
        let fails = |v: &Value| match v {
            Value::Array(items) => items
                .iter()
                .any(|x| matches!(x, Value::String(s) if needs(s))),
            _ => false,
        };
        let shrunk = shrink(&input, fails, &Options::default()).unwrap();
        assert_eq!(
            shrunk.value,
            Value::Array(vec![Value::from(want)]),
            "{input:?}"
        );
        // Each character step is in the path, and the path re-applied gives the value.
        assert!(
            shrunk
                .path
                .iter()
                .all(|s| s.pass() != Pass::String || s.pointer == "/0"),
            "{:?}",
            shrunk.path
        );
        assert_eq!(apply_path(&input, &shrunk.path).unwrap(), shrunk.value);
    }
}
