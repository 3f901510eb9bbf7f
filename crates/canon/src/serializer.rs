//! A serde [`Serializer`](ser::Serializer) that builds a [`Value`] directly, for
//! [`crate::to_value`].
//!
//! It gives the value that writing the type with serde_json and reading the text back with
//! [`crate::parse`] gives, member for member and bit for bit, with one deliberate difference:
//! a NaN or infinite `f32`/`f64` is an error ([`ValueError::NonFiniteAt`], naming the JSON
//! pointer where it sat), where serde_json would silently write `null` (SPEC §3: no silent
//! fixes). In detail, as serde_json's writer does:
//!
//! - Integers of every width (`i128`/`u128` too) keep all their digits.
//! - An `f64` is kept as it is ([`Float`]; canonical bytes print it as Python's `repr`).
//!   An `f32` becomes the `f64` nearest to its shortest decimal text, the text serde_json
//!   writes for it: `0.1f32` is the `f64` `0.1`, not `0.100000001490116…` (the exact value
//!   of the `f32`). So an `f32` property input reads back as the same `f32`.
//! - `char`s and strings are strings (kept as written: canonical bytes apply NFC); bytes are
//!   an array of integers; unit, `None` and unit structs are `null`; `Some(x)` and newtype
//!   structs are `x`; sequences, tuples and tuple structs are arrays; maps and structs are
//!   objects in serialisation order.
//! - Enums are externally tagged: a unit variant is its name as a string, the others are an
//!   object with one member named after the variant (`{"V": x}`, `{"V": [x, y]}`,
//!   `{"V": {"f": x}}`).
//! - Map keys must be strings, except that integers, `bool`s, `char`s and finite floats are
//!   turned into strings as serde_json does (`1` → `"1"`, `true` → `"true"`, `0.5f32` →
//!   `"0.5"`, `1e16` → `"1e+16"`, `1e-7` → `"1e-7"`: serde_json's float text, which is not
//!   always Python's `repr`); unit variants give their name, newtypes and `Some` their
//!   content. Any other key is an error.
//! - Like [`crate::parse`], it refuses an object with two keys equal after NFC
//!   ([`ValueError::DuplicateKey`]) and arrays/objects nested deeper than
//!   [`MAX_DEPTH`] ([`ValueError::TooDeep`]), so the value always has a
//!   canonical form.
//! - When serde_json is built with its `arbitrary_precision` or `raw_value` feature (a user's
//!   crate may turn them on), its private number and raw-value tokens are read as serde_json
//!   writes them: as number or JSON text.

use std::borrow::Cow;
use std::fmt;

use serde::ser::{self, Impossible, Serialize};

use crate::error::ValueError;
use crate::read::{MAX_DEPTH, nfc_cow};
use crate::value::{Float, Int, Value};

/// Turns a serializable value into a [`Value`] without going through JSON text.
pub(crate) fn to_value<T: Serialize + ?Sized>(input: &T) -> Result<Value, ValueError> {
    input
        .serialize(ValueSerializer { depth: 0 })
        .map_err(|e| e.0)
}

/// The serialiser's error: a [`ValueError`], with serde's `custom` as [`ValueError::Serde`].
#[derive(Debug)]
struct SerError(ValueError);

impl fmt::Display for SerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SerError {}

impl ser::Error for SerError {
    fn custom<T: fmt::Display>(msg: T) -> SerError {
        // serde_json's message for a custom error is the message itself.
        SerError(ValueError::Serde(msg.to_string()))
    }
}

impl From<ValueError> for SerError {
    fn from(e: ValueError) -> SerError {
        SerError(e)
    }
}

/// serde_json's message for a map key that cannot be a string.
fn key_must_be_a_string() -> SerError {
    SerError(ValueError::Serde("key must be a string".to_owned()))
}

fn non_finite(x: f64) -> SerError {
    let float = if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    };
    SerError(ValueError::NonFiniteAt {
        float,
        pointer: String::new(),
    })
}

/// [`ValueError::within`] for the serializer's error.
fn within(err: SerError, token: &dyn fmt::Display) -> SerError {
    SerError(err.0.within(&token.to_string()))
}

/// The number of arrays and objects around a value; opening `levels` more must stay within
/// [`MAX_DEPTH`], as [`crate::parse`] requires.
fn open(depth: usize, levels: usize) -> Result<usize, SerError> {
    let depth = depth + levels;
    if depth > MAX_DEPTH {
        Err(SerError(ValueError::TooDeep(MAX_DEPTH)))
    } else {
        Ok(depth)
    }
}

/// An `f32` as the `f64` that serde_json's text for it reads back as (see the module docs).
fn f32_value(x: f32) -> Result<Value, SerError> {
    if !x.is_finite() {
        return Err(non_finite(f64::from(x)));
    }
    let mut buffer = zmij::Buffer::new();
    // The very text serde_json writes, read by the very parser `to_value` used to read it
    // with (it holds one finite number, so this cannot fail in practice).
    crate::read::parse(buffer.format_finite(x).as_bytes())
        .map_err(|e| SerError(ValueError::Serde(e.to_string())))
}

/// Fails when two keys of an object are equal after NFC, as [`crate::parse`] does.
fn check_keys(members: &[(String, Value)]) -> Result<(), SerError> {
    if members.len() < 2 {
        return Ok(());
    }
    let mut scratch = String::new();
    let mut keys: Vec<Cow<'_, str>> = members
        .iter()
        .map(|(k, _)| nfc_cow(k, &mut scratch))
        .collect();
    if keys.windows(2).all(|w| w[0] < w[1]) {
        return Ok(());
    }
    keys.sort_unstable();
    match keys.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(SerError(ValueError::DuplicateKey {
            key: w[0].clone().into_owned(),
            pointer: String::new(),
        })),
        None => Ok(()),
    }
}

/// The arrays and objects nested in `value`, itself included.
fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        Value::Object(members) => 1 + members.iter().map(|(_, v)| nesting(v)).max().unwrap_or(0),
        _ => 0,
    }
}

/// serde_json's private struct names for a number (feature `arbitrary_precision`) and for
/// raw JSON text (feature `raw_value`). The struct has one field of the same name holding
/// the text, which serde_json's writer, with the feature, writes as it is. serde_json
/// serialises these names only when the feature is on, and no other type has them (a derived
/// type would need a `rename` to them), so they are read as text whatever the features of
/// the serde_json in the build: this crate does not depend on serde_json.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Serialises one value found inside `depth` arrays and objects.
#[derive(Clone, Copy)]
struct ValueSerializer {
    depth: usize,
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = SerError;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = SeqBuilder;
    type SerializeMap = MapBuilder;
    type SerializeStruct = StructBuilder;
    type SerializeStructVariant = MapBuilder;

    fn serialize_bool(self, v: bool) -> Result<Value, SerError> {
        Ok(Value::Bool(v))
    }

    fn serialize_i8(self, v: i8) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_i16(self, v: i16) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_i32(self, v: i32) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_i64(self, v: i64) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_i128(self, v: i128) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_u8(self, v: u8) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_u16(self, v: u16) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_u32(self, v: u32) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_u64(self, v: u64) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_u128(self, v: u128) -> Result<Value, SerError> {
        Ok(Value::Int(Int::from(v)))
    }

    fn serialize_f32(self, v: f32) -> Result<Value, SerError> {
        f32_value(v)
    }

    fn serialize_f64(self, v: f64) -> Result<Value, SerError> {
        // serde_json writes the shortest text that reads back as `v`, so reading it back
        // gives `v` itself.
        Float::new(v).map(Value::Float).map_err(|_| non_finite(v))
    }

    fn serialize_char(self, v: char) -> Result<Value, SerError> {
        Ok(Value::String(v.to_string()))
    }

    fn serialize_str(self, v: &str) -> Result<Value, SerError> {
        Ok(Value::String(v.to_owned()))
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<Value, SerError> {
        open(self.depth, 1)?;
        Ok(Value::Array(
            v.iter().map(|&b| Value::Int(Int::from(b))).collect(),
        ))
    }

    fn serialize_none(self) -> Result<Value, SerError> {
        Ok(Value::Null)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, SerError> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<Value, SerError> {
        Ok(Value::Null)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, SerError> {
        Ok(Value::Null)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, SerError> {
        Ok(Value::String(variant.to_owned()))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, SerError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, SerError> {
        let depth = open(self.depth, 1)?;
        let inner = value
            .serialize(ValueSerializer { depth })
            .map_err(|e| within(e, &variant))?;
        Ok(Value::Object(vec![(variant.to_owned(), inner)]))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, SerError> {
        Ok(SeqBuilder {
            depth: open(self.depth, 1)?,
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            variant: None,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, SerError> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, SerError> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SeqBuilder, SerError> {
        // `{"variant": [...]}`: an object, and an array inside it.
        Ok(SeqBuilder {
            depth: open(self.depth, 2)?,
            items: Vec::with_capacity(len.min(4096)),
            variant: Some(variant),
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<MapBuilder, SerError> {
        Ok(MapBuilder {
            depth: open(self.depth, 1)?,
            members: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            key: None,
            variant: None,
        })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<StructBuilder, SerError> {
        if name == NUMBER_TOKEN || name == RAW_TOKEN {
            return Ok(StructBuilder::Text {
                token: name,
                depth: self.depth,
                text: None,
            });
        }
        self.serialize_map(Some(len)).map(StructBuilder::Map)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<MapBuilder, SerError> {
        // `{"variant": {...}}`: an object inside an object.
        Ok(MapBuilder {
            depth: open(self.depth, 2)?,
            members: Vec::with_capacity(len.min(4096)),
            key: None,
            variant: Some(variant),
        })
    }
}

/// The items of an array being built, and for a tuple variant the variant's name.
struct SeqBuilder {
    /// The depth of the items.
    depth: usize,
    items: Vec<Value>,
    variant: Option<&'static str>,
}

impl SeqBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let index = self.items.len();
        let item = value
            .serialize(ValueSerializer { depth: self.depth })
            .map_err(|e| match self.variant {
                Some(variant) => within(within(e, &index), &variant),
                None => within(e, &index),
            })?;
        self.items.push(item);
        Ok(())
    }

    fn finish(self) -> Value {
        let array = Value::Array(self.items);
        match self.variant {
            Some(variant) => Value::Object(vec![(variant.to_owned(), array)]),
            None => array,
        }
    }
}

impl ser::SerializeSeq for SeqBuilder {
    type Ok = Value;
    type Error = SerError;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }

    fn end(self) -> Result<Value, SerError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = Value;
    type Error = SerError;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }

    fn end(self) -> Result<Value, SerError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = Value;
    type Error = SerError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }

    fn end(self) -> Result<Value, SerError> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleVariant for SeqBuilder {
    type Ok = Value;
    type Error = SerError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }

    fn end(self) -> Result<Value, SerError> {
        Ok(self.finish())
    }
}

/// The members of an object being built, the key waiting for its value, and for a struct
/// variant the variant's name.
struct MapBuilder {
    /// The depth of the members' values.
    depth: usize,
    members: Vec<(String, Value)>,
    key: Option<String>,
    variant: Option<&'static str>,
}

impl MapBuilder {
    fn member<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), SerError> {
        match value.serialize(ValueSerializer { depth: self.depth }) {
            Ok(v) => {
                self.members.push((key, v));
                Ok(())
            }
            Err(e) => {
                let e = within(e, &key);
                Err(match self.variant {
                    Some(variant) => within(e, &variant),
                    None => e,
                })
            }
        }
    }

    fn finish(self) -> Result<Value, SerError> {
        if self.key.is_some() {
            // serde_json would have written a key without a value: invalid JSON.
            return Err(SerError::custom_message("a map key has no value"));
        }
        let variant = self.variant;
        check_keys(&self.members).map_err(|e| match variant {
            Some(variant) => within(e, &variant),
            None => e,
        })?;
        let object = Value::Object(self.members);
        Ok(match variant {
            Some(variant) => Value::Object(vec![(variant.to_owned(), object)]),
            None => object,
        })
    }
}

impl SerError {
    fn custom_message(msg: &str) -> SerError {
        SerError(ValueError::Serde(msg.to_owned()))
    }
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Value;
    type Error = SerError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerError> {
        if self.key.is_some() {
            return Err(SerError::custom_message("a map key has no value"));
        }
        self.key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| SerError::custom_message("a map value has no key"))?;
        self.member(key, value)
    }

    fn end(self) -> Result<Value, SerError> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for MapBuilder {
    type Ok = Value;
    type Error = SerError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        self.member(key.to_owned(), value)
    }

    fn end(self) -> Result<Value, SerError> {
        self.finish()
    }
}

/// A struct being built: an object, or one of serde_json's private number and raw-value
/// structs (when serde_json's writer treats them as text), whose one field is JSON text.
enum StructBuilder {
    Map(MapBuilder),
    Text {
        token: &'static str,
        /// The depth of the struct itself.
        depth: usize,
        text: Option<String>,
    },
}

impl ser::SerializeStruct for StructBuilder {
    type Ok = Value;
    type Error = SerError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        match self {
            StructBuilder::Map(map) => map.member(key.to_owned(), value),
            StructBuilder::Text { token, text, .. } => {
                if key != *token || text.is_some() {
                    return Err(SerError::custom_message(
                        "invalid serde_json private struct",
                    ));
                }
                match value.serialize(ValueSerializer { depth: 0 })? {
                    Value::String(s) => {
                        *text = Some(s);
                        Ok(())
                    }
                    _ => Err(SerError::custom_message(
                        "invalid serde_json private struct",
                    )),
                }
            }
        }
    }

    fn end(self) -> Result<Value, SerError> {
        match self {
            StructBuilder::Map(map) => map.finish(),
            StructBuilder::Text { depth, text, .. } => {
                let text = text
                    .ok_or_else(|| SerError::custom_message("invalid serde_json private struct"))?;
                let value = crate::read::parse(text.as_bytes())
                    .map_err(|e| SerError(ValueError::Serde(e.to_string())))?;
                open(depth, nesting(&value))?;
                Ok(value)
            }
        }
    }
}

/// Serialises a map key to the string serde_json writes for it.
struct KeySerializer;

impl KeySerializer {
    fn int(n: impl Into<Int>) -> Result<String, SerError> {
        Ok(n.into().as_str().to_owned())
    }
}

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = SerError;
    type SerializeSeq = Impossible<String, SerError>;
    type SerializeTuple = Impossible<String, SerError>;
    type SerializeTupleStruct = Impossible<String, SerError>;
    type SerializeTupleVariant = Impossible<String, SerError>;
    type SerializeMap = Impossible<String, SerError>;
    type SerializeStruct = Impossible<String, SerError>;
    type SerializeStructVariant = Impossible<String, SerError>;

    fn serialize_bool(self, v: bool) -> Result<String, SerError> {
        Ok(if v { "true" } else { "false" }.to_owned())
    }

    fn serialize_i8(self, v: i8) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_i16(self, v: i16) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_i32(self, v: i32) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_i64(self, v: i64) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_i128(self, v: i128) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_u8(self, v: u8) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_u16(self, v: u16) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_u32(self, v: u32) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_u64(self, v: u64) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_u128(self, v: u128) -> Result<String, SerError> {
        KeySerializer::int(v)
    }

    fn serialize_f32(self, v: f32) -> Result<String, SerError> {
        if !v.is_finite() {
            return Err(non_finite(f64::from(v)));
        }
        Ok(zmij::Buffer::new().format_finite(v).to_owned())
    }

    fn serialize_f64(self, v: f64) -> Result<String, SerError> {
        if !v.is_finite() {
            return Err(non_finite(v));
        }
        Ok(zmij::Buffer::new().format_finite(v).to_owned())
    }

    fn serialize_char(self, v: char) -> Result<String, SerError> {
        Ok(v.to_string())
    }

    fn serialize_str(self, v: &str) -> Result<String, SerError> {
        Ok(v.to_owned())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<String, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<String, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String, SerError> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<String, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, SerError> {
        Ok(variant.to_owned())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, SerError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, SerError> {
        Err(key_must_be_a_string())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, SerError> {
        Err(key_must_be_a_string())
    }
}
