//! The order "smaller" of SPEC §5.
//!
//! A value is smaller than another when its canonical bytes are shorter. Between values whose
//! canonical bytes have the same length, the tie-break compares them structurally:
//!
//! 1. by kind: `null` < `bool` < `int` < `float` < `string` < `array` < `object`;
//! 2. booleans: `false` < `true`;
//! 3. integers by absolute value, then positive before negative (`1` < `-1` < `2`);
//! 4. floats likewise, by absolute value then positive first;
//! 5. strings shortlex: fewer UTF-8 bytes first, then bytewise (code point order);
//! 6. arrays: fewer elements first, then element by element with this same order;
//! 7. objects: fewer members first, then member by member in canonical member order (keys
//!    sorted for v1, input order for the ordered variant), key shortlex then value.
//!
//! Two values that the structural comparison cannot tell apart but whose bytes differ are
//! ordered by their canonical bytes, so the order is total on canonical forms and every chain
//! of strictly smaller values is finite: shrinking terminates.
//!
//! The structural comparison reads the in-memory value, and the oracle sees canonical bytes.
//! The two agree because the engine only holds values whose strings are in NFC: `shrink`
//! normalises its input, and a string step whose result is not in NFC is never asked.

use std::cmp::Ordering;

use freezegate_canon::{Canonicalization, Float, Int, Value};

/// Whether `a` (canonical bytes `a_bytes`) is strictly smaller than `b` (`b_bytes`).
pub(crate) fn smaller(
    a: &Value,
    a_bytes: &[u8],
    b: &Value,
    b_bytes: &[u8],
    form: Canonicalization,
) -> bool {
    match a_bytes.len().cmp(&b_bytes.len()) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => {
            if a_bytes == b_bytes {
                return false;
            }
            match compare(a, b, form) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => a_bytes < b_bytes,
            }
        }
    }
}

fn kind_rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Int(_) => 2,
        Value::Float(_) => 3,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

/// The structural tie-break between two values.
pub(crate) fn compare(a: &Value, b: &Value, form: Canonicalization) -> Ordering {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Int(x), Value::Int(y)) => compare_ints(x, y),
        (Value::Float(x), Value::Float(y)) => compare_floats(*x, *y),
        (Value::String(x), Value::String(y)) => shortlex(x, y),
        (Value::Array(x), Value::Array(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|(p, q)| compare(p, q, form))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        (Value::Object(x), Value::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            let xs = member_order(x, form);
            let ys = member_order(y, form);
            xs.iter()
                .zip(&ys)
                .map(|((kx, vx), (ky, vy))| shortlex(kx, ky).then_with(|| compare(vx, vy, form)))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        _ => kind_rank(a).cmp(&kind_rank(b)),
    }
}

fn shortlex(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn compare_ints(a: &Int, b: &Int) -> Ordering {
    let (da, db) = (a.magnitude_digits(), b.magnitude_digits());
    da.len()
        .cmp(&db.len())
        .then_with(|| da.cmp(db))
        .then_with(|| a.is_negative().cmp(&b.is_negative()))
}

fn compare_floats(a: Float, b: Float) -> Ordering {
    let (x, y) = (a.get(), b.get());
    x.abs()
        .total_cmp(&y.abs())
        .then_with(|| x.is_sign_negative().cmp(&y.is_sign_negative()))
}

/// An object's members in canonical order: sorted by key for v1, input order otherwise.
pub(crate) fn member_order(
    members: &[(String, Value)],
    form: Canonicalization,
) -> Vec<&(String, Value)> {
    let mut out: Vec<&(String, Value)> = members.iter().collect();
    if form == Canonicalization::V1 {
        out.sort_by(|a, b| a.0.cmp(&b.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use freezegate_canon::{parse_str, value_bytes};
    use proptest::prelude::*;

    const FORM: Canonicalization = Canonicalization::V1;

    fn bytes(v: &Value) -> Vec<u8> {
        value_bytes(v, FORM).unwrap()
    }

    fn less(a: &Value, b: &Value) -> bool {
        smaller(a, &bytes(a), b, &bytes(b), FORM)
    }

    fn lt(a: &str, b: &str) -> bool {
        less(&parse_str(a).unwrap(), &parse_str(b).unwrap())
    }

    /// `a < b` for two texts whose canonical bytes have the same length, so that only the
    /// tie-break can decide.
    fn tie_lt(a: &str, b: &str) -> bool {
        let (x, y) = (parse_str(a).unwrap(), parse_str(b).unwrap());
        assert_eq!(bytes(&x).len(), bytes(&y).len(), "{a} and {b}");
        less(&x, &y)
    }

    #[test]
    fn shorter_bytes_win_whatever_the_tie_break_says() {
        assert!(lt("[0]", "[10]"));
        assert!(lt("[1]", "[-1]") && !lt("[-1]", "[1]"));
        assert!(lt("10", "-10"));
        assert!(!lt("[1,2]", "[12]") && lt("[12]", "[1,2]"));
        assert!(lt("0", "null") && lt("1.0", "-1.0"));
        // `[]` is shorter than `"ab"` although arrays rank after strings.
        assert!(lt("[]", r#""ab""#));
    }

    #[test]
    fn equal_lengths_go_by_the_tie_break() {
        // Integers by absolute value, then positive before negative.
        assert!(tie_lt("-9", "10"));
        assert!(tie_lt("[1,-1]", "[-1,1]") && !tie_lt("[-1,1]", "[1,-1]"));
        assert!(tie_lt("[10,-10]", "[-10,10]") && !tie_lt("[-10,10]", "[10,-10]"));
        assert!(tie_lt("[[0],[-1]]", "[[-1],[0]]"));
        // Floats likewise.
        assert!(tie_lt("[1.0,-1.0]", "[-1.0,1.0]") && !tie_lt("[-1.0,1.0]", "[1.0,-1.0]"));
        assert!(tie_lt("[0.0,-0.0]", "[-0.0,0.0]") && !tie_lt("[-0.0,0.0]", "[0.0,-0.0]"));
        // Strings shortlex: fewer bytes first, then code point order.
        assert!(
            tie_lt(r#"["b","aa"]"#, r#"["aa","b"]"#) && !tie_lt(r#"["aa","b"]"#, r#"["b","aa"]"#)
        );
        assert!(tie_lt(r#""ab""#, r#""ac""#));
        // Kinds, and objects member by member in canonical order.
        assert!(tie_lt("null", "true"));
        assert!(tie_lt(r#"{"b":1,"a":0}"#, r#"{"a":1,"b":0}"#));
        assert!(!tie_lt(r#"{"a":1,"b":0}"#, r#"{"b":0,"a":1}"#));
    }

    /// Two leaves of one kind and whether SPEC §5's tie-break puts the first before the
    /// second: integers and floats by absolute value, then positive before negative; strings
    /// shortlex. Written from the SPEC's words, not from the code.
    fn leaves_and_the_spec_order() -> impl Strategy<Value = (Value, Value, bool)> {
        let key = |n: i64| (n.unsigned_abs(), n < 0);
        let ints = prop_oneof![-3i64..=3, any::<i64>()];
        let floats = prop_oneof![
            prop::sample::select(vec![0.0, -0.0, 1.0, -1.0, 1.5, -1.5, 1e16, -1e16]),
            -1e6f64..1e6,
        ];
        let floats = (floats.clone(), floats, any::<bool>()).prop_map(|(x, y, mirror)| {
            // Often the same magnitude, so that only the sign can decide.
            (x, if mirror { -x } else { y })
        });
        prop_oneof![
            (ints.clone(), ints).prop_map(move |(x, y)| {
                (Value::Int(x.into()), Value::Int(y.into()), key(x) < key(y))
            }),
            floats.prop_map(|(x, y)| {
                let less = x.abs() < y.abs()
                    || (x.abs() == y.abs() && !x.is_sign_negative() && y.is_sign_negative());
                let float = |x| Value::Float(Float::new(x).unwrap());
                (float(x), float(y), less)
            }),
            ("[ab\u{e9}]{0,4}", "[ab\u{e9}]{0,4}").prop_map(|(x, y)| {
                let less = (x.len(), x.as_bytes()) < (y.len(), y.as_bytes());
                (Value::String(x), Value::String(y), less)
            }),
        ]
    }

    /// Small values of every kind, many of the same canonical length.
    fn small_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-12i64..12).prop_map(|n| Value::Int(n.into())),
            prop::sample::select(vec![0.0, -0.0, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0])
                .prop_map(|x| Value::Float(Float::new(x).unwrap())),
            "[ab\u{e9}]{0,3}".prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map("[ab]{1,2}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Swapping two elements of an array keeps its length, so the tie-break alone
        /// decides, and it decides as SPEC §5 says.
        #[test]
        fn swapping_two_elements_is_decided_as_the_spec_says(
            (x, y, spec_less) in leaves_and_the_spec_order(),
        ) {
            let a = Value::Array(vec![x.clone(), y.clone()]);
            let b = Value::Array(vec![y, x]);
            prop_assert_eq!(bytes(&a).len(), bytes(&b).len());
            prop_assert_eq!(less(&a, &b), spec_less);
        }

        /// "Smaller" is a strict total order on canonical forms that puts shorter canonical
        /// bytes first: irreflexive, exactly one of two different forms is the smaller,
        /// transitive.
        #[test]
        fn smaller_is_a_strict_total_order_led_by_length(
            values in prop::collection::vec(small_value(), 1..10),
        ) {
            let b: Vec<Vec<u8>> = values.iter().map(bytes).collect();
            let lt = |i: usize, j: usize| smaller(&values[i], &b[i], &values[j], &b[j], FORM);
            let n = values.len();
            for i in 0..n {
                prop_assert!(!lt(i, i));
                for j in 0..n {
                    if b[i] == b[j] {
                        prop_assert!(!lt(i, j));
                    } else {
                        prop_assert!(lt(i, j) != lt(j, i), "{:?} {:?}", values[i], values[j]);
                    }
                    if b[i].len() < b[j].len() {
                        prop_assert!(lt(i, j));
                    }
                    for k in 0..n {
                        if lt(i, j) && lt(j, k) {
                            prop_assert!(lt(i, k), "{:?} {:?} {:?}", values[i], values[j], values[k]);
                        }
                    }
                }
            }
        }
    }
}
