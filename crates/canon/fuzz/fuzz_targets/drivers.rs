//! The two drivers of `freezegate-canon` agree on every input: canonical bytes streamed from
//! the text and canonical bytes of the parsed `Value` are the same bytes, in both forms, or the
//! same error at the same place. What either produces is a fixpoint.
//!
//! The streaming driver takes many shortcuts (literals copied as their own canonical form,
//! members put in key order over their own bytes, NFC skipped for text known to be in NFC);
//! the value path takes none, so a shortcut that goes wrong shows up here as a disagreement.

#![no_main]

use freezegate_canon::{Canonicalization, canonicalize, parse, to_pretty_string, value_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = parse(data);
    // The value's own writers (compact `Display`, the pretty layout of meta files and the
    // ledger) give text that parses back to the same value.
    if let Ok(value) = &parsed {
        let compact = value.to_string();
        assert_eq!(parse(compact.as_bytes()).as_ref(), Ok(value), "Display");
        let pretty = to_pretty_string(value);
        assert_eq!(parse(pretty.as_bytes()).as_ref(), Ok(value), "pretty");
    }
    for form in [Canonicalization::V1, Canonicalization::V1Ordered] {
        let streamed = canonicalize(data, form);
        match (&streamed, &parsed) {
            (Ok(c), Ok(value)) => {
                let from_value =
                    value_bytes(value, form).expect("a parsed value has a canonical form");
                assert_eq!(
                    c.bytes(),
                    from_value.as_slice(),
                    "drivers disagree, {form:?}"
                );
                // Canonical bytes are canonical text whose canonical bytes are themselves.
                let again = canonicalize(c.bytes(), form).expect("canonical bytes parse");
                assert_eq!(again.bytes(), c.bytes(), "not a fixpoint, {form:?}");
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "drivers fail differently, {form:?}");
                assert!(
                    a.offset <= data.len() && a.line >= 1 && a.column >= 1,
                    "{a:?}"
                );
            }
            (a, b) => panic!("drivers disagree, {form:?}: {a:?} vs {b:?}"),
        }
    }
});
