//! The workspace's lossless JSON value.

use std::fmt;

use crate::error::ValueError;

/// A JSON value that loses nothing canonical form v1 cares about.
///
/// Integers keep every digit ([`Int`]), floats are finite `f64`s that print as Python's
/// `repr` ([`Float`]), and objects keep their members in input order (canonical form v1
/// sorts them when it writes bytes; `freezegate-canon-v1-ordered` does not).
///
/// Two values compare equal when they are structurally identical: same member order,
/// same float bits (so `0.0 != -0.0`, as their canonical bytes differ).
///
/// Parsed and converted values nest at most [`MAX_DEPTH`](crate::MAX_DEPTH) deep; one built
/// in code may nest deeper. Such a value has no canonical bytes ([`ValueError::TooDeep`]),
/// `Serialize` refuses it with an error naming the limit, and `Display` and
/// [`to_pretty_string`](crate::to_pretty_string) print it whole without recursing. The
/// derived `Clone`, `PartialEq`, `Hash`, `Debug` and the drop glue do recurse, one call per
/// level: far deeper than the limit (tens of thousands of levels), they can overflow the
/// thread's stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// An integer of any length.
    Int(Int),
    /// A finite floating-point number.
    Float(Float),
    /// A string (not necessarily NFC: canonical bytes normalise it).
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, members in input order. Duplicate keys are representable here but are an
    /// error when canonical bytes are written.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The JSON kind's name: `null`, `bool`, `int`, `float`, `string`, `array` or `object`.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// The value of member `key` if `self` is an object that has it (the first such member).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at RFC 6901 JSON pointer `pointer` (`""` is the whole value).
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |node, raw| {
            let token = unescape_pointer_token(raw);
            match node {
                Value::Object(members) => members.iter().find(|(k, _)| *k == token).map(|(_, v)| v),
                Value::Array(items) => parse_index(&token).and_then(|i| items.get(i)),
                _ => None,
            }
        })
    }

    /// Mutable access to the value at RFC 6901 JSON pointer `pointer`.
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |node, raw| {
            let token = unescape_pointer_token(raw);
            match node {
                Value::Object(members) => members
                    .iter_mut()
                    .find(|(k, _)| *k == token)
                    .map(|(_, v)| v),
                Value::Array(items) => parse_index(&token).and_then(move |i| items.get_mut(i)),
                _ => None,
            }
        })
    }

    /// An integer value from an `i64`.
    pub fn int(n: i64) -> Value {
        Value::Int(Int::from(n))
    }
}

/// Escapes one reference token of a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`).
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn unescape_pointer_token(raw: &str) -> String {
    raw.replace("~1", "/").replace("~0", "~")
}

fn parse_index(token: &str) -> Option<usize> {
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    if !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// An integer of any length, kept as its canonical decimal text: optional `-`, no leading
/// zeros, and never `-0`.
///
/// Equality and hashing are by that text, which is one-to-one with the value; ordering is by
/// value (`-2 < -1 < 0 < 9 < 10`), at any length.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Int(Box<str>);

impl Ord for Int {
    fn cmp(&self, other: &Int) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        match (self.is_negative(), other.is_negative()) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (negative, _) => {
                let (a, b) = (self.magnitude_digits(), other.magnitude_digits());
                // No leading zeros: a longer magnitude is a larger one.
                let magnitude = a.len().cmp(&b.len()).then_with(|| a.cmp(b));
                if negative {
                    magnitude.reverse()
                } else {
                    magnitude
                }
            }
        }
    }
}

impl PartialOrd for Int {
    fn partial_cmp(&self, other: &Int) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Int {
    /// Parses decimal text: an optional `-` then ASCII digits. Leading zeros are dropped and
    /// `-0` becomes `0`.
    pub fn parse(text: &str) -> Result<Int, ValueError> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ValueError::InvalidInteger(text.to_owned()));
        }
        Ok(Int::from_sign_digits(negative, digits))
    }

    /// Builds an integer from a sign and ASCII digits (which must all be `0`-`9`; leading
    /// zeros are dropped).
    pub(crate) fn from_sign_digits(negative: bool, digits: &str) -> Int {
        let trimmed = digits.trim_start_matches('0');
        if trimmed.is_empty() {
            return Int(Box::from("0"));
        }
        if negative {
            let mut s = String::with_capacity(trimmed.len() + 1);
            s.push('-');
            s.push_str(trimmed);
            Int(s.into_boxed_str())
        } else {
            Int(Box::from(trimmed))
        }
    }

    /// The canonical decimal text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the integer is below zero.
    pub fn is_negative(&self) -> bool {
        self.0.starts_with('-')
    }

    /// Whether the integer is zero.
    pub fn is_zero(&self) -> bool {
        &*self.0 == "0"
    }

    /// The decimal digits of the absolute value (no sign).
    pub fn magnitude_digits(&self) -> &str {
        self.0.strip_prefix('-').unwrap_or(&self.0)
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        self.0.parse().ok()
    }

    /// The value as a `u64`, if it fits.
    pub fn to_u64(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// The value as a `u128`, if it fits.
    pub fn to_u128(&self) -> Option<u128> {
        self.0.parse().ok()
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Int({})", self.0)
    }
}

macro_rules! int_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Int {
            fn from(n: $t) -> Int {
                Int(n.to_string().into_boxed_str())
            }
        }
    )*};
}
int_from!(
    i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, isize, usize
);

impl std::str::FromStr for Int {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Int, ValueError> {
        Int::parse(s)
    }
}

/// A finite `f64`. Equality and hashing are by bits, so `0.0` and `-0.0` differ (their
/// canonical bytes do).
#[derive(Clone, Copy)]
pub struct Float(f64);

impl Float {
    /// Wraps a finite float; NaN and infinities are refused (canonical form has no spelling
    /// for them).
    pub fn new(x: f64) -> Result<Float, ValueError> {
        if x.is_finite() {
            Ok(Float(x))
        } else {
            Err(ValueError::NonFinite)
        }
    }

    /// The wrapped float.
    pub fn get(self) -> f64 {
        self.0
    }

    /// The text Python's `repr` gives for this float (`1.0`, `1e+16`, `1e-05`, `-0.0`).
    pub fn repr(self) -> String {
        let mut out = Vec::with_capacity(24);
        crate::write::push_float_repr(&mut out, self.0);
        // The repr is ASCII.
        String::from_utf8(out).unwrap_or_default()
    }
}

impl PartialEq for Float {
    fn eq(&self, other: &Float) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Float {}

impl std::hash::Hash for Float {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl fmt::Debug for Float {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Float({})", self.repr())
    }
}

impl fmt::Display for Float {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<Int> for Value {
    fn from(n: Int) -> Value {
        Value::Int(n)
    }
}

impl From<Float> for Value {
    fn from(x: Float) -> Value {
        Value::Float(x)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
}

impl fmt::Display for Value {
    /// Writes the value as compact JSON in its own member order, strings as given (no NFC),
    /// whatever its depth: the writer keeps its own stack, so a value built in code that nests
    /// deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) (which has no canonical form) prints whole
    /// and never overflows the thread's stack. For canonical bytes use
    /// [`crate::to_canonical_bytes`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Vec::new();
        crate::write::write_compact(&mut out, self);
        f.write_str(&String::from_utf8_lossy(&out))
    }
}
