//! A serde [`Deserializer`](de::Deserializer) that reads a type straight out of a [`Value`],
//! for [`crate::from_value`]: the mirror of the serialiser of [`crate::to_value`].
//!
//! It reads what serde_json reads from the value's compact JSON text, with three
//! differences: integers are exact at every width serde has (`i128`/`u128` included), a
//! float is handed over as the very `f64` the value holds (no text, so no rounding), and an
//! error names the JSON pointer of the offending value, not a place in text the user never
//! saw. In detail:
//!
//! - An integer is offered as whatever integer type the type asks for, when it fits; when
//!   the type asks for no particular type (`deserialize_any`: `serde_json::Value`, untagged
//!   and internally tagged enums, `flatten`), as `u64` or `i64` when it fits, else as its
//!   nearest `f64`, as serde_json does (neither `serde_json::Value` nor serde's buffer
//!   holds a wider integer). A type that asks for a float gets the integer's nearest `f64`
//!   (an `f32` its nearest `f32`, an error beyond the `f32` range). An integer longer than
//!   128 bits is an error when an integer type is asked for.
//! - A float is offered as `f64` (an `f32` takes the nearest `f32`, which for a value
//!   [`crate::to_value`] made from an `f32` is that `f32`, and is an error when that is
//!   beyond the `f32` range, never an infinity); it is never offered as an integer.
//! - Strings as borrowed `&str` (a `char` is a string of one character; bytes are a string's
//!   UTF-8 or an array of integers), `null` as `None` and as unit, anything else as
//!   `Some`; arrays as sequences (tuples and tuple structs too), objects as maps and structs
//!   (a struct also reads from an array, as serde_json allows).
//! - Enums are externally tagged: a string is a unit variant, an object with exactly one
//!   member is the variant it names with its content.
//! - Map keys are strings; a type whose keys are integers, `bool`s or floats reads them from
//!   the key's text (`"1"` → `1u32`, `"true"` → `true`), as serde_json does: only JSON
//!   number text, so `"+1"`, `"01"`, `".5"` or `"5."` is an error, not a second spelling of
//!   a key. An integer key of `"-0"` is an error for every integer type (serde_json takes it
//!   for `i128` alone), so no two keys read as the same integer.
//! - Nesting deeper than [`MAX_DEPTH`] is [`ValueError::TooDeep`], as for
//!   [`crate::parse`], so a hand-built value cannot exhaust the stack.
//!
//! serde itself (1.0.229, the version this workspace locks) cannot hold an `i128` or a
//! `u128` in the buffer it reads untagged and internally tagged enums and `flatten` fields
//! through: its `Content` has no 128-bit variants. A 128-bit field inside such a type fails
//! whatever the deserialiser, even for a small value (`i128 is not supported`); outside
//! them it reads exactly.

use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer as _, EnumAccess, MapAccess, SeqAccess, Unexpected,
    VariantAccess, Visitor,
};

use crate::error::ValueError;
use crate::read::MAX_DEPTH;
use crate::value::{Int, Value};

/// Reads a type out of a [`Value`].
pub(crate) fn from_value<'a, T: de::Deserialize<'a>>(value: &'a Value) -> Result<T, ValueError> {
    T::deserialize(ValueDeserializer { value, depth: 0 }).map_err(|e| e.0)
}

/// The deserialiser's error: a [`ValueError`], with serde's messages as
/// [`ValueError::Deserialize`] at the pointer of the value being read (filled in as the
/// error unwinds out of arrays and objects).
#[derive(Debug)]
pub(crate) struct DeError(ValueError);

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> DeError {
        DeError(ValueError::Deserialize {
            pointer: String::new(),
            message: msg.to_string(),
        })
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> DeError {
        DeError::custom(format_args!("expected {exp}, found {unexp}"))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> DeError {
        DeError::custom(format_args!("expected {exp}, found {unexp}"))
    }
}

impl DeError {
    fn within(self, token: &dyn fmt::Display) -> DeError {
        DeError(self.0.within(&token.to_string()))
    }
}

/// An integer that does not fit the type asked for.
fn out_of_range(n: &Int, ty: &str) -> DeError {
    de::Error::custom(format_args!("expected {ty}, found {n}"))
}

/// A value of the wrong kind: `expected u8, found string "x"`.
fn wrong_kind(value: &Value, exp: &dyn de::Expected) -> DeError {
    de::Error::invalid_type(unexpected(value), exp)
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Int(n) => match (n.to_u64(), n.to_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Other("integer"),
        },
        Value::Float(x) => Unexpected::Float(x.get()),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// The nearest `f64` of an integer; an error when it is beyond the `f64` range.
fn int_to_f64(n: &Int) -> Result<f64, DeError> {
    match n.as_str().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(out_of_range(n, "f64")),
    }
}

/// The nearest `f32` of an integer (rounded once, from its digits); an error when it is
/// beyond the `f32` range.
fn int_to_f32(n: &Int) -> Result<f32, DeError> {
    match n.as_str().parse::<f32>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(out_of_range(n, "f32")),
    }
}

/// Reads one value found inside `depth` arrays and objects.
#[derive(Clone, Copy)]
struct ValueDeserializer<'a> {
    value: &'a Value,
    depth: usize,
}

impl<'a> ValueDeserializer<'a> {
    /// Fails when this value, an array or object, is one level more than [`MAX_DEPTH`].
    fn open(self) -> Result<(), DeError> {
        if self.depth >= MAX_DEPTH {
            Err(DeError(ValueError::TooDeep(MAX_DEPTH)))
        } else {
            Ok(())
        }
    }

    /// The deserialiser of an item or member of this array or object.
    fn inner(self, value: &'a Value) -> ValueDeserializer<'a> {
        ValueDeserializer {
            value,
            depth: self.depth + 1,
        }
    }

    fn int<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Int(n) => {
                // Beyond 64 bits, the nearest `f64`, as serde_json reads such a number when no
                // type is asked for: neither `serde_json::Value` nor serde's buffer for
                // untagged and internally tagged enums and `flatten` holds a wider integer.
                if let Some(u) = n.to_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.to_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(int_to_f64(n)?)
                }
            }
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn seq<V: Visitor<'a>>(self, items: &'a [Value], visitor: V) -> Result<V::Value, DeError> {
        self.open()?;
        let mut access = Seq {
            outer: self,
            items: items.iter(),
            index: 0,
        };
        let out = visitor.visit_seq(&mut access)?;
        if access.items.len() == 0 {
            Ok(out)
        } else {
            Err(de::Error::invalid_length(
                items.len(),
                &"fewer elements in array",
            ))
        }
    }

    fn map<V: Visitor<'a>>(
        self,
        members: &'a [(String, Value)],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.open()?;
        let mut access = Map {
            outer: self,
            members: members.iter(),
            value: None,
        };
        let out = visitor.visit_map(&mut access)?;
        if access.members.len() == 0 {
            Ok(out)
        } else {
            Err(de::Error::invalid_length(
                members.len(),
                &"fewer members in object",
            ))
        }
    }
}

macro_rules! deserialize_int {
    ($($method:ident $visit:ident $to:ident $ty:ty;)*) => {$(
        fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
            match self.value {
                Value::Int(n) => match n.$to().and_then(|v| <$ty>::try_from(v).ok()) {
                    Some(v) => visitor.$visit(v),
                    None => Err(out_of_range(n, stringify!($ty))),
                },
                other => Err(wrong_kind(other, &visitor)),
            }
        }
    )*};
}

impl<'a> de::Deserializer<'a> for ValueDeserializer<'a> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(_) => self.int(visitor),
            Value::Float(x) => visitor.visit_f64(x.get()),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => self.seq(items, visitor),
            Value::Object(members) => self.map(members, visitor),
        }
    }

    deserialize_int! {
        deserialize_i8 visit_i8 to_i64 i8;
        deserialize_i16 visit_i16 to_i64 i16;
        deserialize_i32 visit_i32 to_i64 i32;
        deserialize_i64 visit_i64 to_i64 i64;
        deserialize_i128 visit_i128 to_i128 i128;
        deserialize_u8 visit_u8 to_u64 u8;
        deserialize_u16 visit_u16 to_u64 u16;
        deserialize_u32 visit_u32 to_u64 u32;
        deserialize_u64 visit_u64 to_u64 u64;
        deserialize_u128 visit_u128 to_u128 u128;
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            // Rounding a finite `f64` to `f32` gives an infinity beyond the `f32` range; the
            // visitor's own `as f32` would hand that infinity over as a number.
            Value::Float(x) => match x.get() as f32 {
                y if y.is_finite() => visitor.visit_f32(y),
                _ => Err(de::Error::custom(format_args!("expected f32, found {x}"))),
            },
            Value::Int(n) => match (n.to_u64(), n.to_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                _ => visitor.visit_f32(int_to_f32(n)?),
            },
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Float(x) => visitor.visit_f64(x.get()),
            Value::Int(n) => match (n.to_u64(), n.to_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                _ => visitor.visit_f64(int_to_f64(n)?),
            },
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
            Value::Array(items) => self.seq(items, visitor),
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Array(items) => self.seq(items, visitor),
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'a>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Object(members) => self.map(members, visitor),
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.value {
            Value::Object(members) => self.map(members, visitor),
            Value::Array(items) => self.seq(items, visitor),
            other => Err(wrong_kind(other, &visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.value {
            Value::String(variant) => visitor.visit_enum(Enum {
                variant,
                content: None,
            }),
            Value::Object(members) => match members.as_slice() {
                [(variant, value)] => {
                    self.open()?;
                    visitor.visit_enum(Enum {
                        variant,
                        content: Some(self.inner(value)),
                    })
                }
                _ => Err(de::Error::invalid_value(
                    Unexpected::Map,
                    &"a string or an object with exactly one member",
                )),
            },
            other => Err(de::Error::invalid_type(
                unexpected(other),
                &"a string or an object with exactly one member",
            )),
        }
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

/// The items of an array, one at a time.
struct Seq<'a> {
    outer: ValueDeserializer<'a>,
    items: std::slice::Iter<'a, Value>,
    index: usize,
}

impl<'a> SeqAccess<'a> for Seq<'a> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        let inner = self.outer.inner(item);
        seed.deserialize(inner)
            .map(Some)
            .map_err(|e| e.within(&index))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The members of an object, one at a time.
struct Map<'a> {
    outer: ValueDeserializer<'a>,
    members: std::slice::Iter<'a, (String, Value)>,
    /// The member whose key was read and whose value is next.
    value: Option<&'a (String, Value)>,
}

impl<'a> MapAccess<'a> for Map<'a> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some(member) = self.members.next() else {
            return Ok(None);
        };
        self.value = Some(member);
        seed.deserialize(KeyDeserializer { key: &member.0 })
            .map(Some)
            .map_err(|e| e.within(&member.0))
    }

    fn next_value_seed<T: DeserializeSeed<'a>>(&mut self, seed: T) -> Result<T::Value, DeError> {
        let (key, value) = self.value.take().ok_or_else(|| {
            <DeError as de::Error>::custom("a map value was asked for before its key")
        })?;
        let inner = self.outer.inner(value);
        seed.deserialize(inner).map_err(|e| e.within(key))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}

/// An enum's variant name, and the value of its content unless it is a unit variant.
struct Enum<'a> {
    variant: &'a str,
    content: Option<ValueDeserializer<'a>>,
}

impl<'a> EnumAccess<'a> for Enum<'a> {
    type Error = DeError;
    type Variant = Variant<'a>;

    fn variant_seed<S: DeserializeSeed<'a>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Variant<'a>), DeError> {
        let name = seed.deserialize(KeyDeserializer { key: self.variant })?;
        Ok((
            name,
            Variant {
                name: self.variant,
                content: self.content,
            },
        ))
    }
}

/// An enum variant's content.
struct Variant<'a> {
    name: &'a str,
    content: Option<ValueDeserializer<'a>>,
}

impl<'a> Variant<'a> {
    /// The content of a variant that has one, or the error for a unit variant written where
    /// another kind was expected.
    fn content(&self, exp: &dyn de::Expected) -> Result<ValueDeserializer<'a>, DeError> {
        self.content
            .ok_or_else(|| de::Error::invalid_type(Unexpected::UnitVariant, exp))
    }
}

impl<'a> VariantAccess<'a> for Variant<'a> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        match self.content {
            None => Ok(()),
            Some(content) => {
                de::Deserialize::deserialize(content).map_err(|e: DeError| e.within(&self.name))
            }
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'a>>(self, seed: T) -> Result<T::Value, DeError> {
        let content = self.content(&"newtype variant")?;
        seed.deserialize(content).map_err(|e| e.within(&self.name))
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        let content = self.content(&"tuple variant")?;
        content
            .deserialize_seq(visitor)
            .map_err(|e| e.within(&self.name))
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let content = self.content(&"struct variant")?;
        content
            .deserialize_struct("", fields, visitor)
            .map_err(|e| e.within(&self.name))
    }
}

/// Reads a map key (or an enum's variant name) from its text: as a string, or, for a type
/// whose keys are integers, `bool`s or floats, as the number or `bool` the text spells.
struct KeyDeserializer<'a> {
    key: &'a str,
}

impl KeyDeserializer<'_> {
    /// The key's text parsed as a `T`, when `well_formed` accepts the text; otherwise, or
    /// when it does not parse (an integer out of range), an error naming the type.
    fn parsed<T: std::str::FromStr>(
        &self,
        well_formed: fn(&str) -> bool,
        ty: &str,
    ) -> Result<T, DeError> {
        let parsed = if well_formed(self.key) {
            self.key.parse().ok()
        } else {
            None
        };
        parsed.ok_or_else(|| self.not_a(ty))
    }

    fn not_a(&self, ty: &str) -> DeError {
        de::Error::custom(format_args!("expected {ty} key, found {:?}", self.key))
    }
}

/// Whether `text` is a JSON integer other than `-0`: an optional `-`, then `0` or a nonzero
/// digit followed by digits. `str::parse` also takes `+1`, `01` and `-0`, which would read
/// as the same integer as `1` or `0` and silently replace it in a map.
fn is_json_integer(text: &str) -> bool {
    match text.strip_prefix('-').unwrap_or(text).as_bytes() {
        [b'0'] => text == "0",
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Whether `text` is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
/// `str::parse` also takes `.5`, `5.`, `+1.5`, `inf` and `NaN`.
fn is_json_number(text: &str) -> bool {
    /// The bytes after the leading ASCII digits, when there is at least one.
    fn digits(bytes: &[u8]) -> Option<&[u8]> {
        let count = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        (count > 0).then(|| bytes.split_at(count).1)
    }
    let bytes = text.strip_prefix('-').unwrap_or(text).as_bytes();
    let rest = match bytes {
        [b'0', rest @ ..] => Some(rest),
        [b'1'..=b'9', ..] => digits(bytes),
        _ => None,
    };
    let rest = match rest {
        Some([b'.', fraction @ ..]) => digits(fraction),
        other => other,
    };
    let rest = match rest {
        Some([b'e' | b'E', b'+' | b'-', exponent @ ..] | [b'e' | b'E', exponent @ ..]) => {
            digits(exponent)
        }
        other => other,
    };
    rest.is_some_and(<[u8]>::is_empty)
}

/// Whether `text` is `true` or `false`.
fn is_bool(text: &str) -> bool {
    text == "true" || text == "false"
}

macro_rules! deserialize_key {
    ($($method:ident $visit:ident $well_formed:ident $ty:ty;)*) => {$(
        fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
            visitor.$visit(self.parsed::<$ty>($well_formed, stringify!($ty))?)
        }
    )*};
}

impl<'a> de::Deserializer<'a> for KeyDeserializer<'a> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_borrowed_str(self.key)
    }

    deserialize_key! {
        deserialize_bool visit_bool is_bool bool;
        deserialize_i8 visit_i8 is_json_integer i8;
        deserialize_i16 visit_i16 is_json_integer i16;
        deserialize_i32 visit_i32 is_json_integer i32;
        deserialize_i64 visit_i64 is_json_integer i64;
        deserialize_i128 visit_i128 is_json_integer i128;
        deserialize_u8 visit_u8 is_json_integer u8;
        deserialize_u16 visit_u16 is_json_integer u16;
        deserialize_u32 visit_u32 is_json_integer u32;
        deserialize_u64 visit_u64 is_json_integer u64;
        deserialize_u128 visit_u128 is_json_integer u128;
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.parsed::<f32>(is_json_number, "f32")? {
            x if x.is_finite() => visitor.visit_f32(x),
            _ => Err(self.not_a("f32")),
        }
    }

    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.parsed::<f64>(is_json_number, "f64")? {
            x if x.is_finite() => visitor.visit_f64(x),
            _ => Err(self.not_a("f64")),
        }
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_enum(BorrowedStrDeserializer::<DeError>::new(self.key))
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}
