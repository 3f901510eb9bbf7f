//! Invariants of canonical form v1, checked with proptest over generated documents.

mod docgen;

use docgen::{Doc, Style, doc, map_strings, render};
use freezegate_canon::{Canonicalization, Int, Position, Value, canonicalize, parse, value_bytes};
use proptest::prelude::*;
use unicode_normalization::UnicodeNormalization;

const FORMS: [Canonicalization; 2] = [Canonicalization::V1, Canonicalization::V1Ordered];

fn style(seed: u64, shuffle: bool) -> Style {
    Style {
        seed,
        shuffle,
        newlines: true,
    }
}

/// A value with every string in NFC and, if `sort`, object members sorted by key: what the
/// canonical bytes of `v` must parse back to.
fn normal(v: &Value, sort: bool) -> Value {
    match v {
        Value::String(s) => Value::String(s.nfc().collect()),
        Value::Array(items) => Value::Array(items.iter().map(|i| normal(i, sort)).collect()),
        Value::Object(members) => {
            let mut m: Vec<(String, Value)> = members
                .iter()
                .map(|(k, v)| (k.nfc().collect(), normal(v, sort)))
                .collect();
            if sort {
                m.sort_by(|a, b| a.0.cmp(&b.0));
            }
            Value::Object(m)
        }
        other => other.clone(),
    }
}

/// Whether some integer of `v` fits neither `i128` nor `u128`.
fn longer_than_128_bits(v: &Value) -> bool {
    match v {
        Value::Int(n) => n.to_i128().is_none() && n.to_u128().is_none(),
        Value::Array(items) => items.iter().any(longer_than_128_bits),
        Value::Object(members) => members.iter().any(|(_, v)| longer_than_128_bits(v)),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn canonical_bytes_are_a_fixpoint(d in doc(), seed in any::<u64>()) {
        let text = render(&d, style(seed, false));
        for form in FORMS {
            let once = canonicalize(text.as_bytes(), form).unwrap();
            let twice = canonicalize(once.bytes(), form).unwrap();
            prop_assert_eq!(once.as_str(), twice.as_str());
        }
    }

    #[test]
    fn key_order_and_whitespace_do_not_change_the_bytes(
        d in doc(),
        a in any::<u64>(),
        b in any::<u64>(),
    ) {
        let one = canonicalize(render(&d, style(a, true)).as_bytes(), Canonicalization::V1).unwrap();
        let two = canonicalize(render(&d, style(b, true)).as_bytes(), Canonicalization::V1).unwrap();
        prop_assert_eq!(one.as_str(), two.as_str());
        // Whitespace and escapes alone do not change the ordered form either.
        let one = canonicalize(render(&d, style(a, false)).as_bytes(), Canonicalization::V1Ordered)
            .unwrap();
        let two = canonicalize(render(&d, style(b, false)).as_bytes(), Canonicalization::V1Ordered)
            .unwrap();
        prop_assert_eq!(one.as_str(), two.as_str());
    }

    #[test]
    fn nfc_and_nfd_spellings_have_the_same_digest(d in doc(), seed in any::<u64>()) {
        let nfc = map_strings(&d, &|s| s.nfc().collect());
        let nfd = map_strings(&d, &|s| s.nfd().collect());
        for form in FORMS {
            let a = canonicalize(render(&nfc, style(seed, false)).as_bytes(), form).unwrap();
            let b = canonicalize(render(&nfd, style(seed, false)).as_bytes(), form).unwrap();
            prop_assert_eq!(a.digest(), b.digest());
        }
    }

    #[test]
    fn the_output_parses_back_to_an_equal_value(d in doc(), seed in any::<u64>()) {
        let text = render(&d, style(seed, true));
        let input = parse(text.as_bytes()).unwrap();
        for form in FORMS {
            let c = canonicalize(text.as_bytes(), form).unwrap();
            let back = parse(c.bytes()).unwrap();
            // v1 sorts members; the ordered variant keeps the input's order.
            prop_assert_eq!(&back, &normal(&input, form == Canonicalization::V1));
        }
    }

    #[test]
    fn the_text_path_and_the_value_path_agree(d in doc(), seed in any::<u64>()) {
        let text = render(&d, style(seed, true));
        let value = parse(text.as_bytes()).unwrap();
        for form in FORMS {
            let streamed = canonicalize(text.as_bytes(), form).unwrap();
            let from_value = value_bytes(&value, form).unwrap();
            prop_assert_eq!(streamed.bytes(), from_value.as_slice());
        }
    }

    #[test]
    fn serde_writes_what_parses_back_to_the_same_value(d in doc(), seed in any::<u64>()) {
        let value = parse(render(&d, style(seed, true)).as_bytes()).unwrap();
        match serde_json::to_vec(&value) {
            // Same members in the same order, same float bits, every digit of every integer.
            Ok(json) => prop_assert_eq!(parse(&json).unwrap(), value),
            // Only an integer past 128 bits refuses, and then serde gets an error, not a float.
            Err(e) => prop_assert!(longer_than_128_bits(&value), "{}", e),
        }
    }

    /// `Display` (compact) and `to_pretty_string` (the layout of meta files and the ledger)
    /// write the value itself, in its own member order, without recursing: either text
    /// parses back to an equal value.
    #[test]
    fn display_and_pretty_text_parse_back_to_the_same_value(d in doc(), seed in any::<u64>()) {
        let value = parse(render(&d, style(seed, true)).as_bytes()).unwrap();
        prop_assert_eq!(&parse(value.to_string().as_bytes()).unwrap(), &value);
        let pretty = freezegate_canon::to_pretty_string(&value);
        prop_assert!(pretty.ends_with('\n'));
        prop_assert_eq!(parse(pretty.as_bytes()).unwrap(), value);
    }

    #[test]
    fn broken_text_fails_the_same_way_on_both_paths(
        d in doc(),
        seed in any::<u64>(),
        cut in any::<prop::sample::Index>(),
        junk in prop::sample::select(vec!["", "]", "}", ",", ":", "\"", "x", "\\", "-", "\u{0}"]),
    ) {
        let text = render(&d, style(seed, false));
        // Cut at a character boundary and splice in a junk token.
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let at = bounds[cut.index(bounds.len())];
        let broken = format!("{}{junk}{}", &text[..at], &text[at..]);
        let streamed = canonicalize(broken.as_bytes(), Canonicalization::V1);
        let parsed = parse(broken.as_bytes());
        match (streamed, parsed) {
            (Ok(c), Ok(v)) => {
                let from_value = value_bytes(&v, Canonicalization::V1).unwrap();
                prop_assert_eq!(c.bytes(), from_value.as_slice());
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            (a, b) => prop_assert!(false, "paths disagree on {broken:?}: {a:?} vs {b:?}"),
        }
    }

    #[test]
    fn integers_are_ordered_by_value(a in any::<i128>(), b in any::<i128>(), zeros in 0usize..60) {
        let (x, y) = (Int::from(a), Int::from(b));
        prop_assert_eq!(x.cmp(&y), a.cmp(&b));
        prop_assert_eq!(x.partial_cmp(&y), Some(a.cmp(&b)));
        // Scaled past 128 bits by the same power of ten, the order stays the value's.
        let scale = |n: i128| -> Int {
            let text = if n == 0 { "0".to_owned() } else { format!("{n}{}", "0".repeat(zeros)) };
            text.parse().expect("decimal text")
        };
        prop_assert_eq!(scale(a).cmp(&scale(b)), a.cmp(&b));
    }

    #[test]
    fn positions_count_lines_and_characters_as_an_editor_does(
        text in "(\\PC|\n|\r|\t){0,80}",
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let bytes = text.as_bytes();
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let mut offsets: Vec<usize> = picks.iter().map(|p| bounds[p.index(bounds.len())]).collect();
        offsets.sort_unstable();
        let swept = Position::at_sorted(bytes, &offsets);
        for (&offset, &pos) in offsets.iter().zip(&swept) {
            // The same place, one offset at a time.
            prop_assert_eq!(Position::at(bytes, offset), pos);
            // Lines split at `\n` only; the column counts characters of that line.
            let lines: Vec<&str> = text[..offset].split('\n').collect();
            prop_assert_eq!(pos.line, lines.len());
            prop_assert_eq!(pos.column, 1 + lines[lines.len() - 1].chars().count());
        }
        // A syntax error reports the same place as Position does.
        if let Err(e) = parse(bytes) {
            prop_assert_eq!(Position::at(bytes, e.offset), Position { line: e.line, column: e.column });
        }
    }
}

#[test]
fn the_generator_makes_documents_of_every_kind() {
    use proptest::strategy::ValueTree;
    fn walk(d: &Doc, kinds: &mut std::collections::BTreeSet<&'static str>) {
        let kind = match d {
            Doc::Null => "null",
            Doc::Bool(_) => "bool",
            Doc::Int(_) => "int",
            Doc::Float(_) => "float",
            Doc::Str(_) => "string",
            Doc::Arr(items) => {
                items.iter().for_each(|i| walk(i, kinds));
                "array"
            }
            Doc::Obj(members) => {
                members.iter().for_each(|(_, v)| walk(v, kinds));
                if members.len() > 16 {
                    kinds.insert("object of more than 16 members");
                }
                // Two keys equal in their first eight bytes (short keys padded with zeros)
                // whose order by length is not their order by code point.
                let head = |k: &str| {
                    let mut b = [0u8; 8];
                    let n = k.len().min(8);
                    b[..n].copy_from_slice(&k.as_bytes()[..n]);
                    b
                };
                let alike = members.iter().any(|(a, _)| {
                    members.iter().any(|(b, _)| {
                        head(a) == head(b) && a.len() < b.len() && a.as_str() > b.as_str()
                    })
                });
                if alike {
                    kinds.insert("keys alike in their first 8 bytes");
                }
                "object"
            }
        };
        kinds.insert(kind);
    }
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..200 {
        walk(&doc().new_tree(&mut runner).unwrap().current(), &mut kinds);
    }
    assert_eq!(kinds.len(), 9, "{kinds:?}");
}
