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
        &Options::default().with_max_calls(0),
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
        let options = Options::default().with_canonicalization(form);
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
fn an_integer_tries_zero_first() {
    // Every candidate fails: the first integer step tried is the one accepted, and it is 0.
    for input in ["5", "-7", "123456789012345678901234567890"] {
        let input = parse_str(input).unwrap();
        let shrunk = shrink(&input, |_: &Value| true, &Options::default()).unwrap();
        assert_eq!(text(&shrunk.value), "0");
        assert_eq!(shrunk.path.len(), 1, "{:?}", shrunk.path);
        assert_eq!(shrunk.path[0].pass(), Pass::Integer);
        assert_eq!(shrunk.oracle_calls, 1);
    }
}

/// A tiny float that fails by its sign falls to the integral value on its side of zero
/// (`-1.0`, shorter than `-1e-125`), where truncating it toward zero (`-0.0`) passes.
#[test]
fn a_tiny_float_falls_to_the_integral_value_on_its_side_of_zero() {
    for (input, fails, want) in [
        ("[-1e-125]", (|f: f64| f < 0.0) as fn(f64) -> bool, "[-1.0]"),
        ("[-2e-08]", |f| f < 0.0, "[-1.0]"),
        ("[3.5e-200]", |f| f > 0.0, "[1.0]"),
    ] {
        let input = parse_str(input).unwrap();
        let oracle = |v: &Value| match v {
            Value::Array(items) => items
                .iter()
                .any(|x| matches!(x, Value::Float(f) if fails(f.get()))),
            _ => false,
        };
        let shrunk = shrink(&input, oracle, &Options::default()).unwrap();
        assert_eq!(text(&shrunk.value), want, "{input:?}");
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

/// The characters of a value's canonical form, as the oracle sees them.
fn seen(v: &Value) -> Value {
    freezegate_canon::parse(&to_canonical_bytes(v).unwrap()).unwrap()
}

#[test]
fn a_character_step_never_grows_what_the_oracle_sees() {
    // Fails for a one-character string whose code point, after NFC, is at least U+7000.
    // Bisection from U+1F400 once landed on U+FA18, a compatibility ideograph the oracle
    // sees as U+793C, and then took U+7D24: the canonical value grew.
    let fails = |v: &Value| {
        matches!(seen(v), Value::String(s) if s.chars().count() == 1
            && s.chars().next().is_some_and(|c| u32::from(c) >= 0x7000))
    };
    let input = Value::from("\u{1F400}");
    let shrunk = shrink(&input, fails, &Options::default()).unwrap();
    assert_eq!(shrunk.value, Value::from("\u{7000}"));
    let mut last = to_canonical_bytes(&input).unwrap();
    for k in 1..=shrunk.path.len() {
        let step = apply_path(&input, &shrunk.path[..k]).unwrap();
        // What the path records is what the oracle saw, and it is strictly smaller.
        assert_eq!(step, seen(&step), "step {k} records a string NFC rewrites");
        let bytes = to_canonical_bytes(&step).unwrap();
        let (a, b) = (
            String::from_utf8(bytes.clone()).unwrap(),
            String::from_utf8(last.clone()).unwrap(),
        );
        assert!(
            (a.len(), &a) < (b.len(), &b),
            "step {k}: {a} is not smaller than {b}"
        );
        last = bytes;
    }
}

#[test]
fn a_character_step_never_records_a_character_nfc_splits() {
    // U+FB2A (a Hebrew presentation form) is two characters after NFC: a path step must not
    // record it as the one character `to`.
    let fails = |v: &Value| {
        matches!(seen(v), Value::String(s)
            if s.chars().next().is_some_and(|c| u32::from(c) >= 0x500))
    };
    let input = Value::from("\u{1F624}");
    let shrunk = shrink(&input, fails, &Options::default()).unwrap();
    assert_eq!(shrunk.value, Value::from("\u{500}"));
    for k in 1..=shrunk.path.len() {
        let step = apply_path(&input, &shrunk.path[..k]).unwrap();
        assert_eq!(step, seen(&step), "step {k} records a string NFC rewrites");
    }
}

#[test]
fn an_input_not_in_nfc_is_shrunk_in_its_canonical_form() {
    // "e\u{301}zz" is "ézz" to the oracle. The path applies to the canonical origin (the one a
    // fixture's origins/ holds) and gives the result byte for byte.
    let input = Value::Array(vec![Value::from("e\u{301}zz"), Value::from("A\u{30a}")]);
    let fails = |v: &Value| text(v).contains('\u{e9}');
    let shrunk = shrink(&input, fails, &Options::default()).unwrap();
    assert_eq!(text(&shrunk.value), "\"\u{e9}\"");
    assert_eq!(shrunk.value, seen(&shrunk.value));
    let origin = seen(&input);
    assert_eq!(apply_path(&origin, &shrunk.path).unwrap(), shrunk.value);
}

#[test]
fn a_descendant_past_the_first_sixty_four_is_still_tried_before_the_fixpoint() {
    // `[0]*69 + [5]`: fails as `5`, or as a list of 70 whose last element is 5. No deletion,
    // integer or merge step fails; replacing the list by its 70th element does.
    let mut items = vec![Value::int(0); 69];
    items.push(Value::int(5));
    let input = Value::Array(items);
    let fails = |v: &Value| match v {
        Value::Int(n) => n.to_i64() == Some(5),
        Value::Array(items) => items.len() == 70 && items[69] == Value::int(5),
        _ => false,
    };
    let shrunk = shrink(&input, fails, &Options::default()).unwrap();
    assert_eq!(text(&shrunk.value), "5");
    assert!(!shrunk.budget_exhausted);
    assert_eq!(apply_path(&input, &shrunk.path).unwrap(), shrunk.value);

    // The same when a wide sibling comes first in breadth-first order.
    let wide = Value::Array(vec![Value::int(0); 70]);
    let input = Value::Object(vec![
        ("a".to_owned(), wide),
        (
            "b".to_owned(),
            Value::Object(vec![("target".to_owned(), Value::int(5))]),
        ),
    ]);
    let fails = |v: &Value| match v {
        Value::Int(n) => n.to_i64() == Some(5),
        Value::Object(m) => {
            m.len() == 2
                && matches!(v.pointer("/a"), Some(Value::Array(a)) if a.len() == 70)
                && v.pointer("/b/target") == Some(&Value::int(5))
        }
        _ => false,
    };
    let shrunk = shrink(&input, fails, &Options::default()).unwrap();
    assert_eq!(text(&shrunk.value), "5");
}

/// A pass prints as the name a shrink path step gives it.
#[test]
fn a_pass_displays_as_its_path_name() {
    use freezegate_shrink::Pass;
    for pass in [Pass::Delete, Pass::Replace] {
        assert_eq!(pass.to_string(), pass.as_str());
    }
    assert_eq!(Pass::Delete.to_string(), "delete");
}
