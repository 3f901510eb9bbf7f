//! Campaign generation of Rust properties with strategies that split their randomness off
//! (`prop_perturb`, `prop_shuffle`, `prop_flat_map`) or reject inputs (`prop_filter`): each
//! case is drawn whole, from a source that gives every split a fresh seed, never from zeros
//! of a depleted byte buffer.
#![allow(clippy::unwrap_used)]

use freezegate_canon::Value;
use freezegate_gate::proptest::prelude::*;
use freezegate_gate::rust_prop::Registry;

/// How many items of an array input are the number 0.
fn zeros(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.iter().filter(|x| x.to_string() == "0").count(),
        _ => 0,
    }
}

#[test]
fn a_perturbed_strategy_drawing_many_numbers_gets_no_zero_padding() {
    let mut r = Registry::new();
    r.property(
        "p.perturb",
        any::<u8>().prop_perturb(|_, mut rng| (0..5000).map(|_| rng.next_u64()).collect()),
        |_: &Vec<u64>| Ok(()),
    )
    .unwrap();
    let inputs = r.generate("p.perturb", 1, 2).unwrap();
    for input in &inputs {
        // 5000 uniform u64s hold a zero with probability about 2.7e-16.
        assert_eq!(zeros(input), 0, "the perturbed stream ran dry");
    }
    assert_ne!(inputs[0], inputs[1]);
}

#[test]
fn a_filter_after_a_large_draw_still_sees_random_values() {
    let mut r = Registry::new();
    r.property(
        "p.filter",
        (
            prop::collection::vec(any::<u64>(), 8192),
            any::<u64>().prop_filter("nonzero", |x| *x != 0),
        ),
        |_: &(Vec<u64>, u64)| Ok(()),
    )
    .unwrap();
    let inputs = r.generate("p.filter", 1, 2).unwrap();
    for input in &inputs {
        let Value::Array(pair) = input else {
            panic!("{input}")
        };
        assert_eq!(zeros(&pair[0]), 0, "{input}");
    }
}

#[test]
fn many_shuffled_vectors_are_generated() {
    let mut r = Registry::new();
    r.property(
        "p.shuffled",
        prop::collection::vec(prop::collection::vec(any::<u8>(), 1..5).prop_shuffle(), 40),
        |_: &Vec<Vec<u8>>| Ok(()),
    )
    .unwrap();
    let inputs = r.generate("p.shuffled", 1, 3).unwrap();
    for input in &inputs {
        let Value::Array(rows) = input else {
            panic!("{input}")
        };
        assert_eq!(rows.len(), 40);
        // 40 rows of 1 to 4 uniform bytes, each all zero with probability at most 1/256.
        let zero_rows = rows
            .iter()
            .filter(|row| matches!(row, Value::Array(b) if b.iter().all(|x| x.to_string() == "0")))
            .count();
        assert!(zero_rows < 5, "{zero_rows} all-zero rows: {input}");
    }
}

#[test]
fn flat_mapped_strategies_draw_their_inner_values() {
    let mut r = Registry::new();
    r.property(
        "p.flat",
        (1usize..4).prop_flat_map(|n| prop::collection::vec(any::<u64>(), 300 * n)),
        |_: &Vec<u64>| Ok(()),
    )
    .unwrap();
    for input in r.generate("p.flat", 1, 5).unwrap() {
        assert_eq!(zeros(&input), 0, "{input}");
    }
}

/// A strategy that panics (here an `assert!` in a `prop_map`) is an error of this property's
/// generation, naming where it panicked, as a NaN is: the gate draws in its own process, and
/// a panic there would end the whole run with no report (exit 101).
#[test]
fn a_panicking_strategy_is_a_generation_error() {
    let mut r = Registry::new();
    r.property(
        "p.strategy_panics",
        (0u32..100).prop_map(|n| {
            assert!(n < 10, "a bug in the strategy");
            n
        }),
        |_: &u32| Ok(()),
    )
    .unwrap();
    let error = r.generate("p.strategy_panics", 20_260_917, 50).unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with(
            "generating inputs for p.strategy_panics failed: the strategy panicked at "
        ),
        "{text}"
    );
    assert!(text.contains("rust_prop_generation.rs"), "{text}");
    assert!(text.contains("a bug in the strategy"), "{text}");
    // The hidden subcommand's `FREEZEGATE_GENERATE=1` path reports it too, with exit 1.
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(
        r.serve_generate("p.strategy_panics", 20_260_917, 50, &mut out, &mut err),
        1
    );
    assert!(out.is_empty());
    assert!(String::from_utf8_lossy(&err).contains("a bug in the strategy"));
}

/// A case count as large as `u32::MAX` (from `freezegate.toml`'s `cases` or `PROP_CASES`)
/// reserves no memory up front: here the first draw fails, and the error comes back instead
/// of an abort on a 100-gigabyte allocation.
#[test]
fn a_huge_case_count_is_not_reserved_up_front() {
    let mut r = Registry::new();
    r.property("p.nan", Just(f64::NAN), |_: &f64| Ok(()))
        .unwrap();
    let error = r.generate("p.nan", 1, u32::MAX).unwrap_err();
    assert!(error.to_string().contains("NaN"), "{error}");
}
