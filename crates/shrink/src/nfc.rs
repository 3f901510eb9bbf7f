//! NFC as the oracle sees it: canon's own normalisation ([`freezegate_canon::nfc`]).
//!
//! The oracle is handed canonical bytes, where every string is in NFC (SPEC §3). The shrinker
//! keeps its values in that form, so the order "smaller", the character indices of a path
//! step and the one character a step puts in place all mean what the oracle sees. Using
//! canon's normalisation rather than one of its own keeps the shrinker on exactly canon's
//! Unicode tables.

use std::borrow::Cow;

use freezegate_canon::{Value, nfc};

/// Whether `s` is in NFC: the oracle sees exactly these characters.
pub(crate) fn is_nfc(s: &str) -> bool {
    matches!(nfc(s), Cow::Borrowed(_))
}

/// Whether the one character `c` is in NFC on its own. A character that is not (a singleton
/// such as U+212B, a compatibility ideograph, a Hebrew presentation form) is rewritten in any
/// context; one that is may still compose with or reorder against its neighbours.
pub(crate) fn is_nfc_char(c: char) -> bool {
    is_nfc(c.encode_utf8(&mut [0; 4]))
}

/// Whether every string and object key in `value` is in NFC.
pub(crate) fn value_is_nfc(value: &Value) -> bool {
    match value {
        Value::String(s) => is_nfc(s),
        Value::Array(items) => items.iter().all(value_is_nfc),
        Value::Object(members) => members.iter().all(|(k, v)| is_nfc(k) && value_is_nfc(v)),
        _ => true,
    }
}

/// `value` with every string and object key in NFC, members in the same order. For a value
/// that has a canonical form no two keys become equal.
pub(crate) fn normalise(value: &Value) -> Value {
    let text = |s: &String| nfc(s).into_owned();
    match value {
        Value::String(s) => Value::String(text(s)),
        Value::Array(items) => Value::Array(items.iter().map(normalise).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (text(k), normalise(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfc_is_canons() {
        assert!(is_nfc("plain ascii") && is_nfc("\u{e9}") && is_nfc(""));
        assert!(!is_nfc("e\u{301}") && !is_nfc("\u{fa18}") && !is_nfc("\u{212b}"));
        assert_eq!(nfc("\u{fb2a}"), "\u{5e9}\u{5c1}");
        assert!(is_nfc_char('\u{7000}') && is_nfc_char('\u{301}'));
        assert!(!is_nfc_char('\u{fa18}') && !is_nfc_char('\u{2126}'));
        let value = Value::Object(vec![
            ("A\u{30a}".to_owned(), Value::from("\u{fa18}")),
            ("b".to_owned(), Value::Array(vec![Value::from("x")])),
        ]);
        assert!(!value_is_nfc(&value));
        let fixed = normalise(&value);
        assert!(value_is_nfc(&fixed));
        assert_eq!(
            fixed,
            Value::Object(vec![
                ("\u{c5}".to_owned(), Value::from("\u{793c}")),
                ("b".to_owned(), Value::Array(vec![Value::from("x")])),
            ])
        );
    }
}
