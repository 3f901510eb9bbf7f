//! Conversions between [`Value`] and serde types, for Rust properties' input types, and
//! `Serialize` for [`Value`] and [`Int`], so that values (and the ledger's rows, built from
//! them) can be handed to serde serialisers such as insta's snapshot macros.
//!
//! Both directions go without JSON text. [`to_value`] builds the [`Value`] with a serde
//! serialiser of its own, so integers of any size stay exact and a NaN or infinite float is
//! an error instead of serde_json's `null`. [`from_value`] reads the type with a serde
//! deserialiser of its own over the [`Value`], so integers arrive exact (`i128` and `u128`
//! included), floats bit for bit, and an error names the JSON pointer of the value that does
//! not fit. Neither uses serde_json, and the crate does not depend on it, so depending on
//! this crate turns on no serde_json feature in a user's build.
//!
//! There is no `Deserialize` for [`Value`]: a serde deserialiser hands over numbers as `u64`,
//! `i64` or `f64`, so a longer integer would arrive already rounded. Read JSON text with
//! [`parse`](crate::parse), or a type with [`to_value`].

use serde::de::DeserializeOwned;
use serde::ser::{Error as _, SerializeMap as _, SerializeSeq as _};
use serde::{Serialize, Serializer};

use crate::error::ValueError;
use crate::read::MAX_DEPTH;
use crate::value::{Int, Value};

/// A value as serde's data model: objects as maps in member order (not sorted, duplicates
/// kept), floats as `f64`, integers as the smallest of `i64`, `u64`, `i128`, `u128` that
/// holds them. An integer too long for 128 bits is an error of the serialiser, never a
/// rounded number; so is a value nested deeper than [`MAX_DEPTH`](crate::MAX_DEPTH) arrays
/// and objects (one built in code: parsed and converted values never are), which a
/// serialiser, recursing once per level, could not write without overflowing its stack.
///
/// ```
/// use freezegate_canon::parse;
///
/// let value = parse(br#"{"b": [1, 2.5, -170141183460469231731687303715884105728], "a": null}"#)?;
/// assert_eq!(
///     serde_json::to_string(&value)?,
///     r#"{"b":[1,2.5,-170141183460469231731687303715884105728],"a":null}"#
/// );
/// let too_long = parse(b"340282366920938463463374607431768211456")?;
/// assert!(serde_json::to_string(&too_long).is_err());
///
/// let mut deep = freezegate_canon::Value::Null;
/// for _ in 0..200 {
///     deep = freezegate_canon::Value::Array(vec![deep]);
/// }
/// assert_eq!(
///     serde_json::to_string(&deep).unwrap_err().to_string(),
///     "a value nested deeper than 128 arrays/objects cannot be serialized"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Nested {
            value: self,
            depth: 0,
        }
        .serialize(s)
    }
}

/// A value inside `depth` arrays and objects of the value being serialised.
struct Nested<'v> {
    value: &'v Value,
    depth: usize,
}

impl Serialize for Nested<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let depth = self.depth + 1;
        // Asked once the serialiser has opened the array or object, so that a serialiser with
        // a limit of its own (`to_value`'s: `ValueError::TooDeep`) says so first.
        let too_deep = || {
            S::Error::custom(format!(
                "a value nested deeper than {MAX_DEPTH} arrays/objects cannot be serialized"
            ))
        };
        match self.value {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(n) => n.serialize(s),
            Value::Float(x) => s.serialize_f64(x.get()),
            Value::String(text) => s.serialize_str(text),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                if depth > MAX_DEPTH {
                    return Err(too_deep());
                }
                for value in items {
                    seq.serialize_element(&Nested { value, depth })?;
                }
                seq.end()
            }
            Value::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                if depth > MAX_DEPTH {
                    return Err(too_deep());
                }
                for (key, value) in members {
                    map.serialize_entry(key, &Nested { value, depth })?;
                }
                map.end()
            }
        }
    }
}

/// An integer as the smallest of `i64`, `u64`, `i128`, `u128` that holds it; longer than
/// 128 bits, an error of the serialiser that names the number of digits.
impl Serialize for Int {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(n) = self.to_i64() {
            s.serialize_i64(n)
        } else if let Some(n) = self.to_u64() {
            s.serialize_u64(n)
        } else if let Some(n) = self.to_i128() {
            s.serialize_i128(n)
        } else if let Some(n) = self.to_u128() {
            s.serialize_u128(n)
        } else {
            Err(S::Error::custom(format!(
                "an integer of {} digits does not fit serde's 128-bit integers",
                self.magnitude_digits().len()
            )))
        }
    }
}

/// Turns any serializable value into a [`Value`]: the value serde_json would write for it,
/// read back by [`parse`](crate::parse), except that NaN and infinities are an error.
///
/// - A NaN or infinite `f32`/`f64`, anywhere (a map key too), is
///   [`ValueError::NonFiniteAt`], naming the float and the JSON pointer where it sat; never
///   the `null` serde_json writes for it (SPEC §3: no silent fixes).
/// - Integers keep every digit, `i128` and `u128` included. An `f64` is kept bit for bit
///   (canonical bytes print it as Python's `repr`: `1e16` → `1e+16`, `-0.0` → `-0.0`).
/// - An `f32` becomes the `f64` of its shortest decimal text, the text serde_json writes for
///   it: `0.1f32` gives the `f64` `0.1` (canonical `0.1`), not the `f32`'s exact value
///   `0.10000000149011612`. Reading the value back into an `f32` gives the same `f32`.
/// - Strings are kept as written (canonical bytes apply NFC); bytes are an array of
///   integers; unit, `None` and unit structs are `null`; enums are externally tagged
///   (`"Unit"`, `{"Newtype": x}`, `{"Tuple": [x, y]}`, `{"Struct": {"f": x}}`).
/// - Map keys must serialize as strings, or as integers, `bool`s, `char`s or finite floats,
///   which become strings as serde_json writes them (`1` → `"1"`, `true` → `"true"`).
///   Other keys are [`ValueError::Serde`] (`key must be a string`).
/// - Two keys of one object equal after NFC are [`ValueError::DuplicateKey`], nesting deeper
///   than [`MAX_DEPTH`](crate::MAX_DEPTH) is [`ValueError::TooDeep`]: the value always has
///   a canonical form. An error of the type's own `Serialize` is [`ValueError::Serde`].
///
/// ```
/// use freezegate_canon::{ValueError, to_canonical_bytes, to_value};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let value = to_value(&(u128::MAX, 0.1f32, 1e16, -0.0, 'x'))?;
/// assert_eq!(
///     to_canonical_bytes(&value)?,
///     b"[340282366920938463463374607431768211455,0.1,1e+16,-0.0,\"x\"]"
/// );
///
/// let err = to_value(&vec![vec![1.0], vec![2.0, f64::NAN]]).unwrap_err();
/// assert_eq!(err, ValueError::NonFiniteAt { float: "NaN", pointer: "/1/1".into() });
/// assert_eq!(
///     err.to_string(),
///     "non-finite float NaN at \"/1/1\" (canonical form has no NaN or infinities)"
/// );
/// # Ok(())
/// # }
/// ```
pub fn to_value<T: Serialize + ?Sized>(input: &T) -> Result<Value, ValueError> {
    crate::serializer::to_value(input)
}

/// Reads a [`Value`] into a deserializable type: what serde_json reads from the value's JSON
/// text, without the text.
///
/// - Integers become whatever integer type the type asks for when they fit, `i128` and
///   `u128` included; a type that asks for no particular type (`deserialize_any`) is offered
///   the first of `u64`, `i64`, `u128`, `i128` that holds the integer. A float type takes an
///   integer's nearest float; an integer longer than 128 bits is an error for any other type.
/// - Floats are `f64` as the value holds them, so `from_value(&to_value(&x)?)` is `x` bit for
///   bit, for `f32` too; a float beyond the `f32` range read as an `f32` is an error, not an
///   infinity; a float is never read as an integer.
/// - Strings, `char`s, `bool`s; `null` is `None`, unit and unit structs; arrays are
///   sequences, tuples and tuple structs; objects are maps and structs; map keys are read
///   from their text when the type's keys are integers, `bool`s or floats (`"7"` → `7u32`),
///   which must be JSON number text (`"07"`, `"+7"`, `"-0"` and `".5"` are errors).
/// - Enums are externally tagged: `"Unit"`, `{"Newtype": x}`, `{"Tuple": [x, y]}`,
///   `{"Struct": {"f": x}}`. Internally, adjacently and untagged enums and `flatten` work as
///   serde makes them work, by reading the value as "any" into a buffer first.
/// - Read as "any" (`serde_json::Value`, those buffers), an integer wider than 64 bits is its
///   nearest `f64`, as serde_json reads it: neither holds a wider integer.
///
/// Fails when the value does not have the type's shape, e.g. a candidate the shrinker
/// produced that the property's input type cannot hold: [`ValueError::Deserialize`], with
/// the JSON pointer of the offending value (`/items/3/qty: expected u8, found 300`), or
/// [`ValueError::TooDeep`] for a value nested deeper than [`MAX_DEPTH`](crate::MAX_DEPTH).
///
/// One limit is serde's own: the buffer serde (1.0.229, the version this workspace locks)
/// reads untagged and internally tagged enums and `#[serde(flatten)]` fields through has no
/// 128-bit integers, so an `i128` or `u128` field inside such a type fails with `i128 is not
/// supported` (or `u128`) whatever its value and whatever the format. Outside them 128-bit
/// integers read exactly.
///
/// ```
/// use freezegate_canon::{from_value, parse_str};
/// use serde::Deserialize;
///
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct Item {
///     qty: u8,
///     id: u128,
/// }
///
/// let value = parse_str(r#"[{"qty": 1, "id": 340282366920938463463374607431768211455}]"#)?;
/// assert_eq!(from_value::<Vec<Item>>(&value)?, [Item { qty: 1, id: u128::MAX }]);
///
/// let value = parse_str(r#"[{"qty": 1, "id": 0}, {"qty": 300, "id": 0}]"#)?;
/// assert_eq!(
///     from_value::<Vec<Item>>(&value).unwrap_err().to_string(),
///     r#"serde conversion failed at "/1/qty": expected u8, found 300"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, ValueError> {
    crate::deserializer::from_value(value)
}
