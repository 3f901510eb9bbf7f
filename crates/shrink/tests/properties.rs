//! The shrinker's invariants, as properties over generated values and generated oracles:
//! the result still fails, is never larger, is 1-minimal unless the budget ran out, is
//! deterministic, re-applies from its path, and no canonical candidate is asked twice.

use std::collections::BTreeSet;

use freezegate_canon::{Canonicalization, Float, Int, Value, to_canonical_bytes, value_bytes};
use freezegate_shrink::{
    Options, Pass, Shrunk, Step, apply_path, apply_path_checked, path_from_value, path_to_value,
    shrink,
};
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
        &Options::default().with_max_calls(max_calls),
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
        // Every step made the value smaller, as the integrity check re-checks on a pinned
        // origin (which is canonical: NFC).
        let origin = freezegate_canon::parse(&canonical(&input)).unwrap();
        let checked = apply_path_checked(&origin, &first.path, Options::default().canonicalization);
        prop_assert_eq!(checked.map(|v| canonical(&v)), Ok(canonical(&first.value)));
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

/// SPEC §5's pass order.
const PASSES: [Pass; 6] = [
    Pass::Delete,
    Pass::Replace,
    Pass::String,
    Pass::Integer,
    Pass::Float,
    Pass::Merge,
];

fn rank(pass: Pass) -> usize {
    PASSES
        .iter()
        .position(|&p| p == pass)
        .unwrap_or(PASSES.len())
}

/// `v` with every string emptied and every number zeroed: its shape.
fn zeroed(v: &Value) -> Value {
    match v {
        Value::String(_) => Value::from(""),
        Value::Int(_) => Value::int(0),
        Value::Float(_) => Value::Float(Float::new(0.0).unwrap()),
        Value::Array(items) => Value::Array(items.iter().map(zeroed).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), zeroed(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// How many nodes of `v` satisfy `pred`.
fn count(v: &Value, pred: &dyn Fn(&Value) -> bool) -> usize {
    usize::from(pred(v))
        + match v {
            Value::Array(items) => items.iter().map(|x| count(x, pred)).sum(),
            Value::Object(members) => members.iter().map(|(_, x)| count(x, pred)).sum(),
            _ => 0,
        }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// An oracle that fails while the input keeps its shape lets every string, integer and
    /// float fall to its simplest value on its own, and no pass undoes or enables another's
    /// work: one round does everything. Its path lists the passes in SPEC §5's order, and
    /// takes one step per leaf: a string is emptied at once, an integer becomes 0 at once
    /// (0 is tried first), a float becomes 0.0 at once.
    #[test]
    fn one_round_runs_the_passes_in_the_spec_order_and_tries_zero_first(input in value()) {
        let shape = zeroed(&input);
        let shrunk = shrink(&input, |v: &Value| zeroed(v) == shape, &Options::default()).unwrap();
        prop_assert_eq!(&shrunk.value, &shape);
        let passes: Vec<Pass> = shrunk.path.iter().map(Step::pass).collect();
        prop_assert!(
            passes.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
            "passes out of order: {:?}",
            passes
        );
        let steps = |pass: Pass| passes.iter().filter(|&&p| p == pass).count();
        let strings = count(&input, &|v| matches!(v, Value::String(s) if !s.is_empty()));
        let ints = count(&input, &|v| matches!(v, Value::Int(n) if !n.is_zero()));
        let floats = count(&input, &|v| {
            matches!(v, Value::Float(x) if x.get() != 0.0 || x.get().is_sign_negative())
        });
        prop_assert_eq!(steps(Pass::String), strings);
        prop_assert_eq!(steps(Pass::Integer), ints);
        prop_assert_eq!(steps(Pass::Float), floats);
        prop_assert_eq!(passes.len(), strings + ints + floats);
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
            &Options::default().with_canonicalization(form),
        )
        .unwrap();
        prop_assert!(oracle.fails(&shrunk.value));
        prop_assert!(bytes(&shrunk.value).len() <= bytes(&input).len());
        let distinct: BTreeSet<&Vec<u8>> = asked.iter().collect();
        prop_assert_eq!(distinct.len(), asked.len());
        prop_assert_eq!(bytes(&apply_path(&input, &shrunk.path).unwrap()), bytes(&shrunk.value));
    }
}

/// Characters NFC treats in every way: ASCII, combining marks, Hangul jamo that compose,
/// compatibility ideographs and Hebrew presentation forms that NFC rewrites (some into two
/// characters), singletons such as U+212B ANGSTROM SIGN, and astral characters.
fn tricky_char() -> impl Strategy<Value = char> + Clone {
    prop_oneof![
        prop::char::range('a', 'z'),
        Just('e'),
        Just('\u{e9}'),
        prop::char::range('\u{300}', '\u{36f}'),
        prop::char::range('\u{1100}', '\u{1112}'),
        prop::char::range('\u{1161}', '\u{1175}'),
        prop::char::range('\u{11a8}', '\u{11c2}'),
        prop::char::range('\u{ac00}', '\u{ac40}'),
        prop::char::range('\u{f900}', '\u{faff}'),
        prop::char::range('\u{fb1d}', '\u{fb4f}'),
        prop::char::range('\u{2f800}', '\u{2fa1f}'),
        prop::char::range('\u{1f300}', '\u{1faff}'),
        Just('\u{212b}'),
        Just('\u{2126}'),
        any::<char>(),
    ]
}

/// One string, or an array of up to three, in whatever form (NFC or not) it was drawn.
fn strings() -> impl Strategy<Value = Value> {
    let one = || {
        prop::collection::vec(tricky_char(), 0..7)
            .prop_map(|cs| Value::String(cs.into_iter().collect()))
    };
    prop_oneof![
        one(),
        prop::collection::vec(one(), 1..4).prop_map(Value::Array)
    ]
}

/// The strings of a value.
fn strings_of(v: &Value) -> Vec<&str> {
    match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings_of).collect(),
        _ => Vec::new(),
    }
}

/// A predicate on what the oracle sees: the canonical bytes, read back (strings in NFC).
#[derive(Debug, Clone)]
struct Seen {
    /// Some character is at least this code point …
    min_code_point: u32,
    /// … there are at least this many characters in all …
    min_chars: usize,
    /// … and, when set, a hash of the canonical bytes is not a multiple of 3 (a predicate
    /// with holes, so that bisection meets passing values above failing ones).
    holes: bool,
}

impl Seen {
    fn fails_bytes(&self, bytes: &[u8]) -> bool {
        let v = freezegate_canon::parse(bytes).unwrap();
        let strings = strings_of(&v);
        let max = strings
            .iter()
            .flat_map(|s| s.chars())
            .map(u32::from)
            .max()
            .unwrap_or(0);
        let count: usize = strings.iter().map(|s| s.chars().count()).sum();
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        max >= self.min_code_point && count >= self.min_chars && (!self.holes || hash % 3 != 0)
    }

    fn fails(&self, v: &Value) -> bool {
        self.fails_bytes(&canonical(v))
    }
}

/// The order of SPEC §5 on what the oracle sees, for strings and arrays of strings, written
/// independently of the crate: shorter canonical bytes, then strings shortlex, arrays by
/// length then element by element, a string before an array.
fn seen_smaller(a: &[u8], b: &[u8]) -> bool {
    fn tie(a: &Value, b: &Value) -> std::cmp::Ordering {
        match (a, b) {
            (Value::String(x), Value::String(y)) => x.len().cmp(&y.len()).then_with(|| x.cmp(y)),
            (Value::Array(x), Value::Array(y)) => x.len().cmp(&y.len()).then_with(|| {
                x.iter()
                    .zip(y)
                    .map(|(p, q)| tie(p, q))
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            }),
            (Value::String(_), _) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        }
    }
    let (va, vb) = (
        freezegate_canon::parse(a).unwrap(),
        freezegate_canon::parse(b).unwrap(),
    );
    a.len() < b.len() || (a.len() == b.len() && tie(&va, &vb).is_lt())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_step_is_smaller_as_the_oracle_sees_it_and_the_path_reapplies_to_the_canonical_origin(
        input in strings(),
        code_point_share in 0u32..=100,
        chars_share in 0usize..=100,
        holes in any::<bool>(),
    ) {
        let origin = freezegate_canon::parse(&canonical(&input)).unwrap();
        let seen_strings = strings_of(&origin);
        let max = seen_strings.iter().flat_map(|s| s.chars()).map(u32::from).max().unwrap_or(0);
        let count: usize = seen_strings.iter().map(|s| s.chars().count()).sum();
        let mut oracle = Seen {
            min_code_point: max / 100 * code_point_share,
            min_chars: count * chars_share / 100,
            holes,
        };
        // The input itself must fail: when it falls in a hole, the predicate has none.
        oracle.holes &= oracle.fails(&input);
        prop_assert!(oracle.fails(&input));
        let shrunk = shrink(&input, |v: &Value| oracle.fails(v), &Options::default()).unwrap();
        prop_assert!(!shrunk.budget_exhausted);
        let mut last = canonical(&origin);
        for k in 0..=shrunk.path.len() {
            let step = apply_path(&origin, &shrunk.path[..k]).unwrap();
            let bytes = canonical(&step);
            // Every value on the path is in NFC: what it records is what the oracle saw.
            prop_assert_eq!(&freezegate_canon::parse(&bytes).unwrap(), &step, "step {}", k);
            prop_assert!(oracle.fails_bytes(&bytes), "step {}", k);
            if k > 0 {
                prop_assert!(
                    seen_smaller(&bytes, &last),
                    "step {}: {} is not smaller than {}",
                    k,
                    String::from_utf8_lossy(&bytes),
                    String::from_utf8_lossy(&last)
                );
            }
            last = bytes;
        }
        // The path re-applied to the origin gives the fixture byte for byte.
        prop_assert_eq!(&last, &canonical(&shrunk.value));
        prop_assert_eq!(apply_path(&origin, &shrunk.path).unwrap(), shrunk.value);
    }
}
