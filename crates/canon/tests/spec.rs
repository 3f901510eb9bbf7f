//! SPEC §3 verbatim: the four test vectors, every error case with its line and column, and
//! the edge cases the section names (depth 128/129, long integers, underflow).

use freezegate_canon::{
    Canonicalization, MAX_DEPTH, ParseError, ParseErrorKind as K, canonicalize, parse, value_bytes,
};

/// The vectors of SPEC §3: input, canonical bytes, fixture id.
const VECTORS: [(&str, &str, &str); 4] = [
    (
        r#"{"user_id": 0, "role": ""}"#,
        r#"{"role":"","user_id":0}"#,
        "84a6b2a276edd51b",
    ),
    (
        r#"{"b":1,"a":[1.0,1e16,1e-5,0.0001,-0.0,12345678901234567890123]}"#,
        r#"{"a":[1.0,1e+16,1e-05,0.0001,-0.0,12345678901234567890123],"b":1}"#,
        "01751cc09a4bb8e9",
    ),
    (r#""e\u0301""#, "\"\u{e9}\"", "f2886017e9c7abac"),
    (
        "[1E2, 0.1e1, 1.000, -0]",
        "[100.0,1.0,1.0,0]",
        "a5db5f2ee7687dbb",
    ),
];

#[test]
fn the_spec_vectors_stream_to_their_bytes_and_ids() {
    for (input, bytes, id) in VECTORS {
        let c = canonicalize(input.as_bytes(), Canonicalization::V1).unwrap();
        assert_eq!(c.as_str(), bytes, "{input}");
        assert_eq!(c.fixture_id().to_string(), id, "{input}");
        assert!(c.digest().to_string().starts_with(id));
        assert_eq!(c.digest().to_string().len(), 64);
    }
}

#[test]
fn the_spec_vectors_through_a_value_give_the_same_bytes() {
    for (input, bytes, id) in VECTORS {
        let value = parse(input.as_bytes()).unwrap();
        assert_eq!(
            value_bytes(&value, Canonicalization::V1).unwrap(),
            bytes.as_bytes(),
            "{input}"
        );
        let c = freezegate_canon::canonicalize_value(&value, Canonicalization::V1).unwrap();
        assert_eq!(c.fixture_id().to_string(), id);
    }
}

#[test]
fn the_ordered_variant_keeps_member_order_and_nothing_else_changes() {
    let c = canonicalize(VECTORS[1].0.as_bytes(), Canonicalization::V1Ordered).unwrap();
    assert_eq!(
        c.as_str(),
        r#"{"b":1,"a":[1.0,1e+16,1e-05,0.0001,-0.0,12345678901234567890123]}"#
    );
    let value = parse(VECTORS[0].0.as_bytes()).unwrap();
    assert_eq!(
        value_bytes(&value, Canonicalization::V1Ordered).unwrap(),
        br#"{"user_id":0,"role":""}"#
    );
}

/// Asserts that both the streaming and the value path refuse `input` with `kind` at
/// `line`:`column`, and that the message names them.
fn refused(input: &[u8], kind: K, line: usize, column: usize) {
    for form in [Canonicalization::V1, Canonicalization::V1Ordered] {
        let err: ParseError = canonicalize(input, form).unwrap_err();
        assert_eq!(
            (&err.kind, err.line, err.column),
            (&kind, line, column),
            "canonicalize {:?}",
            String::from_utf8_lossy(input)
        );
        assert!(
            err.to_string()
                .starts_with(&format!("line {line}, column {column}: ")),
            "{err}"
        );
    }
    let err = parse(input).unwrap_err();
    assert_eq!(
        (&err.kind, err.line, err.column),
        (&kind, line, column),
        "parse {:?}",
        String::from_utf8_lossy(input)
    );
}

#[test]
fn invalid_json_is_refused_where_it_goes_wrong() {
    refused(b"", K::UnexpectedEnd, 1, 1);
    refused(b"   \n ", K::UnexpectedEnd, 2, 2);
    refused(b"{\"a\" 1}", K::UnexpectedChar('1'), 1, 6);
    refused(b"[1,\n 2,]", K::UnexpectedChar(']'), 2, 4);
    refused(b"{\"a\":1,}", K::UnexpectedChar('}'), 1, 8);
    refused(b"{'a':1}", K::UnexpectedChar('\''), 1, 2);
    refused(b"[tru]", K::UnexpectedChar('t'), 1, 2);
    refused(b"[01]", K::UnexpectedChar('1'), 1, 3);
    refused(b"[1.]", K::UnexpectedChar('.'), 1, 3);
    refused(b"[-]", K::InvalidNumber, 1, 3);
    refused(b"[.5]", K::UnexpectedChar('.'), 1, 2);
    refused(b"[+1]", K::UnexpectedChar('+'), 1, 2);
    refused(
        b"[\"\xc3\xa9\", \xc3\xa9]",
        K::UnexpectedChar('\u{e9}'),
        1,
        7,
    );
    refused(b"\"abc", K::UnexpectedEnd, 1, 5);
    refused(b"[\"a\tb\"]", K::ControlCharacter(9), 1, 4);
    refused(b"[\"a\\x\"]", K::InvalidEscape, 1, 4);
    refused(b"[\"\\u12G4\"]", K::InvalidEscape, 1, 3);
}

#[test]
fn invalid_utf8_is_refused() {
    refused(b"[\"a\xff\"]", K::InvalidUtf8, 1, 4);
    refused(b"[1,\n\"\xc3\"]", K::InvalidUtf8, 2, 2);
    // An encoded surrogate (CESU-8) is not UTF-8 either.
    refused(b"\"\xed\xa0\x80\"", K::InvalidUtf8, 1, 2);
    // Outside a string, and in a key.
    refused(b"[1, \xff]", K::InvalidUtf8, 1, 5);
    refused(b"{\"k\xc3\": 1}", K::InvalidUtf8, 1, 4);
    // The encoding is checked as a whole first, as if the text were decoded before parsing:
    // invalid UTF-8 after a syntax error is still what is reported.
    refused(b"[1,,\"\xff\"]", K::InvalidUtf8, 1, 6);
    refused(b"[1] \xff", K::InvalidUtf8, 1, 5);
}

#[test]
fn trailing_data_is_refused() {
    refused(b"[1] [2]", K::TrailingData, 1, 5);
    refused(b"{}\n\nx", K::TrailingData, 3, 1);
    refused(b"1 2", K::TrailingData, 1, 3);
}

#[test]
fn duplicate_keys_are_refused_in_the_input_and_after_nfc() {
    refused(
        br#"{"a":1,"b":2,"a":3}"#,
        K::DuplicateKey("a".into()),
        1,
        14,
    );
    refused(
        b"{\"x\": {\"k\": 1,\n  \"k\": 1}}",
        K::DuplicateKey("k".into()),
        2,
        3,
    );
    // "\u00e9" and "e\u0301" are the same key after NFC.
    refused(
        br#"{"\u00e9": 1, "e\u0301": 2}"#,
        K::DuplicateKeyAfterNfc("\u{e9}".into()),
        1,
        15,
    );
    refused(
        "{\"e\u{301}\": 1, \"\u{e9}\": 2}".as_bytes(),
        K::DuplicateKeyAfterNfc("\u{e9}".into()),
        1,
        11,
    );
}

#[test]
fn non_finite_numbers_are_refused() {
    refused(b"NaN", K::NonFinite("NaN"), 1, 1);
    refused(b"[1, Infinity]", K::NonFinite("Infinity"), 1, 5);
    refused(b"{\"a\": -Infinity}", K::NonFinite("-Infinity"), 1, 7);
}

#[test]
fn float_literals_that_overflow_are_refused() {
    refused(b"[1e400]", K::FloatOverflow, 1, 2);
    refused(b"[0, -1.8e308]", K::FloatOverflow, 1, 5);
    let big = format!("[{}.0]", "9".repeat(400));
    refused(big.as_bytes(), K::FloatOverflow, 1, 2);
}

#[test]
fn lone_surrogate_escapes_are_refused() {
    refused(br#"["\ud800"]"#, K::LoneSurrogate(0xd800), 1, 3);
    refused(br#"["ab\udfff"]"#, K::LoneSurrogate(0xdfff), 1, 5);
    refused(br#"["\ud800\u0041"]"#, K::LoneSurrogate(0xd800), 1, 3);
    refused(br#"{"\udc00\ud800": 1}"#, K::LoneSurrogate(0xdc00), 1, 3);
    // A proper pair is one astral character.
    let c = canonicalize(br#""\ud83d\ude00""#, Canonicalization::V1).unwrap();
    assert_eq!(c.as_str(), "\"\u{1f600}\"");
}

fn nested(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth {
        s.push_str(if i % 2 == 0 { "[" } else { "{\"k\":" });
    }
    s.push('0');
    for i in (0..depth).rev() {
        s.push(if i % 2 == 0 { ']' } else { '}' });
    }
    s
}

#[test]
fn nesting_of_128_is_accepted_and_129_refused() {
    assert_eq!(MAX_DEPTH, 128);
    let ok = nested(128);
    let c = canonicalize(ok.as_bytes(), Canonicalization::V1).unwrap();
    assert_eq!(c.as_str(), ok.replace(' ', ""));
    let value = parse(ok.as_bytes()).unwrap();
    assert_eq!(
        value_bytes(&value, Canonicalization::V1).unwrap(),
        ok.as_bytes()
    );
    // The 129th opening bracket is at offset 128 when all are arrays.
    refused("[".repeat(129).as_bytes(), K::TooDeep(MAX_DEPTH), 1, 129);
    let deep = nested(129);
    let at = deep.rfind(['[', '{']).unwrap();
    refused(deep.as_bytes(), K::TooDeep(MAX_DEPTH), 1, at + 1);
    // Far deeper input fails the same way instead of overflowing the stack.
    refused(
        "[".repeat(1_000_000).as_bytes(),
        K::TooDeep(MAX_DEPTH),
        1,
        129,
    );
}

#[test]
fn a_value_nested_too_deep_has_no_canonical_bytes() {
    let mut value = freezegate_canon::Value::Null;
    for _ in 0..129 {
        value = freezegate_canon::Value::Array(vec![value]);
    }
    assert_eq!(
        value_bytes(&value, Canonicalization::V1),
        Err(freezegate_canon::ValueError::TooDeep(MAX_DEPTH))
    );
}

#[test]
fn a_byte_order_mark_is_refused() {
    refused(b"\xef\xbb\xbf{}", K::ByteOrderMark, 1, 1);
}

#[test]
fn utf16_and_utf32_input_is_refused() {
    refused(b"\xff\xfe[\x001\x00]\x00", K::Utf16, 1, 1);
    refused(b"\xfe\xff\x00[\x001\x00]", K::Utf16, 1, 1);
    refused(b"[\x001\x00]\x00", K::Utf16, 1, 1);
    refused(b"\x00[\x001\x00]", K::Utf16, 1, 1);
    refused(b"[\x00\x00\x001\x00\x00\x00]\x00\x00\x00", K::Utf16, 1, 1);
}

#[test]
fn integers_of_thousands_of_digits_keep_every_digit() {
    for digits in [
        "1",
        "12345678901234567890123",
        &"9".repeat(5000),
        &"1234567".repeat(1500),
    ] {
        for sign in ["", "-"] {
            let text = format!("[{sign}{digits}]");
            let c = canonicalize(text.as_bytes(), Canonicalization::V1).unwrap();
            assert_eq!(c.as_str(), text);
            let value = parse(text.as_bytes()).unwrap();
            assert_eq!(
                value_bytes(&value, Canonicalization::V1).unwrap(),
                text.as_bytes()
            );
        }
    }
    let c = canonicalize(b"[-0, 0, -0.0, 0.0]", Canonicalization::V1).unwrap();
    assert_eq!(c.as_str(), "[0,0,-0.0,0.0]");
}

#[test]
fn float_literals_that_underflow_are_zero_with_their_sign() {
    let c = canonicalize(
        b"[1e-400, -1e-400, 0e999999, 2.4e-324, 2.5e-324]",
        Canonicalization::V1,
    )
    .unwrap();
    assert_eq!(c.as_str(), "[0.0,-0.0,0.0,0.0,5e-324]");
    let value = parse(b"[1e-400, -1e-400]").unwrap();
    assert_eq!(
        value_bytes(&value, Canonicalization::V1).unwrap(),
        b"[0.0,-0.0]"
    );
}

#[test]
fn floats_print_as_python_repr() {
    let cases = [
        ("1e16", "1e+16"),
        ("9999999999999998", "9999999999999998"),
        ("9999999999999998.0", "9999999999999998.0"),
        ("1e15", "1000000000000000.0"),
        ("123456789012345678.0", "1.2345678901234568e+17"),
        ("0.0001", "0.0001"),
        ("0.00001", "1e-05"),
        ("0.00012345", "0.00012345"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("5e-324", "5e-324"),
        ("2.2250738585072014e-308", "2.2250738585072014e-308"),
        ("0.1", "0.1"),
        ("1.5", "1.5"),
        ("-2.5E-3", "-0.0025"),
        ("1e22", "1e+22"),
        ("1.0e100", "1e+100"),
        ("123.456e-7", "1.23456e-05"),
        ("0.30000000000000004", "0.30000000000000004"),
        // Ties between two shortest candidates go to the even digit, as in Python.
        ("1923475993847032.25", "1923475993847032.2"),
        ("992380462925747.25", "992380462925747.2"),
        ("1384162734604397.25", "1384162734604397.2"),
        ("1923475993847032.75", "1923475993847032.8"),
        ("-992380462925747.75", "-992380462925747.8"),
    ];
    for (input, repr) in cases {
        let text = format!("[{input}]");
        let c = canonicalize(text.as_bytes(), Canonicalization::V1).unwrap();
        assert_eq!(c.as_str(), format!("[{repr}]"), "{input}");
    }
}

#[test]
fn only_quote_backslash_and_c0_controls_are_escaped() {
    let c = canonicalize(
        br#"["\u0000\u0001\b\t\n\u000b\f\r\u001f \u007f\u2028\u2029\/\"\\\u00e9\ud83d\ude00"]"#,
        Canonicalization::V1,
    )
    .unwrap();
    assert_eq!(
        c.as_str(),
        "[\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \u{7f}\u{2028}\u{2029}/\\\"\\\\\u{e9}\u{1f600}\"]"
    );
}

#[test]
fn keys_sort_by_code_point_after_nfc() {
    // Code points compare as numbers (UTF-16 order would put U+1F600 before U+FF21).
    let c = canonicalize(
        "{\"\u{1f600}\":1,\"\u{ff21}\":2,\"b\":3,\"B\":4,\"e\u{301}\":5,\"f\":6}".as_bytes(),
        Canonicalization::V1,
    )
    .unwrap();
    assert_eq!(
        c.as_str(),
        "{\"B\":4,\"b\":3,\"f\":6,\"\u{e9}\":5,\"\u{ff21}\":2,\"\u{1f600}\":1}"
    );
}

#[test]
fn keys_that_share_their_first_eight_bytes_sort_by_code_point() {
    // Past the first eight bytes the order is still code point order, not length: in both
    // a small object and one of more than sixteen members, on the text and the value path.
    let small = [
        "abcdefghZ",
        "abcdefghAA",
        "abc\u{0}",
        "abc",
        "\u{e9}\u{e9}\u{e9}\u{e9}b",
        "\u{e9}\u{e9}\u{e9}\u{e9}aa",
    ];
    let large: Vec<String> = (0..24)
        .rev()
        .map(|i| format!("abcdefgh{}", "z".repeat(i % 5) + &"a".repeat(i / 5)))
        .collect();
    let large: Vec<&str> = large.iter().map(String::as_str).collect();
    for keys in [&small[..], &large[..]] {
        let members: Vec<String> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| format!("{}:{i}", escaped(k)))
            .collect();
        let input = format!("{{{}}}", members.join(","));
        let mut sorted: Vec<(&str, usize)> = keys.iter().copied().zip(0..).collect();
        sorted.sort();
        let members: Vec<String> = sorted
            .iter()
            .map(|(k, i)| format!("{}:{i}", escaped(k)))
            .collect();
        let want = format!("{{{}}}", members.join(","));
        let c = canonicalize(input.as_bytes(), Canonicalization::V1).unwrap();
        assert_eq!(c.as_str(), want, "{input}");
        let value = parse(input.as_bytes()).unwrap();
        let bytes = value_bytes(&value, Canonicalization::V1).unwrap();
        assert_eq!(String::from_utf8(bytes).unwrap(), want, "{input}");
    }
}

/// `key` as a canonical JSON string (only the escapes these keys need).
fn escaped(key: &str) -> String {
    format!("\"{}\"", key.replace('\u{0}', "\\u0000"))
}

#[test]
fn the_crate_docs_name_the_unicode_version_in_use() {
    let (major, minor, update) = freezegate_canon::UNICODE_VERSION;
    let docs = include_str!("../src/lib.rs").replace("\n//! ", " ");
    let named = format!("Unicode {major}.{minor}.{update} in the version this workspace locks");
    assert!(docs.contains(&named), "lib.rs must say {named:?}");
    // The README, which users of Python harnesses read, names it too.
    let readme = include_str!("../../../README.md").replace('\n', " ");
    let named = format!("NFC follows Unicode {major}.{minor}.{update}");
    assert!(readme.contains(&named), "README.md must say {named:?}");
}

#[test]
fn nfc_is_the_normalisation_canonical_bytes_use() {
    use std::borrow::Cow;
    assert_eq!(freezegate_canon::nfc("e\u{301}"), "\u{e9}");
    assert!(matches!(freezegate_canon::nfc("\u{e9}"), Cow::Borrowed(_)));
    assert!(matches!(freezegate_canon::nfc("plain"), Cow::Borrowed(_)));
    // The same text, through canonical bytes.
    let bytes = freezegate_canon::canonical_bytes("\"\u{fb2a}\"".as_bytes()).unwrap();
    assert_eq!(
        bytes,
        format!("\"{}\"", freezegate_canon::nfc("\u{fb2a}")).into_bytes()
    );
}

/// Takes `value` apart one level at a time: dropping a value nested deeper than the stack
/// would recurse.
fn dismantle(value: freezegate_canon::Value) {
    use freezegate_canon::Value;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// `depth` arrays and objects (`{"k": …}`) in turn around `null`, built without recursion.
fn nested_value(depth: usize) -> freezegate_canon::Value {
    let mut value = freezegate_canon::Value::Null;
    for i in 0..depth {
        value = if i % 2 == 0 {
            freezegate_canon::Value::Array(vec![value])
        } else {
            freezegate_canon::Value::Object(vec![("k".to_owned(), value)])
        };
    }
    value
}

/// Runs `f` on a thread whose stack is `bytes` long, as the default 2 MiB of a spawned
/// thread or smaller.
fn on_a_stack_of<T: Send + 'static>(bytes: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(bytes)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// A value built in code can nest deeper than any stack (and than `MAX_DEPTH`): `Display`
/// prints it whole; `Serialize` is an error that names the limit (for `to_value`, its own
/// `TooDeep`), as canonical bytes are; neither overflows a 2 MiB stack.
#[test]
fn a_value_nested_200_000_deep_displays_and_fails_to_serialize_without_overflow() {
    const DEPTH: usize = 200_000;
    let (text, serialized, converted, bytes) = on_a_stack_of(2 << 20, || {
        let value = nested_value(DEPTH);
        let out = (
            value.to_string(),
            serde_json::to_string(&value).map_err(|e| e.to_string()),
            freezegate_canon::to_value(&value).map(dismantle),
            value_bytes(&value, Canonicalization::V1),
        );
        dismantle(value);
        out
    });
    let expected: String = (0..DEPTH)
        .rev()
        .map(|i| if i % 2 == 0 { "[" } else { "{\"k\":" })
        .chain(["null"])
        .chain((0..DEPTH).map(|i| if i % 2 == 0 { "]" } else { "}" }))
        .collect();
    assert!(text == expected, "the text of the deep value differs");
    assert_eq!(
        serialized,
        Err(format!(
            "a value nested deeper than {MAX_DEPTH} arrays/objects cannot be serialized"
        ))
    );
    assert_eq!(
        converted,
        Err(freezegate_canon::ValueError::TooDeep(MAX_DEPTH))
    );
    assert_eq!(bytes, Err(freezegate_canon::ValueError::TooDeep(MAX_DEPTH)));
    // At the limit, it serialises.
    let at_limit = nested_value(MAX_DEPTH);
    assert_eq!(
        serde_json::to_string(&at_limit).unwrap(),
        at_limit.to_string()
    );
}

/// The pretty layout (meta files, the ledger) is written without recursion too: a deep value
/// renders on a stack far smaller than its depth would need, with one line per bracket.
#[test]
fn a_deep_value_renders_pretty_on_a_small_stack() {
    const DEPTH: usize = 3_000;
    let text = on_a_stack_of(64 << 10, || {
        let value = nested_value(DEPTH);
        let text = freezegate_canon::to_pretty_string(&value);
        dismantle(value);
        text
    });
    assert_eq!(text.lines().count(), 2 * DEPTH + 1);
    assert!(
        text.starts_with("{\n  \"k\": [\n    {\n      \"k\": ["),
        "{}",
        &text[..40]
    );
    assert!(text.ends_with("\n  ]\n}\n"));
    let middle = format!("\n{}null\n", " ".repeat(2 * DEPTH));
    assert!(text.contains(&middle));
}
