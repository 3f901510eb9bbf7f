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

    fn lt(a: &str, b: &str) -> bool {
        let (a, b) = (parse_str(a).unwrap(), parse_str(b).unwrap());
        let form = Canonicalization::V1;
        let (ab, bb) = (
            value_bytes(&a, form).unwrap(),
            value_bytes(&b, form).unwrap(),
        );
        smaller(&a, &ab, &b, &bb, form)
    }

    #[test]
    fn shorter_bytes_win_then_the_tie_break() {
        assert!(lt("[0]", "[10]"));
        assert!(lt("[1]", "[-1]") && !lt("[-1]", "[1]"));
        assert!(lt("-9", "10"));
        assert!(lt("10", "-10"));
        assert!(lt(r#""ab""#, r#""ac""#));
        assert!(lt("[[0],[-1]]", "[[-1],[0]]"));
        assert!(!lt("[1,2]", "[12]") && lt("[12]", "[1,2]"));
        assert!(lt("null", "true") && lt("0", "null"));
        assert!(lt(r#"{"b":1,"a":0}"#, r#"{"a":1,"b":0}"#));
        assert!(!lt(r#"{"a":1,"b":0}"#, r#"{"b":0,"a":1}"#));
        assert!(lt("1.0", "-1.0") && lt("0.0", "-0.0"));
    }
}
