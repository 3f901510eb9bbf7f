//! The shrinker's invariants, as properties over generated values and generated oracles:
//! the result still fails, is never larger, is 1-minimal unless the budget ran out, is
//! deterministic, re-applies from its path, and no canonical candidate is asked twice.

use std::collections::BTreeSet;

use freezegate_canon::{Canonicalization, Float, Int, Value, to_canonical_bytes, value_bytes};
use freezegate_shrink::{Options, Shrunk, apply_path, path_from_value, path_to_value, shrink};
use proptest::prelude::*;

/// A generated oracle: the property fails when …
#[derive(Debug, Clone)]
enum Oracle {
    /// … some integer is at least `k`.
    IntAtLeast(i64),
    /// … some array has at least `m` elements.
    ArrayAtLeast(usize),
    /// … some string contains `x`.
    StringWithX,
    /// … some string contains a letter (any script).
    StringWithLetter,
    /// … both.
    Both(Box<Oracle>, Box<Oracle>),
}

fn any_node(v: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    pred(v)
        || match v {
            Value::Array(items) => items.iter().any(|x| any_node(x, pred)),
            Value::Object(members) => members.iter().any(|(_, x)| any_node(x, pred)),
            _ => false,
        }
}

impl Oracle {
    fn fails(&self, v: &Value) -> bool {
        match self {
            Oracle::IntAtLeast(k) => any_node(v, &|x| match x {
                Value::Int(n) => n.to_i64().map_or(!n.is_negative(), |n| n >= *k),
                _ => false,
            }),
            Oracle::ArrayAtLeast(m) => any_node(
                v,
                &|x| matches!(x, Value::Array(items) if items.len() >= *m),
            ),
            Oracle::StringWithX => {
                any_node(v, &|x| matches!(x, Value::String(s) if s.contains('x')))
            }
            Oracle::StringWithLetter => any_node(
                v,
                &|x| matches!(x, Value::String(s) if s.chars().any(char::is_alphabetic)),
            ),
            Oracle::Both(a, b) => a.fails(v) && b.fails(v),
        }
    }

    /// A value that makes the oracle fail.
    fn witness(&self) -> Value {
        match self {
            Oracle::IntAtLeast(k) => Value::Int(Int::from(*k)),
            Oracle::ArrayAtLeast(m) => Value::Array(vec![Value::Null; *m]),
            Oracle::StringWithX => Value::from("abxcd"),
            Oracle::StringWithLetter => Value::from(" \u{3a9}é"),
            Oracle::Both(a, b) => Value::Array(vec![a.witness(), b.witness()]),
        }
    }
}

fn oracle() -> impl Strategy<Value = Oracle> {
    let leaf = prop_oneof![
        (-50i64..1_000_000).prop_map(Oracle::IntAtLeast),
        (1usize..5).prop_map(Oracle::ArrayAtLeast),
        Just(Oracle::StringWithX),
        Just(Oracle::StringWithLetter),
    ];
    prop_oneof![
        3 => leaf.clone(),
        1 => (leaf.clone(), leaf).prop_map(|(a, b)| Oracle::Both(Box::new(a), Box::new(b))),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Int(Int::from(n))),
        "-?[1-9][0-9]{19,40}".prop_map(|t| Value::Int(Int::parse(&t).unwrap())),
        (-1.0e6f64..1.0e6).prop_map(|x| Value::Float(Float::new(x).unwrap())),
        "[abxé Ω0-9]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map("[a-dx]{1,3}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A failing input: noise around the oracle's witness, the witness at a generated place.
fn case() -> impl Strategy<Value = (Value, Oracle)> {
    (value(), value(), oracle(), any::<bool>()).prop_map(|(a, b, oracle, first)| {
        let w = oracle.witness();
        let items = if first { vec![w, a, b] } else { vec![a, b, w] };
        (Value::Array(items), oracle)
    })
}

fn canonical(v: &Value) -> Vec<u8> {
    to_canonical_bytes(v).unwrap()
}

/// Every single step a shrinker must have tried on a 1-minimal value, enumerated
/// independently of the crate: remove one element or member, replace a container by one of
/// its children, an integer by 0 or by one step toward zero, remove one character, replace
/// a character by a lower one of `0`, `A`, `a`.
fn neighbours(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    match v {
        Value::Array(items) => {
            for i in 0..items.len() {
                let mut fewer = items.clone();
                fewer.remove(i);
                out.push(Value::Array(fewer));
                out.push(items[i].clone());
                for n in neighbours(&items[i]) {
                    let mut changed = items.clone();
                    changed[i] = n;
                    out.push(Value::Array(changed));
                }
            }
        }
        Value::Object(members) => {
            for i in 0..members.len() {
                let mut fewer = members.clone();
                fewer.remove(i);
                out.push(Value::Object(fewer));
                out.push(members[i].1.clone());
                for n in neighbours(&members[i].1) {
                    let mut changed = members.clone();
                    changed[i].1 = n;
                    out.push(Value::Object(changed));
                }
            }
        }
        Value::Int(n) if !n.is_zero() => {
            out.push(Value::int(0));
            if let Some(k) = n.to_i64() {
                out.push(Value::int(k - k.signum()));
            }
        }
        Value::String(s) => {
            let chars: Vec<char> = s.chars().collect();
            for i in 0..chars.len() {
                let mut fewer = chars.clone();
                fewer.remove(i);
                out.push(Value::String(fewer.into_iter().collect()));
                for simple in ['0', 'A', 'a'] {
                    if simple < chars[i] {
                        let mut plainer = chars.clone();
                        plainer[i] = simple;
                        out.push(Value::String(plainer.into_iter().collect()));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

fn run(input: &Value, oracle: &Oracle, max_calls: u64) -> (Shrunk, Vec<Vec<u8>>) {
    let mut asked = Vec::new();
    let shrunk = shrink(
        input,
        |v: &Value| {
            asked.push(canonical(v));
            oracle.fails(v)
        },
        &Options {
            max_calls,
            ..Options::default()
        },
    )
    .unwrap();
    (shrunk, asked)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn the_result_fails_is_no_larger_and_is_one_minimal((input, oracle) in case()) {
        prop_assert!(oracle.fails(&input));
        let (shrunk, asked) = run(&input, &oracle, 100_000);
        prop_assert!(!shrunk.budget_exhausted);
        prop_assert!(oracle.fails(&shrunk.value));
        prop_assert!(canonical(&shrunk.value).len() <= canonical(&input).len());
        prop_assert_eq!(shrunk.oracle_calls, asked.len() as u64);
        for n in neighbours(&shrunk.value) {
            prop_assert!(
                !oracle.fails(&n),
                "{} is a failing neighbour of the result {}",
                String::from_utf8(canonical(&n)).unwrap(),
                String::from_utf8(canonical(&shrunk.value)).unwrap()
            );
        }
    }

    #[test]
    fn no_canonical_candidate_is_asked_twice((input, oracle) in case()) {
        let (_, asked) = run(&input, &oracle, 100_000);
        let distinct: BTreeSet<&Vec<u8>> = asked.iter().collect();
        prop_assert_eq!(distinct.len(), asked.len());
        prop_assert!(!distinct.contains(&canonical(&input)), "the input itself was asked");
    }

    #[test]
    fn two_runs_agree_and_the_path_reapplies((input, oracle) in case()) {
        let (first, asked_first) = run(&input, &oracle, 100_000);
        let (second, asked_second) = run(&input, &oracle, 100_000);
        prop_assert_eq!(&first, &second);
        prop_assert_eq!(asked_first, asked_second);
        let replayed = apply_path(&input, &first.path).unwrap();
        prop_assert_eq!(canonical(&replayed), canonical(&first.value));
        prop_assert_eq!(&replayed, &first.value);
        let through_json = path_from_value(&path_to_value(&first.path)).unwrap();
        prop_assert_eq!(&through_json, &first.path);
    }

    #[test]
    fn a_spent_budget_still_gives_a_failing_value_no_larger((input, oracle) in case(), budget in 0u64..30) {
        let (shrunk, asked) = run(&input, &oracle, budget);
        prop_assert!(shrunk.oracle_calls <= budget);
        prop_assert_eq!(shrunk.oracle_calls, asked.len() as u64);
        prop_assert!(oracle.fails(&shrunk.value));
        prop_assert!(canonical(&shrunk.value).len() <= canonical(&input).len());
        if !shrunk.budget_exhausted {
            let (unlimited, _) = run(&input, &oracle, 100_000);
            prop_assert_eq!(&unlimited.value, &shrunk.value);
        }
        prop_assert_eq!(apply_path(&input, &shrunk.path).unwrap(), shrunk.value);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_ordered_form_measures_and_memoises_in_its_own_bytes((input, oracle) in case()) {
        let form = Canonicalization::V1Ordered;
        let bytes = |v: &Value| value_bytes(v, form).unwrap();
        let mut asked = Vec::new();
        let shrunk = shrink(
            &input,
            |v: &Value| {
                asked.push(bytes(v));
                oracle.fails(v)
            },
            &Options { canonicalization: form, ..Options::default() },
        )
        .unwrap();
        prop_assert!(oracle.fails(&shrunk.value));
        prop_assert!(bytes(&shrunk.value).len() <= bytes(&input).len());
        let distinct: BTreeSet<&Vec<u8>> = asked.iter().collect();
        prop_assert_eq!(distinct.len(), asked.len());
        prop_assert_eq!(bytes(&apply_path(&input, &shrunk.path).unwrap()), bytes(&shrunk.value));
    }
}
