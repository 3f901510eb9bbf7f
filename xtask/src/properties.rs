//! The Rust properties of this repository, registered for the gate.
//!
//! Each checks one of the workspace's own crates. The gate draws their inputs from the
//! proptest strategies below, seeded from the policy seed, and runs them through the hidden
//! `__freezegate-property` subcommand: a fresh process per replay, like any external oracle.

use std::collections::BTreeMap;

use freezegate_canon::{Canonicalization, canonicalize, parse, value_bytes};
use freezegate_gate::rust_prop::Registry;
use proptest::prelude::*;

/// Documents shaped like fixtures: short keys (some non-ASCII, some not NFC), integers of
/// every size, floats, nested lists.
fn documents() -> impl Strategy<Value = BTreeMap<String, Vec<(i64, f64, String)>>> {
    prop::collection::btree_map(
        "[a-zé\u{301}ß]{0,6}",
        prop::collection::vec(
            (
                any::<i64>(),
                any::<f64>().prop_filter("finite", |x| x.is_finite()),
                "[ -~é\u{301}\u{2028}]{0,8}",
            ),
            0..4,
        ),
        0..5,
    )
}

/// canon: canonical bytes from text equal canonical bytes from the parsed value, and
/// canonicalising canonical bytes changes nothing.
fn text_and_value_agree(doc: &BTreeMap<String, Vec<(i64, f64, String)>>) -> Result<(), String> {
    let text = serde_json::to_vec(doc).map_err(|e| e.to_string())?;
    let from_text = canonicalize(&text, Canonicalization::V1).map_err(|e| e.to_string())?;
    let value = parse(&text).map_err(|e| e.to_string())?;
    let from_value = value_bytes(&value, Canonicalization::V1).map_err(|e| e.to_string())?;
    if from_text.bytes() != from_value.as_slice() {
        return Err("text and value paths disagree".into());
    }
    let again = canonicalize(from_text.bytes(), Canonicalization::V1).map_err(|e| e.to_string())?;
    if again.bytes() != from_text.bytes() {
        return Err("canonical bytes are not a fixpoint".into());
    }
    Ok(())
}

/// This repository's Rust properties.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    // Registration only fails on a malformed or repeated id, which the tests below rule out.
    let _ = registry.property(
        "canon.text_and_value_agree",
        documents(),
        text_and_value_agree,
    );
    registry
}

/// Serves the hidden subcommand: one candidate on stdin (or one per line with
/// `FREEZEGATE_WORKER=1`), the oracle protocol's exit code or answers; with
/// `FREEZEGATE_GENERATE=1`, the campaign inputs for `PROP_SEED` and `PROP_CASES`.
pub fn serve(id: &str) -> u8 {
    registry().serve_stdio(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_property_is_registered_and_holds_on_its_own_inputs() {
        let registry = registry();
        assert_eq!(
            registry.ids().collect::<Vec<_>>(),
            ["canon.text_and_value_agree"]
        );
        for input in registry
            .generate("canon.text_and_value_agree", 20_260_917, 20)
            .unwrap()
        {
            assert_eq!(
                registry.check("canon.text_and_value_agree", &input),
                Some(freezegate_gate::rust_prop::Check::Pass),
                "{input}"
            );
        }
    }
}
